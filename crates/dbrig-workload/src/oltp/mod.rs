//! The sysbench-compatible OLTP suite: the eleven sysbench 1.0.20 workloads plus
//! `select_batch` (the MyISAM-mmap seed's 20 000-row primary-key scan), with the same tables,
//! statements per event, options and defaults (see shared/specs/oltp.md).

mod load;
pub mod options;

use std::sync::Arc;
use std::time::Instant;

use dbrig_core::{EventTally, KeyGenerator, Value};
use dbrig_driver::{Connection, Dialect, DriverError, Statement};
use rand::Rng;

pub use load::{CleanupReport, PrepareReport};
pub use options::{DupKeyRetry, OltpOptions, StorageEngine};

use crate::sql::{DialectSql, SqlSet};
use crate::sysbench_bulk::BulkInsert;

/// The OLTP workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OltpKind {
    PointSelect,
    ReadOnly,
    ReadWrite,
    WriteOnly,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    Insert,
    RandomPoints,
    RandomRanges,
    BulkInsert,
    SelectBatch,
    SelectRange,
}

impl OltpKind {
    pub const ALL: [OltpKind; 13] = [
        OltpKind::PointSelect,
        OltpKind::ReadOnly,
        OltpKind::ReadWrite,
        OltpKind::WriteOnly,
        OltpKind::UpdateIndex,
        OltpKind::UpdateNonIndex,
        OltpKind::Delete,
        OltpKind::Insert,
        OltpKind::RandomPoints,
        OltpKind::RandomRanges,
        OltpKind::BulkInsert,
        OltpKind::SelectBatch,
        OltpKind::SelectRange,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            OltpKind::PointSelect => "oltp_point_select",
            OltpKind::ReadOnly => "oltp_read_only",
            OltpKind::ReadWrite => "oltp_read_write",
            OltpKind::WriteOnly => "oltp_write_only",
            OltpKind::UpdateIndex => "oltp_update_index",
            OltpKind::UpdateNonIndex => "oltp_update_non_index",
            OltpKind::Delete => "oltp_delete",
            OltpKind::Insert => "oltp_insert",
            OltpKind::RandomPoints => "select_random_points",
            OltpKind::RandomRanges => "select_random_ranges",
            OltpKind::BulkInsert => "bulk_insert",
            OltpKind::SelectBatch => "select_batch",
            OltpKind::SelectRange => "select_range",
        }
    }

    /// Names the seeds used (sysbench 0.4/0.5) and short forms.
    pub fn aliases(&self) -> &'static [&'static str] {
        match self {
            OltpKind::PointSelect => &["oltp_simple", "select", "point_select", "select_primary"],
            OltpKind::ReadOnly => &["oltp_complex_ro", "oltp_ro", "read_only"],
            OltpKind::ReadWrite => &["oltp_complex_rw", "oltp_rw", "read_write"],
            OltpKind::WriteOnly => &["write_only"],
            OltpKind::UpdateIndex => &["update_index", "update_key"],
            OltpKind::UpdateNonIndex => &["update_non_index", "update_nokey"],
            OltpKind::Delete => &["delete"],
            OltpKind::Insert => &["insert"],
            OltpKind::RandomPoints => &[],
            OltpKind::RandomRanges => &[],
            OltpKind::BulkInsert => &[],
            OltpKind::SelectBatch => &["select_batch_pk"],
            OltpKind::SelectRange => &["select_range_pk"],
        }
    }

    pub fn description(&self) -> &'static str {
        match self {
            OltpKind::PointSelect => "one primary-key point select per event, no transaction",
            OltpKind::ReadOnly => "BEGIN, 10 point selects, 4 range selects, COMMIT",
            OltpKind::ReadWrite => {
                "the read-only set, then 2 updates, a delete and an insert, in one transaction"
            }
            OltpKind::WriteOnly => "BEGIN, index update, non-index update, delete + insert, COMMIT",
            OltpKind::UpdateIndex => "one UPDATE of the indexed column k (autocommit)",
            OltpKind::UpdateNonIndex => "one UPDATE of the non-indexed column c (autocommit)",
            OltpKind::Delete => {
                "one DELETE by primary key (autocommit; drains the table unless --delete-reinsert)"
            }
            OltpKind::Insert => "one INSERT (auto-increment id by default)",
            OltpKind::RandomPoints => {
                "SELECT … WHERE k IN (10 random keys from the client's slice)"
            }
            OltpKind::RandomRanges => {
                "SELECT count(k) … WHERE k BETWEEN … OR … (10 ranges of width 5)"
            }
            OltpKind::BulkInsert => {
                "one row per event into a per-client table, sent as sysbench's bulk_insert.lua \
                 sends it: multi-row text INSERTs of up to 512 KB"
            }
            OltpKind::SelectBatch => "scan of 20 000 rows by primary-key range per event",
            OltpKind::SelectRange => {
                "SELECT c … WHERE id BETWEEN ? AND ? (--range-size rows, autocommit): the \
                 seeds' select-range (seed 001), a primary-key range"
            }
        }
    }

    pub fn from_name(name: &str) -> Option<OltpKind> {
        // `oltp_read_only.lua` is a sysbench script (a file), not this workload.
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        let name = name.as_str();
        OltpKind::ALL
            .into_iter()
            .find(|k| k.name() == name || k.aliases().contains(&name))
    }

    /// Whether events run inside BEGIN … COMMIT (so a retry must roll back first).
    fn transactional(&self) -> bool {
        matches!(
            self,
            OltpKind::ReadOnly | OltpKind::ReadWrite | OltpKind::WriteOnly
        )
    }

    /// Transactions that write (they take the write lock up front where the engine needs it).
    fn writes_in_transaction(&self) -> bool {
        matches!(self, OltpKind::ReadWrite | OltpKind::WriteOnly)
    }

    fn is_bulk(&self) -> bool {
        *self == OltpKind::BulkInsert
    }

    /// Events that change the data (SQLite's writers queue for its one write lock; a
    /// fresh-data lifecycle restores the data before such a trial).
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            OltpKind::PointSelect
                | OltpKind::ReadOnly
                | OltpKind::RandomPoints
                | OltpKind::RandomRanges
                | OltpKind::SelectBatch
                | OltpKind::SelectRange
        )
    }
}

