//! The SQLite backend, the embedded default: one connection to one results file. Everything
//! SQLite about the results database is in this folder — its schema (`migrations/`, applied
//! by `migrate.rs`, with `legacy.rs` converting schema 1's rows), every query and every write —
//! and nowhere else.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use dbrig_core::results::OsSample;
use dbrig_core::{IntervalSample, LatencyHistogram, LatencySummary, QueryCounters};
use rusqlite::types::Type;
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Row, Transaction, TransactionBehavior, named_params,
    params,
};
use serde::de::DeserializeOwned;

use crate::error::StoreError;
use crate::liveness::{machine_id, new_run_uid, writer_alive_on};
use crate::measured::{IntervalCols, MeasuredCols, to_json};
use crate::model::{
    CellId, CellRow, NewCell, NewRun, NewTrial, RunId, RunRow, RunStatus, TrialId, TrialJson,
    TrialMeasurements, TrialRow,
};
use crate::reader::ResultsReader;
use crate::time::format_rfc3339;
use crate::writer::ResultsWriter;

mod columns;
mod legacy;
mod migrate;

pub use migrate::SCHEMA_VERSION;

/// How long a write waits for another dbrig process holding the file's lock. Writes are a
/// few rows per trial, so a wait this long means the other process is stuck, not busy.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The SQLite backend: one connection to one results file. Each write that belongs together
/// (a run row, a cell, a trial with its interval samples) is one transaction, committed before
/// the method returns, so a crash between trials loses nothing that was recorded and never
/// leaves half a trial.
pub(crate) struct SqliteBackend {
    conn: Connection,
    /// The file, for error messages (`:memory:` for an in-memory store).
    path: PathBuf,
    /// The device and inode of the file opened (`None` in memory): a file removed or replaced
    /// while open is told by them ([`ResultsReader::check_in_place`]).
    file_id: Option<(u64, u64)>,
}

/// A file's device and inode.
fn file_id(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// Map a SQLite error to the store's error for `path`.
pub(crate) fn sql_error(path: &Path, source: rusqlite::Error) -> StoreError {
    match &source {
        rusqlite::Error::SqliteFailure(e, _) if e.code == ErrorCode::DatabaseBusy => {
            StoreError::Busy { path: path.into() }
        }
        rusqlite::Error::SqliteFailure(e, _) if e.code == ErrorCode::NotADatabase => {
            StoreError::NotADatabase { path: path.into() }
        }
        rusqlite::Error::FromSqlConversionFailure(column, ty, detail) => StoreError::Corrupt {
            path: path.into(),
            what: format!("column {column} ({ty})"),
            detail: detail.to_string(),
        },
        rusqlite::Error::InvalidColumnType(_, name, ty) => StoreError::Corrupt {
            path: path.into(),
            what: format!("column {name}"),
            detail: format!("unexpected {ty} value"),
        },
        _ => StoreError::Sqlite {
            path: path.into(),
            source,
        },
    }
}

impl SqliteBackend {
    /// Open (or create) the results database at `path` and bring its schema up to date.
    ///
    /// The parent folder must exist: a typo in `--results` should fail, not create folders.
    /// The file is put in WAL mode with foreign keys on and a busy timeout, so two dbrig
    /// processes can share it. A file with a newer schema is refused, never downgraded.
    pub(crate) fn open(path: &Path) -> Result<SqliteBackend> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.is_dir()
        {
            return Err(StoreError::NoParentDir {
                path: path.into(),
                parent: parent.into(),
            });
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.into(),
            source,
        })?;
        Self::setup(conn, path.into(), true)
    }

    /// A private in-memory database (tests, dry runs).
    pub(crate) fn open_in_memory() -> Result<SqliteBackend> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: path.clone(),
            source,
        })?;
        Self::setup(conn, path, false)
    }

    fn setup(mut conn: Connection, path: PathBuf, wal: bool) -> Result<SqliteBackend> {
        let sql = |e| sql_error(&path, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sql)?;
        // Turning WAL on and a first migration each read the file, then want its write lock.
        // When several dbrig processes open a new file at once, two can hold the read lock and
        // want the write lock together; SQLite then answers BUSY at once instead of calling
        // the busy handler (waiting could never end), so the wait is done here: both steps
        // are idempotent and roll back on error, so they are simply tried again.
        let deadline = Instant::now() + BUSY_TIMEOUT;
        let mut pause = Duration::from_millis(2);
        loop {
            match Self::prepare_file(&mut conn, &path, wal) {
                Err(StoreError::Busy { .. }) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
                Ok(()) => break,
            }
        }
        // Read right after opening; a file that cannot be read here is not watched.
        let file_id = if wal { file_id(&path).ok() } else { None };
        Ok(SqliteBackend {
            conn,
            path,
            file_id,
        })
    }

    /// WAL mode and the current schema: what `setup` waits its turn for.
    fn prepare_file(conn: &mut Connection, path: &Path, wal: bool) -> Result<()> {
        let sql = |e| sql_error(path, e);
        if wal {
            // WAL lets reports read while a run writes. The first statement that touches the
            // file, so a non-SQLite file fails here (NotADatabase).
            // Some file systems cannot do WAL (no shared memory); SQLite then keeps the old
            // mode, which is still correct, only less concurrent, so the answer is not checked.
            conn.pragma_update_and_check(None, "journal_mode", "wal", |_| Ok(()))
                .map_err(sql)?;
            // Results are written a few rows per trial, so a full fsync per commit costs
            // nothing and keeps the last trial across a power cut, not just a crash.
            conn.pragma_update(None, "synchronous", "FULL")
                .map_err(sql)?;
        }
        migrate::migrate(conn, path)
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |e| sql_error(&self.path, e)
    }

    /// Every row `query` selects, each made by `row`.
    fn all<T>(
        &self,
        query: &str,
        params: impl rusqlite::Params,
        row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare(query).map_err(self.sql())?;
        stmt.query_map(params, row)
            .and_then(|rows| rows.collect())
            .map_err(self.sql())
    }

    fn trial_query(&self, query: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<TrialRow>> {
        self.all(query, params, trial_from_row)
    }

    /// The one value `query` selects of trial `trial` (its `?1`); a trial that is not there is
    /// an error.
    fn of_trial<T: rusqlite::types::FromSql>(&self, query: &str, trial: TrialId) -> Result<T> {
        self.one(query, trial, |r| r.get(0))?
            .ok_or_else(|| StoreError::NoSuchTrial {
                path: self.path.clone(),
                id: trial,
            })
    }

    /// The row `query` selects by the id `id` (its `?1`), made by `row`; `None` when there is
    /// none.
    fn one<T>(
        &self,
        query: &str,
        id: impl rusqlite::ToSql,
        row: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        self.conn
            .query_row(query, [id], row)
            .optional()
            .map_err(self.sql())
    }
}

