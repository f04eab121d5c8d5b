#!/usr/bin/env sysbench
-- A TPC-C-like workload for bench/lua-vs-sysbench: the shape of the third-party TPC-C suites
-- for sysbench (text statements built with string.format, rows read with query_row and
-- fetch_row, BEGIN/COMMIT as queries, an intentional rollback counted with
-- ffi.C.sb_counter_inc, a parallel prepare of bulk inserts), small enough to prepare in
-- seconds. dbrig's own script, run unchanged by sysbench and by dbrig.

ffi = require("ffi")
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
]]

sysbench.cmdline.options = {
  warehouses = {"Warehouses", 2},
  customers = {"Customers per district", 300},
  items = {"Items", 10000},
}

local DISTRICTS = 10

local function w_count() return sysbench.opt.warehouses end

-- TPC-C's NURand (LuaJIT's numbers are doubles: bit.bor for the OR).
local function nurand(a, x, y)
  return ((bit.bor(sysbench.rand.uniform(0, a), sysbench.rand.uniform(x, y)) + 42)
    % (y - x + 1)) + x
end

local function create(con)
  local ddl = {
    "CREATE TABLE tl_warehouse (w_id INT NOT NULL PRIMARY KEY, w_name VARCHAR(10), " ..
      "w_tax DECIMAL(4,2), w_ytd DECIMAL(12,2))",
    "CREATE TABLE tl_district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), " ..
      "d_tax DECIMAL(4,2), d_ytd DECIMAL(12,2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE tl_customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, " ..
      "c_first VARCHAR(16), c_last VARCHAR(16), c_credit CHAR(2), c_discount DECIMAL(4,2), " ..
      "c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, " ..
      "c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE INDEX tl_customer_last ON tl_customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE TABLE tl_item (i_id INT NOT NULL PRIMARY KEY, i_name VARCHAR(24), " ..
      "i_price DECIMAL(5,2), i_data VARCHAR(50))",
    "CREATE TABLE tl_stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, " ..
      "s_dist VARCHAR(24), s_ytd INT, s_order_cnt INT, s_data VARCHAR(50), " ..
      "PRIMARY KEY (s_w_id, s_i_id))",
    "CREATE TABLE tl_orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, " ..
      "o_c_id INT, o_carrier_id INT, o_ol_cnt INT, PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE INDEX tl_orders_c ON tl_orders (o_w_id, o_d_id, o_c_id, o_id)",
    "CREATE TABLE tl_new_orders (no_o_id INT NOT NULL, no_d_id INT NOT NULL, " ..
      "no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE tl_order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, " ..
      "ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT, ol_quantity INT, " ..
      "ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), " ..
      "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
  }
  for _, q in ipairs(ddl) do con:query(q) end
end

local function load_warehouse(con, w)
  con:query(string.format("INSERT INTO tl_warehouse VALUES (%d, 'w%d', %.2f, 300000)",
    w, w, sysbench.rand.uniform(0, 20) / 100))
  con:bulk_insert_init("INSERT INTO tl_district VALUES")
  for d = 1, DISTRICTS do
    con:bulk_insert_next(string.format("(%d,%d,'d%d',%.2f,30000,%d)", d, w, d,
      sysbench.rand.uniform(0, 20) / 100, sysbench.opt.customers + 1))
  end
  con:bulk_insert_done()
  con:bulk_insert_init("INSERT INTO tl_customer VALUES")
  for d = 1, DISTRICTS do
    for c = 1, sysbench.opt.customers do
      con:bulk_insert_next(string.format("(%d,%d,%d,'%s','%s','%s',%.2f,-10,10,1,'%s')",
        c, d, w, sysbench.rand.string("first-@@@@@"),
        "last" .. (c <= 100 and c or nurand(255, 1, 100)),
        sysbench.rand.uniform(1, 10) == 1 and "BC" or "GC",
        sysbench.rand.uniform(0, 50) / 100, sysbench.rand.string(string.rep("@", 60))))
    end
  end
  con:bulk_insert_done()
  con:bulk_insert_init("INSERT INTO tl_stock VALUES")
  for i = 1, sysbench.opt.items do
    con:bulk_insert_next(string.format("(%d,%d,%d,'%s',0,0,'%s')", i, w,
      sysbench.rand.uniform(10, 100), sysbench.rand.string(string.rep("@", 24)),
      sysbench.rand.string(string.rep("@", 30))))
  end
  con:bulk_insert_done()
  con:bulk_insert_init("INSERT INTO tl_orders VALUES")
  for d = 1, DISTRICTS do
    for o = 1, sysbench.opt.customers do
      con:bulk_insert_next(string.format("(%d,%d,%d,%d,%s,%d)", o, d, w, o,
        o < sysbench.opt.customers * 0.7 and tostring(sysbench.rand.uniform(1, 10)) or "NULL",
        5))
    end
  end
  con:bulk_insert_done()
  con:bulk_insert_init("INSERT INTO tl_new_orders VALUES")
  for d = 1, DISTRICTS do
    for o = math.floor(sysbench.opt.customers * 0.7), sysbench.opt.customers do
      con:bulk_insert_next(string.format("(%d,%d,%d)", o, d, w))
    end
  end
  con:bulk_insert_done()
  con:bulk_insert_init("INSERT INTO tl_order_line VALUES")
  for d = 1, DISTRICTS do
    for o = 1, sysbench.opt.customers do
      for n = 1, 5 do
        con:bulk_insert_next(string.format("(%d,%d,%d,%d,%d,5,%.2f,'%s')", o, d, w, n,
          sysbench.rand.uniform(1, sysbench.opt.items), sysbench.rand.uniform(1, 9999) / 100,
          sysbench.rand.string(string.rep("@", 24))))
      end
    end
  end
  con:bulk_insert_done()
