//! TPC-C as a kind: a client-driven kind (the runner's client loop through `clients.rs`) with a
//! result of its own. Its trial reads the server's counters when the measured interval begins
//! (through the one progress channel) and after the clients, checks the consistency conditions
//! if asked, and makes a `TrialResult::Tpcc` (NOPM, TPM, each transaction type's figures); its
//! prepare step builds the nine tables when they are missing or were left half-built. The
//! client code is `src/tpcc/`.

use std::path::Path;
use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};
use dbrig_driver::{ConnectOptions, Connection, Target};

use super::clients;
use crate::Workload;
use crate::kind::{Kind, KindFuture, Prepared, Registration, TrialOutput, normalized, options_of};
use crate::progress::Progress;
use crate::runner::{self, RunSpec, Stopper};
use crate::tpcc::{self as tpcc_mod, Reading, TpccOptions};
use crate::tpch::PowerEnv;

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::Tpcc,
    parse: |name, options| {
        (normalized(name) == tpcc_mod::NAME).then(|| {
            let o: TpccOptions = options_of(tpcc_mod::NAME, options)?;
            Ok(Workload::Tpcc(tpcc_mod::Tpcc::new(o))
                .into_kind()
                .into_box())
        })
    },
    path_options: |_| &[],
    listed: &[(
        tpcc_mod::NAME,
        "TPC-C's five transactions on its nine tables (NOPM, TPM; `dbrig prepare tpcc` loads them)",
    )],
};

/// The TPC-C workload (`Workload::Tpcc`).
#[derive(Debug, Clone)]
pub struct Tpcc(Workload);

impl Tpcc {
    /// The kind of `workload`, a `Workload::Tpcc` ([`Workload::into_kind`] decides).
    pub(crate) fn new(workload: Workload) -> Self {
        Tpcc(workload)
    }

    fn tpcc(&self) -> Option<&tpcc_mod::Tpcc> {
        match &self.0 {
            Workload::Tpcc(t) => Some(t),
            _ => None,
        }
    }
}

impl Kind for Tpcc {
    fn client_workload(&self) -> Option<&Workload> {
        Some(&self.0)
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::Tpcc
    }

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn options_json(&self) -> serde_json::Value {
        self.0.options_json()
    }

    fn clone_kind(&self) -> Box<dyn Kind> {
        Box::new(self.clone())
    }

    fn writes(&self) -> bool {
        true
    }

    fn data_identity(&self) -> Option<serde_json::Value> {
        self.tpcc().map(|t| t.options.data_identity())
    }

    fn prepare_if_missing<'a>(
        &'a self,
        target: &'a Target,
        connect: &'a ConnectOptions,
        _threads: u32,
        seed: u64,
        _space: Option<(&'a Path, u64)>,
        progress: &'a dyn Progress,
    ) -> KindFuture<'a, Option<Prepared>> {
        Box::pin(async move {
            let Some(t) = self.tpcc() else {
                return Ok(None);
            };
            let mut conn = Connection::connect(target, connect).await?;
            let mut present = 0;
            let mut half = false;
            for table in tpcc_mod::Table::ALL {
                if conn.table_exists(table.name()).await? {
                    present += 1;
                    half |= crate::registry::lookup(&mut conn, table.name())
                        .await?
                        .is_none_or(|e| e.state != "ready");
                }
            }
            conn.close().await;
            if present == tpcc_mod::Table::ALL.len() && !half {
                return Ok(None);
            }
            if present > 0 {
                // dbrig's own tables (cleanup proves each by its marker) left by an
                // interrupted build: never measured, built again.
                progress.note(&format!(
                    "TPC-C tables on {target} were left half-built: dropping them and building {} warehouse(s) again",
                    t.options.warehouses
                ));
                tpcc_mod::cleanup(target, connect).await?;
            }
            progress.note(&format!(
                "building TPC-C with {} warehouse(s) on {target}",
                t.options.warehouses
            ));
            let r =
                tpcc_mod::load(target, connect, &t.options.load_options(seed), progress).await?;
            Ok(Some(Prepared {
                line: format!(
                    "built TPC-C, {} warehouse(s), in {:.2} s",
                    r.warehouses, r.total_seconds
                ),
                figures: Some(r.figures),
            }))
        })
    }

    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        _env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        Box::pin(async move {
            let Some(t) = self.tpcc() else {
                return clients::trial(&self.0, spec, interrupt, progress).await;
            };
            // NOPM and TPM: the server's counters when the measured interval begins (read by
            // the progress relay) and after the clients.
            let start = tpcc_mod::run::StartReading::new(progress, spec);
            let Some(mut run) = runner::run(&self.0, spec, interrupt, &start).await? else {
                // Ctrl-C while the clients were set up: nothing was measured.
                return Ok(None);
            };
            let warnings = std::mem::take(&mut run.warnings);
            let readings = start.reading().await?;
            let output = match readings.start {
                Some(before) => {
                    let mut conn = Connection::connect(&spec.target, &spec.connect).await?;
                    let after = Reading::on(&mut conn).await;
                    let check = match (&after, t.options.consistency_check) {
                        (Ok(_), true) => {
                            progress.note("checking the consistency conditions after the run");
                            Some(tpcc_mod::check_consistency(&mut conn).await)
                        }
                        _ => None,
                    };
                    conn.close().await;
                    t.trial_output(
                        run,
                        spec,
                        before,
                        after?,
                        &readings.samples,
                        check.transpose()?,
                    )
                }
                // The clients never went: only what they measured, as the runner gave it.
                None => self.0.trial_output(run, spec),
            };
            clients::tell(progress, &warnings);
            Ok(Some(output))
        })
    }

    /// CPU per New-Order, as the TPC-C comparisons quote it.
    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::Tpcc(r) => (r.new_orders, "new order"),
            _ => clients::work_units(output),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        match &output.result {
            TrialResult::Tpcc(r) => format!(
                "{:.0} NOPM, {} TPM, {} warehouse(s)",
                r.nopm,
                r.tpm.map_or_else(
                    || format!("{:.0} client", r.client_tpm),
                    |t| format!("{t:.0}")
                ),
                r.warehouses
            ),
            _ => clients::summary(output),
        }
    }
}
