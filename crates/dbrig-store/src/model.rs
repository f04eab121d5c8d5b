//! What the store takes in and hands back, the same for every backend (each backend maps
//! these to its columns: SQLite's in `sqlite/columns.rs`).

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use dbrig_core::measure::RateReport;
use dbrig_core::results::{ResultKind, TrialEnvironment, TrialResult};
use dbrig_core::{KeyDistribution, LatencySummary, Measurements, QueryCounters};
use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// Row id of a run.
    RunId
);
id_type!(
    /// Row id of a cell.
    CellId
);
id_type!(
    /// Row id of a trial.
    TrialId
);

/// A text-valued enum stored in a TEXT column.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The form stored in the database and shown in reports.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(s: &str) -> Result<Self, UnknownValue> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue(s.to_owned())),
                }
            }
        }
    };
}

/// A status or kind string in the database that this dbrig does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

text_enum!(
    /// Where a run is in its life: written `running` first, then closed `done`, `failed` or
    /// `interrupted`. `abandoned` is never written: it is how a run still marked `running`
    /// reads back when the process that wrote it is gone (killed, or the machine died).
    RunStatus {
        Running = "running",
        Done = "done",
        Failed = "failed",
        /// Stopped by Ctrl-C / SIGTERM, or found still `running` after its process was gone.
        Interrupted = "interrupted",
        /// Marked `running`, but its process is gone.
        Abandoned = "abandoned",
    }
);

text_enum!(
    /// How a trial ended.
    TrialStatus {
        Done = "done",
        Failed = "failed",
        Interrupted = "interrupted",
        /// Measured, but not to be trusted (e.g. the server restarted during the trial).
        Invalid = "invalid",
    }
);

impl TrialStatus {
    /// Whether resume treats the trial as finished and skips it: `done` only. An `invalid`
    /// trial (its server restarted or died) measured nothing usable and leaves its cell a
    /// trial short, so resume redoes it; the invalid attempt stays beside the redone one.
    pub fn is_finished(self) -> bool {
        matches!(self, TrialStatus::Done)
    }
}

text_enum!(
    /// What kind of invocation a run was: a plan, or the one-cell plan of a single measuring
    /// command (named after the kind it measures). A closed set: every kind a report shows.
    RunKind {
        /// `dbrig run PLAN.toml`: a plan of many cells.
        Plan = "plan",
        /// `dbrig run WORKLOAD`
        Oltp = "oltp",
        /// `dbrig micro …`
        Micro = "micro",
        /// `dbrig tpch power`
        TpchPower = "tpch_power",
        /// `dbrig tpch throughput`
        TpchThroughput = "tpch_throughput",
        /// `dbrig perfrun`
        Perfrun = "perfrun",
        /// `dbrig prepare WORKLOAD`, `dbrig tpch load`: a load measured on its own
        Load = "load",
        /// `dbrig run tpcc`
        Tpcc = "tpcc",
    }
);

impl From<ResultKind> for RunKind {
    fn from(k: ResultKind) -> Self {
        match k {
            ResultKind::Oltp => RunKind::Oltp,
            ResultKind::Micro => RunKind::Micro,
            ResultKind::TpchPower => RunKind::TpchPower,
            ResultKind::TpchThroughput => RunKind::TpchThroughput,
            ResultKind::Perfrun => RunKind::Perfrun,
            ResultKind::Load => RunKind::Load,
            ResultKind::Tpcc => RunKind::Tpcc,
            // No single command runs sql-bench: only plans do.
            ResultKind::SqlBench => RunKind::Plan,
        }
    }
}

/// A trial's typed result and environment as JSON values: made once by
/// [`crate::StoreWriter`], which checks them for passwords, and stored by the backend as they
/// are (a JSON value's keys in sorted order, as every version of dbrig stored them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrialJson {
    pub result: Option<serde_json::Value>,
    pub environment: Option<serde_json::Value>,
}

/// Where a run's code came from, as its caller said: `--tag key=value` and `--commit REV`
/// (the revision of the code under test). Stored with the run; what history groups and orders
/// runs by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    #[serde(default)]
    pub tags: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub commit: Option<String>,
}

