//! Every kind of workload a plan's `[[workload]]` can name, matched here and nowhere else:
//! an OLTP workload driven by the runner, a micro-benchmark (which creates, measures and drops
//! its own tables), a TPC-H power or throughput test (whose data load is the prepare step), or
//! a perfrun (every query of a folder executed cold then warm, with the server's counters).
//!
//! The executor runs each kind the same way (target up, prepare once, trial, record); what a
//! trial measured comes back as a [`TrialOutput`] holding the typed
//! [`dbrig_core::results::TrialResult`] that the results database stores and every report
//! reads, whichever command or plan took it.

use std::path::PathBuf;
use std::sync::Arc;

use dbrig_core::limits;
use dbrig_driver::{ConnectOptions, Connection, Target};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::progress::LoadProgress;
use dbrig_core::results::{LoadFigures, PowerReport, TrialResult};
use dbrig_core::{IntervalSample, Measurements};

use crate::micro::MicroOptions;
use crate::perfrun::PerfrunOptions;
use crate::runner::{self, RunSpec, Stopper};
use crate::sqlbench::SqlBenchOptions;
use crate::tpch::{
    self, KeysWhen, ParamMode, PowerOptions, QuerySet, ScaleFactor, ThroughputOptions,
};
use crate::{OltpKind, OltpOptions, Workload};

/// Options of a TPC-H power or throughput test in a plan (`streams` and `timeout` are the
/// throughput test's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TpchPowerOptions {
    /// Scale factor of the data the prepare step loads (0.01, 0.1, 1, …). A single command
    /// (`dbrig tpch power`) runs on the data that is loaded and records its scale factor.
    pub sf: f64,
    /// Run only these queries (TPC-H numbers or file stems), in stream-0 order; all when empty.
    #[serde(default)]
    pub queries: Vec<String>,
    /// A folder of `.sql` files to run instead of the built-in queries.
    #[serde(default)]
    pub query_dir: Option<PathBuf>,
    /// Random qgen parameters from this seed; the validation parameters when absent.
    #[serde(default, deserialize_with = "limits::de_opt::<limits::Seed, _>")]
    pub seed: Option<u64>,
    /// Run the refresh functions RF1/RF2 around the queries (they change the data).
    #[serde(default)]
    pub refresh: bool,
    /// Primary keys created before or after the load (`auto`: the engine's fast path, see
    /// [`KeysWhen::resolved`]).
    #[serde(default = "keys_auto")]
    pub keys: KeysWhen,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    #[serde(default, deserialize_with = "limits::de::<limits::Loaders, _>")]
    pub parallel: u32,
    /// Throughput test: concurrent query streams (0: the spec's minimum for the scale factor).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "limits::de::<limits::Streams, _>"
    )]
    pub streams: u32,
    /// Throughput test: seconds a query may run before it is cancelled on the server.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub timeout: Option<f64>,
    /// Power test: the DBT-3 launcher's per-query controls (`[workload.options.controls]`:
    /// reduction, restarts, cache drops; `[….controls.all]` and `[….controls.query."N"]` with
    /// runs, warm-ups, timeouts, startup params, hooks); see `dbrig tpch power --help`.
    #[serde(default, skip_serializing_if = "tpch::PowerControls::is_default")]
    pub controls: tpch::PowerControls,
    /// Throughput test: a stored power test on the same data, for QphH@Size (set by
    /// `dbrig tpch throughput --power-run RUN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_run: Option<PowerRef>,
    /// Power test: a target holding the same data (another engine): every query's answer is
    /// compared with its answer there (run untimed, before the test), so a completed query
    /// reads `ok` only when compared; without it (and off SF 1's reference answers) it reads
    /// `unchecked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_against: Option<String>,
    /// Load even when the data's estimated size exceeds the free space dbrig can see (or 1 TB
    /// where it cannot): the plan's `--force` of `dbrig tpch load`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_load: bool,
}

/// A stored power test's Power@Size and scale factor, QphH@Size's other half.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerRef {
    pub run: i64,
    pub power_at_size: f64,
    pub scale_factor: f64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn keys_auto() -> KeysWhen {
    KeysWhen::Auto
}

impl TpchPowerOptions {
    fn validate(&self) -> Result<ScaleFactor, WorkloadError> {
        self.refuse_refresh_beside_check()?;
        if let Some(dir) = &self.query_dir {
            QuerySet::from_dir(dir).map_err(WorkloadError::InvalidOptions)?;
        }
        if !self.controls.is_default() {
            // Query names are the same in every dialect's built-in set.
            let set = self.query_set(dbrig_driver::Dialect::Postgres)?;
            self.controls
                .validate(&set)
                .map_err(|e| WorkloadError::InvalidOptions(format!("tpch_power {e}")))?;
        }
        ScaleFactor::new(self.sf).map_err(WorkloadError::InvalidOptions)
    }

    /// `check-against` with the refresh functions on: the other target's answers are those of
    /// the loaded data, but RF1 adds rows here before the queries, so every query over them
    /// would read `wrong`.
    fn refuse_refresh_beside_check(&self) -> Result<(), WorkloadError> {
        match self.check_against.is_some() && self.refresh {
            true => Err(WorkloadError::InvalidOptions(
                "tpch_power: check-against compares answers on the same data, but the refresh functions change this target's before the queries: add --no-refresh (in a plan: refresh = false)".into(),
            )),
            false => Ok(()),
        }
    }

    /// How the data is loaded: at `sf`, with the keys and loaders asked for.
    pub(crate) fn load_options(&self, sf: ScaleFactor) -> tpch::LoadOptions {
        tpch::LoadOptions {
            scale_factor: sf,
            keys: self.keys,
            parallel: self.parallel,
        }
    }

    fn params(&self) -> ParamMode {
        match self.seed {
            Some(seed) => ParamMode::Random { seed },
            None => ParamMode::Validation,
        }
    }

    /// The queries to run: `None` for the built-in set of the target's dialect.
    fn chosen_queries(
        &self,
        dialect: dbrig_driver::Dialect,
    ) -> Result<Option<QuerySet>, WorkloadError> {
        (self.query_dir.is_some() || !self.queries.is_empty())
            .then(|| self.query_set(dialect))
            .transpose()
    }

