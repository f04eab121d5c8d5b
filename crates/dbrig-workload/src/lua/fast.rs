//! The calls a script's events make most, through LuaJIT's FFI instead of mlua callbacks: the
//! keys and strings of `sysbench.rand`, binding and executing a prepared statement, and a
//! connection's text queries with their cells (`con:query()`, `con:query_row()`,
//! `rs:fetch_row()`, as sysbench makes them through its FFI too). An
//! mlua callback costs a protected call, its argument conversions and LuaJIT leaving its
//! compiled trace; an FFI call through a C function pointer is compiled into the trace as a
//! plain call (sysbench itself makes these calls through the FFI).
//!
//! The Lua half (`prelude.lua`) casts the function pointers handed over here to C function
//! types and calls them with a pointer to the state's [`Ctx`], to a statement's
//! [`StmtCore`] or to a connection's [`ConCore`]. Whatever these functions cannot do (arguments of other types, a statement
//! that does not complete within the call, an error to raise) goes to the mlua functions as
//! before, so both ways give the same values, counts and errors. Only states of runs with few
//! enough clients for a thread each get these calls (`api::install` says why).
//!
//! The same states get LuaJIT's own allocator ([`LuaState`]), as sysbench's states have.
//!
//! This is the one module of the workspace with `unsafe` code: making and closing such a
//! state, loading LuaJIT's `ffi` library and turning the pointers the Lua half passes back into
//! references.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mlua::{LightUserData, Lua, StdLib, Table};

use super::api::{Arg, ConCore, Ctx, Failure, Here, StmtCore};

/// `execute`'s answers other than a row count (which is >= 0).
const EXEC_NO_RESULT: f64 = -1.0;
const EXEC_FAILED: f64 = -2.0;
const EXEC_ELSEWHERE: f64 = -3.0;
/// `query`'s answer for text the mlua method refuses (it says why).
const QUERY_NOT_UTF8: f64 = -4.0;

/// A Lua state and, when it was made here, the raw state to close after the handle is gone.
///
/// mlua's own states (`Lua::new`) allocate through Rust's allocator, a callback per block;
/// LuaJIT's `luaL_newstate` (sysbench's way) gives the state LuaJIT's allocator, which serves
/// the strings and tables an event makes without leaving LuaJIT. That allocator maps its
/// memory in segments of its own per state, so only states of runs with few clients get it
/// (those with the FFI calls: [`install`]); the others keep mlua's, whose blocks come from
/// the process's shared heap.
pub(crate) struct LuaState {
    lua: std::mem::ManuallyDrop<Lua>,
    /// The state made by `luaL_newstate`, closed on drop; `None`: mlua's own, closed by mlua.
    raw: Option<std::ptr::NonNull<mlua::ffi::lua_State>>,
}

// SAFETY: the raw pointer is used only to close the state in `drop`, after the last handle
// this value holds is gone; everything else goes through the `Lua` handle, which is `Send`
// and `Sync` itself (mlua's `send` feature).
unsafe impl Send for LuaState {}
// SAFETY: as above: `&LuaState` gives access to nothing but the `Lua` handle.
unsafe impl Sync for LuaState {}

impl std::ops::Deref for LuaState {
    type Target = Lua;
    fn deref(&self) -> &Lua {
        &self.lua
    }
}

impl Drop for LuaState {
    fn drop(&mut self) {
        // SAFETY: the handle is dropped once, here. A state made by `luaL_newstate` is then
        // closed as a host closes the state of an mlua module: mlua's data lives in the
        // state's registry and goes with it (the last handle it keeps included), and every
        // other value of mlua's refers to the state weakly. The owners of such values
        // (`LuaClient`, `Reporter`) declare the state last, so they are dropped first.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.lua);
            if let Some(raw) = self.raw {
                mlua::ffi::lua_close(raw.as_ptr());
            }
        }
    }
}

