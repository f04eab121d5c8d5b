//! pgbench scripts as a workload of the one runner: a transaction is one run of a script
//! (chosen per transaction by weight, as pgbench's `-f FILE@W` / `-b NAME@W`), its SQL sent in
//! pgbench's protocol (the run's `--protocol simple|extended|prepared`, pgbench's `-M`, simple
//! unless the run says otherwise), its `\set`, `\sleep`, `\if` and `\gset` / `\aset` run
//! client-side with pgbench's semantics; the SQL between `\startpipeline` and `\endpipeline`
//! goes out through the driver's pipeline (PostgreSQL) and its results are read at
//! `\endpipeline`.
//!
//! Each command's time is recorded as a statement kind `S.NNN text` (script S, command NNN) and
//! each transaction's as `S.txn DESCRIPTION @WEIGHT`, so per-script and per-command latencies (pgbench's `-r`) go
//! through the same histograms, store and reports as the OLTP statements.
//!
//! The built-in scripts are pgbench's (`sql/*.sql`, with MariaDB/MySQL variants where its SQL
//! is PostgreSQL's own), and `pgbench-init` ([`init`]) makes pgbench's tables.

pub mod expr;
pub mod init;
pub mod parse;
pub mod prng;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Args;
use dbrig_core::{EventTally, Value, limits};
use dbrig_driver::{Connection, Dialect, DriverError, ErrorKind, PipelineItem, Statement};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use expr::{Env, Val, VarValue, Variables};
use parse::{CommandKind, Meta, Script, SleepAmount, Store};
use prng::PgPrng;

/// The workload name results are stored under.
pub const NAME: &str = "script";

pub use dbrig_core::results::Protocol;

/// A script's protocol unless the run names one: pgbench's default.
pub const DEFAULT_PROTOCOL: Protocol = Protocol::Simple;

/// Options of a script workload (`dbrig run --script/--builtin`, a plan's `[[workload]]`
/// named `script`).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct ScriptOptions {
    /// A pgbench script to run (repeatable; pgbench's -f): each transaction runs one script,
    /// chosen at random in proportion to the weights (default 1).
    #[arg(long = "script", value_name = "FILE[@WEIGHT]")]
    pub scripts: Vec<String>,
    /// One of pgbench's built-in scripts (repeatable; pgbench's -b): tpcb-like, simple-update,
    /// select-only; on pgbench's tables (`dbrig prepare pgbench-init --scale N`).
    #[arg(long = "builtin", value_name = "NAME[@WEIGHT]")]
    pub builtins: Vec<String>,
    /// Set a script variable (repeatable; pgbench's -D).
    #[arg(short = 'D', long = "variable", value_name = "NAME=VALUE")]
    pub variables: Vec<String>,
    /// Scale factor: rows of pgbench-init (100 000 accounts per unit) and the scripts'
    /// `:scale`. 0: for built-in scripts the count of pgbench_branches, for others 1.
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::PgbenchScale>)]
    #[serde(deserialize_with = "limits::de::<limits::PgbenchScale, _>")]
    pub scale: u32,
    /// pgbench-init: fill factor of pgbench_accounts, _tellers and _branches (PostgreSQL).
    #[arg(long, default_value_t = 100, value_parser = limits::parse::<limits::FillFactor>)]
    #[serde(
        default = "default_fillfactor",
        deserialize_with = "limits::de::<limits::FillFactor, _>"
    )]
    pub fillfactor: u32,
    /// pgbench-init: add pgbench's foreign keys (pgbench -i --foreign-keys).
    #[arg(long)]
    pub foreign_keys: bool,
    /// pgbench-init: load even when the estimated size (about 25 MB per scale unit) exceeds
    /// the free space dbrig can see (or 1 TB where it cannot see it).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub force_load: bool,
    /// Run the scripts' `\shell` / `\setshell` commands (through /bin/sh, as pgbench; with
    /// only PATH, HOME, LANG, LC_ALL, TZ and USER in their environment, no dbrig secrets).
    /// Refused without it.
    #[arg(long)]
    pub allow_shell: bool,
}

