//! DBT-3 / TPC-H end to end at SF 0.01: load on SQLite, MariaDB (keys before) and PostgreSQL
//! (keys after), the differential answer check across the three, the power test on each, and
//! the bad inputs.

use std::process::Command;

use crate::{dbrig, error_line, json, ok, text};

const SF: &str = "0.01";

struct MariaDb(String);
impl MariaDb {
    fn new(name: &str) -> Self {
        let db = format!("dbrig_tpch_{name}");
        crate::mysql::sql(&format!(
            "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        ));
        MariaDb(db)
    }
    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}", self.0)
    }
}
impl Drop for MariaDb {
    fn drop(&mut self) {
        crate::mysql::sql(&format!("DROP DATABASE IF EXISTS {}", self.0));
    }
}

fn psql(sql: &str) {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "test",
            "-q",
            "-c",
            sql,
        ])
        .output()
        .expect("psql is installed");
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

struct Postgres(String);
impl Postgres {
    fn new(name: &str) -> Self {
        let db = format!("dbrig_tpch_{name}");
        psql(&format!("DROP DATABASE IF EXISTS {db}"));
        psql(&format!("CREATE DATABASE {db}"));
        Postgres(db)
    }
    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.0)
    }
}
impl Drop for Postgres {
    fn drop(&mut self) {
        psql(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0));
    }
}

fn load(out: &std::path::Path, target: &str, keys: &str) -> serde_json::Value {
    let o = ok(dbrig(
        out,
        &[
            "tpch", "load", "--sf", SF, "--keys", keys, "--target", target, "--format", "json",
        ],
    ));
    let v = json(&o);
    let rows: u64 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap())
        .sum();
    assert!(rows > 80_000, "{v}");
    assert!(v["size_bytes"].as_u64().unwrap() > 0, "{v}");
    for step in ["create tables", "load", "indexes", "analyze"] {
        assert!(
            v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == step),
            "{step}: {v}"
        );
    }
    eprintln!("load {target} ({keys}): {} s", v["total_seconds"]);
    v
}

fn power(out: &std::path::Path, target: &str) -> serde_json::Value {
    let o = ok(dbrig(
        out,
        &["tpch", "power", "--target", target, "--format", "json"],
    ));
    let v = json(&o);
    let queries = v["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 22, "{v}");
    assert_eq!(queries[0]["name"], "14");
    assert!(queries.iter().all(|q| q["status"] == "ok"), "{v}");
    assert_eq!(v["rf1"]["status"], "ok", "{v}");
    assert_eq!(v["rf2"]["status"], "ok", "{v}");
    assert!(v["power_at_size"].as_f64().unwrap() > 0.0, "{v}");
    eprintln!("power {target}: Power@Size {}", v["power_at_size"]);
    v
}

#[test]
fn sf001_on_three_engines_load_check_power_cleanup() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("tpch.sqlite").display());
    let my = MariaDb::new("it");
    let pg = Postgres::new("it");
    let (lite_url, my_url, pg_url) = (lite.clone(), my.url(), pg.url());
    let out_path = out.path().to_owned();
    // The three loads in parallel (each is mostly waiting on its server).
    std::thread::scope(|s| {
        s.spawn(|| load(&out_path, &lite_url, "after"));
        s.spawn(|| load(&out_path, &my_url, "before"));
        s.spawn(|| load(&out_path, &pg_url, "after"));
    });
    // A second load into the same database is refused.
    let e = error_line(&dbrig(
        out.path(),
        &["tpch", "load", "--sf", SF, "--target", &lite],
    ));
    assert!(
        e.contains("already exists") && e.contains("dbrig tpch cleanup"),
        "{e}"
    );

    // Differential check: every query gives the same answer on the three engines.
    let o = dbrig(
        out.path(),
        &[
            "tpch",
            "check",
            "--target",
            &lite,
            "--against",
            &my.url(),
            "--against",
            &pg.url(),
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    assert_eq!(v["all_same"], true, "{v}");
    assert_eq!(v["queries"].as_array().unwrap().len(), 22);
    assert!(o.status.success());

    // Power test on each engine, stored as runs.
    for t in [&lite, &my.url(), &pg.url()] {
        power(out.path(), t);
    }
    let runs = ok(dbrig(out.path(), &["runs"]));
    assert!(text(&runs).contains("tpch_power"), "{}", text(&runs));

    // A user query folder: one query fails, is recorded as an error, and the run goes on.
    let qdir = out.path().join("queries");
    std::fs::create_dir_all(&qdir).unwrap();
    std::fs::write(
        qdir.join("6.sql"),
        "select sum(l_quantity) from lineitem where l_quantity < :3",
    )
    .unwrap();
    std::fs::write(qdir.join("bad.sql"), "select no_such_column from lineitem").unwrap();
    std::fs::write(qdir.join("count.sql"), "select count(*) from orders;").unwrap();
    let o = ok(dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &pg.url(),
            "--queries",
            qdir.to_str().unwrap(),
            "--no-refresh",
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    let q = v["queries"].as_array().unwrap();
    let names: Vec<&str> = q.iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["6", "bad", "count"], "{v}");
    assert_eq!(q[0]["status"], "ok");
    assert_eq!(q[1]["status"], "error");
    assert_eq!(q[2]["status"], "ok");
    assert_eq!(q[2]["rows"], 1);
    assert!(v["power_at_size"].is_null());

    for t in [&lite, &my.url(), &pg.url()] {
        let o = ok(dbrig(out.path(), &["tpch", "cleanup", "--target", t]));
        assert!(text(&o).contains("Dropped"), "{}", text(&o));
    }
}

#[test]
fn power_before_load_and_bad_scale_factors() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("empty.sqlite").display());
    let e = error_line(&dbrig(out.path(), &["tpch", "power", "--target", &lite]));
    assert!(e.contains("run `dbrig tpch load` first"), "{e}");
    for bad in ["abc", "0", "-1", "1e3", "1.2.3"] {
        let o = dbrig(
            out.path(),
            &["tpch", "load", &format!("--sf={bad}"), "--target", &lite],
        );
        assert!(!o.status.success());
        assert!(text(&o).contains("scale factor"), "{bad}: {}", text(&o));
    }
}

