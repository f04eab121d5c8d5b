//! The PostgreSQL backend (tokio-postgres; TLS through rustls, `tls.rs`, with SCRAM channel
//! binding when the connection is encrypted; md5 and scram-sha-256 are tokio-postgres's).
//!
//! Only a statement the caller prepares (`Connection::prepare`, in the prepared protocol) is
//! named here. The extended protocol and every query — metadata, the registry's, probes, in
//! any protocol — send an unnamed parse/bind/describe/execute/sync in one round trip
//! (tokio-postgres' `query_typed`), with the values as text for the server to read in the
//! types it infers (what libpq's `PQexecParams` sends for pgbench's `-M extended`). A pooler in
//! transaction mode (PgBouncer) cannot keep a named statement across transactions and hands
//! one server session to many clients, so a statement tokio-postgres named (`s0`, `s1`, …: the
//! same names in every process) failed there — "does not exist" when the next transaction went
//! to another server session, "already exists" when another process had used the name — and
//! could even bind another process's statement of the same name. The statements that are
//! named are closed before the connection ends, so none is left in a pooled session.

use std::error::Error as StdError;
use std::fmt::Write as _;

use bytes::{BufMut, Bytes, BytesMut};
use dbrig_core::{ErrorClass, Value};
use futures_util::{SinkExt, TryStreamExt};
use tokio_postgres::types::{FromSql, IsNull, Kind, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Config, NoTls, SimpleQueryMessage};

use crate::bulk::{BulkLoad, BulkText, PG_BINARY_HEADER, PG_BINARY_TRAILER, PgBinaryRows};
use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, Rows};
use crate::error::{DriverError, ErrorKind, ErrorPolicy, one_line};
use crate::target::{Endpoint, Target};

type BoxError = Box<dyn StdError + Sync + Send>;

/// A prepared statement, and whether the server's command tag counts its result rows.
struct Prepared {
    statement: tokio_postgres::Statement,
    /// `SELECT n`, `INSERT 0 n`, `UPDATE n`, `DELETE n`, `FETCH n`: rows counted by the tag are
    /// skipped unread (tokio-postgres's `execute` drops each DataRow where `query_raw` builds a
    /// `Row` of it, measured at ~8 % of the client's user time in range selects of 100 rows).
    /// Not `SHOW`, `EXPLAIN` and other statements whose tag has no count.
    tag_counts_rows: bool,
}

pub(crate) struct PostgresConnection {
    client: Client,
    statements: Vec<Prepared>,
    policy: ErrorPolicy,
    version: String,
    /// The server process serving this session (`pg_backend_pid()`).
    backend_pid: u32,
    security: dbrig_core::results::ConnectionSecurity,
    /// The TLS the connection was opened with: its cancel requests go the same way.
    cancel_tls: Option<crate::tls::PgTls>,
}

