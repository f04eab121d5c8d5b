//! The same work as sysbench, checked against sysbench itself: dbrig and sysbench 1.0.20 run
//! each OLTP workload on a MariaDB that dbrig starts with its general log in a table, and the
//! statements each tool sent (text or prepared, values replaced by `?`) must be the same, as
//! many per event; the values select_random_* draw must span sysbench's key range. On
//! PostgreSQL the same holds for what a managed server with pg_stat_statements preloaded
//! counted (statements by normalised text, calls per statement).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::pgss::PgssServer;
use crate::{dbrig, json, ok, text};

/// A MariaDB started by `dbrig server start` with its general log on, stopped when dropped.
struct LoggedServer {
    out: PathBuf,
    name: String,
    url: String,
    port: String,
}

impl LoggedServer {
    fn start(out: &Path, name: &str) -> Self {
        Self::start_with(out, name, &[])
    }

    fn start_with(out: &Path, name: &str, params: &[&str]) -> Self {
        // sysbench takes a password only on its command line, so this throwaway server keeps
        // the initialiser's open accounts (`open-access`) instead of dbrig's locked-down default.
        let plan = out.join(format!("{name}-server.toml"));
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"mariadb\"\nopen-access = true\n"),
        )
        .unwrap();
        let plan = plan.display().to_string();
        let mut args = vec![
            "server",
            "start",
            name,
            "--plan",
            &plan,
            "--param",
            "general_log=ON",
            "--param",
            "log_output=TABLE",
        ];
        for p in params {
            args.extend(["--param", p]);
        }
        let o = ok(dbrig(out, &args));
        let url = text(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix("target: ").map(str::to_owned))
            .expect("the target line");
        let port = url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .expect("a port in the target")
            .to_owned();
        LoggedServer {
            out: out.to_owned(),
            name: name.to_owned(),
            url,
            port,
        }
    }

    fn sql(&self, statements: &str) -> String {
        let o = Command::new("mariadb")
            .args(["-uroot", "-h127.0.0.1", "-P", &self.port, "-N", "-B", "-e"])
            .arg(statements)
            .output()
            .expect("the mariadb client");
        assert!(
            o.status.success(),
            "{statements}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn clear_log(&self) {
        self.sql("SET GLOBAL general_log=OFF; TRUNCATE TABLE mysql.general_log; SET GLOBAL general_log=ON");
    }

    /// (command type, statement) of everything logged since the last clear, in order.
    fn log(&self) -> Vec<(String, String)> {
        self.sql("SELECT command_type, argument FROM mysql.general_log ORDER BY event_time")
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(c, a)| (c.to_owned(), a.replace("\\n", " ").replace("\\t", " ")))
            .collect()
    }
}

impl Drop for LoggedServer {
    fn drop(&mut self) {
        let _ = dbrig(&self.out, &["server", "stop", &self.name]);
    }
}

