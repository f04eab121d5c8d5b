//! DBT-3 / TPC-H end to end at SF 0.01: load on SQLite, MariaDB (keys before) and PostgreSQL
//! (keys after), the differential answer check across the three, the power test on each, and
//! the bad inputs.

use std::process::Command;

use crate::{dbrig, error_line, json, ok, text};

const SF: &str = "0.01";

struct MariaDb(String);
impl MariaDb {
    fn new(name: &str) -> Self {
        // Per process: two test runs in one checkout must not drop each other's data.
        let db = format!("dbrig_tpch_{name}_{}", std::process::id());
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
        // Per process: two test runs in one checkout must not drop each other's data.
        let db = format!("dbrig_tpch_{name}_{}", std::process::id());
        psql(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"));
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
    // The load is stored as a trial of its own (kind `load`) and printed from the store.
    assert_eq!(
        (v["kind"].as_str(), v["status"].as_str()),
        (Some("load"), Some("done")),
        "{v}"
    );
    let rows: std::collections::BTreeMap<&str, u64> = v["figures"]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["table"].as_str().unwrap(), r["rows"].as_u64().unwrap()))
        .collect();
    // TPC-H's cardinalities at SF 0.01 (clause 4.2.5): fixed for every table but lineitem,
    // which has 1 to 7 lines per order.
    let fixed = [
        ("customer", 1_500),
        ("nation", 25),
        ("orders", 15_000),
        ("part", 2_000),
        ("partsupp", 8_000),
        ("region", 5),
        ("supplier", 100),
    ];
    for (table, n) in fixed {
        assert_eq!(rows.get(table), Some(&n), "{table}: {v}");
    }
    let lines = rows["lineitem"];
    assert!((15_000..=7 * 15_000).contains(&lines), "{v}");
    assert_eq!(rows.len(), 8, "{v}");
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
    eprintln!("load {target} ({keys}): {} s", v["total_s"]);
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
    // At SF 0.01 no reference answers apply: every query says its answer went unchecked.
    assert!(queries.iter().all(|q| q["answer_checked"] == false), "{v}");
    assert_eq!(v["rf1"]["status"], "ok", "{v}");
    assert_eq!(v["rf1"]["answer_checked"], serde_json::Value::Null, "{v}");
    assert_eq!(v["rf2"]["status"], "ok", "{v}");
    // Power@Size from the timings it reports: 3600·SF over the geometric mean of the 24
    // timings (RF1, 22 queries, RF2), each at least max/1000 (TPC-H 5.4.1).
    assert_eq!(v["scale_factor"].as_f64(), Some(0.01), "{v}");
    let mut secs: Vec<f64> = queries
        .iter()
        .chain([&v["rf1"], &v["rf2"]])
        .map(|q| q["time_us"].as_u64().unwrap() as f64 / 1e6)
        .collect();
    assert_eq!(secs.len(), 24);
    let floor = secs.iter().copied().fold(0.0, f64::max) / 1000.0;
    secs.iter_mut().for_each(|s| *s = s.max(floor));
    let geomean = (secs.iter().map(|s| s.ln()).sum::<f64>() / 24.0).exp();
    let power = v["power_at_size"].as_f64().unwrap();
    // Printed by the one rounding rule (4 decimals).
    assert!(
        (power - 3600.0 * 0.01 / geomean).abs() < 1e-4 * power,
        "{power}: {v}"
    );
    eprintln!("power {target}: Power@Size {power}");
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

    // The console never says `ok` for an answer nobody compared.
    let t = text(&ok(dbrig(
        out.path(),
        &["tpch", "power", "--target", &lite, "--no-refresh"],
    )));
    let query_lines: Vec<&str> = t
        .lines()
        .filter(|l| l.trim_start().starts_with('Q') && l.contains(" s"))
        .collect();
    assert_eq!(
        t.matches("unchecked").count(),
        44,
        "22 progress lines and 22 table rows: {t}"
    );
    assert!(!query_lines.iter().any(|l| l.ends_with(" ok")), "{t}");

