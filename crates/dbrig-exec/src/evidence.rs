//! What explains a trial's figure, collected around every trial whatever its kind: the CPU the
//! server process and dbrig spent over the measured interval (from `/proc/PID/stat`: user +
//! system of all the process's threads; for the server also its children, as PostgreSQL
//! works in a process per connection: `dbrig_server::tree_cpu_s`), the server's cumulative counters sampled at the report
//! interval on a connection of their own (MariaDB/MySQL `SHOW GLOBAL STATUS`, PostgreSQL
//! `pg_stat_database`, `pg_stat_bgwriter` and `pg_stat_io` where the version has it), and,
//! when the plan asks (`wait-sample-ms`), the wait events of the benchmark's sessions and
//! (`profile`) the server's stacks sampled by perf ([`crate::profile`]).
//!
//! The measured interval begins when the workload says so ([`Collector::measuring`]: an OLTP
//! run after its warm-up; other kinds at the start of the trial) and ends when the trial does.
//! Counter snapshots are taken when the runner closes each latency interval, so the deltas line
//! up with the latency intervals; the last delta runs to the end, and all of them sum to the
//! run's total.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use dbrig_core::results::evidence::ON_CPU;
use dbrig_core::results::{CounterInterval, CounterSeries, TrialEvidence, WaitSamples, WorkCpu};
use dbrig_driver::{ConnectOptions, Connection, Dialect, DriverError, Target, own_sessions};
use dbrig_server::{ProcessUsage, tree_cpu_s};
use dbrig_workload::perfrun::{background_innodb_counter, delta, name_values, status_gauge};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::probes::{asking, probe_sql};
use crate::profile::{ProfileError, Profiler};

/// What the plan asks to be collected besides CPU and counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct EvidenceOptions {
    /// Collect nothing (`[environment] evidence = false`, `--no-evidence`): the trial's
    /// evidence only says it was switched off.
    pub off: bool,
    /// Sample wait events every this many milliseconds (0: off).
    pub wait_sample_ms: u64,
    /// The server answered the trial's first probe. When it did not (a connect timeout, a
    /// refused connection), no sampler connects: the trial fails on its own connection, and
    /// a silent server is not waited for twice.
    pub reachable: bool,
    /// Sample the server's stacks with `perf record` over the measured interval.
    pub profile: bool,
}

type Status = BTreeMap<String, f64>;

/// CPU seconds of the server process and of dbrig at one instant.
#[derive(Debug, Clone, Copy)]
struct CpuMark {
    at: Instant,
    server_s: Option<f64>,
    client_s: Option<f64>,
}

impl CpuMark {
    fn now(server_pid: Option<u32>) -> CpuMark {
        CpuMark {
            at: Instant::now(),
            server_s: server_pid.and_then(tree_cpu_s),
            client_s: ProcessUsage::of_self().map(|u| u.user_s + u.system_s),
        }
    }
}

enum Tick {
    /// The measured interval begins (again: a later start replaces an earlier one).
    Start,
    /// A latency interval ended, this many seconds into the measured interval.
    At(f64),
    Stop,
}

/// The wait sampler's task.
type WaitSampler = JoinHandle<Result<WaitSamples, SamplerError>>;

/// Why a sampler (counters, waits) stopped without its figures; said in the trial's notes.
#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error("{0}")]
    Connect(DriverError),
    /// A query failed: the server's message and the source read (one line, not the query).
    #[error("{} (reading {reading})", .error.message)]
    Read { reading: String, error: DriverError },
    #[error(
        "the server runs without performance_schema (start it with performance_schema=ON; a managed server: add it to the configuration's params)"
    )]
    NoPerformanceSchema,
    #[error(
        "performance_schema keeps no current waits (enable the events_waits_current consumer and the wait/% instruments: performance-schema-consumer-events-waits-current=ON, performance-schema-instrument='wait/%=ON')"
    )]
    NoCurrentWaits,
}

