//! The guide's command reference (`docs/src/reference/`), generated from the same clap
//! definitions as `-h` and the man pages, so it cannot drift from them: `dbrig man --markdown
//! --dir DIR` writes a page per command (`dbrig-run.md`, `dbrig-tpch-power.md`, …) and an
//! index, `README.md`. A test holds the committed pages against what this writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Write the index and one page per command and sub-command into `dir`; the files written,
/// in name order.
pub fn write_pages(root: &clap::Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut pages = Vec::new();
    collect(root, "dbrig", &mut pages);
    let mut index = String::from(
        "# Commands\n\nEvery command and its options, generated from the definitions that `dbrig \
         COMMAND -h` prints (`dbrig man --markdown --dir docs/src/reference` writes these pages; \
         `dbrig man --dir DIR` the man pages).\n\n",
    );
    let mut written = Vec::new();
    for (name, cmd) in &pages {
        let file = format!("{}.md", name.replace(' ', "-"));
        let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(index, "- [`{name}`]({file}): {about}");
        let path = dir.join(&file);
        std::fs::write(&path, page(name, cmd))?;
        written.push(path);
    }
    let path = dir.join("README.md");
    std::fs::write(&path, index)?;
    written.push(path);
    written.sort();
    Ok(written)
}

/// Every visible command under `cmd` (itself included), named by its path from `dbrig`.
fn collect<'a>(cmd: &'a clap::Command, name: &str, out: &mut Vec<(String, &'a clap::Command)>) {
    out.push((name.to_owned(), cmd));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, &format!("{name} {}", sub.get_name()), out);
    }
}

/// One command's page: what it does, its usage, its arguments, then its options under the
/// headings `-h` groups them by, each with its value, default, choices and environment variable.
fn page(name: &str, cmd: &clap::Command) -> String {
    let mut md = format!("# {name}\n\n");
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(md, "{about}\n");
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    let _ = writeln!(md, "```text\n{usage}\n```\n");
    let subs: Vec<_> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if !subs.is_empty() {
        md.push_str("## Commands\n\n");
        for sub in subs {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let file = format!("{name}-{}.md", sub.get_name()).replace(' ', "-");
            let _ = writeln!(md, "- [`{}`]({file}): {about}", sub.get_name());
        }
        md.push('\n');
    }
    // In the order `-h` shows them (display order, then definition order).
    let mut args: Vec<_> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
    args.sort_by_key(|a| a.get_display_order());
    let mut headings: Vec<&str> = Vec::new();
    for a in &args {
        let h = heading_of(a);
        if !headings.contains(&h) {
            headings.push(h);
        }
    }
    for h in headings {
        let _ = writeln!(md, "## {h}\n");
        for a in args.iter().filter(|a| heading_of(a) == h) {
            let _ = writeln!(md, "{}", entry(a));
        }
        md.push('\n');
    }
    if let Some(after) = cmd.get_after_long_help() {
        let _ = writeln!(md, "```text\n{}\n```", after.to_string().trim_end());
    }
    md
}

/// The heading an argument stands under in `-h`.
fn heading_of(a: &clap::Arg) -> &str {
    match a.get_help_heading() {
        Some(h) => h,
        None if a.is_positional() => "Arguments",
        None => "Options",
    }
}

/// One argument as a list item: its spellings and value, then its help, default, choices and
/// environment variable.
fn entry(a: &clap::Arg) -> String {
    let values = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|v| format!("<{v}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
    let takes = a.get_num_args().is_some_and(|n| n.takes_values());
    let mut name = match (a.get_short(), a.get_long()) {
        _ if a.is_positional() => values.clone(),
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (None, Some(l)) => format!("--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, None) => a.get_id().to_string(),
    };
    if takes && !a.is_positional() {
        name = format!("{name} {values}");
    }
    let mut line = format!("- `{name}`");
    if let Some(help) = a.get_long_help().or(a.get_help()) {
        let help = help.to_string().replace('\n', " ");
        let stop = if help.ends_with(['.', ')', ':']) {
            ""
        } else {
            "."
        };
        let _ = write!(line, ": {help}{stop}");
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes && !defaults.is_empty() {
        let _ = write!(line, " Default: `{}`.", defaults.join(" "));
    }
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes && !choices.is_empty() {
        let _ = write!(line, " One of {}.", choices.join(", "));
    }
    if let Some(env) = a.get_env() {
        let _ = write!(line, " Environment: `{}`.", env.to_string_lossy());
    }
    line
}
