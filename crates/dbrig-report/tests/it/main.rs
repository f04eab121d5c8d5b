//! Integration tests of the plan reports: snapshots of every format from a store filled with
//! fixed measurements, comparisons of two runs, and the HTML page rendered by Chromium.

mod compare;
mod html_browser;
mod live;
mod snapshots;
mod tpch;

use std::path::PathBuf;

use dbrig_report::ReportData;
use dbrig_report::fixture;
use dbrig_store::Store;

/// A fresh in-memory store holding the demo run.
pub fn demo() -> (Store, ReportData) {
    let mut store = Store::open_in_memory().expect("in-memory store");
    let run = fixture::demo_run(&mut store).expect("fill the demo run");
    let data = ReportData::load(&store, run).expect("load the demo run");
    (store, data)
}

/// Compare `actual` with the committed snapshot `name`; `DBRIG_UPDATE_SNAPSHOTS=1` rewrites it.
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("DBRIG_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "snapshot {} cannot be read ({e}); review the output and create it with \
             DBRIG_UPDATE_SNAPSHOTS=1 cargo test -p dbrig-report",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let (exp, act): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = exp
        .iter()
        .zip(&act)
        .position(|(e, a)| e != a)
        .unwrap_or(exp.len().min(act.len()));
    let actual_path = path.with_extension("actual");
    let _ = std::fs::write(&actual_path, actual);
    panic!(
        "snapshot {name} differs at line {} ({} vs {} lines)\n  expected: {:?}\n  actual:   {:?}\n\
         full output written to {}; see `diff {} {}`; if the change is intended, rerun with \
         DBRIG_UPDATE_SNAPSHOTS=1",
        first + 1,
        exp.len(),
        act.len(),
        exp.get(first).copied().unwrap_or("<end>"),
        act.get(first).copied().unwrap_or("<end>"),
        actual_path.display(),
        path.display(),
        actual_path.display(),
    );
}
