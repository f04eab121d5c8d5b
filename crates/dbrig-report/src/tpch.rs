//! TPC-H power test reports in the DBT-3 results pages' shape: per configuration × query the
//! mean / min / max seconds, each with its ratio to the baseline configuration beside it
//! (`current / baseline`), timeouts as `>T`, errors and wrong answers named as such (never a
//! fast time), the server version of each configuration, Power@Size; and the launcher's bar
//! chart, in which timed-out bars run off the top of an axis cut at the longest completed
//! time + 20 %.
//!
//! Input is the stored `extra.tpch_power` of power-test trials (see `dbrig tpch power` and
//! plan runs of `tpch_power`), or a power report given directly while a run goes, so the
//! chart can be redrawn after every query.

use plotters::prelude::*;
use serde::Deserialize;

use dbrig_store::{RunId, Store, TrialStatus};

use crate::charts::colour;
use crate::error::ReportError;
use crate::tables::{Align, Table};

/// How a query ended, worst last (a merge of several trials keeps the worst).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Ok,
    Timeout,
    Wrong,
    Error,
}

/// One query of one configuration, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    pub query: String,
    pub outcome: Outcome,
    /// The reduced time (mean, fastest or fastest plan's mean, by the run's reduction).
    pub seconds: f64,
    pub mean: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// A run used for the figures timed out: the maximum is at least the timeout.
    pub max_timed_out: bool,
    pub timeout: Option<f64>,
    pub error: Option<String>,
    /// Measured runs behind the figures (over all trials).
    pub runs: usize,
}

/// One configuration's power test(s).
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    pub name: String,
    pub server_version: String,
    pub power_at_size: Option<f64>,
    pub queries: Vec<QueryResult>,
}

/// The report: configurations in plan order, one of them the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct TpchReport {
    pub title: String,
    pub baseline: String,
    pub configurations: Vec<Configuration>,
}

// The stored shape of a power report (only what the report reads).
#[derive(Deserialize)]
struct StoredReport {
    #[serde(default)]
    server_version: String,
    #[serde(default)]
    power_at_size: Option<f64>,
    #[serde(default)]
    rf1: Option<StoredQuery>,
    #[serde(default)]
    queries: Vec<StoredQuery>,
    #[serde(default)]
    rf2: Option<StoredQuery>,
}

#[derive(Deserialize)]
struct StoredQuery {
    name: String,
    micros: u64,
    status: Outcome,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    detail: Option<StoredDetail>,
}

#[derive(Deserialize)]
struct StoredDetail {
    #[serde(default)]
    runs: Vec<StoredRun>,
    min_micros: Option<u64>,
    max_micros: Option<u64>,
    mean_micros: Option<u64>,
    #[serde(default)]
    max_timed_out: bool,
    timeout_seconds: Option<f64>,
}

#[derive(Deserialize)]
struct StoredRun {
    warmup: bool,
}

fn secs(micros: u64) -> f64 {
    micros as f64 / 1e6
}

