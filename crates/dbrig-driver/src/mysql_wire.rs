//! A lean MariaDB/MySQL client for benchmark clients: the statements of the hot path
//! (prepare, execute, text statements, small queries) over the wire protocol directly.
//!
//! Why it exists: measured against sysbench (libmysqlclient) on the same server, mysql_async
//! spent about 2.3× sysbench's user CPU per point select (22 µs against 9.6 µs), decoding every
//! row into owned values, parsing every column definition and going through several layers of
//! futures per packet. With client and server sharing the CPUs that time is taken from the
//! server, so the benchmark measured its own client. This client frames packets from one read
//! buffer, counts rows without decoding them and writes each command with one `write` call.
//!
//! Bulk loads use MariaDB's `COM_STMT_BULK_EXECUTE` (in `mysql_bulk.rs`, a child module).
//!
//! It speaks TLS itself (the SSL request, then rustls over its socket: `wire_socket.rs`,
//! configured by `tls.rs`) and the authentication plugins of MariaDB and MySQL that take a
//! password: `mysql_native_password`, `caching_sha2_password` (fast path, and the full exchange:
//! the password over TLS or a Unix socket, else RSA-encrypted with the server's public key,
//! `mysql_auth.rs`), MariaDB's `client_ed25519`, and `mysql_clear_password` over TLS. Another
//! plugin is refused in one line naming it. What it leaves to mysql_async (the full client,
//! [`crate::mysql`]) is `LOAD DATA` (servers without the bulk command) and a greeting of an old
//! protocol ([`WireError::Unsupported`]).
//!
//! Packet layouts follow the MariaDB/MySQL client/server protocol; the handshake packets and
//! the row decoder of the rarely used `query` path come from `mysql_common` (the protocol crate
//! under mysql_async, already compiled in).

use std::sync::Arc;

use bytes::{Buf, BytesMut};
use dbrig_core::Value;
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, Column, HandshakePacket, HandshakeResponse};
use mysql_common::proto::{Binary, MySerialize, Text};
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;

use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, Rows, TextRows};
use crate::error::{DriverError, ErrorPolicy};
use crate::mysql::{from_mysql, opts_for, server_error};
use crate::mysql_auth::{AuthPath, WireTls};
use crate::target::Target;
use crate::wire_socket::{WireError, WireSocket};

#[path = "mysql_bulk.rs"]
mod bulk;

/// A payload of this length continues in the next packet.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

const COM_QUIT: u8 = 0x01;
const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;

/// Server status flag: another result set follows this one (CALL, multi-statement text).
const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

// Binary protocol parameter types.
pub(crate) const TYPE_LONG: u8 = 0x03;
const TYPE_DOUBLE: u8 = 0x05;
const TYPE_NULL: u8 = 0x06;
pub(crate) const TYPE_LONGLONG: u8 = 0x08;
pub(crate) const TYPE_DATE: u8 = 0x0A;
pub(crate) const TYPE_DATETIME: u8 = 0x0C;
pub(crate) const TYPE_VAR_STRING: u8 = 0xFD;

/// TCP or Unix socket, read and written as one byte stream.
struct Prepared {
    id: u32,
    params: u16,
    /// The parameter types of the last execute (one type code each), empty before the first:
    /// like libmysqlclient, types are sent only when they change, and the server keeps them.
    sent_types: Vec<u8>,
    /// The result columns as the prepare described them: rows read by `execute_rows` are
    /// decoded with them when the server leaves them out of the reply (cached metadata).
    columns: Option<Arc<[Column]>>,
}

pub(crate) struct WireConnection {
    socket: WireSocket,
    rbuf: BytesMut,
    wbuf: Vec<u8>,
    /// Sequence number of the next packet (the protocol checks it per command).
    seq: u8,
    deprecate_eof: bool,
    /// MariaDB's MARIADB_CLIENT_CACHE_METADATA: an execute whose result columns are those of
    /// its prepare comes without column definitions (the server builds and sends less, as it
    /// does for sysbench's libmariadb).
    cache_metadata: bool,
    /// MariaDB's MARIADB_CLIENT_STMT_BULK_OPERATIONS: the server takes COM_STMT_BULK_EXECUTE.
    bulk_operations: bool,
    statements: Vec<Prepared>,
    policy: ErrorPolicy,
    version: String,
    connection_id: u32,
    /// How the full client reaches the same server, for `KILL QUERY` from a second connection.
    kill_opts: mysql_async::Opts,
    /// TLS asked for by the target, and how authentication went (for the trial's record).
    tls: Option<WireTls>,
    auth: AuthPath,
}

/// The client capabilities asked for (intersected with the server's): the same protocol
/// features mysql_async uses, without TLS, compression or connection attributes.
fn wanted_capabilities() -> CapabilityFlags {
    use CapabilityFlags as C;
    C::CLIENT_PROTOCOL_41
        | C::CLIENT_SECURE_CONNECTION
        | C::CLIENT_LONG_PASSWORD
        | C::CLIENT_LONG_FLAG
        | C::CLIENT_TRANSACTIONS
        | C::CLIENT_MULTI_RESULTS
        | C::CLIENT_PS_MULTI_RESULTS
        | C::CLIENT_PLUGIN_AUTH
        | C::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | C::CLIENT_DEPRECATE_EOF
        | C::CLIENT_CONNECT_WITH_DB
}

fn lost(detail: impl std::fmt::Display) -> DriverError {
    DriverError::lost(None, format!("MySQL connection lost: {detail}"))
}

/// Read a length-encoded integer at the front of `buf`.
/// A text-protocol row's `n` cells appended to `out`.
fn text_cells(packet: &[u8], n: u64, out: &mut TextRows) -> Result<(), DriverError> {
    let mut rest = packet;
    for _ in 0..n {
        if rest.first() == Some(&0xFB) {
            rest = &rest[1..];
            out.cells.push(None);
            continue;
        }
        let len = usize::try_from(lenenc(&mut rest)?)
            .ok()
            .filter(|&l| l <= rest.len())
            .ok_or_else(|| lost("malformed row: a cell runs past its packet"))?;
        let start = out.data.len();
        out.data.extend_from_slice(&rest[..len]);
        out.cells.push(Some(start..start + len));
        rest = &rest[len..];
    }
    Ok(())
}

fn lenenc(buf: &mut &[u8]) -> Result<u64, DriverError> {
    let bad = || lost("malformed length-encoded integer from the server");
    let (&first, rest) = buf.split_first().ok_or_else(bad)?;
    *buf = rest;
    let width = match first {
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        n if n < 0xFB => return Ok(u64::from(n)),
        _ => return Err(bad()),
    };
    if buf.len() < width {
        return Err(bad());
    }
    let mut v = 0u64;
    for (i, b) in buf[..width].iter().enumerate() {
        v |= u64::from(*b) << (8 * i);
    }
    *buf = &buf[width..];
    Ok(v)
}

