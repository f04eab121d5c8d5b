//! dbrig-server: the run environment.
//!
//! This crate owns everything about the machine and the database server process around a
//! benchmark, as opposed to the benchmark itself:
//!
//! - [`host`]: collecting the host facts stored with every run (their types and human form
//!   live in `dbrig_core::host`, so reports show them without this crate) (CPU, memory, kernel, governor, transparent
//!   huge pages, swap, NUMA, open-files limit, the data directory's I/O scheduler, busy
//!   processes) and `dbrig doctor`'s warnings about what would distort a benchmark;
//! - [`procstat`]: OS statistics sampled during each trial (CPU user/system/iowait, disk
//!   throughput, memory, the server process's CPU and RSS);
//! - [`managed`]: managed database servers (MariaDB, MySQL, PostgreSQL from any build):
//!   data directory initialisation, start on a free loopback port, readiness, restart with
//!   other parameters, data snapshots, clean stop, no orphan processes (also when dbrig is
//!   SIGKILLed), NUMA interleaving, read-only starts, restart detection.
//!
//! Contract: Linux facts are read from `/proc` (parsed by the `procfs` crate), `/sys` and
//! system calls through rustix, without libc and without `unsafe` of our own (it is
//! forbidden), and reading never fails a run: unknown facts are `None`. This crate must not
//! depend on workloads, the result store or reports; they depend on it (or on its serialised
//! types).

pub mod host;
pub mod managed;
pub mod procstat;
pub mod testing;

pub use host::{
    BusyProcess, HostFacts, KernelInfo, Warning, WarningKind, WarningLevel, doctor_warnings,
};
pub use managed::{
    ConnectionInfo, Engine, LaunchInfo, LifeMark, ManagedError, ManagedServer, Params, ServerDef,
    ServerGuard, ServerState, ServerStatus, build_tree_info, ensure_build, server_restarted,
    shutdown_all,
};
pub use procstat::{
    OsClock, OsSample, OsSampler, ProcessUsage, SystemSnapshot, cpu_tick_s, online_cpus,
    process_tree, reset_own_peak_rss, tree_cpu_s,
};
