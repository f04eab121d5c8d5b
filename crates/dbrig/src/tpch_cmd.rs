//! `dbrig tpch gen|load|power|check|cleanup`: DBT-3 / TPC-H.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, anyhow, bail};
use clap::{Args, Subcommand};
use dbrig_core::limits;
use dbrig_driver::ConnectOptions;
use dbrig_exec::{Configuration, Plan, SingleCommand};
use dbrig_server::managed::{ManagedServer, Params};
use dbrig_workload::tpch::{self, KeysWhen, PowerControls, ScaleFactor, Table};
use dbrig_workload::{LoadOf, LoadTest, TpchPowerOptions, WorkloadKind};

use crate::args::{ConnectionArgs, EnvironmentArgs, Format, StoreArgs};
use crate::connection::resolve_target;
use crate::console::{self, ConsoleObserver};
use crate::out::outln;

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
    #[arg(long)]
    pub sf: ScaleFactor,
    /// Folder for the .tbl files.
    #[arg(long, value_name = "DIR", default_value = "dbrig-out")]
    pub out: PathBuf,
    /// Only these tables (comma-separated; default all eight).
    #[arg(long, value_delimiter = ',')]
    pub tables: Vec<String>,
    /// Generator threads (0: one per CPU).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Loaders>)]
    pub parallel: u32,
}

#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Scale factor (0.01, 1, 10, …).
    #[arg(long)]
    pub sf: ScaleFactor,
    /// Create primary keys before or after the load; `auto`: before on MariaDB/MySQL (InnoDB
    /// clusters rows by the key: adding it afterwards rebuilds the table), after elsewhere.
    #[arg(long, value_enum, default_value_t = KeysWhen::Auto)]
    pub keys: KeysWhen,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Loaders>)]
    pub parallel: u32,
    /// Load even when the estimated size exceeds the target's free space (or, where that
    /// cannot be known, 1 TB).
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print the one-cell plan; connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
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

#[derive(Debug, Clone, Args)]
pub struct PowerArgs {
    /// A folder of .sql files to run instead of the built-in queries (one query per file,
    /// named by the file stem; `N…` files get query N's parameters).
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Random qgen parameters from this seed instead of the validation parameters.
    #[arg(long, value_parser = limits::parse::<limits::Seed>)]
    pub seed: Option<u64>,
    /// Skip the refresh functions RF1/RF2.
    #[arg(long)]
    pub no_refresh: bool,
    /// Seconds a query may run before it is cancelled on the server and recorded as a
    /// timeout (shown as `>T`).
    #[arg(long, value_name = "SECONDS", value_parser = limits::parse::<limits::TimeoutSeconds>)]
    pub timeout: Option<f64>,
    /// Another target holding the same data (another engine): each query's answer is
    /// compared with its answer there (run untimed first), so the status says `ok` (or
    /// `wrong`) instead of `unchecked` off SF 1's reference answers.
    #[arg(long, value_name = "URL")]
    pub check_against: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print the one-cell plan; connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten, next_help_heading = "DBT-3 launcher controls")]
    pub controls: PowerControls,
    /// A TOML file of controls: top-level `reduction`, `restart-between-queries`,
    /// `drop-caches`; `[all]` and `[query."N"]` tables with runs, warmups, timeout, params
    /// (startup parameters KEY=VALUE for that query), pre-sql, post-sql, pre-shell,
    /// post-shell, explain, cluster-size, max-skipped, max-query-time. Options given on the
    /// command line override the file's.
    #[arg(long = "controls", value_name = "FILE.toml", display_order = 20)]
    pub controls_file: Option<PathBuf>,
    /// Redraw this SVG bar chart after every query (the launcher's live graphic).
    #[arg(long, value_name = "FILE.svg", display_order = 21)]
    pub chart: Option<PathBuf>,
    #[command(flatten, next_help_heading = "Managed server")]
    pub managed: ManagedServerArgs,
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

