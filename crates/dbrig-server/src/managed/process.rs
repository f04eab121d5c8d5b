//! Process plumbing for managed servers, without libc: user lookup from `/etc/passwd`, liveness
//! and process groups from `/proc`, signals through the `kill` command, and the registry of
//! running servers that the binary's signal handler stops on exit.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Engine;

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

/// The effective uid of this process (from `/proc/self/status`); `None` if unreadable.
pub fn effective_uid() -> Option<u32> {
    let text = fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Whether we run as root.
pub fn is_root() -> bool {
    effective_uid() == Some(0)
}

/// One `/proc/<pid>/stat` reading: state letter and process group.
fn stat_of(pid: u32) -> Option<(char, u32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let _ppid = f.next()?;
    let pgrp = f.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// The command line of a process, arguments joined by spaces.
pub fn cmdline_of(pid: u32) -> Option<String> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let parts: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    Some(parts.join(" "))
}

/// Whether `pid` exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    matches!(stat_of(pid), Some((s, _)) if s != 'Z' && s != 'X')
}

/// Whether `pid` is alive and its command line mentions `data_dir` (guards against pid reuse).
pub fn server_pid_alive(pid: u32, data_dir: &Path) -> bool {
    pid_alive(pid)
        && cmdline_of(pid).is_some_and(|c| c.contains(data_dir.to_string_lossy().as_ref()))
}

/// Live (non-zombie) members of process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(rd) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| matches!(stat_of(*pid), Some((s, g)) if g == pgid && s != 'Z' && s != 'X'))
        .collect()
}

/// Processes whose command line mentions `needle` (e.g. a data directory).
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let Ok(rd) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me && pid_alive(*pid))
        .filter(|pid| cmdline_of(*pid).is_some_and(|c| c.contains(needle)))
        .collect()
}

/// Sends `signal` (a name such as `TERM`, `INT`, `KILL`) to a pid, or to a process group when
/// `group` is true. Errors (no such process) are ignored: the caller checks liveness.
pub fn send_signal(pid: u32, signal: &str, group: bool) {
    let target = if group {
        format!("-{pid}")
    } else {
        pid.to_string()
    };
    let _ = Command::new("kill")
        .args(["-s", signal, "--", &target])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
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
pub fn graceful_signal(engine: Engine) -> &'static str {
    match engine {
        // SIGTERM is "smart" shutdown for PostgreSQL (waits for clients); SIGINT is "fast".
        Engine::Postgres => "INT",
        Engine::Mariadb | Engine::Mysql => "TERM",
    }
}

/// Kills what is left of a server's process group (PostgreSQL backends outlive a killed
/// postmaster for a moment) and waits briefly until the group is empty.
pub fn kill_group_leftovers(pgid: u32) {
    if group_members(pgid).is_empty() {
        return;
    }
    send_signal(pgid, "KILL", true);
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
    fn self_is_alive() {
        assert!(pid_alive(std::process::id()));
        assert!(effective_uid().is_some());
    }
}
