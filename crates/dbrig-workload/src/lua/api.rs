//! The Rust half of dbrig's sysbench 1.0 API: a Lua state per client with `sysbench.*`
//! (options, random numbers, the SQL objects' native methods over dbrig's drivers); the
//! objects scripts see and the error values they raise are built in `prelude.lua`.

use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_core::{ErrorClass, EventTally, KeyDistribution, KeyGenerator, StatementClass, Value};
use dbrig_driver::{ConnectOptions, Connection, Dialect, DriverError, Statement, Target};
use mlua::{Function, Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use rand::Rng;

use super::fast::LuaState;
use super::{SYSBENCH_DIRS, SYSBENCH_VERSION, Script};
use crate::options::RunOptions;
use crate::sysbench_bulk::BulkInsert;

const PRELUDE: &str = include_str!("prelude.lua");

/// The connection a script's `con` stands for, out of its slot while a statement runs. Boxed:
/// a statement takes it out and puts it back, and the runner lends its connection for every
/// event; moving a pointer instead of the whole `Connection` (about a kilobyte) was a tenth of
/// the client's instructions per point select.
pub type Slot = Mutex<Option<Box<Connection>>>;

/// sysbench's option types (`sysbench.cmdline.ARG_*`), as far as values are converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    Bool,
    Number,
    String,
    List,
}

/// Why a script's state could not be made, or what it declares not read.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The script's error (or the API's under it) as one line: the message with its script
    /// line, without the traceback.
    #[error("{}", super::one_line(.0))]
    Lua(#[from] mlua::Error),
    #[error("sysbench.cmdline.options: each entry is NAME = {{description, default}}")]
    OptionEntry,
}

/// A value given to a script's option that its declared type does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionValueError {
    #[error("'{0}' is not on or off")]
    NotOnOff(String),
    #[error("'{0}' is not a number")]
    NotANumber(String),
}

/// An option a script declares in `sysbench.cmdline.options`.
#[derive(Debug, Clone)]
pub struct Declared {
    pub name: String,
    pub description: String,
    pub default: Option<String>,
    pub kind: OptKind,
}

/// One state's random numbers: the run's key distribution for `sysbench.rand.default`, and
/// the named distributions, each a generator of dbrig's seeded from the client's seed.
pub struct Rand {
    default: KeyGenerator,
    named: Vec<(&'static str, KeyGenerator)>,
    seed: u64,
    run: RunOptions,
}

impl Rand {
    pub fn new(default: KeyGenerator, seed: u64, run: &RunOptions) -> Self {
        Self {
            default,
            named: Vec::new(),
            seed,
            run: run.clone(),
        }
    }

    fn named(&mut self, name: &'static str) -> &mut KeyGenerator {
        if let Some(i) = self.named.iter().position(|(n, _)| *n == name) {
            return &mut self.named[i].1;
        }
        let r = &self.run;
        let dist = match name {
            "gaussian" => KeyDistribution::Gaussian {
                iter: r.rand_spec_iter,
            },
            "special" => KeyDistribution::Special {
                iter: r.rand_spec_iter,
                pct: r.rand_spec_pct,
                res: r.rand_spec_res,
            },
            "pareto" => KeyDistribution::Pareto { h: r.rand_pareto_h },
            "zipfian" => KeyDistribution::Zipfian {
                exp: r.rand_zipfian_exp,
            },
            _ => KeyDistribution::Uniform,
        };
        let seed = self.seed ^ (self.named.len() as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        self.named.push((name, KeyGenerator::new(dist, seed)));
        &mut self.named.last_mut().expect("pushed").1
    }

    /// `sysbench.rand.NAME(a, b)` for the NAME at `which` in [`RAND_KEYS`], as the Lua
    /// number it returns. Both ways in use it (the mlua function and the FFI call of
    /// `fast.rs`), so they draw the same numbers.
    pub(super) fn key(&mut self, which: usize, a: f64, b: f64) -> f64 {
        let (a, b) = (a as i64, b as i64);
        let k = match which {
            0 => self.default.uniform(a, b),
            1 => self.default.key(a, b),
            n => self
                .named(RAND_KEYS.get(n).copied().unwrap_or("uniform"))
                .key(a, b),
        };
        // What mlua did with the i64 it returned (LuaJIT's numbers are doubles).
        k as f64
    }

    /// sysbench's `rand.string`: `#` a digit, `@` a lowercase letter, anything else kept.
    pub(super) fn string(&mut self, template: &str) -> String {
        let mut out = template.as_bytes().to_vec();
        self.fill_string(&mut out);
        // `#` and `@` are ASCII, never part of a multi-byte character: replacing them byte
        // by byte keeps the text valid UTF-8.
        String::from_utf8(out).expect("ASCII replaced by ASCII")
    }

    /// [`Rand::string`] in place: `buf` holds the template and gets the string.
    pub(super) fn fill_string(&mut self, buf: &mut [u8]) {
        let rng = self.default.rng();
        for b in buf {
            match *b {
                b'#' => *b = b'0' + rng.random_range(0..10u8),
                b'@' => *b = b'a' + rng.random_range(0..26u8),
                _ => {}
            }
        }
    }
}

/// The key functions of `sysbench.rand`, by the index [`Rand::key`] takes.
pub(super) const RAND_KEYS: [&str; 6] = [
    "uniform", "default", "gaussian", "special", "pareto", "zipfian",
];

/// What a state's native functions share: where to connect, the runner's connection (taken
/// by the first `drv:connect()`), the event's counters and timings, the random numbers, and
/// the last SQL error (handed to the runner when the event restarts).
pub struct Ctx {
    target: Target,
    connect: ConnectOptions,
    runner: Mutex<Option<Arc<Slot>>>,
    pub tally: Mutex<EventTally>,
    pub(super) rand: Mutex<Rand>,
    pub last_error: Mutex<Option<DriverError>>,
    /// The statement the script waits for when its first poll found it waiting, with the
    /// query its error would name (see [`start`]).
    pending: Mutex<Option<(Running, String)>>,
    /// A statement was awaited on the async path since the runner last looked: each such
    /// await leaves a finished future in a userdata whose Rust memory Lua's collector does
    /// not see (see `LuaClient::event`).
    pub awaited: std::sync::atomic::AtomicBool,
    /// The script called `os.exit()`: where, as the error that ends this state's client,
    /// command or hook (see [`install_exit`]).
    pub exit: Mutex<Option<String>>,
}

impl Ctx {
    pub fn new(
        target: Target,
        connect: ConnectOptions,
        runner: Option<Arc<Slot>>,
        rand: Rand,
    ) -> Arc<Self> {
        Arc::new(Self {
            target,
            connect,
            runner: Mutex::new(runner),
            tally: Mutex::new(EventTally::default()),
            rand: Mutex::new(rand),
            last_error: Mutex::new(None),
            pending: Mutex::new(None),
            awaited: std::sync::atomic::AtomicBool::new(false),
            exit: Mutex::new(None),
        })
    }

    fn count(&self, class: StatementClass) {
        self.tally.lock().expect("tally").queries.count(class);
    }

