-- dbrig's sysbench 1.0 API, the Lua half (the Rust half is `lua/api.rs`): the objects scripts
-- see (drivers, connections, statements, bind parameters, result sets), the error values
-- sysbench raises, its report functions and the compat globals. dbrig's own code, written
-- from sysbench's documented behaviour.

local raw = ...

-- An API sysbench has and dbrig does not: one line naming it, at the script's line.
local function unsupported(name)
  error("not supported: " .. name, 3)
end
raw.unsupported = unsupported

-- Unknown names in sysbench's own tables are an error naming them, never a silent nil.
local function strict(t, path)
  return setmetatable(t, {
    __index = function(_, k)
      unsupported(path .. "." .. tostring(k))
    end,
  })
end

-- The hot calls through LuaJIT's FFI (lua/fast.rs): C function pointers the JIT compiles
-- into the trace as plain calls, where an mlua function is a protected call that leaves the
-- trace. Each falls back to the mlua function for what it does not take, so that values,
-- coercions and errors stay what they were. Only states of runs with few clients have them
-- (api.rs install): the others keep the mlua functions.
--
-- LuaJIT's ffi library is opened once per state, when first wanted (by these calls or by the
-- script): a second opening would replace the state's C type table. sysbench declares its
-- counters' enum for scripts (`void sb_counter_inc(int, sb_counter_type)` is theirs to cdef).
local open_ffi = raw.open_ffi
raw.open_ffi = nil
local ffi_lib
local function ffi_library()
  if ffi_lib == nil then
    ffi_lib = open_ffi()
    package.loaded.ffi = nil
    ffi_lib.cdef[[
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR, SB_CNT_RECONNECT,
  SB_CNT_MAX
} sb_counter_type;
]]
  end
  return ffi_lib
end
local ffi = raw.fn_execute and ffi_library()

-- A script's `require("ffi")` (and sysbench's global `ffi`): LuaJIT's library, whose `C`
-- namespace has sysbench's `sb_counter_inc` (counted in the event's tally: SB_CNT_ERROR is an
-- ignored error, as a TPC-C suite's intentional rollback is in sysbench) before the process's
-- own C functions (`usleep`, …).
local counter_inc = raw.counter_inc
local script_ffi
package.preload.ffi = function()
  if script_ffi == nil then
    local lib = ffi_library()
    local own = {
      sb_counter_inc = function(_, counter) counter_inc(tonumber(counter)) end,
    }
    local C = setmetatable({}, {
      __index = function(_, name)
        local f = own[name]
        if f ~= nil then return f end
        return lib.C[name]
      end,
    })
    script_ffi = setmetatable({ C = C }, { __index = lib })
  end
  return script_ffi
end
-- sysbench's own Lua modules leave `ffi` global; here it is made on first use.
setmetatable(_G, {
  __index = function(_, name)
    if name == "ffi" then return require("ffi") end
  end,
})

local rand_string = raw.rand_string
local bind_num, bind_str, bind_null, execute, text_query, text_cell, nf_out, len_out
-- Each statement's address for the FFI calls, where scripts cannot reach it: keyed (weakly)
-- by the statement's userdata, which owns what the address points to, so an address is found
-- only while it is valid. Empty without the FFI.
local stmt_ptr = setmetatable({}, { __mode = "k" })
-- Each connection's address, kept the same way.
local con_ptr = setmetatable({}, { __mode = "k" })

