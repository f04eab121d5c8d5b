//! What a plan report is built from: a run (or two runs compared) read back from the results
//! database and arranged as configurations × workloads × client counts, with each cell's
//! trials, their summaries and the A/B comparisons against a baseline.
//!
//! Every stored cell has a kind ([`ResultKind`]), read from its trials' typed results. An OLTP
//! cell is ranked by the report metric (QPS or TPS). Any other kind is split into one *item
//! cell* per measured item (a micro-benchmark's key type or query, a TPC-H query, Power@Size,
//! a perfrun query at one temperature), each in its own unit (see `items.rs`). The stored
//! cells themselves are kept too ([`StoredCell`]), so each kind's own report (the TPC-H seed
//! table, the perfrun counters) reads the typed results.
//!
//! Every statistic comes from `dbrig_core::stats`; this module only decides which values go in.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use dbrig_core::LatencySummary;
use dbrig_core::results::{ResultKind, ServerSettings, TrialEnvironment, TrialResult};
use dbrig_core::stats::{self, CompareOptions, Comparison, Correction, Summary, Verdict};
use dbrig_store::{CellRow, RunId, RunKind, RunRow, Store, TrialId, TrialRow, TrialStatus};
use serde::{Deserialize, Serialize};

use crate::error::ReportError;
use crate::items::Item;

/// The throughput figure a report ranks OLTP configurations by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Queries per second: what the seeds' tables compare (`q/s`).
    #[default]
    Qps,
    /// Transactions (events) per second.
    Tps,
}

impl Metric {
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Qps => "qps",
            Metric::Tps => "tps",
        }
    }

    /// Column and axis label, and the unit of an OLTP cell's value.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Qps => "QPS",
            Metric::Tps => "TPS",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = ReportError;
    fn from_str(s: &str) -> Result<Self, ReportError> {
        match s.to_ascii_lowercase().as_str() {
            "qps" => Ok(Metric::Qps),
            "tps" => Ok(Metric::Tps),
            _ => Err(ReportError::UnknownMetric(s.to_owned())),
        }
    }
}

/// A run as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub id: RunId,
    pub kind: String,
    pub name: String,
    pub status: String,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub dbrig_version: String,
    pub command_line: Vec<String>,
    pub host: serde_json::Value,
    pub plan_text: Option<String>,
}

impl From<RunRow> for RunInfo {
    fn from(r: RunRow) -> Self {
        RunInfo {
            id: r.id,
            kind: r.kind.to_string(),
            name: r.name,
            status: r.status.to_string(),
            error: r.error,
            started_at: r.started_at,
            finished_at: r.finished_at,
            dbrig_version: r.dbrig_version,
            command_line: r.command_line,
            host: r.host,
            plan_text: r.plan_text,
        }
    }
}

/// What a report reads of a cell's stored options (the executor writes `configuration`,
/// `target`, `workload`, `label`, `workload_options`, `run`; a perfrun cell also `filter`).
/// Everything is optional: older rows have other shapes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CellOptions {
    /// The workload's kind name (`oltp_read_only`, `memory_load`, `tpch_power`, `perfrun`);
    /// schema-1 rows kept the workload's options object here instead.
    workload: serde_json::Value,
    /// The options of the workload as resolved for this cell.
    pub workload_options: serde_json::Value,
    /// A perfrun cell's filter given at collection (its workload option `filter`; at the
    /// top for cells migrated from schema 1): applied when reporting by default.
    pub filter: Option<String>,
}

/// A perfrun workload's options as the executor stores them in the cell.
#[derive(Deserialize)]
struct PerfrunCellOptions {
    #[serde(default)]
    filter: Option<String>,
}

impl CellOptions {
    /// The stored options of a cell; options of another shape read as empty.
    pub fn of(cell: &CellRow) -> CellOptions {
        let mut o: CellOptions = serde_json::from_value(cell.options.clone()).unwrap_or_default();
        if o.filter.is_none() {
            o.filter = serde_json::from_value::<PerfrunCellOptions>(o.workload_options.clone())
                .ok()
                .and_then(|p| p.filter);
        }
        o
    }

    /// The workload's kind name, when the cell says it.
    pub fn workload_name(&self) -> Option<&str> {
        self.workload.as_str()
    }
}

/// The kind a workload name measures, for a cell none of whose trials has a result (every
/// one failed before it measured): it still belongs to its kind's section.
fn kind_of_name(name: &str) -> Option<ResultKind> {
    match name.replace('-', "_").as_str() {
        "memory_load" | "scan_filter" | "tmp_groupby" => Some(ResultKind::Micro),
        // The other kinds' workloads go by their kind's stored name (OLTP's by their own).
        n => ResultKind::ALL
            .into_iter()
            .find(|k| *k != ResultKind::Oltp && k.as_str() == n),
    }
}

/// The kind of a stored cell: its results say it; without any, the workload name or the
/// command that stored it; OLTP otherwise (the one kind ranked by measurements alone).
fn cell_kind(run_kind: RunKind, cell: &CellRow, trials: &[TrialRow]) -> ResultKind {
    if let Some(r) = trials.iter().find_map(|t| t.result.as_ref()) {
        return r.kind();
    }
    let by_name = CellOptions::of(cell)
        .workload_name()
        .and_then(kind_of_name)
        .or_else(|| kind_of_name(&cell.workload));
    if let Some(k) = by_name {
        return k;
    }
    match run_kind {
        RunKind::Plan | RunKind::Oltp => ResultKind::Oltp,
        // A single command's run is named after the one kind it measures.
        single => ResultKind::ALL
            .into_iter()
            .find(|k| RunKind::from(*k) == single)
            .unwrap_or(ResultKind::Oltp),
    }
}

/// One stored trial, reduced to what reports use.
#[derive(Debug, Clone, Serialize)]
pub struct TrialData {
    pub trial_id: TrialId,
    pub run_id: RunId,
    pub trial: u32,
    pub status: TrialStatus,
    pub reason: Option<String>,
    pub server_version: Option<String>,
    pub started_at: String,
    pub duration_s: Option<f64>,
    pub tps: Option<f64>,
    pub qps: Option<f64>,
    pub latency_ms: Option<LatencySummary>,
    /// The latency percentile the trial sampled per interval (`--percentile`, 95 by default).
    #[serde(skip)]
    pub percentile: Option<f64>,
    /// For an item cell: the item's value in this trial, in the cell's [`ItemUnit`]. `None`
    /// when the trial failed, or the step errored, timed out or answered wrong (never counted
    /// as fast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<f64>,
    /// For an item cell: why the item has no value in this trial (`timeout (>7.000 s)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_missing: Option<String>,
    /// The trial's typed result (shared by the item cells of one stored cell). Each kind's
    /// view serializes what it shows of it.
    #[serde(skip)]
    pub result: Option<Arc<TrialResult>>,
    /// What the trial ran in: server settings, hooks (OS samples are read per chart).
    #[serde(skip)]
    pub environment: Option<Arc<TrialEnvironment>>,
    /// Address family, protocol mode and connection behaviours of the trial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<dbrig_core::results::ConnectionFacts>,
    /// Every connection's set-up time (OLTP trials), apart from the statements'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_latency: Option<dbrig_core::results::ConnectLatency>,
}

