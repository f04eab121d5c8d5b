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
use dbrig_workload::TrialOutcome;
use dbrig_workload::runner::{RunSpec, Stopper};

use crate::cli::WorkloadArgs;
use crate::commands::{
    EXIT_INTERRUPTED, connect_options, install_signal_handlers, open_store, resolve_seed,
};
use crate::connection::redacted_command_line;
use crate::environment::{self, Lifecycle, Servers};
use crate::plan::{self, Plan};

/// Print the resolved matrix and the order of trials.
fn print_dry_run(plan: &Plan) {
    println!("Plan '{}' from {}", plan.name, plan.path.display());
    println!("Configurations (baseline {}):", plan.baseline);
    for c in &plan.configurations {
        println!("  {:<16} {}", c.name, c.describe());
    }
    println!("Cells ({}):", plan.cells.len());
    for c in &plan.cells {
        let how = if c.workload.is_timed() {
            format!(
                "time {}s warm-up {}s  key {}",
                c.run.time,
                c.run.warmup,
                c.run.key_distribution().describe()
            )
        } else {
            format!("one benchmark run per trial  {}", c.workload.options_json())
        };
        println!(
            "  [{}] {:<12} {:<24} {:>5} clients  {how}",
            c.key,
            plan.configurations[c.configuration].name,
            c.workload.name(),
            c.clients,
        );
    }
    let seconds: f64 = plan
        .schedule
        .iter()
        .filter(|(c, _)| plan.cells[*c].workload.is_timed())
        .map(|(c, _)| plan.cells[*c].run.time + plan.cells[*c].run.warmup)
        .fold(0.0, |a, b| a + b);
    let benchmark_trials = plan
        .schedule
        .iter()
        .filter(|(c, _)| !plan.cells[*c].workload.is_timed())
        .count();
    println!(
        "Trials: {} ({} per cell), at least {:.0} s of measurement and warm-up{}",
        plan.schedule.len(),
        plan.trials,
        seconds,
        if benchmark_trials > 0 {
            format!(", plus {benchmark_trials} benchmark run(s) that take as long as they take")
        } else {
            String::new()
        }
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

    /// A line from inside a trial (a micro-benchmark's or power test's steps).
    fn note(&self, line: &str) {
        match &self.bar {
            Some(b) => b.set_message(line.to_owned()),
            None => eprintln!("dbrig: {line}"),
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
        if let Some(dbrig_driver::Target::Sqlite { path: Some(p) }) = &c.target
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
    let host_facts = dbrig_server::HostFacts::collect(None);
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
            let host = serde_json::to_value(&host_facts).unwrap_or_default();
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
        let target = plan.configurations[c.configuration].describe();
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

    let env = &plan.environment;
    if let Some(cpus) = &env.client_cpus
        && let Err(e) = environment::pin(std::process::id(), cpus)
    {
        eprintln!("dbrig: warning: cannot pin the client: {e}");
    }
    let mut servers = Servers::new(&args.store.out, &plan.servers, env);
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
    let mut configurations_begun: HashSet<usize> = HashSet::new();
    let mut configurations_ended: HashSet<usize> = HashSet::new();
    // Each configuration's last trial in the schedule: its after-configuration hooks follow it.
    let last_of_configuration: HashMap<usize, usize> = plan
        .schedule
        .iter()
        .enumerate()
        .map(|(i, &(ci, _))| (plan.cells[ci].configuration, i))
        .collect();
    let mut cache_drop_refused: Option<String> = None;
    let (mut done, mut failed, mut invalid, mut skipped) = (0usize, 0usize, 0usize, 0usize);
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
        let connect = connect_options(&cell.run);
        let mut hooks: Vec<environment::HookOutput> = Vec::new();
        let key = (cell.configuration, cell.workload_index);

        // 1. The target: external, or the managed server up with this configuration's settings.
        let restart = cell.lifecycle == Lifecycle::Restart;
        let fresh =
            cell.lifecycle == Lifecycle::FreshData && cell.writes && prepared.contains(&key);
        // Read-only only once the tables exist: preparing needs a writable server.
        let read_only =
            env.start_read_only && !cell.writes && (!cell.prepare || prepared.contains(&key));
        let resolved: Result<(dbrig_driver::Target, Option<u32>)> =
            match (&conf.target, &conf.server) {
                (Some(t), _) => Ok((t.clone(), None)),
                (None, Some(name)) => {
                    let restored = if fresh {
                        servers.restore_prepared(name, &conf.params)
                    } else {
                        Ok(())
                    };
                    restored.and_then(|()| {
                        servers.ensure(name, &conf.params, restart && !fresh, read_only)
                    })
                }
                (None, None) => Err(anyhow::anyhow!(
                    "configuration '{}' has no target",
                    conf.name
                )),
            };
        let mut result: Result<(dbrig_driver::Target, Option<u32>)> = resolved;

        // 2. Before the configuration's first trial: its hooks (the plan's, then its own).
        if let Ok((target, _)) = &result
            && configurations_begun.insert(cell.configuration)
        {
            hooks.extend(
                environment::run_hooks(
                    environment::HookPoint::BeforeConfiguration,
                    &env.hooks,
                    conf.hooks.as_ref(),
                    Some((target, &connect)),
                )
                .await,
            );
        }
        // 3. Tables, once per configuration × workload (then a data snapshot for fresh-data).
        if let Ok((target, _)) = &result
            && cell.prepare
            && !prepared.contains(&key)
        {
            let prepared_now = cell
                .workload
                .prepare_if_missing(
                    target,
                    &connect,
                    max_clients[&key],
                    run_options.rand_seed,
                    &|msg| eprintln!("dbrig: {msg}"),
                )
                .await;
            match prepared_now {
                Ok(done) => {
                    if let Some(line) = done {
                        eprintln!("dbrig: {line}");
                    }
                    prepared.insert(key);
                    if let (Lifecycle::FreshData, Some(name)) = (cell.lifecycle, &conf.server)
                        && cell.writes
                    {
                        result = servers
                            .snapshot_prepared(name, &conf.params)
                            .and_then(|()| servers.ensure(name, &conf.params, false, false));
                    }
                    if let Some(name) = &conf.server
                        && env.start_read_only
                        && !cell.writes
                    {
                        // Prepared on a writable server: now the read-only one.
                        result = servers.ensure(name, &conf.params, false, true);
                    }
                }
                Err(e) => result = Err(e.into()),
            }
        }
        // 4. Page cache, hooks, life before, OS sampling, the run, and the same after.
        let mut cache_note = None;
        if env.drop_caches {
            match (&cache_drop_refused, environment::drop_caches()) {
                (_, Ok(())) => cache_note = Some("dropped".to_owned()),
                (None, Err(e)) => {
                    eprintln!(
                        "dbrig: warning: {e}; trials run with a warm page cache (recorded on each trial)"
                    );
                    cache_note = Some(format!("not dropped: {e}"));
                    cache_drop_refused = Some(e);
                }
                (Some(e), Err(_)) => cache_note = Some(format!("not dropped: {e}")),
            }
        }
        let mut life = (None, None);
        // A power test's controls restarted the server on purpose (not a crash).
        let mut controls_restarted = false;
        let mut os_samples = Vec::new();
        let mut settings = serde_json::Value::Null;
        let mut placement = serde_json::Value::Null;
        let last_of_conf = last_of_configuration.get(&cell.configuration) == Some(&i);
        let outcome = match result {
            Ok((target, server_pid)) => {
                hooks.extend(
                    environment::run_hooks(
                        environment::HookPoint::BeforeTrial,
                        &env.hooks,
                        conf.hooks.as_ref(),
                        Some((&target, &connect)),
                    )
                    .await,
                );
                // After the hooks (they may SET GLOBAL): what this trial ran with.
                settings = environment::server_settings(&target, &connect).await;
                let numa = conf.server.as_deref().and_then(|n| servers.numa(n));
                placement = environment::placement(env, server_pid, numa.as_deref());
                let process_life =
                    |servers: &mut Servers| conf.server.as_deref().map(|n| servers.life_mark(n));
                let before = environment::merged(
                    environment::observe_life(&target, &connect).await,
                    process_life(&mut servers),
                );
                let sampling = environment::Sampling::start(env.os_stats_interval, server_pid);
                let spec = RunSpec {
                    target: target.clone(),
                    connect: connect.clone(),
                    options: run_options.clone(),
                    seed: run_options.rand_seed,
                };
                let workload = cell.workload.clone().with_host(host_facts.cpu_mhz);
                let mut power_env = PlanPowerEnv {
                    servers: &mut servers,
                    server: conf.server.clone(),
                    params: conf.params.clone(),
                    read_only: env.start_read_only && !cell.writes,
                    hook_timeout: env.hooks.timeout.unwrap_or(60.0),
                    restarts: 0,
                };
                // Ctrl-C during the before-trial hooks: the trial does not start (a quick
                // trial could otherwise finish before it noticed, and be stored as done).
                let r = if interrupt.is_stopped() {
                    Ok(None)
                } else {
                    workload
                        .trial_in(
                            &spec,
                            Arc::clone(&interrupt),
                            &|msg| progress.note(&format!("{what}: {msg}")),
                            Some(&mut power_env),
                        )
                        .await
                        .map_err(anyhow::Error::from)
                };
                controls_restarted = power_env.restarts > 0;
                os_samples = sampling.stop();
                let after = environment::merged(
                    environment::observe_life(&target, &connect).await,
                    process_life(&mut servers),
                );
                life = (Some(before), Some(after));
                hooks.extend(
                    environment::run_hooks(
                        environment::HookPoint::AfterTrial,
                        &env.hooks,
                        conf.hooks.as_ref(),
                        Some((&target, &connect)),
                    )
                    .await,
                );
                if last_of_conf && configurations_ended.insert(cell.configuration) {
                    hooks.extend(
                        environment::run_hooks(
                            environment::HookPoint::AfterConfiguration,
                            &env.hooks,
                            conf.hooks.as_ref(),
                            Some((&target, &connect)),
                        )
                        .await,
                    );
                }
                r
            }
            Err(e) => Err(e),
        };
        let restarted = !controls_restarted
            && matches!(&life, (Some(b), Some(a)) if environment::restarted(b, a));
        let finished = SystemTime::now();
        let (status, reason, summary) = match &outcome {
            Ok(_) if restarted => {
                let why = "the server restarted or died during the trial: its figures mix two server lives".to_owned();
                (
                    TrialStatus::Invalid,
                    Some(why.clone()),
                    format!("invalid: {why}"),
                )
            }
            Ok(None) => (
                TrialStatus::Interrupted,
                Some("interrupted by signal".to_owned()),
                "interrupted".to_owned(),
            ),
            Ok(Some(TrialOutcome::Oltp(o))) if o.measurements.interrupted => (
                TrialStatus::Interrupted,
                Some("interrupted by signal".to_owned()),
                "interrupted".to_owned(),
            ),
            Ok(Some(TrialOutcome::Oltp(o))) if !o.measurements.fatal_errors.is_empty() => {
                let first = o.measurements.fatal_errors[0].clone();
                (
                    TrialStatus::Failed,
                    Some(first.clone()),
                    format!("failed: {first}"),
                )
            }
            Ok(Some(o)) => (TrialStatus::Done, None, o.summary()),
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
            Ok(Some(o @ TrialOutcome::Oltp(r))) => {
                (Some(&r.measurements), Some(o.server_version()))
            }
            Ok(Some(o)) => (None, Some(o.server_version())),
            _ => (None, None),
        };
        let mut extra = serde_json::json!({
            "os_samples": os_samples,
            "hooks": hooks,
            "page_cache": cache_note,
            "client_cpus": env.client_cpus,
            "server_cpus": env.server_cpus,
            "server": conf.server.as_deref().map(|n| servers.version_facts(n)),
            "server_settings": settings,
            "placement": placement,
            "server_life": { "before": life.0, "after": life.1 },
            "seed": run_options.rand_seed,
        });
        // Micro and TPC-H results where the single-run commands keep them.
        if let Ok(Some(o)) = &outcome
            && let Some((k, v)) = o.extra()
        {
            extra[k] = v;
        }
        if let Ok(Some(TrialOutcome::Oltp(r))) = &outcome
            && !r.statements.is_empty()
        {
            extra["statements"] = serde_json::json!(r.statements);
        }
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
                extra: Some(&extra),
            },
        )?;
        match status {
            TrialStatus::Done => done += 1,
            TrialStatus::Invalid => invalid += 1,
            TrialStatus::Interrupted => {}
            _ => failed += 1,
        }
        progress.end(i, &what, &summary);
        crate::commands::after_trial_hook(&store, run_id, &args.store);
    }
    progress.finish();
    // Configurations whose last trial did not run (interrupted, or it failed before its
    // target was up): their after-configuration shell hooks still run; nothing to store with.
    for ci in configurations_begun.difference(&configurations_ended) {
        let conf = &plan.configurations[*ci];
        let outs = environment::run_hooks(
            environment::HookPoint::AfterConfiguration,
            &env.hooks,
            conf.hooks.as_ref(),
            None,
        )
        .await;
        for out in outs.iter().filter(|o| o.failed()) {
            eprintln!(
                "dbrig: warning: {} hook of configuration {}: {}",
                out.hook,
                conf.name,
                out.output.trim()
            );
        }
    }
    servers.stop_all();
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
        "dbrig: run {}: {done} trial(s) done, {invalid} invalid, {failed} failed, {skipped} already done (skipped); results in {}",
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

/// What a TPC-H power test's launcher controls ask of a plan trial: restarts of the
/// configuration's managed server (a query's own startup parameters over the
/// configuration's), page-cache drops and shell hooks, through the plan's own machinery.
struct PlanPowerEnv<'a> {
    servers: &'a mut Servers,
    server: Option<String>,
    params: dbrig_server::Params,
    read_only: bool,
    hook_timeout: f64,
    restarts: u32,
}

impl dbrig_workload::tpch::PowerEnv for PlanPowerEnv<'_> {
    fn can_restart(&self) -> bool {
        self.server.is_some()
    }

    fn restart(&mut self, params: &[String]) -> std::result::Result<dbrig_driver::Target, String> {
        let name = self
            .server
            .as_deref()
            .ok_or("the configuration's target is external: dbrig cannot restart it")?;
        let extra = dbrig_server::Params::parse(params).map_err(|e| e.to_string())?;
        let (target, _) = self
            .servers
            .ensure(name, &self.params.merged(&extra), true, self.read_only)
            .map_err(|e| format!("{e:#}"))?;
        self.restarts += 1;
        Ok(target)
    }

    fn drop_caches(&mut self) -> std::result::Result<(), String> {
        environment::drop_caches()
    }

    fn shell_hook(&mut self, name: &str, command: &str) -> serde_json::Value {
        serde_json::to_value(environment::run_shell_hook(
            name,
            command,
            self.hook_timeout,
        ))
        .unwrap_or_default()
    }

    /// One workload runs on every configuration: an external one runs it without restarts.
    fn strict(&self) -> bool {
        false
    }
}
