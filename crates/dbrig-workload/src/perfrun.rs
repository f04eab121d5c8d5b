//! `dbrig perfrun`'s measuring part: run one query on one side and record its time, rows,
//! result checksums and the server's counters around it (RQG's perfrun, seed `002_…`).
//!
//! * MariaDB/MySQL: `SHOW SESSION STATUS` and `SHOW GLOBAL STATUS LIKE 'Innodb_%'` before and
//!   after the query, on the query's own connection. Kept: numeric session counters except
//!   `Com_*`, `Uptime*`, `Opened_files`, `Ssl_*`, `Qcache_*`, gauges (`Threads_*`, `Open_*`,
//!   `Memory_used*`, …), InnoDB's background values (`Innodb_lsn_*`, checkpoints, master
//!   thread loops), what the SHOWs themselves change by varying amounts (`Bytes_*`:
//!   their output's length varies with the digits; `Query_time`, which the execution time
//!   already gives) and the session's copy of `Innodb_*`; plus every numeric global
//!   `Innodb_*`. The SHOWs themselves bump some counters (a SHOW reads its rows through a
//!   temporary table: `Handler_read_rnd_next`, `Created_tmp_tables`, `Rows_sent`…), so a
//!   baseline — the same before/after sequence with no query between — is subtracted where
//!   it is the same in five samples. Counters that moved by varying amounts (global ones such
//!   as `Innodb_*`, moved by other sessions) get no baseline: their deltas include whatever
//!   other sessions did meanwhile (compare on a quiet server). `Queries` (server-wide in
//!   MariaDB) is dropped; `Questions` is the session's.
//! * PostgreSQL has no per-session counters of that kind: after the timed execution the
//!   query runs once more as `EXPLAIN (ANALYZE, BUFFERS)`, and that plan's buffer counts,
//!   planning/execution times and row estimate are the counters. So a "cold" execution's
//!   counters come from the execution right after it (the timed one has warmed the cache).
//!   Where the server preloads `pg_stat_statements` (`shared_preload_libraries`), its
//!   per-statement counters of the timed execution itself are added as `pgss_*`
//!   (`pgss_shared_blks_hit`, `pgss_temp_blks_written`, …): the query's `queryid` comes
//!   from a plain `EXPLAIN (VERBOSE)` before the execution (planned, not run), and the
//!   view's row for it is read before and after. Without the extension this is said once
//!   ([`PerfSide::note`]) and the EXPLAIN counters stand alone.
//!
//! Time is wall time around execute + fetch of all rows, in microseconds.

use std::collections::BTreeMap;
use std::time::Instant;

use dbrig_core::Value;
use dbrig_driver::{Connection, Dialect, DriverError, ErrorKind};

use crate::error::WorkloadError;

pub use dbrig_core::results::perfrun::Execution;

type Status = BTreeMap<String, f64>;

/// One side of a perfrun: a connection and what its counters look like.
pub struct PerfSide {
    conn: Connection,
    baseline: Status,
    names: Vec<String>,
    /// PostgreSQL with pg_stat_statements: the view's additive numeric columns.
    stat_statements: Option<Vec<String>>,
    note: Option<String>,
}

/// perfrun's PostgreSQL statements (pg_stat_statements, EXPLAIN ANALYZE), parsed once.
fn pg_sql() -> &'static crate::sql::SqlSet {
    static SQL: std::sync::OnceLock<crate::sql::SqlSet> = std::sync::OnceLock::new();
    SQL.get_or_init(|| crate::sql::SqlSet::new(Dialect::Postgres, "", include_str!("perfrun.sql")))
}

/// perfrun's MariaDB/MySQL statements (the status counters), parsed once.
fn mysql_sql() -> &'static crate::sql::SqlSet {
    static SQL: std::sync::OnceLock<crate::sql::SqlSet> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        crate::sql::SqlSet::new(Dialect::Mysql, "", include_str!("perfrun_mysql.sql"))
    })
}

/// Counter-name prefix of pg_stat_statements' columns.
pub const STAT_STATEMENTS_PREFIX: &str = "pgss_";

