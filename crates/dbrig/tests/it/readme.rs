//! Every command in the `sh` blocks of the README and of the user guide (`docs/src`) runs, in
//! order, as a reader would paste them: against embedded SQLite, the machine's MariaDB and
//! PostgreSQL (in databases of this test's own instead of `test`), with durations and table
//! sizes cut so the whole README takes seconds. An example that fails is a test failure. The
//! guide's links resolve, every page is in its summary, and its command reference is what the
//! command definitions generate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{mysql, postgres, text};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The guide's pages, `docs/src/**.md`, as paths from `docs/src`.
fn guide_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(base).unwrap().to_owned());
            }
        }
    }
    let src = root().join("docs/src");
    let mut out = Vec::new();
    walk(&src, &src, &mut out);
    out.sort();
    out
}

/// The README's `sh` blocks' commands, continuation lines joined, comments dropped.
fn readme_commands() -> Vec<String> {
    commands_in(&root().join("README.md"))
}

/// A Markdown file's `sh` blocks' commands, continuation lines joined, comments dropped.
fn commands_in(file: &Path) -> Vec<String> {
    let readme = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
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
    let dir = tempfile::tempdir().unwrap();
    let ran = run_in_order(&commands, dir.path(), &my.url(), &pg.url());
    assert!(ran >= 12, "only {ran} README commands ran");
    // The plan's page was written where the README says.
    assert!(
        std::fs::read_dir(dir.path().join("dbrig-out"))
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("run-") && name.ends_with(".html")
            }),
        "no run-N.html in dbrig-out"
    );
}

/// Every page of the guide with commands runs them in order, each page in a folder of its
/// own (a reader follows one page at a time).
#[test]
fn every_guide_example_runs() {
    let my = mysql::TestDb::new("guide");
    let pg = postgres::TestDb::new("guide");
    let mut ran = 0;
    let mut pages = 0;
    for page in guide_pages() {
        let commands = commands_in(&root().join("docs/src").join(&page));
        if commands.is_empty() {
            continue;
        }
        pages += 1;
        let dir = tempfile::tempdir().unwrap();
        ran += run_in_order(&commands, dir.path(), &my.url(), &pg.url());
        // What one page prepared on the shared servers is the next page's to make again.
        for target in [my.url(), pg.url()] {
            for workload in [
                "oltp_read_only",
                "oltp_point_select",
                "pgbench-init",
                "tpcc",
            ] {
                let _ = Command::new(env!("CARGO_BIN_EXE_dbrig"))
                    .args(["cleanup", workload, "--target", &target])
                    .current_dir(dir.path())
                    .output();
            }
        }
    }
    assert!(pages >= 4, "only {pages} guide pages have commands");
    assert!(ran >= 20, "only {ran} guide commands ran");
}

/// Run `commands` from `dir` as the README's reader runs them from the repository root (the
/// plans are there, dbrig-out is made beside them); how many ran.
fn run_in_order(commands: &[String], dir: &Path, my: &str, pg: &str) -> usize {
    let plans = root().join("plans");
    let _ = std::os::unix::fs::symlink(&plans, dir.join("plans"));
    let mut ran = 0;
    for cmd in commands {
        let args = match adapt(cmd, my, pg) {
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
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "example failed ({:?}): {cmd}\nran as: dbrig {}\n{}",
            o.status,
            args.join(" "),
            text(&o)
        );
        ran += 1;
    }
    ran
}

/// The slug mdBook gives a heading: lower case, spaces to `-`, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// Every relative link of the README and the guide names a file that exists and, with a
/// `#fragment`, a heading of it; every page of the guide is in `SUMMARY.md`, and every entry
/// of the summary is a page (mdBook renders only those, so an unlisted page is a dead link).
#[test]
fn the_guides_links_resolve_and_every_page_is_in_its_summary() {
    let src = root().join("docs/src");
    let link = regex_lite_links;
    let mut files: Vec<PathBuf> = guide_pages().iter().map(|p| src.join(p)).collect();
    files.push(root().join("README.md"));
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in link(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !dest.exists() {
                broken.push(format!("{}: {target} (no such file)", file.display()));
                continue;
            }
            if let Some(f) = fragment
                && dest.extension().is_some_and(|x| x == "md")
                && !anchors(&std::fs::read_to_string(&dest).unwrap()).contains(f)
            {
                broken.push(format!("{}: {target} (no such heading)", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = link(&summary).into_iter().collect();
    let pages: BTreeSet<String> = guide_pages()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p != "SUMMARY.md")
        .collect();
    let unlisted: Vec<_> = pages.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "pages not in docs/src/SUMMARY.md: {unlisted:?}"
    );
    let missing: Vec<_> = listed.difference(&pages).collect();
    assert!(
        missing.is_empty(),
        "SUMMARY.md entries with no page: {missing:?}"
    );
}

/// The targets of a Markdown text's inline links `[text](target)`, outside code.
fn regex_lite_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Inline code spans hold no links.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            match after.find(')') {
                Some(end) => {
                    out.push(after[..end].to_owned());
                    rest = &after[end..];
                }
                None => break,
            }
        }
    }
    out
}

/// The guide's command reference is what `dbrig man --markdown` writes from the command
/// definitions today: a changed option fails here until the pages are written again.
#[test]
fn the_guides_command_reference_is_generated_from_the_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(["man", "--markdown", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let committed = root().join("docs/src/reference");
    let names = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let fix = "run `dbrig man --markdown --dir docs/src/reference` and list new pages in docs/src/SUMMARY.md";
    assert_eq!(names(dir.path()), names(&committed), "{fix}");
    for name in names(dir.path()) {
        let made = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        let kept = std::fs::read_to_string(committed.join(&name)).unwrap();
        assert!(
            made == kept,
            "docs/src/reference/{name} is out of date: {fix}"
        );
    }
}
