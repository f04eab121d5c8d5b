//! `pgbench-init`: pgbench's four tables (`pgbench -i`, steps dtgvp, and f with
//! `--foreign-keys`) with its row counts, keys, filler and fill factor, on every engine. The
//! SQL is data (`sql/*.sql`, one section per step, a file per dialect); the rows go through
//! each engine's bulk path (PostgreSQL `COPY` as `pgbench -i` sends it: one transaction that
//! empties the tables and copies `WITH (FREEZE)`, pgbench_accounts in binary; MariaDB/MySQL
//! the bulk path of `Connection::bulk_load_text`, SQLite batched inserts). The tables are registered like every table dbrig makes: a second init replaces
//! only tables dbrig made, never `pgbench -i`'s or a user's.

use std::time::Instant;

use dbrig_core::results::LoadFigures;
use dbrig_driver::{
    BulkText, ConnectOptions, Connection, Dialect, FieldWriter, PgBinaryChunk, PgBinaryRows, Target,
};

use super::ScriptOptions;
use crate::error::WorkloadError;
use crate::progress::{Progress, RowCounter, RowMeter};
use crate::registry;
use crate::sql::{DialectSql, SqlSet};

/// pgbench's tables.
pub const TABLES: [&str; 4] = [
    "pgbench_history",
    "pgbench_accounts",
    "pgbench_tellers",
    "pgbench_branches",
];
/// The registry's kind for them.
const KIND: &str = "pgbench";
/// pgbench's rows per scale unit.
const BRANCHES: i64 = 1;
const TELLERS: i64 = 10;
const ACCOUNTS: i64 = 100_000;
/// From this scale on, account ids are bigint (pgbench's SCALE_32BIT_THRESHOLD).
const SCALE_32BIT_THRESHOLD: u32 = 20_000;

fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}

/// What pgbench-init at `scale` takes on disk, generously: 100 000 accounts of about 100 bytes
/// a row, with the primary keys and the engines' page overhead about 25 MB per unit (pgbench's
/// own figure on PostgreSQL is about 15 MB; InnoDB takes more).
pub fn estimated_bytes(scale: u32) -> u64 {
    u64::from(scale.max(1)) * 25_000_000
}

/// Whether pgbench-init at `options.scale` may start: the one disk rule of every load
/// ([`crate::loading::check_fits`]).
pub fn check_fits(
    options: &ScriptOptions,
    space: Option<(&std::path::Path, u64)>,
) -> Result<(), WorkloadError> {
    let scale = options.scale.max(1);
    crate::loading::check_fits(
        &format!("pgbench-init at scale {scale}"),
        estimated_bytes(scale),
        space,
        options.force_load,
        "choose a smaller --scale, free space, or force the load (`--force-load`; in a plan `force-load = true`)",
    )
}

/// What pgbench-init did.
#[derive(Debug, Clone)]
pub struct InitReport {
    pub scale: u32,
    pub rows: u64,
    pub seconds: f64,
    /// The rows' load: rows/s and MB/s per table and in total (the COPY / LOAD DATA part).
    pub figures: LoadFigures,
}

/// Run each `;`-separated statement of a section (one statement per call on every engine).
async fn run_section(
    conn: &mut Connection,
    name: &str,
    vars: &[(&str, &str)],
) -> Result<(), WorkloadError> {
    let sql = sql_for(conn.dialect()).render(name, vars);
    for stmt in sql.split(";\n").map(str::trim).filter(|s| !s.is_empty()) {
        conn.execute_text(stmt).await?;
    }
    Ok(())
}

/// `:scale` of pgbench's tables: the row count of pgbench_branches (as pgbench finds it).
pub async fn detect_scale(conn: &mut Connection) -> Result<i64, WorkloadError> {
    let sql = sql_for(conn.dialect()).render("scale", &[]);
    let n = conn
        .query(&sql, &[])
        .await?
        .first()
        .and_then(|r| r.first())
        .and_then(dbrig_core::Value::as_i64)
        .unwrap_or(0);
    if n <= 0 {
        return Err(WorkloadError::InvalidOptions(format!(
            "count(*) from pgbench_branches returned {n} on {}: run `dbrig prepare pgbench-init --scale N` first",
            conn.target()
        )));
    }
    Ok(n)
}

