//! OS statistics: per-process CPU and memory, system-wide CPU, memory and disk counters, and a
//! background sampler that turns pairs of snapshots into rates for the report's time series.
//!
//! The `/proc` files are parsed by the `procfs` crate, which also gives the kernel's real
//! clock-tick rate for the `stat` files' tick counts (`procfs::ticks_per_second()`: the
//! `AT_CLKTCK` the kernel hands every process, what `sysconf(_SC_CLK_TCK)` returns, read by
//! rustix without `unsafe` of ours). Reading never fails a trial: a file that cannot be read
//! or parsed gives zeros (system counters) or `None` (a process).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use procfs::process::Process;
use procfs::{Current, CurrentSI, DiskStat, KernelStats, Meminfo};
use serde::{Deserialize, Serialize};

/// `/proc/diskstats` always counts 512-byte sectors, whatever the device's real sector size.
const DISKSTATS_SECTOR_BYTES: u64 = 512;

// ---------------------------------------------------------------------------------------------
// One process
// ---------------------------------------------------------------------------------------------

/// The process `pid`, if it exists (pids above `i32::MAX` do not).
pub(crate) fn process(pid: u32) -> Option<Process> {
    Process::new(i32::try_from(pid).ok()?).ok()
}

/// Clock ticks (`utime`, `stime` of `/proc/<pid>/stat`) in seconds at `ticks_per_s`.
pub(crate) fn ticks_to_s(ticks: u64, ticks_per_s: u64) -> f64 {
    ticks as f64 / ticks_per_s.max(1) as f64
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
        Self::read(&process(pid)?)
    }

    /// Usage of the calling process.
    pub fn of_self() -> Option<ProcessUsage> {
        Self::read(&Process::myself().ok()?)
    }

    fn read(p: &Process) -> Option<ProcessUsage> {
        let stat = p.stat().ok()?;
        // status may be unreadable for another user's process while stat is not: keep the CPU.
        let status = p.status().ok();
        Some(Self::from_counters(
            (stat.utime, stat.stime),
            procfs::ticks_per_second(),
            status.as_ref().and_then(|s| s.vmrss),
            status.as_ref().and_then(|s| s.vmhwm),
        ))
    }

    /// From user and system CPU ticks at `ticks_per_s`, and `VmRSS`/`VmHWM` in KiB (as the
    /// kernel's `status` file reports them).
    pub fn from_counters(
        (utime, stime): (u64, u64),
        ticks_per_s: u64,
        vm_rss_kib: Option<u64>,
        vm_hwm_kib: Option<u64>,
    ) -> ProcessUsage {
        let rss = vm_rss_kib.unwrap_or(0).saturating_mul(1024);
        ProcessUsage {
            user_s: ticks_to_s(utime, ticks_per_s),
            system_s: ticks_to_s(stime, ticks_per_s),
            rss_bytes: rss,
            peak_rss_bytes: vm_hwm_kib.map_or(rss, |k| k.saturating_mul(1024)),
        }
    }
}

/// Resets this process's peak resident set size (`VmHWM`) to what it holds now, so the next
/// reading of [`ProcessUsage::of_self`]'s `peak_rss_bytes` is the peak since this call: a
/// trial's own peak, not an earlier trial's or the prepare's (`5` to `/proc/self/clear_refs`,
/// Linux 4.0 and later). False when the kernel refused it; the peak then counts from the
/// process's start.
///
/// This is the process's own memory only. The peak that `wait4` reports for a process — what
/// `/usr/bin/time` prints as "Maximum resident set size" — is the largest of the process's and
/// of every child it reaped, and dbrig reaps the managed servers it started: for a plan on a
/// managed MariaDB that figure is the server's (663 MB at 4 096 clients, where dbrig held 112
/// MB).
pub fn reset_own_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", b"5").is_ok()
}

