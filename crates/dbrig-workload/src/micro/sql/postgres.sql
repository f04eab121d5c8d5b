-- Micro-benchmarks for PostgreSQL: plain heap tables, B-tree indexes (hash with --index hash).

-- name: avg_row_length
-- Each row's size as stored (tuple header and data), averaged.
SELECT CAST(avg(pg_column_size(t.*)) AS BIGINT) FROM {table} AS t

-- name: analyze
VACUUM ANALYZE {table}

-- name: create_load_int
CREATE TABLE {table} (c1 INT)

-- name: create_load_char
CREATE TABLE {table} (c1 CHAR(20))

-- name: create_load_index
CREATE INDEX {table}_c1 ON {table} {using} (c1)

-- name: scan_avg_expr
SELECT avg(i+sqrt(i+1)+abs(i)) FROM m

-- name: create_narrow
CREATE TABLE {table} (i INT NOT NULL)

-- name: create_wide
CREATE TABLE {table} (c CHAR(128) NOT NULL)

-- name: create_groupby
CREATE TABLE {table} (id INT, tea TEXT)

-- tmp_groupby: PostgreSQL refuses non-grouped columns outside an aggregate, so id and tea
-- become min(id) and min(tea) (an extra comparison per row the seed's queries do not do),
-- left(id,n) becomes substr of the id's text, and ORDER BY null (refused: "non-integer
-- constant in ORDER BY") is dropped: PostgreSQL does not sort a GROUP BY result unless asked.

-- name: q1
SELECT min(id), min(tea) FROM t1 GROUP BY substr(CAST(id AS TEXT),1,1)

-- name: q2
SELECT min(id), count(*), min(tea) FROM t1 GROUP BY substr(CAST(id AS TEXT),1,1)

-- name: q3
SELECT min(id), min(tea) FROM t1 GROUP BY substr(CAST(id AS TEXT),1,2)

-- name: q4
SELECT min(id), count(*), min(tea) FROM t1 GROUP BY substr(CAST(id AS TEXT),1,2)

-- name: q5
SELECT min(id), min(tea) FROM t1 GROUP BY id % 100

-- name: q6
SELECT min(id), count(*), min(tea) FROM t1 GROUP BY id % 100

-- name: create_scan_loop
-- Seed 004's in-cache loop inside the server, as a PL/pgSQL function.
CREATE FUNCTION dbrig_scan_loop(pl INT) RETURNS void LANGUAGE plpgsql AS $$ DECLARE t BIGINT; BEGIN FOR x IN 1..pl LOOP SELECT count(*) INTO t FROM m1 WHERE i>0; END LOOP; END $$

-- name: call_scan_loop
SELECT dbrig_scan_loop(?)

-- name: drop_scan_loop
DROP FUNCTION IF EXISTS dbrig_scan_loop(INT)

-- name: load_server_file
-- memory_load --server-file: the server reads the file itself (COPY's text format is the
-- bulk text format: tab-separated, backslash escapes).
COPY {table} (c1) FROM ?
