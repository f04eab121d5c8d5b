//! Writing runs, cells and trials: [`ResultsWriter`], what a backend implements, and
//! [`StoreWriter`], the one handle that calls it.
//!
//! The boundary "only the store and the recorder write" is the compiler's: a [`crate::Store`]
//! — what reports, observers and the binary hold — has read methods only and never hands out
//! its backend; a `StoreWriter` borrows the store mutably and is made by
//! [`StoreWriter::for_recorder`], which only `dbrig_exec`'s recorder calls (a test there walks
//! the workspace's sources for other callers), or by `dbrig_store::testing`, which exists only
//! in test builds (`test-support` feature).
//!
//! The checks that do not depend on the backend are made here, once, before the backend sees
//! anything: no unredacted password in any stored field, a run closed only with a final status.
//!
//! ```compile_fail,E0599
//! // A store's holder cannot write: `Store` has no write methods.
//! fn close(store: &mut dbrig_store::Store, run: dbrig_store::RunId) {
//!     store.finish_run(run, dbrig_store::RunStatus::Done, None).unwrap();
//! }
//! ```
//!
//! ```compile_fail,E0308
//! // Nor can a reader that holds it shared (a report, an observer): the writer needs it
//! // borrowed mutably.
//! fn close(store: &dbrig_store::Store, run: dbrig_store::RunId) {
//!     dbrig_store::StoreWriter::for_recorder(store)
//!         .finish_run(run, dbrig_store::RunStatus::Done, None)
//!         .unwrap();
//! }
//! ```
//!
//! ```compile_fail,E0451
//! // Nor can a writer be built by hand.
//! fn build(store: &mut dbrig_store::Store) -> dbrig_store::StoreWriter<'_> {
//!     dbrig_store::StoreWriter { store }
//! }
//! ```
//!
//! What the recorder does, and nothing else may:
//!
//! ```
//! # fn main() -> Result<(), dbrig_store::StoreError> {
//! let mut store = dbrig_store::Store::open_in_memory()?;
//! let run = dbrig_store::StoreWriter::for_recorder(&mut store).begin_run(&dbrig_store::NewRun {
//!     kind: dbrig_store::RunKind::Oltp,
//!     name: "oltp_read_only",
//!     started_at: std::time::SystemTime::now(),
//!     options: &serde_json::json!({}),
//!     host: &serde_json::json!({}),
//!     dbrig_version: "0",
//!     command_line: &[],
//!     plan_text: None,
//! })?;
//! dbrig_store::StoreWriter::for_recorder(&mut store).finish_run(
//!     run,
//!     dbrig_store::RunStatus::Done,
//!     None,
//! )?;
//! assert_eq!(store.run(run)?.status, dbrig_store::RunStatus::Done);
//! # Ok(())
//! # }
//! ```

use std::time::SystemTime;