/// pg_stat_statements columns that are not per-execution additive counts.
fn stat_statements_column_kept(c: &str) -> bool {
    !matches!(c, "userid" | "dbid" | "queryid")
        && !["min_", "max_", "mean_", "stddev_"]
            .iter()
            .any(|p| c.starts_with(p))
}

/// The `Query Identifier` line of an `EXPLAIN (VERBOSE)` plan.
pub fn query_identifier(plan: &[String]) -> Option<i64> {
    plan.iter().find_map(|l| {
        l.trim()
            .strip_prefix("Query Identifier:")
            .and_then(|v| v.trim().parse().ok())
    })
}

/// Session counters that are not per-query: configuration-like gauges and totals.
fn excluded_session_counter(name: &str) -> bool {
    const PREFIXES: [&str; 9] = [
        "Com_", "Bytes_", "Ssl_", "Qcache_", "Innodb_", "Aborted_", "Rpl_", "Slave", "Uptime",
    ];
    const NAMES: [&str; 4] = ["Opened_files", "Queries", "Query_time", "Connections"];
    status_gauge(name) || PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

/// MariaDB/MySQL status values that are levels, not counts (threads, open tables, memory,
/// buffer pool pages, uptime): their difference over an interval is no amount of work. Left
/// out of perfrun's deltas and of the counters sampled per interval during a trial.
pub fn status_gauge(name: &str) -> bool {
    const PREFIXES: [&str; 10] = [
        "Uptime",
        "Threads_",
        "Open_",
        "Memory_used",
        "Max_used_connections",
        "Innodb_buffer_pool_pages_",
        "Innodb_buffer_pool_bytes_",
        "Innodb_page_size",
        "Innodb_history_list_length",
        "Innodb_max_trx_id",
    ];
    const NAMES: [&str; 8] = [
        "Max_memory_used",
        "Prepared_stmt_count",
        "Innodb_row_lock_current_waits",
        "Innodb_row_lock_time_avg",
        "Innodb_row_lock_time_max",
        "Last_query_cost",
        "Binlog_snapshot_position",
        "Tc_log_page_size",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

/// Global InnoDB values that background threads move, whatever the query: log sequence
/// numbers, checkpoints, the master thread's loops.
pub fn background_innodb_counter(name: &str) -> bool {
    const PREFIXES: [&str; 6] = [
        "Innodb_lsn_",
        "Innodb_checkpoint_",
        "Innodb_master_thread_",
        "Innodb_background_log_sync",
        "Innodb_max_trx_id",
        "Innodb_history_list_length",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The counters of `EXPLAIN (ANALYZE, BUFFERS)` on PostgreSQL.
pub const POSTGRES_COUNTERS: [&str; 15] = [
    "Shared_Hit_Blocks",
    "Shared_Read_Blocks",
    "Shared_Dirtied_Blocks",
    "Shared_Written_Blocks",
    "Local_Hit_Blocks",
    "Local_Read_Blocks",
    "Local_Dirtied_Blocks",
    "Local_Written_Blocks",
    "Temp_Read_Blocks",
    "Temp_Written_Blocks",
    "Planning_Shared_Hit_Blocks",
    "Planning_Shared_Read_Blocks",
    "Planning_Time_ms",
    "Explain_Execution_Time_ms",
    "Plan_Rows",
];

impl PerfSide {
    /// Take over a connection (opened with `prepared: false`: queries go as text) and measure
    /// the counters' baseline.
    pub async fn open(conn: Connection) -> Result<PerfSide, DriverError> {
        let mut side = PerfSide {
            conn,
            baseline: Status::new(),
            names: Vec::new(),
            stat_statements: None,
            note: None,
        };
        match side.conn.dialect() {
            Dialect::Mysql => {
                let mut seen: Vec<Status> = Vec::new();
                for _ in 0..BASELINE_SAMPLES {
                    let before = side.mysql_status().await?;
                    let after = side.mysql_status().await?;
                    seen.push(delta(&before, &after));
                    side.names = after.keys().cloned().collect();
                }
                side.baseline = stable_baseline(&seen);
            }
            Dialect::Postgres => {
                side.names = POSTGRES_COUNTERS.iter().map(|s| s.to_string()).collect();
                match side.stat_statements_columns().await {
                    Ok(Some(columns)) => {
                        side.names.extend(
                            columns
                                .iter()
                                .map(|c| format!("{STAT_STATEMENTS_PREFIX}{c}")),
                        );
                        side.stat_statements = Some(columns);
                    }
                    Ok(None) => {
                        side.note = Some(
                            "pg_stat_statements is not loaded (not in shared_preload_libraries): \
                             PostgreSQL counters come from EXPLAIN (ANALYZE, BUFFERS) only"
                                .into(),
                        )
                    }
                    Err(e) => {
                        side.note = Some(format!(
                            "pg_stat_statements is preloaded but cannot be used ({}): \
                             PostgreSQL counters come from EXPLAIN (ANALYZE, BUFFERS) only",
                            error_text(&e)
                        ))
                    }
                }
            }
            Dialect::Sqlite => {}
        }
        Ok(side)
    }

    /// Something to say once about this side's counters (e.g. pg_stat_statements missing).
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Whether pg_stat_statements' counters are collected.
    pub fn has_stat_statements(&self) -> bool {
        self.stat_statements.is_some()
    }

    /// pg_stat_statements' counter columns when the server preloads it (the extension is
    /// created in the database if it is not there yet); `None` when it is not preloaded.
    async fn stat_statements_columns(&mut self) -> Result<Option<Vec<String>>, DriverError> {
        let sql = pg_sql();
        let preload = self
            .conn
            .query(sql.template("preload_libraries"), &[])
            .await?;
        let loaded = preload
            .first()
            .and_then(|r| r.first())
            .and_then(Value::to_text)
            .is_some_and(|v| v.split(',').any(|l| l.trim() == "pg_stat_statements"));
        if !loaded {
            return Ok(None);
        }
        self.conn
            .execute_text(sql.template("create_stat_statements"))
            .await?;
        let rows = self
            .conn
            .query(sql.template("stat_statements_columns"), &[])
            .await?;
        Ok(Some(
            rows.into_iter()
                .filter_map(|r| r.into_iter().next().and_then(|v| v.to_text()))
                .filter(|c| stat_statements_column_kept(c))
                .collect(),
        ))
    }

    /// The query's row of pg_stat_statements (summed over top-level and nested entries), as
    /// `pgss_*` counters; zeros when the view has no row for it yet.
    async fn stat_statements_row(&mut self, queryid: i64) -> Result<Status, DriverError> {
        let sql = pg_sql();
        let rows = self
            .conn
            .query(
                &sql.render("stat_statements_row", &[]),
                &[Value::Int(queryid)],
            )
            .await?;
        let mut out = Status::new();
        for c in self.stat_statements.iter().flatten() {
            out.insert(format!("{STAT_STATEMENTS_PREFIX}{c}"), 0.0);
        }
        for r in rows {
            let Some(text) = r.into_iter().next().and_then(|v| v.to_text()) else {
                continue;
            };
            let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&text) else {
                continue;
            };
            for c in self.stat_statements.iter().flatten() {
                if let Some(v) = m.get(c).and_then(serde_json::Value::as_f64) {
                    *out.entry(format!("{STAT_STATEMENTS_PREFIX}{c}"))
                        .or_default() += v;
                }
            }
        }
        Ok(out)
    }

    /// The queryid pg_stat_statements files the query under (planned, not executed).
    async fn queryid(&mut self, query: &str) -> Result<Option<i64>, DriverError> {
        let explain = format!("{} {query}", pg_sql().template("query_identifier"));
        let plan: Vec<String> = self
            .conn
            .query(&explain, &[])
            .await?
            .into_iter()
            .filter_map(|r| r.into_iter().next().and_then(|v| v.to_text()))
            .collect();
        Ok(query_identifier(&plan))
    }

    /// Run a statement untimed and unmeasured (a query's setup or teardown, such as TPC-H
    /// Q15's view).
    pub async fn run_untimed(&mut self, sql: &str) -> Result<(), DriverError> {
        self.conn.execute_text(sql).await.map(|_| ())
    }

    /// Every counter this side reports.
    pub fn counter_names(&self) -> &[String] {
        &self.names
    }

    pub fn server_version(&self) -> &str {
        self.conn.server_version()
    }

    pub fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }

    /// Run the query once, measured. Errors are recorded in the result, never returned: the
    /// run goes on with the next execution.
    pub async fn execute(&mut self, sql: &str) -> Execution {
        let mut out = Execution::default();
        let before = match self.conn.dialect() {
            Dialect::Mysql => match self.mysql_status().await {
                Ok(s) => Some(s),
                Err(e) => {
                    out.counter_error = Some(error_text(&e));
                    None
                }
            },
            _ => None,
        };
        // pg_stat_statements: the query's row before (its queryid from the plan).
        let mut pgss_before: Option<(i64, Status)> = None;
        if self.stat_statements.is_some() {
            match self.queryid(sql).await {
                Ok(Some(id)) => match self.stat_statements_row(id).await {
                    Ok(row) => pgss_before = Some((id, row)),
                    Err(e) => out.counter_error = Some(error_text(&e)),
                },
                Ok(None) => {
                    out.counter_error = Some(
                        "pg_stat_statements: the plan shows no query identifier (compute_query_id is off)"
                            .into(),
                    )
                }
                Err(e) => out.counter_error = Some(error_text(&e)),
            }
        }
        let start = Instant::now();
        let result = self.conn.query(sql, &[]).await;
        let elapsed = start.elapsed();
        let rows = match result {
            Ok(rows) => rows,
            Err(e) => {
                out.error = Some(error_text(&e));
                if e.kind == ErrorKind::ConnectionLost {
                    // Later queries need a connection; this one stays failed.
                    let _ = self.conn.reconnect().await;
                }
                return out;
            }
        };
        out.time_us = Some(elapsed.as_micros() as u64);
        out.rows = Some(rows.len() as u64);
        let (ordered, unordered) = checksums(&rows);
        out.checksum = Some(ordered);
        out.checksum_unordered = Some(unordered);
        out.answer = (rows.len() <= dbrig_core::results::perfrun::MAX_ANSWER_ROWS)
            .then(|| dbrig_core::answers::normalize(&rows));
        // Read right after the timed execution: the EXPLAIN ANALYZE below is not in it.
        if let Some((id, before)) = pgss_before {
            match self.stat_statements_row(id).await {
                Ok(after) => out.counters.extend(
                    delta(&before, &after)
                        .into_iter()
                        .filter(|(_, v)| *v != 0.0),
                ),
                Err(e) => out.counter_error = Some(error_text(&e)),
            }
        }
        match self.conn.dialect() {
            Dialect::Mysql => {
                if let Some(before) = before {
                    match self.mysql_status().await {
                        Ok(after) => {
                            out.counters = delta(&before, &after)
                                .into_iter()
                                .map(|(k, v)| {
                                    let base = self.baseline.get(&k).copied().unwrap_or(0.0);
                                    (k, v - base)
                                })
                                .filter(|(_, v)| *v != 0.0)
                                .collect();
                        }
                        Err(e) => out.counter_error = Some(error_text(&e)),
                    }
                }
            }
            Dialect::Postgres => {
                match self
                    .conn
                    .query(
                        &pg_sql().template("explain_analyze").replace("{query}", sql),
                        &[],
                    )
                    .await
                {
                    Ok(plan) => {
                        let lines: Vec<String> = plan
                            .into_iter()
                            .filter_map(|r| r.into_iter().next().and_then(|v| v.to_text()))
                            .collect();
                        out.counters
                            .extend(parse_explain(&lines).into_iter().filter(|(_, v)| *v != 0.0));
                    }
                    Err(e) => out.counter_error = Some(error_text(&e)),
                }
            }
            Dialect::Sqlite => {}
        }
        out
    }

    pub async fn close(self) {
        self.conn.close().await
    }

    /// The per-query session counters and the global `Innodb_*` ones.
    async fn mysql_status(&mut self) -> Result<Status, DriverError> {
        let mut status = Status::new();
        let sql = mysql_sql();
        let session = self.conn.query(sql.template("session_status"), &[]).await?;
        for (name, value) in name_values(session) {
            if !excluded_session_counter(&name) {
                status.insert(name, value);
            }
        }
        let global = self.conn.query(sql.template("innodb_status"), &[]).await?;
        status.extend(name_values(global).filter(|(n, _)| !background_innodb_counter(n)));
        Ok(status)
    }
}

/// The server's message (it already names the error code), without the statement.
fn error_text(e: &DriverError) -> String {
    match &e.code {
        Some(code) if !e.message.contains(code.as_str()) => format!("{} (code {code})", e.message),
        _ => e.message.clone(),
    }
}

/// Numeric (name, value) rows of a SHOW STATUS (or any query of that shape).
pub fn name_values(rows: Vec<Vec<Value>>) -> impl Iterator<Item = (String, f64)> {
    rows.into_iter().filter_map(|r| {
        let mut it = r.into_iter();
        let name = it.next()?.to_text()?;
        let value = it.next()?.as_f64()?;
        Some((name, value))
    })
}

/// How many empty before/after sequences the baseline is measured on.
const BASELINE_SAMPLES: usize = 5;

/// What the SHOWs themselves add to each counter: kept only where every sample agrees. A
/// counter that moved by different amounts was moved by other sessions too (a global value):
/// nothing is subtracted from it, and its deltas include the other sessions' work.
fn stable_baseline(samples: &[Status]) -> Status {
    let Some(first) = samples.first() else {
        return Status::new();
    };
    first
        .iter()
        .filter(|(k, v)| **v != 0.0 && samples.iter().all(|s| s.get(*k) == Some(*v)))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// Each counter of `after` less its value in `before` (0 where `before` lacks it).
pub fn delta(before: &Status, after: &Status) -> Status {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect()
}

fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x0100_0000_01b3);
    }
}

/// (ordered, order-insensitive) checksums of a result set. Values are hashed as their text
/// (so an integer 1 and a text "1" are the same), NULL distinctly.
pub fn checksums(rows: &[Vec<Value>]) -> (String, String) {
    const SEED: u64 = 0xcbf2_9ce4_8422_2325;
    let mut ordered = SEED;
    let mut unordered: u64 = 0;
    for row in rows {
        let mut h = SEED;
        for v in row {
            match v.to_text() {
                None => fnv1a(&mut h, &[0xff, 0x00]),
                Some(t) => {
                    fnv1a(&mut h, t.as_bytes());
                    fnv1a(&mut h, &[0x1f]);
                }
            }
        }
        fnv1a(&mut h, &[0x1e]);
        fnv1a(&mut ordered, &h.to_le_bytes());
        unordered = unordered.wrapping_add(h);
    }
    (format!("{ordered:016x}"), format!("{unordered:016x}"))
}

/// The counters of a text-format `EXPLAIN (ANALYZE, BUFFERS)`: the top node's buffers (which
/// include its children's), the planning buffers, both times and the top node's row estimate.
pub fn parse_explain(lines: &[String]) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Some(first) = lines.first()
        && let Some(est) = first.split("(cost=").nth(1)
        && let Some(rows) = est.split(" rows=").nth(1)
        && let Some(n) = rows.split_whitespace().next()
        && let Ok(n) = n.parse::<f64>()
    {
        out.insert("Plan_Rows".into(), n);
    }
    let mut in_planning = false;
    let mut top_done = false;
    for line in lines.iter().skip(1) {
        let t = line.trim();
        if t.starts_with("->") {
            top_done = true;
        }
        if t == "Planning:" {
            in_planning = true;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Buffers:") {
            if in_planning {
                for (k, v) in parse_buffers(rest) {
                    if k.starts_with("Shared_") {
                        out.insert(format!("Planning_{k}"), v);
                    }
                }
                in_planning = false;
            } else if !top_done {
                out.extend(parse_buffers(rest));
                top_done = true;
            }
        } else if let Some(ms) = t.strip_prefix("Planning Time:") {
            out.insert("Planning_Time_ms".into(), parse_ms(ms));
        } else if let Some(ms) = t.strip_prefix("Execution Time:") {
            out.insert("Explain_Execution_Time_ms".into(), parse_ms(ms));
        }
    }
    out
}

