//! Plan files: a matrix of configurations × workloads × client counts × trials, resolved into
//! a flat, ordered list of trials before anything runs.
//!
//! ```toml
//! name = "two-builds"
//! trials = 3
//! duration = 10          # seconds per trial
//! warmup = 2
//! clients = [1, 4, 16]
//! order = "interleaved"  # A B A B …; or "shuffled" with `seed`
//! baseline = "A"
//! [run]                  # run options for every trial (rand-type, report-interval, …)
//! [report]
//! noise-band = 2.0       # percent: changes within ±2 % are not called (default 1)
//! correction = "holm"    # many comparisons: "fdr" (Benjamini-Hochberg, default) or "holm"
//! [[configuration]]
//! name = "A"
//! target = "mysql://root@127.0.0.1:3306/test"
//! [[workload]]
//! name = "oltp_read_only"
//! [workload.options]     # the workload's own options
//! table-size = 10000
//! [[workload]]
//! name = "scan_filter"   # a micro-benchmark: memory_load, scan_filter, tmp_groupby
//! [workload.options]
//! rows = 100000
//! [[workload]]
//! name = "tpch-power"    # TPC-H: the load is the prepare step, each trial one power test
//! [workload.options]
//! sf = 0.01
//! ```
//!
//! Only OLTP workloads use the client counts, duration and warm-up; a micro-benchmark or
//! TPC-H workload has one cell per configuration (shown with 1 client) whose trials each run
//! the benchmark once (see `dbrig_workload::WorkloadKind`).
//!
//! `${NAME}` placeholders are filled from `--define NAME=VALUE`, then the environment; any
//! setting can be overridden with `--set path.to.key=value`. Errors name the file, the line
//! and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dbrig_core::limits;
use dbrig_driver::Target;
use dbrig_store::RunKind;
use dbrig_workload::{RunOptions, WorkloadKind};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::environment::{EnvironmentFile, Hooks, Lifecycle};
use crate::error::{ExecError, Result, plan as plan_error_msg};
use crate::target::{TargetSpec, resolve as resolve_target};

/// `Err(ExecError::Plan(format!(…)))`.
macro_rules! bail {
    ($($t:tt)*) => {
        return Err(plan_error_msg(format!($($t)*)))
    };
}

/// `ExecError::Plan(format!(…))`.
macro_rules! anyhow {
    ($($t:tt)*) => {
        plan_error_msg(format!($($t)*))
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Trial 1 of every cell, configurations alternating innermost (A B A B …), then trial 2…
    #[default]
    Interleaved,
    /// Every (cell, trial) in a seeded random order.
    Shuffled,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigurationFile {
    pub name: String,
    /// Target URL (redacted everywhere it is shown); or `server` for a managed server.
    #[serde(default)]
    pub target: Option<String>,
    /// A `[[server]]` dbrig starts and stops itself.
    #[serde(default)]
    pub server: Option<String>,
    /// Extra startup parameters of the managed server for this configuration (`key=value`):
    /// two configurations can differ by one setting.
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default)]
    pub password_env: Option<String>,
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// Run options for this configuration only (e.g. `ps-mode`).
    #[serde(default)]
    pub run: Option<toml::Table>,
    /// Shell and SQL hooks of this configuration only, run after the plan's own
    /// (`[configuration.hooks]`, same keys as `[environment.hooks]`).
    #[serde(default)]
    pub hooks: Option<Hooks>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadFile {
    /// The workload (`dbrig list`); a sysbench Lua script may be given as `script` instead.
    #[serde(default)]
    pub name: String,
    /// A sysbench Lua script (`script = "oltp_read_write.lua"`, a path relative to the plan
    /// file or one of sysbench's bundled scripts); `options` are the script's declared options.
    #[serde(default)]
    pub script: Option<String>,
    /// Names this workload's cells in every report: two workloads of the same name whose
    /// options differ (`select_random_points` with 10 and 100 points) need one each.
    #[serde(default)]
    pub label: Option<String>,
    /// The workload's options (`dbrig list` shows them).
    #[serde(default)]
    pub options: Option<toml::Table>,
    /// Run options for this workload only.
    #[serde(default)]
    pub run: Option<toml::Table>,
    /// Prepare the tables before the first trial when they are missing.
    #[serde(default = "yes")]
    pub prepare: bool,
    /// Server lifecycle for this workload (overrides `[environment] lifecycle`).
    #[serde(default)]
    pub lifecycle: Option<Lifecycle>,
    /// The configurations this workload runs on (default: all), as the DBT-3 launcher ran a
    /// query set on the configurations whose files named it; reports show `-` elsewhere.
    #[serde(default)]
    pub configurations: Option<Vec<String>>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PlanFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(
        default = "three",
        deserialize_with = "limits::de::<limits::Trials, _>"
    )]
    pub trials: u32,
    /// Seconds per trial (sets the run option `time`).
    #[serde(default, deserialize_with = "limits::de_opt::<limits::RunSeconds, _>")]
    pub duration: Option<f64>,
    /// Seconds of warm-up per trial (sets the run option `warmup`).
    #[serde(
        default,
        deserialize_with = "limits::de_opt::<limits::WarmupSeconds, _>"
    )]
    pub warmup: Option<f64>,
    #[serde(deserialize_with = "limits::de_vec::<limits::Clients, _>")]
    pub clients: Vec<u32>,
    #[serde(default)]
    pub order: Order,
    #[serde(default, deserialize_with = "limits::de_opt::<limits::Seed, _>")]
    pub seed: Option<u64>,
    #[serde(default)]
    pub baseline: Option<String>,
    #[serde(default)]
    pub run: Option<toml::Table>,
    pub configuration: Vec<ConfigurationFile>,
    pub workload: Vec<WorkloadFile>,
    /// Servers dbrig manages (see `dbrig server`).
    #[serde(default)]
    pub server: Vec<dbrig_server::ServerDef>,
    #[serde(default)]
    pub environment: EnvironmentFile,
    /// How the plan's report calls changes (`dbrig report` options override it).
    #[serde(default)]
    pub report: ReportFile,
}

/// `[report]`: how the plan's report calls changes. Stored with the resolved plan, so
/// `dbrig report RUN` calls them the same way later.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ReportFile {
    /// Changes whose interval reaches into ±this many percent are not called (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_band: Option<f64>,
    /// How the p-values of the report's many comparisons are adjusted: `fdr`
    /// (Benjamini-Hochberg, the default) or `holm` (Holm-Bonferroni).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<dbrig_core::stats::Correction>,
}

fn three() -> u32 {
    3
}

/// One configuration, resolved.
#[derive(Debug, Clone)]
pub struct Configuration {
    pub name: String,
    /// External target; `None` for a managed server (its port is known only once started).
    pub target: Option<Target>,
    /// Managed server name and this configuration's extra startup parameters.
    pub server: Option<String>,
    pub params: dbrig_server::Params,
    /// This configuration's own hooks (after the plan's).
    pub hooks: Option<Hooks>,
}

impl Configuration {
    /// A configuration on an external target.
    pub fn external(name: &str, target: Target) -> Self {
        Configuration {
            name: name.to_owned(),
            target: Some(target),
            server: None,
            params: dbrig_server::Params::new(),
            hooks: None,
        }
    }

    /// A configuration on a managed server (defined by one of the plan's `servers`).
    pub fn managed(name: &str, server: &str, params: dbrig_server::Params) -> Self {
        Configuration {
            name: name.to_owned(),
            target: None,
            server: Some(server.to_owned()),
            params,
            hooks: None,
        }
    }

    /// How the configuration is shown and keyed: the redacted URL, or `server:NAME [params]`.
    pub fn describe(&self) -> String {
        match (&self.target, &self.server) {
            (Some(t), _) => t.to_string(),
            (None, Some(s)) if self.params.is_empty() => format!("server:{s}"),
            (None, Some(s)) => format!("server:{s} {}", self.params.to_strings().join(" ")),
            (None, None) => "?".into(),
        }
    }
}

/// One cell: configuration × workload × clients, with everything a trial needs.
#[derive(Debug, Clone)]
pub struct Cell {
    pub index: usize,
    pub configuration: usize,
    pub workload: WorkloadKind,
    pub workload_index: usize,
    /// The workload's label, which names its cells in reports instead of its kind's name.
    pub label: Option<String>,
    pub prepare: bool,
    pub lifecycle: Lifecycle,
    /// The workload changes data (fresh-data lifecycle restores before its trials).
    pub writes: bool,
    pub clients: u32,
    pub run: RunOptions,
    /// Hash of the full specification: what resume matches on.
    pub key: String,
    /// The specification the key was computed from (stored with the cell).
    pub spec: serde_json::Value,
}

impl Cell {
    /// What reports call the cell's workload: its label, else its kind's name.
    pub fn workload_name(&self) -> &str {
        self.label.as_deref().unwrap_or(self.workload.name())
    }
}

