//! Restart detection over plain values.
//!
//! The caller reads, before and after a trial, what the server says about its own life
//! (MariaDB/MySQL `SHOW GLOBAL STATUS LIKE 'Uptime'`, PostgreSQL
//! `extract(epoch from pg_postmaster_start_time())`) and, for a managed server, what the
//! process side says (pid, start generation). [`server_restarted`] compares two marks: a trial
//! whose marks differ mixed two server lives and is invalid.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One observation of a server's life. Every field is optional: compare what both sides know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LifeMark {
    /// When the server started, in Unix seconds. Exact for PostgreSQL
    /// (`pg_postmaster_start_time()`); derived from `Uptime` (whole seconds) for MariaDB.
    pub started_unix: Option<f64>,
    /// How precise `started_unix` is, in seconds (1.5 for an `Uptime`-derived value).
    #[serde(alias = "tolerance_secs")]
    pub tolerance_s: f64,
    /// The server's pid (managed servers).
    pub pid: Option<u32>,
    /// How many times the managed server was started by this process.
    pub generation: Option<u64>,
    /// The server (or its connection) was seen dead: the child exited, the connection was lost
    /// with a shutdown SQLSTATE (57P01/57P02/57P03) or similar.
    pub died: bool,
    /// The server took the connection but did not answer in time (stopped, hung, starved):
    /// neither alive nor dead as far as anyone can tell, so no evidence of a restart.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub silent: bool,
}

impl LifeMark {
    /// From MariaDB/MySQL `Uptime` (seconds) observed at `observed`.
    pub fn from_uptime(uptime_secs: u64, observed: SystemTime) -> Self {
        let now = observed
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        LifeMark {
            started_unix: Some(now - uptime_secs as f64),
            tolerance_s: 1.5,
            ..Default::default()
        }
    }

    /// From PostgreSQL `extract(epoch from pg_postmaster_start_time())`.
    pub fn from_start_time(start_unix_secs: f64) -> Self {
        LifeMark {
            started_unix: Some(start_unix_secs),
            tolerance_s: 0.001,
            ..Default::default()
        }
    }

    /// Adds the managed side (pid and start generation).
    pub fn with_process(mut self, pid: Option<u32>, generation: Option<u64>) -> Self {
        self.pid = pid;
        self.generation = generation;
        self
    }
}

/// Whether the server restarted or died between `before` and `after`.
pub fn server_restarted(before: &LifeMark, after: &LifeMark) -> bool {
    if before.died || after.died {
        return true;
    }
    if let (Some(a), Some(b)) = (before.pid, after.pid)
        && a != b
    {
        return true;
    }
    if let (Some(a), Some(b)) = (before.generation, after.generation)
        && a != b
    {
        return true;
    }
    if let (Some(a), Some(b)) = (before.started_unix, after.started_unix) {
        let tol = before.tolerance_s.max(after.tolerance_s).max(0.0);
        if (b - a).abs() > tol {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn uptime_marks() {
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let before = LifeMark::from_uptime(100, t0);
        // 60 s later, uptime grew by 60 (± rounding): same life.
        let same = LifeMark::from_uptime(161, t0 + Duration::from_millis(60_400));
        assert!(!server_restarted(&before, &same));
        // Uptime reset: restarted.
        let again = LifeMark::from_uptime(5, t0 + Duration::from_secs(60));
        assert!(server_restarted(&before, &again));
    }

    #[test]
    fn start_time_pid_generation_died() {
        let a = LifeMark::from_start_time(1000.25);
        assert!(!server_restarted(&a, &LifeMark::from_start_time(1000.25)));
        assert!(server_restarted(&a, &LifeMark::from_start_time(1042.0)));
        let p1 = LifeMark::default().with_process(Some(10), Some(1));
        assert!(!server_restarted(&p1, &p1));
        assert!(server_restarted(
            &p1,
            &LifeMark::default().with_process(Some(11), Some(1))
        ));
        assert!(server_restarted(
            &p1,
            &LifeMark::default().with_process(Some(10), Some(2))
        ));
        let dead = LifeMark { died: true, ..p1 };
        assert!(server_restarted(&p1, &dead));
        // Nothing known on one side: no evidence of a restart.
        assert!(!server_restarted(&LifeMark::default(), &a));
    }
}
