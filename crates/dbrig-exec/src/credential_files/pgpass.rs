//! libpq's password file (`~/.pgpass`, `PGPASSFILE`), read as libpq's `passwordFromFile` reads
//! it (fe-connect.c), so dbrig picks the line psql would pick.
//!
//! Hand-written on purpose: the crates that read this file either pull in a whole PostgreSQL
//! client or refuse what libpq accepts (a line with fields after the password); libpq's rules
//! are a few lines, and matching them exactly is the point.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The socket folder this machine's libpq was built with (`DEFAULT_PGSOCKET_DIR`): Debian's,
/// Ubuntu's, Fedora's and RHEL's packages all use it (upstream's default is `/tmp`). libpq
/// compares the folder as text, so `/run/postgresql` is another host to it.
pub const LIBPQ_DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// What a connection is looked up by, already in libpq's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgpassKey {
    /// The host name or address for TCP; for a Unix socket `localhost` when its folder is
    /// libpq's default one, else the folder's path.
    pub host: String,
    /// The port as digits (the socket's port for a Unix socket).
    pub port: String,
    pub database: String,
    pub user: String,
}

impl PgpassKey {
    /// The key for a TCP connection.
    pub fn tcp(host: &str, port: u16, database: &str, user: &str) -> Self {
        PgpassKey {
            host: if host.is_empty() {
                "localhost".to_owned()
            } else {
                host.to_owned()
            },
            port: port.to_string(),
            database: database.to_owned(),
            user: user.to_owned(),
        }
    }

    /// The key for a connection over the socket in `dir` on `port`: libpq's `passwordFromFile`
    /// turns the default socket folder into `localhost` and keeps any other folder's path.
    pub fn socket(dir: &Path, port: u16, database: &str, user: &str) -> Self {
        let dir = dir.display().to_string();
        PgpassKey {
            host: if dir == LIBPQ_DEFAULT_SOCKET_DIR {
                "localhost".to_owned()
            } else {
                dir
            },
            port: port.to_string(),
            database: database.to_owned(),
            user: user.to_owned(),
        }
    }
}

/// The password file libpq would read: `PGPASSFILE` when set and not empty, else `.pgpass` in
/// the home folder (`HOME`, else the account's home, as libpq's `pqGetHomeDirectory`).
pub fn pgpass_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match env("PGPASSFILE").filter(|p| !p.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => env("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(std::env::home_dir)
            .map(|h| h.join(".pgpass")),
    }
}

/// The password of the first line of the file at `path` that matches `key`, when the file
/// may be used: libpq ignores a file that is missing or unreadable silently, and one that is
/// not a plain file or that its group or others may access with a warning (`warn`).
pub fn lookup_file(path: &Path, key: &PgpassKey, warn: &dyn Fn(&str)) -> Option<String> {
    if key.database.is_empty() || key.user.is_empty() {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        warn(&format!(
            "password file \"{}\" is not a plain file: not read (as libpq)",
            path.display()
        ));
        return None;
    }
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        warn(&format!(
            "password file \"{}\" has group or world access (mode {:o}): not read, as libpq \
             would not; run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        ));
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    lookup(&String::from_utf8_lossy(&bytes), key)
}

/// The password of the first line of `text` whose host, port, database and user fields match
/// `key`, as libpq matches them: a field that is exactly `*` matches anything, `\` escapes the
/// next character (`\:`, `\\`, `\*` for a literal star), a line starting with `#` is a comment,
/// whitespace counts, and the password runs to the next unescaped `:` or the end of the line.
pub fn lookup(text: &str, key: &PgpassKey) -> Option<String> {
    let wanted = [
        key.host.as_str(),
        key.port.as_str(),
        key.database.as_str(),
        key.user.as_str(),
    ];
    text.split('\n')
        .map(|l| l.trim_end_matches(['\n', '\r']))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|line| {
            let mut rest = line;
            for token in wanted {
                rest = field_matches(rest, token)?;
            }
            Some(password_field(rest))
        })
}

/// libpq's `pwdfMatchesString`: whether the field at the start of `line` matches `token`,
/// returning what follows the field's `:`.
fn field_matches<'a>(line: &'a str, token: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut chars = line.char_indices();
    let mut expected = token.chars();
    while let Some((i, c)) = chars.next() {
        let (c, escaped) = match c {
            '\\' => match chars.next() {
                Some((_, next)) => (next, true),
                None => return None,
            },
            c => (c, false),
        };
        if c == ':' && !escaped {
            return expected.next().is_none().then(|| &line[i + 1..]);
        }
        if expected.next() != Some(c) {
            return None;
        }
    }
    None
}

