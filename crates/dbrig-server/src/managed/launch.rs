//! How a server process is launched: the wrappers in front of the server binary and the
//! thread that forks it.
//!
//! - `setpriv --pdeathsig SIG`: the kernel sends the server its clean-shutdown signal when
//!   dbrig dies, even by SIGKILL, so a killed dbrig leaves no orphan server. (`unsafe` is
//!   forbidden in this workspace, so `prctl(PR_SET_PDEATHSIG)` is set by util-linux's
//!   `setpriv`, which then execs the server: same pid, same process.) The setting is cleared
//!   by a credential change, so when dbrig runs as root the server's user is taken *before*
//!   `setpriv` runs (never by the server's own `--user`).
//! - `numactl --interleave=all`: memory spread over all NUMA nodes, where `numactl` exists
//!   and the host has more than one node; otherwise a note says why not.
//!
//! The parent-death signal fires when the *thread* that forked the server exits, not the
//! process. Servers are therefore forked by one keeper thread that lives as long as the
//! process (see [`spawn_kept`]), whichever thread (a tokio worker, a test thread) asks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, OnceLock};

use super::Engine;
use super::process::graceful_signal;

pub use dbrig_core::results::LaunchInfo;

/// What the host offers, found once and passed in (so [`plan_launch`] is a pure function).
#[derive(Debug, Clone, Default)]
pub struct LaunchTools {
    pub setpriv: Option<PathBuf>,
    pub numactl: Option<PathBuf>,
    /// NUMA nodes of the host (`None`: unknown).
    pub numa_nodes: Option<u32>,
}

impl LaunchTools {
    /// Looks the tools up in `PATH` (and the usual system folders) and counts NUMA nodes.
    pub fn detect() -> Self {
        LaunchTools {
            setpriv: find_program("setpriv"),
            numactl: find_program("numactl"),
            numa_nodes: crate::host::numa_node_count(),
        }
    }
}

