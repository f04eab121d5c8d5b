//! sql-bench's database of its own. The suite's tests drop and create tables of fixed names
//! (`bench`, `bench1`, ATIS's `airport`, …) in the database they are given, so run in a
//! user's database they would replace the user's tables of those names, and leave tables
//! dbrig cannot account for. dbrig therefore runs the suite in `<database>_sqlbench`, a
//! database it creates on the target's server and marks as its own with a registered table
//! (`dbrig_sqlbench`, its creation marker in that database's `dbrig_objects`, as every table
//! dbrig creates). After each test the tables the suite left there are registered too.
//!
//! A run refuses a database of that name that dbrig did not create, or that holds a table
//! dbrig cannot prove its own; `dbrig cleanup sql-bench` drops the database whole, after the
//! same proof, and nothing else.

use dbrig_core::Value;
use dbrig_driver::{ConnectOptions, Connection, Dialect, Target};

use crate::error::WorkloadError;
use crate::registry;
use crate::sql::{DialectSql, SqlSet};

fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}

/// The table that marks the database as dbrig's.
const MARKER_TABLE: &str = "dbrig_sqlbench";
/// Its registry kind.
const MARKER_KIND: &str = "sql_bench_database";
/// The registry kind of the tables the suite left.
const TABLE_KIND: &str = "sql_bench";
/// The registry's own table (never a table of the suite's).
const REGISTRY_TABLE: &str = "dbrig_objects";

/// The database sql-bench runs in on `target`'s server: the target's database name (letters,
/// digits and `_` kept, others made `_`) with `_sqlbench`.
pub fn database_name(target: &Target) -> Result<String, WorkloadError> {
    if !matches!(target, Target::Mysql { .. } | Target::Postgres { .. }) {
        return Err(WorkloadError::InvalidOptions(
            "sql-bench runs against MariaDB/MySQL or PostgreSQL".into(),
        ));
    }
    let base: String = target
        .database()
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    Ok(format!("{base}_sqlbench"))
}

async fn database_exists(conn: &mut Connection, name: &str) -> Result<bool, WorkloadError> {
    let sql = sql_for(conn.dialect());
    let rows = conn
        .query(
            &sql.render("database_exists", &[]),
            &[Value::Text(name.to_owned())],
        )
        .await?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(0)
        > 0)
}

async fn tables(conn: &mut Connection) -> Result<Vec<String>, WorkloadError> {
    let sql = sql_for(conn.dialect());
    Ok(conn
        .query(&sql.render("list_tables", &[]), &[])
        .await?
        .into_iter()
        .filter_map(|r| r.first().and_then(Value::to_text))
        .collect())
}

/// Proves that every table in the database `conn` is on is dbrig's: the marker table, and
/// each other one registered by kind with its creation marker unchanged. Nothing proven:
/// the error names the first table and why.
async fn prove_ours(conn: &mut Connection, shown: &Target) -> Result<Vec<String>, WorkloadError> {
    if !conn.table_exists(MARKER_TABLE).await? {
        return Err(WorkloadError::InvalidOptions(format!(
            "database {shown} was not created by dbrig for sql-bench (it has no {MARKER_TABLE} table), so dbrig neither runs the suite in it nor drops it: drop or rename it yourself"
        )));
    }
    registry::verify(conn, MARKER_TABLE, MARKER_KIND, shown).await?;
    let mut all = Vec::new();
    for t in tables(conn).await? {
        if t == REGISTRY_TABLE || t == MARKER_TABLE {
            continue;
        }
        registry::verify(conn, &t, TABLE_KIND, shown).await?;
        all.push(t);
    }
    Ok(all)
}