/// Why a CPU figure is impossible and is not stored.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CpuNotStored {
    #[error(
        "/proc gave no consistent reading of its processes (they kept ending while it was read)"
    )]
    NoConsistentReading,
    #[error("its CPU time went down by {0:.3} s over the trial (a process left unseen)")]
    WentDown(f64),
    #[error("{spent:.3} s of CPU in {interval_s:.3} s is more than the host's {cpus} CPUs have")]
    MoreThanTheHost {
        spent: f64,
        interval_s: f64,
        cpus: u32,
    },
    #[error(
        "no CPU time for {units} unit(s) of work: below /proc's resolution ({tick_ms} ms) over {interval_s:.3} s"
    )]
    BelowResolution {
        units: u64,
        tick_ms: f64,
        interval_s: f64,
    },
}

/// Collects one trial's evidence; see the module documentation.
pub struct Collector {
    server_pid: Option<u32>,
    start: Mutex<Option<CpuMark>>,
    ticks: Option<mpsc::UnboundedSender<Tick>>,
    counters: Option<JoinHandle<Result<CounterSeries, SamplerError>>>,
    waits: Option<(oneshot::Sender<()>, WaitSampler)>,
    /// How many times the measured interval has begun: the wait sampler counts only within
    /// the latest (0: not yet).
    measuring_since: Arc<AtomicU64>,
    /// The profiler of the current measured interval, or why there is none.
    profiler: Mutex<Option<Result<Profiler, ProfileError>>>,
    profile: bool,
    notes: Vec<String>,
    off: bool,
    /// dbrig's peak resident memory was reset as the trial began: its `VmHWM` at the end is
    /// the trial's own peak.
    peak_reset: bool,
}

impl Collector {
    /// Begin collecting for a trial on `target`, whose server process on this host is
    /// `server_pid` (a managed server's, or else the one listening on its port: see
    /// [`crate::probes::local_process`]).
    pub async fn start(
        target: &Target,
        connect: &ConnectOptions,
        server_pid: Option<u32>,
        options: EvidenceOptions,
    ) -> Collector {
        if options.off {
            return Collector {
                server_pid: None,
                start: Mutex::new(None),
                ticks: None,
                counters: None,
                waits: None,
                measuring_since: Arc::new(AtomicU64::new(0)),
                profiler: Mutex::new(None),
                profile: false,
                notes: Vec::new(),
                off: true,
                peak_reset: false,
            };
        }
        let mut notes = Vec::new();
        // Before any client of the trial connects: the peak then counts the trial's clients,
        // not the prepare's loaders or an earlier trial's.
        let peak_reset = dbrig_server::reset_own_peak_rss();
        if !peak_reset {
            notes.push(
                "client peak memory not stored: the kernel did not reset dbrig's peak (/proc/self/clear_refs)"
                    .to_owned(),
            );
        }
        let server_pid = match target {
            Target::Mysql { .. } | Target::Postgres { .. } => {
                if server_pid.is_none() {
                    notes.push(format!(
                        "server CPU: no process on this host serves {target} (a remote server, or one not ours to inspect): client CPU only"
                    ));
                }
                server_pid
            }
            // SQLite runs inside dbrig (its CPU is the client's); the mock engine has none.
            Target::Sqlite { .. } | Target::Mock { .. } => None,
        };
        if options.profile && server_pid.is_none() {
            notes.push(format!(
                "profile: {target} has no server process on this host to profile; no profile"
            ));
        }
        // Cycles per unit would be the server's: said where a server process was found.
        if server_pid.is_some()
            && let Some(line) = hardware_counters_note()
        {
            notes.push(line.to_owned());
        }
        let (ticks, counters) = match probe_sql(target, "counters") {
            Some(_) if options.reachable => {
                let (tx, rx) = mpsc::unbounded_channel();
                let task = tokio::spawn(sample_counters(target.clone(), asking(connect), rx));
                (Some(tx), Some(task))
            }
            _ => (None, None),
        };
        let measuring_since = Arc::new(AtomicU64::new(0));
        let waits = match (options.wait_sample_ms, probe_sql(target, "waits")) {
            _ if !options.reachable => None,
            (0, _) | (_, None) => None,
            (ms, Some(_)) => {
                let (stop, stopped) = oneshot::channel();
                let task = tokio::spawn(sample_waits(
                    target.clone(),
                    asking(connect),
                    Duration::from_millis(ms),
                    Arc::clone(&measuring_since),
                    stopped,
                ));
                Some((stop, task))
            }
        };
        Collector {
            server_pid,
            start: Mutex::new(None),
            ticks,
            counters,
            waits,
            measuring_since,
            profiler: Mutex::new(None),
            profile: options.profile && server_pid.is_some(),
            notes,
            off: false,
            peak_reset,
        }
    }

