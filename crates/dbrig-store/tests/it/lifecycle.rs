use dbrig_store::testing::writer;
use dbrig_store::{RunKind, RunStatus, SCHEMA_VERSION, Store, StoreError, parse_rfc3339};
use serde_json::json;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{at, begin, cell};

#[test]
fn creates_a_new_file_and_reopens_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let run = {
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(store.latest_run_id().unwrap(), None);
        let run = begin(&mut store, RunKind::Oltp, "oltp_read_only");
        writer(&mut store)
            .finish_run(run, RunStatus::Done, None)
            .unwrap();
        run
    };
    assert!(path.is_file());
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.latest_run_id().unwrap(), Some(run));
    assert_eq!(store.run(run).unwrap().status, RunStatus::Done);
    assert_eq!(store.path(), path);
}

#[test]
fn run_lifecycle_is_recorded() {
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Plan, "nightly");
    let row = store.run(run).unwrap();
    assert_eq!(row.id, run);
    assert_eq!(row.kind, RunKind::Plan);
    assert_eq!(row.name, "nightly");
    assert_eq!(row.status, RunStatus::Running);
    assert_eq!(row.error, None);
    assert_eq!(row.started_at, "2024-05-01T12:34:56.250Z");
    assert_eq!(parse_rfc3339(&row.started_at), Some(at(0)));
    assert_eq!(row.finished_at, None);
    assert_eq!(row.dbrig_version, "0.1.0");
    assert_eq!(row.command_line[..3], ["dbrig", "run", "nightly"]);
    assert_eq!(row.options["tables"], json!(4));
    assert_eq!(row.host, json!({"cpus": 8, "os": "linux"}));
    assert!(row.plan_text.unwrap().contains("oltp_read_only"));
    assert_eq!(row.pid, Some(std::process::id()));

    writer(&mut store)
        .finish_run_at(run, RunStatus::Failed, Some("server did not start"), at(99))
        .unwrap();
    let row = store.run(run).unwrap();
    assert_eq!(row.status, RunStatus::Failed);
    assert_eq!(row.error.as_deref(), Some("server did not start"));
    assert_eq!(row.finished_at.as_deref(), Some("2024-05-01T12:36:35.250Z"));

    // Closing twice is a caller bug, and so is "finishing" as running.
    assert!(matches!(
        writer(&mut store).finish_run(run, RunStatus::Done, None),
        Err(StoreError::RunAlreadyFinished {
            status: RunStatus::Failed,
            ..
        })
    ));
    let other = begin(&mut store, RunKind::Oltp, "x");
    assert!(matches!(
        writer(&mut store).finish_run(other, RunStatus::Running, None),
        Err(StoreError::NotAFinalStatus { .. })
    ));
    let runs = store.runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [run, other]);
    assert_eq!(store.latest_run_id().unwrap(), Some(other));
}

#[test]
fn missing_ids_are_reported() {
    let mut store = crate::fresh();
    let missing = dbrig_store::RunId(42);
    let err = store.run(missing).unwrap_err();
    assert!(matches!(err, StoreError::NoSuchRun { .. }), "{err}");
    assert!(err.to_string().contains("no run 42"), "{err}");
    assert!(matches!(
        writer(&mut store).finish_run(missing, RunStatus::Done, None),
        Err(StoreError::NoSuchRun { .. })
    ));
    let options = json!({});
    assert!(matches!(
        writer(&mut store).ensure_cell(
            missing,
            &dbrig_store::NewCell {
                cell_key: "k",
                configuration: "c",
                workload: "w",
                clients: 1,
                options: &options,
                target: "mock:",
            }
        ),
        Err(StoreError::NoSuchRun { .. })
    ));
    assert!(matches!(
        store.trial(dbrig_store::TrialId(1)),
        Err(StoreError::NoSuchTrial { .. })
    ));
    assert!(matches!(
        store.cell(dbrig_store::CellId(1)),
        Err(StoreError::NoSuchCell { .. })
    ));
    assert!(matches!(
        store.histogram(dbrig_store::TrialId(1)),
        Err(StoreError::NoSuchTrial { .. })
    ));
}

#[test]
fn ensure_cell_is_idempotent() {
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Plan, "p");
    let a = cell(&mut store, run, "key-a", 8);
    assert_eq!(cell(&mut store, run, "key-a", 8), a);
    let b = cell(&mut store, run, "key-b", 16);
    assert_ne!(a, b);
    // The same key in another run is another cell.
    let run2 = begin(&mut store, RunKind::Plan, "p");
    let a2 = cell(&mut store, run2, "key-a", 8);
    assert_ne!(a, a2);

    let cells = store.cells(run).unwrap();
    assert_eq!(cells.len(), 2);
    let row = &cells[0];
    assert_eq!((row.id, row.run_id), (a, run));
    assert_eq!(row.cell_key, "key-a");
    assert_eq!(row.configuration, "default");
    assert_eq!(row.workload, "oltp_read_only");
    assert_eq!(row.clients, 8);
    assert_eq!(row.options, json!({"tables": 4, "table_size": 10000}));
    assert_eq!(row.target, "mysql://bench:***@127.0.0.1:3306/db");
    assert_eq!(store.cell(b).unwrap().clients, 16);

    // A key reused for a different specification is refused, not silently merged.
    let err = writer(&mut store)
        .ensure_cell(
            run,
            &dbrig_store::NewCell {
                cell_key: "key-a",
                configuration: "default",
                workload: "oltp_read_only",
                clients: 32,
                options: &json!({"tables": 4, "table_size": 10000}),
                target: "mysql://bench:***@127.0.0.1:3306/db",
            },
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::CellMismatch {
                field: "client count",
                ..
            }
        ),
        "{err}"
    );
}

