//! Mergeable measurements: what the clients of a run measured, in parts that add up.
//!
//! Each of the runner's workers counts its own clients' events (no lock shared with another
//! worker); the run's figures are the merge of every worker's part, and a run whose clients
//! come from several processes would merge those processes' parts the same way. The merge is
//! exact: counters add, HDR histograms (one set of bounds everywhere) add bucket by bucket,
//! and report intervals merge by the time they end. So the merged parts give the same counts
//! and percentiles as one histogram of every event would.
//!
//! What a kind reports is made from a [`RunMeasurements`] by that kind (the OLTP figures,
//! another kind's own): nothing here knows a result type.

use std::time::Duration;

use crate::counters::QueryCounters;
use crate::histogram::LatencyHistogram;
use crate::measure::{ClientWork, IntervalSample};
use crate::statements::StatementHistograms;

/// `--max-tries`: events that ended failed after their last try, by kind of failure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FailedEvents {
    pub serialization: u64,
    pub deadlock: u64,
    pub other: u64,
}

impl FailedEvents {
    pub fn merge(&mut self, o: &FailedEvents) {
        self.serialization += o.serialization;
        self.deadlock += o.deadlock;
        self.other += o.other;
    }
}

/// The counts and latencies of a stretch of a run's events (the whole run, or one interval).
#[derive(Debug, Clone, Default)]
pub struct EventCounts {
    pub events: u64,
    pub queries: QueryCounters,
    /// Retryable errors that restarted an event (sysbench's "ignored errors").
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// From each event's intended start (open loop) or actual start (closed loop) to its end.
    pub latency: LatencyHistogram,
    /// From each event's actual start to its end.
    pub service: LatencyHistogram,
    /// Events above `--latency-limit` (late), and open-loop events skipped for it.
    pub late: u64,
    pub skipped: u64,
    /// `--max-tries`: events retried at least once, and events that failed.
    pub retried: u64,
    pub failed: FailedEvents,
    /// Open loop: the processed events' delays from intended to actual start, µs.
    pub lag_sum_us: u64,
    pub lag_max_us: u64,
}

impl EventCounts {
    /// One finished event: its statements, retries, reconnects and times (µs).
    pub fn record(
        &mut self,
        queries: &QueryCounters,
        ignored: u64,
        reconnects: u64,
        latency_us: u64,
        service_us: u64,
    ) {
        self.events += 1;
        self.queries.add(queries);
        self.ignored_errors += ignored;
        self.reconnects += reconnects;
        self.latency.record_us(latency_us);
        self.service.record_us(service_us);
    }

    pub fn merge(&mut self, o: &EventCounts) {
        self.events += o.events;
        self.queries.add(&o.queries);
        self.ignored_errors += o.ignored_errors;
        self.reconnects += o.reconnects;
        self.latency.add(&o.latency);
        self.service.add(&o.service);
        self.late += o.late;
        self.skipped += o.skipped;
        self.retried += o.retried;
        self.failed.merge(&o.failed);
        self.lag_sum_us += o.lag_sum_us;
        self.lag_max_us = self.lag_max_us.max(o.lag_max_us);
    }
}

/// The outcomes of one kind of event (a TPC-C transaction type), as the workload names it
/// in [`crate::EventTally::kind`].
#[derive(Debug, Clone, Default)]
pub struct KindCounts {
    /// Events that ended committed.
    pub committed: u64,
    /// Events that ended in the rollback the workload meant (TPC-C's New-Orders with an
    /// unused item).
    pub rolled_back: u64,
    /// Events restarted at least once after a retryable error (deadlock, serialization).
    pub retried: u64,
    /// Events that ended failed: out of tries (`--max-tries`) by kind of failure, or stopped
    /// by an error that is not retried (`other`).
    pub failed: FailedEvents,
    /// Latency of the committed and rolled-back events (µs, as the run's).
    pub latency: LatencyHistogram,
}

