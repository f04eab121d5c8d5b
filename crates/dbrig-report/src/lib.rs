//! dbrig-report: everything a person or a script reads.
//!
//! Console text in sysbench's layout (plus what sysbench lacks), JSON documents, and the plan
//! reports: tables in the seeds' `B/A*100` and `(B/A*100)-100` formats, A/B verdicts, JSON and
//! CSV exports, SVG charts and a self-contained HTML page. Every function here formats values
//! it is given — a finished run's measurements or rows read from the results database — so
//! any report can be rebuilt without a database server. Statistics come from
//! `dbrig_core::stats`; nothing here re-implements them.
//!
//! Contract: no dependency on drivers, servers or workloads.

pub mod charts;
pub mod data;
pub mod error;
pub mod export;
#[doc(hidden)]
pub mod fixture;
pub mod html;
pub mod perfrun;
pub mod run;
pub mod tables;
pub mod tpch;

pub use charts::{TimelineSeries, latency_chart, throughput_chart, timeline_chart};
pub use data::{CellData, ComparisonRow, ItemUnit, Metric, ReportData, RunInfo, TrialData};
pub use error::ReportError;
pub use export::{cells_csv, report_json, trials_csv};
pub use html::{render_html, write_atomic, write_html_report};
pub use run::{RunHeader, interval_line, run_json, run_text, statements_text};
pub use tables::{report_markdown, report_text};
