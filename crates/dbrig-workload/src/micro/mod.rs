//! The seeds' micro-benchmarks (spec `seed-benchmarks.md` §1–§3), each one function that
//! creates its tables, measures, drops them and returns a plain [`MicroResult`]:
//!
//! - [`memory_load`]: bulk load of random INT / CHAR(20) keys into an indexed table (seed 000:
//!   MEMORY tables with a hash index), rows per second.
//! - [`scan_filter`]: full scans of a narrow and a wide table and an in-cache loop (seed 004),
//!   rows per second, MB per second and cycles per row.
//! - [`tmp_groupby`]: six GROUP BY queries that need an internal temporary table (seed 003),
//!   seconds per query.
//!
//! Tables are recorded in `dbrig_objects` like the OLTP tables and dropped at the end (also
//! after a failure) unless `--keep`; a table of the same name that dbrig did not create is
//! never touched.

mod data;
mod memory_load;
mod scan_filter;
mod tmp_groupby;

use dbrig_core::Value;
use dbrig_core::limits;
use dbrig_driver::{Connection, Dialect, DriverError, Target};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::registry;
use crate::sql::{DialectSql, SqlSet, is_valid_identifier};

pub use data::{groupby_rows, narrow_values, random_ints, random_words, wide_values};
pub use memory_load::{IndexKind, KeyType, MemoryLoadOptions, memory_load};
pub use scan_filter::{LoopMode, ScanFilterOptions, scan_filter};
pub use tmp_groupby::{TmpGroupbyOptions, tmp_groupby};

/// The micro-benchmarks, by the names the CLI and the results database use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MicroBenchmark {
    MemoryLoad,
    ScanFilter,
    TmpGroupby,
}

impl MicroBenchmark {
    pub const ALL: [MicroBenchmark; 3] = [Self::MemoryLoad, Self::ScanFilter, Self::TmpGroupby];

    pub fn name(self) -> &'static str {
        match self {
            Self::MemoryLoad => "memory_load",
            Self::ScanFilter => "scan_filter",
            Self::TmpGroupby => "tmp_groupby",
        }
    }
}

/// One micro-benchmark with its options: what `dbrig micro` and a plan's `[[workload]]` run.
#[derive(Debug, Clone, PartialEq)]
pub enum MicroOptions {
    MemoryLoad(MemoryLoadOptions),
    ScanFilter(ScanFilterOptions),
    TmpGroupby(TmpGroupbyOptions),
}

