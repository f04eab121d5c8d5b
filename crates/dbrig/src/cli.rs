//! The command line (clap derive): the commands, each with its arguments from its own file
//! (shared ones in `args.rs`), and sysbench's option spelling. Raw arguments only: each
//! command's file turns them into a plan or an action.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::args::{DoctorArgs, WorkloadArgs};

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

/// Parse the command line. Every option that takes a value accepts a negative number
/// (`--time -1`), so that the option's own validation names what is wrong instead of clap
/// taking `-1` for an unknown flag.
pub fn parse(argv: &[String]) -> Result<Cli, clap::Error> {
    fn negatives(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    let mut matches = negatives(Cli::command()).try_get_matches_from(argv)?;
    Cli::from_arg_matches_mut(&mut matches)
}

/// A value its option refused (out of range, not a number) as one line: `invalid value
/// '1e23' for '--time <TIME>': 1e23 is out of range: give …`. `None` for other errors.
pub fn value_error_line(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg)?;
    let value = text(ContextKind::InvalidValue)?;
    let why = std::error::Error::source(e)?.to_string();
    Some(format!("invalid value '{value}' for '{arg}': {why}"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create and load a workload's tables.
    #[command(after_long_help = PREPARE_EXAMPLES)]
    Prepare(WorkloadArgs),
    /// Run a workload and report (and store) what it measured.
    #[command(after_long_help = RUN_EXAMPLES)]
    Run(WorkloadArgs),
    /// Drop the tables a workload's prepare created (only tables dbrig created); `sql-bench`:
    /// the database dbrig made for the suite, once every table in it is proven dbrig's.
    Cleanup(WorkloadArgs),
    /// A sysbench Lua script's prewarm command (`dbrig prewarm oltp_read_only.lua`): load its
    /// tables into the server's caches before a run.
    Prewarm(WorkloadArgs),
    /// A command a sysbench Lua script declares in `sysbench.cmdline.commands` (a TPC-C
    /// suite's `check`): `dbrig check FILE.lua` or `dbrig FILE.lua … check` becomes this.
    #[command(hide = true, name = "script-command")]
    Script(crate::args::ScriptCommandArgs),
    /// List the workloads and every option with its default.
    List(crate::args::ListArgs),
    /// Show host facts and what would distort a benchmark on this machine.
    Doctor(DoctorArgs),
    /// List the runs stored in the results database.
    Runs(crate::args::RunsArgs),
    /// Move results: copy runs between results databases, export them to a file, import one.
    #[command(after_long_help = RESULTS_EXAMPLES)]
    Results(crate::results_cmd::ResultsArgs),
    /// The seeds' micro-benchmarks: memory_load, scan_filter, tmp_groupby.
    Micro(crate::micro_cmd::MicroArgs),
    /// Query-by-query A/B of two servers over a folder of queries (RQG perfrun), or `perfrun report`.
    Perfrun(crate::perfrun_cmd::PerfrunArgs),
    /// Report a stored run: tables, verdicts, JSON/CSV/Markdown exports, SVG charts, HTML page.
    #[command(after_long_help = REPORT_EXAMPLES)]
    Report(crate::report_cmd::ReportArgs),
    /// Compare two stored runs (RUN_A is the baseline).
    #[command(after_long_help = COMPARE_EXAMPLES)]
    Compare(crate::report_cmd::CompareArgs),
    /// The results database's history: a series per workload, configuration, client count,
    /// host and metric, each run a point with its trials, change points marked.
    #[command(after_long_help = HISTORY_EXAMPLES)]
    History(crate::history_cmd::HistoryArgs),
    /// Hold a run against its series' history for CI: exit 0 (no regression), 1 (regression
    /// beyond the noise band), 3 (not enough history or trials to decide).
    #[command(after_long_help = GATE_EXAMPLES)]
    Gate(crate::history_cmd::GateArgs),
    /// DBT-3 / TPC-H: generate .tbl files, load test, power test, answer check, cleanup.
    #[command(after_long_help = TPCH_EXAMPLES)]
    Tpch(crate::tpch_cmd::TpchArgs),
    /// TPC-C: the consistency check of a prepared database (`tpcc check`).
    #[command(after_long_help = TPCC_EXAMPLES)]
    Tpcc(crate::tpcc_cmd::TpccArgs),
    /// Start, stop or show a managed database server (MariaDB, MySQL, PostgreSQL).
    Server(crate::server_cmd::ServerArgs),
    /// Print a shell completion script (`dbrig completions bash > /etc/bash_completion.d/dbrig`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page, roff (`dbrig man > dbrig.1; man ./dbrig.1`), or write one per
    /// command (`dbrig man --dir DIR`: dbrig.1, dbrig-run.1, dbrig-tpch-power.1, …).
    Man {
        /// Write every command's page into this folder (created if missing) instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// With --dir: Markdown pages for the user guide's reference instead of roff.
        #[arg(long, requires = "dir")]
        markdown: bool,
    },
}

/// `dbrig prepare --help`'s examples.
const PREPARE_EXAMPLES: &str = "Examples:
  dbrig prepare oltp_read_write --tables 4 --table-size 100000 --target mysql://root@127.0.0.1:3306/test
  dbrig prepare pgbench-init --scale 10 --target postgres://postgres@127.0.0.1:5432/test
  dbrig prepare tpcc --warehouses 4 --target postgres://postgres@127.0.0.1:5432/test
  dbrig prepare oltp_read_only.lua --tables 4 --target mysql://root@127.0.0.1:3306/test";

/// `dbrig run --help`'s examples.
const RUN_EXAMPLES: &str = "Examples:
  dbrig run oltp_read_write --threads 16 --time 60 --target mysql://root@127.0.0.1:3306/test
  dbrig oltp_read_write --threads=16 --time=60 run          (sysbench's word order)
  dbrig run oltp_point_select --rate 5000 --time 30 --report-interval 1
  dbrig run --builtin tpcb-like --threads 8 --protocol prepared --target postgres://postgres@127.0.0.1:5432/test
  dbrig run tpcc --warehouses 4 --threads 8 --procedures --target postgres://postgres@127.0.0.1:5432/test
  dbrig run plans/sqlite-quick.toml --resume";

/// `dbrig report --help`'s examples.
const REPORT_EXAMPLES: &str = "Examples:
  dbrig report                                 (the latest run, as its command printed it)
  dbrig report 12 --format html --output report.html
  dbrig report latest --format markdown --with hooks,plans
  dbrig report latest~1 --format benchbase --output benchbase/";

/// `dbrig compare --help`'s examples.
const COMPARE_EXAMPLES: &str = "Examples:
  dbrig compare latest~1 latest
  dbrig compare 7 9 --noise-band 2 --format html --output compare.html";

/// `dbrig results --help`'s examples.
const RESULTS_EXAMPLES: &str = "Examples:
  dbrig results copy dbrig-out/results.db postgres://bench@db.example:5432/results
  dbrig results export --to runs.jsonl.gz
  dbrig results import runs.jsonl.gz --results mysql://bench@db.example:3306/results";

/// `dbrig tpch --help`'s examples.
const TPCH_EXAMPLES: &str = "Examples:
  dbrig tpch load --sf 1 --target postgres://postgres@127.0.0.1:5432/test
  dbrig tpch power --runs 3 --timeout 600 --target postgres://postgres@127.0.0.1:5432/test
  dbrig tpch throughput --streams 2 --target postgres://postgres@127.0.0.1:5432/test
  dbrig tpch report --baseline default";

/// `dbrig tpcc --help`'s examples.
const TPCC_EXAMPLES: &str = "Examples:
  dbrig tpcc check --target postgres://postgres@127.0.0.1:5432/test
  dbrig tpcc check --as-loaded --format json --target sqlite:tpcc.db";

/// `dbrig history --help`'s examples.
const HISTORY_EXAMPLES: &str = "Examples:
  dbrig history --unit QPS
  dbrig history --workload point_select --clients 16 --format json
  dbrig history --results postgres://bench@db.example:5432/results --format csv";

/// `dbrig gate --help`'s examples.
const GATE_EXAMPLES: &str = "Examples:
  dbrig gate                                   (the latest run against its history)
  dbrig gate latest --baseline 41 --noise-band 2
  dbrig gate --markdown \"$GITHUB_STEP_SUMMARY\" --junit gate.xml";

/// The completion script for `shell`, generated from the command definitions.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dbrig", &mut out);
    out
}

/// The command tree the man pages describe (no `help` command: it has no page).
fn man_command() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The man page (roff), generated from the command definitions; it names each command's own
/// page (`dbrig-run(1)`), which [`man_pages`] writes.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(man_command()).render(&mut out)?;
    Ok(out)
}

/// The guide's Markdown reference, a page per command, into `dir`; the files written.
pub fn reference_pages(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    crate::reference::write_pages(&man_command(), dir)
}

/// Write the man page of dbrig and of every command and sub-command (`dbrig-tpch-power.1`)
/// into `dir`; the files written, in name order.
pub fn man_pages(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(man_command(), dir)?;
    let mut written: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("dbrig") && name.ends_with(".1")
        })
        .collect();
    written.sort();
    Ok(written)
}

