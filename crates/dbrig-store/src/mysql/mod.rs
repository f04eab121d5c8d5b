//! The MariaDB/MySQL backend: a results database on a MariaDB or MySQL server, shared by every
//! dbrig that can reach it. Everything MariaDB about the results database is in this folder —
//! its schema (`migrations/`, applied by `migrate.rs` under `GET_LOCK`) and every query and
//! write — and nowhere else. The client (mysql_async) runs on the backend's own thread
//! ([`crate::server::Worker`]).
//!
//! The rules [`ResultsWriter`] names are kept inside one InnoDB transaction each: the run's row
//! is locked (`FOR UPDATE`) before its status is judged; a cell's key and a trial's "finished
//! once" are unique keys as well as checks (MariaDB has no partial index: `done_no`, the trial
//! number of a `done` trial and NULL otherwise, carries it), so writers of many processes on
//! many machines lose nothing and duplicate nothing.
//!
//! MariaDB has no NaN: a measurement that is not a finite number is stored NULL and reads
//! back NaN, as SQLite's NaN does (an infinity reads back NaN too).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use dbrig_core::results::OsSample;
use dbrig_core::{IntervalSample, LatencyHistogram, LatencySummary, QueryCounters};
use mysql_async::prelude::{FromValue, Queryable};
use mysql_async::{Conn, OptsBuilder, Row, TxOpts, Value};
use serde::de::DeserializeOwned;

use crate::error::StoreError;
use crate::liveness::{machine_id, new_run_uid, writer_alive_on};
use crate::measured::{MeasuredCols, to_json};
use crate::model::{
    CellId, CellRow, NewCell, NewRun, NewTrial, RunId, RunRow, RunStatus, TrialId, TrialJson,
    TrialMeasurements, TrialRow,
};
use crate::reader::ResultsReader;
use crate::server::{ServerAddress, ServerEndpoint, Worker};
use crate::time::format_rfc3339;
use crate::writer::ResultsWriter;

mod migrate;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// How long opening the connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// MariaDB's error for a duplicate key.
const ER_DUP_ENTRY: u16 = 1062;

/// MariaDB's error for a foreign key naming no row.
const ER_NO_REFERENCED_ROW: u16 = 1452;

/// The connection, on the worker's thread.
pub(crate) struct MyConn {
    conn: Conn,
    path: PathBuf,
}

/// The MariaDB/MySQL backend (see the module's documentation).
pub(crate) struct MysqlBackend {
    worker: Worker<MyConn>,
    /// The redacted address: `path()` and every message.
    shown: PathBuf,
}

/// Map a client error to the store's error.
pub(crate) fn my_error(path: &Path, source: mysql_async::Error) -> StoreError {
    StoreError::Mysql {
        path: path.into(),
        source,
    }
}

/// What a transaction's job returns: its work, borrowing the transaction.
type TxFuture<'a, R> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<R>> + Send + 'a>>;

/// A measurement as a value MariaDB takes: NULL for what is not a finite number.
fn dbl(v: f64) -> Value {
    if v.is_finite() {
        Value::Double(v)
    } else {
        Value::NULL
    }
}

impl MysqlBackend {
    /// Connect to the database `address` names (it must exist) and bring its schema up to
    /// date.
    pub(crate) fn open(address: &ServerAddress) -> Result<MysqlBackend> {
        let shown = PathBuf::from(&address.shown);
        let mut opts = OptsBuilder::default()
            .user(Some(address.user.clone()))
            .db_name(Some(address.database.clone()))
            .pass(address.password.as_ref().map(|p| p.expose().to_owned()));
        opts = match &address.endpoint {
            ServerEndpoint::Tcp { host, port } => opts
                .ip_or_hostname(host.clone())
                .tcp_port(*port)
                .prefer_socket(false),
            ServerEndpoint::Socket { path, .. } => {
                opts.socket(Some(path.to_string_lossy().into_owned()))
            }
        };
        let path = shown.clone();
        let worker = Worker::start(&shown, move |rt| {
            let conn = rt
                .block_on(async {
                    tokio::time::timeout(CONNECT_TIMEOUT, Conn::new(opts))
                        .await
                        .unwrap_or(Err(mysql_async::Error::Other(
                            "the server did not answer in time".into(),
                        )))
                })
                .map_err(|e| my_error(&path, e))?;
            let mut conn = MyConn { conn, path };
            rt.block_on(migrate::migrate(&mut conn.conn, &conn.path))?;
            Ok(conn)
        })?;
        Ok(MysqlBackend { worker, shown })
    }

