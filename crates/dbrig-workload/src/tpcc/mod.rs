//! TPC-C (TPROC-C as HammerDB names its fair-use derivation): the nine tables of the TPC-C
//! standard specification 5.11 with HammerDB's table and index names, the population of
//! clause 4.3 generated deterministically from a seed (`random.rs`: NURand and the strings of
//! clause 4.3.2; `data.rs`: each table's rows, per warehouse so warehouses load in parallel),
//! the load through the engines' bulk paths (`load.rs`), and the consistency conditions of
//! clause 3.3.2 (`check.rs`); the transactions as client-side statements (`txn.rs`) or as
//! stored routines, HammerDB's way (`procedures.rs`, SQL in `sql/procedures.*.sql`); keying
//! and think times with ten terminals per warehouse, as an option (`terminal.rs`).
//!
//! SQL is data: the schema and the checks per dialect in `sql/{common,mysql,postgres,sqlite}.sql`.

pub mod check;
pub mod data;
pub mod load;
pub mod options;
pub mod procedures;
pub mod random;
pub mod run;
pub mod terminal;
pub mod txn;

use dbrig_driver::Dialect;

use crate::sql::{DialectSql, SqlSet};

pub use check::{CheckFailure, CheckReport, check_conditions, check_consistency};
pub use data::{Population, Scale, Table};
pub use load::{
    LoadedData, TpccCleanupReport, TpccLoadOptions, TpccLoadReport, cleanup, load, loaded_data,
    refuse_existing,
};
pub use options::{Mix, TpccOptions};
pub use random::{Constants, nurand};
pub use run::{Reading, Tpcc};

/// Registry kind of the tables `dbrig prepare tpcc` creates.
pub const REGISTRY_KIND: &str = "tpcc_table";

/// The workload's name on the command line and in plans.
pub const NAME: &str = "tpcc";

/// The schema and housekeeping SQL of a dialect.
pub(crate) fn schema_sql(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}
