//! Seed 003: GROUP BY queries that need an internal temporary table, seconds per query.

use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::limits;
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Dialect, Target};
use serde::{Deserialize, Serialize};

use super::{
    CommonOptions, MicroItem, MicroResult, Tables, after_load, answer_text, data, dialect_name,
    resolve_engine, setup_load, size_heap, sql_for, summary, with_tables,
};
use crate::error::WorkloadError;

/// Options of `tmp_groupby`.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct TmpGroupbyOptions {
    /// t1 holds 2^N rows (the seed: 21, i.e. 2 097 152 rows, about 1.2 GB of text).
    #[arg(long, default_value_t = 21, value_parser = limits::parse::<limits::RowsLog2>)]
    #[serde(deserialize_with = "limits::de::<limits::RowsLog2, _>")]
    pub rows_log2: u32,
    #[command(flatten)]
    #[serde(flatten)]
    pub common: CommonOptions,
}

impl Default for TmpGroupbyOptions {
    fn default() -> Self {
        Self {
            rows_log2: 21,
            common: CommonOptions::default(),
        }
    }
}

const QUERIES: [(&str, &str); 6] = [
    ("Q1", "q1"),
    ("Q2", "q2"),
    ("Q3", "q3"),
    ("Q4", "q4"),
    ("Q5", "q5"),
    ("Q6", "q6"),
];

/// Load t1(id, tea) with 2^k rows, then time Q1–Q6 `runs` times each.
pub async fn tmp_groupby(
    target: &Target,
    connect: &ConnectOptions,
    o: &TmpGroupbyOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<MicroResult, WorkloadError> {
    o.common.validate()?;
    let rows = 1u64 << o.rows_log2;
    let mut conn = Connection::connect(target, connect).await?;
    let dialect = conn.dialect();
    let engine = resolve_engine(&mut conn, o.common.engine.as_deref(), "MyISAM").await?;
    if engine.as_deref() == Some("MEMORY") {
        return Err(WorkloadError::InvalidOptions(
            "--engine MEMORY: MEMORY tables cannot hold TEXT columns (t1.tea); choose InnoDB, Aria or MyISAM"
                .into(),
        ));
    }
    let mut settings = Vec::new();
    if dialect == Dialect::Mysql {
        let sql = sql_for(dialect);
        conn.execute_text(sql.template("groupby_session")).await?;
        settings.push("sql_mode without ONLY_FULL_GROUP_BY".to_owned());
    }
    // The seed compares temporary-table engines at the server's own sizes: only an explicit
    // --max-heap-table-size changes them.
    if let Some(b) = size_heap(&mut conn, o.common.max_heap_table_size, 0).await? {
        settings.push(format!("max_heap_table_size = {b}"));
        settings.push(format!("tmp_table_size = {b}"));
    }
    let server_version = conn.server_version().to_owned();
    let body = async |conn: &mut Connection, tables: &mut Tables| {
        let sql = sql_for(dialect);
        let create = sql.render(
            "create_groupby",
            &[("table", "t1"), ("engine", engine.as_deref().unwrap_or(""))],
        );
        tables.create(conn, "t1", &[create]).await?;
        let started = Instant::now();
        // Untimed set-up (the GROUP BY queries are measured): the fastest bulk path.
        let loaded = setup_load(
            conn,
            connect,
            BulkLoad {
                table: "t1".into(),
                columns: vec!["id".into(), "tea".into()],
                rows: Box::new(
                    data::groupby_rows(rows, o.common.seed)
                        .map(|(id, tea)| vec![Value::Int(id), Value::Text(tea)]),
                ),
            },
        )
        .await?;
        after_load(conn, "t1").await?;
        progress(&format!(
            "loaded t1: {loaded} rows in {:.2} s",
            started.elapsed().as_secs_f64()
        ));
        let mut items = Vec::new();
        for (name, section) in QUERIES {
            let q = sql.render(section, &[]);
            let mut seconds = Vec::new();
            let mut answer = None;
            for _ in 0..o.common.runs {
                let started = Instant::now();
                let result = conn.query(&q, &[]).await?;
                seconds.push(started.elapsed().as_secs_f64());
                answer = Some(format!(
                    "{} groups; first: {}",
                    result.len(),
                    answer_text(&result).unwrap_or_default()
                ));
            }
            progress(&format!("{name}: {:.3} s", summary(&seconds).0));
            let mut item = MicroItem::new(name, &q, "s", seconds.clone(), seconds, rows);
            item.answer = answer;
            items.push(item);
        }
        Ok(MicroResult {
            benchmark: "tmp_groupby".into(),
            dialect: dialect_name(dialect).into(),
            server_version: server_version.clone(),
            engine: engine.clone(),
            rows,
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