    /// Every row `query` selects with `params`, each made by `each`.
    fn all<T: Send + 'static>(
        &self,
        query: String,
        params: Vec<Value>,
        each: fn(&Row, &Path) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.worker.call(move |c, rt| {
            let rows: Vec<Row> = rt
                .block_on(c.conn.exec(query, params))
                .map_err(|e| my_error(&c.path, e))?;
            rows.iter().map(|r| each(r, &c.path)).collect()
        })
    }

    fn one<T: Send + 'static>(
        &self,
        query: String,
        params: Vec<Value>,
        each: fn(&Row, &Path) -> Result<T>,
    ) -> Result<Option<T>> {
        Ok(self.all(query, params, each)?.into_iter().next())
    }

    /// Run `job` in a transaction, committed when it answers `Ok` (rolled back otherwise:
    /// dropping an open transaction rolls it back).
    fn transaction<R: Send + 'static>(
        &self,
        job: impl for<'a, 'c> FnOnce(&'a mut mysql_async::Transaction<'c>, &'a Path) -> TxFuture<'a, R>
        + Send
        + 'static,
    ) -> Result<R> {
        self.worker.call(move |c, rt| {
            let path = c.path.clone();
            rt.block_on(async {
                let mut tx = c
                    .conn
                    .start_transaction(TxOpts::default())
                    .await
                    .map_err(|e| my_error(&path, e))?;
                let out = job(&mut tx, &path).await?;
                tx.commit().await.map_err(|e| my_error(&path, e))?;
                Ok(out)
            })
        })
    }
}

impl ResultsReader for MysqlBackend {
    fn path(&self) -> &Path {
        &self.shown
    }

    fn check_in_place(&self) -> Result<()> {
        // A server's database is not a file that can be moved from under an open store.
        Ok(())
    }

    fn save_copy(&self, to: &Path) -> Result<()> {
        crate::copy::save_copy(self, to)
    }

    fn schema_version(&self) -> Result<i64> {
        self.one("SELECT version FROM dbrig_schema".into(), vec![], |r, p| {
            get(r, "version", p)
        })?
        .ok_or_else(|| StoreError::ForeignServerDatabase {
            path: self.shown.clone(),
        })
    }

    fn runs(&self) -> Result<Vec<RunRow>> {
        self.all(
            format!("SELECT {RUN_COLS} FROM run ORDER BY id"),
            vec![],
            run_from_row,
        )
    }

    fn run(&self, id: RunId) -> Result<RunRow> {
        self.one(
            format!("SELECT {RUN_COLS} FROM run WHERE id = ?"),
            vec![id.0.into()],
            run_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchRun {
            path: self.shown.clone(),
            id,
        })
    }

    fn latest_run_id(&self) -> Result<Option<RunId>> {
        Ok(self
            .one("SELECT max(id) AS id FROM run".into(), vec![], |r, p| {
                get::<Option<i64>>(r, "id", p)
            })?
            .flatten()
            .map(RunId))
    }

    fn latest_plan_run(&self, plan_name: &str) -> Result<Option<RunId>> {
        Ok(self
            .one(
                "SELECT max(id) AS id FROM run WHERE kind = 'plan' AND name = ?".into(),
                vec![plan_name.into()],
                |r, p| get::<Option<i64>>(r, "id", p),
            )?
            .flatten()
            .map(RunId))
    }

    fn cells(&self, run: RunId) -> Result<Vec<CellRow>> {
        self.all(
            format!("SELECT {CELL_COLS} FROM cell WHERE run_id = ? ORDER BY id"),
            vec![run.0.into()],
            cell_from_row,
        )
    }

    fn cell(&self, id: CellId) -> Result<CellRow> {
        self.one(
            format!("SELECT {CELL_COLS} FROM cell WHERE id = ?"),
            vec![id.0.into()],
            cell_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchCell {
            path: self.shown.clone(),
            id,
        })
    }

