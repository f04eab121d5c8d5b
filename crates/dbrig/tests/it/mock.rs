//! The mock engine: whole runs with exact, deterministic counts and scheduled faults.

use crate::{dbrig, error_line, json, ok, text};

#[test]
fn read_write_counts_are_exact() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            "mock:",
            "--events",
            "100",
            "--time",
            "0",
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    assert_eq!(v["transactions"], 100);
    assert_eq!(v["queries"]["read"], 1400);
    assert_eq!(v["queries"]["write"], 400);
    assert_eq!(v["queries"]["other"], 200);
    assert_eq!(v["queries"]["total"], 2000);
    assert_eq!(v["status"], "done");
    assert_eq!(v["target"], "mock:");
    assert_eq!(v["server_version"], "mock-1.0");
}

#[test]
fn deterministic_counts_for_every_workload_shape() {
    // statements per event (read, write, other) with default options, sysbench's table
    let expected = [
        ("oltp_point_select", (1, 0, 0)),
        ("oltp_read_only", (14, 0, 2)),
        ("oltp_write_only", (0, 4, 2)),
        ("oltp_update_index", (0, 1, 0)),
        ("oltp_update_non_index", (0, 1, 0)),
        ("oltp_delete", (0, 1, 0)),
        ("oltp_insert", (0, 1, 0)),
        ("select_random_points", (1, 0, 0)),
        ("select_random_ranges", (1, 0, 0)),
        ("select_batch", (1, 0, 0)),
    ];
    let out = tempfile::tempdir().unwrap();
    for (w, (r, wr, oth)) in expected {
        let v = json(&ok(dbrig(
            out.path(),
            &[
                "run",
                w,
                "--target",
                "mock:",
                "--events",
                "50",
                "--time",
                "0",
                "--threads",
                "3",
                "--format",
                "json",
            ],
        )));
        assert_eq!(v["transactions"], 50, "{w}");
        assert_eq!(v["queries"]["read"], 50 * r, "{w}");
        assert_eq!(v["queries"]["write"], 50 * wr, "{w}");
        assert_eq!(v["queries"]["other"], 50 * oth, "{w}");
    }
}

#[test]
fn retryable_errors_restart_the_event_and_are_counted() {
    let out = tempfile::tempdir().unwrap();
    // Every 23rd statement is a deadlock (1213): the event is rolled back and run again.
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:?fail_every=23",
            "--events",
            "20",
            "--time",
            "0",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["transactions"], 20);
    // 20 events of 16 statements (BEGIN, 10 point selects, 4 ranges, COMMIT) are 320
    // executions at least, and every 23rd of all executions fails: 13 failures at least.
    assert!(v["ignored_errors"].as_u64().unwrap() >= 320 / 23, "{v}");
    assert_eq!(v["fatal_errors"].as_array().unwrap().len(), 0);
    // The same code is fatal when it is not in --retry-codes.
    let o = dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:?fail_every=23",
            "--events",
            "20",
            "--time",
            "0",
            "--retry-codes",
            "40001",
        ],
    );
    let e = error_line(&o);
    assert!(
        e.contains("mock: error 1213") && e.contains("statement: SELECT"),
        "{e}"
    );
}

#[test]
fn an_event_that_can_never_finish_stops_its_client() {
    let out = tempfile::tempdir().unwrap();
    // 16 statements per event, every 7th fails: no attempt can succeed; the retry guard ends it.
    let o = dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:?fail_every=7",
            "--events",
            "5",
            "--time",
            "0",
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    assert_eq!(v["ignored_errors"], 1000, "{v}");
    assert!(error_line(&o).contains("mock: error 1213"));
}

#[test]
fn lost_connections_reconnect_and_are_counted() {
    let out = tempfile::tempdir().unwrap();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?lose_every=10",
            "--events",
            "100",
            "--time",
            "0",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["transactions"], 100);
    assert!(v["reconnects"].as_u64().unwrap() >= 9, "{v}");
}

#[test]
fn a_dying_server_stops_the_run_with_what_was_measured() {
    let out = tempfile::tempdir().unwrap();
    let o = dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?die_after=200",
            "--threads",
            "4",
            "--time",
            "5",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v = json(&o);
    assert_eq!(v["status"], "failed");
    // Each event is one statement; the first connection to reach its 200th execution kills
    // the server, so none served more than 199 (how far the other three got depends on the
    // scheduler).
    assert!(
        (1..=4 * 199).contains(&v["transactions"].as_u64().unwrap()),
        "{v}"
    );
    assert_eq!(v["fatal_errors"].as_array().unwrap().len(), 4);
    assert!(error_line(&o).contains("could not reconnect"));
    // The stored run is closed as failed, with its trial.
    let runs = String::from_utf8_lossy(&ok(dbrig(out.path(), &["runs"])).stdout).into_owned();
    assert!(runs.contains("failed"), "{runs}");
}

