//! The one connection type the rest of dbrig uses.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use dbrig_core::results::Protocol;
use dbrig_core::{ErrorClass, StatementClass, Value};

use crate::bulk::{BulkLoad, BulkText};
use crate::cancel::{CancelHandle, GRACE, Raced, race};
use crate::error::{DriverError, ErrorKind, ErrorPolicy};
use crate::literal::inline_params;
use crate::sessions::SessionMark;
use crate::target::{Dialect, Target};
use crate::tls::TlsMode;
use crate::wire_socket::WireError;
use crate::{mock, mysql, mysql_wire, pg_wire, postgres, sqlite};

/// How to connect and how to treat errors.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub policy: ErrorPolicy,
    /// How statements are sent (pgbench's `-M`): `Prepared` uses server-side prepared
    /// statements (sysbench `--db-ps-mode=auto`); `Simple` inlines the values as literals and
    /// sends text (`--db-ps-mode=disable`); `Extended` (PostgreSQL only) sends each statement
    /// as an unnamed parse/bind/execute in one round trip.
    pub protocol: Protocol,
    /// The longest opening a connection may take, from the first packet to the first query's
    /// answer (a second attempt in the clear after a refused TLS `prefer` gets its own).
    pub connect_timeout: Duration,
    /// The longest any statement on the connection may wait for the server's reply, for dbrig's
    /// own questions (evidence, probes, checks, a client's set-up) whose statements are quick:
    /// a server that stops answering (stopped, hung, starved) then fails them with
    /// [`ErrorKind::NoReply`] instead of holding the run. `None` (the default): a statement
    /// takes as long as it takes — a workload's statements, whose end the runner bounds.
    /// The connection is given up once a reply is late (its protocol state is unknown): every
    /// later call returns the same error at once, until [`Connection::reconnect`].
    pub reply_timeout: Option<Duration>,
    /// A benchmark client's or loader's connection: use the lean wire clients, which cost a
    /// fraction of the full clients' CPU per statement. On MariaDB/MySQL `mysql_wire` (no
    /// `LOAD DATA`: its bulk loads use MariaDB's binary bulk command), on PostgreSQL
    /// `pg_wire`. Each falls back to its full client (mysql_async, tokio-postgres) when the
    /// server needs what it lacks.
    pub lean: bool,
    /// Set only by a caller whose thread runs this one connection and nothing else (the
    /// runner's one-client workers): the lean clients then make blocking socket calls
    /// instead of going through tokio's reactor (see `wire_socket`). Other clients ignore it.
    /// Query timeouts (`query_with_timeout`) cannot interrupt such a connection.
    pub own_thread: Option<OwnThread>,
    /// Where every connection opened with these options (and each reconnect) adds its set-up
    /// time: the executor hands one to a trial whose kind times no connections itself (micro,
    /// TPC-H, perfrun), so their reports show connect latency as OLTP's do.
    pub connect_times: Option<Arc<ConnectTimes>>,
}

/// Set-up times of the connections opened with one [`ConnectOptions`] (shared by clones).
#[derive(Debug, Default)]
pub struct ConnectTimes(std::sync::Mutex<(dbrig_core::LatencyHistogram, u64)>);

impl ConnectTimes {
    fn record(&self, conn: &Connection) {
        if let Ok(mut t) = self.0.lock() {
            t.0.record_us(conn.connect_time.as_micros() as u64);
            t.1 += u64::from(conn.tls_resumed());
        }
    }

    /// What was recorded: `None` when no connection was opened.
    pub fn latency(&self) -> Option<dbrig_core::results::ConnectLatency> {
        let t = self.0.lock().ok()?;
        (t.0.count() > 0).then(|| dbrig_core::results::ConnectLatency {
            connections: t.0.count(),
            failed: 0,
            resumed: t.1,
            latency_ms: dbrig_core::LatencySummary::from_histogram(&t.0),
        })
    }
}

/// See [`ConnectOptions::own_thread`].
#[derive(Debug, Clone)]
pub struct OwnThread {
    /// Raised by the owner to make a blocked statement give up (checked about 4 times a
    /// second), with a lost-connection error.
    pub abandon: Arc<AtomicBool>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            policy: ErrorPolicy::default(),
            protocol: Protocol::Prepared,
            connect_timeout: Duration::from_secs(10),
            reply_timeout: None,
            lean: false,
            own_thread: None,
            connect_times: None,
        }
    }
}

/// A query's result with its column names (pgbench's `\gset` stores by name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// A text query's first result as the server sent it: every cell its text (NULL: none),
/// nothing parsed into numbers and written back, in one buffer. What a sysbench Lua script's
/// result set hands the script (sysbench hands it the server's text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextRows {
    /// Cells per row.
    pub nfields: usize,
    /// Every cell, row after row: its bytes' range in `data`, or `None` for NULL.
    pub cells: Vec<Option<std::ops::Range<usize>>>,
    pub data: Vec<u8>,
}