/// SQLite has one write lock per database file, and its busy handler hands it out unfairly:
/// a waiting writer sleeps and polls with growing back-off, so a writer can lose the lock to
/// newcomers for seconds and the latency tail measured the back-off. dbrig's writers to one
/// file queue in a fair FIFO (tokio's mutex) instead, so a writer's latency is its real wait
/// for the lock. One queue per file (per process), the shared in-memory database included.
pub(crate) fn uses_writer_queue(target: &dbrig_driver::Target) -> bool {
    matches!(target, dbrig_driver::Target::Sqlite { .. })
}

pub(crate) fn sqlite_writer_queue(target: &dbrig_driver::Target) -> Arc<tokio::sync::Mutex<()>> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static QUEUES: OnceLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let file = target.database().map_or_else(
        || ":memory:".to_owned(),
        |p| std::fs::canonicalize(&p).map_or(p, |c| c.display().to_string()),
    );
    let mut queues = QUEUES
        .get_or_init(Default::default)
        .lock()
        .expect("writer queues lock");
    Arc::clone(queues.entry(file).or_default())
}

/// The statements of one dialect, parsed once per process.
pub(crate) fn sql_for(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}

pub(crate) fn table_name(n: u32) -> String {
    format!("sbtest{n}")
}

/// MariaDB/MySQL's duplicate-entry error.
pub const DUPLICATE_KEY: &str = "1062";

/// One OLTP workload with its options.
#[derive(Debug, Clone)]
pub struct Oltp {
    pub kind: OltpKind,
    pub options: Arc<OltpOptions>,
}

impl Oltp {
    pub fn new(kind: OltpKind, options: OltpOptions) -> Self {
        Self {
            kind,
            options: Arc::new(options),
        }
    }

    /// The tables this workload's events touch for `threads` clients.
    pub fn tables_used(&self, threads: u32) -> Vec<String> {
        match self.kind {
            OltpKind::BulkInsert => (1..=threads).map(table_name).collect(),
            OltpKind::RandomPoints | OltpKind::RandomRanges | OltpKind::SelectBatch => {
                vec![table_name(1)]
            }
            _ => (1..=self.options.tables).map(table_name).collect(),
        }
    }

    /// Where this run does not send what sysbench sends, or where the engine shapes the
    /// figures, a line each for the report.
    pub fn notes(&self, target: &dbrig_driver::Target) -> Vec<String> {
        let dialect = target.dialect();
        let mut notes = Vec::new();
        if uses_writer_queue(target) && self.kind.writes() {
            notes.push(
                "SQLite serialises writers (one write lock per database file): dbrig queues \
                 its writers in arrival order, so write latency is the wait for that lock \
                 (statement write_queue)"
                    .to_owned(),
            );
        }
        if self.retries_duplicate_keys(dialect) {
            notes.push(format!(
                "1062 duplicate-key errors were retried as conflicts (--dup-key-retry {}): {} \
                 tables have no transactions, so concurrent delete/insert pairs of one id \
                 collide, as with sysbench",
                match self.options.dup_key_retry {
                    DupKeyRetry::On => "on",
                    _ => "auto",
                },
                self.options.mysql_storage_engine.sql_name()
            ));
        }
        if self.kind == OltpKind::Insert && self.options.insert_prepared {
            notes.push(
                "oltp_insert's INSERT was prepared (--insert-prepared): sysbench sends it as \
                 text, parsed by the server every event"
                    .to_owned(),
            );
        }
        notes
    }

    /// Whether 1062 (duplicate entry) restarts an event: `--dup-key-retry`, on MariaDB/MySQL,
    /// for workloads that insert.
    pub fn retries_duplicate_keys(&self, dialect: Dialect) -> bool {
        let inserts = matches!(
            self.kind,
            OltpKind::ReadWrite | OltpKind::WriteOnly | OltpKind::Insert
        ) || (self.kind == OltpKind::Delete && self.options.delete_reinsert);
        let wanted = match self.options.dup_key_retry {
            DupKeyRetry::On => true,
            DupKeyRetry::Off => false,
            DupKeyRetry::Auto => !self.options.mysql_storage_engine.transactional(),
        };
        dialect == Dialect::Mysql && inserts && wanted
    }