impl QueryResult {
    fn from_stored(q: StoredQuery) -> Self {
        let s = secs(q.micros);
        match q.detail {
            Some(d) => QueryResult {
                query: q.name,
                outcome: q.status,
                seconds: s,
                mean: d.mean_micros.map(secs),
                min: d.min_micros.map(secs),
                max: d.max_micros.map(secs),
                max_timed_out: d.max_timed_out,
                timeout: d.timeout_seconds,
                error: q.error,
                runs: d.runs.iter().filter(|r| !r.warmup).count(),
            },
            // A plain run (RF1/RF2, or no controls): one measurement.
            None => {
                let ok = q.status == Outcome::Ok;
                QueryResult {
                    query: q.name,
                    outcome: q.status,
                    seconds: s,
                    mean: ok.then_some(s),
                    min: ok.then_some(s),
                    max: ok.then_some(s),
                    max_timed_out: q.status == Outcome::Timeout,
                    timeout: (q.status == Outcome::Timeout).then_some(s),
                    error: q.error,
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

impl Configuration {
    /// One configuration from one or more stored power reports (`extra.tpch_power` values).
    pub fn from_power_reports(
        name: &str,
        reports: &[serde_json::Value],
    ) -> Result<Configuration, ReportError> {
        let mut parsed = Vec::new();
        for r in reports {
            let r: StoredReport =
                serde_json::from_value(r.clone()).map_err(|e| ReportError::Chart {
                    chart: format!("tpch {name}"),
                    detail: format!("stored power report does not parse: {e}"),
                })?;
            parsed.push(r);
        }
        let mut order: Vec<String> = Vec::new();
        let mut by_query: Vec<Vec<QueryResult>> = Vec::new();
        let mut powers = Vec::new();
        let mut version = String::new();
        for r in parsed {
            if version.is_empty() {
                version = r.server_version.clone();
            }
            powers.push(r.power_at_size);
            for q in r.rf1.into_iter().chain(r.queries).chain(r.rf2) {
                let q = QueryResult::from_stored(q);
                match order.iter().position(|n| *n == q.query) {
                    Some(i) => by_query[i].push(q),
                    None => {
                        order.push(q.query.clone());
                        by_query.push(vec![q]);
                    }
                }
            }
        }
        let power_at_size = if !powers.is_empty() && powers.iter().all(Option::is_some) {
            Some(powers.iter().flatten().sum::<f64>() / powers.len() as f64)
        } else {
            None
        };
        Ok(Configuration {
            name: name.to_owned(),
            server_version: version,
            power_at_size,
            queries: by_query.into_iter().map(QueryResult::merge).collect(),
        })
    }

    fn query(&self, name: &str) -> Option<&QueryResult> {
        self.queries.iter().find(|q| q.query == name)
    }
}

impl TpchReport {
    /// The TPC-H report of runs: every cell of workload `tpch_power` (or `tpch-power`), its
    /// finished trials merged per configuration. `None` when the runs hold no power test.
    /// The baseline is `baseline` when it names a configuration here, else the first. With
    /// several runs a configuration is labelled `NAME@RUN` (single runs are all `default`).
    pub fn load(
        store: &Store,
        runs: &[RunId],
        baseline: Option<&str>,
    ) -> Result<Option<TpchReport>, ReportError> {
        let mut configurations: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
        for &run in runs {
            for cell in store.cells(run)? {
                if cell.workload.replace('-', "_") != "tpch_power" {
                    continue;
                }
                let label = if runs.len() > 1 {
                    format!("{}@{}", cell.configuration, run.0)
                } else {
                    cell.configuration.clone()
                };
                let slot = match configurations.iter().position(|(n, _)| *n == label) {
                    Some(i) => i,
                    None => {
                        configurations.push((label, Vec::new()));
                        configurations.len() - 1
                    }
                };
                for t in store.trials(cell.id)? {
                    if t.status != TrialStatus::Done {
                        continue;
                    }
                    if let Some(p) = t.extra.as_ref().and_then(|e| e.get("tpch_power")) {
                        configurations[slot].1.push(p.clone());
                    }
                }
            }
        }
        configurations.retain(|(_, r)| !r.is_empty());
        if configurations.is_empty() {
            return Ok(None);
        }
        let configurations = configurations
            .iter()
            .map(|(n, r)| Configuration::from_power_reports(n, r))
            .collect::<Result<Vec<_>, _>>()?;
        let baseline = baseline
            .filter(|b| configurations.iter().any(|c| c.name == *b))
            .unwrap_or(&configurations[0].name)
            .to_owned();
        let title = format!(
            "TPC-H power test, run{} {}",
            if runs.len() > 1 { "s" } else { "" },
            runs.iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(Some(TpchReport {
            title,
            baseline,
            configurations,
        }))
    }

    fn baseline(&self) -> &Configuration {
        self.configurations
            .iter()
            .find(|c| c.name == self.baseline)
            .unwrap_or(&self.configurations[0])
    }

    /// Query names in first-seen order over all configurations.
    fn query_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in &self.configurations {
            for q in &c.queries {
                if !names.contains(&q.query) {
                    names.push(q.query.clone());
                }
            }
        }
        names
    }
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

fn seconds_text(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.3}")
    }
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
    let mut header = vec!["query".to_owned()];
    let mut align = vec![Align::Left];
    for c in &report.configurations {
        for what in ["mean", "min", "max"] {
            header.push(format!("{} {what} s", c.name));
            align.push(Align::Right);
            if c.name != base.name {
                header.push("ratio".into());
                align.push(Align::Right);
            }
        }
    }
    let mut rows = Vec::new();
    type Pick = fn(&QueryResult) -> Option<f64>;
    let picks: [(Pick, bool); 3] = [(|q| q.mean, false), (|q| q.min, false), (|q| q.max, true)];
    for name in report.query_names() {
        let mut row = vec![name.clone()];
        let b = base.query(&name);
        for c in &report.configurations {
            let q = c.query(&name);
            for (pick, is_max) in picks {
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
        power.push(c.power_at_size.map_or("n/a".into(), |p| format!("{p:.2}")));
        if c.name != base.name {
            power.push(match (c.power_at_size, base.power_at_size) {
                (Some(p), Some(b)) if b > 0.0 => format!("{:.2}", p / b),
                _ => String::new(),
            });
        }
        let extra = if c.name != base.name { 4 } else { 2 };
        power.extend(std::iter::repeat_n(String::new(), extra));
    }
    rows.push(power);
    let mut notes = vec![format!(
        "ratio = configuration / baseline {} (below 1: faster; Power@Size: above 1 is better); >T: timed out after T s",
        base.name
    )];
    for c in &report.configurations {
        notes.push(format!("{}: {}", c.name, c.server_version));
        for q in &c.queries {
            if let (Outcome::Error | Outcome::Wrong, Some(e)) = (q.outcome, &q.error) {
                let first = e.lines().next().unwrap_or("");
                notes.push(format!("{} Q{}: {first}", c.name, q.query));
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
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..(queries.len() as f64 - 0.5), 0.0..top)
            .map_err(err)?;
        let labels = queries.clone();
        chart
            .configure_mesh()
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
                        ("sans-serif", 11).into_font().color(&BLACK).pos(
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
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

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
