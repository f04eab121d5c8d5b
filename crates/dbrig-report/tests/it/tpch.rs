//! The TPC-H report from stored power tests: two configurations, a baseline, a timeout shown
//! as `>T`, an error and a wrong answer named as such, and the cut-off bar chart.

use std::time::{Duration, UNIX_EPOCH};

use dbrig_core::results::{OsSample, OsSpan, PowerReport, QueryOutcome, QueryStatus, TrialResult};
use dbrig_report::tpch::{Outcome, TpchReport, tpch_chart, tpch_table};
use dbrig_report::{ReportData, fixture};
use dbrig_store::testing::writer;
use dbrig_store::{NewCell, NewRun, NewTrial, RunId, RunKind, RunStatus, Store, TrialStatus};

use crate::assert_snapshot;

/// A stored query with launcher detail: runs of `micros`, reduced to `reduced`.
fn query(
    name: &str,
    status: QueryStatus,
    reduced: u64,
    runs: &[u64],
    timeout: Option<f64>,
) -> QueryOutcome {
    fixture::with_detail(fixture::step(name, reduced, status), runs, timeout)
}

fn power(version: &str, queries: Vec<QueryOutcome>) -> PowerReport {
    let mut r = fixture::power_report(version, queries, None);
    r.refresh_set = Some(1);
    r.rf1 = Some(QueryOutcome {
        rows: 60,
        ..fixture::step("RF1", 20_000, QueryStatus::Ok)
    });
    r.rf2 = Some(QueryOutcome {
        rows: 60,
        ..fixture::step("RF2", 10_000, QueryStatus::Ok)
    });
    r
}

/// A run's OS figures from `start_s` for half a second, with `user` % user CPU.
fn os_span(start_s: f64, user: f64) -> OsSpan {
    OsSpan {
        start_s,
        os: OsSample {
            t_s: start_s + 0.5,
            cpu_user_pct: user,
            disk_read_bytes_per_s: 2e6,
            process_cpu_pct: Some(150.0),
            process_rss_bytes: Some(64 << 20),
            ..OsSample::default()
        },
    }
}

fn store_two_configurations() -> (Store, RunId) {
    let mut store = Store::open_in_memory().unwrap();
    let at = |s| UNIX_EPOCH + Duration::from_secs(1_700_000_000 + s);
    let run = writer(&mut store)
        .begin_run(&NewRun {
            kind: RunKind::Plan,
            name: "tpch-ab",
            started_at: at(0),
            options: &serde_json::json!({}),
            host: &serde_json::json!({"hostname": "bench-1"}),
            dbrig_version: "0.1.0",
            command_line: &["dbrig".to_owned(), "run".to_owned(), "tpch.toml".to_owned()],
            plan_text: None,
        })
        .unwrap();
    let a = power(
        "10.11.19-MariaDB",
        vec![
            query(
                "14",
                QueryStatus::Ok,
                100_000,
                &[90_000, 110_000, 100_000],
                Some(2.0),
            ),
            query(
                "2",
                QueryStatus::Ok,
                1_000_000,
                &[1_000_000, 1_100_000, 900_000],
                Some(2.0),
            ),
            query("9", QueryStatus::Error, 0, &[0], Some(2.0)),
            query(
                "20",
                QueryStatus::Ok,
                400_000,
                &[400_000, 400_000, 400_000],
                Some(2.0),
            ),
        ],
    );
    let b = power(
        "11.4.2-MariaDB",
        vec![
            query(
                "14",
                QueryStatus::Ok,
                50_000,
                &[50_000, 40_000, 60_000],
                Some(2.0),
            ),
            query(
                "2",
                QueryStatus::Timeout,
                2_000_000,
                &[2_000_000],
                Some(2.0),
            ),
            query(
                "9",
                QueryStatus::Ok,
                300_000,
                &[300_000, 300_000, 300_000],
                Some(2.0),
            ),
            query("20", QueryStatus::Wrong, 100_000, &[100_000], Some(2.0)),
        ],
    );
    // A's Q14 recorded the OS figures of each of its runs (warm-up included).
    let mut a = a;
    for (k, r) in a.queries[0]
        .detail
        .as_mut()
        .unwrap()
        .runs
        .iter_mut()
        .enumerate()
    {
        r.os = Some(Box::new(os_span(k as f64, 10.0 * (k + 1) as f64)));
    }
    for (i, (conf, report)) in [("A", a), ("B", b)].into_iter().enumerate() {
        let cell = writer(&mut store)
            .ensure_cell(
                run,
                &NewCell {
                    cell_key: conf,
                    configuration: conf,
                    workload: "tpch_power",
                    clients: 1,
                    options: &serde_json::json!({}),
                    target: "mysql://root@127.0.0.1:3306/test",
                },
            )
            .unwrap();
        let version = report.server_version.clone();
        let result = TrialResult::TpchPower(report);
        writer(&mut store)
            .record_trial(
                cell,
                &NewTrial {
                    trial: 1,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some(&version),
                    started_at: at(10 + i as u64 * 10),
                    finished_at: at(15 + i as u64 * 10),
                    measurements: None,
                    result: Some(&result),
                    environment: None,
                },
            )
            .unwrap();
    }
    writer(&mut store)
        .finish_run_at(run, RunStatus::Done, None, at(60))
        .unwrap();
    (store, run)
}

