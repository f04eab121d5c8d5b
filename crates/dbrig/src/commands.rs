//! The commands: resolve arguments into a run, execute it, record it, report it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow};
use dbrig_driver::{ConnectOptions, ErrorPolicy, Target};
use dbrig_report::{RunHeader, interval_line, run_json, run_text, statements_text};
use dbrig_server::HostFacts;
use dbrig_store::{
    CellId, NewCell, NewRun, NewTrial, RunId, RunKind, RunStatus, Store, TrialStatus,
};
use dbrig_workload::options::PsMode;
use dbrig_workload::runner::{self, RunSpec, Stopper};
use dbrig_workload::{RunOptions, Workload};

use crate::cli::{DoctorArgs, Format, StoreArgs, WorkloadArgs};
use crate::connection::{redacted_command_line, resolve_target};

/// Exit code of a run stopped by Ctrl-C / SIGTERM (what shells use for SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

pub fn connect_options(run: &RunOptions) -> ConnectOptions {
    ConnectOptions {
        policy: ErrorPolicy::from_list(&run.retry_codes),
        prepared: run.ps_mode == PsMode::Auto,
        connect_timeout: std::time::Duration::from_secs_f64(run.connect_timeout.max(0.1)),
        lean: false,
        own_thread: None,
    }
}

pub fn resolve_seed(run: &RunOptions) -> u64 {
    if run.rand_seed != 0 {
        return run.rand_seed;
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(1);
    (nanos as u64 ^ (nanos >> 64) as u64).max(1)
}

fn schedule_text(run: &RunOptions) -> String {
    match run.schedule().rate() {
        None => "closed loop".into(),
        Some(r) => format!("open loop, {:?} arrivals at {r}/s", run.rate_schedule).to_lowercase(),
    }
}

/// Ctrl-C and SIGTERM raise the stopper; the run finishes its write and ends interrupted.
pub fn install_signal_handlers(stopper: Arc<Stopper>) {
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term_recv = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term_recv => {}
        }
        eprintln!("dbrig: interrupted: finishing in-flight events and saving what was measured");
        stopper.stop();
    });
}

