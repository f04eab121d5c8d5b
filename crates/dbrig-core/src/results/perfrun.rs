//! What a perfrun trial (RQG's perfrun: every query of a folder, or TPC-H's 22, executed cold
//! then warm) measured on one configuration: per query and cache temperature the time, rows,
//! result checksums and the server counters that moved.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Which of the two configurations a perfrun report compares (A: the baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// First execution of a query on a configuration ("cold") or the second ("warm").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Temperature {
    Cold,
    Warm,
}

impl Temperature {
    pub const ALL: [Temperature; 2] = [Temperature::Cold, Temperature::Warm];

    pub fn as_str(self) -> &'static str {
        match self {
            Temperature::Cold => "cold",
            Temperature::Warm => "warm",
        }
    }
}

impl fmt::Display for Temperature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One execution of one query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// Wall time of execute + fetch, microseconds.
    #[serde(default)]
    pub time_us: Option<u64>,
    #[serde(default)]
    pub rows: Option<u64>,
    /// FNV-1a 64 over the rows in the order returned.
    #[serde(default)]
    pub checksum: Option<String>,
    /// Order-insensitive: the wrapping sum of each row's hash. Two sides' results differ when
    /// these differ (a query without ORDER BY may return its rows in any order).
    #[serde(default)]
    pub checksum_unordered: Option<String>,
    /// Counter deltas that are not 0 (a counter of the side that is absent was 0).
    #[serde(default)]
    pub counters: BTreeMap<String, f64>,
    /// The query's error (code and message); nothing else is measured then.
    #[serde(default)]
    pub error: Option<String>,
    /// Counters could not be read (the query itself succeeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_error: Option<String>,
    /// The result, normalised as the TPC-H answer checker does (`crate::answers`), so two
    /// engines' results are compared by value when their checksums differ (kept up to
    /// [`MAX_ANSWER_ROWS`] rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Vec<Vec<crate::answers::Normalized>>>,
}

/// The most result rows a perfrun execution keeps for the comparison by value.
pub const MAX_ANSWER_ROWS: usize = 20_000;

impl Execution {
    /// Execution time in seconds, truncated to milliseconds (so that very fast queries give
    /// no absurd ratios, as in the seed).
    pub fn execution_time_s(&self) -> Option<f64> {
        self.time_us.map(|us| (us / 1000) as f64 / 1000.0)
    }
}

/// What is known of the server a perfrun ran on: its redacted target, version, dialect and
/// the counters it reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    pub target: String,
    pub version: String,
    pub dialect: String,
    /// Every counter this server reports (for filter names and to tell 0 from absent).
    pub counters: Vec<String>,
}

/// One query's two executions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfQuery {
    /// The query's file name (`Q01` for TPC-H).
    pub file: String,
    /// The timed statement.
    pub sql: String,
    pub cold: Execution,
    pub warm: Execution,
}

impl PerfQuery {
    pub fn execution(&self, t: Temperature) -> &Execution {
        match t {
            Temperature::Cold => &self.cold,
            Temperature::Warm => &self.warm,
        }
    }
}

/// A perfrun trial on one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfrunResult {
    pub server: SideInfo,
    /// Where the queries came from (a folder, or TPC-H with validation parameters).
    pub source: String,
    /// A note about the counters (e.g. PostgreSQL without pg_stat_statements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub queries: Vec<PerfQuery>,
}

impl PerfrunResult {
    /// Why the side measured nothing: every execution of every query failed (a schema or a
    /// dialect the queries do not fit), with the first error. A side where any query ran is
    /// not failed: its failures are shown query by query. `None` without queries too.
    pub fn failure(&self) -> Option<String> {
        let executions: Vec<&Execution> = self
            .queries
            .iter()
            .flat_map(|q| [&q.cold, &q.warm])
            .collect();
        if executions.is_empty() || executions.iter().any(|e| e.error.is_none()) {
            return None;
        }
        let first = executions
            .iter()
            .find_map(|e| e.error.as_deref())
            .unwrap_or("?");
        Some(format!(
            "every query failed on {} (all {} executions), the first: {}",
            self.server.target,
            executions.len(),
            first.lines().next().unwrap_or(first)
        ))
    }

    /// Executions that failed.
    pub fn errors(&self) -> usize {
        self.queries
            .iter()
            .flat_map(|q| [&q.cold, &q.warm])
            .filter(|e| e.error.is_some())
            .count()
    }
}

#[cfg(test)]
mod failure_tests {
    use super::*;

    fn query(file: &str, error: Option<&str>) -> PerfQuery {
        let e = Execution {
            time_us: error.is_none().then_some(100),
            error: error.map(str::to_owned),
            ..Execution::default()
        };
        PerfQuery {
            file: file.into(),
            sql: "SELECT 1".into(),
            cold: e.clone(),
            warm: e,
        }
    }

    /// A side on which every query failed measured nothing: its trial fails (and the run,
    /// and `dbrig perfrun`'s exit status); one query that ran is enough not to.
    #[test]
    fn a_side_where_every_query_failed_is_a_failure() {
        let mut r = PerfrunResult {
            server: SideInfo {
                target: "sqlite:b.db".into(),
                ..SideInfo::default()
            },
            source: "q".into(),
            note: None,
            queries: vec![
                query("q1.sql", Some("no such table: t\nat line 1")),
                query("q2.sql", Some("no such table: u")),
            ],
        };
        assert_eq!(
            r.failure().as_deref(),
            Some(
                "every query failed on sqlite:b.db (all 4 executions), the first: no such table: t"
            )
        );
        assert_eq!(
            crate::results::TrialResult::Perfrun(r.clone()).failure(),
            r.failure()
        );
        r.queries.push(query("q3.sql", None));
        assert_eq!(r.failure(), None);
        r.queries.clear();
        assert_eq!(r.failure(), None);
    }
}