    fn trials(&self, cell: CellId) -> Result<Vec<TrialRow>> {
        self.all(
            format!(
                "SELECT {TRIAL_COLS} FROM trial t WHERE t.cell_id = ? ORDER BY t.trial_no, t.id"
            ),
            vec![cell.0.into()],
            trial_from_row,
        )
    }

    fn trial(&self, id: TrialId) -> Result<TrialRow> {
        self.one(
            format!("SELECT {TRIAL_COLS} FROM trial t WHERE t.id = ?"),
            vec![id.0.into()],
            trial_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchTrial {
            path: self.shown.clone(),
            id,
        })
    }

    fn finished_trials(&self, run: RunId, cell_key: &str) -> Result<Vec<TrialRow>> {
        self.all(
            format!(
                "SELECT {TRIAL_COLS} FROM trial t JOIN cell c ON c.id = t.cell_id
                 WHERE c.run_id = ? AND c.cell_key = ? AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            vec![run.0.into(), cell_key.into()],
            trial_from_row,
        )
    }

    fn finished_trials_for_plan(&self, plan_name: &str, cell_key: &str) -> Result<Vec<TrialRow>> {
        self.all(
            format!(
                "SELECT {TRIAL_COLS} FROM trial t
                   JOIN cell c ON c.id = t.cell_id
                   JOIN run r ON r.id = c.run_id
                 WHERE r.name = ? AND c.cell_key = ? AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            vec![plan_name.into(), cell_key.into()],
            trial_from_row,
        )
    }

    fn histogram(&self, trial: TrialId) -> Result<Option<LatencyHistogram>> {
        let bytes = self
            .one(
                "SELECT latency_hist FROM trial WHERE id = ?".into(),
                vec![trial.0.into()],
                |r, p| get::<Option<Vec<u8>>>(r, "latency_hist", p),
            )?
            .ok_or_else(|| StoreError::NoSuchTrial {
                path: self.shown.clone(),
                id: trial,
            })?;
        bytes
            .map(|b| {
                LatencyHistogram::from_bytes(&b).map_err(|e| StoreError::Corrupt {
                    path: self.shown.clone(),
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
             FROM interval_sample WHERE trial_id = ? ORDER BY seq"
                .into(),
            vec![trial.0.into()],
            |r, p| {
                Ok(IntervalSample {
                    t_s: real(r, "t_s", p)?,
                    threads: small(r, "threads", p)?,
                    tps: real(r, "tps", p)?,
                    qps: real(r, "qps", p)?,
                    reads_ps: real(r, "reads_ps", p)?,
                    writes_ps: real(r, "writes_ps", p)?,
                    other_ps: real(r, "other_ps", p)?,
                    latency_pct_ms: real(r, "latency_pct_ms", p)?,
                    errors_ps: real(r, "errors_ps", p)?,
                    reconnects_ps: real(r, "reconnects_ps", p)?,
                    backlog: get::<Option<i64>>(r, "backlog", p)?
                        .map(|v| u64::try_from(v).map_err(|e| corrupt(p, "backlog", e)))
                        .transpose()?,
                })
            },
        )
    }

    fn os_samples(&self, trial: TrialId) -> Result<Vec<OsSample>> {
        let text = self
            .one(
                "SELECT JSON_EXTRACT(environment, '$.os_samples') AS s FROM trial WHERE id = ?"
                    .into(),
                vec![trial.0.into()],
                |r, p| get::<Option<String>>(r, "s", p),
            )?
            .ok_or_else(|| StoreError::NoSuchTrial {
                path: self.shown.clone(),
                id: trial,
            })?;
        let Some(text) = text else {
            return Ok(Vec::new());
        };
        let mut samples: Vec<OsSample> =
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: self.shown.clone(),
                what: format!("OS samples of trial {trial}"),
                detail: e.to_string(),
            })?;
        samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(samples)
    }
}

impl ResultsWriter for MysqlBackend {
    fn begin_run(&mut self, run: &NewRun<'_>) -> Result<RunId> {
        let values: Vec<Value> = vec![
            new_run_uid(run.started_at).into(),
            run.kind.as_str().into(),
            run.name.into(),
            format_rfc3339(run.started_at).into(),
            run.dbrig_version.into(),
            to_json(run.command_line).into(),
            to_json(run.options).into(),
            to_json(run.host).into(),
            run.plan_text.into(),
            i64::from(std::process::id()).into(),
            machine_id().into(),
        ];
        self.transaction(move |tx, path| {
            Box::pin(async move {
                tx.exec_drop(
                    "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version,
                                      command_line, options, host, plan_text, pid, machine)
                     VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                    values,
                )
                .await
                .map_err(|e| my_error(path, e))?;
                Ok(RunId(inserted_id(tx, path)?))
            })
        })
    }

    fn insert_copied_run(
        &mut self,
        doc: &crate::copy::RunDocument,
        started_at: SystemTime,
    ) -> Result<Result<RunId, RunId>> {
        let uid = doc.uid.clone();
        let values: Vec<Value> = vec![
            doc.uid.clone().into(),
            doc.kind.as_str().into(),
            doc.name.clone().into(),
            format_rfc3339(started_at).into(),
            doc.dbrig_version.clone().into(),
            to_json(&doc.command_line).into(),
            to_json(&doc.options).into(),
            to_json(&doc.host).into(),
            doc.plan_text.clone().into(),
            i64::from(std::process::id()).into(),
            machine_id().into(),
        ];
        self.transaction(move |tx, path| {
            Box::pin(async move {
                let sql = |e| my_error(path, e);
                // The uid's unique key decides between copies made at once.
                let inserted = tx
                    .exec_drop(
                        "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version,
                                          command_line, options, host, plan_text, pid, machine)
                         VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                        values,
                    )
                    .await;
                match inserted {
                    Ok(()) => Ok(Ok(RunId(inserted_id(tx, path)?))),
                    Err(mysql_async::Error::Server(s)) if s.code == ER_DUP_ENTRY => {
                        let id: Option<i64> = tx
                            .exec_first("SELECT id FROM run WHERE uid = ?", (uid.clone(),))
                            .await
                            .map_err(sql)?;
                        let id = id.ok_or_else(|| StoreError::BadDocument {
                            uid,
                            detail: "its uid is taken, yet no run has it".into(),
                        })?;
                        Ok(Err(RunId(id)))
                    }
                    Err(e) => Err(sql(e)),
                }
            })
        })
    }

    fn set_run_provenance(
        &mut self,
        id: RunId,
        provenance: &crate::model::Provenance,
    ) -> Result<()> {
        let tags = (!provenance.tags.is_empty()).then(|| to_json(&provenance.tags));
        let commit = provenance.commit.clone();
        self.transaction(move |tx, path| {
            Box::pin(async move {
                tx.exec_drop(
                    "UPDATE run SET tags = ?, code_commit = ? WHERE id = ?",
                    (tags, commit, id.0),
                )
                .await
                .map_err(|e| my_error(path, e))
            })
        })
    }

    fn set_run_host(&mut self, id: RunId, host: &serde_json::Value) -> Result<()> {
        let host = to_json(host);
        self.transaction(move |tx, path| {
            Box::pin(async move {
                tx.exec_drop("UPDATE run SET host = ? WHERE id = ?", (host, id.0))
                    .await
                    .map_err(|e| my_error(path, e))
            })
        })
    }

    fn finish_run(
        &mut self,
        id: RunId,
        status: RunStatus,
        error: Option<&str>,
        finished_at: SystemTime,
    ) -> Result<()> {
        let error = error.map(str::to_owned);
        let finished_at = format_rfc3339(finished_at);
        self.transaction(move |tx, path| {
            Box::pin(async move {
                let sql = |e| my_error(path, e);
                let current: String = tx
                    .exec_first("SELECT status FROM run WHERE id = ? FOR UPDATE", (id.0,))
                    .await
                    .map_err(sql)?
                    .ok_or_else(|| StoreError::NoSuchRun {
                        path: path.into(),
                        id,
                    })?;
                let current: RunStatus = current.parse().map_err(|e| corrupt(path, "status", e))?;
                if matches!(current, RunStatus::Done | RunStatus::Failed) {
                    return Err(StoreError::RunAlreadyFinished {
                        path: path.into(),
                        id,
                        status: current,
                    });
                }
                tx.exec_drop(
                    "UPDATE run SET status = ?, error = ?, finished_at = ? WHERE id = ?",
                    (status.as_str(), error, finished_at, id.0),
                )
                .await
                .map_err(sql)
            })
        })
    }

    fn reopen_run(&mut self, id: RunId) -> Result<()> {
        self.transaction(move |tx, path| {
            Box::pin(async move {
                let sql = |e| my_error(path, e);
                let (current, pid, machine): (String, Option<i64>, Option<String>) = tx
                    .exec_first(
                        "SELECT status, pid, machine FROM run WHERE id = ? FOR UPDATE",
                        (id.0,),
                    )
                    .await
                    .map_err(sql)?
                    .ok_or_else(|| StoreError::NoSuchRun {
                        path: path.into(),
                        id,
                    })?;
                let current: RunStatus = current.parse().map_err(|e| corrupt(path, "status", e))?;
                // Under the row's lock, so two resumes cannot both take the run.
                if current == RunStatus::Running
                    && let Some(pid) = pid.and_then(|p| u32::try_from(p).ok())
                    && !(pid == std::process::id() && machine.as_deref() == Some(machine_id()))
                    && writer_alive_on(machine.as_deref(), pid)
                {
                    return Err(StoreError::RunBeingWritten { id, pid });
                }
                if current == RunStatus::Done {
                    return Err(StoreError::RunAlreadyFinished {
                        path: path.into(),
                        id,
                        status: current,
                    });
                }
                tx.exec_drop(
                    "UPDATE run SET status = 'running', error = NULL, finished_at = NULL,
                                    pid = ?, machine = ? WHERE id = ?",
                    (i64::from(std::process::id()), machine_id(), id.0),
                )
                .await
                .map_err(sql)
            })
        })
    }

    fn ensure_cell(&mut self, run: RunId, cell: &NewCell<'_>) -> Result<CellId> {
        let cell_key = cell.cell_key.to_owned();
        let configuration = cell.configuration.to_owned();
        let workload = cell.workload.to_owned();
        let clients = i64::from(cell.clients);
        let options = cell.options.clone();
        let target = cell.target.to_owned();
        self.transaction(move |tx, path| {
            Box::pin(async move {
                let sql = |e| my_error(path, e);
                // The run's row is locked: cells of one run are made one at a time.
                let found: Option<i64> = tx
                    .exec_first("SELECT id FROM run WHERE id = ? FOR UPDATE", (run.0,))
                    .await
                    .map_err(sql)?;
                if found.is_none() {
                    return Err(StoreError::NoSuchRun {
                        path: path.into(),
                        id: run,
                    });
                }
                let existing: Option<Row> = tx
                    .exec_first(
                        format!("SELECT {CELL_COLS} FROM cell WHERE run_id = ? AND cell_key = ?"),
                        (run.0, cell_key.clone()),
                    )
                    .await
                    .map_err(sql)?;
                if let Some(row) = existing {
                    let row = cell_from_row(&row, path)?;
                    let mismatch = if row.configuration != configuration {
                        Some("configuration")
                    } else if row.workload != workload {
                        Some("workload")
                    } else if i64::from(row.clients) != clients {
                        Some("client count")
                    } else if row.target != target {
                        Some("target")
                    } else if row.options != options {
                        Some("options")
                    } else {
                        None
                    };
                    if let Some(field) = mismatch {
                        return Err(StoreError::CellMismatch {
                            path: path.into(),
                            run,
                            cell_key,
                            field,
                        });
                    }
                    return Ok(row.id);
                }
                tx.exec_drop(
                    "INSERT INTO cell (run_id, cell_key, configuration, workload, clients,
                                       options, target)
                     VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.0,
                        cell_key,
                        configuration,
                        workload,
                        clients,
                        to_json(&options),
                        target,
                    ),
                )
                .await
                .map_err(sql)?;
                Ok(CellId(inserted_id(tx, path)?))
            })
        })
    }

    fn record_trial(
        &mut self,
        cell: CellId,
        trial: &NewTrial<'_>,
        json: &TrialJson,
    ) -> Result<TrialId> {
        let row = OwnedTrial::new(trial, json, &self.shown)?;
        self.transaction(move |tx, path| Box::pin(insert_trial(tx, path, cell, row)))
    }
}