fn parse_ms(s: &str) -> f64 {
    s.trim()
        .trim_end_matches("ms")
        .trim()
        .parse()
        .unwrap_or(f64::NAN)
}

/// `shared hit=5 read=3, temp read=1 written=1` → `Shared_Hit_Blocks` = 5, …
fn parse_buffers(s: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for group in s.split(',') {
        let mut words = group.split_whitespace();
        let Some(kind) = words.next() else { continue };
        for kv in words {
            if let Some((k, v)) = kv.split_once('=')
                && let Ok(v) = v.parse::<f64>()
            {
                out.push((format!("{}_{}_Blocks", capitalize(kind), capitalize(k)), v));
            }
        }
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_tell_order_from_content() {
        let r = |a: i64, b: &str| vec![Value::Int(a), Value::Text(b.into())];
        let x = checksums(&[r(1, "a"), r(2, "b")]);
        let y = checksums(&[r(2, "b"), r(1, "a")]);
        let z = checksums(&[r(1, "a"), r(2, "c")]);
        assert_ne!(x.0, y.0);
        assert_eq!(x.1, y.1);
        assert_ne!(x.1, z.1);
        // Int 1 and text "1" are the same value; NULL is not the empty text.
        assert_eq!(
            checksums(&[vec![Value::Int(1)]]),
            checksums(&[vec![Value::Text("1".into())]])
        );
        assert_ne!(
            checksums(&[vec![Value::Null]]),
            checksums(&[vec![Value::Text(String::new())]])
        );
    }

    #[test]
    fn query_identifier_is_read_from_a_verbose_plan() {
        let plan = [
            "Aggregate  (cost=1.05..1.06 rows=1 width=8)".to_owned(),
            "  Output: count(*)".to_owned(),
            "Query Identifier: -3213467129931224617".to_owned(),
        ];
        assert_eq!(query_identifier(&plan), Some(-3213467129931224617));
        assert_eq!(query_identifier(&plan[..2]), None);
        assert!(stat_statements_column_kept("shared_blks_hit"));
        assert!(!stat_statements_column_kept("queryid"));
        assert!(!stat_statements_column_kept("mean_exec_time"));
    }

    #[test]
    fn explain_counters_are_read() {
        let plan = [
            "Hash Join  (cost=1.09..2.21 rows=4 width=8) (actual time=0.030..0.034 rows=4 loops=1)",
            "  Hash Cond: (a.id = b.id)",
            "  Buffers: shared hit=2 read=1, temp read=3 written=3",
            "  ->  Seq Scan on a  (cost=0.00..1.04 rows=4 width=8) (actual time=0.006..0.007 rows=4 loops=1)",
            "        Buffers: shared hit=1",
            "Planning:",
            "  Buffers: shared hit=12 read=2",
            "Planning Time: 0.214 ms",
            "Execution Time: 0.061 ms",
        ]
        .map(String::from);
        let c = parse_explain(&plan);
        assert_eq!(c["Plan_Rows"], 4.0);
        assert_eq!(c["Shared_Hit_Blocks"], 2.0);
        assert_eq!(c["Shared_Read_Blocks"], 1.0);
        assert_eq!(c["Temp_Written_Blocks"], 3.0);
        assert_eq!(c["Planning_Shared_Hit_Blocks"], 12.0);
        assert_eq!(c["Planning_Time_ms"], 0.214);
        assert_eq!(c["Explain_Execution_Time_ms"], 0.061);
        assert!(
            c.keys().all(|k| POSTGRES_COUNTERS.contains(&k.as_str())),
            "{c:?}"
        );
    }

    #[test]
    fn baseline_keeps_only_stable_counters() {
        let s = |pairs: &[(&str, f64)]| -> Status {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        let samples = [
            s(&[("Handler_read_rnd_next", 600.0), ("Innodb_rows_read", 3.0)]),
            s(&[("Handler_read_rnd_next", 600.0), ("Innodb_rows_read", 90.0)]),
        ];
        assert_eq!(
            stable_baseline(&samples),
            s(&[("Handler_read_rnd_next", 600.0)])
        );
    }

    #[test]
    fn session_counters_that_are_not_per_query_are_dropped() {
        for n in [
            "Com_select",
            "Uptime",
            "Ssl_accepts",
            "Qcache_hits",
            "Opened_files",
        ] {
            assert!(excluded_session_counter(n), "{n}");
        }
        for n in ["Handler_read_rnd_next", "Rows_read", "Created_tmp_tables"] {
            assert!(!excluded_session_counter(n), "{n}");
        }
    }
}

// ---- what a perfrun trial runs ----------------------------------------------------------------

/// The options of a perfrun workload: where the queries come from (a folder of `.sql` files,
/// or TPC-H's 22 with validation parameters) and the filter a report applies by default.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PerfrunOptions {
    /// A folder of queries, one per `.sql` file, run in name order.
    #[serde(default)]
    pub queries: Option<std::path::PathBuf>,
    /// TPC-H's 22 queries with their validation parameters, in each target's dialect (the
    /// data must be loaded: `dbrig tpch load`).
    #[serde(default)]
    pub tpch: bool,
    /// Keep only matching query/temperature pairs in reports (pairs where a side failed
    /// always show), e.g. `execution_time_a > 0.1 and temperature == "warm"`.
    #[serde(default)]
    pub filter: Option<String>,
}

impl PerfrunOptions {
    /// Checks the query source (a readable folder with queries, or TPC-H, not both).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match (&self.queries, self.tpch) {
            (Some(_), true) => Err(WorkloadError::InvalidOptions(
                "perfrun: give either queries = DIR or tpch = true, not both".into(),
            )),
            (None, false) => Err(WorkloadError::InvalidOptions(
                "perfrun needs queries = DIR (a folder with one query per .sql file) or tpch = true"
                    .into(),
            )),
            (Some(dir), false) => read_queries(dir).map(|_| ()),
            (None, true) => Ok(()),
        }
    }

    /// Where the queries come from, as reports show it.
    pub fn source(&self) -> String {
        match &self.queries {
            Some(dir) => dir.display().to_string(),
            None => "TPC-H (22 queries, validation parameters)".to_owned(),
        }
    }
}