end

-- Thread 0 makes the tables and the items; every thread then loads its share of the
-- warehouses once the tables are there.
function cmd_prepare()
  local con = sysbench.sql.driver():connect()
  if sysbench.tid == 0 then
    create(con)
    con:bulk_insert_init("INSERT INTO tl_item VALUES")
    for i = 1, sysbench.opt.items do
      con:bulk_insert_next(string.format("(%d,'%s',%.2f,'%s')", i,
        sysbench.rand.string("item-@@@@@@@@"), sysbench.rand.uniform(100, 10000) / 100,
        sysbench.rand.string(string.rep("@", 30))))
    end
    con:bulk_insert_done()
    con:query("CREATE TABLE tl_ready (n INT)")
  else
    local tries = 0
    while true do
      local here = sysbench.sql.driver():name() == "pgsql" and "current_schema()" or "DATABASE()"
      local n = con:query_row("SELECT COUNT(*) FROM information_schema.tables " ..
        "WHERE table_name = 'tl_ready' AND table_schema = " .. here)
      if tonumber(n) > 0 then break end
      os.execute("sleep 0.2")
      tries = tries + 1
      if tries > 600 then error("thread 0 never made the tables") end
    end
  end
  for w = sysbench.tid + 1, w_count(), sysbench.opt.threads do
    load_warehouse(con, w)
  end
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
  local con = sysbench.sql.driver():connect()
  for _, t in ipairs({"warehouse", "district", "customer", "item", "stock", "orders",
                      "new_orders", "order_line", "ready"}) do
    con:query("DROP TABLE IF EXISTS tl_" .. t)
  end
end

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end

local function new_order()
  local w = sysbench.rand.uniform(1, w_count())
  local d = sysbench.rand.uniform(1, DISTRICTS)
  local c = nurand(1023, 1, sysbench.opt.customers)
  local cnt = sysbench.rand.uniform(5, 15)
  local rollback = sysbench.rand.uniform(1, 100) == 1
  con:query("BEGIN")
  local discount, last, credit, tax = con:query_row(string.format(
    "SELECT c_discount, c_last, c_credit, w_tax FROM tl_customer, tl_warehouse " ..
    "WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d", w, d, c))
  local next_o, d_tax = con:query_row(string.format(
    "SELECT d_next_o_id, d_tax FROM tl_district WHERE d_w_id = %d AND d_id = %d FOR UPDATE",
    w, d))
  next_o = tonumber(next_o)
  con:query(string.format(
    "UPDATE tl_district SET d_next_o_id = %d WHERE d_w_id = %d AND d_id = %d",
    next_o + 1, w, d))
  con:query(string.format("INSERT INTO tl_orders VALUES (%d,%d,%d,%d,NULL,%d)",
    next_o, d, w, c, cnt))
  con:query(string.format("INSERT INTO tl_new_orders VALUES (%d,%d,%d)", next_o, d, w))
  -- Items in order, so that two new orders lock stock rows in the same order.
  local items = {}
  for n = 1, cnt do items[n] = nurand(8191, 1, sysbench.opt.items) end
  table.sort(items)
  for n = 1, cnt do
    local item = items[n]
    if rollback and n == cnt then item = sysbench.opt.items + 1 end
    local rs = con:query(string.format(
      "SELECT i_price, i_name, i_data FROM tl_item WHERE i_id = %d", item))
    if rs.nrows == 0 then
      ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
      con:query("ROLLBACK")
      return
    end
    local price = tonumber(rs:fetch_row()[1])
    local qty, dist = con:query_row(string.format(
      "SELECT s_quantity, s_dist FROM tl_stock WHERE s_i_id = %d AND s_w_id = %d FOR UPDATE",
      item, w))
    local q = sysbench.rand.uniform(1, 10)
    qty = tonumber(qty)
    qty = qty > q + 10 and qty - q or qty - q + 91
    con:query(string.format(
      "UPDATE tl_stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1 " ..
      "WHERE s_i_id = %d AND s_w_id = %d", qty, q, item, w))
    con:query(string.format("INSERT INTO tl_order_line VALUES (%d,%d,%d,%d,%d,%d,%.2f,'%s')",
      next_o, d, w, n, item, q, q * price * (1 + tonumber(tax) + tonumber(d_tax)) *
      (1 - tonumber(discount)), dist))
  end
  con:query("COMMIT")
