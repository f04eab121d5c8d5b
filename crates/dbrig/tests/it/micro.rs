//! `dbrig micro …`: the seeds' micro-benchmarks end to end on MariaDB (MEMORY, InnoDB, Aria),
//! PostgreSQL and SQLite, each server test in a `dbrig_micro_<x>` database of its own.

use std::path::Path;
use std::process::Command;

use crate::{dbrig, error_line, json, ok, text};

/// A MariaDB database of the test's own, dropped at the end.
struct MariaDb(String);

impl MariaDb {
    fn new(name: &str) -> Self {
        let db = format!("dbrig_micro_{name}_{}", std::process::id());
        mariadb(&format!(
            "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        ));
        MariaDb(db)
    }

    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}", self.0)
    }

    /// The tables left in the database.
    fn tables(&self) -> String {
        mariadb(&format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = '{}' ORDER BY 1",
            self.0
        ))
    }
}

impl Drop for MariaDb {
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
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A PostgreSQL database of the test's own, dropped at the end.
struct PgDb(String);

impl PgDb {
    fn new(name: &str) -> Self {
        let db = format!("dbrig_micro_{name}_{}", std::process::id());
        psql(
            "postgres",
            &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
        );
        psql("postgres", &format!("CREATE DATABASE {db}"));
        PgDb(db)
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.0)
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        psql(
            "postgres",
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0),
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
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `dbrig micro BENCH --target URL ARGS… --format json`, which must succeed; the result
/// echoes what was asked: the target's dialect, `--rows` (or 2^`--rows-log2`), `--runs`,
/// `--cpu-mhz`.
fn micro_json(out: &Path, bench: &str, target: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["micro", bench, "--target", target, "--format", "json"];
    all.extend(args);
    let v = json(&ok(dbrig(out, &all)));
    let dialect = target.split(':').next().unwrap();
    assert_eq!(v["dialect"], dialect, "{v}");
    let arg = |name: &str| args.windows(2).find(|w| w[0] == name).map(|w| w[1]);
    if let Some(rows) = arg("--rows") {
        assert_eq!(v["rows"].as_u64(), rows.parse().ok(), "{v}");
    }
    if let Some(log2) = arg("--rows-log2") {
        assert_eq!(
            v["rows"].as_u64(),
            Some(1 << log2.parse::<u32>().unwrap()),
            "{v}"
        );
    }
    if let Some(runs) = arg("--runs") {
        assert_eq!(v["runs"].as_u64(), runs.parse().ok(), "{v}");
    }
    if let Some(mhz) = arg("--cpu-mhz") {
        assert_eq!(v["cpu_mhz"].as_f64(), mhz.parse().ok(), "{v}");
    }
    v
}

/// Equal to within the rounding of printed figures: dbrig prints every figure by one rule
/// (at least 4 significant digits), so a figure derived here from printed inputs is off by
/// at most half a unit in their 4th digit, 5e-4 relative (1e-3 leaves room for two of them).
#[track_caller]
fn assert_figure(got: Option<f64>, want: f64, what: &str, item: &serde_json::Value) {
    let got = got.unwrap_or_else(|| panic!("{what} missing: {item}"));
    assert!(
        (got - want).abs() <= 1e-3 * want.abs(),
        "{what}: {got}, expected {want}: {item}"
    );
}

/// The result's items, in order, each with its figures derived from its own runs: mean,
/// min and max of the values; values from the run times in the item's unit; rows/s, MB/s
/// and cycles/row from the mean run time, the rows, the data length and the CPU frequency.
fn check_result(v: &serde_json::Value, bench: &str, runs: usize, names: &[&str]) {
    assert_eq!(v["benchmark"], bench, "{v}");
    assert_eq!(v["status"], "done", "{v}");
    assert!(v["run_id"].as_u64().is_some_and(|id| id >= 1), "{v}");
    let items = v["items"].as_array().unwrap();
    let got: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(got, names, "{v}");
    let mhz = v["cpu_mhz"].as_f64();
    for i in items {
        let floats = |key: &str| -> Vec<f64> {
            i[key]
                .as_array()
                .unwrap_or_else(|| panic!("{key}: {i}"))
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (values, seconds) = (floats("values"), floats("wall_s"));
        assert_eq!((values.len(), seconds.len()), (runs, runs), "{i}");
        assert!(seconds.iter().all(|s| *s > 0.0), "{i}");
        // A rate over all runs is the total over the total time, as rows_per_s below; any
        // other unit the mean of the runs.
        let mean = match i["unit"].as_str() {
            Some("rows/s") => {
                let mean_s = seconds.iter().sum::<f64>() / runs as f64;
                i["rows"].as_u64().unwrap() as f64 / mean_s
            }
            _ => values.iter().sum::<f64>() / runs as f64,
        };
        assert_figure(i["mean"].as_f64(), mean, "mean", i);
        assert_eq!(
            i["min"].as_f64(),
            Some(values.iter().copied().fold(f64::INFINITY, f64::min))
        );
        assert_eq!(
            i["max"].as_f64(),
            Some(values.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        );
        let rows = i["rows"].as_u64().unwrap();
        assert!(rows > 0, "{i}");
        match i["unit"].as_str().unwrap() {
            "rows/s" => {
                for (value, s) in values.iter().zip(&seconds) {
                    assert_figure(Some(*value), rows as f64 / s, "rows/s of a run", i);
                }
            }
            "s" => assert_eq!(values, seconds, "{i}"),
            // Checked with the loop's query count in check_scan.
            "ms/query" => {}
            u => panic!("unit {u}: {i}"),
        }
        let mean_s = seconds.iter().sum::<f64>() / runs as f64;
        assert_figure(
            i["rows_per_s"].as_f64(),
            rows as f64 / mean_s,
            "rows_per_s",
            i,
        );
        match i["data_bytes"].as_u64() {
            Some(bytes) => {
                assert!(bytes > 0, "{i}");
                assert_figure(
                    i["mb_per_s"].as_f64(),
                    bytes as f64 / mean_s / 1e6,
                    "mb_per_s",
                    i,
                );
            }
            None => assert!(i["mb_per_s"].is_null(), "{i}"),
        }
        // Cycles per row for the rate items (a GROUP BY's seconds have none).
        match (mhz, i["unit"] != "s") {
            (Some(mhz), true) => assert_figure(
                i["cycles_per_row"].as_f64(),
                mhz * 1e6 * mean_s / rows as f64,
                "cycles_per_row",
                i,
            ),
            _ => assert!(i["cycles_per_row"].is_null(), "{i}"),
        }
        assert!(i["sql"].as_str().is_some_and(|s| !s.is_empty()), "{i}");
    }
}

const SCAN_ITEMS: [&str; 6] = [
    "count(*) WHERE i>0",
    "sum(i)",
    "avg(i)",
    "avg(i+sqrt(i+1)+abs(i))",
    "m4: count(*) WHERE c>'a'",
    "in-cache loop (server-side procedure): m1 (500 rows) count(*) WHERE i>0 x20",
];

/// SQLite has no stored procedures: its in-cache loop is client round trips.
const CLIENT_LOOP: &str =
    "in-cache loop (client round trips): m1 (500 rows) count(*) WHERE i>0 x20";

const SCAN_ARGS: [&str; 12] = [
    "--rows",
    "3000",
    "--wide-rows",
    "1000",
    "--loop-rows",
    "500",
    "--loop-queries",
    "20",
    "--runs",
    "2",
    "--cpu-mhz",
    "2000",
];

fn check_scan(v: &serde_json::Value) {
    let items = v["items"].as_array().unwrap();
    // Every scan item has a data length, so MB/s (check_result derives it).
    for i in items {
        assert!(i["data_bytes"].as_u64().unwrap() > 0, "{i}");
    }
    // SCAN_ARGS: the 1000 wide rows for m4, and the loop of 20 queries over 500 rows, each
    // value its run's milliseconds per query.
    assert_eq!(items[items.len() - 2]["rows"], 1000, "{v}");
    let in_loop = items.last().unwrap();
    assert_eq!(in_loop["rows"], 500 * 20, "{v}");
    let ms: Vec<f64> = in_loop["wall_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap() * 1000.0 / 20.0)
        .collect();
    let values: Vec<f64> = in_loop["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(values.len(), ms.len(), "{in_loop}");
    for (value, ms) in values.iter().zip(&ms) {
        assert_figure(Some(*value), *ms, "ms/query of a run", in_loop);
    }
    // A third of the rows match i>0, and sum(i) is the same count (values are 0 and 1).
    let count: u64 = items[0]["answer"].as_str().unwrap().parse().unwrap();
    assert!((800..1200).contains(&count), "{count}");
    let sum: f64 = items[1]["answer"].as_str().unwrap().parse().unwrap();
    assert_eq!(sum as u64, count);
    assert_eq!(items.last().unwrap()["unit"], "ms/query");
}

const GROUPBY_ITEMS: [&str; 6] = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"];

#[test]
fn mariadb_memory_load_memory_innodb_and_btree() {
    let db = MariaDb::new("load");
    let out = tempfile::tempdir().unwrap();
    let v = micro_json(
        out.path(),
        "memory_load",
        &db.url(),
        &["--rows", "3000", "--runs", "2"],
    );
    check_result(&v, "memory_load", 2, &["INT", "CHAR(20)"]);
    assert_eq!(v["engine"], "MEMORY");
    assert_eq!(v["items"][0]["unit"], "rows/s");
    assert!(v["items"][0]["data_bytes"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(db.tables().trim(), "", "tables are dropped afterwards");

    let v = micro_json(
        out.path(),
        "memory_load",
        &db.url(),
        &[
            "--rows",
            "2000",
            "--runs",
            "1",
            "--engine",
            "innodb",
            "--key-types",
            "int",
        ],
    );
    check_result(&v, "memory_load", 1, &["INT"]);
    assert_eq!(v["engine"], "INNODB");

    // --index btree on MEMORY, kept: the index really is a B-tree, and the table is recorded.
    let o = ok(dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &db.url(),
            "--rows",
            "1000",
            "--runs",
            "1",
            "--index",
            "btree",
            "--key-types",
            "char",
            "--keep",
        ],
    ));
    let t = text(&o);
    assert!(t.contains("CHAR(20):") && t.contains("rows/s"), "{t}");
    let index = mariadb(&format!(
        "SELECT index_type FROM information_schema.statistics WHERE table_schema = '{}' AND table_name = 't1'",
        db.0
    ));
    assert_eq!(index.trim(), "BTREE");
    assert_eq!(
        mariadb(&format!(
            "SELECT kind FROM {}.dbrig_objects WHERE name = 't1'",
            db.0
        ))
        .trim(),
        "micro_table"
    );
    // A kept table of dbrig's own is replaced by the next run.
    ok(dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &db.url(),
            "--rows",
            "500",
            "--runs",
            "1",
        ],
    ));
    assert_eq!(db.tables().trim(), "");
}

#[test]
fn mariadb_errors_are_clear() {
    let db = MariaDb::new("errors");
    let out = tempfile::tempdir().unwrap();
    // A MEMORY table that cannot hold the rows: the message names the setting and the size.
    let e = error_line(&dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &db.url(),
            "--rows",
            "50000",
            "--runs",
            "1",
            "--max-heap-table-size",
            "16384",
        ],
    ));
    assert!(
        e.contains("max_heap_table_size")
            && e.contains("--max-heap-table-size")
            && e.contains("bytes are needed"),
        "{e}"
    );
    assert_eq!(
        db.tables().trim(),
        "",
        "nothing left behind after a failure"
    );
    let runs = text(&ok(dbrig(out.path(), &["runs"])));
    assert!(runs.contains("micro") && runs.contains("failed"), "{runs}");

    let e = error_line(&dbrig(
        out.path(),
        &[
            "micro",
            "scan_filter",
            "--target",
            &db.url(),
            "--engine",
            "nosuch",
        ],
    ));
    assert!(
        e.contains("nosuch") && e.contains("not available") && e.contains("--engine"),
        "{e}"
    );

    let e = error_line(&dbrig(
        out.path(),
        &[
            "micro",
            "tmp_groupby",
            "--target",
            &db.url(),
            "--engine",
            "memory",
            "--rows-log2",
            "4",
        ],
    ));
    assert!(e.contains("TEXT"), "{e}");

    // A table of the same name that dbrig did not create is left alone.
    mariadb(&format!("CREATE TABLE {}.t1 (x INT)", db.0));
    let e = error_line(&dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &db.url(),
            "--rows",
            "100",
            "--runs",
            "1",
        ],
    ));
    assert!(
        e.contains("t1") && e.contains("not created by dbrig"),
        "{e}"
    );
}

