//! MariaDB/MySQL option files (`my.cnf`), read as the `mariadb` command-line client reads
//! them (MariaDB's `mysys/my_default.c`, checked against `my_print_defaults` and the
//! `mariadb` client of MariaDB 10.11):
//!
//! - the files, in order: `/etc/my.cnf`, `/etc/mysql/my.cnf`, `$MARIADB_HOME/my.cnf` (else
//!   `$MYSQL_HOME/my.cnf`), the `--defaults-extra-file`, `~/.my.cnf`; a folder named twice is
//!   read once, at its last place. `--defaults-file` reads that file alone, `--no-defaults`
//!   none. A missing file is skipped; a world-writable one is skipped with a warning.
//! - the groups: `[client]`, `[client-server]`, `[client-mariadb]`, `[mysql]`,
//!   `[mariadb-client]` (the `mariadb` client's own) and `[dbrig]`, names compared without
//!   regard to case. Options are taken in the order the files hold them, whatever their
//!   group: the last one wins.
//! - `!include FILE` and `!includedir DIR` (its `*.cnf` files in name order), ten levels deep;
//!   a fault in an included file skips the rest of that file with a warning, as the client
//!   does, while one in a file read directly stops dbrig as it stops the client.
//! - `#` and `;` lines, `#` after a value (outside quotes), quotes around a value, the escapes
//!   `\n \t \r \b \s \" \' \\`, options spelled with `-` or `_` in any case, `loose-`.
//!
//! Hand-written on purpose: the INI crates know neither `!include`/`!includedir` nor these
//! quoting, escape and comment rules, and the only crates for MySQL's files read the
//! encrypted `.mylogin.cnf` (which MariaDB does not use).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{ExecError, Result};

/// The groups dbrig reads: the `mariadb` client's (`mariadb --help` lists them), so dbrig logs
/// in as that client would, and dbrig's own.
pub const GROUPS: [&str; 6] = [
    "client",
    "client-server",
    "client-mariadb",
    "mysql",
    "mariadb-client",
    "dbrig",
];

/// Which option files are read: the `mariadb` client's `--no-defaults`, `--defaults-file`
/// and `--defaults-extra-file`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionFileChoice {
    /// Read none.
    pub no_defaults: bool,
    /// Read this file alone (it must exist).
    pub defaults_file: Option<PathBuf>,
    /// Read this file too, after the machine's files and before `~/.my.cnf` (it must exist).
    pub defaults_extra_file: Option<PathBuf>,
}

/// An option's value and where it was read (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub file: PathBuf,
    pub line: usize,
}

/// What the files say about the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PasswordSetting {
    /// `password=VALUE`.
    Given(String),
    /// `password` without a value: the client asks for one (dbrig never asks).
    Ask,
    /// `skip-password`, `disable-password`, or an empty value: no password.
    NoPassword,
}

/// How the client is told to connect (`protocol=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolSetting {
    Tcp,
    Socket,
    /// `pipe` or `memory` (Windows only): no bearing on a Unix client.
    Other,
}

/// The connection options the files give (the last of each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientOptions {
    pub user: Option<Setting<String>>,
    pub password: Option<Setting<PasswordSetting>>,
    pub host: Option<Setting<String>>,
    pub port: Option<Setting<u16>>,
    pub socket: Option<Setting<PathBuf>>,
    pub protocol: Option<Setting<ProtocolSetting>>,
}