impl TrialData {
    fn new(run_id: RunId, t: TrialRow) -> Self {
        let m = t.measurements.as_ref();
        TrialData {
            trial_id: t.id,
            run_id,
            trial: t.trial,
            status: t.status,
            reason: t.reason,
            server_version: t.server_version,
            started_at: t.started_at,
            duration_s: m.map(|m| m.duration_s),
            tps: m.map(|m| m.tps),
            qps: m.map(|m| m.qps),
            latency_ms: m.map(|m| m.latency),
            percentile: m.map(|m| m.percentile),
            item: None,
            item_missing: None,
            connection: t.environment.as_ref().and_then(|e| e.connection.clone()),
            connect_latency: match &t.result {
                Some(TrialResult::Oltp(o)) => o.connect_latency.clone(),
                _ => None,
            },
            result: t.result.map(Arc::new),
            environment: t.environment.map(|mut e| {
                // Charts read OS samples from the store when they draw them.
                e.os_samples = Vec::new();
                Arc::new(e)
            }),
        }
    }

    /// Whether the trial's numbers go into summaries and comparisons: only `done` trials that
    /// measured something. Failed, interrupted and invalid trials are counted and shown, never
    /// averaged in (an invalid trial may mix two server lives).
    pub fn is_counted(&self) -> bool {
        self.status == TrialStatus::Done && (self.tps.is_some() || self.item.is_some())
    }

    /// The figure a report ranks by: the item's value for an item cell, else the metric.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        if self.item.is_some() {
            return self.item;
        }
        match metric {
            Metric::Qps => self.qps,
            Metric::Tps => self.tps,
        }
    }
}

/// Trials left out of a cell's figures, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Excluded {
    pub failed: usize,
    pub interrupted: usize,
    pub invalid: usize,
    /// Trials that ended well but have no value for this item: the step failed, timed out or
    /// answered wrong (the trial itself is fine and counts for the other items).
    pub without_value: usize,
}

impl Excluded {
    pub fn total(&self) -> usize {
        self.failed + self.interrupted + self.invalid + self.without_value
    }

    /// `1 failed, 2 invalid`; empty when nothing was left out.
    pub fn describe(&self) -> String {
        [
            (self.failed, "failed"),
            (self.interrupted, "interrupted"),
            (self.invalid, "invalid"),
            (
                self.without_value,
                "without a value: the step failed, timed out or answered wrong",
            ),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }

    fn add(self, o: Excluded) -> Excluded {
        Excluded {
            failed: self.failed + o.failed,
            interrupted: self.interrupted + o.interrupted,
            invalid: self.invalid + o.invalid,
            without_value: self.without_value + o.without_value,
        }
    }

    /// Trials left out by their status alone.
    fn of_status(trials: &[TrialData]) -> Excluded {
        let mut ex = Excluded::default();
        for t in trials {
            match t.status {
                TrialStatus::Failed => ex.failed += 1,
                TrialStatus::Interrupted => ex.interrupted += 1,
                TrialStatus::Invalid => ex.invalid += 1,
                TrialStatus::Done => {}
            }
        }
        ex
    }
}

/// One configuration × workload × client count, with all its trials.
#[derive(Debug, Clone, Serialize)]
pub struct CellData {
    pub kind: ResultKind,
    pub configuration: String,
    /// The key of the cell: the stored workload (its plan label) for OLTP, `"{label} {item}"`
    /// for an item cell.
    pub workload: String,
    /// The stored cell's workload (a plan `[[workload]]`'s label, or its name).
    pub label: String,
    pub clients: u32,
    /// Store cell keys merged into this cell (one, unless a plan changed under `--resume`).
    pub cell_keys: Vec<String>,
    /// Every attempt, in trial order, whatever its status.
    pub trials: Vec<TrialData>,
    /// The ranked value of the counted trials, in trial order.
    pub values: Vec<f64>,
    /// Summary of `values`.
    pub summary: Option<Summary>,
    /// Summaries of the counted trials' latency percentiles (ms; OLTP).
    pub p50_ms: Option<Summary>,
    pub p95_ms: Option<Summary>,
    pub p99_ms: Option<Summary>,
    pub excluded: Excluded,
    /// The unit of `values` and `summary`: the report metric's (`QPS`, `TPS`) for OLTP, the
    /// item's own otherwise.
    pub value_unit: String,
    /// Set for an item cell; `None` for an OLTP cell ranked by the report metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<ItemUnit>,
}

/// What a measured item's values are: the workload it belongs to, its unit, and which way
/// is better (seconds: lower; rows per second, Power@Size: higher).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemUnit {
    /// The stored workload (`memory_load`, `tpch_power`, a plan label): the item cells of one
    /// workload share one table.
    pub benchmark: String,
    /// The item's own name (`INT`, `Q1`, `Power@Size`).
    pub item: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// A figure that explains the workload's result rather than being it (server or client
    /// CPU per unit of work): compared with the same statistics, in a family of its own so
    /// that it never changes the verdicts on the workload's own figures.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub evidence: bool,
    /// For a figure derived from another item's own measurement (a micro item's MB/s and
    /// cycles/row, a load table's MB/s: the same seconds in another unit), the cell key of
    /// that item: it tests the same hypothesis, so it is not one more comparison in the
    /// correction for many comparisons (`stats::compare_all_with`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
}

impl ItemUnit {
    fn new(benchmark: &str, item: &str, unit: &str, kinds: &KindFacts) -> Self {
        ItemUnit {
            benchmark: benchmark.to_owned(),
            item: item.to_owned(),
            unit: unit.to_owned(),
            higher_is_better: rate_or_score(unit) || (kinds.grows_with_speed)(unit),
            evidence: false,
            derived_from: None,
        }
    }

    /// `s (lower is better)`.
    pub fn label(&self) -> String {
        format!(
            "{} ({} is better)",
            self.unit,
            if self.higher_is_better {
                "higher"
            } else {
                "lower"
            }
        )
    }
}

/// Rates and scores grow with speed (rows/s, MB/s, Power@Size); times and costs shrink
/// (s, ms/query, cycles/row). A kind's own units that grow (TPC-C's NOPM) its report says:
/// the whole rule, with them, is `kinds::higher_is_better`.
pub fn rate_or_score(unit: &str) -> bool {
    unit.ends_with("/s") || unit.ends_with("@Size") || unit == "QPS" || unit == "TPS"
}