impl KindCounts {
    pub fn merge(&mut self, o: &KindCounts) {
        self.committed += o.committed;
        self.rolled_back += o.rolled_back;
        self.retried += o.retried;
        self.failed.merge(&o.failed);
        self.latency.add(&o.latency);
    }
}

/// [`KindCounts`] per kind of event, in the order kinds first appeared. A workload has a
/// handful of kinds: a short list scanned by name.
#[derive(Debug, Clone, Default)]
pub struct EventKinds {
    kinds: Vec<(&'static str, KindCounts)>,
}

impl EventKinds {
    /// The counts of `kind`, made empty on first use.
    pub fn entry(&mut self, kind: &'static str) -> &mut KindCounts {
        let at = match self.kinds.iter().position(|(k, _)| *k == kind) {
            Some(at) => at,
            None => {
                self.kinds.push((kind, KindCounts::default()));
                self.kinds.len() - 1
            }
        };
        &mut self.kinds[at].1
    }

    pub fn get(&self, kind: &str) -> Option<&KindCounts> {
        self.kinds.iter().find(|(k, _)| *k == kind).map(|(_, c)| c)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &KindCounts)> {
        self.kinds.iter().map(|(k, c)| (*k, c))
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    pub fn merge(&mut self, o: &EventKinds) {
        for (k, c) in &o.kinds {
            self.entry(k).merge(c);
        }
    }
}

/// One report interval of a run, keyed by the time it ended.
#[derive(Debug, Clone)]
pub struct IntervalCounts {
    /// When the interval ended, from the start of measurement: what intervals merge by.
    pub end: Duration,
    pub length: Duration,
    /// Clients still running at its end.
    pub active_clients: u32,
    pub events: u64,
    pub queries: QueryCounters,
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// The latency histogram, encoded ([`LatencyHistogram::to_bytes`]): a run keeps one per
    /// interval, and a histogram over 1 µs … 1 h takes ~190 KB in memory, a few KB encoded.
    latency: Vec<u8>,
    /// Open loop only: events due but not started at its end.
    pub backlog: Option<u64>,
}

impl IntervalCounts {
    pub fn new(
        end: Duration,
        length: Duration,
        active_clients: u32,
        counts: &EventCounts,
        backlog: Option<u64>,
    ) -> Self {
        Self {
            end,
            length,
            active_clients,
            events: counts.events,
            queries: counts.queries,
            ignored_errors: counts.ignored_errors,
            reconnects: counts.reconnects,
            latency: counts.latency.to_bytes(),
            backlog,
        }
    }

    pub fn latency(&self) -> LatencyHistogram {
        LatencyHistogram::from_bytes(&self.latency)
            .expect("an interval's histogram was encoded by `IntervalCounts::new`")
    }

    /// Two parts of the same interval (same end; `self`'s length is kept).
    pub fn merge(&mut self, o: &IntervalCounts) {
        self.active_clients += o.active_clients;
        self.events += o.events;
        self.queries.add(&o.queries);
        self.ignored_errors += o.ignored_errors;
        self.reconnects += o.reconnects;
        let mut latency = self.latency();
        latency.add(&o.latency());
        self.latency = latency.to_bytes();
        self.backlog = match (self.backlog, o.backlog) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }

    /// The interval as its line reports it: rates per second over its length, latency at
    /// `percentile`.
    pub fn sample(&self, percentile: f64) -> IntervalSample {
        let secs = self.length.as_secs_f64();
        let ps = |n: u64| n as f64 / secs;
        IntervalSample {
            t_s: self.end.as_secs_f64(),
            threads: self.active_clients,
            tps: ps(self.events),
            qps: ps(self.queries.total()),
            reads_ps: ps(self.queries.read),
            writes_ps: ps(self.queries.write),
            other_ps: ps(self.queries.other),
            latency_pct_ms: self.latency().percentile_us(percentile) as f64 / 1000.0,
            errors_ps: ps(self.ignored_errors),
            reconnects_ps: ps(self.reconnects),
            backlog: self.backlog,
        }
    }
}

/// Set-up times of every connection the clients opened (µs), failed attempts, and TLS
/// sessions resumed.
#[derive(Debug, Clone, Default)]
pub struct ConnectCounts {
    pub latency: LatencyHistogram,
    pub failed: u64,
    pub resumed: u64,
}

impl ConnectCounts {
    pub fn merge(&mut self, o: &ConnectCounts) {
        self.latency.add(&o.latency);
        self.failed += o.failed;
        self.resumed += o.resumed;
    }
}

/// What a run's clients measured (or one worker's, one process's share of them).
#[derive(Debug, Clone, Default)]
pub struct RunMeasurements {
    /// Every measured event of the run.
    pub total: EventCounts,
    /// Report intervals, in order of their end.
    pub intervals: Vec<IntervalCounts>,
    /// Latency per kind of statement (measured events only).
    pub statements: StatementHistograms,
    /// Outcomes and latency per kind of event, for workloads that name their events' kinds
    /// (TPC-C's transaction types); empty for the others.
    pub kinds: EventKinds,
    /// Each client's measured work, by client number (in order).
    pub clients: Vec<(u32, ClientWork)>,
    pub connects: ConnectCounts,
    /// Open loop: the events still queued at the end, each at its waiting time so far (a
    /// censored latency), µs.
    pub unserved: LatencyHistogram,
    /// Open loop: events due but not started when measurement ended.
    pub final_backlog: u64,
    /// Clients stopped by a fatal error, a line each.
    pub fatal_errors: Vec<String>,
    /// Wall time of the measured phase, seconds (merged: the longest).
    pub duration_s: f64,
    /// Stopped by Ctrl-C / SIGTERM before the stop condition.
    pub interrupted: bool,
}

impl RunMeasurements {
    /// Add another part of the run: counts and histograms add, intervals with the same end
    /// merge (others are kept, in order of their end), clients are kept by number.
    pub fn merge(&mut self, o: &RunMeasurements) {
        self.total.merge(&o.total);
        for i in &o.intervals {
            match self.intervals.binary_search_by(|mine| mine.end.cmp(&i.end)) {
                Ok(at) => self.intervals[at].merge(i),
                Err(at) => self.intervals.insert(at, i.clone()),
            }
        }
        self.statements.add(&o.statements);
        self.kinds.merge(&o.kinds);
        self.clients.extend_from_slice(&o.clients);
        self.clients.sort_by_key(|&(i, _)| i);
        self.connects.merge(&o.connects);
        self.unserved.add(&o.unserved);
        self.final_backlog += o.final_backlog;
        self.fatal_errors.extend(o.fatal_errors.iter().cloned());
        self.duration_s = self.duration_s.max(o.duration_s);
        self.interrupted |= o.interrupted;
    }

    /// The largest backlog at any interval's end or at the end of measurement.
    pub fn max_backlog(&self) -> u64 {
        self.intervals
            .iter()
            .filter_map(|i| i.backlog)
            .chain([self.final_backlog])
            .max()
            .unwrap_or(0)
    }

    /// Events per second over the measured time.
    pub fn per_second(&self, n: u64) -> f64 {
        if self.duration_s > 0.0 {
            n as f64 / self.duration_s
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    const WORKERS: usize = 7;
    const INTERVALS: u64 = 5;

    /// One event, as a worker records it into its run part and its interval's counts.
    struct Event {
        worker: usize,
        interval: u64,
        queries: QueryCounters,
        ignored: u64,
        latency_us: u64,
        service_us: u64,
        statement: &'static str,
    }

    fn events(seed: u64, n: usize) -> Vec<Event> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // Latencies over six decades (10 µs … 10 s), log-uniform: every HDR bucket
                // width is exercised, and the tail is long, as a real run's is.
                let latency_us = 10f64.powf(rng.random_range(1.0..7.0)) as u64;
                Event {
                    worker: rng.random_range(0..WORKERS),
                    interval: rng.random_range(0..INTERVALS),
                    queries: QueryCounters {
                        read: rng.random_range(0..10),
                        write: rng.random_range(0..4),
                        other: rng.random_range(0..2),
                    },
                    ignored: u64::from(rng.random_bool(0.05)),
                    latency_us,
                    service_us: latency_us / rng.random_range(1..4),
                    statement: ["point_select", "commit", "index_update"][rng.random_range(0..3)],
                }
            })
            .collect()
    }

