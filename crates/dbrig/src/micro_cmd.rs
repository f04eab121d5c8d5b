//! `dbrig micro memory_load|scan_filter|tmp_groupby`: the seeds' micro-benchmarks, each a
//! one-cell plan through the one executor, printed and stored as a plan stores them.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use dbrig_exec::{Configuration, Plan, SingleCommand};
use dbrig_workload::WorkloadKind;
use dbrig_workload::micro::{
    MemoryLoadOptions, MicroOptions, ScanFilterOptions, TmpGroupbyOptions,
};

use crate::args::{ConnectionArgs, EnvironmentArgs, Format, StoreArgs};
use crate::connection::resolve_target;
use crate::console::{self, ConsoleObserver};

#[derive(Debug, Clone, Args)]
pub struct MicroArgs {
    #[command(subcommand)]
    pub bench: MicroCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum MicroCommand {
    /// Seed 000: bulk load of random INT / CHAR(20) keys into an indexed table (MEMORY, hash
    /// index by default), rows per second.
    #[command(name = "memory_load", alias = "memory-load")]
    MemoryLoad(BenchArgs<MemoryLoadOptions>),
    /// Seed 004: scan and filter speed of narrow, wide and in-cache tables (rows/s, MB/s,
    /// cycles per row).
    #[command(name = "scan_filter", alias = "scan-filter")]
    ScanFilter(BenchArgs<ScanFilterOptions>),
    /// Seed 003: GROUP BY queries through internal temporary tables, seconds per query.
    #[command(name = "tmp_groupby", alias = "tmp-groupby")]
    TmpGroupby(BenchArgs<TmpGroupbyOptions>),
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs<O: Args> {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print the one-cell plan; connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten, next_help_heading = "Benchmark options")]
    pub options: O,
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
    #[command(
        flatten,
        next_help_heading = "Environment options (recorded with the trial)"
    )]
    pub environment: EnvironmentArgs,
}

/// What every micro-benchmark's arguments share, and its options.
struct Parts {
    connection: ConnectionArgs,
    store: StoreArgs,
    format: Format,
    dry_run: bool,
    environment: EnvironmentArgs,
    options: MicroOptions,
}

fn split<O: Args>(a: BenchArgs<O>, wrap: fn(O) -> MicroOptions) -> Parts {
    Parts {
        connection: a.connection,
        store: a.store,
        format: a.format,
        dry_run: a.dry_run,
        environment: a.environment,
        options: wrap(a.options),
    }
}

pub async fn micro(args: MicroArgs, argv: &[String]) -> Result<ExitCode> {
    let p = match args.bench {
        MicroCommand::MemoryLoad(a) => split(a, MicroOptions::MemoryLoad),
        MicroCommand::ScanFilter(a) => split(a, MicroOptions::ScanFilter),
        MicroCommand::TmpGroupby(a) => split(a, MicroOptions::TmpGroupby),
    };
    let target = resolve_target(&p.connection, &p.store)?;
    let plan = Plan::single(SingleCommand {
        workload: WorkloadKind::new(dbrig_workload::kinds::Micro(p.options)),
        configuration: Configuration::external("default", target),
        server: None,
        run: dbrig_workload::RunOptions::default(),
        prepare: false,
        environment: p.environment.environment(),
    })?;
    if p.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let outcome = console::measure(plan, &p.store, argv, false, &ConsoleObserver::single()).await?;
    crate::report_cmd::print_single(&outcome.store, outcome.run, p.format)?;
    Ok(console::exit_code(&outcome))
}