    /// The query set of a dialect, narrowed to `queries` when given.
    fn query_set(&self, dialect: dbrig_driver::Dialect) -> Result<QuerySet, WorkloadError> {
        let all = match &self.query_dir {
            Some(dir) => QuerySet::from_dir(dir).map_err(WorkloadError::InvalidOptions)?,
            None => QuerySet::builtin(dialect),
        };
        if self.queries.is_empty() {
            return Ok(all);
        }
        if let Some(q) = self.queries.iter().find(|q| all.get(q).is_none()) {
            return Err(WorkloadError::InvalidOptions(format!(
                "tpch_power: query '{q}' is not in the query set (queries: {})",
                all.queries
                    .iter()
                    .map(|q| q.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(QuerySet {
            queries: all
                .queries
                .into_iter()
                .filter(|q| self.queries.contains(&q.name))
                .collect(),
        })
    }
}

/// The kinds a plan runs besides the OLTP workloads, for `dbrig list`: name and what a
/// trial does (the options are those of `dbrig micro NAME` and [`TpchPowerOptions`]).
pub fn plan_only_kinds() -> [(&'static str, &'static str); 10] {
    [
        (
            "connect",
            "connection set-up itself (TCP, TLS, authentication): each event a new connection, latency per connection",
        ),
        (
            "script",
            "pgbench scripts (`scripts = [\"FILE@W\"]`, `builtins = [\"tpcb-like\"]`) through the OLTP runner",
        ),
        (
            "memory_load",
            "seed 000: bulk load of INT / CHAR(20) keys into an indexed table, rows/s per key type",
        ),
        (
            "scan_filter",
            "seed 004: full scans of a narrow, a wide and an in-cache table, rows/s, MB/s, cycles/row",
        ),
        (
            "tmp_groupby",
            "seed 003: six GROUP BY queries through internal temporary tables, seconds per query",
        ),
        (
            "tpch-power",
            "TPC-H power test (data loaded as the prepare step): seconds per query, Power@Size",
        ),
        (
            "tpch-throughput",
            "TPC-H throughput test: S concurrent streams, seconds per query, Ts, Throughput@Size",
        ),
        (
            "perfrun",
            "RQG perfrun: every query of `queries` (or TPC-H) cold then warm, time and counters",
        ),
        (
            "load",
            "a workload's data load as the trial (`of = \"oltp_read_write\"`, `\"tpch\"` with `sf`, `\"pgbench-init\"`): steps, rows/s and MB/s per table",
        ),
        (
            "sql-bench",
            "MySQL's classic sql-bench suite (`tests = [\"connect\"]`, `small-test`): seconds per operation and test",
        ),
    ]
}

/// A plan's workload.
#[derive(Debug, Clone)]
pub enum WorkloadKind {
    /// An OLTP workload: clients run events for a duration.
    Oltp(Workload),
    /// A micro-benchmark: its own timed runs per trial; the plan's client counts do not apply.
    Micro(MicroOptions),
    /// The TPC-H power test: the load is the prepare step, each trial one power run.
    TpchPower(TpchPowerOptions),
    /// The TPC-H throughput test: S concurrent streams per trial (same prepare step).
    TpchThroughput(TpchPowerOptions),
    /// Every query of a folder (or TPC-H's 22) cold then warm, with counters.
    Perfrun(PerfrunOptions),
    /// sql-bench's test scripts, run one by one (they make and drop their own tables).
    SqlBench(SqlBenchOptions),
    /// A workload's data load measured as a trial (`dbrig prepare`, `dbrig tpch load`).
    Load(crate::LoadTest),
}

/// A prepare step that ran: its line for the console and its load's figures (rows/s and MB/s
/// per table), which the executor stores with the first trial measured on the data.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub line: String,
    /// `None` for a sysbench Lua script's own `prepare`: the script inserts what it likes, so
    /// dbrig has no rows or bytes per table to report, only the step's line.
    pub figures: Option<LoadFigures>,
}

/// What one trial produced: the typed result every report reads, OLTP's measurements (kept
/// beside it: histogram, interval samples), and the server's version.
#[derive(Debug, Clone)]
pub struct TrialOutput {
    pub result: TrialResult,
    pub measurements: Option<Measurements>,
    pub server_version: String,
}

impl TrialOutput {
    fn of(result: TrialResult) -> Self {
        TrialOutput {
            server_version: result.server_version().unwrap_or_default().to_owned(),
            result,
            measurements: None,
        }
    }

    /// The units of work the trial did, and what one unit is: an OLTP trial's transactions,
    /// a TPC-H test's or perfrun's query executions, a micro-benchmark's items. What CPU and
    /// counters are divided by.
    pub fn work_units(&self) -> (u64, &'static str) {
        match (&self.result, &self.measurements) {
            (TrialResult::Oltp(_), Some(m)) => (m.transactions, "transaction"),
            (TrialResult::Oltp(_), None) => (0, "transaction"),
            (TrialResult::Micro(r), _) => (r.items.len() as u64, "item"),
            (TrialResult::TpchPower(r), _) => (r.queries.len() as u64, "query"),
            (TrialResult::TpchThroughput(r), _) => (r.outcomes().count() as u64, "query"),
            // Each query runs cold and warm.
            (TrialResult::Perfrun(r), _) => (2 * r.queries.len() as u64, "query"),
            (TrialResult::SqlBench(r), _) => (
                r.tests.iter().map(|t| t.operations.len() as u64).sum(),
                "operation",
            ),
            (TrialResult::Load(r), _) => (r.figures.rows, "row"),
            // CPU per New-Order, as the TPC-C comparisons quote it.
            (TrialResult::Tpcc(r), _) => (r.new_orders, "new order"),
        }
    }

    /// One line for progress output.
    pub fn summary(&self) -> String {
        match (&self.result, &self.measurements) {
            (TrialResult::Oltp(_), Some(m)) => format!(
                "{:.2} tps, {:.2} qps, p95 {:.2} ms",
                m.tps(),
                m.qps(),
                m.latency_summary().p95
            ),
            (TrialResult::Oltp(_), None) => "no measurements".to_owned(),
            (TrialResult::Micro(r), _) => r
                .items
                .iter()
                .map(|i| format!("{} {:.4} {}", i.name, i.mean, i.unit))
                .collect::<Vec<_>>()
                .join(", "),
            (TrialResult::TpchPower(r), _) => {
                let total: f64 = r.queries.iter().map(|q| q.seconds()).sum();
                let bad = r
                    .queries
                    .iter()
                    .filter(|q| q.status != tpch::QueryStatus::Ok)
                    .count();
                format!(
                    "{} queries in {total:.3} s{}, Power@Size {}",
                    r.queries.len(),
                    if bad > 0 {
                        format!(" ({bad} failed or wrong)")
                    } else {
                        String::new()
                    },
                    r.power_at_size
                        .map_or("n/a".to_owned(), |p| format!("{p:.2}"))
                )
            }
            (TrialResult::TpchThroughput(r), _) => format!(
                "{} streams in {:.3} s, Throughput@Size {}{}",
                r.streams,
                r.ts_s,
                r.throughput_at_size
                    .map_or("n/a".to_owned(), |p| format!("{p:.2}")),
                r.failure
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            ),
            (TrialResult::Perfrun(r), _) => format!(
                "{} queries cold and warm{}",
                r.queries.len(),
                match r.errors() {
                    0 => String::new(),
                    n => format!(", {n} execution(s) failed"),
                }
            ),
            (TrialResult::SqlBench(r), _) => {
                let total: f64 = r
                    .tests
                    .iter()
                    .filter_map(|t| t.total)
                    .map(|t| t.wall_s)
                    // Not `sum()`: an empty float sum is -0.0, printed "-0.000 s".
                    .fold(0.0, |a, b| a + b);
                let bad = r.unfinished().count();
                format!(
                    "{} sql-bench test(s) in {total:.3} s{}",
                    r.tests.len(),
                    if bad > 0 {
                        format!(" ({bad} did not finish)")
                    } else {
                        String::new()
                    }
                )
            }
            // A few rows are no rate (`MIN_ROWS_FOR_A_RATE`).
            (TrialResult::Load(r), _)
                if r.figures.rows < dbrig_core::results::load::MIN_ROWS_FOR_A_RATE =>
            {
                format!("{} rows in {:.2} s", r.figures.rows, r.total_seconds)
            }
            (TrialResult::Load(r), _) => format!(
                "{} rows in {:.2} s ({:.0} rows/s, {:.1} MB/s)",
                r.figures.rows,
                r.total_seconds,
                r.figures.rows_per_s(),
                r.figures.mb_per_s()
            ),
            (TrialResult::Tpcc(r), _) => format!(
                "{:.0} NOPM, {} TPM, {} warehouse(s)",
                r.nopm,
                r.tpm.map_or_else(
                    || format!("{:.0} client", r.client_tpm),
                    |t| format!("{t:.0}")
                ),
                r.warehouses
            ),
        }
    }
}

/// What a trial reports while it runs: progress lines, OLTP's interval samples, and the
/// power test's report after every query (for a live chart).
pub trait TrialProgress: Sync {
    fn note(&self, line: &str);
    /// The measured interval begins: an OLTP run's warm-up is over. Without a warm-up
    /// (and for other kinds) the trial is measured from its start and this is not called.
    fn measuring(&self) {}
    /// Every client has connected and they are about to go (an OLTP run): server processes
    /// the connections brought up (PostgreSQL's backends) exist now.
    fn connected(&self) {}
    fn interval(&self, _sample: &IntervalSample) {}
    fn power_query(&self, _report: &PowerReport) {}
    /// A load trial's rows per table so far (see [`LoadProgress::rows`]).
    fn load_rows(&self, _tables: &[crate::progress::TableRows], _finished: bool) {}
}

/// A load trial's progress, told as the trial's.
struct LoadRelay<'a>(&'a dyn TrialProgress);

impl LoadProgress for LoadRelay<'_> {
    fn say(&self, line: &str) {
        self.0.note(line);
    }

    fn rows(&self, tables: &[crate::progress::TableRows], finished: bool) {
        self.0.load_rows(tables, finished);
    }
}

/// Progress that goes nowhere.
pub struct Quiet;

impl TrialProgress for Quiet {
    fn note(&self, _line: &str) {}
}

impl WorkloadKind {
    /// The options of the kind named `name` that are paths (keys kebab-case), which a plan
    /// resolves against its own folder: pgbench scripts (`FILE@WEIGHT`), query folders, the
    /// sql-bench suite, memory_load's server-side file folder.
    pub fn path_options(name: &str) -> &'static [&'static str] {
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        match name.as_str() {
            crate::script::NAME => &["scripts"],
            "tpch_power" | "tpch_throughput" => &["query-dir"],
            "perfrun" => &["queries"],
            "sql_bench" | "sqlbench" => &["suite"],
            "memory_load" => &["server-file"],
            _ => &[],
        }
    }

    /// The kind named `name` with its options (a JSON object; keys kebab-case). OLTP names
    /// keep their aliases; micro-benchmarks and `tpch_power` accept `-` for `_`. A name ending
    /// in `.lua` is always a sysbench Lua script (a file), never dbrig's workload of that name.
    pub fn from_json(name: &str, options: &serde_json::Value) -> Result<Self, WorkloadError> {
        let empty = serde_json::Value::Object(serde_json::Map::new());
        let options = if options.is_null() { &empty } else { options };
        if !crate::lua::is_script_name(name.trim()) && OltpKind::from_name(name).is_some() {
            let oltp: OltpOptions = serde_json::from_value(options.clone())
                .map_err(|e| WorkloadError::InvalidOptions(format!("{name} options: {e}")))?;
            return Ok(WorkloadKind::Oltp(Workload::from_name(name, oltp)?));
        }
        if crate::lua::is_script_name(name.trim()) {
            let mut o = crate::LuaOptions {
                script: name.trim().to_owned(),
                script_options: Vec::new(),
            };
            if let Some(map) = options.as_object() {
                for (k, v) in map {
                    let v = match v {
                        serde_json::Value::Bool(b) => (if *b { "on" } else { "off" }).to_owned(),
                        serde_json::Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    o.script_options.push(format!("{k}={v}"));
                }
            }
            return Ok(WorkloadKind::Oltp(Workload::Lua(crate::LuaWorkload::new(
                o,
            )?)));
        }
        if name.trim().eq_ignore_ascii_case(crate::connect::NAME) {
            if options.as_object().is_some_and(|o| !o.is_empty()) {
                return Err(WorkloadError::InvalidOptions(
                    "connect takes no workload options (the run's options apply: --reconnect, --connect-rate, --protocol, …)".into(),
                ));
            }
            return Ok(WorkloadKind::Oltp(Workload::Connect));
        }
        if name.trim().eq_ignore_ascii_case(crate::script::NAME) {
            if options.get("protocol").is_some() {
                return Err(WorkloadError::InvalidOptions(
                    "script options: `protocol` is a run option of every workload now: write it under [workload.run] (or give --protocol)".into(),
                ));
            }
            let o: crate::ScriptOptions = serde_json::from_value(options.clone())
                .map_err(|e| WorkloadError::InvalidOptions(format!("script options: {e}")))?;
            return Ok(WorkloadKind::Oltp(Workload::script(o)?));
        }
        if let Some(m) = MicroOptions::from_json(name, options)? {
            return Ok(WorkloadKind::Micro(m));
        }
        match name.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            crate::tpcc::NAME => {
                let o: crate::tpcc::TpccOptions = serde_json::from_value(options.clone())
                    .map_err(|e| WorkloadError::InvalidOptions(format!("tpcc options: {e}")))?;
                Ok(WorkloadKind::Oltp(Workload::Tpcc(crate::tpcc::Tpcc::new(
                    o,
                ))))
            }
            kind @ ("tpch_power" | "tpch_throughput") => {
                let o: TpchPowerOptions = serde_json::from_value(options.clone())
                    .map_err(|e| WorkloadError::InvalidOptions(format!("{kind} options: {e}")))?;
                o.validate()?;
                if kind == "tpch_power" {
                    if o.streams != 0 || o.timeout.is_some() {
                        return Err(WorkloadError::InvalidOptions(
                            "tpch_power options: streams and timeout are the throughput test's (name = \"tpch-throughput\")".into(),
                        ));
                    }
                    Ok(WorkloadKind::TpchPower(o))
                } else {
                    Ok(WorkloadKind::TpchThroughput(o))
                }
            }
            "perfrun" => {
                let o: PerfrunOptions = serde_json::from_value(options.clone())
                    .map_err(|e| WorkloadError::InvalidOptions(format!("perfrun options: {e}")))?;
                o.validate()?;
                Ok(WorkloadKind::Perfrun(o))
            }
            crate::load_test::NAME => Ok(WorkloadKind::Load(crate::LoadTest::from_json(options)?)),
            "sql_bench" | "sqlbench" => {
                let o: SqlBenchOptions = serde_json::from_value(options.clone()).map_err(|e| {
                    WorkloadError::InvalidOptions(format!("sql-bench options: {e}"))
                })?;
                o.validate()?;
                Ok(WorkloadKind::SqlBench(o))
            }
            _ => Err(WorkloadError::UnknownWorkload(name.to_owned())),
        }
    }

    /// The name results are stored under.
    pub fn name(&self) -> &'static str {
        match self {
            WorkloadKind::Oltp(w) => w.name(),
            WorkloadKind::Micro(m) => m.benchmark().name(),
            WorkloadKind::TpchPower(_) => "tpch_power",
            WorkloadKind::TpchThroughput(_) => "tpch_throughput",
            WorkloadKind::Perfrun(_) => "perfrun",
            WorkloadKind::SqlBench(_) => "sql_bench",
            WorkloadKind::Load(_) => crate::load_test::NAME,
        }
    }

