//! Machine-readable exports of a plan report: one JSON document with everything, and CSV with
//! one row per cell, per trial or per interval sample. Every value goes with its unit (`QPS` / `TPS` for
//! OLTP, the item's own for every other kind), so seconds never sit under a throughput head.

use std::fmt::Write;

use dbrig_core::IntervalSample;
use dbrig_core::results::ResultKind;
use dbrig_store::Store;

use crate::data::{ReportData, StoredCell, TrialData};
use crate::error::ReportError;

/// Everything the report knows, as one JSON document: the serde form of [`ReportData`] (every
/// cell with its kind and value unit), and each kind's own view: the power tests' seed
/// tables, the TPC-H metrics (QphH@Size) and the perfrun comparisons with their filter.
pub fn report_json(data: &ReportData) -> Result<serde_json::Value, ReportError> {
    let mut v = serde_json::to_value(data).unwrap_or(serde_json::Value::Null);
    v["format"] = serde_json::json!("dbrig-plan-report/2");
    // Each kind's own view: the power tests' seed tables, the TPC-H metrics, the perfrun
    // comparisons with their filter.
    for kind in crate::kinds::all() {
        kind.json(data, &mut v)?;
    }
    let why = crate::why::why(data);
    if !why.is_empty() {
        v["why"] = serde_json::to_value(why).unwrap_or_default();
    }
    let settings = crate::settings::settings_json(data);
    if !settings.is_empty() {
        v["server_settings"] = serde_json::to_value(settings).unwrap_or_default();
        v["durability_flags"] =
            serde_json::to_value(crate::settings::durability_flags(data)).unwrap_or_default();
    }
    Ok(v)
}

/// RFC 4180 quoting, only where needed.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn num(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// Derived percentages by the one rounding rule (`crate::figures`): `5` rather than
/// `5.000000000000004`, which only shows floating-point noise (measured values are exported
/// as stored).
fn pct(x: Option<f64>) -> String {
    num(x.map(crate::figures::round))
}

fn row(out: &mut String, fields: &[String]) {
    let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
    let _ = writeln!(out, "{}", line.join(","));
}

/// The item of a cell (empty for OLTP): the column beside `workload` in both CSVs.
fn item(c: &crate::data::CellData) -> String {
    c.unit.as_ref().map(|u| u.item.clone()).unwrap_or_default()
}

/// One row per stored trial and item, every status included; `counted` says whether it is in
/// the figures. `value` is in `unit`; `tps`, `qps` and latency are OLTP's.
pub fn trials_csv(data: &ReportData) -> String {
    let mut out = String::new();
    row(
        &mut out,
        &[
            "run_id",
            "kind",
            "configuration",
            "workload",
            "item",
            "clients",
            "trial",
            "started_at",
            "status",
            "counted",
            "value",
            "unit",
            "tps",
            "qps",
            "lat_p50_ms",
            "lat_p95_ms",
            "lat_p99_ms",
            "duration_s",
            "server_version",
            "reason",
        ]
        .map(str::to_owned),
    );
    for c in &data.cells {
        for t in &c.trials {
            let lat = t.latency_ms.as_ref();
            row(
                &mut out,
                &[
                    t.run_id.to_string(),
                    c.kind.to_string(),
                    c.configuration.clone(),
                    c.label.clone(),
                    item(c),
                    c.clients.to_string(),
                    t.trial.to_string(),
                    t.started_at.clone(),
                    t.status.to_string(),
                    t.is_counted().to_string(),
                    num(t.value(data.metric)),
                    c.value_unit.clone(),
                    num(t.tps),
                    num(t.qps),
                    num(lat.map(|l| l.p50)),
                    num(lat.map(|l| l.p95)),
                    num(lat.map(|l| l.p99)),
                    num(t.duration_s),
                    t.server_version.clone().unwrap_or_default(),
                    // A failed trial's reason, else why its item has no value.
                    t.reason
                        .clone()
                        .or_else(|| t.item_missing.clone())
                        .unwrap_or_default(),
                ],
            );
        }
    }
    out
}