pub(crate) fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xFA => out.push(n as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// An OK packet (also the result-set terminator under CLIENT_DEPRECATE_EOF): affected rows
/// and status flags.
fn parse_ok(payload: &[u8]) -> Result<(u64, u16), DriverError> {
    let mut rest = &payload[1..];
    let affected = lenenc(&mut rest)?;
    let _last_insert_id = lenenc(&mut rest)?;
    let status = if rest.len() >= 2 {
        u16::from_le_bytes([rest[0], rest[1]])
    } else {
        0
    };
    Ok((affected, status))
}

/// The classic EOF packet: warnings, then status flags.
fn parse_eof_status(payload: &[u8]) -> u16 {
    if payload.len() >= 5 {
        u16::from_le_bytes([payload[3], payload[4]])
    } else {
        0
    }
}

/// An ERR packet, classified by its error number like every other MySQL error.
fn parse_err(payload: &[u8], policy: &ErrorPolicy) -> DriverError {
    if payload.len() < 3 {
        return lost("malformed error packet from the server");
    }
    let code = u16::from_le_bytes([payload[1], payload[2]]);
    let mut rest = &payload[3..];
    let mut state = "HY000";
    if rest.first() == Some(&b'#') && rest.len() >= 6 {
        state = std::str::from_utf8(&rest[1..6]).unwrap_or("HY000");
        rest = &rest[6..];
    }
    server_error(code, state, &String::from_utf8_lossy(rest), policy)
}

impl WireConnection {
    /// Connect and authenticate; `Unsupported` when the server asks for something only the
    /// full client does (another authentication plugin, caching_sha2's full exchange, an old
    /// protocol).
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, WireError> {
        let Target::Mysql {
            user,
            password,
            endpoint,
            database,
            tls,
        } = target
        else {
            unreachable!("mysql wire client opened for a non-mysql target")
        };
        let tls = WireTls::for_endpoint(tls, endpoint)?;
        let place = endpoint.place();
        // One connect timeout for the whole opening (see `over` for the handshake's part).
        let deadline = tokio::time::Instant::now() + options.connect_timeout;
        let socket = match tokio::time::timeout_at(
            deadline,
            WireSocket::connect(endpoint, std::path::Path::to_path_buf),
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
            Ok(s) => s.map_err(|e| DriverError::unreachable(&place, format_args!("MySQL: {e}")))?,
        };
        let password = password.as_ref().map(|p| p.expose());
        let kill_opts = opts_for(target)?.0.into();
        let mut conn = Self::over(
            socket, user, password, database, &place, options, kill_opts, tls, deadline,
        )
        .await?;
        // Opened and authenticated async (under the connect timeout); a client that owns its
        // thread then talks in blocking calls.
        if let Some(own) = &options.own_thread {
            conn.socket
                .make_blocking(Arc::clone(&own.abandon))
                .map_err(|e| DriverError::unreachable(&place, format_args!("MySQL: {e}")))?;
        }
        Ok(conn)
    }

    /// Handshake, authenticate and read the server version over an open stream.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn over(
        socket: WireSocket,
        user: &str,
        password: Option<&str>,
        database: &str,
        place: &str,
        options: &ConnectOptions,
        kill_opts: mysql_async::Opts,
        tls: Option<WireTls>,
        deadline: tokio::time::Instant,
    ) -> Result<Self, WireError> {
        let mut conn = Self {
            socket,
            rbuf: BytesMut::with_capacity(64 * 1024),
            wbuf: Vec::with_capacity(1024),
            seq: 0,
            deprecate_eof: false,
            cache_metadata: false,
            bulk_operations: false,
            statements: Vec::new(),
            policy: options.policy.clone(),
            version: String::new(),
            connection_id: 0,
            kill_opts,
            tls,
            auth: AuthPath::default(),
        };
        // A server that took the connection (the kernel does, for a stopped server) but does
        // not finish the handshake by `deadline` did not answer.
        let opened = tokio::time::timeout_at(deadline, async {
            conn.handshake(user, password, database, place).await?;
            let version = conn.query("SELECT VERSION()", &[]).await?;
            if let Some(Value::Text(v)) = version.first().and_then(|r| r.first()) {
                conn.version = v.clone();
            }
            Ok::<_, WireError>(())
        })
        .await
        .map_err(|_| DriverError::no_reply(place, "no MySQL handshake (the server took the connection but does not answer: stopped, hung or starved)", options.connect_timeout))?;
        opened?;
        Ok(conn)
    }

    async fn handshake(
        &mut self,
        user: &str,
        password: Option<&str>,
        database: &str,
        place: &str,
    ) -> Result<(), WireError> {
        let hello = self.read_packet().await.map_err(|e| {
            WireError::Driver(DriverError::unreachable(
                place,
                format_args!("MySQL: no handshake ({e})"),
            ))
        })?;
        if hello.first() == Some(&0xFF) {
            return Err(parse_err(&hello, &self.policy).into());
        }
        // A greeting mysql_common cannot read (an old protocol): the full client decides.
        let packet: HandshakePacket<'_> = ParseBuf(&hello)
            .parse(())
            .map_err(|_| WireError::Unsupported)?;
        let server_caps = packet.capabilities();
        let mut caps = wanted_capabilities() & server_caps;
        if !caps.contains(CapabilityFlags::CLIENT_PROTOCOL_41 | CapabilityFlags::CLIENT_PLUGIN_AUTH)
        {
            return Err(WireError::Unsupported);
        }
        self.deprecate_eof = caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF);
        // MariaDB reads the extended capabilities only from a client without CLIENT_MYSQL
        // (= CLIENT_LONG_PASSWORD), which a MariaDB server does not offer. Cached metadata is
        // taken only with DEPRECATE_EOF, so a skipped definition block has no EOF to skip.
        let mariadb_caps =
            if self.deprecate_eof && !caps.contains(CapabilityFlags::CLIENT_LONG_PASSWORD) {
                packet.mariadb_ext_capabilities()
                    & (MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA
                        | MariadbCapabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS)
            } else {
                MariadbCapabilities::empty()
            };
        self.cache_metadata =
            mariadb_caps.contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA);
        self.bulk_operations =
            mariadb_caps.contains(MariadbCapabilities::MARIADB_CLIENT_STMT_BULK_OPERATIONS);
        self.connection_id = packet.connection_id();
        let nonce = packet.nonce();
        let plugin = packet
            .auth_plugin()
            .map(|p| p.into_owned())
            .unwrap_or(AuthPlugin::MysqlNativePassword);
        let version = packet.server_version_parsed().unwrap_or((5, 5, 3));
        drop(hello);
        if let Some(tls) = self.tls.take() {
            let started = crate::mysql_auth::start_tls(
                self,
                &tls,
                server_caps.contains(CapabilityFlags::CLIENT_SSL),
                caps,
                mariadb_caps,
                version,
                place,
            )
            .await?;
            if started {
                caps |= CapabilityFlags::CLIENT_SSL;
            }
            self.tls = Some(tls);
        }
        let secure = self.socket.tls().is_some() || self.socket.is_unix();
        let data = auth_data(&plugin, password, &nonce, secure)?;
        let mut payload = Vec::with_capacity(128);
        HandshakeResponse::new(
            Some(data.as_slice()),
            version,
            Some(user.as_bytes()),
            Some(database.as_bytes()),
            Some(plugin.clone()),
            caps,
            None,
            MAX_PAYLOAD as u32,
        )
        .with_mariadb_ext_capabilities(mariadb_caps)
        .serialize(&mut payload);
        self.send(&payload).await?;
        let mut plugin = plugin;
        let mut nonce = nonce;
        self.auth = AuthPath::of(&plugin);
        loop {
            let reply = self.read_packet().await.map_err(WireError::Driver)?;
            match reply.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(parse_err(&reply, &self.policy).into()),
                // Auth switch: the account uses another plugin; answer with its scramble.
                Some(0xFE) => {
                    let body = &reply[1..];
                    let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                    let name = &body[..end];
                    nonce = body.get(end + 1..).unwrap_or_default().to_vec();
                    if nonce.last() == Some(&0) {
                        nonce.pop();
                    }
                    plugin = AuthPlugin::from_bytes(name).into_owned();
                    self.auth = AuthPath::of(&plugin);
                    let data = auth_data(&plugin, password, &nonce, secure)?;
                    self.send(&data).await?;
                }
                // caching_sha2_password: 0x03 = the cached fast path worked (an OK follows);
                // 0x04 = full authentication: the password itself, over TLS or a Unix socket,
                // else encrypted with the server's RSA key.
                Some(0x01) if matches!(plugin, AuthPlugin::CachingSha2Password) => {
                    match reply.get(1) {
                        Some(0x03) => continue,
                        Some(0x04) => {
                            self.auth = crate::mysql_auth::caching_sha2_full(
                                self,
                                password.unwrap_or_default(),
                                &nonce,
                                secure,
                            )
                            .await?;
                        }
                        _ => return Err(lost("unexpected caching_sha2_password reply").into()),
                    }
                }
                _ => return Err(lost("unexpected reply during authentication").into()),
            }
        }
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn socket_mut(&mut self) -> &mut WireSocket {
        &mut self.socket
    }

    pub(crate) fn error_packet(&self, payload: &[u8]) -> DriverError {
        parse_err(payload, &self.policy)
    }

    /// TLS and authentication as negotiated.
    pub(crate) fn security(&self) -> dbrig_core::results::ConnectionSecurity {
        crate::mysql_auth::security(self.tls.as_ref(), self.socket.tls(), &self.auth)
    }

    /// The server's id of this connection (what `KILL QUERY` takes).
    #[allow(dead_code)]
    pub(crate) fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// Its socket is in blocking mode (a client that owns its thread).
    pub(crate) fn is_blocking(&self) -> bool {
        self.socket.is_blocking()
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        // The columns are parsed once here (not on the hot path) so that `execute_rows` can
        // decode a reply whose metadata the server cached.
        let (mut prepared, columns) = self.prepare_statement(sql, true).await?;
        prepared.columns = columns;
        self.statements.push(prepared);
        Ok(())
    }

    /// COM_STMT_PREPARE; the result columns' definitions are parsed only when `keep_columns`
    /// (a query whose rows are decoded; the hot path only counts rows).
    async fn prepare_statement(
        &mut self,
        sql: &str,
        keep_columns: bool,
    ) -> Result<(Prepared, Option<Arc<[Column]>>), DriverError> {
        self.command(COM_STMT_PREPARE, sql.as_bytes()).await?;
        let first = self.read_packet().await?;
        match first.first() {
            Some(0x00) if first.len() >= 12 => {}
            Some(0xFF) => return Err(parse_err(&first, &self.policy)),
            _ => return Err(lost("unexpected reply to COM_STMT_PREPARE")),
        }
        let id = u32::from_le_bytes([first[1], first[2], first[3], first[4]]);
        let columns = u16::from_le_bytes([first[5], first[6]]);
        let params = u16::from_le_bytes([first[7], first[8]]);
        // Parameter and column definitions follow, each block closed by an EOF packet unless
        // the server deprecated EOF. Parameter definitions are not needed: execute sends its
        // own types.
        if params > 0 {
            self.skip_column_definitions(u64::from(params)).await?;
        }
        let kept = if keep_columns {
            Some(self.read_column_definitions(u64::from(columns)).await?)
        } else {
            if columns > 0 {
                self.skip_column_definitions(u64::from(columns)).await?;
            }
            None
        };
        let prepared = Prepared {
            id,
            params,
            sent_types: Vec::new(),
            columns: None,
        };
        Ok((prepared, kept))
    }

    fn check_params(&self, idx: usize, params: &[Value]) -> Result<(), DriverError> {
        let expected = self.statements[idx].params;
        if usize::from(expected) != params.len() {
            return Err(DriverError::fatal(
                crate::error::ErrorKind::Statement,
                format!(
                    "statement expects {expected} parameter(s), {} given",
                    params.len()
                ),
            ));
        }
        Ok(())
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        self.check_params(idx, params)?;
        self.send_execute(idx, params).await?;
        self.read_count().await
    }

    /// A prepared statement's rows, decoded (a script that reads them: sysbench's
    /// `fetch_row()` on a prepared statement's result).
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        self.check_params(idx, params)?;
        self.send_execute(idx, params).await?;
        let columns = self.statements[idx].columns.clone();
        self.read_rows_named::<Binary>(columns).await
    }

    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        self.command(COM_QUERY, sql.as_bytes()).await?;
        self.read_count().await
    }

    /// All rows of a query, typed as the full client types them (metadata queries, counters).
    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        text: bool,
    ) -> Result<Rows, DriverError> {
        if text || params.is_empty() {
            self.command(COM_QUERY, sql.as_bytes()).await?;
            return self.read_rows_named::<Text>(None).await;
        }
        let (stmt, columns) = self.prepare_statement(sql, true).await?;
        let id = stmt.id;
        self.statements.push(stmt);
        let idx = self.statements.len() - 1;
        let sent = self.send_execute(idx, params).await;
        self.statements.pop();
        let rows = match sent {
            Ok(()) => self.read_rows_named::<Binary>(columns).await,
            Err(e) => Err(e),
        };
        // Closing has no reply; the server caps open statements (max_prepared_stmt_count).
        let closed = self.command(COM_STMT_CLOSE, &id.to_le_bytes()).await;
        let rows = rows?;
        closed?;
        Ok(rows)
    }

    /// A text query's first result set, its cells copied from the row packets as they are
    /// (length-encoded strings, 0xFB for NULL) into `out` (emptied first, its buffers kept):
    /// no column definition parsed, no value decoded.
    pub(crate) async fn query_text_into(
        &mut self,
        sql: &str,
        out: &mut TextRows,
    ) -> Result<(), DriverError> {
        out.clear();
        self.command(COM_QUERY, sql.as_bytes()).await?;
        let mut first_set = true;
        loop {
            let first = self.read_packet().await?;
            let status = match first.first() {
                Some(0x00) => parse_ok(&first)?.1,
                Some(0xFF) => return Err(parse_err(&first, &self.policy)),
                Some(0xFB) => return Err(self.refuse_local_infile().await),
                _ => {
                    let (n, definitions_follow) = self.column_count(&first)?;
                    if definitions_follow {
                        self.skip_column_definitions(n).await?;
                    }
                    if first_set {
                        out.nfields = usize::try_from(n)
                            .map_err(|_| lost("a result with more columns than memory"))?;
                    }
                    loop {
                        let p = self.read_packet().await?;
                        if p.first() == Some(&0xFF) {
                            return Err(parse_err(&p, &self.policy));
                        }
                        if self.is_terminator(&p) {
                            break self.terminator_status(&p)?;
                        }
                        if first_set {
                            text_cells(&p, n, out)?;
                        }
                    }
                }
            };
            first_set = false;
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        Ok(self.query_rows(sql, params, false).await?.rows)
    }

    /// `KILL QUERY` for this connection, sent by the full client from a second connection.
    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::Mysql {
            opts: self.kill_opts.clone(),
            connection_id: self.connection_id,
        })
    }

    /// Switch to blocking socket calls on the caller's own thread (see [`crate::OwnThread`]).
    pub(crate) fn make_blocking(&mut self, own: &crate::OwnThread) -> std::io::Result<()> {
        self.socket.make_blocking(Arc::clone(&own.abandon))
    }

    pub(crate) async fn close(mut self) {
        let _ = self.command(COM_QUIT, &[]).await;
        self.socket.shutdown().await;
    }

    /// COM_STMT_EXECUTE of statement `idx` with every parameter bound by type (integers as
    /// LONGLONG, floats as DOUBLE, text as VAR_STRING), as a single write. The types go out
    /// on the first execute and whenever one changes (a NULL, say); otherwise the server uses
    /// the ones it has, as it does for libmysqlclient.
    async fn send_execute(&mut self, idx: usize, params: &[Value]) -> Result<(), DriverError> {
        let stmt = &mut self.statements[idx];
        let mut body = std::mem::take(&mut self.wbuf);
        body.clear();
        body.extend_from_slice(&[0; 4]); // packet header, filled in by `frame`
        body.push(COM_STMT_EXECUTE);
        body.extend_from_slice(&stmt.id.to_le_bytes());
        body.push(0); // no cursor
        body.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            let bitmap_at = body.len();
            body.resize(bitmap_at + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Value::Null) {
                    body[bitmap_at + i / 8] |= 1 << (i % 8);
                }
            }
            let type_of = |p: &Value| match p {
                Value::Null => TYPE_NULL,
                Value::Int(_) => TYPE_LONGLONG,
                Value::Float(_) => TYPE_DOUBLE,
                Value::Text(_) => TYPE_VAR_STRING,
            };
            let same_types = stmt.sent_types.len() == params.len()
                && stmt
                    .sent_types
                    .iter()
                    .zip(params)
                    .all(|(&t, p)| t == type_of(p));
            if same_types {
                body.push(0); // types as last sent
            } else {
                body.push(1); // types follow
                stmt.sent_types.clear();
                for p in params {
                    body.extend_from_slice(&[type_of(p), 0]);
                    stmt.sent_types.push(type_of(p));
                }
            }
            for p in params {
                match p {
                    Value::Null => {}
                    Value::Int(i) => body.extend_from_slice(&i.to_le_bytes()),
                    Value::Float(f) => body.extend_from_slice(&f.to_le_bytes()),
                    Value::Text(s) => {
                        put_lenenc(&mut body, s.len() as u64);
                        body.extend_from_slice(s.as_bytes());
                    }
                }
            }
        }
        self.seq = 0;
        let result = self.write_framed(&mut body).await;
        self.wbuf = body;
        if result.is_err() {
            // Whether the server got the types is unknown: send them again next time.
            self.statements[idx].sent_types.clear();
        }
        result
    }

    /// Send one command packet (sequence restarts at 0 for every command).
    async fn command(&mut self, code: u8, arg: &[u8]) -> Result<(), DriverError> {
        let mut body = std::mem::take(&mut self.wbuf);
        body.clear();
        body.extend_from_slice(&[0; 4]);
        body.push(code);
        body.extend_from_slice(arg);
        self.seq = 0;
        let result = self.write_framed(&mut body).await;
        self.wbuf = body;
        result
    }

    /// Send a payload as the next packet of the current exchange (authentication replies).
    pub(crate) async fn send(&mut self, payload: &[u8]) -> Result<(), DriverError> {
        let mut body = Vec::with_capacity(payload.len() + 4);
        body.extend_from_slice(&[0; 4]);
        body.extend_from_slice(payload);
        self.write_framed(&mut body).await
    }

    /// Write `body` (4 reserved header bytes, then the payload) as one or more packets.
    async fn write_framed(&mut self, body: &mut [u8]) -> Result<(), DriverError> {
        let len = body.len() - 4;
        if len < MAX_PAYLOAD {
            let l = (len as u32).to_le_bytes();
            body[..4].copy_from_slice(&[l[0], l[1], l[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            return self.socket.write_all(body).await.map_err(lost);
        }
        // A payload of 16 MiB or more goes out in pieces, the last one shorter than the limit.
        let mut out = Vec::with_capacity(len + 4 * (len / MAX_PAYLOAD + 1));
        let mut chunks = body[4..].chunks(MAX_PAYLOAD).peekable();
        while let Some(chunk) = chunks.next() {
            let l = (chunk.len() as u32).to_le_bytes();
            out.extend_from_slice(&[l[0], l[1], l[2], self.seq]);
            out.extend_from_slice(chunk);
            self.seq = self.seq.wrapping_add(1);
            // A payload that is an exact multiple of the limit ends with an empty packet.
            if chunks.peek().is_none() && chunk.len() == MAX_PAYLOAD {
                out.extend_from_slice(&[0, 0, 0, self.seq]);
                self.seq = self.seq.wrapping_add(1);
            }
        }
        self.socket.write_all(&out).await.map_err(lost)
    }

    /// The next packet's payload (pieces of a 16 MiB+ payload joined).
    pub(crate) async fn read_packet(&mut self) -> Result<BytesMut, DriverError> {
        let mut joined: Option<BytesMut> = None;
        loop {
            while self.rbuf.len() < 4 || self.rbuf.len() < 4 + self.frame_len() {
                // All read so far is consumed (between statements, mostly): read from the
                // buffer's front again when no packet still shares it (no copy, no
                // allocation). Sliding on through the whole 64 KiB instead made every
                // connection's buffer resident: 64 MB at 1 024 clients.
                if self.rbuf.is_empty() {
                    let _ = self.rbuf.try_reclaim(64 * 1024);
                }
                if self.rbuf.capacity() - self.rbuf.len() < 4096 {
                    self.rbuf.reserve(64 * 1024);
                }
                let n = self.socket.read_into(&mut self.rbuf).await.map_err(lost)?;
                if n == 0 {
                    return Err(lost("the server closed the connection"));
                }
            }
            let len = self.frame_len();
            self.seq = self.rbuf[3].wrapping_add(1);
            self.rbuf.advance(4);
            let piece = self.rbuf.split_to(len);
            match (len == MAX_PAYLOAD, joined.as_mut()) {
                (false, None) => return Ok(piece),
                (false, Some(j)) => {
                    j.extend_from_slice(&piece);
                    return Ok(joined.expect("joined"));
                }
                (true, Some(j)) => j.extend_from_slice(&piece),
                (true, None) => joined = Some(piece),
            }
        }
    }

    /// Count and drop the whole rows at the front of the read buffer, where they lie: a row
    /// split off as a packet of its own costs a `BytesMut` split (reference counts, a drop)
    /// for every row of a range select, which only its count is wanted of. Stops before
    /// anything that is not such a row (a terminator, an error, a row of 16 MiB or more) and
    /// before a frame not wholly read yet; [`Self::read_packet`] takes it from there.
    fn skip_buffered_rows(&mut self) -> u64 {
        let mut rows = 0;
        while self.rbuf.len() >= 4 {
            let len = self.frame_len();
            if len == MAX_PAYLOAD || self.rbuf.len() < 4 + len {
                break;
            }
            let body = &self.rbuf[4..4 + len];
            if body.first() == Some(&0xFF) || self.is_terminator(body) {
                break;
            }
            self.seq = self.rbuf[3].wrapping_add(1);
            self.rbuf.advance(4 + len);
            rows += 1;
        }
        rows
    }

    fn frame_len(&self) -> usize {
        usize::from(self.rbuf[0]) | usize::from(self.rbuf[1]) << 8 | usize::from(self.rbuf[2]) << 16
    }

    /// Whether `packet` ends a result set's rows (and so is not a row).
    fn is_terminator(&self, packet: &[u8]) -> bool {
        packet.first() == Some(&0xFE)
            && if self.deprecate_eof {
                packet.len() < MAX_PAYLOAD
            } else {
                packet.len() < 9
            }
    }

    fn terminator_status(&self, packet: &[u8]) -> Result<u16, DriverError> {
        if self.deprecate_eof {
            Ok(parse_ok(packet)?.1)
        } else {
            Ok(parse_eof_status(packet))
        }
    }

    /// Read a statement's whole reply, counting rows without decoding them: the first result
    /// decides the outcome, later results (CALL) are read and dropped.
    async fn read_count(&mut self) -> Result<Outcome, DriverError> {
        let mut outcome = None;
        loop {
            let first = self.read_packet().await?;
            let (this, status) = match first.first() {
                Some(0x00) => {
                    let (affected, status) = parse_ok(&first)?;
                    (
                        Outcome {
                            result_set: false,
                            rows: affected,
                        },
                        status,
                    )
                }
                Some(0xFF) => return Err(parse_err(&first, &self.policy)),
                Some(0xFB) => return Err(self.refuse_local_infile().await),
                _ => {
                    let (columns, definitions_follow) = self.column_count(&first)?;
                    if definitions_follow {
                        self.skip_column_definitions(columns).await?;
                    }
                    let mut rows = 0u64;
                    let status = loop {
                        rows += self.skip_buffered_rows();
                        let p = self.read_packet().await?;
                        if p.first() == Some(&0xFF) {
                            return Err(parse_err(&p, &self.policy));
                        }
                        if self.is_terminator(&p) {
                            break self.terminator_status(&p)?;
                        }
                        rows += 1;
                    };
                    (
                        Outcome {
                            result_set: true,
                            rows,
                        },
                        status,
                    )
                }
            };
            outcome.get_or_insert(this);
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(outcome.expect("set above"));
            }
        }
    }

    /// Read the rows of the first result set with its column names, decoded with
    /// mysql_common's row decoder. `prepared_columns`: the columns the statement's prepare
    /// described, for a reply that leaves them out (cached metadata).
    async fn read_rows_named<P>(
        &mut self,
        prepared_columns: Option<Arc<[Column]>>,
    ) -> Result<Rows, DriverError>
    where
        RowDeserializer<ServerSide, P>:
            for<'a> mysql_common::proto::MyDeserialize<'a, Ctx = Arc<[Column]>>,
        mysql_common::row::Row: From<RowDeserializer<ServerSide, P>>,
    {
        let mut out = Vec::new();
        let mut names = Vec::new();
        let mut first_set = true;
        loop {
            let first = self.read_packet().await?;
            let status = match first.first() {
                Some(0x00) => parse_ok(&first)?.1,
                Some(0xFF) => return Err(parse_err(&first, &self.policy)),
                Some(0xFB) => return Err(self.refuse_local_infile().await),
                _ => {
                    let (n, definitions_follow) = self.column_count(&first)?;
                    let columns = match (definitions_follow, &prepared_columns) {
                        (false, Some(c)) => Arc::clone(c),
                        (false, None) => {
                            return Err(lost("result without column definitions for a query"));
                        }
                        (true, _) => self.read_column_definitions(n).await?,
                    };
                    if first_set {
                        names = columns.iter().map(|c| c.name_str().into_owned()).collect();
                    }
                    loop {
                        let p = self.read_packet().await?;
                        if p.first() == Some(&0xFF) {
                            return Err(parse_err(&p, &self.policy));
                        }
                        if self.is_terminator(&p) {
                            break self.terminator_status(&p)?;
                        }
                        if !first_set {
                            continue;
                        }
                        let row: mysql_common::row::Row = ParseBuf(&p)
                            .parse::<RowDeserializer<ServerSide, P>>(columns.clone())
                            .map_err(|e| lost(format_args!("malformed row: {e}")))?
                            .into();
                        let values = row.unwrap();
                        out.push(
                            values
                                .into_iter()
                                .zip(columns.iter())
                                .map(|(v, c)| from_mysql(v, c))
                                .collect(),
                        );
                    }
                }
            };
            first_set = false;
            if status & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(Rows {
                    columns: names,
                    rows: out,
                });
            }
        }
    }

    /// A result set's column-count packet: the count, and whether column definitions follow
    /// (always, unless cached metadata let the server leave them out).
    fn column_count(&self, packet: &[u8]) -> Result<(u64, bool), DriverError> {
        let mut rest = packet;
        let n = lenenc(&mut rest)?;
        let follow = !self.cache_metadata || rest.first() != Some(&0);
        Ok((n, follow))
    }

    /// A block of `n` column definitions (and its EOF, without DEPRECATE_EOF), parsed.
    async fn read_column_definitions(&mut self, n: u64) -> Result<Arc<[Column]>, DriverError> {
        let mut columns = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let p = self.read_packet().await?;
            let c: Column = ParseBuf(&p)
                .parse(())
                .map_err(|e| lost(format_args!("malformed column definition: {e}")))?;
            columns.push(c);
        }
        if n > 0 && !self.deprecate_eof {
            self.read_packet().await?;
        }
        Ok(columns.into())
    }

    async fn skip_column_definitions(&mut self, columns: u64) -> Result<(), DriverError> {
        let n = columns + u64::from(!self.deprecate_eof);
        for _ in 0..n {
            self.read_packet().await?;
        }
        Ok(())
    }

    /// LOAD DATA LOCAL goes through the full client. The lean client does not offer local files,
    /// so servers refuse the statement; one that asks anyway gets an empty file, which keeps the
    /// connection in step.
    async fn refuse_local_infile(&mut self) -> DriverError {
        if let Err(e) = self.write_framed(&mut [0; 4]).await {
            return e;
        }
        let _ = self.read_packet().await;
        DriverError::fatal(
            crate::error::ErrorKind::Statement,
            "LOAD DATA LOCAL is not available on a benchmark client connection",
        )
    }
}

