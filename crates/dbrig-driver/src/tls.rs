//! TLS for MariaDB/MySQL and PostgreSQL connections, through rustls (ring provider; no OpenSSL).
//!
//! One set of options ([`TlsOptions`], from the target URL: `sslmode`, `sslrootcert`,
//! `sslcert`, `sslkey`, `sslminversion`) becomes one rustls client configuration here, used by
//! all four clients: the lean MySQL and PostgreSQL clients (their own TLS layer over their
//! socket, in `wire_socket.rs`, so a TLS run keeps the lean client), mysql_async (admin and bulk
//! connections; patched to take this configuration, `vendor/mysql_async`) and tokio-postgres (the
//! [`MakeTlsConnect`] below, which also reports the negotiated session and the server
//! certificate's hash for `scram-sha-256-plus` channel binding).
//!
//! Modes are libpq's: `disable`, `prefer` (TLS if the server offers it, unverified),
//! `require` (TLS, unverified — or verified against the CA when a root certificate is given,
//! as libpq does), `verify-ca` (chain checked, host name not), `verify-full` (chain and host
//! name). sysbench's `--mysql-ssl` values and MySQL's `ssl-mode` names are accepted too.
//! dbrig's default is `disable`: a benchmark's transport is chosen, not negotiated, so a run
//! against a local server does not silently measure TLS.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dbrig_core::results::{TlsSession, TlsVerification};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use crate::error::{DriverError, ErrorKind, UrlPartError};

/// How hard to insist on TLS and what to check (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TlsMode {
    #[default]
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl TlsMode {
    /// libpq's names, sysbench's `--mysql-ssl` values (`on`/`off`, `REQUIRED`, `VERIFY_CA`,
    /// `VERIFY_IDENTITY`) and MySQL's `--ssl-mode` names, in any case, `_` or `-`.
    pub fn parse(s: &str) -> Option<TlsMode> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        Some(match s.as_str() {
            "disable" | "disabled" | "off" | "false" | "0" | "no" => TlsMode::Disable,
            "prefer" | "preferred" => TlsMode::Prefer,
            "require" | "required" | "on" | "true" | "1" | "yes" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" | "verify-identity" => TlsMode::VerifyFull,
            _ => return None,
        })
    }

    /// libpq's name, the one printed and stored.
    pub fn name(&self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Prefer => "prefer",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }

    pub const ACCEPTED: &'static str = "disable, prefer, require, verify-ca, verify-full \
        (also on/off, REQUIRED, VERIFY_CA, VERIFY_IDENTITY)";
}

impl fmt::Display for TlsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The lowest TLS version a connection accepts (`sslminversion`, libpq's
/// `ssl_min_protocol_version`). rustls speaks only 1.2 and 1.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

impl TlsVersion {
    pub fn parse(s: &str) -> Option<TlsVersion> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.trim_start_matches("tlsv").trim_start_matches("tls");
        match s {
            "1.2" | "1_2" | "12" => Some(TlsVersion::Tls12),
            "1.3" | "1_3" | "13" => Some(TlsVersion::Tls13),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "TLSv1.2",
            TlsVersion::Tls13 => "TLSv1.3",
        }
    }
}

/// Everything a target says about TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TlsOptions {
    pub mode: TlsMode,
    /// CA certificates (PEM) to verify the server with; without one, verifying modes use the
    /// Mozilla roots (webpki-roots).
    pub root_cert: Option<PathBuf>,
    /// Client certificate chain (PEM) and its private key (PEM, mode 0600 or stricter).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub min_version: Option<TlsVersion>,
    /// PostgreSQL's SCRAM channel binding (libpq's `channel_binding`): `None` = prefer
    /// (scram-sha-256-plus whenever the server offers it over TLS), `Some(true)` = require,
    /// `Some(false)` = disable.
    pub channel_binding: Option<bool>,
}

impl TlsOptions {
    pub fn enabled(&self) -> bool {
        self.mode != TlsMode::Disable
    }

