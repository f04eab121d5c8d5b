//! A pgbench script file into its commands, as pgbench's `ParseScript` splits it: SQL commands
//! end at a `;` outside quotes, comments and parentheses, or at a backslash that starts a
//! meta-command; `\gset` / `\aset` attach to the SQL command before them; meta-commands run to
//! the end of their line (`\` at a line's end continues it). A syntax error names the file,
//! line and column and shows the line with a caret, as pgbench does.

use super::expr::{self, Expr};

/// One SQL command: its text split around `:variable` references.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlText {
    /// `vars.len() + 1` pieces of text around the references.
    pub pieces: Vec<String>,
    pub vars: Vec<String>,
}

impl SqlText {
    /// Split `sql` at each `:name` (pgbench's `parseQuery`: a colon followed by a letter, `_`
    /// or a non-ASCII byte; `::` casts are left alone). Like pgbench, quotes are not looked at.
    pub fn split(sql: &str) -> SqlText {
        let b = sql.as_bytes();
        let start_char = |c: u8| c.is_ascii_alphabetic() || c == b'_' || c >= 0x80;
        let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        let mut pieces = Vec::new();
        let mut vars = Vec::new();
        let mut piece_start = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b':' {
                i += 1;
                continue;
            }
            if i + 1 < b.len() && start_char(b[i + 1]) {
                let mut j = i + 2;
                while j < b.len() && name_char(b[j]) {
                    j += 1;
                }
                pieces.push(sql[piece_start..i].to_owned());
                vars.push(sql[i + 1..j].to_owned());
                piece_start = j;
                i = j;
            } else {
                while i < b.len() && b[i] == b':' {
                    i += 1;
                }
            }
        }
        pieces.push(sql[piece_start..].to_owned());
        SqlText { pieces, vars }
    }

    /// The statement with bind placeholders (`$1…` or `?`) in place of the references.
    pub fn with_placeholders(&self, numbered: bool) -> String {
        let mut s = self.pieces[0].clone();
        for (i, p) in self.pieces[1..].iter().enumerate() {
            if numbered {
                s.push_str(&format!("${}", i + 1));
            } else {
                s.push('?');
            }
            s.push_str(p);
        }
        s
    }
}

/// How `\gset` / `\aset` store a query's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Store {
    /// `\gset [prefix]`: exactly one row, each column into `prefix` + column name.
    One(String),
    /// `\aset [prefix]`: every row, the last one's values stay.
    All(String),
}

/// `\sleep`'s amount: a number or a variable.
#[derive(Debug, Clone, PartialEq)]
pub enum SleepAmount {
    Literal(i64),
    Var(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    Set {
        var: String,
        expr: Expr,
    },
    Sleep {
        amount: SleepAmount,
        unit_us: u64,
    },
    /// `\if`: on false go to `next` (the block's next `\elif`, `\else` or `\endif`).
    If {
        cond: Expr,
        next: usize,
    },
    /// `\elif`: reached after a taken branch, go to `end`; reached by a jump, test `cond`.
    Elif {
        cond: Expr,
        next: usize,
        end: usize,
    },
    /// `\else`: reached after a taken branch, go to `end`.
    Else {
        end: usize,
    },
    Endif,
    /// `\startpipeline`: SQL commands up to `\endpipeline` are sent without waiting for
    /// their results (PostgreSQL's pipeline mode).
    StartPipeline,
    /// `\syncpipeline` (pgbench 17): a Sync inside the pipeline; the statements before it
    /// commit or fail as a unit, apart from those after it.
    SyncPipeline,
    /// `\endpipeline`: a Sync, then the pipeline's results are read.
    EndPipeline,
    /// `\shell` (`set` None) / `\setshell VAR`: a command and its arguments (`:name` is a
    /// variable's value, `::x` the text `:x`), run only with `--allow-shell`.
    Shell {
        set: Option<String>,
        args: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// An SQL command; `statements` is 1 plus its `\;` separators (pgbench's compound
    /// command: several statements sent as one simple-protocol query).
    Sql {
        text: SqlText,
        store: Option<Store>,
        statements: usize,
    },
    Meta(Meta),
}

/// One command with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub kind: CommandKind,
    /// 1-based line of the script where the command starts.
    pub line: usize,
    /// Its first line, as pgbench's `-r` report shows it.
    pub display: String,
}

/// A parsed script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The file name or `builtin: NAME`, for messages.
    pub source: String,
    pub commands: Vec<Command>,
}

