//! Data safety (issue 12): cleanup never drops a table dbrig did not make, even under a name
//! it once used; an interrupted prepare is never measured; data that does not match the
//! options is refused (or, asked for, measured with a warning). On the engines concerned.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::mysql::{TestDb as MyDb, sql as mysql};
use crate::postgres::TestDb as PgDb;
use crate::{dbrig, error_line, json, ok, text};

fn psql_in(db: &str, statements: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            db,
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            statements,
        ])
        .output()
        .expect("psql is installed with the server");
    assert!(
        o.status.success(),
        "psql -c {statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn sqlite3(file: &Path, statements: &str) -> String {
    let o = Command::new("sqlite3")
        .arg(file)
        .arg(statements)
        .output()
        .expect("sqlite3 is installed");
    assert!(
        o.status.success(),
        "sqlite3 {statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn prepare(out: &Path, target: &str, size: &str) {
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            target,
            "--table-size",
            size,
        ],
    ));
}

/// The user's own sbtest1 in place of dbrig's: cleanup refuses naming it, and the rows stay.
#[track_caller]
fn cleanup_refuses(out: &Path, target: &str, rows: impl Fn() -> String, expected_rows: &str) {
    let e = error_line(&dbrig(
        out,
        &["cleanup", "oltp_point_select", "--target", target],
    ));
    assert!(
        e.contains("table sbtest1") && e.contains("is not the table dbrig created"),
        "{e}"
    );
    assert_eq!(rows(), expected_rows);
}

#[test]
fn cleanup_keeps_a_users_table_of_the_same_name_mariadb() {
    let db = MyDb::new("safety_own");
    let out = tempfile::tempdir().unwrap();
    let d = &db.0;
    // Made by hand after dropping dbrig's: no marker in its comment.
    prepare(out.path(), &db.url(), "100");
    mysql(&format!(
        "DROP TABLE {d}.sbtest1; CREATE TABLE {d}.sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60)); \
         INSERT INTO {d}.sbtest1 VALUES (1, 1, 'mine', 'mine'), (2, 2, 'mine', 'mine')"
    ));
    let count = || {
        mysql(&format!("SELECT COUNT(*) FROM {d}.sbtest1"))
            .trim()
            .to_owned()
    };
    cleanup_refuses(out.path(), &db.url(), count, "2");
    mysql(&format!("DROP TABLE {d}.sbtest1"));
    ok(dbrig(
        out.path(),
        &["cleanup", "oltp_point_select", "--target", &db.url()],
    ));

    // Copied with CREATE TABLE … LIKE (the comment, marker token included, comes along): its
    // creation time still tells it apart.
    prepare(out.path(), &db.url(), "100");
    std::thread::sleep(Duration::from_millis(1100));
    mysql(&format!(
        "CREATE TABLE {d}.mine LIKE {d}.sbtest1; INSERT INTO {d}.mine SELECT * FROM {d}.sbtest1 LIMIT 7; \
         DROP TABLE {d}.sbtest1; RENAME TABLE {d}.mine TO {d}.sbtest1"
    ));
    cleanup_refuses(out.path(), &db.url(), count, "7");
}

#[test]
fn cleanup_keeps_a_users_table_of_the_same_name_postgres() {
    let db = PgDb::new("safety_own");
    let out = tempfile::tempdir().unwrap();
    prepare(out.path(), &db.url(), "100");
    psql_in(
        &db.0,
        "DROP TABLE sbtest1; CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60)); \
         INSERT INTO sbtest1 VALUES (1, 1, 'mine', 'mine'), (2, 2, 'mine', 'mine'), (3, 3, 'x', 'y')",
    );
    cleanup_refuses(
        out.path(),
        &db.url(),
        || psql_in(&db.0, "SELECT COUNT(*) FROM sbtest1"),
        "3",
    );
    let e = error_line(&dbrig(
        out.path(),
        &["cleanup", "oltp_point_select", "--target", &db.url()],
    ));
    assert!(e.contains("OID"), "{e}");
    // dbrig's own, untouched, goes.
    psql_in(&db.0, "DROP TABLE sbtest1");
    prepare(out.path(), &db.url(), "100");
    let o = ok(dbrig(
        out.path(),
        &["cleanup", "oltp_point_select", "--target", &db.url()],
    ));
    assert!(text(&o).contains("sbtest1"), "{}", text(&o));
    assert_eq!(
        psql_in(
            &db.0,
            "SELECT COUNT(*) FROM pg_tables WHERE tablename IN ('sbtest1', 'dbrig_objects')"
        ),
        "0"
    );
}

