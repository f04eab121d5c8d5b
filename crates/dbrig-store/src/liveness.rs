//! Whether the dbrig that wrote a run is still alive: how a run left `running` reads back as
//! `abandoned`, and what `--resume` refuses to take over. The same rule for every backend.

use std::sync::OnceLock;

/// Whether the dbrig process that wrote a run is still alive: this process, or a live process
/// of that pid whose command line names dbrig (a pid reused by anything else is not it).
pub fn writer_alive(pid: u32) -> bool {
    pid == std::process::id()
        || std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("dbrig"))
}

/// Whether the writer of a run, process `pid` on `machine`, may still be alive. A run written
/// on another machine (a results server shared by many) cannot be looked up here, so it is
/// taken as alive: a live run is never called abandoned, and never taken over by a resume.
/// `None` is a run from before machines were stored: written where its file is.
pub fn writer_alive_on(machine: Option<&str>, pid: u32) -> bool {
    match machine {
        Some(m) if m != machine_id() => true,
        _ => writer_alive(pid),
    }
}

/// This machine, as runs store it: systemd's `/etc/machine-id` (stable, unique per
/// installation), else the host name. Read once.
pub fn machine_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        ["/etc/machine-id", "/proc/sys/kernel/hostname"]
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .map(|s| s.trim().to_owned())
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    })
}

/// A new globally unique run id: a UUID version 7 (RFC 9562: 48 bits of Unix milliseconds,
/// then random bits), so ids sort by when the run began and never collide across machines.
/// The random bits come from the kernel (`/dev/urandom`); should it be unreadable, from the
/// clock's nanoseconds, this process and a counter — still unique on this machine.
pub fn new_run_uid(started: std::time::SystemTime) -> String {
    use std::io::Read;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let since = started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let ms = since.as_millis() as u64 & 0xFFFF_FFFF_FFFF;
    let mut rand = [0u8; 10];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut rand));
    if read.is_err() {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mix = u64::from(since.subsec_nanos()) << 32 ^ u64::from(std::process::id()) ^ n;
        rand[..8].copy_from_slice(&mix.to_le_bytes());
        rand[8..].copy_from_slice(&(n as u16).to_le_bytes());
    }
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6..].copy_from_slice(&rand);
    b[6] = 0x70 | (b[6] & 0x0F);
    b[8] = 0x80 | (b[8] & 0x3F);
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_uids_are_version_7_ordered_and_distinct() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_714_566_896_250);
        let a = new_run_uid(t);
        let b = new_run_uid(t);
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        // 1_714_566_896_250 ms = 0x018f34269a7a.
        assert!(a.starts_with("018f3426-9a7a-7"), "{a}");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
        let later = new_run_uid(t + std::time::Duration::from_millis(1));
        assert!(later > a && later > b);
    }

    #[test]
    fn runs_of_other_machines_are_taken_as_alive() {
        // No process has pid u32::MAX; on this machine that pid is dead, elsewhere unknown.
        assert!(!writer_alive_on(None, u32::MAX));
        assert!(!writer_alive_on(Some(machine_id()), u32::MAX));
        assert!(writer_alive_on(Some("another machine"), u32::MAX));
    }
}
