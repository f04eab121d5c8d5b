//! OS statistics: per-process CPU and memory, system-wide CPU, memory and disk counters, and a
//! background sampler that turns pairs of snapshots into rates for the report's time series.
//!
//! Everything is read from `/proc` text files (no libc: the workspace forbids `unsafe`). The
//! parsers take `&str` so they are unit-tested with fixtures and never panic on odd input: a
//! field that does not parse is treated as missing.

use std::collections::BTreeMap;
use std::fs;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Clock ticks per second used by `/proc/<pid>/stat` and `/proc/stat` (`USER_HZ`).
///
/// Reading the real value needs `sysconf(_SC_CLK_TCK)` (libc, i.e. `unsafe`) or spawning
/// `getconf`. `USER_HZ` is part of the kernel's user-space ABI and is 100 on every architecture
/// dbrig targets (x86, x86_64, arm64, riscv, ppc64), independent of the kernel's internal `HZ`,
/// so we assume 100. System-wide percentages do not depend on it (they are ratios of ticks).
pub const CLOCK_TICKS_PER_SEC: u64 = 100;

/// `/proc/diskstats` always counts 512-byte sectors, whatever the device's real sector size.
const DISKSTATS_SECTOR_BYTES: u64 = 512;

// ---------------------------------------------------------------------------------------------
// /proc/<pid>/stat and /proc/<pid>/status
// ---------------------------------------------------------------------------------------------

/// The fields dbrig needs from one `/proc/<pid>/stat` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    pub pid: u32,
    /// The command name (`comm`, at most 15 bytes, may contain spaces and parentheses).
    pub comm: String,
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// Start time after boot in clock ticks: with `pid` it identifies a process across pid reuse.
    pub start_ticks: u64,
}

impl PidStat {
    /// User plus system CPU time in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
        self.utime_ticks.saturating_add(self.stime_ticks)
    }
}

/// Parses a `/proc/<pid>/stat` line.
///
/// `comm` is wrapped in parentheses and may itself contain `)` and spaces, so the numeric
/// fields are taken after the *last* `)`.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = text[..open].trim().parse().ok()?;
    let comm = text[open + 1..close].to_string();
    // Fields after comm start with field 3 (state); utime is field 14, stime 15, starttime 22.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).and_then(|s| s.parse::<u64>().ok());
    Some(PidStat {
        pid,
        comm,
        utime_ticks: field(14)?,
        stime_ticks: field(15)?,
        start_ticks: field(22)?,
    })
}

/// Parses `Key:   123 kB` lines (the shape of `/proc/meminfo` and `/proc/<pid>/status`) into
/// bytes. Lines without a number are skipped; values without a `kB` unit are kept as is.
pub fn parse_kb_lines(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let Some(value) = parts.next().and_then(|v| v.parse::<u64>().ok()) else {
            continue;
        };
        let bytes = match parts.next() {
            Some(unit) if unit.eq_ignore_ascii_case("kb") => value.saturating_mul(1024),
            _ => value,
        };
        out.insert(key.trim().to_string(), bytes);
    }
    out
}

/// CPU time and memory of one process, as seen by the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// User CPU seconds since the process started (all threads).
    pub user_s: f64,
    /// System CPU seconds since the process started (all threads).
    pub system_s: f64,
    /// Resident set size now (`VmRSS`); 0 when the kernel does not report it (kernel threads).
    pub rss_bytes: u64,
    /// Peak resident set size (`VmHWM`); 0 when not reported.
    pub peak_rss_bytes: u64,
}

impl ProcessUsage {
    /// Usage of process `pid`; `None` when it does not exist (or its files are unreadable).
    pub fn of_pid(pid: u32) -> Option<ProcessUsage> {
        Self::read(&format!("/proc/{pid}"))
    }

    /// Usage of the calling process.
    pub fn of_self() -> Option<ProcessUsage> {
        Self::read("/proc/self")
    }

    fn read(dir: &str) -> Option<ProcessUsage> {
        let stat = parse_pid_stat(&fs::read_to_string(format!("{dir}/stat")).ok()?)?;
        // status may be unreadable for another user's process while stat is not: keep the CPU.
        let status = fs::read_to_string(format!("{dir}/status"))
            .map(|s| parse_kb_lines(&s))
            .unwrap_or_default();
        Some(Self::from_parts(&stat, &status))
    }

