//! `dbrig perfrun`: two MariaDB databases on the machine's server, configured differently (the
//! same table with and without an index on `k`), a query folder written here, the filter
//! given at collection and at report time, differing results, a query failing on one side,
//! bad filters; and one MariaDB ↔ PostgreSQL run (EXPLAIN counters). A perfrun is a plan of
//! two configurations (`a`, `b`): each side's trial stores every query cold and warm.

use std::path::Path;

use dbrig_core::results::perfrun::Execution;
use dbrig_report::perfrun::{PerfRun, Side, Temperature};
use dbrig_store::{RunId, RunKind, Store, TrialStatus};

use crate::mysql::sql;
use crate::postgres::psql;
use crate::{dbrig, ok, text};

/// Two databases `dbrig_perf_<x>_a` / `_b`, dropped at the end.
struct Pair(String);

impl Pair {
    fn new(x: &str) -> Pair {
        let p = format!("dbrig_perf_{x}_{}", std::process::id());
        sql(&format!(
            "DROP DATABASE IF EXISTS {p}_a; DROP DATABASE IF EXISTS {p}_b;
             CREATE DATABASE {p}_a; CREATE DATABASE {p}_b;
             CREATE TABLE {p}_a.t (id INT PRIMARY KEY, k INT, v VARCHAR(20), KEY k (k));
             CREATE TABLE {p}_b.t (id INT PRIMARY KEY, k INT, v VARCHAR(20));
             INSERT INTO {p}_a.t SELECT seq, seq % 100, CONCAT('v', seq) FROM {p}_a.seq_1_to_2000;
             INSERT INTO {p}_b.t SELECT * FROM {p}_a.t;
             CREATE TABLE {p}_a.d (x INT); INSERT INTO {p}_a.d VALUES (1), (2), (3);
             CREATE TABLE {p}_b.d (x INT); INSERT INTO {p}_b.d VALUES (1), (2);
             CREATE TABLE {p}_a.only_a (x INT); INSERT INTO {p}_a.only_a VALUES (1);"
        ));
        Pair(p)
    }

    fn a(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}_a", self.0)
    }

    fn b(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}_b", self.0)
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        sql(&format!(
            "DROP DATABASE IF EXISTS {0}_a; DROP DATABASE IF EXISTS {0}_b",
            self.0
        ));
    }
}

const INDEXED: &str = "SELECT id, v FROM t WHERE k = 7";

fn write_queries(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (file, q) in [
        ("q1_indexed.sql", format!("{INDEXED};\n")),
        ("q2_count.sql", "SELECT COUNT(*) FROM t".into()),
        ("q3_differs.sql", "SELECT x FROM d ORDER BY x".into()),
        ("q4_only_a.sql", "SELECT x FROM only_a".into()),
    ] {
        std::fs::write(dir.join(file), q).unwrap();
    }
}

fn load_latest(out: &Path) -> PerfRun {
    let store = Store::open(&out.join("results.db")).unwrap();
    let id: RunId = store
        .runs()
        .unwrap()
        .into_iter()
        .filter(|r| r.kind == RunKind::Perfrun)
        .map(|r| r.id)
        .max()
        .expect("a perfrun run is stored");
    PerfRun::load(&store, id).unwrap()
}

/// One side's execution of a query at a temperature.
fn execution<'a>(run: &'a PerfRun, file: &str, side: Side, t: Temperature) -> &'a Execution {
    let s = match side {
        Side::A => &run.a,
        Side::B => &run.b,
    };
    s.result
        .queries
        .iter()
        .find(|q| q.file == file)
        .unwrap_or_else(|| panic!("{file} not stored"))
        .execution(t)
}

fn counter(run: &PerfRun, file: &str, side: Side, t: Temperature, name: &str) -> f64 {
    execution(run, file, side, t)
        .counters
        .get(name)
        .copied()
        .unwrap_or(0.0)
}

fn files(run: &PerfRun) -> Vec<&str> {
    run.a
        .result
        .queries
        .iter()
        .map(|q| q.file.as_str())
        .collect()
}