    fn end_of(interval: u64) -> Duration {
        Duration::from_millis(500 * (interval + 1))
    }

    /// The run's parts as `parts` workers would hand them back: each records its own events,
    /// and has an interval only where one of its events fell (a worker with no event in an
    /// interval has no part of it).
    fn parts(events: &[Event], parts: usize) -> Vec<RunMeasurements> {
        (0..parts)
            .map(|w| {
                let mine: Vec<&Event> = events.iter().filter(|e| e.worker % parts == w).collect();
                let mut part = RunMeasurements {
                    duration_s: 2.5,
                    ..RunMeasurements::default()
                };
                let mut by_interval = vec![EventCounts::default(); INTERVALS as usize];
                for e in &mine {
                    for c in [&mut part.total, &mut by_interval[e.interval as usize]] {
                        c.record(&e.queries, e.ignored, 0, e.latency_us, e.service_us);
                    }
                    part.statements.record(e.statement, e.service_us);
                    // A kind per event (as TPC-C's transaction types), some rolled back.
                    let k = part.kinds.entry(e.statement);
                    match e.latency_us % 7 == 0 {
                        true => k.rolled_back += 1,
                        false => k.committed += 1,
                    }
                    k.retried += e.ignored;
                    k.failed.deadlock += u64::from(e.latency_us % 11 == 0);
                    k.latency.record_us(e.latency_us);
                }
                for (i, c) in by_interval.iter().enumerate() {
                    if c.events > 0 {
                        let (end, length) = (end_of(i as u64), Duration::from_millis(500));
                        part.intervals
                            .push(IntervalCounts::new(end, length, 1, c, None));
                    }
                }
                part.clients.push((
                    w as u32,
                    ClientWork {
                        events: part.total.events,
                        busy_s: 0.0,
                    },
                ));
                part
            })
            .collect()
    }

    const PERCENTILES: [f64; 9] = [0.0, 1.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0];

    fn assert_same_histogram(merged: &LatencyHistogram, one: &LatencyHistogram, what: &str) {
        assert_eq!(merged.count(), one.count(), "{what}: count");
        assert_eq!(merged.sum_us(), one.sum_us(), "{what}: sum");
        assert_eq!(merged.min_us(), one.min_us(), "{what}: min");
        assert_eq!(merged.max_us(), one.max_us(), "{what}: max");
        for p in PERCENTILES {
            assert_eq!(
                merged.percentile_us(p),
                one.percentile_us(p),
                "{what}: p{p}"
            );
        }
    }

