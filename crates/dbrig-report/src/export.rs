//! Machine-readable exports of a plan report: one JSON document with everything, and CSV with
//! one row per trial or one row per cell.

use std::fmt::Write;

use crate::data::ReportData;

/// Everything the report knows, as one JSON document (the serde form of [`ReportData`]).
pub fn report_json(data: &ReportData) -> serde_json::Value {
    let mut v = serde_json::to_value(data).unwrap_or(serde_json::Value::Null);
    v["format"] = serde_json::json!("dbrig-plan-report/1");
    v
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

/// Derived percentages to 4 decimals: `5` rather than `5.000000000000004`, which only
/// shows floating-point noise (measured values are exported as stored).
fn pct(x: Option<f64>) -> String {
    num(x.map(|v| (v * 1e4).round() / 1e4))
}

fn row(out: &mut String, fields: &[String]) {
    let line: Vec<String> = fields.iter().map(|f| field(f)).collect();
    let _ = writeln!(out, "{}", line.join(","));
}

/// One row per stored trial, every status included; `counted` says whether it is in the
/// figures.
pub fn trials_csv(data: &ReportData) -> String {
    let mut out = String::new();
    row(
        &mut out,
        &[
            "run_id",
            "configuration",
            "workload",
            "clients",
            "trial",
            "status",
            "counted",
            "tps",
            "qps",
            "lat_p50_ms",
            "lat_p95_ms",
            "lat_p99_ms",
            "duration_s",
            "server_version",
            "reason",
            "item_value",
            "unit",
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
                    c.configuration.clone(),
                    c.workload.clone(),
                    c.clients.to_string(),
                    t.trial.to_string(),
                    t.status.to_string(),
                    t.is_counted().to_string(),
                    num(t.tps),
                    num(t.qps),
                    num(lat.map(|l| l.p50)),
                    num(lat.map(|l| l.p95)),
                    num(lat.map(|l| l.p99)),
                    num(t.duration_s),
                    t.server_version.clone().unwrap_or_default(),
                    t.reason.clone().unwrap_or_default(),
                    // A micro-benchmark's or TPC-H item: its value in its own unit.
                    num(t.item),
                    c.unit.as_ref().map(|u| u.unit.clone()).unwrap_or_default(),
                ],
            );
        }
    }
    out
}

/// One row per cell: the summary of the report metric, p95, and the comparison with the
/// baseline (empty for the baseline itself). A micro-benchmark's or TPC-H item cell has its
/// own value in the metric columns, in the `unit` given in the last column.
pub fn cells_csv(data: &ReportData) -> String {
    let mut out = String::new();
    let metric = data.metric.as_str();
    row(
        &mut out,
        &[
            "configuration".to_owned(),
            "workload".into(),
            "clients".into(),
            "trials".into(),
            "failed".into(),
            "interrupted".into(),
            "invalid".into(),
            format!("{metric}_median"),
            format!("{metric}_ci_low"),
            format!("{metric}_ci_high"),
            format!("{metric}_mean"),
            format!("{metric}_stddev"),
            format!("{metric}_min"),
            format!("{metric}_max"),
            "unstable".into(),
            "lat_p95_ms_median".into(),
            "baseline".into(),
            "ratio_pct".into(),
            "delta_pct".into(),
            "delta_ci_low".into(),
            "delta_ci_high".into(),
            "p_adjusted".into(),
            "verdict".into(),
            "unit".into(),
        ],
    );
    for c in &data.cells {
        let s = c.summary.as_ref();
        let cmp = data.comparison(&c.configuration, &c.workload, c.clients);
        let delta = cmp.and_then(|r| r.comparison.delta);
        let ci = cmp.and_then(|r| r.comparison.delta_ci);
        row(
            &mut out,
            &[
                c.configuration.clone(),
                c.workload.clone(),
                c.clients.to_string(),
                c.values.len().to_string(),
                c.excluded.failed.to_string(),
                c.excluded.interrupted.to_string(),
                c.excluded.invalid.to_string(),
                num(s.map(|s| s.median)),
                num(s.and_then(|s| s.median_ci).map(|ci| ci.0)),
                num(s.and_then(|s| s.median_ci).map(|ci| ci.1)),
                num(s.map(|s| s.mean)),
                num(s.and_then(|s| s.stddev)),
                num(s.map(|s| s.min)),
                num(s.map(|s| s.max)),
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
                c.unit.as_ref().map(|u| u.unit.clone()).unwrap_or_default(),
            ],
        );
    }
    out
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
