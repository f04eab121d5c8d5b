//! "Why" B differs from A: for each configuration compared with the baseline in one workload ×
//! client count, the evidence its trials recorded (`TrialEvidence`), normalised per unit of
//! work: server and client CPU per unit (the very comparisons of the verdict table), the
//! server counters per unit that changed most, and the wait events each side spent its
//! sessions in. Every difference is judged by the verdicts' rule (`dbrig_core::stats`: Mann-
//! Whitney, Holm within the pair's counters or waits, the whole interval beyond the noise
//! band); with too few trials the largest differences are listed and said to be uncalled.

use std::collections::BTreeSet;

use dbrig_core::results::{ResultKind, ServerEngine, TrialEvidence};
use dbrig_core::stats::{self, Comparison, Verdict};
use dbrig_store::TrialStatus;
use serde::Serialize;

use crate::blocks::format_change;
use crate::data::{CLIENT_CPU, ReportData, SERVER_CPU, StoredCell};

/// How many counters and waits a comparison lists.
pub const TOP: usize = 5;

/// One figure of A and B: medians over the counted trials and the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyFigure {
    pub name: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// median(B)/median(A) − 1; `None` when A's median is 0.
    pub delta: Option<f64>,
    /// The confidence interval of B/A − 1 the verdict was decided with (Hodges–Lehmann /
    /// Moses), shown beside it; `None` with too few trials or non-positive values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<(f64, f64)>,
    /// `changed`, `~` (not beyond the noise), `too few trials`; for CPU the verdict
    /// (`improvement`, `regression`).
    pub verdict: String,
}

/// The waits one configuration's sessions were seen in most: the median over its trials of
/// the sessions seen in each event per sample (1.0: one session on average).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopWaits {
    pub configuration: String,
    pub waits: Vec<(String, f64)>,
}

/// Why one configuration differs from the baseline in one workload × client count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhyComparison {
    pub workload: String,
    pub clients: u32,
    pub configuration: String,
    pub baseline: String,
    /// What one unit of work is (`txn`, `query`, `item`).
    pub unit: String,
    pub cpu: Vec<WhyFigure>,
    /// Counters per unit of work that changed most, called changes first.
    pub counters: Vec<WhyFigure>,
    /// Top waits of the baseline, then of the configuration.
    pub top_waits: Vec<TopWaits>,
    /// Sessions per sample in each wait, compared.
    pub waits: Vec<WhyFigure>,
    /// The functions whose share of the server's profile (% of samples in the function
    /// itself) changed most; empty unless both sides were profiled (`--profile`).
    pub functions: Vec<WhyFigure>,
    /// Why counters, waits and functions are not compared: the two sides are servers of
    /// different engines, whose counters (and wait events, and code) are not the same things.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compared: Option<String>,
}

/// The evidence of a cell's counted trials.
pub(crate) fn evidence_of<'a>(cells: &[&'a StoredCell]) -> Vec<&'a TrialEvidence> {
    cells
        .iter()
        .flat_map(|c| &c.trials)
        .filter(|t| t.status == TrialStatus::Done && t.result.is_some())
        .filter_map(|t| t.environment.as_deref()?.evidence.as_ref())
        .collect()
}

/// Each trial's counters per unit of work (trials without counters or units left out).
fn counters_per_unit(ev: &[&TrialEvidence]) -> Vec<std::collections::BTreeMap<String, f64>> {
    ev.iter()
        .filter_map(|e| {
            let (units, _) = e.units().filter(|(n, _)| *n > 0)?;
            let c = e.counters.as_ref()?;
            Some(
                c.total
                    .iter()
                    .map(|(k, v)| (k.clone(), v / units as f64))
                    .collect(),
            )
        })
        .collect()
}

/// Each trial's sessions per sample in each wait.
fn waits_per_sample(ev: &[&TrialEvidence]) -> Vec<std::collections::BTreeMap<String, f64>> {
    ev.iter()
        .filter_map(|e| {
            let w = e.waits.as_ref().filter(|w| w.samples > 0)?;
            Some(
                w.counts
                    .iter()
                    .map(|(k, v)| (k.clone(), *v as f64 / w.samples as f64))
                    .collect(),
            )
        })
        .collect()
}

/// Each profiled trial's share of samples (%) spent in each function itself.
fn function_shares(ev: &[&TrialEvidence]) -> Vec<std::collections::BTreeMap<String, f64>> {
    ev.iter()
        .filter_map(|e| e.profile.as_ref().filter(|p| p.samples > 0))
        .map(|p| {
            p.self_shares()
                .into_iter()
                .map(|(k, v)| (k, v * 100.0))
                .collect()
        })
        .collect()
}

