//! The lean PostgreSQL client of benchmark clients and loaders: the frontend/backend protocol
//! (version 3.0) spoken directly over [`WireSocket`], as the lean MariaDB/MySQL client does.
//!
//! Why not tokio-postgres here: its `Client` hands each statement to a connection task through
//! a channel and gets the reply back through another, so every statement costs two task
//! wake-ups and an `epoll` round beside its `send` and `recv`; over TLS that left dbrig 1–5 %
//! over libpq's client CPU per query (pgbench, sysbench's pgsql driver; issue 15's bench).
//! This client writes a statement's messages in one `send` and reads its reply where it lies
//! in one buffer; a client that owns its thread makes blocking calls (libpq's shape, without
//! its `poll`). Rows only counted are skipped in the buffer, never built.
//!
//! What it speaks: TLS (rustls, libpq's `sslmode`s, after an SSLRequest), authentication
//! `trust`, `password`, `md5`, `scram-sha-256` and `scram-sha-256-plus` (channel binding with
//! the certificate's `tls-server-end-point` hash; SCRAM and md5 from postgres-protocol, the
//! crate tokio-postgres uses), the prepared protocol (named statements, binary values), the
//! extended protocol with unnamed statements and text values (pgbench's `-M extended`), the
//! simple query protocol, pipelines, `COPY … FROM STDIN` and cancel requests. A server asking
//! for anything else (GSS, SSPI, another SASL mechanism) makes it step aside
//! ([`WireError::Unsupported`]): the connection is opened with tokio-postgres instead.

use std::sync::Arc;

use bytes::{Buf, BufMut, BytesMut};
use dbrig_core::{ErrorClass, Value};
use postgres_protocol::authentication::sasl::{
    ChannelBinding, SCRAM_SHA_256, SCRAM_SHA_256_PLUS, ScramSha256,
};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

use crate::bulk::{BulkLoad, BulkText, PgBinaryRows};
use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, PipelineItem, Rows, TextRows};
use crate::error::{DriverError, ErrorKind, ErrorPolicy};
use crate::postgres::{Cell, CopyIn, PgParam, PgText, hex, server_error};
use crate::target::{Endpoint, Target};
use crate::tls::TlsMode;
use crate::wire_socket::{TlsFailure, WireError, WireSocket};

/// Read-buffer growth step (as the MariaDB client's).
const READ_CHUNK: usize = 64 * 1024;

/// A result column: its name, its type when this client knows it (`None`: a type created in
/// the database, an enum say), and whether its values come in binary.
#[derive(Debug, Clone)]
struct Column {
    name: String,
    ty: Option<Type>,
    binary: bool,
}

/// A message of a reply, as [`PgWireConnection::next_reply`] hands it over.
enum Msg {
    /// DataRow.
    Row,
    /// RowDescription.
    Description,
    /// ParameterDescription.
    Parameters,
    /// CommandComplete (its tag counts the rows a statement changed or copied).
    Complete,
    /// EmptyQueryResponse.
    EmptyQuery,
    /// ErrorResponse (not FATAL).
    Failed(DriverError),
    /// ReadyForQuery: the reply's end.
    Ready,
}

/// A named statement on the server.
struct Prepared {
    name: String,
    /// Each parameter's type as the server inferred it; `None`: sent as text for the server
    /// to read (a type this client cannot encode).
    params: Vec<Option<Type>>,
    /// Shared with each execute that decodes rows (no copy per execute).
    columns: Arc<[Column]>,
    /// Result formats asked for in Bind: binary, text for a column of unknown type.
    result_formats: Vec<i16>,
}

pub(crate) struct PgWireConnection {
    socket: WireSocket,
    rbuf: BytesMut,
    wbuf: BytesMut,
    statements: Vec<Prepared>,
    policy: ErrorPolicy,
    version: String,
    backend_pid: u32,
    secret_key: i32,
    /// Where cancel requests go (a new socket to the same address), and how, if the session
    /// is encrypted.
    endpoint: Endpoint,
    cancel_tls: Option<crate::cancel::CancelTls>,
    security: dbrig_core::results::ConnectionSecurity,
}

/// SSLRequest: length 8, code 1234.5679; the server answers one byte, `S` or `N`.
pub(crate) const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];

fn lost(detail: impl std::fmt::Display) -> DriverError {
    DriverError::lost(None, format!("PostgreSQL connection lost: {detail}"))
}

fn protocol(detail: impl std::fmt::Display) -> DriverError {
    lost(format_args!("protocol error: {detail}"))
}

fn client_error(detail: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorKind::Statement,
        ErrorClass::Fatal,
        None,
        format!("PostgreSQL client error: {detail}"),
    )
}

/// Start a message: its tag and a length to fill in by [`end`]; returns where the length is.
fn begin(buf: &mut BytesMut, tag: u8) -> usize {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_i32(0);
    at
}

fn end(buf: &mut BytesMut, at: usize) {
    let len = (buf.len() - at) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn put_cstr(buf: &mut BytesMut, s: &str) -> Result<(), DriverError> {
    if s.as_bytes().contains(&0) {
        return Err(client_error(
            "the text holds a NUL byte, which the protocol cannot carry",
        ));
    }
    buf.put_slice(s.as_bytes());
    buf.put_u8(0);
    Ok(())
}

/// Reads a message body field by field.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn i16(&mut self) -> Result<i16, DriverError> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, DriverError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DriverError> {
        if self.0.len() < n {
            return Err(protocol("a message shorter than its fields"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn cstr(&mut self) -> Result<&'a str, DriverError> {
        let end = self
            .0
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| protocol("an unterminated string"))?;
        let s = std::str::from_utf8(&self.0[..end]).map_err(|_| protocol("a string not UTF-8"))?;
        self.0 = &self.0[end + 1..];
        Ok(s)
    }

    /// A DataRow value: `None` for NULL.
    fn value(&mut self) -> Result<Option<&'a [u8]>, DriverError> {
        let len = self.i32()?;
        if len < 0 {
            return Ok(None);
        }
        self.take(len as usize).map(Some)
    }
}

