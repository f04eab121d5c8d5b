use dbrig_core::Measurements;
use dbrig_core::results::{HookOutput, OltpResult, TrialEnvironment, TrialResult};
use dbrig_store::testing::writer;
use dbrig_store::{RunKind, StoreError, TrialStatus, parse_rfc3339};

use crate::{at, begin, cell, measurements, trial};

fn assert_same(a: &Measurements, b: &Measurements) {
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.key_distribution, b.key_distribution);
    assert_eq!(a.duration_s.to_bits(), b.duration_s.to_bits());
    assert_eq!(a.transactions, b.transactions);
    assert_eq!(a.queries, b.queries);
    assert_eq!(a.ignored_errors, b.ignored_errors);
    assert_eq!(a.reconnects, b.reconnects);
    assert_eq!(a.fatal_errors, b.fatal_errors);
    assert_eq!(a.intervals, b.intervals);
    assert_eq!(a.rate, b.rate);
    assert_eq!(a.percentile, b.percentile);
    assert_eq!(a.interrupted, b.interrupted);
    assert_eq!(a.latency.to_bytes(), b.latency.to_bytes());
}

#[test]
fn a_trial_round_trips_every_field() {
    let place = crate::Place::make();
    let m = measurements();
    let environment = TrialEnvironment {
        hooks: vec![HookOutput {
            hook: "before-trial".into(),
            scope: "plan".into(),
            command: "vmstat 1 1".into(),
            exit_code: Some(0),
            output: "procs ...".into(),
            timed_out: false,
        }],
        seed: 7,
        ..TrialEnvironment::default()
    };
    let result = TrialResult::Oltp(OltpResult {
        statements: Vec::new(),
        schedule: "closed loop".into(),
        warmup_s: 1.0,
        notes: Vec::new(),
        clients: vec![dbrig_core::ClientWork {
            events: 3,
            busy_s: 0.5,
        }],
        ..Default::default()
    });
    let (cell_id, trial_id) = {
        let mut store = place.open();
        let run = begin(&mut store, RunKind::Oltp, "oltp_read_only");
        let c = cell(&mut store, run, "k1", 8);
        let mut t = trial(1, TrialStatus::Done, Some(&m));
        t.environment = Some(&environment);
        t.result = Some(&result);
        (c, writer(&mut store).record_trial(c, &t).unwrap())
    };
    // Read back through a fresh connection: only what was committed counts.
    let store = place.open();
    let rows = store.trials(cell_id).unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.id, trial_id);
    assert_eq!(row.cell_id, cell_id);
    assert_eq!(row.trial, 1);
    assert_eq!(row.status, TrialStatus::Done);
    assert_eq!(row.reason, None);
    assert_eq!(row.server_version.as_deref(), Some("11.4.2-MariaDB"));
    assert_eq!(parse_rfc3339(&row.started_at), Some(at(30)));
    assert_eq!(parse_rfc3339(&row.finished_at), Some(at(40)));
    assert_eq!(row.environment.as_ref(), Some(&environment));
    assert_eq!(row.result.as_ref(), Some(&result));
    assert_eq!(store.trial(trial_id).unwrap(), *row);

    let s = row.measurements.as_ref().expect("measured");
    assert_eq!(s.threads, m.threads);
    assert_eq!(s.key_distribution, m.key_distribution);
    assert_eq!(s.duration_s, m.duration_s);
    assert_eq!(s.transactions, m.transactions);
    assert_eq!(s.queries, m.queries);
    assert_eq!(s.ignored_errors, m.ignored_errors);
    assert_eq!(s.reconnects, m.reconnects);
    assert_eq!(s.fatal_errors, m.fatal_errors);
    assert_eq!(s.percentile, m.percentile);
    assert_eq!(s.interrupted, m.interrupted);
    assert_eq!(s.latency_count, 7);
    assert_eq!(s.latency, m.latency_summary());
    assert_eq!(s.tps, m.tps());
    assert_eq!(s.qps, m.qps());
    assert_eq!(s.rate, m.rate);

    let hist = store.histogram(trial_id).unwrap().expect("histogram");
    assert_eq!(hist.count(), m.latency.count());
    assert_eq!(hist.sum_us(), m.latency.sum_us());
    assert_eq!(hist.percentile_us(99.0), m.latency.percentile_us(99.0));
    assert_eq!(store.intervals(trial_id).unwrap(), m.intervals);

    let back = store.measurements(trial_id).unwrap().expect("measured");
    assert_same(&back, &m);
}

