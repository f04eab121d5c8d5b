//! The "why" section of a comparison, from a fixture run whose trials carry evidence (CPU per
//! transaction, counters, waits): what every format shows of it.

use dbrig_core::stats::Verdict;
use dbrig_report::why::why;
use dbrig_report::{ReportData, fixture, report_text};
use dbrig_store::Store;

use crate::assert_snapshot;

#[test]
fn why_section_names_cpu_counters_and_waits_that_changed() {
    let mut store = Store::open_in_memory().unwrap();
    let run = fixture::explain_run(&mut store).unwrap();
    let data = ReportData::load(&store, run).unwrap();
    // CPU per transaction is an ordinary figure beside QPS, with its own verdict: a third of
    // the server CPU per transaction is an improvement (lower is better).
    let cpu = data
        .comparison("large", "oltp_read_only server CPU", 4)
        .unwrap();
    assert_eq!(cpu.comparison.verdict, Verdict::Improvement);
    assert!((cpu.comparison.delta.unwrap() + 2.0 / 3.0).abs() < 0.01);
    // QPS keeps its family: its p-value is the same with or without the CPU rows.
    let qps = data.comparison("large", "oltp_read_only", 4).unwrap();
    assert_eq!(qps.comparison.p_adjusted, qps.comparison.p_value);

    let w = why(&data);
    assert_eq!(w.len(), 1);
    let w = &w[0];
    assert_eq!(w.unit, "txn");
    // The buffer pool reads per transaction fell to a third: called a change, listed first
    // with the data read; the read requests per transaction did not change.
    let names: Vec<&str> = w.counters.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names[..2].contains(&"Innodb_buffer_pool_reads"),
        "{names:?}"
    );
    assert!(names[..2].contains(&"Innodb_data_read"), "{names:?}");
    assert!(w.counters[..2].iter().all(|c| c.verdict == "changed"));
    assert!(!names.contains(&"Handler_read_key"), "{names:?}");
    // The baseline waited on data-file I/O most; the other configuration is on CPU.
    assert_eq!(
        w.top_waits[0].waits[0].0,
        "wait/io/file/innodb/innodb_data_file"
    );
    assert_eq!(w.top_waits[1].waits[0].0, "CPU");

    let text = report_text(&data).unwrap();
    let section = &text[text.find("Why: ").expect("a why section")..];
    let section = &section[..section.find("\n\n").unwrap_or(section.len())];
    assert_snapshot("why.txt", &format!("{section}\n"));
    let json = dbrig_report::export::report_json(&data).unwrap();
    assert_eq!(json["why"][0]["counters"][0]["verdict"], "changed");
}
