//! The one executor: every measurement dbrig takes — a plan file's matrix or a single
//! command's one-cell plan — runs here, trial by trial in the plan's order, each trial recorded
//! as it ends through the one [`Recorder`].
//!
//! A trial goes through named steps: [`Executor::bring_up`] (the external target, or the
//! managed server with the configuration's settings), the configuration's before-hooks once,
//! [`Executor::prepare`] (the workload's data, once per configuration × workload), the page
//! cache, then [`Executor::measure`] (before-trial hooks, server settings, placement, server
//! life, OS sampling, the workload's trial, the same after), and the one status rule
//! ([`trial_status`]) before [`Recorder::record`]. Finished trials are skipped on
//! `--resume`; a trial that fails is recorded with its reason and the plan goes on; Ctrl-C
//! saves the trial in flight as interrupted.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use dbrig_core::results::{ConnectionFacts, HookOutput, ServerLife, TrialEnvironment};
use dbrig_driver::{ConnectOptions, Connection, Target};
use dbrig_store::{CellId, RunId, RunStatus, Store, TrialStatus};
use dbrig_workload::progress::{Progress, ProgressEvent};
use dbrig_workload::runner::{RunSpec, Stopper};
use dbrig_workload::tpch;

use crate::environment::{self, HookPoint, Lifecycle, Sampling};
use crate::error::{ExecError, Result};
use crate::evidence;
use crate::observer::{Observer, TrialRef, Untried, note};
use crate::plan::{Cell, Plan};
use crate::probes;
use crate::recorder::{Attempt, Recorder, ServerAfter, Tally, TrialRecord, trial_status};
use crate::secrets::Secrets;
use crate::servers::{Servers, merged};

/// How long the questions after a trial stopped by Ctrl-C may take (evidence's last answers,
/// the life probe): the user is waiting for the report.
const AFTER_CTRL_C: std::time::Duration = std::time::Duration::from_millis(500);

/// How to execute a plan, besides the plan itself.
pub struct ExecOptions<'a> {
    /// Where managed servers keep their state (`OUT/servers/NAME`).
    pub state_dir: PathBuf,
    /// argv as stored (already redacted: see [`crate::target::redacted_command_line`]).
    pub command_line: Vec<String>,
    /// Continue the last run of this plan, skipping its finished trials.
    pub resume: bool,
    /// Raised by Ctrl-C / SIGTERM.
    pub interrupt: Arc<Stopper>,
    pub observer: &'a dyn Observer,
    /// `--tag` and `--commit`: stored with a new run.
    pub provenance: dbrig_store::Provenance,
}

/// What an execution came to.
pub struct Outcome {
    pub run: RunId,
    pub status: RunStatus,
    /// Why the run failed or was interrupted.
    pub error: Option<String>,
    pub tally: Tally,
    pub resumed: bool,
    /// The results database, for the reports the caller prints.
    pub store: Store,
    /// The results database was removed or replaced during the run: where its results went
    /// (the store above is that file), or that they could not be saved. A failure to report.
    pub results_moved: Option<String>,
}

/// Execute `plan`, recording into `store`. An `Err` means nothing could run (the plan is
/// refused before anything is recorded, or the results database failed); failed trials are
/// not errors.
pub async fn execute(plan: Plan, store: Store, opts: ExecOptions<'_>) -> Result<Outcome> {
    let mut exec = Executor::new(plan, Recorder::new(store), opts);
    exec.make_room_for_files()?;
    exec.create_sqlite_folders()?;
    if exec.plan.single {
        exec.preflight().await?;
    }
    // An unusable placement is an error before anything runs: trials measured unpinned
    // would be recorded as if they ran where the plan said.
    if let Some(cpus) = &exec.plan.environment.client_cpus
        && let Err(e) = environment::pin(std::process::id(), cpus)
    {
        return Err(crate::error::plan(format!(
            "client-cpus = \"{cpus}\" cannot be used on this host ({e}); CPUs allowed: {}",
            dbrig_server::host::cpus_allowed(std::process::id()).unwrap_or_else(|| "?".into())
        )));
    }
    // Busy processes are watched over the first trial, not in a wait of their own before it
    // (0.2 s of every single command): the run's host facts get them once it is over.
    exec.busy_sample = Some(dbrig_server::host::BusySample::start());
    // Whether perf counts cycles here (a `perf stat` run, ~0.1 s) is asked beside the
    // preparations; the first trial's evidence waits for the answer only if it is not in yet.
    if exec.plan.environment.evidence_on() {
        std::thread::spawn(evidence::hardware_counters_note);
    }
    let host = serde_json::to_value(dbrig_server::host::facts(None)).unwrap_or_default();
    // A single command warned when it read its URL; a plan's URLs (a file, `--define`,
    // `--set`) are said here, once per configuration.
    if !exec.plan.single {
        for c in &exec.plan.configurations {
            if c.target.as_ref().is_some_and(Target::has_url_password) {
                note(
                    exec.opts.observer,
                    &format!(
                        "warning: configuration '{}': the password in its target URL is visible in process listings and shell history (it is masked in everything stored); prefer password-env or password-file",
                        c.name
                    ),
                );
            }
        }
    }
    // A password given any way (a `--define` feeding a URL, `--set`, a URL) is masked in
    // every stored form of the command line and plan text.
    let command_line = exec.secrets.scrub_all(&exec.opts.command_line);
    exec.secrets.scrub_plan(&mut exec.plan);
    let plan_text = exec
        .plan
        .text
        .as_deref()
        .map(|t| exec.secrets.scrub(&redact_plan_text(t)));
    let (run, cells, resumed) = exec.recorder.begin(
        &exec.plan,
        &command_line,
        &host,
        plan_text.as_deref(),
        exec.opts.resume,
        &exec.opts.provenance,
    )?;
    if resumed {
        // The run's host facts are those of its first session.
        exec.busy_sample = None;
    }
    if exec.opts.resume && !resumed {
        note(
            exec.opts.observer,
            &format!(
                "--resume: no earlier run of plan '{}' in {}: starting a new run",
                exec.plan.name,
                exec.recorder.store().path().display()
            ),
        );
    }
    exec.opts
        .observer
        .run_started(run, resumed, exec.recorder.store());
    for i in 0..exec.plan.schedule.len() {
        if exec.opts.interrupt.is_stopped() {
            break;
        }
        exec.trial(run, &cells, i).await?;
        exec.record_busy_processes(run, &host)?;
    }
    exec.record_busy_processes(run, &host)?;
    exec.opts.observer.schedule_done();
    // A second Ctrl-C leaves at once: no more hooks.
    if !exec.opts.interrupt.is_stopped_now() {
        exec.after_unended_configurations().await;
    }
    for line in exec.servers.stop_started() {
        note(exec.opts.observer, &format!("warning: {line}"));
    }
    let stopped = exec.opts.interrupt.is_stopped();
    let (status, mut error) = exec.tally.run_status(stopped, exec.plan.schedule.len());
    if stopped && exec.plan.single {
        error = Some(crate::recorder::INTERRUPTED.to_owned());
    }
    exec.recorder.finish(run, status, error.as_deref())?;
    let (store, results_moved) = keep_results(exec.recorder.into_store(), run)?;
    Ok(Outcome {
        run,
        status,
        error,
        tally: exec.tally,
        resumed,
        store,
        results_moved,
    })
}

