//! TPC-C as a client-driven kind on the shared runner: the workload ([`Tpcc`]) checks the
//! database is a finished TPC-C build, makes each client ([`super::txn::TpccClient`]), and
//! turns what the clients measured, with the server's counters read before and after the
//! clients ran ([`Reading`]), into the typed [`TpccResult`]: NOPM from `sum(d_next_o_id)`, TPM
//! from the server's commit and rollback counters, per transaction type counts and latency.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::results::{
    TpccCheckFailure, TpccConsistency, TpccResult, TpccTransaction, TrialResult,
};
use dbrig_driver::{ConnectOptions, Connection, Dialect, DriverError, Target};

use super::check::CheckReport;
use super::data::Population;
use super::load::{LoadedData, loaded_data};
use super::options::TpccOptions;
use super::schema_sql;
use super::txn::{RunShape, TpccClient, TxType};
use crate::error::WorkloadError;
use crate::kind::TrialOutput;
use crate::progress::{Progress, ProgressEvent};
use crate::runner::{RunOutcome, RunSpec};

/// The TPC-C workload of a run.
#[derive(Debug, Clone)]
pub struct Tpcc {
    pub options: Arc<TpccOptions>,
    /// What the tables were loaded with, found by [`Tpcc::check_ready`] before clients start.
    loaded: Arc<Mutex<Option<LoadedData>>>,
}

/// The server's counters at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub at: Instant,
    /// `sum(d_next_o_id)`.
    pub next_o_id: i64,
    /// Commits and rollbacks by the server's count (`None`: SQLite keeps none).
    pub server_transactions: Option<i64>,
}

fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Text(s) => s.trim().parse::<f64>().map(|f| f as i64).unwrap_or(0),
        Value::Float(f) => *f as i64,
        v => v.as_i64().unwrap_or(0),
    }
}

impl Reading {
    /// Read the counters on a connection of its own.
    pub async fn take(target: &Target, connect: &ConnectOptions) -> Result<Reading, WorkloadError> {
        let mut conn = Connection::connect(target, connect).await?;
        let r = Reading::on(&mut conn).await;
        conn.close().await;
        r
    }

    pub async fn on(conn: &mut Connection) -> Result<Reading, WorkloadError> {
        let sql = schema_sql(conn.dialect());
        let next = conn.query(&sql.render("sum_next_o_id", &[]), &[]).await?;
        let next_o_id = next.first().and_then(|r| r.first()).map_or(0, as_i64);
        let server_transactions = match sql.has("server_transactions") {
            true => {
                let rows = conn
                    .query(&sql.render("server_transactions", &[]), &[])
                    .await?;
                // MariaDB/MySQL: (name, value) rows; PostgreSQL: one value.
                Some(
                    rows.iter()
                        .map(|r| as_i64(r.last().unwrap_or(&Value::Null)))
                        .sum(),
                )
            }
            false => None,
        };
        Ok(Reading {
            at: Instant::now(),
            next_o_id,
            server_transactions,
        })
    }
}

impl Tpcc {
    pub fn new(options: TpccOptions) -> Tpcc {
        Tpcc {
            options: Arc::new(options),
            loaded: Arc::default(),
        }
    }

    /// Refuse tables that are not a finished TPC-C build; a warehouse count other than the
    /// options' is refused unless the run allows a data mismatch (then said in a warning).
    pub async fn check_ready(
        &self,
        conn: &mut Connection,
        allow_mismatch: bool,
    ) -> Result<Vec<String>, WorkloadError> {
        let target = conn.target().clone();
        let loaded = loaded_data(conn, &target).await?;
        let mut warnings = Vec::new();
        if loaded.warehouses != self.options.warehouses {
            let why = format!(
                "{} warehouse(s) loaded, {} asked for",
                loaded.warehouses, self.options.warehouses
            );
            if !allow_mismatch {
                return Err(WorkloadError::DataMismatch {
                    target: target.to_string(),
                    why,
                    workload: super::NAME.to_owned(),
                });
            }
            warnings.push(format!(
                "tpcc: {why}; measured on the loaded {} warehouse(s)",
                loaded.warehouses
            ));
        }
        if self.options.procedures {
            // Once, before the clients prepare their calls.
            super::procedures::install(conn).await?;
        }
        *self.loaded.lock().expect("tpcc data lock") = Some(loaded);
        Ok(warnings)
    }

    fn shape(&self, seed: u64) -> Result<RunShape, DriverError> {
        let loaded = self.loaded.lock().expect("tpcc data lock").ok_or_else(|| {
            DriverError::fatal(
                dbrig_driver::ErrorKind::Statement,
                "tpcc: clients made before the tables were checked",
            )
        })?;
        let pop = Population {
            seed: loaded.seed,
            scale: loaded.scale,
            load_time: 0,
        };
        Ok(RunShape {
            warehouses: loaded.warehouses,
            scale: loaded.scale,
            constants: pop.run_constants(seed),
            mix: self.options.mix.0,
            home_warehouse: !self.options.all_warehouses,
            procedures: self.options.procedures,
        })
    }

