//! TPC-H reports.
//!
//! The power test in the DBT-3 results pages' shape: per configuration × query the mean / min
//! / max seconds, each with its ratio to the baseline configuration beside it
//! (`current / baseline`), timeouts as `>T`, errors and wrong answers named as such (never a
//! fast time), the server version of each configuration, Power@Size; and the launcher's bar
//! chart, in which timed-out bars run off the top of an axis cut at the longest completed
//! time + 20 %. The throughput test per query over the streams, Ts and Throughput@Size; and
//! QphH@Size for each configuration that ran both tests.
//!
//! Input is the typed [`PowerReport`] / [`ThroughputReport`] of stored trials, or a power
//! report given directly while a run goes, so the chart can be redrawn after every query. The
//! console output of `dbrig tpch power` / `throughput` is here too ([`power_text`],
//! [`throughput_text`]), so a stored run reprints as its command printed it.

use std::fmt::Write;

use dbrig_core::results::tpch::{PowerRef, QueryStatus, StreamReport, qphh_at_size};
use dbrig_core::results::{PowerReport, QueryOutcome, ResultKind, ThroughputReport, TrialResult};
use plotters::prelude::*;
use serde::Serialize;

use dbrig_store::{RunId, Store};

use crate::charts::{CAPTION_PX, TEXT_PX, font, tick_formatter};
use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::{query_order, step_label};
use crate::palette::colour;
use crate::records::os_table;
use crate::table::{Align, Table, TextStyle, seconds_text};

/// How a query ended, worst last (a merge of several trials keeps the worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Ok,
    Timeout,
    Wrong,
    Error,
}

impl From<QueryStatus> for Outcome {
    fn from(s: QueryStatus) -> Self {
        match s {
            QueryStatus::Ok => Outcome::Ok,
            QueryStatus::Timeout => Outcome::Timeout,
            QueryStatus::Wrong => Outcome::Wrong,
            QueryStatus::Error => Outcome::Error,
        }
    }
}

/// One query of one configuration, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryResult {
    pub query: String,
    pub outcome: Outcome,
    /// The reduced time (mean, fastest or fastest plan's mean, by the run's reduction).
    /// JSON keys name the unit, as every dbrig JSON does.
    #[serde(rename = "time_s")]
    pub seconds: f64,
    #[serde(rename = "mean_s")]
    pub mean: Option<f64>,
    #[serde(rename = "min_s")]
    pub min: Option<f64>,
    #[serde(rename = "max_s")]
    pub max: Option<f64>,
    /// A run used for the figures timed out: the maximum is at least the timeout.
    pub max_timed_out: bool,
    #[serde(rename = "timeout_s")]
    pub timeout: Option<f64>,
    pub error: Option<String>,
    /// Measured runs behind the figures (over all trials).
    pub runs: usize,
}

/// One configuration's power test(s).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    pub name: String,
    pub server_version: String,
    /// The scale factors its power tests ran at (one, unless a plan changed under
    /// `--resume`), in the order first seen.
    pub scale_factors: Vec<f64>,
    pub power_at_size: Option<f64>,
    pub queries: Vec<QueryResult>,
}

/// The order of a TPC-H table's rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryOrder {
    /// Q1 … Q22 (then RF1, RF2), as `dbrig tpch throughput` prints them and the
    /// specification numbers them.
    #[default]
    Number,
    /// The order the power test ran them (RF1, the stream's permutation, RF2).
    Stream,
}

/// The report: configurations in plan order, one of them the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TpchReport {
    pub title: String,
    pub baseline: String,
    pub configurations: Vec<Configuration>,
    /// Row order of [`tpch_table`].
    pub order: QueryOrder,
}

fn secs(time_us: u64) -> f64 {
    time_us as f64 / 1e6
}

impl QueryResult {
    fn from_outcome(q: &QueryOutcome) -> Self {
        let s = q.seconds();
        let outcome = Outcome::from(q.status);
        match &q.detail {
            Some(d) => QueryResult {
                query: q.name.clone(),
                outcome,
                seconds: s,
                mean: d.mean_us.map(secs),
                min: d.min_us.map(secs),
                max: d.max_us.map(secs),
                max_timed_out: d.max_timed_out,
                timeout: d.timeout_s,
                error: q.error.clone(),
                runs: d.runs.iter().filter(|r| !r.warmup && !r.skipped).count(),
            },
            // A plain run (RF1/RF2, or no controls): one measurement.
            None => {
                let ok = outcome == Outcome::Ok;
                let timeout = outcome == Outcome::Timeout;
                QueryResult {
                    query: q.name.clone(),
                    outcome,
                    seconds: s,
                    mean: ok.then_some(s),
                    min: ok.then_some(s),
                    max: ok.then_some(s),
                    max_timed_out: timeout,
                    timeout: timeout.then_some(s),
                    error: q.error.clone(),
                    runs: 1,
                }
            }
        }
    }

    /// Merge the same query of several trials: the mean of the trials' reduced times, the
    /// extremes of their extremes, and the worst outcome.
    fn merge(results: Vec<QueryResult>) -> QueryResult {
        let n = results.len() as f64;
        let fold = |f: fn(&QueryResult) -> Option<f64>, pick: fn(f64, f64) -> f64| {
            results.iter().filter_map(f).reduce(pick)
        };
        let worst = results
            .iter()
            .max_by_key(|r| r.outcome)
            .expect("merge of at least one result");
        QueryResult {
            query: worst.query.clone(),
            outcome: worst.outcome,
            seconds: results.iter().map(|r| r.seconds).sum::<f64>() / n,
            mean: (results.iter().all(|r| r.mean.is_some()))
                .then(|| results.iter().filter_map(|r| r.mean).sum::<f64>() / n),
            min: fold(|r| r.min, f64::min),
            max: fold(|r| r.max, f64::max),
            max_timed_out: results.iter().any(|r| r.max_timed_out),
            timeout: fold(|r| r.timeout, f64::max),
            error: worst.error.clone(),
            runs: results.iter().map(|r| r.runs).sum(),
        }
    }
}