/// The id the last INSERT made.
fn inserted_id(tx: &mysql_async::Transaction<'_>, path: &Path) -> Result<i64> {
    tx.last_insert_id()
        .and_then(|id| i64::try_from(id).ok())
        .ok_or_else(|| corrupt(path, "id", "the server returned no id for the new row"))
}

/// A trial's columns, owned, to cross to the worker's thread.
struct OwnedTrial {
    trial_no: i64,
    status: &'static str,
    reason: Option<String>,
    server_version: Option<String>,
    started_at: String,
    finished_at: String,
    result: Option<String>,
    environment: Option<String>,
    measured: Option<MeasuredCols>,
}

impl OwnedTrial {
    fn new(trial: &NewTrial<'_>, json: &TrialJson, path: &Path) -> Result<OwnedTrial> {
        Ok(OwnedTrial {
            trial_no: i64::from(trial.trial),
            status: trial.status.as_str(),
            reason: trial.reason.map(str::to_owned),
            server_version: trial.server_version.map(str::to_owned),
            started_at: format_rfc3339(trial.started_at),
            finished_at: format_rfc3339(trial.finished_at),
            result: json.result.as_ref().map(to_json),
            environment: json.environment.as_ref().map(to_json),
            measured: trial
                .measurements
                .map(|m| MeasuredCols::new(m, path))
                .transpose()?,
        })
    }
}