/// The results of a run whose results database was removed or replaced while it ran (written
/// on into the file dbrig had open, which nothing else reaches): saved as a new file — at the
/// path again when nothing is there, else beside it — and the store reopened there. Returns
/// the store and, when this happened, the line that says where the results went (or that they
/// could not be saved).
fn keep_results(store: Store, run: RunId) -> Result<(Store, Option<String>)> {
    let Err(moved) = store.check_in_place() else {
        return Ok((store, None));
    };
    let path = store.path().to_owned();
    let to = match &moved {
        dbrig_store::StoreError::FileRemoved { .. } => path.clone(),
        _ => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "results".into());
            path.with_file_name(format!("{stem}-run-{}.db", run.0))
        }
    };
    if to != path && to.exists() {
        return Ok((
            store,
            Some(format!(
                "{moved}; run {}'s results were not saved: {} is in the way",
                run.0,
                to.display()
            )),
        ));
    }
    if let Err(e) = store.save_copy(&to) {
        return Ok((
            store,
            Some(format!(
                "{moved}; saving run {}'s results to {} failed ({e}): they are lost",
                run.0,
                to.display()
            )),
        ));
    }
    let line = format!(
        "{moved}; run {}'s results (and the file's earlier runs) were saved to {}",
        run.0,
        to.display()
    );
    // The old file's connection closes first: it removes its write-ahead log by name, which
    // the saved file must not find beside it.
    drop(store);
    Ok((Store::open(&to)?, Some(line)))
}

/// The state of one execution.
struct Executor<'a> {
    plan: Plan,
    recorder: Recorder,
    servers: Servers,
    opts: ExecOptions<'a>,
    /// Configuration × workload pairs whose data is prepared.
    prepared: HashSet<(usize, usize)>,
    /// bulk_insert prepares a table per client: prepare for the largest client count.
    max_clients: HashMap<(usize, usize), u32>,
    configurations_begun: HashSet<usize>,
    configurations_ended: HashSet<usize>,
    /// Configuration × workload pairs whose prepare failed for a cause that lasts: the cause.
    /// Their other trials are recorded failed without trying again.
    prepare_failed: HashMap<(usize, usize), String>,
    /// The results database was found removed or replaced (said once).
    results_moved_said: bool,
    /// Each configuration's last trial in the schedule: its after-configuration hooks follow.
    last_of_configuration: HashMap<usize, usize>,
    /// Why the page cache cannot be dropped (said once).
    cache_drop_refused: Option<String>,
    /// Evidence notes already said (each is said once per run, and recorded on every trial).
    evidence_notes_said: HashSet<String>,
    /// Prepared data by where it lives (a managed server's database, or a target URL): the
    /// identity of what this plan prepared there first.
    held: HashMap<String, String>,
    /// Configuration × workload pairs whose data is not the one their target holds: the
    /// database (and SQLite file suffix) it was prepared in instead.
    data_database: HashMap<(usize, usize), (String, String)>,
    tally: Tally,
    /// The plan's passwords: kept out of hooks' environments and of everything stored.
    secrets: Secrets,
    /// The busy-process sample of the run's host facts, until the first trial has ended.
    busy_sample: Option<dbrig_server::host::BusySample>,
    /// The server processes the trials drove on this host (not neighbours in that sample).
    measured_servers: HashSet<u32>,
}

impl<'a> Executor<'a> {
    /// Once the first trial is over (or the run ends without one): the run's host facts get
    /// the processes busy meanwhile, other than dbrig's own and the servers it measured.
    fn record_busy_processes(&mut self, run: RunId, host: &serde_json::Value) -> Result<()> {
        let Some(sample) = self.busy_sample.take() else {
            return Ok(());
        };
        let measured: Vec<u32> = self.measured_servers.iter().copied().collect();
        let mut host = host.clone();
        host["busy_processes"] = serde_json::to_value(sample.finish(&measured))
            .unwrap_or_else(|_| serde_json::Value::Array(Vec::new()));
        self.recorder.set_host(run, &host)
    }