/// The mean of values that are all present; `None` when any is missing or there are none
/// (a metric is never computed from some trials only).
fn mean_of_all(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().collect::<Option<_>>()?;
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

impl Configuration {
    /// One configuration from one or more power reports (its trials', or the one a run is
    /// filling in while it goes).
    pub fn from_power_reports<'a>(
        name: &str,
        reports: impl IntoIterator<Item = &'a PowerReport>,
    ) -> Configuration {
        let mut order: Vec<String> = Vec::new();
        let mut by_query: Vec<Vec<QueryResult>> = Vec::new();
        let mut powers = Vec::new();
        let mut version = String::new();
        let mut scale_factors: Vec<f64> = Vec::new();
        for r in reports {
            if version.is_empty() {
                version = r.server_version.clone();
            }
            if !scale_factors.contains(&r.scale_factor) {
                scale_factors.push(r.scale_factor);
            }
            powers.push(r.power_at_size);
            for q in r.steps() {
                let q = QueryResult::from_outcome(q);
                match order.iter().position(|n| *n == q.query) {
                    Some(i) => by_query[i].push(q),
                    None => {
                        order.push(q.query.clone());
                        by_query.push(vec![q]);
                    }
                }
            }
        }
        Configuration {
            name: name.to_owned(),
            server_version: version,
            scale_factors,
            power_at_size: mean_of_all(powers),
            queries: by_query.into_iter().map(QueryResult::merge).collect(),
        }
    }

    fn query(&self, name: &str) -> Option<&QueryResult> {
        self.queries.iter().find(|q| q.query == name)
    }
}

/// The power reports of a stored cell's finished trials.
fn power_reports<'a>(results: impl Iterator<Item = &'a TrialResult>) -> Vec<&'a PowerReport> {
    results
        .filter_map(|r| match r {
            TrialResult::TpchPower(p) => Some(p),
            _ => None,
        })
        .collect()
}