    /// Count a prepared statement and time it by its text.
    fn timed(&self, class: StatementClass, kind: &'static str, began: Instant) {
        let us = began.elapsed().as_micros() as u64;
        let mut t = self.tally.lock().expect("tally");
        t.queries.count(class);
        t.time(kind, us);
    }
}

/// sysbench's driver name for a target (what `drv:name()` returns).
fn driver_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Mysql => "mysql",
        Dialect::Postgres => "pgsql",
        Dialect::Sqlite => "sqlite",
    }
}

/// `sysbench.rand.unique()`: distinct 32-bit values across every client of the process (a
/// counter through a bijection of the 32-bit integers, so no value repeats before 2^32).
fn unique() -> u32 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let mut x = NEXT.fetch_add(1, Ordering::Relaxed) as u32;
    x = x.wrapping_mul(0x9E37_79B1);
    x ^= x >> 15;
    x = x.wrapping_mul(0x85EB_CA77);
    x ^ (x >> 13)
}

/// Make a new state: the API, then the script (its top level), then `sysbench.opt`.
pub fn new_state(
    script: &Script,
    ctx: &Arc<Ctx>,
    tid: u32,
    threads: u32,
    command: &str,
    run: &RunOptions,
) -> Result<LuaState, StateError> {
    let lua = super::fast::new_lua(fast_calls(threads))?;
    install(&lua, script, ctx, tid, threads, command, run)?;
    let name = format!("@{}", script.path.display());
    lua.load(&script.source).set_name(name).exec()?;
    set_opts(&lua, script, threads, run)?;
    Ok(lua)
}

fn install(
    lua: &Lua,
    script: &Script,
    ctx: &Arc<Ctx>,
    tid: u32,
    threads: u32,
    command: &str,
    run: &RunOptions,
) -> mlua::Result<()> {
    let g = lua.globals();
    // `require` finds modules next to the script, then where sysbench keeps its own.
    let package: Table = g.get("package")?;
    let mut path = String::new();
    if let Some(dir) = script.path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        path.push_str(&format!("{}/?.lua;", dir.display()));
    }
    for d in SYSBENCH_DIRS {
        path.push_str(&format!("{d}/?.lua;"));
    }
    let old: String = package.get("path")?;
    package.set("path", format!("{path}{old}"))?;

    let sb = lua.create_table()?;
    sb.set("version", SYSBENCH_VERSION)?;
    sb.set(
        "version_string",
        format!("sysbench {SYSBENCH_VERSION} (dbrig)"),
    )?;
    sb.set("tid", tid)?;
    sb.set("hooks", lua.create_table()?)?;
    sb.set("opt", lua.create_table()?)?;
    let cmdline = lua.create_table()?;
    cmdline.set("command", command)?;
    cmdline.set("script_path", script.path.display().to_string())?;
    for (i, n) in [
        "ARG_NULL",
        "ARG_BOOL",
        "ARG_INT",
        "ARG_SIZE",
        "ARG_DOUBLE",
        "ARG_STRING",
        "ARG_LIST",
        "ARG_FILE",
        "ARG_MAX",
    ]
    .iter()
    .enumerate()
    {
        cmdline.set(*n, i)?;
    }
    cmdline.set("PARALLEL_COMMAND", true)?;
    sb.set("cmdline", cmdline)?;
    sb.set("sql", lua.create_table()?)?;
    sb.set("rand", rand_table(lua, ctx)?)?;
    g.set("sysbench", sb)?;
    g.set("thread_id", tid)?;

    // print and io.write go through Rust's stdout, so a script's lines and dbrig's report
    // come out in the order they were written.
    g.set(
        "print",
        lua.create_function(|lua, args: mlua::Variadic<LuaValue>| {
            let tostring: Function = lua.globals().get("tostring")?;
            let mut line = String::new();
            for (i, a) in args.into_iter().enumerate() {
                if i > 0 {
                    line.push('\t');
                }
                line.push_str(&tostring.call::<String>(a)?);
            }
            line.push('\n');
            write_out(&line);
            Ok(())
        })?,
    )?;
    let io: Table = g.get("io")?;
    io.set(
        "write",
        lua.create_function(|_, args: mlua::Variadic<LuaValue>| {
            let mut text = String::new();
            for a in args.iter() {
                match a {
                    LuaValue::String(s) => text.push_str(&s.to_string_lossy()),
                    LuaValue::Integer(i) => text.push_str(&i.to_string()),
                    LuaValue::Number(n) => text.push_str(&n.to_string()),
                    other => {
                        return Err(mlua::Error::RuntimeError(format!(
                            "bad argument to 'write' (string expected, got {})",
                            other.type_name()
                        )));
                    }
                }
            }
            write_out(&text);
            Ok(true)
        })?,
    )?;
    install_exit(lua, ctx)?;
    let raw = lua.create_table()?;
    raw.set("driver_name", driver_name(ctx.target.dialect()))?;
    raw.set("row_other", row_other())?;
    {
        // `ffi.C.sb_counter_inc(tid, counter)` of a script's `require("ffi")` (prelude.lua):
        // sysbench's per-thread counters, here the state's event tally.
        let ctx = Arc::clone(ctx);
        raw.set(
            "counter_inc",
            lua.create_function(move |_, counter: f64| {
                let mut t = ctx.tally.lock().expect("tally");
                match counter as i64 {
                    0 => t.queries.count(StatementClass::Other),
                    1 => t.queries.count(StatementClass::Read),
                    2 => t.queries.count(StatementClass::Write),
                    4 => t.ignored_errors += 1,
                    3 => {
                        return Err(mlua::Error::RuntimeError(
                            "not supported: sb_counter_inc(SB_CNT_TRX): dbrig counts an event's transaction itself".into(),
                        ));
                    }
                    5 => {
                        return Err(mlua::Error::RuntimeError(
                            "not supported: sb_counter_inc(SB_CNT_RECONNECT): dbrig counts the reconnects it makes".into(),
                        ));
                    }
                    n => {
                        return Err(mlua::Error::RuntimeError(format!(
                            "sb_counter_inc: {n} is no sb_counter_type (SB_CNT_OTHER .. SB_CNT_RECONNECT)"
                        )));
                    }
                }
                Ok(())
            })?,
        )?;
    }
    {
        let ctx = Arc::clone(ctx);
        raw.set(
            "rand_string",
            lua.create_function(move |_, t: String| Ok(ctx.rand.lock().expect("rand").string(&t)))?,
        )?;
    }
    {
        let ctx = Arc::clone(ctx);
        let keep_rows = script.prepared_rows;
        raw.set(
            "connect",
            lua.create_async_function(move |lua, ()| {
                let ctx = Arc::clone(&ctx);
                async move {
                    let runner = ctx.runner.lock().expect("runner slot").take();
                    let (slot, owned) = match runner {
                        Some(s) => (s, false),
                        None => match Connection::connect(&ctx.target, &ctx.connect).await {
                            Ok(c) => (Arc::new(Mutex::new(Some(Box::new(c)))), true),
                            Err(e) => {
                                return Ok((
                                    LuaValue::Nil,
                                    LuaValue::Table(errdesc(&lua, &ctx, e, "")?),
                                ));
                            }
                        },
                    };
                    let con = Con(Box::new(ConCore {
                        ctx: Arc::clone(&ctx),
                        slot,
                        owned,
                        bulk: Mutex::new(None),
                        keep_rows,
                        rows: Mutex::new(dbrig_driver::TextRows::default()),
                        failed: Mutex::new(None),
                    }));
                    Ok((LuaValue::UserData(lua.create_userdata(con)?), LuaValue::Nil))
                }
            })?,
        )?;
    }
    {
        // A statement its first poll left waiting: awaited here, on the async path.
        let ctx = Arc::clone(ctx);
        raw.set(
            "await_pending",
            lua.create_async_function(move |lua, ()| {
                let ctx = Arc::clone(&ctx);
                async move {
                    let pending = ctx.pending.lock().expect("pending").take();
                    ctx.awaited.store(true, Ordering::Relaxed);
                    let Some((run, query)) = pending else {
                        return Ok((LuaValue::Nil, LuaValue::Nil));
                    };
                    let done = run.await;
                    reply(&lua, &ctx, done, &query)
                }
            })?,
        )?;
    }
    {
        // The script's sql_error_ignorable hook downgraded the last error: the runner restarts
        // the event for it as for a retryable one.
        let ctx = Arc::clone(ctx);
        raw.set(
            "downgraded",
            lua.create_function(move |_, ()| {
                if let Some(e) = ctx.last_error.lock().expect("last error").as_mut()
                    && e.class == ErrorClass::Fatal
                {
                    e.class = ErrorClass::Retryable;
                }
                Ok(())
            })?,
        )?;
    }
    // The FFI calls pay where each client runs many events on a thread of its own. With more
    // clients than the runner gives a thread each, their cost per state (the ffi library, the
    // casts, longer traces: ~35 KB, and each state's JIT compiling them) outweighs them: 1 024
    // clients of oltp_point_select.lua over 10 s took 222 -> 259 MB peak RSS (the bench's
    // target is 250 MB) and gained no CPU (two runs each on a machine busy with builds: 76-77
    // against 82-84 µs of client CPU per query). Those states keep the mlua functions.
    super::fast::ffi_loader(lua, &raw)?;
    if fast_calls(threads) {
        super::fast::install(lua, &raw, ctx)?;
    }
    lua.load(PRELUDE)
        .set_name("=dbrig-sysbench-api")
        .call::<()>(raw.clone())?;
    let event_loop: Function = raw.get("event_loop")?;
    lua.set_named_registry_value("dbrig_event_loop", event_loop)?;
    let close: Function = raw.get("report_json_close")?;
    lua.set_named_registry_value("dbrig_report_json_close", close)?;
    let _ = run;
    Ok(())
}

