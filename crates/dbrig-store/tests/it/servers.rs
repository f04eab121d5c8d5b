//! The server backends on the machine's PostgreSQL and MariaDB, beyond the contract the other
//! modules check (run them with `DBRIG_STORE_TEST_BACKEND=postgres|mariadb`): many processes
//! writing one store at once, the password kept out of everything shown, refusals, a copy
//! between backends, and what a trial's write costs.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dbrig_store::testing::writer;
use dbrig_store::{
    Imported, Importer, RunDocument, RunKind, RunStatus, SCHEMA_VERSION, ServerEngine,
    ServerPassword, Store, StoreError, TrialStatus,
};

use crate::{ServerDb, begin, cell, measurements, trial};

const WRITERS: usize = 10;
const RUNS_EACH: usize = 3;
const CELLS_EACH: usize = 2;
const TRIALS_EACH: u32 = 3;

/// Ten dbrig processes open one new server store at once (each applying the schema, under the
/// lock, once between them) and write runs, cells and trials at once: nothing is lost, nothing
/// is doubled, every run has an id of its own. Separate processes: each has its connection
/// and its own pid, as many dbrig processes on many machines do.
fn many_processes_write_one_store(engine: ServerEngine) {
    let db = ServerDb::new(engine);
    let start = SystemTime::now() + Duration::from_millis(300);
    let start_ms = start.duration_since(UNIX_EPOCH).unwrap().as_millis();
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "servers::writer_of_a_shared_server",
                    "--nocapture",
                ])
                .env(WRITER_ENGINE, format!("{engine:?}"))
                .env(WRITER_DB, &db.name)
                .env(WRITER_START_MS, start_ms.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = db.open();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), WRITERS * RUNS_EACH);
    let mut uids: Vec<&str> = runs.iter().map(|r| r.uid.as_str()).collect();
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), runs.len(), "every run has a uid of its own");
    let mut trials = 0;
    for r in &runs {
        assert_eq!(r.status, RunStatus::Done);
        let cells = store.cells(r.id).unwrap();
        assert_eq!(cells.len(), CELLS_EACH);
        for c in cells {
            let ts = store.trials(c.id).unwrap();
            assert_eq!(
                ts.iter().map(|t| t.trial).collect::<Vec<_>>(),
                (1..=TRIALS_EACH).collect::<Vec<_>>()
            );
            for t in ts {
                assert_eq!(store.intervals(t.id).unwrap().len(), 2);
                trials += 1;
            }
        }
    }
    assert_eq!(
        trials,
        WRITERS * RUNS_EACH * CELLS_EACH * TRIALS_EACH as usize
    );
    // The schema was applied once: one version row.
    assert_eq!(db.query("SELECT count(*) FROM dbrig_schema"), "1");
}

#[test]
fn ten_processes_write_one_postgres_store_at_once() {
    many_processes_write_one_store(ServerEngine::Postgres);
}

#[test]
fn ten_processes_write_one_mariadb_store_at_once() {
    many_processes_write_one_store(ServerEngine::Mysql);
}

const WRITER_ENGINE: &str = "DBRIG_STORE_TEST_WRITER_ENGINE";
const WRITER_DB: &str = "DBRIG_STORE_TEST_WRITER_DB";
const WRITER_START_MS: &str = "DBRIG_STORE_TEST_WRITER_START_MS";

/// One writer of `many_processes_write_one_store`; on its own, nothing.
#[test]
fn writer_of_a_shared_server() {
    let (Ok(engine), Ok(name), Ok(start_ms)) = (
        std::env::var(WRITER_ENGINE),
        std::env::var(WRITER_DB),
        std::env::var(WRITER_START_MS),
    ) else {
        return;
    };
    let engine = if engine == "Postgres" {
        ServerEngine::Postgres
    } else {
        ServerEngine::Mysql
    };
    // The database is the parent's: this handle must not drop it.
    let db = std::mem::ManuallyDrop::new(ServerDb { engine, name });
    let start = UNIX_EPOCH + Duration::from_millis(start_ms.parse().unwrap());
    if let Ok(wait) = start.duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
    let mut store = db.open();
    let m = measurements();
    for r in 0..RUNS_EACH {
        let run = begin(&mut store, RunKind::Plan, &format!("writer-{r}"));
        for c in 0..CELLS_EACH {
            let c = cell(&mut store, run, &format!("cell-{c}"), 8);
            for t in 1..=TRIALS_EACH {
                writer(&mut store)
                    .record_trial(c, &trial(t, TrialStatus::Done, Some(&m)))
                    .unwrap();
            }
        }
        writer(&mut store)
            .finish_run(run, RunStatus::Done, None)
            .unwrap();
    }
}

