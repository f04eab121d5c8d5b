//! The evidence recorded with every trial to explain its figure: the CPU the server process and
//! dbrig itself spent per unit of work over the measured interval, the server's counters per
//! interval (deltas aligned with the latency intervals), and the wait events its sessions were
//! seen in. Reports normalise all of it per unit of work (transaction, query, item) and say
//! which of it changed between configurations ("why").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a trial recorded to explain its figure. Every part is optional: what could not be
/// collected is said in `notes` (once per run on the console).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialEvidence {
    pub cpu: Option<WorkCpu>,
    pub counters: Option<CounterSeries>,
    pub waits: Option<WaitSamples>,
    /// The server's folded stacks over the measured interval (`--profile`).
    pub profile: Option<Profile>,
    /// What was not collected and why (no local server process, no hardware counters,
    /// performance_schema off), a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Nothing was collected: the plan switched evidence off (`[environment] evidence =
    /// false`, `--no-evidence`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub switched_off: bool,
}

impl TrialEvidence {
    /// The units of work the trial did (transactions, queries or items), when known.
    pub fn units(&self) -> Option<(u64, &str)> {
        self.cpu.as_ref().map(|c| (c.units, c.unit.as_str()))
    }
}

/// CPU time over the measured interval (user + system, all threads of the process, from
/// `/proc/PID/stat`), and the units of work done in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkCpu {
    /// What one unit is: `transaction`, `query` or `item`.
    pub unit: String,
    pub units: u64,
    /// Wall seconds of the interval the CPU was taken over.
    pub interval_s: f64,
    /// The server process's CPU seconds; `None` when no server process on this host was found
    /// (a remote server, SQLite in dbrig's own process, the mock engine).
    pub server_cpu_s: Option<f64>,
    pub server_pid: Option<u32>,
    /// dbrig's own CPU seconds (the client side).
    pub client_cpu_s: Option<f64>,
    /// dbrig's own peak resident memory over the trial, from before its clients connected to
    /// its end (the process's `VmHWM`, reset as the trial began): the client's memory alone,
    /// never a managed server's (which `/usr/bin/time` folds in: dbrig reaps it). `None` in
    /// trials stored before it was kept, or where the kernel could not reset the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_peak_rss_bytes: Option<u64>,
}

impl WorkCpu {
    /// The short form of the unit in a figure's name: `txn`, `query`, `item`.
    pub fn unit_abbrev(&self) -> &str {
        unit_abbrev(&self.unit)
    }

    fn per_unit_us(&self, cpu_s: Option<f64>) -> Option<f64> {
        (self.units > 0)
            .then_some(())
            .and(cpu_s)
            .map(|s| s * 1e6 / self.units as f64)
    }

    /// Server CPU microseconds per unit of work.
    pub fn server_us_per_unit(&self) -> Option<f64> {
        self.per_unit_us(self.server_cpu_s)
    }

    /// Client (dbrig) CPU microseconds per unit of work.
    pub fn client_us_per_unit(&self) -> Option<f64> {
        self.per_unit_us(self.client_cpu_s)
    }
}

/// `txn` for transactions, the unit itself otherwise.
pub fn unit_abbrev(unit: &str) -> &str {
    match unit {
        "transaction" => "txn",
        u => u,
    }
}

/// A server's cumulative counters sampled at the report interval over the measured
/// interval: each interval's deltas of the counters that moved. The deltas of all intervals
/// sum to the run's total (`total`), the last interval ending with the measured interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterSeries {
    /// Where the counters came from: `SHOW GLOBAL STATUS`, `pg_stat_database`, ….
    pub sources: Vec<String>,
    pub intervals: Vec<CounterInterval>,
    /// Last sample minus first, per counter that moved.
    pub total: BTreeMap<String, f64>,
}

/// One interval's counter deltas (counters that did not move are left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterInterval {
    /// End of the interval, seconds since the measured interval began (the latency
    /// intervals' clock).
    pub t_s: f64,
    pub deltas: BTreeMap<String, f64>,
}

/// Wait events seen in the benchmark's sessions, sampled every `interval_ms`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WaitSamples {
    /// `pg_stat_activity`, `performance_schema.events_waits_current`.
    pub source: String,
    pub interval_ms: u64,
    /// How many times the sessions were sampled.
    pub samples: u64,
    /// Sessions seen per event (`Lock:transactionid`, `wait/io/table/sql/handler`); an
    /// active session seen in no wait counts as `CPU`.
    pub counts: BTreeMap<String, u64>,
}

