//! The managed servers of a plan: started on demand with each configuration's parameters,
//! restarted when those differ or a trial asks, restored to freshly prepared data, started
//! read-only for read-only workloads, pinned to the plan's server CPUs, and stopped at the end
//! (a server that was already running when the plan began is left running). A server with a
//! `source` and a `build` is built first (once per source revision, recipe and flags, cached
//! in `<state>/builds/`); a failed build fails that server's trials, each with the build log's
//! last lines, without building again in the same plan.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use dbrig_core::results::{BuildInfo, LifeMark, ManagedServerFacts};
use dbrig_driver::Target;
use dbrig_server::{Engine, ManagedServer, Params, ServerDef};

use crate::environment::{EnvironmentFile, pin};
use crate::error::{ExecError, Result, plan};

/// Managed servers of a plan.
pub struct Servers {
    state_dir: PathBuf,
    defs: HashMap<String, ServerDef>,
    opened: HashMap<String, ManagedServer>,
    /// Servers this plan started (the others were up before it and stay up after it).
    started: HashSet<String>,
    server_cpus: Option<String>,
    /// Servers currently started read-only.
    read_only: HashSet<String>,
    /// Launch notes already said (each once per plan, e.g. "numactl is not installed").
    said: HashSet<String>,
    /// Lines for the user, taken by the executor ([`Servers::take_notes`]).
    notes: Vec<String>,
    /// The builds of servers built from source, recorded with their trials.
    builds: HashMap<String, BuildInfo>,
    /// Builds that failed in this plan: the error every trial of the server gets.
    failed_builds: HashMap<String, String>,
}

impl Servers {
    /// The plan's servers, with the environment's NUMA choice applied to each definition.
    pub fn new(state_dir: &Path, defs: &[ServerDef], env: &EnvironmentFile) -> Self {
        Self {
            state_dir: state_dir.to_owned(),
            defs: defs
                .iter()
                .map(|d| {
                    let mut d = d.clone();
                    d.numa_interleave |= env.numa_interleave;
                    (d.name.clone(), d)
                })
                .collect(),
            opened: HashMap::new(),
            started: HashSet::new(),
            server_cpus: env.server_cpus.clone(),
            read_only: HashSet::new(),
            said: HashSet::new(),
            notes: Vec::new(),
            builds: HashMap::new(),
            failed_builds: HashMap::new(),
        }
    }