    /// Combines a parsed `stat` line and parsed `status` lines.
    pub fn from_parts(stat: &PidStat, status: &BTreeMap<String, u64>) -> ProcessUsage {
        let rss = status.get("VmRSS").copied().unwrap_or(0);
        ProcessUsage {
            user_s: ticks_to_s(stat.utime_ticks),
            system_s: ticks_to_s(stat.stime_ticks),
            rss_bytes: rss,
            peak_rss_bytes: status.get("VmHWM").copied().unwrap_or(rss),
        }
    }
}

fn ticks_to_s(ticks: u64) -> f64 {
    ticks as f64 / CLOCK_TICKS_PER_SEC as f64
}

// ---------------------------------------------------------------------------------------------
// System-wide snapshots
// ---------------------------------------------------------------------------------------------

/// Aggregate CPU time of all CPUs in clock ticks (the `cpu` line of `/proc/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks. `guest`/`guest_nice` are not added: the kernel already counts them in
    /// `user`/`nice`.
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |a, b| a.saturating_add(*b))
    }
}

/// Parses the aggregate `cpu` line of `/proc/stat`. Old kernels have fewer columns; missing
/// ones are 0.
pub fn parse_proc_stat_cpu(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| {
        let mut it = l.split_whitespace();
        it.next() == Some("cpu")
    })?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    if v.len() < 4 {
        return None;
    }
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// Sectors read and written, summed over the devices `count_device` accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskTotals {
    pub sectors_read: u64,
    pub sectors_written: u64,
}

/// Parses `/proc/diskstats`, summing sectors read (column 6) and written (column 10) of the
/// devices for which `count_device(name)` is true. Malformed lines are skipped.
pub fn parse_diskstats(text: &str, count_device: impl Fn(&str) -> bool) -> DiskTotals {
    let mut totals = DiskTotals::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 || !count_device(f[2]) {
            continue;
        }
        let (Ok(read), Ok(written)) = (f[5].parse::<u64>(), f[9].parse::<u64>()) else {
            continue;
        };
        totals.sectors_read = totals.sectors_read.saturating_add(read);
        totals.sectors_written = totals.sectors_written.saturating_add(written);
    }
    totals
}

/// Whether a device name is a partition, judged by its name alone (used when `/sys/block`,
/// which lists whole disks only, is not available): `sda1`, `vdb2`, `nvme0n1p1`, `mmcblk0p1`.
pub fn looks_like_partition(name: &str) -> bool {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if trimmed.len() == name.len() || trimmed.is_empty() {
        return false;
    }
    // Names whose disk itself ends in a digit mark partitions with a 'p'.
    if let Some(disk) = trimmed.strip_suffix('p')
        && disk.ends_with(|c: char| c.is_ascii_digit())
    {
        return disk.starts_with("nvme") || disk.starts_with("mmcblk") || disk.starts_with("loop");
    }
    ["sd", "vd", "hd", "xvd"]
        .iter()
        .any(|p| trimmed.starts_with(p) && trimmed.len() > p.len())
}

/// Whether a `/proc/diskstats` device contributes to the disk totals: whole physical (or
/// virtual-machine) disks only. Partitions would count their disk's I/O twice; `dm-*` and
/// `md*` repeat their member disks' I/O; loop, ram and zram are memory or file-backed.
pub fn is_counted_disk(name: &str) -> bool {
    const SKIP: [&str; 5] = ["loop", "ram", "zram", "dm-", "md"];
    if SKIP.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    let sys_block = std::path::Path::new("/sys/block");
    if sys_block.is_dir() {
        // sysfs spells '/' in device names (cciss/c0d0) as '!'.
        sys_block.join(name.replace('/', "!")).exists()
    } else {
        !looks_like_partition(name)
    }
}

/// The CPU and memory of the sampled process at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessSnapshot {
    pub pid: u32,
    pub start_ticks: u64,
    pub cpu_ticks: u64,
    pub rss_bytes: u64,
}