/// A syntax error with everything pgbench shows.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptError {
    pub source: String,
    pub line: usize,
    /// 1-based column, when known.
    pub column: Option<usize>,
    pub message: String,
    /// The line's text, for the caret.
    pub text: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.column {
            Some(c) => write!(
                f,
                "{}:{}:{}: {}\n{}\n{}^ error found here",
                self.source,
                self.line,
                c,
                self.message,
                self.text,
                " ".repeat(c - 1)
            ),
            None => write!(
                f,
                "{}:{}: {}\n{}",
                self.source, self.line, self.message, self.text
            ),
        }
    }
}

/// Meta-commands pgbench has that dbrig refuses, with why.
fn refused(name: &str, allow_shell: bool) -> Option<&'static str> {
    match name {
        "shell" | "setshell" if !allow_shell => Some(
            "runs a shell command for every transaction; dbrig runs shell commands from scripts only with --allow-shell",
        ),
        _ => None,
    }
}

struct Lines<'a> {
    text: &'a str,
    /// Byte offset of each line's start.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    /// (1-based line, 1-based column) of a byte offset.
    fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }

    fn line_text(&self, line: usize) -> &'a str {
        let start = self.starts[line - 1];
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        self.text[start..end].trim_end_matches('\r')
    }
}

/// Parse a script's text; `\shell` / `\setshell` refused.
pub fn parse(source: &str, text: &str) -> Result<Script, ScriptError> {
    parse_script(source, text, false)
}

