//! The typed results of every workload kind and the environment recorded with every trial:
//! what the executor hands the recorder, what the results database stores (as JSON of these
//! very types) and what every report reads back. One place, one shape, whichever command or
//! plan took the measurement.

mod environment;
pub mod evidence;
mod life;
pub mod micro;
pub mod perfrun;
pub mod tpch;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::measure::ClientWork;
use crate::statements::StatementLatency;

pub use environment::{
    Durability, HookOutput, KEY_SETTINGS, LaunchInfo, ManagedServerFacts, OsSample, OsSpan,
    Placement, ServerLife, ServerSettings, TrialEnvironment, is_instance_setting,
};
pub use evidence::{
    CounterInterval, CounterSeries, FoldedStack, Profile, TrialEvidence, WaitSamples, WorkCpu,
};
pub use life::{LifeMark, server_restarted};
pub use micro::{MicroItem, MicroResult};
pub use perfrun::{Execution, PerfQuery, PerfrunResult, SideInfo};
pub use tpch::{PowerReport, QueryOutcome, QueryStatus, ThroughputReport};

/// The kinds of workload dbrig measures: a closed set, matched wherever a kind decides how a
/// result is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// sysbench-style OLTP: clients run events for a duration.
    Oltp,
    /// The seeds' micro-benchmarks.
    Micro,
    TpchPower,
    TpchThroughput,
    /// Query-by-query executions with counters (RQG perfrun).
    Perfrun,
}

impl ResultKind {
    pub const ALL: [ResultKind; 5] = [
        ResultKind::Oltp,
        ResultKind::Micro,
        ResultKind::TpchPower,
        ResultKind::TpchThroughput,
        ResultKind::Perfrun,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Oltp => "oltp",
            ResultKind::Micro => "micro",
            ResultKind::TpchPower => "tpch_power",
            ResultKind::TpchThroughput => "tpch_throughput",
            ResultKind::Perfrun => "perfrun",
        }
    }
}

impl fmt::Display for ResultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResultKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ResultKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown result kind {s:?}"))
    }
}

/// What an OLTP trial measured besides its [`crate::Measurements`] (which the store keeps in
/// columns, with the latency histogram and the interval samples): the per-statement latency
/// and how the run was driven, so a stored trial reprints as `dbrig run` printed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OltpResult {
    pub statements: Vec<StatementLatency>,
    /// `closed loop`, or `open loop, poisson arrivals at 500/s`.
    pub schedule: String,
    /// Seconds of warm-up before the measured interval (not counted).
    pub warmup_s: f64,
    /// Where the run did not do exactly what sysbench does, or what the engine does to the
    /// figures, in a line each (`oltp_insert`'s INSERT prepared, duplicate keys retried,
    /// SQLite's writers serialised): every report of the trial prints them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each client's events and busy time, by client number (sysbench's "Threads fairness");
    /// empty in trials stored before they were kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientWork>,
}

/// What one trial of any kind measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrialResult {
    Oltp(OltpResult),
    Micro(MicroResult),
    TpchPower(PowerReport),
    TpchThroughput(ThroughputReport),
    Perfrun(PerfrunResult),
}

impl TrialResult {
    pub fn kind(&self) -> ResultKind {
        match self {
            TrialResult::Oltp(_) => ResultKind::Oltp,
            TrialResult::Micro(_) => ResultKind::Micro,
            TrialResult::TpchPower(_) => ResultKind::TpchPower,
            TrialResult::TpchThroughput(_) => ResultKind::TpchThroughput,
            TrialResult::Perfrun(_) => ResultKind::Perfrun,
        }
    }

    /// The server version the result reports (OLTP's comes with the trial row).
    pub fn server_version(&self) -> Option<&str> {
        match self {
            TrialResult::Oltp(_) => None,
            TrialResult::Micro(r) => Some(&r.server_version),
            TrialResult::TpchPower(r) => Some(&r.server_version),
            TrialResult::TpchThroughput(r) => Some(&r.server_version),
            TrialResult::Perfrun(r) => Some(&r.server.version),
        }
    }

    /// Why the result makes its trial `failed` although it measured (part of the one status
    /// rule; OLTP's fatal client errors are in its measurements): a throughput test whose
    /// stream lost its server. A query that failed or answered wrong does not fail a power
    /// test: it is recorded with its error and never counted as fast.
    pub fn failure(&self) -> Option<&str> {
        match self {
            TrialResult::TpchThroughput(r) => r.failure.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip_through_json_with_their_kind() {
        let r = TrialResult::Oltp(OltpResult {
            statements: Vec::new(),
            schedule: "closed loop".into(),
            warmup_s: 2.0,
            notes: Vec::new(),
            clients: vec![ClientWork {
                events: 7,
                busy_s: 1.5,
            }],
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["kind"], "oltp");
        assert_eq!(serde_json::from_value::<TrialResult>(v).unwrap(), r);
        for k in ResultKind::ALL {
            assert_eq!(k.as_str().parse::<ResultKind>().unwrap(), k);
        }
    }
}