    fn new(plan: Plan, recorder: Recorder, opts: ExecOptions<'a>) -> Self {
        let servers = Servers::new(&opts.state_dir, &plan.servers, &plan.environment);
        let secrets = Secrets::of_plan(&plan);
        let mut max_clients: HashMap<(usize, usize), u32> = HashMap::new();
        for c in &plan.cells {
            let e = max_clients
                .entry((c.configuration, c.workload_index))
                .or_default();
            *e = (*e).max(c.clients);
        }
        let last_of_configuration = plan
            .schedule
            .iter()
            .enumerate()
            .map(|(i, &(ci, _))| (plan.cells[ci].configuration, i))
            .collect();
        Executor {
            plan,
            recorder,
            servers,
            opts,
            prepared: HashSet::new(),
            max_clients,
            configurations_begun: HashSet::new(),
            configurations_ended: HashSet::new(),
            prepare_failed: HashMap::new(),
            results_moved_said: false,
            last_of_configuration,
            cache_drop_refused: None,
            evidence_notes_said: HashSet::new(),
            held: HashMap::new(),
            data_database: HashMap::new(),
            tally: Tally::default(),
            secrets,
            busy_sample: None,
            measured_servers: HashSet::new(),
        }
    }

    /// SQLite file targets may name a folder that does not exist yet (the output folder).
    fn create_sqlite_folders(&self) -> Result<()> {
        for c in &self.plan.configurations {
            if let Some(Target::Sqlite { path: Some(p) }) = &c.target
                && let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(parent).map_err(|source| {
                    ExecError::Io {
                        what: "cannot create",
                        path: parent.to_owned(),
                        source,
                    }
                    .context(format!("configuration '{}'", c.name))
                })?;
            }
        }
        Ok(())
    }

    fn make_room_for_files(&mut self) -> Result<()> {
        if let Some(line) = room_for_files(&self.plan)? {
            note(self.opts.observer, &line);
        }
        Ok(())
    }

    /// A single command's checks before anything is recorded: each cell's target is up and
    /// holds what the workload needs; what only the target knows is filled into the cell.
    async fn preflight(&mut self) -> Result<()> {
        for i in 0..self.plan.cells.len() {
            if !self.plan.cells[i].workload.has_preflight() {
                // A single command whose target refuses the login (or does not answer) has
                // nothing to measure: said before a run is stored, not stored as a failed
                // run. (A plan's other configurations may run, so a plan records such a
                // configuration's trials as failed instead.)
                let cell = &self.plan.cells[i];
                let conf = &self.plan.configurations[cell.configuration];
                if let Some(target) = conf.target.clone() {
                    let mut connect = cell.run.connect_options();
                    connect.protocol = cell.workload.default_protocol();
                    let name = conf.name.clone();
                    Connection::connect(&target, &connect)
                        .await
                        .map_err(|e| ExecError::from(e).context(format!("configuration {name}")))?
                        .close()
                        .await;
                }
                continue;
            }
            let (target, _) = self.bring_up(&self.plan.cells[i].clone(), false)?;
            self.flush_server_notes();
            let connect = self.plan.cells[i].run.connect_options();
            let threads = self.plan.cells[i].run.threads;
            let conf = self.plan.configurations[self.plan.cells[i].configuration]
                .name
                .clone();
            // A load large enough to fill a disk is refused before anything is recorded.
            let space = if self.plan.cells[i].workload.loads_large_data() {
                probes::free_space(&target, &connect).await
            } else {
                None
            };
            self.plan.cells[i]
                .workload
                .preflight(
                    &target,
                    &connect,
                    threads,
                    space.as_ref().map(|(dir, free)| (dir.as_path(), *free)),
                )
                .await
                .map_err(|e| ExecError::from(e).context(format!("configuration {conf}")))?;
        }
        self.plan.respec();
        Ok(())
    }

    fn flush_server_notes(&mut self) {
        for line in self.servers.take_notes() {
            note(self.opts.observer, &line);
        }
    }

    /// One trial of the schedule, from bringing its target up to recording it.
    async fn trial(&mut self, run: RunId, cells: &[CellId], i: usize) -> Result<()> {
        let (ci, trial) = self.plan.schedule[i];
        let cell = self.plan.cells[ci].clone();
        let conf_name = self.plan.configurations[cell.configuration].name.clone();
        let tref = TrialRef {
            index: i,
            total: self.plan.schedule.len(),
            configuration: &conf_name,
            workload: cell.workload_name(),
            clients: cell.clients,
            trial,
        };
        if self.recorder.is_finished(run, &cell.key, trial)? {
            self.tally.skipped += 1;
            self.opts.observer.trial_skipped(&tref);
            return Ok(());
        }
        let key = (cell.configuration, cell.workload_index);
        if let Some(cause) = self.prepare_failed.get(&key) {
            // Preparing again the same way would fail the same way (said once, when it did).
            let reason = format!("not run: {cause}");
            let now = SystemTime::now();
            self.tally.count(TrialStatus::Failed, Some(&reason));
            let record = TrialRecord {
                trial,
                status: TrialStatus::Failed,
                reason: Some(reason),
                started: now,
                finished: now,
                output: None,
                environment: TrialEnvironment::default(),
            };
            self.recorder.record(cells[ci], &record)?;
            self.opts
                .observer
                .trial_not_run(&tref, self.recorder.store(), run);
            return Ok(());
        }
        self.opts.observer.trial_started(&tref);
        let started = SystemTime::now();
        let mut run_options = cell.run.clone();
        run_options.rand_seed = cell.run.resolved_seed();
        let connect = run_options.connect_options();
        let mut env = TrialEnvironment {
            seed: run_options.rand_seed,
            client_cpus: self.plan.environment.client_cpus.clone(),
            server_cpus: self.plan.environment.server_cpus.clone(),
            ..TrialEnvironment::default()
        };

        let restart = cell.lifecycle == Lifecycle::Restart;
        let mut up = self.bring_up(&cell, restart);
        self.flush_server_notes();
        if let Ok((target, _)) = &up {
            env.connection = Some(ConnectionFacts {
                address_family: target.address_family(),
                protocol: run_options.protocol_or(cell.workload.default_protocol()),
                reconnect_every: run_options.reconnect,
                connect_rate: run_options.connect_rate,
                idle_clients: run_options.idle_clients,
                connect_latency: None,
            });
        }
        if let Ok((target, _)) = &up
            && self.configurations_begun.insert(cell.configuration)
        {
            env.hooks.extend(
                self.hooks(
                    HookPoint::BeforeConfiguration,
                    &cell,
                    Some((target, &connect)),
                )
                .await,
            );
        }
        if let Ok((target, pid)) = &up
            && cell.prepare
            && !self.prepared.contains(&key)
        {
            let (target, pid) = (target.clone(), *pid);
            up = self
                .prepare(
                    &cell,
                    (target, pid),
                    &connect,
                    run_options.rand_seed,
                    &mut env,
                )
                .await;
            self.flush_server_notes();
            if let Err(e) = &up
                && e.lasts()
                && !self.opts.interrupt.is_stopped()
            {
                self.stop_preparing(key, i, &conf_name, cell.workload_name(), e);
            }
        }
        env.page_cache = self.drop_caches();
        let mut server_after = ServerAfter::Same;
        let attempt = match up {
            Ok((target, pid)) => {
                let (attempt, after) = self
                    .measure(&tref, &cell, &target, pid, &run_options, &connect, &mut env)
                    .await;
                server_after = after;
                attempt
            }
            Err(e) => Attempt::Failed(e.one_line()),
        };
        let (status, reason) = trial_status(&attempt, server_after);
        // A failure reason may quote a server's log or a client's error: never a secret.
        let reason = reason.map(|r| self.secrets.scrub(&r));
        let summary = match (&attempt, &reason) {
            (Attempt::Measured(o), None) => cell.workload.summary(o),
            (_, Some(r)) => format!("{}: {r}", status.as_str()),
            (_, None) => status.as_str().to_owned(),
        };
        self.tally.count(status, reason.as_deref());
        let record = TrialRecord {
            trial,
            status,
            reason,
            started,
            finished: SystemTime::now(),
            output: match attempt {
                Attempt::Measured(o) => Some(*o),
                _ => None,
            },
            environment: env,
        };
        self.recorder.record(cells[ci], &record)?;
        self.warn_if_results_moved();
        self.opts
            .observer
            .trial_recorded(&tref, self.recorder.store(), run, &summary);
        Ok(())
    }

    /// Said once, as soon as a trial is recorded after it: the results database is no longer
    /// at its path. The run goes on into the file dbrig has open and saves it when it ends.
    fn warn_if_results_moved(&mut self) {
        if self.results_moved_said {
            return;
        }
        if let Err(e) = self.recorder.store().check_in_place() {
            self.results_moved_said = true;
            note(
                self.opts.observer,
                &format!(
                    "warning: {e}; the run goes on, and its results are saved to a file when it ends"
                ),
            );
        }
    }

    /// A prepare failed for a cause that lasts: the pair's other trials (after schedule
    /// position `at`) are recorded failed without trying again, said once.
    fn stop_preparing(
        &mut self,
        key: (usize, usize),
        at: usize,
        configuration: &str,
        workload: &str,
        e: &ExecError,
    ) {
        let cause = format!("preparing {workload} failed: {}", e.one_line());
        let cause = self.secrets.scrub(&cause);
        let left = self.plan.schedule[at + 1..]
            .iter()
            .filter(|&&(ci, _)| {
                let c = &self.plan.cells[ci];
                (c.configuration, c.workload_index) == key
            })
            .count();
        if left > 0 {
            note(
                self.opts.observer,
                &format!(
                    "configuration {configuration}: {cause}; that will not change by itself, so its {left} other {workload} trial(s) are not run (recorded failed): fix it, then `--resume`"
                ),
            );
        }
        self.prepare_failed.insert(key, cause);
    }

    /// Step 1: the cell's target — external, or the managed server up with the
    /// configuration's settings (restarted when the lifecycle asks, restored to the prepared
    /// data before a write trial with fresh-data, read-only for a read-only workload once its
    /// tables exist).
    fn bring_up(&mut self, cell: &Cell, restart: bool) -> Result<(Target, Option<u32>)> {
        let key = (cell.configuration, cell.workload_index);
        let (target, pid) = self.server_up(cell, restart)?;
        // A managed server's password, known only once it is up: kept out of hooks and
        // stored text like every other.
        if let Some(p) = target.password() {
            self.secrets.add(p.expose());
        }
        match self.data_database.get(&key) {
            Some((name, suffix)) => Ok((target.with_database(name, suffix), pid)),
            None => Ok((target, pid)),
        }
    }

    /// The configuration's target or managed server, up as the cell's lifecycle asks.
    fn server_up(&mut self, cell: &Cell, restart: bool) -> Result<(Target, Option<u32>)> {
        let conf = &self.plan.configurations[cell.configuration];
        let key = (cell.configuration, cell.workload_index);
        match (&conf.target, &conf.server) {
            (Some(t), _) => Ok((t.clone(), None)),
            (None, Some(name)) => {
                let fresh = cell.lifecycle == Lifecycle::FreshData
                    && cell.writes
                    && self.prepared.contains(&key);
                // Read-only only once the tables exist: preparing needs a writable server.
                let read_only = self.plan.environment.start_read_only
                    && !cell.writes
                    && (!cell.prepare || self.prepared.contains(&key));
                if fresh {
                    self.servers.restore_prepared(name, &conf.params)?;
                }
                self.servers
                    .ensure(name, &conf.params, restart && !fresh, read_only)
            }
            (None, None) => Err(crate::error::plan(format!(
                "configuration '{}' has no target",
                conf.name
            ))),
        }
    }

    /// Step 3: the workload's data, once per configuration × workload (then a data snapshot
    /// for fresh-data, and the read-only server for a read-only workload). The load's figures
    /// go into `env`: the trial about to be measured on the data is the one that keeps them.
    async fn prepare(
        &mut self,
        cell: &Cell,
        up: (Target, Option<u32>),
        connect: &ConnectOptions,
        seed: u64,
        env: &mut TrialEnvironment,
    ) -> Result<(Target, Option<u32>)> {
        let key = (cell.configuration, cell.workload_index);
        let target = self.data_home(cell, &up.0, connect).await?;
        let up = (target.clone(), up.1);
        let target = &target;
        let observer = self.opts.observer;
        // A load large enough to fill a disk is checked against the free space first.
        let space = if cell.workload.loads_large_data() {
            probes::free_space(target, connect).await
        } else {
            None
        };
        let progress = Untried(observer);
        let preparing = cell.workload.prepare_if_missing(
            target,
            connect,
            self.max_clients[&key],
            seed,
            space.as_ref().map(|(dir, free)| (dir.as_path(), *free)),
            &progress,
        );
        // Ctrl-C stops a prepare at once: what it made is registered as unfinished, never
        // measured, and made again by the next prepare (`--resume`, `run --prepare`).
        let done = tokio::select! {
            r = preparing => r?,
            () = self.opts.interrupt.stopped() => {
                return Err(crate::error::plan(format!(
                    "interrupted while preparing {} on {target}: its tables are left half-prepared (never measured); `--resume` or `run --prepare` makes them again, `{}` drops them",
                    cell.workload.name(),
                    cell.workload.cleanup_command()
                )));
            }
        };
        if let Some(done) = done {
            note(observer, &done.line);
            env.load = done.figures;
        }
        self.prepared.insert(key);
        let conf = &self.plan.configurations[cell.configuration];
        let mut up = up;
        if let Some(name) = &conf.server {
            if cell.lifecycle == Lifecycle::FreshData && cell.writes {
                self.servers.snapshot_prepared(name, &conf.params)?;
                up = self.servers.ensure(name, &conf.params, false, false)?;
            }
            if self.plan.environment.start_read_only && !cell.writes {
                // Prepared on a writable server: now the read-only one.
                up = self.servers.ensure(name, &conf.params, false, true)?;
            }
            if let Some((db, suffix)) = self.data_database.get(&key) {
                up.0 = up.0.with_database(db, suffix);
            }
        }
        Ok(up)
    }

    /// Where a cell's prepared data lives. Prepared data belongs to what it was prepared for:
    /// the workload's data options and the server settings tables are created with (storage
    /// engine, table access method). The first identity prepared on a server's database
    /// takes it; a cell whose identity differs (a configuration that changes the default
    /// storage engine, a workload with another table size) gets a database of its own on the
    /// same server (`DB_dHASH`; an SQLite file beside the original), never the other's
    /// tables.
    async fn data_home(
        &mut self,
        cell: &Cell,
        target: &Target,
        connect: &ConnectOptions,
    ) -> Result<Target> {
        let Some(identity) = cell.workload.data_identity() else {
            return Ok(target.clone());
        };
        let settings = probes::data_settings(target, connect).await?;
        let id =
            crate::plan::spec_key(&serde_json::json!({ "data": identity, "server": settings }));
        let conf = &self.plan.configurations[cell.configuration];
        let location = match &conf.server {
            Some(name) => format!("server:{name}/{}", target.database().unwrap_or_default()),
            None => target.to_string(),
        };
        match self.held.get(&location) {
            None => {
                self.held.insert(location, id);
                return Ok(target.clone());
            }
            Some(held) if *held == id => return Ok(target.clone()),
            Some(_) => {}
        }
        let base = target.database().unwrap_or_default();
        let base: String = std::path::Path::new(&base)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or(base)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let suffix = format!("d{}", &id[..8]);
        let name = format!("{base}_{suffix}");
        probes::ensure_database(target, &name, connect).await?;
        note(
            self.opts.observer,
            &format!(
                "configuration {}: {}'s data ({}) differs from what {location} holds for an earlier cell: prepared in database {name} instead",
                conf.name,
                cell.workload_name(),
                settings.as_deref().unwrap_or("its options")
            ),
        );
        let home = target.with_database(&name, &suffix);
        self.held.insert(home.to_string(), id);
        self.data_database
            .insert((cell.configuration, cell.workload_index), (name, suffix));
        Ok(home)
    }

    /// Step 4: the page cache, when the environment asks (said once when not permitted).
    fn drop_caches(&mut self) -> Option<String> {
        if !self.plan.environment.drop_caches {
            return None;
        }
        match (&self.cache_drop_refused, environment::drop_caches()) {
            (_, Ok(())) => Some("dropped".to_owned()),
            (None, Err(e)) => {
                note(
                    self.opts.observer,
                    &format!(
                        "warning: {e}; trials run with a warm page cache (recorded on each trial)"
                    ),
                );
                self.cache_drop_refused = Some(e.to_string());
                Some(format!("not dropped: {e}"))
            }
            (Some(e), Err(_)) => Some(format!("not dropped: {e}")),
        }
    }

    /// The plan's and the configuration's hooks at `point`.
    async fn hooks(
        &self,
        point: HookPoint,
        cell: &Cell,
        target: Option<(&Target, &ConnectOptions)>,
    ) -> Vec<HookOutput> {
        let conf = &self.plan.configurations[cell.configuration];
        environment::run_hooks(
            point,
            &self.plan.environment.hooks,
            conf.hooks.as_ref(),
            target,
            &self.secrets,
        )
        .await
    }

    /// Step 5: the trial itself with everything recorded around it. Returns the attempt and
    /// what the server's life says: restarted or died during it (not by the power test's own
    /// restarts), or not answering after it.
    #[allow(clippy::too_many_arguments)]
    async fn measure(
        &mut self,
        tref: &TrialRef<'_>,
        cell: &Cell,
        target: &Target,
        server_pid: Option<u32>,
        run_options: &dbrig_workload::RunOptions,
        connect: &ConnectOptions,
        env: &mut TrialEnvironment,
    ) -> (Attempt, ServerAfter) {
        let conf = self.plan.configurations[cell.configuration].clone();
        let with_target = Some((target, connect));
        env.hooks
            .extend(self.hooks(HookPoint::BeforeTrial, cell, with_target).await);
        // A failed before-* hook (this trial's, or its configuration's first) is said, and
        // unless the plan says `on-failure = "warn"` the trial does not run on a setup that
        // did not happen.
        let on_failure = conf
            .hooks
            .as_ref()
            .and_then(|h| h.on_failure)
            .or(self.plan.environment.hooks.on_failure)
            .unwrap_or_default();
        let mut hook_failed = None;
        for h in env.hooks.iter().filter(|h| h.failed()) {
            let why = environment::hook_failure(h);
            note(self.opts.observer, &format!("warning: {why}"));
            if hook_failed.is_none() && on_failure == environment::OnHookFailure::FailTrial {
                hook_failed = Some(why);
            }
        }
        // After the hooks (they may SET GLOBAL): what this trial ran with.
        // A server that does not answer within the connect timeout fails the trial here:
        // every further connection would wait as long again.
        let mut unreachable = None;
        // The server process behind the target on this host, looked up once: its binary is a
        // setting, its CPU evidence (a managed server's pid first), and it is no neighbour in
        // the run's busy-process sample.
        let local = probes::local_process(target);
        let binary = local.as_ref().map(|(_, exe)| exe.as_path());
        match probes::server_settings_of(target, connect, binary).await {
            Ok(s) => env.server_settings = s,
            Err(e) => {
                if matches!(
                    e.kind,
                    dbrig_driver::ErrorKind::Unreachable | dbrig_driver::ErrorKind::NoReply
                ) {
                    unreachable = Some(e.to_string());
                }
                env.server_settings_error = Some(e.to_string());
            }
        }
        if unreachable.is_none() {
            // What the clients will negotiate (TLS version and cipher, authentication); a
            // failure here is the clients' too, and the trial says so when they connect.
            if let Ok(Some(security)) = probes::connection_security(target, connect).await {
                env.security = Some(security);
            }
        }
        let numa = conf.server.as_deref().and_then(|n| self.servers.numa(n));
        env.placement = Some(environment::placement(
            &self.plan.environment,
            server_pid,
            numa.as_deref(),
        ));
        let process_life =
            |servers: &mut Servers| conf.server.as_deref().map(|n| servers.life_mark(n));
        let observe = async |unreachable: bool| match unreachable {
            true => dbrig_core::results::LifeMark {
                died: true,
                ..Default::default()
            },
            false => probes::observe_life(target, connect).await,
        };
        let before = merged(
            observe(unreachable.is_some()).await,
            process_life(&mut self.servers),
        );
        let sampling = Sampling::start(self.plan.environment.os_stats_interval, server_pid);
        let serving = server_pid.or(local.map(|(pid, _)| pid));
        self.measured_servers.extend(serving);
        let collector = evidence::Collector::start(
            target,
            connect,
            serving,
            evidence::EvidenceOptions {
                off: !self.plan.environment.evidence_on(),
                wait_sample_ms: self.plan.environment.wait_sample_ms,
                reachable: unreachable.is_none(),
                profile: self.plan.environment.profile,
            },
        )
        .await;
        // Kinds without a warm-up measure from here; an OLTP run says again when its
        // warm-up is over.
        collector.measuring();
        // Kinds that time no connections of their own (all but OLTP) get theirs timed here.
        let connect_times = Arc::new(dbrig_driver::ConnectTimes::default());
        let spec = RunSpec {
            target: target.clone(),
            connect: dbrig_driver::ConnectOptions {
                connect_times: Some(Arc::clone(&connect_times)),
                ..connect.clone()
            },
            options: run_options.clone(),
            seed: run_options.rand_seed,
            os_meter: environment::os_meter(sampling.clock()),
        };
        let host_mhz = dbrig_server::host::cpu_mhz();
        let workload = cell.workload.clone().with_host(host_mhz);
        let mut power_env = PlanPowerEnv {
            servers: &mut self.servers,
            server: conf.server.clone(),
            data_database: self
                .data_database
                .get(&(cell.configuration, cell.workload_index))
                .cloned(),
            current: None,
            params: conf.params.clone(),
            read_only: self.plan.environment.start_read_only && !cell.writes,
            hook_timeout: self.plan.environment.hooks.timeout.unwrap_or(60.0),
            secrets: &self.secrets,
            strict: self.plan.single,
            restarts: 0,
            os_clock: sampling.clock(),
        };
        let progress = TrialProgress {
            observer: self.opts.observer,
            trial: tref,
            prefix: !self.plan.single,
            evidence: &collector,
        };
        // Ctrl-C during the before-trial hooks: the trial does not start (a quick trial could
        // otherwise finish before it noticed, and be stored as done).
        let attempt = if self.opts.interrupt.is_stopped() {
            Attempt::Interrupted
        } else if let Some(why) = hook_failed {
            Attempt::Failed(why)
        } else if let Some(why) = unreachable.clone() {
            Attempt::Failed(why)
        } else {
            match workload
                .trial(
                    &spec,
                    Arc::clone(&self.opts.interrupt),
                    &progress,
                    Some(&mut power_env),
                )
                .await
            {
                Ok(Some(o)) => Attempt::Measured(Box::new(o)),
                Ok(None) => Attempt::Interrupted,
                Err(e) => Attempt::Failed(ExecError::from(e).one_line()),
            }
        };
        let controls_restarted = power_env.restarts > 0;
        if let (Attempt::Measured(o), Some(facts)) = (&attempt, env.connection.as_mut())
            && !matches!(o.result, dbrig_core::results::TrialResult::Oltp(_))
        {
            facts.connect_latency = connect_times.latency();
        }
        // A restart without a fixed port moves the server: everything after the trial (life
        // probe, hooks, after-configuration SQL) connects to where it is now.
        let target = &power_env.current.take().unwrap_or_else(|| target.clone());
        let with_target = Some((target, connect));
        env.os_samples = sampling.stop();
        let units = match &attempt {
            Attempt::Measured(o) => Some(workload.work_units(o)),
            _ => None,
        };
        // Ctrl-C: the last questions get a moment (the report is due within 2 s); a second
        // one: what was measured is saved, nothing more is asked.
        let hurry = self.opts.interrupt.is_stopped_now();
        let patience = match (self.opts.interrupt.is_stopped(), hurry) {
            (_, true) => Some(std::time::Duration::ZERO),
            (true, false) => Some(AFTER_CTRL_C),
            (false, false) => None,
        };
        // The evidence's last questions and the life probe go together: on a server that
        // stopped answering each waits its own bound, not one after the other.
        let (evidence, after_sql) = tokio::join!(collector.finish(units, patience), async {
            let observed = observe(unreachable.is_some());
            match patience {
                None => observed.await,
                // Not observed in time: nothing known, no restart claimed.
                Some(limit) => tokio::time::timeout(limit, observed)
                    .await
                    .unwrap_or_default(),
            }
        });
        for line in &evidence.notes {
            if self.evidence_notes_said.insert(line.clone()) {
                note(self.opts.observer, &format!("note: {line}"));
            }
        }
        env.evidence = Some(evidence);
        let after = merged(after_sql, process_life(&mut self.servers));
        self.flush_server_notes();
        let before_after = env.hooks.len();
        if !hurry {
            env.hooks
                .extend(self.hooks(HookPoint::AfterTrial, cell, with_target).await);
        }
        if !hurry
            && self.last_of_configuration.get(&cell.configuration) == Some(&tref.index)
            && self.configurations_ended.insert(cell.configuration)
        {
            env.hooks.extend(
                self.hooks(HookPoint::AfterConfiguration, cell, with_target)
                    .await,
            );
        }
        for h in env.hooks[before_after..].iter().filter(|h| h.failed()) {
            note(
                self.opts.observer,
                &format!("warning: {}", environment::hook_failure(h)),
            );
        }
        env.server = conf.server.as_deref().and_then(|n| self.servers.facts(n));
        let life = ServerLife {
            before: Some(before),
            after: Some(after),
        };
        env.server_life = Some(life);
        // A power test's controls restarted the server on purpose: not a crash.
        let server_after = if !controls_restarted && life.restarted() {
            ServerAfter::Restarted
        } else if after.silent {
            ServerAfter::Silent
        } else {
            ServerAfter::Same
        };
        (attempt, server_after)
    }

    /// Configurations whose last trial did not run (interrupted, or it failed before its
    /// target was up): their after-configuration shell hooks still run; nothing to store with.
    async fn after_unended_configurations(&mut self) {
        let unended: Vec<usize> = self
            .configurations_begun
            .difference(&self.configurations_ended)
            .copied()
            .collect();
        for ci in unended {
            let conf = &self.plan.configurations[ci];
            let outs = environment::run_hooks(
                HookPoint::AfterConfiguration,
                &self.plan.environment.hooks,
                conf.hooks.as_ref(),
                None,
                &self.secrets,
            )
            .await;
            for out in outs.iter().filter(|o| o.failed()) {
                note(
                    self.opts.observer,
                    &format!(
                        "warning: {} hook of configuration {}: {}",
                        out.hook,
                        conf.name,
                        out.output.trim()
                    ),
                );
            }
        }
    }
}