/// The commands sysbench puts last (`sysbench oltp_read_only --threads=4 run`).
const SYSBENCH_COMMANDS: [&str; 4] = ["prepare", "run", "cleanup", "prewarm"];

/// sysbench's word order, the command last (`dbrig oltp_point_select --threads 4 run`), becomes
/// dbrig's, the command first: when the first word is not one of dbrig's commands and the last
/// word (`--name=value` options after it aside) is prepare, run, cleanup or prewarm, it moves to the
/// front.
fn command_first(mut args: Vec<String>) -> Vec<String> {
    use clap::CommandFactory;
    let Some(first) = args.get(1) else {
        return args;
    };
    let known = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == first)
        || first.starts_with("--help")
        || first == "-h"
        || first == "-V"
        || first.starts_with("--version");
    // The last word that is not a `--name=value` option.
    let last = (2..args.len())
        .rev()
        .find(|&i| !(args[i].starts_with("--") && args[i].contains('=')));
    if !known
        && let Some(i) = last
        && SYSBENCH_COMMANDS.contains(&args[i].as_str())
    {
        let command = args.remove(i);
        args.insert(1, command);
    } else if !known {
        script_command(&mut args, last);
    }
    args
}

/// A command a sysbench Lua script declares in `sysbench.cmdline.commands` (a TPC-C suite's
/// `check`), in dbrig's word order (`dbrig check FILE.lua …`) or sysbench's (`dbrig FILE.lua …
/// check`), becomes `dbrig script-command NAME FILE.lua …`.
fn script_command(args: &mut Vec<String>, last: Option<usize>) {
    let Some(script) = args
        .iter()
        .skip(1)
        .position(|a| !a.starts_with('-') && dbrig_workload::lua::is_script_name(a))
        .map(|i| i + 1)
    else {
        return;
    };
    let word = if script == 1 { last } else { Some(1) };
    let Some(word) = word.filter(|&i| i != script && !args[i].starts_with('-')) else {
        return;
    };
    let Some(declared) = dbrig_workload::lua::declared_commands(&args[script]) else {
        return;
    };
    if declared.iter().any(|c| *c == args[word]) {
        let command = args.remove(word);
        args.insert(1, "script-command".to_owned());
        args.insert(2, command);
    }
}

