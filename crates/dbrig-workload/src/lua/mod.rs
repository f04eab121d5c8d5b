//! sysbench Lua scripts, unchanged, as a workload of the one runner (issue 17).
//!
//! Each client has its own LuaJIT state (mlua) holding the script and dbrig's sysbench 1.0 API
//! (`api.rs`, with its Lua half in `prelude.lua`; the calls events make most go through
//! LuaJIT's FFI to `fast.rs`, which the JIT compiles into plain calls). An event is one call
//! of the script's `event()` as a coroutine: a statement awaits dbrig's async driver and the
//! coroutine yields, so thousands of clients share a few worker threads. The client's first `drv:connect()` is
//! the runner's connection for that client (so the runner's reconnects and retries apply to
//! it); statements are counted read / write / other as sysbench counts them and prepared
//! statements are timed per statement text.
//!
//! Commands (`prepare`, `cleanup`, `prewarm`) run the script's `sysbench.cmdline.commands`
//! entry (in `--threads` states when it is a parallel command) or its global function of that
//! name, as sysbench does; `init` / `done` run around the trial in a state of their own.

mod api;
mod fast;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clap::Args;
use dbrig_core::{ErrorClass, EventTally, KeyGenerator};
use dbrig_driver::{ConnectOptions, Connection, DriverError, ErrorKind, Target};
use fast::LuaState;
use mlua::{Function, Value as LuaValue};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::options::RunOptions;
pub use api::Declared;
use api::{Ctx, OptKind, Slot};

/// Folders `require` searches after the script's own: where Debian's sysbench package puts
/// its bundled scripts (`oltp_common.lua`).
pub const SYSBENCH_DIRS: [&str; 2] = ["/usr/share/sysbench", "/usr/local/share/sysbench"];

/// Scripts' `print` / `io.write` go to stderr instead of stdout (set when stdout carries one
/// JSON document, `--format json`).
static TO_STDERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Send scripts' output to stderr from now on.
pub fn script_output_to_stderr() {
    TO_STDERR.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The version scripts see as `sysbench.version`: the API dbrig follows.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// Options of a sysbench Lua script workload: the script and the options it declares.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct LuaOptions {
    /// The sysbench Lua script (the workload name ending in `.lua`).
    #[arg(skip)]
    pub script: String,
    /// An option the script declares in `sysbench.cmdline.options`, as NAME=VALUE
    /// (repeatable); `dbrig run FILE.lua --NAME=VALUE` sets it too.
    #[arg(long = "script-option", value_name = "NAME=VALUE")]
    pub script_options: Vec<String>,
}

/// A loaded script: its text, the options it declares and the values given for them.
#[derive(Debug)]
struct Script {
    path: PathBuf,
    source: String,
    declared: Vec<Declared>,
    values: Vec<(String, String)>,
    /// Whether the script's text or a module it loads at its top level names `fetch_row`:
    /// only then are a prepared statement's rows decoded and kept for it. sysbench's bundled
    /// scripts never read them, and decoding every range query's rows would cost each of
    /// their statements more than all the rest.
    prepared_rows: bool,
    /// The commands the script declares in `sysbench.cmdline.commands` (a TPC-C suite's
    /// `check`), in name order.
    commands: Vec<String>,
}

/// A sysbench Lua script as a workload.
#[derive(Debug, Clone)]
pub struct LuaWorkload {
    pub options: Arc<LuaOptions>,
    script: Arc<Script>,
    /// The trial's run options (`sysbench.opt.threads`, `--percentile`, the key
    /// distributions' parameters), set by the trial before the runner starts.
    run: Arc<Mutex<RunOptions>>,
}

/// Whether a workload name is a Lua script.
pub fn is_script_name(name: &str) -> bool {
    name.ends_with(".lua")
}

/// Find a script: as given, else in sysbench's folders (`dbrig run oltp_read_write.lua`
/// finds the bundled one, as sysbench does).
fn locate(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.is_file() {
        return Some(p.to_path_buf());
    }
    if p.components().count() == 1 {
        for d in SYSBENCH_DIRS {
            let c = Path::new(d).join(name);
            if c.is_file() {
                return Some(c);
            }
        }
    }
    None
}

