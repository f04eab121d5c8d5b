//! The registry of the tables dbrig created (`dbrig_objects`, in the database that holds
//! them), shared by every workload family (OLTP, TPC-H, micro-benchmarks).
//!
//! A name alone proves nothing: a user may drop dbrig's `sbtest1` and make a table of their
//! own under that name. So every entry keeps a **creation marker** read from the catalog when
//! the table was made — MariaDB/MySQL: a random token in the table's comment plus its
//! `CREATE_TIME`; PostgreSQL: the table's OID; SQLite: a random token in a comment inside its
//! `CREATE TABLE` text — and nothing is dropped unless the table's marker is still the recorded
//! one (while dbrig's own DDL runs on a table still loading, MariaDB's is its comment token
//! alone: see [`ddl_begins`]). Each entry also has a state: `loading` from creation, `ready` only once everything
//! the table should hold is there (recorded last), so data an interrupted prepare left behind
//! is never taken for prepared data; and the data options it was prepared with.

use std::time::{SystemTime, UNIX_EPOCH};

use dbrig_core::Value;
use dbrig_driver::{Connection, Dialect, Target};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::error::WorkloadError;
use crate::sql::{DialectSql, SqlSet};

fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("registry/common.sql"),
        include_str!("registry/mysql.sql"),
        include_str!("registry/postgres.sql"),
        include_str!("registry/sqlite.sql"),
    );
    SQL.get(dialect)
}

const REGISTRY: &str = "dbrig_objects";
/// Columns later than the first registry (name, kind, created_at); added to an older one.
const NEW_COLUMNS: [&str; 3] = ["marker", "state", "data"];

/// One registered table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: String,
    pub marker: String,
    /// `loading` from creation, `ready` once everything it holds is there; empty for a table
    /// an older dbrig registered (its completeness is unknown).
    pub state: String,
    /// The data options it was prepared with (JSON text; empty when not recorded).
    pub data: String,
}

/// A fresh random token for a table about to be created (from the kernel's random source;
/// the clock and pid seed it where that is missing).
pub fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let n = match std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)) {
        Ok(()) => u128::from_le_bytes(bytes),
        Err(_) => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let mut rng = SmallRng::seed_from_u64(nanos as u64 ^ u64::from(std::process::id()));
            rng.random()
        }
    };
    format!("{n:032x}")
}

/// The `CREATE TABLE` statement carrying `token` where the engine keeps it: SQLite keeps the
/// statement's text, so the token goes into a comment after the first parenthesis. The other
/// engines take theirs after creation ([`record`]).
pub fn marked_create(dialect: Dialect, create_sql: &str, token: &str) -> String {
    match (dialect, create_sql.find('(')) {
        (Dialect::Sqlite, Some(i)) => format!(
            "{} /* dbrig:{token} */{}",
            &create_sql[..=i],
            &create_sql[i + 1..]
        ),
        _ => create_sql.to_owned(),
    }
}

/// Make sure the registry exists with every column (an older dbrig's gets the new ones).
pub async fn ensure(conn: &mut Connection) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.execute_text(&sql.render("create_registry", &[]))
        .await?;
    if is_mock(conn) {
        return Ok(());
    }
    let have = registry_columns(conn).await?;
    for c in NEW_COLUMNS {
        if !have.iter().any(|h| h == c) {
            conn.execute_text(&sql.render("registry_add_column", &[("column", c)]))
                .await?;
        }
    }
    Ok(())
}

async fn registry_columns(conn: &mut Connection) -> Result<Vec<String>, WorkloadError> {
    let sql = sql_for(conn.dialect());
    Ok(conn
        .query(&sql.render("registry_columns", &[]), &[])
        .await?
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::to_text))
        .map(|c| c.to_lowercase())
        .collect())
}

/// Record a table just created with `token` (see [`marked_create`]) as `loading`, with the
/// data options it is prepared with.
pub async fn record(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    token: &str,
    data: &str,
) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    if conn.dialect() == Dialect::Mysql && !is_mock(conn) {
        conn.execute_text(&sql.render(
            "set_marker",
            &[("table", table), ("comment", &format!("dbrig:{token}"))],
        ))
        .await?;
    }
    let marker = current_marker(conn, table).await?.unwrap_or_default();
    // An entry left by a table of this name dropped by hand is stale: this table replaces it.
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(table.into())],
    )
    .await?;
    conn.query(
        &sql.render("registry_add", &[]),
        &[
            Value::Text(table.into()),
            Value::Text(kind.into()),
            Value::Text(unix_time_text()),
            Value::Text(marker),
            Value::Text(data.into()),
        ],
    )
    .await?;
    Ok(())
}

/// Record that `table` holds everything it should: the last step of its preparation. The
/// marker is read again (an index build rewrites a MariaDB table's definition, and with it
/// its creation time).
pub async fn mark_ready(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    let marker = current_marker(conn, table).await?.unwrap_or_default();
    conn.query(
        &sql.render("registry_ready", &[]),
        &[Value::Text(marker), Value::Text(table.into())],
    )
    .await?;
    Ok(())
}

