//! The plan report's tables: assembled once as rows of strings, rendered as aligned console
//! text or as Markdown, so both always show the same figures.
//!
//! Number formats follow the seeds: medians with two decimals, `B/A*100` (e.g. `103.15`) and
//! `(B/A*100)-100` (e.g. `-26.61*`), a trailing `*` marking unusually high spread.

use std::fmt::Write;

use dbrig_core::stats::{Summary, Verdict};

use crate::data::{CellData, ComparisonRow, ReportData};

/// Mark of an unstable cell (stddev ≥ 10 % of the mean), the seeds' "unusually high STDEV".
pub const UNSTABLE_MARK: &str = "*";

/// `B/A*100`; `None` when A is zero or either is not finite.
pub fn ratio_pct(a: f64, b: f64) -> Option<f64> {
    let r = b / a * 100.0;
    (a != 0.0 && r.is_finite()).then_some(r)
}

/// The seeds' `B/A*100` cell: `103.15`, `88.29*`, `n/a`.
pub fn format_ratio(a: f64, b: f64, unstable: bool) -> String {
    match ratio_pct(a, b) {
        Some(r) => format!("{r:.2}{}", mark(unstable)),
        None => "n/a".into(),
    }
}

/// The seeds' `(B/A*100)-100` cell: `3.05`, `-26.61*`, `n/a` (no `+`, as in the seeds).
pub fn format_delta(a: f64, b: f64, unstable: bool) -> String {
    match ratio_pct(a, b) {
        // Rounding first keeps "-0.00" out of the table.
        Some(r) => format!("{}{}", fixed2(r - 100.0), mark(unstable)),
        None => "n/a".into(),
    }
}

/// A relative change as a signed percentage: `+3.05 %`.
pub fn format_change(delta: f64) -> String {
    format!("{:+.2} %", clean_zero(delta * 100.0))
}

/// A p-value with four decimals, `<0.0001` below that.
pub fn format_p(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

fn mark(unstable: bool) -> &'static str {
    if unstable { UNSTABLE_MARK } else { "" }
}

fn clean_zero(x: f64) -> f64 {
    if (x * 100.0).round() == 0.0 { 0.0 } else { x }
}

fn fixed2(x: f64) -> String {
    format!("{:.2}", clean_zero(x))
}

/// A cell's median for a table: `1234.56`, `1234.56*` when unstable, `n/a` without trials.
pub fn format_median(s: Option<&Summary>) -> String {
    match s {
        Some(s) => format!("{:.2}{}", s.median, mark(s.unstable)),
        None => "n/a".into(),
    }
}

/// An item's median (seconds, rows/s, …): two decimals from 10 up, four significant digits
/// below, `*` when unstable.
pub fn format_item_median(s: Option<&Summary>) -> String {
    match s {
        Some(s) if s.median.abs() >= 10.0 || s.median == 0.0 => format_median(Some(s)),
        Some(s) => {
            let digits = (3 - s.median.abs().log10().floor() as i32).clamp(2, 12) as usize;
            format!("{:.digits$}{}", s.median, mark(s.unstable))
        }
        None => "n/a".into(),
    }
}

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table as text cells, with a title and footnotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, c) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
        }
        w
    }

    fn pad(&self, i: usize, s: &str, width: usize) -> String {
        let fill = " ".repeat(width.saturating_sub(s.chars().count()));
        match self.align.get(i).copied().unwrap_or(Align::Right) {
            Align::Left => format!("{s}{fill}"),
            Align::Right => format!("{fill}{s}"),
        }
    }

    /// Plain aligned text: two spaces between columns, a dashed rule under the header.
    pub fn to_text(&self) -> String {
        let w = self.widths();
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.title);
        let line = |cells: &[String]| {
            let parts: Vec<String> = w
                .iter()
                .enumerate()
                .map(|(i, &width)| self.pad(i, cells.get(i).map_or("", |s| s), width))
                .collect();
            parts.join("  ").trim_end().to_owned()
        };
        let _ = writeln!(out, "{}", line(&self.header));
        let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
        let _ = writeln!(out, "{}", rule.join("  "));
        for row in &self.rows {
            let _ = writeln!(out, "{}", line(row));
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        out
    }

    /// A GitHub-flavoured Markdown table under a `###` heading; notes as a list.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('*', "\\*");
        let mut out = String::new();
        let _ = writeln!(out, "### {}\n", esc(&self.title));
        let head: Vec<String> = self.header.iter().map(|h| esc(h)).collect();
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let rule: Vec<&str> = (0..self.header.len())
            .map(|i| match self.align.get(i) {
                Some(Align::Left) => ":---",
                _ => "---:",
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out);
            for n in &self.notes {
                let _ = writeln!(out, "- {}", esc(n));
            }
        }
        out
    }
}