/// The cells of one configuration in one workload × client count (perfrun cells left out:
/// a perfrun is explained query by query by its own counters).
pub(crate) fn cells_of<'a>(
    data: &'a ReportData,
    workload: &str,
    clients: u32,
    configuration: &str,
) -> Vec<&'a StoredCell> {
    data.stored
        .iter()
        .filter(|c| {
            c.workload == workload && c.clients == clients && c.configuration == configuration
        })
        .filter(|c| c.kind != ResultKind::Perfrun)
        .collect()
}

/// The workloads of the stored cells, in their order.
pub(crate) fn workloads(data: &ReportData) -> Vec<&String> {
    let mut seen = Vec::new();
    for c in &data.stored {
        if !seen.contains(&&c.workload) {
            seen.push(&c.workload);
        }
    }
    seen
}

/// The engine of a cell's server, from the settings its trials read.
fn engine_of(cells: &[&StoredCell]) -> Option<ServerEngine> {
    cells
        .iter()
        .flat_map(|c| &c.trials)
        .find_map(|t| t.environment.as_deref()?.server_settings.as_ref()?.engine())
}

/// What a name missing from a trial's figures means.
#[derive(Clone, Copy, PartialEq)]
enum Missing {
    /// Nothing seen: a wait no session was in, a function no sample was in.
    Zero,
    /// Not reported: the server has no such counter (another version, another engine). A
    /// name only one side reports is not compared: its zeros would read as "new".
    Unknown,
}

/// How the figures of one table are ranked after the called changes.
#[derive(Clone, Copy, PartialEq)]
enum Rank {
    /// Figures of different units (counters per transaction: bytes, pages, rows): by the size
    /// of the relative change, a figure A never had first.
    Relative,
    /// Figures of one unit (wait samples per transaction, shares of the profile): by how much
    /// they moved, so a wait that appears once in B does not outrank one that grew a
    /// hundredfold.
    Absolute,
}

/// The figures of every name either side has, compared as one Holm family; called changes
/// first, then as `rank` says, `top` of them.
fn changed(
    a: &[std::collections::BTreeMap<String, f64>],
    b: &[std::collections::BTreeMap<String, f64>],
    data: &ReportData,
    top: usize,
    rank: Rank,
    missing: Missing,
) -> Vec<WhyFigure> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let (in_a, in_b): (BTreeSet<&String>, BTreeSet<&String>) = (
        a.iter().flat_map(|m| m.keys()).collect(),
        b.iter().flat_map(|m| m.keys()).collect(),
    );
    let names: BTreeSet<&String> = match missing {
        Missing::Zero => in_a.union(&in_b).copied().collect(),
        Missing::Unknown => in_a.intersection(&in_b).copied().collect(),
    };
    let values = |side: &[std::collections::BTreeMap<String, f64>], n: &str| -> Vec<f64> {
        side.iter()
            .map(|m| m.get(n).copied().unwrap_or(0.0))
            .collect()
    };
    let pairs: Vec<(Vec<f64>, Vec<f64>)> =
        names.iter().map(|n| (values(a, n), values(b, n))).collect();
    let results = stats::compare_all(&pairs, &data.compare_options);
    // (figure, called, relative size, absolute difference of the medians)
    let mut rows: Vec<(WhyFigure, bool, f64, f64)> = names
        .into_iter()
        .zip(pairs)
        .zip(results)
        .map(|((name, (va, vb)), c)| {
            let (ma, mb) = (stats::median(&va), stats::median(&vb));
            let size = match (ma, mb) {
                (Some(x), Some(y)) if x != 0.0 => (y / x - 1.0).abs(),
                (_, Some(y)) if y != 0.0 => f64::INFINITY,
                _ => 0.0,
            };
            let called = c.verdict.is_change();
            let diff = (mb.unwrap_or(0.0) - ma.unwrap_or(0.0)).abs();
            (
                WhyFigure {
                    name: name.clone(),
                    a: ma,
                    b: mb,
                    delta: c.delta,
                    ci: c.delta_ci,
                    verdict: label(&c, "changed"),
                },
                called,
                size,
                diff,
            )
        })
        .filter(|(_, _, size, _)| *size > 1e-9)
        .collect();
    // Called changes first, then the largest relative change (new figures first), then the
    // largest absolute one (two new figures: the one seen more).
    rows.sort_by(|x, y| {
        let called = y.1.cmp(&x.1);
        match rank {
            Rank::Relative => called.then(y.2.total_cmp(&x.2)).then(y.3.total_cmp(&x.3)),
            Rank::Absolute => called.then(y.3.total_cmp(&x.3)).then(y.2.total_cmp(&x.2)),
        }
    });
    rows.into_iter().take(top).map(|r| r.0).collect()
}