/// The URL's password reaches the server's client and nothing else: not the store's path, its
/// debug form, nor anything stored. (PostgreSQL's trust authentication lets it be wrong.)
#[test]
fn the_password_is_never_shown() {
    let db = ServerDb::new(ServerEngine::Postgres);
    let mut address = db.address();
    address.password = Some(ServerPassword::new("Sekr3t-pw"));
    assert!(!format!("{address:?}").contains("Sekr3t"));
    let mut store = Store::open_server(&address).unwrap();
    assert_eq!(store.path().to_string_lossy(), address.shown);
    assert!(!format!("{store:?}").contains("Sekr3t"));
    let run = begin(&mut store, RunKind::Oltp, "w");
    writer(&mut store)
        .finish_run(run, RunStatus::Done, None)
        .unwrap();
    let dump = db.query("SELECT row_to_json(r)::text FROM run r");
    assert!(!dump.contains("Sekr3t"), "{dump}");
}

fn refusals(engine: ServerEngine) {
    // A database with a schema newer than this dbrig's.
    let db = ServerDb::new(engine);
    drop(db.open());
    db.query(&format!(
        "UPDATE dbrig_schema SET version = {}",
        SCHEMA_VERSION + 1
    ));
    let err = Store::open_server(&db.address()).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found, .. } if found == SCHEMA_VERSION + 1),
        "{err}"
    );
    // A database holding someone else's tables of the same names.
    let other = ServerDb::new(engine);
    other.query("CREATE TABLE run (id integer)");
    let err = Store::open_server(&other.address()).unwrap_err();
    assert!(
        matches!(err, StoreError::ForeignServerDatabase { .. }),
        "{err}"
    );
    // A database that is not there: the server's error, naming the redacted address.
    let mut missing = db.address();
    missing.database = "dbrig_results_test_no_such_db".into();
    missing.shown = "postgres://postgres@127.0.0.1/dbrig_results_test_no_such_db".into();
    let err = Store::open_server(&missing).unwrap_err();
    assert!(err.to_string().contains("no_such_db"), "{err}");
}

#[test]
fn postgres_refuses_newer_and_foreign_schemas() {
    refusals(ServerEngine::Postgres);
}

#[test]
fn mariadb_refuses_newer_and_foreign_schemas() {
    refusals(ServerEngine::Mysql);
}

/// A run copied from SQLite to a server and back reads back the same, and a second copy
/// stores nothing (a run is known by its uid).
#[test]
fn runs_copy_between_backends_once() {
    let m = measurements();
    let mut file = Store::open_in_memory().unwrap();
    let run = begin(&mut file, RunKind::Plan, "nightly");
    let c = cell(&mut file, run, "k", 8);
    writer(&mut file)
        .record_trial(c, &trial(1, TrialStatus::Done, Some(&m)))
        .unwrap();
    writer(&mut file)
        .record_trial(c, &trial(2, TrialStatus::Failed, None))
        .unwrap();
    writer(&mut file)
        .finish_run(run, RunStatus::Done, None)
        .unwrap();
    let doc = RunDocument::read(&*file, run).unwrap();
    for engine in [ServerEngine::Postgres, ServerEngine::Mysql] {
        let db = ServerDb::new(engine);
        let mut server = db.open();
        let Imported::Stored(there) = Importer::new(&mut server).import(&doc).unwrap() else {
            panic!("the first copy stores the run");
        };
        assert_eq!(
            Importer::new(&mut server).import(&doc).unwrap(),
            Imported::AlreadyThere(there)
        );
        assert_eq!(server.runs().unwrap().len(), 1);
        let back = RunDocument::read(&*server, there).unwrap();
        // The copy's writer is this process; everything else is the run's own.
        assert_eq!(
            RunDocument {
                pid: doc.pid,
                machine: doc.machine.clone(),
                ..back
            },
            doc,
            "{engine:?}"
        );
        assert_eq!(
            server
                .measurements(server.trials(server.cells(there).unwrap()[0].id).unwrap()[0].id)
                .unwrap()
                .unwrap()
                .latency
                .to_bytes(),
            m.latency.to_bytes()
        );
        // And back into a new SQLite file, as a server's save_copy makes it.
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("saved.db");
        server.save_copy(&saved).unwrap();
        let copy = Store::open(&saved).unwrap();
        let id = copy.latest_run_id().unwrap().unwrap();
        assert_eq!(copy.run(id).unwrap().uid, doc.uid);
    }
}

