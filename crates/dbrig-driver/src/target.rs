//! Target URLs: what to connect to, parsed once and printed only redacted.

use std::fmt;
use std::path::PathBuf;

/// The SQL dialect of a target; workloads pick their SQL files by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    Mysql,
    Postgres,
    Sqlite,
}

impl Dialect {
    pub fn name(&self) -> &'static str {
        match self {
            Dialect::Mysql => "mysql",
            Dialect::Postgres => "postgres",
            Dialect::Sqlite => "sqlite",
        }
    }
}

/// A password. It never prints: `Debug` and `Display` show `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The password itself, for handing to a client library and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where a server-backed target listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Socket(PathBuf),
}

/// What to connect to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// MariaDB or MySQL (`mysql://` and `mariadb://` are the same protocol).
    Mysql {
        user: String,
        password: Option<Secret>,
        endpoint: Endpoint,
        database: String,
    },
    Postgres {
        user: String,
        password: Option<Secret>,
        endpoint: Endpoint,
        database: String,
    },
    /// An SQLite file, or `None` for the in-memory database shared by all connections of the
    /// process (it lives until the process exits).
    Sqlite { path: Option<PathBuf> },
    /// The mock engine for tests; `options` is the raw query string (see the mock module).
    Mock { options: String },
}

/// A target URL that cannot be used, with what is wrong and how to write it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid target URL '{url}': {reason}")]
pub struct TargetError {
    pub url: String,
    pub reason: String,
}

const URL_FORMS: &str = "expected mysql://USER@HOST:PORT/DB, mariadb://…, \
postgres://USER@HOST:PORT/DB, sqlite:PATH or sqlite::memory:";

