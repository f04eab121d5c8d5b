//! `prepare` and `cleanup` of the OLTP tables.
//!
//! prepare loads through each engine's bulk path, in parallel even within one table (the id
//! range is split into slices, each loaded by its own connection), then builds the secondary
//! index. Every table dbrig creates is recorded in the registry (`crate::registry`) with its
//! creation marker, and marked ready only after its last index: `cleanup` drops only tables
//! whose marker is unchanged (tables that sysbench, or anybody else, created — even under a
//! name dbrig once used — are refused with a clear error), and `run` refuses data an
//! interrupted prepare left or prepared with other options.

use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::results::LoadFigures;
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Dialect, FieldWriter, Target};
use rand::Rng;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::{Oltp, digits, sql_for, table_name};
use crate::error::WorkloadError;
use crate::loading::{TypedRows, bulk_load_typed, loader_options, prefetch_rows};
use crate::progress::{Progress, RowMeter};
use crate::registry;
use crate::tasks::join_tasks;

/// What prepare did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PrepareReport {
    pub tables: Vec<String>,
    pub rows: u64,
    pub load_s: f64,
    pub index_s: f64,
    pub parallel: u32,
    /// Rows and bytes per table and in total, with their seconds (rows/s, MB/s).
    pub figures: LoadFigures,
}

impl PrepareReport {
    pub fn rows_per_s(&self) -> f64 {
        if self.load_s > 0.0 {
            self.rows as f64 / self.load_s
        } else {
            0.0
        }
    }
}

/// What cleanup did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CleanupReport {
    pub dropped: Vec<String>,
    pub absent: Vec<String>,
}

const REGISTRY_KIND: &str = "oltp_table";

impl Oltp {
    /// The tables prepare creates (bulk_insert: one per client).
    fn tables_created(&self, threads: u32) -> Vec<String> {
        if self.kind.is_bulk() {
            (1..=threads).map(table_name).collect()
        } else {
            (1..=self.options.tables).map(table_name).collect()
        }
    }

    /// Refuse to prepare onto tables that exist (sysbench's rule): they are dropped only by
    /// `dbrig cleanup`, which proves them dbrig's first.
    pub async fn refuse_existing(
        &self,
        conn: &mut Connection,
        target: &Target,
        threads: u32,
    ) -> Result<(), WorkloadError> {
        for t in &self.tables_created(threads) {
            if conn.table_exists(t).await? {
                return Err(WorkloadError::TableExists {
                    table: t.clone(),
                    target: target.to_string(),
                    workload: self.kind.name().into(),
                });
            }
        }
        Ok(())
    }