if ffi then
  local ctx = ffi.cast("void *", raw.ctx_ptr)
  local key = ffi.cast("double (*)(void *, int32_t, double, double)", raw.fn_rand_key)
  -- The order of api.rs RAND_KEYS.
  for i, name in ipairs({ "uniform", "default", "gaussian", "special", "pareto", "zipfian" }) do
    local which, slow = i - 1, sysbench.rand[name]
    sysbench.rand[name] = function(a, b)
      if type(a) == "number" and type(b) == "number" then
        local r = key(ctx, which, a, b)
        -- NaN: it panicked in Rust; the mlua function makes it the panic it always was.
        if r == r then return r end
      end
      return slow(a, b)
    end
  end

  -- sysbench.rand.string and param:set_rand_str: the string made in a buffer of this state's.
  local fill = ffi.cast("int32_t (*)(void *, const char *, size_t, uint8_t *)",
                        raw.fn_rand_string)
  local slow = raw.rand_string
  local buf, cap = nil, 0
  rand_string = function(template)
    if type(template) == "string" then
      local n = #template
      if n > cap then
        cap = math.max(n, 256)
        buf = ffi.new("uint8_t[?]", cap)
      end
      if fill(ctx, template, n, buf) == 0 then return ffi.string(buf, n) end
    end
    return slow(template)
  end
  sysbench.rand.string = rand_string

  bind_num = ffi.cast("void (*)(void *, int32_t, double)", raw.fn_bind_num)
  bind_str = ffi.cast("void (*)(void *, int32_t, const char *, size_t)", raw.fn_bind_str)
  bind_null = ffi.cast("void (*)(void *, int32_t)", raw.fn_bind_null)
  execute = ffi.cast("double (*)(void *)", raw.fn_execute)
  text_query = ffi.cast("double (*)(void *, const char *, size_t, int32_t *)", raw.fn_query)
  text_cell = ffi.cast("const char * (*)(void *, int32_t, int32_t, int32_t *)", raw.fn_cell)
  nf_out = ffi.new("int32_t[1]")
  len_out = ffi.new("int32_t[1]")
end

sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }
sysbench.error.sql = sysbench.sql.error
sysbench.sql.type = {
  NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
  TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
}
local T = sysbench.sql.type

-- Raise what a failed statement raises in sysbench: an ignorable error (dbrig's retryable
-- and lost-connection classes: --retry-codes / --mysql-ignore-errors) as the RESTART_EVENT
-- error table, and so a fatal one that the script's sysbench.hooks.sql_error_ignorable(errdesc)
-- downgrades (asked, as sysbench asks, only for errors that are not ignorable already); others
-- as a message. `con` is the script's connection object (errdesc.connection).
local function raise(e, level, con, query)
  local restart = e.restart
  e.restart = nil
  e.connection = con
  if query ~= nil then e.query = query end
  if not restart and type(sysbench.hooks.sql_error_ignorable) == "function" and
     sysbench.hooks.sql_error_ignorable(e) then
    restart = true
    raw.downgraded()
  end
  if restart then
    e.errcode = sysbench.error.RESTART_EVENT
    error(e, level + 1)
  end
  error(string.format("SQL error, errno = %d, state = '%s': %s",
                      e.sql_errno, e.sql_state, e.sql_errmsg), level + 1)
end

-- A method table whose missing names are an error naming them (`path.name`): objects get it
-- as their metatable's __index, so a method is found by plain table lookups.
local function methods(path)
  local t = {}
  t.__index = t
  return strict(t, path)
end

-- A statement's reply: `true` when its first poll left it waiting (api.rs `start`), then
-- awaited here.
local await_pending = raw.await_pending
local function settle(r, e)
  if r == true then return await_pending() end
  return r, e
end

local Result = {}
Result.__index = function(self, k)
  if k == "nrows" then return self._r:nrows() end
  if k == "nfields" then return self._r:nfields() end
  local m = Result[k]
  if m ~= nil then return m end
  unsupported("sql_result." .. tostring(k))
end
function Result:fetch_row() return self._r:fetch_row() end
function Result:free() return true end
Result.__tostring = function() return "<sql_result>" end
-- `n`: the row count when the native call gave it (else `nrows` is asked for when read).
local function result(r, n)
  if r == nil then return nil end
  return setmetatable({ _r = r, nrows = n }, Result)
end