impl TpchReport {
    /// Configurations of named power reports; the baseline is `baseline` when it names one of
    /// them, else the first. `None` without any report.
    fn assemble(
        title: String,
        baseline: Option<&str>,
        named: Vec<(String, Vec<&PowerReport>)>,
    ) -> Option<TpchReport> {
        let configurations: Vec<Configuration> = named
            .into_iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(n, r)| Configuration::from_power_reports(&n, r))
            .collect();
        let baseline = baseline
            .filter(|b| configurations.iter().any(|c| c.name == *b))
            .or(configurations.first().map(|c| c.name.as_str()))?
            .to_owned();
        Some(TpchReport {
            title,
            baseline,
            configurations,
            order: QueryOrder::default(),
        })
    }

    /// The power test of one stored workload of a report, its finished trials merged per
    /// configuration, against the report's baseline.
    pub fn from_data(data: &ReportData, workload: &str) -> Option<TpchReport> {
        let named = data
            .stored_cells(workload)
            .into_iter()
            .filter(|c| c.kind == ResultKind::TpchPower)
            .map(|c| (c.configuration.clone(), power_reports(c.done_results())))
            .fold(
                Vec::<(String, Vec<&PowerReport>)>::new(),
                |mut acc, (n, r)| {
                    match acc.iter_mut().find(|(m, _)| *m == n) {
                        Some((_, v)) => v.extend(r),
                        None => acc.push((n, r)),
                    }
                    acc
                },
            );
        Self::assemble(
            format!("{workload}: TPC-H power test, seconds per query"),
            Some(&data.baseline),
            named,
        )
    }

    /// `dbrig tpch report RUN…`: the power tests of the given runs (default: the latest run),
    /// each of which must exist, at least one of them holding a finished power test.
    pub fn of_runs(
        store: &Store,
        runs: &[i64],
        baseline: Option<&str>,
    ) -> Result<TpchReport, ReportError> {
        let path = || store.path().to_owned();
        let runs: Vec<RunId> = match runs {
            [] => vec![
                store
                    .latest_run_id()?
                    .ok_or_else(|| ReportError::NoRuns { path: path() })?,
            ],
            given => given.iter().map(|&r| RunId(r)).collect(),
        };
        for &run in &runs {
            store
                .run(run)
                .map_err(|_| ReportError::NoSuchRun { run, path: path() })?;
        }
        TpchReport::load(store, &runs, baseline)?.ok_or_else(|| ReportError::NoFinishedPower {
            runs: runs
                .iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The TPC-H report of runs (`dbrig tpch report`): every power-test cell, its finished
    /// trials merged per configuration. `None` when the runs hold no power test. The baseline
    /// is `baseline` when it names a configuration here, else the first. Configurations keep
    /// their names when those are distinct over the runs; otherwise a name is followed by its
    /// run, and single runs (all named `default`) are named by their server version and run:
    /// `10.11.19-MariaDB (run 8)`. `baseline` may be a name shown, `NAME@RUN`, or the id of a
    /// run of one configuration.
    pub fn load(
        store: &Store,
        runs: &[RunId],
        baseline: Option<&str>,
    ) -> Result<Option<TpchReport>, ReportError> {
        let given = baseline;
        // (run, configuration, results) in run and plan order.
        let mut cells: Vec<(RunId, String, Vec<TrialResult>)> = Vec::new();
        for &run in runs {
            for cell in store.cells(run)? {
                let results = store
                    .trials(cell.id)?
                    .into_iter()
                    .filter(|t| t.status == dbrig_store::TrialStatus::Done)
                    .filter_map(|t| t.result)
                    .filter(|r| r.kind() == ResultKind::TpchPower);
                match cells
                    .iter_mut()
                    .find(|(r, n, _)| *r == run && *n == cell.configuration)
                {
                    Some((_, _, v)) => v.extend(results),
                    None => cells.push((run, cell.configuration.clone(), results.collect())),
                }
            }
        }
        cells.retain(|(_, _, r)| !r.is_empty());
        let ambiguous = |name: &str| {
            cells
                .iter()
                .filter(|(_, n, _)| n == name)
                .map(|(r, _, _)| r)
                .collect::<std::collections::HashSet<_>>()
                .len()
                > 1
        };
        // A baseline may also name a run's configuration as `NAME@RUN`, or a run of one
        // configuration by its id.
        let baseline = baseline.map(|b| {
            cells
                .iter()
                .find(|(run, name, _)| {
                    b == format!("{name}@{}", run.0)
                        || (b == run.0.to_string()
                            && cells.iter().filter(|(r, _, _)| r == run).count() == 1)
                })
                .map(|(run, name, _)| (*run, name.clone()))
        });
        let mut baseline_label = None;
        let stored: Vec<(String, &Vec<TrialResult>)> = cells
            .iter()
            .map(|(run, name, results)| {
                let label = if !ambiguous(name) {
                    name.clone()
                } else if name == "default" {
                    let version = power_reports(results.iter())
                        .first()
                        .map(|p| p.server_version.clone())
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| "default".to_owned());
                    format!("{version} (run {})", run.0)
                } else {
                    format!("{name} (run {})", run.0)
                };
                if let Some(Some((r, n))) = &baseline
                    && r == run
                    && n == name
                {
                    baseline_label = Some(label.clone());
                }
                (label, results)
            })
            .collect();
        let title = format!(
            "TPC-H power test, run{} {}",
            if runs.len() > 1 { "s" } else { "" },
            runs.iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let named = stored
            .iter()
            .map(|(n, r)| (n.clone(), power_reports(r.iter())))
            .collect();
        let baseline = baseline_label.as_deref().or(given);
        if let Some(b) = baseline
            && !stored.iter().any(|(n, _)| n == b)
        {
            return Err(ReportError::NoSuchConfiguration {
                name: b.to_owned(),
                known: stored
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(Self::assemble(title, baseline, named))
    }

    fn baseline(&self) -> &Configuration {
        self.configurations
            .iter()
            .find(|c| c.name == self.baseline)
            .unwrap_or(&self.configurations[0])
    }

    /// Query names in the report's order: by number (refresh functions last) or in
    /// first-seen stream order over all configurations.
    fn query_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in &self.configurations {
            for q in &c.queries {
                if !names.contains(&q.query) {
                    names.push(q.query.clone());
                }
            }
        }
        if self.order == QueryOrder::Number {
            names.sort_by_key(|n| (n.starts_with("RF"), query_order(n)));
        }
        names
    }

    /// Whether any query of any configuration has more than one measured run: only then
    /// are mean, min and max worth three columns.
    fn has_repeats(&self) -> bool {
        self.configurations
            .iter()
            .flat_map(|c| &c.queries)
            .any(|q| q.runs > 1)
    }

    /// Whether any configuration timed anything: a chart of nothing is left out.
    pub fn has_queries(&self) -> bool {
        self.configurations.iter().any(|c| !c.queries.is_empty())
    }
}

/// One power test while it runs, as the report of one configuration.
fn live_report(report: &PowerReport) -> TpchReport {
    TpchReport {
        title: "TPC-H power test".into(),
        baseline: "default".into(),
        configurations: vec![Configuration::from_power_reports("default", [report])],
        order: QueryOrder::Stream,
    }
}

/// A stored power test's Power@Size and scale factor (`dbrig tpch throughput --power-run`),
/// read from its finished trial's typed result.
pub fn stored_power(store: &Store, id: i64) -> Result<PowerRef, ReportError> {
    let run = RunId(id);
    store.run(run).map_err(|_| ReportError::NoSuchRun {
        run,
        path: store.path().to_owned(),
    })?;
    let report = store
        .cells(run)?
        .into_iter()
        .flat_map(|c| store.trials(c.id).unwrap_or_default())
        .filter(|t| t.status == dbrig_store::TrialStatus::Done)
        .find_map(|t| match t.result {
            Some(TrialResult::TpchPower(p)) => Some(p),
            _ => None,
        })
        .ok_or(ReportError::NoPowerTest { run })?;
    Ok(PowerRef {
        run: id,
        power_at_size: report
            .power_at_size
            .ok_or(ReportError::NoPowerAtSize { run })?,
        scale_factor: report.scale_factor,
    })
}

/// The bar chart of one power test while it runs (redrawn after every query).
pub fn live_power_chart(report: &PowerReport) -> Result<String, ReportError> {
    tpch_chart(&live_report(report))
}

/// The table of one power test while it runs (the HTML page's live section).
pub fn live_power_table(report: &PowerReport) -> Table {
    tpch_table(&live_report(report))
}

/// `1.234` seconds; `>600` for a timeout; `error` / `wrong`; `-` when absent.
fn value_text(q: &QueryResult, v: Option<f64>, is_max: bool) -> String {
    match q.outcome {
        Outcome::Error => return "error".into(),
        Outcome::Wrong => return "wrong".into(),
        _ => {}
    }
    if q.outcome == Outcome::Timeout || (is_max && q.max_timed_out) {
        return format!(">{}", seconds_text(q.timeout.unwrap_or(q.seconds)));
    }
    v.map(seconds_text).unwrap_or_else(|| "-".into())
}

/// The lower bound a `>T` value stands for, or the value; `None` for errors / wrong answers.
fn bound(q: &QueryResult, v: Option<f64>, is_max: bool) -> Option<(f64, bool)> {
    match q.outcome {
        Outcome::Error | Outcome::Wrong => None,
        Outcome::Timeout => Some((q.timeout.unwrap_or(q.seconds), true)),
        Outcome::Ok if is_max && q.max_timed_out => Some((q.timeout.unwrap_or(q.seconds), true)),
        Outcome::Ok => v.map(|v| (v, false)),
    }
}

/// `current / baseline` beside a value: `1.05`, `>2.40` when the current value is only a
/// lower bound, `<0.50` when the baseline's is, empty when either is missing or both bounds.
fn ratio_text(cur: Option<(f64, bool)>, base: Option<(f64, bool)>) -> String {
    match (cur, base) {
        (Some((c, false)), Some((b, false))) if b > 0.0 => format!("{:.2}", c / b),
        (Some((c, true)), Some((b, false))) if b > 0.0 => format!(">{:.2}", c / b),
        (Some((c, false)), Some((b, true))) if b > 0.0 => format!("<{:.2}", c / b),
        _ => String::new(),
    }
}

/// The table: one row per query (RF1/RF2 included), per configuration mean / min / max, each
/// non-baseline value followed by its ratio to the baseline's; then Power@Size and the
/// server versions.
pub fn tpch_table(report: &TpchReport) -> Table {
    let base = report.baseline();
    type Pick = fn(&QueryResult) -> Option<f64>;
    // (column word, value, whether a timed-out run makes it a lower bound)
    let picks: Vec<(&str, Pick, bool)> = if report.has_repeats() {
        vec![
            ("mean", |q| q.mean, false),
            ("min", |q| q.min, false),
            ("max", |q| q.max, true),
        ]
    } else {
        // One run per query: its time, once.
        vec![("", |q| q.mean, true)]
    };
    let mut header = vec!["query".to_owned()];
    let mut align = vec![Align::Left];
    for c in &report.configurations {
        for (what, _, _) in &picks {
            header.push(if what.is_empty() {
                format!("{} s", c.name)
            } else {
                format!("{} {what} s", c.name)
            });
            align.push(Align::Right);
            if c.name != base.name {
                header.push("ratio".into());
                align.push(Align::Right);
            }
        }
    }
    let mut rows = Vec::new();
    for name in report.query_names() {
        let mut row = vec![step_label(&name)];
        let b = base.query(&name);
        for c in &report.configurations {
            let q = c.query(&name);
            for &(_, pick, is_max) in &picks {
                row.push(match q {
                    Some(q) => value_text(q, pick(q), is_max),
                    None => "-".into(),
                });
                if c.name != base.name {
                    let cur = q.and_then(|q| bound(q, pick(q), is_max));
                    let bb = b.and_then(|b| bound(b, pick(b), is_max));
                    row.push(ratio_text(cur, bb));
                }
            }
        }
        rows.push(row);
    }
    let mut power = vec!["Power@Size".to_owned()];
    for c in &report.configurations {
        power.push(c.power_at_size.map_or("-".into(), |p| format!("{p:.2}")));
        if c.name != base.name {
            power.push(match (c.power_at_size, base.power_at_size) {
                (Some(p), Some(b)) if b > 0.0 => format!("{:.2}", p / b),
                _ => String::new(),
            });
        }
        let extra = if c.name != base.name { 2 } else { 1 } * (picks.len() - 1);
        power.extend(std::iter::repeat_n(String::new(), extra));
    }
    rows.push(power);
    let mut notes = vec![format!(
        "ratio = configuration / baseline {} (below 1: faster; Power@Size: above 1 is better); >T: timed out after T s",
        base.name
    )];
    if report
        .configurations
        .iter()
        .any(|c| c.power_at_size.is_none())
    {
        notes.push(
            "Power@Size -: not computed, as a query or refresh function failed (TPC-H counts no partial test)"
                .to_owned(),
        );
    }
    for c in &report.configurations {
        // What the seconds are of: a query at SF 1 is not one at SF 10.
        let sf = c
            .scale_factors
            .iter()
            .map(|f| format!("SF {f}"))
            .collect::<Vec<_>>()
            .join(", ");
        notes.push(format!("{}: {sf}, {}", c.name, c.server_version));
        for q in &c.queries {
            if let (Outcome::Error | Outcome::Wrong, Some(e)) = (q.outcome, &q.error) {
                let first = e.lines().next().unwrap_or("");
                notes.push(format!("{} {}: {first}", c.name, step_label(&q.query)));
            }
        }
    }
    Table {
        title: report.title.clone(),
        header,
        align,
        rows,
        notes,
    }
}

/// The launcher's chart: bars of the reduced seconds per query, one colour per configuration.
/// The y axis ends at the longest completed time + 20 %; a timed-out query's bar runs to the
/// top edge (cut off, marked `>T`), an error or wrong answer gets no bar, only a mark.
pub fn tpch_chart(report: &TpchReport) -> Result<String, ReportError> {
    let name = "tpch power".to_owned();
    let err = |e: DrawingAreaErrorKind<_>| ReportError::Chart {
        chart: name.clone(),
        detail: e.to_string(),
    };
    let queries = report.query_names();
    let k = report.configurations.len().max(1);
    let longest = report
        .configurations
        .iter()
        .flat_map(|c| &c.queries)
        .filter(|q| q.outcome == Outcome::Ok)
        .map(|q| q.seconds)
        .fold(0.0, f64::max);
    let top = if longest > 0.0 { longest * 1.2 } else { 1.0 };
    let width = (120 + 34 * queries.len() as u32 * (k as u32).min(4)).clamp(640, 1400);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, 400)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "TPC-H power test: seconds per query (lower is better)",
                font(CAPTION_PX),
            )
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(76)
            .build_cartesian_2d(-0.5..(queries.len() as f64 - 0.5), 0.0..top)
            .map_err(err)?;
        let labels: Vec<String> = queries.iter().map(|q| step_label(q)).collect();
        // Ten ticks: the axis's top (longest completed + 20 %) is one of them.
        const TICKS: usize = 10;
        chart
            .configure_mesh()
            .label_style(font(TEXT_PX))
            .axis_desc_style(font(TEXT_PX))
            .y_labels(TICKS)
            // Only the ticks' own lines: plotters' fine grid in between reads as noise.
            .light_line_style(TRANSPARENT)
            .y_label_formatter(&tick_formatter(0.0, top, TICKS))
            .x_labels(queries.len().max(1))
            .x_label_formatter(&|x| {
                if x.fract().abs() > 1e-9 || *x < 0.0 {
                    return String::new();
                }
                labels.get(x.round() as usize).cloned().unwrap_or_default()
            })
            .disable_x_mesh()
            .y_desc("seconds (axis: longest completed + 20 %)")
            .x_desc("query")
            .draw()
            .map_err(err)?;
        let slot = 0.8 / k as f64;
        for (i, c) in report.configurations.iter().enumerate() {
            let col = colour(i);
            let mut bars = Vec::new();
            let mut marks = Vec::new();
            for (x, qn) in queries.iter().enumerate() {
                let Some(q) = c.query(qn) else { continue };
                let x0 = x as f64 - 0.4 + slot * i as f64;
                let x1 = x0 + slot * 0.9;
                match q.outcome {
                    Outcome::Ok => bars.push(Rectangle::new(
                        [(x0, 0.0), (x1, q.seconds.min(top))],
                        col.filled(),
                    )),
                    Outcome::Timeout => {
                        // Drawn past the top: the plot area clips it, so it reads as cut off.
                        bars.push(Rectangle::new(
                            [(x0, 0.0), (x1, top * 1.5)],
                            col.mix(0.5).filled(),
                        ));
                        marks.push(((x0 + x1) / 2.0, top * 0.97, ">T".to_owned()));
                    }
                    Outcome::Error => marks.push(((x0 + x1) / 2.0, top * 0.03, "E".to_owned())),
                    Outcome::Wrong => marks.push(((x0 + x1) / 2.0, top * 0.03, "W".to_owned())),
                }
            }
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(c.name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled()));
            chart
                .draw_series(marks.into_iter().map(|(x, y, t)| {
                    Text::new(
                        t,
                        (x, y),
                        font(TEXT_PX).into_font().color(&BLACK).pos(
                            plotters::style::text_anchor::Pos::new(
                                plotters::style::text_anchor::HPos::Center,
                                plotters::style::text_anchor::VPos::Center,
                            ),
                        ),
                    )
                }))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(font(TEXT_PX))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

// ---- the commands' console output ------------------------------------------------------------

/// Seconds of a time in microseconds, by the one rule every report prints seconds with.
fn micros_text(m: u64) -> String {
    seconds_text(secs(m))
}

/// An error in a table cell: its first line, at most 60 characters (a timed-out statement's
/// error carries the whole query; the notes under the table have the first line whole).
fn short_error(e: &str) -> String {
    let first = e.lines().next().unwrap_or("").trim();
    if first.chars().count() > 60 {
        format!("{}…", first.chars().take(59).collect::<String>())
    } else {
        first.to_owned()
    }
}

/// What `dbrig tpch power` prints when it is done: per step its reduced seconds, the extremes
/// of the runs used, runs measured (+ warm-ups), distinct plans seen, rows and status; then
/// Power@Size.
pub fn power_text(report: &PowerReport, target: &str) -> String {
    let rows = report
        .steps()
        .map(|o| {
            // A timeout says so, its seconds say after how long; an error's first line.
            let status = match &o.error {
                Some(e) if !matches!(o.status, QueryStatus::Ok | QueryStatus::Timeout) => {
                    format!("{}: {}", o.status_text(), short_error(e))
                }
                _ => o.status_text().to_owned(),
            };
            let seconds = match o.status {
                QueryStatus::Timeout => format!(">{}", micros_text(o.time_us)),
                _ => micros_text(o.time_us),
            };
            let (min, max, runs, plans) = match &o.detail {
                Some(d) => {
                    let f = |m: Option<u64>| m.map_or("-".into(), micros_text);
                    let max = match (d.max_timed_out, d.timeout_s) {
                        (true, Some(t)) => format!(">{t}"),
                        _ => f(d.max_us),
                    };
                    let warm = d.runs.iter().filter(|r| r.warmup).count();
                    let skipped = d.runs.iter().filter(|r| r.skipped).count();
                    let runs = d.runs.len() - warm - skipped;
                    let runs = if warm > 0 {
                        format!("{runs}+{warm}w")
                    } else {
                        runs.to_string()
                    };
                    (f(d.min_us), max, runs, d.plans.len().to_string())
                }
                None => ("-".into(), "-".into(), "1".into(), "-".into()),
            };
            vec![
                o.name.clone(),
                seconds,
                min,
                max,
                runs,
                plans,
                o.rows.to_string(),
                status,
            ]
        })
        .collect();
    let mut align = vec![Align::Left];
    align.extend([Align::Right; 6]);
    align.push(Align::Left);
    let table = Table {
        title: format!(
            "TPC-H power test, SF {} on {target} ({})",
            report.scale_factor, report.server_version
        ),
        header: [
            "query", "seconds", "min", "max", "runs", "plans", "rows", "status",
        ]
        .map(str::to_owned)
        .to_vec(),
        align,
        rows,
        notes: std::iter::once(match report.power_at_size {
            Some(p) => format!("Power@Size = {p:.2}"),
            None => "Power@Size: not computed (a query or refresh function failed)".to_owned(),
        })
        .chain(
            report
                .steps()
                .filter(|o| o.status != QueryStatus::Ok)
                .filter_map(|o| {
                    let first = o.error.as_deref()?.lines().next()?.trim();
                    // Even a first line can hold a whole query: 300 characters are enough.
                    let first: String = first.chars().take(300).collect();
                    Some(format!(
                        "{} {}: {first}",
                        step_label(&o.name),
                        o.status_text()
                    ))
                }),
        )
        .collect(),
    };
    let mut out = table.to_text();
    let steps = report.steps().map(|o| (step_label(&o.name), o));
    if let Some(os) = os_table("OS statistics per query run".to_owned(), steps) {
        out.push('\n');
        out.push_str(&os.to_text());
    }
    out
}

/// A step's seconds as the seeds show them: `>T` for a timeout, `err` for an error, a `!`
/// after a wrong answer's time.
pub fn cell_text(o: &QueryOutcome) -> String {
    match o.status {
        QueryStatus::Timeout => format!(">{:.3}", o.seconds()),
        QueryStatus::Error => "err".into(),
        QueryStatus::Wrong => format!("{:.3}!", o.seconds()),
        QueryStatus::Ok => format!("{:.3}", o.seconds()),
    }
}

/// What `dbrig tpch throughput` prints when it is done: each stream's time and query
/// outcomes, the refresh stream, query × stream seconds, what failed, Ts, Throughput@Size and
/// (with the stored power test it named) QphH@Size.
pub fn throughput_text(report: &ThroughputReport, target: &str) -> String {
    let mut out = format!(
        "TPC-H throughput test, SF {} on {target} ({}), {} streams{}\n",
        report.scale_factor,
        report.server_version,
        report.streams,
        report
            .timeout_s
            .map(|t| format!(", timeout {t} s"))
            .unwrap_or_default()
    );
    let no_title = TextStyle {
        title: false,
        ..TextStyle::default()
    };
    let count = |s: &StreamReport, st: QueryStatus| {
        s.queries
            .iter()
            .filter(|o| o.status == st)
            .count()
            .to_string()
    };
    let mut streams: Vec<Vec<String>> = report
        .query_streams
        .iter()
        .map(|s| {
            vec![
                s.stream.to_string(),
                format!("{:.3}", s.duration_s),
                s.queries.len().to_string(),
                count(s, QueryStatus::Ok),
                count(s, QueryStatus::Error),
                count(s, QueryStatus::Timeout),
                count(s, QueryStatus::Wrong),
            ]
        })
        .collect();
    if let Some(r) = &report.refresh_stream {
        let failed = r
            .pairs
            .iter()
            .flat_map(|p| std::iter::once(&p.rf1).chain(p.rf2.iter()))
            .filter(|o| o.status != QueryStatus::Ok)
            .count();
        streams.push(vec![
            "refresh".to_owned(),
            format!("{:.3}", r.duration_s),
            format!("{} pairs", r.pairs.len()),
            String::new(),
            failed.to_string(),
            String::new(),
            String::new(),
        ]);
    }
    let mut align = vec![Align::Left];
    align.extend([Align::Right; 6]);
    let streams = Table {
        title: String::new(),
        header: [
            "stream", "seconds", "queries", "ok", "error", "timeout", "wrong",
        ]
        .map(str::to_owned)
        .to_vec(),
        align,
        rows: streams,
        notes: Vec::new(),
    };
    out.push_str(&streams.to_text_styled(&no_title));
    out.push('\n');
    // Query × stream seconds, in query-number order (user files by name after).
    let mut names: Vec<&str> = Vec::new();
    for o in report.query_streams.iter().flat_map(|s| &s.queries) {
        if !names.contains(&o.name.as_str()) {
            names.push(&o.name);
        }
    }
    names.sort_by_key(|n| query_order(n));
    let mut rows: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            std::iter::once(format!("Q{name}"))
                .chain(report.query_streams.iter().map(|s| {
                    s.queries
                        .iter()
                        .find(|o| o.name == *name)
                        .map(cell_text)
                        .unwrap_or_else(|| "-".into())
                }))
                .collect()
        })
        .collect();
    for p in report.refresh_stream.iter().flat_map(|r| &r.pairs) {
        rows.push(vec![
            format!("RF set {}", p.refresh_set),
            format!(
                "RF1 {} RF2 {}",
                cell_text(&p.rf1),
                p.rf2.as_ref().map(cell_text).unwrap_or_else(|| "-".into())
            ),
        ]);
    }
    let mut header = vec!["query".to_owned()];
    header.extend(
        report
            .query_streams
            .iter()
            .map(|s| format!("s{}", s.stream)),
    );
    let mut align = vec![Align::Left];
    align.resize(header.len(), Align::Right);
    let per_query = Table {
        title: String::new(),
        header,
        align,
        rows,
        notes: Vec::new(),
    };
    out.push_str(&per_query.to_text_styled(&no_title));
    for s in &report.query_streams {
        for o in s.queries.iter().filter(|o| o.status != QueryStatus::Ok) {
            let _ = writeln!(
                out,
                "  stream {} Q{}: {}: {}",
                s.stream,
                o.name,
                o.status.as_str(),
                o.error.as_deref().unwrap_or("")
            );
        }
    }
    for p in report.refresh_stream.iter().flat_map(|r| &r.pairs) {
        for o in std::iter::once(&p.rf1)
            .chain(p.rf2.iter())
            .filter(|o| o.status != QueryStatus::Ok)
        {
            let _ = writeln!(
                out,
                "  refresh set {} {}: {}: {}",
                p.refresh_set,
                o.name,
                o.status.as_str(),
                o.error.as_deref().unwrap_or("")
            );
        }
    }
    let steps = report
        .query_streams
        .iter()
        .flat_map(|s| {
            s.queries
                .iter()
                .map(move |o| (format!("s{} Q{}", s.stream, o.name), o))
        })
        .chain(
            report
                .refresh_stream
                .iter()
                .flat_map(|r| &r.pairs)
                .flat_map(|p| {
                    std::iter::once(&p.rf1)
                        .chain(p.rf2.iter())
                        .map(move |o| (format!("set {} {}", p.refresh_set, o.name), o))
                }),
        );
    if let Some(os) = os_table(
        "OS statistics per query run (system-wide figures include the other streams')".to_owned(),
        steps,
    ) {
        out.push('\n');
        out.push_str(&os.to_text());
    }
    if let Some(f) = &report.failure {
        let _ = writeln!(out, "FAILED: {f}");
    }
    let _ = writeln!(out, "Ts = {:.3} s", report.ts_s);
    let _ = writeln!(
        out,
        "{}",
        match report.throughput_at_size {
            Some(t) => format!("Throughput@Size = {t:.2}"),
            None => "Throughput@Size: not computed (a query or refresh function did not complete correctly)".to_owned(),
        }
    );
    let run = report
        .power_run
        .map(|r| format!("stored run {r}"))
        .unwrap_or_else(|| "stored run".to_owned());
    let _ = writeln!(
        out,
        "{}",
        match (report.power_at_size, report.qphh_at_size) {
            (Some(p), Some(q)) => format!("Power@Size = {p:.2} ({run}), QphH@Size = {q:.2}"),
            (Some(p), None) => format!(
                "Power@Size = {p:.2} ({run}); QphH@Size: not computed (Throughput@Size is missing)"
            ),
            _ =>
                "QphH@Size: give --power-run RUN (a `dbrig tpch power` run on this data)".to_owned(),
        }
    );
    out
}

// ---- QphH@Size -------------------------------------------------------------------------------

/// One configuration's TPC-H metrics over both tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TpchMetrics {
    pub configuration: String,
    /// Mean over its power tests (or the stored power test its throughput test named).
    pub power_at_size: Option<f64>,
    /// Mean over its throughput tests.
    pub throughput_at_size: Option<f64>,
    /// sqrt(Power@Size · Throughput@Size).
    pub qphh_at_size: Option<f64>,
}

