//! Host facts: what the machine looked like when a run was made, and `dbrig doctor`'s warnings
//! about settings that distort benchmarks.
//!
//! Facts come from `/proc` (parsed by the `procfs` crate), `/sys`, `/etc/os-release` and
//! system calls through rustix (no libc: the workspace forbids `unsafe`). Collection never
//! fails: a fact that cannot be read is `None` or empty, because a missing fact must not stop a
//! benchmark (containers and non-Linux hosts hide many of them).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use dbrig_core::host::{BusyProcess, HostFacts, KernelInfo, facts_lines, human_bytes};

use procfs::net::{TcpNetEntry, TcpState};
use procfs::process::{FDTarget, MountInfo, Process};
use procfs::{Current, LoadAverage, Meminfo};

use crate::procstat;

/// A process is "busy" above this share of one CPU during the sampling window.
pub const BUSY_PROCESS_PCT: f64 = 10.0;
/// How long `collect` watches other processes to find busy ones.
pub const BUSY_SAMPLE_WINDOW: Duration = Duration::from_millis(200);
/// File descriptors dbrig needs besides one per client connection (stdio, the result store,
/// logs, the report, the server's pipes).
pub const NOFILE_MARGIN: u64 = 64;
/// `ulimit -n` value the seed benchmarks recommend for many connections.
pub const NOFILE_RECOMMENDED: u64 = 16384;
/// More clients than this many per logical CPU is worth a note: clients and server then compete
/// for CPU on one host, so the run measures CPU saturation.
pub const CLIENTS_PER_CPU_NOTE: u32 = 2;

/// The open-files limit cannot hold what a run needs: even the hard limit is lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFilesShort {
    pub needed: u64,
    pub soft: u64,
    pub hard: u64,
}

/// Make room for `needed` open files in this process before a run starts: nothing when the
/// soft limit (`RLIMIT_NOFILE`) holds it; the soft limit raised to `needed` when the hard one
/// allows (returns the soft limit it was); refused, with both limits, when it does not.
pub fn ensure_open_files(needed: u64) -> Result<Option<u64>, OpenFilesShort> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    // `None` is RLIM_INFINITY.
    let soft = now.current.unwrap_or(u64::MAX);
    let hard = now.maximum.unwrap_or(u64::MAX);
    if needed <= soft {
        return Ok(None);
    }
    let short = OpenFilesShort { needed, soft, hard };
    if needed > hard {
        return Err(short);
    }
    let raised = Rlimit {
        current: Some(needed),
        maximum: now.maximum,
    };
    setrlimit(Resource::Nofile, raised).map_err(|_| short)?;
    Ok(Some(soft))
}

/// The CPU's maximum frequency in MHz (cpufreq's, else what cpuinfo says): what cycles per
/// row are computed with. Cheap, unlike [`collect`], which samples busy processes for 200 ms.
pub fn cpu_mhz() -> Option<f64> {
    cpufreq_max_mhz().or_else(|| {
        procfs::CpuInfo::current()
            .ok()
            .and_then(|c| CpuInfo::from(&c).max_mhz)
    })
}

/// The highest `cpuinfo_max_freq` of the CPUs, in MHz.
fn cpufreq_max_mhz() -> Option<f64> {
    cpu_dirs()
        .iter()
        .filter_map(|d| read_trim(d.join("cpufreq/cpuinfo_max_freq")))
        .filter_map(|s| s.parse::<u64>().ok())
        .max()
        .map(|khz| khz as f64 / 1000.0)
}

/// Collects the facts of this host. Takes about [`BUSY_SAMPLE_WINDOW`] (to find busy
/// processes). `data_dir` need not exist yet: its nearest existing ancestor is used.
pub fn collect(data_dir: Option<&Path>) -> HostFacts {
    let sample = BusySample::start();
    let mut facts = facts(data_dir);
    facts.busy_processes = sample.finish(&[]);
    facts
}

/// Busy processes watched over a window that the caller ends: [`collect`] watches
/// [`BUSY_SAMPLE_WINDOW`] of nothing, a benchmark run watches its own first trial (so the
/// sample costs it no wall time) and leaves out the processes it drives itself.
pub struct BusySample {
    before: HashMap<(u32, u64), ProcessCpu>,
    start: Instant,
}

impl BusySample {
    pub fn start() -> BusySample {
        BusySample {
            before: process_cpu_table(),
            start: Instant::now(),
        }
    }

    /// The processes busy since [`BusySample::start`], waiting out what is left of
    /// [`BUSY_SAMPLE_WINDOW`] first (CPU time is counted in 10 ms ticks: a shorter window could
    /// not tell 10 % of a CPU). Left out: dbrig and its descendants (managed servers, hooks,
    /// collectors) and every process tree rooted at a pid of `measured` (the servers the
    /// window's trials drove: a PostgreSQL postmaster's backends are its children).
    pub fn finish(self, measured: &[u32]) -> Vec<BusyProcess> {
        std::thread::sleep(BUSY_SAMPLE_WINDOW.saturating_sub(self.start.elapsed()));
        let elapsed = self.start.elapsed().as_secs_f64();
        let after = process_cpu_table();
        let mut roots = vec![std::process::id()];
        roots.extend_from_slice(measured);
        let left_out = process_trees(&after, &roots);
        busy_processes(&self.before, &after, elapsed, &left_out)
    }
}

