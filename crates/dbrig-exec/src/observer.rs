//! What the executor tells whoever watches a run: progress, lines for the user, OLTP interval
//! samples, the power test's report after every query, and each trial as it is recorded. The
//! binary prints these (a progress bar or plain lines, sysbench's interval lines, a live chart,
//! the HTML page); tests collect them. The executor itself prints nothing.

use dbrig_core::IntervalSample;
use dbrig_core::results::PowerReport;
use dbrig_store::{RunId, Store};
use dbrig_workload::progress::{LoadProgress, TableRows};

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
    /// A line for the user: what a step is doing, or a warning (`warning: …`).
    fn note(&self, _line: &str) {}
    /// A prepare step's rows loaded so far, table by table (see [`LoadProgress::rows`]).
    fn load_rows(&self, _tables: &[TableRows], _finished: bool) {}
    /// An OLTP interval sample (`--report-interval`), as the trial runs.
    fn interval(&self, _trial: &TrialRef<'_>, _sample: &IntervalSample) {}
    /// A power test's report so far, after each query.
    fn power_query(&self, _trial: &TrialRef<'_>, _report: &PowerReport) {}
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

/// A prepare step's progress, heard by the observer: lines as notes, rows as load rows.
pub(crate) struct LoadNotes<'a>(pub &'a dyn Observer);

impl LoadProgress for LoadNotes<'_> {
    fn say(&self, line: &str) {
        self.0.note(line);
    }

    fn rows(&self, tables: &[TableRows], finished: bool) {
        self.0.load_rows(tables, finished);
    }
}

/// An observer that ignores everything.
pub struct Unobserved;

impl Observer for Unobserved {}