/// The managed server a TPC-H test runs on instead of --target (`tpch power` and `tpch
/// throughput` alike).
#[derive(Debug, Clone, Args)]
pub struct ManagedServerArgs {
    /// Run on this managed server instead of --target: dbrig starts it if it is not running
    /// (and stops it at the end; a power test restarts it as the controls ask). Defined by
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
}

impl ManagedServerArgs {
    /// The configuration a test runs on: the external target, or the managed server
    /// `--server` names (started if down and stopped at the end; one that is already running
    /// keeps the parameters it runs with).
    fn configuration(
        &self,
        connection: &ConnectionArgs,
        store: &StoreArgs,
    ) -> Result<(Configuration, Option<dbrig_server::ServerDef>)> {
        let Some(name) = &self.server else {
            let target = resolve_target(connection, store)?;
            return Ok((Configuration::external("default", target), None));
        };
        let def = crate::server_cmd::definition(&crate::server_cmd::ServerRef {
            name: name.to_owned(),
            plan: self.server_plan.clone(),
            engine: self.engine.clone(),
            out: store.out.clone(),
        })?;
        let mut running = ManagedServer::open(def.clone(), &store.out)?;
        let params = match running.is_running() {
            true => running
                .current_params()
                .cloned()
                .unwrap_or_else(Params::new),
            false => Params::new(),
        };
        Ok((Configuration::managed("default", name, params), Some(def)))
    }
}

#[derive(Debug, Clone, Args)]
pub struct ThroughputArgs {
    /// Query streams (0: the spec's minimum for the scale factor: SF<=1 → 2, 10 → 3, 30 → 4,
    /// 100 → 5, 300 → 6, 1000 → 7, …).
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Streams>)]
    pub streams: u32,
    /// Seed of the qgen parameters; every stream gets its own values from it.
    #[arg(long, default_value_t = 1, conflicts_with = "validation_params", value_parser = limits::parse::<limits::Seed>)]
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
    #[arg(long, value_name = "SECONDS", value_parser = limits::parse::<limits::TimeoutSeconds>)]
    pub timeout: Option<f64>,
    /// A stored power test run (its id in the results database) on the same data: QphH@Size
    /// is computed from its Power@Size and this run's Throughput@Size.
    #[arg(long, value_name = "RUN", value_parser = limits::parse::<limits::RunId>)]
    pub power_run: Option<i64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print the one-cell plan; connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten, next_help_heading = "Managed server")]
    pub managed: ManagedServerArgs,
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
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct TpchReportArgs {
    /// Run ids (plan runs or `dbrig tpch power` runs; several are shown side by side).
    /// Default: the latest run.
    #[arg(value_name = "RUN", value_parser = limits::parse::<limits::RunId>)]
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
    /// Rows in the power test's stream order (RF1, the stream's permutation, RF2) instead of
    /// Q1 … Q22 then RF1, RF2.
    #[arg(long)]
    pub stream_order: bool,
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
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
}

fn progress(msg: &str) {
    eprintln!("dbrig: {msg}");
}

pub async fn tpch(args: TpchArgs, argv: &[String]) -> Result<ExitCode> {
    match args.command {
        TpchCommand::Gen(a) => gen_tbl(a),
        TpchCommand::Load(a) => load(a, argv).await,
        TpchCommand::Power(a) => power(*a, argv).await,
        TpchCommand::Throughput(a) => throughput(a, argv).await,
        TpchCommand::Check(a) => check(a).await,
        TpchCommand::Cleanup(a) => cleanup(a).await,
        TpchCommand::Report(a) => report(a),
        TpchCommand::ImportLauncher(a) => import_launcher(a),
    }
}

