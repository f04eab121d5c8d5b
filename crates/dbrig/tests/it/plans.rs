//! Plans: matrix execution, interleaving, failed targets, Ctrl-C and resume.

use std::path::Path;
use std::process::{Command, Stdio};

use dbrig_store::{Store, TrialStatus};

use crate::{dbrig, error_line, ok, text};

fn plan_text(b_target: &str, trials: u32, duration: f64) -> String {
    format!(
        r#"
name = "it-plan"
trials = {trials}
duration = {duration}
clients = [1, 2]
baseline = "A"
[run]
rand-seed = 3
[[configuration]]
name = "A"
target = "${{A_TARGET}}"
[[configuration]]
name = "B"
target = "{b_target}"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 300
[[workload]]
name = "oltp_read_only"
[workload.options]
table-size = 300
"#
    )
}

/// (configuration, workload, clients, trial, status) of every stored trial, in start order.
fn stored_trials(results: &Path) -> Vec<(String, String, u32, u32, TrialStatus)> {
    let store = Store::open(results).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let mut rows = Vec::new();
    for c in store.cells(run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            rows.push((
                t.started_at.clone(),
                (
                    c.configuration.clone(),
                    c.workload.clone(),
                    c.clients,
                    t.trial,
                    t.status,
                ),
            ));
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter().map(|(_, r)| r).collect()
}

fn check_plan_on(a_target: &str, b_target: &str) {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(&plan, plan_text(b_target, 3, 0.3)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            plan.to_str().unwrap(),
            "--define",
            &format!("A_TARGET={a_target}"),
        ])
        .arg(format!("--out={}", out.path().display()))
        .output()
        .unwrap();
    let o = ok(o);
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        report.contains("oltp_point_select") && report.contains("oltp_read_only"),
        "{report}"
    );
    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(trials.len(), 2 * 2 * 2 * 3, "{trials:?}");
    assert!(
        trials.iter().all(|t| t.4 == TrialStatus::Done),
        "{trials:?}"
    );
    // Interleaved: configurations alternate A B A B, and every cell's trial 1 runs before any trial 2.
    let confs: Vec<&str> = trials.iter().map(|t| t.0.as_str()).collect();
    assert!(confs.chunks(2).all(|p| p == ["A", "B"]), "{confs:?}");
    let first_trial_2 = trials.iter().position(|t| t.3 == 2).unwrap();
    assert_eq!(first_trial_2, 8, "{trials:?}");
}

#[test]
fn two_configurations_two_workloads_two_client_counts_three_trials_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let a = format!("sqlite:{}", dir.path().join("a.sqlite").display());
    let b = format!("sqlite:{}", dir.path().join("b.sqlite").display());
    check_plan_on(&a, &b);
}

#[test]
fn two_configurations_on_mariadb() {
    let a = crate::mysql::TestDb::new("plan_a");
    let b = crate::mysql::TestDb::new("plan_b");
    check_plan_on(&a.url(), &b.url());
}

#[test]
fn dry_run_touches_nothing() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(&plan, plan_text("mock:", 2, 1.0)).unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--define",
            "A_TARGET=mock:",
            "--dry-run",
        ],
    ));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("Cells (8)") && s.contains("Trials: 16") && s.contains("dry run"),
        "{s}"
    );
    assert!(!out.path().join("results.db").exists());
}

#[test]
fn a_target_that_is_down_fails_its_cells_and_the_plan_goes_on() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(&plan, plan_text("mock:?refuse=1", 1, 0.2)).unwrap();
    let o = dbrig(
        out.path(),
        &["run", plan.to_str().unwrap(), "--define", "A_TARGET=mock:"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        error_line(&o).contains("4 of 8 trial(s) failed"),
        "{}",
        text(&o)
    );
    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(
        trials
            .iter()
            .filter(|t| t.0 == "A" && t.4 == TrialStatus::Done)
            .count(),
        4
    );
    assert_eq!(
        trials
            .iter()
            .filter(|t| t.0 == "B" && t.4 == TrialStatus::Failed)
            .count(),
        4
    );
}

