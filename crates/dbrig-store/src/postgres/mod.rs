//! The PostgreSQL backend: a results database on a PostgreSQL server, shared by every dbrig
//! that can reach it. Everything PostgreSQL about the results database is in this folder — its
//! schema (`migrations/`, applied by `migrate.rs` under an advisory lock) and every query and
//! write — and nowhere else. The client (tokio-postgres) runs on the backend's own thread
//! ([`crate::server::Worker`]).
//!
//! The rules [`ResultsWriter`] names are kept inside one transaction each: the run's row is
//! locked (`FOR UPDATE`) before its status is judged, so two resumes cannot both take a run;
//! a cell's key is unique. A trial, the hot write, is one statement (its interval samples in
//! the same statement, atomic by itself), prepared once: the cell's foreign key and the unique
//! index of finished trials are its rules, so writers of many processes on many machines lose
//! nothing and duplicate nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use dbrig_core::results::OsSample;
use dbrig_core::{IntervalSample, LatencyHistogram, LatencySummary, QueryCounters};
use serde::de::DeserializeOwned;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{FromSqlOwned, ToSql};
use tokio_postgres::{Client, NoTls, Row};

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

/// Parameters owned by a job, to cross to the worker's thread.
type Params = Vec<Box<dyn ToSql + Sync + Send>>;

/// How long opening the connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection, on the worker's thread.
pub(crate) struct PgConn {
    client: Client,
    path: PathBuf,
    /// The trial inserts, prepared on first use (the hot write: one round trip each).
    insert_measured: Option<tokio_postgres::Statement>,
    insert_unmeasured: Option<tokio_postgres::Statement>,
}

/// The PostgreSQL backend (see the module's documentation).
pub(crate) struct PostgresBackend {
    worker: Worker<PgConn>,
    /// The redacted address: `path()` and every message.
    shown: PathBuf,
}

/// Map a client error to the store's error.
pub(crate) fn pg_error(path: &Path, source: tokio_postgres::Error) -> StoreError {
    StoreError::Postgres {
        path: path.into(),
        source,
    }
}

impl PostgresBackend {
    /// Connect to the database `address` names (it must exist) and bring its schema up to
    /// date.
    pub(crate) fn open(address: &ServerAddress) -> Result<PostgresBackend> {
        let shown = PathBuf::from(&address.shown);
        let mut config = tokio_postgres::Config::new();
        match &address.endpoint {
            ServerEndpoint::Tcp { host, port } => config.host(host).port(*port),
            ServerEndpoint::Socket { path, port } => config.host_path(path).port(*port),
        };
        config
            .user(&address.user)
            .dbname(&address.database)
            .application_name("dbrig results")
            .connect_timeout(CONNECT_TIMEOUT);
        if let Some(p) = &address.password {
            config.password(p.expose());
        }
        let path = shown.clone();
        let worker = Worker::start(&shown, move |rt| {
            let (client, connection) = rt
                .block_on(config.connect(NoTls))
                .map_err(|e| pg_error(&path, e))?;
            // The connection's task runs whenever a job blocks on the runtime.
            rt.spawn(async move {
                let _ = connection.await;
            });
            let mut conn = PgConn {
                client,
                path,
                insert_measured: None,
                insert_unmeasured: None,
            };
            rt.block_on(migrate::migrate(&mut conn.client, &conn.path))?;
            Ok(conn)
        })?;
        Ok(PostgresBackend { worker, shown })
    }