/// Environment variables a `\shell` command keeps; everything else (a password variable
/// dbrig was given, say) is removed.
const SHELL_ENV: [&str; 6] = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "USER"];

/// Run a `\shell` / `\setshell` command line through /bin/sh with [`SHELL_ENV`] only; its
/// standard output when it exits with 0. Blocks the worker thread, as pgbench's `system()`
/// blocks its thread.
fn run_shell(command: &str) -> std::io::Result<String> {
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .env_clear()
        .envs(
            SHELL_ENV
                .iter()
                .filter_map(|k| std::env::var_os(k).map(|v| (k, v))),
        )
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot run shell command \"{command}\": {e}"),
            )
        })?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "shell command \"{command}\" failed ({})",
            out.status
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn default_fillfactor() -> u32 {
    100
}

/// One built-in script: its name, pgbench's description, its SQL for PostgreSQL/SQLite and,
/// where that SQL is PostgreSQL's own, for MariaDB/MySQL.
struct Builtin {
    name: &'static str,
    description: &'static str,
    sql: &'static str,
    mysql: &'static str,
}

pub const TPCB_LIKE: &str = include_str!("sql/tpcb-like.sql");

const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        description: "<builtin: TPC-B (sort of)>",
        sql: TPCB_LIKE,
        mysql: include_str!("sql/tpcb-like.mysql.sql"),
    },
    Builtin {
        name: "simple-update",
        description: "<builtin: simple update>",
        sql: include_str!("sql/simple-update.sql"),
        mysql: include_str!("sql/simple-update.mysql.sql"),
    },
    Builtin {
        name: "select-only",
        description: "<builtin: select only>",
        sql: include_str!("sql/select-only.sql"),
        mysql: include_str!("sql/select-only.sql"),
    },
];

