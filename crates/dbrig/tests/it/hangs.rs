//! Servers that stop answering, and Ctrl-C (issue 30, items 5 and 6; item 20's server CPU).
//!
//! A server stopped with SIGSTOP — a private one this test starts, never the machine's — must
//! not hold a run: it ends within its time, the grace and the life probe's few seconds, says
//! once which connections gave up, exits non-zero and stores the trial as failed with the
//! reason. Ctrl-C against clients blocked by a lock another session holds (on the test's own
//! table in its own database) stops and reports within 2 s with one line about the abandoned
//! clients; a second Ctrl-C leaves at once (exit 130), saving what was measured. A server
//! reached through its Unix socket gets its CPU measured as one reached through its port, and
//! one-client PostgreSQL runs store a server CPU close to what the server really spent.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use dbrig_store::{Store, TrialStatus};

use crate::{dbrig, interrupt, ok, stderr_until, text};

/// A managed server of this test (open access), stopped when dropped and never left stopped.
struct Private {
    out: PathBuf,
    name: String,
    engine: &'static str,
    pid: u32,
    port: String,
    socket: String,
}

impl Private {
    fn start(out: &Path, name: &str, engine: &'static str) -> Private {
        let plan = out.join(format!("{name}-server.toml"));
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"{engine}\"\nopen-access = true\n"),
        )
        .unwrap();
        let o = ok(dbrig(
            out,
            &[
                "server",
                "start",
                name,
                "--plan",
                &plan.display().to_string(),
            ],
        ));
        let t = text(&o);
        // "server NAME (ENGINE) started: pid N, port P, socket S"
        let line = t
            .lines()
            .find(|l| l.contains(" started: pid "))
            .unwrap_or_else(|| panic!("no start line:\n{t}"));
        let field = |key: &str| {
            line.split(", ")
                .find_map(|f| f.rsplit_once(key).map(|(_, v)| v.trim().to_owned()))
                .unwrap_or_else(|| panic!("no {key} in {line}"))
        };
        Private {
            out: out.to_owned(),
            name: name.to_owned(),
            engine,
            pid: field("pid ").parse().unwrap(),
            port: field("port "),
            socket: field("socket "),
        }
    }

    fn url(&self) -> String {
        match self.engine {
            "postgres" => format!("postgres://postgres@127.0.0.1:{}/postgres", self.port),
            _ => format!("mysql://root@127.0.0.1:{}/test", self.port),
        }
    }

    fn socket_url(&self) -> String {
        match self.engine {
            "postgres" => format!(
                "postgres://postgres@localhost/postgres?socket={}",
                self.socket
            ),
            _ => format!("mysql://root@localhost/test?socket={}", self.socket),
        }
    }

    /// The server and its children (PostgreSQL's processes each lead a group of their own):
    /// stopped (`STOP`) or woken (`CONT`).
    fn signal(&self, sig: &str) {
        let mut pids = vec![self.pid];
        pids.extend(children(self.pid));
        for pid in pids {
            // A child may have ended meanwhile: nothing to say about it.
            let _ = Command::new("kill")
                .args([&format!("-{sig}"), &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }

    /// CPU seconds of the server's process tree now, read until two readings agree (no
    /// backend ending meanwhile).
    fn cpu_s(&self) -> f64 {
        let mut last = tree_cpu(self.pid);
        loop {
            std::thread::sleep(Duration::from_millis(300));
            let now = tree_cpu(self.pid);
            if (now - last).abs() < 1e-9 {
                return now;
            }
            last = now;
        }
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        self.signal("CONT");
        let _ = dbrig(&self.out, &["server", "stop", &self.name]);
    }
}

fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // "pid (comm) state ppid …": the fields after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// utime + stime + cutime + cstime of `pid` and its children, in seconds (100 ticks a second).
fn tree_cpu(pid: u32) -> f64 {
    let one = |p: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let f: Vec<f64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| {
                rest.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        // After ')': state is not a number, so index 10.. are utime, stime, cutime, cstime.
        f.get(10..14).map_or(0.0, |t| t.iter().sum::<f64>() / 100.0)
    };
    one(pid) + children(pid).into_iter().map(one).sum::<f64>()
}

/// One stored trial: status, reason, environment and result as JSON, measurements.
struct Stored {
    status: TrialStatus,
    reason: String,
    json: serde_json::Value,
    measured: dbrig_store::TrialMeasurements,
}

/// The latest run's only trial.
fn latest_trial(out: &Path) -> Stored {
    let store = Store::open(&out.join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let mut trials = Vec::new();
    for c in store.cells(run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            trials.push(Stored {
                status: t.status,
                reason: t.reason.clone().unwrap_or_default(),
                json: crate::trial_json(&t),
                measured: t.measurements.clone().expect("measurements stored"),
            });
        }
    }
    assert_eq!(trials.len(), 1, "one trial in the latest run");
    trials.remove(0)
}

/// A `dbrig run` in the background, its interval lines on stderr (JSON report on stdout).
fn spawn_run(out: &Path, target: &str, extra: &[&str]) -> Child {
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--target",
        target,
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--report-interval",
        "1",
        "--format",
        "json",
    ];
    args.extend(extra);
    Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(&args)
        .arg(format!("--out={}", out.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dbrig runs")
}

/// Wait for `child` at most `limit`; `None` if it still runs (it is then killed).
fn wait_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The run's time and its grace (half the time, at least 5 s), and the life probe's 5 s.
const TIME_S: u64 = 4;
const GRACE_S: u64 = 5;
const LIFE_PROBE_S: u64 = 5;

/// A server stopped mid-run (SIGSTOP): the run ends within its time, the grace and the life
/// probe (plus slack for a loaded machine), exits 1, says once which connections gave up, and
/// stores the trial failed with the reason. Then, on the same server stopped again, Ctrl-C
/// twice: the second leaves at once (exit 130) with what was measured saved.
fn stops_answering(engine: &'static str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let server = Private::start(out, &format!("frozen-{engine}"), engine);
    let url = server.url();
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
        ],
    ));

    let time = TIME_S.to_string();
    let began = Instant::now();
    let mut child = spawn_run(out, &url, &["--time", &time]);
    let (seen, rest) = stderr_until(&mut child, |l| l.starts_with("[ 1s ]"));
    server.signal("STOP");
    let stopped_at = began.elapsed();
    let limit = Duration::from_secs(TIME_S + GRACE_S + LIFE_PROBE_S + 6);
    let status = wait_within(
        &mut child,
        limit.saturating_sub(stopped_at) + Duration::from_secs(30),
    );
    let took = began.elapsed();
    server.signal("CONT");
    let status = status
        .unwrap_or_else(|| panic!("{engine}: the run was still going {took:?} after it began"));
    let stderr = format!("{}\n{}", seen.join("\n"), rest.join().unwrap());
    assert!(
        took <= limit,
        "{engine}: the run took {took:?} (limit {limit:?}):\n{stderr}"
    );
    assert_eq!(status.code(), Some(1), "{engine}:\n{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("dbrig: error:"))
        .unwrap_or_else(|| panic!("{engine}: no error line:\n{stderr}"));
    assert!(
        error.contains("the server stopped answering") && error.contains("2 client(s) abandoned"),
        "{engine}: {error}"
    );
    // One line about the clients, not one per client; the evidence connection named once.
    assert_eq!(
        stderr.matches("client(s) abandoned").count(),
        1,
        "{engine}:\n{stderr}"
    );
    assert!(
        stderr.contains("counters not sampled: the evidence connection: no reply from"),
        "{engine}:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{engine}:\n{stderr}");
    let t = latest_trial(out);
    assert_eq!(t.status, TrialStatus::Failed, "{engine}: {}", t.reason);
    assert!(
        t.reason.starts_with("the server stopped answering") && t.reason.contains("abandoned"),
        "{engine}: {}",
        t.reason
    );
    // Not taken for a restart: the server was there, silent.
    assert_eq!(
        t.json["server_life"]["after"]["silent"], true,
        "{engine}: {}",
        t.json
    );
    assert_eq!(
        t.json["server_life"]["after"]["died"], false,
        "{engine}: {}",
        t.json
    );
    // What was measured before the stop is kept, over the run's time (not the grace's).
    let m = &t.measured;
    assert!(m.transactions > 0, "{engine}: {m:?}");
    assert!(
        (m.duration_s - TIME_S as f64).abs() < 0.5,
        "{engine}: {m:?}"
    );
    assert_eq!(m.fatal_errors.len(), 1, "{engine}: {m:?}");

    // The server answers again; stopped once more, two Ctrl-C leave at once.
    let mut child = spawn_run(out, &url, &["--time", "60"]);
    let (_, rest) = stderr_until(&mut child, |l| l.starts_with("[ 1s ]"));
    server.signal("STOP");
    interrupt(&child);
    let first = Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    interrupt(&child);
    let status = wait_within(&mut child, Duration::from_secs(30));
    let took = first.elapsed();
    server.signal("CONT");
    let stderr = rest.join().unwrap();
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(130),
        "{engine}:\n{stderr}"
    );
    assert!(
        took < Duration::from_secs(2),
        "{engine}: {took:?}:\n{stderr}"
    );
    assert!(
        stderr.contains("interrupted again: leaving now"),
        "{engine}:\n{stderr}"
    );
    let t = latest_trial(out);
    assert_eq!(t.status, TrialStatus::Interrupted, "{engine}: {}", t.reason);
    let m = &t.measured;
    assert!(m.interrupted && m.transactions > 0, "{engine}: {m:?}");
    assert!(
        m.fatal_errors
            .iter()
            .any(|l| l.contains("at the second Ctrl-C")),
        "{engine}: {m:?}"
    );
}