    /// The measured interval begins now (called again, it begins again: a warm-up is over).
    pub fn measuring(&self) {
        if self.off {
            return;
        }
        *self.start.lock().expect("evidence lock") = Some(CpuMark::now(self.server_pid));
        self.measuring_since.fetch_add(1, Ordering::SeqCst);
        if let (true, Some(pid)) = (self.profile, self.server_pid) {
            let mut profiler = self.profiler.lock().expect("profiler lock");
            if let Some(Ok(earlier)) = profiler.take() {
                earlier.discard();
            }
            *profiler = Some(Profiler::start(pid));
        }
        if let Some(t) = &self.ticks {
            let _ = t.send(Tick::Start);
        }
    }

    /// The clients are connected: sample the server processes they brought up too.
    pub fn connected(&self) {
        self.follow();
    }

    /// The profiler also samples server processes that appeared since it last looked
    /// (PostgreSQL's backends of new connections).
    fn follow(&self) {
        let mut profiler = self.profiler.lock().expect("profiler lock");
        if let Some(Ok(p)) = profiler.as_mut()
            && let Err(why) = p.follow()
        {
            *profiler = Some(Err(why));
        }
    }

    /// A latency interval ended `t_s` seconds into the measured interval.
    pub fn interval(&self, t_s: f64) {
        self.follow();
        if let Some(t) = &self.ticks {
            let _ = t.send(Tick::At(t_s));
        }
    }

    /// The trial is over: its evidence, with CPU divided among `units` units of work. The
    /// samplers' connections answer within their reply limit, so this waits at most that long
    /// on a server that stopped answering; with `patience` (a run stopped by Ctrl-C: briefly,
    /// a second one: not at all) it waits no longer than that for their last answers.
    pub async fn finish(
        mut self,
        units: Option<(u64, &str)>,
        patience: Option<Duration>,
    ) -> TrialEvidence {
        if self.off {
            return TrialEvidence {
                switched_off: true,
                notes: vec![EVIDENCE_OFF.to_owned()],
                ..TrialEvidence::default()
            };
        }
        let end = CpuMark::now(self.server_pid);
        let profiler = self.profiler.lock().expect("profiler lock").take();
        let start = self.start.lock().expect("evidence lock").take();
        let mut evidence = TrialEvidence::default();
        if let (Some(start), Some((units, unit))) = (start, units) {
            let interval_s = end.at.duration_since(start.at).as_secs_f64();
            let reading = CpuReading {
                interval_s,
                units,
                cpus: dbrig_server::online_cpus(),
                tick_s: dbrig_server::cpu_tick_s(),
            };
            let mut spent = |who: &str, a: Option<f64>, b: Option<f64>, expected: bool| {
                reading.spent(a, b, expected).unwrap_or_else(|why| {
                    self.notes.push(format!("{who} CPU not stored: {why}"));
                    None
                })
            };
            let server_cpu_s = spent(
                "server",
                start.server_s,
                end.server_s,
                self.server_pid.is_some(),
            );
            let client_cpu_s = spent("client", start.client_s, end.client_s, true);
            let client_peak_rss_bytes = if self.peak_reset {
                ProcessUsage::of_self().map(|u| u.peak_rss_bytes)
            } else {
                None
            };
            evidence.cpu = Some(WorkCpu {
                unit: unit.to_owned(),
                units,
                interval_s,
                server_cpu_s,
                server_pid: self.server_pid,
                client_cpu_s,
                client_peak_rss_bytes,
            });
        }
        if let Some(t) = self.ticks.take() {
            let _ = t.send(Tick::Stop);
        }
        let cut_short = |what: &str| {
            format!(
                "{what} not sampled to the end: the run was stopped (Ctrl-C) before their last answer"
            )
        };
        if let Some(task) = self.counters.take() {
            match within(task, patience).await {
                Some(Ok(Ok(series))) if !series.total.is_empty() => {
                    evidence.counters = Some(series)
                }
                Some(Ok(Ok(_))) => {}
                Some(Ok(Err(e))) => self.notes.push(format!(
                    "counters not sampled: the evidence connection: {e}"
                )),
                Some(Err(e)) => self.notes.push(format!("counters not sampled: {e}")),
                None => self.notes.push(cut_short("counters")),
            }
        }
        if let Some((stop, task)) = self.waits.take() {
            let _ = stop.send(());
            match within(task, patience).await {
                Some(Ok(Ok(w))) => evidence.waits = Some(w),
                Some(Ok(Err(e))) => self.notes.push(format!(
                    "wait events not sampled: the wait-sampling connection: {e}"
                )),
                Some(Err(e)) => self.notes.push(format!("wait events not sampled: {e}")),
                None => self.notes.push(cut_short("wait events")),
            }
        }
        match profiler {
            // perf's own processing takes seconds: not after Ctrl-C.
            Some(Ok(p)) if patience.is_some() => {
                p.discard();
                self.notes
                    .push("profile: discarded, the run was stopped (Ctrl-C)".to_owned());
            }
            Some(Ok(p)) => match p.finish().await {
                Ok(profile) => evidence.profile = Some(profile),
                Err(why) => self.notes.push(why.to_string()),
            },
            Some(Err(why)) => self.notes.push(why.to_string()),
            None => {}
        }
        evidence.notes = std::mem::take(&mut self.notes);
        evidence
    }
}

