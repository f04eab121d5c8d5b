//! Integration tests of the results database against real files.

mod legacy;
mod lifecycle;
mod refusals;
mod resume;
mod servers;
mod trials;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbrig_core::measure::RateReport;
use dbrig_core::{
    IntervalSample, KeyDistribution, LatencyHistogram, LatencySummary, Measurements, QueryCounters,
};
use dbrig_store::testing::writer;
use dbrig_store::{
    CellId, NewCell, NewRun, NewTrial, RunId, RunKind, ServerAddress, ServerEndpoint, ServerEngine,
    Store, TrialStatus,
};
use serde_json::json;

/// Which backend the contract tests (the tests of this suite that are not about files) run
/// against: `DBRIG_STORE_TEST_BACKEND` = `sqlite` (the default), `postgres` or `mariadb` — the
/// machine's servers (PostgreSQL at 127.0.0.1:5432, user postgres; MariaDB at 127.0.0.1:3306,
/// user root), in a database of each test's own, dropped after it.
pub fn backend() -> Option<ServerEngine> {
    match std::env::var("DBRIG_STORE_TEST_BACKEND").as_deref() {
        Ok("postgres") => Some(ServerEngine::Postgres),
        Ok("mariadb") | Ok("mysql") => Some(ServerEngine::Mysql),
        Ok("sqlite") | Ok("") | Err(_) => None,
        Ok(other) => panic!("DBRIG_STORE_TEST_BACKEND={other}: sqlite, postgres or mariadb"),
    }
}

/// A database of its own on a server of the machine, dropped with it.
pub struct ServerDb {
    pub engine: ServerEngine,
    pub name: String,
}

impl ServerDb {
    pub fn new(engine: ServerEngine) -> ServerDb {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "dbrig_results_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let db = ServerDb { engine, name };
        db.admin(&format!("DROP DATABASE IF EXISTS {}", db.name));
        db.admin(&format!("CREATE DATABASE {}", db.name));
        db
    }

    /// Run one statement as the server's administrator, in its own client.
    pub fn admin(&self, statement: &str) -> String {
        self.sql(None, statement)
    }

    /// Run one statement in this database, in the server's own client.
    pub fn query(&self, statement: &str) -> String {
        self.sql(Some(&self.name), statement)
    }

    fn sql(&self, db: Option<&str>, statement: &str) -> String {
        let mut cmd = match self.engine {
            ServerEngine::Postgres => {
                let mut c = std::process::Command::new("psql");
                c.args([
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-At",
                    "-v",
                    "ON_ERROR_STOP=1",
                ])
                .args(["-d", db.unwrap_or("postgres"), "-c", statement]);
                c
            }
            ServerEngine::Mysql => {
                let mut c = std::process::Command::new("mysql");
                c.args(["-h127.0.0.1", "-P3306", "-uroot", "-N", "-B"]);
                if let Some(db) = db {
                    c.arg(db);
                }
                c.args(["-e", statement]);
                c
            }
        };
        let out = cmd.output().expect("the server's client is installed");
        assert!(
            out.status.success(),
            "{statement}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn address(&self) -> ServerAddress {
        let (scheme, user, port) = match self.engine {
            ServerEngine::Postgres => ("postgres", "postgres", 5432),
            ServerEngine::Mysql => ("mysql", "root", 3306),
        };
        ServerAddress {
            engine: self.engine,
            endpoint: ServerEndpoint::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            user: user.into(),
            database: self.name.clone(),
            password: None,
            shown: format!("{scheme}://{user}@127.0.0.1:{port}/{}", self.name),
        }
    }

    pub fn open(&self) -> Store {
        Store::open_server(&self.address()).unwrap()
    }
}

impl Drop for ServerDb {
    fn drop(&mut self) {
        let drop = match self.engine {
            ServerEngine::Postgres => format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ServerEngine::Mysql => format!("DROP DATABASE IF EXISTS {}", self.name),
        };
        self.admin(&drop);
    }
}

/// Where a test's results live, opened as often as the test likes: a new SQLite file, or a
/// new database on the server [`backend`] names.
pub enum Place {
    File(tempfile::TempDir),
    Server(ServerDb),
}

impl Place {
    pub fn make() -> Place {
        match backend() {
            None => Place::File(tempfile::tempdir().unwrap()),
            Some(engine) => Place::Server(ServerDb::new(engine)),
        }
    }

