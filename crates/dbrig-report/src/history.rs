//! Result history: every stored run's figures arranged as series — one per workload (with
//! its data options), configuration (its name and redacted target), client count, host
//! fingerprint and metric — ordered by when the run began (the order commits were measured
//! in; each point names its `--commit` and tags), each point keeping its trials,
//! with the series' change points (`dbrig_core::changepoint`, as Apache Otava finds them).
//!
//! A series compares like with like: a run on another machine (CPU model, CPU count,
//! memory, kernel) or with other data options starts a series of its own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use dbrig_core::changepoint::{self, ChangePointOptions};
use dbrig_core::host::HostFacts;
use dbrig_core::stats;
use dbrig_store::{RunId, RunStatus, Store};
use serde::Serialize;

use crate::data::ReportData;
use crate::error::ReportError;
use crate::kinds::higher_is_better;

/// What identifies a series: points of one key are comparable.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    /// The cell's workload (its plan label), and for an item of a kind with several, the item.
    pub workload: String,
    /// The workload's data options as stored (canonical JSON).
    pub options: String,
    pub configuration: String,
    /// The configuration's target, redacted as stored.
    pub target: String,
    pub clients: u32,
    /// CPU model, CPUs, memory and kernel of the host that measured.
    pub host: String,
    /// The figure's unit (`QPS`, `s`, `rows/s`, `NOPM` …).
    pub unit: String,
}

impl SeriesKey {
    /// One line naming the series, as listings show it.
    pub fn label(&self) -> String {
        format!(
            "{} · {} · {} client(s) · {}",
            self.workload, self.configuration, self.clients, self.unit
        )
    }
}

/// One run's figure in a series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub run: RunId,
    pub started_at: String,
    pub dbrig_version: String,
    /// The code under test (`--commit`) and the run's tags (`--tag`), when given.
    pub commit: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// The counted trials' values, in trial order.
    pub values: Vec<f64>,
    pub median: f64,
}

/// A change point of a series, at the point where the new level begins.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesChange {
    /// Index into the series' points.
    pub index: usize,
    /// The run where the new level begins, and the run before it: what changed lies between.
    pub run: RunId,
    pub previous_run: RunId,
    pub mean_before: f64,
    pub ci95_before: Option<(f64, f64)>,
    pub mean_after: f64,
    pub ci95_after: Option<(f64, f64)>,
    /// Relative change of the mean, after / before − 1.
    pub change: f64,
    pub p: f64,
    /// Better or worse, by the unit's direction.
    pub regression: bool,
}

/// A series and its change points.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub key: SeriesKey,
    pub higher_is_better: bool,
    pub points: Vec<Point>,
    pub changes: Vec<SeriesChange>,
}

/// Which series to list; every field narrows, none given lists all.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    /// A substring of the workload.
    pub workload: Option<String>,
    pub configuration: Option<String>,
    pub clients: Option<u32>,
    /// A unit, exactly (`QPS`, `s`).
    pub unit: Option<String>,
    /// Only series with at least this many points.
    pub min_points: usize,
}

impl HistoryFilter {
    fn keeps(&self, key: &SeriesKey) -> bool {
        self.workload
            .as_ref()
            .is_none_or(|w| key.workload.contains(w.as_str()))
            && self
                .configuration
                .as_ref()
                .is_none_or(|c| &key.configuration == c)
            && self.clients.is_none_or(|c| key.clients == c)
            && self.unit.as_ref().is_none_or(|u| &key.unit == u)
    }
}

/// The host a run was measured on, as a series tells hosts apart: the hosts' one fingerprint
/// ([`HostFacts::fingerprint`], what `dbrig runs` shows) with the facts it is made of.
pub fn host_fingerprint(host: &serde_json::Value) -> String {
    let facts: HostFacts = serde_json::from_value(host.clone()).unwrap_or_default();
    let id = facts.fingerprint();
    let gib = facts
        .mem_total_bytes
        .map(|b| format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64));
    let described = [
        facts.cpu_model,
        facts.logical_cpus.map(|c| format!("{c} CPUs")),
        gib,
        facts.kernel.release,
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    format!("{id} ({described})")
}