    /// Open a client: prepare the statements its events use.
    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        threads: u32,
        keys: KeyGenerator,
    ) -> Result<OltpClient, DriverError> {
        let sql = sql_for(conn.dialect());
        let o = &self.options;
        let mut tables = Vec::new();
        let table_numbers: Vec<u32> = match self.kind {
            OltpKind::BulkInsert => vec![index + 1],
            OltpKind::RandomPoints | OltpKind::RandomRanges | OltpKind::SelectBatch => vec![1],
            _ => (1..=o.tables).collect(),
        };
        for n in table_numbers {
            tables.push(TableStatements::prepare(self.kind, o, sql, conn, &table_name(n)).await?);
        }
        // BEGIN and COMMIT are prepared too, as sysbench prepares them (`--db-ps-mode=auto`): the
        // server then executes them without parsing, the same work for both tools.
        let (begin, commit) = if self.kind.transactional() && !o.skip_trx {
            let begin = sql.render(
                if self.kind.writes_in_transaction() {
                    "begin_write"
                } else {
                    "begin"
                },
                &[],
            );
            (
                Some(conn.prepare(&begin).await?),
                Some(conn.prepare(&sql.render("commit", &[])).await?),
            )
        } else {
            (None, None)
        };
        let writer_queue = (uses_writer_queue(conn.target()) && self.kind.writes())
            .then(|| sqlite_writer_queue(conn.target()));
        let mut client = OltpClient {
            writer_queue,
            turn: None,
            kind: self.kind,
            options: Arc::clone(&self.options),
            tables,
            keys,
            index,
            threads,
            next_bulk_id: 1,
            bulk: self.kind.is_bulk().then(|| {
                BulkInsert::new(sql.render("bulk_insert", &[("table", &table_name(index + 1))]))
            }),
            begin,
            commit,
            rollback: sql.render("rollback", &[]),
        };
        if self.kind.is_bulk() {
            // Continue the id sequence after what earlier runs appended.
            let max = conn
                .query(
                    &sql.render("max_id", &[("table", &table_name(index + 1))]),
                    &[],
                )
                .await?;
            client.next_bulk_id = max
                .first()
                .and_then(|r| r.first())
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
        }
        Ok(client)
    }
}

/// Prepared statements for one table (only those the workload uses: servers cap the number of
/// prepared statements, and thousands of clients multiply it).
#[derive(Debug, Default)]
struct TableStatements {
    point_select: Option<Statement>,
    simple_range: Option<Statement>,
    sum_range: Option<Statement>,
    order_range: Option<Statement>,
    distinct_range: Option<Statement>,
    index_update: Option<Statement>,
    non_index_update: Option<Statement>,
    delete: Option<Statement>,
    insert: Option<Statement>,
    special: Option<Statement>,
    /// oltp_insert's INSERT as text with `?` for the values written in per event (sysbench's
    /// form; `--insert-prepared` prepares it instead).
    insert_text: Option<String>,
}

impl TableStatements {
    async fn prepare(
        kind: OltpKind,
        o: &OltpOptions,
        sql: &SqlSet,
        conn: &mut Connection,
        table: &str,
    ) -> Result<Self, DriverError> {
        use OltpKind::*;
        let mut s = TableStatements::default();
        let vars = [("table", table)];
        let reads = matches!(kind, PointSelect | ReadOnly | ReadWrite);
        let ranges = matches!(kind, ReadOnly | ReadWrite) && o.range_selects;
        let writes = matches!(kind, ReadWrite | WriteOnly);
        macro_rules! prep {
            ($cond:expr, $field:ident, $name:expr) => {
                if $cond {
                    s.$field = Some(conn.prepare(&sql.render($name, &vars)).await?);
                }
            };
        }
        prep!(
            reads && (kind == PointSelect || o.point_selects > 0),
            point_select,
            "point_select"
        );
        prep!(
            (ranges && o.simple_ranges > 0) || kind == SelectRange,
            simple_range,
            "simple_range"
        );
        prep!(ranges && o.sum_ranges > 0, sum_range, "sum_range");
        prep!(ranges && o.order_ranges > 0, order_range, "order_range");
        prep!(
            ranges && o.distinct_ranges > 0,
            distinct_range,
            "distinct_range"
        );
        prep!(
            (writes && o.index_updates > 0) || kind == UpdateIndex,
            index_update,
            "index_update"
        );
        prep!(
            (writes && o.non_index_updates > 0) || kind == UpdateNonIndex,
            non_index_update,
            "non_index_update"
        );
        prep!(
            (writes && o.delete_inserts > 0) || kind == Delete,
            delete,
            "delete"
        );
        prep!(
            (writes && o.delete_inserts > 0)
                || (kind == Delete && o.delete_reinsert)
                || (kind == Insert && !o.auto_inc && o.insert_prepared),
            insert,
            "insert"
        );
        match kind {
            Insert if !o.insert_prepared => {
                s.insert_text = Some(sql.render(
                    if o.auto_inc {
                        "insert_text_auto"
                    } else {
                        "insert"
                    },
                    &vars,
                ))
            }
            Insert if o.auto_inc => {
                s.special = Some(conn.prepare(&sql.render("insert_auto", &vars)).await?)
            }
            RandomPoints => {
                let points = vec!["?"; o.random_points as usize].join(", ");
                s.special = Some(
                    conn.prepare(
                        &sql.render("random_points", &[("table", table), ("points", &points)]),
                    )
                    .await?,
                );
            }
            RandomRanges => {
                let term = sql.template("random_range_term");
                let ranges = vec![term; o.number_of_ranges as usize].join(" OR ");
                s.special = Some(
                    conn.prepare(
                        &sql.render("random_ranges", &[("table", table), ("ranges", &ranges)]),
                    )
                    .await?,
                );
            }
            SelectBatch => {
                s.special = Some(conn.prepare(&sql.render("select_batch", &vars)).await?)
            }
            _ => {}
        }
        Ok(s)
    }
}