#[test]
fn tbl_output_is_tpchgens_byte_for_byte() {
    let out = tempfile::tempdir().unwrap();
    // `--out` (added by the helper) is the folder of the .tbl files.
    let dir = out.path();
    ok(dbrig(
        out.path(),
        &[
            "tpch",
            "gen",
            "--sf",
            SF,
            "--tables",
            "supplier,nation",
            "--parallel",
            "3",
        ],
    ));
    // The reference: tpchgen's Display of every row, one line each.
    let mut expected = String::new();
    for s in tpchgen::generators::SupplierGenerator::new(0.01, 1, 1).iter() {
        expected.push_str(&format!("{s}\n"));
    }
    let got = std::fs::read_to_string(dir.join("supplier.tbl")).unwrap();
    assert_eq!(got, expected);
    assert!(got.lines().next().unwrap().ends_with('|'));
    assert_eq!(
        std::fs::read_to_string(dir.join("nation.tbl"))
            .unwrap()
            .lines()
            .count(),
        25
    );
}

/// SF1 against tpchgen's reference answers (TPC-H clause 2.1.3.5 tolerances). Too big for CI:
/// run `bench/tpch-validate-sf1 [TARGET]`, which loads SF 1 and runs this test.
#[test]
#[ignore]
fn sf1_answers_match_the_reference() {
    let target = std::env::var("DBRIG_TPCH_SF1_TARGET")
        .expect("set DBRIG_TPCH_SF1_TARGET to a target loaded with `dbrig tpch load --sf 1`");
    let out = tempfile::tempdir().unwrap();
    let o = dbrig(
        out.path(),
        &[
            "tpch",
            "check",
            "--target",
            &target,
            "--sf1-answers",
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    assert_eq!(v["all_same"], true, "{v}");
}

// ---- The throughput test and query timeouts ----

/// One value from PostgreSQL (for checks on the server's own view).
fn psql_value(sql: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "test",
            "-q",
            "-t",
            "-A",
            "-c",
            sql,
        ])
        .output()
        .expect("psql is installed");
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn throughput(out: &std::path::Path, args: &[&str]) -> (std::process::Output, serde_json::Value) {
    let mut all = vec!["tpch", "throughput", "--format", "json"];
    all.extend_from_slice(args);
    let o = dbrig(out, &all);
    let v = json(&o);
    (o, v)
}

#[test]
fn throughput_two_streams_on_three_engines() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("tp.sqlite").display());
    let my = MariaDb::new("tp");
    let pg = Postgres::new("tp");
    let (lite_url, my_url, pg_url) = (lite.clone(), my.url(), pg.url());
    let out_path = out.path().to_owned();
    std::thread::scope(|s| {
        s.spawn(|| load(&out_path, &lite_url, "after"));
        s.spawn(|| load(&out_path, &my_url, "before"));
        s.spawn(|| load(&out_path, &pg_url, "after"));
    });
    for t in [&lite, &my.url(), &pg.url()] {
        let power_run = power(out.path(), t)["run_id"].as_i64().unwrap().to_string();
        let (o, v) = throughput(
            out.path(),
            &["--target", t, "--streams", "2", "--power-run", &power_run],
        );
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(v["streams"], 2, "{v}");
        let streams = v["query_streams"].as_array().unwrap();
        assert_eq!(streams.len(), 2);
        for (s, first) in streams.iter().zip(["21", "6"]) {
            let q = s["queries"].as_array().unwrap();
            assert_eq!(q.len(), 22, "{s}");
            // Stream s runs permutation s of the spec's Appendix A.
            assert_eq!(q[0]["name"], first, "{s}");
            assert!(q.iter().all(|q| q["status"] == "ok"), "{t}: {s}");
            assert!(s["aborted"].is_null());
        }
        let pairs = v["refresh_stream"]["pairs"].as_array().unwrap();
        assert_eq!(pairs.len(), 2, "one RF1/RF2 pair per query stream: {v}");
        assert!(
            pairs
                .iter()
                .all(|p| p["rf1"]["status"] == "ok" && p["rf2"]["status"] == "ok")
        );
        // The power run used set 1; the pairs take the next two.
        assert_eq!(pairs[0]["refresh_set"], 2);
        assert_eq!(pairs[1]["refresh_set"], 3);
        let ts = v["ts_seconds"].as_f64().unwrap();
        let tput = v["throughput_at_size"].as_f64().unwrap();
        assert!(
            (tput - 2.0 * 22.0 * 3600.0 / ts * 0.01).abs() < 1e-6 * tput,
            "{v}"
        );
        let power = v["power_at_size"].as_f64().unwrap();
        let qphh = v["qphh_at_size"].as_f64().unwrap();
        assert!((qphh - (power * tput).sqrt()).abs() < 1e-6 * qphh, "{v}");
        eprintln!("throughput {t}: Throughput@Size {tput:.1}, QphH@Size {qphh:.1}");
    }
    // The text report: stream table and metrics; stored as a run.
    let o = ok(dbrig(
        out.path(),
        &["tpch", "throughput", "--target", &lite, "--no-refresh"],
    ));
    let t = text(&o);
    assert!(
        t.contains("stream") && t.contains("Throughput@Size = "),
        "{t}"
    );
    assert!(t.contains("Q22"), "{t}");
    let runs = text(&ok(dbrig(out.path(), &["runs"])));
    assert!(runs.matches("tpch_throughput").count() >= 4, "{runs}");
    // QphH needs a power run: another kind of run is refused with a clear message.
    let e = error_line(&dbrig(
        out.path(),
        &[
            "tpch",
            "throughput",
            "--target",
            &lite,
            "--power-run",
            "999999",
        ],
    ));
    assert!(e.contains("no run 999999"), "{e}");
}

