//! The CI gate: a run's figures held against their series' history (or a named baseline
//! run) with the report's own statistics — Mann–Whitney on the trials, corrected for the
//! run's many series as one family, a change called only when its whole interval lies beyond
//! the noise band — and one exit status a CI job can act on, a Markdown summary fit for a
//! pull-request comment or `$GITHUB_STEP_SUMMARY`, and JUnit XML.
//!
//! The history a run is held against is its series' current level: the trials of the points
//! since the series' last change point before the run, at most [`GateOptions::points`] of
//! them, so an old level long left behind is not the baseline.

use std::fmt::Write as _;

use dbrig_core::changepoint::ChangePointOptions;
use dbrig_core::stats::{self, CompareOptions, Comparison, Verdict};
use dbrig_store::{RunId, Store};
use serde::Serialize;

use crate::error::ReportError;
use crate::history::{HistoryFilter, Series, SeriesKey, history};

/// What the gate holds a run against.
#[derive(Debug, Clone)]
pub struct GateOptions {
    /// The run gated; the newest run when `None`.
    pub run: Option<RunId>,
    /// A run to hold it against instead of the history (its cells of the same series).
    pub baseline: Option<RunId>,
    /// Most points of history taken as the baseline (after the last change point).
    pub points: usize,
    /// The band inside which no change is called (0.01: ±1 %).
    pub noise_band: f64,
    /// Significance level of the family of series.
    pub alpha: f64,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            run: None,
            baseline: None,
            points: 10,
            noise_band: 0.01,
            alpha: 0.05,
        }
    }
}

/// The outcome, as the exit status says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    /// Every series decided, none worse beyond the band: exit 0.
    Pass,
    /// At least one series worse beyond the band: exit 1.
    Regression,
    /// No regression, but some series could not be decided (no history, too few trials, an
    /// interval too wide to call): exit 3.
    Undecided,
}

impl GateOutcome {
    pub fn exit_code(self) -> u8 {
        match self {
            GateOutcome::Pass => 0,
            GateOutcome::Regression => 1,
            GateOutcome::Undecided => 3,
        }
    }
}

/// One series of the gated run against its baseline.
#[derive(Debug, Clone, Serialize)]
pub struct GateRow {
    pub key: SeriesKey,
    pub higher_is_better: bool,
    /// The runs whose trials make the baseline.
    pub baseline_runs: Vec<RunId>,
    pub baseline: Vec<f64>,
    pub current: Vec<f64>,
    pub comparison: Comparison,
    /// Why the row decides nothing, when it does not.
    pub undecided: Option<String>,
}

/// The gate's answer.
#[derive(Debug, Clone, Serialize)]
pub struct GateReport {
    pub run: RunId,
    pub outcome: GateOutcome,
    pub noise_band: f64,
    pub rows: Vec<GateRow>,
}

/// A series, the runs of its baseline, the baseline's trials and the gated run's.
type Sides<'a> = (&'a Series, Vec<RunId>, Vec<f64>, Vec<f64>);

/// Hold a run against its series' history (or a baseline run).
pub fn gate(store: &Store, opts: &GateOptions) -> Result<GateReport, ReportError> {
    let run = match opts.run {
        Some(r) => r,
        None => store.latest_run_id()?.ok_or(ReportError::NothingToGate)?,
    };
    store.run(run)?;
    let all = history(
        store,
        &HistoryFilter::default(),
        &ChangePointOptions::default(),
    )?;
    let mine: Vec<&Series> = all
        .iter()
        .filter(|s| s.points.iter().any(|p| p.run == run))
        .collect();
    if mine.is_empty() {
        return Err(ReportError::EmptyRun { run });
    }
    // Each series' two sides: the baseline's runs and trials, and the gated run's trials.
    let sides: Vec<Sides<'_>> = mine
        .iter()
        .map(|s| {
            let at = s.points.iter().position(|p| p.run == run).unwrap_or(0);
            let base: Vec<&crate::history::Point> = match opts.baseline {
                Some(b) => s.points.iter().filter(|p| p.run == b).collect(),
                None => {
                    let level_from = s
                        .changes
                        .iter()
                        .map(|c| c.index)
                        .filter(|&i| i < at)
                        .max()
                        .unwrap_or(0);
                    let from = level_from.max(at.saturating_sub(opts.points));
                    s.points[from..at].iter().collect()
                }
            };
            (
                *s,
                base.iter().map(|p| p.run).collect(),
                base.iter().flat_map(|p| p.values.iter().copied()).collect(),
                s.points[at].values.clone(),
            )
        })
        .collect();
    // One family: every series of the run, corrected together, each in its own direction.
    let pairs: Vec<(Vec<f64>, Vec<f64>)> = sides
        .iter()
        .map(|(_, _, base, current)| (base.clone(), current.clone()))
        .collect();
    let options = |higher: bool| CompareOptions {
        noise_band: opts.noise_band,
        alpha: opts.alpha,
        ..CompareOptions::new(higher)
    };
    // The correction does not depend on direction; the verdict does: one family each way.
    let higher = stats::compare_all(&pairs, &options(true));
    let lower = stats::compare_all(&pairs, &options(false));
    let rows: Vec<GateRow> = sides
        .into_iter()
        .enumerate()
        .map(|(i, (s, baseline_runs, baseline, current))| {
            let comparison = if s.higher_is_better {
                higher[i].clone()
            } else {
                lower[i].clone()
            };
            let undecided = match comparison.verdict {
                _ if baseline.is_empty() => Some(match opts.baseline {
                    Some(b) => format!("run {b} has no figure of this series"),
                    None => "no earlier run of this series".to_owned(),
                }),
                Verdict::TooFewTrials => Some(format!(
                    "too few trials to test ({} against {}; {} a side are needed)",
                    current.len(),
                    baseline.len(),
                    options(s.higher_is_better).min_trials
                )),
                Verdict::Unreachable => {
                    Some("no verdict is reachable with these trials".to_owned())
                }
                _ => None,
            };
            GateRow {
                key: s.key.clone(),
                higher_is_better: s.higher_is_better,
                baseline_runs,
                baseline,
                current,
                comparison,
                undecided,
            }
        })
        .collect();
    let outcome = if rows
        .iter()
        .any(|r| r.comparison.verdict == Verdict::Regression)
    {
        GateOutcome::Regression
    } else if rows.iter().any(|r| r.undecided.is_some()) {
        GateOutcome::Undecided
    } else {
        GateOutcome::Pass
    };
    Ok(GateReport {
        run,
        outcome,
        noise_band: opts.noise_band,
        rows,
    })
}