/// A state with the standard libraries mlua's `Lua::new` loads, and with C modules turned
/// off as it turns them off: with LuaJIT's allocator when `own_allocator`, else mlua's own.
pub(super) fn new_lua(own_allocator: bool) -> mlua::Result<LuaState> {
    if !own_allocator {
        return Ok(LuaState {
            lua: std::mem::ManuallyDrop::new(Lua::new()),
            raw: None,
        });
    }
    // SAFETY: `luaL_newstate` returns a new state or NULL (no memory). The base library is
    // opened as mlua opens it in its own states, before mlua wraps the state; the handle
    // `get_or_init_from_ptr` returns is cloned at once into one this value owns, which lives
    // no longer than the state (see `Drop`).
    let (raw, lua) = unsafe {
        let raw = std::ptr::NonNull::new(mlua::ffi::luaL_newstate())
            .ok_or(mlua::Error::MemoryError("no memory for a Lua state".into()))?;
        mlua::ffi::luaL_requiref(raw.as_ptr(), c"_G".as_ptr(), mlua::ffi::luaopen_base, 1);
        mlua::ffi::lua_pop(raw.as_ptr(), 1);
        (raw, Lua::get_or_init_from_ptr(raw.as_ptr()).clone())
    };
    let state = LuaState {
        lua: std::mem::ManuallyDrop::new(lua),
        raw: Some(raw),
    };
    state.load_std_libs(StdLib::ALL_SAFE)?;
    // What `Lua::new` does to `package` (mlua's `disable_c_modules`): no C library is loaded.
    let package: Table = state.globals().get("package")?;
    package.set(
        "loadlib",
        state.create_function(|_, ()| -> mlua::Result<()> {
            Err(mlua::Error::SafetyError(
                "package.loadlib is disabled in safe mode".to_string(),
            ))
        })?,
    )?;
    let loaders: Table = package.get("loaders")?;
    loaders.raw_set(
        3,
        state.create_function(|_, ()| Ok("\n\tcan't load C modules in safe mode"))?,
    )?;
    if loaders.raw_len() >= 4 {
        loaders.raw_remove(4)?;
    }
    Ok(state)
}

/// Hand LuaJIT's `ffi` library loader to the prelude (`raw.open_ffi`), in every state: the
/// prelude opens the library once per state, for its own calls below and for a script's
/// `require("ffi")` (sysbench's scripts have LuaJIT's `ffi`; TPC-C suites `ffi.cdef` and call
/// `usleep` and `sb_counter_inc` through it).
pub(super) fn ffi_loader(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    // SAFETY: `luaopen_ffi` is LuaJIT's own loader of its `ffi` library, a `lua_CFunction`.
    // It is unsafe in what the library allows Lua code to do, which is what sysbench gives
    // its scripts too: a script that uses `ffi` can do what C can, in dbrig as in sysbench.
    // The prelude calls it at most once per state (a second call would replace the state's C
    // type table under the cdata made with the first).
    let open = unsafe { lua.create_c_function(mlua::ffi::luaopen_ffi)? };
    raw.set("open_ffi", open)?;
    Ok(())
}

/// Hand the FFI half of the API to the prelude (in `raw`): the state's context and the
/// functions' addresses.
pub(super) fn install(lua: &Lua, raw: &Table, ctx: &Arc<Ctx>) -> mlua::Result<()> {
    // The state keeps the context alive as long as it lives: the pointer the Lua half passes
    // to `rand_key` and `rand_string` stays valid for every call it can make.
    lua.set_app_data(Arc::clone(ctx));
    raw.set("ctx_ptr", ptr(Arc::as_ptr(ctx)))?;
    raw.set("fn_rand_key", fn_ptr(rand_key as *const ()))?;
    raw.set("fn_rand_string", fn_ptr(rand_string as *const ()))?;
    raw.set("fn_bind_num", fn_ptr(bind_num as *const ()))?;
    raw.set("fn_bind_str", fn_ptr(bind_str as *const ()))?;
    raw.set("fn_bind_null", fn_ptr(bind_null as *const ()))?;
    raw.set("fn_execute", fn_ptr(execute as *const ()))?;
    raw.set("fn_query", fn_ptr(query as *const ()))?;
    raw.set("fn_cell", fn_ptr(cell as *const ()))?;
    Ok(())
}

fn ptr<T>(p: *const T) -> LightUserData {
    LightUserData(p.cast_mut().cast::<c_void>())
}

