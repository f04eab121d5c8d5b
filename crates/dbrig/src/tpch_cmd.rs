//! `dbrig tpch gen|load|power|check|cleanup`: DBT-3 / TPC-H.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand};
use dbrig_driver::Target;
use dbrig_driver::{ConnectOptions, Connection};
use dbrig_server::HostFacts;
use dbrig_server::managed::{ManagedServer, Params};
use dbrig_store::{CellId, NewTrial, RunId, RunKind, RunStatus, Store, TrialStatus};
use dbrig_workload::tpch::{
    self, KeysWhen, LoadOptions, ParamMode, PowerControls, PowerOptions, QuerySet, QueryStatus,
    Reduction, ScaleFactor, Table,
};

use crate::cli::{ConnectionArgs, Format, StoreArgs};
use crate::commands::{OneCellRun, begin_one_cell_run, open_store, spec_key};
use crate::connection::resolve_target;

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
    Power(Box<PowerArgs>),
    /// The throughput test: S query streams in their spec permutations plus the refresh
    /// stream; Throughput@Size (and QphH@Size with --power-run); stored as a run.
    Throughput(ThroughputArgs),
    /// Differential answer check of the queries across engines (or against the SF1 answers).
    Check(CheckArgs),
    /// Drop the TPC-H tables dbrig created.
    Cleanup(CleanupArgs),
    /// The power test report of stored runs: mean / min / max seconds per configuration ×
    /// query with the ratio to the baseline beside every value, timeouts as >T, server
    /// versions; the bar chart with --chart. (`dbrig report RUN` includes it in the HTML.)
    Report(TpchReportArgs),
    /// Read the old DBT-3 launcher's ini files (top-level, test, DBMS, queries, results DB)
    /// and write the equivalent dbrig plan; settings without an equivalent become comments.
    ImportLauncher(ImportLauncherArgs),
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
    /// Seconds a query may run before it is cancelled on the server and recorded as a
    /// timeout (shown as `>T`).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub launcher: LauncherArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The DBT-3 launcher's per-query controls of the power test.
