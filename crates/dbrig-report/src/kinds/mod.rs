//! One module per kind of stored result, each implementing [`crate::kind::KindReport`], and the
//! registry that finds a kind's report ([`of`]: the one match a new kind joins). The modules'
//! helpers live beside them: `tpch.rs` (what the power and throughput tests share),
//! `pgbench.rs` (a script run's pgbench lines, OLTP's), `benchbase.rs` (OLTP's BenchBase files).

use std::path::{Path, PathBuf};

use dbrig_core::results::{ResultKind, TrialResult};
use dbrig_store::Store;

use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::Item;
use crate::kind::{KindReport, ToolFiles};

pub mod benchbase;
pub mod load;
pub mod micro;
pub mod oltp;
pub mod perfrun;
pub mod pgbench;
pub mod sqlbench;
pub mod tpcc;
pub mod tpch;
pub mod tpch_power;
pub mod tpch_throughput;

/// The report of each kind of stored result.
pub fn of(kind: ResultKind) -> &'static dyn KindReport {
    match kind {
        ResultKind::Oltp => &oltp::Oltp,
        ResultKind::Micro => &micro::Micro,
        ResultKind::TpchPower => &tpch_power::TpchPower,
        ResultKind::TpchThroughput => &tpch_throughput::TpchThroughput,
        ResultKind::Perfrun => &perfrun::PerfrunKind,
        ResultKind::SqlBench => &sqlbench::SqlBench,
        ResultKind::Load => &load::Load,
        ResultKind::Tpcc => &tpcc::Tpcc,
    }
}

/// Every kind's report, in [`ResultKind::ALL`]'s order.
pub fn all() -> impl Iterator<Item = &'static dyn KindReport> {
    ResultKind::ALL.into_iter().map(of)
}

/// The items of one trial's result, by its kind's report (empty for OLTP).
pub fn items(result: &TrialResult) -> Vec<Item> {
    of(result.kind()).items(result)
}

/// What assembling a report needs of the kinds (`ReportData::load_with`): their items, their
/// sections' titles and their units that grow with speed.
pub const FACTS: crate::data::KindFacts = crate::data::KindFacts {
    items,
    title: |kind| of(kind).title(),
    grows_with_speed: |unit| all().any(|k| k.higher_units().contains(&unit)),
};

/// Whether more of `unit` is better: rates and scores (`data::rate_or_score`), and the
/// kinds' own units that grow with speed (NOPM, TPM).
pub fn higher_is_better(unit: &str) -> bool {
    crate::data::rate_or_score(unit) || (FACTS.grows_with_speed)(unit)
}

/// Every chart of one workload that has data, named for file names: its kind's own (an OLTP
/// workload's throughput and latency against clients and its timeline, a power test's bar
/// chart), then the OS statistics of every kind but perfrun.
pub fn workload_charts(
    store: &Store,
    data: &ReportData,
    kind: ResultKind,
    workload: &str,
) -> Result<Vec<(&'static str, String)>, ReportError> {
    let report = of(kind);
    let mut out = report.charts(store, data, workload)?;
    if report.os_chart() {
        out.extend(
            crate::charts::workload_os_chart(store, data, kind, workload)?.map(|s| ("os", s)),
        );
    }
    Ok(out)
}

/// The results in another tool's layout, written into `dir` by the kind that has it.
pub fn tool_files(
    tool: ToolFiles,
    store: &Store,
    data: &ReportData,
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    // Every kind that has the tool's layout writes its own cells' files (BenchBase: OLTP's
    // and TPC-C's).
    let mut files = Vec::new();
    for k in all() {
        if let Some(written) = k.tool_files(tool, store, data, dir) {
            files.extend(written?);
        }
    }
    Ok(files)
}

/// A power test's live view while it runs: its table and bar chart so far (the HTML page's
/// live section, the console's chart).
pub use tpch::{live_power_chart, live_power_table};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stored kind of result has a registered report that says it is that kind's.
    #[test]
    fn every_result_kind_has_a_registered_report() {
        for kind in ResultKind::ALL {
            // Exhaustive on purpose: a new kind must be added here and to `of`.
            let _: () = match kind {
                ResultKind::Oltp
                | ResultKind::Micro
                | ResultKind::TpchPower
                | ResultKind::TpchThroughput
                | ResultKind::Perfrun
                | ResultKind::SqlBench
                | ResultKind::Load
                | ResultKind::Tpcc => (),
            };
            assert_eq!(of(kind).kind(), kind);
            assert!(!(FACTS.title)(kind).is_empty());
        }
        assert_eq!((FACTS.title)(ResultKind::Tpcc), "TPC-C");
    }

    #[test]
    fn rates_scores_and_the_kinds_own_growing_units_are_higher_is_better() {
        assert!(higher_is_better("MB/s") && higher_is_better("QPS"));
        assert!(higher_is_better("NOPM") && higher_is_better("TPM"));
        assert!(!higher_is_better("s") && !higher_is_better("µs/txn") && !higher_is_better("MB"));
    }
}
