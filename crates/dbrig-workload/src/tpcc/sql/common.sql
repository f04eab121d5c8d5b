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

-- name: check_6
-- Clause 3.3.2.6: O_OL_CNT = the number of ORDER-LINE rows of each order (one look-up in
-- ORDER-LINE's primary key per order).
SELECT o_w_id, o_d_id, o_id, o_ol_cnt, n FROM (
  SELECT o_w_id, o_d_id, o_id, o_ol_cnt,
    (SELECT COUNT(*) FROM order_line
     WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id) AS n
  FROM orders
) x WHERE n <> o_ol_cnt ORDER BY o_w_id, o_d_id, o_id LIMIT 1

-- name: check_7
-- Clause 3.3.2.7: OL_DELIVERY_D is null exactly for the lines of orders whose O_CARRIER_ID
-- is null.
SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, o_carrier_id FROM order_line
  JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL)
   OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)
ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number LIMIT 1

-- name: check_10
-- Clause 3.3.2.10: C_BALANCE = sum(OL_AMOUNT of the customer's delivered lines) -
-- sum(H_AMOUNT of the customer's payments), per customer. One grouping of the three tables'
-- rows by customer (HISTORY has no index by customer; joining grouped subqueries let
-- PostgreSQL plan a nested loop of customers by payments, a minute at one warehouse),
-- rounded to the cent.
SELECT w, d, c, SUM(bal), SUM(ol), SUM(h) FROM (
  SELECT c_w_id AS w, c_d_id AS d, c_id AS c, c_balance AS bal, 0 AS ol, 0 AS h FROM customer
  UNION ALL
  SELECT o_w_id, o_d_id, o_c_id, 0, ol_amount, 0 FROM orders
    JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  WHERE ol_delivery_d IS NOT NULL
  UNION ALL
  SELECT h_c_w_id, h_c_d_id, h_c_id, 0, 0, h_amount FROM history
) x GROUP BY w, d, c HAVING ROUND(SUM(bal), 2) <> ROUND(SUM(ol) - SUM(h), 2)
ORDER BY w, d, c LIMIT 1

-- name: check_11
-- Clause 3.3.2.11, which holds only for the database as loaded (each Delivery removes a
-- NEW-ORDER row): ORDER rows - NEW-ORDER rows = 2 100 (the delivered orders) per district.
SELECT o_w_id, o_d_id, n_o, COALESCE(n_no, 0) FROM
  (SELECT o_w_id, o_d_id, COUNT(*) AS n_o FROM orders GROUP BY o_w_id, o_d_id) a
  LEFT JOIN
  (SELECT no_w_id, no_d_id, COUNT(*) AS n_no FROM new_order GROUP BY no_w_id, no_d_id) b
  ON b.no_w_id = a.o_w_id AND b.no_d_id = a.o_d_id
WHERE n_o - COALESCE(n_no, 0) <> ? ORDER BY o_w_id, o_d_id LIMIT 1

-- name: check_12
-- Clause 3.3.2.12: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of the customer's delivered
-- lines), per customer (the specification asks it of randomly selected customers; every
-- customer costs the same one grouping, as in check_10).
SELECT w, d, c, SUM(bal), SUM(ol) FROM (
  SELECT c_w_id AS w, c_d_id AS d, c_id AS c, c_balance + c_ytd_payment AS bal, 0 AS ol
  FROM customer
  UNION ALL
  SELECT o_w_id, o_d_id, o_c_id, 0, ol_amount FROM orders
    JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  WHERE ol_delivery_d IS NOT NULL
) x GROUP BY w, d, c HAVING ROUND(SUM(bal), 2) <> ROUND(SUM(ol), 2)
ORDER BY w, d, c LIMIT 1

-- ---- The five transactions, client-side (clause 2; one prepared statement each). ----
-- Timestamps are the server's (CURRENT_TIMESTAMP), as HammerDB's procedures take them.

-- name: begin
BEGIN

-- name: begin_write
BEGIN

-- name: commit
COMMIT

-- name: rollback
ROLLBACK

-- name: no_get_wh_cust
SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse
WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?

-- name: no_get_dist
SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE

-- name: no_upd_dist
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?

-- name: no_ins_order
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)

-- name: no_ins_new_order
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)

-- name: no_get_item
SELECT i_price, i_name, i_data FROM item WHERE i_id = ?

-- name: no_get_stock
SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06,
  s_dist_07, s_dist_08, s_dist_09, s_dist_10
FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE

-- name: no_upd_stock
UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1,
  s_remote_cnt = s_remote_cnt + ?
WHERE s_i_id = ? AND s_w_id = ?

-- name: no_ins_order_line
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
  ol_quantity, ol_amount, ol_dist_info)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)

-- name: pay_upd_wh
UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?

-- name: pay_get_wh
SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?

-- name: pay_upd_dist
UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?

-- name: pay_get_dist
SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district
WHERE d_w_id = ? AND d_id = ?

-- name: cust_by_name
-- Payment's and Order-Status's customer by last name: the one at position n/2 rounded up
-- of those sorted by first name (clause 2.5.2.2) is picked by the client.
SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first

-- name: pay_get_cust
SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
  c_since, c_credit, c_credit_lim, c_discount, c_balance
FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE

-- name: pay_get_cust_data
SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: pay_upd_cust_bc
UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,
  c_payment_cnt = c_payment_cnt + 1, c_data = ?
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: pay_upd_cust
UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?,
  c_payment_cnt = c_payment_cnt + 1
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: pay_ins_hist
INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)

-- name: os_get_cust
SELECT c_balance, c_first, c_middle, c_last FROM customer
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: os_get_last_order
SELECT o_id, o_carrier_id, o_entry_d FROM orders
WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1

-- name: os_get_lines
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?

-- name: dl_get_new_order
SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ?
ORDER BY no_o_id LIMIT 1 FOR UPDATE

-- name: dl_del_new_order
DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?

-- name: dl_get_order_cust
SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?

-- name: dl_upd_order
UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?

-- name: dl_upd_lines
UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?

-- name: dl_sum_lines
SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?

-- name: dl_upd_cust
UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1
WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?

-- name: sl_get_dist
SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?

-- name: sl_count
SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock
WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?
  AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?
