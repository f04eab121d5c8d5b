//! Results on a server, and `dbrig results` (copy, export, import).
//!
//! `--results` names a SQLite file or a results server: a `postgres://` / `postgresql://` or
//! `mysql://` / `mariadb://` URL, parsed as a target is (dbrig-exec's `target::resolve`), so its
//! password comes from where targets' do — `~/.pgpass`, `PGPASSWORD`, MariaDB's option files,
//! `MYSQL_PWD`, or the URL itself (with the same warning) — and is handed to the store's client
//! only: the store's address is the redacted one.

use std::ffi::OsStr;

use anyhow::{Context, Result};
use dbrig_driver::{Endpoint, Target};
use dbrig_exec::TargetSpec;
use dbrig_store::{ServerAddress, ServerEndpoint, ServerEngine, ServerPassword, Store};

/// Whether a `--results` value names a results server rather than a file.
pub fn is_server_url(value: &OsStr) -> bool {
    let v = value.to_string_lossy();
    ["postgres://", "postgresql://", "mysql://", "mariadb://"]
        .iter()
        .any(|s| v.starts_with(s))
}

/// Open the results server `url` names.
pub fn open_server(url: &str) -> Result<Store> {
    let address = server_address(url)?;
    let shown = address.shown.clone();
    Store::open_server(&address).with_context(|| format!("opening results database {shown}"))
}

/// `url` resolved as a target, its password found where the engine's clients look for it.
pub fn server_address(url: &str) -> Result<ServerAddress> {
    let spec = TargetSpec {
        url: url.to_owned(),
        ..TargetSpec::default()
    };
    let warn = |w: &str| eprintln!("dbrig: warning: --results: {w}");
    let target = dbrig_exec::target::resolve(&spec, &warn)?;
    let shown = target.to_string();
    let (engine, user, endpoint, database, password) = match target {
        Target::Postgres {
            user,
            password,
            endpoint,
            database,
            ..
        } => (ServerEngine::Postgres, user, endpoint, database, password),
        Target::Mysql {
            user,
            password,
            endpoint,
            database,
            ..
        } => (ServerEngine::Mysql, user, endpoint, database, password),
        _ => anyhow::bail!("--results {shown}: not a PostgreSQL or MariaDB/MySQL URL"),
    };
    if database.is_empty() {
        anyhow::bail!("--results {shown}: name the database that holds the results (…/DB)");
    }
    let endpoint = match endpoint {
        Endpoint::Tcp { host, port } => ServerEndpoint::Tcp { host, port },
        Endpoint::Socket(path) => {
            let (dir, port) = dbrig_driver::pg_socket_dir_and_port(&path);
            match engine {
                ServerEngine::Postgres => ServerEndpoint::Socket {
                    path: dir.to_owned(),
                    port: port.unwrap_or(5432),
                },
                ServerEngine::Mysql => ServerEndpoint::Socket { path, port: 0 },
            }
        }
    };
    Ok(ServerAddress {
        engine,
        endpoint,
        user,
        database,
        password: password.map(|p| ServerPassword::new(p.expose())),
        shown,
    })
}