impl TextRows {
    pub fn nrows(&self) -> usize {
        self.cells.len().checked_div(self.nfields).unwrap_or(0)
    }

    /// Empty, with its buffers kept for the next result.
    pub fn clear(&mut self) {
        self.nfields = 0;
        self.cells.clear();
        self.data.clear();
    }

    /// Row `row`'s cells, in column order.
    pub fn row(&self, row: usize) -> impl Iterator<Item = Option<&[u8]>> {
        let n = self.nfields;
        self.cells
            .get(row * n..(row + 1) * n)
            .unwrap_or_default()
            .iter()
            .map(|c| c.clone().map(|r| &self.data[r]))
    }

    /// Rows a backend decoded into values, as text (`Value::to_text`).
    pub fn from_rows(rows: Rows) -> Self {
        let nfields = rows
            .columns
            .len()
            .max(rows.rows.first().map_or(0, Vec::len));
        let mut out = TextRows {
            nfields,
            ..TextRows::default()
        };
        for row in rows.rows {
            for i in 0..nfields {
                let cell = row.get(i).and_then(Value::to_text).map(|t| {
                    let start = out.data.len();
                    out.data.extend_from_slice(t.as_bytes());
                    start..out.data.len()
                });
                out.cells.push(cell);
            }
        }
        out
    }
}

/// One statement of a pipeline ([`Connection::pipeline`]).
#[derive(Debug, Clone, PartialEq)]
pub enum PipelineItem {
    /// A statement prepared on this connection, with its bind values.
    Prepared(Statement, Vec<Value>),
    /// SQL through the unnamed statement, with its bind values.
    Sql(String, Vec<Value>),
    /// A Sync point (pgbench's `\syncpipeline`): the statements since the last one end their
    /// implicit transaction (or their failure) there.
    Sync,
}

/// A prepared statement of one connection (valid only on the connection that prepared it,
/// and again after [`Connection::reconnect`] re-prepared it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Statement(pub(crate) usize);

/// What a statement did: returned a result set of `rows` rows, or changed `rows` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub result_set: bool,
    pub rows: u64,
}

impl Outcome {
    pub fn class(&self) -> StatementClass {
        StatementClass::classify(self.result_set, self.rows)
    }
}

/// Each backend boxed: a `Connection` is moved in and out of its holders (a sysbench
/// script's connection is lent by the runner for every event), and an inline backend (the
/// lean client's buffers, TLS state) made every move a copy of kilobytes.
pub(crate) enum Backend {
    Mysql(Box<mysql::MysqlConnection>),
    MysqlWire(Box<mysql_wire::WireConnection>),
    Postgres(Box<postgres::PostgresConnection>),
    PostgresWire(Box<pg_wire::PgWireConnection>),
    Sqlite(Box<sqlite::SqliteConnection>),
    Mock(Box<mock::MockConnection>),
}

/// One statement call on the backend within the connection's reply limit (see
/// [`ConnectOptions::reply_timeout`]): `$work` is an `async` block that borrows the backend.
/// A connection given up earlier answers with that error at once.
macro_rules! bounded {
    ($self:ident, $work:expr) => {{
        match $self.gave_up.clone() {
            Some(e) => Err(e),
            None => {
                let r = match $self.options.reply_timeout {
                    None => $work.await,
                    Some(limit) => {
                        let timed = tokio::time::timeout(limit, $work).await;
                        timed.unwrap_or_else(|_| {
                            Err(DriverError::no_reply(
                                &$self.target.place(),
                                "no answer to a statement (a server that stopped answering, or a lock held elsewhere)",
                                limit,
                            ))
                        })
                    }
                };
                if let Err(e) = &r
                    && e.kind == ErrorKind::NoReply
                {
                    $self.gave_up = Some(e.clone());
                }
                r
            }
        }
    }};
}

/// Dispatch one call to whichever backend this is; every backend has the same inherent API.
macro_rules! dispatch {
    ($self:expr, $b:ident => $call:expr) => {
        match $self {
            Backend::Mysql($b) => $call,
            Backend::MysqlWire($b) => $call,
            Backend::Postgres($b) => $call,
            Backend::PostgresWire($b) => $call,
            Backend::Sqlite($b) => $call,
            Backend::Mock($b) => $call,
        }
    };
}

/// A typed bulk format (see [`Connection::typed_bulk_format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypedBulkFormat {
    /// PostgreSQL's `COPY … (FORMAT binary)`: write [`crate::PgBinaryChunk`]s.
    PgBinary,
    /// MariaDB's `COM_STMT_BULK_EXECUTE`: write [`crate::MariaDbBulkChunk`]s.
    MariaDbBulk,
}

