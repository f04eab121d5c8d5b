//! What a report does with each kind of stored result, behind one trait: a [`KindReport`] is a
//! kind's items (what plan tables, comparisons and CSV exports rank), its single-run reprint
//! (text and JSON, as its command printed it), its section of a plan report, its charts and
//! its own parts of the exports. Each kind is a module of `kinds/`, registered in
//! `kinds/mod.rs`; the cross-cutting files (data, tables, html, render, export, …) reach a
//! kind only through the registry.

use std::path::{Path, PathBuf};

use dbrig_core::results::{ResultKind, TrialResult};
use dbrig_store::{CellRow, RunId, Store, TrialRow};

use crate::blocks::{Block, item_sections};
use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::Item;

/// The two forms of a single run's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleFormat {
    /// The console text the command prints.
    Text,
    /// One pretty-printed JSON object.
    Json,
}

/// Files in another tool's layout that a kind's results can be written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFiles {
    /// BenchBase's result files (OLTP).
    Benchbase,
    /// sql-bench's `HOST/YYYY-MM-DD/` layout.
    SqlBench,
}

/// One block of a section, with the workload it belongs to (`None`: the section's own).
pub type SectionBlock = (Option<String>, Block);

/// A figure of a kind over a whole report rather than of one cell (TPC-H's Power@Size,
/// Throughput@Size and QphH@Size per configuration), a row of the cells CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct KindFigure {
    /// What the row says in its `kind` and `workload` columns (`tpch`).
    pub kind: &'static str,
    pub configuration: String,
    /// The item and its unit (`QphH@Size`).
    pub name: &'static str,
    /// Higher is better.
    pub value: f64,
}

/// How a report shows one kind of result. Every method but the identity and the items has a
/// default: of a kind without that part, or (the single-run text, the section) the common
/// form the kind fills in (`trial_text`, `items_title`).
pub trait KindReport: Sync {
    /// The kind of stored result this reports.
    fn kind(&self) -> ResultKind;

    /// The title of this kind's section of a plan report.
    fn title(&self) -> &'static str;

    /// The units of this kind's items that grow with speed, beyond the rates and scores every
    /// kind reads the same way (`/s`, `@Size`, QPS, TPS): TPC-C's NOPM and TPM.
    fn higher_units(&self) -> &'static [&'static str] {
        &[]
    }

    /// The measured items of one trial's result, each in its own unit (empty for a kind
    /// ranked by its throughput: OLTP).
    fn items(&self, result: &TrialResult) -> Vec<Item>;

    /// One trial's result of this kind as its command printed it on `target`, without the
    /// connections' line; `None` for a result of another kind. What the default
    /// [`KindReport::single_text`] shows.
    fn trial_text(&self, _result: &TrialResult, _target: &str) -> Option<String> {
        None
    }

    /// A single command's trial as its command printed it. `connects`: the connections'
    /// set-up times line (kinds that time no connections of their own keep them in the
    /// connection facts). `None`: nothing measured to show. By default the result's
    /// [`KindReport::trial_text`], then `connects`.
    fn single_text(
        &self,
        _store: &Store,
        cell: &CellRow,
        trial: &TrialRow,
        connects: &str,
    ) -> Result<Option<String>, ReportError> {
        Ok(trial
            .result
            .as_ref()
            .and_then(|r| self.trial_text(r, &cell.target))
            .map(|text| text + connects))
    }

    /// A single command's trial as JSON (what the run was is added by the caller). `None`:
    /// nothing measured to show.
    fn single_json(
        &self,
        _store: &Store,
        _cell: &CellRow,
        trial: &TrialRow,
    ) -> Result<Option<serde_json::Value>, ReportError> {
        Ok(trial.result.as_ref().map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            // The kind is said once, at the top, for every kind alike.
            if let Some(o) = v.as_object_mut() {
                o.remove("kind");
            }
            v
        }))
    }

    /// A whole run this kind reports itself (perfrun: its two sides), `filter` given or the
    /// one given at collection; `None` for kinds reported trial by trial.
    fn whole_run(
        &self,
        _store: &Store,
        _run: RunId,
        _filter: Option<&str>,
        _format: SingleFormat,
    ) -> Option<Result<String, ReportError>> {
        None
    }

    /// [`KindReport::whole_run`] as a JSON value.
    fn whole_run_json(
        &self,
        _store: &Store,
        _run: RunId,
    ) -> Option<Result<serde_json::Value, ReportError>> {
        None
    }

    /// The title of each workload's item table in the default [`KindReport::section`]: what
    /// its figures are.
    fn items_title(&self) -> &'static str {
        "median of each item, in its own unit"
    }

    /// The blocks of this kind's section of a plan report, for its `workloads` in plan order.
    /// By default one item table per workload ([`item_sections`]), titled
    /// [`KindReport::items_title`]: the layout of a kind whose items each stand in their own
    /// unit.
    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        Ok(item_sections(data, workloads, self.items_title()))
    }

    /// The charts of one workload, named for file names (the OS statistics chart, which
    /// every kind but perfrun has, is added by the caller: [`KindReport::os_chart`]).
    fn charts(
        &self,
        _store: &Store,
        _data: &ReportData,
        _workload: &str,
    ) -> Result<Vec<(&'static str, String)>, ReportError> {
        Ok(Vec::new())
    }

    /// Whether a workload of this kind gets the OS statistics chart.
    fn os_chart(&self) -> bool {
        true
    }

    /// The kind's own parts of the plan report's JSON document, added to `out`.
    fn json(&self, _data: &ReportData, _out: &mut serde_json::Value) -> Result<(), ReportError> {
        Ok(())
    }

    /// The kind's figures over the whole report, after the cells in the cells CSV.
    fn figures(&self, _data: &ReportData) -> Vec<KindFigure> {
        Vec::new()
    }

    /// The kind's results in another tool's layout, when it has that tool's: the files
    /// written into `dir`.
    fn tool_files(
        &self,
        _tool: ToolFiles,
        _store: &Store,
        _data: &ReportData,
        _dir: &Path,
    ) -> Option<Result<Vec<PathBuf>, ReportError>> {
        None
    }
}