fn gen_tbl(a: GenArgs) -> Result<ExitCode> {
    let tables = Table::parse_list(&a.tables)?;
    let started = std::time::Instant::now();
    let files = tpch::write_tbl(a.sf.get(), &tables, &a.out, a.parallel, &progress)
        .map_err(|e| anyhow!("cannot write .tbl files to {}: {e}", a.out.display()))?;
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    outln!(
        "Wrote {} .tbl file(s) ({bytes} bytes) at SF {} to {} in {:.2} s",
        files.len(),
        a.sf,
        a.out.display(),
        started.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}

async fn load(a: LoadArgs, argv: &[String]) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    // The executor's preflight refuses data the disk cannot hold before anything is recorded.
    let options = TpchPowerOptions {
        sf: a.sf.get(),
        queries: Vec::new(),
        query_dir: None,
        seed: None,
        refresh: false,
        keys: a.keys,
        parallel: a.parallel,
        streams: 0,
        timeout: None,
        controls: tpch::PowerControls::default(),
        power_run: None,
        check_against: None,
        force_load: a.force,
    };
    crate::run_cmd::measure_load(
        LoadTest {
            of: LoadOf::Tpch(Box::new(options)),
            replace: false,
        },
        target.clone(),
        dbrig_workload::RunOptions::default(),
        crate::run_cmd::LoadCommand {
            store: &a.store,
            format: a.format,
            environment: a.environment.environment(),
            dry_run: a.dry_run,
            argv,
            interrupted: format!(
                "dbrig: interrupted: the TPC-H load into {target} stopped; its tables are left half-loaded (never measured: the power and throughput tests refuse them). Finish with `dbrig tpch cleanup {on}` then `dbrig tpch load --sf {} {on}` again",
                a.sf,
                on = format_args!(
                    "--target {}",
                    crate::run_cmd::shell_word(&target.to_string())
                )
            ),
        },
    )
    .await
}