-- A prepared statement's result whose rows dbrig counted only: one object per statement,
-- reused as sysbench reuses its connection's result.
local Counted = methods("sql_result")
function Counted:fetch_row()
  error("not supported: fetch_row() on a prepared statement's result in a script whose text " ..
        "(and the modules it loads at its top level) never names fetch_row: dbrig reads such a " ..
        "statement's rows only to count them", 2)
end
function Counted:free() return true end
Counted.__tostring = function() return "<sql_result>" end

-- A bind parameter: its value stays in Lua until execute() hands every bound value over.
local Param = {}
Param.__index = Param
function Param:set(v) self.value = v end
function Param:set_rand_str(template) self.value = rand_string(template) end
Param.__tostring = function() return "<sql_param>" end

local Stmt = methods("sql_statement")
function Stmt:bind_create(btype, max_len)
  self._s:check_bind(btype, max_len)
  return setmetatable({ type = btype, max_len = max_len or false, value = nil }, Param)
end
function Stmt:bind_param(...)
  local n = select("#", ...)
  if n < 1 then return nil end
  local ps, types, lens = {}, {}, {}
  for i = 1, n do
    local p = select(i, ...)
    ps[i], types[i], lens[i] = p, p.type, p.max_len or 0
  end
  self._s:bind_param(types, lens)
  self._ps, self._n = ps, n
  return 0
