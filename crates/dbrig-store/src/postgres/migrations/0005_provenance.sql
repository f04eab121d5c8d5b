-- dbrig results database on PostgreSQL, schema version 5: where a run's code came from
-- (sqlite/migrations/0005_provenance.sql).

ALTER TABLE run ADD COLUMN tags json;
ALTER TABLE run ADD COLUMN code_commit text;
