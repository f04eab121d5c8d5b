//! `dbrig prepare|run|cleanup WORKLOAD` (sysbench's verbs) and `dbrig run PLAN.toml`, and
//! `dbrig list`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use dbrig_driver::Target;
use dbrig_exec::{Configuration, Plan, SingleCommand};
use dbrig_workload::{LoadOf, LoadTest, RunOptions, Workload, WorkloadKind};

use crate::args::{Format, StoreArgs, WorkloadArgs};
use crate::connection::resolve_target;
use crate::console::{self, ConsoleObserver};
use crate::out::outln;

/// The name `prepare` and `cleanup` take for pgbench's tables.
const PGBENCH_INIT: &str = "pgbench-init";
/// `dbrig cleanup sql-bench`: the suite's database of its own on the target's server.
const SQL_BENCH: &str = "sql-bench";

/// The workload the arguments name: an OLTP workload by name, or pgbench scripts
/// (`--script` / `--builtin`, with no name or `script`).
fn workload_of(args: &WorkloadArgs) -> Result<Workload> {
    let scripts = !args.script.scripts.is_empty() || !args.script.builtins.is_empty();
    match args.workload.as_deref() {
        None | Some(dbrig_workload::script::NAME) if scripts => {
            Ok(Workload::script(args.script.clone())?)
        }
        None | Some(dbrig_workload::script::NAME) => Err(anyhow!(
            "name a workload (see `dbrig list`), a plan file, or give pgbench scripts with --script FILE / --builtin NAME"
        )),
        Some(name) if dbrig_workload::lua::is_script_name(name) => Ok(Workload::Lua(
            dbrig_workload::LuaWorkload::new(dbrig_workload::LuaOptions {
                script: name.to_owned(),
                script_options: args.lua.script_options.clone(),
            })?,
        )),
        Some(name) if scripts => Err(anyhow!(
            "--script and --builtin run pgbench scripts; they do not go with the workload {name}"
        )),
        Some(dbrig_workload::tpcc::NAME) => Ok(Workload::Tpcc(dbrig_workload::tpcc::Tpcc::new(
            dbrig_workload::tpcc::TpccOptions {
                load_parallel: args.oltp.load_parallel,
                ..args.tpcc.clone()
            },
        ))),
        Some(name) => Ok(Workload::from_name(name, args.oltp.clone())?),
    }
}

pub async fn prepare(args: WorkloadArgs, argv: &[String]) -> Result<ExitCode> {
    let target = resolve_target(&args.connection, &args.store)?;
    let of = if args.workload.as_deref() == Some(PGBENCH_INIT) {
        let mut script = args.script.clone();
        // Without --scale, pgbench -i's default, 1; a --scale 0 given is a mistake, not 1.
        if script.scale == 0 && given(argv, "--scale") {
            return Err(anyhow!(
                "invalid value '0' for '--scale': pgbench-init makes 100 000 accounts per scale unit: give 1 to 1000000 (without --scale: 1)"
            ));
        }
        script.scale = script.scale.max(1);
        LoadOf::PgbenchInit(script)
    } else if args.workload.as_deref() == Some(dbrig_workload::tpcc::NAME) {
        // The loaders are the one `--load-parallel` every prepare takes.
        LoadOf::Tpcc(dbrig_workload::tpcc::TpccOptions {
            load_parallel: args.oltp.load_parallel,
            ..args.tpcc.clone()
        })
    } else {
        let workload = workload_of(&args)?;
        if let Workload::Lua(l) = &workload {
            return lua_command(l, "prepare", &target, &args).await;
        }
        let Workload::Oltp(oltp) = workload else {
            return Err(anyhow!(
                "pgbench scripts have no prepare step of their own: `dbrig prepare {PGBENCH_INIT} --scale N` makes pgbench's tables"
            ));
        };
        LoadOf::Oltp(oltp)
    };
    // The advice names the target (and what makes the tables), so it can be run as it is.
    let on = format!("--target {}", shell_word(&target.to_string()));
    let interrupted = match &of {
        LoadOf::PgbenchInit(o) => format!(
            "dbrig: interrupted: pgbench-init stopped; pgbench's tables on {target} are left half-made: run `dbrig prepare {PGBENCH_INIT} --scale {} {on}` again",
            o.scale
        ),
        LoadOf::Tpcc(o) => format!(
            "dbrig: interrupted: prepare of tpcc stopped; the TPC-C tables on {target} are left half-built (never measured). Finish with `dbrig cleanup tpcc {on}` then `dbrig prepare tpcc --warehouses {} {on}` again",
            o.warehouses
        ),
        _ => {
            let tables = match &of {
                LoadOf::Oltp(o) if o.options.tables != 1 => {
                    format!(" --tables {}", o.options.tables)
                }
                _ => String::new(),
            };
            format!(
                "dbrig: interrupted: prepare of {w} stopped; the tables it created on {target} are left half-prepared (never measured: `dbrig run` refuses them). Finish with `dbrig cleanup {w}{tables} {on}` then `dbrig prepare {w} … {on}` again (`dbrig run {w} --prepare` does both)",
                w = args.workload.as_deref().unwrap_or_default()
            )
        }
    };
    let mut run = args.run.clone();
    // Decided now, so the stored trial says which data was made.
    run.rand_seed = run.resolved_seed();
    measure_load(
        LoadTest { of, replace: false },
        target,
        run,
        LoadCommand {
            store: &args.store,
            format: args.format,
            environment: args.environment.environment(),
            dry_run: args.dry_run,
            argv,
            interrupted,
        },
    )
    .await
}

