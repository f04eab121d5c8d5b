//! `dbrig perfrun`: query-by-query A/B of two servers (RQG's perfrun / perfreport, spec §6).
//!
//! `dbrig perfrun --a URL --b URL --queries DIR [--filter EXPR]` runs every query of the folder
//! (one query per file) cold then warm on each side — A cold, B cold, A warm, B warm — and
//! stores the executions as a run of kind `perfrun`: one cell per query, one trial per
//! execution (1 = A cold, 2 = B cold, 3 = A warm, 4 = B warm) with the measurements in the
//! trial's `extra`. A filter at collection keeps only the matching query/temperature pairs
//! (and queries with none are not stored); pairs where a side failed are always kept.
//! `dbrig perfrun report [RUN|latest] [--filter EXPR]` prints a stored run.
//!
//! The sides may instead be two configurations of a plan (`--plan FILE --a NAME --b NAME`):
//! external targets, or managed servers that perfrun starts (with the configuration's
//! parameters) and stops. The queries may instead be TPC-H's 22 (`--tpch`): validation
//! parameters, each side in its own dialect, multi-statement queries (Q15's view) with their
//! setup and teardown run untimed around the timed SELECT.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use dbrig_driver::{ConnectOptions, Connection, Target};
use dbrig_report::perfrun::{
    ExecutionRecord, Filter, Names, Pair, PerfRun, PerfRunOptions, RUN_KIND, Side, SideInfo, Sides,
    Temperature, perfrun_text,
};
use dbrig_server::HostFacts;
use dbrig_store::{NewCell, NewRun, NewTrial, RunId, RunKind, RunStatus, Store, TrialStatus};
use dbrig_workload::perfrun::{Execution, PerfSide};
use dbrig_workload::tpch;

use crate::cli::{ConnectionArgs, StoreArgs};
use crate::commands::{open_store, spec_key};
use crate::connection::{redacted_command_line, resolve_target};
use crate::environment::Servers;

#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct PerfrunArgs {
    #[command(subcommand)]
    pub command: Option<PerfrunCommand>,
    #[command(flatten)]
    pub collect: CollectArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum PerfrunCommand {
    /// Print a stored perfrun run: per query and cache temperature, the counters that differ.
    Report(PerfReportArgs),
}

/// Collect: run a folder of queries on two servers.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// Server A (first column; RQG's --dsn1): mysql://USER@HOST:PORT/DB or postgres://…
    #[arg(long = "a", value_name = "URL")]
    pub a: Option<String>,
    /// Server B (second column; RQG's --dsn2). Delta is B − A, Ratio B / A.
    #[arg(long = "b", value_name = "URL")]
    pub b: Option<String>,
    /// Folder of queries, one query per .sql file (in name order).
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Instead of a folder: the 22 TPC-H queries with their validation parameters, in each
    /// side's dialect (load the data on both sides first with `dbrig tpch load`).
    #[arg(long, conflicts_with = "queries")]
    pub tpch: bool,
    /// Take the sides from a plan: `--a` and `--b` then name two of its configurations
    /// (external targets, or managed servers that perfrun starts and stops).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// A value for the plan's `${NAME}` placeholders (repeatable; as `dbrig run --define`).
    #[arg(long = "define", value_name = "NAME=VALUE", requires = "plan")]
    pub defines: Vec<String>,
    /// Keep only matching query/temperature pairs, e.g.
    /// '(execution_time_a > 0.1 or execution_time_b > 0.1) and temperature == "warm"'.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Read server A's password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env_a: Option<String>,
    /// Read server B's password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env_b: Option<String>,
    /// Read server A's password from this file (chmod 600).
    #[arg(long, value_name = "PATH")]
    pub password_file_a: Option<PathBuf>,
    /// Read server B's password from this file (chmod 600).
    #[arg(long, value_name = "PATH")]
    pub password_file_b: Option<PathBuf>,
    /// Seconds to wait for each connection.
    #[arg(long, default_value_t = 10.0)]
    pub connect_timeout: f64,
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PerfReportArgs {
    /// Run id (see `dbrig runs`) or `latest` (the latest perfrun run).
    #[arg(default_value = "latest")]
    pub run: String,
    /// Show only matching query/temperature pairs (pairs where a side failed always show).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub async fn perfrun(args: PerfrunArgs, argv: &[String]) -> Result<ExitCode> {
    match args.command {
        Some(PerfrunCommand::Report(r)) => report(r),
        None => collect(args.collect, argv).await,
    }
}

