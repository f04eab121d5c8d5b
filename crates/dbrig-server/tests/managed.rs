//! Managed servers from the installed binaries (MariaDB 10.11, PostgreSQL 15): start on free
//! loopback ports, answer through the command-line clients, restart with other parameters,
//! snapshot/restore, survive a kill -9, refuse bad input, and leave no process behind. Each
//! test has its own temporary state folder; the machine's own servers are never touched.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use dbrig_server::managed::{
    ConnectionInfo, Engine, ManagedError, ManagedServer, Params, ServerDef, processes_mentioning,
    server_restarted,
};

/// A temporary state folder the server's unprivileged user can enter.
fn state_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("dbrig-managed-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// These tests exercise the servers' life and talk to them through the command-line clients
/// without a password: open access. The default lock-down has a test of its own.
fn def(name: &str, engine: Engine) -> ServerDef {
    let mut d = locked_def(name, engine);
    d.open_access = true;
    d
}

fn locked_def(name: &str, engine: Engine) -> ServerDef {
    let mut d = ServerDef::new(name, engine);
    d.start_timeout = Some(90.0);
    d.stop_timeout = Some(30.0);
    d
}

fn params(items: &[&str]) -> Params {
    Params::parse(items).unwrap()
}

/// Runs SQL through the engine's command-line client; `via_socket` uses the Unix socket.
fn sql(info: &ConnectionInfo, query: &str, via_socket: bool) -> Result<String, String> {
    sql_as(info, None, query, via_socket)
}

/// [`sql`] with a password (handed through the clients' environment variable, never on a
/// command line).
fn sql_as(
    info: &ConnectionInfo,
    password: Option<&str>,
    query: &str,
    via_socket: bool,
) -> Result<String, String> {
    let mut cmd = match info.engine {
        Engine::Mariadb | Engine::Mysql => {
            let mut c = Command::new("mariadb");
            c.args(["--no-defaults", "-u", &info.user, "-N", "-B"]);
            if via_socket {
                c.arg("-S").arg(&info.socket);
            } else {
                c.args([
                    "--protocol=tcp",
                    "-h",
                    &info.host,
                    "-P",
                    &info.port.to_string(),
                ]);
            }
            c.args(["-e", query, &info.database]);
            c
        }
        Engine::Postgres => {
            let mut c = Command::new("psql");
            let host = if via_socket {
                info.socket.parent().unwrap().display().to_string()
            } else {
                info.host.clone()
            };
            c.args(["-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
                .args(["-h", &host, "-p", &info.port.to_string()])
                .args(["-U", &info.user, "-d", &info.database, "-c", query]);
            c
        }
    };
    cmd.env_remove("MYSQL_PWD").env_remove("PGPASSWORD");
    if let Some(p) = password {
        cmd.env("MYSQL_PWD", p).env("PGPASSWORD", p);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

fn q(info: &ConnectionInfo, query: &str) -> String {
    sql(info, query, false).unwrap_or_else(|e| panic!("{query}: {e}"))
}

fn assert_no_process(data_dir: &Path) {
    let needle = data_dir.display().to_string();
    // A stopped server's processes may take a moment to be reaped.
    let mut left = processes_mentioning(&needle);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        left = processes_mentioning(&needle);
    }
    assert!(
        left.is_empty(),
        "processes still running for {needle}: {left:?}"
    );
}

fn kill9(pid: u32) {
    let st = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

/// The common scenario for one engine.
fn scenario(engine: Engine, max_conn_query: &str) {
    let mut state = state_dir();
    // Set DBRIG_KEEP_TEST_DIR to keep the state folder (logs) for a post-mortem.
    if std::env::var_os("DBRIG_KEEP_TEST_DIR").is_some() {
        state.disable_cleanup(true);
        eprintln!("state folder kept: {}", state.path().display());
    }
    let mut server = ManagedServer::init(def("srv", engine), state.path()).unwrap();
    let data_dir = server.data_dir().to_owned();
    assert!(server.is_initialised());
    // Initialising again reuses the marked directory.
    let mut server2 = ManagedServer::init(def("srv", engine), state.path()).unwrap();
    assert!(server2.is_initialised());
    assert!(!server2.status().running);
    drop(server2);

    // Start, answer over TCP and the socket.
    server.start(&Params::new()).unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(info.host, "127.0.0.1");
    assert_ne!(info.port, 3306);
    assert_ne!(info.port, 5432);
    assert_eq!(q(&info, "SELECT 1"), "1");
    assert_eq!(sql(&info, "SELECT 1", true).unwrap(), "1");
    let port_query = match engine {
        Engine::Postgres => "SHOW port",
        _ => "SELECT @@port",
    };
    assert_eq!(q(&info, port_query), info.port.to_string());
    // The test database exists on both engines.
    let test_db = ConnectionInfo {
        database: "test".into(),
        ..info.clone()
    };
    assert_eq!(q(&test_db, "SELECT 1"), "1");
    let st = server.status();
    assert!(st.running);
    assert_eq!(st.port, Some(info.port));
    // Started by this test moments ago: an uptime from the wrong clock (since boot, since the
    // epoch) or a negative one fails.
    let uptime = st.uptime_s.unwrap();
    assert!((0.0..600.0).contains(&uptime), "uptime {uptime}");
    let state_json = std::fs::read_to_string(server.dir().join("state.json")).unwrap();
    assert!(state_json.contains(&info.port.to_string()), "{state_json}");

    // Snapshot, change the data, restore.
    q(&info, "CREATE TABLE snap_t (a int)");
    q(&info, "INSERT INTO snap_t VALUES (1), (2), (3)");
    server.snapshot_data("base").unwrap();
    assert!(server.has_snapshot("base"));
    let info = server.connection_info().unwrap();
    q(&info, "DELETE FROM snap_t");
    q(&info, "INSERT INTO snap_t VALUES (42)");
    assert_eq!(q(&info, "SELECT count(*) FROM snap_t"), "1");
    server.restore_data("base").unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(q(&info, "SELECT count(*) FROM snap_t"), "3");
    assert_eq!(q(&info, "SELECT sum(a) FROM snap_t"), "6");
    assert!(matches!(
        server.restore_data("nope"),
        Err(ManagedError::NoSnapshot { .. })
    ));

    // Restart with a different startup parameter.
    let before = server.life_mark();
    server.restart(&params(&["max_connections=77"])).unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(q(&info, max_conn_query), "77");
    assert!(server_restarted(&before, &server.life_mark()));
    let same = server.life_mark();
    assert!(!server_restarted(&same, &server.life_mark()));
    // Started from the keeper thread behind `setpriv --pdeathsig`: it dies with this process.
    let launch = server.launch_info().unwrap().clone();
    assert!(launch.dies_with_dbrig, "{launch:?}");
    assert_eq!(launch.numa, "not requested");
    let state_file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(server.dir().join("state.json")).unwrap())
            .unwrap();
    assert_eq!(state_file["ready"], true, "{state_file}");
    let pid = server.status().pid.unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    if dbrig_server::managed::is_root() {
        // The server runs as its own user (dbrig dropped privileges before exec).
        let uid = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        assert!(!uid.split_whitespace().skip(1).any(|u| u == "0"), "{uid}");
    } else {
        // Not root: no privileges to drop, so the server runs as this very user.
        let uid_of = |status: &str| {
            status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .unwrap()
                .to_owned()
        };
        let mine = uid_of(&std::fs::read_to_string("/proc/self/status").unwrap());
        assert_eq!(uid_of(&status), mine);
    }

    // A read-only start: reads work, writes are refused (also for root on MariaDB).
    server.restart(&engine.read_only_params()).unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(q(&info, "SELECT count(*) FROM snap_t"), "3");
    let refused = sql(&info, "INSERT INTO snap_t VALUES (9)", false).unwrap_err();
    assert!(
        refused.contains("read-only") || refused.contains("read only"),
        "{refused}"
    );
    server.restart(&Params::new()).unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(q(&info, "SELECT count(*) FROM snap_t"), "3");

    // kill -9: status reports it dead, restart works.
    let pid = server.status().pid.unwrap();
    kill9(pid);
    let mut dead = false;
    for _ in 0..200 {
        if !server.status().running {
            dead = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(dead, "status still says running after kill -9");
    let st = server.status();
    assert_eq!(st.pid, Some(pid));
    assert!(
        st.last_exit.as_deref().unwrap_or("").contains('9'),
        "{:?}",
        st.last_exit
    );
    assert!(server.life_mark().died);
    server.start(&Params::new()).unwrap();
    let info = server.connection_info().unwrap();
    assert_eq!(q(&info, "SELECT count(*) FROM snap_t"), "3");

    // A rejected option: the server's own error line, nothing left running.
    let bad = match engine {
        Engine::Postgres => "no_such_option=1",
        _ => "no-such-option=1",
    };
    let err = server.restart(&params(&[bad])).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ManagedError::StartFailed { .. }), "{msg}");
    assert!(
        msg.contains("no_such_option") || msg.contains("no-such-option"),
        "{msg}"
    );
    match engine {
        Engine::Postgres => assert!(msg.contains("FATAL"), "{msg}"),
        _ => assert!(msg.contains("[ERROR]"), "{msg}"),
    }
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(!server.status().running);
    assert_no_process(&data_dir);

    // A fixed port already in use.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = listener.local_addr().unwrap().port();
    let mut fixed = def("srv", engine);
    fixed.port = Some(busy);
    let mut on_busy = ManagedServer::open(fixed, state.path()).unwrap();
    let err = on_busy.start(&Params::new()).unwrap_err();
    assert!(
        matches!(err, ManagedError::PortInUse { port, .. } if port == busy),
        "{err}"
    );
    drop(listener);
    drop(on_busy);

    // Detach (as `dbrig server start` does), adopt from state.json, stop.
    server.start(&Params::new()).unwrap();
    let pid = server.status().pid.unwrap();
    let st = server.detach().unwrap();
    assert_eq!(st.pid, pid);
    let mut adopted = ManagedServer::open(def("srv", engine), state.path()).unwrap();
    let s = adopted.status();
    assert!(s.running);
    assert_eq!(s.pid, Some(pid));
    let info = adopted.connection_info().unwrap();
    assert_eq!(q(&info, "SELECT 1"), "1");
    // Starting a second copy on the same data directory is refused.
    assert!(matches!(
        adopted.start(&Params::new()),
        Err(ManagedError::AlreadyRunning { .. })
    ));
    adopted.stop().unwrap();
    assert!(!adopted.status().running);
    assert!(!adopted.dir().join("state.json").exists());
    assert_no_process(&data_dir);

    // A restore that a killed dbrig left between its two renames is put right by `open`.
    let mut old_name = data_dir.file_name().unwrap().to_owned();
    old_name.push(".dbrig-old");
    std::fs::rename(&data_dir, data_dir.with_file_name(&old_name)).unwrap();
    let mut partial = data_dir.file_name().unwrap().to_owned();
    partial.push(".dbrig-restore");
    std::fs::create_dir(data_dir.with_file_name(&partial)).unwrap();
    let mut s = ManagedServer::open(def("srv", engine), state.path()).unwrap();
    assert!(s.is_initialised());
    assert!(!data_dir.with_file_name(&old_name).exists());
    assert!(!data_dir.with_file_name(&partial).exists());
    s.start(&Params::new()).unwrap();
    assert_eq!(
        q(&s.connection_info().unwrap(), "SELECT count(*) FROM snap_t"),
        "3"
    );
    drop(s);
    assert_no_process(&data_dir);

    // Drop stops a server it started. (`shutdown_all` stops every server of the process, so
    // it has its own test binary: tests/shutdown_all.rs.)
    let mut s = ManagedServer::open(def("srv", engine), state.path()).unwrap();
    s.start(&Params::new()).unwrap();
    drop(s);
    assert_no_process(&data_dir);
}

#[test]
fn mariadb_managed() {
    scenario(Engine::Mariadb, "SELECT @@max_connections");
}

#[test]
fn postgres_managed() {
    scenario(Engine::Postgres, "SHOW max_connections");
}

#[test]
fn bad_inputs() {
    let state = state_dir();
    // Missing binary.
    let mut d = def("nobin", Engine::Mariadb);
    d.server_bin = Some("/nonexistent/bin/mariadbd".into());
    let err = ManagedServer::init(d, state.path()).unwrap_err();
    assert!(matches!(err, ManagedError::BinaryNotFound { .. }), "{err}");
    assert!(
        err.to_string().contains("/nonexistent/bin/mariadbd"),
        "{err}"
    );
    let mut d = def("noprefix", Engine::Postgres);
    d.prefix = Some("/nonexistent/pg".into());
    let err = ManagedServer::init(d, state.path()).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/pg/bin/postgres"),
        "{err}"
    );

    // A non-empty data directory that is not dbrig's is refused and left alone.
    for engine in [Engine::Mariadb, Engine::Postgres] {
        let foreign = state.path().join(format!("foreign-{engine}"));
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::write(foreign.join("precious.txt"), "keep me").unwrap();
        let mut d = def("foreign", engine);
        d.data_dir = Some(foreign.clone());
        let err = ManagedServer::init(d.clone(), state.path()).unwrap_err();
        assert!(matches!(err, ManagedError::ForeignDataDir { .. }), "{err}");
        assert!(err.to_string().contains("not empty"), "{err}");
        assert_eq!(
            std::fs::read_to_string(foreign.join("precious.txt")).unwrap(),
            "keep me"
        );
        // Starting it without init is refused too.
        let mut s = ManagedServer::open(d, state.path()).unwrap();
        assert!(matches!(
            s.start(&Params::new()),
            Err(ManagedError::NotInitialised { .. })
        ));
    }

    // Bad definitions.
    assert!(ManagedServer::open(def("../evil", Engine::Mariadb), state.path()).is_err());
    let mut d = def("pgroot", Engine::Postgres);
    d.run_as = Some("root".into());
    if dbrig_server::managed::is_root() {
        let err = ManagedServer::open(d, state.path()).unwrap_err();
        assert!(err.to_string().contains("root"), "{err}");
    } else {
        dbrig_server::testing::not_checked("a managed server refuses to run as root (needs root)");
    }
    let mut d = def("nouser", Engine::Mariadb);
    d.run_as = Some("no-such-user-dbrig".into());
    if dbrig_server::managed::is_root() {
        assert!(matches!(
            ManagedServer::open(d, state.path()),
            Err(ManagedError::UnknownUser { .. })
        ));
    } else {
        dbrig_server::testing::not_checked("an unknown run-as user is refused (needs root)");
    }

    // A server that crashes on start (a build that segfaults): the start fails with how it
    // died and its last words, and nothing is left running.
    let bin = state.path().join("crashbuild");
    std::fs::create_dir_all(&bin).unwrap();
    let script = |name: &str, body: &str| {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let mut d = def("crashy", Engine::Mariadb);
    d.server_bin = Some(script(
        "mariadbd",
        "echo \"[ERROR] mariadbd got signal 11 ;\" >&2; kill -SEGV $$",
    ));
    // An initialiser that succeeds without doing anything: the crash comes at start.
    d.init_bin = Some(script("mariadb-install-db", "exit 0"));
    let mut s = ManagedServer::init(d, state.path()).unwrap();
    let err = s.start(&Params::new()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ManagedError::StartFailed { .. }), "{msg}");
    assert!(
        msg.contains("SIGSEGV") || msg.contains("signal: 11"),
        "{msg}"
    );
    assert!(msg.contains("got signal 11"), "{msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(!s.status().running);
    assert_no_process(s.data_dir());
    // A crash is not a port conflict: one attempt only.
    let starts = |log: &Path| {
        std::fs::read_to_string(log)
            .unwrap()
            .matches("--- dbrig: starting")
            .count()
    };
    assert_eq!(starts(&s.log_path()), 1);
    let last = s.status().last_exit.unwrap();
    assert!(!last.contains("port-conflict"), "{last}");

    // A server whose port was taken (its log says so) is started again on another free port,
    // up to three attempts in all, and the status says why the last one failed.
    let mut d = def("busyport", Engine::Mariadb);
    let busy = state.path().join("busybuild");
    std::fs::create_dir_all(&busy).unwrap();
    let server = busy.join("mariadbd");
    std::fs::write(
        &server,
        "#!/bin/sh\necho \"[ERROR] Can't start server: Bind on TCP/IP port. Got error: 98: \
         Address already in use\" >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    d.server_bin = Some(server);
    d.init_bin = Some(script("mariadb-install-db", "exit 0"));
    let mut s = ManagedServer::init(d, state.path()).unwrap();
    let err = s.start(&Params::new()).unwrap_err();
    assert!(matches!(err, ManagedError::StartFailed { .. }), "{err}");
    assert!(err.to_string().contains("Address already in use"), "{err}");
    assert_eq!(starts(&s.log_path()), 3);
    let last = s.status().last_exit.unwrap();
    assert!(last.ends_with(" (port-conflict)"), "{last}");
    assert!(!s.status().running);
    assert_no_process(s.data_dir());
}

/// Locked down by default: a random password in a 0600 file, nothing answers without it (no
/// anonymous account, no passwordless root, PostgreSQL scram-sha-256), the socket folder 0700.
fn locked_down(engine: Engine) {
    let state = state_dir();
    let mut server = ManagedServer::init(locked_def("locked", engine), state.path()).unwrap();
    let secret_file = server.secret_path();
    let mode = std::fs::metadata(&secret_file)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let secret = server.secret().unwrap();
    assert_eq!(secret.len(), 32);
    server.start(&Params::new()).unwrap();
    let info = server.connection_info().unwrap();
    // The init-file holding the password is gone once applied.
    assert!(!server.dir().join("lockdown.sql").exists());
    let run_dir = info.socket.parent().unwrap();
    let mode = std::fs::metadata(run_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", run_dir.display());
    // Without the password: refused, over TCP and the socket.
    for via_socket in [false, true] {
        let e = sql(&info, "SELECT 1", via_socket).unwrap_err();
        assert!(
            e.contains("Access denied")
                || e.contains("password authentication failed")
                || e.contains("no password supplied"),
            "{e}"
        );
    }
    let wrong = sql_as(&info, Some("not-it"), "SELECT 1", false).unwrap_err();
    assert!(!wrong.is_empty());
    // With it: answers.
    assert_eq!(
        sql_as(&info, Some(&secret), "SELECT 1", false).unwrap(),
        "1"
    );
    match engine {
        Engine::Postgres => {
            let methods = sql_as(
                &info,
                Some(&secret),
                "SELECT string_agg(DISTINCT auth_method, ',') FROM pg_hba_file_rules",
                false,
            )
            .unwrap();
            assert_eq!(methods, "scram-sha-256");
        }
        _ => {
            // No anonymous account, root from this host only.
            let anonymous = sql_as(
                &info,
                Some(&secret),
                "SELECT COUNT(*) FROM mysql.user WHERE User = ''",
                false,
            )
            .unwrap();
            assert_eq!(anonymous, "0");
            let e = Command::new("mariadb")
                .args(["--no-defaults", "--protocol=tcp", "-h", "127.0.0.1"])
                .args([
                    "-P",
                    &info.port.to_string(),
                    "-u",
                    "nobody",
                    "-e",
                    "SELECT 1",
                ])
                .env_remove("MYSQL_PWD")
                .output()
                .unwrap();
            assert!(!e.status.success());
        }
    }
    // A restart keeps the lock (the password is in the data, not the start).
    server.restart(&Params::new()).unwrap();
    let info = server.connection_info().unwrap();
    assert!(sql(&info, "SELECT 1", false).is_err());
    assert_eq!(
        sql_as(&info, Some(&secret), "SELECT 1", false).unwrap(),
        "1"
    );
    server.stop().unwrap();
}

#[test]
fn mariadb_is_locked_down_by_default() {
    locked_down(Engine::Mariadb);
}

#[test]
fn postgres_is_locked_down_by_default() {
    locked_down(Engine::Postgres);
}