/// One client's state: its prepared statements and its own seeded random source.
#[derive(Debug)]
pub struct OltpClient {
    kind: OltpKind,
    options: Arc<OltpOptions>,
    tables: Vec<TableStatements>,
    keys: KeyGenerator,
    index: u32,
    threads: u32,
    next_bulk_id: i64,
    /// bulk_insert: the rows not sent yet.
    bulk: Option<BulkInsert>,
    /// Prepared for transactional workloads only.
    begin: Option<Statement>,
    commit: Option<Statement>,
    rollback: String,
    /// SQLite, writing workloads: the database file's FIFO of writers.
    writer_queue: Option<Arc<tokio::sync::Mutex<()>>>,
    /// This client's turn at the write lock, held from before BEGIN until COMMIT or the
    /// rollback of a failed event.
    turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

/// Send bulk_insert's INSERT as text, counted and timed as `bulk_insert`.
async fn send_bulk(
    conn: &mut Connection,
    sql: &str,
    q: &mut EventTally,
) -> Result<(), DriverError> {
    let began = Instant::now();
    let outcome = conn.execute_text(sql).await;
    q.time("bulk_insert", began.elapsed().as_micros() as u64);
    q.queries.count(outcome?.class());
    Ok(())
}

/// Execute one statement, count it the sysbench way and time it under `kind`.
async fn exec(
    conn: &mut Connection,
    kind: &'static str,
    stmt: Option<Statement>,
    params: &[Value],
    q: &mut EventTally,
) -> Result<(), DriverError> {
    let stmt = stmt.expect("statement prepared for this workload");
    let began = Instant::now();
    let outcome = conn.execute(stmt, params).await;
    q.time(kind, began.elapsed().as_micros() as u64);
    q.queries.count(outcome?.class());
    Ok(())
}

impl OltpClient {
    /// Why an error that stopped this client happened, when the workload knows: a duplicate
    /// key on tables without transactions (decided by the error's code).
    pub fn fatal_hint(&self, e: &DriverError) -> Option<String> {
        let engine = self.options.mysql_storage_engine;
        (e.code.as_deref() == Some(DUPLICATE_KEY) && !engine.transactional()).then(|| {
            format!(
                "{} tables have no transactions, so concurrent delete/insert pairs of one id \
                 collide (the seeds' \"dup key errors (due to sysbench)\"); \
                 --dup-key-retry auto or on retries them",
                engine.sql_name()
            )
        })
    }