/// Every series of the results database that `filter` keeps, in key order, with its change
/// points found with `opts`. Runs that measured nothing (failed before a trial, still
/// running) add no point.
pub fn history(
    store: &Store,
    filter: &HistoryFilter,
    opts: &ChangePointOptions,
) -> Result<Vec<Series>, ReportError> {
    let mut runs = store.runs()?;
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    let mut series: BTreeMap<SeriesKey, Vec<Point>> = BTreeMap::new();
    for run in runs {
        if run.status == RunStatus::Running {
            continue;
        }
        let data = match ReportData::load_with(store, run.id, crate::kinds::FACTS) {
            Ok(d) => d,
            Err(ReportError::EmptyRun { .. }) => continue,
            Err(e) => return Err(e),
        };
        let host = host_fingerprint(&run.host);
        for cell in &data.cells {
            let Some(median) = stats::median(&cell.values) else {
                continue;
            };
            let stored = data
                .stored
                .iter()
                .find(|s| cell.cell_keys.contains(&s.cell_key));
            let key = SeriesKey {
                workload: cell.workload.clone(),
                options: stored
                    .map(|s| s.options.workload_options.to_string())
                    .unwrap_or_default(),
                configuration: cell.configuration.clone(),
                target: stored.map(|s| s.target.clone()).unwrap_or_default(),
                clients: cell.clients,
                host: host.clone(),
                unit: cell.value_unit.clone(),
            };
            if !filter.keeps(&key) {
                continue;
            }
            series.entry(key).or_default().push(Point {
                run: run.id,
                started_at: run.started_at.clone(),
                dbrig_version: run.dbrig_version.clone(),
                commit: run.provenance.commit.clone(),
                tags: run.provenance.tags.clone(),
                values: cell.values.clone(),
                median,
            });
        }
    }
    Ok(series
        .into_iter()
        .filter(|(_, points)| points.len() >= filter.min_points)
        .map(|(key, points)| {
            let higher = higher_is_better(&key.unit);
            let changes = changes_of(&points, higher, opts);
            Series {
                key,
                higher_is_better: higher,
                points,
                changes,
            }
        })
        .collect())
}

/// The change points of a series of points (their medians).
fn changes_of(points: &[Point], higher: bool, opts: &ChangePointOptions) -> Vec<SeriesChange> {
    let medians: Vec<f64> = points.iter().map(|p| p.median).collect();
    changepoint::change_points(&medians, opts)
        .unwrap_or_default()
        .into_iter()
        .map(|c| SeriesChange {
            index: c.index,
            run: points[c.index].run,
            previous_run: points[c.index - 1].run,
            mean_before: c.before.mean,
            ci95_before: c.before.ci95,
            mean_after: c.after.mean,
            ci95_after: c.after.ci95,
            change: c.change,
            p: c.p,
            regression: (c.change < 0.0) == higher,
        })
        .collect()
}

/// Text: per series its key, each point (run, date, median, trial range) and its change
/// points marked where they begin.
pub fn history_text(series: &[Series]) -> String {
    let mut out = String::new();
    if series.is_empty() {
        out.push_str("no series: the results database holds no measured runs that match\n");
    }
    for s in series {
        let _ = writeln!(out, "{}", s.key.label());
        let _ = writeln!(out, "  host: {}", s.key.host);
        let _ = writeln!(out, "  target: {}", s.key.target);
        let _ = writeln!(
            out,
            "  {:>6}  {:<24}  {:<12}  {:>12}  {:>25}  trials",
            "run", "started", "commit", s.key.unit, "range"
        );
        for (i, p) in s.points.iter().enumerate() {
            let (lo, hi) = p
                .values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(*v), h.max(*v))
                });
            let commit: String = p
                .commit
                .as_deref()
                .unwrap_or("-")
                .chars()
                .take(12)
                .collect();
            let _ = writeln!(
                out,
                "  {:>6}  {:<24}  {:<12}  {:>12.2}  {:>25}  {}",
                p.run.0,
                p.started_at,
                commit,
                p.median,
                format!("{lo:.2} … {hi:.2}"),
                p.values.len()
            );
            if let Some(c) = s.changes.iter().find(|c| c.index == i + 1) {
                let _ = writeln!(
                    out,
                    "  ── change point before run {}: {:+.1} % ({}), mean {:.2} → {:.2}, p = {:.2e}",
                    c.run.0,
                    c.change * 100.0,
                    if c.regression {
                        "regression"
                    } else {
                        "improvement"
                    },
                    c.mean_before,
                    c.mean_after,
                    c.p
                );
            }
        }
        out.push('\n');
    }
    out
}