    // With the refresh functions on (the command's default), RF1 would change this side's
    // data before the queries: refused in one line, before anything runs.
    let o = dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--check-against",
            &my.url(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(error_line(&o).contains("add --no-refresh"), "{}", text(&o));

    // Compared with another engine's answers (run there untimed), the status is `ok`.
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--no-refresh",
            "--check-against",
            &my.url(),
            "--format",
            "json",
        ],
    )));
    let queries = v["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 22, "{v}");
    assert!(
        queries
            .iter()
            .all(|q| q["status"] == "ok" && q["answer_checked"] == true),
        "{v}"
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

/// SF 1 against tpchgen's reference answers with TPC-H's tolerances (clause 2.1.3.5), the only
/// check of the answer rules on real data (the SF 0.01 checks compare engines with each other).
/// Loads SF 1 into a database of its own on the machine's PostgreSQL: about 2 minutes of the
/// suite's time (generation and `COPY` ~1.3 min, the 22 queries ~0.5 min on this machine's two
/// cores) and 1.8 GB of disk while it runs. `DBRIG_TPCH_SF1_TARGET` checks an SF 1 target
/// loaded beforehand instead (`bench/tpch-validate-sf1 [TARGET]` loads one on any engine).
#[test]
fn sf1_answers_match_the_reference() {
    let out = tempfile::tempdir().unwrap();
    let own;
    let target = match std::env::var("DBRIG_TPCH_SF1_TARGET") {
        Ok(t) => t,
        Err(_) => {
            own = Postgres::new("sf1");
            let v = json(&ok(dbrig(
                out.path(),
                &[
                    "tpch",
                    "load",
                    "--sf",
                    "1",
                    "--target",
                    &own.url(),
                    "--format",
                    "json",
                ],
            )));
            assert_eq!(v["status"], "done", "{v}");
            eprintln!("SF 1 loaded in {} s", v["total_s"]);
            own.url()
        }
    };
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
    let queries = v["queries"].as_array().map_or(0, Vec::len);
    assert_eq!(queries, 22, "{v}");
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
        // Ts and the figures are printed by the one rounding rule (4 decimals).
        let ts = v["ts_s"].as_f64().unwrap();
        let tput = v["throughput_at_size"].as_f64().unwrap();
        assert!(
            (tput - 2.0 * 22.0 * 3600.0 / ts * 0.01).abs() < 1e-3 * tput,
            "{v}"
        );
        let power = v["power_at_size"].as_f64().unwrap();
        let qphh = v["qphh_at_size"].as_f64().unwrap();
        assert!((qphh - (power * tput).sqrt()).abs() < 1e-3 * qphh, "{v}");
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
                q[2]["time_us"], 500_000,
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
    // The printed document is the stored one rounded by the one rule.
    let mut stored = crate::trial_json(&trial)["tpch_throughput"]["query_streams"].clone();
    dbrig_report::figures::round_json(&mut stored);
    assert_eq!(stored, v["query_streams"]);
}

// ---- The launcher's per-query controls, plan fingerprints and the TPC-H report ----

/// A power test with controls, as JSON (no refresh functions: the data stays as loaded).
fn controlled(out: &std::path::Path, target: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "tpch",
        "power",
        "--target",
        target,
        "--no-refresh",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json(&ok(dbrig(out, &args)))
}

/// The measured runs (warm-ups left out) of a query's detail, in µs.
fn measured(q: &serde_json::Value) -> Vec<u64> {
    q["detail"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["warmup"] == false)
        .map(|r| r["time_us"].as_u64().unwrap())
        .collect()
}

#[test]
fn launcher_controls_warmups_runs_and_the_three_reductions_on_three_engines() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("ctl.sqlite").display());
    let my = MariaDb::new("ctl");
    let pg = Postgres::new("ctl");
    let (lite_url, my_url, pg_url) = (lite.clone(), my.url(), pg.url());
    let out_path = out.path().to_owned();
    std::thread::scope(|s| {
        s.spawn(|| load(&out_path, &lite_url, "after"));
        s.spawn(|| load(&out_path, &my_url, "after"));
        s.spawn(|| load(&out_path, &pg_url, "after"));
    });
    for target in [&lite, &my.url(), &pg.url()] {
        for reduction in ["simple-average", "min-max", "analyze-explain"] {
            let v = controlled(
                out.path(),
                target,
                &["--warmups", "1", "--runs", "3", "--reduction", reduction],
            );
            let queries = v["queries"].as_array().unwrap();
            assert_eq!(queries.len(), 22, "{target} {reduction}");
            for q in queries {
                let d = &q["detail"];
                assert_eq!(q["status"], "ok", "{target} {reduction}: {q}");
                assert_eq!(d["reduction"], reduction);
                let runs = d["runs"].as_array().unwrap();
                assert_eq!(runs.iter().filter(|r| r["warmup"] == true).count(), 1);
                let m = measured(q);
                let micros = q["time_us"].as_u64().unwrap();
                match reduction {
                    "simple-average" => {
                        assert_eq!(m.len(), 3);
                        assert_eq!(micros, m.iter().sum::<u64>() / 3, "{q}");
                    }
                    "min-max" => {
                        assert_eq!(m.len(), 3);
                        assert_eq!(micros, *m.iter().min().unwrap(), "{q}");
                        assert_eq!(d["max_us"].as_u64(), m.iter().max().copied());
                    }
                    _ => {
                        // Plans captured per run; the result is the chosen plan's mean.
                        let chosen = d["chosen_plan"].as_str().expect("a chosen plan");
                        assert!(d["plans"][chosen].is_string(), "{d}");
                        let of_plan: Vec<u64> = runs
                            .iter()
                            .filter(|r| r["warmup"] == false && r["plan"] == chosen)
                            .map(|r| r["time_us"].as_u64().unwrap())
                            .collect();
                        assert!(!of_plan.is_empty() && of_plan.len() <= 3);
                        assert_eq!(micros, of_plan.iter().sum::<u64>() / of_plan.len() as u64);
                    }
                }
            }
            assert!(v["power_at_size"].as_f64().unwrap() > 0.0);
        }
    }
    // Controls that need a server dbrig can restart are refused on an external target, before
    // any run is recorded.
    let runs_before = text(&ok(dbrig(out.path(), &["runs"])));
    for flag in ["--restart-between-queries", "--drop-caches"] {
        let e = error_line(&dbrig(
            out.path(),
            &["tpch", "power", "--target", &my.url(), flag],
        ));
        assert!(
            e.contains("managed server") && e.contains("--server"),
            "{e}"
        );
    }
    let ctl = out.path().join("params.toml");
    std::fs::write(&ctl, "[query.\"3\"]\nparams = [\"join_cache_level=6\"]\n").unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--controls",
            ctl.to_str().unwrap(),
        ],
    ));
    assert!(
        e.contains("startup params") && e.contains("external"),
        "{e}"
    );
    std::fs::write(&ctl, "[query.\"23\"]\nruns = 2\n").unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--controls",
            ctl.to_str().unwrap(),
        ],
    ));
    assert!(
        e.contains("'23'") && e.contains("not in the query set"),
        "{e}"
    );
    std::fs::write(&ctl, "[all]\nrunz = 2\n").unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--controls",
            ctl.to_str().unwrap(),
        ],
    ));
    assert!(e.contains("params.toml:2") && e.contains("runz"), "{e}");
    assert_eq!(text(&ok(dbrig(out.path(), &["runs"]))), runs_before);
}

