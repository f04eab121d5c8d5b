//! The arguments several commands share: where results go, what to connect to, what a
//! single measurement records around its trial, the output format, and `run`'s workload
//! arguments. Command files import these; `cli.rs` assembles the commands.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use dbrig_core::limits;
use dbrig_workload::{OltpOptions, RunOptions, ScriptOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `dbrig list`: the workloads and every option.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// `json`: workloads and options as one object, for scripts.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// A sysbench Lua script: list the options it declares (`sysbench.cmdline.options`).
    #[arg(long, value_name = "FILE.lua")]
    pub script: Option<String>,
}

/// `dbrig runs`: what the results database holds.
#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// `json`: one array of runs, for scripts.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where results and default files go.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Output folder: the default SQLite target and the results database live here.
    #[arg(long, default_value = "dbrig-out")]
    pub out: PathBuf,
    /// Results database: a file (default: OUT/results.db; or $DBRIG_RESULTS), or a server's
    /// database, postgres://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB (its password from
    /// ~/.pgpass, option files or the environment, as a target's).
    // The value is never shown in help: a URL may carry a password.
    #[arg(long, env = "DBRIG_RESULTS", hide_env_values = true)]
    pub results: Option<PathBuf>,
    #[command(flatten)]
    pub provenance: crate::results_cmd::ProvenanceArgs,
}