#[test]
fn cleanup_keeps_a_users_table_of_the_same_name_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("own.sqlite");
    let target = format!("sqlite:{}", file.display());
    prepare(out.path(), &target, "100");
    // The same definition, typed by hand: only the marker comment is missing.
    sqlite3(
        &file,
        "DROP TABLE sbtest1; CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''); \
         INSERT INTO sbtest1 VALUES (1, 1, 'mine', 'mine')",
    );
    cleanup_refuses(
        out.path(),
        &target,
        || sqlite3(&file, "SELECT COUNT(*) FROM sbtest1"),
        "1",
    );
}

/// Start dbrig with `args` and return it once `state` reads `loading` (a table registered,
/// its data still coming).
fn start_until_loading(
    out: &Path,
    args: &[&str],
    state: impl Fn() -> String,
) -> std::process::Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(args)
        .arg(format!("--out={}", out.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while state() != "loading" {
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbrig ended before it could be interrupted"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "no table");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Start `prepare` and SIGKILL it once its first table is registered but still loading.
fn kill_prepare_midway(out: &Path, target: &str, size: &str, state: impl Fn() -> String) {
    let mut child = start_until_loading(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            target,
            "--table-size",
            size,
        ],
        state,
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Ctrl-C in the middle of a long step: it stops within a second, exit 130, saying what was
/// left and how to finish.
#[track_caller]
fn ctrl_c_stops(child: std::process::Child, finish: &str) {
    let pid = child.id().to_string();
    let signalled = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let o = child.wait_with_output().unwrap();
    let took = signalled.elapsed();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("interrupted") && err.contains("half-") && err.contains(finish),
        "{err}"
    );
}

#[test]
fn ctrl_c_stops_prepare_at_once_mariadb() {
    let db = MyDb::new("safety_ctrlc");
    let out = tempfile::tempdir().unwrap();
    let d = db.0.clone();
    let child = start_until_loading(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &db.url(),
            "--table-size",
            "400000",
        ],
        || {
            let has = mysql(&format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}' AND table_name = 'dbrig_objects'"
            ));
            if has.trim() == "1" {
                mysql(&format!(
                    "SELECT state FROM {d}.dbrig_objects WHERE name = 'sbtest1'"
                ))
                .trim()
                .to_owned()
            } else {
                String::new()
            }
        },
    );
    // The advice can be run as it is: it names the target (issue 30, item 27).
    ctrl_c_stops(
        child,
        &format!("dbrig cleanup oltp_point_select --target {}", db.url()),
    );
    let e = error_line(&run(out.path(), &db.url(), "400000", &[]));
    assert!(e.contains("half-prepared"), "{e}");
}

#[test]
fn ctrl_c_stops_a_tpch_load_at_once_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("tpch.sqlite");
    let target = format!("sqlite:{}", file.display());
    let child = start_until_loading(
        out.path(),
        &["tpch", "load", "--sf", "0.5", "--target", &target],
        || {
            Command::new("sqlite3")
                .arg(&file)
                .arg("SELECT state FROM dbrig_objects WHERE name = 'lineitem'")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_default()
        },
    );
    ctrl_c_stops(
        child,
        &format!(
            "`dbrig tpch cleanup --target {target}` then `dbrig tpch load --sf 0.5 --target {target}`"
        ),
    );
    let e = error_line(&dbrig(out.path(), &["tpch", "power", "--target", &target]));
    assert!(e.contains("half-loaded"), "{e}");
    ok(dbrig(out.path(), &["tpch", "cleanup", "--target", &target]));
}

fn run(out: &Path, target: &str, size: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--target",
        target,
        "--table-size",
        size,
        "--events",
        "20",
        "--time",
        "0",
    ];
    args.extend(extra);
    dbrig(out, &args)
}

#[test]
fn an_interrupted_prepare_is_never_measured_mariadb() {
    let db = MyDb::new("safety_half");
    let out = tempfile::tempdir().unwrap();
    let d = db.0.clone();
    let exists = || {
        mysql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}' AND table_name = 'dbrig_objects'"
        ))
        .trim()
            == "1"
    };
    let state = || {
        mysql(&format!(
            "SELECT state FROM {d}.dbrig_objects WHERE name = 'sbtest1'"
        ))
        .trim()
        .to_owned()
    };
    kill_prepare_midway(out.path(), &db.url(), "400000", || {
        if exists() { state() } else { String::new() }
    });
    let rows: u64 = mysql(&format!("SELECT COUNT(*) FROM {d}.sbtest1"))
        .trim()
        .parse()
        .unwrap();
    assert!(rows < 400_000, "{rows}");
    let e = error_line(&run(out.path(), &db.url(), "400000", &[]));
    assert!(
        e.contains("table sbtest1") && e.contains("half-prepared") && e.contains("dbrig cleanup"),
        "{e}"
    );
    // Asked for explicitly: measured, with a warning saying what is wrong.
    let o = ok(run(
        out.path(),
        &db.url(),
        "400000",
        &["--allow-data-mismatch"],
    ));
    assert!(text(&o).contains("warning:") && text(&o).contains("sbtest1 is half-prepared"));
    // cleanup drops dbrig's half-made table (its marker is dbrig's).
    ok(dbrig(
        out.path(),
        &["cleanup", "oltp_point_select", "--target", &db.url()],
    ));
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}'"
        ))
        .trim(),
        "0"
    );
}

