//! A TPC-C (TPROC-C) run's figures, as users compare them: NOPM as HammerDB computes it (the
//! change of `sum(d_next_o_id)` over the timed interval, per minute), TPM from the server's
//! own transaction counters, and per transaction type the client's counts (committed, rolled
//! back, retried, failed by error class) and latency percentiles against the specification's
//! 90th percentile limits; the consistency check after the run. tpmC only for a run with
//! keying and think times, with its efficiency against the specification's ceiling.

use serde::{Deserialize, Serialize};

/// One transaction type's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccTransaction {
    /// `new_order`, `payment`, `order_status`, `delivery`, `stock_level`.
    pub name: String,
    pub committed: u64,
    /// Ended in the rollback the specification asks for (New-Order's unused item).
    pub rolled_back: u64,
    /// Restarted at least once after a deadlock or serialization failure.
    pub retried: u64,
    pub failed_serialization: u64,
    pub failed_deadlock: u64,
    pub failed_other: u64,
    /// Latency of the committed and rolled-back transactions, ms.
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// The specification's limit on the 90th percentile (clause 5.2.5.4), s.
    pub p90_limit_s: f64,
}

impl TpccTransaction {
    pub fn finished(&self) -> u64 {
        self.committed + self.rolled_back
    }

    /// Whether the 90th percentile is within the specification's limit.
    pub fn within_limit(&self) -> bool {
        self.p90_ms <= self.p90_limit_s * 1000.0
    }
}

/// NOPM over one interval of the run (HammerDB's transaction counter's line): the change of
/// `sum(d_next_o_id)` since the previous reading, per minute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccInterval {
    /// Seconds from the start of the measured interval to this reading.
    pub t_s: f64,
    pub nopm: f64,
    /// The server's transactions per minute over the interval (`None`: SQLite keeps none).
    pub tpm: Option<f64>,
}

/// A consistency condition that failed, with the first row that breaks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccCheckFailure {
    pub condition: u8,
    pub what: String,
    pub row: Vec<String>,
}

/// The consistency check after a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccConsistency {
    /// The conditions of clause 3.3.2 checked.
    pub checked: Vec<u8>,
    pub failures: Vec<TpccCheckFailure>,
}

/// A TPC-C trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccResult {
    pub warehouses: u32,
    pub clients: u32,
    pub server_version: String,
    /// Seconds between the two readings of `sum(d_next_o_id)` (the measured phase).
    #[serde(rename = "duration_s")]
    pub duration_seconds: f64,
    /// New orders made in that time: the change of `sum(d_next_o_id)` (HammerDB's count).
    pub new_orders: u64,
    /// New orders per minute (HammerDB's NOPM).
    pub nopm: f64,
    /// Transactions per minute by the server's counters (MariaDB/MySQL `Com_commit +
    /// Com_rollback`, PostgreSQL `xact_commit + xact_rollback` of the database); `None`
    /// where the engine keeps none (SQLite: see `client_tpm`).
    pub tpm: Option<f64>,
    /// Where `tpm` comes from, in words.
    pub tpm_source: String,
    /// Transactions per minute the clients finished (committed and rolled back).
    pub client_tpm: f64,
    /// Cards per type in each client's deck (New-Order, Payment, Order-Status, Delivery,
    /// Stock-Level).
    pub mix: Vec<u32>,
    /// Each client kept a home warehouse (HammerDB's default); else a random one per
    /// transaction.
    pub home_warehouse: bool,
    pub transactions: Vec<TpccTransaction>,
    /// Keying and think times were on (ten terminals per warehouse, clause 5.2.5).
    pub key_and_think: bool,
    /// New-Orders completed (committed and rolled back) per minute of the measured interval:
    /// the specification's tpmC, only with keying and think times on (`None` otherwise: a
    /// run without them is not measured as the specification measures).
    pub tpmc: Option<f64>,
    /// tpmC against the ceiling of 12.86 per warehouse, per cent.
    pub tpmc_efficiency_pct: Option<f64>,
    /// NOPM per interval sample (every second, or `--report-interval`), from the same
    /// counter read again.
    pub intervals: Vec<TpccInterval>,
    /// The check after the run (`None`: not asked for).
    pub consistency: Option<TpccConsistency>,
    /// What the run did not do as the specification says, a line each.
    pub notes: Vec<String>,
}

impl TpccResult {
    /// Why the trial fails although it measured: a consistency condition broken by the run.
    pub fn failure(&self) -> Option<String> {
        let f = self.consistency.as_ref()?.failures.first()?;
        Some(format!(
            "consistency condition {} ({}) fails after the run, first at ({})",
            f.condition,
            f.what,
            f.row.join(", ")
        ))
    }
}
