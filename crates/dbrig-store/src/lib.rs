//! dbrig-store: the results database.
//!
//! Owns the SQLite schema (versioned SQL files applied in order, tracked by
//! `PRAGMA user_version`), the writes made as runs start, trials end and runs close, and the
//! reads that reports and `--resume` are built from. A report can be rebuilt from this
//! database alone, without any database server.
//!
//! Model: a *run* (one dbrig invocation) has *cells* (configuration × workload × clients,
//! identified by a caller-computed `cell_key`), and a cell has *trials* (one measurement
//! each, with its latency histogram and interval samples).
//!
//! Contract: this crate depends on `dbrig-core` for the measured values and on SQLite; it must
//! not depend on database drivers, servers or workloads. Callers pass connection targets and
//! command lines already redacted; the store never sees a password, and refuses any URL with a
//! password other than `***` ([`StoreError::UnredactedSecret`]) in case a caller forgot.

mod error;
mod legacy;
mod migrate;
mod model;
mod secret;
mod store;
mod time;

pub use error::StoreError;
pub use migrate::SCHEMA_VERSION;
pub use model::{
    CellId, CellRow, NewCell, NewRun, NewTrial, RunId, RunKind, RunRow, RunStatus, TrialId,
    TrialMeasurements, TrialRow, TrialStatus, UnknownValue,
};
pub use store::Store;
pub use time::{format_rfc3339, parse_rfc3339};