use crate::error::StoreError;
use crate::model::{CellId, NewCell, NewRun, NewTrial, RunId, RunStatus, TrialId, TrialJson};
use crate::reader::ResultsReader;
use crate::secret::{contains_unredacted_password, json_contains_unredacted_password};
use crate::store::Store;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The writes a backend implements. What it is handed has passed [`StoreWriter`]'s checks
/// (no unredacted password, a final status to close with); the backend keeps the rules that
/// need its data, each inside one transaction:
///
/// - a run is inserted `running` with this process's pid, committed at once;
/// - `finish_run` refuses a run already `done` or `failed` ([`StoreError::RunAlreadyFinished`]);
/// - `reopen_run` refuses a `done` run, and a `running` one whose dbrig is alive
///   ([`StoreError::RunBeingWritten`]), checked under the write lock;
/// - `ensure_cell` returns the existing cell of the same key, refusing a different
///   specification ([`StoreError::CellMismatch`]);
/// - `record_trial` writes the trial and its intervals all or nothing, and refuses a second
///   `done` result for one trial number ([`StoreError::DuplicateTrial`]).
///
/// `Send`, since an executor's future owns its store across awaits.
pub trait ResultsWriter: ResultsReader + Send {
    /// Insert a run with status `running`.
    fn begin_run(&mut self, run: &NewRun<'_>) -> Result<RunId>;

    /// Replace the host facts of run `id`.
    fn set_run_host(&mut self, id: RunId, host: &serde_json::Value) -> Result<()>;

    /// Replace the tags and code revision of run `id`.
    fn set_run_provenance(
        &mut self,
        id: RunId,
        provenance: &crate::model::Provenance,
    ) -> Result<()>;

    /// Close a run with a final status (`done`, `failed`, `interrupted`) at `finished_at`.
    fn finish_run(
        &mut self,
        id: RunId,
        status: RunStatus,
        error: Option<&str>,
        finished_at: SystemTime,
    ) -> Result<()>;

    /// Set a run that did not finish cleanly back to `running`, owned by this process.
    fn reopen_run(&mut self, id: RunId) -> Result<()>;

    /// The cell of `run` with `cell.cell_key`, inserted if new.
    fn ensure_cell(&mut self, run: RunId, cell: &NewCell<'_>) -> Result<CellId>;

    /// Insert the run of a copy (`crate::Importer`) with its uid, kind, name, start, command
    /// line, options, host facts and plan as `doc` has them, `running` and owned by this
    /// process until the copy closes it (a copy cut short reads back abandoned); its cells and
    /// trials follow through the methods below. A run with the same uid already here is left
    /// as it is: `Err` of its id.
    fn insert_copied_run(
        &mut self,
        doc: &crate::copy::RunDocument,
        started_at: SystemTime,
    ) -> Result<Result<RunId, RunId>>;

    /// Record a trial and its interval samples in one transaction; its result and
    /// environment are stored as `json` has them.
    fn record_trial(
        &mut self,
        cell: CellId,
        trial: &NewTrial<'_>,
        json: &TrialJson,
    ) -> Result<TrialId>;
}

/// The one way to write runs, cells and trials (see the module's documentation for who may
/// make one). Borrows its [`Store`] mutably, so nothing reads a half-made write.
pub struct StoreWriter<'a> {
    store: &'a mut Store,
}

impl<'a> StoreWriter<'a> {
    /// The recorder's writer: `dbrig_exec::Recorder` is the only caller outside this crate
    /// (a test in `dbrig-exec` keeps it so).
    pub fn for_recorder(store: &'a mut Store) -> StoreWriter<'a> {
        StoreWriter { store }
    }

    /// The store written, for reading.
    pub fn store(&self) -> &Store {
        self.store
    }

    fn refuse_secret(&self, what: &str, found: bool) -> Result<()> {
        if found {
            Err(StoreError::UnredactedSecret {
                path: self.store.path().to_owned(),
                what: what.to_owned(),
            })
        } else {
            Ok(())
        }
    }

    /// Insert a run with status `running`, committed at once so that a crash leaves a trace.
    pub fn begin_run(&mut self, run: &NewRun<'_>) -> Result<RunId> {
        self.refuse_secret(
            "the command line",
            run.command_line
                .iter()
                .any(|a| contains_unredacted_password(a)),
        )?;
        self.refuse_secret(
            "the run options",
            json_contains_unredacted_password(run.options),
        )?;
        self.refuse_secret(
            "the host facts",
            json_contains_unredacted_password(run.host),
        )?;
        self.refuse_secret(
            "the plan text",
            run.plan_text.is_some_and(contains_unredacted_password),
        )?;
        self.store.backend_mut().begin_run(run)
    }

    /// Replace the host facts of run `id`.
    pub fn set_run_host(&mut self, id: RunId, host: &serde_json::Value) -> Result<()> {
        self.refuse_secret("the host facts", json_contains_unredacted_password(host))?;
        self.store.backend_mut().set_run_host(id, host)
    }

    /// Store the tags and code revision of run `id` (`--tag`, `--commit`).
    pub fn set_run_provenance(
        &mut self,
        id: RunId,
        provenance: &crate::model::Provenance,
    ) -> Result<()> {
        self.refuse_secret(
            "the run's tags",
            json_contains_unredacted_password(&to_json_value(provenance)),
        )?;
        self.store.backend_mut().set_run_provenance(id, provenance)
    }

    /// Close a run as `done`, `failed` or `interrupted`, with the error text if any.
    ///
    /// An `interrupted` run may still be closed again (by the process that owns it); a `done`
    /// or `failed` run may not.
    pub fn finish_run(&mut self, id: RunId, status: RunStatus, error: Option<&str>) -> Result<()> {
        self.finish_run_at(id, status, error, SystemTime::now())
    }

    /// [`StoreWriter::finish_run`] with an explicit finishing time.
    pub fn finish_run_at(
        &mut self,
        id: RunId,
        status: RunStatus,
        error: Option<&str>,
        finished_at: SystemTime,
    ) -> Result<()> {
        if matches!(status, RunStatus::Running | RunStatus::Abandoned) {
            return Err(StoreError::NotAFinalStatus {
                path: self.store.path().to_owned(),
                id,
            });
        }
        self.refuse_secret(
            "the run's error text",
            error.is_some_and(contains_unredacted_password),
        )?;
        self.store
            .backend_mut()
            .finish_run(id, status, error, finished_at)
    }

    /// Set a run that did not finish cleanly (`interrupted`, `failed`, or left `running`)
    /// back to `running`, so `--resume` continues it in place; its finished trials stay and
    /// are skipped by the caller. A `done` run is refused, and so is a run whose dbrig is
    /// still alive ([`StoreError::RunBeingWritten`]).
    pub fn reopen_run(&mut self, id: RunId) -> Result<()> {
        self.store.backend_mut().reopen_run(id)
    }

    /// The cell of `run` with `cell.cell_key`, inserted if new. Calling it again with the same
    /// cell returns the same id; the same key with a different specification is an error.
    pub fn ensure_cell(&mut self, run: RunId, cell: &NewCell<'_>) -> Result<CellId> {
        self.refuse_secret("the cell target", contains_unredacted_password(cell.target))?;
        self.refuse_secret(
            "the cell options",
            json_contains_unredacted_password(cell.options),
        )?;
        self.store.backend_mut().ensure_cell(run, cell)
    }

    /// Record a trial and its interval samples in one transaction.
    ///
    /// A cell holds at most one finished (`done`) result per trial number: recording another
    /// is [`StoreError::DuplicateTrial`]. Failed, invalid and interrupted attempts are kept
    /// beside it as history.
    pub fn record_trial(&mut self, cell: CellId, trial: &NewTrial<'_>) -> Result<TrialId> {
        self.refuse_secret(
            "the trial's reason",
            trial.reason.is_some_and(contains_unredacted_password),
        )?;
        let json = TrialJson {
            result: trial.result.map(to_json_value),
            environment: trial.environment.map(to_json_value),
        };
        self.refuse_secret(
            "the trial's result",
            json.result
                .as_ref()
                .is_some_and(json_contains_unredacted_password),
        )?;
        self.refuse_secret(
            "the trial's environment",
            json.environment
                .as_ref()
                .is_some_and(json_contains_unredacted_password),
        )?;
        if let Some(m) = trial.measurements {
            self.refuse_secret(
                "the trial's fatal errors",
                m.fatal_errors
                    .iter()
                    .any(|e| contains_unredacted_password(e)),
            )?;
        }
        self.store.backend_mut().record_trial(cell, trial, &json)
    }
}

/// A value as JSON, for the password check. These types serialize infallibly (plain data,
/// string keys), so a failure is a bug, not a user error.
pub(crate) fn to_json_value<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).expect("plain data serializes to JSON")
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use serde_json::json;

    use super::*;
    use crate::model::RunKind;

    /// A run's host facts are completed after its first trial; a password in them is refused
    /// and leaves the stored facts as they were.
    #[test]
    fn host_facts_are_replaced_and_never_take_a_password() {
        let mut store = Store::open_in_memory().unwrap();
        let v = json!({});
        let run = StoreWriter::for_recorder(&mut store)
            .begin_run(&NewRun {
                kind: RunKind::Oltp,
                name: "w",
                started_at: UNIX_EPOCH,
                options: &v,
                host: &v,
                dbrig_version: "0",
                command_line: &[],
                plan_text: None,
            })
            .unwrap();
        let mut writer = StoreWriter::for_recorder(&mut store);
        let busy = json!({"cpu_model": "x", "busy_processes": [{"pid": 7, "name": "backup", "cpu_pct": 40.0}]});
        writer.set_run_host(run, &busy).unwrap();
        assert_eq!(writer.store().run(run).unwrap().host, busy);
        let leaky = json!({"note": "mysql://root:Sekr3t@db.example/test"});
        assert!(matches!(
            writer.set_run_host(run, &leaky),
            Err(StoreError::UnredactedSecret { .. })
        ));
        assert_eq!(store.run(run).unwrap().host, busy);
    }
}
