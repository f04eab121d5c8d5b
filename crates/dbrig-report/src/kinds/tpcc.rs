//! What a TPC-C trial shows: NOPM (HammerDB's: the change of `sum(d_next_o_id)` per minute),
//! TPM by the server's counters, and per transaction type the clients' counts and latency
//! against the specification's 90th percentile limits, the consistency check after the run;
//! the items plan tables and comparisons rank (NOPM, TPM, tpmC where keyed and thought, each
//! type's p90), a per-type latency table per workload, the charts of NOPM against clients and
//! of NOPM per interval (HammerDB's transaction counter), and BenchBase's files with its
//! `tpcc` transaction names.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use dbrig_core::results::{ResultKind, TpccResult, TpccTransaction, TrialResult};
use dbrig_core::stats::median;
use dbrig_store::{Store, TrialStatus};

use crate::blocks::{Block, item_sections};
use crate::charts::{Line, clients_chart, time_chart};
use crate::data::ReportData;
use crate::error::ReportError;
use crate::files::write_atomic;
use crate::items::Item;
use crate::kind::{KindReport, SectionBlock, ToolFiles};
use crate::table::{Align, Table};

/// New orders per minute: higher is better.
pub const NOPM: &str = "NOPM";
/// Transactions per minute: higher is better.
pub const TPM: &str = "TPM";
/// New-Orders per minute with keying and think times (the specification's): higher is better.
pub const TPMC: &str = "tpmC";