impl MicroOptions {
    /// The benchmark named `name` (`memory_load` or `memory-load`, …) with its options read
    /// from a JSON object whose keys may be kebab-case or snake_case. Unknown keys are refused
    /// (serde's `flatten` cannot do that itself), naming the key and the known ones.
    pub fn from_json(
        name: &str,
        options: &serde_json::Value,
    ) -> Result<Option<Self>, WorkloadError> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        let Some(bench) = MicroBenchmark::ALL.into_iter().find(|b| b.name() == wanted) else {
            return Ok(None);
        };
        let mut snake = serde_json::Map::new();
        if let Some(map) = options.as_object() {
            for (k, v) in map {
                snake.insert(k.replace('-', "_"), v.clone());
            }
        }
        let defaults = Self::default_of(bench).json();
        let known: Vec<&String> = defaults
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        if let Some(k) = snake.keys().find(|k| !known.contains(k)) {
            return Err(WorkloadError::InvalidOptions(format!(
                "{}: unknown option '{}' (options: {})",
                bench.name(),
                k.replace('_', "-"),
                known
                    .iter()
                    .map(|k| k.replace('_', "-"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let value = serde_json::Value::Object(snake);
        let bad = |e: serde_json::Error| {
            WorkloadError::InvalidOptions(format!("{} options: {e}", bench.name()))
        };
        let o = match bench {
            MicroBenchmark::MemoryLoad => {
                Self::MemoryLoad(serde_json::from_value(value).map_err(bad)?)
            }
            MicroBenchmark::ScanFilter => {
                Self::ScanFilter(serde_json::from_value(value).map_err(bad)?)
            }
            MicroBenchmark::TmpGroupby => {
                Self::TmpGroupby(serde_json::from_value(value).map_err(bad)?)
            }
        };
        o.common().validate()?;
        Ok(Some(o))
    }

    fn default_of(bench: MicroBenchmark) -> Self {
        match bench {
            MicroBenchmark::MemoryLoad => Self::MemoryLoad(MemoryLoadOptions::default()),
            MicroBenchmark::ScanFilter => Self::ScanFilter(ScanFilterOptions::default()),
            MicroBenchmark::TmpGroupby => Self::TmpGroupby(TmpGroupbyOptions::default()),
        }
    }

    pub fn benchmark(&self) -> MicroBenchmark {
        match self {
            Self::MemoryLoad(_) => MicroBenchmark::MemoryLoad,
            Self::ScanFilter(_) => MicroBenchmark::ScanFilter,
            Self::TmpGroupby(_) => MicroBenchmark::TmpGroupby,
        }
    }

    pub fn common(&self) -> &CommonOptions {
        match self {
            Self::MemoryLoad(o) => &o.common,
            Self::ScanFilter(o) => &o.common,
            Self::TmpGroupby(o) => &o.common,
        }
    }

    pub fn common_mut(&mut self) -> &mut CommonOptions {
        match self {
            Self::MemoryLoad(o) => &mut o.common,
            Self::ScanFilter(o) => &mut o.common,
            Self::TmpGroupby(o) => &mut o.common,
        }
    }

    /// The options as stored with results.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Self::MemoryLoad(o) => serde_json::to_value(o),
            Self::ScanFilter(o) => serde_json::to_value(o),
            Self::TmpGroupby(o) => serde_json::to_value(o),
        }
        .unwrap_or_default()
    }

    /// Create the tables, measure, drop them.
    pub async fn run(
        &self,
        target: &Target,
        connect: &dbrig_driver::ConnectOptions,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<MicroResult, WorkloadError> {
        match self {
            Self::MemoryLoad(o) => memory_load(target, connect, o, progress).await,
            Self::ScanFilter(o) => scan_filter(target, connect, o, progress).await,
            Self::TmpGroupby(o) => tmp_groupby(target, connect, o, progress).await,
        }
    }
}

/// Options every micro-benchmark has.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct CommonOptions {
    /// Timed runs of each load or query (mean, min and max are reported over them).
    #[arg(long, default_value_t = 5, value_parser = limits::parse::<limits::Runs>)]
    #[serde(deserialize_with = "limits::de::<limits::Runs, _>")]
    pub runs: u32,
    /// MariaDB/MySQL storage engine of the tables (MEMORY, InnoDB, Aria, MyISAM, …; default:
    /// MEMORY for memory_load and scan_filter, MyISAM for tmp_groupby as in the seeds).
    /// PostgreSQL and SQLite have one kind of table: giving this there is an error.
    #[arg(long)]
    pub engine: Option<String>,
    /// MariaDB/MySQL: the session's max_heap_table_size and tmp_table_size in bytes (default:
    /// raised to fit the data when the engine is MEMORY, as the seed did).
    #[arg(long, value_name = "BYTES", value_parser = limits::parse::<limits::HeapBytes>)]
    #[serde(default, deserialize_with = "limits::de_opt::<limits::HeapBytes, _>")]
    pub max_heap_table_size: Option<u64>,
    /// Leave the benchmark's tables in place afterwards (they stay recorded in dbrig_objects).
    #[arg(long)]
    pub keep: bool,
    /// Seed of the generated data (the same seed gives the same rows).
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::Seed>)]
    #[serde(deserialize_with = "limits::de::<limits::Seed, _>")]
    pub seed: u64,
    /// CPU frequency in MHz for cycles per row (the binary fills in the host's when known).
    #[arg(long, value_name = "MHZ", value_parser = limits::parse::<limits::CpuMhz>)]
    #[serde(default, deserialize_with = "limits::de_opt::<limits::CpuMhz, _>")]
    pub cpu_mhz: Option<f64>,
}

impl Default for CommonOptions {
    fn default() -> Self {
        Self {
            runs: 5,
            engine: None,
            max_heap_table_size: None,
            keep: false,
            seed: 1,
            cpu_mhz: None,
        }
    }
}

impl CommonOptions {
    fn validate(&self) -> Result<(), WorkloadError> {
        if let Some(e) = &self.engine
            && !is_valid_identifier(e)
        {
            return Err(WorkloadError::InvalidOptions(format!(
                "--engine '{e}' is not an engine name (letters, digits, underscore)"
            )));
        }
        Ok(())
    }
}

pub use dbrig_core::results::micro::{MicroItem, MicroResult, summary};

/// The micro-benchmarks' statements of one dialect, parsed once per process.
fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}