    /// The kind of result its trials produce.
    pub fn result_kind(&self) -> dbrig_core::results::ResultKind {
        use dbrig_core::results::ResultKind;
        match self {
            WorkloadKind::Oltp(Workload::Tpcc(_)) => ResultKind::Tpcc,
            WorkloadKind::Oltp(_) => ResultKind::Oltp,
            WorkloadKind::Micro(_) => ResultKind::Micro,
            WorkloadKind::TpchPower(_) => ResultKind::TpchPower,
            WorkloadKind::TpchThroughput(_) => ResultKind::TpchThroughput,
            WorkloadKind::Perfrun(_) => ResultKind::Perfrun,
            WorkloadKind::SqlBench(_) => ResultKind::SqlBench,
            WorkloadKind::Load(_) => ResultKind::Load,
        }
    }

    /// The options as stored with the cell (and hashed into its key).
    pub fn options_json(&self) -> serde_json::Value {
        match self {
            WorkloadKind::Oltp(w) => w.options_json(),
            WorkloadKind::Micro(m) => m.json(),
            WorkloadKind::TpchPower(o) | WorkloadKind::TpchThroughput(o) => {
                serde_json::to_value(o).unwrap_or_default()
            }
            WorkloadKind::Perfrun(o) => serde_json::to_value(o).unwrap_or_default(),
            WorkloadKind::SqlBench(o) => serde_json::to_value(o).unwrap_or_default(),
            WorkloadKind::Load(l) => l.options_json(),
        }
    }

