//! Every output format of the demo run, compared with committed snapshots.

use dbrig_report::charts::workload_timeline;
use dbrig_report::{
    Metric, cells_csv, latency_chart, report_json, report_markdown, report_text, throughput_chart,
    trials_csv,
};

use crate::{assert_snapshot, demo};

#[test]
fn console_text() {
    let (_, data) = demo();
    assert_snapshot("demo.txt", &dbrig_report::report_text(&data).unwrap());
}

#[test]
fn console_text_by_tps_against_another_baseline() {
    let (_, mut data) = demo();
    data.set_metric(Metric::Tps);
    data.set_baseline("32").unwrap();
    assert_snapshot("demo-tps-baseline-32.txt", &report_text(&data).unwrap());
}

#[test]
fn markdown() {
    let (_, data) = demo();
    assert_snapshot("demo.md", &report_markdown(&data).unwrap());
}

#[test]
fn json() {
    let (_, data) = demo();
    let text = serde_json::to_string_pretty(&report_json(&data).unwrap()).unwrap() + "\n";
    assert_snapshot("demo.json", &text);
}

#[test]
fn csv() {
    let (store, data) = demo();
    assert_snapshot("demo-trials.csv", &trials_csv(&data));
    assert_snapshot("demo-cells.csv", &cells_csv(&data));
    let intervals = dbrig_report::export::intervals_csv(&store, &data).unwrap();
    // Every trial's samples with the trial's start time: the first data row.
    assert_eq!(
        intervals.lines().next().unwrap(),
        "run_id,configuration,workload,clients,trial,trial_started_at,t_s,threads,tps,qps,\
         reads_ps,writes_ps,other_ps,percentile,latency_pct_ms,errors_ps,reconnects_ps,backlog"
    );
    assert_snapshot("demo-intervals.csv", &intervals);
    let json = dbrig_report::export::intervals_json(&store, &data).unwrap();
    let first = &json[0];
    assert_eq!(first["configuration"], "off");
    assert_eq!(first["workload"], "oltp_read_only");
    assert!(
        first["started_at"]
            .as_str()
            .unwrap()
            .starts_with("2023-11-14T")
    );
    assert!(first["samples"][0]["t_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn svg_charts() {
    let (store, data) = demo();
    assert_snapshot(
        "demo-throughput-update_index.svg",
        &throughput_chart(&data, "update_index").unwrap().unwrap(),
    );
    assert_snapshot(
        "demo-latency-update_index.svg",
        &latency_chart(&data, "update_index").unwrap().unwrap(),
    );
    let timeline = workload_timeline(&store, &data, "update_index")
        .unwrap()
        .expect("the demo trials have interval samples");
    assert_snapshot("demo-timeline-update_index.svg", &timeline);
}

#[test]
fn unknown_baseline_is_refused_with_the_known_names() {
    let (_, mut data) = demo();
    let err = data.set_baseline("16").unwrap_err().to_string();
    assert!(err.contains("off, 8, 32"), "{err}");
}

/// `--format benchbase`: BenchBase's summary keys and results columns, per counted trial.
#[test]
fn benchbase_export() {
    let (store, data) = demo();
    let dir = tempfile::tempdir().unwrap();
    let files = dbrig_report::benchbase::write_benchbase(&store, &data, dir.path()).unwrap();
    // Every finished OLTP trial, two files each (the failed and the invalid trial have none).
    let done = data
        .stored
        .iter()
        .flat_map(|c| &c.trials)
        .filter(|t| t.status == dbrig_store::TrialStatus::Done)
        .count();
    assert_eq!(done, 104);
    assert_eq!(files.len(), 2 * done);
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("off-oltp_read_only-1c-t1.summary.json")).unwrap(),
    )
    .unwrap();
    for key in [
        "Benchmark Type",
        "DBMS Type",
        "DBMS Version",
        "Latency Distribution",
        "Throughput (requests/second)",
        "Goodput (requests/second)",
        "terminals",
    ] {
        assert!(summary.get(key).is_some(), "{key}");
    }
    assert_eq!(summary["DBMS Type"], "MYSQL");
    assert_eq!(summary["terminals"], "1");
    let dist = &summary["Latency Distribution"];
    assert!(dist["Median Latency (microseconds)"].as_i64().unwrap() > 0);
    assert_snapshot(
        "benchbase-off-oltp_read_only-1c-t1.summary.json",
        &(serde_json::to_string_pretty(&summary).unwrap() + "\n"),
    );
    let csv =
        std::fs::read_to_string(dir.path().join("off-oltp_read_only-1c-t1.results.csv")).unwrap();
    assert!(
        csv.starts_with(
            "Time (seconds),Throughput (requests/second),Average Latency (millisecond)"
        )
    );
    assert_snapshot("benchbase-off-oltp_read_only-1c-t1.results.csv", &csv);
}

/// `--format sysbench-json`: the intervals in the shape of sysbench's report_json hook.
#[test]
fn sysbench_json_export() {
    let (store, data) = demo();
    let v = dbrig_report::export::sysbench_json(&store, &data).unwrap();
    let trials = v.as_array().unwrap();
    // Every trial that sampled intervals: the 104 finished ones and the invalid one (exports
    // list every trial; none is averaged here).
    assert_eq!(trials.len(), 105);
    let first = &trials[0]["intervals"][0];
    let keys: Vec<&String> = first.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "errors",
            "latency",
            "qps",
            "reconnects",
            "threads",
            "time",
            "tps"
        ]
    );
    assert_eq!(first["time"], 1.0);
    assert_eq!(first["tps"], 99.0);
    assert_eq!(first["latency"], 1.97);
    assert_snapshot(
        "demo-sysbench.json",
        &(serde_json::to_string_pretty(&trials[0]).unwrap() + "\n"),
    );
}