#[test]
fn an_interrupted_prepare_is_never_measured_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("half.sqlite");
    let target = format!("sqlite:{}", file.display());
    kill_prepare_midway(out.path(), &target, "3000000", || {
        if !file.exists() {
            return String::new();
        }
        // The loader holds the write lock: read what is committed.
        Command::new("sqlite3")
            .arg(&file)
            .arg("SELECT state FROM dbrig_objects WHERE name = 'sbtest1'")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    });
    let e = error_line(&run(out.path(), &target, "3000000", &[]));
    assert!(e.contains("half-prepared"), "{e}");
    // run --prepare makes dbrig's half-made tables again rather than measuring them.
    let o = ok(run(
        out.path(),
        &target,
        "2000",
        &["--prepare", "--format", "json"],
    ));
    assert_eq!(json(&o)["transactions"], 20);
    assert!(text(&o).contains("left half-prepared"), "{}", text(&o));
    assert_eq!(sqlite3(&file, "SELECT COUNT(*) FROM sbtest1"), "2000");
    assert_eq!(
        sqlite3(
            &file,
            "SELECT state FROM dbrig_objects WHERE name = 'sbtest1'"
        ),
        "ready"
    );
}

#[test]
fn data_that_does_not_match_the_options_is_refused_or_warned() {
    let db = MyDb::new("safety_mismatch");
    let out = tempfile::tempdir().unwrap();
    prepare(out.path(), &db.url(), "1000");
    let e = error_line(&run(out.path(), &db.url(), "1000000", &[]));
    assert!(
        e.contains("sbtest1 was prepared with --table-size 1000, the run asks for 1000000")
            && e.contains("--allow-data-mismatch"),
        "{e}"
    );
    let o = ok(run(
        out.path(),
        &db.url(),
        "1000000",
        &["--allow-data-mismatch"],
    ));
    assert!(
        text(&o).contains("warning:") && text(&o).contains("--table-size 1000,"),
        "{}",
        text(&o)
    );
    ok(run(out.path(), &db.url(), "1000", &[]));
    // A table dbrig did not prepare (sysbench's): its ids must reach the table size.
    mysql(&format!(
        "CREATE TABLE {d}.sbtest2 (id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''); \
         INSERT INTO {d}.sbtest2 (k) SELECT seq FROM {d}.seq_1_to_500",
        d = db.0
    ));
    let e = error_line(&run(out.path(), &db.url(), "1000", &["--tables", "2"]));
    assert!(
        e.contains("sbtest2 holds ids up to 500, the run asks for --table-size 1000"),
        "{e}"
    );
}

/// `--resume` of a plan whose run is still being written refuses, naming the live pid, and
/// leaves the run to its writer.
#[test]
fn resume_refuses_while_the_run_is_alive() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "live"
trials = 2
duration = 3
clients = [1]
[[configuration]]
name = "A"
target = "mock:?latency_us=200"
[[workload]]
name = "oltp_point_select"
"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["run", plan.to_str().unwrap()])
        .arg(format!("--out={}", out.path().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let results = out.path().join("results.db");
    let started = Instant::now();
    let running = || {
        results.exists()
            && dbrig_store::Store::open(&results)
                .ok()
                .and_then(|s| s.runs().ok())
                .is_some_and(|r| r.iter().any(|r| r.status.as_str() == "running"))
    };
    while !running() {
        assert!(started.elapsed() < Duration::from_secs(60), "no run began");
        std::thread::sleep(Duration::from_millis(50));
    }
    let e = error_line(&dbrig(
        out.path(),
        &["run", plan.to_str().unwrap(), "--resume"],
    ));
    assert!(
        e.contains(&format!(
            "is still being written by dbrig process {}",
            child.id()
        )),
        "{e}"
    );
    let store = dbrig_store::Store::open(&results).unwrap();
    let run = &store.runs().unwrap()[0];
    assert_eq!(run.pid, Some(child.id()), "the live run keeps its writer");
    assert!(child.wait().unwrap().success());
    let store = dbrig_store::Store::open(&results).unwrap();
    assert_eq!(store.runs().unwrap().len(), 1);
    assert_eq!(store.runs().unwrap()[0].status.as_str(), "done");
}

/// A MariaDB account of this test process's own, with a password; dropped at the end.
struct PwUser {
    user: String,
    password: String,
}

impl PwUser {
    fn new(db: &str) -> Self {
        let pid = std::process::id();
        let u = PwUser {
            user: format!("dbrig_sec_{pid}"),
            password: format!("Pw{pid}zQ7kX"),
        };
        mysql(&format!(
            "DROP USER IF EXISTS '{0}'@'127.0.0.1'; CREATE USER '{0}'@'127.0.0.1' IDENTIFIED BY '{1}'; \
             GRANT ALL ON {db}.* TO '{0}'@'127.0.0.1'",
            u.user, u.password
        ));
        u
    }
}

impl Drop for PwUser {
    fn drop(&mut self) {
        mysql(&format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.user));
    }
}

