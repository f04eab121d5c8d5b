//! What the client-driven kinds (OLTP, pgbench scripts, Lua scripts, connect) share: a trial is
//! the runner's client loop over the kind's [`Workload`], whose measurements the kind turns into
//! its own result ([`Workload::trial_output`]); its unit of work is the transaction (event).

use std::sync::Arc;

use dbrig_core::results::TrialResult;

use crate::Workload;
use crate::error::WorkloadError;
use crate::kind::TrialOutput;
use crate::progress::Progress;
use crate::runner::{self, RunSpec, Stopper};

/// Run `workload`'s clients for one trial, telling `shown` (a script's reporter may stand
/// between it and the executor). `None`: Ctrl-C while the clients were set up, nothing was
/// measured. The runner's warnings come back beside the output, to be told once the kind is
/// done with the trial.
pub(crate) async fn measure(
    workload: &Workload,
    spec: &RunSpec,
    interrupt: Arc<Stopper>,
    shown: &dyn Progress,
) -> Result<Option<(TrialOutput, Vec<String>)>, WorkloadError> {
    let Some(mut run) = runner::run(workload, spec, interrupt, shown).await? else {
        return Ok(None);
    };
    let warnings = std::mem::take(&mut run.warnings);
    // The kind makes its own result of what its clients measured.
    Ok(Some((workload.trial_output(run, spec), warnings)))
}

/// A client-driven trial as most kinds run it: the clients, then the runner's warnings.
pub(crate) async fn trial(
    workload: &Workload,
    spec: &RunSpec,
    interrupt: Arc<Stopper>,
    progress: &dyn Progress,
) -> Result<Option<TrialOutput>, WorkloadError> {
    let Some((output, warnings)) = measure(workload, spec, interrupt, progress).await? else {
        return Ok(None);
    };
    tell(progress, &warnings);
    Ok(Some(output))
}

/// The runner's warnings, a line each.
pub(crate) fn tell(progress: &dyn Progress, warnings: &[String]) {
    for w in warnings {
        progress.note(w);
    }
}

/// A client-driven trial's unit of work: the transaction (what CPU and counters are divided
/// by), not the query.
pub(crate) fn work_units(output: &TrialOutput) -> (u64, &'static str) {
    (
        output.measurements.as_ref().map_or(0, |m| m.transactions),
        "transaction",
    )
}

/// The OLTP figures' line: tps, qps, p95.
pub(crate) fn summary(output: &TrialOutput) -> String {
    match (&output.result, &output.measurements) {
        (TrialResult::Oltp(_), Some(m)) => format!(
            "{:.2} tps, {:.2} qps, p95 {:.2} ms",
            m.tps(),
            m.qps(),
            m.latency_summary().p95
        ),
        _ => "no measurements".to_owned(),
    }
}

/// The methods every client-driven kind implements the same way, for its `impl Kind`.
macro_rules! client_driven {
    () => {
        fn client_workload(&self) -> Option<&crate::Workload> {
            Some(&self.0)
        }

        fn result_kind(&self) -> dbrig_core::results::ResultKind {
            dbrig_core::results::ResultKind::Oltp
        }

        fn name(&self) -> &'static str {
            self.0.name()
        }

        fn options_json(&self) -> serde_json::Value {
            self.0.options_json()
        }

        fn clone_kind(&self) -> Box<dyn crate::kind::Kind> {
            Box::new(self.clone())
        }

        fn work_units(&self, output: &crate::kind::TrialOutput) -> (u64, &'static str) {
            super::clients::work_units(output)
        }

        fn summary(&self, output: &crate::kind::TrialOutput) -> String {
            super::clients::summary(output)
        }
    };
}
pub(crate) use client_driven;

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::Measurements;

    /// An OLTP trial's unit of work is the transaction (what CPU and counters are divided
    /// by), not the query: here 20 queries a transaction.
    #[test]
    fn oltp_work_is_counted_in_transactions() {
        let m = Measurements {
            threads: 1,
            key_distribution: dbrig_core::KeyDistribution::Uniform,
            duration_s: 1.0,
            transactions: 50,
            queries: dbrig_core::QueryCounters {
                read: 700,
                write: 200,
                other: 100,
            },
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: Vec::new(),
            latency: dbrig_core::LatencyHistogram::new(),
            intervals: Vec::new(),
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let o = TrialOutput {
            result: TrialResult::Oltp(Default::default()),
            measurements: Some(m),
            server_version: String::new(),
        };
        assert_eq!(work_units(&o), (50, "transaction"));
    }
}
