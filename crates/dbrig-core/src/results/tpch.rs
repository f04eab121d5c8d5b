//! What a TPC-H power or throughput test measured: every timed step (query, RF1, RF2) with
//! its status, the launcher controls' record of each query's runs and plans, and the metrics
//! (Power@Size, Throughput@Size, QphH@Size).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Value;
use crate::results::{HookOutput, OsSpan};

/// Which parameters a query gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamMode {
    /// qgen -d: the values the reference answers were computed with.
    Validation,
    /// qgen with a seed: random values, different per stream.
    Random { seed: u64 },
}

/// How a query ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryStatus {
    Ok,
    Error,
    /// Ran, but its answer is not the reference answer.
    Wrong,
    /// Ran past its timeout and was cancelled on the server.
    Timeout,
}

impl QueryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryStatus::Ok => "ok",
            QueryStatus::Error => "error",
            QueryStatus::Wrong => "wrong",
            QueryStatus::Timeout => "timeout",
        }
    }
}

/// One timed step of the power test (a query, RF1 or RF2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    pub name: String,
    /// Wall time of the step, microseconds.
    #[serde(alias = "micros")]
    pub time_us: u64,
    pub rows: u64,
    pub status: QueryStatus,
    #[serde(default)]
    pub error: Option<String>,
    /// The result rows (for answer checks; not stored).
    #[serde(skip)]
    pub result: Vec<Vec<Value>>,
    /// The launcher controls' record of this query (runs, reduction, plans, hooks); absent
    /// for RF1/RF2 and for a plain single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Box<QueryDetail>>,
    /// Whether the answer was compared with a reference (SF 1's answers with validation
    /// parameters): `Some(false)` for a query that completed with nothing to compare it
    /// with, so it reads `unchecked`, never `ok`; `None` for results stored before this was
    /// recorded and for refresh functions, which return no answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_checked: Option<bool>,
    /// The OS statistics over the step's timed run (with several measured runs: over the runs
    /// its figure came from, each run's own in `detail`); `None` when OS sampling was off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<Box<OsSpan>>,
}

impl QueryOutcome {
    pub fn seconds(&self) -> f64 {
        self.time_us as f64 / 1e6
    }

    /// The status as reports say it: `unchecked` for a query that completed but whose answer
    /// nobody compared, else the status's own name.
    pub fn status_text(&self) -> &'static str {
        match (self.status, self.answer_checked) {
            (QueryStatus::Ok, Some(false)) => "unchecked",
            (s, _) => s.as_str(),
        }
    }
}

/// One run of a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// 1, 2, … for measured runs; 0 for warm-ups.
    pub run: u32,
    pub warmup: bool,
    /// Wall time of the run, microseconds.
    #[serde(alias = "micros")]
    pub time_us: u64,
    pub rows: u64,
    pub status: QueryStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The plan fingerprint captured before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The server was restarted before this run.
    #[serde(default)]
    pub restarted: bool,
    /// The OS page cache was dropped before this run (every drop is recorded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub caches_dropped: bool,
    /// `analyze-explain`: the run's plan (EXPLAIN after the run, as the DBT-3 launcher did)
    /// was one already seen to be slower, so the run is not used and the server was
    /// restarted for another plan.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// The OS statistics over this run (`None`: OS sampling off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<Box<OsSpan>>,
}

/// What the launcher controls did for one query, stored with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDetail {
    pub reduction: Reduction,
    pub runs: Vec<RunRecord>,
    /// Over the runs the reduction used (completed runs only), microseconds.
    #[serde(alias = "min_micros")]
    pub min_us: Option<u64>,
    #[serde(alias = "max_micros")]
    pub max_us: Option<u64>,
    #[serde(alias = "mean_micros")]
    pub mean_us: Option<u64>,
    /// Some used run timed out: the maximum is at least the timeout.
    pub max_timed_out: bool,
    #[serde(alias = "timeout_seconds")]
    pub timeout_s: Option<f64>,
    /// Startup parameters the server ran with for this query.
    pub params: Vec<String>,
    /// Captured plans by fingerprint (each plan stored once).
    pub plans: BTreeMap<String, String>,
    /// `analyze-explain`: the fingerprint whose runs made the result.
    pub chosen_plan: Option<String>,
    /// `analyze-explain`: restarts that skipped a run with a slower plan.
    pub skipped: u32,
    pub restarts: u32,
    #[serde(default)]
    pub hooks: Vec<HookOutput>,
    /// Things that did not go as asked (cache drop refused, EXPLAIN failed …).
    pub notes: Vec<String>,
}

