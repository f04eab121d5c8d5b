//! What every load's loaders share: the connection a loader opens, and the generator thread
//! that makes its rows while the loader sends the ones before.

use std::sync::{Arc, Mutex, mpsc};

/// Items a generator runs ahead of its loader: with ~1 MiB chunks (or batches of rows) a
/// loader holds at most a few MiB however big the table, so client memory stays flat.
const AHEAD: usize = 2;

/// Rows per batch handed over by [`prefetch_rows`].
const ROW_BATCH: usize = 2048;

/// A loader's connection options: the lean MySQL client, whose bulk loads use MariaDB's binary
/// `COM_STMT_BULK_EXECUTE` (a server without it gets `LOAD DATA LOCAL` from the full client;
/// see `dbrig_driver::Connection::bulk_load`). Other engines ignore `lean`.
pub(crate) fn loader_options(
    connect: &dbrig_driver::ConnectOptions,
) -> dbrig_driver::ConnectOptions {
    dbrig_driver::ConnectOptions {
        lean: true,
        own_thread: None,
        ..connect.clone()
    }
}

/// Rows a producer can write field by field in any engine's typed bulk form (see
/// [`dbrig_driver::FieldWriter`]): TPC-H's parts, OLTP's id slices.
pub(crate) trait TypedRows: Send + 'static {
    /// The rows as chunks of `W`, produced lazily.
    fn chunks<W: dbrig_driver::FieldWriter>(self) -> Box<dyn Iterator<Item = W> + Send>;
}

/// Load `rows` into `table` through the connection's typed bulk format (PostgreSQL's binary
/// `COPY`, MariaDB's bulk command), generated on a thread of their own and counted into
/// `counter` (rows, and bytes as bulk text) as the loader takes them. `None`: the connection
/// has no typed format (MySQL's `LOAD DATA`, SQLite, the mock), the caller loads otherwise.
pub(crate) async fn bulk_load_typed(
    c: &mut dbrig_driver::Connection,
    table: &str,
    columns: Vec<String>,
    counter: crate::progress::RowCounter,
    rows: impl TypedRows,
) -> Option<Result<u64, dbrig_driver::DriverError>> {
    use dbrig_driver::{
        MariaDbBulkChunk, MariaDbBulkRows, PgBinaryChunk, PgBinaryRows, TypedBulkFormat,
    };
    let table = table.to_owned();
    Some(match c.typed_bulk_format()? {
        TypedBulkFormat::PgBinary => {
            let chunks = counted(prefetch(rows.chunks::<PgBinaryChunk>()), counter);
            c.bulk_load_pg_binary(PgBinaryRows {
                table,
                columns,
                chunks: Box::new(chunks.map(|chunk| chunk.buf)),
                frozen: false,
            })
            .await
        }
        TypedBulkFormat::MariaDbBulk => {
            let chunks = counted(prefetch(rows.chunks::<MariaDbBulkChunk>()), counter);
            c.bulk_load_mariadb(MariaDbBulkRows {
                table,
                columns,
                chunks: Box::new(chunks),
            })
            .await
        }
    })
}

/// Typed chunks counted into `counter` (rows, and bytes as bulk text) as the loader takes them.
fn counted<W: dbrig_driver::FieldWriter>(
    chunks: impl Iterator<Item = W> + Send + 'static,
    counter: crate::progress::RowCounter,
) -> impl Iterator<Item = W> + Send + 'static {
    chunks.inspect(move |chunk| {
        counter.add_bytes(chunk.text_bytes());
        counter.add(chunk.rows());
    })
}

/// `items` made on a thread of their own, at most [`AHEAD`] ahead of the consumer (a bounded
/// queue), so generating (tpchgen, the OLTP rows) overlaps sending and the server's work.
///
/// The consumer's `next` blocks until the generator has the item; loaders already call their
/// iterator synchronously inside their task (the generation it replaces was as long).
pub(crate) fn prefetch<T: Send + 'static>(
    items: impl Iterator<Item = T> + Send + 'static,
) -> Box<dyn Iterator<Item = T> + Send + 'static> {
    let (tx, rx) = mpsc::sync_channel(AHEAD);
    // Shared so that, should the system refuse a thread, the loader generates inline instead.
    let slot = Arc::new(Mutex::new(Some(items)));
    let theirs = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("dbrig-generate".into())
        .spawn(move || {
            let items = theirs.lock().unwrap_or_else(|p| p.into_inner()).take();
            for item in items.into_iter().flatten() {
                // The loader stopped (failed or done early): stop generating.
                if tx.send(item).is_err() {
                    break;
                }
            }
        });
    match spawned {
        Ok(_) => Box::new(rx.into_iter()),
        Err(_) => match slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(items) => Box::new(items),
            None => Box::new(rx.into_iter()),
        },
    }
}

/// [`prefetch`] for rows: handed over in batches, so the queue is not paid per row.
pub(crate) fn prefetch_rows<T: Send + 'static>(
    rows: impl Iterator<Item = T> + Send + 'static,
) -> Box<dyn Iterator<Item = T> + Send + 'static> {
    let mut rows = rows;
    let batches = std::iter::from_fn(move || {
        let batch: Vec<T> = rows.by_ref().take(ROW_BATCH).collect();
        (!batch.is_empty()).then_some(batch)
    });
    Box::new(prefetch(batches).flatten())
}