async fn insert_trial(
    tx: &mut mysql_async::Transaction<'_>,
    path: &Path,
    cell: CellId,
    t: OwnedTrial,
) -> Result<TrialId> {
    let sql = |e| my_error(path, e);
    let duplicate = || StoreError::DuplicateTrial {
        path: path.into(),
        cell,
        trial: t.trial_no as u32,
    };
    let common: Vec<Value> = vec![
        cell.0.into(),
        t.trial_no.into(),
        t.status.into(),
        t.reason.clone().into(),
        t.server_version.clone().into(),
        t.started_at.clone().into(),
        t.finished_at.clone().into(),
        t.result.clone().into(),
        t.environment.clone().into(),
    ];
    let inserted = match &t.measured {
        Some(c) => {
            let mut values = common;
            values.extend([
                c.threads.into(),
                dbl(c.duration_s),
                c.transactions.into(),
                c.reads.into(),
                c.writes.into(),
                c.others.into(),
                c.ignored_errors.into(),
                c.reconnects.into(),
                c.fatal_errors.clone().into(),
                c.key_distribution.clone().into(),
                dbl(c.percentile),
                c.interrupted.into(),
                c.histogram.clone().into(),
                c.latency_count.into(),
                dbl(c.summary.min),
                dbl(c.summary.avg),
                dbl(c.summary.max),
                dbl(c.summary.p50),
                dbl(c.summary.p90),
                dbl(c.summary.p95),
                dbl(c.summary.p99),
                dbl(c.summary.p999),
                dbl(c.summary.sum),
                dbl(c.tps),
                dbl(c.qps),
                c.rate.clone().into(),
            ]);
            tx.exec_drop(
                "INSERT INTO trial (
                    cell_id, trial_no, status, reason, server_version, started_at, finished_at,
                    result, environment, measured, threads, duration_s, transactions, `reads`,
                    writes, others, ignored_errors, reconnects, fatal_errors, key_distribution,
                    percentile, interrupted, latency_hist, lat_count, lat_min_ms, lat_avg_ms,
                    lat_max_ms, lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms,
                    lat_sum_ms, tps, qps, rate)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, TRUE, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                         ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            .await
        }
        None => {
            tx.exec_drop(
                "INSERT INTO trial (cell_id, trial_no, status, reason, server_version, started_at,
                                    finished_at, result, environment, measured)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, FALSE)",
                common,
            )
            .await
        }
    };
    // The schema keeps the rules, for every writer at once: the unique key of finished trials
    // and the cell's foreign key.
    inserted.map_err(|e| match &e {
        mysql_async::Error::Server(s) if s.code == ER_DUP_ENTRY => duplicate(),
        mysql_async::Error::Server(s) if s.code == ER_NO_REFERENCED_ROW => StoreError::NoSuchCell {
            path: path.into(),
            id: cell,
        },
        _ => sql(e),
    })?;
    let id = inserted_id(tx, path)?;
    if let Some(c) = &t.measured
        && !c.intervals.is_empty()
    {
        // Many samples per statement: a few round trips however long the trial.
        for (chunk_no, chunk) in c.intervals.chunks(500).enumerate() {
            let mut sql_text = String::from(
                "INSERT INTO interval_sample (trial_id, seq, t_s, threads, tps, qps, reads_ps,
                     writes_ps, other_ps, latency_pct_ms, errors_ps, reconnects_ps, backlog)
                 VALUES ",
            );
            let mut values: Vec<Value> = Vec::with_capacity(chunk.len() * 13);
            for (i, row) in chunk.iter().enumerate() {
                if i > 0 {
                    sql_text.push(',');
                }
                sql_text.push_str("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
                let s = &row.sample;
                values.extend([
                    id.into(),
                    ((chunk_no * 500 + i) as i64).into(),
                    dbl(s.t_s),
                    i64::from(s.threads).into(),
                    dbl(s.tps),
                    dbl(s.qps),
                    dbl(s.reads_ps),
                    dbl(s.writes_ps),
                    dbl(s.other_ps),
                    dbl(s.latency_pct_ms),
                    dbl(s.errors_ps),
                    dbl(s.reconnects_ps),
                    row.backlog.into(),
                ]);
            }
            tx.exec_drop(sql_text, values).await.map_err(sql)?;
        }
    }
    Ok(TrialId(id))
}