impl Default for StoreArgs {
    fn default() -> Self {
        Self {
            out: PathBuf::from("dbrig-out"),
            results: None,
            provenance: Default::default(),
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
    /// postgres://USER@HOST:PORT/DB (parts left out from PGHOST, PGPORT, PGUSER, PGDATABASE),
    /// sqlite:PATH, sqlite::memory: (default: $DBRIG_TARGET, else sqlite:OUT/dbrig.sqlite).
    // The value is never shown in help: a URL may carry a password.
    #[arg(long, env = "DBRIG_TARGET", hide_env_values = true)]
    pub target: Option<String>,
    /// Read the password from this environment variable (`run PLAN`: for every MariaDB/MySQL
    /// or PostgreSQL configuration without a password of its own).
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Read the password from this file (must not be readable by group or others: chmod 600;
    /// `run PLAN`: for every MariaDB/MySQL or PostgreSQL configuration without a password of
    /// its own).
    #[arg(long, value_name = "PATH")]
    pub password_file: Option<PathBuf>,
    /// MariaDB/MySQL: read no option files (my.cnf), as the mariadb client's --no-defaults.
    /// Without it, what the URL leaves out (user, host, port, socket, password) comes from
    /// /etc/my.cnf, /etc/mysql/my.cnf, $MARIADB_HOME/my.cnf, ~/.my.cnf as the client reads them.
    #[arg(long, conflicts_with_all = ["defaults_file", "defaults_extra_file"])]
    pub no_defaults: bool,
    /// MariaDB/MySQL: read this option file alone (the mariadb client's --defaults-file).
    #[arg(long, value_name = "PATH")]
    pub defaults_file: Option<PathBuf>,
    /// MariaDB/MySQL: read this option file too, before ~/.my.cnf
    /// (the mariadb client's --defaults-extra-file).
    #[arg(long, value_name = "PATH")]
    pub defaults_extra_file: Option<PathBuf>,
    /// TLS mode: disable (default), prefer, require, verify-ca, verify-full (also sysbench's
    /// on/off and MySQL's REQUIRED, VERIFY_CA, VERIFY_IDENTITY); the URL's `sslmode=`.
    #[arg(
        long,
        value_name = "MODE",
        alias = "mysql-ssl",
        alias = "pgsql-sslmode"
    )]
    pub ssl_mode: Option<String>,
    /// CA certificates (PEM) to verify the server with (the URL's `sslrootcert=`).
    #[arg(long, value_name = "PATH", alias = "mysql-ssl-ca")]
    pub ssl_ca: Option<PathBuf>,
    /// Client certificate (PEM) for certificate authentication (the URL's `sslcert=`).
    #[arg(long, value_name = "PATH", alias = "mysql-ssl-cert")]
    pub ssl_cert: Option<PathBuf>,
    /// The client certificate's key (PEM, chmod 600; the URL's `sslkey=`).
    #[arg(long, value_name = "PATH", alias = "mysql-ssl-key")]
    pub ssl_key: Option<PathBuf>,
    /// Lowest TLS version accepted: TLSv1.2 or TLSv1.3 (the URL's `sslminversion=`).
    #[arg(long, value_name = "VERSION")]
    pub ssl_min_version: Option<String>,
    /// sysbench compatibility: mysql, pgsql or sqlite (used when --target is not given).
    #[arg(long, hide = true)]
    pub db_driver: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_host: Option<String>,
    #[arg(long, hide = true, value_parser = limits::parse::<limits::Port>)]
    pub mysql_port: Option<u16>,
    #[arg(long, hide = true)]
    pub mysql_user: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_db: Option<String>,
    #[arg(long, hide = true)]
    pub mysql_socket: Option<String>,
    #[arg(long, hide = true)]
    pub pgsql_host: Option<String>,
    #[arg(long, hide = true, value_parser = limits::parse::<limits::Port>)]
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

/// What a single measuring command records around its trial, as a plan's `[environment]`
/// does (`dbrig run PLAN.toml` takes these from the plan file instead).
#[derive(Debug, Clone, Args)]
pub struct EnvironmentArgs {
    /// Sample OS statistics (CPU, memory, disk, the server's CPU and RSS) every N seconds
    /// during the trial and store them with it (0 = off).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = limits::parse::<limits::IntervalSeconds>)]
    pub os_stats_interval: f64,
    /// Sample the wait events of the benchmark's sessions every N milliseconds and store the
    /// counts per event with the trial (0 = off; PostgreSQL pg_stat_activity, MariaDB/MySQL
    /// performance_schema when the server runs with it; a plan's `wait-sample-ms`).
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = limits::parse::<limits::WaitSampleMs>)]
    pub wait_sample_ms: u64,
    /// Profile the server with `perf record` (cpu-clock at 99 Hz, the server's process tree
    /// only) over the measured interval, store the folded stacks with the trial and draw flame
    /// graphs in the HTML report (a plan's `profile = true`). Without perf or permission one
    /// line says so and the trial runs without a profile.
    #[arg(long)]
    pub profile: bool,
    /// Collect no evidence at all: no server/client CPU per unit of work, no counters per
    /// interval, no waits, no profile (a plan's `evidence = false`); reports say it was not
    /// collected.
    #[arg(long, conflicts_with_all = ["wait_sample_ms", "profile"])]
    pub no_evidence: bool,
    /// `sync` and drop the OS page cache before the trial (needs root; recorded either way;
    /// a plan's `drop-caches`).
    #[arg(long)]
    pub drop_caches_before_trial: bool,
    /// CPU list for dbrig itself, e.g. 0 or 0-3 (taskset syntax).
    #[arg(long, value_name = "CPUS")]
    pub client_cpus: Option<String>,
    /// Shell command run before the trial; its output is stored with the trial.
    #[arg(long, value_name = "COMMAND")]
    pub before_trial: Option<String>,
    /// Shell command run after the trial; its output is stored with the trial.
    #[arg(long, value_name = "COMMAND")]
    pub after_trial: Option<String>,
    /// SQL run on the target before the trial (statements separated by `;`); rows stored.
    #[arg(long, value_name = "SQL")]
    pub before_trial_sql: Option<String>,
    /// SQL run on the target after the trial; rows stored.
    #[arg(long, value_name = "SQL")]
    pub after_trial_sql: Option<String>,
    /// Seconds a hook may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = limits::parse::<limits::TimeoutSeconds>)]
    pub hook_timeout: f64,
}