/// One open connection to a target.
pub struct Connection {
    backend: Backend,
    target: Target,
    options: ConnectOptions,
    /// SQL of each prepared statement, by `Statement` index: for error messages, for
    /// re-preparing after a reconnect, and for text mode.
    statements: Vec<String>,
    server_version: String,
    /// This connection's session in [`crate::own_sessions`] while it is open.
    _session: SessionMark,
    /// How long the last connection (first or re-opened) took to set up, and how many were
    /// opened: the runner reports connect latency apart from statement latency.
    connect_time: Duration,
    connects: u64,
    /// Why this connection was given up (a reply later than `options.reply_timeout`).
    gave_up: Option<DriverError>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("target", &self.target.to_string())
            .finish()
    }
}

impl Connection {
    pub async fn connect(target: &Target, options: &ConnectOptions) -> Result<Self, DriverError> {
        if options.protocol == Protocol::Extended && target.dialect() != Dialect::Postgres {
            return Err(DriverError::fatal(
                ErrorKind::Unsupported,
                format!(
                    "--protocol extended is PostgreSQL's (unnamed statements); on {} use prepared or simple (--ps-mode auto|disable)",
                    target.dialect().name()
                ),
            ));
        }
        let began = std::time::Instant::now();
        let backend = open_backend(target, options)
            .await
            .map_err(|e| open_files_or(e, target))?;
        let connect_time = began.elapsed();
        let server_version = dispatch!(&backend, b => b.server_version().to_owned());
        let conn = Self {
            _session: SessionMark::new(target, session_id(&backend)),
            backend,
            target: target.clone(),
            options: options.clone(),
            statements: Vec::new(),
            server_version,
            connect_time,
            connects: 1,
            gave_up: None,
        };
        if let Some(t) = &options.connect_times {
            t.record(&conn);
        }
        Ok(conn)
    }

    /// Drop the broken connection, open a new one and re-prepare every statement, so the
    /// caller's `Statement` handles stay valid.
    pub async fn reconnect(&mut self) -> Result<(), DriverError> {
        let began = std::time::Instant::now();
        let mut backend = open_backend(&self.target, &self.options)
            .await
            .map_err(|e| open_files_or(e, &self.target))?;
        self.connect_time = began.elapsed();
        self.connects += 1;
        if self.options.protocol == Protocol::Prepared {
            for sql in &self.statements {
                dispatch!(&mut backend, b => b.prepare(sql).await)
                    .map_err(|e| e.with_statement(sql))?;
            }
        }
        self.server_version = dispatch!(&backend, b => b.server_version().to_owned());
        self._session = SessionMark::new(&self.target, session_id(&backend));
        let old = std::mem::replace(&mut self.backend, backend);
        // A connection given up mid-reply gets no goodbye: its server is not answering.
        if self.gave_up.take().is_none() {
            dispatch!(old, b => b.close().await);
        }
        if let Some(t) = self.options.connect_times.clone() {
            t.record(self);
        }
        Ok(())
    }