/// What a CPU figure of the measured interval is checked against before it is stored.
#[derive(Debug, Clone, Copy)]
struct CpuReading {
    interval_s: f64,
    units: u64,
    /// Online CPUs of the host (`None`: unknown, no upper bound).
    cpus: Option<u32>,
    /// `/proc`'s resolution.
    tick_s: f64,
}

impl CpuReading {
    /// The CPU seconds spent between readings `a` and `b` (`expected`: both should exist), or
    /// why that figure is impossible and must not be stored: a reading that failed, CPU time
    /// that went down, more than the host's CPUs have in the interval, or none at all for work
    /// that was done.
    fn spent(
        &self,
        a: Option<f64>,
        b: Option<f64>,
        expected: bool,
    ) -> Result<Option<f64>, CpuNotStored> {
        let (Some(a), Some(b)) = (a, b) else {
            return match expected {
                true => Err(CpuNotStored::NoConsistentReading),
                false => Ok(None),
            };
        };
        let spent = b - a;
        let slack = 2.0 * self.tick_s;
        if spent < -slack {
            return Err(CpuNotStored::WentDown(-spent));
        }
        if let Some(cpus) = self.cpus
            && spent > self.interval_s * f64::from(cpus) + slack
        {
            return Err(CpuNotStored::MoreThanTheHost {
                spent,
                interval_s: self.interval_s,
                cpus,
            });
        }
        if spent < self.tick_s / 2.0 && self.units > 0 {
            return Err(CpuNotStored::BelowResolution {
                units: self.units,
                tick_ms: self.tick_s * 1000.0,
                interval_s: self.interval_s,
            });
        }
        Ok(Some(spent.max(0.0)))
    }
}

/// A sampler's task's end, waited for at most `patience` (then it is stopped: `None`).
async fn within<T>(
    mut task: JoinHandle<T>,
    patience: Option<Duration>,
) -> Option<Result<T, tokio::task::JoinError>> {
    match patience {
        None => Some(task.await),
        Some(limit) => match tokio::time::timeout(limit, &mut task).await {
            Ok(ended) => Some(ended),
            Err(_) => {
                task.abort();
                None
            }
        },
    }
}

