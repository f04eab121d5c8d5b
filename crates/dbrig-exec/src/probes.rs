//! What dbrig asks a server about itself around every trial and in `dbrig doctor`: its life
//! (to tell a restart inside a trial), every setting and its version, and, for a server on this
//! host, the binary serving its port. The SQL is in `sql/probes_*.sql`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use dbrig_core::results::{LifeMark, ServerSettings};
use dbrig_driver::{ConnectOptions, Connection, Dialect, DriverError, Target};
use dbrig_workload::sql::DialectSql;

static PROBES: DialectSql = DialectSql::new(
    "",
    include_str!("sql/probes_mysql.sql"),
    include_str!("sql/probes_postgres.sql"),
    "",
);

/// The options of a connection that asks the server about itself (probes, evidence, checks):
/// its statements are quick, so each reply is waited for at most the connect timeout, and a
/// server that stopped answering fails the question ([`dbrig_driver::ErrorKind::NoReply`])
/// instead of holding the run.
pub(crate) fn asking(connect: &ConnectOptions) -> ConnectOptions {
    ConnectOptions {
        reply_timeout: Some(connect.connect_timeout),
        own_thread: None,
        ..connect.clone()
    }
}

/// The probe's SQL for a target's server; `None` for SQLite and the mock engine, which have
/// no server of their own to ask.
pub(crate) fn probe_sql(target: &Target, name: &str) -> Option<String> {
    match target {
        Target::Mysql { .. } | Target::Postgres { .. } => {
            Some(PROBES.get(target.dialect()).render(name, &[]))
        }
        Target::Sqlite { .. } | Target::Mock { .. } => None,
    }
}

