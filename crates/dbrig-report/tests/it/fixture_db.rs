//! The results database an older dbrig wrote (`dbrig-store`'s schema-1 fixture: one run of
//! every kind, migrated on open), reported in every format: real data, each kind in its own
//! unit.
//!
//! Runs: 1 `run` OLTP, 2 `micro memory_load`, 3 `micro scan_filter`, 4 `tpch power`,
//! 5 `tpch throughput`, 6 perfrun (every query failed on one side), 7 a failed OLTP run, 8 a
//! plan of OLTP, tmp_groupby, power and throughput on A and B, 9 an interrupted OLTP run,
//! 10 an OLTP run left `running` by a killed dbrig, 11 perfrun.

use dbrig_report::{
    Format, Rendered, Request, SingleFormat, is_single_run, render, single_run_json,
    single_run_report,
};
use dbrig_store::{RunId, Store};

use crate::assert_no_empty_chart;

fn migrated() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../dbrig-store/tests/fixtures/results-schema1.db"
        ),
        &path,
    )
    .unwrap();
    let store = Store::open(&path).unwrap();
    (dir, store)
}

fn rendered(store: &Store, runs: &[i64], format: Format, dir: &std::path::Path) -> String {
    let req = Request::new(runs.iter().map(|&r| RunId(r)).collect(), format, dir);
    match render(store, &req).unwrap_or_else(|e| panic!("runs {runs:?} as {format}: {e}")) {
        Rendered::Stdout(s) => s,
        Rendered::Written { files } => files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect(),
    }
}

#[test]
fn every_stored_run_renders_in_every_format() {
    let (dir, store) = migrated();
    for run in 1..=11 {
        for format in Format::ALL {
            let out = rendered(&store, &[run], format, dir.path());
            if format == Format::Html || format == Format::Svg {
                assert_no_empty_chart(&out);
            }
            if matches!(format, Format::Text | Format::Markdown) {
                assert!(!out.contains("n/a"), "run {run} as {format}:\n{out}");
            }
        }
    }
}

#[test]
fn single_runs_reprint_what_their_commands_printed() {
    let (_dir, store) = migrated();
    let text = |run: i64| single_run_report(&store, RunId(run), SingleFormat::Text).unwrap();
    for run in [1, 2, 3, 4, 5, 6, 7, 9, 10, 11] {
        assert!(is_single_run(&store, RunId(run)).unwrap(), "run {run}");
    }
    assert!(!is_single_run(&store, RunId(8)).unwrap());

    let oltp = text(1);
    assert!(oltp.starts_with("SQL statistics:"), "{oltp}");
    assert!(oltp.contains("Statement latency (ms):") && oltp.contains("point_select"));
    let v = single_run_json(&store, RunId(1)).unwrap();
    assert!(!v["statements"].as_array().unwrap().is_empty());
    assert!(!v["intervals"].as_array().unwrap().is_empty());
    assert_eq!(v["workload"], "oltp_read_write");

    assert!(text(2).contains("INT:") && text(2).contains(" rows/s "));
    let scan = text(3);
    assert!(
        scan.contains(" ms/query ") && scan.contains("skipped: avg(i+sqrt"),
        "{scan}"
    );
    assert!(text(4).contains("Power@Size = 7589.78"), "{}", text(4));
    let tp = text(5);
    assert!(
        tp.contains("Ts = ") && tp.contains("Throughput@Size = "),
        "{tp}"
    );
    assert!(text(6).contains("error on a: MySQL error 1146"));
    assert!(text(7).contains("failed, nothing measured: nothing answered"));
    assert!(text(9).contains("interrupted: these are the figures measured until then"));
    assert_eq!(
        text(10),
        "run 10 (oltp, oltp_point_select): abandoned, no trial recorded\n"
    );
    let p = text(11);
    assert!(
        p.contains("(two.sql)") && p.contains("Planning_Time_ms"),
        "{p}"
    );
}

#[test]
fn the_plan_of_four_kinds_reports_each_in_its_unit_with_qphh() {
    let (dir, store) = migrated();
    let text = rendered(&store, &[8], Format::Text, dir.path());
    let order: Vec<usize> = [
        "\nOLTP\n",
        "\nMicro-benchmarks\n",
        "\nTPC-H power test\n",
        "\nTPC-H throughput test\n",
    ]
    .iter()
    .map(|s| text.find(s).unwrap_or_else(|| panic!("{s}:\n{text}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(
        !text.contains("not counted"),
        "every trial is fine:\n{text}"
    );
    assert!(
        text.contains("\nQ1    s "),
        "tmp_groupby in seconds:\n{text}"
    );
    assert!(text.contains("\nQphH@Size "), "{text}");
    let html = rendered(&store, &[8], Format::Html, dir.path());
    assert_no_empty_chart(&html);
    // OLTP: throughput and latency against clients and OS statistics (the plan sampled no
    // intervals); the power test's bar chart (its trials were too short for OS samples).
    assert_eq!(crate::svgs(&html).len(), 4, "{html}");
    // Two single runs compared: the power run and the throughput run side by side.
    let both = rendered(&store, &[4, 5], Format::Text, dir.path());
    assert!(both.contains("run4") && both.contains("run5"), "{both}");
    assert!(!both.contains("QPS"), "{both}");
}