/// A word as a shell takes it: as it is when it has nothing the shell reads, else quoted.
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Whether the (normalized) command line gives `option` (`--scale 0`, `--scale=0`).
fn given(argv: &[String], option: &str) -> bool {
    argv.iter()
        .any(|a| a == option || a.strip_prefix(option).is_some_and(|r| r.starts_with('=')))
}

/// What a load command shares besides the load: where it stores, how it prints.
pub struct LoadCommand<'a> {
    pub store: &'a StoreArgs,
    pub format: Format,
    pub environment: dbrig_exec::environment::EnvironmentFile,
    pub dry_run: bool,
    pub argv: &'a [String],
    /// Said on stderr when Ctrl-C stops the load: what is left and how to finish.
    pub interrupted: String,
}

/// `dbrig prepare` and `dbrig tpch load`: the load as the one trial of a one-cell plan,
/// measured, stored and printed as every kind is (`dbrig report` shows it again).
pub async fn measure_load(
    load: LoadTest,
    target: Target,
    run: RunOptions,
    c: LoadCommand<'_>,
) -> Result<ExitCode> {
    let plan = Plan::single(SingleCommand {
        workload: WorkloadKind::new(dbrig_workload::kinds::Load(load)),
        configuration: Configuration::external("default", target),
        server: None,
        run,
        prepare: false,
        environment: c.environment,
    })?;
    if c.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut observer = ConsoleObserver::loading("loading");
    let outcome = console::measure(plan, c.store, c.argv, false, &observer).await;
    observer.finish_steps();
    let outcome = outcome?;
    if outcome.status == dbrig_store::RunStatus::Interrupted {
        eprintln!("{}", c.interrupted);
        // The run is recorded (interrupted). Exit now: the abandoned loaders' threads (row
        // generators, SQLite's connection thread) would hold the runtime's shutdown until
        // their current batch is done; the server ends their statements with the process.
        std::process::exit(console::EXIT_INTERRUPTED.into());
    }
    crate::report_cmd::print_single(&outcome.store, outcome.run, c.format)?;
    Ok(console::exit_code(&outcome))
}