#[test]
fn ctrl_c_saves_the_trial_and_resume_finishes_without_duplicates() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(&plan, plan_text("mock:?latency_us=200", 2, 0.8)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            plan.to_str().unwrap(),
            "--define",
            "A_TARGET=mock:?latency_us=100",
        ])
        .arg(format!("--out={}", out.path().display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first trial is stored (its line on stderr), however slow a busy
    // machine is: no fixed wait.
    let (seen, rest) = crate::stderr_until(&mut child, |l| l.starts_with("dbrig: [1/16 "));
    crate::interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let err = seen.join("\n") + "\n" + &rest.join().unwrap();
    assert_eq!(o.status.code(), Some(130), "{err}");
    let before = stored_trials(&out.path().join("results.db"));
    let done_before = before.iter().filter(|t| t.4 == TrialStatus::Done).count();
    assert!((1..16).contains(&done_before), "{before:?}");
    // The trial in flight is stored as interrupted (none if the signal fell between trials).
    let interrupted = before
        .iter()
        .filter(|t| t.4 == TrialStatus::Interrupted)
        .count();
    assert!(interrupted <= 1, "{before:?}");

    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--define",
            "A_TARGET=mock:?latency_us=100",
            "--resume",
        ],
    ));
    assert!(
        text(&o).contains(&format!("{done_before} already done")),
        "{}",
        text(&o)
    );
    let after = stored_trials(&out.path().join("results.db"));
    let done: Vec<_> = after.iter().filter(|t| t.4 == TrialStatus::Done).collect();
    assert_eq!(done.len(), 16, "{after:?}");
    // Exactly one finished trial per (cell, trial number): nothing duplicated, nothing lost.
    let mut keys: Vec<_> = done
        .iter()
        .map(|t| (t.0.clone(), t.1.clone(), t.2, t.3))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 16);
    let store = Store::open(&out.path().join("results.db")).unwrap();
    assert_eq!(
        store.runs().unwrap().len(),
        1,
        "resume continues the same run"
    );
    assert_eq!(store.runs().unwrap()[0].status.as_str(), "done");
}

#[test]
fn single_run_ctrl_c_is_stored_as_interrupted() {
    let out = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=500",
            "--time",
            "30",
            "--format",
            "json",
            "--report-interval",
            "1",
        ])
        .arg(format!("--out={}", out.path().display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once an interval line shows the run serving (not after a fixed time a
    // loaded machine may not give it).
    let tps_of = |l: &str| -> Option<f64> {
        l.strip_prefix("[ ")?
            .split(" tps: ")
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let (seen, rest) = crate::stderr_until(&mut child, |l| tps_of(l).is_some_and(|t| t > 0.0));
    let tps = tps_of(seen.last().unwrap()).unwrap();
    crate::interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let err = rest.join().unwrap();
    assert_eq!(o.status.code(), Some(130), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "interrupted", "{v}");
    // Everything served before the signal is counted: at least the 1 s interval seen (its
    // rate times its nominal second, less a tenth for the interval's real length).
    let transactions = v["transactions"].as_u64().unwrap() as f64;
    assert!(
        transactions >= 0.9 * tps,
        "{transactions} < {tps} tps × 1 s\n{v}"
    );
    // Stopped after that interval and well before the 30 s asked for.
    let duration = v["duration_s"].as_f64().unwrap();
    assert!((1.0..30.0).contains(&duration), "{v}");
}

#[test]
fn example_plans_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans");
    let out = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        seen += 1;
        let o = ok(dbrig(
            out.path(),
            &[
                "run",
                path.to_str().unwrap(),
                "--define",
                "A_TARGET=mock:",
                "--define",
                "B_TARGET=mock:",
                "--dry-run",
            ],
        ));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("Trials:"),
            "{}",
            text(&o)
        );
    }
    assert!(seen >= 4);
}