    /// What happened that the user should hear about since the last call.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn server(&mut self, name: &str) -> Result<&mut ManagedServer> {
        if !self.opened.contains_key(name) {
            let mut def = self
                .defs
                .get(name)
                .cloned()
                .ok_or_else(|| plan(format!("no [[server]] named '{name}'")))?;
            if def.build.is_some() {
                if let Some(e) = self.failed_builds.get(name) {
                    return Err(plan(e.clone()));
                }
                self.notes.push(format!(
                    "building server {name} (cached by source revision, recipe and flags)"
                ));
                match dbrig_server::ensure_build(&def, &self.state_dir.join("builds")) {
                    Ok((prefix, info)) => {
                        self.notes.push(format!(
                            "server {name}: {} build of {} in {}",
                            if info.cached { "cached" } else { "new" },
                            info.revision,
                            prefix.display()
                        ));
                        def.prefix = Some(prefix);
                        self.builds.insert(name.to_owned(), info);
                    }
                    Err(e) => {
                        let e = e.to_string();
                        self.failed_builds.insert(name.to_owned(), e.clone());
                        return Err(plan(e));
                    }
                }
            }
            if def.build_tree.is_some() {
                // Run in place: nothing to build, but the trials record what was run.
                let info = dbrig_server::build_tree_info(&def)?;
                self.notes.push(format!(
                    "server {name}: build tree {} run in place ({})",
                    info.prefix, info.revision
                ));
                self.builds.insert(name.to_owned(), info);
            }
            let mut s = ManagedServer::open(def, &self.state_dir)?;
            if !s.is_initialised() {
                self.notes
                    .push(format!("initialising the data directory of server {name}"));
                s.initialise()?;
            }
            self.opened.insert(name.to_owned(), s);
        }
        Ok(self.opened.get_mut(name).expect("inserted above"))
    }

    /// Make sure server `name` runs with `params` (restarting it when they differ, or when
    /// `restart` is asked), read-only when `read_only`; returns its target and pid.
    pub fn ensure(
        &mut self,
        name: &str,
        params: &Params,
        restart: bool,
        read_only: bool,
    ) -> Result<(Target, Option<u32>)> {
        let cpus = self.server_cpus.clone();
        let s = self.server(name)?;
        let params = if read_only {
            params.merged(&s.def().engine.read_only_params())
        } else {
            params.clone()
        };
        let up = s.is_running();
        let same = s
            .current_params()
            .map(|p| p == &s.def().params.merged(&params))
            .unwrap_or(false);
        let mut starting = false;
        if !up {
            s.start(&params)
                .map_err(|e| ExecError::from(e).context(format!("starting server {name}")))?;
            starting = true;
        } else if restart || !same {
            s.restart(&params)
                .map_err(|e| ExecError::from(e).context(format!("restarting server {name}")))?;
            starting = true;
        }
        let pid = s.status().pid;
        let launch_notes = s.launch_info().map(|l| l.notes.clone()).unwrap_or_default();
        let url = s.connection_info()?.url();
        // A locked-down server (the default) takes the password kept in its state folder.
        let secret = s.secret().map(dbrig_driver::Secret::new);
        if starting {
            self.started.insert(name.to_owned());
        }
        if read_only {
            self.read_only.insert(name.to_owned());
        } else {
            self.read_only.remove(name);
        }
        for note in launch_notes {
            if self.said.insert(note.clone()) {
                self.notes.push(format!(
                    "note: server {name}: {note} (recorded on each trial)"
                ));
            }
        }
        if let (Some(cpus), Some(pid)) = (cpus, pid)
            && let Err(e) = pin(pid, &cpus)
        {
            self.notes.push(format!("warning: {e}"));
        }
        Ok((Target::parse(&url)?.with_password(secret), pid))
    }

    /// Keep a copy of the prepared data directory (once).
    pub fn snapshot_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
        let s = self.server(name)?;
        if !s.has_snapshot("prepared") {
            // The snapshot stops the server and starts it again as it was.
            s.snapshot_data("prepared")?;
            if !s.is_running() {
                s.start(params)?;
            }
        }
        Ok(())
    }

    /// Restore the prepared data (the server is restarted by the restore).
    pub fn restore_prepared(&mut self, name: &str, params: &Params) -> Result<()> {
        self.read_only.remove(name);
        let s = self.server(name)?;
        s.restore_data("prepared")?;
        if !s.is_running() {
            s.start(params)?;
        }
        self.started.insert(name.to_owned());
        Ok(())
    }

    /// The server's life as its process shows it (pid, start generation, death).
    pub fn life_mark(&mut self, name: &str) -> LifeMark {
        self.server(name).map(|s| s.life_mark()).unwrap_or_default()
    }

    /// What a trial records about a managed server: binary, parameters, data directory,
    /// whether it ran read-only, and how it was launched (wrappers, NUMA, parent-death signal).
    pub fn facts(&mut self, name: &str) -> Option<ManagedServerFacts> {
        let read_only = self.read_only.contains(name);
        let build = self.builds.get(name).cloned();
        let s = self.server(name).ok()?;
        Some(ManagedServerFacts {
            server: name.to_owned(),
            binary: s.server_bin().display().to_string(),
            params: s.current_params().map(|p| p.to_strings()),
            data_dir: s.data_dir().display().to_string(),
            read_only,
            launch: s.launch_info().cloned(),
            build,
        })
    }

    /// The NUMA placement of the running server `name` (`None`: not running or unknown).
    pub fn numa(&mut self, name: &str) -> Option<String> {
        self.server(name)
            .ok()?
            .launch_info()
            .map(|l| l.numa.clone())
    }

    /// Stop every server this plan started; returns what could not be stopped.
    pub fn stop_started(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        for (name, s) in self.opened.iter_mut() {
            if self.started.contains(name)
                && let Err(e) = s.stop()
            {
                failed.push(format!("stopping server {name}: {e}"));
            }
        }
        self.started.clear();
        failed
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        // An early return (an error) must not leave the servers this plan started running.
        let _ = self.stop_started();
    }
}

/// Combine the SQL and process sides of a life observation.
pub fn merged(sql: LifeMark, process: Option<LifeMark>) -> LifeMark {
    match process {
        Some(p) => LifeMark {
            pid: p.pid,
            generation: p.generation,
            died: sql.died || p.died,
            ..sql
        },
        None => sql,
    }
}

/// Where a managed server's definition is kept once `dbrig server start` ran it.
const DEFINITION_FILE: &str = "definition.json";