/// A whole plan, ready to execute.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    /// What the run is stored as: a plan, or the kind a single command measures.
    pub kind: RunKind,
    /// The plan file (`None` for a single command's plan).
    pub path: Option<PathBuf>,
    /// The plan text after placeholder substitution (stored with the run).
    pub text: Option<String>,
    pub trials: u32,
    pub configurations: Vec<Configuration>,
    pub baseline: String,
    pub cells: Vec<Cell>,
    /// (cell index, trial number) in execution order.
    pub schedule: Vec<(usize, u32)>,
    pub resolved: serde_json::Value,
    pub servers: Vec<dbrig_server::ServerDef>,
    pub environment: EnvironmentFile,
    /// A single command's plan: refuse before anything is recorded when a cell cannot run
    /// (TPC-H data missing, controls naming unknown queries…), and let a power test's
    /// restart controls on an external target be an error (a plan leaves them out instead).
    pub single: bool,
}

/// What a single measuring command (`dbrig run WORKLOAD`, `micro`, `tpch power|throughput`)
/// asks for: one workload on one configuration, one trial.
#[derive(Debug, Clone)]
pub struct SingleCommand {
    pub workload: WorkloadKind,
    pub configuration: Configuration,
    /// The definition of the configuration's managed server, if it has one.
    pub server: Option<dbrig_server::ServerDef>,
    pub run: RunOptions,
    /// Create what the trial needs when it is missing (`run --prepare`).
    pub prepare: bool,
    pub environment: EnvironmentFile,
}

impl Plan {
    /// How many comparisons with the baseline the plan's report makes, at least: one per
    /// OLTP cell of another configuration (a workload × client count), and one per other
    /// cell of any other kind, whose items (queries, key types, tests) each add one more that
    /// only the results tell. A perfrun's cells are compared query by query in their own
    /// report, not here.
    pub fn comparisons_at_least(&self) -> (usize, bool) {
        let baseline = self
            .configurations
            .iter()
            .position(|c| c.name == self.baseline);
        let mut exact = true;
        let count = self
            .cells
            .iter()
            .filter(|c| Some(c.configuration) != baseline)
            .filter(|c| c.workload.result_kind() != dbrig_core::results::ResultKind::Perfrun)
            .inspect(|c| exact &= c.workload.result_kind() == dbrig_core::results::ResultKind::Oltp)
            .count();
        (count, exact)
    }

    /// A line for the start of a plan (and its dry run) when its trials a side cannot call a
    /// change seen in one of its comparisons on its own: the smallest p-value the exact test
    /// allows at that count, times the number of comparisons (what either correction makes of
    /// it), is not below 0.05. `None` when they can, or the plan has nothing to compare.
    pub fn verdict_warning(&self) -> Option<String> {
        const ALPHA: f64 = 0.05;
        let (m, exact) = self.comparisons_at_least();
        if m == 0 {
            return None;
        }
        let needed = dbrig_core::stats::trials_for_verdict(m, ALPHA)?;
        let trials = self.trials as usize;
        if trials >= needed {
            return None;
        }
        let floor = (dbrig_core::stats::smallest_p(trials, trials) * m as f64).min(1.0);
        Some(format!(
            "plan '{}': with {trials} trial(s) a side a change in one of its {}{m} comparison(s) \
             cannot be called on its own (the smallest p-value {trials} a side allow, corrected \
             for {m} comparisons, is {floor:.3}, not below {ALPHA}); {needed} a side can: \
             `--set trials={needed}`",
            self.name,
            if exact { "" } else { "at least " },
        ))
    }

    /// The one-cell plan of a single measuring command.
    pub fn single(cmd: SingleCommand) -> Result<Plan> {
        let kind = RunKind::from(cmd.workload.result_kind());
        Plan::from_parts(PlanParts {
            name: cmd.workload.name().to_owned(),
            kind,
            configurations: vec![cmd.configuration],
            workloads: vec![PlanWorkload {
                workload: cmd.workload,
                label: None,
                prepare: cmd.prepare,
                lifecycle: None,
                run: cmd.run,
            }],
            servers: cmd.server.into_iter().collect(),
            environment: cmd.environment,
        })
    }

    /// A plan of one workload on several configurations, one trial each (perfrun's A and B).
    pub fn compare(
        name: &str,
        kind: RunKind,
        configurations: Vec<Configuration>,
        servers: Vec<dbrig_server::ServerDef>,
        workload: WorkloadKind,
        run: RunOptions,
        environment: EnvironmentFile,
    ) -> Result<Plan> {
        Plan::from_parts(PlanParts {
            name: name.to_owned(),
            kind,
            configurations,
            workloads: vec![PlanWorkload {
                workload,
                label: None,
                prepare: false,
                lifecycle: None,
                run,
            }],
            servers,
            environment,
        })
    }

    fn from_parts(p: PlanParts) -> Result<Plan> {
        let baseline = p.configurations[0].name.clone();
        let mut cells = Vec::new();
        for (ci, conf) in p.configurations.iter().enumerate() {
            for (wi, w) in p.workloads.iter().enumerate() {
                let mut run = w.run.clone();
                if !w.workload.is_timed() {
                    run.warmup = 0.0;
                }
                run.validate().map_err(plan_error_msg)?;
                cells.push(make_cell(
                    cells.len(),
                    ci,
                    conf,
                    wi,
                    w,
                    run,
                    p.environment.lifecycle,
                ));
            }
        }
        let schedule = cells.iter().map(|c| (c.index, 1)).collect();
        let resolved = serde_json::json!({
            "name": p.name,
            "trials": 1,
            "baseline": baseline,
            "configurations": p.configurations.iter().map(|c| serde_json::json!({"name": c.name, "target": c.describe()})).collect::<Vec<_>>(),
            "servers": p.servers,
            "environment": p.environment,
            "cells": cells.iter().map(|c| &c.spec).collect::<Vec<_>>(),
        });
        Ok(Plan {
            name: p.name,
            kind: p.kind,
            path: None,
            text: None,
            trials: 1,
            configurations: p.configurations,
            baseline,
            cells,
            schedule,
            resolved,
            servers: p.servers,
            environment: p.environment,
            single: true,
        })
    }

    /// After a single command's preflight filled in what only the target knows (the
    /// throughput test's stream count): the cells' stored specification and key again.
    pub fn respec(&mut self) {
        for c in &mut self.cells {
            let conf = &self.configurations[c.configuration];
            c.spec = cell_spec(conf, &c.workload, c.label.as_deref(), &c.run);
            c.key = spec_key(&c.spec);
        }
        self.resolved["cells"] =
            serde_json::json!(self.cells.iter().map(|c| &c.spec).collect::<Vec<_>>());
    }
}

/// What [`Plan::from_parts`] builds a plan from.
struct PlanParts {
    name: String,
    kind: RunKind,
    configurations: Vec<Configuration>,
    workloads: Vec<PlanWorkload>,
    servers: Vec<dbrig_server::ServerDef>,
    environment: EnvironmentFile,
}

struct PlanWorkload {
    workload: WorkloadKind,
    label: Option<String>,
    prepare: bool,
    lifecycle: Option<Lifecycle>,
    run: RunOptions,
}

/// A cell's stored specification: everything that makes it this cell (resume matches on its
/// hash). A benchmark that decides its own length keeps the plan's duration out of it, so
/// changing the duration does not make such cells new on `--resume`.
fn cell_spec(
    conf: &Configuration,
    workload: &WorkloadKind,
    label: Option<&str>,
    run: &RunOptions,
) -> serde_json::Value {
    let mut spec = serde_json::json!({
        "configuration": conf.name,
        "target": conf.describe(),
        "workload": workload.name(),
        "workload_options": workload.options_json(),
        "run": run,
    });
    if let Some(l) = label {
        spec["label"] = serde_json::json!(l);
    }
    if !workload.is_timed()
        && let Some(r) = spec["run"].as_object_mut()
    {
        for k in ["time", "warmup"] {
            r.remove(k);
        }
    }
    spec
}

