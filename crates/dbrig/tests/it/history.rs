//! `dbrig history` and `dbrig gate` on runs measured here: a plan run five times, then three
//! times with its clients held to a fixed rate (a real step down in QPS), on embedded SQLite.
//! This machine's QPS wanders by half between runs, so the change point is searched at
//! p ≤ 0.05 (`--max-p`): the plumbing is under test here, the statistics in their own tests.

use std::path::Path;

use crate::{dbrig, json, ok, text};

fn plan(dir: &Path) -> std::path::PathBuf {
    let plan = dir.join("step.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "step"
trials = 4
duration = 0.5
warmup = 0
clients = [1]

[[configuration]]
name = "sqlite"
target = "sqlite:{}"

[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 1000
"#,
            dir.join("step.sqlite").display()
        ),
    )
    .unwrap();
    plan
}

#[test]
fn history_finds_the_step_and_the_gate_fails_the_slower_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let plan = plan(out);
    let plan = plan.to_str().unwrap();
    // Before any run, the gate has nothing to hold: one line, a usage-free failure.
    let none = dbrig(out, &["gate"]);
    assert_eq!(none.status.code(), Some(1), "{}", text(&none));
    for _ in 0..5 {
        ok(dbrig(out, &["run", plan]));
    }
    // One run after two alike: the gate decides (whatever this noisy machine measured).
    let decided = dbrig(out, &["gate"]);
    assert!(
        matches!(decided.status.code(), Some(0 | 1)),
        "{}",
        text(&decided)
    );
    for _ in 0..3 {
        ok(dbrig(
            out,
            &[
                "run",
                plan,
                "--set",
                "run.rate=100",
                "--set",
                "run.rate-schedule=fixed",
            ],
        ));
    }
    // QPS, and the client's CPU per transaction and peak memory beside it.
    let series = json(&ok(dbrig(
        out,
        &["history", "--max-p", "0.05", "--format", "json"],
    )));
    let series = series.as_array().unwrap();
    assert_eq!(series.len(), 3, "{series:?}");
    let qps = json(&ok(dbrig(
        out,
        &["history", "--unit", "QPS", "--format", "json"],
    )));
    let qps = qps.as_array().unwrap();
    assert_eq!(qps.len(), 1, "{qps:?}");
    let s = &qps[0];
    assert_eq!(s["points"].as_array().unwrap().len(), 8);
    let changes = s["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{s}");
    assert_eq!(changes[0]["index"], 5);
    assert_eq!(changes[0]["run"], 6);
    assert_eq!(changes[0]["regression"], true);
    let shown = text(&ok(dbrig(
        out,
        &["history", "--unit", "QPS", "--max-p", "0.05"],
    )));
    assert!(shown.contains("change point before run 6"), "{shown}");
    // The first slow run against the five before it: a regression, exit 1, its summary and
    // JUnit XML written where asked (the summary appended, as $GITHUB_STEP_SUMMARY wants).
    let summary = out.join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let junit = out.join("gate.xml");
    let gated = dbrig(
        out,
        &[
            "gate",
            "latest~2",
            "--markdown",
            summary.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(gated.status.code(), Some(1), "{}", text(&gated));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.starts_with("earlier step\n## dbrig gate: ❌ regression (run 6)"),
        "{md}"
    );
    assert!(
        md.lines().any(
            |l| l.contains("oltp_point_select · sqlite · 1 client(s) · QPS")
                && l.ends_with("| regression |")
        ),
        "{md}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"3\"") && xml.contains("<failure"),
        "{xml}"
    );
    // A usage error is 2.
    let usage = dbrig(out, &["gate", "--points", "many"]);
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
}

#[test]
fn a_single_run_cannot_be_gated_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let target = format!("--target=sqlite:{}", out.join("one.sqlite").display());
    ok(dbrig(
        out,
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size=1000",
            "--time=0.3",
            &target,
        ],
    ));
    let gated = dbrig(out, &["gate"]);
    assert_eq!(gated.status.code(), Some(3), "{}", text(&gated));
    assert!(text(&gated).contains("undecided: no earlier run of this series"));
}