impl CellData {
    fn new(
        kind: ResultKind,
        configuration: String,
        workload: String,
        label: String,
        clients: u32,
    ) -> Self {
        CellData {
            kind,
            configuration,
            workload,
            label,
            clients,
            unit: None,
            cell_keys: Vec::new(),
            trials: Vec::new(),
            values: Vec::new(),
            summary: None,
            p50_ms: None,
            p95_ms: None,
            p99_ms: None,
            excluded: Excluded::default(),
            value_unit: String::new(),
        }
    }

    /// The unit of the cell's values: the item's, or the metric's for OLTP.
    pub fn unit_text(&self, metric: Metric) -> &str {
        match &self.unit {
            Some(u) => &u.unit,
            None => metric.label(),
        }
    }

    fn summarize(&mut self, metric: Metric) {
        self.value_unit = self.unit_text(metric).to_owned();
        self.trials.sort_by_key(|t| (t.trial, t.run_id, t.trial_id));
        let counted: Vec<&TrialData> = self.trials.iter().filter(|t| t.is_counted()).collect();
        self.values = counted.iter().filter_map(|t| t.value(metric)).collect();
        self.summary = stats::summarize(&self.values);
        let lat = |f: fn(&LatencySummary) -> f64| {
            let v: Vec<f64> = counted
                .iter()
                .filter_map(|t| t.latency_ms.as_ref().map(f))
                .collect();
            stats::summarize(&v)
        };
        self.p50_ms = lat(|l| l.p50);
        self.p95_ms = lat(|l| l.p95);
        self.p99_ms = lat(|l| l.p99);
        let mut ex = Excluded::of_status(&self.trials);
        ex.without_value = self
            .trials
            .iter()
            .filter(|t| t.status == TrialStatus::Done && !t.is_counted())
            .count();
        self.excluded = ex;
    }

    /// The counted trial whose metric is nearest the cell's median (lowest trial number on a
    /// tie): the one a time-series chart shows as typical.
    pub fn typical_trial(&self, metric: Metric) -> Option<&TrialData> {
        let median = self.summary.as_ref()?.median;
        self.trials
            .iter()
            .filter(|t| t.is_counted())
            .filter_map(|t| t.value(metric).map(|v| (t, (v - median).abs())))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(t, _)| t)
    }
}

/// A cell as stored (before items were split out): its kind, options and trials with their
/// typed results. Each kind's own report reads these.
#[derive(Debug, Clone)]
pub struct StoredCell {
    pub kind: ResultKind,
    /// As the report names it (renamed in a comparison of two runs).
    pub configuration: String,
    pub workload: String,
    pub clients: u32,
    pub cell_key: String,
    pub target: String,
    pub options: CellOptions,
    pub run_id: RunId,
    pub trials: Vec<TrialData>,
}

impl StoredCell {
    /// The typed results of the trials that ended `done`, in trial order.
    pub fn done_results(&self) -> impl Iterator<Item = &TrialResult> {
        self.trials
            .iter()
            .filter(|t| t.status == TrialStatus::Done)
            .filter_map(|t| t.result.as_deref())
    }
}

/// Server versions seen in one configuration's trials.
#[derive(Debug, Clone, Serialize)]
pub struct ServerVersions {
    pub configuration: String,
    pub versions: Vec<String>,
    /// How its trials connected (address family, protocol mode, behaviours), each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<String>,
}

/// One configuration compared with the baseline in one workload × client count.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonRow {
    pub kind: ResultKind,
    pub workload: String,
    pub clients: u32,
    pub configuration: String,
    pub baseline: String,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// Either side is unstable (stddev ≥ 10 % of the mean): the seeds' `*`.
    pub unstable: bool,
    /// Trials per side a verdict needs: enough that the smallest p-value the exact test
    /// allows, times the correction's factor for the comparisons of its family, is below
    /// alpha (`stats::trials_for_verdict`), and enough to narrow the interval to
    /// ±`half_width` at the noise these trials showed, `half_width` being what calling the
    /// observed change needs (|delta| less the noise band, at least the noise band).
    pub trials_needed: TrialsNeeded,
    /// Comparisons in this row's family (the workloads' own figures, or CPU per unit of
    /// work), derived figures not counted: what its p-value was corrected for.
    pub family: usize,
}

/// See [`ComparisonRow::trials_needed`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrialsNeeded {
    pub trials: usize,
    /// Half-width of the interval those trials would give, as a fraction (0.05 = ±5 %);
    /// `None` when the noise is not known (fewer than 2 trials a side): then `trials` is
    /// only what the correction needs.
    pub half_width: Option<f64>,
}

/// The workloads of one kind, in plan order: one section of every report format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Section {
    pub kind: ResultKind,
    /// Its kind's title (`KindReport::title`).
    #[serde(skip)]
    pub title: &'static str,
    /// Stored workload names (plan labels), in plan order.
    pub workloads: Vec<String>,
}

/// How a run's plan asked its changes to be called: the defaults, with the noise band of its
/// `[report] noise-band` (percent, stored with the resolved plan) and the correction of its
/// `[report] correction` (`fdr` or `holm`) when it has valid ones.
fn plan_compare_options(resolved: &serde_json::Value) -> CompareOptions {
    let mut o = CompareOptions::new(true);
    if let Some(band) = resolved["report"]["noise-band"]
        .as_f64()
        .and_then(stats::noise_band_from_percent)
    {
        o.noise_band = band;
    }
    if let Some(c) = resolved["report"]["correction"]
        .as_str()
        .and_then(|c| c.parse::<Correction>().ok())
    {
        o.correction = c;
    }
    o
}

/// Everything a plan report shows.
#[derive(Debug, Clone, Serialize)]
pub struct ReportData {
    pub title: String,
    /// The run, or the two runs of a comparison.
    pub runs: Vec<RunInfo>,
    /// The figure OLTP cells are ranked by (item cells have their own units).
    pub metric: Metric,
    pub baseline: String,
    /// In plan order (first seen).
    pub configurations: Vec<String>,
    /// Cell keys in plan order (first seen).
    pub workloads: Vec<String>,
    /// Ascending, over all cells.
    pub clients: Vec<u32>,
    /// One per kind, in plan order (first seen).
    pub sections: Vec<Section>,
    /// Ordered by workload, client count, configuration.
    pub cells: Vec<CellData>,
    pub server_versions: Vec<ServerVersions>,
    /// Every non-baseline configuration against the baseline, per workload × client count,
    /// adjusted for many comparisons as one family (CPU per unit of work as another; perfrun
    /// cells are compared query by query instead).
    pub comparisons: Vec<ComparisonRow>,
    pub compare_options: CompareOptions,
    /// The cells as stored, with their typed results.
    #[serde(skip)]
    pub stored: Vec<StoredCell>,
    /// The filter perfrun comparisons are shown with, in place of the one given at
    /// collection (an empty one shows every pair); see [`ReportData::set_perfrun_filter`].
    #[serde(skip)]
    pub perfrun_filter: Option<String>,
    /// A single command's run (one cell, one trial) as the command printed it: the HTML page
    /// and Markdown show it whole (TPS, latencies, statements, errors, seed), since the plan
    /// tables carry only the ranked figure. `None` for a plan run, a perfrun (its own layout
    /// is the report) and two runs compared.
    #[serde(skip)]
    pub single_run: Option<String>,
    #[serde(skip)]
    index: HashMap<(String, String, u32), usize>,
}

