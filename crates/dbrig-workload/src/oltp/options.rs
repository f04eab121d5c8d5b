//! Options of the OLTP suite, with sysbench 1.0.20's names and defaults.

use clap::Args;
use serde::{Deserialize, Serialize};

use dbrig_core::limits;

use crate::options::parse_bool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StorageEngine {
    Innodb,
    Myisam,
    Aria,
    Memory,
}

impl StorageEngine {
    /// Engines without transactions: a delete/insert pair is two separate changes.
    pub fn transactional(&self) -> bool {
        *self == StorageEngine::Innodb
    }

    pub fn sql_name(&self) -> &'static str {
        match self {
            StorageEngine::Innodb => "InnoDB",
            StorageEngine::Myisam => "MyISAM",
            StorageEngine::Aria => "Aria",
            StorageEngine::Memory => "MEMORY",
        }
    }
}

/// Whether MariaDB/MySQL's 1062 (duplicate entry) restarts an event like a deadlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DupKeyRetry {
    /// Retried for tables without transactions (MyISAM, Aria, MEMORY), where sysbench's
    /// concurrent delete/insert pairs of one id collide (the seeds' "dup key errors (due to
    /// sysbench)"); the report says so. InnoDB tables never need it.
    Auto,
    /// Always retried.
    On,
    /// Never: a duplicate key stops the client, with a line saying why.
    Off,
}

/// Options of the OLTP workloads (each workload reads the ones it uses).
#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct OltpOptions {
    /// Number of tables (sbtest1 … sbtestN).
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::Tables>)]
    #[serde(deserialize_with = "limits::de::<limits::Tables, _>")]
    pub tables: u32,
    /// Rows per table.
    #[arg(long, default_value_t = 10_000, value_parser = limits::parse::<limits::Rows>)]
    #[serde(deserialize_with = "limits::de::<limits::Rows, _>")]
    pub table_size: u64,
    /// Rows per range select.
    #[arg(long, default_value_t = 100, value_parser = limits::parse::<limits::Rows>)]
    #[serde(deserialize_with = "limits::de::<limits::Rows, _>")]
    pub range_size: u64,
    /// Point selects per transaction (oltp_point_select always does 1).
    #[arg(long, default_value_t = 10, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub point_selects: u32,
    /// Simple range selects per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub simple_ranges: u32,
    /// SUM() range selects per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub sum_ranges: u32,
    /// ORDER BY range selects per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub order_ranges: u32,
    /// DISTINCT range selects per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub distinct_ranges: u32,
    /// Run the range selects at all.
    #[arg(long, default_value_t = true, value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub range_selects: bool,
    /// UPDATEs of the indexed column per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub index_updates: u32,
    /// UPDATEs of a non-indexed column per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub non_index_updates: u32,
    /// DELETE + INSERT pairs per transaction.
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::PerTransaction>)]
    #[serde(deserialize_with = "limits::de::<limits::PerTransaction, _>")]
    pub delete_inserts: u32,
    /// Send no BEGIN/COMMIT (each statement autocommits).
    #[arg(long, default_value_t = false, value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub skip_trx: bool,
    /// oltp_insert: let the server assign ids (auto-increment) instead of drawing them.
    #[arg(long, default_value_t = true, value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub auto_inc: bool,
    /// oltp_insert: send the INSERT as a prepared statement (bind values, no parse per event).
    /// Off by default: sysbench sends oltp_insert's INSERT as text whatever --db-ps-mode says;
    /// the report names the prepared form when it is on.
    #[arg(long, default_value_t = false, value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub insert_prepared: bool,
    /// Create the secondary index on k after loading.
    #[arg(long, default_value_t = true, value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub create_secondary: bool,
    /// MariaDB/MySQL storage engine of the tables.
    #[arg(long, value_enum, default_value_t = StorageEngine::Innodb)]
    pub mysql_storage_engine: StorageEngine,
    /// MariaDB/MySQL: retry 1062 duplicate-key errors as conflicts (auto: for MyISAM, Aria
    /// and MEMORY tables, whose concurrent delete/insert pairs collide without transactions).
    #[arg(long, value_enum, default_value_t = DupKeyRetry::Auto)]
    pub dup_key_retry: DupKeyRetry,
    /// oltp_delete: insert each deleted row back in the same event, so the table does not drain
    /// (sysbench drains it; off by default for comparability).
    #[arg(long, default_value_t = false, value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub delete_reinsert: bool,
    /// select_random_points: keys per IN list.
    #[arg(long, default_value_t = 10, value_parser = limits::parse::<limits::PerStatement>)]
    #[serde(deserialize_with = "limits::de::<limits::PerStatement, _>")]
    pub random_points: u32,
    /// select_random_ranges: ranges per query.
    #[arg(long, default_value_t = 10, value_parser = limits::parse::<limits::PerStatement>)]
    #[serde(deserialize_with = "limits::de::<limits::PerStatement, _>")]
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each range.
    #[arg(long, default_value_t = 5, value_parser = limits::parse::<limits::KeyDelta>)]
    #[serde(deserialize_with = "limits::de::<limits::KeyDelta, _>")]
    pub delta: u64,
    /// select_batch: rows scanned per event by primary-key range.
    #[arg(long, default_value_t = 20_000, value_parser = limits::parse::<limits::Rows>)]
    #[serde(deserialize_with = "limits::de::<limits::Rows, _>")]
    pub batch_size: u64,
    /// prepare: parallel loaders (0 = one per table or per CPU, whichever is more); a table is split into ranges so even one
    /// table loads in parallel.
    #[arg(long, default_value_t = 0, value_parser = limits::parse::<limits::Loaders>)]
    #[serde(deserialize_with = "limits::de::<limits::Loaders, _>")]
    pub load_parallel: u32,
}

impl Default for OltpOptions {
    fn default() -> Self {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            o: OltpOptions,
        }
        Wrap::parse_from(["dbrig"]).o
    }
}