/// An ErrorResponse: the DriverError, and whether the session ends with it (FATAL, PANIC).
fn error_response(body: &[u8], policy: &ErrorPolicy) -> (DriverError, bool) {
    let (mut code, mut message, mut detail, mut severity) = ("XX000", "", None, "");
    let mut f = Fields(body);
    while let Ok(kind) = f.take(1) {
        if kind[0] == 0 {
            break;
        }
        let Ok(value) = f.cstr() else { break };
        match kind[0] {
            b'C' => code = value,
            b'M' => message = value,
            b'D' => detail = Some(value),
            b'V' => severity = value,
            _ => {}
        }
    }
    (
        server_error(code, message, detail, policy),
        matches!(severity, "FATAL" | "PANIC"),
    )
}

fn row_description(body: &[u8]) -> Result<Vec<Column>, DriverError> {
    let mut f = Fields(body);
    let n = f.i16()?.max(0) as usize;
    let mut columns = Vec::with_capacity(n);
    for _ in 0..n {
        let name = f.cstr()?.to_owned();
        f.take(6)?; // table oid, column number
        let oid = f.i32()? as u32;
        f.take(6)?; // type length, type modifier
        let format = f.i16()?;
        columns.push(Column {
            name,
            ty: Type::from_oid(oid),
            binary: format == 1,
        });
    }
    Ok(columns)
}

/// A DataRow's values by their columns' types (what `postgres::Cell` makes of each; a value
/// of a type this client does not know is its text, or hex when it is not UTF-8).
fn decode_row(body: &[u8], columns: &[Column]) -> Result<Vec<Value>, DriverError> {
    let mut f = Fields(body);
    let n = f.i16()?.max(0) as usize;
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        let Some(raw) = f.value()? else {
            values.push(Value::Null);
            continue;
        };
        let column = columns.get(i);
        let v = match column.and_then(|c| c.ty.as_ref().filter(|_| c.binary)) {
            Some(ty) => {
                Cell::from_sql(ty, raw)
                    .map_err(|e| client_error(format_args!("column {i}: {e}")))?
                    .0
            }
            None => match std::str::from_utf8(raw) {
                Ok(s) => Value::Text(s.to_owned()),
                Err(_) => Value::Text(hex(raw)),
            },
        };
        values.push(v);
    }
    Ok(values)
}

/// A text DataRow's cells appended to `out`: `nfields` of them (a row with fewer is filled
/// with NULLs, one with more cut, so every row keeps the result's width).
fn text_cells(body: &[u8], nfields: usize, out: &mut TextRows) -> Result<(), DriverError> {
    let mut f = Fields(body);
    let n = f.i16()?.max(0) as usize;
    for _ in 0..n.min(nfields) {
        match f.value()? {
            Some(raw) => {
                let start = out.data.len();
                out.data.extend_from_slice(raw);
                out.cells.push(Some(start..out.data.len()));
            }
            None => out.cells.push(None),
        }
    }
    for _ in n..nfields {
        out.cells.push(None);
    }
    Ok(())
}

/// The rows a CommandComplete tag counts (its last word; none for `CREATE TABLE` and the like).
fn tag_rows(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|b| *b == b' ').next().unwrap_or_default();
    std::str::from_utf8(last)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Append Bind for `statement` (`""`: the unnamed one) with `params`: binary where `types`