/// What a trial without evidence says (once per run, and in its stored notes).
pub const EVIDENCE_OFF: &str = "evidence not collected: switched off (--no-evidence, or [environment] evidence = false): no CPU per unit, counters, waits or profile";

/// Whether `perf stat` counts cycles and instructions here: checked once per process. `None`
/// when it does (they are not collected yet either way); otherwise why not, to say and record.
pub fn hardware_counters_note() -> Option<&'static str> {
    static NOTE: OnceLock<Option<String>> = OnceLock::new();
    const NO_COUNTERS: &str = "cycles and instructions per unit: this host has no hardware performance counters (`perf stat -e cycles` says <not supported>, as in most VMs); CPU time only";
    NOTE.get_or_init(|| {
        // Where the kernel shows no core PMU, perf's answer is known without running it: its
        // ~10 ms of CPU (and ~0.1 s) would count as the client's in every run on such a host.
        if no_core_pmu(std::path::Path::new(PMU_DEVICES)) && on_path("perf") {
            return Some(NO_COUNTERS.to_owned());
        }
        let out = std::process::Command::new("perf")
            .args(["stat", "-x", ",", "-e", "cycles,instructions", "true"])
            .output();
        match out {
            Err(_) => Some("cycles and instructions per unit: `perf` is not installed (linux-tools / linux-perf package); CPU time only".to_owned()),
            Ok(o) => {
                let text = String::from_utf8_lossy(&o.stderr);
                if text.contains("<not supported>") {
                    Some(NO_COUNTERS.to_owned())
                } else if !o.status.success() || text.contains("<not counted>") {
                    Some("cycles and instructions per unit: `perf stat` may not count here (kernel.perf_event_paranoid, or no permission); CPU time only".to_owned())
                } else {
                    None
                }
            }
        }
    })
    .as_deref()
}

/// Where the kernel lists its performance monitoring units, one folder each.
const PMU_DEVICES: &str = "/sys/bus/event_source/devices";

/// Whether the PMUs listed in `devices` are known to have no core PMU, the one that counts
/// cycles (`perf stat -e cycles` then says <not supported>). Known on x86-64 only, where the
/// core PMU is always `cpu` (`cpu_core` / `cpu_atom` on hybrid processors); elsewhere, and
/// when the folder cannot be read, nothing is known (`false`).
fn no_core_pmu(devices: &std::path::Path) -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(devices) else {
        return false;
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // An empty listing is no listing (sysfs not mounted as usual).
    !names.is_empty()
        && !names
            .iter()
            .any(|n| matches!(n.as_str(), "cpu" | "cpu_core" | "cpu_atom"))
}

/// Whether `program` is an executable file in a folder of `PATH` (where running it would find
/// it).
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// One snapshot of every cumulative counter the server has (gauges left out), from each
/// query and the source it reads (named in an error, one line: not the query's text).
async fn counter_snapshot(
    conn: &mut Connection,
    queries: &[String],
    sources: &[String],
    dialect: Dialect,
) -> Result<Status, SamplerError> {
    let mut out = Status::new();
    for (sql, source) in queries.iter().zip(sources) {
        let rows = conn
            .query(sql, &[])
            .await
            .map_err(|error| SamplerError::Read {
                reading: source.clone(),
                error,
            })?;
        out.extend(name_values(rows).filter(|(n, _)| {
            dialect != Dialect::Mysql || !(status_gauge(n) || background_innodb_counter(n))
        }));
    }
    Ok(out)
}

/// The counters that moved, with their deltas.
fn moved(before: &Status, after: &Status) -> BTreeMap<String, f64> {
    delta(before, after)
        .into_iter()
        .filter(|(_, v)| *v != 0.0)
        .collect()
}