impl PostgresConnection {
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, DriverError> {
        let Target::Postgres {
            user,
            password,
            endpoint,
            database,
            tls,
        } = target
        else {
            unreachable!("postgres backend opened for a non-postgres target")
        };
        let mut config = Config::new();
        config.user(user).dbname(database).application_name("dbrig");
        if let Some(p) = password {
            config.password(p.expose());
        }
        let place = endpoint.place();
        match endpoint {
            Endpoint::Tcp { host, port } => {
                config.host(host).port(*port);
            }
            Endpoint::Socket(path) => {
                let (dir, port) = crate::target::pg_socket_dir_and_port(path);
                config.host_path(dir);
                if let Some(port) = port {
                    config.port(port);
                }
            }
        }
        let host = crate::tls::checked_host(endpoint);
        let mut security = dbrig_core::results::ConnectionSecurity {
            tls_mode: tls.mode.name().to_owned(),
            ..Default::default()
        };
        let session = std::sync::Arc::new(std::sync::Mutex::new(None));
        // TLS over TCP only: libpq never encrypts a Unix socket either.
        let tls_connector = match (tls.enabled(), endpoint) {
            (true, Endpoint::Tcp { .. }) => {
                config.ssl_mode(match tls.mode {
                    crate::tls::TlsMode::Prefer => tokio_postgres::config::SslMode::Prefer,
                    _ => tokio_postgres::config::SslMode::Require,
                });
                // Channel binding (scram-sha-256-plus) when the server offers it, or as asked.
                config.channel_binding(match tls.channel_binding {
                    None => tokio_postgres::config::ChannelBinding::Prefer,
                    Some(true) => tokio_postgres::config::ChannelBinding::Require,
                    Some(false) => tokio_postgres::config::ChannelBinding::Disable,
                });
                if tls.channel_binding == Some(true) {
                    // Connecting at all then proves it.
                    security.auth = Some("scram-sha-256-plus".to_owned());
                }
                Some(crate::tls::PgTls {
                    config: tls.client_config(host)?,
                    host: host.to_owned(),
                    verification: tls.verification(),
                    session: std::sync::Arc::clone(&session),
                })
            }
            _ => None,
        };
        let cancel_tls = tls_connector.clone();
        // One connect timeout for the whole opening, the first query included.
        let deadline = tokio::time::Instant::now() + options.connect_timeout;
        let connected = tokio::time::timeout_at(deadline, async {
            match tls_connector {
                Some(t) => config
                    .connect(t)
                    .await
                    .map(|(c, conn)| (c, tokio::spawn(conn))),
                None => config
                    .connect(NoTls)
                    .await
                    .map(|(c, conn)| (c, tokio::spawn(conn))),
            }
        })
        .await;
        let (client, _connection) = match connected {
            Err(_) => {
                return Err(DriverError::unreachable(
                    &place,
                    format_args!(
                        "no PostgreSQL handshake within {:?}",
                        options.connect_timeout
                    ),
                ));
            }
            Ok(Err(e)) => return Err(connect_error(e, &place, &options.policy, tls)),
            // The connection future (spawned above) does the socket I/O for the client; its
            // end (error or not) shows up as a closed-connection error on the next call.
            Ok(Ok(pair)) => pair,
        };
        security.tls = session.lock().ok().and_then(|s| s.clone());
        let mut version = String::new();
        let mut backend_pid = 0;
        let messages = tokio::time::timeout_at(
            deadline,
            client.simple_query("SELECT current_setting('server_version'), pg_backend_pid()"),
        )
        .await
        .map_err(|_| {
            DriverError::no_reply(
                &place,
                "no answer to the first query (the server took the connection but does not answer: stopped, hung or starved)",
                options.connect_timeout,
            )
        })?
        .map_err(|e| map_error(e, &options.policy))?;
        for m in messages {
            if let SimpleQueryMessage::Row(row) = m {
                version = row.get(0).unwrap_or_default().to_owned();
                backend_pid = row.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
            }
        }
        Ok(Self {
            client,
            statements: Vec::new(),
            policy: options.policy.clone(),
            version,
            backend_pid,
            security,
            cancel_tls,
        })
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn backend_pid(&self) -> u32 {
        self.backend_pid
    }

    pub(crate) fn security(&self) -> dbrig_core::results::ConnectionSecurity {
        self.security.clone()
    }

    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::Postgres(
            self.client.cancel_token(),
            self.cancel_tls.clone(),
        ))
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        let stmt = self
            .client
            .prepare(sql)
            .await
            .map_err(|e| map_error(e, &self.policy))?;
        self.statements.push(Prepared {
            statement: stmt,
            tag_counts_rows: tag_counts_rows(sql),
        });
        Ok(())
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let Prepared {
            statement: stmt,
            tag_counts_rows,
        } = &self.statements[idx];
        let params = params.iter().map(PgParam);
        let result_set = !stmt.columns().is_empty();
        let outcome = if !result_set || *tag_counts_rows {
            self.client
                .execute_raw(stmt, params)
                .await
                .map(|rows| Outcome { result_set, rows })
        } else {
            match self.client.query_raw(stmt, params).await {
                Ok(stream) => {
                    let mut stream = std::pin::pin!(stream);
                    let mut rows = 0u64;
                    loop {
                        match stream.try_next().await {
                            Ok(Some(_)) => rows += 1,
                            Ok(None) => {
                                break Ok(Outcome {
                                    result_set: true,
                                    rows,
                                });
                            }
                            Err(e) => break Err(e),
                        }
                    }
                }
                Err(e) => Err(e),
            }
        };
        outcome.map_err(|e| map_error(e, &self.policy))
    }

    /// One statement as an unnamed parse/bind/execute in one round trip (`--protocol
    /// extended`): a result set's rows are read and counted, otherwise the rows changed.
    /// A prepared statement's rows, decoded.
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        let stmt = &self.statements[idx].statement;
        let rows = async {
            let mut out = Rows {
                columns: stmt.columns().iter().map(|c| c.name().to_owned()).collect(),
                rows: Vec::new(),
            };
            let stream = self
                .client
                .query_raw(stmt, params.iter().map(PgParam))
                .await?;
            let mut stream = std::pin::pin!(stream);
            while let Some(row) = stream.try_next().await? {
                let mut values = Vec::with_capacity(row.len());
                for i in 0..row.len() {
                    values.push(row.try_get::<_, Cell>(i)?.0);
                }
                out.rows.push(values);
            }
            Ok::<_, tokio_postgres::Error>(out)
        };
        rows.await.map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn execute_unnamed(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let counted = async {
            let stream = self
                .client
                .query_typed_raw(sql, text_params(params))
                .await?;
            count_unnamed(stream, sql).await
        };
        counted.await.map_err(|e| map_error(e, &self.policy))
    }

    /// Rows of a query through an unnamed statement (see the module doc).
    async fn rows_unnamed(
        &self,
        sql: &str,
        params: &[Value],
        out: &mut Rows,
    ) -> Result<(), tokio_postgres::Error> {
        let stream = self
            .client
            .query_typed_raw(sql, text_params(params))
            .await?;
        let mut stream = std::pin::pin!(stream);
        while let Some(row) = stream.try_next().await? {
            if out.columns.is_empty() {
                out.columns = row.columns().iter().map(|c| c.name().to_owned()).collect();
            }
            let mut values = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                values.push(row.try_get::<_, Cell>(i)?.0);
            }
            out.rows.push(values);
        }
        Ok(())
    }

    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        let counted = async {
            let stream = self.client.simple_query_raw(sql).await?;
            let mut stream = std::pin::pin!(stream);
            let mut out = Outcome {
                result_set: false,
                rows: 0,
            };
            while let Some(m) = stream.try_next().await? {
                match m {
                    SimpleQueryMessage::RowDescription(_) => out.result_set = true,
                    SimpleQueryMessage::Row(_) => {
                        out.result_set = true;
                        out.rows += 1;
                    }
                    // For a SELECT the tag repeats the row count already counted.
                    SimpleQueryMessage::CommandComplete(n) if !out.result_set => out.rows += n,
                    _ => {}
                }
            }
            Ok::<_, tokio_postgres::Error>(out)
        };
        counted.await.map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        let mut out = Rows::default();
        self.rows_unnamed(sql, params, &mut out)
            .await
            .map(|()| out.rows)
            .map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        text: bool,
    ) -> Result<Rows, DriverError> {
        let rows = async {
            let mut out = Rows::default();
            if text {
                let stream = self.client.simple_query_raw(sql).await?;
                let mut stream = std::pin::pin!(stream);
                let mut sets = 0;
                while let Some(m) = stream.try_next().await? {
                    match m {
                        SimpleQueryMessage::RowDescription(cols) => {
                            sets += 1;
                            if sets == 1 {
                                out.columns = cols.iter().map(|c| c.name().to_owned()).collect();
                            }
                        }
                        SimpleQueryMessage::Row(row) if sets == 1 => out.rows.push(
                            (0..row.len())
                                .map(|i| {
                                    row.get(i)
                                        .map_or(Value::Null, |v| Value::Text(v.to_owned()))
                                })
                                .collect(),
                        ),
                        _ => {}
                    }
                }
                return Ok(out);
            }
            self.rows_unnamed(sql, params, &mut out).await?;
            Ok::<_, tokio_postgres::Error>(out)
        };
        rows.await.map_err(|e| map_error(e, &self.policy))
    }

    /// One simple-protocol query, every statement's outcome and rows (as text).
    pub(crate) async fn query_results_text(
        &mut self,
        sql: &str,
    ) -> Result<Vec<(Outcome, Rows)>, DriverError> {
        let results = async {
            let stream = self.client.simple_query_raw(sql).await?;
            let mut stream = std::pin::pin!(stream);
            let mut out = Vec::new();
            // The statement being read: its rows, once its row description came.
            let mut current: Option<Rows> = None;
            while let Some(m) = stream.try_next().await? {
                match m {
                    SimpleQueryMessage::RowDescription(cols) => {
                        current = Some(Rows {
                            columns: cols.iter().map(|c| c.name().to_owned()).collect(),
                            rows: Vec::new(),
                        });
                    }
                    SimpleQueryMessage::Row(row) => {
                        if let Some(r) = current.as_mut() {
                            r.rows.push(
                                (0..row.len())
                                    .map(|i| {
                                        row.get(i)
                                            .map_or(Value::Null, |v| Value::Text(v.to_owned()))
                                    })
                                    .collect(),
                            );
                        }
                    }
                    SimpleQueryMessage::CommandComplete(n) => out.push(match current.take() {
                        Some(r) => (
                            Outcome {
                                result_set: true,
                                rows: r.rows.len() as u64,
                            },
                            r,
                        ),
                        None => (
                            Outcome {
                                result_set: false,
                                rows: n,
                            },
                            Rows::default(),
                        ),
                    }),
                    _ => {}
                }
            }
            Ok::<_, tokio_postgres::Error>(out)
        };
        results.await.map_err(|e| map_error(e, &self.policy))
    }

    /// Send every statement before reading any result (pgbench's `\startpipeline` …
    /// `\endpipeline`): tokio-postgres writes the requests of futures polled together on one
    /// client back to back and reads the replies in order. Each statement ends with its own
    /// Sync, so one statement's error does not discard the later ones' (pgbench's pipeline
    /// has one Sync at its end); inside a transaction the server aborts them anyway.
    pub(crate) async fn pipeline(
        &mut self,
        items: &[crate::conn::PipelineItem],
    ) -> Vec<Result<Outcome, DriverError>> {
        use crate::conn::PipelineItem;
        let client = &self.client;
        let statements = &self.statements;
        let replies = futures_util::future::join_all(items.iter().map(|item| async move {
            let stream = match item {
                PipelineItem::Prepared(stmt, params) => {
                    client
                        .query_raw(&statements[stmt.0].statement, params.iter().map(PgParam))
                        .await?
                }
                PipelineItem::Sql(sql, params) => {
                    let stream = client.query_typed_raw(sql, text_params(params)).await?;
                    return count_unnamed(stream, sql).await;
                }
                // Dropped by `Connection::pipeline`: every statement has its Sync.
                PipelineItem::Sync => {
                    return Ok(Outcome {
                        result_set: false,
                        rows: 0,
                    });
                }
            };
            count_rows(stream).await
        }))
        .await;
        replies
            .into_iter()
            .map(|r| r.map_err(|e| map_error(e, &self.policy)))
            .collect()
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        self.bulk_load_text(load.into_text()).await
    }

    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        self.copy_in(CopyIn::text(load)).await
    }

    /// `COPY … FROM STDIN (FORMAT binary)` of tuples already encoded (see [`PgBinaryRows`]).
    pub(crate) async fn bulk_load_binary(
        &mut self,
        load: PgBinaryRows,
    ) -> Result<u64, DriverError> {
        self.copy_in(CopyIn::binary(load)).await
    }

    /// The rows the server says it copied.
    async fn copy_in(&mut self, copy: CopyIn) -> Result<u64, DriverError> {
        let CopyIn {
            sql,
            header,
            chunks,
            trailer,
        } = copy;
        let copied = async {
            let sink = self.client.copy_in::<_, Bytes>(&sql).await?;
            let mut sink = Box::pin(sink);
            if let Some(h) = header {
                sink.send(Bytes::from_static(h)).await?;
            }
            for chunk in chunks {
                sink.send(Bytes::from(chunk)).await?;
            }
            if let Some(t) = trailer {
                sink.send(Bytes::from_static(t)).await?;
            }
            sink.as_mut().finish().await
        };
        copied
            .await
            .map_err(|e| map_error(e, &self.policy).with_statement(&sql))
    }

    pub(crate) async fn close(mut self) {
        // The named statements are closed first, while the client lives (a dropped
        // `Statement` sends its Close through it; after the client it sends nothing): through a
        // pooler the server session outlives this connection, and another process whose
        // tokio-postgres picks the same names must not find them there. One round trip after
        // the Closes makes sure the server has them; a dead server gets two seconds.
        if !self.statements.is_empty() {
            self.statements.clear();
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(2),
                self.client.simple_query(""),
            )
            .await;
        }
        // Dropping the client ends the spawned connection task, which sends Terminate.
        drop(self.client);
    }
}

