//! The SQLite backend (rusqlite, bundled library).
//!
//! SQLite calls block, so each connection owns a thread that holds the `rusqlite::Connection`
//! and runs jobs sent over a channel; the async side only waits on a oneshot answer. No
//! blocking call ever runs on an async worker.

use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use dbrig_core::{ErrorClass, Value};
use rusqlite::OpenFlags;
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{ToSqlOutput, ValueRef};
use tokio::sync::oneshot;

use crate::bulk::{BulkLoad, BulkText};
use crate::cancel::{CancelHandle, Inner};
use crate::conn::{ConnectOptions, Outcome, Rows};
use crate::error::{DriverError, ErrorKind, ErrorPolicy, one_line};
use crate::target::Target;

/// The process-wide in-memory database behind `sqlite::memory:`. A named shared-cache URI,
/// so that every connection of the process (the prepare step and all clients) sees the same
/// data instead of each getting a private empty database.
const MEMORY_URI: &str = "file:dbrig-memory?mode=memory&cache=shared";

/// Statements kept compiled per connection: well above what any workload prepares, so the
/// benchmark never measures SQLite re-parsing a statement that fell out of the cache.
const STATEMENT_CACHE: usize = 256;

/// SQLite's default limit on `?` parameters per statement (since 3.32).
const MAX_PARAMS: usize = 32_766;

type Job = Box<dyn FnOnce(&mut State) + Send>;

/// What lives on the connection's thread.
struct State {
    conn: rusqlite::Connection,
    statements: Vec<String>,
}

pub(crate) struct SqliteConnection {
    jobs: mpsc::Sender<Job>,
    /// Answered by the connection's thread once it has closed the database. Awaited on
    /// close instead of joining the thread, which would need one more (blocking-pool)
    /// thread: under a process limit that spawn panics.
    closed: oneshot::Receiver<()>,
    /// Interrupts the statement running on the connection's thread, from any thread.
    interrupt: Arc<rusqlite::InterruptHandle>,
    policy: ErrorPolicy,
    version: String,
}

impl SqliteConnection {
    pub(crate) async fn connect(
        target: &Target,
        options: &ConnectOptions,
    ) -> Result<Self, DriverError> {
        let Target::Sqlite { path } = target else {
            unreachable!("sqlite backend opened for a non-sqlite target")
        };
        let path = path.clone();
        let policy = options.policy.clone();
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = oneshot::channel();
        let (closed_tx, closed) = oneshot::channel();
        let open_policy = policy.clone();
        if let Some((used, limit)) = address_space_short() {
            return Err(DriverError::fatal(
                ErrorKind::Unsupported,
                format!(
                    "cannot start an SQLite connection thread: the OS refused a thread (address space {} of {} MiB used, ulimit -v); raise ulimit -v / ulimit -u / pids.max or use fewer --threads",
                    used >> 20,
                    limit >> 20
                ),
            ));
        }
        std::thread::Builder::new()
            .name("dbrig-sqlite".into())
            .spawn(move || {
                let conn = match open(path.as_deref()) {
                    Ok(conn) => conn,
                    Err(e) => {
                        let place = match &path {
                            Some(p) => p.display().to_string(),
                            None => "sqlite::memory:".into(),
                        };
                        let _ = ready_tx.send(Err(open_error(e, &place, &open_policy)));
                        return;
                    }
                };
                let interrupt = Arc::new(conn.get_interrupt_handle());
                if ready_tx.send(Ok(interrupt)).is_err() {
                    return;
                }
                let mut state = State {
                    conn,
                    statements: Vec::new(),
                };
                // Ends when the SqliteConnection (the only sender) is dropped or closed.
                while let Ok(job) = queue.recv() {
                    job(&mut state);
                }
                drop(state);
                let _ = closed_tx.send(());
            })
            .map_err(|e| {
                DriverError::fatal(
                    ErrorKind::Unsupported,
                    format!(
                        "cannot start an SQLite connection thread: the OS refused a thread ({e}); raise ulimit -u / pids.max or use fewer --threads"
                    ),
                )
            })?;
        let interrupt = ready_rx.await.map_err(|_| thread_gone())??;
        Ok(Self {
            jobs,
            closed,
            interrupt,
            policy,
            version: format!("SQLite {}", rusqlite::version()),
        })
    }