/// The largest load started without forcing it where the target's free space cannot be known
/// (a remote server): 1 TB.
pub const UNCHECKED_LOAD_BOUND: u64 = 1_000_000_000_000;

/// Whether a load of about `estimate` bytes (`what`: "TPC-H SF 10", "pgbench-init at scale
/// 500") may start: refused (unless `force`) when the estimate exceeds the free space of the
/// target's data directory (`space`, where dbrig can see it) or, where it cannot,
/// [`UNCHECKED_LOAD_BOUND`]; `fix` says how to go on. A mistyped size must not fill a disk.
pub fn check_fits(
    what: &str,
    estimate: u64,
    space: Option<(&std::path::Path, u64)>,
    force: bool,
    fix: &str,
) -> Result<(), crate::WorkloadError> {
    let gb = |b: u64| b as f64 / 1e9;
    if force {
        return Ok(());
    }
    match space {
        Some((dir, free)) if estimate > free => Err(crate::WorkloadError::InvalidOptions(format!(
            "{what} needs about {:.1} GB but {} has {:.1} GB free: {fix}",
            gb(estimate),
            dir.display(),
            gb(free)
        ))),
        None if estimate > UNCHECKED_LOAD_BOUND => {
            Err(crate::WorkloadError::InvalidOptions(format!(
                "{what} needs about {:.0} GB and the target's free space cannot be checked from here: {fix}",
                gb(estimate)
            )))
        }
        _ => Ok(()),
    }
}

/// Around a step's DDL on `tables`: the markers say dbrig's DDL runs
/// ([`crate::registry::ddl_begins`]), then what they are after it
/// ([`crate::registry::refresh_marker`]). TPC-H's and TPC-C's keys and indexes.
pub(crate) async fn mark_ddl(
    conn: &mut dbrig_driver::Connection,
    tables: &[&str],
    running: bool,
) -> Result<(), crate::WorkloadError> {
    for t in tables {
        match running {
            true => crate::registry::ddl_begins(conn, t).await?,
            false => crate::registry::refresh_marker(conn, t).await?,
        }
    }
    Ok(())
}

/// Drop those of `tables` that exist, each proven dbrig's (`kind` in the registry, its very
/// marker) before any is dropped; (dropped, absent), in `tables`' order reversed.
pub(crate) async fn drop_registered(
    target: &dbrig_driver::Target,
    connect: &dbrig_driver::ConnectOptions,
    tables: &[&str],
    kind: &str,
) -> Result<(Vec<String>, Vec<String>), crate::WorkloadError> {
    use crate::registry;
    let mut conn = dbrig_driver::Connection::connect(target, connect).await?;
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for t in tables.iter().rev() {
        match conn.table_exists(t).await? {
            true => present.push((*t).to_owned()),
            false => absent.push((*t).to_owned()),
        }
    }
    // Refuse before dropping anything.
    for t in &present {
        registry::verify(&mut conn, t, kind, target).await?;
    }
    for t in &present {
        registry::drop_table(&mut conn, t).await?;
    }
    registry::drop_if_empty(&mut conn).await?;
    conn.close().await;
    Ok((present, absent))
}

/// Bytes `tables` take by the dialect's `table_size` section: MariaDB data_length +
/// index_length, PostgreSQL pg_total_relation_size (each a table's, bound by name), SQLite
/// the database file (one query, no binds).
pub(crate) async fn tables_size(
    conn: &mut dbrig_driver::Connection,
    sql: &crate::sql::SqlSet,
    tables: &[&str],
) -> Result<u64, crate::WorkloadError> {
    use dbrig_core::Value;
    let stmt = sql.render("table_size", &[]);
    let as_u64 = |rows: Vec<Vec<Value>>| {
        rows.first()
            .and_then(|r| r.first())
            .map(|v| match v {
                Value::Int(i) => *i as u64,
                Value::Float(f) => *f as u64,
                Value::Text(s) => s.trim().parse::<f64>().unwrap_or(0.0) as u64,
                Value::Null => 0,
            })
            .unwrap_or(0)
    };
    if conn.dialect() == dbrig_driver::Dialect::Sqlite {
        return Ok(as_u64(conn.query(&stmt, &[]).await?));
    }
    let mut total = 0;
    for t in tables {
        total += as_u64(conn.query(&stmt, &[Value::Text((*t).into())]).await?);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetched_items_arrive_in_order_and_complete() {
        let got: Vec<u32> = prefetch_rows(0..10_000u32).collect();
        assert_eq!(got, (0..10_000).collect::<Vec<_>>());
        assert_eq!(prefetch(std::iter::empty::<u8>()).count(), 0);
        // A consumer that stops early lets the generator stop too.
        assert_eq!(prefetch(0..u64::MAX).take(3).collect::<Vec<_>>(), [0, 1, 2]);
    }
}
