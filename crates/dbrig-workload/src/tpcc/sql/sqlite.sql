-- TPC-C schema pieces for SQLite (sections override common.sql). SQLite has no date-and-time
-- type: timestamps are ISO-8601 text ("YYYY-MM-DD HH:MM:SS"). DECIMAL columns take NUMERIC
-- affinity (money is stored as REAL or INTEGER; the checks round sums to the cent).

-- name: type_timestamp
TEXT

-- name: type_suffix


-- name: primary_key
-- SQLite cannot add a primary key to an existing table: a unique index plays its part.
CREATE UNIQUE INDEX pk_{table} ON {table} ({columns})

-- name: table_size
-- The whole database file (SQLite keeps no per-table size without the dbstat extension).
SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()