    /// Run one event (one transaction for the transactional workloads), counting statements.
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        use OltpKind::*;
        let o = Arc::clone(&self.options);
        let trx = self.kind.transactional() && !o.skip_trx;
        // A turn left by an event that failed without a rollback (a lost connection) ends.
        self.turn = None;
        if let Some(queue) = &self.writer_queue {
            let began = Instant::now();
            self.turn = Some(Arc::clone(queue).lock_owned().await);
            q.time("write_queue", began.elapsed().as_micros() as u64);
        }
        if trx {
            exec(conn, "begin", self.begin, &[], q).await?;
        }
        match self.kind {
            PointSelect => self.point_selects(conn, 1, q).await?,
            ReadOnly | ReadWrite | WriteOnly => {
                if self.kind != WriteOnly {
                    self.point_selects(conn, o.point_selects, q).await?;
                    if o.range_selects {
                        self.ranges(conn, q).await?;
                    }
                }
                if self.kind != ReadOnly {
                    self.index_updates(conn, o.index_updates, q).await?;
                    self.non_index_updates(conn, o.non_index_updates, q).await?;
                    self.delete_inserts(conn, o.delete_inserts, true, q).await?;
                }
            }
            UpdateIndex => self.index_updates(conn, 1, q).await?,
            UpdateNonIndex => self.non_index_updates(conn, 1, q).await?,
            Delete => self.delete_inserts(conn, 1, o.delete_reinsert, q).await?,
            Insert => {
                let t = self.pick_table();
                // sysbench draws k from the key distribution (`sysbench.rand.default`).
                let k = self.id();
                let c = Value::Text(digits(self.keys.rng(), 10));
                let pad = Value::Text(digits(self.keys.rng(), 5));
                let id = (!o.auto_inc).then(|| self.unique_id());
                if let Some(sql) = &self.tables[t].insert_text {
                    let mut params = Vec::with_capacity(4);
                    params.extend(id.map(Value::Int));
                    params.extend([Value::Int(k), c, pad]);
                    let began = Instant::now();
                    let outcome = conn.execute_literal(sql, &params).await;
                    q.time("insert", began.elapsed().as_micros() as u64);
                    q.queries.count(outcome?.class());
                } else if o.auto_inc {
                    exec(
                        conn,
                        "insert",
                        self.tables[t].special,
                        &[Value::Int(k), c, pad],
                        q,
                    )
                    .await?;
                } else {
                    let id = id.unwrap_or_else(|| self.unique_id());
                    exec(
                        conn,
                        "insert",
                        self.tables[t].insert,
                        &[Value::Int(id), Value::Int(k), c, pad],
                        q,
                    )
                    .await?;
                }
            }
            RandomPoints => {
                let (lo, hi) = self.client_slice();
                let params: Vec<Value> = (0..o.random_points)
                    .map(|_| Value::Int(self.keys.key(lo, hi)))
                    .collect();
                exec(conn, "random_points", self.tables[0].special, &params, q).await?;
            }
            RandomRanges => {
                let (lo, hi) = self.client_slice();
                let mut params = Vec::with_capacity(o.number_of_ranges as usize * 2);
                for _ in 0..o.number_of_ranges {
                    let start = self.keys.key(lo, hi);
                    params.push(Value::Int(start));
                    params.push(Value::Int(start + o.delta as i64));
                }
                exec(conn, "random_ranges", self.tables[0].special, &params, q).await?;
            }
            SelectRange => {
                let t = self.pick_table();
                let start = self.id();
                let params = [
                    Value::Int(start),
                    Value::Int(start + o.range_size as i64 - 1),
                ];
                exec(
                    conn,
                    "simple_range",
                    self.tables[t].simple_range,
                    &params,
                    q,
                )
                .await?;
            }
            SelectBatch => {
                let last_start = (o.table_size as i64 - o.batch_size as i64 + 1).max(1);
                let start = self.keys.key(1, last_start);
                let params = [
                    Value::Int(start),
                    Value::Int(start + o.batch_size as i64 - 1),
                ];
                exec(conn, "select_batch", self.tables[0].special, &params, q).await?;
            }
            BulkInsert => {
                // sysbench's bulk_insert.lua: one row per event, `(n,n)`, the INSERT sent when
                // the next row would pass its buffer.
                let id = self.next_bulk_id;
                self.next_bulk_id += 1;
                let full = self
                    .bulk
                    .as_mut()
                    .and_then(|b| b.push(&format!("({id},{id})")));
                if let Some(sql) = full {
                    send_bulk(conn, &sql, q).await?;
                }
            }
        }
        if trx {
            exec(conn, "commit", self.commit, &[], q).await?;
        }
        self.turn = None;
        Ok(())
    }

    /// The client's end: bulk_insert sends the rows not sent yet (sysbench's `thread_done`
    /// calls `bulk_insert_done()`); an error it reports.
    pub async fn finish(&mut self, conn: &mut Connection, q: &mut EventTally) -> Option<String> {
        let sql = self.bulk.as_mut().and_then(BulkInsert::take)?;
        send_bulk(conn, &sql, q)
            .await
            .err()
            .map(|e| format!("bulk_insert's last rows: {e}"))
    }

    /// After a retryable error: roll back what the event started (errors ignored: the
    /// transaction may already be gone).
    pub async fn abort(&mut self, conn: &mut Connection) {
        if self.kind.transactional() && !self.options.skip_trx {
            let _ = conn.execute_text(&self.rollback).await;
        }
        // The write lock is free only after the rollback.
        self.turn = None;
    }

    fn pick_table(&mut self) -> usize {
        if self.tables.len() == 1 {
            0
        } else {
            self.keys.rng().random_range(0..self.tables.len())
        }
    }

    /// oltp_insert without --auto-inc: random ids above the prepared range rarely collide; a
    /// collision is a duplicate-key error, as in sysbench.
    fn unique_id(&mut self) -> i64 {
        self.keys
            .uniform(self.options.table_size as i64 + 1, i32::MAX as i64)
    }

    fn id(&mut self) -> i64 {
        self.keys.key(1, self.options.table_size as i64)
    }

    /// select_random_*: each client draws from its own slice of the key range, as sysbench.
    fn client_slice(&self) -> (i64, i64) {
        sysbench_slice(self.options.table_size, self.threads, self.index)
    }

    async fn point_selects(
        &mut self,
        conn: &mut Connection,
        n: u32,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let t = self.pick_table();
        for _ in 0..n {
            let id = self.id();
            exec(
                conn,
                "point_select",
                self.tables[t].point_select,
                &[Value::Int(id)],
                q,
            )
            .await?;
        }
        Ok(())
    }

