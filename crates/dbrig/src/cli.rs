//! The command line (clap derive): the commands, each with its arguments from its own file
//! (shared ones in `args.rs`), and sysbench's option spelling. Raw arguments only: each
//! command's file turns them into a plan or an action.

use clap::{Parser, Subcommand};

use crate::args::{DoctorArgs, StoreArgs, WorkloadArgs};

#[derive(Debug, Parser)]
#[command(
    name = "dbrig",
    version = dbrig_exec::VERSION,
    about = "A database benchmark rig for MariaDB/MySQL, PostgreSQL and SQLite",
    long_about = "A database benchmark rig for MariaDB/MySQL, PostgreSQL and SQLite.\n\n\
        sysbench habits work: `dbrig prepare|run|cleanup WORKLOAD [options]`, option names \
        with dashes or underscores. Without --target, dbrig benchmarks an SQLite file in the \
        output folder, so a first run needs no server."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create and load a workload's tables.
    Prepare(WorkloadArgs),
    /// Run a workload and report (and store) what it measured.
    Run(WorkloadArgs),
    /// Drop the tables a workload's prepare created (only tables dbrig created).
    Cleanup(WorkloadArgs),
    /// List the workloads and every option with its default.
    List,
    /// Show host facts and what would distort a benchmark on this machine.
    Doctor(DoctorArgs),
    /// List the runs stored in the results database.
    Runs(StoreArgs),
    /// The seeds' micro-benchmarks: memory_load, scan_filter, tmp_groupby.
    Micro(crate::micro_cmd::MicroArgs),
    /// Query-by-query A/B of two servers over a folder of queries (RQG perfrun), or `perfrun report`.
    Perfrun(crate::perfrun_cmd::PerfrunArgs),
    /// Report a stored run: tables, verdicts, JSON/CSV/Markdown exports, SVG charts, HTML page.
    Report(crate::report_cmd::ReportArgs),
    /// Compare two stored runs (RUN_A is the baseline).
    Compare(crate::report_cmd::CompareArgs),
    /// DBT-3 / TPC-H: generate .tbl files, load test, power test, answer check, cleanup.
    Tpch(crate::tpch_cmd::TpchArgs),
    /// Start, stop or show a managed database server (MariaDB, MySQL, PostgreSQL).
    Server(crate::server_cmd::ServerArgs),
}

/// sysbench spells options with underscores (`--table_size`); clap wants dashes. Rewrite the
/// option *names* (never their values) before parsing.
pub fn normalize_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut after_double_dash = false;
    args.into_iter()
        .map(|a| {
            if after_double_dash || !a.starts_with("--") {
                return a;
            }
            if a == "--" {
                after_double_dash = true;
                return a;
            }
            match a.split_once('=') {
                Some((name, value)) => format!("{}={value}", name.replace('_', "-")),
                None => a.replace('_', "-"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn underscores_become_dashes_in_names_only() {
        let out = normalize_args(
            [
                "dbrig",
                "run",
                "oltp_read_only",
                "--table_size=1000",
                "--rand_type",
                "uniform",
                "--target=sqlite:a_b.db",
            ]
            .map(String::from),
        );
        assert_eq!(
            out,
            [
                "dbrig",
                "run",
                "oltp_read_only",
                "--table-size=1000",
                "--rand-type",
                "uniform",
                "--target=sqlite:a_b.db"
            ]
        );
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