fn report(args: PerfReportArgs) -> Result<ExitCode> {
    let path = args.store.results_path();
    if !path.exists() {
        bail!(
            "no results database at {}: run `dbrig perfrun` first, or pass --results PATH",
            path.display()
        );
    }
    let store = Store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let run = if args.run.eq_ignore_ascii_case("latest") {
        store
            .runs()?
            .into_iter()
            .filter(|r| r.kind.as_str() == RUN_KIND)
            .map(|r| r.id)
            .max()
            .ok_or_else(|| anyhow!("the results database holds no perfrun run yet"))?
    } else {
        RunId(
            args.run
                .parse()
                .map_err(|_| anyhow!("run {:?} is neither a run id nor `latest`", args.run))?,
        )
    };
    let data = PerfRun::load(&store, run)?;
    let filter = match &args.filter {
        Some(f) => {
            let names = data.names();
            let filter = Filter::parse(f, Some(&names)).context("invalid --filter")?;
            filter.check(&names).context("invalid --filter")?;
            Some(filter)
        }
        None => None,
    };
    print!("{}", perfrun_text(&data, filter.as_ref())?);
    Ok(ExitCode::SUCCESS)
}

/// A query of the folder (or of TPC-H), with what each side runs.
struct QueryFile {
    file: String,
    /// What reports show (side A's timed statement).
    sql: String,
    a: SideSql,
    b: SideSql,
}

/// One side's statements of a query: untimed setup, the timed statement, untimed teardown.
#[derive(Clone)]
struct SideSql {
    setup: Vec<String>,
    sql: String,
    teardown: Vec<String>,
}

impl SideSql {
    fn plain(sql: &str) -> Self {
        SideSql {
            setup: Vec::new(),
            sql: sql.to_owned(),
            teardown: Vec::new(),
        }
    }

    /// A multi-statement query: the last statement returning rows is timed.
    fn split(text: &str) -> Result<Self> {
        let statements = tpch::split_statements(text);
        let timed = statements
            .iter()
            .rposition(|s| tpch::queries::returns_rows(s))
            .ok_or_else(|| anyhow!("no statement returning rows in {text:?}"))?;
        Ok(SideSql {
            setup: statements[..timed].to_vec(),
            sql: statements[timed].clone(),
            teardown: statements[timed + 1..].to_vec(),
        })
    }

    /// Setup, the measured execution, teardown (run even after a failure).
    async fn run(&self, side: &mut PerfSide) -> Execution {
        for s in &self.setup {
            if let Err(e) = side.run_untimed(s).await {
                return Execution {
                    error: Some(format!("setup statement failed: {e}")),
                    ..Execution::default()
                };
            }
        }
        let e = side.execute(&self.sql).await;
        for s in &self.teardown {
            let _ = side.run_untimed(s).await;
        }
        e
    }
}

fn read_queries(dir: &Path) -> Result<Vec<QueryFile>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("--queries {}: cannot read the folder", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
            !name.starts_with('.') && name.ends_with(".sql")
        })
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p)
            .with_context(|| format!("cannot read query file {}", p.display()))?;
        let sql = text.trim().trim_end_matches(';').trim().to_owned();
        let file = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if sql.is_empty() {
            eprintln!("dbrig: warning: {file} is empty: skipped");
            continue;
        }
        out.push(QueryFile {
            file,
            a: SideSql::plain(&sql),
            b: SideSql::plain(&sql),
            sql,
        });
    }
    if out.is_empty() {
        bail!("--queries {}: no query files in it", dir.display());
    }
    Ok(out)
}

