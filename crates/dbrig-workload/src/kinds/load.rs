//! A workload's data load measured as a trial (`dbrig prepare`, `dbrig tpch load`, a plan's
//! `name = "load"`): its steps, rows/s and MB/s per table; the data identity of the workload
//! that runs on it.

use std::path::Path;
use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};
use dbrig_driver::{ConnectOptions, Target};

use crate::kind::{Kind, KindFuture, Prepared, Registration, TrialOutput, abandonable};
use crate::load_test::{LoadOf, LoadTest, NAME};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::Load,
    parse: |name, options| {
        (crate::kind::normalized(name) == NAME)
            .then(|| LoadTest::from_json(options).map(|l| Box::new(Load(l)) as Box<dyn Kind>))
    },
    path_options: |_| &[],
    listed: &[(
        "load",
        "a workload's data load as the trial (`of = \"oltp_read_write\"`, `\"tpch\"` with `sf`, `\"pgbench-init\"`): steps, rows/s and MB/s per table",
    )],
};

/// A load with what it loads.
#[derive(Debug, Clone)]
pub struct Load(pub LoadTest);

impl Kind for Load {
    fn name(&self) -> &'static str {
        NAME
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::Load
    }

    fn options_json(&self) -> serde_json::Value {
        self.0.options_json()
    }

    fn clone_kind(&self) -> Box<dyn Kind> {
        Box::new(self.clone())
    }

    fn loads_large_data(&self) -> bool {
        !matches!(self.0.of, LoadOf::Oltp(_))
    }

    fn data_identity(&self) -> Option<serde_json::Value> {
        Some(self.0.data_identity())
    }

    // A load command refuses tables that exist, and a server that does not answer, before
    // anything is recorded.
    fn has_preflight(&self) -> bool {
        true
    }

    fn preflight<'a>(
        &'a mut self,
        target: &'a Target,
        connect: &'a ConnectOptions,
        threads: u32,
        space: Option<(&'a Path, u64)>,
    ) -> KindFuture<'a, ()> {
        Box::pin(self.0.preflight(target, connect, threads, space))
    }

    // The trial is the load; a TPC-H one is checked against the free space first.
    fn prepare_if_missing<'a>(
        &'a self,
        _target: &'a Target,
        _connect: &'a ConnectOptions,
        _threads: u32,
        _seed: u64,
        space: Option<(&'a Path, u64)>,
        _progress: &'a dyn Progress,
    ) -> KindFuture<'a, Option<Prepared>> {
        Box::pin(async move {
            self.0.check_fits(space)?;
            Ok(None)
        })
    }

    // Ctrl-C leaves the tables registered as loading: never measured, and dropped by the
    // next load or cleanup.
    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        _env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        Box::pin(async move {
            abandonable(&interrupt, async {
                self.0
                    .trial(
                        &spec.target,
                        &spec.connect,
                        spec.options.threads,
                        spec.seed,
                        progress,
                    )
                    .await
                    .map(TrialResult::Load)
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::Load(r) => (r.figures.rows, "row"),
            _ => (0, "row"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        match &output.result {
            // A few rows are no rate (`MIN_ROWS_FOR_A_RATE`).
            TrialResult::Load(r)
                if r.figures.rows < dbrig_core::results::load::MIN_ROWS_FOR_A_RATE =>
            {
                format!("{} rows in {:.2} s", r.figures.rows, r.total_seconds)
            }
            TrialResult::Load(r) => format!(
                "{} rows in {:.2} s ({:.0} rows/s, {:.1} MB/s)",
                r.figures.rows,
                r.total_seconds,
                r.figures.rows_per_s(),
                r.figures.mb_per_s()
            ),
            _ => String::new(),
        }
    }
}
