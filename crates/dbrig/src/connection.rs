//! Connection arguments into a target: `--target`, else sysbench's `--db-driver` /
//! `--mysql-*` / `--pgsql-*`, else the default SQLite file in the output folder; the password
//! from `--password-env` or `--password-file` (dbrig-exec reads it, never from argv).

use anyhow::{Context, Result, bail};
use dbrig_driver::Target;
use dbrig_exec::TargetSpec;

use crate::args::{ConnectionArgs, StoreArgs};

/// The target URL and password source the arguments name.
pub fn target_spec(c: &ConnectionArgs, store: &StoreArgs) -> Result<TargetSpec> {
    if c.mysql_password.is_some() || c.pgsql_password.is_some() {
        bail!(
            "passwords are not accepted as command-line options (every user of the machine can read them): \
             use --password-env VAR or --password-file PATH"
        );
    }
    let url = match (&c.target, c.db_driver.as_deref()) {
        (Some(url), _) => url.clone(),
        (None, Some("mysql")) => {
            // Without --mysql-user the URL names none: the option files' user, else root.
            let user = c
                .mysql_user
                .as_deref()
                .map(|u| format!("{u}@"))
                .unwrap_or_default();
            let host = c.mysql_host.as_deref().unwrap_or("127.0.0.1");
            let port = c.mysql_port.unwrap_or(3306);
            let db = c.mysql_db.as_deref().unwrap_or("test");
            match &c.mysql_socket {
                Some(s) => format!("mysql://{user}localhost/{db}?socket={s}"),
                None => format!("mysql://{user}{host}:{port}/{db}"),
            }
        }
        // What is not given is left out of the URL: libpq's PGHOST, PGPORT, PGUSER and
        // PGDATABASE fill it, then dbrig's defaults (see `Target::parse_with_env`).
        (None, Some("pgsql")) => {
            let user = c.pgsql_user.as_deref().map(|u| format!("{u}@"));
            let port = c.pgsql_port.map(|p| format!(":{p}"));
            format!(
                "postgres://{}{}{}/{}",
                user.unwrap_or_default(),
                c.pgsql_host.as_deref().unwrap_or(""),
                port.unwrap_or_default(),
                c.pgsql_db.as_deref().unwrap_or("")
            )
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
    let url = with_tls_options(url, c);
    Ok(TargetSpec {
        url,
        password_env: c.password_env.clone(),
        password_file: c.password_file.clone(),
        option_files: dbrig_exec::credential_files::my_cnf::OptionFileChoice {
            no_defaults: c.no_defaults,
            defaults_file: c.defaults_file.clone(),
            defaults_extra_file: c.defaults_extra_file.clone(),
        },
    })
}

/// The TLS options (`--ssl-mode`, `--ssl-ca`, …) added to a server URL as its parameters, so
/// the URL stays the one description of the target (written last, an option overrides the
/// URL's own parameter of the same name).
fn with_tls_options(mut url: String, c: &ConnectionArgs) -> String {
    if !["mysql://", "mariadb://", "postgres://", "postgresql://"]
        .iter()
        .any(|s| url.starts_with(s))
    {
        return url;
    }
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let params = [
        ("sslmode", c.ssl_mode.clone()),
        ("sslrootcert", path(&c.ssl_ca)),
        ("sslcert", path(&c.ssl_cert)),
        ("sslkey", path(&c.ssl_key)),
        ("sslminversion", c.ssl_min_version.clone()),
    ];
    for (key, value) in params {
        if let Some(v) = value {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(key);
            url.push('=');
            for ch in v.chars() {
                match ch {
                    '%' | '&' | '#' | '?' | '=' | '@' | ' ' | '"' | '\'' | '\\' => {
                        let mut b = [0; 4];
                        for byte in ch.encode_utf8(&mut b).bytes() {
                            url.push_str(&format!("%{byte:02X}"));
                        }
                    }
                    _ => url.push(ch),
                }
            }
        }
    }
    url
}

/// The target, with its password read.
pub fn resolve_target(c: &ConnectionArgs, store: &StoreArgs) -> Result<Target> {
    let spec = target_spec(c, store)?;
    Ok(dbrig_exec::target::resolve(&spec, &|w| {
        eprintln!("dbrig: warning: {w}")
    })?)
}