/// The target sql-bench's tests run against: its database of its own on `target`'s server,
/// created (and marked) when missing, proven dbrig's when present. Returns that target and
/// whether it was created now.
pub async fn enter(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<(Target, bool), WorkloadError> {
    let name = database_name(target)?;
    let home = target.with_database(&name, "sqlbench");
    let mut conn = Connection::connect(target, connect).await?;
    let made = async {
        if database_exists(&mut conn, &name).await? {
            return Ok(false);
        }
        let create =
            sql_for(conn.dialect()).render("create_database", &[("database", name.as_str())]);
        conn.execute_text(&create).await?;
        Ok::<_, WorkloadError>(true)
    }
    .await;
    conn.close().await;
    let created = made?;
    let mut conn = Connection::connect(&home, connect).await?;
    let r = if created {
        mark(&mut conn).await
    } else {
        prove_ours(&mut conn, &home).await.map(drop)
    };
    conn.close().await;
    if r.is_err() && created {
        // Made a moment ago and not yet marked: dbrig's without doubt, and unprovable later.
        if let Ok(mut c) = Connection::connect(target, connect).await {
            let drop = sql_for(c.dialect()).render("drop_database", &[("database", name.as_str())]);
            let _ = c.execute_text(&drop).await;
            c.close().await;
        }
    }
    r?;
    Ok((home, created))
}

async fn mark(conn: &mut Connection) -> Result<(), WorkloadError> {
    registry::ensure(conn).await?;
    let token = registry::new_token();
    let create = sql_for(conn.dialect()).render("create_marker", &[]);
    conn.execute_text(&registry::marked_create(conn.dialect(), &create, &token))
        .await?;
    registry::record(conn, MARKER_TABLE, MARKER_KIND, &token, "").await?;
    registry::mark_ready(conn, MARKER_TABLE).await
}

/// Registers the tables the suite left in its database (`home`, from [`enter`]): every table
/// not yet proven dbrig's. Only the suite writes there; a name dbrig could not use as an
/// identifier is left unregistered, and cleanup will then name it.
pub async fn register_left(home: &Target, connect: &ConnectOptions) -> Result<(), WorkloadError> {
    let mut conn = Connection::connect(home, connect).await?;
    let r = async {
        for t in tables(&mut conn).await? {
            if t == REGISTRY_TABLE
                || t == MARKER_TABLE
                || !t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || registry::verify(&mut conn, &t, TABLE_KIND, home)
                    .await
                    .is_ok()
            {
                continue;
            }
            registry::record(&mut conn, &t, TABLE_KIND, &registry::new_token(), "").await?;
            registry::mark_ready(&mut conn, &t).await?;
        }
        Ok(())
    }
    .await;
    conn.close().await;
    r
}

/// What `dbrig cleanup sql-bench` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanupReport {
    /// The database dropped; `None` when there was none.
    pub database: Option<String>,
    /// The suite's tables that went with it.
    pub tables: Vec<String>,
}

/// Drops sql-bench's database on `target`'s server once every table in it is proven dbrig's;
/// otherwise drops nothing and says which table is not.
pub async fn cleanup(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<CleanupReport, WorkloadError> {
    let name = database_name(target)?;
    let home = target.with_database(&name, "sqlbench");
    let mut conn = Connection::connect(target, connect).await?;
    let r = async {
        if !database_exists(&mut conn, &name).await? {
            return Ok(CleanupReport {
                database: None,
                tables: Vec::new(),
            });
        }
        let mut inside = Connection::connect(&home, connect).await?;
        let proven = prove_ours(&mut inside, &home).await;
        inside.close().await;
        let tables = proven?;
        let drop = sql_for(conn.dialect()).render("drop_database", &[("database", name.as_str())]);
        conn.execute_text(&drop).await?;
        Ok(CleanupReport {
            database: Some(name.clone()),
            tables,
        })
    }
    .await;
    conn.close().await;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_named_after_the_targets() {
        let t = Target::parse("mysql://root@127.0.0.1:3306/my$db").unwrap();
        assert_eq!(database_name(&t).unwrap(), "my_db_sqlbench");
        // Within both servers' identifier limits (MariaDB 64, PostgreSQL 63 bytes).
        let long = "d".repeat(64);
        let t = Target::parse(&format!("postgres://u@127.0.0.1:5432/{long}")).unwrap();
        assert_eq!(
            database_name(&t).unwrap(),
            format!("{}_sqlbench", &long[..40])
        );
        let t = Target::parse("sqlite:///tmp/x.db").unwrap();
        assert!(database_name(&t).is_err());
    }

    #[test]
    fn every_dialect_has_every_statement() {
        for d in [Dialect::Mysql, Dialect::Postgres] {
            for name in [
                "database_exists",
                "create_database",
                "drop_database",
                "list_tables",
                "create_marker",
            ] {
                assert!(sql_for(d).has(name), "{name} missing for {d:?}");
            }
        }
    }
}