/// A query of the folder (or of TPC-H): untimed setup, the timed statement, untimed teardown.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfQueryFile {
    pub file: String,
    pub setup: Vec<String>,
    pub sql: String,
    pub teardown: Vec<String>,
}

impl PerfQueryFile {
    fn plain(file: String, sql: String) -> Self {
        PerfQueryFile {
            file,
            setup: Vec::new(),
            sql,
            teardown: Vec::new(),
        }
    }

    /// A multi-statement query (TPC-H Q15's view): the last statement returning rows is timed.
    fn split(file: String, text: &str) -> Result<Self, WorkloadError> {
        let statements = crate::tpch::split_statements(text);
        let timed = statements
            .iter()
            .rposition(|s| crate::tpch::queries::returns_rows(s))
            .ok_or_else(|| {
                WorkloadError::Internal(format!("no statement returning rows in {text:?}"))
            })?;
        Ok(PerfQueryFile {
            file,
            setup: statements[..timed].to_vec(),
            sql: statements[timed].clone(),
            teardown: statements[timed + 1..].to_vec(),
        })
    }

    /// Setup, the measured execution, teardown (run even after a failure).
    async fn run(&self, side: &mut PerfSide) -> Execution {
        for s in &self.setup {
            if let Err(e) = side.run_untimed(s).await {
                return Execution {
                    error: Some(format!("setup statement failed: {}", error_text(&e))),
                    ..Execution::default()
                };
            }
        }
        let e = side.execute(&self.sql).await;
        for s in &self.teardown {
            let _ = side.run_untimed(s).await;
        }
        e
    }
}