fn fn_ptr(f: *const ()) -> LightUserData {
    LightUserData(f.cast_mut().cast::<c_void>())
}

/// `sysbench.rand.NAME(a, b)` for the NAME at `which` in `api::RAND_KEYS`; NaN when it
/// panicked (the Lua half then calls the mlua function, which panics as it always did).
/// C type: `double (*)(void *, int32_t, double, double)`.
extern "C" fn rand_key(ctx: *const Ctx, which: i32, a: f64, b: f64) -> f64 {
    // SAFETY: `ctx` is the state's `ctx_ptr`: the state's app data holds an `Arc` of it for
    // as long as the state lives, and only the prelude's functions call with it (scripts
    // cannot reach the pointer, nor these functions: a script's `ffi` can do what C can, as in
    // sysbench, but it is never handed them). Only shared references are made; the
    // random numbers are behind their mutex.
    let ctx = unsafe { &*ctx };
    catch_unwind(AssertUnwindSafe(|| {
        let which = usize::try_from(which).unwrap_or(usize::MAX);
        ctx.rand.lock().expect("rand").key(which, a, b)
    }))
    .unwrap_or(f64::NAN)
}

/// `sysbench.rand.string(template)` into `out` (`len` bytes, the template's length, as is the
/// string's): 0, or -1 when the template is not UTF-8 or it panicked (the mlua function then
/// does what it always did: refuse the template, or panic).
/// C type: `int32_t (*)(void *, const char *, size_t, uint8_t *)`.
extern "C" fn rand_string(ctx: *const Ctx, template: *const u8, len: usize, out: *mut u8) -> i32 {
    // SAFETY: `ctx` as in `rand_key`. `template` is a Lua string of `len` bytes, alive for
    // the call (the caller holds it); `out` is the caller's buffer of at least `len` bytes,
    // which nothing else touches during the call. The two never overlap (a Lua string is
    // immutable, the buffer an FFI array).
    let (ctx, template, out) = unsafe {
        (
            &*ctx,
            std::slice::from_raw_parts(template, len),
            std::slice::from_raw_parts_mut(out, len),
        )
    };
    if std::str::from_utf8(template).is_err() {
        return -1;
    }
    catch_unwind(AssertUnwindSafe(|| {
        out.copy_from_slice(template);
        ctx.rand.lock().expect("rand").fill_string(out);
    }))
    .map_or(-1, |()| 0)
}

/// Bind parameter `i` (from 0) to `arg` for the statement's next FFI execute.
fn bind(stmt: *const StmtCore, i: i32, arg: Arg<'_>) {
    // SAFETY: `stmt` is a statement's `ptr()`, the address of the `StmtCore` its userdata
    // owns (boxed: it does not move). The Lua half keeps it in a table scripts cannot reach,
    // keyed weakly by that userdata, and calls with it only after finding it there: the
    // userdata, and so the `StmtCore`, is alive. Only shared references are made.
    let stmt = unsafe { &*stmt };
    // A panic here (none is known) happens with the lock held: it poisons the mutex, and the
    // execute that follows reports it.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let mut bound = stmt.bound.lock().expect("bound");
        let bound = &mut *bound;
        let Ok(i) = usize::try_from(i) else { return };
        if let (Some(b), Some(v)) = (bound.binds.get(i), bound.values.get_mut(i)) {
            *v = b.convert(arg);
        }
    }));
}

/// `param:set(n)`'s value, a number. C type: `void (*)(void *, int32_t, double)`.
extern "C" fn bind_num(stmt: *const StmtCore, i: i32, n: f64) {
    bind(stmt, i, Arg::number(n));
}

/// A string value of `len` bytes. C type: `void (*)(void *, int32_t, const char *, size_t)`.
extern "C" fn bind_str(stmt: *const StmtCore, i: i32, s: *const u8, len: usize) {
    // SAFETY: `s` is a Lua string of `len` bytes the caller holds for the call.
    let s = unsafe { std::slice::from_raw_parts(s, len) };
    bind(stmt, i, Arg::String(s));
}

/// nil. C type: `void (*)(void *, int32_t)`.
extern "C" fn bind_null(stmt: *const StmtCore, i: i32) {
    bind(stmt, i, Arg::Nil);
}

