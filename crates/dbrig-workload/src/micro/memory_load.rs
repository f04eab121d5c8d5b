//! Seed 000: bulk load into an indexed table (MEMORY with a hash index by default), rows/s.

use std::sync::Arc;
use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::limits;
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Dialect, Target};
use serde::{Deserialize, Serialize};

use super::{
    CommonOptions, MicroItem, MicroResult, Tables, data, dialect_name, explain_table_full,
    heap_estimate, resolve_engine, size_heap, sql_for, with_tables,
};
use crate::error::WorkloadError;

/// The key column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    /// `c1 INT`, random integers in [0, rows).
    Int,
    /// `c1 CHAR(20)`, random 20-letter lowercase strings.
    Char,
}

impl KeyType {
    pub fn label(self) -> &'static str {
        match self {
            KeyType::Int => "INT",
            KeyType::Char => "CHAR(20)",
        }
    }
}

/// The index kind (`USING HASH` / `USING BTREE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    Hash,
    Btree,
}

/// Options of `memory_load`.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryLoadOptions {
    /// Rows per load (the seed loaded 50 M).
    #[arg(long, default_value_t = 1_000_000, value_parser = limits::parse::<limits::MicroRows>)]
    #[serde(deserialize_with = "limits::de::<limits::MicroRows, _>")]
    pub rows: u64,
    /// Key types to load, each into its own table t1 (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [KeyType::Int, KeyType::Char])]
    pub key_types: Vec<KeyType>,
    /// Index kind (default: the engine's own: hash for MEMORY, B-tree elsewhere). PostgreSQL
    /// takes hash too; SQLite has B-trees only.
    #[arg(long, value_enum)]
    pub index: Option<IndexKind>,
    /// Load from a file the server reads itself, as the seed did (`LOAD DATA INFILE` on
    /// MariaDB/MySQL, `COPY … FROM 'file'` on PostgreSQL): dbrig writes each key type's rows
    /// into this folder first (untimed), which the server must be allowed to read
    /// (MariaDB's `secure_file_priv`). Without it the rows stream from dbrig (`LOCAL`).
    #[arg(long, value_name = "DIR")]
    pub server_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonOptions,
}

impl Default for MemoryLoadOptions {
    fn default() -> Self {
        Self {
            rows: 1_000_000,
            key_types: vec![KeyType::Int, KeyType::Char],
            index: None,
            server_file: None,
            common: CommonOptions::default(),
        }
    }
}

const TABLE: &str = "t1";

/// The data of one key type, generated once (the seed's pre-generated files) and streamed
/// into every load.
#[derive(Clone)]
enum Keys {
    Int(Arc<Vec<u32>>),
    Char(Arc<Vec<[u8; 20]>>),
}

impl Keys {
    fn load(&self) -> BulkLoad {
        let rows: Box<dyn Iterator<Item = Vec<Value>> + Send> =
            match self {
                Keys::Int(v) => {
                    let v = Arc::clone(v);
                    Box::new((0..v.len()).map(move |i| vec![Value::Int(i64::from(v[i]))]))
                }
                Keys::Char(v) => {
                    let v = Arc::clone(v);
                    Box::new((0..v.len()).map(move |i| {
                        vec![Value::Text(String::from_utf8_lossy(&v[i]).into_owned())]
                    }))
                }
            };
        BulkLoad {
            table: TABLE.into(),
            columns: vec!["c1".into()],
            rows,
        }
    }
}

