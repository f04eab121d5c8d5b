//! Build the TPC-C database: create the nine tables (registered, with their creation
//! markers), load every warehouse's rows through the engine's bulk path with warehouses in
//! parallel (PostgreSQL's binary `COPY`, MariaDB's bulk command, SQLite's one transaction per
//! table; `LOAD DATA` where MySQL has no bulk command), then the primary keys (PostgreSQL and
//! SQLite; MariaDB's are declared with the tables), HammerDB's two secondary indexes and
//! statistics, each step timed; the consistency check last. Tables are marked ready only once
//! all of it is done, so a half-built database is never measured.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Dialect, FieldWriter, Target};

use super::check::{CheckReport, check_conditions};
use super::data::{Population, Scale, Table, ValueChunk};
use super::{REGISTRY_KIND, schema_sql};
use crate::error::WorkloadError;
use crate::loading::{TypedRows, bulk_load_typed, loader_options, prefetch_rows};
use crate::progress::{Progress, RowMeter};
use crate::registry;
use crate::sql::SqlSet;
use crate::tasks::join_tasks;
use crate::tpch::load::{Step, side_by_side};

/// What to build.
#[derive(Debug, Clone)]
pub struct TpccLoadOptions {
    pub warehouses: u32,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    pub parallel: u32,
    /// The seed every random stream of the population derives from.
    pub seed: u64,
    /// Per-warehouse sizes: [`Scale::SPEC`] but in tests.
    pub scale: Scale,
    /// Run the consistency check after the load (a failure fails the load).
    pub check: bool,
}

/// What the load did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TpccLoadReport {
    pub warehouses: u32,
    pub parallel: u32,
    pub steps: Vec<Step>,
    pub rows: Vec<(String, u64)>,
    pub size_bytes: u64,
    #[serde(rename = "total_s")]
    pub total_seconds: f64,
    pub figures: dbrig_core::results::LoadFigures,
    /// The consistency check after the load, when asked for.
    pub check: Option<CheckReport>,
}

/// What cleanup did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TpccCleanupReport {
    pub dropped: Vec<String>,
    pub absent: Vec<String>,
}

/// The data options recorded in the registry with each table: what a run needs to know of
/// the load (the seed gives back the load's NURand constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LoadedData {
    pub warehouses: u32,
    pub seed: u64,
    pub scale: Scale,
}

/// `t`'s CREATE TABLE, with its primary key declared in it when `keyed`.
fn create_sql(sql: &SqlSet, t: Table, keyed: bool) -> String {
    let key = match (keyed, t.primary_key()) {
        (true, Some(k)) => format!(",\n  PRIMARY KEY ({k})"),
        _ => String::new(),
    };
    sql.render(
        &format!("create_{}", t.name()),
        &[
            ("timestamp", sql.template("type_timestamp")),
            ("suffix", sql.template("type_suffix")),
            ("key", &key),
        ],
    )
}

/// Refuse a load onto TPC-C tables that exist: they are dropped only by `dbrig cleanup tpcc`.
pub async fn refuse_existing(conn: &mut Connection, target: &Target) -> Result<(), WorkloadError> {
    for t in Table::ALL {
        if conn.table_exists(t.name()).await? {
            return Err(WorkloadError::TableExists {
                table: t.name().to_owned(),
                target: target.to_string(),
                workload: super::NAME.to_owned(),
            });
        }
    }
    Ok(())
}

/// What the TPC-C tables on `conn` were loaded with, refusing tables that are missing or
/// half-built.
pub async fn loaded_data(
    conn: &mut Connection,
    target: &Target,
) -> Result<LoadedData, WorkloadError> {
    let mut data = None;
    for t in Table::ALL {
        let missing = || WorkloadError::MissingTable {
            table: t.name().to_owned(),
            target: target.to_string(),
            workload: super::NAME.to_owned(),
        };
        if !conn.table_exists(t.name()).await? {
            return Err(missing());
        }
        let entry = registry::lookup(conn, t.name())
            .await?
            .ok_or_else(missing)?;
        if entry.state != "ready" {
            return Err(WorkloadError::HalfPrepared {
                table: t.name().to_owned(),
                target: target.to_string(),
                workload: super::NAME.to_owned(),
            });
        }
        if data.is_none() {
            data = serde_json::from_str::<LoadedData>(&entry.data).ok();
        }
    }
    data.ok_or_else(|| {
        WorkloadError::InvalidOptions(format!(
            "the TPC-C tables on {target} do not say how they were loaded (no data options in dbrig_objects): run `dbrig cleanup tpcc` and `dbrig prepare tpcc` again"
        ))
    })
}

/// Around a step's DDL on every table (see [`crate::loading::mark_ddl`]).
async fn mark_ddl(conn: &mut Connection, running: bool) -> Result<(), WorkloadError> {
    crate::loading::mark_ddl(conn, &Table::ALL.map(Table::name), running).await
}

