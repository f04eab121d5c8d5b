//! What one run (one trial) measured.

use serde::{Deserialize, Serialize};

use crate::counters::QueryCounters;
use crate::histogram::LatencyHistogram;
use crate::keys::KeyDistribution;

/// Latency figures in milliseconds, derived from a histogram.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    /// Sum of all latencies (sysbench prints it).
    pub sum: f64,
}

impl LatencySummary {
    pub fn from_histogram(h: &LatencyHistogram) -> Self {
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            min: ms(h.min_us()),
            avg: h.mean_us() / 1000.0,
            max: ms(h.max_us()),
            p50: ms(h.percentile_us(50.0)),
            p90: ms(h.percentile_us(90.0)),
            p95: ms(h.percentile_us(95.0)),
            p99: ms(h.percentile_us(99.0)),
            p999: ms(h.percentile_us(99.9)),
            sum: h.sum_us() as f64 / 1000.0,
        }
    }
}

/// One `--report-interval` sample (rates are per second over the interval).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Seconds since measurement started, at the end of the interval.
    pub t_s: f64,
    pub threads: u32,
    pub tps: f64,
    pub qps: f64,
    /// Queries per second by type. The JSON keys spell the unit `_per_s`, as every dbrig JSON
    /// does; the old `_ps` names still read. The results database keeps its `_ps` columns.
    #[serde(rename = "reads_per_s", alias = "reads_ps")]
    pub reads_ps: f64,
    #[serde(rename = "writes_per_s", alias = "writes_ps")]
    pub writes_ps: f64,
    #[serde(rename = "other_per_s", alias = "other_ps")]
    pub other_ps: f64,
    /// Latency at the run's `--percentile` over the interval, in ms.
    pub latency_pct_ms: f64,
    #[serde(rename = "errors_per_s", alias = "errors_ps")]
    pub errors_ps: f64,
    #[serde(rename = "reconnects_per_s", alias = "reconnects_ps")]
    pub reconnects_ps: f64,
    /// Open loop only: events that were due but not started at the end of the interval.
    pub backlog: Option<u64>,
}

/// Open-loop (`--rate`) results: what was asked, what was achieved, how far behind it fell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RateReport {
    /// Events per second asked for and served (keys `_per_s`, as every dbrig JSON; the
    /// results of older versions, stored as `target_rate`/`achieved_rate`, still read).
    #[serde(rename = "target_per_s", alias = "target_rate")]
    pub target_rate: f64,
    #[serde(rename = "achieved_per_s", alias = "achieved_rate")]
    pub achieved_rate: f64,
    /// Events due but not yet started when measurement ended.
    pub final_backlog: u64,
    /// Largest backlog seen at any interval boundary or at the end.
    pub max_backlog: u64,
    /// Service time (from actual start), beside the latency from intended start.
    pub service_time_ms: LatencySummary,
    /// The latency of every event due in the run, the ones still queued at the end included
    /// as censored values (each at its waiting time so far, a lower bound): a saturated run
    /// cannot look fast by serving few events quickly. `None` in results stored before.
    #[serde(default)]
    pub latency_incl_unserved_ms: Option<LatencySummary>,
}

/// Everything a trial measured, before it is stored or reported.
#[derive(Debug, Clone)]
pub struct Measurements {
    pub threads: u32,
    pub key_distribution: KeyDistribution,
    /// Wall time of the measured phase (warm-up excluded), seconds.
    pub duration_s: f64,
    pub transactions: u64,
    pub queries: QueryCounters,
    /// Retryable errors that restarted an event (sysbench's "ignored errors").
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// Clients stopped by a fatal error, with the error (statement included).
    pub fatal_errors: Vec<String>,
    /// Event latency (from the intended start in open loop).
    pub latency: LatencyHistogram,
    pub intervals: Vec<IntervalSample>,
    pub rate: Option<RateReport>,
    /// Latency at this percentile is the one the interval lines and the sysbench block show.
    pub percentile: f64,
    /// The run was stopped by Ctrl-C / SIGTERM before its stop condition.
    pub interrupted: bool,
}

impl Measurements {
    pub fn latency_summary(&self) -> LatencySummary {
        LatencySummary::from_histogram(&self.latency)
    }

