//! The machine's PostgreSQL at 127.0.0.1:5432 (trust auth).

use std::process::Command;

use crate::{
    every_workload, missing_and_existing_tables, read_write_counts as check_read_write_counts,
};

pub struct TestDb(pub String);

impl TestDb {
    pub fn new(name: &str) -> Self {
        let db = format!("dbrig_it_{name}_{}", std::process::id());
        psql(&format!("DROP DATABASE IF EXISTS {db}"));
        psql(&format!("CREATE DATABASE {db}"));
        TestDb(db)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.0)
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        psql(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0));
    }
}

pub fn psql(statement: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-At",
            "-c",
            statement,
        ])
        .output()
        .expect("psql is installed with the server");
    assert!(
        o.status.success(),
        "psql -c {statement}: {}",
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
            .all(|r| r["server_version"].as_str().unwrap().starts_with("1"))
    );
}

#[test]
fn read_write_counts_exact() {
    let db = TestDb::new("rw");
    let out = tempfile::tempdir().unwrap();
    check_read_write_counts(&db.url(), out.path());
}

#[test]
fn tables_errors() {
    let db = TestDb::new("tables");
    let out = tempfile::tempdir().unwrap();
    missing_and_existing_tables(&db.url(), out.path());
}

/// libpq's variables fill what a PostgreSQL URL leaves out (`postgres://` alone names
/// PGHOST's server), PGSSLMODE included (`prefer`: TLS when the server offers it).
#[test]
fn libpq_variables_fill_the_url() {
    let db = TestDb::new("pgenv");
    let out = tempfile::tempdir().unwrap();
    let o = crate::ok(
        Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .args([
                "prepare",
                "oltp_point_select",
                "--target",
                "postgres://",
                "--table-size",
                "100",
                "--format",
                "json",
            ])
            .arg(format!("--out={}", out.path().display()))
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", "5432")
            .env("PGUSER", "postgres")
            .env("PGDATABASE", &db.0)
            .env("PGSSLMODE", "prefer")
            .output()
            .unwrap(),
    );
    assert_eq!(
        crate::json(&o)["target"],
        format!("postgres://postgres@127.0.0.1:5432/{}?sslmode=prefer", db.0)
    );
}
