//! Every kind in every format, in its own unit: a plan mixing OLTP, micro-benchmarks, TPC-H
//! power and throughput tests and a perfrun (stored through `dbrig_store::testing`'s writer
//! with typed results, as the executor stores them), and one run of each single command.

use std::path::Path;

use dbrig_core::results::TrialResult;
use dbrig_report::{
    Format, Rendered, ReportData, ReportError, Request, SingleFormat, fixture, perfrun_report,
    render, single_run_json, single_run_report,
};
use dbrig_store::{RunId, Store};

use crate::{assert_no_empty_chart, svgs};

/// Render `run` in `format` to stdout text.
fn text(store: &Store, runs: &[RunId], format: Format) -> String {
    let req = Request::new(runs.to_vec(), format, "/nonexistent");
    match render(store, &req).unwrap() {
        Rendered::Stdout(s) => s,
        other => panic!("{format}: {other:?}"),
    }
}

/// Render `run` in a format that writes files, into `dir`; the files written.
fn files(store: &Store, runs: &[RunId], format: Format, dir: &Path) -> Vec<std::path::PathBuf> {
    let req = Request::new(runs.to_vec(), format, dir);
    match render(store, &req).unwrap() {
        Rendered::Written { files } => files,
        other => panic!("{format}: {other:?}"),
    }
}

/// The text between `from` and the next line that starts a section title (or the end).
fn section<'a>(text: &'a str, from: &str, titles: &[&str]) -> &'a str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from} in\n{text}"));
    let rest = &text[start + from.len()..];
    let end = titles
        .iter()
        .filter_map(|t| rest.find(&format!("\n{t}\n")))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

const SECTIONS: [&str; 5] = [
    "OLTP",
    "Micro-benchmarks",
    "TPC-H power test",
    "TPC-H throughput test",
    "perfrun",
];

fn mixed() -> (Store, RunId) {
    let mut store = Store::open_in_memory().unwrap();
    let run = fixture::mixed_plan(&mut store).unwrap();
    (store, run)
}