impl Target {
    /// Parse a target URL. A password embedded in the URL is accepted (the caller should warn:
    /// it is visible in process listings); `--password-env` or a password file is better.
    pub fn parse(url: &str) -> Result<Target, TargetError> {
        let err = |reason: &str| TargetError {
            url: redact_url(url),
            reason: reason.to_owned(),
        };
        if let Some(rest) = url.strip_prefix("sqlite:") {
            let rest = rest.strip_prefix("//").unwrap_or(rest);
            return match rest {
                "" => Err(err(
                    "missing file path after 'sqlite:' (use sqlite::memory: for memory)",
                )),
                ":memory:" => Ok(Target::Sqlite { path: None }),
                p => Ok(Target::Sqlite {
                    path: Some(PathBuf::from(p)),
                }),
            };
        }
        if let Some(rest) = url.strip_prefix("mock:") {
            return Ok(Target::Mock {
                options: rest.trim_start_matches('?').to_owned(),
            });
        }
        let (scheme, rest) = url.split_once("://").ok_or_else(|| err(URL_FORMS))?;
        let dialect = match scheme {
            "mysql" | "mariadb" => Dialect::Mysql,
            "postgres" | "postgresql" => Dialect::Postgres,
            other => return Err(err(&format!("unknown scheme '{other}'; {URL_FORMS}"))),
        };
        // An empty URL names no server: defaulting it to a local one would benchmark (and
        // prepare tables on) a server the user never named.
        if rest.trim().is_empty() {
            return Err(err(&format!(
                "nothing after '{scheme}://': name the server, e.g. {scheme}://USER@127.0.0.1:{}/DB",
                if dialect == Dialect::Mysql {
                    3306
                } else {
                    5432
                }
            )));
        }
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, database) = match rest.split_once('/') {
            Some((a, d)) => (a, d),
            None => (rest, ""),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((u, p)) => (percent_decode(u), Some(Secret::new(percent_decode(p)))),
                None => (percent_decode(u), None),
            },
            None => (String::new(), None),
        };
        let mut socket = None;
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("socket", path)) if !path.is_empty() => {
                    socket = Some(PathBuf::from(percent_decode(path)))
                }
                _ => {
                    return Err(err(&format!(
                        "unknown URL parameter '{pair}' (known: socket=PATH)"
                    )));
                }
            }
        }
        let default_port = match dialect {
            Dialect::Mysql => 3306,
            _ => 5432,
        };
        let endpoint = match socket {
            Some(path) => Endpoint::Socket(path),
            None => {
                let (host, port) = split_host_port(hostport).map_err(|r| err(&r))?;
                let host = if host.is_empty() {
                    "127.0.0.1".to_owned()
                } else {
                    host
                };
                Endpoint::Tcp {
                    host,
                    port: port.unwrap_or(default_port),
                }
            }
        };
        let database = if database.is_empty() {
            "test".to_owned()
        } else {
            percent_decode(database)
        };
        if !database
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        {
            return Err(err(
                "database name may hold only letters, digits, '_' and '$'",
            ));
        }
        Ok(match dialect {
            Dialect::Mysql => Target::Mysql {
                user: if user.is_empty() { "root".into() } else { user },
                password,
                endpoint,
                database,
            },
            _ => Target::Postgres {
                user: if user.is_empty() {
                    "postgres".into()
                } else {
                    user
                },
                password,
                endpoint,
                database,
            },
        })
    }

    /// The database (MariaDB/MySQL, PostgreSQL) or file (SQLite) a target names, as a name
    /// other databases of the same server can be derived from; `None` for SQLite in memory
    /// and the mock engine.
    pub fn database(&self) -> Option<String> {
        match self {
            Target::Mysql { database, .. } | Target::Postgres { database, .. } => {
                Some(database.clone())
            }
            Target::Sqlite { path: Some(p) } => Some(p.display().to_string()),
            Target::Sqlite { path: None } | Target::Mock { .. } => None,
        }
    }

    /// The same server (or SQLite folder) with another database: `name` for MariaDB/MySQL and
    /// PostgreSQL, the file `STEM_SUFFIX.EXT` beside the original for SQLite (`suffix`). The
    /// caller builds `name` from characters safe in an identifier.
    pub fn with_database(&self, name: &str, suffix: &str) -> Target {
        match self {
            Target::Mysql {
                user,
                password,
                endpoint,
                ..
            } => Target::Mysql {
                user: user.clone(),
                password: password.clone(),
                endpoint: endpoint.clone(),
                database: name.to_owned(),
            },
            Target::Postgres {
                user,
                password,
                endpoint,
                ..
            } => Target::Postgres {
                user: user.clone(),
                password: password.clone(),
                endpoint: endpoint.clone(),
                database: name.to_owned(),
            },
            Target::Sqlite { path: Some(p) } => {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                let file = match (stem, p.extension()) {
                    (Some(stem), Some(ext)) => {
                        format!("{stem}_{suffix}.{}", ext.to_string_lossy())
                    }
                    (Some(stem), None) => format!("{stem}_{suffix}"),
                    (None, _) => format!("dbrig_{suffix}.sqlite"),
                };
                Target::Sqlite {
                    path: Some(p.with_file_name(file)),
                }
            }
            other => other.clone(),
        }
    }

    /// The dialect, or `None` for the mock engine (which accepts any dialect's SQL).
    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Mysql { .. } => Dialect::Mysql,
            Target::Postgres { .. } => Dialect::Postgres,
            Target::Sqlite { .. } => Dialect::Sqlite,
            // The mock speaks SQLite's placeholder style so workloads pick one SQL set for it.
            Target::Mock { .. } => Dialect::Sqlite,
        }
    }

    /// Whether a connection opened with [`crate::ConnectOptions::own_thread`] makes blocking
    /// socket calls (the lean MySQL client), so a caller gains by giving each its own thread.
    pub fn blocks_on_own_thread(&self) -> bool {
        matches!(self, Target::Mysql { .. })
    }

    /// Whether the URL itself carried a password (the CLI warns about that).
    pub fn has_url_password(&self) -> bool {
        matches!(
            self,
            Target::Mysql {
                password: Some(_),
                ..
            } | Target::Postgres {
                password: Some(_),
                ..
            }
        )
    }

    /// The password it connects with, if any (to know what to keep out of stored text).
    pub fn password(&self) -> Option<&Secret> {
        match self {
            Target::Mysql { password, .. } | Target::Postgres { password, .. } => password.as_ref(),
            _ => None,
        }
    }

    /// Use this password unless the URL already had one.
    pub fn with_password(mut self, secret: Option<Secret>) -> Self {
        if let Target::Mysql { password, .. } | Target::Postgres { password, .. } = &mut self
            && password.is_none()
        {
            *password = secret;
        }
        self
    }
}