#[derive(Debug, Clone, Args)]
pub struct LauncherArgs {
    /// How the measured runs of a query become one number: simple-average (the mean; a
    /// timeout makes a timeout), min-max (fastest and slowest; the fastest counts),
    /// analyze-explain (runs grouped by plan fingerprint; the fastest plan's mean).
    #[arg(long, value_enum)]
    pub reduction: Option<Reduction>,
    /// Measured runs per query (default 1; with analyze-explain the most runs, 0 = until
    /// the fastest plan has --cluster-size runs).
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// Unmeasured warm-up runs before each query's measured runs.
    #[arg(long, value_name = "N")]
    pub warmups: Option<u32>,
    /// Capture the plan (EXPLAIN) of every measured run and store it with its fingerprint
    /// (always on with analyze-explain).
    #[arg(long)]
    pub explain: bool,
    /// analyze-explain: runs the fastest plan needs (default 3).
    #[arg(long, value_name = "N")]
    pub cluster_size: Option<u32>,
    /// analyze-explain: restarts that skip a slower plan before the best so far is taken
    /// (default 5).
    #[arg(long, value_name = "N")]
    pub max_skipped: Option<u32>,
    /// analyze-explain: seconds spent on one query before the best cluster so far is taken.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub max_query_time: Option<f64>,
    /// Restart the managed server before every query (the launcher's QUERIES_AT_ONCE=0;
    /// needs --server).
    #[arg(long)]
    pub restart_between_queries: bool,
    /// Drop the OS page cache before every measured run (CLEAR_CACHES=1; needs --server and
    /// root).
    #[arg(long)]
    pub drop_caches: bool,
    /// SQL run on the test's session before each run (PRE_RUN_SQL), e.g. "flush status".
    #[arg(long, value_name = "SQL")]
    pub pre_sql: Option<String>,
    /// SQL run on the test's session after each run (POST_RUN_SQL), e.g. "show status".
    #[arg(long, value_name = "SQL")]
    pub post_sql: Option<String>,
    /// Shell command before each run (PRE_RUN_OS).
    #[arg(long, value_name = "COMMAND")]
    pub pre_shell: Option<String>,
    /// Shell command after each run (POST_RUN_OS).
    #[arg(long, value_name = "COMMAND")]
    pub post_shell: Option<String>,
    /// A TOML file of controls: top-level `reduction`, `restart-between-queries`,
    /// `drop-caches`; `[all]` and `[query."N"]` tables with runs, warmups, timeout, params
    /// (startup parameters KEY=VALUE for that query), pre-sql, post-sql, pre-shell,
    /// post-shell, explain, cluster-size, max-skipped, max-query-time. Options given on the
    /// command line override the file's.
    #[arg(long, value_name = "FILE.toml")]
    pub controls: Option<PathBuf>,
    /// Run on this managed server instead of --target: dbrig starts it if it is not running
    /// (and stops it at the end), restarts it as the controls ask. Defined by
    /// --server-plan's [[server]] tables, --engine, or `dbrig server start`'s saved
    /// definition in OUT/servers/NAME.
    #[arg(long, value_name = "NAME", conflicts_with = "target")]
    pub server: Option<String>,
    /// Plan file whose [[server]] table defines --server.
    #[arg(long, value_name = "PLAN.toml", requires = "server")]
    pub server_plan: Option<PathBuf>,
    /// Define --server ad hoc with this engine (mariadb, mysql, postgres).
    #[arg(long, requires = "server", conflicts_with = "server_plan")]
    pub engine: Option<String>,
    /// Redraw this SVG bar chart after every query (the launcher's live graphic).
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ThroughputArgs {
    /// Query streams (0: the spec's minimum for the scale factor: SF<=1 → 2, 10 → 3, 30 → 4,
    /// 100 → 5, 300 → 6, 1000 → 7, …).
    #[arg(long, default_value_t = 0)]
    pub streams: u32,
    /// Seed of the qgen parameters; every stream gets its own values from it.
    #[arg(long, default_value_t = 1, conflicts_with = "validation_params")]
    pub seed: u64,
    /// Give every stream qgen's validation parameters instead of seeded random ones.
    #[arg(long)]
    pub validation_params: bool,
    /// A folder of .sql files to run instead of the built-in queries (one query per file;
    /// `N…` files take query N's place in each stream's permutation).
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Skip the refresh stream (RF1/RF2 pairs).
    #[arg(long)]
    pub no_refresh: bool,
    /// Seconds a query may run before it is cancelled on the server and recorded as a
    /// timeout (shown as `>T`).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<f64>,
    /// A stored power test run (its id in the results database) on the same data: QphH@Size
    /// is computed from its Power@Size and this run's Throughput@Size.
    #[arg(long, value_name = "RUN")]
    pub power_run: Option<i64>,
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
pub struct TpchReportArgs {
    /// Run ids (plan runs or `dbrig tpch power` runs; several are shown side by side).
    /// Default: the latest run.
    #[arg(value_name = "RUN")]
    pub runs: Vec<i64>,
    /// The configuration the ratios are relative to (default: the plan's baseline, else the
    /// first configuration).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Markdown instead of aligned text.
    #[arg(long)]
    pub markdown: bool,
    /// Also write the bar chart (SVG) here.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ImportLauncherArgs {
    /// The launcher's top-level configuration (what `launcher.pl --test=` was given).
    #[arg(value_name = "TOP.conf")]
    pub top: PathBuf,
    /// Value of $PROJECT_HOME in the ini files (launcher.pl --project-home).
    #[arg(long, value_name = "DIR")]
    pub project_home: Option<String>,
    /// Value of $DATADIR_HOME (launcher.pl --datadir-home, or --datadir).
    #[arg(long, value_name = "DIR", alias = "datadir")]
    pub datadir_home: Option<String>,
    /// Value of $QUERIES_HOME (launcher.pl --queries-home).
    #[arg(long, value_name = "DIR")]
    pub queries_home: Option<String>,
    /// The scale factor: $SCALE_FACTOR and the data the plan loads (launcher.pl
    /// --scale-factor).
    #[arg(long, value_name = "SF")]
    pub scale_factor: Option<String>,
    /// One of the launcher's upper-case overrides as KEY=VALUE (launcher.pl `--TIMEOUT=600`
    /// is `--override TIMEOUT=600`); repeatable.
    #[arg(long = "override", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Write the plan here (checked to load as a plan first); default: standard output.
    #[arg(long, short = 'o', value_name = "PLAN.toml")]
    pub output: Option<PathBuf>,
    /// Replace --output when it exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The run and cell of a TPC-H test (its spec is both the run's and the cell's options).
fn begin_tpch_run(
    store: &mut Store,
    name: &str,
    spec: &serde_json::Value,
    host: &serde_json::Value,
    argv: &[String],
    target: &Target,
    clients: u32,
) -> Result<(RunId, CellId, SystemTime)> {
    begin_one_cell_run(
        store,
        host,
        argv,
        &OneCellRun {
            kind: RunKind::Other(name.into()),
            name,
            options: spec,
            cell_options: spec,
            cell_key: &spec_key(spec),
            clients,
            target,
        },
    )
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
        TpchCommand::Power(a) => power(*a, argv).await,
        TpchCommand::Throughput(a) => throughput(a, argv).await,
        TpchCommand::Check(a) => check(a).await,
        TpchCommand::Cleanup(a) => cleanup(a).await,
        TpchCommand::Report(a) => report(a),
        TpchCommand::ImportLauncher(a) => import_launcher(a),
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

/// The power test's controls: the --controls file, then the command-line options over it.
fn power_controls(a: &PowerArgs) -> Result<PowerControls> {
    let l = &a.launcher;
    let mut c = match &l.controls {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow!("cannot read the controls file {}: {e}", p.display()))?;
            toml::from_str::<PowerControls>(&text).map_err(|e| {
                // One line: the file, the line, and TOML's message (which names the key).
                let line = e
                    .span()
                    .map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1)
                    .map_or(String::new(), |l| format!(":{l}"));
                anyhow!(
                    "controls file {}{line}: {}",
                    p.display(),
                    e.message().trim()
                )
            })?
        }
        None => PowerControls::default(),
    };
    if let Some(r) = l.reduction {
        c.reduction = r;
    }
    c.restart_between_queries |= l.restart_between_queries;
    c.drop_caches |= l.drop_caches;
    let all = &mut c.all;
    all.runs = l.runs.or(all.runs);
    all.warmups = l.warmups.or(all.warmups);
    all.timeout = a.timeout.or(all.timeout);
    all.explain = l.explain.then_some(true).or(all.explain);
    all.cluster_size = l.cluster_size.or(all.cluster_size);
    all.max_skipped = l.max_skipped.or(all.max_skipped);
    all.max_query_time = l.max_query_time.or(all.max_query_time);
    for (mine, given) in [
        (&mut all.pre_sql, &l.pre_sql),
        (&mut all.post_sql, &l.post_sql),
        (&mut all.pre_shell, &l.pre_shell),
        (&mut all.post_shell, &l.post_shell),
    ] {
        if given.is_some() {
            *mine = given.clone();
        }
    }
    Ok(c)
}

/// Where the power test runs: a managed server dbrig can restart, or an external target
/// (shell hooks only). Restarts, cache drops and hooks are the plan machinery's own
/// (`dbrig-server`'s `ManagedServer`, `environment.rs`).
struct PowerEnvironment {
    managed: Option<ManagedServer>,
    /// dbrig started the server for this test, so it stops it at the end.
    started_here: bool,
}

fn managed_target(s: &ManagedServer) -> Result<Target> {
    Ok(Target::parse(&s.connection_info()?.url())?)
}

impl PowerEnvironment {
    /// Open (and start when needed) the managed server `--server` names.
    fn managed(a: &LauncherArgs, name: &str, out: &std::path::Path) -> Result<(Self, Target)> {
        let def = crate::server_cmd::definition(&crate::server_cmd::ServerRef {
            name: name.to_owned(),
            plan: a.server_plan.clone(),
            engine: a.engine.clone(),
            out: out.to_owned(),
        })?;
        let mut s = ManagedServer::open(def, out)?;
        let mut started_here = false;
        if !s.is_running() {
            if !s.is_initialised() {
                progress(&format!("initialising the data directory of server {name}"));
                s.initialise()?;
            }
            progress(&format!("starting server {name}"));
            s.start(&Params::new())?;
            started_here = true;
        }
        let target = managed_target(&s)?;
        Ok((
            PowerEnvironment {
                managed: Some(s),
                started_here,
            },
            target,
        ))
    }

