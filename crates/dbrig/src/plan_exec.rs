//! Executing a plan: every (cell, trial) in the plan's order, each trial recorded as it ends,
//! finished trials skipped on `--resume`, failures recorded and passed over, Ctrl-C saving
//! the trial in flight as interrupted.

use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use anyhow::Result;
use dbrig_store::{CellId, NewCell, NewRun, NewTrial, RunKind, RunStatus, TrialStatus};
use dbrig_workload::Workload;
use dbrig_workload::runner::{self, RunSpec, Stopper};

use crate::cli::WorkloadArgs;
use crate::commands::{
    EXIT_INTERRUPTED, connect_options, install_signal_handlers, open_store, prepare_if_missing,
    resolve_seed,
};
use crate::connection::redacted_command_line;
use crate::plan::{self, Plan};

/// Print the resolved matrix and the order of trials.
fn print_dry_run(plan: &Plan) {
    println!("Plan '{}' from {}", plan.name, plan.path.display());
    println!("Configurations (baseline {}):", plan.baseline);
    for c in &plan.configurations {
        println!("  {:<16} {}", c.name, c.target);
    }
    println!("Cells ({}):", plan.cells.len());
    for c in &plan.cells {
        println!(
            "  [{}] {:<12} {:<24} {:>5} clients  time {}s warm-up {}s  key {}",
            c.key,
            plan.configurations[c.configuration].name,
            c.workload.name(),
            c.clients,
            c.run.time,
            c.run.warmup,
            c.run.key_distribution().describe()
        );
    }
    let seconds: f64 = plan
        .schedule
        .iter()
        .map(|(c, _)| plan.cells[*c].run.time + plan.cells[*c].run.warmup)
        .sum();
    println!(
        "Trials: {} ({} per cell), at least {:.0} s of measurement and warm-up",
        plan.schedule.len(),
        plan.trials,
        seconds
    );
    println!("Order:");
    for (i, (c, t)) in plan.schedule.iter().enumerate() {
        let cell = &plan.cells[*c];
        println!(
            "  {:>4}. {} {} {} clients, trial {t}",
            i + 1,
            plan.configurations[cell.configuration].name,
            cell.workload.name(),
            cell.clients
        );
    }
    println!("(dry run: nothing was connected to or written)");
}

/// Progress: a bar on a terminal, one plain line per trial otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    started: Instant,
}