    /// Run `f` on the connection's thread and wait for its answer.
    async fn call<R, F>(&self, f: F) -> Result<R, DriverError>
    where
        R: Send + 'static,
        F: FnOnce(&mut State) -> rusqlite::Result<R> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Box::new(move |state: &mut State| {
                let _ = tx.send(f(state));
            }))
            .map_err(|_| thread_gone())?;
        rx.await
            .map_err(|_| thread_gone())?
            .map_err(|e| map_error(e, &self.policy))
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(Inner::Sqlite(Arc::clone(&self.interrupt)))
    }

    pub(crate) async fn prepare(&mut self, sql: &str) -> Result<(), DriverError> {
        let sql = sql.to_owned();
        self.call(move |s| {
            // Compiled now so that errors surface at prepare time, and kept in the cache.
            s.conn.prepare_cached(&sql)?;
            s.statements.push(sql);
            Ok(())
        })
        .await
    }

    pub(crate) async fn execute(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Outcome, DriverError> {
        let params = params.to_vec();
        self.call(move |s| {
            let mut stmt = s.conn.prepare_cached(&s.statements[idx])?;
            run(&s.conn, &mut stmt, &params)
        })
        .await
    }

    /// A prepared statement's rows, decoded.
    pub(crate) async fn execute_rows(
        &mut self,
        idx: usize,
        params: &[Value],
    ) -> Result<Rows, DriverError> {
        let params = params.to_vec();
        self.call(move |s| {
            let mut stmt = s.conn.prepare_cached(&s.statements[idx])?;
            bind(&mut stmt, &params)?;
            all_rows(&mut stmt)
        })
        .await
    }

    pub(crate) async fn execute_text(&mut self, sql: &str) -> Result<Outcome, DriverError> {
        let sql = sql.to_owned();
        self.call(move |s| {
            // Text mode is for statements sent once (or deliberately unprepared), so they stay
            // out of the statement cache; a text may hold several statements.
            let mut out = Outcome {
                result_set: false,
                rows: 0,
            };
            let mut batch = rusqlite::Batch::new(&s.conn, &sql);
            while let Some(mut stmt) = batch.next()? {
                let o = run(&s.conn, &mut stmt, &[])?;
                out.result_set |= o.result_set;
                out.rows += o.rows;
            }
            Ok(out)
        })
        .await
    }

    pub(crate) async fn query(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        let sql = sql.to_owned();
        let params = params.to_vec();
        self.call(move |s| {
            let mut stmt = s.conn.prepare(&sql)?;
            bind(&mut stmt, &params)?;
            let width = stmt.column_count();
            let mut rows = stmt.raw_query();
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let mut values = Vec::with_capacity(width);
                for i in 0..width {
                    values.push(from_sqlite(row.get_ref(i)?));
                }
                out.push(values);
            }
            Ok(out)
        })
        .await
    }

    pub(crate) async fn query_rows(
        &mut self,
        sql: &str,
        params: &[Value],
        _text: bool,
    ) -> Result<Rows, DriverError> {
        let sql = sql.to_owned();
        let params = params.to_vec();
        self.call(move |s| {
            let mut stmt = s.conn.prepare(&sql)?;
            bind(&mut stmt, &params)?;
            all_rows(&mut stmt)
        })
        .await
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        self.call(move |s| load_rows(&mut s.conn, load)).await
    }

    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        let load = BulkLoad {
            table: load.table.clone(),
            columns: load.columns.clone(),
            rows: load.into_rows(),
        };
        self.bulk_load(load).await
    }

    pub(crate) async fn close(self) {
        drop(self.jobs);
        // Wait for the thread to close the database (so the file is released when close
        // returns), without blocking an async worker.
        let _ = self.closed.await;
    }
}

fn thread_gone() -> DriverError {
    // The thread only ends early if it panicked; a fresh connection gets a fresh thread.
    DriverError::lost(None, "the SQLite connection thread has stopped")
}

/// Writers wait this long for the single write lock, like server engines wait for row locks,
/// instead of failing at once with SQLITE_BUSY under concurrency.
const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