impl ResultsReader for SqliteBackend {
    fn path(&self) -> &Path {
        &self.path
    }

    fn check_in_place(&self) -> Result<()> {
        let Some(opened) = self.file_id else {
            return Ok(());
        };
        match file_id(&self.path) {
            Ok(now) if now == opened => Ok(()),
            Ok(_) => Err(StoreError::FileReplaced {
                path: self.path.clone(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::FileRemoved {
                path: self.path.clone(),
            }),
            // Unreadable for another reason (permissions changed): nothing is known to be lost.
            Err(_) => Ok(()),
        }
    }

    fn save_copy(&self, to: &Path) -> Result<()> {
        self.conn
            .execute("VACUUM INTO ?1", params![to.to_string_lossy()])
            .map_err(|e| sql_error(to, e))?;
        Ok(())
    }

    fn schema_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| sql_error(&self.path, e))
    }

    fn runs(&self) -> Result<Vec<RunRow>> {
        self.all(
            &format!("SELECT {RUN_COLS} FROM run ORDER BY id"),
            [],
            run_from_row,
        )
    }

    fn run(&self, id: RunId) -> Result<RunRow> {
        self.one(
            &format!("SELECT {RUN_COLS} FROM run WHERE id = ?1"),
            id,
            run_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchRun {
            path: self.path.clone(),
            id,
        })
    }

    fn latest_run_id(&self) -> Result<Option<RunId>> {
        self.conn
            .query_row("SELECT max(id) FROM run", [], |r| r.get(0))
            .map_err(self.sql())
    }

    fn latest_plan_run(&self, plan_name: &str) -> Result<Option<RunId>> {
        self.conn
            .query_row(
                "SELECT max(id) FROM run WHERE kind = 'plan' AND name = ?1",
                [plan_name],
                |r| r.get(0),
            )
            .map_err(self.sql())
    }

    fn cells(&self, run: RunId) -> Result<Vec<CellRow>> {
        self.all(
            &format!("SELECT {CELL_COLS} FROM cell WHERE run_id = ?1 ORDER BY id"),
            [run],
            cell_from_row,
        )
    }

    fn cell(&self, id: CellId) -> Result<CellRow> {
        self.one(
            &format!("SELECT {CELL_COLS} FROM cell WHERE id = ?1"),
            id,
            cell_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchCell {
            path: self.path.clone(),
            id,
        })
    }

