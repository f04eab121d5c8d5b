-- TPC-C's five transactions as PostgreSQL functions (PL/pgSQL), for the stored-procedure mode
-- (HammerDB's way on PostgreSQL: functions, one SELECT per transaction). Sections start with
-- "-- name: NAME" (crate::sql); `procedures.rs` installs and calls them.
--
-- Unlike HammerDB's functions, which draw their own random items inside the server, these take
-- every input the client-side mode draws (items, supplying warehouses, quantities, customer,
-- amount, carrier), so the same seeded sequence gives the same database state in both modes
-- (dates are the server's CURRENT_TIMESTAMP in both, as in the client-side SQL); and they
-- keep all of the specification's effects (clause 2.4.2.2: s_ytd, s_order_cnt, s_remote_cnt;
-- 2.5.2.2: c_ytd_payment, c_payment_cnt, the BC customer's c_data; 2.7.4.2: c_delivery_cnt),
-- which HammerDB leaves out. Lines are processed one by one in the order given, as the
-- client-side mode sends them, so an item ordered twice in one order is updated twice.
--
-- A function runs inside the calling statement's transaction (autocommit: one transaction per
-- call). New-Order's unused item (clause 2.4.2.3) raises SQLSTATE TPC01 after the earlier lines
-- were processed, which aborts and rolls back the whole transaction on the server; the caller
-- counts that code as the specification's rollback, not as an error. A bad-credit customer's
-- C_DATA gets "c_id c_d_id c_w_id d_id w_id amount|" in front, as the client-side mode writes it.
--
-- Parameters are p_*, variables v_*: PL/pgSQL refuses a name that is both a variable and a
-- column. Bodies are dollar-quoted and hold no question mark (the renderer numbers them) and
-- no comment lines (the section parser drops them).

-- name: drop_new_order
DROP FUNCTION IF EXISTS tpcc_new_order(INTEGER, INTEGER, INTEGER, INTEGER[], INTEGER[], INTEGER[])

-- name: create_new_order
CREATE OR REPLACE FUNCTION tpcc_new_order(
  p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER,
  p_items INTEGER[], p_supply INTEGER[], p_quantities INTEGER[],
  OUT o_id INTEGER, OUT total NUMERIC(12,2))
LANGUAGE plpgsql AS $$
DECLARE
  v_ol_cnt INTEGER := cardinality(p_items);
  v_all_local INTEGER := 1;
  v_w_tax NUMERIC(4,4);
  v_d_tax NUMERIC(4,4);
  v_c_discount NUMERIC(4,4);
  v_c_last VARCHAR(16);
  v_c_credit CHAR(2);
  v_price NUMERIC(5,2);
  v_i_name VARCHAR(24);
  v_i_data VARCHAR(50);
  v_s_qty INTEGER;
  v_s_data VARCHAR(50);
  v_dist CHAR(24);
  v_amount NUMERIC(6,2);
  v_sum NUMERIC(12,2) := 0;
BEGIN
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_next_o_id = d_next_o_id + 1
    WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_next_o_id - 1, d_tax INTO o_id, v_d_tax;
  SELECT c_discount, c_last, c_credit INTO v_c_discount, v_c_last, v_c_credit FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  IF EXISTS (SELECT 1 FROM unnest(p_supply) AS s(w) WHERE s.w <> p_w_id) THEN
    v_all_local := 0;
  END IF;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (o_id, p_d_id, p_w_id, p_c_id, CURRENT_TIMESTAMP, NULL, v_ol_cnt, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (o_id, p_d_id, p_w_id);
  FOR n IN 1 .. v_ol_cnt LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item
      WHERE i_id = p_items[n];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tpcc: item % is not used (the specification''s 1 %% rollback)', p_items[n]
        USING ERRCODE = 'TPC01';
    END IF;
    SELECT s_quantity, s_data,
        CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
          WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07
          WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_s_qty, v_s_data, v_dist
      FROM stock WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n] FOR UPDATE;
    UPDATE stock SET
        s_quantity = CASE WHEN v_s_qty >= p_quantities[n] + 10 THEN v_s_qty - p_quantities[n]
          ELSE v_s_qty - p_quantities[n] + 91 END,
        s_ytd = s_ytd + p_quantities[n],
        s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[n] <> p_w_id THEN 1 ELSE 0 END
      WHERE s_i_id = p_items[n] AND s_w_id = p_supply[n];
    v_amount := p_quantities[n] * v_price;
    v_sum := v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (o_id, p_d_id, p_w_id, n, p_items[n], p_supply[n], NULL, p_quantities[n],
        v_amount, v_dist);
  END LOOP;
  total := round(v_sum * (1 - v_c_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$$

-- name: drop_payment
DROP FUNCTION IF EXISTS tpcc_payment(INTEGER, INTEGER, INTEGER, INTEGER, INTEGER, VARCHAR, NUMERIC)

-- name: create_payment
CREATE OR REPLACE FUNCTION tpcc_payment(
  p_w_id INTEGER, p_d_id INTEGER, p_c_w_id INTEGER, p_c_d_id INTEGER,
  p_c_id INTEGER, p_c_last VARCHAR, p_h_amount NUMERIC,
  OUT c_id INTEGER, OUT c_balance NUMERIC(12,2), OUT c_credit CHAR(2))
LANGUAGE plpgsql AS $$
DECLARE
  v_n INTEGER;
  v_w_name VARCHAR(10);
  v_d_name VARCHAR(10);
  v_amount NUMERIC(6,2) := p_h_amount;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w_id
    RETURNING w_name INTO v_w_name;
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w_id AND d_id = p_d_id
    RETURNING d_name INTO v_d_name;
  IF p_c_id IS NULL THEN
    SELECT count(*) INTO v_n FROM customer AS c
      WHERE c.c_w_id = p_c_w_id AND c.c_d_id = p_c_d_id AND c.c_last = p_c_last;
    SELECT c.c_id INTO c_id FROM customer AS c
      WHERE c.c_w_id = p_c_w_id AND c.c_d_id = p_c_d_id AND c.c_last = p_c_last
      ORDER BY c.c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  ELSE
    c_id := p_c_id;
  END IF;
  UPDATE customer AS c SET c_balance = c.c_balance - v_amount,
      c_ytd_payment = c.c_ytd_payment + v_amount, c_payment_cnt = c.c_payment_cnt + 1,
      c_data = CASE WHEN c.c_credit = 'BC' THEN left(c.c_id || ' ' || p_c_d_id || ' ' || p_c_w_id
        || ' ' || p_d_id || ' ' || p_w_id || ' ' || v_amount || '|' || c.c_data, 500)
        ELSE c.c_data END
    WHERE c.c_w_id = p_c_w_id AND c.c_d_id = p_c_d_id AND c.c_id = tpcc_payment.c_id
    RETURNING c.c_balance, c.c_credit INTO c_balance, c_credit;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (tpcc_payment.c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, CURRENT_TIMESTAMP, v_amount,
      v_w_name || '    ' || v_d_name);
END
$$

-- name: drop_order_status
DROP FUNCTION IF EXISTS tpcc_order_status(INTEGER, INTEGER, INTEGER, VARCHAR)

-- name: create_order_status
CREATE OR REPLACE FUNCTION tpcc_order_status(
  p_w_id INTEGER, p_d_id INTEGER, p_c_id INTEGER, p_c_last VARCHAR)
RETURNS TABLE (c_id INTEGER, c_balance NUMERIC(12,2), c_first VARCHAR(16), c_middle CHAR(2),
  c_last VARCHAR(16), o_id INTEGER, o_entry_d TIMESTAMP, o_carrier_id INTEGER,
  ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_quantity INTEGER, ol_amount NUMERIC(6,2),
  ol_delivery_d TIMESTAMP)
LANGUAGE plpgsql AS $$
DECLARE
  v_n INTEGER;
  v_c_id INTEGER;
  v_balance NUMERIC(12,2);
  v_first VARCHAR(16);
  v_middle CHAR(2);
  v_last VARCHAR(16);
  v_o_id INTEGER;
  v_entry_d TIMESTAMP;
  v_carrier INTEGER;
BEGIN
  IF p_c_id IS NULL THEN
    SELECT count(*) INTO v_n FROM customer AS c
      WHERE c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_last = p_c_last;
    SELECT c.c_id, c.c_balance, c.c_first, c.c_middle, c.c_last
      INTO v_c_id, v_balance, v_first, v_middle, v_last FROM customer AS c
      WHERE c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_last = p_c_last
      ORDER BY c.c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  ELSE
    SELECT c.c_id, c.c_balance, c.c_first, c.c_middle, c.c_last
      INTO v_c_id, v_balance, v_first, v_middle, v_last FROM customer AS c
      WHERE c.c_w_id = p_w_id AND c.c_d_id = p_d_id AND c.c_id = p_c_id;
  END IF;
  SELECT o.o_id, o.o_entry_d, o.o_carrier_id INTO v_o_id, v_entry_d, v_carrier FROM orders AS o
    WHERE o.o_w_id = p_w_id AND o.o_d_id = p_d_id AND o.o_c_id = v_c_id
    ORDER BY o.o_id DESC LIMIT 1;
  RETURN QUERY SELECT v_c_id, v_balance, v_first, v_middle, v_last, v_o_id, v_entry_d, v_carrier,
      l.ol_i_id, l.ol_supply_w_id, l.ol_quantity, l.ol_amount, l.ol_delivery_d
    FROM order_line AS l WHERE l.ol_w_id = p_w_id AND l.ol_d_id = p_d_id AND l.ol_o_id = v_o_id;
END
$$

-- name: drop_delivery
DROP FUNCTION IF EXISTS tpcc_delivery(INTEGER, INTEGER)

-- name: create_delivery
CREATE OR REPLACE FUNCTION tpcc_delivery(
  p_w_id INTEGER, p_carrier_id INTEGER, OUT delivered INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
  v_o_id INTEGER;
  v_c_id INTEGER;
  v_total NUMERIC(12,2);
  v_taken INTEGER;
BEGIN
  delivered := 0;
  FOR d IN 1 .. 10 LOOP
    SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o_id;
    GET DIAGNOSTICS v_taken = ROW_COUNT;
    CONTINUE WHEN v_taken = 0;
    UPDATE orders SET o_carrier_id = p_carrier_id
      WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id
      RETURNING o_c_id INTO v_c_id;
    UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
      WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
    SELECT sum(ol_amount) INTO v_total FROM order_line
      WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id;
    UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;
    delivered := delivered + 1;
  END LOOP;
END
$$

-- name: drop_stock_level
DROP FUNCTION IF EXISTS tpcc_stock_level(INTEGER, INTEGER, INTEGER)

-- name: create_stock_level
CREATE OR REPLACE FUNCTION tpcc_stock_level(
  p_w_id INTEGER, p_d_id INTEGER, p_threshold INTEGER, OUT low_stock INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
  v_next INTEGER;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(DISTINCT s_i_id) INTO low_stock FROM order_line, stock
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id < v_next AND ol_o_id >= v_next - 20
      AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
END
$$

-- name: call_new_order
SELECT o_id, total FROM tpcc_new_order(?, ?, ?, ?::TEXT::INTEGER[], ?::TEXT::INTEGER[], ?::TEXT::INTEGER[])

-- name: call_payment
SELECT c_id, c_balance, c_credit FROM tpcc_payment(?, ?, ?, ?, ?, ?::VARCHAR, ?::NUMERIC)

-- name: call_order_status
SELECT * FROM tpcc_order_status(?, ?, ?, ?::VARCHAR)

-- name: call_delivery
SELECT delivered FROM tpcc_delivery(?, ?)

-- name: call_stock_level
SELECT low_stock FROM tpcc_stock_level(?, ?, ?)
