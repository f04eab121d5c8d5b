//! The machine's MariaDB at 127.0.0.1:3306 (root, no password).

use std::process::Command;

use crate::{
    dbrig, error_line, every_workload, json, missing_and_existing_tables, ok,
    read_write_counts as check_read_write_counts,
};

/// A database of the test's own on the shared server, dropped at the end.
pub struct TestDb(pub String);

impl TestDb {
    pub fn new(name: &str) -> Self {
        let db = format!("dbrig_it_{name}_{}", std::process::id());
        sql(&format!(
            "DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"
        ));
        TestDb(db)
    }

    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}", self.0)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        sql(&format!("DROP DATABASE IF EXISTS {}", self.0));
    }
}

pub fn sql(statements: &str) -> String {
    let o = Command::new("mariadb")
        .args(["-uroot", "-h127.0.0.1", "-N", "-B", "-e", statements])
        .output()
        .expect("the mariadb client is installed with the server");
    assert!(
        o.status.success(),
        "mariadb -e {statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_workload_end_to_end() {
    let db = TestDb::new("all");
    let out = tempfile::tempdir().unwrap();
    let reports = every_workload(&db.url(), out.path());
    assert!(
        reports
            .iter()
            .all(|r| r["server_version"].as_str().unwrap().contains("MariaDB"))
    );
}

#[test]
fn read_write_counts_exact() {
    let db = TestDb::new("rw");
    let out = tempfile::tempdir().unwrap();
    check_read_write_counts(&db.url(), out.path());
}

#[test]
fn storage_engines() {
    let db = TestDb::new("engines");
    let out = tempfile::tempdir().unwrap();
    for engine in ["myisam", "aria", "memory"] {
        let common = [
            "oltp_read_write",
            "--target",
            &db.url(),
            "--table-size",
            "500",
            "--mysql-storage-engine",
            engine,
        ];
        ok(dbrig(out.path(), &[&["prepare"][..], &common].concat()));
        let created = sql(&format!(
            "SELECT engine FROM information_schema.tables WHERE table_schema='{}' AND table_name='sbtest1'",
            db.0
        ));
        assert_eq!(created.trim().to_lowercase(), engine, "{engine}");
        let v = json(&ok(dbrig(
            out.path(),
            &[
                &["run"][..],
                &common,
                &["--events", "20", "--time", "0", "--format", "json"],
            ]
            .concat(),
        )));
        assert_eq!(v["transactions"], 20);
        ok(dbrig(out.path(), &[&["cleanup"][..], &common].concat()));
    }
}

#[test]
fn runs_on_tables_it_did_not_create_but_refuses_to_drop_them() {
    let db = TestDb::new("foreign");
    let out = tempfile::tempdir().unwrap();
    // A table as sysbench creates it.
    sql(&format!(
        "CREATE TABLE {}.sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB; \
         INSERT INTO {}.sbtest1 (k, c, pad) SELECT seq, 'c', 'p' FROM {}.seq_1_to_1000",
        db.0, db.0, db.0
    ));
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &db.url(),
            "--table-size",
            "1000",
            "--events",
            "50",
            "--time",
            "0",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["transactions"], 50);
    let e = error_line(&dbrig(
        out.path(),
        &["cleanup", "oltp_point_select", "--target", &db.url()],
    ));
    assert!(e.contains("not created by dbrig"), "{e}");
    assert_eq!(
        sql(&format!("SELECT COUNT(*) FROM {}.sbtest1", db.0)).trim(),
        "1000"
    );
}

#[test]
fn tables_errors() {
    let db = TestDb::new("tables");
    let out = tempfile::tempdir().unwrap();
    missing_and_existing_tables(&db.url(), out.path());
}

