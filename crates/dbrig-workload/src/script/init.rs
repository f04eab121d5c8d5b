//! `pgbench-init`: pgbench's four tables (`pgbench -i`, steps dtgvp, and f with
//! `--foreign-keys`) with its row counts, keys, filler and fill factor, on every engine. The
//! SQL is data (`sql/*.sql`, one section per step, a file per dialect); the rows go through
//! each engine's bulk path (PostgreSQL `COPY`, MariaDB/MySQL `LOAD DATA`, SQLite batched
//! inserts). The tables are registered like every table dbrig makes: a second init replaces
//! only tables dbrig made, never `pgbench -i`'s or a user's.

use std::time::Instant;

use dbrig_driver::{BulkText, ConnectOptions, Connection, Dialect, Target};

use super::ScriptOptions;
use crate::error::WorkloadError;
use crate::progress::LoadProgress;
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

/// What pgbench-init did.
#[derive(Debug, Clone)]
pub struct InitReport {
    pub scale: u32,
    pub rows: u64,
    pub seconds: f64,
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

/// Lazily encoded rows `first..=last` of a table, as bulk text.
fn rows(
    table: &str,
    columns: &[&str],
    count: i64,
    row: impl Fn(i64, &mut Vec<u8>) + Send + 'static,
) -> BulkText {
    let mut next = 1;
    BulkText {
        table: table.to_owned(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        chunks: Box::new(std::iter::from_fn(move || {
            if next > count {
                return None;
            }
            let mut buf = Vec::with_capacity((1 << 20) + 64);
            while next <= count && buf.len() < 1 << 20 {
                row(next, &mut buf);
                next += 1;
            }
            Some(buf)
        })),
    }
}

/// Drop pgbench's tables when dbrig made them (proven by their markers), create them and load
/// them for `scale`.
pub async fn init(
    target: &Target,
    connect: &ConnectOptions,
    options: &ScriptOptions,
    progress: &dyn LoadProgress,
) -> Result<InitReport, WorkloadError> {
    let scale = options.scale.max(1);
    if !(10..=100).contains(&options.fillfactor) {
        return Err(WorkloadError::InvalidOptions(format!(
            "invalid fillfactor {}: pgbench takes 10 to 100",
            options.fillfactor
        )));
    }
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
            progress.say(&format!("dropping {t}"));
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
    progress.say("creating tables");
    for t in TABLES {
        let name = format!("create_{}", t.trim_start_matches("pgbench_"));
        let token = registry::new_token();
        let sql = sql_for(dialect).render(&name, &vars);
        conn.execute_text(&registry::marked_create(dialect, &sql, &token))
            .await?;
        registry::record(&mut conn, t, KIND, &token, &data).await?;
    }
    let s = i64::from(scale);
    progress.say(&format!("generating data (client-side), scale {scale}"));
    let mut loaded = 0;
    loaded += conn
        .bulk_load_text(rows(
            "pgbench_branches",
            &["bid", "bbalance", "filler"],
            BRANCHES * s,
            |i, buf| buf.extend_from_slice(format!("{i}\t0\t\\N\n").as_bytes()),
        ))
        .await?;
    loaded += conn
        .bulk_load_text(rows(
            "pgbench_tellers",
            &["tid", "bid", "tbalance", "filler"],
            TELLERS * s,
            |i, buf| {
                let bid = (i - 1) / TELLERS + 1;
                buf.extend_from_slice(format!("{i}\t{bid}\t0\t\\N\n").as_bytes());
            },
        ))
        .await?;
    loaded += conn
        .bulk_load_text(rows(
            "pgbench_accounts",
            &["aid", "bid", "abalance", "filler"],
            ACCOUNTS * s,
            |i, buf| {
                use std::io::Write;
                let _ = writeln!(buf, "{i}\t{}\t0\t", (i - 1) / ACCOUNTS + 1);
            },
        ))
        .await?;
    progress.say("vacuuming and analyzing");
    run_section(&mut conn, "analyze", &[]).await?;
    progress.say("creating primary keys");
    run_section(&mut conn, "primary_keys", &[]).await?;
    if options.foreign_keys {
        progress.say("creating foreign keys");
        run_section(&mut conn, "foreign_keys", &[]).await?;
    }
    for t in TABLES {
        registry::mark_ready(&mut conn, t).await?;
    }
    conn.close().await;
    Ok(InitReport {
        scale,
        rows: loaded,
        seconds: started.elapsed().as_secs_f64(),
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