fn parse_pairs(list: &[String]) -> Result<Vec<(String, String)>, WorkloadError> {
    list.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().replace('-', "_"), v.to_owned()))
                .ok_or_else(|| {
                    WorkloadError::InvalidOptions(format!(
                        "--script-option {s}: expected NAME=VALUE"
                    ))
                })
        })
        .collect()
}

impl LuaWorkload {
    /// Load a script and check the options given against the ones it declares.
    pub fn new(options: LuaOptions) -> Result<Self, WorkloadError> {
        let path = locate(&options.script).ok_or_else(|| {
            // A `.lua` name is a file; say so when it is also dbrig's own workload's name.
            let own = options.script.trim_end_matches(".lua");
            let hint = if crate::OltpKind::from_name(own).is_some() {
                format!(" (dbrig's own {own} is `{own}`, without .lua)")
            } else {
                String::new()
            };
            WorkloadError::InvalidOptions(format!(
                "script {} not found (looked there and in {}){hint}",
                options.script,
                SYSBENCH_DIRS.join(", ")
            ))
        })?;
        let source = std::fs::read_to_string(&path).map_err(|e| {
            WorkloadError::InvalidOptions(format!("cannot read {}: {e}", path.display()))
        })?;
        let values = parse_pairs(&options.script_options)?;
        let mut script = Script {
            path,
            source,
            declared: Vec::new(),
            values,
            prepared_rows: false,
            commands: Vec::new(),
        };
        // The declared options: the script's top level run once in a state of its own.
        let ctx = Ctx::new(
            mock_target(),
            ConnectOptions::default(),
            None,
            rand(0, None),
        );
        let lua = api::new_state(&script, &ctx, 0, 1, "run", &RunOptions::default())
            .map_err(|m| lua_error(&script.path, "loading", m))?;
        script.declared = api::declared(&lua).map_err(|m| lua_error(&script.path, "loading", m))?;
        script.commands = api::commands(&lua);
        script.prepared_rows =
            script.source.contains("fetch_row") || api::modules_name(&lua, "fetch_row");
        for (name, _) in &script.values {
            if !script.declared.iter().any(|d| &d.name == name) {
                return Err(WorkloadError::InvalidOptions(format!(
                    "{}: the script declares no option --{name} (see `dbrig list --script {}`)",
                    script.path.display(),
                    script.path.display()
                )));
            }
        }
        for (name, value) in &script.values {
            let d = script
                .declared
                .iter()
                .find(|d| &d.name == name)
                .expect("checked");
            d.kind
                .check(value)
                .map_err(|m| WorkloadError::InvalidOptions(format!("--{name}: {m}")))?;
        }
        Ok(Self {
            options: Arc::new(options),
            script: Arc::new(script),
            run: Arc::new(Mutex::new(RunOptions::default())),
        })
    }

