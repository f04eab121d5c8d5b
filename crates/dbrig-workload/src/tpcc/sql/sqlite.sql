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

-- name: begin_write
-- The write lock at BEGIN: a deferred transaction that read first fails its upgrade at once
-- (SQLITE_BUSY) when another connection wrote meanwhile. dbrig's own FIFO orders the writers.
BEGIN IMMEDIATE

-- name: no_get_dist
-- SQLite locks the whole database for a writer: no FOR UPDATE (nor any need of it).
SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?

-- name: no_get_stock
SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06,
  s_dist_07, s_dist_08, s_dist_09, s_dist_10
FROM stock WHERE s_i_id = ? AND s_w_id = ?

-- name: pay_get_cust
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
  c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: dl_get_new_order
SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1
