//! The OLTP report (sysbench's workloads, pgbench scripts, Lua scripts, connect): ranked by its
//! throughput (no items), sysbench's console blocks (pgbench's for scripts) for a single run, the
//! table by client count with the CPU per unit of work beside it, charts against client count
//! and over time, BenchBase's files.

use std::path::{Path, PathBuf};

use dbrig_core::results::{OltpResult, ResultKind, TrialResult};
use dbrig_store::{CellRow, Store, TrialRow};

use crate::blocks::{Block, item_table, items_of, workload_table};
use crate::charts::{latency_chart, throughput_chart, workload_timeline};
use crate::data::{CellOptions, ReportData};
use crate::error::ReportError;
use crate::items::Item;
use crate::kind::{KindReport, SectionBlock, ToolFiles};
use crate::run::{RunHeader, run_json, run_text, statements_text};

/// The OLTP report.
pub struct Oltp;

/// An OLTP trial's result; a measured trial without one (it cannot be read) shows no
/// statements.
fn oltp_result(trial: &TrialRow) -> OltpResult {
    match &trial.result {
        Some(TrialResult::Oltp(o)) => o.clone(),
        _ => OltpResult::default(),
    }
}

impl KindReport for Oltp {
    fn kind(&self) -> ResultKind {
        ResultKind::Oltp
    }

    fn title(&self) -> &'static str {
        "OLTP"
    }

    fn items(&self, _result: &TrialResult) -> Vec<Item> {
        Vec::new()
    }

    fn single_text(
        &self,
        store: &Store,
        cell: &CellRow,
        trial: &TrialRow,
        _connects: &str,
    ) -> Result<Option<String>, ReportError> {
        let Some(m) = store.measurements(trial.id)? else {
            return Ok(None);
        };
        let oltp = oltp_result(trial);
        let header = RunHeader::from_stored(cell, trial, &oltp);
        // pgbench's "query mode" is the trial's protocol mode (older trials kept it in the
        // script's options).
        let mut options = CellOptions::of(cell).workload_options;
        if let Some(c) = trial
            .environment
            .as_ref()
            .and_then(|e| e.connection.as_ref())
            && let Some(o) = options.as_object_mut()
        {
            o.insert("protocol".into(), c.protocol.name().into());
        }
        let pgbench = super::pgbench::pgbench_text(&options, &m, &oltp);
        Ok(Some(
            run_text(&header, &m, &oltp.clients) + &statements_text(&oltp.statements) + &pgbench,
        ))
    }

    fn single_json(
        &self,
        store: &Store,
        cell: &CellRow,
        trial: &TrialRow,
    ) -> Result<Option<serde_json::Value>, ReportError> {
        let Some(m) = store.measurements(trial.id)? else {
            return Ok(None);
        };
        let oltp = oltp_result(trial);
        let mut v = run_json(
            &RunHeader::from_stored(cell, trial, &oltp),
            &m,
            &oltp.clients,
        );
        v["statements"] = serde_json::to_value(&oltp.statements).unwrap_or_default();
        Ok(Some(v))
    }

    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        let mut out = Vec::new();
        for w in workloads {
            out.push((Some(w.clone()), Block::Table(workload_table(data, w))));
            // Beside the throughput: what a unit of work cost in CPU.
            if !items_of(data, w).is_empty() {
                let t = item_table(
                    data,
                    w,
                    "CPU per unit of work (server process and dbrig, over the measured interval)",
                );
                out.push((Some(w.clone()), Block::Table(t)));
            }
        }
        Ok(out)
    }

    /// Throughput and latency against clients, and the timeline.
    fn charts(
        &self,
        store: &Store,
        data: &ReportData,
        workload: &str,
    ) -> Result<Vec<(&'static str, String)>, ReportError> {
        let mut out = Vec::new();
        out.extend(throughput_chart(data, workload)?.map(|s| ("throughput", s)));
        out.extend(latency_chart(data, workload)?.map(|s| ("latency", s)));
        out.extend(workload_timeline(store, data, workload)?.map(|s| ("timeline", s)));
        Ok(out)
    }

    fn tool_files(
        &self,
        tool: ToolFiles,
        store: &Store,
        data: &ReportData,
        dir: &Path,
    ) -> Option<Result<Vec<PathBuf>, ReportError>> {
        (tool == ToolFiles::Benchbase).then(|| super::benchbase::write_benchbase(store, data, dir))
    }
}
