//! Embedded SQLite: the default target.

use crate::{
    dbrig, every_workload, json, missing_and_existing_tables, ok,
    read_write_counts as check_read_write_counts,
};

#[test]
fn every_workload_end_to_end() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("bench.sqlite").display());
    let reports = every_workload(&target, out.path());
    assert!(
        reports
            .iter()
            .all(|r| r["server_version"].as_str().unwrap().starts_with("SQLite "))
    );
}

#[test]
fn read_write_counts_exact() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("rw.sqlite").display());
    check_read_write_counts(&target, out.path());
}

#[test]
fn default_target_is_a_file_in_the_output_folder() {
    let out = tempfile::tempdir().unwrap();
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "500",
            "--time",
            "0.5",
            "--format",
            "json",
        ],
    )));
    assert_eq!(
        v["target"],
        format!("sqlite:{}", out.path().join("dbrig.sqlite").display())
    );
    assert!(out.path().join("dbrig.sqlite").exists());
    assert!(out.path().join("results.db").exists());
    // --prepare is a no-op once the tables are there.
    ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "500",
            "--time",
            "0.2",
        ],
    ));
}

#[test]
fn tables_errors() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("t.sqlite").display());
    missing_and_existing_tables(&target, out.path());
}

/// Concurrent writers queue on SQLite's write lock (BEGIN IMMEDIATE) instead of failing their
/// lock upgrade and retrying: no ignored errors with several clients writing.
#[test]
fn concurrent_writers_wait_instead_of_retrying() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("w.sqlite").display());
    let v = json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            &target,
            "--prepare",
            "--table-size",
            "2000",
            "--threads",
            "4",
            "--events",
            "400",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["transactions"], 400, "{v}");
    assert_eq!(v["ignored_errors"], 0, "{v}");
}

/// `dbrig cleanup --format json`: what was dropped, as one JSON object.
#[test]
fn cleanup_as_json() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("c.sqlite");
    let target = format!("sqlite:{}", db.display());
    crate::ok(crate::dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &target,
            "--tables",
            "2",
            "--table-size",
            "10",
        ],
    ));
    let v = crate::json(&crate::ok(crate::dbrig(
        out.path(),
        &[
            "cleanup",
            "oltp_point_select",
            "--target",
            &target,
            "--tables",
            "2",
            "--format",
            "json",
        ],
    )));
    assert_eq!(v["workload"], "oltp_point_select");
    assert_eq!(
        v["dropped"],
        serde_json::json!(["sbtest1", "sbtest2"]),
        "{v}"
    );
}
