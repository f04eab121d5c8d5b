//! MySQL's classic `sql-bench` suite (from MariaDB's source tree, Perl with DBI) as a
//! workload kind: each chosen test script runs against the trial's target — `--server=mysql`
//! or `--server=Pg`, host, port or socket, user, database — with `--small-test`,
//! `--small-tables` and any other option passed through. dbrig runs the tests one by one
//! itself (not `run-all-tests`, which would put the password on every test's command line):
//! the password goes to `launch.pl` through the environment and reaches the test inside that
//! Perl process, never argv. Each test's `Time for …` lines and `Total time` are parsed into a
//! [`SqlBenchResult`]; a test that fails, loses its server or runs past `timeout` is recorded
//! as such.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dbrig_core::limits;
use dbrig_core::results::{
    SqlBenchOperation, SqlBenchResult, SqlBenchStatus, SqlBenchTest, SqlBenchTime,
};
use dbrig_driver::{Endpoint, Target};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;

pub mod home;

/// The Perl launcher: takes the password from `DBRIG_SQLBENCH_PASSWORD`, times wallclock in
/// microseconds when asked, then runs the test in its own process.
const LAUNCH: &str = include_str!("launch.pl");

/// Where `scripts/sql-bench` keeps the suite, below the user's cache folder.
const CACHE_SUBDIR: &str = "dbrig/sql-bench/current";

/// Options of the `sql-bench` workload (a plan's `[workload.options]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SqlBenchOptions {
    /// The sql-bench folder (`bench-init.pl`, `server-cfg`, the `test-*` scripts). Default:
    /// `$DBRIG_SQL_BENCH`, else `~/.cache/dbrig/sql-bench/current`, which `scripts/sql-bench`
    /// fills from the Debian source package of MariaDB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<PathBuf>,
    /// Tests to run (`connect`, `test-insert`, …), in this order; empty: every test
    /// `run-all-tests` runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// sql-bench's `--small-test`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub small_test: bool,
    /// sql-bench's `--small-tables`.
    #[serde(
        default,
        alias = "small-table",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub small_tables: bool,
    /// Other sql-bench options, passed through (`--fast`, `--loop-count=50`); the
    /// connection's options are dbrig's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Time wallclock in microseconds (Benchmark's `:hireswallclock`); `false`: whole
    /// seconds, as sql-bench prints by default.
    #[serde(default = "yes")]
    pub hires: bool,
    /// Seconds one test may run before dbrig stops it (recorded as timed out).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub timeout: Option<f64>,
}

fn yes() -> bool {
    true
}

/// Options dbrig sets itself from the target; passing them through would run against
/// something else than the trial's server, or put a password on a command line.
const OWN_OPTIONS: [&str; 8] = [
    "server", "host", "user", "password", "database", "socket", "dir", "log",
];