/// The default files in the order they are read (existing or not), as MariaDB lists them:
/// each folder once, at its last place.
pub fn default_files(
    extra_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    // `None` stands for the place of the extra file.
    let mut dirs: Vec<Option<PathBuf>> = Vec::new();
    let mut add = |d: Option<PathBuf>| {
        dirs.retain(|x| x != &d);
        dirs.push(d);
    };
    add(Some(PathBuf::from("/etc")));
    add(Some(PathBuf::from("/etc/mysql")));
    let nonempty = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(home) = nonempty("MARIADB_HOME").or_else(|| nonempty("MYSQL_HOME")) {
        add(Some(PathBuf::from(home)));
    }
    add(None);
    // mysys reads `~` from HOME alone.
    let home = nonempty("HOME").map(PathBuf::from);
    let mut files = Vec::new();
    for d in dirs {
        match d {
            Some(d) => files.push(d.join("my.cnf")),
            None => files.extend(extra_file.map(Path::to_path_buf)),
        }
    }
    files.extend(home.map(|h| h.join(".my.cnf")));
    files
}

/// Read the connection options of the files `choice` names (see the module doc).
pub fn read(
    choice: &OptionFileChoice,
    env: &dyn Fn(&str) -> Option<String>,
    warn: &dyn Fn(&str),
) -> Result<ClientOptions> {
    let mut raw = Vec::new();
    if choice.no_defaults {
        return Ok(ClientOptions::default());
    }
    let mut reader = Reader {
        options: &mut raw,
        warn,
    };
    if let Some(only) = &choice.defaults_file {
        reader.required(only, "--defaults-file")?;
    } else {
        let extra = choice.defaults_extra_file.as_deref();
        for file in default_files(extra, env) {
            if Some(file.as_path()) == extra {
                reader.required(&file, "--defaults-extra-file")?;
            } else {
                reader.file(&file, 0)?;
            }
        }
    }
    fold(raw)
}

/// One option as a file gave it: its name normalised, its value if any.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RawOption {
    name: String,
    value: Option<String>,
    file: PathBuf,
    line: usize,
}

struct Reader<'a> {
    options: &'a mut Vec<RawOption>,
    warn: &'a dyn Fn(&str),
}

/// How deep `!include` goes (mysys: ten levels).
const MAX_INCLUDE_DEPTH: usize = 10;

impl Reader<'_> {
    /// A file that must exist (`--defaults-file`, `--defaults-extra-file`).
    fn required(&mut self, path: &Path, option: &str) -> Result<()> {
        if std::fs::metadata(path).is_err() {
            return Err(ExecError::OptionFile(format!(
                "{option} {}: could not open the option file",
                path.display()
            )));
        }
        self.file(path, 0)
    }

    /// Read one file's options of dbrig's groups. A missing or unreadable file is nothing;
    /// a world-writable one is skipped with a warning. Faults: an error at depth 0, a warning
    /// that ends the file deeper down.
    fn file(&mut self, path: &Path, depth: usize) -> Result<()> {
        let Ok(meta) = std::fs::metadata(path) else {
            return Ok(());
        };
        if meta.is_file() && meta.permissions().mode() & 0o002 != 0 {
            (self.warn)(&format!(
                "world-writable option file '{}' is ignored (as the mariadb client ignores it)",
                path.display()
            ));
            return Ok(());
        }
        let Ok(bytes) = std::fs::read(path) else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(&bytes);
        match self.text(&text, path, depth) {
            Ok(()) => Ok(()),
            Err(e) if depth == 0 => Err(ExecError::OptionFile(format!(
                "{e} (the mariadb client stops there too; --no-defaults reads no option file)"
            ))),
            Err(e) => {
                (self.warn)(&format!("{e}; the rest of that file is skipped"));
                Ok(())
            }
        }
    }

    fn text(&mut self, text: &str, path: &Path, depth: usize) -> Result<()> {
        let fault = |line: usize, what: &str| {
            ExecError::OptionFile(format!(
                "option file {}, line {line}: {what}",
                path.display()
            ))
        };
        let mut group: Option<String> = None;
        for (n, raw_line) in text.split('\n').enumerate() {
            let line_no = n + 1;
            let line = raw_line.trim_start_matches(is_space);
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(directive) = line.strip_prefix('!') {
                if depth >= MAX_INCLUDE_DEPTH {
                    (self.warn)(&format!(
                        "option file {}, line {line_no}: skipping '{}': includes go {MAX_INCLUDE_DEPTH} levels deep at most",
                        path.display(),
                        line.trim_end_matches(is_space)
                    ));
                    continue;
                }
                let directive = directive.trim_start_matches(is_space);
                if let Some(dir) = keyword_argument(directive, "includedir") {
                    let dir = dir.ok_or_else(|| fault(line_no, "'!includedir' names no folder"))?;
                    let entries = std::fs::read_dir(dir).map_err(|e| {
                        fault(
                            line_no,
                            &format!("!includedir {dir}: cannot read the folder: {e}"),
                        )
                    })?;
                    let mut files: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|x| x == "cnf"))
                        .collect();
                    files.sort();
                    for f in files {
                        self.file(&f, depth + 1)?;
                    }
                } else if let Some(file) = keyword_argument(directive, "include") {
                    let file = file.ok_or_else(|| fault(line_no, "'!include' names no file"))?;
                    self.file(Path::new(file), depth + 1)?;
                }
                // Any other directive: ignored, as mysys does.
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let (name, _) = rest
                    .split_once(']')
                    .ok_or_else(|| fault(line_no, "a group without its closing ']'"))?;
                group = Some(name.trim_end_matches(is_space).to_owned());
                continue;
            }
            let Some(group) = &group else {
                return Err(fault(line_no, "an option before any [group]"));
            };
            if !GROUPS.iter().any(|g| g.eq_ignore_ascii_case(group)) {
                continue;
            }
            let line = remove_end_comment(line);
            let (name, value) = match line.split_once('=') {
                Some((name, value)) => (name, Some(unquote(value))),
                None => (line, None),
            };
            self.options.push(RawOption {
                name: normalise(name.trim_end_matches(is_space)),
                value,
                file: path.to_owned(),
                line: line_no,
            });
        }
        Ok(())
    }
}

