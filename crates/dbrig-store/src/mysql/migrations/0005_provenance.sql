-- dbrig results database on MariaDB/MySQL, schema version 5: where a run's code came from
-- (sqlite/migrations/0005_provenance.sql). One statement: a step's statements are separated by
-- lines holding only `;`.

ALTER TABLE run
    ADD COLUMN tags LONGTEXT CHECK (tags IS NULL OR JSON_VALID(tags)),
    ADD COLUMN code_commit VARCHAR(255)
