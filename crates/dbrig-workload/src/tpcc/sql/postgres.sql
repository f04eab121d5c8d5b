-- TPC-C schema pieces for PostgreSQL (sections override common.sql). Primary keys are added
-- after the load (common.sql's primary_key), as HammerDB's indexes are.

-- name: type_timestamp
TIMESTAMP

-- name: type_suffix


-- name: table_size
SELECT pg_total_relation_size(c.oid) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ?

-- name: server_transactions
-- TPM's counters, as HammerDB reads them: the database's commits and rollbacks.
SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()
