-- Prepared statements both ways dbrig runs them (tests/it/lua.rs): `stmt:execute()`, which a
-- client that owns its thread on MariaDB runs through LuaJIT's FFI (lua/fast.rs), and the
-- mlua method it replaces (`stmt._s:execute(...)`, called here directly). Each value list is
-- inserted once each way; the rows must be the same, the row counts too, and a failed
-- execute must raise sysbench's error at the script's line. One event, one client.
-- (This script never names the row-reading method, so its statements' rows are counted only.)

local T = sysbench.sql.type

-- (i BIGINT, d DOUBLE, c VARCHAR(5)) values: numbers, integral or not, nil, booleans,
-- strings (truncated to the bind's 5 bytes; one with a character across the cut).
local VALUES = {
  {7, 2.5, "abcdefgh"},
  {nil, nil, nil},
  {true, false, "xyz"},
  {-0.0, -0.0, 12},
  {"42", "1.5", 3.25},
  {2^53, 1e300, ""},
  {-7.9, 1/3, "abcd\195\169"},
  {" 17 ", 4096, "1234567"},
}

function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("CREATE TEMPORARY TABLE lua_binds (n INTEGER NOT NULL PRIMARY KEY, i BIGINT, d DOUBLE, c VARCHAR(8))")
  ins = con:prepare("INSERT INTO lua_binds (n, i, d, c) VALUES (?, ?, ?, ?)")
  pn, pi, pd, pc = ins:bind_create(T.INT), ins:bind_create(T.BIGINT), ins:bind_create(T.DOUBLE),
                   ins:bind_create(T.VARCHAR, 5)
  ins:bind_param(pn, pi, pd, pc)
  sel = con:prepare("SELECT n FROM lua_binds WHERE n <= ?")
  sn = sel:bind_create(T.INT)
  sel:bind_param(sn)
end

local function row(n)
  return table.concat({con:query_row(string.format(
    "SELECT IFNULL(i, 'NULL'), IFNULL(d, 'NULL'), IFNULL(c, 'NULL') FROM lua_binds WHERE n = %d", n))}, "|")
end

local function insert_dup()
  pn:set(1)
  ins:execute()
end

function event()
  for k, v in ipairs(VALUES) do
    pn:set(2 * k - 1)
    pi:set(v[1])
    pd:set(v[2])
    pc:set(v[3])
    ins:execute()
    local r, e = ins._s:execute(2 * k, v[1], v[2], v[3])
    assert(r == nil and e == nil, "mlua insert " .. k)
  end
  local same = 0
  for k = 1, #VALUES do
    local a, b = row(2 * k - 1), row(2 * k)
    if a == b then same = same + 1 else print(string.format("binds: pair %d differs: %s / %s", k, a, b)) end
    if k == 1 or k == 7 then print(string.format("binds: row %d: %s", k, a)) end
  end
  print(string.format("binds: %d of %d pairs the same", same, #VALUES))
  sn:set(6)
  local rs = sel:execute()
  local n = sel._s:execute(6)
  print(string.format("binds: counted %s and %s", tostring(rs.nrows), tostring(n)))
  local ok, err = pcall(insert_dup)
  print("binds: duplicate: " .. tostring(ok) .. " " .. tostring(err))
  local _, e = ins._s:execute(1, 1, 1, "x")
  print("binds: mlua duplicate errno " .. tostring(e and e.sql_errno))
end