/// CPU seconds (user + system) a server has spent: the process `pid` (all its threads), its
/// descendants alive now, and the children it has reaped (`cutime`, `cstime`). A threaded
/// server (MariaDB) is its own process; PostgreSQL's work is done by a process per connection,
/// forked by the postmaster, whose time moves to the postmaster's children's time when it
/// exits. `None` when `pid` is gone, or when no consistent reading could be taken.
///
/// The processes' stats are read one by one, so a child reaped during the reading moves its
/// time from its own stat (not read yet, or gone by then) to its parent's reaped time (read
/// already): it is lost, or counted twice. That is when a trial's last sample is taken —
/// PostgreSQL's backends end as the clients close their connections — and it stored a
/// one-client run's server CPU at a tenth or less of the truth. So every parent in the tree is
/// read again after the walk: a reaped time that moved means a child was reaped meanwhile, and
/// the tree is read again.
pub fn tree_cpu_s(pid: u32) -> Option<f64> {
    for _ in 0..TREE_READ_ATTEMPTS {
        match consistent_tree_ticks(pid) {
            Ok(ticks) => return ticks.map(|t| ticks_to_s(t, procfs::ticks_per_second())),
            Err(()) => continue,
        }
    }
    None
}

/// The length of a clock tick in seconds: the resolution of every CPU time `/proc` gives.
pub fn cpu_tick_s() -> f64 {
    1.0 / procfs::ticks_per_second().max(1) as f64
}

/// Online logical CPUs of the host (not this process's affinity: a server may use all of
/// them), read once.
pub fn online_cpus() -> Option<u32> {
    static CPUS: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| {
        procfs::CpuInfo::current()
            .ok()
            .map(|c| c.num_cores() as u32)
            .filter(|&n| n > 0)
    })
}

/// Attempts at a consistent reading of a process tree's CPU (each a walk of `/proc`).
const TREE_READ_ATTEMPTS: usize = 5;

/// One reading of `pid`'s tree in clock ticks: `Ok(None)` when `pid` is gone, `Err(())` when a
/// child was reaped while it was read (read again).
fn consistent_tree_ticks(pid: u32) -> Result<Option<u64>, ()> {
    let Some(root) = process(pid).and_then(|p| p.stat().ok()) else {
        return Ok(None);
    };
    let reaped =
        |s: &procfs::process::Stat| u64::try_from(s.cutime.max(0) + s.cstime.max(0)).unwrap_or(0);
    let own = |s: &procfs::process::Stat| s.utime.saturating_add(s.stime).saturating_add(reaped(s));
    let mut children: std::collections::HashMap<i32, Vec<procfs::process::Stat>> =
        std::collections::HashMap::new();
    if let Ok(all) = procfs::process::all_processes() {
        for st in all.filter_map(Result::ok).filter_map(|p| p.stat().ok()) {
            children.entry(st.ppid).or_default().push(st);
        }
    }
    let mut total = own(&root);
    // Every process of the tree whose children were read, with its reaped time then.
    let mut parents = vec![(root.pid, reaped(&root))];
    let mut queue = vec![root.pid];
    while let Some(parent) = queue.pop() {
        for st in children.remove(&parent).unwrap_or_default() {
            total = total.saturating_add(own(&st));
            parents.push((st.pid, reaped(&st)));
            queue.push(st.pid);
        }
    }
    for (p, was) in parents {
        let now = u32::try_from(p)
            .ok()
            .and_then(process)
            .and_then(|p| p.stat().ok());
        match now {
            Some(st) if reaped(&st) == was => {}
            // The root gone: the server is (no reading). A child gone since it was read: its
            // parent's reaped time says whether that moved anything.
            None if p == root.pid => return Ok(None),
            None => {}
            Some(_) => return Err(()),
        }
    }
    Ok(Some(total))
}

/// `pid` and its live descendants (a PostgreSQL postmaster and its backends), `pid` first;
/// empty when `pid` is gone. A profiler attaches to each: one already forked is not followed.
pub fn process_tree(pid: u32) -> Vec<u32> {
    let Some(root) = process(pid).and_then(|p| p.stat().ok()) else {
        return Vec::new();
    };
    let mut children: std::collections::HashMap<i32, Vec<i32>> = std::collections::HashMap::new();
    if let Ok(all) = procfs::process::all_processes() {
        for st in all.filter_map(Result::ok).filter_map(|p| p.stat().ok()) {
            children.entry(st.ppid).or_default().push(st.pid);
        }
    }
    let mut tree = vec![root.pid];
    let mut next = 0;
    while next < tree.len() {
        tree.extend(children.remove(&tree[next]).unwrap_or_default());
        next += 1;
    }
    tree.into_iter()
        .filter_map(|p| u32::try_from(p).ok())
        .collect()
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

impl From<&procfs::CpuTime> for CpuTimes {
    /// Columns that old kernels lack are 0.
    fn from(c: &procfs::CpuTime) -> Self {
        CpuTimes {
            user: c.user,
            nice: c.nice,
            system: c.system,
            idle: c.idle,
            iowait: c.iowait.unwrap_or(0),
            irq: c.irq.unwrap_or(0),
            softirq: c.softirq.unwrap_or(0),
            steal: c.steal.unwrap_or(0),
        }
    }
}

/// Sectors read and written, summed over the devices `count_device` accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskTotals {
    pub sectors_read: u64,
    pub sectors_written: u64,
}