/// Whether the states of a run of `threads` clients get the FFI calls and LuaJIT's allocator
/// (`fast.rs`): runs whose clients each have a thread of their own.
fn fast_calls(threads: u32) -> bool {
    threads <= crate::runner::OWN_THREAD_CLIENTS
}

/// `os.exit()`: sysbench ends its process there; a script cannot end dbrig. The call becomes
/// an error naming the script's line, kept in the state's context, and every instruction the
/// state runs after it raises it again, so a `pcall` around the call (TPC-C suites retry a
/// transaction in `while not pcall(...)`) cannot carry on: the client, command or hook ends
/// with that error and the trial fails.
fn install_exit(lua: &Lua, ctx: &Arc<Ctx>) -> mlua::Result<()> {
    let os: Table = lua.globals().get("os")?;
    let ctx = Arc::clone(ctx);
    os.set(
        "exit",
        lua.create_function(move |lua, args: mlua::Variadic<LuaValue>| {
            let at = lua
                .inspect_stack(1, |d| {
                    let src = d.source().short_src.map(|s| s.into_owned());
                    match (src, d.current_line()) {
                        (Some(src), Some(line)) => format!("{src}:{line}"),
                        (Some(src), None) => src,
                        _ => "?".to_owned(),
                    }
                })
                .unwrap_or_else(|| "?".to_owned());
            let code = match args.first() {
                None | Some(LuaValue::Nil) => String::new(),
                Some(LuaValue::Boolean(b)) => b.to_string(),
                Some(LuaValue::Integer(i)) => i.to_string(),
                Some(LuaValue::Number(n)) => n.to_string(),
                Some(LuaValue::String(s)) => s.to_string_lossy(),
                Some(other) => other.type_name().to_owned(),
            };
            let msg = format!(
                "{at}: os.exit({code}) called: a script cannot end dbrig (sysbench would have ended here); the trial fails"
            );
            *ctx.exit.lock().expect("exit") = Some(msg.clone());
            let again = msg.clone();
            lua.set_hook(
                mlua::HookTriggers::new().every_nth_instruction(1),
                move |_, _| Err(mlua::Error::RuntimeError(again.clone())),
            )?;
            Err::<(), _>(mlua::Error::RuntimeError(msg))
        })?,
    )
}

/// A script's output on stdout (a closed pipe ends nothing here: dbrig's own output reports
/// it).
fn write_out(text: &str) {
    use std::io::Write;
    if super::TO_STDERR.load(Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn rand_table(lua: &Lua, ctx: &Arc<Ctx>) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (which, name) in RAND_KEYS.iter().enumerate() {
        let c = Arc::clone(ctx);
        t.set(
            *name,
            lua.create_function(move |_, (a, b): (f64, f64)| {
                Ok(c.rand.lock().expect("rand").key(which, a, b))
            })?,
        )?;
    }
    let c = Arc::clone(ctx);
    t.set(
        "string",
        lua.create_function(move |_, s: String| Ok(c.rand.lock().expect("rand").string(&s)))?,
    )?;
    let c = Arc::clone(ctx);
    t.set(
        "varstring",
        lua.create_function(move |_, (a, b): (f64, f64)| {
            let mut r = c.rand.lock().expect("rand");
            let len = r.default.uniform(a as i64, b as i64).max(0) as usize;
            let rng = r.default.rng();
            Ok((0..len)
                .map(|_| {
                    let i = rng.random_range(0..36u8);
                    char::from(if i < 10 { b'0' + i } else { b'a' + i - 10 })
                })
                .collect::<String>())
        })?,
    )?;
    t.set(
        "unique",
        lua.create_function(|_, ()| Ok(f64::from(unique())))?,
    )?;
    let c = Arc::clone(ctx);
    t.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| {
            Ok(c.rand.lock().expect("rand").default.rng().random::<u64>() as f64)
        })?,
    )?;
    let c = Arc::clone(ctx);
    t.set(
        "uniform_double",
        lua.create_function(move |_, ()| {
            Ok(c.rand.lock().expect("rand").default.rng().random::<f64>())
        })?,
    )?;
    Ok(t)
}

/// Whether a Lua module the state has loaded from a file (`require`, found on
/// `package.path`) has `word` in its text.
pub fn modules_name(lua: &Lua, word: &str) -> bool {
    let found = || -> mlua::Result<bool> {
        let package: Table = lua.globals().get("package")?;
        let loaded: Table = package.get("loaded")?;
        let path: String = package.get("path")?;
        let search: Function = package.get("searchpath")?;
        for pair in loaded.pairs::<String, LuaValue>() {
            let (name, _) = pair?;
            let Some(file) = search.call::<Option<String>>((name, path.as_str()))? else {
                continue;
            };
            if std::fs::read_to_string(&file).is_ok_and(|t| t.contains(word)) {
                return Ok(true);
            }
        }
        Ok(false)
    };
    found().unwrap_or(false)
}

