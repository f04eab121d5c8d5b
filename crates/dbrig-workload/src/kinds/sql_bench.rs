//! sql-bench as a kind: the suite's test scripts run one by one (they make and drop their own
//! tables in a database dbrig made), seconds per operation and test.

use std::sync::Arc;

use dbrig_core::results::{ResultKind, TrialResult};

use crate::kind::{Kind, KindFuture, Registration, TrialOutput, abandonable};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::sqlbench::SqlBenchOptions;
use crate::tpch::PowerEnv;

pub const NAME: &str = "sql_bench";

pub const REGISTRATION: Registration = Registration {
    result: ResultKind::SqlBench,
    parse: |name, options| {
        matches!(crate::kind::normalized(name).as_str(), NAME | "sqlbench").then(|| {
            let o: SqlBenchOptions = crate::kind::options_of("sql-bench", options)?;
            o.validate()?;
            Ok(Box::new(SqlBench(o)) as Box<dyn Kind>)
        })
    },
    path_options: |name| match name {
        NAME | "sqlbench" => &["suite"],
        _ => &[],
    },
    listed: &[(
        "sql-bench",
        "MySQL's classic sql-bench suite (`tests = [\"connect\"]`, `small-test`): seconds per operation and test",
    )],
};

/// A sql-bench run with its options.
#[derive(Debug, Clone)]
pub struct SqlBench(pub SqlBenchOptions);

impl Kind for SqlBench {
    fn name(&self) -> &'static str {
        NAME
    }

    fn result_kind(&self) -> ResultKind {
        ResultKind::SqlBench
    }

    fn options_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.0).unwrap_or_default()
    }

    fn clone_kind(&self) -> Box<dyn Kind> {
        Box::new(self.clone())
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
                crate::sqlbench::trial(&self.0, &spec.target, &spec.connect, &note)
                    .await
                    .map(TrialResult::SqlBench)
            })
            .await
        })
    }

    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str) {
        match &output.result {
            TrialResult::SqlBench(r) => (
                r.tests.iter().map(|t| t.operations.len() as u64).sum(),
                "operation",
            ),
            _ => (0, "operation"),
        }
    }

    fn summary(&self, output: &TrialOutput) -> String {
        let TrialResult::SqlBench(r) = &output.result else {
            return String::new();
        };
        let total: f64 = r
            .tests
            .iter()
            .filter_map(|t| t.total)
            .map(|t| t.wall_s)
            // Not `sum()`: an empty float sum is -0.0, printed "-0.000 s".
            .fold(0.0, |a, b| a + b);
        let bad = r.unfinished().count();
        format!(
            "{} sql-bench test(s) in {total:.3} s{}",
            r.tests.len(),
            if bad > 0 {
                format!(" ({bad} did not finish)")
            } else {
                String::new()
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sql-bench trial whose tests all did not finish says 0.000 s, not -0.000 s.
    #[test]
    fn an_unfinished_sql_bench_summary_has_no_negative_zero() {
        let r = dbrig_core::results::SqlBenchResult {
            server: "mysql".into(),
            server_version: String::new(),
            options: Vec::new(),
            hires: true,
            tests: Vec::new(),
        };
        let kind = SqlBench(serde_json::from_value(serde_json::json!({})).unwrap());
        let s = kind.summary(&TrialOutput::of(TrialResult::SqlBench(r)));
        assert_eq!(s, "0 sql-bench test(s) in 0.000 s");
    }
}