    pub fn dialect(&self) -> Dialect {
        self.target.dialect()
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// How long the last set-up of this connection took (TCP or socket, TLS, authentication,
    /// the backend's first round trip), without re-preparing statements.
    pub fn connect_time(&self) -> Duration {
        self.connect_time
    }

    /// Connections opened so far (1, plus one per reconnect).
    pub fn connects(&self) -> u64 {
        self.connects
    }

    /// How this connection sends statements.
    pub fn protocol(&self) -> Protocol {
        self.options.protocol
    }

    /// TLS and authentication of this connection as negotiated; `None` where that cannot be
    /// told: SQLite and the mock, and the full MySQL client (mysql_async reports neither its
    /// TLS session nor its plugin; benchmark clients use the lean one, which does).
    pub fn security(&self) -> Option<dbrig_core::results::ConnectionSecurity> {
        let mut security = match &self.backend {
            Backend::MysqlWire(c) => c.security(),
            Backend::Postgres(c) => c.security(),
            Backend::PostgresWire(c) => c.security(),
            Backend::Mysql(_) | Backend::Sqlite(_) | Backend::Mock(_) => return None,
        };
        // The mode asked for, also where `prefer` ended in the clear (see `open_postgres`).
        if let Some(tls) = self.target.tls() {
            security.tls_mode = tls.mode.name().to_owned();
        }
        Some(security)
    }

    /// This connection's TLS handshake resumed an earlier session (see
    /// [`crate::tls::TlsOptions`]'s shared client configuration) instead of a full one.
    pub fn tls_resumed(&self) -> bool {
        self.security()
            .and_then(|s| s.tls)
            .is_some_and(|t| t.resumed)
    }

    /// The server's version string (SQLite's library version for SQLite).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Prepare a statement (placeholders: `?` for MySQL/SQLite, `$1…` for PostgreSQL).
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement, DriverError> {
        if self.options.protocol == Protocol::Prepared {
            bounded!(self, async {
                dispatch!(&mut self.backend, b => b.prepare(sql).await)
            })
            .map_err(|e| e.with_statement(sql))?;
        }
        self.statements.push(sql.to_owned());
        Ok(Statement(self.statements.len() - 1))
    }

    /// Execute a prepared statement with bind values; result rows are read and counted.
    pub async fn execute(
        &mut self,
        stmt: Statement,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let result = bounded!(self, async {
            match (self.options.protocol, &mut self.backend) {
                (Protocol::Prepared, backend) => {
                    dispatch!(backend, b => b.execute(stmt.0, params).await)
                }
                (Protocol::Extended, Backend::Postgres(b)) => {
                    b.execute_unnamed(&self.statements[stmt.0], params).await
                }
                (Protocol::Extended, Backend::PostgresWire(b)) => {
                    b.execute_unnamed(&self.statements[stmt.0], params).await
                }
                (_, backend) => {
                    let sql =
                        inline_params(self.target.dialect(), &self.statements[stmt.0], params);
                    dispatch!(backend, b => b.execute_text(&sql).await)
                }
            }
        });
        result.map_err(|e| e.with_statement(&self.statements[stmt.0]))
    }

    /// Execute a prepared statement with bind values and return its rows, sent as
    /// [`Connection::execute`] sends it (for a caller that reads the rows: a sysbench
    /// script's `fetch_row()` on a prepared statement's result).
    pub async fn execute_rows(
        &mut self,
        stmt: Statement,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        let result = bounded!(self, async {
            match (self.options.protocol, &mut self.backend) {
                (Protocol::Prepared, backend) => {
                    dispatch!(backend, b => b.execute_rows(stmt.0, params).await)
                }
                (Protocol::Extended, backend) => {
                    let sql = &self.statements[stmt.0];
                    dispatch!(backend, b => b.query_rows(sql, params, false).await)
                }
                (_, backend) => {
                    let sql =
                        inline_params(self.target.dialect(), &self.statements[stmt.0], params);
                    dispatch!(backend, b => b.query_rows(&sql, &[], true).await)
                }
            }
        });
        result.map_err(|e| e.with_statement(&self.statements[stmt.0]))
    }

    /// Execute SQL text without parameters (BEGIN, COMMIT, DDL…).
    pub async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        bounded!(self, async {
            dispatch!(&mut self.backend, b => b.execute_text(sql).await)
        })
        .map_err(|e| e.with_statement(sql))
    }

    /// Execute `sql` as text with `params` written into it as literals, the way sysbench sends
    /// `oltp_insert` (the server parses the statement every time; PostgreSQL gets a simple
    /// query). Only for values dbrig generated itself.
    pub async fn execute_literal(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let text = inline_params(self.dialect(), sql, params);
        self.execute_text(&text).await
    }