    /// The workload name results are stored under: the script's file name.
    pub fn name(&self) -> &'static str {
        crate::script::intern(
            self.script
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.options.script.clone()),
        )
    }

    pub fn path(&self) -> &Path {
        &self.script.path
    }

    /// The options the script declares (`dbrig list --script FILE`).
    pub fn declared(&self) -> &[Declared] {
        &self.script.declared
    }

    /// The options as stored with results: the script's path and every declared option's
    /// value (given or default).
    pub fn options_json(&self) -> serde_json::Value {
        let mut opts = serde_json::Map::new();
        for d in &self.script.declared {
            let v = self
                .script
                .values
                .iter()
                .find(|(n, _)| n == &d.name)
                .map(|(_, v)| v.clone())
                .or_else(|| d.default.clone());
            opts.insert(
                d.name.clone(),
                v.map(serde_json::Value::String)
                    .unwrap_or(serde_json::Value::Null),
            );
        }
        serde_json::json!({
            "script": self.script.path.display().to_string(),
            "script-options": opts,
        })
    }

    pub fn notes(&self) -> Vec<String> {
        vec![format!(
            "sysbench Lua script {} run by dbrig's embedded LuaJIT",
            self.script.path.display()
        )]
    }

    /// Set the trial's run options (before the runner starts the clients).
    pub fn set_run(&self, run: &RunOptions) {
        *self.run.lock().expect("run options lock") = run.clone();
    }

    fn run_options(&self) -> RunOptions {
        self.run.lock().expect("run options lock").clone()
    }

    /// Run a command of the script (`prepare`, `cleanup`, `prewarm`, or a custom one) as
    /// sysbench does: `sysbench.cmdline.commands[NAME]` (in `threads` states when it is a
    /// parallel command), else the global function NAME. A parallel command's states each run
    /// on an OS thread of their own, as sysbench's threads do: one that blocks (a script's
    /// `os.execute("sleep 30")`, `ffi.C.usleep` while it waits for the others' tables) holds
    /// up no other.
    pub async fn command(
        &self,
        name: &str,
        target: &Target,
        connect: &ConnectOptions,
        run: &RunOptions,
    ) -> Result<(), WorkloadError> {
        let threads = run.threads.max(1);
        let lua = command_state(&self.script, target, connect, run, 0, name)?;
        let (f, parallel) =
            api::command(&lua, name).map_err(|m| lua_error(&self.script.path, name, m))?;
        let Some(f) = f else {
            return Err(WorkloadError::InvalidOptions(format!(
                "{}: the script has no {name} command (neither sysbench.cmdline.commands.{name} nor a function {name}())",
                self.script.path.display()
            )));
        };
        if !parallel {
            return call_hook(&self.script.path, name, f.call_async::<LuaValue>(())).await;
        }
        drop((f, lua));
        let mut done = Vec::with_capacity(threads as usize);
        for tid in 0..threads {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let script = Arc::clone(&self.script);
            let (target, connect, run) = (target.clone(), connect.clone(), run.clone());
            let command = name.to_owned();
            let spawned = std::thread::Builder::new()
                .name(format!("lua-{name}-{tid}"))
                .spawn(move || {
                    let _ = tx.send(command_thread(
                        &script, &target, &connect, &run, tid, &command,
                    ));
                });
            match spawned {
                Ok(_) => done.push(rx),
                Err(e) => {
                    return Err(WorkloadError::InvalidOptions(format!(
                        "{}: {name}: cannot start thread {tid} of {threads}: {e}",
                        self.script.path.display()
                    )));
                }
            }
        }
        let results = futures_util::future::join_all(done).await;
        results.into_iter().try_for_each(|r| {
            r.unwrap_or_else(|_| {
                Err(lua_error(
                    &self.script.path,
                    name,
                    "its thread ended without an answer (it panicked)",
                ))
            })
        })
    }

    /// The name the registry keeps this script's prepare under (`lua:FILE.lua`).
    fn registry_name(&self) -> String {
        format!("lua:{}", self.name()).chars().take(64).collect()
    }

    /// What the script was prepared with: a digest of its declared options' values (the
    /// registry's column is short; the options' JSON may not be).
    fn data_digest(&self) -> String {
        // FNV-1a: stable across Rust versions, unlike the std hasher.
        let text = self.options_json().to_string();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// The script's `prepare` command, registered (`dbrig prepare FILE.lua`, a plan's
    /// prepare step): `loading` before it runs, `ready` after, forgotten when it fails (its
    /// failure may be a table that was already there, which is not dbrig's to drop later).
    pub async fn prepare(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        run: &RunOptions,
    ) -> Result<(), WorkloadError> {
        let name = self.registry_name();
        let mut conn = Connection::connect(target, connect).await?;
        crate::registry::record_script(&mut conn, &name, &self.data_digest()).await?;
        let r = self.command("prepare", target, connect, run).await;
        let marked = match &r {
            Ok(()) => crate::registry::script_prepared(&mut conn, &name).await,
            Err(_) => crate::registry::forget(&mut conn, &name).await,
        };
        conn.close().await;
        r?;
        marked
    }

    /// The script's `cleanup` command; its registry entry goes with it.
    pub async fn cleanup(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        run: &RunOptions,
    ) -> Result<(), WorkloadError> {
        self.command("cleanup", target, connect, run).await?;
        let mut conn = Connection::connect(target, connect).await?;
        let r = crate::registry::forget(&mut conn, &self.registry_name()).await;
        conn.close().await;
        r
    }

    /// A plan's prepare step: the script's `prepare` unless the registry says it ran here
    /// with the same options. A prepare that was interrupted, or made with other options,
    /// is undone by the script's `cleanup` first. Returns a line saying what was done.
    pub async fn prepare_if_missing(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        seed: u64,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Option<crate::Prepared>, WorkloadError> {
        let mut run = self.run_options();
        run.threads = threads.max(1);
        run.rand_seed = seed;
        let mut conn = Connection::connect(target, connect).await?;
        let entry = crate::registry::lookup(&mut conn, &self.registry_name()).await;
        conn.close().await;
        let digest = self.data_digest();
        match entry? {
            Some(e) if e.state == "ready" && (e.data == digest || e.marker == "mock") => {
                return Ok(None);
            }
            Some(e) => {
                progress.note(&format!(
                    "{} on {target} was {}: running its cleanup first",
                    self.name(),
                    if e.state == "ready" {
                        "prepared with other options"
                    } else {
                        "left half-prepared by an interrupted prepare"
                    }
                ));
                self.cleanup(target, connect, &run).await?;
            }
            None => {}
        }
        progress.note(&format!("preparing {} on {target}", self.name()));
        let began = std::time::Instant::now();
        self.prepare(target, connect, &run).await.map_err(|e| {
            WorkloadError::InvalidOptions(format!(
                "{e} (a plan runs a script's prepare unless dbrig's registry says it ran there with these options; for tables prepared otherwise, set `prepare = false` on the workload)"
            ))
        })?;
        Ok(Some(crate::Prepared {
            line: format!(
                "ran {}'s prepare in {:.2} s",
                self.name(),
                began.elapsed().as_secs_f64()
            ),
            figures: None,
        }))
    }

    /// The script's `init()` / `done()` (run once, before the clients start and after they
    /// end), when it defines them.
    pub async fn global_hook(&self, name: &str, target: &Target) -> Result<(), WorkloadError> {
        let run = self.run_options();
        let ctx = Ctx::new(
            target.clone(),
            run.connect_options(),
            None,
            rand(run.resolved_seed(), Some(run.key_distribution())),
        );
        let lua = api::new_state(&self.script, &ctx, 0, run.threads, "run", &run)
            .map_err(|m| lua_error(&self.script.path, name, m))?;
        match lua.globals().get::<Option<Function>>(name) {
            Ok(Some(f)) => call_hook(&self.script.path, name, f.call_async::<LuaValue>(())).await,
            _ => Ok(()),
        }
    }

    /// A client: its own Lua state with the script loaded and `thread_init` run. The runner's
    /// connection for this client is what its first `drv:connect()` returns.
    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        threads: u32,
        keys: KeyGenerator,
        seed: u64,
    ) -> Result<LuaClient, DriverError> {
        let run = self.run_options();
        let slot: Arc<Slot> = Arc::new(Mutex::new(None));
        let ctx = Ctx::new(
            conn.target().clone(),
            run.connect_options(),
            Some(Arc::clone(&slot)),
            api::Rand::new(
                keys,
                seed ^ u64::from(index).wrapping_mul(0x9E37_79B9),
                &run,
            ),
        );
        let lua = api::new_state(&self.script, &ctx, index, threads, "run", &run)
            .map_err(|m| fatal(&self.script.path, "loading", m))?;
        let placeholder =
            Box::new(Connection::connect(&mock_target(), &ConnectOptions::default()).await?);
        let event_loop: Function = lua
            .named_registry_value("dbrig_event_loop")
            .map_err(|e| fatal(&self.script.path, "loading", e.to_string()))?;
        let has_event = matches!(
            lua.globals().get::<LuaValue>("event"),
            Ok(LuaValue::Function(_))
        );
        if !has_event {
            return Err(fatal(
                &self.script.path,
                "loading",
                "the script defines no event() function",
            ));
        }
        let mut client = LuaClient {
            script: Arc::clone(&self.script),
            lua,
            ctx,
            slot,
            placeholder: Some(placeholder),
            event_loop,
            events: None,
            in_event: false,
            index,
            stopped: false,
        };
        let init = client.lua.globals().get::<Option<Function>>("thread_init");
        if let Ok(Some(f)) = init {
            client.lend(conn);
            let r = f.call_async::<LuaValue>(index).await;
            client.take_back(conn);
            client.ctx.tally.lock().expect("tally").clear();
            r.map_err(|e| client.hook_error("thread_init", e))?;
        }
        // Loading and thread_init leave garbage (the parse, the script's setup); with
        // thousands of states, a collection now and a tighter pause keep each one small.
        let _ = client.lua.gc_collect();
        client.lua.gc_set_pause(120);
        Ok(client)
    }
}