impl ReportData {
    /// The report of one run, with the first configuration as baseline and QPS as metric,
    /// each trial's result split into items as `kinds` says (the registry's: `ReportData::load`).
    pub fn load_with(
        store: &Store,
        run: RunId,
        kinds: KindFacts,
    ) -> Result<ReportData, ReportError> {
        let row = store.run(run)?;
        let kind = row.kind;
        let options = plan_compare_options(&row.options);
        let info = RunInfo::from(row);
        let title = format!("{} (run {})", info.name, info.id);
        let mut stored = Vec::new();
        read_cells(store, run, kind, |c| c.to_owned(), &mut stored)?;
        if stored.is_empty() {
            return Err(ReportError::EmptyRun { run });
        }
        Ok(Self::assemble(title, vec![info], stored, options, kinds))
    }

    /// Two runs compared, run A's configuration as baseline. The configurations keep their
    /// names when the two runs' names are disjoint; otherwise each is named after its run
    /// (`run7`, or `run7/NAME` when a run has several), so A and B never merge.
    pub fn load_compare_with(
        store: &Store,
        a: RunId,
        b: RunId,
        kinds: KindFacts,
    ) -> Result<ReportData, ReportError> {
        if a == b {
            return Err(ReportError::SameRun { run: a });
        }
        let rows = [store.run(a)?, store.run(b)?];
        let run_kinds = [rows[0].kind, rows[1].kind];
        // The baseline run's plan decides how changes are called.
        let options = plan_compare_options(&rows[0].options);
        let infos = rows.map(RunInfo::from);
        let configs = |run: RunId| -> Result<BTreeSet<String>, ReportError> {
            Ok(store
                .cells(run)?
                .into_iter()
                .map(|c| c.configuration)
                .collect())
        };
        let (ca, cb) = (configs(a)?, configs(b)?);
        let distinct = ca.is_disjoint(&cb);
        let mut stored = Vec::new();
        for ((run, set), kind) in [(a, &ca), (b, &cb)].into_iter().zip(run_kinds) {
            let single = set.len() == 1;
            read_cells(
                store,
                run,
                kind,
                |c| {
                    if distinct {
                        c.to_owned()
                    } else if single {
                        format!("run{run}")
                    } else {
                        format!("run{run}/{c}")
                    }
                },
                &mut stored,
            )?;
        }
        if stored.is_empty() {
            return Err(ReportError::EmptyRun { run: a });
        }
        let title = format!(
            "{} (run {}) vs {} (run {})",
            infos[0].name, infos[0].id, infos[1].name, infos[1].id
        );
        Ok(Self::assemble(title, infos.into(), stored, options, kinds))
    }

