//! The power test: RF1, the queries in stream-0 order, RF2, on one connection, each timed in
//! microseconds; Power@Size from the timings.
//!
//! Refresh data (dbgen `-U` is not in tpchgen, so dbrig makes its own, deterministically):
//! the refresh *set* k (1..=1000) is 0.1 % of ORDERS, SF·1500 orders. RF1 of set k inserts the
//! orders and lineitems of part k of 1000 of tpchgen's ORDERS/LINEITEM generators with every
//! order key moved by +8: dbgen only uses the first 8 keys of every 32, so keys +8 fall in the
//! gaps (keys mod 32 in 8..16) and never collide with loaded data, and the new orders carry realistic lineitems
//! (1–7 each). RF2 of set k deletes the orders (and their lineitems) of part k of the loaded
//! data, i.e. a fixed 0.1 % of the original order keys. The set a run uses is the first k
//! whose RF1 keys are not in ORDERS yet, so repeated power runs use sets 1, 2, 3, …

use std::time::Instant;

use dbrig_core::Value;
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Target};
use tpchgen::generators::{LineItemGenerator, OrderGenerator};

use super::check::check_sf1_answer;
use super::data::{Table, lineitem_row, order_row};
use super::load::check_loaded;
use super::params::{ParamMode, QueryParams, substitute};
use super::queries::{QuerySet, returns_rows, split_statements};
use super::schema_sql;
use crate::error::WorkloadError;

/// Refresh sets per database (each is 0.1 % of ORDERS).
pub const REFRESH_SETS: u32 = 1000;
/// Order-key shift of RF1's new orders (into dbgen's unused key slots).
pub const RF1_KEY_SHIFT: i64 = 8;

/// How a query ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryStatus {
    Ok,
    Error,
    /// Ran, but its answer is not the reference answer.
    Wrong,
}

impl QueryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryStatus::Ok => "ok",
            QueryStatus::Error => "error",
            QueryStatus::Wrong => "wrong",
        }
    }
}

/// One timed step of the power test (a query, RF1 or RF2).
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueryOutcome {
    pub name: String,
    pub micros: u64,
    pub rows: u64,
    pub status: QueryStatus,
    pub error: Option<String>,
    /// The result rows (for answer checks; not stored).
    #[serde(skip)]
    pub result: Vec<Vec<Value>>,
}

impl QueryOutcome {
    pub fn seconds(&self) -> f64 {
        self.micros as f64 / 1e6
    }
}

/// What the power test does.
#[derive(Debug, Clone)]
pub struct PowerOptions {
    pub params: ParamMode,
    /// `None`: the built-in queries of the target's dialect.
    pub queries: Option<QuerySet>,
    /// Run RF1/RF2 around the queries.
    pub refresh: bool,
}

/// The power test's results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PowerReport {
    pub scale_factor: f64,
    pub refresh_set: Option<u32>,
    pub server_version: String,
    pub rf1: Option<QueryOutcome>,
    pub queries: Vec<QueryOutcome>,
    pub rf2: Option<QueryOutcome>,
    /// `None` when a query or refresh function failed.
    pub power_at_size: Option<f64>,
}

/// Power@Size = 3600·SF / (Π QI · Π RI)^(1/N), N the number of timings (24 for the standard
/// test); timings below max/1000 are raised to max/1000.
pub fn power_at_size(sf: f64, seconds: &[f64]) -> Option<f64> {
    if seconds.is_empty() {
        return None;
    }
    let max = seconds.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    let floor = max / 1000.0;
    let mean_ln = seconds.iter().map(|&s| s.max(floor).ln()).sum::<f64>() / seconds.len() as f64;
    Some(3600.0 * sf / mean_ln.exp())
}

/// The scale factor of loaded data, from SUPPLIER's row count (10 000·SF).
pub async fn detect_scale_factor(conn: &mut Connection) -> Result<f64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    let rows = conn
        .query(&sql.render("count_rows", &[("table", "supplier")]), &[])
        .await?;
    let n = rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(0);
    Ok(n as f64 / 10_000.0)
}

/// The order keys RF2 of set `k` deletes (part k of the loaded ORDERS).
pub fn rf2_keys(sf: f64, set: u32) -> Vec<i64> {
    OrderGenerator::new(sf, set as i32, REFRESH_SETS as i32)
        .iter()
        .map(|o| o.o_orderkey)
        .collect()
}