impl Progress {
    fn new(total: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} trial {pos}/{len} [{elapsed_precise}, ~{eta} left] {bar:30} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Self {
            bar,
            total,
            started: Instant::now(),
        }
    }

    fn begin(&self, i: usize, what: &str) {
        if let Some(b) = &self.bar {
            b.set_position(i as u64);
            b.set_message(what.to_owned());
        }
    }

    fn end(&self, i: usize, what: &str, outcome: &str) {
        match &self.bar {
            Some(b) => {
                b.set_position(i as u64 + 1);
                b.println(format!("{what}: {outcome}"));
            }
            None => eprintln!(
                "dbrig: [{}/{} {:.0}s] {what}: {outcome}",
                i + 1,
                self.total,
                self.started.elapsed().as_secs_f64()
            ),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

pub async fn run_plan(args: &WorkloadArgs, argv: &[String]) -> Result<ExitCode> {
    let plan = plan::load(Path::new(&args.workload), &args.defines, &args.sets)?;
    if args.dry_run {
        print_dry_run(&plan);
        return Ok(ExitCode::SUCCESS);
    }
    let mut store = open_store(&args.store)?;
    // SQLite file targets may name a folder that does not exist yet (e.g. the output folder).
    for c in &plan.configurations {
        if let dbrig_driver::Target::Sqlite { path: Some(p) } = &c.target
            && let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                anyhow::anyhow!(
                    "configuration '{}': cannot create {}: {e}",
                    c.name,
                    parent.display()
                )
            })?;
        }
    }
    let resumed = if args.resume {
        store.latest_plan_run(&plan.name)?
    } else {
        None
    };
    let run_id = match resumed {
        Some(id) => {
            store.reopen_run(id)?;
            eprintln!("dbrig: resuming run {} of plan '{}'", id.0, plan.name);
            id
        }
        None => {
            let host =
                serde_json::to_value(dbrig_server::HostFacts::collect(None)).unwrap_or_default();
            store.begin_run(&NewRun {
                kind: RunKind::Plan,
                name: &plan.name,
                started_at: SystemTime::now(),
                options: &plan.resolved,
                host: &host,
                dbrig_version: env!("CARGO_PKG_VERSION"),
                command_line: &redacted_command_line(argv),
                plan_text: Some(&redact_plan_text(&plan)),
            })?
        }
    };
    let mut cell_ids: Vec<CellId> = Vec::with_capacity(plan.cells.len());
    for c in &plan.cells {
        let target = plan.configurations[c.configuration].target.to_string();
        cell_ids.push(store.ensure_cell(
            run_id,
            &NewCell {
                cell_key: &c.key,
                configuration: &plan.configurations[c.configuration].name,
                workload: c.workload.name(),
                clients: c.clients,
                options: &c.spec,
                target: &target,
            },
        )?);
    }

    let interrupt = Stopper::new();
    install_signal_handlers(Arc::clone(&interrupt));
    let progress = Progress::new(plan.schedule.len());
    // bulk_insert prepares a table per client: prepare for the largest client count.
    let mut max_clients: HashMap<(usize, usize), u32> = HashMap::new();
    for c in &plan.cells {
        let e = max_clients
            .entry((c.configuration, c.workload_index))
            .or_default();
        *e = (*e).max(c.clients);
    }
    let mut prepared: HashSet<(usize, usize)> = HashSet::new();
    let (mut done, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    for (i, &(ci, trial)) in plan.schedule.iter().enumerate() {
        if interrupt.is_stopped() {
            break;
        }
        let cell = &plan.cells[ci];
        let conf = &plan.configurations[cell.configuration];
        let what = format!(
            "{} {} {} clients trial {trial}",
            conf.name,
            cell.workload.name(),
            cell.clients
        );
        if store
            .finished_trials(run_id, &cell.key)?
            .iter()
            .any(|t| t.trial == trial)
        {
            skipped += 1;
            continue;
        }
        progress.begin(i, &what);
        let started = SystemTime::now();
        let mut run_options = cell.run.clone();
        run_options.rand_seed = resolve_seed(&cell.run);
        let spec = RunSpec {
            target: conf.target.clone(),
            connect: connect_options(&cell.run),
            options: run_options.clone(),
            seed: run_options.rand_seed,
        };
        let key = (cell.configuration, cell.workload_index);
        let mut result = Ok(());
        if cell.prepare && !prepared.contains(&key) {
            let mut prep_args = args.clone();
            prep_args.run = run_options.clone();
            prep_args.run.threads = max_clients[&key];
            let Workload::Oltp(o) = &cell.workload;
            prep_args.oltp = (*o.options).clone();
            result = prepare_if_missing(&cell.workload, &conf.target, &prep_args, spec.seed).await;
            if result.is_ok() {
                prepared.insert(key);
            }
        }
        let outcome = match result {
            Ok(()) => runner::run(&cell.workload, &spec, Arc::clone(&interrupt), &mut |_| {})
                .await
                .map_err(anyhow::Error::from),
            Err(e) => Err(e),
        };
        let finished = SystemTime::now();
        let (status, reason, summary) = match &outcome {
            Ok(o) if o.measurements.interrupted => (
                TrialStatus::Interrupted,
                Some("interrupted by signal".to_owned()),
                "interrupted".to_owned(),
            ),
            Ok(o) if !o.measurements.fatal_errors.is_empty() => {
                let first = o.measurements.fatal_errors[0].clone();
                (
                    TrialStatus::Failed,
                    Some(first.clone()),
                    format!("failed: {first}"),
                )
            }
            Ok(o) => (
                TrialStatus::Done,
                None,
                format!(
                    "{:.2} tps, {:.2} qps, p95 {:.2} ms",
                    o.measurements.tps(),
                    o.measurements.qps(),
                    o.measurements.latency_summary().p95
                ),
            ),
            Err(e) => {
                let msg = e
                    .chain()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(": ");
                (
                    TrialStatus::Failed,
                    Some(msg.clone()),
                    format!("failed: {msg}"),
                )
            }
        };
        let (measurements, server_version) = match &outcome {
            Ok(o) => (Some(&o.measurements), Some(o.server_version.as_str())),
            Err(_) => (None, None),
        };
        store.record_trial(
            cell_ids[ci],
            &NewTrial {
                trial,
                status,
                reason: reason.as_deref(),
                server_version,
                started_at: started,
                finished_at: finished,
                measurements,
                extra: None,
            },
        )?;
        match status {
            TrialStatus::Done => done += 1,
            TrialStatus::Interrupted => {}
            _ => failed += 1,
        }
        progress.end(i, &what, &summary);
        crate::commands::after_trial_hook(&store, run_id, &args.store);
    }
    progress.finish();
    let interrupted = interrupt.is_stopped();
    let (status, error) = if interrupted {
        (
            RunStatus::Interrupted,
            Some(format!(
                "interrupted after {done} trial(s); continue with --resume"
            )),
        )
    } else if failed > 0 {
        (
            RunStatus::Failed,
            Some(format!(
                "{failed} of {} trial(s) failed",
                plan.schedule.len()
            )),
        )
    } else {
        (RunStatus::Done, None)
    };
    store.finish_run(run_id, status, error.as_deref())?;
    crate::commands::print_plan_report(&store, run_id, &plan.baseline, &args.store)?;
    eprintln!(
        "dbrig: run {}: {done} trial(s) done, {failed} failed, {skipped} already done (skipped); results in {}",
        run_id.0,
        store.path().display()
    );
    Ok(if interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else if failed > 0 {
        eprintln!(
            "dbrig: error: {failed} trial(s) failed: see the report above (each failure is stored with its reason)"
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The plan text as stored: target URLs redacted.
fn redact_plan_text(plan: &Plan) -> String {
    plan.text
        .lines()
        .map(|l| match l.split_once("target") {
            Some((_, rest)) if rest.trim_start().starts_with('=') && l.contains("://") => {
                let url = rest
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                match dbrig_driver::Target::parse(url) {
                    Ok(t) => format!("target = \"{t}\""),
                    Err(_) => "target = \"***\"".to_owned(),
                }
            }
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