#[test]
fn plan_fingerprints_group_runs_and_tell_join_orders_apart() {
    let out = tempfile::tempdir().unwrap();
    let my = MariaDb::new("fp");
    load(out.path(), &my.url(), "after");
    // Q3 as the optimizer likes it, and forced into another join order.
    let qdir = out.path().join("q");
    std::fs::create_dir_all(&qdir).unwrap();
    let q3 = "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, \
              o_shippriority from {FROM} where c_mktsegment = 'BUILDING' and c_custkey = o_custkey \
              and l_orderkey = o_orderkey and o_orderdate < date '1995-03-15' and l_shipdate > \
              date '1995-03-15' group by l_orderkey, o_orderdate, o_shippriority order by revenue \
              desc, o_orderdate limit 10";
    std::fs::write(
        qdir.join("3.sql"),
        q3.replace("{FROM}", "customer, orders, lineitem"),
    )
    .unwrap();
    std::fs::write(
        qdir.join("3-straight.sql"),
        q3.replace("select l_orderkey", "select straight_join l_orderkey")
            .replace("{FROM}", "lineitem, orders, customer"),
    )
    .unwrap();
    let v = controlled(
        out.path(),
        &my.url(),
        &[
            "--queries",
            qdir.to_str().unwrap(),
            "--reduction",
            "analyze-explain",
            "--runs",
            "4",
            "--cluster-size",
            "3",
        ],
    );
    let q = v["queries"].as_array().unwrap();
    let mut chosen = Vec::new();
    for query in q {
        let d = &query["detail"];
        // The same plan on every run (estimates do not split it): one cluster, full at 3.
        assert_eq!(d["plans"].as_object().unwrap().len(), 1, "{d}");
        assert_eq!(
            measured(query).len(),
            3,
            "stops when the cluster is full: {d}"
        );
        let fp = d["chosen_plan"].as_str().unwrap().to_owned();
        assert_eq!(fp.len(), 16);
        assert!(d["plans"][&fp].as_str().unwrap().contains("query_block"));
        chosen.push(fp);
    }
    assert_ne!(chosen[0], chosen[1], "another join order is another plan");
}

