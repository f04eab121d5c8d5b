//! A results database written by dbrig at git ba895e4 (schema 1: results in an untyped `extra`
//! whose keys depended on the command) opens, migrates to typed results and reads back.
//!
//! The fixture holds one run of every kind as that dbrig stored it: `run` (OLTP, with interval
//! samples and per-statement latency), `micro memory_load` and `scan_filter` (result at the
//! top of `extra`), `tpch power`, `tpch throughput`, `perfrun` (one cell per query, a trial per
//! execution; one whose queries failed and one whose queries ran), a failed run, a plan of four kinds with hooks and OS samples, an interrupted run
//! and a run left `running` by a dbrig killed with SIGKILL.

use dbrig_core::results::TrialResult;
use dbrig_store::{RunKind, RunStatus, SCHEMA_VERSION, Store, TrialStatus};

fn migrated() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results-schema1.db"
        ),
        &path,
    )
    .unwrap();
    let store = Store::open(&path).unwrap();
    (dir, store)
}

fn results(store: &Store, run: i64) -> Vec<(String, TrialStatus, Option<TrialResult>)> {
    let mut out = Vec::new();
    for c in store.cells(dbrig_store::RunId(run)).unwrap() {
        for t in store.trials(c.id).unwrap() {
            out.push((c.configuration.clone(), t.status, t.result));
        }
    }
    out
}