end

local function payment()
  local w = sysbench.rand.uniform(1, w_count())
  local d = sysbench.rand.uniform(1, DISTRICTS)
  local amount = sysbench.rand.uniform(100, 500000) / 100
  con:query("BEGIN")
  con:query(string.format("UPDATE tl_warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d",
    amount, w))
  local w_name = con:query_row(string.format(
    "SELECT w_name FROM tl_warehouse WHERE w_id = %d", w))
  con:query(string.format(
    "UPDATE tl_district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d",
    amount, w, d))
  local d_name = con:query_row(string.format(
    "SELECT d_name FROM tl_district WHERE d_w_id = %d AND d_id = %d", w, d))
  local c
  if sysbench.rand.uniform(1, 100) <= 60 then
    local last = "last" .. nurand(255, 1, 100)
    local rs = con:query(string.format(
      "SELECT c_id FROM tl_customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' " ..
      "ORDER BY c_first", w, d, last))
    local pick = math.floor((rs.nrows + 1) / 2)
    for _ = 1, pick do c = rs:fetch_row()[1] end
    if c == nil then c = nurand(1023, 1, sysbench.opt.customers) end
  else
    c = nurand(1023, 1, sysbench.opt.customers)
  end
  local credit, balance, data = con:query_row(string.format(
    "SELECT c_credit, c_balance, c_data FROM tl_customer " ..
    "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d FOR UPDATE", w, d, c))
  if credit == "BC" then
    local new_data = string.sub(string.format("| %s %d %d %.2f %s %s", c, d, w, amount,
      w_name, data), 1, 500)
    con:query(string.format(
      "UPDATE tl_customer SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + " ..
      "%.2f, c_payment_cnt = c_payment_cnt + 1, c_data = '%s' " ..
      "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s", amount, amount, new_data, w, d, c))
  else
    con:query(string.format(
      "UPDATE tl_customer SET c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + " ..
      "%.2f, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s",
      amount, amount, w, d, c))
  end
  con:query("COMMIT")
end

local function order_status()
  local w = sysbench.rand.uniform(1, w_count())
  local d = sysbench.rand.uniform(1, DISTRICTS)
  local c = nurand(1023, 1, sysbench.opt.customers)
  con:query("BEGIN")
  con:query_row(string.format(
    "SELECT c_balance, c_first, c_last FROM tl_customer " ..
    "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
  local o = con:query_row(string.format(
    "SELECT o_id FROM tl_orders WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d " ..
    "ORDER BY o_id DESC LIMIT 1", w, d, c))
  if o ~= nil then
    local rs = con:query(string.format(
      "SELECT ol_i_id, ol_quantity, ol_amount FROM tl_order_line " ..
      "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o))
    for _ = 1, rs.nrows do rs:fetch_row() end
  end
  con:query("COMMIT")
end

local function delivery()
  local w = sysbench.rand.uniform(1, w_count())
  local carrier = sysbench.rand.uniform(1, 10)
  con:query("BEGIN")
  for d = 1, DISTRICTS do
    local o = con:query_row(string.format(
      "SELECT no_o_id FROM tl_new_orders WHERE no_w_id = %d AND no_d_id = %d " ..
      "ORDER BY no_o_id LIMIT 1 FOR UPDATE", w, d))
    if o ~= nil then
      con:query(string.format(
        "DELETE FROM tl_new_orders WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %s",
        w, d, o))
      local c = con:query_row(string.format(
        "SELECT o_c_id FROM tl_orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %s",
        w, d, o))
      con:query(string.format(
        "UPDATE tl_orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %s",
        carrier, w, d, o))
      local total = con:query_row(string.format(
        "SELECT SUM(ol_amount) FROM tl_order_line " ..
        "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o))
      con:query(string.format(
        "UPDATE tl_customer SET c_balance = c_balance + %s " ..
        "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s", total or "0", w, d, c))
    end
  end
  con:query("COMMIT")
end

local function stock_level()
  local w = sysbench.rand.uniform(1, w_count())
  local d = sysbench.rand.uniform(1, DISTRICTS)
  con:query("BEGIN")
  local next_o = con:query_row(string.format(
    "SELECT d_next_o_id FROM tl_district WHERE d_w_id = %d AND d_id = %d", w, d))
  con:query_row(string.format(
    "SELECT COUNT(DISTINCT s_i_id) FROM tl_order_line, tl_stock " ..
    "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id < %d AND ol_o_id >= %d " ..
    "AND s_w_id = %d AND s_i_id = ol_i_id AND s_quantity < %d",
    w, d, next_o, next_o - 20, w, sysbench.rand.uniform(10, 20)))
  con:query("COMMIT")
end

-- TPC-C's mix: 45 % new order, 43 % payment, 4 % each of the others.
function event()
  local r = sysbench.rand.uniform(1, 100)
  if r <= 45 then new_order()
  elseif r <= 88 then payment()
  elseif r <= 92 then order_status()
  elseif r <= 96 then delivery()
  else stock_level() end
end
