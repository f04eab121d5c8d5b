//! The MariaDB/MySQL backend (mysql_async). Its TLS is dbrig's: mysql_async (patched,
//! `vendor/mysql_async`) is handed the rustls configuration of `tls.rs` that the lean client
//! uses, so both clients verify, limit versions and report failures alike.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use dbrig_core::{ErrorClass, Value};
use futures_util::StreamExt;
use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::prelude::{Protocol, Queryable};
use mysql_async::{Column, Conn, OptsBuilder, Params, QueryResult, Row};

#[cfg(test)]
use crate::bulk::CHUNK;
use crate::bulk::{BulkLoad, BulkText, count_rows};
use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, Rows as NamedRows};
use crate::error::{DriverError, ErrorKind, ErrorPolicy, one_line};
use crate::target::{Endpoint, Target};

/// MySQL's limit on placeholders per prepared statement.
const MAX_PARAMS: usize = 65_535;

/// Server error codes that mean LOAD DATA LOCAL is switched off (1148: not allowed with this
/// version; 3948: disabled on client or server; 4166: MariaDB's "local infile disabled").
const INFILE_REFUSED: [u16; 3] = [1148, 3948, 4166];

pub(crate) struct MysqlConnection {
    conn: Conn,
    statements: Vec<mysql_async::Statement>,
    policy: ErrorPolicy,
    version: String,
}

type Rows = Box<dyn Iterator<Item = Vec<Value>> + Send>;

/// The bulk text of a LOAD DATA and how many rows of it went out.
struct Source {
    chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>,
    sent: u64,
    /// The load names a single-byte character set: every byte must be ASCII, or the text
    /// would be stored wrong.
    ascii_only: bool,
}

/// Character sets a bulk load may name as they are when the data is ASCII (which is the same
/// bytes in each): the server then converts nothing. Anything else is sent as utf8mb4.
const ASCII_CHARSETS: [&str; 2] = ["latin1", "ascii"];

