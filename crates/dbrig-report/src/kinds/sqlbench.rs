//! sql-bench's results: the items every plan table and comparison ranks (each test's total,
//! the run's `TOTALS`, and run-all-tests' "Totals per operation", seconds, lower is better),
//! and `--format sql-bench`, which writes the trials in sql-bench's own layout for people who
//! keep old comparisons: `DIR/HOST/YYYY-MM-DD/` holding each test's output file
//! (`TEST-SERVER-MACHINE_SUFFIX`, the suffix naming the configuration and trial) and a
//! `RUN-SERVER-MACHINE_SUFFIX` summary as run-all-tests writes it.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use dbrig_core::results::{ResultKind, SqlBenchResult, SqlBenchStatus, TrialResult};
use dbrig_store::{CellRow, Store, TrialRow, TrialStatus};

use crate::data::ReportData;
use crate::error::ReportError;
use crate::files::{file_stem, write_atomic};
use crate::items::{Item, SECONDS};
use crate::kind::{KindReport, ToolFiles};

/// The key of a test's item.
pub fn test_item(name: &str) -> String {
    format!("test-{name}")
}

/// Items (name, seconds): each test's `Total time` (none when it did not finish: never counted
/// as fast), `TOTALS` (none when any test did not finish), then the operations of the
/// finished tests summed by name.
pub fn items(r: &SqlBenchResult) -> Vec<(String, Option<f64>)> {
    let mut out: Vec<(String, Option<f64>)> = r
        .tests
        .iter()
        .map(|t| {
            let v = t
                .total
                .filter(|_| t.status == SqlBenchStatus::Ok)
                .map(|x| x.wall_s);
            (test_item(&t.name), v)
        })
        .collect();
    let totals = r
        .tests
        .iter()
        .filter(|t| t.status != SqlBenchStatus::Skipped)
        .map(|t| t.total.filter(|_| t.status == SqlBenchStatus::Ok))
        .collect::<Option<Vec<_>>>()
        .map(|v| v.iter().map(|x| x.wall_s).sum());
    out.push(("TOTALS".to_owned(), totals));
    let finished = SqlBenchResult {
        tests: r
            .tests
            .iter()
            .filter(|t| t.status == SqlBenchStatus::Ok)
            .cloned()
            .collect(),
        ..r.clone()
    };
    for (name, _, time, _) in finished.totals_per_operation() {
        out.push((name, Some(time.wall_s)));
    }
    out
}

/// run-all-tests' summary of one run (its `RUN-…` file).
pub fn run_file(r: &SqlBenchResult, date: &str, machine: &str, comments: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Benchmark DBD suite: 2.15");
    let _ = writeln!(s, "Date of test:        {date}");
    let _ = writeln!(s, "Running tests on:    {machine}");
    let _ = writeln!(s, "Arguments:           {}", r.options.join(" "));
    let _ = writeln!(s, "Comments:            {comments}");
    let _ = writeln!(s, "Limits from:         {}", r.server.to_lowercase());
    let _ = writeln!(s, "Server version:      {}", r.server_version);
    let _ = writeln!(s, "Optimization:        None");
    let _ = writeln!(s, "Hardware:            \n");
    let mut errors = 0;
    for t in &r.tests {
        let line = match (t.status, t.total) {
            (SqlBenchStatus::Ok, Some(x)) => format!(
                "Total time: {} wallclock secs ({:5.2} usr {:5.2} sys + {:5.2} cusr {:5.2} csys = {:5.2} CPU)",
                secs(x.wall_s, r.hires),
                x.usr_s,
                x.sys_s,
                x.cusr_s,
                x.csys_s,
                x.cpu_s
            ),
            (SqlBenchStatus::Skipped, _) => t.error.clone().unwrap_or_default(),
            _ => {
                errors += 1;
                format!(
                    "Failed ({}: {})",
                    t.status.as_str(),
                    t.error.as_deref().unwrap_or("")
                )
            }
        };
        let _ = writeln!(s, "{}: {line}", t.name);
    }
    let _ = writeln!(s);
    if errors == 0 {
        let _ = writeln!(s, "All {} test executed successfully", r.tests.len());
    } else {
        let _ = writeln!(s, "Of {} tests, {errors} tests didn't work", r.tests.len());
    }
    let ops = r.totals_per_operation();
    if ops.iter().any(|o| o.3) {
        let _ = writeln!(s, "Tests with estimated time have a + at end of line");
    }
    if !ops.is_empty() {
        let _ = writeln!(s, "\nTotals per operation:");
        let _ = writeln!(
            s,
            "Operation             seconds     usr     sys     cpu   tests"
        );
        let mut total = [0.0f64; 4];
        let mut loops = 0u64;
        let mut marks = String::new();
        for (name, n, t, estimated) in &ops {
            let mark = if *estimated { "+" } else { "" };
            let _ = writeln!(
                s,
                "{:<35.35} {:7.2} {:7.2} {:7.2} {:7.2} {:7} {mark}",
                name, t.wall_s, t.usr_s, t.sys_s, t.cpu_s, n
            );
            total[0] += t.wall_s;
            total[1] += t.usr_s;
            total[2] += t.sys_s;
            total[3] += t.cpu_s;
            loops += n;
            marks.push_str(mark);
        }
        let _ = writeln!(
            s,
            "{:<35.35} {:7.2} {:7.2} {:7.2} {:7.2} {:7} {marks}",
            "TOTALS", total[0], total[1], total[2], total[3], loops
        );
    }
    s
}