#[test]
fn tpch_table_with_baseline_timeout_error_and_wrong_answer() {
    let (store, run) = store_two_configurations();
    let report = TpchReport::load(&store, &[run], Some("A"))
        .unwrap()
        .unwrap();
    assert_eq!(report.baseline, "A");
    let b = &report.configurations[1];
    assert_eq!(b.server_version, "11.4.2-MariaDB");
    let q2 = b.queries.iter().find(|q| q.query == "2").unwrap();
    assert_eq!(q2.outcome, Outcome::Timeout);
    assert_eq!(q2.runs, 1, "warm-ups are not counted");
    let text = tpch_table(&report).to_text();
    assert!(text.contains(">2.000"), "{text}");
    assert!(text.contains("wrong") && text.contains("error"), "{text}");
    assert_snapshot("tpch-ab.txt", &text);
    // Another baseline turns the ratios around.
    let other = TpchReport::load(&store, &[run], Some("B"))
        .unwrap()
        .unwrap();
    assert_eq!(other.baseline, "B");
    assert_ne!(tpch_table(&other).to_text(), text);
}

#[test]
fn tpch_chart_cuts_the_axis_at_the_longest_completed_plus_20_percent() {
    let (store, run) = store_two_configurations();
    let report = TpchReport::load(&store, &[run], None).unwrap().unwrap();
    let svg = tpch_chart(&report).unwrap();
    // Longest completed: Q2 on A, 1.0 s → the axis ends at 1.2 s; the timeout's bar is drawn
    // past it and marked.
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .collect();
    assert!(texts.contains(&"&gt;T"), "timeout mark: {texts:?}");
    assert!(
        texts.contains(&"E") && texts.contains(&"W"),
        "error and wrong marks"
    );
    // The top tick is 1.2 (longest completed 1.0 s + 20 %), nothing above it.
    let ticks: Vec<f64> = texts
        .iter()
        .filter(|t| t.contains('.'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let top = ticks.iter().copied().fold(0.0, f64::max);
    assert!((top - 1.2).abs() < 1e-9, "{ticks:?}");
    assert_snapshot("tpch-ab.svg", &svg);
}

#[test]
fn the_html_page_has_the_tpch_section() {
    let (store, run) = store_two_configurations();
    let data = ReportData::load(&store, run).unwrap();
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(html.contains("<h2>TPC-H power test</h2>"));
    assert!(html.contains("11.4.2-MariaDB"));
    assert!(html.contains("&gt;2.000"));
    // A run without power tests has no such section.
    let (store, data) = crate::demo();
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(!html.contains("TPC-H power test"));
}

/// The OS statistics of every query run: `report --with os` and the HTML page list each run
/// of each query that recorded them, warm-ups marked.
#[test]
fn os_statistics_per_query_run_in_the_plan_report() {
    use dbrig_report::records::{With, os_records, records_text};
    let (store, run) = store_two_configurations();
    let data = ReportData::load(&store, run).unwrap();
    let records = os_records(&data);
    assert_eq!(records.len(), 1, "only A recorded OS figures: {records:?}");
    assert!(
        records[0]
            .title
            .starts_with("A / tpch_power / 1 clients / trial 1")
    );
    let rows: Vec<&str> = records[0]
        .body
        .lines()
        .filter(|l| l.starts_with("Q14"))
        .collect();
    assert_eq!(rows.len(), 4, "{}", records[0].body);
    // Runs 1-3, then the warm-up; each with its own figures (20 % user CPU for run 2), 2 MB/s
    // read, one and a half CPUs of server, 64 MiB.
    assert!(
        rows[1].split_whitespace().collect::<Vec<_>>()[1..]
            .starts_with(&["2", "1.000", "0.500", "20.0"]),
        "{rows:?}"
    );
    assert!(rows[3].contains("warm-up") && rows[0].contains("150.0") && rows[0].contains("64.0"));
    let with: With = "os".parse().unwrap();
    let text = records_text(&data, with).unwrap();
    assert!(text.contains("OS statistics per query run"), "{text}");
    assert!("hooks,plans,os".parse::<With>().unwrap().os);
    assert!(
        "cpu"
            .parse::<With>()
            .unwrap_err()
            .to_string()
            .contains("os")
    );
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(
        html.contains("<h2>OS statistics per query run</h2>"),
        "{html}"
    );
}

/// While a power trial runs, the plan's page gets its queries so far in the live section of
/// the page rendered for the stored trials; the marker stays for the next query.
#[test]
fn the_live_section_goes_into_the_running_pages_marker() {
    use dbrig_report::html::{LIVE_MARKER, live_power_html, with_live};
    let page = format!("<html><body><p>run</p>\n{LIVE_MARKER}\n<h2>later</h2></body></html>");
    let report = power(
        "10.11.19-MariaDB",
        vec![query("14", QueryStatus::Ok, 100_000, &[100_000], None)],
    );
    let live = live_power_html("A tpch_power 1 clients trial 2", &report).unwrap();
    assert!(
        live.contains("Running now: A tpch_power 1 clients trial 2"),
        "{live}"
    );
    assert!(live.contains("<svg") && live.contains("Q14"), "{live}");
    let written = with_live(&page, &live);
    assert!(written.find(&live).unwrap() < written.find("<h2>later</h2>").unwrap());
    // The next query replaces nothing of the stored page: it starts from the same page.
    assert_eq!(with_live(&page, &live), written);
    assert!(written.contains(LIVE_MARKER));
    // A page that is not running (no marker) is left as it is.
    assert_eq!(with_live("<html></html>", &live), "<html></html>");
}

/// Two single `dbrig tpch power` runs (both configurations named `default`), one run per
/// query: named by server version and run, one seconds column each, Q1 … Q22 order (and the
/// stream order on request).
#[test]
fn single_runs_side_by_side_are_named_by_server_and_show_one_column() {
    let mut store = Store::open_in_memory().unwrap();
    let at = |s| UNIX_EPOCH + Duration::from_secs(1_700_000_000 + s);
    let mut runs = Vec::new();
    for (i, version) in ["10.11.19-MariaDB", "16.4"].into_iter().enumerate() {
        let run = writer(&mut store)
            .begin_run(&NewRun {
                kind: RunKind::TpchPower,
                name: "tpch power",
                started_at: at(i as u64 * 100),
                options: &serde_json::json!({}),
                host: &serde_json::json!({}),
                dbrig_version: "0.1.0",
                command_line: &["dbrig".to_owned()],
                plan_text: None,
            })
            .unwrap();
        let report = power(
            version,
            ["14", "2", "9"]
                .iter()
                .map(|q| fixture::step(q, 1_234_567 * (i as u64 + 1), QueryStatus::Ok))
                .collect(),
        );
        let cell = writer(&mut store)
            .ensure_cell(
                run,
                &NewCell {
                    cell_key: "default",
                    configuration: "default",
                    workload: "tpch_power",
                    clients: 1,
                    options: &serde_json::json!({}),
                    target: "sqlite::memory:",
                },
            )
            .unwrap();
        writer(&mut store)
            .record_trial(
                cell,
                &NewTrial {
                    trial: 1,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some(version),
                    started_at: at(i as u64 * 100 + 1),
                    finished_at: at(i as u64 * 100 + 50),
                    measurements: None,
                    result: Some(&TrialResult::TpchPower(report)),
                    environment: None,
                },
            )
            .unwrap();
        runs.push(run);
    }
    let mut report = TpchReport::load(&store, &runs, None).unwrap().unwrap();
    let names: Vec<&str> = report
        .configurations
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let (a, b) = (runs[0].0, runs[1].0);
    assert_eq!(
        names,
        [
            format!("10.11.19-MariaDB (run {a})"),
            format!("16.4 (run {b})")
        ]
    );
    let table = tpch_table(&report);
    assert_eq!(
        table.header,
        [
            "query".to_owned(),
            format!("10.11.19-MariaDB (run {a}) s"),
            format!("16.4 (run {b}) s"),
            "ratio".to_owned()
        ]
    );
    let first: Vec<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(first, ["Q2", "Q9", "Q14", "RF1", "RF2", "Power@Size"]);
    assert_eq!(table.rows[0][1..], ["1.235", "2.469", "2.00"]);
    report.order = dbrig_report::tpch::QueryOrder::Stream;
    let first: Vec<String> = tpch_table(&report)
        .rows
        .iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(first, ["RF1", "Q14", "Q2", "Q9", "RF2", "Power@Size"]);
    // The baseline by run id, by the old `NAME@RUN`, or by the name shown; an unknown one is
    // an error naming the configurations.
    for given in [
        b.to_string(),
        format!("default@{b}"),
        format!("16.4 (run {b})"),
    ] {
        let r = TpchReport::load(&store, &runs, Some(&given))
            .unwrap()
            .unwrap();
        assert_eq!(r.baseline, format!("16.4 (run {b})"), "{given}");
    }
    let e = TpchReport::load(&store, &runs, Some("nope")).unwrap_err();
    assert!(
        e.to_string().contains("no configuration named \"nope\""),
        "{e}"
    );
}
