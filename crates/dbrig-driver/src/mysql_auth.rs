//! The lean MySQL client's TLS start and the authentication steps beyond one scramble
//! (kept out of `mysql_wire.rs`, which holds the hot path).
//!
//! - TLS: after the server's greeting, an SSL request packet (the capabilities with
//!   CLIENT_SSL), then the TLS handshake over the same socket; the handshake response follows
//!   encrypted. A server that offers no TLS is refused unless the mode is `prefer`.
//! - `caching_sha2_password`'s full exchange (the server has no cached entry for the account):
//!   over TLS or a Unix socket the password goes as it is (NUL-terminated); otherwise the client
//!   asks for the server's RSA public key (0x02), XORs the NUL-terminated password with the
//!   connection's nonce and sends it RSA-OAEP (SHA-1) encrypted, as libmysqlclient does.

use dbrig_core::results::{ConnectionSecurity, TlsVerification};
use mysql_common::constants::{CapabilityFlags, MariadbCapabilities, UTF8MB4_GENERAL_CI};
use mysql_common::packets::{AuthPlugin, SslRequest};
use mysql_common::proto::MySerialize;

use crate::error::{DriverError, ErrorKind};
use crate::mysql_wire::WireConnection;
use crate::target::Endpoint;
use crate::tls::{TlsMode, TlsOptions, checked_host, server_name, session_of, tls_error};
use crate::wire_socket::TlsFailure;
use crate::wire_socket::WireError;

/// What the target asks of TLS, ready for the handshake.
pub(crate) struct WireTls {
    config: std::sync::Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    options: TlsOptions,
}

impl WireTls {
    /// `None` when TLS is off. The host name checked is the URL's (a socket: `localhost`).
    pub(crate) fn for_endpoint(
        options: &TlsOptions,
        endpoint: &Endpoint,
    ) -> Result<Option<WireTls>, DriverError> {
        if !options.enabled() {
            return Ok(None);
        }
        let host = checked_host(endpoint);
        Ok(Some(WireTls {
            config: options.client_config(host)?,
            name: server_name(host)?,
            options: options.clone(),
        }))
    }
}

/// How the account authenticated, for the trial's record.
#[derive(Debug, Clone, Default)]
pub(crate) struct AuthPath {
    plugin: String,
    /// caching_sha2_password: how the full exchange went, if it happened.
    full: Option<&'static str>,
}

impl AuthPath {
    pub(crate) fn of(plugin: &AuthPlugin<'_>) -> AuthPath {
        AuthPath {
            plugin: String::from_utf8_lossy(plugin.as_bytes()).into_owned(),
            full: None,
        }
    }

    fn describe(&self) -> Option<String> {
        if self.plugin.is_empty() {
            return None;
        }
        Some(match (self.plugin.as_str(), self.full) {
            ("caching_sha2_password", None) => "caching_sha2_password (fast)".to_owned(),
            (p, Some(how)) => format!("{p} (full, {how})"),
            (p, None) => p.to_owned(),
        })
    }
}

pub(crate) fn security(
    tls: Option<&WireTls>,
    session: Option<&rustls::ClientConnection>,
    auth: &AuthPath,
) -> ConnectionSecurity {
    ConnectionSecurity {
        tls_mode: tls
            .map_or(TlsMode::Disable, |t| t.options.mode)
            .name()
            .to_owned(),
        tls: session.map(|s| {
            session_of(
                s,
                tls.map_or(TlsVerification::None, |t| t.options.verification()),
            )
        }),
        auth: auth.describe(),
    }
}

/// One line for an account whose plugin dbrig cannot speak.
pub(crate) fn unsupported_plugin(plugin: &str, why: &str) -> DriverError {
    DriverError::fatal(
        ErrorKind::Unsupported,
        format!(
            "the server asks for authentication plugin '{plugin}'{why}, which dbrig cannot \
             use; give the benchmark account mysql_native_password, caching_sha2_password or \
             (MariaDB) ed25519, e.g. ALTER USER … IDENTIFIED WITH caching_sha2_password BY '…'"
        ),
    )
}