    async fn ranges(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let o = Arc::clone(&self.options);
        let groups = [
            (o.simple_ranges, 0usize),
            (o.sum_ranges, 1),
            (o.order_ranges, 2),
            (o.distinct_ranges, 3),
        ];
        for (count, which) in groups {
            let t = self.pick_table();
            let ts = &self.tables[t];
            let (kind, stmt) = [
                ("simple_range", ts.simple_range),
                ("sum_range", ts.sum_range),
                ("order_range", ts.order_range),
                ("distinct_range", ts.distinct_range),
            ][which];
            for _ in 0..count {
                let start = self.id();
                exec(
                    conn,
                    kind,
                    stmt,
                    &[
                        Value::Int(start),
                        Value::Int(start + o.range_size as i64 - 1),
                    ],
                    q,
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn index_updates(
        &mut self,
        conn: &mut Connection,
        n: u32,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let t = self.pick_table();
        for _ in 0..n {
            let id = self.id();
            exec(
                conn,
                "index_update",
                self.tables[t].index_update,
                &[Value::Int(id)],
                q,
            )
            .await?;
        }
        Ok(())
    }

    async fn non_index_updates(
        &mut self,
        conn: &mut Connection,
        n: u32,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let t = self.pick_table();
        for _ in 0..n {
            let c = Value::Text(digits(self.keys.rng(), 10));
            let id = self.id();
            exec(
                conn,
                "non_index_update",
                self.tables[t].non_index_update,
                &[c, Value::Int(id)],
                q,
            )
            .await?;
        }
        Ok(())
    }

    async fn delete_inserts(
        &mut self,
        conn: &mut Connection,
        n: u32,
        reinsert: bool,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let t = self.pick_table();
        for _ in 0..n {
            let id = self.id();
            let k = self.id();
            exec(conn, "delete", self.tables[t].delete, &[Value::Int(id)], q).await?;
            if reinsert {
                let c = Value::Text(digits(self.keys.rng(), 10));
                let pad = Value::Text(digits(self.keys.rng(), 5));
                exec(
                    conn,
                    "insert",
                    self.tables[t].insert,
                    &[Value::Int(id), Value::Int(k), c, pad],
                    q,
                )
                .await?;
            }
        }
        Ok(())
    }
}

/// The key range `[rmin, rmax]` sysbench's select_random_points/ranges draw from for client
/// `index` of `threads`: `rlen = table_size / threads` in Lua's floating point, `rmin = rlen *
/// thread_id`, `rmax = rmin + rlen`, both truncated to integers when passed to the C random
/// function, which includes both ends (1 client: 0 … table_size).
pub(crate) fn sysbench_slice(table_size: u64, threads: u32, index: u32) -> (i64, i64) {
    let threads = threads.max(1);
    let rlen = table_size as f64 / f64::from(threads);
    let rmin = rlen * f64::from(index % threads);
    let rmax = rmin + rlen;
    (rmin as i64, rmax as i64)
}

/// sysbench's c/pad values: `groups` groups of 11 random digits joined by '-'
/// (10 groups = 119 characters for c, 5 = 59 for pad).
///
/// A group is one uniform draw below 10^11 written with its leading zeros: the same uniform,
/// independent digits as a draw per digit, with 15 draws per sysbench row instead of 165.
/// A draw per digit was most of a prepare's client CPU (~0.5 µs a row), and on a machine the
/// server shares that CPU is the server's.
pub(crate) fn digits(rng: &mut impl Rng, groups: usize) -> String {
    let mut s = Vec::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push(b'-');
        }
        let mut n = rng.random_range(0..100_000_000_000u64);
        let mut group = [b'0'; 11];
        for d in group.iter_mut().rev() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
        }
        s.extend_from_slice(&group);
    }
    String::from_utf8(s).expect("ASCII digits and dashes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(
            OltpKind::from_name("oltp_read_write"),
            Some(OltpKind::ReadWrite)
        );
        assert_eq!(
            OltpKind::from_name("oltp_complex_rw"),
            Some(OltpKind::ReadWrite)
        );
        assert_eq!(
            OltpKind::from_name("oltp_simple"),
            Some(OltpKind::PointSelect)
        );
        assert_eq!(
            OltpKind::from_name("update_nokey"),
            Some(OltpKind::UpdateNonIndex)
        );
        assert_eq!(OltpKind::from_name("oltp_read_only.lua"), None);
        assert_eq!(OltpKind::from_name("OLTP-DELETE"), Some(OltpKind::Delete));
        assert_eq!(OltpKind::from_name("tpcc"), None);
        // The seeds' select-range (seed 001) was a primary-key range, not sysbench 1.0's
        // secondary-index select_random_ranges.
        assert_eq!(
            OltpKind::from_name("select-range"),
            Some(OltpKind::SelectRange)
        );
        assert_eq!(
            OltpKind::from_name("select_primary"),
            Some(OltpKind::PointSelect)
        );
        assert_eq!(
            OltpKind::ALL
                .iter()
                .filter(|k| k.name().starts_with("oltp_"))
                .count(),
            8
        );
    }