#[test]
fn rate_mode_reports_latency_from_intended_start_and_backlog() {
    let out = tempfile::tempdir().unwrap();
    // 1 client, 2 ms per statement (max ~500/s) asked for 2000/s: it falls behind, keeps going.
    // Evenly spaced arrivals, so the k-th is due at exactly k/2000 s and the bounds below hold
    // on every run (Poisson's k-th arrival strays by √k/2000 s, 11 ms at k = 470: CI once saw
    // the first unserved event due 26 ms late).
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=2000",
            "--rate",
            "2000",
            "--rate-schedule",
            "fixed",
            "--time",
            "1.5",
            "--format",
            "json",
        ],
    )));
    let rate = &v["rate"];
    assert_eq!(rate["target_per_s"], 2000.0);
    // Bounds from the inputs, whatever the machine's speed: each event takes at least 2 ms on
    // the one client, so at most 500/s are served, 1.5 s × 2000/s = 3000 fall due, and the
    // k-th served event, due at k/2000 s, starts no earlier than k × 2 ms.
    let served = v["transactions"].as_f64().unwrap();
    let duration = v["duration_s"].as_f64().unwrap();
    assert!(served <= duration * 500.0 + 1.0, "{v}");
    assert!(
        rate["achieved_per_s"].as_f64().unwrap() <= 500.0 * 1.01,
        "{rate}"
    );
    // The backlog is counted when the client last looked at the schedule, up to one service
    // time before the end (a few ms; 50 ms leaves room for a loaded machine): 100 events.
    assert!(
        rate["final_backlog"].as_f64().unwrap() >= (1.5 - 0.05) * 2000.0 - served - 1.0,
        "{rate}"
    );
    // Latency from the intended start grows with the queue: the served event at the 99th
    // percentile, k = 0.99 × served, waited k × (2 − 0.5) ms at least.
    assert!(
        v["latency_ms"]["p99"].as_f64().unwrap() >= 0.99 * served * 1.5 * 0.99,
        "{v}"
    );
    // Service time is the statement's own: at least its 2 ms, and its median at most twice
    // the mean (the one client's service times add up to no more than the run).
    let service_p50 = rate["service_time_ms"]["p50"].as_f64().unwrap();
    assert!(
        (2.0..=2.0 * duration * 1000.0 / served * 1.01).contains(&service_p50),
        "{rate}"
    );
    // The events still queued at the end count too, each at its wait so far: the line
    // covers every event that was due, so its maximum is at least the served events'.
    let unserved = &rate["latency_incl_unserved_ms"];
    assert!(
        unserved["max"].as_f64().unwrap() >= v["latency_ms"]["max"].as_f64().unwrap(),
        "{v}"
    );
    // The first event never served was due at served/2000 s and waited until the end.
    assert!(
        unserved["max"].as_f64().unwrap() >= (1.5 - served / 2000.0) * 1000.0 * 0.99,
        "{v}"
    );
    let report = text(&ok(dbrig(out.path(), &["report", "latest"])));
    let line = report
        .lines()
        .find(|l| l.contains("latency incl. unserved:"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.ends_with(&format!(
            "({} unserved at their wait so far)",
            rate["final_backlog"]
        )),
        "{line}"
    );
}

#[test]
fn warmup_is_not_counted_and_intervals_follow_sysbench() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=1000",
            "--threads",
            "2",
            "--warmup",
            "0.5",
            // Ticks at 1 s and 2 s, well before the end: a tick racing the deadline at
            // exactly 2 s made the line count flaky on a loaded machine.
            "--time",
            "2.5",
            "--report-interval",
            "1",
        ],
    ));
    let s = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert!(lines[0].starts_with("[ 1s ] thds: 2 tps: "), "{s}");
    assert!(
        lines[0].contains(" lat (ms,95%): ") && lines[0].contains(" reconn/s: "),
        "{s}"
    );
    assert!(
        s.contains("warm-up:") && s.contains("0.5s (not counted)"),
        "{s}"
    );
}

/// With `--format json` stdout is one JSON object and the interval lines go to stderr.
#[test]
fn json_runs_keep_their_interval_lines_on_stderr() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=1000",
            "--threads",
            "2",
            "--time",
            "2.5",
            "--report-interval",
            "1",
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    assert_eq!(v["threads"], 2, "{v}");
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].starts_with("[ 1s ] thds: 2 tps: "), "{err}");
}

