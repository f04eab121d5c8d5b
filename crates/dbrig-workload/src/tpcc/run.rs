//! TPC-C as a client-driven kind on the shared runner: the workload ([`Tpcc`]) checks the
//! database is a finished TPC-C build, makes each client ([`super::txn::TpccClient`]), and
//! turns what the clients measured, with the server's counters read before and after the
//! clients ran ([`Reading`]), into the typed [`TpccResult`]: NOPM from `sum(d_next_o_id)`, TPM
//! from the server's commit and rollback counters, per transaction type counts and latency.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use dbrig_core::Value;
use dbrig_core::results::{
    TpccCheckFailure, TpccConsistency, TpccInterval, TpccResult, TpccTransaction, TrialResult,
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
        threads: u32,
        allow_mismatch: bool,
    ) -> Result<Vec<String>, WorkloadError> {
        let target = conn.target().clone();
        let loaded = loaded_data(conn, &target).await?;
        let terminals = loaded.warehouses * super::terminal::TERMINALS_PER_WAREHOUSE;
        if self.options.key_and_think && threads > terminals {
            return Err(WorkloadError::InvalidOptions(format!(
                "tpcc --key-and-think: {threads} clients for {terminals} terminals ({} warehouse(s) x {}): give at most {terminals} (each client serves its share of the terminals)",
                loaded.warehouses,
                super::terminal::TERMINALS_PER_WAREHOUSE
            )));
        }
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

    /// A client: its statements prepared, its deck shuffled from the run's seed; with keying
    /// and thinking, its share of the `clients` clients' terminals.
    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        clients: u32,
        seed: u64,
    ) -> Result<TpccClient, DriverError> {
        let client = TpccClient::new(conn, index, self.shape(seed)?, seed).await?;
        Ok(match self.options.key_and_think {
            true => client.with_terminals(index, clients),
            false => client,
        })
    }

    /// Where the run is not what the specification runs, a line each.
    pub fn notes(&self, target: &Target) -> Vec<String> {
        let mut notes = vec![
            match self.options.key_and_think {
                false => "no keying or thinking time (as HammerDB's default): NOPM and TPM, not tpmC",
                true => "keying and think times on, ten terminals per warehouse shared by the clients; Stock-Level's district drawn per transaction, not fixed per terminal",
            }
            .to_owned(),
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
        samples: &[Reading],
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
        let warehouses = loaded.map_or(self.options.warehouses, |l| l.warehouses);
        // tpmC: the clients' completed New-Orders (the rolled-back ones count as completed) per
        // minute, only where keying and thinking make it the specification's figure.
        let tpmc = (self.options.key_and_think && m.duration_s > 0.0)
            .then(|| transactions[0].finished() as f64 / (m.duration_s / 60.0));
        let tpmc_efficiency_pct = tpmc.map(|t| {
            100.0 * t / (super::terminal::TPMC_CEILING_PER_WAREHOUSE * f64::from(warehouses))
        });
        let result = TpccResult {
            warehouses,
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
            key_and_think: self.options.key_and_think,
            tpmc,
            tpmc_efficiency_pct,
            intervals: per_interval(&before, samples),
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
/// interval begins (when the clients go without a warm-up, or when the warm-up ends), so NOPM
/// and TPM are over the measured interval only, as HammerDB's are over its timed minutes; and
/// again at each interval sample, on the same connection, for the per-interval NOPM line (as
/// HammerDB's transaction counter draws it).
pub struct StartReading<'a> {
    inner: &'a dyn Progress,
    target: Target,
    connect: ConnectOptions,
    warmup: bool,
    /// Ticks to the sampler: one per interval sample; dropped to end it.
    ticks: Mutex<Option<tokio::sync::mpsc::UnboundedSender<()>>>,
    task: Mutex<Option<tokio::task::JoinHandle<Result<Readings, WorkloadError>>>>,
}

/// The reading when the measured interval began, and one per interval sample after it.
#[derive(Debug, Clone, Default)]
pub struct Readings {
    pub start: Option<Reading>,
    pub samples: Vec<Reading>,
}

impl<'a> StartReading<'a> {
    pub fn new(inner: &'a dyn Progress, spec: &RunSpec) -> Self {
        StartReading {
            inner,
            target: spec.target.clone(),
            connect: spec.connect.clone(),
            warmup: spec.options.warmup > 0.0,
            ticks: Mutex::new(None),
            task: Mutex::new(None),
        }
    }

    fn read_now(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (target, connect) = (self.target.clone(), self.connect.clone());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let task = handle.spawn(async move {
            let mut conn = Connection::connect(&target, &connect).await?;
            let start = Reading::on(&mut conn).await?;
            let mut samples = Vec::new();
            while rx.recv().await.is_some() {
                // Ticks that queued while a reading was slow are one reading, not several.
                while rx.try_recv().is_ok() {}
                // A reading that fails leaves a gap in the line; the run goes on.
                if let Ok(r) = Reading::on(&mut conn).await {
                    samples.push(r);
                }
            }
            conn.close().await;
            Ok(Readings {
                start: Some(start),
                samples,
            })
        });
        *self.ticks.lock().expect("reading lock") = Some(tx);
        *self.task.lock().expect("reading lock") = Some(task);
    }

    /// The readings (`start: None` when none was taken: the clients never went).
    pub async fn reading(&self) -> Result<Readings, WorkloadError> {
        // No more ticks: the sampler ends after its last reading.
        drop(self.ticks.lock().expect("reading lock").take());
        let task = self.task.lock().expect("reading lock").take();
        match task {
            Some(t) => match t.await {
                Ok(r) => r,
                Err(e) => Err(WorkloadError::InvalidOptions(format!(
                    "tpcc: the counters' reading at the start did not finish: {e}"
                ))),
            },
            None => Ok(Readings::default()),
        }
    }
}

impl Progress for StartReading<'_> {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Measuring => self.read_now(),
            ProgressEvent::Connected if !self.warmup => self.read_now(),
            ProgressEvent::Interval(_) => {
                if let Some(tx) = &*self.ticks.lock().expect("reading lock") {
                    let _ = tx.send(());
                }
            }
            _ => {}
        }
        self.inner.event(event);
    }
}