fn dialect_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Mysql => "mysql",
        Dialect::Postgres => "postgres",
        Dialect::Sqlite => "sqlite",
    }
}

const REGISTRY_KIND: &str = "micro_table";

/// The tables one benchmark run created: recorded in the registry (`crate::registry`) when
/// created, removed from it when dropped.
struct Tables {
    target: String,
    created: Vec<String>,
}

impl Tables {
    fn new(target: &Target) -> Self {
        Self {
            target: target.to_string(),
            created: Vec::new(),
        }
    }

    /// Refuse a table dbrig did not create; drop one a kept (or failed) earlier run left.
    async fn make_room(&self, conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
        if !conn.table_exists(table).await? {
            return Ok(());
        }
        registry::verify(conn, table, REGISTRY_KIND, &self.target).await?;
        registry::drop_table(conn, table).await?;
        Ok(())
    }

    /// Create a table with `create_sql` (its first statement the `CREATE TABLE`) and record
    /// it; it is ready at once (a micro-benchmark loads it as part of what it measures).
    async fn create(
        &mut self,
        conn: &mut Connection,
        table: &str,
        create_sql: &[String],
    ) -> Result<(), WorkloadError> {
        self.make_room(conn, table).await?;
        registry::ensure(conn).await?;
        let token = registry::new_token();
        for (i, sql) in create_sql.iter().enumerate() {
            if i == 0 {
                conn.execute_text(&registry::marked_create(conn.dialect(), sql, &token))
                    .await?;
            } else {
                conn.execute_text(sql).await?;
            }
        }
        registry::record(conn, table, REGISTRY_KIND, &token, "").await?;
        registry::mark_ready(conn, table).await?;
        if !self.created.iter().any(|t| t == table) {
            self.created.push(table.into());
        }
        Ok(())
    }

    /// Drop a table this run created.
    async fn drop(&mut self, conn: &mut Connection, table: &str) -> Result<(), WorkloadError> {
        registry::drop_table(conn, table).await?;
        self.created.retain(|t| t != table);
        Ok(())
    }

    /// Drop every table still there (unless `keep`), and the registry once it is empty.
    async fn finish(&mut self, conn: &mut Connection, keep: bool) -> Result<(), WorkloadError> {
        if !keep {
            for t in std::mem::take(&mut self.created) {
                if conn.table_exists(&t).await? {
                    registry::drop_table(conn, &t).await?;
                }
            }
        }
        registry::drop_if_empty(conn).await
    }
}

/// The engine to use: checked against information_schema.engines on MariaDB/MySQL, refused
/// elsewhere when given.
async fn resolve_engine(
    conn: &mut Connection,
    wanted: Option<&str>,
    default: &str,
) -> Result<Option<String>, WorkloadError> {
    if conn.dialect() != Dialect::Mysql {
        return match wanted {
            None => Ok(None),
            Some(e) => Err(WorkloadError::InvalidOptions(format!(
                "--engine {e}: {} has no storage engines to choose from (the option is for MariaDB/MySQL)",
                conn.dialect().name()
            ))),
        };
    }
    let engine = wanted.unwrap_or(default).to_owned();
    if !is_valid_identifier(&engine) {
        return Err(WorkloadError::InvalidOptions(format!(
            "--engine '{engine}' is not an engine name"
        )));
    }
    let sql = sql_for(Dialect::Mysql);
    let ok = conn
        .query(
            sql.template("engine_available"),
            &[Value::Text(engine.clone())],
        )
        .await?;
    if ok.is_empty() {
        return Err(WorkloadError::InvalidOptions(format!(
            "storage engine {engine} is not available on {} (not enabled in information_schema.engines / SHOW ENGINES): choose another --engine",
            conn.target()
        )));
    }
    Ok(Some(engine.to_ascii_uppercase()))
}