    /// Merging the per-worker parts of a run, in any order, gives exactly what one part
    /// holding every event gives: the counts, the sum, min, max and every percentile of the
    /// histograms, each interval's figures, each statement's. Seeds fixed, so a failure
    /// repeats.
    #[test]
    fn merged_parts_equal_one_histogram_of_every_event() {
        for seed in [1, 2, 3, 42, 2026] {
            let events = events(seed, 20_000);
            let whole = parts(&events, 1).remove(0);
            for n in [2, 3, WORKERS] {
                let mut parts = parts(&events, n);
                let mut rng = StdRng::seed_from_u64(seed ^ n as u64);
                // Merge in a shuffled order: the result must not depend on it.
                for i in (1..parts.len()).rev() {
                    parts.swap(i, rng.random_range(0..=i));
                }
                let mut merged = RunMeasurements::default();
                for p in &parts {
                    merged.merge(p);
                }
                let what = format!("seed {seed}, {n} parts");
                assert_eq!(merged.total.events, whole.total.events, "{what}");
                assert_eq!(merged.total.queries, whole.total.queries, "{what}");
                assert_eq!(merged.total.ignored_errors, whole.total.ignored_errors);
                assert_same_histogram(&merged.total.latency, &whole.total.latency, &what);
                assert_same_histogram(&merged.total.service, &whole.total.service, &what);
                assert_eq!(merged.statements.summaries(), whole.statements.summaries());
                for (kind, w) in whole.kinds.iter() {
                    let m = merged.kinds.get(kind).expect("every kind merged");
                    let what = format!("{what}, kind {kind}");
                    assert_eq!(
                        (m.committed, m.rolled_back, m.retried, m.failed),
                        (w.committed, w.rolled_back, w.retried, w.failed),
                        "{what}"
                    );
                    assert_same_histogram(&m.latency, &w.latency, &what);
                }
                assert_eq!(merged.kinds.iter().count(), 3, "{what}");
                assert_eq!(merged.intervals.len(), INTERVALS as usize, "{what}");
                for (m, w) in merged.intervals.iter().zip(&whole.intervals) {
                    assert_eq!(m.end, w.end, "{what}: intervals in order of their end");
                    assert_eq!(m.events, w.events);
                    assert_same_histogram(&m.latency(), &w.latency(), &what);
                    let (mut ms, ws) = (m.sample(95.0), w.sample(95.0));
                    // Every part counts its own active clients.
                    assert_eq!(ms.threads, n as u32, "{what}");
                    ms.threads = ws.threads;
                    assert_eq!(ms, ws, "{what}");
                }
                let numbers: Vec<u32> = merged.clients.iter().map(|&(i, _)| i).collect();
                assert_eq!(numbers, (0..n as u32).collect::<Vec<_>>(), "{what}");
                let client_events: u64 = merged.clients.iter().map(|(_, c)| c.events).sum();
                assert_eq!(client_events, whole.total.events, "{what}");
            }
        }
    }

    /// Intervals of two parts interleave by their end; same ends merge, backlogs add, and the
    /// run's largest backlog is over the merged intervals and the end.
    #[test]
    fn intervals_merge_by_their_end() {
        let at = |ms: u64, backlog: Option<u64>| {
            let mut c = EventCounts::default();
            c.record(&QueryCounters::default(), 0, 0, 100, 100);
            IntervalCounts::new(
                Duration::from_millis(ms),
                Duration::from_millis(1000),
                1,
                &c,
                backlog,
            )
        };
        let mut a = RunMeasurements {
            intervals: vec![at(1000, Some(3)), at(3000, Some(1))],
            final_backlog: 2,
            ..RunMeasurements::default()
        };
        let b = RunMeasurements {
            intervals: vec![at(2000, Some(9)), at(3000, Some(4))],
            final_backlog: 1,
            ..RunMeasurements::default()
        };
        a.merge(&b);
        let ends: Vec<u64> = a
            .intervals
            .iter()
            .map(|i| i.end.as_millis() as u64)
            .collect();
        assert_eq!(ends, [1000, 2000, 3000]);
        let events: Vec<u64> = a.intervals.iter().map(|i| i.events).collect();
        assert_eq!(events, [1, 1, 2]);
        assert_eq!(a.intervals[2].backlog, Some(5));
        assert_eq!(a.intervals[2].active_clients, 2);
        assert_eq!(a.final_backlog, 3);
        assert_eq!(a.max_backlog(), 9);
        assert_eq!(a.intervals[2].sample(50.0).tps, 2.0);
    }