/// A sysbench Lua script's own options: with a `FILE.lua` workload, every `--NAME=VALUE`,
/// `--NAME VALUE` or (a boolean option) `--NAME` whose NAME the script declares in
/// `sysbench.cmdline.options` becomes `--script-option NAME=VALUE`, so the script's options
/// never meet dbrig's parser as unknown ones.
fn script_options(args: Vec<String>) -> Vec<String> {
    let Some(script) = args
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-') && dbrig_workload::lua::is_script_name(a))
    else {
        return args;
    };
    let Some(declared) = dbrig_workload::lua::declared_names(script) else {
        return args;
    };
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(opt) = a.strip_prefix("--") else {
            out.push(a.clone());
            continue;
        };
        let (name, value) = match opt.split_once('=') {
            Some((n, v)) => (n.replace('-', "_"), Some(v.to_owned())),
            None => (opt.replace('-', "_"), None),
        };
        let Some((_, boolean)) = declared.iter().find(|(n, _)| *n == name) else {
            out.push(a.clone());
            continue;
        };
        let value = match value {
            Some(v) => v,
            None if *boolean
                && !args
                    .get(i)
                    .is_some_and(|v| matches!(v.as_str(), "on" | "off" | "true" | "false")) =>
            {
                "on".to_owned()
            }
            None => match args.get(i) {
                Some(v) => {
                    i += 1;
                    v.clone()
                }
                None => {
                    out.push(a.clone());
                    continue;
                }
            },
        };
        out.push("--script-option".into());
        out.push(format!("{name}={value}"));
    }
    out
}