/// The counter sampler: a snapshot at the start of the measured interval, at every latency
/// interval's end, and at the end.
async fn sample_counters(
    target: Target,
    connect: ConnectOptions,
    mut ticks: mpsc::UnboundedReceiver<Tick>,
) -> Result<CounterSeries, SamplerError> {
    let dialect = target.dialect();
    let sql = |name: &str| probe_sql(&target, name).unwrap_or_default();
    let mut conn = Connection::connect(&target, &connect)
        .await
        .map_err(SamplerError::Connect)?;
    let mut queries = vec![sql("counters")];
    let mut sources = Vec::new();
    match dialect {
        Dialect::Mysql => sources.push("SHOW GLOBAL STATUS".to_owned()),
        _ => {
            sources.push("pg_stat_database".to_owned());
            queries.push(sql("counters_bgwriter"));
            sources.push("pg_stat_bgwriter".to_owned());
            let has_io = conn.query(&sql("has_stat_io"), &[]).await.ok();
            if has_io
                .and_then(|r| r.first()?.first()?.as_i64())
                .is_some_and(|v| v > 0)
            {
                queries.push(sql("counters_io"));
                sources.push("pg_stat_io".to_owned());
            }
        }
    }
    let mut series = CounterSeries {
        sources,
        ..CounterSeries::default()
    };
    let mut base: Option<(Instant, Status, Status, f64)> = None;
    while let Some(tick) = ticks.recv().await {
        match tick {
            Tick::Start => {
                let s = counter_snapshot(&mut conn, &queries, &series.sources, dialect).await?;
                series.intervals.clear();
                base = Some((Instant::now(), s.clone(), s, 0.0));
            }
            Tick::At(t_s) => {
                if let Some((_, _, prev, last_t)) = &mut base {
                    let s = counter_snapshot(&mut conn, &queries, &series.sources, dialect).await?;
                    series.intervals.push(CounterInterval {
                        t_s,
                        deltas: moved(prev, &s),
                    });
                    *prev = s;
                    *last_t = t_s;
                }
            }
            Tick::Stop => break,
        }
    }
    if let Some((at, first, prev, last_t)) = base {
        let s = counter_snapshot(&mut conn, &queries, &series.sources, dialect).await?;
        let t_s = at.elapsed().as_secs_f64().max(last_t);
        let tail = moved(&prev, &s);
        if !tail.is_empty() || series.intervals.is_empty() {
            series.intervals.push(CounterInterval { t_s, deltas: tail });
        }
        series.total = moved(&first, &s);
    }
    conn.close().await;
    Ok(series)
}

/// How often MariaDB/MySQL's `INNODB_TRX` is read: the server refreshes its cache only when
/// it was not read for 100 ms, so reading it more often would keep it stale.
const INNODB_TRX_REFRESH: Duration = Duration::from_millis(150);

/// What a MariaDB/MySQL session waiting for a row lock is counted as.
pub const INNODB_ROW_LOCK_WAIT: &str = "innodb/row_lock_wait";