    fn trials(&self, cell: CellId) -> Result<Vec<TrialRow>> {
        self.trial_query(
            &format!(
                "SELECT {TRIAL_COLS} FROM trial t WHERE t.cell_id = ?1 ORDER BY t.trial_no, t.id"
            ),
            params![cell],
        )
    }

    fn trial(&self, id: TrialId) -> Result<TrialRow> {
        self.trial_query(
            &format!("SELECT {TRIAL_COLS} FROM trial t WHERE t.id = ?1"),
            params![id],
        )?
        .pop()
        .ok_or_else(|| StoreError::NoSuchTrial {
            path: self.path.clone(),
            id,
        })
    }

    fn finished_trials(&self, run: RunId, cell_key: &str) -> Result<Vec<TrialRow>> {
        self.trial_query(
            &format!(
                "SELECT {TRIAL_COLS} FROM trial t JOIN cell c ON c.id = t.cell_id
                 WHERE c.run_id = ?1 AND c.cell_key = ?2 AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            params![run, cell_key],
        )
    }

    fn finished_trials_for_plan(&self, plan_name: &str, cell_key: &str) -> Result<Vec<TrialRow>> {
        self.trial_query(
            &format!(
                "SELECT {TRIAL_COLS} FROM trial t
                   JOIN cell c ON c.id = t.cell_id
                   JOIN run r ON r.id = c.run_id
                 WHERE r.name = ?1 AND c.cell_key = ?2 AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            params![plan_name, cell_key],
        )
    }

    fn histogram(&self, trial: TrialId) -> Result<Option<LatencyHistogram>> {
        let bytes: Option<Vec<u8>> =
            self.of_trial("SELECT latency_hist FROM trial WHERE id = ?1", trial)?;
        bytes
            .map(|b| {
                LatencyHistogram::from_bytes(&b).map_err(|e| StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("latency histogram of trial {trial}"),
                    detail: e.to_string(),
                })
            })
            .transpose()
    }

    fn intervals(&self, trial: TrialId) -> Result<Vec<IntervalSample>> {
        self.all(
            "SELECT t_s, threads, tps, qps, reads_ps, writes_ps, other_ps, latency_pct_ms,
                    errors_ps, reconnects_ps, backlog
             FROM interval_sample WHERE trial_id = ?1 ORDER BY seq",
            [trial],
            |r| {
                Ok(IntervalSample {
                    t_s: real(r, "t_s")?,
                    threads: r.get("threads")?,
                    tps: real(r, "tps")?,
                    qps: real(r, "qps")?,
                    reads_ps: real(r, "reads_ps")?,
                    writes_ps: real(r, "writes_ps")?,
                    other_ps: real(r, "other_ps")?,
                    latency_pct_ms: real(r, "latency_pct_ms")?,
                    errors_ps: real(r, "errors_ps")?,
                    reconnects_ps: real(r, "reconnects_ps")?,
                    backlog: opt_count(r, "backlog")?,
                })
            },
        )
    }

    fn os_samples(&self, trial: TrialId) -> Result<Vec<OsSample>> {
        let text: Option<String> = self.of_trial(
            "SELECT json_extract(environment, '$.os_samples') FROM trial WHERE id = ?1",
            trial,
        )?;
        let Some(text) = text else {
            return Ok(Vec::new());
        };
        let mut samples: Vec<OsSample> =
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: self.path.clone(),
                what: format!("OS samples of trial {trial}"),
                detail: e.to_string(),
            })?;
        samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(samples)
    }
}