#[test]
fn perfrun_between_two_mariadb_databases() {
    let dbs = Pair::new("two");
    let out = tempfile::tempdir().unwrap();
    let queries = out.path().join("queries");
    write_queries(&queries);
    let o = ok(dbrig(
        out.path(),
        &[
            "perfrun",
            "--a",
            &dbs.a(),
            "--b",
            &dbs.b(),
            "--queries",
            queries.to_str().unwrap(),
        ],
    ));
    let t = text(&o);
    println!("{t}");
    // The index shows in the handler counters, only the ones that differ are printed.
    assert!(
        t.contains("Query: SELECT id, v FROM t WHERE k = 7 (q1_indexed.sql)"),
        "{t}"
    );
    assert!(
        t.contains("(a)") && t.contains("(b)"),
        "same versions are marked: {t}"
    );
    assert!(
        t.lines().any(|l| l.starts_with("Handler_read_rnd_next")),
        "{t}"
    );
    assert!(
        t.contains("results differ: not compared (a: 3 rows, b: 2 rows)"),
        "{t}"
    );
    assert!(t.contains("error on b:") && t.contains("only_a"), "{t}");

    // What was stored: each side's trial with every query cold and warm.
    let run = load_latest(out.path());
    assert_eq!(run.name, "queries");
    assert_eq!(
        files(&run),
        [
            "q1_indexed.sql",
            "q2_count.sql",
            "q3_differs.sql",
            "q4_only_a.sql"
        ]
    );
    assert_eq!(run.b.result.queries.len(), 4);
    for temp in Temperature::ALL {
        let key_a = counter(&run, "q1_indexed.sql", Side::A, temp, "Handler_read_key");
        let scan_a = counter(
            &run,
            "q1_indexed.sql",
            Side::A,
            temp,
            "Handler_read_rnd_next",
        );
        let scan_b = counter(
            &run,
            "q1_indexed.sql",
            Side::B,
            temp,
            "Handler_read_rnd_next",
        );
        assert!(key_a >= 1.0, "{temp}: {key_a}");
        // The SHOWs' own table scans are subtracted: the indexed side scans nothing.
        assert_eq!(scan_a, 0.0, "{temp}");
        assert!(scan_b >= 2000.0, "{temp}: {scan_b}");
    }
    let a_cold = execution(&run, "q1_indexed.sql", Side::A, Temperature::Cold);
    assert_eq!(a_cold.rows, Some(20));
    assert!(a_cold.time_us.is_some() && a_cold.checksum_unordered.is_some());
    for side in [Side::A, Side::B] {
        for t in Temperature::ALL {
            let e = execution(&run, "q4_only_a.sql", side, t);
            assert_eq!(e.error.is_some(), side == Side::B, "{side:?} {t}");
        }
    }
    // A query failing on a side is part of that side's done trial, not a failed run.
    let store = Store::open(&out.path().join("results.db")).unwrap();
    let statuses: Vec<(String, TrialStatus)> = store
        .cells(run.run)
        .unwrap()
        .iter()
        .map(|c| {
            (
                c.configuration.clone(),
                store.trials(c.id).unwrap()[0].status,
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("a".to_owned(), TrialStatus::Done),
            ("b".to_owned(), TrialStatus::Done)
        ]
    );

    // Report-time filter: only q1 warm matches (pairs with an error always show).
    let o = ok(dbrig(
        out.path(),
        &[
            "perfrun",
            "report",
            "latest",
            "--filter",
            r#"handler_read_rnd_next_delta > 1000 and rows_a > 5 and temperature == "warm""#,
        ],
    ));
    let r = text(&o);
    println!("{r}");
    assert!(r.contains("(3 of 8 query/temperature pairs match)"), "{r}");
    assert_eq!(r.matches("(q1_indexed.sql)").count(), 1, "{r}");
    assert!(
        r.contains("Cache: warm") && !r.contains("q2_count") && !r.contains("q3_differs"),
        "{r}"
    );
    assert_eq!(r.matches("(q4_only_a.sql)").count(), 2, "{r}");
}

#[test]
fn perfrun_filter_at_collection() {
    let dbs = Pair::new("coll");
    let out = tempfile::tempdir().unwrap();
    let queries = out.path().join("q");
    write_queries(&queries);
    let o = ok(dbrig(
        out.path(),
        &[
            "perfrun",
            "--a",
            &dbs.a(),
            "--b",
            &dbs.b(),
            "--queries",
            queries.to_str().unwrap(),
            "--filter",
            "(Handler_read_rnd_next_b > 1000 or execution_time_a > 100) and temperature == 'warm'",
        ],
    ));
    let t = text(&o);
    // The filter given at collection is what the report shows: q1 warm, and the failing
    // query's pairs (a pair where a side failed always shows).
    assert!(t.contains("(3 of 8 query/temperature pairs match)"), "{t}");
    assert!(
        !t.contains("(q2_count.sql)") && !t.contains("(q3_differs.sql)"),
        "{t}"
    );
    // Every execution is stored, so a report can widen the filter later.
    let run = load_latest(out.path());
    assert_eq!(files(&run).len(), 4);
    assert!(
        run.filter
            .as_deref()
            .unwrap()
            .contains("Handler_read_rnd_next_b"),
        "{:?}",
        run.filter
    );
    let r = text(&ok(dbrig(out.path(), &["perfrun", "report"])));
    assert!(r.contains("(3 of 8 query/temperature pairs match)"), "{r}");
    let all = text(&ok(dbrig(
        out.path(),
        &["perfrun", "report", "--filter", ""],
    )));
    assert!(
        all.contains("(q2_count.sql)") && all.contains("(q3_differs.sql)"),
        "{all}"
    );
    // And as JSON.
    let j = ok(dbrig(
        out.path(),
        &["perfrun", "report", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert!(v.to_string().contains("q1_indexed.sql"), "{v}");
}

#[test]
fn perfrun_bad_filters() {
    let dbs = Pair::new("bad");
    let out = tempfile::tempdir().unwrap();
    let queries = out.path().join("q");
    write_queries(&queries);
    let run = |filter: &str| {
        dbrig(
            out.path(),
            &[
                "perfrun",
                "--a",
                &dbs.a(),
                "--b",
                &dbs.b(),
                "--queries",
                queries.to_str().unwrap(),
                "--filter",
                filter,
            ],
        )
    };
    // Does not parse: the position is shown with a caret.
    let o = run(r#"(execution_time_a > 0.1 or ) and temperature == "warm""#);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        e.contains("invalid --filter: filter does not parse at column 28: unexpected )"),
        "{e}"
    );
    assert!(
        e.contains("\n  (execution_time_a > 0.1 or ) and temperature == \"warm\"\n                             ^"),
        "{e}"
    );
    // An unknown counter: named, with the close names.
    let o = run("Handler_reed_rnd_next_a > 0");
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        e.contains("unknown name Handler_reed_rnd_next_a")
            && e.contains("did you mean Handler_read_rnd_next_a"),
        "{e}"
    );
    // Nothing was stored by the refused runs; a stored run refuses a bad report filter too.
    assert!(!out.path().join("results.db").exists());
    ok(run("rows_a >= 0"));
    let o = dbrig(
        out.path(),
        &["perfrun", "report", "--filter", "Rows_red_b > 1"],
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("did you mean Rows_read_b"),
        "{}",
        text(&o)
    );
    let o = dbrig(
        out.path(),
        &["perfrun", "report", "--filter", "temperature > 1"],
    );
    assert!(!o.status.success(), "{}", text(&o));
}

#[test]
fn perfrun_mariadb_against_postgres() {
    let my = format!("dbrig_perf_pg_{}", std::process::id());
    sql(&format!(
        "DROP DATABASE IF EXISTS {my}; CREATE DATABASE {my};
         CREATE TABLE {my}.t (id INT PRIMARY KEY, k INT, v VARCHAR(20), KEY k (k));
         INSERT INTO {my}.t SELECT seq, seq % 100, CONCAT('v', seq) FROM {my}.seq_1_to_2000;"
    ));
    let pg = &my;
    psql(&format!("DROP DATABASE IF EXISTS {pg} WITH (FORCE)"));
    psql(&format!("CREATE DATABASE {pg}"));
    let pg_sql = |s: &str| {
        let o = std::process::Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                pg,
                "-At",
                "-c",
                s,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    pg_sql(
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(20));
         INSERT INTO t SELECT g, g % 100, 'v' || g FROM generate_series(1, 2000) g;
         ANALYZE t;",
    );
    let out = tempfile::tempdir().unwrap();
    let queries = out.path().join("q");
    std::fs::create_dir_all(&queries).unwrap();
    std::fs::write(queries.join("q1.sql"), INDEXED).unwrap();
    std::fs::write(queries.join("q2.sql"), "SELECT COUNT(*) FROM t").unwrap();
    let o = dbrig(
        out.path(),
        &[
            "perfrun",
            "--a",
            &format!("mysql://root@127.0.0.1:3306/{my}"),
            "--b",
            &format!("postgres://postgres@127.0.0.1:5432/{pg}"),
            "--queries",
            queries.to_str().unwrap(),
        ],
    );
    sql(&format!("DROP DATABASE IF EXISTS {my}"));
    psql(&format!("DROP DATABASE IF EXISTS {pg} WITH (FORCE)"));
    let t = text(&ok(o));
    println!("{t}");
    assert!(!t.contains("results differ"), "{t}");
    let run = load_latest(out.path());
    assert_eq!(run.b.result.server.dialect, "postgres");
    assert!(
        run.b.result.server.version.contains('.'),
        "{:?}",
        run.b.result.server
    );
    // Seq scan of the whole table on PostgreSQL: buffers were touched, rows estimated.
    let hit = counter(
        &run,
        "q1.sql",
        Side::B,
        Temperature::Warm,
        "Shared_Hit_Blocks",
    );
    let read = counter(
        &run,
        "q1.sql",
        Side::B,
        Temperature::Warm,
        "Shared_Read_Blocks",
    );
    assert!(hit + read >= 1.0, "{t}");
    assert!(counter(&run, "q1.sql", Side::B, Temperature::Cold, "Plan_Rows") >= 1.0);
    // Counters one side does not have print as "-".
    assert!(
        t.lines()
            .any(|l| l.starts_with("Shared_Hit_Blocks") && l.contains(" - ")),
        "{t}"
    );
    // A PostgreSQL counter in a filter at report time.
    let r = text(&ok(dbrig(
        out.path(),
        &[
            "perfrun",
            "report",
            "--filter",
            "shared_hit_blocks_b >= 0 and temperature == 'cold'",
        ],
    )));
    assert!(r.contains("(2 of 4 query/temperature pairs match)"), "{r}");
}

/// The sides from a plan: A a managed PostgreSQL that preloads pg_stat_statements (started
/// by perfrun, stopped at the end), B the machine's PostgreSQL, which does not. A gets the
/// extension's per-statement counters of the timed execution itself; for B that is said once.
#[test]
fn perfrun_from_plan_configurations_with_pg_stat_statements() {
    let pg = format!("dbrig_perf_plan_{}", std::process::id());
    psql(&format!("DROP DATABASE IF EXISTS {pg} WITH (FORCE)"));
    psql(&format!("CREATE DATABASE {pg}"));
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "perfrun-sides"
clients = [1]
[[server]]
name = "pgss"
engine = "postgres"
params = ["shared_preload_libraries=pg_stat_statements", "shared_buffers=32MB"]
[[configuration]]
name = "managed"
server = "pgss"
[[configuration]]
name = "machine"
target = "postgres://postgres@127.0.0.1:5432/${PG_DB}"
[[workload]]
name = "oltp_point_select"
"#,
    )
    .unwrap();
    let queries = out.path().join("q");
    std::fs::create_dir_all(&queries).unwrap();
    std::fs::write(
        queries.join("q1.sql"),
        "SELECT count(*) FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid",
    )
    .unwrap();
    let o = dbrig(
        out.path(),
        &[
            "perfrun",
            "--plan",
            plan.to_str().unwrap(),
            "--define",
            &format!("PG_DB={pg}"),
            "--a",
            "managed",
            "--b",
            "machine",
            "--queries",
            queries.to_str().unwrap(),
        ],
    );
    psql(&format!("DROP DATABASE IF EXISTS {pg} WITH (FORCE)"));
    let t = text(&ok(o));
    // Said once, for the side without the extension.
    assert_eq!(
        t.matches("pg_stat_statements is not loaded").count(),
        1,
        "{t}"
    );
    assert!(t.contains("pg_stat_statements is not loaded"), "{t}");
    let run = load_latest(out.path());
    let (a, b) = (&run.a.result.server, &run.b.result.server);
    assert!(
        a.counters.iter().any(|c| c == "pgss_shared_blks_hit"),
        "{:?}",
        a.counters
    );
    assert!(
        !b.counters.iter().any(|c| c.starts_with("pgss_")),
        "{:?}",
        b.counters
    );
    for temp in [Temperature::Cold, Temperature::Warm] {
        // Exactly the timed execution: one call, its rows, buffers touched.
        assert_eq!(
            counter(&run, "q1.sql", Side::A, temp, "pgss_calls"),
            1.0,
            "{t}"
        );
        assert_eq!(
            counter(&run, "q1.sql", Side::A, temp, "pgss_rows"),
            1.0,
            "{t}"
        );
        let blocks = counter(&run, "q1.sql", Side::A, temp, "pgss_shared_blks_hit")
            + counter(&run, "q1.sql", Side::A, temp, "pgss_shared_blks_read");
        assert!(blocks >= 1.0, "{t}");
        assert_eq!(counter(&run, "q1.sql", Side::B, temp, "pgss_calls"), 0.0);
    }
    // The managed server was stopped when perfrun ended: its port no longer answers.
    let a_target = &run.a.result.server.target;
    let port = a_target
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("{a_target}"));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "{a_target} still answers"
    );
    // In a filter, like any counter.
    let r = text(&ok(dbrig(
        out.path(),
        &["perfrun", "report", "--filter", "pgss_calls_a == 1"],
    )));
    assert!(r.contains("(2 of 2 query/temperature pairs match)"), "{r}");
}