/// Every file under `dir` holding `needle`.
pub(crate) fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(files_holding(&p, needle));
        } else if std::fs::read(&p)
            .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        {
            hits.push(p.display().to_string());
        }
    }
    hits
}

/// A password fed through every path (`--password-env`, `--password-file`, `--define`,
/// `--set`, the URL) with hooks that print their environment: afterwards no byte of it is in
/// the results database, the reports or the hook outputs, and no hook saw it.
#[test]
fn no_secret_is_stored_or_handed_on() {
    let db = MyDb::new("safety_secret");
    let pw = PwUser::new(&db.0);
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let url = |with_pw: &str| format!("mysql://{}{with_pw}@127.0.0.1:3306/{}", pw.user, db.0);
    // The hooks print their environment and write it where the test can read it.
    let seen = o.join("hook-env");
    // … and every process's command line while they run (`/proc/*/cmdline`): no child of
    // dbrig (nor anything else) is handed the password as an argument.
    let cmdlines = o.join("cmdlines");
    let hook = format!(
        "env; env >> {}; for f in /proc/[0-9]*/cmdline; do cat $f; echo; done >> {} 2>/dev/null; true",
        seen.display(),
        cmdlines.display()
    );
    let plan = o.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "secrets"
trials = 1
duration = 0.3
clients = [1]
[[configuration]]
name = "by-env"
target = "{env_url}"
password-env = "DBRIG_IT_PW"
[[configuration]]
name = "by-define"
target = "{define_url}"
[[configuration]]
name = "by-set"
target = "mock:"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 100
[environment.hooks]
before-trial = "{hook}"
after-trial-sql = "SELECT 1"
"#,
            env_url = url(""),
            define_url = url(":${PW}"),
        ),
    )
    .unwrap();
    prepare_with_password(o, &url(&format!(":{}", pw.password)));
    let r = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            plan.to_str().unwrap(),
            "--define",
            &format!("PW={}", pw.password),
            "--set",
            &format!(
                "configuration.by-set.target={}",
                url(&format!(":{}", pw.password))
            ),
        ])
        .arg(format!("--out={}", o.display()))
        .env("DBRIG_IT_PW", &pw.password)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r));
    // The URL passwords (`--define`, `--set`) are accepted with the usual warning.
    for c in ["by-define", "by-set"] {
        assert!(
            text(&r).contains(&format!(
                "warning: configuration '{c}': the password in its target URL is visible"
            )),
            "{}",
            text(&r)
        );
    }
    assert!(!text(&r).contains(&pw.password));
    // A single command: password file, then the URL, with a hook.
    let file = o.join("pw");
    std::fs::write(&file, &pw.password).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    for extra in [
        vec![
            "--target".to_owned(),
            url(""),
            "--password-file".into(),
            file.display().to_string(),
        ],
        vec!["--target".to_owned(), url(&format!(":{}", pw.password))],
    ] {
        let mut args = vec![
            "run".to_owned(),
            "oltp_point_select".into(),
            "--table-size".into(),
            "100".into(),
            "--events".into(),
            "10".into(),
            "--time".into(),
            "0".into(),
            "--before-trial".into(),
            hook.clone(),
        ];
        args.extend(extra);
        args.push(format!("--out={}", o.display()));
        // Variables naming the password file, and the engines' own password variables, are
        // not handed to hooks either.
        let mut command = Command::new(env!("CARGO_BIN_EXE_dbrig"));
        command
            .args(&args)
            .env("PGPASSFILE", &file)
            .env("MYSQL_PWD", "not-the-password");
        if args.iter().any(|a| a == "--password-file") {
            command.env("MY_PW_FILE", &file);
        }
        ok(command.output().unwrap());
    }
    let report = ok(dbrig(o, &["report", "latest", "--format", "json"]));
    assert!(!String::from_utf8_lossy(&report.stdout).contains(&pw.password));
    // Run 1 is the prepare (a load is stored too), 2 the plan, 3 and 4 the single runs.
    for run in ["1", "2", "3", "4"] {
        for format in ["json", "html", "markdown"] {
            let r = ok(dbrig(o, &["report", run, "--format", format]));
            assert!(
                !String::from_utf8_lossy(&r.stdout).contains(&pw.password),
                "report {run} {format}"
            );
        }
    }
    // The hooks ran (three trials and two single runs) and never saw it.
    let env_seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        env_seen.lines().filter(|l| l.starts_with("PWD=")).count(),
        5,
        "{env_seen}"
    );
    assert!(!env_seen.contains(&pw.password), "a hook saw the password");
    let file_name = file.display().to_string();
    assert!(
        !env_seen.contains(&file_name),
        "a hook saw the password file: {env_seen}"
    );
    assert!(!env_seen.contains("MYSQL_PWD="), "{env_seen}");
    let seen_cmdlines =
        String::from_utf8_lossy(&std::fs::read(&cmdlines).unwrap()).replace('\0', " ");
    assert!(
        seen_cmdlines.contains("oltp_point_select"),
        "{seen_cmdlines}"
    );
    // dbrig's own command line holds what the user typed (`--define PW=…`, `--set`, a URL
    // with a password); no other process's may.
    let dbrig_bin = env!("CARGO_BIN_EXE_dbrig");
    let leaks: Vec<&str> = seen_cmdlines
        .lines()
        .filter(|l| !l.starts_with(dbrig_bin) && l.contains(&pw.password))
        .collect();
    assert!(
        leaks.is_empty(),
        "a command line held the password: {leaks:?}"
    );
    assert!(
        seen_cmdlines
            .lines()
            .any(|l| l.starts_with("sh -c env; env")),
        "the hook's own command line was seen"
    );
    std::fs::remove_file(&cmdlines).unwrap();
    std::fs::remove_file(&seen).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::fs::remove_file(&plan).unwrap();
    // Stored: the trials ran as the password's account (so it was really used) …
    let store = dbrig_store::Store::open(&o.join("results.db")).unwrap();
    assert_eq!(store.runs().unwrap().len(), 4);
    // … and no byte of it is in the results database or any report written.
    assert_eq!(files_holding(o, &pw.password), Vec::<String>::new());
}

