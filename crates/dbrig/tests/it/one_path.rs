//! One measurement path: for every kind (OLTP, micro, TPC-H power and throughput, perfrun, a
//! load), on SQLite, MariaDB and PostgreSQL, the single command and a one-cell plan store the
//! same typed result (same kind, the same items, queries and statements), each with its
//! environment; and `dbrig report` shows every stored run in its own unit in every format.

use std::path::Path;

use dbrig_core::results::TrialResult;
use dbrig_store::{RunId, RunKind, RunStatus, Store, TrialStatus};
use serde_json::{Value, json};

use crate::{dbrig, ok, text};

/// The latest run's single trial (the run must hold exactly one cell and one trial).
fn only_trial(results: &Path) -> (RunId, RunKind, dbrig_store::TrialRow) {
    let store = Store::open(results).unwrap();
    let run = store.runs().unwrap().pop().unwrap();
    let cells = store.cells(run.id).unwrap();
    assert_eq!(cells.len(), 1, "{cells:?}");
    let mut trials = store.trials(cells[0].id).unwrap();
    assert_eq!(trials.len(), 1);
    (run.id, run.kind, trials.pop().unwrap())
}

/// What must be the same however the measurement was taken: the kind and the names, units
/// and counts a report shows (never timings).
fn shape(r: &TrialResult) -> Value {
    match r {
        TrialResult::Oltp(o) => json!({
            "oltp": o.statements.iter().map(|s| (s.statement.clone(), s.count)).collect::<Vec<_>>(),
            "schedule": o.schedule,
        }),
        TrialResult::Micro(m) => json!({
            "micro": m.benchmark,
            "items": m.items.iter().map(|i| (i.name.clone(), i.unit.clone(), i.values.len())).collect::<Vec<_>>(),
        }),
        TrialResult::TpchPower(p) => json!({
            "power": p.steps().map(|q| (q.name.clone(), q.status.as_str())).collect::<Vec<_>>(),
            "sf": p.scale_factor,
            "has_power": p.power_at_size.is_some(),
        }),
        TrialResult::TpchThroughput(t) => json!({
            "throughput": t.query_streams.iter().map(|s| s.queries.iter().map(|q| q.name.clone()).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "streams": t.streams,
            "has_throughput": t.throughput_at_size.is_some(),
        }),
        TrialResult::Perfrun(p) => json!({
            "perfrun": p.queries.iter().map(|q| (q.file.clone(), q.cold.error.is_none(), q.warm.error.is_none())).collect::<Vec<_>>(),
            "dialect": p.server.dialect,
        }),
        TrialResult::SqlBench(r) => json!({
            "sql_bench": r.tests.iter().map(|t| (t.name.clone(), t.status.as_str(), t.operations.len())).collect::<Vec<_>>(),
            "server": r.server,
        }),
        TrialResult::Load(r) => json!({
            "load": r.of,
            "data": r.data,
            "tables": r.figures.tables.iter().map(|t| (t.table.clone(), t.rows)).collect::<Vec<_>>(),
            "steps": r.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        }),
        TrialResult::Tpcc(r) => json!({
            "tpcc": r.transactions.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "warehouses": r.warehouses,
            "checked": r.consistency.as_ref().map(|c| c.checked.clone()),
        }),
    }
}

/// Rows in `table` as the server counts them, by the engine's own command-line client.
fn server_count(target: &str, table: &str) -> u64 {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    let o = if let Some(file) = target.strip_prefix("sqlite:") {
        std::process::Command::new("sqlite3")
            .arg(file)
            .arg(&sql)
            .output()
    } else if target.starts_with("mysql:") {
        let db = target.rsplit('/').next().unwrap();
        std::process::Command::new("mariadb")
            .args(["-h127.0.0.1", "-uroot", "-N", "-e", &sql, db])
            .output()
    } else {
        std::process::Command::new("psql")
            .args([target, "-tAc", &sql])
            .output()
    };
    let o = o.unwrap();
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{sql} on {target}: {o:?}"))
}

/// Formats of `dbrig report`, and what none of them may show for a run of `kind`.
fn reports_in_their_own_units(out: &Path, run: RunId, kind: &str) {
    let id = run.0.to_string();
    for format in ["text", "json", "csv", "csv-trials", "markdown"] {
        let o = ok(dbrig(out, &["report", &id, "--format", format]));
        let shown = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(!shown.trim().is_empty(), "{kind} {format}: empty");
        assert!(
            !shown.contains("not counted"),
            "{kind} {format}: a fine trial reported as not counted:\n{shown}"
        );
        if kind != "oltp" {
            // Seconds, rows/s and scores are never shown as throughput.
            for wrong in ["QPS", "qps_median", "Metric: "] {
                assert!(
                    !shown.contains(wrong),
                    "{kind} {format}: '{wrong}' on a {kind} run:\n{shown}"
                );
            }
        }
        if format == "text" {
            let own = match kind {
                "oltp" => "SQL statistics:",
                "micro" => "rows/s",
                "tpch_power" => "Power@Size",
                "tpch_throughput" => "Throughput@Size",
                "load" => "rows/s",
                _ => "Cache:",
            };
            assert!(shown.contains(own), "{kind} text lacks '{own}':\n{shown}");
        }
    }
    let page = out.join(format!("page-{id}.html"));
    ok(dbrig(
        out,
        &[
            "report",
            &id,
            "--format",
            "html",
            "--output",
            page.to_str().unwrap(),
        ],
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    for svg in html.split("<svg").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap_or(svg.len())];
        assert!(
            svg.contains("<path")
                || svg.contains("<rect")
                || svg.contains("<circle")
                || svg.contains("<polyline"),
            "{kind}: an empty chart in the HTML page"
        );
    }
    if kind != "oltp" {
        assert!(!html.contains("QPS"), "{kind}: QPS in the HTML page");
    }
}

/// One kind: the single command (`args`), then the same measurement as a one-cell plan
/// (`workload` table of a plan file), both stored with the same shape and an environment.
fn same_both_ways(out: &Path, target: &str, args: &[&str], kind: &str, workload: &str) -> Value {
    let results = out.join("results.db");
    let o = dbrig(out, args);
    assert!(o.status.success(), "{args:?}:\n{}", text(&o));
    // Every kind's console report shows its connections' set-up time (OLTP's runner times
    // them; the executor times the other kinds').
    assert!(
        text(&o).contains("Connect latency (ms"),
        "{args:?}:\n{}",
        text(&o)
    );
    let (single_run, single_kind, single) = only_trial(&results);
    assert_eq!(single_kind.as_str(), kind, "{args:?}");
    assert_eq!(single.status, TrialStatus::Done, "{single:?}");
    let single_env = single
        .environment
        .as_ref()
        .expect("the single run records its environment");
    reports_in_their_own_units(out, single_run, kind);

    let plan = out.join(format!("{kind}.toml"));
    std::fs::write(
        &plan,
        format!(
            "name = \"one-{kind}\"\ntrials = 1\nclients = [1]\n\
             [[configuration]]\nname = \"default\"\ntarget = \"{target}\"\n\
             [environment]\nos-stats-interval = 1\n\
             {workload}"
        ),
    )
    .unwrap();
    let o = dbrig(out, &["run", plan.to_str().unwrap()]);
    assert!(o.status.success(), "plan {kind}:\n{}", text(&o));
    let (plan_run, plan_kind, planned) = only_trial(&results);
    assert_eq!(plan_kind, RunKind::Plan);
    assert_eq!(planned.status, TrialStatus::Done, "{planned:?}");
    let plan_env = planned.environment.as_ref().unwrap();
    let (a, b) = (
        single.result.as_ref().unwrap(),
        planned.result.as_ref().unwrap(),
    );
    assert_eq!(a.kind().as_str(), kind);
    assert_eq!(
        shape(a),
        shape(b),
        "{kind}: the command and the plan stored different things"
    );
    // What a plan records, a single run records too.
    assert_eq!(
        (
            single_env.server_settings.is_some(),
            single_env.placement.is_some()
        ),
        (
            plan_env.server_settings.is_some(),
            plan_env.placement.is_some()
        ),
        "{kind}"
    );
    assert!(single_env.server_life.is_some() && single_env.placement.is_some());
    if !target.starts_with("sqlite") {
        assert!(single_env.server_settings.as_ref().unwrap().variable_count > 50);
    }
    reports_in_their_own_units(out, plan_run, kind);
    shape(a)
}

fn every_kind(target: &str, out: &Path) {
    let t = target;
    ok(dbrig(out, &["tpch", "load", "--sf", "0.01", "--target", t]));
    let queries = out.join("queries");
    std::fs::create_dir_all(&queries).unwrap();
    std::fs::write(queries.join("a.sql"), "SELECT COUNT(*) FROM nation").unwrap();
    std::fs::write(
        queries.join("b.sql"),
        "SELECT n_name FROM nation WHERE n_regionkey = 1 ORDER BY n_name",
    )
    .unwrap();
    let q = queries.to_str().unwrap();

    let oltp = same_both_ways(
        out,
        t,
        &[
            "run",
            "oltp_read_write",
            "--target",
            t,
            "--prepare",
            "--table-size",
            "200",
            "--threads",
            "1",
            "--events",
            "40",
            "--time",
            "0",
            "--rand-seed",
            "5",
            "--os-stats-interval",
            "0.2",
        ],
        "oltp",
        "[[workload]]\nname = \"oltp_read_write\"\n[workload.options]\ntable-size = 200\n\
         [workload.run]\nevents = 40\ntime = 0\nrand-seed = 5\n",
    );
    // Exact counts: 40 events of sysbench's read-write transaction, whichever way (one
    // client, so no deadlock retry can add an attempt).
    assert!(
        oltp["oltp"]
            .as_array()
            .unwrap()
            .contains(&json!(["point_select", 400])),
        "{oltp}"
    );

    // A load is a measurement of its own: `dbrig prepare` stores it, and a plan's `load`
    // workload stores the same (its trial drops the tables the command made, proven dbrig's,
    // and loads them again). The rows it counted are the rows the server holds (1000 a
    // table: fewer are no rate, `MIN_ROWS_FOR_A_RATE`).
    ok(dbrig(out, &["cleanup", "oltp_read_write", "--target", t]));
    let load = same_both_ways(
        out,
        t,
        &[
            "prepare",
            "oltp_read_only",
            "--target",
            t,
            "--tables",
            "2",
            "--table-size",
            "1000",
        ],
        "load",
        "[[workload]]\nname = \"load\"\n[workload.options]\nof = \"oltp_read_only\"\ntables = 2\ntable-size = 1000\n",
    );
    assert_eq!(
        load["tables"],
        json!([["sbtest1", 1000], ["sbtest2", 1000]]),
        "{load}"
    );
    assert_eq!(
        (server_count(t, "sbtest1"), server_count(t, "sbtest2")),
        (1000, 1000)
    );
    ok(dbrig(
        out,
        &["cleanup", "oltp_read_only", "--target", t, "--tables", "2"],
    ));

    same_both_ways(
        out,
        t,
        &[
            "micro",
            "tmp_groupby",
            "--target",
            t,
            "--rows-log2",
            "10",
            "--runs",
            "1",
        ],
        "micro",
        "[[workload]]\nname = \"tmp_groupby\"\n[workload.options]\nrows-log2 = 10\nruns = 1\n",
    );
    let power = same_both_ways(
        out,
        t,
        &["tpch", "power", "--target", t],
        "tpch_power",
        "[[workload]]\nname = \"tpch-power\"\n[workload.options]\nsf = 0.01\nrefresh = true\n",
    );
    assert_eq!(
        power["power"].as_array().unwrap().len(),
        24,
        "RF1, 22 queries, RF2: {power}"
    );
    same_both_ways(
        out,
        t,
        &[
            "tpch",
            "throughput",
            "--target",
            t,
            "--streams",
            "2",
            "--no-refresh",
        ],
        "tpch_throughput",
        "[[workload]]\nname = \"tpch-throughput\"\n[workload.options]\nsf = 0.01\nstreams = 2\nseed = 1\n",
    );
    // perfrun compares two configurations: a plan of its own with both sides.
    let results = out.join("results.db");
    let o = dbrig(out, &["perfrun", "--a", t, "--b", t, "--queries", q]);
    assert!(o.status.success(), "{}", text(&o));
    for side in ["a", "b"] {
        assert!(
            text(&o).contains(&format!("Connect latency of {side} (ms")),
            "{}",
            text(&o)
        );
    }
    let store = Store::open(&results).unwrap();
    let run = store.runs().unwrap().pop().unwrap();
    assert_eq!((run.kind, run.status), (RunKind::Perfrun, RunStatus::Done));
    let sides: Vec<Value> = store
        .cells(run.id)
        .unwrap()
        .iter()
        .map(|c| {
            let t = store.trials(c.id).unwrap().pop().unwrap();
            assert!(t.environment.is_some());
            shape(t.result.as_ref().unwrap())
        })
        .collect();
    assert_eq!(sides.len(), 2);
    assert_eq!(sides[0], sides[1], "both sides ran the same queries");
    reports_in_their_own_units(out, run.id, "perfrun");
    let plan = out.join("perfrun.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"one-perfrun\"\ntrials = 1\nclients = [1]\n\
             [[configuration]]\nname = \"a\"\ntarget = \"{t}\"\n\
             [[configuration]]\nname = \"b\"\ntarget = \"{t}\"\n\
             [[workload]]\nname = \"perfrun\"\n[workload.options]\nqueries = \"{q}\"\n"
        ),
    )
    .unwrap();
    ok(dbrig(out, &["run", plan.to_str().unwrap()]));
    let run = store.runs().unwrap().pop().unwrap();
    for c in store.cells(run.id).unwrap() {
        let t = store.trials(c.id).unwrap().pop().unwrap();
        assert_eq!(shape(t.result.as_ref().unwrap()), sides[0]);
    }
    reports_in_their_own_units(out, run.id, "perfrun");
}