end
-- The bound values go to the statement through the FFI, and it runs there when its
-- connection answers within the call (api.rs StmtCore::execute_here); otherwise, and for a
-- value the FFI binds do not take, the mlua method runs it as before.
function Stmt:execute()
  local ps, n = self._ps, self._n
  local p = stmt_ptr[self._s]
  local r
  if p ~= nil then
    for i = 1, n do
      local v = ps[i].value
      local t = type(v)
      if t == "number" then
        bind_num(p, i - 1, v)
      elseif t == "string" then
        bind_str(p, i - 1, v, #v)
      elseif t == "nil" then
        bind_null(p, i - 1)
      elseif t == "boolean" then
        -- What the mlua method makes of a boolean: the integer 1 or 0.
        bind_num(p, i - 1, v and 1 or 0)
      else
        p = nil
        break
      end
    end
  end
  if p ~= nil then
    -- A row count (>= 0), -1 no result, -2 failed, -3 not run here (fast.rs).
    r = execute(p)
    if r >= 0 then
      local rs = self._rs
      rs.nrows = r
      return rs
    end
    if r == -1 then return nil end
    -- Not a statement the FFI runs (its connection does not answer within the call, or its
    -- rows are kept): from now on the mlua method alone, without the binds before it.
    if r == -3 then stmt_ptr[self._s] = nil end
  end
  local e
  if r == -2 then
    e = self._s:failed()
    r = nil
  else
    local vals = self._vals
    for i = 1, n do vals[i] = ps[i].value end
    r, e = settle(self._s:execute(unpack(vals, 1, n)))
  end
  if e then raise(e, 2, self.connection, "<prepared statement>") end
  if r == nil then return nil end
  if type(r) == "number" then
    local rs = self._rs
    rs.nrows = r
    return rs
  end
  return result(r)
end
function Stmt:close() self._s:close() return 0 end
Stmt.__tostring = function() return "<sql_statement>" end

-- A text query's result set whose rows the FFI left in its connection's buffer (fast.rs
-- `query`): its cells are read from there until the connection's next query, which first
-- hands a result with rows still to read its own copy (`_r`, read as `result`'s are).
local buffered = {}
local Buffered = {
  __index = function(_, k)
    local m = buffered[k]
    if m ~= nil then return m end
    unsupported("sql_result." .. tostring(k))
  end,
  __tostring = function() return "<sql_result>" end,
}
function buffered.fetch_row(self)
  local r = self._r
  if r then return r:fetch_row() end
  local i = self._next
  if i >= self.nrows then return nil end
  self._next = i + 1
  local p = con_ptr[self._c]
  local row = {}
  for c = 0, self.nfields - 1 do
    local s = text_cell(p, i, c, len_out)
    if s ~= nil then row[c + 1] = ffi.string(s, len_out[0]) end
  end
  return row
end
function buffered.free() return true end

-- The first row's cells from `c` on (nil for NULL), out of the connection's buffer.
local function cell_of(p, c)
  local s = text_cell(p, 0, c, len_out)
  if s == nil then return nil end
  return ffi.string(s, len_out[0])
end
local function cells_of(p, c, nf)
  if c >= nf - 1 then return cell_of(p, c) end
  return cell_of(p, c), cells_of(p, c + 1, nf)
end

-- A text query through the FFI (on a connection that answers within the call): its row
-- count (>= 0, the rows in the buffer), -1 no result set, or nil when the mlua method runs it
-- (-3 its connection does not answer within the call, from now on; -4 this text). Raises
-- what the mlua method raises for a failed query, at the script's line (level 3: the caller
-- of Con:query / Con:query_row).
local function ffi_query(con, sql)
  local c = con._c
  local p = con_ptr[c]
  if p == nil or type(sql) ~= "string" then return nil end
  local open = con._open
  if open then
    if open._next < open.nrows then open._r = c:detach(open._next) end
    con._open = false
  end
  local n = text_query(p, sql, #sql, nf_out)
  if n >= -1 then return n, p end
  if n == -2 then raise(c:failed(sql), 3, con) end
  if n == -3 then con_ptr[c] = nil end
  return nil
end

local Con = methods("sql_connection")
function Con:query(sql)
  local n, p = ffi_query(self, sql)
  if n ~= nil then
    if n == -1 then return nil end
    local rs = setmetatable({ nrows = n, nfields = nf_out[0], _c = self._c, _next = 0,
                              _r = false }, Buffered)
    if n > 0 then self._open = rs end
    return rs
  end
  local r, e, n = self._c:query(sql)
  if r == true then r, e = await_pending() end
  if e then raise(e, 2, self) end
  return result(r, n)
end
-- The native query_row returns the first row's cells, or `row_other` and what `query`
-- returns (a statement still waiting, no result set, an error). Called in tail position
-- from Con:query_row, so that an error's level counts the same frames as in Con:query.
local row_other = raw.row_other
local function row_of(con, a, ...)
  if a ~= row_other then return a, ... end
  local r, e = settle(...)
  if e then raise(e, 2, con) end
  if r == nil then return nil end
  return r:first_row()
end
function Con:query_row(sql)
  local n, p = ffi_query(self, sql)
  if n ~= nil then
    if n <= 0 then return nil end
    return cells_of(p, 0, nf_out[0])
  end
  return row_of(self, self._c:query_row(sql))
end
function Con:prepare(sql)
  local s, e = self._c:prepare(sql)
  if e then raise(e, 2, self) end
  local rs = setmetatable({ nrows = 0, nfields = 0 }, Counted)
  if ffi then stmt_ptr[s] = ffi.cast("void *", s:ptr()) end
  return setmetatable({ _s = s, connection = self, _ps = {}, _vals = {}, _n = 0, _rs = rs }, Stmt)
end
function Con:bulk_insert_init(sql) local _, e = settle(self._c:bulk_insert_init(sql)) if e then raise(e, 2, self) end return 0 end
function Con:bulk_insert_next(v) local _, e = settle(self._c:bulk_insert_next(v)) if e then raise(e, 2, self) end return 0 end
function Con:bulk_insert_done() local _, e = settle(self._c:bulk_insert_done()) if e then raise(e, 2, self) end return 0 end
function Con:reconnect() local e = self._c:reconnect() if e then raise(e, 2, self) end return true end
function Con:disconnect() self._c:disconnect() return true end
function Con:check_error(rs) return rs end
Con.__tostring = function() return "<sql_connection>" end

local Driver = {}
Driver.__index = function(self, k)
  local m = Driver[k]
  if m ~= nil then return m end
  unsupported("sql_driver." .. tostring(k))
end
function Driver:connect()
  local c, e = raw.connect()
  if e then error("connection creation failed: " .. e.sql_errmsg, 2) end
  if text_query then con_ptr[c] = ffi.cast("void *", c:ptr()) end
  -- `_open`: the FFI result set still reading the connection's buffer (see ffi_query).
  return setmetatable({ _c = c, _open = false }, Con)
end
function Driver:name() return raw.driver_name end
Driver.__tostring = function() return "<sql_driver>" end

function sysbench.sql.driver(name)
  if name ~= nil and name ~= raw.driver_name then
    error("failed to initialize the DB driver: dbrig connects to " .. raw.driver_name ..
          " (--target), not " .. tostring(name), 2)
  end
  return setmetatable({}, Driver)
end

-- Reports in sysbench's three layouts (the figures as sysbench's `stat` table has them).
function sysbench.report_csv(stat)
  local s = stat.time_interval
  print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
    stat.time_total, stat.threads_running, stat.events / s,
    (stat.reads + stat.writes + stat.other) / s, stat.reads / s, stat.writes / s,
    stat.other / s, stat.latency_pct * 1000, stat.errors / s, stat.reconnects / s))
