//! The run environment of a plan: managed servers brought up per configuration, restarted
//! per trial when asked, restored to freshly prepared data before write trials, started
//! read-only for read-only workloads; the OS page cache dropped; client and server pinned to
//! CPU sets and NUMA interleaving; shell and SQL hooks around configurations and trials (the
//! plan's and each configuration's own); every server variable captured; OS statistics
//! sampled during each trial; and restart detection that marks a trial invalid when the
//! server restarted or died inside it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};
use dbrig_driver::{ConnectOptions, Connection, Dialect, Target};
use dbrig_server::{
    LifeMark, ManagedServer, OsSample, OsSampler, Params, ServerDef, server_restarted,
};
use serde::{Deserialize, Serialize};

/// When a managed server is (re)started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// One server life for all trials of a configuration (restarted only to change settings).
    #[default]
    Reuse,
    /// Restart before every trial.
    Restart,
    /// Restart with the prepared data restored before every trial of a workload that writes;
    /// reuse for read-only workloads (the seeds' threadpool runs did this).
    FreshData,
}

/// Shell and SQL commands around configurations and trials, each with a timeout. A plan has
/// one set (`[environment.hooks]`) for every configuration, and each configuration may add
/// its own (`[configuration.hooks]`), run after the plan's. Outputs are stored with the
/// trial they ran around (after-configuration hooks: with the configuration's last trial).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Hooks {
    /// Shell command before a configuration's first trial (after its server is up).
    #[serde(default)]
    pub before_configuration: Option<String>,
    /// Shell command after a configuration's last trial.
    #[serde(default)]
    pub after_configuration: Option<String>,
    /// SQL run on the target before a configuration's first trial.
    #[serde(default)]
    pub before_configuration_sql: Option<String>,
    /// SQL run on the target after a configuration's last trial.
    #[serde(default)]
    pub after_configuration_sql: Option<String>,
    #[serde(default)]
    pub before_trial: Option<String>,
    #[serde(default)]
    pub after_trial: Option<String>,
    /// SQL run on the target before / after each trial (the launcher's PRE_TEST_SQL …).
    #[serde(default)]
    pub before_trial_sql: Option<String>,
    #[serde(default)]
    pub after_trial_sql: Option<String>,
    /// Seconds a hook may take (default 60; a configuration's hooks default to the plan's).
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// Where in a plan a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPoint {
    BeforeConfiguration,
    AfterConfiguration,
    BeforeTrial,
    AfterTrial,
}

impl HookPoint {
    fn name(self) -> &'static str {
        match self {
            HookPoint::BeforeConfiguration => "before-configuration",
            HookPoint::AfterConfiguration => "after-configuration",
            HookPoint::BeforeTrial => "before-trial",
            HookPoint::AfterTrial => "after-trial",
        }
    }
}

impl Hooks {
    /// Checks the timeout (a positive number of seconds).
    pub fn validate(&self) -> std::result::Result<(), String> {
        match self.timeout {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                Err(format!("timeout = {t}: give a positive number of seconds"))
            }
            _ => Ok(()),
        }
    }

    /// The shell command and SQL of this set at `point`.
    fn at(&self, point: HookPoint) -> (Option<&str>, Option<&str>) {
        let (shell, sql) = match point {
            HookPoint::BeforeConfiguration => {
                (&self.before_configuration, &self.before_configuration_sql)
            }
            HookPoint::AfterConfiguration => {
                (&self.after_configuration, &self.after_configuration_sql)
            }
            HookPoint::BeforeTrial => (&self.before_trial, &self.before_trial_sql),
            HookPoint::AfterTrial => (&self.after_trial, &self.after_trial_sql),
        };
        (shell.as_deref(), sql.as_deref())
    }
}

