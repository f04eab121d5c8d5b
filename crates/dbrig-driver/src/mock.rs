//! The mock engine: a connection that answers every statement without a server, so whole
//! runs can be tested deterministically (counts exactly, faults on a schedule).
//!
//! Options, from the target URL's query string (`mock:?latency_us=50&fail_every=10`):
//! - `latency_us=N`: each statement takes N µs (an async sleep; 0 by default), cut short with
//!   error 1317 (interrupted) by the connection's `CancelHandle`;
//! - `slow_every=N`, `slow_us=M`: every Nth execution takes M µs instead, so latency has a
//!   known shape (percentiles below and above the slow share differ);
//! - `log=1`: every execution's statement and bound values are kept, process-wide per URL,
//!   for [`statements_sent`] (tests that check what was bound, not only the text);
//! - `fail_every=N`, `fail_code=C`: every Nth execution fails with code C (default 1213,
//!   a deadlock, so retryable by default);
//! - `lose_every=N`: every Nth execution loses the connection (reconnect class);
//! - `fatal_after=N`: the Nth execution fails with a fatal error, and so does every later one;
//! - `refuse=1`: connecting fails as if nothing listened;
//! - `die_after=N`: the Nth execution on any connection "kills the server": it and every later
//!   statement lose their connection, and every later connect to the same mock URL is refused
//!   (process-wide, keyed by the URL), as when a server dies mid-run;
//! - `tables=none`: no table exists (as before `prepare`);
//! - `version=V`: the server version reported (default `mock-1.0`).
//!
//! [`served`] tells how many statements a mock URL has answered in this process.
//!
//! Results: a SELECT returns one row; INSERT/UPDATE/DELETE change one row; anything else
//! (BEGIN, COMMIT, DDL) changes nothing.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use dbrig_core::{ErrorClass, Value};

use crate::bulk::{BulkLoad, BulkText, count_rows};
use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, Rows};
use crate::error::{DriverError, ErrorKind, ErrorPolicy};
use crate::target::Target;

#[derive(Debug, Clone, Default)]
struct MockOptions {
    latency: Duration,
    slow_every: u64,
    slow: Duration,
    log: bool,
    fail_every: u64,
    fail_code: String,
    lose_every: u64,
    fatal_after: u64,
    refuse: bool,
    die_after: u64,
    no_tables: bool,
    version: String,
}

impl MockOptions {
    fn parse(raw: &str) -> Result<Self, DriverError> {
        let mut o = MockOptions {
            fail_code: "1213".into(),
            version: "mock-1.0".into(),
            ..Default::default()
        };
        for pair in raw.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let num = || {
                v.parse::<u64>().map_err(|_| {
                    DriverError::fatal(
                        ErrorKind::Unsupported,
                        format!("mock option {k} needs a number, got '{v}'"),
                    )
                })
            };
            match k {
                "latency_us" => o.latency = Duration::from_micros(num()?),
                "slow_every" => o.slow_every = num()?,
                "slow_us" => o.slow = Duration::from_micros(num()?),
                "log" => o.log = v != "0",
                "fail_every" => o.fail_every = num()?,
                "fail_code" => o.fail_code = v.to_owned(),
                "lose_every" => o.lose_every = num()?,
                "fatal_after" => o.fatal_after = num()?,
                "refuse" => o.refuse = v != "0",
                "die_after" => o.die_after = num()?,
                "tables" => o.no_tables = v == "none",
                "version" => o.version = v.to_owned(),
                _ => {
                    return Err(DriverError::fatal(
                        ErrorKind::Unsupported,
                        format!("unknown mock option '{k}'"),
                    ));
                }
            }
        }
        Ok(o)
    }
}

/// Mock URLs whose "server" has died (see `die_after`).
static DEAD_SERVERS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn is_dead(key: &str) -> bool {
    DEAD_SERVERS
        .lock()
        .map(|d| d.iter().any(|k| k == key))
        .unwrap_or(false)
}

/// Statements answered per mock URL, process-wide (see [`served`]).
static SERVED: std::sync::Mutex<Vec<(String, u64)>> = std::sync::Mutex::new(Vec::new());

/// How many statements the mock engine has answered for `target` in this process, over every
/// connection to it (failed ones not included): what a test compares with what a run counted,
/// e.g. to see that warm-up events were served but not counted. Give each test a URL of its
/// own (`mock:?version=NAME` is enough).
pub fn served(target: &Target) -> u64 {
    let Target::Mock { options } = target else {
        return 0;
    };
    SERVED
        .lock()
        .map(|s| s.iter().find(|(k, _)| k == options).map_or(0, |(_, n)| *n))
        .unwrap_or(0)
}

fn count_served(key: &str) {
    if let Ok(mut s) = SERVED.lock() {
        match s.iter_mut().find(|(k, _)| k == key) {
            Some((_, n)) => *n += 1,
            None => s.push((key.to_owned(), 1)),
        }
    }
}

/// Statements executed per mock URL with `log=1`, process-wide (see [`statements_sent`]).
static SENT: std::sync::Mutex<Vec<(String, Vec<SentStatement>)>> =
    std::sync::Mutex::new(Vec::new());

/// One execution the mock engine answered: the statement's text and the values bound to it.
#[derive(Debug, Clone, PartialEq)]
pub struct SentStatement {
    pub sql: String,
    pub params: Vec<Value>,
}