/// The server process's stacks sampled by `perf record` over the measured interval, folded
/// (one line per distinct stack, frames from the root joined by `;`, as flame graphs take
/// them). Only the most frequent [`Profile::MAX_STACKS`] stacks are kept; the samples of the
/// rest are counted under one stack named [`Profile::OTHER`], so the total stays right.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Profile {
    /// The perf event sampled, e.g. `cpu-clock` (a software clock: this also works where the
    /// host has no hardware counters).
    pub event: String,
    /// Samples per second asked of perf.
    pub frequency_hz: u32,
    /// All samples, those of the dropped stacks included.
    pub samples: u64,
    /// Distinct stacks that were folded into [`Profile::OTHER`].
    pub dropped_stacks: u64,
    /// The kept stacks, most frequent first.
    pub stacks: Vec<FoldedStack>,
}

/// One distinct stack and how many samples ended in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoldedStack {
    /// Frames from the root (the process name first) to the leaf, joined by `;`.
    pub stack: String,
    pub count: u64,
}

impl Profile {
    /// How many distinct stacks a trial keeps: enough for every frame a flame graph can
    /// show legibly, small enough (some 100 KB of JSON at most) to store with every trial.
    pub const MAX_STACKS: usize = 500;
    /// The stack the dropped stacks' samples are counted under.
    pub const OTHER: &'static str = "[other stacks]";

    /// A profile of these folded stacks (any order, repeats added up), keeping the most
    /// frequent [`Profile::MAX_STACKS`].
    pub fn from_folded(
        event: &str,
        frequency_hz: u32,
        stacks: impl IntoIterator<Item = (String, u64)>,
    ) -> Profile {
        let mut merged: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, count) in stacks {
            *merged.entry(stack).or_default() += count;
        }
        let samples = merged.values().sum();
        let mut all: Vec<FoldedStack> = merged
            .into_iter()
            .map(|(stack, count)| FoldedStack { stack, count })
            .collect();
        all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.stack.cmp(&b.stack)));
        let mut dropped_stacks = 0;
        if all.len() > Self::MAX_STACKS {
            let rest = all.split_off(Self::MAX_STACKS - 1);
            dropped_stacks = rest.len() as u64;
            all.push(FoldedStack {
                stack: Self::OTHER.to_owned(),
                count: rest.iter().map(|s| s.count).sum(),
            });
        }
        Profile {
            event: event.to_owned(),
            frequency_hz,
            samples,
            dropped_stacks,
            stacks: all,
        }
    }

    /// The stacks as folded lines (`frames count`), as inferno's flame graph reads them.
    pub fn folded_lines(&self) -> Vec<String> {
        self.stacks
            .iter()
            .map(|s| format!("{} {}", s.stack, s.count))
            .collect()
    }

    /// Each leaf function's share of the samples (self time), 0..1.
    pub fn self_shares(&self) -> BTreeMap<String, f64> {
        let mut shares = BTreeMap::new();
        if self.samples == 0 {
            return shares;
        }
        for s in &self.stacks {
            let leaf = s.stack.rsplit(';').next().unwrap_or(&s.stack);
            *shares.entry(leaf.to_owned()).or_default() += s.count as f64 / self.samples as f64;
        }
        shares
    }
}

/// The name an active session in no wait is counted under.
pub const ON_CPU: &str = "CPU";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_per_unit_needs_units_and_a_process() {
        let c = WorkCpu {
            unit: "transaction".into(),
            units: 2000,
            interval_s: 1.0,
            server_cpu_s: Some(0.5),
            server_pid: Some(1),
            client_cpu_s: None,
            client_peak_rss_bytes: None,
        };
        assert_eq!(c.server_us_per_unit(), Some(250.0));
        assert_eq!(c.client_us_per_unit(), None);
        assert_eq!(c.unit_abbrev(), "txn");
        let none = WorkCpu { units: 0, ..c };
        assert_eq!(none.server_us_per_unit(), None);
    }

    #[test]
    fn profile_keeps_the_most_frequent_stacks_and_counts_the_rest() {
        let n = Profile::MAX_STACKS as u64 + 10;
        let stacks = (0..n).map(|i| (format!("mariadbd;f{i}"), i + 1));
        let p = Profile::from_folded("cpu-clock", 99, stacks.chain([("mariadbd;f0".into(), 1)]));
        assert_eq!(p.samples, n * (n + 1) / 2 + 1);
        assert_eq!(p.stacks.len(), Profile::MAX_STACKS);
        assert_eq!(p.stacks.iter().map(|s| s.count).sum::<u64>(), p.samples);
        assert_eq!(p.stacks[0].stack, format!("mariadbd;f{}", n - 1));
        let other = p.stacks.last().unwrap();
        assert_eq!(other.stack, Profile::OTHER);
        assert_eq!(p.dropped_stacks, 11);
        // f0 (1 + 1), f1 (2), …, f10 (11) were dropped.
        assert_eq!(other.count, 2 + (2..=11).sum::<u64>());
        let shares = p.self_shares();
        assert!((shares.values().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
