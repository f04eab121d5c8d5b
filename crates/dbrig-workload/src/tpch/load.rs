//! The load test: create the eight tables, stream the generated rows in through each engine's
//! bulk path (parallel by parts), create primary keys (before or after the load), secondary
//! indexes and statistics, each step timed, then report the size on disk. Tables are recorded
//! in the registry (`crate::registry`, like the OLTP tables) with their creation markers, and
//! marked ready last, so `cleanup` drops only dbrig's own and a half-done load is seen as one.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_driver::{BulkLoad, BulkText, ConnectOptions, Connection, Dialect, FieldWriter, Target};

use super::data::{Table, TextChunks};
use super::{REGISTRY_KIND, ScaleFactor, schema_sql};
use crate::error::WorkloadError;
use crate::loading::{TypedRows, bulk_load_typed, loader_options, prefetch, prefetch_rows};
use crate::progress::{Progress, RowCounter, RowMeter};
use crate::registry;
use crate::sql::SqlSet;
use crate::tasks::join_tasks;

/// When primary keys are created (the seeds compare `pre_create_PK` for InnoDB with
/// `post_create_PK` for MyISAM).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum KeysWhen {
    Before,
    After,
    /// The engine's fast path: before on MariaDB/MySQL, after elsewhere.
    Auto,
}

impl KeysWhen {
    /// `Auto` made definite for `dialect`. InnoDB clusters rows by the primary key: rows that
    /// arrive in key order (tpchgen's) go straight in, where a key added afterwards rebuilds
    /// the table (SF 1 on MariaDB 10.11, whole `dbrig tpch load`: 43.9 s with keys before
    /// against 68.4 s after). PostgreSQL and SQLite build a key after the load faster than
    /// they keep it up row by row.
    pub fn resolved(self, dialect: Dialect) -> KeysWhen {
        match (self, dialect) {
            (KeysWhen::Auto, Dialect::Mysql) => KeysWhen::Before,
            (KeysWhen::Auto, _) => KeysWhen::After,
            (definite, _) => definite,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            KeysWhen::Before => "before",
            KeysWhen::After => "after",
            KeysWhen::Auto => "auto",
        }
    }
}

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub scale_factor: ScaleFactor,
    pub keys: KeysWhen,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    pub parallel: u32,
}

/// One timed step.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Step {
    pub name: String,
    /// Keys name their unit, as every dbrig JSON does.
    #[serde(rename = "duration_s")]
    pub seconds: f64,
}

/// What the load did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadReport {
    pub scale_factor: f64,
    pub keys: KeysWhen,
    pub parallel: u32,
    pub steps: Vec<Step>,
    pub rows: Vec<(String, u64)>,
    pub size_bytes: u64,
    #[serde(rename = "total_s")]
    pub total_seconds: f64,
    /// The load step's rows and bytes per table and in total (rows/s, MB/s).
    pub figures: dbrig_core::results::LoadFigures,
}

impl LoadReport {
    pub fn step(&self, name: &str) -> Option<f64> {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.seconds)
    }
}

/// What cleanup did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TpchCleanupReport {
    pub dropped: Vec<String>,
    pub absent: Vec<String>,
}

/// `t`'s CREATE TABLE, with its primary key declared in it when `keyed`.
fn create_sql(sql: &SqlSet, t: Table, keyed: bool) -> String {
    let key = match keyed {
        true => format!(",\n  PRIMARY KEY ({})", t.primary_key()),
        false => String::new(),
    };
    sql.render(
        &format!("create_{}", t.name()),
        &[
            ("decimal", sql.template("type_decimal")),
            ("date", sql.template("type_date")),
            ("suffix", sql.template("type_suffix")),
            ("key", &key),
        ],
    )
}

async fn add_primary_keys(conn: &mut Connection, sql: &SqlSet) -> Result<(), WorkloadError> {
    for t in Table::ALL {
        conn.execute_text(&sql.render(
            "primary_key",
            &[("table", t.name()), ("columns", t.primary_key())],
        ))
        .await?;
    }
    Ok(())
}

