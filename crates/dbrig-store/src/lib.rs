//! dbrig-store: the results database.
//!
//! Owns the schema, the writes made as runs start, trials end and runs close, and the reads
//! that reports and `--resume` are built from. A report can be rebuilt from this database
//! alone, without any database server.
//!
//! Model (`model.rs`, the same for every backend): a *run* (one dbrig invocation) has *cells*
//! (configuration × workload × clients, identified by a caller-computed `cell_key`), and a cell
//! has *trials* (one measurement each, with its latency histogram and interval samples).
//!
//! Shape: [`ResultsReader`] is what is read, [`ResultsWriter`] what is written; a backend
//! implements both: SQLite's (`sqlite/`, the embedded default: its migrations, queries and
//! writes, all of its SQL), PostgreSQL's (`postgres/`) and MariaDB/MySQL's (`mysql/`), the
//! server backends, whose clients run on a thread of their own (`server.rs`). Runs move whole
//! between databases as [`RunDocument`]s, keyed by their globally unique id (`copy.rs`). [`Store`] is the handle everyone holds: it reads
//! and never hands its backend out. Writing goes through [`StoreWriter`], which makes the
//! checks every backend shares and is made only for `dbrig_exec`'s recorder (and, in test
//! builds, `testing`).
//!
//! Contract: this crate depends on `dbrig-core` for the measured values and on its backends'
//! clients (rusqlite, tokio-postgres, mysql_async); it must not depend on dbrig's database
//! drivers, servers or workloads. Callers pass connection targets and command lines already
//! redacted; the store stores no password (a results server's is handed to its client only,
//! [`ServerPassword`]), and refuses any URL with a password other than `***`
//! ([`StoreError::UnredactedSecret`]) in case a caller forgot.

mod copy;
mod error;
mod liveness;
mod measured;
mod model;
mod mysql;
mod postgres;
mod reader;
mod secret;
mod server;
mod sqlite;
mod store;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
mod time;
mod writer;

pub use copy::{
    CellDocument, Imported, Importer, IntervalDocument, MeasurementsDocument, RUN_DOCUMENT_FORMAT,
    RunDocument, TrialDocument,
};
pub use error::StoreError;
pub use liveness::{machine_id, writer_alive, writer_alive_on};
pub use model::{
    CellId, CellRow, NewCell, NewRun, NewTrial, Provenance, RunId, RunKind, RunRow, RunStatus,
    TrialId, TrialJson, TrialMeasurements, TrialRow, TrialStatus, UnknownValue,
};
pub use reader::ResultsReader;
pub use server::{ServerAddress, ServerEndpoint, ServerEngine, ServerPassword};
pub use sqlite::SCHEMA_VERSION;
pub use store::Store;
pub use time::{format_rfc3339, parse_rfc3339};
pub use writer::{ResultsWriter, StoreWriter};
