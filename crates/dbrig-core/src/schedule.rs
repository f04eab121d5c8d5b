//! Arrival schedules: when events are meant to start.
//!
//! Closed loop (the default, sysbench's) starts the next event when the previous one ends.
//! Open loop (`--rate`) gives every event an *intended* start time from a schedule; latency is
//! measured from that intended start (coordinated-omission safe, as wrk2 does), so a server
//! that stalls cannot hide the queue that built up behind it.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// How events arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ArrivalSchedule {
    /// Each client starts its next event as soon as its previous one ends.
    Closed,
    /// Poisson arrivals at `rate` events per second (exponential gaps), like sysbench `--rate`.
    Poisson { rate: f64 },
    /// Evenly spaced arrivals at `rate` events per second.
    Fixed { rate: f64 },
}

impl ArrivalSchedule {
    pub fn rate(&self) -> Option<f64> {
        match self {
            ArrivalSchedule::Closed => None,
            ArrivalSchedule::Poisson { rate } | ArrivalSchedule::Fixed { rate } => Some(*rate),
        }
    }

    /// Split the schedule into `parts` independent schedules whose union has the same rate.
    /// The superposition of independent Poisson processes is Poisson, so each worker can own
    /// its share of arrivals without sharing a queue.
    pub fn split(&self, parts: u32) -> ArrivalSchedule {
        let parts = f64::from(parts.max(1));
        match *self {
            ArrivalSchedule::Closed => ArrivalSchedule::Closed,
            ArrivalSchedule::Poisson { rate } => ArrivalSchedule::Poisson { rate: rate / parts },
            ArrivalSchedule::Fixed { rate } => ArrivalSchedule::Fixed { rate: rate / parts },
        }
    }
}

/// Intended start offsets (nanoseconds from the start of the run) for an open-loop schedule.
#[derive(Debug, Clone)]
pub struct Arrivals {
    schedule: ArrivalSchedule,
    rng: SmallRng,
    next_ns: f64,
}

impl Arrivals {
    /// `phase` in [0, 1) staggers fixed-rate workers so they do not fire in lockstep.
    pub fn new(schedule: ArrivalSchedule, seed: u64, phase: f64) -> Self {
        let mut a = Self {
            schedule,
            rng: SmallRng::seed_from_u64(seed),
            next_ns: 0.0,
        };
        if let ArrivalSchedule::Fixed { rate } = schedule {
            a.next_ns = phase * 1e9 / rate;
        } else {
            a.next_ns = a.gap_ns();
        }
        a
    }

    fn gap_ns(&mut self) -> f64 {
        match self.schedule {
            ArrivalSchedule::Closed => 0.0,
            ArrivalSchedule::Fixed { rate } => 1e9 / rate,
            ArrivalSchedule::Poisson { rate } => {
                // Inverse-CDF of the exponential distribution; 1-u avoids ln(0).
                let u: f64 = self.rng.random();
                -(1.0 - u).ln() * 1e9 / rate
            }
        }
    }

    /// The intended start of the next event, without consuming it.
    pub fn peek_ns(&self) -> u64 {
        self.next_ns as u64
    }

    /// Take the next intended start.
    pub fn take_ns(&mut self) -> u64 {
        let now = self.next_ns;
        self.next_ns += self.gap_ns();
        now as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_mean_gap_matches_rate() {
        let mut a = Arrivals::new(ArrivalSchedule::Poisson { rate: 1000.0 }, 1, 0.0);
        let mut last = 0;
        for _ in 0..100_000 {
            last = a.take_ns();
        }
        let rate = 100_000.0 / (last as f64 / 1e9);
        assert!((rate - 1000.0).abs() < 15.0, "achieved {rate}");
    }

    #[test]
    fn fixed_is_evenly_spaced_and_split_keeps_total() {
        let s = ArrivalSchedule::Fixed { rate: 100.0 }.split(4);
        assert_eq!(s.rate(), Some(25.0));
        let mut a = Arrivals::new(s, 0, 0.5);
        assert_eq!(a.take_ns(), 20_000_000);
        assert_eq!(a.take_ns(), 60_000_000);
        assert_eq!(ArrivalSchedule::Closed.split(3), ArrivalSchedule::Closed);
    }

    /// Each of N workers owns 1/N of a Poisson rate: together they arrive at the whole rate.
    #[test]
    fn poisson_split_keeps_the_total_rate() {
        let s = ArrivalSchedule::Poisson { rate: 400.0 }.split(4);
        assert_eq!(s, ArrivalSchedule::Poisson { rate: 100.0 });
        let mut a = Arrivals::new(s, 3, 0.0);
        let mut last = 0;
        for _ in 0..20_000 {
            last = a.take_ns();
        }
        let rate = 20_000.0 / (last as f64 / 1e9);
        assert!((rate - 100.0).abs() < 3.0, "achieved {rate}");
    }
}
