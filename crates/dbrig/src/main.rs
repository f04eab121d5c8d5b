//! dbrig: the binary. Parses the command line, runs the command, and turns any error into one
//! line on stderr and a non-zero exit code.

mod cli;
mod commands;
mod connection;
mod environment;
mod micro_cmd;
mod perfrun_cmd;
mod plan;
mod plan_exec;
mod report_cmd;
mod server_cmd;
mod tpch_cmd;

use std::process::ExitCode;

use clap::Parser;

/// Exit status when stdout or stderr is a closed pipe: what a shell reports for a process
/// ended by SIGPIPE (128 + 13), as `yes | head -1` does.
const EXIT_BROKEN_PIPE: i32 = 141;

/// Printing to a closed pipe (`dbrig server status | head -1`) ends dbrig quietly instead of
/// with a panic. Rust ignores SIGPIPE, so `println!` panics on EPIPE; this hook, installed
/// once for the whole binary, recognises that panic (std's "failed printing to" message *and*
/// poll(2) reporting the pipe's reader gone), stops any managed server dbrig started, and
/// exits. Every other panic goes to the default hook.
fn exit_quietly_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.starts_with("failed printing to") && output_pipe_closed() {
            dbrig_server::shutdown_all(std::time::Duration::from_secs(30));
            std::process::exit(EXIT_BROKEN_PIPE);
        }
        default(info);
    }));
}

/// Whether stdout or stderr is a pipe whose reading end is closed (poll reports POLLERR).
fn output_pipe_closed() -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let (out, err) = (std::io::stdout(), std::io::stderr());
    let mut fds = [
        PollFd::new(&out, PollFlags::OUT),
        PollFd::new(&err, PollFlags::OUT),
    ];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).is_ok() && fds.iter().any(|f| f.revents().contains(PollFlags::ERR))
}

fn main() -> ExitCode {
    exit_quietly_on_closed_pipe();
    let argv = cli::normalize_args(std::env::args());
    let cli = match cli::Cli::try_parse_from(&argv) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors (naming the option) to stderr.
            let _ = e.print();
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
            cli::Command::Prepare(a) => commands::prepare(a).await,
            cli::Command::Run(a) => commands::run(a, &argv).await,
            cli::Command::Cleanup(a) => commands::cleanup(a).await,
            cli::Command::List => commands::list(),
            cli::Command::Doctor(a) => commands::doctor(a).await,
            cli::Command::Runs(a) => commands::runs(a),
            cli::Command::Micro(a) => micro_cmd::micro(a, &argv).await,
            cli::Command::Perfrun(a) => perfrun_cmd::perfrun(a, &argv).await,
            cli::Command::Report(a) => report_cmd::report(a),
            cli::Command::Compare(a) => report_cmd::compare(a),
            cli::Command::Tpch(a) => tpch_cmd::tpch(a, &argv).await,
            cli::Command::Server(a) => server_cmd::server(a),
        }
    });
    // Connections closing in the background must not hold the process open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) => {
            // One line: the chain of causes joined, most general first.
            let msg = e
                .chain()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            eprintln!("dbrig: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
