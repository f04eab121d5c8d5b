//! dbrig-report: everything a person or a script reads.
//!
//! Every report is rebuilt from the results database alone, from the typed results each trial
//! stored (`dbrig_core::results`), and shows each kind in its own unit and layout:
//!
//! * a single command's run reprinted as its command printed it ([`single_run_report`]):
//!   sysbench's blocks for OLTP, the seeds' lines for micro-benchmarks, the power and
//!   throughput tables, perfrun's Query / Cache pairs; or as one JSON object;
//! * plan reports ([`render()`]): one section per kind in plan order, as console text,
//!   Markdown, JSON, CSV, SVG charts and a self-contained HTML page. OLTP in the seeds'
//!   `B/A*100` and `(B/A*100)-100` tables with A/B verdicts and charts against client count;
//!   micro-benchmarks per item in rows/s, MB/s, seconds, ms per query or cycles per row;
//!   TPC-H in the DBT-3 seed table and bar chart with Power@Size, Throughput@Size and
//!   QphH@Size; perfrun comparisons with the filter given at collection.
//!
//! Statistics come from `dbrig_core::stats`; nothing here re-implements them.
//!
//! Contract: depends on `dbrig-core` and `dbrig-store` only; no drivers, servers or workloads.

pub mod blocks;
pub mod charts;
pub mod data;
pub mod error;
pub mod export;
pub mod figures;
pub mod files;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod fixture;
pub mod flame;
pub mod gate;
pub mod history;
pub mod html;
pub mod items;
pub mod kind;
pub mod kinds;
mod open;
pub mod palette;
pub mod records;
pub mod render;
pub mod run;
pub mod settings;
pub mod single;
pub mod table;
pub mod tables;
pub mod why;

pub use kinds::{benchbase, load, micro, perfrun, pgbench, sqlbench, tpch};

pub use charts::{TimelineSeries, latency_chart, throughput_chart, timeline_chart};
pub use data::{CellData, ComparisonRow, ItemUnit, Metric, ReportData, RunInfo, TrialData};
pub use error::ReportError;
pub use export::{cells_csv, report_json, trials_csv};
pub use figures::json_text;
pub use html::{html_page, render_html, write_atomic, write_html_report};
pub use kind::{KindReport, SingleFormat};
pub use render::{Format, Rendered, Request, render, write_svgs};
pub use run::{RunHeader, interval_line, run_json, run_text, statements_text};
pub use single::{
    is_single_run, perfrun_report, single_run_json, single_run_report, single_run_text,
};
pub use tables::{report_markdown, report_text};