#[test]
fn managed_server_restarts_per_query_with_its_own_startup_parameters() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &["server", "start", "h3tpch", "--engine", "mariadb"],
    ));
    // `server start` leaves it running detached: stopped however the test ends (a failed
    // assertion would otherwise leave it behind, its folder deleted).
    let _stop = StopServerOnDrop(out.path(), "h3tpch");
    let url = text(&o)
        .lines()
        .find_map(|l| l.trim().strip_prefix("target: ").map(str::to_owned))
        .expect("the target line");
    // Locked down by default: the password is in the file the start names.
    let secret = text(&o)
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("password: in ")
                .and_then(|r| r.split(" (").next())
                .map(str::to_owned)
        })
        .expect("the password line");
    let e = error_line(&dbrig(
        out.path(),
        &["tpch", "load", "--sf", SF, "--target", &url],
    ));
    assert!(e.contains("Access denied"), "{e}");
    ok(dbrig(
        out.path(),
        &[
            "tpch",
            "load",
            "--sf",
            SF,
            "--keys",
            "after",
            "--target",
            &url,
            "--password-file",
            &secret,
        ],
    ));
    ok(dbrig(out.path(), &["server", "stop", "h3tpch"]));
    let qdir = out.path().join("q");
    std::fs::create_dir_all(&qdir).unwrap();
    std::fs::write(qdir.join("a.sql"), "select count(*) from orders").unwrap();
    std::fs::write(qdir.join("b.sql"), "select count(*) from lineitem").unwrap();
    let ctl = out.path().join("ctl.toml");
    std::fs::write(
        &ctl,
        "restart-between-queries = true\n[all]\nruns = 2\n\
         pre-sql = \"select @@join_cache_level\"\n\
         post-shell = \"echo after-run\"\n\
         [query.b]\nparams = [\"join_cache_level=6\"]\n",
    )
    .unwrap();
    // dbrig starts the stopped server, restarts it before each query (with b's own
    // parameters for b), and stops it at the end.
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--server",
            "h3tpch",
            "--no-refresh",
            "--queries",
            qdir.to_str().unwrap(),
            "--controls",
            ctl.to_str().unwrap(),
            "--after-trial-sql",
            "select 7",
            "--format",
            "json",
        ],
    )));
    // The restarts moved the server to new ports: the after-trial hook reaches it where it
    // is now (it went to the first start's port and was refused).
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let cell = &store.cells(run).unwrap()[0];
    let trial = &store.trials(cell.id).unwrap()[0];
    let hooks = &trial.environment.as_ref().unwrap().hooks;
    let after = hooks
        .iter()
        .find(|h| h.hook == "after-trial-sql")
        .unwrap_or_else(|| panic!("{hooks:?}"));
    assert_eq!(
        (after.exit_code, after.output.trim()),
        (Some(0), "7"),
        "{after:?}"
    );
    let q = v["queries"].as_array().unwrap();
    let hook = |i: usize, name: &str| -> Vec<String> {
        q[i]["detail"]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["hook"] == name)
            .map(|h| h["output"].as_str().unwrap().trim().to_owned())
            .collect()
    };
    let default_level = hook(0, "pre-run-sql");
    assert_eq!(default_level.len(), 2);
    assert_ne!(default_level[0], "6");
    assert_eq!(
        hook(1, "pre-run-sql"),
        ["6", "6"],
        "b runs with its parameter"
    );
    assert_eq!(hook(1, "post-run-shell"), ["after-run", "after-run"]);
    for (i, query) in q.iter().enumerate() {
        assert_eq!(query["status"], "ok", "{query}");
        assert_eq!(query["detail"]["restarts"], 1, "query {i}");
        assert_eq!(measured(query).len(), 2);
    }
    assert_eq!(q[1]["detail"]["params"][0], "join_cache_level=6");
    // The server dbrig started is stopped again.
    let st = dbrig(out.path(), &["server", "status", "h3tpch"]);
    assert_eq!(st.status.code(), Some(3), "{}", text(&st));
}

/// Issue 30, item 26: `tpch throughput` runs on a managed server as `tpch power` does
/// (`--server NAME`, one set of options for both): started when down, stopped at the end.
#[test]
fn throughput_runs_on_a_managed_server() {
    let out = tempfile::tempdir().unwrap();
    let o = ok(dbrig(
        out.path(),
        &["server", "start", "tpthru", "--engine", "mariadb"],
    ));
    let _stop = StopServerOnDrop(out.path(), "tpthru");
    let line = |prefix: &str| {
        text(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix).map(str::to_owned))
            .unwrap_or_else(|| panic!("{prefix}: {}", text(&o)))
    };
    let url = line("target: ");
    let secret = line("password: in ").split(" (").next().unwrap().to_owned();
    ok(dbrig(
        out.path(),
        &[
            "tpch",
            "load",
            "--sf",
            SF,
            "--target",
            &url,
            "--password-file",
            &secret,
        ],
    ));
    ok(dbrig(out.path(), &["server", "stop", "tpthru"]));
    let (o, v) = throughput(
        out.path(),
        &["--server", "tpthru", "--streams", "1", "--no-refresh"],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(v["streams"], 1, "{v}");
    let q = v["query_streams"][0]["queries"].as_array().unwrap();
    assert_eq!(q.len(), 22, "{v}");
    assert!(q.iter().all(|q| q["status"] == "ok"), "{v}");
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    assert_eq!(store.cells(run).unwrap()[0].target, "server:tpthru");
    // The server dbrig started for the test is stopped again.
    let st = dbrig(out.path(), &["server", "status", "tpthru"]);
    assert_eq!(st.status.code(), Some(3), "{}", text(&st));
}