impl ResultsWriter for SqliteBackend {
    fn begin_run(&mut self, run: &NewRun<'_>) -> Result<RunId> {
        let command_line = to_json(run.command_line);
        let options = to_json(run.options);
        let host = to_json(run.host);
        let sql = |e| sql_error(&self.path, e);
        self.conn
            .execute(
                "INSERT INTO run (kind, name, status, started_at, dbrig_version, command_line,
                                  options, host, plan_text, pid, uid, machine)
                 VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    run.kind.as_str(),
                    run.name,
                    format_rfc3339(run.started_at),
                    run.dbrig_version,
                    command_line,
                    options,
                    host,
                    run.plan_text,
                    std::process::id(),
                    new_run_uid(run.started_at),
                    machine_id(),
                ],
            )
            .map_err(sql)?;
        let id = RunId(self.conn.last_insert_rowid());
        Ok(id)
    }

    fn insert_copied_run(
        &mut self,
        doc: &crate::copy::RunDocument,
        started_at: SystemTime,
    ) -> Result<Result<RunId, RunId>> {
        let path = &self.path;
        let sql = |e| sql_error(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let existing: Option<RunId> = tx
            .query_row("SELECT id FROM run WHERE uid = ?1", [&doc.uid], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql)?;
        if let Some(id) = existing {
            return Ok(Err(id));
        }
        tx.execute(
            "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version, command_line,
                              options, host, plan_text, pid, machine)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                doc.uid,
                doc.kind.as_str(),
                doc.name,
                format_rfc3339(started_at),
                doc.dbrig_version,
                to_json(&doc.command_line),
                to_json(&doc.options),
                to_json(&doc.host),
                doc.plan_text,
                std::process::id(),
                machine_id(),
            ],
        )
        .map_err(sql)?;
        let id = RunId(tx.last_insert_rowid());
        tx.commit().map_err(sql)?;
        Ok(Ok(id))
    }

    fn set_run_provenance(
        &mut self,
        id: RunId,
        provenance: &crate::model::Provenance,
    ) -> Result<()> {
        let tags = (!provenance.tags.is_empty()).then(|| to_json(&provenance.tags));
        self.conn
            .execute(
                "UPDATE run SET tags = ?1, code_commit = ?2 WHERE id = ?3",
                params![tags, provenance.commit, id],
            )
            .map_err(|e| sql_error(&self.path, e))?;
        Ok(())
    }

    fn set_run_host(&mut self, id: RunId, host: &serde_json::Value) -> Result<()> {
        self.conn
            .execute(
                "UPDATE run SET host = ?1 WHERE id = ?2",
                params![to_json(host), id],
            )
            .map_err(|e| sql_error(&self.path, e))?;
        Ok(())
    }

    fn finish_run(
        &mut self,
        id: RunId,
        status: RunStatus,
        error: Option<&str>,
        finished_at: SystemTime,
    ) -> Result<()> {
        let path = &self.path;
        let sql = |e| sql_error(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let current: RunStatus = tx
            .query_row("SELECT status FROM run WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(sql)?
            .ok_or_else(|| StoreError::NoSuchRun {
                path: path.clone(),
                id,
            })?;
        if matches!(current, RunStatus::Done | RunStatus::Failed) {
            return Err(StoreError::RunAlreadyFinished {
                path: path.clone(),
                id,
                status: current,
            });
        }
        tx.execute(
            "UPDATE run SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
            params![id, status, error, format_rfc3339(finished_at)],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(())
    }

    fn reopen_run(&mut self, id: RunId) -> Result<()> {
        let path = &self.path;
        let sql = |e| sql_error(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let (current, pid, machine): (RunStatus, Option<u32>, Option<String>) = tx
            .query_row(
                "SELECT status, pid, machine FROM run WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(sql)?
            .ok_or_else(|| StoreError::NoSuchRun {
                path: path.clone(),
                id,
            })?;
        // Checked inside the write transaction, so two resumes cannot both take the run: the
        // second sees the first's pid, alive.
        if current == RunStatus::Running
            && let Some(pid) = pid
            && pid != std::process::id()
            && writer_alive_on(machine.as_deref(), pid)
        {
            return Err(StoreError::RunBeingWritten { id, pid });
        }
        if current == RunStatus::Done {
            return Err(StoreError::RunAlreadyFinished {
                path: path.clone(),
                id,
                status: current,
            });
        }
        tx.execute(
            "UPDATE run SET status = 'running', error = NULL, finished_at = NULL, pid = ?2,
                            machine = ?3 WHERE id = ?1",
            params![id, std::process::id(), machine_id()],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(())
    }

    fn ensure_cell(&mut self, run: RunId, cell: &NewCell<'_>) -> Result<CellId> {
        let options = to_json(cell.options);
        let path = &self.path;
        let sql = |e| sql_error(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        require_run(&tx, path, run)?;
        let existing = tx
            .query_row(
                &format!("SELECT {CELL_COLS} FROM cell WHERE run_id = ?1 AND cell_key = ?2"),
                params![run, cell.cell_key],
                cell_from_row,
            )
            .optional()
            .map_err(sql)?;
        let id = match existing {
            Some(row) => {
                let mismatch = if row.configuration != cell.configuration {
                    Some("configuration")
                } else if row.workload != cell.workload {
                    Some("workload")
                } else if row.clients != cell.clients {
                    Some("client count")
                } else if row.target != cell.target {
                    Some("target")
                } else if &row.options != cell.options {
                    Some("options")
                } else {
                    None
                };
                if let Some(field) = mismatch {
                    return Err(StoreError::CellMismatch {
                        path: path.clone(),
                        run,
                        cell_key: cell.cell_key.to_owned(),
                        field,
                    });
                }
                row.id
            }
            None => {
                tx.execute(
                    "INSERT INTO cell (run_id, cell_key, configuration, workload, clients,
                                       options, target)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        run,
                        cell.cell_key,
                        cell.configuration,
                        cell.workload,
                        cell.clients,
                        options,
                        cell.target
                    ],
                )
                .map_err(sql)?;
                CellId(tx.last_insert_rowid())
            }
        };
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    fn record_trial(
        &mut self,
        cell: CellId,
        trial: &NewTrial<'_>,
        json: &TrialJson,
    ) -> Result<TrialId> {
        // Everything that can fail without the database is prepared before the transaction.
        let measured = trial
            .measurements
            .map(|m| MeasuredCols::new(m, &self.path))
            .transpose()?;
        let result = json.result.as_ref().map(to_json);
        let environment = json.environment.as_ref().map(to_json);
        let started_at = format_rfc3339(trial.started_at);
        let finished_at = format_rfc3339(trial.finished_at);

        let path = &self.path;
        let sql = |e| sql_error(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let cell_exists: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM cell WHERE id = ?1)",
                [cell],
                |r| r.get(0),
            )
            .map_err(sql)?;
        if !cell_exists {
            return Err(StoreError::NoSuchCell {
                path: path.clone(),
                id: cell,
            });
        }
        if trial.status.is_finished() {
            let duplicate: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM trial WHERE cell_id = ?1 AND trial_no = ?2
                                    AND status = 'done')",
                    params![cell, trial.trial],
                    |r| r.get(0),
                )
                .map_err(sql)?;
            if duplicate {
                return Err(StoreError::DuplicateTrial {
                    path: path.clone(),
                    cell,
                    trial: trial.trial,
                });
            }
        }
        match (&measured, trial.measurements) {
            (Some(c), Some(m)) => {
                tx.execute(
                    "INSERT INTO trial (
                        cell_id, trial_no, status, reason, server_version, started_at,
                        finished_at, result, environment, measured, threads, duration_s, transactions, reads,
                        writes, others, ignored_errors, reconnects, fatal_errors,
                        key_distribution, percentile, interrupted, latency_hist, lat_count,
                        lat_min_ms, lat_avg_ms, lat_max_ms, lat_p50_ms, lat_p90_ms, lat_p95_ms,
                        lat_p99_ms, lat_p999_ms, lat_sum_ms, tps, qps, rate)
                     VALUES (
                        :cell, :trial, :status, :reason, :server_version, :started_at,
                        :finished_at, :result, :environment, 1, :threads, :duration_s, :transactions, :reads,
                        :writes, :others, :ignored_errors, :reconnects, :fatal_errors,
                        :key_distribution, :percentile, :interrupted, :hist, :lat_count,
                        :min, :avg, :max, :p50, :p90, :p95, :p99, :p999, :sum, :tps, :qps,
                        :rate)",
                    named_params! {
                        ":cell": cell,
                        ":trial": trial.trial,
                        ":status": trial.status,
                        ":reason": trial.reason,
                        ":server_version": trial.server_version,
                        ":started_at": started_at,
                        ":finished_at": finished_at,
                        ":result": result,
                        ":environment": environment,
                        ":threads": m.threads,
                        ":duration_s": m.duration_s,
                        ":transactions": c.transactions,
                        ":reads": c.reads,
                        ":writes": c.writes,
                        ":others": c.others,
                        ":ignored_errors": c.ignored_errors,
                        ":reconnects": c.reconnects,
                        ":fatal_errors": c.fatal_errors,
                        ":key_distribution": c.key_distribution,
                        ":percentile": m.percentile,
                        ":interrupted": m.interrupted,
                        ":hist": c.histogram,
                        ":lat_count": c.latency_count,
                        ":min": c.summary.min,
                        ":avg": c.summary.avg,
                        ":max": c.summary.max,
                        ":p50": c.summary.p50,
                        ":p90": c.summary.p90,
                        ":p95": c.summary.p95,
                        ":p99": c.summary.p99,
                        ":p999": c.summary.p999,
                        ":sum": c.summary.sum,
                        ":tps": m.tps(),
                        ":qps": m.qps(),
                        ":rate": c.rate,
                    },
                )
                .map_err(sql)?;
            }
            _ => {
                tx.execute(
                    "INSERT INTO trial (cell_id, trial_no, status, reason, server_version,
                                        started_at, finished_at, result, environment, measured)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0)",
                    params![
                        cell,
                        trial.trial,
                        trial.status,
                        trial.reason,
                        trial.server_version,
                        started_at,
                        finished_at,
                        result,
                        environment
                    ],
                )
                .map_err(sql)?;
            }
        }
        let id = TrialId(tx.last_insert_rowid());
        if let Some(c) = &measured {
            insert_intervals(&tx, id, &c.intervals).map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(id)
    }
}