/// A run stopped by a signal is closed `interrupted`; the process that owns it may still close
/// it again (a `done` or `failed` run it may not).
#[test]
fn an_interrupted_run_may_still_be_closed() {
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Plan, "p");
    writer(&mut store)
        .finish_run(run, RunStatus::Interrupted, Some("SIGTERM"))
        .unwrap();
    assert_eq!(store.run(run).unwrap().status, RunStatus::Interrupted);
    writer(&mut store)
        .finish_run(run, RunStatus::Done, None)
        .unwrap();
    assert_eq!(store.run(run).unwrap().status, RunStatus::Done);
}

#[test]
fn two_stores_share_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.db");
    let mut a = Store::open(&path).unwrap();
    let mut b = Store::open(&path).unwrap();
    let ra = begin(&mut a, RunKind::Oltp, "a");
    let rb = begin(&mut b, RunKind::Oltp, "b");
    assert_eq!(a.runs().unwrap().len(), 2);
    assert_eq!(b.run(ra).unwrap().name, "a");
    assert_eq!(a.run(rb).unwrap().name, "b");
}

/// Several dbrig processes started at once (a test's parallel loads, a shell's `&`) all open
/// the same new results file: each must wait its turn, none may fail with "locked". Turning on
/// WAL reads the file and then wants its write lock; when two processes do that together,
/// SQLite answers BUSY at once, without the busy handler (the deadlock it will not wait on).
/// Separate processes, because connections of one process do not meet that way. This test
/// runs its own binary as the openers (`opener_of_a_shared_file`, which does nothing unless
/// asked through the environment).
#[test]
fn many_processes_opening_one_new_file_all_succeed() {
    const OPENERS: usize = 8;
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        // All openers wait for one instant, so their first statements meet.
        let start = SystemTime::now() + Duration::from_millis(150);
        let start_ms = start.duration_since(UNIX_EPOCH).unwrap().as_millis();
        let openers: Vec<_> = (0..OPENERS)
            .map(|_| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args([
                        "--exact",
                        "lifecycle::opener_of_a_shared_file",
                        "--nocapture",
                    ])
                    .env(OPENER_PATH, &path)
                    .env(OPENER_START_MS, start_ms.to_string())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for o in openers {
            let out = o.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(store.runs().unwrap().len(), OPENERS, "round {round}");
    }
}

const OPENER_PATH: &str = "DBRIG_STORE_TEST_OPENER_PATH";
const OPENER_START_MS: &str = "DBRIG_STORE_TEST_OPENER_START_MS";

/// One opener of `many_processes_opening_one_new_file_all_succeed`; on its own, nothing.
#[test]
fn opener_of_a_shared_file() {
    let (Some(path), Some(start_ms)) = (
        std::env::var_os(OPENER_PATH),
        std::env::var(OPENER_START_MS).ok(),
    ) else {
        return;
    };
    let start = UNIX_EPOCH + Duration::from_millis(start_ms.parse().unwrap());
    if let Ok(wait) = start.duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
    let mut store = Store::open(std::path::Path::new(&path)).unwrap();
    let run = begin(&mut store, RunKind::Oltp, "race");
    writer(&mut store)
        .finish_run(run, RunStatus::Done, None)
        .unwrap();
}

/// A run's tags and code revision (`--tag`, `--commit`) are stored with it and read back; a
/// run without them reads back empty.
#[test]
fn provenance_is_stored_with_the_run() {
    let mut store = crate::fresh();
    let plain = begin(&mut store, RunKind::Oltp, "plain");
    let run = begin(&mut store, RunKind::Oltp, "tagged");
    let provenance = dbrig_store::Provenance {
        tags: [("branch", "main"), ("pr", "123")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        commit: Some("0123abcd".into()),
    };
    writer(&mut store)
        .set_run_provenance(run, &provenance)
        .unwrap();
    assert_eq!(store.run(run).unwrap().provenance, provenance);
    assert!(store.run(plain).unwrap().provenance.is_empty());
    // The uid is a UUID, one per run.
    assert_eq!(store.run(run).unwrap().uid.len(), 36);
    assert_ne!(store.run(run).unwrap().uid, store.run(plain).unwrap().uid);
    // Tags are stored text: a password in one is refused like anywhere else.
    let leaky = dbrig_store::Provenance {
        tags: [("db".to_owned(), "mysql://u:pw@h/db".to_owned())].into(),
        commit: None,
    };
    assert!(matches!(
        writer(&mut store).set_run_provenance(run, &leaky),
        Err(StoreError::UnredactedSecret { .. })
    ));
}