fn label(c: &Comparison, change: &str) -> String {
    match c.verdict {
        Verdict::Improvement | Verdict::Regression => change.to_owned(),
        v => v.label().to_owned(),
    }
}

/// Why each configuration differs from the baseline, per workload × client count that has
/// evidence on both sides.
pub fn why(data: &ReportData) -> Vec<WhyComparison> {
    let mut out = Vec::new();
    for w in workloads(data) {
        for &n in &data.clients {
            let cells_of = |conf: &str| cells_of(data, w, n, conf);
            let base = cells_of(&data.baseline);
            let ev_a = evidence_of(&base);
            if ev_a.is_empty() {
                continue;
            }
            for conf in data.others() {
                let other = cells_of(conf);
                let ev_b = evidence_of(&other);
                if ev_b.is_empty() {
                    continue;
                }
                let unit = ev_a
                    .iter()
                    .chain(&ev_b)
                    .find_map(|e| e.cpu.as_ref().map(|c| c.unit_abbrev().to_owned()))
                    .unwrap_or_else(|| "unit".to_owned());
                let cpu = [SERVER_CPU, CLIENT_CPU]
                    .iter()
                    .filter_map(|fig| {
                        let key = format!("{w} {fig}");
                        let r = data.comparison(conf, &key, n)?;
                        let median = |c: &str| {
                            data.cell(c, &key, n)
                                .and_then(|c| c.summary.as_ref())
                                .map(|s| s.median)
                        };
                        Some(WhyFigure {
                            name: format!("{fig} (µs/{unit})"),
                            a: median(&data.baseline),
                            b: median(conf),
                            delta: r.comparison.delta,
                            ci: r.comparison.delta_ci,
                            verdict: r.comparison.verdict.label().to_owned(),
                        })
                    })
                    .collect();
                // Two engines count, wait and run different things: nothing of it compares.
                let engines = (engine_of(&base), engine_of(&other));
                let not_compared = match engines {
                    (Some(x), Some(y)) if x != y => Some(format!(
                        "{} and {} count, wait and run different things: their server counters, \
                         waits and functions are not compared (each side's top waits are listed)",
                        x.name(),
                        y.name()
                    )),
                    _ => None,
                };
                let across = not_compared.is_some();
                let counters = if across {
                    Vec::new()
                } else {
                    changed(
                        &counters_per_unit(&ev_a),
                        &counters_per_unit(&ev_b),
                        data,
                        TOP,
                        Rank::Relative,
                        Missing::Unknown,
                    )
                };
                let (wa, wb) = (waits_per_sample(&ev_a), waits_per_sample(&ev_b));
                let top_waits = [(&data.baseline, &wa), (&conf.to_owned(), &wb)]
                    .into_iter()
                    .filter(|(_, w)| !w.is_empty())
                    .map(|(c, w)| TopWaits {
                        configuration: c.clone(),
                        waits: top_of(w),
                    })
                    .collect();
                let (waits, functions) = if across {
                    (Vec::new(), Vec::new())
                } else {
                    (
                        changed(&wa, &wb, data, TOP, Rank::Absolute, Missing::Zero),
                        changed(
                            &function_shares(&ev_a),
                            &function_shares(&ev_b),
                            data,
                            TOP,
                            Rank::Absolute,
                            Missing::Zero,
                        ),
                    )
                };
                out.push(WhyComparison {
                    workload: w.clone(),
                    clients: n,
                    configuration: conf.to_owned(),
                    baseline: data.baseline.clone(),
                    unit,
                    cpu,
                    counters,
                    top_waits,
                    waits,
                    functions,
                    not_compared,
                });
            }
        }
    }
    out
}

/// The events with the highest median share, highest first.
fn top_of(trials: &[std::collections::BTreeMap<String, f64>]) -> Vec<(String, f64)> {
    let names: BTreeSet<&String> = trials.iter().flat_map(|m| m.keys()).collect();
    let mut v: Vec<(String, f64)> = names
        .into_iter()
        .filter_map(|n| {
            let values: Vec<f64> = trials
                .iter()
                .map(|m| m.get(n).copied().unwrap_or(0.0))
                .collect();
            Some((n.clone(), stats::median(&values)?))
        })
        .filter(|(_, m)| *m > 0.0)
        .collect();
    v.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    v.truncate(TOP);
    v
}

