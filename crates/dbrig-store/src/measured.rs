//! What every backend stores of a trial's measurements, converted once before its
//! transaction: counts as the signed 64-bit integers SQL databases hold (a count beyond them is
//! refused, [`StoreError::OutOfRange`]), the JSON columns' text, the histogram's bytes and the
//! summary columns derived from it.

use std::path::Path;

use dbrig_core::{IntervalSample, LatencySummary, Measurements};

use crate::error::StoreError;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The columns of a measured trial that need converting before the insert.
pub(crate) struct MeasuredCols {
    pub(crate) transactions: i64,
    pub(crate) reads: i64,
    pub(crate) writes: i64,
    pub(crate) others: i64,
    pub(crate) ignored_errors: i64,
    pub(crate) reconnects: i64,
    pub(crate) latency_count: i64,
    pub(crate) fatal_errors: String,
    pub(crate) key_distribution: String,
    pub(crate) rate: Option<String>,
    pub(crate) histogram: Vec<u8>,
    pub(crate) summary: LatencySummary,
    pub(crate) intervals: Vec<IntervalCols>,
    pub(crate) threads: i64,
    pub(crate) duration_s: f64,
    pub(crate) percentile: f64,
    pub(crate) interrupted: bool,
    pub(crate) tps: f64,
    pub(crate) qps: f64,
}

pub(crate) struct IntervalCols {
    pub(crate) sample: IntervalSample,
    pub(crate) backlog: Option<i64>,
}

impl MeasuredCols {
    pub(crate) fn new(m: &Measurements, path: &Path) -> Result<Self> {
        let int = |what: &'static str, value: u64| {
            i64::try_from(value).map_err(|_| StoreError::OutOfRange {
                path: path.into(),
                what,
                value,
            })
        };
        Ok(MeasuredCols {
            transactions: int("transactions", m.transactions)?,
            reads: int("reads", m.queries.read)?,
            writes: int("writes", m.queries.write)?,
            others: int("other queries", m.queries.other)?,
            ignored_errors: int("ignored errors", m.ignored_errors)?,
            reconnects: int("reconnects", m.reconnects)?,
            latency_count: int("latency count", m.latency.count())?,
            fatal_errors: to_json(&m.fatal_errors),
            key_distribution: to_json(&m.key_distribution),
            rate: m.rate.as_ref().map(to_json),
            histogram: m.latency.to_bytes(),
            summary: m.latency_summary(),
            intervals: m
                .intervals
                .iter()
                .map(|s| {
                    Ok(IntervalCols {
                        sample: s.clone(),
                        backlog: s.backlog.map(|b| int("interval backlog", b)).transpose()?,
                    })
                })
                .collect::<Result<_>>()?,
            threads: i64::from(m.threads),
            duration_s: m.duration_s,
            percentile: m.percentile,
            interrupted: m.interrupted,
            tps: m.tps(),
            qps: m.qps(),
        })
    }
}

/// Serialize a value the store built or was handed as JSON. These types serialize
/// infallibly (plain data, string keys), so a failure is a bug, not a user error.
pub(crate) fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes to JSON")
}
