-- TPC-H schema pieces for SQLite (sections override common.sql). SQLite has no DECIMAL or
-- DATE: money is REAL (so divisions never truncate), dates are ISO-8601 text.

-- name: type_decimal
REAL

-- name: type_date
TEXT

-- name: type_suffix


-- name: primary_key
-- SQLite cannot add a primary key to an existing table: a unique index plays its part.
CREATE UNIQUE INDEX pk_{table} ON {table} ({columns})

-- name: table_size
-- The whole database file (SQLite keeps no per-table size without the dbstat extension).
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()

-- name: explain
-- Rows (id, parent, notused, detail): the plan tree; {query} is a query statement.
EXPLAIN QUERY PLAN {query}
