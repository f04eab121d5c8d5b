//! The blocks a report's sections are made of, for every kind alike: number formats, the
//! OLTP table by client count, the table of items each in its own unit, the verdicts, and the
//! block and section types the text, Markdown and HTML renderings share. Which blocks a section
//! holds is its kind's (`kinds/`); `tables.rs` puts the sections together.
//!
//! Number formats follow the seeds: medians with two decimals, `B/A*100` (e.g. `103.15`) and
//! `(B/A*100)-100` (e.g. `-26.61*`), a trailing `*` marking unusually high spread.

use dbrig_core::results::ResultKind;
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

/// A cell's median for a table: `1234.56`, `1234.56*` when unstable, `-` without a counted
/// trial (the table's notes say why).
pub fn format_median(s: Option<&Summary>) -> String {
    match s {
        Some(s) => format!("{:.2}{}", s.median, mark(s.unstable)),
        None => "-".into(),
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
        None => "-".into(),
    }
}

pub use crate::table::{Align, Table, TextStyle, seconds_text};

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

/// The columns of a ratio table: the configurations that have any of `cells`, in plan order,
/// and the baseline when it is one of them.
struct Columns<'a> {
    configurations: Vec<&'a str>,
    baseline: Option<&'a str>,
}

impl<'a> Columns<'a> {
    fn of(data: &'a ReportData, cells: &[&CellData]) -> Self {
        let configurations: Vec<&str> = data
            .configurations
            .iter()
            .map(String::as_str)
            .filter(|c| cells.iter().any(|x| x.configuration == *c))
            .collect();
        let baseline = configurations.iter().copied().find(|c| *c == data.baseline);
        Columns {
            configurations,
            baseline,
        }
    }

    /// The configurations compared with the baseline (none without a baseline here).
    fn others(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.configurations
            .iter()
            .copied()
            .filter(|c| self.baseline.is_some_and(|b| b != *c))
    }

    /// The header after the first columns: configurations, then the two ratio columns per B.
    fn header(&self, first: &[&str]) -> (Vec<String>, Vec<Align>) {
        let mut header: Vec<String> = first.iter().map(|s| s.to_string()).collect();
        let mut align = vec![Align::Left; first.len()];
        header.extend(self.configurations.iter().map(|c| c.to_string()));
        if let Some(base) = self.baseline {
            for b in self.others() {
                header.push(format!("{b}/{base}*100"));
                header.push(format!("({b}/{base}*100)-100"));
            }
        }
        align.resize(header.len(), Align::Right);
        (header, align)
    }
}