/// Parse a script's text; `allow_shell`: `\shell` / `\setshell` taken (`--allow-shell`).
pub fn parse_script(source: &str, text: &str, allow_shell: bool) -> Result<Script, ScriptError> {
    let lines = Lines::new(text);
    let err_at = |offset: usize, message: String| {
        let (line, column) = lines.position(offset);
        ScriptError {
            source: source.to_owned(),
            line,
            column: Some(column),
            message,
            text: lines.line_text(line).to_owned(),
        }
    };
    let b = text.as_bytes();
    let mut commands: Vec<Command> = Vec::new();
    let mut i = 0;
    let mut sql_start = 0;
    let mut depth = 0i32;
    // Where the current SQL command has `\;` (psql's scanner puts a plain `;` there and
    // goes on with the same command).
    let mut compound: Vec<usize> = Vec::new();
    let flush_sql =
        |commands: &mut Vec<Command>, from: usize, to: usize, compound: &mut Vec<usize>| {
            let mut raw = String::with_capacity(to - from);
            let mut at = from;
            for &c in compound.iter() {
                raw.push_str(&text[at..c]);
                at = c + 1;
            }
            raw.push_str(&text[at..to]);
            let statements = compound.len() + 1;
            compound.clear();
            if let Some((sql, at)) = sql_command(&raw) {
                let (line, _) = lines.position(from + at);
                commands.push(Command {
                    display: sql.lines().next().unwrap_or("").trim().to_owned(),
                    kind: CommandKind::Sql {
                        text: SqlText::split(&sql),
                        store: None,
                        statements,
                    },
                    line,
                });
            }
        };
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let q = b[i];
                let open = i;
                i += 1;
                loop {
                    if i >= b.len() {
                        return Err(err_at(open, "unterminated quoted string".into()));
                    }
                    if b[i] == q {
                        if i + 1 < b.len() && b[i + 1] == q {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let open = i;
                let mut nest = 0;
                loop {
                    if i + 1 >= b.len() {
                        return Err(err_at(open, "unterminated /* comment".into()));
                    }
                    if b[i] == b'/' && b[i + 1] == b'*' {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b[i + 1] == b'/' {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'$' if dollar_tag(&text[i..]).is_some() => {
                let tag = dollar_tag(&text[i..]).expect("checked");
                let open = i;
                i += tag.len();
                match text[i..].find(tag) {
                    Some(end) => i += end + tag.len(),
                    None => return Err(err_at(open, "unterminated dollar-quoted string".into())),
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth -= 1;
                i += 1;
            }
            b';' if depth <= 0 => {
                flush_sql(&mut commands, sql_start, i + 1, &mut compound);
                i += 1;
                sql_start = i;
                depth = 0;
            }
            b'\\' => {
                if b.get(i + 1) == Some(&b';') {
                    // `\;`: the command goes on (pgbench's compound command).
                    compound.push(i);
                    i += 2;
                    continue;
                }
                flush_sql(&mut commands, sql_start, i, &mut compound);
                depth = 0;
                // The meta-command: its name, then its arguments to the end of the line
                // (a backslash ending a line continues it).
                let start = i;
                let mut end = i + 1;
                let mut args = String::new();
                let mut args_start: Option<usize> = None;
                let mut name_end = end;
                while name_end < b.len()
                    && (b[name_end].is_ascii_alphanumeric() || b[name_end] == b'_')
                {
                    name_end += 1;
                }
                let name = text[i + 1..name_end].to_ascii_lowercase();
                end = name_end;
                // Map from positions in `args` to offsets in `text`, for error columns.
                let mut map: Vec<usize> = Vec::new();
                while end < b.len() && b[end] != b'\n' {
                    if b[end] == b'\\'
                        && (b.get(end + 1) == Some(&b'\n')
                            || (b.get(end + 1) == Some(&b'\r') && b.get(end + 2) == Some(&b'\n')))
                    {
                        end += if b[end + 1] == b'\r' { 3 } else { 2 };
                        args.push(' ');
                        map.push(end);
                        continue;
                    }
                    let ch_len = text[end..].chars().next().map_or(1, char::len_utf8);
                    if args_start.is_none() {
                        args_start = Some(end);
                    }
                    for k in 0..ch_len {
                        map.push(end + k);
                    }
                    args.push_str(&text[end..end + ch_len]);
                    end += ch_len;
                }
                map.push(end);
                let _ = args_start;
                let (line, _) = lines.position(start);
                let display = lines.line_text(line).trim().to_owned();
                let at = |pos: usize| map.get(pos).copied().unwrap_or(end);
                let cmd = meta_command(
                    &name,
                    &args,
                    allow_shell,
                    &|pos, msg| err_at(at(pos), msg),
                    &|msg| err_at(start, msg),
                )?;
                match cmd {
                    Parsed::Store(store) => {
                        let Some(Command {
                            kind:
                                CommandKind::Sql {
                                    store: slot @ None, ..
                                },
                            ..
                        }) = commands.last_mut()
                        else {
                            return Err(err_at(
                                start,
                                format!("\\{name} must follow an SQL command"),
                            ));
                        };
                        *slot = Some(store);
                    }
                    Parsed::Meta(meta) => commands.push(Command {
                        kind: CommandKind::Meta(meta),
                        line,
                        display,
                    }),
                }
                i = end;
                sql_start = end;
            }
            _ => i += 1,
        }
    }
    flush_sql(&mut commands, sql_start, b.len(), &mut compound);
    link_conditionals(source, &lines, &mut commands)?;
    Ok(Script {
        source: source.to_owned(),
        commands,
    })
}

/// `$tag$` at the start of `s`, if it opens a dollar quote.
fn dollar_tag(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    let mut j = 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] >= 0x80) {
        if j == 1 && b[j].is_ascii_digit() {
            return None;
        }
        j += 1;
    }
    (j < b.len() && b[j] == b'$').then(|| &s[..=j])
}

/// pgbench's `create_sql_command`: leading white space and `--` comment lines dropped; nothing
/// left, no command. Returns the text and where it starts in `raw`.
fn sql_command(raw: &str) -> Option<(String, usize)> {
    let mut p = 0;
    let b = raw.as_bytes();
    loop {
        if p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        } else if raw[p..].starts_with("--") {
            match raw[p..].find('\n') {
                Some(n) => p += n + 1,
                None => return None,
            }
        } else {
            break;
        }
    }
    if p >= b.len() {
        return None;
    }
    Some((raw[p..].to_owned(), p))
}

enum Parsed {
    Meta(Meta),
    Store(Store),
}

fn meta_command(
    name: &str,
    args: &str,
    allow_shell: bool,
    err_at: &dyn Fn(usize, String) -> ScriptError,
    err: &dyn Fn(String) -> ScriptError,
) -> Result<Parsed, ScriptError> {
    if let Some(why) = refused(name, allow_shell) {
        return Err(err(format!("\\{name} {why}")));
    }
    let words: Vec<(usize, &str)> = args
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - args.as_ptr() as usize, w))
        .collect();
    let expression = |from: usize| -> Result<Expr, ScriptError> {
        expr::parse(&args[from..]).map_err(|e| {
            err_at(
                from + e.offset,
                format!("{} in command \"{name}\"", e.message),
            )
        })
    };
    Ok(match name {
        "set" => {
            let Some(&(_, var)) = words.first() else {
                return Err(err("missing argument in command \"set\"".into()));
            };
            if !valid_variable_name(var) {
                return Err(err(format!("invalid variable name: \"{var}\"")));
            }
            let from = words[0].0 + var.len();
            if words.len() < 2 {
                return Err(err_at(from, "missing expression in command \"set\"".into()));
            }
            Parsed::Meta(Meta::Set {
                var: var.to_owned(),
                expr: expression(from)?,
            })
        }
        "sleep" => {
            if words.is_empty() {
                return Err(err("missing argument in command \"sleep\"".into()));
            }
            if words.len() > 2 {
                return Err(err_at(
                    words[2].0,
                    "too many arguments in command \"sleep\"".into(),
                ));
            }
            let unit_us = match words.get(1).map(|w| w.1.to_ascii_lowercase()) {
                None => 1_000_000,
                Some(u) if u == "s" => 1_000_000,
                Some(u) if u == "ms" => 1_000,
                Some(u) if u == "us" => 1,
                Some(_) => {
                    return Err(err_at(
                        words[1].0,
                        "unrecognized time unit, must be us, ms or s in command \"sleep\"".into(),
                    ));
                }
            };
            let (at, w) = words[0];
            let amount = match w.strip_prefix(':') {
                Some(v) => SleepAmount::Var(v.to_owned()),
                None => SleepAmount::Literal(w.parse().map_err(|_| {
                    err_at(
                        at,
                        format!(
                            "invalid sleep time, must be an integer in command \"sleep\": \"{w}\""
                        ),
                    )
                })?),
            };
            Parsed::Meta(Meta::Sleep { amount, unit_us })
        }
        "if" | "elif" => {
            if words.is_empty() {
                return Err(err(format!("missing expression in command \"{name}\"")));
            }
            let cond = expression(0)?;
            Parsed::Meta(if name == "if" {
                Meta::If { cond, next: 0 }
            } else {
                Meta::Elif {
                    cond,
                    next: 0,
                    end: 0,
                }
            })
        }
        "shell" | "setshell" => {
            let mut w = words.iter().map(|&(_, w)| w.to_owned());
            let set = if name == "setshell" {
                let Some(var) = w.next() else {
                    return Err(err(format!("missing argument in command \"{name}\"")));
                };
                if !valid_variable_name(&var) {
                    return Err(err(format!("invalid variable name: \"{var}\"")));
                }
                Some(var)
            } else {
                None
            };
            let args: Vec<String> = w.collect();
            if args.is_empty() {
                return Err(err(format!("missing command in command \"{name}\"")));
            }
            Parsed::Meta(Meta::Shell { set, args })
        }
        "else" | "endif" => {
            if let Some(&(at, _)) = words.first() {
                return Err(err_at(
                    at,
                    format!("unexpected argument in command \"{name}\""),
                ));
            }
            Parsed::Meta(if name == "else" {
                Meta::Else { end: 0 }
            } else {
                Meta::Endif
            })
        }
        "startpipeline" | "syncpipeline" | "endpipeline" => {
            if let Some(&(at, _)) = words.first() {
                return Err(err_at(
                    at,
                    format!("unexpected argument in command \"{name}\""),
                ));
            }
            Parsed::Meta(match name {
                "startpipeline" => Meta::StartPipeline,
                "syncpipeline" => Meta::SyncPipeline,
                _ => Meta::EndPipeline,
            })
        }
        "gset" | "aset" => {
            if words.len() > 1 {
                return Err(err_at(
                    words[1].0,
                    format!("too many arguments in command \"{name}\""),
                ));
            }
            let prefix = words.first().map_or(String::new(), |w| w.1.to_owned());
            Parsed::Store(if name == "gset" {
                Store::One(prefix)
            } else {
                Store::All(prefix)
            })
        }
        "" => return Err(err("invalid command: a lone backslash".into())),
        _ => return Err(err(format!("invalid command \"\\{name}\""))),
    })
}

