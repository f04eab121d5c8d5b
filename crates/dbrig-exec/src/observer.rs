//! What the executor tells whoever watches a run: each trial's progress (one
//! [`ProgressEvent`] channel: lines for the user, OLTP interval samples, the power test's report
//! after every query, a load's rows) and each trial as it is recorded. The
//! binary prints these (a progress bar or plain lines, sysbench's interval lines, a live chart,
//! the HTML page); tests collect them. The executor itself prints nothing.

use dbrig_store::{RunId, Store};
use dbrig_workload::progress::{Progress, ProgressEvent};

/// One trial of the schedule, as the observer hears of it.
#[derive(Debug, Clone)]
pub struct TrialRef<'a> {
    /// Position in the schedule (0-based) and the schedule's length.
    pub index: usize,
    pub total: usize,
    pub configuration: &'a str,
    /// The cell's workload name (its label, if it has one).
    pub workload: &'a str,
    pub clients: u32,
    pub trial: u32,
}

impl TrialRef<'_> {
    /// `A oltp_read_only 4 clients trial 2`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} {} clients trial {}",
            self.configuration, self.workload, self.clients, self.trial
        )
    }
}

/// Watches an execution. Every method has a default that does nothing.
pub trait Observer: Sync {
    /// The run was recorded (or reopened by `--resume`) in `store` and the schedule begins.
    fn run_started(&self, _run: RunId, _resumed: bool, _store: &Store) {}
    fn trial_started(&self, _trial: &TrialRef<'_>) {}
    /// What a trial (`trial`: the one running) or a step outside any trial (`None`: a prepare
    /// step, the executor's own lines) tells as it goes: the one progress channel
    /// ([`ProgressEvent`]). A trial's lines come prefixed with the trial in a plan.
    fn progress(&self, _trial: Option<&TrialRef<'_>>, _event: ProgressEvent<'_>) {}
    /// The trial was recorded with this status and one-line summary.
    fn trial_recorded(&self, _trial: &TrialRef<'_>, _store: &Store, _run: RunId, _summary: &str) {}
    /// A trial recorded failed without running: its configuration's prepare failed for a
    /// cause that lasts (said once as a note).
    fn trial_not_run(&self, _trial: &TrialRef<'_>, _store: &Store, _run: RunId) {}
    /// A trial already finished in the run being resumed.
    fn trial_skipped(&self, _trial: &TrialRef<'_>) {}
    /// The schedule is over (finished, or stopped by a signal).
    fn schedule_done(&self) {}
}

/// Progress outside any trial (a prepare step, the executor's own lines), heard by the
/// observer as such.
pub(crate) struct Untried<'a>(pub &'a dyn Observer);

impl Progress for Untried<'_> {
    fn event(&self, event: ProgressEvent<'_>) {
        self.0.progress(None, event);
    }
}

/// An observer that ignores everything.
pub struct Unobserved;

impl Observer for Unobserved {}

/// A line for the user outside any trial.
pub(crate) fn note(observer: &dyn Observer, line: &str) {
    observer.progress(None, ProgressEvent::Note(line));
}