/// MariaDB/MySQL: set the session's max_heap_table_size and tmp_table_size: to `explicit`
/// when given, else to at least `needed` bytes (never lowered). Returns the setting made.
async fn size_heap(
    conn: &mut Connection,
    explicit: Option<u64>,
    needed: u64,
) -> Result<Option<u64>, WorkloadError> {
    if conn.dialect() != Dialect::Mysql {
        return Ok(None);
    }
    let sql = sql_for(Dialect::Mysql);
    let bytes = match explicit {
        Some(b) => b,
        None => {
            let cur = conn.query(sql.template("heap_limits"), &[]).await?;
            let current = cur
                .first()
                .and_then(|r| r.first())
                .and_then(Value::as_i64)
                .unwrap_or(0) as u64;
            if current >= needed {
                return Ok(None);
            }
            needed
        }
    };
    conn.execute_text(&sql.render("set_heap_limits", &[("bytes", &bytes.to_string())]))
        .await?;
    Ok(Some(bytes))
}

/// Generous MEMORY-engine bytes for `rows` rows of `per_row` bytes (hash/B-tree index and
/// allocation overhead included), plus 1 MiB.
fn heap_estimate(rows: u64, per_row: u64) -> u64 {
    rows.saturating_mul(per_row).saturating_mul(3) / 2 + (1 << 20)
}

/// MariaDB error 1114 ("The table is full") turned into what to do about it.
async fn explain_table_full(
    conn: &mut Connection,
    e: WorkloadError,
    table: &str,
    rows_wanted: u64,
) -> WorkloadError {
    let WorkloadError::Driver(d) = &e else {
        return e;
    };
    if conn.dialect() != Dialect::Mysql || d.code.as_deref() != Some("1114") {
        return e;
    }
    let sql = sql_for(Dialect::Mysql);
    let limit = conn
        .query(sql.template("heap_limits"), &[])
        .await
        .ok()
        .and_then(|r| r.first().and_then(|r| r.first()).and_then(Value::as_i64));
    let held = conn
        .query(&sql.render("count_rows", &[("table", table)]), &[])
        .await
        .ok()
        .and_then(|r| r.first().and_then(|r| r.first()).and_then(Value::as_i64))
        .unwrap_or(0)
        .max(1) as u64;
    let limit_text = limit.map_or("?".to_owned(), |l| l.to_string());
    let needed = limit
        .map(|l| (l as u64).saturating_mul(rows_wanted) / held)
        .map(|n| n + n / 10);
    let needed_text = needed.map_or_else(String::new, |n| {
        format!(" about {n} bytes are needed for {rows_wanted} rows:")
    });
    WorkloadError::Driver(DriverError {
        message: format!(
            "table {table} is full after {held} of {rows_wanted} rows: MEMORY tables are limited by max_heap_table_size \
             ({limit_text} bytes in this session);{needed_text} raise it with --max-heap-table-size BYTES \
             (or leave the option out so dbrig sizes it), or load fewer rows ({})",
            d.message
        ),
        ..d.clone()
    })
}

