//! `dbrig history` (the results database's series and their change points) and `dbrig gate`
//! (a run held against its series' history, with an exit status for CI).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use dbrig_core::changepoint::ChangePointOptions;
use dbrig_core::limits;
use dbrig_report::gate::{GateOptions, gate, gate_junit, gate_markdown};
use dbrig_report::history::{HistoryFilter, history, history_csv, history_text};

use crate::args::StoreArgs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryFormat {
    Text,
    Json,
    Csv,
}

/// `dbrig history`: one series per workload (and its data options), configuration, client
/// count, host and metric, each run a point with its trials, change points marked.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// Only workloads whose name contains this.
    #[arg(long)]
    pub workload: Option<String>,
    /// Only this configuration.
    #[arg(long)]
    pub configuration: Option<String>,
    /// Only this client count.
    #[arg(long, value_parser = limits::parse::<limits::Clients>)]
    pub clients: Option<u32>,
    /// Only this unit (`QPS`, `TPS`, `s`, `rows/s`, `NOPM` …).
    #[arg(long)]
    pub unit: Option<String>,
    /// Only series with at least this many points.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::HistoryPoints>)]
    pub min_points: u32,
    /// Largest p-value of a change point (Student's t-test of the levels beside it).
    #[arg(long, default_value_t = 0.001, value_parser = limits::parse::<limits::PValue>)]
    pub max_p: f64,
    /// Smallest change of the mean a change point must show, in percent (the noise band).
    #[arg(long, value_name = "PERCENT", default_value = "1", value_parser = crate::report_cmd::parse_noise_band)]
    pub min_change: f64,
    /// Points per sliding window of the change-point search.
    #[arg(long, default_value_t = 50, value_parser = limits::parse::<limits::HistoryWindow>)]
    pub window: u32,
    #[arg(long, value_enum, default_value_t = HistoryFormat::Text)]
    pub format: HistoryFormat,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn history_command(args: HistoryArgs) -> Result<ExitCode> {
    let store = crate::console::open_existing_store(&args.store)?;
    let filter = HistoryFilter {
        workload: args.workload,
        configuration: args.configuration,
        clients: args.clients,
        unit: args.unit,
        min_points: args.min_points as usize,
    };
    let opts = ChangePointOptions {
        window: args.window as usize,
        max_p: args.max_p,
        min_magnitude: args.min_change,
    };
    let series = history(&store, &filter, &opts)?;
    let text = match args.format {
        HistoryFormat::Text => history_text(&series),
        HistoryFormat::Csv => history_csv(&series),
        HistoryFormat::Json => {
            let mut v = serde_json::to_value(&series)?;
            dbrig_report::figures::round_json(&mut v);
            format!("{}\n", dbrig_report::json_text(&v))
        }
    };
    crate::out::text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `dbrig gate`: exit 0 (no regression), 1 (a regression beyond the noise band), 3 (not
/// enough history or trials to decide); 2 is a usage error.
#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    /// The run to gate: a run id, `latest` or `latest~N`.
    #[arg(default_value = "latest")]
    pub run: String,
    /// Hold it against this run instead of its series' history.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Most earlier points of a series taken as its baseline (since its last change point).
    #[arg(long, default_value_t = 10, value_parser = limits::parse::<limits::HistoryPoints>)]
    pub points: u32,
    /// Changes inside ±this percent are never called.
    #[arg(long, value_name = "PERCENT", default_value = "1", value_parser = crate::report_cmd::parse_noise_band)]
    pub noise_band: f64,
    /// Also write the summary as Markdown here (`$GITHUB_STEP_SUMMARY`, a PR comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn gate_command(args: GateArgs) -> Result<ExitCode> {
    let store = crate::console::open_existing_store(&args.store)?;
    let run = crate::report_cmd::resolve_run(&store, &args.run)?;
    let baseline = args
        .baseline
        .as_deref()
        .map(|b| crate::report_cmd::resolve_run(&store, b))
        .transpose()?;
    let report = gate(
        &store,
        &GateOptions {
            run: Some(run),
            baseline,
            points: args.points as usize,
            noise_band: args.noise_band,
            ..GateOptions::default()
        },
    )?;
    let md = gate_markdown(&report);
    if let Some(path) = &args.markdown {
        append(path, &md)?;
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, gate_junit(&report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    crate::out::text(&md)?;
    Ok(ExitCode::from(report.outcome.exit_code()))
}

/// `$GITHUB_STEP_SUMMARY` is appended to by every step: add, never replace.
fn append(path: &std::path::Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}