fn insert_intervals(
    tx: &Transaction<'_>,
    trial: TrialId,
    rows: &[IntervalCols],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO interval_sample (trial_id, seq, t_s, threads, tps, qps, reads_ps, writes_ps,
                                      other_ps, latency_pct_ms, errors_ps, reconnects_ps, backlog)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for (seq, row) in rows.iter().enumerate() {
        let s = &row.sample;
        stmt.execute(params![
            trial,
            seq as i64,
            s.t_s,
            s.threads,
            s.tps,
            s.qps,
            s.reads_ps,
            s.writes_ps,
            s.other_ps,
            s.latency_pct_ms,
            s.errors_ps,
            s.reconnects_ps,
            row.backlog
        ])?;
    }
    Ok(())
}

fn require_run(tx: &Transaction<'_>, path: &Path, run: RunId) -> Result<()> {
    let exists: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM run WHERE id = ?1)",
            [run],
            |r| r.get(0),
        )
        .map_err(|e| sql_error(path, e))?;
    if exists {
        Ok(())
    } else {
        Err(StoreError::NoSuchRun {
            path: path.into(),
            id: run,
        })
    }
}

const RUN_COLS: &str = "id, uid, kind, name, status, error, started_at, finished_at, \
                        dbrig_version, command_line, options, host, plan_text, pid, machine, \
                        tags, code_commit";

