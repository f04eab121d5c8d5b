//! Seed 004: how fast full scans filter and aggregate rows (narrow table `m`, wide table `m4`,
//! a small in-cache table queried in a loop): rows/s, MB/s, cycles per row.

use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::limits;
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Target};
use serde::{Deserialize, Serialize};

use super::{
    CommonOptions, MicroItem, MicroResult, Tables, after_load, answer_text, data, data_length,
    dialect_name, explain_table_full, heap_estimate, resolve_engine, setup_load, size_heap,
    sql_for, with_tables,
};
use crate::error::WorkloadError;

/// Where scan_filter's in-cache loop repeats its query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LoopMode {
    Auto,
    Server,
    Client,
}

/// Options of `scan_filter`.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct ScanFilterOptions {
    /// Rows of the narrow table m(i INT NOT NULL) (the seed: about 1 M and 10 M).
    #[arg(long, default_value_t = 1_000_000, value_parser = limits::parse::<limits::MicroRows>)]
    #[serde(deserialize_with = "limits::de::<limits::MicroRows, _>")]
    pub rows: u64,
    /// Rows of the wide table m4(c CHAR(128)) (the seed: 5 M; 0 skips it).
    #[arg(long, default_value_t = 1_000_000, value_parser = limits::parse::<limits::OptionalRows>)]
    #[serde(deserialize_with = "limits::de::<limits::OptionalRows, _>")]
    pub wide_rows: u64,
    /// Rows of the in-cache table m1 (0 skips the loop).
    #[arg(long, default_value_t = 10_000, value_parser = limits::parse::<limits::OptionalRows>)]
    #[serde(deserialize_with = "limits::de::<limits::OptionalRows, _>")]
    pub loop_rows: u64,
    /// Queries of one in-cache loop run.
    #[arg(long, default_value_t = 1000, value_parser = limits::parse::<limits::LoopQueries>)]
    #[serde(deserialize_with = "limits::de::<limits::LoopQueries, _>")]
    pub loop_queries: u32,
    /// How the in-cache loop runs: `server` (a stored procedure looping inside the server, as
    /// seed 004 timed it: the server's work only), `client` (one round trip per query), or
    /// `auto` (server on MariaDB/MySQL and PostgreSQL; client on SQLite, which has none).
    #[arg(long, value_enum, default_value_t = LoopMode::Auto)]
    pub loop_mode: LoopMode,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonOptions,
}

impl Default for ScanFilterOptions {
    fn default() -> Self {
        Self {
            rows: 1_000_000,
            wide_rows: 1_000_000,
            loop_rows: 10_000,
            loop_queries: 1000,
            loop_mode: LoopMode::Auto,
            common: CommonOptions::default(),
        }
    }
}

fn narrow_load(table: &str, rows: u64, seed: u64) -> BulkLoad {
    BulkLoad {
        table: table.into(),
        columns: vec!["i".into()],
        rows: Box::new(data::narrow_values(rows, seed).map(|i| vec![Value::Int(i)])),
    }
}

fn wide_load(rows: u64, seed: u64) -> BulkLoad {
    BulkLoad {
        table: "m4".into(),
        columns: vec!["c".into()],
        rows: Box::new(data::wide_values(rows, seed).map(|c| vec![Value::Text(c)])),
    }
}