fn make_cell(
    index: usize,
    ci: usize,
    conf: &Configuration,
    wi: usize,
    w: &PlanWorkload,
    run: RunOptions,
    lifecycle: Lifecycle,
) -> Cell {
    let spec = cell_spec(conf, &w.workload, w.label.as_deref(), &run);
    Cell {
        index,
        configuration: ci,
        workload: w.workload.clone(),
        workload_index: wi,
        label: w.label.clone(),
        prepare: w.prepare,
        lifecycle: w.lifecycle.unwrap_or(lifecycle),
        writes: w.workload.writes(),
        clients: run.threads,
        key: spec_key(&spec),
        spec,
        run,
    }
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

/// Fill `${NAME}` from the defines, then the environment; a placeholder with no value is an
/// error naming the file and line.
pub fn substitute(path: &Path, text: &str, defines: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    for (lineno, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| {
                anyhow!(
                    "{}:{}: unclosed '${{' placeholder",
                    path.display(),
                    lineno + 1
                )
            })?;
            let name = &after[..end];
            let value = defines.get(name).cloned().or_else(|| std::env::var(name).ok()).ok_or_else(|| {
                anyhow!(
                    "{}:{}: placeholder ${{{name}}} has no value: pass --define {name}=VALUE or set the environment variable {name}",
                    path.display(),
                    lineno + 1
                )
            })?;
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// `NAME=VALUE` pairs from `--define`.
pub fn parse_defines(defines: &[String]) -> Result<BTreeMap<String, String>> {
    defines
        .iter()
        .map(|d| {
            d.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
                .ok_or_else(|| anyhow!("--define {d}: expected NAME=VALUE"))
        })
        .collect()
}

/// Apply `--set path.to.key=value` to the parsed plan. `configuration.B.target` and
/// `workload.oltp_read_only.options.tables` address array entries by their `name`; numeric
/// segments address by position. The value is read as TOML (numbers, booleans, arrays) and
/// taken as a string when it is not valid TOML.
pub fn apply_set(root: &mut toml::Table, set: &str) -> Result<()> {
    let (path, raw) = set
        .split_once('=')
        .ok_or_else(|| anyhow!("--set {set}: expected path.to.key=value"))?;
    let value: toml::Value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_owned()));
    let segments: Vec<&str> = path.split('.').collect();
    let mut node = toml::Value::Table(std::mem::take(root));
    {
        let mut cur = &mut node;
        for (i, seg) in segments.iter().enumerate() {
            let last = i + 1 == segments.len();
            cur = match cur {
                toml::Value::Table(t) => {
                    if last {
                        t.insert((*seg).to_owned(), value.clone());
                        break;
                    }
                    t.entry((*seg).to_owned())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                }
                toml::Value::Array(items) => {
                    let pos = match seg.parse::<usize>() {
                        Ok(n) => Some(n),
                        Err(_) => items
                            .iter()
                            .position(|it| it.get("name").and_then(|n| n.as_str()) == Some(*seg)),
                    };
                    let pos = pos.filter(|p| *p < items.len()).ok_or_else(|| {
                        anyhow!(
                            "--set {path}: no entry '{seg}' in {}",
                            segments[..i].join(".")
                        )
                    })?;
                    if last {
                        items[pos] = value.clone();
                        break;
                    }
                    &mut items[pos]
                }
                _ => bail!("--set {path}: '{}' is not a table", segments[..i].join(".")),
            };
        }
    }
    if let toml::Value::Table(t) = node {
        *root = t;
    }
    Ok(())
}

/// A workload's option table as JSON, keys kebab-case (what `WorkloadKind::from_json` reads).
fn workload_options_json(options: Option<&toml::Table>) -> serde_json::Value {
    let mut merged = serde_json::Map::new();
    for (k, v) in options.into_iter().flatten() {
        merged.insert(
            k.replace('_', "-"),
            serde_json::to_value(v).unwrap_or_default(),
        );
    }
    serde_json::Value::Object(merged)
}

/// Merge the run option tables (later wins) and read them as [`RunOptions`]. An error is said
/// at the key it is about (the last table that sets it), placed by `at`.
fn run_options<'p>(
    layers: &[(Option<&'p toml::Table>, Vec<Seg<'p>>)],
    at: &dyn Fn(&[Seg<'p>]) -> String,
) -> Result<RunOptions> {
    let kebab = |t: &toml::Table| -> toml::Table {
        t.iter()
            .map(|(k, v)| (k.replace('_', "-"), v.clone()))
            .collect()
    };
    let mut merged = toml::Table::new();
    for (t, _) in layers {
        merged.extend(t.map(kebab).unwrap_or_default());
    }
    let one_line = |e: toml::de::Error| e.to_string().trim().replace('\n', " ");
    match toml::Value::Table(merged).try_into::<RunOptions>() {
        Ok(run) => Ok(run),
        Err(e) => {
            // Which key: the last table's key that fails on its own (each option's own
            // range, or a key RunOptions does not have).
            for (t, place) in layers.iter().rev() {
                for (k, v) in t.iter().flat_map(|t| t.iter()) {
                    let one = toml::Table::from_iter([(k.replace('_', "-"), v.clone())]);
                    if let Err(e) = toml::Value::Table(one).try_into::<RunOptions>() {
                        let mut p = place.clone();
                        p.push(Seg::Key(k.as_str()));
                        bail!("{}: run options: {k}: {}", at(&p), e.message());
                    }
                }
            }
            bail!("{}: run options: {}", at(&layers[0].1), one_line(e))
        }
    }
}

/// A path written in the plan file, relative to the plan file's folder (made absolute, so the
/// stored plan says which file it was).
fn beside(plan: &Path, p: &Path) -> PathBuf {
    let dir = plan.parent().unwrap_or(Path::new(""));
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    };
    std::path::absolute(&joined).unwrap_or(joined)
}

/// A plan's sysbench Lua script (`script = "FILE.lua"`, or a `name` ending in `.lua`): a file
/// beside the plan file, else (a bare name) one of sysbench's bundled scripts. A `.lua` name is
/// always a file, never dbrig's own workload of the same name; a `script` without `.lua` is
/// refused rather than guessed. `at` is where the plan file names it.
fn lua_script_path(plan: &Path, script: &str, at: &str) -> Result<String> {
    let script = script.trim();
    if !dbrig_workload::lua::is_script_name(script) {
        bail!(
            "{at}: script = \"{script}\" is not a Lua script (FILE.lua): for dbrig's own workload write name = \"{script}\", for a script give its file name with .lua"
        );
    }
    let near = beside(plan, Path::new(script));
    if near.is_file() {
        return Ok(near.display().to_string());
    }
    if Path::new(script).components().count() == 1
        && let Some(bundled) = dbrig_workload::lua::SYSBENCH_DIRS
            .iter()
            .map(|d| Path::new(d).join(script))
            .find(|p| p.is_file())
    {
        return Ok(bundled.display().to_string());
    }
    let own = script.trim_end_matches(".lua");
    let hint = if dbrig_workload::OltpKind::from_name(own).is_some() {
        format!(" (dbrig's own {own} is name = \"{own}\", without .lua)")
    } else {
        String::new()
    };
    bail!(
        "{at}: no Lua script {} (a relative path in a plan is relative to the plan file's folder), nor {script} among sysbench's scripts in {}{hint}",
        near.display(),
        dbrig_workload::lua::SYSBENCH_DIRS.join(", ")
    )
}

/// A password given on the command line to a whole plan: `dbrig run PLAN --password-env VAR`
/// or `--password-file PATH`.
#[derive(Debug, Clone, Default)]
pub struct CommandLinePassword {
    pub env: Option<String>,
    pub file: Option<PathBuf>,
}

impl CommandLinePassword {
    /// How the option was written, for messages: `--password-file PATH`.
    pub fn option(&self) -> Option<String> {
        match (&self.env, &self.file) {
            (Some(var), _) => Some(format!("--password-env {var}")),
            (None, Some(file)) => Some(format!("--password-file {}", file.display())),
            (None, None) => None,
        }
    }
}

/// Read, substitute, override and resolve a plan file.
pub fn load(path: &Path, defines: &[String], sets: &[String]) -> Result<Plan> {
    Ok(load_with_password(path, defines, sets, &CommandLinePassword::default())?.0)
}

/// [`load`], with the command line's password: as a single command's `--password-file` is the
/// password of its target, it is the password of every configuration whose target is a
/// MariaDB/MySQL or PostgreSQL server with no password of its own (none in its URL, no
/// `password-env` or `password-file` key) — those would otherwise fall back on the clients'
/// defaults (`PGPASSWORD`, `~/.pgpass`, `MYSQL_PWD`, `~/.my.cnf`), which an explicit option
/// beats there too. A configuration with its own password keeps it, and a managed server has
/// its own. Gives the names of the configurations that took it; a password that none takes is
/// refused rather than ignored.
pub fn load_with_password(
    path: &Path,
    defines: &[String],
    sets: &[String],
    password: &CommandLinePassword,
) -> Result<(Plan, Vec<String>)> {
    let raw = std::fs::read_to_string(path).map_err(|source| ExecError::Io {
        what: "cannot read plan",
        path: path.to_owned(),
        source,
    })?;
    let text = substitute(path, &raw, &parse_defines(defines)?)?;
    // Parse once as the file is, so errors point at the file's own lines and keys.
    toml::from_str::<PlanFile>(&text).map_err(|e| plan_error(path, &text, &e))?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| plan_error(path, &text, &e))?;
    for s in sets {
        apply_set(&mut table, s)?;
    }
    let mut file: PlanFile =
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                // No span after --set; the error's text names the key.
                anyhow!(
                    "{} (after --set): {}",
                    path.display(),
                    e.to_string().trim().replace('\n', " ")
                )
            })?;
    let mut took = Vec::new();
    if let Some(option) = password.option() {
        if password.env.is_some() && password.file.is_some() {
            return Err(ExecError::Password(
                "give either --password-env or --password-file, not both".into(),
            ));
        }
        for c in &mut file.configuration {
            let without_password = c.password_env.is_none()
                && c.password_file.is_none()
                && c.target
                    .as_deref()
                    // As resolution reads it: PGHOST and friends fill a PostgreSQL URL.
                    .and_then(|url| Target::parse_with_env(url, &|n| std::env::var(n).ok()).ok())
                    .is_some_and(|t| {
                        matches!(t, Target::Mysql { .. } | Target::Postgres { .. })
                            && !t.has_url_password()
                    });
            if without_password {
                c.password_env.clone_from(&password.env);
                c.password_file.clone_from(&password.file);
                took.push(c.name.clone());
            }
        }
        if took.is_empty() {
            return Err(ExecError::Password(format!(
                "{option}: no configuration of {} takes it: each has a password of its own (in its URL, password-env or password-file) or is not a MariaDB/MySQL or PostgreSQL target (a managed server has its own); name it in the plan (`password-file = \"…\"` in a [[configuration]]) or leave the option out",
                path.display()
            )));
        }
    }
    Ok((resolve(path, &text, file)?, took))
}

