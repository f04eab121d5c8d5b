//! Driver errors, classified by the engine's error code.

use std::time::Duration;

use dbrig_core::ErrorClass;

/// What went wrong, as far as the caller needs to act on it (messages are for people only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing listens there, or the connection attempt timed out.
    Unreachable,
    /// The server refused the user or password.
    Auth,
    /// The database named in the URL does not exist.
    UnknownDatabase,
    /// A statement referenced a table that does not exist.
    MissingTable,
    /// A CREATE found the table already there.
    TableExists,
    /// The server rejected or failed a statement (see `code`).
    Statement,
    /// The connection broke while in use.
    ConnectionLost,
    /// The engine cannot do what was asked (e.g. a storage engine it does not have).
    Unsupported,
    /// A statement ran past its timeout and was cancelled on the server (see
    /// `Connection::query_with_timeout`); the connection is still usable.
    Timeout,
    /// TLS could not be set up or the handshake failed (certificate, mode, key file).
    Tls,
    /// The server took the connection but did not answer within the limit — its handshake
    /// within the connect timeout, or a statement's reply within the connection's reply limit
    /// (`ConnectOptions::reply_timeout`): a server stopped (SIGSTOP), hung or starved. The
    /// connection was given up (not cancelled on the server: nothing there answers).
    NoReply,
}

/// The kinds of failed transactions pgbench counts apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Serialization,
    Deadlock,
    /// Another retryable error (a lock wait timeout, a busy SQLite database).
    Other,
}

/// A database error with its class and, where the engine gives one, its code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}{}", statement.as_deref().map(|s| format!(" (statement: {s})")).unwrap_or_default())]
pub struct DriverError {
    pub kind: ErrorKind,
    pub class: ErrorClass,
    /// MySQL error number or PostgreSQL SQLSTATE or SQLite extended code, as text.
    pub code: Option<String>,
    pub message: String,
    /// The SQL that failed, when the error came from a statement.
    pub statement: Option<String>,
}

impl DriverError {
    pub fn new(
        kind: ErrorKind,
        class: ErrorClass,
        code: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            class,
            code,
            message: message.into(),
            statement: None,
        }
    }

    pub fn with_statement(mut self, sql: &str) -> Self {
        self.statement = Some(sql.to_owned());
        self
    }

    /// `sslmode=prefer`'s second attempt, without TLS, failed too: both answers in one line
    /// (the first may be the one that matters: a wrong password over TLS, then no rule for
    /// clear connections), classified as the first.
    pub(crate) fn tried_again_without_tls(mut self, again: DriverError) -> Self {
        if again.message != self.message {
            self.message = format!(
                "{}; tried again without TLS (sslmode=prefer): {}",
                self.message, again.message
            );
        }
        self
    }

    /// What kind of transaction failure this is, by its code (pgbench's
    /// `--failures-detailed` kinds; MariaDB/MySQL's deadlock and snapshot-conflict codes are
    /// counted with PostgreSQL's).
    pub fn failure_kind(&self) -> FailureKind {
        match self.code.as_deref() {
            Some("40001" | "1020") => FailureKind::Serialization,
            Some("40P01" | "1213") => FailureKind::Deadlock,
            _ => FailureKind::Other,
        }
    }

    /// Whether this is a statement stopped by its timeout (not a failure of the statement).
    pub fn is_timeout(&self) -> bool {
        self.kind == ErrorKind::Timeout
    }

    pub fn fatal(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::new(kind, ErrorClass::Fatal, None, message)
    }

    /// The connection broke under a statement: the caller reconnects and restarts the event.
    pub(crate) fn lost(code: Option<String>, message: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::ConnectionLost,
            ErrorClass::Reconnect,
            code,
            message,
        )
    }

    /// The server at `place` did not answer `what` within `limit`.
    pub(crate) fn no_reply(place: &str, what: impl std::fmt::Display, limit: Duration) -> Self {
        Self::fatal(
            ErrorKind::NoReply,
            format!("no reply from {place} within {}: {what}", seconds(limit)),
        )
    }

    /// Nothing answered at `place` (a host:port or socket path).
    pub(crate) fn unreachable(place: &str, detail: impl std::fmt::Display) -> Self {
        Self::fatal(
            ErrorKind::Unreachable,
            format!("nothing answered at {place}: {detail}"),
        )
    }
}

/// A duration as people read it in a message: `10 s`, `0.5 s`.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{} s", (s * 1000.0).round() / 1000.0)
    }
}

/// Messages are kept to one line so that logs and reports stay one record per error.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Which error codes restart an event instead of stopping the client. The defaults are
/// sysbench's: MySQL deadlock 1213, 1020 (record changed), lock wait timeout 1205;
/// PostgreSQL 40P01 (deadlock), 40001 (serialization), 23505 (unique violation, which
/// concurrent delete/insert pairs hit); SQLite BUSY (5) and LOCKED (6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ErrorPolicy {
    pub retryable: Vec<String>,
}

impl Default for ErrorPolicy {
    fn default() -> Self {
        Self::from_list(Self::DEFAULT_RETRYABLE)
    }
}

impl ErrorPolicy {
    /// The default list, as the `--retry-codes` option spells it.
    pub const DEFAULT_RETRYABLE: &'static str = "1213,1020,1205,40P01,40001,23505,5,6";

    /// Parse a comma-separated list of codes.
    pub fn from_list(list: &str) -> Self {
        Self {
            retryable: list
                .split(',')
                .map(|s| s.trim().to_ascii_uppercase())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }

    /// Whether `code` restarts the event: listed, or the list holds `all` (sysbench's
    /// `--mysql-ignore-errors=all`, every statement error).
    pub fn is_retryable(&self, code: &str) -> bool {
        self.retryable
            .iter()
            .any(|c| c.eq_ignore_ascii_case(code) || c == "ALL")
    }

    /// The class of a statement error with this code (connection loss is decided by each
    /// driver from its own error type, before this is asked).
    pub fn classify(&self, code: &str) -> ErrorClass {
        if self.is_retryable(code) {
            ErrorClass::Retryable
        } else {
            ErrorClass::Fatal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_makes_every_code_retryable() {
        let listed = ErrorPolicy::from_list("1213,1062");
        assert!(listed.is_retryable("1062"));
        assert!(!listed.is_retryable("1064"));
        let all = ErrorPolicy::from_list("all");
        assert_eq!(all.classify("1064"), ErrorClass::Retryable);
        assert_eq!(all.classify("42P01"), ErrorClass::Retryable);
    }
}
