//! Schema versions: an ordered list of SQL files, tracked with `PRAGMA user_version`.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::StoreError;

/// A migration step: its SQL, then (for a step that must read old rows into new types) a
/// Rust conversion in the same transaction.
type Convert = fn(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>;

/// Migration `i` (0-based) takes the schema from version `i` to `i + 1`.
/// Append only: released files are never edited.
const MIGRATIONS: &[(&str, Option<Convert>)] = &[
    (include_str!("migrations/0001_initial.sql"), None),
    (
        include_str!("migrations/0002_typed_results.sql"),
        Some(super::legacy::convert_v1),
    ),
    (
        include_str!("migrations/0003_invalid_trials_redone.sql"),
        None,
    ),
    (include_str!("migrations/0004_run_uid.sql"), None),
    (include_str!("migrations/0005_provenance.sql"), None),
];

/// The schema version this dbrig writes and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `PRAGMA application_id` of a dbrig results database ("dbrg"), so that `file(1)`-style
/// tools and dbrig itself can tell it from other SQLite files.
pub(crate) const APPLICATION_ID: i64 = 0x6462_7267;

/// Bring the schema up to [`SCHEMA_VERSION`], one transaction per step.
///
/// Each step reads the version again under the write lock, so two dbrig processes opening a
/// new file at once do not both apply the same migration.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let sql = |source| super::sql_error(path, source);
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sql)?;
        let app_id: i64 = tx
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(sql)?;
        if app_id != 0 && app_id != APPLICATION_ID {
            return Err(StoreError::ForeignDatabase { path: path.into() });
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::SchemaTooNew {
                path: path.into(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == SCHEMA_VERSION {
            return tx.commit().map_err(sql);
        }
        if version == 0 && app_id == 0 {
            // A fresh file has no tables; anything else belongs to someone else.
            let tables: i64 = tx
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
                    [],
                    |r| r.get(0),
                )
                .map_err(sql)?;
            if tables > 0 {
                return Err(StoreError::ForeignDatabase { path: path.into() });
            }
        }
        let next = version + 1;
        let step = |tx: &rusqlite::Transaction<'_>| -> rusqlite::Result<()> {
            let (sql, convert) = MIGRATIONS[version as usize];
            tx.execute_batch(sql)?;
            if let Some(convert) = convert {
                convert(tx)?;
            }
            tx.pragma_update(None, "user_version", next)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
        };
        step(&tx)
            .and_then(|()| tx.commit())
            .map_err(|source| StoreError::Migration {
                path: path.into(),
                version: next,
                source,
            })?;
    }
}