#[test]
fn a_plan_mixing_kinds_shows_one_section_per_kind_in_plan_order() {
    let (store, run) = mixed();
    let out = text(&store, &[run], Format::Text);
    let at: Vec<usize> = SECTIONS
        .iter()
        .map(|s| {
            out.find(&format!("\n{s}\n{}\n", "=".repeat(s.len())))
                .unwrap_or_else(|| panic!("section {s} missing:\n{out}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "plan order: {at:?}");
    assert!(!out.contains("n/a"), "{out}");
    // All trials are fine: nothing is said to be left out.
    assert!(!out.contains("not counted"), "{out}");
    // QPS only where OLTP is.
    for s in &SECTIONS[1..] {
        let body = section(&out, &format!("\n{s}\n"), &SECTIONS);
        assert!(!body.contains("QPS"), "{s} shows QPS:\n{body}");
    }
    let oltp = section(&out, "\nOLTP\n", &SECTIONS);
    assert!(oltp.contains("oltp_read_only: QPS by clients"), "{oltp}");
    assert!(oltp.contains("110.00"), "B is 10 % faster: {oltp}");
    // Micro items in their own units, with the derived figures.
    let micro = section(&out, "\nMicro-benchmarks\n", &SECTIONS);
    for line in ["INT       rows/s", "INT       MB/s", "INT       cycles/row"] {
        assert!(micro.contains(line), "{line}:\n{micro}");
    }
    let q1 = micro
        .lines()
        .find(|l| l.starts_with("Q1    s "))
        .unwrap_or_else(|| panic!("groupby Q1 in seconds:\n{micro}"));
    assert!(q1.contains("90.91"), "B takes 1/1.1 of A's time: {q1}");
    // TPC-H: the seed table, Power@Size, and QphH@Size for both configurations.
    let power = section(&out, "\nTPC-H power test\n", &SECTIONS);
    assert!(
        power.contains("A mean s") && power.contains("Power@Size"),
        "{power}"
    );
    let tp = section(&out, "\nTPC-H throughput test\n", &SECTIONS);
    assert!(tp.contains("Throughput@Size") && tp.contains("Ts "), "{tp}");
    let qphh = tp
        .lines()
        .find(|l| l.starts_with("QphH@Size"))
        .unwrap_or_else(|| panic!("QphH@Size:\n{tp}"));
    let figures: Vec<f64> = qphh
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap())
        .collect();
    let data = ReportData::load(&store, run).unwrap();
    let metrics = dbrig_report::tpch::tpch_metrics(&data);
    let expected =
        (metrics[0].power_at_size.unwrap() * metrics[0].throughput_at_size.unwrap()).sqrt();
    assert!((figures[0] - expected).abs() < 0.01, "{qphh} vs {expected}");
    assert_eq!(figures.len(), 3, "A, B and B/A: {qphh}");
    // perfrun: the counters that differ, B against the baseline A.
    let perfrun = section(&out, "\nperfrun\n", &SECTIONS);
    assert!(perfrun.contains("perfrun: B vs A (baseline)"), "{perfrun}");
    assert!(perfrun.contains("Handler_read_rnd"), "{perfrun}");
    assert!(
        !perfrun.contains("Handler_read_next"),
        "same on both sides: {perfrun}"
    );
}

#[test]
fn markdown_has_the_same_sections() {
    let (store, run) = mixed();
    let md = text(&store, &[run], Format::Markdown);
    let at: Vec<usize> = SECTIONS
        .iter()
        .map(|s| md.find(&format!("\n## {s}\n")).expect(s))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    assert!(!md.contains("n/a"));
    assert!(md.contains("| QphH@Size |"), "{md}");
    assert!(md.contains("```text\nperfrun run"), "{md}");
}

#[test]
fn json_gives_every_value_its_unit() {
    let (store, run) = mixed();
    let v: serde_json::Value = serde_json::from_str(&text(&store, &[run], Format::Json)).unwrap();
    let kinds: Vec<&str> = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["oltp", "micro", "tpch_power", "tpch_throughput", "perfrun"]
    );
    for c in v["cells"].as_array().unwrap() {
        let (kind, unit) = (
            c["kind"].as_str().unwrap(),
            c["value_unit"].as_str().unwrap(),
        );
        match kind {
            "oltp" => assert_eq!(unit, "QPS"),
            _ => assert!(
                ["rows/s", "MB/s", "cycles/row", "s", "ms/query"].contains(&unit)
                    || unit.ends_with("@Size"),
                "{kind} in {unit}"
            ),
        }
    }
    let groupby_q1 = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["workload"] == "groupby Q1" && c["configuration"] == "A")
        .unwrap();
    assert_eq!(groupby_q1["value_unit"], "s");
    assert!(groupby_q1["summary"]["median"].as_f64().unwrap() > 6.0);
    let metrics = v["tpch_metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2);
    assert!(metrics.iter().all(|m| m["qphh_at_size"].as_f64().is_some()));
    assert_eq!(v["tpch_power"][0]["configurations"][1]["name"], "B");
    let perfrun = &v["perfrun"][0];
    assert_eq!(
        (
            &perfrun["a"]["configuration"],
            &perfrun["b"]["configuration"]
        ),
        (&"A".into(), &"B".into())
    );
    assert_eq!(
        perfrun["pairs"].as_array().unwrap().len(),
        4,
        "no filter given"
    );
}

#[test]
fn csv_has_a_value_and_a_unit_per_kind() {
    let (store, run) = mixed();
    let cells = text(&store, &[run], Format::Csv);
    let head: Vec<&str> = cells.lines().next().unwrap().split(',').collect();
    assert!(!head.iter().any(|h| h.starts_with("qps")), "{head:?}");
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (kind, item, unit, median) = (col("kind"), col("item"), col("unit"), col("value_median"));
    let rows: Vec<Vec<&str>> = cells
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    for r in &rows {
        let expected_units: &[&str] = match r[kind] {
            "oltp" => &["QPS"],
            "micro" => &["rows/s", "MB/s", "cycles/row", "s"],
            "tpch_power" => &["s", "Power@Size"],
            "tpch_throughput" => &["s", "Throughput@Size"],
            "perfrun" => &["s"],
            "tpch" => &["Power@Size", "Throughput@Size", "QphH@Size"],
            other => panic!("kind {other}"),
        };
        assert!(expected_units.contains(&r[unit]), "{r:?}");
        assert!(!r[median].is_empty(), "every cell has a value: {r:?}");
    }
    assert_eq!(
        rows.iter()
            .filter(|r| r[kind] == "tpch" && r[item] == "QphH@Size")
            .count(),
        2
    );
    let trials = text(&store, &[run], Format::CsvTrials);
    let head: Vec<&str> = trials.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (kind, unit, value, qps) = (col("kind"), col("unit"), col("value"), col("qps"));
    for r in trials
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
    {
        assert!(!r[value].is_empty(), "{r:?}");
        match r[kind] {
            "oltp" => assert_eq!((r[unit], r[value]), ("QPS", r[qps])),
            _ => assert!(r[unit] != "QPS" && r[qps].is_empty(), "{r:?}"),
        }
    }
}

#[test]
fn html_and_svg_draw_only_charts_with_data_and_only_oltp_against_clients() {
    let (store, run) = mixed();
    let dir = tempfile::tempdir().unwrap();
    let page = files(&store, &[run], Format::Html, dir.path());
    assert_eq!(page, [dir.path().join(format!("report-{run}.html"))]);
    let html = std::fs::read_to_string(&page[0]).unwrap();
    assert!(html.contains("Metric: <b>QPS</b>"), "OLTP cells exist");
    for s in SECTIONS {
        assert!(html.contains(&format!("<h2>{s}</h2>")), "{s}");
    }
    assert!(!html.contains("n/a"));
    // OLTP: throughput, latency, timeline, OS; power test: the bar chart and OS.
    assert_eq!(svgs(&html).len(), 6);
    assert_no_empty_chart(&html);
    let against_clients = html.matches("vs clients").count();
    assert_eq!(
        against_clients, 2,
        "only oltp_read_only is drawn against clients"
    );
    assert!(html.contains("TPC-H power test: seconds per query"));

    let charts = files(&store, &[run], Format::Svg, &dir.path().join("charts"));
    let names: Vec<String> = charts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "oltp_read_only-throughput.svg",
            "oltp_read_only-latency.svg",
            "oltp_read_only-timeline.svg",
            "oltp_read_only-os.svg",
            "tpch_power-tpch-power.svg",
            "tpch_power-os.svg"
        ]
    );
    for p in &charts {
        assert_no_empty_chart(&std::fs::read_to_string(p).unwrap());
    }
}