/// Send the SSL request and run the TLS handshake when the server offers TLS; `Ok(false)`
/// when it does not and the mode allows clear text (`prefer`).
pub(crate) async fn start_tls(
    conn: &mut WireConnection,
    tls: &WireTls,
    offered: bool,
    caps: CapabilityFlags,
    mariadb_caps: MariadbCapabilities,
    version: (u16, u16, u16),
    place: &str,
) -> Result<bool, WireError> {
    if !offered {
        if tls.options.mode == TlsMode::Prefer {
            return Ok(false);
        }
        return Err(tls_error(format!(
            "the server at {place} does not offer TLS (sslmode={}); configure TLS on it \
             (ssl_cert/ssl_key) or connect with sslmode=disable",
            tls.options.mode
        ))
        .into());
    }
    // The collation HandshakeResponse will name too.
    let collation = if version >= (5, 5, 3) {
        UTF8MB4_GENERAL_CI
    } else {
        33 // utf8_general_ci
    };
    let mut request = Vec::with_capacity(32);
    SslRequest::new(
        caps | CapabilityFlags::CLIENT_SSL,
        0xFF_FFFF,
        collation as u8,
    )
    .with_mariadb_capabilities(mariadb_caps)
    .serialize(&mut request);
    conn.send(&request).await?;
    conn.socket_mut()
        .start_tls(tls.config.clone(), tls.name.clone())
        .await
        .map_err(|e| match e {
            TlsFailure::Tls(e) => tls.options.handshake_error("MySQL", place, &e),
            TlsFailure::Io(e) => DriverError::lost(
                None,
                format!("MySQL connection lost during the TLS handshake with {place}: {e}"),
            ),
        })?;
    Ok(true)
}

/// caching_sha2_password's full exchange, after the server's 0x01 0x04; the OK or error that
/// ends it is read by the caller's loop.
pub(crate) async fn caching_sha2_full(
    conn: &mut WireConnection,
    password: &str,
    nonce: &[u8],
    secure: bool,
) -> Result<AuthPath, WireError> {
    let mut clear = password.as_bytes().to_vec();
    clear.push(0);
    let how = if secure {
        conn.send(&clear).await?;
        if conn.socket_mut().tls().is_some() {
            "TLS"
        } else {
            "Unix socket"
        }
    } else {
        conn.send(&[0x02]).await?;
        let key = conn.read_packet().await?;
        if key.first() == Some(&0xFF) {
            return Err(conn.error_packet(&key).into());
        }
        if key.first() != Some(&0x01) {
            return Err(DriverError::lost(
                None,
                "MySQL: expected the server's RSA public key (caching_sha2_password)",
            )
            .into());
        }
        let encrypted = rsa_encrypt_password(&clear, nonce, &key[1..])?;
        conn.send(&encrypted).await?;
        "RSA"
    };
    Ok(AuthPath {
        plugin: "caching_sha2_password".to_owned(),
        full: Some(how),
    })
}