    /// Whether the plan's client counts apply (otherwise one cell per configuration).
    pub fn uses_clients(&self) -> bool {
        matches!(self, WorkloadKind::Oltp(_))
    }

    /// Whether the duration and warm-up apply.
    pub fn is_timed(&self) -> bool {
        matches!(self, WorkloadKind::Oltp(_))
    }

    /// Whether trials change the prepared data (a fresh-data lifecycle restores it before
    /// each trial). Micro-benchmarks create and drop their own tables in every trial.
    pub fn writes(&self) -> bool {
        match self {
            WorkloadKind::Oltp(Workload::Oltp(o)) => o.kind.writes(),
            // A script may write; pgbench's built-ins but select-only do.
            WorkloadKind::Oltp(Workload::Script(_) | Workload::Lua(_) | Workload::Tpcc(_)) => true,
            WorkloadKind::Oltp(Workload::Connect) => false,
            // A load trial makes its own data from nothing each time.
            WorkloadKind::Micro(_)
            | WorkloadKind::Perfrun(_)
            | WorkloadKind::SqlBench(_)
            | WorkloadKind::Load(_) => false,
            WorkloadKind::TpchPower(o) | WorkloadKind::TpchThroughput(o) => o.refresh,
        }
    }

    /// Fill in what only the host knows (the CPU frequency for cycles per row).
    pub fn with_host(mut self, cpu_mhz: Option<f64>) -> Self {
        if let WorkloadKind::Micro(m) = &mut self
            && m.common().cpu_mhz.is_none()
        {
            m.common_mut().cpu_mhz = cpu_mhz;
        }
        self
    }

    /// The command that drops what this kind's prepare step makes (proven dbrig's by the
    /// registry's markers).
    pub fn cleanup_command(&self) -> String {
        match self {
            WorkloadKind::TpchPower(_) | WorkloadKind::TpchThroughput(_) => {
                "dbrig tpch cleanup".into()
            }
            WorkloadKind::Oltp(Workload::Script(_)) => "dbrig cleanup pgbench-init".into(),
            WorkloadKind::Oltp(Workload::Lua(w)) => format!("dbrig cleanup {}", w.name()),
            _ => format!("dbrig cleanup {}", self.name()),
        }
    }