impl DiskTotals {
    /// Sums the `/proc/diskstats` entries of the devices for which `count_device(name)` is true.
    pub(crate) fn of(stats: &[DiskStat], count_device: impl Fn(&str) -> bool) -> DiskTotals {
        stats
            .iter()
            .filter(|d| count_device(&d.name))
            .fold(DiskTotals::default(), |t, d| DiskTotals {
                sectors_read: t.sectors_read.saturating_add(d.sectors_read),
                sectors_written: t.sectors_written.saturating_add(d.sectors_written),
            })
    }
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
    /// Start time after boot in clock ticks: with `pid` it identifies a process across pid
    /// reuse.
    pub start_ticks: u64,
    /// User plus system CPU seconds since the process started.
    pub cpu_s: f64,
    pub rss_bytes: u64,
}

impl ProcessSnapshot {
    /// Reads process `pid`; `None` when it is gone.
    pub fn read(pid: u32) -> Option<ProcessSnapshot> {
        let p = process(pid)?;
        let stat = p.stat().ok()?;
        let rss_kib = p.status().ok().and_then(|s| s.vmrss).unwrap_or(0);
        Some(ProcessSnapshot {
            pid,
            start_ticks: stat.starttime,
            cpu_s: ticks_to_s(
                stat.utime.saturating_add(stat.stime),
                procfs::ticks_per_second(),
            ),
            rss_bytes: rss_kib.saturating_mul(1024),
        })
    }
}

/// System counters (and optionally one process's) at one instant. Counters are cumulative;
/// rates come from the difference of two snapshots ([`sample_between`]).
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
        let cpu = KernelStats::current()
            .map(|k| CpuTimes::from(&k.total))
            .unwrap_or_default();
        let mem = Meminfo::current().ok();
        let disk = procfs::diskstats()
            .map(|d| DiskTotals::of(&d, is_counted_disk))
            .unwrap_or_default();
        SystemSnapshot {
            at,
            cpu,
            mem_total_bytes: mem.as_ref().map_or(0, |m| m.mem_total),
            mem_available_bytes: mem.as_ref().map_or(0, mem_available),
            disk,
            process: pid.and_then(ProcessSnapshot::read),
        }
    }
}

/// `MemAvailable` (Linux ≥ 3.14), else the classic estimate free + buffers + cached.
pub(crate) fn mem_available(mem: &Meminfo) -> u64 {
    mem.mem_available.unwrap_or_else(|| {
        mem.mem_free
            .saturating_add(mem.buffers)
            .saturating_add(mem.cached)
    })
}

/// OS statistics over one sampling interval: the stored type (`dbrig_core::results`), made
/// here from two snapshots ([`sample_between`]).
pub use dbrig_core::results::OsSample;

/// The sample for the interval from `prev` to `cur`, stamped `t_s`. Counters that go
/// backwards (iowait can, on some kernels) count as zero.
pub fn sample_between(prev: &SystemSnapshot, cur: &SystemSnapshot, t_s: f64) -> OsSample {
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
        .map(|(b, a)| per_s(100.0 * (b.cpu_s - a.cpu_s).max(0.0)));
    OsSample {
        t_s,
        cpu_user_pct: pct(user),
        cpu_system_pct: pct(system),
        cpu_iowait_pct: pct(iowait),
        cpu_idle_pct: pct(idle),
        disk_read_bytes_per_s: per_s(
            d(prev.disk.sectors_read, cur.disk.sectors_read) * DISKSTATS_SECTOR_BYTES as f64,
        ),
        disk_write_bytes_per_s: per_s(
            d(prev.disk.sectors_written, cur.disk.sectors_written) * DISKSTATS_SECTOR_BYTES as f64,
        ),
        mem_used_bytes: cur.mem_total_bytes.saturating_sub(cur.mem_available_bytes),
        mem_available_bytes: cur.mem_available_bytes,
        process_cpu_pct,
        process_rss_bytes: cur.process.as_ref().map(|p| p.rss_bytes),
    }
}