/// The `.sql` files of a folder, in name order (hidden and empty files left out).
pub fn read_queries(dir: &std::path::Path) -> Result<Vec<PerfQueryFile>, WorkloadError> {
    let bad = |what: String| {
        WorkloadError::InvalidOptions(format!("perfrun queries {}: {what}", dir.display()))
    };
    let entries =
        std::fs::read_dir(dir).map_err(|e| bad(format!("cannot read the folder: {e}")))?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
            !name.starts_with('.') && name.ends_with(".sql")
        })
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p)
            .map_err(|e| bad(format!("cannot read {}: {e}", p.display())))?;
        let sql = text.trim().trim_end_matches(';').trim().to_owned();
        let file = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !sql.is_empty() {
            out.push(PerfQueryFile::plain(file, sql));
        }
    }
    if out.is_empty() {
        return Err(bad("no query files in it".into()));
    }
    Ok(out)
}

/// The 22 TPC-H queries, by number, with validation parameters, in the target's dialect.
async fn tpch_queries(conn: &mut Connection) -> Result<Vec<PerfQueryFile>, WorkloadError> {
    crate::tpch::check_loaded(conn).await?;
    let sf = crate::tpch::detect_scale_factor(conn).await?;
    let set = crate::tpch::QuerySet::builtin(conn.dialect());
    (1..=22u32)
        .map(|n| {
            let q = set
                .get(&n.to_string())
                .ok_or_else(|| WorkloadError::Internal(format!("TPC-H query {n} missing")))?;
            let params =
                crate::tpch::QueryParams::new(n, 0, sf, crate::tpch::ParamMode::Validation);
            PerfQueryFile::split(
                format!("Q{n:02}"),
                &crate::tpch::substitute(&q.template, &params),
            )
        })
        .collect()
}

