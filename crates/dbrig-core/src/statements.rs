//! Latency per kind of statement (point_select, index_update, commit …): where inside a
//! transaction the time goes, which sysbench does not show.

use serde::{Deserialize, Serialize};

use crate::counters::QueryCounters;
use crate::histogram::LatencyHistogram;
use crate::measure::LatencySummary;

/// One kind of statement over a whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementLatency {
    /// The statement's name in the workload (sysbench's names: `point_select`, `commit`, …).
    pub statement: String,
    pub count: u64,
    pub latency_ms: LatencySummary,
}

/// What one event did: its statements counted the sysbench way, and each statement's time.
/// A client keeps one and clears it per event, so recording allocates nothing once warm.
#[derive(Debug, Default)]
pub struct EventTally {
    pub queries: QueryCounters,
    /// (statement kind, microseconds) in execution order, retried attempts included.
    pub statements: Vec<(&'static str, u64)>,
    /// Errors the workload counted itself as ignored, apart from the runner's retries (a
    /// sysbench script's `sb_counter_inc(tid, SB_CNT_ERROR)`, as its TPC-C suites do for an
    /// intentional rollback).
    pub ignored_errors: u64,
    /// The kind of event this is, for workloads whose events are of several kinds (TPC-C's
    /// transaction types): the runner counts outcomes and latency per kind
    /// ([`crate::merge::EventKinds`]). Kept across an event's retries: a workload that finds
    /// it set at the start of an event knows the event is being retried.
    pub kind: Option<&'static str>,
    /// The event ended in a rollback the workload meant (not an error).
    pub rolled_back: bool,
}

impl EventTally {
    pub fn clear(&mut self) {
        self.queries = QueryCounters::default();
        self.statements.clear();
        self.ignored_errors = 0;
        self.kind = None;
        self.rolled_back = false;
    }

    pub fn time(&mut self, kind: &'static str, us: u64) {
        self.statements.push((kind, us));
    }
}

/// One histogram per statement kind. Workloads have a handful of kinds, so a short list
/// scanned by name beats a hash map on the per-statement path.
#[derive(Debug, Clone, Default)]
pub struct StatementHistograms {
    kinds: Vec<(&'static str, LatencyHistogram)>,
}

impl StatementHistograms {
    pub fn record(&mut self, kind: &'static str, us: u64) {
        // A statement passes the same `&'static str` every time (a literal, or a script's
        // interned text): find it by address first, two words compared per kind. By text
        // only then: a sysbench script's 38 kinds include many of one length ("…sbtest1…",
        // "…sbtest2…"), each a `memcmp` when compared by text on every statement.
        let at = self
            .kinds
            .iter()
            .position(|(k, _)| std::ptr::eq(*k, kind))
            .or_else(|| self.kinds.iter().position(|(k, _)| *k == kind));
        match at.map(|i| &mut self.kinds[i]) {
            Some((_, h)) => h.record_us(us),
            None => {
                let mut h = LatencyHistogram::new();
                h.record_us(us);
                self.kinds.push((kind, h));
            }
        }
    }

    pub fn record_event(&mut self, event: &EventTally) {
        for &(kind, us) in &event.statements {
            self.record(kind, us);
        }
    }

    pub fn add(&mut self, other: &StatementHistograms) {
        for (kind, h) in &other.kinds {
            match self.kinds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, mine)) => mine.add(h),
                None => self.kinds.push((kind, h.clone())),
            }
        }
    }

    /// Summaries by statement name (a stable order whatever the workers' merge order).
    pub fn summaries(&self) -> Vec<StatementLatency> {
        let mut out: Vec<StatementLatency> = self
            .kinds
            .iter()
            .filter(|(_, h)| !h.is_empty())
            .map(|(k, h)| StatementLatency {
                statement: (*k).to_owned(),
                count: h.count(),
                latency_ms: LatencySummary::from_histogram(h),
            })
            .collect();
        out.sort_by(|a, b| a.statement.cmp(&b.statement));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_kept_apart_merged_and_sorted() {
        let mut a = StatementHistograms::default();
        let mut event = EventTally::default();
        event.time("point_select", 100);
        event.time("point_select", 300);
        event.time("commit", 2_000);
        a.record_event(&event);
        let mut b = StatementHistograms::default();
        b.record("point_select", 200);
        b.record("begin", 50);
        a.add(&b);
        let s = a.summaries();
        let names: Vec<&str> = s.iter().map(|x| x.statement.as_str()).collect();
        assert_eq!(names, ["begin", "commit", "point_select"]);
        let ps = &s[2];
        assert_eq!(ps.count, 3);
        assert!((ps.latency_ms.avg - 0.2).abs() < 0.001, "{ps:?}");
        assert!((ps.latency_ms.max - 0.3).abs() < 0.001, "{ps:?}");
        assert_eq!(s[1].count, 1);
        event.clear();
        assert!(event.statements.is_empty() && event.queries.total() == 0);
    }

    /// The same text from two places (two leaked copies: two addresses) is one kind; a
    /// kind of the same length but other text is another.
    #[test]
    fn a_kind_is_its_text_whatever_its_address() {
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        let (one, again, other) = (leak("SELECT 1"), leak("SELECT 1"), leak("SELECT 2"));
        assert!(!std::ptr::eq(one, again));
        let mut h = StatementHistograms::default();
        for k in [one, other, again, one, other] {
            h.record(k, 10);
        }
        let s = h.summaries();
        let counts: Vec<(&str, u64)> = s.iter().map(|x| (x.statement.as_str(), x.count)).collect();
        assert_eq!(counts, [("SELECT 1", 3), ("SELECT 2", 2)]);
    }
}