fn prepare_with_password(out: &Path, target: &str) {
    ok(dbrig(
        out,
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            target,
            "--table-size",
            "100",
        ],
    ));
}

/// Clear one-line errors instead of clap's confusion, silent defaults or SQLite's wording.
#[test]
fn bad_inputs_get_one_clear_line() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let run_with = |extra: &[&str]| {
        let mut a = vec!["run", "oltp_point_select", "--target", "mock:"];
        a.extend(extra);
        dbrig(o, &a)
    };
    // Negative numbers reach the option's own validation.
    for (args, expected) in [
        (
            &["--time", "-1"][..],
            "invalid value '-1' for '--time <TIME>': -1 is out of range: give 0 (no limit) or 0.001 to 31536000 seconds (365 days)",
        ),
        (
            &["--rate", "-5"][..],
            "invalid value '-5' for '--rate <RATE>': -5 is out of range: give 0 (closed loop)",
        ),
    ] {
        let e = error_line(&run_with(args));
        assert!(e.contains(expected), "{args:?}: {e}");
    }
    let r = run_with(&["--threads", "-3"]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("invalid value '-3' for '--threads") && !err.contains("unexpected argument"),
        "{err}"
    );
    let r = dbrig(o, &["tpch", "load", "--sf", "-1", "--target", "mock:"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("invalid scale factor '-1'"), "{err}");
    // An empty server URL is an error, not a silent local default.
    for url in ["mysql://", "postgres://"] {
        let e = error_line(&dbrig(o, &["run", "oltp_point_select", "--target", url]));
        assert!(e.contains(&format!("nothing after '{url}'")), "{e}");
    }
    // --results naming a directory.
    let e = error_line(&dbrig(o, &["runs", "--results", o.to_str().unwrap()]));
    assert!(e.contains("is a directory"), "{e}");
    // An unusable placement fails before anything runs or is stored.
    let e = error_line(&run_with(&["--client-cpus", "999", "--time", "0.1"]));
    assert!(e.contains("client-cpus = \"999\" cannot be used"), "{e}");
    let results = o.join("results.db");
    assert!(
        !results.exists()
            || dbrig_store::Store::open(&results)
                .unwrap()
                .runs()
                .unwrap()
                .is_empty(),
        "nothing is recorded"
    );
}

/// `--resume` with no earlier run says it starts a new one.
#[test]
fn resume_without_an_earlier_run_says_so() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        "name = \"fresh\"\ntrials = 1\nduration = 0.2\nclients = [1]\n\
         [[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n\
         [[workload]]\nname = \"oltp_point_select\"\n",
    )
    .unwrap();
    let o = ok(dbrig(
        out.path(),
        &["run", plan.to_str().unwrap(), "--resume"],
    ));
    assert!(
        text(&o).contains("--resume: no earlier run of plan 'fresh'")
            && text(&o).contains("starting a new run"),
        "{}",
        text(&o)
    );
}