/// The NUL-terminated password XORed with the nonce, RSA-OAEP (SHA-1) encrypted with the
/// server's PEM public key (the form MySQL 8.0.5+ expects).
pub(crate) fn rsa_encrypt_password(
    clear: &[u8],
    nonce: &[u8],
    pem: &[u8],
) -> Result<Vec<u8>, DriverError> {
    use rsa::pkcs8::DecodePublicKey;
    let bad = |detail: String| {
        DriverError::fatal(
            ErrorKind::Auth,
            format!(
                "caching_sha2_password: the server's RSA public key is unusable ({detail}); \
                 connect with sslmode=require instead"
            ),
        )
    };
    if nonce.is_empty() {
        return Err(bad("no nonce to mix the password with".to_owned()));
    }
    let pem = std::str::from_utf8(pem)
        .map_err(|e| bad(e.to_string()))?
        .trim_end_matches('\0');
    let key = rsa::RsaPublicKey::from_public_key_pem(pem)
        .or_else(|_| {
            use rsa::pkcs1::DecodeRsaPublicKey;
            rsa::RsaPublicKey::from_pkcs1_pem(pem)
        })
        .map_err(|e| bad(e.to_string()))?;
    let mixed: Vec<u8> = clear
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ nonce[i % nonce.len()])
        .collect();
    key.encrypt(
        &mut rsa::rand_core::OsRng,
        rsa::Oaep::new::<sha1::Sha1>(),
        &mixed,
    )
    .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    //! caching_sha2_password's full exchange against a scripted server (no MySQL server runs
    //! on these machines): RSA without TLS, the password itself over a Unix socket.

    use super::*;
    use crate::conn::ConnectOptions;
    use crate::wire_socket::WireSocket;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    const NONCE: &[u8] = b"abcdefghijklmnopqrst";

    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let l = (payload.len() as u32).to_le_bytes();
        let mut p = vec![l[0], l[1], l[2], seq];
        p.extend_from_slice(payload);
        p
    }

    /// A MySQL 8 greeting offering caching_sha2_password with [`NONCE`].
    fn greeting() -> Vec<u8> {
        use CapabilityFlags as C;
        let caps = (C::CLIENT_PROTOCOL_41
            | C::CLIENT_SECURE_CONNECTION
            | C::CLIENT_PLUGIN_AUTH
            | C::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
            | C::CLIENT_CONNECT_WITH_DB
            | C::CLIENT_DEPRECATE_EOF
            | C::CLIENT_LONG_PASSWORD)
            .bits();
        let mut g = vec![10];
        g.extend_from_slice(b"8.0.36\0");
        g.extend_from_slice(&7u32.to_le_bytes());
        g.extend_from_slice(&NONCE[..8]);
        g.push(0);
        g.extend_from_slice(&(caps as u16).to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(&NONCE[8..]);
        g.push(0);
        g.extend_from_slice(b"caching_sha2_password\0");
        g
    }

    async fn read_packet(s: &mut (impl AsyncRead + Unpin)) -> (u8, Vec<u8>) {
        let mut h = [0u8; 4];
        s.read_exact(&mut h).await.unwrap();
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let mut p = vec![0; len];
        s.read_exact(&mut p).await.unwrap();
        (h[3], p)
    }

    /// The server's side up to the OK: greeting, "full authentication" (0x01 0x04), then
    /// `rsa` decides whether the client must ask for the key. Returns the password as the
    /// server recovered it. The query after the OK gets an error 1105 that ends the test.
    async fn script(
        mut s: impl AsyncRead + AsyncWrite + Unpin,
        rsa: Option<rsa::RsaPrivateKey>,
    ) -> Vec<u8> {
        s.write_all(&packet(0, &greeting())).await.unwrap();
        let (seq, _response) = read_packet(&mut s).await;
        assert_eq!(seq, 1);
        s.write_all(&packet(2, &[0x01, 0x04])).await.unwrap();
        let password = match rsa {
            Some(key) => {
                let (seq, ask) = read_packet(&mut s).await;
                assert_eq!((seq, ask.as_slice()), (3, &[0x02][..]));
                use rsa::pkcs8::EncodePublicKey;
                let pem = key
                    .to_public_key()
                    .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
                    .unwrap();
                let mut reply = vec![0x01];
                reply.extend_from_slice(pem.as_bytes());
                s.write_all(&packet(4, &reply)).await.unwrap();
                let (seq, encrypted) = read_packet(&mut s).await;
                assert_eq!(seq, 5);
                let mixed = key
                    .decrypt(rsa::Oaep::new::<sha1::Sha1>(), &encrypted)
                    .unwrap();
                mixed
                    .iter()
                    .enumerate()
                    .map(|(i, b)| b ^ NONCE[i % NONCE.len()])
                    .collect()
            }
            None => read_packet(&mut s).await.1,
        };
        s.write_all(&packet(6, &[0x00, 0, 0, 2, 0, 0, 0]))
            .await
            .unwrap();
        let _query = read_packet(&mut s).await;
        let mut err = vec![0xFF];
        err.extend_from_slice(&1105u16.to_le_bytes());
        err.extend_from_slice(b"#HY000end of script");
        s.write_all(&packet(1, &err)).await.unwrap();
        password
    }

    async fn connect_over(socket: WireSocket) -> Result<(), WireError> {
        WireConnection::over(
            socket,
            "u",
            Some("p-secret"),
            "d",
            "script",
            &ConnectOptions::default(),
            mysql_async::Opts::default(),
            None,
            tokio::time::Instant::now() + std::time::Duration::from_secs(10),
        )
        .await
        .map(|_| ())
    }

    /// The error that proves authentication passed: the scripted server's answer to the
    /// first query.
    fn past_authentication(r: Result<(), WireError>) {
        match r {
            Err(WireError::Driver(e)) => assert_eq!(e.code.as_deref(), Some("1105"), "{e}"),
            Err(WireError::Unsupported) => panic!("fell back to the full client"),
            Ok(()) => panic!("the script answers the query with an error"),
        }
    }

    #[tokio::test]
    async fn the_full_exchange_without_tls_encrypts_with_the_servers_rsa_key() {
        let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let (client, server) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(script(server, Some(key)));
        past_authentication(connect_over(WireSocket::Other(Box::new(client))).await);
        assert_eq!(server.await.unwrap(), b"p-secret\0");
    }

    #[tokio::test]
    async fn the_full_exchange_over_a_unix_socket_sends_the_password_itself() {
        let (client, server) = tokio::net::UnixStream::pair().unwrap();
        let server = tokio::spawn(script(server, None));
        past_authentication(connect_over(WireSocket::Unix(client)).await);
        assert_eq!(server.await.unwrap(), b"p-secret\0");
    }

    #[test]
    fn an_unusable_server_key_is_one_line_not_a_panic() {
        let e = rsa_encrypt_password(b"p\0", NONCE, b"-----BEGIN PUBLIC KEY-----\nnot a key\n")
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Auth);
        assert!(e.message.contains("sslmode=require"), "{e}");
    }
}