/// What writing one trial (a measured one, with ten interval samples) costs on each server,
/// beside a SQLite file (WAL, a full sync per commit): printed for the report, and held under
/// a loose bound so a noisy neighbour does not fail it. Each server commit waits for its
/// write-ahead log's sync, as the SQLite file's does: that sync is most of the figure here.
#[test]
fn writing_a_trial_is_cheap() {
    let mut m = measurements();
    m.intervals = (0..10).map(|_| m.intervals[0].clone()).collect();
    let dir = tempfile::tempdir().unwrap();
    for engine in [
        None,
        Some(ServerEngine::Postgres),
        Some(ServerEngine::Mysql),
    ] {
        let db = engine.map(ServerDb::new);
        let mut store = match &db {
            Some(db) => db.open(),
            None => Store::open(&dir.path().join("cost.db")).unwrap(),
        };
        let run = begin(&mut store, RunKind::Plan, "cost");
        let c = cell(&mut store, run, "k", 8);
        let mut times = Vec::new();
        for t in 1..=60 {
            let began = Instant::now();
            writer(&mut store)
                .record_trial(c, &trial(t, TrialStatus::Done, Some(&m)))
                .unwrap();
            times.push(began.elapsed());
        }
        times.sort();
        let median = times[times.len() / 2];
        let p90 = times[times.len() * 9 / 10];
        let name = engine.map_or("SQLite file".to_owned(), |e| format!("{e:?}"));
        eprintln!("{name}: writing a trial: median {median:?}, p90 {p90:?} (60 trials)");
        assert!(median < Duration::from_millis(25), "{name}: {median:?}");
    }
}

/// A server database left at schema 4 by an older dbrig is brought to the current schema by
/// the first dbrig that opens it, its runs kept (and read back without provenance).
fn upgrades_an_older_schema(engine: ServerEngine) {
    let db = ServerDb::new(engine);
    let (file, client) = match engine {
        ServerEngine::Postgres => ("src/postgres/migrations/0004_initial.sql", "psql"),
        ServerEngine::Mysql => ("src/mysql/migrations/0004_initial.sql", "mysql"),
    };
    let sql = std::fs::read_to_string(format!("{}/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let status = match engine {
        ServerEngine::Postgres => std::process::Command::new(client)
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
            ])
            .args(["-d", &db.name, "-c", &sql])
            .status(),
        ServerEngine::Mysql => std::process::Command::new(client)
            .args(["-h127.0.0.1", "-P3306", "-uroot", &db.name, "-e", &sql])
            .status(),
    };
    assert!(status.unwrap().success());
    db.query("CREATE TABLE dbrig_schema (version bigint NOT NULL)");
    db.query("INSERT INTO dbrig_schema (version) VALUES (4)");
    db.query(
        "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version, command_line, \
         options, host) VALUES ('0190-old', 'oltp', 'old', 'done', '2024-05-01T12:34:56.250Z', \
         '0.1.0', '[]', '{}', '{}')",
    );
    let store = db.open();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].uid, "0190-old");
    assert!(runs[0].provenance.is_empty());
    assert_eq!(
        db.query("SELECT version FROM dbrig_schema"),
        SCHEMA_VERSION.to_string()
    );
}

#[test]
fn postgres_upgrades_an_older_schema() {
    upgrades_an_older_schema(ServerEngine::Postgres);
}

#[test]
fn mariadb_upgrades_an_older_schema() {
    upgrades_an_older_schema(ServerEngine::Mysql);
}