/// A trial's progress, passed on to the observer with the trial it belongs to.
struct TrialProgress<'a, 'b> {
    observer: &'a dyn Observer,
    trial: &'a TrialRef<'b>,
    /// Say which trial a line is from (a plan has many; a single command one).
    prefix: bool,
    /// Hears when the measured interval begins and each latency interval ends.
    evidence: &'a evidence::Collector,
}

impl Progress for TrialProgress<'_, '_> {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Note(line) if self.prefix => self.observer.progress(
                Some(self.trial),
                ProgressEvent::Note(&format!("{}: {line}", self.trial.describe())),
            ),
            ProgressEvent::Measuring => self.evidence.measuring(),
            ProgressEvent::Connected => self.evidence.connected(),
            ProgressEvent::Interval(sample) => {
                self.evidence.interval(sample.t_s);
                self.observer.progress(Some(self.trial), event);
            }
            _ => self.observer.progress(Some(self.trial), event),
        }
    }
}

/// The plan text as stored: target URLs redacted.
fn redact_plan_text(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once("target") {
            Some((_, rest)) if rest.trim_start().starts_with('=') && l.contains("://") => {
                let url = rest
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                match Target::parse(url) {
                    Ok(t) => format!("target = \"{t}\""),
                    Err(_) => "target = \"***\"".to_owned(),
                }
            }
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The startup parameters of a power test's restart for a query with `query` parameters: the
/// DBT-3 launcher's per-query STARTUP_PARAMS replaced the configuration's (`replace`); merged,
/// they go over them. A query without any gets the configuration's back.
fn restart_params(
    configuration: &dbrig_server::Params,
    query: &[String],
    replace: bool,
) -> std::result::Result<dbrig_server::Params, dbrig_server::ManagedError> {
    let extra = dbrig_server::Params::parse(query)?;
    Ok(if replace && !query.is_empty() {
        extra
    } else {
        configuration.merged(&extra)
    })
}

/// Why a power test's restart did not happen, as the power test tells it.
#[derive(Debug, thiserror::Error)]
enum RestartError {
    #[error("the configuration's target is external: dbrig cannot restart it")]
    External,
    /// The server did not come back: the error with its causes, on one line.
    #[error("{}", .0.one_line())]
    Server(ExecError),
}

/// What a TPC-H power test's launcher controls ask of a trial: restarts of the
/// configuration's managed server (a query's own startup parameters over the
/// configuration's), page-cache drops and shell hooks, through the plan's own machinery.
struct PlanPowerEnv<'a> {
    servers: &'a mut Servers,
    server: Option<String>,
    /// The cell's own database on that server (name, SQLite suffix), kept across restarts.
    data_database: Option<(String, String)>,
    /// Where the server is after the last restart (its port may have changed).
    current: Option<Target>,
    params: dbrig_server::Params,
    read_only: bool,
    hook_timeout: f64,
    secrets: &'a Secrets,
    /// A single command: restart controls on a server dbrig cannot restart are an error.
    strict: bool,
    restarts: u32,
    /// The trial's OS sampling, which follows the server to its new process on a restart.
    os_clock: Option<dbrig_server::OsClock>,
}

impl tpch::PowerEnv for PlanPowerEnv<'_> {
    fn can_restart(&self) -> bool {
        self.server.is_some()
    }

    fn restart(
        &mut self,
        params: &[String],
        replace: bool,
    ) -> std::result::Result<Target, tpch::EnvError> {
        let name = self.server.as_deref().ok_or(RestartError::External)?;
        let params = restart_params(&self.params, params, replace)?;
        let (target, pid) = self
            .servers
            .ensure(name, &params, true, self.read_only)
            .map_err(RestartError::Server)?;
        if let Some(c) = &self.os_clock {
            c.follow(pid);
        }
        let target = match &self.data_database {
            Some((db, suffix)) => target.with_database(db, suffix),
            None => target,
        };
        self.restarts += 1;
        self.current = Some(target.clone());
        Ok(target)
    }

    fn drop_caches(&mut self) -> std::result::Result<(), tpch::EnvError> {
        Ok(environment::drop_caches()?)
    }

    fn shell_hook(&mut self, name: &str, command: &str) -> HookOutput {
        let mut h = environment::run_shell_hook(name, command, self.hook_timeout, self.secrets);
        h.scope = "query".to_owned();
        h
    }

    fn strict(&self) -> bool {
        self.strict
    }
}

