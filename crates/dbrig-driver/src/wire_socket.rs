//! The byte stream under the lean MySQL client ([`crate::mysql_wire`]): tokio's async sockets,
//! or, for a benchmark client that owns its thread, the same socket in blocking mode.
//!
//! Why blocking: with tokio, every statement costs `send`, a `recv` that finds nothing yet,
//! `epoll_wait`, a wake-up and the `recv` that reads the reply; sysbench (libmysqlclient) does
//! `send` and one blocking `recv`. Measured at one client per worker on a point select, that
//! difference was the last few per cent of client CPU and latency between the two tools. A
//! blocking call stalls every other task of its thread, so the runner asks for it only when a
//! worker thread runs exactly one client ([`crate::OwnThread`]), and the connection is opened
//! and authenticated async (with its timeouts) before it switches.
//!
//! A blocking read cannot be cancelled by dropping a future, so it wakes every
//! [`ABANDON_CHECK`] to look at the owner's abandon flag and gives up when it is raised (the
//! runner raises it for statements that never finish, such as a stopped server).
//!
//! TLS is a layer over any of these ([`WireSocket::Tls`]): a rustls `ClientConnection` fed
//! from and flushed to the plain socket by the same read and write calls, so a TLS connection
//! switches to blocking calls exactly like a clear one and keeps the lean client's costs plus
//! the cipher's.