impl MysqlConnection {
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, DriverError> {
        let (builder, place) = opts_for(target)?;
        let prefer = target
            .tls()
            .is_some_and(|t| t.mode == crate::tls::TlsMode::Prefer);
        let clear = builder.clone().ssl_opts(None);
        let attempt = async {
            match Conn::new(builder).await {
                // `prefer` against a server without TLS: clear text, as libpq does.
                Err(mysql_async::Error::Driver(
                    mysql_async::DriverError::NoClientSslFlagFromServer,
                )) if prefer => Conn::new(clear).await,
                other => other,
            }
        };
        // One connect timeout for the whole opening, the first queries included.
        let deadline = tokio::time::Instant::now() + options.connect_timeout;
        let mut conn = match tokio::time::timeout_at(deadline, attempt).await {
            Err(_) => {
                return Err(DriverError::unreachable(
                    &place,
                    format_args!("no MySQL handshake within {:?}", options.connect_timeout),
                ));
            }
            Ok(Err(e)) => return Err(connect_error(e, target, &place, &options.policy)),
            Ok(Ok(c)) => c,
        };
        // The minimum TLS version is enforced in the handshake itself (tls.rs); what is left of
        // the opening is the first query.
        let first_query = async {
            conn.query_first::<String, _>("SELECT VERSION()")
                .await
                .map_err(|e| map_error(e, &options.policy))
                .map(Option::unwrap_or_default)
        };
        let version = tokio::time::timeout_at(deadline, first_query)
            .await
            .map_err(|_| {
                DriverError::no_reply(
                    &place,
                    "no answer to the first query (the server took the connection but does not answer: stopped, hung or starved)",
                    options.connect_timeout,
                )
            })??;
        Ok(Self {
            conn,
            statements: Vec::new(),
            policy: options.policy.clone(),
            version,
        })
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn connection_id(&self) -> u32 {
        self.conn.id()
    }

    /// KILL QUERY goes out on a second connection with this one's options (same user, which
    /// may kill its own queries without the PROCESS/SUPER privilege).
    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::Mysql {
            opts: self.conn.opts().clone(),
            connection_id: self.conn.id(),
        })
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        let stmt = self
            .conn
            .prep(sql)
            .await
            .map_err(|e| map_error(e, &self.policy))?;
        self.statements.push(stmt);
        Ok(())
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let stmt = &self.statements[idx];
        let result = self.conn.exec_iter(stmt, to_params(params)).await;
        match result {
            Ok(r) => count(r).await,
            Err(e) => Err(e),
        }
        .map_err(|e| map_error(e, &self.policy))
    }

    /// A prepared statement's rows, decoded.
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<NamedRows, DriverError> {
        let stmt = &self.statements[idx];
        let result = self.conn.exec_iter(stmt, to_params(params)).await;
        match result {
            Ok(r) => collect_named(r).await,
            Err(e) => Err(e),
        }
        .map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        let result = self.conn.query_iter(sql).await;
        match result {
            Ok(r) => count(r).await,
            Err(e) => Err(e),
        }
        .map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        let rows = if params.is_empty() {
            // The text protocol also serves statements MySQL cannot prepare (some SHOWs);
            // values are typed from the column metadata instead.
            match self.conn.query_iter(sql).await {
                Ok(r) => collect(r).await,
                Err(e) => Err(e),
            }
        } else {
            self.query_prepared(sql, params).await
        };
        rows.map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        text: bool,
    ) -> Result<NamedRows, DriverError> {
        let rows = async {
            if text || params.is_empty() {
                return collect_named(self.conn.query_iter(sql).await?).await;
            }
            let stmt = self.conn.prep(sql).await?;
            let rows = collect_named(self.conn.exec_iter(&stmt, to_params(params)).await?).await;
            let closed = self.conn.close(stmt).await;
            let rows = rows?;
            closed?;
            Ok(rows)
        };
        rows.await.map_err(|e| map_error(e, &self.policy))
    }

    async fn query_prepared(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, mysql_async::Error> {
        let stmt = self.conn.prep(sql).await?;
        let rows = collect(self.conn.exec_iter(&stmt, to_params(params)).await?).await;
        // With the statement cache off nothing else would close it, and the server caps
        // open statements globally (max_prepared_stmt_count).
        let closed = self.conn.close(stmt).await;
        let rows = rows?;
        closed?;
        Ok(rows)
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        self.bulk_load_text(load.into_text()).await
    }

    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        let BulkText {
            table,
            columns,
            chunks,
            ..
        } = load;
        // The columns' own character set where the data can be sent in it: a latin1 table
        // loaded as utf8mb4 costs the server a conversion per value (15-25 % more CPU in the
        // seed's MEMORY-table load than its server-side file load). Decided from the
        // character columns, not the table's default: a utf8mb4 column of a latin1 table
        // takes its text as utf8mb4.
        let charsets: Vec<String> = self
            .query(
                "SELECT DISTINCT character_set_name FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = ? \
                 AND character_set_name IS NOT NULL",
                &[Value::Text(table.clone())],
            )
            .await?
            .iter()
            .filter_map(|r| r.first().and_then(Value::to_text))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let charset = match charsets.as_slice() {
            // No character columns: numbers and dates are ASCII in any character set.
            [] => Some("latin1".to_owned()),
            [one] if ASCII_CHARSETS.contains(&one.as_str()) => Some(one.clone()),
            _ => None,
        };
        let ascii_only = charset.is_some();
        let charset = charset.unwrap_or_else(|| "utf8mb4".to_owned());
        // Shared so that the rows are still here for the INSERT fallback when the server
        // refuses LOCAL INFILE (it refuses before asking for any data).
        let source = Arc::new(Mutex::new(Source {
            chunks,
            sent: 0,
            ascii_only,
        }));
        let column_list = columns
            .iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'dbrig-bulk' INTO TABLE {} CHARACTER SET {charset} \
             FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({column_list})",
            quote_ident(&table)
        );
        let handler_source = Arc::clone(&source);
        self.conn.set_infile_handler(async move {
            let chunks = std::iter::from_fn(move || next_chunk(&handler_source));
            Ok(futures_util::stream::iter(chunks).boxed())
        });
        let loaded = match self.conn.query_iter(sql).await {
            Ok(r) => count(r).await,
            Err(e) => Err(e),
        };
        let (sent, unsent) = {
            let mut source = source.lock().unwrap_or_else(|p| p.into_inner());
            let unsent = std::mem::replace(&mut source.chunks, Box::new(std::iter::empty()));
            (source.sent, unsent)
        };
        match loaded {
            // LOCAL makes the server skip rows with duplicate keys or bad values with a mere
            // warning; a load that silently lost rows would corrupt the benchmark's data set.
            Ok(outcome) if outcome.rows != sent => Err(DriverError::fatal(
                ErrorKind::Statement,
                format!(
                    "LOAD DATA into {table} stored {} of {} rows: the server skipped the rest \
                     (duplicate keys or invalid values; see SHOW WARNINGS)",
                    outcome.rows, sent
                ),
            )),
            Ok(outcome) => Ok(outcome.rows),
            Err(mysql_async::Error::Server(e)) if INFILE_REFUSED.contains(&e.code) => {
                let unsent = BulkText {
                    table: table.clone(),
                    columns: columns.clone(),
                    chunks: unsent,
                    frozen: false,
                }
                .into_rows();
                self.insert_batches(&table, &columns, unsent)
                    .await
                    .map_err(|e| map_error(e, &self.policy))
            }
            Err(e) => Err(map_error(e, &self.policy)),
        }
    }

    /// The slower path for servers without LOCAL INFILE: prepared multi-row INSERTs.
    async fn insert_batches(
        &mut self,
        table: &str,
        columns: &[String],
        mut rows: Rows,
    ) -> Result<u64, mysql_async::Error> {
        let width = columns.len().max(1);
        let batch = (MAX_PARAMS / width).clamp(1, 1000);
        let insert = |n: usize| {
            let one = format!("({})", vec!["?"; width].join(","));
            format!(
                "INSERT INTO {} ({}) VALUES {}",
                quote_ident(table),
                columns
                    .iter()
                    .map(|c| quote_ident(c))
                    .collect::<Vec<_>>()
                    .join(", "),
                vec![one; n].join(",")
            )
        };
        let full = self.conn.prep(insert(batch)).await?;
        let mut loaded = 0u64;
        let mut params = Vec::with_capacity(batch * width);
        loop {
            params.clear();
            let mut n = 0;
            for row in rows.by_ref().take(batch) {
                params.extend(row.iter().map(to_mysql));
                n += 1;
            }
            if n == 0 {
                break;
            }
            let values = Params::Positional(std::mem::take(&mut params));
            if n == batch {
                self.conn.exec_drop(&full, values).await?;
            } else {
                let tail = self.conn.prep(insert(n)).await?;
                self.conn.exec_drop(&tail, values).await?;
                self.conn.close(tail).await?;
            }
            loaded += self.conn.affected_rows();
            if n < batch {
                break;
            }
        }
        self.conn.close(full).await?;
        Ok(loaded)
    }

    pub(crate) async fn close(self) {
        // A dead connection may never answer the goodbye; don't let that hold up a reconnect.
        let _ = tokio::time::timeout(Duration::from_secs(2), self.conn.disconnect()).await;
    }
}

