//! TLS and authentication against a MariaDB and a PostgreSQL of the test's own, with
//! certificates the test makes (rcgen): a CA, a server certificate for 127.0.0.1 and the name
//! `dbrig-tls-server` (so `localhost` is a wrong host name), a server certificate of the same CA
//! for `elsewhere.example` only (a name no connection here uses), a client certificate, and a
//! second CA that signed nothing the servers use. Each mode is checked from the client's side and the
//! server's (`Ssl_version` of the session, `pg_stat_ssl`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use dbrig_core::results::TlsVerification;
use dbrig_driver::{ConnectOptions, Connection, ErrorKind, Target};

use crate::{dbrig, json, ok, text};

struct Certs {
    dir: PathBuf,
}

impl Certs {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// Writes ca.pem, other-ca.pem, server.pem/server.key, elsewhere.pem/elsewhere.key,
/// client.pem/client.key (CN `tls_cert`).
/// Server files are readable by the server's user (mode 0644 for MariaDB; PostgreSQL wants
/// its own key 0600 and owned by it: `pg-server.key`).
fn make_certs(dir: &Path) -> Certs {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
        SanType,
    };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ca = |cn: &str| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        p.distinguished_name.push(DnType::CommonName, cn);
        let cert = p.self_signed(&key).unwrap();
        (cert, Issuer::new(p, key))
    };
    let (ca_cert, issuer) = ca("dbrig test CA");
    let (other_cert, _) = ca("another CA");
    let write = |name: &str, text: &str, mode: u32| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    write("ca.pem", &ca_cert.pem(), 0o644);
    write("other-ca.pem", &other_cert.pem(), 0o644);
    let leaf = |cn: &str, names: Vec<String>, ip: bool| {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(names).unwrap();
        if ip {
            p.subject_alt_names
                .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        }
        p.distinguished_name.push(DnType::CommonName, cn);
        (
            p.signed_by(&key, &issuer).unwrap().pem(),
            key.serialize_pem(),
        )
    };
    let (cert, key) = leaf("dbrig-tls-server", vec!["dbrig-tls-server".into()], true);
    write("server.pem", &cert, 0o644);
    write("server.key", &key, 0o644);
    write("pg-server.key", &key, 0o600);
    let (cert, key) = leaf("elsewhere", vec!["elsewhere.example".into()], false);
    write("elsewhere.pem", &cert, 0o644);
    write("elsewhere.key", &key, 0o644);
    let pg_user = Command::new("id")
        .args(["-u", "postgres"])
        .output()
        .unwrap();
    if pg_user.status.success() && is_root() {
        let uid: u32 = String::from_utf8_lossy(&pg_user.stdout)
            .trim()
            .parse()
            .unwrap();
        std::os::unix::fs::chown(dir.join("pg-server.key"), Some(uid), None).unwrap();
    }
    let (cert, key) = leaf("tls_cert", Vec::new(), false);
    write("client.pem", &cert, 0o644);
    write("client.key", &key, 0o600);
    write("client-open.key", &key, 0o644);
    Certs {
        dir: dir.to_owned(),
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A managed server started with `params`, stopped when dropped.
struct Server {
    out: PathBuf,
    name: String,
    port: String,
    /// The server's Unix socket, when its start line names one.
    socket: Option<String>,
}

impl Server {
    fn start(out: &Path, name: &str, engine: &str, params: &[String]) -> Server {
        let plan = out.join(format!("{name}-server.toml"));
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"{engine}\"\nopen-access = true\n"),
        )
        .unwrap();
        let plan = plan.display().to_string();
        let mut args = vec!["server", "start", name, "--plan", &plan];
        for p in params {
            args.extend(["--param", p]);
        }
        let o = ok(dbrig(out, &args));
        let target = text(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix("target: ").map(str::to_owned))
            .expect("the target line");
        let port = target
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .expect("a port in the target")
            .to_owned();
        Server {
            out: out.to_owned(),
            name: name.to_owned(),
            port,
            socket: text(&o)
                .lines()
                .find_map(|l| l.split_once(", socket ").map(|(_, p)| p.trim().to_owned())),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = dbrig(&self.out, &["server", "stop", &self.name]);
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Connect as a benchmark client does (the lean clients).
async fn connect(url: &str) -> Result<Connection, dbrig_driver::DriverError> {
    connect_with(url, true).await
}

/// Connect with the lean client or the full one (mysql_async, tokio-postgres).
async fn connect_with(url: &str, lean: bool) -> Result<Connection, dbrig_driver::DriverError> {
    let target = Target::parse(url).unwrap_or_else(|e| panic!("{e}"));
    let options = ConnectOptions {
        lean,
        ..ConnectOptions::default()
    };
    Connection::connect(&target, &options).await
}

async fn first(c: &mut Connection, sql: &str) -> String {
    let rows = c
        .query(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.first()
        .and_then(|r| r.first())
        .and_then(|v| v.to_text())
        .unwrap_or_default()
}

#[test]
fn mariadb_tls_modes_client_certificates_and_ed25519() {
    let out = tempfile::tempdir().unwrap();
    let certs = make_certs(out.path());
    let server = Server::start(
        out.path(),
        "tlsmaria",
        "mariadb",
        &[
            format!("ssl_ca={}", certs.path("ca.pem")),
            format!("ssl_cert={}", certs.path("server.pem")),
            format!("ssl_key={}", certs.path("server.key")),
        ],
    );
    let port = &server.port;
    let sql = |s: &str| {
        let o = Command::new("mariadb")
            .args(["-uroot", "-h127.0.0.1", "-P", port, "-N", "-B", "-e", s])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    // The initialiser's anonymous accounts (''@localhost) would match before `user@'%'`.
    sql("DELETE FROM mysql.global_priv WHERE User = ''; FLUSH PRIVILEGES");
    sql("INSTALL SONAME 'auth_ed25519'");
    sql("CREATE USER tls_ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw-1')");
    sql("CREATE USER tls_x509@'%' REQUIRE X509");
    sql("CREATE USER tls_pw@'%' IDENTIFIED BY 'pw-2' REQUIRE SSL");
    sql("GRANT ALL ON test.* TO tls_ed@'%', tls_x509@'%', tls_pw@'%'");
    let ca = certs.path("ca.pem");
    let other = certs.path("other-ca.pem");
    let url = |user: &str, host: &str, q: &str| format!("mysql://{user}@{host}:{port}/test?{q}");
    rt().block_on(async {
        // disable: clear text, and the session says so.
        let mut c = connect(&url("root", "127.0.0.1", "sslmode=disable")).await.unwrap();
        assert_eq!(first(&mut c, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'").await, "");
        assert!(c.security().unwrap().tls.is_none());
        c.close().await;
        // require, verify-ca, verify-full: encrypted, the server's Ssl_version matches ours.
        for (q, host, verified) in [
            ("sslmode=require".to_owned(), "127.0.0.1", TlsVerification::None),
            (format!("sslmode=verify-ca&sslrootcert={ca}"), "localhost", TlsVerification::Ca),
            (format!("sslmode=verify-full&sslrootcert={ca}"), "127.0.0.1", TlsVerification::Full),
            (format!("sslmode=VERIFY_IDENTITY&sslrootcert={ca}&sslminversion=TLSv1.3"), "127.0.0.1", TlsVerification::Full),
        ] {
            let mut c = connect(&url("root", host, &q)).await.unwrap_or_else(|e| panic!("{q}: {e}"));
            let sec = c.security().unwrap();
            let tls = sec.tls.clone().unwrap_or_else(|| panic!("{q}: no TLS"));
            assert_eq!(tls.verification, verified, "{q}");
            let server_says = first(&mut c, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'").await;
            assert_eq!(server_says, tls.version, "{q}");
            assert!(!tls.cipher.is_empty());
            c.close().await;
        }
        // Wrong CA; right CA but the wrong host name for verify-full.
        for (q, host) in [
            (format!("sslmode=verify-ca&sslrootcert={other}"), "127.0.0.1"),
            (format!("sslmode=verify-full&sslrootcert={other}"), "127.0.0.1"),
            (format!("sslmode=verify-full&sslrootcert={ca}"), "localhost"),
        ] {
            let e = connect(&url("root", host, &q)).await.err().unwrap_or_else(|| panic!("{q} connected"));
            assert_eq!(e.kind, ErrorKind::Tls, "{q}: {e}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        // A key others can read is refused in one line before anything is sent.
        let e = connect(&url("tls_x509", "127.0.0.1", &format!("sslmode=require&sslcert={}&sslkey={}", certs.path("client.pem"), certs.path("client-open.key")))).await.err().unwrap();
        assert!(e.to_string().contains("chmod 600"), "{e}");
        // REQUIRE X509: refused without a certificate, accepted with one.
        let e = connect(&url("tls_x509", "127.0.0.1", "sslmode=require")).await.err().unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        let mut c = connect(&url("tls_x509", "127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}", certs.path("client.pem"), certs.path("client.key")))).await.unwrap();
        assert_eq!(first(&mut c, "SELECT CURRENT_USER()").await, "tls_x509@%");
        c.close().await;
        // A password over TLS (REQUIRE SSL), and refused in the clear.
        let c = connect(&format!("mysql://tls_pw:pw-2@127.0.0.1:{port}/test?sslmode=require")).await.unwrap();
        assert_eq!(c.security().unwrap().auth.as_deref(), Some("mysql_native_password"));
        c.close().await;
        assert!(connect(&format!("mysql://tls_pw:pw-2@127.0.0.1:{port}/test")).await.is_err());
        // ed25519, in the clear and over TLS; a wrong password is refused.
        for q in ["sslmode=disable", "sslmode=require"] {
            let mut c = connect(&format!("mysql://tls_ed:ed-pw-1@127.0.0.1:{port}/test?{q}")).await.unwrap_or_else(|e| panic!("ed25519 {q}: {e}"));
            assert_eq!(c.security().unwrap().auth.as_deref(), Some("client_ed25519"));
            assert_eq!(first(&mut c, "SELECT CURRENT_USER()").await, "tls_ed@%");
            c.close().await;
        }
        let e = connect(&format!("mysql://tls_ed:nope@127.0.0.1:{port}/test")).await.err().unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        // Session resumption: connections with the same options share one rustls
        // configuration and its session cache, so the second resumes the first's session
        // (options no other connection here used, so its cache starts empty). The resumed
        // session works and the server reports the same TLS version. (MariaDB 10.11's
        // `Ssl_sessions_reused` stays 0 for a TLS 1.3 ticket resumption, so it cannot confirm.)
        let q = format!("sslmode=verify-ca&sslrootcert={ca}&sslminversion=TLSv1.2");
        let version = "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'";
        for resumed in [false, true, true] {
            let mut c = connect(&url("root", "127.0.0.1", &q)).await.unwrap();
            let tls = c.security().unwrap().tls.unwrap();
            assert_eq!(tls.resumed, resumed, "{tls:?}");
            assert_eq!(c.tls_resumed(), resumed);
            assert_eq!(first(&mut c, version).await, tls.version);
            assert_eq!(
                c.security().unwrap().summary().contains("session resumed"),
                resumed
            );
            c.close().await;
        }
        // sslminversion on the full client (mysql_async), against a server offering 1.3: it
        // connects, and at 1.3.
        let full = ConnectOptions::default();
        let t = Target::parse(&url("root", "127.0.0.1", "sslmode=require&sslminversion=TLSv1.3")).unwrap();
        let mut c = Connection::connect(&t, &full).await.unwrap();
        assert_eq!(first(&mut c, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'").await, "TLSv1.3");
        c.close().await;
    });
    // An OLTP workload over TLS through the binary: exact counts, the TLS session stored and
    // printed with the run.
    let target = format!("mysql://root@127.0.0.1:{port}/test?sslmode=verify-full&sslrootcert={ca}");
    ok(dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_read_write",
            "--target",
            &target,
            "--table-size",
            "100",
            "--tables",
            "1",
        ],
    ));
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            &target,
            "--table-size",
            "100",
            "--tables",
            "1",
            "--threads",
            "1",
            "--events",
            "20",
            "--time",
            "0",
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    assert_eq!(v["queries"]["read"], 280, "{v}");
    assert_eq!(v["queries"]["write"], 80, "{v}");
    assert_eq!(v["queries"]["other"], 40, "{v}");
    assert_eq!(v["connection"]["tls"]["verification"], "full", "{v}");
    assert!(
        v["connection"]["tls"]["version"]
            .as_str()
            .unwrap()
            .starts_with("TLSv1."),
        "{v}"
    );
    // The same TLS through sysbench's and dbrig's options instead of URL parameters.
    let plain = format!("mysql://root@127.0.0.1:{port}/test");
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_point_select",
            "--target",
            &plain,
            "--mysql-ssl",
            "VERIFY_IDENTITY",
            "--ssl-ca",
            &ca,
            "--table-size",
            "100",
            "--tables",
            "1",
            "--threads",
            "2",
            "--events",
            "50",
            "--time",
            "0",
        ],
    ));
    assert!(
        text(&o).contains("connection:") && text(&o).contains("CA and host verified"),
        "{}",
        text(&o)
    );
    // --reconnect over TLS: the clients share one configuration with the connection the
    // trial's security facts come from (opened just before, a full handshake), so every
    // client connection resumes a session; counted with the connect latency and printed.
    let reconnect = [
        "run",
        "oltp_point_select",
        "--target",
        &target,
        "--table-size",
        "100",
        "--tables",
        "1",
        "--threads",
        "1",
        "--events",
        "20",
        "--time",
        "0",
        "--reconnect",
        "5",
    ];
    let v = json(&ok(dbrig(
        out.path(),
        &[&reconnect[..], &["--format", "json"]].concat(),
    )));
    let connects = v["connect_latency"]["connections"].as_u64().unwrap();
    assert!(connects >= 4, "{v}");
    assert_eq!(v["connect_latency"]["resumed"], connects, "{v}");
    let t = text(&ok(dbrig(out.path(), &reconnect)));
    assert!(
        t.contains(&format!("({connects} resumed a TLS session)")),
        "{t}"
    );
}

/// A server that offers TLS 1.2 only: `sslminversion=TLSv1.3` is refused by both clients in
/// their handshake (mysql_async takes dbrig's rustls configuration), each in one line that
/// names the option; without the minimum both connect at 1.2.
#[test]
fn mariadb_tls12_server_and_sslminversion() {
    let out = tempfile::tempdir().unwrap();
    let certs = make_certs(out.path());
    let server = Server::start(
        out.path(),
        "tls12maria",
        "mariadb",
        &[
            format!("ssl_ca={}", certs.path("ca.pem")),
            format!("ssl_cert={}", certs.path("server.pem")),
            format!("ssl_key={}", certs.path("server.key")),
            "tls_version=TLSv1.2".to_owned(),
        ],
    );
    let port = &server.port;
    let url = |q: &str| format!("mysql://root@127.0.0.1:{port}/test?sslmode=require{q}");
    let version = "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'";
    rt().block_on(async {
        for lean in [true, false] {
            let options = ConnectOptions {
                lean,
                ..ConnectOptions::default()
            };
            let t = Target::parse(&url("")).unwrap();
            let mut c = Connection::connect(&t, &options).await.unwrap();
            assert_eq!(first(&mut c, version).await, "TLSv1.2", "lean {lean}");
            c.close().await;
            let t = Target::parse(&url("&sslminversion=TLSv1.3")).unwrap();
            let e = Connection::connect(&t, &options)
                .await
                .err()
                .unwrap_or_else(|| panic!("lean {lean}: connected below sslminversion"));
            assert_eq!(e.kind, ErrorKind::Tls, "lean {lean}: {e}");
            assert!(!e.to_string().contains('\n'), "{e}");
            // The option that decided it, by both clients, in the handshake.
            assert!(
                e.message.contains("sslminversion=TLSv1.3"),
                "lean {lean}: {e}"
            );
            assert!(!e.message.contains("nothing answered"), "lean {lean}: {e}");
        }
    });
    // Through the binary: prepare (the full client) refuses in one line.
    let o = dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url("&sslminversion=TLSv1.3"),
            "--table-size",
            "10",
            "--tables",
            "1",
        ],
    );
    assert!(!o.status.success());
    assert!(text(&o).contains("TLS"), "{}", text(&o));
}

/// A MariaDB whose certificate names neither `127.0.0.1` nor `localhost` (only
/// `elsewhere.example`), through both clients — the lean one and the full one (mysql_async:
/// prepare, probes, loads) — over TCP and over the server's Unix socket:
/// - `verify-ca` checks the chain and not the name, so it connects; `verify-full` refuses;
/// - every mode works over the socket (the `mariadb` client encrypts a socket too), and the
///   server's own `Ssl_version` says the session is encrypted;
/// - a failure says what failed (verification, against which CA; a certificate file that
///   cannot be read, by its parameter) and never "nothing answered": the server did.
///
/// Then the same through the binary: `prepare` (the full client) and `run` with `verify-ca`
/// over TCP, and over the socket.
#[test]
fn mariadb_tls_verify_ca_socket_and_failures_on_both_clients() {
    let out = tempfile::tempdir().unwrap();
    let certs = make_certs(out.path());
    let server = Server::start(
        out.path(),
        "tlselsewhere",
        "mariadb",
        &[
            format!("ssl_ca={}", certs.path("ca.pem")),
            format!("ssl_cert={}", certs.path("elsewhere.pem")),
            format!("ssl_key={}", certs.path("elsewhere.key")),
        ],
    );
    let port = &server.port;
    let socket = server.socket.clone().expect("the managed server's socket");
    let ca = certs.path("ca.pem");
    let other = certs.path("other-ca.pem");
    let tcp = |q: &str| format!("mysql://root@127.0.0.1:{port}/test?{q}");
    let sock = |q: &str| format!("mysql://root@localhost/test?socket={socket}&{q}");
    let version = "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_version'";
    rt().block_on(async {
        for lean in [true, false] {
            let client = if lean { "lean" } else { "full" };
            // Connects, encrypted as the server sees it.
            for url in [
                tcp(&format!("sslmode=verify-ca&sslrootcert={ca}")),
                sock("sslmode=prefer"),
                sock("sslmode=require"),
                sock(&format!("sslmode=verify-ca&sslrootcert={ca}")),
            ] {
                let mut c = connect_with(&url, lean)
                    .await
                    .unwrap_or_else(|e| panic!("{client} {url}: {e}"));
                let v = first(&mut c, version).await;
                assert!(v.starts_with("TLSv1."), "{client} {url}: Ssl_version {v:?}");
                if lean {
                    assert_eq!(c.security().unwrap().tls.unwrap().version, v, "{url}");
                }
                c.close().await;
            }
            // Refused, saying what failed.
            for (url, says) in [
                (
                    tcp(&format!("sslmode=verify-full&sslrootcert={ca}")),
                    vec!["failed verification", "host name", "127.0.0.1"],
                ),
                (
                    sock(&format!("sslmode=verify-full&sslrootcert={ca}")),
                    vec!["failed verification", "localhost"],
                ),
                (
                    tcp(&format!("sslmode=verify-ca&sslrootcert={other}")),
                    vec!["failed verification", &format!("sslrootcert={other}")],
                ),
                (
                    tcp(&format!(
                        "sslmode=verify-ca&sslrootcert={}",
                        certs.path("none.pem")
                    )),
                    vec!["sslrootcert", &certs.path("none.pem"), "cannot read it"],
                ),
                (
                    tcp(&format!(
                        "sslmode=require&sslcert={}&sslkey={}",
                        certs.path("none.pem"),
                        certs.path("client.key")
                    )),
                    vec!["sslcert", &certs.path("none.pem"), "cannot read it"],
                ),
            ] {
                let e = connect_with(&url, lean)
                    .await
                    .err()
                    .unwrap_or_else(|| panic!("{client} {url}: connected"));
                assert_eq!(e.kind, ErrorKind::Tls, "{client} {url}: {e}");
                for s in says {
                    assert!(e.message.contains(s), "{client} {url}: {s:?} not in: {e}");
                }
                assert!(!e.message.contains("nothing answered"), "{client}: {e}");
                assert!(!e.message.contains('\n'), "{e}");
            }
        }
    });
    // The user's view: prepare (the full client) and a run (both clients) with verify-ca.
    for target in [
        tcp(&format!("sslmode=verify-ca&sslrootcert={ca}")),
        sock(&format!("sslmode=verify-ca&sslrootcert={ca}")),
    ] {
        let args = ["--target", &target, "--table-size", "20", "--tables", "1"];
        ok(dbrig(
            out.path(),
            &[&["prepare", "oltp_point_select"][..], &args].concat(),
        ));
        let v = json(&ok(dbrig(
            out.path(),
            &[
                &["run", "oltp_point_select", "--events", "10", "--time", "0"][..],
                &args,
                &["--format", "json"],
            ]
            .concat(),
        )));
        assert_eq!(v["queries"]["read"], 10, "{target}: {v}");
        assert_eq!(
            v["connection"]["tls"]["verification"], "ca",
            "{target}: {v}"
        );
        ok(dbrig(
            out.path(),
            &[&["cleanup", "oltp_point_select"][..], &args].concat(),
        ));
    }
    let e = crate::error_line(&dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &tcp(&format!("sslmode=verify-full&sslrootcert={ca}")),
        ],
    ));
    assert!(e.contains("failed verification"), "{e}");
    assert!(!e.contains("nothing answered"), "{e}");
}

/// A PostgreSQL that offers TLS 1.2 at most: `sslminversion=TLSv1.3` is refused by both
/// clients (the lean one and tokio-postgres) in the handshake, in one line that names the
/// option; without it both connect at 1.2.
#[test]
fn postgres_tls12_server_and_sslminversion() {
    let out = tempfile::tempdir().unwrap();
    let certs = make_certs(out.path());
    let server = Server::start(
        out.path(),
        "tls12pg",
        "postgres",
        &[
            "ssl=on".to_owned(),
            format!("ssl_cert_file={}", certs.path("server.pem")),
            format!("ssl_key_file={}", certs.path("pg-server.key")),
            "ssl_max_protocol_version=TLSv1.2".to_owned(),
        ],
    );
    let url = |q: &str| {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?sslmode=require{q}",
            server.port
        )
    };
    let ssl_row = "SELECT coalesce((SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl), '')";
    rt().block_on(async {
        for lean in [true, false] {
            let mut c = connect_with(&url(""), lean)
                .await
                .unwrap_or_else(|e| panic!("lean {lean}: {e}"));
            assert_eq!(first(&mut c, ssl_row).await, "TLSv1.2", "lean {lean}");
            c.close().await;
            let e = connect_with(&url("&sslminversion=TLSv1.3"), lean)
                .await
                .err()
                .unwrap_or_else(|| panic!("lean {lean}: connected below sslminversion"));
            assert_eq!(e.kind, ErrorKind::Tls, "lean {lean}: {e}");
            assert!(
                e.message.contains("sslminversion=TLSv1.3"),
                "lean {lean}: {e}"
            );
            assert!(!e.message.contains('\n'), "{e}");
        }
    });
}