    /// Whether preparing this kind may load data large enough to check the disk for first
    /// (TPC-H: its scale factor's estimate).
    pub fn loads_large_data(&self) -> bool {
        match self {
            WorkloadKind::TpchPower(_) | WorkloadKind::TpchThroughput(_) => true,
            WorkloadKind::Load(l) => !matches!(l.of, crate::LoadOf::Oltp(_)),
            WorkloadKind::Oltp(Workload::Script(w)) => w.uses_builtins(),
            _ => false,
        }
    }

    /// Create what the trials need when it is missing: the OLTP tables (for `threads`
    /// clients), the TPC-H data at the plan's scale factor; nothing for micro-benchmarks.
    /// Returns what was done, if anything: a line and the load's figures.
    pub async fn prepare_if_missing(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        seed: u64,
        space: Option<(&std::path::Path, u64)>,
        progress: &dyn LoadProgress,
    ) -> Result<Option<Prepared>, WorkloadError> {
        match self {
            WorkloadKind::Oltp(Workload::Oltp(oltp)) => {
                let mut conn = Connection::connect(target, connect).await?;
                let mut missing = false;
                let mut half = false;
                for t in oltp.tables_used(threads) {
                    if conn.table_exists(&t).await? {
                        half |= crate::registry::lookup(&mut conn, &t)
                            .await?
                            .is_some_and(|e| e.state == "loading");
                    } else {
                        missing = true;
                    }
                }
                conn.close().await;
                if half {
                    // dbrig's own tables (cleanup proves it by their markers), left by an
                    // interrupted prepare: never measured, made again.
                    progress.say(&format!(
                        "tables on {target} were left half-prepared by an interrupted prepare: dropping them and preparing {} again",
                        self.name()
                    ));
                    oltp.cleanup(target, connect, threads).await?;
                    missing = true;
                }
                if !missing {
                    return Ok(None);
                }
                progress.say(&format!(
                    "tables missing on {target}: preparing {} first",
                    self.name()
                ));
                let report = oltp
                    .prepare(target, connect, threads, seed, progress)
                    .await?;
                Ok(Some(Prepared {
                    line: format!("prepared {} rows in {:.2} s", report.rows, report.load_s),
                    figures: Some(report.figures),
                }))
            }
            WorkloadKind::Oltp(Workload::Lua(w)) => {
                w.prepare_if_missing(target, connect, threads, seed, progress)
                    .await
            }
            WorkloadKind::Oltp(Workload::Tpcc(t)) => {
                let mut conn = Connection::connect(target, connect).await?;
                let mut present = 0;
                let mut half = false;
                for table in crate::tpcc::Table::ALL {
                    if conn.table_exists(table.name()).await? {
                        present += 1;
                        half |= crate::registry::lookup(&mut conn, table.name())
                            .await?
                            .is_none_or(|e| e.state != "ready");
                    }
                }
                conn.close().await;
                if present == crate::tpcc::Table::ALL.len() && !half {
                    return Ok(None);
                }
                if present > 0 {
                    // dbrig's own tables (cleanup proves each by its marker) left by an
                    // interrupted build: never measured, built again.
                    progress.say(&format!(
                        "TPC-C tables on {target} were left half-built: dropping them and building {} warehouse(s) again",
                        t.options.warehouses
                    ));
                    crate::tpcc::cleanup(target, connect).await?;
                }
                progress.say(&format!(
                    "building TPC-C with {} warehouse(s) on {target}",
                    t.options.warehouses
                ));
                let r = crate::tpcc::load(target, connect, &t.options.load_options(seed), progress)
                    .await?;
                Ok(Some(Prepared {
                    line: format!(
                        "built TPC-C, {} warehouse(s), in {:.2} s",
                        r.warehouses, r.total_seconds
                    ),
                    figures: Some(r.figures),
                }))
            }
            WorkloadKind::Oltp(Workload::Script(w)) => {
                if !w.uses_builtins() {
                    return Ok(None);
                }
                let mut conn = Connection::connect(target, connect).await?;
                let mut missing = false;
                let mut half = false;
                for t in crate::script::init::TABLES {
                    if conn.table_exists(t).await? {
                        half |= crate::registry::lookup(&mut conn, t)
                            .await?
                            .is_some_and(|e| e.state == "loading");
                    } else {
                        missing = true;
                    }
                }
                conn.close().await;
                if !missing && !half {
                    return Ok(None);
                }
                crate::script::init::check_fits(&w.options, space)?;
                // pgbench-init drops dbrig's own tables first (each proven by its marker): an
                // interrupted init's are never measured, made again.
                progress.say(&format!(
                    "pgbench's tables {} on {target}: running pgbench-init first",
                    if half {
                        "were left half-made by an interrupted pgbench-init"
                    } else {
                        "missing"
                    }
                ));
                let r = crate::script::init::init(target, connect, &w.options, progress).await?;
                Ok(Some(Prepared {
                    line: format!(
                        "pgbench-init: scale {}, {} rows in {:.2} s",
                        r.scale, r.rows, r.seconds
                    ),
                    figures: Some(r.figures),
                }))
            }
            WorkloadKind::Micro(_)
            | WorkloadKind::Perfrun(_)
            | WorkloadKind::SqlBench(_)
            | WorkloadKind::Oltp(Workload::Connect) => Ok(None),
            // The trial is the load; a TPC-H one is checked against the free space first.
            WorkloadKind::Load(l) => {
                l.check_fits(space)?;
                Ok(None)
            }
            WorkloadKind::TpchPower(o) | WorkloadKind::TpchThroughput(o) => {
                let sf = o.validate()?;
                let mut conn = Connection::connect(target, connect).await?;
                let mut present = 0;
                let mut half = false;
                for t in tpch::Table::ALL {
                    if conn.table_exists(t.name()).await? {
                        present += 1;
                        half |= crate::registry::lookup(&mut conn, t.name())
                            .await?
                            .is_some_and(|e| e.state == "loading");
                    }
                }
                if half {
                    // dbrig's own tables (cleanup proves each by its marker), left by an
                    // interrupted load: never measured, loaded again.
                    conn.close().await;
                    progress.say(&format!(
                        "TPC-H tables on {target} were left half-loaded by an interrupted load: dropping them and loading SF {sf} again"
                    ));
                    tpch::cleanup(target, connect).await?;
                    conn = Connection::connect(target, connect).await?;
                    present = 0;
                }
                let loaded = if present == tpch::Table::ALL.len() {
                    if let Err(e) = tpch::check_loaded(&mut conn).await {
                        conn.close().await;
                        return Err(e);
                    }
                    Some(tpch::detect_scale_factor(&mut conn).await?)
                } else if present == 0 {
                    None
                } else {
                    conn.close().await;
                    return Err(WorkloadError::InvalidOptions(format!(
                        "only {present} of the 8 TPC-H tables exist on {target} (an interrupted load?): drop them with `dbrig tpch cleanup`, then run the plan again"
                    )));
                };
                conn.close().await;
                match loaded {
                    Some(have) if (have - sf.get()).abs() < 1e-9 => Ok(None),
                    Some(have) => Err(WorkloadError::InvalidOptions(format!(
                        "the TPC-H tables on {target} hold SF {have}, the plan wants SF {sf}: drop them with `dbrig tpch cleanup` (or use another database)"
                    ))),
                    None => {
                        tpch::check_load_fits(sf, space, o.force_load)?;
                        progress.say(&format!("loading TPC-H SF {sf} into {target}"));
                        let r = tpch::load(target, connect, &o.load_options(sf), progress).await?;
                        Ok(Some(Prepared {
                            line: format!("loaded TPC-H SF {sf} in {:.2} s", r.total_seconds),
                            figures: Some(r.figures),
                        }))
                    }
                }
            }
        }
    }