/// The next chunk of bulk text, or `None` once the source is exhausted.
fn next_chunk(source: &Mutex<Source>) -> Option<std::io::Result<Bytes>> {
    let mut source = source.lock().unwrap_or_else(|p| p.into_inner());
    let chunk = source.chunks.next()?;
    if source.ascii_only && !chunk.is_ascii() {
        return Some(Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "bulk data holds non-ASCII text for a table in a single-byte character set",
        )));
    }
    source.sent += count_rows(&chunk);
    Some(Ok(Bytes::from(chunk)))
}

/// mysql_async's options for a MySQL target, and the place it names (host:port or socket) for
/// messages. With TLS on, the certificate files are read here (a missing one is named).
pub(crate) fn opts_for(target: &Target) -> Result<(OptsBuilder, String), DriverError> {
    let Target::Mysql {
        user,
        password,
        endpoint,
        database,
        tls,
    } = target
    else {
        unreachable!("mysql backend opened for a non-mysql target")
    };
    let builder = OptsBuilder::default()
        .user(Some(user))
        .pass(password.as_ref().map(|p| p.expose()))
        .db_name(Some(database))
        // Connect exactly where the target says: mysql_async would otherwise switch a
        // local TCP connection to the server's socket, and the benchmark would measure a
        // different transport than the one asked for.
        .prefer_socket(false)
        // The connection-level cache closes evicted statements on the server, which would
        // invalidate handles we keep; we hold every statement ourselves instead.
        .stmt_cache_size(0)
        .ssl_opts(ssl_opts(tls, endpoint)?);
    Ok(match endpoint {
        Endpoint::Tcp { host, port } => (
            builder.ip_or_hostname(host.as_str()).tcp_port(*port),
            endpoint.place(),
        ),
        Endpoint::Socket(path) => (
            builder.socket(Some(path.to_string_lossy())),
            endpoint.place(),
        ),
    })
}