#[test]
fn tpch_report_with_a_baseline_and_a_timeout() {
    let out = tempfile::tempdir().unwrap();
    let my = MariaDb::new("rep");
    load(out.path(), &my.url(), "after");
    let fast = out.path().join("fast");
    let slow = out.path().join("slow");
    for (dir, sleep) in [(&fast, "0"), (&slow, "3")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("1.sql"), "select count(*) from nation").unwrap();
        std::fs::write(
            dir.join("2.sql"),
            format!("select sleep({sleep}) + count(*) from region"),
        )
        .unwrap();
    }
    let a = controlled(
        out.path(),
        &my.url(),
        &["--queries", fast.to_str().unwrap(), "--timeout", "1"],
    );
    let b = controlled(
        out.path(),
        &my.url(),
        &[
            "--queries",
            slow.to_str().unwrap(),
            "--timeout",
            "1",
            "--runs",
            "2",
        ],
    );
    let q2 = |v: &serde_json::Value| {
        v["queries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == "2")
            .unwrap()
            .clone()
    };
    assert_eq!(q2(&a)["status"], "ok", "{a}");
    assert_eq!(q2(&b)["status"], "timeout", "{b}");
    let (ra, rb) = (a["run_id"].to_string(), b["run_id"].to_string());
    let chart = out.path().join("chart.svg");
    let o = ok(dbrig(
        out.path(),
        &[
            "tpch",
            "report",
            &ra,
            &rb,
            "--baseline",
            &format!("default@{ra}"),
            "--chart",
            chart.to_str().unwrap(),
        ],
    ));
    let t = text(&o);
    let row = t
        .lines()
        .find(|l| l.starts_with("Q2 "))
        .expect("row of query 2");
    assert!(row.contains(">1.000"), "{t}");
    // The ratio beside a timeout is a lower bound.
    assert!(
        row.split_whitespace()
            .any(|c| c.starts_with('>') && c.contains('.') && c != ">1.000"),
        "{t}"
    );
    assert!(t.contains("ratio") && t.contains("MariaDB"), "{t}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("&gt;T"));
    // The same table is on the HTML page of the run.
    let html = out.path().join("r.html");
    ok(dbrig(
        out.path(),
        &[
            "report",
            &rb,
            "--format",
            "html",
            "--output",
            html.to_str().unwrap(),
        ],
    ));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("TPC-H power test") && page.contains("&gt;1.000"));
    // An unknown baseline is named.
    let e = error_line(&dbrig(
        out.path(),
        &["tpch", "report", &ra, "--baseline", "nope"],
    ));
    assert!(e.contains("\"nope\"") && e.contains("default"), "{e}");
}

/// `dbrig tpch import-launcher` writes no results, so it takes no `--out`.
fn import_cmd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(args)
        .output()
        .expect("dbrig runs")
}