    fn assemble(
        title: String,
        runs: Vec<RunInfo>,
        stored: Vec<StoredCell>,
        compare_options: CompareOptions,
        kinds: KindFacts,
    ) -> Self {
        let raw = item_cells(&stored, &kinds);
        let mut configurations: Vec<String> = Vec::new();
        let mut workloads: Vec<String> = Vec::new();
        let mut sections: Vec<Section> = Vec::new();
        let mut clients = BTreeSet::new();
        for s in &stored {
            if !configurations.contains(&s.configuration) {
                configurations.push(s.configuration.clone());
            }
            match sections.iter_mut().find(|x| x.kind == s.kind) {
                Some(x) if !x.workloads.contains(&s.workload) => {
                    x.workloads.push(s.workload.clone())
                }
                Some(_) => {}
                None => sections.push(Section {
                    kind: s.kind,
                    title: (kinds.title)(s.kind),
                    workloads: vec![s.workload.clone()],
                }),
            }
        }
        let mut merged: HashMap<(String, String, u32), CellData> = HashMap::new();
        for c in raw {
            if !workloads.contains(&c.workload) {
                workloads.push(c.workload.clone());
            }
            clients.insert(c.clients);
            let cell = merged
                .entry((c.configuration.clone(), c.workload.clone(), c.clients))
                .or_insert_with(|| {
                    CellData::new(c.kind, c.configuration, c.workload, c.label, c.clients)
                });
            cell.unit = cell.unit.take().or(c.unit);
            cell.cell_keys.push(c.cell_key);
            cell.trials.extend(c.trials);
        }
        let pos = |list: &[String], s: &str| list.iter().position(|x| x == s).unwrap_or(0);
        let mut cells: Vec<CellData> = merged.into_values().collect();
        cells.sort_by_key(|c| {
            (
                pos(&workloads, &c.workload),
                c.clients,
                pos(&configurations, &c.configuration),
            )
        });
        let server_versions = configurations
            .iter()
            .map(|conf| ServerVersions {
                configuration: conf.clone(),
                versions: stored
                    .iter()
                    .filter(|c| &c.configuration == conf)
                    .flat_map(|c| c.trials.iter().filter_map(|t| t.server_version.clone()))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                connections: stored
                    .iter()
                    .filter(|c| &c.configuration == conf)
                    .flat_map(|c| {
                        c.trials.iter().filter_map(|t| {
                            let f = t.connection.as_ref()?;
                            // sql-bench's Perl scripts connect and send their statements
                            // through DBI themselves: no protocol of dbrig's is theirs.
                            Some(match c.kind {
                                ResultKind::SqlBench => format!(
                                    "{}, statements sent by sql-bench's Perl DBI",
                                    f.address_family.name()
                                ),
                                _ => f.describe(),
                            })
                        })
                    })
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
            })
            .collect();
        let index = cells
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.configuration.clone(), c.workload.clone(), c.clients), i))
            .collect();
        let mut data = ReportData {
            title,
            runs,
            metric: Metric::Qps,
            baseline: configurations.first().cloned().unwrap_or_default(),
            configurations,
            workloads,
            clients: clients.into_iter().collect(),
            sections,
            cells,
            server_versions,
            comparisons: Vec::new(),
            compare_options,
            stored,
            perfrun_filter: None,
            single_run: None,
            index,
        };
        data.refresh();
        data
    }

    /// Rank by another metric (summaries and comparisons are recomputed).
    pub fn set_metric(&mut self, metric: Metric) {
        self.metric = metric;
        self.refresh();
    }

    /// Compare against another configuration.
    pub fn set_baseline(&mut self, name: &str) -> Result<(), ReportError> {
        if !self.configurations.iter().any(|c| c == name) {
            return Err(ReportError::NoSuchConfiguration {
                name: name.to_owned(),
                known: self.configurations.join(", "),
            });
        }
        self.baseline = name.to_owned();
        self.refresh();
        Ok(())
    }

    /// Call changes beyond ±`band` (a fraction, checked by
    /// [`stats::noise_band_from_percent`] where a user gives it) instead of the plan's.
    pub fn set_noise_band(&mut self, band: f64) {
        self.compare_options.noise_band = band;
        self.refresh();
    }

    /// Adjust for many comparisons with `correction` instead of the plan's (`dbrig report
    /// --correction`).
    pub fn set_correction(&mut self, correction: Correction) {
        self.compare_options.correction = correction;
        self.refresh();
    }

    /// Show perfrun comparisons with `filter` instead of the filter given at collection
    /// (`Some("")` shows every pair; `None` goes back to the stored one). Checked when a
    /// report is drawn, against the counters the two sides report.
    pub fn set_perfrun_filter(&mut self, filter: Option<&str>) {
        self.perfrun_filter = filter.map(str::to_owned);
    }

    fn refresh(&mut self) {
        for c in &mut self.cells {
            c.summarize(self.metric);
        }
        struct Key {
            kind: ResultKind,
            workload: String,
            clients: u32,
            configuration: String,
            unstable: bool,
            lower_is_better: bool,
        }
        let mut keys = Vec::new();
        let mut pairs = Vec::new();
        let mut is_evidence = Vec::new();
        let mut derived_from = Vec::new();
        for w in &self.workloads {
            for &n in &self.clients {
                let Some(base) = self.cell(&self.baseline, w, n) else {
                    continue;
                };
                // A perfrun is compared query by query, with its counters, in its own report.
                if base.kind == ResultKind::Perfrun {
                    continue;
                }
                for conf in self.others() {
                    if let Some(other) = self.cell(conf, w, n) {
                        let unstable = [base, other]
                            .iter()
                            .any(|c| c.summary.as_ref().is_some_and(|s| s.unstable));
                        let unit = base.unit.as_ref();
                        keys.push(Key {
                            kind: base.kind,
                            workload: w.clone(),
                            clients: n,
                            configuration: conf.to_owned(),
                            unstable,
                            lower_is_better: unit.is_some_and(|u| !u.higher_is_better),
                        });
                        pairs.push((base.values.clone(), other.values.clone()));
                        is_evidence.push(unit.is_some_and(|u| u.evidence));
                        derived_from.push(unit.and_then(|u| u.derived_from.clone()));
                    }
                }
            }
        }
        // A derived figure stands in the place of the item it is derived from: the same
        // configuration, client count and family.
        let same_as: Vec<Option<usize>> = derived_from
            .iter()
            .zip(&keys)
            .map(|(from, k)| {
                let from = from.as_ref()?;
                keys.iter().position(|o| {
                    o.workload == *from
                        && o.clients == k.clients
                        && o.configuration == k.configuration
                })
            })
            .collect();
        // One family for the whole report: with many cells, some would look significant by
        // chance alone (measurement spec: a correction across the comparison). Computed as
        // higher-is-better and mirrored for times: the rule is symmetric, so one family still
        // covers throughput and seconds alike. CPU per unit of work is a family of its own:
        // explaining a result never makes its verdicts more conservative.
        let results = two_families(&pairs, &is_evidence, &same_as, &self.compare_options);
        // Each family's size, derived figures not counted: what a verdict's trials are for.
        let family_size = |evidence: bool| {
            (0..keys.len())
                .filter(|&i| is_evidence[i] == evidence && same_as[i].is_none())
                .count()
        };
        let sizes = [family_size(false), family_size(true)];
        let o = self.compare_options;
        self.comparisons = keys
            .into_iter()
            .zip(results)
            .zip(&pairs)
            .zip(&is_evidence)
            .map(|(((k, mut comparison), (a, b)), &evidence)| {
                let family = sizes[usize::from(evidence)];
                let half_width = comparison
                    .delta
                    .map_or(o.noise_band, |d| (d.abs() - o.noise_band).max(o.noise_band));
                let for_noise = stats::trials_for_half_width(a, b, half_width, 1.0 - o.alpha);
                // A verdict needs `min_trials` a side, and as many as the correction for the
                // family's comparisons leaves a p-value below alpha, whatever the noise.
                let for_correction = stats::trials_for_verdict(family, o.alpha)
                    .unwrap_or(o.min_trials)
                    .max(o.min_trials);
                let trials_needed = TrialsNeeded {
                    trials: for_noise.unwrap_or(0).max(for_correction),
                    half_width: for_noise.map(|_| half_width),
                };
                if k.lower_is_better {
                    comparison.verdict = match comparison.verdict {
                        Verdict::Improvement => Verdict::Regression,
                        Verdict::Regression => Verdict::Improvement,
                        v => v,
                    };
                }
                ComparisonRow {
                    kind: k.kind,
                    workload: k.workload,
                    clients: k.clients,
                    configuration: k.configuration,
                    baseline: self.baseline.clone(),
                    comparison,
                    unstable: k.unstable,
                    trials_needed,
                    family,
                }
            })
            .collect();
    }

    /// Each configuration's server settings, in plan order: those of its last finished trial
    /// that read them (what it ran with last). Configurations without any are left out.
    pub fn settings_by_configuration(&self) -> Vec<(&str, &ServerSettings)> {
        self.configurations
            .iter()
            .filter_map(|conf| {
                let s = self
                    .stored
                    .iter()
                    .filter(|c| c.configuration == *conf)
                    .flat_map(|c| &c.trials)
                    .filter(|t| t.status == TrialStatus::Done)
                    .filter_map(|t| t.environment.as_deref()?.server_settings.as_ref())
                    .next_back()?;
                Some((conf.as_str(), s))
            })
            .collect()
    }

    /// The configurations other than the baseline, in plan order.
    pub fn others(&self) -> impl Iterator<Item = &str> {
        self.configurations
            .iter()
            .filter(|c| **c != self.baseline)
            .map(String::as_str)
    }

    pub fn cell(&self, configuration: &str, workload: &str, clients: u32) -> Option<&CellData> {
        self.index
            .get(&(configuration.to_owned(), workload.to_owned(), clients))
            .map(|&i| &self.cells[i])
    }

    pub fn comparison(
        &self,
        configuration: &str,
        workload: &str,
        clients: u32,
    ) -> Option<&ComparisonRow> {
        self.comparisons.iter().find(|r| {
            r.configuration == configuration && r.workload == workload && r.clients == clients
        })
    }

    /// Whether the report has cells of `kind`.
    pub fn has_kind(&self, kind: ResultKind) -> bool {
        self.sections.iter().any(|s| s.kind == kind)
    }

    /// The client counts `workload` (a cell key) ran with, ascending: an OLTP chart's x axis.
    pub fn clients_of(&self, workload: &str) -> Vec<u32> {
        self.cells
            .iter()
            .filter(|c| c.workload == workload)
            .map(|c| c.clients)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The stored cells of one workload (a plan label), in plan order of configuration.
    pub fn stored_cells(&self, workload: &str) -> Vec<&StoredCell> {
        let mut out: Vec<&StoredCell> = self
            .stored
            .iter()
            .filter(|c| c.workload == workload)
            .collect();
        let pos = |c: &str| self.configurations.iter().position(|x| x == c);
        out.sort_by_key(|c| (pos(&c.configuration), c.clients));
        out
    }

    /// Trials left out of the figures over the whole report, by their status (each stored
    /// trial once, however many items it has).
    pub fn excluded(&self) -> Excluded {
        self.stored
            .iter()
            .map(|c| Excluded::of_status(&c.trials))
            .fold(Excluded::default(), Excluded::add)
    }

    /// The plan text of the (first) run.
    pub fn plan_text(&self) -> Option<&str> {
        self.runs.iter().find_map(|r| r.plan_text.as_deref())
    }
}