/// pgbench's `valid_variable_name`.
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_' || b[0] >= 0x80)
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80)
}

/// Fill in the jump targets of `\if` blocks, refusing unbalanced ones (pgbench's
/// `CheckConditional`).
fn link_conditionals(
    source: &str,
    lines: &Lines<'_>,
    commands: &mut [Command],
) -> Result<(), ScriptError> {
    let err = |c: &Command, message: &str| ScriptError {
        source: source.to_owned(),
        line: c.line,
        column: None,
        message: message.to_owned(),
        text: lines.line_text(c.line).to_owned(),
    };
    // Open blocks: (index of the \if, indices of its \elif/\else in order, saw \else).
    let mut stack: Vec<(usize, Vec<usize>, bool)> = Vec::new();
    for i in 0..commands.len() {
        let CommandKind::Meta(m) = &commands[i].kind else {
            continue;
        };
        match m {
            Meta::If { .. } => stack.push((i, Vec::new(), false)),
            Meta::Elif { .. } => match stack.last_mut() {
                None => return Err(err(&commands[i], "\\elif without matching \\if")),
                Some((_, _, true)) => return Err(err(&commands[i], "\\elif after \\else")),
                Some((_, branches, false)) => branches.push(i),
            },
            Meta::Else { .. } => match stack.last_mut() {
                None => return Err(err(&commands[i], "\\else without matching \\if")),
                Some((_, _, true)) => return Err(err(&commands[i], "\\else after \\else")),
                Some((_, branches, seen)) => {
                    branches.push(i);
                    *seen = true;
                }
            },
            Meta::Endif => {
                let Some((start, branches, _)) = stack.pop() else {
                    return Err(err(&commands[i], "\\endif without matching \\if"));
                };
                let chain: Vec<usize> = std::iter::once(start)
                    .chain(branches.iter().copied())
                    .chain(std::iter::once(i))
                    .collect();
                for w in chain.windows(2) {
                    match &mut commands[w[0]].kind {
                        CommandKind::Meta(Meta::If { next, .. }) => *next = w[1],
                        CommandKind::Meta(Meta::Elif { next, end, .. }) => {
                            *next = w[1];
                            *end = i;
                        }
                        CommandKind::Meta(Meta::Else { end }) => *end = i,
                        _ => {}
                    }
                }
            }
            Meta::Set { .. }
            | Meta::Sleep { .. }
            | Meta::Shell { .. }
            | Meta::StartPipeline
            | Meta::SyncPipeline
            | Meta::EndPipeline => {}
        }
    }
    if let Some((start, _, _)) = stack.last() {
        return Err(err(&commands[*start], "\\if without matching \\endif"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpcb_like_splits_into_pgbenchs_commands() {
        let s = parse("t.sql", super::super::TPCB_LIKE).unwrap();
        assert_eq!(s.commands.len(), 11);
        let sql: Vec<&str> = s
            .commands
            .iter()
            .filter(|c| matches!(c.kind, CommandKind::Sql { .. }))
            .map(|c| c.display.as_str())
            .collect();
        assert_eq!(sql[0], "BEGIN;");
        assert_eq!(
            sql[1],
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;"
        );
        assert_eq!(sql[6], "END;");
        let CommandKind::Sql { text, .. } = &s.commands[5].kind else {
            panic!()
        };
        assert_eq!(text.vars, ["delta", "aid"]);
        assert_eq!(
            text.with_placeholders(true),
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"
        );
        assert_eq!(s.commands[5].line, 6);
    }

    #[test]
    fn variables_casts_quotes_and_gset() {
        let t = SqlText::split("SELECT :a::int, ':b', x::text FROM t WHERE c = :c_1");
        assert_eq!(t.vars, ["a", "b", "c_1"]);
        assert_eq!(
            t.with_placeholders(false),
            "SELECT ?::int, '?', x::text FROM t WHERE c = ?"
        );
        let s = parse(
            "f",
            "-- a comment\nSELECT 1 AS one, ';' AS semi \\gset p_\nSELECT $$a;b$$ \\aset\n\\set x :p_one + 1\n",
        )
        .unwrap();
        assert_eq!(s.commands.len(), 3);
        assert!(matches!(
            &s.commands[0].kind,
            CommandKind::Sql { store: Some(Store::One(p)), .. } if p == "p_"
        ));
        assert!(matches!(
            &s.commands[1].kind,
            CommandKind::Sql { store: Some(Store::All(p)), .. } if p.is_empty()
        ));
        assert_eq!(s.commands[0].line, 2);
    }

    #[test]
    fn compound_commands_and_sync_points() {
        // `\;` keeps the command going with a plain `;` in its text (psql's scanner), and a
        // `\gset` after it stores the compound's result.
        let s = parse(
            "f",
            "SELECT 1 AS a \\; SELECT ';' AS b \\;\nSELECT :x AS c \\gset p_\nSELECT 2;\n",
        )
        .unwrap();
        assert_eq!(s.commands.len(), 2);
        let CommandKind::Sql {
            text,
            store,
            statements,
        } = &s.commands[0].kind
        else {
            panic!("{:?}", s.commands[0])
        };
        assert_eq!(*statements, 3);
        assert_eq!(*store, Some(Store::One("p_".into())));
        assert_eq!(text.vars, ["x"]);
        assert_eq!(
            text.with_placeholders(true),
            "SELECT 1 AS a ; SELECT ';' AS b ;\nSELECT $1 AS c "
        );
        assert_eq!(s.commands[0].display, "SELECT 1 AS a ; SELECT ';' AS b ;");
        assert!(matches!(
            &s.commands[1].kind,
            CommandKind::Sql { statements: 1, .. }
        ));
        assert_eq!(s.commands[1].line, 3);
        // A `\;` inside quotes is text.
        let s = parse("f", "SELECT '\\;' AS q;\n").unwrap();
        assert!(matches!(
            &s.commands[0].kind,
            CommandKind::Sql { statements: 1, text, .. } if text.pieces[0] == "SELECT '\\;' AS q;"
        ));
        let s = parse(
            "f",
            "\\startpipeline\nSELECT 1;\n\\syncpipeline\nSELECT 2;\n\\endpipeline\n",
        )
        .unwrap();
        assert_eq!(s.commands[2].kind, CommandKind::Meta(Meta::SyncPipeline));
        let e = parse("f", "\\syncpipeline now\n").unwrap_err();
        assert_eq!(e.message, "unexpected argument in command \"syncpipeline\"");
    }

    #[test]
    fn conditionals_are_linked() {
        let s = parse(
            "f",
            "\\if :a = 1\nSELECT 1;\n\\elif :a = 2\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\nSELECT 4;\n",
        )
        .unwrap();
        let kinds: Vec<&CommandKind> = s.commands.iter().map(|c| &c.kind).collect();
        assert!(matches!(
            kinds[0],
            CommandKind::Meta(Meta::If { next: 2, .. })
        ));
        assert!(matches!(
            kinds[2],
            CommandKind::Meta(Meta::Elif {
                next: 4,
                end: 6,
                ..
            })
        ));
        assert!(matches!(kinds[4], CommandKind::Meta(Meta::Else { end: 6 })));
        assert!(matches!(kinds[6], CommandKind::Meta(Meta::Endif)));
    }

    #[test]
    fn errors_name_file_line_column_with_a_caret() {
        let e = parse("my.sql", "SELECT 1;\n\\set x 1 + * 2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "my.sql:2:12: syntax error in command \"set\"\n\\set x 1 + * 2\n           ^ error found here"
        );
        let e = parse("my.sql", "\\set aid random(1)\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, Some(10)));
        assert!(e.message.contains("unexpected number of arguments"), "{e}");
        let e = parse("s", "\\shell echo hi\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s:1:1: \\shell runs a shell command"),
            "{e}"
        );
        let e = parse("s", "\\setshell x echo 1\n").unwrap_err();
        assert!(e.message.contains("only with --allow-shell"), "{e}");
        let s = parse_script("s", "\\setshell x echo :y ::z\n\\shell true\n", true).unwrap();
        assert_eq!(
            s.commands[0].kind,
            CommandKind::Meta(Meta::Shell {
                set: Some("x".into()),
                args: vec!["echo".into(), ":y".into(), "::z".into()]
            })
        );
        assert!(parse_script("s", "\\setshell x\n", true).is_err());
        let e = parse("s", "\\if 1\nSELECT 1;\n").unwrap_err();
        assert_eq!(e.to_string(), "s:1: \\if without matching \\endif\n\\if 1");
        let e = parse("s", "SELECT 1;\n\\else\n").unwrap_err();
        assert_eq!(e.message, "\\else without matching \\if");
        let e = parse("s", "\\gset\n").unwrap_err();
        assert_eq!(e.message, "\\gset must follow an SQL command");
        let e = parse("s", "\\sleep 1 hours\n").unwrap_err();
        assert!(e.message.starts_with("unrecognized time unit"), "{e}");
        let e = parse("s", "\\frobnicate\n").unwrap_err();
        assert_eq!(e.message, "invalid command \"\\frobnicate\"");
        let e = parse("s", "SELECT 'abc\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, Some(8)));
        // A continued \set spans lines.
        let s = parse("s", "\\set x 1 + \\\n  2\n").unwrap();
        assert!(matches!(
            &s.commands[0].kind,
            CommandKind::Meta(Meta::Set { .. })
        ));
    }
}