#[test]
fn throughput_timeouts_kill_on_the_server_and_errors_let_the_stream_go_on() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("to.sqlite").display());
    let my = MariaDb::new("to");
    let pg = Postgres::new("to");
    let (lite_url, my_url, pg_url) = (lite.clone(), my.url(), pg.url());
    let out_path = out.path().to_owned();
    std::thread::scope(|s| {
        s.spawn(|| load(&out_path, &lite_url, "after"));
        s.spawn(|| load(&out_path, &my_url, "before"));
        s.spawn(|| load(&out_path, &pg_url, "after"));
    });
    let slow = [
        (
            &lite,
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000000000) SELECT COUNT(*) FROM n",
        ),
        (&my_url, "SELECT SLEEP(30) FROM region LIMIT 1"),
        (&pg_url, "SELECT pg_sleep(30) FROM region LIMIT 1"),
    ];
    for (t, slow_sql) in slow {
        let qdir = out.path().join(format!("q{}", t.len()));
        std::fs::create_dir_all(&qdir).unwrap();
        std::fs::write(
            qdir.join("6.sql"),
            "select count(*) from lineitem where l_quantity < :3",
        )
        .unwrap();
        std::fs::write(
            qdir.join("a_bad.sql"),
            "select no_such_column from lineitem",
        )
        .unwrap();
        std::fs::write(qdir.join("b_slow.sql"), slow_sql).unwrap();
        std::fs::write(qdir.join("c_after.sql"), "select count(*) from nation").unwrap();
        let (o, v) = throughput(
            out.path(),
            &[
                "--target",
                t,
                "--streams",
                "2",
                "--no-refresh",
                "--timeout",
                "0.5",
                "--queries",
                qdir.to_str().unwrap(),
            ],
        );
        // Errors and timeouts are results, not a failed run.
        assert!(o.status.success(), "{}", text(&o));
        assert!(v["failure"].is_null());
        assert!(v["throughput_at_size"].is_null(), "not a valid metric: {v}");
        for s in v["query_streams"].as_array().unwrap() {
            let q = s["queries"].as_array().unwrap();
            let status: Vec<&str> = q.iter().map(|q| q["status"].as_str().unwrap()).collect();
            let names: Vec<&str> = q.iter().map(|q| q["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["6", "a_bad", "b_slow", "c_after"], "{t}");
            assert_eq!(status, ["ok", "error", "timeout", "ok"], "{t}: {s}");
            // The server's own message is kept.
            assert!(
                q[1]["error"].as_str().unwrap().contains("no_such_column"),
                "{s}"
            );
            assert_eq!(
                q[2]["micros"], 500_000,
                "a timeout counts as the timeout: {s}"
            );
        }
        // Text output shows a timeout as >T.
        let o = ok(dbrig(
            out.path(),
            &[
                "tpch",
                "throughput",
                "--target",
                t,
                "--streams",
                "2",
                "--no-refresh",
                "--timeout",
                "0.5",
                "--queries",
                qdir.to_str().unwrap(),
            ],
        ));
        assert!(text(&o).contains(">0.500"), "{}", text(&o));
    }
    // The power test takes the same --timeout.
    let qdir = out.path().join(format!("q{}", pg_url.len()));
    let o = ok(dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &pg_url,
            "--no-refresh",
            "--timeout",
            "0.5",
            "--queries",
            qdir.to_str().unwrap(),
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    let status: Vec<&str> = v["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["ok", "error", "timeout", "ok"], "{v}");
    // Nothing of the slow queries still runs on the servers.
    let sleeping = crate::mysql::sql(&format!(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{}' AND INFO LIKE 'SELECT SLEEP%'",
        my.0
    ));
    assert_eq!(sleeping.trim(), "0");
    let sleeping = psql_value(&format!(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = '{}' AND state = 'active' AND query LIKE '%pg_sleep%'",
        pg.0
    ));
    assert_eq!(sleeping, "0");
}

#[test]
fn throughput_server_dying_mid_stream_fails_the_run_keeping_what_was_measured() {
    let out = tempfile::tempdir().unwrap();
    // The mock server dies at its 10th statement on a connection.
    let (o, v) = throughput(
        out.path(),
        &[
            "--target",
            "mock:?die_after=10&latency_us=1000",
            "--no-refresh",
            "--streams",
            "2",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        v["failure"]
            .as_str()
            .unwrap()
            .contains("the server went away"),
        "{v}"
    );
    for s in v["query_streams"].as_array().unwrap() {
        let q = s["queries"].as_array().unwrap();
        assert!(!q.is_empty() && q.len() < 22, "{s}");
        assert!(q[..q.len() - 1].iter().all(|q| q["status"] == "ok"), "{s}");
        assert!(s["aborted"].is_string(), "{s}");
    }
    assert!(v["throughput_at_size"].is_null());
    let runs = text(&ok(dbrig(out.path(), &["runs"])));
    let line = runs
        .lines()
        .find(|l| l.contains("tpch_throughput"))
        .unwrap();
    assert!(line.contains("failed"), "{runs}");
    // What was measured is in the results database, with the run marked failed.
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.runs().unwrap().pop().unwrap();
    assert_eq!(run.status, dbrig_store::RunStatus::Failed);
    let cell = store.cells(run.id).unwrap().pop().unwrap();
    let trial = store.trials(cell.id).unwrap().pop().unwrap();
    assert_eq!(trial.status, dbrig_store::TrialStatus::Failed);
    let stored = &trial.extra.unwrap()["tpch_throughput"];
    assert_eq!(stored["query_streams"], v["query_streams"]);
}