impl SqlBenchOptions {
    /// Checks what can be checked without the suite.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        for o in &self.options {
            let name = o.trim_start_matches('-');
            let name = name.split('=').next().unwrap_or(name);
            if OWN_OPTIONS.contains(&name) {
                return Err(WorkloadError::InvalidOptions(format!(
                    "sql-bench options: --{name} is set by dbrig from the target (its password through the environment)"
                )));
            }
            if !o.starts_with("--") {
                return Err(WorkloadError::InvalidOptions(format!(
                    "sql-bench options: {o:?} is not an option (write --name or --name=value)"
                )));
            }
        }
        Ok(())
    }

    /// The suite's folder.
    pub fn suite_dir(&self) -> Option<PathBuf> {
        if let Some(s) = &self.suite {
            return Some(s.clone());
        }
        if let Some(s) = std::env::var_os("DBRIG_SQL_BENCH") {
            return Some(PathBuf::from(s));
        }
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(cache.join(CACHE_SUBDIR))
    }

    /// The suite folder, checked, and the tests to run in it.
    pub fn resolve(&self) -> Result<(PathBuf, Vec<String>), WorkloadError> {
        let dir = self.suite_dir().ok_or_else(|| {
            WorkloadError::InvalidOptions(
                "sql-bench: no suite folder (set suite = DIR or $DBRIG_SQL_BENCH)".into(),
            )
        })?;
        if !dir.join("bench-init.pl").is_file() || !dir.join("server-cfg").is_file() {
            return Err(WorkloadError::InvalidOptions(format!(
                "sql-bench: {} holds no sql-bench suite (bench-init.pl, server-cfg); run scripts/sql-bench to fetch it, or set suite = DIR",
                dir.display()
            )));
        }
        let available = available_tests(&dir);
        if self.tests.is_empty() {
            return Ok((dir, available));
        }
        let mut chosen = Vec::new();
        for t in &self.tests {
            let name = t.trim().strip_prefix("test-").unwrap_or(t.trim());
            if !available.iter().any(|a| a == name) {
                return Err(WorkloadError::InvalidOptions(format!(
                    "sql-bench: no test '{t}' in {} (tests: {})",
                    dir.display(),
                    available.join(", ")
                )));
            }
            chosen.push(name.to_owned());
        }
        Ok((dir, chosen))
    }

    /// The options every test gets besides the connection's (stored with the result).
    fn passed_options(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.small_test {
            v.push("--small-test".to_owned());
        }
        if self.small_tables {
            v.push("--small-tables".to_owned());
        }
        v.extend(self.options.iter().cloned());
        v
    }
}

/// The tests `run-all-tests` would run: every `test-*` script but configure scripts and
/// `-fork` variants, in name order (its `<test-*>` glob).
fn available_tests(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("test-") && !n.ends_with(".sh") && !n.ends_with("-fork"))
        .map(|n| n["test-".len()..].to_owned())
        .collect();
    v.sort();
    v
}

/// How the tests reach the target: sql-bench's arguments and the environment.
struct Connection {
    server: &'static str,
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    password: Option<String>,
}

fn connection(target: &Target, extra: &[String]) -> Result<Connection, WorkloadError> {
    let (server, user, password, endpoint, database) = match target {
        Target::Mysql {
            user,
            password,
            endpoint,
            database,
            ..
        } => ("mysql", user, password, endpoint, database),
        Target::Postgres {
            user,
            password,
            endpoint,
            database,
            ..
        } => ("Pg", user, password, endpoint, database),
        _ => {
            return Err(WorkloadError::InvalidOptions(
                "sql-bench runs against MariaDB/MySQL or PostgreSQL".into(),
            ));
        }
    };
    if target.tls().is_some_and(|t| t.enabled()) {
        // The suite connects through Perl DBI, which dbrig cannot hand its TLS settings to:
        // refuse rather than measure a connection other than the one asked for.
        return Err(WorkloadError::InvalidOptions(
            "sql-bench runs through Perl DBI and takes no TLS settings from dbrig: use sslmode=disable for this workload".into(),
        ));
    }
    let mut args = vec![
        format!("--server={server}"),
        format!("--user={user}"),
        format!("--database={database}"),
    ];
    let mut env = Vec::new();
    // The user's own --connect-options go after dbrig's port.
    let user_connect: Vec<&str> = extra
        .iter()
        .filter_map(|o| o.strip_prefix("--connect-options="))
        .collect();
    match (server, endpoint) {
        ("mysql", Endpoint::Tcp { host, port }) => {
            args.push(format!("--host={host}"));
            // sql-bench's MariaDB data source has no port of its own: DBD::MariaDB takes it
            // from the data source's extra options.
            let mut c = vec![format!("port={port}")];
            c.extend(user_connect.iter().map(|s| s.to_string()));
            args.push(format!("--connect-options={}", c.join(";")));
        }
        ("mysql", Endpoint::Socket(path)) => {
            args.push("--host=localhost".into());
            args.push(format!("--socket={}", path.display()));
            if !user_connect.is_empty() {
                args.push(format!("--connect-options={}", user_connect.join(";")));
            }
        }
        // sql-bench's Pg data source names only the database: libpq's environment says
        // where the server is.
        (_, Endpoint::Tcp { host, port }) => {
            env.push(("PGHOST", host.clone()));
            env.push(("PGPORT", port.to_string()));
        }
        (_, Endpoint::Socket(path)) => {
            // A PostgreSQL socket path is DIR/.s.PGSQL.PORT.
            let dir = path.parent().unwrap_or(Path::new("/"));
            env.push(("PGHOST", dir.display().to_string()));
            if let Some(port) = path.extension().and_then(|e| e.to_str()) {
                env.push(("PGPORT", port.to_owned()));
            }
        }
    }
    Ok(Connection {
        server,
        args,
        env,
        password: password.as_ref().map(|p| p.expose().to_owned()),
    })
}