#[test]
fn a_failed_trial_without_measurements() {
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Oltp, "oltp_read_only");
    let c = cell(&mut store, run, "k1", 8);
    let mut t = trial(1, TrialStatus::Failed, None);
    t.reason = Some("prepare failed: Table 'sbtest1' already exists");
    t.server_version = None;
    let id = writer(&mut store).record_trial(c, &t).unwrap();
    let row = store.trial(id).unwrap();
    assert_eq!(row.status, TrialStatus::Failed);
    assert_eq!(row.reason.as_deref(), t.reason);
    assert_eq!(row.server_version, None);
    assert_eq!(row.measurements, None);
    assert_eq!(
        (row.result.as_ref(), row.environment.as_ref()),
        (None, None)
    );
    assert!(store.histogram(id).unwrap().is_none());
    assert!(store.intervals(id).unwrap().is_empty());
    assert!(store.measurements(id).unwrap().is_none());
}

#[test]
fn empty_and_nan_measurements_survive() {
    // A trial interrupted at once: empty histogram, zero duration, no intervals, no rate.
    let mut m = measurements();
    m.latency = dbrig_core::LatencyHistogram::new();
    m.duration_s = 0.0;
    m.transactions = 0;
    m.intervals.clear();
    m.rate = None;
    m.fatal_errors.clear();
    m.percentile = f64::NAN; // SQLite stores NaN as NULL; it must come back as NaN.
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Oltp, "w");
    let c = cell(&mut store, run, "k", 1);
    let id = writer(&mut store)
        .record_trial(c, &trial(1, TrialStatus::Interrupted, Some(&m)))
        .unwrap();
    let back = store.measurements(id).unwrap().unwrap();
    assert!(back.percentile.is_nan());
    assert_eq!(back.latency.count(), 0);
    assert_eq!(back.rate, None);
    assert!(back.intervals.is_empty());
    let s = store.trial(id).unwrap().measurements.unwrap();
    assert_eq!((s.tps, s.qps, s.latency_count), (0.0, 0.0, 0));
}

#[test]
fn trials_are_listed_in_order_and_never_duplicated() {
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Plan, "p");
    let c = cell(&mut store, run, "k", 4);
    let m = measurements();
    writer(&mut store)
        .record_trial(c, &trial(2, TrialStatus::Done, Some(&m)))
        .unwrap();
    writer(&mut store)
        .record_trial(c, &trial(1, TrialStatus::Failed, None))
        .unwrap();
    writer(&mut store)
        .record_trial(c, &trial(1, TrialStatus::Done, Some(&m)))
        .unwrap();
    let order: Vec<(u32, TrialStatus)> = store
        .trials(c)
        .unwrap()
        .iter()
        .map(|t| (t.trial, t.status))
        .collect();
    assert_eq!(
        order,
        [
            (1, TrialStatus::Failed),
            (1, TrialStatus::Done),
            (2, TrialStatus::Done)
        ]
    );
    // An invalid attempt is history beside the done one (resume redoes invalid trials)…
    writer(&mut store)
        .record_trial(c, &trial(2, TrialStatus::Invalid, Some(&m)))
        .unwrap();
    // …but a second done result is refused.
    let err = writer(&mut store)
        .record_trial(c, &trial(2, TrialStatus::Done, Some(&m)))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::DuplicateTrial { trial: 2, .. }),
        "{err}"
    );
    // The refused write left nothing behind (no trial row, no intervals).
    assert_eq!(store.trials(c).unwrap().len(), 4);
    assert!(matches!(
        writer(&mut store)
            .record_trial(dbrig_store::CellId(999), &trial(1, TrialStatus::Done, None)),
        Err(StoreError::NoSuchCell { .. })
    ));
}
