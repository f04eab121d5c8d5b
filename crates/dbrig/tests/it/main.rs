//! End-to-end tests of the `dbrig` binary: the mock engine (deterministic), embedded SQLite, and
//! the machine's MariaDB (127.0.0.1:3306) and PostgreSQL (127.0.0.1:5432). Each server test
//! works in a database of its own, created and dropped with the servers' command-line clients,
//! so tests run in parallel without touching each other's tables.

mod bad_input;
mod connections;
mod copies;
mod credential_files;
mod explain;
mod fidelity;
mod hangs;
mod history;
mod install;
mod lua;
mod managed;
mod micro;
mod mock;
mod mysql;
mod one_path;
mod outputs;
mod perfrun;
mod pgbench;
mod pgss;
mod plans;
mod postgres;
mod readme;
mod results_server;
mod safety;
mod secrets;
mod sqlbench;
mod sqlite;
mod tls;
mod tpcc;
mod tpch;

use std::path::Path;
use std::process::{Command, Output};

/// Run dbrig with `args`; results go under `out`.
pub fn dbrig(out: &Path, args: &[&str]) -> Output {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.push(format!("--out={}", out.display()));
    Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(&all)
        .output()
        .expect("dbrig runs")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[track_caller]
pub fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "dbrig failed ({:?}):\n{}",
        o.status,
        text(&o)
    );
    o
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", text(o)))
}

/// The one-line error of a failed command.
#[track_caller]
pub fn error_line(o: &Output) -> String {
    assert!(!o.status.success(), "expected a failure:\n{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr);
    err.lines()
        .rfind(|l| l.starts_with("dbrig: error:"))
        .unwrap_or_else(|| panic!("no error line:\n{}", text(o)))
        .to_owned()
}

/// Every workload with options that keep a test short.
pub const WORKLOADS: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
    "select_batch",
];

/// prepare → run (events-bounded, 2 clients) → cleanup of every workload on one target;
/// returns the JSON reports.
pub fn every_workload(target: &str, out: &Path) -> Vec<serde_json::Value> {
    let mut reports = Vec::new();
    for w in WORKLOADS {
        let common = [
            w,
            "--target",
            target,
            "--table-size",
            "2000",
            "--tables",
            "2",
            "--threads",
            "2",
            "--batch-size",
            "500",
        ];
        let mut prepare = vec!["prepare"];
        prepare.extend(common);
        ok(dbrig(out, &prepare));
        let mut run = vec!["run"];
        run.extend(common);
        run.extend([
            "--events",
            "40",
            "--time",
            "0",
            "--format",
            "json",
            "--rand-seed",
            "5",
        ]);
        let o = ok(dbrig(out, &run));
        let v = json(&o);
        assert_eq!(v["workload"], *w);
        assert_eq!(v["transactions"], 40, "{w}: {v}");
        // bulk_insert's 40 events are 40 rows: one INSERT per client holds them all.
        let least = if *w == "bulk_insert" { 1 } else { 40 };
        assert!(v["queries"]["total"].as_u64().unwrap() >= least, "{w}: {v}");
        assert_eq!(v["fatal_errors"].as_array().unwrap().len(), 0, "{w}: {v}");
        let mut cleanup = vec!["cleanup"];
        cleanup.extend(common);
        ok(dbrig(out, &cleanup));
        reports.push(v);
    }
    reports
}