/// The options the script declared (after its top level ran).
pub fn declared(lua: &Lua) -> Result<Vec<Declared>, StateError> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    let Ok(Some(opts)) = cmdline.get::<Option<Table>>("options") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for pair in opts.pairs::<String, Table>() {
        let (name, def) = pair.map_err(|_| StateError::OptionEntry)?;
        let description: String = def.get::<Option<String>>(1)?.unwrap_or_default();
        let default: LuaValue = def.get(2)?;
        let given: Option<i64> = def.get(3).ok().flatten();
        let kind = match given {
            Some(1) => OptKind::Bool,
            Some(2..=4) => OptKind::Number,
            Some(6) => OptKind::List,
            Some(_) => OptKind::String,
            None => match &default {
                LuaValue::Boolean(_) => OptKind::Bool,
                LuaValue::Integer(_) | LuaValue::Number(_) => OptKind::Number,
                LuaValue::Table(_) => OptKind::List,
                _ => OptKind::String,
            },
        };
        let default = match default {
            LuaValue::Boolean(b) => Some(if b { "on" } else { "off" }.to_owned()),
            LuaValue::Integer(i) => Some(i.to_string()),
            LuaValue::Number(n) => Some(n.to_string()),
            LuaValue::String(s) => Some(s.to_string_lossy().to_string()),
            LuaValue::Table(t) => Some(
                t.sequence_values::<String>()
                    .filter_map(Result::ok)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        };
        out.push(Declared {
            name,
            description,
            default,
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

pub fn convert_check(kind: OptKind, v: &str) -> Result<(), OptionValueError> {
    match kind {
        OptKind::Bool if parse_bool(v).is_none() => Err(OptionValueError::NotOnOff(v.to_owned())),
        OptKind::Number if v.trim().parse::<f64>().is_err() => {
            Err(OptionValueError::NotANumber(v.to_owned()))
        }
        _ => Ok(()),
    }
}

fn opt_value(lua: &Lua, kind: OptKind, v: &str) -> mlua::Result<LuaValue> {
    Ok(match kind {
        OptKind::Bool => LuaValue::Boolean(parse_bool(v).unwrap_or(false)),
        OptKind::Number => LuaValue::Number(v.trim().parse::<f64>().unwrap_or(0.0)),
        OptKind::String => LuaValue::String(lua.create_string(v)?),
        OptKind::List => {
            let t = lua.create_table()?;
            for (i, s) in v.split(',').filter(|s| !s.is_empty()).enumerate() {
                t.set(i + 1, s)?;
            }
            LuaValue::Table(t)
        }
    })
}

/// `sysbench.opt`: sysbench's own options dbrig has, then every declared option (given or
/// default).
fn set_opts(lua: &Lua, script: &Script, threads: u32, run: &RunOptions) -> mlua::Result<()> {
    let sb: Table = lua.globals().get("sysbench")?;
    let opt: Table = sb.get("opt")?;
    opt.set("threads", threads)?;
    opt.set("events", run.events as f64)?;
    opt.set("time", run.time)?;
    opt.set("rate", run.rate)?;
    opt.set("report_interval", run.report_interval)?;
    opt.set("percentile", run.percentile)?;
    opt.set("rand_type", run.key_distribution().name())?;
    opt.set("rand_seed", run.rand_seed as f64)?;
    opt.set("warmup_time", run.warmup)?;
    opt.set("histogram", false)?;
    opt.set(
        "db_ps_mode",
        if run.protocol_or(dbrig_core::results::Protocol::Prepared)
            == dbrig_core::results::Protocol::Prepared
        {
            "auto"
        } else {
            "disable"
        },
    )?;
    let declared = declared(lua).map_err(|e| mlua::Error::RuntimeError(e.to_string()))?;
    for d in &declared {
        let v = script
            .values
            .iter()
            .find(|(n, _)| n == &d.name)
            .map(|(_, v)| v.clone())
            .or_else(|| d.default.clone());
        match v {
            Some(v) => opt.set(d.name.as_str(), opt_value(lua, d.kind, &v)?)?,
            None => opt.set(d.name.as_str(), LuaValue::Nil)?,
        }
    }
    let _ = threads;
    Ok(())
}

/// The names `sysbench.cmdline.commands` gives a function, in name order.
pub fn commands(lua: &Lua) -> Vec<String> {
    let found = || -> mlua::Result<Vec<String>> {
        let sb: Table = lua.globals().get("sysbench")?;
        let cmdline: Table = sb.get("cmdline")?;
        let Some(cmds) = cmdline.get::<Option<Table>>("commands")? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for pair in cmds.pairs::<String, LuaValue>() {
            let (name, entry) = pair?;
            if let LuaValue::Table(t) = entry
                && matches!(t.get::<LuaValue>(1)?, LuaValue::Function(_))
            {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    };
    found().unwrap_or_default()
}

/// A command's function and whether it runs in every thread: `sysbench.cmdline.commands`
/// first, else the global function of that name.
pub fn command(lua: &Lua, name: &str) -> Result<(Option<Function>, bool), StateError> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    if let Ok(Some(cmds)) = cmdline.get::<Option<Table>>("commands")
        && let Ok(Some(entry)) = cmds.get::<Option<Table>>(name)
        && let Ok(Some(f)) = entry.get::<Option<Function>>(1)
    {
        let parallel = matches!(entry.get::<LuaValue>(2), Ok(LuaValue::Boolean(true)));
        return Ok((Some(f), parallel));
    }
    Ok((lua.globals().get::<Option<Function>>(name)?, false))
}

/// The error descriptor sysbench builds for a failed statement; `restart` marks an error
/// the runner restarts the event for (dbrig's retryable and lost-connection classes).
fn errdesc(lua: &Lua, ctx: &Ctx, e: DriverError, query: &str) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let code = e.code.clone().unwrap_or_default();
    let (errno, state) = match ctx.target.dialect() {
        Dialect::Postgres => (0, code.clone()),
        _ => (code.parse::<i64>().unwrap_or(0), String::new()),
    };
    t.set("sql_errno", errno)?;
    t.set("sql_state", state)?;
    t.set("sql_errmsg", e.message.clone())?;
    t.set("query", query)?;
    t.set(
        "restart",
        matches!(e.class, ErrorClass::Retryable | ErrorClass::Reconnect),
    )?;
    *ctx.last_error.lock().expect("last error") = Some(e);
    Ok(t)
}

fn take(slot: &Slot) -> Result<Box<Connection>, DriverError> {
    slot.lock().expect("slot").take().ok_or_else(|| {
        DriverError::fatal(
            dbrig_driver::ErrorKind::ConnectionLost,
            "the connection is closed (con:disconnect())",
        )
    })
}

/// Whether a text query returns rows (sysbench counts it a read then): its first word,
/// compared without allocating (every `con:query()` asks).
fn returns_rows(sql: &str) -> bool {
    let rest = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let word = &rest[..end];
    [
        "SELECT", "SHOW", "WITH", "VALUES", "EXPLAIN", "DESCRIBE", "DESC", "TABLE", "PRAGMA",
        "ANALYZE", "CHECK", "CHECKSUM",
    ]
    .iter()
    .any(|w| w.eq_ignore_ascii_case(word))
}

/// `?` placeholders as PostgreSQL's `$1, $2…` (sysbench's pgsql driver does the same), outside
/// quotes.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '?' => {
                n += 1;
                out.push_str(&format!("${n}"));
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

/// A script's connection (`con`). Boxed: the FFI calls of `fast.rs` reach it by its
/// address, which must not move with the userdata.
struct Con(Box<ConCore>);

impl std::ops::Deref for Con {
    type Target = ConCore;
    fn deref(&self) -> &ConCore {
        &self.0
    }
}

/// What a script's connection holds, for the mlua methods and the FFI calls alike.
pub(super) struct ConCore {
    pub(super) ctx: Arc<Ctx>,
    slot: Arc<Slot>,
    /// Opened by the script (a second `drv:connect()`, a command's): closed by
    /// `disconnect`. The runner's connection is the runner's to close.
    owned: bool,
    bulk: Mutex<Option<BulkInsert>>,
    /// Whether prepared statements that return rows keep them for `fetch_row()` (the script
    /// names fetch_row: see `Script::prepared_rows`).
    keep_rows: bool,
    /// The last result set of a text query the FFI ran ([`ConCore::query_here`]), its
    /// buffers reused from one query to the next; the Lua half reads its cells through the
    /// FFI, or takes it whole (`detach`) when a result it handed out still has rows to read
    /// as the next query starts.
    pub(super) rows: Mutex<dbrig_driver::TextRows>,
    /// What an FFI query could not hand over as a number: its error (or a panic's payload),
    /// collected by the Lua half through the `failed` method.
    pub(super) failed: Mutex<Option<Failure>>,
}

impl ConCore {
    /// A text query run within the call into [`ConCore::rows`], when the connection answers
    /// within the call: `con:query()` and `con:query_row()` without mlua. The row count of a
    /// result set, no count for none, or where it went instead.
    pub(super) fn query_here(&self, sql: &str) -> Here {
        if !answers_in_call(&self.slot) {
            return Here::Elsewhere;
        }
        let mut rows = self.rows.lock().expect("rows");
        match run_in_call(text_into(&self.ctx, &self.slot, sql, &mut rows)) {
            Ok(Some(n)) => Here::Ran(Some(n as u64)),
            Ok(None) => Here::Ran(None),
            Err(e) => {
                *self.failed.lock().expect("failed") = Some(Failure::Sql(e));
                Here::Failed
            }
        }
    }
}

type Reply = (LuaValue, LuaValue);

/// What a statement did, before it becomes Lua values: made on whichever path finished it
/// (see [`start`]).
enum Done {
    /// A result set whose rows are kept for `fetch_row()`.
    Rows(Rows),
    /// A result set of a prepared statement, counted only: its row count.
    Counted(u64),
    /// No result set.
    Nothing,
    Failed(DriverError),
}

/// A statement on its way: it owns what it needs (the connection is taken out of its slot
/// and put back when it ends), so it can be parked in the state's [`Ctx::pending`].
type Running = Pin<Box<dyn Future<Output = Done> + Send>>;

/// Start a statement and poll it once, in the script's call. On a connection that blocks
/// its thread (the lean MariaDB/MySQL client with a worker of its own) it is always done
/// then: the reply goes back to the script at once, without mlua's async machinery (a
/// future boxed into a userdata, a poll loop in Lua, a yield) around every statement. A
/// statement still waiting is parked in `ctx.pending`, and the script's Lua half awaits it
/// through `raw.await_pending` (the async path; the first poll's no-op waker is replaced
/// by the task's at its next poll).
fn start(lua: &Lua, ctx: &Ctx, query: &str, mut run: Running) -> mlua::Result<Reply> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match run.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(done) => reply(lua, ctx, done, query),
        std::task::Poll::Pending => {
            *ctx.pending.lock().expect("pending") = Some((run, query.to_owned()));
            Ok((LuaValue::Boolean(true), LuaValue::Nil))
        }
    }
}

/// The mark `con:query_row()`'s native call puts before a reply that is not a row's cells
/// (the prelude compares it with `raw.row_other`): an address no script value can have.
fn row_other() -> mlua::LightUserData {
    static MARK: u8 = 0;
    mlua::LightUserData(
        std::ptr::from_ref(&MARK)
            .cast_mut()
            .cast::<std::ffi::c_void>(),
    )
}

/// A finished statement as the two values the Lua half expects: (result, error).
fn reply(lua: &Lua, ctx: &Ctx, done: Done, query: &str) -> mlua::Result<Reply> {
    Ok(match done {
        Done::Rows(rs) => (LuaValue::UserData(lua.create_userdata(rs)?), LuaValue::Nil),
        Done::Counted(n) => (LuaValue::Number(n as f64), LuaValue::Nil),
        Done::Nothing => (LuaValue::Nil, LuaValue::Nil),
        Done::Failed(e) => (LuaValue::Nil, LuaValue::Table(errdesc(lua, ctx, e, query)?)),
    })
}

/// A text query (`con:query()`, a bulk insert's INSERT) as a future that owns what it needs,
/// for [`start`] to park when its first poll waits.
fn text_run(ctx: Arc<Ctx>, slot: Arc<Slot>, sql: String) -> Running {
    Box::pin(async move { text_done(&ctx, &slot, &sql).await })
}

/// A text query run to its end: rows kept when it returns rows. Borrows what it needs, so a
/// connection that answers within the call runs it with no boxed future and no copy of the
/// text ([`run_in_call`]).
async fn text_done(ctx: &Ctx, slot: &Slot, sql: &str) -> Done {
    let mut rows = dbrig_driver::TextRows::default();
    match text_into(ctx, slot, sql, &mut rows).await {
        Ok(Some(_)) => Done::Rows(Rows::new(rows)),
        Ok(None) => Done::Nothing,
        Err(e) => Done::Failed(e),
    }
}

/// A text query run to its end, counted: a result set's rows into `rows` (its row count
/// returned), or no result set (`None`).
async fn text_into(
    ctx: &Ctx,
    slot: &Slot,
    sql: &str,
    rows: &mut dbrig_driver::TextRows,
) -> Result<Option<usize>, DriverError> {
    let mut c = take(slot)?;
    let done = if returns_rows(sql) {
        c.query_text_into(sql, rows).await.map(|()| {
            ctx.count(StatementClass::Read);
            Some(rows.nrows())
        })
    } else {
        c.execute_text(sql).await.map(|o| {
            ctx.count(o.class());
            None
        })
    };
    *slot.lock().expect("slot") = Some(c);
    done
}

/// Whether the connection in `slot` blocks its thread, so a statement on it answers within
/// the call ([`Connection::completes_in_call`]).
fn answers_in_call(slot: &Slot) -> bool {
    slot.lock()
        .expect("slot")
        .as_ref()
        .is_some_and(|c| c.completes_in_call())
}

/// The bulk insert's buffered INSERT, if it holds rows (the buffer is left with its head).
fn take_bulk(con: &Con, last: bool) -> Option<String> {
    let mut b = con.bulk.lock().expect("bulk");
    let sql = b.as_mut().and_then(BulkInsert::take);
    if last {
        *b = None;
    }
    sql
}

/// Send the bulk insert's buffer (through [`start`]): `(nil, nil)` when there was nothing to
/// send.
fn flush(lua: &Lua, con: &Con, last: bool) -> mlua::Result<Reply> {
    match take_bulk(con, last) {
        Some(sql) => {
            let run = text_run(Arc::clone(&con.ctx), Arc::clone(&con.slot), sql);
            start(lua, &con.ctx, "<bulk insert>", run)
        }
        None => Ok((LuaValue::Nil, LuaValue::Nil)),
    }
}

impl UserData for Con {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        // On a connection that answers within the call the query runs right here, its text
        // borrowed from Lua (no copy, no boxed future), and a result set's row count comes
        // with it (the Lua half would otherwise ask for it in a second call); otherwise
        // through `start`, which may leave it to `await_pending`.
        m.add_method("query", |lua, this, sql: mlua::String| {
            let sql = sql.to_str()?;
            if answers_in_call(&this.slot) {
                let done = run_in_call(text_done(&this.ctx, &this.slot, &sql));
                let n = match &done {
                    Done::Rows(rs) => LuaValue::Number(rs.text.nrows() as f64),
                    _ => LuaValue::Nil,
                };
                let (r, e) = reply(lua, &this.ctx, done, &sql)?;
                return Ok((r, e, n));
            }
            let run = text_run(
                Arc::clone(&this.ctx),
                Arc::clone(&this.slot),
                sql.to_owned(),
            );
            let (r, e) = start(lua, &this.ctx, &sql, run)?;
            Ok((r, e, LuaValue::Nil))
        });
        // `con:query_row(sql)`: on a connection that answers within the call, the first row's
        // cells themselves (nil for NULL; one nil without a row), with no result object made
        // for them; otherwise, and for no result set or an error, `ROW_OTHER` then what
        // `query` returns (prelude.lua `row_of`).
        m.add_method("query_row", |lua, this, sql: mlua::String| {
            let sql = sql.to_str()?;
            let mut out = mlua::MultiValue::new();
            if answers_in_call(&this.slot) {
                match run_in_call(text_done(&this.ctx, &this.slot, &sql)) {
                    Done::Rows(rs) => {
                        rs.first_row(lua, &mut out)?;
                        return Ok(out);
                    }
                    done => {
                        let (r, e) = reply(lua, &this.ctx, done, &sql)?;
                        out.push_back(LuaValue::LightUserData(row_other()));
                        out.push_back(r);
                        out.push_back(e);
                        return Ok(out);
                    }
                }
            }
            let run = text_run(
                Arc::clone(&this.ctx),
                Arc::clone(&this.slot),
                sql.to_owned(),
            );
            let (r, e) = start(lua, &this.ctx, &sql, run)?;
            out.push_back(LuaValue::LightUserData(row_other()));
            out.push_back(r);
            out.push_back(e);
            Ok(out)
        });
        // The address the Lua half hands to the FFI calls (see `fast.rs`).
        m.add_method("ptr", |_, this, ()| {
            Ok(mlua::LightUserData(
                std::ptr::from_ref::<ConCore>(&this.0)
                    .cast_mut()
                    .cast::<std::ffi::c_void>(),
            ))
        });
        // An FFI query failed: its error as the Lua half raises it (or its panic, resumed
        // here, where mlua carries it on as it does any callback's).
        m.add_method("failed", |lua, this, sql: mlua::String| {
            match this.failed.lock().expect("failed").take() {
                Some(Failure::Sql(e)) => Ok(LuaValue::Table(errdesc(
                    lua,
                    &this.ctx,
                    e,
                    &sql.to_string_lossy(),
                )?)),
                Some(Failure::Panic(p)) => std::panic::resume_unwind(p),
                None => Ok(LuaValue::Nil),
            }
        });
        // The FFI's last result set, taken whole for a result the script still reads as the
        // next query starts (its next row: `next`, from 0): a result object of its own.
        m.add_method("detach", |lua, this, next: usize| {
            let text = std::mem::take(&mut *this.rows.lock().expect("rows"));
            lua.create_userdata(Rows { text, next })
        });
        m.add_async_method("prepare", |lua, this, sql: String| async move {
            let text = if this.ctx.target.dialect() == Dialect::Postgres {
                numbered(&sql)
            } else {
                sql.clone()
            };
            let mut c = match take(&this.slot) {
                Ok(c) => c,
                Err(e) => {
                    return Ok((
                        LuaValue::Nil,
                        LuaValue::Table(errdesc(&lua, &this.ctx, e, &sql)?),
                    ));
                }
            };
            let r = c.prepare(&text).await;
            *this.slot.lock().expect("slot") = Some(c);
            match r {
                Ok(stmt) => {
                    let s = Stmt(Box::new(StmtCore {
                        ctx: Arc::clone(&this.ctx),
                        slot: Arc::clone(&this.slot),
                        stmt,
                        kind: crate::script::intern(
                            sql.split_whitespace().collect::<Vec<_>>().join(" "),
                        ),
                        keep_rows: this.keep_rows && returns_rows(&sql),
                        bound: Mutex::new(Bound::default()),
                        failed: Mutex::new(None),
                    }));
                    Ok((LuaValue::UserData(lua.create_userdata(s)?), LuaValue::Nil))
                }
                Err(e) => Ok((
                    LuaValue::Nil,
                    LuaValue::Table(errdesc(&lua, &this.ctx, e, &sql)?),
                )),
            }
        });
        m.add_method("bulk_insert_init", |lua, this, sql: String| {
            let r = flush(lua, this, true)?;
            *this.bulk.lock().expect("bulk") = Some(BulkInsert::new(sql));
            Ok(r)
        });
        m.add_method("bulk_insert_next", |lua, this, row: mlua::String| {
            let row = row.to_str()?;
            // The row joins the buffer; a full buffer goes out without it.
            let full = match this.bulk.lock().expect("bulk").as_mut() {
                Some(bulk) => bulk.push(&row),
                None => {
                    return Err(mlua::Error::RuntimeError(
                        "bulk_insert_next() before bulk_insert_init()".into(),
                    ));
                }
            };
            match full {
                Some(sql) => {
                    let run = text_run(Arc::clone(&this.ctx), Arc::clone(&this.slot), sql);
                    start(lua, &this.ctx, "<bulk insert>", run)
                }
                None => Ok((LuaValue::Nil, LuaValue::Nil)),
            }
        });
        m.add_method("bulk_insert_done", |lua, this, ()| flush(lua, this, true));
        m.add_async_method("reconnect", |lua, this, ()| async move {
            let mut c = match take(&this.slot) {
                Ok(c) => c,
                Err(e) => return Ok(LuaValue::Table(errdesc(&lua, &this.ctx, e, "")?)),
            };
            let r = c.reconnect().await;
            *this.slot.lock().expect("slot") = Some(c);
            match r {
                Ok(()) => Ok(LuaValue::Nil),
                Err(e) => Ok(LuaValue::Table(errdesc(&lua, &this.ctx, e, "")?)),
            }
        });
        m.add_async_method("disconnect", |_, this, ()| async move {
            let c = if this.owned {
                this.slot.lock().expect("slot").take()
            } else {
                None
            };
            if let Some(c) = c {
                (*c).close().await;
            }
            Ok(())
        });
    }
}

/// How a bound parameter's Lua value becomes a bind value (`stmt:bind_create(type, len)`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Bind {
    int: bool,
    /// CHAR / VARCHAR: the buffer length sysbench truncates to.
    max_len: Option<usize>,
}

