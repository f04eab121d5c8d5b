//! sysbench's own Lua scripts (Debian's sysbench package, /usr/share/sysbench; scripts/test
//! installs it) run unchanged by dbrig's embedded LuaJIT on MariaDB, PostgreSQL and SQLite,
//! counting as sysbench counts; and a script of dbrig's own (`lua/every_api.lua`) that uses
//! every part of the API, report hooks and RESTART_EVENT on a forced deadlock included.

use std::path::Path;

use crate::{dbrig, error_line, json, ok, text};

const EVERY_API: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/lua/every_api.lua");

/// (read, write, other, transactions) of a `--format json` run.
fn counts(v: &serde_json::Value) -> (u64, u64, u64, u64) {
    let q = &v["queries"];
    (
        q["read"].as_u64().unwrap(),
        q["write"].as_u64().unwrap(),
        q["other"].as_u64().unwrap(),
        v["transactions"].as_u64().unwrap(),
    )
}

fn run(out: &Path, url: &str, script: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run", script, "--target", url, "--time", "0", "--format", "json",
    ];
    args.extend_from_slice(extra);
    json(&ok(dbrig(out, &args)))
}

/// The bundled scripts on one server: exact counts where sysbench's are fixed.
fn bundled_scripts(url: &str, out: &Path) {
    let size = ["--table-size", "100"];
    // sysbench's word order, the command last.
    ok(dbrig(
        out,
        &[
            "oltp_read_write.lua",
            "--target",
            url,
            "--table-size=100",
            "prepare",
        ],
    ));
    let v = run(
        out,
        url,
        "oltp_read_write.lua",
        &[&["--events", "100", "--threads", "1"][..], &size].concat(),
    );
    assert_eq!(counts(&v), (1400, 400, 200, 100), "{v}");
    let statements = v["statements"].to_string();
    assert!(
        statements.contains("SELECT c FROM sbtest1 WHERE id=?"),
        "per-statement latency by text: {statements}"
    );
    let v = run(
        out,
        url,
        "oltp_point_select.lua",
        &[&["--events", "50", "--threads", "2"][..], &size].concat(),
    );
    assert_eq!(counts(&v), (50, 0, 0, 50), "{v}");
    let v = run(
        out,
        url,
        "select_random_ranges.lua",
        &[&["--events", "40", "--threads", "2"][..], &size].concat(),
    );
    assert_eq!(counts(&v), (40, 0, 0, 40), "{v}");
    let v = run(
        out,
        url,
        "oltp_insert.lua",
        &[&["--events", "30", "--threads", "2"][..], &size].concat(),
    );
    assert_eq!(counts(&v), (0, 30, 0, 30), "{v}");
    ok(dbrig(
        out,
        &["cleanup", "oltp_read_write.lua", "--target", url],
    ));

    ok(dbrig(
        out,
        &[
            "prepare",
            "bulk_insert.lua",
            "--target",
            url,
            "--threads",
            "2",
        ],
    ));
    let v = run(
        out,
        url,
        "bulk_insert.lua",
        &["--events", "500", "--threads", "2"],
    );
    assert_eq!(v["transactions"].as_u64(), Some(500), "{v}");
    ok(dbrig(
        out,
        &[
            "cleanup",
            "bulk_insert.lua",
            "--target",
            url,
            "--threads",
            "2",
        ],
    ));
}

#[test]
fn sysbench_scripts_on_mariadb() {
    let db = crate::mysql::TestDb::new("lua");
    let out = tempfile::tempdir().unwrap();
    bundled_scripts(&db.url(), out.path());
}

#[test]
fn sysbench_scripts_on_postgresql() {
    let db = crate::postgres::TestDb::new("lua");
    let out = tempfile::tempdir().unwrap();
    bundled_scripts(&db.url(), out.path());
}