/// A failing, timed-out or erroring hook is said on the console; a failed before-* hook
/// fails its trial unless the plan says `on-failure = "warn"`.
#[test]
fn failing_hooks_are_said_and_fail_the_trial() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let target = format!("sqlite:{}", o.join("h.sqlite").display());
    let base = [
        "run",
        "oltp_point_select",
        "--target",
        &target,
        "--prepare",
        "--table-size",
        "100",
        "--time",
        "0.2",
    ];
    for (hook, said) in [
        (
            &["--before-trial", "echo broken; exit 3"][..],
            "before-trial hook (plan) exited with 3: broken",
        ),
        (
            &["--before-trial", "sleep 30", "--hook-timeout", "1"][..],
            "before-trial hook (plan) timed out",
        ),
        (
            &["--before-trial-sql", "SELEC nonsense"][..],
            "before-trial-sql hook (plan) exited with 1",
        ),
    ] {
        let r = dbrig(o, &[&base[..], hook].concat());
        let all = text(&r);
        assert_eq!(r.status.code(), Some(1), "{all}");
        assert!(all.contains(&format!("warning: {said}")), "{all}");
        assert!(error_line(&r).contains(said), "{all}");
    }
    // An after-trial hook that fails is a warning; the trial stands.
    let r = ok(dbrig(
        o,
        &[&base[..], &["--after-trial", "exit 4"]].concat(),
    ));
    assert!(
        text(&r).contains("warning: after-trial hook (plan) exited with 4"),
        "{}",
        text(&r)
    );
    // The plan decides: on-failure = "warn" measures anyway.
    let plan = o.join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"hooks\"\ntrials = 1\nduration = 0.2\nclients = [1]\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{target}\"\n\
             [[workload]]\nname = \"oltp_point_select\"\n[workload.options]\ntable-size = 100\n\
             [environment.hooks]\nbefore-trial = \"exit 3\"\non-failure = \"warn\"\n"
        ),
    )
    .unwrap();
    let r = ok(dbrig(o, &["run", plan.to_str().unwrap()]));
    assert!(
        text(&r).contains("warning: before-trial hook (plan) exited with 3"),
        "{}",
        text(&r)
    );
}

/// Too many SQLite client threads for the process's limits: one line, no panic; and a table
/// whose schema is not the workload's is named as such, not as a connection failure.
#[test]
fn thread_limits_and_schema_mismatch_are_one_clear_line_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    ok(dbrig(
        o,
        &["prepare", "oltp_point_select", "--table-size", "100"],
    ));
    // An address-space limit makes the OS refuse thread stacks, as a pids limit would.
    let r = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1500000; exec {} run oltp_point_select --table-size 100 --threads 3000 --time 1 --out={}",
            env!("CARGO_BIN_EXE_dbrig"),
            o.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let e = error_line(&r);
    assert!(
        e.contains("of 3000 clients")
            && e.contains("the OS refused a thread")
            && e.contains("ulimit -u"),
        "{e}"
    );
    let file = o.join("dbrig.sqlite");
    sqlite3(&file, "ALTER TABLE sbtest1 RENAME COLUMN c TO c_renamed");
    let e = error_line(&dbrig(
        o,
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--threads",
            "4",
            "--time",
            "0.2",
        ],
    ));
    assert!(
        e.contains("statements do not prepare")
            && e.contains("differ from the workload's schema")
            && e.contains("no such column: c")
            && !e.contains("could not connect"),
        "{e}"
    );
}

/// A server that accepts and never answers: `--connect-timeout 2` ends the run in about
/// 2 s (no probe waits longer, no further connection is tried).
#[test]
fn connect_timeout_is_honoured_by_every_connection() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let held = std::sync::Arc::clone(&accepted);
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            held.lock().unwrap().push(s);
        }
    });
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let r = dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &format!("mysql://root@127.0.0.1:{port}/test"),
            "--connect-timeout",
            "2",
            "--time",
            "1",
        ],
    );
    let took = started.elapsed();
    let e = error_line(&r);
    assert!(e.contains("no MySQL handshake within 2s"), "{e}");
    // 2 s to connect, 1 s to run: a connection that ignored the timeout would wait for the
    // silent server forever; 10 s tells the two apart on a loaded machine.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(accepted.lock().unwrap().len(), 1);
}

