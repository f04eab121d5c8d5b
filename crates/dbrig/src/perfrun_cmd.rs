//! `dbrig perfrun`: query-by-query A/B of two servers (RQG's perfrun / perfreport, spec §6).
//!
//! `dbrig perfrun --a URL --b URL --queries DIR` is a plan of two configurations (`a`, the
//! baseline, and `b`) and one `perfrun` workload: each configuration's trial runs every query
//! of the folder (one query per file) cold then warm, with its time, rows, result checksums
//! and the counters that moved, through the one executor and recorder. The sides may instead
//! be two configurations of a plan (`--plan FILE --a NAME --b NAME`: external targets, or
//! managed servers started with the configuration's parameters and stopped at the end — one
//! server can serve both, restarted between them). `--tpch` runs TPC-H's 22 queries with their
//! validation parameters instead of a folder. `--filter` is kept with the run and every report
//! of it shows only the matching query/temperature pairs (pairs where a side failed always
//! show); `dbrig perfrun report [RUN] --filter …` applies another.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use dbrig_core::limits;
use dbrig_exec::{Configuration, Plan};
use dbrig_store::RunKind;
use dbrig_workload::WorkloadKind;
use dbrig_workload::perfrun::PerfrunOptions;

use crate::args::{ConnectionArgs, EnvironmentArgs, Format, StoreArgs};
use crate::connection::resolve_target;
use crate::console::{self, ConsoleObserver};

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PerfrunArgs {
    #[command(subcommand)]
    pub command: Option<PerfrunCommand>,
    #[command(flatten)]
    pub collect: CollectArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum PerfrunCommand {
    /// Print a stored perfrun run: per query and cache temperature, the counters that differ.
    Report(PerfReportArgs),
}

/// Collect: run a folder of queries on two servers.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Server A (first column; RQG's --dsn1): mysql://USER@HOST:PORT/DB or postgres://…
    #[arg(long = "a", value_name = "URL")]
    pub a: Option<String>,
    /// Server B (second column; RQG's --dsn2). Delta is B − A, Ratio B / A.
    #[arg(long = "b", value_name = "URL")]
    pub b: Option<String>,
    /// Folder of queries, one query per .sql file (in name order).
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Instead of a folder: the 22 TPC-H queries with their validation parameters, in each
    /// side's dialect (load the data on both sides first with `dbrig tpch load`).
    #[arg(long, conflicts_with = "queries")]
    pub tpch: bool,
    /// Take the sides from a plan: `--a` and `--b` then name two of its configurations
    /// (external targets, or managed servers that perfrun starts and stops). Their passwords
    /// come from the plan (`password-env`, `password-file`), so the `--password-*-a/b` options
    /// are refused with it rather than ignored.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["password_env_a", "password_env_b", "password_file_a", "password_file_b"]
    )]
    pub plan: Option<PathBuf>,
    /// A value for the plan's `${NAME}` placeholders (repeatable; as `dbrig run --define`).
    #[arg(long = "define", value_name = "NAME=VALUE", requires = "plan")]
    pub defines: Vec<String>,
    /// Keep only matching query/temperature pairs, e.g.
    /// '(execution_time_a > 0.1 or execution_time_b > 0.1) and temperature == "warm"'.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Read server A's password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env_a: Option<String>,
    /// Read server B's password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env_b: Option<String>,
    /// Read server A's password from this file (chmod 600).
    #[arg(long, value_name = "PATH")]
    pub password_file_a: Option<PathBuf>,
    /// Read server B's password from this file (chmod 600).
    #[arg(long, value_name = "PATH")]
    pub password_file_b: Option<PathBuf>,
    /// Seconds to wait for each connection.
    #[arg(long, default_value_t = 10.0, value_parser = limits::parse::<limits::TimeoutSeconds>)]
    pub connect_timeout: f64,
    /// Print the plan (one cell per side); connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(
        flatten,
        next_help_heading = "Environment options (recorded with the trial)"
    )]
    pub environment: EnvironmentArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PerfReportArgs {
    /// Run id (see `dbrig runs`) or `latest` (the latest perfrun run).
    #[arg(default_value = "latest")]
    pub run: String,
    /// Show only matching query/temperature pairs instead of the filter given at collection
    /// (pairs where a side failed always show; '' shows every pair).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub async fn perfrun(args: PerfrunArgs, argv: &[String]) -> Result<ExitCode> {
    match args.command {
        Some(PerfrunCommand::Report(r)) => report(r),
        None => collect(args.collect, argv).await,
    }
}

fn report(args: PerfReportArgs) -> Result<ExitCode> {
    crate::report_cmd::perfrun_report(&args.store, &args.run, args.filter.as_deref(), args.format)
}

