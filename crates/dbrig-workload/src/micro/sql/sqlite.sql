-- Micro-benchmarks for SQLite: plain tables, B-tree indexes. The bundled SQLite has no math
-- functions (built without SQLITE_ENABLE_MATH_FUNCTIONS), so scan_filter's
-- avg(i+sqrt(i+1)+abs(i)) has no section here and is reported as skipped.

-- name: avg_row_length
-- The table's record bytes (payload) per row.
SELECT CAST(sum(payload) AS REAL) / max(1, (SELECT count(*) FROM {table})) FROM dbstat WHERE name = ?

-- name: avg_row_length_fallback
-- Without the dbstat table: the database file's pages per row of this table.
SELECT CAST(page_count * page_size AS REAL) / max(1, (SELECT count(*) FROM {table})) FROM pragma_page_count(), pragma_page_size()

-- name: analyze
ANALYZE {table}

-- name: create_load_int
CREATE TABLE {table} (c1 INT)

-- name: create_load_char
CREATE TABLE {table} (c1 CHAR(20))

-- name: create_load_index
CREATE INDEX {table}_c1 ON {table} (c1)

-- name: create_narrow
CREATE TABLE {table} (i INT NOT NULL)

-- name: create_wide
CREATE TABLE {table} (c CHAR(128) NOT NULL)

-- name: create_groupby
CREATE TABLE {table} (id INT, tea TEXT)

-- tmp_groupby: SQLite takes bare columns with GROUP BY (from an arbitrary row of the group)
-- and ORDER BY NULL, like MariaDB; only left(id,n) becomes substr of the id's text.

-- name: q1
SELECT id, tea FROM t1 GROUP BY substr(CAST(id AS TEXT),1,1) ORDER BY null

-- name: q2
SELECT id, count(*), tea FROM t1 GROUP BY substr(CAST(id AS TEXT),1,1) ORDER BY null

-- name: q3
SELECT id, tea FROM t1 GROUP BY substr(CAST(id AS TEXT),1,2) ORDER BY null

-- name: q4
SELECT id, count(*), tea FROM t1 GROUP BY substr(CAST(id AS TEXT),1,2) ORDER BY null

-- name: q5
SELECT id, tea FROM t1 GROUP BY id % 100 ORDER BY null

-- name: q6
SELECT id, count(*), tea FROM t1 GROUP BY id % 100 ORDER BY null
