-- TPC-C's five transactions as MariaDB/MySQL stored procedures, for the stored-procedure mode
-- (HammerDB's way: one CALL per transaction, the procedure owns its transaction). Sections
-- start with "-- name: NAME" (crate::sql); `procedures.rs` installs and calls them.
--
-- Unlike HammerDB's procedures, which draw their own random items inside the server, these take
-- every input the client-side mode draws (items, supplying warehouses, quantities, customer,
-- amount, carrier), so the same seeded sequence gives the same database state in both modes
-- (dates are the server's CURRENT_TIMESTAMP in both, as in the client-side SQL); and they
-- keep all of the specification's effects (clause 2.4.2.2: s_ytd, s_order_cnt, s_remote_cnt;
-- 2.5.2.2: c_ytd_payment, c_payment_cnt, the BC customer's c_data; 2.7.4.2: c_delivery_cnt),
-- which HammerDB leaves out.
--
-- Each procedure runs in autocommit mode on the client's side: START TRANSACTION ... COMMIT
-- inside. On any SQL error the handler rolls back and re-raises the error (its code unchanged:
-- a deadlock is still 1213), so no transaction is ever left open on the connection.
-- A procedure's answer is its one result set; New-Order's first column says whether it
-- committed (1) or rolled back on the unused item (0, clause 2.4.2.3). A bad-credit customer's
-- C_DATA gets "c_id c_d_id c_w_id d_id w_id amount|" in front, as the client-side mode writes it.
--
-- Lists (New-Order's lines) arrive as comma-separated integers: procedures take no arrays.
-- Parameters are p_*, variables v_*: a MariaDB variable would shadow a column of its name.
-- Comment lines inside a body are dropped by the section parser: keep bodies free of them.

-- name: drop_new_order
DROP PROCEDURE IF EXISTS tpcc_new_order

-- name: create_new_order
CREATE PROCEDURE tpcc_new_order(
  p_w_id INT, p_d_id INT, p_c_id INT,
  p_items VARCHAR(200), p_supply VARCHAR(200), p_quantities VARCHAR(100))
BEGIN
  DECLARE v_ol_cnt INT;
  DECLARE v_n INT DEFAULT 1;
  DECLARE v_all_local INT DEFAULT 1;
  DECLARE v_w_tax DECIMAL(4,4);
  DECLARE v_d_tax DECIMAL(4,4);
  DECLARE v_o_id INT;
  DECLARE v_c_discount DECIMAL(4,4);
  DECLARE v_c_last VARCHAR(16);
  DECLARE v_c_credit CHAR(2);
  DECLARE v_i_id INT;
  DECLARE v_supply INT;
  DECLARE v_qty INT;
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_i_name VARCHAR(24);
  DECLARE v_i_data VARCHAR(50);
  DECLARE v_s_qty INT;
  DECLARE v_dist CHAR(24);
  DECLARE v_s_data VARCHAR(50);
  DECLARE v_amount DECIMAL(6,2);
  DECLARE v_sum DECIMAL(12,2) DEFAULT 0;
  DECLARE v_missing INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_missing = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET v_ol_cnt = LENGTH(p_items) - LENGTH(REPLACE(p_items, ',', '')) + 1;
  START TRANSACTION;
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district
    WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  WHILE v_n <= v_ol_cnt DO
    IF CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_n), ',', -1) AS SIGNED) <> p_w_id THEN
      SET v_all_local = 0;
    END IF;
    SET v_n = v_n + 1;
  END WHILE;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, CURRENT_TIMESTAMP, NULL, v_ol_cnt, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  SET v_n = 1;
  each_line: WHILE v_n <= v_ol_cnt DO
    SET v_i_id = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_n), ',', -1) AS SIGNED);
    SET v_supply = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_n), ',', -1) AS SIGNED);
    SET v_qty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_quantities, ',', v_n), ',', -1) AS SIGNED);
    SET v_missing = 0;
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_i_id;
    IF v_missing = 1 THEN
      LEAVE each_line;
    END IF;
    SELECT s_quantity, s_data,
        CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
          WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
          WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_s_qty, v_s_data, v_dist
      FROM stock WHERE s_i_id = v_i_id AND s_w_id = v_supply FOR UPDATE;
    UPDATE stock SET
        s_quantity = IF(v_s_qty >= v_qty + 10, v_s_qty - v_qty, v_s_qty - v_qty + 91),
        s_ytd = s_ytd + v_qty,
        s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + IF(v_supply <> p_w_id, 1, 0)
      WHERE s_i_id = v_i_id AND s_w_id = v_supply;
    SET v_amount = v_qty * v_price;
    SET v_sum = v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o_id, p_d_id, p_w_id, v_n, v_i_id, v_supply, NULL, v_qty, v_amount, v_dist);
    SET v_n = v_n + 1;
  END WHILE each_line;
  IF v_missing = 1 THEN
    ROLLBACK;
    SELECT 0 AS is_committed, v_o_id AS o_id, CAST(0 AS DECIMAL(12,2)) AS total;
  ELSE
    COMMIT;
    SELECT 1 AS is_committed, v_o_id AS o_id,
      CAST(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax) AS DECIMAL(12,2)) AS total;
  END IF;
END

-- name: drop_payment
DROP PROCEDURE IF EXISTS tpcc_payment

-- name: create_payment
CREATE PROCEDURE tpcc_payment(
  p_w_id INT, p_d_id INT, p_c_w_id INT, p_c_d_id INT,
  p_c_id INT, p_c_last VARCHAR(16), p_h_amount DECIMAL(6,2))