/// What a target's server is, for perfrun: version, dialect and the counters it reports (a
/// filter's names are checked against both sides' before anything runs).
pub async fn side_info(
    target: &dbrig_driver::Target,
    connect: &dbrig_driver::ConnectOptions,
) -> Result<dbrig_core::results::SideInfo, WorkloadError> {
    let conn = Connection::connect(target, connect).await?;
    let side = PerfSide::open(conn).await?;
    let info = dbrig_core::results::SideInfo {
        target: target.to_string(),
        version: side.server_version().to_owned(),
        dialect: side.dialect().name().to_owned(),
        counters: side.counter_names().to_vec(),
    };
    side.close().await;
    Ok(info)
}

/// One perfrun trial on one target: every query executed cold (first) then warm (second),
/// with its time, rows, checksums and counters.
pub async fn perfrun_trial(
    target: &dbrig_driver::Target,
    connect: &dbrig_driver::ConnectOptions,
    options: &PerfrunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<dbrig_core::results::PerfrunResult, WorkloadError> {
    // Counters are read around plain statements: no prepared statements (they would move
    // the prepare counters of the first execution only).
    let connect = dbrig_driver::ConnectOptions {
        protocol: dbrig_driver::Protocol::Simple,
        ..connect.clone()
    };
    let mut conn = Connection::connect(target, &connect).await?;
    let queries = match &options.queries {
        Some(dir) => read_queries(dir)?,
        None => tpch_queries(&mut conn).await?,
    };
    let mut side = PerfSide::open(conn).await?;
    let server = dbrig_core::results::SideInfo {
        target: target.to_string(),
        version: side.server_version().to_owned(),
        dialect: side.dialect().name().to_owned(),
        counters: side.counter_names().to_vec(),
    };
    let note = side.note().map(str::to_owned);
    let mut out = Vec::with_capacity(queries.len());
    for q in &queries {
        let cold = q.run(&mut side).await;
        let warm = q.run(&mut side).await;
        let time = |e: &Execution| {
            e.execution_time_s()
                .map(|s| format!("{s:.3}s"))
                .unwrap_or_else(|| "error".into())
        };
        progress(&format!(
            "{}: cold {}, warm {}",
            q.file,
            time(&cold),
            time(&warm)
        ));
        out.push(dbrig_core::results::PerfQuery {
            file: q.file.clone(),
            sql: q.sql.clone(),
            cold,
            warm,
        });
    }
    side.close().await;
    Ok(dbrig_core::results::PerfrunResult {
        server,
        source: options.source(),
        note,
        queries: out,
    })
}