/// Runs the hooks at `point`: the plan's set, then the configuration's. Before a trial or
/// configuration the shell command runs before the SQL, after one the SQL runs first (so a
/// shell hook sees what the SQL did, as the launcher's PRE_TEST_SQL / POST_RUN_OS did). SQL
/// needs a target; without one (the server did not come up) only shell hooks run.
pub async fn run_hooks(
    point: HookPoint,
    plan: &Hooks,
    configuration: Option<&Hooks>,
    target: Option<(&Target, &ConnectOptions)>,
) -> Vec<HookOutput> {
    let plan_timeout = plan.timeout.unwrap_or(60.0);
    let mut out = Vec::new();
    let layers = [
        ("plan", plan),
        ("configuration", configuration.unwrap_or(plan)),
    ];
    let layers = if configuration.is_some() {
        &layers[..]
    } else {
        &layers[..1]
    };
    for (scope, hooks) in layers {
        let timeout = hooks.timeout.unwrap_or(plan_timeout);
        let (shell, sql) = hooks.at(point);
        let name = point.name();
        let run_shell = |out: &mut Vec<HookOutput>| {
            if let Some(cmd) = shell {
                out.push(run_shell_hook(name, cmd, timeout).scoped(scope));
            }
        };
        let before = matches!(
            point,
            HookPoint::BeforeConfiguration | HookPoint::BeforeTrial
        );
        if before {
            run_shell(&mut out);
        }
        if let (Some(sql), Some((target, connect))) = (sql, target) {
            let hook = format!("{name}-sql");
            out.push(
                run_sql_hook(&hook, sql, target, connect, timeout)
                    .await
                    .scoped(scope),
            );
        }
        if !before {
            run_shell(&mut out);
        }
    }
    out
}

/// Environment settings of a plan (`[environment]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct EnvironmentFile {
    #[serde(default)]
    pub lifecycle: Lifecycle,
    /// `sync` and drop the OS page cache before every trial (needs root; said once and
    /// recorded on the trial when not permitted).
    #[serde(default)]
    pub drop_caches: bool,
    /// CPU list for dbrig itself, e.g. "0" or "0-3" (taskset syntax).
    #[serde(default)]
    pub client_cpus: Option<String>,
    /// CPU list for managed servers.
    #[serde(default)]
    pub server_cpus: Option<String>,
    /// Sample OS statistics every N seconds during each trial (0 = off).
    #[serde(default = "one")]
    pub os_stats_interval: f64,
    /// Start managed servers read-only for trials of workloads that do not write (MariaDB
    /// `read_only` + `innodb_read_only`, PostgreSQL `default_transaction_read_only`), after
    /// preparing their tables on a writable server. Recorded on each trial.
    #[serde(default)]
    pub start_read_only: bool,
    /// Run managed servers under `numactl --interleave=all`; without `numactl` or on a
    /// single-node host this is said once and recorded on each trial.
    #[serde(default)]
    pub numa_interleave: bool,
    #[serde(default)]
    pub hooks: Hooks,
}

fn one() -> f64 {
    1.0
}

/// One hook's outcome, stored with the trial.
#[derive(Debug, Clone, Serialize)]
pub struct HookOutput {
    pub hook: String,
    /// `plan` (`[environment.hooks]`) or `configuration` (`[configuration.hooks]`).
    pub scope: &'static str,
    pub command: String,
    pub exit_code: Option<i32>,
    pub output: String,
    pub timed_out: bool,
}

/// Run a shell hook with a timeout (coreutils `timeout`), capturing its output.
pub fn run_shell_hook(name: &str, command: &str, timeout: f64) -> HookOutput {
    let out = Command::new("timeout")
        .arg("--kill-after=5")
        .arg(format!("{timeout}"))
        .args(["sh", "-c", command])
        .output();
    match out {
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            HookOutput {
                hook: name.into(),
                scope: "plan",
                command: command.into(),
                exit_code: o.status.code(),
                timed_out: o.status.code() == Some(124),
                output: truncate(text, 64 * 1024),
            }
        }
        Err(e) => HookOutput {
            hook: name.into(),
            scope: "plan",
            command: command.into(),
            exit_code: None,
            output: format!("could not run the hook: {e}"),
            timed_out: false,
        },
    }
}