/// knows the parameter's type, text otherwise (all text without `types`).
fn put_bind(
    buf: &mut BytesMut,
    statement: &str,
    params: &[Value],
    types: Option<&[Option<Type>]>,
    result_formats: &[i16],
) -> Result<(), DriverError> {
    if let Some(t) = types
        && t.len() != params.len()
    {
        return Err(client_error(format_args!(
            "the statement takes {} parameters, {} given",
            t.len(),
            params.len()
        )));
    }
    let at = begin(buf, b'B');
    buf.put_u8(0); // the unnamed portal
    put_cstr(buf, statement)?;
    let ty = |i: usize| types.and_then(|t| t[i].as_ref());
    let binary = (0..params.len()).filter(|i| ty(*i).is_some()).count();
    if binary == 0 {
        buf.put_i16(0);
    } else if binary == params.len() {
        buf.put_i16(1);
        buf.put_i16(1);
    } else {
        buf.put_i16(params.len() as i16);
        for i in 0..params.len() {
            buf.put_i16(i16::from(ty(i).is_some()));
        }
    }
    buf.put_i16(params.len() as i16);
    for (i, v) in params.iter().enumerate() {
        let len_at = buf.len();
        buf.put_i32(0);
        let written = match ty(i) {
            Some(ty) => PgParam(v).to_sql(ty, buf),
            None => PgText(v).to_sql(&Type::TEXT, buf),
        }
        .map_err(|e| client_error(format_args!("parameter {}: {e}", i + 1)))?;
        let len = match written {
            IsNull::Yes => -1,
            IsNull::No => (buf.len() - len_at - 4) as i32,
        };
        buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
    buf.put_i16(result_formats.len() as i16);
    for f in result_formats {
        buf.put_i16(*f);
    }
    end(buf, at);
    Ok(())
}

/// Sync: the end of an implicit transaction; the server answers ReadyForQuery.
const SYNC: &[u8] = &[b'S', 0, 0, 0, 4];

/// Execute the unnamed portal to its end.
const EXECUTE: &[u8] = &[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0];

/// Parse `sql` as the unnamed statement (parameter types left to the server), bind `params`
/// as text, describe the portal (its columns come before its rows) and execute it: libpq's
/// `PQexecParams`, pgbench's `-M extended`. Then Sync if `sync`.
fn put_unnamed(
    buf: &mut BytesMut,
    sql: &str,
    params: &[Value],
    sync: bool,
) -> Result<(), DriverError> {
    let at = begin(buf, b'P');
    buf.put_u8(0);
    put_cstr(buf, sql)?;
    buf.put_i16(0);
    end(buf, at);
    put_bind(buf, "", params, None, &[1])?;
    buf.put_slice(&[b'D', 0, 0, 0, 6, b'P', 0]);
    buf.put_slice(EXECUTE);
    if sync {
        buf.put_slice(SYNC);
    }
    Ok(())
}

fn put_query(buf: &mut BytesMut, sql: &str) -> Result<(), DriverError> {
    let at = begin(buf, b'Q');
    put_cstr(buf, sql)?;
    end(buf, at);
    Ok(())
}

impl PgWireConnection {
    /// Connect, start TLS as the target says, authenticate and read the session's facts;
    /// `Unsupported` when the server asks for an authentication this client leaves to
    /// tokio-postgres.
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, WireError> {
        let Target::Postgres { endpoint, .. } = target else {
            unreachable!("postgres wire client opened for a non-postgres target")
        };
        let place = endpoint.place();
        // One connect timeout for the whole opening: nothing accepting the connection in
        // time is an unreachable server; one that accepts it (the kernel does, for a stopped
        // server) and then does not finish the handshake did not answer.
        let deadline = tokio::time::Instant::now() + options.connect_timeout;
        let socket = match tokio::time::timeout_at(
            deadline,
            WireSocket::connect(endpoint, crate::target::pg_socket_file),
        )
        .await
        {
            Err(_) => {
                return Err(DriverError::unreachable(
                    &place,
                    format_args!("no connection within {:?}", options.connect_timeout),
                )
                .into());
            }
            Ok(s) => {
                s.map_err(|e| DriverError::unreachable(&place, format_args!("PostgreSQL: {e}")))?
            }
        };
        let mut conn = match tokio::time::timeout_at(
            deadline,
            Self::open(socket, target, options, &place),
        )
        .await
        {
            Err(_) => {
                return Err(DriverError::no_reply(
                        &place,
                        "no PostgreSQL handshake (the server took the connection but does not answer: stopped, hung or starved)",
                        options.connect_timeout,
                    )
                    .into());
            }
            Ok(r) => r?,
        };
        // Opened and authenticated async (under the connect timeout); a client that owns its
        // thread then talks in blocking calls.
        if let Some(own) = &options.own_thread {
            conn.socket
                .make_blocking(Arc::clone(&own.abandon))
                .map_err(|e| DriverError::unreachable(&place, format_args!("PostgreSQL: {e}")))?;
        }
        Ok(conn)
    }

    async fn open(
        socket: WireSocket,
        target: &Target,
        options: &ConnectOptions,
        place: &str,
    ) -> Result<Self, WireError> {
        let Target::Postgres {
            user,
            password,
            endpoint,
            database,
            tls,
        } = target
        else {
            unreachable!("postgres wire client opened for a non-postgres target")
        };
        let mut conn = Self {
            socket,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            wbuf: BytesMut::with_capacity(1024),
            statements: Vec::new(),
            policy: options.policy.clone(),
            version: String::new(),
            backend_pid: 0,
            secret_key: 0,
            endpoint: endpoint.clone(),
            cancel_tls: None,
            security: dbrig_core::results::ConnectionSecurity {
                tls_mode: tls.mode.name().to_owned(),
                ..Default::default()
            },
        };
        // TLS over TCP only: libpq never encrypts a Unix socket either.
        if let (true, Endpoint::Tcp { host, .. }) = (tls.enabled(), endpoint) {
            conn.start_tls(tls, host, place).await?;
        }
        conn.wbuf
            .put_slice(&crate::pg_auth::startup_message(user, database));
        conn.flush().await?;
        conn.authenticate(user, password.as_ref().map(|p| p.expose()), tls, place)
            .await?;
        // The session's parameters (server_version among them), its cancel key, then ready.
        loop {
            let (tag, len) = conn.fill().await?;
            let body = &conn.rbuf[5..5 + len];
            match tag {
                b'K' => {
                    let mut f = Fields(body);
                    conn.backend_pid = f.i32()? as u32;
                    conn.secret_key = f.i32()?;
                }
                b'E' => return Err(error_response(body, &conn.policy).0.into()),
                b'Z' => {
                    conn.rbuf.advance(5 + len);
                    break;
                }
                _ => conn.asynchronous(tag, len)?,
            }
            conn.rbuf.advance(5 + len);
        }
        Ok(conn)
    }

    async fn start_tls(
        &mut self,
        tls: &crate::tls::TlsOptions,
        host: &str,
        place: &str,
    ) -> Result<(), DriverError> {
        let config = tls.client_config(host)?;
        let name = crate::tls::server_name(host)?;
        self.wbuf.put_slice(&SSL_REQUEST);
        self.flush().await?;
        while self.rbuf.is_empty() {
            if self.socket.read_into(&mut self.rbuf).await.map_err(lost)? == 0 {
                return Err(lost("the server closed the connection at the SSLRequest"));
            }
        }
        let answer = self.rbuf.get_u8();
        if answer != b'S' {
            if tls.mode == TlsMode::Prefer && answer == b'N' {
                return Ok(());
            }
            return Err(crate::tls::tls_error(format!(
                "PostgreSQL at {place} does not accept TLS (sslmode={}): turn `ssl` on in the server or use sslmode=disable",
                tls.mode
            )));
        }
        self.socket
            .start_tls(Arc::clone(&config), name.clone())
            .await
            .map_err(|e| match e {
                TlsFailure::Tls(e) => tls.handshake_error("PostgreSQL", place, &e),
                TlsFailure::Io(e) => {
                    lost(format_args!("during the TLS handshake with {place}: {e}"))
                }
            })?;
        self.security.tls = self
            .socket
            .tls()
            .map(|c| crate::tls::session_of(c, tls.verification()));
        self.cancel_tls = Some(crate::cancel::CancelTls { config, name });
        Ok(())
    }

    /// The certificate hash SCRAM binds to (`tls-server-end-point`), on an encrypted session.
    fn end_point_hash(&self) -> Option<Vec<u8>> {
        let cert = self.socket.tls()?.peer_certificates()?.first()?;
        crate::tls::end_point_hash(cert.as_ref())
    }

    async fn authenticate(
        &mut self,
        user: &str,
        password: Option<&str>,
        tls: &crate::tls::TlsOptions,
        place: &str,
    ) -> Result<(), WireError> {
        let bound = self.end_point_hash();
        let refuse = |detail: String| {
            WireError::Driver(DriverError::fatal(
                ErrorKind::Auth,
                format!("PostgreSQL at {place}, user {user}: {detail}"),
            ))
        };
        let (tag, len) = self.fill().await?;
        let body = self.rbuf[5..5 + len].to_vec();
        self.rbuf.advance(5 + len);
        match tag {
            b'R' => {}
            b'E' => return Err(error_response(&body, &self.policy).0.into()),
            _ => {
                return Err(
                    protocol(format_args!("'{}' instead of authentication", tag as char)).into(),
                );
            }
        }
        let method = crate::pg_auth::method_of(&body, tls, bound.is_some());
        let code = Fields(&body).i32()?;
        // As libpq's channel_binding=require: only SCRAM-SHA-256-PLUS proves the server.
        if tls.channel_binding == Some(true) && method.as_deref() != Some("scram-sha-256-plus") {
            return Err(refuse(format!(
                "channel_binding=require, but the server asks for {} (channel binding needs scram-sha-256-plus over TLS)",
                method.as_deref().unwrap_or("an unknown method")
            )));
        }
        let Some(method) = method else {
            return Err(WireError::Unsupported);
        };
        let need_password = || {
            password.ok_or_else(|| {
                refuse(format!(
                    "the server asks for a password ({method}) and none was given (--password-file, or the URL)"
                ))
            })
        };
        match code {
            0 => {}
            3 => {
                let password = need_password()?;
                let at = begin(&mut self.wbuf, b'p');
                put_cstr(&mut self.wbuf, password)?;
                end(&mut self.wbuf, at);
                self.flush().await?;
                self.expect_auth(0).await?;
            }
            5 => {
                let password = need_password()?;
                let salt: [u8; 4] = body[4..8]
                    .try_into()
                    .map_err(|_| protocol("an md5 request without its salt"))?;
                let hash = postgres_protocol::authentication::md5_hash(
                    user.as_bytes(),
                    password.as_bytes(),
                    salt,
                );
                let at = begin(&mut self.wbuf, b'p');
                put_cstr(&mut self.wbuf, &hash)?;
                end(&mut self.wbuf, at);
                self.flush().await?;
                self.expect_auth(0).await?;
            }
            10 => {
                let password = need_password()?;
                let plus = method == "scram-sha-256-plus";
                let (mechanism, binding) = match (plus, bound) {
                    (true, Some(hash)) => (
                        SCRAM_SHA_256_PLUS,
                        ChannelBinding::tls_server_end_point(hash),
                    ),
                    // Encrypted and able to bind, but not offered: say so (gs2 'y').
                    (false, Some(_)) if tls.channel_binding != Some(false) => {
                        (SCRAM_SHA_256, ChannelBinding::unrequested())
                    }
                    _ => (SCRAM_SHA_256, ChannelBinding::unsupported()),
                };
                let mut scram = ScramSha256::new(password.as_bytes(), binding);
                let at = begin(&mut self.wbuf, b'p');
                put_cstr(&mut self.wbuf, mechanism)?;
                self.wbuf.put_i32(scram.message().len() as i32);
                self.wbuf.put_slice(scram.message());
                end(&mut self.wbuf, at);
                self.flush().await?;
                let data = self.expect_auth(11).await?;
                scram
                    .update(&data)
                    .map_err(|e| refuse(format!("SCRAM: {e}")))?;
                let at = begin(&mut self.wbuf, b'p');
                self.wbuf.put_slice(scram.message());
                end(&mut self.wbuf, at);
                self.flush().await?;
                let data = self.expect_auth(12).await?;
                scram
                    .finish(&data)
                    .map_err(|e| refuse(format!("SCRAM: the server's proof: {e}")))?;
                self.expect_auth(0).await?;
            }
            _ => return Err(WireError::Unsupported),
        }
        self.security.auth = Some(method);
        Ok(())
    }

    /// The next Authentication request, which must be `code`; its data.
    async fn expect_auth(&mut self, code: i32) -> Result<Vec<u8>, DriverError> {
        let (tag, len) = self.fill().await?;
        let body = self.rbuf[5..5 + len].to_vec();
        self.rbuf.advance(5 + len);
        match tag {
            b'R' if Fields(&body).i32()? == code => Ok(body[4..].to_vec()),
            b'E' => Err(error_response(&body, &self.policy).0),
            _ => Err(protocol("an unexpected authentication message")),
        }
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

    /// Its socket is in blocking mode (a client that owns its thread).
    pub(crate) fn is_blocking(&self) -> bool {
        self.socket.is_blocking()
    }

    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::PostgresWire {
            endpoint: self.endpoint.clone(),
            pid: self.backend_pid,
            key: self.secret_key,
            tls: self.cancel_tls.clone(),
        })
    }

    async fn flush(&mut self) -> Result<(), DriverError> {
        let r = self.socket.write_all(&self.wbuf).await.map_err(lost);
        self.wbuf.clear();
        r
    }

    /// Read until a whole message is at the buffer's front: its tag and body length.
    async fn fill(&mut self) -> Result<(u8, usize), DriverError> {
        loop {
            if self.rbuf.len() >= 5 {
                let len =
                    u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]])
                        as usize;
                if len < 4 {
                    return Err(protocol("a message length below 4"));
                }
                if self.rbuf.len() > len {
                    return Ok((self.rbuf[0], len - 4));
                }
                self.rbuf.reserve(len + 1 - self.rbuf.len());
            }
            // All read so far is consumed: read from the buffer's front again (no copy).
            if self.rbuf.is_empty() {
                let _ = self.rbuf.try_reclaim(READ_CHUNK);
            }
            if self.rbuf.capacity() - self.rbuf.len() < 4096 {
                self.rbuf.reserve(READ_CHUNK);
            }
            if self.socket.read_into(&mut self.rbuf).await.map_err(lost)? == 0 {
                return Err(lost("the server closed the connection"));
            }
        }
    }

    /// A message the server may send at any time (ParameterStatus, a notice, a
    /// notification), or a protocol error for any other.
    fn asynchronous(&mut self, tag: u8, len: usize) -> Result<(), DriverError> {
        match tag {
            b'S' => {
                let mut f = Fields(&self.rbuf[5..5 + len]);
                if f.cstr()? == "server_version" {
                    self.version = f.cstr()?.to_owned();
                }
                Ok(())
            }
            b'N' | b'A' => Ok(()),
            other => Err(protocol(format_args!(
                "unexpected message '{}'",
                other as char
            ))),
        }
    }

    /// A statement that is `COPY … FROM STDIN` outside a bulk load: CopyFail, so that the
    /// server ends it with an error (and the connection stays in step) instead of waiting for
    /// data. Called while the CopyInResponse is still at the buffer's front.
    async fn refuse_copy_in(&mut self) -> Result<(), DriverError> {
        let at = begin(&mut self.wbuf, b'f');
        put_cstr(
            &mut self.wbuf,
            "dbrig sends COPY FROM STDIN data only in its own loads",
        )?;
        end(&mut self.wbuf, at);
        self.flush().await
    }

    /// Count and drop the whole DataRows at the buffer's front.
    fn skip_buffered_rows(&mut self) -> u64 {
        let mut rows = 0;
        while self.rbuf.len() >= 5 && self.rbuf[0] == b'D' {
            let len = u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]])
                as usize;
            if self.rbuf.len() <= len {
                break;
            }
            self.rbuf.advance(1 + len);
            rows += 1;
        }
        rows
    }

    /// The next message of a reply that its reader acts on, left at the buffer's front for it
    /// to read and pass (`5 + len` bytes). Passed over here: asynchronous messages, the
    /// protocol's acknowledgements (ParseComplete, BindComplete, CloseComplete, NoData,
    /// PortalSuspended) and a `COPY … TO STDOUT`'s data; a `COPY … FROM STDIN` is refused with
    /// CopyFail. An error is parsed; a FATAL one ends the session and comes back as `Err`.
    async fn next_reply(&mut self) -> Result<(Msg, usize), DriverError> {
        loop {
            let (tag, len) = self.fill().await?;
            let msg = match tag {
                b'D' => Msg::Row,
                b'T' => Msg::Description,
                b't' => Msg::Parameters,
                b'C' => Msg::Complete,
                b'I' => Msg::EmptyQuery,
                b'Z' => Msg::Ready,
                b'E' => {
                    let (e, fatal) = error_response(&self.rbuf[5..5 + len], &self.policy);
                    if fatal {
                        return Err(e);
                    }
                    Msg::Failed(e)
                }
                b'1' | b'2' | b'3' | b'n' | b's' | b'H' | b'd' | b'c' => {
                    self.rbuf.advance(5 + len);
                    continue;
                }
                b'G' => {
                    self.refuse_copy_in().await?;
                    self.rbuf.advance(5 + len);
                    continue;
                }
                _ => {
                    self.asynchronous(tag, len)?;
                    self.rbuf.advance(5 + len);
                    continue;
                }
            };
            return Ok((msg, len));
        }
    }

    /// Read one reply through its ReadyForQuery, counting rows: a result set (`result_set`,
    /// or a RowDescription seen) of its rows, else the rows its tags count. The first error
    /// wins; a FATAL one ends the session at once.
    async fn read_count(&mut self, mut result_set: bool) -> Result<Outcome, DriverError> {
        let (mut rows, mut tagged, mut error) = (0u64, 0u64, None);
        loop {
            rows += self.skip_buffered_rows();
            let (msg, len) = self.next_reply().await?;
            match msg {
                Msg::Row => rows += 1,
                // A `COPY … TO STDOUT` is counted here too: by its tag.
                Msg::Complete => tagged += tag_rows(&self.rbuf[5..5 + len]),
                Msg::Description => result_set = true,
                Msg::Failed(e) => {
                    error.get_or_insert(e);
                }
                Msg::Ready => {
                    self.rbuf.advance(5 + len);
                    break;
                }
                Msg::Parameters | Msg::EmptyQuery => {}
            }
            self.rbuf.advance(5 + len);
        }
        match error {
            Some(e) => Err(e),
            None if result_set => Ok(Outcome {
                result_set: true,
                rows,
            }),
            None => Ok(Outcome {
                result_set: false,
                rows: tagged,
            }),
        }
    }

    /// Read one reply through its ReadyForQuery with every statement's outcome and rows:
    /// `columns` as described beforehand (a prepared statement), else as each RowDescription
    /// says.
    async fn read_results(
        &mut self,
        columns: Option<Arc<[Column]>>,
    ) -> Result<Vec<(Outcome, Rows)>, DriverError> {
        let mut out = Vec::new();
        let mut current: Option<(Arc<[Column]>, Rows)> = columns.map(|c| {
            let rows = Rows {
                columns: c.iter().map(|c| c.name.clone()).collect(),
                rows: Vec::new(),
            };
            (c, rows)
        });
        let mut error = None;
        loop {
            let (msg, len) = self.next_reply().await?;
            let body = &self.rbuf[5..5 + len];
            match msg {
                Msg::Description => {
                    let columns: Arc<[Column]> = row_description(body)?.into();
                    let rows = Rows {
                        columns: columns.iter().map(|c| c.name.clone()).collect(),
                        rows: Vec::new(),
                    };
                    current = Some((columns, rows));
                }
                Msg::Row => {
                    if let Some((columns, rows)) = current.as_mut() {
                        rows.rows.push(decode_row(body, columns)?);
                    }
                }
                Msg::Complete => out.push(match current.take() {
                    Some((_, r)) => (
                        Outcome {
                            result_set: true,
                            rows: r.rows.len() as u64,
                        },
                        r,
                    ),
                    None => (
                        Outcome {
                            result_set: false,
                            rows: tag_rows(body),
                        },
                        Rows::default(),
                    ),
                }),
                Msg::Failed(e) => {
                    error.get_or_insert(e);
                }
                Msg::Ready => {
                    self.rbuf.advance(5 + len);
                    break;
                }
                Msg::Parameters | Msg::EmptyQuery => {}
            }
            self.rbuf.advance(5 + len);
        }
        match error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The first result set of a reply (or no columns and no rows).
    fn first_set(results: Vec<(Outcome, Rows)>) -> Rows {
        results
            .into_iter()
            .find(|(o, _)| o.result_set)
            .map(|(_, r)| r)
            .unwrap_or_default()
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        // Unique across processes, not just in this one: through a pooler in transaction mode
        // (PgBouncer) clients of any process share server sessions, which keep the statements
        // of earlier clients; a name used there is refused ("already exists", 42P05). So a
        // random tag of this process, then a counter.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        static PROCESS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        let process = *PROCESS.get_or_init(|| {
            use std::hash::BuildHasher;
            // RandomState's keys come from the OS's random source, per process.
            std::collections::hash_map::RandomState::new().hash_one(std::process::id()) as u32
        });
        let name = format!(
            "dbrig_{process:08x}_{}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let at = begin(&mut self.wbuf, b'P');
        put_cstr(&mut self.wbuf, &name)?;
        if let Err(e) = put_cstr(&mut self.wbuf, sql) {
            self.wbuf.clear();
            return Err(e);
        }
        self.wbuf.put_i16(0);
        end(&mut self.wbuf, at);
        let at = begin(&mut self.wbuf, b'D');
        self.wbuf.put_u8(b'S');
        put_cstr(&mut self.wbuf, &name)?;
        end(&mut self.wbuf, at);
        self.wbuf.put_slice(SYNC);
        self.flush().await?;
        let (mut params, mut columns, mut error) = (Vec::new(), Vec::new(), None);
        loop {
            let (msg, len) = self.next_reply().await?;
            let body = &self.rbuf[5..5 + len];
            match msg {
                Msg::Parameters => {
                    let mut f = Fields(body);
                    let n = f.i16()?.max(0);
                    for _ in 0..n {
                        params.push(Type::from_oid(f.i32()? as u32));
                    }
                }
                Msg::Description => columns = row_description(body)?,
                Msg::Failed(e) => {
                    error.get_or_insert(e);
                }
                Msg::Ready => {
                    self.rbuf.advance(5 + len);
                    break;
                }
                Msg::Row | Msg::Complete | Msg::EmptyQuery => {
                    return Err(protocol("rows or a completion in reply to a Describe"));
                }
            }
            self.rbuf.advance(5 + len);
        }
        if let Some(e) = error {
            return Err(e);
        }
        // Binary results, but text for a type this client cannot decode.
        for c in &mut columns {
            c.binary = c.ty.is_some();
        }
        let result_formats = if columns.iter().all(|c| c.binary) {
            vec![1]
        } else {
            columns.iter().map(|c| i16::from(c.binary)).collect()
        };
        self.statements.push(Prepared {
            name,
            params,
            columns: columns.into(),
            result_formats,
        });
        Ok(())
    }

    /// Append Bind and Execute of prepared statement `idx`, then Sync.
    fn put_prepared(&mut self, idx: usize, params: &[Value]) -> Result<(), DriverError> {
        self.put_bound(idx, params)?;
        self.wbuf.put_slice(SYNC);
        Ok(())
    }

    /// Append Bind and Execute of prepared statement `idx` (nothing when it cannot be bound).
    fn put_bound(&mut self, idx: usize, params: &[Value]) -> Result<(), DriverError> {
        let stmt = &self.statements[idx];
        let mark = self.wbuf.len();
        if let Err(e) = put_bind(
            &mut self.wbuf,
            &stmt.name,
            params,
            Some(&stmt.params),
            &stmt.result_formats,
        ) {
            self.wbuf.truncate(mark);
            return Err(e);
        }
        self.wbuf.put_slice(EXECUTE);
        Ok(())
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        self.put_prepared(idx, params)?;
        self.flush().await?;
        let result_set = !self.statements[idx].columns.is_empty();
        self.read_count(result_set).await
    }

    /// A prepared statement's rows, decoded.
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        self.put_prepared(idx, params)?;
        self.flush().await?;
        let columns = Arc::clone(&self.statements[idx].columns);
        let results = self.read_results(Some(Arc::clone(&columns))).await?;
        Ok(results.into_iter().next().map(|(_, r)| r).unwrap_or(Rows {
            columns: columns.iter().map(|c| c.name.clone()).collect(),
            rows: Vec::new(),
        }))
    }

    /// One statement through the unnamed statement (`--protocol extended`): a result set's
    /// rows counted, otherwise the rows changed.
    pub(crate) async fn execute_unnamed(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        if let Err(e) = put_unnamed(&mut self.wbuf, sql, params, true) {
            self.wbuf.clear();
            return Err(e);
        }
        self.flush().await?;
        self.read_count(false).await
    }

    /// A simple query (one or more statements): rows counted, or the rows changed.
    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        if let Err(e) = put_query(&mut self.wbuf, sql) {
            self.wbuf.clear();
            return Err(e);
        }
        self.flush().await?;
        self.read_count(false).await
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        self.query_rows(sql, params, false).await.map(|r| r.rows)
    }

    /// A query's first result set: as text through the simple protocol when `text`, else
    /// through the unnamed statement with `params` (one round trip, whatever the protocol
    /// mode: these are the callers' own queries, never named on the server).
    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        text: bool,
    ) -> Result<Rows, DriverError> {
        let put = if text {
            put_query(&mut self.wbuf, sql)
        } else {
            put_unnamed(&mut self.wbuf, sql, params, true)
        };
        if let Err(e) = put {
            self.wbuf.clear();
            return Err(e);
        }
        self.flush().await?;
        self.read_results(None).await.map(Self::first_set)
    }

    /// A simple query's first result set, its cells as the server sent them (the simple
    /// protocol returns text): copied from the DataRows into one buffer, with no value decoded,
    /// no column name kept and no string per cell (a sysbench script's `con:query()`: its rows
    /// go to Lua as the server's text), into `out` (emptied first, its buffers kept). The first
    /// error wins, as in [`Self::read_results`].
    pub(crate) async fn query_text_into(
        &mut self,
        sql: &str,
        out: &mut TextRows,
    ) -> Result<(), DriverError> {
        out.clear();
        if let Err(e) = put_query(&mut self.wbuf, sql) {
            self.wbuf.clear();
            return Err(e);
        }
        self.flush().await?;
        // 0: before the first result set; 1: in it; 2: past it (later sets are read over).
        let mut state = 0u8;
        let mut error = None;
        loop {
            let (msg, len) = self.next_reply().await?;
            let body = &self.rbuf[5..5 + len];
            match msg {
                Msg::Description if state == 0 => {
                    out.nfields = Fields(body).i16()?.max(0) as usize;
                    state = 1;
                }
                Msg::Row if state == 1 => text_cells(body, out.nfields, out)?,
                Msg::Complete if state == 1 => state = 2,
                Msg::Failed(e) => {
                    error.get_or_insert(e);
                }
                Msg::Ready => {
                    self.rbuf.advance(5 + len);
                    break;
                }
                _ => {}
            }
            self.rbuf.advance(5 + len);
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One simple-protocol query, every statement's outcome and rows (as text).
    pub(crate) async fn query_results_text(
        &mut self,
        sql: &str,
    ) -> Result<Vec<(Outcome, Rows)>, DriverError> {
        if let Err(e) = put_query(&mut self.wbuf, sql) {
            self.wbuf.clear();
            return Err(e);
        }
        self.flush().await?;
        self.read_results(None).await
    }

    /// Send every statement before reading any reply (pgbench's `\startpipeline` …
    /// `\endpipeline`), with a Sync where `items` has one and after the last statement, as
    /// pgbench sends them: the statements between two Syncs share an implicit transaction,
    /// and after an error the server skips the rest of them (each gets that error). One
    /// reply per statement (Sync items have none).
    pub(crate) async fn pipeline(
        &mut self,
        items: &[PipelineItem],
    ) -> Vec<Result<Outcome, DriverError>> {
        // Per section (statements up to a Sync): per statement, whether it was sent and
        // whether its result is a set, or the error that kept it from being sent.
        let mut sections: Vec<Vec<Result<bool, DriverError>>> = vec![Vec::new()];
        let mut open = false;
        for item in items {
            let mark = self.wbuf.len();
            let put = match item {
                PipelineItem::Prepared(stmt, params) => self
                    .put_bound(stmt.0, params)
                    .map(|()| !self.statements[stmt.0].columns.is_empty()),
                PipelineItem::Sql(sql, params) => {
                    put_unnamed(&mut self.wbuf, sql, params, false).map(|()| false)
                }
                PipelineItem::Sync => {
                    if open {
                        self.wbuf.put_slice(SYNC);
                        sections.push(Vec::new());
                        open = false;
                    }
                    continue;
                }
            };
            match &put {
                Ok(_) => open = true,
                Err(_) => self.wbuf.truncate(mark),
            }
            sections.last_mut().expect("a section").push(put);
        }
        if open {
            self.wbuf.put_slice(SYNC);
        }
        let statements = sections.iter().map(Vec::len).sum();
        if let Err(e) = self.flush().await {
            return vec![Err(e); statements];
        }
        let mut out = Vec::with_capacity(statements);
        let mut broken: Option<DriverError> = None;
        for section in sections {
            let sent: Vec<bool> = section
                .iter()
                .filter_map(|s| s.as_ref().ok().copied())
                .collect();
            let mut replies = match (&broken, sent.is_empty()) {
                (Some(e), _) => vec![Err(e.clone()); sent.len()],
                (None, true) => Vec::new(),
                (None, false) => match self.read_section(&sent).await {
                    Ok(r) => r,
                    Err(e) => {
                        broken = Some(e.clone());
                        vec![Err(e); sent.len()]
                    }
                },
            }
            .into_iter();
            for s in section {
                out.push(match s {
                    Err(e) => Err(e),
                    Ok(_) => replies.next().expect("a reply per statement sent"),
                });
            }
        }
        out
    }

    /// The replies of one pipeline section through its ReadyForQuery: per statement (whether
    /// its result is a set) its outcome; from the first error on, that error (the server
    /// skipped them). `Err` only when the connection is lost.
    async fn read_section(
        &mut self,
        result_sets: &[bool],
    ) -> Result<Vec<Result<Outcome, DriverError>>, DriverError> {
        let mut out: Vec<Result<Outcome, DriverError>> = Vec::with_capacity(result_sets.len());
        let (mut rows, mut result_set) = (0u64, result_sets.first().copied().unwrap_or(false));
        loop {
            rows += self.skip_buffered_rows();
            let (msg, len) = self.next_reply().await?;
            let done = match msg {
                Msg::Row => {
                    rows += 1;
                    None
                }
                Msg::Description => {
                    result_set = true;
                    None
                }
                Msg::Complete if result_set => Some(Ok(Outcome {
                    result_set: true,
                    rows,
                })),
                Msg::Complete => Some(Ok(Outcome {
                    result_set: false,
                    rows: tag_rows(&self.rbuf[5..5 + len]),
                })),
                Msg::EmptyQuery => Some(Ok(Outcome {
                    result_set: false,
                    rows: 0,
                })),
                Msg::Failed(e) => Some(Err(e)),
                Msg::Ready => {
                    self.rbuf.advance(5 + len);
                    break;
                }
                Msg::Parameters => None,
            };
            self.rbuf.advance(5 + len);
            if let Some(reply) = done {
                let failed = reply.as_ref().err().cloned();
                out.push(reply);
                if let Some(e) = failed {
                    // The server skips the section's other statements up to its Sync.
                    while out.len() < result_sets.len() {
                        out.push(Err(e.clone()));
                    }
                }
                rows = 0;
                result_set = result_sets.get(out.len()).copied().unwrap_or(false);
            }
        }
        if out.len() < result_sets.len() {
            return Err(protocol(
                "a pipeline's Sync came before all its statements' replies",
            ));
        }
        Ok(out)
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        self.bulk_load_text(load.into_text()).await
    }

    /// Bulk text through `COPY … FROM STDIN` (see `postgres::CopyIn::text` for why text).
    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        self.copy_in(CopyIn::text(load)).await
    }

    pub(crate) async fn bulk_load_binary(
        &mut self,
        load: PgBinaryRows,
    ) -> Result<u64, DriverError> {
        self.copy_in(CopyIn::binary(load)).await
    }

    /// The COPY statement, then its data as CopyData messages and CopyDone; the rows the
    /// server says it copied.
    async fn copy_in(&mut self, copy: CopyIn) -> Result<u64, DriverError> {
        let CopyIn {
            sql,
            header,
            chunks,
            trailer,
        } = copy;
        let copied = async {
            put_query(&mut self.wbuf, &sql)?;
            self.flush().await?;
            // CopyInResponse, or the error that refused the COPY.
            loop {
                let (tag, len) = self.fill().await?;
                match tag {
                    b'G' => {
                        self.rbuf.advance(5 + len);
                        break;
                    }
                    b'E' => return self.read_count(false).await.map(|o| o.rows),
                    _ => self.asynchronous(tag, len)?,
                }
                self.rbuf.advance(5 + len);
            }
            let data = |buf: &mut BytesMut, bytes: &[u8]| {
                buf.put_u8(b'd');
                buf.put_i32(bytes.len() as i32 + 4);
                buf.put_slice(bytes);
            };
            if let Some(h) = header {
                data(&mut self.wbuf, h);
            }
            for chunk in chunks {
                data(&mut self.wbuf, &chunk);
                self.flush().await?;
            }
            if let Some(t) = trailer {
                data(&mut self.wbuf, t);
            }
            self.wbuf.put_slice(&[b'c', 0, 0, 0, 4]);
            self.flush().await?;
            // "COPY n" then ReadyForQuery, or the error the data met.
            self.read_count(false).await.map(|o| o.rows)
        };
        copied.await.map_err(|e| e.with_statement(&sql))
    }

    /// Switch to blocking socket calls on the caller's own thread (see [`crate::OwnThread`]).
    pub(crate) fn make_blocking(&mut self, own: &crate::OwnThread) -> std::io::Result<()> {
        self.socket.make_blocking(Arc::clone(&own.abandon))
    }

    pub(crate) async fn close(mut self) {
        // Terminate, then the socket closes: the server ends the session at once.
        self.wbuf.clear();
        self.wbuf.put_slice(&[b'X', 0, 0, 0, 4]);
        let _ = self.flush().await;
        self.socket.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DataRow body: the cell count, then each cell's length (-1: NULL) and bytes.
    fn data_row(cells: &[Option<&[u8]>]) -> Vec<u8> {
        let mut b = (cells.len() as i16).to_be_bytes().to_vec();
        for c in cells {
            match c {
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b
    }

    #[test]
    fn text_rows_keep_the_servers_bytes_and_the_results_width() {
        let mut out = TextRows {
            nfields: 3,
            ..TextRows::default()
        };
        text_cells(&data_row(&[Some(b"12.50"), None, Some(b"")]), 3, &mut out).unwrap();
        // Not UTF-8: kept as sent (the decoded path wrote such a cell as hex).
        text_cells(&data_row(&[Some(b"\xff"), Some(b"x")]), 3, &mut out).unwrap();
        assert_eq!(out.nrows(), 2);
        let rows: Vec<Vec<Option<&[u8]>>> = (0..2).map(|r| out.row(r).collect()).collect();
        assert_eq!(rows[0], vec![Some(&b"12.50"[..]), None, Some(&b""[..])]);
        assert_eq!(rows[1], vec![Some(&b"\xff"[..]), Some(&b"x"[..]), None]);
        // A cell running past its message is the server's fault, said as such.
        let mut bad = data_row(&[Some(b"abc")]);
        bad.truncate(bad.len() - 1);
        assert!(text_cells(&bad, 1, &mut out).is_err());
    }

    #[test]
    fn tags_count_their_rows() {
        assert_eq!(tag_rows(b"INSERT 0 7\0"), 7);
        assert_eq!(tag_rows(b"UPDATE 3\0"), 3);
        assert_eq!(tag_rows(b"SELECT 100\0"), 100);
        assert_eq!(tag_rows(b"COPY 1000000\0"), 1_000_000);
        assert_eq!(tag_rows(b"CREATE TABLE\0"), 0);
        assert_eq!(tag_rows(b"BEGIN\0"), 0);
    }

    #[test]
    fn bind_sends_known_types_binary_and_the_rest_as_text() {
        let mut buf = BytesMut::new();
        put_bind(
            &mut buf,
            "s0",
            &[Value::Int(5), Value::Text("a".into()), Value::Null],
            Some(&[Some(Type::INT4), None, Some(Type::TEXT)]),
            &[1],
        )
        .unwrap();
        let expected: &[u8] = &[
            b'B', 0, 0, 0, 39, // length (all but the tag)
            0, b's', b'0', 0, // portal, statement
            0, 3, 0, 1, 0, 0, 0, 1, // per-parameter formats
            0, 3, // three values
            0, 0, 0, 4, 0, 0, 0, 5, // int4 5, binary
            0, 0, 0, 1, b'a', // text
            0xFF, 0xFF, 0xFF, 0xFF, // NULL
            0, 1, 0, 1, // results: binary
        ];
        assert_eq!(&buf[..], expected);
        // A wrong count is refused before anything is sent.
        let mut buf = BytesMut::new();
        let e = put_bind(&mut buf, "s0", &[], Some(&[Some(Type::INT4)]), &[1]).unwrap_err();
        assert!(e.message.contains("takes 1 parameters, 0 given"), "{e}");
    }

    #[test]
    fn rows_decode_by_column_type_and_format() {
        let columns = [
            Column {
                name: "n".into(),
                ty: Some(Type::INT8),
                binary: true,
            },
            Column {
                name: "t".into(),
                ty: Some(Type::INT4),
                binary: false,
            },
            Column {
                name: "e".into(),
                ty: None,
                binary: true,
            },
            Column {
                name: "z".into(),
                ty: Some(Type::TEXT),
                binary: true,
            },
        ];
        let mut body = vec![0, 4];
        body.extend_from_slice(&8i32.to_be_bytes());
        body.extend_from_slice(&42i64.to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"17");
        body.extend_from_slice(&3i32.to_be_bytes());
        body.extend_from_slice(b"red");
        body.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            decode_row(&body, &columns).unwrap(),
            vec![
                Value::Int(42),
                Value::Text("17".into()),
                Value::Text("red".into()),
                Value::Null
            ]
        );
        // A row cut short is a protocol error, not a panic.
        assert!(decode_row(&body[..body.len() - 6], &columns).is_err());
    }

    #[test]
    fn errors_keep_code_detail_and_severity() {
        let mut body = Vec::new();
        for (k, v) in [
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', "40P01"),
            (b'M', "deadlock detected"),
            (b'D', "Process 1 waits"),
        ] {
            body.push(k);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let policy = ErrorPolicy::default();
        let (e, fatal) = error_response(&body, &policy);
        assert!(!fatal);
        assert_eq!(e.code.as_deref(), Some("40P01"));
        assert_eq!(e.class, policy.classify("40P01"));
        assert_eq!(
            e.message,
            "PostgreSQL error 40P01: deadlock detected (Process 1 waits)"
        );
        let fatal_body = [
            b'V', b'F', b'A', b'T', b'A', b'L', 0, b'C', b'5', b'7', b'P', b'0', b'1', 0, 0,
        ];
        let (e, fatal) = error_response(&fatal_body, &policy);
        assert!(fatal);
        assert_eq!(e.kind, ErrorKind::ConnectionLost);
    }
}