    /// Create and load the tables. `threads` is the client count the run will use (bulk_insert
    /// creates one table per client); `seed` makes the data reproducible.
    pub async fn prepare(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<PrepareReport, WorkloadError> {
        let mut conn = Connection::connect(target, connect).await?;
        let dialect = conn.dialect();
        let sql = sql_for(dialect);
        let o = &self.options;
        let tables = self.tables_created(threads);
        if dialect == Dialect::Mysql && !matches!(target, Target::Mock { .. }) {
            let engine = o.mysql_storage_engine.sql_name();
            let ok = conn
                .query(
                    sql.template("engine_available"),
                    &[Value::Text(engine.into())],
                )
                .await?;
            if ok.is_empty() {
                return Err(WorkloadError::EngineUnavailable {
                    engine: engine.into(),
                    target: target.to_string(),
                });
            }
        }
        // Refuse before creating anything, so a half-prepared database is never left behind.
        self.refuse_existing(&mut conn, target, threads).await?;
        registry::ensure(&mut conn).await?;
        let engine = o.mysql_storage_engine.sql_name();
        let create = if self.kind.is_bulk() {
            "create_bulk_table"
        } else {
            "create_table"
        };
        let data = self.data_text();
        let creates: Vec<(&str, String)> = tables
            .iter()
            .map(|t| {
                let create_sql = sql.render(create, &[("table", t), ("engine", engine)]);
                (t.as_str(), create_sql)
            })
            .collect();
        registry::create_all(&mut conn, REGISTRY_KIND, &creates, &data).await?;
        for t in &tables {
            progress.note(&format!("created table {t}"));
        }
        if self.kind.is_bulk() {
            registry::mark_all_ready(&mut conn, &tables).await?;
            conn.close().await;
            return Ok(PrepareReport {
                tables,
                rows: 0,
                load_s: 0.0,
                index_s: 0.0,
                parallel: 1,
                figures: LoadFigures::default(),
            });
        }

        // Split every table into id slices; run the slices on `parallel` connections.
        let parallel = match (dialect, o.load_parallel) {
            // SQLite has one writer at a time: parallel loaders would only wait on each other.
            (Dialect::Sqlite, _) => 1,
            // One loader per table at least (the server loads tables concurrently even on few
            // CPUs), one per CPU when that is more.
            (_, 0) => {
                let cpus = std::thread::available_parallelism()
                    .map(|n| n.get() as u32)
                    .unwrap_or(2);
                cpus.max(tables.len() as u32).clamp(2, 16)
            }
            (_, n) => n,
        };
        let slices_per_table = (parallel as u64).div_ceil(tables.len() as u64).max(1);
        let mut jobs = Vec::new();
        for (ti, t) in tables.iter().enumerate() {
            let per = o.table_size.div_ceil(slices_per_table);
            for s in 0..slices_per_table {
                let first = s * per + 1;
                let last = ((s + 1) * per).min(o.table_size);
                if first <= last {
                    jobs.push((ti, t.clone(), first, last, seed ^ ((ti as u64) << 32 | s)));
                }
            }
        }
        let meter = std::sync::Arc::new(RowMeter::new(
            tables.iter().map(|t| (t.clone(), o.table_size)),
        ));
        // Each table's secondary index is built as soon as its last slice is in, by the loader
        // that loaded it, while the other loaders go on (as the server's own INSERT ... SELECT
        // then ALTER per session would): no CPU waits for the slowest table before indexing
        // starts. An index build is mostly one server thread's work, so the tables' builds
        // run side by side the way their loads did.
        // Slices still to load, by table number.
        let mut left = vec![0usize; tables.len()];
        for (ti, ..) in &jobs {
            left[*ti] += 1;
        }
        let slices_left = std::sync::Arc::new(std::sync::Mutex::new(left));
        let last_rows_at = std::sync::Arc::new(std::sync::Mutex::new(None::<Instant>));
        let started = Instant::now();
        let queue = std::sync::Arc::new(std::sync::Mutex::new(jobs));
        let mut handles = Vec::new();
        for _ in 0..parallel {
            let queue = std::sync::Arc::clone(&queue);
            let meter = std::sync::Arc::clone(&meter);
            let slices_left = std::sync::Arc::clone(&slices_left);
            let last_rows_at = std::sync::Arc::clone(&last_rows_at);
            let target = target.clone();
            let connect = loader_options(connect);
            let table_size = o.table_size as i64;
            let create_secondary = o.create_secondary;
            handles.push(tokio::spawn(async move {
                let mut c = Connection::connect(&target, &connect).await?;
                let mut rows = 0u64;
                loop {
                    let job = queue.lock().expect("job queue").pop();
                    let Some((ti, table, first, last, job_seed)) = job else {
                        break;
                    };
                    let counter = meter.counter(&table);
                    // Typed rows where the engine has a typed bulk format (PostgreSQL's
                    // binary COPY, MariaDB's bulk command), values elsewhere; made on a
                    // generator thread while this loader sends the rows before.
                    let slice = Slice {
                        first,
                        last,
                        table_size,
                        seed: job_seed,
                    };
                    rows += match bulk_load_typed(&mut c, &table, columns(), counter.clone(), slice)
                        .await
                    {
                        Some(loaded) => loaded?,
                        None => {
                            let mut load = rows_for(&table, first, last, table_size, job_seed);
                            load.rows = Box::new(counter.count(prefetch_rows(load.rows)));
                            c.bulk_load(load).await?
                        }
                    };
                    let table_loaded = {
                        let mut left = slices_left.lock().expect("slices left");
                        left[ti] -= 1;
                        left[ti] == 0
                    };
                    if !table_loaded {
                        continue;
                    }
                    {
                        let now = Instant::now();
                        let mut at = last_rows_at.lock().expect("last rows");
                        *at = Some(at.map_or(now, |t| t.max(now)));
                    }
                    if create_secondary {
                        registry::ddl_begins(&mut c, &table).await?;
                        let index = format!("k_{}", ti + 1);
                        c.execute_text(
                            &sql.render("create_index", &[("table", &table), ("index", &index)]),
                        )
                        .await?;
                    }
                    c.query(&sql.render("after_load", &[("table", &table)]), &[])
                        .await?;
                    if sql.has("analyze") {
                        c.execute_text(&sql.render("analyze", &[("table", &table)]))
                            .await?;
                    }
                    if create_secondary {
                        registry::refresh_marker(&mut c, &table).await?;
                    }
                }
                // Read after the load: a lean MySQL connection may have switched paths.
                let path = c.mysql_bulk_path();
                c.close().await;
                Ok::<_, WorkloadError>((rows, path))
            }));
        }
        let done = meter.watch(progress, join_tasks(handles, "loader")).await?;
        let finished = Instant::now();
        let rows: u64 = done.iter().map(|(r, _)| r).sum();
        let path = done.iter().find_map(|(_, p)| *p);
        // The load step ends with the last row in; the index step is what follows it (the
        // indexes of tables loaded earlier were built meanwhile).
        let rows_in = last_rows_at.lock().expect("last rows").unwrap_or(finished);
        let load_s = (rows_in - started).as_secs_f64();
        let index_s = (finished - rows_in).as_secs_f64();
        let figures = meter.figures();
        if dialect == Dialect::Sqlite {
            progress.note(&format!(
                "SQLite load pragmas: {}",
                dbrig_driver::SQLITE_LOAD_PRAGMAS
            ));
        }
        progress.note(&format!(
            "loaded {rows} rows in {load_s:.2} s ({:.0} rows/s, {parallel} loaders{})",
            rows as f64 / load_s.max(1e-9),
            path.map(|p| format!(", {p}")).unwrap_or_default()
        ));
        for line in figures.lines() {
            progress.note(&format!("  {line}"));
        }
        // Last: only now is every row and index there.
        registry::mark_all_ready(&mut conn, &tables).await?;
        if o.create_secondary {
            progress.note(&format!(
                "created secondary indexes in {index_s:.2} s after the last row (each table's as soon as its rows were in)"
            ));
        }
        conn.close().await;
        Ok(PrepareReport {
            tables,
            rows,
            load_s,
            index_s,
            parallel,
            figures,
        })
    }

    /// Drop the workload's tables, but only those dbrig created: registered, and still the
    /// very table prepare made (its creation marker unchanged). Nothing is dropped unless
    /// every present table passes.
    pub async fn cleanup(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
    ) -> Result<CleanupReport, WorkloadError> {
        let mut conn = Connection::connect(target, connect).await?;
        let mut present = Vec::new();
        let mut absent = Vec::new();
        for t in self.tables_created(threads) {
            if conn.table_exists(&t).await? {
                present.push(t)
            } else {
                absent.push(t)
            }
        }
        // Refuse before dropping anything.
        for t in &present {
            registry::verify(&mut conn, t, REGISTRY_KIND, target).await?;
        }
        for t in &present {
            registry::drop_table(&mut conn, t).await?;
        }
        registry::drop_if_empty(&mut conn).await?;
        conn.close().await;
        Ok(CleanupReport {
            dropped: present,
            absent,
        })
    }

    /// The data options a table is prepared with, as recorded in the registry.
    fn data_text(&self) -> String {
        let o = &self.options;
        serde_json::json!({
            "table_size": o.table_size,
            "create_secondary": o.create_secondary,
            "auto_inc": o.auto_inc,
            "engine": o.mysql_storage_engine.sql_name(),
        })
        .to_string()
    }

    /// Check that the tables a run needs exist and hold what the options say: completely
    /// prepared (not left by an interrupted prepare) with the same table size and secondary
    /// index; for tables dbrig did not prepare (sysbench's), that the ids reach the table
    /// size. A problem is an error, or with `allow_mismatch` a warning returned to be said.
    pub async fn check_ready(
        &self,
        conn: &mut Connection,
        threads: u32,
        allow_mismatch: bool,
    ) -> Result<Vec<String>, WorkloadError> {
        let target = conn.target().to_string();
        let workload = self.kind.name().to_owned();
        let mut problems = Vec::new();
        for t in self.tables_used(threads) {
            if !conn.table_exists(&t).await? {
                return Err(WorkloadError::MissingTable {
                    table: t,
                    target,
                    workload,
                });
            }
            if self.kind.is_bulk() || matches!(conn.target(), Target::Mock { .. }) {
                continue;
            }
            let entry = registry::lookup(conn, &t).await?;
            match entry {
                Some(e) if e.state == "loading" => {
                    if !allow_mismatch {
                        return Err(WorkloadError::HalfPrepared {
                            table: t,
                            target,
                            workload,
                        });
                    }
                    problems.push(format!(
                        "{t} is half-prepared (a prepare was interrupted before it finished)"
                    ));
                }
                Some(e) if e.state == "ready" => {
                    let data: serde_json::Value = serde_json::from_str(&e.data).unwrap_or_default();
                    let o = &self.options;
                    if let Some(size) = data["table_size"].as_u64()
                        && size != o.table_size
                    {
                        problems.push(format!(
                            "{t} was prepared with --table-size {size}, the run asks for {}",
                            o.table_size
                        ));
                    }
                    if let Some(secondary) = data["create_secondary"].as_bool()
                        && secondary != o.create_secondary
                    {
                        problems.push(format!(
                            "{t} was prepared with --create-secondary {secondary}, the run asks for {}",
                            o.create_secondary
                        ));
                    }
                }
                // Not prepared by this dbrig (sysbench's tables, an older dbrig's): the ids
                // must at least reach the table size the keys are drawn from.
                _ => {
                    let sql = sql_for(conn.dialect());
                    let max = conn
                        .query(&sql.render("max_id", &[("table", &t)]), &[])
                        .await?
                        .first()
                        .and_then(|r| r.first())
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    if (max as u64) < self.options.table_size {
                        problems.push(format!(
                            "{t} holds ids up to {max}, the run asks for --table-size {}",
                            self.options.table_size
                        ));
                    }
                }
            }
        }
        if let Some(first) = problems.first()
            && !allow_mismatch
        {
            return Err(WorkloadError::DataMismatch {
                target,
                why: first.clone(),
                workload,
            });
        }
        Ok(problems
            .into_iter()
            .map(|p| format!("warning: measuring data that does not match the options (--allow-data-mismatch): {p}"))
            .collect())
    }
}

/// The columns prepare loads.
fn columns() -> Vec<String> {
    ["id", "k", "c", "pad"].map(String::from).to_vec()
}

/// The rows of ids `first..=last`: k uniform in [1, table_size], c and pad as sysbench makes
/// them. Generated lazily, so a slice of any size streams through constant memory.
fn rows_for(table: &str, first: u64, last: u64, table_size: i64, seed: u64) -> BulkLoad {
    let mut rng = SmallRng::seed_from_u64(seed);
    let rows = (first..=last).map(move |id| {
        vec![
            Value::Int(id as i64),
            Value::Int(rng.random_range(1..=table_size)),
            Value::Text(digits(&mut rng, 10)),
            Value::Text(digits(&mut rng, 5)),
        ]
    });
    BulkLoad {
        table: table.to_owned(),
        columns: columns(),
        rows: Box::new(rows),
    }
}

/// One loader's slice of a table: the rows of [`rows_for`] (the same random draws in the same
/// order), as typed rows.
struct Slice {
    first: u64,
    last: u64,
    table_size: i64,
    seed: u64,
}

impl TypedRows for Slice {
    fn chunks<W: FieldWriter>(self) -> Box<dyn Iterator<Item = W> + Send> {
        let Slice {
            first,
            last,
            table_size,
            seed,
        } = self;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut next = first;
        Box::new(std::iter::from_fn(move || {
            if next > last {
                return None;
            }
            let mut chunk = W::with_capacity((1 << 20) + 4096);
            while next <= last && chunk.len() < 1 << 20 {
                chunk.row(4);
                // INTEGER columns (SERIAL on PostgreSQL): ids and k fit, as sysbench's do.
                chunk.int4(next as i32);
                chunk.int4(rng.random_range(1..=table_size) as i32);
                chunk.text(&digits(&mut rng, 10));
                chunk.text(&digits(&mut rng, 5));
                next += 1;
            }
            Some(chunk)
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::Workload;
    use crate::oltp::OltpOptions;
    use crate::progress::Heard;

    use super::*;

    /// A slice's typed rows are `rows_for`'s rows: the same ids, k, c and pad, read back from
    /// PostgreSQL's binary tuples (int4, int4, text, text).
    #[test]
    fn typed_slices_hold_the_values_rows() {
        use dbrig_driver::PgBinaryChunk;
        let values: Vec<Vec<Value>> = rows_for("t", 5, 3_000, 10_000, 42).rows.collect();
        let mut typed = Vec::new();
        let slice = Slice {
            first: 5,
            last: 3_000,
            table_size: 10_000,
            seed: 42,
        };
        for chunk in slice.chunks::<PgBinaryChunk>() {
            let mut b: &[u8] = &chunk.buf;
            let mut take = |n: usize| {
                let (s, rest) = b.split_at(n);
                b = rest;
                s
            };
            for _ in 0..chunk.rows() {
                assert_eq!(take(2), 4i16.to_be_bytes());
                let mut row = Vec::new();
                for field in 0..4 {
                    let len = i32::from_be_bytes(take(4).try_into().unwrap()) as usize;
                    let bytes = take(len);
                    row.push(if field < 2 {
                        Value::Int(i32::from_be_bytes(bytes.try_into().unwrap()).into())
                    } else {
                        Value::Text(String::from_utf8(bytes.to_vec()).unwrap())
                    });
                }
                typed.push(row);
            }
        }
        assert_eq!(typed, values);
    }

    /// prepare reports each table's rows against its size, and ends with the exact counts
    /// (SQLite: its loader runs on the driver's own thread).
    #[tokio::test]
    async fn prepare_reports_rows_per_table() {
        let Workload::Oltp(oltp) = Workload::from_name(
            "oltp_read_only",
            OltpOptions {
                tables: 3,
                table_size: 10_000,
                ..OltpOptions::default()
            },
        )
        .unwrap() else {
            unreachable!("oltp_read_only is an OLTP workload")
        };
        let heard = Heard::default();
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("prepare.db").display());
        let report = oltp
            .prepare(
                &Target::parse(&url).unwrap(),
                &ConnectOptions::default(),
                1,
                7,
                &heard,
            )
            .await
            .unwrap();
        assert_eq!(report.rows, 30_000);
        let rows = heard.rows.into_inner().unwrap();
        let (last, finished) = rows.last().expect("rows reported");
        assert!(finished);
        assert_eq!(rows.iter().filter(|(_, f)| *f).count(), 1);
        assert_eq!(
            last.iter()
                .map(|t| (t.table.as_str(), t.loaded, t.planned))
                .collect::<Vec<_>>(),
            [
                ("sbtest1", 10_000, 10_000),
                ("sbtest2", 10_000, 10_000),
                ("sbtest3", 10_000, 10_000)
            ]
        );
        let lines = heard.lines.into_inner().unwrap();
        assert!(
            lines.iter().any(|l| l.starts_with("loaded 30000 rows")),
            "{lines:?}"
        );
    }
}
