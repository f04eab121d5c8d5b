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
    /// CPU per unit of work, counters per interval and wait events: what explains the
    /// trial's figure.
    pub evidence: Option<super::TrialEvidence>,
    /// How the clients reached the server: address family, protocol mode, connection
    /// behaviours (`None` in trials stored before it was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<super::ConnectionFacts>,
    /// How the benchmark clients' connections were secured and authenticated (a connection
    /// opened as they are, just before the trial); `None` for engines without a network
    /// protocol (SQLite, the mock).
    pub security: Option<ConnectionSecurity>,
    /// The load of the prepare step that ran just before this trial (rows/s and MB/s per
    /// table): kept with the first trial measured on the data it made; `None` for trials
    /// whose data was there already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<super::LoadFigures>,
}

/// TLS and authentication of a trial's connections.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionSecurity {
    /// The TLS mode asked for, by libpq's name (`disable`, `prefer`, `require`, `verify-ca`,
    /// `verify-full`).
    pub tls_mode: String,
    /// What was negotiated; `None`: the connection was not encrypted.
    pub tls: Option<TlsSession>,
    /// The authentication method the server accepted, when the client can tell
    /// (`mysql_native_password`, `caching_sha2_password (fast)`, `… (full, RSA)`,
    /// `client_ed25519`, …).
    pub auth: Option<String>,
}

/// A negotiated TLS session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TlsSession {
    /// `TLSv1.3` or `TLSv1.2`.
    pub version: String,
    /// The cipher suite by its IANA name (`TLS13_AES_256_GCM_SHA384`, …).
    pub cipher: String,
    pub verification: TlsVerification,
    /// The handshake resumed an earlier session of this process (a TLS 1.3 ticket or a
    /// TLS 1.2 session id) instead of a full one: no certificate exchange, less CPU on both
    /// sides. `false` in trials stored before it was kept.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
}

/// What the client checked of the server's certificate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlsVerification {
    /// Nothing (`prefer`, `require`): encrypted, but the server is not authenticated.
    #[default]
    None,
    /// The chain leads to a trusted CA (`verify-ca`).
    Ca,
    /// The chain and the host name (`verify-full`).
    Full,
}

impl TlsVerification {
    pub fn name(&self) -> &'static str {
        match self {
            TlsVerification::None => "not verified",
            TlsVerification::Ca => "CA verified",
            TlsVerification::Full => "CA and host verified",
        }
    }
}

impl ConnectionSecurity {
    /// One line for consoles and reports: `TLSv1.3 TLS13_AES_256_GCM_SHA384 (CA and host
    /// verified), auth caching_sha2_password (fast)` or `no TLS, auth …`.
    pub fn summary(&self) -> String {
        let tls = match &self.tls {
            Some(t) => format!(
                "{} {} ({}{})",
                t.version,
                t.cipher,
                t.verification.name(),
                if t.resumed { ", session resumed" } else { "" }
            ),
            None => format!("no TLS (sslmode={})", self.tls_mode),
        };
        match &self.auth {
            Some(a) => format!("{tls}, auth {a}"),
            None => tls,
        }
    }
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
    /// Bytes read from and written to block devices per second over the interval.
    #[serde(alias = "disk_read_bytes_ps")]
    pub disk_read_bytes_per_s: f64,
    #[serde(alias = "disk_write_bytes_ps")]
    pub disk_write_bytes_per_s: f64,
    /// Total minus available memory at the end of the interval.
    pub mem_used_bytes: u64,
    pub mem_available_bytes: u64,
    /// The sampled process's CPU in percent of *one* CPU (like `top`: 250 = two and a half
    /// CPUs busy); `None` without a process or when it was gone or replaced.
    pub process_cpu_pct: Option<f64>,
    pub process_rss_bytes: Option<u64>,
}

/// The OS statistics over one timed run of a query (a TPC-H power or throughput step, as the
/// DBT-3 launcher sampled per query run): the counters read at the run's start and at its end,
/// on the clock of the trial's OS samples, so the run lines up with them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsSpan {
    /// When the run started, seconds since the trial's OS sampling started.
    pub start_s: f64,
    /// The figures over the run; its `t_s` is when the run ended (same clock).
    pub os: OsSample,
}