fn open(path: Option<&Path>) -> rusqlite::Result<rusqlite::Connection> {
    let conn = match path {
        Some(p) => {
            let conn = rusqlite::Connection::open(p)?;
            // Before the first statement, so that turning WAL on waits for a writer of the
            // file (another process's load) instead of failing at once.
            conn.busy_timeout(BUSY_TIMEOUT)?;
            // WAL: readers never block the writer nor the writer the readers, which is what
            // concurrent benchmark clients need (rollback journals serialize everything).
            let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            // NORMAL is WAL's intended durability (fsync at checkpoints, not at every commit);
            // FULL would make every COMMIT an fsync and measure the disk, not the engine.
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn
        }
        None => {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            memory_keeper(flags)?;
            let conn = rusqlite::Connection::open_with_flags(MEMORY_URI, flags)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn
        }
    };
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

/// A shared in-memory database disappears with its last connection; one connection held for
/// the life of the process keeps the data between the prepare step and the run.
fn memory_keeper(flags: OpenFlags) -> rusqlite::Result<()> {
    static KEEPER: OnceLock<Mutex<rusqlite::Connection>> = OnceLock::new();
    if KEEPER.get().is_none() {
        let conn = rusqlite::Connection::open_with_flags(MEMORY_URI, flags)?;
        // Another thread may have won the race; its connection serves just as well.
        let _ = KEEPER.set(Mutex::new(conn));
    }
    Ok(())
}

struct Param<'a>(&'a Value);

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Float(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

fn bind(stmt: &mut rusqlite::Statement<'_>, params: &[Value]) -> rusqlite::Result<()> {
    let expected = stmt.parameter_count();
    if params.len() != expected {
        return Err(rusqlite::Error::InvalidParameterCount(
            params.len(),
            expected,
        ));
    }
    for (i, p) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, Param(p))?;
    }
    Ok(())
}

/// Execute one statement: rows counted for a statement with result columns, else rows
/// changed.
fn run(
    conn: &rusqlite::Connection,
    stmt: &mut rusqlite::Statement<'_>,
    params: &[Value],
) -> rusqlite::Result<Outcome> {
    bind(stmt, params)?;
    if stmt.column_count() > 0 {
        let mut rows = stmt.raw_query();
        let mut n = 0u64;
        while rows.next()?.is_some() {
            n += 1;
        }
        return Ok(Outcome {
            result_set: true,
            rows: n,
        });
    }
    // sqlite3_changes() still reports the last INSERT/UPDATE/DELETE after a COMMIT or DDL;
    // only a statement that moved the total made changes of its own.
    let before = conn.total_changes();
    let changed = stmt.raw_execute()? as u64;
    let rows = if conn.total_changes() == before {
        0
    } else {
        changed
    };
    Ok(Outcome {
        result_set: false,
        rows,
    })
}

/// All rows in one transaction, through a prepared multi-row INSERT (far fewer statement
/// steps than one INSERT per row).
/// The pragmas a bulk load runs under (and restores afterwards): a benchmark database being
/// loaded is thrown away if the machine crashes mid-load, so the load skips the fsyncs
/// (`synchronous = OFF`) and gets a 64 MiB page cache.
pub const SQLITE_LOAD_PRAGMAS: &str = "synchronous = OFF, cache_size = -65536 (64 MiB)";

fn load_rows(conn: &mut rusqlite::Connection, load: BulkLoad) -> rusqlite::Result<u64> {
    let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
    let cache_size: i64 = conn.query_row("PRAGMA cache_size", [], |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "cache_size", -65536)?;
    let loaded = load_rows_in_one_transaction(conn, load);
    let restored = conn
        .pragma_update(None, "synchronous", synchronous)
        .and_then(|()| conn.pragma_update(None, "cache_size", cache_size));
    let loaded = loaded?;
    restored?;
    Ok(loaded)
}

/// One transaction for the whole load, prepared multi-row INSERTs.
fn load_rows_in_one_transaction(
    conn: &mut rusqlite::Connection,
    load: BulkLoad,
) -> rusqlite::Result<u64> {
    let BulkLoad {
        table,
        columns,
        mut rows,
    } = load;
    let width = columns.len().max(1);
    let batch = (MAX_PARAMS / width).clamp(1, 500);
    let insert = |n: usize| {
        let one = format!("({})", vec!["?"; width].join(","));
        format!(
            "INSERT INTO {} ({}) VALUES {}",
            quote_ident(&table),
            columns
                .iter()
                .map(|c| quote_ident(c))
                .collect::<Vec<_>>()
                .join(", "),
            vec![one; n].join(",")
        )
    };
    let tx = conn.transaction()?;
    let mut loaded = 0u64;
    {
        let mut full = tx.prepare(&insert(batch))?;
        let mut pending: Vec<Vec<Value>> = Vec::with_capacity(batch);
        loop {
            pending.clear();
            pending.extend(rows.by_ref().take(batch));
            if pending.is_empty() {
                break;
            }
            let mut tail;
            let stmt = if pending.len() == batch {
                &mut full
            } else {
                tail = tx.prepare(&insert(pending.len()))?;
                &mut tail
            };
            let mut i = 1;
            for row in &pending {
                if row.len() != width {
                    return Err(rusqlite::Error::InvalidParameterCount(row.len(), width));
                }
                for v in row {
                    stmt.raw_bind_parameter(i, Param(v))?;
                    i += 1;
                }
            }
            loaded += stmt.raw_execute()? as u64;
            if pending.len() < batch {
                break;
            }
        }
    }
    tx.commit()?;
    Ok(loaded)
}

