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
}

impl EventTally {
    pub fn clear(&mut self) {
        self.queries = QueryCounters::default();
        self.statements.clear();
    }

    pub fn time(&mut self, kind: &'static str, us: u64) {
        self.statements.push((kind, us));
    }
}

/// One histogram per statement kind. Workloads have a handful of kinds, so a short list
/// scanned by name beats a hash map on the per-statement path.
#[derive(Debug, Default)]
pub struct StatementHistograms {
    kinds: Vec<(&'static str, LatencyHistogram)>,
}

impl StatementHistograms {
    pub fn record(&mut self, kind: &'static str, us: u64) {
        match self.kinds.iter_mut().find(|(k, _)| *k == kind) {
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
}