impl OsSpan {
    /// The span's length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.os.t_s - self.start_s).max(0.0)
    }

    /// Several runs as one span (a query's measured runs): shares, rates and the process's
    /// CPU weighted by each run's length, memory at its highest, from the first start to the
    /// last end. `None` for no spans.
    pub fn combine<'a>(spans: impl IntoIterator<Item = &'a OsSpan>) -> Option<OsSpan> {
        let spans: Vec<&OsSpan> = spans.into_iter().collect();
        let first = spans.first()?;
        if spans.len() == 1 {
            return Some((*first).clone());
        }
        let total: f64 = spans.iter().map(|s| s.seconds()).sum();
        // Runs too short to weigh count equally rather than not at all.
        let weight = |s: &OsSpan| {
            if total > 0.0 {
                s.seconds() / total
            } else {
                1.0 / spans.len() as f64
            }
        };
        let mean = |f: fn(&OsSample) -> f64| spans.iter().map(|s| weight(s) * f(&s.os)).sum();
        let process_cpu_pct = spans
            .iter()
            .map(|s| s.os.process_cpu_pct.map(|p| weight(s) * p))
            .sum::<Option<f64>>();
        let max = |f: fn(&OsSample) -> Option<u64>| spans.iter().filter_map(|s| f(&s.os)).max();
        Some(OsSpan {
            start_s: spans
                .iter()
                .map(|s| s.start_s)
                .fold(f64::INFINITY, f64::min),
            os: OsSample {
                t_s: spans.iter().map(|s| s.os.t_s).fold(0.0, f64::max),
                cpu_user_pct: mean(|o| o.cpu_user_pct),
                cpu_system_pct: mean(|o| o.cpu_system_pct),
                cpu_iowait_pct: mean(|o| o.cpu_iowait_pct),
                cpu_idle_pct: mean(|o| o.cpu_idle_pct),
                disk_read_bytes_per_s: mean(|o| o.disk_read_bytes_per_s),
                disk_write_bytes_per_s: mean(|o| o.disk_write_bytes_per_s),
                mem_used_bytes: max(|o| Some(o.mem_used_bytes)).unwrap_or(0),
                mem_available_bytes: spans
                    .iter()
                    .map(|s| s.os.mem_available_bytes)
                    .min()
                    .unwrap_or(0),
                process_cpu_pct,
                process_rss_bytes: max(|o| o.process_rss_bytes),
            },
        })
    }
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
    /// The build the server ran from, when its `[[server]]` names a source tree and a build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
}

/// A server built from source by dbrig: recorded with every trial and shown in reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The source tree (or tarball) as the plan named it.
    pub source: String,
    /// `git COMMIT` (`+dirty HASH` with uncommitted changes), `sha256 HASH` of a tarball, or
    /// `tree HASH` of a folder's file names, sizes and times.
    pub revision: String,
    /// `cmake-relwithdebinfo` (the seeds' BUILD/compile-amd64-max) or the build command.
    pub recipe: String,
    /// CFLAGS (CXXFLAGS add `-felide-constructors` in the built-in recipe, as the seeds).
    pub flags: String,
    /// The first line of `$CC --version` (`cc` when CC is unset).
    pub compiler: String,
    /// The install prefix dbrig chose, under its output folder, keyed by the three above.
    pub prefix: String,
    /// Whether this plan reused an earlier build of the same key.
    pub cached: bool,
    /// Milliseconds the build took (when this plan ran it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_ms: Option<u64>,
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

/// The settings a DBA reads first (cache sizes, durability, connections, read-only), in
/// display order: what `dbrig doctor` and every report show of a server's variables.
pub const KEY_SETTINGS: &[&str] = &[
    // MariaDB / MySQL
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_flush_method",
    "sync_binlog",
    "log_bin",
    "thread_handling",
    "query_cache_type",
    "read_only",
    "innodb_read_only",
    // PostgreSQL
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "max_wal_size",
    "jit",
    "default_transaction_read_only",
    // Both
    "max_connections",
];