/// A statement with its values replaced by `?` (quoted strings and numbers outside
/// identifiers) and white space collapsed: what the tool sent, whatever values it drew.
fn shape(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    let mut prev_ident = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            for d in chars.by_ref() {
                if d == '\'' {
                    break;
                }
            }
            out.push('?');
            prev_ident = false;
        } else if c.is_ascii_digit() && !prev_ident {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('?');
        } else {
            prev_ident = c.is_ascii_alphanumeric() || c == '_';
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The benchmark's statements in the log, by (command type, shape), with their counts.
fn statements(log: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for (command, sql) in log {
        if !matches!(command.as_str(), "Query" | "Prepare" | "Execute") {
            continue;
        }
        let s = shape(sql);
        let upper = s.to_ascii_uppercase();
        if s.contains("sbtest") || upper == "BEGIN" || upper == "COMMIT" {
            *m.entry((command.clone(), s)).or_insert(0) += 1;
        }
    }
    m
}

const TABLE_SIZE: &str = "10";
const EVENTS: &str = "30";

fn run_sysbench(server: &LoggedServer, workload: &str) {
    let o = Command::new("sysbench")
        .args([
            workload,
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={}", server.port),
            "--mysql-user=root",
            "--mysql-db=test",
            "--tables=1",
            &format!("--table-size={TABLE_SIZE}"),
            &format!("--events={EVENTS}"),
            "--time=0",
            "--threads=1",
            "run",
        ])
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    assert!(
        o.status.success(),
        "sysbench {workload}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn run_dbrig(out: &Path, server: &LoggedServer, workload: &str, extra: &[&str]) -> String {
    let v = json(&ok(dbrig(
        out,
        &[
            &[
                "run",
                workload,
                "--target",
                &server.url,
                "--table-size",
                TABLE_SIZE,
                "--events",
                EVENTS,
                "--time",
                "0",
                "--threads",
                "1",
                "--format",
                "json",
            ][..],
            extra,
        ]
        .concat(),
    )));
    v["notes"].to_string()
}

#[test]
fn every_oltp_workload_sends_sysbenchs_statements() {
    let out = tempfile::tempdir().unwrap();
    let server = LoggedServer::start(out.path(), "fidlog");
    // oltp_delete drains rows; the others do not care. Re-prepared per workload so each tool
    // meets the same table.
    for workload in [
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
    ] {
        let common = ["--target", &server.url, "--table-size", TABLE_SIZE];
        ok(dbrig(
            out.path(),
            &[&["prepare", workload][..], &common].concat(),
        ));
        server.clear_log();
        run_sysbench(&server, workload);
        let theirs = statements(&server.log());
        ok(dbrig(
            out.path(),
            &[&["cleanup", workload][..], &common].concat(),
        ));
        ok(dbrig(
            out.path(),
            &[&["prepare", workload][..], &common].concat(),
        ));
        server.clear_log();
        let notes = run_dbrig(out.path(), &server, workload, &[]);
        let log = server.log();
        let ours = statements(&log);
        ok(dbrig(
            out.path(),
            &[&["cleanup", workload][..], &common].concat(),
        ));
        assert!(!theirs.is_empty(), "{workload}: sysbench logged nothing");
        assert_eq!(
            ours, theirs,
            "{workload}: dbrig's statements, then sysbench's"
        );
        assert_eq!(notes, "[]", "{workload}: nothing to say");
        if workload == "oltp_insert" {
            assert_eq!(
                theirs.get(&(
                    "Query".to_owned(),
                    "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)".to_owned()
                )),
                Some(&30),
                "{theirs:?}"
            );
        }
        if workload.starts_with("select_random") {
            // 1 client draws from sysbench's 0 … table_size, both ends included: 300 draws
            // from 11 keys meet both ends.
            let keys = drawn_keys(&log);
            assert_eq!(keys.len(), 300, "{workload}");
            assert_eq!(keys.iter().min(), Some(&0), "{workload}");
            assert_eq!(keys.iter().max(), Some(&10), "{workload}");
        }
    }
    // The prepared form on request, and the report says so.
    ok(dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_insert",
            "--target",
            &server.url,
            "--table-size",
            TABLE_SIZE,
        ],
    ));
    server.clear_log();
    let notes = run_dbrig(out.path(), &server, "oltp_insert", &["--insert-prepared"]);
    let ours = statements(&server.log());
    assert!(notes.contains("--insert-prepared"), "{notes}");
    assert_eq!(
        ours.get(&(
            "Prepare".to_owned(),
            "INSERT INTO sbtest1 (k, c, pad) VALUES (?, ?, ?)".to_owned()
        )),
        Some(&1),
        "{ours:?}"
    );
    assert_eq!(
        ours.iter()
            .filter(|((c, s), _)| c == "Execute" && s.starts_with("INSERT"))
            .map(|(_, n)| n)
            .sum::<usize>(),
        30,
        "{ours:?}"
    );
    assert!(
        !ours
            .keys()
            .any(|(c, s)| c == "Query" && s.starts_with("INSERT")),
        "{ours:?}"
    );
}