/// The URL with any password replaced by `***`: the only form that is printed or stored.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = |f: &mut fmt::Formatter<'_>,
                      scheme: &str,
                      user: &str,
                      password: &Option<Secret>,
                      endpoint: &Endpoint,
                      db: &str| {
            let pw = if password.is_some() { ":***" } else { "" };
            match endpoint {
                Endpoint::Tcp { host, port } => {
                    write!(f, "{scheme}://{user}{pw}@{host}:{port}/{db}")
                }
                Endpoint::Socket(p) => {
                    write!(
                        f,
                        "{scheme}://{user}{pw}@localhost/{db}?socket={}",
                        p.display()
                    )
                }
            }
        };
        match self {
            Target::Mysql {
                user,
                password,
                endpoint,
                database,
            } => server(f, "mysql", user, password, endpoint, database),
            Target::Postgres {
                user,
                password,
                endpoint,
                database,
            } => server(f, "postgres", user, password, endpoint, database),
            Target::Sqlite { path: Some(p) } => write!(f, "sqlite:{}", p.display()),
            Target::Sqlite { path: None } => f.write_str("sqlite::memory:"),
            Target::Mock { options } if options.is_empty() => f.write_str("mock:"),
            Target::Mock { options } => write!(f, "mock:?{options}"),
        }
    }
}

/// Redact the password of a URL that may not even parse (for error messages).
pub fn redact_url(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((userinfo, tail)) = rest.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{tail}");
    }
    url.to_owned()
}

fn split_host_port(s: &str) -> Result<(String, Option<u16>), String> {
    // [::1]:5432 style IPv6 literals.
    if let Some(rest) = s.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or("unclosed '[' in host")?;
        let port = match tail.strip_prefix(':') {
            Some(p) => Some(parse_port(p)?),
            None if tail.is_empty() => None,
            None => return Err(format!("unexpected '{tail}' after host")),
        };
        return Ok((host.to_owned(), port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) => Ok((h.to_owned(), Some(parse_port(p)?))),
        None => Ok((s.to_owned(), None)),
    }
}

fn parse_port(p: &str) -> Result<u16, String> {
    p.parse::<u16>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("port '{p}' is not a number from 1 to 65535"))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let t = Target::parse("mysql://bench@127.0.0.1:3307/sb").unwrap();
        assert_eq!(
            t,
            Target::Mysql {
                user: "bench".into(),
                password: None,
                endpoint: Endpoint::Tcp {
                    host: "127.0.0.1".into(),
                    port: 3307
                },
                database: "sb".into()
            }
        );
        let t =
            Target::parse("mariadb://root@localhost/test?socket=/run/mysqld/mysqld.sock").unwrap();
        assert!(matches!(
            t,
            Target::Mysql {
                endpoint: Endpoint::Socket(_),
                ..
            }
        ));
        let t = Target::parse("postgres://127.0.0.1/test").unwrap();
        assert_eq!(t.to_string(), "postgres://postgres@127.0.0.1:5432/test");
        assert_eq!(
            Target::parse("sqlite::memory:").unwrap(),
            Target::Sqlite { path: None }
        );
        assert_eq!(
            Target::parse("sqlite:/tmp/x.db").unwrap(),
            Target::Sqlite {
                path: Some("/tmp/x.db".into())
            }
        );
        assert_eq!(
            Target::parse("mock:?latency_us=5").unwrap().to_string(),
            "mock:?latency_us=5"
        );
    }

    #[test]
    fn passwords_never_print() {
        let t = Target::parse("mysql://root:s3cr%21t@127.0.0.1/test").unwrap();
        assert!(t.has_url_password());
        let shown = format!("{t} {t:?}");
        assert!(!shown.contains("s3cr"), "{shown}");
        assert!(shown.contains("root:***@127.0.0.1:3306/test"));
        if let Target::Mysql {
            password: Some(p), ..
        } = &t
        {
            assert_eq!(p.expose(), "s3cr!t");
        }
        let e = Target::parse("ftp://u:hunter2@h/x").unwrap_err();
        assert!(!e.to_string().contains("hunter2"));
    }

    #[test]
    fn rejects_bad_urls_with_a_reason() {
        for (url, needle) in [
            ("mysql://h:99999/db", "port"),
            ("oracle://h/db", "unknown scheme"),
            ("127.0.0.1:3306", "expected"),
            ("mysql://h/db?ssl=1", "unknown URL parameter"),
            ("mysql://h/te;st", "database name"),
            ("sqlite:", "missing file path"),
        ] {
            let e = Target::parse(url).unwrap_err().to_string();
            assert!(e.contains(needle), "{url}: {e}");
        }
    }
}
