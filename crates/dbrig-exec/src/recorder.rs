//! The one recorder: the only code that writes runs, cells and trials to the results database,
//! and the one status rule every kind's trials and runs are closed with.

use std::time::SystemTime;

use dbrig_core::results::TrialEnvironment;
use dbrig_store::{
    CellId, NewCell, NewRun, NewTrial, RunId, RunStatus, Store, StoreWriter, TrialStatus,
};
use dbrig_workload::TrialOutput;

use crate::error::Result;
use crate::plan::Plan;

/// How a trial's attempt ended, before the status rule is applied.
#[derive(Debug)]
pub enum Attempt {
    /// The workload ran and produced its result (boxed: it is large, the others are not).
    Measured(Box<TrialOutput>),
    /// Ctrl-C / SIGTERM stopped it before it produced anything.
    Interrupted,
    /// It could not run or failed before measuring: the reason.
    Failed(String),
}

/// Why a trial whose server restarted is not counted.
pub const RESTARTED: &str =
    "the server restarted or died during the trial: its figures mix two server lives";
/// Why an interrupted trial is not counted.
pub const INTERRUPTED: &str = "interrupted by signal";

/// What the server's life, observed before and after a trial, says about it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServerAfter {
    /// The same server life, or nothing known against it.
    #[default]
    Same,
    /// It restarted or died inside the trial.
    Restarted,
    /// It took the life probe's connection after the trial but did not answer (stopped, hung).
    Silent,
}

/// Why a trial cut short on a server that did not answer after it failed (then its clients'
/// first error).
pub const SILENT: &str =
    "the server stopped answering (no reply to dbrig's life probe after the trial)";

/// The one status rule, the same for every kind: a trial whose server restarted inside it is
/// `invalid`; one stopped by a signal is `interrupted`; one that failed to run, whose clients
/// stopped on a fatal error (on a server that then did not answer, said first), or whose
/// result says it failed (a throughput stream that lost its server) is `failed` with the first
/// reason; anything else is `done`.
pub fn trial_status(attempt: &Attempt, server: ServerAfter) -> (TrialStatus, Option<String>) {
    match attempt {
        Attempt::Failed(why) => (TrialStatus::Failed, Some(why.clone())),
        _ if server == ServerAfter::Restarted => (TrialStatus::Invalid, Some(RESTARTED.to_owned())),
        Attempt::Interrupted => (TrialStatus::Interrupted, Some(INTERRUPTED.to_owned())),
        Attempt::Measured(o) => {
            let m = o.measurements.as_ref();
            if m.is_some_and(|m| m.interrupted) {
                (TrialStatus::Interrupted, Some(INTERRUPTED.to_owned()))
            } else if let Some(first) = m.and_then(|m| m.fatal_errors.first()) {
                (
                    TrialStatus::Failed,
                    Some(match server {
                        ServerAfter::Silent => format!("{SILENT}: {first}"),
                        _ => first.clone(),
                    }),
                )
            } else if let Some(f) = o.result.failure() {
                (TrialStatus::Failed, Some(f))
            } else {
                (TrialStatus::Done, None)
            }
        }
    }
}

/// What an execution's trials came to, for the run's status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub done: usize,
    pub failed: usize,
    pub invalid: usize,
    pub interrupted: usize,
    /// Finished in the run being resumed, so not run again.
    pub skipped: usize,
    /// The first failed trial's reason.
    pub first_failure: Option<String>,
}

impl Tally {
    pub fn count(&mut self, status: TrialStatus, reason: Option<&str>) {
        match status {
            TrialStatus::Done => self.done += 1,
            TrialStatus::Invalid => self.invalid += 1,
            TrialStatus::Interrupted => self.interrupted += 1,
            TrialStatus::Failed => {
                self.failed += 1;
                if self.first_failure.is_none() {
                    self.first_failure = reason.map(str::to_owned);
                }
            }
        }
    }

    /// The one run status rule: `interrupted` when a signal stopped it, else `failed` when a
    /// trial failed or is invalid (its cell is a trial short: `--resume` redoes it), else
    /// `done`.
    pub fn run_status(&self, stopped: bool, scheduled: usize) -> (RunStatus, Option<String>) {
        if stopped {
            (
                RunStatus::Interrupted,
                Some(format!(
                    "interrupted after {} trial(s); continue with --resume",
                    self.done
                )),
            )
        } else if self.failed > 0 {
            let first = self.first_failure.as_deref().unwrap_or("?");
            (
                RunStatus::Failed,
                Some(if scheduled == 1 {
                    first.to_owned()
                } else {
                    format!(
                        "{} of {scheduled} trial(s) failed; first: {first}",
                        self.failed
                    )
                }),
            )
        } else if self.invalid > 0 {
            (
                RunStatus::Failed,
                Some(if scheduled == 1 {
                    RESTARTED.to_owned()
                } else {
                    format!(
                        "{} of {scheduled} trial(s) invalid ({RESTARTED}): redo them with --resume",
                        self.invalid
                    )
                }),
            )
        } else {
            (RunStatus::Done, None)
        }
    }
}