/// The authentication response of `plugin` for this password and nonce.
fn auth_data(
    plugin: &AuthPlugin<'_>,
    password: Option<&str>,
    nonce: &[u8],
    secure: bool,
) -> Result<Vec<u8>, WireError> {
    match plugin {
        // The password itself, only where nobody can read it on the way.
        AuthPlugin::MysqlClearPassword if !secure => Err(crate::mysql_auth::unsupported_plugin(
            "mysql_clear_password",
            " without TLS (it sends the password as it is; add sslmode=require)",
        )
        .into()),
        AuthPlugin::MysqlNativePassword
        | AuthPlugin::CachingSha2Password
        | AuthPlugin::Ed25519
        | AuthPlugin::MysqlClearPassword => Ok(plugin
            .gen_data(password, nonce)
            .map(|d| {
                let mut v = Vec::new();
                d.serialize(&mut v);
                v
            })
            .unwrap_or_default()),
        other => Err(crate::mysql_auth::unsupported_plugin(
            &String::from_utf8_lossy(other.as_bytes()),
            "",
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mysql::MysqlConnection;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    const MARIADB: &str = "mysql://root@127.0.0.1:3306/test";

    async fn lean() -> WireConnection {
        let target = Target::parse(MARIADB).unwrap();
        match WireConnection::connect(&target, &ConnectOptions::default()).await {
            Ok(c) => c,
            Err(WireError::Driver(e)) => panic!("{e}"),
            Err(WireError::Unsupported) => {
                panic!("the machine's MariaDB should take the lean client")
            }
        }
    }

    /// A connection whose server is the test: `server` gets the other end of the pipe.
    pub(super) fn piped() -> (WireConnection, DuplexStream) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let conn = WireConnection {
            socket: WireSocket::Other(Box::new(client)),
            rbuf: BytesMut::new(),
            wbuf: Vec::new(),
            seq: 0,
            deprecate_eof: true,
            cache_metadata: false,
            bulk_operations: false,
            statements: Vec::new(),
            policy: ErrorPolicy::default(),
            version: String::new(),
            connection_id: 0,
            kill_opts: mysql_async::Opts::default(),
            tls: None,
            auth: AuthPath::default(),
        };
        (conn, server)
    }

    pub(super) fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let l = (payload.len() as u32).to_le_bytes();
        let mut p = vec![l[0], l[1], l[2], seq];
        p.extend_from_slice(payload);
        p
    }

    /// A protocol-10 greeting offering `plugin` (what every MariaDB/MySQL server sends first).
    fn greeting(plugin: &str) -> Vec<u8> {
        let caps = (wanted_capabilities() | CapabilityFlags::CLIENT_LOCAL_FILES).bits();
        let mut g = vec![10];
        g.extend_from_slice(b"5.5.5-10.11.0-MariaDB\0");
        g.extend_from_slice(&7u32.to_le_bytes());
        g.extend_from_slice(b"abcdefgh\0");
        g.extend_from_slice(&(caps as u16).to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(b"ijklmnopqrst\0");
        g.extend_from_slice(plugin.as_bytes());
        g.push(0);
        g
    }

    #[test]
    fn length_encoded_integers_round_trip() {
        for n in [
            0u64,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc(&mut out, n);
            let mut slice = &out[..];
            assert_eq!(lenenc(&mut slice).unwrap(), n, "{n}");
            assert!(slice.is_empty());
        }
        assert!(lenenc(&mut &[0xFFu8][..]).is_err());
        assert!(lenenc(&mut &[0xFCu8, 1][..]).is_err());
    }

    #[test]
    fn ok_and_error_packets_parse() {
        // OK: 3 affected rows, insert id 0, status SERVER_MORE_RESULTS_EXISTS, 0 warnings.
        let ok = [0x00, 3, 0, 0x08, 0x00, 0, 0];
        assert_eq!(parse_ok(&ok).unwrap(), (3, SERVER_MORE_RESULTS_EXISTS));
        let mut err = vec![0xFF];
        err.extend_from_slice(&1146u16.to_le_bytes());
        err.extend_from_slice(b"#42S02Table 'test.nope' doesn't exist");
        let e = parse_err(&err, &ErrorPolicy::default());
        assert_eq!(e.kind, crate::error::ErrorKind::MissingTable);
        assert!(e.to_string().contains("1146"), "{e}");
        assert!(e.to_string().contains("42S02"), "{e}");
    }

    /// Parameter types go out on the first execute and again only when one changes; a reply
    /// whose column-count packet says "no definitions" (cached metadata) is read as rows.
    #[tokio::test]
    async fn types_are_sent_when_they_change_and_cached_metadata_is_understood() {
        let (mut conn, mut server) = piped();
        conn.cache_metadata = true;
        conn.statements.push(Prepared {
            id: 9,
            params: 1,
            sent_types: Vec::new(),
            columns: None,
        });
        // Each reply: 1 column, no definitions (flag 0), one row, the OK terminator.
        let mut reply = packet(1, &[1, 0]);
        reply.extend_from_slice(&packet(2, &[0x00, 0x00, 1, b'v']));
        reply.extend_from_slice(&packet(3, &[0xFE, 0, 0, 2, 0, 0, 0]));
        let serve = tokio::spawn(async move {
            let mut requests = Vec::new();
            for _ in 0..3 {
                let mut head = [0u8; 4];
                server.read_exact(&mut head).await.unwrap();
                let len = usize::from(head[0]) | usize::from(head[1]) << 8;
                let mut body = vec![0; len];
                server.read_exact(&mut body).await.unwrap();
                requests.push(body);
                server.write_all(&reply).await.unwrap();
            }
            requests
        });
        for v in [Value::Int(5), Value::Int(6), Value::Null] {
            let out = conn.execute(0, &[v]).await.unwrap();
            assert_eq!(
                out,
                Outcome {
                    result_set: true,
                    rows: 1
                }
            );
        }
        let requests = serve.await.unwrap();
        // COM_STMT_EXECUTE, id, cursor, iterations, null bitmap, then the new-params-bound flag.
        let bound = |r: &Vec<u8>| r[11];
        assert_eq!(bound(&requests[0]), 1, "types on the first execute");
        assert_eq!(&requests[0][12..14], &[TYPE_LONGLONG, 0]);
        assert_eq!(bound(&requests[1]), 0, "same types: not sent again");
        assert_eq!(&requests[1][12..], &6i64.to_le_bytes());
        assert_eq!(bound(&requests[2]), 1, "a NULL changes the types");
        assert_eq!(requests[2][10], 1, "null bitmap");
    }

    /// Rows are counted where they lie in the read buffer: whole frames are skipped, a frame
    /// cut by a read is finished by `read_packet`, an error after some rows is the statement's
    /// error, and the next statement reads its own reply from where the last one ended.
    #[tokio::test]
    async fn rows_are_counted_across_reads_and_an_error_after_rows_is_seen() {
        let (mut conn, mut server) = piped();
        conn.cache_metadata = true;
        conn.statements.push(Prepared {
            id: 9,
            params: 0,
            sent_types: Vec::new(),
            columns: None,
        });
        // 1 column, no definitions; rows `0x00, null bitmap, lenenc string`; OK terminator.
        let result = |rows: u32, end: &[u8]| {
            let mut reply = packet(1, &[1, 0]);
            let mut seq = 2u8;
            for i in 0..rows {
                let v = i.to_string();
                let mut row = vec![0x00, 0x00, v.len() as u8];
                row.extend_from_slice(v.as_bytes());
                reply.extend_from_slice(&packet(seq, &row));
                seq = seq.wrapping_add(1);
            }
            reply.extend_from_slice(&packet(seq, end));
            reply
        };
        let ok_end = [0xFE, 0, 0, 2, 0, 0, 0];
        let mut err = vec![0xFF];
        err.extend_from_slice(&1317u16.to_le_bytes());
        err.extend_from_slice(b"#70100Query execution was interrupted");
        let replies = [result(1000, &ok_end), result(3, &err), result(1, &ok_end)];
        let serve = tokio::spawn(async move {
            for reply in replies {
                let mut head = [0u8; 4];
                server.read_exact(&mut head).await.unwrap();
                let len = usize::from(head[0]) | usize::from(head[1]) << 8;
                server.read_exact(&mut vec![0; len]).await.unwrap();
                // 7 bytes at a time: frames and headers straddle the client's reads.
                for piece in reply.chunks(7) {
                    server.write_all(piece).await.unwrap();
                    tokio::task::yield_now().await;
                }
            }
        });
        let counted = |rows| Outcome {
            result_set: true,
            rows,
        };
        assert_eq!(conn.execute(0, &[]).await.unwrap(), counted(1000));
        let e = conn.execute(0, &[]).await.unwrap_err();
        assert!(e.to_string().contains("1317"), "{e}");
        assert_eq!(conn.execute(0, &[]).await.unwrap(), counted(1));
        serve.await.unwrap();
    }

    /// On the machine's MariaDB (10.6+) the lean client takes cached metadata; prepared
    /// executes then come without column definitions and still count and decode their rows.
    #[tokio::test]
    async fn mariadb_cached_metadata_counts_and_decodes_rows() {
        let mut c = lean().await;
        assert!(
            c.cache_metadata,
            "MariaDB {} offers cached metadata",
            c.version
        );
        c.prepare("SELECT ? + 1, 'x' UNION ALL SELECT 2, 'y'")
            .await
            .unwrap();
        for _ in 0..3 {
            let out = c.execute(0, &[Value::Int(1)]).await.unwrap();
            assert_eq!(
                out,
                Outcome {
                    result_set: true,
                    rows: 2
                }
            );
        }
        let rows = c
            .query("SELECT ? * 2 AS d, 'z' AS t", &[Value::Int(21)])
            .await
            .unwrap();
        assert_eq!(rows, vec![vec![Value::Int(42), Value::Text("z".into())]]);
        c.close().await;
    }

    /// A connection that owns its thread switches to blocking calls after an async connect,
    /// runs statements, and gives up a statement that never ends once `abandon` is raised.
    #[test]
    fn an_own_thread_connection_blocks_and_can_be_abandoned() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let abandon = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let options = ConnectOptions {
            lean: true,
            own_thread: Some(crate::OwnThread {
                abandon: Arc::clone(&abandon),
            }),
            ..ConnectOptions::default()
        };
        let target = Target::parse(MARIADB).unwrap();
        rt.block_on(async {
            let mut c = match WireConnection::connect(&target, &options).await {
                Ok(c) => c,
                Err(e) => panic!("{e:?}"),
            };
            assert!(matches!(c.socket, WireSocket::Blocking { .. }));
            c.prepare("SELECT ?").await.unwrap();
            for i in 0..100 {
                let out = c.execute(0, &[Value::Int(i)]).await.unwrap();
                assert_eq!(out.rows, 1);
            }
            let raiser = {
                let abandon = Arc::clone(&abandon);
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(600));
                    abandon.store(true, std::sync::atomic::Ordering::Relaxed);
                })
            };
            let started = std::time::Instant::now();
            let e = c.execute_text("DO SLEEP(30)").await.unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(10), "{e}");
            assert_eq!(e.class, dbrig_core::ErrorClass::Reconnect, "{e}");
            assert!(e.to_string().contains("abandoned"), "{e}");
            raiser.join().unwrap();
        });
    }

    /// Connect to a fake server that greets offering `plugin` and answers the client's
    /// response with `reply` (if any).
    async fn handshake_against(plugin: &str, reply: Option<Vec<u8>>) -> Result<(), WireError> {
        let (stream, mut server) = tokio::io::duplex(1 << 16);
        let greeting = packet(0, &greeting(plugin));
        let serve = tokio::spawn(async move {
            server.write_all(&greeting).await.unwrap();
            let mut sink = vec![0; 4096];
            let _ = server.read(&mut sink).await;
            if let Some(reply) = reply {
                server.write_all(&reply).await.unwrap();
                let _ = server.read(&mut sink).await;
            }
        });
        let r = WireConnection::over(
            WireSocket::Other(Box::new(stream)),
            "u",
            Some("p"),
            "d",
            "pipe",
            &ConnectOptions::default(),
            mysql_async::Opts::default(),
            None,
            tokio::time::Instant::now() + std::time::Duration::from_secs(10),
        )
        .await;
        serve.abort();
        r.map(|_| ())
    }

    /// A plugin dbrig cannot speak is one line naming it and what to do (no fallback: the
    /// full client could not speak it either). caching_sha2_password's full exchange is
    /// `mysql_auth`'s test.
    #[tokio::test]
    async fn an_unknown_auth_plugin_is_named_in_one_line() {
        let r = handshake_against("dialog", None).await;
        match r {
            Err(WireError::Driver(e)) => {
                assert_eq!(e.kind, crate::error::ErrorKind::Unsupported, "{e}");
                assert!(e.to_string().contains("'dialog'"), "{e}");
                assert!(e.to_string().contains("ALTER USER"), "{e}");
            }
            other => panic!("{:?}", other.err()),
        }
    }

    #[tokio::test]
    async fn payloads_of_16_mib_and_more_are_split_and_joined() {
        let (mut conn, mut server) = piped();
        // Writing: 16 MiB + 10 bytes go out as a full packet and a 10-byte one.
        let big = vec![b'x'; MAX_PAYLOAD + 9];
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            let mut buf = vec![0; 1 << 20];
            while all.len() < MAX_PAYLOAD + 10 + 8 {
                let n = server.read(&mut buf).await.unwrap();
                all.extend_from_slice(&buf[..n]);
            }
            (all, server)
        });
        conn.command(COM_QUERY, &big).await.unwrap();
        let (all, mut server) = reader.await.unwrap();
        assert_eq!(&all[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&all[4 + MAX_PAYLOAD..8 + MAX_PAYLOAD], &[10, 0, 0, 1]);
        assert_eq!(all.len(), MAX_PAYLOAD + 10 + 8);

        // Reading: a full packet, then an empty one, is one payload of exactly 16 MiB - 1.
        let writer = tokio::spawn(async move {
            let mut wire = packet(1, &vec![b'y'; MAX_PAYLOAD]);
            wire.extend_from_slice(&packet(2, &[]));
            wire.extend_from_slice(&packet(3, b"next"));
            server.write_all(&wire).await.unwrap();
            server
        });
        let joined = conn.read_packet().await.unwrap();
        assert_eq!(joined.len(), MAX_PAYLOAD);
        assert_eq!(&conn.read_packet().await.unwrap()[..], b"next");
        drop(writer.await.unwrap());
        let e = conn.read_packet().await.unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::ConnectionLost, "{e}");
    }

    /// The lean client must type values exactly as the full one, on both protocols.
    #[tokio::test]
    async fn lean_and_full_clients_return_the_same_values() {
        let target = Target::parse(MARIADB).unwrap();
        let mut full = MysqlConnection::connect(&target, &ConnectOptions::default())
            .await
            .unwrap();
        let mut lean = lean().await;
        assert_eq!(lean.server_version(), full.server_version());
        assert!(lean.connection_id() > 0);
        let t = format!("wire_values_{}", std::process::id());
        lean.execute_text(&format!(
            "CREATE TABLE {t} (i INT, u BIGINT UNSIGNED, d DECIMAL(20,4), f DOUBLE, \
             s VARCHAR(40), n INT NULL, dt DATE, ts DATETIME(3), tm TIME, b BLOB)"
        ))
        .await
        .unwrap();
        lean.prepare(&format!(
            "INSERT INTO {t} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .await
        .unwrap();
        for (k, row) in [
            vec![
                Value::Int(-5),
                Value::Text("18446744073709551615".into()),
                Value::Text("12345.6789".into()),
                Value::Float(2.5),
                Value::Text("héllo".into()),
                Value::Null,
                Value::Text("2024-02-29".into()),
                Value::Text("2024-02-29 23:59:58.125".into()),
                Value::Text("-838:59:59".into()),
                Value::Text("\u{0}\t\n".into()),
            ],
            vec![Value::Null; 10],
        ]
        .into_iter()
        .enumerate()
        {
            let o = lean.execute(0, &row).await.unwrap();
            assert_eq!((o.result_set, o.rows), (false, 1), "row {k}");
        }
        for (sql, params) in [
            (format!("SELECT * FROM {t} ORDER BY i"), vec![]),
            (
                format!("SELECT * FROM {t} WHERE i = ? OR i IS NULL ORDER BY i"),
                vec![Value::Int(-5)],
            ),
            ("SELECT 1, 'a', NULL, 2.5e0, 1.50".to_string(), vec![]),
        ] {
            let a = lean.query(&sql, &params).await.unwrap();
            let b = full.query(&sql, &params).await.unwrap();
            assert_eq!(a, b, "{sql}");
            assert!(!a.is_empty());
        }
        // Counting without decoding: a result set counts its rows, a change its affected rows.
        lean.prepare(&format!("SELECT i FROM {t} WHERE i = ? OR ? = 1"))
            .await
            .unwrap();
        let o = lean
            .execute(1, &[Value::Int(-5), Value::Int(1)])
            .await
            .unwrap();
        assert_eq!((o.result_set, o.rows), (true, 2));
        let o = lean
            .execute(1, &[Value::Int(7), Value::Int(0)])
            .await
            .unwrap();
        assert_eq!((o.result_set, o.rows), (true, 0));
        let o = lean
            .execute_text(&format!("UPDATE {t} SET f = 1 WHERE i IS NULL"))
            .await
            .unwrap();
        assert_eq!((o.result_set, o.rows), (false, 1));
        lean.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
        lean.close().await;
        full.close().await;
    }

    #[tokio::test]
    async fn errors_are_classified_and_the_connection_stays_in_step() {
        let mut c = lean().await;
        let e = c
            .execute_text("SELECT * FROM wire_no_such_table")
            .await
            .unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::MissingTable, "{e}");
        assert_eq!(e.code.as_deref(), Some("1146"));
        let e = c.prepare("SELEKT 1").await.unwrap_err();
        assert_eq!(e.code.as_deref(), Some("1064"), "{e}");
        // An error while rows are being sent (a subquery returning two rows at the third row)
        // ends that reply only.
        let e = c
            .execute_text(
                "SELECT IF(seq < 3, seq, (SELECT a FROM (SELECT 1 a UNION SELECT 2) x)) \
                 FROM seq_1_to_5",
            )
            .await
            .unwrap_err();
        assert_eq!(e.code.as_deref(), Some("1242"), "{e}");
        assert_eq!(
            c.query("SELECT 6", &[]).await.unwrap(),
            vec![vec![Value::Int(6)]]
        );
        // Several result sets (a procedure): the first decides, the rest are read.
        let p = format!("wire_proc_{}", std::process::id());
        c.execute_text(&format!(
            "CREATE PROCEDURE {p}() BEGIN SELECT 1 UNION SELECT 2; SELECT 3; END"
        ))
        .await
        .unwrap();
        let o = c.execute_text(&format!("CALL {p}()")).await.unwrap();
        assert_eq!((o.result_set, o.rows), (true, 2));
        let rows = c.query(&format!("CALL {p}()"), &[]).await.unwrap();
        assert_eq!(rows, vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
        assert_eq!(
            c.query("SELECT 42", &[]).await.unwrap(),
            vec![vec![Value::Int(42)]]
        );
        c.execute_text(&format!("DROP PROCEDURE {p}"))
            .await
            .unwrap();
        // LOAD DATA LOCAL is refused (the lean client does not offer local files) without
        // breaking the connection.
        let t = format!("wire_infile_{}", std::process::id());
        c.execute_text(&format!("CREATE TABLE {t} (a INT)"))
            .await
            .unwrap();
        let e = c
            .execute_text(&format!("LOAD DATA LOCAL INFILE 'x' INTO TABLE {t}"))
            .await
            .unwrap_err();
        assert!(
            matches!(e.code.as_deref(), Some("4166" | "1148" | "3948")),
            "{e}"
        );
        assert_eq!(
            c.query("SELECT 7", &[]).await.unwrap(),
            vec![vec![Value::Int(7)]]
        );
        c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
        c.close().await;
    }

    #[tokio::test]
    async fn passwords_authenticate_and_wrong_ones_are_refused() {
        let mut admin = lean().await;
        let user = format!("wire_{}", std::process::id());
        let _ = admin
            .execute_text(&format!("DROP USER IF EXISTS '{user}'@'127.0.0.1'"))
            .await;
        admin
            .execute_text(&format!(
                "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 's3cret-pw'"
            ))
            .await
            .unwrap();
        admin
            .execute_text(&format!("GRANT SELECT ON test.* TO '{user}'@'127.0.0.1'"))
            .await
            .unwrap();
        let good = Target::parse(&format!("mysql://{user}:s3cret-pw@127.0.0.1:3306/test")).unwrap();
        let bad = Target::parse(&format!("mysql://{user}:nope@127.0.0.1:3306/test")).unwrap();
        let options = ConnectOptions::default();
        let ok = WireConnection::connect(&good, &options).await;
        let refused = WireConnection::connect(&bad, &options).await;
        admin
            .execute_text(&format!("DROP USER '{user}'@'127.0.0.1'"))
            .await
            .unwrap();
        let mut ok = match ok {
            Ok(c) => c,
            Err(WireError::Driver(e)) => panic!("{e}"),
            Err(WireError::Unsupported) => panic!("native password should be lean"),
        };
        assert_eq!(
            ok.query("SELECT 1", &[]).await.unwrap(),
            vec![vec![Value::Int(1)]]
        );
        match refused {
            Err(WireError::Driver(e)) => {
                assert_eq!(e.kind, crate::error::ErrorKind::Auth, "{e}");
                assert!(!e.to_string().contains("nope"), "{e}");
            }
            _ => panic!("a wrong password must be refused"),
        }
        ok.close().await;
        admin.close().await;
    }

    /// A lean connection's statement is killed on the server like the full client's, and the
    /// connection goes on.
    #[tokio::test]
    async fn a_timed_out_statement_is_killed_and_the_lean_connection_goes_on() {
        let target = Target::parse(MARIADB).unwrap();
        let options = ConnectOptions {
            lean: true,
            ..ConnectOptions::default()
        };
        let mut c = crate::Connection::connect(&target, &options).await.unwrap();
        let started = std::time::Instant::now();
        let e = c
            .query_with_timeout("SELECT SLEEP(20)", &[], Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{e}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the kill did not stop it"
        );
        assert_eq!(
            c.query("SELECT 5", &[]).await.unwrap(),
            vec![vec![Value::Int(5)]]
        );
        c.close().await;
    }
}