    /// What the data this workload prepares depends on (OLTP: the tables' count, size and
    /// definition; TPC-H: scale factor and keys); `None` for kinds that prepare nothing
    /// (micro-benchmarks make their own tables in every trial). Two workloads with the same
    /// identity share prepared data; different identities never do.
    pub fn data_identity(&self) -> Option<serde_json::Value> {
        match self {
            WorkloadKind::Oltp(Workload::Oltp(o)) => Some(oltp_identity(&o.options)),
            WorkloadKind::TpchPower(o) | WorkloadKind::TpchThroughput(o) => Some(tpch_identity(o)),
            WorkloadKind::Oltp(Workload::Script(w)) => {
                w.uses_builtins().then(|| pgbench_identity(&w.options))
            }
            WorkloadKind::Oltp(Workload::Lua(w)) => Some(w.options_json()),
            WorkloadKind::Oltp(Workload::Tpcc(t)) => Some(t.options.data_identity()),
            WorkloadKind::Load(l) => Some(l.data_identity()),
            WorkloadKind::Micro(_)
            | WorkloadKind::Perfrun(_)
            | WorkloadKind::SqlBench(_)
            | WorkloadKind::Oltp(Workload::Connect) => None,
        }
    }

    /// How statements are sent unless the run says (`--protocol`, `--ps-mode`).
    pub fn default_protocol(&self) -> dbrig_core::results::Protocol {
        match self {
            WorkloadKind::Oltp(w) => w.default_protocol(),
            _ => dbrig_core::results::Protocol::Prepared,
        }
    }

    /// Whether [`WorkloadKind::preflight`] has anything to check on the target.
    pub fn has_preflight(&self) -> bool {
        match self {
            WorkloadKind::TpchPower(_) | WorkloadKind::TpchThroughput(_) => true,
            WorkloadKind::Perfrun(o) => o.tpch,
            // A load command refuses tables that exist, and a server that does not answer,
            // before anything is recorded.
            WorkloadKind::Load(_) => true,
            WorkloadKind::Oltp(_) | WorkloadKind::Micro(_) | WorkloadKind::SqlBench(_) => false,
        }
    }

    /// Checks what a single command is refused for before anything is recorded, and fills in
    /// what only the target knows: the TPC-H data is there (at the stored power run's scale
    /// factor), the controls name queries of the set, the throughput test's stream count; a
    /// load's tables are not there yet and fit in `space` (the free space dbrig can see, for
    /// kinds that [`Self::loads_large_data`]). `threads`: the run's clients (bulk_insert's
    /// tables).
    pub async fn preflight(
        &mut self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        space: Option<(&std::path::Path, u64)>,
    ) -> Result<(), WorkloadError> {
        if let WorkloadKind::Load(l) = self {
            return l.preflight(target, connect, threads, space).await;
        }
        if let WorkloadKind::Perfrun(p) = self {
            if p.tpch {
                let mut conn = Connection::connect(target, connect).await?;
                let loaded = tpch::check_loaded(&mut conn).await;
                conn.close().await;
                loaded?;
            }
            return Ok(());
        }
        let (WorkloadKind::TpchPower(o) | WorkloadKind::TpchThroughput(o)) = self else {
            return Ok(());
        };
        o.refuse_refresh_beside_check()?;
        let mut conn = Connection::connect(target, connect).await?;
        let checked = async {
            tpch::check_loaded(&mut conn).await?;
            let sf = tpch::detect_scale_factor(&mut conn).await?;
            // A single command runs on the data that is there.
            o.sf = sf;
            let set = o.query_set(conn.dialect())?;
            o.controls
                .validate(&set)
                .map_err(|e| WorkloadError::InvalidOptions(format!("tpch_power {e}")))?;
            if o.streams == 0 {
                // Decided here so that the stored cell says how many streams ran.
                o.streams = tpch::min_streams(sf);
            }
            if let Some(p) = &o.power_run
                && (p.scale_factor - sf).abs() > 1e-9
            {
                return Err(WorkloadError::InvalidOptions(format!(
                    "power run {} was at SF {} but {target} holds SF {sf}: QphH@Size needs both tests on the same data",
                    p.run, p.scale_factor
                )));
            }
            Ok(())
        }
        .await;
        conn.close().await;
        checked
    }