// ---------------------------------------------------------------------------------------------
// Background sampler
// ---------------------------------------------------------------------------------------------

/// Samples OS statistics on a background thread every `interval` until [`OsSampler::stop`].
///
/// Sample times follow a fixed grid (start + k·interval) so reading `/proc` does not make the
/// series drift. Dropping the sampler without `stop` ends the thread and discards the samples.
/// Its [`OsClock`] measures single runs (a TPC-H query's) on the same clock.
#[derive(Debug)]
pub struct OsSampler {
    stop_tx: Option<Sender<()>>,
    handle: Option<JoinHandle<Vec<OsSample>>>,
    clock: OsClock,
    /// Samples taken so far (a final partial one is added at stop).
    taken: Arc<AtomicUsize>,
}

/// The sampling clock of one trial and the process it follows: measures a span of it (one
/// query run) from counters read at its start and end, stamped in seconds since sampling
/// started, so a span lines up with the trial's samples. Cheap to clone; shared with the
/// sampler thread, so [`OsClock::follow`] moves the samples to a restarted server too.
#[derive(Debug, Clone)]
pub struct OsClock {
    origin: Instant,
    /// The sampled process; 0: none (pid 0 is never a process in `/proc`).
    pid: Arc<AtomicU32>,
}

impl OsClock {
    fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|&p| p != 0)
    }

    /// Follow another process from now on (the server after a restart), or none.
    pub fn follow(&self, pid: Option<u32>) {
        self.pid.store(pid.unwrap_or(0), Ordering::Relaxed);
    }

    /// Reads the counters at the start of a span.
    pub fn begin(&self) -> SystemSnapshot {
        SystemSnapshot::read(self.pid())
    }

    /// The span from `start` (a [`OsClock::begin`]) to now.
    pub fn end(&self, start: &SystemSnapshot) -> dbrig_core::results::OsSpan {
        let cur = SystemSnapshot::read(self.pid());
        let at = |s: &SystemSnapshot| s.at.saturating_duration_since(self.origin).as_secs_f64();
        dbrig_core::results::OsSpan {
            start_s: at(start),
            os: sample_between(start, &cur, at(&cur)),
        }
    }
}

