//! dbrig: the binary. Parses the command line (one file per command), hands every measurement
//! to dbrig-exec's one executor as a plan, prints what it is given, and turns any error into
//! one line on stderr and a non-zero exit code.

mod args;
mod cli;
mod connection;
mod console;
mod history_cmd;
mod info_cmd;
mod micro_cmd;
mod out;
mod perfrun_cmd;
mod reference;
mod report_cmd;
mod results_cmd;
mod run_cmd;
mod server_cmd;
mod tpcc_cmd;
mod tpch_cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv = cli::normalize_args(std::env::args());
    let cli = match cli::parse(&argv) {
        Ok(c) => c,
        Err(e) => {
            // A value out of its range is one line naming the option, the value and the range
            // (`dbrig_core::limits`); clap prints help/version to stdout and other usage
            // errors (naming the option) to stderr.
            if let Some(line) = cli::value_error_line(&e) {
                eprintln!("dbrig: error: {line}");
            } else {
                let _ = e.print();
            }
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("dbrig: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Prepare(a) => run_cmd::prepare(a, &argv).await,
            cli::Command::Run(a) => run_cmd::run(a, &argv).await,
            cli::Command::Cleanup(a) => run_cmd::cleanup(a).await,
            cli::Command::Prewarm(a) => run_cmd::prewarm(a).await,
            cli::Command::Script(a) => run_cmd::script_command(a).await,
            cli::Command::List(a) => match a.script {
                Some(f) => run_cmd::list_script(&f, a.format),
                None => run_cmd::list(a.format),
            },
            cli::Command::Doctor(a) => info_cmd::doctor(a).await,
            cli::Command::Runs(a) => info_cmd::runs(a),
            cli::Command::Results(a) => results_cmd::results(a),
            cli::Command::Micro(a) => micro_cmd::micro(a, &argv).await,
            cli::Command::Perfrun(a) => perfrun_cmd::perfrun(a, &argv).await,
            cli::Command::Report(a) => report_cmd::report(a),
            cli::Command::Compare(a) => report_cmd::compare(a),
            cli::Command::History(a) => history_cmd::history_command(a),
            cli::Command::Gate(a) => history_cmd::gate_command(a),
            cli::Command::Tpch(a) => tpch_cmd::tpch(a, &argv).await,
            cli::Command::Tpcc(a) => tpcc_cmd::tpcc(a).await,
            cli::Command::Server(a) => server_cmd::server(a),
            cli::Command::Completions { shell } => {
                out::text(&String::from_utf8_lossy(&cli::completions(shell)))
                    .map(|()| ExitCode::SUCCESS)
            }
            cli::Command::Man { dir: None, .. } => cli::man_page()
                .map_err(anyhow::Error::from)
                .and_then(|m| out::text(&String::from_utf8_lossy(&m)))
                .map(|()| ExitCode::SUCCESS),
            cli::Command::Man {
                dir: Some(dir),
                markdown: true,
            } => cli::reference_pages(&dir)
                .map_err(|e| anyhow::anyhow!("cannot write the reference to {}: {e}", dir.display()))
                .and_then(|pages| {
                    out::text(&format!(
                        "wrote {} reference pages to {}\n",
                        pages.len(),
                        dir.display()
                    ))
                })
                .map(|()| ExitCode::SUCCESS),
            cli::Command::Man { dir: Some(dir), .. } => cli::man_pages(&dir)
                .map_err(|e| anyhow::anyhow!("cannot write man pages to {}: {e}", dir.display()))
                .and_then(|pages| {
                    out::text(&format!(
                        "wrote {} man pages to {} (dbrig.1 and one per command: man -l {}/dbrig-run.1)\n",
                        pages.len(),
                        dir.display(),
                        dir.display()
                    ))
                })
                .map(|()| ExitCode::SUCCESS),
        }
    });
    // Connections closing in the background must not hold the process open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) if e.is::<out::ClosedPipe>() => {
            // The reader of our output is gone (`| head -1`): end quietly, stopping any
            // managed server this process started.
            dbrig_server::shutdown_all(std::time::Duration::from_secs(30));
            ExitCode::from(out::EXIT_BROKEN_PIPE)
        }
        Err(e) => {
            // One line: the chain of causes joined, most general first.
            let mut parts: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            parts.dedup();
            eprintln!("dbrig: error: {}", parts.join(": "));
            ExitCode::FAILURE
        }
    }
}