    /// Run a query with bind values and return all its rows (for small results: metadata,
    /// counters, answers).
    pub async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        bounded!(self, async {
            dispatch!(&mut self.backend, b => b.query(sql, params).await)
        })
        .map_err(|e| e.with_statement(sql))
    }

    /// Run a query and return its rows with the column names: as text (the simple query
    /// protocol; PostgreSQL returns every value as text then) when `text`, otherwise through an
    /// unnamed prepare with `params` bound. Only the first result set's rows are kept.
    pub async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        text: bool,
    ) -> Result<Rows, DriverError> {
        bounded!(self, async {
            dispatch!(&mut self.backend, b => b.query_rows(sql, params, text).await)
        })
        .map_err(|e| e.with_statement(sql))
    }

    /// Run `sql` as a text query and return its first result set's cells as the server sent
    /// them ([`TextRows`]); the lean MariaDB/MySQL and PostgreSQL clients copy them straight
    /// from their packets, the other backends' values are written as text.
    pub async fn query_text(&mut self, sql: &str) -> Result<TextRows, DriverError> {
        let mut out = TextRows::default();
        self.query_text_into(sql, &mut out).await?;
        Ok(out)
    }

    /// [`Connection::query_text`] into `out` (emptied first): a caller that runs one query
    /// after another reuses its buffers (a sysbench script's `con:query()` on a client of its
    /// own thread: see dbrig-workload's `lua/fast.rs`).
    pub async fn query_text_into(
        &mut self,
        sql: &str,
        out: &mut TextRows,
    ) -> Result<(), DriverError> {
        bounded!(self, async {
            match &mut self.backend {
                Backend::MysqlWire(b) => b.query_text_into(sql, out).await,
                Backend::PostgresWire(b) => b.query_text_into(sql, out).await,
                other => dispatch!(other, b => b.query_rows(sql, &[], true).await)
                    .map(|rows| *out = TextRows::from_rows(rows)),
            }
        })
        .map_err(|e| e.with_statement(sql))
    }

    /// Run `sql` as one simple-protocol query (several statements allowed, pgbench's `\;`
    /// compound command on PostgreSQL) and return every statement's outcome with its rows as
    /// text (no columns and no rows for a statement without a result set). Engines without
    /// multi-result text queries return the one result of [`Connection::query_rows`].
    pub async fn query_results_text(
        &mut self,
        sql: &str,
    ) -> Result<Vec<(Outcome, Rows)>, DriverError> {
        let results = bounded!(self, async {
            match &mut self.backend {
                Backend::Postgres(b) => b.query_results_text(sql).await,
                Backend::PostgresWire(b) => b.query_results_text(sql).await,
                other => dispatch!(other, b => b.query_rows(sql, &[], true).await).map(|r| {
                    vec![(
                        Outcome {
                            result_set: true,
                            rows: r.rows.len() as u64,
                        },
                        r,
                    )]
                }),
            }
        });
        results.map_err(|e| e.with_statement(sql))
    }

    /// Execute `sql` with bind values through the unnamed statement: parse, bind and execute
    /// in one round trip on PostgreSQL (pgbench's `-M extended`); elsewhere as
    /// [`Connection::query_rows`] (its rows counted as a result set). Result rows are read
    /// and counted.
    pub async fn execute_params(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let outcome = bounded!(self, async {
            match &mut self.backend {
                Backend::Postgres(b) => b.execute_unnamed(sql, params).await,
                Backend::PostgresWire(b) => b.execute_unnamed(sql, params).await,
                other => {
                    dispatch!(other, b => b.query_rows(sql, params, false).await).map(|r| Outcome {
                        result_set: true,
                        rows: r.rows.len() as u64,
                    })
                }
            }
        });
        outcome.map_err(|e| e.with_statement(sql))
    }

    /// Whether [`Connection::pipeline`] pipelines on this engine (PostgreSQL only).
    pub fn can_pipeline(&self) -> bool {
        matches!(
            self.backend,
            Backend::Postgres(_) | Backend::PostgresWire(_)
        )
    }

    /// Send every statement of `items` before reading any reply, then read them all
    /// (PostgreSQL's pipeline mode, pgbench's `\startpipeline` … `\endpipeline`): one
    /// outcome per statement, or the first statement's error. Other engines refuse.
    ///
    /// The lean client sends a Sync where `items` has one and after the last statement, as
    /// pgbench does (the statements between share an implicit transaction, and an error
    /// skips the rest of them). tokio-postgres ends every statement with its own Sync (it
    /// sends no other way), so there the [`PipelineItem::Sync`] points are dropped.
    pub async fn pipeline(&mut self, items: &[PipelineItem]) -> Result<Vec<Outcome>, DriverError> {
        let prepared = self.options.protocol == Protocol::Prepared;
        let items: Vec<PipelineItem> = items
            .iter()
            .map(|i| match i {
                // Statements not prepared on the server (text mode): send their SQL.
                PipelineItem::Prepared(stmt, params) if !prepared => {
                    PipelineItem::Sql(self.statements[stmt.0].clone(), params.clone())
                }
                other => other.clone(),
            })
            .collect();
        if !self.can_pipeline() {
            return Err(DriverError::fatal(
                ErrorKind::Statement,
                format!(
                    "pipeline mode is supported on PostgreSQL only, not on {}",
                    self.target.dialect().name()
                ),
            ));
        }
        let replies = bounded!(self, async {
            Ok(match &mut self.backend {
                Backend::Postgres(b) => {
                    let statements: Vec<PipelineItem> = items
                        .iter()
                        .filter(|i| !matches!(i, PipelineItem::Sync))
                        .cloned()
                        .collect();
                    b.pipeline(&statements).await
                }
                Backend::PostgresWire(b) => b.pipeline(&items).await,
                _ => Vec::new(),
            })
        })?;
        let statements = items.iter().filter(|i| !matches!(i, PipelineItem::Sync));
        let mut outcomes = Vec::with_capacity(replies.len());
        for (reply, item) in replies.into_iter().zip(statements) {
            match reply {
                Ok(o) => outcomes.push(o),
                Err(e) => {
                    let sql = match item {
                        PipelineItem::Prepared(stmt, _) => &self.statements[stmt.0],
                        PipelineItem::Sql(sql, _) => sql,
                        PipelineItem::Sync => "",
                    };
                    return Err(e.with_statement(sql));
                }
            }
        }
        Ok(outcomes)
    }

    /// A handle that stops this connection's running statement on the server, usable from
    /// another task or thread (invalid after a reconnect: take a new one).
    pub fn cancel_handle(&self) -> CancelHandle {
        dispatch!(&self.backend, b => b.cancel_handle())
    }

    /// [`Connection::query`] with a timeout that stops the query **on the server**.
    ///
    /// When `timeout` passes before the query ends, the query is cancelled by the engine's own
    /// mechanism — MariaDB/MySQL `KILL QUERY <this connection's id>` from a second connection,
    /// PostgreSQL's cancel request, SQLite's interrupt — so it stops using the server's
    /// resources, and this connection reads the killed query's reply to stay in step. The
    /// result is then an error of kind [`ErrorKind::Timeout`] (see
    /// [`DriverError::is_timeout`]), distinct from the query failing, and the connection stays
    /// usable for the next statement. A query that finishes while the cancel is under way still
    /// counts as timed out (it ran past the limit). Should the server ignore the cancel for
    /// [`crate::cancel::GRACE`] (10 s), the connection is dropped and reopened (re-preparing
    /// its statements) before the timeout is returned.
    pub async fn query_with_timeout(
        &mut self,
        sql: &str,
        params: &[Value],
        timeout: Duration,
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        if let Some(e) = &self.gave_up {
            return Err(e.clone());
        }
        let handle = self.cancel_handle();
        let raced = race(
            async { dispatch!(&mut self.backend, b => b.query(sql, params).await) },
            &handle,
            timeout,
        )
        .await;
        self.settle(raced, timeout)
            .await
            .map_err(|e| e.with_statement(sql))
    }

    /// [`Connection::execute_text`] with a timeout that stops the statement on the server;
    /// the same contract as [`Connection::query_with_timeout`].
    pub async fn execute_text_with_timeout(
        &mut self,
        sql: &str,
        timeout: Duration,
    ) -> Result<Outcome, DriverError> {
        if let Some(e) = &self.gave_up {
            return Err(e.clone());
        }
        let handle = self.cancel_handle();
        let raced = race(
            async { dispatch!(&mut self.backend, b => b.execute_text(sql).await) },
            &handle,
            timeout,
        )
        .await;
        self.settle(raced, timeout)
            .await
            .map_err(|e| e.with_statement(sql))
    }

    /// Turn a raced statement into its result, leaving the connection ready for the next one.
    async fn settle<T>(&mut self, raced: Raced<T>, timeout: Duration) -> Result<T, DriverError> {
        let message = format!(
            "timed out after {:.3} s: the statement was cancelled on the server",
            timeout.as_secs_f64()
        );
        match raced {
            Raced::Done(r) => r,
            Raced::TimedOut { finished_ok } => {
                if finished_ok {
                    // The statement ended just as the cancel went out; a cancel that reached
                    // the server after it would otherwise hit whatever runs next, so a cheap
                    // statement absorbs it.
                    let _ = dispatch!(&mut self.backend, b => b.execute_text("SELECT 1").await);
                }
                Err(DriverError::new(
                    ErrorKind::Timeout,
                    ErrorClass::Fatal,
                    None,
                    message,
                ))
            }
            Raced::Stuck(cancel_error) => {
                self.reconnect().await?;
                let why = cancel_error.map(|e| format!(" ({e})")).unwrap_or_default();
                Err(DriverError::new(
                    ErrorKind::Timeout,
                    ErrorClass::Fatal,
                    None,
                    format!(
                        "{message}, which did not stop it within {} s{why}; the connection was reopened",
                        GRACE.as_secs()
                    ),
                ))
            }
        }
    }

    /// Append rows to a table through the engine's bulk path; returns rows loaded.
    ///
    /// On MariaDB/MySQL the path follows the connection: a lean one (`ConnectOptions::lean`)
    /// sends MariaDB's binary `COM_STMT_BULK_EXECUTE`, the full client `LOAD DATA LOCAL`. A
    /// lean connection to a server without the bulk command (MySQL) is first reopened with the
    /// full client (its statements prepared again; session settings are not carried, so open
    /// a loader's connection for the load).
    pub async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        self.switch_to_bulk_path().await?;
        bounded!(self, async {
            dispatch!(&mut self.backend, b => b.bulk_load(load).await)
        })
    }

    /// [`Connection::bulk_load`] of rows already encoded as bulk text (see
    /// [`crate::encode_bulk_row`]): MySQL's `LOAD DATA` and PostgreSQL send the bytes as they
    /// are; MariaDB's bulk command unescapes them into string parameters.
    pub async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        self.switch_to_bulk_path().await?;
        bounded!(self, async {
            dispatch!(&mut self.backend, b => b.bulk_load_text(load).await)
        })
    }

    /// The typed bulk format this connection loads fastest, for a producer that writes its
    /// rows through [`crate::FieldWriter`]: PostgreSQL's binary `COPY`, or MariaDB's bulk
    /// command on a lean connection to a server that has it; `None` elsewhere (MySQL's `LOAD
    /// DATA` and the full client take bulk text, SQLite and the mock values).
    pub fn typed_bulk_format(&self) -> Option<TypedBulkFormat> {
        match &self.backend {
            Backend::Postgres(_) | Backend::PostgresWire(_) => Some(TypedBulkFormat::PgBinary),
            Backend::MysqlWire(w) if w.bulk_operations() => Some(TypedBulkFormat::MariaDbBulk),
            _ => None,
        }
    }

    /// MariaDB's `COM_STMT_BULK_EXECUTE` of rows the caller wrote ([`crate::MariaDbBulkRows`]),
    /// one command per chunk; a server that refuses the command gets the rows as prepared
    /// multi-row INSERTs. Only where [`Connection::typed_bulk_format`] says `MariaDbBulk`
    /// (`Unsupported` elsewhere).
    pub async fn bulk_load_mariadb(
        &mut self,
        load: crate::MariaDbBulkRows,
    ) -> Result<u64, DriverError> {
        match &mut self.backend {
            Backend::MysqlWire(w) if w.bulk_operations() => w.bulk_load_typed(load).await,
            _ => Err(DriverError::fatal(
                ErrorKind::Unsupported,
                format!(
                    "MariaDB's bulk command is not this connection's ({}): load bulk text",
                    self.dialect().name()
                ),
            )),
        }
    }

    /// PostgreSQL's binary `COPY` of tuples the caller encoded ([`crate::PgBinaryRows`]);
    /// other engines have no such format (`Unsupported`: a caller checks the dialect first).
    pub async fn bulk_load_pg_binary(
        &mut self,
        load: crate::PgBinaryRows,
    ) -> Result<u64, DriverError> {
        match &mut self.backend {
            Backend::Postgres(b) => b.bulk_load_binary(load).await,
            Backend::PostgresWire(b) => b.bulk_load_binary(load).await,
            _ => Err(DriverError::fatal(
                ErrorKind::Unsupported,
                format!(
                    "binary COPY is PostgreSQL's; {} loads bulk text",
                    self.dialect().name()
                ),
            )),
        }
    }

    /// Whether a statement on this connection finishes within its first poll: the lean
    /// MariaDB/MySQL client on a socket in blocking mode (a client that owns its thread,
    /// [`ConnectOptions::own_thread`]) never waits for a wake-up, so a caller may run it
    /// without a task or a boxed future around it.
    pub fn completes_in_call(&self) -> bool {
        match &self.backend {
            Backend::MysqlWire(w) => w.is_blocking(),
            Backend::PostgresWire(w) => w.is_blocking(),
            _ => false,
        }
    }

    /// Which bulk path a MariaDB/MySQL connection takes ("binary bulk" or "LOAD DATA"); `None`
    /// for other engines. For the load's own report.
    pub fn mysql_bulk_path(&self) -> Option<&'static str> {
        match &self.backend {
            Backend::MysqlWire(w) if w.bulk_operations() => Some("COM_STMT_BULK_EXECUTE"),
            Backend::MysqlWire(_) | Backend::Mysql(_) => Some("LOAD DATA LOCAL"),
            _ => None,
        }
    }

    /// A lean MySQL connection whose server lacks the bulk command becomes a full one.
    async fn switch_to_bulk_path(&mut self) -> Result<(), DriverError> {
        if matches!(&self.backend, Backend::MysqlWire(w) if !w.bulk_operations()) {
            self.options.lean = false;
            self.options.own_thread = None;
            self.reconnect().await?;
        }
        Ok(())
    }

    /// Whether a table exists in the connection's database (decided from the catalog, not
    /// from an error message).
    pub async fn table_exists(&mut self, table: &str) -> Result<bool, DriverError> {
        let sql = match self.dialect() {
            Dialect::Mysql => {
                "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
            }
            Dialect::Postgres => {
                "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = $1"
            }
            Dialect::Sqlite => "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
        };
        if let Backend::Mock(m) = &self.backend {
            return Ok(m.table_exists(table));
        }
        Ok(!self
            .query(sql, &[Value::Text(table.to_owned())])
            .await?
            .is_empty())
    }

    /// Say goodbye and close (a connection given up closes without a word: its server is
    /// not answering).
    pub async fn close(self) {
        if self.gave_up.is_none() {
            dispatch!(self.backend, b => b.close().await)
        }
    }

    /// Change the reply limit of this connection's statements (see
    /// [`ConnectOptions::reply_timeout`]): the runner bounds a client's set-up, then lets its
    /// workload's statements take as long as they take.
    pub fn set_reply_timeout(&mut self, limit: Option<Duration>) {
        self.options.reply_timeout = limit;
    }

    /// From now on this connection (and each reconnect) makes blocking socket calls on the
    /// caller's thread, which must run nothing else (see [`ConnectOptions::own_thread`]); a
    /// connection that cannot (not a lean client) stays as it is.
    pub fn take_own_thread(&mut self, own: OwnThread) -> Result<(), DriverError> {
        let place = self.target.place();
        let made = match &mut self.backend {
            Backend::MysqlWire(w) => w.make_blocking(&own),
            Backend::PostgresWire(w) => w.make_blocking(&own),
            _ => Ok(()),
        };
        self.options.own_thread = Some(own);
        made.map_err(|e| {
            DriverError::fatal(
                ErrorKind::ConnectionLost,
                format!("{place}: cannot switch the socket to blocking calls: {e}"),
            )
        })
    }
}

