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

use anyhow::{Context, Result, anyhow, bail};
use dbrig_driver::Target;
use dbrig_workload::{RunOptions, WorkloadKind};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

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
    pub hooks: Option<crate::environment::Hooks>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WorkloadFile {
    pub name: String,
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
    pub lifecycle: Option<crate::environment::Lifecycle>,
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
    #[serde(default = "three")]
    pub trials: u32,
    /// Seconds per trial (sets the run option `time`).
    #[serde(default)]
    pub duration: Option<f64>,
    /// Seconds of warm-up per trial (sets the run option `warmup`).
    #[serde(default)]
    pub warmup: Option<f64>,
    pub clients: Vec<u32>,
    #[serde(default)]
    pub order: Order,
    #[serde(default)]
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
    pub environment: crate::environment::EnvironmentFile,
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
    pub hooks: Option<crate::environment::Hooks>,
}

impl Configuration {
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
    pub prepare: bool,
    pub lifecycle: crate::environment::Lifecycle,
    /// The workload changes data (fresh-data lifecycle restores before its trials).
    pub writes: bool,
    pub clients: u32,
    pub run: RunOptions,
    /// Hash of the full specification: what resume matches on.
    pub key: String,
    /// The specification the key was computed from (stored with the cell).
    pub spec: serde_json::Value,
}

/// A whole plan, ready to execute.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub path: PathBuf,
    /// The plan text after placeholder substitution (stored with the run).
    pub text: String,
    pub trials: u32,
    pub configurations: Vec<Configuration>,
    pub baseline: String,
    pub cells: Vec<Cell>,
    /// (cell index, trial number) in execution order.
    pub schedule: Vec<(usize, u32)>,
    pub resolved: serde_json::Value,
    pub servers: Vec<dbrig_server::ServerDef>,
    pub environment: crate::environment::EnvironmentFile,
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

/// The line where `needle` first appears, for error messages about values.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or(1)
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

/// Merge option tables (later wins) and read them as `T`, reporting unknown keys clearly.
fn options_from<T: for<'de> Deserialize<'de>>(
    layers: &[Option<&toml::Table>],
    what: &str,
) -> Result<T> {
    let mut merged = toml::Table::new();
    for t in layers.iter().flatten() {
        for (k, v) in t.iter() {
            merged.insert(k.replace('_', "-"), v.clone());
        }
    }
    toml::Value::Table(merged)
        .try_into::<T>()
        .map_err(|e| anyhow!("{what}: {}", e.message()))
}

/// Read, substitute, override and resolve a plan file.
pub fn load(path: &Path, defines: &[String], sets: &[String]) -> Result<Plan> {
    let raw = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read plan {}", path.display()))?;
    let text = substitute(path, &raw, &parse_defines(defines)?)?;
    // Parse once as the file is, so errors point at the file's own lines and keys.
    toml::from_str::<PlanFile>(&text).map_err(|e| plan_error(path, &text, &e))?;
    let mut table: toml::Table = toml::from_str(&text).map_err(|e| plan_error(path, &text, &e))?;
    for s in sets {
        apply_set(&mut table, s)?;
    }
    let file: PlanFile = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| {
            anyhow!("{} (after --set): {}", path.display(), e.message())
        })?;
    resolve(path, &text, file)
}

fn plan_error(path: &Path, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
    match line {
        Some(l) => anyhow!("{}:{l}: {}", path.display(), e.message()),
        None => anyhow!("{}: {}", path.display(), e.message()),
    }
}

