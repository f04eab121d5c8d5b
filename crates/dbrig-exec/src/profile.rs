//! The server's flame-graph profile of a trial (`--profile`, a plan's `profile = true`):
//! `perf record` samples the server process tree at a low rate ([`FREQUENCY_HZ`]) on a software
//! clock ([`EVENT`], which works where a VM has no hardware counters) over the measured
//! interval only; `perf script` prints the samples and inferno folds them into stacks, of which
//! the trial keeps the most frequent (`Profile::MAX_STACKS`).
//!
//! Where perf may sample every CPU (root, or `kernel.perf_event_paranoid` ≤ 0), one
//! `perf record -a` runs and only the server's processes' samples are folded (`perf script
//! --pid`): an event per CPU costs the server nothing per context switch, while events attached
//! to the server's threads (`-p`) are switched in and out with them — on every statement, as a
//! server thread sleeps on its socket between statements — which cost oltp_read_only at 4
//! clients 17–27 % of its server CPU per transaction (`bench/evidence-cost --sides profile`,
//! and the old and new builds alternated). Elsewhere perf watches the server's processes (`-p`), the only choice left.
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

/// Why a trial has no profile: each is the one line the trial's notes say.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("profile: no scratch {what} for perf ({source}); no profile")]
    Scratch {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{PERF_MISSING}")]
    PerfMissing,
    #[error("profile: `perf` could not be started ({0}); no profile")]
    StartRecord(std::io::Error),
    #[error("profile: `perf script` could not be started ({0}); no profile")]
    StartScript(std::io::Error),
    #[error("profile: the server process {0} is gone; no profile")]
    ServerGone(u32),
    #[error("profile: {0}")]
    Wait(#[from] std::io::Error),
    #[error("profile: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("profile: `perf script` failed ({status}: {first_line}); no profile")]
    Script { status: String, first_line: String },
    #[error("profile: the perf samples could not be folded ({0}); no profile")]
    Fold(String),
    /// perf exited before it was stopped: not permitted, most likely, and how to permit it.
    #[error(
        "profile: `perf record` may not watch the server ({status}: {first_line}); {how}; the trials run without a profile"
    )]
    NotPermitted {
        status: String,
        first_line: String,
        how: String,
    },
}

/// The `perf record`s running for the server's processes: system-wide, the one sampling every
/// CPU; otherwise one started with the measured interval on the process tree as it was, and
/// one more for each set of processes that appeared since (PostgreSQL forks a backend per
/// connection, and perf follows only children forked by what it watches... which a
/// postmaster's already forked backends are not).
pub struct Profiler {
    root: u32,
    /// The server's processes seen so far: what the perfs watch, or (system-wide) whose
    /// samples are kept.
    watched: std::collections::HashSet<u32>,
    sessions: Vec<Child>,
    /// One perf samples every CPU ([`may_sample_every_cpu`]).
    system_wide: bool,
    dir: tempfile::TempDir,
}

/// Whether perf may sample every CPU here: as root, or when `kernel.perf_event_paranoid` is 0
/// or less (from 1 up, CPU-wide events need CAP_PERFMON).
pub fn may_sample_every_cpu() -> bool {
    is_root()
        || std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .is_some_and(|p| p <= 0)
}

impl Profiler {
    /// Start sampling `pid` and its live descendants. Err: the line to say (perf missing or
    /// not startable).
    pub fn start(pid: u32) -> Result<Profiler, ProfileError> {
        let dir = tempfile::Builder::new()
            .prefix("dbrig-profile")
            .tempdir()
            .map_err(|source| ProfileError::Scratch {
                what: "directory",
                source,
            })?;
        let system_wide = may_sample_every_cpu();
        let mut p = Profiler {
            root: pid,
            watched: Default::default(),
            sessions: Vec::new(),
            system_wide,
            dir,
        };
        p.follow()?;
        if p.watched.is_empty() {
            return Err(ProfileError::ServerGone(pid));
        }
        Ok(p)
    }