impl Provenance {
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.commit.is_none()
    }
}

/// A run about to start. Everything here is stored as given, so it must already be
/// redacted: the store refuses URLs with a password other than `***`.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub kind: RunKind,
    /// Workload name for a single run, plan name for a plan (resume matches on it).
    pub name: &'a str,
    pub started_at: SystemTime,
    /// The fully resolved options.
    pub options: &'a serde_json::Value,
    /// Host facts (CPU, memory, OS, …).
    pub host: &'a serde_json::Value,
    pub dbrig_version: &'a str,
    /// argv, redacted by the caller.
    pub command_line: &'a [String],
    pub plan_text: Option<&'a str>,
}

/// A cell of a run: one configuration × workload × client count.
#[derive(Debug, Clone)]
pub struct NewCell<'a> {
    /// Hash of the cell's full specification, computed by the caller; the resume key.
    pub cell_key: &'a str,
    pub configuration: &'a str,
    pub workload: &'a str,
    pub clients: u32,
    pub options: &'a serde_json::Value,
    /// Connection target, redacted (password shown as `***`).
    pub target: &'a str,
}

/// One trial to record. `measurements` is `None` for a trial that failed before it
/// measured anything.
#[derive(Debug, Clone)]
pub struct NewTrial<'a> {
    /// Trial number within the cell.
    pub trial: u32,
    pub status: TrialStatus,
    /// Why the trial failed or is invalid (error text, restart detected, …).
    pub reason: Option<&'a str>,
    pub server_version: Option<&'a str>,
    pub started_at: SystemTime,
    pub finished_at: SystemTime,
    pub measurements: Option<&'a Measurements>,
    /// What the trial's workload measured (for OLTP, beside `measurements`).
    pub result: Option<&'a TrialResult>,
    /// What the trial ran in: OS samples, hooks, server settings, placement, server life.
    pub environment: Option<&'a TrialEnvironment>,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The run's number in this database (another database numbers it differently).
    pub id: RunId,
    /// The run's globally unique id (a UUID, time-ordered: version 7), the same in every
    /// database it is copied to.
    pub uid: String,
    pub kind: RunKind,
    pub name: String,
    pub status: RunStatus,
    pub error: Option<String>,
    /// RFC 3339 UTC; see [`crate::parse_rfc3339`].
    pub started_at: String,
    pub finished_at: Option<String>,
    pub dbrig_version: String,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    pub host: serde_json::Value,
    pub plan_text: Option<String>,
    /// Process id of the dbrig that wrote the run.
    pub pid: Option<u32>,
    /// The machine that dbrig ran on ([`crate::machine_id`]); `None` for runs written before
    /// schema 4, which were all written on the machine of their file.
    pub machine: Option<String>,
    /// Tags and the code's revision (schema 5; empty before).
    pub provenance: Provenance,
}

/// A stored cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRow {
    pub id: CellId,
    pub run_id: RunId,
    pub cell_key: String,
    pub configuration: String,
    pub workload: String,
    pub clients: u32,
    pub options: serde_json::Value,
    pub target: String,
}

/// A stored trial, with its measurements except the histogram and the interval samples
/// (read those with [`crate::ResultsReader::histogram`] and
/// [`crate::ResultsReader::intervals`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRow {
    pub id: TrialId,
    pub cell_id: CellId,
    pub trial: u32,
    pub status: TrialStatus,
    pub reason: Option<String>,
    pub server_version: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub measurements: Option<TrialMeasurements>,
    pub result: Option<TrialResult>,
    pub environment: Option<TrialEnvironment>,
}

/// The scalar part of a trial's [`Measurements`], as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialMeasurements {
    pub threads: u32,
    pub key_distribution: KeyDistribution,
    pub duration_s: f64,
    pub transactions: u64,
    pub queries: QueryCounters,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub fatal_errors: Vec<String>,
    pub percentile: f64,
    pub interrupted: bool,
    /// Number of latencies in the histogram.
    pub latency_count: u64,
    pub latency: LatencySummary,
    pub tps: f64,
    pub qps: f64,
    pub rate: Option<RateReport>,
}