/// The password field: up to the first unescaped `:`, backslashes removed.
fn password_field(rest: &str) -> String {
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ':' => break,
            '\\' if chars.peek().is_some() => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(host: &str, port: &str, db: &str, user: &str) -> PgpassKey {
        PgpassKey {
            host: host.into(),
            port: port.into(),
            database: db.into(),
            user: user.into(),
        }
    }

    #[test]
    fn first_matching_line_wins_with_wildcards() {
        let text = "# comment\n\
                    db1:5432:*:alice:one\n\
                    127.0.0.1:5432:test:postgres:two\\:colon\n\
                    *:*:*:postgres:three\n";
        let k = key("127.0.0.1", "5432", "test", "postgres");
        assert_eq!(lookup(text, &k).as_deref(), Some("two:colon"));
        let k = key("127.0.0.1", "5433", "test", "postgres");
        assert_eq!(lookup(text, &k).as_deref(), Some("three"));
        assert_eq!(lookup(text, &key("db1", "5432", "x", "bob")), None);
    }

    /// libpq's details: `*` only as a whole field, `\*` a literal star, escapes in any field,
    /// whitespace significant, `#` a comment only in the first column, CRLF endings, the
    /// password ending at an unescaped `:` (fields after it ignored), a trailing backslash kept.
    #[test]
    fn libpq_field_rules() {
        let k = key("h", "5432", "db", "u");
        assert_eq!(
            lookup("h*:5432:db:u:no\n*:*:*:*:yes", &k).as_deref(),
            Some("yes")
        );
        assert_eq!(
            lookup("\\*:5432:db:u:star", &key("*", "5432", "db", "u")).as_deref(),
            Some("star")
        );
        assert_eq!(lookup("\\*:5432:db:u:star", &k), None);
        assert_eq!(lookup(" h:5432:db:u:space", &k), None);
        assert_eq!(
            lookup(
                " #h:5432:db:u:x\nh:5432:db:u:y",
                &key(" #h", "5432", "db", "u")
            )
            .as_deref(),
            Some("x")
        );
        assert_eq!(lookup("#h:5432:db:u:x", &k), None);
        assert_eq!(lookup("h:5432:db:u:crlf\r\n", &k).as_deref(), Some("crlf"));
        assert_eq!(
            lookup("h:5432:db:u:pw:extra:fields", &k).as_deref(),
            Some("pw")
        );
        assert_eq!(
            lookup("h:5432:db:u:a\\\\b\\", &k).as_deref(),
            Some("a\\b\\")
        );
        assert_eq!(
            lookup("h\\:x:5432:db:u:esc", &key("h:x", "5432", "db", "u")).as_deref(),
            Some("esc")
        );
        // Four fields only: no password field, no match; an empty one is an empty password.
        assert_eq!(lookup("h:5432:db:u", &k), None);
        assert_eq!(lookup("h:5432:db:u:", &k).as_deref(), Some(""));
        // A longer or shorter value is another value.
        assert_eq!(lookup("hh:5432:db:u:x\nh:54321:db:u:y", &k), None);
    }

    /// libpq: the default socket folder is `localhost`; another folder is its own path; the
    /// socket's port is the port looked up (not 5432 whatever the socket).
    #[test]
    fn socket_keys_as_libpq() {
        let k = PgpassKey::socket(Path::new("/var/run/postgresql"), 5433, "db", "u");
        assert_eq!(k.host, "localhost");
        assert_eq!(k.port, "5433");
        let k = PgpassKey::socket(Path::new("/tmp/private"), 5499, "db", "u");
        assert_eq!(k.host, "/tmp/private");
        let text = "localhost:5432:*:u:default-port\n/tmp/private:5499:*:u:private\n";
        assert_eq!(lookup(text, &k).as_deref(), Some("private"));
        let k = PgpassKey::socket(Path::new("/var/run/postgresql"), 5499, "db", "u");
        assert_eq!(lookup(text, &k), None);
    }

    #[test]
    fn file_rules() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(&p, "*:*:*:*:pw\n").unwrap();
        let k = key("h", "5432", "db", "u");
        let warned = std::cell::RefCell::new(Vec::new());
        let warn = |w: &str| warned.borrow_mut().push(w.to_owned());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(lookup_file(&p, &k, &warn), None);
        assert!(
            warned.borrow()[0].contains("group or world access"),
            "{warned:?}"
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(lookup_file(&p, &k, &warn).as_deref(), Some("pw"));
        // A folder is not a plain file; a missing file is silently nothing.
        assert_eq!(lookup_file(dir.path(), &k, &warn), None);
        assert!(
            warned.borrow()[1].contains("not a plain file"),
            "{warned:?}"
        );
        assert_eq!(lookup_file(&dir.path().join("none"), &k, &warn), None);
        assert_eq!(warned.borrow().len(), 2);
        // No database or no user: libpq does not look.
        assert_eq!(lookup_file(&p, &key("h", "5432", "", "u"), &warn), None);
    }

    #[test]
    fn file_path_as_libpq() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            pgpass_path(&env(&[("PGPASSFILE", "/x/pw"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/pw"))
        );
        assert_eq!(
            pgpass_path(&env(&[("PGPASSFILE", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.pgpass"))
        );
    }
}