    pub fn open(&self) -> Store {
        match self {
            Place::File(dir) => Store::open(&dir.path().join("results.db")).unwrap(),
            Place::Server(db) => db.open(),
        }
    }
}

/// A store of a test's own: SQLite in memory, or a new database on the server [`backend`]
/// names (dropped with it).
pub struct Fresh {
    store: Store,
    _place: Option<Place>,
}

pub fn fresh() -> Fresh {
    match backend() {
        None => Fresh {
            store: Store::open_in_memory().unwrap(),
            _place: None,
        },
        Some(_) => {
            let place = Place::make();
            Fresh {
                store: place.open(),
                _place: Some(place),
            }
        }
    }
}

impl std::ops::Deref for Fresh {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.store
    }
}

impl std::ops::DerefMut for Fresh {
    fn deref_mut(&mut self) -> &mut Store {
        &mut self.store
    }
}

/// A fixed instant plus `secs`, so stored timestamps are predictable.
pub fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_714_566_896 + secs) + Duration::from_millis(250)
}

pub fn begin(store: &mut Store, kind: RunKind, name: &str) -> RunId {
    let options = json!({"time": 10, "tables": 4, "target": "mysql://bench:***@127.0.0.1/db"});
    let host = json!({"cpus": 8, "os": "linux"});
    let argv = vec![
        "dbrig".to_owned(),
        "run".to_owned(),
        name.to_owned(),
        "--target=mysql://bench:***@127.0.0.1/db".to_owned(),
    ];
    writer(store)
        .begin_run(&NewRun {
            kind,
            name,
            started_at: at(0),
            options: &options,
            host: &host,
            dbrig_version: "0.1.0",
            command_line: &argv,
            plan_text: Some("[[cell]]\nworkload = \"oltp_read_only\"\n"),
        })
        .unwrap()
}

pub fn cell(store: &mut Store, run: RunId, key: &str, clients: u32) -> CellId {
    let options = json!({"tables": 4, "table_size": 10000});
    writer(store)
        .ensure_cell(
            run,
            &NewCell {
                cell_key: key,
                configuration: "default",
                workload: "oltp_read_only",
                clients,
                options: &options,
                target: "mysql://bench:***@127.0.0.1:3306/db",
            },
        )
        .unwrap()
}

/// Measurements with every field set to something distinctive.
pub fn measurements() -> Measurements {
    let mut latency = LatencyHistogram::new();
    for us in [850, 900, 1_200, 1_250, 3_400, 15_000, 250_000] {
        latency.record_us(us);
    }
    Measurements {
        threads: 8,
        key_distribution: KeyDistribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        },
        duration_s: 10.000_123_456_789,
        transactions: 12_345,
        queries: QueryCounters {
            read: 172_830,
            write: 3,
            other: 24_690,
        },
        ignored_errors: 7,
        reconnects: 2,
        fatal_errors: vec!["client 3: lost connection during SELECT c FROM sbtest1".to_owned()],
        latency,
        intervals: vec![
            IntervalSample {
                t_s: 1.0,
                threads: 8,
                tps: 1_234.5,
                qps: 19_752.1,
                reads_ps: 17_283.0,
                writes_ps: 0.1,
                other_ps: 2_469.0,
                latency_pct_ms: 1.234_567,
                errors_ps: 0.7,
                reconnects_ps: 0.0,
                backlog: None,
            },
            IntervalSample {
                t_s: 2.0,
                threads: 8,
                tps: 1_240.25,
                qps: 19_844.0,
                reads_ps: 17_360.0,
                writes_ps: 0.0,
                other_ps: 2_480.5,
                latency_pct_ms: 1.5,
                errors_ps: 0.0,
                reconnects_ps: 0.2,
                backlog: Some(42),
            },
        ],
        rate: Some(RateReport {
            target_rate: 1_250.0,
            achieved_rate: 1_234.5,
            final_backlog: 3,
            max_backlog: 42,
            service_time_ms: LatencySummary {
                min: 0.8,
                avg: 1.1,
                max: 240.0,
                p50: 1.0,
                p90: 1.3,
                p95: 3.1,
                p99: 14.9,
                p999: 240.0,
                sum: 13_579.1,
            },
            latency_incl_unserved_ms: None,
        }),
        percentile: 95.0,
        interrupted: true,
    }
}

pub fn trial<'a>(n: u32, status: TrialStatus, m: Option<&'a Measurements>) -> NewTrial<'a> {
    NewTrial {
        trial: n,
        status,
        reason: None,
        server_version: Some("11.4.2-MariaDB"),
        started_at: at(10 + u64::from(n) * 20),
        finished_at: at(20 + u64::from(n) * 20),
        measurements: m,
        result: None,
        environment: None,
    }
}
