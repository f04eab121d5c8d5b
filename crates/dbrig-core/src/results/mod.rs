//! The typed results of every workload kind and the environment recorded with every trial:
//! what the executor hands the recorder, what the results database stores (as JSON of these
//! very types) and what every report reads back. One place, one shape, whichever command or
//! plan took the measurement.

pub mod connection;
mod environment;
pub mod evidence;
mod life;
pub mod load;
pub mod micro;
pub mod perfrun;
pub mod sqlbench;
pub mod tpcc;
pub mod tpch;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::measure::ClientWork;
use crate::statements::StatementLatency;

pub use connection::{AddressFamily, ConnectLatency, ConnectionFacts, Protocol};
pub use environment::{
    BuildInfo, ConnectionSecurity, Durability, HookOutput, KEY_SETTINGS, LaunchInfo,
    ManagedServerFacts, OsSample, OsSpan, Placement, ServerEngine, ServerLife, ServerSettings,
    TlsSession, TlsVerification, TrialEnvironment, is_instance_setting, is_instance_value,
};
pub use evidence::{
    CounterInterval, CounterSeries, FoldedStack, Profile, TrialEvidence, WaitSamples, WorkCpu,
};
pub use life::{LifeMark, server_restarted};
pub use load::{LoadFigures, LoadResult, LoadStep, TableLoad};
pub use micro::{MicroItem, MicroResult};
pub use perfrun::{Execution, PerfQuery, PerfrunResult, SideInfo};
pub use sqlbench::{
    SqlBenchOperation, SqlBenchResult, SqlBenchStatus, SqlBenchTest, SqlBenchTime, perl_error_line,
};
pub use tpcc::{TpccCheckFailure, TpccConsistency, TpccInterval, TpccResult, TpccTransaction};
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
    /// MySQL's classic sql-bench suite: seconds per operation and test.
    SqlBench,
    /// A workload's data load (OLTP prepare, TPC-H load, pgbench-init): steps, rows/s, MB/s.
    Load,
    /// TPC-C (TPROC-C): NOPM, TPM, per transaction type counts and latency.
    Tpcc,
}

impl ResultKind {
    pub const ALL: [ResultKind; 8] = [
        ResultKind::Oltp,
        ResultKind::Micro,
        ResultKind::TpchPower,
        ResultKind::TpchThroughput,
        ResultKind::Perfrun,
        ResultKind::SqlBench,
        ResultKind::Load,
        ResultKind::Tpcc,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResultKind::Oltp => "oltp",
            ResultKind::Micro => "micro",
            ResultKind::TpchPower => "tpch_power",
            ResultKind::TpchThroughput => "tpch_throughput",
            ResultKind::Perfrun => "perfrun",
            ResultKind::SqlBench => "sql_bench",
            ResultKind::Load => "load",
            ResultKind::Tpcc => "tpcc",
        }
    }
}

impl fmt::Display for ResultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ResultKind {
    type Err = crate::ValueError;
    fn from_str(s: &str) -> Result<Self, crate::ValueError> {
        ResultKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| crate::ValueError::Unknown {
                what: "result kind",
                given: s.to_owned(),
                expected: ResultKind::ALL.map(|k| k.as_str()).join(", "),
            })
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
    /// Worker threads that drove the clients (pgbench's "number of threads"); 0 in trials
    /// stored before it was kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub workers: u32,
    /// Wall time from the first connection attempt until every client was connected and
    /// ready, ms (pgbench's "initial connection time").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<f64>,
    /// `--latency-limit`'s late and skipped events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_limit: Option<LatencyLimitReport>,
    /// `--max-tries`'s retried and failed transactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tries: Option<TriesReport>,
    /// Every connection's set-up time, apart from the statements' latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_latency: Option<ConnectLatency>,
    /// Open loop: how late transactions started against their schedule (pgbench's "rate
    /// limit schedule lag"); `None` in closed loop and in trials stored before it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_lag: Option<ScheduleLag>,
}

/// Open loop: the delay between each processed transaction's scheduled start and its actual
/// start, as pgbench measures its `--rate` schedule lag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleLag {
    pub avg_ms: f64,
    pub max_ms: f64,
}

/// What `--max-tries` counted over the measured interval (pgbench's failures and retries;
/// the total number of retries is the measurements' `ignored_errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TriesReport {
    pub max_tries: u32,
    /// `--failures-detailed`: the report counts failures by kind.
    pub failures_detailed: bool,
    /// Transactions (successful or failed) that were retried at least once.
    pub retried: u64,
    pub failed_serialization: u64,
    pub failed_deadlock: u64,
    pub failed_other: u64,
}