impl ProcessSnapshot {
    /// Reads process `pid`; `None` when it is gone.
    pub fn read(pid: u32) -> Option<ProcessSnapshot> {
        let stat = parse_pid_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)?;
        let status = fs::read_to_string(format!("/proc/{pid}/status"))
            .map(|s| parse_kb_lines(&s))
            .unwrap_or_default();
        Some(ProcessSnapshot {
            pid,
            start_ticks: stat.start_ticks,
            cpu_ticks: stat.cpu_ticks(),
            rss_bytes: status.get("VmRSS").copied().unwrap_or(0),
        })
    }
}

/// System counters (and optionally one process's) at one instant. Counters are cumulative;
/// rates come from the difference of two snapshots ([`OsSample::between`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSnapshot {
    pub at: Instant,
    pub cpu: CpuTimes,
    pub mem_total_bytes: u64,
    pub mem_available_bytes: u64,
    pub disk: DiskTotals,
    pub process: Option<ProcessSnapshot>,
}

impl SystemSnapshot {
    /// Reads `/proc/stat`, `/proc/meminfo`, `/proc/diskstats` and, with `pid`, that process.
    /// Unreadable files give zeros (the samples then show 0 rather than aborting a trial).
    pub fn read(pid: Option<u32>) -> SystemSnapshot {
        let at = Instant::now();
        let cpu = fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| parse_proc_stat_cpu(&s))
            .unwrap_or_default();
        let mem = fs::read_to_string("/proc/meminfo")
            .map(|s| parse_kb_lines(&s))
            .unwrap_or_default();
        let disk = fs::read_to_string("/proc/diskstats")
            .map(|s| parse_diskstats(&s, is_counted_disk))
            .unwrap_or_default();
        SystemSnapshot {
            at,
            cpu,
            mem_total_bytes: mem.get("MemTotal").copied().unwrap_or(0),
            mem_available_bytes: mem_available(&mem),
            disk,
            process: pid.and_then(ProcessSnapshot::read),
        }
    }
}

/// `MemAvailable` (Linux ≥ 3.14), else the classic estimate free + buffers + cached.
pub(crate) fn mem_available(mem: &BTreeMap<String, u64>) -> u64 {
    mem.get("MemAvailable").copied().unwrap_or_else(|| {
        ["MemFree", "Buffers", "Cached"]
            .iter()
            .filter_map(|k| mem.get(*k))
            .sum()
    })
}

/// OS statistics over one sampling interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsSample {
    /// End of the interval, seconds since the sampler started.
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

impl OsSample {
    /// The sample for the interval from `prev` to `cur`, stamped `t_s`. Counters that go
    /// backwards (iowait can, on some kernels) count as zero.
    pub fn between(prev: &SystemSnapshot, cur: &SystemSnapshot, t_s: f64) -> OsSample {
        let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
        let (p, c) = (&prev.cpu, &cur.cpu);
        let user = d(p.user, c.user) + d(p.nice, c.nice);
        let system = d(p.system, c.system) + d(p.irq, c.irq) + d(p.softirq, c.softirq);
        let iowait = d(p.iowait, c.iowait);
        let idle = d(p.idle, c.idle);
        let total = user + system + iowait + idle + d(p.steal, c.steal);
        let pct = |x: f64| {
            if total > 0.0 {
                (100.0 * x / total).clamp(0.0, 100.0)
            } else {
                0.0
            }
        };
        let elapsed = cur.at.saturating_duration_since(prev.at).as_secs_f64();
        let per_s = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };

        let process = match (&prev.process, &cur.process) {
            (Some(a), Some(b)) if a.pid == b.pid && a.start_ticks == b.start_ticks => Some(b),
            _ => None,
        };
        let process_cpu_pct = process
            .zip(prev.process.as_ref())
            .map(|(b, a)| per_s(100.0 * ticks_to_s(b.cpu_ticks.saturating_sub(a.cpu_ticks))));
        OsSample {
            t_s,
            cpu_user_pct: pct(user),
            cpu_system_pct: pct(system),
            cpu_iowait_pct: pct(iowait),
            cpu_idle_pct: pct(idle),
            disk_read_bytes_ps: per_s(
                d(prev.disk.sectors_read, cur.disk.sectors_read) * DISKSTATS_SECTOR_BYTES as f64,
            ),
            disk_write_bytes_ps: per_s(
                d(prev.disk.sectors_written, cur.disk.sectors_written)
                    * DISKSTATS_SECTOR_BYTES as f64,
            ),
            mem_used_bytes: cur.mem_total_bytes.saturating_sub(cur.mem_available_bytes),
            mem_available_bytes: cur.mem_available_bytes,
            process_cpu_pct,
            process_rss_bytes: cur.process.as_ref().map(|p| p.rss_bytes),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Background sampler
// ---------------------------------------------------------------------------------------------

/// Samples OS statistics on a background thread every `interval` until [`OsSampler::stop`].
///
/// Sample times follow a fixed grid (start + k·interval) so reading `/proc` does not make the
/// series drift. Dropping the sampler without `stop` ends the thread and discards the samples.
#[derive(Debug)]
pub struct OsSampler {
    stop_tx: Option<Sender<()>>,
    handle: Option<JoinHandle<Vec<OsSample>>>,
}

impl OsSampler {
    /// Starts sampling; with `pid`, also that process's CPU and RSS. A zero interval is raised
    /// to 10 ms so the thread cannot spin.
    pub fn start(interval: Duration, pid: Option<u32>) -> OsSampler {
        let interval = interval.max(Duration::from_millis(10));
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("dbrig-os-sampler".into())
            .spawn(move || {
                let start = SystemSnapshot::read(pid);
                let origin = start.at;
                let mut prev = start;
                let mut samples = Vec::new();
                let mut k: u32 = 1;
                loop {
                    let deadline = origin + interval * k;
                    let wait = deadline.saturating_duration_since(Instant::now());
                    match stop_rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            let cur = SystemSnapshot::read(pid);
                            let t = cur.at.duration_since(origin).as_secs_f64();
                            samples.push(OsSample::between(&prev, &cur, t));
                            prev = cur;
                            // If reading was slower than the interval, skip missed grid points.
                            let elapsed = prev.at.duration_since(origin);
                            k = (elapsed.as_nanos() / interval.as_nanos()) as u32 + 1;
                        }
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            // A final partial interval keeps the trial's tail, unless it is too
                            // short for its percentages to mean anything.
                            let cur = SystemSnapshot::read(pid);
                            if cur.at.duration_since(prev.at) >= interval / 2 {
                                let t = cur.at.duration_since(origin).as_secs_f64();
                                samples.push(OsSample::between(&prev, &cur, t));
                            }
                            return samples;
                        }
                    }
                }
            })
            .ok();
        OsSampler {
            stop_tx: Some(stop_tx),
            handle,
        }
    }

    /// Stops the thread (immediately, not at the next interval) and returns the samples.
    /// Empty if the thread could not be spawned or panicked.
    pub fn stop(mut self) -> Vec<OsSample> {
        self.finish()
    }

    fn finish(&mut self) -> Vec<OsSample> {
        if let Some(tx) = self.stop_tx.take() {
            // The thread may already be gone; then there is nobody to tell.
            let _ = tx.send(());
        }
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for OsSampler {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_LINE: &str = "11183 (my (odd) name) R 11171 11171 9750 0 -1 4194304 100 0 0 0 \
        250 75 0 0 20 0 1 0 73963 3133440 386 18446744073709551615 0 0 0";

    #[test]
    fn pid_stat_handles_parentheses_in_comm() {
        let s = parse_pid_stat(STAT_LINE).unwrap();
        assert_eq!(s.pid, 11183);
        assert_eq!(s.comm, "my (odd) name");
        assert_eq!((s.utime_ticks, s.stime_ticks), (250, 75));
        assert_eq!(s.start_ticks, 73963);
        assert_eq!(s.cpu_ticks(), 325);
    }

    #[test]
    fn pid_stat_rejects_garbage() {
        for bad in [
            "",
            "123",
            "x (a) R 1 2",
            "12 (a) R",
            ")(",
            "12 (a) R 1 2 3 4 5 6 7 8 9 x y",
        ] {
            assert_eq!(parse_pid_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn status_and_usage() {
        let status = "Name:\tpostgres\nVmHWM:\t   20480 kB\nVmRSS:\t    10240 kB\nThreads:\t4\n\
                      Cpus_allowed:\tff\nbogus line\n";
        let m = parse_kb_lines(status);
        assert_eq!(m["VmRSS"], 10 * 1024 * 1024);
        assert_eq!(m["VmHWM"], 20 * 1024 * 1024);
        assert_eq!(m["Threads"], 4);
        assert!(!m.contains_key("Name"));
        let u = ProcessUsage::from_parts(&parse_pid_stat(STAT_LINE).unwrap(), &m);
        assert_eq!(u.user_s, 2.5);
        assert_eq!(u.system_s, 0.75);
        assert_eq!(u.rss_bytes, 10 * 1024 * 1024);
        assert_eq!(u.peak_rss_bytes, 20 * 1024 * 1024);
    }

    #[test]
    fn meminfo() {
        let text = "MemTotal:       24684096 kB\nMemFree:        23510612 kB\n\
                    MemAvailable:   24073880 kB\nSwapTotal:     0 kB\nHugePages_Total:       0\n";
        let m = parse_kb_lines(text);
        assert_eq!(m["MemTotal"], 24684096 * 1024);
        assert_eq!(mem_available(&m), 24073880 * 1024);
        assert_eq!(m["HugePages_Total"], 0);
        let old = parse_kb_lines("MemFree: 1 kB\nBuffers: 2 kB\nCached: 3 kB\n");
        assert_eq!(mem_available(&old), 6 * 1024);
    }

    #[test]
    fn proc_stat_cpu_line() {
        let text = "cpu  49751 10 9485 84674 1030 3 231 2801 7 0\n\
                    cpu0 1 2 3 4 5 6 7 8 9 0\nintr 12345\n";
        let c = parse_proc_stat_cpu(text).unwrap();
        assert_eq!(c.user, 49751);
        assert_eq!(c.nice, 10);
        assert_eq!(c.idle, 84674);
        assert_eq!(c.steal, 2801);
        assert_eq!(c.total(), 49751 + 10 + 9485 + 84674 + 1030 + 3 + 231 + 2801);
        // Old four-column kernels.
        assert_eq!(parse_proc_stat_cpu("cpu 1 2 3 4\n").unwrap().iowait, 0);
        assert_eq!(parse_proc_stat_cpu("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_proc_stat_cpu("cpu 1 2\n"), None);
        assert_eq!(parse_proc_stat_cpu(""), None);
    }

    #[test]
    fn diskstats_sums_whole_disks() {
        let text = "   7       0 loop0 5 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
                    254       0 vda 41015 7578 3904138 64188 28302 31807 4093624 20961 0 17336\n\
                    254       1 vda1 40000 7000 3900000 64000 28000 31000 4093000 20000 0 17000\n\
                    259       0 nvme0n1 1 0 1000 0 1 0 2000 0 0 0\n\
                    259       1 nvme0n1p1 1 0 1000 0 1 0 2000 0 0 0\n\
                    253       0 dm-0 1 0 999 0 1 0 999 0 0 0\n\
                    short line\n\
                    8 0 sda x 0 y 0 0 0 z\n";
        let t = parse_diskstats(text, |n| {
            !["loop", "ram", "zram", "dm-", "md"]
                .iter()
                .any(|p| n.starts_with(p))
                && !looks_like_partition(n)
        });
        assert_eq!(t.sectors_read, 3904138 + 1000);
        assert_eq!(t.sectors_written, 4093624 + 2000);
    }

    #[test]
    fn counted_disks_skip_virtual_devices() {
        for n in [
            "loop0",
            "ram0",
            "zram0",
            "dm-0",
            "md127",
            "vda1-does-not-exist",
        ] {
            assert!(!is_counted_disk(n), "{n}");
        }
    }

    #[test]
    fn partition_names() {
        for p in ["sda1", "vdb12", "nvme0n1p1", "mmcblk0p2", "xvda1"] {
            assert!(looks_like_partition(p), "{p}");
        }
        for d in ["sda", "vda", "nvme0n1", "mmcblk0", "sr0", "nbd0", "1", ""] {
            assert!(!looks_like_partition(d), "{d}");
        }
    }

    fn snap(
        at: Instant,
        cpu: CpuTimes,
        disk: (u64, u64),
        proc_: Option<(u64, u64)>,
    ) -> SystemSnapshot {
        SystemSnapshot {
            at,
            cpu,
            mem_total_bytes: 1000,
            mem_available_bytes: 400,
            disk: DiskTotals {
                sectors_read: disk.0,
                sectors_written: disk.1,
            },
            process: proc_.map(|(start, ticks)| ProcessSnapshot {
                pid: 7,
                start_ticks: start,
                cpu_ticks: ticks,
                rss_bytes: 4096,
            }),
        }
    }

    #[test]
    fn sample_between_snapshots() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(2);
        let a = snap(t0, CpuTimes::default(), (0, 0), Some((5, 100)));
        let cpu = CpuTimes {
            user: 30,
            nice: 10,
            system: 10,
            idle: 40,
            iowait: 5,
            irq: 2,
            softirq: 3,
            steal: 0,
        };
        let b = snap(t1, cpu, (2048, 4096), Some((5, 400)));
        let s = OsSample::between(&a, &b, 2.0);
        assert_eq!(s.cpu_user_pct, 40.0);
        assert_eq!(s.cpu_system_pct, 15.0);
        assert_eq!(s.cpu_iowait_pct, 5.0);
        assert_eq!(s.cpu_idle_pct, 40.0);
        assert_eq!(s.disk_read_bytes_ps, 2048.0 * 512.0 / 2.0);
        assert_eq!(s.disk_write_bytes_ps, 4096.0 * 512.0 / 2.0);
        assert_eq!(s.mem_used_bytes, 600);
        // 300 ticks = 3 s of CPU over 2 s = 150 % of one CPU.
        assert_eq!(s.process_cpu_pct, Some(150.0));
        assert_eq!(s.process_rss_bytes, Some(4096));

        // Replaced process (other start time), counters going backwards, zero interval.
        let c = snap(t0, CpuTimes::default(), (0, 0), Some((6, 0)));
        let s = OsSample::between(&b, &c, 2.0);
        assert_eq!(s.process_cpu_pct, None);
        assert_eq!(s.cpu_user_pct, 0.0);
        assert_eq!(s.disk_read_bytes_ps, 0.0);
        let s = OsSample::between(&a, &snap(t1, cpu, (0, 0), None), 2.0);
        assert_eq!((s.process_cpu_pct, s.process_rss_bytes), (None, None));
    }

    #[test]
    fn process_usage_of_self_is_real() {
        let u = ProcessUsage::of_self().expect("/proc/self readable");
        assert!(u.rss_bytes > 0);
        assert!(u.peak_rss_bytes >= u.rss_bytes);
        assert!(u.user_s >= 0.0 && u.system_s >= 0.0);
        let me = ProcessUsage::of_pid(std::process::id()).unwrap();
        assert!(me.rss_bytes > 0);
        assert_eq!(ProcessUsage::of_pid(u32::MAX), None);
    }

    #[test]
    fn sampler_on_this_machine() {
        let sampler = OsSampler::start(Duration::from_millis(300), Some(std::process::id()));
        // Burn some CPU so the process percentage is not trivially zero.
        let until = Instant::now() + Duration::from_millis(1200);
        let mut x = 0u64;
        while Instant::now() < until {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let stopped = Instant::now();
        let samples = sampler.stop();
        assert!(
            stopped.elapsed() < Duration::from_millis(250),
            "stop waited"
        );
        assert!(samples.len() >= 3, "{} samples", samples.len());
        let mut last_t = 0.0;
        for s in &samples {
            for p in [
                s.cpu_user_pct,
                s.cpu_system_pct,
                s.cpu_iowait_pct,
                s.cpu_idle_pct,
            ] {
                assert!((0.0..=100.0).contains(&p), "{s:?}");
            }
            assert!(
                s.cpu_user_pct + s.cpu_system_pct + s.cpu_iowait_pct + s.cpu_idle_pct <= 100.0001
            );
            assert!(s.t_s > last_t);
            last_t = s.t_s;
            assert!(s.mem_available_bytes > 0);
            assert!(s.process_rss_bytes.unwrap() > 0);
            assert!(s.process_cpu_pct.unwrap() >= 0.0);
        }
        let json = serde_json::to_string(&samples).unwrap();
        let back: Vec<OsSample> = serde_json::from_str(&json).unwrap();
        assert_eq!(back.len(), samples.len());
    }

    #[test]
    fn sampler_stops_promptly_with_long_interval() {
        let sampler = OsSampler::start(Duration::from_secs(60), None);
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        let samples = sampler.stop();
        assert!(t.elapsed() < Duration::from_secs(1));
        assert!(samples.is_empty());
        // Dropping without stop must not hang either.
        drop(OsSampler::start(Duration::from_secs(60), None));
    }
}