/// Runs the chosen tests one after another against `target` as it is (the caller chooses
/// the database: [`trial`] gives the suite one of its own); `after_test` runs after each
/// test; `stop` abandons the run (the test in flight is killed). Blocking: call it on a
/// blocking thread.
pub fn run(
    options: &SqlBenchOptions,
    target: &Target,
    note: &(dyn Fn(&str) + Sync),
    after_test: &(dyn Fn() -> Result<(), WorkloadError> + Sync),
    stop: &AtomicBool,
) -> Result<SqlBenchResult, WorkloadError> {
    let (dir, tests) = options.resolve()?;
    let passed = options.passed_options();
    let conn = connection(target, &passed)?;
    let mut args = conn.args.clone();
    args.extend(
        passed
            .iter()
            .filter(|o| !o.starts_with("--connect-options="))
            .cloned(),
    );
    let mut result = SqlBenchResult {
        server: conn.server.to_owned(),
        server_version: String::new(),
        options: passed.clone(),
        hires: options.hires,
        tests: Vec::new(),
    };
    for name in &tests {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        note(&format!("sql-bench test-{name}"));
        let t = run_test(&dir, name, &args, &conn, options, stop)?;
        // Before the next test: a run cut short leaves at most one test's tables unproven.
        after_test()?;
        if result.server_version.is_empty()
            && let Some(v) = server_version(&t.output)
        {
            result.server_version = v;
        }
        note(&format!(
            "sql-bench test-{name}: {}{}",
            t.status.as_str(),
            t.total
                .map(|x| format!(", {:.3} s", x.wall_s))
                .unwrap_or_default()
        ));
        result.tests.push(t);
    }
    Ok(result)
}

