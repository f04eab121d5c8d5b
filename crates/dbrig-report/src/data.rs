//! What a plan report is built from: a run (or two runs compared) read back from the results
//! database and arranged as configurations × workloads × client counts, with each cell's
//! trials, their summaries and the A/B comparisons against a baseline.
//!
//! Every statistic comes from `dbrig_core::stats`; this module only decides which values go in.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;

use dbrig_core::LatencySummary;
use dbrig_core::stats::{self, CompareOptions, Comparison, Summary, Verdict};
use dbrig_store::{RunId, RunRow, Store, TrialId, TrialRow, TrialStatus};
use serde::Serialize;

use crate::error::ReportError;

/// The throughput figure a report ranks configurations by.
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

    /// Column and axis label.
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "qps" => Ok(Metric::Qps),
            "tps" => Ok(Metric::Tps),
            _ => Err(format!("unknown metric {s:?} (qps or tps)")),
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
    /// For a measured item (a micro-benchmark's key type or query, a TPC-H query): its value
    /// in this trial, in the cell's [`ItemUnit`]. `None` when the trial failed, or the query
    /// errored or answered wrong (never counted as fast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<f64>,
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
            item: None,
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
}

impl Excluded {
    pub fn total(&self) -> usize {
        self.failed + self.interrupted + self.invalid
    }

