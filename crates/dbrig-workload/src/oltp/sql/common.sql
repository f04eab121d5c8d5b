-- OLTP statements shared by every dialect (the sysbench 1.0.20 statements, verbatim in shape).
-- ? are bind parameters (numbered $n for PostgreSQL when loaded).

-- name: point_select
SELECT c FROM {table} WHERE id=?

-- name: simple_range
SELECT c FROM {table} WHERE id BETWEEN ? AND ?

-- name: sum_range
SELECT SUM(k) FROM {table} WHERE id BETWEEN ? AND ?

-- name: order_range
SELECT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c

-- name: distinct_range
SELECT DISTINCT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c

-- name: index_update
UPDATE {table} SET k=k+1 WHERE id=?

-- name: non_index_update
UPDATE {table} SET c=? WHERE id=?

-- name: delete
DELETE FROM {table} WHERE id=?

-- name: insert
INSERT INTO {table} (id, k, c, pad) VALUES (?, ?, ?, ?)

-- name: insert_auto
INSERT INTO {table} (k, c, pad) VALUES (?, ?, ?)
-- name: insert_text_auto
-- oltp_insert as sysbench sends it by default (text, values written in; the server parses it
-- every time). PostgreSQL's (and SQLite's) key gets the server's id only when left out.
INSERT INTO {table} (k, c, pad) VALUES (?, ?, ?)

-- name: random_points
SELECT id, k, c, pad FROM {table} WHERE k IN ({points})

-- name: random_ranges
SELECT count(k) FROM {table} WHERE {ranges}

-- name: random_range_term
k BETWEEN ? AND ?

-- name: select_batch
SELECT c FROM {table} WHERE id BETWEEN ? AND ?

-- name: bulk_insert
-- sysbench's bulk_insert.lua: its rows follow as text, `(id,id)` each, one per event
-- (sysbench_bulk.rs).
INSERT INTO {table} VALUES

-- name: begin
BEGIN

-- name: begin_write
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: count_rows
SELECT COUNT(*) FROM {table}

-- name: max_id
SELECT COALESCE(MAX(id), 0) FROM {table}