/// pgbench's names and their unambiguous prefixes (`-b tpcb`, `-b select`).
fn find_builtin(name: &str) -> Result<&'static Builtin, WorkloadError> {
    if let Some(b) = BUILTINS.iter().find(|b| b.name == name) {
        return Ok(b);
    }
    let matches: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        _ => Err(WorkloadError::InvalidOptions(format!(
            "no built-in script named \"{name}\" (available: {})",
            BUILTINS
                .iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A script with its weight, parsed for each dialect family.
#[derive(Debug)]
struct Weighted {
    /// What pgbench's report calls it.
    description: String,
    weight: u64,
    builtin: bool,
    /// PostgreSQL and SQLite.
    script: Script,
    /// MariaDB/MySQL (the same as `script` for files).
    mysql: Script,
}

/// `NAME[@WEIGHT]`.
fn split_weight(spec: &str) -> Result<(&str, u64), WorkloadError> {
    match spec.rsplit_once('@') {
        Some((name, w)) if !name.is_empty() => w
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|w| *w <= i32::MAX as u64)
            .map(|w| (name, w))
            .ok_or_else(|| {
                WorkloadError::InvalidOptions(format!(
                    "invalid weight specification: {spec} (a whole number from 0 on)"
                ))
            }),
        _ => Ok((spec, 1)),
    }
}

/// The script workload.
#[derive(Debug, Clone)]
pub struct ScriptWorkload {
    pub options: Arc<ScriptOptions>,
    scripts: Arc<Vec<Weighted>>,
    total_weight: u64,
    /// `:scale`, decided by `check_ready` (the runner's admin connection).
    scale: Arc<AtomicI64>,
    variables: Arc<Vec<(String, String)>>,
}

impl ScriptWorkload {
    /// Read and parse every script; a syntax error is the one-line-plus-caret of
    /// [`parse::ScriptError`].
    pub fn new(options: ScriptOptions) -> Result<Self, WorkloadError> {
        let bad = WorkloadError::InvalidOptions;
        if options.scripts.is_empty() && options.builtins.is_empty() {
            return Err(bad(
                "a script workload needs --script FILE or --builtin NAME (tpcb-like, simple-update, select-only)".into(),
            ));
        }
        let mut scripts = Vec::new();
        for spec in &options.builtins {
            let (name, weight) = split_weight(spec)?;
            let b = find_builtin(name)?;
            let source = format!("builtin: {}", b.name);
            let parse = |sql| parse::parse(&source, sql).map_err(|e| bad(e.to_string()));
            scripts.push(Weighted {
                description: b.description.to_owned(),
                weight,
                builtin: true,
                script: parse(b.sql)?,
                mysql: parse(b.mysql)?,
            });
        }
        for spec in &options.scripts {
            let (file, weight) = split_weight(spec)?;
            let text = std::fs::read_to_string(PathBuf::from(file))
                .map_err(|e| bad(format!("cannot read script {file}: {e}")))?;
            let script = parse::parse_script(file, &text, options.allow_shell)
                .map_err(|e| bad(e.to_string()))?;
            if script.commands.is_empty() {
                return Err(bad(format!("script {file} has no commands")));
            }
            scripts.push(Weighted {
                description: file.to_owned(),
                weight,
                builtin: false,
                mysql: script.clone(),
                script,
            });
        }
        let total_weight: u64 = scripts.iter().map(|s| s.weight).sum();
        if total_weight == 0 {
            return Err(bad("the scripts' total weight must not be zero".into()));
        }
        let mut variables = Vec::new();
        for d in &options.variables {
            let Some((name, value)) = d.split_once('=') else {
                return Err(bad(format!(
                    "invalid variable definition: \"{d}\" (use NAME=VALUE)"
                )));
            };
            if !parse::valid_variable_name(name) {
                return Err(bad(format!("invalid variable name: \"{name}\"")));
            }
            variables.push((name.to_owned(), value.to_owned()));
        }
        Ok(ScriptWorkload {
            scale: Arc::new(AtomicI64::new(i64::from(options.scale.max(1)))),
            options: Arc::new(options),
            scripts: Arc::new(scripts),
            total_weight,
            variables: Arc::new(variables),
        })
    }

    /// The scripts as pgbench's report names them, with weights: (description, weight).
    pub fn script_list(&self) -> Vec<(String, u64)> {
        self.scripts
            .iter()
            .map(|s| (s.description.clone(), s.weight))
            .collect()
    }

    pub fn uses_builtins(&self) -> bool {
        self.scripts.iter().any(|s| s.builtin)
    }

    /// Whether the built-ins' data (pgbench's tables) must be there; and `:scale` from it.
    pub async fn check_ready(&self, conn: &mut Connection) -> Result<Vec<String>, WorkloadError> {
        // The run's protocol is a run option of every workload: known from the connection.
        if conn.protocol() == Protocol::Simple
            && let Some(w) = self.scripts.iter().find(|w| uses_pipeline(&w.script))
        {
            return Err(WorkloadError::InvalidOptions(format!(
                "{}: cannot use pipeline mode with the simple query protocol (use --protocol extended or prepared, as pgbench's -M)",
                w.description
            )));
        }
        if !conn.can_pipeline()
            && let Some(w) = self.scripts.iter().find(|w| uses_pipeline(&w.script))
        {
            return Err(WorkloadError::InvalidOptions(format!(
                "{}: \\startpipeline needs PostgreSQL's pipeline mode, which {} does not have",
                w.description,
                conn.dialect().name()
            )));
        }
        if !self.uses_builtins() {
            return Ok(Vec::new());
        }
        for t in init::TABLES {
            if !conn.table_exists(t).await? {
                return Err(WorkloadError::InvalidOptions(format!(
                    "table {t} does not exist on {}: the built-in scripts run on pgbench's tables (`dbrig prepare pgbench-init --scale N`, or `pgbench -i`)",
                    conn.target()
                )));
            }
        }
        let n = init::detect_scale(conn).await?;
        let mut warnings = Vec::new();
        if self.options.scale != 0 && i64::from(self.options.scale) != n {
            warnings.push(format!(
                "scale option ignored, using count from pgbench_branches table ({n})"
            ));
        }
        self.scale.store(n, Ordering::SeqCst);
        Ok(warnings)
    }

    /// `:scale` as the run uses it.
    pub fn scale(&self) -> i64 {
        self.scale.load(Ordering::SeqCst)
    }

    pub fn notes(&self, protocol: Protocol) -> Vec<String> {
        let mut notes = Vec::new();
        if self.uses_builtins() {
            notes.push(format!(
                "scaling factor {}: the row count of pgbench_branches (pgbench's rule for built-in scripts)",
                self.scale()
            ));
        }
        if protocol == Protocol::Prepared && self.has_store() {
            notes.push(
                "prepared protocol: SQL commands with \\gset or \\aset are sent extended (parse, bind, execute), the others prepared".into(),
            );
        }
        notes
    }

    fn has_store(&self) -> bool {
        self.scripts.iter().any(|s| {
            s.script
                .commands
                .iter()
                .any(|c| matches!(c.kind, CommandKind::Sql { store: Some(_), .. }))
        })
    }

    /// Client `index` of `clients`, its random state drawn from the run's `seed` as pgbench
    /// draws client `index`'s.
    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        clients: u32,
        seed: u64,
    ) -> Result<ScriptClient, DriverError> {
        let dialect = conn.dialect();
        let numbered = dialect == Dialect::Postgres;
        let mut scripts = Vec::with_capacity(self.scripts.len());
        for (si, w) in self.scripts.iter().enumerate() {
            let script = if dialect == Dialect::Mysql {
                &w.mysql
            } else {
                &w.script
            };
            let mut commands = Vec::with_capacity(script.commands.len());
            for (ci, c) in script.commands.iter().enumerate() {
                let kind = intern(format!("{si}.{ci:03} {}", c.display));
                let (param_sql, prepared) = match &c.kind {
                    CommandKind::Sql {
                        text,
                        store,
                        statements,
                    } => {
                        let sql = text.with_placeholders(numbered);
                        // A compound command is not prepared: the server refuses it when it
                        // runs (as pgbench's prepare fails), with the script's line.
                        let stmt = if conn.protocol() == Protocol::Prepared
                            && store.is_none()
                            && *statements == 1
                        {
                            Some(conn.prepare(&sql).await?)
                        } else {
                            None
                        };
                        (sql, stmt)
                    }
                    CommandKind::Meta(_) => (String::new(), None),
                };
                commands.push(ClientCommand {
                    kind,
                    param_sql,
                    prepared,
                });
            }
            scripts.push(ClientScript {
                txn_kind: intern(format!("{si}.txn {} @{}", w.description, w.weight)),
                commands,
            });
        }
        // pgbench.c's order: one base sequence seeded by the run's seed; client i's state is
        // seeded by its i-th draw and `default_seed` is the draw after every client's, so a
        // script run with pgbench's --random-seed draws what pgbench's client i draws.
        let base_draw = |n: u32| {
            let mut base = PgPrng::seed(seed);
            (0..n).for_each(|_| {
                base.next_u64();
            });
            base.next_u64()
        };
        // The choice among scripts is per thread in pgbench (`ts_choose_rs`); dbrig's clients
        // choose for themselves, from a stream of their own.
        let client_seed = seed ^ (u64::from(index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut seeder = PgPrng::seed(client_seed);
        seeder.next_u64();
        let mut vars = Variables::default();
        for (k, v) in self.variables.iter() {
            vars.insert(k.clone(), VarValue::Text(v.clone()));
        }
        vars.entry("scale".into())
            .or_insert(VarValue::Val(Val::Int(self.scale())));
        vars.insert(
            "client_id".into(),
            VarValue::Val(Val::Int(i64::from(index))),
        );
        vars.entry("random_seed".into())
            .or_insert(VarValue::Val(Val::Int(seed as i64)));
        // One default seed for the whole run (pgbench draws it once), unless -D set it.
        vars.entry("default_seed".into())
            .or_insert_with(|| VarValue::Val(Val::Int(base_draw(clients) as i64)));
        Ok(ScriptClient {
            workload: self.clone(),
            dialect,
            scripts,
            vars,
            rng: PgPrng::seed(base_draw(index)),
            choose: PgPrng::seed(seeder.next_u64()),
            index,
            debug: Vec::new(),
        })
    }
}

/// Statement kinds are `&'static str` (the runner's histograms are keyed by them); each
/// distinct name is leaked once per process.
pub(crate) fn intern(name: String) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut guard = NAMES.lock().expect("statement names lock");
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(s) = set.get(name.as_str()) {
        return s;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    set.insert(leaked);
    leaked
}

#[derive(Debug)]
struct ClientCommand {
    kind: &'static str,
    /// SQL commands: the statement with placeholders.
    param_sql: String,
    /// SQL commands under `--protocol prepared`: the statement prepared on this connection.
    prepared: Option<Statement>,
}

#[derive(Debug)]
struct ClientScript {
    txn_kind: &'static str,
    commands: Vec<ClientCommand>,
}

/// One client's state: its variables (kept from one transaction to the next, as pgbench
/// does), random states and prepared statements.
#[derive(Debug)]
pub struct ScriptClient {
    workload: ScriptWorkload,
    dialect: Dialect,
    scripts: Vec<ClientScript>,
    vars: Variables,
    rng: PgPrng,
    choose: PgPrng,
    index: u32,
    debug: Vec<String>,
}

/// Whether a script has `\startpipeline`.
fn uses_pipeline(script: &Script) -> bool {
    script
        .commands
        .iter()
        .any(|c| matches!(c.kind, CommandKind::Meta(Meta::StartPipeline)))
}

/// A runtime error that stops the client (pgbench aborts it), with the script line.
fn stop(script: &Script, line: usize, message: impl std::fmt::Display) -> DriverError {
    DriverError::fatal(
        ErrorKind::Statement,
        format!("{}:{line}: {message}", script.source),
    )
}

impl ScriptClient {
    /// pgbench's `chooseScript`.
    fn choose_script(&mut self) -> usize {
        let w = &self.workload;
        if w.scripts.len() == 1 {
            return 0;
        }
        let mut r = self.choose.uniform(0, w.total_weight as i64 - 1);
        for (i, s) in w.scripts.iter().enumerate() {
            r -= s.weight as i64;
            if r < 0 {
                return i;
            }
        }
        w.scripts.len() - 1
    }

    fn eval(&mut self, script: &Script, line: usize, e: &expr::Expr) -> Result<Val, DriverError> {
        let r = e.eval(&mut Env {
            vars: &self.vars,
            rng: &mut self.rng,
            debug: &mut self.debug,
        });
        for d in self.debug.drain(..) {
            eprintln!("debug(script={},line={line}): {d}", script.source);
        }
        r.map_err(|m| stop(script, line, m))
    }

    /// The bind value of a variable (its text when it came as text).
    fn param(&self, script: &Script, line: usize, name: &str) -> Result<Value, DriverError> {
        match self.vars.get(name) {
            None => Err(stop(script, line, format!("undefined variable \"{name}\""))),
            Some(VarValue::Text(s)) => Ok(Value::Text(s.clone())),
            Some(VarValue::Val(v)) => Ok(match *v {
                Val::Null => Value::Null,
                Val::Int(i) => Value::Int(i),
                Val::Double(d) => Value::Float(d),
                Val::Bool(b) => Value::Text(if b { "true" } else { "false" }.into()),
            }),
        }
    }

    /// One transaction: one script from start to end.
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let si = self.choose_script();
        let workload = self.workload.clone();
        let weighted = &workload.scripts[si];
        let script = if self.dialect == Dialect::Mysql {
            &weighted.mysql
        } else {
            &weighted.script
        };
        let protocol = conn.protocol();
        let started = Instant::now();
        // Inside `\startpipeline`: the SQL commands queued so far.
        let mut pipeline: Option<Vec<PipelineItem>> = None;
        let mut pc = 0;
        while pc < script.commands.len() {
            let c = &script.commands[pc];
            let began = Instant::now();
            let mut next = pc + 1;
            match &c.kind {
                CommandKind::Sql {
                    text,
                    store,
                    statements,
                } => {
                    let cc = &self.scripts[si].commands[pc];
                    let at = |e: DriverError| {
                        DriverError::new(
                            e.kind,
                            e.class,
                            e.code.clone(),
                            format!("{}:{}: {}", script.source, c.line, e.message),
                        )
                    };
                    if pipeline.is_some()
                        && let Some(store) = store
                    {
                        // pgbench's rule: the results are not there before \endpipeline.
                        let name = match store {
                            Store::One(_) => "gset",
                            Store::All(_) => "aset",
                        };
                        return Err(stop(
                            script,
                            c.line,
                            format!("\\{name} is not allowed in pipeline mode"),
                        ));
                    }
                    let mut values = Vec::with_capacity(text.vars.len());
                    for v in &text.vars {
                        values.push(self.param(script, c.line, v)?);
                    }
                    // Simple protocol: the values as pgbench writes them (doubles as %.15g).
                    let text_sql = || {
                        let mut s = String::with_capacity(
                            text.pieces.iter().map(String::len).sum::<usize>()
                                + 16 * text.vars.len(),
                        );
                        s.push_str(&text.pieces[0]);
                        for (v, p) in text.vars.iter().zip(&text.pieces[1..]) {
                            if let Some(value) = self.vars.get(v) {
                                value.push_text(&mut s);
                            }
                            s.push_str(p);
                        }
                        s
                    };
                    if let Some(queue) = pipeline.as_mut() {
                        queue.push(match (protocol, cc.prepared) {
                            (Protocol::Prepared, Some(stmt)) => {
                                PipelineItem::Prepared(stmt, values)
                            }
                            _ => PipelineItem::Sql(cc.param_sql.clone(), values),
                        });
                        q.time(
                            self.scripts[si].commands[pc].kind,
                            began.elapsed().as_micros() as u64,
                        );
                        pc = next;
                        continue;
                    }
                    if protocol == Protocol::Simple && (store.is_some() || *statements > 1) {
                        // One query, every statement's result (pgbench's compound command
                        // `\;`: \gset takes the last result, \aset every one).
                        let results = conn.query_results_text(&text_sql()).await.map_err(at)?;
                        for (outcome, _) in &results {
                            q.queries.count(outcome.class());
                        }
                        if let Some(store) = store {
                            self.store(script, c.line, store, results)?;
                        }
                    } else {
                        match store {
                            None => {
                                let outcome = match (protocol, cc.prepared) {
                                    (Protocol::Prepared, Some(stmt)) => {
                                        conn.execute(stmt, &values).await
                                    }
                                    (Protocol::Extended, _) | (Protocol::Prepared, None) => {
                                        conn.execute_params(&cc.param_sql, &values).await
                                    }
                                    (Protocol::Simple, _) => conn.execute_text(&text_sql()).await,
                                }
                                .map_err(at)?;
                                q.queries.count(outcome.class());
                            }
                            Some(store) => {
                                let rows = conn
                                    .query_rows(&cc.param_sql, &values, false)
                                    .await
                                    .map_err(at)?;
                                let outcome = dbrig_driver::Outcome {
                                    result_set: true,
                                    rows: rows.rows.len() as u64,
                                };
                                q.queries.count(outcome.class());
                                self.store(script, c.line, store, vec![(outcome, rows)])?;
                            }
                        }
                    }
                }
                CommandKind::Meta(m) => match m {
                    Meta::Set { var, expr } => {
                        let v = VarValue::Val(self.eval(script, c.line, expr)?);
                        // Set in place when it exists: no new key string per transaction.
                        match self.vars.get_mut(var.as_str()) {
                            Some(slot) => *slot = v,
                            None => {
                                self.vars.insert(var.clone(), v);
                            }
                        }
                    }
                    Meta::Sleep { amount, unit_us } => {
                        let n = match amount {
                            SleepAmount::Literal(n) => *n,
                            SleepAmount::Var(name) => match self.vars.get(name) {
                                None => {
                                    return Err(stop(
                                        script,
                                        c.line,
                                        format!("\\sleep: undefined variable \"{name}\""),
                                    ));
                                }
                                Some(v) => match v.value(name) {
                                    Ok(Val::Int(i)) => i,
                                    _ => {
                                        return Err(stop(
                                            script,
                                            c.line,
                                            format!(
                                                "\\sleep: invalid sleep time \"{}\" in variable \"{name}\"",
                                                v.text()
                                            ),
                                        ));
                                    }
                                },
                            },
                        };
                        let us = n.max(0) as u64 * unit_us;
                        if us > 0 {
                            tokio::time::sleep(std::time::Duration::from_micros(us)).await;
                        }
                    }
                    Meta::If {
                        cond,
                        next: on_false,
                    } => {
                        if !self.eval(script, c.line, cond)?.truth() {
                            next = self.land(script, *on_false)?;
                        }
                    }
                    // Reached in order: the branch before ran, skip to the end of the block.
                    Meta::Elif { end, .. } | Meta::Else { end } => next = *end + 1,
                    Meta::Endif => {}
                    Meta::StartPipeline => {
                        if pipeline.is_some() {
                            return Err(stop(script, c.line, "already in pipeline mode"));
                        }
                        pipeline = Some(Vec::new());
                    }
                    Meta::SyncPipeline => {
                        let Some(queue) = pipeline.as_mut() else {
                            return Err(stop(script, c.line, "not in pipeline mode"));
                        };
                        queue.push(PipelineItem::Sync);
                    }
                    Meta::EndPipeline => {
                        let Some(items) = pipeline.take() else {
                            return Err(stop(script, c.line, "not in pipeline mode"));
                        };
                        let outcomes = conn.pipeline(&items).await.map_err(|e| {
                            DriverError::new(
                                e.kind,
                                e.class,
                                e.code.clone(),
                                format!("{}:{}: {}", script.source, c.line, e.message),
                            )
                        })?;
                        for o in outcomes {
                            q.queries.count(o.class());
                        }
                    }
                    Meta::Shell { set, args } => {
                        let mut words = Vec::with_capacity(args.len());
                        for a in args {
                            if let Some(rest) = a.strip_prefix("::") {
                                words.push(format!(":{rest}"));
                            } else if let Some(name) = a.strip_prefix(':') {
                                match self.vars.get(name) {
                                    Some(v) => words.push(v.text().into_owned()),
                                    None => {
                                        return Err(stop(
                                            script,
                                            c.line,
                                            format!("undefined variable \"{name}\""),
                                        ));
                                    }
                                }
                            } else {
                                words.push(a.clone());
                            }
                        }
                        let output =
                            run_shell(&words.join(" ")).map_err(|m| stop(script, c.line, m))?;
                        if let Some(var) = set {
                            let n = output.trim().parse::<i64>().map_err(|_| {
                                stop(
                                    script,
                                    c.line,
                                    format!(
                                        "shell command must return an integer (not \"{}\")",
                                        output.trim()
                                    ),
                                )
                            })?;
                            self.vars.insert(var.clone(), VarValue::Val(Val::Int(n)));
                        }
                    }
                },
            }
            q.time(
                self.scripts[si].commands[pc].kind,
                began.elapsed().as_micros() as u64,
            );
            pc = next;
        }
        if pipeline.is_some() {
            let line = script.commands.last().map_or(0, |c| c.line);
            return Err(stop(
                script,
                line,
                "end of script reached with pipeline open",
            ));
        }
        q.time(
            self.scripts[si].txn_kind,
            started.elapsed().as_micros() as u64,
        );
        Ok(())
    }

    /// Where execution goes after a false `\if` / `\elif`: the next branch whose condition
    /// holds, the `\else`'s body, or past the `\endif`.
    fn land(&mut self, script: &Script, mut at: usize) -> Result<usize, DriverError> {
        loop {
            let c = &script.commands[at];
            match &c.kind {
                CommandKind::Meta(Meta::Elif { cond, next, .. }) => {
                    if self.eval(script, c.line, cond)?.truth() {
                        return Ok(at + 1);
                    }
                    at = *next;
                }
                _ => return Ok(at + 1),
            }
        }
    }

    /// `\gset` / `\aset`: columns into variables (prefix + column name), as pgbench's
    /// `readCommandResponse`: `\gset` takes the last statement's result, which must be one
    /// row; `\aset` takes the last row of every statement that returned rows.
    fn store(
        &mut self,
        script: &Script,
        line: usize,
        store: &Store,
        results: Vec<(dbrig_driver::Outcome, dbrig_driver::Rows)>,
    ) -> Result<(), DriverError> {
        let n = results.len();
        for (i, (_, rows)) in results.into_iter().enumerate() {
            let (prefix, row) = match store {
                Store::One(prefix) => {
                    if i + 1 < n {
                        continue;
                    }
                    if rows.rows.len() != 1 {
                        return Err(stop(
                            script,
                            line,
                            format!("expected one row, got {}", rows.rows.len()),
                        ));
                    }
                    (prefix, &rows.rows[0])
                }
                Store::All(prefix) => match rows.rows.last() {
                    Some(row) => (prefix, row),
                    None => continue,
                },
            };
            for (name, v) in rows.columns.iter().zip(row) {
                let var = format!("{prefix}{name}");
                if !parse::valid_variable_name(&var) {
                    return Err(stop(
                        script,
                        line,
                        format!("error storing into variable {var}"),
                    ));
                }
                let value = match v {
                    Value::Null => VarValue::Val(Val::Null),
                    Value::Int(i) => VarValue::Val(Val::Int(*i)),
                    Value::Float(f) => VarValue::Val(Val::Double(*f)),
                    Value::Text(s) => VarValue::Text(s.clone()),
                };
                self.vars.insert(var, value);
            }
        }
        Ok(())
    }

    /// After a retryable error: roll back whatever transaction the script had open.
    pub async fn abort(&mut self, conn: &mut Connection) {
        let _ = conn.execute_text("ROLLBACK").await;
    }

    pub fn index(&self) -> u32 {
        self.index
    }
}

#[cfg(test)]
mod profile {
    //! The script runner's client cost per transaction, for `valgrind --tool=callgrind`
    //! (instruction counts repeat on a busy machine; the binary's `run` cannot run under
    //! valgrind: rustix's auxv check faults there). Ignored: it needs a PostgreSQL with
    //! pgbench's tables, named by `DBRIG_PROFILE_URL`; `DBRIG_PROFILE_EVENTS` transactions of
    //! `DBRIG_PROFILE_BUILTIN` (tpcb-like) in `DBRIG_PROFILE_PROTOCOL` (prepared) go through
    //! the one runner. Run it at two event counts: the difference over the events' difference
    //! is the cost per transaction.

    use super::*;
    use crate::runner::{RunSpec, Stopper, run};
    use crate::{RunOptions, Workload};

    #[test]
    #[ignore = "a profile by hand: needs DBRIG_PROFILE_URL"]
    fn script_runner_client_cost() {
        let url = std::env::var("DBRIG_PROFILE_URL").expect("DBRIG_PROFILE_URL");
        let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_owned());
        let events: u64 = env("DBRIG_PROFILE_EVENTS", "1000").parse().unwrap();
        let protocol: Protocol = serde_json::from_value(serde_json::Value::String(env(
            "DBRIG_PROFILE_PROTOCOL",
            "prepared",
        )))
        .unwrap();
        let workload = Workload::Script(
            ScriptWorkload::new(ScriptOptions {
                builtins: vec![env("DBRIG_PROFILE_BUILTIN", "tpcb-like")],
                ..Default::default()
            })
            .unwrap(),
        );
        let options = RunOptions {
            threads: 1,
            events,
            time: 0.0,
            warmup: 0.0,
            protocol: Some(protocol),
            ..Default::default()
        };
        let spec = RunSpec {
            target: dbrig_driver::Target::parse(&url).unwrap(),
            connect: options.connect_options(),
            seed: options.resolved_seed(),
            options,
            os_meter: None,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let outcome = rt
            .block_on(run(
                &workload,
                &spec,
                Stopper::new(),
                &crate::progress::Quiet,
            ))
            .unwrap()
            .expect("not interrupted");
        assert_eq!(outcome.measured.total.events, events);
    }
}