/// A bound parameter's Lua value as both ways of executing a statement see it: the mlua
/// method's arguments and the FFI binds of `fast.rs` meet here, so they make the same
/// [`Value`].
pub(super) enum Arg<'a> {
    Nil,
    /// A number mlua read as an integer (see [`Arg::number`]).
    Integer(i64),
    Number(f64),
    Boolean(bool),
    String(&'a [u8]),
}

impl Arg<'_> {
    /// A Lua number as mlua reads one from LuaJIT (whose numbers are all doubles): an
    /// integer when it converts to an i64 and back to the same bits (num-traits' range check:
    /// [-2^63, 2^63)), so -0.0, NaN and fractions stay numbers.
    pub(super) fn number(n: f64) -> Self {
        // 2^63, exactly.
        let lim = -(i64::MIN as f64);
        if (-lim..lim).contains(&n) {
            let i = n as i64;
            if (i as f64).to_bits() == n.to_bits() {
                return Arg::Integer(i);
            }
        }
        Arg::Number(n)
    }
}

impl Bind {
    fn of(btype: i64, max_len: Option<f64>) -> mlua::Result<Self> {
        Ok(match btype {
            1..=4 => Self {
                int: true,
                max_len: None,
            },
            5..=10 => Self {
                int: false,
                max_len: None,
            },
            11 | 12 => Self {
                int: false,
                max_len: max_len.map(|n| n as usize),
            },
            _ => {
                return Err(mlua::Error::RuntimeError(format!(
                    "Unsupported argument type: {btype}"
                )));
            }
        })
    }