/// The TPC-H data a side holds: its dialect and scale factor (refusing a side without it).
async fn tpch_data(conn: &mut Connection, which: &str) -> Result<(dbrig_driver::Dialect, f64)> {
    tpch::check_loaded(conn)
        .await
        .with_context(|| format!("--tpch: server {which}"))?;
    let sf = tpch::detect_scale_factor(conn).await?;
    Ok((conn.dialect(), sf))
}

/// The 22 TPC-H queries, by number, with validation parameters, in each side's dialect.
fn tpch_queries(
    a: (dbrig_driver::Dialect, f64),
    b: (dbrig_driver::Dialect, f64),
) -> Result<Vec<QueryFile>> {
    let render = |(dialect, sf): (dbrig_driver::Dialect, f64), n: u32| -> Result<SideSql> {
        let set = tpch::QuerySet::builtin(dialect);
        let q = set
            .get(&n.to_string())
            .ok_or_else(|| anyhow!("internal: TPC-H query {n} missing"))?;
        let params = tpch::QueryParams::new(n, 0, sf, tpch::ParamMode::Validation);
        SideSql::split(&tpch::substitute(&q.template, &params))
    };
    (1..=22)
        .map(|n| {
            let a = render(a, n)?;
            Ok(QueryFile {
                file: format!("Q{n:02}"),
                sql: a.sql.clone(),
                b: render(b, n)?,
                a,
            })
        })
        .collect()
}

/// Two configurations of a plan as the sides; managed servers are started (and stopped when
/// the returned `Servers` is dropped).
fn plan_sides(args: &CollectArgs) -> Result<(Target, Target, Option<Servers>)> {
    let Some(path) = &args.plan else {
        bail!("internal: plan_sides without --plan");
    };
    let plan = crate::plan::load(path, &args.defines, &[])?;
    let names: Vec<&str> = plan
        .configurations
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let find = |name: &Option<String>, which: &str| {
        let name = name.as_deref().ok_or_else(|| {
            anyhow!(
                "--plan needs --{which} NAME, a configuration of the plan ({})",
                names.join(", ")
            )
        })?;
        plan.configurations
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| {
                anyhow!(
                    "--{which} {name}: no such configuration in {} (configurations: {})",
                    path.display(),
                    names.join(", ")
                )
            })
    };
    let (ca, cb) = (find(&args.a, "a")?, find(&args.b, "b")?);
    if let (Some(sa), Some(sb)) = (&ca.server, &cb.server)
        && sa == sb
        && ca.params != cb.params
    {
        bail!(
            "configurations {} and {} run managed server '{sa}' with different parameters; perfrun needs both sides up at once: define a second [[server]] for one of them",
            ca.name,
            cb.name
        );
    }
    let mut servers: Option<Servers> = None;
    let mut side = |c: &crate::plan::Configuration| -> Result<Target> {
        match (&c.target, &c.server) {
            (Some(t), _) => Ok(t.clone()),
            (None, Some(name)) => {
                let s = servers.get_or_insert_with(|| {
                    Servers::new(&args.store.out, &plan.servers, &plan.environment)
                });
                eprintln!(
                    "dbrig: starting managed server {name} for configuration {}",
                    c.name
                );
                Ok(s.ensure(name, &c.params, false, false)?.0)
            }
            (None, None) => bail!("configuration '{}' has no target", c.name),
        }
    };
    let ta = side(ca)?;
    let tb = side(cb)?;
    Ok((ta, tb, servers))
}