/// How a benchmark client's connection to `target` is secured and authenticated: one
/// connection opened as the clients open theirs (the lean client on MariaDB/MySQL), asked what
/// it negotiated. `None` for engines without a network protocol.
pub(crate) async fn connection_security(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<Option<dbrig_core::results::ConnectionSecurity>, DriverError> {
    if probe_sql(target, "version").is_none() {
        return Ok(None);
    }
    let options = ConnectOptions {
        lean: true,
        ..asking(connect)
    };
    let conn = Connection::connect(target, &options).await?;
    let mut security = conn.security();
    conn.close().await;
    // tokio-postgres does not say which method it answered: ask the server once (no
    // password sent). A probe that fails leaves the method unknown, not the trial failed.
    if let Some(s) = security.as_mut()
        && s.auth.is_none()
    {
        s.auth = dbrig_driver::postgres_auth_method(target, connect.connect_timeout)
            .await
            .ok()
            .flatten();
    }
    Ok(security)
}

/// Where `target` keeps its data on this host and the bytes still free there: an SQLite
/// file's folder, or a loopback server's data directory when it is visible here. `None` when
/// that cannot be known (a remote server, a data directory the account may not read).
pub async fn free_space(target: &Target, connect: &ConnectOptions) -> Option<(PathBuf, u64)> {
    let dir = match target {
        Target::Sqlite { path: Some(p) } => {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            parent.map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        }
        // Only a server running on this host: a remote one's data directory path means
        // nothing here.
        Target::Mysql { .. } | Target::Postgres { .. } if local_binary(target).is_some() => {
            let sql = probe_sql(target, "data_directory")?;
            let mut conn = Connection::connect(target, &asking(connect)).await.ok()?;
            let rows = conn.query(&sql, &[]).await;
            conn.close().await;
            let dir = rows.ok()?.first()?.first()?.to_text()?;
            PathBuf::from(dir)
        }
        _ => return None,
    };
    let free = dbrig_server::host::free_bytes(&dir)?;
    Some((dir, free))
}

/// Observe a server's life through SQL (MariaDB `Uptime`, PostgreSQL
/// `pg_postmaster_start_time()`); a server that cannot be reached is marked dead, one that
/// takes the connection but does not answer (stopped, hung) silent.
pub async fn observe_life(target: &Target, connect: &ConnectOptions) -> LifeMark {
    let Some(sql) = probe_sql(target, "uptime") else {
        return LifeMark::default();
    };
    // Quick, and never longer than the run's own connect timeout. The lean client opens the
    // socket apart from the handshake, so a server that accepts and then says nothing is told
    // from one that is gone.
    let limit = connect.connect_timeout.min(Duration::from_secs(5));
    let quick = ConnectOptions {
        connect_timeout: limit,
        reply_timeout: Some(limit),
        lean: true,
        own_thread: None,
        ..connect.clone()
    };
    let observed = SystemTime::now();
    let result = async {
        let mut conn = Connection::connect(target, &quick).await?;
        let rows = conn.query(&sql, &[]).await?;
        conn.close().await;
        Ok::<_, DriverError>(rows)
    }
    .await;
    match result {
        Ok(rows) => {
            let row = rows.into_iter().next().unwrap_or_default();
            match target.dialect() {
                Dialect::Mysql => row
                    .get(1)
                    .and_then(|v| v.as_i64())
                    .map(|up| LifeMark::from_uptime(up.max(0) as u64, observed))
                    .unwrap_or_default(),
                _ => row
                    .first()
                    .and_then(|v| v.as_f64())
                    .map(LifeMark::from_start_time)
                    .unwrap_or_default(),
            }
        }
        Err(e) if e.kind == dbrig_driver::ErrorKind::NoReply => LifeMark {
            silent: true,
            ..LifeMark::default()
        },
        Err(_) => LifeMark {
            died: true,
            ..LifeMark::default()
        },
    }
}

/// Every server variable (MariaDB/MySQL `SHOW GLOBAL VARIABLES`, PostgreSQL `pg_settings` as
/// `SHOW` prints them), the version, and for a server on this host the binary serving the
/// target's port. `Ok(None)` for SQLite and the mock engine.
pub async fn server_settings(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<Option<ServerSettings>, DriverError> {
    let local = local_process(target);
    server_settings_of(
        target,
        connect,
        local.as_ref().map(|(_, exe)| exe.as_path()),
    )
    .await
}

/// [`server_settings`] with the binary of the local process serving the target already found
/// (a trial looks that process up once: see [`local_process`]).
pub async fn server_settings_of(
    target: &Target,
    connect: &ConnectOptions,
    binary: Option<&Path>,
) -> Result<Option<ServerSettings>, DriverError> {
    let (Some(variables_sql), Some(version_sql)) =
        (probe_sql(target, "variables"), probe_sql(target, "version"))
    else {
        return Ok(None);
    };
    // The run's own connect timeout (`--connect-timeout`), as for every connection, and as
    // long for the reply.
    let mut conn = Connection::connect(target, &asking(connect)).await?;
    let rows = conn.query(&variables_sql, &[]).await?;
    let version = conn.query(&version_sql, &[]).await?;
    conn.close().await;
    let text = |v: Option<&dbrig_core::Value>| v.and_then(|v| v.to_text()).unwrap_or_default();
    let variables: std::collections::BTreeMap<String, String> = rows
        .iter()
        .map(|r| (text(r.first()), text(r.get(1))))
        .collect();
    let version_row = version.first();
    let version = [
        text(version_row.and_then(|r| r.first())),
        text(version_row.and_then(|r| r.get(1))),
    ]
    .iter()
    .filter(|s| !s.is_empty())
    .cloned()
    .collect::<Vec<_>>()
    .join(" ");
    Ok(Some(ServerSettings {
        version,
        binary: binary.map(|p| p.display().to_string()),
        variable_count: variables.len(),
        variables,
    }))
}

/// The server settings prepared data depends on beside the workload's own options: the
/// default storage engine (MariaDB/MySQL) or table access method (PostgreSQL) tables are
/// created with. `None` for SQLite and the mock engine.
pub async fn data_settings(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<Option<String>, DriverError> {
    let Some(sql) = probe_sql(target, "data_settings") else {
        return Ok(None);
    };
    let mut conn = Connection::connect(target, &asking(connect)).await?;
    let rows = conn.query(&sql, &[]).await;
    conn.close().await;
    Ok(rows?
        .first()
        .and_then(|r| r.first())
        .and_then(|v| v.to_text()))
}

/// Create database `name` on `target`'s server unless it exists (MariaDB/MySQL, PostgreSQL;
/// an SQLite file is created by connecting). `name` must be an identifier dbrig built.
pub async fn ensure_database(
    target: &Target,
    name: &str,
    connect: &ConnectOptions,
) -> Result<(), DriverError> {
    let (Some(exists), Some(create)) = (
        probe_sql(target, "database_exists"),
        probe_sql(target, "create_database"),
    ) else {
        return Ok(());
    };
    debug_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    let mut conn = Connection::connect(target, &asking(connect)).await?;
    let found = conn
        .query(&exists, &[dbrig_core::Value::Text(name.to_owned())])
        .await?
        .first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if found == 0 {
        let quoted = match target.dialect() {
            Dialect::Mysql => format!("`{name}`"),
            _ => format!("\"{name}\""),
        };
        conn.execute_text(&create.replace("{database}", &quoted))
            .await?;
    }
    conn.close().await;
    Ok(())
}

/// `dbrig doctor`'s summary of [`server_settings`]: version, binary, how many variables, the
/// key settings (`dbrig_core::results::KEY_SETTINGS`, the ones reports show too) and the
/// durability of commits.
pub fn server_summary(settings: Option<&ServerSettings>) -> Vec<(String, String)> {
    let Some(settings) = settings else {
        return vec![("settings".into(), "none (not a server)".into())];
    };
    let mut out = vec![
        ("version".to_owned(), settings.version.clone()),
        (
            "binary".to_owned(),
            settings
                .binary
                .clone()
                .unwrap_or_else(|| "unknown (not on this host, or not ours to inspect)".into()),
        ),
        (
            "variables".to_owned(),
            format!(
                "{} (all stored with every trial; all shown with --format json)",
                settings.variable_count
            ),
        ),
    ];
    out.extend(
        settings
            .key_settings()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    if let Some(d) = settings.durability() {
        out.push(("durability".to_owned(), d.describe()));
    }
    out
}

/// Server settings that would distort a benchmark of `clients` clients.
pub fn server_warnings(settings: &ServerSettings, clients: Option<u32>) -> Vec<String> {
    let max_conn = settings
        .variables
        .get("max_connections")
        .and_then(|v| v.parse::<u32>().ok());
    let mut out = Vec::new();
    if let (Some(max), Some(n)) = (max_conn, clients)
        && n >= max
    {
        out.push(format!(
            "warn: the server allows {max} connections (max_connections), not more than the {n} clients asked for: raise max_connections"
        ));
    }
    out
}

/// The process serving `target` and its binary, when the target is on this host: the one
/// listening on its TCP port, or on its Unix socket file. It walks `/proc/net/tcp` (the
/// kernel's whole socket hash, ~7 ms) or `/proc/net/unix`, and every process's fds.
pub fn local_process(target: &Target) -> Option<(u32, PathBuf)> {
    if let Some(file) = target.socket_file() {
        return dbrig_server::host::socket_process(&file);
    }
    let (host, port) = target.tcp_endpoint()?;
    let local = matches!(host, "localhost" | "127.0.0.1" | "::1");
    local
        .then(|| dbrig_server::host::listening_process(port))
        .flatten()
}

/// The binary of the process serving `target`'s port, when the target is on this host.
pub fn local_binary(target: &Target) -> Option<PathBuf> {
    local_process(target).map(|(_, exe)| exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_servers_on_this_host_have_a_local_binary() {
        for url in [
            "mock:",
            "sqlite::memory:",
            // No socket file there: no process listens on it.
            "mysql://root@localhost/test?socket=/nonexistent/dbrig.sock",
            // Not this host: never looked up, whatever listens on 3306 here.
            "mysql://root@192.0.2.1:3306/test",
        ] {
            assert_eq!(local_binary(&Target::parse(url).unwrap()), None, "{url}");
        }
    }

    #[test]
    fn probes_have_sql_for_servers_only() {
        let mysql = Target::parse("mysql://root@127.0.0.1:3306/test").unwrap();
        let pg = Target::parse("postgres://postgres@127.0.0.1:5432/test").unwrap();
        let sqlite = Target::parse("sqlite::memory:").unwrap();
        assert!(probe_sql(&mysql, "uptime").unwrap().contains("Uptime"));
        assert!(probe_sql(&pg, "variables").unwrap().contains("pg_settings"));
        assert!(probe_sql(&sqlite, "uptime").is_none());
    }

    #[test]
    fn doctor_summary_and_warnings_of_server_settings() {
        let settings = ServerSettings {
            version: "10.11.19-MariaDB Debian 12".into(),
            binary: Some("/usr/sbin/mariadbd".into()),
            variable_count: 3,
            variables: [
                ("max_connections", "151"),
                ("innodb_buffer_pool_size", "134217728"),
                ("zzz_other", "1"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        };
        let summary = server_summary(Some(&settings));
        let keys: Vec<&str> = summary.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "version",
                "binary",
                "variables",
                "innodb_buffer_pool_size",
                "max_connections"
            ]
        );
        assert_eq!(summary[1].1, "/usr/sbin/mariadbd");
        assert!(summary[2].1.starts_with("3 "));
        assert!(server_warnings(&settings, Some(100)).is_empty());
        assert!(server_warnings(&settings, None).is_empty());
        let w = server_warnings(&settings, Some(151));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("max_connections") && w[0].contains("151"),
            "{w:?}"
        );
        assert_eq!(server_summary(None).len(), 1);
    }
}
