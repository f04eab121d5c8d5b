//! Embedded SQLite: the default target.

use crate::{
    dbrig, error_line, every_workload, json, missing_and_existing_tables, ok,
    read_write_counts as check_read_write_counts, text,
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

/// Four writers on one SQLite file: dbrig queues them in arrival order for the one write
/// lock, so no writer sleeps in SQLite's unfair back-off (which made `begin` max seconds
/// while p99 was milliseconds), no event is retried, and the report says writers serialise.
#[test]
fn sqlite_writers_queue_fairly_for_the_write_lock() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("fifo.sqlite").display());
    let common = [
        "oltp_read_write",
        "--target",
        &target,
        "--table-size",
        "1000",
    ];
    ok(dbrig(out.path(), &[&["prepare"][..], &common].concat()));
    let v = json(&ok(dbrig(
        out.path(),
        &[
            &["run"][..],
            &common,
            &["--threads", "4", "--time", "4", "--format", "json"],
        ]
        .concat(),
    )));
    let notes = v["notes"].to_string();
    assert!(notes.contains("SQLite serialises writers"), "{notes}");
    let statement = |name: &str| {
        v["statements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["statement"] == name)
            .unwrap_or_else(|| panic!("{name}: {v}"))
            .clone()
    };
    let transactions = v["transactions"].as_u64().unwrap();
    assert!(transactions > 100, "{v}");
    assert_eq!(v["ignored_errors"], 0, "{v}");
    assert_eq!(statement("write_queue")["count"], transactions, "{v}");
    // BEGIN IMMEDIATE runs when the client's turn has come: nobody of ours holds the lock.
    let begin_max = statement("begin")["latency_ms"]["max"].as_f64().unwrap();
    assert!(begin_max < 100.0, "begin max {begin_max} ms: {v}");
    // The wait is the queue's: a few transactions long, not the busy handler's seconds.
    let event_max = v["latency_ms"]["max"].as_f64().unwrap();
    assert!(event_max < 1000.0, "event max {event_max} ms: {v}");
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

/// `latest~N` names the Nth run before the latest, as git's `HEAD~N`, in `report` and
/// `compare`; one too far back, or a malformed one, is one line and a non-zero exit.
#[test]
fn runs_are_named_back_from_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let target = format!("--target=sqlite:{}", out.join("back.sqlite").display());
    for events in ["30", "40", "50"] {
        ok(dbrig(
            out,
            &[
                "run",
                "oltp_point_select",
                "--prepare",
                "--table-size=1000",
                "--time=0",
                &format!("--events={events}"),
                &target,
                "--format=json",
            ],
        ));
    }
    let id_of = |name: &str| {
        json(&ok(dbrig(out, &["report", name, "--format=json"])))["run_id"]
            .as_u64()
            .unwrap_or_else(|| panic!("no run id in the report of {name}"))
    };
    assert_eq!(id_of("latest"), 3);
    assert_eq!(id_of("latest~0"), 3);
    assert_eq!(id_of("latest~1"), 2);
    assert_eq!(id_of("LATEST~2"), 1);
    let compared = text(&ok(dbrig(out, &["compare", "latest~2", "latest"])));
    assert!(
        compared.contains("(run 1) vs") && compared.contains("(run 3)"),
        "{compared}"
    );
    let too_far = error_line(&dbrig(out, &["compare", "latest~3", "latest"]));
    assert!(too_far.contains("holds 3 run(s), not 4"), "{too_far}");
    let bad = error_line(&dbrig(out, &["report", "latest~two"]));
    assert!(bad.contains("neither a run id"), "{bad}");
}

/// sysbench 1.0's `--warmup-time` is dbrig's `--warmup`.
#[test]
fn sysbenchs_warmup_time_is_the_warm_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let target = format!("--target=sqlite:{}", out.join("warm.sqlite").display());
    let run = json(&ok(dbrig(
        out,
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size=1000",
            "--time=0.5",
            "--warmup-time=0.3",
            &target,
            "--format=json",
        ],
    )));
    assert_eq!(run["warmup_s"].as_f64(), Some(0.3), "{run}");
}