/// One `COPY table (columns) FROM STDIN…` as both PostgreSQL clients send it: the statement,
/// then an optional header, the chunks and an optional trailer as the data.
pub(crate) struct CopyIn {
    pub sql: String,
    pub header: Option<&'static [u8]>,
    pub chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>,
    pub trailer: Option<&'static [u8]>,
}

impl CopyIn {
    /// Bulk text. Text, not `FORMAT binary`: measured side by side (the same 2 M rows copied
    /// by the server from a file, text and binary alternated, 3 rounds, load 3; see
    /// notes/20.md): binary costs the server 10-25 % less (TPC-H lineitem's shape 3.7-5.6 s
    /// text, 2.9-3.3 s binary; pgbench_accounts' 1.7-2.3 s text, 1.6-1.7 s binary). But these
    /// rows arrive as text (tpchgen writes text, `encode_bulk_row` too, and MySQL's LOAD DATA
    /// reads the same bytes): binary here means the client parsing every DECIMAL and DATE back
    /// to re-encode it, which moves work to the client rather than removing it, and whose net
    /// effect on a load is not measured yet (notes/20.md). A producer that writes binary
    /// directly and cheaply (pgbench_accounts' integers) sends `PgBinaryRows`.
    pub(crate) fn text(load: BulkText) -> Self {
        let options = if load.frozen { " WITH (FREEZE)" } else { "" };
        Self {
            sql: copy_statement(&load.table, &load.columns, options),
            header: None,
            chunks: load.chunks,
            trailer: None,
        }
    }

