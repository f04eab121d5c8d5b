//! Which authentication method a PostgreSQL server asks of a target's user, for the record of
//! every trial (tokio-postgres answers the server's request without telling which it was).
//!
//! A one-off probe, once per trial: it opens a connection as the benchmark clients do (same
//! address, same TLS mode and options), sends the StartupMessage and reads the server's first
//! Authentication request, then closes. It never sends a password: the server's request names
//! the method (`trust`'s is AuthenticationOk straight away, `password` asks for clear text,
//! `md5` for a salted hash, SASL lists its mechanisms). Under SASL the probe applies
//! tokio-postgres's own choice: `SCRAM-SHA-256-PLUS` when the server offers it, the connection
//! is encrypted, channel binding is not disabled and the certificate's hash can be bound.
//! Servers close such a half-started session quietly (psql does the same when it has to ask
//! for a password). `system_user` (PostgreSQL 16) would say the same without a connection but
//! not on older servers, and not which SCRAM variant was used; the probe works on every
//! version and over every transport.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{DriverError, ErrorKind};
use crate::target::{Endpoint, Target};
use crate::tls::{TlsMode, TlsOptions};

/// The method the server asks `target`'s user for: `trust`, `password`, `md5`,
/// `scram-sha-256`, `scram-sha-256-plus`, `cert or trust` (a client certificate was sent and
/// no password asked: hba's `cert` and `trust` look alike on the wire), `gss`, `sspi`.
/// `Ok(None)` for a target that is not PostgreSQL or a reply the probe does not know; `Err`
/// when the server refuses the session outright (no hba rule, TLS refused).
pub async fn postgres_auth_method(
    target: &Target,
    timeout: Duration,
) -> Result<Option<String>, DriverError> {
    let Target::Postgres {
        user,
        endpoint,
        database,
        tls,
        ..
    } = target
    else {
        return Ok(None);
    };
    let place = target.to_string();
    let probe = async {
        match endpoint {
            Endpoint::Tcp { host, port } => {
                let stream = tokio::net::TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(|e| DriverError::unreachable(&place, e))?;
                if !tls.enabled() {
                    return ask(stream, user, database, tls, false).await;
                }
                let mut stream = stream;
                // SSLRequest: length 8, code 1234.5679.
                stream
                    .write_all(&[0, 0, 0, 8, 4, 210, 22, 47])
                    .await
                    .map_err(|e| lost(&place, e))?;
                let answer = stream.read_u8().await.map_err(|e| lost(&place, e))?;
                match answer {
                    b'S' => {
                        let config = tls.client_config(host)?;
                        let name = crate::tls::server_name(host)?;
                        let stream = tokio_rustls::TlsConnector::from(config)
                            .connect(name, stream)
                            .await
                            .map_err(|e| {
                                DriverError::fatal(ErrorKind::Tls, format!("TLS handshake: {e}"))
                            })?;
                        let bound = stream
                            .get_ref()
                            .1
                            .peer_certificates()
                            .and_then(|c| c.first())
                            .is_some_and(|c| crate::tls::end_point_hash(c).is_some());
                        ask(stream, user, database, tls, bound).await
                    }
                    // `prefer` against a server without TLS goes on in the clear, as the
                    // clients' connections do; any other mode was refused there already.
                    _ if tls.mode == TlsMode::Prefer => {
                        ask(stream, user, database, tls, false).await
                    }
                    _ => Err(DriverError::fatal(
                        ErrorKind::Tls,
                        format!("{place}: the server does not offer TLS"),
                    )),
                }
            }
            Endpoint::Socket(path) => {
                let file = if path.is_dir() {
                    path.join(".s.PGSQL.5432")
                } else {
                    path.clone()
                };
                let stream = tokio::net::UnixStream::connect(&file)
                    .await
                    .map_err(|e| DriverError::unreachable(&place, e))?;
                // libpq never encrypts a Unix socket, nor do dbrig's clients.
                ask(stream, user, database, tls, false).await
            }
        }
    };
    match tokio::time::timeout(timeout, probe).await {
        Ok(r) => r,
        Err(_) => Err(DriverError::unreachable(
            &place,
            format_args!("no authentication request within {timeout:?}"),
        )),
    }
}

fn lost(place: &str, e: std::io::Error) -> DriverError {
    DriverError::fatal(
        ErrorKind::ConnectionLost,
        format!("{place}: auth probe: {e}"),
    )
}