BEGIN
  DECLARE v_c_id INT;
  DECLARE v_n INT;
  DECLARE v_w_name VARCHAR(10);
  DECLARE v_d_name VARCHAR(10);
  DECLARE v_credit CHAR(2);
  DECLARE v_balance DECIMAL(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_h_amount WHERE w_id = p_w_id;
  SELECT w_name INTO v_w_name FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_ytd = d_ytd + p_h_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT d_name INTO v_d_name FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  IF p_c_id IS NULL THEN
    SELECT COUNT(*) INTO v_n FROM customer
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    SET v_n = (v_n + 1) DIV 2 - 1;
    SELECT c_id INTO v_c_id FROM customer
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
      ORDER BY c_first LIMIT v_n, 1;
  ELSE
    SET v_c_id = p_c_id;
  END IF;
  SELECT c_credit, c_balance INTO v_credit, v_balance FROM customer
    WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF v_credit = 'BC' THEN
    UPDATE customer SET c_balance = c_balance - p_h_amount,
        c_ytd_payment = c_ytd_payment + p_h_amount, c_payment_cnt = c_payment_cnt + 1,
        c_data = LEFT(CONCAT(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ',
          p_h_amount, '|', c_data), 500)
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_h_amount,
        c_ytd_payment = c_ytd_payment + p_h_amount, c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, CURRENT_TIMESTAMP, p_h_amount,
      CONCAT(v_w_name, '    ', v_d_name));
  COMMIT;
  SELECT v_c_id AS c_id, v_balance - p_h_amount AS c_balance, v_credit AS c_credit;
END

-- name: drop_order_status
DROP PROCEDURE IF EXISTS tpcc_order_status

-- name: create_order_status
CREATE PROCEDURE tpcc_order_status(p_w_id INT, p_d_id INT, p_c_id INT, p_c_last VARCHAR(16))
BEGIN
  DECLARE v_c_id INT;
  DECLARE v_n INT;
  DECLARE v_first VARCHAR(16);
  DECLARE v_middle CHAR(2);
  DECLARE v_last VARCHAR(16);
  DECLARE v_balance DECIMAL(12,2);
  DECLARE v_o_id INT;
  DECLARE v_entry_d DATETIME;
  DECLARE v_carrier INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  IF p_c_id IS NULL THEN
    SELECT COUNT(*) INTO v_n FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    SET v_n = (v_n + 1) DIV 2 - 1;
    SELECT c_id, c_balance, c_first, c_middle, c_last
      INTO v_c_id, v_balance, v_first, v_middle, v_last FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last
      ORDER BY c_first LIMIT v_n, 1;
  ELSE
    SELECT c_id, c_balance, c_first, c_middle, c_last
      INTO v_c_id, v_balance, v_first, v_middle, v_last FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  END IF;
  SELECT o_id, o_entry_d, o_carrier_id INTO v_o_id, v_entry_d, v_carrier FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
  SELECT v_c_id AS c_id, v_balance AS c_balance, v_first AS c_first, v_middle AS c_middle,
      v_last AS c_last, v_o_id AS o_id, v_entry_d AS o_entry_d, v_carrier AS o_carrier_id,
      ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
    FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  COMMIT;
END

-- name: drop_delivery
DROP PROCEDURE IF EXISTS tpcc_delivery

-- name: create_delivery
CREATE PROCEDURE tpcc_delivery(p_w_id INT, p_carrier_id INT)
BEGIN
  DECLARE v_d_id INT DEFAULT 1;
  DECLARE v_o_id INT;
  DECLARE v_c_id INT;
  DECLARE v_total DECIMAL(12,2);
  DECLARE v_delivered INT DEFAULT 0;
  DECLARE v_taken INT;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_o_id = NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  WHILE v_d_id <= 10 DO
    SET v_o_id = NULL;
    SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o_id IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d_id AND no_o_id = v_o_id;
      SET v_taken = ROW_COUNT();
    ELSE
      SET v_taken = 0;
    END IF;
    IF v_taken > 0 THEN
      SELECT o_c_id INTO v_c_id FROM orders
        WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id;
      UPDATE orders SET o_carrier_id = p_carrier_id
        WHERE o_w_id = p_w_id AND o_d_id = v_d_id AND o_id = v_o_id;
      UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
        WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
      SELECT SUM(ol_amount) INTO v_total FROM order_line
        WHERE ol_w_id = p_w_id AND ol_d_id = v_d_id AND ol_o_id = v_o_id;
      UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w_id AND c_d_id = v_d_id AND c_id = v_c_id;
      SET v_delivered = v_delivered + 1;
    END IF;
    SET v_d_id = v_d_id + 1;
  END WHILE;
  COMMIT;
  SELECT v_delivered AS delivered;
END

-- name: drop_stock_level
DROP PROCEDURE IF EXISTS tpcc_stock_level

-- name: create_stock_level
CREATE PROCEDURE tpcc_stock_level(p_w_id INT, p_d_id INT, p_threshold INT)
BEGIN
  DECLARE v_next INT;
  DECLARE v_low INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
  SELECT v_low AS low_stock;
END

-- name: call_new_order
CALL tpcc_new_order(?, ?, ?, ?, ?, ?)

-- name: call_payment
CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?)

-- name: call_order_status
CALL tpcc_order_status(?, ?, ?, ?)

-- name: call_delivery
CALL tpcc_delivery(?, ?)

-- name: call_stock_level
CALL tpcc_stock_level(?, ?, ?)
