//! The TPC-H throughput test's report: an item per query over the streams, Ts and
//! Throughput@Size, QphH@Size beside a power test on the same data (`tpch.rs`), the command's
//! console output.

use dbrig_core::results::{ResultKind, ThroughputReport, TrialResult};

use super::tpch::{qphh_table, scale_factor_note, throughput_text};
use crate::blocks::{Block, item_table};
use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::{Item, SECONDS, query_order, step_label};
use crate::kind::{KindReport, SectionBlock};

/// The throughput test's report.
pub struct TpchThroughput;

/// Each query's mean seconds over the streams (none when a stream's run of it failed), the
/// refresh functions likewise, the measurement interval Ts and Throughput@Size.
fn throughput_items(t: &ThroughputReport) -> Vec<Item> {
    let mut runs: Vec<(String, Vec<Item>)> = Vec::new();
    let mut add = |i: Item| match runs.iter_mut().find(|(n, _)| *n == i.name) {
        Some((_, v)) => v.push(i),
        None => runs.push((i.name.clone(), vec![i])),
    };
    for q in t.query_streams.iter().flat_map(|s| &s.queries) {
        add(Item::step(step_label(&q.name), q.status, q.time_us));
    }
    for p in t.refresh_stream.iter().flat_map(|r| &r.pairs) {
        for q in std::iter::once(&p.rf1).chain(p.rf2.iter()) {
            add(Item::step(q.name.to_uppercase(), q.status, q.time_us));
        }
    }
    runs.sort_by_key(|(n, _)| query_order(n));
    let mut out: Vec<Item> = runs
        .into_iter()
        .map(|(name, v)| {
            let mean = v
                .iter()
                .map(|i| i.value)
                .collect::<Option<Vec<f64>>>()
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().sum::<f64>() / v.len() as f64);
            // A stream's run without a value leaves the mean without one, and says why.
            Item {
                missing: v.iter().find_map(|i| i.missing.clone()),
                ..Item::new(name, SECONDS, mean)
            }
        })
        .collect();
    let failed = t.failure.is_some();
    out.push(Item::new("Ts", SECONDS, Some(t.ts_s).filter(|_| !failed)));
    out.push(Item::new(
        "Throughput@Size",
        "Throughput@Size",
        t.throughput_at_size,
    ));
    out
}

impl KindReport for TpchThroughput {
    fn kind(&self) -> ResultKind {
        ResultKind::TpchThroughput
    }

    fn title(&self) -> &'static str {
        "TPC-H throughput test"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::TpchThroughput(t) => throughput_items(t),
            _ => Vec::new(),
        }
    }

    fn trial_text(&self, result: &TrialResult, target: &str) -> Option<String> {
        match result {
            TrialResult::TpchThroughput(r) => Some(throughput_text(r, target)),
            _ => None,
        }
    }

    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        let mut out = Vec::new();
        for w in workloads {
            let mut t = item_table(
                data,
                w,
                "median over trials of each query's mean seconds over the streams, Ts, Throughput@Size",
            );
            t.notes.extend(scale_factor_note(data, w));
            out.push((Some(w.clone()), Block::Table(t)));
        }
        if let Some(t) = qphh_table(data) {
            out.push((None, Block::Table(t)));
        }
        Ok(out)
    }

    /// The TPC-H metrics (QphH@Size), also when no power test ran.
    fn json(&self, data: &ReportData, out: &mut serde_json::Value) -> Result<(), ReportError> {
        super::tpch::metrics_json(data, out);
        Ok(())
    }
}