    /// A client: its statements prepared, its deck shuffled from the run's seed.
    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        seed: u64,
    ) -> Result<TpccClient, DriverError> {
        TpccClient::new(conn, index, self.shape(seed)?, seed).await
    }

    /// Where the run is not what the specification runs, a line each.
    pub fn notes(&self, target: &Target) -> Vec<String> {
        let mut notes = vec![
            "no keying or thinking time (as HammerDB's default): NOPM and TPM, not tpmC".to_owned(),
            "Delivery runs at once in the client's transaction (as HammerDB), not deferred"
                .to_owned(),
        ];
        if self.options.mix.0 != super::options::Mix::SPEC.0 {
            notes.push(format!(
                "transaction mix {} per deck, not the specification's 10/10/1/1/1{}",
                self.options.mix,
                match self.options.mix.meets_minimums() {
                    true => "",
                    false => " (below the minimums of clause 5.2.3)",
                }
            ));
        }
        if matches!(target, Target::Sqlite { .. }) {
            notes.push(
                "SQLite serialises writers: dbrig queues its writers in arrival order; TPM is the clients' count (SQLite keeps no server counter)".to_owned(),
            );
        }
        notes
    }

    /// The trial's result: NOPM and TPM over the time between `before` and `after`, the
    /// clients' per-type figures, the check after the run.
    pub fn trial_output(
        &self,
        run: RunOutcome,
        spec: &RunSpec,
        before: Reading,
        after: Reading,
        check: Option<CheckReport>,
    ) -> TrialOutput {
        let minutes = after.at.saturating_duration_since(before.at).as_secs_f64() / 60.0;
        let per_minute = |n: i64| match minutes > 0.0 {
            true => n as f64 / minutes,
            false => 0.0,
        };
        let new_orders = (after.next_o_id - before.next_o_id).max(0);
        let m = &run.measured;
        let transactions: Vec<TpccTransaction> = TxType::ALL
            .iter()
            .map(|t| {
                let c = m.kinds.get(t.name()).cloned().unwrap_or_default();
                let ms = |us: u64| us as f64 / 1000.0;
                let h = &c.latency;
                TpccTransaction {
                    name: t.name().to_owned(),
                    committed: c.committed,
                    rolled_back: c.rolled_back,
                    retried: c.retried,
                    failed_serialization: c.failed.serialization,
                    failed_deadlock: c.failed.deadlock,
                    failed_other: c.failed.other,
                    p50_ms: ms(h.percentile_us(50.0)),
                    p90_ms: ms(h.percentile_us(90.0)),
                    p95_ms: ms(h.percentile_us(95.0)),
                    p99_ms: ms(h.percentile_us(99.0)),
                    max_ms: ms(h.max_us()),
                    p90_limit_s: t.p90_limit_s(),
                }
            })
            .collect();
        let finished: u64 = transactions.iter().map(TpccTransaction::finished).sum();
        let client_tpm = match m.duration_s > 0.0 {
            true => finished as f64 / (m.duration_s / 60.0),
            false => 0.0,
        };
        let (tpm, tpm_source) = match (before.server_transactions, after.server_transactions) {
            (Some(b), Some(a)) => (
                Some(per_minute(a - b)),
                match spec.target.dialect() {
                    Dialect::Postgres => "PostgreSQL xact_commit + xact_rollback of the database",
                    _ => "the server's Com_commit + Com_rollback",
                }
                .to_owned(),
            ),
            _ => (None, "none on this engine: see client TPM".to_owned()),
        };
        let consistency = check.map(|c| TpccConsistency {
            checked: c.checked,
            failures: c
                .failures
                .into_iter()
                .map(|f| TpccCheckFailure {
                    condition: f.condition,
                    what: f.what,
                    row: f.row,
                })
                .collect(),
        });
        let notes = self.notes(&spec.target);
        let loaded = *self.loaded.lock().expect("tpcc data lock");
        let result = TpccResult {
            warehouses: loaded.map_or(self.options.warehouses, |l| l.warehouses),
            clients: spec.options.threads,
            server_version: run.server_version.clone(),
            duration_seconds: minutes * 60.0,
            new_orders: new_orders as u64,
            nopm: per_minute(new_orders),
            tpm,
            tpm_source,
            client_tpm,
            mix: self.options.mix.0.to_vec(),
            home_warehouse: !self.options.all_warehouses,
            transactions,
            consistency,
            notes: notes.clone(),
        };
        // The run's events, latency and intervals as every client-driven kind stores them.
        let oltp = crate::oltp_result::trial_output(run, spec, notes);
        TrialOutput {
            result: TrialResult::Tpcc(result),
            measurements: oltp.measurements,
            server_version: oltp.server_version,
        }
    }
}

/// The trial's progress, passed on, which also reads the server's counters when the measured
/// interval begins: when the clients go (no warm-up), or when the warm-up ends. NOPM and TPM
/// are then over the measured interval only, as HammerDB's are over its timed minutes.
pub struct StartReading<'a> {
    inner: &'a dyn Progress,
    target: Target,
    connect: ConnectOptions,
    warmup: bool,
    task: Mutex<Option<tokio::task::JoinHandle<Result<Reading, WorkloadError>>>>,
}

impl<'a> StartReading<'a> {
    pub fn new(inner: &'a dyn Progress, spec: &RunSpec) -> Self {
        StartReading {
            inner,
            target: spec.target.clone(),
            connect: spec.connect.clone(),
            warmup: spec.options.warmup > 0.0,
            task: Mutex::new(None),
        }
    }

    fn read_now(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (target, connect) = (self.target.clone(), self.connect.clone());
        let task = handle.spawn(async move { Reading::take(&target, &connect).await });
        *self.task.lock().expect("reading lock") = Some(task);
    }

    /// The reading at the start of the measured interval, or `None` when none was taken (the
    /// clients never went).
    pub async fn reading(&self) -> Result<Option<Reading>, WorkloadError> {
        let task = self.task.lock().expect("reading lock").take();
        match task {
            Some(t) => match t.await {
                Ok(r) => r.map(Some),
                Err(e) => Err(WorkloadError::InvalidOptions(format!(
                    "tpcc: the counters' reading at the start did not finish: {e}"
                ))),
            },
            None => Ok(None),
        }
    }
}

impl Progress for StartReading<'_> {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Measuring => self.read_now(),
            ProgressEvent::Connected if !self.warmup => self.read_now(),
            _ => {}
        }
        self.inner.event(event);
    }
}