    /// Every row `query` selects with `params`, each made by `each`.
    fn all<T: Send + 'static>(
        &self,
        query: String,
        params: Params,
        each: fn(&Row, &Path) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.worker.call(move |c, rt| {
            let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref() as _).collect();
            let rows = rt
                .block_on(c.client.query(&query, &refs))
                .map_err(|e| pg_error(&c.path, e))?;
            rows.iter().map(|r| each(r, &c.path)).collect()
        })
    }

    /// The one row `query` selects, if any.
    fn one<T: Send + 'static>(
        &self,
        query: String,
        params: Params,
        each: fn(&Row, &Path) -> Result<T>,
    ) -> Result<Option<T>> {
        Ok(self.all(query, params, each)?.into_iter().next())
    }

    /// Run `job` in a transaction, committed when it answers `Ok` (rolled back otherwise).
    fn transaction<R: Send + 'static>(
        &self,
        job: impl for<'a, 'c> FnOnce(&'a tokio_postgres::Transaction<'c>, &'a Path) -> TxFuture<'a, R>
        + Send
        + 'static,
    ) -> Result<R> {
        self.worker.call(move |c, rt| {
            let path = c.path.clone();
            rt.block_on(async {
                let tx = c
                    .client
                    .transaction()
                    .await
                    .map_err(|e| pg_error(&path, e))?;
                let out = job(&tx, &path).await?;
                tx.commit().await.map_err(|e| pg_error(&path, e))?;
                Ok(out)
            })
        })
    }
}

/// What a transaction's job returns: its work, borrowing the transaction.
type TxFuture<'a, R> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<R>> + Send + 'a>>;

/// The values of a statement, boxed (`vec![Box::new(…)]` coerced to [`Params`]).
fn params(values: Vec<Box<dyn ToSql + Sync + Send>>) -> Params {
    values
}