/// `dbrig --version` and every stored run name the git commit, not only the package version.
#[test]
fn version_and_stored_runs_carry_the_git_commit() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .arg("--version")
        .output()
        .unwrap());
    let version = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    let expected = format!("dbrig {} (git ", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&expected), "{version}");
    let commit = version[expected.len()..].trim_end_matches(')');
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{version}"
    );
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:",
            "--time",
            "0.3",
            "--format",
            "json",
        ],
    ));
    assert_eq!(
        json(&o)["dbrig_version"].as_str().unwrap(),
        version.trim_start_matches("dbrig ")
    );
}

/// sysbench's word order, the command last, runs as dbrig's.
#[test]
fn sysbench_word_order_runs() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "oltp_point_select",
            "--target",
            "mock:",
            "--threads",
            "3",
            "--time",
            "0.3",
            "--format",
            "json",
            "run",
        ],
    ));
    assert_eq!(json(&o)["threads"], 3);
}

/// `DBRIG_TARGET` and `DBRIG_RESULTS` stand in for `--target` and `--results`.
#[test]
fn target_and_results_from_the_environment() {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("elsewhere.db");
    let o = ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            "oltp_point_select",
            "--time",
            "0.3",
            "--format",
            "json",
        ])
        .arg(format!("--out={}", out.path().display()))
        .env("DBRIG_TARGET", "mock:")
        .env("DBRIG_RESULTS", &results)
        .output()
        .unwrap());
    assert_eq!(json(&o)["target"], "mock:", "{}", text(&o));
    assert!(results.exists());
    assert!(!out.path().join("results.db").exists());
}

/// `dbrig runs --format json`: one array of the stored runs, for scripts.
#[test]
fn runs_as_json() {
    let out = tempfile::tempdir().unwrap();
    ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:",
            "--time",
            "0.2",
        ],
    ));
    let v = json(&ok(dbrig(out.path(), &["runs", "--format", "json"])));
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v}");
    assert_eq!(runs[0]["run"], 1);
    assert_eq!(runs[0]["kind"], "oltp");
    assert_eq!(runs[0]["status"], "done");
    assert_eq!(runs[0]["trials"], 1);
    assert!(runs[0]["dbrig_version"].as_str().unwrap().contains("(git "));
}

/// `--histogram` prints sysbench's latency histogram before "SQL statistics": its counts add
/// up to the transactions.
#[test]
fn histogram_block_before_sql_statistics() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=500",
            "--events",
            "200",
            "--time",
            "0",
            "--histogram=on",
        ],
    ));
    let s = String::from_utf8_lossy(&o.stdout);
    let at = s
        .find("Latency histogram (values are in milliseconds)")
        .expect("the histogram block");
    assert!(at < s.find("SQL statistics:").unwrap(), "{s}");
    let total: u64 = s[at..]
        .lines()
        .skip(2)
        .take_while(|l| l.contains('|'))
        .map(|l| l.split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 200, "{s}");
}

/// A single run's `--format sysbench-json` is sysbench's report_json array itself.
#[test]
fn sysbench_json_of_a_single_run() {
    let out = tempfile::tempdir().unwrap();
    ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=1000",
            "--time",
            "2.5",
            "--report-interval",
            "1",
        ],
    ));
    let v = json(&ok(dbrig(
        out.path(),
        &["report", "latest", "--format", "sysbench-json"],
    )));
    let intervals = v.as_array().unwrap();
    assert_eq!(intervals.len(), 2, "{v}");
    assert_eq!(intervals[0]["time"], 1.0);
    assert_eq!(intervals[1]["threads"], 1);
    // oltp_point_select: one read per event and nothing else, so every query is a read and
    // reads per second are the events per second.
    for i in intervals {
        let reads = i["qps"]["reads"].as_f64().unwrap();
        assert!(reads > 0.0, "{i}");
        assert_eq!(i["qps"]["total"].as_f64(), Some(reads), "{i}");
        assert_eq!(i["tps"].as_f64(), Some(reads), "{i}");
        assert_eq!(
            (i["qps"]["writes"].as_f64(), i["qps"]["other"].as_f64()),
            (Some(0.0), Some(0.0)),
            "{i}"
        );
    }
}

/// Interval samples are stored every second without --report-interval, and no line is
/// printed.
#[test]
fn intervals_are_stored_without_report_interval() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:",
            "--time",
            "2.2",
        ],
    ));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(!s.lines().any(|l| l.starts_with("[ ")), "{s}");
    let v = json(&ok(dbrig(
        out.path(),
        &["report", "latest", "--format", "json"],
    )));
    let intervals = v["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2, "{v}");
    assert_eq!(intervals[1]["t_s"], 2.0);
}