fn num(x: Option<f64>) -> String {
    match x {
        None => "-".to_owned(),
        Some(0.0) => "0".to_owned(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn figure_line(f: &WhyFigure) -> String {
    let delta = match (f.delta, f.a, f.b) {
        (Some(d), _, _) => format_change(d),
        (None, Some(a), Some(b)) if a == 0.0 && b != 0.0 => "new".to_owned(),
        _ => "-".to_owned(),
    };
    let ci = f.ci.map_or("-".to_owned(), |(lo, hi)| {
        format!("[{:+.1}, {:+.1}] %", lo * 100.0, hi * 100.0)
    });
    format!(
        "  {:<44} {:>12} {:>12} {:>9} {:>20}  {}",
        f.name,
        num(f.a),
        num(f.b),
        delta,
        ci,
        f.verdict
    )
}

/// The section's text: a header line and the figures, as every format prints it.
pub fn why_text(w: &WhyComparison) -> String {
    let mut lines = vec![format!(
        "  {:<44} {:>12} {:>12} {:>9} {:>20}  verdict",
        "", w.baseline, w.configuration, "delta", "95 % CI"
    )];
    if !w.cpu.is_empty() {
        lines.push(format!("CPU per {} (lower is better):", w.unit));
        lines.extend(w.cpu.iter().map(figure_line));
    }
    if let Some(n) = &w.not_compared {
        lines.push(n.clone());
    }
    if !w.counters.is_empty() {
        lines.push(format!("server counters per {} that changed most:", w.unit));
        lines.extend(w.counters.iter().map(figure_line));
    }
    for t in &w.top_waits {
        lines.push(format!(
            "top waits of {} (sessions per sample): {}",
            t.configuration,
            t.waits
                .iter()
                .map(|(n, v)| format!("{n} {v:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !w.waits.is_empty() {
        lines.push("waits (sessions per sample) that changed most:".to_owned());
        lines.extend(w.waits.iter().map(figure_line));
    }
    if !w.functions.is_empty() {
        lines.push(
            "functions whose share of the server profile changed most (% of samples, self):"
                .to_owned(),
        );
        lines.extend(w.functions.iter().map(figure_line));
    }
    lines.push(
        "changed = significant and beyond the noise band, as the verdicts (corrected within the counters and within the waits); ~ = not; too few trials, unreachable = uncalled, largest differences shown; a counter only one side reports is not compared"
            .to_owned(),
    );
    lines.join("\n") + "\n"
}

/// The title of one comparison's block.
pub fn why_title(w: &WhyComparison) -> String {
    format!(
        "Why: {} vs {} (baseline), {}, {} clients",
        w.configuration, w.baseline, w.workload, w.clients
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    /// A MariaDB and a PostgreSQL count different things: no counter of one is compared with
    /// the other's zeros ("new"), and the block says why; CPU per transaction is compared,
    /// with its interval.
    #[test]
    fn counters_of_two_engines_are_not_compared() {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = fixture::engines_run(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let all = why(&data);
        assert_eq!(all.len(), 2);
        for w in &all {
            assert!(w.counters.is_empty(), "{:?}", w.counters);
            assert!(
                w.not_compared
                    .as_deref()
                    .is_some_and(|n| n.starts_with("MariaDB and PostgreSQL count")),
                "{:?}",
                w.not_compared
            );
            let text = why_text(w);
            assert!(!text.contains(" new "), "{text}");
            assert!(!text.contains("blks_hit") && !text.contains("Innodb_rows_read"));
            let server = &w.cpu[0];
            assert!(server.ci.is_some(), "{server:?}");
        }
        let text = why_text(&all[0]);
        assert!(
            text.contains("[+"),
            "the interval beside the verdict: {text}"
        );
    }

    /// Within one engine a counter only one side reports (another version has it) is not
    /// compared with zeros; a wait only one side was seen in is (zero is what was seen).
    #[test]
    fn a_counter_one_side_does_not_report_is_not_new() {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = fixture::demo_run(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let side = |extra: &str, v: f64| -> Vec<std::collections::BTreeMap<String, f64>> {
            (0..6)
                .map(|i| {
                    [("Com_select", 10.0 + f64::from(i) * 0.01), (extra, v)]
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), *v))
                        .collect()
                })
                .collect()
        };
        let (a, b) = (side("Old_only", 5.0), side("New_only", 7.0));
        let counters = changed(&a, &b, &data, TOP, Rank::Relative, Missing::Unknown);
        assert!(counters.is_empty(), "{counters:?}");
        let waits = changed(&a, &b, &data, TOP, Rank::Absolute, Missing::Zero);
        let names: Vec<&str> = waits.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["New_only", "Old_only"]);
    }
}
