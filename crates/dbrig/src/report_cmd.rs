//! `dbrig report` and `dbrig compare`: plan reports rebuilt from the results database alone.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use dbrig_report::{
    Metric, ReportData, cells_csv, charts, latency_chart, render_html, report_json,
    report_markdown, report_text, throughput_chart, trials_csv, write_atomic,
};
use dbrig_store::{RunId, Store};

use crate::cli::StoreArgs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned tables for the console.
    Text,
    /// Everything as one JSON document.
    Json,
    /// One row per cell (summary and comparison with the baseline).
    Csv,
    /// One row per trial, every status included.
    CsvTrials,
    /// The console tables as Markdown.
    Markdown,
    /// One self-contained page with the charts (written to --output, default OUT/report-RUN.html).
    Html,
    /// The charts as SVG files in the folder --output (default OUT/charts-RUN).
    Svg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    Qps,
    Tps,
}

impl From<MetricArg> for Metric {
    fn from(m: MetricArg) -> Self {
        match m {
            MetricArg::Qps => Metric::Qps,
            MetricArg::Tps => Metric::Tps,
        }
    }
}

/// Choices shared by `report` and `compare`.
#[derive(Debug, Clone, Args)]
pub struct ReportOptions {
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write here instead of stdout (html: the page, svg: a folder). Written atomically.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Configuration the others are compared with (default: the first in the plan).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Throughput figure to rank and compare by.
    #[arg(long, value_enum, default_value_t = MetricArg::Qps)]
    pub metric: MetricArg,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Run id (see `dbrig runs`) or `latest`.
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub opts: ReportOptions,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline run id (or `latest`).
    pub run_a: String,
    /// Run compared with it (or `latest`).
    pub run_b: String,
    #[command(flatten)]
    pub opts: ReportOptions,
}

fn open_store(store: &StoreArgs) -> Result<Store> {
    let path = store.results_path();
    if !path.exists() {
        bail!(
            "no results database at {}: run a benchmark first, or pass --results PATH",
            path.display()
        );
    }
    Store::open(&path).with_context(|| format!("opening {}", path.display()))
}

fn resolve_run(store: &Store, arg: &str) -> Result<RunId> {
    if arg.eq_ignore_ascii_case("latest") {
        return store
            .latest_run_id()?
            .ok_or_else(|| anyhow!("the results database holds no runs yet"));
    }
    let id: i64 = arg
        .parse()
        .map_err(|_| anyhow!("run {arg:?} is neither a run id nor `latest`"))?;
    Ok(RunId(id))
}

pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let store = open_store(&args.opts.store)?;
    let run = resolve_run(&store, &args.run)?;
    let data = ReportData::load(&store, run).with_context(|| format!("reading run {run}"))?;
    emit(&store, data, &args.opts, &format!("{run}"))
}

pub fn compare(args: CompareArgs) -> Result<ExitCode> {
    let store = open_store(&args.opts.store)?;
    let a = resolve_run(&store, &args.run_a)?;
    let b = resolve_run(&store, &args.run_b)?;
    let data = ReportData::load_compare(&store, a, b)
        .with_context(|| format!("comparing runs {a} and {b}"))?;
    emit(&store, data, &args.opts, &format!("{a}-vs-{b}"))
}

fn emit(store: &Store, mut data: ReportData, opts: &ReportOptions, tag: &str) -> Result<ExitCode> {
    data.set_metric(opts.metric.into());
    if let Some(b) = &opts.baseline {
        data.set_baseline(b)?;
    }
    let text = match opts.format {
        ReportFormat::Text => report_text(&data),
        ReportFormat::Json => serde_json::to_string_pretty(&report_json(&data))? + "\n",
        ReportFormat::Csv => cells_csv(&data),
        ReportFormat::CsvTrials => trials_csv(&data),
        ReportFormat::Markdown => report_markdown(&data),
        ReportFormat::Html => {
            let path = opts
                .output
                .clone()
                .unwrap_or_else(|| opts.store.out.join(format!("report-{tag}.html")));
            write_atomic(&path, render_html(store, &data)?.as_bytes())?;
            eprintln!("dbrig: wrote {}", path.display());
            return Ok(ExitCode::SUCCESS);
        }
        ReportFormat::Svg => {
            let dir = opts
                .output
                .clone()
                .unwrap_or_else(|| opts.store.out.join(format!("charts-{tag}")));
            write_svgs(store, &data, &dir)?;
            eprintln!("dbrig: wrote the charts to {}", dir.display());
            return Ok(ExitCode::SUCCESS);
        }
    };
    match &opts.output {
        Some(path) => write_atomic(path, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Workload names become file names: keep them to safe characters.
fn file_stem(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_svgs(store: &Store, data: &ReportData, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for w in &data.workloads {
        let stem = file_stem(w);
        write_atomic(
            &dir.join(format!("{stem}-throughput.svg")),
            throughput_chart(data, w)?.as_bytes(),
        )?;
        write_atomic(
            &dir.join(format!("{stem}-latency.svg")),
            latency_chart(data, w)?.as_bytes(),
        )?;
        if let Some(svg) = charts::workload_timeline(store, data, w)? {
            write_atomic(&dir.join(format!("{stem}-timeline.svg")), svg.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names_become_safe_file_names() {
        assert_eq!(file_stem("oltp_read_only"), "oltp_read_only");
        assert_eq!(file_stem("../q 1/x"), "___q_1_x");
    }

    #[test]
    fn run_ids_and_latest() {
        let store = Store::open_in_memory().unwrap();
        assert!(resolve_run(&store, "latest").is_err());
        assert_eq!(resolve_run(&store, "12").unwrap(), RunId(12));
        let err = resolve_run(&store, "yesterday").unwrap_err().to_string();
        assert!(err.contains("neither a run id nor `latest`"), "{err}");
    }
}