/// Power@Size, Throughput@Size and QphH@Size of every configuration that ran a TPC-H test, in
/// plan order. QphH@Size needs both tests on the configuration: its own power test, or the
/// stored one its throughput test named (`--power-run`).
pub fn tpch_metrics(data: &ReportData) -> Vec<TpchMetrics> {
    let mut out = Vec::new();
    for conf in &data.configurations {
        let results = |kind: ResultKind| -> Vec<&TrialResult> {
            data.stored
                .iter()
                .filter(|c| c.configuration == *conf && c.kind == kind)
                .flat_map(|c| c.done_results())
                .collect()
        };
        let powers = results(ResultKind::TpchPower);
        let throughputs: Vec<&ThroughputReport> = results(ResultKind::TpchThroughput)
            .into_iter()
            .filter_map(|r| match r {
                TrialResult::TpchThroughput(t) => Some(t),
                _ => None,
            })
            .collect();
        if powers.is_empty() && throughputs.is_empty() {
            continue;
        }
        let throughput = mean_of_all(throughputs.iter().map(|t| t.throughput_at_size));
        let power = if powers.is_empty() {
            mean_of_all(throughputs.iter().map(|t| t.power_at_size))
        } else {
            mean_of_all(powers.iter().map(|r| match r {
                TrialResult::TpchPower(p) => p.power_at_size,
                _ => None,
            }))
        };
        let qphh = match (power, throughput) {
            (Some(p), Some(t)) => Some(qphh_at_size(p, t)),
            _ => None,
        };
        out.push(TpchMetrics {
            configuration: conf.clone(),
            power_at_size: power,
            throughput_at_size: throughput,
            qphh_at_size: qphh,
        });
    }
    out
}

