//! The engines' own credential files, read as their clients read them, for a target whose
//! URL leaves something out: MariaDB/MySQL option files (`my_cnf`: user, host, port, socket
//! and password, as the `mariadb` client merges them) and libpq's password file (`pgpass`).
//!
//! The URL's own parts win over the files, as a client's command-line options win over its
//! option files. One rule is dbrig's, stricter than the `mariadb` client: a password from the
//! option files is sent only to the user it was filed for — the user the files name, or, when
//! they name none, dbrig's default user when the URL names none either. The client sends it to
//! whatever user `-u` names; dbrig withholds it with a warning.

pub mod my_cnf;
pub mod pgpass;

use std::path::PathBuf;

use dbrig_driver::{Endpoint, Secret, Target, UrlNames};

use crate::error::Result;
use my_cnf::{ClientOptions, OptionFileChoice, PasswordSetting, ProtocolSetting};
use pgpass::PgpassKey;

/// What the option files say about the password of the user dbrig connects as.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionFilePassword {
    /// The files give none.
    Absent,
    /// A password filed for this user.
    ForThisUser(Secret),
    /// `skip-password` or an empty one: log in without (`MYSQL_PWD` is not read then).
    NoPassword,
    /// A bare `password`: the client would ask (dbrig never asks).
    Ask { file: PathBuf, line: usize },
    /// A password filed for another user (or for no user while the URL names one): not sent.
    OtherUser {
        file: PathBuf,
        line: usize,
        filed_for: Option<String>,
        user: String,
    },
}

/// `target` with what its URL (`url`) leaves out taken from the MariaDB/MySQL option files
/// `choice` names (user, then host, port or socket), and what those files say about the
/// password. Other engines are returned as they are.
pub fn fill_from_option_files(
    mut target: Target,
    url: &str,
    choice: &OptionFileChoice,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &dyn Fn(&str),
) -> Result<(Target, OptionFilePassword)> {
    if !matches!(target, Target::Mysql { .. }) {
        return Ok((target, OptionFilePassword::Absent));
    }
    let options = my_cnf::read(choice, env, warn)?;
    let names = Target::url_names(url);
    fill_mysql(&mut target, names, &options);
    let password = judge_password(&target, names, &options);
    Ok((target, password))
}

/// The URL's parts first, then the files' (see the module doc). A socket from the files is
/// used when the URL names no host, port or socket and the files' host is absent or
/// `localhost` (the `mariadb` client's rule; `protocol=tcp` turns it off, `protocol=socket`
/// on); `host=localhost` alone stays TCP, as `localhost` in a dbrig URL is.
fn fill_mysql(target: &mut Target, names: UrlNames, o: &ClientOptions) {
    let Target::Mysql { user, endpoint, .. } = target else {
        return;
    };
    if !names.user
        && let Some(u) = o.user.as_ref().filter(|u| !u.value.is_empty())
    {
        *user = u.value.clone();
    }
    if names.socket {
        return;
    }
    let file_host = o
        .host
        .as_ref()
        .map(|h| h.value.as_str())
        .filter(|h| !h.is_empty());
    let socket_wanted = match o.protocol.as_ref().map(|p| p.value) {
        Some(ProtocolSetting::Tcp) => false,
        Some(ProtocolSetting::Socket) => true,
        _ => file_host.is_none_or(|h| h == "localhost"),
    };
    match &o.socket {
        Some(s) if socket_wanted && !names.host && !names.port => {
            *endpoint = Endpoint::Socket(s.value.clone());
        }
        _ => {
            if let Endpoint::Tcp { host, port } = endpoint {
                if !names.host
                    && let Some(h) = file_host
                {
                    *host = h.to_owned();
                }
                if !names.port
                    && let Some(p) = &o.port
                {
                    *port = p.value;
                }
            }
        }
    }
}

