//! What can be wrong with a TPC-H test's inputs before any SQL runs (scale factor, query
//! folder, launcher controls) and with a captured plan; `WorkloadError::Tpch` carries it
//! up. Each message says what is wrong and what to give instead.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TpchError {
    #[error("invalid scale factor {0}: give a positive number up to 100000, such as 0.01, 1 or 10")]
    ScaleFactorNotPositive(f64),
    #[error("scale factor {0} is beyond TPC-H's largest: give at most 100000")]
    ScaleFactorTooLarge(f64),
    #[error(
        "invalid scale factor '{0}': give a positive decimal number up to 100000, such as 0.01, 1 or 10"
    )]
    ScaleFactorMalformed(String),
    #[error("invalid scale factor '{0}': give a decimal number")]
    ScaleFactorNotANumber(String),
    #[error(
        "unknown TPC-H table '{0}': region, nation, supplier, customer, part, partsupp, orders, lineitem"
    )]
    UnknownTable(String),
    // The I/O error is part of the message (`cause`, not a `source`, so a chain of causes
    // does not say it twice).
    #[error("cannot read query folder {}: {cause}", dir.display())]
    ReadQueryFolder { dir: PathBuf, cause: std::io::Error },
    #[error("cannot read query file {}: {cause}", path.display())]
    ReadQueryFile {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("no .sql files in query folder {}", .0.display())]
    EmptyQueryFolder(PathBuf),
    #[error("cannot read the controls file {}: {cause}", path.display())]
    ReadControls {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The controls file is not valid: the file, the line (`:N`, or empty) and TOML's
    /// message, which names the key.
    #[error("controls file {}{line}: {message}", path.display())]
    ControlsFile {
        path: PathBuf,
        line: String,
        message: String,
    },
    /// The controls of a tpch_power workload (a plan's, or the command line's) refused.
    #[error("tpch_power {0}")]
    PowerControls(ControlsError),
    /// Controls given to the power test itself (the plan's were checked before).
    #[error(transparent)]
    Controls(ControlsError),
    #[error(transparent)]
    Explain(#[from] ExplainError),
}

/// Controls that do not fit the query set or the reduction.
#[derive(Debug, thiserror::Error)]
pub enum ControlsError {
    #[error("controls for query '{name}', which is not in the query set (queries: {known})")]
    UnknownQuery { name: String, known: String },
    #[error(
        "controls of query '{name}': runs = 0 only means \"until the cluster is full\" with reduction analyze-explain; give at least 1"
    )]
    ZeroRuns { name: String },
    #[error("controls of query '{name}': startup parameter '{param}' is not KEY=VALUE")]
    Param { name: String, param: String },
}

/// Why a query's plan could not be captured (the power test notes it and goes on).
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("the query has no statement that returns rows to explain")]
    NothingToExplain,
    /// The server refused the EXPLAIN or a statement before it.
    #[error("{0}")]
    Driver(#[from] dbrig_driver::DriverError),
    #[error("the EXPLAIN output is empty")]
    Empty,
    #[error("EXPLAIN returned no rows")]
    NoRows,
    #[error("malformed EXPLAIN output")]
    Malformed,
    #[error("EXPLAIN output is not UTF-8")]
    NotUtf8,
    #[error("EXPLAIN output is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
}