/// The scale factor each configuration's TPC-H tests of `workload` ran at: `scale factor: A SF
/// 1, B SF 1` — what every TPC-H figure is of. `None` when no finished trial has one.
pub fn scale_factor_note(data: &ReportData, workload: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for conf in &data.configurations {
        let mut sfs: Vec<f64> = Vec::new();
        for c in data
            .stored_cells(workload)
            .into_iter()
            .filter(|c| c.configuration == *conf)
        {
            for r in c.done_results() {
                let sf = match r {
                    TrialResult::TpchPower(p) => p.scale_factor,
                    TrialResult::TpchThroughput(t) => t.scale_factor,
                    _ => continue,
                };
                if !sfs.contains(&sf) {
                    sfs.push(sf);
                }
            }
        }
        if !sfs.is_empty() {
            let list: Vec<String> = sfs.iter().map(|f| format!("SF {f}")).collect();
            parts.push(format!("{conf} {}", list.join(", ")));
        }
    }
    (!parts.is_empty()).then(|| format!("{workload}: scale factor: {}", parts.join("; ")))
}

/// The composite metrics per configuration, with each one's ratio to the baseline; `None`
/// when no configuration has QphH@Size (it needs both tests).
pub fn qphh_table(data: &ReportData) -> Option<Table> {
    let metrics = tpch_metrics(data);
    if metrics.iter().all(|m| m.qphh_at_size.is_none()) {
        return None;
    }
    let base = metrics
        .iter()
        .find(|m| m.configuration == data.baseline)
        .or(metrics.first())?;
    let mut header = vec!["metric".to_owned()];
    for m in &metrics {
        header.push(m.configuration.clone());
        if m.configuration != base.configuration {
            header.push(format!("{}/{}", m.configuration, base.configuration));
        }
    }
    let mut align = vec![Align::Left];
    align.resize(header.len(), Align::Right);
    type Pick = fn(&TpchMetrics) -> Option<f64>;
    let picks: [(&str, Pick); 3] = [
        ("Power@Size", |m| m.power_at_size),
        ("Throughput@Size", |m| m.throughput_at_size),
        ("QphH@Size", |m| m.qphh_at_size),
    ];
    let rows = picks
        .iter()
        .map(|(name, pick)| {
            let mut row = vec![(*name).to_owned()];
            for m in &metrics {
                row.push(pick(m).map_or("-".into(), |v| format!("{v:.2}")));
                if m.configuration != base.configuration {
                    row.push(match (pick(m), pick(base)) {
                        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}", v / b),
                        _ => String::new(),
                    });
                }
            }
            row
        })
        .collect();
    Some(Table {
        title: "TPC-H: QphH@Size = sqrt(Power@Size · Throughput@Size)".to_owned(),
        header,
        align,
        rows,
        notes: vec![format!(
            "higher is better; ratio = configuration / baseline {}; -: the configuration lacks a test or one did not complete",
            base.configuration
        )],
    })
}