    /// Take one URL parameter if it is a TLS one: `Ok(true)` taken, `Ok(false)` not TLS,
    /// `Err` a TLS parameter with a bad value.
    pub(crate) fn take_param(&mut self, key: &str, value: &str) -> Result<bool, UrlPartError> {
        let path = || Some(PathBuf::from(value));
        match key.to_ascii_lowercase().replace('_', "-").as_str() {
            "sslmode" | "ssl-mode" | "ssl" | "tls" => {
                self.mode = TlsMode::parse(value).ok_or_else(|| UrlPartError::TlsMode {
                    value: value.to_owned(),
                    accepted: TlsMode::ACCEPTED,
                })?
            }
            "sslrootcert" | "ssl-ca" => self.root_cert = path(),
            "sslcert" | "ssl-cert" => self.cert = path(),
            "sslkey" | "ssl-key" => self.key = path(),
            "channel-binding" => {
                self.channel_binding = match value.to_ascii_lowercase().as_str() {
                    "prefer" => None,
                    "require" => Some(true),
                    "disable" => Some(false),
                    _ => return Err(UrlPartError::ChannelBinding(value.to_owned())),
                }
            }
            "sslminversion" | "ssl-min-protocol-version" | "tls-version" => {
                // Named as the URL spelled it: `sslminversion`, `ssl_min_protocol_version`, …
                self.min_version =
                    Some(
                        TlsVersion::parse(value).ok_or_else(|| UrlPartError::TlsVersion {
                            key: key.to_owned(),
                            value: value.to_owned(),
                        })?,
                    )
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The URL parameters that give these options back (empty when TLS is off and nothing
    /// else is set), in a fixed order.
    pub(crate) fn params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if self.mode != TlsMode::Disable {
            out.push(("sslmode", self.mode.name().to_owned()));
        }
        let mut path = |k, p: &Option<PathBuf>| {
            if let Some(p) = p {
                out.push((k, p.display().to_string()));
            }
        };
        path("sslrootcert", &self.root_cert);
        path("sslcert", &self.cert);
        path("sslkey", &self.key);
        if let Some(v) = self.min_version {
            out.push(("sslminversion", v.name().to_owned()));
        }
        if let Some(required) = self.channel_binding {
            let v = if required { "require" } else { "disable" };
            out.push(("channel_binding", v.to_owned()));
        }
        out
    }

    /// What a connection with these options verifies.
    pub fn verification(&self) -> TlsVerification {
        match self.effective_mode() {
            TlsMode::VerifyFull => TlsVerification::Full,
            TlsMode::VerifyCa => TlsVerification::Ca,
            _ => TlsVerification::None,
        }
    }

    /// libpq: `require` with a root certificate given verifies the chain, as `verify-ca`.
    fn effective_mode(&self) -> TlsMode {
        match self.mode {
            TlsMode::Require if self.root_cert.is_some() => TlsMode::VerifyCa,
            m => m,
        }
    }

    /// The rustls configuration for a connection to `host` (the host name checked in
    /// `verify-full` and sent as SNI when it is a name), one per options and host for the
    /// whole process: rustls keeps its session cache (TLS 1.3 tickets, TLS 1.2 session ids) in
    /// the configuration, so only connections sharing one `Arc<ClientConfig>` can resume each
    /// other's sessions (many clients, `--reconnect`). Files are read at the first connect;
    /// a failure is not kept, so the next connect reads them again.
    pub(crate) fn client_config(&self, host: &str) -> Result<Arc<ClientConfig>, DriverError> {
        type Configs = Mutex<std::collections::HashMap<(TlsOptions, String), Arc<ClientConfig>>>;
        static CONFIGS: std::sync::OnceLock<Configs> = std::sync::OnceLock::new();
        let configs = CONFIGS.get_or_init(Default::default);
        let key = (self.clone(), host.to_owned());
        if let Some(c) = configs.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(c);
        }
        let config = self.new_client_config(host)?;
        if let Ok(mut m) = configs.lock() {
            // Two first connects may race: keep the one stored first, so all share its cache.
            return Ok(Arc::clone(m.entry(key).or_insert(config)));
        }
        Ok(config)
    }

    fn new_client_config(&self, host: &str) -> Result<Arc<ClientConfig>, DriverError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let versions: &[&'static rustls::SupportedProtocolVersion] = match self.min_version {
            Some(TlsVersion::Tls13) => &[&rustls::version::TLS13],
            _ => &[&rustls::version::TLS13, &rustls::version::TLS12],
        };
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_protocol_versions(versions)
            .map_err(|e| tls_error(format!("TLS setup: {e}")))?;
        let mode = self.effective_mode();
        let builder = match mode {
            TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Unverified(provider))),
            TlsMode::VerifyCa | TlsMode::VerifyFull => {
                let roots = Arc::new(self.roots()?);
                let webpki =
                    rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider)
                        .build()
                        .map_err(|e| tls_error(format!("TLS setup: {e}")))?;
                if mode == TlsMode::VerifyFull {
                    builder.with_webpki_verifier(webpki)
                } else {
                    builder
                        .dangerous()
                        .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
                }
            }
        };
        let mut config = match (&self.cert, &self.key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = read_certs(cert, "sslcert")?;
                let key = read_key(key)?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| tls_error(format!("sslcert/sslkey: {e}")))?
            }
            _ => {
                return Err(tls_error(
                    "a client certificate needs both sslcert and sslkey".to_owned(),
                ));
            }
        };
        // SNI only for names: an address is checked against the certificate's IP entries.
        config.enable_sni = host.parse::<std::net::IpAddr>().is_err();
        Ok(Arc::new(config))
    }

    /// Refuse a client key that group or others can read (before any client reads it).
    pub(crate) fn check_key(&self) -> Result<(), DriverError> {
        match &self.key {
            Some(key) if self.enabled() => key_mode_ok(key),
            _ => Ok(()),
        }
    }

    fn roots(&self) -> Result<RootCertStore, DriverError> {
        let mut roots = RootCertStore::empty();
        match &self.root_cert {
            Some(file) => {
                for cert in read_certs(file, "sslrootcert")? {
                    roots
                        .add(cert)
                        .map_err(|e| tls_error(format!("sslrootcert {}: {e}", file.display())))?;
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        Ok(roots)
    }
}

impl TlsOptions {
    /// A TLS handshake with `engine` at `place` that rustls failed, as one line that says what
    /// failed — the server's certificate (and what it was checked against), the protocol version
    /// (naming `sslminversion` when one is set), the server's refusal of the client's
    /// certificate, or the handshake itself — decided by the error's variant. Every client's
    /// handshake failure comes here.
    pub(crate) fn handshake_error(
        &self,
        engine: &str,
        place: &str,
        e: &rustls::Error,
    ) -> DriverError {
        use rustls::{AlertDescription as Alert, Error as E};
        let mode = self.mode;
        let message = match e {
            E::InvalidCertificate(_) => {
                let against = match &self.root_cert {
                    Some(ca) => format!("sslrootcert={}", ca.display()),
                    None => "the Mozilla roots: no sslrootcert given".to_owned(),
                };
                let checked = match self.verification() {
                    TlsVerification::Full => "its chain and host name",
                    _ => "its chain",
                };
                format!(
                    "the certificate of {engine} at {place} failed verification (sslmode={mode} \
                     checks {checked}, against {against}): {e}"
                )
            }
            E::AlertReceived(Alert::ProtocolVersion) | E::PeerIncompatible(_)
                if self.min_version.is_some() =>
            {
                let min = self.min_version.map_or("", |v| v.name());
                format!(
                    "TLS handshake with {engine} at {place} failed: the server offers no TLS \
                     version at or above sslminversion={min} ({e})"
                )
            }
            E::AlertReceived(
                Alert::BadCertificate
                | Alert::UnsupportedCertificate
                | Alert::CertificateRevoked
                | Alert::CertificateExpired
                | Alert::CertificateUnknown
                | Alert::UnknownCA
                | Alert::CertificateRequired,
            ) => {
                let which = match &self.cert {
                    Some(cert) => format!("the client certificate sslcert={}", cert.display()),
                    None => "the connection without a client certificate (no sslcert)".to_owned(),
                };
                format!(
                    "TLS handshake with {engine} at {place} failed: the server refused {which} ({e})"
                )
            }
            _ => format!("TLS handshake with {engine} at {place} failed (sslmode={mode}): {e}"),
        };
        tls_error(message)
    }
}

pub(crate) fn tls_error(message: String) -> DriverError {
    DriverError::fatal(ErrorKind::Tls, message)
}

/// The host name a TLS connection to `endpoint` checks (`verify-full`) and sends as SNI: the
/// URL's host, or `localhost` for a Unix socket (as the `mariadb` client and libpq do).
pub(crate) fn checked_host(endpoint: &crate::target::Endpoint) -> &str {
    match endpoint {
        crate::target::Endpoint::Tcp { host, .. } => host,
        crate::target::Endpoint::Socket(_) => "localhost",
    }
}

/// The name rustls checks and sends for `host` (an address stays an address).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, DriverError> {
    ServerName::try_from(host.to_owned())
        .map_err(|e| tls_error(format!("'{host}' is not a host name TLS can check: {e}")))
}

/// The certificates of `file`, given as URL parameter `what`; a file that cannot be read or
/// holds no certificate is named with the parameter that gave it.
fn read_certs(file: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, DriverError> {
    let pem = std::fs::read(file)
        .map_err(|e| tls_error(format!("{what} {}: cannot read it: {e}", file.display())))?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            tls_error(format!(
                "{what} {}: not PEM certificates: {e}",
                file.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(tls_error(format!(
            "{what} {}: no PEM certificate in it",
            file.display()
        )));
    }
    Ok(certs)
}

/// A client key, refused (one line) when group or others may read it: the rule of
/// `--password-file` and of libpq's `sslkey`.
fn read_key(file: &Path) -> Result<PrivateKeyDer<'static>, DriverError> {
    key_mode_ok(file)?;
    let pem = std::fs::read(file)
        .map_err(|e| tls_error(format!("sslkey {}: cannot read it: {e}", file.display())))?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        tls_error(format!(
            "sslkey {}: not a PEM private key: {e}",
            file.display()
        ))
    })
}