impl TriesReport {
    pub fn failed(&self) -> u64 {
        self.failed_serialization + self.failed_deadlock + self.failed_other
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What `--latency-limit` counted over the measured interval (pgbench's -L).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyLimitReport {
    pub limit_ms: f64,
    /// Events that finished with a latency above the limit.
    pub late: u64,
    /// Open loop: events not run because they were already later than the limit when a
    /// client could start them.
    pub skipped: u64,
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
    SqlBench(SqlBenchResult),
    Load(LoadResult),
    Tpcc(TpccResult),
}

impl TrialResult {
    pub fn kind(&self) -> ResultKind {
        match self {
            TrialResult::Oltp(_) => ResultKind::Oltp,
            TrialResult::Micro(_) => ResultKind::Micro,
            TrialResult::TpchPower(_) => ResultKind::TpchPower,
            TrialResult::TpchThroughput(_) => ResultKind::TpchThroughput,
            TrialResult::Perfrun(_) => ResultKind::Perfrun,
            TrialResult::SqlBench(_) => ResultKind::SqlBench,
            TrialResult::Load(_) => ResultKind::Load,
            TrialResult::Tpcc(_) => ResultKind::Tpcc,
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
            TrialResult::SqlBench(r) => Some(&r.server_version),
            TrialResult::Load(r) => Some(&r.server_version),
            TrialResult::Tpcc(r) => Some(&r.server_version),
        }
    }

    /// Why the result makes its trial `failed` although it measured (part of the one status
    /// rule; OLTP's fatal client errors are in its measurements): a throughput test whose
    /// stream lost its server. A query that failed or answered wrong does not fail a power
    /// test: it is recorded with its error and never counted as fast. Likewise a sql-bench
    /// test that lost its server fails its trial; one that failed otherwise is recorded with
    /// its error, its times left out. A perfrun side on which every query failed measured
    /// nothing: its trial fails.
    pub fn failure(&self) -> Option<String> {
        match self {
            TrialResult::TpchThroughput(r) => r.failure.clone(),
            TrialResult::SqlBench(r) => r.failure(),
            TrialResult::Perfrun(r) => r.failure(),
            TrialResult::Tpcc(r) => r.failure(),
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
            ..Default::default()
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["kind"], "oltp");
        assert_eq!(serde_json::from_value::<TrialResult>(v).unwrap(), r);
        for k in ResultKind::ALL {
            assert_eq!(k.as_str().parse::<ResultKind>().unwrap(), k);
        }
    }

    /// Every key holding a figure with a unit names it (`_us`, `_s`, `_per_s`); results stored
    /// by older versions, with the old names, still read.
    #[test]
    fn unit_suffixed_keys_are_written_and_the_old_names_still_read() {
        let step = |name: &str| {
            serde_json::json!({"name": name, "micros": 1500, "rows": 1, "status": "ok",
                               "error": null})
        };
        let mut q1 = step("1");
        q1["detail"] = serde_json::json!({
            "reduction": "min-max", "max_timed_out": false, "timeout_seconds": 2.5,
            "min_micros": 1500, "max_micros": 1700, "mean_micros": 1600,
            "runs": [{"run": 1, "warmup": false, "micros": 1500, "rows": 1, "status": "ok",
                      "restarted": false}],
            "params": [], "plans": {}, "chosen_plan": null, "skipped": 0, "restarts": 0,
            "notes": []
        });
        let old_throughput = serde_json::json!({
            "kind": "tpch_throughput", "scale_factor": 0.01, "streams": 1,
            "server_version": "x", "params": "validation", "timeout_seconds": 2.5,
            "ts_seconds": 3.25,
            "query_streams": [{"stream": 1, "seconds": 3.0, "queries": [q1], "aborted": null}],
            "refresh_stream": {"seconds": 0.25, "aborted": null,
                               "pairs": [{"refresh_set": 1, "rf1": step("RF1"), "rf2": null}]},
            "throughput_at_size": 24.4, "failure": null
        });
        let old_micro = serde_json::json!({
            "kind": "micro", "benchmark": "scan_filter", "dialect": "sqlite",
            "server_version": "x", "engine": null, "rows": 4, "runs": 2, "seed": 1,
            "cpu_mhz": null, "settings": [], "skipped": [],
            "items": [{"name": "scan", "sql": "SELECT 1", "unit": "rows/s",
                       "values": [4.0, 2.0], "mean": 3.0, "min": 2.0, "max": 4.0,
                       "seconds": [1.0, 2.0], "rows": 4, "rows_per_second": 8.0 / 3.0,
                       "mb_per_second": 0.5, "cycles_per_row": null, "data_bytes": 1000000,
                       "answer": null}]
        });
        let old_life = serde_json::json!({"started_unix": 10.0, "tolerance_secs": 1.5,
                                          "pid": null, "generation": null, "died": false});
        let old_os = serde_json::json!({"t_s": 1.0, "disk_read_bytes_ps": 512.0,
                                        "disk_write_bytes_ps": 4096.0});

        let TrialResult::TpchThroughput(t) =
            serde_json::from_value::<TrialResult>(old_throughput).unwrap()
        else {
            panic!("a throughput result")
        };
        assert_eq!((t.ts_s, t.timeout_s), (3.25, Some(2.5)));
        let s = &t.query_streams[0];
        assert_eq!((s.duration_s, s.queries[0].time_us), (3.0, 1500));
        let d = s.queries[0].detail.as_ref().unwrap();
        assert_eq!(
            (d.min_us, d.max_us, d.mean_us),
            (Some(1500), Some(1700), Some(1600))
        );
        assert_eq!((d.timeout_s, d.runs[0].time_us), (Some(2.5), 1500));
        let r = t.refresh_stream.as_ref().unwrap();
        assert_eq!((r.duration_s, r.pairs[0].rf1.time_us), (0.25, 1500));
        let TrialResult::Micro(m) = serde_json::from_value::<TrialResult>(old_micro).unwrap()
        else {
            panic!("a micro result")
        };
        let i = &m.items[0];
        assert_eq!(i.wall_s, [1.0, 2.0]);
        assert_eq!((i.rows_per_s, i.mb_per_s), (Some(8.0 / 3.0), Some(0.5)));
        let life: LifeMark = serde_json::from_value(old_life).unwrap();
        assert_eq!(life.tolerance_s, 1.5);
        let os: OsSample = serde_json::from_value(old_os).unwrap();
        assert_eq!(
            (os.disk_read_bytes_per_s, os.disk_write_bytes_per_s),
            (512.0, 4096.0)
        );

        // The open loop's rates and the interval samples: `_per_s` written, `_ps` and
        // `_rate` read.
        let rate = crate::measure::RateReport {
            target_rate: 2000.0,
            achieved_rate: 480.0,
            ..Default::default()
        };
        let sample = crate::measure::IntervalSample {
            reads_ps: 10.0,
            writes_ps: 1.0,
            other_ps: 2.0,
            errors_ps: 0.5,
            reconnects_ps: 0.25,
            ..Default::default()
        };
        let renamed = |v: serde_json::Value, names: &[(&str, &str)]| {
            let mut m = v.as_object().unwrap().clone();
            for (new, old) in names {
                let x = m
                    .remove(*new)
                    .unwrap_or_else(|| panic!("{new} not written"));
                m.insert((*old).to_owned(), x);
            }
            serde_json::Value::Object(m)
        };
        let old_rate = renamed(
            serde_json::to_value(rate).unwrap(),
            &[
                ("target_per_s", "target_rate"),
                ("achieved_per_s", "achieved_rate"),
            ],
        );
        assert_eq!(
            serde_json::from_value::<crate::measure::RateReport>(old_rate).unwrap(),
            rate
        );
        let old_sample = renamed(
            serde_json::to_value(&sample).unwrap(),
            &[
                ("reads_per_s", "reads_ps"),
                ("writes_per_s", "writes_ps"),
                ("other_per_s", "other_ps"),
                ("errors_per_s", "errors_ps"),
                ("reconnects_per_s", "reconnects_ps"),
            ],
        );
        assert_eq!(
            serde_json::from_value::<crate::measure::IntervalSample>(old_sample).unwrap(),
            sample
        );

        // Written back: the new names only.
        let text = [
            serde_json::to_string(&TrialResult::TpchThroughput(t)).unwrap(),
            serde_json::to_string(&TrialResult::Micro(m)).unwrap(),
            serde_json::to_string(&life).unwrap(),
            serde_json::to_string(&os).unwrap(),
        ]
        .concat();
        for key in [
            "\"time_us\"",
            "\"min_us\"",
            "\"max_us\"",
            "\"mean_us\"",
            "\"timeout_s\"",
            "\"ts_s\"",
            "\"duration_s\"",
            "\"wall_s\"",
            "\"rows_per_s\"",
            "\"mb_per_s\"",
            "\"tolerance_s\"",
            "\"disk_read_bytes_per_s\"",
            "\"disk_write_bytes_per_s\"",
        ] {
            assert!(text.contains(key), "{key} missing in {text}");
        }
        for old in [
            "micros",
            "seconds\"",
            "rows_per_second",
            "mb_per_second",
            "tolerance_secs",
            "bytes_ps",
        ] {
            assert!(!text.contains(old), "{old} still written in {text}");
        }
    }
}