/// The creation time of a MariaDB marker recorded while dbrig's own DDL runs on the table.
const DDL_RUNNING: &str = "dbrig DDL running";

/// Before DDL of dbrig's own on a table still loading: MariaDB's `CREATE_TIME` moves with every
/// `CREATE INDEX` and `ALTER TABLE`, and a DDL statement cut off by Ctrl-C goes on in the server
/// after dbrig has gone. Until [`refresh_marker`], the recorded marker keeps the table's comment
/// token and says the creation time is being changed: [`verify`] then proves a table still
/// `loading` by its token alone.
pub async fn ddl_begins(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    if conn.dialect() != Dialect::Mysql || is_mock(conn) {
        // PostgreSQL's OID and SQLite's token stay through an index build.
        return Ok(());
    }
    let marker = current_marker(conn, table).await?.unwrap_or_default();
    let token = marker.split_once('@').map_or(marker.as_str(), |(t, _)| t);
    set_marker(conn, table, format!("{token}@{DDL_RUNNING}")).await
}

/// After DDL of dbrig's own on a table still loading (see [`ddl_begins`]): record the marker the
/// table has now, its state unchanged.
pub async fn refresh_marker(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    if conn.dialect() != Dialect::Mysql || is_mock(conn) {
        return Ok(());
    }
    let marker = current_marker(conn, table).await?.unwrap_or_default();
    set_marker(conn, table, marker).await
}

async fn set_marker(
    conn: &mut Connection,
    table: &str,
    marker: String,
) -> Result<(), WorkloadError> {
    conn.query(
        &sql_for(conn.dialect()).render("registry_marker", &[]),
        &[Value::Text(marker), Value::Text(table.into())],
    )
    .await?;
    Ok(())
}

/// Whether the table's marker `now` is the recorded one: the same, or, while dbrig's own DDL
/// ran on a table still loading ([`ddl_begins`]), the same comment token.
fn marker_holds(entry: &Entry, now: &str) -> bool {
    match entry.marker.split_once('@') {
        Some((token, DDL_RUNNING)) if entry.state == "loading" => {
            now.split_once('@').is_some_and(|(t, _)| t == token)
        }
        _ => now == entry.marker,
    }
}

/// The registry's entry for `table`, if it has one.
pub async fn lookup(conn: &mut Connection, table: &str) -> Result<Option<Entry>, WorkloadError> {
    if is_mock(conn) {
        // The mock engine answers every query with one row: everything is dbrig's, ready.
        return Ok(Some(Entry {
            kind: String::new(),
            marker: "mock".into(),
            state: "ready".into(),
            data: String::new(),
        }));
    }
    if !conn.table_exists(REGISTRY).await? {
        return Ok(None);
    }
    let sql = sql_for(conn.dialect());
    // Read only: a run may look on a server started read-only. An older dbrig's registry
    // lacks the marker, state and data columns.
    let columns = registry_columns(conn).await?;
    let current = NEW_COLUMNS.iter().all(|c| columns.iter().any(|h| h == c));
    let lookup = if current {
        "registry_lookup"
    } else {
        "registry_lookup_old"
    };
    let rows = conn
        .query(&sql.render(lookup, &[]), &[Value::Text(table.into())])
        .await?;
    let text = |r: &[Value], i: usize| r.get(i).and_then(Value::to_text).unwrap_or_default();
    Ok(rows.first().map(|r| Entry {
        kind: text(r, 0),
        marker: text(r, 1),
        state: text(r, 2),
        data: text(r, 3),
    }))
}

/// Prove that `table` is the one dbrig created for `kind`: registered, and its creation
/// marker unchanged. Returns its entry; otherwise the error names the table and why.
pub async fn verify(
    conn: &mut Connection,
    table: &str,
    kind: &str,
    target: &(dyn std::fmt::Display + Sync),
) -> Result<Entry, WorkloadError> {
    let not_ours = || WorkloadError::NotCreatedByDbrig {
        table: table.into(),
        target: target.to_string(),
    };
    let entry = lookup(conn, table).await?.ok_or_else(not_ours)?;
    if is_mock(conn) {
        return Ok(entry);
    }
    if entry.kind != kind {
        return Err(not_ours());
    }
    let replaced = |why: String| WorkloadError::NotTheTableDbrigMade {
        table: table.into(),
        target: target.to_string(),
        why,
    };
    if entry.marker.is_empty() {
        return Err(replaced(
            "it was registered by an older dbrig without a creation marker".into(),
        ));
    }
    match current_marker(conn, table).await? {
        Some(now) if marker_holds(&entry, &now) => Ok(entry),
        Some(now) => Err(replaced(format!(
            "its creation marker is {} where dbrig recorded {}: it was dropped and made again since",
            describe_marker(conn.dialect(), &now),
            describe_marker(conn.dialect(), &entry.marker)
        ))),
        None => Err(replaced("it has no creation marker".into())),
    }
}