/// Write a key type's rows (the bulk text format: tab-separated, backslash escapes) into
/// `dir` for the server to read; the file's path.
fn write_server_file(
    dir: &std::path::Path,
    key: KeyType,
    data: &Keys,
) -> Result<std::path::PathBuf, WorkloadError> {
    use std::io::Write;
    let path = dir.join(format!(
        "dbrig_{TABLE}_{}.tsv",
        key.label().replace(['(', ')'], "")
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let mut line = Vec::new();
        for row in data.load().rows {
            line.clear();
            dbrig_driver::encode_bulk_row(&row, &mut line);
            f.write_all(&line)?;
        }
        f.flush()
    };
    write().map_err(|e| {
        WorkloadError::InvalidOptions(format!("--server-file: writing {}: {e}", path.display()))
    })?;
    Ok(path)
}

fn create_statements(
    dialect: Dialect,
    key: KeyType,
    engine: Option<&str>,
    index: Option<IndexKind>,
) -> Result<Vec<String>, WorkloadError> {
    let sql = sql_for(dialect);
    let create = match key {
        KeyType::Int => "create_load_int",
        KeyType::Char => "create_load_char",
    };
    let using = match (dialect, index) {
        (_, None) => "",
        (Dialect::Sqlite, Some(IndexKind::Hash)) => {
            return Err(WorkloadError::InvalidOptions(
                "--index hash: SQLite has B-tree indexes only".into(),
            ));
        }
        (Dialect::Sqlite, Some(IndexKind::Btree)) => "",
        (_, Some(IndexKind::Hash)) => "USING HASH",
        (_, Some(IndexKind::Btree)) => "USING BTREE",
    };
    let vars = [
        ("table", TABLE),
        ("engine", engine.unwrap_or("")),
        ("using", using),
    ];
    let mut out = vec![sql.render(create, &vars)];
    if sql.has("create_load_index") {
        out.push(sql.render("create_load_index", &vars));
    }
    Ok(out)
}

/// Load `rows` random keys into a fresh indexed `t1`, once untimed and then `runs` times per
/// key type (interleaved like the seed's script), dropping and re-creating `t1` each time.
pub async fn memory_load(
    target: &Target,
    connect: &ConnectOptions,
    o: &MemoryLoadOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<MicroResult, WorkloadError> {
    o.common.validate()?;
    if o.rows == 0 || o.key_types.is_empty() {
        return Err(WorkloadError::InvalidOptions(
            "memory_load needs --rows above 0 and at least one --key-types".into(),
        ));
    }
    // The full client: its bulk load is `LOAD DATA LOCAL`, the statement this benchmark
    // measures (the lean client's would be MariaDB's bulk command).
    let connect = ConnectOptions {
        lean: false,
        own_thread: None,
        ..connect.clone()
    };
    let connect = &connect;
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    let engine = resolve_engine(&mut conn, o.common.engine.as_deref(), "MEMORY").await?;
    // Fail on a bad --index before anything is created.
    for k in &o.key_types {
        create_statements(dialect, *k, engine.as_deref(), o.index)?;
    }
    progress(&format!("generating {} rows per key type", o.rows));
    let keys: Vec<(KeyType, Keys)> = o
        .key_types
        .iter()
        .map(|k| {
            let data = match k {
                KeyType::Int => Keys::Int(Arc::new(data::random_ints(o.rows, o.common.seed))),
                KeyType::Char => Keys::Char(Arc::new(data::random_words(o.rows, o.common.seed))),
            };
            (*k, data)
        })
        .collect();
    let mut settings = Vec::new();
    let heap = size_heap(
        &mut conn,
        o.common.max_heap_table_size,
        heap_estimate(o.rows, 96),
    )
    .await?;
    if let Some(b) = heap {
        settings.push(format!("max_heap_table_size = {b}"));
        settings.push(format!("tmp_table_size = {b}"));
    }
    let server_version = conn.server_version().to_owned();
    let body = async |conn: &mut Connection, tables: &mut Tables| {
        // The untimed dummy load (the seed's uses its second data file).
        let (dummy_key, dummy_data) = keys.last().expect("at least one key type");
        load_once(conn, tables, *dummy_key, dummy_data, engine.as_deref(), o).await?;
        tables.drop(conn, TABLE).await?;
        progress("dummy load done");
        let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); keys.len()];
        let mut bytes: Vec<Option<u64>> = vec![None; keys.len()];
        for run in 1..=o.common.runs {
            for (i, (key, data)) in keys.iter().enumerate() {
                let (s, b) = load_once(conn, tables, *key, data, engine.as_deref(), o).await?;
                progress(&format!(
                    "run {run}: {} {:.0} rows/s",
                    key.label(),
                    o.rows as f64 / s.max(1e-9)
                ));
                seconds[i].push(s);
                bytes[i] = b.or(bytes[i]);
                let last = run == o.common.runs && i + 1 == keys.len();
                if !(last && o.common.keep) {
                    tables.drop(conn, TABLE).await?;
                }
            }
        }
        let items = keys
            .iter()
            .zip(seconds)
            .zip(bytes)
            .map(|(((key, _), secs), b)| {
                let rates = secs.iter().map(|s| o.rows as f64 / s.max(1e-9)).collect();
                MicroItem::new(
                    key.label(),
                    &format!("bulk load into {TABLE}(c1 {})", key.label()),
                    "rows/s",
                    rates,
                    secs,
                    o.rows,
                )
                .with_rates(b, o.common.cpu_mhz)
            })
            .collect();
        Ok(MicroResult {
            benchmark: "memory_load".into(),
            dialect: dialect_name(dialect).into(),
            server_version: server_version.clone(),
            engine: engine.clone(),
            rows: o.rows,
            runs: o.common.runs,
            seed: o.common.seed,
            cpu_mhz: o.common.cpu_mhz,
            settings: settings.clone(),
            items,
            skipped: Vec::new(),
        })
    };
    with_tables(conn, target, connect, o.common.keep, body).await
}

