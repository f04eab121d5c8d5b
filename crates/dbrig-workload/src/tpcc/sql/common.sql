-- TPC-C (TPROC-C) schema, shared by every dialect. Sections start with "-- name: NAME".
-- Table names are HammerDB's; column names are the specification's (clause 1.3) in lower case.
-- {timestamp} is the dialect's date-and-time type (type_timestamp); {key} is empty, or the
-- table's primary key declared with it (MariaDB/MySQL: InnoDB clusters rows by it, and rows
-- arrive in key order; a key added afterwards would rebuild the table and give it a new id).
-- Integers are INTEGER throughout (PostgreSQL's binary COPY writes them as int4); money and
-- rates are DECIMAL of the specification's sizes. {table}, {columns} are identifiers dbrig
-- builds; values are bind parameters written as ?.

-- name: create_warehouse
CREATE TABLE warehouse (
  w_id INTEGER NOT NULL,
  w_name VARCHAR(10) NOT NULL,
  w_street_1 VARCHAR(20) NOT NULL,
  w_street_2 VARCHAR(20) NOT NULL,
  w_city VARCHAR(20) NOT NULL,
  w_state CHAR(2) NOT NULL,
  w_zip CHAR(9) NOT NULL,
  w_tax DECIMAL(4,4) NOT NULL,
  w_ytd DECIMAL(12,2) NOT NULL{key}
){suffix}

-- name: create_district
CREATE TABLE district (
  d_id INTEGER NOT NULL,
  d_w_id INTEGER NOT NULL,
  d_name VARCHAR(10) NOT NULL,
  d_street_1 VARCHAR(20) NOT NULL,
  d_street_2 VARCHAR(20) NOT NULL,
  d_city VARCHAR(20) NOT NULL,
  d_state CHAR(2) NOT NULL,
  d_zip CHAR(9) NOT NULL,
  d_tax DECIMAL(4,4) NOT NULL,
  d_ytd DECIMAL(12,2) NOT NULL,
  d_next_o_id INTEGER NOT NULL{key}
){suffix}

-- name: create_customer
CREATE TABLE customer (
  c_id INTEGER NOT NULL,
  c_d_id INTEGER NOT NULL,
  c_w_id INTEGER NOT NULL,
  c_first VARCHAR(16) NOT NULL,
  c_middle CHAR(2) NOT NULL,
  c_last VARCHAR(16) NOT NULL,
  c_street_1 VARCHAR(20) NOT NULL,
  c_street_2 VARCHAR(20) NOT NULL,
  c_city VARCHAR(20) NOT NULL,
  c_state CHAR(2) NOT NULL,
  c_zip CHAR(9) NOT NULL,
  c_phone CHAR(16) NOT NULL,
  c_since {timestamp} NOT NULL,
  c_credit CHAR(2) NOT NULL,
  c_credit_lim DECIMAL(12,2) NOT NULL,
  c_discount DECIMAL(4,4) NOT NULL,
  c_balance DECIMAL(12,2) NOT NULL,
  c_ytd_payment DECIMAL(12,2) NOT NULL,
  c_payment_cnt INTEGER NOT NULL,
  c_delivery_cnt INTEGER NOT NULL,
  c_data VARCHAR(500) NOT NULL{key}
){suffix}

-- name: create_history
-- No primary key, as the specification's and HammerDB's (by default).
CREATE TABLE history (
  h_c_id INTEGER NOT NULL,
  h_c_d_id INTEGER NOT NULL,
  h_c_w_id INTEGER NOT NULL,
  h_d_id INTEGER NOT NULL,
  h_w_id INTEGER NOT NULL,
  h_date {timestamp} NOT NULL,
  h_amount DECIMAL(6,2) NOT NULL,
  h_data VARCHAR(24) NOT NULL
){suffix}

-- name: create_new_order
CREATE TABLE new_order (
  no_o_id INTEGER NOT NULL,
  no_d_id INTEGER NOT NULL,
  no_w_id INTEGER NOT NULL{key}
){suffix}

-- name: create_orders
CREATE TABLE orders (
  o_id INTEGER NOT NULL,
  o_d_id INTEGER NOT NULL,
  o_w_id INTEGER NOT NULL,
  o_c_id INTEGER NOT NULL,
  o_entry_d {timestamp} NOT NULL,
  o_carrier_id INTEGER,
  o_ol_cnt INTEGER NOT NULL,
  o_all_local INTEGER NOT NULL{key}
){suffix}

-- name: create_order_line
CREATE TABLE order_line (
  ol_o_id INTEGER NOT NULL,
  ol_d_id INTEGER NOT NULL,
  ol_w_id INTEGER NOT NULL,
  ol_number INTEGER NOT NULL,
  ol_i_id INTEGER NOT NULL,
  ol_supply_w_id INTEGER NOT NULL,
  ol_delivery_d {timestamp},
  ol_quantity INTEGER NOT NULL,
  ol_amount DECIMAL(6,2) NOT NULL,
  ol_dist_info CHAR(24) NOT NULL{key}
){suffix}

-- name: create_item
CREATE TABLE item (
  i_id INTEGER NOT NULL,
  i_im_id INTEGER NOT NULL,
  i_name VARCHAR(24) NOT NULL,
  i_price DECIMAL(5,2) NOT NULL,
  i_data VARCHAR(50) NOT NULL{key}
){suffix}

-- name: create_stock
CREATE TABLE stock (
  s_i_id INTEGER NOT NULL,
  s_w_id INTEGER NOT NULL,
  s_quantity INTEGER NOT NULL,
  s_dist_01 CHAR(24) NOT NULL,
  s_dist_02 CHAR(24) NOT NULL,
  s_dist_03 CHAR(24) NOT NULL,
  s_dist_04 CHAR(24) NOT NULL,
  s_dist_05 CHAR(24) NOT NULL,
  s_dist_06 CHAR(24) NOT NULL,
  s_dist_07 CHAR(24) NOT NULL,
  s_dist_08 CHAR(24) NOT NULL,
  s_dist_09 CHAR(24) NOT NULL,
  s_dist_10 CHAR(24) NOT NULL,
  s_ytd INTEGER NOT NULL,
  s_order_cnt INTEGER NOT NULL,
  s_remote_cnt INTEGER NOT NULL,
  s_data VARCHAR(50) NOT NULL{key}
){suffix}

-- name: primary_key
ALTER TABLE {table} ADD PRIMARY KEY ({columns})

-- name: indexes
-- HammerDB's two secondary indexes: customers by last name (Payment and Order-Status by
-- name), orders by customer (Order-Status's last order). One statement per line.
CREATE UNIQUE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first, c_id);
CREATE UNIQUE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id)