impl ResultsReader for PostgresBackend {
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
        self.one(
            "SELECT version FROM dbrig_schema".into(),
            params(vec![]),
            |r, p| get(r, "version", p),
        )?
        .ok_or_else(|| StoreError::ForeignServerDatabase {
            path: self.shown.clone(),
        })
    }

    fn runs(&self) -> Result<Vec<RunRow>> {
        self.all(
            format!("SELECT {RUN_COLS} FROM run ORDER BY id"),
            params(vec![]),
            run_from_row,
        )
    }

    fn run(&self, id: RunId) -> Result<RunRow> {
        self.one(
            format!("SELECT {RUN_COLS} FROM run WHERE id = $1"),
            params(vec![Box::new(id.0)]),
            run_from_row,
        )?
        .ok_or_else(|| StoreError::NoSuchRun {
            path: self.shown.clone(),
            id,
        })
    }

    fn latest_run_id(&self) -> Result<Option<RunId>> {
        Ok(self
            .one(
                "SELECT max(id) AS id FROM run".into(),
                params(vec![]),
                |r, p| get::<Option<i64>>(r, "id", p),
            )?
            .flatten()
            .map(RunId))
    }

    fn latest_plan_run(&self, plan_name: &str) -> Result<Option<RunId>> {
        Ok(self
            .one(
                "SELECT max(id) AS id FROM run WHERE kind = 'plan' AND name = $1".into(),
                params(vec![Box::new(plan_name.to_owned())]),
                |r, p| get::<Option<i64>>(r, "id", p),
            )?
            .flatten()
            .map(RunId))
    }

    fn cells(&self, run: RunId) -> Result<Vec<CellRow>> {
        self.all(
            format!("SELECT {CELL_COLS} FROM cell WHERE run_id = $1 ORDER BY id"),
            params(vec![Box::new(run.0)]),
            cell_from_row,
        )
    }

    fn cell(&self, id: CellId) -> Result<CellRow> {
        self.one(
            format!("SELECT {CELL_COLS} FROM cell WHERE id = $1"),
            params(vec![Box::new(id.0)]),
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
                "SELECT {TRIAL_COLS} FROM trial t WHERE t.cell_id = $1 ORDER BY t.trial_no, t.id"
            ),
            params(vec![Box::new(cell.0)]),
            trial_from_row,
        )
    }

    fn trial(&self, id: TrialId) -> Result<TrialRow> {
        self.one(
            format!("SELECT {TRIAL_COLS} FROM trial t WHERE t.id = $1"),
            params(vec![Box::new(id.0)]),
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
                 WHERE c.run_id = $1 AND c.cell_key = $2 AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            params(vec![Box::new(run.0), Box::new(cell_key.to_owned())]),
            trial_from_row,
        )
    }

    fn finished_trials_for_plan(&self, plan_name: &str, cell_key: &str) -> Result<Vec<TrialRow>> {
        self.all(
            format!(
                "SELECT {TRIAL_COLS} FROM trial t
                   JOIN cell c ON c.id = t.cell_id
                   JOIN run r ON r.id = c.run_id
                 WHERE r.name = $1 AND c.cell_key = $2 AND t.status = 'done'
                 ORDER BY t.trial_no, t.id"
            ),
            params(vec![
                Box::new(plan_name.to_owned()),
                Box::new(cell_key.to_owned()),
            ]),
            trial_from_row,
        )
    }

    fn histogram(&self, trial: TrialId) -> Result<Option<LatencyHistogram>> {
        let bytes = self
            .one(
                "SELECT latency_hist FROM trial WHERE id = $1".into(),
                params(vec![Box::new(trial.0)]),
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
             FROM interval_sample WHERE trial_id = $1 ORDER BY seq"
                .into(),
            params(vec![Box::new(trial.0)]),
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
                        .map(|v| to_u64(v, "backlog", p))
                        .transpose()?,
                })
            },
        )
    }

    fn os_samples(&self, trial: TrialId) -> Result<Vec<OsSample>> {
        let text = self
            .one(
                "SELECT (environment -> 'os_samples')::text AS s FROM trial WHERE id = $1".into(),
                params(vec![Box::new(trial.0)]),
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

impl ResultsWriter for PostgresBackend {
    fn begin_run(&mut self, run: &NewRun<'_>) -> Result<RunId> {
        let values: Params = vec![
            Box::new(new_run_uid(run.started_at)),
            Box::new(run.kind.as_str()),
            Box::new(run.name.to_owned()),
            Box::new(format_rfc3339(run.started_at)),
            Box::new(run.dbrig_version.to_owned()),
            Box::new(to_json(run.command_line)),
            Box::new(to_json(run.options)),
            Box::new(to_json(run.host)),
            Box::new(run.plan_text.map(str::to_owned)),
            Box::new(i64::from(std::process::id())),
            Box::new(machine_id()),
        ];
        let id = self
            .one(
                "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version, command_line,
                                  options, host, plan_text, pid, machine)
                 VALUES ($1, $2, $3, 'running', $4, $5, $6::text::json, $7::text::json,
                         $8::text::json, $9, $10, $11)
                 RETURNING id"
                    .into(),
                values,
                |r, p| get::<i64>(r, "id", p),
            )?
            .expect("INSERT … RETURNING answers one row");
        Ok(RunId(id))
    }

    fn insert_copied_run(
        &mut self,
        doc: &crate::copy::RunDocument,
        started_at: SystemTime,
    ) -> Result<Result<RunId, RunId>> {
        let values: Params = vec![
            Box::new(doc.uid.clone()),
            Box::new(doc.kind.as_str()),
            Box::new(doc.name.clone()),
            Box::new(format_rfc3339(started_at)),
            Box::new(doc.dbrig_version.clone()),
            Box::new(to_json(&doc.command_line)),
            Box::new(to_json(&doc.options)),
            Box::new(to_json(&doc.host)),
            Box::new(doc.plan_text.clone()),
            Box::new(i64::from(std::process::id())),
            Box::new(machine_id()),
        ];
        // The uid's unique index decides between copies made at once.
        let inserted = self.one(
            "INSERT INTO run (uid, kind, name, status, started_at, dbrig_version, command_line,
                              options, host, plan_text, pid, machine)
             VALUES ($1, $2, $3, 'running', $4, $5, $6::text::json, $7::text::json,
                     $8::text::json, $9, $10, $11)
             ON CONFLICT (uid) DO NOTHING
             RETURNING id"
                .into(),
            values,
            |r, p| get::<i64>(r, "id", p),
        )?;
        if let Some(id) = inserted {
            return Ok(Ok(RunId(id)));
        }
        let existing = self
            .one(
                "SELECT id FROM run WHERE uid = $1".into(),
                params(vec![Box::new(doc.uid.clone())]),
                |r, p| get::<i64>(r, "id", p),
            )?
            .ok_or_else(|| StoreError::BadDocument {
                uid: doc.uid.clone(),
                detail: "its uid is taken, yet no run has it".into(),
            })?;
        Ok(Err(RunId(existing)))
    }

    fn set_run_provenance(
        &mut self,
        id: RunId,
        provenance: &crate::model::Provenance,
    ) -> Result<()> {
        let tags = (!provenance.tags.is_empty()).then(|| to_json(&provenance.tags));
        self.all(
            "UPDATE run SET tags = $1::text::json, code_commit = $2 WHERE id = $3 RETURNING id"
                .into(),
            params(vec![
                Box::new(tags),
                Box::new(provenance.commit.clone()),
                Box::new(id.0),
            ]),
            |_, _| Ok(()),
        )?;
        Ok(())
    }

    fn set_run_host(&mut self, id: RunId, host: &serde_json::Value) -> Result<()> {
        self.all(
            "UPDATE run SET host = $1::text::json WHERE id = $2 RETURNING id".into(),
            params(vec![Box::new(to_json(host)), Box::new(id.0)]),
            |_, _| Ok(()),
        )?;
        Ok(())
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
                let sql = |e| pg_error(path, e);
                let row = tx
                    .query_opt("SELECT status FROM run WHERE id = $1 FOR UPDATE", &[&id.0])
                    .await
                    .map_err(sql)?
                    .ok_or_else(|| StoreError::NoSuchRun {
                        path: path.into(),
                        id,
                    })?;
                let current: RunStatus = text_enum(&row, "status", path)?;
                if matches!(current, RunStatus::Done | RunStatus::Failed) {
                    return Err(StoreError::RunAlreadyFinished {
                        path: path.into(),
                        id,
                        status: current,
                    });
                }
                tx.execute(
                    "UPDATE run SET status = $2, error = $3, finished_at = $4 WHERE id = $1",
                    &[&id.0, &status.as_str(), &error, &finished_at],
                )
                .await
                .map_err(sql)?;
                Ok(())
            })
        })
    }

    fn reopen_run(&mut self, id: RunId) -> Result<()> {
        self.transaction(move |tx, path| {
            Box::pin(async move {
                let sql = |e| pg_error(path, e);
                let row = tx
                    .query_opt(
                        "SELECT status, pid, machine FROM run WHERE id = $1 FOR UPDATE",
                        &[&id.0],
                    )
                    .await
                    .map_err(sql)?
                    .ok_or_else(|| StoreError::NoSuchRun {
                        path: path.into(),
                        id,
                    })?;
                let current: RunStatus = text_enum(&row, "status", path)?;
                let pid: Option<i64> = get(&row, "pid", path)?;
                let machine: Option<String> = get(&row, "machine", path)?;
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
                tx.execute(
                    "UPDATE run SET status = 'running', error = NULL, finished_at = NULL,
                                    pid = $2, machine = $3 WHERE id = $1",
                    &[&id.0, &i64::from(std::process::id()), &machine_id()],
                )
                .await
                .map_err(sql)?;
                Ok(())
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
                let sql = |e| pg_error(path, e);
                // The run's row is locked: cells of one run are made one at a time, and a cell
                // key found missing here cannot be inserted by another writer meanwhile.
                if tx
                    .query_opt("SELECT id FROM run WHERE id = $1 FOR UPDATE", &[&run.0])
                    .await
                    .map_err(sql)?
                    .is_none()
                {
                    return Err(StoreError::NoSuchRun {
                        path: path.into(),
                        id: run,
                    });
                }
                let existing = tx
                    .query_opt(
                        &format!(
                            "SELECT {CELL_COLS} FROM cell WHERE run_id = $1 AND cell_key = $2"
                        ),
                        &[&run.0, &cell_key],
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
                let row = tx
                    .query_one(
                        "INSERT INTO cell (run_id, cell_key, configuration, workload, clients,
                                           options, target)
                         VALUES ($1, $2, $3, $4, $5, $6::text::json, $7) RETURNING id",
                        &[
                            &run.0,
                            &cell_key,
                            &configuration,
                            &workload,
                            &clients,
                            &to_json(&options),
                            &target,
                        ],
                    )
                    .await
                    .map_err(sql)?;
                Ok(CellId(get(&row, "id", path)?))
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
        self.worker
            .call(move |c, rt| rt.block_on(insert_trial(c, cell, row)))
    }
}

/// A trial's columns, owned, to cross to the worker's thread.
pub(crate) struct OwnedTrial {
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

/// The one statement that stores a measured trial and its interval samples: a data-modifying
/// `WITH` is one statement, so it is atomic without a transaction and costs one round trip.
const INSERT_MEASURED: &str = "WITH t AS (
        INSERT INTO trial (
            cell_id, trial_no, status, reason, server_version, started_at, finished_at,
            result, environment, measured, threads, duration_s, transactions, reads,
            writes, others, ignored_errors, reconnects, fatal_errors, key_distribution,
            percentile, interrupted, latency_hist, lat_count, lat_min_ms, lat_avg_ms,
            lat_max_ms, lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms,
            lat_sum_ms, tps, qps, rate)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::json, $9::text::json, true, $10,
            $11, $12, $13, $14, $15, $16, $17, $18::text::json, $19::text::json, $20,
            $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34,
            $35::text::json)
        RETURNING id),
    i AS (
        INSERT INTO interval_sample (trial_id, seq, t_s, threads, tps, qps, reads_ps,
                                     writes_ps, other_ps, latency_pct_ms, errors_ps,
                                     reconnects_ps, backlog)
        SELECT t.id, u.* FROM t, unnest($36::bigint[], $37::float8[], $38::bigint[],
            $39::float8[], $40::float8[], $41::float8[], $42::float8[], $43::float8[],
            $44::float8[], $45::float8[], $46::float8[], $47::bigint[]) AS u)
    SELECT id FROM t";

/// A trial that measured nothing.
const INSERT_UNMEASURED: &str = "INSERT INTO trial (cell_id, trial_no, status, reason,
        server_version, started_at, finished_at, result, environment, measured)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::json, $9::text::json, false)
    RETURNING id";