/// Run `statements` (in order: the first starts first) on up to `parallel` connections of
/// their own. Each is read as a query: MariaDB's ANALYZE TABLE returns a result set.
pub(crate) async fn side_by_side(
    target: &Target,
    connect: &ConnectOptions,
    parallel: u32,
    mut statements: Vec<String>,
) -> Result<(), WorkloadError> {
    let sessions = (parallel as usize).clamp(1, statements.len().max(1));
    statements.reverse();
    let queue = Arc::new(Mutex::new(statements));
    let mut handles = Vec::new();
    for _ in 0..sessions {
        let queue = Arc::clone(&queue);
        let target = target.clone();
        let connect = connect.clone();
        handles.push(tokio::spawn(async move {
            let mut c = Connection::connect(&target, &connect).await?;
            loop {
                let next = queue.lock().expect("statement queue").pop();
                let Some(stmt) = next else { break };
                c.query(&stmt, &[]).await?;
            }
            c.close().await;
            Ok::<(), WorkloadError>(())
        }));
    }
    join_tasks(handles, "index").await?;
    Ok(())
}

/// Refuse unless all eight tables exist (a clear message before any query runs).
pub async fn check_loaded(conn: &mut Connection) -> Result<(), WorkloadError> {
    for t in Table::ALL {
        if !conn.table_exists(t.name()).await? {
            return Err(WorkloadError::InvalidOptions(format!(
                "TPC-H table {} does not exist on {}: run `dbrig tpch load` first",
                t.name(),
                conn.target()
            )));
        }
        // A load marks its tables ready last: one still `loading` was interrupted.
        if registry::lookup(conn, t.name())
            .await?
            .is_some_and(|e| e.state == "loading")
        {
            return Err(WorkloadError::InvalidOptions(format!(
                "TPC-H table {} on {} is half-loaded (a load was interrupted before it finished): run `dbrig tpch cleanup`, then load again",
                t.name(),
                conn.target()
            )));
        }
    }
    Ok(())
}

/// Refuse a load onto TPC-H tables that exist: they are dropped only by `dbrig tpch cleanup`.
pub async fn refuse_existing(conn: &mut Connection, target: &Target) -> Result<(), WorkloadError> {
    for t in Table::ALL {
        if conn.table_exists(t.name()).await? {
            return Err(WorkloadError::InvalidOptions(format!(
                "TPC-H table {} already exists on {target}: run `dbrig tpch cleanup` first, or use another database",
                t.name()
            )));
        }
    }
    Ok(())
}

/// Around a step's DDL on every table (see [`crate::loading::mark_ddl`]).
async fn mark_ddl(conn: &mut Connection, running: bool) -> Result<(), WorkloadError> {
    crate::loading::mark_ddl(conn, &Table::ALL.map(Table::name), running).await
}

