//! [`ResultsReader`]: everything reports, observers and `--resume` read from a results
//! database, whichever backend holds it. Every backend implements it; callers reach it through
//! [`crate::Store`], which hands out nothing else.

use std::path::Path;

use dbrig_core::results::OsSample;
use dbrig_core::{IntervalSample, LatencyHistogram, Measurements};

use crate::error::StoreError;
use crate::model::{CellId, CellRow, RunId, RunRow, TrialId, TrialRow};

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Reading a results database. The methods of a `&Store` (it dereferences to this trait), so
/// callers neither name a backend nor import the trait.
///
/// A backend reads back exactly what [`crate::ResultsWriter`] stored: the same rows, floats to
/// the bit (`NaN` included), intervals in recording order, and a run left `running` by a dbrig
/// that is gone as [`crate::RunStatus::Abandoned`] ([`crate::writer_alive`]).
pub trait ResultsReader {
    /// Where the results are, for messages: the file (`:memory:` when in memory), or a
    /// server backend's redacted address.
    fn path(&self) -> &Path;

    /// Whether the results written are still where `path` says: a file removed
    /// ([`StoreError::FileRemoved`]) or replaced ([`StoreError::FileReplaced`]) while open is
    /// told. A backend whose results cannot be moved from under it answers `Ok`.
    fn check_in_place(&self) -> Result<()>;

    /// Write a copy of everything this backend holds, as it sees it, to a new SQLite file
    /// `to`: how the results of a file removed while open are kept.
    fn save_copy(&self, to: &Path) -> Result<()>;

    /// The schema version of the open database (always [`crate::SCHEMA_VERSION`] once open).
    fn schema_version(&self) -> Result<i64>;

    /// All runs, oldest first.
    fn runs(&self) -> Result<Vec<RunRow>>;

    /// One run; [`StoreError::NoSuchRun`] if there is none with this id.
    fn run(&self, id: RunId) -> Result<RunRow>;

    /// The most recently begun run, if any.
    fn latest_run_id(&self) -> Result<Option<RunId>>;

    /// The newest run of a plan (by name), for `--resume`.
    fn latest_plan_run(&self, plan_name: &str) -> Result<Option<RunId>>;

    /// The cells of a run, in the order they were added.
    fn cells(&self, run: RunId) -> Result<Vec<CellRow>>;

    /// One cell; [`StoreError::NoSuchCell`] if there is none with this id.
    fn cell(&self, id: CellId) -> Result<CellRow>;

    /// The trials of a cell, by trial number (attempts of one number in recording order).
    fn trials(&self, cell: CellId) -> Result<Vec<TrialRow>>;

    /// One trial; [`StoreError::NoSuchTrial`] if there is none with this id.
    fn trial(&self, id: TrialId) -> Result<TrialRow>;

    /// Finished (`done`) trials of the cell with `cell_key` in one run: what resume into the
    /// same run skips (an `invalid` trial measured nothing usable, so resume redoes it).
    fn finished_trials(&self, run: RunId, cell_key: &str) -> Result<Vec<TrialRow>>;

    /// Finished (`done`) trials of cells with `cell_key` in every run named `plan_name`: what
    /// `--resume` of a plan skips. If the plan was run twice without resume, a trial number
    /// can appear more than once (oldest first).
    fn finished_trials_for_plan(&self, plan_name: &str, cell_key: &str) -> Result<Vec<TrialRow>>;

    /// The latency histogram of a trial (`None` if it measured nothing).
    fn histogram(&self, trial: TrialId) -> Result<Option<LatencyHistogram>>;

    /// The interval samples of a trial, in time order.
    fn intervals(&self, trial: TrialId) -> Result<Vec<IntervalSample>>;

    /// The OS statistics sampled during a trial (its environment's `os_samples`), in time
    /// order; empty when the trial sampled none.
    fn os_samples(&self, trial: TrialId) -> Result<Vec<OsSample>>;

    /// A trial's full [`Measurements`] as recorded (histogram and intervals included), for
    /// rebuilding any report from the database alone; `None` if it measured nothing.
    fn measurements(&self, trial: TrialId) -> Result<Option<Measurements>> {
        let Some(m) = self.trial(trial)?.measurements else {
            return Ok(None);
        };
        let latency = self.histogram(trial)?.unwrap_or_default();
        Ok(Some(Measurements {
            threads: m.threads,
            key_distribution: m.key_distribution,
            duration_s: m.duration_s,
            transactions: m.transactions,
            queries: m.queries,
            ignored_errors: m.ignored_errors,
            reconnects: m.reconnects,
            fatal_errors: m.fatal_errors,
            latency,
            intervals: self.intervals(trial)?,
            rate: m.rate,
            percentile: m.percentile,
            interrupted: m.interrupted,
        }))
    }
}