/// The server's id of a backend's session: MariaDB/MySQL's connection id, PostgreSQL's
/// backend pid.
fn session_id(backend: &Backend) -> Option<i64> {
    match backend {
        Backend::Mysql(b) => Some(i64::from(b.connection_id())),
        Backend::MysqlWire(b) => Some(i64::from(b.connection_id())),
        Backend::Postgres(b) => Some(i64::from(b.backend_pid())),
        Backend::PostgresWire(b) => Some(i64::from(b.backend_pid())),
        Backend::Sqlite(_) | Backend::Mock(_) => None,
    }
}

async fn open_backend(target: &Target, options: &ConnectOptions) -> Result<Backend, DriverError> {
    Ok(match target {
        Target::Mysql { .. } if options.lean => {
            match mysql_wire::WireConnection::connect(target, options).await {
                Ok(c) => Backend::MysqlWire(Box::new(c)),
                Err(WireError::Driver(e)) => return Err(e),
                // Whatever the lean client leaves out (an authentication plugin, TLS), the
                // full client does.
                Err(WireError::Unsupported) => Backend::Mysql(Box::new(
                    mysql::MysqlConnection::connect(target, options).await?,
                )),
            }
        }
        Target::Mysql { .. } => Backend::Mysql(Box::new(
            mysql::MysqlConnection::connect(target, options).await?,
        )),
        Target::Postgres {
            tls,
            endpoint: crate::target::Endpoint::Tcp { .. },
            ..
        } if tls.mode == TlsMode::Prefer => match open_postgres(target, options).await {
            // libpq's `prefer`: a connection that fails once TLS is tried — a handshake
            // rustls refuses, or the server's rules refusing the encrypted session
            // (`hostnossl`) — is tried once more without TLS. Not when nothing answered.
            Err(e) if !matches!(e.kind, ErrorKind::Unreachable | ErrorKind::NoReply) => {
                let mut clear = target.clone();
                if let Target::Postgres { tls, .. } = &mut clear {
                    tls.mode = TlsMode::Disable;
                }
                open_postgres(&clear, options)
                    .await
                    .map_err(|again| e.tried_again_without_tls(again))?
            }
            opened => opened?,
        },
        Target::Postgres { .. } => open_postgres(target, options).await?,
        Target::Sqlite { .. } => Backend::Sqlite(Box::new(
            sqlite::SqliteConnection::connect(target, options).await?,
        )),
        Target::Mock { .. } => Backend::Mock(Box::new(
            mock::MockConnection::connect(target, options).await?,
        )),
    })
}

