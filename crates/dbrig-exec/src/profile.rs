//! The server's flame-graph profile of a trial (`--profile`, a plan's `profile = true`):
//! `perf record` samples the server process tree at a low rate ([`FREQUENCY_HZ`]) on a software
//! clock ([`EVENT`], which works where a VM has no hardware counters) over the measured
//! interval only; `perf script` prints the samples and inferno folds them into stacks, of which
//! the trial keeps the most frequent (`Profile::MAX_STACKS`).
//!
//! perf is given only process ids, never a connection string. When perf is missing, or may not
//! watch the server, or fails, one line says which and how to enable it; the trial runs on.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use dbrig_core::results::Profile;
use dbrig_server::managed::{Signal, is_root, send_signal};

/// The perf event sampled: the kernel's CPU clock (software, so VMs have it).
pub const EVENT: &str = "cpu-clock";
/// Samples per second and CPU: low, so the profile costs the server little (and 99, not 100,
/// so sampling does not run in step with timers).
pub const FREQUENCY_HZ: u32 = 99;

/// The line said when perf is not on the PATH.
pub const PERF_MISSING: &str = "profile: `perf` is not installed (Debian: apt-get install linux-perf; Ubuntu: linux-tools-generic); the trials run without a profile";

/// A running `perf record` on the server's processes.
pub struct Profiler {
    child: Child,
    dir: tempfile::TempDir,
}

impl Profiler {
    /// Start sampling `pid` and its live descendants (PostgreSQL's backends). Err: the line to
    /// say (perf missing or not startable).
    pub fn start(pid: u32) -> Result<Profiler, String> {
        let pids = dbrig_server::process_tree(pid);
        if pids.is_empty() {
            return Err(format!(
                "profile: the server process {pid} is gone; no profile"
            ));
        }
        let dir = tempfile::Builder::new()
            .prefix("dbrig-profile")
            .tempdir()
            .map_err(|e| format!("profile: no scratch directory for perf ({e}); no profile"))?;
        let stderr = std::fs::File::create(dir.path().join("perf.err"))
            .map_err(|e| format!("profile: no scratch file for perf ({e}); no profile"))?;
        let pid_list = pids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let child = Command::new("perf")
            .args(["record", "-q", "-g", "-e", EVENT, "-F"])
            .arg(FREQUENCY_HZ.to_string())
            .arg("-p")
            .arg(pid_list)
            .arg("-o")
            .arg(dir.path().join("perf.data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => PERF_MISSING.to_owned(),
                _ => format!("profile: `perf` could not be started ({e}); no profile"),
            })?;
        Ok(Profiler { child, dir })
    }

    /// Stop sampling and fold what perf recorded. Err: the line to say.
    pub async fn finish(self) -> Result<Profile, String> {
        tokio::task::spawn_blocking(move || self.finish_blocking())
            .await
            .map_err(|e| format!("profile: {e}"))?
    }

    /// Stop without folding (the measured interval began again: a warm-up is over).
    pub fn discard(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn finish_blocking(mut self) -> Result<Profile, String> {
        // perf that already exited could not watch the server: that is its failure.
        let early = self.child.try_wait().ok().flatten();
        if early.is_none() {
            send_signal(self.child.id(), Signal::Int, false);
            let stopped = dbrig_server::managed::wait_until(Duration::from_secs(20), || {
                matches!(self.child.try_wait(), Ok(Some(_)))
            });
            if !stopped {
                let _ = self.child.kill();
            }
        }
        let status = self.child.wait().map_err(|e| format!("profile: {e}"))?;
        let stderr = std::fs::read_to_string(self.dir.path().join("perf.err")).unwrap_or_default();
        let data = self.dir.path().join("perf.data");
        if early.is_some() || !data.exists() {
            return Err(not_permitted_line(&status.to_string(), &stderr));
        }
        fold(&data)
    }
}

/// `perf script` of the recorded samples, folded by inferno.
fn fold(data: &Path) -> Result<Profile, String> {
    let script = Command::new("perf")
        // Without the period field inferno counts each sample once (with it, it would weigh
        // them by nanoseconds of clock).
        .args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("profile: `perf script` could not be started ({e}); no profile"))?;
    if !script.status.success() {
        return Err(format!(
            "profile: `perf script` failed ({}: {}); no profile",
            script.status,
            first_line(&String::from_utf8_lossy(&script.stderr))
        ));
    }
    let mut folded = Vec::new();
    use inferno::collapse::Collapse;
    inferno::collapse::perf::Folder::default()
        .collapse(&script.stdout[..], &mut folded)
        .map_err(|e| format!("profile: the perf samples could not be folded ({e}); no profile"))?;
    Ok(Profile::from_folded(
        EVENT,
        FREQUENCY_HZ,
        folded
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| parse_folded(&l)),
    ))
}

/// `frames count` → (frames, count).
pub fn parse_folded(line: &str) -> Option<(String, u64)> {
    let (stack, count) = line.trim_end().rsplit_once(' ')?;
    Some((stack.to_owned(), count.parse().ok()?))
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
}

/// The line for a perf that exited before it was stopped: not permitted, most likely, and
/// how to permit it.
fn not_permitted_line(status: &str, stderr: &str) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let how = match (paranoid, is_root()) {
        (Some(p), false) if p > 1 => format!(
            "kernel.perf_event_paranoid is {p}: run dbrig as root, or `sysctl kernel.perf_event_paranoid=1`"
        ),
        (Some(p), _) => format!(
            "kernel.perf_event_paranoid is {p}; root, or `sysctl kernel.perf_event_paranoid=-1`, lets perf watch any process"
        ),
        (None, _) => {
            "perf events may be off in this kernel (no /proc/sys/kernel/perf_event_paranoid)"
                .to_owned()
        }
    };
    format!(
        "profile: `perf record` may not watch the server ({status}: {}); {how}; the trials run without a profile",
        first_line(stderr)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_lines_split_at_the_last_space() {
        assert_eq!(
            parse_folded("mysqld;do_command;my query 12\n"),
            Some(("mysqld;do_command;my query".to_owned(), 12))
        );
        assert_eq!(parse_folded("no-count"), None);
    }
}
