//! dbrig-exec: plans and the one path every measurement takes.
//!
//! A [`Plan`] is configurations × workloads × client counts × trials, resolved and ordered
//! before anything runs: read from a plan file ([`plan::load`]) or built by a single measuring
//! command ([`Plan::single`], [`Plan::compare`]) as a plan of one cell (perfrun: one cell per
//! side). [`execute`] runs any plan through the same steps — target up, prepare, hooks, OS
//! sampling, the workload's trial, the one status rule — and the [`Recorder`] is the only code
//! that writes runs, cells and trials to the results database. Progress and console output
//! leave through an [`Observer`], so this crate prints nothing and is tested in-process.
//!
//! Contract: depends on the domain (`dbrig-core`), the drivers, the workloads, the store and
//! the server environment; never on reports (reports read the store). One `thiserror` enum
//! ([`ExecError`]); no `anyhow`.

pub mod credential_files;
mod dry_run;
pub mod environment;
pub mod error;
pub mod evidence;
pub mod executor;
pub mod observer;
pub mod plan;
pub mod probes;
pub mod profile;
pub mod recorder;
pub mod secrets;
pub mod servers;
pub mod target;

/// dbrig's version and the git commit it was built from, `0.1.0 (git 1a2b3c4d5e6f)`: what
/// `dbrig --version` prints and every stored run records.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (git ",
    env!("DBRIG_GIT_COMMIT"),
    ")"
);

pub use error::ExecError;
pub use executor::{ExecOptions, Outcome, execute};
pub use observer::{Observer, TrialRef, Unobserved};
pub use plan::{Cell, Configuration, Plan, SingleCommand, spec_key};
pub use recorder::{Recorder, Tally};
pub use target::{TargetSpec, redacted_command_line};
