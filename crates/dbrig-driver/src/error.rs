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
    /// This process has as many files open as it may (`RLIMIT_NOFILE`, or the system's
    /// table): no socket or database file can be opened until the limit is raised.
    OpenFiles,
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

    /// Whether the statement failed because the tables are not the ones it was written for: a
    /// table, column, type or function it names is missing, or a value's type does not fit.
    /// By code only (`SCHEMA_MISMATCH_CODES`); every other failure of a statement — a
    /// name taken in a pooled session, a privilege, a syntax error — is not.
    pub fn is_schema_mismatch(&self) -> bool {
        self.kind == ErrorKind::MissingTable
            || self
                .code
                .as_deref()
                .is_some_and(|c| SCHEMA_MISMATCH_CODES.contains(&c))
    }

    /// Whether the cause stays until someone changes something (a password, a table, the
    /// statement): trying again the same way fails the same way. A server that does not
    /// answer, a lost connection, a timeout or a retryable error may pass by themselves.
    pub fn lasts(&self) -> bool {
        match self.kind {
            ErrorKind::Unreachable
            | ErrorKind::ConnectionLost
            | ErrorKind::Timeout
            | ErrorKind::NoReply => false,
            _ => self.class == ErrorClass::Fatal,
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

/// A part of a target URL that does not read: the host and port, or a TLS parameter's value
/// (`TargetError` says it after the redacted URL).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UrlPartError {
    #[error("unclosed '[' in host")]
    UnclosedBracket,
    #[error("unexpected '{0}' after host")]
    AfterHost(String),
    #[error("port '{0}' is not a number from 1 to 65535")]
    Port(String),
    /// `accepted`: the modes there are (`TlsMode::ACCEPTED`).
    #[error("sslmode '{value}' is not one of {accepted}")]
    TlsMode {
        value: String,
        accepted: &'static str,
    },
    #[error("channel_binding '{0}' is not prefer, require or disable")]
    ChannelBinding(String),
    /// `key` as the URL spelled it: `sslminversion`, `ssl_min_protocol_version`, …
    #[error(
        "{key} '{value}' is not TLSv1.2 or TLSv1.3 (the TLS versions dbrig speaks; 1.0 and 1.1 are not)"
    )]
    TlsVersion { key: String, value: String },
}

/// The codes of [`DriverError::is_schema_mismatch`] (the engines' codes do not overlap):
/// PostgreSQL's SQLSTATEs for an undefined column or function, a datatype mismatch, a value
/// that cannot be coerced, the wrong kind of object, an ambiguous column or function;
/// MariaDB/MySQL's unknown column or table, an ambiguous column, a view over a missing table;
/// SQLite's generic SQLITE_ERROR, the only code it gives a missing table or column (a syntax
/// error shares it, which dbrig's own statements never have).
const SCHEMA_MISMATCH_CODES: [&str; 12] = [
    "42703", "42883", "42804", "42846", "42809", "42702", "42725", "1054", "1109", "1052", "1356",
    "1",
];
/// Linux's EMFILE (this process's open-files limit) and ENFILE (the system's file table).
const EMFILE: i32 = 24;
const ENFILE: i32 = 23;

/// Whether this process can open no more files, tried for real: opening `/dev/null` fails with
/// EMFILE or ENFILE. A connection that failed (a socket, an SQLite file: SQLite itself says
/// only "unable to open database file") failed for that reason when this says so.
pub fn out_of_open_files() -> bool {
    match std::fs::File::open("/dev/null") {
        Ok(_) => false,
        Err(e) => matches!(e.raw_os_error(), Some(EMFILE | ENFILE)),
    }
}

/// The open-files limit of this process (`RLIMIT_NOFILE` soft and hard; `None` is
/// unlimited). A system call: when the limit is reached no file (`/proc/self/limits`) opens.
pub fn open_files_limit() -> (Option<u64>, Option<u64>) {
    let l = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    (l.current, l.maximum)
}

impl DriverError {
    /// The connection could not be opened because this process is out of open files: the
    /// limit and how to raise it.
    pub fn out_of_open_files(place: &str) -> Self {
        let shown = |v: Option<u64>| v.map_or("unlimited".to_owned(), |v| v.to_string());
        let (soft, hard) = open_files_limit();
        Self::fatal(
            ErrorKind::OpenFiles,
            format!(
                "cannot open a connection to {place}: this process has as many files open as it may (RLIMIT_NOFILE soft {}, hard {}; every client's connection is one, an SQLite one three): raise the limit in the shell that starts dbrig (`ulimit -n N`, up to the hard limit; above it as root or in /etc/security/limits.conf), or run fewer clients",
                shown(soft),
                shown(hard)
            ),
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
    fn a_schema_mismatch_is_told_by_code() {
        let e =
            |kind, code: &str| DriverError::new(kind, ErrorClass::Fatal, Some(code.into()), "x");
        for (code, schema) in [
            ("42703", true),  // undefined column
            ("42883", true),  // undefined function (a type the tables lack)
            ("1054", true),   // unknown column
            ("42P05", false), // duplicate prepared statement (a pooled session)
            ("26000", false), // prepared statement does not exist (a pooler)
            ("42501", false), // insufficient privilege
            ("42601", false), // syntax error
            ("1064", false),
            ("1142", false), // command denied
            ("1", true),     // SQLite's generic error: no such table or column
            ("2067", false), // SQLite: a unique constraint
        ] {
            assert_eq!(
                e(ErrorKind::Statement, code).is_schema_mismatch(),
                schema,
                "{code}"
            );
        }
        assert!(e(ErrorKind::MissingTable, "42P01").is_schema_mismatch());
    }

    #[test]
    fn lasting_causes_by_kind_and_class() {
        let statement = |class| DriverError::new(ErrorKind::Statement, class, None, "x");
        assert!(statement(ErrorClass::Fatal).lasts());
        assert!(!statement(ErrorClass::Retryable).lasts());
        assert!(DriverError::fatal(ErrorKind::Auth, "denied").lasts());
        assert!(DriverError::fatal(ErrorKind::TableExists, "there").lasts());
        assert!(!DriverError::fatal(ErrorKind::Unreachable, "down").lasts());
        assert!(!DriverError::lost(None, "gone").lasts());
        assert!(!DriverError::fatal(ErrorKind::Timeout, "slow").lasts());
    }

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