    /// Tuples already encoded in binary `COPY` form.
    pub(crate) fn binary(load: PgBinaryRows) -> Self {
        let options = if load.frozen {
            " WITH (FORMAT binary, FREEZE)"
        } else {
            " WITH (FORMAT binary)"
        };
        Self {
            sql: copy_statement(&load.table, &load.columns, options),
            header: Some(PG_BINARY_HEADER),
            chunks: load.chunks,
            trailer: Some(PG_BINARY_TRAILER),
        }
    }
}

fn copy_statement(table: &str, columns: &[String], options: &str) -> String {
    format!(
        "COPY {} ({}) FROM STDIN{options}",
        quote_ident(table),
        columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// Identifiers come from dbrig itself (validated, lower-case names), so quoting changes no
/// meaning and only protects keywords.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The whole error with its causes, on one line (tokio-postgres keeps the detail in sources).
fn chain(e: &dyn StdError) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        let _ = write!(s, ": {c}");
        source = c.source();
    }
    one_line(&s)
}

fn has_io_source(e: &tokio_postgres::Error) -> bool {
    let mut source = e.source();
    while let Some(c) = source {
        if c.is::<std::io::Error>() {
            return true;
        }
        source = c.source();
    }
    false
}

/// Whether the error comes from rustls (a certificate refused, no common protocol).
/// The rustls error under a failed connect (a TLS handshake), by type.
fn tls_source(e: &tokio_postgres::Error) -> Option<&rustls::Error> {
    let mut source = e.source();
    while let Some(c) = source {
        if let Some(tls) = c.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        if let Some(tls) = c
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(tls);
        }
        source = c.source();
    }
    None
}