/// RF1's rows of set `k`: (orders, lineitems).
pub fn rf1_rows(sf: f64, set: u32) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
    let (p, n) = (set as i32, REFRESH_SETS as i32);
    let orders = OrderGenerator::new(sf, p, n)
        .iter()
        .map(|o| order_row(&o, RF1_KEY_SHIFT))
        .collect();
    let lines = LineItemGenerator::new(sf, p, n)
        .iter()
        .map(|l| lineitem_row(&l, RF1_KEY_SHIFT))
        .collect();
    (orders, lines)
}

/// The first refresh set whose RF1 orders are not in the database yet.
async fn next_refresh_set(conn: &mut Connection, sf: f64) -> Result<u32, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    for k in 1..=REFRESH_SETS {
        let Some(first) = rf2_keys(sf, k).first().copied() else {
            break;
        };
        let present = conn
            .query(
                &sql.render("order_exists", &[]),
                &[Value::Int(first + RF1_KEY_SHIFT)],
            )
            .await?;
        if present.is_empty() {
            return Ok(k);
        }
    }
    Err(WorkloadError::InvalidOptions(format!(
        "all {REFRESH_SETS} refresh sets have been used on {}: reload the data (`dbrig tpch cleanup` then `dbrig tpch load`)",
        conn.target()
    )))
}

async fn rf1(conn: &mut Connection, sf: f64, set: u32) -> Result<u64, WorkloadError> {
    let (orders, lines) = rf1_rows(sf, set);
    let mut n = 0;
    for (table, rows) in [(Table::Orders, orders), (Table::LineItem, lines)] {
        n += conn
            .bulk_load(BulkLoad {
                table: table.name().into(),
                columns: table.columns().iter().map(|s| (*s).to_owned()).collect(),
                rows: Box::new(rows.into_iter()),
            })
            .await?;
    }
    Ok(n)
}

async fn rf2(conn: &mut Connection, sf: f64, set: u32) -> Result<u64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    let keys = rf2_keys(sf, set);
    let mut n = 0;
    conn.execute_text(sql.template("begin")).await?;
    for chunk in keys.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let params: Vec<Value> = chunk.iter().map(|&k| Value::Int(k)).collect();
        for section in ["rf2_delete_lineitem", "rf2_delete_orders"] {
            let stmt = conn
                .prepare(&sql.render(section, &[("keys", &marks)]))
                .await?;
            n += conn.execute(stmt, &params).await?.rows;
        }
    }
    conn.execute_text(sql.template("commit")).await?;
    Ok(n)
}

async fn timed_refresh(
    name: &str,
    f: impl std::future::Future<Output = Result<u64, WorkloadError>>,
) -> QueryOutcome {
    let started = Instant::now();
    let r = f.await;
    let micros = started.elapsed().as_micros() as u64;
    match r {
        Ok(rows) => QueryOutcome {
            name: name.into(),
            micros,
            rows,
            status: QueryStatus::Ok,
            error: None,
            result: Vec::new(),
        },
        Err(e) => QueryOutcome {
            name: name.into(),
            micros,
            rows: 0,
            status: QueryStatus::Error,
            error: Some(e.to_string()),
            result: Vec::new(),
        },
    }
}

/// Run one query's statements (rendered), timing all of them; the result is the last result
/// set. After a failure, the remaining statements that return no rows (Q15's DROP VIEW) still
/// run, untimed, so the next query is not disturbed.
pub async fn run_query(conn: &mut Connection, name: &str, sql: &str) -> QueryOutcome {
    let statements = split_statements(sql);
    let started = Instant::now();
    let mut result = Vec::new();
    let mut error = None;
    let mut failed_at = statements.len();
    for (i, s) in statements.iter().enumerate() {
        let r = if returns_rows(s) {
            conn.query(s, &[]).await.map(|rows| result = rows)
        } else {
            conn.execute_text(s).await.map(|_| ())
        };
        if let Err(e) = r {
            error = Some(e.to_string());
            failed_at = i;
            break;
        }
    }
    let micros = started.elapsed().as_micros() as u64;
    for s in statements.iter().skip(failed_at + 1) {
        if !returns_rows(s) {
            let _ = conn.execute_text(s).await;
        }
    }
    QueryOutcome {
        name: name.into(),
        micros,
        rows: result.len() as u64,
        status: if error.is_some() {
            QueryStatus::Error
        } else {
            QueryStatus::Ok
        },
        error,
        result,
    }
}