pub async fn prepare(args: WorkloadArgs) -> Result<ExitCode> {
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = Workload::from_name(&args.workload, args.oltp.clone())?;
    let Workload::Oltp(oltp) = &workload;
    let seed = resolve_seed(&args.run);
    eprintln!("dbrig: preparing {} on {target}", workload.name());
    let report = oltp
        .prepare(
            &target,
            &connect_options(&args.run),
            args.run.threads,
            seed,
            &|msg| eprintln!("dbrig: {msg}"),
        )
        .await?;
    if args.format == Format::Json {
        println!(
            "{}",
            serde_json::json!({
                "workload": workload.name(),
                "target": target.to_string(),
                "tables": report.tables,
                "rows": report.rows,
                "load_seconds": report.load_seconds,
                "index_seconds": report.index_seconds,
                "rows_per_second": report.rows_per_second(),
                "parallel": report.parallel,
            })
        );
    } else {
        println!(
            "Prepared {} table(s) ({}) with {} rows in {:.2} s ({:.0} rows/s, {} loaders), indexes in {:.2} s",
            report.tables.len(),
            report.tables.join(", "),
            report.rows,
            report.load_seconds,
            report.rows_per_second(),
            report.parallel,
            report.index_seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `run --prepare`: load the tables unless they are all there already.
pub async fn prepare_if_missing(
    workload: &Workload,
    target: &dbrig_driver::Target,
    args: &WorkloadArgs,
    seed: u64,
) -> Result<()> {
    // One place decides what "missing" means for every kind (dbrig_workload::kind).
    let done = dbrig_workload::WorkloadKind::Oltp(workload.clone())
        .prepare_if_missing(
            target,
            &connect_options(&args.run),
            args.run.threads,
            seed,
            &|msg| eprintln!("dbrig: {msg}"),
        )
        .await?;
    if let Some(line) = done {
        eprintln!("dbrig: {line}");
    }
    Ok(())
}

pub async fn cleanup(args: WorkloadArgs) -> Result<ExitCode> {
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = Workload::from_name(&args.workload, args.oltp.clone())?;
    let Workload::Oltp(oltp) = &workload;
    let report = oltp
        .cleanup(&target, &connect_options(&args.run), args.run.threads)
        .await?;
    if report.dropped.is_empty() {
        println!(
            "Nothing to drop on {target}: no table of {} exists",
            workload.name()
        );
    } else {
        println!("Dropped {} on {target}", report.dropped.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn open_store(store: &StoreArgs) -> Result<Store> {
    let path = store.results_path();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Ok(Store::open(&path)?)
}

/// The run and its one cell that a single measuring command (`run`, `micro`, `tpch power`,
/// `tpch throughput`) records before it measures (a plan records many cells instead).
pub struct OneCellRun<'a> {
    pub kind: RunKind,
    pub name: &'a str,
    /// The run's resolved options, stored with the run.
    pub options: &'a serde_json::Value,
    /// The cell's options and key (what resume and comparisons match on).
    pub cell_options: &'a serde_json::Value,
    pub cell_key: &'a str,
    pub clients: u32,
    pub target: &'a Target,
}

/// Record the run as running (with host facts and the redacted command line) and its cell.
pub fn begin_one_cell_run(
    store: &mut Store,
    host: &serde_json::Value,
    argv: &[String],
    r: &OneCellRun<'_>,
) -> Result<(RunId, CellId, SystemTime)> {
    let command_line = redacted_command_line(argv);
    let started = SystemTime::now();
    let run_id = store.begin_run(&NewRun {
        kind: r.kind.clone(),
        name: r.name,
        started_at: started,
        options: r.options,
        host,
        dbrig_version: env!("CARGO_PKG_VERSION"),
        command_line: &command_line,
        plan_text: None,
    })?;
    let cell = store.ensure_cell(
        run_id,
        &NewCell {
            cell_key: r.cell_key,
            configuration: "default",
            workload: r.name,
            clients: r.clients,
            options: r.cell_options,
            target: &r.target.to_string(),
        },
    )?;
    Ok((run_id, cell, started))
}

/// A short stable key of a JSON specification (FNV-1a 64 over its canonical text): the same
/// specification always gives the same key, which is what resume matches on.
pub fn spec_key(spec: &serde_json::Value) -> String {
    let text = spec.to_string(); // serde_json orders object keys (no preserve_order feature)
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Where a plan run's self-contained HTML page goes.
pub fn html_path(out: &StoreArgs, run: dbrig_store::RunId) -> std::path::PathBuf {
    out.out.join(format!("run-{}.html", run.0))
}

/// After each plan trial: regenerate the run's HTML page so a long run can be watched.
/// A page that cannot be written is reported and the plan goes on (results are in the store).
pub fn after_trial_hook(store: &Store, run: dbrig_store::RunId, out: &StoreArgs) {
    if let Err(e) = dbrig_report::write_html_report(store, run, &html_path(out, run)) {
        eprintln!("dbrig: warning: could not update the HTML report: {e}");
    }
}

/// The console report of a plan run: the seeds' tables and the verdicts.
pub fn print_plan_report(
    store: &Store,
    run: dbrig_store::RunId,
    baseline: &str,
    out: &StoreArgs,
) -> Result<()> {
    let mut data = dbrig_report::ReportData::load(store, run)?;
    data.set_baseline(baseline)?;
    println!("{}", dbrig_report::report_text(&data));
    after_trial_hook(store, run, out);
    println!("HTML report: {}", html_path(out, run).display());
    Ok(())
}

/// A single-trial run that failed before it measured anything: its trial is recorded
/// failed with the reason and the run is closed failed (one place for every command).
pub fn record_failed_run(
    store: &mut Store,
    run: dbrig_store::RunId,
    cell: dbrig_store::CellId,
    started: SystemTime,
    finished: SystemTime,
    reason: &str,
) -> Result<()> {
    store.record_trial(
        cell,
        &NewTrial {
            trial: 1,
            status: TrialStatus::Failed,
            reason: Some(reason),
            server_version: None,
            started_at: started,
            finished_at: finished,
            measurements: None,
            extra: None,
        },
    )?;
    store.finish_run(run, RunStatus::Failed, Some(reason))?;
    Ok(())
}

pub async fn run(args: WorkloadArgs, argv: &[String]) -> Result<ExitCode> {
    if args.workload.ends_with(".toml") || std::path::Path::new(&args.workload).is_file() {
        return crate::plan_exec::run_plan(&args, argv).await;
    }
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = Workload::from_name(&args.workload, args.oltp.clone())?;
    args.run.validate().map_err(|e| anyhow!(e))?;
    let seed = resolve_seed(&args.run);
    let mut store = open_store(&args.store)?;
    let host = serde_json::to_value(HostFacts::collect(None)).unwrap_or_default();
    let options = serde_json::json!({
        "workload": workload.name(),
        "target": target.to_string(),
        "run": args.run,
        "workload_options": workload.options_json(),
        "seed": seed,
    });
    let target_text = target.to_string();
    let cell_options = serde_json::json!({ "run": args.run, "workload": workload.options_json() });
    let cell_key = spec_key(
        &serde_json::json!({ "target": target_text, "workload": workload.name(), "options": cell_options }),
    );
    let (run_id, cell, started) = begin_one_cell_run(
        &mut store,
        &host,
        argv,
        &OneCellRun {
            kind: RunKind::Workload,
            name: workload.name(),
            options: &options,
            cell_options: &cell_options,
            cell_key: &cell_key,
            clients: args.run.threads,
            target: &target,
        },
    )?;

    if args.prepare {
        prepare_if_missing(&workload, &target, &args, seed).await?;
    }
    let interrupt = Stopper::new();
    install_signal_handlers(Arc::clone(&interrupt));
    let spec = RunSpec {
        target: target.clone(),
        connect: connect_options(&args.run),
        options: args.run.clone(),
        seed,
    };
    let text = args.format == Format::Text;
    if text {
        println!(
            "dbrig {} — {} on {target}\nRunning with {} client(s), {}, {} keys, seed {seed}\n",
            env!("CARGO_PKG_VERSION"),
            workload.name(),
            args.run.threads,
            schedule_text(&args.run),
            args.run.key_distribution().describe(),
        );
    }
    let percentile = args.run.percentile;
    let mut on_interval = move |s: &dbrig_core::IntervalSample| {
        if text {
            println!("{}", interval_line(s, percentile));
        }
    };
    // Every server variable, stored with the trial (what this run ran against).
    let settings = crate::environment::server_settings(&target, &spec.connect).await;
    let extra = (!settings.is_null()).then(|| serde_json::json!({ "server_settings": settings }));
    let result = runner::run(&workload, &spec, interrupt, &mut on_interval).await;
    let finished = SystemTime::now();
    match result {
        Ok(outcome) => {
            let m = &outcome.measurements;
            // Per-statement latency is stored with the trial beside the server settings.
            let mut extra = extra;
            if !outcome.statements.is_empty() {
                extra.get_or_insert_with(|| serde_json::json!({}))["statements"] =
                    serde_json::json!(outcome.statements);
            }
            let (trial_status, run_status, reason) = if m.interrupted {
                (
                    TrialStatus::Interrupted,
                    RunStatus::Interrupted,
                    Some("interrupted by signal".to_owned()),
                )
            } else if !m.fatal_errors.is_empty() {
                (
                    TrialStatus::Failed,
                    RunStatus::Failed,
                    m.fatal_errors.first().cloned(),
                )
            } else {
                (TrialStatus::Done, RunStatus::Done, None)
            };
            store.record_trial(
                cell,
                &NewTrial {
                    trial: 1,
                    status: trial_status,
                    reason: reason.as_deref(),
                    server_version: Some(&outcome.server_version),
                    started_at: started,
                    finished_at: finished,
                    measurements: Some(m),
                    extra: extra.as_ref(),
                },
            )?;
            store.finish_run(run_id, run_status, reason.as_deref())?;
            let header = RunHeader {
                workload: workload.name().to_owned(),
                target: target_text,
                server_version: outcome.server_version.clone(),
                seed,
                schedule: schedule_text(&args.run),
                warmup_s: args.run.warmup,
            };
            if text {
                if !m.intervals.is_empty() {
                    println!();
                }
                print!("{}", run_text(&header, m));
                print!("{}", statements_text(&outcome.statements));
                println!("\nStored as run {} in {}", run_id.0, store.path().display());
            } else {
                let mut v = run_json(&header, m);
                v["run_id"] = serde_json::json!(run_id.0);
                v["statements"] = serde_json::json!(outcome.statements);
                if let Some(u) = dbrig_server::ProcessUsage::of_self() {
                    // The client's own cost, for side-by-side comparisons with other tools.
                    v["client"] = serde_json::json!({
                        "cpu_user_s": u.user_s,
                        "cpu_system_s": u.system_s,
                        "peak_rss_bytes": u.peak_rss_bytes,
                    });
                }
                v["status"] = serde_json::json!(run_status.as_str());
                println!("{}", serde_json::to_string_pretty(&v)?);
            }
            Ok(match run_status {
                RunStatus::Done => ExitCode::SUCCESS,
                RunStatus::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
                _ => {
                    eprintln!(
                        "dbrig: error: {} client(s) stopped on a fatal error; first: {}",
                        m.fatal_errors.len(),
                        m.fatal_errors.first().map(String::as_str).unwrap_or("?")
                    );
                    ExitCode::FAILURE
                }
            })
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

pub fn list() -> Result<ExitCode> {
    use clap::{Args, Command};
    println!("Workloads:");
    for w in dbrig_workload::catalog() {
        let aliases = if w.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also: {})", w.aliases.join(", "))
        };
        println!("  {:<24}{}{}", w.name, w.description, aliases);
    }
    println!(
        "\nIn plans also ([[workload]] name; options as `dbrig micro NAME --help`, or sf, queries, seed, refresh, streams … for TPC-H):"
    );
    for (name, description) in dbrig_workload::kind::plan_only_kinds() {
        println!("  {name:<24}{description}");
    }
    let sections = [
        ("Run options", RunOptions::augment_args(Command::new("x"))),
        (
            "OLTP options",
            dbrig_workload::OltpOptions::augment_args(Command::new("x")),
        ),
        (
            "Connection options",
            crate::cli::ConnectionArgs::augment_args(Command::new("x")),
        ),
        (
            "Output options",
            crate::cli::StoreArgs::augment_args(Command::new("x")),
        ),
    ];
    for (title, cmd) in sections {
        println!("\n{title}:");
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else { continue };
            let default: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let possible: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|p| p.get_name().to_owned())
                .collect();
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let mut line = format!("  --{long:<22} {help}");
            if !possible.is_empty() && possible != ["true", "false"] {
                line.push_str(&format!(" [{}]", possible.join("|")));
            }
            if !default.is_empty() {
                line.push_str(&format!(" (default: {})", default.join(",")));
            }
            println!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn doctor(args: DoctorArgs) -> Result<ExitCode> {
    let facts = HostFacts::collect(args.data_dir.as_deref());
    let mut warnings: Vec<String> = dbrig_server::doctor_warnings(&facts, args.clients)
        .iter()
        .map(|w| w.to_string())
        .collect();
    // The server section, with `--target` (or the sysbench-style connection options).
    let server = match (&args.connection.target, &args.connection.db_driver) {
        (None, None) => None,
        _ => {
            let target =
                crate::connection::resolve_target(&args.connection, &StoreArgs::default())?;
            let settings =
                crate::environment::server_settings(&target, &ConnectOptions::default()).await;
            if let Some(e) = settings.get("error").and_then(|e| e.as_str()) {
                anyhow::bail!("doctor: cannot ask the server {target}: {e}");
            }
            warnings.extend(crate::environment::server_warnings(&settings, args.clients));
            Some((target, settings))
        }
    };
    if args.format == Format::Json {
        let v = serde_json::json!({
            "host": facts,
            "server": server.as_ref().map(|(t, s)| serde_json::json!({"target": t.to_string(), "facts": s})),
            "warnings": warnings,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("Host:");
    for (k, v) in dbrig_server::host::facts_summary(&facts) {
        println!("  {k:<22}{v}");
    }
    println!();
    if let Some((target, settings)) = &server {
        println!("Server ({target}):");
        for (k, v) in crate::environment::server_summary(settings) {
            println!("  {k:<31} {v}");
        }
        println!();
    }
    if warnings.is_empty() {
        println!("Nothing found that would distort a benchmark.");
    } else {
        for w in &warnings {
            println!("{w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn runs(args: StoreArgs) -> Result<ExitCode> {
    let path = args.results_path();
    if !path.exists() {
        return Err(anyhow!(
            "no results database at {}: run a benchmark first, or pass --results PATH",
            path.display()
        ));
    }
    let store = Store::open(&path)?;
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(["run", "kind", "name", "status", "started", "trials"]);
    for r in store.runs()? {
        let cells = store.cells(r.id)?;
        let mut trials = 0;
        for c in &cells {
            trials += store.trials(c.id)?.len();
        }
        table.add_row([
            r.id.0.to_string(),
            r.kind.to_string(),
            r.name.clone(),
            r.status.as_str().to_owned(),
            r.started_at.clone(),
            trials.to_string(),
        ]);
    }
    println!("{table}");
    Ok(ExitCode::SUCCESS)
}
