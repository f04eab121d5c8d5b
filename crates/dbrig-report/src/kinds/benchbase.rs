//! `--format benchbase`: every OLTP trial as BenchBase writes a run, so tools that parse
//! BenchBase's results folder read dbrig's: `NAME.summary.json` with BenchBase's summary keys
//! (its `ResultWriter.writeSummary`: latencies in microseconds, throughput in requests — here
//! transactions — per second) and `NAME.results.csv` with its per-window columns
//! (`writeResults`: seconds, requests/second, latencies in milliseconds). dbrig samples one
//! latency percentile per interval (the trial's `--percentile`): that column is filled, the
//! other latency columns of a row are empty.

use std::path::{Path, PathBuf};

use dbrig_core::results::ResultKind;
use dbrig_store::{Store, TrialStatus, parse_rfc3339};

use crate::data::{ReportData, StoredCell, TrialData};
use crate::error::ReportError;
use crate::files::{file_stem, write_atomic};

/// BenchBase's name of a target's database system (its `DatabaseType`).
fn dbms_type(target: &str) -> &'static str {
    match target.split(':').next().unwrap_or("") {
        "mysql" => "MYSQL",
        "mariadb" => "MARIADB",
        "postgres" | "postgresql" => "POSTGRES",
        "sqlite" => "SQLITE",
        _ => "NOISEPAGE",
    }
}

/// The results CSV header, as BenchBase writes it.
pub const RESULTS_HEADER: [&str; 12] = [
    "Time (seconds)",
    "Throughput (requests/second)",
    "Average Latency (millisecond)",
    "Minimum Latency (millisecond)",
    "25th Percentile Latency (millisecond)",
    "Median Latency (millisecond)",
    "75th Percentile Latency (millisecond)",
    "90th Percentile Latency (millisecond)",
    "95th Percentile Latency (millisecond)",
    "99th Percentile Latency (millisecond)",
    "Maximum Latency (millisecond)",
    "tp (req/s) scaled",
];

/// Writes one summary and one results CSV per counted OLTP trial into `dir`; the files
/// written.
pub fn write_benchbase(
    store: &Store,
    data: &ReportData,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Write {
        path: dir.to_owned(),
        source,
    })?;
    let mut files = Vec::new();
    for cell in data.stored.iter().filter(|c| c.kind == ResultKind::Oltp) {
        for t in &cell.trials {
            if let Some((_, written)) = write_trial(store, cell, t, &cell.workload, dir)? {
                files.extend(written);
            }
        }
    }
    Ok(files)
}

/// The name BenchBase's files of trial `t` of `cell` start with.
pub(crate) fn trial_file_name(cell: &StoredCell, t: &TrialData) -> String {
    format!(
        "{}-{}-{}c-t{}",
        file_stem(&cell.configuration),
        file_stem(&cell.workload),
        cell.clients,
        t.trial
    )
}

/// One counted trial's summary and results CSV, BenchBase's `Benchmark Type` being
/// `benchmark`: the name its files start with and the files; `None` for a trial that did not
/// end `done` with a throughput.
pub(crate) fn write_trial(
    store: &Store,
    cell: &StoredCell,
    t: &TrialData,
    benchmark: &str,
    dir: &Path,
) -> Result<Option<(String, Vec<PathBuf>)>, ReportError> {
    let mut files = Vec::new();
    if t.status != TrialStatus::Done || t.tps.is_none() {
        return Ok(None);
    }
    let name = trial_file_name(cell, t);
    let hist = store.histogram(t.trial_id)?;
    let lat = t.latency_ms.as_ref();
    let us = |p: f64, from_summary: Option<f64>| -> serde_json::Value {
        match &hist {
            Some(h) if p == 0.0 => h.min_us().into(),
            Some(h) if p == 100.0 => h.max_us().into(),
            Some(h) => h.percentile_us(p).into(),
            None => from_summary.map_or(serde_json::Value::Null, |ms| {
                ((ms * 1000.0).round() as i64).into()
            }),
        }
    };
    let start_ms = parse_rfc3339(&t.started_at)
        .and_then(|s| s.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    let duration_s = t.duration_s.unwrap_or(0.0);
    let tps = t.tps.unwrap_or(0.0);
    let summary = serde_json::json!({
        "Start timestamp (milliseconds)": start_ms,
        "Current Timestamp (milliseconds)": start_ms.map(|s| s + (duration_s * 1000.0) as u64),
        "Elapsed Time (nanoseconds)": (duration_s * 1e9) as u64,
        "DBMS Type": dbms_type(&cell.target),
        "DBMS Version": t.server_version,
        "Benchmark Type": benchmark,
        "Measured Requests": (tps * duration_s).round() as u64,
        "Latency Distribution": {
            "Minimum Latency (microseconds)": us(0.0, lat.map(|l| l.min)),
            "25th Percentile Latency (microseconds)": us(25.0, None),
            "Median Latency (microseconds)": us(50.0, lat.map(|l| l.p50)),
            "Average Latency (microseconds)": lat.map(|l| (l.avg * 1000.0).round() as i64),
            "75th Percentile Latency (microseconds)": us(75.0, None),
            "90th Percentile Latency (microseconds)": us(90.0, lat.map(|l| l.p90)),
            "95th Percentile Latency (microseconds)": us(95.0, lat.map(|l| l.p95)),
            "99th Percentile Latency (microseconds)": us(99.0, lat.map(|l| l.p99)),
            "Maximum Latency (microseconds)": us(100.0, lat.map(|l| l.max)),
        },
        "Throughput (requests/second)": tps,
        // Failed events are retried or end their client: completed ones are good.
        "Goodput (requests/second)": tps,
        "isolation": serde_json::Value::Null,
        "scalefactor": serde_json::Value::Null,
        "terminals": cell.clients.to_string(),
    });
    let path = dir.join(format!("{name}.summary.json"));
    let text = serde_json::to_string_pretty(&summary).unwrap_or_default() + "\n";
    write_atomic(&path, text.as_bytes())?;
    files.push(path);

    let mut csv = RESULTS_HEADER.join(",") + "\n";
    // The column of the trial's sampled percentile.
    let pct = t.percentile.unwrap_or(95.0);
    let col = [(50.0, 5), (90.0, 7), (95.0, 8), (99.0, 9)]
        .iter()
        .find(|(q, _)| (q - pct).abs() < 1e-9)
        .map(|(_, c)| *c);
    let mut start = 0.0;
    for s in store.intervals(t.trial_id)? {
        let mut row = vec![String::new(); RESULTS_HEADER.len()];
        // BenchBase's time is the start of the window.
        row[0] = format!("{start:.0}");
        row[1] = format!("{:.3}", s.tps);
        if let Some(c) = col {
            row[c] = format!("{:.3}", s.latency_pct_ms);
        }
        csv.push_str(&row.join(","));
        csv.push('\n');
        start = s.t_s;
    }
    let path = dir.join(format!("{name}.results.csv"));
    write_atomic(&path, csv.as_bytes())?;
    files.push(path);
    Ok(Some((name, files)))
}