#[test]
fn mariadb_scan_filter_memory_and_innodb() {
    let db = MariaDb::new("scan");
    let out = tempfile::tempdir().unwrap();
    for engine in ["memory", "innodb"] {
        let mut args = SCAN_ARGS.to_vec();
        args.extend(["--engine", engine]);
        let v = micro_json(out.path(), "scan_filter", &db.url(), &args);
        check_result(&v, "scan_filter", 2, &SCAN_ITEMS);
        check_scan(&v);
        assert_eq!(v["engine"], engine.to_uppercase());
        if engine == "memory" {
            check_memory_bytes(&db, &v);
        }
        // Seed 004's loop inside the server: the server itself counted the 20 queries of a
        // run, in one CALL.
        let looped = &v["items"][5];
        assert_eq!(looped["server_statements"], 20, "{looped}");
        assert_eq!(looped["sql"], "CALL dbrig_scan_loop(20)", "{looped}");
    }
    // Round trips on request, said in the item's name; the server counts the same queries.
    let mut args = SCAN_ARGS.to_vec();
    args.extend(["--engine", "memory", "--loop-mode", "client"]);
    let v = micro_json(out.path(), "scan_filter", &db.url(), &args);
    let looped = &v["items"][5];
    assert_eq!(looped["name"], CLIENT_LOOP, "{looped}");
    assert_eq!(looped["server_statements"], 20, "{looped}");
    // The procedure is dropped with the tables.
    assert_eq!(
        mariadb(&format!(
            "SELECT count(*) FROM information_schema.routines WHERE routine_schema = '{}'",
            db.0
        ))
        .trim(),
        "0"
    );
    assert_eq!(db.tables().trim(), "");
}