#[test]
fn a_report_without_oltp_says_no_metric_and_draws_nothing_empty() {
    let mut store = Store::open_in_memory().unwrap();
    let runs = fixture::single_runs(&mut store).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for run in [runs.micro, runs.throughput, runs.perfrun] {
        let page = files(&store, &[run], Format::Html, dir.path());
        let html = std::fs::read_to_string(&page[0]).unwrap();
        assert!(!html.contains("Metric: <b>QPS"), "run {run}");
        assert!(html.contains("Each item in its own unit."), "run {run}");
        assert!(svgs(&html).is_empty(), "nothing to draw for run {run}");
        let text = text(&store, &[run], Format::Markdown);
        assert!(!text.contains("QPS") && !text.contains("n/a"), "{text}");
    }
    // The power test's bar chart has data.
    let page = files(&store, &[runs.power], Format::Html, dir.path());
    let html = std::fs::read_to_string(&page[0]).unwrap();
    assert_eq!(svgs(&html).len(), 1);
    assert_no_empty_chart(&html);
}

#[test]
fn a_single_oltp_run_reprints_sysbench_blocks_and_its_statements() {
    let mut store = Store::open_in_memory().unwrap();
    let runs = fixture::single_runs(&mut store).unwrap();
    let out = single_run_report(&store, runs.oltp, SingleFormat::Text).unwrap();
    assert!(
        out.starts_with("SQL statistics:\n    queries performed:\n"),
        "{out}"
    );
    for line in [
        "General statistics:",
        "Latency (ms):",
        "    workload:                            oltp_read_only",
        "    random seed:                         42",
        "    warm-up:                             1s (not counted)",
        "    target:                              mysql://bench@127.0.0.1:3306/default",
        "    server version:                      10.11.6-MariaDB",
        "Statement latency (ms):",
    ] {
        assert!(out.contains(line), "{line}:\n{out}");
    }
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("point_select "))
    );
    // `dbrig report RUN` prints the same.
    assert_eq!(text(&store, &[runs.oltp], Format::Text), out);

    let v = single_run_json(&store, runs.oltp).unwrap();
    assert_eq!(v["statements"][0]["statement"], "point_select");
    assert_eq!(v["intervals"].as_array().unwrap().len(), 5);
    assert_eq!(v["run_id"], runs.oltp.0);
    assert_eq!(v["status"], "done");
    assert_eq!(v["dbrig_version"], "0.1.0-test");
    assert_eq!(v["workload_options"]["table_size"], 10000);
    assert_eq!(v["started_at"], "2023-11-14T22:13:30.000Z");
    assert_eq!(v["finished_at"], "2023-11-14T22:13:40.000Z");
    assert_eq!(v["seed"], 42);
    // Printed with its figures rounded by the one rule.
    let json = text(&store, &[runs.oltp], Format::Json);
    let mut v = v;
    dbrig_report::figures::round_json(&mut v);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), v);
    assert_eq!(v["intervals"][1]["tps"], 204.7);
    // Other formats of a single run: the plan report, in QPS.
    let csv = text(&store, &[runs.oltp], Format::Csv);
    assert!(csv.lines().nth(1).unwrap().contains(",QPS,"), "{csv}");
}