fn connect_error(
    e: tokio_postgres::Error,
    place: &str,
    policy: &ErrorPolicy,
    tls: &crate::tls::TlsOptions,
) -> DriverError {
    if e.as_db_error().is_some() {
        return map_error(e, policy);
    }
    if let Some(failure) = tls_source(&e) {
        return tls.handshake_error("PostgreSQL", place, failure);
    }
    if has_io_source(&e) {
        return DriverError::unreachable(place, format_args!("PostgreSQL: {}", chain(&e)));
    }
    // Not a socket failure and no server error: what is left at connect time is the
    // authentication exchange (a password the server wants and we lack, an unsupported
    // method).
    DriverError::fatal(
        ErrorKind::Auth,
        format!("PostgreSQL at {place}: {}", chain(&e)),
    )
}

/// A server's ErrorResponse as a `DriverError`, classified by its SQLSTATE only (both
/// clients, this one and the lean `pg_wire`).
pub(crate) fn server_error(
    code: &str,
    message: &str,
    detail: Option<&str>,
    policy: &ErrorPolicy,
) -> DriverError {
    let mut text = format!("PostgreSQL error {code}: {}", one_line(message));
    if let Some(detail) = detail {
        let _ = write!(text, " ({})", one_line(detail));
    }
    let (kind, class) = match code {
        "42P01" => (ErrorKind::MissingTable, ErrorClass::Fatal),
        "42P07" => (ErrorKind::TableExists, ErrorClass::Fatal),
        "28P01" | "28000" => (ErrorKind::Auth, ErrorClass::Fatal),
        "3D000" => (ErrorKind::UnknownDatabase, ErrorClass::Fatal),
        // admin_shutdown, crash_shutdown, cannot_connect_now: the session is gone.
        "57P01" | "57P02" | "57P03" => (ErrorKind::ConnectionLost, ErrorClass::Reconnect),
        _ => (ErrorKind::Statement, policy.classify(code)),
    };
    DriverError::new(kind, class, Some(code.to_owned()), text)
}

/// Classify by SQLSTATE and error type only, never by message text.
fn map_error(e: tokio_postgres::Error, policy: &ErrorPolicy) -> DriverError {
    if let Some(db) = e.as_db_error() {
        return server_error(db.code().code(), db.message(), db.detail(), policy);
    }
    if e.is_closed() || has_io_source(&e) {
        return DriverError::lost(None, format!("PostgreSQL connection lost: {}", chain(&e)));
    }
    DriverError::new(
        ErrorKind::Statement,
        ErrorClass::Fatal,
        None,
        format!("PostgreSQL client error: {}", chain(&e)),
    )
}

/// Read a prepared statement's rows to the end: a result set of its row count when it
/// returned rows, else the rows it changed.
async fn count_rows(stream: tokio_postgres::RowStream) -> Result<Outcome, tokio_postgres::Error> {
    let mut stream = std::pin::pin!(stream);
    let mut rows = 0u64;
    while stream.as_mut().try_next().await?.is_some() {
        rows += 1;
    }
    if rows > 0 {
        return Ok(Outcome {
            result_set: true,
            rows,
        });
    }
    Ok(Outcome {
        result_set: false,
        rows: stream.rows_affected().unwrap_or(0),
    })
}

/// Read an unnamed statement's rows to the end. tokio-postgres keeps the row description of
/// an unnamed statement to itself, so an empty result set is told from a change of no rows by
/// the statement's verb.
async fn count_unnamed(
    stream: tokio_postgres::RowStream,
    sql: &str,
) -> Result<Outcome, tokio_postgres::Error> {
    let counted = count_rows(stream).await?;
    if !counted.result_set && counted.rows == 0 && returns_rows(sql) {
        return Ok(Outcome {
            result_set: true,
            rows: 0,
        });
    }
    Ok(counted)
}

