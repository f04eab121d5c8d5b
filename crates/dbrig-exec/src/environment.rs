//! The run environment of a plan (`[environment]`): the server lifecycle, the OS page cache
//! dropped, client and server pinned to CPU sets, shell and SQL hooks around configurations
//! and trials (the plan's and each configuration's own), where a trial was allowed to run,
//! and OS statistics sampled during each trial. Managed servers are in `servers.rs`, what is
//! asked of a server about itself in `probes.rs`.

use std::process::Command;

use dbrig_core::limits;
use dbrig_core::results::{HookOutput, OsSample, OsSpan, Placement};
use dbrig_driver::{ConnectOptions, Connection, Target};
use dbrig_server::{OsClock, OsSampler};
use dbrig_workload::os_meter::{OsMeter, OsMeterRef};
use serde::{Deserialize, Serialize};

use crate::secrets::Secrets;

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
    #[serde(
        default,
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub timeout: Option<f64>,
    /// What a hook that fails (non-zero exit, time-out, SQL error) does besides being said
    /// on the console and stored: `fail-trial` (default: a failed `before-*` hook fails the
    /// trial, which then does not run; an `after-*` one is a warning) or `warn` (never fails
    /// a trial).
    #[serde(default)]
    pub on_failure: Option<OnHookFailure>,
}

/// What a failed hook does to its trial (`on-failure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnHookFailure {
    #[default]
    FailTrial,
    Warn,
}

/// How a failed hook reads on the console and as a trial's failure reason.
pub fn hook_failure(h: &HookOutput) -> String {
    let what = if h.timed_out {
        "timed out".to_owned()
    } else {
        match h.exit_code {
            Some(code) => format!("exited with {code}"),
            None => "could not run".to_owned(),
        }
    };
    let first = h.output.lines().map(str::trim).find(|l| !l.is_empty());
    match first {
        Some(line) => format!("{} hook ({}) {what}: {line}", h.hook, h.scope),
        None => format!("{} hook ({}) {what}", h.hook, h.scope),
    }
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
    secrets: &Secrets,
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
                out.push(scoped(run_shell_hook(name, cmd, timeout, secrets), scope));
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
            out.push(scoped(
                secrets.scrub_hook(run_sql_hook(&hook, sql, target, connect, timeout).await),
                scope,
            ));
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
    #[serde(
        default = "one",
        deserialize_with = "limits::de::<limits::IntervalSeconds, _>"
    )]
    pub os_stats_interval: f64,
    /// Collect the evidence that explains each trial's figure (server and client CPU per unit
    /// of work from `/proc`, the server's counters at each latency interval; with
    /// `wait-sample-ms` and `profile` also waits and stacks). On unless `false`: then nothing
    /// is collected (not even the optional samplers) and reports say so.
    #[serde(default)]
    pub evidence: Option<bool>,
    /// Sample the wait events of the benchmark's sessions every N milliseconds during each
    /// trial (0 = off): PostgreSQL `pg_stat_activity`, MariaDB/MySQL performance_schema's
    /// current waits (the server must run with it; said once otherwise).
    #[serde(default, deserialize_with = "limits::de::<limits::WaitSampleMs, _>")]
    pub wait_sample_ms: u64,
    /// Sample the server's stacks with `perf record` (software clock, 99 Hz) over each
    /// trial's measured interval and store them folded with the trial, for the HTML report's
    /// flame graphs (needs perf and permission to watch the server; said once otherwise).
    #[serde(default)]
    pub profile: bool,
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

impl EnvironmentFile {
    /// Whether evidence is collected (`evidence`, on unless set to false).
    pub fn evidence_on(&self) -> bool {
        self.evidence.unwrap_or(true)
    }
}

fn one() -> f64 {
    1.0
}

/// Run a shell hook with a timeout (coreutils `timeout`), capturing its output. The hook never
/// sees a secret in its environment, and none is stored from what it printed.
pub fn run_shell_hook(name: &str, command: &str, timeout: f64, secrets: &Secrets) -> HookOutput {
    let mut cmd = Command::new("timeout");
    cmd.arg("--kill-after=5")
        .arg(format!("{timeout}"))
        .args(["sh", "-c", command]);
    secrets.strip_env(&mut cmd);
    secrets.scrub_hook(match cmd.output() {
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            HookOutput {
                hook: name.into(),
                scope: "plan".into(),
                command: command.into(),
                exit_code: o.status.code(),
                timed_out: o.status.code() == Some(124),
                output: truncate(text, 64 * 1024),
            }
        }
        Err(e) => HookOutput {
            hook: name.into(),
            scope: "plan".into(),
            command: command.into(),
            exit_code: None,
            output: format!("could not run the hook: {e}"),
            timed_out: false,
        },
    })
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
    match tokio::time::timeout(dbrig_core::limits::duration(timeout), work).await {
        Ok(Ok(text)) => HookOutput {
            hook: name.into(),
            scope: "plan".into(),
            command: sql.into(),
            exit_code: Some(0),
            output: truncate(text, 64 * 1024),
            timed_out: false,
        },
        Ok(Err(e)) => HookOutput {
            hook: name.into(),
            scope: "plan".into(),
            command: sql.into(),
            exit_code: Some(1),
            output: e.to_string(),
            timed_out: false,
        },
        Err(_) => HookOutput {
            hook: name.into(),
            scope: "plan".into(),
            command: sql.into(),
            exit_code: None,
            output: String::new(),
            timed_out: true,
        },
    }
}