/// The console report of one TPC-C trial on `target`.
pub fn tpcc_text(r: &TpccResult, target: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "TPC-C on {target} ({}): {} warehouse(s), {} client(s){}, mix {} per deck",
        r.server_version,
        r.warehouses,
        r.clients,
        if r.home_warehouse {
            ", each on a home warehouse"
        } else {
            ", each transaction on a random warehouse"
        },
        r.mix
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("/")
    );
    let _ = writeln!(
        out,
        "  NOPM {:.0} ({} new orders in {:.1} s, from sum(d_next_o_id))",
        r.nopm, r.new_orders, r.duration_seconds
    );
    match r.tpm {
        Some(t) => {
            let _ = writeln!(out, "  TPM  {t:.0} ({})", r.tpm_source);
        }
        None => {
            let _ = writeln!(out, "  TPM  n/a ({})", r.tpm_source);
        }
    }
    let _ = writeln!(
        out,
        "  client TPM {:.0} (committed and rolled back)",
        r.client_tpm
    );
    // The specification's figure, named only where the run keyed and thought as it asks.
    if let (true, Some(t)) = (r.key_and_think, r.tpmc) {
        let _ = writeln!(
            out,
            "  tpmC {t:.2} (New-Orders completed per minute, keying and think times on), {} of the ceiling (12.86 per warehouse)",
            r.tpmc_efficiency_pct
                .map_or_else(|| "n/a".to_owned(), |e| format!("{e:.1} %"))
        );
    }
    let _ = writeln!(
        out,
        "\n  {:<13}{:>10}{:>8}{:>8}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}  p90 limit",
        "transaction",
        "committed",
        "rolled",
        "retried",
        "failed",
        "p50 ms",
        "p90 ms",
        "p95 ms",
        "p99 ms",
        "max ms"
    );
    for t in &r.transactions {
        let failed = t.failed_serialization + t.failed_deadlock + t.failed_other;
        let _ = writeln!(
            out,
            "  {:<13}{:>10}{:>8}{:>8}{:>8}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}  {} s {}",
            t.name,
            t.committed,
            t.rolled_back,
            t.retried,
            failed,
            t.p50_ms,
            t.p90_ms,
            t.p95_ms,
            t.p99_ms,
            t.max_ms,
            t.p90_limit_s,
            match (t.finished(), t.within_limit()) {
                (0, _) => "(none ran)",
                (_, true) => "met",
                (_, false) => "MISSED",
            }
        );
        if failed > 0 {
            let _ = writeln!(
                out,
                "  {:<13}failed by class: {} serialization, {} deadlock, {} other",
                "", t.failed_serialization, t.failed_deadlock, t.failed_other
            );
        }
    }
    match &r.consistency {
        Some(c) if c.failures.is_empty() => {
            let _ = writeln!(
                out,
                "\n  consistency after the run: conditions {} hold",
                c.checked
                    .iter()
                    .map(u8::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Some(c) => {
            for f in &c.failures {
                let _ = writeln!(
                    out,
                    "\n  consistency after the run: condition {} ({}) FAILS, first at ({})",
                    f.condition,
                    f.what,
                    f.row.join(", ")
                );
            }
        }
        None => {
            let _ = writeln!(out, "\n  consistency after the run: not checked");
        }
    }
    for n in &r.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    out
}

/// NOPM, TPM (the server's, else the clients'), and each transaction type's p90 in ms.
pub fn tpcc_items(r: &TpccResult) -> Vec<Item> {
    let mut out = vec![
        Item::new("NOPM", NOPM, Some(r.nopm)),
        Item::new("TPM", TPM, Some(r.tpm.unwrap_or(r.client_tpm))),
    ];
    if let (true, Some(t)) = (r.key_and_think, r.tpmc) {
        out.push(Item::new("tpmC", TPMC, Some(t)));
    }
    for t in &r.transactions {
        out.push(Item::new(
            format!("{} p90", t.name),
            "ms",
            (t.finished() > 0).then_some(t.p90_ms),
        ));
    }
    out
}

/// BenchBase's name of each transaction type (its `tpcc` procedures' class names, as its
/// per-type files `NAME.results.<TxName>.csv` are named), in dbrig's order.
pub const BENCHBASE_NAMES: [(&str, &str); 5] = [
    ("new_order", "NewOrder"),
    ("payment", "Payment"),
    ("order_status", "OrderStatus"),
    ("delivery", "Delivery"),
    ("stock_level", "StockLevel"),
];

/// The TPC-C results of a workload's done trials, per stored cell in plan order.
fn results_of<'a>(
    data: &'a ReportData,
    workload: &str,
) -> Vec<(&'a crate::data::StoredCell, Vec<&'a TpccResult>)> {
    data.stored_cells(workload)
        .into_iter()
        .filter(|c| c.kind == ResultKind::Tpcc)
        .map(|c| {
            let rs = c
                .done_results()
                .filter_map(|r| match r {
                    TrialResult::Tpcc(t) => Some(t),
                    _ => None,
                })
                .collect();
            (c, rs)
        })
        .collect()
}

/// Per configuration and client count, each transaction type's latency percentiles: the
/// median over the cell's done trials, with the specification's 90th percentile limit.
pub fn latency_table(data: &ReportData, workload: &str) -> Table {
    let mut rows = Vec::new();
    for (cell, results) in results_of(data, workload) {
        let names: Vec<&str> = results
            .iter()
            .flat_map(|r| r.transactions.iter().map(|t| t.name.as_str()))
            .fold(Vec::new(), |mut acc, n| {
                if !acc.contains(&n) {
                    acc.push(n);
                }
                acc
            });
        for name in names {
            let of: Vec<&TpccTransaction> = results
                .iter()
                .filter_map(|r| r.transactions.iter().find(|t| t.name == name))
                .filter(|t| t.finished() > 0)
                .collect();
            let med = |f: fn(&TpccTransaction) -> f64| {
                median(&of.iter().map(|t| f(t)).collect::<Vec<_>>())
            };
            let ms = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"));
            let limit = results
                .iter()
                .flat_map(|r| r.transactions.iter())
                .find(|t| t.name == name)
                .map_or(0.0, |t| t.p90_limit_s);
            let p90 = med(|t| t.p90_ms);
            rows.push(vec![
                cell.configuration.clone(),
                cell.clients.to_string(),
                name.to_owned(),
                med(|t| t.finished() as f64).map_or_else(|| "0".to_owned(), |v| format!("{v:.0}")),
                ms(med(|t| t.p50_ms)),
                ms(p90),
                ms(med(|t| t.p95_ms)),
                ms(med(|t| t.p99_ms)),
                ms(med(|t| t.max_ms)),
                format!("{limit} s"),
                match p90 {
                    None => "(none ran)".to_owned(),
                    Some(p) if p <= limit * 1000.0 => "met".to_owned(),
                    Some(_) => "MISSED".to_owned(),
                },
            ]);
        }
    }
    let header = [
        "configuration",
        "clients",
        "transaction",
        "finished",
        "p50 ms",
        "p90 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "p90 limit",
        "p90",
    ];
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    align[2] = Align::Left;
    Table {
        title: format!("{workload}: latency per transaction type (median over trials)"),
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        align,
        rows,
        notes: vec![
            "finished: committed and rolled back; the limits are clause 5.2.5.4's (Delivery's is its deferred part's, which dbrig runs inline)".to_owned(),
        ],
    }
}

/// NOPM per interval of each configuration's median trial (by NOPM) at its largest client
/// count: HammerDB's transaction counter's line. `None` without intervals.
fn nopm_timeline(data: &ReportData, workload: &str) -> Result<Option<String>, ReportError> {
    let key = format!("{workload} NOPM");
    let clients = data.clients_of(&key);
    // (label, colour, points) per configuration.
    type Series = (String, usize, Vec<(f64, f64)>);
    let mut series: Vec<Series> = Vec::new();
    for (i, conf) in data.configurations.iter().enumerate() {
        let Some(cell) = clients
            .iter()
            .rev()
            .find_map(|&n| data.cell(conf, &key, n).filter(|c| c.summary.is_some()))
        else {
            continue;
        };
        let Some(trial) = cell.typical_trial(data.metric) else {
            continue;
        };
        let Some(TrialResult::Tpcc(r)) = trial.result.as_deref() else {
            continue;
        };
        if r.intervals.is_empty() {
            continue;
        }
        series.push((
            format!("{conf} ({} clients, trial {})", cell.clients, trial.trial),
            i,
            r.intervals.iter().map(|x| (x.t_s, x.nopm)).collect(),
        ));
    }
    if series.is_empty() {
        return Ok(None);
    }
    let lines: Vec<Line<'_>> = series
        .iter()
        .map(|(label, colour, points)| Line {
            label,
            colour: *colour,
            points: points.clone(),
        })
        .collect();
    time_chart(
        &format!("NOPM timeline {workload}"),
        format!("{workload}: NOPM per interval"),
        "NOPM (new orders per minute)",
        &lines,
    )
    .map(Some)
}

/// BenchBase's files of every done TPC-C trial: its summary and results CSV (as OLTP's, with
/// `Benchmark Type` `tpcc`), and per transaction type `NAME.results.<TxName>.csv` in the
/// same columns. dbrig keeps each type's latency over the whole trial, not per window: each
/// type's file is one row over the measured interval (its throughput, median, 90th, 95th,
/// 99th percentile and maximum; BenchBase's other columns left empty).
fn write_benchbase(
    store: &Store,
    data: &ReportData,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for cell in data.stored.iter().filter(|c| c.kind == ResultKind::Tpcc) {
        for t in &cell.trials {
            let Some(TrialResult::Tpcc(r)) = t.result.as_deref() else {
                continue;
            };
            if t.status != TrialStatus::Done {
                continue;
            }
            let Some((name, written)) = super::benchbase::write_trial(store, cell, t, "tpcc", dir)?
            else {
                continue;
            };
            files.extend(written);
            for tx in &r.transactions {
                let Some((_, bb)) = BENCHBASE_NAMES.iter().find(|(n, _)| *n == tx.name) else {
                    continue;
                };
                let mut row = vec![String::new(); super::benchbase::RESULTS_HEADER.len()];
                row[0] = "0".to_owned();
                let per_s = match r.duration_seconds > 0.0 {
                    true => tx.finished() as f64 / r.duration_seconds,
                    false => 0.0,
                };
                row[1] = format!("{per_s:.3}");
                if tx.finished() > 0 {
                    for (col, v) in [
                        (5, tx.p50_ms),
                        (7, tx.p90_ms),
                        (8, tx.p95_ms),
                        (9, tx.p99_ms),
                        (10, tx.max_ms),
                    ] {
                        row[col] = format!("{v:.3}");
                    }
                }
                let csv = format!(
                    "{}\n{}\n",
                    super::benchbase::RESULTS_HEADER.join(","),
                    row.join(",")
                );
                let path = dir.join(format!("{name}.results.{bb}.csv"));
                write_atomic(&path, csv.as_bytes())?;
                files.push(path);
            }
        }
    }
    Ok(files)
}

/// TPC-C's report: the console text above for a single run, its items in a plan's section.
pub struct Tpcc;

impl KindReport for Tpcc {
    fn kind(&self) -> ResultKind {
        ResultKind::Tpcc
    }

    fn title(&self) -> &'static str {
        "TPC-C"
    }

    fn higher_units(&self) -> &'static [&'static str] {
        &[NOPM, TPM, TPMC]
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::Tpcc(r) => tpcc_items(r),
            _ => Vec::new(),
        }
    }

    fn trial_text(&self, result: &TrialResult, target: &str) -> Option<String> {
        match result {
            TrialResult::Tpcc(r) => Some(tpcc_text(r, target)),
            _ => None,
        }
    }

    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        let mut out = Vec::new();
        for (w, block) in item_sections(
            data,
            workloads,
            "median over trials: NOPM, TPM, and each transaction type's p90 latency",
        ) {
            out.push((w.clone(), block));
            if let Some(w) = w {
                let t = latency_table(data, &w);
                if !t.rows.is_empty() {
                    out.push((Some(w), Block::Table(t)));
                }
            }
        }
        Ok(out)
    }

    /// NOPM against clients, and NOPM per interval.
    fn charts(
        &self,
        _store: &Store,
        data: &ReportData,
        workload: &str,
    ) -> Result<Vec<(&'static str, String)>, ReportError> {
        let mut out = Vec::new();
        out.extend(
            clients_chart(
                data,
                &format!("{workload} NOPM"),
                &format!("{workload}: NOPM vs clients"),
                "NOPM (median; bars: 95 % CI or min-max)",
            )?
            .map(|s| ("nopm", s)),
        );
        out.extend(nopm_timeline(data, workload)?.map(|s| ("nopm_timeline", s)));
        Ok(out)
    }

    fn tool_files(
        &self,
        tool: ToolFiles,
        store: &Store,
        data: &ReportData,
        dir: &Path,
    ) -> Option<Result<Vec<PathBuf>, ReportError>> {
        (tool == ToolFiles::Benchbase).then(|| write_benchbase(store, data, dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::{TpccCheckFailure, TpccConsistency, TpccTransaction};

    fn result() -> TpccResult {
        TpccResult {
            warehouses: 2,
            clients: 4,
            server_version: "11.4".into(),
            duration_seconds: 60.0,
            new_orders: 1200,
            nopm: 1200.0,
            tpm: Some(2700.0),
            tpm_source: "the server's Com_commit + Com_rollback".into(),
            client_tpm: 2650.0,
            mix: vec![10, 10, 1, 1, 1],
            home_warehouse: true,
            transactions: vec![
                TpccTransaction {
                    name: "new_order".into(),
                    committed: 1188,
                    rolled_back: 12,
                    p90_ms: 12.5,
                    p90_limit_s: 5.0,
                    ..Default::default()
                },
                TpccTransaction {
                    name: "stock_level".into(),
                    p90_limit_s: 20.0,
                    ..Default::default()
                },
            ],
            consistency: Some(TpccConsistency {
                checked: vec![1, 2],
                failures: vec![TpccCheckFailure {
                    condition: 2,
                    what: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district".into(),
                    row: vec!["1".into(), "3".into()],
                }],
            }),
            notes: vec!["no keying".into()],
            ..Default::default()
        }
    }

    #[test]
    fn the_report_shows_nopm_tpm_the_types_and_the_check() {
        let t = tpcc_text(&result(), "mysql://h/db");
        for want in [
            "NOPM 1200 (1200 new orders in 60.0 s",
            "TPM  2700 (the server's Com_commit + Com_rollback)",
            "new_order",
            "5 s met",
            "(none ran)",
            "condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district) FAILS, first at (1, 3)",
            "note: no keying",
        ] {
            assert!(t.contains(want), "{want}:\n{t}");
        }
    }

    #[test]
    fn tpmc_only_with_keying_and_thinking() {
        let off = result();
        assert!(!tpcc_text(&off, "t").contains("tpmC"));
        assert!(tpcc_items(&off).iter().all(|i| i.unit != TPMC));
        let on = TpccResult {
            key_and_think: true,
            tpmc: Some(12.0),
            tpmc_efficiency_pct: Some(93.3),
            ..result()
        };
        let t = tpcc_text(&on, "t");
        assert!(
            t.contains("tpmC 12.00 (New-Orders completed per minute, keying and think times on), 93.3 % of the ceiling"),
            "{t}"
        );
        let items = tpcc_items(&on);
        assert_eq!(items[2].value, Some(12.0));
        assert_eq!(items[2].unit, TPMC);
        assert!(crate::kinds::higher_is_better(TPMC));
    }

    /// A stored TPC-C trial: its per-type latency table, its two charts (NOPM against
    /// clients, NOPM per interval), and BenchBase's files under its tpcc names.
    #[test]
    fn a_stored_trial_gets_its_latency_table_charts_and_benchbase_files() {
        use dbrig_core::results::TpccInterval;
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let r = TpccResult {
            intervals: vec![
                TpccInterval {
                    t_s: 1.0,
                    nopm: 1100.0,
                    tpm: None,
                },
                TpccInterval {
                    t_s: 2.0,
                    nopm: 1300.0,
                    tpm: None,
                },
            ],
            ..result()
        };
        let run = crate::fixture::one_measured_run(
            &mut store,
            dbrig_store::RunKind::Plan,
            "tpcc",
            &TrialResult::Tpcc(r),
            &crate::fixture::measurements(4, 4000.0, 2.0, 5, 0.03),
        )
        .unwrap();
        let data = crate::ReportData::load(&store, run).unwrap();
        let t = latency_table(&data, "tpcc");
        assert_eq!(t.rows.len(), 2, "{t:?}");
        assert_eq!(t.rows[0][2..6], ["new_order", "1200", "0.00", "12.50"]);
        assert_eq!(t.rows[0][9..], ["5 s", "met"]);
        assert_eq!(t.rows[1][2..4], ["stock_level", "0"]);
        assert_eq!(t.rows[1][10], "(none ran)");

        let charts = Tpcc.charts(&store, &data, "tpcc").unwrap();
        let names: Vec<&str> = charts.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["nopm", "nopm_timeline"]);
        assert!(charts[1].1.contains("tpcc: NOPM per interval"));

        let dir = tempfile::tempdir().unwrap();
        let files = write_benchbase(&store, &data, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.ends_with(".summary.json")),
            "{names:?}"
        );
        for bb in ["NewOrder", "StockLevel"] {
            assert!(
                names
                    .iter()
                    .any(|n| n.ends_with(&format!(".results.{bb}.csv"))),
                "{bb}: {names:?}"
            );
        }
        let new_order = files
            .iter()
            .find(|f| f.to_string_lossy().ends_with(".results.NewOrder.csv"))
            .unwrap();
        let csv = std::fs::read_to_string(new_order).unwrap();
        // 1 200 New-Orders in 60 s: 20 a second; its p90 in the 90th percentile column.
        assert_eq!(
            csv.lines().nth(1).unwrap(),
            "0,20.000,,,,0.000,,12.500,0.000,0.000,0.000,"
        );
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                files
                    .iter()
                    .find(|f| f.to_string_lossy().ends_with(".summary.json"))
                    .unwrap(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(summary["Benchmark Type"], "tpcc");
    }

    #[test]
    fn items_rank_nopm_and_tpm_higher_and_latency_lower() {
        let items = tpcc_items(&result());
        assert_eq!(items[0].value, Some(1200.0));
        assert_eq!(items[1].value, Some(2700.0));
        assert!(crate::kinds::higher_is_better(NOPM) && crate::kinds::higher_is_better(TPM));
        assert!(!crate::kinds::higher_is_better("ms"));
        // A type that never ran has no value, never a fast zero.
        assert_eq!(items.last().unwrap().value, None);
    }
}