    fn finish(&mut self) {
        if self.started_here
            && let Some(s) = self.managed.as_mut()
            && let Err(e) = s.stop()
        {
            progress(&format!("warning: stopping the server: {e}"));
        }
    }
}

impl tpch::PowerEnv for PowerEnvironment {
    fn can_restart(&self) -> bool {
        self.managed.is_some()
    }

    fn restart(&mut self, params: &[String]) -> std::result::Result<Target, String> {
        let s = self
            .managed
            .as_mut()
            .ok_or("the target is external: dbrig cannot restart it")?;
        let params = Params::parse(params).map_err(|e| e.to_string())?;
        progress(&format!(
            "restarting server {}{}",
            s.name(),
            if params.is_empty() {
                String::new()
            } else {
                format!(" with {}", params.to_strings().join(" "))
            }
        ));
        s.restart(&params).map_err(|e| e.to_string())?;
        managed_target(s).map_err(|e| e.to_string())
    }

    fn drop_caches(&mut self) -> std::result::Result<(), String> {
        crate::environment::drop_caches()
    }

    fn shell_hook(&mut self, name: &str, command: &str) -> serde_json::Value {
        serde_json::to_value(crate::environment::run_shell_hook(name, command, 60.0))
            .unwrap_or_default()
    }
}

/// Draw the bar chart of a power test so far (one configuration) to `path`, atomically.
fn write_power_chart(path: &std::path::Path, report: &tpch::PowerReport) -> Result<()> {
    use dbrig_report::tpch::{Configuration, TpchReport, tpch_chart};
    let conf = Configuration::from_power_reports("default", &[serde_json::to_value(report)?])?;
    let chart = tpch_chart(&TpchReport {
        title: "TPC-H power test".into(),
        baseline: "default".into(),
        configurations: vec![conf],
    })?;
    dbrig_report::write_atomic(path, chart.as_bytes())?;
    Ok(())
}

async fn power(a: PowerArgs, argv: &[String]) -> Result<ExitCode> {
    if a.launcher.server.is_none()
        && (a.launcher.engine.is_some() || a.launcher.server_plan.is_some())
    {
        bail!(
            "--engine and --server-plan define the managed server of --server NAME: add --server"
        );
    }
    let controls = power_controls(&a)?;
    let (mut env, target) = match &a.launcher.server {
        Some(name) => PowerEnvironment::managed(&a.launcher, name, &a.store.out)?,
        None => (
            PowerEnvironment {
                managed: None,
                started_here: false,
            },
            resolve_target(&a.connection, &a.store)?,
        ),
    };
    // Say it before anything runs: these need a server dbrig can restart.
    if let Some(what) = controls.needs_restart()
        && env.managed.is_none()
    {
        bail!(
            "{what} needs a managed server that dbrig can restart, and {target} is an external target: add --server NAME (with --engine or --server-plan) to run the power test on a managed server"
        );
    }
    let result = power_on(&a, argv, &controls, &mut env, &target).await;
    env.finish();
    result
}

async fn power_on(
    a: &PowerArgs,
    argv: &[String],
    controls: &PowerControls,
    env: &mut PowerEnvironment,
    target: &Target,
) -> Result<ExitCode> {
    let target = target.clone();
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
    // Refuse before a run is recorded when the data is not there or the controls name
    // queries the set does not have.
    {
        let mut conn = Connection::connect(&target, &ConnectOptions::default()).await?;
        tpch::check_loaded(&mut conn).await?;
        let set = options
            .queries
            .clone()
            .unwrap_or_else(|| QuerySet::builtin(conn.dialect()));
        controls.validate(&set).map_err(|e| anyhow!(e))?;
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
        "timeout_seconds": a.timeout,
        "controls": controls,
        "server": a.launcher.server,
    });
    let (run_id, cell, started) =
        begin_tpch_run(&mut store, "tpch_power", &spec, &host, argv, &target, 1)?;
    let target_text = target.to_string();
    let chart = a.launcher.chart.clone();
    let mut on_query = |r: &tpch::PowerReport| {
        if let Some(path) = &chart
            && let Err(e) = write_power_chart(path, r)
        {
            progress(&format!("warning: chart {}: {e}", path.display()));
        }
    };
    let result = tpch::power_test_controlled(
        &target,
        &ConnectOptions::default(),
        &options,
        controls,
        Some(env),
        &progress,
        &mut on_query,
    )
    .await;
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
        table.set_header([
            "query", "seconds", "min", "max", "runs", "plans", "rows", "status",
        ]);
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
            let seconds = match o.status {
                QueryStatus::Timeout => format!(">{:.6}", o.seconds()),
                _ => format!("{:.6}", o.seconds()),
            };
            // The launcher controls' figures: extremes of the runs used, runs measured
            // (+ warm-ups), distinct plans seen.
            let (min, max, runs, plans) = match &o.detail {
                Some(d) => {
                    let f =
                        |m: Option<u64>| m.map_or("-".into(), |m| format!("{:.6}", m as f64 / 1e6));
                    let max = match (d.max_timed_out, d.timeout_seconds) {
                        (true, Some(t)) => format!(">{t}"),
                        _ => f(d.max_micros),
                    };
                    let warm = d.runs.iter().filter(|r| r.warmup).count();
                    let runs = d.runs.len() - warm;
                    let runs = if warm > 0 {
                        format!("{runs}+{warm}w")
                    } else {
                        runs.to_string()
                    };
                    (f(d.min_micros), max, runs, d.plans.len().to_string())
                }
                None => ("-".into(), "-".into(), "1".into(), "-".into()),
            };
            table.add_row([
                o.name.clone(),
                seconds,
                min,
                max,
                runs,
                plans,
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

fn parse_timeout(s: &str) -> std::result::Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "invalid timeout '{s}': give a positive number of seconds, such as 0.5 or 600"
        )),
    }
}