/// memory_load sends its rows in the table's own character set (latin1, the seed's), not
/// utf8mb4, which cost the server a conversion per value; the server's log shows the LOAD.
#[test]
fn memory_load_sends_the_tables_character_set() {
    let out = tempfile::tempdir().unwrap();
    let server = LoggedServer::start(out.path(), "fidload");
    server.clear_log();
    ok(dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &server.url,
            "--rows",
            "1000",
            "--runs",
            "1",
        ],
    ));
    let loads: Vec<String> = server
        .log()
        .into_iter()
        .filter(|(c, s)| c == "Query" && s.starts_with("LOAD DATA"))
        .map(|(_, s)| s)
        .collect();
    // An untimed first load (the seed's dummy), then INT and CHAR(20).
    assert_eq!(loads.len(), 3, "{loads:?}");
    assert!(
        loads.iter().all(|l| l.contains("CHARACTER SET latin1")),
        "{loads:?}"
    );
}

/// memory_load --server-file: the server reads the rows from a file dbrig wrote where the
/// server may read (`secure_file_priv`), as the seed loaded them; no LOCAL load is sent.
#[test]
fn memory_load_from_a_file_the_server_reads() {
    let out = tempfile::tempdir().unwrap();
    let files = out.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    let priv_dir = format!("secure_file_priv={}", files.display());
    let server = LoggedServer::start_with(out.path(), "fidfile", &[&priv_dir]);
    server.clear_log();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &server.url,
            "--rows",
            "1000",
            "--runs",
            "1",
            "--server-file",
            files.to_str().unwrap(),
            "--format",
            "json",
        ],
    )));
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{v}");
    assert!(items.iter().all(|i| i["rows"] == 1000), "{v}");
    let loads: Vec<String> = server
        .log()
        .into_iter()
        .filter(|(c, s)| c == "Query" && s.starts_with("LOAD DATA"))
        .map(|(_, s)| s)
        .collect();
    assert_eq!(loads.len(), 3, "{loads:?}");
    let prefix = format!("LOAD DATA INFILE '{}/dbrig_t1_", files.display());
    assert!(loads.iter().all(|l| l.starts_with(&prefix)), "{loads:?}");
    assert_eq!(
        std::fs::read_dir(&files).unwrap().count(),
        0,
        "the files are removed"
    );
}

/// The keys of select_random_points' IN lists and select_random_ranges' range starts.
fn drawn_keys(log: &[(String, String)]) -> Vec<i64> {
    let mut keys = Vec::new();
    for (command, sql) in log {
        if command != "Execute" {
            continue;
        }
        if let Some((_, list)) = sql.split_once(" IN (") {
            let list = list.split(')').next().unwrap_or_default();
            keys.extend(list.split(',').map(|k| k.trim().parse::<i64>().unwrap()));
        } else if sql.contains("BETWEEN") {
            for part in sql.split("BETWEEN").skip(1) {
                keys.push(part.split_whitespace().next().unwrap().parse().unwrap());
            }
        }
    }
    keys
}

/// The shared pg_stat_statements server with the benchmark's own database, `fidelity`.
struct StatsServer {
    pg: PgssServer,
    url: String,
    port: String,
}

impl StatsServer {
    fn start(out: &Path, name: &str) -> Self {
        let pg = PgssServer::start(out, name);
        pg.sql("postgres", "CREATE DATABASE fidelity");
        StatsServer {
            url: format!("postgres://postgres@127.0.0.1:{}/fidelity", pg.port),
            port: pg.port.clone(),
            pg,
        }
    }

    fn reset(&self) {
        self.pg.reset();
    }