/// The facts of this host without the busy-process sample (`busy_processes` empty): cheap.
/// `data_dir` need not exist yet: its nearest existing ancestor is used.
pub fn facts(data_dir: Option<&Path>) -> HostFacts {
    let mut cpuinfo = procfs::CpuInfo::current()
        .map(|c| CpuInfo::from(&c))
        .unwrap_or_default();
    if cpuinfo.model.is_none() {
        // Boards whose cpuinfo names no model (arm) name themselves in the device tree.
        cpuinfo.model = read("/proc/device-tree/model")
            .map(|m| {
                m.trim_matches(|c: char| c == '\0' || c.is_whitespace())
                    .to_owned()
            })
            .filter(|m| !m.is_empty());
    }
    let mem = Meminfo::current().ok();
    let nofile = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let governors = distinct_governors(
        cpu_dirs()
            .iter()
            .filter_map(|d| read(d.join("cpufreq/scaling_governor"))),
    );

    let mut facts = HostFacts {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        cpu_model: cpuinfo.model,
        logical_cpus: (cpuinfo.logical > 0).then_some(cpuinfo.logical),
        usable_cpus: std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        physical_cores: cpuinfo.physical_cores.or_else(sysfs_physical_cores),
        cpu_mhz: cpufreq_max_mhz().or(cpuinfo.max_mhz),
        mem_total_bytes: mem.as_ref().map(|m| m.mem_total),
        mem_available_bytes: mem.as_ref().map(procstat::mem_available),
        swap_total_bytes: mem.as_ref().map(|m| m.swap_total),
        swap_used_bytes: mem
            .as_ref()
            .map(|m| m.swap_total.saturating_sub(m.swap_free)),
        kernel: KernelInfo {
            sysname: read_trim("/proc/sys/kernel/ostype"),
            release: read_trim("/proc/sys/kernel/osrelease"),
            version: read_trim("/proc/sys/kernel/version"),
            machine: std::env::consts::ARCH.to_string(),
        },
        os: read("/etc/os-release")
            .or_else(|| read("/usr/lib/os-release"))
            .and_then(|s| parse_os_release(&s)),
        cpu_governors: governors,
        transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|s| bracketed(&s)),
        numa_nodes: numa_node_count(),
        // getrlimit(2): `None` is RLIM_INFINITY.
        nofile_soft: Some(nofile.current.unwrap_or(u64::MAX)),
        nofile_hard: Some(nofile.maximum.unwrap_or(u64::MAX)),
        load_average: LoadAverage::current().ok().map(|l| load_average(&l)),
        ..HostFacts::default()
    };

    if let Some(dir) = data_dir {
        facts.data_dir = Some(dir.display().to_string());
        if let Some(dev) = resolve_data_dir_device(dir) {
            facts.data_dir_fs_type = dev.fs_type;
            if !dev.disks.is_empty() {
                facts.data_dir_device = Some(dev.disks.join(","));
            }
            facts.io_scheduler = dev.scheduler;
        }
    }

    facts
}

// ---------------------------------------------------------------------------------------------
// Parsers (pure, tested with fixtures)
// ---------------------------------------------------------------------------------------------

/// What `/proc/cpuinfo` tells about the CPUs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuInfo {
    pub model: Option<String>,
    /// Number of `processor` entries (online logical CPUs).
    pub logical: u32,
    /// Distinct (`physical id`, `core id`) pairs; `None` when the fields are absent (arm64).
    pub physical_cores: Option<u32>,
    /// Highest `cpu MHz` (the current frequency; absent on arm64).
    pub max_mhz: Option<f64>,
}

impl From<&procfs::CpuInfo> for CpuInfo {
    /// The model is x86's `model name`, else ppc's `cpu`, else an arm board's `Model` or
    /// `Hardware` when the kernel lists them per CPU.
    fn from(c: &procfs::CpuInfo) -> Self {
        let cpus = 0..c.num_cores();
        let field = |name: &str| {
            cpus.clone()
                .find_map(|i| c.get_field(i, name).filter(|v| !v.is_empty()))
        };
        let cores: BTreeSet<(&str, &str)> = cpus
            .clone()
            .filter_map(|i| {
                let core = c.get_field(i, "core id")?;
                Some((c.get_field(i, "physical id").unwrap_or_default(), core))
            })
            .collect();
        CpuInfo {
            model: ["model name", "cpu", "Model", "Hardware"]
                .iter()
                .find_map(|f| field(f))
                .map(str::to_owned),
            // procfs starts a CPU at each `processor` line; a file without one has none.
            logical: cpus
                .clone()
                .filter(|i| c.get_field(*i, "processor").is_some())
                .count() as u32,
            physical_cores: (!cores.is_empty()).then_some(cores.len() as u32),
            max_mhz: cpus
                .filter_map(|i| c.get_field(i, "cpu MHz")?.parse::<f64>().ok())
                .filter(|mhz| mhz.is_finite() && *mhz > 0.0)
                .reduce(f64::max),
        }
    }
}

/// Distinct, trimmed, non-empty governor names from the per-CPU `scaling_governor` files,
/// sorted (a mix such as `performance` on some CPUs and `powersave` on others is a finding).
pub fn distinct_governors(files: impl IntoIterator<Item = String>) -> Vec<String> {
    let set: BTreeSet<String> = files
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    set.into_iter().collect()
}

/// The value in brackets of a sysfs choice file (`always [madvise] never`,
/// `none [mq-deadline] kyber bfq`). A file with a single unbracketed word (some devices'
/// `scheduler` just says `none`) gives that word.
pub fn bracketed(text: &str) -> Option<String> {
    if let (Some(open), Some(close)) = (text.find('['), text.find(']'))
        && open < close
    {
        let v = text[open + 1..close].trim();
        return (!v.is_empty()).then(|| v.to_string());
    }
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(only), None) => Some(only.to_string()),
        _ => None,
    }
}

/// `PRETTY_NAME` of an os-release file, else `NAME VERSION`, unquoted.
pub fn parse_os_release(text: &str) -> Option<String> {
    let mut vars = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            vars.insert(k.trim(), unquote_shell(v.trim()));
        }
    }
    if let Some(p) = vars.get("PRETTY_NAME").filter(|p| !p.is_empty()) {
        return Some(p.clone());
    }
    let name = vars.get("NAME").filter(|n| !n.is_empty())?;
    Some(match vars.get("VERSION").filter(|v| !v.is_empty()) {
        Some(v) => format!("{name} {v}"),
        None => name.clone(),
    })
}

/// os-release values are shell-quoted: strip one level of `"` or `'` and backslash escapes.
fn unquote_shell(v: &str) -> String {
    // An unbalanced opening quote (a broken file) is dropped rather than kept.
    let inner = match v.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let rest = &v[1..];
            rest.strip_suffix(q).unwrap_or(rest)
        }
        _ => v,
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The 1, 5 and 15 minute load averages. procfs keeps them as `f32`; the file has two
/// decimals, so they are rounded back to those (0.44, not 0.4399999976158142).
fn load_average(l: &LoadAverage) -> [f64; 3] {
    [l.one, l.five, l.fifteen].map(|v| (f64::from(v) * 100.0).round() / 100.0)
}

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    pub fs_type: String,
    /// The mount source, e.g. `/dev/nvme0n1p2`, `overlay`, `tmpfs`.
    pub source: String,
}