/// Run a SQL hook (statements separated by `;`) on the target, capturing result rows.
pub async fn run_sql_hook(
    name: &str,
    sql: &str,
    target: &Target,
    connect: &ConnectOptions,
    timeout: f64,
) -> HookOutput {
    let work = async {
        let mut conn = Connection::connect(target, connect).await?;
        let mut text = String::new();
        for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            for row in conn.query(stmt, &[]).await? {
                let cells: Vec<String> = row
                    .iter()
                    .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
                    .collect();
                text.push_str(&cells.join("\t"));
                text.push('\n');
            }
        }
        conn.close().await;
        Ok::<String, dbrig_driver::DriverError>(text)
    };
    match tokio::time::timeout(Duration::from_secs_f64(timeout), work).await {
        Ok(Ok(text)) => HookOutput {
            hook: name.into(),
            scope: "plan",
            command: sql.into(),
            exit_code: Some(0),
            output: truncate(text, 64 * 1024),
            timed_out: false,
        },
        Ok(Err(e)) => HookOutput {
            hook: name.into(),
            scope: "plan",
            command: sql.into(),
            exit_code: Some(1),
            output: e.to_string(),
            timed_out: false,
        },
        Err(_) => HookOutput {
            hook: name.into(),
            scope: "plan",
            command: sql.into(),
            exit_code: None,
            output: String::new(),
            timed_out: true,
        },
    }
}

impl HookOutput {
    fn scoped(mut self, scope: &'static str) -> Self {
        self.scope = scope;
        self
    }

    /// Whether the hook failed (non-zero exit, SQL error, or timeout).
    pub fn failed(&self) -> bool {
        self.timed_out || self.exit_code != Some(0)
    }
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("\n[truncated]");
    }
    s
}

/// `sync` and drop the page cache. `Err` says why not (not root, read-only /proc…).
pub fn drop_caches() -> std::result::Result<(), String> {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
        .map_err(|e| format!("cannot drop the page cache: {e}"))
}

