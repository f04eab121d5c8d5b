//! Schema versions on MariaDB/MySQL: an ordered list of SQL files, the version kept in
//! `dbrig_schema`. MariaDB commits each DDL statement as it runs, so a transaction cannot make
//! a step once: a named lock does (`GET_LOCK`, one per database, held by this connection while
//! it reads the version and applies what is missing), so that many dbrig processes opening an
//! older schema at once apply each step once — the others wait, then find the new version.
//! A step that fails half-way leaves what it made: its version is not written, and the error
//! says which step failed.

use std::path::Path;

use mysql_async::Conn;
use mysql_async::prelude::Queryable;

use crate::error::StoreError;
use crate::sqlite::SCHEMA_VERSION;

use super::my_error;

/// The first version a server holds: made whole by `0004_initial.sql` (the SQLite file's
/// schema 1 to 4 in one), since no server ever held the older ones.
const FIRST: i64 = 4;

/// Migration `i` (0-based) takes the schema to version `FIRST + i`; its statements are
/// separated by lines holding only `;`. Append only: released files are never edited.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0004_initial.sql"),
    include_str!("migrations/0005_provenance.sql"),
];

/// How long to wait for another dbrig applying a step, in seconds.
const LOCK_WAIT_S: i64 = 600;

/// The lock's name: one per database (lock names are the server's, at most 64 characters).
const LOCK_NAME: &str = "CONCAT('dbrig_schema_', MD5(DATABASE()))";

/// The tables of the schema: a database holding one of them without `dbrig_schema` belongs
/// to someone else.
const TABLES: &str = "'run', 'cell', 'trial', 'interval_sample'";

pub(crate) async fn migrate(conn: &mut Conn, path: &Path) -> Result<(), StoreError> {
    const _: () = assert!(FIRST + MIGRATIONS.len() as i64 - 1 == SCHEMA_VERSION);
    let sql = |e| my_error(path, e);
    let got: Option<Option<i64>> = conn
        .query_first(format!("SELECT GET_LOCK({LOCK_NAME}, {LOCK_WAIT_S})"))
        .await
        .map_err(sql)?;
    if got.flatten() != Some(1) {
        return Err(my_error(
            path,
            mysql_async::Error::Other(
                "another dbrig held the results schema's lock for 10 minutes".into(),
            ),
        ));
    }
    let outcome = apply(conn, path).await;
    // Released whatever happened (a connection that ends releases it too).
    let released = conn
        .query_drop(format!("DO RELEASE_LOCK({LOCK_NAME})"))
        .await
        .map_err(sql);
    outcome.and(released)
}

/// Read the version and apply the missing steps, under the lock.
async fn apply(conn: &mut Conn, path: &Path) -> Result<(), StoreError> {
    let sql = |e| my_error(path, e);
    loop {
        let has_schema: Option<i64> = conn
            .query_first(
                "SELECT COUNT(*) FROM information_schema.tables
                 WHERE table_schema = DATABASE() AND table_name = 'dbrig_schema'",
            )
            .await
            .map_err(sql)?;
        let has_schema = has_schema.unwrap_or(0) > 0;
        let version: i64 = if has_schema {
            conn.query_first("SELECT version FROM dbrig_schema")
                .await
                .map_err(sql)?
                .unwrap_or(0)
        } else {
            let foreign: Option<i64> = conn
                .query_first(format!(
                    "SELECT COUNT(*) FROM information_schema.tables
                     WHERE table_schema = DATABASE() AND table_name IN ({TABLES})"
                ))
                .await
                .map_err(sql)?;
            if foreign.unwrap_or(0) > 0 {
                return Err(StoreError::ForeignServerDatabase { path: path.into() });
            }
            0
        };
        if version > SCHEMA_VERSION {
            return Err(StoreError::SchemaTooNew {
                path: path.into(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        let next = version.max(FIRST - 1) + 1;
        let step = async {
            if !has_schema {
                conn.query_drop(
                    "CREATE TABLE dbrig_schema (version BIGINT NOT NULL) ENGINE = InnoDB",
                )
                .await?;
                conn.query_drop("INSERT INTO dbrig_schema (version) VALUES (0)")
                    .await?;
            }
            for statement in MIGRATIONS[(next - FIRST) as usize].split("\n;\n") {
                conn.query_drop(statement).await?;
            }
            conn.exec_drop("UPDATE dbrig_schema SET version = ?", (next,))
                .await
        };
        step.await.map_err(|e| StoreError::ServerMigration {
            path: path.into(),
            version: next,
            source: Box::new(my_error(path, e)),
        })?;
    }
}
