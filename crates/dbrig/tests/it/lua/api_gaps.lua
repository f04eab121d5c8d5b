-- dbrig's sysbench-API script for tests/it/lua.rs: prewarm, fetch_row() on a prepared
-- statement's result, sysbench.hooks.sql_error_ignorable, a bulk insert inside a transaction
-- (sysbench 1.0.20 sends no COMMIT of its own, on PostgreSQL either), and a prepare that a
-- plan runs once.

sysbench.cmdline.options = {
  hook = {"Let sysbench.hooks.sql_error_ignorable downgrade the forced error", true},
  fail = {"Each client's first event sends a statement that fails (fatal by default)", true},
}

local function connect() return sysbench.sql.driver():connect() end

function prepare()
  local con = connect()
  con:query("CREATE TABLE lua_gaps_t (id INTEGER NOT NULL PRIMARY KEY, c VARCHAR(20) NOT NULL)")
  con:query("BEGIN")
  con:bulk_insert_init("INSERT INTO lua_gaps_t (id, c) VALUES")
  for i = 1, 2500 do con:bulk_insert_next(string.format("(%d, 'r%d')", i, i)) end
  con:bulk_insert_done()
  con:query("ROLLBACK")
  -- Had the bulk insert committed every 1000 rows, 2000 would be left.
  print("rows after rollback: " .. con:query_row("SELECT COUNT(*) FROM lua_gaps_t"))
  con:bulk_insert_init("INSERT INTO lua_gaps_t (id, c) VALUES")
  for i = 1, 30 do con:bulk_insert_next(string.format("(%d, 'r%d')", i, i)) end
  con:bulk_insert_done()
  print("prepared lua_gaps_t")
end

function prewarm()
  print("prewarmed rows: " .. connect():query_row("SELECT COUNT(*) FROM lua_gaps_t"))
end

function cleanup()
  connect():query("DROP TABLE IF EXISTS lua_gaps_t")
  print("dropped lua_gaps_t")
end

local asked = 0
function sysbench.hooks.sql_error_ignorable(err)
  asked = asked + 1
  assert(err.connection == con, "errdesc.connection is the failing connection")
  print(string.format("ignorable? errno %d, state '%s', query %s", err.sql_errno, err.sql_state,
                      tostring(err.query)))
  return sysbench.opt.hook and (err.sql_errno == 1062 or err.sql_state == "22012")
end

function thread_init()
  con = connect()
  sel = con:prepare("SELECT id, c FROM lua_gaps_t WHERE id = ?")
  p_id = sel:bind_create(sysbench.sql.type.INT)
  sel:bind_param(p_id)
  failed = not sysbench.opt.fail
end

function event()
  if not failed then
    failed = true
    if sysbench.sql.driver():name() == "pgsql" then
      con:query("SELECT 1/0")
    else
      con:query("INSERT INTO lua_gaps_t (id, c) VALUES (1, 'dup')")
    end
  end
  local id = sysbench.rand.uniform(1, 30)
  p_id:set(id)
  local rs = sel:execute()
  local row = rs:fetch_row()
  assert(rs.nrows == 1 and rs.nfields == 2, "nrows " .. rs.nrows .. " nfields " .. rs.nfields)
  assert(tonumber(row[1]) == id and row[2] == "r" .. id, tostring(row[1]) .. " " .. tostring(row[2]))
  assert(rs:fetch_row() == nil)
end

function thread_done()
  print(string.format("thread_done %d: hook asked %d", sysbench.tid, asked))
end