/// One trial, ready to record.
#[derive(Debug)]
pub struct TrialRecord {
    pub trial: u32,
    pub status: TrialStatus,
    pub reason: Option<String>,
    pub started: SystemTime,
    pub finished: SystemTime,
    pub output: Option<TrialOutput>,
    pub environment: TrialEnvironment,
}

/// The results database, written only through here: the one holder of a [`StoreWriter`]
/// (`writes_only_here` below keeps it so).
pub struct Recorder {
    store: Store,
}

impl Recorder {
    pub fn new(store: Store) -> Self {
        Recorder { store }
    }

    /// Read access, for observers and reports.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn into_store(self) -> Store {
        self.store
    }

    /// The writer, for one write.
    fn writer(&mut self) -> StoreWriter<'_> {
        StoreWriter::for_recorder(&mut self.store)
    }

    /// Record the run as `running` with its cells, or with `resume` reopen the last run of
    /// this plan (refused while the dbrig that writes it is alive). Returns the run, its cells
    /// in plan order, and whether it was resumed.
    pub fn begin(
        &mut self,
        plan: &Plan,
        command_line: &[String],
        host: &serde_json::Value,
        plan_text: Option<&str>,
        resume: bool,
        provenance: &dbrig_store::Provenance,
    ) -> Result<(RunId, Vec<CellId>, bool)> {
        let resumed = match resume {
            true => self.store.latest_plan_run(&plan.name)?,
            false => None,
        };
        let run = match resumed {
            Some(id) => {
                self.writer().reopen_run(id)?;
                id
            }
            None => self.writer().begin_run(&NewRun {
                kind: plan.kind,
                name: &plan.name,
                started_at: SystemTime::now(),
                options: &plan.resolved,
                host,
                dbrig_version: crate::VERSION,
                command_line,
                plan_text,
            })?,
        };
        // A resumed run keeps the provenance it began with.
        if resumed.is_none() && !provenance.is_empty() {
            self.writer().set_run_provenance(run, provenance)?;
        }
        let mut cells = Vec::with_capacity(plan.cells.len());
        for c in &plan.cells {
            cells.push(self.writer().ensure_cell(
                run,
                &NewCell {
                    cell_key: &c.key,
                    configuration: &plan.configurations[c.configuration].name,
                    workload: c.workload_name(),
                    clients: c.clients,
                    options: &c.spec,
                    target: &plan.configurations[c.configuration].describe(),
                },
            )?);
        }
        Ok((run, cells, resumed.is_some()))
    }

    /// Replace the host facts stored with `run` (its busy processes are known only once its
    /// first trial is over).
    pub fn set_host(&mut self, run: RunId, host: &serde_json::Value) -> Result<()> {
        Ok(self.writer().set_run_host(run, host)?)
    }

    /// Whether trial `trial` of the cell with `cell_key` is already finished in `run`.
    pub fn is_finished(&self, run: RunId, cell_key: &str, trial: u32) -> Result<bool> {
        Ok(self
            .store
            .finished_trials(run, cell_key)?
            .iter()
            .any(|t| t.trial == trial))
    }

    /// Store one trial.
    pub fn record(&mut self, cell: CellId, t: &TrialRecord) -> Result<()> {
        let (result, measurements, server_version) = match &t.output {
            Some(o) => (
                Some(&o.result),
                o.measurements.as_ref(),
                Some(o.server_version.as_str()),
            ),
            None => (None, None, None),
        };
        self.writer().record_trial(
            cell,
            &NewTrial {
                trial: t.trial,
                status: t.status,
                reason: t.reason.as_deref(),
                server_version,
                started_at: t.started,
                finished_at: t.finished,
                measurements,
                result,
                environment: Some(&t.environment),
            },
        )?;
        Ok(())
    }

    /// Close the run.
    pub fn finish(&mut self, run: RunId, status: RunStatus, error: Option<&str>) -> Result<()> {
        self.writer().finish_run(run, status, error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use dbrig_core::results::{ThroughputReport, TrialResult};

    use super::*;

    fn throughput(failure: Option<&str>) -> TrialOutput {
        TrialOutput {
            result: TrialResult::TpchThroughput(ThroughputReport {
                scale_factor: 0.01,
                streams: 2,
                server_version: "x".into(),
                params: dbrig_core::results::tpch::ParamMode::Validation,
                timeout_s: None,
                ts_s: 1.0,
                query_streams: Vec::new(),
                refresh_stream: None,
                throughput_at_size: None,
                failure: failure.map(str::to_owned),
                power_run: None,
                power_at_size: None,
                qphh_at_size: None,
            }),
            measurements: None,
            server_version: "x".into(),
        }
    }

    #[test]
    fn one_status_rule_for_every_kind() {
        let lost = Attempt::Measured(Box::new(throughput(Some("stream 2: the server went away"))));
        assert_eq!(
            trial_status(&lost, ServerAfter::Same),
            (
                TrialStatus::Failed,
                Some("stream 2: the server went away".into())
            )
        );
        let fine = Attempt::Measured(Box::new(throughput(None)));
        assert_eq!(
            trial_status(&fine, ServerAfter::Same),
            (TrialStatus::Done, None)
        );
        assert_eq!(
            trial_status(&fine, ServerAfter::Restarted).0,
            TrialStatus::Invalid
        );
        assert_eq!(
            trial_status(&Attempt::Interrupted, ServerAfter::Same).0,
            TrialStatus::Interrupted
        );
        assert_eq!(
            trial_status(&Attempt::Failed("no server".into()), ServerAfter::Restarted),
            (TrialStatus::Failed, Some("no server".into()))
        );
        let mut t = Tally::default();
        t.count(TrialStatus::Done, None);
        assert_eq!(t.run_status(false, 2).0, RunStatus::Done);
        t.count(TrialStatus::Invalid, Some(RESTARTED));
        assert_eq!(
            t.run_status(false, 2),
            (
                RunStatus::Failed,
                Some(format!(
                    "1 of 2 trial(s) invalid ({RESTARTED}): redo them with --resume"
                ))
            )
        );
        t.count(TrialStatus::Failed, Some("boom"));
        assert_eq!(
            t.run_status(false, 3),
            (
                RunStatus::Failed,
                Some("1 of 3 trial(s) failed; first: boom".into())
            )
        );
        assert_eq!(t.run_status(true, 3).0, RunStatus::Interrupted);
    }

    /// Every `.rs` file of the workspace's crates, relative to the workspace.
    fn sources(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    sources(&path, root, out);
                }
            } else if name.ends_with(".rs") || name == "Cargo.toml" {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }

    /// Only the store and this recorder write runs, cells and trials. The compiler keeps a
    /// `Store` read-only (`dbrig_store`'s `writer.rs` shows it with `compile_fail` examples);
    /// this walks the sources for the two doors to a `StoreWriter`: `for_recorder` is named
    /// only here and in the store, `dbrig_store::testing` only in test code, and the
    /// `test-support` features are turned on only by dev-dependencies (so a shipped build
    /// has no `testing` at all).
    #[test]
    fn writes_only_here() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().unwrap();
        let mut files = Vec::new();
        sources(&root.join("crates"), &root, &mut files);
        assert!(files.len() > 100, "walked {} files", files.len());
        let mut wrong = Vec::new();
        for (path, text) in &files {
            let in_store = path.starts_with("crates/dbrig-store/");
            if path.ends_with(".rs") {
                if text.contains("for_recorder(")
                    && !in_store
                    && path != "crates/dbrig-exec/src/recorder.rs"
                {
                    wrong.push(format!("{path}: makes a StoreWriter"));
                }
                // Test code: a test or example folder, the report's fixtures (compiled only
                // with `test-support`), or after a `#[cfg(test)]`.
                let test_code = path.contains("/tests/")
                    || path.contains("/examples/")
                    || path == "crates/dbrig-report/src/fixture.rs";
                // (inside a module: indented).
                let in_test_module = |at: usize| {
                    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                    text[..at].contains("#[cfg(test)]") && text[line_start..].starts_with(' ')
                };
                let mut uses = text.match_indices("dbrig_store::testing").map(|(at, _)| at);
                if !in_store && !test_code && !uses.all(in_test_module) {
                    wrong.push(format!("{path}: uses dbrig_store::testing outside tests"));
                }
            } else {
                // Cargo.toml: `test-support` only as a feature of its own or in
                // [dev-dependencies].
                let mut section = "";
                for line in text.lines() {
                    let line = line.trim();
                    if line.starts_with('[') {
                        section = line;
                    } else if line.contains("\"test-support\"")
                        && !line.starts_with("test-support")
                        && section != "[dev-dependencies]"
                    {
                        wrong.push(format!("{path}: turns test-support on in {section}"));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
