//! The TPC-H power test as a kind: its data loaded as the prepare step (`tpch.rs`), each trial
//! one power run (the DBT-3 launcher's controls around its queries), Power@Size.

use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};

use super::tpch::{self as data, TpchPowerOptions};
use crate::error::WorkloadError;
use crate::kind::{Kind, KindFuture, Registration, TrialOutput, abandonable};
use crate::progress::{Progress, ProgressEvent};
use crate::runner::{RunSpec, Stopper};
use crate::tpch::{self, PowerEnv, PowerOptions};

pub const NAME: &str = "tpch_power";

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::TpchPower,
    parse,
    path_options: |name| match name {
        NAME => &["query-dir"],
        _ => &[],
    },
    listed: &[(
        "tpch-power",
        "TPC-H power test (data loaded as the prepare step): seconds per query, Power@Size",
    )],
};

fn parse(name: &str, options: &serde_json::Value) -> Option<Result<Box<dyn Kind>, WorkloadError>> {
    (crate::kind::normalized(name) == NAME).then(|| {
        let o = data::parse(NAME, options)?;
        if o.streams != 0 || o.timeout.is_some() {
            return Err(WorkloadError::InvalidOptions(
                "tpch_power options: streams and timeout are the throughput test's (name = \"tpch-throughput\")".into(),
            ));
        }
        Ok(Box::new(TpchPower(o)) as Box<dyn Kind>)
    })
}

/// A power test with its options.
#[derive(Debug, Clone)]
pub struct TpchPower(pub TpchPowerOptions);

impl Kind for TpchPower {
    fn name(&self) -> &'static str {
        NAME
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::TpchPower
    }

    super::tpch::tpch_data_methods!();

    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        let o = &self.0;
        Box::pin(async move {
            let note = |line: &str| progress.note(line);
            abandonable(&interrupt, async {
                let check_against = match &o.check_against {
                    Some(url) => {
                        let t = dbrig_driver::Target::parse(url).map_err(|e| {
                            WorkloadError::InvalidOptions(format!("check-against: {e}"))
                        })?;
                        let set = o.query_set(t.dialect())?;
                        Some((t, set))
                    }
                    None => None,
                };
                let options = PowerOptions {
                    params: o.params(),
                    queries: o.chosen_queries(spec.target.dialect())?,
                    refresh: o.refresh,
                    check_against,
                    os_meter: spec.os_meter.clone(),
                };
                tpch::power_test_controlled(
                    &spec.target,
                    &spec.connect,
                    &options,
                    &o.controls,
                    env,
                    &note,
                    &mut |r| progress.event(ProgressEvent::Query(r)),
                )
                .await
                .map(TrialResult::TpchPower)
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::TpchPower(r) => (r.queries.len() as u64, "query"),
            _ => (0, "query"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        let TrialResult::TpchPower(r) = &output.result else {
            return String::new();
        };
        let total: f64 = r.queries.iter().map(|q| q.seconds()).sum();
        let bad = r
            .queries
            .iter()
            .filter(|q| q.status != tpch::QueryStatus::Ok)
            .count();
        format!(
            "{} queries in {total:.3} s{}, Power@Size {}",
            r.queries.len(),
            if bad > 0 {
                format!(" ({bad} failed or wrong)")
            } else {
                String::new()
            },
            r.power_at_size
                .map_or("n/a".to_owned(), |p| format!("{p:.2}"))
        )
    }
}
