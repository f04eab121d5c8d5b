//! `dbrig server start|stop|status NAME`: bring up a managed server by hand.
//!
//! A server is defined by a `[[server]]` table of a plan (`--plan`), or ad hoc with `--engine`
//! (everything else defaulted). `start` leaves it running detached and records pid, port and
//! socket in `OUT/servers/NAME/state.json`, and the definition in `definition.json` so `stop`
//! and `status` need only the name.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use dbrig_server::managed::{Engine, ManagedServer, Params, ServerDef, shutdown_all};

#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    #[command(subcommand)]
    pub action: ServerAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ServerAction {
    /// Initialise the data directory if needed and start the server; it keeps running after
    /// dbrig exits (stop it with `dbrig server stop NAME`).
    Start(StartArgs),
    /// Stop a server started with `dbrig server start` (clean shutdown, then SIGKILL).
    Stop(ServerRef),
    /// Show whether the server runs, its pid, port, socket and uptime.
    Status(StatusArgs),
}

/// Which server, and where its definition and state live.
#[derive(Debug, Clone, Args)]
pub struct ServerRef {
    /// The server's name (a `[[server]]` table in the plan).
    pub name: String,
    /// Plan file whose `[[server]]` tables define servers.
    #[arg(long, value_name = "PLAN.toml")]
    pub plan: Option<PathBuf>,
    /// Define the server ad hoc with this engine (mariadb, mysql, postgres) and defaults.
    #[arg(long, conflicts_with = "plan")]
    pub engine: Option<String>,
    /// State folder: servers live in OUT/servers/NAME.
    #[arg(long, default_value = "dbrig-out")]
    pub out: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    #[command(flatten)]
    pub server: ServerRef,
    /// Extra startup parameter KEY=VALUE (repeatable); overrides the definition's.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub server: ServerRef,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
}

const DEFINITION_FILE: &str = "definition.json";

/// Exit code of `status` when the server is not running.
const EXIT_NOT_RUNNING: u8 = 3;

pub fn server(args: ServerArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        ServerAction::Start(a) => start(a),
        ServerAction::Stop(r) => stop(r),
        ServerAction::Status(a) => status(a),
    }
}

fn start(a: StartArgs) -> anyhow::Result<ExitCode> {
    let def = definition(&a.server)?;
    let extra = Params::parse(&a.params)?;
    // The server runs in its own process group, so Ctrl-C while it starts would leave it
    // behind: stop what we started, then exit.
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::spawn(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                shutdown_all(Duration::from_secs(30));
                std::process::exit(130);
            }
        });
    }
    let mut server = ManagedServer::init(def.clone(), &a.server.out)?;
    // Meant to outlive this dbrig: no parent-death signal (a plan's servers get one).
    server.set_dies_with_dbrig(false);
    save_definition(&server, &def)?;
    server.start(&extra)?;
    let info = server.connection_info()?;
    let st = server.status();
    let log = server.log_path();
    server.detach();
    println!(
        "server {} ({}) started: pid {}, port {}, socket {}",
        def.name,
        def.engine,
        st.pid.unwrap_or_default(),
        info.port,
        info.socket.display()
    );
    println!("  target: {}", info.url());
    println!("  log:    {}", log.display());
    Ok(ExitCode::SUCCESS)
}

fn stop(r: ServerRef) -> anyhow::Result<ExitCode> {
    let def = definition(&r)?;
    let mut server = ManagedServer::open(def.clone(), &r.out)?;
    if !server.is_running() {
        println!("server {} is not running", def.name);
        return Ok(ExitCode::SUCCESS);
    }
    let pid = server.status().pid.unwrap_or_default();
    server.stop()?;
    println!("server {} (pid {pid}) stopped", def.name);
    Ok(ExitCode::SUCCESS)
}

fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    let def = definition(&a.server)?;
    let mut server = ManagedServer::open(def.clone(), &a.server.out)?;
    let st = server.status();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&st)?);
    } else if st.running {
        println!(
            "server {} ({}): running, pid {}, port {}, socket {}, up {:.0}s",
            st.name,
            st.engine,
            st.pid.unwrap_or_default(),
            st.port.unwrap_or_default(),
            st.socket
                .as_deref()
                .map(|s| s.display().to_string())
                .unwrap_or_default(),
            st.uptime_secs.unwrap_or_default()
        );
        println!("  data: {}", st.data_dir.display());
        println!("  log:  {}", st.log.display());
    } else {
        println!(
            "server {} ({}): not running{}",
            st.name,
            st.engine,
            if st.initialised {
                ""
            } else {
                " (data directory not initialised)"
            }
        );
    }
    Ok(if st.running {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_RUNNING)
    })
}

/// The server's definition: from `--plan`, `--engine`, or what `start` saved.
pub(crate) fn definition(r: &ServerRef) -> anyhow::Result<ServerDef> {
    if let Some(plan) = &r.plan {
        let defs = plan_servers(plan)?;
        let names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
        return defs
            .into_iter()
            .find(|d| d.name == r.name)
            .with_context(|| {
                format!(
                    "{}: no [[server]] named {} (defined: {})",
                    plan.display(),
                    r.name,
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )
            });
    }
    if let Some(engine) = &r.engine {
        let engine: Engine = serde_json::from_value(serde_json::Value::String(engine.clone()))
            .map_err(|_| {
                anyhow::anyhow!("unknown engine {engine:?} (expected mariadb, mysql or postgres)")
            })?;
        let def = ServerDef::new(r.name.clone(), engine);
        def.validate()?;
        return Ok(def);
    }
    let saved = r.out.join("servers").join(&r.name).join(DEFINITION_FILE);
    match std::fs::read_to_string(&saved) {
        Ok(text) => {
            serde_json::from_str(&text).with_context(|| format!("reading {}", saved.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "server {}: no definition (give --plan PLAN.toml or --engine ENGINE; {} does not exist)",
            r.name,
            saved.display()
        ),
        Err(e) => Err(e).with_context(|| format!("reading {}", saved.display())),
    }
}

fn save_definition(server: &ManagedServer, def: &ServerDef) -> anyhow::Result<()> {
    let path = server.dir().join(DEFINITION_FILE);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(def)? + "\n")
        .and_then(|()| std::fs::rename(&tmp, &path))
        .with_context(|| format!("writing {}", path.display()))
}

/// The `[[server]]` tables of a plan file (only that array is read here).
pub fn plan_servers(plan: &Path) -> anyhow::Result<Vec<ServerDef>> {
    let text =
        std::fs::read_to_string(plan).with_context(|| format!("reading {}", plan.display()))?;
    parse_servers(&text).with_context(|| plan.display().to_string())
}

fn parse_servers(text: &str) -> anyhow::Result<Vec<ServerDef>> {
    let table: toml::Table = toml::from_str(text)?;
    let Some(servers) = table.get("server") else {
        return Ok(Vec::new());
    };
    let Some(list) = servers.as_array() else {
        bail!("`server` must be an array of tables ([[server]])");
    };
    let mut out: Vec<ServerDef> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let def: ServerDef = v
            .clone()
            .try_into()
            .with_context(|| format!("[[server]] #{}", i + 1))?;
        def.validate()?;
        if out.iter().any(|d| d.name == def.name) {
            bail!("two [[server]] tables are named {}", def.name);
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
        assert!(format!("{e:#}").contains("oracle"), "{e:#}");
        let e = parse_servers(
            "[[server]]\nname='a'\nengine='mariadb'\n[[server]]\nname='a'\nengine='mariadb'\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("two"), "{e}");
    }
}