    /// `1 failed, 2 invalid`; empty when nothing was left out.
    pub fn describe(&self) -> String {
        [
            (self.failed, "failed"),
            (self.interrupted, "interrupted"),
            (self.invalid, "invalid"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// One configuration × workload × client count, with all its trials.
#[derive(Debug, Clone, Serialize)]
pub struct CellData {
    pub configuration: String,
    pub workload: String,
    pub clients: u32,
    /// Store cell keys merged into this cell (one, unless a plan changed under `--resume`).
    pub cell_keys: Vec<String>,
    /// Every attempt, in trial order, whatever its status.
    pub trials: Vec<TrialData>,
    /// The report metric of the counted trials, in trial order.
    pub values: Vec<f64>,
    /// Summary of `values`.
    pub summary: Option<Summary>,
    /// Summaries of the counted trials' latency percentiles (ms).
    pub p50_ms: Option<Summary>,
    pub p95_ms: Option<Summary>,
    pub p99_ms: Option<Summary>,
    pub excluded: Excluded,
    /// Set for one measured item of a micro-benchmark or TPC-H trial (`workload` is then
    /// `"{benchmark} {item}"`); `None` for an OLTP cell ranked by the report metric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<ItemUnit>,
}

/// What a measured item's values are: the benchmark it belongs to, its unit, and which way
/// is better (seconds: lower; rows per second, Power@Size: higher).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ItemUnit {
    /// The stored workload (`memory_load`, `tpch_power`): item cells of one benchmark share
    /// one table.
    pub benchmark: String,
    /// The item's own name (`INT`, `Q1`, `Power@Size`).
    pub item: String,
    pub unit: String,
    pub higher_is_better: bool,
}

impl ItemUnit {
    fn new(benchmark: &str, item: &str, unit: &str) -> Self {
        ItemUnit {
            benchmark: benchmark.to_owned(),
            item: item.to_owned(),
            unit: unit.to_owned(),
            // Rates and scores grow with speed; times shrink.
            higher_is_better: unit.contains("/s") || unit.ends_with("@Size"),
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

impl CellData {
    fn new(configuration: String, workload: String, clients: u32) -> Self {
        CellData {
            configuration,
            workload,
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
        }
    }

    fn summarize(&mut self, metric: Metric) {
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
        let mut ex = Excluded::default();
        for t in &self.trials {
            match t.status {
                TrialStatus::Failed => ex.failed += 1,
                TrialStatus::Interrupted => ex.interrupted += 1,
                TrialStatus::Invalid => ex.invalid += 1,
                TrialStatus::Done if !t.is_counted() => ex.failed += 1,
                TrialStatus::Done => {}
            }
        }
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

/// Server versions seen in one configuration's trials.
#[derive(Debug, Clone, Serialize)]
pub struct ServerVersions {
    pub configuration: String,
    pub versions: Vec<String>,
}

/// One configuration compared with the baseline in one workload × client count.
#[derive(Debug, Clone, Serialize)]
pub struct ComparisonRow {
    pub workload: String,
    pub clients: u32,
    pub configuration: String,
    pub baseline: String,
    #[serde(flatten)]
    pub comparison: Comparison,
    /// Either side is unstable (stddev ≥ 10 % of the mean): the seeds' `*`.
    pub unstable: bool,
}

/// Everything a plan report shows.
#[derive(Debug, Clone, Serialize)]
pub struct ReportData {
    pub title: String,
    /// The run, or the two runs of a comparison.
    pub runs: Vec<RunInfo>,
    pub metric: Metric,
    pub baseline: String,
    /// In plan order (first seen).
    pub configurations: Vec<String>,
    /// In plan order (first seen).
    pub workloads: Vec<String>,
    /// Ascending.
    pub clients: Vec<u32>,
    /// Ordered by workload, client count, configuration.
    pub cells: Vec<CellData>,
    pub server_versions: Vec<ServerVersions>,
    /// Every non-baseline configuration against the baseline, per workload × client count,
    /// Holm-adjusted as one family.
    pub comparisons: Vec<ComparisonRow>,
    pub compare_options: CompareOptions,
    #[serde(skip)]
    index: HashMap<(String, String, u32), usize>,
}

impl ReportData {
    /// The report of one run, with the first configuration as baseline and QPS as metric.
    pub fn load(store: &Store, run: RunId) -> Result<ReportData, ReportError> {
        let info = RunInfo::from(store.run(run)?);
        let title = format!("{} (run {})", info.name, info.id);
        let mut cells = Vec::new();
        read_cells(store, run, |c| c.to_owned(), &mut cells)?;
        if cells.is_empty() {
            return Err(ReportError::EmptyRun { run });
        }
        Ok(Self::assemble(title, vec![info], cells))
    }

    /// Two runs compared, run A's configuration as baseline. The configurations keep their
    /// names when the two runs' names are disjoint; otherwise each is named after its run
    /// (`run7`, or `run7/NAME` when a run has several), so A and B never merge.
    pub fn load_compare(store: &Store, a: RunId, b: RunId) -> Result<ReportData, ReportError> {
        if a == b {
            return Err(ReportError::SameRun { run: a });
        }
        let infos = [RunInfo::from(store.run(a)?), RunInfo::from(store.run(b)?)];
        let configs = |run: RunId| -> Result<BTreeSet<String>, ReportError> {
            Ok(store
                .cells(run)?
                .into_iter()
                .map(|c| c.configuration)
                .collect())
        };
        let (ca, cb) = (configs(a)?, configs(b)?);
        let distinct = ca.is_disjoint(&cb);
        let mut cells = Vec::new();
        for (run, set) in [(a, &ca), (b, &cb)] {
            let single = set.len() == 1;
            read_cells(
                store,
                run,
                |c| {
                    if distinct {
                        c.to_owned()
                    } else if single {
                        format!("run{run}")
                    } else {
                        format!("run{run}/{c}")
                    }
                },
                &mut cells,
            )?;
        }
        if cells.is_empty() {
            return Err(ReportError::EmptyRun { run: a });
        }
        let title = format!(
            "{} (run {}) vs {} (run {})",
            infos[0].name, infos[0].id, infos[1].name, infos[1].id
        );
        Ok(Self::assemble(title, infos.into(), cells))
    }

    fn assemble(title: String, runs: Vec<RunInfo>, raw: Vec<RawCell>) -> Self {
        let mut configurations: Vec<String> = Vec::new();
        let mut workloads: Vec<String> = Vec::new();
        let mut clients = BTreeSet::new();
        let mut merged: HashMap<(String, String, u32), CellData> = HashMap::new();
        for (configuration, workload, n, key, trials, unit) in raw {
            if !configurations.contains(&configuration) {
                configurations.push(configuration.clone());
            }
            if !workloads.contains(&workload) {
                workloads.push(workload.clone());
            }
            clients.insert(n);
            let cell = merged
                .entry((configuration.clone(), workload.clone(), n))
                .or_insert_with(|| CellData::new(configuration, workload, n));
            cell.unit = cell.unit.take().or(unit);
            cell.cell_keys.push(key);
            cell.trials.extend(trials);
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
                versions: cells
                    .iter()
                    .filter(|c| &c.configuration == conf)
                    .flat_map(|c| c.trials.iter().filter_map(|t| t.server_version.clone()))
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
            cells,
            server_versions,
            comparisons: Vec::new(),
            compare_options: CompareOptions::new(true),
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

    fn refresh(&mut self) {
        for c in &mut self.cells {
            c.summarize(self.metric);
        }
        let mut keys = Vec::new();
        let mut pairs = Vec::new();
        for w in &self.workloads {
            for &n in &self.clients {
                let Some(base) = self.cell(&self.baseline, w, n) else {
                    continue;
                };
                for conf in self.others() {
                    if let Some(other) = self.cell(conf, w, n) {
                        let unstable = [base, other]
                            .iter()
                            .any(|c| c.summary.as_ref().is_some_and(|s| s.unstable));
                        let lower_is_better =
                            base.unit.as_ref().is_some_and(|u| !u.higher_is_better);
                        keys.push((w.clone(), n, conf.to_owned(), unstable, lower_is_better));
                        pairs.push((base.values.clone(), other.values.clone()));
                    }
                }
            }
        }
        // One family for the whole report: with many cells, some would look significant by
        // chance alone (measurement spec: Holm–Bonferroni across the comparison).
        // Computed as higher-is-better and mirrored for times: the rule is symmetric, so one
        // Holm family still covers throughput and seconds alike.
        let results = stats::compare_all(&pairs, &self.compare_options);
        self.comparisons = keys
            .into_iter()
            .zip(results)
            .map(
                |((workload, clients, configuration, unstable, lower), mut comparison)| {
                    if lower {
                        comparison.verdict = match comparison.verdict {
                            Verdict::Improvement => Verdict::Regression,
                            Verdict::Regression => Verdict::Improvement,
                            v => v,
                        };
                    }
                    ComparisonRow {
                        workload,
                        clients,
                        configuration,
                        baseline: self.baseline.clone(),
                        comparison,
                        unstable,
                    }
                },
            )
            .collect();
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

    /// Trials left out of the figures, over the whole report.
    pub fn excluded(&self) -> Excluded {
        // The item cells of one stored cell share its trials: count those once.
        let mut seen = std::collections::HashSet::new();
        self.cells
            .iter()
            .filter(|c| c.unit.is_none() || seen.insert((&c.configuration, &c.cell_keys)))
            .fold(Excluded::default(), |acc, c| Excluded {
                failed: acc.failed + c.excluded.failed,
                interrupted: acc.interrupted + c.excluded.interrupted,
                invalid: acc.invalid + c.excluded.invalid,
            })
    }

    /// The plan text of the (first) run.
    pub fn plan_text(&self) -> Option<&str> {
        self.runs.iter().find_map(|r| r.plan_text.as_deref())
    }
}

/// Configuration (renamed), workload, clients, cell key, trials, item unit.
type RawCell = (
    String,
    String,
    u32,
    String,
    Vec<TrialData>,
    Option<ItemUnit>,
);

/// The measured items of one stored trial result (`extra.micro` of a micro-benchmark,
/// `extra.tpch_power` of a power test): (item, unit, value). A TPC-H query that failed or
/// answered wrong has no value, so it is never counted as fast.
fn trial_items(extra: Option<&serde_json::Value>) -> Option<Vec<(String, String, Option<f64>)>> {
    let extra = extra?;
    if let Some(items) = extra.get("micro").and_then(|m| m.get("items")?.as_array()) {
        return Some(
            items
                .iter()
                .filter_map(|i| {
                    Some((
                        i.get("name")?.as_str()?.to_owned(),
                        i.get("unit")?.as_str()?.to_owned(),
                        i.get("mean").and_then(serde_json::Value::as_f64),
                    ))
                })
                .collect(),
        );
    }
    if let Some(t) = extra.get("tpch_throughput") {
        return Some(throughput_items(t));
    }
    let power = extra.get("tpch_power")?;
    let mut out = Vec::new();
    let steps = power.get("rf1").into_iter().chain(
        power
            .get("queries")
            .and_then(|q| q.as_array())
            .into_iter()
            .flatten(),
    );
    for q in steps.chain(power.get("rf2")) {
        let Some(name) = q.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let ok = q.get("status").and_then(|s| s.as_str()) == Some("ok");
        let seconds = q
            .get("micros")
            .and_then(serde_json::Value::as_f64)
            .map(|us| us / 1e6);
        let label = if name.starts_with("RF") {
            name.to_owned()
        } else {
            format!("Q{name}")
        };
        out.push((label, "s".to_owned(), seconds.filter(|_| ok)));
    }
    out.push((
        "Power@Size".to_owned(),
        "Power@Size".to_owned(),
        power
            .get("power_at_size")
            .and_then(serde_json::Value::as_f64),
    ));
    Some(out)
}

/// A throughput test's items: each query's mean seconds over the streams (none when a
/// stream's run of it failed or answered wrong), the refresh functions likewise, the
/// measurement interval Ts and Throughput@Size.
fn throughput_items(t: &serde_json::Value) -> Vec<(String, String, Option<f64>)> {
    let mut runs: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    let mut add = |name: String, q: &serde_json::Value| {
        let ok = q.get("status").and_then(|s| s.as_str()) == Some("ok");
        let s = q
            .get("micros")
            .and_then(serde_json::Value::as_f64)
            .map(|us| us / 1e6)
            .filter(|_| ok);
        match runs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(s),
            None => runs.push((name, vec![s])),
        }
    };
    let streams = t.get("query_streams").and_then(|s| s.as_array());
    for q in streams
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("queries")?.as_array())
        .flatten()
    {
        if let Some(name) = q.get("name").and_then(|n| n.as_str()) {
            add(format!("Q{name}"), q);
        }
    }
    let pairs = t
        .get("refresh_stream")
        .and_then(|r| r.get("pairs")?.as_array());
    for p in pairs.into_iter().flatten() {
        for f in ["rf1", "rf2"] {
            if let Some(q) = p.get(f).filter(|q| !q.is_null()) {
                add(f.to_uppercase(), q);
            }
        }
    }
    // Queries in TPC-H number order (streams run them in different orders).
    runs.sort_by_key(|(n, _)| {
        (
            n.strip_prefix('Q')
                .and_then(|d| d.parse::<u32>().ok())
                .unwrap_or(u32::MAX),
            n.clone(),
        )
    });
    let failed = t.get("failure").is_some_and(|f| !f.is_null());
    let mut out: Vec<(String, String, Option<f64>)> = runs
        .into_iter()
        .map(|(name, v)| {
            let mean = v
                .iter()
                .copied()
                .collect::<Option<Vec<f64>>>()
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().sum::<f64>() / v.len() as f64);
            (name, "s".to_owned(), mean)
        })
        .collect();
    out.push((
        "Ts".to_owned(),
        "s".to_owned(),
        t.get("ts_seconds")
            .and_then(serde_json::Value::as_f64)
            .filter(|_| !failed),
    ));
    out.push((
        "Throughput@Size".to_owned(),
        "Throughput@Size".to_owned(),
        t.get("throughput_at_size")
            .and_then(serde_json::Value::as_f64),
    ));
    out
}

fn read_cells(
    store: &Store,
    run: RunId,
    rename: impl Fn(&str) -> String,
    out: &mut Vec<RawCell>,
) -> Result<(), ReportError> {
    let cells = store.cells(run)?;
    let mut read = Vec::with_capacity(cells.len());
    // The items of each benchmark, over all its cells: a configuration whose every trial
    // failed still gets a row per item (showing the failures), not a table of its own.
    let mut items_of: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for cell in cells {
        let rows = store.trials(cell.id)?;
        let per_trial: Vec<_> = rows.iter().map(|t| trial_items(t.extra.as_ref())).collect();
        let pos = match items_of.iter().position(|(w, _)| *w == cell.workload) {
            Some(p) => p,
            None => {
                items_of.push((cell.workload.clone(), Vec::new()));
                items_of.len() - 1
            }
        };
        for (name, unit, _) in per_trial.iter().flatten().flatten() {
            if !items_of[pos].1.iter().any(|(n, _)| n == name) {
                items_of[pos].1.push((name.clone(), unit.clone()));
            }
        }
        read.push((cell, rows, per_trial));
    }
    for (cell, rows, per_trial) in read {
        let all = items_of
            .iter()
            .find(|(w, _)| *w == cell.workload)
            .map(|(_, i)| i.clone())
            .unwrap_or_default();
        // The items this cell measured; an item its engine skipped (SQLite has no sqrt) gets
        // no cell here rather than a failure. A cell whose trials all failed gets every item.
        let own: Vec<(String, String)> = all
            .iter()
            .filter(|(n, _)| {
                per_trial
                    .iter()
                    .flatten()
                    .any(|items| items.iter().any(|(m, _, _)| m == n))
            })
            .cloned()
            .collect();
        let items = if own.is_empty() { all } else { own };
        let trials: Vec<TrialData> = rows.into_iter().map(|t| TrialData::new(run, t)).collect();
        if items.is_empty() {
            out.push((
                rename(&cell.configuration),
                cell.workload,
                cell.clients,
                cell.cell_key,
                trials,
                None,
            ));
            continue;
        }
        for (item, unit) in items {
            let with_values = trials
                .iter()
                .zip(&per_trial)
                .map(|(t, values)| {
                    let mut t = t.clone();
                    t.item = values
                        .iter()
                        .flatten()
                        .find(|(n, _, _)| *n == item)
                        .and_then(|(_, _, v)| *v);
                    t
                })
                .collect();
            out.push((
                rename(&cell.configuration),
                format!("{} {item}", cell.workload),
                cell.clients,
                cell.cell_key.clone(),
                with_values,
                Some(ItemUnit::new(&cell.workload, &item, &unit)),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod item_tests {
    use std::time::{Duration, SystemTime};

    use dbrig_store::{NewCell, NewRun, NewTrial, RunKind};

    use super::*;

    /// A plan run of a TPC-H power test: configuration A, and B twice as fast on Q1 with
    /// 5 trials each; B's trial 3 answered Q6 wrong and its trial 5 failed outright.
    fn tpch_run(store: &mut Store) -> RunId {
        let run = store
            .begin_run(&NewRun {
                kind: RunKind::Plan,
                name: "items",
                started_at: SystemTime::UNIX_EPOCH,
                options: &serde_json::json!({}),
                host: &serde_json::json!({}),
                dbrig_version: "test",
                command_line: &[],
                plan_text: None,
            })
            .unwrap();
        for (conf, speed) in [("A", 1.0), ("B", 2.0)] {
            let cell = store
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
                let extra = serde_json::json!({"tpch_power": {
                    "scale_factor": 0.01,
                    "queries": [
                        {"name": "1", "micros": (1e6 * jitter / speed) as u64, "rows": 4, "status": "ok"},
                        {"name": "6", "micros": 20_000, "rows": 1,
                         "status": if wrong { "wrong" } else { "ok" }},
                    ],
                    "power_at_size": 100.0 * speed * jitter,
                }});
                store
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
                            started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(t.into()),
                            finished_at: SystemTime::UNIX_EPOCH + Duration::from_secs(t.into()),
                            measurements: None,
                            extra: (!failed).then_some(&extra),
                        },
                    )
                    .unwrap();
            }
        }
        run
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
        let q1_b = data.cell("B", "tpch_power Q1", 1).unwrap();
        assert_eq!(q1_b.values.len(), 4, "the failed trial is not counted");
        assert_eq!(q1_b.excluded.failed, 1);
        let unit = q1_b.unit.as_ref().unwrap();
        assert_eq!((unit.unit.as_str(), unit.higher_is_better), ("s", false));
        // A wrong answer is never a time: B's Q6 has 3 values (trial 3 wrong, 5 failed).
        assert_eq!(data.cell("B", "tpch_power Q6", 1).unwrap().values.len(), 3);
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
        // The failed trial is counted once for the run, not once per query.
        assert_eq!(data.excluded().failed, 1);
        // One table for the benchmark, a row per query.
        let text = crate::report_text(&data);
        assert!(text.contains("tpch_power: per item"), "{text}");
        let q1 = text.lines().find(|l| l.starts_with("Q1 ")).unwrap();
        assert!(q1.contains(" s ") && q1.contains("50."), "{q1}");
    }
}
