-- Micro-benchmarks for MariaDB / MySQL. Tables are latin1 like the seeds' (CHAR(128) is then
-- 129 bytes a row in MEMORY, as in seed 004's SHOW TABLE STATUS).

-- name: engine_available
SELECT 1 FROM information_schema.engines WHERE UPPER(engine) = UPPER(?) AND support IN ('YES', 'DEFAULT')

-- name: heap_limits
SELECT @@session.max_heap_table_size, @@session.tmp_table_size

-- name: set_heap_limits
SET SESSION max_heap_table_size = {bytes}, tmp_table_size = {bytes}

-- name: groupby_session
SET SESSION sql_mode = REPLACE(@@session.sql_mode, 'ONLY_FULL_GROUP_BY', '')

-- name: avg_row_length
-- The engine's average row length (a MEMORY table's record length; InnoDB's data length over
-- its row estimate), not the space allocated: a MEMORY table holds 16 MiB however few rows.
SELECT avg_row_length FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?

-- name: analyze
ANALYZE TABLE {table}

-- name: create_load_int
CREATE TABLE {table} (c1 INT, INDEX {using} (c1)) ENGINE = {engine} DEFAULT CHARSET = latin1

-- name: create_load_char
CREATE TABLE {table} (c1 CHAR(20), INDEX {using} (c1)) ENGINE = {engine} DEFAULT CHARSET = latin1

-- name: scan_avg_expr
SELECT avg(i+sqrt(i+1)+abs(i)) FROM m

-- name: create_narrow
CREATE TABLE {table} (i INT NOT NULL) ENGINE = {engine} DEFAULT CHARSET = latin1

-- name: create_wide
CREATE TABLE {table} (c CHAR(128) NOT NULL) ENGINE = {engine} DEFAULT CHARSET = latin1

-- name: create_groupby
CREATE TABLE {table} (id INT DEFAULT NULL, tea TEXT) ENGINE = {engine} DEFAULT CHARSET = latin1

-- name: create_scan_loop
-- Seed 004's in-cache loop inside the server (its test_read procedure, which ran pl + 1
-- queries; this one runs pl). Sent as one statement: no DELIMITER needed through the API.
CREATE PROCEDURE dbrig_scan_loop(pl INT) BEGIN DECLARE t INT; DECLARE x INT DEFAULT 0; REPEAT SET x = x + 1; SELECT COUNT(*) FROM m1 WHERE i>0 INTO t; UNTIL x >= pl END REPEAT; END

-- name: call_scan_loop
CALL dbrig_scan_loop(?)

-- name: drop_scan_loop
DROP PROCEDURE IF EXISTS dbrig_scan_loop

-- name: statements_counted
-- The session's SELECTs, the stored procedure's included: what the server ran, however sent.
SHOW SESSION STATUS LIKE 'Com_select'

-- name: load_server_file
-- memory_load --server-file: the server reads the file itself (the seed's load; latin1 as the
-- seed's tables, whose data is ASCII).
LOAD DATA INFILE ? INTO TABLE {table} CHARACTER SET latin1 FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n' (c1)