/// The columns of [`cells_csv`].
const CELL_COLUMNS: [&str; 29] = [
    "kind",
    "configuration",
    "workload",
    "item",
    "clients",
    "trials",
    "failed",
    "interrupted",
    "invalid",
    "without_value",
    "value_median",
    "value_ci_low",
    "value_ci_high",
    "value_mean",
    "value_stddev",
    "value_min",
    "value_max",
    "unit",
    "higher_is_better",
    "unstable",
    "lat_p95_ms_median",
    "baseline",
    "ratio_pct",
    "delta_pct",
    "delta_ci_low",
    "delta_ci_high",
    "p_adjusted",
    "verdict",
    "without_value_why",
];

/// Why a cell's trials have no value for its item, each reason once (`timeout (>7.000 s)`).
fn without_value_why(c: &crate::data::CellData) -> String {
    let mut why: Vec<&str> = Vec::new();
    for m in c.trials.iter().filter_map(|t| t.item_missing.as_deref()) {
        if !why.contains(&m) {
            why.push(m);
        }
    }
    why.join("; ")
}

/// One row per cell: the summary of its values in `unit` (the report metric for OLTP, the
/// item's unit otherwise), p95 latency (OLTP), and the comparison with the baseline (empty for
/// the baseline itself); then one row per configuration and TPC-H metric (Power@Size,
/// Throughput@Size, QphH@Size; kind and workload `tpch`), which come from two tests rather
/// than one cell.
pub fn cells_csv(data: &ReportData) -> String {
    let mut out = String::new();
    row(&mut out, &CELL_COLUMNS.map(str::to_owned));
    for c in &data.cells {
        let s = c.summary.as_ref();
        let cmp = data.comparison(&c.configuration, &c.workload, c.clients);
        let delta = cmp.and_then(|r| r.comparison.delta);
        let ci = cmp.and_then(|r| r.comparison.delta_ci);
        let higher = c.unit.as_ref().is_none_or(|u| u.higher_is_better);
        row(
            &mut out,
            &[
                c.kind.to_string(),
                c.configuration.clone(),
                c.label.clone(),
                item(c),
                c.clients.to_string(),
                c.values.len().to_string(),
                c.excluded.failed.to_string(),
                c.excluded.interrupted.to_string(),
                c.excluded.invalid.to_string(),
                c.excluded.without_value.to_string(),
                num(s.map(|s| s.median)),
                num(s.and_then(|s| s.median_ci).map(|ci| ci.0)),
                num(s.and_then(|s| s.median_ci).map(|ci| ci.1)),
                num(s.map(|s| s.mean)),
                num(s.and_then(|s| s.stddev)),
                num(s.map(|s| s.min)),
                num(s.map(|s| s.max)),
                c.value_unit.clone(),
                higher.to_string(),
                s.is_some_and(|s| s.unstable).to_string(),
                num(c.p95_ms.as_ref().map(|s| s.median)),
                cmp.map(|r| r.baseline.clone()).unwrap_or_default(),
                pct(delta.map(|d| (d + 1.0) * 100.0)),
                pct(delta.map(|d| d * 100.0)),
                pct(ci.map(|c| c.0 * 100.0)),
                pct(ci.map(|c| c.1 * 100.0)),
                num(cmp.and_then(|r| r.comparison.p_adjusted)),
                cmp.map(|r| r.comparison.verdict.label().to_owned())
                    .unwrap_or_default(),
                without_value_why(c),
            ],
        );
    }
    for f in crate::kinds::all().flat_map(|k| k.figures(data)) {
        let fields = CELL_COLUMNS.map(|col| match col {
            "kind" | "workload" => f.kind.to_owned(),
            "configuration" => f.configuration.clone(),
            "item" | "unit" => f.name.to_owned(),
            "value_median" => num(Some(f.value)),
            "higher_is_better" => "true".to_owned(),
            _ => String::new(),
        });
        row(&mut out, &fields);
    }
    out
}

/// The interval samples of every trial of a stored cell that has them, in plan order:
/// (cell, trial, samples).
type Series<'a> = (&'a StoredCell, &'a TrialData, Vec<IntervalSample>);

fn interval_series<'a>(
    store: &Store,
    data: &'a ReportData,
) -> Result<Vec<Series<'a>>, ReportError> {
    let mut out = Vec::new();
    for cell in &data.stored {
        if cell.kind != ResultKind::Oltp {
            continue;
        }
        for t in &cell.trials {
            let samples = store.intervals(t.trial_id)?;
            if !samples.is_empty() {
                out.push((cell, t, samples));
            }
        }
    }
    Ok(out)
}