fn resolve(path: &Path, text: &str, file: PlanFile) -> Result<Plan> {
    let at = |needle: &str| format!("{}:{}", path.display(), line_of(text, needle));
    if file.configuration.is_empty() || file.workload.is_empty() || file.clients.is_empty() {
        bail!(
            "{}: a plan needs at least one [[configuration]], one [[workload]] and one client count",
            path.display()
        );
    }
    if file.trials == 0 {
        bail!("{}: trials must be at least 1", at("trials"));
    }
    if let Some(c) = file.clients.iter().find(|c| **c == 0) {
        bail!("{}: clients: {c} is not a client count", at("clients"));
    }
    let mut configurations = Vec::new();
    for c in &file.configuration {
        if configurations
            .iter()
            .any(|x: &Configuration| x.name == c.name)
        {
            bail!(
                "{}: configuration '{}' is defined twice",
                at(&format!("\"{}\"", c.name)),
                c.name
            );
        }
        let params = dbrig_server::Params::parse(&c.params)
            .map_err(|e| anyhow!("{}: configuration '{}': {e}", at(&c.name), c.name))?;
        let target = match (&c.target, &c.server) {
            (Some(url), None) => {
                Target::parse(url)
                    .map_err(|e| anyhow!("{}: configuration '{}': {e}", at(url), c.name))?;
                let args = crate::cli::ConnectionArgs {
                    target: Some(url.clone()),
                    password_env: c.password_env.clone(),
                    password_file: c.password_file.clone(),
                    ..crate::cli::ConnectionArgs::default()
                };
                Some(
                    crate::connection::resolve_target(&args, &crate::cli::StoreArgs::default())
                        .map_err(|e| anyhow!("{}: configuration '{}': {e}", at(&c.name), c.name))?,
                )
            }
            (None, Some(server)) => {
                if !file.server.iter().any(|s| &s.name == server) {
                    bail!(
                        "{}: configuration '{}' names server '{server}', which no [[server]] defines",
                        at(server),
                        c.name
                    );
                }
                None
            }
            _ => bail!(
                "{}: configuration '{}' needs exactly one of target = URL or server = NAME",
                at(&c.name),
                c.name
            ),
        };
        if let Some(h) = &c.hooks {
            h.validate()
                .map_err(|e| anyhow!("{}: configuration '{}' hooks: {e}", at(&c.name), c.name))?;
        }
        configurations.push(Configuration {
            name: c.name.clone(),
            target,
            server: c.server.clone(),
            params,
            hooks: c.hooks.clone(),
        });
    }
    let baseline = file
        .baseline
        .clone()
        .unwrap_or_else(|| configurations[0].name.clone());
    if !configurations.iter().any(|c| c.name == baseline) {
        bail!(
            "{}: baseline '{baseline}' is not one of the configurations",
            at("baseline")
        );
    }
    let mut base_run = file.run.clone().unwrap_or_default();
    if let Some(d) = file.duration {
        base_run.insert("time".into(), toml::Value::Float(d));
    }
    if let Some(w) = file.warmup {
        base_run.insert("warmup".into(), toml::Value::Float(w));
    }
    // Each workload resolved once (its kind decides which client counts apply).
    let mut workloads: Vec<(WorkloadKind, Vec<u32>)> = Vec::new();
    for w in &file.workload {
        let workload = WorkloadKind::from_json(&w.name, &workload_options_json(w.options.as_ref()))
            .map_err(|e| match e {
                dbrig_workload::WorkloadError::UnknownWorkload(_) => anyhow!(
                    "{}: unknown workload '{}': run `dbrig list` to see the workloads (micro-benchmarks: memory_load, scan_filter, tmp_groupby; TPC-H: tpch-power)",
                    at(&format!("\"{}\"", w.name)),
                    w.name
                ),
                e => anyhow!("{}: workload '{}' options: {e}", at(&w.name), w.name),
            })?;
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
            for &clients in clients_list {
                let mut run: RunOptions = options_from(
                    &[Some(&base_run), conf_file.run.as_ref(), w.run.as_ref()],
                    &format!("{}: run options", path.display()),
                )?;
                run.threads = clients;
                if !workload.is_timed() {
                    // The benchmark decides its own length: no duration, no warm-up.
                    run.warmup = 0.0;
                }
                run.validate()
                    .map_err(|e| anyhow!("{}: {e}", path.display()))?;
                let mut spec = serde_json::json!({
                    "configuration": conf_file.name,
                    "target": configurations[ci].describe(),
                    "workload": workload.name(),
                    "workload_options": workload.options_json(),
                    "run": run,
                });
                if !workload.is_timed() {
                    // Changing the plan's duration must not make these cells new on --resume.
                    for k in ["time", "warmup"] {
                        if let Some(r) = spec["run"].as_object_mut() {
                            r.remove(k);
                        }
                    }
                }
                let key = crate::commands::spec_key(&spec);
                cells.push(Cell {
                    index: cells.len(),
                    configuration: ci,
                    workload: workload.clone(),
                    workload_index: wi,
                    prepare: w.prepare,
                    lifecycle: w.lifecycle.unwrap_or(file.environment.lifecycle),
                    writes: workload.writes(),
                    clients,
                    run,
                    key,
                    spec,
                });
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
                    let cell = cells
                        .iter()
                        .find(|c| {
                            c.configuration == ci && c.workload_index == wi && c.clients == clients
                        })
                        .expect("every combination has a cell");
                    schedule.push((cell.index, trial));
                }
            }
        }
    }
    if file.order == Order::Shuffled {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(file.seed.unwrap_or(1));
        schedule.shuffle(&mut rng);
    }
    file.environment
        .hooks
        .validate()
        .map_err(|e| anyhow!("{}: [environment.hooks] {e}", path.display()))?;
    let resolved = serde_json::json!({
        "name": file.name,
        "trials": file.trials,
        "clients": file.clients,
        "order": file.order,
        "baseline": baseline,
        "configurations": configurations.iter().map(|c| serde_json::json!({"name": c.name, "target": c.describe()})).collect::<Vec<_>>(),
        "servers": file.server,
        "environment": file.environment,
        "cells": cells.iter().map(|c| &c.spec).collect::<Vec<_>>(),
    });
    Ok(Plan {
        name: file.name,
        path: path.to_owned(),
        text: text.to_owned(),
        trials: file.trials,
        configurations,
        baseline,
        cells,
        schedule,
        resolved,
        servers: file.server,
        environment: file.environment,
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
    }
}
