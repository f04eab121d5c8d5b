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
use crate::mysql_wire::{WireConnection, WireError};
use crate::target::Endpoint;
use crate::tls::{TlsMode, TlsOptions, server_name, session_of, tls_error};
use crate::wire_socket::TlsFailure;

/// What the target asks of TLS, ready for the handshake.
pub(crate) struct WireTls {
    config: std::sync::Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
    mode: TlsMode,
    verification: TlsVerification,
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
        let host = match endpoint {
            Endpoint::Tcp { host, .. } => host.as_str(),
            Endpoint::Socket(_) => "localhost",
        };
        Ok(Some(WireTls {
            config: options.client_config(host)?,
            name: server_name(host)?,
            mode: options.mode,
            verification: options.verification(),
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
        tls_mode: tls.map_or(TlsMode::Disable, |t| t.mode).name().to_owned(),
        tls: session.map(|s| session_of(s, tls.map_or(TlsVerification::None, |t| t.verification))),
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
        if tls.mode == TlsMode::Prefer {
            return Ok(false);
        }
        return Err(tls_error(format!(
            "the server at {place} does not offer TLS (sslmode={}); configure TLS on it \
             (ssl_cert/ssl_key) or connect with sslmode=disable",
            tls.mode
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
            TlsFailure::Tls(e) => tls_error(format!(
                "TLS handshake with {place} failed (sslmode={}): {e}",
                tls.mode
            )),
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