/// Pin every thread of `pid` to `cpus` (taskset syntax).
pub fn pin(pid: u32, cpus: &str) -> std::result::Result<(), String> {
    let o = Command::new("taskset")
        .args(["-a", "-cp", cpus, &pid.to_string()])
        .output()
        .map_err(|e| format!("taskset not available: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "taskset -a -cp {cpus} {pid}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// Observe a server's life through SQL (MariaDB `Uptime`, PostgreSQL
/// `pg_postmaster_start_time()`); a server that cannot be reached is marked dead.
pub async fn observe_life(target: &Target, connect: &ConnectOptions) -> LifeMark {
    let sql = match target.dialect() {
        Dialect::Mysql => "SHOW GLOBAL STATUS LIKE 'Uptime'",
        Dialect::Postgres => "SELECT extract(epoch from pg_postmaster_start_time())::float8",
        Dialect::Sqlite => return LifeMark::default(),
    };
    if matches!(target, Target::Mock { .. }) {
        return LifeMark::default();
    }
    let quick = ConnectOptions {
        connect_timeout: Duration::from_secs(5),
        ..connect.clone()
    };
    let observed = SystemTime::now();
    let result = async {
        let mut conn = Connection::connect(target, &quick).await?;
        let rows = conn.query(sql, &[]).await?;
        conn.close().await;
        Ok::<_, dbrig_driver::DriverError>(rows)
    }
    .await;
    match result {
        Ok(rows) => {
            let row = rows.into_iter().next().unwrap_or_default();
            match target.dialect() {
                Dialect::Mysql => row
                    .get(1)
                    .and_then(|v| v.as_i64())
                    .map(|up| LifeMark::from_uptime(up.max(0) as u64, observed))
                    .unwrap_or_default(),
                _ => row
                    .first()
                    .and_then(|v| v.as_f64())
                    .map(LifeMark::from_start_time)
                    .unwrap_or_default(),
            }
        }
        Err(_) => LifeMark {
            died: true,
            ..LifeMark::default()
        },
    }
}

/// Every server variable (MariaDB/MySQL `SHOW GLOBAL VARIABLES`, PostgreSQL `pg_settings`
/// as `SHOW` prints them), the version, and for a server on this host the binary serving the
/// target's port. Stored with every trial, shown by `dbrig doctor --target`. `Null` for
/// SQLite and the mock engine; `{"error": …}` when the server cannot be asked.
pub async fn server_settings(target: &Target, connect: &ConnectOptions) -> serde_json::Value {
    let (variables_sql, version_sql) = match target {
        Target::Mysql { .. } => (
            "SHOW GLOBAL VARIABLES",
            "SELECT @@version, @@version_comment",
        ),
        Target::Postgres { .. } => (
            "SELECT name, current_setting(name) FROM pg_settings ORDER BY name",
            "SELECT version(), ''",
        ),
        Target::Sqlite { .. } | Target::Mock { .. } => return serde_json::Value::Null,
    };
    let quick = ConnectOptions {
        connect_timeout: Duration::from_secs(10),
        ..connect.clone()
    };
    let asked = async {
        let mut conn = Connection::connect(target, &quick).await?;
        let rows = conn.query(variables_sql, &[]).await?;
        let version = conn.query(version_sql, &[]).await?;
        conn.close().await;
        Ok::<_, dbrig_driver::DriverError>((rows, version))
    }
    .await;
    let (rows, version) = match asked {
        Ok(r) => r,
        Err(e) => return serde_json::json!({ "error": e.to_string() }),
    };
    let text = |v: Option<&dbrig_core::Value>| v.and_then(|v| v.to_text()).unwrap_or_default();
    let variables: serde_json::Map<String, serde_json::Value> = rows
        .iter()
        .map(|r| (text(r.first()), serde_json::Value::String(text(r.get(1)))))
        .collect();
    let version_row = version.first();
    let version = [
        text(version_row.and_then(|r| r.first())),
        text(version_row.and_then(|r| r.get(1))),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .cloned()
    .collect::<Vec<_>>()
    .join(" ");
    serde_json::json!({
        "version": version,
        "binary": local_binary(target).map(|p| p.display().to_string()),
        "variable_count": variables.len(),
        "variables": variables,
    })
}

/// Settings `dbrig doctor` shows from a server's full list (those that most often explain a
/// benchmark result), in this order, when the server has them.
const KEY_SETTINGS: &[&str] = &[
    // MariaDB / MySQL
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "sync_binlog",
    "log_bin",
    "thread_handling",
    "query_cache_type",
    "read_only",
    "innodb_read_only",
    // PostgreSQL
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "max_wal_size",
    "jit",
    "default_transaction_read_only",
    // Both
    "max_connections",
];

/// `dbrig doctor`'s summary of [`server_settings`]: version, binary, how many variables,
/// and the key settings.
pub fn server_summary(settings: &serde_json::Value) -> Vec<(String, String)> {
    if settings.is_null() {
        return vec![("settings".into(), "none (not a server)".into())];
    }
    let s = |v: &serde_json::Value| v.as_str().map(str::to_owned);
    let mut out = vec![
        (
            "version".to_owned(),
            s(&settings["version"]).unwrap_or_else(|| "?".into()),
        ),
        (
            "binary".to_owned(),
            s(&settings["binary"])
                .unwrap_or_else(|| "unknown (not on this host, or not ours to inspect)".into()),
        ),
        (
            "variables".to_owned(),
            format!(
                "{} (all stored with every trial; all shown with --format json)",
                settings["variable_count"].as_u64().unwrap_or(0)
            ),
        ),
    ];
    let vars = &settings["variables"];
    out.extend(
        KEY_SETTINGS
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), s(&vars[*k])?))),
    );
    out
}

/// Server settings that would distort a benchmark of `clients` clients.
pub fn server_warnings(settings: &serde_json::Value, clients: Option<u32>) -> Vec<String> {
    let vars = &settings["variables"];
    let mut out = Vec::new();
    let max_conn = vars["max_connections"]
        .as_str()
        .and_then(|v| v.parse::<u32>().ok());
    if let (Some(max), Some(n)) = (max_conn, clients)
        && n >= max
    {
        out.push(format!(
            "warn: the server allows {max} connections (max_connections), not more than the {n} clients asked for: raise max_connections"
        ));
    }
    out
}

