//! The TPC-H throughput test as a kind: the same data as the power test (`tpch.rs`), S
//! concurrent query streams per trial, Throughput@Size (and QphH@Size with a stored power run).

use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};

use super::tpch::{self as data, TpchPowerOptions};
use crate::error::WorkloadError;
use crate::kind::{Kind, KindFuture, Registration, TrialOutput, abandonable};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::{self, PowerEnv, ThroughputOptions};

pub const NAME: &str = "tpch_throughput";

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::TpchThroughput,
    parse,
    path_options: |name| match name {
        NAME => &["query-dir"],
        _ => &[],
    },
    listed: &[(
        "tpch-throughput",
        "TPC-H throughput test: S concurrent streams, seconds per query, Ts, Throughput@Size",
    )],
};

fn parse(name: &str, options: &serde_json::Value) -> Option<Result<Box<dyn Kind>, WorkloadError>> {
    (crate::kind::normalized(name) == NAME)
        .then(|| data::parse(NAME, options).map(|o| Box::new(TpchThroughput(o)) as Box<dyn Kind>))
}

/// A throughput test with its options.
#[derive(Debug, Clone)]
pub struct TpchThroughput(pub TpchPowerOptions);

impl Kind for TpchThroughput {
    fn name(&self) -> &'static str {
        NAME
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::TpchThroughput
    }

    super::tpch::tpch_data_methods!();

    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        _env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        let o = &self.0;
        Box::pin(async move {
            let note = |line: &str| progress.note(line);
            abandonable(&interrupt, async {
                let options = ThroughputOptions {
                    streams: o.streams,
                    params: o.params(),
                    queries: o.chosen_queries(spec.target.dialect())?,
                    refresh: o.refresh,
                    timeout: o.timeout.map(dbrig_core::limits::duration),
                    os_meter: spec.os_meter.clone(),
                };
                let mut r =
                    tpch::throughput_test(&spec.target, &spec.connect, &options, &note).await?;
                if let Some(p) = &o.power_run {
                    r.power_run = Some(p.run);
                    r.power_at_size = Some(p.power_at_size);
                    r.qphh_at_size = r
                        .throughput_at_size
                        .map(|t| tpch::qphh_at_size(p.power_at_size, t));
                }
                Ok(TrialResult::TpchThroughput(r))
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::TpchThroughput(r) => (r.outcomes().count() as u64, "query"),
            _ => (0, "query"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        let TrialResult::TpchThroughput(r) = &output.result else {
            return String::new();
        };
        format!(
            "{} streams in {:.3} s, Throughput@Size {}{}",
            r.streams,
            r.ts_s,
            r.throughput_at_size
                .map_or("n/a".to_owned(), |p| format!("{p:.2}")),
            r.failure
                .as_deref()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default()
        )
    }
}