    /// sysbench 1.0.20's select_random_points.lua: `rlen = table_size / threads` (a Lua
    /// number), `rmin = rlen * thread_id`, `rmax = rmin + rlen`, truncated by the C call.
    #[test]
    fn random_select_slices_are_sysbenchs() {
        assert_eq!(sysbench_slice(10_000, 1, 0), (0, 10_000));
        assert_eq!(sysbench_slice(10_000, 3, 0), (0, 3333));
        assert_eq!(sysbench_slice(10_000, 3, 1), (3333, 6666));
        assert_eq!(sysbench_slice(10_000, 3, 2), (6666, 10_000));
        assert_eq!(sysbench_slice(100, 8, 7), (87, 100));
        // More clients than rows: slices of under one key still have both ends.
        assert_eq!(sysbench_slice(2, 4, 3), (1, 2));
    }

    #[test]
    fn c_and_pad_have_sysbench_lengths() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let c = digits(&mut rng, 10);
        assert_eq!(c.len(), 119);
        assert_eq!(c.split('-').count(), 10);
        assert!(
            c.split('-')
                .all(|g| g.len() == 11 && g.chars().all(|ch| ch.is_ascii_digit()))
        );
        assert_eq!(digits(&mut rng, 5).len(), 59);
        // Every digit at every place of a group comes up about as often as the others (and
        // leading zeros are kept): 20 000 groups, each count within 8 % of 2 000.
        let mut counts = [[0u32; 10]; 11];
        for _ in 0..2_000 {
            for g in digits(&mut rng, 10).split('-') {
                for (place, d) in g.bytes().enumerate() {
                    counts[place][usize::from(d - b'0')] += 1;
                }
            }
        }
        for (place, c) in counts.iter().enumerate() {
            assert!(
                c.iter().all(|&n| (1_840..=2_160).contains(&n)),
                "place {place}: {c:?}"
            );
        }
    }

    /// `events` events of `kind` with `options` by client `index` of `threads`, against a mock
    /// server that keeps what was bound: each executed statement's text and values. The mock
    /// URL is named by kind, client and distribution: calls must differ in one of them.
    fn sent(
        kind: OltpKind,
        options: OltpOptions,
        index: u32,
        threads: u32,
        events: u32,
        dist: dbrig_core::KeyDistribution,
    ) -> Vec<dbrig_driver::MockSentStatement> {
        let url = format!("mock:?log=1&version=binds-{}-{index}-{dist:?}", kind.name());
        let target = dbrig_driver::Target::parse(&url).unwrap();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let mut conn = Connection::connect(&target, &Default::default())
                    .await
                    .unwrap();
                let oltp = Oltp::new(kind, options);
                let keys = KeyGenerator::new(dist, 7);
                let mut client = oltp
                    .new_client(&mut conn, index, threads, keys)
                    .await
                    .unwrap();
                let mut q = EventTally::default();
                for _ in 0..events {
                    client.event(&mut conn, &mut q).await.unwrap();
                }
            });
        dbrig_driver::mock_statements_sent(&target)
    }

    fn int(v: &Value) -> i64 {
        v.as_i64()
            .unwrap_or_else(|| panic!("not an integer: {v:?}"))
    }

    /// What each statement binds, not only its text: ranges exactly `--range-size` rows wide
    /// starting at a key of the table, point keys within the table, each statement as many
    /// times per event as its option says — with every option away from its default, where a
    /// bug that the defaults hide shows.
    #[test]
    fn statements_bind_the_keys_and_ranges_their_options_say() {
        let o = OltpOptions {
            tables: 2,
            table_size: 500,
            range_size: 7,
            point_selects: 3,
            simple_ranges: 2,
            sum_ranges: 3,
            order_ranges: 4,
            distinct_ranges: 5,
            index_updates: 2,
            non_index_updates: 3,
            delete_inserts: 2,
            ..OltpOptions::default()
        };
        let events = 200;
        for dist in [
            dbrig_core::KeyDistribution::Uniform,
            dbrig_core::KeyDistribution::Pareto { h: 0.2 },
        ] {
            let sent = sent(OltpKind::ReadWrite, o.clone(), 0, 1, events, dist);
            let mut per_kind = std::collections::BTreeMap::<&str, u32>::new();
            for st in &sent {
                let sql = st.sql.as_str();
                let kind = if sql.contains("BETWEEN") {
                    let (start, end) = (int(&st.params[0]), int(&st.params[1]));
                    assert_eq!(end - start + 1, 7, "{sql} {:?}", st.params);
                    assert!((1..=500).contains(&start), "{sql} starts at {start}");
                    if sql.starts_with("SELECT SUM") {
                        "sum"
                    } else if sql.starts_with("SELECT DISTINCT") {
                        "distinct"
                    } else if sql.contains("ORDER BY") {
                        "order"
                    } else {
                        "simple"
                    }
                } else if sql.starts_with("SELECT c FROM") {
                    assert!(
                        (1..=500).contains(&int(&st.params[0])),
                        "{sql} {:?}",
                        st.params
                    );
                    "point"
                } else if sql.starts_with("UPDATE") {
                    let id = int(st.params.last().unwrap());
                    assert!((1..=500).contains(&id), "{sql} {:?}", st.params);
                    if sql.contains("k=k+1") {
                        "index_update"
                    } else {
                        "non_index_update"
                    }
                } else if sql.starts_with("DELETE") {
                    assert!(
                        (1..=500).contains(&int(&st.params[0])),
                        "{sql} {:?}",
                        st.params
                    );
                    "delete"
                } else if sql.starts_with("INSERT") {
                    "insert"
                } else {
                    sql
                };
                *per_kind.entry(kind).or_default() += 1;
            }
            let want = [
                ("point", 3),
                ("simple", 2),
                ("sum", 3),
                ("order", 4),
                ("distinct", 5),
                ("index_update", 2),
                ("non_index_update", 3),
                ("delete", 2),
                ("insert", 2),
            ];
            for (kind, per_event) in want {
                assert_eq!(
                    per_kind.get(kind),
                    Some(&(per_event * events)),
                    "{kind}: {per_kind:?}"
                );
            }
        }
    }

    /// `--skip-trx` sends no BEGIN/COMMIT; `--range-selects off` no range statement; without
    /// them an event is wrapped in exactly one BEGIN and one COMMIT.
    #[test]
    fn skip_trx_and_range_selects_change_what_an_event_sends() {
        let uniform = dbrig_core::KeyDistribution::Uniform;
        let count = |sent: &[dbrig_driver::MockSentStatement], what: &str| {
            sent.iter().filter(|s| s.sql.starts_with(what)).count()
        };
        let plain = sent(
            OltpKind::ReadOnly,
            OltpOptions::default(),
            0,
            1,
            10,
            uniform,
        );
        assert_eq!((count(&plain, "BEGIN"), count(&plain, "COMMIT")), (10, 10));
        assert_eq!(
            plain.iter().filter(|s| s.sql.contains("BETWEEN")).count(),
            40
        );
        let o = OltpOptions {
            skip_trx: true,
            range_selects: false,
            ..OltpOptions::default()
        };
        let bare = sent(OltpKind::ReadOnly, o, 1, 2, 10, uniform);
        assert_eq!((count(&bare, "BEGIN"), count(&bare, "COMMIT")), (0, 0));
        assert!(bare.iter().all(|s| !s.sql.contains("BETWEEN")));
        assert_eq!(bare.len(), 100, "10 point selects an event");
    }

    /// select_random_ranges binds `--number-of-ranges` pairs `start, start + --delta` inside
    /// the client's slice; select_random_points `--random-points` keys inside it;
    /// select_range (`--range-size` rows) and select_batch (`--batch-size` rows) within the
    /// table.
    #[test]
    fn random_and_batch_selects_bind_inside_their_ranges() {
        let o = OltpOptions {
            table_size: 1_000,
            number_of_ranges: 4,
            delta: 9,
            random_points: 6,
            range_size: 13,
            batch_size: 50,
            ..OltpOptions::default()
        };
        let uniform = dbrig_core::KeyDistribution::Uniform;
        // Client 1 of 3: the slice [333, 666].
        let (lo, hi) = sysbench_slice(1_000, 3, 1);
        for st in sent(OltpKind::RandomRanges, o.clone(), 1, 3, 100, uniform) {
            assert_eq!(st.params.len(), 8, "{}", st.sql);
            for pair in st.params.chunks(2) {
                let (start, end) = (int(&pair[0]), int(&pair[1]));
                assert_eq!(end - start, 9, "{pair:?}");
                assert!((lo..=hi).contains(&start), "{start} outside [{lo}, {hi}]");
            }
        }
        for st in sent(OltpKind::RandomPoints, o.clone(), 1, 3, 100, uniform) {
            assert_eq!(st.params.len(), 6, "{}", st.sql);
            assert!(
                st.params.iter().all(|k| (lo..=hi).contains(&int(k))),
                "{:?}",
                st.params
            );
        }
        for st in sent(OltpKind::SelectRange, o.clone(), 0, 1, 100, uniform) {
            let (start, end) = (int(&st.params[0]), int(&st.params[1]));
            assert_eq!(end - start + 1, 13, "{:?}", st.params);
            assert!((1..=1_000).contains(&start), "{start}");
        }
        for st in sent(OltpKind::SelectBatch, o, 0, 1, 100, uniform) {
            let (start, end) = (int(&st.params[0]), int(&st.params[1]));
            assert_eq!(end - start + 1, 50, "{:?}", st.params);
            assert!(start >= 1 && end <= 1_000, "{start}..{end}");
        }
    }

    #[test]
    fn every_dialect_has_every_statement() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let sql = sql_for(d);
            for name in [
                "create_table",
                "create_bulk_table",
                "create_index",
                "after_load",
                "drop_table",
                "point_select",
                "insert_auto",
                "bulk_insert",
            ] {
                assert!(sql.has(name), "{name} missing for {d:?}");
            }
        }
        assert_eq!(
            sql_for(Dialect::Postgres).render("non_index_update", &[("table", "sbtest1")]),
            "UPDATE sbtest1 SET c=$1 WHERE id=$2"
        );
    }
}