pub async fn cleanup(args: WorkloadArgs) -> Result<ExitCode> {
    let target = resolve_target(&args.connection, &args.store)?;
    if args.workload.as_deref() == Some(PGBENCH_INIT) {
        let dropped =
            dbrig_workload::script::init::cleanup(&target, &args.run.connect_options()).await?;
        if dropped.is_empty() {
            outln!("Nothing to drop on {target}: no table of pgbench-init exists")?;
        } else {
            outln!("Dropped {} on {target}", dropped.join(", "))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.workload.as_deref() == Some(dbrig_workload::tpcc::NAME) {
        let r = dbrig_workload::tpcc::cleanup(&target, &args.run.connect_options()).await?;
        if args.format == Format::Json {
            crate::out::text(&dbrig_report::json_text(&serde_json::json!({
                "workload": dbrig_workload::tpcc::NAME,
                "target": target.to_string(),
                "dropped": r.dropped,
            })))?;
        } else if r.dropped.is_empty() {
            outln!("Nothing to drop on {target}: no table of tpcc exists")?;
        } else {
            outln!("Dropped {} on {target}", r.dropped.join(", "))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.workload.as_deref() == Some(SQL_BENCH) {
        let r =
            dbrig_workload::sqlbench::home::cleanup(&target, &args.run.connect_options()).await?;
        if args.format == Format::Json {
            crate::out::text(&dbrig_report::json_text(&serde_json::json!({
                "workload": SQL_BENCH,
                "target": target.to_string(),
                "dropped_database": r.database,
                "tables": r.tables,
            })))?;
        } else if let Some(db) = &r.database {
            outln!(
                "Dropped database {db} (sql-bench's, with {} table(s) the suite left{}) on {target}",
                r.tables.len(),
                if r.tables.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.tables.join(", "))
                }
            )?;
        } else {
            outln!(
                "Nothing to drop on {target}: no database of sql-bench's ({}) exists",
                dbrig_workload::sqlbench::home::database_name(&target)?
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let workload = workload_of(&args)?;
    if let Workload::Lua(l) = &workload {
        return lua_command(l, "cleanup", &target, &args).await;
    }
    let Workload::Oltp(oltp) = &workload else {
        return Err(anyhow!(
            "pgbench scripts have nothing to clean up: `dbrig cleanup {PGBENCH_INIT}` drops pgbench's tables"
        ));
    };
    let report = oltp
        .cleanup(&target, &args.run.connect_options(), args.run.threads)
        .await?;
    if args.format == Format::Json {
        crate::out::text(&dbrig_report::json_text(&serde_json::json!({
            "workload": workload.name(),
            "target": target.to_string(),
            "dropped": report.dropped,
        })))?;
    } else if report.dropped.is_empty() {
        outln!(
            "Nothing to drop on {target}: no table of {} exists",
            workload.name()
        )?;
    } else {
        outln!("Dropped {} on {target}", report.dropped.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `dbrig prepare|cleanup FILE.lua`: the script's command (sysbench's `sysbench FILE.lua
/// prepare`), its output (the script's `print`s) on stdout.
/// `dbrig prewarm FILE.lua`: the script's prewarm command (sysbench's; dbrig's built-in
/// workloads have none).
pub async fn prewarm(args: WorkloadArgs) -> Result<ExitCode> {
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = workload_of(&args)?;
    let Workload::Lua(l) = &workload else {
        return Err(anyhow!(
            "prewarm is a command of sysbench Lua scripts (FILE.lua); {} has none",
            workload.name()
        ));
    };
    lua_command(l, "prewarm", &target, &args).await
}

/// `dbrig NAME FILE.lua`: a command the script declares in `sysbench.cmdline.commands`.
pub async fn script_command(a: crate::args::ScriptCommandArgs) -> Result<ExitCode> {
    let args = a.workload;
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = workload_of(&args)?;
    let Workload::Lua(l) = &workload else {
        return Err(anyhow!(
            "{} is a command of a sysbench Lua script (FILE.lua), not of {}",
            a.command,
            workload.name()
        ));
    };
    lua_command(l, &a.command, &target, &args).await
}

async fn lua_command(
    l: &dbrig_workload::LuaWorkload,
    command: &str,
    target: &dbrig_driver::Target,
    args: &WorkloadArgs,
) -> Result<ExitCode> {
    eprintln!("dbrig: {command} of {} on {target}", l.path().display());
    let connect = args.run.connect_options();
    match command {
        "prepare" => l.prepare(target, &connect, &args.run).await?,
        "cleanup" => l.cleanup(target, &connect, &args.run).await?,
        _ => l.command(command, target, &connect, &args.run).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `dbrig list --script FILE.lua`: the options the script declares.
pub fn list_script(file: &str, format: Format) -> Result<ExitCode> {
    let l = dbrig_workload::LuaWorkload::new(dbrig_workload::LuaOptions {
        script: file.to_owned(),
        script_options: Vec::new(),
    })?;
    let opts = dbrig_workload::lua::describe_options(&l);
    if format == Format::Json {
        crate::out::text(&dbrig_report::json_text(&serde_json::json!({
            "script": l.path().display().to_string(),
            "options": opts.iter().map(|(n, h, d)| serde_json::json!({
                "name": format!("--{n}"),
                "help": h,
                "default": d,
            })).collect::<Vec<_>>(),
        })))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{} options:", l.path().display())?;
    for (name, help, default) in opts {
        let default = if default.is_empty() {
            String::new()
        } else {
            format!(" (default: {default})")
        };
        outln!("  --{name:<22} {help}{default}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `dbrig run WORKLOAD`: a one-cell plan through the one executor; `dbrig run PLAN.toml`: the
/// plan file's matrix through the same executor.
pub async fn run(args: WorkloadArgs, argv: &[String]) -> Result<ExitCode> {
    if let Some(w) = args.workload.as_deref()
        && !dbrig_workload::lua::is_script_name(w)
        && (w.ends_with(".toml") || Path::new(w).is_file())
    {
        return run_plan(&args, w, argv).await;
    }
    let target = resolve_target(&args.connection, &args.store)?;
    let workload = workload_of(&args)?;
    if args.prepare && matches!(workload, Workload::Lua(_)) {
        return Err(anyhow!(
            "--prepare cannot tell whether a script's tables exist: run `dbrig prepare {}` first",
            args.workload.as_deref().unwrap_or_default()
        ));
    }
    args.run.validate().map_err(|e| anyhow!(e))?;
    let mut run = args.run.clone();
    // Decided now, so the header printed before the run and the stored trial agree.
    run.rand_seed = run.resolved_seed();
    let plan = Plan::single(SingleCommand {
        workload: workload.clone().into_kind(),
        configuration: Configuration::external("default", target.clone()),
        server: None,
        run: run.clone(),
        prepare: args.prepare,
        environment: args.environment.environment(),
    })?;
    if args.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = args.format == Format::Text;
    if args.format == Format::Json {
        dbrig_workload::lua::script_output_to_stderr();
    }
    // Refused before the header, when the clients cannot have their files.
    if let Some(note) = dbrig_exec::executor::room_for_files(&plan)? {
        eprintln!("dbrig: {note}");
    }
    if text {
        print_header(workload.name(), &target.to_string(), &run)?;
    }
    // Samples are taken every second anyway (and stored); lines are printed only when asked.
    // With --format json stdout carries one JSON object: the lines go to stderr.
    let observer = if run.report_interval > 0.0 {
        ConsoleObserver::single().with_intervals(run.percentile, !text)
    } else {
        ConsoleObserver::single()
    };
    let outcome = console::measure(plan, &args.store, argv, false, &observer).await?;
    if observer.printed_intervals() {
        outln!()?;
    }
    crate::report_cmd::print_single_with(&outcome.store, outcome.run, args.format, args.histogram)?;
    Ok(console::exit_code(&outcome))
}

/// What sysbench prints before it runs (and dbrig's seed and key distribution).
fn print_header(workload: &str, target: &str, run: &RunOptions) -> Result<()> {
    outln!(
        "dbrig {} — {workload} on {target}\nRunning with {} client(s), {}, {} keys, seed {}\n",
        dbrig_exec::VERSION,
        run.threads,
        run.schedule_text(),
        run.key_distribution().describe(),
        run.rand_seed,
    )
}

async fn run_plan(args: &WorkloadArgs, file: &str, argv: &[String]) -> Result<ExitCode> {
    let password = dbrig_exec::plan::CommandLinePassword {
        env: args.connection.password_env.clone(),
        file: args.connection.password_file.clone(),
    };
    let (plan, took) = dbrig_exec::plan::load_with_password(
        Path::new(file),
        &args.plan.defines,
        &args.plan.sets,
        &password,
    )?;
    if let (Some(option), false) = (password.option(), took.is_empty()) {
        eprintln!(
            "dbrig: {option}: the password of configuration(s) {} (those without a password of their own)",
            took.join(", ")
        );
    }
    if args.dry_run {
        console::print_dry_run(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    // Said before hours of trials, not only in the report after them.
    if let Some(w) = plan.verdict_warning() {
        eprintln!("dbrig: note: {w}");
    }
    let baseline = plan.baseline.clone();
    // The plan's HTML page goes to OUT, wherever the results database is (`--results`).
    console::check_writable_folder(&args.store.out, "the plan's HTML page", "--out", true)?;
    let observer = ConsoleObserver::plan(&plan, &args.store.out);
    let outcome = console::measure(plan, &args.store, argv, args.plan.resume, &observer).await?;
    crate::report_cmd::print_plan(&outcome.store, outcome.run, &baseline, &args.store.out)?;
    let t = &outcome.tally;
    eprintln!(
        "dbrig: run {}: {} trial(s) done, {} invalid, {} failed, {} already done (skipped); results in {}",
        outcome.run.0,
        t.done,
        t.invalid,
        t.failed,
        t.skipped,
        outcome.store.path().display()
    );
    Ok(console::exit_code(&outcome))
}

pub fn list(format: Format) -> Result<ExitCode> {
    use clap::{Args, Command};
    let sections = [
        ("Run options", RunOptions::augment_args(Command::new("x"))),
        (
            "OLTP options",
            dbrig_workload::OltpOptions::augment_args(Command::new("x")),
        ),
        (
            "pgbench script options (--script / --builtin; prepare|cleanup pgbench-init)",
            dbrig_workload::ScriptOptions::augment_args(Command::new("x")),
        ),
        (
            "Connection options",
            crate::args::ConnectionArgs::augment_args(Command::new("x")),
        ),
        (
            "Environment options (recorded with the trial)",
            crate::args::EnvironmentArgs::augment_args(Command::new("x")),
        ),
        (
            "Output options",
            crate::args::StoreArgs::augment_args(Command::new("x")),
        ),
    ];
    // (section, [(option, help, possible values, defaults)])
    type Opt = (String, String, Vec<String>, Vec<String>);
    let options: Vec<(&str, Vec<Opt>)> = sections
        .iter()
        .map(|(title, cmd)| {
            let opts = cmd
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|arg| {
                    let long = arg.get_long()?.to_owned();
                    let default = arg
                        .get_default_values()
                        .iter()
                        .map(|v| v.to_string_lossy().into_owned())
                        .collect();
                    let possible: Vec<String> = arg
                        .get_possible_values()
                        .iter()
                        .map(|p| p.get_name().to_owned())
                        .collect();
                    let possible = if possible == ["true", "false"] {
                        Vec::new()
                    } else {
                        possible
                    };
                    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                    Some((long, help, possible, default))
                })
                .collect();
            (*title, opts)
        })
        .collect();
    if format == Format::Json {
        let v = serde_json::json!({
            "workloads": dbrig_workload::catalog().iter().map(|w| serde_json::json!({
                "name": w.name,
                "description": w.description,
                "aliases": w.aliases,
            })).collect::<Vec<_>>(),
            "plan_workloads": dbrig_workload::kinds::plan_only_kinds().iter().map(|(n, d)| serde_json::json!({
                "name": n,
                "description": d,
            })).collect::<Vec<_>>(),
            "options": options.iter().map(|(title, opts)| serde_json::json!({
                "section": title,
                "options": opts.iter().map(|(long, help, possible, default)| serde_json::json!({
                    "name": format!("--{long}"),
                    "help": help,
                    "values": possible,
                    "default": default,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        crate::out::text(&dbrig_report::json_text(&v))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("Workloads:")?;
    for w in dbrig_workload::catalog() {
        let aliases = if w.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also: {})", w.aliases.join(", "))
        };
        outln!("  {:<24}{}{}", w.name, w.description, aliases)?;
    }
    outln!(
        "\nIn plans also ([[workload]] name; options as `dbrig micro NAME --help`, or sf, queries, seed, refresh, streams … for TPC-H, queries or tpch for perfrun):"
    )?;
    for (name, description) in dbrig_workload::kinds::plan_only_kinds() {
        outln!("  {name:<24}{description}")?;
    }
    for (title, opts) in &options {
        outln!("\n{title}:")?;
        for (long, help, possible, default) in opts {
            let mut line = format!("  --{long:<22} {help}");
            if !possible.is_empty() {
                line.push_str(&format!(" [{}]", possible.join("|")));
            }
            if !default.is_empty() {
                line.push_str(&format!(" (default: {})", default.join(",")));
            }
            outln!("{line}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