/// mysql_async's TLS: the rustls configuration the lean client uses for the same options and
/// host (`tls.rs`: its verifiers, minimum version, client certificate and session cache), and
/// the name it checks — the URL's host, or `localhost` for a socket, as the lean client.
fn ssl_opts(
    tls: &crate::tls::TlsOptions,
    endpoint: &Endpoint,
) -> Result<Option<mysql_async::SslOpts>, DriverError> {
    if !tls.enabled() {
        return Ok(None);
    }
    let host = crate::tls::checked_host(endpoint);
    // mysql_async would read the key itself: the same refusal as the lean client's first.
    tls.check_key()?;
    Ok(Some(
        mysql_async::SslOpts::default()
            .with_rustls_client_config(Some(tls.client_config(host)?))
            .with_danger_tls_hostname_override(Some(host.to_owned())),
    ))
}

/// Identifiers come from dbrig itself (validated names), so quoting is only for keywords.
fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn to_mysql(v: &Value) -> mysql_async::Value {
    match v {
        Value::Null => mysql_async::Value::NULL,
        Value::Int(i) => mysql_async::Value::Int(*i),
        Value::Float(f) => mysql_async::Value::Double(*f),
        Value::Text(s) => mysql_async::Value::Bytes(s.as_bytes().to_vec()),
    }
}

fn to_params(params: &[Value]) -> Params {
    if params.is_empty() {
        Params::Empty
    } else {
        Params::Positional(params.iter().map(to_mysql).collect())
    }
}

/// Read a statement's result to the end: rows counted for a result set, else rows affected.
async fn count<P: Protocol>(
    mut result: QueryResult<'_, 'static, P>,
) -> Result<Outcome, mysql_async::Error> {
    let result_set = !result.columns_ref().is_empty();
    let rows = if result_set {
        let mut n = 0u64;
        result.for_each(|_: Row| n += 1).await?;
        n
    } else {
        result.affected_rows()
    };
    result.drop_result().await?;
    Ok(Outcome { result_set, rows })
}

/// The first result set's rows with its column names.
async fn collect_named<P: Protocol>(
    result: QueryResult<'_, 'static, P>,
) -> Result<NamedRows, mysql_async::Error> {
    let columns = result
        .columns()
        .map(|c| c.iter().map(|c| c.name_str().into_owned()).collect())
        .unwrap_or_default();
    let rows = collect(result).await?;
    Ok(NamedRows { columns, rows })
}

async fn collect<P: Protocol>(
    mut result: QueryResult<'_, 'static, P>,
) -> Result<Vec<Vec<Value>>, mysql_async::Error> {
    let mut out = Vec::new();
    result
        .for_each(|row: Row| {
            let columns = row.columns();
            out.push(
                row.unwrap()
                    .into_iter()
                    .zip(columns.iter())
                    .map(|(v, c)| from_mysql(v, c))
                    .collect(),
            );
        })
        .await?;
    result.drop_result().await?;
    Ok(out)
}