/// The launcher's files as the seed lays them out (top-level, test, DBMS, queries, results
/// DB), for a managed MariaDB and an external PostgreSQL.
fn launcher_files(home: &std::path::Path, pg_db: &str) {
    let w = |rel: &str, text: &str| {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(
        "tests/innodb_test.conf",
        "[common]\n\
         RESULTS_DB_CONFIG = $PROJECT_HOME/tests/results_db_conf/results_db.conf\n\
         TEST_CONFIG = $PROJECT_HOME/tests/test_conf/test_innodb.conf\n\n\
         [mariadb_10]\n\
         QUERIES_CONFIG = $PROJECT_HOME/tests/queries_conf/queries-mariadb.conf\n\
         DB_CONFIG = $PROJECT_HOME/tests/db_conf/db_mariadb_innodb.conf\n\n\
         [postgres]\n\
         QUERIES_CONFIG = $PROJECT_HOME/tests/queries_conf/queries.conf\n\
         DB_CONFIG = $PROJECT_HOME/tests/db_conf/db_postgres.conf\n",
    );
    w(
        "tests/test_conf/test_innodb.conf",
        "# InnoDB: plans change between restarts\n[test_config]\nQUERIES_AT_ONCE = 0\n\
         CLEAR_CACHES = 0\nWARMUP = 1\nWARMUPS_COUNT = 1\nEXPLAIN = 1\nRUN = 1\n\
         ANALYZE_EXPLAIN = 0\nMIN_MAX_OUT_OF_N = 1\nSIMPLE_AVERAGE = 0\nNUM_TESTS = 3\n\
         MAX_SKIPPED_TESTS = 5\nCLUSTER_SIZE = 3\nMAX_QUERY_TIME = 7200\nTIMEOUT = 600\n\
         OS_STATS_INTERVAL = 1\nPRE_RUN_OS =\nPOST_RUN_OS = echo run done\nPRE_TEST_OS = uname -a\n\
         SOME_FUTURE_SETTING = 1\n",
    );
    w(
        "tests/db_conf/db_mariadb_innodb.conf",
        "[db_settings]\nDBMS_HOME = /usr\nDBMS_USER = root\nSOCKET = $PROJECT_HOME/temp/mysql.sock\n\
         DATADIR = $DATADIR_HOME/innodb-s$SCALE_FACTOR\nDBNAME = dbt3\nKEYWORD = mariadb-innodb\n\
         DBMS = MariaDB\nSTORAGE_ENGINE = InnoDB\n\
         STARTUP_PARAMS = --optimizer_switch='mrr=on' --join_cache_level=4\n\
         GRAPH_HEADING = MariaDB + InnoDB\nMYSQL_SYSTEM_DIR = $DATADIR_HOME/mysql_mariadb\n\
         PRE_RUN_SQL = flush status;\nPOST_RUN_SQL = show session status like 'Handler_read%';\n\
         PRE_TEST_SQL = select version();\nPOST_TEST_SQL =\n",
    );
    w(
        "tests/db_conf/db_postgres.conf",
        &format!(
            "[db_settings]\nDBMS = PostgreSQL\nDBMS_USER = postgres\nHOST = 127.0.0.1\nPORT = 5432\n\
             DBNAME = {pg_db}\nKEYWORD = postgresql\nGRAPH_HEADING = PostgreSQL\n"
        ),
    );
    w(
        "tests/queries_conf/queries-mariadb.conf",
        "[queries_settings]\nQUERIES_HOME = $QUERIES_HOME/s$SCALE_FACTOR-m\n\n\
         [query1]\nQUERY=1.sql\nEXPLAIN_QUERY=1_explain.sql\nSTARTUP_PARAMS=\n\n\
         [query2]\nQUERY=2.sql\nEXPLAIN_QUERY=2_explain.sql\n\
         STARTUP_PARAMS=--join_cache_level=6\nNUM_TESTS=2\n\n\
         [query20]\nQUERY=20-opt1.sql\nRUN=0\n\n\
         [query3]\nQUERY=3-opt.sql\n",
    );
    w(
        "tests/queries_conf/queries.conf",
        "[queries_settings]\nQUERIES_HOME = $QUERIES_HOME/s$SCALE_FACTOR-m\n\n\
         [query1]\nQUERY=1.sql\n[query2]\nQUERY=2.sql\n",
    );
    w(
        "tests/results_db_conf/results_db.conf",
        "[results_db]\nDBMS_HOME = $PROJECT_HOME/mariadb-5.3\nDBMS_USER = root\n\
         DATADIR = $DATADIR_HOME/dbt3_results_db\nPORT = 12340\nDBNAME = dbt3_results\n",
    );
    w("queries/s0.01-m/1.sql", "select count(*) from nation");
    w(
        "queries/s0.01-m/2.sql",
        "select n_name, count(*) from nation, region where n_regionkey = r_regionkey group by n_name",
    );
    w("queries/s0.01-m/20-opt1.sql", "select 1");
    w("queries/s0.01-m/3-opt.sql", "select count(*) from region");
}

#[test]
fn import_launcher_writes_a_plan_that_runs() {
    let out = tempfile::tempdir().unwrap();
    let home = out.path().join("dbt3");
    let pg = Postgres::new("launcher");
    launcher_files(&home, &pg.0);
    let top = home.join("tests/innodb_test.conf");
    let plan = out.path().join("dbt3.toml");
    let h = home.to_str().unwrap();
    let queries_home = format!("--queries-home={h}/queries");
    let datadir_home = format!("--datadir-home={}/data", out.path().display());
    let import = |extra: &[&str]| {
        let mut args = vec![
            "tpch",
            "import-launcher",
            top.to_str().unwrap(),
            "--project-home",
            h,
            &queries_home,
            &datadir_home,
            "--scale-factor",
            "0.01",
        ];
        args.extend_from_slice(extra);
        import_cmd(&args)
    };
    // Bad input first: a keyword without its value, an unknown override.
    let o = import_cmd(&["tpch", "import-launcher", top.to_str().unwrap()]);
    let e = error_line(&o);
    assert!(
        e.contains("$PROJECT_HOME") && e.contains("--project-home"),
        "{e}"
    );
    let e = error_line(&import(&["--override", "NUM_TEST=2"]));
    assert!(e.contains("NUM_TEST") && e.contains("NUM_TESTS"), "{e}");
    assert!(!plan.exists());

    let o = ok(import(&[
        "--override",
        "TIMEOUT=300",
        "-o",
        plan.to_str().unwrap(),
    ]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("plan written"), "{err}");
    let written = std::fs::read_to_string(&plan).unwrap();
    for expected in [
        "engine = \"mariadb\"",
        "params = [\"optimizer_switch=mrr=on\", \"join_cache_level=4\", \"default-storage-engine=InnoDB\"]",
        &format!("target = \"postgres://postgres@127.0.0.1:5432/{}\"", pg.0),
        "reduction = \"min-max\"",
        "restart-between-queries = true",
        "warmups = 1",
        "runs = 3",
        "timeout = 300",
        "post-shell = \"echo run done\"",
        "pre-sql = \"flush status;\"",
        "[workload.options.controls.query.\"2\"]\nparams = [\"join_cache_level=6\"]\nruns = 2",
        "queries = [\"1\", \"2\"]",
        "queries = [\"1\", \"2\", \"3-opt\"]",
        // Each query set where the launcher ran it.
        "configurations = [\"mariadb-innodb\"]",
        "configurations = [\"postgresql\"]",
        "before-configuration-sql = \"select version();\"",
        "before-configuration = \"uname -a\"",
        // GRAPH_HEADING heads each workload's table and chart: its label.
        "label = \"MariaDB + InnoDB\"",
        "label = \"PostgreSQL\"",
        // EXPLAIN_QUERY: EXPLAIN after the timed run (here on for all queries by EXPLAIN = 1).
        "EXPLAIN_QUERY = 1_explain.sql: `explain = true`",
    ] {
        assert!(
            written.contains(expected),
            "{expected:?} missing:\n{written}"
        );
    }
    // Unmapped settings are comments naming them, and listed on stderr.
    for name in [
        "SOME_FUTURE_SETTING = 1",
        "MYSQL_SYSTEM_DIR",
        "DBNAME = dbt3_results",
        "RUN = 0",
    ] {
        assert!(written.contains(name), "{name} missing:\n{written}");
    }
    assert!(err.contains("SOME_FUTURE_SETTING"), "{err}");
    // An existing output is not replaced without --force.
    let e = error_line(&import(&["-o", plan.to_str().unwrap()]));
    assert!(e.contains("--force"), "{e}");

    // The plan loads, and runs: the managed MariaDB restarted per query with query 2's own
    // parameter, the external PostgreSQL without restarts.
    ok(dbrig(
        out.path(),
        &["run", plan.to_str().unwrap(), "--dry-run"],
    ));
    ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let o = ok(dbrig(out.path(), &["tpch", "report", "--markdown"]));
    let t = text(&o);
    assert!(
        t.contains("mariadb-innodb") && t.contains("postgresql"),
        "{t}"
    );
    assert!(t.contains("| Q2 |"), "{t}");
    // 3-opt ran on MariaDB only: `-` for PostgreSQL.
    let line = t
        .lines()
        .find(|l| l.starts_with("| Q3-opt |"))
        .unwrap_or_else(|| panic!("{t}"));
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    assert_eq!(cells[5], "-", "{line}");
    assert_ne!(cells[2], "-", "{line}");
    // The plan's report heads each workload's table with the launcher's GRAPH_HEADING.
    let t = text(&ok(dbrig(out.path(), &["report"])));
    for heading in ["MariaDB + InnoDB", "PostgreSQL"] {
        assert!(
            t.contains(&format!("{heading}: TPC-H power test, seconds per query")),
            "{heading}: {t}"
        );
    }
}

/// Stops a server that `dbrig server start` left running, when dropped.
struct StopServerOnDrop<'a>(&'a std::path::Path, &'static str);

impl Drop for StopServerOnDrop<'_> {
    fn drop(&mut self) {
        let _ = dbrig(self.0, &["server", "stop", self.1]);
    }
}

// ---- OS statistics per query run (the launcher sampled the OS per query run) ----

/// The spans of every run of `q` (warm-ups too), as (start, end) seconds.
fn run_spans(q: &serde_json::Value) -> Vec<(f64, f64)> {
    q["detail"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let os = &r["os"];
            (
                os["start_s"]
                    .as_f64()
                    .expect("every run has its OS figures"),
                os["os"]["t_s"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn os_statistics_per_query_run_line_up_with_the_trials_samples() {
    let out = tempfile::tempdir().unwrap();
    let lite = format!("sqlite:{}", out.path().join("os.sqlite").display());
    load(out.path(), &lite, "after");
    let v = controlled(
        out.path(),
        &lite,
        &[
            "--warmups",
            "1",
            "--runs",
            "2",
            "--os-stats-interval",
            "0.1",
        ],
    );
    let queries = v["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 22);
    // Every run has its own span, in the order the runs ran, none overlapping the next.
    let mut last_end = 0.0;
    for q in queries {
        let spans = run_spans(q);
        assert_eq!(spans.len(), 3, "a warm-up and two runs: {q}");
        for (start, end) in spans {
            assert!(start >= last_end && end >= start, "{q}");
            last_end = end;
        }
        let os = &q["os"]["os"];
        for share in [
            "cpu_user_pct",
            "cpu_system_pct",
            "cpu_iowait_pct",
            "cpu_idle_pct",
        ] {
            let p = os[share].as_f64().unwrap();
            assert!((0.0..=100.0).contains(&p), "{share}: {q}");
        }
        // The query's figures are over its two measured runs, not the warm-up.
        let runs = run_spans(q);
        assert_eq!(q["os"]["start_s"].as_f64().unwrap(), runs[1].0, "{q}");
        assert_eq!(q["os"]["os"]["t_s"].as_f64().unwrap(), runs[2].1, "{q}");
    }
    // The spans are on the clock of the trial's stored samples: inside the sampled time.
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.runs().unwrap().pop().unwrap();
    let cell = store.cells(run.id).unwrap().pop().unwrap();
    let trial = store.trials(cell.id).unwrap().pop().unwrap();
    let samples = store.os_samples(trial.id).unwrap();
    let sampled_until = samples.last().expect("samples every 0.1 s").t_s;
    assert!(
        last_end <= sampled_until + 0.1,
        "last run ended at {last_end} s, samples end at {sampled_until} s"
    );
    // Shown: by `dbrig report --with os` and on the HTML page, a row per run.
    let report = text(&ok(dbrig(
        out.path(),
        &["report", &run.id.0.to_string(), "--with", "os"],
    )));
    assert!(report.contains("OS statistics per query run"), "{report}");
    let q14 = report
        .lines()
        .filter(|l| l.trim_start().starts_with("Q14 "))
        .count();
    assert_eq!(q14, 3, "a row per run of Q14: {report}");
    // The single command's own output has the table too.
    let o = text(&ok(dbrig(
        out.path(),
        &[
            "tpch",
            "power",
            "--target",
            &lite,
            "--no-refresh",
            "--os-stats-interval",
            "0.5",
        ],
    )));
    assert!(
        o.contains("OS statistics per query run") && o.contains("server CPU %"),
        "{o}"
    );
    // OS sampling off: nothing recorded, nothing shown.
    let v = controlled(out.path(), &lite, &["--os-stats-interval", "0"]);
    assert!(
        v["queries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q["os"].is_null()),
        "{v}"
    );
}

#[test]
fn throughput_queries_carry_their_os_figures() {
    let out = tempfile::tempdir().unwrap();
    let (_, v) = throughput(
        out.path(),
        &[
            "--target",
            "mock:?latency_us=1000",
            "--no-refresh",
            "--streams",
            "2",
            "--os-stats-interval",
            "0.05",
        ],
    );
    for s in v["query_streams"].as_array().unwrap() {
        let mut last_end = 0.0;
        for q in s["queries"].as_array().unwrap() {
            let start = q["os"]["start_s"]
                .as_f64()
                .expect("each query's OS figures");
            let end = q["os"]["os"]["t_s"].as_f64().unwrap();
            // A stream's queries run one after another.
            assert!(start >= last_end && end >= start, "{q}");
            last_end = end;
        }
    }
}

/// `params-mode` on a managed MariaDB: a query's own startup parameters replace its
/// configuration's (the DBT-3 launcher's way, the default), or `merge` over them; the
/// server each query ran on says which, through the query's pre-run SQL.
#[test]
fn query_params_replace_or_merge_the_configurations_on_a_managed_server() {
    let out = tempfile::tempdir().unwrap();
    let qdir = out.path().join("q");
    std::fs::create_dir_all(&qdir).unwrap();
    std::fs::write(qdir.join("a.sql"), "select count(*) from nation").unwrap();
    std::fs::write(qdir.join("b.sql"), "select count(*) from region").unwrap();
    let workload = |label: &str, mode: &str| {
        format!(
            r#"
[[workload]]
name = "tpch-power"
label = "{label}"
[workload.options]
sf = 0.01
query-dir = "{q}"
[workload.options.controls]
{mode}
[workload.options.controls.all]
pre-sql = "select concat(@@join_cache_level, ' ', @@optimizer_search_depth)"
[workload.options.controls.query.b]
params = ["join_cache_level=6"]
"#,
            q = qdir.display()
        )
    };
    let plan = out.path().join("params-mode.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"params-mode\"\ntrials = 1\nclients = [1]\n\
             [[server]]\nname = \"pmode\"\nengine = \"mariadb\"\n\
             [[configuration]]\nname = \"A\"\nserver = \"pmode\"\n\
             params = [\"optimizer_search_depth=5\"]\n{}{}\
             [environment]\nos-stats-interval = 0\n",
            workload("replace", ""),
            workload("merge", "params-mode = \"merge\""),
        ),
    )
    .unwrap();
    ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    // Each query's pre-run SQL output: "join_cache_level optimizer_search_depth".
    let levels = |label: &str| -> Vec<(String, String)> {
        let cell = store
            .cells(run)
            .unwrap()
            .into_iter()
            .find(|c| c.workload == label)
            .unwrap_or_else(|| panic!("no cell {label}"));
        let trial = store.trials(cell.id).unwrap().pop().unwrap();
        let v = crate::trial_json(&trial);
        v["tpch_power"]["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let pre = q["detail"]["hooks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|h| h["hook"] == "pre-run-sql")
                    .unwrap_or_else(|| panic!("{q}"));
                (
                    q["name"].as_str().unwrap().to_owned(),
                    pre["output"].as_str().unwrap().trim().to_owned(),
                )
            })
            .collect()
    };
    let replace = levels("replace");
    let merge = levels("merge");
    let of = |v: &[(String, String)], q: &str| {
        v.iter()
            .find(|(n, _)| n == q)
            .map(|(_, o)| o.clone())
            .unwrap()
    };
    // a has no parameters of its own: the configuration's search depth.
    assert!(of(&replace, "a").ends_with(" 5"), "{replace:?}");
    assert!(of(&merge, "a").ends_with(" 5"), "{merge:?}");
    // b: its join_cache_level instead of the configuration's parameters (the search depth
    // back at the server's default), or over them.
    let b_replace = of(&replace, "b");
    assert!(
        b_replace.starts_with("6 ") && !b_replace.ends_with(" 5"),
        "{replace:?}"
    );
    assert_eq!(of(&merge, "b"), "6 5", "{merge:?}");
}
