//! The store's one error type. Messages are one line, name the results file and say what to do.

use std::path::PathBuf;

use crate::model::{CellId, RunId, RunStatus, TrialId};

/// Everything that can go wrong reading or writing the results database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error(
        "cannot create results database {path}: folder {parent} does not exist; create it or choose another --results file"
    )]
    NoParentDir { path: PathBuf, parent: PathBuf },

    #[error(
        "cannot open results database {path}: {source}; check the path and its permissions or choose another --results file"
    )]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("{path} is not an SQLite database; choose another --results file")]
    NotADatabase { path: PathBuf },

    #[error(
        "{path} is an SQLite database but not a dbrig results database; choose another --results file"
    )]
    ForeignDatabase { path: PathBuf },

    #[error(
        "results database {path} has schema version {found}, newer than this dbrig understands ({supported}): use a newer dbrig or another --results file"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    #[error(
        "upgrading results database {path} to schema version {version} failed: {source}; the file was left at the previous version"
    )]
    Migration {
        path: PathBuf,
        version: i64,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "results database {path} stayed locked by another process; retry when the other dbrig has finished writing, or use another --results file"
    )]
    Busy { path: PathBuf },

    #[error("results database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error("results database {path} has no run {id}; list the runs it holds to find the right id")]
    NoSuchRun { path: PathBuf, id: RunId },

    #[error("results database {path} has no cell {id}; record the cell with ensure_cell first")]
    NoSuchCell { path: PathBuf, id: CellId },

    #[error("results database {path} has no trial {id}")]
    NoSuchTrial { path: PathBuf, id: TrialId },

    #[error(
        "refusing to store {what} in results database {path}: it contains a password in a connection URL; pass the redacted form (password shown as ***)"
    )]
    UnredactedSecret { path: PathBuf, what: String },

    #[error(
        "run {id} in results database {path} is already {status}; a finished run cannot be finished again"
    )]
    RunAlreadyFinished {
        path: PathBuf,
        id: RunId,
        status: RunStatus,
    },

    #[error(
        "results database {path} was removed while dbrig had it open: what was written since went to the removed file"
    )]
    FileRemoved { path: PathBuf },

    #[error(
        "results database {path} was replaced by another file while dbrig had it open: what was written since went to the file that was there before"
    )]
    FileReplaced { path: PathBuf },

    #[error(
        "run {id} is still being written by dbrig process {pid}: wait for it to end (or stop it) before resuming"
    )]
    RunBeingWritten { id: RunId, pid: u32 },

    #[error(
        "cannot finish run {id} in results database {path} with status running; use done, failed or interrupted"
    )]
    NotAFinalStatus { path: PathBuf, id: RunId },

    #[error(
        "cell key {cell_key} of run {run} in results database {path} is already recorded with a different {field}; the caller must derive the key from the whole cell specification"
    )]
    CellMismatch {
        path: PathBuf,
        run: RunId,
        cell_key: String,
        field: &'static str,
    },

    #[error(
        "trial {trial} of cell {cell} already has a finished result in results database {path}; resume must skip finished trials instead of recording them again"
    )]
    DuplicateTrial {
        path: PathBuf,
        cell: CellId,
        trial: u32,
    },

    #[error(
        "cannot store {what} in results database {path}: value {value} exceeds the signed 64-bit integers SQL databases store"
    )]
    OutOfRange {
        path: PathBuf,
        what: &'static str,
        value: u64,
    },

    #[error(
        "results database {path}: stored {what} is corrupt ({detail}); the file may have been edited by hand or damaged"
    )]
    Corrupt {
        path: PathBuf,
        what: String,
        detail: String,
    },

    #[error(
        "results database {path}: the database holds tables but no dbrig results schema; use a database of its own for dbrig's results"
    )]
    ForeignServerDatabase { path: PathBuf },

    #[error("results database {path}: {source}")]
    Postgres {
        path: PathBuf,
        #[source]
        source: tokio_postgres::Error,
    },

    #[error("results database {path}: {source}")]
    Mysql {
        path: PathBuf,
        #[source]
        source: mysql_async::Error,
    },

    #[error(
        "upgrading results database {path} to schema version {version} failed: {source}; the steps before it stay applied"
    )]
    ServerMigration {
        path: PathBuf,
        version: i64,
        #[source]
        source: Box<StoreError>,
    },

    #[error("results database {path}: the connection's thread ended; open the results again")]
    ServerWorkerGone { path: PathBuf },

    #[error("cannot start the results connection's thread: {source}")]
    ServerRuntime {
        #[source]
        source: std::io::Error,
    },

    #[error("run {uid} of the document cannot be read: {detail}")]
    BadDocument { uid: String, detail: String },

    #[error("cannot copy the results to {path}: the file exists; choose a new file")]
    CopyTargetExists { path: PathBuf },
}