impl EnvironmentArgs {
    /// The plan environment these options describe.
    pub fn environment(&self) -> dbrig_exec::environment::EnvironmentFile {
        use dbrig_exec::environment::{EnvironmentFile, Hooks};
        EnvironmentFile {
            os_stats_interval: self.os_stats_interval,
            wait_sample_ms: self.wait_sample_ms,
            profile: self.profile,
            evidence: self.no_evidence.then_some(false),
            drop_caches: self.drop_caches_before_trial,
            client_cpus: self.client_cpus.clone(),
            hooks: Hooks {
                before_trial: self.before_trial.clone(),
                after_trial: self.after_trial.clone(),
                before_trial_sql: self.before_trial_sql.clone(),
                after_trial_sql: self.after_trial_sql.clone(),
                timeout: Some(self.hook_timeout),
                ..Hooks::default()
            },
            ..EnvironmentFile::default()
        }
    }
}

/// A command a sysbench Lua script declares (`dbrig check FILE.lua`): its name, then the
/// workload's arguments.
#[derive(Debug, Clone, Args)]
pub struct ScriptCommandArgs {
    /// The command's name in the script's `sysbench.cmdline.commands`.
    pub command: String,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

/// `run`, `prepare`, `cleanup`, `prewarm`: the workload (or plan) and everything about it,
/// under headings in `-h` (the run's own first, then plan, run, connection, workload and
/// environment options). Fields after a flattened section would take its heading: each
/// section is flattened last, with its own.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    /// Workload name (see `dbrig list`; sysbench names and the seeds' old names work), or a
    /// plan file (PLAN.toml) for `run`; `pgbench-init` for prepare/cleanup of pgbench's
    /// tables. Omitted (or `script`) with --script/--builtin: pgbench scripts.
    pub workload: Option<String>,
    /// Output format of the final report.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// run: prepare the tables first when they do not exist yet.
    #[arg(long)]
    pub prepare: bool,
    /// run: print sysbench's latency histogram before "SQL statistics" (`--histogram`,
    /// `--histogram=on|off`).
    #[arg(long, num_args = 0..=1, default_value = "off", default_missing_value = "on",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub histogram: bool,
    /// Print the resolved plan (one cell for a single workload) and the order of trials;
    /// connect to nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten, next_help_heading = "Plan options (dbrig run PLAN.toml)")]
    pub plan: PlanArgs,
    #[command(flatten, next_help_heading = "Run options")]
    pub run: RunOptions,
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
    #[command(flatten, next_help_heading = "Output options")]
    pub store: StoreArgs,
    #[command(flatten, next_help_heading = "OLTP options")]
    pub oltp: OltpOptions,
    #[command(flatten, next_help_heading = "pgbench script options")]
    pub script: ScriptOptions,
    #[command(flatten, next_help_heading = "sysbench Lua script options")]
    pub lua: dbrig_workload::LuaOptions,
    #[command(flatten, next_help_heading = "TPC-C options (prepare|cleanup tpcc)")]
    pub tpcc: dbrig_workload::tpcc::TpccOptions,
    #[command(
        flatten,
        next_help_heading = "Environment options (recorded with the trial)"
    )]
    pub environment: EnvironmentArgs,
}

/// What only a plan file takes.
#[derive(Debug, Clone, Default, Args)]
pub struct PlanArgs {
    /// Fill a ${NAME} placeholder (repeatable; the environment is the fallback).
    #[arg(long = "define", value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Override any setting, e.g. --set trials=5 or --set workload.oltp_read_only.options.tables=4.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Continue the last run of this plan in the results database, skipping finished trials.
    #[arg(long)]
    pub resume: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Client count you plan to run (checked against the open-files limit and CPUs).
    #[arg(long, value_parser = limits::parse::<limits::Clients>)]
    pub clients: Option<u32>,
    /// Data directory whose disk's I/O scheduler to check.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// A server to report on too (`--target URL`): version, binary path (servers on this
    /// host), its key settings, and every variable / setting with `--format json`.
    #[command(flatten, next_help_heading = "Connection options")]
    pub connection: ConnectionArgs,
}
