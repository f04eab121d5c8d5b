-- dbrig's own sysbench-API script for the tests (tests/it/lua.rs): it uses every part of the
-- sysbench 1.0 API dbrig hosts and prints what the test checks. Two clients force one
-- deadlock in their first events (opposite row order), which must come back as a
-- RESTART_EVENT error through sysbench.hooks.before_restart_event.

sysbench.cmdline.options = {
  rows = {"Rows in the table", 20},
  flag = {"A boolean option", false},
  label = {"A string option", "plain"},
  names = {"A list option", {"a", "b"}},
  nap = {"Seconds each forcing client waits between its two updates", 0.3},
}

local T = sysbench.sql.type

local function create(con)
  con:query("CREATE TABLE lua_api_t (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL, c CHAR(20) NOT NULL, d DOUBLE)")
  con:bulk_insert_init("INSERT INTO lua_api_t (id, k, c, d) VALUES")
  for i = 1, sysbench.opt.rows do
    con:bulk_insert_next(string.format("(%d, 0, '%s', %f)", i, sysbench.rand.string("@@##"), i / 2))
  end
  con:bulk_insert_done()
end

sysbench.cmdline.commands = {
  prepare = {function()
    local drv = sysbench.sql.driver()
    local con = drv:connect()
    if sysbench.tid == 0 then
      create(con)
      print("prepared by " .. drv:name())
    end
    con:disconnect()
  end, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
  local con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS lua_api_t")
  print("cleaned up")
end

function init()
  print(string.format("init: version %s, command %s, label %s, flag %s, names %s+%s",
    sysbench.version, sysbench.cmdline.command, sysbench.opt.label, tostring(sysbench.opt.flag),
    sysbench.opt.names[1], sysbench.opt.names[2]))
end

function done()
  print("done: restarts seen by the hook are printed per client")
end

local restarts = 0
function sysbench.hooks.before_restart_event(err)
  restarts = restarts + 1
  print(string.format("restart: errno %d, state '%s', tid %d", err.sql_errno, err.sql_state, sysbench.tid))
end

sysbench.hooks.report_intermediate = sysbench.report_csv
function sysbench.hooks.report_cumulative(stat)
  print(string.format("cumulative: events %d reads %d writes %d other %d errors %d",
    stat.events, stat.reads, stat.writes, stat.other, stat.errors))
  sysbench.report_json(stat)
end

local function check_rand()
  for _ = 1, 50 do
    for _, f in ipairs({"uniform", "default", "gaussian", "special", "pareto", "zipfian"}) do
      local v = sysbench.rand[f](5, 9)
      assert(v >= 5 and v <= 9, f .. " out of range: " .. v)
    end
    local d = sysbench.rand.uniform_double()
    assert(d >= 0 and d < 1)
    assert(sysbench.rand.uniform_uint64() >= 0)
    local s = sysbench.rand.varstring(3, 6)
    assert(#s >= 3 and #s <= 6, s)
    assert(sb_rand(1, 3) <= 3 and sb_rand_uniform(1, 3) >= 1)
  end
  assert(sysbench.rand.string("##-@@"):match("^%d%d%-%l%l$"))
  assert(sysbench.rand.unique() ~= sysbench.rand.unique())
end

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  check_rand()
  -- Result sets: con:query and con:query_row.
  local rs = con:query("SELECT id, c FROM lua_api_t WHERE id <= 3 ORDER BY id")
  assert(rs.nrows == 3 and rs.nfields == 2, "nrows " .. rs.nrows)
  local row = rs:fetch_row()
  assert(row[1] == "1" and #row[2] == 4)
  local n = con:query_row("SELECT COUNT(*) FROM lua_api_t")
  assert(tonumber(n) == sysbench.opt.rows, "count " .. tostring(n))
  -- A fatal SQL error is an error message, caught here.
  local ok, err = pcall(function() con:query("SELECT * FROM lua_api_no_such_table") end)
  assert(not ok and tostring(err):find("SQL error, errno = "), tostring(err))
  con:reconnect()
  -- Prepared statements with every bind type dbrig takes.
  upd = con:prepare("UPDATE lua_api_t SET k = k + ?, c = ?, d = ? WHERE id = ?")
  p_k = upd:bind_create(T.INT)
  p_c = upd:bind_create(T.CHAR, 20)
  p_d = upd:bind_create(T.DOUBLE)
  p_id = upd:bind_create(T.BIGINT)
  upd:bind_param(p_k, p_c, p_d, p_id)
  sel = con:prepare("SELECT c FROM lua_api_t WHERE id = ?")
  s_id = sel:bind_create(T.INT)
  sel:bind_param(s_id)
  begin = con:prepare("BEGIN")
  commit = con:prepare("COMMIT")
  forced = sysbench.opt.threads < 2
end

local function update(id)
  p_k:set(1)
  p_c:set_rand_str("@@@@-####")
  p_d:set(sysbench.rand.uniform_double())
  p_id:set(id)
  upd:execute()
end

function event()
  begin:execute()
  if not forced then
    -- Opposite order in the two clients, with a pause between: one of them deadlocks.
    forced = true
    local first, second = 1, 2
    if sysbench.tid == 1 then first, second = 2, 1 end
    update(first)
    con:query(string.format("SELECT SLEEP(%f)", sysbench.opt.nap))
    update(second)
  else
    s_id:set(sysbench.rand.default(1, sysbench.opt.rows))
    local r = sel:execute()
    assert(r ~= nil and r.nrows == 1)
    update(sysbench.rand.uniform(3, sysbench.opt.rows))
  end
  commit:execute()
end

function thread_done()
  upd:close()
  sel:close()
  print(string.format("thread_done %d: restarts %d", sysbench.tid, restarts))
  con:disconnect()
end
