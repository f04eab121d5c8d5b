//! The Rust half of dbrig's sysbench 1.0 API: a Lua state per client with `sysbench.*`
//! (options, random numbers, the SQL objects' native methods over dbrig's drivers); the
//! objects scripts see and the error values they raise are built in `prelude.lua`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_core::{ErrorClass, EventTally, KeyDistribution, KeyGenerator, StatementClass, Value};
use dbrig_driver::{ConnectOptions, Connection, Dialect, DriverError, Statement, Target};
use mlua::{Function, Lua, Table, UserData, UserDataMethods, Value as LuaValue};
use rand::Rng;

use super::{SYSBENCH_DIRS, SYSBENCH_VERSION, Script};
use crate::options::RunOptions;

const PRELUDE: &str = include_str!("prelude.lua");

/// The connection a script's `con` stands for, out of its slot while a statement runs.
pub type Slot = Mutex<Option<Connection>>;

/// sysbench's option types (`sysbench.cmdline.ARG_*`), as far as values are converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    Bool,
    Number,
    String,
    List,
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

    /// sysbench's `rand.string`: `#` a digit, `@` a lowercase letter, anything else kept.
    fn string(&mut self, template: &str) -> String {
        let rng = self.default.rng();
        template
            .chars()
            .map(|c| match c {
                '#' => char::from(b'0' + rng.random_range(0..10u8)),
                '@' => char::from(b'a' + rng.random_range(0..26u8)),
                c => c,
            })
            .collect()
    }
}

/// What a state's native functions share: where to connect, the runner's connection (taken
/// by the first `drv:connect()`), the event's counters and timings, the random numbers, and
/// the last SQL error (handed to the runner when the event restarts).
pub struct Ctx {
    target: Target,
    connect: ConnectOptions,
    runner: Mutex<Option<Arc<Slot>>>,
    pub tally: Mutex<EventTally>,
    rand: Mutex<Rand>,
    pub last_error: Mutex<Option<DriverError>>,
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
        })
    }

    fn count(&self, class: StatementClass) {
        self.tally.lock().expect("tally").queries.count(class);
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
) -> Result<Lua, String> {
    let lua = Lua::new();
    let e = |e: mlua::Error| super::one_line(&e);
    install(&lua, script, ctx, tid, command, run).map_err(e)?;
    let name = format!("@{}", script.path.display());
    lua.load(&script.source).set_name(name).exec().map_err(e)?;
    set_opts(&lua, script, threads, run).map_err(e)?;
    Ok(lua)
}

