//! The micro-benchmarks (seeds 000, 003, 004) as a kind: each trial creates, measures and
//! drops its own tables, so nothing is prepared and the plan's client counts do not apply.

use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};

use crate::kind::{Kind, KindFuture, Registration, TrialOutput, abandonable};
use crate::micro::MicroOptions;
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::Micro,
    parse: |name, options| {
        MicroOptions::from_json(name, options)
            .transpose()
            .map(|m| m.map(|m| Box::new(Micro(m)) as Box<dyn Kind>))
    },
    path_options: |name| match name {
        "memory_load" => &["server-file"],
        _ => &[],
    },
    listed: &[
        (
            "memory_load",
            "seed 000: bulk load of INT / CHAR(20) keys into an indexed table, rows/s per key type",
        ),
        (
            "scan_filter",
            "seed 004: full scans of a narrow, a wide and an in-cache table, rows/s, MB/s, cycles/row",
        ),
        (
            "tmp_groupby",
            "seed 003: six GROUP BY queries through internal temporary tables, seconds per query",
        ),
    ],
};

/// A micro-benchmark with its options.
#[derive(Debug, Clone)]
pub struct Micro(pub MicroOptions);

impl Kind for Micro {
    fn name(&self) -> &'static str {
        self.0.benchmark().name()
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::Micro
    }

    fn options_json(&self) -> serde_json::Value {
        self.0.json()
    }

    fn clone_kind(&self) -> Box<dyn Kind> {
        Box::new(self.clone())
    }

    fn set_host_cpu_mhz(&mut self, cpu_mhz: Option<f64>) {
        if self.0.common().cpu_mhz.is_none() {
            self.0.common_mut().cpu_mhz = cpu_mhz;
        }
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
                self.0
                    .run(&spec.target, &spec.connect, &note)
                    .await
                    .map(TrialResult::Micro)
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::Micro(r) => (r.items.len() as u64, "item"),
            _ => (0, "item"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        let TrialResult::Micro(r) = &output.result else {
            return String::new();
        };
        r.items
            .iter()
            .map(|i| format!("{} {:.4} {}", i.name, i.mean, i.unit))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