/// The command line as stored: `--a`/`--b` URLs redacted like `--target`.
fn redact_argv(argv: &[String]) -> Vec<String> {
    let redact = |url: &str| {
        Target::parse(url)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| "***".into())
    };
    let mut out = Vec::with_capacity(argv.len());
    // With --plan, --a and --b are configuration names, not URLs.
    let names = argv
        .iter()
        .any(|a| a == "--plan" || a.starts_with("--plan="));
    let redact = |v: &str| if names { v.to_owned() } else { redact(v) };
    let mut next_is_url = false;
    for a in argv {
        if next_is_url {
            out.push(redact(a));
            next_is_url = false;
        } else if let Some(v) = a.strip_prefix("--a=") {
            out.push(format!("--a={}", redact(v)));
        } else if let Some(v) = a.strip_prefix("--b=") {
            out.push(format!("--b={}", redact(v)));
        } else {
            next_is_url = a == "--a" || a == "--b";
            out.push(a.clone());
        }
    }
    redacted_command_line(&out)
}

fn resolve_side(
    url: &Option<String>,
    password_env: &Option<String>,
    password_file: &Option<PathBuf>,
    which: &str,
) -> Result<Target> {
    let Some(url) = url else {
        bail!("dbrig perfrun needs --a URL and --b URL (and --queries DIR), or `report`");
    };
    let c = ConnectionArgs {
        target: Some(url.clone()),
        password_env: password_env.clone(),
        password_file: password_file.clone(),
        ..ConnectionArgs::default()
    };
    resolve_target(&c, &StoreArgs::default()).with_context(|| format!("server {which}"))
}

/// The stored form of an execution (what the report reads back).
fn extra(side: Side, temperature: Temperature, e: &Execution) -> serde_json::Value {
    let mut v = serde_json::to_value(e).unwrap_or_default();
    v["side"] = serde_json::json!(side);
    v["temperature"] = serde_json::json!(temperature);
    v
}

