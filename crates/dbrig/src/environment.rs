//! The run environment of a plan: managed servers brought up per configuration, restarted
//! per trial when asked, restored to freshly prepared data before write trials; the OS page
//! cache dropped; client and server pinned to CPU sets; shell and SQL hooks around trials;
//! OS statistics sampled during each trial; and restart detection that marks a trial
//! invalid when the server restarted or died inside it.

use std::collections::HashMap;
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

/// Shell and SQL commands around configurations and trials, each with a timeout.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Hooks {
    #[serde(default)]
    pub before_configuration: Option<String>,
    #[serde(default)]
    pub after_configuration: Option<String>,
    #[serde(default)]
    pub before_trial: Option<String>,
    #[serde(default)]
    pub after_trial: Option<String>,
    /// SQL run on the target before / after each trial (the launcher's PRE_TEST_SQL …).
    #[serde(default)]
    pub before_trial_sql: Option<String>,
    #[serde(default)]
    pub after_trial_sql: Option<String>,
    /// Seconds a hook may take (default 60).
    #[serde(default)]
    pub timeout: Option<f64>,
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
                command: command.into(),
                exit_code: o.status.code(),
                timed_out: o.status.code() == Some(124),
                output: truncate(text, 64 * 1024),
            }
        }
        Err(e) => HookOutput {
            hook: name.into(),
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
            command: sql.into(),
            exit_code: Some(0),
            output: truncate(text, 64 * 1024),
            timed_out: false,
        },
        Ok(Err(e)) => HookOutput {
            hook: name.into(),
            command: sql.into(),
            exit_code: Some(1),
            output: e.to_string(),
            timed_out: false,
        },
        Err(_) => HookOutput {
            hook: name.into(),
            command: sql.into(),
            exit_code: None,
            output: String::new(),
            timed_out: true,
        },
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

/// Managed servers of a plan, started on demand with each configuration's parameters.
pub struct Servers {
    state_dir: PathBuf,
    defs: HashMap<String, ServerDef>,
    running: HashMap<String, ManagedServer>,
    server_cpus: Option<String>,
}

impl Servers {
    pub fn new(state_dir: &Path, defs: &[ServerDef], server_cpus: Option<String>) -> Self {
        Self {
            state_dir: state_dir.to_owned(),
            defs: defs.iter().map(|d| (d.name.clone(), d.clone())).collect(),
            running: HashMap::new(),
            server_cpus,
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
    /// `restart` is asked); returns its target and pid.
    pub fn ensure(
        &mut self,
        name: &str,
        params: &Params,
        restart: bool,
    ) -> Result<(Target, Option<u32>)> {
        let cpus = self.server_cpus.clone();
        let s = self.server(name)?;
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
        if let (Some(cpus), Some(pid)) = (cpus, pid)
            && let Err(e) = pin(pid, &cpus)
        {
            eprintln!("dbrig: warning: {e}");
        }
        let url = s.connection_info()?.url();
        Ok((Target::parse(&url)?, pid))
    }

    /// Keep a copy of the prepared data directory (once).
    pub fn snapshot_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
        let s = self.server(name)?;
        if !s.has_snapshot("prepared") {
            s.snapshot_data("prepared")?;
            s.start(params)?;
        }
        Ok(())
    }

    /// Restore the prepared data (the server is restarted by the restore).
    pub fn restore_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
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

    pub fn version_facts(&mut self, name: &str) -> serde_json::Value {
        match self.server(name) {
            Ok(s) => serde_json::json!({
                "server": name,
                "binary": s.server_bin().display().to_string(),
                "params": s.current_params().map(|p| p.to_strings()),
                "data_dir": s.data_dir().display().to_string(),
            }),
            Err(_) => serde_json::Value::Null,
        }
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