/// oltp_common refuses drivers other than mysql and pgsql (its CREATE TABLE is theirs), as
/// sysbench would; bulk_insert.lua's SQL is SQLite's too.
#[test]
fn sysbench_scripts_on_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", out.path().join("lua.db").display());
    let o = dbrig(
        out.path(),
        &["prepare", "oltp_read_write.lua", "--target", &url],
    );
    let e = error_line(&o);
    assert!(
        e.contains("oltp_common.lua:") && e.contains("Unsupported database driver:sqlite"),
        "{e}"
    );
    ok(dbrig(
        out.path(),
        &["prepare", "bulk_insert.lua", "--target", &url],
    ));
    let v = run(out.path(), &url, "bulk_insert.lua", &["--events", "200"]);
    assert_eq!(v["transactions"].as_u64(), Some(200), "{v}");
    // In a plan: `script = FILE.lua` with the script's options. It runs sysbench's script (the
    // plan ran dbrig's own bulk_insert under that name before issue 30), whose ids start
    // again at 1: the rows of the run above go first, and the plan prepares again.
    ok(dbrig(
        out.path(),
        &["cleanup", "bulk_insert.lua", "--target", &url],
    ));
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"lua\"\ntrials = 1\nclients = [1]\n[run]\nevents = 50\ntime = 0\n\
             [[configuration]]\nname = \"lite\"\ntarget = \"{url}\"\n\
             [[workload]]\nscript = \"bulk_insert.lua\"\n"
        ),
    )
    .unwrap();
    let o = ok(dbrig(out.path(), &["run", &plan.display().to_string()]));
    assert!(
        text(&o).contains("1 trial(s) done, 0 invalid, 0 failed"),
        "{}",
        text(&o)
    );
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let cell = &store.cells(run).unwrap()[0];
    assert_eq!(cell.workload, "bulk_insert.lua", "{cell:?}");
}

#[test]
fn every_api_with_report_hooks_and_a_forced_deadlock() {
    let db = crate::mysql::TestDb::new("luaapi");
    let out = tempfile::tempdir().unwrap();
    let url = db.url();
    let o = ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["list", "--script", EVERY_API])
        .output()
        .unwrap());
    let listed = text(&o);
    for opt in ["--rows", "--flag", "--label", "--names", "--nap"] {
        assert!(listed.contains(opt), "{listed}");
    }
    let o = ok(dbrig(
        out.path(),
        &[
            "prepare",
            EVERY_API,
            "--target",
            &url,
            "--threads",
            "2",
            "--rows",
            "30",
        ],
    ));
    assert!(text(&o).contains("prepared by mysql"), "{}", text(&o));
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            EVERY_API,
            "--target",
            &url,
            "--threads",
            "2",
            "--workers",
            "2",
            "--time",
            "2",
            "--report-interval",
            "1",
            "--rows=30",
            "--label",
            "x",
            "--flag",
            "--names=p,q",
        ],
    ));
    let t = text(&o);
    assert!(
        t.contains("init: version 1.0.20, command run, label x, flag true, names p+q"),
        "{t}"
    );
    // The deadlock: one client's event restarted through before_restart_event.
    assert!(t.contains("restart: errno 1213"), "{t}");
    assert!(
        t.contains("thread_done 0: restarts") && t.contains("thread_done 1: restarts"),
        "{t}"
    );
    let restarts: u32 = t
        .lines()
        .filter_map(|l| l.split("restarts ").nth(1))
        .filter_map(|n| n.trim().parse::<u32>().ok())
        .sum();
    assert_eq!(restarts, 1, "{t}");
    // report_intermediate = sysbench.report_csv: "time,threads,tps,qps,r,w,o,lat,err,reconn".
    assert!(
        t.lines()
            .any(|l| l.starts_with("1,2,") && l.split(',').count() == 10),
        "{t}"
    );
    assert!(t.contains("cumulative: events "), "{t}");
    assert!(
        t.contains("\"tps\":"),
        "report_json from the cumulative hook: {t}"
    );
    assert!(t.contains("done: restarts"), "{t}");
    assert!(t.contains("ignored errors:                      1 "), "{t}");
    ok(dbrig(out.path(), &["cleanup", EVERY_API, "--target", &url]));
}