    /// Run one trial. Ctrl-C (`interrupt`) ends an OLTP trial after its in-flight events;
    /// another kind is abandoned where it is (`Ok(None)`): its tables are registered and
    /// dropped by the next run, an unfinished refresh set is skipped next time. `env` is what
    /// a power test's launcher controls use (server restarts, cache drops, shell hooks).
    pub async fn trial(
        &self,
        spec: &RunSpec,
        interrupt: Arc<Stopper>,
        progress: &dyn TrialProgress,
        env: Option<&mut dyn tpch::PowerEnv>,
    ) -> Result<Option<TrialOutput>, WorkloadError> {
        let abandonable = async |f: std::pin::Pin<
            Box<dyn Future<Output = Result<TrialResult, WorkloadError>> + Send + '_>,
        >| {
            tokio::select! {
                r = f => r.map(|r| Some(TrialOutput::of(r))),
                () = interrupt.stopped() => Ok(None),
            }
        };
        let note = |line: &str| progress.note(line);
        match self {
            WorkloadKind::Oltp(w) => {
                // A Lua script's init() and done() run around its clients, as in sysbench.
                let reporter = match w {
                    Workload::Lua(l) => {
                        l.set_run(&spec.options);
                        l.global_hook("init", &spec.target).await?;
                        Some(crate::lua::Reporter::new(l, &spec.target, progress)?)
                    }
                    _ => None,
                };
                let shown: &dyn TrialProgress = match &reporter {
                    Some(r) => r,
                    None => progress,
                };
                // TPC-C's NOPM and TPM: the server's counters when the measured interval
                // begins (read by the progress relay) and after the clients.
                let start = crate::tpcc::run::StartReading::new(shown, spec);
                let shown: &dyn TrialProgress = match w {
                    Workload::Tpcc(_) => &start,
                    _ => shown,
                };
                let Some(mut run) = runner::run(w, spec, Arc::clone(&interrupt), shown).await?
                else {
                    // Ctrl-C while the clients were set up: nothing was measured.
                    return Ok(None);
                };
                let warnings = std::mem::take(&mut run.warnings);
                // The kind makes its own result of what its clients measured.
                let before = match w {
                    Workload::Tpcc(_) => start.reading().await?,
                    _ => None,
                };
                let output = match (w, before) {
                    (Workload::Tpcc(t), Some(before)) => {
                        let mut conn = Connection::connect(&spec.target, &spec.connect).await?;
                        let after = crate::tpcc::Reading::on(&mut conn).await?;
                        let check = match t.options.consistency_check {
                            true => {
                                progress.note("checking the consistency conditions after the run");
                                Some(crate::tpcc::check_consistency(&mut conn).await?)
                            }
                            false => None,
                        };
                        conn.close().await;
                        t.trial_output(run, spec, before, after, check)
                    }
                    _ => w.trial_output(run, spec),
                };
                if let (Workload::Lua(l), Some(r), Some(m)) =
                    (w, &reporter, output.measurements.as_ref())
                {
                    r.cumulative(m)?;
                    l.global_hook("done", &spec.target).await?;
                }
                drop(reporter);
                for w in &warnings {
                    progress.note(w);
                }
                Ok(Some(output))
            }
            WorkloadKind::Micro(m) => {
                abandonable(Box::pin(async {
                    m.run(&spec.target, &spec.connect, &note)
                        .await
                        .map(TrialResult::Micro)
                }))
                .await
            }
            WorkloadKind::TpchPower(o) => {
                abandonable(Box::pin(async {
                    let check_against = match &o.check_against {
                        Some(url) => {
                            let t = dbrig_driver::Target::parse(url).map_err(|e| {
                                WorkloadError::InvalidOptions(format!("check-against: {e}"))
                            })?;
                            let set = o.query_set(t.dialect())?;
                            Some((t, set))
                        }
                        None => None,
                    };
                    let options = PowerOptions {
                        params: o.params(),
                        queries: o.chosen_queries(spec.target.dialect())?,
                        refresh: o.refresh,
                        check_against,
                        os_meter: spec.os_meter.clone(),
                    };
                    tpch::power_test_controlled(
                        &spec.target,
                        &spec.connect,
                        &options,
                        &o.controls,
                        env,
                        &note,
                        &mut |r| progress.power_query(r),
                    )
                    .await
                    .map(TrialResult::TpchPower)
                }))
                .await
            }
            WorkloadKind::TpchThroughput(o) => {
                abandonable(Box::pin(async {
                    let options = ThroughputOptions {
                        streams: o.streams,
                        params: o.params(),
                        queries: o.chosen_queries(spec.target.dialect())?,
                        refresh: o.refresh,
                        timeout: o.timeout.map(dbrig_core::limits::duration),
                        os_meter: spec.os_meter.clone(),
                    };
                    let mut r =
                        tpch::throughput_test(&spec.target, &spec.connect, &options, &note).await?;
                    if let Some(p) = &o.power_run {
                        r.power_run = Some(p.run);
                        r.power_at_size = Some(p.power_at_size);
                        r.qphh_at_size = r
                            .throughput_at_size
                            .map(|t| tpch::qphh_at_size(p.power_at_size, t));
                    }
                    Ok(TrialResult::TpchThroughput(r))
                }))
                .await
            }
            WorkloadKind::Perfrun(o) => {
                abandonable(Box::pin(async {
                    crate::perfrun::perfrun_trial(&spec.target, &spec.connect, o, &note)
                        .await
                        .map(TrialResult::Perfrun)
                }))
                .await
            }
            WorkloadKind::SqlBench(o) => {
                abandonable(Box::pin(async {
                    crate::sqlbench::trial(o, &spec.target, &spec.connect, &note)
                        .await
                        .map(TrialResult::SqlBench)
                }))
                .await
            }
            // Ctrl-C leaves the tables registered as loading: never measured, and dropped by
            // the next load or cleanup.
            WorkloadKind::Load(l) => {
                abandonable(Box::pin(async {
                    l.trial(
                        &spec.target,
                        &spec.connect,
                        spec.options.threads,
                        spec.seed,
                        &LoadRelay(progress),
                    )
                    .await
                    .map(TrialResult::Load)
                }))
                .await
            }
        }
    }
}

/// What an OLTP workload's tables depend on: their count, size and definition.
pub(crate) fn oltp_identity(x: &OltpOptions) -> serde_json::Value {
    serde_json::json!({
        "oltp": {
            "tables": x.tables,
            "table_size": x.table_size,
            "auto_inc": x.auto_inc,
            "create_secondary": x.create_secondary,
            "mysql_storage_engine": x.mysql_storage_engine,
        }
    })
}

/// What the TPC-H data depends on: scale factor and keys.
pub(crate) fn tpch_identity(o: &TpchPowerOptions) -> serde_json::Value {
    serde_json::json!({ "tpch": { "sf": o.sf, "keys": o.keys } })
}