/// Create one table, load it, refresh its statistics; returns its data length.
#[allow(clippy::too_many_arguments)]
async fn make_table(
    conn: &mut Connection,
    connect: &ConnectOptions,
    tables: &mut Tables,
    table: &str,
    create: &str,
    engine: Option<&str>,
    load: BulkLoad,
    rows: u64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<u64>, WorkloadError> {
    let sql = sql_for(conn.dialect());
    let stmt = sql.render(
        create,
        &[("table", table), ("engine", engine.unwrap_or(""))],
    );
    tables.create(conn, table, &[stmt]).await?;
    let started = Instant::now();
    // Untimed set-up (the scans are measured): the fastest bulk path.
    if let Err(e) = setup_load(conn, connect, load).await {
        return Err(explain_table_full(conn, e.into(), table, rows).await);
    }
    after_load(conn, table).await?;
    let bytes = data_length(conn, table, rows).await?;
    progress(&format!(
        "loaded {table}: {rows} rows, {} bytes, in {:.2} s",
        bytes.map_or("?".into(), |b| b.to_string()),
        started.elapsed().as_secs_f64()
    ));
    Ok(bytes)
}

/// Time `sql` `runs` times; returns seconds per run and the answer.
async fn time_query(
    conn: &mut Connection,
    sql: &str,
    runs: u32,
) -> Result<(Vec<f64>, Option<String>), WorkloadError> {
    let mut seconds = Vec::new();
    let mut answer = None;
    for _ in 0..runs {
        let started = Instant::now();
        let rows = conn.query(sql, &[]).await?;
        seconds.push(started.elapsed().as_secs_f64());
        answer = answer_text(&rows);
    }
    Ok((seconds, answer))
}

/// Load m, m4 and m1, then time the seed's scans.
pub async fn scan_filter(
    target: &Target,
    connect: &ConnectOptions,
    o: &ScanFilterOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<MicroResult, WorkloadError> {
    o.common.validate()?;
    if o.rows == 0 {
        return Err(WorkloadError::InvalidOptions(
            "scan_filter needs --rows above 0".into(),
        ));
    }
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    let engine = resolve_engine(&mut conn, o.common.engine.as_deref(), "MEMORY").await?;
    let mut settings = Vec::new();
    let needed = heap_estimate(o.rows.max(o.loop_rows), 32).max(heap_estimate(o.wide_rows, 160));
    if let Some(b) = size_heap(&mut conn, o.common.max_heap_table_size, needed).await? {
        settings.push(format!("max_heap_table_size = {b}"));
        settings.push(format!("tmp_table_size = {b}"));
    }
    let server_version = conn.server_version().to_owned();
    let seed = o.common.seed;
    let runs = o.common.runs;
    let mhz = o.common.cpu_mhz;
    let eng = engine.as_deref();
    let body = async |conn: &mut Connection, tables: &mut Tables| {
        let sql = sql_for(dialect);
        let mut items = Vec::new();
        let mut skipped = Vec::new();
        let m_bytes = make_table(
            conn,
            connect,
            tables,
            "m",
            "create_narrow",
            eng,
            narrow_load("m", o.rows, seed),
            o.rows,
            progress,
        )
        .await?;
        let narrow = [
            ("count(*) WHERE i>0", "scan_count"),
            ("sum(i)", "scan_sum"),
            ("avg(i)", "scan_avg"),
            ("avg(i+sqrt(i+1)+abs(i))", "scan_avg_expr"),
        ];
        for (name, section) in narrow {
            if !sql.has(section) {
                skipped.push(format!(
                    "{name}: {} has no sqrt() (built without math functions)",
                    dialect.name()
                ));
                continue;
            }
            let q = sql.render(section, &[]);
            let (seconds, answer) = time_query(conn, &q, runs).await?;
            items.push(rate_item(name, &q, seconds, o.rows, m_bytes, mhz, answer));
            progress(&format!("{name}: done"));
        }
        if !o.common.keep {
            tables.drop(conn, "m").await?;
        }
        if o.wide_rows > 0 {
            let bytes = make_table(
                conn,
                connect,
                tables,
                "m4",
                "create_wide",
                eng,
                wide_load(o.wide_rows, seed.wrapping_add(1)),
                o.wide_rows,
                progress,
            )
            .await?;
            let q = sql.render("scan_wide", &[]);
            let (seconds, answer) = time_query(conn, &q, runs).await?;
            items.push(rate_item(
                "m4: count(*) WHERE c>'a'",
                &q,
                seconds,
                o.wide_rows,
                bytes,
                mhz,
                answer,
            ));
            if !o.common.keep {
                tables.drop(conn, "m4").await?;
            }
        }
        if o.loop_rows > 0 && o.loop_queries > 0 {
            let bytes = make_table(
                conn,
                connect,
                tables,
                "m1",
                "create_narrow",
                eng,
                narrow_load("m1", o.loop_rows, seed.wrapping_add(2)),
                o.loop_rows,
                progress,
            )
            .await?;
            let q = sql.render("scan_loop", &[]);
            let server_loop = match o.loop_mode {
                LoopMode::Server => true,
                LoopMode::Client => false,
                LoopMode::Auto => sql.has("create_scan_loop"),
            };
            if server_loop && !sql.has("create_scan_loop") {
                return Err(WorkloadError::InvalidOptions(format!(
                    "--loop-mode server: {} has no stored procedures (use --loop-mode client)",
                    dialect.name()
                )));
            }
            // What the server counted (MariaDB/MySQL): the loop's queries, however sent.
            let counted = async |conn: &mut Connection| -> Result<Option<u64>, WorkloadError> {
                if !sql.has("statements_counted") {
                    return Ok(None);
                }
                let rows = conn.query(sql.template("statements_counted"), &[]).await?;
                Ok(rows
                    .first()
                    .and_then(|r| r.get(1))
                    .and_then(Value::as_i64)
                    .map(|n| n as u64))
            };
            let mut seconds = Vec::new();
            let mut statements = None;
            let timed = if server_loop {
                // Seed 004's stored procedure (made and dropped untimed; one left by a dbrig
                // that died is replaced).
                conn.execute_text(sql.template("drop_scan_loop")).await?;
                conn.execute_text(sql.template("create_scan_loop")).await?;
                let call = sql.render("call_scan_loop", &[]);
                let n = [Value::Int(i64::from(o.loop_queries))];
                for _ in 0..runs {
                    let before = counted(conn).await?;
                    let started = Instant::now();
                    conn.execute_literal(&call, &n).await?;
                    seconds.push(started.elapsed().as_secs_f64());
                    let after = counted(conn).await?;
                    statements = before.zip(after).map(|(b, a)| a.saturating_sub(b));
                }
                conn.execute_text(sql.template("drop_scan_loop")).await?;
                call.replace('?', &o.loop_queries.to_string())
            } else {
                let stmt = conn.prepare(&q).await?;
                for _ in 0..runs {
                    let before = counted(conn).await?;
                    let started = Instant::now();
                    for _ in 0..o.loop_queries {
                        conn.execute(stmt, &[]).await?;
                    }
                    seconds.push(started.elapsed().as_secs_f64());
                    let after = counted(conn).await?;
                    statements = before.zip(after).map(|(b, a)| a.saturating_sub(b));
                }
                q.clone()
            };
            let answer = answer_text(&conn.query(&q, &[]).await?);
            let per_query_ms = seconds
                .iter()
                .map(|s| s * 1000.0 / f64::from(o.loop_queries))
                .collect();
            let rows = o.loop_rows * u64::from(o.loop_queries);
            let mut item = MicroItem::new(
                &format!(
                    "in-cache loop ({}): m1 ({} rows) count(*) WHERE i>0 x{}",
                    if server_loop {
                        "server-side procedure"
                    } else {
                        "client round trips"
                    },
                    o.loop_rows,
                    o.loop_queries
                ),
                &timed,
                "ms/query",
                per_query_ms,
                seconds,
                rows,
            )
            .with_rates(bytes.map(|b| b * u64::from(o.loop_queries)), mhz);
            item.server_statements = statements;
            item.answer = answer;
            items.push(item);
            if !o.common.keep {
                tables.drop(conn, "m1").await?;
            }
        }
        Ok(MicroResult {
            benchmark: "scan_filter".into(),
            dialect: dialect_name(dialect).into(),
            server_version: server_version.clone(),
            engine: engine.clone(),
            rows: o.rows,
            runs,
            seed,
            cpu_mhz: mhz,
            settings: settings.clone(),
            items,
            skipped,
        })
    };
    with_tables(conn, target, connect, o.common.keep, body).await
}

/// A scan item: rows/s per run, MB/s and cycles/row from the means.
fn rate_item(
    name: &str,
    sql: &str,
    seconds: Vec<f64>,
    rows: u64,
    bytes: Option<u64>,
    mhz: Option<f64>,
    answer: Option<String>,
) -> MicroItem {
    let rates = seconds.iter().map(|s| rows as f64 / s.max(1e-9)).collect();
    let mut item = MicroItem::new(name, sql, "rows/s", rates, seconds, rows).with_rates(bytes, mhz);
    item.answer = answer;
    item
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_item_is_rows_per_second_per_run() {
        let item = rate_item(
            "narrow",
            "SELECT …",
            vec![0.5, 2.0],
            1_000_000,
            Some(25_000_000),
            Some(3000.0),
            Some("42".into()),
        );
        assert_eq!(item.unit, "rows/s");
        assert_eq!(item.values, vec![2e6, 5e5]);
        // Mean run time 1.25 s: 800 000 rows/s, 20 MB/s, 3000e6 × 1.25 / 1e6 = 3750 cycles/row.
        assert_eq!(item.rows_per_s, Some(800_000.0));
        assert_eq!(item.mb_per_s, Some(20.0));
        assert_eq!(item.cycles_per_row, Some(3750.0));
        assert_eq!(item.answer.as_deref(), Some("42"));
    }
}
