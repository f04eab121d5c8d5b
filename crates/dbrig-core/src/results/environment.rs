//! What dbrig records about the environment of every trial, whatever its workload kind: the
//! OS samples taken during it, the hooks run around it, the page cache, where client and server
//! were allowed to run, the managed server's launch, every server setting, and the server's
//! life before and after (a restart inside makes the trial invalid).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LifeMark;

/// The environment of one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialEnvironment {
    /// The seed the trial's random values came from (OLTP keys; 0: not applicable).
    pub seed: u64,
    /// OS statistics sampled during the trial (`os-stats-interval`).
    pub os_samples: Vec<OsSample>,
    /// Hooks run for this trial (and before/after its configuration).
    pub hooks: Vec<HookOutput>,
    /// Whether the page cache was dropped before the trial, or why not.
    pub page_cache: Option<String>,
    /// The CPU lists asked for (taskset syntax).
    pub client_cpus: Option<String>,
    pub server_cpus: Option<String>,
    /// The managed server the trial ran on.
    pub server: Option<ManagedServerFacts>,
    /// Every server variable after the before-trial hooks (what the trial ran with).
    pub server_settings: Option<ServerSettings>,
    /// Why the server settings could not be read.
    pub server_settings_error: Option<String>,
    pub placement: Option<Placement>,
    pub server_life: Option<ServerLife>,
}

/// One OS statistics sample over one sampling interval. Fields a sample lacks read as zero /
/// `None`, so older or partial samples still draw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsSample {
    /// End of the interval, seconds since sampling started (just before the trial).
    pub t_s: f64,
    /// Share of all CPUs' time in user mode (including nice), 0–100.
    pub cpu_user_pct: f64,
    /// Share in kernel mode (including hard and soft interrupts), 0–100.
    pub cpu_system_pct: f64,
    /// Share idle while waiting for I/O, 0–100.
    pub cpu_iowait_pct: f64,
    /// Share idle, 0–100. The four shares plus steal sum to 100.
    pub cpu_idle_pct: f64,
    pub disk_read_bytes_ps: f64,
    pub disk_write_bytes_ps: f64,
    /// Total minus available memory at the end of the interval.
    pub mem_used_bytes: u64,
    pub mem_available_bytes: u64,
    /// The sampled process's CPU in percent of *one* CPU (like `top`: 250 = two and a half
    /// CPUs busy); `None` without a process or when it was gone or replaced.
    pub process_cpu_pct: Option<f64>,
    pub process_rss_bytes: Option<u64>,
}

/// One hook's outcome.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HookOutput {
    /// Where it ran: `before-trial`, `after-configuration-sql`, `pre-run` (a power test's), …
    pub hook: String,
    /// `plan` (`[environment.hooks]`), `configuration` (`[configuration.hooks]`) or `query`
    /// (a power test's per-query controls).
    pub scope: String,
    pub command: String,
    pub exit_code: Option<i32>,
    pub output: String,
    pub timed_out: bool,
}

impl HookOutput {
    /// Whether the hook failed (non-zero exit, SQL error, or timeout).
    pub fn failed(&self) -> bool {
        self.timed_out || self.exit_code != Some(0)
    }
}

/// What a trial records about the managed server it ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ManagedServerFacts {
    /// The `[[server]]` name.
    pub server: String,
    pub binary: String,
    /// Startup parameters it ran with (`KEY=VALUE`).
    pub params: Option<Vec<String>>,
    pub data_dir: String,
    pub read_only: bool,
    pub launch: Option<LaunchInfo>,
}

/// What was asked for and what was done when a server was launched; recorded with trials.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchInfo {
    /// The wrapper commands in front of the server binary (`setpriv …`, `numactl …`).
    pub wrappers: Vec<String>,
    /// Whether the server gets a signal when dbrig dies (false for `dbrig server start`,
    /// whose server is meant to outlive it, and when `setpriv` is missing).
    pub dies_with_dbrig: bool,
    /// NUMA placement: `interleave=all`, `not requested`, or why interleaving was not applied.
    pub numa: String,
    /// Said once to the user: what was asked for but could not be done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Every setting of a server (MariaDB/MySQL `SHOW GLOBAL VARIABLES`, PostgreSQL `pg_settings`
/// as `SHOW` prints them), its version, and for a server on this host the binary serving it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerSettings {
    pub version: String,
    pub binary: Option<String>,
    pub variable_count: usize,
    pub variables: BTreeMap<String, String>,
}

/// Where a trial ran: the CPUs asked for, the CPUs the kernel allowed dbrig and the server
/// (read back from `/proc`), and the server's NUMA placement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Placement {
    pub client_cpus_asked: Option<String>,
    pub server_cpus_asked: Option<String>,
    pub client_cpus_allowed: Option<String>,
    pub server_cpus_allowed: Option<String>,
    pub numa: Option<String>,
}

/// The server's life observed before and after a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerLife {
    pub before: Option<LifeMark>,
    pub after: Option<LifeMark>,
}

impl ServerLife {
    /// Whether the server restarted or died between the two observations.
    pub fn restarted(&self) -> bool {
        matches!((&self.before, &self.after), (Some(b), Some(a)) if super::server_restarted(b, a))
    }
}
