//! Protocol modes and connection behaviours (issue 15), checked against what the servers
//! themselves saw: PostgreSQL's statement log tells simple / extended (unnamed) / prepared
//! (named) statements apart, `pg_stat_database.sessions` and `pg_stat_activity` count and
//! date the connections; PgBouncer in transaction mode in front of it takes the simple
//! protocol, loads in any protocol, and clients of several processes sharing its sessions;
//! MariaDB's general log tells `--ps-mode` apart and `Connections` counts the
//! connections. Every server here is the test's own (managed, open to the command-line
//! clients), so other tests' connections never enter the counts.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{dbrig, error_line, json, ok, text};

/// A managed server of this test, stopped when dropped.
struct Server {
    out: PathBuf,
    name: String,
    engine: &'static str,
    port: String,
    log: PathBuf,
    /// The server's Unix socket, when its start line names one.
    socket: Option<String>,
}

impl Server {
    fn start(out: &Path, name: &str, engine: &'static str, params: &[&str]) -> Self {
        let plan = out.join(format!("{name}-server.toml"));
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"{engine}\"\nopen-access = true\n"),
        )
        .unwrap();
        let plan = plan.display().to_string();
        let mut args = vec!["server", "start", name, "--plan", &plan];
        for p in params {
            args.extend(["--param", p]);
        }
        let o = ok(dbrig(out, &args));
        let t = text(&o);
        let line = |key: &str| {
            t.lines()
                .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_owned()))
                .unwrap_or_else(|| panic!("no {key} line in:\n{t}"))
        };
        let target = line("target:");
        let port = target
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .expect("a port in the target")
            .to_owned();
        Server {
            out: out.to_owned(),
            name: name.to_owned(),
            engine,
            port,
            log: PathBuf::from(line("log:")),
            socket: t
                .lines()
                .find_map(|l| l.split_once(", socket ").map(|(_, p)| p.trim().to_owned())),
        }
    }

    fn url(&self) -> String {
        match self.engine {
            "postgres" => format!("postgres://postgres@127.0.0.1:{}/postgres", self.port),
            _ => format!("mysql://root@127.0.0.1:{}/test", self.port),
        }
    }

    /// One statement's rows, tab-separated, read over a connection of its own (to PostgreSQL's
    /// `template1`, so the sessions of database `postgres` count dbrig's alone).
    fn sql(&self, statement: &str) -> String {
        let o = match self.engine {
            "postgres" => Command::new("psql")
                .args(["-h", "127.0.0.1", "-p", &self.port, "-U", "postgres"])
                .args(["-d", "template1", "-X", "-A", "-t", "-q", "-F", "\t", "-c"])
                .arg(statement)
                .output(),
            _ => Command::new("mariadb")
                .args(["-uroot", "-h127.0.0.1", "-P", &self.port, "-N", "-B", "-e"])
                .arg(statement)
                .output(),
        }
        .expect("the engine's command-line client");
        assert!(
            o.status.success(),
            "{statement}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    }

    fn number(&self, statement: &str) -> f64 {
        let v = self.sql(statement);
        v.rsplit('\t')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{statement}: not a number: {v:?}"))
    }

    /// Connections the server accepted so far: database `postgres`'s sessions, MariaDB's
    /// `Connections` (which counts the client reading it too).
    fn connections(&self) -> i64 {
        match self.engine {
            "postgres" => self
                .number("SELECT sessions FROM pg_stat_database WHERE datname = 'postgres'")
                as i64,
            _ => self.number("SHOW GLOBAL STATUS LIKE 'Connections'") as i64 - 1,
        }
    }

    /// [`Server::connections`] once the count stands still (PostgreSQL counts a session
    /// from its backend, which may still be starting or ending when the client is done).
    fn settled_connections(&self) -> i64 {
        let mut last = self.connections();
        // MariaDB counts a connection as it is accepted (and each read adds its own).
        if self.engine != "postgres" {
            return last;
        }
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(200));
            let now = self.connections();
            if now == last {
                return now;
            }
            last = now;
        }
        last
    }

    /// The server log's length, to read what a run added to it.
    fn log_len(&self) -> usize {
        std::fs::read(&self.log).map_or(0, |b| b.len())
    }

    fn log_since(&self, from: usize) -> String {
        let b = std::fs::read(&self.log).unwrap_or_default();
        String::from_utf8_lossy(&b[from.min(b.len())..]).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = dbrig(&self.out, &["server", "stop", &self.name]);
    }
}