fn judge_password(target: &Target, names: UrlNames, o: &ClientOptions) -> OptionFilePassword {
    let Some(setting) = &o.password else {
        return OptionFilePassword::Absent;
    };
    let Target::Mysql { user, .. } = target else {
        return OptionFilePassword::Absent;
    };
    match &setting.value {
        PasswordSetting::NoPassword => OptionFilePassword::NoPassword,
        PasswordSetting::Ask => OptionFilePassword::Ask {
            file: setting.file.clone(),
            line: setting.line,
        },
        PasswordSetting::Given(p) => {
            let filed_for = o.user.as_ref().map(|u| u.value.clone());
            // Without a user in the URL dbrig connects as the files' user (or its default
            // when they name none): the password is that user's.
            let for_this_user = !names.user || filed_for.as_deref() == Some(user.as_str());
            if for_this_user {
                OptionFilePassword::ForThisUser(Secret::from_file(p.as_str(), &setting.file))
            } else {
                OptionFilePassword::OtherUser {
                    file: setting.file.clone(),
                    line: setting.line,
                    filed_for,
                    user: user.clone(),
                }
            }
        }
    }
}

/// The password the engine's own client would use for `target` when dbrig is given none:
/// PostgreSQL `PGPASSWORD`, then the first matching line of `PGPASSFILE` or `~/.pgpass` (as
/// libpq: see [`pgpass`]); MariaDB/MySQL the option files' password when it is this user's
/// (`file_password`), else `MYSQL_PWD` (the client reads it only when its option files give no
/// password either). A password withheld or asked for is said in a warning.
pub fn client_default_password(
    target: &Target,
    url: &str,
    file_password: OptionFilePassword,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &dyn Fn(&str),
) -> Option<Secret> {
    if target.has_url_password() {
        return None;
    }
    // An empty variable is no password, in libpq and in the MariaDB client alike.
    let var = |name: &str| env(name).filter(|v| !v.is_empty());
    match target {
        Target::Postgres {
            user,
            endpoint,
            database,
            ..
        } => {
            if let Some(p) = var("PGPASSWORD") {
                return Some(Secret::new(p));
            }
            let file = pgpass::pgpass_path(env)?;
            // libpq looks a connection that names no host up as `localhost` (it then uses
            // its socket; dbrig goes to 127.0.0.1, the same server).
            let names = Target::url_names(url);
            let no_host = !names.host && !names.socket && var("PGHOST").is_none();
            let key = match endpoint {
                Endpoint::Tcp { port, .. } if no_host => {
                    PgpassKey::tcp("localhost", *port, database, user)
                }
                Endpoint::Tcp { host, port } => PgpassKey::tcp(host, *port, database, user),
                Endpoint::Socket(path) => {
                    let (dir, port) = dbrig_driver::pg_socket_dir_and_port(path);
                    PgpassKey::socket(dir, port.unwrap_or(5432), database, user)
                }
            };
            pgpass::lookup_file(&file, &key, warn).map(|p| Secret::from_file(p, &file))
        }
        Target::Mysql { .. } => match file_password {
            OptionFilePassword::ForThisUser(secret) => Some(secret),
            OptionFilePassword::NoPassword => None,
            OptionFilePassword::Ask { file, line } => {
                warn(&format!(
                    "option file {}, line {line}: a bare 'password' makes the mariadb client ask \
                     for one; dbrig never asks: give it with --password-env or --password-file",
                    file.display()
                ));
                None
            }
            OptionFilePassword::OtherUser {
                file,
                line,
                filed_for,
                user,
            } => {
                let whose = match filed_for {
                    Some(u) => format!("is for user '{u}'"),
                    None => "names no user (it is used only when the target names none either)"
                        .to_owned(),
                };
                warn(&format!(
                    "the password in option file {}, line {line} {whose}, and the target names \
                     user '{user}': not sent to '{user}' (give the password of '{user}' \
                     with --password-env or --password-file)",
                    file.display()
                ));
                var("MYSQL_PWD").map(Secret::new)
            }
            OptionFilePassword::Absent => var("MYSQL_PWD").map(Secret::new),
        },
        Target::Sqlite { .. } | Target::Mock { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use my_cnf::Setting;

    fn at<T>(value: T) -> Option<Setting<T>> {
        Some(Setting {
            value,
            file: PathBuf::from("/h/.my.cnf"),
            line: 3,
        })
    }

    fn filled(url: &str, o: &ClientOptions) -> (String, OptionFilePassword) {
        let mut t = Target::parse(url).unwrap();
        let names = Target::url_names(url);
        fill_mysql(&mut t, names, o);
        let pw = judge_password(&t, names, o);
        (t.to_string(), pw)
    }

    /// The URL's user, host, port and socket win; what it leaves out comes from the files.
    #[test]
    fn url_parts_win_over_option_files() {
        let o = ClientOptions {
            user: at("bench".into()),
            host: at("db1".into()),
            port: at(3307),
            ..Default::default()
        };
        assert_eq!(filled("mysql:///sb", &o).0, "mysql://bench@db1:3307/sb");
        assert_eq!(filled("mysql://u@h/sb", &o).0, "mysql://u@h:3307/sb");
        assert_eq!(filled("mysql://h:3306/sb", &o).0, "mysql://bench@h:3306/sb");
        assert_eq!(
            filled("mysql://u@localhost/sb?socket=/s.sock", &o).0,
            "mysql://u@localhost/sb?socket=/s.sock"
        );
        // Other engines are not touched.
        let (t, pw) = fill_from_option_files(
            Target::parse("postgres://h/db").unwrap(),
            "postgres://h/db",
            &OptionFileChoice::default(),
            &|_| None,
            &|_| {},
        )
        .unwrap();
        assert_eq!(t.to_string(), "postgres://postgres@h:5432/db");
        assert_eq!(pw, OptionFilePassword::Absent);
    }

    /// The client's socket rule: only when the URL names no host, port or socket, and the
    /// files' host is absent or `localhost`; `protocol` decides when given.
    #[test]
    fn socket_from_option_files() {
        let sock = |host: Option<&str>, protocol: Option<ProtocolSetting>| ClientOptions {
            socket: at(PathBuf::from("/run/mysqld/mysqld.sock")),
            host: host.and_then(|h| at(h.to_owned())),
            protocol: protocol.and_then(at),
            ..Default::default()
        };
        let via_socket = "mysql://root@localhost/test?socket=/run/mysqld/mysqld.sock";
        assert_eq!(filled("mysql:///test", &sock(None, None)).0, via_socket);
        assert_eq!(
            filled("mysql:///test", &sock(Some("localhost"), None)).0,
            via_socket
        );
        assert_eq!(
            filled("mysql:///test", &sock(Some("db1"), None)).0,
            "mysql://root@db1:3306/test"
        );
        assert_eq!(
            filled(
                "mysql:///test",
                &sock(Some("db1"), Some(ProtocolSetting::Socket))
            )
            .0,
            via_socket
        );
        assert_eq!(
            filled("mysql:///test", &sock(None, Some(ProtocolSetting::Tcp))).0,
            "mysql://root@127.0.0.1:3306/test"
        );
        assert_eq!(
            filled("mysql://127.0.0.1/test", &sock(None, None)).0,
            "mysql://root@127.0.0.1:3306/test"
        );
        assert_eq!(
            filled("mysql://:3307/test", &sock(None, None)).0,
            "mysql://root@127.0.0.1:3307/test"
        );
    }

    /// A password goes only to the user it was filed for.
    #[test]
    fn option_file_password_only_for_its_user() {
        let files = |user: Option<&str>| ClientOptions {
            user: user.and_then(|u| at(u.to_owned())),
            password: at(PasswordSetting::Given("P".into())),
            ..Default::default()
        };
        let sent = |(_, pw): (String, OptionFilePassword)| match pw {
            OptionFilePassword::ForThisUser(s) => Some(s.expose().to_owned()),
            _ => None,
        };
        // The files' user with the files' password (the bug: P went to root).
        let (t, pw) = filled("mysql://127.0.0.1/test", &files(Some("alice")));
        assert_eq!(t, "mysql://alice@127.0.0.1:3306/test");
        assert_eq!(sent((t, pw)).as_deref(), Some("P"));
        // The URL names the same user: sent; another: withheld.
        assert_eq!(
            sent(filled(
                "mysql://alice@127.0.0.1/test",
                &files(Some("alice"))
            ))
            .as_deref(),
            Some("P")
        );
        let (_, pw) = filled("mysql://bob@127.0.0.1/test", &files(Some("alice")));
        assert_eq!(
            pw,
            OptionFilePassword::OtherUser {
                file: PathBuf::from("/h/.my.cnf"),
                line: 3,
                filed_for: Some("alice".into()),
                user: "bob".into()
            }
        );
        // No user in the files: dbrig's default user gets it only when the URL names none.
        assert_eq!(
            sent(filled("mysql://127.0.0.1/test", &files(None))).as_deref(),
            Some("P")
        );
        assert_eq!(
            sent(filled("mysql://root@127.0.0.1/test", &files(None))),
            None
        );
    }

    #[test]
    fn mysql_password_precedence_and_warnings() {
        let t = Target::parse("mysql://bob@127.0.0.1/test").unwrap();
        let env = |k: &str| (k == "MYSQL_PWD").then(|| "envpw".to_owned());
        let warned = std::cell::RefCell::new(Vec::new());
        let warn = |w: &str| warned.borrow_mut().push(w.to_owned());
        let pw = |f: OptionFilePassword| {
            client_default_password(&t, "", f, &env, &warn).map(|s| s.expose().to_owned())
        };
        // The files' password for this user beats MYSQL_PWD, as in the client.
        let secret = Secret::from_file("filepw", Path::new("/h/.my.cnf"));
        assert_eq!(
            pw(OptionFilePassword::ForThisUser(secret)).as_deref(),
            Some("filepw")
        );
        assert_eq!(pw(OptionFilePassword::Absent).as_deref(), Some("envpw"));
        assert_eq!(pw(OptionFilePassword::NoPassword), None);
        assert!(warned.borrow().is_empty());
        let other = OptionFilePassword::OtherUser {
            file: PathBuf::from("/h/.my.cnf"),
            line: 3,
            filed_for: Some("alice".into()),
            user: "bob".into(),
        };
        assert_eq!(pw(other).as_deref(), Some("envpw"));
        assert!(
            warned.borrow()[0].contains("/h/.my.cnf, line 3 is for user 'alice'")
                && warned.borrow()[0].contains("not sent to 'bob'"),
            "{warned:?}"
        );
        assert_eq!(
            pw(OptionFilePassword::Ask {
                file: PathBuf::from("/h/.my.cnf"),
                line: 4
            }),
            None
        );
        assert!(
            warned.borrow()[1].contains("dbrig never asks"),
            "{warned:?}"
        );
        // A URL password: nothing else is looked up.
        let t = Target::parse("mysql://bob:x@127.0.0.1/test").unwrap();
        assert_eq!(
            client_default_password(&t, "", OptionFilePassword::Absent, &env, &warn),
            None
        );
    }

    /// PostgreSQL: `PGPASSWORD` (unless empty), then the pgpass line for the socket's folder
    /// and port, as libpq looks it up.
    #[test]
    fn postgres_password_sources() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "localhost:5432:*:postgres:default-socket\n\
             /tmp/pg:5499:*:postgres:private\n\
             127.0.0.1:5432:*:postgres:tcp\n",
        )
        .unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let file_s = file.display().to_string();
        let env = |pw: &'static str| {
            let file_s = file_s.clone();
            move |k: &str| match k {
                "PGPASSFILE" => Some(file_s.clone()),
                "PGPASSWORD" => Some(pw.to_owned()),
                _ => None,
            }
        };
        let pw = |url: &str, e: &dyn Fn(&str) -> Option<String>| {
            let t = Target::parse(url).unwrap();
            client_default_password(&t, url, OptionFilePassword::Absent, e, &|_| {})
                .map(|s| s.expose().to_owned())
        };
        assert_eq!(
            pw("postgres://127.0.0.1/db", &env("")).as_deref(),
            Some("tcp")
        );
        // No host named: libpq's `localhost` (dbrig connects to 127.0.0.1, the same server).
        assert_eq!(
            pw("postgres:///db", &env("")).as_deref(),
            Some("default-socket")
        );
        assert_eq!(
            pw("postgres://127.0.0.1/db", &env("pgpw")).as_deref(),
            Some("pgpw")
        );
        assert_eq!(
            pw("postgres:///db?socket=/var/run/postgresql", &env("")).as_deref(),
            Some("default-socket")
        );
        assert_eq!(
            pw("postgres:///db?socket=/tmp/pg/.s.PGSQL.5499", &env("")).as_deref(),
            Some("private")
        );
        // The default folder at another port: no line (5432's is not this server's).
        assert_eq!(
            pw(
                "postgres:///db?socket=/var/run/postgresql/.s.PGSQL.5499",
                &env("")
            ),
            None
        );
    }
}
