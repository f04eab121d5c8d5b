//! A target URL and where its password comes from, resolved into a [`Target`].
//!
//! Passwords come from an environment variable (`password-env`), a file that only its owner
//! can read (`password-file`), or the URL itself (accepted with a warning); without any of
//! them, from where the servers' own clients look: `PGPASSWORD` and `~/.pgpass` (or
//! `PGPASSFILE`) for PostgreSQL, `MYSQL_PWD` and `~/.my.cnf`'s `[client]` for MariaDB/MySQL. They are never
//! accepted as a plain option, never printed and never stored: `Target`'s `Display` is the
//! redacted form, and that is the only form written anywhere.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use dbrig_driver::{Endpoint, Secret, Target};

use crate::error::{ExecError, Result};

/// A target as given: its URL and where its password is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetSpec {
    pub url: String,
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
}

/// The URL parsed, with its password read. `warn` is told once when the URL itself carries a
/// password (visible in process listings and shell history).
pub fn resolve(spec: &TargetSpec, warn: &dyn Fn(&str)) -> Result<Target> {
    // What a PostgreSQL URL leaves out comes from libpq's variables, as psql takes it.
    let target = Target::parse_with_env(&spec.url, &|name| std::env::var(name).ok())?;
    if target.has_url_password() {
        warn(
            "the password in the target URL is visible in process listings and shell history; \
             prefer --password-env or --password-file",
        );
    }
    let password = match (&spec.password_env, &spec.password_file) {
        (Some(_), Some(_)) => {
            return Err(ExecError::Password(
                "give either --password-env or --password-file, not both".into(),
            ));
        }
        (Some(var), None) => Some(Secret::new(std::env::var(var).map_err(|_| {
            ExecError::Password(format!(
                "--password-env {var}: the environment variable {var} is not set"
            ))
        })?)),
        (None, Some(path)) => Some(read_password_file(path)?),
        (None, None) => client_default_password(&target),
    };
    Ok(target.with_password(password))
}

/// The password the server's own command-line client would use for `target`, when the URL
/// has none: PostgreSQL `PGPASSWORD`, then the first matching line of `PGPASSFILE` or
/// `~/.pgpass` (only when private, as libpq requires); MariaDB/MySQL `MYSQL_PWD`, then the
/// `[client]` section of `~/.my.cnf`.
fn client_default_password(target: &Target) -> Option<Secret> {
    if target.has_url_password() {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match target {
        Target::Postgres {
            user,
            endpoint,
            database,
            ..
        } => {
            if let Ok(p) = std::env::var("PGPASSWORD") {
                return Some(Secret::new(p));
            }
            let file = std::env::var_os("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| home.map(|h| h.join(".pgpass")))?;
            let meta = std::fs::metadata(&file).ok()?;
            if meta.permissions().mode() & 0o077 != 0 {
                return None;
            }
            let (host, port) = match endpoint {
                Endpoint::Tcp { host, port } => (host.clone(), port.to_string()),
                Endpoint::Socket(_) => ("localhost".to_owned(), "5432".to_owned()),
            };
            let text = std::fs::read_to_string(&file).ok()?;
            pgpass_lookup(&text, &host, &port, database, user).map(Secret::new)
        }
        Target::Mysql { .. } => {
            if let Ok(p) = std::env::var("MYSQL_PWD") {
                return Some(Secret::new(p));
            }
            let text = std::fs::read_to_string(home?.join(".my.cnf")).ok()?;
            my_cnf_client_password(&text).map(Secret::new)
        }
        Target::Sqlite { .. } | Target::Mock { .. } => None,
    }
}

/// The password of the first `host:port:database:user:password` line of a `.pgpass` that
/// matches (`*` matches anything; `\:` and `\\` are escapes), as libpq reads it.
fn pgpass_lookup(text: &str, host: &str, port: &str, database: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => cur.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let matches = |f: &str, v: &str| f == "*" || f == v;
        if matches(&fields[0], host)
            && matches(&fields[1], port)
            && matches(&fields[2], database)
            && matches(&fields[3], user)
        {
            return Some(fields.swap_remove(4));
        }
    }
    None
}

/// `password` of the `[client]` section of a `my.cnf` (quotes removed), as the MariaDB and
/// MySQL clients read it.
fn my_cnf_client_password(text: &str) -> Option<String> {
    let mut in_client = false;
    let mut found = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_client = line == "[client]";
            continue;
        }
        if !in_client || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=')
            && k.trim() == "password"
        {
            let v = v.trim();
            let unquoted = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            // The last one wins, as in the clients.
            found = Some(unquoted.to_owned());
        }
    }
    found
}