/// The binary of the process serving `target`'s port, when the target is on this host.
/// (Read from the target's redacted URL, the one form of a target dbrig shows anywhere.)
pub fn local_binary(target: &Target) -> Option<PathBuf> {
    if !matches!(target, Target::Mysql { .. } | Target::Postgres { .. }) {
        return None;
    }
    let url = target.to_string();
    let (host, port) = tcp_host_port(&url)?;
    let local = matches!(host, "localhost" | "127.0.0.1" | "::1" | "[::1]");
    local
        .then(|| dbrig_server::host::listening_process(port))
        .flatten()
        .map(|(_, exe)| exe)
}

/// `HOST` and `PORT` of `scheme://USER@HOST:PORT/DB…`.
fn tcp_host_port(url: &str) -> Option<(&str, u16)> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = hostport.rsplit_once(':')?;
    Some((host, port.parse().ok()?))
}

/// Where a trial ran: the CPUs dbrig and the server were allowed on (read back from
/// `/proc`, whatever was asked), what was asked, and the server's NUMA placement.
pub fn placement(
    env: &EnvironmentFile,
    server_pid: Option<u32>,
    numa: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({
        "client_cpus_asked": env.client_cpus,
        "server_cpus_asked": env.server_cpus,
        "client_cpus_allowed": dbrig_server::host::cpus_allowed(std::process::id()),
        "server_cpus_allowed": server_pid.and_then(dbrig_server::host::cpus_allowed),
        "numa": numa,
    })
}

/// Managed servers of a plan, started on demand with each configuration's parameters.
pub struct Servers {
    state_dir: PathBuf,
    defs: HashMap<String, ServerDef>,
    running: HashMap<String, ManagedServer>,
    server_cpus: Option<String>,
    /// Servers currently started read-only.
    read_only: HashSet<String>,
    /// Launch notes already said (each once per plan, e.g. "numactl is not installed").
    said: HashSet<String>,
}

impl Servers {
    /// The plan's servers, with the environment's NUMA choice applied to each definition.
    pub fn new(state_dir: &Path, defs: &[ServerDef], env: &EnvironmentFile) -> Self {
        Self {
            state_dir: state_dir.to_owned(),
            defs: defs
                .iter()
                .map(|d| {
                    let mut d = d.clone();
                    d.numa_interleave |= env.numa_interleave;
                    (d.name.clone(), d)
                })
                .collect(),
            running: HashMap::new(),
            server_cpus: env.server_cpus.clone(),
            read_only: HashSet::new(),
            said: HashSet::new(),
        }
    }

    fn server(&mut self, name: &str) -> Result<&mut ManagedServer> {
        if !self.running.contains_key(name) {
            let def = self
                .defs
                .get(name)
                .cloned()
                .ok_or_else(|| anyhow!("no [[server]] named '{name}'"))?;
            let mut s = ManagedServer::open(def, &self.state_dir)?;
            if !s.is_initialised() {
                eprintln!("dbrig: initialising the data directory of server {name}");
                s.initialise()?;
            }
            self.running.insert(name.to_owned(), s);
        }
        Ok(self.running.get_mut(name).expect("inserted above"))
    }