use std::io::{ErrorKind as IoKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::target::Endpoint;

/// How often a blocked read or write looks at the abandon flag.
pub(crate) const ABANDON_CHECK: Duration = Duration::from_millis(250);

/// Bytes one blocking `recv` may return (the async path reads into the buffer's spare room).
const BLOCKING_READ: usize = 64 * 1024;

pub(crate) trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// A std socket in blocking mode (TCP or Unix).
pub(crate) trait BlockingStream: Read + Write + Send {
    fn shutdown_both(&self);
}

impl BlockingStream for std::net::TcpStream {
    fn shutdown_both(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

impl BlockingStream for std::os::unix::net::UnixStream {
    fn shutdown_both(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

/// Why a lean client (`mysql_wire`, `pg_wire`) could not open a connection.
#[derive(Debug)]
pub(crate) enum WireError {
    /// The connection needs something this client leaves to the full one (an authentication
    /// plugin or method): open the full client instead.
    Unsupported,
    Driver(crate::error::DriverError),
}

impl From<crate::error::DriverError> for WireError {
    fn from(e: crate::error::DriverError) -> Self {
        WireError::Driver(e)
    }
}

pub(crate) enum WireSocket {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
    /// Any other async stream (the tests' in-memory pipes); never switched to blocking.
    Other(Box<dyn Stream>),
    Blocking {
        socket: Box<dyn BlockingStream>,
        abandon: Arc<AtomicBool>,
        /// Zeroed once: a blocking read needs initialised memory, and zeroing the read
        /// buffer's spare room per read would cost more than copying what was read.
        scratch: Box<[u8]>,
    },
    /// TLS over one of the other kinds (never over another `Tls`).
    Tls(Box<TlsSocket>),
}

pub(crate) struct TlsSocket {
    raw: WireSocket,
    conn: rustls::ClientConnection,
    /// Bytes read from the socket that rustls has not taken yet.
    incoming: BytesMut,
    /// Decrypted bytes are copied out through this (rustls reads into initialised memory).
    plain: Box<[u8]>,
    /// Records to send, reused.
    outgoing: Vec<u8>,
}

fn abandoned() -> std::io::Error {
    std::io::Error::new(
        IoKind::TimedOut,
        "abandoned: the statement did not finish before the run's hard stop",
    )
}

impl WireSocket {
    /// A new socket to `endpoint`: TCP with Nagle's delay off (requests are single small
    /// writes: send each at once), or the Unix socket file `socket_file` makes of the
    /// endpoint's path (each engine names its socket file its own way).
    pub(crate) async fn connect(
        endpoint: &Endpoint,
        socket_file: impl FnOnce(&Path) -> PathBuf,
    ) -> std::io::Result<WireSocket> {
        Ok(match endpoint {
            Endpoint::Tcp { host, port } => {
                let s = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
                let _ = s.set_nodelay(true);
                WireSocket::Tcp(s)
            }
            Endpoint::Socket(path) => {
                WireSocket::Unix(tokio::net::UnixStream::connect(socket_file(path)).await?)
            }
        })
    }

    /// Switch a TCP or Unix socket to blocking calls; other streams stay as they are.
    pub(crate) fn make_blocking(&mut self, abandon: Arc<AtomicBool>) -> std::io::Result<()> {
        if let WireSocket::Tls(t) = self {
            return t.raw.make_blocking(abandon);
        }
        // Taken out to convert (tokio's `into_std` consumes the stream); a failed conversion
        // leaves the placeholder, and the caller drops the connection.
        let taken = std::mem::replace(self, WireSocket::Other(Box::new(tokio::io::empty())));
        let socket: Box<dyn BlockingStream> = match taken {
            WireSocket::Tcp(s) => {
                let s = s.into_std()?;
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(ABANDON_CHECK))?;
                s.set_write_timeout(Some(ABANDON_CHECK))?;
                Box::new(s)
            }
            WireSocket::Unix(s) => {
                let s = s.into_std()?;
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(ABANDON_CHECK))?;
                s.set_write_timeout(Some(ABANDON_CHECK))?;
                Box::new(s)
            }
            other => {
                *self = other;
                return Ok(());
            }
        };
        *self = WireSocket::Blocking {
            socket,
            abandon,
            scratch: vec![0; BLOCKING_READ].into_boxed_slice(),
        };
        Ok(())
    }

    /// In blocking mode (under any TLS): every read and write finishes in the call.
    pub(crate) fn is_blocking(&self) -> bool {
        match self {
            WireSocket::Blocking { .. } => true,
            WireSocket::Tls(t) => t.raw.is_blocking(),
            _ => false,
        }
    }

    fn as_async(&mut self) -> Option<&mut dyn Stream> {
        match self {
            WireSocket::Tcp(s) => Some(s),
            WireSocket::Unix(s) => Some(s),
            WireSocket::Other(s) => Some(s.as_mut()),
            WireSocket::Blocking { .. } | WireSocket::Tls(_) => None,
        }
    }

    /// Start TLS over this socket (after MySQL's SSL request) and finish the handshake.
    pub(crate) async fn start_tls(
        &mut self,
        config: Arc<rustls::ClientConfig>,
        name: rustls::pki_types::ServerName<'static>,
    ) -> Result<(), TlsFailure> {
        let raw = std::mem::replace(self, WireSocket::Other(Box::new(tokio::io::empty())));
        let mut conn = rustls::ClientConnection::new(config, name).map_err(TlsFailure::Tls)?;
        // Whole packets are handed over at once; the socket write bounds what is buffered.
        conn.set_buffer_limit(None);
        let mut tls = Box::new(TlsSocket {
            raw,
            conn,
            incoming: BytesMut::with_capacity(BLOCKING_READ),
            plain: vec![0; 16 * 1024].into_boxed_slice(),
            outgoing: Vec::with_capacity(16 * 1024),
        });
        while tls.conn.is_handshaking() {
            tls.flush().await.map_err(TlsFailure::Io)?;
            if tls.conn.is_handshaking() && tls.conn.wants_read() {
                tls.feed().await?;
            }
        }
        tls.flush().await.map_err(TlsFailure::Io)?;
        *self = WireSocket::Tls(tls);
        Ok(())
    }

    /// A Unix socket (under any TLS): MySQL counts it as a secure transport.
    pub(crate) fn is_unix(&self) -> bool {
        match self {
            WireSocket::Unix(_) => true,
            WireSocket::Tls(t) => t.raw.is_unix(),
            _ => false,
        }
    }

    /// The TLS session, if this socket is encrypted.
    pub(crate) fn tls(&self) -> Option<&rustls::ClientConnection> {
        match self {
            WireSocket::Tls(t) => Some(&t.conn),
            _ => None,
        }
    }

    /// Append what one read returns to `buf` (0 = the peer closed the connection).
    pub(crate) async fn read_into(&mut self, buf: &mut BytesMut) -> std::io::Result<usize> {
        match self {
            WireSocket::Tls(t) => t.read_into(buf).await,
            raw => raw.raw_read_into(buf).await,
        }
    }

    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            WireSocket::Tls(t) => {
                t.conn.writer().write_all(bytes)?;
                t.flush().await
            }
            raw => raw.raw_write_all(bytes).await,
        }
    }

    /// One read of the socket under any TLS.
    async fn raw_read_into(&mut self, buf: &mut BytesMut) -> std::io::Result<usize> {
        if let Some(s) = self.as_async() {
            return s.read_buf(buf).await;
        }
        let WireSocket::Blocking {
            socket,
            abandon,
            scratch,
        } = self
        else {
            unreachable!("async sockets returned above, TLS is never raw")
        };
        loop {
            match socket.read(scratch) {
                Ok(n) => {
                    buf.extend_from_slice(&scratch[..n]);
                    return Ok(n);
                }
                Err(e) if retry_later(&e) => {
                    if abandon.load(Ordering::Relaxed) {
                        return Err(abandoned());
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn raw_write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        if let Some(s) = self.as_async() {
            return s.write_all(bytes).await;
        }
        let WireSocket::Blocking {
            socket, abandon, ..
        } = self
        else {
            unreachable!("async sockets returned above, TLS is never raw")
        };
        while !bytes.is_empty() {
            match socket.write(bytes) {
                Ok(0) => return Err(IoKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if retry_later(&e) => {
                    if abandon.load(Ordering::Relaxed) {
                        return Err(abandoned());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Close the sending side (after COM_QUIT), waiting at most a second on an async socket.
    pub(crate) async fn shutdown(&mut self) {
        match self {
            WireSocket::Tls(t) => {
                t.conn.send_close_notify();
                let _ = tokio::time::timeout(Duration::from_secs(1), t.flush()).await;
                t.raw.raw_shutdown().await
            }
            raw => raw.raw_shutdown().await,
        }
    }

    async fn raw_shutdown(&mut self) {
        match self {
            WireSocket::Blocking { socket, .. } => socket.shutdown_both(),
            other => {
                if let Some(s) = other.as_async() {
                    let _ = tokio::time::timeout(Duration::from_secs(1), s.shutdown()).await;
                }
            }
        }
    }
}

/// Why TLS could not start: the socket, or rustls (a certificate, a protocol mismatch).
#[derive(Debug)]
pub(crate) enum TlsFailure {
    Io(std::io::Error),
    Tls(rustls::Error),
}

impl TlsSocket {
    /// Send whatever records rustls has ready.
    async fn flush(&mut self) -> std::io::Result<()> {
        while self.conn.wants_write() {
            self.outgoing.clear();
            self.conn.write_tls(&mut self.outgoing)?;
            self.raw.raw_write_all(&self.outgoing).await?;
        }
        Ok(())
    }

    /// Give rustls more bytes from the socket and let it process them.
    async fn feed(&mut self) -> Result<(), TlsFailure> {
        if self.incoming.is_empty() {
            let n = self
                .raw
                .raw_read_into(&mut self.incoming)
                .await
                .map_err(TlsFailure::Io)?;
            if n == 0 {
                return Err(TlsFailure::Io(IoKind::UnexpectedEof.into()));
            }
        }
        let mut pending = &self.incoming[..];
        let taken = self.conn.read_tls(&mut pending).map_err(TlsFailure::Io)?;
        self.incoming.advance(taken);
        let processed = self.conn.process_new_packets();
        // An alert for the peer (a bad certificate, say) goes out before the error returns.
        let _ = self.flush().await;
        processed.map_err(TlsFailure::Tls)?;
        Ok(())
    }

    async fn read_into(&mut self, buf: &mut BytesMut) -> std::io::Result<usize> {
        loop {
            match self.conn.reader().read(&mut self.plain) {
                Ok(n) => {
                    buf.extend_from_slice(&self.plain[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == IoKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.feed().await {
                Ok(()) => {}
                // The peer closed the socket: end of stream, as for a clear connection.
                Err(TlsFailure::Io(e)) if e.kind() == IoKind::UnexpectedEof => return Ok(0),
                Err(TlsFailure::Io(e)) => return Err(e),
                Err(TlsFailure::Tls(e)) => {
                    return Err(std::io::Error::new(IoKind::InvalidData, e));
                }
            }
        }
    }
}

/// A socket timeout (our periodic abandon check) or a signal: try again.
fn retry_later(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        IoKind::WouldBlock | IoKind::TimedOut | IoKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_blocking_socket_reads_writes_and_gives_up_when_abandoned() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut b = [0u8; 5];
            s.read_exact(&mut b).unwrap();
            s.write_all(b"world").unwrap();
            // Then stay silent until the client gives up and closes.
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        });
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let abandon = Arc::new(AtomicBool::new(false));
        let mut sock = WireSocket::Tcp(tcp);
        sock.make_blocking(Arc::clone(&abandon)).unwrap();
        assert!(matches!(sock, WireSocket::Blocking { .. }));
        sock.write_all(b"hello").await.unwrap();
        let mut buf = BytesMut::new();
        while buf.len() < 5 {
            assert!(sock.read_into(&mut buf).await.unwrap() > 0);
        }
        assert_eq!(&buf[..], b"world");

        let raiser = {
            let abandon = Arc::clone(&abandon);
            std::thread::spawn(move || {
                std::thread::sleep(ABANDON_CHECK * 2);
                abandon.store(true, Ordering::Relaxed);
            })
        };
        let err = sock.read_into(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), IoKind::TimedOut, "{err}");
        assert!(err.to_string().contains("abandoned"), "{err}");
        raiser.join().unwrap();
        sock.shutdown().await;
        server.join().unwrap();
    }

    #[test]
    fn other_streams_stay_async() {
        let (a, _b) = tokio::io::duplex(64);
        let mut sock = WireSocket::Other(Box::new(a));
        sock.make_blocking(Arc::new(AtomicBool::new(true))).unwrap();
        assert!(matches!(sock, WireSocket::Other(_)));
    }
}
