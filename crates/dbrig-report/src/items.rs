//! The measured items of a typed trial result, each in its own unit: what the plan tables,
//! the comparisons and the CSV exports rank. Each kind makes its own (`KindReport::items`, in
//! `kinds/`); this file holds what an item is and the rules every kind's items share. An OLTP trial has none (it is ranked by its
//! throughput); a micro-benchmark has one per table type or query and per figure it derived
//! (rows/s, MB/s, cycles/row); a power test one per timed step plus Power@Size; a throughput
//! test one per query over the streams, Ts and Throughput@Size; a perfrun one per query and
//! cache temperature; a sql-bench run one per test, its TOTALS and one per operation; a load
//! each table's and the total's rows/s (MB/s beside it) and each step's seconds.
//!
//! A step that failed, timed out or answered wrong has no value: it is never counted as fast.

use dbrig_core::results::QueryStatus;

/// The unit of rows per second, the seeds' figure for loads and scans.
pub const ROWS_PER_SECOND: &str = "rows/s";
/// Seconds: TPC-H steps, perfrun executions, GROUP BY queries.
pub const SECONDS: &str = "s";

/// One measured item of one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// `INT`, `Q14`, `RF1`, `Power@Size`, `q1.sql cold`.
    pub name: String,
    pub unit: String,
    /// A figure derived from the item's own measurement (a micro item's MB/s beside its
    /// rows/s): it gets its own row, named with its unit.
    pub derived: bool,
    pub value: Option<f64>,
    /// Why the item has no value (`timeout (>7.000 s)`, `error`, `wrong answer`), where the
    /// result says: exports give it beside the empty value.
    pub missing: Option<String>,
}

impl Item {
    pub(crate) fn new(name: impl Into<String>, unit: &str, value: Option<f64>) -> Self {
        Item {
            name: name.into(),
            unit: unit.to_owned(),
            derived: false,
            value,
            missing: None,
        }
    }

    /// A TPC-H step's item: its seconds when it answered right, else why not.
    pub(crate) fn step(name: String, status: QueryStatus, time_us: u64) -> Self {
        Item {
            missing: step_missing(status, time_us),
            ..Item::new(name, SECONDS, ok_seconds(status, time_us))
        }
    }

    pub(crate) fn derived(name: &str, unit: &str, value: f64) -> Self {
        Item {
            derived: true,
            ..Item::new(name, unit, Some(value))
        }
    }

    /// The item's key within its workload: unique per (name, unit).
    pub fn key(&self) -> String {
        if self.derived {
            format!("{} ({})", self.name, self.unit)
        } else {
            self.name.clone()
        }
    }
}

/// A micro item's figure by one rule: a rate is the total over the total time (rows / mean
/// seconds, as MB/s and cycles/row are), also for results stored while `mean` was the mean
/// of the runs' rates; any other unit its mean.
pub fn rate_rule(i: &dbrig_core::results::MicroItem) -> f64 {
    match i.rows_per_s {
        Some(r) if i.unit == ROWS_PER_SECOND => r,
        _ => i.mean,
    }
}

/// `Q14` for a query, `RF1` as is.
pub fn step_label(name: &str) -> String {
    if name.starts_with("RF") {
        name.to_owned()
    } else {
        format!("Q{name}")
    }
}

fn ok_seconds(status: QueryStatus, time_us: u64) -> Option<f64> {
    (status == QueryStatus::Ok).then(|| time_us as f64 / 1e6)
}

/// Why a step has no value: a timeout says after how long (its time is a lower bound).
fn step_missing(status: QueryStatus, time_us: u64) -> Option<String> {
    match status {
        QueryStatus::Ok => None,
        QueryStatus::Timeout => Some(format!(
            "timeout (>{} s)",
            crate::table::seconds_text(time_us as f64 / 1e6)
        )),
        QueryStatus::Error => Some("error".into()),
        QueryStatus::Wrong => Some("wrong answer".into()),
    }
}

/// TPC-H number order (streams run the queries in different orders), RF1/RF2 after.
pub fn query_order(name: &str) -> (u32, String) {
    (
        name.strip_prefix('Q')
            .unwrap_or(name)
            .parse::<u32>()
            .unwrap_or(u32::MAX),
        name.to_owned(),
    )
}