/// The TPC-H metrics of a report (QphH@Size per configuration) into its JSON document, once
/// (the power and the throughput test both have them).
pub(crate) fn metrics_json(data: &ReportData, out: &mut serde_json::Value) {
    if out.get("tpch_metrics").is_some() {
        return;
    }
    let metrics = tpch_metrics(data);
    if !metrics.is_empty() {
        out["tpch_metrics"] = serde_json::to_value(metrics).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dbrig tpch power`'s table: seconds by the one rule (not 6 decimals), a timed-out
    /// query's status without the query it carries, an error's first line shortened, and
    /// each failed step's first line under the table.
    #[test]
    fn power_text_prints_seconds_and_errors_to_be_read() {
        let mut timeout = crate::fixture::step("18", 2_000_000, QueryStatus::Timeout);
        timeout.error = Some(
            "statement timed out after 2 s: SELECT c_name, c_custkey, o_orderkey\n  FROM customer, orders, lineitem\n WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)".into(),
        );
        let mut error = crate::fixture::step("9", 5_000, QueryStatus::Error);
        error.error = Some(format!("{}\nat line 1", "x".repeat(100)));
        let report = crate::fixture::power_report(
            "10.11.6-MariaDB",
            vec![
                crate::fixture::step("1", 1_234_567, QueryStatus::Ok),
                timeout,
                error,
            ],
            None,
        );
        let text = power_text(&report, "mysql://bench@127.0.0.1:3306/tpch");
        let line = |q: &str| {
            text.lines()
                .find(|l| l.starts_with(q))
                .unwrap_or_else(|| panic!("{q}: {text}"))
                .to_owned()
        };
        assert!(line("1 ").contains(" 1.235 "), "{text}");
        assert!(!text.contains("1.234567"), "{text}");
        let q18 = line("18 ");
        assert!(
            q18.contains(">2.000") && q18.trim_end().ends_with("timeout"),
            "{q18}"
        );
        assert!(
            !text.contains("FROM customer, orders"),
            "the whole query: {text}"
        );
        let q9 = line("9 ");
        assert!(q9.contains(&format!("error: {}…", "x".repeat(59))), "{q9}");
        assert!(
            text.contains("Q18 timeout: statement timed out after 2 s: SELECT c_name"),
            "{text}"
        );
        assert!(
            text.contains(&format!("Q9 error: {}", "x".repeat(100))),
            "{text}"
        );
    }

    fn q(name: &str, outcome: Outcome, s: f64) -> QueryResult {
        let ok = outcome == Outcome::Ok;
        QueryResult {
            query: name.into(),
            outcome,
            seconds: s,
            mean: ok.then_some(s),
            min: ok.then_some(s * 0.9),
            max: ok.then_some(s * 1.1),
            max_timed_out: outcome == Outcome::Timeout,
            timeout: (outcome == Outcome::Timeout).then_some(s),
            error: (outcome == Outcome::Error).then(|| "boom".to_owned()),
            runs: 3,
        }
    }

    #[test]
    fn ratios_are_current_over_baseline_and_bounds_say_so() {
        assert_eq!(ratio_text(Some((2.0, false)), Some((1.0, false))), "2.00");
        assert_eq!(
            ratio_text(Some((600.0, true)), Some((300.0, false))),
            ">2.00"
        );
        assert_eq!(
            ratio_text(Some((30.0, false)), Some((600.0, true))),
            "<0.05"
        );
        assert_eq!(ratio_text(Some((600.0, true)), Some((600.0, true))), "");
        assert_eq!(ratio_text(None, Some((1.0, false))), "");
    }

    #[test]
    fn timeouts_errors_and_wrong_answers_are_never_numbers() {
        let t = q("3", Outcome::Timeout, 600.0);
        assert_eq!(value_text(&t, t.mean, false), ">600.0");
        let e = q("4", Outcome::Error, 0.001);
        assert_eq!(value_text(&e, Some(0.001), false), "error");
        let w = q("5", Outcome::Wrong, 0.001);
        assert_eq!(value_text(&w, Some(0.001), true), "wrong");
        let mut some = q("6", Outcome::Ok, 1.0);
        some.max_timed_out = true;
        some.timeout = Some(5.0);
        assert_eq!(value_text(&some, some.min, false), "0.900");
        assert_eq!(value_text(&some, some.max, true), ">5.000");
    }

    #[test]
    fn merging_trials_keeps_the_worst_outcome() {
        let m = QueryResult::merge(vec![q("1", Outcome::Ok, 1.0), q("1", Outcome::Ok, 3.0)]);
        assert_eq!(m.outcome, Outcome::Ok);
        assert!((m.seconds - 2.0).abs() < 1e-12);
        assert_eq!((m.min, m.max), (Some(0.9), Some(3.3000000000000003)));
        let m = QueryResult::merge(vec![q("1", Outcome::Ok, 1.0), q("1", Outcome::Wrong, 0.1)]);
        assert_eq!(m.outcome, Outcome::Wrong);
    }
}
