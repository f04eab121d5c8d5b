//! Command-line definitions (clap derive). Raw arguments only: resolution into targets,
//! workloads and runs happens in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use dbrig_workload::{OltpOptions, RunOptions};

#[derive(Debug, Parser)]
#[command(
    name = "dbrig",
    version,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Where results and default files go.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Output folder: the default SQLite target and the results database live here.
    #[arg(long, default_value = "dbrig-out")]
    pub out: PathBuf,
    /// Results database file (default: OUT/results.db).
    #[arg(long)]
    pub results: Option<PathBuf>,
}

impl Default for StoreArgs {
    fn default() -> Self {
        Self {
            out: PathBuf::from("dbrig-out"),
            results: None,
        }
    }
}

impl StoreArgs {
    pub fn results_path(&self) -> PathBuf {
        self.results
            .clone()
            .unwrap_or_else(|| self.out.join("results.db"))
    }
}

/// What to connect to and how to authenticate.
#[derive(Debug, Clone, Default, Args)]
pub struct ConnectionArgs {
    /// Target URL: mysql://USER@HOST:PORT/DB (or mariadb://, ?socket=PATH),
    /// postgres://USER@HOST:PORT/DB, sqlite:PATH, sqlite::memory: (default: sqlite:OUT/dbrig.sqlite).
    #[arg(long)]
    pub target: Option<String>,
    /// Read the password from this environment variable.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Read the password from this file (must not be readable by group or others: chmod 600).
    #[arg(long, value_name = "PATH")]
    pub password_file: Option<PathBuf>,
    /// sysbench compatibility: mysql, pgsql or sqlite (used when --target is not given).
    #[arg(long, hide = true)]
    pub db_driver: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_host: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_port: Option<u16>,
    #[arg(long, hide = true)]
    pub mysql_user: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_db: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_socket: Option<String>,
    #[arg(long, hide = true)]
    pub pgsql_host: Option<String>,
    #[arg(long, hide = true)]
    pub pgsql_port: Option<u16>,
    #[arg(long, hide = true)]
    pub pgsql_user: Option<String>,
    #[arg(long, hide = true)]
    pub pgsql_db: Option<String>,
    /// Refused: a password on the command line is visible to every user of the machine.
    #[arg(long, hide = true, value_name = "REFUSED")]
    pub mysql_password: Option<String>,
    /// Refused: a password on the command line is visible to every user of the machine.
    #[arg(long, hide = true, value_name = "REFUSED")]
    pub pgsql_password: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    /// Workload name (see `dbrig list`; sysbench names and the seeds' old names work), or a
    /// plan file (PLAN.toml) for `run`.
    pub workload: String,
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Output format of the final report.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// run: prepare the tables first when they do not exist yet.
    #[arg(long)]
    pub prepare: bool,
    /// Plan: fill a ${NAME} placeholder (repeatable; the environment is the fallback).
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Plan: override any setting, e.g. --set trials=5 or --set workload.oltp_read_only.options.tables=4.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Plan: print the resolved matrix and the order of trials; touch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Plan: continue the last run of this plan in the results database, skipping finished trials.
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub run: RunOptions,
    #[command(flatten)]
    pub oltp: OltpOptions,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Client count you plan to run (checked against the open-files limit and CPUs).
    #[arg(long)]
    pub clients: Option<u32>,
    /// Data directory whose disk's I/O scheduler to check.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// A server to report on too (`--target URL`): version, binary path (servers on this
    /// host), its key settings, and every variable / setting with `--format json`.
    #[command(flatten)]
    pub connection: ConnectionArgs,
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