/// Create `t1` for `key`, load the rows (timed) and read the table's data length.
async fn load_once(
    conn: &mut Connection,
    tables: &mut Tables,
    key: KeyType,
    data: &Keys,
    engine: Option<&str>,
    o: &MemoryLoadOptions,
) -> Result<(f64, Option<u64>), WorkloadError> {
    let create = create_statements(conn.dialect(), key, engine, o.index)?;
    tables.create(conn, TABLE, &create).await?;
    let file = match &o.server_file {
        Some(dir) => Some(write_server_file(dir, key, data)?),
        None => None,
    };
    let started = Instant::now();
    let result = match &file {
        // The server reads the file itself: no client in the timed load, as in the seed.
        Some(path) => {
            let sql = sql_for(conn.dialect());
            if !sql.has("load_server_file") {
                return Err(WorkloadError::InvalidOptions(
                    "--server-file: SQLite has no server to read a file".into(),
                ));
            }
            let stmt = sql.render("load_server_file", &[("table", TABLE)]);
            conn.execute_literal(&stmt, &[Value::Text(path.display().to_string())])
                .await
                .map(|o| o.rows)
        }
        // What seed 000 measures is the server's LOAD DATA into an indexed table, so this
        // load keeps sending LOAD DATA (`LOCAL`, streamed from dbrig: the benchmark's own
        // connection is the full client, never the lean one whose bulk load would be MariaDB's
        // COM_STMT_BULK_EXECUTE, a different server path). The set-up loads of the other
        // micro-benchmarks, untimed, take the bulk command (`super::setup_load`).
        None => conn.bulk_load(data.load()).await,
    };
    let seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &file {
        let _ = std::fs::remove_file(path);
    }
    let loaded = match result {
        Ok(n) => n,
        Err(e) => return Err(explain_table_full(conn, e.into(), TABLE, o.rows).await),
    };
    if loaded != o.rows {
        return Err(WorkloadError::Internal(format!(
            "loaded {loaded} of {} rows into {TABLE}",
            o.rows
        )));
    }
    let bytes = super::data_length(conn, TABLE, o.rows).await.ok().flatten();
    Ok((seconds, bytes))
}
