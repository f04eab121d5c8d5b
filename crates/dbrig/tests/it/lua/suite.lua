-- A small TPC-C-like suite written the way third-party sysbench suites are (Percona's
-- sysbench-tpcc the model): LuaJIT's ffi for usleep and sysbench's counters, commands of its
-- own in sysbench.cmdline.commands (a parallel prepare whose threads wait for each other's
-- tables, a check), and intentional rollbacks counted as ignored errors. dbrig's own test
-- script (crates/dbrig/tests/it/lua.rs), run by dbrig and by sysbench alike.

ffi = require("ffi")

ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
typedef uint32_t useconds_t;
int usleep(useconds_t useconds);
]]

sysbench.cmdline.options = {
  accounts = {"Accounts per thread's table", 5},
  sleeper = {"Seconds thread 0 of prepare spends in os.execute(\"sleep\")", 0},
  rollback_every = {"Every Nth event rolls back on purpose", 4},
}

local function tables()
  local n = 0
  local rs = con_tables:query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() " ..
    "AND table_name LIKE 'suite_acct%'")
  return rs.nrows
end

-- Each thread makes its own table, then waits (ffi.C.usleep) until every thread's is there
-- before it loads: the prepare of sysbench-tpcc.
function cmd_prepare()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  con_tables = con
  local t = sysbench.tid + 1
  if sysbench.tid == 0 and sysbench.opt.sleeper > 0 then
    -- A thread busy elsewhere (a shell command) holds up no other thread.
    os.execute("sleep " .. sysbench.opt.sleeper)
    -- Every other thread made its table meanwhile.
    local others = tables()
    if others ~= sysbench.opt.threads - 1 then
      error(string.format("the other threads made %d table(s) while thread 0 slept, not %d",
        others, sysbench.opt.threads - 1))
    end
  end
  con:query(string.format(
    "CREATE TABLE suite_acct%d (id INTEGER NOT NULL PRIMARY KEY, balance INTEGER NOT NULL)", t))
  local tries = 0
  while tables() < sysbench.opt.threads do
    ffi.C.usleep(1000)
    tries = tries + 1
    if tries > 20000 then error("the other threads' tables never appeared") end
  end
  con:bulk_insert_init(string.format("INSERT INTO suite_acct%d VALUES", t))
  for i = 1, sysbench.opt.accounts do
    con:bulk_insert_next(string.format("(%d,100)", i))
  end
  con:bulk_insert_done()
end

function cmd_check()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  local t = sysbench.tid + 1
  local total = con:query_row(string.format("SELECT SUM(balance) FROM suite_acct%d", t))
  if tonumber(total) ~= 100 * sysbench.opt.accounts then
    error(string.format("suite_acct%d holds %s, not %d", t, total, 100 * sysbench.opt.accounts))
  end
  print(string.format("check: suite_acct%d consistent", t))
end

sysbench.cmdline.commands = {
  prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
  check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
  local drv = sysbench.sql.driver()
  local con = drv:connect()
  for t = 1, sysbench.opt.threads do
    con:query(string.format("DROP TABLE IF EXISTS suite_acct%d", t))
  end
end

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  events = 0
end

-- A transfer between two accounts of the thread's table; every Nth rolls back on purpose,
-- counted as sysbench-tpcc counts its new-order rollbacks.
function event()
  events = events + 1
  local t = sysbench.tid + 1
  local a = sysbench.rand.uniform(1, sysbench.opt.accounts)
  local b = sysbench.rand.uniform(1, sysbench.opt.accounts)
  con:query("BEGIN")
  con:query(string.format("UPDATE suite_acct%d SET balance = balance - 7 WHERE id = %d", t, a))
  if events % sysbench.opt.rollback_every == 0 then
    ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
    con:query("ROLLBACK")
    return
  end
  con:query(string.format("UPDATE suite_acct%d SET balance = balance + 7 WHERE id = %d", t, b))
  con:query("COMMIT")
end
