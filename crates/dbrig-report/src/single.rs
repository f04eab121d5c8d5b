//! A single command's run reprinted as the command printed it, from the stored data alone.
//!
//! `dbrig run WORKLOAD`, `dbrig micro …`, `dbrig tpch power|throughput` store a run of one cell
//! and one trial; `dbrig perfrun` stores two cells (`a`, `b`). Right after measuring, the
//! command prints [`single_run_report`] of the run it just stored, and `dbrig report RUN`
//! prints the very same thing: one function, one source of truth. The text is each kind's own
//! console layout (sysbench's blocks for OLTP, the seeds' lines for micro-benchmarks, the
//! power / throughput tables, perfrun's Query / Cache pairs); the JSON carries the typed result
//! with what the run was (id, status, times, dbrig version, target, workload options).

use dbrig_core::results::{OltpResult, TrialResult};
use dbrig_store::{CellRow, RunId, RunKind, RunRow, Store, TrialRow};

use crate::data::CellOptions;
use crate::error::ReportError;
use crate::micro::result_text;
use crate::perfrun::{PerfRun, perfrun_json, perfrun_text};
use crate::run::{RunHeader, run_json, run_text, statements_text};
use crate::tpch::{power_text, throughput_text};

/// The two forms of a single run's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleFormat {
    /// The console text the command prints.
    Text,
    /// One pretty-printed JSON object.
    Json,
}

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
    if store.run(run)?.kind == RunKind::Perfrun {
        return perfrun_report(store, run, None, format);
    }
    match format {
        SingleFormat::Json => Ok(pretty(&single_run_json(store, run)?)),
        SingleFormat::Text => single_run_text(store, run),
    }
}

fn pretty(v: &serde_json::Value) -> String {
    crate::figures::json_text(v)
}

fn single_run_text(store: &Store, run: RunId) -> Result<String, ReportError> {
    let s = Single::load(store, run)?;
    let Some(trial) = &s.trial else {
        return Ok(s.nothing_measured());
    };
    let target = &s.cell.target;
    // Kinds other than OLTP keep their connections' set-up times in the connection facts.
    let connects = trial
        .environment
        .as_ref()
        .and_then(|e| e.connection.as_ref())
        .and_then(|c| c.connect_latency.as_ref())
        .map(|c| crate::run::connect_latency_text(c, ""))
        .unwrap_or_default();
    Ok(match &trial.result {
        Some(TrialResult::Micro(r)) => result_text(r, target) + &connects,
        Some(TrialResult::TpchPower(r)) => power_text(r, target) + &connects,
        Some(TrialResult::TpchThroughput(r)) => throughput_text(r, target) + &connects,
        Some(TrialResult::SqlBench(r)) => {
            crate::sqlbench::run_file(r, &trial.started_at, target, "")
        }
        Some(TrialResult::Load(r)) => crate::load::load_text(r, target) + &connects,
        Some(TrialResult::Tpcc(r)) => crate::tpcc::tpcc_text(r, target) + &connects,
        Some(TrialResult::Perfrun(_)) => {
            return perfrun_report(store, run, None, SingleFormat::Text);
        }
        Some(TrialResult::Oltp(_)) | None => match store.measurements(trial.id)? {
            Some(m) => {
                let oltp = oltp_result(trial);
                let header = RunHeader::from_stored(&s.cell, trial, &oltp);
                // pgbench's "query mode" is the trial's protocol mode (older trials kept it
                // in the script's options).
                let mut options = CellOptions::of(&s.cell).workload_options;
                if let Some(c) = trial
                    .environment
                    .as_ref()
                    .and_then(|e| e.connection.as_ref())
                    && let Some(o) = options.as_object_mut()
                {
                    o.insert("protocol".into(), c.protocol.name().into());
                }
                let pgbench = crate::pgbench::pgbench_text(&options, &m, &oltp);
                run_text(&header, &m, &oltp.clients) + &statements_text(&oltp.statements) + &pgbench
            }
            None => s.nothing_measured(),
        },
    })
}

/// An OLTP trial's result; a measured trial without one (it cannot be read) shows no
/// statements.
fn oltp_result(trial: &TrialRow) -> OltpResult {
    match &trial.result {
        Some(TrialResult::Oltp(o)) => o.clone(),
        _ => OltpResult::default(),
    }
}

/// The JSON of a single command's run: its typed result (for OLTP sysbench's figures with the
/// statements and interval samples) and what the run was. A caller may add to it (the client
/// process's own CPU, say) before printing.
pub fn single_run_json(store: &Store, run: RunId) -> Result<serde_json::Value, ReportError> {
    if store.run(run)?.kind == RunKind::Perfrun {
        let p = PerfRun::load(store, run)?;
        return perfrun_json(&p, p.filter(None)?.as_ref());
    }
    let s = Single::load(store, run)?;
    let mut v = match &s.trial {
        None => serde_json::json!({}),
        Some(trial) => match &trial.result {
            Some(TrialResult::Oltp(_)) | None => match store.measurements(trial.id)? {
                Some(m) => {
                    let oltp = oltp_result(trial);
                    let mut v = run_json(
                        &RunHeader::from_stored(&s.cell, trial, &oltp),
                        &m,
                        &oltp.clients,
                    );
                    v["statements"] = serde_json::to_value(&oltp.statements).unwrap_or_default();
                    v
                }
                None => serde_json::json!({}),
            },
            Some(r) => {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                // The kind is said once, at the top, for every kind alike.
                if let Some(o) = v.as_object_mut() {
                    o.remove("kind");
                }
                v
            }
        },
    };
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
    let p = PerfRun::load(store, run)?;
    let f = p.filter(filter)?;
    match format {
        SingleFormat::Text => perfrun_text(&p, f.as_ref()),
        SingleFormat::Json => Ok(pretty(&perfrun_json(&p, f.as_ref())?)),
    }
}
