use dbrig_store::testing::writer;
use dbrig_store::{RunKind, RunStatus, TrialStatus};

use crate::{begin, cell, measurements, trial};

/// Only `done` trials are finished: an invalid one (its server restarted) is redone.
#[test]
fn finished_trials_count_done_only() {
    let m = measurements();
    let mut store = crate::fresh();
    let run = begin(&mut store, RunKind::Plan, "nightly");
    let c = cell(&mut store, run, "cell-1", 8);
    let other = cell(&mut store, run, "cell-2", 16);
    writer(&mut store)
        .record_trial(c, &trial(1, TrialStatus::Done, Some(&m)))
        .unwrap();
    writer(&mut store)
        .record_trial(c, &trial(2, TrialStatus::Invalid, Some(&m)))
        .unwrap();
    writer(&mut store)
        .record_trial(c, &trial(3, TrialStatus::Failed, None))
        .unwrap();
    writer(&mut store)
        .record_trial(c, &trial(4, TrialStatus::Interrupted, Some(&m)))
        .unwrap();
    writer(&mut store)
        .record_trial(other, &trial(1, TrialStatus::Done, Some(&m)))
        .unwrap();

    let done: Vec<u32> = store
        .finished_trials(run, "cell-1")
        .unwrap()
        .iter()
        .map(|t| t.trial)
        .collect();
    assert_eq!(done, [1]);
    assert_eq!(store.finished_trials(run, "cell-2").unwrap().len(), 1);
    assert!(
        store
            .finished_trials(run, "no-such-cell")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn finished_trials_for_plan_span_runs_of_that_plan() {
    let place = crate::Place::make();
    let m = measurements();
    // First attempt: trial 1 done, then the process dies during trial 2.
    {
        let mut store = place.open();
        let run = begin(&mut store, RunKind::Plan, "nightly");
        let c = cell(&mut store, run, "cell-1", 8);
        writer(&mut store)
            .record_trial(c, &trial(1, TrialStatus::Done, Some(&m)))
            .unwrap();
        // A different plan with the same cell key does not count.
        let unrelated = begin(&mut store, RunKind::Plan, "weekly");
        let u = cell(&mut store, unrelated, "cell-1", 8);
        writer(&mut store)
            .record_trial(u, &trial(2, TrialStatus::Done, Some(&m)))
            .unwrap();
        writer(&mut store)
            .finish_run(unrelated, RunStatus::Done, None)
            .unwrap();
    }
    // `--resume`: find what is finished, run the rest.
    let mut store = place.open();
    let finished: Vec<u32> = store
        .finished_trials_for_plan("nightly", "cell-1")
        .unwrap()
        .iter()
        .map(|t| t.trial)
        .collect();
    assert_eq!(finished, [1]);
    let run = begin(&mut store, RunKind::Plan, "nightly");
    let c = cell(&mut store, run, "cell-1", 8);
    writer(&mut store)
        .record_trial(c, &trial(2, TrialStatus::Done, Some(&m)))
        .unwrap();
    writer(&mut store)
        .finish_run(run, RunStatus::Done, None)
        .unwrap();
    let finished: Vec<u32> = store
        .finished_trials_for_plan("nightly", "cell-1")
        .unwrap()
        .iter()
        .map(|t| t.trial)
        .collect();
    assert_eq!(finished, [1, 2]);
    assert_eq!(store.finished_trials(run, "cell-1").unwrap().len(), 1);
}
