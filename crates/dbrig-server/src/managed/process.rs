//! Process plumbing for managed servers, without libc: user lookup from `/etc/passwd`, liveness
//! and process groups from `/proc` (parsed by procfs), the effective uid and signals by system
//! calls (rustix), and the registry of running servers that the binary's signal handler stops
//! on exit.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use procfs::process::Process;

use super::Engine;
use crate::procstat::process;

/// An unprivileged account to run a server as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Looks a user up in `/etc/passwd`.
pub fn lookup_user(name: &str) -> Option<RunAs> {
    let text = fs::read_to_string("/etc/passwd").ok()?;
    parse_passwd(&text, name)
}

pub(crate) fn parse_passwd(text: &str, name: &str) -> Option<RunAs> {
    text.lines().find_map(|line| {
        let mut f = line.split(':');
        let n = f.next()?;
        if n != name {
            return None;
        }
        let _pw = f.next()?;
        let uid = f.next()?.parse().ok()?;
        let gid = f.next()?.parse().ok()?;
        Some(RunAs {
            name: n.to_owned(),
            uid,
            gid,
        })
    })
}

/// The effective uid of this process (`geteuid(2)`; always known).
pub fn effective_uid() -> Option<u32> {
    Some(rustix::process::geteuid().as_raw())
}

/// Whether we run as root.
pub fn is_root() -> bool {
    effective_uid() == Some(0)
}

/// The command line of a process, arguments joined by spaces (empty for a zombie or a kernel
/// thread; `None` when the process is gone or its arguments are not UTF-8).
pub fn cmdline_of(pid: u32) -> Option<String> {
    Some(process(pid)?.cmdline().ok()?.join(" "))
}

/// Whether `pid` exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    process(pid).is_some_and(|p| p.is_alive())
}

/// Whether `pid` is alive and its command line mentions `data_dir` (guards against pid reuse).
pub fn server_pid_alive(pid: u32, data_dir: &Path) -> bool {
    pid_alive(pid)
        && cmdline_of(pid).is_some_and(|c| c.contains(data_dir.to_string_lossy().as_ref()))
}

/// Every process readable in `/proc`.
fn all_processes() -> impl Iterator<Item = Process> {
    procfs::process::all_processes()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
}

/// Live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    all_processes()
        .filter_map(|p| p.stat().ok())
        .filter(|s| u32::try_from(s.pgrp) == Ok(pgid) && s.state != 'Z' && s.state != 'X')
        .filter_map(|s| u32::try_from(s.pid).ok())
        .collect()
}

/// Processes whose command line mentions `needle` (e.g. a data directory).
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    all_processes()
        .filter(|p| u32::try_from(p.pid()) != Ok(me) && p.is_alive())
        .filter(|p| p.cmdline().is_ok_and(|c| c.join(" ").contains(needle)))
        .filter_map(|p| u32::try_from(p.pid()).ok())
        .collect()
}

/// The signals dbrig sends to servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM: a clean shutdown (MariaDB/MySQL); "smart" shutdown for PostgreSQL.
    Term,
    /// SIGINT: PostgreSQL's "fast" shutdown.
    Int,
    /// SIGKILL.
    Kill,
}

impl Signal {
    /// The name without `SIG`, as `setpriv --pdeathsig` takes it (and launches record it).
    pub fn name(self) -> &'static str {
        match self {
            Signal::Term => "TERM",
            Signal::Int => "INT",
            Signal::Kill => "KILL",
        }
    }

    fn to_rustix(self) -> rustix::process::Signal {
        match self {
            Signal::Term => rustix::process::Signal::TERM,
            Signal::Int => rustix::process::Signal::INT,
            Signal::Kill => rustix::process::Signal::KILL,
        }
    }
}

/// Sends `signal` to a pid, or to the process group `pid` leads when `group` is true (the
/// `kill` system call). Errors (no such process) are ignored: the caller checks liveness.
/// Pid 0 and pids beyond `i32::MAX` are ignored too: for `kill` they would mean this
/// process's own group or every process.
pub fn send_signal(pid: u32, signal: Signal, group: bool) {
    let Some(target) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = if group {
        rustix::process::kill_process_group(target, signal.to_rustix())
    } else {
        rustix::process::kill_process(target, signal.to_rustix())
    };
}

/// Polls `done` every 25 ms until it returns true or `timeout` passes; returns the last answer.
pub fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The signal that asks an engine's server for a clean, fast shutdown.
pub fn graceful_signal(engine: Engine) -> Signal {
    match engine {
        // SIGTERM is "smart" shutdown for PostgreSQL (waits for clients); SIGINT is "fast".
        Engine::Postgres => Signal::Int,
        Engine::Mariadb | Engine::Mysql => Signal::Term,
    }
}