/// The loaders' jobs, biggest first so the last are small and loaders finish together: each
/// per-warehouse table of each warehouse, and ITEM once.
fn jobs(warehouses: u32) -> Vec<(Table, u32)> {
    const BY_SIZE: [Table; 9] = [
        Table::Stock,
        Table::OrderLine,
        Table::Customer,
        Table::Item,
        Table::Orders,
        Table::History,
        Table::NewOrder,
        Table::District,
        Table::Warehouse,
    ];
    let mut jobs = Vec::new();
    for t in BY_SIZE {
        match t.per_warehouse() {
            true => jobs.extend((1..=warehouses).map(|w| (t, w))),
            false => jobs.push((t, 0)),
        }
    }
    jobs
}

/// Build the database.
pub async fn load(
    target: &Target,
    connect: &ConnectOptions,
    options: &TpccLoadOptions,
    progress: &dyn Progress,
) -> Result<TpccLoadReport, WorkloadError> {
    if options.warehouses == 0 {
        return Err(WorkloadError::InvalidOptions(
            "tpcc: --warehouses must be at least 1".into(),
        ));
    }
    let all_started = Instant::now();
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    let sql = schema_sql(dialect);
    refuse_existing(&mut conn, target).await?;
    let mut steps = Vec::new();
    let mut timed = |name: &str, started: Instant| {
        let seconds = started.elapsed().as_secs_f64();
        progress.note(&format!("{name}: {seconds:.3} s"));
        steps.push(Step {
            name: name.to_owned(),
            seconds,
        });
    };

    let started = Instant::now();
    registry::ensure(&mut conn).await?;
    let loaded = LoadedData {
        warehouses: options.warehouses,
        seed: options.seed,
        scale: options.scale,
    };
    let data = serde_json::to_string(&loaded).expect("plain data");
    // InnoDB clusters by the primary key and the rows come in key order: declared with the
    // table, as HammerDB does (a key added later rebuilds the table and changes its id).
    let keyed = dialect == Dialect::Mysql;
    let creates: Vec<(&str, String)> = Table::ALL
        .iter()
        .map(|&t| (t.name(), create_sql(sql, t, keyed)))
        .collect();
    registry::create_all(&mut conn, REGISTRY_KIND, &creates, &data).await?;
    timed("create tables", started);

    let parallel = match (dialect, options.parallel) {
        (Dialect::Sqlite, _) => 1,
        (_, 0) => std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2)
            .max(2),
        (_, n) => n,
    };
    let pop = Population {
        seed: options.seed,
        scale: options.scale,
        load_time: load_time(),
    };
    let mut queue = jobs(options.warehouses);
    queue.reverse();
    let meter = Arc::new(RowMeter::new(Table::ALL.map(|t| {
        (
            t.name().to_owned(),
            t.rows(options.warehouses, options.scale),
        )
    })));
    let started = Instant::now();
    let queue = Arc::new(Mutex::new(queue));
    let counts = Arc::new(Mutex::new(
        std::collections::BTreeMap::<&'static str, u64>::new(),
    ));
    let mut handles = Vec::new();
    for _ in 0..parallel {
        let queue = Arc::clone(&queue);
        let counts = Arc::clone(&counts);
        let meter = Arc::clone(&meter);
        let target = target.clone();
        let connect = loader_options(connect);
        handles.push(tokio::spawn(async move {
            let mut c = Connection::connect(&target, &connect).await?;
            loop {
                let job = queue.lock().expect("job queue").pop();
                let Some((table, w)) = job else { break };
                let columns = || table.columns().iter().map(|s| (*s).to_owned()).collect();
                let counter = meter.counter(table.name());
                let part = TpccPart { table, pop, w };
                let n =
                    match bulk_load_typed(&mut c, table.name(), columns(), counter.clone(), part)
                        .await
                    {
                        Some(loaded) => loaded?,
                        // SQLite binds the values; MySQL without the bulk command takes them as
                        // LOAD DATA's text.
                        None => {
                            let rows = table.chunks::<ValueChunk>(&pop, w).flat_map(|c| c.rows);
                            c.bulk_load(BulkLoad {
                                table: table.name().to_owned(),
                                columns: columns(),
                                rows: Box::new(counter.count(prefetch_rows(rows))),
                            })
                            .await?
                        }
                    };
                *counts
                    .lock()
                    .expect("counts")
                    .entry(table.name())
                    .or_default() += n;
            }
            let path = c.mysql_bulk_path();
            c.close().await;
            Ok::<_, WorkloadError>(path)
        }));
    }
    let paths = meter.watch(progress, join_tasks(handles, "loader")).await?;
    let path = paths.into_iter().flatten().next();
    let counts = counts.lock().expect("counts").clone();
    let total: u64 = counts.values().sum();
    let figures = meter.figures();
    progress.note(&format!(
        "loaded {total} rows of {} warehouse(s) with {parallel} loader(s) ({:.0} rows/s{})",
        options.warehouses,
        total as f64 / started.elapsed().as_secs_f64().max(1e-9),
        path.map(|p| format!(", {p}")).unwrap_or_default()
    ));
    for line in figures.lines() {
        progress.note(&format!("  {line}"));
    }
    timed("load", started);

    if !keyed {
        let started = Instant::now();
        let keys = Table::ALL
            .iter()
            .filter_map(|t| {
                t.primary_key()
                    .map(|k| sql.render("primary_key", &[("table", t.name()), ("columns", k)]))
            })
            .collect();
        mark_ddl(&mut conn, true).await?;
        side_by_side(target, connect, parallel, keys).await?;
        mark_ddl(&mut conn, false).await?;
        timed("primary keys", started);
    }
    let started = Instant::now();
    let indexes = sql
        .render("indexes", &[])
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    mark_ddl(&mut conn, true).await?;
    side_by_side(target, connect, parallel, indexes).await?;
    mark_ddl(&mut conn, false).await?;
    timed("indexes", started);
    let started = Instant::now();
    let analyze = Table::ALL
        .iter()
        .map(|t| sql.render("analyze", &[("table", t.name())]))
        .collect();
    side_by_side(target, connect, parallel, analyze).await?;
    timed("analyze", started);

    let check = match options.check {
        true => {
            let started = Instant::now();
            let report = check_conditions(&mut conn, Some(options.scale)).await?;
            timed("consistency check", started);
            if let Some(f) = report.failures.first() {
                // Left `loading`: a database that fails its own load's check is never measured.
                return Err(WorkloadError::InvalidOptions(format!(
                    "tpcc: the loaded database fails its check: {f}"
                )));
            }
            progress.note(&format!(
                "consistency conditions {} hold",
                report
                    .checked
                    .iter()
                    .map(u8::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            Some(report)
        }
        false => None,
    };
    registry::mark_all_ready(&mut conn, &Table::ALL.map(Table::name)).await?;
    let size_bytes = size_on_disk(&mut conn).await?;
    conn.close().await;
    let rows = Table::ALL
        .iter()
        .map(|t| {
            (
                t.name().to_owned(),
                counts.get(t.name()).copied().unwrap_or(0),
            )
        })
        .collect();
    Ok(TpccLoadReport {
        warehouses: options.warehouses,
        parallel,
        steps,
        rows,
        size_bytes,
        total_seconds: all_started.elapsed().as_secs_f64(),
        figures,
        check,
    })
}

/// The load's date and time for every C_SINCE, H_DATE, O_ENTRY_D: now, to the second.
fn load_time() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Bytes the nine tables take (as the TPC-H load measures them).
pub async fn size_on_disk(conn: &mut Connection) -> Result<u64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    crate::loading::tables_size(conn, sql, &Table::ALL.map(Table::name)).await
}

/// Drop the TPC-C tables dbrig created (refusing, before dropping anything, tables that are
/// not registered or not the very table dbrig made).
pub async fn cleanup(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<TpccCleanupReport, WorkloadError> {
    let (dropped, absent) = crate::loading::drop_registered(
        target,
        connect,
        &Table::ALL.map(Table::name),
        REGISTRY_KIND,
    )
    .await?;
    Ok(TpccCleanupReport { dropped, absent })
}

/// One warehouse's rows of one table (ITEM's all), as typed rows.
struct TpccPart {
    table: Table,
    pop: Population,
    w: u32,
}

impl TypedRows for TpccPart {
    fn chunks<W: FieldWriter>(self) -> Box<dyn Iterator<Item = W> + Send> {
        self.table.chunks(&self.pop, self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_of_every_warehouse_is_one_job_biggest_first() {
        let j = jobs(3);
        assert_eq!(j.len(), 8 * 3 + 1);
        assert_eq!(j[0], (Table::Stock, 1));
        assert_eq!(j.iter().filter(|(t, _)| *t == Table::Item).count(), 1);
        for t in Table::ALL.iter().filter(|t| t.per_warehouse()) {
            let mut ws: Vec<u32> = j.iter().filter(|(x, _)| x == t).map(|(_, w)| *w).collect();
            ws.sort();
            assert_eq!(ws, [1, 2, 3], "{}", t.name());
        }
    }

    #[test]
    fn only_history_goes_without_a_key() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let sql = schema_sql(d);
            for t in Table::ALL {
                let keyed = create_sql(sql, t, true);
                assert_eq!(
                    keyed.contains("PRIMARY KEY"),
                    t != Table::History,
                    "{}",
                    t.name()
                );
                assert!(!create_sql(sql, t, false).contains("PRIMARY KEY"));
                assert!(!keyed.contains('{'), "{keyed}");
                // The CREATE lists the columns the rows are written in, in order.
                let mut at = 0;
                for c in t.columns() {
                    let found = keyed[at..]
                        .find(&format!("  {c} "))
                        .unwrap_or_else(|| panic!("{}: column {c} out of order", t.name()));
                    at += found;
                }
            }
        }
    }
}
