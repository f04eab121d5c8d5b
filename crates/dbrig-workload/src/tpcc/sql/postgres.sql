-- TPC-C schema pieces for PostgreSQL (sections override common.sql). Primary keys are added
-- after the load (common.sql's primary_key), as HammerDB's indexes are.

-- name: type_timestamp
TIMESTAMP

-- name: type_suffix


-- name: table_size
SELECT pg_total_relation_size(c.oid) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ?