#[test]
fn script_errors_name_the_script_line_and_hook() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path();
    let bad = dir.join("bad.lua");
    std::fs::write(
        &bad,
        "function event()\n  local x = sysbench.rand.histogram(1, 2)\nend\n",
    )
    .unwrap();
    let boom = dir.join("boom.lua");
    std::fs::write(
        &boom,
        "function thread_init()\n  error(\"boom\")\nend\nfunction event() end\n",
    )
    .unwrap();
    let args = |f: &Path| {
        vec![
            "run".to_owned(),
            f.display().to_string(),
            "--target".into(),
            "mock:".into(),
            "--events".into(),
            "3".into(),
            "--time".into(),
            "0".into(),
        ]
    };
    let o = dbrig(
        dir,
        &args(&bad).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let e = error_line(&o);
    assert!(
        e.contains("bad.lua: in event: ")
            && e.contains("bad.lua:2: not supported: sysbench.rand.histogram"),
        "{e}"
    );
    let o = dbrig(
        dir,
        &args(&boom).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let e = error_line(&o);
    assert!(
        e.contains("boom.lua: in thread_init: ") && e.contains("boom.lua:2: boom"),
        "{e}"
    );
    // An option the script does not declare is refused by name.
    let o = dbrig(
        dir,
        &[
            "run",
            "oltp_point_select.lua",
            "--target",
            "mock:",
            "--script-option",
            "nope=1",
        ],
    );
    assert!(
        error_line(&o).contains("declares no option --nope"),
        "{}",
        text(&o)
    );
}

const BINDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/lua/binds.lua");

/// A prepared statement's values, row counts and errors are the same through LuaJIT's FFI
/// (one client, which owns its thread on MariaDB) as through the mlua method it replaces.
#[test]
fn prepared_statements_through_the_ffi_as_through_mlua() {
    let db = crate::mysql::TestDb::new("luabinds");
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            BINDS,
            "--target",
            &db.url(),
            "--threads",
            "1",
            "--events",
            "1",
            "--time",
            "0",
            "--format",
            "json",
        ],
    ));
    let t = text(&o);
    assert!(t.contains("binds: 8 of 8 pairs the same"), "{t}");
    assert!(t.contains("binds: row 1: 7|2.5|abcde"), "{t}");
    // -7.9 into BIGINT, 1/3 into DOUBLE, a character across VARCHAR(5)'s cut left out.
    assert!(
        t.lines()
            .any(|l| l.starts_with("binds: row 7: -7|0.333") && l.ends_with("|abcd")),
        "{t}"
    );
    assert!(t.contains("binds: counted 6 and 6"), "{t}");
    assert!(
        t.contains("binds: duplicate: false ")
            && t.contains("binds.lua:42: SQL error, errno = 1062"),
        "{t}"
    );
    assert!(t.contains("binds: mlua duplicate errno 1062"), "{t}");
    // 16 inserts; 2 prepared selects and 16 text ones; the failed inserts are not counted.
    assert_eq!(counts(&json(&o)), (18, 16, 0, 1), "{t}");
}

const TEXTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/lua/texts.lua");

/// A text query's rows, NULLs, counts and errors are the same through LuaJIT's FFI (one
/// client, which owns its thread: its rows read from the connection's buffer) as through the
/// mlua methods it replaces, and a result read in part keeps its rows across later queries.
fn text_queries_through_the_ffi_as_through_mlua(url: &str) {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            TEXTS,
            "--target",
            url,
            "--threads",
            "1",
            "--events",
            "1",
            "--time",
            "0",
            "--format",
            "json",
        ],
    ));
    let t = text(&o);
    assert!(t.contains("texts: 6 of 6 results the same"), "{t}");
    assert!(t.contains("texts: 6 of 6 first rows the same"), "{t}");
    assert!(
        t.contains(
            "texts: all rows n=4 f=3 [1],[one],nil [2],[],[x] [3],nil,nil [4],[four],[élan]"
        ),
        "{t}"
    );
    assert!(t.contains("texts: first row 3:[1],[one],nil"), "{t}");
    assert!(t.contains("texts: no row 1:nil"), "{t}");
    assert!(
        t.contains("texts: held 1 then [one]; 2:[mid],[4]; n=2 f=1 [2] [1]; rest 2[] 3nil 4[four]"),
        "{t}"
    );
    assert!(
        t.contains("texts.lua:114: not supported: sql_result.nope"),
        "{t}"
    );
    assert!(t.contains("texts: tostring <sql_result>"), "{t}");
    // A failed query: sysbench's message at the script's line (the calls' lines in texts.lua),
    // from the FFI path as from the mlua one.
    for (way, line) in [("query", 118), ("row", 120)] {
        let said = t
            .lines()
            .find(|l| l.starts_with(&format!("texts: {way} error ")))
            .unwrap_or_else(|| panic!("{way}: {t}"));
        assert!(
            said.contains(&format!("texts.lua:{line}: SQL error, errno = ")),
            "{said}"
        );
    }
    assert!(t.contains("texts: mlua error error "), "{t}");
    assert!(t.contains("texts: not utf-8 the same: true"), "{t}");
}