-- name: analyze
ANALYZE {table}

-- name: count_rows
SELECT COUNT(*) FROM {table}

-- name: sum_next_o_id
-- NOPM's counter, as HammerDB reads it: every district's next order number, summed.
SELECT SUM(d_next_o_id) FROM district

-- name: check_1
-- Clause 3.3.2.1: W_YTD = sum(D_YTD) per warehouse. Rounded to the cent, so SQLite's
-- floating sums compare as the others' exact ones.
SELECT w_id, w_ytd, s FROM (
  SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id) AS s FROM warehouse
) x WHERE s IS NULL OR ROUND(w_ytd, 2) <> ROUND(s, 2) ORDER BY w_id LIMIT 1

-- name: check_2
-- Clause 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district (a district whose
-- new orders are all delivered has no max(NO_O_ID) to compare).
SELECT d_w_id, d_id, d_next_o_id, mo, mno FROM (
  SELECT d_w_id, d_id, d_next_o_id,
    (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo,
    (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mno
  FROM district
) x WHERE mo IS NULL OR d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND d_next_o_id - 1 <> mno)
ORDER BY d_w_id, d_id LIMIT 1

-- name: check_3
-- Clause 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = the number of NEW-ORDER rows per district.
SELECT no_w_id, no_d_id, MIN(no_o_id), MAX(no_o_id), COUNT(*) FROM new_order
GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)
ORDER BY no_w_id, no_d_id LIMIT 1

-- name: check_4
-- Clause 3.3.2.4: sum(O_OL_CNT) = the number of ORDER-LINE rows per district.
SELECT a.w, a.d, a.n, b.n FROM
  (SELECT o_w_id AS w, o_d_id AS d, SUM(o_ol_cnt) AS n FROM orders GROUP BY o_w_id, o_d_id) a
  LEFT JOIN
  (SELECT ol_w_id AS w, ol_d_id AS d, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) b
  ON a.w = b.w AND a.d = b.d
WHERE b.n IS NULL OR a.n <> b.n ORDER BY a.w, a.d LIMIT 1

-- name: check_5
-- Clause 3.3.2.5: O_CARRIER_ID is null exactly for the orders with a NEW-ORDER row.
SELECT o_w_id, o_d_id, o_id, o_carrier_id, no_o_id FROM orders
  LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)
ORDER BY o_w_id, o_d_id, o_id LIMIT 1

-- name: check_8
-- Clause 3.3.2.8: W_YTD = sum(H_AMOUNT) per warehouse.
SELECT w_id, w_ytd, s FROM (
  SELECT w_id, w_ytd, (SELECT SUM(h_amount) FROM history WHERE h_w_id = w_id) AS s FROM warehouse
) x WHERE s IS NULL OR ROUND(w_ytd, 2) <> ROUND(s, 2) ORDER BY w_id LIMIT 1

-- name: check_9
-- Clause 3.3.2.9: D_YTD = sum(H_AMOUNT) per district.
SELECT d_w_id, d_id, d_ytd, s FROM (
  SELECT d_w_id, d_id, d_ytd,
    (SELECT SUM(h_amount) FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id) AS s
  FROM district
) x WHERE s IS NULL OR ROUND(d_ytd, 2) <> ROUND(s, 2) ORDER BY d_w_id, d_id LIMIT 1