    fn value(&self, v: &LuaValue) -> mlua::Result<Value> {
        let arg = match v {
            LuaValue::Nil => Arg::Nil,
            LuaValue::Integer(i) => Arg::Integer(*i),
            LuaValue::Number(n) => Arg::Number(*n),
            LuaValue::Boolean(b) => Arg::Boolean(*b),
            LuaValue::String(s) => return Ok(self.convert(Arg::String(&s.as_bytes()))),
            other => {
                return Err(mlua::Error::RuntimeError(format!(
                    "cannot bind a {} value",
                    other.type_name()
                )));
            }
        };
        Ok(self.convert(arg))
    }

    pub(super) fn convert(&self, arg: Arg<'_>) -> Value {
        match arg {
            Arg::Nil => Value::Null,
            Arg::Integer(i) => Value::Int(i),
            Arg::Number(n) if self.int => Value::Int(n as i64),
            Arg::Number(n) => Value::Float(n),
            Arg::Boolean(b) => Value::Int(i64::from(b)),
            Arg::String(bytes) => {
                let mut s = String::from_utf8_lossy(bytes).into_owned();
                if let Some(max) = self.max_len
                    && s.len() > max
                {
                    let mut cut = max;
                    while !s.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    s.truncate(cut);
                }
                if self.int {
                    s.trim()
                        .parse::<i64>()
                        .map(Value::Int)
                        .unwrap_or(Value::Text(s))
                } else {
                    Value::Text(s)
                }
            }
        }
    }
}

