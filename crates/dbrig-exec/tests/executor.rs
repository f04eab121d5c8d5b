//! The one executor in-process, on the mock engine: trials interleaved and recorded as they
//! end with typed results, what the observer hears, a target that is down failing only its
//! own trials, resume skipping finished trials, and a stop before the first trial.

use std::sync::Mutex;

use dbrig_core::results::TrialResult;
use dbrig_exec::{ExecOptions, Observer, TrialRef, execute};
use dbrig_store::{RunStatus, Store, TrialStatus};
use dbrig_workload::progress::{ProgressEvent, TableRows};
use dbrig_workload::runner::Stopper;

const PLAN: &str = r#"
name = "mock-plan"
trials = 2
clients = [2]
baseline = "A"
[run]
events = 20
time = 0
[[configuration]]
name = "A"
target = "mock:"
[[configuration]]
name = "B"
target = "mock:?latency_us=50"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 100
[environment]
os-stats-interval = 0
[environment.hooks]
before-trial = "echo before"
"#;

#[derive(Default)]
struct Heard {
    recorded: Mutex<Vec<String>>,
    skipped: Mutex<usize>,
    /// Raise this stopper once this many trials are recorded (a Ctrl-C mid-plan).
    stop_after: Option<(usize, std::sync::Arc<Stopper>)>,
    /// Each table's last row report of a prepare step, and how many reports said finished.
    load_rows: Mutex<(Vec<TableRows>, usize)>,
}

impl Observer for Heard {
    fn trial_recorded(&self, t: &TrialRef<'_>, _: &Store, _: dbrig_store::RunId, summary: &str) {
        let mut recorded = self.recorded.lock().unwrap();
        recorded.push(format!("{} {}: {summary}", t.configuration, t.trial));
        if let Some((n, stopper)) = &self.stop_after
            && recorded.len() >= *n
        {
            stopper.stop();
        }
    }

    fn trial_skipped(&self, _: &TrialRef<'_>) {
        *self.skipped.lock().unwrap() += 1;
    }

    fn progress(&self, _: Option<&TrialRef<'_>>, event: ProgressEvent<'_>) {
        let ProgressEvent::LoadRows { tables, finished } = event else {
            return;
        };
        let mut heard = self.load_rows.lock().unwrap();
        heard.0 = tables.to_vec();
        heard.1 += usize::from(finished);
    }
}

fn plan(dir: &std::path::Path, text: &str) -> dbrig_exec::Plan {
    let p = dir.join("plan.toml");
    std::fs::write(&p, text).unwrap();
    dbrig_exec::plan::load(&p, &[], &[]).unwrap()
}