    fn per_second(&self, n: u64) -> f64 {
        if self.duration_s > 0.0 {
            n as f64 / self.duration_s
        } else {
            0.0
        }
    }

    pub fn tps(&self) -> f64 {
        self.per_second(self.transactions)
    }

    pub fn qps(&self) -> f64 {
        self.per_second(self.queries.total())
    }

    pub fn ignored_errors_ps(&self) -> f64 {
        self.per_second(self.ignored_errors)
    }

    pub fn reconnects_ps(&self) -> f64 {
        self.per_second(self.reconnects)
    }
}

/// What one client did in a trial's measured phase: the per-client counts behind sysbench's
/// "Threads fairness" block (a client is sysbench's thread).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientWork {
    /// Events the client completed.
    pub events: u64,
    /// Seconds the client spent executing them (service time: from each event's actual start
    /// to its end, retries included), sysbench's per-thread "execution time".
    pub busy_s: f64,
}

/// sysbench's "Threads fairness": how evenly the clients shared the work. Population standard
/// deviations over the clients, as sysbench computes them (`sqrt(Σ(x − avg)² / n)` in its
/// `report_cumulative`), so the figures read alike beside sysbench's own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub busy_avg_s: f64,
    pub busy_stddev_s: f64,
}

impl Fairness {
    /// `None` without clients (a trial stored before the counts were kept).
    pub fn of(clients: &[ClientWork]) -> Option<Fairness> {
        if clients.is_empty() {
            return None;
        }
        let n = clients.len() as f64;
        let avg_sd = |xs: &mut dyn Iterator<Item = f64>| {
            let xs: Vec<f64> = xs.collect();
            let avg = xs.iter().sum::<f64>() / n;
            let var = xs.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
            (avg, var.sqrt())
        };
        let (events_avg, events_stddev) = avg_sd(&mut clients.iter().map(|c| c.events as f64));
        let (busy_avg_s, busy_stddev_s) = avg_sd(&mut clients.iter().map(|c| c.busy_s));
        Some(Fairness {
            events_avg,
            events_stddev,
            busy_avg_s,
            busy_stddev_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two clients with 10 and 30 events (avg 20, population sd 10), busy 1 s and 3 s.
    #[test]
    fn fairness_is_sysbench_population_spread() {
        assert_eq!(Fairness::of(&[]), None);
        let f = Fairness::of(&[
            ClientWork {
                events: 10,
                busy_s: 1.0,
            },
            ClientWork {
                events: 30,
                busy_s: 3.0,
            },
        ])
        .unwrap();
        assert_eq!(f.events_avg, 20.0);
        assert_eq!(f.events_stddev, 10.0);
        assert_eq!(f.busy_avg_s, 2.0);
        assert_eq!(f.busy_stddev_s, 1.0);
    }

    /// Rates are counts over the measured seconds (0 when nothing was measured), and the
    /// latency summary is its histogram's, in milliseconds.
    #[test]
    fn rates_and_latency_of_known_counts() {
        let mut latency = LatencyHistogram::new();
        latency.record_us(1_000);
        latency.record_us(3_000);
        let mut m = Measurements {
            threads: 2,
            key_distribution: KeyDistribution::Uniform,
            duration_s: 4.0,
            transactions: 10,
            queries: QueryCounters {
                read: 30,
                write: 8,
                other: 2,
            },
            ignored_errors: 6,
            reconnects: 2,
            fatal_errors: Vec::new(),
            latency,
            intervals: Vec::new(),
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        assert_eq!(
            (m.tps(), m.qps(), m.ignored_errors_ps(), m.reconnects_ps()),
            (2.5, 10.0, 1.5, 0.5)
        );
        let s = m.latency_summary();
        assert_eq!((s.min, s.avg, s.sum), (1.0, 2.0, 4.0));
        assert!(
            (s.max - 3.0).abs() < 0.01 && (s.p50 - 1.0).abs() < 0.01,
            "{s:?}"
        );
        m.duration_s = 0.0;
        assert_eq!((m.tps(), m.qps()), (0.0, 0.0));
    }
}