#[test]
fn a_private_mariadb_that_stops_answering() {
    stops_answering("mariadb");
}

#[test]
fn a_private_postgresql_that_stops_answering() {
    stops_answering("postgres");
}

/// A MariaDB database of the test's own on the machine's server, dropped at the end.
struct OwnDb(String);

impl OwnDb {
    fn new(name: &str) -> OwnDb {
        let db = format!("dbrig_{name}_{}", std::process::id());
        mariadb(&format!(
            "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        ));
        OwnDb(db)
    }
}

impl Drop for OwnDb {
    fn drop(&mut self) {
        mariadb(&format!("DROP DATABASE IF EXISTS {}", self.0));
    }
}

fn mariadb(statements: &str) -> String {
    let o = Command::new("mariadb")
        .args(["-uroot", "-h127.0.0.1", "-N", "-B", "-e", statements])
        .output()
        .expect("the mariadb client is installed");
    assert!(
        o.status.success(),
        "mariadb -e {statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// Ctrl-C while every client waits on a lock another session holds (`LOCK TABLES` on the
/// test's own table): the report comes within 2 s (it took the grace, half the run's time,
/// with zero-QPS lines all along), exit 130, one line about the abandoned clients (it said "2
/// client(s) abandoned" and "0 client(s) abandoned"), their statements cancelled on the server
/// while the lock is still held, and what was measured saved.
#[test]
fn ctrl_c_against_clients_a_lock_holds_reports_within_2_s() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let db = OwnDb::new("ctrl_c_lock");
    let url = format!("mysql://root@127.0.0.1:3306/{}", db.0);
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
        ],
    ));
    let mut child = spawn_run(out, &url, &["--time", "60"]);
    let holder = std::sync::Mutex::new(None::<Child>);
    let (seen, rest) = stderr_until(&mut child, |l| {
        let mut h = holder.lock().unwrap();
        if l.starts_with("[ 1s ]") && h.is_none() {
            *h = Some(
                Command::new("mariadb")
                    .args(["-uroot", "-h127.0.0.1", &db.0, "-e"])
                    .arg("LOCK TABLES sbtest1 WRITE; SELECT SLEEP(120)")
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("the mariadb client runs"),
            );
        }
        // Every client waits on the lock: an interval without a transaction.
        h.is_some() && l.contains(" tps: 0.00 ")
    });
    interrupt(&child);
    let sent = Instant::now();
    let status = wait_within(&mut child, Duration::from_secs(60));
    let took = sent.elapsed();
    // Still locked: a statement of dbrig's left on the server now was not cancelled.
    let waiting = format!(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{}' AND INFO LIKE 'SELECT c FROM sbtest%'",
        db.0
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = mariadb(&waiting);
    while left != "0" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = mariadb(&waiting);
    }
    let mut h = holder.into_inner().unwrap().expect("the lock was taken");
    let _ = h.kill();
    let _ = h.wait();
    let stderr = format!("{}\n{}", seen.join("\n"), rest.join().unwrap());
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{stderr}");
    assert!(
        took < Duration::from_secs(2),
        "the report took {took:?}:\n{stderr}"
    );
    assert_eq!(
        left, "0",
        "statements left waiting on the server:\n{stderr}"
    );
    let after_ctrl_c: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("dbrig: interrupted"))
        .collect();
    assert!(
        after_ctrl_c.iter().filter(|l| l.starts_with('[')).count() <= 1,
        "interval lines after Ctrl-C:\n{stderr}"
    );
    let t = latest_trial(out);
    assert_eq!(t.status, TrialStatus::Interrupted, "{}", t.reason);
    let m = &t.measured;
    assert!(m.interrupted && m.transactions > 0, "{m:?}");
    // The measured time ends at Ctrl-C, not 60 s or the grace later.
    assert!(m.duration_s > 1.0 && m.duration_s < 30.0, "{m:?}");
    let abandoned: Vec<&String> = m
        .fatal_errors
        .iter()
        .filter(|l| l.contains("abandoned"))
        .collect();
    assert_eq!(abandoned.len(), 1, "{m:?}");
    assert!(
        abandoned[0].starts_with("2 client(s) abandoned")
            && abandoned[0].contains("cancelled on the server"),
        "{m:?}"
    );
}