/// Power@Size (and its scale factor) of a stored, finished power test run.
fn stored_power(store: &dbrig_store::Store, id: i64) -> Result<(f64, f64)> {
    let run = store.run(dbrig_store::RunId(id)).map_err(|_| {
        anyhow!(
            "no run {id} in {}: see `dbrig runs`",
            store.path().display()
        )
    })?;
    if run.kind.as_str() != "tpch_power" {
        bail!(
            "run {id} is a {} run, not a TPC-H power test: give --power-run the id of a `dbrig tpch power` run",
            run.kind.as_str()
        );
    }
    let trial = store
        .cells(run.id)?
        .into_iter()
        .flat_map(|c| store.trials(c.id).unwrap_or_default())
        .find(|t| t.status == TrialStatus::Done)
        .ok_or_else(|| {
            anyhow!("power run {id} has no finished trial: run `dbrig tpch power` again")
        })?;
    let report = trial
        .extra
        .as_ref()
        .and_then(|e| e.get("tpch_power"))
        .ok_or_else(|| anyhow!("power run {id} holds no power test results"))?;
    let sf = report["scale_factor"].as_f64().unwrap_or(0.0);
    let power = report["power_at_size"].as_f64().ok_or_else(|| {
        anyhow!("power run {id} has no Power@Size (a query or refresh function failed): run `dbrig tpch power` again")
    })?;
    Ok((power, sf))
}