/// The sysbench count check: 100 oltp_read_write events on one client are exactly
/// 1400 reads, 400 writes and 200 other statements.
pub fn read_write_counts(target: &str, out: &Path) {
    let common = [
        "oltp_read_write",
        "--target",
        target,
        "--table-size",
        "1000",
    ];
    ok(dbrig(out, &[&["prepare"][..], &common].concat()));
    let o = ok(dbrig(
        out,
        &[
            &["run"][..],
            &common,
            &[
                "--events",
                "100",
                "--time",
                "0",
                "--threads",
                "1",
                "--format",
                "json",
            ],
        ]
        .concat(),
    ));
    let v = json(&o);
    assert_eq!(v["transactions"], 100);
    assert_eq!(
        (
            v["queries"]["read"].as_u64(),
            v["queries"]["write"].as_u64(),
            v["queries"]["other"].as_u64()
        ),
        (Some(1400), Some(400), Some(200)),
        "{v}"
    );
    // Per-statement latency: every kind of the transaction, each timed as often as it ran.
    let counts: Vec<(String, u64)> = v["statements"]
        .as_array()
        .expect("statements")
        .iter()
        .map(|s| {
            // An uncontended wait in SQLite's writer queue can take under a microsecond.
            if s["statement"] != "write_queue" {
                assert!(s["latency_ms"]["max"].as_f64().unwrap() > 0.0, "{s}");
            }
            (
                s["statement"].as_str().unwrap().to_owned(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut expected: Vec<(String, u64)> = [
        ("begin", 100),
        ("commit", 100),
        ("delete", 100),
        ("distinct_range", 100),
        ("index_update", 100),
        ("insert", 100),
        ("non_index_update", 100),
        ("order_range", 100),
        ("point_select", 1000),
        ("simple_range", 100),
        ("sum_range", 100),
    ]
    .map(|(k, n)| (k.to_owned(), n))
    .to_vec();
    // SQLite's writers take their turn at the write lock first, once per event.
    if target.starts_with("sqlite:") {
        expected.push(("write_queue".to_owned(), 100));
    }
    assert_eq!(counts, expected, "{v}");
    ok(dbrig(out, &[&["cleanup"][..], &common].concat()));
}

/// Bad inputs every server-backed engine must answer with one clear line.
pub fn missing_and_existing_tables(target: &str, out: &Path) {
    let o = dbrig(
        out,
        &["run", "oltp_read_only", "--target", target, "--time", "1"],
    );
    let e = error_line(&o);
    assert!(
        e.contains("sbtest1 does not exist") && e.contains("dbrig prepare"),
        "{e}"
    );
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_read_only",
            "--target",
            target,
            "--table-size",
            "100",
        ],
    ));
    let e = error_line(&dbrig(
        out,
        &[
            "prepare",
            "oltp_read_only",
            "--target",
            target,
            "--table-size",
            "100",
        ],
    ));
    assert!(
        e.contains("sbtest1 already exists") && e.contains("dbrig cleanup"),
        "{e}"
    );
    // Refused before anything was recorded: the one stored load is the prepare that ran.
    let store = dbrig_store::Store::open(&out.join("results.db")).unwrap();
    let loads: Vec<_> = store
        .runs()
        .unwrap()
        .into_iter()
        .filter(|r| r.kind == dbrig_store::RunKind::Load)
        .map(|r| r.status)
        .collect();
    assert_eq!(loads, [dbrig_store::RunStatus::Done]);
    ok(dbrig(
        out,
        &["cleanup", "oltp_read_only", "--target", target],
    ));
}

/// A stored trial's environment and typed result as one JSON object for assertions: the
/// environment's fields at the top (`hooks`, `os_samples`, `server_settings`, …) and the
/// result under its kind (`micro`, `tpch_power`, `tpch_throughput`, `perfrun`, `oltp`).
pub fn trial_json(t: &dbrig_store::TrialRow) -> serde_json::Value {
    let mut v = serde_json::to_value(&t.environment).unwrap();
    if v.is_null() {
        v = serde_json::json!({});
    }
    if let Some(r) = &t.result {
        v[r.kind().as_str()] = serde_json::to_value(r).unwrap();
    }
    v
}

/// What a child dbrig printed on stderr up to the first line `until` accepts, and a thread
/// that reads the rest (so the child never blocks on a full pipe) and gives it back. A test
/// waits for the event it needs (a trial stored, an interval measured) this way instead of
/// sleeping a fixed time. Panics, with what was read, if stderr ends before such a line.
pub fn stderr_until(
    child: &mut std::process::Child,
    until: impl Fn(&str) -> bool,
) -> (Vec<String>, std::thread::JoinHandle<String>) {
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let mut seen = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(line)) => {
                let hit = until(&line);
                seen.push(line);
                if hit {
                    break;
                }
            }
            _ => panic!("stderr ended before the awaited line:\n{}", seen.join("\n")),
        }
    }
    let rest = std::thread::spawn(move || {
        lines
            .map_while(Result::ok)
            .map(|l| l + "\n")
            .collect::<String>()
    });
    (seen, rest)
}

/// Send SIGINT (Ctrl-C) to a child.
pub fn interrupt(child: &std::process::Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -INT {} failed", child.id());
}