/// Every OLTP trial's throughput and latency per interval, for `--format json`: per trial its
/// identity, start time (`started_at`, UTC) and samples (`t_s`: seconds from the start of
/// measurement at the end of each interval; rates per second; `latency_pct_ms` at the
/// trial's `percentile`).
pub fn intervals_json(store: &Store, data: &ReportData) -> Result<serde_json::Value, ReportError> {
    let series = interval_series(store, data)?;
    Ok(serde_json::Value::Array(
        series
            .into_iter()
            .map(|(c, t, samples)| {
                serde_json::json!({
                    "run_id": t.run_id,
                    "configuration": c.configuration,
                    "workload": c.workload,
                    "clients": c.clients,
                    "trial": t.trial,
                    "started_at": t.started_at,
                    "percentile": t.percentile,
                    "samples": samples,
                })
            })
            .collect(),
    ))
}

/// `--format csv-intervals`: one row per interval sample of every OLTP trial. Rates and
/// latencies are per-interval derivations: 4 decimals, as every derived value here.
pub fn intervals_csv(store: &Store, data: &ReportData) -> Result<String, ReportError> {
    let mut out = String::new();
    row(
        &mut out,
        &[
            "run_id",
            "configuration",
            "workload",
            "clients",
            "trial",
            "trial_started_at",
            "t_s",
            "threads",
            "tps",
            "qps",
            "reads_ps",
            "writes_ps",
            "other_ps",
            "percentile",
            "latency_pct_ms",
            "errors_ps",
            "reconnects_ps",
            "backlog",
        ]
        .map(str::to_owned),
    );
    for (c, t, samples) in interval_series(store, data)? {
        for p in samples {
            row(
                &mut out,
                &[
                    t.run_id.to_string(),
                    c.configuration.clone(),
                    c.workload.clone(),
                    c.clients.to_string(),
                    t.trial.to_string(),
                    t.started_at.clone(),
                    p.t_s.to_string(),
                    p.threads.to_string(),
                    pct(Some(p.tps)),
                    pct(Some(p.qps)),
                    pct(Some(p.reads_ps)),
                    pct(Some(p.writes_ps)),
                    pct(Some(p.other_ps)),
                    num(t.percentile),
                    pct(Some(p.latency_pct_ms)),
                    pct(Some(p.errors_ps)),
                    pct(Some(p.reconnects_ps)),
                    p.backlog.map(|b| b.to_string()).unwrap_or_default(),
                ],
            );
        }
    }
    Ok(out)
}

/// One interval in the shape of sysbench's `sysbench.report_json` hook (its
/// `report_intermediate` form): `time` in seconds since the start, rates per second,
/// `latency` in ms at the run's percentile.
fn sysbench_interval(p: &IntervalSample) -> serde_json::Value {
    let r2 = |v: f64| (v * 100.0).round() / 100.0;
    serde_json::json!({
        "time": p.t_s.round(),
        "threads": p.threads,
        "tps": r2(p.tps),
        "qps": {
            "total": r2(p.qps),
            "reads": r2(p.reads_ps),
            "writes": r2(p.writes_ps),
            "other": r2(p.other_ps),
        },
        "latency": r2(p.latency_pct_ms),
        "errors": r2(p.errors_ps),
        "reconnects": r2(p.reconnects_ps),
    })
}

/// `--format sysbench-json`: what sysbench's `report_json` hook prints. A report of one OLTP
/// trial is that array of intervals itself; with several trials, an array of the trials, each
/// with its identity and its `intervals` in that shape.
pub fn sysbench_json(store: &Store, data: &ReportData) -> Result<serde_json::Value, ReportError> {
    let series = interval_series(store, data)?;
    if let [(_, _, samples)] = series.as_slice() {
        return Ok(samples.iter().map(sysbench_interval).collect());
    }
    Ok(series
        .iter()
        .map(|(c, t, samples)| {
            serde_json::json!({
                "configuration": c.configuration,
                "workload": c.workload,
                "clients": c.clients,
                "trial": t.trial,
                "started_at": t.started_at,
                "intervals": samples.iter().map(sysbench_interval).collect::<Vec<_>>(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }
}