fn percent(x: Option<f64>) -> String {
    x.map(|d| format!("{:+.1} %", d * 100.0))
        .unwrap_or_else(|| "–".to_owned())
}

fn interval(c: &Comparison) -> String {
    c.delta_ci
        .map(|(lo, hi)| format!("[{:+.1}, {:+.1}] %", lo * 100.0, hi * 100.0))
        .unwrap_or_else(|| "–".to_owned())
}

fn verdict_of(r: &GateRow) -> String {
    match &r.undecided {
        Some(why) => format!("undecided: {why}"),
        None => r.comparison.verdict.label().to_owned(),
    }
}

/// The summary as Markdown: the outcome first, then one row per series.
pub fn gate_markdown(report: &GateReport) -> String {
    let mut md = String::new();
    let head = match report.outcome {
        GateOutcome::Pass => "✅ no regression",
        GateOutcome::Regression => "❌ regression",
        GateOutcome::Undecided => "⚠️ undecided",
    };
    let _ = writeln!(
        md,
        "## dbrig gate: {head} (run {})\n\nNoise band ±{:.1} %; each change tested with Mann–Whitney over the trials, corrected for the run's {} series.\n",
        report.run,
        report.noise_band * 100.0,
        report.rows.len()
    );
    md.push_str("| series | baseline runs | baseline median | this run | change | 95 % interval | p (adjusted) | verdict |\n");
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in &report.rows {
        let runs = if r.baseline_runs.is_empty() {
            "–".to_owned()
        } else {
            r.baseline_runs
                .iter()
                .map(|id| id.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let med = |v: &[f64]| {
            stats::median(v)
                .map(|m| format!("{m:.2}"))
                .unwrap_or_else(|| "–".to_owned())
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.key.label().replace('|', "\\|"),
            runs,
            med(&r.baseline),
            med(&r.current),
            percent(r.comparison.delta),
            interval(&r.comparison),
            r.comparison
                .p_adjusted
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "–".to_owned()),
            verdict_of(r)
        );
    }
    md
}

/// JUnit XML: a test case per series, a failure for a regression, skipped when undecided.
pub fn gate_junit(report: &GateReport) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let failures = report
        .rows
        .iter()
        .filter(|r| r.comparison.verdict == Verdict::Regression)
        .count();
    let skipped = report.rows.iter().filter(|r| r.undecided.is_some()).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuite name=\"dbrig gate (run {})\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">",
        report.run,
        report.rows.len()
    );
    for r in &report.rows {
        let _ = write!(
            xml,
            "  <testcase classname=\"dbrig.{}\" name=\"{}\"",
            esc(&r.key.workload),
            esc(&r.key.label())
        );
        let detail = format!(
            "change {} interval {} p {} ({})",
            percent(r.comparison.delta),
            interval(&r.comparison),
            r.comparison
                .p_adjusted
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "–".to_owned()),
            verdict_of(r)
        );
        if r.comparison.verdict == Verdict::Regression {
            let _ = writeln!(
                xml,
                ">\n    <failure message=\"regression\">{}</failure>\n  </testcase>",
                esc(&detail)
            );
        } else if let Some(why) = &r.undecided {
            let _ = writeln!(
                xml,
                ">\n    <skipped message=\"{}\"/>\n  </testcase>",
                esc(why)
            );
        } else {
            let _ = writeln!(xml, "/>");
        }
    }
    xml.push_str("</testsuite>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::quick_run;

    /// `before` runs of the quick plan (6 trials a cell: enough for a verdict against one run
    /// with 8 series corrected together) at full speed, then `after`: its `text`
    /// configuration at `speed` (the `prepared` one never changes).
    fn store_with(before: usize, speed: f64, after: usize) -> Store {
        let mut store = Store::open_in_memory().unwrap();
        for _ in 0..before {
            quick_run(&mut store, 6, 1.0, serde_json::json!({})).unwrap();
        }
        for _ in 0..after {
            quick_run(&mut store, 6, speed, serde_json::json!({})).unwrap();
        }
        store
    }

    #[test]
    fn a_slower_run_fails_the_gate_and_says_which_series() {
        let store = store_with(8, 0.8, 1);
        let report = gate(&store, &GateOptions::default()).unwrap();
        assert_eq!(report.outcome, GateOutcome::Regression);
        assert_eq!(report.outcome.exit_code(), 1);
        let worse: Vec<_> = report
            .rows
            .iter()
            .filter(|r| r.comparison.verdict == Verdict::Regression)
            .map(|r| (r.key.configuration.as_str(), r.key.clients))
            .collect();
        assert_eq!(worse.len(), 4, "{worse:?}");
        assert!(worse.iter().all(|(c, _)| *c == "text"), "{worse:?}");
        let row = report
            .rows
            .iter()
            .find(|r| r.key.configuration == "text")
            .unwrap();
        assert_eq!(row.baseline_runs.len(), 8);
        assert!((row.comparison.delta.unwrap() + 0.2).abs() < 1e-9);
        let md = gate_markdown(&report);
        assert!(md.starts_with("## dbrig gate: ❌ regression"), "{md}");
        assert!(
            md.contains("| regression |") && md.contains("-20.0 %"),
            "{md}"
        );
        let xml = gate_junit(&report);
        assert!(
            xml.contains("tests=\"8\" failures=\"4\" skipped=\"0\""),
            "{xml}"
        );
        assert_eq!(xml.matches("<failure").count(), 4);
    }

    #[test]
    fn the_same_speed_passes_and_a_faster_run_is_no_regression() {
        for speed in [1.0, 1.25] {
            let store = store_with(8, speed, 1);
            let report = gate(&store, &GateOptions::default()).unwrap();
            assert_eq!(report.outcome, GateOutcome::Pass, "speed {speed}");
            assert_eq!(report.outcome.exit_code(), 0);
            let improved = report
                .rows
                .iter()
                .filter(|r| r.comparison.verdict == Verdict::Improvement)
                .count();
            assert_eq!(improved, if speed > 1.0 { 4 } else { 0 });
        }
    }

    #[test]
    fn without_history_the_gate_says_it_cannot_decide() {
        let store = store_with(1, 1.0, 0);
        let report = gate(&store, &GateOptions::default()).unwrap();
        assert_eq!(report.outcome, GateOutcome::Undecided);
        assert_eq!(report.outcome.exit_code(), 3);
        assert!(
            report
                .rows
                .iter()
                .all(|r| r.undecided.as_deref() == Some("no earlier run of this series"))
        );
        assert!(gate_markdown(&report).contains("undecided: no earlier run"));
        assert!(gate_junit(&report).contains("skipped=\"8\""));
    }

    #[test]
    fn a_named_baseline_run_replaces_the_history() {
        let store = store_with(3, 0.8, 2);
        // Against the run before it (also slow), the newest run is no regression...
        let report = gate(
            &store,
            &GateOptions {
                baseline: Some(RunId(4)),
                ..GateOptions::default()
            },
        )
        .unwrap();
        assert_eq!(report.outcome, GateOutcome::Pass);
        assert!(
            report
                .rows
                .iter()
                .all(|r| r.baseline_runs == vec![RunId(4)])
        );
        // ...against the first, it is.
        let report = gate(
            &store,
            &GateOptions {
                baseline: Some(RunId(1)),
                ..GateOptions::default()
            },
        )
        .unwrap();
        assert_eq!(report.outcome, GateOutcome::Regression);
    }

    #[test]
    fn the_baseline_is_the_level_since_the_last_change_point() {
        // 8 fast runs, 8 slow ones, then one more slow: the slow level is the baseline.
        let store = store_with(8, 0.8, 9);
        let report = gate(&store, &GateOptions::default()).unwrap();
        assert_eq!(
            report.outcome,
            GateOutcome::Pass,
            "{:?}",
            report.rows[0].baseline_runs
        );
        let text = report
            .rows
            .iter()
            .find(|r| r.key.configuration == "text")
            .unwrap();
        assert!(
            text.baseline_runs.iter().all(|r| r.0 > 8),
            "{:?}",
            text.baseline_runs
        );
    }
}
