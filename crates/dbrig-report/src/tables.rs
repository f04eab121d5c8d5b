//! The plan report's tables: assembled once as rows of strings, rendered as aligned console
//! text, Markdown or HTML, so every format shows the same figures. A report has one section
//! per kind in plan order, each in its own layout: OLTP by client count in the report metric,
//! micro-benchmarks and throughput tests per item in each item's unit, power tests in the
//! DBT-3 seed table, perfruns in the seed's Query / Cache layout.
//!
//! Number formats follow the seeds: medians with two decimals, `B/A*100` (e.g. `103.15`) and
//! `(B/A*100)-100` (e.g. `-26.61*`), a trailing `*` marking unusually high spread.

use std::fmt::Write;

use dbrig_core::results::ResultKind;

pub use crate::blocks::*;
use crate::data::ReportData;
use crate::error::ReportError;
use crate::settings::{durability_flags, settings_tables};

/// Every section of a report in plan order, each kind in its own layout.
pub fn sections(data: &ReportData) -> Result<Vec<SectionView>, ReportError> {
    let mut out = Vec::new();
    for (i, s) in data.sections.iter().enumerate() {
        let mut blocks = Vec::new();
        // A single command's run first, whole, as the command printed it.
        if let Some(text) = data.single_run.as_ref().filter(|_| i == 0) {
            blocks.push((
                None,
                Block::Text {
                    title: "The run as the command printed it".to_owned(),
                    body: text.clone(),
                },
            ));
        }
        blocks.extend(crate::kinds::of(s.kind).section(data, &s.workloads)?);
        if let Some(v) = verdict_block(data, s.kind) {
            blocks.push((None, v));
        }
        for w in crate::why::why(data)
            .iter()
            .filter(|w| s.workloads.contains(&w.workload))
        {
            blocks.push((
                None,
                Block::Text {
                    title: crate::why::why_title(w),
                    body: crate::why::why_text(w),
                },
            ));
        }
        out.push(SectionView {
            kind: s.kind,
            title: s.title.to_owned(),
            blocks,
        });
    }
    Ok(out)
}

/// What precedes the sections: run, metric, baseline, server versions, trials left out.
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
    let oltp = data.has_kind(ResultKind::Oltp);
    let others = data.sections.iter().any(|s| s.kind != ResultKind::Oltp);
    lines.push(match (oltp, others) {
        (true, false) => format!(
            "metric: {} (higher is better); baseline: {}",
            data.metric.label(),
            data.baseline
        ),
        (true, true) => format!(
            "metric: {} for OLTP (higher is better), every other item in its own unit; baseline: {}",
            data.metric.label(),
            data.baseline
        ),
        _ => format!("metric: each item's own unit; baseline: {}", data.baseline),
    });
    for v in &data.server_versions {
        let versions = if v.versions.is_empty() {
            "unknown".to_owned()
        } else {
            v.versions.join(", ")
        };
        lines.push(format!("server version of {}: {versions}", v.configuration));
        for c in &v.connections {
            lines.push(format!("connection of {}: {c}", v.configuration));
        }
    }
    let off: std::collections::BTreeSet<&str> = data
        .stored
        .iter()
        .filter(|c| {
            c.trials.iter().any(|t| {
                t.environment
                    .as_deref()
                    .and_then(|e| e.evidence.as_ref())
                    .is_some_and(|e| e.switched_off)
            })
        })
        .map(|c| c.configuration.as_str())
        .collect();
    if !off.is_empty() {
        lines.push(format!(
            "evidence not collected (switched off) for: {}; no CPU per unit, counters, waits or profile, no \"why\" for them",
            off.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    lines.extend(build_lines(data));
    let ex = data.excluded();
    if ex.total() > 0 {
        lines.push(format!(
            "not counted: {} trial(s) ({}); they are listed, never averaged in",
            ex.total(),
            ex.describe()
        ));
    }
    lines.extend(durability_flags(data));
    lines.extend(verdict_flags(data));
    lines
}

/// Each configuration's server build, when dbrig built it from source: revision, recipe,
/// flags and compiler, as recorded with its trials (the last trial's).
pub fn build_lines(data: &ReportData) -> Vec<String> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for c in &data.stored {
        let build = c
            .trials
            .iter()
            .rev()
            .find_map(|t| t.environment.as_deref()?.server.as_ref()?.build.clone());
        if let Some(b) = build {
            let line = format!(
                "build of {}: {} from {}, recipe {}, CFLAGS \"{}\", compiler {}, prefix {}{}",
                c.configuration,
                b.revision,
                b.source,
                b.recipe,
                b.flags,
                b.compiler,
                b.prefix,
                if b.cached { " (cached)" } else { "" }
            );
            if !seen.iter().any(|(conf, _)| *conf == c.configuration) {
                seen.push((c.configuration.clone(), line));
            }
        }
    }
    seen.into_iter().map(|(_, l)| l).collect()
}

/// The console report: preamble, then each kind's section (titled when there are several).
pub fn report_text(data: &ReportData) -> Result<String, ReportError> {
    let mut out = String::new();
    let _ = writeln!(out, "dbrig report: {}", data.title);
    for l in preamble(data) {
        let _ = writeln!(out, "{l}");
    }
    let sections = sections(data)?;
    let titled = sections.len() > 1;
    for s in sections {
        if titled {
            let _ = writeln!(
                out,
                "\n{}\n{}",
                s.title,
                "=".repeat(s.title.chars().count())
            );
        }
        for (_, b) in s.blocks {
            let _ = writeln!(out);
            match b {
                Block::Table(t) | Block::Verdicts(t) => out.push_str(&t.to_text()),
                Block::Text { title, body } => {
                    let _ = write!(out, "{title}\n{body}");
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "{n}");
                }
            }
        }
    }
    for t in settings_tables(data) {
        let _ = writeln!(out);
        out.push_str(&t.to_text());
    }
    Ok(out)
}