fn unstable(c: Option<&CellData>) -> bool {
    c.and_then(|c| c.summary.as_ref())
        .is_some_and(|s| s.unstable)
}

/// What one table row accumulates into the table's notes.
#[derive(Default)]
struct RowNotes {
    notes: Vec<String>,
    any_unstable: bool,
    counts: std::collections::BTreeSet<usize>,
}

/// The figures of one row (`workload` at `n` clients): each configuration's median, then for
/// each non-baseline configuration B the seeds' `B/A*100` and `(B/A*100)-100`. `None` when no
/// configuration has the cell. `label` names the row in notes.
fn ratio_cells(
    data: &ReportData,
    workload: &str,
    n: u32,
    label: &str,
    acc: &mut RowNotes,
) -> Option<Vec<String>> {
    let base = data.baseline.as_str();
    let cells: Vec<Option<&CellData>> = data
        .configurations
        .iter()
        .map(|c| data.cell(c, workload, n))
        .collect();
    if cells.iter().all(Option::is_none) {
        return None;
    }
    let mut row = Vec::new();
    for (conf, c) in data.configurations.iter().zip(&cells) {
        row.push(match c {
            // Seconds and ms/query are often below 0.01: keep four significant digits.
            Some(c) if c.unit.is_some() => format_item_median(c.summary.as_ref()),
            Some(c) => format_median(c.summary.as_ref()),
            None => "-".into(),
        });
        if let Some(c) = c {
            acc.any_unstable |= unstable(Some(c));
            acc.counts.insert(c.values.len());
            if c.excluded.total() > 0 {
                acc.notes.push(format!(
                    "{conf}, {label}: {} trial(s) not counted ({})",
                    c.excluded.total(),
                    c.excluded.describe()
                ));
            }
        }
    }
    let a = data.cell(base, workload, n);
    for b in data.others() {
        let bc = data.cell(b, workload, n);
        let medians = (
            a.and_then(|c| c.summary.as_ref()),
            bc.and_then(|c| c.summary.as_ref()),
        );
        match medians {
            (Some(sa), Some(sb)) => {
                let u = sa.unstable || sb.unstable;
                row.push(format_ratio(sa.median, sb.median, u));
                row.push(format_delta(sa.median, sb.median, u));
            }
            _ => {
                row.push("-".into());
                row.push("-".into());
            }
        }
    }
    Some(row)
}

/// The header after the first column: configurations, then the two ratio columns per B.
fn ratio_header(data: &ReportData, first: &str) -> (Vec<String>, Vec<Align>) {
    let base = data.baseline.as_str();
    let mut header = vec![first.to_owned()];
    header.extend(data.configurations.iter().cloned());
    for b in data.others() {
        header.push(format!("{b}/{base}*100"));
        header.push(format!("({b}/{base}*100)-100"));
    }
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    (header, align)
}

fn finish_notes(acc: RowNotes, what: &str, base: &str, extra: Option<String>) -> Vec<String> {
    let RowNotes {
        mut notes,
        any_unstable,
        counts,
    } = acc;
    let trials = match (counts.first(), counts.last()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo}"),
        (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
        _ => "0".into(),
    };
    let mut head = vec![format!(
        "median {what} of {trials} trial(s) per cell; baseline {base}"
    )];
    head.extend(extra);
    if any_unstable {
        head.push("* means unusually high stddev (≥ 10 % of the mean)".to_owned());
    }
    head.append(&mut notes);
    head
}