/// The server process behind a Unix socket target is found (its CPU was not measured: only a
/// TCP port was looked up), and a one-client PostgreSQL run's server CPU is what the server
/// spent (it was stored at a tenth or less when a backend ending as its client closed was
/// read in the middle of being reaped: 3 of 6 such runs).
#[test]
fn server_cpu_of_socket_targets_and_of_one_client_postgresql_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let maria = Private::start(out, "cpu-mariadb", "mariadb");
    let pg = Private::start(out, "cpu-postgres", "postgres");
    for server in [&maria, &pg] {
        ok(dbrig(
            out,
            &[
                "prepare",
                "oltp_point_select",
                "--target",
                &server.url(),
                "--table-size",
                "1000",
            ],
        ));
        ok(dbrig(
            out,
            &[
                "run",
                "oltp_point_select",
                "--target",
                &server.socket_url(),
                "--table-size",
                "1000",
                "--time",
                "2",
            ],
        ));
        let t = latest_trial(out);
        let cpu = &t.json["evidence"]["cpu"];
        let notes = &t.json["evidence"]["notes"];
        let engine = server.engine;
        assert_eq!(
            cpu["server_pid"].as_u64(),
            Some(u64::from(server.pid)),
            "{engine}: {cpu} {notes}"
        );
        assert!(
            cpu["server_cpu_s"].as_f64().is_some_and(|s| s > 0.0),
            "{engine}: {cpu} {notes}"
        );
        let connection = t.json["connection"]["address_family"].to_string();
        assert!(
            connection.contains("unix"),
            "{}: {connection}",
            server.engine
        );
    }
    ok(dbrig(
        out,
        &[
            "prepare",
            "pgbench-init",
            "--scale",
            "1",
            "--target",
            &pg.url(),
        ],
    ));
    for round in 0..4 {
        let before = pg.cpu_s();
        ok(dbrig(
            out,
            &[
                "run",
                "--builtin",
                "select-only",
                "--threads",
                "1",
                "--time",
                "3",
                "--target",
                &pg.url(),
            ],
        ));
        let whole = pg.cpu_s() - before;
        let t = latest_trial(out);
        let stored = t.json["evidence"]["cpu"]["server_cpu_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("round {round}: no server CPU: {}", t.json["evidence"]));
        // The measured interval is most of the run (connecting and probing take
        // milliseconds); never more than the whole.
        assert!(
            stored >= 0.6 * whole && stored <= whole + 0.02,
            "round {round}: stored {stored} s of the server's {whole} s over the run"
        );
    }
}