/// A prepared statement (`con:prepare(sql)`). Its parameters' values live in the Lua half
/// (`param:set(v)` is a table store) and come with each `execute`. Boxed: the FFI calls of
/// `fast.rs` reach it by its address, which must not move with the userdata.
struct Stmt(Box<StmtCore>);

/// What a prepared statement's execution needs, for the mlua method and the FFI call alike.
pub(super) struct StmtCore {
    pub(super) ctx: Arc<Ctx>,
    slot: Arc<Slot>,
    stmt: Statement,
    /// The statement's text: its per-statement latency histogram.
    kind: &'static str,
    /// Read its rows for `fetch_row()` (a statement that returns rows, in a script that
    /// reads them); otherwise they are counted only.
    keep_rows: bool,
    pub(super) bound: Mutex<Bound>,
    /// What an FFI execute could not hand over as a number: its error (or a panic's payload),
    /// collected by the Lua half through the `failed` method.
    pub(super) failed: Mutex<Option<Failure>>,
}

/// The bound parameters' types, and the values the FFI binds left for the next execute (one
/// per parameter, reused from one execute to the next).
#[derive(Default)]
pub(super) struct Bound {
    pub(super) binds: Vec<Bind>,
    pub(super) values: Vec<Value>,
}

/// Why an FFI execute returned no result.
pub(super) enum Failure {
    Sql(DriverError),
    Panic(Box<dyn std::any::Any + Send>),
}

/// What [`StmtCore::execute_here`] did.
pub(super) enum Here {
    /// The statement ran: its row count when it returned rows.
    Ran(Option<u64>),
    /// It failed (the error is in `failed`).
    Failed,
    /// Not a statement for this path: the mlua method runs it (a connection that does not
    /// answer within the call, or rows kept for `fetch_row()`).
    Elsewhere,
}

impl StmtCore {
    /// Whether the statement's connection blocks its thread, so it answers within the call.
    fn answers_in_call(&self) -> bool {
        answers_in_call(&self.slot)
    }

    /// Execute with the values the FFI binds left, when the connection answers within the
    /// call and only a row count comes back: the prepared-statement hot path without mlua.
    pub(super) fn execute_here(&self) -> Here {
        if self.keep_rows || !self.answers_in_call() {
            return Here::Elsewhere;
        }
        let bound = self.bound.lock().expect("bound");
        let done = run_in_call(prepared_run(
            &self.ctx,
            &self.slot,
            self.stmt,
            self.kind,
            false,
            &bound.values,
        ));
        match done {
            Done::Counted(n) => Here::Ran(Some(n)),
            Done::Nothing => Here::Ran(None),
            Done::Failed(e) => {
                *self.failed.lock().expect("failed") = Some(Failure::Sql(e));
                Here::Failed
            }
            Done::Rows(_) => unreachable!("rows are kept only with keep_rows"),
        }
    }
}

