//! Host facts as stored with every run: what the machine looked like (collected by
//! `dbrig-server`, which reads `/proc`; kept here so reports can show them without it), and
//! their one human-readable form, shared by `dbrig doctor` and every report.

use serde::{Deserialize, Serialize};

/// The kernel, as `uname` would report it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelInfo {
    /// `uname -s`, e.g. `Linux`.
    pub sysname: Option<String>,
    /// `uname -r`, e.g. `6.8.0-45-generic`.
    pub release: Option<String>,
    /// `uname -v`, the build string.
    pub version: Option<String>,
    /// The architecture dbrig was compiled for (`uname -m` differs only for 32-bit builds on
    /// 64-bit kernels).
    pub machine: String,
}

/// Another process that was using the CPU while the facts were collected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyProcess {
    pub pid: u32,
    pub name: String,
    /// Percent of one CPU (200 = two CPUs busy).
    pub cpu_pct: f64,
}

/// Facts about the host, stored with every run and shown by `dbrig doctor`.
///
/// Sizes are bytes. Limits reported as `unlimited` are `u64::MAX`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
// Runs stored by older dbrig lack later facts: they read back as unknown.
#[serde(default)]
pub struct HostFacts {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// Online logical CPUs (hardware threads).
    pub logical_cpus: Option<u32>,
    /// CPUs this process may run on (affinity mask, cgroup quota): below `logical_cpus` when
    /// dbrig is pinned or in a container.
    pub usable_cpus: Option<u32>,
    /// Distinct physical cores, when the topology is exposed.
    pub physical_cores: Option<u32>,
    /// The highest maximum frequency from cpufreq, else the highest current `cpu MHz` of
    /// `/proc/cpuinfo` (virtual machines often have only the latter).
    pub cpu_mhz: Option<f64>,
    pub mem_total_bytes: Option<u64>,
    pub mem_available_bytes: Option<u64>,
    pub swap_total_bytes: Option<u64>,
    pub swap_used_bytes: Option<u64>,
    pub kernel: KernelInfo,
    /// `PRETTY_NAME` of `/etc/os-release`.
    pub os: Option<String>,
    /// Distinct cpufreq scaling governors across CPUs; empty without cpufreq (most VMs).
    pub cpu_governors: Vec<String>,
    /// Transparent huge pages mode: `always`, `madvise` or `never`.
    pub transparent_hugepages: Option<String>,
    pub numa_nodes: Option<u32>,
    pub nofile_soft: Option<u64>,
    pub nofile_hard: Option<u64>,
    /// The data directory the facts below were resolved for.
    pub data_dir: Option<String>,
    pub data_dir_fs_type: Option<String>,
    /// The whole disk(s) behind the data directory, e.g. `nvme0n1` (members of dm/md devices).
    pub data_dir_device: Option<String>,
    /// The I/O scheduler of that disk; comma-separated distinct values for several members.
    pub io_scheduler: Option<String>,
    /// 1, 5 and 15 minute load averages.
    pub load_average: Option<[f64; 3]>,
    /// Processes using more than `dbrig_server::host::BUSY_PROCESS_PCT` of a CPU, busiest
    /// first: in a run, over its first trial (at least 0.2 s), leaving out dbrig with its
    /// children and the servers it measured; in `dbrig info`, over 0.2 s of its own.
    pub busy_processes: Vec<BusyProcess>,
}

/// Bytes in binary units, one decimal: `17.7 GiB`, `512 B`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A limit, `unlimited` for `u64::MAX`.
fn limit(v: u64) -> String {
    if v == u64::MAX {
        "unlimited".to_owned()
    } else {
        v.to_string()
    }
}

