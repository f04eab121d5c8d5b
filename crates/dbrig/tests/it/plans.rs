//! Plans: matrix execution, interleaving, failed targets, Ctrl-C and resume.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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
    assert!(error_line(&o).contains("4 trial(s) failed"), "{}", text(&o));
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
    let child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
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
    // Interrupt once at least one trial is stored (however slow a busy machine is).
    let results = out.path().join("results.db");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
        let ready = results.exists()
            && Store::open(&results)
                .ok()
                .and_then(|s| s.latest_run_id().ok().flatten())
                .is_some()
            && stored_trials(&results)
                .iter()
                .any(|t| t.4 == TrialStatus::Done);
        if ready {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(400));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
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
    let child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            "oltp_point_select",
            "--target",
            "mock:?latency_us=500",
            "--time",
            "30",
            "--format",
            "json",
        ])
        .arg(format!("--out={}", out.path().display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "interrupted");
    assert!(v["transactions"].as_u64().unwrap() > 100);
    assert!(v["duration_s"].as_f64().unwrap() < 10.0);
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