#[test]
fn single_micro_and_tpch_runs_reprint_their_commands() {
    let mut store = Store::open_in_memory().unwrap();
    let runs = fixture::single_runs(&mut store).unwrap();
    let result = |run: RunId| {
        let cell = &store.cells(run).unwrap()[0];
        store.trials(cell.id).unwrap()[0].result.clone().unwrap()
    };
    let micro = single_run_report(&store, runs.micro, SingleFormat::Text).unwrap();
    let TrialResult::Micro(m) = result(runs.micro) else {
        panic!()
    };
    assert_eq!(
        micro,
        dbrig_report::micro::result_text(&m, "mysql://bench@127.0.0.1:3306/default")
    );
    assert!(
        micro.contains(" ms/query ") && micro.contains(" cycles/row"),
        "{micro}"
    );
    let v = single_run_json(&store, runs.micro).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["benchmark"].as_str()),
        (Some("micro"), Some("scan_filter"))
    );
    assert_eq!(v["items"][1]["unit"], "ms/query");

    let power = single_run_report(&store, runs.power, SingleFormat::Text).unwrap();
    assert!(
        power.starts_with("TPC-H power test, SF 0.01 on "),
        "{power}"
    );
    assert!(
        power.contains("3+1w") && power.contains("Power@Size = 319.59"),
        "{power}"
    );
    let v = single_run_json(&store, runs.power).unwrap();
    assert_eq!(v["queries"].as_array().unwrap().len(), 6);

    let tp = single_run_report(&store, runs.throughput, SingleFormat::Text).unwrap();
    assert!(tp.contains("Throughput@Size = 438.54"), "{tp}");
    assert!(
        tp.contains(&format!(
            "Power@Size = 319.59 (stored run {}), QphH@Size = 374.37",
            runs.power
        )),
        "{tp}"
    );
    // The plan report of the throughput run: QphH@Size from the power test it named.
    let md = text(&store, &[runs.throughput], Format::Markdown);
    assert!(md.contains("| QphH@Size | 374.37 |"), "{md}");
}