/// A statement's first word (after blanks and opening parentheses).
fn first_word(sql: &str) -> &str {
    let rest = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Whether a statement returns a result set, by its first word.
pub(crate) fn returns_rows(sql: &str) -> bool {
    let word = first_word(sql);
    [
        "SELECT", "WITH", "SHOW", "VALUES", "TABLE", "EXPLAIN", "FETCH",
    ]
    .iter()
    .any(|w| w.eq_ignore_ascii_case(word))
}

/// Whether the command tag of a statement that returns rows counts them (see [`Prepared`]).
fn tag_counts_rows(sql: &str) -> bool {
    let word = first_word(sql);
    [
        "SELECT", "WITH", "VALUES", "TABLE", "INSERT", "UPDATE", "DELETE", "FETCH",
    ]
    .iter()
    .any(|w| w.eq_ignore_ascii_case(word))
}

/// Bind values as text of unspecified type (`unknown`: the server infers each parameter's
/// type from the statement and reads the text in it), as libpq's `PQexecParams` sends them.
fn text_params(params: &[Value]) -> impl ExactSizeIterator<Item = (PgText<'_>, Type)> {
    params.iter().map(|v| (PgText(v), Type::UNKNOWN))
}

/// A bind value sent in text format.
#[derive(Debug)]
pub(crate) struct PgText<'a>(pub(crate) &'a Value);

impl ToSql for PgText<'_> {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            Value::Null => return Ok(IsNull::Yes),
            Value::Int(i) => {
                let _ = write!(Writer(out), "{i}");
            }
            Value::Float(f) => {
                let _ = write!(Writer(out), "{f}");
            }
            Value::Text(s) => out.put_slice(s.as_bytes()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> tokio_postgres::types::Format {
        tokio_postgres::types::Format::Text
    }

    to_sql_checked!();
}

/// `fmt::Write` into a byte buffer.
struct Writer<'a>(&'a mut BytesMut);

impl std::fmt::Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.put_slice(s.as_bytes());
        Ok(())
    }
}

/// A bind value converted to whatever type the server inferred for its parameter, since
/// tokio-postgres refuses e.g. an i64 for an int4 parameter.
#[derive(Debug)]
pub(crate) struct PgParam<'a>(pub(crate) &'a Value);

impl ToSql for PgParam<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => int_to_sql(*i, ty, out),
            Value::Float(f) => float_to_sql(*f, ty, out),
            Value::Text(s) => text_to_sql(s, ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn cannot(what: &str, ty: &Type) -> BoxError {
    format!("cannot send {what} as a PostgreSQL {ty} parameter").into()
}

fn is_text(ty: &Type) -> bool {
    <&str as ToSql>::accepts(ty) || matches!(ty.kind(), Kind::Enum(_))
}

fn int_to_sql(i: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
        Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
        Type::INT8 => i.to_sql(ty, out),
        Type::OID => u32::try_from(i)?.to_sql(ty, out),
        Type::FLOAT4 => (i as f32).to_sql(ty, out),
        Type::FLOAT8 => (i as f64).to_sql(ty, out),
        Type::NUMERIC => encode_numeric(&i.to_string(), out),
        Type::BOOL => (i != 0).to_sql(ty, out),
        _ if is_text(ty) => i.to_string().as_str().to_sql(ty, out),
        _ => Err(cannot("an integer", ty)),
    }
}

fn float_to_sql(f: f64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        Type::FLOAT4 => (f as f32).to_sql(ty, out),
        Type::FLOAT8 => f.to_sql(ty, out),
        // Display of f64 never uses an exponent, so it is a valid NUMERIC literal.
        Type::NUMERIC if f.is_finite() => encode_numeric(&f.to_string(), out),
        Type::INT2 | Type::INT4 | Type::INT8 if f.fract() == 0.0 => int_to_sql(f as i64, ty, out),
        _ if is_text(ty) => f.to_string().as_str().to_sql(ty, out),
        _ => Err(cannot("a float", ty)),
    }
}

fn text_to_sql(s: &str, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    match *ty {
        _ if is_text(ty) => s.to_sql(ty, out),
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID => {
            int_to_sql(s.trim().parse::<i64>()?, ty, out)
        }
        Type::FLOAT4 | Type::FLOAT8 => float_to_sql(s.trim().parse::<f64>()?, ty, out),
        Type::NUMERIC => encode_numeric(s, out),
        Type::BOOL => match s.trim().to_ascii_lowercase().as_str() {
            "t" | "true" | "1" | "yes" | "on" => true.to_sql(ty, out),
            "f" | "false" | "0" | "no" | "off" => false.to_sql(ty, out),
            _ => Err(cannot("this text", ty)),
        },
        Type::DATE => {
            let days = parse_date(s.trim()).ok_or_else(|| cannot("this text", ty))?;
            out.put_i32(i32::try_from(days)?);
            Ok(IsNull::No)
        }
        Type::TIMESTAMP | Type::TIMESTAMPTZ => {
            let us = parse_timestamp(s.trim()).ok_or_else(|| cannot("this text", ty))?;
            out.put_i64(us);
            Ok(IsNull::No)
        }
        Type::BYTEA => s.as_bytes().to_sql(ty, out),
        _ => Err(cannot("text", ty)),
    }
}