pub(crate) fn from_mysql(v: mysql_async::Value, column: &Column) -> Value {
    use mysql_async::Value as M;
    match v {
        M::NULL => Value::Null,
        M::Int(i) => Value::Int(i),
        M::UInt(u) => i64::try_from(u)
            .map(Value::Int)
            .unwrap_or_else(|_| Value::Text(u.to_string())),
        M::Float(f) => Value::Float(f64::from(f)),
        M::Double(d) => Value::Float(d),
        M::Bytes(b) => from_text(b, column),
        M::Date(y, mo, d, h, mi, s, us) => {
            if column.column_type() == ColumnType::MYSQL_TYPE_DATE {
                Value::Text(format!("{y:04}-{mo:02}-{d:02}"))
            } else if us > 0 {
                Value::Text(format!(
                    "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}"
                ))
            } else {
                Value::Text(format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}"))
            }
        }
        M::Time(neg, d, h, mi, s, us) => {
            let sign = if neg { "-" } else { "" };
            let hours = u64::from(d) * 24 + u64::from(h);
            if us > 0 {
                Value::Text(format!("{sign}{hours:02}:{mi:02}:{s:02}.{us:06}"))
            } else {
                Value::Text(format!("{sign}{hours:02}:{mi:02}:{s:02}"))
            }
        }
    }
}

/// A text-protocol cell, typed by its column: integers and floats become numbers, DECIMAL
/// stays text so that no digit is lost.
fn from_text(bytes: Vec<u8>, column: &Column) -> Value {
    use ColumnType::*;
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => return Value::Text(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    };
    match column.column_type() {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_INT24 | MYSQL_TYPE_LONG
        | MYSQL_TYPE_LONGLONG | MYSQL_TYPE_YEAR => match text.parse::<i64>() {
            Ok(i) => Value::Int(i),
            // An unsigned BIGINT above i64::MAX keeps its digits as text.
            Err(_) if column.flags().contains(ColumnFlags::UNSIGNED_FLAG) => Value::Text(text),
            Err(_) => Value::Text(text),
        },
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => match text.parse::<f64>() {
            Ok(f) => Value::Float(f),
            Err(_) => Value::Text(text),
        },
        _ => Value::Text(text),
    }
}

fn connect_error(
    e: mysql_async::Error,
    target: &Target,
    place: &str,
    policy: &ErrorPolicy,
) -> DriverError {
    use mysql_async::{DriverError as D, Error as E, IoError};
    // A TLS handshake that failed: tokio-rustls hands rustls's error up inside an io::Error,
    // told apart by its type (the server answered: not "nothing answered").
    if let E::Io(IoError::Io(io)) = &e
        && let Some(tls) = target.tls()
        && let Some(failure) = io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        return tls.handshake_error("MySQL", place, failure);
    }
    match e {
        E::Io(io) => {
            DriverError::unreachable(place, format_args!("MySQL: {}", one_line(&io.to_string())))
        }
        E::Driver(D::ConnectionClosed) => DriverError::unreachable(
            place,
            "MySQL: the server closed the connection during the handshake",
        ),
        other => map_error(other, policy),
    }
}

/// A server error (an ERR packet), classified by its error number only, never by its text;
/// shared by the full client and the lean one ([`crate::mysql_wire`]).
pub(crate) fn server_error(
    code: u16,
    state: &str,
    message: &str,
    policy: &ErrorPolicy,
) -> DriverError {
    let code_text = code.to_string();
    let message = format!("MySQL error {code} ({state}): {}", one_line(message));
    let (kind, class) = match code {
        1146 => (ErrorKind::MissingTable, ErrorClass::Fatal),
        1050 => (ErrorKind::TableExists, ErrorClass::Fatal),
        1045 | 1044 | 1698 => (ErrorKind::Auth, ErrorClass::Fatal),
        1049 => (ErrorKind::UnknownDatabase, ErrorClass::Fatal),
        // 1927: connection killed (MariaDB); 1053: server shutdown; 2006/2013: gone
        // away / lost; 4031: MySQL 8 disconnected an idle client.
        1927 | 1053 | 2006 | 2013 | 4031 => (ErrorKind::ConnectionLost, ErrorClass::Reconnect),
        _ => (ErrorKind::Statement, policy.classify(&code_text)),
    };
    DriverError::new(kind, class, Some(code_text), message)
}

