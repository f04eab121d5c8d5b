use std::fs;

use dbrig_store::testing::writer;
use dbrig_store::{NewCell, NewRun, RunKind, SCHEMA_VERSION, Store, StoreError, TrialStatus};
use serde_json::json;

use crate::{at, begin, cell, measurements, trial};

#[test]
fn refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    drop(Store::open(&path).unwrap());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 6)
            .unwrap();
    }
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, supported, .. }
            if found == SCHEMA_VERSION + 6 && supported == SCHEMA_VERSION),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(
        msg.contains("use a newer dbrig or another --results file"),
        "{msg}"
    );
}

#[test]
fn refuses_files_that_are_not_results_databases() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    fs::write(
        &text,
        "this is not a database, just a long enough text file ....",
    )
    .unwrap();
    let err = Store::open(&text).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err}");

    let other = dir.path().join("app.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY)")
            .unwrap();
    }
    let err = Store::open(&other).unwrap_err();
    assert!(matches!(err, StoreError::ForeignDatabase { .. }), "{err}");

    let err = Store::open(&dir.path().join("missing/results.db")).unwrap_err();
    assert!(matches!(err, StoreError::NoParentDir { .. }), "{err}");
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn refuses_unredacted_secrets() {
    let mut store = crate::fresh();
    let leaked = json!({"target": "postgres://bench:hunter2@db.example/bench"});
    let host = json!({});
    let argv = vec!["dbrig".to_owned()];
    let err = writer(&mut store)
        .begin_run(&NewRun {
            kind: RunKind::Oltp,
            name: "w",
            started_at: at(0),
            options: &leaked,
            host: &host,
            dbrig_version: "0.1.0",
            command_line: &argv,
            plan_text: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::UnredactedSecret { .. }), "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");

    let argv = vec![
        "--target".to_owned(),
        "mysql://root:hunter2@h/db".to_owned(),
    ];
    let err = writer(&mut store)
        .begin_run(&NewRun {
            kind: RunKind::Oltp,
            name: "w",
            started_at: at(0),
            options: &host,
            host: &host,
            dbrig_version: "0.1.0",
            command_line: &argv,
            plan_text: None,
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::UnredactedSecret { .. }), "{err}");
    assert!(store.runs().unwrap().is_empty(), "nothing was written");

    let run = begin(&mut store, RunKind::Oltp, "w");
    let err = writer(&mut store)
        .ensure_cell(
            run,
            &NewCell {
                cell_key: "k",
                configuration: "c",
                workload: "w",
                clients: 1,
                options: &host,
                target: "mysql://root:hunter2@127.0.0.1:3306/db",
            },
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::UnredactedSecret { .. }), "{err}");
    assert!(store.cells(run).unwrap().is_empty());

    let c = cell(&mut store, run, "k", 1);
    let mut m = measurements();
    m.fatal_errors = vec!["cannot connect to mysql://root:hunter2@h/db".to_owned()];
    let err = writer(&mut store)
        .record_trial(c, &trial(1, TrialStatus::Done, Some(&m)))
        .unwrap_err();
    assert!(matches!(err, StoreError::UnredactedSecret { .. }), "{err}");
    assert!(store.trials(c).unwrap().is_empty());
}