/// TPC-H's 22 queries with validation parameters, MariaDB against SQLite: each side runs its
/// own dialect's text; Q15's view is created and dropped around the timed SELECT.
#[test]
fn perfrun_tpch_query_set_mariadb_against_sqlite() {
    let db = crate::mysql::TestDb::new(&format!("perf_tpch_{}", std::process::id()));
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("tpch.sqlite").display());
    for target in [db.url(), lite.clone()] {
        ok(dbrig(
            out.path(),
            &["tpch", "load", "--sf", "0.01", "--target", &target],
        ));
    }
    let o = dbrig(
        out.path(),
        &["perfrun", "--tpch", "--a", &db.url(), "--b", &lite],
    );
    let t = text(&ok(o));
    let run = load_latest(out.path());
    let names = files(&run);
    assert_eq!(names.len(), 22, "{t}");
    assert_eq!((names[0], names[14]), ("Q01", "Q15"));
    for side in [&run.a, &run.b] {
        for q in &side.result.queries {
            for e in [&q.cold, &q.warm] {
                assert!(
                    e.error.is_none(),
                    "{} {}: {:?}",
                    q.file,
                    side.configuration,
                    e.error
                );
                assert!(e.time_us.is_some());
            }
        }
    }
    // The results are compared by value as the TPC-H checker compares answers (DECIMAL
    // text against SQLite's floats): every query/temperature pair is compared.
    let differ: Vec<&str> = t.lines().filter(|l| l.contains("results differ")).collect();
    assert!(differ.is_empty(), "{differ:#?}");
    assert_eq!(
        t.lines().filter(|l| l.starts_with("Query: ")).count(),
        44,
        "{t}"
    );
    // Q1 returns its 4 groups on both sides; the view of Q15 is gone afterwards.
    for side in [Side::A, Side::B] {
        for t in Temperature::ALL {
            assert_eq!(
                execution(&run, "Q01", side, t).rows,
                Some(4),
                "{side:?} {t}"
            );
        }
    }
    let views = crate::mysql::sql(&format!(
        "SELECT count(*) FROM information_schema.views WHERE table_schema = '{}'",
        db.0
    ));
    assert_eq!(views.trim(), "0");
    // Without TPC-H data on a side: refused before anything is stored.
    let empty = format!("sqlite:{}", out.path().join("empty.sqlite").display());
    let o = dbrig(
        out.path(),
        &["perfrun", "--tpch", "--a", &lite, "--b", &empty],
    );
    let e = crate::error_line(&o);
    assert!(
        e.contains("configuration b") && e.contains("dbrig tpch load"),
        "{e}"
    );
    assert_eq!(
        Store::open(&out.path().join("results.db"))
            .unwrap()
            .runs()
            .unwrap()
            .iter()
            .filter(|r| r.kind == dbrig_store::RunKind::Perfrun)
            .count(),
        1,
        "refused before anything was stored (only the first perfrun is there)"
    );
}