/// CSV: one row per point, its series' key beside it, and whether a change point begins there.
pub fn history_csv(series: &[Series]) -> String {
    let mut out = String::from(
        "workload,configuration,clients,unit,host,run,started_at,commit,median,trials,change_point_pct\n",
    );
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    };
    for s in series {
        for (i, p) in s.points.iter().enumerate() {
            let change = s
                .changes
                .iter()
                .find(|c| c.index == i)
                .map(|c| format!("{:.4}", c.change * 100.0))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                field(&s.key.workload),
                field(&s.key.configuration),
                s.key.clients,
                field(&s.key.unit),
                field(&s.key.host),
                p.run.0,
                p.started_at,
                field(p.commit.as_deref().unwrap_or("")),
                crate::figures::round(p.median),
                p.values.len(),
                change
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::quick_run;

    #[test]
    fn a_step_in_a_configurations_series_is_a_change_point_between_its_runs() {
        let mut store = Store::open_in_memory().unwrap();
        for i in 0..12 {
            let speed = if i < 6 { 1.0 } else { 0.7 };
            quick_run(&mut store, 5, speed, serde_json::json!({})).unwrap();
        }
        let all = history(
            &store,
            &HistoryFilter::default(),
            &ChangePointOptions::default(),
        )
        .unwrap();
        // 2 workloads × 2 client counts × 2 configurations.
        assert_eq!(all.len(), 8);
        for s in &all {
            assert_eq!(s.points.len(), 12);
            assert!(s.higher_is_better);
            if s.key.configuration == "text" {
                assert_eq!(s.changes.len(), 1, "{:?}", s.changes);
                let c = &s.changes[0];
                assert_eq!((c.index, c.run, c.previous_run), (6, RunId(7), RunId(6)));
                assert!((c.change + 0.3).abs() < 1e-9 && c.regression && c.p < 0.001);
            } else {
                assert!(s.changes.is_empty(), "{:?}", s.changes);
            }
        }
        let text = history_text(&all);
        assert!(
            text.contains("── change point before run 7: -30.0 % (regression)"),
            "{text}"
        );
        let csv = history_csv(&all);
        assert_eq!(csv.lines().count(), 1 + 8 * 12);
        assert!(
            csv.lines()
                .any(|l| l.contains(",text,") && l.ends_with(",-30.0000")),
            "{csv}"
        );
        let points = HistoryFilter {
            configuration: Some("prepared".into()),
            clients: Some(4),
            workload: Some("read_write".into()),
            ..HistoryFilter::default()
        };
        let one = history(&store, &points, &ChangePointOptions::default()).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].key.workload, "oltp_read_write");
    }

    #[test]
    fn the_host_fingerprint_tells_machines_apart() {
        let a = serde_json::json!({"cpu_model": "EPYC 7B13", "logical_cpus": 2,
            "mem_total_bytes": 25_769_803_776u64, "kernel": {"release": "6.1.0"}});
        let facts: HostFacts = serde_json::from_value(a.clone()).unwrap();
        assert_eq!(
            host_fingerprint(&a),
            format!("{} (EPYC 7B13, 2 CPUs, 24 GiB, 6.1.0)", facts.fingerprint())
        );
        let b = serde_json::json!({"cpu_model": "EPYC 7B13", "logical_cpus": 4,
            "mem_total_bytes": 25_769_803_776u64, "kernel": {"release": "6.1.0"}});
        assert_ne!(host_fingerprint(&a), host_fingerprint(&b));
    }
}