/// Variables that name a server instance rather than configure it (its port, files, ids):
/// two servers of one configuration differ in them, so "settings that differ between
/// configurations" leaves them out. By name here; [`is_instance_value`] catches the paths
/// the list does not name.
pub fn is_instance_setting(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "port",
        "socket",
        "hostname",
        "server_id",
        "server_uuid",
        "timestamp",
        "pid_file",
        "datadir",
        "data_directory",
        "config_file",
        "hba_file",
        "ident_file",
        "external_pid_file",
        "unix_socket_directories",
        "log_error",
        "general_log_file",
        "slow_query_log_file",
        "tmpdir",
        "innodb_data_home_dir",
        "innodb_log_group_home_dir",
        "log_bin_basename",
        "log_bin_index",
        "relay_log_basename",
        "relay_log_index",
        "wsrep_node_name",
        "basedir",
        "plugin_dir",
        "lc_messages_dir",
        "character_sets_dir",
        "general_log_file",
        "log_bin_trust_function_creators_dir",
        "secure_file_priv",
        "server_version",
        "server_version_num",
        "pseudo_thread_id",
        "report_host",
        "report_port",
        "extra_port",
        "ssl_cert_file",
        "ssl_key_file",
        "ssl_ca_file",
        "ssl_crl_file",
        "krb_server_keyfile",
        "cluster_name",
        "data_directory_mode",
    ];
    EXACT.contains(&name)
        || name.starts_with("gtid_")
        || name.ends_with("_dir")
        || name.ends_with("_file")
        || name.ends_with("_directory")
}

/// A value that names a place of one instance (an absolute file or folder path): such a
/// variable differs between two servers of one configuration whatever its name.
pub fn is_instance_value(value: &str) -> bool {
    value.starts_with('/')
}

/// The engine a server's settings come from, told by its version string (and, for a
/// MySQL whose version says neither name, its variables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ServerEngine {
    MariaDb,
    MySql,
    PostgreSql,
}

impl ServerEngine {
    pub fn name(self) -> &'static str {
        match self {
            ServerEngine::MariaDb => "MariaDB",
            ServerEngine::MySql => "MySQL",
            ServerEngine::PostgreSql => "PostgreSQL",
        }
    }
}

/// How durable a server's commits are, from the settings that decide it: MariaDB/MySQL
/// InnoDB flush at commit, doublewrite and binary-log sync; PostgreSQL fsync,
/// synchronous_commit and full_page_writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Durability {
    /// Each deciding setting as `name=value`, in that order.
    pub settings: Vec<String>,
    /// The settings that relax durability (a commit can be lost, or a crash can tear a
    /// page), as `name=value`; empty when commits are fully durable.
    pub relaxed: Vec<String>,
}

impl Durability {
    pub fn is_relaxed(&self) -> bool {
        !self.relaxed.is_empty()
    }

    /// `full (…)` or `RELAXED: … (…)`: the line every report prints per configuration.
    pub fn describe(&self) -> String {
        if self.is_relaxed() {
            format!(
                "RELAXED by {} (all: {})",
                self.relaxed.join(", "),
                self.settings.join(", ")
            )
        } else {
            format!("full ({})", self.settings.join(", "))
        }
    }
}

fn is_on(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "on" | "1" | "true" | "yes")
}

impl ServerSettings {
    /// The engine these settings come from; `None` when neither the version nor the
    /// variables tell (hand-made or foreign settings).
    pub fn engine(&self) -> Option<ServerEngine> {
        let v = self.version.to_ascii_lowercase();
        if v.contains("postgresql") || self.variables.contains_key("server_version_num") {
            Some(ServerEngine::PostgreSql)
        } else if v.contains("mariadb") {
            Some(ServerEngine::MariaDb)
        } else if v.contains("mysql")
            || self.variables.contains_key("innodb_version")
            || self.variables.contains_key("version_comment")
        {
            Some(ServerEngine::MySql)
        } else {
            None
        }
    }

    /// The key settings this server has, in [`KEY_SETTINGS`] order.
    pub fn key_settings(&self) -> Vec<(&'static str, &str)> {
        KEY_SETTINGS
            .iter()
            .filter_map(|k| Some((*k, self.variables.get(*k)?.as_str())))
            .collect()
    }