#[test]
fn text_queries_through_the_ffi_as_through_mlua_on_mariadb() {
    let db = crate::mysql::TestDb::new("luatexts");
    text_queries_through_the_ffi_as_through_mlua(&db.url());
}

#[test]
fn text_queries_through_the_ffi_as_through_mlua_on_postgresql() {
    let db = crate::postgres::TestDb::new("luatexts");
    text_queries_through_the_ffi_as_through_mlua(&db.url());
}

const API_GAPS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/lua/api_gaps.lua");

/// A run of `lua/api_gaps.lua` with two clients, 20 events, the text report.
fn gaps_run(out: &Path, url: &str, extra: &[&str]) -> std::process::Output {
    // A second, not a number of events: each client must run its first event (the forced
    // error), and a client whose thread starts late on a busy machine could find a small event
    // budget spent by the other (CI saw one client run all 20 events in 2 ms).
    let mut args = vec![
        "run",
        API_GAPS,
        "--target",
        url,
        "--threads",
        "2",
        "--time",
        "1",
    ];
    args.extend_from_slice(extra);
    dbrig(out, &args)
}

/// prewarm, fetch_row() on a prepared statement's result, sql_error_ignorable, the ignore
/// list (`--mysql-ignore-errors` on MariaDB, `--retry-codes` on PostgreSQL, which sysbench's
/// pgsql driver has no option for), a bulk insert without COMMITs of its own, and a plan
/// that runs the script's prepare once.
fn api_gaps(url: &str, out: &Path, mysql: bool) {
    ok(dbrig(out, &["cleanup", API_GAPS, "--target", url]));
    let t = text(&ok(dbrig(out, &["prepare", API_GAPS, "--target", url])));
    assert!(t.contains("rows after rollback: 0"), "{t}");
    assert!(t.contains("prepared lua_gaps_t"), "{t}");
    // sysbench's word order, the command last.
    let t = text(&ok(dbrig(out, &[API_GAPS, "--target", url, "prewarm"])));
    assert!(t.contains("prewarmed rows: 30"), "{t}");

    // The hook downgrades each client's forced error: the event restarts, counted as an
    // ignored error; each prepared SELECT's row is checked by the script.
    let t = text(&ok(gaps_run(out, url, &[])));
    assert!(t.contains("ignored errors:                      2 "), "{t}");
    assert!(
        t.contains("thread_done 0: hook asked 1") && t.contains("thread_done 1: hook asked 1"),
        "{t}"
    );
    let failing = if mysql {
        "query INSERT INTO lua_gaps_t"
    } else {
        "query SELECT 1/0"
    };
    assert!(t.contains(failing), "errdesc.query: {t}");
    // The hook says no: the error stops the run.
    let e = error_line(&gaps_run(out, url, &["--hook=off"]));
    let code = if mysql {
        "errno = 1062"
    } else {
        "state = '22012'"
    };
    assert!(e.contains("api_gaps.lua") && e.contains(code), "{e}");
    // The ignore list makes it ignorable without the hook (which sysbench then never asks).
    let list = if mysql {
        "--mysql-ignore-errors=1062"
    } else {
        "--retry-codes=22012"
    };
    let t = text(&ok(gaps_run(out, url, &["--hook=off", list])));
    assert!(t.contains("ignored errors:                      2 "), "{t}");
    assert!(t.contains("thread_done 0: hook asked 0"), "{t}");
    let t = text(&ok(gaps_run(
        out,
        url,
        &["--hook=off", "--mysql-ignore-errors=all"],
    )));
    assert!(t.contains("ignored errors:                      2 "), "{t}");

    // A plan runs the script's prepare where it has not run with these options, once.
    ok(dbrig(out, &["cleanup", API_GAPS, "--target", url]));
    let plan = out.join("gaps.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"gaps\"\ntrials = 1\nclients = [1]\n[run]\nevents = 10\ntime = 0\n\
             [[configuration]]\nname = \"c\"\ntarget = \"{url}\"\n\
             [[workload]]\nscript = \"{API_GAPS}\"\noptions = {{ fail = false }}\n"
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let t = text(&ok(dbrig(out, &["run", &plan])));
    assert!(t.contains("ran api_gaps.lua's prepare in"), "{t}");
    assert!(t.contains("1 trial(s) done, 0 invalid, 0 failed"), "{t}");
    let t = text(&ok(dbrig(out, &["run", &plan])));
    assert!(!t.contains("api_gaps.lua's prepare"), "prepared once: {t}");
    assert!(t.contains("1 trial(s) done, 0 invalid, 0 failed"), "{t}");
    let t = text(&ok(dbrig(out, &["cleanup", API_GAPS, "--target", url])));
    assert!(t.contains("dropped lua_gaps_t"), "{t}");
}

#[test]
fn api_gaps_on_mariadb() {
    let db = crate::mysql::TestDb::new("luagaps");
    let out = tempfile::tempdir().unwrap();
    api_gaps(&db.url(), out.path(), true);
}

#[test]
fn api_gaps_on_postgresql() {
    let db = crate::postgres::TestDb::new("luagaps");
    let out = tempfile::tempdir().unwrap();
    api_gaps(&db.url(), out.path(), false);
}

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/lua/suite.lua");

/// sysbench's summary as (read, write, other, transactions, ignored errors).
fn sysbench_counts(stdout: &str) -> (u64, u64, u64, u64, u64) {
    let figure = |label: &str| -> u64 {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(label))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {label} in sysbench's output:\n{stdout}"))
    };
    (
        figure("read:"),
        figure("write:"),
        figure("other:"),
        figure("transactions:"),
        figure("ignored errors:"),
    )
}