/// The known facts as `name → value` lines in human units, in reading order (machine, memory,
/// system, storage, load): what `dbrig doctor` prints and every report's host table shows.
/// Unknown facts are left out.
pub fn facts_lines(facts: &HostFacts) -> Vec<(&'static str, String)> {
    let mut m = Vec::new();
    let mut put = |k: &'static str, v: Option<String>| {
        if let Some(v) = v {
            m.push((k, v));
        }
    };
    put("hostname", facts.hostname.clone());
    put("cpu", facts.cpu_model.clone());
    put(
        "cpus",
        facts.logical_cpus.map(|l| {
            let mut s = format!("{l} logical");
            if let Some(p) = facts.physical_cores {
                s.push_str(&format!(", {p} cores"));
            }
            if let Some(u) = facts.usable_cpus.filter(|u| *u != l) {
                s.push_str(&format!(", {u} usable by dbrig"));
            }
            s
        }),
    );
    put("cpu_mhz", facts.cpu_mhz.map(|m| format!("{m:.0} MHz")));
    put(
        "governor",
        (!facts.cpu_governors.is_empty()).then(|| facts.cpu_governors.join(", ")),
    );
    put(
        "memory",
        facts
            .mem_total_bytes
            .map(|t| match facts.mem_available_bytes {
                Some(a) => format!("{} ({} available)", human_bytes(t), human_bytes(a)),
                None => human_bytes(t),
            }),
    );
    put(
        "swap",
        facts.swap_total_bytes.map(|t| match facts.swap_used_bytes {
            Some(u) if t > 0 => format!("{} ({} used)", human_bytes(t), human_bytes(u)),
            _ => human_bytes(t),
        }),
    );
    put("thp", facts.transparent_hugepages.clone());
    put("numa_nodes", facts.numa_nodes.map(|n| n.to_string()));
    put(
        "kernel",
        facts.kernel.release.as_ref().map(|r| {
            format!(
                "{} {r} {}",
                facts.kernel.sysname.as_deref().unwrap_or("?"),
                facts.kernel.machine
            )
        }),
    );
    put("os", facts.os.clone());
    put(
        "nofile",
        facts.nofile_soft.map(|s| match facts.nofile_hard {
            Some(h) => format!("{} (hard {})", limit(s), limit(h)),
            None => limit(s),
        }),
    );
    put("data_dir", facts.data_dir.clone());
    put(
        "data_dir_fs",
        facts
            .data_dir_fs_type
            .as_ref()
            .map(|f| match &facts.data_dir_device {
                Some(d) => format!("{f} on {d}"),
                None => f.clone(),
            }),
    );
    put("io_scheduler", facts.io_scheduler.clone());
    put(
        "load_average",
        facts
            .load_average
            .map(|[a, b, c]| format!("{a:.2} {b:.2} {c:.2} (1, 5, 15 min)")),
    );
    put(
        "busy_processes",
        Some(if facts.busy_processes.is_empty() {
            "none".to_owned()
        } else {
            facts
                .busy_processes
                .iter()
                .map(|p| format!("{} (pid {}) {:.0} % of a CPU", p.name, p.pid, p.cpu_pct))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    );
    m
}

impl HostFacts {
    /// What makes results of two hosts comparable, in one short id: the CPU model, its
    /// logical CPUs, the memory and the kernel release, hashed (FNV-1a, 64 bits) to 12 hex
    /// digits. Runs with the same fingerprint ran on like machines; history compares them.
    pub fn fingerprint(&self) -> String {
        let text = format!(
            "{}|{}|{}|{}",
            self.cpu_model.as_deref().unwrap_or("?"),
            self.logical_cpus.map_or("?".into(), |n| n.to_string()),
            self.mem_total_bytes.map_or("?".into(), |n| n.to_string()),
            self.kernel.release.as_deref().unwrap_or("?"),
        );
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{:012x}", h >> 16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Like machines share a fingerprint; a different CPU count, memory or kernel does not,
    /// and what changes from run to run (free memory, busy processes) does not count.
    #[test]
    fn fingerprint_is_the_machine_not_its_moment() {
        let a = HostFacts {
            cpu_model: Some("Xeon".into()),
            logical_cpus: Some(2),
            mem_total_bytes: Some(8 << 30),
            mem_available_bytes: Some(1 << 30),
            kernel: KernelInfo {
                release: Some("6.8.0".into()),
                ..KernelInfo::default()
            },
            ..HostFacts::default()
        };
        let later = HostFacts {
            mem_available_bytes: Some(5 << 30),
            ..a.clone()
        };
        assert_eq!(a.fingerprint(), later.fingerprint());
        assert_eq!(a.fingerprint().len(), 12);
        for other in [
            HostFacts {
                logical_cpus: Some(4),
                ..a.clone()
            },
            HostFacts {
                mem_total_bytes: Some(16 << 30),
                ..a.clone()
            },
            HostFacts {
                kernel: KernelInfo::default(),
                ..a.clone()
            },
        ] {
            assert_ne!(a.fingerprint(), other.fingerprint());
        }
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(19_043_745_792), "17.7 GiB");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.0 MiB");
    }

    #[test]
    fn facts_read_in_human_units() {
        let facts: HostFacts = serde_json::from_str(
            r#"{"hostname":"db1","logical_cpus":2,"physical_cores":1,"usable_cpus":2,
                "mem_total_bytes":19043745792,"mem_available_bytes":8589934592,
                "nofile_soft":1024,"nofile_hard":18446744073709551615,
                "load_average":[0.5,0.25,0.1],
                "busy_processes":[{"pid":42,"name":"mariadbd","cpu_pct":37.4}]}"#,
        )
        .unwrap();
        let lines = facts_lines(&facts);
        let get = |k: &str| lines.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("memory"), Some("17.7 GiB (8.0 GiB available)"));
        assert_eq!(get("cpus"), Some("2 logical, 1 cores"));
        assert_eq!(get("nofile"), Some("1024 (hard unlimited)"));
        assert_eq!(get("load_average"), Some("0.50 0.25 0.10 (1, 5, 15 min)"));
        assert_eq!(
            get("busy_processes"),
            Some("mariadbd (pid 42) 37 % of a CPU")
        );
        // Unknown facts are left out, not printed empty.
        assert_eq!(get("swap"), None);
        assert_eq!(lines[0], ("hostname", "db1".to_owned()));
    }
}