/// Send the StartupMessage and read the server's first answer (`bound`: the session is
/// encrypted and its certificate can be bound by SCRAM).
async fn ask<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    user: &str,
    database: &str,
    tls: &TlsOptions,
    bound: bool,
) -> Result<Option<String>, DriverError> {
    let io = |e: std::io::Error| {
        DriverError::fatal(ErrorKind::ConnectionLost, format!("auth probe: {e}"))
    };
    stream
        .write_all(&startup_message(user, database))
        .await
        .map_err(io)?;
    stream.flush().await.map_err(io)?;
    let kind = stream.read_u8().await.map_err(io)?;
    let len = stream.read_u32().await.map_err(io)? as usize;
    // An Authentication request is short; a SASL mechanism list a few dozen bytes.
    if !(4..=8192).contains(&len) {
        return Ok(None);
    }
    let mut body = vec![0u8; len - 4];
    stream.read_exact(&mut body).await.map_err(io)?;
    let _ = stream.shutdown().await;
    match kind {
        b'R' => Ok(method_of(&body, tls, bound)),
        b'E' => Err(DriverError::fatal(
            ErrorKind::Auth,
            format!("the server refused the session: {}", error_text(&body)),
        )),
        _ => Ok(None),
    }
}

/// The StartupMessage (protocol 3.0) a session opens with; also the lean client's.
pub(crate) fn startup_message(user: &str, database: &str) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196_608u32.to_be_bytes()); // protocol 3.0
    for (k, v) in [
        ("user", user),
        ("database", database),
        ("application_name", "dbrig"),
        // As tokio-postgres: every text the client reads or sends is UTF-8.
        ("client_encoding", "UTF8"),
    ] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut out = ((body.len() + 4) as u32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

/// The method an Authentication request (its body: code, then the code's data) asks for.
pub(crate) fn method_of(body: &[u8], tls: &TlsOptions, bound: bool) -> Option<String> {
    let code = u32::from_be_bytes(body.get(..4)?.try_into().ok()?);
    let method = match code {
        0 if tls.cert.is_some() && tls.enabled() => "cert or trust",
        0 => "trust",
        3 => "password",
        5 => "md5",
        7 => "gss",
        9 => "sspi",
        10 => {
            let mechanisms: Vec<&[u8]> = body[4..].split(|b| *b == 0).collect();
            let plus = mechanisms.contains(&&b"SCRAM-SHA-256-PLUS"[..]);
            if plus && bound && tls.channel_binding != Some(false) {
                "scram-sha-256-plus"
            } else if mechanisms.contains(&&b"SCRAM-SHA-256"[..]) || plus {
                "scram-sha-256"
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(method.to_owned())
}

/// An ErrorResponse's message field (`M`), for the one-line refusal.
fn error_text(body: &[u8]) -> String {
    body.split(|b| *b == 0)
        .find_map(|f| f.strip_prefix(b"M"))
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(code: u32, data: &[u8]) -> Vec<u8> {
        let mut b = code.to_be_bytes().to_vec();
        b.extend_from_slice(data);
        b
    }

    #[test]
    fn requests_name_their_method() {
        let clear = TlsOptions::default();
        let tls = TlsOptions {
            mode: TlsMode::Require,
            ..TlsOptions::default()
        };
        assert_eq!(method_of(&request(0, &[]), &clear, false).unwrap(), "trust");
        assert_eq!(
            method_of(&request(3, &[]), &clear, false).unwrap(),
            "password"
        );
        assert_eq!(
            method_of(&request(5, b"salt"), &clear, false).unwrap(),
            "md5"
        );
        let both = b"SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0";
        assert_eq!(
            method_of(&request(10, both), &tls, true).unwrap(),
            "scram-sha-256-plus"
        );
        // Not bound (no TLS, or a certificate without a hash to bind) or disabled: plain.
        assert_eq!(
            method_of(&request(10, both), &tls, false).unwrap(),
            "scram-sha-256"
        );
        let off = TlsOptions {
            channel_binding: Some(false),
            ..tls.clone()
        };
        assert_eq!(
            method_of(&request(10, both), &off, true).unwrap(),
            "scram-sha-256"
        );
        assert_eq!(
            method_of(&request(10, b"SCRAM-SHA-256\0\0"), &tls, true).unwrap(),
            "scram-sha-256"
        );
        assert_eq!(method_of(&request(10, b"OTHER\0\0"), &tls, true), None);
        assert_eq!(method_of(&request(42, &[]), &tls, true), None);
        let cert = TlsOptions {
            cert: Some("/c.pem".into()),
            key: Some("/c.key".into()),
            ..tls
        };
        assert_eq!(
            method_of(&request(0, &[]), &cert, false).unwrap(),
            "cert or trust"
        );
    }

    #[test]
    fn startup_message_is_length_prefixed_and_terminated() {
        let m = startup_message("u", "d");
        assert_eq!(
            u32::from_be_bytes(m[..4].try_into().unwrap()) as usize,
            m.len()
        );
        assert_eq!(&m[4..8], &196_608u32.to_be_bytes());
        assert!(m.ends_with(b"client_encoding\0UTF8\0\0"));
        assert!(m.windows(17).any(|w| w == b"application_name\0"));
    }
}
