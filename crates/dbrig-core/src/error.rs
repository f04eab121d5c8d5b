//! How a database error affects the client that hit it, and why a value given to an option,
//! a plan or a stored field is refused.

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

/// A value an option, a plan file or a stored field does not take; the message says what it
/// takes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A name that is not one of a closed set (a protocol, a reduction, a correction …).
    #[error("unknown {what} {given:?}: {expected}")]
    Unknown {
        what: &'static str,
        given: String,
        /// The names that are taken, as a reader would say them.
        expected: String,
    },
    #[error("'{0}' is not a boolean (use on/off)")]
    NotABoolean(String),
    /// A number outside its [`crate::limits::Limit`].
    #[error("{shown} is {problem}: give {range}")]
    Limit {
        /// The value as given.
        shown: String,
        problem: LimitProblem,
        /// The range that is taken.
        range: String,
    },
}

/// What is wrong with a number a [`crate::limits::Limit`] refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitProblem {
    NotANumber,
    NotFinite,
    NotWhole,
    OutOfRange,
}

impl std::fmt::Display for LimitProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LimitProblem::NotANumber => "not a number",
            LimitProblem::NotFinite => "not a finite number",
            LimitProblem::NotWhole => "not a whole number",
            LimitProblem::OutOfRange => "out of range",
        })
    }
}