/// Drop a table verified with [`verify`] and forget it.
pub async fn drop_table(conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.execute_text(&sql.render("drop_table", &[("table", table)]))
        .await?;
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(table.into())],
    )
    .await?;
    Ok(())
}

/// A sysbench Lua script's prepare, registered under `name` (not a table: a script's tables
/// are its own, unknown to dbrig) as `loading` with `data` (its options' digest) before the
/// script's prepare runs; [`script_prepared`] marks it ready after. A plan prepares a script
/// only where no ready entry with the same data is found.
pub async fn record_script(
    conn: &mut Connection,
    name: &str,
    data: &str,
) -> Result<(), WorkloadError> {
    ensure(conn).await?;
    forget(conn, name).await?;
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_add", &[]),
        &[
            Value::Text(name.into()),
            Value::Text("lua-script".into()),
            Value::Text(unix_time_text()),
            Value::Text(String::new()),
            Value::Text(data.into()),
        ],
    )
    .await?;
    Ok(())
}

/// The script registered by [`record_script`] finished its prepare.
pub async fn script_prepared(conn: &mut Connection, name: &str) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_ready", &[]),
        &[Value::Text(String::new()), Value::Text(name.into())],
    )
    .await?;
    Ok(())
}

/// Remove an entry that names no table (a script's, after its cleanup).
pub async fn forget(conn: &mut Connection, name: &str) -> Result<(), WorkloadError> {
    if !conn.table_exists(REGISTRY).await? {
        return Ok(());
    }
    let sql = sql_for(conn.dialect());
    conn.query(
        &sql.render("registry_remove", &[]),
        &[Value::Text(name.into())],
    )
    .await?;
    Ok(())
}

/// Drop the registry once no table is left in it.
pub async fn drop_if_empty(conn: &mut Connection) -> Result<(), WorkloadError> {
    if !conn.table_exists(REGISTRY).await? {
        return Ok(());
    }
    let sql = sql_for(conn.dialect());
    let left = conn.query(&sql.render("registry_count", &[]), &[]).await?;
    if left.first().and_then(|r| r.first()).and_then(Value::as_i64) == Some(0) {
        conn.execute_text(&sql.render("drop_registry", &[])).await?;
    }
    Ok(())
}

/// The table's creation marker as the catalog shows it now (`None`: no such table, or no
/// marker where the engine keeps one).
async fn current_marker(
    conn: &mut Connection,
    table: &str,
) -> Result<Option<String>, WorkloadError> {
    if is_mock(conn) {
        return Ok(Some("mock".into()));
    }
    let dialect = conn.dialect();
    let sql = sql_for(dialect);
    let rows = conn
        .query(
            &sql.render("table_marker", &[]),
            &[Value::Text(table.into())],
        )
        .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let text = |i: usize| row.get(i).and_then(Value::to_text).unwrap_or_default();
    Ok(match dialect {
        Dialect::Mysql => {
            let comment = text(0);
            comment
                .starts_with("dbrig:")
                .then(|| format!("{comment}@{}", text(1)))
        }
        Dialect::Postgres => Some(format!("oid:{}", text(0))),
        Dialect::Sqlite => {
            let create = text(0);
            create.find("/* dbrig:").and_then(|i| {
                let rest = &create[i + 3..];
                rest.find(" */").map(|end| rest[..end].to_owned())
            })
        }
    })
}

/// A marker as a user reads it: MariaDB's creation time, PostgreSQL's OID, SQLite's token.
fn describe_marker(dialect: Dialect, marker: &str) -> String {
    match dialect {
        Dialect::Mysql => match marker.split_once('@') {
            Some((_, DDL_RUNNING)) => "its comment token, while dbrig's own DDL ran".into(),
            Some((_, time)) => format!("created {time}"),
            None => marker.into(),
        },
        Dialect::Postgres => marker.replace("oid:", "OID "),
        Dialect::Sqlite => marker.into(),
    }
}

fn is_mock(conn: &Connection) -> bool {
    matches!(conn.target(), Target::Mock { .. })
}

fn unix_time_text() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("unix:{secs}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_keeps_the_token_inside_the_statement() {
        assert_eq!(
            marked_create(Dialect::Sqlite, "CREATE TABLE t (\n  id INTEGER\n)", "ab12"),
            "CREATE TABLE t ( /* dbrig:ab12 */\n  id INTEGER\n)"
        );
        assert_eq!(
            marked_create(Dialect::Mysql, "CREATE TABLE t (id INT)", "ab12"),
            "CREATE TABLE t (id INT)"
        );
        let a = new_token();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_token());
    }

    #[test]
    fn every_dialect_has_every_registry_statement() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let sql = sql_for(d);
            for name in [
                "create_registry",
                "registry_columns",
                "registry_add",
                "registry_ready",
                "registry_lookup",
                "registry_lookup_old",
                "table_marker",
                "drop_table",
            ] {
                assert!(sql.has(name), "{name} missing for {d:?}");
            }
        }
        assert!(sql_for(Dialect::Mysql).has("set_marker"));
    }
}