/// Execute with the bound values: the row count of a statement that returned rows, else
/// `EXEC_NO_RESULT`, `EXEC_FAILED` (the `failed` method has the error) or `EXEC_ELSEWHERE`
/// (the mlua method runs it). C type: `double (*)(void *)`.
extern "C" fn execute(stmt: *const StmtCore) -> f64 {
    // SAFETY: as in `bind`.
    let stmt = unsafe { &*stmt };
    match catch_unwind(AssertUnwindSafe(|| stmt.execute_here())) {
        // The count as mlua returned it (a Lua number).
        Ok(Here::Ran(Some(n))) => n as f64,
        Ok(Here::Ran(None)) => EXEC_NO_RESULT,
        Ok(Here::Failed) => EXEC_FAILED,
        Ok(Here::Elsewhere) => EXEC_ELSEWHERE,
        Err(p) => {
            if let Ok(mut f) = stmt.failed.lock() {
                *f = Some(Failure::Panic(p));
            }
            EXEC_FAILED
        }
    }
}

/// `con:query(sql)` (and `query_row`) of `len` bytes: the row count of a result set (its rows
/// kept in the connection's buffer, their cell count in `nfields`), else `EXEC_NO_RESULT`,
/// `EXEC_FAILED` (the `failed` method has the error), `EXEC_ELSEWHERE` (the mlua method runs
/// it, and the connection's later queries: it does not answer within the call) or
/// `QUERY_NOT_UTF8` (the mlua method refuses this text). C type:
/// `double (*)(void *, const char *, size_t, int32_t *)`.
extern "C" fn query(con: *const ConCore, sql: *const u8, len: usize, nfields: *mut i32) -> f64 {
    // SAFETY: `con` is a connection's `ptr()`, the address of the `ConCore` its userdata owns
    // (boxed: it does not move); the Lua half keeps it as it keeps a statement's (see
    // `bind`), so the userdata, and the `ConCore`, is alive. `sql` is a Lua string of `len`
    // bytes the caller holds for the call; `nfields` points to the caller's `int32_t`.
    let (con, sql) = unsafe { (&*con, std::slice::from_raw_parts(sql, len)) };
    let Ok(sql) = std::str::from_utf8(sql) else {
        return QUERY_NOT_UTF8;
    };
    match catch_unwind(AssertUnwindSafe(|| con.query_here(sql))) {
        Ok(Here::Ran(Some(n))) => {
            let n_fields = con.rows.lock().map_or(0, |r| r.nfields);
            // SAFETY: as above.
            unsafe { *nfields = i32::try_from(n_fields).unwrap_or(i32::MAX) };
            n as f64
        }
        Ok(Here::Ran(None)) => EXEC_NO_RESULT,
        Ok(Here::Failed) => EXEC_FAILED,
        Ok(Here::Elsewhere) => EXEC_ELSEWHERE,
        Err(p) => {
            if let Ok(mut f) = con.failed.lock() {
                *f = Some(Failure::Panic(p));
            }
            EXEC_FAILED
        }
    }
}