impl MountEntry {
    /// From a mountinfo line as procfs parsed it; `None` if the device number is not `N:M`.
    pub(crate) fn from_procfs(m: &MountInfo) -> Option<MountEntry> {
        let (major, minor) = m.majmin.split_once(':')?;
        Some(MountEntry {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
            mount_point: PathBuf::from(unescape_octal(&m.mount_point.to_string_lossy())),
            fs_type: m.fs_type.clone(),
            source: m
                .mount_source
                .as_deref()
                .map(unescape_octal)
                .unwrap_or_default(),
        })
    }
}

/// The kernel escapes space, tab, newline and `\` in mountinfo paths as octal (`\040`);
/// procfs 0.18 leaves them escaped, so a data directory below `/data dir` would not match its
/// mount point without this.
fn unescape_octal(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            if let Ok(b) = u8::try_from(v) {
                out.push(b);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount holding `path` (already canonical): the longest mount point that is a
/// component-wise prefix; among equal ones the last listed (it is mounted on top).
pub fn find_mount<'a>(entries: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for e in entries {
        if path.starts_with(&e.mount_point)
            && best
                .is_none_or(|b| e.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len())
        {
            best = Some(e);
        }
    }
    best
}

// ---------------------------------------------------------------------------------------------
// Readers of /proc and /sys
// ---------------------------------------------------------------------------------------------

fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    read(path)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `/sys/devices/system/cpu/cpuN` directories.
fn cpu_dirs() -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir("/sys/devices/system/cpu") else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect()
}

/// Physical cores from sysfs topology, for CPUs whose cpuinfo lacks `core id` (arm64).
fn sysfs_physical_cores() -> Option<u32> {
    let cores: BTreeSet<(String, String)> = cpu_dirs()
        .iter()
        .filter_map(|d| {
            Some((
                read_trim(d.join("topology/physical_package_id"))?,
                read_trim(d.join("topology/core_id"))?,
            ))
        })
        .collect();
    (!cores.is_empty()).then_some(cores.len() as u32)
}

/// NUMA nodes under `/sys/devices/system/node` (`None` when the folder is missing).
pub(crate) fn numa_node_count() -> Option<u32> {
    let rd = fs::read_dir("/sys/devices/system/node").ok()?;
    let n = rd
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n as u32)
}

/// Bytes an unprivileged writer may still put on the file system holding `path`
/// (`statvfs`: available blocks × fragment size); `None` when it cannot be asked.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(path).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The CPUs process `pid` may run on (`Cpus_allowed_list` of `/proc/<pid>/status`, e.g.
/// `0-3`): the placement a trial actually had, whatever pinning was asked for.
pub fn cpus_allowed(pid: u32) -> Option<String> {
    let ranges = procstat::process(pid)?.status().ok()?.cpus_allowed_list?;
    Some(cpu_list(&ranges))
}