/// The table's data length as the seeds meant it: `rows` × the engine's average row length
/// (what MB/s divides; the space a table has allocated would overstate MB/s many times for a
/// MEMORY table, which allocates in 16 MiB steps).
async fn data_length(
    conn: &mut Connection,
    table: &str,
    rows: u64,
) -> Result<Option<u64>, DriverError> {
    let sql = sql_for(conn.dialect());
    let avg = |result: Vec<Vec<Value>>| {
        result
            .first()
            .and_then(|r| r.first())
            .and_then(Value::as_f64)
            .map(|avg| (avg * rows as f64).round() as u64)
    };
    // The table's name is a bind value where the catalog is asked by name.
    let ask = async |conn: &mut Connection, section: &str| {
        let q = sql.render(section, &[("table", table)]);
        let by_name = q.contains('?') || q.contains("$1");
        let params = if by_name {
            vec![Value::Text(table.into())]
        } else {
            Vec::new()
        };
        conn.query(&q, &params).await
    };
    match ask(conn, "avg_row_length").await {
        Ok(result) => Ok(avg(result)),
        // SQLite built without the dbstat table.
        Err(_) if sql.has("avg_row_length_fallback") => {
            Ok(avg(ask(conn, "avg_row_length_fallback").await?))
        }
        Err(e) => Err(e),
    }
}

/// Load the rows a benchmark's measured queries read (an untimed set-up load) through the
/// engine's fastest bulk path: on MariaDB/MySQL a loader connection of its own on the lean
/// client, whose bulk load is MariaDB's binary `COM_STMT_BULK_EXECUTE` (`LOAD DATA LOCAL`
/// where the server lacks it), as OLTP prepare and the TPC-H load do; elsewhere `conn` (COPY,
/// one SQLite transaction). The table was created on `conn`, with that session's settings
/// (a MEMORY table's size is fixed at CREATE). Not for `memory_load`, whose measured figure is
/// the load itself: it keeps sending the seed's statement (see there).
async fn setup_load(
    conn: &mut Connection,
    connect: &dbrig_driver::ConnectOptions,
    load: dbrig_driver::BulkLoad,
) -> Result<u64, DriverError> {
    if conn.dialect() != Dialect::Mysql {
        return conn.bulk_load(load).await;
    }
    let mut loader =
        Connection::connect(conn.target(), &crate::loading::loader_options(connect)).await?;
    let loaded = loader.bulk_load(load).await;
    loader.close().await;
    loaded
}

/// Refresh statistics after a load (so data_length is exact on InnoDB and PostgreSQL's hint
/// bits are set before anything is timed).
async fn after_load(conn: &mut Connection, table: &str) -> Result<(), DriverError> {
    let sql = sql_for(conn.dialect());
    let stmt = sql.render("analyze", &[("table", table)]);
    if conn.dialect() == Dialect::Mysql {
        conn.query(&stmt, &[]).await?;
    } else {
        conn.execute_text(&stmt).await?;
    }
    Ok(())
}

/// The first row of a result as text (`a, b`), shortened for reports.
fn answer_text(rows: &[Vec<Value>]) -> Option<String> {
    let row = rows.first()?;
    let mut s = row
        .iter()
        .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
        .collect::<Vec<_>>()
        .join(", ");
    if s.len() > 60 {
        let mut cut = 57;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    Some(s)
}

/// Run the body, then drop the tables (also after a failure, on a fresh connection if the
/// old one broke) and close.
async fn with_tables<F>(
    conn: Connection,
    target: &Target,
    connect: &dbrig_driver::ConnectOptions,
    keep: bool,
    body: F,
) -> Result<MicroResult, WorkloadError>
where
    F: AsyncFnOnce(&mut Connection, &mut Tables) -> Result<MicroResult, WorkloadError>,
{
    let mut conn = conn;
    let mut tables = Tables::new(target);
    let result = body(&mut conn, &mut tables).await;
    let finished = match tables.finish(&mut conn, keep).await {
        Ok(()) => Ok(()),
        Err(_) if result.is_err() => {
            // The connection may be what failed: clean up on a new one.
            match Connection::connect(target, connect).await {
                Ok(mut c2) => {
                    let r = tables.finish(&mut c2, keep).await;
                    c2.close().await;
                    r
                }
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e),
    };
    conn.close().await;
    let r = result?;
    finished?;
    Ok(r)
}