/// The script's report hooks (`sysbench.hooks.report_intermediate` / `report_cumulative`),
/// in a state of their own as sysbench's reporting thread has. An interval sample goes to
/// the hook instead of the default line when the script sets one; the cumulative hook runs
/// after the trial (dbrig's own report follows it).
pub struct Reporter<'a> {
    path: PathBuf,
    inner: &'a dyn crate::progress::Progress,
    intermediate: Option<Function>,
    cumulative: Option<Function>,
    interval_s: f64,
    /// Last: the hooks above are dropped before it closes.
    lua: LuaState,
}

impl<'a> Reporter<'a> {
    pub fn new(
        w: &LuaWorkload,
        target: &Target,
        inner: &'a dyn crate::progress::Progress,
    ) -> Result<Self, WorkloadError> {
        let run = w.run_options();
        let ctx = Ctx::new(
            target.clone(),
            run.connect_options(),
            None,
            rand(run.resolved_seed(), None),
        );
        let lua = api::new_state(&w.script, &ctx, 0, run.threads, "run", &run)
            .map_err(|m| lua_error(&w.script.path, "loading", m))?;
        let hook = |name: &str| -> Option<Function> {
            let sb: mlua::Table = lua.globals().get("sysbench").ok()?;
            let hooks: mlua::Table = sb.get("hooks").ok()?;
            hooks.get::<Option<Function>>(name).ok().flatten()
        };
        let intermediate = hook("report_intermediate");
        let cumulative = hook("report_cumulative");
        Ok(Self {
            path: w.script.path.clone(),
            intermediate,
            cumulative,
            interval_s: if run.report_interval > 0.0 {
                run.report_interval
            } else {
                1.0
            },
            lua,
            inner,
        })
    }

