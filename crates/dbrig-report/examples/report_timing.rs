//! Time building every report of a run (what `bench/report-scale` prints).
//!
//! Usage: report_timing RESULTS.db RUN_ID [OUT_DIR]

use std::path::PathBuf;
use std::time::Instant;

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
    }
    println!(
        "{} cells, {} trials: all reports in {:.3} s",
        data.cells.len(),
        data.cells.iter().map(|c| c.trials.len()).sum::<usize>(),
        total.elapsed().as_secs_f64()
    );
    Ok(())
}