/// How the N measured runs of a query become one number (the launcher's "result extraction").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reduction {
    /// The mean of the runs (`SIMPLE_AVERAGE`); one timed-out run makes the result a timeout.
    #[default]
    SimpleAverage,
    /// The fastest and the slowest of N (`MIN_MAX_OUT_OF_N`); the fastest is the query's time.
    MinMax,
    /// Runs grouped by plan fingerprint, the server restarted (managed) until the fastest plan
    /// has `cluster-size` runs; that plan's mean (`ANALYZE_EXPLAIN`).
    AnalyzeExplain,
}

impl Reduction {
    pub const ALL: [Reduction; 3] = [
        Reduction::SimpleAverage,
        Reduction::MinMax,
        Reduction::AnalyzeExplain,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::SimpleAverage => "simple-average",
            Reduction::MinMax => "min-max",
            Reduction::AnalyzeExplain => "analyze-explain",
        }
    }
}

/// A stored power test's Power@Size and scale factor, QphH@Size's other half (a throughput
/// test's `power-run` option, read from the store by `dbrig_report::tpch::stored_power`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerRef {
    pub run: i64,
    pub power_at_size: f64,
    pub scale_factor: f64,
}

/// The power test's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerReport {
    pub scale_factor: f64,
    pub refresh_set: Option<u32>,
    pub server_version: String,
    pub rf1: Option<QueryOutcome>,
    pub queries: Vec<QueryOutcome>,
    pub rf2: Option<QueryOutcome>,
    /// `None` when a query or refresh function failed.
    pub power_at_size: Option<f64>,
}

/// One query stream's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamReport {
    /// Stream number (1..=S; its permutation).
    pub stream: u32,
    /// From the stream's first query start to its last query end, seconds.
    #[serde(alias = "seconds")]
    pub duration_s: f64,
    pub queries: Vec<QueryOutcome>,
    /// Why the stream stopped early (its server went away); the queries before are kept.
    pub aborted: Option<String>,
}

/// One RF1/RF2 pair of the refresh stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefreshPair {
    pub refresh_set: u32,
    pub rf1: QueryOutcome,
    pub rf2: Option<QueryOutcome>,
}

/// The refresh stream's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefreshStreamReport {
    /// From the first refresh function's start to the last one's end, seconds.
    #[serde(alias = "seconds")]
    pub duration_s: f64,
    pub pairs: Vec<RefreshPair>,
    pub aborted: Option<String>,
}

/// The throughput test's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputReport {
    pub scale_factor: f64,
    pub streams: u32,
    pub server_version: String,
    pub params: ParamMode,
    /// Each query's timeout, seconds.
    #[serde(alias = "timeout_seconds")]
    pub timeout_s: Option<f64>,
    /// Wall time from the first stream's start to the last stream's end (TPC-H's Ts), seconds.
    #[serde(alias = "ts_seconds")]
    pub ts_s: f64,
    pub query_streams: Vec<StreamReport>,
    pub refresh_stream: Option<RefreshStreamReport>,
    /// `None` when a query or refresh function did not complete correctly.
    pub throughput_at_size: Option<f64>,
    /// Why the run failed (a stream lost its server), if it did.
    pub failure: Option<String>,
    /// The stored power test (`--power-run`) whose Power@Size, with this Throughput@Size,
    /// gives QphH@Size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_run: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_at_size: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qphh_at_size: Option<f64>,
}

impl ThroughputReport {
    /// Every timed step: queries of all streams, then the refresh functions.
    pub fn outcomes(&self) -> impl Iterator<Item = &QueryOutcome> {
        self.query_streams
            .iter()
            .flat_map(|s| s.queries.iter())
            .chain(
                self.refresh_stream
                    .iter()
                    .flat_map(|r| r.pairs.iter())
                    .flat_map(|p| std::iter::once(&p.rf1).chain(p.rf2.iter())),
            )
    }
}

/// QphH@Size = sqrt(Power@Size · Throughput@Size).
pub fn qphh_at_size(power: f64, throughput: f64) -> f64 {
    (power * throughput).sqrt()
}

impl PowerReport {
    /// Every timed step in the order it ran: RF1, the queries, RF2.
    pub fn steps(&self) -> impl Iterator<Item = &QueryOutcome> {
        self.rf1.iter().chain(&self.queries).chain(self.rf2.iter())
    }
}

impl std::str::FromStr for Reduction {
    type Err = crate::ValueError;
    fn from_str(s: &str) -> Result<Self, crate::ValueError> {
        Reduction::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim().to_ascii_lowercase().replace('_', "-"))
            .ok_or_else(|| crate::ValueError::Unknown {
                what: "reduction",
                given: s.to_owned(),
                expected: "simple-average, min-max or analyze-explain".to_owned(),
            })
    }
}