/// Kills what is left of a server's process group (PostgreSQL backends outlive a killed
/// postmaster for a moment) and waits briefly until the group is empty.
pub fn kill_group_leftovers(pgid: u32) {
    if group_members(pgid).is_empty() {
        return;
    }
    send_signal(pgid, Signal::Kill, true);
    wait_until(Duration::from_secs(3), || group_members(pgid).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Registered {
    engine: Engine,
    data_dir: PathBuf,
}

static REGISTRY: Mutex<BTreeMap<u32, Registered>> = Mutex::new(BTreeMap::new());

pub(crate) fn register(pid: u32, engine: Engine, data_dir: &Path) {
    if let Ok(mut r) = REGISTRY.lock() {
        r.insert(
            pid,
            Registered {
                engine,
                data_dir: data_dir.to_owned(),
            },
        );
    }
}

pub(crate) fn deregister(pid: u32) {
    if let Ok(mut r) = REGISTRY.lock() {
        r.remove(&pid);
    }
}

/// Pids of the servers this process started and has not stopped or detached.
pub fn registered_servers() -> Vec<u32> {
    REGISTRY
        .lock()
        .map(|r| r.keys().copied().collect())
        .unwrap_or_default()
}

/// Stops every server this process started and still owns: a clean shutdown signal, up to
/// `timeout` for them to exit, then SIGKILL to each server's process group. Meant for the
/// binary's Ctrl-C / SIGTERM handler and exit paths; safe to call more than once and from any
/// thread. Servers started in their own process group do not see the terminal's Ctrl-C, so
/// without this call they would outlive dbrig.
pub fn shutdown_all(timeout: Duration) {
    let entries: Vec<(u32, Registered)> = match REGISTRY.lock() {
        Ok(r) => r.iter().map(|(k, v)| (*k, v.clone())).collect(),
        Err(_) => return,
    };
    for (pid, reg) in &entries {
        if server_pid_alive(*pid, &reg.data_dir) {
            send_signal(*pid, graceful_signal(reg.engine), false);
        }
    }
    wait_until(timeout, || {
        entries
            .iter()
            .all(|(pid, reg)| !server_pid_alive(*pid, &reg.data_dir))
    });
    for (pid, _) in &entries {
        // Each server leads its own process group (pgid == pid).
        kill_group_leftovers(*pid);
        deregister(*pid);
    }
}

/// A guard that calls [`shutdown_all`] when dropped: hold one in `main` so every exit path
/// (including an error return) stops the servers dbrig started.
#[derive(Debug)]
pub struct ServerGuard {
    pub timeout: Duration,
}

impl Default for ServerGuard {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
        }
    }
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        shutdown_all(self.timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwd_lookup() {
        let text =
            "root:x:0:0:root:/root:/bin/bash\nmysql:x:107:110:MySQL:/nonexistent:/bin/false\n";
        assert_eq!(
            parse_passwd(text, "mysql"),
            Some(RunAs {
                name: "mysql".into(),
                uid: 107,
                gid: 110
            })
        );
        assert_eq!(parse_passwd(text, "nobody"), None);
    }

    #[test]
    fn signals_reach_a_pid_and_a_process_group() {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        use std::process::Command;

        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        send_signal(child.id(), Signal::Term, false);
        assert_eq!(child.wait().unwrap().signal(), Some(15));

        // A leader with a child of its own, in their own group: SIGKILL to the group ends both.
        let mut leader = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = leader.id();
        assert!(wait_until(Duration::from_secs(5), || group_members(pgid)
            .len()
            == 2));
        kill_group_leftovers(pgid);
        assert_eq!(leader.wait().unwrap().signal(), Some(9));
        assert!(wait_until(Duration::from_secs(5), || group_members(pgid).is_empty()));
        assert_eq!(graceful_signal(Engine::Postgres).name(), "INT");
        assert_eq!(graceful_signal(Engine::Mariadb).name(), "TERM");
    }

    #[test]
    fn self_is_alive() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(u32::MAX));
        let status = Process::myself().unwrap().status().unwrap();
        assert_eq!(effective_uid(), Some(status.euid));
        let exe = std::env::current_exe().unwrap();
        let me = cmdline_of(std::process::id()).unwrap();
        assert!(me.starts_with(exe.to_str().unwrap()), "{me}");
    }

    #[test]
    fn a_child_is_found_by_its_command_line_until_it_is_reaped() {
        use std::os::unix::process::CommandExt;
        let needle = format!("dbrig-needle-{}", std::process::id());
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30", &needle])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(pid_alive(pid));
        // Until the fork has exec'd, the child still shows this test's command line.
        let line = format!("sh -c sleep 30 {needle}");
        assert!(wait_until(Duration::from_secs(5), || cmdline_of(pid)
            .is_some_and(|c| c == line)));
        // A child the shell forks shows the shell's command line until it has exec'd `sleep`:
        // wait for that, rather than assert at a moment when it may not have happened yet.
        assert!(
            wait_until(Duration::from_secs(5), || processes_mentioning(&needle)
                == vec![pid]),
            "{:?}",
            processes_mentioning(&needle)
        );
        // The shell leads the group; its `sleep` may be a second member.
        assert!(group_members(pid).contains(&pid));
        send_signal(pid, Signal::Kill, true);
        // Dead but not reaped: a zombie is not alive and not a group member.
        assert!(wait_until(Duration::from_secs(5), || !pid_alive(pid)));
        assert!(group_members(pid).is_empty());
        assert!(processes_mentioning(&needle).is_empty());
        child.wait().unwrap();
        assert_eq!(cmdline_of(pid), None);
    }
}