/// NUMERIC's binary form: base-10000 digits with a weight, a sign and a display scale.
fn encode_numeric(s: &str, out: &mut BytesMut) -> Result<IsNull, BoxError> {
    let s = s.trim();
    let (negative, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return Err(format!("'{s}' is not a decimal number").into());
    }
    let int = int.trim_start_matches('0');
    let int_pad = (4 - int.len() % 4) % 4;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let padded: Vec<u8> = std::iter::repeat_n(b'0', int_pad)
        .chain(int.bytes())
        .chain(frac.bytes())
        .chain(std::iter::repeat_n(b'0', frac_pad))
        .collect();
    let mut digits: Vec<i16> = padded
        .chunks(4)
        .map(|g| {
            g.iter()
                .fold(0i16, |acc, &b| acc * 10 + i16::from(b - b'0'))
        })
        .collect();
    let mut weight = i16::try_from((int_pad + int.len()) / 4)? - 1;
    let leading = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..leading);
    weight -= i16::try_from(leading)?;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let sign: u16 = if negative && !digits.is_empty() {
        0x4000
    } else {
        0
    };
    if digits.is_empty() {
        weight = 0;
    }
    out.put_i16(i16::try_from(digits.len())?);
    out.put_i16(weight);
    out.put_u16(sign);
    out.put_u16(u16::try_from(frac.len())?);
    for d in digits {
        out.put_i16(d);
    }
    Ok(IsNull::No)
}

fn decode_numeric(raw: &[u8]) -> Option<String> {
    let word =
        |i: usize| -> Option<i16> { Some(i16::from_be_bytes([*raw.get(i)?, *raw.get(i + 1)?])) };
    let ndigits = usize::try_from(word(0)?).ok()?;
    let weight = i32::from(word(2)?);
    let sign = word(4)? as u16;
    let dscale = usize::try_from(word(6)?).ok()?;
    match sign {
        0xC000 => return Some("NaN".into()),
        0xD000 => return Some("Infinity".into()),
        0xF000 => return Some("-Infinity".into()),
        _ => {}
    }
    let digits: Vec<i16> = (0..ndigits)
        .map(|i| word(8 + 2 * i))
        .collect::<Option<_>>()?;
    let digit = |i: i32| -> i16 {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i).copied())
            .unwrap_or(0)
    };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for i in 0..=weight {
            let d = digit(i);
            if i == 0 {
                let _ = write!(s, "{d}");
            } else {
                let _ = write!(s, "{d:04}");
            }
        }
    }
    if dscale > 0 {
        let mut frac = String::with_capacity(dscale + 4);
        let mut i = weight + 1;
        while frac.len() < dscale {
            let _ = write!(frac, "{:04}", digit(i));
            i += 1;
        }
        frac.truncate(dscale);
        s.push('.');
        s.push_str(&frac);
    }
    Some(s)
}

/// PostgreSQL's epoch for dates and timestamps.
const US_PER_DAY: i64 = 86_400_000_000;

use dbrig_core::calendar::{civil_from_days, days_from_civil};

/// Days between 1970-01-01 and PostgreSQL's epoch 2000-01-01.
const PG_EPOCH_UNIX_DAYS: i64 = 10_957;

/// `YYYY-MM-DD` → days since 2000-01-01.
fn parse_date(s: &str) -> Option<i64> {
    let mut parts = s.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let d: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d) - PG_EPOCH_UNIX_DAYS)
}

/// `YYYY-MM-DD[ T]HH:MM:SS[.ffffff]` (taken as UTC for timestamptz) → µs since 2000-01-01.
fn parse_timestamp(s: &str) -> Option<i64> {
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, t),
        None => (s, "00:00:00"),
    };
    let days = parse_date(date)?;
    let mut hms = time.splitn(3, ':');
    let h: i64 = hms.next()?.parse().ok()?;
    let mi: i64 = hms.next()?.parse().ok()?;
    let (sec, frac) = match hms.next() {
        Some(sec) => sec.split_once('.').unwrap_or((sec, "")),
        None => ("0", ""),
    };
    let sec: i64 = sec.parse().ok()?;
    let frac = &frac[..frac.len().min(6)];
    let us: i64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().ok()? * 10i64.pow(6 - frac.len() as u32)
    };
    Some(days * US_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1_000_000 + us)
}

fn format_date(days: i32) -> String {
    match days {
        i32::MAX => "infinity".into(),
        i32::MIN => "-infinity".into(),
        d => {
            let (y, m, d) = civil_from_days(i64::from(d) + PG_EPOCH_UNIX_DAYS);
            format!("{y:04}-{m:02}-{d:02}")
        }
    }
}