/// A side on which every query failed measured nothing: `dbrig perfrun` stores the run as
/// failed and exits non-zero with one line naming the side and the first error (it exited 0),
/// while the report still shows each query's error there.
#[test]
fn perfrun_fails_when_every_query_failed_on_one_side() {
    let out = tempfile::tempdir().unwrap();
    // A has sbtest1 and sbtest2, B sbtest1 only; the queries read sbtest2.
    let a = format!("sqlite:{}", out.path().join("a.sqlite").display());
    let b = format!("sqlite:{}", out.path().join("b.sqlite").display());
    for (target, tables) in [(&a, "2"), (&b, "1")] {
        ok(dbrig(
            out.path(),
            &[
                "prepare",
                "oltp_point_select",
                "--target",
                target,
                "--table-size",
                "10",
                "--tables",
                tables,
            ],
        ));
    }
    let queries = out.path().join("q");
    std::fs::create_dir_all(&queries).unwrap();
    std::fs::write(queries.join("q1.sql"), "SELECT id FROM sbtest2").unwrap();
    std::fs::write(queries.join("q2.sql"), "SELECT count(*) FROM sbtest2").unwrap();
    let o = dbrig(
        out.path(),
        &[
            "perfrun",
            "--a",
            &a,
            "--b",
            &b,
            "--queries",
            queries.to_str().unwrap(),
        ],
    );
    let e = crate::error_line(&o);
    assert!(
        e.contains("every query failed on sqlite:")
            && e.contains("b.sqlite")
            && e.contains("no such table: sbtest2"),
        "{e}\n{}",
        text(&o)
    );
    let store = Store::open(&out.path().join("results.db")).unwrap();
    let run = store
        .runs()
        .unwrap()
        .into_iter()
        .rfind(|r| r.kind == RunKind::Perfrun)
        .unwrap();
    assert_eq!(run.status, dbrig_store::RunStatus::Failed);
    // Each query's error stays in the report of side b.
    let run = load_latest(out.path());
    assert_eq!(run.b.result.queries.len(), 2);
    assert!(run.b.result.queries.iter().all(|q| q.cold.error.is_some()));
    // One side where a query ran is not failed.
    std::fs::write(queries.join("q0.sql"), "SELECT 1").unwrap();
    ok(dbrig(
        out.path(),
        &[
            "perfrun",
            "--a",
            &a,
            "--b",
            &b,
            "--queries",
            queries.to_str().unwrap(),
        ],
    ));
}