/// Classify by error number and error type only, never by message text.
fn map_error(e: mysql_async::Error, policy: &ErrorPolicy) -> DriverError {
    use mysql_async::{DriverError as D, Error as E};
    match e {
        E::Server(se) => server_error(se.code, &se.state, &se.message, policy),
        E::Io(io) => DriverError::lost(
            None,
            format!("MySQL connection lost: {}", one_line(&io.to_string())),
        ),
        E::Driver(
            d @ (D::ConnectionClosed
            | D::PacketOutOfOrder
            | D::UnexpectedPacket { .. }
            | D::BadCompressedPacketHeader),
        ) => DriverError::lost(
            None,
            format!("MySQL connection lost: {}", one_line(&d.to_string())),
        ),
        other => DriverError::new(
            ErrorKind::Statement,
            ErrorClass::Fatal,
            None,
            format!("MySQL client error: {}", one_line(&other.to_string())),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_bounded_and_complete() {
        let rows: Rows =
            Box::new((0..200_000).map(|i| vec![Value::Int(i), Value::Text("x".repeat(20))]));
        let text = BulkLoad {
            table: "t".into(),
            columns: Vec::new(),
            rows,
        }
        .into_text();
        let rows = Mutex::new(Source {
            chunks: text.chunks,
            sent: 0,
            ascii_only: true,
        });
        let mut total = 0;
        let mut lines = 0;
        while let Some(c) = next_chunk(&rows) {
            let c = c.unwrap();
            assert!(c.len() < CHUNK + 4096);
            assert_eq!(c.last(), Some(&b'\n'), "chunks end on a row boundary");
            total += c.len();
            lines += c.iter().filter(|&&b| b == b'\n').count();
        }
        assert_eq!(lines, 200_000);
        assert_eq!(rows.lock().unwrap().sent, 200_000);
        assert!(total > CHUNK);
    }

    /// A load named in a single-byte character set refuses text that is not ASCII rather
    /// than store it wrong.
    #[test]
    fn non_ascii_data_is_refused_in_a_single_byte_load() {
        let rows: Rows = Box::new(std::iter::once(vec![Value::Text("café".into())]));
        let text = BulkLoad {
            table: "t".into(),
            columns: Vec::new(),
            rows,
        }
        .into_text();
        let source = Mutex::new(Source {
            chunks: text.chunks,
            sent: 0,
            ascii_only: true,
        });
        let e = next_chunk(&source).unwrap().unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert_eq!(source.lock().unwrap().sent, 0);
    }

    #[test]
    fn identifiers_are_backquoted() {
        assert_eq!(quote_ident("order"), "`order`");
        assert_eq!(quote_ident("a`b"), "`a``b`");
    }

    /// The fallback for servers without LOCAL INFILE (exercised directly, since switching the
    /// server's `local_infile` off would disturb tests running in parallel).
    #[tokio::test]
    async fn insert_batches_load_full_and_partial_batches() {
        let target = Target::parse("mysql://root@127.0.0.1:3306/test").unwrap();
        let mut c = MysqlConnection::connect(&target, &ConnectOptions::default())
            .await
            .unwrap();
        let t = format!("my_fallback_{}", std::process::id());
        c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY, c TEXT)"))
            .await
            .unwrap();
        let rows: Rows =
            Box::new((0..2_345).map(|i| vec![Value::Int(i), Value::Text(format!("r{i}"))]));
        let n = c
            .insert_batches(&t, &["id".into(), "c".into()], rows)
            .await
            .unwrap();
        assert_eq!(n, 2_345);
        let count = c
            .query(&format!("SELECT COUNT(*) FROM {t}"), &[])
            .await
            .unwrap();
        assert_eq!(count, vec![vec![Value::Int(2_345)]]);
        c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
        c.close().await;
    }
}