    /// The benchmark's statements since the last reset (constants as `$N`), with their calls.
    fn statements(&self) -> BTreeMap<String, usize> {
        self.pg.sql(
            "postgres",
            // One line per statement: sysbench's select_random_* span several lines.
            "SELECT s.calls, regexp_replace(s.query, '\\s+', ' ', 'g') FROM pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'fidelity'",
        )
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(calls, q)| (q.split_whitespace().collect::<Vec<_>>().join(" "), calls))
        .filter(|(q, _)| {
            q.contains("sbtest")
                || q.eq_ignore_ascii_case("BEGIN")
                || q.eq_ignore_ascii_case("COMMIT")
        })
        .map(|(q, calls)| (q, calls.parse().unwrap()))
        .collect()
    }
}

/// On PostgreSQL, what the server counted (pg_stat_statements, preloaded on a managed
/// server): each OLTP workload's statements and calls per statement are sysbench's.
#[test]
fn every_oltp_workload_sends_sysbenchs_statements_on_postgresql() {
    let out = tempfile::tempdir().unwrap();
    let server = StatsServer::start(out.path(), "fidpgss");
    for workload in [
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_delete",
        "oltp_insert",
        "select_random_points",
        "select_random_ranges",
    ] {
        let common = ["--target", &server.url, "--table-size", TABLE_SIZE];
        let prepare = || {
            ok(dbrig(
                out.path(),
                &[&["prepare", workload][..], &common].concat(),
            ))
        };
        let cleanup = || {
            ok(dbrig(
                out.path(),
                &[&["cleanup", workload][..], &common].concat(),
            ))
        };
        prepare();
        server.reset();
        let o = Command::new("sysbench")
            .args([
                workload,
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                &format!("--pgsql-port={}", server.port),
                "--pgsql-user=postgres",
                "--pgsql-db=fidelity",
                "--tables=1",
                &format!("--table-size={TABLE_SIZE}"),
                &format!("--events={EVENTS}"),
                "--time=0",
                "--threads=1",
                "run",
            ])
            .output()
            .expect("sysbench is installed (scripts/test installs it)");
        assert!(
            o.status.success(),
            "sysbench {workload}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let theirs = server.statements();
        cleanup();
        prepare();
        server.reset();
        let v = json(&ok(dbrig(
            out.path(),
            &[
                &["run", workload][..],
                &common,
                &[
                    "--events",
                    EVENTS,
                    "--time",
                    "0",
                    "--threads",
                    "1",
                    "--format",
                    "json",
                ],
            ]
            .concat(),
        )));
        let ours = server.statements();
        cleanup();
        assert!(
            !theirs.is_empty(),
            "{workload}: the server counted nothing of sysbench's"
        );
        assert_eq!(
            ours, theirs,
            "{workload}: dbrig's statements, then sysbench's"
        );
        assert_eq!(v["notes"].to_string(), "[]", "{workload}: nothing to say");
    }
}

/// memory_load --server-file on PostgreSQL: the server reads the rows with `COPY … FROM
/// 'file'` from the file dbrig wrote (as the seed's server-side load), counted by the server
/// itself; no `COPY … FROM STDIN` is sent.
#[test]
fn memory_load_from_a_file_postgresql_reads() {
    use std::os::unix::fs::PermissionsExt;
    let out = tempfile::tempdir().unwrap();
    // The server runs as its own user: the folder must be one it can reach and read.
    std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let files = out.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::set_permissions(&files, std::fs::Permissions::from_mode(0o777)).unwrap();
    let server = StatsServer::start(out.path(), "fidcopy");
    server.reset();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &server.url,
            "--rows",
            "1000",
            "--runs",
            "1",
            "--server-file",
            files.to_str().unwrap(),
            "--format",
            "json",
        ],
    )));
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{v}");
    assert!(items.iter().all(|i| i["rows"] == 1000), "{v}");
    let copies: Vec<(String, usize)> = server
        .pg
        .sql(
            "postgres",
            "SELECT s.calls, s.query FROM pg_stat_statements s JOIN pg_database d \
             ON d.oid = s.dbid WHERE d.datname = 'fidelity' AND s.query ILIKE 'COPY%'",
        )
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(calls, q)| (q.to_owned(), calls.parse().unwrap()))
        .collect();
    let prefix = format!("COPY t1 (c1) FROM '{}/dbrig_t1_", files.display());
    assert!(!copies.is_empty(), "the server counted no COPY");
    assert!(
        copies.iter().all(|(q, _)| q.starts_with(&prefix)),
        "{copies:?}"
    );
    // One file per key type, each loaded by the server.
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert_eq!(
        std::fs::read_dir(&files).unwrap().count(),
        0,
        "the files are removed"
    );
}