const RUN_COLS: &str = "id, uid, kind, name, status, error, started_at, finished_at, \
    dbrig_version, command_line, options, host, plan_text, pid, machine, tags, code_commit";

fn run_from_row(r: &Row, path: &Path) -> Result<RunRow> {
    let pid: Option<u32> = get::<Option<i64>>(r, "pid", path)?
        .map(|p| u32::try_from(p).map_err(|e| corrupt(path, "pid", e)))
        .transpose()?;
    let machine: Option<String> = get(r, "machine", path)?;
    let mut status: RunStatus = text_enum(r, "status", path)?;
    if status == RunStatus::Running && !pid.is_some_and(|p| writer_alive_on(machine.as_deref(), p))
    {
        status = RunStatus::Abandoned;
    }
    Ok(RunRow {
        id: RunId(get(r, "id", path)?),
        uid: get(r, "uid", path)?,
        kind: text_enum(r, "kind", path)?,
        name: get(r, "name", path)?,
        status,
        error: get(r, "error", path)?,
        started_at: get(r, "started_at", path)?,
        finished_at: get(r, "finished_at", path)?,
        dbrig_version: get(r, "dbrig_version", path)?,
        command_line: json(r, "command_line", path)?,
        options: json(r, "options", path)?,
        host: json(r, "host", path)?,
        plan_text: get(r, "plan_text", path)?,
        pid,
        machine,
        provenance: crate::model::Provenance {
            tags: opt_json(r, "tags", path)?.unwrap_or_default(),
            commit: get(r, "code_commit", path)?,
        },
    })
}

