//! perfrun as a kind: every query of a folder (or TPC-H's 22) run cold then warm, with the
//! server's counters; on TPC-H it first finds the data loaded.

use std::path::Path;
use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};
use dbrig_driver::{ConnectOptions, Connection, Target};

use crate::kind::{Kind, KindFuture, Registration, TrialOutput, abandonable};
use crate::perfrun::PerfrunOptions;
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::{self, PowerEnv};

pub const NAME: &str = "perfrun";

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::Perfrun,
    parse: |name, options| {
        (crate::kind::normalized(name) == NAME).then(|| {
            let o: PerfrunOptions = crate::kind::options_of(NAME, options)?;
            o.validate()?;
            Ok(Box::new(Perfrun(o)) as Box<dyn Kind>)
        })
    },
    path_options: |name| match name {
        NAME => &["queries"],
        _ => &[],
    },
    listed: &[(
        "perfrun",
        "RQG perfrun: every query of `queries` (or TPC-H) cold then warm, time and counters",
    )],
};

/// A perfrun with its options.
#[derive(Debug, Clone)]
pub struct Perfrun(pub PerfrunOptions);

impl Kind for Perfrun {
    fn name(&self) -> &'static str {
        NAME
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::Perfrun
    }

    fn options_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    fn clone_kind(&self) -> Box<dyn Kind> {
        Box::new(self.clone())
    }

    fn has_preflight(&self) -> bool {
        self.0.tpch
    }

    fn preflight<'a>(
        &'a mut self,
        target: &'a Target,
        connect: &'a ConnectOptions,
        _threads: u32,
        _space: Option<(&'a Path, u64)>,
    ) -> KindFuture<'a, ()> {
        Box::pin(async move {
            if self.0.tpch {
                let mut conn = Connection::connect(target, connect).await?;
                let loaded = tpch::check_loaded(&mut conn).await;
                conn.close().await;
                loaded?;
            }
            Ok(())
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
            let note = |line: &str| progress.note(line);
            abandonable(&interrupt, async {
                crate::perfrun::perfrun_trial(&spec.target, &spec.connect, &self.0, &note)
                    .await
                    .map(TrialResult::Perfrun)
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            // Each query runs cold and warm.
            TrialResult::Perfrun(r) => (2 * r.queries.len() as u64, "query"),
            _ => (0, "query"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        let TrialResult::Perfrun(r) = &output.result else {
            return String::new();
        };
        format!(
            "{} queries cold and warm{}",
            r.queries.len(),
            match r.errors() {
                0 => String::new(),
                n => format!(", {n} execution(s) failed"),
            }
        )
    }
}