/// Store a trial in one statement (prepared once per connection). The rules are the
/// schema's: the cell's foreign key ([`StoreError::NoSuchCell`]) and the unique index of
/// finished trials ([`StoreError::DuplicateTrial`]), so concurrent writers meet them too.
async fn insert_trial(c: &mut PgConn, cell: CellId, t: OwnedTrial) -> Result<TrialId> {
    let path = c.path.clone();
    let sql = |e| pg_error(&path, e);
    let common: [&(dyn ToSql + Sync); 9] = [
        &cell.0,
        &t.trial_no,
        &t.status,
        &t.reason,
        &t.server_version,
        &t.started_at,
        &t.finished_at,
        &t.result,
        &t.environment,
    ];
    let inserted = match &t.measured {
        Some(m) => {
            if c.insert_measured.is_none() {
                c.insert_measured = Some(c.client.prepare(INSERT_MEASURED).await.map_err(sql)?);
            }
            let col = |f: fn(&IntervalSample) -> f64| -> Vec<f64> {
                m.intervals.iter().map(|i| f(&i.sample)).collect()
            };
            let seq: Vec<i64> = (0..m.intervals.len() as i64).collect();
            let threads: Vec<i64> = m
                .intervals
                .iter()
                .map(|i| i64::from(i.sample.threads))
                .collect();
            let backlog: Vec<Option<i64>> = m.intervals.iter().map(|i| i.backlog).collect();
            let (t_s, tps, qps) = (col(|s| s.t_s), col(|s| s.tps), col(|s| s.qps));
            let (reads, writes, others) = (
                col(|s| s.reads_ps),
                col(|s| s.writes_ps),
                col(|s| s.other_ps),
            );
            let (lat, errors, reconnects) = (
                col(|s| s.latency_pct_ms),
                col(|s| s.errors_ps),
                col(|s| s.reconnects_ps),
            );
            let mut values: Vec<&(dyn ToSql + Sync)> = common.to_vec();
            values.extend([
                &m.threads as &(dyn ToSql + Sync),
                &m.duration_s,
                &m.transactions,
                &m.reads,
                &m.writes,
                &m.others,
                &m.ignored_errors,
                &m.reconnects,
                &m.fatal_errors,
                &m.key_distribution,
                &m.percentile,
                &m.interrupted,
                &m.histogram,
                &m.latency_count,
                &m.summary.min,
                &m.summary.avg,
                &m.summary.max,
                &m.summary.p50,
                &m.summary.p90,
                &m.summary.p95,
                &m.summary.p99,
                &m.summary.p999,
                &m.summary.sum,
                &m.tps,
                &m.qps,
                &m.rate,
                &seq,
                &t_s,
                &threads,
                &tps,
                &qps,
                &reads,
                &writes,
                &others,
                &lat,
                &errors,
                &reconnects,
                &backlog,
            ]);
            let stmt = c.insert_measured.as_ref().expect("prepared above");
            c.client.query_one(stmt, &values).await
        }
        None => {
            if c.insert_unmeasured.is_none() {
                c.insert_unmeasured = Some(c.client.prepare(INSERT_UNMEASURED).await.map_err(sql)?);
            }
            let stmt = c.insert_unmeasured.as_ref().expect("prepared above");
            c.client.query_one(stmt, &common).await
        }
    };
    let row = inserted.map_err(|e| match e.code() {
        Some(&SqlState::UNIQUE_VIOLATION) => StoreError::DuplicateTrial {
            path: path.clone(),
            cell,
            trial: t.trial_no as u32,
        },
        Some(&SqlState::FOREIGN_KEY_VIOLATION) => StoreError::NoSuchCell {
            path: path.clone(),
            id: cell,
        },
        _ => sql(e),
    })?;
    Ok(TrialId(get(&row, "id", &path)?))
}