/// Write a plan file (the DBT-3 launcher import's) only once it loads as a plan: written
/// beside `path` under a temporary name (so relative paths in it resolve from the same folder
/// as when the plan is run), loaded, then renamed into place. An existing `path` is replaced
/// only with `force`.
pub fn write_checked(path: &Path, text: &str, force: bool) -> Result<()> {
    if path.exists() && !force {
        bail!(
            "{} exists: choose another --output or add --force to replace it",
            path.display()
        );
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.import.{}.toml",
        path.file_name()
            .map_or("plan".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ExecError::Io {
            what: "cannot write",
            path,
            source,
        }
    };
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    if let Err(e) = load(&tmp, &[], &[]) {
        let _ = std::fs::remove_file(&tmp);
        bail!(
            "the imported plan does not load ({}); nothing written to {}",
            e.one_line(),
            path.display()
        );
    }
    std::fs::rename(&tmp, path).map_err(io(path))
}

fn plan_error(path: &Path, text: &str, e: &toml::de::Error) -> ExecError {
    match e.span() {
        Some(s) => anyhow!(
            "{}:{}: {}",
            path.display(),
            line_at_offset(text, s.start),
            e.message()
        ),
        None => anyhow!("{}: {}", path.display(), e.message()),
    }
}

/// The 1-based line of a byte offset: the newlines before it, plus one. (Counting `lines()`
/// of the text before it is one short when the offset starts a line.)
fn line_at_offset(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// One step of a path into the plan: a key, or an entry of an array (`[[workload]]` 2).
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where keys are in the plan text, for errors that name the line of the value they are
/// about (parsed once, with spans; the text is the plan's after placeholder substitution).
struct KeyLines<'t> {
    text: &'t str,
    doc: Option<toml::Spanned<toml::de::DeTable<'t>>>,
}

impl<'t> KeyLines<'t> {
    fn new(text: &'t str) -> Self {
        KeyLines {
            text,
            doc: toml::de::DeTable::parse(text).ok(),
        }
    }

    /// The line of the deepest key of `path` the text has (keys compare with `_` as `-`);
    /// `None` when not even its first key is written in the file (set by `--set`).
    fn line(&self, path: &[Seg]) -> Option<usize> {
        use toml::de::DeValue;
        let norm = |k: &str| k.replace('_', "-");
        let doc = self.doc.as_ref()?;
        let mut table = Some(doc.get_ref());
        let mut value: Option<&DeValue> = None;
        let mut found = None;
        for seg in path {
            match *seg {
                Seg::Key(k) => {
                    let (key, v) = table?
                        .iter()
                        .find(|(key, _)| norm(key.get_ref()) == norm(k))?;
                    found = Some(key.span().start);
                    value = Some(v.get_ref());
                    table = v.get_ref().as_table();
                }
                Seg::Index(i) => {
                    let item = value?.as_array()?.get(i)?;
                    found = Some(item.span().start);
                    value = Some(item.get_ref());
                    table = item.get_ref().as_table();
                }
            }
        }
        found.map(|at| line_at_offset(self.text, at))
    }

    /// `FILE:LINE` of `path` (the deepest key found along it), else `FILE`.
    fn at(&self, file: &Path, path: &[Seg]) -> String {
        let mut p = path.len();
        while p > 0 {
            if let Some(l) = self.line(&path[..p]) {
                return format!("{}:{l}", file.display());
            }
            p -= 1;
        }
        file.display().to_string()
    }
}

fn resolve(path: &Path, text: &str, file: PlanFile) -> Result<Plan> {
    use Seg::{Index as I, Key as K};
    let lines = KeyLines::new(text);
    let at = |p: &[Seg]| lines.at(path, p);
    if file.configuration.is_empty() || file.workload.is_empty() || file.clients.is_empty() {
        bail!(
            "{}: a plan needs at least one [[configuration]], one [[workload]] and one client count",
            path.display()
        );
    }
    for (i, c) in file.clients.iter().enumerate() {
        if file.clients[..i].contains(c) {
            bail!(
                "{}: clients: {c} is listed twice (each client count is one column of the report)",
                at(&[K("clients")])
            );
        }
    }
    let mut configurations = Vec::new();
    for (ci, c) in file.configuration.iter().enumerate() {
        let conf_at = |key: &str| at(&[K("configuration"), I(ci), K(key)]);
        if configurations
            .iter()
            .any(|x: &Configuration| x.name == c.name)
        {
            bail!(
                "{}: configuration '{}' is defined twice",
                conf_at("name"),
                c.name
            );
        }
        let params = dbrig_server::Params::parse(&c.params)
            .map_err(|e| anyhow!("{}: configuration '{}': {e}", conf_at("params"), c.name))?;
        let target = match (&c.target, &c.server) {
            (Some(url), None) => {
                Target::parse(url).map_err(|e| {
                    anyhow!("{}: configuration '{}': {e}", conf_at("target"), c.name)
                })?;
                let spec = TargetSpec {
                    url: url.clone(),
                    password_env: c.password_env.clone(),
                    password_file: c.password_file.as_ref().map(|f| beside(path, f)),
                    option_files: Default::default(),
                };
                Some(resolve_target(&spec, &|_| {}).map_err(|e| {
                    let key = if c.password_file.is_some() {
                        "password-file"
                    } else {
                        "target"
                    };
                    anyhow!("{}: configuration '{}': {e}", conf_at(key), c.name)
                })?)
            }
            (None, Some(server)) => {
                if !file.server.iter().any(|s| &s.name == server) {
                    bail!(
                        "{}: configuration '{}' names server '{server}', which no [[server]] defines",
                        conf_at("server"),
                        c.name
                    );
                }
                None
            }
            _ => bail!(
                "{}: configuration '{}' needs exactly one of target = URL or server = NAME",
                conf_at("name"),
                c.name
            ),
        };
        configurations.push(Configuration {
            name: c.name.clone(),
            target,
            server: c.server.clone(),
            params,
            hooks: c.hooks.clone(),
        });
    }
    if let Some(band) = file.report.noise_band
        && dbrig_core::stats::noise_band_from_percent(band).is_none()
    {
        bail!(
            "{}: [report] noise-band = {band}: give a percentage from 0 to {} (2.0 for ±2 %)",
            at(&[K("report"), K("noise-band")]),
            dbrig_core::stats::MAX_NOISE_BAND_PERCENT
        );
    }
    let baseline = file
        .baseline
        .clone()
        .unwrap_or_else(|| configurations[0].name.clone());
    if !configurations.iter().any(|c| c.name == baseline) {
        bail!(
            "{}: baseline '{baseline}' is not one of the configurations",
            at(&[K("baseline")])
        );
    }
    let mut base_run = file.run.clone().unwrap_or_default();
    if let Some(d) = file.duration {
        base_run.insert("time".into(), toml::Value::Float(d));
    }
    if let Some(w) = file.warmup {
        base_run.insert("warmup".into(), toml::Value::Float(w));
    }
    // A server's paths are relative to the plan file's folder, as every path in a plan.
    let mut file = file;
    let base = path.parent().unwrap_or(Path::new(""));
    for d in &mut file.server {
        d.resolve_paths(base);
    }
    // Each workload resolved once (its kind decides which client counts apply).
    let entry_at = |i: usize, _: &WorkloadFile| at(&[K("workload"), I(i)]);
    let mut workloads: Vec<(WorkloadKind, Vec<u32>)> = Vec::new();
    // A script is named by its path (relative to the plan file's folder).
    for (i, w) in file.workload.iter_mut().enumerate() {
        if let Some(script) = &w.script {
            let script_at = at(&[K("workload"), I(i), K("script")]);
            if !w.name.is_empty() {
                bail!("{script_at}: a [[workload]] has a name or a script, not both");
            }
            w.name = lua_script_path(path, script, &script_at)?;
        } else if w.name.is_empty() {
            bail!(
                "{}: every [[workload]] needs a name (or a script)",
                entry_at(i, w)
            );
        } else if dbrig_workload::lua::is_script_name(w.name.trim()) {
            let name_at = at(&[K("workload"), I(i), K("name")]);
            w.name = lua_script_path(path, &w.name, &name_at)?;
        }
        // Paths among the options are relative to the plan file's folder too.
        if let Some(options) = w.options.as_mut() {
            for key in WorkloadKind::path_options(&w.name) {
                let Some((k, v)) = options
                    .iter_mut()
                    .find(|(k, _)| k.replace('_', "-") == *key)
                else {
                    continue;
                };
                let key_at = at(&[K("workload"), I(i), K("options"), K(k)]);
                let check = |p: &str| -> Result<String> {
                    let (file_part, weight) = match *key {
                        // pgbench's FILE@WEIGHT.
                        "scripts" => match p.rsplit_once('@') {
                            Some((f, w)) if !f.is_empty() => (f, Some(w)),
                            _ => (p, None),
                        },
                        _ => (p, None),
                    };
                    let full = beside(path, Path::new(file_part));
                    if !full.exists() {
                        bail!(
                            "{key_at}: {key} = \"{p}\": {} does not exist (a relative path in a plan is relative to the plan file's folder)",
                            full.display()
                        );
                    }
                    Ok(match weight {
                        Some(w) => format!("{}@{w}", full.display()),
                        None => full.display().to_string(),
                    })
                };
                match v {
                    toml::Value::String(p) => *p = check(p)?,
                    toml::Value::Array(items) => {
                        for item in items {
                            if let toml::Value::String(p) = item {
                                *p = check(p)?;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for (i, w) in file.workload.iter().enumerate() {
        let workload = WorkloadKind::from_json(&w.name, &workload_options_json(w.options.as_ref()))
            .map_err(|e| match e {
                dbrig_workload::WorkloadError::UnknownWorkload(_) => anyhow!(
                    "{}: unknown workload '{}': run `dbrig list` to see the workloads (micro-benchmarks: memory_load, scan_filter, tmp_groupby; TPC-H: tpch-power, tpch-throughput; perfrun)",
                    at(&[K("workload"), I(i), K("name")]),
                    w.name
                ),
                e => {
                    // The option at fault, where one alone fails (and none at all does not).
                    let alone = |t: toml::Table| {
                        WorkloadKind::from_json(&w.name, &workload_options_json(Some(&t))).is_err()
                    };
                    let key = w.options.as_ref().filter(|_| !alone(toml::Table::new())).and_then(
                        |o| {
                            o.iter()
                                .find(|(k, v)| {
                                    alone(toml::Table::from_iter([((*k).clone(), (*v).clone())]))
                                })
                                .map(|(k, _)| k.as_str())
                        },
                    );
                    let mut p = vec![K("workload"), I(i), K("options")];
                    p.extend(key.map(K));
                    let named = key.map_or(String::new(), |k| format!("{k}: "));
                    anyhow!("{}: workload '{}' options: {named}{e}", at(&p), w.name)
                }
            })?;
        if let Some(label) = &w.label
            && (label.trim().is_empty() || label.chars().any(char::is_control))
        {
            bail!(
                "{}: workload '{}': label = {label:?} is not a name (give it a few visible characters)",
                entry_at(i, w),
                w.name
            );
        }
        // Two entries that reports would show under one name measure different things (or
        // the same thing twice): refused, naming both entries and the key to add.
        let shown = |w: &WorkloadFile, k: &WorkloadKind| {
            w.label.clone().unwrap_or_else(|| k.name().to_owned())
        };
        let mine = shown(w, &workload);
        if let Some(j) = (0..i).find(|&j| shown(&file.workload[j], &workloads[j].0) == mine) {
            let first = entry_at(j, &file.workload[j]);
            let here = entry_at(i, w);
            if w.label.is_some() {
                bail!(
                    "{here}: workload label '{mine}' is already used by the workload at {first}: labels name cells in reports, so each must be distinct"
                );
            }
            if workloads[j].0.options_json() == workload.options_json()
                && file.workload[j].run == w.run
            {
                bail!(
                    "{here}: workload '{mine}' is listed twice (also at {first}): remove one, or give them distinct `label`s if both are meant"
                );
            }
            bail!(
                "{here}: workload '{mine}' differs in its options from the workload '{mine}' at {first}: add `label = \"…\"` to each, so reports show them apart"
            );
        }
        for c in w.configurations.iter().flatten() {
            if !file.configuration.iter().any(|x| &x.name == c) {
                bail!(
                    "{}: workload '{}' names configuration '{c}', which no [[configuration]] defines",
                    entry_at(i, w),
                    w.name
                );
            }
        }
        let clients = if workload.uses_clients() {
            file.clients.clone()
        } else {
            vec![1]
        };
        workloads.push((workload, clients));
    }
    let mut cells = Vec::new();
    for (ci, conf_file) in file.configuration.iter().enumerate() {
        for (wi, w) in file.workload.iter().enumerate() {
            let (workload, clients_list) = &workloads[wi];
            if w.configurations
                .as_ref()
                .is_some_and(|only| !only.contains(&conf_file.name))
            {
                continue;
            }
            for &clients in clients_list {
                let mut run = run_options(
                    &[
                        (Some(&base_run), vec![K("run")]),
                        (
                            conf_file.run.as_ref(),
                            vec![K("configuration"), I(ci), K("run")],
                        ),
                        (w.run.as_ref(), vec![K("workload"), I(wi), K("run")]),
                    ],
                    &at,
                )?;
                run.threads = clients;
                if !workload.is_timed() {
                    // The benchmark decides its own length: no duration, no warm-up.
                    run.warmup = 0.0;
                }
                run.validate()
                    .map_err(|e| anyhow!("{}: {e}", path.display()))?;
                let pw = PlanWorkload {
                    workload: workload.clone(),
                    label: w.label.clone(),
                    prepare: w.prepare,
                    lifecycle: w.lifecycle,
                    run: run.clone(),
                };
                cells.push(make_cell(
                    cells.len(),
                    ci,
                    &configurations[ci],
                    wi,
                    &pw,
                    run,
                    file.environment.lifecycle,
                ));
            }
        }
    }
    // Interleave: trial-major, then workload, clients, and configurations innermost, so drift
    // of a shared machine hits every configuration alike.
    let mut schedule = Vec::new();
    for trial in 1..=file.trials {
        for (wi, (_, clients_list)) in workloads.iter().enumerate() {
            for &clients in clients_list {
                for ci in 0..configurations.len() {
                    // A workload limited to some configurations has no cell on the others.
                    if let Some(cell) = cells.iter().find(|c| {
                        c.configuration == ci && c.workload_index == wi && c.clients == clients
                    }) {
                        schedule.push((cell.index, trial));
                    }
                }
            }
        }
    }
    if file.order == Order::Shuffled {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(file.seed.unwrap_or(1));
        schedule.shuffle(&mut rng);
    }
    let resolved = serde_json::json!({
        "name": file.name,
        "trials": file.trials,
        "clients": file.clients,
        "order": file.order,
        "baseline": baseline,
        "configurations": configurations.iter().map(|c| serde_json::json!({"name": c.name, "target": c.describe()})).collect::<Vec<_>>(),
        "servers": file.server,
        "environment": file.environment,
        "report": file.report,
        "cells": cells.iter().map(|c| &c.spec).collect::<Vec<_>>(),
    });
    Ok(Plan {
        name: file.name,
        kind: RunKind::Plan,
        path: Some(path.to_owned()),
        text: Some(text.to_owned()),
        trials: file.trials,
        configurations,
        baseline,
        cells,
        schedule,
        resolved,
        servers: file.server,
        environment: file.environment,
        single: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"
name = "t"
trials = 2
duration = 1
clients = [1, 4]
[[configuration]]
name = "A"
target = "mock:"
[[configuration]]
name = "B"
target = "${B_TARGET}"
[[workload]]
name = "oltp_point_select"
[workload.options]
table-size = 100
[[workload]]
name = "oltp_read_only"
"#;

    fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plan.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    /// `run PLAN --password-file F`: the password of every server configuration without one of
    /// its own, never of one that has one, SQLite or the mock; refused when none takes it.
    #[test]
    fn a_command_line_password_goes_to_configurations_without_one() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, p) = write(
            r#"
name = "pw"
trials = 1
clients = [1]
[[configuration]]
name = "my"
target = "mysql://bench@127.0.0.1:3306/test"
[[configuration]]
name = "pg"
target = "postgres://bench@127.0.0.1/test"
[[configuration]]
name = "own-url"
target = "mysql://bench:own@127.0.0.1:3306/test"
[[configuration]]
name = "own-env"
target = "postgres://bench@127.0.0.1/test"
password-env = "PATH"
[[configuration]]
name = "lite"
target = "sqlite::memory:"
[[configuration]]
name = "mock"
target = "mock:"
[[workload]]
name = "oltp_point_select"
"#,
        );
        let file = dir.path().join("pw");
        std::fs::write(&file, "from-file\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        // The configuration's own variable: one every environment has.
        let own_env = std::env::var("PATH").unwrap();
        let by_file = CommandLinePassword {
            env: None,
            file: Some(file.clone()),
        };
        let (plan, took) = load_with_password(&p, &[], &[], &by_file).unwrap();
        assert_eq!(took, ["my", "pg"]);
        let passwords: Vec<(&str, Option<&str>)> = plan
            .configurations
            .iter()
            .map(|c| {
                let pw = c.target.as_ref().and_then(|t| t.password());
                (c.name.as_str(), pw.map(|p| p.expose()))
            })
            .collect();
        assert_eq!(
            passwords,
            [
                ("my", Some("from-file")),
                ("pg", Some("from-file")),
                ("own-url", Some("own")),
                ("own-env", Some(own_env.as_str())),
                ("lite", None),
                ("mock", None),
            ]
        );
        // The file is known as a password file (hooks never get a variable naming it).
        let pw = plan.configurations[0].target.as_ref().unwrap().password();
        assert_eq!(pw.and_then(|p| p.file()), Some(file.as_path()));
        // `--password-env VAR` the same way.
        let by_env = CommandLinePassword {
            env: Some("PATH".into()),
            file: None,
        };
        let (plan, took) = load_with_password(&p, &[], &[], &by_env).unwrap();
        assert_eq!(took, ["my", "pg"]);
        let pw = plan.configurations[1].target.as_ref().unwrap().password();
        assert_eq!(pw.map(|p| p.expose()), Some(own_env.as_str()));
        // Without the option nothing changes.
        assert_eq!(
            load_with_password(&p, &[], &[], &CommandLinePassword::default())
                .unwrap()
                .1,
            Vec::<String>::new()
        );
        // A plan where no configuration takes it: refused in one line, not ignored.
        let sets = [
            "configuration.my.target=sqlite::memory:".to_owned(),
            "configuration.pg.password-env=PATH".to_owned(),
        ];
        let e = load_with_password(&p, &[], &sets, &by_file)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "--password-file {}: no configuration of",
                file.display()
            )) && e.contains("password-file = ")
                && !e.contains('\n'),
            "{e}"
        );
        let both = CommandLinePassword {
            env: Some("X".into()),
            file: Some(file.clone()),
        };
        let e = load_with_password(&p, &[], &[], &both)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
    }

    #[test]
    fn resolves_and_interleaves() {
        let (_d, p) = write(PLAN);
        let plan = load(&p, &["B_TARGET=mock:?latency_us=1".into()], &[]).unwrap();
        assert_eq!(plan.cells.len(), 2 * 2 * 2);
        assert_eq!(plan.schedule.len(), 16);
        // A B A B: configurations alternate innermost.
        let confs: Vec<usize> = plan
            .schedule
            .iter()
            .map(|(c, _)| plan.cells[*c].configuration)
            .collect();
        assert_eq!(&confs[..4], &[0, 1, 0, 1]);
        assert!(plan.schedule[..8].iter().all(|(_, t)| *t == 1));
        assert_eq!(plan.cells[0].run.time, 1.0);
        let keys: std::collections::HashSet<_> = plan.cells.iter().map(|c| &c.key).collect();
        assert_eq!(keys.len(), 8, "cell keys are distinct");
        // Same plan, same keys (resume relies on it).
        let again = load(&p, &["B_TARGET=mock:?latency_us=1".into()], &[]).unwrap();
        assert_eq!(plan.cells[3].key, again.cells[3].key);
    }

    /// `[report] noise-band` (percent) is stored with the resolved plan for the report; a
    /// negative or non-finite band is one plan error naming the file, line and key.
    #[test]
    fn report_noise_band_is_stored_and_a_bad_one_is_a_plan_error() {
        let defines = ["B_TARGET=mock:".to_owned()];
        let (_d, p) = write(&format!("{PLAN}[report]\nnoise-band = 2.5\n"));
        let plan = load(&p, &defines, &[]).unwrap();
        assert_eq!(plan.resolved["report"]["noise-band"], 2.5);
        // Without one, nothing is stored: the report's default applies.
        let (_d, p) = write(PLAN);
        let plan = load(&p, &defines, &[]).unwrap();
        assert_eq!(plan.resolved["report"], serde_json::json!({}));
        // The line of the key: PLAN has 17 lines, then `[report]`.
        for bad in ["-1", "-0.001", "nan", "inf", "-inf"] {
            let (_d, p) = write(&format!("{PLAN}[report]\nnoise-band = {bad}\n"));
            let e = load(&p, &defines, &[]).unwrap_err().one_line();
            assert!(
                e.contains("plan.toml:19: [report] noise-band = ")
                    && e.contains("give a percentage from 0 to 1000")
                    && !e.contains('\n'),
                "{bad}: {e}"
            );
        }
        // --set reaches it like any key, and is checked the same way.
        let (_d, p) = write(PLAN);
        let plan = load(&p, &defines, &["report.noise-band=0".into()]).unwrap();
        assert_eq!(plan.resolved["report"]["noise-band"], 0.0);
        let e = load(&p, &defines, &["report.noise-band=-3".into()]).unwrap_err();
        assert!(e.one_line().contains("noise-band = -3"), "{e}");
        let e = load(&p, &defines, &["report.noise-bnad=3".into()]).unwrap_err();
        assert!(e.one_line().contains("noise-bnad"), "{e}");
    }

    /// A plan whose trials cannot call a change in one of its comparisons on its own says so
    /// (and how many trials can) before it runs: PLAN has 2 trials and 4 OLTP comparisons.
    #[test]
    fn a_plan_too_short_for_a_verdict_says_so_with_the_trials_that_suffice() {
        let defines = ["B_TARGET=mock:".to_owned()];
        let (_d, p) = write(PLAN);
        let plan = load(&p, &defines, &[]).unwrap();
        assert_eq!(plan.comparisons_at_least(), (4, true));
        let w = plan.verdict_warning().expect("2 trials a side are too few");
        assert!(
            w.contains("with 2 trial(s) a side a change in one of its 4 comparison(s)")
                && w.contains("is 1.000, not below 0.05")
                && w.contains("5 a side can: `--set trials=5`"),
            "{w}"
        );
        // 4 a side: 4 · 2/70 = 0.114.
        let plan = load(&p, &defines, &["trials=4".into()]).unwrap();
        assert!(plan.verdict_warning().unwrap().contains("is 0.114"));
        let plan = load(&p, &defines, &["trials=5".into()]).unwrap();
        assert_eq!(plan.verdict_warning(), None);
    }

    /// Every plan in `plans/` can call a change in any one of its comparisons: its trials a
    /// side give a smallest p-value that, corrected for the report's comparisons, is below
    /// 0.05. OLTP comparisons are counted from the plan; the other kinds' items are those
    /// their reports compare (derived figures — rows/s of a timed query, MB/s, cycles/row —
    /// stand in their item's place and are not counted): tmp_groupby's 6 queries,
    /// memory_load's 2 key types, scan_filter's 6 scans, a power test's 22 queries and
    /// Power@Size, and sql-bench's `connect` and `insert` tests: their 2 totals, TOTALS and
    /// their operations (under 85, the most that 7 a side cover).
    #[test]
    fn every_shipped_plan_can_reach_a_verdict() {
        let items = |workload: &str| match workload {
            "tmp_groupby" => 6,
            "memory_load" => 2,
            "scan_filter" => 6,
            "tpch_power" => 23,
            "sql_bench" => 85,
            _ => 1,
        };
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans");
        let defines = [
            "A_TARGET=mock:".to_owned(),
            "B_TARGET=mock:".to_owned(),
            "PWD=/tmp".to_owned(),
        ];
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let plan = load(&path, &defines, &[]).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            let baseline = plan
                .configurations
                .iter()
                .position(|c| c.name == plan.baseline);
            let m: usize = plan
                .cells
                .iter()
                .filter(|c| Some(c.configuration) != baseline)
                .map(|c| items(c.workload.name()))
                .sum();
            let needed = dbrig_core::stats::trials_for_verdict(m, 0.05).unwrap();
            assert!(
                plan.trials as usize >= needed,
                "{}: {} trial(s) a side, {m} comparison(s) need {needed}",
                path.display(),
                plan.trials
            );
            if plan.comparisons_at_least().1 {
                assert_eq!(plan.verdict_warning(), None, "{}", path.display());
            }
            seen += 1;
        }
        assert!(seen >= 10, "{seen} plans");
    }

    /// `[report] correction` is stored with the resolved plan as the report reads it
    /// (`fdr`, `holm`; `bh` is another name for `fdr`); anything else is a plan error that
    /// names the key and the choices.
    #[test]
    fn report_correction_is_stored_and_a_bad_one_is_a_plan_error() {
        let defines = ["B_TARGET=mock:".to_owned()];
        for (given, stored) in [("holm", "holm"), ("fdr", "fdr"), ("bh", "fdr")] {
            let (_d, p) = write(&format!("{PLAN}[report]\ncorrection = \"{given}\"\n"));
            let plan = load(&p, &defines, &[]).unwrap();
            assert_eq!(plan.resolved["report"]["correction"], stored, "{given}");
        }
        let (_d, p) = write(PLAN);
        let plan = load(&p, &defines, &["report.correction=holm".into()]).unwrap();
        assert_eq!(plan.resolved["report"]["correction"], "holm");
        let (_d, p) = write(&format!("{PLAN}[report]\ncorrection = \"bonferroni\"\n"));
        let e = load(&p, &defines, &[]).unwrap_err().one_line();
        assert!(
            e.contains("bonferroni") && e.contains("fdr") && e.contains("holm"),
            "{e}"
        );
    }

    /// Every part of the matrix is needed: no configuration, no workload or no client count
    /// is one plan error (each on its own, not only all three at once).
    #[test]
    fn a_plan_without_configurations_workloads_or_clients_is_refused() {
        let defines = ["B_TARGET=mock:".to_owned()];
        for set in ["clients=[]", "workload=[]", "configuration=[]"] {
            let (_d, p) = write(PLAN);
            let e = load(&p, &defines, &[set.into()]).unwrap_err().one_line();
            assert!(
                e.contains("a plan needs at least one [[configuration]], one [[workload]] and one client count"),
                "{set}: {e}"
            );
        }
    }

    /// A configuration on a managed server resolves when a `[[server]]` defines it (no target:
    /// its port is known only once started), and names the missing one otherwise.
    #[test]
    fn a_configuration_names_a_defined_server() {
        let text = r#"
name = "m"
clients = [1]
[[server]]
name = "m1"
engine = "mariadb"
[[configuration]]
name = "A"
server = "m1"
params = ["max_connections=77"]
[[workload]]
name = "oltp_point_select"
"#;
        let (_d, p) = write(text);
        let plan = load(&p, &[], &[]).unwrap();
        let a = &plan.configurations[0];
        assert_eq!(
            (a.target.is_none(), a.server.as_deref()),
            (true, Some("m1"))
        );
        assert_eq!(a.describe(), "server:m1 max_connections=77");
        let (_d, p) = write(&text.replace("server = \"m1\"", "server = \"m2\""));
        let e = load(&p, &[], &[]).unwrap_err().one_line();
        assert!(
            e.contains("configuration 'A' names server 'm2', which no [[server]] defines"),
            "{e}"
        );
    }

    /// A label must show: blank or holding a control character, it is refused.
    #[test]
    fn a_label_that_does_not_show_is_refused() {
        for label in ["   ", "a\\tb", "x\\u0007"] {
            let (_d, p) = write(&format!("{PLAN}label = \"{label}\"\n"));
            let e = load(&p, &["B_TARGET=mock:".into()], &[])
                .unwrap_err()
                .one_line();
            assert!(
                e.contains("is not a name (give it a few visible characters)"),
                "{label:?}: {e}"
            );
        }
    }

    #[test]
    fn placeholder_without_value_names_file_and_line() {
        let (_d, p) = write(PLAN);
        let e = load(&p, &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("plan.toml:11") && e.contains("${B_TARGET}") && e.contains("--define"),
            "{e}"
        );
    }

    #[test]
    fn set_overrides_any_key() {
        let (_d, p) = write(PLAN);
        let plan = load(
            &p,
            &["B_TARGET=mock:".into()],
            &[
                "trials=1".into(),
                "workload.oltp_point_select.options.table-size=7".into(),
                "clients=[2]".into(),
            ],
        )
        .unwrap();
        assert_eq!(plan.trials, 1);
        assert_eq!(plan.cells.len(), 4);
        assert_eq!(plan.cells[0].clients, 2);
        assert_eq!(plan.cells[0].spec["workload_options"]["table-size"], 7);
        let e = load(
            &p,
            &["B_TARGET=mock:".into()],
            &["workload.nope.options.tables=2".into()],
        )
        .unwrap_err();
        assert!(e.to_string().contains("no entry 'nope'"), "{e}");
    }

    #[test]
    fn errors_name_line_and_key() {
        let (_d, p) = write(&PLAN.replace("table-size = 100", "tabel-size = 100"));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("tabel-size"), "{e}");
        let (_d, p) = write(&PLAN.replace("oltp_read_only", "oltp_nope"));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plan.toml:17") && e.contains("unknown workload 'oltp_nope'"),
            "{e}"
        );
        let (_d, p) = write(&PLAN.replace("clients = [1, 4]", "clients = [1, 4]\nbogus = 1"));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("plan.toml:") && e.contains("bogus"), "{e}");
        let (_d, p) = write(&PLAN.replace("duration = 1", "duration = 1\nbaseline = \"C\""));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("baseline 'C'"), "{e}");
    }

    /// An error whose span starts a line (an unknown key) names that line, not the one
    /// before; a value out of its range names its key's line, wherever the key is: the plan's
    /// top level, `[run]`, a configuration's or a workload's run table, a workload's options.
    #[test]
    fn errors_name_the_line_of_their_key() {
        let defines = ["B_TARGET=mock:".to_owned()];
        let err = |text: &str| load(&write(text).1, &defines, &[]).unwrap_err().to_string();
        let e = err(&PLAN.replace("duration = 1", "durration = 1"));
        assert!(
            e.contains("plan.toml:4: ") && e.contains("durration"),
            "{e}"
        );
        let e = err(&PLAN.replace("trials = 2", "trials = 0"));
        assert!(
            e.contains("plan.toml:3: ") && e.contains("give 1 to 10000 trials"),
            "{e}"
        );
        let e = err(&PLAN.replace("duration = 1", "duration = 1e23"));
        assert!(
            e.contains("plan.toml:4: ") && e.contains("1e23 is out of range"),
            "{e}"
        );
        let e = err(&PLAN.replace("clients = [1, 4]", "clients = [1, -4]"));
        assert!(
            e.contains("plan.toml:5: ") && e.contains("-4 is out of range"),
            "{e}"
        );
        let e = err(&format!(
            "{PLAN}[run]\nrand-type = \"uniform\"\nreport-interval = -1\n"
        ));
        assert!(
            e.contains(
                "plan.toml:20: run options: report-interval: -1 is out of range: give 0 (off) or 0.01"
            ),
            "{e}"
        );
        let e = err(&PLAN.replace(
            "target = \"mock:\"",
            "target = \"mock:\"\nrun = { warmup = 1e300 }",
        ));
        assert!(
            e.contains("plan.toml:9: run options: warmup: 1e300 is out"),
            "{e}"
        );
        let e = err(&format!("{PLAN}[workload.run]\nconnect-timeout = 0\n"));
        assert!(
            e.contains("plan.toml:19: run options: connect-timeout: 0 is out of range"),
            "{e}"
        );
        let e = err(&PLAN.replace("table-size = 100", "tables = 2\nrange-size = 0"));
        assert!(
            e.contains("plan.toml:16: workload 'oltp_point_select' options: range-size: ")
                && e.contains("give 1 to 2147483647 rows"),
            "{e}"
        );
        let e = err(&format!(
            "{PLAN}[environment]\nos-stats-interval = 1e300\nwait-sample-ms = 10\n"
        ));
        assert!(
            e.contains("plan.toml:19: ") && e.contains("1e300 is out of range"),
            "{e}"
        );
        let e = err(&format!("{PLAN}[environment.hooks]\ntimeout = 0\n"));
        assert!(
            e.contains("plan.toml:19: ") && e.contains("0 is out of range"),
            "{e}"
        );
    }

    /// Paths in a plan are relative to the plan file's folder, wherever dbrig runs from; a
    /// missing one is named, absolute, at its key's line.
    #[test]
    fn paths_are_relative_to_the_plan_file() {
        let defines = ["B_TARGET=mock:".to_owned()];
        let text = format!(
            "{PLAN}[[workload]]\nname = \"script\"\n[workload.options]\nscripts = [\"s.sql@2\"]\n"
        );
        let (dir, p) = write(&text);
        std::fs::write(dir.path().join("s.sql"), "SELECT 1;\n").unwrap();
        // The tests run in the crate's folder, not the plan's.
        assert!(!Path::new("s.sql").exists());
        let plan = load(&p, &defines, &[]).unwrap();
        let script = plan
            .cells
            .iter()
            .find(|c| c.workload.name() == "script")
            .unwrap();
        let want = format!("{}@2", dir.path().join("s.sql").display());
        assert_eq!(script.spec["workload_options"]["scripts"][0], want.as_str());
        std::fs::remove_file(dir.path().join("s.sql")).unwrap();
        let e = load(&p, &defines, &[]).unwrap_err().to_string();
        assert!(
            e.contains("plan.toml:21: scripts = \"s.sql@2\"")
                && e.contains(&format!(
                    "{} does not exist",
                    dir.path().join("s.sql").display()
                )),
            "{e}"
        );
    }

    /// `script = "X.lua"` (or a name ending in .lua) is a sysbench script, a file: beside the
    /// plan, else sysbench's bundled one — never dbrig's own workload of that name; a `script`
    /// without .lua is refused rather than guessed.
    #[test]
    fn a_lua_name_is_a_file_and_an_ambiguous_script_is_refused() {
        let defines = ["B_TARGET=mock:".to_owned()];
        let lua = |w: &str| format!("{PLAN}[[workload]]\n{w}\n");
        let (dir, p) = write(&lua("name = \"mine.lua\""));
        std::fs::write(dir.path().join("mine.lua"), "function event() end\n").unwrap();
        let plan = load(&p, &defines, &[]).unwrap();
        assert!(
            plan.cells.iter().any(|c| matches!(
                c.workload.client_workload(),
                Some(dbrig_workload::Workload::Lua(_))
            )),
            "{:?}",
            plan.cells
                .iter()
                .map(|c| c.workload.name())
                .collect::<Vec<_>>()
        );
        // sysbench's script of the same name as dbrig's own workload: sysbench's (where it is
        // installed), else refused; never dbrig's oltp_read_write.
        match load(
            &write(&lua("script = \"oltp_read_write.lua\"")).1,
            &defines,
            &[],
        ) {
            Ok(plan) => assert!(plan.cells.iter().all(|c| c.workload_index < 2
                || matches!(
                    c.workload.client_workload(),
                    Some(dbrig_workload::Workload::Lua(_))
                ))),
            Err(e) => assert!(
                e.to_string().contains("plan.toml:19: ")
                    && e.to_string()
                        .contains("dbrig's own oltp_read_write is name = \"oltp_read_write\""),
                "{e}"
            ),
        }
        let e = load(
            &write(&lua("script = \"oltp_read_write\"")).1,
            &defines,
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("plan.toml:19: ") && e.contains("is not a Lua script (FILE.lua)"),
            "{e}"
        );
    }

    #[test]
    fn micro_and_tpch_workloads_have_one_cell_per_configuration() {
        let text = format!(
            "{PLAN}[[workload]]\nname = \"memory-load\"\n[workload.options]\nrows = 1000\n\
             [[workload]]\nname = \"tpch-power\"\n[workload.options]\nsf = 0.01\n"
        );
        let (_d, p) = write(&text);
        let defines = ["B_TARGET=mock:".to_owned()];
        let plan = load(&p, &defines, &[]).unwrap();
        // 2 OLTP workloads × 2 client counts × 2 configurations, plus 2 × 2 benchmark cells.
        assert_eq!(plan.cells.len(), 8 + 4);
        let micro: Vec<&Cell> = plan
            .cells
            .iter()
            .filter(|c| c.workload.name() == "memory_load")
            .collect();
        assert_eq!(micro.len(), 2);
        assert!(micro.iter().all(|c| c.clients == 1 && !c.writes));
        assert_eq!(micro[0].spec["workload_options"]["rows"], 1000);
        assert_eq!(plan.schedule.len(), 2 * 12);
        // The plan's duration is not part of a benchmark cell's key (resume keeps it).
        let longer = load(&p, &defines, &["duration=9".into()]).unwrap();
        let key = |plan: &Plan, w: &str| {
            plan.cells
                .iter()
                .find(|c| c.workload.name() == w)
                .unwrap()
                .key
                .clone()
        };
        assert_eq!(key(&plan, "tpch_power"), key(&longer, "tpch_power"));
        assert_ne!(
            key(&plan, "oltp_point_select"),
            key(&longer, "oltp_point_select")
        );
        // Unknown options of the new kinds name the option.
        let (_d, p) = write(&text.replace("rows = 1000", "rowz = 1000"));
        let e = load(&p, &defines, &[]).unwrap_err().to_string();
        assert!(e.contains("memory-load") && e.contains("rowz"), "{e}");
    }

    #[test]
    fn shuffled_order_is_seeded() {
        let (_d, p) = write(&PLAN.replace(
            "duration = 1",
            "duration = 1\norder = \"shuffled\"\nseed = 9",
        ));
        let a = load(&p, &["B_TARGET=mock:".into()], &[]).unwrap();
        let b = load(&p, &["B_TARGET=mock:".into()], &[]).unwrap();
        assert_eq!(a.schedule, b.schedule);
        assert_eq!(a.schedule.len(), 16);

        // The same trials as the interleaved order, in another order.
        let (_d, p) = write(&PLAN.replace("duration = 1", "duration = 1\norder = \"interleaved\""));
        let interleaved = load(&p, &["B_TARGET=mock:".into()], &[]).unwrap();
        assert_ne!(a.schedule, interleaved.schedule);
        let mut sorted = a.schedule.clone();
        sorted.sort_unstable();
        let mut expected = interleaved.schedule.clone();
        expected.sort_unstable();
        assert_eq!(sorted, expected);

        // Another seed, another order (16 entries: a chance collision is 1 in 16!/…, and the
        // generator is seeded, so this never flips).
        let (_d, p) = write(&PLAN.replace(
            "duration = 1",
            "duration = 1\norder = \"shuffled\"\nseed = 10",
        ));
        let c = load(&p, &["B_TARGET=mock:".into()], &[]).unwrap();
        assert_ne!(a.schedule, c.schedule);
    }

    #[test]
    fn labelled_variants_are_cells_of_their_own_and_unlabelled_ones_are_refused() {
        let variants = |a: &str, b: &str, c: &str| {
            format!(
                "name = \"v\"\ntrials = 1\nclients = [1]\n[[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n\
                 [[workload]]\nname = \"select_random_points\"\n{a}[workload.options]\nrandom-points = 10\n\
                 [[workload]]\nname = \"select_random_points\"\n{b}[workload.options]\nrandom-points = 50\n\
                 [[workload]]\nname = \"select_random_points\"\n{c}[workload.options]\nrandom-points = 100\n"
            )
        };
        let (_d, p) = write(&variants(
            "label = \"points-10\"\n",
            "label = \"points-50\"\n",
            "label = \"points-100\"\n",
        ));
        let plan = load(&p, &[], &[]).unwrap();
        let names: Vec<&str> = plan.cells.iter().map(|c| c.workload_name()).collect();
        assert_eq!(names, ["points-10", "points-50", "points-100"]);
        assert_eq!(plan.cells[1].spec["label"], "points-50");
        assert_eq!(plan.cells[1].workload.name(), "select_random_points");
        let keys: std::collections::HashSet<_> = plan.cells.iter().map(|c| &c.key).collect();
        assert_eq!(keys.len(), 3);

        // Without labels the report would show three different things as one cell: refused,
        // naming the file, the line of the second entry, and the key to add.
        let (_d, p) = write(&variants("", "", ""));
        let e = load(&p, &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("plan.toml:11:")
                && e.contains("differs in its options")
                && e.contains("plan.toml:7")
                && e.contains("label"),
            "{e}"
        );
        // One label is not enough: the other two still clash.
        let (_d, p) = write(&variants("label = \"x\"\n", "", ""));
        let e = load(&p, &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("plan.toml:16:") && e.contains("plan.toml:12") && e.contains("label"),
            "{e}"
        );
        // Two labels alike.
        let (_d, p) = write(&variants(
            "label = \"x\"\n",
            "label = \"x\"\n",
            "label = \"y\"\n",
        ));
        let e = load(&p, &[], &[]).unwrap_err().to_string();
        assert!(
            e.contains("plan.toml:12:") && e.contains("label 'x' is already used"),
            "{e}"
        );
    }

    /// A workload limited to some configurations (the DBT-3 launcher's per-configuration
    /// query sets) has cells only there; a name no configuration has is refused.
    #[test]
    fn workloads_limited_to_configurations() {
        let only_b = PLAN.replace(
            "name = \"oltp_read_only\"",
            "name = \"oltp_read_only\"\nconfigurations = [\"B\"]",
        );
        let (_d, p) = write(&only_b);
        let plan = load(&p, &["B_TARGET=mock:".into()], &[]).unwrap();
        // point select on A and B, read only on B, two client counts each.
        assert_eq!(plan.cells.len(), 2 * 2 + 2);
        assert!(
            plan.cells
                .iter()
                .filter(|c| c.workload_index == 1)
                .all(|c| c.configuration == 1)
        );
        assert_eq!(plan.schedule.len(), 6 * 2);
        let (_d, p) = write(&only_b.replace("[\"B\"]", "[\"C\"]"));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plan.toml:16") && e.contains("configuration 'C'"),
            "{e}"
        );
    }

    #[test]
    fn duplicate_workloads_and_client_counts_are_refused() {
        let twice = PLAN.replace(
            "name = \"oltp_read_only\"",
            "name = \"oltp_read_only\"\n[[workload]]\nname = \"oltp_read_only\"",
        );
        let (_d, p) = write(&twice);
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("listed twice") && e.contains("oltp_read_only"),
            "{e}"
        );
        let (_d, p) = write(&PLAN.replace("clients = [1, 4]", "clients = [1, 4, 1]"));
        let e = load(&p, &["B_TARGET=mock:".into()], &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("plan.toml:5") && e.contains("clients: 1 is listed twice"),
            "{e}"
        );
    }
}