    /// Make sure server `name` runs with `params` (restarting it when they differ, or when
    /// `restart` is asked), read-only when `read_only`; returns its target and pid.
    pub fn ensure(
        &mut self,
        name: &str,
        params: &Params,
        restart: bool,
        read_only: bool,
    ) -> Result<(Target, Option<u32>)> {
        let cpus = self.server_cpus.clone();
        let s = self.server(name)?;
        let params = if read_only {
            params.merged(&s.def().engine.read_only_params())
        } else {
            params.clone()
        };
        let params = &params;
        let up = s.is_running();
        let same = s
            .current_params()
            .map(|p| p == &s.def().params.merged(params))
            .unwrap_or(false);
        if !up {
            s.start(params)
                .with_context(|| format!("starting server {name}"))?;
        } else if restart || !same {
            s.restart(params)
                .with_context(|| format!("restarting server {name}"))?;
        }
        let pid = s.status().pid;
        let notes = s.launch_info().map(|l| l.notes.clone()).unwrap_or_default();
        let url = s.connection_info()?.url();
        if read_only {
            self.read_only.insert(name.to_owned());
        } else {
            self.read_only.remove(name);
        }
        for note in notes {
            if self.said.insert(note.clone()) {
                eprintln!("dbrig: note: server {name}: {note} (recorded on each trial)");
            }
        }
        if let (Some(cpus), Some(pid)) = (cpus, pid)
            && let Err(e) = pin(pid, &cpus)
        {
            eprintln!("dbrig: warning: {e}");
        }
        Ok((Target::parse(&url)?, pid))
    }