/// sysbench spells options with underscores (`--table_size`) and puts the command last; clap
/// wants dashes and the command first. Rewrite the option *names* (never their values) and
/// the word order before parsing.
pub fn normalize_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut after_double_dash = false;
    let args = script_options(command_first(args.into_iter().collect()));
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
    /// Every example of the long help parses as it is written (sysbench's word order
    /// included), so `--help` never shows a command dbrig refuses.
    #[test]
    fn the_help_examples_parse() {
        let mut checked = 0;
        for examples in [
            PREPARE_EXAMPLES,
            RUN_EXAMPLES,
            REPORT_EXAMPLES,
            COMPARE_EXAMPLES,
            RESULTS_EXAMPLES,
            HISTORY_EXAMPLES,
            GATE_EXAMPLES,
            TPCH_EXAMPLES,
            TPCC_EXAMPLES,
        ] {
            for line in examples.lines().filter(|l| l.starts_with("  dbrig")) {
                let command = line.split("  (").next().unwrap_or(line);
                let argv = normalize_args(command.split_whitespace().map(str::to_owned));
                assert!(parse(&argv).is_ok(), "{line}: {:?}", parse(&argv).err());
                checked += 1;
            }
        }
        assert!(checked >= 29, "{checked}");
    }

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
    fn sysbench_word_order_puts_the_command_first() {
        let args = |a: &[&str]| normalize_args(a.iter().map(|s| s.to_string()));
        assert_eq!(
            args(&["dbrig", "oltp_point_select", "--threads", "4", "run"]),
            ["dbrig", "run", "oltp_point_select", "--threads", "4"]
        );
        assert_eq!(
            args(&["dbrig", "--table_size=10", "oltp_read_only", "prepare"]),
            ["dbrig", "prepare", "--table-size=10", "oltp_read_only"]
        );
        // dbrig's own order is left alone, even when a value is a command word.
        assert_eq!(
            args(&["dbrig", "report", "--format", "text", "run"]),
            ["dbrig", "report", "--format", "text", "run"]
        );
        assert_eq!(
            args(&["dbrig", "run", "oltp_read_only"]),
            ["dbrig", "run", "oltp_read_only"]
        );
        assert_eq!(
            args(&["dbrig", "oltp_delete", "cleanup", "--out=x"]),
            ["dbrig", "cleanup", "oltp_delete", "--out=x"]
        );
    }

    #[test]
    fn completions_and_man_page_come_from_the_definitions() {
        let bash = String::from_utf8(completions(clap_complete::Shell::Bash)).unwrap();
        assert!(bash.contains("complete -F _dbrig"), "{bash}");
        for word in ["perfrun", "tpch", "--report-interval"] {
            assert!(bash.contains(word), "{word}");
        }
        let zsh = String::from_utf8(completions(clap_complete::Shell::Zsh)).unwrap();
        assert!(zsh.starts_with("#compdef dbrig"));
        let fish = String::from_utf8(completions(clap_complete::Shell::Fish)).unwrap();
        assert!(fish.contains("complete -c dbrig"));
        let man = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(man.starts_with(".ie \\n(.g .ds Aq"), "{}", &man[..80]);
        assert!(man.contains(".TH dbrig 1"), "{man}");
        assert!(man.contains("A database benchmark rig"));
    }

    /// Every option of every command that takes a number refuses a negative, NaN, infinite,
    /// huge or non-numeric value with one line that gives the accepted range: walked from the
    /// definitions, so a numeric option added without its range (`dbrig_core::limits`) fails
    /// here.
    #[test]
    fn every_numeric_option_refuses_bad_values_with_its_range() {
        use clap::error::ErrorKind;
        use std::any::TypeId;
        let numeric = [
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<i64>(),
            TypeId::of::<f64>(),
            TypeId::of::<usize>(),
            TypeId::of::<dbrig_workload::tpch::ScaleFactor>(),
        ];
        fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
            for a in cmd.get_arguments() {
                if let Some(long) = a.get_long() {
                    out.push((path.clone(), long.to_owned()));
                }
            }
            for sub in cmd.get_subcommands() {
                let mut p = path.clone();
                p.push(sub.get_name().to_owned());
                walk(sub, p, out);
            }
        }
        let root = Cli::command();
        let mut all = Vec::new();
        walk(&root, Vec::new(), &mut all);
        let mut checked = 0;
        for (path, long) in all {
            let mut cmd = &root;
            for p in &path {
                cmd = cmd.find_subcommand(p).unwrap();
            }
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(long.as_str()))
                .unwrap();
            let id = arg.get_value_parser().type_id();
            if !numeric.iter().any(|n| id == *n) {
                continue;
            }
            for bad in ["-1", "NaN", "inf", "1e300", "abc"] {
                let argv: Vec<String> = std::iter::once("dbrig".to_owned())
                    .chain(path.iter().cloned())
                    .chain([format!("--{long}={bad}")])
                    .collect();
                let e = parse(&argv).expect_err(&format!("{argv:?} was accepted"));
                assert_eq!(e.kind(), ErrorKind::ValueValidation, "{argv:?}: {e}");
                let line = value_error_line(&e).expect("one line");
                assert!(
                    line.contains(&format!("--{long}")) && line.contains("give "),
                    "{argv:?}: {line}"
                );
            }
            checked += 1;
        }
        // run's and prepare's options, micro's, tpch's, perfrun's, doctor's …
        assert!(checked > 100, "only {checked} numeric options found");
    }

    /// Every page a man page links (`dbrig-run(1)`, `dbrig-tpch-power(1)`) is written by
    /// `dbrig man --dir`, and the printed page links only those.
    #[test]
    fn every_linked_man_page_is_generated() {
        let dir = tempfile::tempdir().unwrap();
        let pages = man_pages(dir.path()).unwrap();
        let names: Vec<String> = pages
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for want in [
            "dbrig.1",
            "dbrig-run.1",
            "dbrig-tpch-power.1",
            "dbrig-man.1",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
        }
        let linked = |roff: &str| -> Vec<String> {
            let text = roff.replace("\\-", "-");
            text.match_indices("(1)")
                .filter_map(|(at, _)| {
                    let start = text[..at]
                        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                        .map_or(0, |i| i + 1);
                    let name = &text[start..at];
                    name.starts_with("dbrig").then(|| format!("{name}.1"))
                })
                .collect()
        };
        let root = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(linked(&root).contains(&"dbrig-run.1".to_owned()), "{root}");
        let mut all_links = linked(&root);
        for p in &pages {
            all_links.extend(linked(&std::fs::read_to_string(p).unwrap()));
        }
        for l in all_links {
            assert!(names.contains(&l), "{l} is linked but not generated");
        }
    }

    /// `run -h` is sections under headings, not one flat list: the run's own options, the
    /// plan's, run, connection, output, OLTP, pgbench, Lua and environment options.
    #[test]
    fn run_help_groups_options_under_headings() {
        let cmd = Cli::command();
        let run = cmd.find_subcommand("run").unwrap();
        let heading = |long: &str| {
            run.get_arguments()
                .find(|a| a.get_long() == Some(long))
                .unwrap_or_else(|| panic!("--{long}"))
                .get_help_heading()
                .map(str::to_owned)
        };
        assert_eq!(heading("threads").as_deref(), Some("Run options"));
        assert_eq!(heading("target").as_deref(), Some("Connection options"));
        assert_eq!(heading("tables").as_deref(), Some("OLTP options"));
        assert_eq!(
            heading("define").as_deref(),
            Some("Plan options (dbrig run PLAN.toml)")
        );
        assert_eq!(heading("results").as_deref(), Some("Output options"));
        assert_eq!(
            heading("os-stats-interval").as_deref(),
            Some("Environment options (recorded with the trial)")
        );
        assert_eq!(heading("format"), None);
        let mut sizes = std::collections::BTreeMap::new();
        for a in run.get_arguments().filter(|a| !a.is_hide_set()) {
            *sizes.entry(a.get_help_heading()).or_insert(0) += 1;
        }
        assert!(sizes.len() >= 8, "{sizes:?}");
        assert!(sizes.values().all(|n| *n <= 40), "{sizes:?}");
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