fn install(
    lua: &Lua,
    script: &Script,
    ctx: &Arc<Ctx>,
    tid: u32,
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
    let raw = lua.create_table()?;
    raw.set("driver_name", driver_name(ctx.target.dialect()))?;
    {
        let ctx = Arc::clone(ctx);
        raw.set(
            "rand_string",
            lua.create_function(move |_, t: String| Ok(ctx.rand.lock().expect("rand").string(&t)))?,
        )?;
    }
    {
        let ctx = Arc::clone(ctx);
        raw.set(
            "connect",
            lua.create_async_function(move |lua, ()| {
                let ctx = Arc::clone(&ctx);
                async move {
                    let runner = ctx.runner.lock().expect("runner slot").take();
                    let (slot, owned) = match runner {
                        Some(s) => (s, false),
                        None => match Connection::connect(&ctx.target, &ctx.connect).await {
                            Ok(c) => (Arc::new(Mutex::new(Some(c))), true),
                            Err(e) => {
                                return Ok((
                                    LuaValue::Nil,
                                    LuaValue::Table(errdesc(&lua, &ctx, e, "")?),
                                ));
                            }
                        },
                    };
                    let con = Con {
                        ctx: Arc::clone(&ctx),
                        slot,
                        owned,
                        bulk: Mutex::new(None),
                    };
                    Ok((LuaValue::UserData(lua.create_userdata(con)?), LuaValue::Nil))
                }
            })?,
        )?;
    }
    lua.load(PRELUDE)
        .set_name("=dbrig-sysbench-api")
        .call::<()>(raw.clone())?;
    let run_event: Function = raw.get("run_event")?;
    lua.set_named_registry_value("dbrig_run_event", run_event)?;
    let close: Function = raw.get("report_json_close")?;
    lua.set_named_registry_value("dbrig_report_json_close", close)?;
    let _ = run;
    Ok(())
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
    let c = Arc::clone(ctx);
    t.set(
        "uniform",
        lua.create_function(move |_, (a, b): (f64, f64)| {
            Ok(c.rand
                .lock()
                .expect("rand")
                .default
                .uniform(a as i64, b as i64))
        })?,
    )?;
    let c = Arc::clone(ctx);
    t.set(
        "default",
        lua.create_function(move |_, (a, b): (f64, f64)| {
            Ok(c.rand.lock().expect("rand").default.key(a as i64, b as i64))
        })?,
    )?;
    for name in ["gaussian", "special", "pareto", "zipfian"] {
        let c = Arc::clone(ctx);
        t.set(
            name,
            lua.create_function(move |_, (a, b): (f64, f64)| {
                Ok(c.rand
                    .lock()
                    .expect("rand")
                    .named(name)
                    .key(a as i64, b as i64))
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

/// The options the script declared (after its top level ran).
pub fn declared(lua: &Lua) -> Result<Vec<Declared>, String> {
    let e = |e: mlua::Error| super::one_line(&e);
    let sb: Table = lua.globals().get("sysbench").map_err(e)?;
    let cmdline: Table = sb.get("cmdline").map_err(e)?;
    let Ok(Some(opts)) = cmdline.get::<Option<Table>>("options") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for pair in opts.pairs::<String, Table>() {
        let (name, def) = pair.map_err(|_| {
            "sysbench.cmdline.options: each entry is NAME = {description, default}".to_owned()
        })?;
        let description: String = def.get::<Option<String>>(1).map_err(e)?.unwrap_or_default();
        let default: LuaValue = def.get(2).map_err(e)?;
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

pub fn convert_check(kind: OptKind, v: &str) -> Result<(), String> {
    match kind {
        OptKind::Bool if parse_bool(v).is_none() => Err(format!("'{v}' is not on or off")),
        OptKind::Number if v.trim().parse::<f64>().is_err() => {
            Err(format!("'{v}' is not a number"))
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
    let declared = declared(lua).map_err(mlua::Error::RuntimeError)?;
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

/// A command's function and whether it runs in every thread: `sysbench.cmdline.commands`
/// first, else the global function of that name.
pub fn command(lua: &Lua, name: &str) -> Result<(Option<Function>, bool), String> {
    let e = |e: mlua::Error| super::one_line(&e);
    let sb: Table = lua.globals().get("sysbench").map_err(e)?;
    let cmdline: Table = sb.get("cmdline").map_err(e)?;
    if let Ok(Some(cmds)) = cmdline.get::<Option<Table>>("commands")
        && let Ok(Some(entry)) = cmds.get::<Option<Table>>(name)
        && let Ok(Some(f)) = entry.get::<Option<Function>>(1)
    {
        let parallel = matches!(entry.get::<LuaValue>(2), Ok(LuaValue::Boolean(true)));
        return Ok((Some(f), parallel));
    }
    Ok((
        lua.globals().get::<Option<Function>>(name).map_err(e)?,
        false,
    ))
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

fn take(slot: &Slot) -> Result<Connection, DriverError> {
    slot.lock().expect("slot").take().ok_or_else(|| {
        DriverError::fatal(
            dbrig_driver::ErrorKind::ConnectionLost,
            "the connection is closed (con:disconnect())",
        )
    })
}

/// Whether a text query returns rows (sysbench counts it a read then).
fn returns_rows(sql: &str) -> bool {
    let word: String = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    matches!(
        word.as_str(),
        "SELECT"
            | "SHOW"
            | "WITH"
            | "VALUES"
            | "EXPLAIN"
            | "DESCRIBE"
            | "DESC"
            | "TABLE"
            | "PRAGMA"
            | "ANALYZE"
            | "CHECK"
            | "CHECKSUM"
    )
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

/// sysbench's bulk insert buffer size: a multi-row INSERT is sent when the next row would
/// pass it.
const BULK_BYTES: usize = 512 * 1024;

struct Bulk {
    head: usize,
    buf: String,
    rows: usize,
}

/// A script's connection (`con`).
struct Con {
    ctx: Arc<Ctx>,
    slot: Arc<Slot>,
    /// Opened by the script (a second `drv:connect()`, a command's): closed by
    /// `disconnect`. The runner's connection is the runner's to close.
    owned: bool,
    bulk: Mutex<Option<Bulk>>,
}

type Reply = (LuaValue, LuaValue);

async fn text_query(lua: &Lua, ctx: &Arc<Ctx>, slot: &Slot, sql: &str) -> mlua::Result<Reply> {
    let mut c = match take(slot) {
        Ok(c) => c,
        Err(e) => return Ok((LuaValue::Nil, LuaValue::Table(errdesc(lua, ctx, e, sql)?))),
    };
    let r = if returns_rows(sql) {
        c.query_rows(sql, &[], true).await.map(Some)
    } else {
        c.execute_text(sql).await.map(|o| {
            ctx.count(o.class());
            None
        })
    };
    *slot.lock().expect("slot") = Some(c);
    match r {
        Ok(Some(rows)) => {
            ctx.count(StatementClass::Read);
            let nfields = rows
                .columns
                .len()
                .max(rows.rows.first().map_or(0, Vec::len));
            let rs = Rows {
                nrows: rows.rows.len() as u64,
                nfields,
                rows: rows
                    .rows
                    .into_iter()
                    .map(|r| r.iter().map(Value::to_text).collect())
                    .collect(),
                next: 0,
            };
            Ok((LuaValue::UserData(lua.create_userdata(rs)?), LuaValue::Nil))
        }
        Ok(None) => Ok((LuaValue::Nil, LuaValue::Nil)),
        Err(e) => Ok((LuaValue::Nil, LuaValue::Table(errdesc(lua, ctx, e, sql)?))),
    }
}

async fn flush(lua: &Lua, con: &Con, last: bool) -> mlua::Result<LuaValue> {
    let sql = {
        let mut b = con.bulk.lock().expect("bulk");
        let Some(bulk) = b.as_mut() else {
            return Ok(LuaValue::Nil);
        };
        if bulk.rows == 0 {
            if last {
                *b = None;
            }
            return Ok(LuaValue::Nil);
        }
        let sql = bulk.buf.clone();
        bulk.buf.truncate(bulk.head);
        bulk.rows = 0;
        if last {
            *b = None;
        }
        sql
    };
    let (_, err) = text_query(lua, &con.ctx, &con.slot, &sql).await?;
    Ok(err)
}

impl UserData for Con {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_async_method("query", |lua, this, sql: String| async move {
            text_query(&lua, &this.ctx, &this.slot, &sql).await
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
                    let s = Stmt {
                        ctx: Arc::clone(&this.ctx),
                        slot: Arc::clone(&this.slot),
                        stmt,
                        kind: crate::script::intern(
                            sql.split_whitespace().collect::<Vec<_>>().join(" "),
                        ),
                        params: Mutex::new(Vec::new()),
                        sql,
                    };
                    Ok((LuaValue::UserData(lua.create_userdata(s)?), LuaValue::Nil))
                }
                Err(e) => Ok((
                    LuaValue::Nil,
                    LuaValue::Table(errdesc(&lua, &this.ctx, e, &sql)?),
                )),
            }
        });
        m.add_async_method("bulk_insert_init", |lua, this, sql: String| async move {
            let err = flush(&lua, &this, true).await?;
            *this.bulk.lock().expect("bulk") = Some(Bulk {
                head: sql.len(),
                buf: sql,
                rows: 0,
            });
            Ok(err)
        });
        m.add_async_method("bulk_insert_next", |lua, this, row: String| async move {
            let full = {
                let b = this.bulk.lock().expect("bulk");
                let Some(bulk) = b.as_ref() else {
                    return Err(mlua::Error::RuntimeError(
                        "bulk_insert_next() before bulk_insert_init()".into(),
                    ));
                };
                bulk.rows > 0 && bulk.buf.len() + row.len() + 2 > BULK_BYTES
            };
            let err = if full {
                flush(&lua, &this, false).await?
            } else {
                LuaValue::Nil
            };
            if let Some(bulk) = this.bulk.lock().expect("bulk").as_mut() {
                if bulk.rows > 0 {
                    bulk.buf.push(',');
                }
                bulk.buf.push_str(&row);
                bulk.rows += 1;
            }
            Ok(err)
        });
        m.add_async_method("bulk_insert_done", |lua, this, ()| async move {
            flush(&lua, &this, true).await
        });
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
                c.close().await;
            }
            Ok(())
        });
    }
}

/// A bind parameter's value (`param:set(v)`).
struct Param {
    value: Arc<Mutex<Value>>,
    int: bool,
    max_len: Option<usize>,
}

impl UserData for Param {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("set", |_, this, v: LuaValue| {
            let value = match v {
                LuaValue::Nil => Value::Null,
                LuaValue::Integer(i) => Value::Int(i),
                LuaValue::Number(n) if this.int => Value::Int(n as i64),
                LuaValue::Number(n) => Value::Float(n),
                LuaValue::Boolean(b) => Value::Int(i64::from(b)),
                LuaValue::String(s) => {
                    let mut s = s.to_string_lossy().to_string();
                    if let Some(max) = this.max_len
                        && s.len() > max
                    {
                        let mut cut = max;
                        while !s.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        s.truncate(cut);
                    }
                    if this.int {
                        s.trim()
                            .parse::<i64>()
                            .map(Value::Int)
                            .unwrap_or(Value::Text(s))
                    } else {
                        Value::Text(s)
                    }
                }
                other => {
                    return Err(mlua::Error::RuntimeError(format!(
                        "cannot bind a {} value",
                        other.type_name()
                    )));
                }
            };
            *this.value.lock().expect("param") = value;
            Ok(())
        });
    }
}

/// A prepared statement (`con:prepare(sql)`).
struct Stmt {
    ctx: Arc<Ctx>,
    slot: Arc<Slot>,
    stmt: Statement,
    /// The statement's text: its per-statement latency histogram.
    kind: &'static str,
    params: Mutex<Vec<Arc<Mutex<Value>>>>,
    sql: String,
}

impl UserData for Stmt {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method(
            "bind_create",
            |lua, _, (btype, max_len): (i64, Option<f64>)| {
                let (int, max) = match btype {
                    1..=4 => (true, None),
                    5 | 6 => (false, None),
                    11 | 12 => (false, max_len.map(|n| n as usize)),
                    7..=10 => (false, None),
                    _ => {
                        return Err(mlua::Error::RuntimeError(format!(
                            "Unsupported argument type: {btype}"
                        )));
                    }
                };
                lua.create_userdata(Param {
                    value: Arc::new(Mutex::new(Value::Null)),
                    int,
                    max_len: max,
                })
            },
        );
        m.add_method("bind_param", |_, this, ps: Vec<mlua::AnyUserData>| {
            let mut v = Vec::with_capacity(ps.len());
            for p in ps {
                v.push(Arc::clone(&p.borrow::<Param>()?.value));
            }
            *this.params.lock().expect("params") = v;
            Ok(())
        });
        m.add_async_method("execute", |lua, this, ()| async move {
            let values: Vec<Value> = this
                .params
                .lock()
                .expect("params")
                .iter()
                .map(|p| p.lock().expect("param").clone())
                .collect();
            let mut c = match take(&this.slot) {
                Ok(c) => c,
                Err(e) => {
                    return Ok((
                        LuaValue::Nil,
                        LuaValue::Table(errdesc(&lua, &this.ctx, e, &this.sql)?),
                    ));
                }
            };
            let began = Instant::now();
            let r = c.execute(this.stmt, &values).await;
            let us = began.elapsed().as_micros() as u64;
            *this.slot.lock().expect("slot") = Some(c);
            match r {
                Ok(o) => {
                    let class = o.class();
                    {
                        let mut t = this.ctx.tally.lock().expect("tally");
                        t.queries.count(class);
                        t.time(this.kind, us);
                    }
                    if class == StatementClass::Read {
                        let rs = Rows {
                            nrows: o.rows,
                            nfields: 0,
                            rows: Vec::new(),
                            next: usize::MAX,
                        };
                        return Ok((LuaValue::UserData(lua.create_userdata(rs)?), LuaValue::Nil));
                    }
                    Ok((LuaValue::Nil, LuaValue::Nil))
                }
                Err(e) => Ok((
                    LuaValue::Nil,
                    LuaValue::Table(errdesc(&lua, &this.ctx, e, &this.sql)?),
                )),
            }
        });
        m.add_method("close", |_, _, ()| Ok(()));
    }
}

/// A result set (`rs.nrows`, `rs.nfields`, `rs:fetch_row()`).
struct Rows {
    nrows: u64,
    nfields: usize,
    rows: Vec<Vec<Option<String>>>,
    /// usize::MAX: a prepared statement's result, whose rows dbrig reads and counts but does
    /// not keep.
    next: usize,
}

impl UserData for Rows {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("nrows", |_, this, ()| Ok(this.nrows as f64));
        m.add_method("nfields", |_, this, ()| Ok(this.nfields));
        m.add_method_mut("fetch_row", |lua, this, ()| {
            if this.next == usize::MAX {
                return Err(mlua::Error::RuntimeError(
                    "not supported: fetch_row() on a prepared statement's result (use con:query())"
                        .into(),
                ));
            }
            let Some(row) = this.rows.get(this.next) else {
                return Ok(LuaValue::Nil);
            };
            this.next += 1;
            let t = lua.create_table()?;
            for (i, v) in row.iter().enumerate() {
                if let Some(v) = v {
                    t.set(i + 1, v.as_str())?;
                }
            }
            Ok(LuaValue::Table(t))
        });
    }
}