/// A plan of a micro-benchmark and a TPC-H power test over two configurations. The
/// before-trial hook sends Ctrl-C to dbrig (its pid in `pidfile`) before the 4th trial, so
/// the interruption lands mid-plan however fast or slow the machine is.
fn kinds_plan(a: &str, b: &str, dir: &Path) -> String {
    let count = dir.join("hook-count");
    let pidfile = dir.join("dbrig.pid");
    format!(
        r#"
name = "it-kinds"
trials = 2
duration = 5                     # OLTP only: micro and TPC-H trials run their benchmark once
clients = [1, 4]                 # OLTP only
baseline = "A"
[[configuration]]
name = "A"
target = "{a}"
[[configuration]]
name = "B"
target = "{b}"
[[workload]]
name = "scan_filter"
[workload.options]
rows = 20000
wide-rows = 2000
loop-rows = 100
loop-queries = 10
runs = 1
[[workload]]
name = "tpch-power"
[workload.options]
sf = 0.01
queries = ["1", "6", "14"]
[environment.hooks]
before-trial = "n=$(cat {count} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {count}; if [ $n -eq 4 ] && [ -f {pidfile} ]; then kill -INT $(cat {pidfile}); sleep 1; fi"
"#,
        count = count.display(),
        pidfile = pidfile.display(),
    )
}

#[test]
fn micro_and_tpch_workloads_over_two_configurations_resume_and_report_on_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let a = format!("sqlite:{}", out.path().join("a.sqlite").display());
    let b = format!("sqlite:{}", out.path().join("b.sqlite").display());
    check_kinds_plan(&a, &b, out.path());
}

#[test]
fn micro_and_tpch_workloads_over_two_configurations_resume_and_report_on_mariadb() {
    let a = crate::mysql::TestDb::new(&format!("plan_kinds_a_{}", std::process::id()));
    let b = crate::mysql::TestDb::new(&format!("plan_kinds_b_{}", std::process::id()));
    let out = tempfile::tempdir().unwrap();
    check_kinds_plan(&a.url(), &b.url(), out.path());
}