fn run_from_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    let pid: Option<u32> = r.get("pid")?;
    let machine: Option<String> = r.get("machine")?;
    let mut status: RunStatus = r.get("status")?;
    if status == RunStatus::Running && !pid.is_some_and(|p| writer_alive_on(machine.as_deref(), p))
    {
        status = RunStatus::Abandoned;
    }
    Ok(RunRow {
        id: r.get("id")?,
        uid: r.get("uid")?,
        kind: r.get("kind")?,
        name: r.get("name")?,
        status,
        error: r.get("error")?,
        started_at: r.get("started_at")?,
        finished_at: r.get("finished_at")?,
        dbrig_version: r.get("dbrig_version")?,
        command_line: json(r, "command_line")?,
        options: json(r, "options")?,
        host: json(r, "host")?,
        plan_text: r.get("plan_text")?,
        pid,
        machine,
        provenance: crate::model::Provenance {
            tags: opt_json(r, "tags")?.unwrap_or_default(),
            commit: r.get("code_commit")?,
        },
    })
}

const CELL_COLS: &str = "id, run_id, cell_key, configuration, workload, clients, options, target";

fn cell_from_row(r: &Row<'_>) -> rusqlite::Result<CellRow> {
    Ok(CellRow {
        id: r.get("id")?,
        run_id: r.get("run_id")?,
        cell_key: r.get("cell_key")?,
        configuration: r.get("configuration")?,
        workload: r.get("workload")?,
        clients: r.get("clients")?,
        options: json(r, "options")?,
        target: r.get("target")?,
    })
}

const TRIAL_COLS: &str = "t.id, t.cell_id, t.trial_no, t.status, t.reason, t.server_version, \
    t.started_at, t.finished_at, t.result, t.environment, t.measured, t.threads, t.duration_s, t.transactions, \
    t.reads, t.writes, t.others, t.ignored_errors, t.reconnects, t.fatal_errors, \
    t.key_distribution, t.percentile, t.interrupted, t.lat_count, t.lat_min_ms, t.lat_avg_ms, \
    t.lat_max_ms, t.lat_p50_ms, t.lat_p90_ms, t.lat_p95_ms, t.lat_p99_ms, t.lat_p999_ms, \
    t.lat_sum_ms, t.tps, t.qps, t.rate";

