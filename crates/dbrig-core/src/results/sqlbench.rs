//! What a run of MySQL's classic `sql-bench` suite measured: per test (`test-connect`,
//! `test-insert`, …) its `Time for NAME (N): W wallclock secs (U usr S sys …)` lines, its
//! `Total time`, how it ended (a test that failed, lost its server or timed out is recorded as
//! such, never left out) and its output, from which sql-bench's own result files are
//! rewritten (`RESULTS-DIR/HOST/YYYY-MM-DD/`).

use serde::{Deserialize, Serialize};

/// A run of sql-bench tests against one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlBenchResult {
    /// sql-bench's `--server`: `mysql` or `Pg`.
    pub server: String,
    /// The server's version as sql-bench printed it (`Testing server '…'`).
    pub server_version: String,
    /// The options every test ran with (no password: it never goes on a command line).
    pub options: Vec<String>,
    /// Whether wallclock was timed in microseconds (Benchmark's `:hireswallclock`) or in
    /// whole seconds as sql-bench does by default.
    pub hires: bool,
    pub tests: Vec<SqlBenchTest>,
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SqlBenchStatus {
    /// It printed its `Total time`.
    Ok,
    /// It said `Test skipped` (the server lacks what it needs).
    Skipped,
    /// It stopped with an error (non-zero exit, no `Total time`).
    Failed,
    /// Its connection to the server was lost (the server died or went away).
    LostServer,
    /// dbrig stopped it after the workload's `timeout`.
    TimedOut,
}

impl SqlBenchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SqlBenchStatus::Ok => "ok",
            SqlBenchStatus::Skipped => "skipped",
            SqlBenchStatus::Failed => "failed",
            SqlBenchStatus::LostServer => "lost-server",
            SqlBenchStatus::TimedOut => "timed-out",
        }
    }
}

/// One test script's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlBenchTest {
    /// The test without `test-`: `connect`, `insert`, `ATIS`.
    pub name: String,
    pub status: SqlBenchStatus,
    /// Why it did not finish: its last error lines (passwords masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The script's exit status (`None`: killed by a signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Each `Time for` / `Time to` line, in output order.
    pub operations: Vec<SqlBenchOperation>,
    /// The `Total time` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<SqlBenchTime>,
    /// Wall seconds dbrig measured around the script.
    pub elapsed_s: f64,
    /// The test's output as sql-bench writes it to its result file (passwords masked).
    pub output: String,
}

/// One `Time for NAME (N): …` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlBenchOperation {
    /// `connect`, `select_big`, `drop table`.
    pub name: String,
    /// What is in the parentheses: `500`, `10:30000` (loops and rows).
    pub count: String,
    /// `Estimated time for …`: the test hit its time limit and extrapolated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    pub time: SqlBenchTime,
}

impl SqlBenchOperation {
    /// The first number of the count (the loops), as run-all-tests sums them.
    pub fn loops(&self) -> u64 {
        self.count
            .split(':')
            .next()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }
}

/// Benchmark's times: wallclock, user, system, children's user and system, CPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlBenchTime {
    pub wall_s: f64,
    pub usr_s: f64,
    pub sys_s: f64,
    pub cusr_s: f64,
    pub csys_s: f64,
    pub cpu_s: f64,
}