impl UserData for Stmt {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method(
            "check_bind",
            |_, _, (btype, max_len): (i64, Option<f64>)| Bind::of(btype, max_len).map(|_| ()),
        );
        // The bound parameters' types and buffer lengths (0: none given).
        m.add_method(
            "bind_param",
            |_, this, (types, lens): (Vec<i64>, Vec<f64>)| {
                let binds = types
                    .iter()
                    .zip(lens.iter())
                    .map(|(t, l)| Bind::of(*t, (*l > 0.0).then_some(*l)))
                    .collect::<mlua::Result<Vec<_>>>()?;
                let mut bound = this.0.bound.lock().expect("bound");
                bound.values = vec![Value::Null; binds.len()];
                bound.binds = binds;
                Ok(())
            },
        );
        // The address the Lua half hands to the FFI calls (see `fast.rs`).
        m.add_method("ptr", |_, this, ()| {
            Ok(mlua::LightUserData(
                std::ptr::from_ref::<StmtCore>(&this.0)
                    .cast_mut()
                    .cast::<std::ffi::c_void>(),
            ))
        });
        // An FFI execute failed: its error as the Lua half raises it (or its panic, resumed
        // here, where mlua carries it on as it does any callback's).
        m.add_method("failed", |lua, this, ()| {
            match this.0.failed.lock().expect("failed").take() {
                Some(Failure::Sql(e)) => Ok(LuaValue::Table(errdesc(
                    lua,
                    &this.0.ctx,
                    e,
                    "<prepared statement>",
                )?)),
                Some(Failure::Panic(p)) => std::panic::resume_unwind(p),
                None => Ok(LuaValue::Nil),
            }
        });
        m.add_method("execute", |lua, this, args: mlua::Variadic<LuaValue>| {
            let this = &*this.0;
            let values = {
                let bound = this.bound.lock().expect("bound");
                bound
                    .binds
                    .iter()
                    .zip(args.iter())
                    .map(|(b, v)| b.value(v))
                    .collect::<mlua::Result<Vec<Value>>>()?
            };
            let (stmt, kind, keep_rows) = (this.stmt, this.kind, this.keep_rows);
            // A connection that blocks its thread answers within the call: the statement
            // runs right here, with no boxed future (an allocation, a copy and two Arc
            // clones per statement) around it.
            if this.answers_in_call() {
                let done = run_in_call(prepared_run(
                    &this.ctx, &this.slot, stmt, kind, keep_rows, &values,
                ));
                return reply(lua, &this.ctx, done, "<prepared statement>");
            }
            let (ctx, slot) = (Arc::clone(&this.ctx), Arc::clone(&this.slot));
            let run: Running =
                Box::pin(
                    async move { prepared_run(&ctx, &slot, stmt, kind, keep_rows, &values).await },
                );
            start(lua, &this.ctx, "<prepared statement>", run)
        });
        m.add_method("close", |_, _, ()| Ok(()));
    }
}

/// A prepared statement's execution, counted and timed by its text.
async fn prepared_run(
    ctx: &Ctx,
    slot: &Slot,
    stmt: Statement,
    kind: &'static str,
    keep_rows: bool,
    values: &[Value],
) -> Done {
    let mut c = match take(slot) {
        Ok(c) => c,
        Err(e) => return Done::Failed(e),
    };
    let began = Instant::now();
    let done = if keep_rows {
        match c.execute_rows(stmt, values).await {
            Ok(rows) => {
                ctx.timed(StatementClass::Read, kind, began);
                Done::Rows(Rows::new(dbrig_driver::TextRows::from_rows(rows)))
            }
            Err(e) => Done::Failed(e),
        }
    } else {
        match c.execute(stmt, values).await {
            Ok(o) => {
                let class = o.class();
                ctx.timed(class, kind, began);
                if class == StatementClass::Read {
                    Done::Counted(o.rows)
                } else {
                    Done::Nothing
                }
            }
            Err(e) => Done::Failed(e),
        }
    };
    *slot.lock().expect("slot") = Some(c);
    done
}

/// Run a statement on a connection that completes it within the call
/// ([`Connection::completes_in_call`]): its first poll is ready. Were it ever not, it waits
/// on nothing the runtime drives (blocking sockets only), so polling again is all there is
/// to do.
fn run_in_call<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// A result set (`rs.nrows`, `rs.nfields`, `rs:fetch_row()`): its cells as the server's text.
struct Rows {
    text: dbrig_driver::TextRows,
    /// The next row `fetch_row()` returns.
    next: usize,
}

impl Rows {
    fn new(text: dbrig_driver::TextRows) -> Self {
        Self { text, next: 0 }
    }

    /// What `con:query_row()` returns: the first row's cells as values (nil for NULL), or
    /// one nil when there is no row.
    fn first_row(&self, lua: &Lua, out: &mut mlua::MultiValue) -> mlua::Result<()> {
        if self.text.nrows() == 0 {
            out.push_back(LuaValue::Nil);
            return Ok(());
        }
        for cell in self.text.row(0) {
            out.push_back(match cell {
                Some(bytes) => LuaValue::String(lua.create_string(bytes)?),
                None => LuaValue::Nil,
            });
        }
        Ok(())
    }

    /// Row `row` as the Lua table sysbench makes (NULL cells left out).
    fn table(&self, lua: &Lua, row: usize) -> mlua::Result<Table> {
        let t = lua.create_table_with_capacity(self.text.nfields, 0)?;
        for (i, cell) in self.text.row(row).enumerate() {
            if let Some(bytes) = cell {
                t.raw_set(i + 1, lua.create_string(bytes)?)?;
            }
        }
        Ok(t)
    }
}

impl UserData for Rows {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("nrows", |_, this, ()| Ok(this.text.nrows() as f64));
        m.add_method("nfields", |_, this, ()| Ok(this.text.nfields));
        m.add_method_mut("fetch_row", |lua, this, ()| {
            if this.next >= this.text.nrows() {
                return Ok(LuaValue::Nil);
            }
            this.next += 1;
            Ok(LuaValue::Table(this.table(lua, this.next - 1)?))
        });
        // `con:query_row()` on a result its native call did not read: the first row's cells.
        m.add_method("first_row", |lua, this, ()| {
            let mut out = mlua::MultiValue::with_capacity(this.text.nfields);
            this.first_row(lua, &mut out)?;
            Ok(out)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value an option's type does not take is a variant per type, said as before.
    #[test]
    fn option_values_are_checked_by_type() {
        assert_eq!(
            convert_check(OptKind::Bool, "maybe"),
            Err(OptionValueError::NotOnOff("maybe".to_owned()))
        );
        assert_eq!(
            convert_check(OptKind::Number, "ten"),
            Err(OptionValueError::NotANumber("ten".to_owned()))
        );
        assert_eq!(
            OptionValueError::NotOnOff("maybe".to_owned()).to_string(),
            "'maybe' is not on or off"
        );
        assert_eq!(convert_check(OptKind::Bool, "on"), Ok(()));
        assert_eq!(convert_check(OptKind::Number, " 1.5 "), Ok(()));
        assert_eq!(convert_check(OptKind::String, "anything"), Ok(()));
    }

    /// What a state declares: an option entry that is not a table is told as such, a state
    /// without the API is Lua's own error on one line.
    #[test]
    fn declared_options_that_do_not_read_are_typed() {
        let lua = Lua::new();
        lua.load("sysbench = { cmdline = { options = { rows = 10 } } }")
            .exec()
            .unwrap();
        let e = declared(&lua).unwrap_err();
        assert!(matches!(e, StateError::OptionEntry), "{e:?}");
        assert_eq!(
            e.to_string(),
            "sysbench.cmdline.options: each entry is NAME = {description, default}"
        );
        let lua = Lua::new();
        lua.load("sysbench = { cmdline = { options = { rows = {'how many', 10} } } }")
            .exec()
            .unwrap();
        let d = declared(&lua).unwrap();
        assert_eq!((d[0].name.as_str(), d[0].kind), ("rows", OptKind::Number));
        let e = declared(&Lua::new()).unwrap_err();
        assert!(matches!(e, StateError::Lua(_)), "{e:?}");
        assert!(!e.to_string().contains("stack traceback"), "{e}");
    }
}