fn run_test(
    dir: &Path,
    name: &str,
    args: &[String],
    conn: &Connection,
    options: &SqlBenchOptions,
    stop: &AtomicBool,
) -> Result<SqlBenchTest, WorkloadError> {
    let io = |what: &str, e: std::io::Error| {
        WorkloadError::InvalidOptions(format!("sql-bench test-{name}: {what}: {e}"))
    };
    // stdout and stderr into one file, in the order the test wrote them (sql-bench's result
    // file is its stdout; errors go to stderr).
    let out_path =
        std::env::temp_dir().join(format!("dbrig-sqlbench-{}-{name}.out", std::process::id()));
    let out = std::fs::File::create(&out_path).map_err(|e| io("output file", e))?;
    let err = out.try_clone().map_err(|e| io("output file", e))?;
    let mut cmd = Command::new("perl");
    cmd.arg("-e")
        .arg(LAUNCH)
        .arg(format!("test-{name}"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env_remove("DBRIG_SQLBENCH_PASSWORD")
        .env("DBRIG_SQLBENCH_HIRES", if options.hires { "1" } else { "" });
    for (k, v) in &conn.env {
        cmd.env(k, v);
    }
    if let Some(p) = &conn.password {
        cmd.env("DBRIG_SQLBENCH_PASSWORD", p);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| io("running perl", e))?;
    let timeout = options.timeout.map(dbrig_core::limits::duration);
    let mut timed_out = false;
    let status = loop {
        match child.try_wait().map_err(|e| io("waiting", e))? {
            Some(s) => break Some(s),
            None => {
                let late = timeout.is_some_and(|t| started.elapsed() > t);
                if late || stop.load(Ordering::Relaxed) {
                    timed_out = late;
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    let mut text = String::new();
    let read = std::fs::File::open(&out_path).and_then(|mut f| {
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(())
    });
    let _ = std::fs::remove_file(&out_path);
    read.map_err(|e| io("reading the output", e))?;
    if let Some(p) = conn.password.as_deref().filter(|p| !p.is_empty()) {
        // sql-bench prints the password when a connection fails.
        text = text.replace(p, "***");
    }
    let exit = match status {
        Some(s) => s.code(),
        None => None,
    };
    let mut t = parse_test(name, &text, exit, elapsed);
    if timed_out {
        t.status = SqlBenchStatus::TimedOut;
        t.error = Some(format!(
            "stopped after the timeout of {} s",
            options.timeout.unwrap_or_default()
        ));
    }
    Ok(t)
}

/// Whether Perl runs and loads DBI, which every sql-bench test needs: a suite that cannot start
/// is a failed trial with its cause, not a run of tests each failing alike. Decided by perl's
/// exit status; its first line says why.
fn perl_loads_dbi() -> Result<(), WorkloadError> {
    let o = Command::new("perl")
        .args(["-e", "require DBI"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            WorkloadError::SuiteCannotStart(format!(
                "perl does not run ({e}): install Perl and its DBI (Debian: perl, libdbi-perl)"
            ))
        })?;
    if o.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&o.stderr);
    Err(WorkloadError::SuiteCannotStart(format!(
        "Perl cannot load DBI ({}): install it (Debian: libdbi-perl, with libdbd-mariadb-perl or libdbd-pg-perl)",
        dbrig_core::results::perl_error_line(&said)
    )))
}

/// `Testing server 'VERSION' at DATE`.
fn server_version(output: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let rest = l.strip_prefix("Testing server '")?;
        let end = rest.rfind("' at ")?;
        Some(rest[..end].to_owned())
    })
}

/// A test's result from its output and exit status (`None`: killed by a signal).
pub fn parse_test(name: &str, output: &str, exit: Option<i32>, elapsed_s: f64) -> SqlBenchTest {
    let mut operations = Vec::new();
    let mut total = None;
    for line in output.lines() {
        if let Some(rest) = strip_ci(line.trim_start(), "total time:") {
            total = parse_times(rest);
        } else if let Some(op) = parse_operation(line) {
            operations.push(op);
        }
    }
    let last = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let finished = strip_ci(last, "total time:").is_some();
    let skipped = strip_ci(last, "test skipped").is_some();
    let (status, error) = if skipped && exit == Some(0) {
        (SqlBenchStatus::Skipped, Some(last.to_owned()))
    } else if finished && exit == Some(0) {
        (SqlBenchStatus::Ok, None)
    } else {
        let error = error_lines(output).unwrap_or_else(|| match exit {
            Some(c) => format!("exit status {c} without a Total time"),
            None => "killed by a signal".to_owned(),
        });
        let status = if lost_server(&error) {
            SqlBenchStatus::LostServer
        } else {
            SqlBenchStatus::Failed
        };
        (status, Some(error))
    };
    SqlBenchTest {
        name: name.to_owned(),
        status,
        error,
        exit_code: exit,
        operations,
        total: total.filter(|_| finished),
        elapsed_s,
        output: output.to_owned(),
    }
}

/// What DBI's drivers say when the server went away (sql-bench's output is the only place
/// this is known; the client library's messages).
fn lost_server(error: &str) -> bool {
    let e = error.to_ascii_lowercase();
    [
        "lost connection",
        "server has gone away",
        "can't connect",
        "connection refused",
        "server closed the connection",
        "backend closed",
        "terminating connection",
        "no connection to the server",
    ]
    .iter()
    .any(|m| e.contains(m))
}

/// The error a failed test printed: the lines after its last timing line, without Perl's
/// "Compilation failed" echo, at most three.
fn error_lines(output: &str) -> Option<String> {
    let lines: Vec<&str> = output.lines().collect();
    let start = lines
        .iter()
        .rposition(|l| parse_operation(l).is_some() || l.starts_with("Testing server"))
        .map_or(0, |i| i + 1);
    let picked: Vec<&str> = lines[start..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with("Compilation failed"))
        .collect();
    let errorish: Vec<&str> = picked
        .iter()
        .copied()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains(" at ") || lost_server(&l) || l.contains("can't")
        })
        .collect();
    let chosen = if errorish.is_empty() {
        picked
    } else {
        errorish
    };
    let n = chosen.len();
    (n > 0).then(|| chosen[n.saturating_sub(3)..].join(" / "))
}

fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// `[Estimated ]Time (for|to) NAME (COUNT)[:] W wallclock secs (U usr S sys + CU cusr CS csys
/// = C CPU)`. Lenient where sql-bench is: `select_in (10:100) 0.1 wallclock` has no colon,
/// `drop table(1)` no space.
pub fn parse_operation(line: &str) -> Option<SqlBenchOperation> {
    let line = line.trim();
    let (estimated, rest) = match strip_ci(line, "estimated ") {
        Some(r) => (true, r),
        None => (false, line),
    };
    let rest = strip_ci(rest, "time for ").or_else(|| strip_ci(rest, "time to "))?;
    let at = rest.find(" wallclock secs")?;
    let (head, tail) = (&rest[..at], &rest[at..]);
    let head = head.trim_end();
    let wall_at = head.rfind(|c: char| c.is_whitespace() || c == ':')? + 1;
    let wall: f64 = head[wall_at..].parse().ok()?;
    let head = head[..wall_at].trim_end().trim_end_matches(':').trim_end();
    let (name, count) = match head.strip_suffix(')').and_then(|h| h.rsplit_once('(')) {
        Some((n, c)) => (n.trim(), c.trim()),
        None => (head, ""),
    };
    let mut time = parse_times(tail).unwrap_or_default();
    time.wall_s = wall;
    Some(SqlBenchOperation {
        name: name.to_owned(),
        count: count.to_owned(),
        estimated,
        time,
    })
}

/// ` W wallclock secs ( U usr  S sys +  CU cusr  CS csys =  C CPU)` (the wallclock figure
/// may be absent: the caller has it).
fn parse_times(s: &str) -> Option<SqlBenchTime> {
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '+' || c == '=')
        .filter(|w| !w.is_empty())
        .collect();
    let before = |unit: &str| -> Option<f64> {
        let i = words.iter().position(|w| w.eq_ignore_ascii_case(unit))?;
        words.get(i.checked_sub(1)?)?.parse().ok()
    };
    let wall = before("wallclock");
    let usr = before("usr");
    if wall.is_none() && usr.is_none() {
        return None;
    }
    Some(SqlBenchTime {
        wall_s: wall.unwrap_or(0.0),
        usr_s: usr.unwrap_or(0.0),
        sys_s: before("sys").unwrap_or(0.0),
        cusr_s: before("cusr").unwrap_or(0.0),
        csys_s: before("csys").unwrap_or(0.0),
        cpu_s: before("CPU").unwrap_or(0.0),
    })
}

