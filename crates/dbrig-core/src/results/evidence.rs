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
    /// What was not collected and why (no local server process, no hardware counters,
    /// performance_schema off), a line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
        };
        assert_eq!(c.server_us_per_unit(), Some(250.0));
        assert_eq!(c.client_us_per_unit(), None);
        assert_eq!(c.unit_abbrev(), "txn");
        let none = WorkCpu { units: 0, ..c };
        assert_eq!(none.server_us_per_unit(), None);
    }
}
