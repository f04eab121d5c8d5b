//! Cancelling a running statement on the server, and the timeout race built on it.
//!
//! A client-side timeout alone is not enough for a benchmark: the abandoned query would go on
//! using the server's CPU and I/O and distort every measurement after it. So when the timer
//! fires, the statement is stopped *on the server* by each engine's own mechanism — MariaDB/MySQL
//! `KILL QUERY <connection id>` sent from a second connection, PostgreSQL's cancel request
//! (the backend key of the session, sent on a new socket, over TLS if the session is), SQLite
//! `sqlite3_interrupt` — while the original connection keeps reading until the server answers
//! the killed statement, so the protocol stays in step and the connection stays usable.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::error::{DriverError, ErrorKind, one_line};
use crate::target::Endpoint;
use crate::wire_socket::{TlsFailure, WireSocket};

/// How long a cancelled statement may take to give up before the connection is presumed stuck
/// and replaced (a server that ignores the kill must not hang the benchmark).
pub(crate) const GRACE: Duration = Duration::from_secs(10);

/// Stops whatever statement its connection is running, from any task or thread. Obtained from
/// [`crate::Connection::cancel_handle`]; valid until that connection reconnects.
#[derive(Clone)]
pub struct CancelHandle(pub(crate) Inner);

#[derive(Clone)]
pub(crate) enum Inner {
    Mysql {
        opts: mysql_async::Opts,
        connection_id: u32,
    },
    /// tokio-postgres's token, with the TLS its connection used (the cancel request goes the
    /// same way).
    Postgres(tokio_postgres::CancelToken, Option<crate::tls::PgTls>),
    /// The lean client's session: where it is, its cancel key, and the TLS it used.
    PostgresWire {
        endpoint: Endpoint,
        pid: u32,
        key: i32,
        tls: Option<CancelTls>,
    },
    Sqlite(Arc<rusqlite::InterruptHandle>),
    Mock(Arc<Notify>),
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the options: they hold the password.
        let engine = match &self.0 {
            Inner::Mysql { connection_id, .. } => {
                return write!(f, "CancelHandle(mysql {connection_id})");
            }
            Inner::Postgres(..) | Inner::PostgresWire { .. } => "postgres",
            Inner::Sqlite(_) => "sqlite",
            Inner::Mock(_) => "mock",
        };
        write!(f, "CancelHandle({engine})")
    }
}

impl CancelHandle {
    /// Ask the server to stop the statement running now. Returns once the request has been
    /// delivered (MySQL: the KILL has executed); the statement itself ends with an error on its
    /// own connection. Harmless when nothing is running.
    pub async fn cancel(&self) -> Result<(), DriverError> {
        match &self.0 {
            Inner::Mysql {
                opts,
                connection_id,
            } => {
                use mysql_async::prelude::Queryable;
                let kill = async {
                    let mut conn = mysql_async::Conn::new(opts.clone()).await?;
                    let r = conn.query_drop(format!("KILL QUERY {connection_id}")).await;
                    let _ = conn.disconnect().await;
                    r
                };
                within_grace(&format!("KILL QUERY {connection_id}"), kill).await
            }
            Inner::Postgres(token, Some(tls)) => {
                let request = token.cancel_query(tls.clone());
                within_grace("PostgreSQL cancel request", request).await
            }
            Inner::Postgres(token, None) => {
                let request = token.cancel_query(tokio_postgres::NoTls);
                within_grace("PostgreSQL cancel request", request).await
            }
            Inner::PostgresWire {
                endpoint,
                pid,
                key,
                tls,
            } => {
                let request = pg_cancel_request(endpoint, *pid, *key, tls.as_ref());
                within_grace("PostgreSQL cancel request", request).await
            }
            Inner::Sqlite(handle) => {
                handle.interrupt();
                Ok(())
            }
            Inner::Mock(notify) => {
                notify.notify_waiters();
                Ok(())
            }
        }
    }
}

/// How the lean client's session was encrypted, for its cancel request.
#[derive(Clone)]
pub(crate) struct CancelTls {
    pub config: Arc<rustls::ClientConfig>,
    pub name: rustls::pki_types::ServerName<'static>,
}

