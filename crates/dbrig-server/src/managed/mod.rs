//! Managed database servers: dbrig initialises a data directory, starts MariaDB, MySQL or
//! PostgreSQL from any build on a free loopback port and a Unix socket in its state folder,
//! waits until it answers, restarts it with other startup parameters, snapshots and restores
//! its data directory, and stops it (cleanly, else by SIGKILL) without leaving a process behind.
//!
//! Layout of one server's state folder, `<state>/servers/<name>/`:
//!
//! ```text
//! data/             the data directory (unless `data-dir` says otherwise), marked as dbrig's
//!                   by a `.dbrig-managed` file
//! run/              Unix socket (and PostgreSQL's lock file), owned by the server's user
//! snapshots/<name>/ copies of the data directory
//! server.log        the server's stdout and stderr, appended per start
//! state.json        pid, port, socket of the running server (removed when it stops)
//! ```
//!
//! Servers run in their own process group, so a Ctrl-C at the terminal does not kill them in
//! the middle of a write; dbrig stops them itself (see [`shutdown_all`] and [`ServerGuard`]).

mod build;
mod def;
mod launch;
mod life;
mod probe;
mod process;
mod server;

use std::path::PathBuf;

pub use build::{DEFAULT_FLAGS, RECIPE_CMAKE, build_tree_info, ensure_build};
pub use def::{Engine, Params, ServerDef};
pub use launch::{LaunchInfo, LaunchTools, find_program, plan_launch};
pub use life::{LifeMark, server_restarted};
pub use probe::{Probe, error_line, probe};
pub use process::{
    RunAs, ServerGuard, Signal, is_root, lookup_user, processes_mentioning, registered_servers,
    send_signal, shutdown_all, wait_until,
};
pub use server::{ConnectionInfo, ManagedServer, ServerState, ServerStatus};

/// Why a managed-server operation failed. Every message is one line and names the server.
#[derive(Debug, thiserror::Error)]
pub enum ManagedError {
    /// `/proc/sys/vm/drop_caches` refused (not root, read-only /proc…).
    #[error("cannot drop the page cache: {0}")]
    PageCache(std::io::Error),
    #[error("server definition: {0}")]
    BadDefinition(String),
    #[error("server {server}: {what} not found (looked for {looked})")]
    BinaryNotFound {
        server: String,
        what: &'static str,
        looked: String,
    },
    #[error("server {server}: no user {user} to run as")]
    UnknownUser { server: String, user: String },
    #[error(
        "server {server}: data directory {} is not empty and was not created by dbrig (no .dbrig-managed marker); refusing to touch it",
        dir.display()
    )]
    ForeignDataDir { server: String, dir: PathBuf },
    #[error(
        "server {server}: data directory {} belongs to a {found} server, not {expected}",
        dir.display()
    )]
    EngineMismatch {
        server: String,
        dir: PathBuf,
        found: String,
        expected: String,
    },
    #[error(
        "server {server}: user {user} cannot enter {} (mode {mode:o}); make it traversable (chmod o+x) or use another state folder",
        dir.display()
    )]
    NotTraversable {
        server: String,
        user: String,
        dir: PathBuf,
        mode: u32,
    },
    #[error("server {server}: data directory {} is not initialised (run init first)", dir.display())]
    NotInitialised { server: String, dir: PathBuf },
    #[error("server {server}: port {port} on 127.0.0.1 is already in use")]
    PortInUse { server: String, port: u16 },
    #[error("server {server}: already running (pid {pid}, port {port}); stop it first")]
    AlreadyRunning { server: String, pid: u32, port: u16 },
    #[error("server {server}: not running")]
    NotRunning { server: String },
    #[error("server {server}: initialising the data directory failed ({status}): {detail}")]
    InitFailed {
        server: String,
        status: String,
        detail: String,
    },
    #[error("server {server} did not start: {detail} (log: {})", log.display())]
    StartFailed {
        server: String,
        detail: String,
        log: PathBuf,
    },
    #[error("server {server}: the build failed ({status}); log {}; last lines:\n{tail}", log.display())]
    BuildFailed {
        server: String,
        status: String,
        log: PathBuf,
        tail: String,
    },
    #[error("server {server}: no snapshot named {snapshot}")]
    NoSnapshot { server: String, snapshot: String },
    #[error("server {server}: {context}: {source}")]
    Io {
        server: String,
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("server {server}: state file {}: {detail}", path.display())]
    State {
        server: String,
        path: PathBuf,
        detail: String,
    },
}

pub type Result<T> = std::result::Result<T, ManagedError>;