/// The two sides: from `--a URL --b URL`, or two configurations of `--plan` (with the plan's
/// servers).
fn sides(args: &CollectArgs) -> Result<(Vec<Configuration>, Vec<dbrig_server::ServerDef>)> {
    if let Some(path) = &args.plan {
        let plan = dbrig_exec::plan::load(path, &args.defines, &[])?;
        let names: Vec<&str> = plan
            .configurations
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let find = |name: &Option<String>, which: &str| {
            let name = name.as_deref().ok_or_else(|| {
                anyhow!(
                    "--plan needs --{which} NAME, a configuration of the plan ({})",
                    names.join(", ")
                )
            })?;
            plan.configurations
                .iter()
                .find(|c| c.name == name)
                .cloned()
                .ok_or_else(|| {
                    anyhow!(
                        "--{which} {name}: no such configuration in {} (configurations: {})",
                        path.display(),
                        names.join(", ")
                    )
                })
        };
        let (a, b) = (find(&args.a, "a")?, find(&args.b, "b")?);
        if a.name == b.name {
            bail!("--a and --b name the same configuration '{}'", a.name);
        }
        return Ok((vec![a, b], plan.servers.clone()));
    }
    let side = |url: &Option<String>, env: &Option<String>, file: &Option<PathBuf>, which: &str| {
        let Some(url) = url else {
            bail!("dbrig perfrun needs --a URL and --b URL (and --queries DIR), or `report`");
        };
        let c = ConnectionArgs {
            target: Some(url.clone()),
            password_env: env.clone(),
            password_file: file.clone(),
            ..ConnectionArgs::default()
        };
        let target =
            resolve_target(&c, &StoreArgs::default()).with_context(|| format!("server {which}"))?;
        Ok(Configuration::external(which, target))
    };
    Ok((
        vec![
            side(&args.a, &args.password_env_a, &args.password_file_a, "a")?,
            side(&args.b, &args.password_env_b, &args.password_file_b, "b")?,
        ],
        Vec::new(),
    ))
}

/// The filter's names against what both sides report, before anything runs (sides on managed
/// servers are not up yet: their names are checked when a report applies the filter).
async fn check_filter_names(filter: &str, sides: &[Configuration]) -> Result<()> {
    let mut infos = Vec::new();
    for c in sides {
        let Some(target) = &c.target else {
            return Ok(());
        };
        let connect = dbrig_driver::ConnectOptions::default();
        infos.push(
            dbrig_workload::perfrun::side_info(target, &connect)
                .await
                .with_context(|| format!("server {}", c.name))?,
        );
    }
    let [a, b] = <[_; 2]>::try_from(infos).map_err(|_| anyhow!("perfrun compares two sides"))?;
    let names = dbrig_report::perfrun::Names::new(&dbrig_report::perfrun::Sides { a, b });
    let parsed =
        dbrig_report::perfrun::Filter::parse(filter, Some(&names)).context("invalid --filter")?;
    parsed.check(&names).context("invalid --filter")?;
    Ok(())
}

async fn collect(args: CollectArgs, argv: &[String]) -> Result<ExitCode> {
    if args.queries.is_none() && !args.tpch {
        bail!("dbrig perfrun needs --queries DIR (a folder with one query per file) or --tpch");
    }
    // The filter's syntax now, before any server is reached (its names are checked against
    // the counters the servers report when it is applied).
    if let Some(f) = &args.filter {
        dbrig_report::perfrun::Filter::parse(f, None).context("invalid --filter")?;
    }
    let options = PerfrunOptions {
        queries: args.queries.clone(),
        tpch: args.tpch,
        filter: args.filter.clone(),
    };
    options.validate()?;
    let (configurations, servers) = sides(&args)?;
    if let Some(f) = &args.filter {
        check_filter_names(f, &configurations).await?;
    }
    let name = match &args.queries {
        Some(dir) => dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
        None => "tpch".to_owned(),
    };
    let run = dbrig_workload::RunOptions {
        connect_timeout: args.connect_timeout,
        ..dbrig_workload::RunOptions::default()
    };
    let plan = Plan::compare(
        &name,
        RunKind::Perfrun,
        configurations,
        servers,
        WorkloadKind::new(dbrig_workload::kinds::Perfrun(options)),
        run,
        args.environment.environment(),
    )?;
    if args.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let outcome =
        console::measure(plan, &args.store, argv, false, &ConsoleObserver::single()).await?;
    crate::report_cmd::print_single(&outcome.store, outcome.run, Format::Text)?;
    Ok(console::exit_code(&outcome))
}