    fn stat(&self, f: &[(&str, f64)]) -> mlua::Result<mlua::Table> {
        let t = self.lua.create_table()?;
        for (k, v) in f {
            t.set(*k, *v)?;
        }
        Ok(t)
    }

    /// The cumulative hook with the trial's totals, as sysbench's `stat` table has them.
    pub fn cumulative(&self, m: &dbrig_core::Measurements) -> Result<(), WorkloadError> {
        let Some(f) = &self.cumulative else {
            return Ok(());
        };
        let lat = m.latency.percentile_us(m.percentile) as f64 / 1e6;
        let stat = self
            .stat(&[
                ("threads_running", f64::from(m.threads)),
                ("time_interval", m.duration_s),
                ("time_total", m.duration_s),
                ("latency_pct", lat),
                ("events", m.transactions as f64),
                ("reads", m.queries.read as f64),
                ("writes", m.queries.write as f64),
                ("other", m.queries.other as f64),
                ("errors", m.ignored_errors as f64),
                ("reconnects", m.reconnects as f64),
            ])
            .map_err(|e| lua_error(&self.path, "report_cumulative", one_line(&e)))?;
        f.call::<()>(stat)
            .map_err(|e| lua_error(&self.path, "report_cumulative", one_line(&e)))?;
        self.close_json();
        Ok(())
    }

