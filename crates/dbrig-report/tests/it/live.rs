//! The page the plan executor rewrites after every cell, while the run is still going.

use std::time::UNIX_EPOCH;

use dbrig_report::{fixture, write_html_report};
use dbrig_store::testing::writer;
use dbrig_store::{NewCell, NewRun, NewTrial, RunKind, Store, TrialStatus};

#[test]
fn page_of_a_running_run_with_an_empty_cell() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let run = writer(&mut store)
        .begin_run(&NewRun {
            kind: RunKind::Plan,
            name: "live",
            started_at: UNIX_EPOCH,
            options: &serde_json::json!({}),
            host: &serde_json::json!({}),
            dbrig_version: "0",
            command_line: &[],
            plan_text: None,
        })
        .unwrap();
    let path = dir.path().join("live.html");
    // No cell yet: nothing to show, and an error that says so rather than an empty page.
    let err = write_html_report(&store, run, &path).unwrap_err();
    assert!(err.to_string().contains("no cells"), "{err}");
    let cell = |store: &mut Store, conf: &str| {
        writer(store)
            .ensure_cell(
                run,
                &NewCell {
                    cell_key: conf,
                    configuration: conf,
                    workload: "oltp_read_only",
                    clients: 4,
                    options: &serde_json::json!({}),
                    target: "sqlite:x.db",
                },
            )
            .unwrap()
    };
    let a = cell(&mut store, "A");
    let m = fixture::measurements(4, 1000.0, 2.0, 3, 0.01);
    writer(&mut store)
        .record_trial(
            a,
            &NewTrial {
                trial: 1,
                status: TrialStatus::Done,
                reason: None,
                server_version: None,
                started_at: UNIX_EPOCH,
                finished_at: UNIX_EPOCH,
                measurements: Some(&m),
                result: Some(&fixture::oltp_result(0.0)),
                environment: None,
            },
        )
        .unwrap();
    // B's cell exists but has no trial yet.
    cell(&mut store, "B");
    write_html_report(&store, run, &path).unwrap();
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.contains("This run is still going"));
    assert!(page.contains("too few trials"));
    assert_eq!(page.matches("<svg").count(), 3);
    // Only the page itself is left in the folder: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["live.html"]);
}