/// `tpch load` estimates the size first and refuses what the target's disk cannot hold,
/// naming where it looked (SQLite's folder, the local MariaDB's data directory).
#[test]
fn tpch_load_refuses_what_the_disk_cannot_hold() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("big.sqlite");
    let e = error_line(&dbrig(
        out.path(),
        &[
            "tpch",
            "load",
            "--sf",
            "100000",
            "--target",
            &format!("sqlite:{}", file.display()),
        ],
    ));
    assert!(
        e.contains("TPC-H SF 100000 needs about 160000.0 GB but")
            && e.contains(&out.path().display().to_string())
            && e.contains("--force"),
        "{e}"
    );
    assert!(!file.exists(), "nothing was created");
    let db = MyDb::new("safety_big");
    let e = error_line(&dbrig(
        out.path(),
        &["tpch", "load", "--sf", "100000", "--target", &db.url()],
    ));
    let datadir = mysql("SELECT @@datadir");
    assert!(e.contains(datadir.trim()) && e.contains("GB free"), "{e}");
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{}'",
            db.0
        ))
        .trim(),
        "0"
    );
    // A plan's TPC-H prepare step follows the same rule (`force-load = true` forces it).
    let plan_db = out.path().join("plan.sqlite");
    let plan = out.path().join("big.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "too-big"
trials = 1
clients = [1]
[[configuration]]
name = "A"
target = "sqlite:{}"
[[workload]]
name = "tpch-power"
[workload.options]
sf = 100000
queries = ["6"]
"#,
            plan_db.display()
        ),
    )
    .unwrap();
    let r = dbrig(out.path(), &["run", plan.to_str().unwrap()]);
    assert!(!r.status.success(), "{}", text(&r));
    assert!(
        text(&r).contains("TPC-H SF 100000 needs about 160000.0 GB but")
            && text(&r).contains("force-load = true"),
        "{}",
        text(&r)
    );
    // Refused before the load began: no table was created, nothing was generated.
    assert!(!text(&r).contains("loading TPC-H SF"), "{}", text(&r));
    let size = std::fs::metadata(&plan_db).map(|m| m.len()).unwrap_or(0);
    assert!(size < 64 * 1024, "{size} bytes in {}", plan_db.display());
}

/// A managed server's own password (locked down by default) is used by dbrig and masked in
/// whatever a hook prints of it; the run stores no byte of it.
#[test]
fn a_managed_servers_secret_is_used_and_never_stored() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().display().to_string();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "managed-secret"
trials = 1
duration = 0.5
clients = [1]
[[server]]
name = "m1"
engine = "mariadb"
start-timeout = 120
[[configuration]]
name = "A"
server = "m1"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 100
[environment.hooks]
before-trial = "cat {o}/servers/m1/secret; env"
"#
        ),
    )
    .unwrap();
    let r = ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let secret = std::fs::read_to_string(out.path().join("servers/m1/secret"))
        .unwrap()
        .trim()
        .to_owned();
    assert_eq!(secret.len(), 32);
    assert!(!text(&r).contains(&secret));
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let cell = &store.cells(run).unwrap()[0];
    let trial = &store.trials(cell.id).unwrap()[0];
    assert_eq!(trial.status.as_str(), "done", "{:?}", trial.reason);
    let hooks = crate::trial_json(trial)["hooks"].to_string();
    assert!(hooks.starts_with("[{") && hooks.contains("***"), "{hooks}");
    drop(store);
    let mut holding = files_holding(out.path(), &secret);
    // Only the secret file itself (the server keeps a hash, the log no statement).
    holding.retain(|p| !p.ends_with("/servers/m1/secret"));
    assert_eq!(holding, Vec::<String>::new());
}

/// A plan stopped by Ctrl-C in the middle of its prepare step, then `--resume`d: dbrig's own
/// half-loaded tables (proven by their markers) are made again and the trials measure complete
/// data. `state` reads the registry state of the table the load fills last.
fn resume_remakes_half_loaded_tables(
    out: &Path,
    plan_text: &str,
    state: impl Fn() -> String,
) -> std::process::Output {
    let plan = out.join("plan.toml");
    std::fs::write(&plan, plan_text).unwrap();
    let child = start_until_loading(out, &["run", plan.to_str().unwrap()], state);
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(
        text(&o).contains("`--resume` or `run --prepare` makes them again"),
        "{}",
        text(&o)
    );
    ok(dbrig(out, &["run", plan.to_str().unwrap(), "--resume"]))
}

/// TPC-H in a plan on MariaDB: Ctrl-C mid-load, then `--resume` loads again (it said
/// "half-loaded: run `dbrig tpch cleanup`" and failed).
#[test]
fn resume_remakes_an_interrupted_tpch_load_mariadb() {
    let db = MyDb::new("resume_tpch");
    let out = tempfile::tempdir().unwrap();
    let d = db.0.clone();
    let o = resume_remakes_half_loaded_tables(
        out.path(),
        &format!(
            "name = \"tpch-resume\"\ntrials = 1\nclients = [1]\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{}\"\n\
             [[workload]]\nname = \"tpch-power\"\n[workload.options]\nsf = 0.1\nqueries = [\"6\"]\n",
            db.url()
        ),
        || {
            let has = mysql(&format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}' AND table_name = 'dbrig_objects'"
            ));
            if has.trim() != "1" {
                return String::new();
            }
            mysql(&format!(
                "SELECT state FROM {d}.dbrig_objects WHERE name = 'lineitem'"
            ))
            .trim()
            .to_owned()
        },
    );
    assert!(
        text(&o).contains("left half-loaded by an interrupted load: dropping them"),
        "{}",
        text(&o)
    );
    // Complete: TPC-H's counts at SF 0.1, every table ready.
    for (table, rows) in [
        ("orders", "150000"),
        ("customer", "15000"),
        ("part", "20000"),
    ] {
        assert_eq!(
            mysql(&format!("SELECT COUNT(*) FROM {d}.{table}")).trim(),
            rows,
            "{table}"
        );
    }
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*) FROM {d}.dbrig_objects WHERE state = 'ready'"
        ))
        .trim(),
        "8"
    );
}