    fn close_json(&self) {
        if let Ok(f) = self
            .lua
            .named_registry_value::<Function>("dbrig_report_json_close")
        {
            let _ = f.call::<()>(());
        }
    }
}

impl crate::progress::Progress for Reporter<'_> {
    fn event(&self, event: crate::progress::ProgressEvent<'_>) {
        let crate::progress::ProgressEvent::Interval(s) = event else {
            return self.inner.event(event);
        };
        let Some(f) = &self.intermediate else {
            return self.inner.event(event);
        };
        let d = self.interval_s;
        let stat = self.stat(&[
            ("threads_running", f64::from(s.threads)),
            ("time_interval", d),
            ("time_total", s.t_s),
            ("latency_pct", s.latency_pct_ms / 1000.0),
            ("events", s.tps * d),
            ("reads", s.reads_ps * d),
            ("writes", s.writes_ps * d),
            ("other", s.other_ps * d),
            ("errors", s.errors_ps * d),
            ("reconnects", s.reconnects_ps * d),
        ]);
        let r = stat.and_then(|t| f.call::<()>(t));
        if let Err(e) = r {
            self.inner
                .note(&lua_error(&self.path, "report_intermediate", one_line(&e)).to_string());
        }
    }
}

impl Drop for Reporter<'_> {
    fn drop(&mut self) {
        if self.cumulative.is_none() {
            self.close_json();
        }
    }
}

/// A state for a command: thread `tid` of `run.threads`, its random numbers seeded from the
/// run's seed and the thread.
fn command_state(
    script: &Script,
    target: &Target,
    connect: &ConnectOptions,
    run: &RunOptions,
    tid: u32,
    name: &str,
) -> Result<LuaState, WorkloadError> {
    let seed = run.resolved_seed();
    let ctx = Ctx::new(
        target.clone(),
        connect.clone(),
        None,
        rand(
            seed.wrapping_add(u64::from(tid) + 1),
            Some(run.key_distribution()),
        ),
    );
    api::new_state(script, &ctx, tid, run.threads.max(1), name, run)
        .map_err(|m| lua_error(&script.path, name, m))
}

/// Thread `tid` of a parallel command: its own state and a runtime of its own for its
/// statements.
fn command_thread(
    script: &Script,
    target: &Target,
    connect: &ConnectOptions,
    run: &RunOptions,
    tid: u32,
    name: &str,
) -> Result<(), WorkloadError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            lua_error(
                &script.path,
                name,
                format!("no runtime for thread {tid}: {e}"),
            )
        })?;
    rt.block_on(async {
        let lua = command_state(script, target, connect, run, tid, name)?;
        let (f, _) = api::command(&lua, name).map_err(|m| lua_error(&script.path, name, m))?;
        let f = f.ok_or_else(|| lua_error(&script.path, name, "the command is gone"))?;
        call_hook(&script.path, name, f.call_async::<LuaValue>(())).await
    })
}

/// What a script error becomes in a command or hook: the script, the hook, the message
/// (which holds the line).
fn lua_error(path: &Path, hook: &str, message: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::InvalidOptions(format!("{}: in {hook}: {message}", path.display()))
}

fn fatal(path: &Path, hook: &str, message: impl std::fmt::Display) -> DriverError {
    DriverError::fatal(
        ErrorKind::Statement,
        format!("{}: in {hook}: {message}", path.display()),
    )
}

