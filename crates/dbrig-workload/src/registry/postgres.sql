-- PostgreSQL: a table's creation marker is its OID, which a table made again never gets back.

-- name: registry_columns
SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'dbrig_objects'

-- name: table_marker
SELECT CAST(CAST(c.oid AS BIGINT) AS TEXT) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ? AND c.relkind IN ('r', 'p')