/// A managed server's definition: the `[[server]]` table of `plan`, or an ad-hoc one of
/// `engine` with everything defaulted, or the one `dbrig server start` saved in
/// `OUT/servers/NAME`.
pub fn definition(
    name: &str,
    plan: Option<&Path>,
    engine: Option<&str>,
    out: &Path,
) -> Result<ServerDef> {
    if let Some(plan) = plan {
        let defs = plan_servers(plan)?;
        let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
        return defs.into_iter().find(|d| d.name == name).ok_or_else(|| {
            crate::error::plan(format!(
                "{}: no [[server]] named {name} (defined: {})",
                plan.display(),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ))
        });
    }
    if let Some(engine) = engine {
        let engine: Engine = serde_json::from_value(serde_json::Value::String(engine.to_owned()))
            .map_err(|_| {
            crate::error::plan(format!(
                "unknown engine {engine:?} (expected mariadb, mysql or postgres)"
            ))
        })?;
        let def = ServerDef::new(name.to_owned(), engine);
        def.validate()?;
        return Ok(def);
    }
    let saved = out.join("servers").join(name).join(DEFINITION_FILE);
    match std::fs::read_to_string(&saved) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| crate::error::plan(format!("reading {}: {e}", saved.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(crate::error::plan(format!(
            "server {name}: no definition (give --plan PLAN.toml or --engine ENGINE; {} does not exist)",
            saved.display()
        ))),
        Err(source) => Err(ExecError::Io {
            what: "cannot read",
            path: saved,
            source,
        }),
    }
}

/// Keep `def` beside a server `dbrig server start` brought up, so `stop` and `status` need
/// only its name (written to a temporary file and renamed).
pub fn save_definition(server: &ManagedServer, def: &ServerDef) -> Result<()> {
    let path = server.dir().join(DEFINITION_FILE);
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(def).expect("a definition serializes") + "\n";
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|source| ExecError::Io {
            what: "cannot write",
            path,
            source,
        })
}

/// The `[[server]]` tables of a plan file (only that array is read here).
pub fn plan_servers(plan: &Path) -> Result<Vec<ServerDef>> {
    let text = std::fs::read_to_string(plan).map_err(|source| ExecError::Io {
        what: "cannot read",
        path: plan.to_owned(),
        source,
    })?;
    let mut defs = parse_servers(&text).map_err(|e| e.context(plan.display().to_string()))?;
    let base = plan.parent().unwrap_or(Path::new(""));
    for d in &mut defs {
        d.resolve_paths(base);
    }
    Ok(defs)
}

fn parse_servers(text: &str) -> Result<Vec<ServerDef>> {
    let table: toml::Table = toml::from_str(text).map_err(|e| crate::error::plan(e.message()))?;
    let Some(servers) = table.get("server") else {
        return Ok(Vec::new());
    };
    let Some(list) = servers.as_array() else {
        return Err(crate::error::plan(
            "`server` must be an array of tables ([[server]])",
        ));
    };
    let mut out: Vec<ServerDef> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let def: ServerDef = v.clone().try_into().map_err(|e: toml::de::Error| {
            crate::error::plan(format!("[[server]] #{}: {}", i + 1, e.message()))
        })?;
        def.validate()?;
        if out.iter().any(|d| d.name == def.name) {
            return Err(crate::error::plan(format!(
                "two [[server]] tables are named {}",
                def.name
            )));
        }
        out.push(def);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_server_tables() {
        let defs = parse_servers(
            r#"
            name = "a plan"
            [matrix]
            clients = [1, 2]

            [[server]]
            name = "maria"
            engine = "mariadb"
            params = { max_connections = 500 }

            [[server]]
            name = "pg"
            engine = "postgres"
            prefix = "/opt/pg17"
            "#,
        )
        .unwrap();
        assert_eq!(defs.len(), 2);
        assert_eq!(defs[0].params.to_strings(), ["max_connections=500"]);
        assert_eq!(defs[1].prefix.as_deref(), Some(Path::new("/opt/pg17")));
        assert!(parse_servers("x = 1").unwrap().is_empty());
        let e = parse_servers("[[server]]\nname='a'\nengine='oracle'\n").unwrap_err();
        assert!(e.one_line().contains("oracle"), "{e}");
        let e = parse_servers(
            "[[server]]\nname='a'\nengine='mariadb'\n[[server]]\nname='a'\nengine='mariadb'\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("two"), "{e}");
    }
}
