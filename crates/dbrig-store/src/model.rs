//! What the store takes in and hands back.

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use dbrig_core::measure::RateReport;
use dbrig_core::{KeyDistribution, LatencySummary, Measurements, QueryCounters};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
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

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($name)
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

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                value
                    .as_str()?
                    .parse()
                    .map_err(|e: UnknownValue| FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

/// A status or kind string in the database that this dbrig does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

text_enum!(
    /// Where a run is in its life: written `running` first, then closed.
    RunStatus {
        Running = "running",
        Done = "done",
        Failed = "failed",
        /// Stopped by Ctrl-C / SIGTERM, or found still `running` after its process was gone.
        Interrupted = "interrupted",
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
    /// Whether resume treats the trial as finished and skips it (`done` or `invalid`:
    /// re-running an invalid trial would not make its configuration any less faulty).
    pub fn is_finished(self) -> bool {
        matches!(self, TrialStatus::Done | TrialStatus::Invalid)
    }
}

/// What kind of invocation a run was. Stored as text; kinds written by a newer dbrig come
/// back as [`RunKind::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// `dbrig run <workload> …`
    Workload,
    /// A plan of many cells.
    Plan,
    Other(String),
}

impl RunKind {
    pub fn as_str(&self) -> &str {
        match self {
            RunKind::Workload => "workload",
            RunKind::Plan => "plan",
            RunKind::Other(s) => s,
        }
    }
}

impl From<&str> for RunKind {
    fn from(s: &str) -> Self {
        match s {
            "workload" => RunKind::Workload,
            "plan" => RunKind::Plan,
            other => RunKind::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    /// Results of later kinds (TPC-H per-query timings, OS samples, hook outputs).
    pub extra: Option<&'a serde_json::Value>,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: RunId,
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
/// (read those with [`crate::Store::histogram`] and [`crate::Store::intervals`]).
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
    pub extra: Option<serde_json::Value>,
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

/// One OS statistics sample of a trial, as stored in the trial's `extra.os_samples` (written
/// by dbrig-server's sampler, read back here for the report's charts). Fields a sample lacks
/// read as zero / `None`, so older or partial samples still draw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsSamplePoint {
    /// End of the interval, seconds since sampling started (just before the trial).
    pub t_s: f64,
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_iowait_pct: f64,
    pub disk_read_bytes_ps: f64,
    pub disk_write_bytes_ps: f64,
    pub mem_used_bytes: u64,
    /// The server process's CPU in percent of one CPU.
    pub process_cpu_pct: Option<f64>,
    pub process_rss_bytes: Option<u64>,
}
