//! `dbrig micro memory_load|scan_filter|tmp_groupby`: the seeds' micro-benchmarks, each
//! stored as one run (kind "micro", one cell, one trial with the result in `extra`).

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Result;
use clap::{Args, Subcommand};
use dbrig_driver::ConnectOptions;
use dbrig_server::HostFacts;
use dbrig_store::{NewTrial, RunKind, RunStatus, TrialStatus};
use dbrig_workload::micro::{
    MemoryLoadOptions, MicroOptions, MicroResult, ScanFilterOptions, TmpGroupbyOptions,
};

use crate::cli::{ConnectionArgs, Format, StoreArgs};
use crate::commands::{OneCellRun, begin_one_cell_run, open_store, spec_key};
use crate::connection::resolve_target;

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
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub options: O,
}

fn progress(msg: &str) {
    eprintln!("dbrig: {msg}");
}

fn split<O: Args>(
    a: BenchArgs<O>,
    wrap: fn(O) -> MicroOptions,
) -> (ConnectionArgs, StoreArgs, Format, MicroOptions) {
    (a.connection, a.store, a.format, wrap(a.options))
}

pub async fn micro(args: MicroArgs, argv: &[String]) -> Result<ExitCode> {
    let (connection, store_args, format, mut opts) = match args.bench {
        MicroCommand::MemoryLoad(a) => split(a, MicroOptions::MemoryLoad),
        MicroCommand::ScanFilter(a) => split(a, MicroOptions::ScanFilter),
        MicroCommand::TmpGroupby(a) => split(a, MicroOptions::TmpGroupby),
    };
    let bench = opts.benchmark();
    let target = resolve_target(&connection, &store_args)?;
    let facts = HostFacts::collect(None);
    if opts.common_mut().cpu_mhz.is_none() {
        opts.common_mut().cpu_mhz = facts.cpu_mhz;
    }
    let mut store = open_store(&store_args)?;
    let host = serde_json::to_value(&facts).unwrap_or_default();
    let target_text = target.to_string();
    let options = serde_json::json!({
        "benchmark": bench.name(),
        "target": target_text,
        "options": opts.json(),
    });
    let cell_options = opts.json();
    let cell_key = spec_key(
        &serde_json::json!({ "target": target_text, "workload": bench.name(), "options": cell_options }),
    );
    let (run_id, cell, started) = begin_one_cell_run(
        &mut store,
        &host,
        argv,
        &OneCellRun {
            kind: RunKind::Other("micro".into()),
            name: bench.name(),
            options: &options,
            cell_options: &cell_options,
            cell_key: &cell_key,
            clients: 1,
            target: &target,
        },
    )?;
    if format == Format::Text {
        eprintln!("dbrig: micro {} on {target}", bench.name());
    }
    let result = opts
        .run(&target, &ConnectOptions::default(), &progress)
        .await;
    let finished = SystemTime::now();
    match result {
        Ok(r) => {
            let extra = serde_json::to_value(&r)?;
            store.record_trial(
                cell,
                &NewTrial {
                    trial: 1,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some(&r.server_version),
                    started_at: started,
                    finished_at: finished,
                    measurements: None,
                    extra: Some(&extra),
                },
            )?;
            store.finish_run(run_id, RunStatus::Done, None)?;
            if format == Format::Json {
                let mut v = extra;
                v["run_id"] = serde_json::json!(run_id.0);
                v["target"] = serde_json::json!(target_text);
                v["status"] = serde_json::json!("done");
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print!("{}", result_text(&r, &target_text));
                println!("\nStored as run {} in {}", run_id.0, store.path().display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let reason = e.to_string();
            crate::commands::record_failed_run(
                &mut store, run_id, cell, started, finished, &reason,
            )?;
            Err(e.into())
        }
    }
}

/// The seeds' way of showing it: one line per table type or query.
pub fn result_text(r: &MicroResult, target: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let engine = r
        .engine
        .as_deref()
        .map(|e| format!(", engine {e}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "dbrig micro {} on {target} ({}{engine})\n{} rows, {} run(s), seed {}{}",
        r.benchmark,
        r.server_version,
        r.rows,
        r.runs,
        r.seed,
        r.cpu_mhz
            .map(|m| format!(", CPU {m:.0} MHz"))
            .unwrap_or_default()
    );
    for s in &r.settings {
        let _ = writeln!(out, "session: {s}");
    }
    let _ = writeln!(out);
    let width = r
        .items
        .iter()
        .map(|i| i.name.len())
        .max()
        .unwrap_or(0)
        .max(8);
    for i in &r.items {
        let runs = i
            .values
            .iter()
            .map(|v| number(*v, &i.unit))
            .collect::<Vec<_>>()
            .join(" ");
        let mut line = format!(
            "{:<width$}  {} {}",
            format!("{}:", i.name),
            number(i.mean, &i.unit),
            i.unit
        );
        if i.unit != "rows/s"
            && let Some(rps) = i.rows_per_second
        {
            let _ = write!(line, "  ({rps:.0} rows/s)");
        }
        if let Some(mb) = i.mb_per_second {
            let _ = write!(line, "  {mb:.1} MB/s");
        }
        if let Some(c) = i.cycles_per_row {
            let _ = write!(line, "  {c:.0} cycles/row");
        }
        let _ = write!(
            line,
            "  [min {} max {}; runs: {runs}]",
            number(i.min, &i.unit),
            number(i.max, &i.unit)
        );
        if let Some(a) = &i.answer {
            let _ = write!(line, "  answer: {a}");
        }
        let _ = writeln!(out, "{line}");
    }
    for s in &r.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    out
}

fn number(v: f64, unit: &str) -> String {
    match unit {
        "rows/s" => format!("{v:.0}"),
        "ms/query" => format!("{v:.4}"),
        _ => format!("{v:.3}"),
    }
}
