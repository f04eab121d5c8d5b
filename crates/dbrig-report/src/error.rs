//! The one error type of dbrig-report: reading the store, choosing what to show (baseline,
//! filter), drawing and writing.

use std::path::PathBuf;

use dbrig_store::{RunId, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {run} has no cells: nothing to report yet")]
    EmptyRun { run: RunId },
    #[error("the results database holds no runs yet: nothing to gate")]
    NothingToGate,
    #[error("run {run} compared with itself: pass two different runs")]
    SameRun { run: RunId },
    #[error("a report shows one run, or two runs compared; {count} were given")]
    RunCount { count: usize },
    #[error("no configuration named {name:?} (configurations: {known})")]
    NoSuchConfiguration { name: String, known: String },
    #[error("run {run} holds no perfrun result: pick a `dbrig perfrun` run with `dbrig runs`")]
    NotPerfrun { run: RunId },
    #[error("run {run}: the perfrun needs two configurations to compare, it has {count}")]
    PerfrunSides { run: RunId, count: usize },
    #[error("filter does not parse at column {column}: {message}\n  {expr}\n  {caret}", caret = caret(*.column))]
    FilterSyntax {
        expr: String,
        /// 1-based character column.
        column: usize,
        message: String,
    },
    #[error("unknown name {name} in the filter at column {column}{hint}\n  {expr}\n  {caret}",
        caret = caret(*.column),
        hint = if suggestions.is_empty() { String::new() } else { format!(" (did you mean {}?)", suggestions.join(", ")) })]
    FilterUnknownName {
        expr: String,
        column: usize,
        name: String,
        suggestions: Vec<String>,
    },
    #[error("filter {expr:?}: {message}")]
    FilterEval { expr: String, message: String },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("HTML template")]
    Template(#[from] minijinja::Error),
    #[error("chart {chart}: {detail}")]
    Chart { chart: String, detail: String },
    /// `--metric` (or a request's metric) that is neither QPS nor TPS.
    #[error("unknown metric {0:?} (qps or tps)")]
    UnknownMetric(String),
    /// A record `--with` does not know.
    #[error(
        "unknown record {0:?}: give hooks, plans, os, loads or several of them separated by commas (hooks,plans,os,loads)"
    )]
    UnknownRecord(String),
    /// A format there is none of; `known` lists the formats.
    #[error("unknown format {given:?} ({known})")]
    UnknownFormat { given: String, known: String },
    #[error("no runs in {}: run `dbrig tpch power` first", path.display())]
    NoRuns { path: PathBuf },
    #[error(
        "run(s) {runs} hold no finished TPC-H power test: give the id of a `dbrig tpch power` run or of a plan with a tpch_power workload"
    )]
    NoFinishedPower { runs: String },
    #[error("no run {run} in {}: see `dbrig runs`", path.display())]
    NoSuchRun { run: RunId, path: PathBuf },
    #[error("run {run} holds no finished power test: give the id of a `dbrig tpch power` run")]
    NoPowerTest { run: RunId },
    #[error(
        "power run {run} has no Power@Size (a query or refresh function failed): run `dbrig tpch power` again"
    )]
    NoPowerAtSize { run: RunId },
}

/// A caret under the 1-based `column` of the line above it.
fn caret(column: usize) -> String {
    format!("{}^", " ".repeat(column.saturating_sub(1)))
}