/// Run [`kinds_plan`], interrupted before its 4th trial, resume it, check what is stored
/// and the report.
fn check_kinds_plan(a: &str, b: &str, dir: &Path) {
    let out = dir;
    let plan = out.join("plan.toml");
    std::fs::write(&plan, kinds_plan(a, b, out)).unwrap();
    let dry = ok(dbrig(out, &["run", plan.to_str().unwrap(), "--dry-run"]));
    let s = String::from_utf8_lossy(&dry.stdout);
    // One cell per configuration and workload: the client counts are for OLTP workloads.
    assert!(s.contains("Cells (4)") && s.contains("Trials: 8"), "{s}");

    let child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", plan.to_str().unwrap()])
        .arg(format!("--out={}", out.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::fs::write(out.join("dbrig.pid"), child.id().to_string()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let results = out.join("results.db");
    let before = stored_trials(&results);
    let done_before = before.iter().filter(|t| t.4 == TrialStatus::Done).count();
    assert_eq!(done_before, 3, "{before:?}\n{}", text(&o));
    assert!(
        before.iter().all(|t| t.4 != TrialStatus::Failed),
        "{before:?}\n{}",
        text(&o)
    );

    let o = ok(dbrig(out, &["run", plan.to_str().unwrap(), "--resume"]));
    assert!(text(&o).contains("3 already done"), "{}", text(&o));
    let after = stored_trials(&results);
    let done: Vec<_> = after.iter().filter(|t| t.4 == TrialStatus::Done).collect();
    assert_eq!(done.len(), 8, "{after:?}");
    let mut keys: Vec<_> = done.iter().map(|t| (&t.0, &t.1, t.2, t.3)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 8, "nothing duplicated: {after:?}");
    assert!(done.iter().all(|t| t.2 == 1), "{after:?}");

    // Each kind's results are stored where the single-run commands keep them.
    let store = Store::open(&results).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    // The TPC-H chart of the power trial running, redrawn after each of its queries.
    let live = out.join(format!("run-{}-tpch-live.svg", run.0));
    let svg = std::fs::read_to_string(&live).unwrap_or_else(|e| panic!("{}: {e}", live.display()));
    assert!(
        svg.contains("<svg") && svg.contains("TPC-H power test"),
        "{svg}"
    );
    for c in store.cells(run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            if t.status != TrialStatus::Done {
                continue;
            }
            let extra = &crate::trial_json(&t);
            match c.workload.as_str() {
                "scan_filter" => {
                    assert_eq!(extra["micro"]["benchmark"], "scan_filter");
                    // The plan's 20000 rows over the one run's seconds.
                    let item = &extra["micro"]["items"][0];
                    assert_eq!(item["rows"], 20000, "{item}");
                    let secs = item["wall_s"][0].as_f64().unwrap();
                    assert_eq!(item["wall_s"].as_array().map(Vec::len), Some(1), "{item}");
                    assert_eq!(item["rows_per_s"].as_f64(), Some(20000.0 / secs), "{item}");
                }
                "tpch_power" => {
                    let q = extra["tpch_power"]["queries"].as_array().unwrap();
                    assert_eq!(q.len(), 3, "{extra}");
                    assert!(q.iter().all(|q| q["status"] == "ok"), "{extra}");
                }
                w => panic!("unexpected workload {w}"),
            }
        }
    }

    // The report, rebuilt from the results database: one table per benchmark, a row per
    // item with both configurations' medians and the seeds' ratio columns, and verdicts.
    let o = ok(dbrig(out, &["report", &run.0.to_string()]));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    for needle in [
        "scan_filter: median of each item, in its own unit",
        "tpch_power: TPC-H power test, seconds per query",
        "B/A*100",
        "(B/A*100)-100",
        "count(*) WHERE i>0",
        "Power@Size",
        "too few trials",
    ] {
        assert!(report.contains(needle), "{needle} missing:\n{report}");
    }
    // The DBT-3 table: Q1 with A's mean, min and max seconds and B's, each with its ratio to
    // A beside it — all numbers.
    let q1 = report
        .lines()
        .find(|l| l.starts_with("Q1 "))
        .unwrap_or_else(|| panic!("no Q1 row:\n{report}"));
    let cols: Vec<&str> = q1.split_whitespace().collect();
    assert_eq!(cols.len(), 10, "{q1}");
    for c in &cols[1..] {
        c.trim_end_matches('*')
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{q1}"));
    }
    // Rows/s of a micro-benchmark item: the item, its unit, A, B and both seed ratios.
    let scan = report
        .lines()
        .find(|l| l.starts_with("sum(i) ") && l.contains("rows/s"))
        .unwrap_or_else(|| panic!("no sum(i) row:\n{report}"));
    assert_eq!(scan.split_whitespace().count(), 6, "{scan}");
}

#[test]
fn memory_load_example_plan_runs_on_mariadb() {
    let a = crate::mysql::TestDb::new(&format!("plan_mem_a_{}", std::process::id()));
    let b = crate::mysql::TestDb::new(&format!("plan_mem_b_{}", std::process::id()));
    let out = tempfile::tempdir().unwrap();
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans/memory-load.toml");
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--define",
            &format!("A_TARGET={}", a.url()),
            "--define",
            &format!("B_TARGET={}", b.url()),
            "--set",
            "trials=2",
            "--set",
            "workload.memory_load.options.rows=20000",
        ],
    ));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        report.contains("memory_load: median of each item, in its own unit"),
        "{report}"
    );
    for item in ["INT ", "CHAR(20) "] {
        let row = report
            .lines()
            .find(|l| l.starts_with(item))
            .unwrap_or_else(|| panic!("no {item} row:\n{report}"));
        assert!(row.contains("rows/s"), "{row}");
    }
    let trials = stored_trials(&out.path().join("results.db"));
    assert_eq!(trials.len(), 4, "{trials:?}");
    assert!(
        trials.iter().all(|t| t.4 == TrialStatus::Done),
        "{trials:?}"
    );
    // The MEMORY tables are gone afterwards (created and dropped by every trial).
    let left = crate::mysql::sql(&format!(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema IN ('{}', '{}') AND table_name = 't1'",
        a.0, b.0
    ));
    assert_eq!(left.trim(), "0");
}

#[test]
fn aria_example_plan_runs_on_two_managed_mariadb_servers() {
    let out = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let plan = root.join("plans/aria-tmp-groupby.toml");
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--define",
            &format!("PWD={}", root.canonicalize().unwrap().display()),
            "--set",
            "trials=1",
            "--set",
            "workload.tmp_groupby.options.rows-log2=10",
        ],
    ));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        report.contains("tmp_groupby: median of each item")
            && report.contains("aria-16k/aria-8k*100"),
        "{report}"
    );
    for q in ["Q1", "Q6"] {
        assert!(
            report
                .lines()
                .any(|l| l.starts_with(&format!("{q} ")) && l.contains(" s ")),
            "{report}"
        );
    }
    // Each configuration ran on its own server, with its own page size.
    let store = Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let mut sizes = Vec::new();
    for c in store.cells(run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            assert_eq!(t.status, TrialStatus::Done, "{:?}", t.reason);
            let vars = &crate::trial_json(&t)["server_settings"]["variables"];
            sizes.push((
                c.configuration.clone(),
                vars["aria_block_size"].as_str().unwrap_or("?").to_owned(),
            ));
        }
    }
    sizes.sort();
    assert_eq!(
        sizes,
        [
            ("aria-16k".to_owned(), "16384".to_owned()),
            ("aria-8k".to_owned(), "8192".to_owned())
        ]
    );
}