/// Runs [`run`] on a blocking thread in the suite's database of its own on `target`'s
/// server ([`home::enter`]), registering what each test left there; dropping the future (an
/// interrupted trial) kills the test in flight.
pub async fn trial(
    options: &SqlBenchOptions,
    target: &Target,
    connect: &dbrig_driver::ConnectOptions,
    note: &(dyn Fn(&str) + Sync),
) -> Result<SqlBenchResult, WorkloadError> {
    // Checked before any database is made for it.
    options.resolve()?;
    tokio::task::spawn_blocking(perl_loads_dbi)
        .await
        .map_err(|e| WorkloadError::Internal(format!("sql-bench: {e}")))??;
    let (target, created) = home::enter(target, connect).await?;
    if created {
        note(&format!(
            "sql-bench runs in database {} of its own (`dbrig cleanup sql-bench` drops it)",
            target.database().unwrap_or_default()
        ));
    }
    let target = &target;
    let handle = tokio::runtime::Handle::current();
    let home_target = target.clone();
    let home_connect = connect.clone();
    struct StopOnDrop(Arc<AtomicBool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let _guard = StopOnDrop(Arc::clone(&stop));
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let o = options.clone();
    let t = target.clone();
    let worker = tokio::task::spawn_blocking(move || {
        let after = || handle.block_on(home::register_left(&home_target, &home_connect));
        run(
            &o,
            &t,
            &|l| drop(lines_tx.send(l.to_owned())),
            &after,
            &stop,
        )
    });
    let mut worker = std::pin::pin!(worker);
    loop {
        tokio::select! {
            Some(line) = lines_rx.recv() => note(&line),
            r = &mut worker => {
                while let Ok(line) = lines_rx.try_recv() {
                    note(&line);
                }
                return r.map_err(|e| WorkloadError::InvalidOptions(format!("sql-bench: {e}")))?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> &'static str {
        match name {
            "connect-mysql-seconds" => include_str!("fixtures/connect-mysql-seconds.txt"),
            "connect-pg-hires" => include_str!("fixtures/connect-pg-hires.txt"),
            "connect-access-denied" => include_str!("fixtures/connect-access-denied.txt"),
            "insert-server-died" => include_str!("fixtures/insert-server-died.txt"),
            "select-server-died" => include_str!("fixtures/select-server-died.txt"),
            "insert-mysql-hires" => include_str!("fixtures/insert-mysql-hires.txt"),
            _ => unreachable!(),
        }
    }

    #[test]
    fn whole_second_output_of_test_connect() {
        let t = parse_test("connect", fixture("connect-mysql-seconds"), Some(0), 1.5);
        assert_eq!(t.status, SqlBenchStatus::Ok);
        let names: Vec<&str> = t.operations.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "connect",
                "connect+select_simple",
                "select_simple",
                "select_simple_cache",
                "connect+select_1_row",
                "select_1_row",
                "select_1_row_cache",
                "select_2_rows",
                "select_column+column",
                "select_big_str"
            ]
        );
        let c = &t.operations[4];
        assert_eq!(
            (c.count.as_str(), c.loops(), c.time.wall_s),
            ("500", 500, 1.0)
        );
        assert_eq!(
            (c.time.usr_s, c.time.sys_s, c.time.cpu_s),
            (0.12, 0.07, 0.19)
        );
        let total = t.total.unwrap();
        assert_eq!((total.wall_s, total.usr_s, total.cpu_s), (5.0, 0.54, 0.91));
        assert_eq!(
            server_version(&t.output).unwrap(),
            "10.11.19 MariaDB 0+deb12u1"
        );
    }

    #[test]
    fn microsecond_output_against_postgresql() {
        let t = parse_test("connect", fixture("connect-pg-hires"), Some(0), 15.2);
        assert_eq!(t.status, SqlBenchStatus::Ok);
        assert_eq!(t.operations.len(), 10);
        assert_eq!(t.operations[0].time.wall_s, 4.46461);
        assert_eq!(t.total.unwrap().wall_s, 15.0957);
        assert!(server_version(&t.output).unwrap().starts_with("PostgreSQL"));
    }

    #[test]
    fn test_insert_lines_without_colon_and_repeated_names() {
        let t = parse_test("insert", fixture("insert-mysql-hires"), Some(0), 3.0);
        assert_eq!(t.status, SqlBenchStatus::Ok, "{:?}", t.error);
        let select_in: Vec<&SqlBenchOperation> = t
            .operations
            .iter()
            .filter(|o| o.name == "select_in")
            .collect();
        assert_eq!(select_in.len(), 3, "no colon after the count");
        assert_eq!(select_in[0].count, "10:100");
        assert!(
            t.operations
                .iter()
                .any(|o| o.name == "drop table" && o.count == "1")
        );
        let sum: f64 = t.operations.iter().map(|o| o.time.wall_s).sum();
        assert!(sum > 0.0 && sum <= t.total.unwrap().wall_s + 0.01);
    }

    #[test]
    fn a_failed_test_is_recorded_with_its_error() {
        let t = parse_test("connect", fixture("connect-access-denied"), Some(1), 0.1);
        assert_eq!(t.status, SqlBenchStatus::Failed);
        let e = t.error.unwrap();
        assert!(e.contains("Access denied for user 'nobody'"), "{e}");
        assert!(!e.contains("Compilation failed"), "{e}");
        assert!(t.total.is_none() && t.operations.is_empty());
    }

    #[test]
    fn a_server_that_dies_mid_test_is_lost_server() {
        for (name, f) in [
            ("insert", "insert-server-died"),
            ("select", "select-server-died"),
        ] {
            let t = parse_test(name, fixture(f), Some(1), 1.0);
            assert_eq!(t.status, SqlBenchStatus::LostServer, "{f}");
            assert!(
                t.error.as_deref().unwrap().contains("Lost connection"),
                "{f}"
            );
            assert!(t.total.is_none());
        }
        // Killed by a signal, nothing printed after the last timing: still recorded.
        let t = parse_test(
            "connect",
            "Time for connect (5): 1 wallclock secs ( 0.01 usr 0.00 sys + 0.00 cusr 0.00 csys = 0.01 CPU)\n",
            None,
            1.0,
        );
        assert_eq!(t.status, SqlBenchStatus::Failed);
        assert_eq!(t.error.as_deref(), Some("killed by a signal"));
        assert_eq!(t.operations.len(), 1);
        // A Total time but a non-zero exit is not a success.
        let t = parse_test(
            "x",
            "Total time: 1 wallclock secs ( 0.01 usr 0.00 sys + 0.00 cusr 0.00 csys = 0.01 CPU)\n",
            Some(2),
            1.0,
        );
        assert_eq!(t.status, SqlBenchStatus::Failed);
    }

    #[test]
    fn estimated_and_skipped() {
        let op = parse_operation(
            "Estimated time for big_select (1000:2000): 12 wallclock secs ( 1.00 usr 0.50 sys + 0.00 cusr 0.00 csys = 1.50 CPU)",
        )
        .unwrap();
        assert!(op.estimated);
        assert_eq!(
            (op.name.as_str(), op.loops(), op.time.cpu_s),
            ("big_select", 1000, 1.5)
        );
        let t = parse_test(
            "transactions",
            "Testing server 'x' at y\n\nTest skipped because the database doesn't support transactions\n",
            Some(0),
            0.1,
        );
        assert_eq!(t.status, SqlBenchStatus::Skipped);
        assert!(parse_operation("Time to wait: nothing").is_none());
    }

    #[test]
    fn own_options_are_refused_and_the_suite_is_checked() {
        let o: SqlBenchOptions =
            serde_json::from_value(serde_json::json!({"options": ["--password=x"]})).unwrap();
        assert!(o.validate().unwrap_err().to_string().contains("--password"));
        let o: SqlBenchOptions = serde_json::from_value(
            serde_json::json!({"small-table": true, "suite": "/nonexistent", "tests": ["connect"]}),
        )
        .unwrap();
        assert!(o.small_tables && o.hires);
        let e = o.resolve().unwrap_err().to_string();
        assert!(e.contains("scripts/sql-bench"), "{e}");
    }

    #[test]
    fn the_connection_goes_to_arguments_and_environment_never_the_password() {
        let t = Target::parse("mysql://root:pw@127.0.0.1:3307/test").unwrap();
        let c = connection(&t, &["--connect-options=mariadb_ssl=0".into()]).unwrap();
        assert_eq!(
            c.args,
            [
                "--server=mysql",
                "--user=root",
                "--database=test",
                "--host=127.0.0.1",
                "--connect-options=port=3307;mariadb_ssl=0"
            ]
        );
        assert_eq!(c.password.as_deref(), Some("pw"));
        assert!(!c.args.iter().any(|a| a.contains("pw")));
        let t = Target::parse("postgres://postgres@127.0.0.1:5433/test").unwrap();
        let c = connection(&t, &[]).unwrap();
        assert_eq!(c.server, "Pg");
        assert!(c.env.contains(&("PGPORT", "5433".into())));
        assert!(connection(&Target::parse("sqlite::memory:").unwrap(), &[]).is_err());
    }
}
