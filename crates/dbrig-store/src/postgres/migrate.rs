//! Schema versions on PostgreSQL: an ordered list of SQL files, the version kept in
//! `dbrig_schema`, each step applied in a transaction of its own under a transaction-scoped
//! advisory lock, so that many dbrig processes (on many machines) opening an older schema at
//! once apply each step once: the others wait for the lock, then read the new version.

use std::path::Path;

use tokio_postgres::Client;

use crate::error::StoreError;
use crate::sqlite::SCHEMA_VERSION;

use super::pg_error;

/// The first version a server holds: it is made whole by `0004_initial.sql` (the SQLite
/// file's schema 1 to 4 in one), since no server ever held the older ones.
const FIRST: i64 = 4;

/// Migration `i` (0-based) takes the schema to version `FIRST + i`. Append only: released
/// files are never edited. The last reaches [`SCHEMA_VERSION`], as every backend's does.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0004_initial.sql"),
    include_str!("migrations/0005_provenance.sql"),
];

/// The advisory lock's key: "dbrg" and 1, this database's schema (advisory locks are per
/// database).
const LOCK_KEY: i64 = 0x6462_7267_0000_0001;

/// The tables of the schema: a database holding one of them without `dbrig_schema` belongs
/// to someone else.
const TABLES: &[&str] = &["run", "cell", "trial", "interval_sample"];

pub(crate) async fn migrate(client: &mut Client, path: &Path) -> Result<(), StoreError> {
    const _: () = assert!(FIRST + MIGRATIONS.len() as i64 - 1 == SCHEMA_VERSION);
    let sql = |e| pg_error(path, e);
    loop {
        let tx = client.transaction().await.map_err(sql)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
            .await
            .map_err(sql)?;
        let has_schema: bool = tx
            .query_one("SELECT to_regclass('dbrig_schema') IS NOT NULL", &[])
            .await
            .map_err(sql)?
            .get(0);
        let version: i64 = if has_schema {
            tx.query_opt("SELECT version FROM dbrig_schema", &[])
                .await
                .map_err(sql)?
                .map_or(0, |r| r.get(0))
        } else {
            let tables: Vec<String> = TABLES.iter().map(|t| (*t).to_owned()).collect();
            let foreign: bool = tx
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_tables
                                    WHERE schemaname = current_schema() AND tablename = ANY($1))",
                    &[&tables],
                )
                .await
                .map_err(sql)?
                .get(0);
            if foreign {
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
            return tx.commit().await.map_err(sql);
        }
        let next = version.max(FIRST - 1) + 1;
        let step = async {
            if !has_schema {
                tx.batch_execute("CREATE TABLE dbrig_schema (version bigint NOT NULL)")
                    .await?;
                tx.execute("INSERT INTO dbrig_schema (version) VALUES (0)", &[])
                    .await?;
            }
            tx.batch_execute(MIGRATIONS[(next - FIRST) as usize])
                .await?;
            tx.execute("UPDATE dbrig_schema SET version = $1", &[&next])
                .await?;
            Ok::<_, tokio_postgres::Error>(())
        };
        let applied = match step.await {
            Ok(()) => tx.commit().await,
            Err(e) => Err(e),
        };
        applied.map_err(|e| StoreError::ServerMigration {
            path: path.into(),
            version: next,
            source: Box::new(pg_error(path, e)),
        })?;
    }
}