const RUN_COLS: &str = "id, uid, kind, name, status, error, started_at, finished_at, \
    dbrig_version, command_line::text AS command_line, options::text AS options, \
    host::text AS host, plan_text, pid, machine, tags::text AS tags, code_commit";

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

const CELL_COLS: &str =
    "id, run_id, cell_key, configuration, workload, clients, options::text AS options, target";

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
    t.started_at, t.finished_at, t.result::text AS result, t.environment::text AS environment, \
    t.measured, t.threads, t.duration_s, t.transactions, t.reads, t.writes, t.others, \
    t.ignored_errors, t.reconnects, t.fatal_errors::text AS fatal_errors, \
    t.key_distribution::text AS key_distribution, t.percentile, t.interrupted, t.lat_count, \
    t.lat_min_ms, t.lat_avg_ms, t.lat_max_ms, t.lat_p50_ms, t.lat_p90_ms, t.lat_p95_ms, \
    t.lat_p99_ms, t.lat_p999_ms, t.lat_sum_ms, t.tps, t.qps, t.rate::text AS rate";

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

/// A column's value; a type or null the schema does not allow is a corrupt row.
fn get<T: FromSqlOwned>(r: &Row, col: &str, path: &Path) -> Result<T> {
    r.try_get(col).map_err(|e| corrupt(path, col, e))
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

/// A double column (a measurement); NULL reads as NaN, as SQLite's do.
fn real(r: &Row, col: &str, path: &Path) -> Result<f64> {
    Ok(get::<Option<f64>>(r, col, path)?.unwrap_or(f64::NAN))
}

fn to_u64(v: i64, col: &str, path: &Path) -> Result<u64> {
    u64::try_from(v).map_err(|e| corrupt(path, col, e))
}

/// A bigint column holding a `u64`.
fn count(r: &Row, col: &str, path: &Path) -> Result<u64> {
    to_u64(get(r, col, path)?, col, path)
}

/// A bigint column holding a `u32`.
fn small(r: &Row, col: &str, path: &Path) -> Result<u32> {
    u32::try_from(get::<i64>(r, col, path)?).map_err(|e| corrupt(path, col, e))
}