const CELL_COLS: &str = "id, run_id, cell_key, configuration, workload, clients, options, target";

fn cell_from_row(r: &Row, path: &Path) -> Result<CellRow> {
    Ok(CellRow {
        id: CellId(get(r, "id", path)?),
        run_id: RunId(get(r, "run_id", path)?),
        cell_key: get(r, "cell_key", path)?,
        configuration: get(r, "configuration", path)?,
        workload: get(r, "workload", path)?,
        clients: small(r, "clients", path)?,
        options: json(r, "options", path)?,
        target: get(r, "target", path)?,
    })
}

const TRIAL_COLS: &str = "t.id, t.cell_id, t.trial_no, t.status, t.reason, t.server_version, \
    t.started_at, t.finished_at, t.result, t.environment, t.measured, t.threads, t.duration_s, \
    t.transactions, t.`reads`, t.writes, t.others, t.ignored_errors, t.reconnects, \
    t.fatal_errors, t.key_distribution, t.percentile, t.interrupted, t.lat_count, t.lat_min_ms, \
    t.lat_avg_ms, t.lat_max_ms, t.lat_p50_ms, t.lat_p90_ms, t.lat_p95_ms, t.lat_p99_ms, \
    t.lat_p999_ms, t.lat_sum_ms, t.tps, t.qps, t.rate";