end

local json_open = false
function sysbench.report_json(stat)
  local s = stat.time_interval
  io.write(json_open and ",\n" or "[\n")
  json_open = true
  io.write(string.format('  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n' ..
    '    "qps": {\n      "total": %4.2f,\n      "reads": %4.2f,\n      "writes": %4.2f,\n' ..
    '      "other": %4.2f\n    },\n    "latency": %4.2f,\n    "errors": %4.2f,\n' ..
    '    "reconnects": %4.2f\n  }',
    stat.time_total, stat.threads_running, stat.events / s,
    (stat.reads + stat.writes + stat.other) / s, stat.reads / s, stat.writes / s,
    stat.other / s, stat.latency_pct * 1000, stat.errors / s, stat.reconnects / s))
end
function raw.report_json_close() if json_open then io.write("\n]\n") end end

function sysbench.report_default(stat)
  local s = stat.time_interval
  print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
    "lat (ms,%u%%): %4.2f err/s %4.2f reconn/s: %4.2f",
    stat.time_total, stat.threads_running, stat.events / s,
    (stat.reads + stat.writes + stat.other) / s, stat.reads / s, stat.writes / s,
    stat.other / s, sysbench.opt.percentile, stat.latency_pct * 1000,
    stat.errors / s, stat.reconnects / s))
end

-- sysbench 0.5's names, which sysbench 1.0 keeps.
sb_rand = sysbench.rand.default
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
sb_rand_str = sysbench.rand.string
sb_rand_varstr = sysbench.rand.varstring
sb_rand_uniq = sysbench.rand.unique
sb_rnd = function() return sysbench.rand.uniform_uint64() end

-- One event as sysbench's thread loop runs it: a RESTART_EVENT error calls the
-- before_restart_event hook and asks the runner to restart the event (1); any other error
-- propagates. Returns 2 when event() returned a true value (the script asks to stop).
function raw.run_event(tid)
  local ok, ret = pcall(event, tid)
  if ok then
    if ret then return 2 end
    return 0
  end
  if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
    if sysbench.hooks.before_restart_event then
      sysbench.hooks.before_restart_event(ret)
    end
    return 1
  end
  error(ret, 0)
end

-- A client's events, one coroutine for all of them: each event's code (as run_event returns
-- it) is yielded to the runner, which resumes the coroutine for the next event. A new
-- coroutine per event would cost more than a point select.
function raw.event_loop(tid)
  while true do
    coroutine.yield(raw.run_event(tid))
  end
end

strict(sysbench.rand, "sysbench.rand")
strict(sysbench.sql, "sysbench.sql")