fn secs(v: f64, hires: bool) -> String {
    if hires {
        format!("{v}")
    } else {
        format!("{v:2.0}")
    }
}

/// run-all-tests' machine part of a file name: `Linux_6.1.0_x86_64` (uname's system,
/// release and machine, blanks, `-` and `/` made `_`).
fn machine_part(host: &serde_json::Value) -> String {
    let uname = |k: &str| {
        host.get("kernel")
            .and_then(|v| v.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("")
    };
    let machine = format!(
        "{} {} {}",
        uname("sysname"),
        uname("release"),
        uname("machine")
    );
    machine
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
        .replace(['-', '/'], "_")
}

/// Writes every `done` (or failed) sql-bench trial of the report in sql-bench's layout under
/// `dir`; the files written (none for a report without sql-bench trials).
pub fn write_sql_bench(data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for cell in data
        .stored
        .iter()
        .filter(|c| c.kind == ResultKind::SqlBench)
    {
        let Some(run) = data.runs.iter().find(|r| r.id == cell.run_id) else {
            continue;
        };
        let host = run
            .host
            .get("hostname")
            .and_then(|v| v.as_str())
            .unwrap_or("localhost");
        let machine = machine_part(&run.host);
        for t in &cell.trials {
            if !matches!(t.status, TrialStatus::Done | TrialStatus::Failed) {
                continue;
            }
            let Some(TrialResult::SqlBench(r)) = t.result.as_deref() else {
                continue;
            };
            let date = t.started_at.get(..10).unwrap_or("unknown-date");
            let folder = dir.join(file_stem(host)).join(date);
            std::fs::create_dir_all(&folder).map_err(|source| ReportError::Write {
                path: folder.clone(),
                source,
            })?;
            // sql-bench's --suffix: what tells runs of one day apart.
            let suffix = format!(
                "_{}_{}_t{}",
                file_stem(&cell.configuration),
                file_stem(&cell.workload),
                t.trial
            );
            let name = |prefix: &str| format!("{prefix}-{}-{machine}{suffix}", r.server);
            for test in &r.tests {
                let path = folder.join(name(&test.name));
                write_atomic(&path, test.output.as_bytes())?;
                files.push(path);
            }
            let date_time = t.started_at.replace('T', " ");
            let comments = format!(
                "dbrig run {}, configuration {}, trial {}",
                cell.run_id, cell.configuration, t.trial
            );
            let path = folder.join(name("RUN"));
            let text = run_file(
                r,
                date_time.get(..19).unwrap_or(&date_time),
                &machine,
                &comments,
            );
            write_atomic(&path, text.as_bytes())?;
            files.push(path);
        }
    }
    // Like `--format benchbase` on a run without OLTP trials: nothing to write is no error.
    Ok(files)
}

/// sql-bench's report: an item per test, its TOTALS and one per operation, in seconds.
pub struct SqlBench;

impl KindReport for SqlBench {
    fn kind(&self) -> ResultKind {
        ResultKind::SqlBench
    }

    fn title(&self) -> &'static str {
        "sql-bench"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::SqlBench(r) => items(r)
                .into_iter()
                .map(|(name, v)| Item::new(name, SECONDS, v))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn single_text(
        &self,
        _store: &Store,
        cell: &CellRow,
        trial: &TrialRow,
        _connects: &str,
    ) -> Result<Option<String>, ReportError> {
        Ok(match trial.result.as_ref() {
            Some(TrialResult::SqlBench(r)) => {
                Some(run_file(r, &trial.started_at, &cell.target, ""))
            }
            _ => None,
        })
    }

    fn items_title(&self) -> &'static str {
        "median seconds over trials: each test's Total time, TOTALS, and run-all-tests' totals per operation"
    }

    fn tool_files(
        &self,
        tool: ToolFiles,
        _store: &Store,
        data: &ReportData,
        dir: &Path,
    ) -> Option<Result<Vec<PathBuf>, ReportError>> {
        (tool == ToolFiles::SqlBench).then(|| write_sql_bench(data, dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::{SqlBenchOperation, SqlBenchTest, SqlBenchTime};

    fn time(wall: f64) -> SqlBenchTime {
        SqlBenchTime {
            wall_s: wall,
            usr_s: 0.25,
            cpu_s: 0.5,
            ..Default::default()
        }
    }

    fn result() -> SqlBenchResult {
        let op = |name: &str, count: &str, wall: f64| SqlBenchOperation {
            name: name.into(),
            count: count.into(),
            estimated: false,
            time: time(wall),
        };
        let test =
            |name: &str, status, ops: Vec<SqlBenchOperation>, total: Option<f64>| SqlBenchTest {
                name: name.into(),
                status,
                error: (status != SqlBenchStatus::Ok).then(|| "Lost connection".to_owned()),
                exit_code: Some(0),
                operations: ops,
                total: total.map(time),
                elapsed_s: 1.0,
                output: String::new(),
            };
        SqlBenchResult {
            server: "mysql".into(),
            server_version: "10.11.19-MariaDB".into(),
            options: vec!["--small-test".into()],
            hires: true,
            tests: vec![
                test(
                    "connect",
                    SqlBenchStatus::Ok,
                    vec![op("connect", "500", 1.5), op("select_1_row", "5000", 0.5)],
                    Some(2.0),
                ),
                test(
                    "insert",
                    SqlBenchStatus::LostServer,
                    vec![op("insert", "3000", 4.0)],
                    None,
                ),
            ],
        }
    }

    /// A test that did not finish has no time (never counted as fast), makes TOTALS unknown,
    /// and its partial operations are left out of the per-operation sums.
    #[test]
    fn items_of_a_run_with_a_lost_server() {
        let items = items(&result());
        assert_eq!(
            items,
            [
                ("test-connect".to_owned(), Some(2.0)),
                ("test-insert".to_owned(), None),
                ("TOTALS".to_owned(), None),
                ("connect".to_owned(), Some(1.5)),
                ("select_1_row".to_owned(), Some(0.5)),
            ]
        );
    }

    /// sql-bench's scripts send their statements through Perl's DBI: a report does not say
    /// they used dbrig's (default, prepared) protocol.
    #[test]
    fn a_sql_bench_run_is_not_labelled_with_a_protocol() {
        use dbrig_core::results::{AddressFamily, ConnectionFacts, Protocol, TrialEnvironment};
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let env = TrialEnvironment {
            connection: Some(ConnectionFacts {
                address_family: AddressFamily::Tcp,
                protocol: Protocol::Prepared,
                reconnect_every: 0,
                connect_rate: 0.0,
                idle_clients: 0,
                connect_latency: None,
            }),
            ..TrialEnvironment::default()
        };
        let run = crate::fixture::one_trial_run(
            &mut store,
            dbrig_store::RunKind::Plan,
            "sql_bench",
            &TrialResult::SqlBench(result()),
            &env,
        )
        .unwrap();
        let data = crate::ReportData::load(&store, run).unwrap();
        let text = crate::report_text(&data).unwrap();
        assert!(
            text.contains("connection of default: TCP, statements sent by sql-bench's Perl DBI"),
            "{text}"
        );
        assert!(!text.contains("prepared protocol"), "{text}");
    }

    #[test]
    fn run_file_in_run_all_tests_layout() {
        let text = run_file(&result(), "2026-11-26 12:00:00", "Linux_6.1_x86_64", "c");
        assert!(
            text.contains("Server version:      10.11.19-MariaDB"),
            "{text}"
        );
        assert!(
            text.contains("connect: Total time: 2 wallclock secs"),
            "{text}"
        );
        assert!(
            text.contains("insert: Failed (lost-server: Lost connection)"),
            "{text}"
        );
        assert!(text.contains("Of 2 tests, 1 tests didn't work"), "{text}");
        assert!(text.contains("Totals per operation:"), "{text}");
        let totals = text.lines().last().unwrap();
        assert!(
            totals.starts_with("TOTALS") && totals.contains("6.00"),
            "{totals}"
        );
    }
}
