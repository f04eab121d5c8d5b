//! Two single-configuration runs compared.

use dbrig_report::{ReportData, fixture, report_text};
use dbrig_store::Store;

use crate::assert_snapshot;

#[test]
fn two_runs_are_named_after_their_runs() {
    let mut store = Store::open_in_memory().unwrap();
    let a = fixture::single_run(&mut store, "before", 1.0).unwrap();
    let b = fixture::single_run(&mut store, "after", 1.10).unwrap();
    let data = ReportData::load_compare(&store, a, b).unwrap();
    // Both runs call their configuration "default": the runs name them instead.
    assert_eq!(data.configurations, ["run1", "run2"]);
    assert_eq!(data.baseline, "run1");
    assert_eq!(data.comparisons.len(), 2);
    for r in &data.comparisons {
        let d = r.comparison.delta.unwrap();
        assert!((d - 0.10).abs() < 1e-9, "{d}");
    }
    assert_snapshot("compare.txt", &report_text(&data).unwrap());
}

#[test]
fn distinct_configuration_names_are_kept() {
    let mut store = Store::open_in_memory().unwrap();
    let a = fixture::single_run(&mut store, "before", 1.0).unwrap();
    let demo = fixture::demo_run(&mut store).unwrap();
    let data = ReportData::load_compare(&store, a, demo).unwrap();
    assert_eq!(data.configurations, ["default", "off", "8", "32"]);
}

#[test]
fn a_run_is_not_compared_with_itself() {
    let mut store = Store::open_in_memory().unwrap();
    let a = fixture::single_run(&mut store, "before", 1.0).unwrap();
    let err = ReportData::load_compare(&store, a, a).unwrap_err();
    assert!(err.to_string().contains("compared with itself"), "{err}");
}
