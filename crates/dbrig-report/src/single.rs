//! A single command's run reprinted as the command printed it, from the stored data alone.
//!
//! `dbrig run WORKLOAD`, `dbrig micro …`, `dbrig tpch power|throughput` store a run of one cell
//! and one trial; `dbrig perfrun` stores two cells (`a`, `b`). Right after measuring, the
//! command prints [`single_run_report`] of the run it just stored, and `dbrig report RUN`
//! prints the very same thing: one function, one source of truth. The text is each kind's own
//! console layout (sysbench's blocks for OLTP, the seeds' lines for micro-benchmarks, the
//! power / throughput tables, perfrun's Query / Cache pairs); the JSON carries the typed result
//! with what the run was (id, status, times, dbrig version, target, workload options).

use dbrig_core::results::ResultKind;
use dbrig_store::{CellRow, RunId, RunKind, RunRow, Store, TrialRow};

use crate::data::CellOptions;
use crate::error::ReportError;
pub use crate::kind::SingleFormat;

/// Whether `run` is a single command's run: one cell with at most one trial, or a perfrun's
/// two sides. Such a run is reported by [`single_run_report`]; any other by the plan report.
pub fn is_single_run(store: &Store, run: RunId) -> Result<bool, ReportError> {
    if store.run(run)?.kind == RunKind::Perfrun {
        return Ok(true);
    }
    let cells = store.cells(run)?;
    Ok(match cells.as_slice() {
        [cell] => store.trials(cell.id)?.len() <= 1,
        _ => false,
    })
}

/// What a single run is made of.
struct Single {
    run: RunRow,
    cell: CellRow,
    trial: Option<TrialRow>,
}

impl Single {
    fn load(store: &Store, run: RunId) -> Result<Single, ReportError> {
        let row = store.run(run)?;
        let cell = store
            .cells(run)?
            .into_iter()
            .next()
            .ok_or(ReportError::EmptyRun { run })?;
        // The last attempt is what the command ended with.
        let trial = store.trials(cell.id)?.pop();
        Ok(Single {
            run: row,
            cell,
            trial,
        })
    }

    /// What every kind's JSON carries about the run.
    fn common(&self) -> serde_json::Map<String, serde_json::Value> {
        let t = self.trial.as_ref();
        let v = serde_json::json!({
            "run_id": self.run.id,
            "kind": self.run.kind,
            "status": self.run.status,
            "error": self.run.error,
            "workload": self.cell.workload,
            "target": self.cell.target,
            "workload_options": CellOptions::of(&self.cell).workload_options,
            "trial_status": t.map(|t| t.status),
            "reason": t.and_then(|t| t.reason.clone()),
            "started_at": t.map_or(&self.run.started_at, |t| &t.started_at),
            "finished_at": t.map(|t| t.finished_at.clone()).or(self.run.finished_at.clone()),
            "dbrig_version": self.run.dbrig_version,
        });
        match v {
            serde_json::Value::Object(m) => m,
            _ => unreachable!("a JSON object literal"),
        }
    }

    /// Why there is nothing else to show: the run or its trial failed before measuring.
    fn nothing_measured(&self) -> String {
        let reason = self
            .trial
            .as_ref()
            .and_then(|t| t.reason.clone())
            .or(self.run.error.clone());
        format!(
            "run {} ({}, {}): {}{}\n",
            self.run.id,
            self.run.kind,
            self.run.name,
            self.run.status,
            match (&self.trial, reason) {
                (_, Some(r)) => format!(", nothing measured: {r}"),
                (None, None) => ", no trial recorded".to_owned(),
                (Some(_), None) => ", nothing measured".to_owned(),
            }
        )
    }
}

/// The report of a single command's run (see [`is_single_run`]), as the command printed it.
pub fn single_run_report(
    store: &Store,
    run: RunId,
    format: SingleFormat,
) -> Result<String, ReportError> {
    match format {
        SingleFormat::Json if store.run(run)?.kind == RunKind::Perfrun => {
            perfrun_report(store, run, None, format)
        }
        SingleFormat::Json => Ok(pretty(&single_run_json(store, run)?)),
        SingleFormat::Text => single_run_text(store, run, false),
    }
}

fn pretty(v: &serde_json::Value) -> String {
    crate::figures::json_text(v)
}

/// The text of [`single_run_report`]; with `histogram` (`dbrig run --histogram`), sysbench's
/// latency histogram of the trial where sysbench prints it, before "SQL statistics" (which
/// opens the OLTP text), or after the text of a kind without that block.
pub fn single_run_text(store: &Store, run: RunId, histogram: bool) -> Result<String, ReportError> {
    if store.run(run)?.kind == RunKind::Perfrun {
        return perfrun_report(store, run, None, SingleFormat::Text);
    }
    let s = Single::load(store, run)?;
    let Some(trial) = &s.trial else {
        return Ok(s.nothing_measured());
    };
    // Kinds other than OLTP keep their connections' set-up times in the connection facts.
    let connects = trial
        .environment
        .as_ref()
        .and_then(|e| e.connection.as_ref())
        .and_then(|c| c.connect_latency.as_ref())
        .map(|c| crate::run::connect_latency_text(c, ""))
        .unwrap_or_default();
    // A trial without a result reads as OLTP's: its measurements, if any.
    let kind = trial.result.as_ref().map_or(ResultKind::Oltp, |r| r.kind());
    let text = crate::kinds::of(kind).single_text(store, &s.cell, trial, &connects)?;
    let block = match histogram {
        true => store
            .histogram(trial.id)?
            .map(|h| crate::run::histogram_text(&h)),
        false => None,
    };
    Ok(match (text, block) {
        (Some(t), Some(b)) if kind == ResultKind::Oltp => b + &t,
        (Some(t), Some(b)) => t + &b,
        (None, Some(b)) => s.nothing_measured() + &b,
        (Some(t), None) => t,
        (None, None) => s.nothing_measured(),
    })
}

/// The JSON of a single command's run: its typed result (for OLTP sysbench's figures with the
/// statements and interval samples) and what the run was. A caller may add to it (the client
/// process's own CPU, say) before printing.
pub fn single_run_json(store: &Store, run: RunId) -> Result<serde_json::Value, ReportError> {
    if store.run(run)?.kind == RunKind::Perfrun
        && let Some(v) = crate::kinds::of(ResultKind::Perfrun).whole_run_json(store, run)
    {
        return v;
    }
    let s = Single::load(store, run)?;
    let mut v = match &s.trial {
        None => None,
        Some(trial) => {
            let kind = trial.result.as_ref().map_or(ResultKind::Oltp, |r| r.kind());
            crate::kinds::of(kind).single_json(store, &s.cell, trial)?
        }
    }
    .unwrap_or_else(|| serde_json::json!({}));
    if let Some(o) = v.as_object_mut() {
        o.extend(s.common());
    }
    Ok(v)
}

/// The perfrun comparison of a run: `filter` when given (an empty one shows every pair),
/// else the filter given at collection. What `dbrig perfrun report RUN [--filter]` prints.
pub fn perfrun_report(
    store: &Store,
    run: RunId,
    filter: Option<&str>,
    format: SingleFormat,
) -> Result<String, ReportError> {
    crate::kinds::of(ResultKind::Perfrun)
        .whole_run(store, run, filter, format)
        .unwrap_or(Err(ReportError::NotPerfrun { run }))
}
