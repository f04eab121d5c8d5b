//! dbrig-core: the pure domain of dbrig.
//!
//! Values bound to statements, error classes, the read/write/other counters, latency
//! histograms, key distributions, arrival schedules, run measurements and their exact merge
//! (`merge`), statistics, and the one rule that finds a password in a connection URL (`url`).
//!
//! Contract: this crate does no I/O and depends on no async runtime and no database client.
//! Everything here is deterministic given its inputs (random generators take explicit seeds),
//! so it is unit-tested without servers or clocks.

pub mod answers;
pub mod calendar;
pub mod changepoint;
pub mod counters;
pub mod error;
pub mod fit;
pub mod histogram;
pub mod host;
pub mod keys;
pub mod limits;
pub mod measure;
pub mod merge;
pub mod results;
pub mod schedule;
pub mod statements;
pub mod stats;
pub mod url;
pub mod value;

pub use counters::{QueryCounters, StatementClass};
pub use error::{ErrorClass, LimitProblem, ValueError};
pub use histogram::LatencyHistogram;
pub use keys::{KeyDistribution, KeyGenerator};
pub use measure::{ClientWork, Fairness, IntervalSample, LatencySummary, Measurements};
pub use merge::{EventCounts, EventKinds, IntervalCounts, KindCounts, RunMeasurements};
pub use schedule::{ArrivalSchedule, Arrivals};
pub use statements::{EventTally, StatementHistograms, StatementLatency};
pub use value::Value;