fn key_mode_ok(file: &Path) -> Result<(), DriverError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file)
        .map_err(|e| tls_error(format!("sslkey {}: cannot read it: {e}", file.display())))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(tls_error(format!(
            "sslkey {}: readable by group or others (mode {:o}); run `chmod 600 {}`",
            file.display(),
            mode & 0o777,
            file.display()
        )));
    }
    Ok(())
}

/// The session a finished handshake negotiated, as stored with every trial.
pub(crate) fn session_of(conn: &rustls::CommonState, verification: TlsVerification) -> TlsSession {
    let version = match conn.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_owned(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_owned(),
        Some(v) => format!("{v:?}"),
        None => String::new(),
    };
    let cipher = conn
        .negotiated_cipher_suite()
        .map(|s| {
            let s = s.suite();
            s.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{s:?}"))
        })
        .unwrap_or_default();
    TlsSession {
        version,
        cipher,
        verification,
        resumed: conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
    }
}

/// `prefer` / `require`: encrypt, accept any certificate (the handshake's signatures are still
/// checked, so the peer holds the certificate's key).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the name on the certificate is not
/// checked (libpq's meaning).
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

pub(crate) use pg::end_point_hash;

/// tokio-postgres's TLS hook over rustls. It keeps the negotiated session where the
/// connection can read it after connecting, and gives the server certificate's hash
/// (`tls-server-end-point`) for SCRAM channel binding.
#[derive(Clone)]
pub(crate) struct PgTls {
    pub config: Arc<ClientConfig>,
    pub host: String,
    pub verification: TlsVerification,
    pub session: Arc<Mutex<Option<TlsSession>>>,
}

