-- TPC-H schema pieces for PostgreSQL (sections override common.sql).

-- name: type_decimal
DECIMAL(15,2)

-- name: type_date
DATE

-- name: type_suffix


-- name: table_size
SELECT pg_total_relation_size(c.oid) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname = ?

-- name: explain
-- The structured plan (one row, one JSON column); {query} is a query statement.
EXPLAIN (FORMAT JSON) {query}