/// A step's seconds as the seeds show them: `>T` for a timeout, `err` for an error.
fn cell_text(o: &tpch::QueryOutcome) -> String {
    match o.status {
        QueryStatus::Timeout => format!(">{:.3}", o.seconds()),
        QueryStatus::Error => "err".into(),
        QueryStatus::Wrong => format!("{:.3}!", o.seconds()),
        QueryStatus::Ok => format!("{:.3}", o.seconds()),
    }
}

async fn throughput(a: ThroughputArgs, argv: &[String]) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    let queries = match &a.queries {
        Some(dir) => Some(QuerySet::from_dir(dir).map_err(|e| anyhow!(e))?),
        None => None,
    };
    let params = if a.validation_params {
        ParamMode::Validation
    } else {
        ParamMode::Random { seed: a.seed }
    };
    let mut options = tpch::ThroughputOptions {
        streams: a.streams,
        params,
        queries,
        refresh: !a.no_refresh,
        timeout: a.timeout.map(std::time::Duration::from_secs_f64),
    };
    let mut store = open_store(&a.store)?;
    let power = match a.power_run {
        Some(id) => Some(stored_power(&store, id)?),
        None => None,
    };
    // Refuse before a run is recorded when the data is not there or is another size.
    {
        let mut conn = Connection::connect(&target, &ConnectOptions::default()).await?;
        tpch::check_loaded(&mut conn).await?;
        let sf = tpch::detect_scale_factor(&mut conn).await?;
        conn.close().await;
        // Decided here so that the stored run says how many streams ran.
        if options.streams == 0 {
            options.streams = tpch::min_streams(sf);
        }
        if let Some((_, power_sf)) = power
            && (power_sf - sf).abs() > 1e-9
        {
            bail!(
                "power run {} was at SF {power_sf} but {target} holds SF {sf}: QphH@Size needs both tests on the same data",
                a.power_run.unwrap_or_default()
            );
        }
    }
    let host = serde_json::to_value(HostFacts::collect(None)).unwrap_or_default();
    let spec = serde_json::json!({
        "workload": "tpch_throughput",
        "target": target.to_string(),
        "streams": options.streams,
        "params": params,
        "queries": a.queries.as_ref().map(|p| p.display().to_string()),
        "refresh": options.refresh,
        "timeout_seconds": a.timeout,
        "power_run": a.power_run,
    });
    let (run_id, cell, started) = begin_tpch_run(
        &mut store,
        "tpch_throughput",
        &spec,
        &host,
        argv,
        &target,
        options.streams,
    )?;
    let target_text = target.to_string();
    let result =
        tpch::throughput_test(&target, &ConnectOptions::default(), &options, &progress).await;
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
    let qphh = match (power, report.throughput_at_size) {
        (Some((p, _)), Some(t)) => Some(tpch::qphh_at_size(p, t)),
        _ => None,
    };
    let extra = serde_json::json!({
        "tpch_throughput": report,
        "power_run": a.power_run,
        "power_at_size": power.map(|(p, _)| p),
        "qphh_at_size": qphh,
    });
    // A stream that lost its server fails the run, but what it measured is kept.
    let (status, run_status) = match &report.failure {
        Some(_) => (TrialStatus::Failed, RunStatus::Failed),
        None => (TrialStatus::Done, RunStatus::Done),
    };
    store.record_trial(
        cell,
        &NewTrial {
            trial: 1,
            status,
            reason: report.failure.as_deref(),
            server_version: Some(&report.server_version),
            started_at: started,
            finished_at: finished,
            measurements: None,
            extra: Some(&extra),
        },
    )?;
    store.finish_run(run_id, run_status, report.failure.as_deref())?;
    if a.format == Format::Json {
        let mut v = serde_json::to_value(&report)?;
        v["run_id"] = serde_json::json!(run_id.0);
        v["target"] = serde_json::json!(target_text);
        v["power_run"] = serde_json::json!(a.power_run);
        v["power_at_size"] = serde_json::json!(power.map(|(p, _)| p));
        v["qphh_at_size"] = serde_json::json!(qphh);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_throughput(&report, &target_text, power.map(|(p, _)| p), qphh);
        println!("Stored as run {} in {}", run_id.0, store.path().display());
    }
    Ok(if report.failure.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_throughput(
    report: &tpch::ThroughputReport,
    target: &str,
    power: Option<f64>,
    qphh: Option<f64>,
) {
    println!(
        "TPC-H throughput test, SF {} on {target} ({}), {} streams{}",
        report.scale_factor,
        report.server_version,
        report.streams,
        report
            .timeout_seconds
            .map(|t| format!(", timeout {t} s"))
            .unwrap_or_default()
    );
    let count = |s: &tpch::StreamReport, st: QueryStatus| {
        s.queries
            .iter()
            .filter(|o| o.status == st)
            .count()
            .to_string()
    };
    let mut streams = comfy_table::Table::new();
    streams.load_style(comfy_table::presets::NOTHING);
    streams.set_header([
        "stream", "seconds", "queries", "ok", "error", "timeout", "wrong",
    ]);
    for s in &report.query_streams {
        streams.add_row([
            s.stream.to_string(),
            format!("{:.3}", s.seconds),
            s.queries.len().to_string(),
            count(s, QueryStatus::Ok),
            count(s, QueryStatus::Error),
            count(s, QueryStatus::Timeout),
            count(s, QueryStatus::Wrong),
        ]);
    }
    if let Some(r) = &report.refresh_stream {
        let failed = r
            .pairs
            .iter()
            .flat_map(|p| std::iter::once(&p.rf1).chain(p.rf2.iter()))
            .filter(|o| o.status != QueryStatus::Ok)
            .count();
        streams.add_row([
            "refresh".to_owned(),
            format!("{:.3}", r.seconds),
            format!("{} pairs", r.pairs.len()),
            String::new(),
            failed.to_string(),
            String::new(),
            String::new(),
        ]);
    }
    println!("{streams}");
    // Query × stream seconds, in query-number order (user files by name after).
    let mut names: Vec<String> = Vec::new();
    for s in &report.query_streams {
        for o in &s.queries {
            if !names.contains(&o.name) {
                names.push(o.name.clone());
            }
        }
    }
    names.sort_by_key(|n| (n.parse::<u32>().unwrap_or(u32::MAX), n.clone()));
    let mut per_query = comfy_table::Table::new();
    per_query.load_style(comfy_table::presets::NOTHING);
    per_query.set_header(
        std::iter::once("query".to_owned()).chain(
            report
                .query_streams
                .iter()
                .map(|s| format!("s{}", s.stream)),
        ),
    );
    for name in &names {
        per_query.add_row(std::iter::once(format!("Q{name}")).chain(
            report.query_streams.iter().map(|s| {
                s.queries
                    .iter()
                    .find(|o| &o.name == name)
                    .map(cell_text)
                    .unwrap_or_else(|| "-".into())
            }),
        ));
    }
    if let Some(r) = &report.refresh_stream {
        for p in &r.pairs {
            per_query.add_row([
                format!("RF set {}", p.refresh_set),
                format!(
                    "RF1 {} RF2 {}",
                    cell_text(&p.rf1),
                    p.rf2.as_ref().map(cell_text).unwrap_or_else(|| "-".into())
                ),
            ]);
        }
    }
    println!("{per_query}");
    for s in &report.query_streams {
        for o in s.queries.iter().filter(|o| o.status != QueryStatus::Ok) {
            println!(
                "  stream {} Q{}: {}: {}",
                s.stream,
                o.name,
                o.status.as_str(),
                o.error.as_deref().unwrap_or("")
            );
        }
    }
    if let Some(r) = &report.refresh_stream {
        for p in &r.pairs {
            for o in std::iter::once(&p.rf1)
                .chain(p.rf2.iter())
                .filter(|o| o.status != QueryStatus::Ok)
            {
                println!(
                    "  refresh set {} {}: {}: {}",
                    p.refresh_set,
                    o.name,
                    o.status.as_str(),
                    o.error.as_deref().unwrap_or("")
                );
            }
        }
    }
    if let Some(f) = &report.failure {
        println!("FAILED: {f}");
    }
    println!("Ts = {:.3} s", report.ts_seconds);
    match report.throughput_at_size {
        Some(t) => println!("Throughput@Size = {t:.2}"),
        None => println!(
            "Throughput@Size = n/a (a query or refresh function did not complete correctly)"
        ),
    }
    match (power, qphh) {
        (Some(p), Some(q)) => println!("Power@Size = {p:.2} (stored run), QphH@Size = {q:.2}"),
        (Some(p), None) => println!("Power@Size = {p:.2} (stored run), QphH@Size = n/a"),
        _ => println!("QphH@Size: give --power-run RUN (a `dbrig tpch power` run on this data)"),
    }
}

fn report(a: TpchReportArgs) -> Result<ExitCode> {
    use dbrig_report::tpch::{TpchReport, tpch_chart, tpch_table};
    let store = open_store(&a.store)?;
    let runs: Vec<dbrig_store::RunId> = if a.runs.is_empty() {
        vec![store.latest_run_id()?.ok_or_else(|| {
            anyhow!(
                "no runs in {}: run `dbrig tpch power` first",
                store.path().display()
            )
        })?]
    } else {
        a.runs.iter().map(|&r| dbrig_store::RunId(r)).collect()
    };
    for &r in &runs {
        store.run(r).map_err(|_| {
            anyhow!(
                "no run {} in {}: see `dbrig runs`",
                r.0,
                store.path().display()
            )
        })?;
    }
    let Some(report) = TpchReport::load(&store, &runs, a.baseline.as_deref())? else {
        bail!(
            "run(s) {} hold no finished TPC-H power test: give the id of a `dbrig tpch power` run or of a plan with a tpch_power workload",
            runs.iter()
                .map(|r| r.0.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    if let Some(b) = &a.baseline
        && report.baseline != *b
    {
        bail!(
            "no configuration named {b:?} in the TPC-H results (configurations: {})",
            report
                .configurations
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let table = tpch_table(&report);
    if a.markdown {
        print!("{}", table.to_markdown());
    } else {
        print!("{}", table.to_text());
    }
    if let Some(path) = &a.chart {
        dbrig_report::write_atomic(path, tpch_chart(&report)?.as_bytes())?;
        eprintln!("dbrig: chart written to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn import_launcher(a: ImportLauncherArgs) -> Result<ExitCode> {
    use dbrig_workload::tpch::launcher::{LauncherInputs, import};
    let mut overrides = Vec::new();
    for o in &a.overrides {
        let (k, v) = o.trim_start_matches('-').split_once('=').ok_or_else(|| {
            anyhow!("--override {o}: write it as KEY=VALUE, e.g. --override TIMEOUT=600")
        })?;
        overrides.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let inputs = LauncherInputs {
        project_home: a.project_home.clone(),
        datadir_home: a.datadir_home.clone(),
        queries_home: a.queries_home.clone(),
        scale_factor: a.scale_factor.clone(),
        overrides,
    };
    let imported = import(&a.top, &inputs, &mut |p| {
        std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    })
    .map_err(|e| anyhow!(e))?;
    match &a.output {
        None => print!("{}", imported.plan),
        Some(path) => {
            if path.exists() && !a.force {
                bail!(
                    "{} exists: choose another --output or add --force to replace it",
                    path.display()
                );
            }
            // Check the plan loads before it takes the output's place (relative paths in it
            // resolve from where dbrig runs, as when the plan is run).
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            let tmp = dir.join(format!(
                ".{}.import.{}.toml",
                path.file_name()
                    .map_or("plan".into(), |n| n.to_string_lossy()),
                std::process::id()
            ));
            std::fs::write(&tmp, &imported.plan)
                .map_err(|e| anyhow!("cannot write {}: {e}", tmp.display()))?;
            let checked = crate::plan::load(&tmp, &[], &[]);
            if let Err(e) = checked {
                let _ = std::fs::remove_file(&tmp);
                bail!(
                    "the imported plan does not load ({e:#}); nothing written to {}",
                    path.display()
                );
            }
            std::fs::rename(&tmp, path)
                .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
            eprintln!("dbrig: plan written to {}", path.display());
        }
    }
    if !imported.unmapped.is_empty() {
        eprintln!(
            "dbrig: {} launcher setting(s) have no dbrig equivalent and are comments in the plan:",
            imported.unmapped.len()
        );
        for u in &imported.unmapped {
            eprintln!("  {u}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