fn trial_from_row(r: &Row, path: &Path) -> Result<TrialRow> {
    let measured: bool = get(r, "measured", path)?;
    let measurements = if measured {
        Some(TrialMeasurements {
            threads: small(r, "threads", path)?,
            key_distribution: json(r, "key_distribution", path)?,
            duration_s: real(r, "duration_s", path)?,
            transactions: count(r, "transactions", path)?,
            queries: QueryCounters {
                read: count(r, "reads", path)?,
                write: count(r, "writes", path)?,
                other: count(r, "others", path)?,
            },
            ignored_errors: count(r, "ignored_errors", path)?,
            reconnects: count(r, "reconnects", path)?,
            fatal_errors: json(r, "fatal_errors", path)?,
            percentile: real(r, "percentile", path)?,
            interrupted: get(r, "interrupted", path)?,
            latency_count: count(r, "lat_count", path)?,
            latency: LatencySummary {
                min: real(r, "lat_min_ms", path)?,
                avg: real(r, "lat_avg_ms", path)?,
                max: real(r, "lat_max_ms", path)?,
                p50: real(r, "lat_p50_ms", path)?,
                p90: real(r, "lat_p90_ms", path)?,
                p95: real(r, "lat_p95_ms", path)?,
                p99: real(r, "lat_p99_ms", path)?,
                p999: real(r, "lat_p999_ms", path)?,
                sum: real(r, "lat_sum_ms", path)?,
            },
            tps: real(r, "tps", path)?,
            qps: real(r, "qps", path)?,
            rate: opt_json(r, "rate", path)?,
        })
    } else {
        None
    };
    Ok(TrialRow {
        id: TrialId(get(r, "id", path)?),
        cell_id: CellId(get(r, "cell_id", path)?),
        trial: small(r, "trial_no", path)?,
        status: text_enum(r, "status", path)?,
        reason: get(r, "reason", path)?,
        server_version: get(r, "server_version", path)?,
        started_at: get(r, "started_at", path)?,
        finished_at: get(r, "finished_at", path)?,
        measurements,
        result: opt_json(r, "result", path)?,
        environment: opt_json(r, "environment", path)?,
    })
}

fn corrupt(path: &Path, col: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        path: path.into(),
        what: format!("column {col}"),
        detail: e.to_string(),
    }
}

/// A column's value; a missing column or a value of another type is a corrupt row.
fn get<T: FromValue>(r: &Row, col: &str, path: &Path) -> Result<T> {
    match r.get_opt::<T, &str>(col) {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(corrupt(path, col, e)),
        None => Err(corrupt(path, col, "no such column")),
    }
}

fn text_enum<T: std::str::FromStr<Err = crate::model::UnknownValue>>(
    r: &Row,
    col: &str,
    path: &Path,
) -> Result<T> {
    get::<String>(r, col, path)?
        .parse()
        .map_err(|e| corrupt(path, col, e))
}

fn json<T: DeserializeOwned>(r: &Row, col: &str, path: &Path) -> Result<T> {
    serde_json::from_str(&get::<String>(r, col, path)?).map_err(|e| corrupt(path, col, e))
}

fn opt_json<T: DeserializeOwned>(r: &Row, col: &str, path: &Path) -> Result<Option<T>> {
    get::<Option<String>>(r, col, path)?
        .map(|t| serde_json::from_str(&t).map_err(|e| corrupt(path, col, e)))
        .transpose()
}

/// A DOUBLE column (a measurement); NULL reads as NaN (see the module's documentation).
fn real(r: &Row, col: &str, path: &Path) -> Result<f64> {
    Ok(get::<Option<f64>>(r, col, path)?.unwrap_or(f64::NAN))
}

/// A BIGINT column holding a `u64`.
fn count(r: &Row, col: &str, path: &Path) -> Result<u64> {
    u64::try_from(get::<i64>(r, col, path)?).map_err(|e| corrupt(path, col, e))
}

/// A BIGINT column holding a `u32`.
fn small(r: &Row, col: &str, path: &Path) -> Result<u32> {
    u32::try_from(get::<i64>(r, col, path)?).map_err(|e| corrupt(path, col, e))
}
