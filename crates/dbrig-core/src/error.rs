//! How a database error affects the client that hit it.

use serde::{Deserialize, Serialize};

/// What the runner does with a failed statement (the three classes sysbench uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Roll back and restart the event (deadlock, lock wait timeout, serialization failure).
    /// Counted as an ignored error; the event's latency includes the retries.
    Retryable,
    /// The connection is gone: reconnect, re-prepare, count a reconnect, restart the event.
    Reconnect,
    /// Anything else: the client stops and the statement that failed is reported.
    Fatal,
}
