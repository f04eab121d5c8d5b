-- dbrig results database, schema version 5: where a run's code came from.
--
-- `tags`: the run's `--tag key=value` pairs as a JSON object (NULL: none); `code_commit`: its
-- `--commit REV`, the revision of the code under test. History groups and orders runs by them.

ALTER TABLE run ADD COLUMN tags TEXT CHECK (tags IS NULL OR json_valid(tags));
ALTER TABLE run ADD COLUMN code_commit TEXT;