fn format_time(us: i64) -> String {
    let (secs, frac) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if frac > 0 {
        format!("{h:02}:{mi:02}:{s:02}.{frac:06}")
    } else {
        format!("{h:02}:{mi:02}:{s:02}")
    }
}

fn format_timestamp(us: i64, utc: bool) -> String {
    let text = match us {
        i64::MAX => return "infinity".into(),
        i64::MIN => return "-infinity".into(),
        us => {
            let days = us.div_euclid(US_PER_DAY);
            let (y, m, d) = civil_from_days(days + PG_EPOCH_UNIX_DAYS);
            format!(
                "{y:04}-{m:02}-{d:02} {}",
                format_time(us.rem_euclid(US_PER_DAY))
            )
        }
    };
    if utc { text + "+00" } else { text }
}

/// A result cell converted to a `Value` by its column type; never fails, whatever the type.
pub(crate) struct Cell(pub(crate) Value);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        let v = match *ty {
            Type::BOOL => Value::Int(i64::from(bool::from_sql(ty, raw)?)),
            Type::INT2 => Value::Int(i64::from(i16::from_sql(ty, raw)?)),
            Type::INT4 => Value::Int(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(i64::from(u32::from_sql(ty, raw)?)),
            Type::CHAR => Value::Text(char::from(i8::from_sql(ty, raw)? as u8).to_string()),
            Type::FLOAT4 => Value::Float(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            // Kept as text so that no digit is lost (TPC-H answers compare exact decimals).
            Type::NUMERIC => {
                Value::Text(decode_numeric(raw).ok_or("malformed NUMERIC value from the server")?)
            }
            Type::DATE => Value::Text(format_date(i32::from_sql(ty, raw)?)),
            Type::TIMESTAMP => Value::Text(format_timestamp(i64::from_sql(ty, raw)?, false)),
            Type::TIMESTAMPTZ => Value::Text(format_timestamp(i64::from_sql(ty, raw)?, true)),
            Type::TIME => Value::Text(format_time(i64::from_sql(ty, raw)?)),
            Type::BYTEA => Value::Text(hex(raw)),
            _ if <String as FromSql>::accepts(ty) || matches!(ty.kind(), Kind::Enum(_)) => {
                Value::Text(String::from_utf8_lossy(raw).into_owned())
            }
            _ => Value::Text(format!("<{} {}>", ty.name(), hex(raw))),
        };
        Ok(Cell(v))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Cell(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

pub(crate) fn hex(raw: &[u8]) -> String {
    let mut s = String::with_capacity(2 + raw.len() * 2);
    s.push_str("\\x");
    for b in raw {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_round_trip(s: &str) -> String {
        let mut out = BytesMut::new();
        encode_numeric(s, &mut out).unwrap();
        decode_numeric(&out).unwrap()
    }

    #[test]
    fn command_tags_that_count_rows() {
        for sql in [
            "SELECT 1",
            "  (select c from t)",
            "WITH d AS (DELETE FROM t RETURNING id) SELECT id FROM d",
            "VALUES (1)",
            "TABLE t",
            "INSERT INTO t VALUES (1) RETURNING id",
            "update t set k = 1 returning k",
            "DELETE FROM t RETURNING id",
            "FETCH 10 FROM c",
        ] {
            assert!(tag_counts_rows(sql), "{sql}");
        }
        for sql in [
            "SHOW server_version",
            "EXPLAIN SELECT 1",
            "",
            "-- SELECT",
            "SELECTX",
        ] {
            assert!(!tag_counts_rows(sql), "{sql}");
        }
    }

    #[test]
    fn numeric_encodes_and_decodes() {
        for (input, expected) in [
            ("0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("12345.678", "12345.678"),
            ("0.0001", "0.0001"),
            ("0.00001234", "0.00001234"),
            ("100000000", "100000000"),
            ("-0.50", "-0.50"),
            ("007.1", "7.1"),
            ("-0", "0"),
            ("99999999999999999999.99", "99999999999999999999.99"),
        ] {
            assert_eq!(numeric_round_trip(input), expected, "{input}");
        }
        assert!(encode_numeric("1e5", &mut BytesMut::new()).is_err());
        assert!(encode_numeric("", &mut BytesMut::new()).is_err());
    }

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(parse_date("2000-01-01"), Some(0));
        assert_eq!(parse_date("1999-12-31"), Some(-1));
        assert_eq!(format_date(0), "2000-01-01");
        for d in [
            "1992-01-02",
            "1998-12-01",
            "2024-02-29",
            "1970-01-01",
            "2100-03-01",
        ] {
            let days = parse_date(d).unwrap();
            assert_eq!(format_date(days as i32), d);
        }
        let us = parse_timestamp("2024-01-02 03:04:05.25").unwrap();
        assert_eq!(format_timestamp(us, false), "2024-01-02 03:04:05.250000");
        assert_eq!(
            format_timestamp(parse_timestamp("1995-06-17").unwrap(), true),
            "1995-06-17 00:00:00+00"
        );
    }
}
