//! What `dbrig micro` prints: the seeds' way of showing a micro-benchmark, one line per table
//! type or query with its mean in its own unit (rows/s, seconds, ms per query) and what was
//! derived from it (rows/s of a timed query, MB/s of the table's data, cycles per row).

use std::fmt::Write;

use dbrig_core::results::{MicroResult, ResultKind, TrialResult};

use crate::items::Item;
use crate::kind::KindReport;

use crate::items::{ROWS_PER_SECOND, rate_rule};

/// A value in its unit's precision: whole rows per second, 4 decimals of a millisecond,
/// milliseconds of a second.
fn number(v: f64, unit: &str) -> String {
    match unit {
        ROWS_PER_SECOND => format!("{v:.0}"),
        "ms/query" => format!("{v:.4}"),
        _ => format!("{v:.3}"),
    }
}

/// The console report of one micro-benchmark result on `target`.
pub fn result_text(r: &MicroResult, target: &str) -> String {
    let mut out = String::new();
    let engine = r
        .engine
        .as_deref()
        .map(|e| format!(", engine {e}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "dbrig micro {} on {target} ({}{engine})\n{} rows, {} run(s), seed {}{}",
        r.benchmark,
        r.server_version,
        r.rows,
        r.runs,
        r.seed,
        r.cpu_mhz
            .map(|m| format!(", CPU {m:.0} MHz"))
            .unwrap_or_default()
    );
    for s in &r.settings {
        let _ = writeln!(out, "session: {s}");
    }
    let _ = writeln!(out);
    let width = r
        .items
        .iter()
        .map(|i| i.name.len())
        .max()
        .unwrap_or(0)
        .max(8);
    for i in &r.items {
        let runs = i
            .values
            .iter()
            .map(|v| number(*v, &i.unit))
            .collect::<Vec<_>>()
            .join(" ");
        let mut line = format!(
            "{:<width$}  {} {}",
            format!("{}:", i.name),
            number(crate::items::rate_rule(i), &i.unit),
            i.unit
        );
        if i.unit != ROWS_PER_SECOND
            && let Some(rps) = i.rows_per_s
        {
            let _ = write!(line, "  ({rps:.0} rows/s)");
        }
        if let Some(mb) = i.mb_per_s {
            let _ = write!(line, "  {mb:.1} MB/s");
        }
        if let Some(c) = i.cycles_per_row {
            let _ = write!(line, "  {c:.0} cycles/row");
        }
        let _ = write!(
            line,
            "  [min {} max {}; runs: {runs}]",
            number(i.min, &i.unit),
            number(i.max, &i.unit)
        );
        if let Some(a) = &i.answer {
            let _ = write!(line, "  answer: {a}");
        }
        let _ = writeln!(out, "{line}");
    }
    for s in &r.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    out
}

/// The micro-benchmarks' report: an item per table type or query and per figure derived.
pub struct Micro;

/// Each item's mean in its own unit, then what the seeds derive from it: rows/s (when the
/// item is timed in another unit), MB/s of the table's data, cycles per row.
pub fn micro_items(m: &MicroResult) -> Vec<Item> {
    let mut out = Vec::new();
    for i in &m.items {
        out.push(Item::new(i.name.clone(), &i.unit, Some(rate_rule(i))));
        if i.unit != ROWS_PER_SECOND
            && let Some(r) = i.rows_per_s
        {
            out.push(Item::derived(&i.name, ROWS_PER_SECOND, r));
        }
        if let Some(mb) = i.mb_per_s {
            out.push(Item::derived(&i.name, "MB/s", mb));
        }
        if let Some(c) = i.cycles_per_row {
            out.push(Item::derived(&i.name, "cycles/row", c));
        }
    }
    out
}

impl KindReport for Micro {
    fn kind(&self) -> ResultKind {
        ResultKind::Micro
    }

    fn title(&self) -> &'static str {
        "Micro-benchmarks"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::Micro(m) => micro_items(m),
            _ => Vec::new(),
        }
    }

    fn trial_text(&self, result: &TrialResult, target: &str) -> Option<String> {
        match result {
            TrialResult::Micro(r) => Some(result_text(r, target)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rows/s and MB/s by one rule, total over total: the memory_load INT runs
    /// (2000 rows each at 1 182 755, 93 923, 81 804, 87 754 and 412 969 rows/s) read 371 841
    /// rows/s as the mean of the rates, while MB/s was the total bytes over the total time,
    /// 2.8× slower (133 213 rows/s). Both are 2000 rows / mean seconds now, also for a
    /// result stored with the old mean.
    #[test]
    fn rows_per_second_and_mb_per_second_follow_one_rule() {
        use dbrig_core::results::{MicroItem, MicroResult};
        let rates = [1_182_755.0, 93_923.0, 81_804.0, 87_754.0, 412_969.0];
        let seconds: Vec<f64> = rates.iter().map(|r| 2000.0 / r).collect();
        let mean_s = seconds.iter().sum::<f64>() / 5.0;
        let item = MicroItem::new("INT", "t", "rows/s", rates.to_vec(), seconds, 2000)
            .with_rates(Some(36_000), Some(2600.0));
        let rows_per_s = 2000.0 / mean_s;
        assert!((item.mean - rows_per_s).abs() < 1e-6, "{}", item.mean);
        assert!((rows_per_s - 133_213.0).abs() < 1.0, "{rows_per_s}");
        let mb = item.mb_per_s.unwrap();
        // Both rates of the same total time: their ratio is bytes per row.
        assert!((rows_per_s / (mb * 1e6) - 2000.0 / 36_000.0).abs() < 1e-12);
        let mut old = item.clone();
        old.mean = rates.iter().sum::<f64>() / 5.0;
        for i in [item, old] {
            assert_eq!(crate::items::rate_rule(&i), rows_per_s);
            let r = MicroResult {
                benchmark: "memory_load".into(),
                dialect: "mysql".into(),
                server_version: "10.11".into(),
                engine: None,
                rows: 2000,
                runs: 5,
                seed: 1,
                cpu_mhz: Some(2600.0),
                settings: vec![],
                items: vec![i],
                skipped: vec![],
            };
            let line = result_text(&r, "t")
                .lines()
                .find(|l| l.starts_with("INT"))
                .unwrap()
                .to_owned();
            assert!(
                line.contains(&format!(" {rows_per_s:.0} rows/s ")),
                "{line}"
            );
        }
    }

    #[test]
    fn every_item_in_its_own_unit() {
        let r = crate::fixture::scan_filter("10.11.6-MariaDB", 1.0);
        let text = result_text(&r, "mysql://bench@h/db");
        assert!(
            text.starts_with("dbrig micro scan_filter on mysql://bench@h/db (10.11.6-MariaDB, engine MEMORY)\n1000000 rows, 3 run(s), seed 1, CPU 2000 MHz\n"),
            "{text}"
        );
        let scan = text.lines().find(|l| l.starts_with("count(*)")).unwrap();
        assert!(
            scan.contains(" rows/s ") && scan.contains(" MB/s") && scan.contains(" cycles/row"),
            "{scan}"
        );
        let cached = text.lines().find(|l| l.starts_with("in-cache")).unwrap();
        assert!(
            cached.contains(" ms/query  (") && cached.contains("answer: 6667"),
            "{cached}"
        );
    }

    #[test]
    fn a_micro_item_gets_a_row_per_figure_in_its_own_unit() {
        let loop_item = dbrig_core::results::MicroItem::new(
            "loop",
            "SELECT 1",
            "ms/query",
            vec![0.5, 0.5],
            vec![0.5, 0.5],
            1000,
        )
        .with_rates(Some(2_000_000), Some(2000.0));
        let m = dbrig_core::results::MicroResult {
            benchmark: "scan_filter".into(),
            dialect: "sqlite".into(),
            server_version: "3".into(),
            engine: None,
            rows: 1000,
            runs: 2,
            seed: 1,
            cpu_mhz: Some(2000.0),
            settings: vec![],
            items: vec![loop_item],
            skipped: vec![],
        };
        let items = micro_items(&m);
        let units: Vec<(&str, &str, bool)> = items
            .iter()
            .map(|i| (i.name.as_str(), i.unit.as_str(), i.derived))
            .collect();
        assert_eq!(
            units,
            [
                ("loop", "ms/query", false),
                ("loop", "rows/s", true),
                ("loop", "MB/s", true),
                ("loop", "cycles/row", true)
            ]
        );
        assert_eq!(items[2].key(), "loop (MB/s)");
        assert!((items[1].value.unwrap() - 2000.0).abs() < 1e-9);
    }
}