/// NOPM (and the server's TPM) between consecutive readings, each at the seconds from `start`
/// its reading was taken.
pub fn per_interval(start: &Reading, samples: &[Reading]) -> Vec<TpccInterval> {
    let mut out = Vec::with_capacity(samples.len());
    let mut prev = start;
    for r in samples {
        let minutes = r.at.saturating_duration_since(prev.at).as_secs_f64() / 60.0;
        if minutes > 0.0 {
            out.push(TpccInterval {
                t_s: r.at.saturating_duration_since(start.at).as_secs_f64(),
                nopm: (r.next_o_id - prev.next_o_id).max(0) as f64 / minutes,
                tpm: match (prev.server_transactions, r.server_transactions) {
                    (Some(a), Some(b)) => Some((b - a).max(0) as f64 / minutes),
                    _ => None,
                },
            });
        }
        prev = r;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn nopm_per_interval_is_each_intervals_own_change() {
        let t0 = Instant::now();
        let at = |s: f64, next: i64, tx: Option<i64>| Reading {
            at: t0 + Duration::from_secs_f64(s),
            next_o_id: next,
            server_transactions: tx,
        };
        let start = at(0.0, 1000, Some(50));
        let samples = [
            at(1.0, 1010, Some(72)),
            at(2.0, 1010, Some(80)),
            at(4.0, 1050, Some(180)),
        ];
        let i = per_interval(&start, &samples);
        let got: Vec<(f64, f64, Option<f64>)> = i
            .iter()
            .map(|x| (x.t_s.round(), x.nopm.round(), x.tpm.map(f64::round)))
            .collect();
        // 10 new orders in a second: 600 a minute; none; 40 in two seconds: 1 200.
        assert_eq!(
            got,
            [
                (1.0, 600.0, Some(1320.0)),
                (2.0, 0.0, Some(480.0)),
                (4.0, 1200.0, Some(3000.0))
            ]
        );
        // SQLite keeps no server counter: NOPM only.
        let lite = per_interval(&at(0.0, 0, None), &[at(1.0, 5, None)]);
        assert_eq!((lite[0].nopm.round(), lite[0].tpm), (300.0, None));
    }
}