#[test]
fn killed_connections_reconnect() {
    let db = TestDb::new("kill");
    let out = tempfile::tempdir().unwrap();
    let common = [
        "oltp_read_only",
        "--target",
        &db.url(),
        "--table-size",
        "1000",
    ];
    ok(dbrig(out.path(), &[&["prepare"][..], &common].concat()));
    let url = db.url();
    let name = db.0.clone();
    let runner = std::thread::spawn({
        let out = out.path().to_owned();
        move || {
            dbrig(
                &out,
                &[
                    "run",
                    "oltp_read_only",
                    "--target",
                    &url,
                    "--table-size",
                    "1000",
                    "--threads",
                    "2",
                    "--time",
                    "5",
                    "--format",
                    "json",
                ],
            )
        }
    });
    // Kill the clients once they run (not after a fixed time a busy machine may miss): the
    // sessions seen running the workload's statements on sbtest1, not dbrig's probes,
    // evidence or checks (on a loaded machine those were often the first sessions in the
    // database: the run then failed in its checks, or had nothing to reconnect). A client
    // starved of CPU shows asleep most of the time, so the sessions seen within a second of
    // the first are killed, at least one.
    let mut ids = std::collections::BTreeSet::new();
    let mut first_seen = None::<std::time::Instant>;
    for _ in 0..600 {
        ids.extend(
            sql(&format!(
                "SELECT id FROM information_schema.processlist WHERE db='{name}' \
                 AND info LIKE '%sbtest1%'"
            ))
            .split_whitespace()
            .map(str::to_owned),
        );
        if !ids.is_empty() {
            let since = *first_seen.get_or_insert_with(std::time::Instant::now);
            if ids.len() >= 2 || since.elapsed() > std::time::Duration::from_secs(1) {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if ids.is_empty() {
        let o = runner.join().unwrap();
        panic!("the clients never ran:\n{}", crate::text(&o));
    }
    for id in &ids {
        let _ = Command::new("mariadb")
            .args(["-uroot", "-h127.0.0.1", "-e", &format!("KILL {id}")])
            .output();
    }
    let o = ok(runner.join().unwrap());
    let v = json(&o);
    assert!(v["reconnects"].as_u64().unwrap() >= 1, "{v}");
    assert!(v["transactions"].as_u64().unwrap() > 0);
}

/// A client blocked in a statement that never finishes (a row lock held elsewhere) is
/// abandoned after the grace period: the run ends and says so, instead of waiting for the
/// server. With one client the connection makes blocking socket calls, so this is the
/// abandon flag at work, not a dropped future.
#[test]
fn a_statement_stuck_past_the_grace_period_is_abandoned() {
    let db = TestDb::new("stuck");
    let out = tempfile::tempdir().unwrap();
    let common = [
        "oltp_update_non_index",
        "--target",
        &db.url(),
        "--table-size",
        "100",
    ];
    ok(dbrig(out.path(), &[&["prepare"][..], &common].concat()));
    // Holds every row for 40 s (below innodb_lock_wait_timeout's default 50 s).
    let mut locker = Command::new("mariadb")
        .args([
            "-uroot",
            "-h127.0.0.1",
            &db.0,
            "-e",
            "BEGIN; SELECT COUNT(*) FROM sbtest1 FOR UPDATE; DO SLEEP(40); ROLLBACK;",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the locker holds the rows (it has reached its SLEEP), not for a fixed time.
    let mut holding = false;
    for _ in 0..600 {
        let n = sql(&format!(
            "SELECT COUNT(*) FROM information_schema.processlist WHERE db='{}' AND info LIKE 'DO SLEEP%'",
            db.0
        ));
        if n.trim() == "1" {
            holding = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(holding, "the locker never took its locks");
    let started = std::time::Instant::now();
    let o = dbrig(
        out.path(),
        &[
            &["run"][..],
            &common,
            &["--threads", "1", "--time", "1", "--format", "json"],
        ]
        .concat(),
    );
    let took = started.elapsed();
    let _ = locker.kill();
    let _ = locker.wait();
    // Stop at 1 s, grace 5 s, then the abandon flag is seen within 250 ms.
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    let v = json(&o);
    let fatal = v["fatal_errors"].to_string();
    assert!(fatal.contains("abandoned"), "{v}");
    assert_eq!(v["transactions"].as_u64(), Some(0), "{v}");
}

#[test]
fn password_handling() {
    let out = tempfile::tempdir().unwrap();
    let db = TestDb::new("pw");
    // Per process: two test runs on one server must not drop each other's user.
    let user = format!("dbrig_it_pw_{}", std::process::id());
    sql(&format!(
        "DROP USER IF EXISTS '{user}'@'%'; DROP USER IF EXISTS '{user}'@'localhost'; \
         CREATE USER '{user}'@'%' IDENTIFIED BY 'Sekr3t-pw'; CREATE USER '{user}'@'localhost' IDENTIFIED BY 'Sekr3t-pw'; \
         GRANT ALL ON {db}.* TO '{user}'@'%'; GRANT ALL ON {db}.* TO '{user}'@'localhost'",
        db = db.0
    ));
    let target = format!("mysql://{user}@127.0.0.1:3306/{}", db.0);
    // Wrong password: one line naming the problem, no secret in it.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args([
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--password-env",
            "DBRIG_IT_PW",
            "--time",
            "1",
        ])
        .arg(format!("--out={}", out.path().display()))
        .env("DBRIG_IT_PW", "wrong-one")
        .output()
        .unwrap();
    let e = error_line(&o);
    assert!(!e.contains("wrong-one"), "{e}");
    assert!(
        e.to_lowercase().contains("access denied") || e.contains("1045"),
        "{e}"
    );
    // Nothing was measured, so nothing is stored: no failed run (issue 30, item 27).
    let runs = crate::json(&crate::ok(crate::dbrig(
        out.path(),
        &["runs", "--format", "json"],
    )));
    assert_eq!(runs, serde_json::json!([]), "a failed login was stored");
    // Right password from a file: the run reaches the server (tables missing is the next error).
    let pw = out.path().join("pw");
    std::fs::write(&pw, "Sekr3t-pw\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pw, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--password-file",
            pw.to_str().unwrap(),
            "--time",
            "1",
            "--table-size",
            "1",
        ],
    );
    let e = error_line(&o);
    assert!(e.contains("does not exist") || e.contains("sbtest1"), "{e}");
    // A password in the URL works with a warning and is never printed or stored.
    let url_target = format!("mysql://{user}:Sekr3t-pw@127.0.0.1:3306/{}", db.0);
    let o = dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &url_target,
            "--time",
            "1",
        ],
    );
    let all = crate::text(&o);
    assert!(
        all.contains("warning: the password in the target URL"),
        "{all}"
    );
    assert!(!all.contains("Sekr3t"), "{all}");
    let stored = std::fs::read(out.path().join("results.db")).unwrap();
    assert!(!String::from_utf8_lossy(&stored).contains("Sekr3t"));
    sql(&format!(
        "DROP USER '{user}'@'%'; DROP USER '{user}'@'localhost'"
    ));
}

/// MyISAM at 16 clients: sysbench's concurrent delete/insert pairs of one id collide (1062,
/// the seeds' "dup key errors (due to sysbench)"). By default they are retried and the report
/// says so; with --dup-key-retry off the run fails with a line that explains why.
#[test]
fn myisam_duplicate_keys_are_retried_and_said_or_explained() {
    let db = TestDb::new("dupkey");
    let out = tempfile::tempdir().unwrap();
    let common = [
        "oltp_read_write",
        "--target",
        &db.url(),
        "--table-size",
        "10",
        "--mysql-storage-engine",
        "myisam",
    ];
    ok(dbrig(out.path(), &[&["prepare"][..], &common].concat()));
    let run = ["--threads", "16", "--time", "3", "--format", "json"];
    let v = json(&ok(dbrig(
        out.path(),
        &[&["run"][..], &common, &run].concat(),
    )));
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("1062")
            && notes.contains("MyISAM")
            && notes.contains("--dup-key-retry auto"),
        "{notes}"
    );
    assert!(v["ignored_errors"].as_u64().unwrap() > 0, "{v}");
    assert!(v["fatal_errors"].as_array().unwrap().is_empty(), "{v}");
    // Off: the first duplicate stops its client, and the line says why.
    let o = dbrig(
        out.path(),
        &[&["run"][..], &common, &run, &["--dup-key-retry", "off"]].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", crate::text(&o));
    let v = json(&o);
    let fatal = v["fatal_errors"].to_string();
    assert!(
        fatal.contains("1062")
            && fatal.contains("no transactions")
            && fatal.contains("--dup-key-retry"),
        "{fatal}"
    );
}

/// The run's busy processes are watched over its first trial (a single command waits no
/// sample of its own): a neighbour spinning on a CPU is named; the server the trial loads, busy
/// throughout, is not a neighbour and is left out.
#[test]
fn busy_processes_name_neighbours_not_the_measured_server() {
    let db = TestDb::new("busy");
    let out = tempfile::tempdir().unwrap();
    let mut spinner = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let url = db.url();
    let args = ["prepare", "oltp_read_only", "--target", &url];
    let o = dbrig(
        out.path(),
        &[&args[..], &["--tables", "2", "--table-size", "20000"]].concat(),
    );
    let _ = spinner.kill();
    let _ = spinner.wait();
    ok(o);
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.latest_run_id().unwrap().unwrap();
    let busy = store.run(run).unwrap().host["busy_processes"].clone();
    let pids: Vec<u64> = busy
        .as_array()
        .unwrap_or_else(|| panic!("busy_processes stored: {busy}"))
        .iter()
        .map(|p| p["pid"].as_u64().unwrap())
        .collect();
    assert!(
        pids.contains(&u64::from(spinner.id())),
        "the spinning neighbour (pid {}) among {busy}",
        spinner.id()
    );
    let server = dbrig_server::host::listening_process(3306).unwrap().0;
    assert!(
        !pids.contains(&u64::from(server)),
        "the measured server (pid {server}) is no neighbour: {busy}"
    );
}

/// MariaDB's creation marker includes the table's CREATE_TIME, which a `CREATE INDEX` a second
/// later moves: while dbrig's own DDL runs on a table still loading, the table is proven by its
/// comment token (a DDL cut off by Ctrl-C goes on in the server after dbrig has gone), and it
/// is re-marked after, so `cleanup` of an interrupted prepare still proves the tables dbrig's.
/// Without that step the moved time refuses it; another comment is refused throughout.
#[test]
fn an_index_build_keeps_a_loading_table_provably_dbrigs() {
    use dbrig_workload::registry;
    let db = TestDb::new("marker");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let target = dbrig_driver::Target::parse(&db.url()).unwrap();
        let mut c = dbrig_driver::Connection::connect(&target, &Default::default())
            .await
            .unwrap();
        registry::ensure(&mut c).await.unwrap();
        let token = registry::new_token();
        let create = registry::marked_create(
            c.dialect(),
            "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL)",
            &token,
        );
        c.execute_text(&create).await.unwrap();
        registry::record(&mut c, "sbtest1", "oltp_table", &token, "{}")
            .await
            .unwrap();
        registry::verify(&mut c, "sbtest1", "oltp_table", &target)
            .await
            .unwrap();
        // CREATE_TIME has whole seconds: the index comes in a later one.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        c.execute_text("CREATE INDEX k_1 ON sbtest1 (k)")
            .await
            .unwrap();
        let stale = registry::verify(&mut c, "sbtest1", "oltp_table", &target).await;
        assert!(stale.is_err(), "the index moved the marker");
        registry::refresh_marker(&mut c, "sbtest1").await.unwrap();
        let entry = registry::verify(&mut c, "sbtest1", "oltp_table", &target)
            .await
            .unwrap();
        assert_eq!(entry.state, "loading", "re-marked, not made ready");
        // The way a prepare does it: the DDL announced first; proven with no refresh after.
        registry::ddl_begins(&mut c, "sbtest1").await.unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        c.execute_text("CREATE INDEX k_2 ON sbtest1 (id, k)")
            .await
            .unwrap();
        registry::verify(&mut c, "sbtest1", "oltp_table", &target)
            .await
            .unwrap();
        c.execute_text("ALTER TABLE sbtest1 COMMENT = 'dbrig:someone-elses'")
            .await
            .unwrap();
        let other = registry::verify(&mut c, "sbtest1", "oltp_table", &target).await;
        assert!(other.is_err(), "another token is not dbrig's table");
        c.close().await;
    });
}