/// `dbrig list --format json`: every workload and every option with its default.
#[test]
fn list_as_json() {
    let v = json(&ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["list", "--format", "json"])
        .output()
        .unwrap()));
    let names: Vec<&str> = v["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"oltp_read_write") && names.contains(&"select_batch"));
    let run = &v["options"][0];
    assert_eq!(run["section"], "Run options");
    let threads = run["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "--threads")
        .unwrap();
    assert_eq!(threads["default"], serde_json::json!(["1"]));
}

/// sysbench's "Threads fairness": each client's events, kept by the runner, add up to the
/// transactions; the text prints the block, the JSON each client and the summary, and the
/// stored run reprints them.
#[test]
fn threads_fairness_from_each_clients_events() {
    let out = tempfile::tempdir().unwrap();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            "mock:",
            "--events",
            "90",
            "--time",
            "0",
            "--threads",
            "3",
            "--format",
            "json",
        ],
    )));
    let clients = v["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 3, "{v}");
    let events: u64 = clients.iter().map(|c| c["events"].as_u64().unwrap()).sum();
    assert_eq!(events, 90);
    assert_eq!(v["fairness"]["events_avg"], 30.0);
    assert!(v["fairness"]["busy_avg_s"].as_f64().unwrap() >= 0.0);
    let reprint = text(&ok(dbrig(out.path(), &["report", "1"])));
    assert!(
        reprint.contains("Threads fairness:\n    events (avg/stddev):           30.0000/"),
        "{reprint}"
    );
    assert!(
        reprint.contains("    execution time (avg/stddev):   "),
        "{reprint}"
    );
}

/// CPU per unit of work is per transaction, however many queries a transaction holds:
/// oltp_read_write sends 20 statements an event, so CPU divided by queries would be 20 times
/// smaller.
#[test]
fn cpu_is_divided_by_transactions_not_queries() {
    let out = tempfile::tempdir().unwrap();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            "mock:?latency_us=200",
            "--events",
            "300",
            "--time",
            "0",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["transactions"], 300, "{v}");
    assert_eq!(v["queries"]["total"], 6000, "{v}");
    let cpu = &v["cpu"];
    assert_eq!(cpu["unit"], "transaction", "{cpu}");
    let client_s = cpu["client_cpu_s"].as_f64().unwrap();
    assert!(client_s > 0.0, "{cpu}");
    let per_unit = cpu["client_us_per_unit"].as_f64().unwrap();
    let expected = client_s * 1e6 / 300.0;
    assert!(
        (per_unit - expected).abs() <= expected * 0.01,
        "{per_unit} µs/txn, expected {expected}: {cpu}"
    );
}

/// Evidence switched off (`--no-evidence`, a plan's `evidence = false`): the trial stores no
/// CPU, counters or waits, and the reports say it was not collected.
#[test]
fn evidence_can_be_switched_off() {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "oltp_point_select",
        "--target",
        "mock:",
        "--events",
        "20",
        "--time",
        "0",
    ];
    let on = json(&ok(dbrig(
        out.path(),
        &[&args[..], &["--format", "json"]].concat(),
    )));
    assert!(on["cpu"].is_object(), "{on}");
    let o = ok(dbrig(out.path(), &[&args[..], &["--no-evidence"]].concat()));
    let t = text(&o);
    assert!(t.contains("evidence not collected: switched off"), "{t}");
    assert!(t.contains("    evidence:"), "{t}");
    let off = json(&ok(dbrig(
        out.path(),
        &[&args[..], &["--no-evidence", "--format", "json"]].concat(),
    )));
    assert!(off["cpu"].is_null(), "{off}");
    assert_eq!(off["evidence"], "not collected (switched off)", "{off}");
    let refused = dbrig(
        out.path(),
        &[&args[..], &["--no-evidence", "--profile"]].concat(),
    );
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("'--no-evidence' cannot be used with '--profile'"),
        "{}",
        text(&refused)
    );

    let plan = out.path().join("off.toml");
    std::fs::write(
        &plan,
        "name = \"evidence-off\"\ntrials = 1\nclients = [1]\nduration = 0.3\n\
         [[configuration]]\nname = \"a\"\ntarget = \"mock:\"\n\
         [[configuration]]\nname = \"b\"\ntarget = \"mock:\"\n\
         [environment]\nevidence = false\n\
         [[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    let t = text(&ok(dbrig(out.path(), &["run", plan.to_str().unwrap()])));
    assert!(
        t.contains("evidence not collected (switched off) for: a, b"),
        "{t}"
    );
}