/// Rows `1..=count` of a table, encoded lazily as bulk text chunk by chunk and counted into
/// `counter` (rows and bytes) as each chunk is handed to the loader.
fn rows(
    table: &str,
    columns: &[&str],
    count: i64,
    frozen: bool,
    counter: RowCounter,
    row: impl Fn(i64, &mut Vec<u8>) + Send + 'static,
) -> BulkText {
    let mut next = 1;
    BulkText {
        table: table.to_owned(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        frozen,
        chunks: Box::new(std::iter::from_fn(move || {
            if next > count {
                return None;
            }
            let first = next;
            let mut buf = Vec::with_capacity((1 << 20) + 64);
            while next <= count && buf.len() < 1 << 20 {
                row(next, &mut buf);
                next += 1;
            }
            counter.add_bytes(buf.len() as u64);
            counter.add((next - first) as u64);
            Some(buf)
        })),
    }
}

/// pgbench_accounts' rows `1..=count` as PostgreSQL binary COPY tuples, counted into
/// `counter` (bytes: as the bulk text they stand for, so MB/s compares with the text path).
/// Binary rather than text on PostgreSQL, measured on the same rows copied from a file by the
/// server (2 M rows, 3 rounds alternated, load 3): text 1.67-2.34 s, binary 1.60-1.72 s; and
/// the client writes three integers as their bytes instead of formatting them.
fn binary_accounts(count: i64, bigint: bool, frozen: bool, counter: RowCounter) -> PgBinaryRows {
    let mut next = 1;
    PgBinaryRows {
        table: "pgbench_accounts".into(),
        columns: ["aid", "bid", "abalance", "filler"]
            .map(str::to_owned)
            .to_vec(),
        frozen,
        chunks: Box::new(std::iter::from_fn(move || {
            if next > count {
                return None;
            }
            let mut chunk = PgBinaryChunk::with_capacity((1 << 20) + 64);
            while next <= count && chunk.buf.len() < 1 << 20 {
                let bid = (next - 1) / ACCOUNTS + 1;
                chunk.row(4);
                if bigint {
                    chunk.int8(next);
                } else {
                    chunk.int4(next as i32);
                }
                chunk.int4(bid as i32);
                chunk.int4(0);
                // filler: the empty string, which char(84) pads (as pgbench's text row).
                chunk.text("");
                next += 1;
            }
            counter.add_bytes(chunk.text_bytes());
            counter.add(chunk.rows());
            Some(chunk.buf)
        })),
    }
}

/// Drop pgbench's tables when dbrig made them (proven by their markers), create them and load
/// them for `scale`.
pub async fn init(
    target: &Target,
    connect: &ConnectOptions,
    options: &ScriptOptions,
    progress: &dyn Progress,
) -> Result<InitReport, WorkloadError> {
    let scale = options.scale.max(1);
    let started = Instant::now();
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    for t in TABLES {
        if conn.table_exists(t).await? {
            registry::verify(&mut conn, t, KIND, target).await?;
        }
    }
    for t in TABLES {
        if conn.table_exists(t).await? {
            progress.note(&format!("dropping {t}"));
            registry::drop_table(&mut conn, t).await?;
        }
    }
    registry::ensure(&mut conn).await?;
    let aid_type = if scale >= SCALE_32BIT_THRESHOLD {
        "bigint"
    } else {
        "int"
    };
    let fillfactor = options.fillfactor.to_string();
    let vars = [("aid_type", aid_type), ("fillfactor", fillfactor.as_str())];
    let data = serde_json::json!({ "scale": scale }).to_string();
    progress.note("creating tables");
    let creates: Vec<(&str, String)> = TABLES
        .iter()
        .map(|t| {
            let name = format!("create_{}", t.trim_start_matches("pgbench_"));
            (*t, sql_for(dialect).render(&name, &vars))
        })
        .collect();
    registry::create_all(&mut conn, KIND, &creates, &data).await?;
    let s = i64::from(scale);
    progress.note(&format!("generating data (client-side), scale {scale}"));
    // PostgreSQL: pgbench -i's transaction, the rows copied frozen (see `load_begin`).
    let sql = sql_for(dialect);
    let frozen = sql.has("load_begin");
    if frozen {
        run_section(&mut conn, "load_begin", &[]).await?;
    }
    let meter = RowMeter::new([
        ("pgbench_branches".to_owned(), (BRANCHES * s) as u64),
        ("pgbench_tellers".to_owned(), (TELLERS * s) as u64),
        ("pgbench_accounts".to_owned(), (ACCOUNTS * s) as u64),
    ]);
    let small = [
        rows(
            "pgbench_branches",
            &["bid", "bbalance", "filler"],
            BRANCHES * s,
            frozen,
            meter.counter("pgbench_branches"),
            |i, buf| {
                use std::io::Write;
                let _ = writeln!(buf, "{i}\t0\t\\N");
            },
        ),
        rows(
            "pgbench_tellers",
            &["tid", "bid", "tbalance", "filler"],
            TELLERS * s,
            frozen,
            meter.counter("pgbench_tellers"),
            |i, buf| {
                use std::io::Write;
                let _ = writeln!(buf, "{i}\t{}\t0\t\\N", (i - 1) / TELLERS + 1);
            },
        ),
    ];
    let accounts_counter = meter.counter("pgbench_accounts");
    let loaded = meter
        .watch(progress, async {
            let mut loaded = 0;
            for load in small {
                loaded += conn.bulk_load_text(load).await?;
            }
            loaded += if dialect == Dialect::Postgres {
                let bigint = aid_type == "bigint";
                conn.bulk_load_pg_binary(binary_accounts(
                    ACCOUNTS * s,
                    bigint,
                    frozen,
                    accounts_counter,
                ))
                .await?
            } else {
                conn.bulk_load_text(rows(
                    "pgbench_accounts",
                    &["aid", "bid", "abalance", "filler"],
                    ACCOUNTS * s,
                    frozen,
                    accounts_counter,
                    |i, buf| {
                        use std::io::Write;
                        let _ = writeln!(buf, "{i}\t{}\t0\t", (i - 1) / ACCOUNTS + 1);
                    },
                ))
                .await?
            };
            Ok::<u64, WorkloadError>(loaded)
        })
        .await?;
    if frozen {
        run_section(&mut conn, "load_commit", &[]).await?;
    }
    let figures = meter.figures();
    for line in figures.lines() {
        progress.note(&format!("  {line}"));
    }
    progress.note("vacuuming and analyzing");
    run_section(&mut conn, "analyze", &[]).await?;
    progress.note("creating primary keys");
    run_section(&mut conn, "primary_keys", &[]).await?;
    if options.foreign_keys {
        progress.note("creating foreign keys");
        run_section(&mut conn, "foreign_keys", &[]).await?;
    }
    registry::mark_all_ready(&mut conn, &TABLES).await?;
    conn.close().await;
    Ok(InitReport {
        scale,
        rows: loaded,
        seconds: started.elapsed().as_secs_f64(),
        figures,
    })
}

/// Drop pgbench's tables that dbrig made (the others are left, with an error naming them).
pub async fn cleanup(
    target: &Target,
    connect: &ConnectOptions,
) -> Result<Vec<String>, WorkloadError> {
    let mut conn = Connection::connect(target, connect).await?;
    let mut dropped = Vec::new();
    for t in TABLES {
        if conn.table_exists(t).await? {
            registry::verify(&mut conn, t, KIND, target).await?;
        }
    }
    for t in TABLES {
        if conn.table_exists(t).await? {
            registry::drop_table(&mut conn, t).await?;
            dropped.push(t.to_owned());
        }
    }
    registry::drop_if_empty(&mut conn).await?;
    conn.close().await;
    Ok(dropped)
}