/// `stats::compare_all_with` over two families, `pairs` split by `second`, in `pairs`' order;
/// `same_as` links a derived figure to its item's pair (within its family).
fn two_families(
    pairs: &[(Vec<f64>, Vec<f64>)],
    second: &[bool],
    same_as: &[Option<usize>],
    o: &CompareOptions,
) -> Vec<Comparison> {
    let family = |which: bool| {
        let chosen: Vec<usize> = (0..pairs.len()).filter(|&i| second[i] == which).collect();
        let within: Vec<Option<usize>> = chosen
            .iter()
            .map(|&i| {
                let j = same_as[i]?;
                chosen.iter().position(|&c| c == j)
            })
            .collect();
        let chosen_pairs: Vec<(Vec<f64>, Vec<f64>)> =
            chosen.iter().map(|&i| pairs[i].clone()).collect();
        stats::compare_all_with(&chosen_pairs, &within, o).into_iter()
    };
    let (mut first, mut other) = (family(false), family(true));
    second
        .iter()
        .filter_map(|s| if *s { other.next() } else { first.next() })
        .collect()
}

/// Read a run's cells with their trials; `rename` gives the configuration's report name.
fn read_cells(
    store: &Store,
    run: RunId,
    run_kind: RunKind,
    rename: impl Fn(&str) -> String,
    out: &mut Vec<StoredCell>,
) -> Result<(), ReportError> {
    for cell in store.cells(run)? {
        let rows = store.trials(cell.id)?;
        let kind = cell_kind(run_kind, &cell, &rows);
        out.push(StoredCell {
            kind,
            configuration: rename(&cell.configuration),
            options: CellOptions::of(&cell),
            workload: cell.workload,
            clients: cell.clients,
            cell_key: cell.cell_key,
            target: cell.target,
            run_id: run,
            trials: rows.into_iter().map(|t| TrialData::new(run, t)).collect(),
        });
    }
    Ok(())
}

/// A cell before cells of the same key are merged.
struct RawCell {
    kind: ResultKind,
    configuration: String,
    workload: String,
    label: String,
    clients: u32,
    cell_key: String,
    trials: Vec<TrialData>,
    unit: Option<ItemUnit>,
}

/// What assembling a report needs to know of the kinds, given by whoever loads the data (the
/// registry's: `kinds::FACTS`), since this file knows no kind.
#[derive(Clone, Copy)]
pub struct KindFacts {
    /// How a trial's result splits into items.
    pub items: fn(&TrialResult) -> Vec<Item>,
    /// A section's title.
    pub title: fn(ResultKind) -> &'static str,
    /// A kind's own unit that grows with speed (beyond [`rate_or_score`]).
    pub grows_with_speed: fn(&str) -> bool,
}

/// An item's key, name and unit.
type ItemId = (String, String, String);

/// Split the stored cells into report cells: an OLTP cell as is, any other kind one cell per
/// item. A workload's items are taken over all its cells, so a configuration whose every trial
/// failed still gets a row per item (showing the failures) rather than a table of its own; an
/// item a cell's engine skipped (SQLite has no sqrt) gets no cell there.
fn item_cells(stored: &[StoredCell], kinds: &KindFacts) -> Vec<RawCell> {
    // Per workload: every item, first seen first.
    let mut items_of: Vec<(String, Vec<ItemId>)> = Vec::new();
    let mut per_cell: Vec<Vec<Option<Vec<Item>>>> = Vec::with_capacity(stored.len());
    for cell in stored {
        let per_trial: Vec<Option<Vec<Item>>> = cell
            .trials
            .iter()
            .map(|t| t.result.as_deref().map(kinds.items))
            .collect();
        let pos = match items_of.iter().position(|(w, _)| *w == cell.workload) {
            Some(p) => p,
            None => {
                items_of.push((cell.workload.clone(), Vec::new()));
                items_of.len() - 1
            }
        };
        for i in per_trial.iter().flatten().flatten() {
            let key = i.key();
            if !items_of[pos].1.iter().any(|(k, _, _)| *k == key) {
                items_of[pos].1.push((key, i.name.clone(), i.unit.clone()));
            }
        }
        per_cell.push(per_trial);
    }
    let mut out = Vec::new();
    for (cell, per_trial) in stored.iter().zip(per_cell) {
        let raw = |workload: String, trials: Vec<TrialData>, unit: Option<ItemUnit>| RawCell {
            kind: cell.kind,
            configuration: cell.configuration.clone(),
            workload,
            label: cell.workload.clone(),
            clients: cell.clients,
            cell_key: cell.cell_key.clone(),
            trials,
            unit,
        };
        let all = items_of
            .iter()
            .find(|(w, _)| *w == cell.workload)
            .map(|(_, i)| i.clone())
            .unwrap_or_default();
        for (name, unit, trials) in evidence_cells(cell) {
            out.push(raw(
                format!("{} {name}", cell.workload),
                trials,
                Some(ItemUnit {
                    evidence: true,
                    ..ItemUnit::new(&cell.workload, name, &unit, kinds)
                }),
            ));
        }
        if cell.kind == ResultKind::Oltp || all.is_empty() {
            out.push(raw(cell.workload.clone(), cell.trials.clone(), None));
            continue;
        }
        let own: Vec<_> = all
            .iter()
            .filter(|(k, _, _)| {
                per_trial
                    .iter()
                    .flatten()
                    .any(|items| items.iter().any(|i| i.key() == *k))
            })
            .cloned()
            .collect();
        let chosen = if own.is_empty() { all } else { own };
        for (key, name, unit) in chosen {
            let trials = cell
                .trials
                .iter()
                .zip(&per_trial)
                .map(|(t, values)| {
                    let item = values.iter().flatten().find(|i| i.key() == key);
                    TrialData {
                        item: item.and_then(|i| i.value),
                        item_missing: item.and_then(|i| i.missing.clone()),
                        ..t.clone()
                    }
                })
                .collect();
            // A derived figure keeps its item's name: the unit column tells the rows apart.
            let derived_from = (key != name).then(|| format!("{} {name}", cell.workload));
            out.push(raw(
                format!("{} {key}", cell.workload),
                trials,
                Some(ItemUnit {
                    derived_from,
                    ..ItemUnit::new(&cell.workload, &name, &unit, kinds)
                }),
            ));
        }
    }
    out
}