/// pgbench's tables in a plan on PostgreSQL: an interrupted pgbench-init left them half-made
/// (measured as they were, empty); `--resume` makes them again.
#[test]
fn resume_remakes_an_interrupted_pgbench_init_postgres() {
    let db = PgDb::new("resume_pgbench");
    let out = tempfile::tempdir().unwrap();
    let o = resume_remakes_half_loaded_tables(
        out.path(),
        &format!(
            "name = \"pgbench-resume\"\ntrials = 1\nclients = [1]\nduration = 0\nwarmup = 0\n\
             [run]\nevents = 50\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{}\"\n\
             [[workload]]\nname = \"script\"\n[workload.options]\nbuiltins = [\"select-only\"]\nscale = 20\n",
            db.url()
        ),
        || {
            let o = Command::new("psql")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-d",
                    &db.0,
                    "-At",
                    "-c",
                    "SELECT state FROM dbrig_objects WHERE name = 'pgbench_accounts'",
                ])
                .output()
                .unwrap();
            String::from_utf8_lossy(&o.stdout).trim().to_owned()
        },
    );
    assert!(
        text(&o).contains("were left half-made by an interrupted pgbench-init"),
        "{}",
        text(&o)
    );
    assert_eq!(
        psql_in(&db.0, "SELECT COUNT(*) FROM pgbench_accounts"),
        "2000000"
    );
    assert_eq!(
        psql_in(
            &db.0,
            "SELECT COUNT(*) FROM dbrig_objects WHERE state = 'ready'"
        ),
        "4"
    );
}

/// A prepare that fails for a cause that will not change by itself (a user's own `sbtest1`
/// where the plan needs dbrig's two tables) stops that configuration once, saying the cause;
/// its other trials are recorded failed without preparing again, the other configuration runs.
#[test]
fn a_lasting_prepare_failure_stops_its_configuration_once_mariadb() {
    let a = MyDb::new("prep_fail_a");
    let b = MyDb::new("prep_fail_b");
    mysql(&format!(
        "CREATE TABLE {}.sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60)); INSERT INTO {}.sbtest1 VALUES (1, 1, 'mine', 'mine')",
        a.0, a.0
    ));
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"prep-fail\"\ntrials = 4\nclients = [1, 2]\nduration = 0.2\nwarmup = 0\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{}\"\n\
             [[configuration]]\nname = \"B\"\ntarget = \"{}\"\n\
             [[workload]]\nname = \"oltp_point_select\"\n[workload.options]\ntables = 2\ntable-size = 100\n",
            a.url(),
            b.url()
        ),
    )
    .unwrap();
    let o = dbrig(out.path(), &["run", plan.to_str().unwrap()]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert_eq!(
        all.matches("preparing oltp_point_select first").count(),
        2,
        "A once, B once: {all}"
    );
    assert_eq!(all.matches("sbtest1 already exists").count(), 3, "{all}");
    assert!(
        all.contains(
            "configuration A: preparing oltp_point_select failed: table sbtest1 already exists"
        ) && all.contains("its 7 other oltp_point_select trial(s) are not run"),
        "{all}"
    );
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let mut statuses = std::collections::BTreeMap::new();
    for cell in store.cells(run).unwrap() {
        for t in store.trials(cell.id).unwrap() {
            *statuses
                .entry((cell.configuration.clone(), t.status.as_str().to_owned()))
                .or_insert(0) += 1;
            if cell.configuration == "A" {
                assert!(
                    t.reason
                        .as_deref()
                        .unwrap_or_default()
                        .contains("sbtest1 already exists"),
                    "{:?}",
                    t.reason
                );
            }
        }
    }
    assert_eq!(
        statuses.get(&("A".into(), "failed".into())),
        Some(&8),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.get(&("B".into(), "done".into())),
        Some(&8),
        "{statuses:?}"
    );
    assert_eq!(
        mysql(&format!("SELECT COUNT(*) FROM {}.sbtest1", a.0)).trim(),
        "1",
        "the user's table is untouched"
    );
}