/// CPU ranges in the kernel's list format: `0-3,8,10-11`.
fn cpu_list(ranges: &[(u32, u32)]) -> String {
    ranges
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Writes dirty pages to disk (`sync(2)`) and drops the page cache, dentries and inodes
/// (`3` to `/proc/sys/vm/drop_caches`), so the next read comes from the disk. Needs root (and
/// a writable `/proc/sys`); `Err` says why not.
pub fn drop_page_cache() -> Result<(), crate::ManagedError> {
    drop_page_cache_via(Path::new("/proc/sys/vm/drop_caches"))
}

fn drop_page_cache_via(control: &Path) -> Result<(), crate::ManagedError> {
    rustix::fs::sync();
    fs::write(control, "3\n").map_err(crate::ManagedError::PageCache)
}

/// The process listening on TCP `port` of this host and its executable, found through
/// `/proc/net/tcp{,6}` (the socket's inode) and `/proc/<pid>/fd`: the binary path of a
/// local server dbrig did not start. `None` when nothing listens or the process is not
/// ours to inspect.
pub fn listening_process(port: u16) -> Option<(u32, PathBuf)> {
    let entries: Vec<TcpNetEntry> = [procfs::net::tcp(), procfs::net::tcp6()]
        .into_iter()
        .filter_map(Result::ok)
        .flatten()
        .collect();
    process_owning(&listening_inodes(&entries, port))
}

/// The process listening on the Unix socket file `path` (a server reached through its socket,
/// as [`listening_process`] finds one by its TCP port) and its binary: the socket bound to
/// that path and not connected (a server's accepted connections show its path too, connected,
/// and belong to PostgreSQL's backends).
pub fn socket_process(path: &Path) -> Option<(u32, PathBuf)> {
    let entries = procfs::net::unix().ok()?;
    process_owning(&listening_unix_inodes(&entries, path))
}

/// Inodes of the sockets among `entries` bound to `path` and listening (not connected).
pub(crate) fn listening_unix_inodes(
    entries: &[procfs::net::UnixNetEntry],
    path: &Path,
) -> Vec<u64> {
    let same = |p: &Path| {
        p == path
            || matches!(
                (fs::canonicalize(p), fs::canonicalize(path)),
                (Ok(a), Ok(b)) if a == b
            )
    };
    entries
        .iter()
        .filter(|e| e.state == procfs::net::UnixState::UNCONNECTED)
        .filter(|e| e.path.as_deref().is_some_and(same))
        .map(|e| e.inode)
        .collect()
}

/// The first process holding one of the sockets `inodes`, and its binary.
fn process_owning(inodes: &[u64]) -> Option<(u32, PathBuf)> {
    if inodes.is_empty() {
        return None;
    }
    for p in procfs::process::all_processes()
        .ok()?
        .filter_map(Result::ok)
    {
        let Ok(fds) = p.fd() else {
            continue;
        };
        let owns = fds
            .filter_map(Result::ok)
            .any(|fd| matches!(fd.target, FDTarget::Socket(i) if inodes.contains(&i)));
        if owns {
            return p.exe().ok().map(|exe| (p.pid() as u32, exe));
        }
    }
    None
}

/// Inodes of the sockets among `entries` listening on `port`.
pub(crate) fn listening_inodes(entries: &[TcpNetEntry], port: u16) -> Vec<u64> {
    entries
        .iter()
        .filter(|e| e.state == TcpState::Listen && e.local_address.port() == port)
        .map(|e| e.inode)
        .collect()
}

/// The storage behind a data directory.
struct DataDirDevice {
    fs_type: Option<String>,
    disks: Vec<String>,
    scheduler: Option<String>,
}

fn resolve_data_dir_device(dir: &Path) -> Option<DataDirDevice> {
    // The data directory may not exist before the server is initialised.
    let existing = dir.ancestors().find(|a| a.exists())?;
    let canonical = fs::canonicalize(existing).ok()?;
    let mounts: Vec<MountEntry> = Process::myself()
        .ok()?
        .mountinfo()
        .ok()?
        .iter()
        .filter_map(MountEntry::from_procfs)
        .collect();
    let mount = find_mount(&mounts, &canonical)?;
    let mut dev = DataDirDevice {
        fs_type: Some(mount.fs_type.clone()),
        disks: Vec::new(),
        scheduler: None,
    };
    // btrfs, zfs and overlay report anonymous device numbers (major 0): fall back to the
    // mount source's /dev node, which resolves /dev/mapper symlinks to dm-N.
    let sys_dir = fs::canonicalize(format!("/sys/dev/block/{}:{}", mount.major, mount.minor))
        .ok()
        .or_else(|| {
            if !mount.source.starts_with("/dev/") {
                return None;
            }
            let src = fs::canonicalize(&mount.source).ok()?;
            fs::canonicalize(Path::new("/sys/class/block").join(src.file_name()?)).ok()
        });
    let Some(sys_dir) = sys_dir else {
        return Some(dev);
    };
    let mut schedulers = BTreeSet::new();
    collect_disks(&sys_dir, 0, &mut dev.disks, &mut schedulers);
    if !schedulers.is_empty() {
        dev.scheduler = Some(schedulers.into_iter().collect::<Vec<_>>().join(","));
    }
    Some(dev)
}

/// Walks from a block device's sysfs directory to the disks whose queue does the scheduling:
/// a partition's parent disk; for device-mapper and md devices (whose own queue has no
/// scheduler) their member devices (`slaves/`), recursively.
fn collect_disks(
    sys_dir: &Path,
    depth: u32,
    disks: &mut Vec<String>,
    schedulers: &mut BTreeSet<String>,
) {
    if depth > 8 {
        return;
    }
    let disk_dir = if sys_dir.join("partition").exists() {
        match sys_dir.parent() {
            Some(p) => p.to_path_buf(),
            None => return,
        }
    } else {
        sys_dir.to_path_buf()
    };
    let slaves: Vec<PathBuf> = fs::read_dir(disk_dir.join("slaves"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| fs::canonicalize(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    if !slaves.is_empty() {
        for s in slaves {
            collect_disks(&s, depth + 1, disks, schedulers);
        }
        return;
    }
    if let Some(name) = disk_dir.file_name().and_then(|n| n.to_str())
        && !disks.iter().any(|d| d == name)
    {
        disks.push(name.to_string());
    }
    if let Some(s) = read(disk_dir.join("queue/scheduler")).and_then(|s| bracketed(&s)) {
        schedulers.insert(s);
    }
}

/// One process in a [`process_cpu_table`].
#[derive(Debug, Clone, PartialEq)]
struct ProcessCpu {
    name: String,
    cpu_s: f64,
    ppid: u32,
}

/// (pid, start ticks) → name, CPU seconds and parent for every process readable in `/proc`.
fn process_cpu_table() -> HashMap<(u32, u64), ProcessCpu> {
    let Ok(all) = procfs::process::all_processes() else {
        return HashMap::new();
    };
    let ticks_per_s = procfs::ticks_per_second();
    all.filter_map(|p| p.ok()?.stat().ok())
        .filter_map(|s| {
            let cpu_s = procstat::ticks_to_s(s.utime.saturating_add(s.stime), ticks_per_s);
            let p = ProcessCpu {
                name: s.comm,
                cpu_s,
                ppid: u32::try_from(s.ppid).unwrap_or(0),
            };
            Some(((u32::try_from(s.pid).ok()?, s.starttime), p))
        })
        .collect()
}

/// The pids of `roots` and of all their descendants in `table`.
fn process_trees(table: &HashMap<(u32, u64), ProcessCpu>, roots: &[u32]) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for ((pid, _), p) in table {
        children.entry(p.ppid).or_default().push(*pid);
    }
    let mut tree: HashSet<u32> = roots.iter().copied().collect();
    let mut queue = roots.to_vec();
    while let Some(parent) = queue.pop() {
        for child in children.remove(&parent).unwrap_or_default() {
            if tree.insert(child) {
                queue.push(child);
            }
        }
    }
    tree
}

/// Processes (other than those in `left_out`) above [`BUSY_PROCESS_PCT`] between two tables
/// taken `elapsed_s` apart, busiest first. Keys include the start time so a reused pid is not
/// mistaken for the old process.
fn busy_processes(
    before: &HashMap<(u32, u64), ProcessCpu>,
    after: &HashMap<(u32, u64), ProcessCpu>,
    elapsed_s: f64,
    left_out: &HashSet<u32>,
) -> Vec<BusyProcess> {
    if elapsed_s <= 0.0 {
        return Vec::new();
    }
    let mut busy: Vec<BusyProcess> = after
        .iter()
        .filter(|((pid, _), _)| !left_out.contains(pid))
        .filter_map(|(key, p)| {
            let before_s = before.get(key)?.cpu_s;
            let pct = 100.0 * (p.cpu_s - before_s).max(0.0) / elapsed_s;
            (pct > BUSY_PROCESS_PCT).then(|| BusyProcess {
                pid: key.0,
                name: p.name.clone(),
                cpu_pct: (pct * 10.0).round() / 10.0,
            })
        })
        .collect();
    busy.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    busy
}

// ---------------------------------------------------------------------------------------------
// Doctor
// ---------------------------------------------------------------------------------------------

/// How serious a doctor finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningLevel {
    /// Worth knowing; results are usually still comparable.
    Info,
    /// Likely to distort results; fix before a long run.
    Warn,
}

/// Which rule produced a finding (stable, for filtering and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    CpuGovernor,
    TransparentHugepages,
    SwapInUse,
    Numa,
    OpenFilesLimit,
    BusyProcesses,
    IoScheduler,
    FewCpus,
    CpuMhzUnknown,
}

/// One doctor finding: a one-line message saying what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub level: WarningLevel,
    pub kind: WarningKind,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            WarningLevel::Info => "info",
            WarningLevel::Warn => "warn",
        };
        write!(f, "{level}: {}", self.message)
    }
}