/// An mlua error as one line: the message with its script line, without the traceback.
fn one_line(e: &mlua::Error) -> String {
    let s = match e {
        mlua::Error::CallbackError { cause, .. } => return one_line(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        e => e.to_string(),
    };
    s.split("\nstack traceback")
        .next()
        .unwrap_or("")
        .trim()
        .to_owned()
}

async fn call_hook(
    path: &Path,
    hook: &str,
    f: impl Future<Output = mlua::Result<LuaValue>>,
) -> Result<(), WorkloadError> {
    match f.await {
        Ok(LuaValue::Boolean(false)) => Err(lua_error(path, hook, "the command failed")),
        Ok(_) => Ok(()),
        Err(e) => Err(lua_error(path, hook, one_line(&e))),
    }
}

fn mock_target() -> Target {
    Target::Mock {
        options: String::new(),
    }
}

fn rand(seed: u64, dist: Option<dbrig_core::KeyDistribution>) -> api::Rand {
    let run = RunOptions::default();
    api::Rand::new(
        KeyGenerator::new(dist.unwrap_or(dbrig_core::KeyDistribution::Uniform), seed),
        seed,
        &run,
    )
}

/// One client's Lua state and the slot through which its script reaches the runner's
/// connection.
pub struct LuaClient {
    script: Arc<Script>,
    ctx: Arc<Ctx>,
    slot: Arc<Slot>,
    /// Left in the runner's hands while the script holds the real connection (the two are
    /// swapped in place: the box goes to the slot with the real one in it).
    placeholder: Option<Box<Connection>>,
    /// The Lua function that runs this client's events in one coroutine (`raw.event_loop`).
    event_loop: Function,
    /// That coroutine, made at the first event: each item it yields is one event's code.
    events: Option<mlua::AsyncThread<i64>>,
    /// An event is under way: still set at the next event's start, the last one was dropped
    /// half-way (its coroutine is then not resumed: a new one starts).
    in_event: bool,
    index: u32,
    /// `event()` returned a true value: sysbench's signal that this thread is done.
    stopped: bool,
    /// Last: the values above that belong to it are dropped before it closes.
    lua: LuaState,
}

impl std::fmt::Debug for LuaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaClient")
            .field("script", &self.script.path)
            .field("index", &self.index)
            .finish()
    }
}

impl LuaClient {
    /// Hand the runner's connection to the script for the length of a call.
    fn lend(&mut self, conn: &mut Connection) {
        let mut lent = self.placeholder.take().expect("placeholder present");
        std::mem::swap(conn, &mut *lent);
        *self.slot.lock().expect("slot") = Some(lent);
    }

    /// Take it back (the script may have closed it: the placeholder then stays).
    fn take_back(&mut self, conn: &mut Connection) {
        if let Some(mut real) = self.slot.lock().expect("slot").take() {
            std::mem::swap(conn, &mut *real);
            self.placeholder = Some(real);
        } else {
            // Never lent, or lost: keep what the runner holds.
            self.placeholder = None;
        }
    }

    /// The error that ends this client in `hook`: the script's `os.exit()` when it called it
    /// (whatever error its `pcall`s made of it after), else `e`.
    fn hook_error(&self, hook: &str, e: mlua::Error) -> DriverError {
        let exit = self.ctx.exit.lock().expect("exit").clone();
        fatal(
            &self.script.path,
            hook,
            exit.unwrap_or_else(|| one_line(&e)),
        )
    }