/// mysys's white space (`my_isspace` in latin1): space, tab, CR, LF, VT, FF.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\u{b}' | '\u{c}')
}

/// After `!`: whether `directive` is `keyword` followed by white space, and its argument
/// (`None` when empty).
fn keyword_argument<'a>(directive: &'a str, keyword: &str) -> Option<Option<&'a str>> {
    let rest = directive.strip_prefix(keyword)?;
    if !rest.starts_with(is_space) {
        return None;
    }
    let arg = rest.trim_matches(is_space);
    Some((!arg.is_empty()).then_some(arg))
}

/// The line up to a `#` outside quotes (mysys's `remove_end_comment`: a quote opens and
/// closes unless escaped inside a quoted part).
fn remove_end_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escape = false;
    for (i, c) in line.char_indices() {
        if (c == '\'' || c == '"') && !escape {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && c == '#' {
            return &line[..i];
        }
        escape = quote.is_some() && c == '\\' && !escape;
    }
    line
}

/// A value as mysys makes it: white space trimmed, one pair of matching quotes removed, the
/// escapes `\n \t \r \b \s \" \' \\` turned into their characters (any other `\x` and a last
/// lone `\` kept as written).
fn unquote(value: &str) -> String {
    let v = value.trim_matches(is_space);
    let v = match (v.chars().next(), v.chars().last()) {
        (Some(q @ ('"' | '\'')), Some(last)) if v.len() > 1 && q == last => &v[1..v.len() - 1],
        _ => v,
    };
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some(&next)) => {
                chars.next();
                match next {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    's' => out.push(' '),
                    '"' | '\'' | '\\' => out.push(next),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            (c, _) => out.push(c),
        }
    }
    out
}

/// An option name as my_getopt compares it: case and `-`/`_` do not matter, and `loose-`
/// only says "ignore me if unknown".
fn normalise(name: &str) -> String {
    let name = name.to_ascii_lowercase().replace('_', "-");
    match name.strip_prefix("loose-") {
        Some(rest) => rest.to_owned(),
        None => name,
    }
}