#[test]
fn tpch_throughput_workload_in_a_plan_on_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "it-throughput"
trials = 1
clients = [1]
[[configuration]]
name = "A"
target = "sqlite:{0}/a.sqlite"
[[configuration]]
name = "B"
target = "sqlite:{0}/b.sqlite"
[[workload]]
name = "tpch-throughput"
[workload.options]
sf = 0.01
streams = 2
refresh = true
"#,
            out.path().display()
        ),
    )
    .unwrap();
    let o = ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        report.contains("tpch_throughput: median over trials"),
        "{report}"
    );
    for row in ["Q1 ", "Q22 ", "RF1 ", "Ts ", "Throughput@Size "] {
        assert!(
            report.lines().any(|l| l.starts_with(row)),
            "{row}:\n{report}"
        );
    }
    let store = Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    for c in store.cells(run).unwrap() {
        let t = &store.trials(c.id).unwrap()[0];
        assert_eq!(t.status, TrialStatus::Done, "{:?}", t.reason);
        let tp = &crate::trial_json(t)["tpch_throughput"];
        assert_eq!(tp["streams"], 2);
        assert_eq!(tp["query_streams"].as_array().unwrap().len(), 2);
        // (S × 22 × 3600 / Ts) × SF with this trial's own Ts, S = 2, SF = 0.01.
        let ts = tp["ts_s"].as_f64().unwrap();
        assert!(ts > 0.0, "{tp}");
        let expected = 2.0 * 22.0 * 3600.0 / ts * 0.01;
        let got = tp["throughput_at_size"].as_f64().unwrap();
        assert!(
            (got - expected).abs() <= 1e-9 * expected,
            "{got} ≠ {expected}: {tp}"
        );
    }
}

/// A TPC-H power test with its refresh functions changes the data: under the fresh-data
/// lifecycle every trial starts from the loaded data again, so every trial uses refresh
/// set 1 (without the restore, trial 2 would find set 1 used and take set 2).
#[test]
fn tpch_power_with_refresh_gets_fresh_data_on_a_managed_server() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "it-tpch-fresh"
trials = 2
clients = [1]
[[server]]
name = "pg"
engine = "postgres"
params = ["shared_buffers=32MB"]
[[configuration]]
name = "A"
server = "pg"
[environment]
lifecycle = "fresh-data"
[[workload]]
name = "tpch-power"
[workload.options]
sf = 0.01
queries = ["6"]
refresh = true
"#,
    )
    .unwrap();
    let o = ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let store = Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let mut sets = Vec::new();
    for c in store.cells(run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            assert_eq!(t.status, TrialStatus::Done, "{:?}\n{}", t.reason, text(&o));
            let p = &crate::trial_json(&t)["tpch_power"];
            assert_eq!(p["rf1"]["status"], "ok", "{p}");
            assert_eq!(p["rf2"]["status"], "ok", "{p}");
            sets.push(p["refresh_set"].as_u64());
        }
    }
    assert_eq!(sets, [Some(1), Some(1)], "{}", text(&o));
}

/// The plan's HTML page is rewritten after every query of a power trial, as its live chart
/// is: a per-query shell hook (which runs before each query, after the page of the query
/// before was written) keeps a copy of the page as it was then.
#[test]
fn the_html_page_follows_a_power_trial_query_by_query() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    let snaps = out.join("snaps");
    std::fs::create_dir(&snaps).unwrap();
    let lite = format!("sqlite:{}", out.join("live.sqlite").display());
    let plan = out.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "live-page"