fn trial_from_row(r: &Row<'_>) -> rusqlite::Result<TrialRow> {
    let measured: bool = r.get("measured")?;
    let measurements = if measured {
        Some(TrialMeasurements {
            threads: r.get("threads")?,
            key_distribution: json(r, "key_distribution")?,
            duration_s: real(r, "duration_s")?,
            transactions: count(r, "transactions")?,
            queries: QueryCounters {
                read: count(r, "reads")?,
                write: count(r, "writes")?,
                other: count(r, "others")?,
            },
            ignored_errors: count(r, "ignored_errors")?,
            reconnects: count(r, "reconnects")?,
            fatal_errors: json(r, "fatal_errors")?,
            percentile: real(r, "percentile")?,
            interrupted: r.get("interrupted")?,
            latency_count: count(r, "lat_count")?,
            latency: LatencySummary {
                min: real(r, "lat_min_ms")?,
                avg: real(r, "lat_avg_ms")?,
                max: real(r, "lat_max_ms")?,
                p50: real(r, "lat_p50_ms")?,
                p90: real(r, "lat_p90_ms")?,
                p95: real(r, "lat_p95_ms")?,
                p99: real(r, "lat_p99_ms")?,
                p999: real(r, "lat_p999_ms")?,
                sum: real(r, "lat_sum_ms")?,
            },
            tps: real(r, "tps")?,
            qps: real(r, "qps")?,
            rate: opt_json(r, "rate")?,
        })
    } else {
        None
    };
    Ok(TrialRow {
        id: r.get("id")?,
        cell_id: r.get("cell_id")?,
        trial: r.get("trial_no")?,
        status: r.get("status")?,
        reason: r.get("reason")?,
        server_version: r.get("server_version")?,
        started_at: r.get("started_at")?,
        finished_at: r.get("finished_at")?,
        measurements,
        result: opt_json(r, "result")?,
        environment: opt_json(r, "environment")?,
    })
}

fn conversion_error(
    r: &Row<'_>,
    col: &str,
    ty: Type,
    e: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    let idx = r.as_ref().column_index(col).unwrap_or(0);
    rusqlite::Error::FromSqlConversionFailure(idx, ty, Box::new(e))
}

fn json<T: DeserializeOwned>(r: &Row<'_>, col: &str) -> rusqlite::Result<T> {
    let text: String = r.get(col)?;
    serde_json::from_str(&text).map_err(|e| conversion_error(r, col, Type::Text, e))
}

fn opt_json<T: DeserializeOwned>(r: &Row<'_>, col: &str) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = r.get(col)?;
    text.map(|t| serde_json::from_str(&t).map_err(|e| conversion_error(r, col, Type::Text, e)))
        .transpose()
}

/// A REAL column; SQLite stores NaN as NULL, so NULL reads back as NaN.
fn real(r: &Row<'_>, col: &str) -> rusqlite::Result<f64> {
    Ok(r.get::<_, Option<f64>>(col)?.unwrap_or(f64::NAN))
}

/// A non-negative INTEGER column holding a `u64`.
fn count(r: &Row<'_>, col: &str) -> rusqlite::Result<u64> {
    let v: i64 = r.get(col)?;
    u64::try_from(v).map_err(|e| conversion_error(r, col, Type::Integer, e))
}