/// MEMORY tables: MB/s divides rows × the server's average row length (its record length,
/// asked of tables the test makes itself), not the 16 MiB a MEMORY table allocates.
fn check_memory_bytes(db: &MariaDb, v: &serde_json::Value) {
    let avg = |definition: &str| -> u64 {
        let out = mariadb(&format!(
            "CREATE TABLE {db}.ref_t ({definition}) ENGINE = MEMORY DEFAULT CHARSET = latin1; \
             SELECT avg_row_length FROM information_schema.tables \
             WHERE table_schema = '{db}' AND table_name = 'ref_t'; DROP TABLE {db}.ref_t",
            db = db.0
        ));
        out.trim().parse().unwrap()
    };
    let (narrow, wide) = (avg("i INT NOT NULL"), avg("c CHAR(128) NOT NULL"));
    assert_eq!((narrow, wide), (5, 129), "MariaDB's MEMORY record lengths");
    let items = v["items"].as_array().unwrap();
    let bytes = |i: usize| items[i]["data_bytes"].as_u64().unwrap();
    for (i, item) in items.iter().enumerate().take(4) {
        assert_eq!(bytes(i), 3000 * narrow, "{item}");
    }
    assert_eq!(bytes(4), 1000 * wide, "{}", items[4]);
    // The in-cache loop reads its 500 rows 20 times.
    assert_eq!(bytes(5), 500 * 20 * narrow, "{}", items[5]);
    for i in items {
        let seconds: Vec<f64> = i["wall_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_f64().unwrap())
            .collect();
        let mean = seconds.iter().sum::<f64>() / seconds.len() as f64;
        let mbs = i["data_bytes"].as_f64().unwrap() / mean / 1e6;
        let got = i["mb_per_s"].as_f64().unwrap();
        // Both printed by the one rounding rule (4 decimals, 4 significant digits below 0.001).
        assert!(
            (got - mbs).abs() <= mbs * 1e-3 + 1e-4,
            "{got} vs {mbs}: {i}"
        );
    }
}

#[test]
fn mariadb_tmp_groupby_innodb_and_aria() {
    let db = MariaDb::new("groupby");
    let out = tempfile::tempdir().unwrap();
    for engine in ["innodb", "aria"] {
        let v = micro_json(
            out.path(),
            "tmp_groupby",
            &db.url(),
            &["--rows-log2", "11", "--runs", "2", "--engine", engine],
        );
        check_result(&v, "tmp_groupby", 2, &GROUPBY_ITEMS);
        assert_eq!(v["rows"], 2048);
        assert_eq!(v["items"][0]["unit"], "s");
        // left(id,1): the first digits; id % 100: 100 groups.
        let q1 = v["items"][0]["answer"].as_str().unwrap();
        assert!(
            q1.starts_with("9 groups") || q1.starts_with("10 groups"),
            "{q1}"
        );
        assert!(
            v["items"][4]["answer"]
                .as_str()
                .unwrap()
                .starts_with("100 groups"),
            "{v}"
        );
    }
    let o = ok(dbrig(
        out.path(),
        &[
            "micro",
            "tmp_groupby",
            "--target",
            &db.url(),
            "--rows-log2",
            "8",
            "--runs",
            "1",
        ],
    ));
    let t = text(&o);
    assert!(t.contains("engine MYISAM") && t.contains("Q6:"), "{t}");
    assert_eq!(db.tables().trim(), "");
}

#[test]
fn postgres_all_three() {
    let db = PgDb::new("pg");
    let out = tempfile::tempdir().unwrap();
    let v = micro_json(
        out.path(),
        "memory_load",
        &db.url(),
        &["--rows", "3000", "--runs", "2"],
    );
    check_result(&v, "memory_load", 2, &["INT", "CHAR(20)"]);
    assert!(v["engine"].is_null());
    let v = micro_json(out.path(), "scan_filter", &db.url(), &SCAN_ARGS);
    check_result(&v, "scan_filter", 2, &SCAN_ITEMS);
    check_scan(&v);
    let v = micro_json(
        out.path(),
        "tmp_groupby",
        &db.url(),
        &["--rows-log2", "11", "--runs", "2"],
    );
    check_result(&v, "tmp_groupby", 2, &GROUPBY_ITEMS);
    assert!(
        v["items"][5]["answer"]
            .as_str()
            .unwrap()
            .starts_with("100 groups"),
        "{v}"
    );
    let e = error_line(&dbrig(
        out.path(),
        &[
            "micro",
            "memory_load",
            "--target",
            &db.url(),
            "--engine",
            "memory",
        ],
    ));
    assert!(e.contains("--engine"), "{e}");
    let left = psql(
        &db.0,
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
    );
    assert_eq!(left.trim(), "0");
}

#[test]
fn sqlite_all_three() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("micro.sqlite").display());
    let v = micro_json(
        out.path(),
        "memory_load",
        &target,
        &["--rows", "3000", "--runs", "2"],
    );
    check_result(&v, "memory_load", 2, &["INT", "CHAR(20)"]);
    let v = micro_json(out.path(), "scan_filter", &target, &SCAN_ARGS);
    let mut names = SCAN_ITEMS.to_vec();
    names.remove(3);
    *names.last_mut().unwrap() = CLIENT_LOOP;
    check_result(&v, "scan_filter", 2, &names);
    check_scan(&v);
    assert!(v["skipped"][0].as_str().unwrap().contains("sqrt"), "{v}");
    let v = micro_json(
        out.path(),
        "tmp_groupby",
        &target,
        &["--rows-log2", "11", "--runs", "2"],
    );
    check_result(&v, "tmp_groupby", 2, &GROUPBY_ITEMS);
    // The run is stored with its result in the trial's extra JSON.
    let runs = text(&ok(dbrig(out.path(), &["runs"])));
    assert!(
        runs.contains("tmp_groupby") && runs.contains("done"),
        "{runs}"
    );
}