    /// Keep a copy of the prepared data directory (once).
    pub fn snapshot_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
        let s = self.server(name)?;
        if !s.has_snapshot("prepared") {
            // The snapshot stops the server and starts it again as it was.
            s.snapshot_data("prepared")?;
            if !s.is_running() {
                s.start(params)?;
            }
        }
        Ok(())
    }

    /// Restore the prepared data (the server is restarted by the restore).
    pub fn restore_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
        self.read_only.remove(name);
        let s = self.server(name)?;
        s.restore_data("prepared")?;
        if !s.is_running() {
            s.start(params)?;
        }
        Ok(())
    }

    pub fn life_mark(&mut self, name: &str) -> LifeMark {
        self.server(name).map(|s| s.life_mark()).unwrap_or_default()
    }

    /// What a trial records about a managed server: binary, parameters, data directory,
    /// whether it ran read-only, and how it was launched (wrappers, NUMA, parent-death signal).
    pub fn version_facts(&mut self, name: &str) -> serde_json::Value {
        let read_only = self.read_only.contains(name);
        match self.server(name) {
            Ok(s) => serde_json::json!({
                "server": name,
                "binary": s.server_bin().display().to_string(),
                "params": s.current_params().map(|p| p.to_strings()),
                "data_dir": s.data_dir().display().to_string(),
                "read_only": read_only,
                "launch": s.launch_info(),
            }),
            Err(_) => serde_json::Value::Null,
        }
    }

    /// The NUMA placement of the running server `name` (`None`: not running or unknown).
    pub fn numa(&mut self, name: &str) -> Option<String> {
        self.server(name)
            .ok()?
            .launch_info()
            .map(|l| l.numa.clone())
    }

    /// Stop every server this plan started.
    pub fn stop_all(&mut self) {
        for (name, s) in self.running.iter_mut() {
            if let Err(e) = s.stop() {
                eprintln!("dbrig: warning: stopping server {name}: {e}");
            }
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Combine the SQL and process sides of a life observation.
pub fn merged(sql: LifeMark, process: Option<LifeMark>) -> LifeMark {
    match process {
        Some(p) => LifeMark {
            pid: p.pid,
            generation: p.generation,
            died: sql.died || p.died,
            ..sql
        },
        None => sql,
    }
}

pub fn restarted(before: &LifeMark, after: &LifeMark) -> bool {
    server_restarted(before, after)
}

/// OS statistics for one trial.
pub struct Sampling(Option<OsSampler>);

impl Sampling {
    pub fn start(interval: f64, pid: Option<u32>) -> Self {
        Sampling((interval > 0.0).then(|| OsSampler::start(Duration::from_secs_f64(interval), pid)))
    }

    pub fn stop(self) -> Vec<OsSample> {
        self.0.map(|s| s.stop()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_of_a_redacted_url() {
        assert_eq!(
            tcp_host_port("mysql://root:***@127.0.0.1:3306/test"),
            Some(("127.0.0.1", 3306))
        );
        assert_eq!(
            tcp_host_port("postgres://u@db.example:5433/x?sslmode=disable"),
            Some(("db.example", 5433))
        );
        assert_eq!(tcp_host_port("postgres://u@localhost/x"), None);
        assert_eq!(tcp_host_port("sqlite::memory:"), None);
        let mock = Target::parse("mock:").unwrap();
        assert_eq!(local_binary(&mock), None);
    }

    #[tokio::test]
    async fn plan_and_configuration_hooks_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let l = log.display();
        let plan = Hooks {
            before_trial: Some(format!("echo plan-before >> {l}")),
            after_trial: Some(format!("echo plan-after >> {l}; exit 3")),
            before_trial_sql: Some("SELECT 1".into()),
            ..Hooks::default()
        };
        let conf = Hooks {
            before_trial: Some(format!("echo conf-before >> {l}")),
            after_configuration: Some("sleep 5".into()),
            timeout: Some(0.5),
            ..Hooks::default()
        };
        // No target: the SQL hook is left out, shell hooks run plan first.
        let outs = run_hooks(HookPoint::BeforeTrial, &plan, Some(&conf), None).await;
        let seen: Vec<(&str, &str)> = outs.iter().map(|o| (o.hook.as_str(), o.scope)).collect();
        assert_eq!(
            seen,
            [("before-trial", "plan"), ("before-trial", "configuration")]
        );
        assert!(outs.iter().all(|o| !o.failed()));
        let outs = run_hooks(HookPoint::AfterTrial, &plan, None, None).await;
        assert_eq!(outs.len(), 1);
        assert_eq!(outs[0].exit_code, Some(3));
        assert!(outs[0].failed());
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "plan-before\nconf-before\nplan-after\n"
        );
        // The configuration's own timeout applies to its hooks.
        let outs = run_hooks(HookPoint::AfterConfiguration, &plan, Some(&conf), None).await;
        assert_eq!(outs.len(), 1);
        assert!(outs[0].timed_out, "{:?}", outs[0]);
        // With a target, SQL hooks run and their rows are kept (mock engine).
        let target = Target::parse("mock:").unwrap();
        let outs = run_hooks(
            HookPoint::BeforeTrial,
            &Hooks {
                before_trial_sql: Some("SELECT 1".into()),
                ..Hooks::default()
            },
            None,
            Some((&target, &ConnectOptions::default())),
        )
        .await;
        assert_eq!(outs.len(), 1);
        assert_eq!(outs[0].hook, "before-trial-sql");
        assert!(
            Hooks {
                timeout: Some(-1.0),
                ..Hooks::default()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn doctor_summary_and_warnings_of_server_settings() {
        let settings = serde_json::json!({
            "version": "10.11.19-MariaDB Debian 12",
            "binary": "/usr/sbin/mariadbd",
            "variable_count": 3,
            "variables": {"max_connections": "151", "innodb_buffer_pool_size": "134217728",
                          "zzz_other": "1"},
        });
        let summary = server_summary(&settings);
        let keys: Vec<&str> = summary.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "version",
                "binary",
                "variables",
                "innodb_buffer_pool_size",
                "max_connections"
            ]
        );
        assert_eq!(summary[1].1, "/usr/sbin/mariadbd");
        assert!(summary[2].1.starts_with("3 "));
        assert!(server_warnings(&settings, Some(100)).is_empty());
        assert!(server_warnings(&settings, None).is_empty());
        let w = server_warnings(&settings, Some(151));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("max_connections") && w[0].contains("151"),
            "{w:?}"
        );
        assert_eq!(server_summary(&serde_json::Value::Null).len(), 1);
    }

    #[test]
    fn placement_reads_what_the_kernel_allows() {
        let env = EnvironmentFile {
            client_cpus: Some("0".into()),
            ..EnvironmentFile::default()
        };
        let p = placement(&env, Some(std::process::id()), Some("not requested"));
        assert_eq!(p["client_cpus_asked"], "0");
        assert!(p["client_cpus_allowed"].is_string(), "{p}");
        assert_eq!(p["client_cpus_allowed"], p["server_cpus_allowed"]);
        assert_eq!(p["numa"], "not requested");
    }
}