/// Room for the open files the plan's largest cell needs, made before anything runs: the soft
/// `RLIMIT_NOFILE` raised up to the hard one when it is lower (the note to say, once), a
/// refusal naming both limits when even the hard one is (the clients would fail one by one
/// with "unable to open database file" or "Too many open files"). The executor makes it; a
/// command that prints before executing may make it first (a second call finds the room).
pub fn room_for_files(plan: &Plan) -> Result<Option<String>> {
    let Some((needed, clients)) = plan
        .cells
        .iter()
        .map(|c| {
            (
                files_needed(&plan.configurations[c.configuration], &c.run),
                c.run.threads,
            )
        })
        .max()
    else {
        return Ok(None);
    };
    match dbrig_server::host::ensure_open_files(needed) {
        Ok(None) => Ok(None),
        Ok(Some(was)) => Ok(Some(format!(
            "raised this process's open-files limit from {was} to {needed} for {clients} clients (RLIMIT_NOFILE)"
        ))),
        Err(short) => Err(ExecError::OpenFiles {
            clients,
            needed: short.needed,
            soft: short.soft,
            hard: short.hard,
        }),
    }
}

/// Open files a cell needs at most: each client's and idle connection's (an SQLite one three:
/// the database, its WAL and its shared memory), two per worker thread's runtime, and dbrig's
/// own ([`dbrig_server::host::NOFILE_MARGIN`]: the store, logs, a server's pipes).
fn files_needed(conf: &crate::plan::Configuration, run: &dbrig_workload::RunOptions) -> u64 {
    let per_connection = match &conf.target {
        Some(Target::Sqlite { .. }) => 3,
        _ => 1,
    };
    let connections = u64::from(run.threads) + u64::from(run.idle_clients);
    let workers = u64::from(run.threads.min(run.workers.max(64)));
    connections * per_connection + workers * 2 + dbrig_server::host::NOFILE_MARGIN
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A restart the power test asks for and cannot have: the reason is typed (an external
    /// target, or the server's error with its causes) and told on one line.
    #[test]
    fn a_restart_that_cannot_happen_says_why() {
        use tpch::PowerEnv;
        let dir = tempfile::tempdir().unwrap();
        let mut servers = Servers::new(dir.path(), &[], &Default::default());
        let secrets = Secrets::default();
        let mut env = PlanPowerEnv {
            servers: &mut servers,
            server: None,
            data_database: None,
            current: None,
            params: dbrig_server::Params::default(),
            read_only: false,
            hook_timeout: 1.0,
            secrets: &secrets,
            strict: true,
            restarts: 0,
            os_clock: None,
        };
        let e = env.restart(&[], false).unwrap_err();
        assert!(
            matches!(e.downcast_ref(), Some(RestartError::External)),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "the configuration's target is external: dbrig cannot restart it"
        );
        env.server = Some("nosuch".to_owned());
        let e = env.restart(&[], false).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref(),
                Some(RestartError::Server(ExecError::Plan(_)))
            ),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "no [[server]] named 'nosuch'");
        assert_eq!(env.restarts, 0);
        // The causes stay in the line (a context alone would hide them).
        let e = RestartError::Server(crate::error::plan("port taken").context("starting server A"));
        assert_eq!(e.to_string(), "starting server A: port taken");
    }

    #[test]
    fn query_params_replace_the_configurations_unless_merged() {
        let conf =
            dbrig_server::Params::parse(&["join_cache_level=2", "tmp_table_size=1M"]).unwrap();
        let q = ["join_cache_level=6".to_owned()];
        let pairs = |p: dbrig_server::Params| p.0;
        assert_eq!(
            pairs(restart_params(&conf, &q, true).unwrap()),
            [("join_cache_level".to_owned(), "6".to_owned())]
        );
        let merged = pairs(restart_params(&conf, &q, false).unwrap());
        assert!(
            merged.contains(&("join_cache_level".to_owned(), "6".to_owned())),
            "{merged:?}"
        );
        assert!(
            merged.contains(&("tmp_table_size".to_owned(), "1M".to_owned())),
            "{merged:?}"
        );
        assert_eq!(merged.len(), 2);
        // No query parameters: the configuration's own, either way.
        assert_eq!(restart_params(&conf, &[], true).unwrap(), conf);
    }
}