#[test]
fn postgres_tls_modes_certificates_and_scram() {
    let out = tempfile::tempdir().unwrap();
    let certs = make_certs(out.path());
    let hba = out.path().join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\n\
         hostssl all tls_cert 127.0.0.1/32 cert\n\
         host all tls_scram 127.0.0.1/32 scram-sha-256\n\
         host all tls_md5 127.0.0.1/32 md5\n\
         host all tls_clear 127.0.0.1/32 password\n\
         host all tls_nobody 127.0.0.1/32 reject\n\
         hostssl all tls_nossl 127.0.0.1/32 reject\n\
         hostnossl all tls_nossl 127.0.0.1/32 trust\n\
         hostssl all tls_sslonly 127.0.0.1/32 scram-sha-256\n\
         hostnossl all tls_sslonly 127.0.0.1/32 reject\n\
         host all all 127.0.0.1/32 trust\n\
         host all all ::1/128 trust\n",
    )
    .unwrap();
    std::fs::set_permissions(&hba, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = Server::start(
        out.path(),
        "tlspg",
        "postgres",
        &[
            "ssl=on".to_owned(),
            format!("ssl_ca_file={}", certs.path("ca.pem")),
            format!("ssl_cert_file={}", certs.path("server.pem")),
            format!("ssl_key_file={}", certs.path("pg-server.key")),
            format!("hba_file={}", hba.display()),
        ],
    );
    let port = &server.port;
    let psql = |s: &str| {
        let o = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                port,
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-X",
                "-A",
                "-t",
                "-q",
                "-c",
                s,
            ])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{s}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    psql("SET password_encryption = 'scram-sha-256'; CREATE USER tls_scram PASSWORD 'scram-pw'");
    psql("SET password_encryption = 'md5'; CREATE USER tls_md5 PASSWORD 'md5-pw'");
    psql("CREATE USER tls_cert");
    psql("CREATE USER tls_clear PASSWORD 'clear-pw'");
    psql("CREATE USER tls_nossl");
    psql(
        "SET password_encryption = 'scram-sha-256'; CREATE USER tls_sslonly PASSWORD 'sslonly-pw'",
    );
    let ca = certs.path("ca.pem");
    let other = certs.path("other-ca.pem");
    let url =
        |user: &str, host: &str, q: &str| format!("postgres://{user}@{host}:{port}/postgres?{q}");
    let ssl_row = "SELECT coalesce((SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl), '')";
    rt().block_on(async {
        let mut c = connect(&url("postgres", "127.0.0.1", "sslmode=disable"))
            .await
            .unwrap();
        assert_eq!(first(&mut c, ssl_row).await, "");
        c.close().await;
        for (q, host, verified) in [
            (
                "sslmode=require".to_owned(),
                "127.0.0.1",
                TlsVerification::None,
            ),
            (
                "sslmode=prefer".to_owned(),
                "127.0.0.1",
                TlsVerification::None,
            ),
            (
                format!("sslmode=verify-ca&sslrootcert={ca}"),
                "localhost",
                TlsVerification::Ca,
            ),
            (
                format!("sslmode=verify-full&sslrootcert={ca}"),
                "127.0.0.1",
                TlsVerification::Full,
            ),
        ] {
            let mut c = connect(&url("postgres", host, &q))
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"));
            let tls = c
                .security()
                .unwrap()
                .tls
                .unwrap_or_else(|| panic!("{q}: no TLS"));
            assert_eq!(tls.verification, verified, "{q}");
            assert_eq!(first(&mut c, ssl_row).await, tls.version, "{q}");
            c.close().await;
        }
        for (q, host) in [
            (
                format!("sslmode=verify-ca&sslrootcert={other}"),
                "127.0.0.1",
            ),
            (format!("sslmode=verify-full&sslrootcert={ca}"), "localhost"),
        ] {
            let e = connect(&url("postgres", host, &q))
                .await
                .err()
                .unwrap_or_else(|| panic!("{q} connected"));
            assert_eq!(e.kind, ErrorKind::Tls, "{q}: {e}");
        }
        // libpq's `prefer`: the server's rules refuse the encrypted session (hostssl …
        // reject), so it is tried once more in the clear, by both clients; `require` fails.
        for lean in [true, false] {
            let u = url("tls_nossl", "127.0.0.1", "sslmode=prefer");
            let mut c = connect_with(&u, lean)
                .await
                .unwrap_or_else(|e| panic!("lean {lean}: {e}"));
            let security = c.security().unwrap();
            assert_eq!(security.tls, None, "lean {lean}");
            assert_eq!(security.tls_mode, "prefer", "lean {lean}");
            assert_eq!(first(&mut c, ssl_row).await, "", "lean {lean}");
            assert_eq!(first(&mut c, "SELECT current_user").await, "tls_nossl");
            c.close().await;
        }
        let e = connect(&url("tls_nossl", "127.0.0.1", "sslmode=require"))
            .await
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        assert!(e.message.contains("pg_hba.conf"), "{e}");
        // When the clear attempt fails too, both answers are told (the first is the one that
        // matters here: a wrong password over TLS), and one answer given twice only once.
        let e = connect(&format!(
            "postgres://tls_sslonly:wrong@127.0.0.1:{port}/postgres?sslmode=prefer"
        ))
        .await
        .err()
        .unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        assert!(e.message.contains("password authentication failed"), "{e}");
        assert!(e.message.contains("tried again without TLS"), "{e}");
        assert!(e.message.contains("no encryption"), "{e}");
        let e = connect(&format!(
            "postgres://tls_scram:wrong@127.0.0.1:{port}/postgres?sslmode=prefer"
        ))
        .await
        .err()
        .unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        assert_eq!(
            e.message.matches("password authentication failed").count(),
            1,
            "{e}"
        );
        // Certificate authentication (hostssl … cert): the certificate's CN is the user.
        let mut c = connect(&url(
            "tls_cert",
            "127.0.0.1",
            &format!(
                "sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}",
                certs.path("client.pem"),
                certs.path("client.key")
            ),
        ))
        .await
        .unwrap();
        assert_eq!(first(&mut c, "SELECT current_user").await, "tls_cert");
        c.close().await;
        assert!(
            connect(&url("tls_cert", "127.0.0.1", "sslmode=require"))
                .await
                .is_err()
        );
        // scram-sha-256 over TLS (with channel binding: -plus) and md5 in the clear.
        let mut c = connect(&format!(
            "postgres://tls_scram:scram-pw@127.0.0.1:{port}/postgres?sslmode=require"
        ))
        .await
        .unwrap();
        assert_eq!(first(&mut c, "SELECT current_user").await, "tls_scram");
        c.close().await;
        // channel_binding=require: connecting at all proves scram-sha-256-plus was used.
        let c = connect(&format!("postgres://tls_scram:scram-pw@127.0.0.1:{port}/postgres?sslmode=require&channel_binding=require")).await.unwrap_or_else(|e| panic!("scram-sha-256-plus: {e}"));
        assert_eq!(c.security().unwrap().auth.as_deref(), Some("scram-sha-256-plus"));
        c.close().await;
        let e = connect(&format!(
            "postgres://tls_scram:wrong@127.0.0.1:{port}/postgres?sslmode=require"
        ))
        .await
        .err()
        .unwrap();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        let mut c = connect(&format!(
            "postgres://tls_md5:md5-pw@127.0.0.1:{port}/postgres"
        ))
        .await
        .unwrap();
        assert_eq!(first(&mut c, "SELECT current_user").await, "tls_md5");
        c.close().await;
        let mut c = connect(&format!(
            "postgres://tls_clear:clear-pw@127.0.0.1:{port}/postgres?sslmode=require"
        ))
        .await
        .unwrap();
        assert_eq!(first(&mut c, "SELECT current_user").await, "tls_clear");
        c.close().await;
        // The method each hba rule asks for, as the probe stored with every trial reads it
        // (no password in these URLs: the probe never sends one).
        let client = format!(
            "sslcert={}&sslkey={}",
            certs.path("client.pem"),
            certs.path("client.key")
        );
        for (user, q, method) in [
            ("postgres", "sslmode=disable", "trust"),
            ("postgres", "sslmode=require", "trust"),
            ("tls_md5", "sslmode=disable", "md5"),
            ("tls_clear", "sslmode=require", "password"),
            ("tls_scram", "sslmode=disable", "scram-sha-256"),
            ("tls_scram", "sslmode=require", "scram-sha-256-plus"),
            (
                "tls_scram",
                "sslmode=require&channel_binding=disable",
                "scram-sha-256",
            ),
            (
                "tls_cert",
                &format!("sslmode=verify-full&sslrootcert={ca}&{client}"),
                "cert or trust",
            ),
        ] {
            let url = url(user, "127.0.0.1", q);
            let target = Target::parse(&url).unwrap();
            let got = dbrig_driver::postgres_auth_method(&target, std::time::Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(got.as_deref(), Some(method), "{url}");
        }
        // A user no rule lets in: the probe says so in one line, as connecting would.
        let e = dbrig_driver::postgres_auth_method(
            &Target::parse(&url("tls_nobody", "127.0.0.1", "sslmode=disable")).unwrap(),
            std::time::Duration::from_secs(10),
        )
        .await
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Auth, "{e}");
        assert!(e.message.contains("pg_hba.conf"), "{e}");
    });
    let target = format!(
        "postgres://postgres@127.0.0.1:{port}/postgres?sslmode=verify-full&sslrootcert={ca}"
    );
    ok(dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_read_write",
            "--target",
            &target,
            "--table-size",
            "100",
            "--tables",
            "1",
        ],
    ));
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_write",
            "--target",
            &target,
            "--table-size",
            "100",
            "--tables",
            "1",
            "--threads",
            "1",
            "--events",
            "20",
            "--time",
            "0",
            "--format",
            "json",
        ],
    ));
    let v = json(&o);
    assert_eq!(v["queries"]["read"], 280, "{v}");
    assert_eq!(v["queries"]["write"], 80, "{v}");
    assert_eq!(v["queries"]["other"], 40, "{v}");
    assert_eq!(v["connection"]["tls"]["verification"], "full", "{v}");
    // The authentication method is stored with the trial whatever the TLS mode.
    assert_eq!(v["connection"]["auth"], "trust", "{v}");
}