    /// Every field of every part adds as it should, from known values (the randomised test
    /// above compares merged parts with one part, which the same code makes: a count that
    /// both sides get wrong alike, or one its events never set, passes it).
    #[test]
    fn known_parts_merge_to_known_sums() {
        let q = |read, write, other| QueryCounters { read, write, other };
        let mut a = EventCounts::default();
        a.record(&q(3, 1, 1), 2, 1, 1_000, 800);
        a.record(&q(3, 1, 1), 0, 0, 3_000, 2_000);
        assert_eq!(
            (a.events, a.queries, a.ignored_errors, a.reconnects),
            (2, q(6, 2, 2), 2, 1)
        );
        assert_eq!((a.latency.count(), a.service.count()), (2, 2));
        assert_eq!((a.latency.min_us(), a.service.min_us()), (1_000, 800));
        a.late = 1;
        a.skipped = 2;
        a.retried = 3;
        a.failed = FailedEvents {
            serialization: 1,
            deadlock: 2,
            other: 3,
        };
        a.lag_sum_us = 10;
        a.lag_max_us = 7;
        // The other part's counts differ from these (2 + 2 = 2 × 2 would hide a product).
        let mut b = a.clone();
        b.lag_max_us = 9;
        b.late = 5;
        b.skipped = 6;
        b.failed = FailedEvents {
            serialization: 4,
            deadlock: 5,
            other: 30,
        };
        b.merge(&a);
        assert_eq!(
            (b.events, b.queries, b.ignored_errors, b.reconnects),
            (4, q(12, 4, 4), 4, 2)
        );
        assert_eq!((b.late, b.skipped, b.retried), (6, 8, 6));
        assert_eq!(
            b.failed,
            FailedEvents {
                serialization: 5,
                deadlock: 7,
                other: 33,
            }
        );
        assert_eq!((b.lag_sum_us, b.lag_max_us), (20, 9));
        assert_eq!((b.latency.count(), b.service.count()), (4, 4));

        // An interval of 2 s: rates over its length, latency in ms at the percentile.
        let second = Duration::from_secs(1);
        let mut i = IntervalCounts::new(4 * second, 2 * second, 3, &a, Some(5));
        assert_eq!(i.latency().count(), 2);
        let s = i.sample(50.0);
        assert_eq!((s.t_s, s.threads, s.tps, s.qps), (4.0, 3, 1.0, 5.0));
        assert_eq!((s.reads_ps, s.writes_ps, s.other_ps), (3.0, 1.0, 1.0));
        assert_eq!(
            (s.errors_ps, s.reconnects_ps, s.backlog),
            (1.0, 0.5, Some(5))
        );
        assert!((s.latency_pct_ms - 1.0).abs() < 0.01, "{s:?}");
        i.merge(&IntervalCounts::new(4 * second, 2 * second, 2, &a, None));
        assert_eq!((i.active_clients, i.events, i.backlog), (5, 4, Some(5)));
        assert_eq!(
            (i.queries, i.ignored_errors, i.reconnects),
            (q(12, 4, 4), 4, 2)
        );
        assert_eq!(i.latency().count(), 4);

        // Connections: set-up times add, failures and resumed sessions count.
        let mut c = ConnectCounts {
            failed: 2,
            resumed: 3,
            ..ConnectCounts::default()
        };
        c.latency.record_us(500);
        let other = ConnectCounts {
            failed: 4,
            resumed: 5,
            latency: c.latency.clone(),
        };
        c.merge(&other);
        assert_eq!((c.latency.count(), c.failed, c.resumed), (2, 6, 8));

        // A part stopped by Ctrl-C makes the run interrupted, whichever part merges into which.
        let mut run = RunMeasurements {
            duration_s: 4.0,
            ..RunMeasurements::default()
        };
        run.merge(&RunMeasurements {
            interrupted: true,
            duration_s: 3.0,
            ..RunMeasurements::default()
        });
        assert!(run.interrupted);
        assert_eq!(run.duration_s, 4.0);
        assert_eq!(run.per_second(10), 2.5);
        run.duration_s = 0.0;
        assert_eq!(run.per_second(10), 0.0);
    }
}