/// A suite written as third-party ones are (Percona's sysbench-tpcc the model) runs unchanged:
/// `require("ffi")` with `ffi.cdef` of `usleep` and `sb_counter_inc`; a parallel prepare whose
/// threads wait for each other's tables (`ffi.C.usleep`) while thread 0 spends 2 s in
/// `os.execute("sleep 2")` (each thread its own OS thread, as in sysbench: the other's table
/// is made meanwhile); its own `check` command in both word orders; and intentional rollbacks
/// (`sb_counter_inc(tid, SB_CNT_ERROR)`) counted as sysbench counts them, the run's figures
/// compared with sysbench's own run of the script.
#[test]
fn a_third_party_style_suite_runs_unchanged_as_sysbench_runs_it() {
    let db = crate::mysql::TestDb::new("luasuite");
    let out = tempfile::tempdir().unwrap();
    let url = db.url();
    let began = std::time::Instant::now();
    let o = ok(dbrig(
        out.path(),
        &[
            "prepare",
            SUITE,
            "--target",
            &url,
            "--threads",
            "2",
            "--sleeper",
            "2",
        ],
    ));
    assert!(began.elapsed().as_secs_f64() >= 2.0, "{}", text(&o));
    let o = ok(dbrig(
        out.path(),
        &["check", SUITE, "--target", &url, "--threads", "2"],
    ));
    let t = text(&o);
    assert!(
        t.contains("check: suite_acct1 consistent") && t.contains("check: suite_acct2 consistent"),
        "{t}"
    );
    // sysbench's word order, the command last.
    let o = ok(dbrig(
        out.path(),
        &[SUITE, "--target", &url, "--threads=2", "check"],
    ));
    assert!(
        text(&o).contains("check: suite_acct2 consistent"),
        "{}",
        text(&o)
    );

    let v = run(
        out.path(),
        &url,
        SUITE,
        &["--events", "40", "--threads", "1"],
    );
    let (r, w, other, tx) = counts(&v);
    let ignored = v["ignored_errors"].as_u64().unwrap();
    // Every 4th event rolls back on purpose: 10 of 40.
    assert_eq!(ignored, 10, "{v}");
    let s = std::process::Command::new("sysbench")
        .args([
            SUITE,
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            "--mysql-user=root",
            &format!("--mysql-db={}", db.0),
            "--events=40",
            "--time=0",
            "--threads=1",
            "run",
        ])
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    let stdout = String::from_utf8_lossy(&s.stdout).into_owned();
    assert!(
        s.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&s.stderr)
    );
    assert_eq!(
        (r, w, other, tx, ignored),
        sysbench_counts(&stdout),
        "dbrig's (read, write, other, transactions, ignored errors), then sysbench's"
    );
    ok(dbrig(
        out.path(),
        &["cleanup", SUITE, "--target", &url, "--threads", "2"],
    ));
}