/// Per workload: rows = client counts; columns = each configuration's median, then for each
/// non-baseline configuration B the seeds' `B/A*100` and `(B/A*100)-100`.
pub fn workload_table(data: &ReportData, workload: &str) -> Table {
    let (header, align) = ratio_header(data, "clients");
    let mut acc = RowNotes::default();
    let mut rows = Vec::new();
    for &n in &data.clients {
        if let Some(cells) = ratio_cells(data, workload, n, &format!("{n} clients"), &mut acc) {
            let mut row = vec![n.to_string()];
            row.extend(cells);
            rows.push(row);
        }
    }
    Table {
        title: format!("{workload}: {} by clients", data.metric.label()),
        header,
        align,
        rows,
        notes: finish_notes(acc, data.metric.label(), &data.baseline, None),
    }
}

/// The item workloads of one benchmark (`tpch_power Q1`, `tpch_power Q2`, …), in report order.
fn items_of<'a>(data: &'a ReportData, benchmark: &str) -> Vec<&'a CellData> {
    let mut seen = Vec::new();
    for w in &data.workloads {
        if let Some(c) = data
            .cells
            .iter()
            .find(|c| &c.workload == w && c.unit.as_ref().is_some_and(|u| u.benchmark == benchmark))
        {
            seen.push(c);
        }
    }
    seen
}

/// A micro-benchmark or TPC-H workload: rows = its measured items (key types, queries), each
/// in its own unit, with the same median and ratio columns as [`workload_table`].
pub fn item_table(data: &ReportData, benchmark: &str) -> Table {
    let (header, align) = ratio_header(data, "item");
    let mut header = header;
    let mut align = align;
    header.insert(1, "unit".into());
    align.insert(1, Align::Left);
    let mut acc = RowNotes::default();
    let mut rows = Vec::new();
    let mut lower = false;
    for c in items_of(data, benchmark) {
        let Some(u) = &c.unit else { continue };
        lower |= !u.higher_is_better;
        if let Some(cells) = ratio_cells(data, &c.workload, c.clients, &u.item, &mut acc) {
            let mut row = vec![u.item.clone(), u.unit.clone()];
            row.extend(cells);
            rows.push(row);
        }
    }
    let note = lower.then(|| {
        "s: seconds, lower is better (a ratio below 100 is faster); rates and scores (Power@Size, Throughput@Size): higher is better; \
         a query that failed or answered wrong is not counted"
            .to_owned()
    });
    Table {
        title: format!("{benchmark}: per item"),
        header,
        align,
        rows,
        notes: finish_notes(acc, "value", &data.baseline, note),
    }
}

/// The tables of a report, in workload order: one per OLTP workload, one per benchmark for
/// the item cells of micro-benchmarks and TPC-H.
fn tables(data: &ReportData) -> Vec<Table> {
    let mut out = Vec::new();
    let mut benchmarks_done: Vec<String> = Vec::new();
    for w in &data.workloads {
        let unit = data
            .cells
            .iter()
            .find(|c| &c.workload == w)
            .and_then(|c| c.unit.clone());
        match unit {
            Some(u) => {
                if !benchmarks_done.contains(&u.benchmark) {
                    out.push(item_table(data, &u.benchmark));
                    benchmarks_done.push(u.benchmark);
                }
            }
            None => out.push(workload_table(data, w)),
        }
    }
    out
}

fn ci_text(r: &ComparisonRow) -> String {
    match r.comparison.delta_ci {
        Some((lo, hi)) => format!(
            "[{:+.2}, {:+.2}] %",
            clean_zero(lo * 100.0),
            clean_zero(hi * 100.0)
        ),
        None => "-".into(),
    }
}

