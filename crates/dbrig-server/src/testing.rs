//! For the tests of every crate: a check that cannot run on this host (no `perf`, not root, no
//! schedstat) says so where a reader of the suite's output sees it. `cargo test` hides what a
//! passing test printed, so a skipped check is also appended to the file named by
//! `DBRIG_NOT_CHECKED`, which `scripts/test` sets and lists at the end of the suite.

use std::io::Write;

/// The environment variable naming the file skipped checks are listed in.
pub const NOT_CHECKED_FILE: &str = "DBRIG_NOT_CHECKED";

/// Says that `what` was not checked here and why (one line: "NOT CHECKED: …"), on stderr and
/// in the suite's list of skipped checks.
pub fn not_checked(what: &str) {
    let line = format!("NOT CHECKED: {}", what.replace('\n', " "));
    eprintln!("{line}");
    if let Some(path) = std::env::var_os(NOT_CHECKED_FILE) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = appended {
            eprintln!("(could not list it in {}: {e})", path.to_string_lossy());
        }
    }
}