fn psql(db: &str, statement: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            db,
            "-At",
            "-c",
            statement,
        ])
        .output()
        .expect("psql is installed");
    assert!(
        o.status.success(),
        "psql -c {statement}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// A PostgreSQL database of the test's own on the machine's server, dropped at the end.
struct OwnPgDb(String);

impl OwnPgDb {
    fn new(name: &str) -> OwnPgDb {
        let db = format!("dbrig_{name}_{}", std::process::id());
        psql("postgres", &format!("DROP DATABASE IF EXISTS {db}"));
        psql("postgres", &format!("CREATE DATABASE {db}"));
        OwnPgDb(db)
    }
}

impl Drop for OwnPgDb {
    fn drop(&mut self) {
        psql(
            "postgres",
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0),
        );
    }
}

/// The clients' set-up waits on the server too: with a lock held elsewhere on the test's own
/// table (PostgreSQL's parse of a statement on it waits for the lock), the clients' prepares
/// got no answer and the run waited for as long as the lock was held, Ctrl-C unheard. Now each
/// reply of the set-up waits at most `--connect-timeout` and the run fails in one line that
/// says so; Ctrl-C while the clients set up stops the run at once (exit 130).
#[test]
fn a_lock_held_elsewhere_fails_the_set_up_within_the_connect_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let db = OwnPgDb::new("setup_lock");
    let url = format!("postgres://postgres@127.0.0.1:5432/{}", db.0);
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
        ],
    ));
    let mut holder = Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", &db.0, "-c"])
        .arg("BEGIN; LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120);")
        .stdout(Stdio::null())
        .spawn()
        .expect("psql runs");
    let held = "SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                WHERE c.relname = 'sbtest1' AND l.mode = 'AccessExclusiveLock' AND l.granted";
    let deadline = Instant::now() + Duration::from_secs(30);
    while psql(&db.0, held) != "1" {
        assert!(Instant::now() < deadline, "the lock was never taken");
        std::thread::sleep(Duration::from_millis(50));
    }

    let began = Instant::now();
    let o = dbrig(
        out,
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "1000",
            "--time",
            "5",
            "--connect-timeout",
            "2",
        ],
    );
    let took = began.elapsed();
    let error = crate::error_line(&o);
    assert!(took < Duration::from_secs(15), "{took:?}: {error}");
    assert!(
        error.contains("within 2 s") && error.contains("a lock held elsewhere"),
        "{error}"
    );
    assert!(
        error.contains("statement: SELECT c FROM sbtest1"),
        "{error}"
    );

    let mut child = spawn_run(out, &url, &["--time", "5"]);
    std::thread::sleep(Duration::from_millis(1500));
    interrupt(&child);
    let sent = Instant::now();
    let status = wait_within(&mut child, Duration::from_secs(60));
    let took = sent.elapsed();
    let _ = holder.kill();
    let _ = holder.wait();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{stderr}");
    assert!(
        took < Duration::from_secs(2),
        "Ctrl-C took {took:?}:\n{stderr}"
    );
}
