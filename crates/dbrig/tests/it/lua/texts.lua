-- Text queries both ways dbrig runs them (tests/it/lua.rs): `con:query()`, `con:query_row()`
-- and `rs:fetch_row()`, which a client that owns its thread runs through LuaJIT's FFI
-- (lua/fast.rs, the rows read from the connection's buffer), and the mlua methods they replace
-- (`con._c:query(sql)`, `con._c:query_row(sql)`, called here directly). The rows, NULLs, empty
-- strings, row counts and errors must be the same; a result still being read when the next
-- query starts keeps its rows. One event, one client.

local function show(v)
  if v == nil then return "nil" end
  return "[" .. tostring(v) .. "]"
end

-- A result set's rows as one line.
local function rows_of(rs)
  if rs == nil then return "no result" end
  local out = { "n=" .. tostring(rs.nrows) .. " f=" .. tostring(rs.nfields) }
  while true do
    local row = rs:fetch_row()
    if row == nil then break end
    local cells = {}
    for i = 1, rs.nfields do cells[i] = show(row[i]) end
    out[#out + 1] = table.concat(cells, ",")
  end
  return table.concat(out, " ")
end

-- The same through the mlua method (its result is the native object).
local function mlua_rows(sql)
  local r, e, n = con._c:query(sql)
  if e then return "error " .. tostring(e.sql_errno) .. " " .. tostring(e.sql_state) end
  if r == nil then return "no result" end
  local out = { "n=" .. tostring(n or r:nrows()) .. " f=" .. tostring(r:nfields()) }
  while true do
    local row = r:fetch_row()
    if row == nil then break end
    local cells = {}
    for i = 1, r:nfields() do cells[i] = show(row[i]) end
    out[#out + 1] = table.concat(cells, ",")
  end
  return table.concat(out, " ")
end

local function cells(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do out[i] = show((select(i, ...))) end
  return n .. ":" .. table.concat(out, ",")
end

local function ffi_row(sql) return cells(con:query_row(sql)) end
-- The native query_row's answers: the first row's cells, or `raw.row_other` (a light userdata)
-- then what `query` returns.
local function mlua_cells(a, ...)
  if type(a) == "userdata" then
    local r, e = ...
    if e then return "error " .. tostring(e.sql_errno) end
    if r == nil then return cells(nil) end
    return cells(r:first_row())
  end
  return cells(a, ...)
end
local function mlua_row(sql) return mlua_cells(con._c:query_row(sql)) end

local function errors_of(f, sql)
  local ok, err = pcall(f, sql)
  if ok then return "no error" end
  if type(err) == "table" then return "table " .. tostring(err.sql_errno) end
  return tostring(err)
end

function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("CREATE TEMPORARY TABLE lua_texts (n INTEGER NOT NULL PRIMARY KEY, s VARCHAR(8), t VARCHAR(8))")
end

local QUERIES = {
  "SELECT n, s, t FROM lua_texts ORDER BY n",
  "SELECT n, s, t FROM lua_texts WHERE n > 100",
  "SELECT s FROM lua_texts WHERE n = 2",
  "SELECT COUNT(*), SUM(n), MIN(s) FROM lua_texts",
  "  (SELECT 'a', '' , NULL)",
  "UPDATE lua_texts SET t = t WHERE n = 1",
}

function event()
  con:query("INSERT INTO lua_texts VALUES (1, 'one', NULL), (2, '', 'x'), (3, NULL, NULL), (4, 'four', 'élan')")
  local same, first = 0, 0
  for k, sql in ipairs(QUERIES) do
    local a, b = rows_of(con:query(sql)), mlua_rows(sql)
    if a == b then same = same + 1 else print(string.format("texts: query %d differs: %s / %s", k, a, b)) end
    local c, d = ffi_row(sql), mlua_row(sql)
    if c == d then first = first + 1 else print(string.format("texts: row %d differs: %s / %s", k, c, d)) end
  end
  print(string.format("texts: %d of %d results the same", same, #QUERIES))
  print(string.format("texts: %d of %d first rows the same", first, #QUERIES))
  print("texts: all rows " .. rows_of(con:query(QUERIES[1])))
  print("texts: first row " .. ffi_row(QUERIES[1]))
  print("texts: no row " .. ffi_row(QUERIES[2]))
  -- A result read in part, then other queries (a query_row, a query whose result is read, a
  -- statement without a result): the rest of its rows are still its own.
  local held = con:query(QUERIES[1])
  local r1 = held:fetch_row()
  local mid = ffi_row("SELECT 'mid', n FROM lua_texts WHERE n = 4")
  local other = rows_of(con:query("SELECT n FROM lua_texts WHERE n < 3 ORDER BY n DESC"))
  con:query("UPDATE lua_texts SET s = s WHERE n = 1")
  local rest = {}
  while true do
    local row = held:fetch_row()
    if row == nil then break end
    rest[#rest + 1] = tostring(row[1]) .. show(row[2])
  end
  print(string.format("texts: held %s then %s; %s; %s; rest %s", r1[1], show(r1[2]), mid, other,
    table.concat(rest, " ")))
  print("texts: unknown field " .. errors_of(function() return held.nope end))
  print("texts: tostring " .. tostring(held))
  -- Errors: the same message at the script's line, both ways.
  -- (Not tail calls: the error's line is the caller's.)
  print("texts: query error " .. errors_of(function(s) local r = con:query(s) return r end,
    "SELECT nope FROM lua_texts"))
  print("texts: row error " .. errors_of(function(s) local r = con:query_row(s) return r end,
    "SELECT nope FROM lua_texts"))
  print("texts: mlua error " .. mlua_rows("SELECT nope FROM lua_texts"))
  local bad = "SELECT '\255'"
  -- (Their first lines: the tracebacks differ.)
  local e1 = errors_of(function(s) return con:query(s) end, bad):match("^[^\n]*")
  local e2 = errors_of(function(s) return con._c:query(s) end, bad):match("^[^\n]*")
  print("texts: not utf-8 the same: " .. tostring(e1 == e2) .. " " .. e1)
  con:query("DELETE FROM lua_texts")
end