/// Every statement a mock URL opened with `log=1` has answered in this process, in the order
/// they were answered (over all its connections). Give each test a URL of its own.
pub fn statements_sent(target: &Target) -> Vec<SentStatement> {
    let Target::Mock { options } = target else {
        return Vec::new();
    };
    SENT.lock()
        .map(|s| {
            s.iter()
                .find(|(k, _)| k == options)
                .map_or_else(Vec::new, |(_, v)| v.clone())
        })
        .unwrap_or_default()
}

fn log_sent(key: &str, sql: &str, params: &[Value]) {
    if let Ok(mut s) = SENT.lock() {
        let sent = SentStatement {
            sql: sql.to_owned(),
            params: params.to_vec(),
        };
        match s.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => v.push(sent),
            None => s.push((key.to_owned(), vec![sent])),
        }
    }
}

pub(crate) struct MockConnection {
    key: String,
    options: MockOptions,
    policy: ErrorPolicy,
    statements: Vec<String>,
    executions: u64,
    /// Cuts a statement's latency short, as a server's KILL QUERY would.
    cancel: Arc<Notify>,
}

impl MockConnection {
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, DriverError> {
        let Target::Mock { options: raw } = target else {
            unreachable!("mock backend opened for a non-mock target")
        };
        let mock = MockOptions::parse(raw)?;
        if mock.refuse || is_dead(raw) {
            return Err(DriverError::fatal(
                ErrorKind::Unreachable,
                "mock: connection refused",
            ));
        }
        Ok(Self {
            key: raw.clone(),
            options: mock,
            policy: options.policy.clone(),
            statements: Vec::new(),
            executions: 0,
            cancel: Arc::new(Notify::new()),
        })
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.options.version
    }

    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::Mock(Arc::clone(&self.cancel)))
    }

    pub(crate) fn table_exists(&self, _table: &str) -> bool {
        !self.options.no_tables
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        self.statements.push(sql.to_owned());
        Ok(())
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let sql = self.statements[idx].clone();
        self.run(&sql, params).await
    }

    /// A statement's rows: one row per row the mock counts, each the value 1.
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        let sql = self.statements[idx].clone();
        let o = self.run(&sql, params).await?;
        Ok(Rows {
            columns: vec!["?column?".to_owned()],
            rows: (0..o.rows).map(|_| vec![Value::Int(1)]).collect(),
        })
    }

    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        self.run(sql, &[]).await
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        self.run(sql, params).await?;
        Ok(vec![vec![Value::Int(1)]])
    }

    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        _text: bool,
    ) -> Result<Rows, DriverError> {
        self.run(sql, params).await?;
        Ok(Rows {
            columns: vec!["?column?".to_owned()],
            rows: vec![vec![Value::Int(1)]],
        })
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        Ok(load.rows.count() as u64)
    }

    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        Ok(load.chunks.map(|c| count_rows(&c)).sum())
    }

    pub(crate) async fn close(self) {}

    async fn run(&mut self, sql: &str, params: &[Value]) -> Result<Outcome, DriverError> {
        self.executions += 1;
        let n = self.executions;
        let latency = if self.options.slow_every > 0 && n.is_multiple_of(self.options.slow_every) {
            self.options.slow
        } else {
            self.options.latency
        };
        if !latency.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(latency) => {}
                () = self.cancel.notified() => {
                    // MySQL's "Query execution was interrupted".
                    return Err(DriverError::new(
                        ErrorKind::Statement,
                        ErrorClass::Fatal,
                        Some("1317".into()),
                        "mock: query execution was interrupted",
                    ));
                }
            }
        }
        let o = &self.options;
        if o.die_after > 0
            && n >= o.die_after
            && let Ok(mut dead) = DEAD_SERVERS.lock()
            && !dead.contains(&self.key)
        {
            dead.push(self.key.clone());
        }
        if is_dead(&self.key) {
            return Err(DriverError::new(
                ErrorKind::ConnectionLost,
                ErrorClass::Reconnect,
                Some("2013".into()),
                "mock: lost connection (server died)",
            ));
        }
        if o.fatal_after > 0 && n >= o.fatal_after {
            return Err(DriverError::new(
                ErrorKind::Statement,
                ErrorClass::Fatal,
                Some("1064".into()),
                "mock: fatal error",
            ));
        }
        if o.lose_every > 0 && n.is_multiple_of(o.lose_every) {
            return Err(DriverError::new(
                ErrorKind::ConnectionLost,
                ErrorClass::Reconnect,
                Some("2013".into()),
                "mock: lost connection",
            ));
        }
        if o.fail_every > 0 && n.is_multiple_of(o.fail_every) {
            let class = self.policy.classify(&o.fail_code);
            return Err(DriverError::new(
                ErrorKind::Statement,
                class,
                Some(o.fail_code.clone()),
                format!("mock: error {}", o.fail_code),
            ));
        }
        count_served(&self.key);
        if o.log {
            log_sent(&self.key, sql, params);
        }
        let verb = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        Ok(match verb.as_str() {
            "SELECT" => Outcome {
                result_set: true,
                rows: 1,
            },
            "INSERT" | "UPDATE" | "DELETE" | "REPLACE" => Outcome {
                result_set: false,
                rows: 1,
            },
            _ => Outcome {
                result_set: false,
                rows: 0,
            },
        })
    }
}