/// `hook` with the scope (`plan`, `configuration`) its set belongs to.
fn scoped(mut hook: HookOutput, scope: &str) -> HookOutput {
    hook.scope = scope.to_owned();
    hook
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
pub fn drop_caches() -> std::result::Result<(), dbrig_server::ManagedError> {
    dbrig_server::host::drop_page_cache()
}

/// Pin every thread of `pid` to `cpus` (taskset syntax).
pub fn pin(pid: u32, cpus: &str) -> std::io::Result<()> {
    let o = Command::new("taskset")
        .args(["-a", "-cp", cpus, &pid.to_string()])
        .output()
        .map_err(|e| std::io::Error::new(e.kind(), format!("taskset not available: {e}")))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "taskset -a -cp {cpus} {pid}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )))
    }
}

/// OS statistics for one trial.
pub struct Sampling(Option<OsSampler>);

impl Sampling {
    pub fn start(interval: f64, pid: Option<u32>) -> Self {
        Sampling(
            (interval > 0.0).then(|| OsSampler::start(dbrig_core::limits::duration(interval), pid)),
        )
    }

    /// The samples, as trials store them.
    pub fn stop(self) -> Vec<OsSample> {
        self.0.map(|s| s.stop()).unwrap_or_default()
    }

    /// The sampling clock (`None` with sampling off): a TPC-H trial's per-run OS figures, and
    /// the process to follow after a restart.
    pub fn clock(&self) -> Option<OsClock> {
        self.0.as_ref().map(OsSampler::clock)
    }
}

/// The executor's sampler clock as the workloads' [`OsMeter`].
struct ClockMeter(OsClock);

impl OsMeter for ClockMeter {
    fn begin(&self) -> Box<dyn FnOnce() -> OsSpan + Send> {
        let start = self.0.begin();
        let clock = self.0.clone();
        Box::new(move || clock.end(&start))
    }
}

/// `clock` as what a trial's workload measures its runs with.
pub fn os_meter(clock: Option<OsClock>) -> Option<OsMeterRef> {
    clock.map(|c| OsMeterRef(std::sync::Arc::new(ClockMeter(c))))
}

/// Where a trial ran: the CPUs dbrig and the server were allowed on (read back from
/// `/proc`, whatever was asked), what was asked, and the server's NUMA placement.
pub fn placement(env: &EnvironmentFile, server_pid: Option<u32>, numa: Option<&str>) -> Placement {
    Placement {
        client_cpus_asked: env.client_cpus.clone(),
        server_cpus_asked: env.server_cpus.clone(),
        client_cpus_allowed: dbrig_server::host::cpus_allowed(std::process::id()),
        server_cpus_allowed: server_pid.and_then(dbrig_server::host::cpus_allowed),
        numa: numa.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let outs = run_hooks(
            HookPoint::BeforeTrial,
            &plan,
            Some(&conf),
            None,
            &Secrets::default(),
        )
        .await;
        let seen: Vec<(&str, &str)> = outs
            .iter()
            .map(|o| (o.hook.as_str(), o.scope.as_str()))
            .collect();
        assert_eq!(
            seen,
            [("before-trial", "plan"), ("before-trial", "configuration")]
        );
        assert!(outs.iter().all(|o| !o.failed()));
        let outs = run_hooks(
            HookPoint::AfterTrial,
            &plan,
            None,
            None,
            &Secrets::default(),
        )
        .await;
        assert_eq!(outs.len(), 1);
        assert_eq!(outs[0].exit_code, Some(3));
        assert!(outs[0].failed());
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "plan-before\nconf-before\nplan-after\n"
        );
        // The configuration's own timeout applies to its hooks.
        let outs = run_hooks(
            HookPoint::AfterConfiguration,
            &plan,
            Some(&conf),
            None,
            &Secrets::default(),
        )
        .await;
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
            &Secrets::default(),
        )
        .await;
        assert_eq!(outs.len(), 1);
        assert_eq!(outs[0].hook, "before-trial-sql");
        let e = toml::from_str::<Hooks>("timeout = -1").unwrap_err();
        assert!(e.message().contains("out of range"), "{e}");
    }

    #[test]
    fn placement_reads_what_the_kernel_allows() {
        let env = EnvironmentFile {
            client_cpus: Some("0".into()),
            ..EnvironmentFile::default()
        };
        let p = placement(&env, Some(std::process::id()), Some("not requested"));
        assert_eq!(p.client_cpus_asked.as_deref(), Some("0"));
        assert!(p.client_cpus_allowed.is_some(), "{p:?}");
        assert_eq!(p.client_cpus_allowed, p.server_cpus_allowed);
        assert_eq!(p.numa.as_deref(), Some("not requested"));
    }
}