impl<S> tokio_postgres::tls::MakeTlsConnect<S> for PgTls
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    type Stream = pg::PgTlsStream<S>;
    type TlsConnect = PgTls;
    type Error = std::io::Error;

    fn make_tls_connect(&mut self, _domain: &str) -> Result<PgTls, std::io::Error> {
        Ok(self.clone())
    }
}

mod pg {
    //! The stream and connect future of [`super::PgTls`].

    use std::future::Future;
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use sha2::{Digest, Sha256, Sha384, Sha512};
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio_postgres::tls::{ChannelBinding, TlsConnect};
    use tokio_rustls::client::TlsStream;

    pub struct PgTlsStream<S>(pub(super) TlsStream<S>);

    impl<S> TlsConnect<S> for super::PgTls
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        type Stream = PgTlsStream<S>;
        type Error = io::Error;
        type Future = Pin<Box<dyn Future<Output = io::Result<PgTlsStream<S>>> + Send>>;

        fn connect(self, stream: S) -> Self::Future {
            Box::pin(async move {
                let name = super::server_name(&self.host)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.message))?;
                let tls = tokio_rustls::TlsConnector::from(self.config)
                    .connect(name, stream)
                    .await?;
                let session = super::session_of(tls.get_ref().1, self.verification);
                if let Ok(mut slot) = self.session.lock() {
                    *slot = Some(session);
                }
                Ok(PgTlsStream(tls))
            })
        }
    }

    /// RFC 5929's hash for `tls-server-end-point`: the certificate signature's hash, SHA-256
    /// for MD5 and SHA-1; none for signatures without a separate hash (Ed25519), where the
    /// server cannot bind either.
    pub(crate) fn end_point_hash(cert: &[u8]) -> Option<Vec<u8>> {
        use x509_cert::der::Decode;
        use x509_cert::der::oid::db::rfc5912 as oid;
        let parsed = x509_cert::Certificate::from_der(cert).ok()?;
        let alg = parsed.signature_algorithm.oid;
        if [
            oid::MD_5_WITH_RSA_ENCRYPTION,
            oid::SHA_1_WITH_RSA_ENCRYPTION,
            oid::SHA_256_WITH_RSA_ENCRYPTION,
            oid::ECDSA_WITH_SHA_256,
            oid::ID_RSASSA_PSS,
        ]
        .contains(&alg)
        {
            Some(Sha256::digest(cert).to_vec())
        } else if [oid::SHA_384_WITH_RSA_ENCRYPTION, oid::ECDSA_WITH_SHA_384].contains(&alg) {
            Some(Sha384::digest(cert).to_vec())
        } else if [oid::SHA_512_WITH_RSA_ENCRYPTION, oid::ECDSA_WITH_SHA_512].contains(&alg) {
            Some(Sha512::digest(cert).to_vec())
        } else {
            None
        }
    }

    impl<S> tokio_postgres::tls::TlsStream for PgTlsStream<S>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        fn channel_binding(&self) -> ChannelBinding {
            let (_, session) = self.0.get_ref();
            session
                .peer_certificates()
                .and_then(|c| c.first())
                .and_then(|c| end_point_hash(c))
                .map_or_else(ChannelBinding::none, ChannelBinding::tls_server_end_point)
        }
    }

    impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for PgTlsStream<S> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_read(cx, buf)
        }
    }

    impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for PgTlsStream<S> {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write(cx, buf)
        }

        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_flush(cx)
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_shutdown(cx)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_every_spelling() {
        for (s, m) in [
            ("disable", TlsMode::Disable),
            ("off", TlsMode::Disable),
            ("DISABLED", TlsMode::Disable),
            ("prefer", TlsMode::Prefer),
            ("PREFERRED", TlsMode::Prefer),
            ("require", TlsMode::Require),
            ("on", TlsMode::Require),
            ("REQUIRED", TlsMode::Require),
            ("verify-ca", TlsMode::VerifyCa),
            ("VERIFY_CA", TlsMode::VerifyCa),
            ("verify-full", TlsMode::VerifyFull),
            ("VERIFY_IDENTITY", TlsMode::VerifyFull),
        ] {
            assert_eq!(TlsMode::parse(s), Some(m), "{s}");
        }
        assert_eq!(TlsMode::parse("sometimes"), None);
        assert_eq!(TlsVersion::parse("TLSv1.3"), Some(TlsVersion::Tls13));
        assert_eq!(TlsVersion::parse("1.2"), Some(TlsVersion::Tls12));
        assert_eq!(TlsVersion::parse("TLSv1.1"), None);
    }

    #[test]
    fn url_parameters_parse_and_print_back() {
        use crate::Target;
        let url = "mysql://u@h:3306/db?sslmode=verify-full&sslrootcert=/c/ca.pem\
                   &sslcert=/c/client.pem&sslkey=/c/client.key&sslminversion=TLSv1.3";
        let t = Target::parse(url).unwrap();
        let tls = t.tls().unwrap();
        assert_eq!(tls.mode, TlsMode::VerifyFull);
        assert_eq!(tls.min_version, Some(TlsVersion::Tls13));
        assert_eq!(t.to_string(), url);
        assert_eq!(Target::parse(&t.to_string()).unwrap(), t);
        // MySQL's and sysbench's spellings; the printed form is libpq's.
        let t = Target::parse("mysql://u@h/db?ssl-mode=VERIFY_CA&ssl-ca=/c/ca.pem").unwrap();
        assert_eq!(
            t.to_string(),
            "mysql://u@h:3306/db?sslmode=verify-ca&sslrootcert=/c/ca.pem"
        );
        let e = Target::parse("postgres://u@h/db?sslmode=maybe").unwrap_err();
        assert!(e.to_string().contains("not one of"), "{e}");
        // A bad minimum version names the option, as the URL spelled it.
        for key in ["sslminversion", "ssl_min_protocol_version"] {
            let e = Target::parse(&format!("postgres://u@h/db?{key}=TLSv1.1")).unwrap_err();
            assert!(e.reason.starts_with(&format!("{key} 'TLSv1.1'")), "{e}");
        }
        // libpq's variable, as psql takes it.
        let t = Target::parse_with_env("postgres://h/db", &|n| {
            (n == "PGSSLMODE").then(|| "require".to_owned())
        })
        .unwrap();
        assert_eq!(t.tls().unwrap().mode, TlsMode::Require);
    }

    #[test]
    fn require_with_a_root_certificate_verifies_the_chain() {
        let mut o = TlsOptions {
            mode: TlsMode::Require,
            ..TlsOptions::default()
        };
        assert_eq!(o.verification(), TlsVerification::None);
        o.root_cert = Some("/x/ca.pem".into());
        assert_eq!(o.verification(), TlsVerification::Ca);
    }

    #[test]
    fn a_key_others_can_read_is_refused_in_one_line() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("client.key");
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\n").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_key(&key).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Tls);
        assert!(e.message.contains("mode 644"), "{e}");
        assert!(e.message.contains("chmod 600"), "{e}");
        assert!(!e.message.contains('\n'), "{e}");
    }

    /// A TLS parameter with a bad value is a variant of its own; any other key is not TLS's.
    #[test]
    fn bad_tls_parameters_are_typed() {
        let mut o = TlsOptions::default();
        assert_eq!(
            o.take_param("sslmode", "maybe"),
            Err(UrlPartError::TlsMode {
                value: "maybe".to_owned(),
                accepted: TlsMode::ACCEPTED,
            })
        );
        assert_eq!(
            o.take_param("channel_binding", "always"),
            Err(UrlPartError::ChannelBinding("always".to_owned()))
        );
        let e = o
            .take_param("ssl_min_protocol_version", "TLSv1.1")
            .unwrap_err();
        assert_eq!(
            e,
            UrlPartError::TlsVersion {
                key: "ssl_min_protocol_version".to_owned(),
                value: "TLSv1.1".to_owned(),
            }
        );
        assert_eq!(
            e.to_string(),
            "ssl_min_protocol_version 'TLSv1.1' is not TLSv1.2 or TLSv1.3 (the TLS versions dbrig speaks; 1.0 and 1.1 are not)"
        );
        assert_eq!(o.take_param("compress", "1"), Ok(false));
        assert_eq!(o.take_param("sslmode", "require"), Ok(true));
        assert_eq!(o.mode, TlsMode::Require);
    }
}
