//! TPC-C end to end through the binary on SQLite (the specification's one warehouse):
//! `prepare tpcc` stored as a load trial, `run tpcc` with its JSON (NOPM, the five types, the
//! consistency check after the run), a plan naming `tpcc`, `cleanup tpcc`. The engines'
//! population and transactions are tested on all three engines in dbrig-workload's
//! `tests/tpcc.rs`.

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
    assert_eq!(r["consistency"]["checked"].as_array().unwrap().len(), 7);
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