async fn collect(args: CollectArgs, argv: &[String]) -> Result<ExitCode> {
    if args.queries.is_none() && !args.tpch {
        bail!("dbrig perfrun needs --queries DIR (a folder with one query per file) or --tpch");
    }
    // Syntax first, before any server is reached; names once the servers told theirs.
    if let Some(f) = &args.filter {
        Filter::parse(f, None).context("invalid --filter")?;
    }
    let folder = match &args.queries {
        Some(dir) => Some(read_queries(dir)?),
        None => None,
    };
    // Managed servers (from --plan) live until the end of the collection.
    let (ta, tb, _servers) = match &args.plan {
        Some(_) => plan_sides(&args)?,
        None => (
            resolve_side(&args.a, &args.password_env_a, &args.password_file_a, "a")?,
            resolve_side(&args.b, &args.password_env_b, &args.password_file_b, "b")?,
            None,
        ),
    };
    let options = ConnectOptions {
        prepared: false,
        connect_timeout: Duration::from_secs_f64(args.connect_timeout.max(0.1)),
        ..ConnectOptions::default()
    };
    let mut conn_a = Connection::connect(&ta, &options)
        .await
        .with_context(|| format!("connecting to server a ({ta})"))?;
    let mut conn_b = Connection::connect(&tb, &options)
        .await
        .with_context(|| format!("connecting to server b ({tb})"))?;
    let queries = match folder {
        Some(q) => q,
        None => tpch_queries(
            tpch_data(&mut conn_a, "a").await?,
            tpch_data(&mut conn_b, "b").await?,
        )?,
    };
    let mut side_a = PerfSide::open(conn_a)
        .await
        .with_context(|| format!("reading the counters of server a ({ta})"))?;
    let mut side_b = PerfSide::open(conn_b)
        .await
        .with_context(|| format!("reading the counters of server b ({tb})"))?;
    for (which, side) in [("a", &side_a), ("b", &side_b)] {
        if let Some(note) = side.note() {
            eprintln!("dbrig: server {which}: {note}");
        }
    }
    let source = match &args.queries {
        Some(dir) => dir.display().to_string(),
        None => "TPC-H (22 queries, validation parameters)".to_owned(),
    };
    let info = |t: &Target, s: &PerfSide| SideInfo {
        target: t.to_string(),
        version: s.server_version().to_owned(),
        dialect: s.dialect().name().to_owned(),
        counters: s.counter_names().to_vec(),
    };
    let sides = Sides {
        a: info(&ta, &side_a),
        b: info(&tb, &side_b),
    };
    let names = Names::new(&sides);
    let filter = match &args.filter {
        Some(f) => {
            let filter = Filter::parse(f, Some(&names)).context("invalid --filter")?;
            filter.check(&names).context("invalid --filter")?;
            Some(filter)
        }
        None => None,
    };

    let run_name = match &args.queries {
        Some(dir) => dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
        None => "tpch".to_owned(),
    };
    let run_options = PerfRunOptions {
        sides: sides.clone(),
        queries: source.clone(),
        query_count: queries.len(),
        filter: args.filter.clone(),
    };
    let options_json = serde_json::json!({ "perfrun": run_options });
    let host = serde_json::to_value(HostFacts::collect(None)).unwrap_or_default();
    let command_line = redact_argv(argv);
    let mut store = open_store(&args.store)?;
    let run_id = store.begin_run(&NewRun {
        kind: RunKind::Other(RUN_KIND.into()),
        name: &run_name,
        started_at: SystemTime::now(),
        options: &options_json,
        host: &host,
        dbrig_version: env!("CARGO_PKG_VERSION"),
        command_line: &command_line,
        plan_text: None,
    })?;
    println!(
        "dbrig {} — perfrun of {} queries from {}\na: {ta}  {}\nb: {tb}  {}",
        env!("CARGO_PKG_VERSION"),
        queries.len(),
        source,
        sides.a.version,
        sides.b.version
    );
    let result = collect_queries(
        &mut store,
        run_id,
        &queries,
        &mut side_a,
        &mut side_b,
        &sides,
        &names,
        filter.as_ref(),
        &ta,
        &tb,
    )
    .await;
    side_a.close().await;
    side_b.close().await;
    let (stored, errors) = match result {
        Ok(x) => x,
        Err(e) => {
            store.finish_run(run_id, RunStatus::Failed, Some(&format!("{e:#}")))?;
            return Err(e);
        }
    };
    store.finish_run(run_id, RunStatus::Done, None)?;
    if filter.is_some() {
        println!(
            "{stored} of {} queries stored; {} filtered out by the filter",
            queries.len(),
            queries.len() - stored
        );
    }
    if errors > 0 {
        eprintln!("dbrig: warning: {errors} execution(s) failed (shown in the report)");
    }
    let data = PerfRun::load(&store, run_id)?;
    println!();
    print!("{}", perfrun_text(&data, None)?);
    println!("\nStored as run {} in {}", run_id.0, store.path().display());
    Ok(ExitCode::SUCCESS)
}

