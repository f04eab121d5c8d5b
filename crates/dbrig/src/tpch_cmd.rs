//! `dbrig tpch gen|load|power|check|cleanup`: DBT-3 / TPC-H.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand};
use dbrig_driver::{ConnectOptions, Connection};
use dbrig_server::HostFacts;
use dbrig_store::{NewCell, NewRun, NewTrial, RunKind, RunStatus, TrialStatus};
use dbrig_workload::tpch::{
    self, KeysWhen, LoadOptions, ParamMode, PowerOptions, QuerySet, QueryStatus, ScaleFactor, Table,
};

use crate::cli::{ConnectionArgs, Format, StoreArgs};
use crate::commands::{open_store, spec_key};
use crate::connection::{redacted_command_line, resolve_target};

#[derive(Debug, Clone, Args)]
pub struct TpchArgs {
    #[command(subcommand)]
    pub command: TpchCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TpchCommand {
    /// Write dbgen-format .tbl files (exactly tpchgen's output).
    Gen(GenArgs),
    /// The load test: create, load, keys, indexes, ANALYZE, each timed; size on disk.
    Load(LoadArgs),
    /// The power test: RF1, the 22 queries in stream-0 order, RF2; Power@Size; stored as a run.
    Power(PowerArgs),
    /// Differential answer check of the queries across engines (or against the SF1 answers).
    Check(CheckArgs),
    /// Drop the TPC-H tables dbrig created.
    Cleanup(CleanupArgs),
}

#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Scale factor (0.01, 1, 10, …).
    #[arg(long, value_parser = parse_sf)]
    pub sf: ScaleFactor,
    /// Folder for the .tbl files.
    #[arg(long, value_name = "DIR", default_value = "dbrig-out")]
    pub out: PathBuf,
    /// Only these tables (comma-separated; default all eight).
    #[arg(long, value_delimiter = ',')]
    pub tables: Vec<String>,
    /// Generator threads (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    pub parallel: u32,
}