/// sysbench's own Lua scripts run by dbrig send what sysbench sends running them, and
/// oltp_read_write.lua what dbrig's native oltp_read_write sends.
#[test]
fn sysbench_lua_scripts_send_sysbenchs_statements() {
    let out = tempfile::tempdir().unwrap();
    let server = LoggedServer::start(out.path(), "fidlua");
    let common = ["--target", &server.url, "--table-size", TABLE_SIZE];
    let mut native = None;
    for workload in [
        "oltp_read_write",
        "oltp_point_select",
        "oltp_insert",
        "select_random_ranges",
    ] {
        let script = format!("{workload}.lua");
        let prepare = || {
            ok(dbrig(
                out.path(),
                &[&["prepare", &script][..], &common].concat(),
            ))
        };
        let cleanup = || {
            ok(dbrig(
                out.path(),
                &[&["cleanup", &script][..], &common].concat(),
            ))
        };
        prepare();
        server.clear_log();
        run_sysbench(&server, workload);
        let theirs = statements(&server.log());
        cleanup();
        prepare();
        server.clear_log();
        run_dbrig(out.path(), &server, &script, &[]);
        let ours = statements(&server.log());
        cleanup();
        assert!(!theirs.is_empty(), "{workload}: sysbench logged nothing");
        assert_eq!(
            ours, theirs,
            "{script}: dbrig's statements, then sysbench's"
        );
        if workload == "oltp_read_write" {
            native = Some(ours);
        }
    }
    ok(dbrig(
        out.path(),
        &[&["prepare", "oltp_read_write"][..], &common].concat(),
    ));
    server.clear_log();
    run_dbrig(out.path(), &server, "oltp_read_write", &[]);
    let ours = statements(&server.log());
    assert_eq!(
        Some(ours),
        native,
        "native oltp_read_write, then oltp_read_write.lua"
    );
}

/// On PostgreSQL (pg_stat_statements on a managed server): sysbench's Lua scripts run by dbrig
/// send the statements, calls per statement, that sysbench sends running them.
#[test]
fn sysbench_lua_scripts_send_sysbenchs_statements_on_postgresql() {
    let out = tempfile::tempdir().unwrap();
    let server = StatsServer::start(out.path(), "fidpglua");
    let common = ["--target", &server.url, "--table-size", TABLE_SIZE];
    for workload in ["oltp_read_write", "oltp_point_select", "oltp_insert"] {
        let script = format!("{workload}.lua");
        let prepare = || {
            ok(dbrig(
                out.path(),
                &[&["prepare", &script][..], &common].concat(),
            ))
        };
        let cleanup = || {
            ok(dbrig(
                out.path(),
                &[&["cleanup", &script][..], &common].concat(),
            ))
        };
        prepare();
        server.reset();
        let o = Command::new("sysbench")
            .args([
                workload,
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                &format!("--pgsql-port={}", server.port),
                "--pgsql-user=postgres",
                "--pgsql-db=fidelity",
                "--tables=1",
                &format!("--table-size={TABLE_SIZE}"),
                &format!("--events={EVENTS}"),
                "--time=0",
                "--threads=1",
                "run",
            ])
            .output()
            .expect("sysbench is installed (scripts/test installs it)");
        assert!(o.status.success(), "sysbench {workload}: {}", text(&o));
        let theirs = server.statements();
        cleanup();
        prepare();
        server.reset();
        ok(dbrig(
            out.path(),
            &[
                &["run", &script][..],
                &common,
                &["--events", EVENTS, "--time", "0", "--threads", "1"],
            ]
            .concat(),
        ));
        let ours = server.statements();
        cleanup();
        assert!(
            !theirs.is_empty(),
            "{workload}: the server counted nothing of sysbench's"
        );
        assert_eq!(
            ours, theirs,
            "{script}: dbrig's statements, then sysbench's"
        );
    }
}