/// One row per (workload, clients, configuration vs baseline): delta, its interval, the
/// Holm-adjusted p-value and the verdict.
pub fn verdict_table(data: &ReportData) -> Table {
    let o = &data.compare_options;
    let header = [
        "workload",
        "clients",
        "comparison",
        "n B/A",
        "delta",
        &format!("{:.0} % CI", (1.0 - o.alpha) * 100.0),
        "p (Holm)",
        "verdict",
    ]
    .map(str::to_owned)
    .to_vec();
    let align = vec![
        Align::Left,
        Align::Right,
        Align::Left,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Right,
        Align::Left,
    ];
    let rows = data
        .comparisons
        .iter()
        .map(|r| {
            let c = &r.comparison;
            let verdict = match c.verdict {
                Verdict::TooFewTrials => format!("too few trials (< {})", o.min_trials),
                v => v.label().to_owned(),
            };
            vec![
                r.workload.clone(),
                r.clients.to_string(),
                format!("{} vs {}", r.configuration, r.baseline),
                format!("{}/{}", c.n_b, c.n_a),
                c.delta
                    .map(|d| format!("{}{}", format_change(d), mark(r.unstable)))
                    .unwrap_or_else(|| "n/a".into()),
                ci_text(r),
                c.p_adjusted.map(format_p).unwrap_or_else(|| "-".into()),
                verdict,
            ]
        })
        .collect();
    let family = data
        .comparisons
        .iter()
        .filter(|r| r.comparison.p_value.is_some())
        .count();
    Table {
        title: format!(
            "Verdicts: {} vs baseline {}",
            if data.cells.iter().all(|c| c.unit.is_some()) {
                "each item in its own unit"
            } else {
                data.metric.label()
            },
            data.baseline
        ),
        header,
        align,
        rows,
        notes: vec![
            "delta = median(B)/median(A) - 1; CI: Hodges-Lehmann/Moses interval of B/A - 1".into(),
            format!(
                "p: two-sided Mann-Whitney U, Holm-adjusted across {family} comparison(s); \
                 a change is called when p < {} and the whole CI is beyond ±{} %",
                o.alpha,
                o.noise_band * 100.0
            ),
            "~ = no significant change; * = unusually high stddev on a side".into(),
        ],
    }
}

/// What precedes the tables: run, metric, baseline, server versions, trials left out.
fn preamble(data: &ReportData) -> Vec<String> {
    let mut lines = Vec::new();
    for r in &data.runs {
        lines.push(format!(
            "run {} ({}, {}): {}, started {}{}",
            r.id,
            r.kind,
            r.name,
            r.status,
            r.started_at,
            r.finished_at
                .as_deref()
                .map(|f| format!(", finished {f}"))
                .unwrap_or_default()
        ));
    }
    if data.cells.iter().any(|c| c.unit.is_none()) {
        lines.push(format!(
            "metric: {} (higher is better); baseline: {}",
            data.metric.label(),
            data.baseline
        ));
    } else {
        lines.push(format!(
            "metric: each item's own unit; baseline: {}",
            data.baseline
        ));
    }
    for v in &data.server_versions {
        let versions = if v.versions.is_empty() {
            "unknown".to_owned()
        } else {
            v.versions.join(", ")
        };
        lines.push(format!("server version of {}: {versions}", v.configuration));
    }
    let ex = data.excluded();
    if ex.total() > 0 {
        lines.push(format!(
            "not counted: {} trial(s) ({}); they are listed, never averaged in",
            ex.total(),
            ex.describe()
        ));
    }
    lines
}

/// The console report: preamble, one table per workload, the verdict table.
pub fn report_text(data: &ReportData) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "dbrig report: {}", data.title);
    for l in preamble(data) {
        let _ = writeln!(out, "{l}");
    }
    for t in tables(data) {
        let _ = writeln!(out);
        out.push_str(&t.to_text());
    }
    if !data.comparisons.is_empty() {
        let _ = writeln!(out);
        out.push_str(&verdict_table(data).to_text());
    }
    out
}