    /// The durability of commits; `None` when none of the deciding settings is known
    /// (SQLite, or settings that could not be read).
    pub fn durability(&self) -> Option<Durability> {
        let get = |k: &str| self.variables.get(k).map(String::as_str);
        let mut d = Durability {
            settings: Vec::new(),
            relaxed: Vec::new(),
        };
        let mut check = |name: &str, value: Option<&str>, durable: &dyn Fn(&str) -> bool| {
            if let Some(v) = value {
                let kv = format!("{name}={v}");
                if !durable(v) {
                    d.relaxed.push(kv.clone());
                }
                d.settings.push(kv);
            }
        };
        // MariaDB / MySQL: 1 writes and flushes the log at every commit; 0 and 2 leave up to
        // a second of commits to a crash.
        check(
            "innodb_flush_log_at_trx_commit",
            get("innodb_flush_log_at_trx_commit"),
            &|v| v == "1",
        );
        check("innodb_doublewrite", get("innodb_doublewrite"), &|v| {
            // MariaDB 11.x also has `fast` (durable, fewer flushes).
            v.eq_ignore_ascii_case("fast") || is_on(v)
        });
        // The binary log's sync matters only when there is a binary log.
        if get("log_bin").is_some_and(is_on) {
            check("sync_binlog", get("sync_binlog"), &|v| v == "1");
        }
        // PostgreSQL.
        check("fsync", get("fsync"), &is_on);
        check("synchronous_commit", get("synchronous_commit"), &|v| {
            !matches!(v, "off")
        });
        check("full_page_writes", get("full_page_writes"), &is_on);
        (!d.settings.is_empty()).then_some(d)
    }
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

#[cfg(test)]
mod span_tests {
    use super::*;

    fn span(start_s: f64, end_s: f64, user: f64, read: f64, cpu: Option<f64>) -> OsSpan {
        OsSpan {
            start_s,
            os: OsSample {
                t_s: end_s,
                cpu_user_pct: user,
                disk_read_bytes_per_s: read,
                mem_used_bytes: (end_s * 10.0) as u64,
                mem_available_bytes: 100 - (end_s * 10.0) as u64,
                process_cpu_pct: cpu,
                process_rss_bytes: cpu.map(|c| c as u64),
                ..OsSample::default()
            },
        }
    }

    #[test]
    fn runs_combine_weighted_by_their_length() {
        // One second at 10 %, three seconds at 50 %: 40 % over the four seconds.
        let a = span(0.0, 1.0, 10.0, 1000.0, Some(100.0));
        let b = span(2.0, 5.0, 50.0, 0.0, Some(20.0));
        let c = OsSpan::combine([&a, &b]).unwrap();
        assert_eq!(c.start_s, 0.0);
        assert_eq!(c.os.t_s, 5.0);
        assert_eq!(c.os.cpu_user_pct, 40.0);
        assert_eq!(c.os.disk_read_bytes_per_s, 250.0);
        assert_eq!(c.os.process_cpu_pct, Some(40.0));
        assert_eq!(c.os.process_rss_bytes, Some(100));
        assert_eq!((c.os.mem_used_bytes, c.os.mem_available_bytes), (50, 50));
        // A run without the server process's figures leaves the combined figure unknown.
        let d = span(5.0, 6.0, 0.0, 0.0, None);
        assert_eq!(OsSpan::combine([&a, &d]).unwrap().os.process_cpu_pct, None);
        assert_eq!(OsSpan::combine([&a]), Some(a.clone()));
        assert_eq!(OsSpan::combine(std::iter::empty()), None);
        // Zero-length runs count equally.
        let z = OsSpan::combine([
            &span(1.0, 1.0, 10.0, 0.0, None),
            &span(1.0, 1.0, 30.0, 0.0, None),
        ]);
        assert_eq!(z.unwrap().os.cpu_user_pct, 20.0);
    }
}

#[cfg(test)]
mod durability_tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> ServerSettings {
        ServerSettings {
            variables: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..ServerSettings::default()
        }
    }

    #[test]
    fn mariadb_durability_is_flush_doublewrite_and_binlog_sync() {
        let full = settings(&[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("log_bin", "OFF"),
            ("sync_binlog", "0"),
        ]);
        let d = full.durability().unwrap();
        assert!(!d.is_relaxed());
        // No binary log: its sync does not matter.
        assert_eq!(
            d.describe(),
            "full (innodb_flush_log_at_trx_commit=1, innodb_doublewrite=ON)"
        );
        let relaxed = settings(&[
            ("innodb_flush_log_at_trx_commit", "2"),
            ("innodb_doublewrite", "ON"),
            ("log_bin", "ON"),
            ("sync_binlog", "0"),
        ]);
        let d = relaxed.durability().unwrap();
        assert_eq!(
            d.relaxed,
            ["innodb_flush_log_at_trx_commit=2", "sync_binlog=0"]
        );
        assert!(
            d.describe()
                .starts_with("RELAXED by innodb_flush_log_at_trx_commit=2")
        );
    }

