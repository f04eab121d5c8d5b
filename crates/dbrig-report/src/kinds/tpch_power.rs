//! The TPC-H power test's report: an item per timed step plus Power@Size, the DBT-3 seed
//! table and bar chart (`tpch.rs`), the command's console output, and its seed tables and
//! metrics in the JSON export.

use dbrig_core::results::{PowerReport, ResultKind, TrialResult};
use dbrig_store::Store;

use super::tpch::{TpchReport, power_text, tpch_chart, tpch_metrics, tpch_table};
use crate::blocks::Block;
use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::{Item, step_label};
use crate::kind::{KindFigure, KindReport, SectionBlock};

/// The power test's report.
pub struct TpchPower;

fn power_items(p: &PowerReport) -> Vec<Item> {
    let mut out: Vec<Item> = p
        .steps()
        .map(|q| Item::step(step_label(&q.name), q.status, q.time_us))
        .collect();
    out.push(Item::new("Power@Size", "Power@Size", p.power_at_size));
    out
}

impl KindReport for TpchPower {
    fn kind(&self) -> ResultKind {
        ResultKind::TpchPower
    }

    fn title(&self) -> &'static str {
        "TPC-H power test"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::TpchPower(p) => power_items(p),
            _ => Vec::new(),
        }
    }

    fn trial_text(&self, result: &TrialResult, target: &str) -> Option<String> {
        match result {
            TrialResult::TpchPower(r) => Some(power_text(r, target)),
            _ => None,
        }
    }

    fn section(
        &self,
        data: &ReportData,
        workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        Ok(workloads
            .iter()
            .filter_map(|w| {
                TpchReport::from_data(data, w)
                    .map(|r| (Some(w.clone()), Block::Table(tpch_table(&r))))
            })
            .collect())
    }

    fn charts(
        &self,
        _store: &Store,
        data: &ReportData,
        workload: &str,
    ) -> Result<Vec<(&'static str, String)>, ReportError> {
        let mut out = Vec::new();
        if let Some(r) = TpchReport::from_data(data, workload)
            && r.has_queries()
        {
            out.push(("tpch-power", tpch_chart(&r)?));
        }
        Ok(out)
    }

    /// The TPC-H metrics of every configuration (the throughput test's too, whether or not a
    /// power test ran).
    fn figures(&self, data: &ReportData) -> Vec<KindFigure> {
        let mut out = Vec::new();
        for m in tpch_metrics(data) {
            for (name, value) in [
                ("Power@Size", m.power_at_size),
                ("Throughput@Size", m.throughput_at_size),
                ("QphH@Size", m.qphh_at_size),
            ] {
                let Some(value) = value else { continue };
                out.push(KindFigure {
                    kind: "tpch",
                    configuration: m.configuration.clone(),
                    name,
                    value,
                });
            }
        }
        out
    }

    /// The power tests' seed tables and the TPC-H metrics (QphH@Size).
    fn json(&self, data: &ReportData, out: &mut serde_json::Value) -> Result<(), ReportError> {
        let power: Vec<TpchReport> = data
            .sections
            .iter()
            .filter(|s| s.kind == ResultKind::TpchPower)
            .flat_map(|s| &s.workloads)
            .filter_map(|w| TpchReport::from_data(data, w))
            .collect();
        if !power.is_empty() {
            out["tpch_power"] = serde_json::to_value(power).unwrap_or_default();
        }
        super::tpch::metrics_json(data, out);
        Ok(())
    }
}
