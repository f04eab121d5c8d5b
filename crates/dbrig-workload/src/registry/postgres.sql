-- PostgreSQL: a table's creation marker is its OID, which a table made again never gets back,
-- with its database's OID (CREATE DATABASE … TEMPLATE copies tables with their OIDs, into a
-- database of another OID) and the cluster's system identifier (a dump restored into another
-- cluster may give its tables the same OIDs).

-- name: registry_columns
SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'dbrig_objects'

-- name: table_marker
SELECT CAST(CAST(c.oid AS BIGINT) AS TEXT), (SELECT CAST(CAST(d.oid AS BIGINT) AS TEXT) FROM pg_catalog.pg_database d WHERE d.datname = current_database()) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ? AND c.relkind IN ('r', 'p')

-- name: cluster_identity
-- Empty where the function is withheld (a managed service): never an error, which would abort
-- the transaction a table is created in.
SELECT CASE WHEN has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE') THEN (SELECT CAST(system_identifier AS TEXT) FROM pg_catalog.pg_control_system()) ELSE '' END