/// The same report as Markdown.
pub fn report_markdown(data: &ReportData) -> Result<String, ReportError> {
    let mut out = String::new();
    let _ = writeln!(out, "# dbrig report: {}\n", data.title);
    for l in preamble(data) {
        let _ = writeln!(out, "- {}", l.replace('*', "\\*"));
    }
    let sections = sections(data)?;
    let titled = sections.len() > 1;
    for s in sections {
        if titled {
            let _ = writeln!(out, "\n## {}", s.title);
        }
        for (_, b) in s.blocks {
            let _ = writeln!(out);
            match b {
                Block::Table(t) | Block::Verdicts(t) => out.push_str(&t.to_markdown()),
                Block::Text { title, body } => {
                    let _ = write!(out, "### {title}\n\n```text\n{body}```\n");
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "{}", n.replace('*', "\\*"));
                }
            }
        }
    }
    for t in settings_tables(data) {
        let _ = writeln!(out);
        out.push_str(&t.to_markdown());
    }
    Ok(out)
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

    /// CPU per unit of work beside an OLTP workload has a row per client count: PostgreSQL's
    /// server CPU per transaction is 16.9 % above MariaDB's at 1 client and 23 % below at 16
    /// (the table showed the 1-client row alone, unlabelled).
    #[test]
    fn cpu_per_unit_of_work_has_a_row_per_client_count() {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = crate::fixture::engines_run(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let t = item_table(&data, "oltp_read_only", "CPU per unit of work");
        assert_eq!(t.header[..3], ["item", "clients", "unit"]);
        let rows: Vec<(&str, &str, &str)> = t
            .rows
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str(), r[6].as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("server CPU", "1", "16.90"),
                ("server CPU", "16", "-23.00"),
                ("client CPU", "1", "0.00"),
                ("client CPU", "16", "0.00"),
            ]
        );
        // A micro-benchmark's items, measured once per trial, keep two first columns.
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = crate::fixture::mixed_plan(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let t = item_table(&data, "memory_load", "items");
        assert_eq!(t.header[..2], ["item", "unit"]);
    }

    /// A single command's run in Markdown (and on its HTML page, from the same sections)
    /// shows what the command printed: TPS beside QPS, the latency table, each statement's
    /// latencies, errors and reconnects, and the seed.
    #[test]
    fn a_single_runs_markdown_shows_tps_latencies_statements_errors_and_seed() {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let runs = crate::fixture::single_runs(&mut store).unwrap();
        let data = ReportData::load(&store, runs.oltp).unwrap();
        let md = report_markdown(&data).unwrap();
        for want in [
            "transactions:",
            "queries:",
            "ignored errors:",
            "reconnects:",
            "95th percentile:",
            "Latency percentiles (ms, HDR histogram):",
            "Statement latency (ms):",
            "random seed:                         42",
        ] {
            assert!(md.contains(want), "{want:?} missing:\n{md}");
        }
        // The power test's page says its scale factor.
        let data = ReportData::load(&store, runs.power).unwrap();
        let md = report_markdown(&data).unwrap();
        assert!(md.contains("TPC-H power test, SF "), "{md}");
        // A plan's run (many cells) has no such block.
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = crate::fixture::demo_run(&mut store).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        assert_eq!(data.single_run, None);
    }

    /// The verdict table of a `plans/sqlite-quick.toml` run with `trials` a side, text 4.33
    /// times as fast as prepared on all four rows, under the plan's `report` options.
    fn quick_verdicts(trials: usize, report: serde_json::Value) -> (ReportData, Table) {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = crate::fixture::quick_run(&mut store, trials, 4.33, report).unwrap();
        let data = ReportData::load(&store, run).unwrap();
        let Some(Block::Verdicts(v)) = verdict_block(&data, ResultKind::Oltp) else {
            panic!("the quick run has verdicts")
        };
        (data, v)
    }

    /// Four trials a side, four rows, each B 333 % faster: under Holm no p-value can fall
    /// below 0.05 (4 · 2/70 = 0.114), and the report says so instead of calling each row
    /// "no significant change", with the 5 a side that would reach a verdict and the
    /// interval beside it; under Benjamini-Hochberg, the default, all four are called.
    #[test]
    fn verdicts_say_when_no_verdict_was_reachable_and_bh_reaches_them() {
        let (data, v) = quick_verdicts(4, serde_json::json!({"correction": "holm"}));
        assert_eq!(
            data.compare_options.correction,
            dbrig_core::stats::Correction::Holm
        );
        assert_eq!(v.header[5], "p (Holm)");
        assert_eq!(v.rows.len(), 4);
        for row in &v.rows {
            assert_eq!(row[4], "+333.00 %");
            assert_eq!(row[5], "0.1143");
            assert_eq!(row[6], "5 for ±332.0 %");
            assert!(row[7].starts_with("[+3"), "{row:?}");
            assert_eq!(row[8], "unreachable");
        }
        assert_eq!(
            v.notes[0],
            "NO VERDICT WAS REACHABLE with the trials run: with 4 trial(s) a side even \
             completely separated trials give p ≥ 0.1143 after the Holm-Bonferroni (family-wise \
             error rate) correction across 4 comparison(s) (alpha 0.05); run 5 or more a side"
        );
        let text = report_text(&data).unwrap();
        // Said at the top too, where a reader looks first, and above the table.
        assert_eq!(
            text.matches("NO VERDICT WAS REACHABLE").count(),
            2,
            "{text}"
        );
        assert!(
            text.lines().take(8).any(|l| l.starts_with("NO VERDICT")),
            "{text}"
        );
        // The same trials under Benjamini-Hochberg (the default; `--correction fdr`).
        let mut data = data;
        data.set_correction(dbrig_core::stats::Correction::Fdr);
        let Some(Block::Verdicts(v)) = verdict_block(&data, ResultKind::Oltp) else {
            panic!("verdicts")
        };
        assert_eq!(v.header[5], "p (BH)");
        for row in &v.rows {
            assert_eq!(
                (row[5].as_str(), row[8].as_str()),
                ("0.0286", "improvement")
            );
        }
        assert!(!v.notes[0].contains("REACHABLE"), "{:?}", v.notes);
        let (_, v) = quick_verdicts(4, serde_json::json!({}));
        assert_eq!(v.header[5], "p (BH)");
        assert!(v.rows.iter().all(|r| r[8] == "improvement"));
        // Five a side: Holm reaches them too (4 · 2/252 = 0.032).
        let (_, v) = quick_verdicts(5, serde_json::json!({"correction": "holm"}));
        assert!(v.rows.iter().all(|r| r[8] == "improvement"), "{:?}", v.rows);
        assert!(v.rows.iter().all(|r| r[6] == "5 for ±332.0 %"));
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
        let Some(Block::Verdicts(v)) = verdict_block(&data, ResultKind::Oltp) else {
            panic!("the demo has verdicts")
        };
        assert_eq!(v.rows.len(), 12);
        let last = v.rows.last().unwrap();
        assert_eq!(last[2], "32 vs off");
        // 12 % slower with little noise: 4 trials a side would narrow the interval to the
        // ±11 % that calling it needs, but among the report's 12 comparisons a p-value can
        // fall below 0.05 only from 6 a side (2/924 · 12 = 0.026; 5 give 0.095).
        assert_eq!(v.header[6], "trials for");
        assert_eq!(last[6], "6 for ±11.0 %");
        assert_eq!(last[7], "[-12.87, -11.12] %");
        assert_eq!(last[8], "regression");
    }
}