/// Run every query (A cold, B cold, A warm, B warm) and store the kept pairs; returns
/// (queries stored, failed executions).
#[allow(clippy::too_many_arguments)]
async fn collect_queries(
    store: &mut Store,
    run_id: RunId,
    queries: &[QueryFile],
    side_a: &mut PerfSide,
    side_b: &mut PerfSide,
    sides: &Sides,
    names: &Names,
    filter: Option<&Filter>,
    ta: &Target,
    tb: &Target,
) -> Result<(usize, usize)> {
    let target_text = format!("a={ta} b={tb}");
    let (mut stored, mut errors) = (0, 0);
    for q in queries {
        // (trial number, side, temperature, execution, started, finished)
        let mut runs = Vec::with_capacity(4);
        for (trial, side, temperature) in [
            (1, Side::A, Temperature::Cold),
            (2, Side::B, Temperature::Cold),
            (3, Side::A, Temperature::Warm),
            (4, Side::B, Temperature::Warm),
        ] {
            let started = SystemTime::now();
            let e = match side {
                Side::A => q.a.run(side_a).await,
                Side::B => q.b.run(side_b).await,
            };
            if e.error.is_some() {
                errors += 1;
            }
            runs.push((trial, side, temperature, e, started, SystemTime::now()));
        }
        let records: Vec<ExecutionRecord> = runs
            .iter()
            .map(|(_, side, t, e, _, _)| serde_json::from_value(extra(*side, *t, e)))
            .collect::<Result<_, _>>()
            .context("internal: an execution does not read back")?;
        let mut keep = Vec::new();
        for t in Temperature::ALL {
            let find = |side| {
                records
                    .iter()
                    .find(|r| r.side == side && r.temperature == t)
            };
            let pair = Pair {
                file: &q.file,
                sql: &q.sql,
                temperature: t,
                a: find(Side::A),
                b: find(Side::B),
            };
            let matched = match filter {
                Some(f) if !pair.has_error() => f.matches(&pair, names)?,
                _ => true,
            };
            if matched {
                keep.push(t);
            }
        }
        let time = |e: &Execution| {
            e.time_us
                .map(|us| format!("{:.3}s", (us / 1000) as f64 / 1000.0))
                .unwrap_or_else(|| "error".into())
        };
        println!(
            "{}: cold {} / {}, warm {} / {}{}",
            q.file,
            time(&runs[0].3),
            time(&runs[1].3),
            time(&runs[2].3),
            time(&runs[3].3),
            if keep.is_empty() {
                " (filtered out)"
            } else {
                ""
            }
        );
        if keep.is_empty() {
            continue;
        }
        let cell_options = serde_json::json!({ "file": q.file, "sql": q.sql });
        let cell = store.ensure_cell(
            run_id,
            &NewCell {
                cell_key: &spec_key(&cell_options),
                configuration: "a/b",
                workload: &q.file,
                clients: 1,
                options: &cell_options,
                target: &target_text,
            },
        )?;
        for (trial, side, t, e, started, finished) in &runs {
            if !keep.contains(t) {
                continue;
            }
            let extra = extra(*side, *t, e);
            store.record_trial(
                cell,
                &NewTrial {
                    trial: *trial,
                    status: if e.error.is_some() {
                        TrialStatus::Failed
                    } else {
                        TrialStatus::Done
                    },
                    reason: e.error.as_deref(),
                    server_version: Some(&sides.get(*side).version),
                    started_at: *started,
                    finished_at: *finished,
                    measurements: None,
                    extra: Some(&extra),
                },
            )?;
        }
        stored += 1;
    }
    Ok((stored, errors))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_urls_are_redacted_in_the_stored_command_line() {
        let argv = [
            "dbrig",
            "perfrun",
            "--a",
            "mysql://u:pw1@h/db",
            "--b=postgres://u:pw2@h/db",
        ]
        .map(String::from);
        let out = redact_argv(&argv).join(" ");
        assert!(!out.contains("pw1") && !out.contains("pw2"), "{out}");
        assert!(out.contains("--a mysql://u:***@h:3306/db"), "{out}");
    }

    #[test]
    fn query_folder_is_read_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.sql"), "SELECT 2;\n").unwrap();
        std::fs::write(dir.path().join("a.sql"), "SELECT 1").unwrap();
        std::fs::write(dir.path().join(".hidden.sql"), "SELECT 3").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a query").unwrap();
        std::fs::write(dir.path().join("empty.sql"), "\n").unwrap();
        let q = read_queries(dir.path()).unwrap();
        let got: Vec<(&str, &str)> = q
            .iter()
            .map(|q| (q.file.as_str(), q.sql.as_str()))
            .collect();
        assert_eq!(got, [("a.sql", "SELECT 1"), ("b.sql", "SELECT 2")]);
    }
}