/// sysbench's summary line `LABEL N`, as a number.
fn sysbench_figure(stdout: &str, label: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label} in sysbench's output:\n{stdout}"))
}

/// bulk_insert sends what sysbench's bulk_insert.lua sends: one row per event, `(n,n)`, in
/// text INSERTs split at sysbench's 512 KB buffer, the last rows when the client ends; and it
/// counts as sysbench counts (events = rows, one write per INSERT). It sent prepared 100-row
/// INSERTs, 100 rows an event. 70 000 rows make two INSERTs, one of them full.
#[test]
fn bulk_insert_sends_sysbenchs_statements() {
    let out = tempfile::tempdir().unwrap();
    let server = LoggedServer::start(out.path(), "fidbulk");
    let common = ["--target", &server.url, "--threads", "1"];
    // The benchmark's statements (dbrig's own look at the table before a run, where its ids
    // stand, is not one).
    let inserts = |log: Vec<(String, String)>| -> Vec<(String, String)> {
        log.into_iter()
            .filter(|(c, s)| {
                matches!(c.as_str(), "Query" | "Prepare" | "Execute")
                    && s.contains("sbtest1")
                    && !s.starts_with("CREATE")
                    && !s.starts_with("SELECT")
                    && !s.starts_with("SHOW")
            })
            .collect()
    };
    const ROWS: &str = "70000";
    ok(dbrig(
        out.path(),
        &[&["prepare", "bulk_insert"][..], &common].concat(),
    ));
    server.clear_log();
    let o = Command::new("sysbench")
        .args([
            "bulk_insert",
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={}", server.port),
            "--mysql-user=root",
            "--mysql-db=test",
            &format!("--events={ROWS}"),
            "--time=0",
            "--threads=1",
            "run",
        ])
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs = inserts(server.log());
    ok(dbrig(
        out.path(),
        &[&["cleanup", "bulk_insert"][..], &common].concat(),
    ));
    ok(dbrig(
        out.path(),
        &[&["prepare", "bulk_insert"][..], &common].concat(),
    ));
    server.clear_log();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            &["run", "bulk_insert"][..],
            &common,
            &["--events", ROWS, "--time", "0", "--format", "json"],
        ]
        .concat(),
    )));
    let ours = inserts(server.log());
    ok(dbrig(
        out.path(),
        &[&["cleanup", "bulk_insert"][..], &common].concat(),
    ));
    let summary = |l: &[(String, String)]| -> Vec<(String, usize, usize)> {
        l.iter()
            .map(|(c, s)| (c.clone(), s.len(), s.matches('(').count()))
            .collect()
    };
    assert_eq!(summary(&theirs).len(), 2, "{:?}", summary(&theirs));
    assert!(
        summary(&ours) == summary(&theirs) && ours == theirs,
        "(command, bytes, rows) of dbrig's statements, then sysbench's: {:?} {:?}",
        summary(&ours),
        summary(&theirs)
    );
    assert!(
        theirs[0]
            .1
            .starts_with("INSERT INTO sbtest1 VALUES(1,1),(2,2),")
    );
    // Counted as sysbench counts: events are rows, each INSERT one write.
    assert_eq!(
        (
            v["transactions"].as_u64().unwrap(),
            v["queries"]["write"].as_u64().unwrap(),
            v["queries"]["read"].as_u64().unwrap(),
            v["queries"]["other"].as_u64().unwrap(),
        ),
        (
            sysbench_figure(&stdout, "transactions:"),
            sysbench_figure(&stdout, "write:"),
            sysbench_figure(&stdout, "read:"),
            sysbench_figure(&stdout, "other:"),
        ),
        "dbrig's (transactions, write, read, other), then sysbench's:\n{stdout}"
    );
}
