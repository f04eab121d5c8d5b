//! A target URL and where its password comes from, resolved into a [`Target`].
//!
//! Passwords come from an environment variable (`password-env`), a file that only its owner
//! can read (`password-file`), or the URL itself (accepted with a warning); without any of
//! them, from where the servers' own clients look (`crate::credential_files`): `PGPASSWORD`
//! and `~/.pgpass` (or `PGPASSFILE`) for PostgreSQL; for MariaDB/MySQL the option files
//! (`~/.my.cnf`, …: also the user, host, port and socket the URL leaves out), then
//! `MYSQL_PWD`. They are never
//! accepted as a plain option, never printed and never stored: `Target`'s `Display` is the
//! redacted form, and that is the only form written anywhere.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use dbrig_driver::{Secret, Target};

use crate::credential_files::{self, my_cnf::OptionFileChoice};
use crate::error::{ExecError, Result};

/// A target as given: its URL and where its password is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetSpec {
    pub url: String,
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
    /// Which MariaDB/MySQL option files fill what the URL leaves out.
    pub option_files: OptionFileChoice,
}

/// The URL parsed, with its password read. `warn` is told once when the URL itself carries a
/// password (visible in process listings and shell history).
pub fn resolve(spec: &TargetSpec, warn: &dyn Fn(&str)) -> Result<Target> {
    // What a PostgreSQL URL leaves out comes from libpq's variables, as psql takes it.
    let env = |name: &str| std::env::var(name).ok();
    let target = Target::parse_with_env(&spec.url, &env)?;
    let (target, file_password) = credential_files::fill_from_option_files(
        target,
        &spec.url,
        &spec.option_files,
        &env,
        warn,
    )?;
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
        (None, None) => {
            credential_files::client_default_password(&target, &spec.url, file_password, &env, warn)
        }
    };
    Ok(target.with_password(password))
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

/// Options whose value is a target URL (`--results`: a results server's).
const URL_OPTIONS: &[&str] = &["--target", "--a", "--b", "--against", "--results"];

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
}
