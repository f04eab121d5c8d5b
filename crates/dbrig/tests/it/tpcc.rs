//! TPC-C end to end through the binary on SQLite (the specification's one warehouse):
//! `prepare tpcc` stored as a load trial, `run tpcc` with its JSON (NOPM, the five types, the
//! consistency check after the run), `tpcc check` passing and then failing on a planted
//! inconsistency (also on PostgreSQL), keying and think times (tpmC only then), a plan naming
//! `tpcc`, `cleanup tpcc`. The engines' population and transactions are tested on all three
//! engines in dbrig-workload's `tests/tpcc.rs`.

use crate::{dbrig, json, ok, text};

#[test]
fn sqlite_prepare_run_plan_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let target = format!("sqlite:{}", dir.path().join("tpcc.db").display());
    let o = ok(dbrig(
        &out,
        &[
            "prepare",
            "tpcc",
            "--warehouses",
            "1",
            "--target",
            &target,
            "--format",
            "json",
        ],
    ));
    let load = json(&o);
    assert_eq!(load["kind"], "load", "{}", text(&o));
    assert_eq!(load["of"], "tpcc");
    let rows = |t: &str| {
        load["figures"]["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["table"] == t)
            .map(|x| x["rows"].as_u64().unwrap())
    };
    assert_eq!(rows("stock"), Some(100_000));
    assert_eq!(rows("item"), Some(100_000));
    assert_eq!(rows("customer"), Some(30_000));
    assert_eq!(rows("new_order"), Some(9_000));
    assert!(
        load["data"]
            .as_str()
            .unwrap()
            .contains("consistency checked")
    );
    // The database as loaded passes all twelve conditions.
    let o = ok(dbrig(
        &out,
        &[
            "tpcc",
            "check",
            "--as-loaded",
            "--target",
            &target,
            "--format",
            "json",
        ],
    ));
    let c = json(&o);
    assert_eq!(c["passed"], true, "{}", text(&o));
    assert_eq!(
        c["checked"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    );
    // A second prepare is refused: the tables exist.
    let again = dbrig(&out, &["prepare", "tpcc", "--target", &target]);
    assert!(!again.status.success());
    assert!(text(&again).contains("already exists"), "{}", text(&again));

    let o = ok(dbrig(
        &out,
        &[
            "run",
            "tpcc",
            "--warehouses",
            "1",
            "--threads",
            "2",
            "--time",
            "2",
            "--target",
            &target,
            "--format",
            "json",
        ],
    ));
    let r = json(&o);
    assert_eq!(r["kind"], "tpcc", "{}", text(&o));
    let names: Vec<&str> = r["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level"
        ]
    );
    let new_orders = r["transactions"][0]["committed"].as_u64().unwrap();
    assert!(new_orders > 0 && r["nopm"].as_f64().unwrap() > 0.0);
    assert_eq!(r["consistency"]["failures"].as_array().unwrap().len(), 0);
    assert_eq!(r["consistency"]["checked"].as_array().unwrap().len(), 11);
    // No keying or thinking: NOPM and TPM, never tpmC.
    assert_eq!(r["key_and_think"], false);
    assert!(r["tpmc"].is_null(), "{}", text(&o));
    // The per-interval NOPM line: a reading every second of the 2 s.
    assert!(
        !r["intervals"].as_array().unwrap().is_empty(),
        "{}",
        text(&o)
    );
    let o = ok(dbrig(
        &out,
        &[
            "run",
            "tpcc",
            "--threads",
            "2",
            "--time",
            "2",
            "--target",
            &target,
        ],
    ));
    // (Its note says why there is no tpmC; there is no tpmC line.)
    assert!(!text(&o).contains("  tpmC "), "{}", text(&o));

    // With keying and thinking: ten terminals on two clients, and tpmC with its efficiency.
    // No transaction ends before its keying time (2 s at least).
    let o = ok(dbrig(
        &out,
        &[
            "run",
            "tpcc",
            "--key-and-think",
            "--threads",
            "2",
            "--time",
            "5",
            "--target",
            &target,
            "--format",
            "json",
        ],
    ));
    let r = json(&o);
    assert_eq!(r["key_and_think"], true, "{}", text(&o));
    assert!(r["tpmc"].as_f64().is_some(), "{}", text(&o));
    assert!(r["tpmc_efficiency_pct"].as_f64().is_some());
    let finished: u64 = r["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["committed"].as_u64().unwrap() + t["rolled_back"].as_u64().unwrap())
        .sum();
    // Ten terminals keying 2-18 s in 5 s: each at most one transaction.
    assert!((1..=10).contains(&finished), "{finished}: {}", text(&o));
    let o = ok(dbrig(&out, &["report", "latest"]));
    assert!(text(&o).contains("  tpmC "), "{}", text(&o));
    // More clients than terminals: refused.
    let many = dbrig(
        &out,
        &[
            "run",
            "tpcc",
            "--key-and-think",
            "--threads",
            "11",
            "--time",
            "1",
            "--target",
            &target,
        ],
    );
    assert!(
        text(&many).contains("11 clients for 10 terminals"),
        "{}",
        text(&many)
    );

    // A planted inconsistency: a customer's balance off by a cent fails conditions 10 and 12,
    // and the command exits 1 naming them.
    let file = target.strip_prefix("sqlite:").unwrap();
    rusqlite::Connection::open(file)
        .unwrap()
        .execute(
            "UPDATE customer SET c_balance = c_balance + 0.01 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3",
            [],
        )
        .unwrap();
    let bad = dbrig(&out, &["tpcc", "check", "--target", &target]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert!(
        text(&bad).contains("10  FAILS  C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer; first at (1, 2, 3,"),
        "{}",
        text(&bad)
    );
    assert!(text(&bad).contains("12  FAILS"), "{}", text(&bad));
    assert!(text(&bad).contains(" 1  holds"), "{}", text(&bad));
    rusqlite::Connection::open(file)
        .unwrap()
        .execute(
            "UPDATE customer SET c_balance = c_balance - 0.01 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 3",
            [],
        )
        .unwrap();
    ok(dbrig(&out, &["tpcc", "check", "--target", &target]));
    // More warehouses than were loaded: refused before any client starts.
    let wrong = dbrig(
        &out,
        &[
            "run",
            "tpcc",
            "--warehouses",
            "3",
            "--time",
            "1",
            "--target",
            &target,
        ],
    );
    assert!(
        text(&wrong).contains("1 warehouse(s) loaded, 3 asked for"),
        "{}",
        text(&wrong)
    );

    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"tpcc\"\ntrials = 1\nduration = 1\nclients = [1]\n\n[[configuration]]\nname = \"lite\"\ntarget = \"{target}\"\n\n[[workload]]\nname = \"tpcc\"\n[workload.options]\nwarehouses = 1\n"
        ),
    )
    .unwrap();
    let o = ok(dbrig(&out, &["run", plan.to_str().unwrap()]));
    assert!(text(&o).contains("NOPM"), "{}", text(&o));

    let o = ok(dbrig(&out, &["cleanup", "tpcc", "--target", &target]));
    assert!(text(&o).contains("Dropped"), "{}", text(&o));
    let o = ok(dbrig(&out, &["cleanup", "tpcc", "--target", &target]));
    assert!(text(&o).contains("Nothing to drop"), "{}", text(&o));
}