#[test]
fn a_perfrun_run_applies_the_filter_given_at_collection() {
    let mut store = Store::open_in_memory().unwrap();
    let runs = fixture::single_runs(&mut store).unwrap();
    let out = single_run_report(&store, runs.perfrun, SingleFormat::Text).unwrap();
    assert!(
        out.contains(&format!(
            "Filter: {} (2 of 4 query/temperature pairs match)",
            fixture::PERFRUN_FILTER
        )),
        "{out}"
    );
    assert_eq!(out.matches("Query: ").count(), 2);
    assert!(
        !out.contains("(q2.sql)"),
        "q2 runs under a millisecond: {out}"
    );
    assert_eq!(text(&store, &[runs.perfrun], Format::Text), out);
    // Another filter, or none at all.
    let all = perfrun_report(&store, runs.perfrun, Some(""), SingleFormat::Text).unwrap();
    assert_eq!(all.matches("Query: ").count(), 4);
    let warm = perfrun_report(
        &store,
        runs.perfrun,
        Some("temperature == 'warm'"),
        SingleFormat::Json,
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&warm).unwrap();
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
    assert_eq!(v["pairs"][0]["outcome"], "compared");
    assert_eq!(v["pairs"][0]["counters"][0]["name"], "Handler_read_rnd");
    assert!(
        v["pairs"][0]["execution_time_a_s"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    assert!(
        v["pairs"][0]["execution_time_b_s"].as_f64().is_some(),
        "{v}"
    );
    let err = perfrun_report(
        &store,
        runs.perfrun,
        Some("Handler_reed_rnd_a > 0"),
        SingleFormat::Text,
    )
    .unwrap_err();
    assert!(
        matches!(err, ReportError::FilterUnknownName { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("did you mean Handler_read_rnd_a"),
        "{err}"
    );
    // A run of another kind is not a perfrun.
    let err = perfrun_report(&store, runs.oltp, None, SingleFormat::Text).unwrap_err();
    assert!(matches!(err, ReportError::NotPerfrun { .. }), "{err}");
}

/// Server settings in every report format: each configuration's key settings and durability,
/// the settings that differ (the port, an instance setting, left out), and the flags for
/// relaxed durability and a durability difference the plan does not compare.
#[test]
fn server_settings_and_durability_in_every_format() {
    let mut store = dbrig_store::Store::open_in_memory().unwrap();
    let run = dbrig_report::fixture::mixed_plan(&mut store).unwrap();
    let data = dbrig_report::ReportData::load(&store, run).unwrap();
    let text = dbrig_report::report_text(&data).unwrap();
    let warning = "WARNING: the configurations differ in durability (innodb_flush_log_at_trx_commit) \
                   and the plan does not compare it: not the seeds' equal-opportunity comparison";
    // At the top (the preamble) and with the settings table.
    assert_eq!(text.matches(warning).count(), 2, "{text}");
    assert!(text.contains("RELAXED DURABILITY in B: commits can be lost in a crash"));
    assert!(text.contains(
        "durability of A: full (innodb_flush_log_at_trx_commit=1, innodb_doublewrite=ON)"
    ));
    assert!(text.contains(
        "durability of B: RELAXED by innodb_flush_log_at_trx_commit=2 \
         (all: innodb_flush_log_at_trx_commit=2, innodb_doublewrite=ON)"
    ));
    let differ = text
        .split("Settings that differ between configurations")
        .nth(1)
        .expect("the differ table");
    let rows: Vec<&str> = differ
        .lines()
        .skip(3)
        .take_while(|l| !l.contains("variables differ"))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        rows,
        ["innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit"]
    );
    assert!(differ.contains("2 of 8 variables differ"));
    let md = dbrig_report::report_markdown(&data).unwrap();
    assert!(
        md.contains("| innodb_flush_log_at_trx_commit | 1 | 2 |"),
        "{md}"
    );
    let json = dbrig_report::report_json(&data).unwrap();
    let settings = json["server_settings"].as_array().unwrap();
    assert_eq!(settings.len(), 2);
    assert_eq!(settings[1]["configuration"], "B");
    assert_eq!(settings[1]["durability_relaxed"], true);
    assert_eq!(settings[1]["variables"]["port"], "3307");
    assert_eq!(json["durability_flags"].as_array().unwrap().len(), 2);
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(html.contains("<h2>Server settings</h2>"));
    assert!(html.contains(r#"<p class="flag">RELAXED DURABILITY in B"#));
}

/// A prepare step's load figures: kept with one trial, shown in text with `--with loads` and
/// always (collapsed) in the HTML page; none recorded, none shown.
#[test]
fn prepare_loads_are_shown_on_request() {
    use dbrig_core::results::{LoadFigures, TableLoad};
    use dbrig_report::records::{With, load_records, records_text};
    let mut store = dbrig_store::Store::open_in_memory().unwrap();
    let run = dbrig_report::fixture::mixed_plan(&mut store).unwrap();
    let mut data = dbrig_report::ReportData::load(&store, run).unwrap();
    assert!(load_records(&data).is_empty());
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(!html.contains("Loads of the prepare steps"));
    let figures = LoadFigures {
        tables: vec![TableLoad {
            table: "sbtest1".into(),
            rows: 10_000,
            bytes: 2_000_000,
            seconds: 0.5,
        }],
        rows: 10_000,
        bytes: 2_000_000,
        seconds: 1.0,
    };
    let trial = &mut data.stored[0].trials[0];
    let mut env = trial.environment.as_deref().cloned().unwrap_or_default();
    env.load = Some(figures);
    trial.environment = Some(std::sync::Arc::new(env));
    let loads = load_records(&data);
    assert_eq!(loads.len(), 1);
    assert_eq!(
        loads[0].body,
        "sbtest1: 10000 rows, 2.0 MB in 0.50 s = 20000 rows/s, 4.0 MB/s\n\
         total: 10000 rows, 2.0 MB in 1.00 s = 10000 rows/s, 2.0 MB/s"
    );
    assert!(
        loads[0].title.contains("prepare step before trial 1"),
        "{}",
        loads[0].title
    );
    assert_eq!(records_text(&data, With::default()), None);
    let text = records_text(&data, "loads".parse().unwrap()).unwrap();
    assert!(text.contains("\nLoads of the prepare steps\n"), "{text}");
    assert!(text.contains("  sbtest1: 10000 rows"), "{text}");
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert!(html.contains("<h2>Loads of the prepare steps</h2>"));
}

/// Hook outputs and EXPLAIN plans: collapsed in the HTML page, in text with `--with`.
#[test]
fn hooks_and_plans_are_shown_on_request() {
    use dbrig_report::records::{With, hook_records, plan_records, records_text};
    let mut store = dbrig_store::Store::open_in_memory().unwrap();
    let run = dbrig_report::fixture::mixed_plan(&mut store).unwrap();
    let data = dbrig_report::ReportData::load(&store, run).unwrap();
    let hooks = hook_records(&data);
    // The first trial of each OLTP cell: 2 client counts × 2 configurations.
    assert_eq!(hooks.len(), 4);
    assert_eq!(
        hooks[0].title,
        "A / oltp_read_only / 1 clients / trial 1: before-trial (plan hook, ok)"
    );
    assert_eq!(
        hooks[0].body,
        "$ echo 3 > /proc/sys/vm/drop_caches && free -m\nMem: 16384 901 used"
    );
    let plans = plan_records(&data);
    // Six queries of each configuration's power test, one plan each.
    assert_eq!(plans.len(), 12);
    assert_eq!(plans[0].title, "A / tpch_power / trial 1 / Q14: plan p1");
    assert_eq!(plans[0].body, "SCAN lineitem");
    assert_eq!(records_text(&data, With::default()), None);
    let with: With = "hooks,plans".parse().unwrap();
    let text = records_text(&data, with).unwrap();
    assert!(text.contains("\nHook outputs\n============\n"));
    assert!(text.contains("\nEXPLAIN plans\n=============\n"));
    assert!(text.contains("  Mem: 16384 904 used"));
    assert!("hooks,explain".parse::<With>().is_err());
    let html = dbrig_report::render_html(&store, &data).unwrap();
    assert_eq!(html.matches("<details>").count(), 16);
    // minijinja escapes `/` in HTML text.
    assert!(
        html.contains("<summary>B &#x2f; tpch_power &#x2f; trial 1 &#x2f; Q1: plan p1</summary>"),
        "{html}"
    );
}