fn setting<T>(r: &RawOption, value: T) -> Setting<T> {
    Setting {
        value,
        file: r.file.clone(),
        line: r.line,
    }
}

/// The last of each option dbrig uses; every other option is the client's business.
fn fold(raw: Vec<RawOption>) -> Result<ClientOptions> {
    let mut o = ClientOptions::default();
    for r in raw {
        let needs_value = |what: &str| {
            r.value.clone().ok_or_else(|| {
                ExecError::OptionFile(format!(
                    "option file {}, line {}: '{what}' needs a value",
                    r.file.display(),
                    r.line
                ))
            })
        };
        match r.name.as_str() {
            "user" => o.user = Some(setting(&r, needs_value("user")?)),
            "host" => o.host = Some(setting(&r, needs_value("host")?)),
            "socket" => o.socket = Some(setting(&r, PathBuf::from(needs_value("socket")?))),
            "port" => {
                let v = needs_value("port")?;
                let port = v.parse::<u16>().map_err(|_| {
                    ExecError::OptionFile(format!(
                        "option file {}, line {}: port '{v}' is not a number from 0 to 65535",
                        r.file.display(),
                        r.line
                    ))
                })?;
                // 0 is the client's "the default port".
                o.port = (port != 0).then(|| setting(&r, port));
            }
            "password" => {
                o.password = Some(setting(
                    &r,
                    match &r.value {
                        None => PasswordSetting::Ask,
                        Some(v) if v.is_empty() => PasswordSetting::NoPassword,
                        Some(v) => PasswordSetting::Given(v.clone()),
                    },
                ))
            }
            "skip-password" | "disable-password" => {
                o.password = Some(setting(&r, PasswordSetting::NoPassword))
            }
            "protocol" => {
                let v = needs_value("protocol")?;
                o.protocol = Some(setting(
                    &r,
                    match v.to_ascii_lowercase().as_str() {
                        "tcp" => ProtocolSetting::Tcp,
                        "socket" => ProtocolSetting::Socket,
                        _ => ProtocolSetting::Other,
                    },
                ))
            }
            _ => {}
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(text: &str) -> Vec<(String, Option<String>)> {
        let mut raw = Vec::new();
        let mut r = Reader {
            options: &mut raw,
            warn: &|_| {},
        };
        r.text(text, Path::new("t.cnf"), 0).unwrap();
        raw.into_iter().map(|o| (o.name, o.value)).collect()
    }

    fn one(text: &str) -> String {
        options(text)
            .pop()
            .and_then(|(_, v)| v)
            .expect("an option with a value")
    }

    /// Each case as `my_print_defaults --defaults-file=F client mysql` of MariaDB 10.11
    /// printed it.
    #[test]
    fn values_as_mysys_reads_them() {
        assert_eq!(one("[client]\nuser = \"a b\" # c\n"), "a b");
        assert_eq!(
            one("[client]\npassword=x\\sy\\\\z\\q # comment\n"),
            "x y\\z\\q"
        );
        assert_eq!(one("[client]\nhost=h#notcomment\n"), "h");
        assert_eq!(one("[client]\nsocket='/s p'\n"), "/s p");
        assert_eq!(one("[client]\nuser=\"ab\n"), "\"ab");
        assert_eq!(one("[client]\nhost=\"a\\\"b\"\n"), "a\"b");
        assert_eq!(one("[client]\nsocket='it's'\n"), "it's");
        assert_eq!(one("[client]\r\nuser=crlf\r\n"), "crlf");
        assert_eq!(one("[client]\n  password = \"a#b\" # x\n"), "a#b");
        assert_eq!(one("[client]\nhost = a\\#b\n"), "a\\");
        assert_eq!(
            one("[client]\npassword=a\\tb\\nc\\rd\\'e\\\"\n"),
            "a\tb\nc\rd'e\""
        );
        assert_eq!(one("[client]\npassword=\"\"\n"), "");
        assert_eq!(one("[client]\npassword='x'y'\n"), "x'y");
        // Groups: case does not matter, spaces inside the brackets do; text after `]` is
        // ignored; other groups are not read.
        assert_eq!(
            options(
                "[ Client ]\nuser=x\n[CLIENT]\nport=1\n[client] junk\nhost=j\n[mysqld]\nuser=m\n"
            ),
            [
                ("port".into(), Some("1".into())),
                ("host".into(), Some("j".into()))
            ]
        );
        // Names: `-`/`_` and case alike, `loose-` dropped, options without a value kept as such.
        assert_eq!(
            options("[mysql]\nLOOSE_USER=y\nUSER=z\npassword\nskip_password\n; x\n# y\n"),
            [
                ("user".into(), Some("y".into())),
                ("user".into(), Some("z".into())),
                ("password".into(), None),
                ("skip-password".into(), None)
            ]
        );
    }

    #[test]
    fn faults_name_file_and_line() {
        let mut raw = Vec::new();
        let mut r = Reader {
            options: &mut raw,
            warn: &|_| {},
        };
        let e = r
            .text("user=x\n[client]\n", Path::new("/f.cnf"), 0)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "option file /f.cnf, line 1: an option before any [group]"
        );
        let e = r.text("[client\n", Path::new("/f.cnf"), 0).unwrap_err();
        assert!(
            e.to_string()
                .contains("line 1: a group without its closing ']'"),
            "{e}"
        );
        let e = r
            .text(
                "[client]\n!includedir /nonexistent-dbrig-dir\n",
                Path::new("/f.cnf"),
                0,
            )
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2: !includedir /nonexistent-dbrig-dir: cannot read"),
            "{e}"
        );
        let e = fold(options_raw("[client]\nport=x\n")).unwrap_err();
        assert!(e.to_string().contains("port 'x' is not a number"), "{e}");
        let e = fold(options_raw("[client]\nuser\n")).unwrap_err();
        assert!(e.to_string().contains("'user' needs a value"), "{e}");
    }

    fn options_raw(text: &str) -> Vec<RawOption> {
        let mut raw = Vec::new();
        Reader {
            options: &mut raw,
            warn: &|_| {},
        }
        .text(text, Path::new("t.cnf"), 0)
        .unwrap();
        raw
    }

    /// The last occurrence wins whatever its group; a bare `password` asks; `skip-password`
    /// and an empty value mean none; port 0 is the default port.
    #[test]
    fn last_option_wins() {
        let o = fold(options_raw(
            "[client]\nuser=u1\npassword=p1\nport=3307\n[mysql]\nuser=u2\n[client]\nuser=u3\nport=0\n",
        ))
        .unwrap();
        assert_eq!(o.user.unwrap().value, "u3");
        assert_eq!(
            o.password.unwrap().value,
            PasswordSetting::Given("p1".into())
        );
        assert_eq!(o.port, None);
        let pw = |t: &str| fold(options_raw(t)).unwrap().password.map(|s| s.value);
        assert_eq!(
            pw("[client]\npassword=x\npassword\n"),
            Some(PasswordSetting::Ask)
        );
        assert_eq!(
            pw("[client]\npassword=x\nskip-password\n"),
            Some(PasswordSetting::NoPassword)
        );
        assert_eq!(
            pw("[client]\npassword=\n"),
            Some(PasswordSetting::NoPassword)
        );
        let o = fold(options_raw(
            "[client-server]\nsocket=/run/m.sock\nprotocol=TCP\n",
        ))
        .unwrap();
        assert_eq!(o.socket.unwrap().value, PathBuf::from("/run/m.sock"));
        assert_eq!(o.protocol.unwrap().value, ProtocolSetting::Tcp);
    }

    /// The files MariaDB 10.11's `mariadb --help` lists, in its order.
    #[test]
    fn default_files_in_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let show = |files: Vec<PathBuf>| {
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            show(default_files(None, &env(&[("HOME", "/h")]))),
            ["/etc/my.cnf", "/etc/mysql/my.cnf", "/h/.my.cnf"]
        );
        assert_eq!(
            show(default_files(
                Some(Path::new("/x/extra.cnf")),
                &env(&[("HOME", "/h"), ("MARIADB_HOME", "/m"), ("MYSQL_HOME", "/y")])
            )),
            [
                "/etc/my.cnf",
                "/etc/mysql/my.cnf",
                "/m/my.cnf",
                "/x/extra.cnf",
                "/h/.my.cnf"
            ]
        );
        // A folder named twice is read at its last place.
        assert_eq!(
            show(default_files(None, &env(&[("MYSQL_HOME", "/etc")]))),
            ["/etc/mysql/my.cnf", "/etc/my.cnf"]
        );
    }

    /// `!include` and `!includedir` (name order, `.cnf` only), a fault in an included file
    /// skipping the rest of it with a warning, world-writable files skipped, the choice of
    /// files (`--defaults-file`, `--defaults-extra-file`, `--no-defaults`).
    #[test]
    fn includes_and_file_choice() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let write = |name: &str, text: &str| {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
            p
        };
        std::fs::create_dir(d.join("conf.d")).unwrap();
        write("conf.d/b.cnf", "[client]\nuser=d2\n");
        write("conf.d/a.cnf", "[client]\nuser=d1\n");
        write("conf.d/c.txt", "[client]\nuser=not-read\n");
        write("bad.cnf", "user=no-group\n[client]\nuser=never\n");
        let ww = write("ww.cnf", "[client]\nuser=world-writable\n");
        std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o666)).unwrap();
        let main = write(
            "main.cnf",
            &format!(
                "[client]\nuser=top\n!include {0}/missing.cnf\n!includedir {0}/conf.d\n\
                 !include {0}/bad.cnf\n!include {0}/ww.cnf\nhost=after\n",
                d.display()
            ),
        );
        let warned = std::cell::RefCell::new(Vec::new());
        let warn = |w: &str| warned.borrow_mut().push(w.to_owned());
        let no_env = |_: &str| None;
        let only = OptionFileChoice {
            defaults_file: Some(main.clone()),
            ..Default::default()
        };
        let o = read(&only, &no_env, &warn).unwrap();
        assert_eq!(o.user.as_ref().unwrap().value, "d2");
        assert_eq!(o.user.unwrap().file, d.join("conf.d/b.cnf"));
        assert_eq!(o.host.unwrap().value, "after");
        let w = warned.borrow().join("\n");
        assert!(
            w.contains("bad.cnf, line 1: an option before any [group]; the rest"),
            "{w}"
        );
        assert!(w.contains("world-writable option file"), "{w}");
        // --no-defaults reads nothing; a required file that is missing is an error.
        let none = OptionFileChoice {
            no_defaults: true,
            defaults_file: Some(main.clone()),
            ..Default::default()
        };
        assert_eq!(
            read(&none, &no_env, &warn).unwrap(),
            ClientOptions::default()
        );
        let missing = OptionFileChoice {
            defaults_extra_file: Some(d.join("nope.cnf")),
            ..Default::default()
        };
        let e = read(&missing, &no_env, &warn).unwrap_err().to_string();
        assert!(
            e.contains("--defaults-extra-file") && e.contains("could not open"),
            "{e}"
        );
        // ~/.my.cnf is read after the extra file: the last word is the home folder's.
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".my.cnf"), "[client]\nport=3399\n").unwrap();
        let extra = write("extra.cnf", "[client]\nport=3388\nuser=extra\n");
        let home_s = home.path().display().to_string();
        let env = move |k: &str| (k == "HOME").then(|| home_s.clone());
        let o = read(
            &OptionFileChoice {
                defaults_extra_file: Some(extra),
                ..Default::default()
            },
            &env,
            &warn,
        )
        .unwrap();
        assert_eq!(o.port.unwrap().value, 3399);
        assert_eq!(o.user.unwrap().value, "extra");
    }
}
