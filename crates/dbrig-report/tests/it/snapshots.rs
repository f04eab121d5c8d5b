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