/// The wait sampler: every `every`, the wait each busy session of the benchmark (one this
/// process opened: [`own_sessions`]) is in.
async fn sample_waits(
    target: Target,
    connect: ConnectOptions,
    every: Duration,
    measuring: Arc<AtomicU64>,
    mut stop: oneshot::Receiver<()>,
) -> Result<WaitSamples, SamplerError> {
    let mut conn = Connection::connect(&target, &connect)
        .await
        .map_err(SamplerError::Connect)?;
    let source = match target.dialect() {
        Dialect::Mysql => {
            let sql = probe_sql(&target, "wait_source").unwrap_or_default();
            let row = conn
                .query(&sql, &[])
                .await
                .map_err(|error| SamplerError::Read {
                    reading: "performance_schema's settings".to_owned(),
                    error,
                })?
                .into_iter()
                .next()
                .unwrap_or_default();
            let on = |i: usize| row.get(i).and_then(|v| v.as_i64()).unwrap_or(0) > 0;
            if !on(0) {
                conn.close().await;
                return Err(SamplerError::NoPerformanceSchema);
            }
            if !on(1) {
                conn.close().await;
                return Err(SamplerError::NoCurrentWaits);
            }
            "performance_schema.events_waits_current"
        }
        _ => "pg_stat_activity",
    };
    let sql = probe_sql(&target, "waits").unwrap_or_default();
    let lock_sql = match target.dialect() {
        Dialect::Mysql => probe_sql(&target, "lock_waits"),
        _ => None,
    };
    let mut lock_waiting: (Option<Instant>, Vec<i64>) = (None, Vec::new());
    let mut counted_since = 0;
    let mut out = WaitSamples {
        source: source.to_owned(),
        interval_ms: every.as_millis() as u64,
        ..WaitSamples::default()
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {
                if let Some(lock_sql) = &lock_sql
                    && lock_waiting.0.is_none_or(|at| at.elapsed() >= INNODB_TRX_REFRESH)
                {
                    let rows = conn.query(lock_sql, &[]).await.map_err(|error| SamplerError::Read {
                        reading: "INNODB_TRX".to_owned(),
                        error,
                    })?;
                    lock_waiting = (
                        Some(Instant::now()),
                        rows.iter().filter_map(|r| r.first()?.as_i64()).collect(),
                    );
                }
                let rows = conn.query(&sql, &[]).await.map_err(|error| SamplerError::Read {
                    reading: source.to_owned(),
                    error,
                })?;
                // Counted within the measured interval only (a warm-up's start again).
                let now_measuring = measuring.load(Ordering::SeqCst);
                if now_measuring == 0 {
                    continue;
                }
                if now_measuring != counted_since {
                    counted_since = now_measuring;
                    out.samples = 0;
                    out.counts.clear();
                }
                out.samples += 1;
                // Only this process's sessions: a foreign session busy in the same database
                // is not the benchmark's.
                let own = own_sessions(&target);
                for r in rows {
                    let session = r.first().and_then(|v| v.as_i64());
                    if !session.is_some_and(|s| own.contains(&s)) {
                        continue;
                    }
                    let event = if session.is_some_and(|s| lock_waiting.1.contains(&s)) {
                        INNODB_ROW_LOCK_WAIT.to_owned()
                    } else {
                        r.get(1).and_then(|v| v.to_text()).unwrap_or_else(|| ON_CPU.to_owned())
                    };
                    *out.counts.entry(event).or_insert(0) += 1;
                }
            }
        }
    }
    conn.close().await;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: f64 = 0.01;

    /// A host's PMU listing says whether cycles can be counted (on x86-64, where the core PMU
    /// has one of three names): no `cpu` PMU, none; one of the names, or no listing, not known.
    #[test]
    fn no_core_pmu_is_known_from_the_kernels_listing() {
        let dir = tempfile::tempdir().unwrap();
        let devices = dir.path();
        assert!(!no_core_pmu(&devices.join("missing")));
        assert!(!no_core_pmu(devices), "an empty listing says nothing");
        for d in ["software", "tracepoint", "breakpoint", "msr", "uprobe"] {
            std::fs::create_dir(devices.join(d)).unwrap();
        }
        assert_eq!(no_core_pmu(devices), cfg!(target_arch = "x86_64"));
        for core in ["cpu", "cpu_core", "cpu_atom"] {
            std::fs::create_dir(devices.join(core)).unwrap();
            assert!(!no_core_pmu(devices), "{core}");
            std::fs::remove_dir(devices.join(core)).unwrap();
        }
    }

    #[test]
    fn on_path_finds_executables_only() {
        assert!(on_path("sh"));
        assert!(!on_path("dbrig-no-such-program"));
    }

    fn reading(interval_s: f64, units: u64) -> CpuReading {
        CpuReading {
            interval_s,
            units,
            cpus: Some(2),
            tick_s: TICK,
        }
    }

    /// The counters that moved between two snapshots, by how much: one that appeared counts
    /// from 0; those that stood still, and one that disappeared, are left out.
    #[test]
    fn moved_counters_are_the_deltas_of_those_that_changed() {
        let status = |pairs: &[(&str, f64)]| -> Status {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
        };
        let before = status(&[("Questions", 100.0), ("Com_commit", 7.0), ("Gone", 1.0)]);
        let after = status(&[("Questions", 160.0), ("Com_commit", 7.0), ("New", 3.0)]);
        let m = moved(&before, &after);
        assert_eq!(m.get("Questions"), Some(&60.0), "{m:?}");
        assert_eq!(m.get("New"), Some(&3.0), "{m:?}");
        assert_eq!(m.len(), 2, "{m:?}");
    }

    /// A figure is stored only when it can be true: CPU that went down (a process left
    /// unseen), more than the host's CPUs hold, none at all for work done, or a reading that
    /// failed are said and left out; a server not on this host has no figure and no note.
    #[test]
    fn impossible_cpu_figures_are_refused() {
        let r = reading(10.0, 20_000);
        assert_eq!(r.spent(Some(5.0), Some(6.5), true), Ok(Some(1.5)));
        // Within a tick or two of rounding: 0, not refused (no units of work).
        assert_eq!(
            reading(0.1, 0).spent(Some(5.0), Some(5.0), true),
            Ok(Some(0.0))
        );
        let down = r.spent(Some(5.0), Some(4.0), true).unwrap_err().to_string();
        assert!(down.contains("went down by 1.000 s"), "{down}");
        let over = r
            .spent(Some(0.0), Some(20.5), true)
            .unwrap_err()
            .to_string();
        assert!(over.contains("more than the host's 2 CPUs"), "{over}");
        // All of both CPUs for the whole interval is possible.
        assert_eq!(r.spent(Some(0.0), Some(20.0), true), Ok(Some(20.0)));
        let none = r.spent(Some(3.0), Some(3.0), true).unwrap_err().to_string();
        assert!(none.contains("no CPU time for 20000 unit(s)"), "{none}");
        // Down by exactly the two ticks of slack: rounding, not a lost process.
        assert_eq!(
            reading(0.1, 0).spent(Some(0.0), Some(-2.0 * TICK), true),
            Ok(Some(0.0))
        );
        let failed = r.spent(Some(3.0), None, true).unwrap_err().to_string();
        assert!(failed.contains("no consistent reading"), "{failed}");
        assert_eq!(r.spent(None, None, false), Ok(None));
        // Without the host's CPU count, no upper bound.
        let unknown = CpuReading { cpus: None, ..r };
        assert_eq!(unknown.spent(Some(0.0), Some(50.0), true), Ok(Some(50.0)));
    }

    /// A trial's client memory is dbrig's own peak over that trial: not what the process held
    /// before it (a prepare's loaders, an earlier trial's clients: `VmHWM` alone keeps the
    /// process's peak since it started), and never a child's — a plan on a managed MariaDB was
    /// measured at 663 MB of "client memory" with `/usr/bin/time`, which folds in the managed
    /// server dbrig reaps, where dbrig held 112 MB. Without the reset at the trial's start the
    /// stored peak is the earlier 256 MB below.
    #[tokio::test]
    async fn client_peak_memory_is_the_trials_own() {
        const EARLIER: usize = 256 << 20;
        // Touched (not calloc's untouched pages), then returned to the kernel (an mmap).
        let earlier = vec![1u8; EARLIER];
        std::hint::black_box(&earlier);
        drop(earlier);
        let before = ProcessUsage::of_self().unwrap();
        assert!(before.peak_rss_bytes >= EARLIER as u64, "{before:?}");
        let target = Target::parse("mock:").unwrap();
        let collector = Collector::start(
            &target,
            &ConnectOptions::default(),
            None,
            EvidenceOptions::default(),
        )
        .await;
        collector.measuring();
        // The trial's own memory: a child's (reaped here) is not dbrig's.
        let status = std::process::Command::new("sh")
            .args(["-c", "exec true"])
            .status()
            .unwrap();
        assert!(status.success());
        let during = vec![1u8; 8 << 20];
        std::hint::black_box(&during);
        let evidence = collector.finish(Some((10, "transaction")), None).await;
        drop(during);
        let cpu = evidence.cpu.expect("client CPU and memory stored");
        let peak = cpu.client_peak_rss_bytes.expect("peak stored");
        assert!(
            peak < EARLIER as u64,
            "the trial's peak {peak} counts memory freed before the trial began"
        );
        // At least what the trial held at its end: the 8 MB above and the process.
        assert!(peak >= 8 << 20, "{peak}");
    }
}
