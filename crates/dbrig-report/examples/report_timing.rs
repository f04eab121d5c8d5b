//! Time building every report of a run (what `bench/report-scale` prints).
//!
//! Usage: report_timing RESULTS.db RUN_ID [OUT_DIR]

use std::path::PathBuf;
use std::time::Instant;

use dbrig_core::results::QueryStatus;
use dbrig_report::fixture;
use dbrig_report::html::{LIVE_MARKER, live_power_html, with_live};
use dbrig_report::{
    ReportData, cells_csv, render_html, report_json, report_markdown, report_text, trials_csv,
    write_atomic,
};
use dbrig_store::{RunId, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: report_timing RESULTS.db RUN_ID [OUT_DIR]";
    let path = PathBuf::from(args.first().ok_or(usage)?);
    let run = RunId(args.get(1).ok_or(usage)?.parse()?);
    let out = args.get(2).map(PathBuf::from);
    let store = Store::open(&path)?;
    let total = Instant::now();
    let mut step = Instant::now();
    let mut lap = |what: &str, bytes: usize| {
        eprintln!(
            "  {what:<10} {:>8.1} ms  {:>10} bytes",
            step.elapsed().as_secs_f64() * 1000.0,
            bytes
        );
        step = Instant::now();
    };
    let data = ReportData::load(&store, run)?;
    lap("load", 0);
    let text = report_text(&data)?;
    lap("text", text.len());
    let json = serde_json::to_string(&report_json(&data)?)?;
    lap("json", json.len());
    let csv = trials_csv(&data) + &cells_csv(&data);
    lap("csv", csv.len());
    let md = report_markdown(&data)?;
    lap("markdown", md.len());
    let html = render_html(&store, &data)?;
    lap("html", html.len());
    if let Some(dir) = out {
        write_atomic(&dir.join("report.html"), html.as_bytes())?;
        write_atomic(&dir.join("report.txt"), text.as_bytes())?;
        lap("write", 0);
        // What a plan's page costs after each query of a power trial: the live section of a
        // 22-query report so far, put into the stored trials' page, written atomically.
        let queries = (1..=22)
            .map(|n| fixture::step(&n.to_string(), 100_000 * n, QueryStatus::Ok))
            .collect();
        let report = fixture::power_report("11.4.2-MariaDB", queries, None);
        let page = html.replacen("<body>", &format!("<body>\n{LIVE_MARKER}"), 1);
        let live = live_power_html("A tpch_power 1 clients trial 1", &report)?;
        let live_page = with_live(&page, &live);
        write_atomic(&dir.join("report.html"), live_page.as_bytes())?;
        lap("live", live_page.len());
    }
    println!(
        "{} cells, {} trials: all reports in {:.3} s",
        data.cells.len(),
        data.cells.iter().map(|c| c.trials.len()).sum::<usize>(),
        total.elapsed().as_secs_f64()
    );
    Ok(())
}