/// Cell `col` of row `row` (both from 0) of the connection's last FFI result set: its bytes'
/// address, their count in `len`; NULL for a NULL cell (or one out of range). The bytes stay
/// where they are until the connection's next FFI query, which the caller does not start
/// before it has copied them (`ffi.string`). C type:
/// `const char * (*)(void *, int32_t, int32_t, int32_t *)`.
extern "C" fn cell(con: *const ConCore, row: i32, col: i32, len: *mut i32) -> *const u8 {
    // SAFETY: `con` as in `query`; `len` points to the caller's `int32_t`.
    let con = unsafe { &*con };
    let Ok(rows) = con.rows.lock() else {
        return std::ptr::null();
    };
    let (Ok(row), Ok(col)) = (usize::try_from(row), usize::try_from(col)) else {
        return std::ptr::null();
    };
    if col >= rows.nfields {
        return std::ptr::null();
    }
    let bytes = match rows.cells.get(row * rows.nfields + col) {
        Some(Some(r)) => rows.data.get(r.clone()),
        _ => None,
    };
    // A cell is shorter than a packet (16 MiB) or a PostgreSQL message (1 GiB).
    match bytes.and_then(|b| Some((b, i32::try_from(b.len()).ok()?))) {
        Some((b, n)) => {
            // SAFETY: as above.
            unsafe { *len = n };
            // Never NULL, an empty cell's too (a slice's address is not).
            b.as_ptr()
        }
        None => std::ptr::null(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use dbrig_core::{KeyDistribution, KeyGenerator};
    use dbrig_driver::ConnectOptions;
    use mlua::Value as LuaValue;
    use rand::Rng;

    use super::super::api::{self, Arg, Ctx};
    use super::super::{Script, mock_target};
    use super::LuaState;
    use crate::options::RunOptions;

    fn state(seed: u64) -> LuaState {
        state_of(seed, 1)
    }

    /// A state of a run of `threads` clients.
    fn state_of(seed: u64, threads: u32) -> LuaState {
        let script = Script {
            path: PathBuf::from("test.lua"),
            source: String::new(),
            declared: Vec::new(),
            values: Vec::new(),
            prepared_rows: false,
            commands: Vec::new(),
        };
        let run = RunOptions::default();
        let rand = api::Rand::new(
            KeyGenerator::new(KeyDistribution::Uniform, seed),
            seed,
            &run,
        );
        let ctx = Ctx::new(mock_target(), ConnectOptions::default(), None, rand);
        api::new_state(&script, &ctx, 0, threads, "run", &run).expect("a state")
    }

    /// 300 rounds (enough for LuaJIT to compile the loop, FFI calls and all) of every key
    /// function and a string, with the bounds given as `a` and `b`.
    fn draws(lua: &mlua::Lua, a: LuaValue, b: LuaValue) -> Vec<String> {
        lua.load(
            r##"
            local a, b = ...
            local out = {}
            for _ = 1, 300 do
              for _, f in ipairs({"uniform", "default", "gaussian", "special", "pareto", "zipfian"}) do
                out[#out + 1] = tostring(sysbench.rand[f](a, b))
              end
              out[#out + 1] = sysbench.rand.string("#@-é#")
            end
            return out
            "##,
        )
        .call((a, b))
        .expect("draws")
    }

    #[test]
    fn lua_rand_through_the_ffi_draws_what_mlua_and_the_generators_draw() {
        let ffi = draws(&state(42), LuaValue::Number(1.0), LuaValue::Number(1000.0));
        // Strings coercible to numbers are not the FFI's: the mlua functions take them.
        let lua = state(42);
        let (a, b) = (
            lua.create_string("1").unwrap(),
            lua.create_string("1000").unwrap(),
        );
        let mlua = draws(&lua, LuaValue::String(a), LuaValue::String(b));
        assert_eq!(ffi, mlua);
        // A run with more clients than get a thread each has no FFI calls: the same draws.
        let many = state_of(42, crate::runner::OWN_THREAD_CLIENTS + 1);
        let no_ffi = draws(&many, LuaValue::Number(1.0), LuaValue::Number(1000.0));
        assert_eq!(ffi, no_ffi);
        // (There `sysbench.rand.uniform` is the mlua function: a C function, which
        // string.dump refuses.)
        let is_lua = |lua: &mlua::Lua| -> bool {
            lua.load("return (pcall(string.dump, sysbench.rand.uniform))")
                .eval()
                .unwrap()
        };
        assert!(is_lua(&state(42)) && !is_lua(&many));
        // The uniform, default key and string draws as the code before the FFI made them: one
        // generator, strings char by char.
        let mut g = KeyGenerator::new(KeyDistribution::Uniform, 42);
        let ffi_uniform: Vec<&String> = ffi.iter().step_by(7).collect();
        let ffi_default: Vec<&String> = ffi.iter().skip(1).step_by(7).collect();
        let ffi_string: Vec<&String> = ffi.iter().skip(6).step_by(7).collect();
        assert_eq!(ffi_string.len(), 300);
        // Only the default generator's draws can be replayed alone: the named ones have
        // generators of their own, so they do not disturb it.
        for i in 0..300 {
            assert_eq!(
                *ffi_uniform[i],
                g.uniform(1, 1000).to_string(),
                "uniform {i}"
            );
            assert_eq!(*ffi_default[i], g.key(1, 1000).to_string(), "default {i}");
            let rng = g.rng();
            let s: String = "#@-é#"
                .chars()
                .map(|c| match c {
                    '#' => char::from(b'0' + rng.random_range(0..10u8)),
                    '@' => char::from(b'a' + rng.random_range(0..26u8)),
                    c => c,
                })
                .collect();
            assert_eq!(*ffi_string[i], s, "string {i}");
        }
    }

    /// A state of LuaJIT's allocator has the libraries, and the refusals of C modules, that
    /// mlua's own has; it is closed with the values it made still held (dropped after it).
    #[test]
    fn lua_states_of_either_allocator_have_the_same_libraries() {
        let list = |lua: &mlua::Lua| -> String {
            lua.load(
                r#"
                local names = {}
                for k, v in pairs(_G) do names[#names + 1] = k .. ":" .. type(v) end
                for _, lib in ipairs({"string", "table", "math", "io", "os", "package", "bit",
                                      "jit", "coroutine"}) do
                  for k, v in pairs(_G[lib]) do
                    names[#names + 1] = lib .. "." .. k .. ":" .. type(v)
                  end
                end
                table.sort(names)
                local ok, e = pcall(package.loadlib, "x", "y")
                names[#names + 1] = tostring(ok) .. " " .. tostring(e):match("^[^\n]*")
                names[#names + 1] = #package.loaders .. " " .. package.loaders[3]("x")
                return table.concat(names, " ")
                "#,
            )
            .eval()
            .expect("a listing")
        };
        let (own, theirs) = (
            super::new_lua(true).unwrap(),
            super::new_lua(false).unwrap(),
        );
        assert!(own.raw.is_some() && theirs.raw.is_none());
        let listed = list(&own);
        assert_eq!(listed, list(&theirs));
        assert!(listed.contains("string.format:function"), "{listed}");
        assert!(listed.contains("disabled in safe mode"), "{listed}");
        assert!(!listed.contains("debug"), "{listed}");
        // Values of the state outlive it: dropping them after it closes touches nothing.
        let f: mlua::Function = own.load("return function() return 1 end").eval().unwrap();
        let t = own.create_table().unwrap();
        drop(own);
        drop((f, t));
    }

    #[test]
    fn lua_rand_errors_stay_mlua_errors() {
        let lua = state(1);
        let e = lua
            .load("return sysbench.rand.uniform(1)")
            .exec()
            .expect_err("a missing bound");
        assert!(e.to_string().contains("nil"), "{e}");
        let e = lua
            .load("return sysbench.rand.string(nil)")
            .exec()
            .expect_err("no template");
        assert!(e.to_string().contains("nil"), "{e}");
        // Scripts have LuaJIT's ffi (sysbench's scripts do): the process's C functions and
        // sysbench's counter enum, one library for `require` and the global `ffi`, in a state
        // that runs the prelude's FFI calls and in one that does not.
        for lua in [state(1), state_of(1, crate::runner::OWN_THREAD_CLIENTS + 1)] {
            let n: f64 = lua
                .load(
                    "local f = require('ffi'); f.cdef('int abs(int);'); \
                     assert(rawequal(f, ffi)); return f.C.abs(-3) + f.C.SB_CNT_ERROR",
                )
                .eval()
                .expect("ffi");
            assert_eq!(n, 7.0);
        }
    }

    #[test]
    fn lua_numbers_bind_as_mlua_reads_them() {
        let lua = mlua::Lua::new();
        let back: mlua::Function = lua.load("return function(x) return x end").eval().unwrap();
        for n in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1.5,
            -7.9,
            2f64.powi(53),
            2f64.powi(63),
            -(2f64.powi(63)),
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            let v: LuaValue = back.call(n).unwrap();
            match (v, Arg::number(n)) {
                (LuaValue::Integer(a), Arg::Integer(b)) => assert_eq!(a, b, "{n}"),
                (LuaValue::Number(a), Arg::Number(b)) => {
                    assert!(
                        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                        "{n}"
                    )
                }
                (v, _) => panic!("{n}: mlua reads {v:?}, the FFI bind another kind"),
            }
        }
    }
}