#[test]
fn a_schema_1_database_migrates_to_typed_results() {
    let (_dir, store) = migrated();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let runs = store.runs().unwrap();
    let kinds: Vec<(RunKind, RunStatus)> = runs.iter().map(|r| (r.kind, r.status)).collect();
    assert_eq!(
        kinds,
        [
            (RunKind::Oltp, RunStatus::Done),
            (RunKind::Micro, RunStatus::Done),
            (RunKind::Micro, RunStatus::Done),
            (RunKind::TpchPower, RunStatus::Done),
            (RunKind::TpchThroughput, RunStatus::Done),
            (RunKind::Perfrun, RunStatus::Done),
            (RunKind::Oltp, RunStatus::Failed),
            (RunKind::Plan, RunStatus::Done),
            (RunKind::Oltp, RunStatus::Interrupted),
            // Left `running` by a dbrig killed with SIGKILL: its process is gone.
            (RunKind::Oltp, RunStatus::Abandoned),
            (RunKind::Perfrun, RunStatus::Done),
        ]
    );

    // OLTP: the statements moved into the typed result, the measurements stayed in columns.
    let oltp = results(&store, 1);
    let Some(TrialResult::Oltp(o)) = &oltp[0].2 else {
        panic!("{oltp:?}")
    };
    assert!(
        o.statements
            .iter()
            .any(|s| s.statement == "point_select" && s.count > 0)
    );
    assert_eq!(o.schedule, "closed loop");
    let cell = &store.cells(dbrig_store::RunId(1)).unwrap()[0];
    let trial = &store.trials(cell.id).unwrap()[0];
    assert!(trial.measurements.as_ref().unwrap().transactions > 0);
    assert!(!store.intervals(trial.id).unwrap().is_empty());
    // Schema 1's `dbrig run` on SQLite recorded no environment at all.
    assert!(trial.environment.is_none());

    // `dbrig micro` stored its result at the top of `extra`: now the same Micro result a
    // plan stores.
    for run in [2, 3] {
        let r = results(&store, run);
        let Some(TrialResult::Micro(m)) = &r[0].2 else {
            panic!("{r:?}")
        };
        assert!(
            !m.items.is_empty() && m.items.iter().all(|i| i.mean > 0.0),
            "{m:?}"
        );
        // Stored as `seconds`, `rows_per_second`: read under their unit-suffixed names.
        for i in &m.items {
            assert_eq!(i.wall_s.len(), m.runs as usize, "{i:?}");
            assert!(i.wall_s.iter().all(|s| *s > 0.0), "{i:?}");
            assert!(i.rows_per_s.is_some_and(|r| r > 0.0), "{i:?}");
        }
    }
    let Some(TrialResult::Micro(scan)) = &results(&store, 3)[0].2 else {
        panic!()
    };
    assert!(scan.items.iter().all(|i| i.mb_per_s.is_some()), "{scan:?}");
    // Stored as `micros`, `min_micros`, `timeout_seconds`: read as `time_us`, `min_us`, `timeout_s`.
    let Some(TrialResult::TpchPower(p)) = &results(&store, 4)[0].2 else {
        panic!()
    };
    assert_eq!(p.queries.len(), 22);
    assert!(p.power_at_size.unwrap() > 0.0);
    for q in &p.queries {
        assert!(q.time_us > 0, "{q:?}");
        let d = q.detail.as_ref().expect("the launcher's record");
        assert_eq!(d.runs[0].time_us, q.time_us, "{q:?}");
        assert_eq!((d.min_us, d.mean_us), (Some(q.time_us), Some(q.time_us)));
        assert_eq!(d.timeout_s, None);
    }
    // Stored as `ts_seconds` and streams' `seconds`: read as `ts_s`, `duration_s`.
    let Some(TrialResult::TpchThroughput(t)) = &results(&store, 5)[0].2 else {
        panic!()
    };
    assert_eq!((t.streams, t.query_streams.len()), (2, 2));
    assert!(t.throughput_at_size.unwrap() > 0.0);
    assert!(t.ts_s > 0.0, "{t:?}");
    for s in &t.query_streams {
        assert!(s.duration_s > 0.0 && s.duration_s <= t.ts_s, "{s:?}");
        assert!(s.queries.iter().all(|q| q.time_us > 0), "{s:?}");
    }

    // perfrun: one cell per query and a trial per execution become one trial per side (run
    // 6's queries failed on both sides, run 11's ran).
    let failed = results(&store, 6);
    let Some(TrialResult::Perfrun(f)) = &failed[0].2 else {
        panic!("{failed:?}")
    };
    assert!(
        f.queries
            .iter()
            .all(|q| q.cold.error.is_some() && q.warm.error.is_some())
    );
    assert_eq!(f.errors(), 4);
    let p = results(&store, 11);
    assert_eq!(
        p.iter()
            .map(|(c, s, _)| (c.as_str(), *s))
            .collect::<Vec<_>>(),
        [("a", TrialStatus::Done), ("b", TrialStatus::Done)]
    );
    for (side, _, r) in &p {
        let Some(TrialResult::Perfrun(r)) = r else {
            panic!("{r:?}")
        };
        assert_eq!(r.queries.len(), 2, "{side}");
        assert!(
            r.queries
                .iter()
                .all(|q| q.cold.time_us.is_some() && q.warm.time_us.is_some())
        );
        assert_eq!(r.queries[1].sql, "SELECT 40 + 2 AS answer");
        assert!(!r.queries[1].cold.counters.is_empty());
        assert!(!r.server.version.is_empty());
    }

    // The failed run's trial has no result, and says why it failed.
    let failed = results(&store, 7);
    assert_eq!(failed[0].1, TrialStatus::Failed);
    assert!(failed[0].2.is_none());

    // The plan: OLTP, micro, power and throughput trials, each with its environment.
    let mut kinds = std::collections::BTreeMap::new();
    let mut sampled = 0;
    for c in store.cells(dbrig_store::RunId(8)).unwrap() {
        for t in store.trials(c.id).unwrap() {
            assert_eq!(t.status, TrialStatus::Done);
            let env = t.environment.expect("plan trials record their environment");
            assert_eq!(env.hooks.len(), 1, "the before-trial hook");
            assert_eq!(env.hooks[0].output.trim(), "hello");
            // Sampled every 0.5 s: trials shorter than that have none.
            assert_eq!(env.os_samples.len(), store.os_samples(t.id).unwrap().len());
            sampled += usize::from(!env.os_samples.is_empty());
            *kinds.entry(t.result.unwrap().kind().as_str()).or_insert(0) += 1;
        }
    }
    assert!(
        sampled >= 8,
        "the 1-second OLTP trials have OS samples ({sampled})"
    );
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            ("micro", 4),
            ("oltp", 8),
            ("tpch_power", 4),
            ("tpch_throughput", 4)
        ]
    );
}

#[test]
fn the_migrated_database_opens_again_unchanged() {
    let (dir, store) = migrated();
    let before = store.runs().unwrap();
    drop(store);
    let again = Store::open(&dir.path().join("results.db")).unwrap();
    assert_eq!(again.runs().unwrap(), before);
}