/// What pgbench's tables depend on.
pub(crate) fn pgbench_identity(o: &crate::ScriptOptions) -> serde_json::Value {
    serde_json::json!({
        "pgbench": {
            "scale": o.scale.max(1),
            "fillfactor": o.fillfactor,
            "foreign_keys": o.foreign_keys,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An OLTP trial's unit of work is the transaction (what CPU and counters are divided
    /// by), not the query: here 20 queries a transaction.
    #[test]
    fn oltp_work_is_counted_in_transactions() {
        let m = Measurements {
            threads: 1,
            key_distribution: dbrig_core::KeyDistribution::Uniform,
            duration_s: 1.0,
            transactions: 50,
            queries: dbrig_core::QueryCounters {
                read: 700,
                write: 200,
                other: 100,
            },
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: Vec::new(),
            latency: dbrig_core::LatencyHistogram::new(),
            intervals: Vec::new(),
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let o = TrialOutput {
            result: TrialResult::Oltp(Default::default()),
            measurements: Some(m),
            server_version: String::new(),
        };
        assert_eq!(o.work_units(), (50, "transaction"));
    }

    /// A sql-bench trial whose tests all did not finish says 0.000 s, not -0.000 s.
    #[test]
    fn an_unfinished_sql_bench_summary_has_no_negative_zero() {
        let r = dbrig_core::results::SqlBenchResult {
            server: "mysql".into(),
            server_version: String::new(),
            options: Vec::new(),
            hires: true,
            tests: Vec::new(),
        };
        let s = TrialOutput::of(TrialResult::SqlBench(r)).summary();
        assert_eq!(s, "0 sql-bench test(s) in 0.000 s");
    }

    #[test]
    fn names_resolve_to_their_kind() {
        let o = WorkloadKind::from_json("oltp_read_write", &json!({"table-size": 10})).unwrap();
        assert!(o.uses_clients() && o.is_timed() && o.writes());
        assert_eq!(o.options_json()["table-size"], 10);
        let ro = WorkloadKind::from_json("oltp_read_only", &serde_json::Value::Null).unwrap();
        assert!(!ro.writes());
        let m =
            WorkloadKind::from_json("scan-filter", &json!({"rows": 7, "wide_rows": 0})).unwrap();
        assert_eq!(m.name(), "scan_filter");
        assert!(!m.uses_clients() && !m.is_timed() && !m.writes());
        assert_eq!(m.options_json()["rows"], 7);
        assert_eq!(m.options_json()["wide_rows"], 0);
        let t =
            WorkloadKind::from_json("tpch-power", &json!({"sf": 0.01, "queries": ["1"]})).unwrap();
        assert_eq!(t.name(), "tpch_power");
        assert!(!t.writes());
        let r =
            WorkloadKind::from_json("tpch_power", &json!({"sf": 0.01, "refresh": true})).unwrap();
        assert!(r.writes(), "RF1/RF2 change the data");
    }

    #[test]
    fn every_listed_plan_kind_resolves() {
        for (name, _) in plan_only_kinds() {
            let options = match name {
                n if n.starts_with("tpch") => json!({"sf": 0.01}),
                "perfrun" => json!({"tpch": true}),
                "script" => json!({"builtins": ["select-only@2", "tpcb"]}),
                "sql-bench" => json!({"tests": ["connect"], "small-test": true}),
                "load" => json!({"of": "oltp_read_only"}),
                _ => json!({}),
            };
            let k = WorkloadKind::from_json(name, &options).unwrap();
            assert_eq!(k.name(), name.replace('-', "_"));
        }
    }

    #[test]
    fn perfrun_needs_one_query_source() {
        let e = WorkloadKind::from_json("perfrun", &json!({})).unwrap_err();
        assert!(e.to_string().contains("queries = DIR"), "{e}");
        let e = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "queries": "/tmp"}))
            .unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let e =
            WorkloadKind::from_json("perfrun", &json!({"queries": "/nonexistent/q"})).unwrap_err();
        assert!(e.to_string().contains("cannot read the folder"), "{e}");
        let p = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "filter": "rows_a > 1"}))
            .unwrap();
        assert!(p.has_preflight() && !p.writes() && p.data_identity().is_none());
        assert_eq!(p.options_json()["filter"], "rows_a > 1");
    }

    #[test]
    fn bad_options_name_the_option() {
        let e = WorkloadKind::from_json("memory_load", &json!({"rowz": 1})).unwrap_err();
        assert!(
            e.to_string().contains("unknown option 'rowz'") && e.to_string().contains("rows"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tmp_groupby", &json!({"runs": 0})).unwrap_err();
        assert!(
            e.to_string()
                .contains("0 is out of range: give 1 to 1000000 runs"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 0})).unwrap_err();
        assert!(e.to_string().contains("scale factor"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "qeries": []})).unwrap_err();
        assert!(e.to_string().contains("qeries"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "streams": 2})).unwrap_err();
        assert!(e.to_string().contains("tpch-throughput"), "{e}");
        let t =
            WorkloadKind::from_json("tpch-throughput", &json!({"sf": 0.01, "streams": 2})).unwrap();
        assert_eq!(
            (t.name(), t.options_json()["streams"].as_u64()),
            ("tpch_throughput", Some(2))
        );
        let e = WorkloadKind::from_json("nope", &json!({})).unwrap_err();
        assert!(matches!(e, WorkloadError::UnknownWorkload(_)), "{e}");
    }

    #[test]
    fn tpch_query_subset_keeps_stream_order_and_refuses_unknown_names() {
        let o = TpchPowerOptions {
            sf: 0.01,
            queries: vec!["1".into(), "14".into(), "6".into()],
            query_dir: None,
            seed: None,
            refresh: false,
            keys: KeysWhen::After,
            parallel: 0,
            streams: 0,
            timeout: None,
            controls: tpch::PowerControls::default(),
            power_run: None,
            check_against: None,
            force_load: false,
        };
        let set = o.query_set(dbrig_driver::Dialect::Sqlite).unwrap();
        let names: Vec<&str> = set.queries.iter().map(|q| q.name.as_str()).collect();
        // Stream 0 runs 14 before 6 before 1.
        assert_eq!(names, ["14", "6", "1"]);
        let bad = TpchPowerOptions {
            queries: vec!["23".into()],
            ..o
        };
        let e = bad.query_set(dbrig_driver::Dialect::Sqlite).unwrap_err();
        assert!(e.to_string().contains("query '23'"), "{e}");
        // Answers checked against another target need this target's data unrefreshed.
        let checked = TpchPowerOptions {
            check_against: Some("sqlite:other.db".into()),
            ..bad.clone()
        };
        assert!(checked.validate().is_ok());
        let refreshed = TpchPowerOptions {
            refresh: true,
            ..checked
        };
        let e = refreshed.validate().unwrap_err();
        assert!(e.to_string().contains("refresh = false"), "{e}");
    }
}