/// Identifiers come from dbrig itself (validated names), so quoting only protects keywords.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn from_sqlite(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Float(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let mut s = String::with_capacity(2 + b.len() * 2);
            s.push_str("\\x");
            for byte in b {
                s.push_str(&format!("{byte:02x}"));
            }
            Value::Text(s)
        }
    }
}

fn open_error(e: rusqlite::Error, place: &str, policy: &ErrorPolicy) -> DriverError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen => {
            DriverError::fatal(
                ErrorKind::Unreachable,
                format!(
                    "cannot open the SQLite database {place}: {}",
                    one_line(&e.to_string())
                ),
            )
        }
        _ => map_error(e, policy),
    }
}

/// Classify by result code only. The code reported is the extended one; the policy is asked
/// about both, so the default list's BUSY (5) and LOCKED (6) also cover their extended
/// forms (e.g. 517 BUSY_SNAPSHOT, 262 LOCKED_SHAREDCACHE).
fn map_error(e: rusqlite::Error, policy: &ErrorPolicy) -> DriverError {
    // A statement that does not prepare (a missing table or column, a syntax error) comes
    // with where in its text it failed; its code is kept as any other's.
    if let rusqlite::Error::SqlInputError {
        error, msg, offset, ..
    } = &e
    {
        let code = error.extended_code.to_string();
        return DriverError::new(
            ErrorKind::Statement,
            policy.classify(&code),
            Some(code.clone()),
            format!(
                "SQLite error {code}: {} (at offset {offset})",
                one_line(msg)
            ),
        );
    }
    match &e {
        rusqlite::Error::SqliteFailure(f, message) => {
            let extended = f.extended_code;
            let primary = extended & 0xff;
            let code = extended.to_string();
            let class = if policy.is_retryable(&code) || policy.is_retryable(&primary.to_string()) {
                ErrorClass::Retryable
            } else {
                ErrorClass::Fatal
            };
            let text = match message {
                Some(m) => format!("{m} ({f})"),
                None => f.to_string(),
            };
            DriverError::new(
                ErrorKind::Statement,
                class,
                Some(code.clone()),
                format!("SQLite error {code}: {}", one_line(&text)),
            )
        }
        _ => DriverError::new(
            ErrorKind::Statement,
            ErrorClass::Fatal,
            None,
            format!("SQLite: {}", one_line(&e.to_string())),
        ),
    }
}

/// Headroom a new connection thread needs under an address-space limit: its stack (2 MiB),
/// the signal stack Rust's runtime maps inside the new thread, and what its first
/// allocations take.
const THREAD_HEADROOM: u64 = 64 << 20;

/// `(used, limit)` bytes when the process's address-space limit (`ulimit -v`) leaves less
/// than [`THREAD_HEADROOM`]. Checked before a thread is spawned because a thread whose stack
/// still fits but whose signal stack does not is aborted by Rust's runtime (no error to turn
/// into one line), while refusing here is an ordinary error.
fn address_space_short() -> Option<(u64, u64)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let limit: u64 = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used_kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let used = used_kib * 1024;
    (used + THREAD_HEADROOM > limit).then_some((used, limit))
}

/// Every row of a bound statement, with its column names.
fn all_rows(stmt: &mut rusqlite::Statement<'_>) -> Result<Rows, rusqlite::Error> {
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let width = columns.len();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            values.push(from_sqlite(row.get_ref(i)?));
        }
        out.push(values);
    }
    Ok(Rows { columns, rows: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_and_locked_are_retryable_in_extended_forms() {
        let policy = ErrorPolicy::default();
        for (ext, class) in [
            (5, ErrorClass::Retryable),
            (517, ErrorClass::Retryable),
            (262, ErrorClass::Retryable),
            (1, ErrorClass::Fatal),
            (2067, ErrorClass::Fatal),
        ] {
            let e = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(ext), None);
            let d = map_error(e, &policy);
            assert_eq!(d.class, class, "{ext}");
            assert_eq!(d.code, Some(ext.to_string()));
        }
    }
}
