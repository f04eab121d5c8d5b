//! The one error type of the plan reports.

use std::path::PathBuf;

use dbrig_store::{RunId, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run {run} has no cells: nothing to report yet")]
    EmptyRun { run: RunId },
    #[error("run {run} compared with itself: pass two different runs")]
    SameRun { run: RunId },
    #[error("no configuration named {name:?} (configurations: {known})")]
    NoSuchConfiguration { name: String, known: String },
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
}