/// A PostgreSQL connection as the target says: the lean client for benchmark clients and
/// loaders, tokio-postgres for the rest and for what the lean client leaves out.
async fn open_postgres(target: &Target, options: &ConnectOptions) -> Result<Backend, DriverError> {
    Ok(if options.lean {
        match pg_wire::PgWireConnection::connect(target, options).await {
            Ok(c) => Backend::PostgresWire(Box::new(c)),
            Err(WireError::Driver(e)) => return Err(e),
            // An authentication the lean client leaves out (GSS, SSPI, another SASL
            // mechanism): tokio-postgres.
            Err(WireError::Unsupported) => Backend::Postgres(Box::new(
                postgres::PostgresConnection::connect(target, options).await?,
            )),
        }
    } else {
        Backend::Postgres(Box::new(
            postgres::PostgresConnection::connect(target, options).await?,
        ))
    })
}

/// A failed connect is [`ErrorKind::OpenFiles`] when this process is out of open files (each
/// engine's own message — "unable to open database file", "Too many open files" — says less).
fn open_files_or(e: DriverError, target: &Target) -> DriverError {
    if e.kind != ErrorKind::OpenFiles && crate::error::out_of_open_files() {
        DriverError::out_of_open_files(&target.to_string())
    } else {
        e
    }
}
