//! What a TPC-C trial shows: NOPM (HammerDB's: the change of `sum(d_next_o_id)` per minute),
//! TPM by the server's counters, and per transaction type the clients' counts and latency
//! against the specification's 90th percentile limits, the consistency check after the run;
//! and the items plan tables and comparisons rank (NOPM, TPM, each type's p90).

use std::fmt::Write;

use dbrig_core::results::{ResultKind, TpccResult, TrialResult};
use dbrig_store::{CellRow, Store, TrialRow};

use crate::blocks::item_sections;
use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::Item;
use crate::kind::{KindReport, SectionBlock};

/// New orders per minute: higher is better.
pub const NOPM: &str = "NOPM";
/// Transactions per minute: higher is better.
pub const TPM: &str = "TPM";

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
    for t in &r.transactions {
        out.push(Item::new(
            format!("{} p90", t.name),
            "ms",
            (t.finished() > 0).then_some(t.p90_ms),
        ));
    }
    out
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
        &[NOPM, TPM]
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::Tpcc(r) => tpcc_items(r),
            _ => Vec::new(),
        }
    }

    fn single_text(
        &self,
        _store: &Store,
        cell: &CellRow,
        trial: &TrialRow,
        connects: &str,
    ) -> Result<Option<String>, ReportError> {
        Ok(match trial.result.as_ref() {
            Some(TrialResult::Tpcc(r)) => Some(tpcc_text(r, &cell.target) + connects),
            _ => None,
        })
    }

    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        Ok(item_sections(
            data,
            workloads,
            "median over trials: NOPM, TPM, and each transaction type's p90 latency",
        ))
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
    fn items_rank_nopm_and_tpm_higher_and_latency_lower() {
        let items = tpcc_items(&result());
        assert_eq!(items[0].value, Some(1200.0));
        assert_eq!(items[1].value, Some(2700.0));
        assert!(crate::data::higher_is_better(NOPM) && crate::data::higher_is_better(TPM));
        assert!(!crate::data::higher_is_better("ms"));
        // A type that never ran has no value, never a fast zero.
        assert_eq!(items.last().unwrap().value, None);
    }
}
