//! dbrig-report: everything a person or a script reads.
//!
//! Console text in sysbench's layout (plus what sysbench lacks), JSON documents, and later the
//! plan tables, charts and HTML pages. Every function here formats values it is given — a
//! finished run's measurements or rows read from the results database — so any report can be
//! rebuilt without a database server.
//!
//! Contract: no dependency on drivers, servers or workloads.

pub mod run;

pub use run::{RunHeader, interval_line, run_json, run_text};