/// `tpcc check` on PostgreSQL: a prepared database passes; a NEW-ORDER row deleted fails
/// conditions 2 and 5 (and 11 as loaded), exit code 1.
#[test]
fn postgres_check_finds_a_planted_inconsistency() {
    let db = crate::postgres::TestDb::new("tpcc_check");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let url = db.url();
    ok(dbrig(&out, &["prepare", "tpcc", "--target", &url]));
    let o = ok(dbrig(
        &out,
        &["tpcc", "check", "--as-loaded", "--target", &url],
    ));
    assert!(text(&o).contains("11  holds"), "{}", text(&o));
    let psql = |sql: &str| {
        let o = std::process::Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", &db.0, "-qc", sql])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    psql("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 4 AND no_o_id = 3000");
    let bad = dbrig(
        &out,
        &[
            "tpcc",
            "check",
            "--as-loaded",
            "--target",
            &url,
            "--format",
            "json",
        ],
    );
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    let c = json(&bad);
    let failed: Vec<u64> = c["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["condition"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, [2, 5, 11], "{}", text(&bad));
    assert_eq!(c["failures"][0]["row"][0], "1");
    assert_eq!(c["failures"][0]["row"][1], "4");
    ok(dbrig(&out, &["cleanup", "tpcc", "--target", &url]));
}