impl SqlBenchResult {
    /// Operations summed by name over every test (run-all-tests' "Totals per operation"):
    /// name, loops, times, and whether any part was estimated. Sorted by name.
    pub fn totals_per_operation(&self) -> Vec<(String, u64, SqlBenchTime, bool)> {
        let mut out: Vec<(String, u64, SqlBenchTime, bool)> = Vec::new();
        for op in self.tests.iter().flat_map(|t| &t.operations) {
            let i = match out.iter().position(|(n, ..)| *n == op.name) {
                Some(i) => i,
                None => {
                    out.push((op.name.clone(), 0, SqlBenchTime::default(), false));
                    out.len() - 1
                }
            };
            let e = &mut out[i];
            e.1 += op.loops();
            e.2.wall_s += op.time.wall_s;
            e.2.usr_s += op.time.usr_s;
            e.2.sys_s += op.time.sys_s;
            e.2.cusr_s += op.time.cusr_s;
            e.2.csys_s += op.time.csys_s;
            e.2.cpu_s += op.time.cpu_s;
            e.3 |= op.estimated;
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The tests that did not finish (failed, lost their server, timed out).
    pub fn unfinished(&self) -> impl Iterator<Item = &SqlBenchTest> {
        self.tests
            .iter()
            .filter(|t| !matches!(t.status, SqlBenchStatus::Ok | SqlBenchStatus::Skipped))
    }

    /// Why the trial failed although tests ran: a test lost its server, or every test failed
    /// (the suite could not run: a Perl driver missing, a login refused).
    pub fn failure(&self) -> Option<String> {
        if let Some(t) = self
            .tests
            .iter()
            .find(|t| t.status == SqlBenchStatus::LostServer)
        {
            return Some(format!(
                "sql-bench test-{} lost its server: {}",
                t.name,
                t.error.as_deref().unwrap_or("connection lost")
            ));
        }
        let first = self.tests.first()?;
        if self
            .tests
            .iter()
            .all(|t| t.status == SqlBenchStatus::Failed)
        {
            return Some(format!(
                "sql-bench could not run: {} failed, first test-{}: {}",
                match self.tests.len() {
                    1 => "its one test".to_owned(),
                    n => format!("all {n} tests"),
                },
                first.name,
                perl_error_line(first.error.as_deref().unwrap_or("no output"))
            ));
        }
        None
    }
}

/// A Perl error's first line as one line for people: `Can't locate DBI.pm in @INC (you may
/// need to install the DBI module)` without the long `(@INC contains: …)` list after it.
pub fn perl_error_line(text: &str) -> String {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match first.find(" (@INC contains:") {
        Some(i) => first[..i].to_owned(),
        None => first.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, count: &str, wall: f64) -> SqlBenchOperation {
        SqlBenchOperation {
            name: name.into(),
            count: count.into(),
            estimated: false,
            time: SqlBenchTime {
                wall_s: wall,
                cpu_s: wall / 2.0,
                ..Default::default()
            },
        }
    }

    #[test]
    fn totals_per_operation_sum_by_name_like_run_all_tests() {
        let test = |name: &str, ops| SqlBenchTest {
            name: name.into(),
            status: SqlBenchStatus::Ok,
            error: None,
            exit_code: Some(0),
            operations: ops,
            total: None,
            elapsed_s: 1.0,
            output: String::new(),
        };
        let r = SqlBenchResult {
            server: "mysql".into(),
            server_version: "10.11".into(),
            options: vec![],
            hires: true,
            tests: vec![
                test(
                    "insert",
                    vec![op("select_in", "10:100", 1.0), op("drop table", "1", 0.5)],
                ),
                test("select", vec![op("select_in", "10:1000", 2.0)]),
            ],
        };
        let t = r.totals_per_operation();
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].0.as_str(), t[0].1, t[0].2.wall_s),
            ("drop table", 1, 0.5)
        );
        assert_eq!(
            (t[1].0.as_str(), t[1].1, t[1].2.wall_s),
            ("select_in", 20, 3.0)
        );
        assert_eq!(t[1].2.cpu_s, 1.5);
        assert!(r.failure().is_none() && r.unfinished().next().is_none());
    }

    #[test]
    fn a_suite_whose_every_test_failed_fails_its_trial() {
        let test = |name: &str, status| {
            SqlBenchTest {
            name: name.into(),
            status,
            error: Some("Can't locate DBD/MariaDB.pm in @INC (you may need to install the DBD::MariaDB module) (@INC contains: /a /b) at x line 1.\nBEGIN failed".into()),
            exit_code: Some(2),
            operations: vec![],
            total: None,
            elapsed_s: 0.1,
            output: String::new(),
        }
        };
        let mut r = SqlBenchResult {
            server: "mysql".into(),
            server_version: String::new(),
            options: vec![],
            hires: true,
            tests: vec![
                test("connect", SqlBenchStatus::Failed),
                test("insert", SqlBenchStatus::Failed),
            ],
        };
        assert_eq!(
            r.failure().as_deref(),
            Some(
                "sql-bench could not run: all 2 tests failed, first test-connect: Can't locate DBD/MariaDB.pm in @INC (you may need to install the DBD::MariaDB module)"
            )
        );
        // One test that ran: the others' failures are the suite's results, not a failed trial.
        r.tests[1].status = SqlBenchStatus::Ok;
        assert!(r.failure().is_none());
        r.tests.clear();
        assert!(r.failure().is_none());
    }
}