    /// Also sample the server's processes that appeared since the last look (new
    /// connections' backends). Err: perf could not be started.
    pub fn follow(&mut self) -> Result<(), ProfileError> {
        let new: Vec<u32> = dbrig_server::process_tree(self.root)
            .into_iter()
            .filter(|p| !self.watched.contains(p))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        // System-wide, the one perf already samples the new processes: they are only
        // remembered, so that their samples are kept.
        if self.system_wide && !self.sessions.is_empty() {
            self.watched.extend(new);
            return Ok(());
        }
        let n = self.sessions.len();
        let stderr = std::fs::File::create(self.dir.path().join(format!("perf{n}.err"))).map_err(
            |source| ProfileError::Scratch {
                what: "file",
                source,
            },
        )?;
        let mut perf = Command::new("perf");
        perf.args(["record", "-q", "-g", "-e", EVENT, "-F"])
            .arg(FREQUENCY_HZ.to_string());
        match self.system_wide {
            true => perf.arg("-a"),
            false => perf
                .arg("-p")
                .arg(new.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
        };
        let child = perf
            .arg("-o")
            .arg(self.dir.path().join(format!("perf{n}.data")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => ProfileError::PerfMissing,
                _ => ProfileError::StartRecord(source),
            })?;
        self.watched.extend(new);
        self.sessions.push(child);
        Ok(())
    }

    /// Stop sampling and fold what perf recorded. Err: the line to say.
    pub async fn finish(self) -> Result<Profile, ProfileError> {
        tokio::task::spawn_blocking(move || self.finish_blocking()).await?
    }

    /// Stop without folding (the measured interval began again: a warm-up is over).
    pub fn discard(mut self) {
        for c in &mut self.sessions {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn finish_blocking(mut self) -> Result<Profile, ProfileError> {
        // A perf that already exited could not watch the server: that is its failure.
        let early: Vec<bool> = self
            .sessions
            .iter_mut()
            .map(|c| matches!(c.try_wait(), Ok(Some(_))))
            .collect();
        for (c, _) in self.sessions.iter().zip(&early).filter(|(_, e)| !**e) {
            send_signal(c.id(), Signal::Int, false);
        }
        let mut stacks = Vec::new();
        let mut failure = None;
        for (n, (c, early)) in self.sessions.iter_mut().zip(early).enumerate() {
            let stopped = dbrig_server::managed::wait_until(Duration::from_secs(20), || {
                matches!(c.try_wait(), Ok(Some(_)))
            });
            if !stopped {
                let _ = c.kill();
            }
            let status = c.wait()?;
            let data = self.dir.path().join(format!("perf{n}.data"));
            if early || !data.exists() {
                let stderr = std::fs::read_to_string(self.dir.path().join(format!("perf{n}.err")))
                    .unwrap_or_default();
                // Processes that came and went (a closed connection's backend) leave a perf
                // that found nothing to watch: only the first one's failure is the profile's.
                failure.get_or_insert_with(|| not_permitted_line(&status.to_string(), &stderr));
                continue;
            }
            // System-wide, the samples of every other process are left out.
            let keep: Option<Vec<u32>> = self
                .system_wide
                .then(|| self.watched.iter().copied().collect());
            stacks.extend(fold(&data, keep.as_deref())?);
        }
        if stacks.is_empty()
            && let Some(line) = failure
        {
            return Err(line);
        }
        Ok(Profile::from_folded(EVENT, FREQUENCY_HZ, stacks))
    }
}

/// `perf script` of the recorded samples (only those of the processes `keep`, when given),
/// folded by inferno.
fn fold(data: &Path, keep: Option<&[u32]>) -> Result<Vec<(String, u64)>, ProfileError> {
    let mut script = Command::new("perf");
    // Without the period field inferno counts each sample once (with it, it would weigh
    // them by nanoseconds of clock).
    script.args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso"]);
    if let Some(pids) = keep {
        let list = pids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        script.arg(format!("--pid={list}"));
    }
    let script = script
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .output()
        .map_err(ProfileError::StartScript)?;
    if !script.status.success() {
        return Err(ProfileError::Script {
            status: script.status.to_string(),
            first_line: first_line(&String::from_utf8_lossy(&script.stderr)).to_owned(),
        });
    }
    let mut folded = Vec::new();
    use inferno::collapse::Collapse;
    inferno::collapse::perf::Folder::default()
        .collapse(&script.stdout[..], &mut folded)
        .map_err(|e| ProfileError::Fold(e.to_string()))?;
    Ok(folded
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| parse_folded(&l))
        .collect())
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
fn not_permitted_line(status: &str, stderr: &str) -> ProfileError {
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
    ProfileError::NotPermitted {
        status: status.to_owned(),
        first_line: first_line(stderr).to_owned(),
        how,
    }
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
