//! `dbrig report`, `dbrig compare` and `dbrig perfrun report`: arguments into a report request;
//! the report itself is rendered from the results database by dbrig-report, in each kind's
//! own unit and layout. Also what the measuring commands print when they end.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use dbrig_report::{Metric, Rendered, Request, SingleFormat};
use dbrig_store::{RunId, Store};

use crate::args::{Format, StoreArgs};
use crate::console::open_existing_store;
use crate::out::outln;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    Qps,
    Tps,
}

/// Choices shared by `report` and `compare`.
#[derive(Debug, Clone, Args)]
pub struct ReportOptions {
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(long, value_enum, default_value_t = dbrig_report::Format::Text)]
    pub format: dbrig_report::Format,
    /// Write here instead of stdout (html: the page, svg: a folder). Written atomically.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Configuration the others are compared with (default: the first in the plan).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// What OLTP cells are ranked and compared by (other kinds have their own units).
    #[arg(long, value_enum, default_value_t = MetricArg::Qps)]
    pub metric: MetricArg,
    /// perfrun: show only matching query/temperature pairs instead of the filter given at
    /// collection ('' shows every pair).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Add what the trials recorded besides their figures to a text or Markdown report:
    /// `hooks` (every hook's command and output), `plans` (a power test's EXPLAIN plans), `os`
    /// (the OS statistics of every TPC-H query run), `loads` (rows/s and MB/s per table of
    /// every prepare step), or several: `hooks,plans,os,loads`. The HTML page always has them,
    /// collapsed.
    #[arg(long, value_name = "hooks,plans,os,loads")]
    pub with: Option<dbrig_report::records::With>,
    /// Call a change only when its whole confidence interval lies beyond ±PERCENT (default:
    /// the plan's `[report] noise-band`, else 1). A finite percentage, not negative.
    #[arg(long, value_name = "PERCENT", value_parser = parse_noise_band, allow_negative_numbers = true)]
    pub noise_band: Option<f64>,
    /// How the p-values of many comparisons are adjusted: `fdr` (Benjamini-Hochberg: the
    /// expected share of wrong calls among the changes called stays below alpha) or `holm`
    /// (Holm-Bonferroni: the chance of any wrong call does; stricter, needs more trials).
    /// Default: the plan's `[report] correction`, else fdr.
    #[arg(long, value_name = "fdr|holm")]
    pub correction: Option<dbrig_core::stats::Correction>,
}

/// `--noise-band PERCENT` as the fraction reports compare with (one rule:
/// [`dbrig_core::stats::noise_band_from_percent`]).
pub(crate) fn parse_noise_band(s: &str) -> std::result::Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .and_then(dbrig_core::stats::noise_band_from_percent)
        .ok_or_else(|| {
            format!(
                "'{s}' is not a noise band: give a percentage from 0 to {} (2.0 for ±2 %)",
                dbrig_core::stats::MAX_NOISE_BAND_PERCENT
            )
        })
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Run id (see `dbrig runs`), `latest`, or `latest~N` (the Nth run before the latest).
    #[arg(default_value = "latest")]
    pub run: String,
    #[command(flatten)]
    pub opts: ReportOptions,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline run id (or `latest`, `latest~N`: the Nth run before the latest).
    pub run_a: String,
    /// Run compared with it (or `latest`, `latest~N`).
    pub run_b: String,
    #[command(flatten)]
    pub opts: ReportOptions,
}

/// `latest`, `latest~N` (as git's `HEAD~N`: the Nth run begun before the latest) or a run id
/// that the results database holds.
pub(crate) fn resolve_run(store: &Store, arg: &str) -> Result<RunId> {
    let not_a_run = || anyhow!("run {arg:?} is neither a run id, `latest` nor `latest~N`");
    let back = match arg.get(..6) {
        Some(head) if head.eq_ignore_ascii_case("latest") => match &arg[6..] {
            "" => Some(0),
            rest => Some(
                rest.strip_prefix('~')
                    .and_then(|n| n.parse::<usize>().ok())
                    .ok_or_else(not_a_run)?,
            ),
        },
        _ => None,
    };
    let id = match back {
        Some(0) => store
            .latest_run_id()?
            .ok_or_else(|| anyhow!("the results database holds no runs yet"))?,
        Some(n) => {
            let runs = store.runs()?;
            let held = runs.len();
            runs.get(held.checked_sub(n + 1).ok_or_else(|| {
                anyhow!(
                    "{arg}: the results database holds {held} run(s), not {}",
                    n + 1
                )
            })?)
            .map(|r| r.id)
            .ok_or_else(not_a_run)?
        }
        None => RunId(arg.parse().map_err(|_| not_a_run())?),
    };
    store.run(id).map_err(|_| {
        anyhow!(
            "no run {} in {}: see `dbrig runs`",
            id.0,
            store.path().display()
        )
    })?;
    Ok(id)
}

pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let store = open_existing_store(&args.opts.store)?;
    let run = resolve_run(&store, &args.run)?;
    emit(&store, vec![run], &args.opts)
}

pub fn compare(args: CompareArgs) -> Result<ExitCode> {
    let store = open_existing_store(&args.opts.store)?;
    let a = resolve_run(&store, &args.run_a)?;
    let b = resolve_run(&store, &args.run_b)?;
    emit(&store, vec![a, b], &args.opts)
}

fn emit(store: &Store, runs: Vec<RunId>, opts: &ReportOptions) -> Result<ExitCode> {
    let tag = runs
        .iter()
        .map(|r| r.0.to_string())
        .collect::<Vec<_>>()
        .join("-vs-");
    let mut req = Request::new(runs, opts.format, opts.store.out.clone());
    req.baseline = opts.baseline.clone();
    req.metric = match opts.metric {
        MetricArg::Qps => Metric::Qps,
        MetricArg::Tps => Metric::Tps,
    };
    req.perfrun_filter = opts.filter.clone();
    req.output = opts.output.clone();
    req.with = opts.with.unwrap_or_default();
    req.noise_band = opts.noise_band;
    req.correction = opts.correction;
    let rendered =
        dbrig_report::render(store, &req).with_context(|| format!("reporting run {tag}"))?;
    show(rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn show(rendered: Rendered) -> Result<()> {
    match rendered {
        Rendered::Stdout(text) => crate::out::text(&text),
        Rendered::Written { files } => {
            for f in files {
                eprintln!("dbrig: wrote {}", f.display());
            }
            Ok(())
        }
    }
}

/// What a single measuring command prints when it ends: its stored run, as `dbrig report RUN`
/// shows it, and where it is stored.
pub fn print_single(store: &Store, run: RunId, format: Format) -> Result<()> {
    print_single_with(store, run, format, false)
}

/// [`print_single`], with sysbench's latency histogram before "SQL statistics" when
/// `histogram` (text only; an OLTP run's single trial).
pub fn print_single_with(store: &Store, run: RunId, format: Format, histogram: bool) -> Result<()> {
    match format {
        Format::Text => {
            crate::out::text(&dbrig_report::single_run_text(store, run, histogram)?)?;
            outln!("\nStored as run {} in {}", run.0, store.path().display())
        }
        Format::Json => {
            let mut v = dbrig_report::single_run_json(store, run)?;
            if let Some(u) = dbrig_server::ProcessUsage::of_self() {
                // The client's own cost, for side-by-side comparisons with other tools.
                v["client"] = serde_json::json!({
                    "cpu_user_s": u.user_s,
                    "cpu_system_s": u.system_s,
                    "peak_rss_bytes": u.peak_rss_bytes,
                });
            }
            crate::out::text(&dbrig_report::json_text(&v))
        }
    }
}

/// What `dbrig run PLAN.toml` prints when it ends: the plan report (the seeds' tables and the
/// verdicts, each kind in its own unit) and where its HTML page is.
pub fn print_plan(store: &Store, run: RunId, baseline: &str, out: &Path) -> Result<()> {
    let mut req = Request::new(vec![run], dbrig_report::Format::Text, out.to_owned());
    req.baseline = Some(baseline.to_owned());
    show(dbrig_report::render(store, &req)?)?;
    let page = crate::console::html_path(out, run);
    dbrig_report::write_html_report(store, run, &page)?;
    outln!("HTML report: {}", page.display())
}

/// `dbrig perfrun report [RUN|latest] [--filter]`.
pub fn perfrun_report(
    store: &StoreArgs,
    run: &str,
    filter: Option<&str>,
    format: Format,
) -> Result<ExitCode> {
    let store = open_existing_store(store)?;
    let run = if run.eq_ignore_ascii_case("latest") {
        store
            .runs()?
            .into_iter()
            .filter(|r| r.kind == dbrig_store::RunKind::Perfrun)
            .map(|r| r.id)
            .max()
            .ok_or_else(|| anyhow!("the results database holds no perfrun run yet"))?
    } else {
        resolve_run(&store, run)?
    };
    let format = match format {
        Format::Text => SingleFormat::Text,
        Format::Json => SingleFormat::Json,
    };
    let text = dbrig_report::perfrun_report(&store, run, filter, format)?;
    crate::out::text(&text)?;
    Ok(ExitCode::SUCCESS)
}
