//! Workload errors: each says what is wrong, with which object, and what to do.

use dbrig_driver::DriverError;

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error(transparent)]
    Launcher(#[from] crate::tpch::launcher::LauncherError),
    #[error(transparent)]
    Tpch(#[from] crate::tpch::TpchError),
    #[error(
        "table {table} already exists on {target}: run `dbrig cleanup {workload}` first, or use another database"
    )]
    TableExists {
        table: String,
        target: String,
        workload: String,
    },
    #[error(
        "table {table} does not exist on {target}: run `dbrig prepare {workload}` first (with the same --tables/--table-size)"
    )]
    MissingTable {
        table: String,
        target: String,
        workload: String,
    },
    #[error(
        "table {table} on {target} was not created by dbrig (not listed in dbrig_objects), so cleanup leaves it alone: drop it yourself if you mean to"
    )]
    NotCreatedByDbrig { table: String, target: String },
    #[error(
        "table {table} on {target} is not the table dbrig created ({why}), so dbrig leaves it alone: drop it yourself if you mean to"
    )]
    NotTheTableDbrigMade {
        table: String,
        target: String,
        why: String,
    },
    #[error(
        "table {table} on {target} may not be the table dbrig created: {why}; dbrig drops only a table it can prove its own, so it leaves this one alone: if it is dbrig's, drop it yourself (DROP TABLE {table})"
    )]
    Unproven {
        table: String,
        target: String,
        why: String,
    },
    #[error(
        "table {table} on {target} is half-prepared (a prepare was interrupted before it finished): run `dbrig cleanup {workload}`, then `dbrig prepare {workload}` again"
    )]
    HalfPrepared {
        table: String,
        target: String,
        workload: String,
    },
    #[error(
        "the data on {target} does not match the options: {why}; prepare it again (`dbrig cleanup {workload}`, `dbrig prepare {workload}`) or pass --allow-data-mismatch to measure it anyway"
    )]
    DataMismatch {
        target: String,
        why: String,
        workload: String,
    },
    #[error(
        "storage engine {engine} is not available on {target} (see SHOW ENGINES): choose another --mysql-storage-engine"
    )]
    EngineUnavailable { engine: String, target: String },
    #[error("unknown workload '{0}': run `dbrig list` to see the workloads")]
    UnknownWorkload(String),
    #[error("{0}")]
    InvalidOptions(String),
    /// A TPC-C transaction mix (`mix = "…"`) that is not five counts.
    #[error(
        "invalid transaction mix '{0}': give five whole numbers, New-Order,Payment,Order-Status,Delivery,Stock-Level (the specification's: 10,10,1,1,1), at least one above 0, each at most 1000"
    )]
    InvalidMix(String),
    #[error("could not connect {failed} of {clients} clients to {target}{untried}: {first}")]
    ConnectFailed {
        failed: u32,
        clients: u32,
        /// Empty, or how many clients were not tried after the first failures.
        untried: String,
        target: String,
        first: Box<DriverError>,
    },
    #[error(
        "the {workload} statements do not prepare on {target}: the tables differ from the workload's schema ({first}); prepare them with dbrig, or check --tables/--table-size"
    )]
    StatementsDoNotPrepare {
        workload: String,
        target: String,
        first: Box<DriverError>,
    },
    /// The server refused to prepare the workload's statements for another reason than the
    /// tables (see `DriverError::is_schema_mismatch`); `hint` is empty or "; what to do".
    #[error("the {workload} statements do not prepare on {target}: {first}{hint}")]
    StatementsRefused {
        workload: String,
        target: String,
        first: Box<DriverError>,
        hint: String,
    },
    /// A suite dbrig runs as other processes (sql-bench's Perl) cannot start at all.
    #[error("sql-bench cannot start: {0}")]
    SuiteCannotStart(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl WorkloadError {
    /// Whether the cause stays until someone changes something (the options, the tables on the
    /// target, the server's setup): preparing again the same way fails the same way. Only a
    /// database error that may pass by itself ([`DriverError::lasts`]) does not.
    pub fn lasts(&self) -> bool {
        match self {
            WorkloadError::Driver(e) => e.lasts(),
            WorkloadError::ConnectFailed { first, .. } => first.lasts(),
            _ => true,
        }
    }
}
