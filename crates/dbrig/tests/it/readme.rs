//! Every command in the README's `sh` blocks runs, in order, as a reader would paste them:
//! against embedded SQLite, the machine's MariaDB and PostgreSQL (in databases of this test's
//! own instead of `test`), with durations and table sizes cut so the whole README takes
//! seconds. A README example that fails is a test failure.

use std::path::Path;
use std::process::Command;

use crate::{mysql, postgres, text};

/// The README's `sh` blocks' commands, continuation lines joined, comments dropped.
fn readme_commands() -> Vec<String> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let line = line.split(" #").next().unwrap_or("").trim();
        match line.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                let cmd = std::mem::take(&mut pending);
                if !cmd.trim().is_empty() {
                    out.push(cmd.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
        }
    }
    out
}

/// A README command as this test runs it: the shared `test` databases replaced by this test's
/// own, long durations and tables cut, a plan's trials shortened. `None`: not a dbrig command
/// run here (installing, the test command itself), with why.
fn adapt(cmd: &str, my: &str, pg: &str) -> Result<Vec<String>, &'static str> {
    let cmd = cmd.replace("cargo run --release -p dbrig -- ", "dbrig ");
    if cmd.starts_with("cargo install") {
        return Err("installs dbrig (the test runs the built binary)");
    }
    if cmd == "scripts/test" {
        return Err("the test command itself");
    }
    let mut words: Vec<String> = cmd
        .replace("mysql://root@127.0.0.1:3306/test", my)
        .replace("postgres://postgres@127.0.0.1:5432/test", pg)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        words[0], "dbrig",
        "a README command that is not dbrig's: {cmd}"
    );
    words.remove(0);
    for i in 1..words.len() {
        let cut = match words[i - 1].as_str() {
            "--time" => Some("1"),
            "--warmup" => Some("0"),
            "--table-size" => Some("2000"),
            _ => None,
        };
        if let Some(v) = cut {
            words[i] = v.to_owned();
        }
    }
    if words.iter().any(|w| w.ends_with(".toml")) {
        words.extend(["--set", "duration=0.3", "--set", "warmup=0"].map(str::to_owned));
    }
    Ok(words)
}

#[test]
fn every_readme_example_runs() {
    let commands = readme_commands();
    assert!(commands.len() >= 12, "{commands:?}");
    let my = mysql::TestDb::new("readme");
    let pg = postgres::TestDb::new("readme");
    // The README's commands run from the repository root: the plans are there, dbrig-out is
    // made beside them.
    let dir = tempfile::tempdir().unwrap();
    let plans = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans");
    std::os::unix::fs::symlink(&plans, dir.path().join("plans")).unwrap();
    let mut ran = 0;
    for cmd in &commands {
        let args = match adapt(cmd, &my.url(), &pg.url()) {
            Ok(a) => a,
            Err(why) => {
                dbrig_server::testing::not_checked(&format!(
                    "README example not run ({why}): {cmd}"
                ));
                continue;
            }
        };
        let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "README example failed ({:?}): {cmd}\nran as: dbrig {}\n{}",
            o.status,
            args.join(" "),
            text(&o)
        );
        ran += 1;
    }
    assert!(ran >= 12, "only {ran} README commands ran");
    // The plan's report was written where the README says.
    assert!(
        std::fs::read_dir(dir.path().join("dbrig-out"))
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("report-")),
        "no HTML report in dbrig-out"
    );
}