fn opt_count(r: &Row<'_>, col: &str) -> rusqlite::Result<Option<u64>> {
    let v: Option<i64> = r.get(col)?;
    v.map(|v| u64::try_from(v).map_err(|e| conversion_error(r, col, Type::Integer, e)))
        .transpose()
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use dbrig_core::results::TrialEnvironment;
    use dbrig_core::{KeyDistribution, Measurements};
    use serde_json::json;

    use super::*;
    use crate::model::{RunKind, TrialStatus};

    fn store_with_cell() -> (SqliteBackend, CellId) {
        let mut store = SqliteBackend::open_in_memory().unwrap();
        let v = json!({});
        let run = store
            .begin_run(&NewRun {
                kind: RunKind::Oltp,
                name: "w",
                started_at: UNIX_EPOCH,
                options: &v,
                host: &v,
                dbrig_version: "0",
                command_line: &[],
                plan_text: None,
            })
            .unwrap();
        let cell = store
            .ensure_cell(
                run,
                &NewCell {
                    cell_key: "k",
                    configuration: "c",
                    workload: "w",
                    clients: 1,
                    options: &v,
                    target: "mock:",
                },
            )
            .unwrap();
        (store, cell)
    }

    /// Record through the backend, with the JSON values `StoreWriter` would make.
    fn record(store: &mut SqliteBackend, cell: CellId, t: &NewTrial<'_>) -> Result<TrialId> {
        let json = TrialJson {
            result: t.result.map(|r| serde_json::to_value(r).unwrap()),
            environment: t.environment.map(|e| serde_json::to_value(e).unwrap()),
        };
        store.record_trial(cell, t, &json)
    }

    fn measured() -> Measurements {
        let mut latency = LatencyHistogram::new();
        latency.record_us(1000);
        Measurements {
            threads: 1,
            key_distribution: KeyDistribution::Uniform,
            duration_s: 1.0,
            transactions: 1,
            queries: QueryCounters::default(),
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: vec![],
            latency,
            intervals: vec![IntervalSample::default(); 3],
            rate: None,
            percentile: 95.0,
            interrupted: false,
        }
    }

    fn new_trial(m: &Measurements) -> NewTrial<'_> {
        NewTrial {
            trial: 1,
            status: TrialStatus::Done,
            reason: None,
            server_version: None,
            started_at: UNIX_EPOCH,
            finished_at: UNIX_EPOCH,
            measurements: Some(m),
            result: None,
            environment: None,
        }
    }

    #[test]
    fn os_samples_read_back_from_the_trial() {
        let (mut store, cell) = store_with_cell();
        let m = measured();
        let environment: TrialEnvironment = serde_json::from_value(serde_json::json!({
            "os_samples": [
                {"t_s": 2.0, "cpu_user_pct": 40.0, "cpu_system_pct": 10.0, "cpu_iowait_pct": 1.5,
                 "cpu_idle_pct": 48.5, "disk_read_bytes_ps": 0.0, "disk_write_bytes_ps": 4096.0,
                 "mem_used_bytes": 1000, "mem_available_bytes": 9000,
                 "process_cpu_pct": 150.0, "process_rss_bytes": 52428800},
                {"t_s": 1.0, "cpu_user_pct": 20.0, "mem_used_bytes": 900,
                 "process_cpu_pct": null, "process_rss_bytes": null}
            ]
        }))
        .unwrap();
        let with = record(
            &mut store,
            cell,
            &NewTrial {
                environment: Some(&environment),
                ..new_trial(&m)
            },
        )
        .unwrap();
        let s = store.os_samples(with).unwrap();
        assert_eq!(s.len(), 2);
        // Time order, missing fields as zero / None.
        assert_eq!(s[0].t_s, 1.0);
        assert_eq!(s[0].cpu_system_pct, 0.0);
        assert_eq!(s[0].process_cpu_pct, None);
        assert_eq!(s[1].cpu_iowait_pct, 1.5);
        assert_eq!(s[1].disk_write_bytes_per_s, 4096.0);
        assert_eq!(s[1].process_rss_bytes, Some(52_428_800));
        let without = record(
            &mut store,
            cell,
            &NewTrial {
                trial: 2,
                ..new_trial(&m)
            },
        )
        .unwrap();
        assert!(store.os_samples(without).unwrap().is_empty());
        assert!(matches!(
            store.os_samples(TrialId(9999)),
            Err(StoreError::NoSuchTrial { .. })
        ));
    }

    #[test]
    fn a_trial_is_all_or_nothing() {
        let (store, cell) = store_with_cell();
        // Make the third interval insert fail after the trial row was written.
        store
            .conn
            .execute_batch(
                "CREATE TRIGGER fail_third BEFORE INSERT ON interval_sample
                 WHEN NEW.seq = 2 BEGIN SELECT RAISE(ABORT, 'disk full, say'); END",
            )
            .unwrap();
        let mut store = store;
        let m = measured();
        let err = record(&mut store, cell, &new_trial(&m)).unwrap_err();
        assert!(matches!(err, StoreError::Sqlite { .. }), "{err}");
        let count = |table: &str| -> i64 {
            store
                .conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(count("trial"), 0);
        assert_eq!(count("interval_sample"), 0);
        store.conn.execute_batch("DROP TRIGGER fail_third").unwrap();
        let id = record(&mut store, cell, &new_trial(&m)).unwrap();
        assert_eq!(store.intervals(id).unwrap().len(), 3);
    }

    #[test]
    fn counts_beyond_sqlite_integers_are_refused() {
        let (mut store, cell) = store_with_cell();
        let mut m = measured();
        m.transactions = u64::MAX;
        let err = record(&mut store, cell, &new_trial(&m)).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::OutOfRange {
                    what: "transactions",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn corrupt_rows_are_reported_as_corrupt() {
        let (mut store, cell) = store_with_cell();
        let m = measured();
        let id = record(&mut store, cell, &new_trial(&m)).unwrap();
        store
            .conn
            .execute(
                "UPDATE trial SET latency_hist = x'00', status = 'done' WHERE id = ?1",
                [id],
            )
            .unwrap();
        assert!(matches!(
            store.histogram(id),
            Err(StoreError::Corrupt { .. })
        ));
        store
            .conn
            .execute("UPDATE trial SET transactions = -1 WHERE id = ?1", [id])
            .unwrap();
        let err = store.trial(id).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    }

    #[test]
    fn schema_constraints_back_the_rust_checks() {
        let (store, _) = store_with_cell();
        // A status the schema does not know is rejected by SQLite itself.
        let err = store
            .conn
            .execute("UPDATE run SET status = 'paused'", [])
            .unwrap_err();
        assert_eq!(
            err.sqlite_error_code(),
            Some(ErrorCode::ConstraintViolation)
        );
        let fk: bool = store
            .conn
            .pragma_query_value(None, "foreign_keys", |r| r.get(0))
            .unwrap();
        assert!(fk);
    }
}