#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Scale factor (0.01, 1, 10, …).
    #[arg(long, value_parser = parse_sf)]
    pub sf: ScaleFactor,
    /// Create primary keys before or after the load.
    #[arg(long, value_enum, default_value_t = KeysWhen::After)]
    pub keys: KeysWhen,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    #[arg(long, default_value_t = 0)]
    pub parallel: u32,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PowerArgs {
    /// A folder of .sql files to run instead of the built-in queries (one query per file,
    /// named by the file stem; `N…` files get query N's parameters).
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Random qgen parameters from this seed instead of the validation parameters.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Skip the refresh functions RF1/RF2.
    #[arg(long)]
    pub no_refresh: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Other targets holding the same data to compare with (repeatable).
    #[arg(long = "against", value_name = "URL")]
    pub against: Vec<String>,
    /// Compare with tpchgen's SF1 reference answers (the data must be SF 1).
    #[arg(long)]
    pub sf1_answers: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

fn parse_sf(s: &str) -> std::result::Result<ScaleFactor, String> {
    s.parse()
}

fn progress(msg: &str) {
    eprintln!("dbrig: {msg}");
}

pub async fn tpch(args: TpchArgs, argv: &[String]) -> Result<ExitCode> {
    match args.command {
        TpchCommand::Gen(a) => gen_tbl(a),
        TpchCommand::Load(a) => load(a).await,
        TpchCommand::Power(a) => power(a, argv).await,
        TpchCommand::Check(a) => check(a).await,
        TpchCommand::Cleanup(a) => cleanup(a).await,
    }
}

fn gen_tbl(a: GenArgs) -> Result<ExitCode> {
    let tables: Vec<Table> = if a.tables.is_empty() {
        Table::ALL.to_vec()
    } else {
        a.tables
            .iter()
            .map(|n| {
                Table::from_name(n.trim()).ok_or_else(|| {
                    anyhow!("unknown TPC-H table '{n}': region, nation, supplier, customer, part, partsupp, orders, lineitem")
                })
            })
            .collect::<Result<_>>()?
    };
    let parallel = match a.parallel {
        0 => std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(2),
        n => n,
    };
    let started = std::time::Instant::now();
    let files = tpch::write_tbl(a.sf.get(), &tables, &a.out, parallel, &progress)
        .map_err(|e| anyhow!("cannot write .tbl files to {}: {e}", a.out.display()))?;
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    println!(
        "Wrote {} .tbl file(s) ({bytes} bytes) at SF {} to {} in {:.2} s",
        files.len(),
        a.sf,
        a.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

async fn load(a: LoadArgs) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    eprintln!("dbrig: loading TPC-H SF {} into {target}", a.sf);
    let report = tpch::load(
        &target,
        &ConnectOptions::default(),
        &LoadOptions {
            scale_factor: a.sf,
            keys: a.keys,
            parallel: a.parallel,
        },
        &progress,
    )
    .await?;
    if a.format == Format::Json {
        let mut v = serde_json::to_value(&report)?;
        v["target"] = serde_json::json!(target.to_string());
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("TPC-H load test, SF {} on {target}", a.sf);
        for s in &report.steps {
            println!("  {:<28}{:>10.3} s", s.name, s.seconds);
        }
        println!("  {:<28}{:>10.3} s", "total", report.total_seconds);
        let rows: u64 = report.rows.iter().map(|(_, n)| n).sum();
        println!(
            "  rows {rows}, size on disk {:.1} MiB",
            report.size_bytes as f64 / 1048576.0
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn power(a: PowerArgs, argv: &[String]) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    let queries = match &a.queries {
        Some(dir) => Some(QuerySet::from_dir(dir).map_err(|e| anyhow!(e))?),
        None => None,
    };
    let params = match a.seed {
        Some(seed) => ParamMode::Random { seed },
        None => ParamMode::Validation,
    };
    let options = PowerOptions {
        params,
        queries,
        refresh: !a.no_refresh,
    };
    // Refuse before a run is recorded when the data is not there.
    {
        let mut conn = Connection::connect(&target, &ConnectOptions::default()).await?;
        tpch::check_loaded(&mut conn).await?;
        conn.close().await;
    }
    let mut store = open_store(&a.store)?;
    let host = serde_json::to_value(HostFacts::collect(None)).unwrap_or_default();
    let spec = serde_json::json!({
        "workload": "tpch_power",
        "target": target.to_string(),
        "params": params,
        "queries": a.queries.as_ref().map(|p| p.display().to_string()),
        "refresh": options.refresh,
    });
    let command_line = redacted_command_line(argv);
    let started = SystemTime::now();
    let run_id = store.begin_run(&NewRun {
        kind: RunKind::Other("tpch_power".into()),
        name: "tpch_power",
        started_at: started,
        options: &spec,
        host: &host,
        dbrig_version: env!("CARGO_PKG_VERSION"),
        command_line: &command_line,
        plan_text: None,
    })?;
    let target_text = target.to_string();
    let cell = store.ensure_cell(
        run_id,
        &NewCell {
            cell_key: &spec_key(&spec),
            configuration: "default",
            workload: "tpch_power",
            clients: 1,
            options: &spec,
            target: &target_text,
        },
    )?;
    let result = tpch::power_test(&target, &ConnectOptions::default(), &options, &progress).await;
    let finished = SystemTime::now();
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            let reason = e.to_string();
            crate::commands::record_failed_run(
                &mut store, run_id, cell, started, finished, &reason,
            )?;
            return Err(e.into());
        }
    };
    let extra = serde_json::json!({ "tpch_power": report });
    store.record_trial(
        cell,
        &NewTrial {
            trial: 1,
            status: TrialStatus::Done,
            reason: None,
            server_version: Some(&report.server_version),
            started_at: started,
            finished_at: finished,
            measurements: None,
            extra: Some(&extra),
        },
    )?;
    store.finish_run(run_id, RunStatus::Done, None)?;
    if a.format == Format::Json {
        let mut v = serde_json::to_value(&report)?;
        v["run_id"] = serde_json::json!(run_id.0);
        v["target"] = serde_json::json!(target_text);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "TPC-H power test, SF {} on {target_text} ({})",
            report.scale_factor, report.server_version
        );
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        table.set_header(["query", "seconds", "rows", "status"]);
        for o in report
            .rf1
            .iter()
            .chain(&report.queries)
            .chain(report.rf2.iter())
        {
            let status = match &o.error {
                Some(e) if o.status != QueryStatus::Ok => format!("{}: {e}", o.status.as_str()),
                _ => o.status.as_str().to_owned(),
            };
            table.add_row([
                o.name.clone(),
                format!("{:.6}", o.seconds()),
                o.rows.to_string(),
                status,
            ]);
        }
        println!("{table}");
        match report.power_at_size {
            Some(p) => println!("Power@Size = {p:.2}"),
            None => println!("Power@Size = n/a (a query or refresh function failed)"),
        }
        println!("Stored as run {} in {}", run_id.0, store.path().display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Run the built-in queries with validation parameters (no refresh) on one target.
async fn answers(url: &str, a: &CheckArgs) -> Result<(String, tpch::PowerReport)> {
    let mut c = a.connection.clone();
    c.target = Some(url.to_owned());
    let target = resolve_target(&c, &a.store)?;
    let options = PowerOptions {
        params: ParamMode::Validation,
        queries: None,
        refresh: false,
    };
    let report = tpch::power_test(&target, &ConnectOptions::default(), &options, &|_| {}).await?;
    Ok((target.to_string(), report))
}

async fn check(a: CheckArgs) -> Result<ExitCode> {
    let Some(main_url) = a.connection.target.clone() else {
        bail!("tpch check needs --target URL (and --against URL or --sf1-answers)");
    };
    if a.against.is_empty() && !a.sf1_answers {
        bail!(
            "tpch check needs --against URL (another engine with the same data) or --sf1-answers"
        );
    }
    let (main_name, main) = answers(&main_url, &a).await?;
    let mut others = Vec::new();
    for url in &a.against {
        others.push(answers(url, &a).await?);
    }
    let mut results = Vec::new();
    let mut all_same = true;
    for (i, q) in main.queries.iter().enumerate() {
        let mut verdict = "same".to_owned();
        let mut detail = None;
        if q.status == QueryStatus::Error {
            verdict = "error".into();
            detail = q.error.clone();
        }
        for (name, other) in &others {
            let o = &other.queries[i];
            if verdict != "same" {
                break;
            }
            if o.status == QueryStatus::Error {
                verdict = "error".into();
                detail = Some(format!("{name}: {}", o.error.clone().unwrap_or_default()));
            } else if let Some(d) =
                tpch::compare_results(&tpch::normalize(&q.result), &tpch::normalize(&o.result))
            {
                verdict = "different".into();
                detail = Some(format!("{main_name} vs {name}: {d}"));
            }
        }
        if verdict == "same" && a.sf1_answers {
            let n: u32 = q.name.parse().unwrap_or(0);
            let c = tpch::check_sf1_answer(n, &q.result);
            if !c.ok {
                verdict = "different".into();
                detail = c.detail.map(|d| format!("against the SF1 answer: {d}"));
            }
        }
        all_same &= verdict == "same";
        results.push(tpch::QueryComparison {
            query: q.name.clone(),
            verdict,
            detail,
        });
    }
    if a.format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "targets": std::iter::once(main_name.clone()).chain(others.iter().map(|(n, _)| n.clone())).collect::<Vec<_>>(),
                "queries": results,
                "all_same": all_same,
            }))?
        );
    } else {
        println!(
            "TPC-H answer check (validation parameters): {main_name}{}{}",
            others
                .iter()
                .map(|(n, _)| format!(" vs {n}"))
                .collect::<String>(),
            if a.sf1_answers { " vs SF1 answers" } else { "" }
        );
        for r in &results {
            let status = if r.verdict == "different" {
                "wrong"
            } else {
                r.verdict.as_str()
            };
            println!(
                "  Q{:<4}{:<10}{}",
                r.query,
                status,
                r.detail.as_deref().unwrap_or("")
            );
        }
    }
    Ok(if all_same {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn cleanup(a: CleanupArgs) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    let r = tpch::cleanup(&target, &ConnectOptions::default()).await?;
    if r.dropped.is_empty() {
        println!("Nothing to drop on {target}: no TPC-H table exists");
    } else {
        println!("Dropped {} on {target}", r.dropped.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