/// Schedulers that do not reorder or delay I/O in ways that distort database benchmarks
/// (`noop` and `deadline` are their names before blk-mq).
const NEUTRAL_SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "noop", "deadline"];

/// What about this host would distort a benchmark with `clients` connections.
pub fn doctor_warnings(facts: &HostFacts, clients: Option<u32>) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut push = |level, kind, message: String| {
        out.push(Warning {
            level,
            kind,
            message,
        })
    };

    let slow: Vec<&str> = facts
        .cpu_governors
        .iter()
        .filter(|g| g.as_str() != "performance")
        .map(String::as_str)
        .collect();
    if !slow.is_empty() {
        push(
            WarningLevel::Warn,
            WarningKind::CpuGovernor,
            format!(
                "CPU frequency governor is {}: clock speed will vary during the run; \
                 run `sudo cpupower frequency-set -g performance`",
                slow.join(", ")
            ),
        );
    }

    if facts.transparent_hugepages.as_deref() == Some("always") {
        push(
            WarningLevel::Warn,
            WarningKind::TransparentHugepages,
            "transparent huge pages are `always`: compaction stalls add latency spikes; \
             run `echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled`"
                .to_string(),
        );
    }

    if let Some(used) = facts.swap_used_bytes.filter(|u| *u > 0) {
        push(
            WarningLevel::Warn,
            WarningKind::SwapInUse,
            format!(
                "{} of swap in use: swapped-out pages make latency erratic; free memory or \
                 run `sudo swapoff -a && sudo swapon -a` before the run",
                human_bytes(used)
            ),
        );
    }

    if let Some(n) = facts.numa_nodes.filter(|n| *n > 1) {
        push(
            WarningLevel::Warn,
            WarningKind::Numa,
            format!(
                "{n} NUMA nodes: memory placement will vary between runs; start the server \
                 under `numactl --interleave=all`"
            ),
        );
    }

    if let (Some(clients), Some(soft)) = (clients, facts.nofile_soft) {
        let needed = u64::from(clients) + NOFILE_MARGIN;
        if soft < needed {
            let suggest = needed.next_power_of_two().max(NOFILE_RECOMMENDED);
            let hard_note = match facts.nofile_hard {
                Some(hard) if hard < suggest => format!(
                    " (hard limit is {hard}: raise `nofile` in /etc/security/limits.conf first)"
                ),
                _ => String::new(),
            };
            push(
                WarningLevel::Warn,
                WarningKind::OpenFilesLimit,
                format!(
                    "open-files limit {soft} is below {needed} needed for {clients} clients: \
                     run `ulimit -n {suggest}`{hard_note}"
                ),
            );
        }
    }

    if !facts.busy_processes.is_empty() {
        let names: Vec<String> = facts
            .busy_processes
            .iter()
            .take(5)
            .map(|p| format!("{} (pid {}, {:.0}%)", p.name, p.pid, p.cpu_pct))
            .collect();
        let more = facts.busy_processes.len().saturating_sub(5);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        push(
            WarningLevel::Warn,
            WarningKind::BusyProcesses,
            format!(
                "other processes are using the CPU: {}{more}; stop them before the run",
                names.join(", ")
            ),
        );
    }

    if let Some(sched) = &facts.io_scheduler {
        let odd: Vec<&str> = sched
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty() && !NEUTRAL_SCHEDULERS.contains(s))
            .collect();
        if !odd.is_empty() {
            let device = facts
                .data_dir_device
                .as_deref()
                .unwrap_or("the data directory's disk");
            push(
                WarningLevel::Info,
                WarningKind::IoScheduler,
                format!(
                    "I/O scheduler of {device} is {}: for database benchmarks prefer `none` \
                     (NVMe) or `mq-deadline`, e.g. `echo none | sudo tee \
                     /sys/block/<disk>/queue/scheduler`",
                    odd.join(", ")
                ),
            );
        }
    }

    if let (Some(clients), Some(cpus)) = (clients, facts.usable_cpus.or(facts.logical_cpus))
        && clients > cpus.saturating_mul(CLIENTS_PER_CPU_NOTE)
    {
        push(
            WarningLevel::Info,
            WarningKind::FewCpus,
            format!(
                "{clients} clients on {cpus} CPUs: clients and server compete for CPU, so \
                 results reflect CPU saturation; use fewer clients or a separate client host"
            ),
        );
    }

    if facts.cpu_mhz.is_none() {
        push(
            WarningLevel::Info,
            WarningKind::CpuMhzUnknown,
            "CPU frequency is unknown (no cpufreq, no `cpu MHz`): runs cannot be checked for \
             clock differences; record the CPU's nominal speed in the run notes"
                .to_string(),
        );
    }

    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use procfs::net::TcpNetEntries;
    use procfs::{FromBufRead, FromBufReadSI, FromRead};

    fn cpuinfo(text: &str) -> CpuInfo {
        CpuInfo::from(&procfs::CpuInfo::from_buf_read(text.as_bytes()).unwrap())
    }

    const CPUINFO_X86: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\n\
        model name\t: AMD EPYC 7763 64-Core Processor\ncpu MHz\t\t: 2445.428\nphysical id\t: 0\n\
        siblings\t: 4\ncore id\t\t: 0\ncpu cores\t: 2\n\n\
        processor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\ncpu MHz\t\t: 3100.5\n\
        physical id\t: 0\ncore id\t\t: 0\n\n\
        processor\t: 2\nmodel name\t: AMD EPYC 7763 64-Core Processor\ncpu MHz\t\t: bogus\n\
        physical id\t: 0\ncore id\t\t: 1\n\n\
        processor\t: 3\nmodel name\t: AMD EPYC 7763 64-Core Processor\ncpu MHz\t\t: 1500\n\
        physical id\t: 0\ncore id\t\t: 1\n";

    const CPUINFO_ARM: &str = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n\
        processor\t: 1\nBogoMIPS\t: 50.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4\n";

    const CPUINFO_PPC: &str = "processor\t: 0\n\
        cpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2200.000000MHz\n\n\
        processor\t: 1\n\
        cpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 2200.000000MHz\n\n\
        timebase\t: 512000000\nplatform\t: pSeries\n";

    #[test]
    fn listening_sockets() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 31337 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:0CEA 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000   106        0 4242 1 0000000000000000 20 4 30 10 -1\n\
   2: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   107        0 555 1 0000000000000000 100 0 0 10 0\n";
        let entries = TcpNetEntries::from_buf_read(text.as_bytes(), procfs::current_system_info())
            .unwrap()
            .0;
        // 0x0CEA = 3306 listening (the established connection on it is not a listener).
        assert_eq!(listening_inodes(&entries, 3306), vec![31337]);
        assert_eq!(listening_inodes(&entries, 5432), vec![555]);
        assert!(listening_inodes(&entries, 1).is_empty());
        // A real listener of this process is found with its executable.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (pid, exe) = listening_process(port).unwrap();
        assert_eq!(pid, std::process::id());
        assert_eq!(exe, std::env::current_exe().unwrap());
        // The kernel's own list, as the status file spells it.
        let raw = fs::read_to_string("/proc/self/status").unwrap();
        let raw = raw
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_owned());
        assert_eq!(cpus_allowed(std::process::id()), raw);
        assert!(raw.is_some());
        assert_eq!(cpus_allowed(u32::MAX), None);
        assert_eq!(cpu_list(&[(0, 3), (8, 8), (10, 11)]), "0-3,8,10-11");
    }

    #[test]
    fn page_cache_drop_writes_3_and_says_why_not() {
        // A stand-in for /proc/sys/vm/drop_caches: the test must not empty the shared
        // machine's cache under other benchmarks.
        let dir = tempfile::tempdir().unwrap();
        let control = dir.path().join("drop_caches");
        assert!(drop_page_cache_via(&control).is_ok());
        assert_eq!(fs::read_to_string(&control).unwrap(), "3\n");
        let err = drop_page_cache_via(&dir.path().join("no/such/file"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("cannot drop the page cache: "), "{err}");
    }

    #[test]
    fn cpuinfo_x86() {
        let c = cpuinfo(CPUINFO_X86);
        assert_eq!(c.model.as_deref(), Some("AMD EPYC 7763 64-Core Processor"));
        assert_eq!(c.logical, 4);
        assert_eq!(c.physical_cores, Some(2));
        assert_eq!(c.max_mhz, Some(3100.5));
    }

    #[test]
    fn cpuinfo_arm_ppc_and_empty() {
        // procfs drops the board lines after the last CPU (`collect` then asks the device
        // tree for the model).
        let c = cpuinfo(CPUINFO_ARM);
        assert_eq!(c.logical, 2);
        assert_eq!(c.model, None);
        assert_eq!(c.physical_cores, None);
        assert_eq!(c.max_mhz, None);
        let c = cpuinfo(CPUINFO_PPC);
        assert_eq!(c.logical, 2);
        assert_eq!(
            c.model.as_deref(),
            Some("POWER9 (architected), altivec supported")
        );
        // One CPU: procfs files its `processor` line among the common fields.
        assert_eq!(cpuinfo("processor\t: 0\nmodel name\t: X\n").logical, 1);
        assert_eq!(cpuinfo(""), CpuInfo::default());
    }

    #[test]
    fn bracketed_values() {
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            bracketed("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(
            bracketed("none [mq-deadline] kyber bfq \n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(bracketed("none\n").as_deref(), Some("none"));
        assert_eq!(bracketed("a b c"), None);
        assert_eq!(bracketed("] oops ["), None);
        assert_eq!(bracketed("[]"), None);
        assert_eq!(bracketed(""), None);
    }

    #[test]
    fn governor_values_are_trimmed_and_distinct() {
        let files = ["performance\n", "powersave\n", "performance\n", "  \n"];
        assert_eq!(
            distinct_governors(files.map(String::from)),
            ["performance", "powersave"]
        );
        assert!(distinct_governors(Vec::new()).is_empty());
    }

    #[test]
    fn os_release() {
        let deb = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
                   VERSION_ID=\"12\"\n";
        assert_eq!(
            parse_os_release(deb).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        let no_pretty = "# comment\nNAME='Foo \\\"OS\\\"'\nVERSION=1.2\n";
        assert_eq!(
            parse_os_release(no_pretty).as_deref(),
            Some("Foo \"OS\" 1.2")
        );
        assert_eq!(parse_os_release("NAME=Bar\n").as_deref(), Some("Bar"));
        assert_eq!(parse_os_release("junk\n=\"\nPRETTY_NAME=\"\n"), None);
        assert_eq!(parse_os_release(""), None);
    }

    #[test]
    fn loadavg() {
        let l = LoadAverage::from_read("0.44 0.87 0.50 1/142 11115\n".as_bytes()).unwrap();
        assert_eq!(load_average(&l), [0.44, 0.87, 0.50]);
    }

    fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
        MountEntry::from_procfs(&MountInfo::from_line(line).ok()?)
    }

    #[test]
    fn mountinfo_lines() {
        let l = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
        let e = parse_mountinfo_line(l).unwrap();
        assert_eq!((e.major, e.minor), (98, 0));
        assert_eq!(e.mount_point, PathBuf::from("/mnt2"));
        assert_eq!(e.fs_type, "ext3");
        assert_eq!(e.source, "/dev/root");
        // No optional fields, escaped space in the mount point.
        let l = "27 1 254:1 / /data\\040dir rw,relatime - xfs /dev/vda1 rw";
        let e = parse_mountinfo_line(l).unwrap();
        assert_eq!(e.mount_point, PathBuf::from("/data dir"));
        assert_eq!((e.major, e.minor), (254, 1));
        // Several optional fields.
        let l = "40 31 0:38 / /sys/fs/cgroup/unified rw shared:9 master:2 - cgroup2 cgroup2 rw";
        assert_eq!(parse_mountinfo_line(l).unwrap().fs_type, "cgroup2");
        for bad in [
            "",
            "1 2 3",
            "1 2 x:y / / rw - ext4 /dev/a rw",
            "1 2 8:1 / / rw ext4",
            "1 2 8:1 / / rw -",
        ] {
            assert_eq!(parse_mountinfo_line(bad), None, "{bad:?}");
        }
        assert_eq!(unescape_octal("a\\134b\\"), "a\\b\\");
        assert_eq!(unescape_octal("\\777x"), "\\777x");
    }

    #[test]
    fn longest_mount_wins() {
        let lines = [
            "1 0 254:0 / / rw - ext4 /dev/vda rw",
            "2 1 259:2 / /var/lib rw - xfs /dev/nvme0n1p2 rw",
            "3 1 259:3 / /var/lib2 rw - xfs /dev/nvme0n1p3 rw",
            "4 2 259:5 / /var/lib rw - xfs /dev/nvme1n1 rw",
        ];
        let m: Vec<MountEntry> = lines
            .iter()
            .filter_map(|l| parse_mountinfo_line(l))
            .collect();
        let find = |p: &str| find_mount(&m, Path::new(p)).map(|e| (e.major, e.minor));
        assert_eq!(find("/var/lib/postgresql/16"), Some((259, 5)));
        assert_eq!(find("/var/lib2x"), Some((254, 0)));
        assert_eq!(find("/var/lib2/x"), Some((259, 3)));
        assert_eq!(find("/home"), Some((254, 0)));
        assert_eq!(find_mount(&[], Path::new("/")), None);
    }

    fn table(rows: &[(u32, u64, &str, f64)]) -> HashMap<(u32, u64), ProcessCpu> {
        rows.iter()
            .map(|(pid, start, name, cpu_s)| {
                let p = ProcessCpu {
                    name: name.to_string(),
                    cpu_s: *cpu_s,
                    ppid: 1,
                };
                ((*pid, *start), p)
            })
            .collect()
    }

    #[test]
    fn busy_process_selection() {
        let before = table(&[
            (1, 1, "idle", 0.10),
            (2, 5, "hog", 1.0),
            (3, 7, "me", 0.0),
            (4, 9, "old", 0.0),
        ]);
        let after = table(&[
            (1, 1, "idle", 0.11),
            (2, 5, "hog", 1.5),
            (3, 7, "me", 1.0),
            (4, 10, "reused", 5.0),
            (5, 11, "new", 5.0),
        ]);
        // 0.5 s window: hog used 0.5 s = 100 %; idle 2 %; me is excluded; a reused pid and a
        // new process have no baseline.
        let me = HashSet::from([3]);
        let busy = busy_processes(&before, &after, 0.5, &me);
        assert_eq!(
            busy,
            vec![BusyProcess {
                pid: 2,
                name: "hog".into(),
                cpu_pct: 100.0
            }]
        );
        assert!(busy_processes(&before, &after, 0.0, &me).is_empty());
    }

    /// A measured server's backends (its children, grandchildren) are left out with it; its
    /// parent and a sibling busy beside it are not.
    #[test]
    fn process_trees_follow_parents() {
        let row = |pid: u32, ppid: u32| {
            let p = ProcessCpu {
                name: format!("p{pid}"),
                cpu_s: 0.0,
                ppid,
            };
            ((pid, 0), p)
        };
        let t: HashMap<_, _> = [
            row(1, 0),
            row(10, 1),
            row(11, 10),
            row(12, 10),
            row(13, 12),
            row(20, 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(process_trees(&t, &[10]), HashSet::from([10, 11, 12, 13]));
        assert_eq!(process_trees(&t, &[12, 20]), HashSet::from([12, 13, 20]));
        assert_eq!(process_trees(&t, &[99]), HashSet::from([99]));
    }

    fn clean_facts() -> HostFacts {
        HostFacts {
            logical_cpus: Some(16),
            usable_cpus: Some(16),
            cpu_mhz: Some(3000.0),
            swap_total_bytes: Some(1 << 30),
            swap_used_bytes: Some(0),
            cpu_governors: vec!["performance".into()],
            transparent_hugepages: Some("madvise".into()),
            numa_nodes: Some(1),
            nofile_soft: Some(1024),
            nofile_hard: Some(524288),
            io_scheduler: Some("none".into()),
            data_dir_device: Some("nvme0n1".into()),
            ..HostFacts::default()
        }
    }

    fn kinds(w: &[Warning]) -> Vec<WarningKind> {
        w.iter().map(|w| w.kind).collect()
    }

    #[test]
    fn doctor_quiet_on_a_clean_host() {
        assert!(doctor_warnings(&clean_facts(), Some(32)).is_empty());
        assert!(doctor_warnings(&clean_facts(), None).is_empty());
        // Unknown facts (a container hiding /sys) are not warnings, except the CPU clock.
        let unknown = HostFacts {
            cpu_mhz: Some(1.0),
            ..HostFacts::default()
        };
        assert!(doctor_warnings(&unknown, Some(10_000)).is_empty());
    }

    #[test]
    fn doctor_rules_fire() {
        let one = |f: HostFacts, clients: Option<u32>| {
            let w = doctor_warnings(&f, clients);
            assert_eq!(w.len(), 1, "{w:?}");
            w.into_iter().next().unwrap()
        };

        let w = one(
            HostFacts {
                cpu_governors: vec!["performance".into(), "powersave".into()],
                ..clean_facts()
            },
            None,
        );
        assert_eq!(
            (w.kind, w.level),
            (WarningKind::CpuGovernor, WarningLevel::Warn)
        );
        assert!(w.message.contains("powersave") && w.message.contains("cpupower"));

        let w = one(
            HostFacts {
                transparent_hugepages: Some("always".into()),
                ..clean_facts()
            },
            None,
        );
        assert_eq!(w.kind, WarningKind::TransparentHugepages);
        assert!(one_line(&w));
        assert!(
            doctor_warnings(
                &HostFacts {
                    transparent_hugepages: Some("never".into()),
                    ..clean_facts()
                },
                None
            )
            .is_empty()
        );

        let w = one(
            HostFacts {
                swap_used_bytes: Some(3 << 20),
                ..clean_facts()
            },
            None,
        );
        assert_eq!(w.kind, WarningKind::SwapInUse);
        assert!(w.message.contains("3.0 MiB"), "{}", w.message);

        let w = one(
            HostFacts {
                numa_nodes: Some(2),
                ..clean_facts()
            },
            None,
        );
        assert_eq!(w.kind, WarningKind::Numa);
        assert!(w.message.contains("numactl --interleave=all"));

        // Enough CPUs that the few-CPUs note stays quiet.
        let many_cpus = HostFacts {
            usable_cpus: Some(1000),
            ..clean_facts()
        };
        let w = one(many_cpus.clone(), Some(1000));
        assert_eq!(w.kind, WarningKind::OpenFilesLimit);
        assert!(w.message.contains("ulimit -n 16384"), "{}", w.message);
        assert!(!w.message.contains("hard limit"));
        let w = one(
            HostFacts {
                usable_cpus: Some(20_000),
                nofile_hard: Some(4096),
                ..clean_facts()
            },
            Some(20_000),
        );
        assert!(w.message.contains("ulimit -n 32768") && w.message.contains("hard limit is 4096"));
        // Exactly enough: clients + margin.
        assert!(doctor_warnings(&many_cpus, Some(1024 - NOFILE_MARGIN as u32)).is_empty());

        let busy = vec![
            BusyProcess {
                pid: 42,
                name: "ffmpeg".into(),
                cpu_pct: 180.0,
            },
            BusyProcess {
                pid: 7,
                name: "updatedb".into(),
                cpu_pct: 15.0,
            },
        ];
        let w = one(
            HostFacts {
                busy_processes: busy,
                ..clean_facts()
            },
            None,
        );
        assert_eq!(w.kind, WarningKind::BusyProcesses);
        assert!(w.message.contains("ffmpeg (pid 42, 180%)") && w.message.contains("updatedb"));

        let w = one(
            HostFacts {
                io_scheduler: Some("bfq".into()),
                ..clean_facts()
            },
            None,
        );
        assert_eq!(
            (w.kind, w.level),
            (WarningKind::IoScheduler, WarningLevel::Info)
        );
        assert!(w.message.contains("nvme0n1") && w.message.contains("bfq"));
        for ok in ["mq-deadline", "none,mq-deadline", "noop"] {
            let f = HostFacts {
                io_scheduler: Some(ok.into()),
                ..clean_facts()
            };
            assert!(doctor_warnings(&f, None).is_empty(), "{ok}");
        }

        let w = one(
            HostFacts {
                usable_cpus: Some(2),
                ..clean_facts()
            },
            Some(5),
        );
        assert_eq!(
            (w.kind, w.level),
            (WarningKind::FewCpus, WarningLevel::Info)
        );
        assert!(
            doctor_warnings(
                &HostFacts {
                    usable_cpus: Some(2),
                    ..clean_facts()
                },
                Some(4)
            )
            .is_empty()
        );

        let w = one(
            HostFacts {
                cpu_mhz: None,
                ..clean_facts()
            },
            None,
        );
        assert_eq!(
            (w.kind, w.level),
            (WarningKind::CpuMhzUnknown, WarningLevel::Info)
        );
    }

    #[test]
    fn doctor_all_rules_together_in_order() {
        let f = HostFacts {
            cpu_governors: vec!["ondemand".into()],
            transparent_hugepages: Some("always".into()),
            swap_used_bytes: Some(1),
            numa_nodes: Some(4),
            busy_processes: vec![BusyProcess {
                pid: 1,
                name: "x".into(),
                cpu_pct: 50.0,
            }],
            io_scheduler: Some("kyber".into()),
            cpu_mhz: None,
            ..clean_facts()
        };
        let w = doctor_warnings(&f, Some(5000));
        use WarningKind::*;
        assert_eq!(
            kinds(&w),
            [
                CpuGovernor,
                TransparentHugepages,
                SwapInUse,
                Numa,
                OpenFilesLimit,
                BusyProcesses,
                IoScheduler,
                FewCpus,
                CpuMhzUnknown
            ]
        );
        assert!(w.iter().all(|w| !w.message.contains('\n')));
    }

    fn one_line(w: &Warning) -> bool {
        !w.message.contains('\n') && w.to_string().starts_with("warn: ")
    }

    #[test]
    fn collect_on_this_machine() {
        let dir = std::env::temp_dir().join("dbrig-does-not-exist/yet");
        let t = Instant::now();
        let f = collect(Some(&dir));
        assert!(t.elapsed() >= BUSY_SAMPLE_WINDOW);
        let cpus = f.logical_cpus.expect("cpu count");
        assert!((1..=4096).contains(&cpus));
        assert!(f.usable_cpus.is_some_and(|u| u >= 1));
        let total = f.mem_total_bytes.expect("memory");
        assert!(total > 64 << 20);
        assert!(f.mem_available_bytes.unwrap() <= total);
        assert_eq!(f.kernel.sysname.as_deref(), Some("Linux"));
        assert!(f.kernel.release.is_some());
        assert!(f.nofile_soft.unwrap() <= f.nofile_hard.unwrap());
        assert!(f.load_average.is_some());
        assert!(f.data_dir_fs_type.is_some());
        assert!(f.busy_processes.iter().all(|p| p.pid != std::process::id()));
        let json = serde_json::to_string_pretty(&f).unwrap();
        let back: HostFacts = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        // Printed for the record (`cargo test -- --nocapture`).
        println!("{json}");
        for w in doctor_warnings(&f, Some(64)) {
            println!("{w}");
        }
        let _ = facts_lines(&f);
    }
}