#[test]
fn every_kind_one_path_on_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("kinds.sqlite").display());
    every_kind(&target, out.path());
}

#[test]
fn every_kind_one_path_on_mariadb() {
    let db = crate::mysql::TestDb::new(&format!("one_path_{}", std::process::id()));
    let out = tempfile::tempdir().unwrap();
    every_kind(&db.url(), out.path());
}

#[test]
fn every_kind_one_path_on_postgres() {
    let db = crate::postgres::TestDb::new(&format!("one_path_{}", std::process::id()));
    let out = tempfile::tempdir().unwrap();
    every_kind(&db.url(), out.path());
}

#[test]
fn dry_run_of_every_measuring_command_touches_nothing() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    for args in [
        vec!["run", "oltp_point_select", "--dry-run"],
        vec!["micro", "memory_load", "--dry-run"],
        vec![
            "tpch",
            "power",
            "--dry-run",
            "--target",
            "mysql://root@127.0.0.1:1/nothing",
        ],
        vec![
            "tpch",
            "throughput",
            "--dry-run",
            "--target",
            "mysql://root@127.0.0.1:1/x",
        ],
        vec![
            "perfrun",
            "--dry-run",
            "--a",
            "mysql://root@127.0.0.1:1/x",
            "--b",
            "postgres://postgres@127.0.0.1:1/x",
            "--tpch",
        ],
    ] {
        let r = ok(dbrig(o, &args));
        let shown = text(&r);
        assert!(
            shown.contains("dry run: nothing was connected to or written"),
            "{args:?}: {shown}"
        );
        assert!(shown.contains("Cells ("), "{args:?}: {shown}");
        // A plan without timed trials has 0 s of them, not "-0 s" (an empty f64 sum).
        assert!(!shown.contains("-0 s"), "{args:?}: {shown}");
    }
    assert!(
        !o.join("results.db").exists(),
        "a dry run wrote the results database"
    );
}