async fn power(a: PowerArgs, argv: &[String]) -> Result<ExitCode> {
    // The --controls file, then the command line's controls over it.
    let mut given = a.controls.clone();
    given.all.timeout = a.timeout;
    let controls = match &a.controls_file {
        Some(file) => given.over(PowerControls::from_file(file)?),
        None => given.over(PowerControls::default()),
    };
    let (configuration, server) = a.managed.configuration(&a.connection, &a.store)?;
    // Say it before anything runs: these need a server dbrig can restart.
    if let Some(what) = controls.needs_restart()
        && server.is_none()
    {
        bail!(
            "{what} needs a managed server that dbrig can restart, and {} is an external target: add --server NAME (with --engine or --server-plan) to run the power test on a managed server",
            configuration.describe()
        );
    }
    if let Some(dir) = &a.queries {
        tpch::QuerySet::from_dir(dir)?;
    }
    let options = TpchPowerOptions {
        // The loaded data's, found before the run is recorded.
        sf: 0.0,
        queries: Vec::new(),
        query_dir: a.queries.clone(),
        seed: a.seed,
        refresh: !a.no_refresh,
        keys: KeysWhen::Auto,
        parallel: 0,
        streams: 0,
        timeout: None,
        controls,
        power_run: None,
        check_against: a.check_against.clone(),
        force_load: false,
    };
    let plan = Plan::single(SingleCommand {
        workload: WorkloadKind::new(dbrig_workload::kinds::TpchPower(options)),
        configuration,
        server,
        run: dbrig_workload::RunOptions::default(),
        prepare: false,
        environment: a.environment.environment(),
    })?;
    if a.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(chart) = &a.chart {
        let folder = chart
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        console::check_writable_folder(folder, "the --chart file", "--chart FILE.svg", false)?;
    }
    let observer = ConsoleObserver::single().with_power_chart(a.chart.clone());
    let outcome = console::measure(plan, &a.store, argv, false, &observer).await?;
    crate::report_cmd::print_single(&outcome.store, outcome.run, a.format)?;
    Ok(console::exit_code(&outcome))
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
    let target = |url: &String| {
        let mut c = a.connection.clone();
        c.target = Some(url.to_owned());
        resolve_target(&c, &a.store)
    };
    let others = a.against.iter().map(target).collect::<Result<Vec<_>>>()?;
    let r = tpch::check_targets(&target(&main_url)?, &others, a.sf1_answers).await?;
    if a.format == Format::Json {
        crate::out::text(&dbrig_report::json_text(&serde_json::to_value(&r)?))?;
    } else {
        outln!(
            "TPC-H answer check (validation parameters): {}{}",
            r.targets.join(" vs "),
            if a.sf1_answers { " vs SF1 answers" } else { "" }
        )?;
        for q in &r.queries {
            let detail = q.detail.as_deref().unwrap_or("");
            outln!("  Q{:<4}{:<10}{detail}", q.query, q.verdict.status())?;
        }
    }
    Ok(if r.all_same {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

async fn cleanup(a: CleanupArgs) -> Result<ExitCode> {
    let target = resolve_target(&a.connection, &a.store)?;
    let r = tpch::cleanup(&target, &ConnectOptions::default()).await?;
    if r.dropped.is_empty() {
        outln!("Nothing to drop on {target}: no TPC-H table exists")?;
    } else {
        outln!("Dropped {} on {target}", r.dropped.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn throughput(a: ThroughputArgs, argv: &[String]) -> Result<ExitCode> {
    let (configuration, server) = a.managed.configuration(&a.connection, &a.store)?;
    if let Some(dir) = &a.queries {
        tpch::QuerySet::from_dir(dir)?;
    }
    let power_run = match a.power_run {
        Some(id) => {
            let store = console::open_existing_store(&a.store)?;
            Some(dbrig_report::tpch::stored_power(&store, id)?)
        }
        None => None,
    };
    let options = TpchPowerOptions {
        // The loaded data's, found (with the default stream count) before the run is recorded.
        sf: 0.0,
        queries: Vec::new(),
        query_dir: a.queries.clone(),
        seed: (!a.validation_params).then_some(a.seed),
        refresh: !a.no_refresh,
        keys: KeysWhen::Auto,
        parallel: 0,
        streams: a.streams,
        timeout: a.timeout,
        controls: PowerControls::default(),
        power_run,
        check_against: None,
        force_load: false,
    };
    let plan = Plan::single(SingleCommand {
        workload: WorkloadKind::new(dbrig_workload::kinds::TpchThroughput(options)),
        configuration,
        server,
        run: dbrig_workload::RunOptions::default(),
        prepare: false,
        environment: a.environment.environment(),
    })?;
    if a.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let outcome = console::measure(plan, &a.store, argv, false, &ConsoleObserver::single()).await?;
    crate::report_cmd::print_single(&outcome.store, outcome.run, a.format)?;
    Ok(console::exit_code(&outcome))
}

fn report(a: TpchReportArgs) -> Result<ExitCode> {
    use dbrig_report::tpch::{TpchReport, tpch_chart, tpch_table};
    let store = console::open_existing_store(&a.store)?;
    let mut report = TpchReport::of_runs(&store, &a.runs, a.baseline.as_deref())?;
    if a.stream_order {
        report.order = dbrig_report::tpch::QueryOrder::Stream;
    }
    let table = tpch_table(&report);
    if a.markdown {
        crate::out::text(&table.to_markdown())?;
    } else {
        crate::out::text(&table.to_text())?;
    }
    if let Some(path) = &a.chart {
        dbrig_report::write_atomic(path, tpch_chart(&report)?.as_bytes())?;
        eprintln!("dbrig: chart written to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn import_launcher(a: ImportLauncherArgs) -> Result<ExitCode> {
    use dbrig_workload::tpch::launcher::{LauncherInputs, import, parse_override};
    let overrides = a.overrides.iter().map(|o| parse_override(o));
    let inputs = LauncherInputs {
        project_home: a.project_home.clone(),
        datadir_home: a.datadir_home.clone(),
        queries_home: a.queries_home.clone(),
        scale_factor: a.scale_factor.clone(),
        overrides: overrides.collect::<Result<_, _>>()?,
    };
    let imported = import(&a.top, &inputs, &mut |p| std::fs::read_to_string(p))?;
    match &a.output {
        None => crate::out::text(&imported.plan)?,
        Some(path) => {
            dbrig_exec::plan::write_checked(path, &imported.plan, a.force)?;
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