/// Send a cancel request for session `pid` (its `key`) on a new socket to `endpoint`. Over
/// TLS when the session was (as libpq 17 does): a server behind a TLS-only proxy or load
/// balancer never sees a request sent in the clear. A cancel request carries no credentials
/// and is answered by closing the socket.
async fn pg_cancel_request(
    endpoint: &Endpoint,
    pid: u32,
    key: i32,
    tls: Option<&CancelTls>,
) -> std::io::Result<()> {
    let mut request = Vec::with_capacity(16);
    request.extend_from_slice(&16i32.to_be_bytes());
    request.extend_from_slice(&80_877_102i32.to_be_bytes());
    request.extend_from_slice(&pid.to_be_bytes());
    request.extend_from_slice(&key.to_be_bytes());
    let mut socket = WireSocket::connect(endpoint, crate::target::pg_socket_file).await?;
    let mut answer = bytes::BytesMut::with_capacity(64);
    if let (Some(tls), Endpoint::Tcp { .. }) = (tls, endpoint) {
        socket.write_all(&crate::pg_wire::SSL_REQUEST).await?;
        if socket.read_into(&mut answer).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        // 'N' (TLS turned off since the session began): the request goes in the clear.
        if answer[0] == b'S' {
            socket
                .start_tls(Arc::clone(&tls.config), tls.name.clone())
                .await
                .map_err(|e| match e {
                    TlsFailure::Tls(e) => std::io::Error::other(e),
                    TlsFailure::Io(e) => e,
                })?;
        }
        answer.clear();
    }
    socket.write_all(&request).await?;
    // The server closes the socket once it has read the request.
    let _ = socket.read_into(&mut answer).await;
    Ok(())
}

/// A cancel request (`what`) that must be delivered within [`GRACE`].
async fn within_grace<E: std::fmt::Display>(
    what: &str,
    request: impl Future<Output = Result<(), E>>,
) -> Result<(), DriverError> {
    match tokio::time::timeout(GRACE, request).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(cancel_failed(format_args!(
            "{what}: {}",
            one_line(&e.to_string())
        ))),
        Err(_) => Err(cancel_failed(format_args!(
            "{what}: no answer within {GRACE:?}"
        ))),
    }
}

fn cancel_failed(detail: impl std::fmt::Display) -> DriverError {
    DriverError::fatal(
        ErrorKind::Unreachable,
        format!("cannot cancel the statement on the server: {detail}"),
    )
}

/// How a statement raced against its timeout.
pub(crate) enum Raced<T> {
    /// Finished (well or not) before the timeout.
    Done(Result<T, DriverError>),
    /// The timeout fired, the server was asked to stop the statement and it ended.
    /// `finished_ok`: it still completed normally (it ended as the cancel went out), so a
    /// late cancel may be pending against the connection.
    TimedOut { finished_ok: bool },
    /// The timeout fired and the statement did not end within [`GRACE`] of the cancel: the
    /// caller must drop the connection. Carries the cancel's own failure, if any.
    Stuck(Option<DriverError>),
}

/// Drive `work` to its end, cancelling it on the server through `handle` once `timeout` has
/// passed. `work` is never dropped half-way except when stuck: the killed statement's error
/// reply must be read for the connection to stay in step with the server.
pub(crate) async fn race<T>(
    work: impl Future<Output = Result<T, DriverError>>,
    handle: &CancelHandle,
    timeout: Duration,
) -> Raced<T> {
    let mut work = pin!(work);
    if let Ok(r) = tokio::time::timeout(timeout, work.as_mut()).await {
        return Raced::Done(r);
    }
    let mut cancel = pin!(handle.cancel());
    let mut cancelled: Option<Result<(), DriverError>> = None;
    let mut grace = pin!(tokio::time::sleep(GRACE));
    loop {
        tokio::select! {
            r = work.as_mut() => {
                // Let the cancel finish before the connection's next statement, so that it
                // cannot land on that one instead.
                if cancelled.is_none() {
                    let _ = cancel.as_mut().await;
                }
                return Raced::TimedOut { finished_ok: r.is_ok() };
            }
            c = cancel.as_mut(), if cancelled.is_none() => cancelled = Some(c),
            () = grace.as_mut() => return Raced::Stuck(cancelled.and_then(Result::err)),
        }
    }
}
