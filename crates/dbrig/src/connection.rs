//! Turning connection arguments into a target with its password.
//!
//! Passwords come from an environment variable (`--password-env`), a file that only its
//! owner can read (`--password-file`), or the URL itself (accepted with a warning). They are
//! never accepted as a plain option, never printed and never stored: `Target`'s `Display` is
//! the redacted form, and that is the only form written anywhere.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use dbrig_driver::{Secret, Target};

use crate::cli::{ConnectionArgs, StoreArgs};

/// Resolve the target: `--target`, else sysbench-style `--db-driver`/`--mysql-*`/`--pgsql-*`,
/// else the default SQLite file in the output folder.
pub fn resolve_target(c: &ConnectionArgs, store: &StoreArgs) -> Result<Target> {
    if c.mysql_password.is_some() || c.pgsql_password.is_some() {
        bail!(
            "passwords are not accepted as command-line options (every user of the machine can read them): \
             use --password-env VAR or --password-file PATH"
        );
    }
    let url = match (&c.target, c.db_driver.as_deref()) {
        (Some(url), _) => url.clone(),
        (None, Some("mysql")) => {
            let user = c.mysql_user.as_deref().unwrap_or("root");
            let host = c.mysql_host.as_deref().unwrap_or("127.0.0.1");
            let port = c.mysql_port.unwrap_or(3306);
            let db = c.mysql_db.as_deref().unwrap_or("test");
            match &c.mysql_socket {
                Some(s) => format!("mysql://{user}@localhost/{db}?socket={s}"),
                None => format!("mysql://{user}@{host}:{port}/{db}"),
            }
        }
        (None, Some("pgsql")) => {
            let user = c.pgsql_user.as_deref().unwrap_or("postgres");
            let host = c.pgsql_host.as_deref().unwrap_or("127.0.0.1");
            let port = c.pgsql_port.unwrap_or(5432);
            let db = c.pgsql_db.as_deref().unwrap_or("test");
            format!("postgres://{user}@{host}:{port}/{db}")
        }
        (None, Some("sqlite") | None) => {
            std::fs::create_dir_all(&store.out)
                .with_context(|| format!("cannot create output folder {}", store.out.display()))?;
            format!("sqlite:{}", store.out.join("dbrig.sqlite").display())
        }
        (None, Some(other)) => {
            bail!("unknown --db-driver '{other}': use mysql, pgsql or sqlite (or --target URL)")
        }
    };
    let target = Target::parse(&url)?;
    if target.has_url_password() {
        eprintln!(
            "dbrig: warning: the password in the target URL is visible in process listings and shell history; \
             prefer --password-env or --password-file"
        );
    }
    let password = match (&c.password_env, &c.password_file) {
        (Some(_), Some(_)) => bail!("give either --password-env or --password-file, not both"),
        (Some(var), None) => Some(Secret::new(std::env::var(var).map_err(|_| {
            anyhow!("--password-env {var}: the environment variable {var} is not set")
        })?)),
        (None, Some(path)) => Some(read_password_file(path)?),
        (None, None) => None,
    };
    Ok(target.with_password(password))
}

fn read_password_file(path: &Path) -> Result<Secret> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("--password-file {}: cannot read it", path.display()))?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        bail!(
            "--password-file {}: readable by group or others (mode {:o}); run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--password-file {}: cannot read it", path.display()))?;
    Ok(Secret::new(text.trim_end_matches(['\n', '\r'])))
}

/// The command line as stored: values of `--target` redacted, password values dropped.
pub fn redacted_command_line(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut redact_next = false;
    for a in args {
        if redact_next {
            out.push(
                dbrig_driver::Target::parse(a)
                    .map(|t| t.to_string())
                    .unwrap_or_else(|_| "***".into()),
            );
            redact_next = false;
            continue;
        }
        if let Some(v) = a.strip_prefix("--target=") {
            let shown = Target::parse(v)
                .map(|t| t.to_string())
                .unwrap_or_else(|_| "***".into());
            out.push(format!("--target={shown}"));
        } else if a.contains("password=")
            && !a.starts_with("--password-env")
            && !a.starts_with("--password-file")
        {
            out.push("--***=***".into());
        } else {
            redact_next = a == "--target";
            out.push(a.clone());
        }
    }
    out
}

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
        ]
        .map(String::from);
        let out = redacted_command_line(&args).join(" ");
        assert!(!out.contains("pw@") && !out.contains("pw2"), "{out}");
        assert!(out.contains("mysql://u:***@h:3306/db"));
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