/// The names of the evidence figures every trial records (CPU, client memory), as item names.
pub const SERVER_CPU: &str = "server CPU";
pub const CLIENT_CPU: &str = "client CPU";
pub const CLIENT_MEMORY: &str = "client peak memory";

/// A stored cell's evidence figures as item cells: CPU per unit of work (server, then client:
/// `µs/txn`) and dbrig's own peak memory over the trial (`MB`), for the figures at least one
/// of its trials recorded. The unit of work is the first trial's that has one.
fn evidence_cells(cell: &StoredCell) -> Vec<(&'static str, String, Vec<TrialData>)> {
    let cpu = |t: &TrialData| t.environment.as_deref()?.evidence.as_ref()?.cpu.clone();
    let Some(unit) = cell
        .trials
        .iter()
        .find_map(cpu)
        .map(|c| c.unit_abbrev().to_owned())
    else {
        return Vec::new();
    };
    type Figure = fn(&dbrig_core::results::WorkCpu) -> Option<f64>;
    let per_unit = format!("µs/{unit}");
    let figures: [(&'static str, &str, Figure); 3] = [
        (SERVER_CPU, &per_unit, |c| c.server_us_per_unit()),
        (CLIENT_CPU, &per_unit, |c| c.client_us_per_unit()),
        (CLIENT_MEMORY, "MB", |c| {
            c.client_peak_rss_bytes
                .map(|b| b as f64 / (1024.0 * 1024.0))
        }),
    ];
    figures
        .into_iter()
        .filter_map(|(name, unit, figure)| {
            let trials: Vec<TrialData> = cell
                .trials
                .iter()
                .map(|t| TrialData {
                    item: cpu(t).as_ref().and_then(figure),
                    // Only the figure counts: a trial without it is not counted as its QPS.
                    tps: None,
                    qps: None,
                    latency_ms: None,
                    ..t.clone()
                })
                .collect();
            trials
                .iter()
                .any(|t| t.item.is_some())
                .then(|| (name, unit.to_owned(), trials))
        })
        .collect()
}

#[cfg(test)]
mod item_tests {
    use dbrig_core::results::QueryStatus;
    use dbrig_store::testing::writer;
    use dbrig_store::{NewCell, NewRun, NewTrial, RunKind};

    use super::*;
    use crate::fixture;

    /// A cell none of whose trials measured belongs to its kind's section: by its workload's
    /// name (each kind's stored name, micro-benchmarks' own), else by the single command that
    /// stored its run; a plan's unnamed cell is OLTP's. Every kind's section has its title.
    #[test]
    fn an_unmeasured_cell_finds_its_kind() {
        let cell = |workload: &str| CellRow {
            id: dbrig_store::CellId(1),
            run_id: RunId(1),
            cell_key: "k".into(),
            configuration: "A".into(),
            workload: workload.into(),
            clients: 1,
            options: serde_json::json!({}),
            target: "sqlite:x".into(),
        };
        for kind in ResultKind::ALL {
            if kind != ResultKind::Oltp {
                assert_eq!(cell_kind(RunKind::Plan, &cell(kind.as_str()), &[]), kind);
            }
            if kind != ResultKind::SqlBench {
                assert_eq!(cell_kind(RunKind::from(kind), &cell("label"), &[]), kind);
            }
        }
        assert_eq!(
            cell_kind(RunKind::Plan, &cell("tpch-power"), &[]),
            ResultKind::TpchPower
        );
        assert_eq!(
            cell_kind(RunKind::Micro, &cell("scan_filter"), &[]),
            ResultKind::Micro
        );
        assert_eq!(
            cell_kind(RunKind::Plan, &cell("oltp_read_write"), &[]),
            ResultKind::Oltp
        );
        assert_eq!(
            cell_kind(RunKind::Plan, &cell("oltp"), &[]),
            ResultKind::Oltp
        );
    }

    /// A micro item's MB/s and cycles/row are its seconds in other units: one hypothesis
    /// with the item, not more comparisons in the correction. The mixed plan's memory_load
    /// and groupby items each bring derived figures; the family counts their items only.
    #[test]
    fn derived_figures_do_not_enlarge_the_family() {
        let mut store = Store::open_in_memory().unwrap();
        let run = fixture::mixed_plan(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let derived = |r: &ComparisonRow| {
            data.cell(&r.baseline, &r.workload, r.clients)
                .and_then(|c| c.unit.as_ref())
                .is_some_and(|u| u.derived_from.is_some())
        };
        let evidence = |r: &ComparisonRow| {
            data.cell(&r.baseline, &r.workload, r.clients)
                .and_then(|c| c.unit.as_ref())
                .is_some_and(|u| u.evidence)
        };
        let results: Vec<&ComparisonRow> =
            data.comparisons.iter().filter(|r| !evidence(r)).collect();
        let own = results.iter().filter(|r| !derived(r)).count();
        assert!(
            results.iter().any(|r| derived(r)),
            "the plan has derived figures"
        );
        assert!(own < results.len());
        assert!(results.iter().all(|r| r.family == own), "{own}");
        // A derived figure's adjusted p is what its p gets in its item's place: with the same
        // ranks, the item's own.
        let int = data.comparison("B", "memory_load INT", 1).unwrap();
        let mb = data.comparison("B", "memory_load INT (MB/s)", 1).unwrap();
        assert_eq!(mb.comparison.p_value, int.comparison.p_value);
        assert_eq!(mb.comparison.p_adjusted, int.comparison.p_adjusted);
    }

    /// A plan run of a TPC-H power test: configuration A, and B twice as fast on Q1 with
    /// 5 trials each; B's trial 3 answered Q6 wrong and its trial 5 failed outright.
    fn tpch_run(store: &mut Store) -> RunId {
        tpch_run_with(store, &serde_json::json!({}))
    }

    /// [`tpch_run`], stored with the resolved plan `options`.
    fn tpch_run_with(store: &mut Store, options: &serde_json::Value) -> RunId {
        let run = writer(store)
            .begin_run(&NewRun {
                kind: RunKind::Plan,
                name: "items",
                started_at: fixture::at(0),
                options,
                host: &serde_json::json!({}),
                dbrig_version: "test",
                command_line: &[],
                plan_text: None,
            })
            .unwrap();
        for (conf, speed) in [("A", 1.0), ("B", 2.0)] {
            let cell = writer(store)
                .ensure_cell(
                    run,
                    &NewCell {
                        cell_key: conf,
                        configuration: conf,
                        workload: "tpch_power",
                        clients: 1,
                        options: &serde_json::json!({}),
                        target: "sqlite:x",
                    },
                )
                .unwrap();
            for t in 1..=5u32 {
                let wrong = conf == "B" && t == 3;
                let failed = conf == "B" && t == 5;
                let jitter = 1.0 + f64::from(t) / 1000.0;
                let result = TrialResult::TpchPower(fixture::power_report(
                    "SQLite 3",
                    vec![
                        fixture::step("1", (1e6 * jitter / speed) as u64, QueryStatus::Ok),
                        fixture::step(
                            "6",
                            20_000,
                            if wrong {
                                QueryStatus::Wrong
                            } else {
                                QueryStatus::Ok
                            },
                        ),
                    ],
                    Some(100.0 * speed * jitter),
                ));
                writer(store)
                    .record_trial(
                        cell,
                        &NewTrial {
                            trial: t,
                            status: if failed {
                                TrialStatus::Failed
                            } else {
                                TrialStatus::Done
                            },
                            reason: failed.then_some("server gone"),
                            server_version: Some("SQLite 3"),
                            started_at: fixture::at(t.into()),
                            finished_at: fixture::at(t.into()),
                            measurements: None,
                            result: (!failed).then_some(&result),
                            environment: None,
                        },
                    )
                    .unwrap();
            }
        }
        run
    }

    /// The plan's `[report] noise-band` (percent, stored with the resolved plan) decides
    /// which changes are called; `set_noise_band` (`dbrig report --noise-band`) overrides it;
    /// a stored band that is not a valid one leaves the default 1 %.
    #[test]
    fn the_plans_noise_band_decides_the_verdicts_and_a_report_option_overrides_it() {
        let verdicts = |data: &ReportData| {
            ["tpch_power Q1", "tpch_power Power@Size"]
                .map(|w| data.comparison("B", w, 1).unwrap().comparison.verdict)
        };
        // Q1 takes half the time (-50 %), Power@Size doubles (+100 %).
        let mut store = Store::open_in_memory().unwrap();
        let run = tpch_run_with(
            &mut store,
            &serde_json::json!({"report": {"noise-band": 60.0}}),
        );
        let mut data = ReportData::load(&store, run).unwrap();
        assert_eq!(data.compare_options.noise_band, 0.6);
        assert_eq!(verdicts(&data), [Verdict::NoChange, Verdict::Improvement]);
        data.set_noise_band(0.01);
        assert_eq!(
            verdicts(&data),
            [Verdict::Improvement, Verdict::Improvement]
        );
        data.set_noise_band(1.5);
        assert_eq!(verdicts(&data), [Verdict::NoChange, Verdict::NoChange]);
        for bad in [serde_json::json!(-5.0), serde_json::json!("2")] {
            let mut store = Store::open_in_memory().unwrap();
            let run = tpch_run_with(
                &mut store,
                &serde_json::json!({"report": {"noise-band": bad}}),
            );
            let data = ReportData::load(&store, run).unwrap();
            assert_eq!(data.compare_options.noise_band, 0.01, "{bad}");
        }
    }

    #[test]
    fn power_test_trials_become_one_cell_per_query_with_direction_aware_verdicts() {
        let mut store = Store::open_in_memory().unwrap();
        let run = tpch_run(&mut store);
        let data = ReportData::load(&store, run).unwrap();
        assert_eq!(
            data.workloads,
            ["tpch_power Q1", "tpch_power Q6", "tpch_power Power@Size"]
        );
        assert_eq!(
            data.sections,
            [Section {
                kind: ResultKind::TpchPower,
                title: "TPC-H power test",
                workloads: vec!["tpch_power".into()]
            }]
        );
        let q1_b = data.cell("B", "tpch_power Q1", 1).unwrap();
        assert_eq!(q1_b.values.len(), 4, "the failed trial is not counted");
        assert_eq!(q1_b.excluded.failed, 1);
        let unit = q1_b.unit.as_ref().unwrap();
        assert_eq!((unit.unit.as_str(), unit.higher_is_better), ("s", false));
        // A wrong answer is never a time: B's Q6 has 3 values (trial 3 wrong, 5 failed), and
        // the wrong answer is not called a failed trial.
        let q6_b = data.cell("B", "tpch_power Q6", 1).unwrap();
        assert_eq!(q6_b.values.len(), 3);
        assert_eq!((q6_b.excluded.failed, q6_b.excluded.without_value), (1, 1));
        // Q1 takes half the time on B: a lower time is an improvement; Power@Size doubles:
        // a higher score is an improvement too.
        let v = |w: &str| data.comparison("B", w, 1).unwrap().comparison.verdict;
        assert_eq!(v("tpch_power Q1"), Verdict::Improvement);
        assert_eq!(v("tpch_power Power@Size"), Verdict::Improvement);
        let d = data
            .comparison("B", "tpch_power Q1", 1)
            .unwrap()
            .comparison
            .delta
            .unwrap();
        assert!((d + 0.5).abs() < 0.01, "{d}");
        // The failed trial is counted once for the run, not once per query; the wrong
        // answer is not a trial left out.
        assert_eq!(data.excluded().failed, 1);
        assert_eq!(data.excluded().total(), 1);
    }

    #[test]
    fn kinds_come_from_results_then_names() {
        assert_eq!(kind_of_name("tpch-power"), Some(ResultKind::TpchPower));
        assert_eq!(kind_of_name("scan_filter"), Some(ResultKind::Micro));
        assert_eq!(kind_of_name("oltp_read_only"), None);
        assert!(rate_or_score("MB/s") && rate_or_score("rows/s"));
        assert!(rate_or_score("Throughput@Size"));
        assert!(!rate_or_score("s") && !rate_or_score("ms/query"));
        assert!(!rate_or_score("cycles/row"));
    }
}