impl OsSampler {
    /// Starts sampling; with `pid`, also that process's CPU and RSS. A zero interval is raised
    /// to 10 ms so the thread cannot spin.
    pub fn start(interval: Duration, pid: Option<u32>) -> OsSampler {
        let interval = interval.max(Duration::from_millis(10));
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let pid = Arc::new(AtomicU32::new(pid.unwrap_or(0)));
        let start = SystemSnapshot::read(Some(pid.load(Ordering::Relaxed)).filter(|&p| p != 0));
        let clock = OsClock {
            origin: start.at,
            pid,
        };
        let thread_clock = clock.clone();
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&taken);
        let handle = std::thread::Builder::new()
            .name("dbrig-os-sampler".into())
            .spawn(move || {
                let clock = thread_clock;
                let origin = clock.origin;
                let mut prev = start;
                let mut samples = Vec::new();
                let mut k: u32 = 1;
                loop {
                    let deadline = origin + interval * k;
                    let wait = deadline.saturating_duration_since(Instant::now());
                    match stop_rx.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {
                            let cur = SystemSnapshot::read(clock.pid());
                            let t = cur.at.duration_since(origin).as_secs_f64();
                            samples.push(sample_between(&prev, &cur, t));
                            counter.store(samples.len(), Ordering::Release);
                            prev = cur;
                            // If reading was slower than the interval, skip missed grid points.
                            let elapsed = prev.at.duration_since(origin);
                            k = (elapsed.as_nanos() / interval.as_nanos()) as u32 + 1;
                        }
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            // A final partial interval keeps the trial's tail, unless it is too
                            // short for its percentages to mean anything.
                            let cur = SystemSnapshot::read(clock.pid());
                            if cur.at.duration_since(prev.at) >= interval / 2 {
                                let t = cur.at.duration_since(origin).as_secs_f64();
                                samples.push(sample_between(&prev, &cur, t));
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
            clock,
            taken,
        }
    }

    /// The sampler's clock, for spans of the trial (query runs).
    pub fn clock(&self) -> OsClock {
        self.clock.clone()
    }

    /// How many interval samples the thread has taken so far: what a caller (a test) waits
    /// for instead of a wall-clock time a busy machine may not give the thread.
    pub fn samples_taken(&self) -> usize {
        self.taken.load(Ordering::Acquire)
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
    use procfs::{FromBufRead, FromBufReadSI};

    /// A process tree whose children keep ending, as a PostgreSQL postmaster's backends do
    /// when clients disconnect: every reading of its CPU is at least the one before. A child
    /// reaped while the tree is read must not vanish from it (its time moves from its own stat
    /// to its parent's reaped time in between; a one-client run's server CPU was once stored at
    /// a tenth of the truth this way).
    #[test]
    fn a_tree_whose_children_end_never_loses_their_cpu() {
        // A shell forks 60 children one after the other, each busy ~30 ms, and reaps each.
        let mut parent = std::process::Command::new("sh")
            .args([
                "-c",
                "for n in $(seq 60); do (i=0; while [ $i -lt 15000 ]; do i=$((i+1)); done); done",
            ])
            .spawn()
            .expect("sh runs");
        let pid = parent.id();
        let mut last = 0.0;
        let mut readings = 0;
        let mut drops = Vec::new();
        while parent.try_wait().expect("wait").is_none() {
            let Some(now) = tree_cpu_s(pid) else {
                continue;
            };
            if now < last {
                drops.push((last, now));
            }
            last = last.max(now);
            readings += 1;
        }
        assert!(readings > 20, "only {readings} readings");
        assert!(last > 0.3, "the children's CPU: {last} s");
        assert!(
            drops.is_empty(),
            "{} of {readings} readings lost a child's CPU: {drops:?}",
            drops.len()
        );
    }

    #[test]
    fn usage_from_counters_uses_the_tick_rate() {
        let u = ProcessUsage::from_counters((250, 75), 100, Some(10240), Some(20480));
        assert_eq!(u.user_s, 2.5);
        assert_eq!(u.system_s, 0.75);
        assert_eq!(u.rss_bytes, 10 * 1024 * 1024);
        assert_eq!(u.peak_rss_bytes, 20 * 1024 * 1024);
        // A kernel with another USER_HZ: the same ticks are fewer seconds.
        let u = ProcessUsage::from_counters((250, 75), 250, None, None);
        assert_eq!((u.user_s, u.system_s), (1.0, 0.3));
        assert_eq!((u.rss_bytes, u.peak_rss_bytes), (0, 0));
        // No VmHWM: the peak is at least the current RSS.
        let u = ProcessUsage::from_counters((0, 0), 100, Some(4), None);
        assert_eq!(u.peak_rss_bytes, 4096);
    }

    /// The fields procfs requires in /proc/meminfo (present on every kernel since 2.6).
    const MEMINFO_REST: &str = "SwapCached: 0 kB\nActive: 1 kB\nInactive: 1 kB\n\
        SwapTotal: 0 kB\nSwapFree: 0 kB\nDirty: 0 kB\nWriteback: 0 kB\nMapped: 1 kB\n\
        Slab: 1 kB\nCommitted_AS: 1 kB\nVmallocTotal: 1 kB\nVmallocUsed: 0 kB\n\
        VmallocChunk: 0 kB\nHugePages_Total:       0\n";

    #[test]
    fn meminfo_in_bytes_and_old_kernels() {
        let text = format!(
            "MemTotal:       24684096 kB\nMemFree:        23510612 kB\n\
             MemAvailable:   24073880 kB\nBuffers: 2 kB\nCached: 3 kB\n{MEMINFO_REST}"
        );
        let m = Meminfo::from_buf_read(text.as_bytes()).unwrap();
        assert_eq!(m.mem_total, 24684096 * 1024);
        assert_eq!(mem_available(&m), 24073880 * 1024);
        let old =
            format!("MemTotal: 9 kB\nMemFree: 1 kB\nBuffers: 2 kB\nCached: 3 kB\n{MEMINFO_REST}");
        let old = Meminfo::from_buf_read(old.as_bytes()).unwrap();
        assert_eq!(mem_available(&old), 6 * 1024);
        // This machine's, against the file itself.
        let raw = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib = raw
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().strip_suffix(" kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap();
        assert_eq!(Meminfo::current().unwrap().mem_total, kib * 1024);
    }

    #[test]
    fn proc_stat_cpu_line() {
        let si = procfs::current_system_info();
        let text = "cpu  49751 10 9485 84674 1030 3 231 2801 7 0\n\
                    cpu0 1 2 3 4 5 6 7 8 9 0\nintr 12345\nctxt 1\nbtime 1\nprocesses 1\n";
        let k = KernelStats::from_buf_read(text.as_bytes(), si).unwrap();
        let c = CpuTimes::from(&k.total);
        assert_eq!(c.user, 49751);
        assert_eq!(c.nice, 10);
        assert_eq!(c.idle, 84674);
        assert_eq!(c.steal, 2801);
        assert_eq!(c.total(), 49751 + 10 + 9485 + 84674 + 1030 + 3 + 231 + 2801);
        // Old four-column kernels.
        let old = "cpu 1 2 3 4\nctxt 1\nbtime 1\nprocesses 1\n";
        let k = KernelStats::from_buf_read(old.as_bytes(), si).unwrap();
        assert_eq!(CpuTimes::from(&k.total).iowait, 0);
    }

    #[test]
    fn diskstats_sums_whole_disks() {
        let text = "   7       0 loop0 5 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
                    254       0 vda 41015 7578 3904138 64188 28302 31807 4093624 20961 0 17336 85150\n\
                    254       1 vda1 40000 7000 3900000 64000 28000 31000 4093000 20000 0 17000 85000\n\
                    259       0 nvme0n1 1 0 1000 0 1 0 2000 0 0 0 0\n\
                    259       1 nvme0n1p1 1 0 1000 0 1 0 2000 0 0 0 0\n\
                    253       0 dm-0 1 0 999 0 1 0 999 0 0 0 0\n";
        let stats: Vec<DiskStat> = text
            .lines()
            .map(|l| DiskStat::from_line(l).unwrap())
            .collect();
        let t = DiskTotals::of(&stats, |n| {
            !["loop", "ram", "zram", "dm-", "md"]
                .iter()
                .any(|p| n.starts_with(p))
                && !looks_like_partition(n)
        });
        assert_eq!(t.sectors_read, 3904138 + 1000);
        assert_eq!(t.sectors_written, 4093624 + 2000);
        // This machine's file parses.
        assert!(procfs::diskstats().is_ok());
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
        proc_: Option<(u64, f64)>,
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
            process: proc_.map(|(start, cpu_s)| ProcessSnapshot {
                pid: 7,
                start_ticks: start,
                cpu_s,
                rss_bytes: 4096,
            }),
        }
    }

    #[test]
    fn sample_between_snapshots() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(2);
        let a = snap(t0, CpuTimes::default(), (0, 0), Some((5, 1.0)));
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
        let b = snap(t1, cpu, (2048, 4096), Some((5, 4.0)));
        let s = sample_between(&a, &b, 2.0);
        assert_eq!(s.cpu_user_pct, 40.0);
        assert_eq!(s.cpu_system_pct, 15.0);
        assert_eq!(s.cpu_iowait_pct, 5.0);
        assert_eq!(s.cpu_idle_pct, 40.0);
        assert_eq!(s.disk_read_bytes_per_s, 2048.0 * 512.0 / 2.0);
        assert_eq!(s.disk_write_bytes_per_s, 4096.0 * 512.0 / 2.0);
        assert_eq!(s.mem_used_bytes, 600);
        // 3 s of CPU over 2 s = 150 % of one CPU.
        assert_eq!(s.process_cpu_pct, Some(150.0));
        assert_eq!(s.process_rss_bytes, Some(4096));

        // Replaced process (other start time), counters going backwards, zero interval.
        let c = snap(t0, CpuTimes::default(), (0, 0), Some((6, 0.0)));
        let s = sample_between(&b, &c, 2.0);
        assert_eq!(s.process_cpu_pct, None);
        assert_eq!(s.cpu_user_pct, 0.0);
        assert_eq!(s.disk_read_bytes_per_s, 0.0);
        let s = sample_between(&a, &snap(t1, cpu, (0, 0), None), 2.0);
        assert_eq!((s.process_cpu_pct, s.process_rss_bytes), (None, None));
    }

    #[test]
    fn process_usage_of_self_is_real() {
        let u = ProcessUsage::of_self().expect("/proc/self readable");
        assert!(u.rss_bytes > 0);
        assert!(u.peak_rss_bytes >= u.rss_bytes);
        // CPU time comes in clock ticks: burn CPU until the first ticks show, bounded by the
        // work done rather than by a clock. A reader that never saw this process's CPU time
        // (fields swapped with another line, ticks not converted) fails here.
        let mut x = 0u64;
        let mut rounds = 0;
        let busy = loop {
            for i in 0..5_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            rounds += 1;
            let now = ProcessUsage::of_self().unwrap();
            if now.user_s > 0.0 || rounds == 2000 {
                break now;
            }
        };
        assert!(
            busy.user_s > 0.0,
            "no user CPU seen after {rounds} rounds of work"
        );
        assert!(busy.user_s >= u.user_s && busy.system_s >= u.system_s);
        let me = ProcessUsage::of_pid(std::process::id()).unwrap();
        assert!(me.rss_bytes > 0);
        assert_eq!(ProcessUsage::of_pid(u32::MAX), None);
    }

    /// A child that spins until the sampler has taken 5 samples: the CPU seconds from its `stat` ticks (converted at the
    /// kernel's real tick rate) match the kernel's nanosecond run time (`schedstat`, which
    /// does not depend on the tick rate), stay within wall-clock time, and the sampler's
    /// per-interval percentages add up to them.
    #[test]
    fn busy_child_cpu_seconds_are_right() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let born = Instant::now();
        let before = ProcessUsage::of_pid(pid).unwrap();
        let before_at = Instant::now();
        let sampler = OsSampler::start(Duration::from_millis(250), Some(pid));
        // Wait for the events (the child has had 0.3 s of CPU, the sampler has taken 5
        // samples), not for a fixed time a loaded machine may not give either.
        let give_up = Instant::now() + Duration::from_secs(120);
        while sampler.samples_taken() < 5
            || ProcessUsage::of_pid(pid).is_some_and(|u| u.user_s + u.system_s < 0.3)
        {
            assert!(
                Instant::now() < give_up,
                "in 120 s: {} samples, the child's CPU {:?}",
                sampler.samples_taken(),
                ProcessUsage::of_pid(pid)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let samples = sampler.stop();
        let usage = ProcessUsage::of_pid(pid).unwrap();
        let span = before_at.elapsed().as_secs_f64();
        let run_ns = process(pid)
            .unwrap()
            .schedstat()
            .ok()
            .map(|s| s.sum_exec_runtime);
        let wall = born.elapsed().as_secs_f64();
        let _ = child.kill();
        let _ = child.wait();

        let cpu = usage.user_s + usage.system_s;
        // What was waited for, and never more than one CPU.
        assert!(cpu >= 0.3 && cpu <= wall + 0.02, "{cpu} s CPU in {wall} s");
        match run_ns {
            Some(ns) => {
                let run = ns as f64 / 1e9;
                assert!(
                    (cpu - run).abs() <= 0.03 + 0.05 * run,
                    "stat {cpu} s, schedstat {run} s"
                );
            }
            None => crate::testing::not_checked(
                "CPU ticks cross-checked with /proc/PID/schedstat (no schedstat here)",
            ),
        }
        assert!(usage.rss_bytes > 0 && usage.peak_rss_bytes >= usage.rss_bytes);

        assert!(samples.len() >= 5, "{} samples", samples.len());
        let mut prev_t = 0.0;
        let mut sampled = 0.0;
        for s in &samples {
            let pct = s.process_cpu_pct.expect("the child was alive");
            // One spinning thread: one CPU at most (plus a tick of rounding per interval).
            assert!(
                (0.0..=100.0 + 100.0 * 0.011 / (s.t_s - prev_t)).contains(&pct),
                "{s:?}"
            );
            assert!(s.process_rss_bytes.unwrap() > 0);
            sampled += pct / 100.0 * (s.t_s - prev_t);
            prev_t = s.t_s;
        }
        // The samples cover less time than the two readings around them (the sampler drops a
        // final interval shorter than half the interval): at most one CPU over the difference.
        let during = cpu - (before.user_s + before.system_s);
        let uncovered = span - prev_t;
        assert!(
            sampled <= during + 0.05 && sampled >= during - uncovered - 0.05,
            "samples add up to {sampled} s, the process used {during} s ({uncovered} s uncovered)"
        );
    }

    #[test]
    fn sampler_on_this_machine() {
        let sampler = OsSampler::start(Duration::from_millis(300), Some(std::process::id()));
        // Burn CPU (so the process percentage is not trivially zero) until the thread has
        // taken 3 samples: the event, not a time a loaded machine may not give the thread.
        let give_up = Instant::now() + Duration::from_secs(120);
        let mut x = 0u64;
        while sampler.samples_taken() < 3 {
            assert!(Instant::now() < give_up, "no 3 samples in 120 s");
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        // That stop does not wait for the next interval is checked without a wall-clock limit
        // in sampler_stops_promptly_with_long_interval.
        let samples = sampler.stop();
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

    /// A span measures one run on the samples' clock, and following another process (the
    /// server after a restart) moves the span's and the sampler's process figures to it.
    #[test]
    fn clock_spans_line_up_with_the_samples_and_follow_a_new_process() {
        let sampler = OsSampler::start(Duration::from_millis(50), None);
        let clock = sampler.clock();
        let s0 = clock.begin();
        let quiet = clock.end(&s0);
        assert_eq!(quiet.os.process_cpu_pct, None, "no process followed yet");
        assert!(quiet.start_s >= 0.0 && quiet.os.t_s >= quiet.start_s);

        clock.follow(Some(std::process::id()));
        let used = || ProcessUsage::of_self().map_or(0.0, |u| u.user_s + u.system_s);
        let before = used();
        let start = clock.begin();
        // Work until 0.3 s of CPU shows (several sampling intervals), however slow the machine.
        let mut x = 0u64;
        while used() - before < 0.3 {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        let span = clock.end(&start);
        let samples = sampler.stop();
        assert!(span.start_s >= quiet.os.t_s && span.os.t_s > span.start_s);
        let pct = span
            .os
            .process_cpu_pct
            .expect("the followed process was alive");
        // The process used at least 0.3 s of CPU inside the span (less a tick at each end); the
        // test harness runs other tests on other threads of this process meanwhile, so the
        // ceiling is every core, not one.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let ticks = 0.011 / span.seconds();
        assert!(
            pct >= 100.0 * (0.3 / span.seconds() - 2.0 * ticks)
                && pct <= 100.0 * cores * (1.0 + ticks),
            "{span:?}"
        );
        assert!(span.os.process_rss_bytes.unwrap() > 0);
        // Samples whose interval began inside the span followed the process too.
        let inside: Vec<_> = samples
            .windows(2)
            .filter(|w| w[0].t_s >= span.start_s && w[1].t_s <= span.os.t_s)
            .map(|w| &w[1])
            .collect();
        assert!(
            !inside.is_empty(),
            "no sample inside a {} s span",
            span.seconds()
        );
        assert!(
            inside.iter().all(|s| s.process_cpu_pct.is_some()),
            "{inside:?}"
        );
    }

    #[test]
    fn sampler_stops_promptly_with_long_interval() {
        let sampler = OsSampler::start(Duration::from_secs(60), None);
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        let samples = sampler.stop();
        // A stop that waited for the interval would take 60 s; half of it leaves any busy
        // machine room, so this only fails when stop really waits.
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "stop waited {:?}",
            t.elapsed()
        );
        assert!(samples.is_empty());
        // Dropping without stop must not hang either.
        drop(OsSampler::start(Duration::from_secs(60), None));
    }
}