    /// One event: the script's `event()`, restarted by the runner on a RESTART_EVENT error.
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        if self.placeholder.is_none() {
            let p = Connection::connect(&mock_target(), &ConnectOptions::default()).await?;
            self.placeholder = Some(Box::new(p));
        }
        self.lend(conn);
        if self.in_event || self.events.is_none() {
            let thread = self
                .lua
                .create_thread(self.event_loop.clone())
                .and_then(|t| t.into_async::<i64>(self.index));
            match thread {
                Ok(t) => self.events = Some(t),
                Err(e) => {
                    self.take_back(conn);
                    return Err(self.hook_error("event", e));
                }
            }
        }
        self.in_event = true;
        let next = futures_util::StreamExt::next(self.events.as_mut().expect("made above")).await;
        self.in_event = false;
        let r = match next {
            Some(r) => r,
            None => Err(mlua::Error::CoroutineUnresumable),
        };
        if r.is_err() {
            // A dead coroutine is not resumed again.
            self.events = None;
        }
        self.take_back(conn);
        {
            let mut tally = self.ctx.tally.lock().expect("tally");
            std::mem::swap(&mut *tally, q);
            tally.clear();
        }
        // Statements awaited on the async path (clients sharing a worker) leave garbage that
        // holds Rust memory the collector does not count, so its pace alone let each state
        // keep hundreds of them: 1 024 clients grew by ~60 MB over a 10 s run. A small step
        // per such event keeps them collected.
        if self
            .ctx
            .awaited
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            let _ = self.lua.gc_step_kbytes(1);
        }
        if self.ctx.exit.lock().expect("exit").is_some() {
            self.events = None;
            return Err(self.hook_error("event", mlua::Error::CoroutineUnresumable));
        }
        match r {
            Ok(0) => Ok(()),
            Ok(2) => {
                self.stopped = true;
                Ok(())
            }
            Ok(_) => Err(self
                .ctx
                .last_error
                .lock()
                .expect("last error")
                .take()
                .unwrap_or_else(|| {
                    DriverError::new(
                        ErrorKind::Statement,
                        ErrorClass::Retryable,
                        None,
                        "RESTART_EVENT raised by the script",
                    )
                })),
            Err(e) => Err(self.hook_error("event", e)),
        }
    }

    /// Whether the script asked this client to stop (`event()` returned true).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// After a restarted event: PostgreSQL keeps a failed transaction open until a rollback,
    /// and so does SQLite after a busy or locked error (its next BEGIN would fail "cannot
    /// start a transaction within a transaction"); MariaDB/MySQL roll back a deadlocked
    /// transaction themselves (and sysbench sends nothing). A ROLLBACK with no transaction
    /// open is an error both ignore.
    pub async fn abort(&mut self, conn: &mut Connection) {
        if matches!(
            conn.dialect(),
            dbrig_driver::Dialect::Postgres | dbrig_driver::Dialect::Sqlite
        ) {
            let _ = conn.execute_text("ROLLBACK").await;
        }
    }

    /// The client's last act: the script's `thread_done()`, its statements counted in `q`.
    pub async fn finish(&mut self, conn: &mut Connection, q: &mut EventTally) -> Option<String> {
        let f = self.lua.globals().get::<Option<Function>>("thread_done");
        let Ok(Some(f)) = f else { return None };
        if self.placeholder.is_none() {
            self.placeholder = Connection::connect(&mock_target(), &ConnectOptions::default())
                .await
                .ok()
                .map(Box::new);
        }
        self.placeholder.as_ref()?;
        self.lend(conn);
        let r = f.call_async::<LuaValue>(self.index).await;
        self.take_back(conn);
        std::mem::swap(&mut *self.ctx.tally.lock().expect("tally"), q);
        r.err()
            .map(|e| self.hook_error("thread_done", e).to_string())
    }
}

/// What `dbrig list --script FILE` prints: the script's options with their defaults.
pub fn describe_options(w: &LuaWorkload) -> Vec<(String, String, String)> {
    w.declared()
        .iter()
        .map(|d| {
            (
                d.name.replace('_', "-"),
                d.description.clone(),
                d.default.clone().unwrap_or_default(),
            )
        })
        .collect()
}

impl OptKind {
    fn check(&self, v: &str) -> Result<(), api::OptionValueError> {
        api::convert_check(*self, v)
    }
}

/// The commands a script declares in `sysbench.cmdline.commands` (for the command line, which
/// runs `dbrig NAME FILE.lua` / `dbrig FILE.lua … NAME` as that command).
pub fn declared_commands(script: &str) -> Option<Vec<String>> {
    let w = LuaWorkload::new(LuaOptions {
        script: script.to_owned(),
        script_options: Vec::new(),
    })
    .ok()?;
    Some(w.script.commands.clone())
}

/// The declared option names of a script (for the command line, which routes `--NAME` to
/// the script when it declares NAME).
pub fn declared_names(script: &str) -> Option<Vec<(String, bool)>> {
    let w = LuaWorkload::new(LuaOptions {
        script: script.to_owned(),
        script_options: Vec::new(),
    })
    .ok()?;
    Some(
        w.declared()
            .iter()
            .map(|d| (d.name.clone(), d.kind == OptKind::Bool))
            .collect(),
    )
}
