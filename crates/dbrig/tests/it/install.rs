//! What an installing user generates from the binary: shell completions for every shell clap
//! knows, a bash script bash accepts, and a man page.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::{ok, text};

/// `dbrig ARGS` as a user types it (these commands take no `--out`).
fn dbrig_bare(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(args)
        .output()
        .expect("dbrig runs")
}

#[test]
fn completions_for_every_shell_and_a_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = text(&ok(dbrig_bare(&["completions", shell])));
        assert!(script.contains("dbrig"), "{shell}: {script}");
        // Every subcommand is completed.
        for sub in [
            "run", "prepare", "cleanup", "report", "tpch", "perfrun", "server",
        ] {
            assert!(script.contains(sub), "{shell} completes no {sub}");
        }
    }
    let bash = text(&ok(dbrig_bare(&["completions", "bash"])));
    let mut check = Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .spawn()
        .expect("bash");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(bash.as_bytes())
        .unwrap();
    assert!(
        check.wait().unwrap().success(),
        "bash -n refused the completion script"
    );
    let man = text(&ok(dbrig_bare(&["man"])));
    assert!(
        man.starts_with(".ie") || man.contains("\n.TH dbrig 1") || man.starts_with(".TH dbrig 1"),
        "{man}"
    );
    assert!(
        man.contains(".TH dbrig 1"),
        "{}",
        &man[..man.len().min(400)]
    );
}

#[test]
fn an_unknown_shell_is_one_clear_line() {
    let o = dbrig_bare(&["completions", "tcsh"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tcsh"), "{err}");
}