clients = [1]
[[configuration]]
name = "A"
target = "{lite}"
[[workload]]
name = "tpch-power"
[workload.options]
sf = 0.01
queries = ["1", "6", "14"]
[workload.options.controls.all]
pre-shell = "n=$(ls {snaps} | wc -l); cp {out}/run-*.html {snaps}/$n.html"
[environment]
os-stats-interval = 0
"#,
            snaps = snaps.display(),
            out = out.display(),
        ),
    )
    .unwrap();
    ok(dbrig(out, &["run", plan.to_str().unwrap()]));
    let page = |n: usize| std::fs::read_to_string(snaps.join(format!("{n}.html"))).unwrap();
    // Before the first query: the page is there (written when the run began), nothing live.
    let first = page(0);
    assert!(first.contains("dbrig report: live-page"), "{first}");
    assert!(!first.contains("Running now"), "{first}");
    // Before the third query (Q6 then Q14 in stream order: 14, 6, 1): the two queries so far.
    let third = page(2);
    assert!(
        third.contains("Running now: A tpch_power 1 clients trial 1"),
        "{third}"
    );
    let live = &third[third.find("Running now").unwrap()..];
    assert!(
        live.contains("Q14") && live.contains("Q6") && !live.contains("Q1<"),
        "{live}"
    );
    assert!(live.contains("<svg"), "{live}");
    // When the trial is stored, the page is the stored trials' page again.
    let store = Store::open(&out.join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let end = std::fs::read_to_string(out.join(format!("run-{}.html", run.0))).unwrap();
    assert!(
        !end.contains("Running now") && end.contains("TPC-H power test"),
        "{end}"
    );
}

/// A plan's `[report] noise-band` reaches the report it prints and the one `dbrig report`
/// rebuilds later; `--noise-band` overrides it; a negative band is refused in one line,
/// in the plan and on the command line.
#[test]
fn the_plans_noise_band_is_the_reports_and_a_negative_one_is_refused() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    // 4 trials a side: the fewest that give verdicts, and with them the verdicts' notes.
    let plan_toml = plan_text("mock:", 4, 0.2)
        .replace("clients = [1, 2]", "clients = [1]")
        .replace("[run]", "[report]\nnoise-band = 2.5\n[run]");
    std::fs::write(&plan, &plan_toml).unwrap();
    let o = ok(dbrig(
        out.path(),
        &["run", plan.to_str().unwrap(), "--define", "A_TARGET=mock:"],
    ));
    let beyond = |o: &std::process::Output, band: &str| {
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            s.contains(&format!("the whole CI is beyond ±{band} %")),
            "±{band} %:\n{s}"
        );
    };
    beyond(&o, "2.5");
    beyond(&ok(dbrig(out.path(), &["report", "latest"])), "2.5");
    beyond(
        &ok(dbrig(
            out.path(),
            &["report", "latest", "--noise-band", "7"],
        )),
        "7",
    );
    // The correction for many comparisons: Benjamini-Hochberg unless asked for Holm, on
    // the command line as in a plan; anything else refused in one line.
    let p_header = |o: &std::process::Output, label: &str| {
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(s.contains(&format!("p ({label})")), "p ({label}):\n{s}");
    };
    p_header(&o, "BH");
    p_header(
        &ok(dbrig(
            out.path(),
            &["report", "latest", "--correction", "holm"],
        )),
        "Holm",
    );
    let o = dbrig(
        out.path(),
        &["report", "latest", "--correction", "bonferroni"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("fdr (Benjamini-Hochberg"), "{}", text(&o));
    // Given as a negative number it is still the option's value, and refused.
    for bad in ["-1", "nan", "inf", "x"] {
        let o = dbrig(out.path(), &["report", "latest", "--noise-band", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(
            text(&o).contains(&format!(
                "'{bad}' is not a noise band: give a percentage from 0 to 1000 (2.0 for ±2 %)"
            )),
            "{bad}: {}",
            text(&o)
        );
    }
    std::fs::write(
        &plan,
        plan_toml.replace("noise-band = 2.5", "noise-band = -2"),
    )
    .unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &[
            "run",
            plan.to_str().unwrap(),
            "--define",
            "A_TARGET=mock:",
            "--dry-run",
        ],
    ));
    assert!(
        e.contains("plan.toml:")
            && e.contains("[report] noise-band = -2: give a percentage from 0 to 1000"),
        "{e}"
    );
}