/// The figures of one row (`workload` at `n` clients): each configuration's median, then for
/// each non-baseline configuration B the seeds' `B/A*100` and `(B/A*100)-100`. `None` when no
/// configuration has the cell. `label` names the row in notes.
fn ratio_cells(
    data: &ReportData,
    cols: &Columns<'_>,
    workload: &str,
    n: u32,
    label: &str,
    acc: &mut RowNotes,
) -> Option<Vec<String>> {
    let cells: Vec<Option<&CellData>> = cols
        .configurations
        .iter()
        .map(|c| data.cell(c, workload, n))
        .collect();
    if cells.iter().all(Option::is_none) {
        return None;
    }
    let mut row = Vec::new();
    for (conf, c) in cols.configurations.iter().zip(&cells) {
        row.push(match c {
            // Seconds as the TPC-H tables print them.
            Some(c) if c.unit.as_ref().is_some_and(|u| u.unit == "s") => {
                c.summary.as_ref().map_or("-".into(), |s| {
                    format!("{}{}", seconds_text(s.median), mark(s.unstable))
                })
            }
            // ms/query and cycles/row are often below 0.01: keep four significant digits.
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
    if let Some(base) = cols.baseline {
        let a = data.cell(base, workload, n);
        for b in cols.others() {
            let bc = data.cell(b, workload, n);
            match (
                a.and_then(|c| c.summary.as_ref()),
                bc.and_then(|c| c.summary.as_ref()),
            ) {
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
    }
    Some(row)
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

/// An OLTP workload: rows = client counts; columns = each configuration's median of the
/// report metric, then for each non-baseline configuration B the seeds' `B/A*100` and
/// `(B/A*100)-100`.
pub fn workload_table(data: &ReportData, workload: &str) -> Table {
    let cells: Vec<&CellData> = data
        .cells
        .iter()
        .filter(|c| c.workload == workload)
        .collect();
    let cols = Columns::of(data, &cells);
    let (header, align) = cols.header(&["clients"]);
    let mut acc = RowNotes::default();
    let mut rows = Vec::new();
    for n in data.clients_of(workload) {
        let label = format!("{n} clients");
        if let Some(cells) = ratio_cells(data, &cols, workload, n, &label, &mut acc) {
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

/// The item cells of one stored workload (a micro-benchmark's key types or queries, a TPC-H
/// test's queries), in report order.
pub fn items_of<'a>(data: &'a ReportData, label: &str) -> Vec<&'a CellData> {
    let mut seen = Vec::new();
    for w in &data.workloads {
        if let Some(c) = data
            .cells
            .iter()
            .find(|c| &c.workload == w && c.label == label && c.unit.is_some())
        {
            seen.push(c);
        }
    }
    seen
}

/// Which way each unit of a table is better, as one note: `rows/s, MB/s: higher is better;
/// s, cycles/row: lower is better (a ratio below 100 is faster)`.
fn direction_note(units: &[(String, bool)]) -> Option<String> {
    let list = |higher: bool| {
        let mut seen: Vec<&str> = Vec::new();
        for (u, h) in units {
            if *h == higher && !seen.contains(&u.as_str()) {
                seen.push(u);
            }
        }
        seen.join(", ")
    };
    let (higher, lower) = (list(true), list(false));
    let mut parts = Vec::new();
    if !higher.is_empty() {
        parts.push(format!("{higher}: higher is better"));
    }
    if !lower.is_empty() {
        parts.push(format!(
            "{lower}: lower is better (a ratio below 100 is faster)"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A section of one item table per workload, each titled `title`: the layout of every kind
/// whose items each stand in their own unit.
pub fn item_sections(
    data: &ReportData,
    workloads: &[String],
    title: &str,
) -> Vec<(Option<String>, Block)> {
    workloads
        .iter()
        .map(|w| (Some(w.clone()), Block::Table(item_table(data, w, title))))
        .collect()
}

/// A workload measured in items (a micro-benchmark, a throughput test): rows = its items,
/// each in its own unit, with the same median and ratio columns as [`workload_table`]. Items
/// measured at several client counts (CPU per unit of work beside an OLTP workload) get a row
/// per client count, with a `clients` column: one count's figure is not another's.
pub fn item_table(data: &ReportData, label: &str, title: &str) -> Table {
    let cells = items_of(data, label);
    let all: Vec<&CellData> = data.cells.iter().filter(|c| c.label == label).collect();
    let cols = Columns::of(data, &all);
    let per_clients = cells.iter().any(|c| data.clients_of(&c.workload).len() > 1);
    let first: &[&str] = if per_clients {
        &["item", "clients", "unit"]
    } else {
        &["item", "unit"]
    };
    let (header, mut align) = cols.header(first);
    if per_clients {
        align[1] = Align::Right;
    }
    let mut acc = RowNotes::default();
    let mut rows = Vec::new();
    let mut units = Vec::new();
    for c in cells {
        let Some(u) = &c.unit else { continue };
        units.push((u.unit.clone(), u.higher_is_better));
        for n in data.clients_of(&c.workload) {
            let name = if per_clients {
                format!("{}, {n} clients", u.item)
            } else {
                u.item.clone()
            };
            if let Some(cells) = ratio_cells(data, &cols, &c.workload, n, &name, &mut acc) {
                let mut row = vec![u.item.clone()];
                if per_clients {
                    row.push(n.to_string());
                }
                row.push(u.unit.clone());
                row.extend(cells);
                rows.push(row);
            }
        }
    }
    Table {
        title: format!("{label}: {title}"),
        header,
        align,
        rows,
        notes: finish_notes(acc, "value", &data.baseline, direction_note(&units)),
    }
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

/// The verdicts of one kind: one row per (workload, clients, configuration vs baseline) with
/// delta, the p-value adjusted for the report's comparisons (one family for the whole
/// report, CPU per unit of work another), the trials a verdict needs, and the interval of the
/// change beside the verdict. When no comparison of the kind has enough trials, one line says
/// so instead of a table of "too few trials"; when trials were run but no verdict was
/// reachable with them, the first note says so. `None` when the kind has no comparison.
pub fn verdict_block(data: &ReportData, kind: ResultKind) -> Option<Block> {
    let rows: Vec<&ComparisonRow> = data.comparisons.iter().filter(|r| r.kind == kind).collect();
    if rows.is_empty() {
        return None;
    }
    let o = &data.compare_options;
    // The band as a user gave it (2.5, 7), not its binary fraction times 100 (7.000000000000001).
    let band_pct = (o.noise_band * 100.0 * 1e9).round() / 1e9;
    let needed = rows
        .iter()
        .map(|r| r.trials_needed.trials)
        .max()
        .unwrap_or(o.min_trials);
    if rows
        .iter()
        .all(|r| r.comparison.verdict == Verdict::TooFewTrials)
    {
        return Some(Block::Note(format!(
            "Verdicts: too few trials (< {} counted per side) in all {} comparison(s) with baseline {}; run {needed} or more a side for verdicts",
            o.min_trials,
            rows.len(),
            data.baseline
        )));
    }
    let confidence = format!("{:.0} % CI", (1.0 - o.alpha) * 100.0);
    let header = [
        "workload",
        "clients",
        "comparison",
        "n B/A",
        "delta",
        &format!("p ({})", o.correction.label()),
        "trials for",
        // The interval beside the verdict it decides.
        &confidence,
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
        Align::Right,
        Align::Left,
    ];
    let table_rows = rows
        .iter()
        .map(|r| {
            let c = &r.comparison;
            let verdict = match c.verdict {
                Verdict::TooFewTrials => format!("too few trials (< {})", o.min_trials),
                v => v.label().to_owned(),
            };
            let t = r.trials_needed;
            vec![
                r.workload.clone(),
                r.clients.to_string(),
                format!("{} vs {}", r.configuration, r.baseline),
                format!("{}/{}", c.n_b, c.n_a),
                c.delta
                    .map(|d| format!("{}{}", format_change(d), mark(r.unstable)))
                    .unwrap_or_else(|| "-".into()),
                c.p_adjusted.map(format_p).unwrap_or_else(|| "-".into()),
                match t.half_width {
                    Some(h) => format!("{} for ±{:.1} %", t.trials, h * 100.0),
                    None => format!("≥ {} (noise unknown)", t.trials),
                },
                ci_text(r),
                // Last: the HTML page colours a row by it.
                verdict,
            ]
        })
        .collect();
    let family = rows.iter().map(|r| r.family).max().unwrap_or(0);
    // The comparisons the p-values were adjusted across: this family's tested ones, each
    // derived figure in its item's place.
    let derived = |r: &ComparisonRow| {
        data.cell(&r.baseline, &r.workload, r.clients)
            .and_then(|c| c.unit.as_ref())
            .is_some_and(|u| u.derived_from.is_some())
    };
    let tested = data
        .comparisons
        .iter()
        .filter(|r| r.comparison.p_value.is_some() && !is_evidence_row(data, r))
        .filter(|r| !derived(r))
        .count();
    let once = if rows.iter().any(|r| derived(r)) {
        " (a figure derived from another's seconds, MB/s or cycles/row, in its place)"
    } else {
        ""
    };
    let with_cpu = rows.iter().any(|r| is_evidence_row(data, r));
    let what = match kind {
        ResultKind::Oltp if with_cpu => format!(
            "{}, and CPU per unit of work (lower is better)",
            data.metric.label()
        ),
        ResultKind::Oltp => data.metric.label().to_owned(),
        _ => "each item in its own unit".to_owned(),
    };
    let mut notes = unreachable_notes(&rows, o.alpha, o.correction.describe());
    notes.extend([
        "delta = median(B)/median(A) - 1; CI: Hodges-Lehmann/Moses interval of B/A - 1".into(),
        format!(
            "CI in words: with {:.0} % confidence the true change lies in this interval; \
             a wide one means the trials were too few for their noise",
            (1.0 - o.alpha) * 100.0
        ),
        format!(
            "trials for: trials per side a verdict needs: enough that the exact test's smallest \
             p, corrected for the {family} comparison(s), can fall below {}, and enough to narrow \
             the interval to ±N % at the noise these trials showed; N is what calling a change of \
             the observed size needs (|delta| less the ±{band_pct} % noise band)",
            o.alpha
        ),
        format!(
            "p: two-sided Mann-Whitney U, adjusted by {} across {tested} comparison(s){once}",
            o.correction.describe(),
        ),
        format!(
            "a change is called when p < {} and the whole CI is beyond ±{band_pct} %",
            o.alpha
        ),
        "~ = no significant change; unreachable = no verdict was possible with these trials; \
         * = unusually high stddev on a side"
            .into(),
    ]);
    if with_cpu {
        notes.push(
            "CPU rows (server CPU, client CPU per unit of work) are adjusted as a family of their own: they explain the other rows and never change their verdicts".to_owned(),
        );
    }
    Some(Block::Verdicts(Table {
        title: format!("Verdicts: {what} vs baseline {}", data.baseline),
        header,
        align,
        rows: table_rows,
        notes,
    }))
}

/// The lines at the top of a report when some kind's trials could reach no verdict at all:
/// what the verdict table's first note says, where a reader looks first (the page shows it
/// flagged, as relaxed durability).
pub fn verdict_flags(data: &ReportData) -> Vec<String> {
    let o = &data.compare_options;
    let titled = data.sections.len() > 1;
    data.sections
        .iter()
        .filter_map(|s| {
            let rows: Vec<&ComparisonRow> = data
                .comparisons
                .iter()
                .filter(|r| r.kind == s.kind)
                .collect();
            let note = unreachable_notes(&rows, o.alpha, o.correction.describe())
                .into_iter()
                .find(|n| n.starts_with("NO VERDICT"))?;
            Some(if titled {
                format!("{}: {note}", s.title)
            } else {
                note
            })
        })
        .collect()
}

/// What a reader must not miss: the comparisons whose trials could not reach a verdict,
/// however large the change (their smallest possible p-value after the correction is not
/// below alpha), and how many trials a side would.
fn unreachable_notes(rows: &[&ComparisonRow], alpha: f64, correction: &str) -> Vec<String> {
    let tested: Vec<&&ComparisonRow> = rows
        .iter()
        .filter(|r| r.comparison.p_value.is_some())
        .collect();
    let stuck: Vec<&&ComparisonRow> = tested
        .iter()
        .copied()
        .filter(|r| r.comparison.verdict == Verdict::Unreachable)
        .collect();
    if stuck.is_empty() {
        return Vec::new();
    }
    let floor = stuck
        .iter()
        .filter_map(|r| r.comparison.p_floor)
        .fold(f64::INFINITY, f64::min);
    let counts: std::collections::BTreeSet<String> = stuck
        .iter()
        .map(|r| {
            let (a, b) = (r.comparison.n_a, r.comparison.n_b);
            if a == b {
                a.to_string()
            } else {
                format!("{b}/{a}")
            }
        })
        .collect();
    let needed = stuck
        .iter()
        .map(|r| r.trials_needed.trials)
        .max()
        .unwrap_or(0);
    let how = format!(
        "with {} trial(s) a side even completely separated trials give p ≥ {} after the {correction} correction across {} comparison(s) (alpha {alpha}); run {needed} or more a side",
        counts.into_iter().collect::<Vec<_>>().join(", "),
        format_p(floor),
        stuck.iter().map(|r| r.family).max().unwrap_or(0),
    );
    vec![if stuck.len() == tested.len() {
        format!("NO VERDICT WAS REACHABLE with the trials run: {how}")
    } else {
        format!(
            "{} of {} comparison(s) could reach no verdict with the trials run (unreachable): {how}",
            stuck.len(),
            tested.len()
        )
    }]
}

/// Whether a comparison is of a CPU-per-unit figure (evidence) rather than a result.
fn is_evidence_row(data: &ReportData, r: &ComparisonRow) -> bool {
    data.cell(&r.baseline, &r.workload, r.clients)
        .and_then(|c| c.unit.as_ref())
        .is_some_and(|u| u.evidence)
}

/// One part of a report section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Table(Table),
    /// The A/B verdicts (one row per comparison, the verdict last).
    Verdicts(Table),
    /// Preformatted text under a title (a perfrun comparison in the seed's layout).
    Text {
        title: String,
        body: String,
    },
    /// One line.
    Note(String),
}

/// One kind's part of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionView {
    pub kind: ResultKind,
    pub title: String,
    /// The workload each block belongs to (`None`: the whole section, e.g. its verdicts).
    pub blocks: Vec<(Option<String>, Block)>,
}