/// Run the load test.
pub async fn load(
    target: &Target,
    connect: &ConnectOptions,
    options: &LoadOptions,
    progress: &dyn Progress,
) -> Result<LoadReport, WorkloadError> {
    let all_started = Instant::now();
    let sf = options.scale_factor.get();
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    let sql = schema_sql(dialect);
    let keys = options.keys.resolved(dialect);
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
    let data = serde_json::json!({ "sf": sf, "keys": keys }).to_string();
    // MariaDB's keys before the load are declared with the tables: InnoDB rebuilds a table to
    // add a primary key, and a rebuild cut off by Ctrl-C gives the table a new id, which
    // nothing then tells from a copy's (`registry::verify` refuses it).
    let keyed = keys == KeysWhen::Before && dialect == Dialect::Mysql;
    let creates: Vec<(&str, String)> = Table::ALL
        .iter()
        .map(|&t| (t.name(), create_sql(sql, t, keyed)))
        .collect();
    registry::create_all(&mut conn, REGISTRY_KIND, &creates, &data).await?;
    timed("create tables", started);
    if keys == KeysWhen::Before && !keyed {
        let started = Instant::now();
        mark_ddl(&mut conn, true).await?;
        add_primary_keys(&mut conn, sql).await?;
        mark_ddl(&mut conn, false).await?;
        timed("primary keys (before load)", started);
    }

    let parallel = match (dialect, options.parallel) {
        // SQLite has one writer at a time.
        (Dialect::Sqlite, _) => 1,
        (_, 0) => std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2)
            .max(2),
        (_, n) => n,
    };
    // Big tables first, so the last jobs are small ones and loaders finish together.
    let mut jobs: Vec<(Table, u32, u32)> = Vec::new();
    for t in Table::ALL {
        let parts = t.parts(sf, parallel);
        for p in 1..=parts {
            jobs.push((t, p, parts));
        }
    }
    jobs.reverse();
    // Planned rows: the generators' own counts, lineitem's an estimate (about 4 per order).
    let meter = Arc::new(RowMeter::new(
        Table::ALL.map(|t| (t.name().to_owned(), t.approx_rows(sf))),
    ));
    let started = Instant::now();
    let queue = Arc::new(Mutex::new(jobs));
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
                let Some((table, part, parts)) = job else {
                    break;
                };
                let columns = || table.columns().iter().map(|s| (*s).to_owned()).collect();
                let counter = meter.counter(table.name());
                // Typed rows where the engine has a typed bulk format (`Table::typed` says
                // why), the generated text for MySQL's LOAD DATA; SQLite binds values.
                let typed = TpchPart {
                    table,
                    sf,
                    part,
                    parts,
                };
                let n =
                    match bulk_load_typed(&mut c, table.name(), columns(), counter.clone(), typed)
                        .await
                    {
                        Some(loaded) => loaded?,
                        None if c.dialect() == Dialect::Sqlite => {
                            c.bulk_load(BulkLoad {
                                table: table.name().to_owned(),
                                columns: columns(),
                                rows: Box::new(
                                    counter.count(prefetch_rows(table.rows(sf, part, parts))),
                                ),
                            })
                            .await?
                        }
                        None => {
                            c.bulk_load_text(BulkText {
                                table: table.name().to_owned(),
                                columns: columns(),
                                // Generated on a thread of its own, a chunk or two ahead.
                                chunks: count_lines(
                                    prefetch(table.bulk_text(sf, part, parts)),
                                    counter,
                                ),
                                frozen: false,
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
    if dialect == Dialect::Sqlite {
        progress.note(&format!(
            "SQLite load pragmas: {}",
            dbrig_driver::SQLITE_LOAD_PRAGMAS
        ));
    }
    progress.note(&format!(
        "loaded {total} rows with {parallel} loader(s) ({:.0} rows/s{})",
        total as f64 / started.elapsed().as_secs_f64().max(1e-9),
        path.map(|p| format!(", {p}")).unwrap_or_default()
    ));
    for line in figures.lines() {
        progress.note(&format!("  {line}"));
    }
    timed("load", started);

    // Keys, indexes and statistics: each step's statements side by side on `parallel`
    // connections (one index build or ANALYZE is mostly one server thread's work), biggest
    // table first. Statements on one table wait for each other where the engine says so.
    if keys == KeysWhen::After {
        let started = Instant::now();
        let keys = Table::ALL
            .iter()
            .rev()
            .map(|t| {
                sql.render(
                    "primary_key",
                    &[("table", t.name()), ("columns", t.primary_key())],
                )
            })
            .collect();
        mark_ddl(&mut conn, true).await?;
        side_by_side(target, connect, parallel, keys).await?;
        mark_ddl(&mut conn, false).await?;
        timed("primary keys (after load)", started);
    }
    let started = Instant::now();
    let indexes = sql
        .render("indexes", &[])
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .rev()
        .collect();
    mark_ddl(&mut conn, true).await?;
    side_by_side(target, connect, parallel, indexes).await?;
    mark_ddl(&mut conn, false).await?;
    timed("indexes", started);
    let started = Instant::now();
    let analyze = Table::ALL
        .iter()
        .rev()
        .map(|t| sql.render("analyze", &[("table", t.name())]))
        .collect();
    side_by_side(target, connect, parallel, analyze).await?;
    timed("analyze", started);
    // Last: only now is every row, key and index there.
    registry::mark_all_ready(&mut conn, &Table::ALL.map(Table::name)).await?;

    let size_bytes = size_on_disk(&mut conn).await?;
    progress.note(&format!(
        "size on disk: {:.1} MiB",
        size_bytes as f64 / 1048576.0
    ));
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
    Ok(LoadReport {
        scale_factor: sf,
        keys,
        parallel,
        steps,
        rows,
        size_bytes,
        total_seconds: all_started.elapsed().as_secs_f64(),
        figures,
    })
}

/// Bytes the eight tables take: MariaDB data_length + index_length, PostgreSQL
/// pg_total_relation_size, SQLite the database file (page_count × page_size).
pub async fn size_on_disk(conn: &mut Connection) -> Result<u64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    crate::loading::tables_size(conn, sql, &Table::ALL.map(Table::name)).await
}

/// Drop the TPC-H tables dbrig created (refusing, before dropping anything, tables that are
/// not registered or not the very table dbrig made).
pub async fn cleanup(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<TpchCleanupReport, WorkloadError> {
    let (dropped, absent) = crate::loading::drop_registered(
        target,
        connect,
        &Table::ALL.map(Table::name),
        REGISTRY_KIND,
    )
    .await?;
    Ok(TpchCleanupReport { dropped, absent })
}

/// One part of one TPC-H table, as typed rows.
struct TpchPart {
    table: Table,
    sf: f64,
    part: u32,
    parts: u32,
}

impl TypedRows for TpchPart {
    fn chunks<W: FieldWriter>(self) -> Box<dyn Iterator<Item = W> + Send> {
        self.table.typed(self.sf, self.part, self.parts)
    }
}

/// Bulk text whose rows are counted as its chunks are taken: a chunk holds whole lines, one
/// per row.
fn count_lines(chunks: TextChunks, counter: RowCounter) -> TextChunks {
    Box::new(chunks.inspect(move |c| {
        counter.add_bytes(c.len() as u64);
        counter.add(c.iter().filter(|&&b| b == b'\n').count() as u64)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Heard;

    #[test]
    fn auto_keys_take_each_engines_fast_path() {
        assert_eq!(KeysWhen::Auto.resolved(Dialect::Mysql), KeysWhen::Before);
        assert_eq!(KeysWhen::Auto.resolved(Dialect::Postgres), KeysWhen::After);
        assert_eq!(KeysWhen::Auto.resolved(Dialect::Sqlite), KeysWhen::After);
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            assert_eq!(KeysWhen::After.resolved(d), KeysWhen::After);
            assert_eq!(KeysWhen::Before.resolved(d), KeysWhen::Before);
        }
    }

    /// MariaDB builds a table's indexes in one ALTER TABLE; the set is the kit's, the same on
    /// every engine, and each table appears once.
    #[test]
    fn every_engine_builds_the_same_indexes() {
        let names = |dialect| {
            let text = schema_sql(dialect).render("indexes", &[]);
            let mut names: Vec<String> = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("i_"))
                .map(str::to_owned)
                .collect();
            names.sort();
            (names, text)
        };
        let (common, _) = names(Dialect::Postgres);
        assert_eq!(common.len(), 11);
        assert_eq!(names(Dialect::Sqlite).0, common);
        let (mysql, text) = names(Dialect::Mysql);
        assert_eq!(mysql, common);
        let statements: Vec<&str> = text.split(';').map(str::trim).collect();
        assert_eq!(statements.len(), 6, "{text}");
        assert!(statements.iter().all(|s| s.starts_with("ALTER TABLE ")));
    }

    #[test]
    fn text_chunks_count_their_lines() {
        let meter = RowMeter::new([("t".to_owned(), 3)]);
        let chunks: TextChunks =
            Box::new(vec![b"a\tb\nc\td\n".to_vec(), b"e\tf\n".to_vec()].into_iter());
        assert_eq!(count_lines(chunks, meter.counter("t")).count(), 2);
        assert_eq!(meter.snapshot()[0].loaded, 3);
    }

    /// A load reports every table's rows against the generators' counts and ends with the
    /// exact ones, which are the rows it reports loaded.
    #[tokio::test]
    async fn load_reports_rows_per_table() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("tpch.db").display());
        let heard = Heard::default();
        let report = load(
            &Target::parse(&url).unwrap(),
            &ConnectOptions::default(),
            &LoadOptions {
                scale_factor: ScaleFactor::new(0.01).unwrap(),
                keys: KeysWhen::After,
                parallel: 0,
            },
            &heard,
        )
        .await
        .unwrap();
        let rows = heard.rows.into_inner().unwrap();
        let (last, finished) = rows.last().expect("rows reported");
        assert!(finished);
        let loaded: Vec<(String, u64)> = last.iter().map(|t| (t.table.clone(), t.loaded)).collect();
        let mut expected = report.rows.clone();
        expected.sort();
        let mut got = loaded.clone();
        got.sort();
        assert_eq!(got, expected);
        let region = last.iter().find(|t| t.table == "region").unwrap();
        assert_eq!((region.loaded, region.planned), (5, 5));
        let orders = last.iter().find(|t| t.table == "orders").unwrap();
        assert_eq!((orders.loaded, orders.planned), (15_000, 15_000));
    }
}
