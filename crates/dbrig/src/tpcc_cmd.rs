//! `dbrig tpcc check`: the consistency conditions of clause 3.3.2 on a prepared TPC-C database
//! (the same check a load and a trial run, `dbrig_workload::tpcc::check`), a line per
//! condition; a condition that fails makes the exit code 1.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use dbrig_driver::{ConnectOptions, Connection};
use dbrig_workload::tpcc;

use crate::args::{ConnectionArgs, Format, StoreArgs};
use crate::connection::resolve_target;
use crate::out::outln;

#[derive(Debug, Clone, Args)]
pub struct TpccArgs {
    #[command(subcommand)]
    pub command: TpccCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TpccCommand {
    /// Check the consistency conditions of clause 3.3.2 on the TPC-C tables (exit code 1 when
    /// one fails, naming it and the first row that breaks it).
    Check(CheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Also check condition 11 (ORDER rows - NEW-ORDER rows = 2 100 per district), which
    /// holds only for the database as loaded, before any Delivery.
    #[arg(long)]
    pub as_loaded: bool,
    /// `json`: the conditions checked and the failures as one object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
}

pub async fn tpcc(args: TpccArgs) -> Result<ExitCode> {
    match args.command {
        TpccCommand::Check(a) => check(a).await,
    }
}

async fn check(a: CheckArgs) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    let mut conn = Connection::connect(&target, &ConnectOptions::default()).await?;
    // A finished TPC-C build of dbrig's (never a half-built one), and its sizes.
    let loaded = tpcc::loaded_data(&mut conn, &target).await;
    let report = match loaded {
        Ok(l) => tpcc::check_conditions(&mut conn, a.as_loaded.then_some(l.scale)).await,
        Err(e) => Err(e),
    };
    conn.close().await;
    let report = report?;
    if a.format == Format::Json {
        crate::out::text(&dbrig_report::json_text(&serde_json::json!({
            "target": target.to_string(),
            "checked": report.checked,
            "failures": report.failures,
            "passed": report.passed(),
        })))?;
    } else {
        outln!("TPC-C consistency (clause 3.3.2) on {target}")?;
        let what = |n: u8| {
            tpcc::check::CONDITIONS
                .iter()
                .chain([&tpcc::check::AS_LOADED])
                .find(|c| c.0 == n)
                .map_or("", |c| c.1)
        };
        for n in &report.checked {
            match report.failures.iter().find(|f| f.condition == *n) {
                Some(f) => outln!(
                    "  {n:>2}  FAILS  {}; first at ({})",
                    f.what,
                    f.row.join(", ")
                )?,
                None => outln!("  {n:>2}  holds  {}", what(*n))?,
            }
        }
        if !a.as_loaded {
            outln!("  (11, which holds only as loaded, with --as-loaded)")?;
        }
    }
    Ok(match report.passed() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}
