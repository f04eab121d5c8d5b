//! Whether the dbrig that wrote a run is still alive: how a run left `running` reads back as
//! `abandoned`, and what `--resume` refuses to take over. The same rule for every backend.

/// Whether the dbrig process that wrote a run is still alive: this process, or a live process
/// of that pid whose command line names dbrig (a pid reused by anything else is not it).
pub fn writer_alive(pid: u32) -> bool {
    pid == std::process::id()
        || std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("dbrig"))
}