/// Run the power test. A query that fails is recorded as an error and the test goes on.
pub async fn power_test(
    target: &Target,
    connect: &ConnectOptions,
    options: &PowerOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<PowerReport, WorkloadError> {
    let mut conn = Connection::connect(target, connect).await?;
    check_loaded(&mut conn).await?;
    let sf = detect_scale_factor(&mut conn).await?;
    if sf <= 0.0 {
        return Err(WorkloadError::InvalidOptions(format!(
            "the TPC-H tables on {target} are empty: run `dbrig tpch load` first"
        )));
    }
    let set = if options.refresh {
        Some(next_refresh_set(&mut conn, sf).await?)
    } else {
        None
    };
    let queries = options
        .queries
        .clone()
        .unwrap_or_else(|| QuerySet::builtin(conn.dialect()));

    let rf1_outcome = match set {
        Some(k) => {
            let o = timed_refresh("RF1", rf1(&mut conn, sf, k)).await;
            progress(&format!(
                "RF1 (set {k}): {:.3} s {}",
                o.seconds(),
                o.status.as_str()
            ));
            Some(o)
        }
        None => None,
    };
    let mut outcomes = Vec::new();
    for q in &queries.queries {
        let text = match q.number {
            Some(n) => substitute(&q.template, &QueryParams::new(n, 0, sf, options.params)),
            None => q.template.clone(),
        };
        let mut o = run_query(&mut conn, &q.name, &text).await;
        // With validation parameters on SF1 data the reference answers apply.
        if o.status == QueryStatus::Ok
            && options.params == ParamMode::Validation
            && (sf - 1.0).abs() < 1e-9
            && options.queries.is_none()
            && let Some(n) = q.number
        {
            let c = check_sf1_answer(n, &o.result);
            if !c.ok {
                o.status = QueryStatus::Wrong;
                o.error = c.detail;
            }
        }
        progress(&format!(
            "Q{}: {:.3} s, {} rows, {}{}",
            q.name,
            o.seconds(),
            o.rows,
            o.status.as_str(),
            o.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
        outcomes.push(o);
    }
    let rf2_outcome = match set {
        Some(k) => {
            let o = timed_refresh("RF2", rf2(&mut conn, sf, k)).await;
            progress(&format!(
                "RF2 (set {k}): {:.3} s {}",
                o.seconds(),
                o.status.as_str()
            ));
            Some(o)
        }
        None => None,
    };
    let all: Vec<&QueryOutcome> = rf1_outcome
        .iter()
        .chain(&outcomes)
        .chain(rf2_outcome.iter())
        .collect();
    let power = if all.iter().all(|o| o.status != QueryStatus::Error) {
        power_at_size(sf, &all.iter().map(|o| o.seconds()).collect::<Vec<_>>())
    } else {
        None
    };
    let server_version = conn.server_version().to_owned();
    conn.close().await;
    Ok(PowerReport {
        scale_factor: sf,
        refresh_set: set,
        server_version,
        rf1: rf1_outcome,
        queries: outcomes,
        rf2: rf2_outcome,
        power_at_size: power,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_formula() {
        // 24 timings of 1 s at SF 1: 3600.
        let p = power_at_size(1.0, &[1.0; 24]).unwrap();
        assert!((p - 3600.0).abs() < 1e-6);
        // A tiny timing is raised to max/1000.
        let mut t = vec![1.0; 23];
        t.push(1e-9);
        let p = power_at_size(1.0, &t).unwrap();
        let expected = 3600.0 / (0.001f64.ln() / 24.0).exp();
        assert!((p - expected).abs() < 1e-6);
    }

    #[test]
    fn refresh_sets_are_deterministic_and_disjoint() {
        let sf = 0.01;
        assert_eq!(rf2_keys(sf, 1), rf2_keys(sf, 1));
        assert_eq!(rf2_keys(sf, 1).len(), 15);
        assert_ne!(rf2_keys(sf, 1), rf2_keys(sf, 2));
        let (orders, lines) = rf1_rows(sf, 1);
        assert_eq!(orders, rf1_rows(sf, 1).0);
        assert_eq!(orders.len(), 15);
        assert!(!lines.is_empty() && lines.len() <= 15 * 7);
        // RF1 keys fall in dbgen's unused key slots: never a loaded order key.
        let loaded: std::collections::HashSet<i64> = Table::Orders
            .rows(sf, 1, 1)
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        for o in &orders {
            let k = o[0].as_i64().unwrap();
            assert!(!loaded.contains(&k), "{k}");
            assert!((8..16).contains(&(k % 32)), "{k}");
        }
        for k in rf2_keys(sf, 3) {
            assert!(loaded.contains(&k));
        }
    }
}
