//! What `dbrig micro` prints: the seeds' way of showing a micro-benchmark, one line per table
//! type or query with its mean in its own unit (rows/s, seconds, ms per query) and what was
//! derived from it (rows/s of a timed query, MB/s of the table's data, cycles per row).

use std::fmt::Write;

use dbrig_core::results::MicroResult;

use crate::items::ROWS_PER_SECOND;

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
            number(i.mean, &i.unit),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