async fn run(
    dir: &std::path::Path,
    text: &str,
    resume: bool,
    stop_first: bool,
    heard: &Heard,
) -> dbrig_exec::Outcome {
    let store = Store::open(&dir.join("results.db")).unwrap();
    let interrupt = match &heard.stop_after {
        Some((_, s)) => std::sync::Arc::clone(s),
        None => Stopper::new(),
    };
    if stop_first {
        interrupt.stop();
    }
    execute(
        plan(dir, text),
        store,
        ExecOptions {
            state_dir: dir.to_owned(),
            command_line: vec!["dbrig".into(), "run".into(), "plan.toml".into()],
            resume,
            interrupt,
            observer: heard,
            provenance: Default::default(),
        },
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn trials_are_interleaved_recorded_typed_and_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let heard = Heard::default();
    let outcome = run(dir.path(), PLAN, false, false, &heard).await;
    assert_eq!(outcome.status, RunStatus::Done, "{:?}", outcome.error);
    assert_eq!((outcome.tally.done, outcome.tally.failed), (4, 0));
    let recorded = heard.recorded.lock().unwrap().clone();
    let order: Vec<&str> = recorded.iter().map(|r| &r[..3]).collect();
    assert_eq!(order, ["A 1", "B 1", "A 2", "B 2"], "A B A B: {recorded:?}");
    assert!(recorded.iter().all(|r| r.contains("tps")), "{recorded:?}");
    let store = &outcome.store;
    for c in store.cells(outcome.run).unwrap() {
        for t in store.trials(c.id).unwrap() {
            assert_eq!(t.status, TrialStatus::Done);
            let Some(TrialResult::Oltp(o)) = &t.result else {
                panic!("{t:?}")
            };
            let point = o
                .statements
                .iter()
                .find(|s| s.statement == "point_select")
                .unwrap();
            assert_eq!(point.count, 20, "20 events of one point select each");
            assert_eq!(t.measurements.as_ref().unwrap().transactions, 20);
            let env = t.environment.as_ref().unwrap();
            assert_eq!(env.hooks.len(), 1);
            assert_eq!(env.hooks[0].output.trim(), "before");
            assert!(env.seed != 0);
        }
    }
    drop(outcome);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_plan_resumes_without_running_a_trial_twice() {
    let dir = tempfile::tempdir().unwrap();
    let heard = Heard {
        stop_after: Some((2, Stopper::new())),
        ..Heard::default()
    };
    let first = run(dir.path(), PLAN, false, false, &heard).await;
    assert_eq!(first.status, RunStatus::Interrupted);
    assert_eq!(first.tally.done, 2);
    let run_id = first.run;
    drop(first);
    let heard = Heard::default();
    let again = run(dir.path(), PLAN, true, false, &heard).await;
    assert!(again.resumed);
    assert_eq!(again.run, run_id, "the same run continues");
    assert_eq!((again.tally.skipped, again.tally.done), (2, 2));
    assert_eq!(again.status, RunStatus::Done);
    assert_eq!(*heard.skipped.lock().unwrap(), 2);
    let trials: usize = again
        .store
        .cells(again.run)
        .unwrap()
        .iter()
        .map(|c| again.store.trials(c.id).unwrap().len())
        .sum();
    assert_eq!(trials, 4, "nothing stored twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_target_that_is_down_fails_its_own_trials_only() {
    let dir = tempfile::tempdir().unwrap();
    let text = PLAN.replace("mock:?latency_us=50", "mysql://root@127.0.0.1:1/nothing");
    let heard = Heard::default();
    let outcome = run(dir.path(), &text, false, false, &heard).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!((outcome.tally.done, outcome.tally.failed), (2, 2));
    let reason = outcome.tally.first_failure.clone().unwrap();
    assert!(reason.contains("127.0.0.1:1"), "{reason}");
    assert!(outcome.error.unwrap().contains("2 of 4 trial(s) failed"));
    for c in outcome.store.cells(outcome.run).unwrap() {
        for t in outcome.store.trials(c.id).unwrap() {
            let failed = c.configuration == "B";
            assert_eq!(t.status == TrialStatus::Failed, failed, "{t:?}");
            assert_eq!(t.result.is_none(), failed);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_before_the_first_trial_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let heard = Heard::default();
    let outcome = run(dir.path(), PLAN, false, true, &heard).await;
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert!(heard.recorded.lock().unwrap().is_empty());
    assert!(outcome.error.unwrap().contains("--resume"));
}

/// Warm-up events are served by the engine but not counted: the mock counts every statement it
/// answers, so a run with a warm-up must have been served more than the same run without one,
/// by whole events, while both count exactly the events asked for.
#[tokio::test(flavor = "multi_thread")]
async fn warm_up_events_are_served_but_not_counted() {
    let plan_text = |mock: &str, warmup: &str| {
        format!(
            "name = \"warm\"\ntrials = 1\nclients = [1]\n[run]\nevents = 25\ntime = 0\nwarmup = {warmup}\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{mock}\"\n\
             [[workload]]\nname = \"oltp_point_select\"\n[workload.options]\ntable-size = 100\n\
             [environment]\nos-stats-interval = 0\n"
        )
    };
    let mut served = Vec::new();
    for warmup in ["0", "0.3"] {
        // A mock URL of this test process alone, so no other test's statements are counted.
        let mock = format!(
            "mock:?latency_us=200&version=warmup-{warmup}-{}",
            std::process::id()
        );
        let dir = tempfile::tempdir().unwrap();
        let heard = Heard::default();
        let outcome = run(dir.path(), &plan_text(&mock, warmup), false, false, &heard).await;
        assert_eq!(outcome.status, RunStatus::Done, "{:?}", outcome.error);
        let cells = outcome.store.cells(outcome.run).unwrap();
        let trials = outcome.store.trials(cells[0].id).unwrap();
        let m = trials[0].measurements.as_ref().unwrap();
        assert_eq!(m.transactions, 25, "warm-up {warmup}");
        assert_eq!(m.queries.total(), 25, "one point select per event");
        served.push(dbrig_driver::mock_statements_served(
            &dbrig_driver::Target::parse(&mock).unwrap(),
        ));
    }
    let (cold, warm) = (served[0], served[1]);
    // Without a warm-up: the 25 counted events and whatever setup the run does.
    assert!(cold >= 25, "{served:?}");
    // With one: the same, plus at least one whole warm-up event that was not counted.
    assert!(warm > cold, "the warm-up served nothing: {served:?}");
}

/// Read, write and other counts of a mixed workload, through runner, measurements and store:
/// sysbench's oltp_read_write event is 14 reads (10 point and 4 range selects), 4 writes
/// (2 updates, a delete and an insert, each changing one row on the mock) and 2 others
/// (BEGIN and COMMIT), so a swapped pair of counters anywhere on the way shows.
#[tokio::test(flavor = "multi_thread")]
async fn read_write_other_counts_survive_the_whole_path() {
    let text = "name = \"rwo\"\ntrials = 1\nclients = [2]\n[run]\nevents = 10\ntime = 0\n\
                [[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n\
                [[workload]]\nname = \"oltp_read_write\"\n[workload.options]\ntable-size = 100\n\
                [environment]\nos-stats-interval = 0\n";
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(dir.path(), text, false, false, &Heard::default()).await;
    assert_eq!(outcome.status, RunStatus::Done, "{:?}", outcome.error);
    let cells = outcome.store.cells(outcome.run).unwrap();
    let trials = outcome.store.trials(cells[0].id).unwrap();
    let m = trials[0].measurements.as_ref().unwrap();
    assert_eq!(m.transactions, 10);
    assert_eq!(
        (m.queries.read, m.queries.write, m.queries.other),
        (140, 40, 20)
    );
}

/// A plan's prepare step reports its rows, table by table, to the observer (the console
/// shows them in its bar), ending with one finished report of the exact counts.
#[tokio::test(flavor = "multi_thread")]
async fn a_prepare_step_reports_its_rows_to_the_observer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data.db");
    let text = format!(
        r#"
name = "prepare-rows"
trials = 1
clients = [1]
[run]
events = 5
time = 0
[[configuration]]
name = "A"
target = "sqlite:{}"
[[workload]]
name = "oltp_point_select"
[workload.options]
tables = 2
table-size = 3000
[environment]
os-stats-interval = 0
"#,
        db.display()
    );
    let heard = Heard::default();
    let outcome = run(dir.path(), &text, false, false, &heard).await;
    assert_eq!(outcome.status, RunStatus::Done, "{:?}", outcome.error);
    let (tables, finished) = heard.load_rows.lock().unwrap().clone();
    assert_eq!(finished, 1);
    assert_eq!(
        tables
            .iter()
            .map(|t| (t.table.as_str(), t.loaded, t.planned))
            .collect::<Vec<_>>(),
        [("sbtest1", 3000, 3000), ("sbtest2", 3000, 3000)]
    );
}
