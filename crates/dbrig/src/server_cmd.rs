//! `dbrig server start|stop|status NAME`: bring up a managed server by hand.
//!
//! A server is defined by a `[[server]]` table of a plan (`--plan`), or ad hoc with `--engine`
//! (everything else defaulted). `start` leaves it running detached and records pid, port and
//! socket in `OUT/servers/NAME/state.json`, and the definition in `definition.json` so `stop`
//! and `status` need only the name.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use dbrig_server::managed::{ManagedServer, Params, ServerDef, shutdown_all};

use crate::out::outln;

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
    dbrig_exec::servers::save_definition(&server, &def)?;
    server.start(&extra)?;
    let info = server.connection_info()?;
    let st = server.status();
    let log = server.log_path();
    let secret_file = server.secret().is_some().then(|| server.secret_path());
    server.detach();
    outln!(
        "server {} ({}) started: pid {}, port {}, socket {}",
        def.name,
        def.engine,
        st.pid.unwrap_or_default(),
        info.port,
        info.socket.display()
    )?;
    outln!("  target: {}", info.url())?;
    if let Some(file) = secret_file {
        // The password itself is never printed: the file is the user's to read.
        outln!(
            "  password: in {} (mode 0600; --password-file takes it)",
            file.display()
        )?;
    }
    outln!("  log:    {}", log.display())?;
    Ok(ExitCode::SUCCESS)
}

fn stop(r: ServerRef) -> anyhow::Result<ExitCode> {
    let def = definition(&r)?;
    let mut server = ManagedServer::open(def.clone(), &r.out)?;
    if !server.is_running() {
        outln!("server {} is not running", def.name)?;
        return Ok(ExitCode::SUCCESS);
    }
    let pid = server.status().pid.unwrap_or_default();
    server.stop()?;
    outln!("server {} (pid {pid}) stopped", def.name)?;
    Ok(ExitCode::SUCCESS)
}

fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    let def = definition(&a.server)?;
    let mut server = ManagedServer::open(def.clone(), &a.server.out)?;
    let st = server.status();
    if a.json {
        crate::out::text(&dbrig_report::json_text(&serde_json::to_value(&st)?))?;
    } else if st.running {
        outln!(
            "server {} ({}): running, pid {}, port {}, socket {}, up {:.0}s",
            st.name,
            st.engine,
            st.pid.unwrap_or_default(),
            st.port.unwrap_or_default(),
            st.socket
                .as_deref()
                .map(|s| s.display().to_string())
                .unwrap_or_default(),
            st.uptime_s.unwrap_or_default()
        )?;
        outln!("  data: {}", st.data_dir.display())?;
        outln!("  log:  {}", st.log.display())?;
    } else {
        outln!(
            "server {} ({}): not running{}",
            st.name,
            st.engine,
            if st.initialised {
                ""
            } else {
                " (data directory not initialised)"
            }
        )?;
    }
    Ok(if st.running {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_RUNNING)
    })
}

/// The server's definition: from `--plan`, `--engine`, or what `start` saved.
pub(crate) fn definition(r: &ServerRef) -> anyhow::Result<ServerDef> {
    Ok(dbrig_exec::servers::definition(
        &r.name,
        r.plan.as_deref(),
        r.engine.as_deref(),
        &r.out,
    )?)
}