fn read_password_file(path: &Path) -> Result<Secret> {
    let unreadable = |e: std::io::Error| {
        ExecError::Password(format!(
            "--password-file {}: cannot read it: {e}",
            path.display()
        ))
    };
    let mode = std::fs::metadata(path)
        .map_err(unreadable)?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(ExecError::Password(format!(
            "--password-file {}: readable by group or others (mode {:o}); run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    Ok(Secret::from_file(text.trim_end_matches(['\n', '\r']), path))
}

/// The command line as stored: every value that parses as a target URL (`--target`, perfrun's
/// `--a`/`--b`, …) redacted, values of options named `*password=*` dropped.
pub fn redacted_command_line(args: &[String]) -> Vec<String> {
    let redact = |v: &str| match Target::parse(v) {
        Ok(t) => t.to_string(),
        // Not a URL: a plain value (a configuration name, a number) stays.
        Err(_) if !v.contains("://") && !v.contains('@') => v.to_owned(),
        Err(_) => "***".into(),
    };
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    for a in args {
        if redact_next {
            out.push(redact(a));
            redact_next = false;
            continue;
        }
        if let Some((name, value)) = a.split_once('=')
            && name.starts_with("--")
        {
            if name.contains("password")
                && !name.starts_with("--password-env")
                && !name.starts_with("--password-file")
            {
                out.push("--***=***".into());
            } else if URL_OPTIONS.contains(&name) {
                out.push(format!("{name}={}", redact(value)));
            } else {
                out.push(a.clone());
            }
        } else {
            redact_next = URL_OPTIONS.contains(&a.as_str());
            out.push(a.clone());
        }
    }
    out
}

/// Options whose value is a target URL.
const URL_OPTIONS: &[&str] = &["--target", "--a", "--b", "--against"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_is_redacted() {
        let args = [
            "dbrig",
            "run",
            "x",
            "--target",
            "mysql://u:pw@h/db",
            "--target=postgres://u:pw2@h/db",
            "--a",
            "mysql://u:pw1@h/db",
            "--b=postgres://u:pw3@h/db",
            "--mysql-password=pw4",
        ]
        .map(String::from);
        let out = redacted_command_line(&args).join(" ");
        for pw in ["pw@", "pw1", "pw2", "pw3", "pw4"] {
            assert!(!out.contains(pw), "{out}");
        }
        assert!(out.contains("mysql://u:***@h:3306/db"), "{out}");
        // A configuration name after --a (perfrun --plan) stays as it is.
        let names = redacted_command_line(&["--a".into(), "base".into()]);
        assert_eq!(names, ["--a", "base"]);
    }

    /// Every branch, compared whole: socket targets, a password holding '@', a URL that does
    /// not parse, `*password*=` options dropped, `--password-env`/`--password-file` kept.
    #[test]
    fn command_line_redaction_branch_by_branch() {
        let args = [
            "--target=mysql://u:p@ss@localhost/db?socket=/run/m.sock",
            "--a",
            "postgres://u:s3cret@[::1]:5433/db",
            "--b=mysql://u:p@ss@h:99999/db",
            "--mysql-password=pw4",
            "--password-env=PW_VAR",
            "--password-file=/etc/pw",
            "--time=5",
            "--against",
            "not-a-url",
        ]
        .map(String::from);
        assert_eq!(
            redacted_command_line(&args),
            [
                "--target=mysql://u:***@localhost/db?socket=/run/m.sock",
                "--a",
                "postgres://u:***@[::1]:5433/db",
                "--b=***",
                "--***=***",
                "--password-env=PW_VAR",
                "--password-file=/etc/pw",
                "--time=5",
                "--against",
                "not-a-url",
            ]
        );
    }

    #[test]
    fn password_file_must_be_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pw");
        std::fs::write(&p, "secret\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_password_file(&p).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_password_file(&p).unwrap().expose(), "secret");
    }

    #[test]
    fn pgpass_lines_match_like_libpq() {
        let text = "# comment\n\
                    db1:5432:*:alice:one\n\
                    127.0.0.1:5432:test:postgres:two\\:colon\n\
                    *:*:*:postgres:three\n";
        assert_eq!(
            pgpass_lookup(text, "127.0.0.1", "5432", "test", "postgres").as_deref(),
            Some("two:colon")
        );
        assert_eq!(
            pgpass_lookup(text, "127.0.0.1", "5433", "test", "postgres").as_deref(),
            Some("three")
        );
        assert_eq!(pgpass_lookup(text, "db1", "5432", "x", "bob"), None);
    }

    #[test]
    fn my_cnf_client_section_gives_the_password() {
        let text = "[mysqld]\npassword=server\n[client]\nuser=root\npassword = \"se cret\"\n[mysql]\npassword=other\n";
        assert_eq!(my_cnf_client_password(text).as_deref(), Some("se cret"));
        assert_eq!(my_cnf_client_password("[mysqld]\npassword=x\n"), None);
    }
}