    /// Each deciding setting relaxed alone, the others durable: exactly that one is named, with
    /// its own value (a setting read from another's name, or one that no longer counts, shows).
    #[test]
    fn each_durability_setting_is_judged_alone() {
        let mariadb = [
            ("innodb_flush_log_at_trx_commit", "1", "2"),
            ("innodb_doublewrite", "ON", "OFF"),
            ("sync_binlog", "1", "0"),
        ];
        let postgres = [
            ("fsync", "on", "off"),
            ("synchronous_commit", "on", "off"),
            ("full_page_writes", "on", "off"),
        ];
        for engine in [&mariadb[..], &postgres[..]] {
            let durable: Vec<(&str, &str)> = engine.iter().map(|(k, on, _)| (*k, *on)).collect();
            let with_binlog = |mut vars: Vec<(&'static str, &'static str)>| {
                if engine == mariadb {
                    vars.push(("log_bin", "ON"));
                }
                vars
            };
            let d = settings(&with_binlog(durable.clone()))
                .durability()
                .unwrap();
            assert!(!d.is_relaxed(), "{d:?}");
            assert_eq!(d.settings.len(), engine.len(), "{d:?}");
            for (name, _, off) in engine {
                let vars: Vec<(&str, &str)> = durable
                    .iter()
                    .map(|&(k, v)| if k == *name { (k, *off) } else { (k, v) })
                    .collect();
                let d = settings(&with_binlog(vars)).durability().unwrap();
                assert_eq!(d.relaxed, [format!("{name}={off}")], "{name} alone");
            }
        }
        // MariaDB 11's `fast` doublewrite is durable, and so is a `local` synchronous commit.
        for (k, v) in [
            ("innodb_doublewrite", "fast"),
            ("synchronous_commit", "local"),
        ] {
            assert!(
                !settings(&[(k, v)]).durability().unwrap().is_relaxed(),
                "{k}={v}"
            );
        }
    }

    #[test]
    fn postgres_durability_is_fsync_synchronous_commit_and_full_page_writes() {
        let d = settings(&[
            ("fsync", "on"),
            ("synchronous_commit", "off"),
            ("full_page_writes", "on"),
        ])
        .durability()
        .unwrap();
        assert_eq!(d.relaxed, ["synchronous_commit=off"]);
        assert_eq!(settings(&[("journal_mode", "wal")]).durability(), None);
        assert!(is_instance_setting("port") && is_instance_setting("gtid_binlog_pos"));
        assert!(!is_instance_setting("innodb_buffer_pool_size"));
    }

    /// The places of an instance are left out by name (the lists and the `_dir`, `_file`,
    /// `_directory` endings) or by an absolute path as value; settings are not.
    #[test]
    fn instance_settings_by_name_and_by_path() {
        for name in [
            "basedir",
            "plugin_dir",
            "lc_messages_dir",
            "slow_query_log_file",
            "hba_file",
            "log_directory",
            "server_uuid",
            "pseudo_thread_id",
        ] {
            assert!(is_instance_setting(name), "{name}");
        }
        for name in [
            "search_path",
            "innodb_log_file_size",
            "optimizer_switch",
            "shared_buffers",
        ] {
            assert!(!is_instance_setting(name), "{name}");
        }
        assert!(is_instance_value("/var/lib/mysql/"));
        assert!(!is_instance_value("\"$user\", public") && !is_instance_value("128MB"));
    }

    /// The engine is told by the version a server printed (MariaDB's and PostgreSQL's say
    /// their names), else by variables only MySQL or PostgreSQL have.
    #[test]
    fn the_engine_of_settings() {
        let with_version = |v: &str, vars: &[(&str, &str)]| ServerSettings {
            version: v.to_owned(),
            ..settings(vars)
        };
        assert_eq!(
            with_version("10.11.6-MariaDB-0+deb12u1 Debian 12", &[]).engine(),
            Some(ServerEngine::MariaDb)
        );
        assert_eq!(
            with_version("PostgreSQL 16.4 (Debian 16.4-1) on x86_64", &[]).engine(),
            Some(ServerEngine::PostgreSql)
        );
        assert_eq!(
            with_version("8.0.36 MySQL Community Server - GPL", &[]).engine(),
            Some(ServerEngine::MySql)
        );
        assert_eq!(
            with_version("8.0.36", &[("innodb_version", "8.0.36")]).engine(),
            Some(ServerEngine::MySql)
        );
        assert_eq!(with_version("3.46.0", &[]).engine(), None);
        assert_eq!(ServerEngine::PostgreSql.name(), "PostgreSQL");
    }
}