/// The wrappers for one launch. `tie` asks for the parent-death signal; `interleave` for
/// NUMA interleaving.
pub fn plan_launch(
    engine: Engine,
    tools: &LaunchTools,
    tie: bool,
    interleave: bool,
) -> (Vec<Vec<OsString>>, LaunchInfo) {
    let mut wrappers: Vec<Vec<OsString>> = Vec::new();
    let mut info = LaunchInfo::default();
    if tie {
        match &tools.setpriv {
            Some(p) => {
                wrappers.push(vec![
                    p.clone().into(),
                    "--pdeathsig".into(),
                    graceful_signal(engine).name().into(),
                    "--".into(),
                ]);
                info.dies_with_dbrig = true;
            }
            None => info.notes.push(
                "setpriv (util-linux) not found: a server would outlive a SIGKILLed dbrig"
                    .to_owned(),
            ),
        }
    }
    info.numa = if !interleave {
        "not requested".to_owned()
    } else {
        match (&tools.numactl, tools.numa_nodes) {
            (None, _) => {
                let why = "numa-interleave not applied: numactl is not installed".to_owned();
                info.notes.push(why.clone());
                why
            }
            (Some(_), Some(n)) if n <= 1 => {
                let why = format!(
                    "numa-interleave not applied: the host has {n} NUMA node (nothing to interleave)"
                );
                info.notes.push(why.clone());
                why
            }
            (Some(p), _) => {
                wrappers.push(vec![
                    p.clone().into(),
                    "--interleave=all".into(),
                    "--".into(),
                ]);
                "interleave=all".to_owned()
            }
        }
    };
    info.wrappers = wrappers
        .iter()
        .map(|w| {
            w.iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    (wrappers, info)
}

/// A command running `server_bin` behind `wrappers` (the server's own arguments follow).
pub fn wrapped_command(wrappers: &[Vec<OsString>], server_bin: &Path) -> Command {
    let mut argv: Vec<OsString> = wrappers.iter().flatten().cloned().collect();
    argv.push(server_bin.as_os_str().to_owned());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    cmd
}

/// The first executable `name` in `PATH`, `/usr/sbin`, `/usr/bin`, `/sbin`, `/bin`.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join(name)).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

type SpawnRequest = (Command, Sender<std::io::Result<Child>>);

/// Spawns `cmd` from the keeper thread: a thread started on first use that never exits, so
/// a parent-death signal set in the child fires only when the whole process dies.
pub fn spawn_kept(cmd: Command) -> std::io::Result<Child> {
    static KEEPER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        // If the thread cannot be started, `rx` is dropped with the closure and every request
        // fails below ("the server keeper thread is gone") instead of forking elsewhere.
        let _ = std::thread::Builder::new()
            .name("dbrig-server-keeper".into())
            .spawn(move || {
                // `rx` lives in this thread; the sender in the static is never dropped, so
                // the loop (and the thread) lasts until the process exits.
                while let Ok((mut cmd, reply)) = rx.recv() {
                    let _ = reply.send(cmd.spawn());
                }
            });
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    let sent = keeper
        .lock()
        .map_err(|_| std::io::Error::other("server keeper lock poisoned"))?
        .send((cmd, reply_tx));
    if sent.is_err() {
        return Err(std::io::Error::other("the server keeper thread is gone"));
    }
    reply_rx
        .recv()
        .map_err(|_| std::io::Error::other("the server keeper thread did not answer"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(setpriv: bool, numactl: bool, nodes: Option<u32>) -> LaunchTools {
        LaunchTools {
            setpriv: setpriv.then(|| PathBuf::from("/usr/bin/setpriv")),
            numactl: numactl.then(|| PathBuf::from("/usr/bin/numactl")),
            numa_nodes: nodes,
        }
    }

    fn argv(cmd: &Command) -> Vec<String> {
        std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn tied_and_interleaved_on_a_numa_host() {
        let (w, info) = plan_launch(Engine::Postgres, &tools(true, true, Some(2)), true, true);
        let cmd = wrapped_command(&w, Path::new("/usr/lib/postgresql/15/bin/postgres"));
        assert_eq!(
            argv(&cmd),
            [
                "/usr/bin/setpriv",
                "--pdeathsig",
                "INT",
                "--",
                "/usr/bin/numactl",
                "--interleave=all",
                "--",
                "/usr/lib/postgresql/15/bin/postgres"
            ]
        );
        assert!(info.dies_with_dbrig);
        assert_eq!(info.numa, "interleave=all");
        assert!(info.notes.is_empty());
        // MariaDB/MySQL shut down cleanly on TERM.
        let (w, _) = plan_launch(Engine::Mysql, &tools(true, false, None), true, false);
        assert_eq!(w[0][2], "TERM");
    }

    #[test]
    fn missing_tools_and_single_node_are_said() {
        let (w, info) = plan_launch(Engine::Mariadb, &tools(false, false, Some(1)), true, true);
        assert!(w.is_empty());
        assert!(!info.dies_with_dbrig);
        assert!(info.numa.contains("numactl is not installed"), "{info:?}");
        assert_eq!(info.notes.len(), 2, "{info:?}");
        let (w, info) = plan_launch(Engine::Mariadb, &tools(true, true, Some(1)), true, true);
        assert_eq!(w.len(), 1);
        assert!(info.numa.contains("1 NUMA node"), "{info:?}");
        // Detached servers (`dbrig server start`) are not tied; nothing to say.
        let (w, info) = plan_launch(Engine::Mariadb, &tools(true, true, Some(4)), false, false);
        assert!(w.is_empty());
        assert_eq!(info.numa, "not requested");
        assert!(info.notes.is_empty());
        let cmd = wrapped_command(&w, Path::new("/usr/sbin/mariadbd"));
        assert_eq!(argv(&cmd), ["/usr/sbin/mariadbd"]);
    }

    #[test]
    fn keeper_spawns_from_any_thread() {
        let child = std::thread::spawn(|| spawn_kept(Command::new("true")))
            .join()
            .unwrap();
        assert!(child.unwrap().wait().unwrap().success());
        let err = spawn_kept(Command::new("/nonexistent/dbrig-no-such-program")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