/// `dbrig run` of `workload` on `target` with `args`, in JSON.
fn run(out: &Path, workload: &str, target: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "run", workload, "--target", target, "--time", "0", "--format", "json",
    ];
    all.extend_from_slice(args);
    json(&ok(dbrig(out, &all)))
}

const TABLE: [&str; 4] = ["--tables", "1", "--table-size", "100"];

/// Connections a run makes besides its clients' (its own checks, the server's settings, …):
/// the same for every run of one workload, so differences between runs count the clients'.
fn connections_of(s: &Server, f: impl FnOnce() -> serde_json::Value) -> (i64, serde_json::Value) {
    let before = s.settled_connections();
    let v = f();
    (s.settled_connections() - before, v)
}

#[test]
fn postgres_protocols_connections_and_pgbouncer() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    let pg = Server::start(out, "conn15pg", "postgres", &["log_statement=all"]);
    let url = pg.url();
    ok(dbrig(
        out,
        &[
            &["prepare", "oltp_point_select", "--target", &url][..],
            &TABLE,
        ]
        .concat(),
    ));

    // `?socket=DIR` with the URL's port: libpq's `DIR/.s.PGSQL.PORT`. (The directory alone is
    // the default port's socket, which this server does not have.)
    let socket = pg.socket.clone().expect("the managed server's socket");
    let dir = Path::new(&socket).parent().unwrap().display().to_string();
    let v = run(
        out,
        "oltp_point_select",
        &format!(
            "postgres://postgres@localhost:{}/postgres?socket={dir}",
            pg.port
        ),
        &[&["--events", "5"][..], &TABLE].concat(),
    );
    assert_eq!(v["queries"]["read"], 5, "{v}");
    assert_eq!(v["connection"]["address_family"], "unix_socket", "{v}");

    // A statement the server refuses while the clients prepare the workload's is a schema
    // mismatch only when its SQLSTATE says so (an undefined column), not any error (a syntax
    // error here; a name taken in a pooled session below).
    for (body, code, schema) in [
        ("SELEC 1;\n", "42601", false),
        ("SELECT nosuchcolumn FROM pg_class;\n", "42703", true),
    ] {
        let script = out.join("refused.sql");
        std::fs::write(&script, body).unwrap();
        let e = error_line(&dbrig(
            out,
            &[
                "run",
                "--target",
                &url,
                "--script",
                &script.display().to_string(),
                "--protocol",
                "prepared",
                "--events",
                "1",
                "--time",
                "0",
            ],
        ));
        assert!(
            e.contains("statements do not prepare") && e.contains(code),
            "{e}"
        );
        assert_eq!(
            e.contains("differ from the workload's schema"),
            schema,
            "{e}"
        );
    }

    // Each protocol as the server logged it: literals in simple queries, the unnamed
    // statement, named statements; the counts are the same.
    for (protocol, want, never) in [
        (
            "simple",
            "statement: SELECT c FROM sbtest1 WHERE id=",
            "execute",
        ),
        (
            "extended",
            "execute <unnamed>: SELECT c FROM sbtest1 WHERE id=$1",
            "execute dbrig_",
        ),
        (
            "prepared",
            "SELECT c FROM sbtest1 WHERE id=$1",
            "execute <unnamed>: SELECT c",
        ),
    ] {
        let from = pg.log_len();
        let v = run(
            out,
            "oltp_point_select",
            &url,
            &[&["--events", "20", "--protocol", protocol][..], &TABLE].concat(),
        );
        assert_eq!(v["queries"]["read"], 20, "{protocol}: {v}");
        assert_eq!(v["connection"]["protocol"], protocol, "{v}");
        assert_eq!(v["connection"]["address_family"], "tcp", "{v}");
        let log = pg.log_since(from);
        let point: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("FROM sbtest1 WHERE id="))
            .collect();
        assert!(
            point.iter().filter(|l| l.contains(want)).count() >= 20,
            "{protocol}: want {want:?} in {point:#?}"
        );
        assert!(
            !point.iter().any(|l| l.contains(never)),
            "{protocol}: {never:?} in {point:#?}"
        );
        if protocol == "prepared" {
            // Parsed once (named), executed 20 times.
            assert!(
                point
                    .iter()
                    .filter(|l| l.contains("execute dbrig_"))
                    .count()
                    >= 20,
                "{point:#?}"
            );
        }
    }

    // The connect workload: one connection per event, besides the clients' first ones.
    let (few, a) = connections_of(&pg, || {
        run(out, "connect", &url, &["--events", "10", "--threads", "2"])
    });
    let (many, b) = connections_of(&pg, || {
        run(out, "connect", &url, &["--events", "40", "--threads", "2"])
    });
    assert_eq!(many - few, 30, "{a}\n{b}");
    assert_eq!(b["transactions"], 40);
    assert_eq!(b["connect_latency"]["connections"], 42, "{b}");
    assert!(b["connect_latency"]["latency_ms"]["max"].as_f64().unwrap() > 0.0);
    assert_eq!(
        b["statements"][0]["statement"], "connect",
        "the set-up alone, as a statement: {b}"
    );

    // --reconnect 10 over 40 events of one client: a new connection after events 10, 20
    // and 30 (none after the last), counted as reconnects and as connect latency.
    let point = |extra: &[&str]| {
        let mut args = vec!["--events", "40", "--threads", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&TABLE);
        run(out, "oltp_point_select", &url, &args)
    };
    let (plain, _) = connections_of(&pg, || point(&[]));
    let (again, v) = connections_of(&pg, || point(&["--reconnect", "10"]));
    assert_eq!(again - plain, 3, "{v}");
    assert_eq!(v["reconnects"], 3, "{v}");
    assert_eq!(v["connect_latency"]["connections"], 4, "{v}");
    assert_eq!(v["connection"]["reconnect_every"], 10, "{v}");

    // --idle-clients 3 and --connect-rate 10 with 3 clients: 6 connections, held through
    // the run, 3 of them never used for a statement (the lean client reads the server's
    // version from the session's start: its `query` stays empty), opened over at least 5
    // gaps of 100 ms.
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", "oltp_point_select", "--target", &url, "--time", "4"])
        .args([
            "--threads",
            "3",
            "--idle-clients",
            "3",
            "--connect-rate",
            "10",
        ])
        .args(TABLE)
        .arg(format!("--out={}", out.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ours = "FROM pg_stat_activity WHERE datname = 'postgres' AND application_name = 'dbrig'";
    let clients = format!("{ours} AND query LIKE 'SELECT c FROM sbtest1%'");
    let idle = format!("{ours} AND state = 'idle' AND query = ''");
    let deadline = Instant::now() + Duration::from_secs(20);
    let (c, i) = loop {
        let c = pg.number(&format!("SELECT count(*) {clients}"));
        let i = pg.number(&format!("SELECT count(*) {idle}"));
        if (c, i) == (3.0, 3.0) || Instant::now() > deadline {
            break (c, i);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let spread = pg.number(&format!(
        "SELECT EXTRACT(EPOCH FROM max(backend_start) - min(backend_start)) {ours} \
         AND (query LIKE 'SELECT c FROM sbtest1%' OR query = '')"
    ));
    assert!(child.wait().unwrap().success());
    assert_eq!((c, i), (3.0, 3.0), "3 clients busy and 3 idle connections");
    assert!(
        spread >= 0.45,
        "6 connections at 10/s came {spread} s apart"
    );

    pgbouncer_transaction_mode(out, &pg);
}

/// A PgBouncer of this test's own, in transaction mode with `pool` server connections for
/// every client, in front of `pg`.
struct Bouncer {
    child: Child,
    port: u16,
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_pgbouncer(out: &Path, pg: &Server, pool: u32) -> Bouncer {
    use std::os::unix::fs::PermissionsExt;
    let dir = out.join(format!("pgbouncer-{pool}"));
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    let ini = dir.join("pgbouncer.ini");
    std::fs::write(dir.join("users.txt"), "\"postgres\" \"\"\n").unwrap();
    std::fs::write(
        &ini,
        format!(
            "[databases]\npostgres = host=127.0.0.1 port={} dbname=postgres\n\
             [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
             auth_type = trust\nauth_file = {}\npool_mode = transaction\n\
             default_pool_size = {pool}\nmax_client_conn = 50\n\
             ignore_startup_parameters = extra_float_digits,options\n",
            pg.port,
            dir.join("users.txt").display()
        ),
    )
    .unwrap();
    // PgBouncer will not run as root: it then runs as the postgres user, who must read its
    // files.
    let root = rustix_uid_is_root();
    for p in [out, dir.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut cmd = Command::new("pgbouncer");
    if root {
        cmd.args(["-u", "postgres"]);
    }
    let child = cmd
        .arg(&ini)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pgbouncer is installed (scripts/test installs it)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "pgbouncer did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Bouncer { child, port }
}

fn rustix_uid_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Through PgBouncer's transaction mode.
///
/// With one server session for all (2 clients sharing it), the simple and extended protocols
/// run oltp_read_write with exact counts, and so does the prepared one — in two processes one
/// after the other, whose clients' statement names must not collide in the session the first
/// left its statements in (they did: "the tables differ from the workload's schema", 42P05).
///
/// With three server sessions, where each transaction may land in another: loads and dbrig's
/// own queries (the registry's, probes: tokio-postgres named them `s0`, `s1`, … in every
/// process, and failed with "does not exist" or "already exists") work in the default
/// protocol, after runs that left statements in the sessions; a run in the prepared protocol
/// works or fails in one line that says what to do, never as a schema mismatch.
fn pgbouncer_transaction_mode(out: &Path, pg: &Server) {
    let bouncer = start_pgbouncer(out, pg, 1);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", bouncer.port);
    // oltp_point_select's table serves oltp_read_write too (same size).
    for protocol in ["simple", "extended", "prepared", "prepared"] {
        let v = run(
            out,
            "oltp_read_write",
            &url,
            &[
                &["--events", "30", "--threads", "2", "--protocol", protocol][..],
                &TABLE,
            ]
            .concat(),
        );
        assert_eq!(v["transactions"], 30, "{protocol}: {v}");
        assert_eq!(
            (
                v["queries"]["read"].as_u64(),
                v["queries"]["write"].as_u64(),
                v["queries"]["other"].as_u64()
            ),
            (Some(420), Some(120), Some(60)),
            "{protocol}: {v}"
        );
        assert_eq!(v["fatal_errors"].as_array().map(Vec::len), Some(0), "{v}");
    }
    drop(bouncer);

    let bouncer = start_pgbouncer(out, pg, 3);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", bouncer.port);
    for _ in 0..2 {
        let o = dbrig(
            out,
            &[
                &[
                    "run",
                    "oltp_point_select",
                    "--target",
                    &url,
                    "--time",
                    "0",
                    "--events",
                    "40",
                    "--threads",
                    "4",
                    "--protocol",
                    "prepared",
                ][..],
                &TABLE,
            ]
            .concat(),
        );
        if !o.status.success() {
            let e = error_line(&o);
            assert!(e.contains("--protocol simple"), "says what to do: {e}");
            assert!(!e.contains("schema"), "{e}");
        }
        for args in [
            &["prepare", "pgbench-init", "--scale", "1", "--target", &url][..],
            &[
                "run",
                "--builtin",
                "select-only",
                "--events",
                "20",
                "--time",
                "0",
                "--threads",
                "2",
                "--target",
                &url,
            ],
            &["cleanup", "pgbench-init", "--target", &url],
        ] {
            let o = dbrig(out, args);
            assert!(o.status.success(), "{args:?}:\n{}", text(&o));
            assert!(!text(&o).contains("counters not sampled"), "{}", text(&o));
        }
    }
    drop(bouncer);
}

#[test]
fn mariadb_ps_mode_and_connections() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path();
    let db = Server::start(
        out,
        "conn15my",
        "mariadb",
        &["general_log=ON", "log_output=TABLE"],
    );
    let url = db.url();
    db.sql("CREATE DATABASE IF NOT EXISTS test");
    ok(dbrig(
        out,
        &[
            &["prepare", "oltp_point_select", "--target", &url][..],
            &TABLE,
        ]
        .concat(),
    ));
    // --ps-mode and --protocol are one choice: the general log shows prepared statements
    // executed, or text queries with the value written in; `extended` is PostgreSQL's.
    for (args, command) in [
        (&["--ps-mode", "auto"][..], "Execute"),
        (&["--ps-mode", "disable"][..], "Query"),
        (&["--protocol", "simple"][..], "Query"),
        (&["--protocol", "prepared"][..], "Execute"),
    ] {
        db.sql("SET GLOBAL general_log=OFF; TRUNCATE TABLE mysql.general_log; SET GLOBAL general_log=ON");
        let v = run(
            out,
            "oltp_point_select",
            &url,
            &[&["--events", "20"][..], args, &TABLE].concat(),
        );
        assert_eq!(v["queries"]["read"], 20, "{args:?}: {v}");
        let n = db.number(&format!(
            "SELECT count(*) FROM mysql.general_log WHERE command_type = '{command}' \
             AND argument LIKE 'SELECT c FROM sbtest1 WHERE id=%'"
        ));
        assert_eq!(n, 20.0, "{args:?}: 20 {command}s");
    }
    let o = dbrig(
        out,
        &[
            &[
                "run",
                "oltp_point_select",
                "--target",
                &url,
                "--protocol",
                "extended",
            ][..],
            &TABLE,
        ]
        .concat(),
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--protocol extended is PostgreSQL's"),
        "{}",
        text(&o)
    );
    let o = dbrig(
        out,
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--protocol",
            "simple",
            "--ps-mode",
            "auto",
        ],
    );
    assert!(text(&o).contains("contradict each other"), "{}", text(&o));

    // Over the Unix socket: the address family says so.
    let socket = db.socket.clone().expect("the managed server's socket");
    let v = run(
        out,
        "connect",
        &format!("mysql://root@localhost/test?socket={socket}"),
        &["--events", "5"],
    );
    assert_eq!(v["connection"]["address_family"], "unix_socket", "{v}");

    // The connect workload and --reconnect, counted by the server.
    let (few, _) = connections_of(&db, || {
        run(out, "connect", &url, &["--events", "5", "--threads", "2"])
    });
    let (many, v) = connections_of(&db, || {
        run(out, "connect", &url, &["--events", "25", "--threads", "2"])
    });
    assert_eq!(many - few, 20, "{v}");
    assert_eq!(v["connect_latency"]["connections"], 27, "{v}");
    let point = |extra: &[&str]| {
        let mut args = vec!["--events", "30", "--threads", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&TABLE);
        run(out, "oltp_point_select", &url, &args)
    };
    let (plain, _) = connections_of(&db, || point(&[]));
    let (again, v) = connections_of(&db, || point(&["--reconnect", "5", "--idle-clients", "4"]));
    // After events 5, 10, 15, 20 and 25; and 4 idle connections.
    assert_eq!(again - plain, 5 + 4, "{v}");
    assert_eq!(v["reconnects"], 5, "{v}");
    assert_eq!(v["connect_latency"]["connections"], 1 + 5 + 4, "{v}");
}