/// The same report as Markdown.
pub fn report_markdown(data: &ReportData) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# dbrig report: {}\n", data.title);
    for l in preamble(data) {
        let _ = writeln!(out, "- {}", l.replace('*', "\\*"));
    }
    for t in tables(data) {
        let _ = writeln!(out);
        out.push_str(&t.to_markdown());
    }
    if !data.comparisons.is_empty() {
        let _ = writeln!(out);
        out.push_str(&verdict_table(data).to_markdown());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_formats_match_the_seeds() {
        // MariaDB 5.1 vs 5.2 "delete" at 1 thread: 107.28.
        assert_eq!(format_ratio(100.0, 107.28, false), "107.28");
        assert_eq!(format_ratio(1000.0, 882.9, true), "88.29*");
        assert_eq!(format_delta(100.0, 103.05, false), "3.05");
        assert_eq!(format_delta(100.0, 73.39, true), "-26.61*");
        assert_eq!(format_delta(100.0, 100.001, false), "0.00");
        assert_eq!(format_delta(100.0, 99.999, false), "0.00");
        assert_eq!(format_ratio(0.0, 5.0, false), "n/a");
        assert_eq!(format_delta(0.0, 5.0, true), "n/a");
        assert_eq!(
            ratio_pct(8894.0, 9393.73).map(|r| (r * 100.0).round()),
            Some(10562.0)
        );
    }

    #[test]
    fn change_and_p_formats() {
        assert_eq!(format_change(0.0305), "+3.05 %");
        assert_eq!(format_change(-0.2661), "-26.61 %");
        assert_eq!(format_change(-0.00001), "+0.00 %");
        assert_eq!(format_p(0.028571), "0.0286");
        assert_eq!(format_p(0.00001), "<0.0001");
    }

    #[test]
    fn text_table_aligns_columns() {
        let t = Table {
            title: "t".into(),
            header: vec!["clients".into(), "A".into(), "B/A*100".into()],
            align: vec![Align::Left, Align::Right, Align::Right],
            rows: vec![
                vec!["1".into(), "8894.00".into(), "105.62".into()],
                vec!["256".into(), "23868.33*".into(), "n/a".into()],
            ],
            notes: vec!["note".into()],
        };
        assert_eq!(
            t.to_text(),
            "t\n\
             clients          A  B/A*100\n\
             -------  ---------  -------\n\
             1          8894.00   105.62\n\
             256      23868.33*      n/a\n\
             note\n"
        );
        assert_eq!(
            t.to_markdown(),
            "### t\n\n\
             | clients | A | B/A\\*100 |\n\
             | :--- | ---: | ---: |\n\
             | 1 | 8894.00 | 105.62 |\n\
             | 256 | 23868.33\\* | n/a |\n\n\
             - note\n"
        );
    }

    #[test]
    fn workload_table_assembles_medians_and_both_seed_formats() {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = crate::fixture::demo_run(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let t = workload_table(&data, "update_index");
        assert_eq!(
            t.header,
            [
                "clients",
                "off",
                "8",
                "32",
                "8/off*100",
                "(8/off*100)-100",
                "32/off*100",
                "(32/off*100)-100"
            ]
        );
        // 4 clients: `8` is the unstable cell, so its median and both ratios carry the `*`.
        assert_eq!(
            t.rows[1],
            [
                "4", "1801.80", "1842.75*", "1747.75", "102.27*", "2.27*", "97.00", "-3.00"
            ]
        );
        assert_eq!(t.rows[2][6..], ["88.00", "-12.00"]);
        // The failed attempt is mentioned, not averaged in.
        assert!(
            t.notes
                .iter()
                .any(|n| n == "8, 16 clients: 1 trial(s) not counted (1 failed)")
        );
        let v = verdict_table(&data);
        assert_eq!(v.rows.len(), 12);
        let last = v.rows.last().unwrap();
        assert_eq!(last[2], "32 vs off");
        assert_eq!(last[7], "regression");
    }
}
