//! What a load trial shows (`dbrig prepare`, `dbrig tpch load`, a plan's `load` workload):
//! what was loaded, each timed step, and the rows and MB per second per table and in total, in
//! the one line form of [`dbrig_core::results::TableLoad::line`].

use std::fmt::Write;

use dbrig_core::results::{LoadResult, ResultKind, TrialResult};

use crate::items::{Item, ROWS_PER_SECOND, SECONDS};
use crate::kind::KindReport;

/// The console report of one load on `target`.
pub fn load_text(r: &LoadResult, target: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Load of {} on {target} ({})\n{}, {} loader(s)",
        r.of, r.server_version, r.data, r.loaders
    );
    for s in &r.steps {
        let _ = writeln!(out, "  {:<28}{:>10.3} s", s.name, s.seconds);
    }
    let _ = writeln!(out, "  {:<28}{:>10.3} s", "total", r.total_seconds);
    for line in r.figures.lines() {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(b) = r.size_bytes {
        let _ = writeln!(out, "  size on disk {:.1} MiB", b as f64 / 1048576.0);
    }
    out
}

/// The loads' report: each table's and the total's rows/s (MB/s beside it), each step's
/// seconds.
pub struct Load;

/// Each table's rows/s and MB/s, the total's, then each step's seconds and the whole load's.
fn load_items(r: &LoadResult) -> Vec<Item> {
    let f = &r.figures;
    // A table of a few rows has no rate (`TableLoad::has_rate`): no item to compare.
    let tables = f
        .tables
        .iter()
        .filter(|t| t.has_rate())
        .map(|t| (t.table.as_str(), t.rows_per_s(), t.mb_per_s()));
    let mut out = Vec::new();
    let total = (f.rows >= dbrig_core::results::load::MIN_ROWS_FOR_A_RATE)
        .then(|| ("total", f.rows_per_s(), f.mb_per_s()));
    for (name, rows, mb) in tables.chain(total) {
        out.push(Item::new(name, ROWS_PER_SECOND, Some(rows)));
        out.push(Item::derived(name, "MB/s", mb));
    }
    for s in &r.steps {
        out.push(Item::new(
            format!("{} step", s.name),
            SECONDS,
            Some(s.seconds),
        ));
    }
    out.push(Item::new("load test", SECONDS, Some(r.total_seconds)));
    out
}

impl KindReport for Load {
    fn kind(&self) -> ResultKind {
        ResultKind::Load
    }

    fn title(&self) -> &'static str {
        "Loads"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::Load(r) => load_items(r),
            _ => Vec::new(),
        }
    }

    fn trial_text(&self, result: &TrialResult, target: &str) -> Option<String> {
        match result {
            TrialResult::Load(r) => Some(load_text(r, target)),
            _ => None,
        }
    }

    fn items_title(&self) -> &'static str {
        "median over trials: rows/s and MB/s per table and in total, seconds per step"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::{LoadFigures, LoadStep, TableLoad};

    #[test]
    fn a_load_shows_its_steps_and_rates() {
        let r = LoadResult {
            of: "tpch".into(),
            data: "TPC-H SF 0.01, keys after the rows".into(),
            server_version: "11.4".into(),
            steps: vec![LoadStep {
                name: "load".into(),
                seconds: 2.0,
            }],
            total_seconds: 2.5,
            loaders: 2,
            figures: LoadFigures {
                tables: vec![TableLoad {
                    table: "nation".into(),
                    rows: 25,
                    bytes: 2_000_000,
                    seconds: 0.5,
                }],
                rows: 25,
                bytes: 2_000_000,
                seconds: 2.0,
            },
            size_bytes: Some(1048576),
        };
        let t = load_text(&r, "mysql://h/test");
        assert!(t.starts_with("Load of tpch on mysql://h/test (11.4)\nTPC-H SF 0.01, keys after the rows, 2 loader(s)\n"), "{t}");
        // 25 rows are too few for a rate: their seconds run from the load's start.
        assert!(
            t.contains("  nation: 25 rows, 2.0 MB in 0.50 s (too few rows for a rate)\n"),
            "{t}"
        );
        assert!(
            t.contains("  total: 25 rows, 2.0 MB in 2.00 s (too few rows for a rate)\n"),
            "{t}"
        );
        assert!(
            t.contains("  total                            2.500 s\n"),
            "{t}"
        );
        assert!(t.ends_with("  size on disk 1.0 MiB\n"), "{t}");
    }
}