/// A script's `os.exit()` ends no dbrig (it ended it with exit 3, no message, the run left
/// `abandoned`): the error names the script and the line, a `pcall` retry loop around it
/// (as TPC-C suites retry a transaction) does not keep it going, the trial is stored as
/// failed and the run as failed; in a command, the command fails with the line.
#[test]
fn os_exit_in_a_script_fails_the_trial_with_its_line() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path();
    let url = format!("sqlite:{}", dir.join("exit.db").display());
    let script = dir.join("exits.lua");
    std::fs::write(
        &script,
        "function prepare()\n  os.exit()\nend\n\
         function event()\n  while not pcall(function()\n    os.exit(3)\n  end) do end\nend\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let o = dbrig(
        dir,
        &[
            "run", &script, "--target", &url, "--events", "5", "--time", "0",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let e = error_line(&o);
    assert!(
        e.contains("exits.lua: in event: ") && e.contains("exits.lua:6: os.exit(3) called"),
        "{e}"
    );
    let store = dbrig_store::Store::open(&dir.join("results.db")).unwrap();
    let id = store.latest_run_id().unwrap().expect("the run is stored");
    let stored = store.run(id).unwrap();
    assert_eq!(stored.status, dbrig_store::RunStatus::Failed, "{stored:?}");
    let cell = store.cells(id).unwrap().remove(0);
    let trial = store.trials(cell.id).unwrap().remove(0);
    assert_eq!(trial.status, dbrig_store::TrialStatus::Failed);
    assert!(
        trial
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("exits.lua:6: os.exit(3) called"),
        "{:?}",
        trial.reason
    );
    let o = dbrig(dir, &["prepare", &script, "--target", &url]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let e = error_line(&o);
    assert!(
        e.contains("in prepare") && e.contains("exits.lua:2: os.exit() called"),
        "{e}"
    );
}

/// Two clients of a Lua script on SQLite that write in transactions: a busy error restarts
/// the event after a ROLLBACK, so the next BEGIN starts a transaction (it failed "cannot
/// start a transaction within a transaction" and the run died).
#[test]
fn lua_transactions_on_sqlite_with_two_clients_roll_back_before_retrying() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path();
    let url = format!("sqlite:{}", dir.join("busy.db").display());
    let script = dir.join("writers.lua");
    std::fs::write(
        &script,
        r#"
function prepare()
  local con = sysbench.sql.driver():connect()
  con:query("CREATE TABLE writers (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
  for i = 1, 10 do con:query(string.format("INSERT INTO writers VALUES (%d, 0)", i)) end
end
function thread_init()
  con = sysbench.sql.driver():connect()
end
-- A pause before a restart: on a busy machine the other client may hold the lock for a
-- while, and dbrig gives up on an event after 1 000 restarts.
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int);")
function sysbench.hooks.before_restart_event()
  ffi.C.usleep(2000)
end
function event()
  con:query("BEGIN")
  local n = con:query_row("SELECT n FROM writers WHERE id = 1")
  con:query(string.format("UPDATE writers SET n = %d WHERE id = 1", n + 1))
  con:query(string.format("UPDATE writers SET n = n + 1 WHERE id = %d",
    sysbench.rand.uniform(2, 10)))
  con:query("COMMIT")
end
"#,
    )
    .unwrap();
    let script = script.display().to_string();
    ok(dbrig(dir, &["prepare", &script, "--target", &url]));
    let v = run(
        dir,
        &url,
        &script,
        &["--events", "400", "--threads", "2", "--workers", "2"],
    );
    assert_eq!(v["transactions"].as_u64(), Some(400), "{v}");
    // The two clients met the lock: events restarted (after a ROLLBACK each).
    assert!(v["ignored_errors"].as_u64().unwrap() > 0, "{v}");
    // Each committed event added one to row 1.
    let o = std::process::Command::new("sqlite3")
        .arg(dir.join("busy.db"))
        .arg("SELECT n FROM writers WHERE id = 1")
        .output()
        .expect("the sqlite3 shell");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "400", "{v}");
}
