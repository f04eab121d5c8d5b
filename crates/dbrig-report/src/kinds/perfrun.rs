//! perfrun reports: the query-by-query A/B of two configurations (RQG's perfrun / perfreport).
//!
//! Everything here is pure: it reads the typed perfrun results of two configurations (a
//! `dbrig perfrun` run stores configurations `a` and `b`; a plan's `perfrun` workload compares
//! every configuration with its baseline, side A), evaluates filter expressions over them and
//! prints the seed's report, where each query and cache temperature shows only the counters
//! that differ between the two sides:
//!
//! ```text
//! Query: SELECT l_linenumber FROM lineitem WHERE ...
//! Cache: warm
//!                        5.3.0-MariaDB   5.2.6-MariaDB     Delta   Ratio
//! Execution time                0.011s          0.004s   -0.007s    0.36
//! Handler_read_rnd                 583               0      -583
//! ```
//!
//! Delta is B − A and Ratio B / A (as in the seed, where the first column is server 1). The
//! filter given at collection is stored with the cells and applied by default.
//!
//! ## Filters
//!
//! A filter is an expression of the `evalexpr` crate over these names:
//!
//! * `NAME_a`, `NAME_b`, `NAME_delta`, `NAME_ratio` for every counter `NAME` of either side
//!   (`SHOW SESSION STATUS` deltas, global `Innodb_%` deltas, PostgreSQL `EXPLAIN` counters),
//!   and for `execution_time` (seconds, truncated to milliseconds as in the seed) and `rows`;
//! * `temperature` (`"cold"` or `"warm"`), `query` (the SQL text) and `file` (its file name).
//!
//! Before `evalexpr` parses it, the filter is lexed here (only to translate): the words `and`,
//! `or`, `not`, `eq`, `ne` become `&&`, `||`, `!`, `==`, `!=`; a leading `$` (Perl habit) is
//! dropped; `'text'` becomes `"text"`; names are matched case-insensitively and rewritten to
//! their stored spelling; numbers become floats, so that `Handler_read_rnd_a == 0` compares a
//! float with a float. A counter that one side does not have at all, or the values of a side
//! whose execution failed, are NaN: every comparison with them is false. `NAME_ratio` is 1
//! when both values are 0 and infinite when only A is 0.

use dbrig_core::answers::{compare_answers, orders_rows};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use dbrig_core::results::ResultKind;
pub use dbrig_core::results::perfrun::{
    Execution, PerfQuery, PerfrunResult, Side, SideInfo, Temperature,
};
use dbrig_store::{RunId, Store};
use evalexpr::{
    ContextWithMutableVariables, DefaultNumericTypes, HashMapContext, Node, Value as EvalValue,
};
use serde::Serialize;

use crate::blocks::Block;
use crate::data::{ReportData, StoredCell};
use crate::error::ReportError;
use crate::items::{Item, SECONDS};
use crate::kind::{KindReport, SectionBlock, SingleFormat};
use crate::table::{Align, Table, TextStyle};
use dbrig_core::results::TrialResult;
use dbrig_store::{CellRow, TrialRow};

/// Both sides of a comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sides {
    pub a: SideInfo,
    pub b: SideInfo,
}

impl Sides {
    pub fn get(&self, side: Side) -> &SideInfo {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }
}

/// One query at one temperature on both sides: what a filter sees and the report prints.
#[derive(Debug, Clone, Copy)]
pub struct Pair<'a> {
    pub file: &'a str,
    pub sql: &'a str,
    pub temperature: Temperature,
    pub a: Option<&'a Execution>,
    pub b: Option<&'a Execution>,
}

/// Whether a pair can be compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PairOutcome {
    Compared,
    /// The results differ by value (typed, a cent of tolerance, order only where the
    /// query's ORDER BY fixes it), or only their checksums are known and differ.
    ResultsDiffer {
        rows_a: Option<u64>,
        rows_b: Option<u64>,
        /// What differs (the first row that does), when both results were kept.
        why: Option<String>,
    },
    /// The query failed on a side (the first failing side is named).
    Error {
        side: Side,
        message: String,
    },
    /// One side has no execution stored.
    Missing {
        side: Side,
    },
}

impl Pair<'_> {
    pub fn execution(&self, side: Side) -> Option<&Execution> {
        match side {
            Side::A => self.a,
            Side::B => self.b,
        }
    }

    pub fn outcome(&self) -> PairOutcome {
        for side in [Side::A, Side::B] {
            match self.execution(side) {
                None => return PairOutcome::Missing { side },
                Some(r) => {
                    if let Some(e) = &r.error {
                        return PairOutcome::Error {
                            side,
                            message: e.clone(),
                        };
                    }
                }
            }
        }
        let (a, b) = (self.a.expect("checked"), self.b.expect("checked"));
        if a.checksum_unordered == b.checksum_unordered && a.rows == b.rows {
            return PairOutcome::Compared;
        }
        // Two engines spell the same values differently (DECIMAL digits, CHAR padding,
        // float sums): compare by value as the TPC-H checker does.
        let why = match (&a.answer, &b.answer) {
            (Some(x), Some(y)) => match compare_answers(x, y, orders_rows(self.sql)) {
                None => return PairOutcome::Compared,
                Some(d) => Some(d),
            },
            _ => None,
        };
        PairOutcome::ResultsDiffer {
            rows_a: a.rows,
            rows_b: b.rows,
            why,
        }
    }

    /// Whether a side failed: such pairs are always kept (at collection and in reports).
    pub fn has_error(&self) -> bool {
        matches!(self.outcome(), PairOutcome::Error { .. })
    }
}

// ---- names ------------------------------------------------------------------------------------

const SUFFIXES: [&str; 4] = ["a", "b", "delta", "ratio"];
const BUILTIN_COUNTERS: [&str; 2] = ["execution_time", "rows"];
const SCALARS: [&str; 3] = ["temperature", "query", "file"];

/// The names a filter may use, from what the two sides report.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Lower-cased counter name → stored spelling.
    counters: HashMap<String, String>,
    a: HashSet<String>,
    b: HashSet<String>,
}

impl Names {
    pub fn new(sides: &Sides) -> Names {
        let mut n = Names::default();
        for c in BUILTIN_COUNTERS {
            n.counters.insert(c.to_owned(), c.to_owned());
        }
        for c in sides.a.counters.iter().chain(&sides.b.counters) {
            n.counters.insert(c.to_ascii_lowercase(), c.clone());
        }
        n.a = sides.a.counters.iter().cloned().collect();
        n.b = sides.b.counters.iter().cloned().collect();
        n
    }

    fn side_has(&self, side: Side, counter: &str) -> bool {
        match side {
            Side::A => self.a.contains(counter),
            Side::B => self.b.contains(counter),
        }
    }

    /// The stored spelling of a variable name, or `None` when unknown.
    fn resolve(&self, ident: &str) -> Option<(String, Var)> {
        let lower = ident.to_ascii_lowercase();
        if let Some(s) = SCALARS.iter().find(|s| **s == lower) {
            let var = match *s {
                "temperature" => Var::Temperature,
                "query" => Var::Query,
                _ => Var::File,
            };
            return Some((s.to_string(), var));
        }
        for suffix in SUFFIXES {
            if let Some(base) = lower.strip_suffix(&format!("_{suffix}"))
                && let Some(name) = self.counters.get(base)
            {
                return Some((
                    format!("{name}_{suffix}"),
                    Var::Counter {
                        name: name.clone(),
                        suffix,
                    },
                ));
            }
        }
        // The seed's (RQG perfrun's) names: `Execution_time1`, `Innodb_rows_read2` for the
        // first and second server.
        for (digit, suffix) in [("1", "a"), ("2", "b")] {
            if let Some(base) = lower.strip_suffix(digit)
                && let Some(name) = self.counters.get(base)
            {
                return Some((
                    format!("{name}_{suffix}"),
                    Var::Counter {
                        name: name.clone(),
                        suffix,
                    },
                ));
            }
        }
        None
    }

    /// Up to three known names close to `ident` (edit distance), best first.
    fn suggest(&self, ident: &str) -> Vec<String> {
        let lower = ident.to_ascii_lowercase();
        // A counter named without its suffix: list the four forms.
        if let Some(name) = self.counters.get(&lower) {
            return SUFFIXES.iter().map(|s| format!("{name}_{s}")).collect();
        }
        let mut candidates: Vec<(usize, String)> = Vec::new();
        let limit = (lower.len() / 4).clamp(2, 4);
        let mut consider = |full: String| {
            let d = edit_distance(&lower, &full.to_ascii_lowercase());
            if d <= limit {
                candidates.push((d, full));
            }
        };
        for s in SCALARS {
            consider(s.to_owned());
        }
        for name in self.counters.values() {
            for s in SUFFIXES {
                consider(format!("{name}_{s}"));
            }
        }
        candidates.sort();
        candidates.dedup();
        candidates.into_iter().take(3).map(|(_, n)| n).collect()
    }
}

/// Levenshtein distance over bytes (names are ASCII).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

// ---- filters ----------------------------------------------------------------------------------

/// A variable the filter reads.
#[derive(Debug, Clone, PartialEq)]
enum Var {
    Counter { name: String, suffix: &'static str },
    Temperature,
    Query,
    File,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokKind {
    Ident,
    Operand,
    Operator,
    Open,
    Close,
}

#[derive(Debug, Clone)]
struct Tok {
    /// Byte offset in the original text.
    start: usize,
    out: String,
    kind: TokKind,
    /// `NAME =~ m{RE}` / `NAME !~ m{RE}` (Perl's match operators, as the seed's filters
    /// write them): the name, the pattern and whether negated. The token stands for a
    /// boolean computed per pair.
    regex: Option<(Tok0, String, bool)>,
}

/// The name a regular-expression match applies to, with its offset.
#[derive(Debug, Clone)]
struct Tok0 {
    start: usize,
    name: String,
}

/// A compiled filter.
#[derive(Debug, Clone)]
pub struct Filter {
    text: String,
    translated: String,
    node: Node<DefaultNumericTypes>,
    vars: Vec<(String, Var)>,
    /// Regular-expression matches: the boolean's name, the text variable, the pattern,
    /// negated.
    regexes: Vec<(String, Var, regex::Regex, bool)>,
}

impl Filter {
    /// Parse a filter. With `names`, every name must be known (and is rewritten to its stored
    /// spelling); without, only the syntax is checked (before the servers are reached).
    pub fn parse(text: &str, names: Option<&Names>) -> Result<Filter, ReportError> {
        let syntax = |column: usize, message: String| ReportError::FilterSyntax {
            expr: text.to_owned(),
            column,
            message,
        };
        let column = |byte: usize| text[..byte].chars().count() + 1;
        let mut toks = lex(text).map_err(|(at, why)| syntax(column(at), why.to_string()))?;
        if toks.is_empty() {
            return Err(syntax(1, "the filter is empty".into()));
        }
        let mut vars = Vec::new();
        let mut regexes = Vec::new();
        for t in toks.iter_mut().filter(|t| t.regex.is_some()) {
            let (name, pattern, negate) = t.regex.clone().expect("filtered");
            let re = regex::Regex::new(&pattern)
                .map_err(|e| syntax(column(t.start), format!("bad regular expression: {e}")))?;
            let var = match names {
                None => Var::Query,
                Some(names) => match names.resolve(&name.name) {
                    Some((_, v @ (Var::Query | Var::File | Var::Temperature))) => v,
                    Some(_) => {
                        return Err(syntax(
                            column(name.start),
                            format!(
                                "{} is a number: =~ and !~ match text (query, file, temperature)",
                                name.name
                            ),
                        ));
                    }
                    None => {
                        return Err(ReportError::FilterUnknownName {
                            expr: text.to_owned(),
                            column: column(name.start),
                            suggestions: names.suggest(&name.name),
                            name: name.name.clone(),
                        });
                    }
                },
            };
            regexes.push((t.out.clone(), var, re, negate));
        }
        for t in toks.iter_mut().filter(|t| t.kind == TokKind::Ident) {
            match names {
                Some(names) => match names.resolve(&t.out) {
                    Some((spelled, var)) => {
                        t.out = spelled.clone();
                        if !vars.iter().any(|(n, _)| *n == spelled) {
                            vars.push((spelled, var));
                        }
                    }
                    None => {
                        return Err(ReportError::FilterUnknownName {
                            expr: text.to_owned(),
                            column: column(t.start),
                            suggestions: names.suggest(&t.out),
                            name: t.out.clone(),
                        });
                    }
                },
                None => {
                    // Syntax only: any name stands for a number.
                    t.out = "x".into();
                }
            }
        }
        let translated = join(&toks);
        let node = match build(&translated) {
            Ok(n) => n,
            Err(e) => {
                let (at, message) = locate_error(&toks, &e);
                return Err(syntax(column(at.unwrap_or(text.len())), message));
            }
        };
        Ok(Filter {
            text: text.to_owned(),
            translated,
            node,
            vars,
            regexes,
        })
    }

    /// The filter as the user wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The expression handed to `evalexpr`.
    pub fn translated(&self) -> &str {
        &self.translated
    }

    /// Whether a pair matches.
    pub fn matches(&self, pair: &Pair<'_>, names: &Names) -> Result<bool, ReportError> {
        let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
        for (spelled, var) in &self.vars {
            let value = match var {
                Var::Temperature => EvalValue::String(pair.temperature.as_str().into()),
                Var::Query => EvalValue::String(pair.sql.into()),
                Var::File => EvalValue::String(pair.file.into()),
                Var::Counter { name, suffix } => {
                    let (a, b) = (
                        value_of(pair, names, Side::A, name),
                        value_of(pair, names, Side::B, name),
                    );
                    EvalValue::Float(match *suffix {
                        "a" => a,
                        "b" => b,
                        "delta" => b - a,
                        _ => ratio(a, b),
                    })
                }
            };
            ctx.set_value(spelled.clone(), value)
                .map_err(|e| self.eval_error(e.to_string()))?;
        }
        for (slot, var, re, negate) in &self.regexes {
            let text = match var {
                Var::Temperature => pair.temperature.as_str(),
                Var::File => pair.file,
                _ => pair.sql,
            };
            ctx.set_value(
                slot.clone(),
                EvalValue::Boolean(re.is_match(text) != *negate),
            )
            .map_err(|e| self.eval_error(e.to_string()))?;
        }
        match self.node.eval_with_context(&ctx) {
            Ok(EvalValue::Boolean(b)) => Ok(b),
            Ok(other) => Err(self.eval_error(format!(
                "must be true or false, but gives {other} (compare with ==, <, >…)"
            ))),
            Err(e) => Err(self.eval_error(e.to_string())),
        }
    }

    /// Evaluate once on a made-up pair, so that type errors (`temperature > 1`) show before
    /// any query runs.
    pub fn check(&self, names: &Names) -> Result<(), ReportError> {
        let made_up = Execution {
            time_us: Some(1000),
            rows: Some(1),
            ..Execution::default()
        };
        let (a, b) = (made_up.clone(), made_up);
        let pair = Pair {
            file: "q.sql",
            sql: "SELECT 1",
            temperature: Temperature::Cold,
            a: Some(&a),
            b: Some(&b),
        };
        self.matches(&pair, names).map(|_| ())
    }

    fn eval_error(&self, message: String) -> ReportError {
        ReportError::FilterEval {
            expr: self.text.clone(),
            message,
        }
    }
}

/// The value of a counter (or `execution_time` / `rows`) on a side; NaN when unknown.
fn value_of(pair: &Pair<'_>, names: &Names, side: Side, counter: &str) -> f64 {
    let Some(rec) = pair.execution(side).filter(|r| r.error.is_none()) else {
        return f64::NAN;
    };
    match counter {
        "execution_time" => rec.execution_time_s().unwrap_or(f64::NAN),
        "rows" => rec.rows.map_or(f64::NAN, |r| r as f64),
        _ => match rec.counters.get(counter) {
            Some(v) => *v,
            None if names.side_has(side, counter) => 0.0,
            None => f64::NAN,
        },
    }
}

/// B / A for filters: 1 when both are 0, infinite when only A is.
pub fn ratio(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        1.0
    } else if a == 0.0 {
        f64::INFINITY
    } else {
        b / a
    }
}

/// Why a translated filter is not one [`build`] accepts (the syntax error told to the user
/// when no token of it is found to blame).
#[derive(Debug, thiserror::Error)]
enum Unfit {
    #[error("{0}")]
    Parse(evalexpr::EvalexprError<DefaultNumericTypes>),
    /// `name 1`: evalexpr reads a function call.
    #[error("an operator is missing between two operands")]
    MissingOperator,
    #[error("{0} is not allowed in a filter")]
    NotAllowed(evalexpr::Operator<DefaultNumericTypes>),
    #[error("{operator} needs {want} operand(s)")]
    Operands {
        operator: evalexpr::Operator<DefaultNumericTypes>,
        want: usize,
    },
}

/// Parse with `evalexpr` and accept only what a filter may contain. `evalexpr`'s parser is
/// lenient (`a || )` gives an `Or` with one operand, `name 1` a function call), so the tree's
/// shape is checked here: every operator has its operands, and there are no functions,
/// assignments, tuples or `;` chains.
fn build(text: &str) -> Result<Node<DefaultNumericTypes>, Unfit> {
    use evalexpr::Operator as O;
    let node = evalexpr::build_operator_tree::<DefaultNumericTypes>(text).map_err(Unfit::Parse)?;
    for n in node.iter() {
        let want = match n.operator() {
            O::Add
            | O::Sub
            | O::Mul
            | O::Div
            | O::Mod
            | O::Exp
            | O::Eq
            | O::Neq
            | O::Gt
            | O::Lt
            | O::Geq
            | O::Leq
            | O::And
            | O::Or => 2,
            O::Not | O::Neg | O::RootNode => 1,
            O::Const { .. } | O::VariableIdentifierRead { .. } => 0,
            O::FunctionIdentifier { .. } => return Err(Unfit::MissingOperator),
            other => return Err(Unfit::NotAllowed(other.clone())),
        };
        if n.children().len() != want {
            return Err(Unfit::Operands {
                operator: n.operator().clone(),
                want,
            });
        }
    }
    Ok(node)
}

fn join(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| t.out.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Perl pattern from byte `from`: `m{…}`, `m(…)`, `m/…/`, `m!…!`, `/…/` or a quoted string,
/// with trailing `i` (case-insensitive) and `x` flags; the pattern and the offset after it.
fn regex_literal(text: &str, from: usize) -> Option<(String, usize)> {
    let rest = &text[from..];
    let skipped = rest.len() - rest.trim_start().len();
    let mut at = from + skipped;
    let mut chars = text[at..].chars();
    let mut open = chars.next()?;
    if open == 'm' {
        at += 1;
        open = text[at..].chars().next()?;
    } else if !matches!(open, '/' | '"' | '\'') {
        return None;
    }
    let close = match open {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        c if c.is_ascii_punctuation() => c,
        _ => return None,
    };
    let body_start = at + open.len_utf8();
    let body_len = text[body_start..].find(close)?;
    let mut pattern = text[body_start..body_start + body_len].to_owned();
    let mut end = body_start + body_len + close.len_utf8();
    let mut flags = String::new();
    while let Some(f) = text[end..]
        .chars()
        .next()
        .filter(|c| matches!(c, 'i' | 'x' | 's' | 'm'))
    {
        flags.push(f);
        end += 1;
    }
    if !flags.is_empty() {
        pattern = format!("(?{flags}){pattern}");
    }
    Some((pattern, end))
}

/// Why a filter does not split into tokens (told with the column it starts at).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum LexError {
    #[error("this string is not closed")]
    UnclosedString,
    #[error("{0} is not a number")]
    NotANumber(String),
    #[error("a name must follow $")]
    NoName,
    #[error("this ) has no matching (")]
    UnmatchedClose,
    /// `=~` or `!~` without the name it matches.
    #[error("{0} needs a name before it ($Query)")]
    MatchWithoutName(&'static str),
    #[error("{0} needs a pattern after it: m{{…}} or /…/")]
    MatchWithoutPattern(&'static str),
    #[error("use == to compare")]
    SingleEquals,
    #[error("unexpected character {0:?}")]
    Unexpected(char),
    #[error("this ( is never closed")]
    UnclosedOpen,
}

/// Split the filter into tokens and translate each; `Err((byte offset, why))`.
fn lex(text: &str) -> Result<Vec<Tok>, (usize, LexError)> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut depth = 0i32;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let push = |toks: &mut Vec<Tok>, out: &str, kind| {
            toks.push(Tok {
                start,
                out: out.to_owned(),
                kind,
                regex: None,
            })
        };
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' | b'\'' => {
                let mut s = String::new();
                i += 1;
                loop {
                    let Some(ch) = text[i..].chars().next() else {
                        return Err((start, LexError::UnclosedString));
                    };
                    i += ch.len_utf8();
                    if ch as u32 == u32::from(c) {
                        break;
                    }
                    if ch == '\\' {
                        let Some(esc) = text[i..].chars().next() else {
                            return Err((start, LexError::UnclosedString));
                        };
                        i += esc.len_utf8();
                        s.push(esc);
                    } else {
                        s.push(ch);
                    }
                }
                let quoted = format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
                push(&mut toks, &quoted, TokKind::Operand);
            }
            b'0'..=b'9' | b'.' => {
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                    i += 1;
                }
                if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                    i += 1;
                    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
                        i += 1;
                    }
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
                let lit = &text[start..i];
                let v: f64 = lit
                    .parse()
                    .map_err(|_| (start, LexError::NotANumber(lit.to_owned())))?;
                push(&mut toks, &format!("{v:?}"), TokKind::Operand);
            }
            b'$' | b'_' | b'a'..=b'z' | b'A'..=b'Z' => {
                let word_start = if c == b'$' { i + 1 } else { i };
                i = word_start;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &text[word_start..i];
                if word.is_empty() {
                    return Err((start, LexError::NoName));
                }
                match word.to_ascii_lowercase().as_str() {
                    "and" => push(&mut toks, "&&", TokKind::Operator),
                    "or" => push(&mut toks, "||", TokKind::Operator),
                    "not" => push(&mut toks, "!", TokKind::Operator),
                    "eq" => push(&mut toks, "==", TokKind::Operator),
                    "ne" => push(&mut toks, "!=", TokKind::Operator),
                    w @ ("true" | "false") => push(&mut toks, w, TokKind::Operand),
                    _ => toks.push(Tok {
                        start: word_start,
                        out: word.to_owned(),
                        kind: TokKind::Ident,
                        regex: None,
                    }),
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
                push(&mut toks, "(", TokKind::Open);
            }
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return Err((start, LexError::UnmatchedClose));
                }
                i += 1;
                push(&mut toks, ")", TokKind::Close);
            }
            _ => {
                let two = text.get(i..i + 2).unwrap_or("");
                let op = match two {
                    "==" | "!=" | "<=" | ">=" | "&&" | "||" => two,
                    "=~" | "!~" => {
                        // Perl's match: the name before it, a pattern after it.
                        let matcher = if two == "=~" { "=~" } else { "!~" };
                        let Some(name) = toks.pop().filter(|t| t.kind == TokKind::Ident) else {
                            return Err((start, LexError::MatchWithoutName(matcher)));
                        };
                        let (pattern, end) = regex_literal(text, i + 2)
                            .ok_or((start, LexError::MatchWithoutPattern(matcher)))?;
                        i = end;
                        let slot = format!("dbrig_match_{}", toks.len());
                        toks.push(Tok {
                            start: name.start,
                            out: slot,
                            kind: TokKind::Operand,
                            regex: Some((
                                Tok0 {
                                    start: name.start,
                                    name: name.out,
                                },
                                pattern,
                                two == "!~",
                            )),
                        });
                        continue;
                    }
                    _ => match c {
                        b'<' | b'>' | b'!' | b'+' | b'-' | b'*' | b'/' | b'%' | b'^' => {
                            &text[i..i + 1]
                        }
                        b'=' => return Err((start, LexError::SingleEquals)),
                        _ => {
                            let ch = text[i..].chars().next().unwrap_or('?');
                            return Err((start, LexError::Unexpected(ch)));
                        }
                    },
                };
                i += op.len();
                push(&mut toks, op, TokKind::Operator);
            }
        }
    }
    if depth > 0
        && let Some(open) = toks.iter().rev().find(|t| t.kind == TokKind::Open)
    {
        return Err((open.start, LexError::UnclosedOpen));
    }
    Ok(toks)
}

/// Where a filter stops making sense: the first token after which no completion (closing
/// parentheses, optionally after one more operand) parses. `evalexpr` reports no positions,
/// so this finds one by re-parsing prefixes.
fn locate_error(toks: &[Tok], whole: &Unfit) -> (Option<usize>, String) {
    let parses = |s: &str| build(s).is_ok();
    for k in 1..=toks.len() {
        let prefix = join(&toks[..k]);
        let open = toks[..k]
            .iter()
            .map(|t| match t.kind {
                TokKind::Open => 1,
                TokKind::Close => -1,
                _ => 0,
            })
            .sum::<i32>()
            .max(0) as usize;
        let closers = " )".repeat(open);
        let viable = [
            format!("{prefix}{closers}"),
            format!("{prefix} 1.0{closers}"),
            format!("{prefix} true{closers}"),
        ]
        .iter()
        .any(|s| parses(s));
        if !viable {
            let t = &toks[k - 1];
            let what = match t.kind {
                TokKind::Close => "unexpected )".to_owned(),
                TokKind::Operator => format!("unexpected operator {}", t.out),
                _ => "unexpected operand (an operator is missing before it)".to_owned(),
            };
            return (Some(t.start), what);
        }
    }
    (None, format!("the filter is incomplete ({whole})"))
}

// ---- the stored runs --------------------------------------------------------------------------

/// One side of a perfrun comparison: a configuration and what it measured there.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfrunSide {
    pub configuration: String,
    pub result: PerfrunResult,
    /// Set-up times of the side's connections (its first finished trial's).
    pub connect_latency: Option<dbrig_core::results::ConnectLatency>,
}

impl PerfrunSide {
    /// The side's first finished result, else the result of a trial that failed because
    /// every query failed (each query's error is worth showing); a side without any (its
    /// trial failed before measuring) keeps its target and says why, so every pair shows as
    /// not measured there.
    fn of(cell: &StoredCell) -> PerfrunSide {
        let perfrun = |r: &dbrig_core::results::TrialResult| match r {
            dbrig_core::results::TrialResult::Perfrun(p) => Some(p.clone()),
            _ => None,
        };
        let result = cell
            .done_results()
            .find_map(perfrun)
            .or_else(|| {
                cell.trials
                    .iter()
                    .rev()
                    .find_map(|t| t.result.as_deref().and_then(perfrun))
            })
            .unwrap_or_else(|| PerfrunResult {
                server: SideInfo {
                    target: cell.target.clone(),
                    ..SideInfo::default()
                },
                source: String::new(),
                note: Some(
                    match cell.trials.iter().rev().find_map(|t| t.reason.clone()) {
                        Some(reason) => format!("nothing measured: {reason}"),
                        None => "nothing measured".to_owned(),
                    },
                ),
                queries: Vec::new(),
            });
        PerfrunSide {
            configuration: cell.configuration.clone(),
            result,
            connect_latency: cell
                .trials
                .iter()
                .filter(|t| t.status == dbrig_store::TrialStatus::Done)
                .find_map(|t| t.connection.as_ref()?.connect_latency.clone()),
        }
    }
}

/// Two configurations' perfrun results compared: B against A, the baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRun {
    pub run: RunId,
    pub name: String,
    pub status: String,
    /// The plan's workload label (`perfrun` for `dbrig perfrun`).
    pub workload: String,
    pub a: PerfrunSide,
    pub b: PerfrunSide,
    /// The filter given at collection: what the report applies unless told otherwise.
    pub filter: Option<String>,
}

impl PerfRun {
    /// The perfrun of a run: `dbrig perfrun`'s two configurations, or a plan's first perfrun
    /// workload with its second configuration against the first.
    pub fn load(store: &Store, run: RunId) -> Result<PerfRun, ReportError> {
        // This kind's items are all a perfrun reads (the registry is above this file).
        let data = ReportData::load_with(
            store,
            run,
            crate::data::KindFacts {
                items: |r| PerfrunKind.items(r),
                ..super::FACTS
            },
        )?;
        let cells = data
            .sections
            .iter()
            .find(|s| s.kind == ResultKind::Perfrun)
            .map_or(0, |s| data.stored_cells(&s.workloads[0]).len());
        PerfRun::all(&data).into_iter().next().ok_or(match cells {
            0 => ReportError::NotPerfrun { run },
            count => ReportError::PerfrunSides { run, count },
        })
    }

    /// Every perfrun comparison of a report: per perfrun workload, each configuration against
    /// the baseline.
    pub fn all(data: &ReportData) -> Vec<PerfRun> {
        let mut out = Vec::new();
        for s in data
            .sections
            .iter()
            .filter(|s| s.kind == ResultKind::Perfrun)
        {
            for w in &s.workloads {
                let cells = data.stored_cells(w);
                let Some(base) = cells
                    .iter()
                    .find(|c| c.configuration == data.baseline)
                    .or(cells.first())
                else {
                    continue;
                };
                for other in cells
                    .iter()
                    .filter(|c| c.configuration != base.configuration)
                {
                    let info = data.runs.iter().find(|r| r.id == other.run_id);
                    out.push(PerfRun {
                        run: other.run_id,
                        name: info.map(|r| r.name.clone()).unwrap_or_default(),
                        status: info.map(|r| r.status.clone()).unwrap_or_default(),
                        workload: w.clone(),
                        a: PerfrunSide::of(base),
                        b: PerfrunSide::of(other),
                        filter: base
                            .options
                            .filter
                            .clone()
                            .or_else(|| other.options.filter.clone()),
                    });
                }
            }
        }
        out
    }

    pub fn sides(&self) -> Sides {
        Sides {
            a: self.a.result.server.clone(),
            b: self.b.result.server.clone(),
        }
    }

    pub fn names(&self) -> Names {
        Names::new(&self.sides())
    }

    /// Every query (A's order, then queries only B ran) at each temperature.
    pub fn pairs(&self) -> Vec<Pair<'_>> {
        let (qa, qb) = (&self.a.result.queries, &self.b.result.queries);
        let mut files: Vec<&str> = qa.iter().map(|q| q.file.as_str()).collect();
        for q in qb {
            if !files.contains(&q.file.as_str()) {
                files.push(&q.file);
            }
        }
        let mut out = Vec::new();
        for file in files {
            let a = qa.iter().find(|q| q.file == file);
            let b = qb.iter().find(|q| q.file == file);
            let sql = a.or(b).map_or("", |q| q.sql.as_str());
            for t in Temperature::ALL {
                out.push(Pair {
                    file,
                    sql,
                    temperature: t,
                    a: a.map(|q| q.execution(t)),
                    b: b.map(|q| q.execution(t)),
                });
            }
        }
        out
    }

    /// The filter to report with: `given` when set (an empty one shows every pair), else the
    /// one given at collection; checked against the two sides' counter names.
    pub fn filter(&self, given: Option<&str>) -> Result<Option<Filter>, ReportError> {
        let text = match given {
            Some(g) if g.trim().is_empty() => return Ok(None),
            Some(g) => g,
            None => match &self.filter {
                Some(f) => f.as_str(),
                None => return Ok(None),
            },
        };
        let names = self.names();
        let f = Filter::parse(text, Some(&names))?;
        f.check(&names)?;
        Ok(Some(f))
    }

    /// The pairs a filter keeps (a pair where a side failed is always kept), and how many
    /// there were.
    pub fn kept<'a>(
        &'a self,
        filter: Option<&Filter>,
    ) -> Result<(Vec<Pair<'a>>, usize), ReportError> {
        let names = self.names();
        let all = self.pairs();
        let total = all.len();
        let mut kept = Vec::new();
        for pair in all {
            let keep = match filter {
                Some(f) if !pair.has_error() => f.matches(&pair, &names)?,
                _ => true,
            };
            if keep {
                kept.push(pair);
            }
        }
        Ok((kept, total))
    }
}

// ---- differences and text ---------------------------------------------------------------------

/// One line of a pair's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffRow {
    pub name: String,
    /// `None`: the side has no such counter.
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// Seconds (printed `0.011s`).
    pub is_time: bool,
}

impl DiffRow {
    /// B − A.
    pub fn delta(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }

    /// B / A, when neither is 0.
    pub fn ratio(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a != 0.0 && b != 0.0).then(|| b / a)
    }
}

/// The execution time (always) and the counters whose values differ, by name.
pub fn diff_rows(pair: &Pair<'_>, names: &Names) -> Vec<DiffRow> {
    let (Some(a), Some(b)) = (pair.a, pair.b) else {
        return Vec::new();
    };
    let mut rows = vec![DiffRow {
        name: "Execution time".into(),
        a: a.execution_time_s(),
        b: b.execution_time_s(),
        is_time: true,
    }];
    let all: BTreeSet<&String> = a.counters.keys().chain(b.counters.keys()).collect();
    for name in all {
        let get = |rec: &Execution, side| match rec.counters.get(name) {
            Some(v) => Some(*v),
            None if names.side_has(side, name) => Some(0.0),
            None => None,
        };
        let (va, vb) = (get(a, Side::A), get(b, Side::B));
        if va != vb {
            rows.push(DiffRow {
                name: name.clone(),
                a: va,
                b: vb,
                is_time: false,
            });
        }
    }
    rows
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

fn cell(v: Option<f64>, is_time: bool) -> String {
    match v {
        None => "-".into(),
        Some(v) if is_time => format!("{v:.3}s"),
        Some(v) => number(v),
    }
}

/// The column heads: the two server versions (marked a/b when they are the same).
pub fn column_heads(sides: &Sides) -> (String, String) {
    let (a, b) = (&sides.a.version, &sides.b.version);
    if a == b {
        (format!("{a} (a)"), format!("{b} (b)"))
    } else {
        (a.clone(), b.clone())
    }
}

/// The seed's layout: three spaces between columns, a rule as wide as the table, room for
/// long counter names.
fn seed_style() -> TextStyle {
    TextStyle {
        title: false,
        gap: 3,
        min_widths: vec![30, 0, 0, 8, 6],
        full_rule: true,
    }
}

/// One query at one temperature, in the seed's layout.
pub fn pair_text(pair: &Pair<'_>, sides: &Sides, names: &Names) -> String {
    let one_line = pair.sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = format!(
        "Query: {one_line} ({})\nCache: {}\n",
        pair.file, pair.temperature
    );
    match pair.outcome() {
        PairOutcome::Missing { side } => {
            let _ = writeln!(out, "not measured on {}: not compared", side.as_str());
        }
        PairOutcome::Error { side, message } => {
            let _ = writeln!(out, "error on {}: {message}\nnot compared", side.as_str());
        }
        PairOutcome::ResultsDiffer {
            rows_a,
            rows_b,
            why,
        } => {
            let n = |r: Option<u64>| r.map_or("?".into(), |r| r.to_string());
            let _ = writeln!(
                out,
                "results differ: not compared (a: {} rows, b: {} rows){}",
                n(rows_a),
                n(rows_b),
                why.map(|w| format!(": {w}")).unwrap_or_default()
            );
        }
        PairOutcome::Compared => {
            let (head_a, head_b) = column_heads(sides);
            let rows = diff_rows(pair, names)
                .iter()
                .map(|r| {
                    vec![
                        r.name.clone(),
                        cell(r.a, r.is_time),
                        cell(r.b, r.is_time),
                        r.delta()
                            .map(|d| cell(Some(d), r.is_time))
                            .unwrap_or_default(),
                        r.ratio().map(|x| format!("{x:.2}")).unwrap_or_default(),
                    ]
                })
                .collect();
            let table = Table {
                title: String::new(),
                header: vec![
                    String::new(),
                    head_a,
                    head_b,
                    "Delta".into(),
                    "Ratio".into(),
                ],
                align: vec![
                    Align::Left,
                    Align::Right,
                    Align::Right,
                    Align::Right,
                    Align::Right,
                ],
                rows,
                notes: Vec::new(),
            };
            out.push_str(&table.to_text_styled(&seed_style()));
        }
    }
    out
}

/// The header of a perfrun report: the run, each side's configuration, target and version,
/// where the queries came from, notes about the counters.
fn header(run: &PerfRun) -> String {
    let mut out = format!("perfrun run {} — {} ({})", run.run, run.name, run.status);
    if run.workload != "perfrun" {
        let _ = write!(out, ", workload {}", run.workload);
    }
    out.push('\n');
    for (side, s) in [(Side::A, &run.a), (Side::B, &run.b)] {
        let name = side.as_str();
        let conf = if s.configuration == name {
            String::new()
        } else {
            format!(" = {}", s.configuration)
        };
        let _ = writeln!(
            out,
            "{name}{conf}: {}  {}",
            s.result.server.target, s.result.server.version
        );
    }
    let queries = run.pairs().len() / Temperature::ALL.len();
    let source = [&run.a.result.source, &run.b.result.source]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{queries} queries{}",
        if source.is_empty() {
            String::new()
        } else {
            format!(" from {source}")
        }
    );
    for (side, s) in [(Side::A, &run.a), (Side::B, &run.b)] {
        if let Some(n) = &s.result.note {
            let _ = writeln!(out, "{}: {n}", side.as_str());
        }
    }
    out
}

/// The whole report of a comparison: pairs the filter keeps (pairs with an error are always
/// shown). The caller decides the filter (see [`PerfRun::filter`]).
pub fn perfrun_text(run: &PerfRun, filter: Option<&Filter>) -> Result<String, ReportError> {
    let sides = run.sides();
    let names = run.names();
    let mut out = header(run);
    let (kept, total) = run.kept(filter)?;
    if let Some(f) = filter {
        let _ = writeln!(
            out,
            "Filter: {} ({} of {total} query/temperature pairs match)",
            f.text(),
            kept.len()
        );
    }
    for pair in &kept {
        out.push('\n');
        out.push_str(&pair_text(pair, &sides, &names));
    }
    for (side, s) in [(Side::A, &run.a), (Side::B, &run.b)] {
        if let Some(c) = &s.connect_latency {
            out += &crate::run::connect_latency_text(c, &format!(" of {}", side.as_str()));
        }
    }
    Ok(out)
}

/// One pair as the JSON export shows it. Keys name their unit as every dbrig JSON does
/// (`_s`); counters have none.
#[derive(Debug, Serialize)]
struct PairJson<'a> {
    file: &'a str,
    sql: &'a str,
    temperature: Temperature,
    #[serde(flatten)]
    outcome: PairOutcome,
    /// Each side's execution time, as the filter's `execution_time_a` / `_b` (truncated to
    /// milliseconds); absent for a side without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    execution_time_a_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    execution_time_b_s: Option<f64>,
    /// B / A (compared pairs whose times are both above 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    execution_time_ratio: Option<f64>,
    /// The counters that differ (compared pairs only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    counters: Vec<CounterJson>,
}

/// A counter that differs between the sides.
#[derive(Debug, Serialize)]
struct CounterJson {
    name: String,
    /// `None`: the side has no such counter.
    a: Option<f64>,
    b: Option<f64>,
    delta: Option<f64>,
    ratio: Option<f64>,
}

#[derive(Debug, Serialize)]
struct SideJson<'a> {
    configuration: &'a str,
    target: &'a str,
    version: &'a str,
    dialect: &'a str,
    note: Option<&'a str>,
}

/// The same report as one JSON object: the run, both sides, the filter and every pair it
/// keeps with the counters that differ.
pub fn perfrun_json(
    run: &PerfRun,
    filter: Option<&Filter>,
) -> Result<serde_json::Value, ReportError> {
    let names = run.names();
    let (kept, total) = run.kept(filter)?;
    fn side(s: &PerfrunSide) -> SideJson<'_> {
        SideJson {
            configuration: &s.configuration,
            target: &s.result.server.target,
            version: &s.result.server.version,
            dialect: &s.result.server.dialect,
            note: s.result.note.as_deref(),
        }
    }
    let pairs: Vec<PairJson<'_>> = kept
        .iter()
        .map(|p| {
            let outcome = p.outcome();
            let rows = match outcome {
                PairOutcome::Compared => diff_rows(p, &names),
                _ => Vec::new(),
            };
            let time = |s: Side| p.execution(s).and_then(Execution::execution_time_s);
            PairJson {
                file: p.file,
                sql: p.sql,
                temperature: p.temperature,
                outcome,
                execution_time_a_s: time(Side::A),
                execution_time_b_s: time(Side::B),
                execution_time_ratio: rows.iter().find(|r| r.is_time).and_then(DiffRow::ratio),
                counters: rows
                    .into_iter()
                    .filter(|r| !r.is_time)
                    .map(|r| CounterJson {
                        delta: r.delta(),
                        ratio: r.ratio(),
                        name: r.name,
                        a: r.a,
                        b: r.b,
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(serde_json::json!({
        "run_id": run.run,
        "name": run.name,
        "status": run.status,
        "workload": run.workload,
        "a": side(&run.a),
        "b": side(&run.b),
        "filter": filter.map(Filter::text),
        "pairs_total": total,
        "pairs": pairs,
    }))
}

/// perfrun's report: an item per query and cache temperature, the seed's Query / Cache
/// comparison of two sides, which also is the whole run of `dbrig perfrun`.
pub struct PerfrunKind;

/// Execution time per query and temperature (truncated to milliseconds, as the seed).
pub fn perfrun_items(p: &PerfrunResult) -> Vec<Item> {
    let mut out = Vec::new();
    for q in &p.queries {
        for t in Temperature::ALL {
            let e = q.execution(t);
            let value = e.execution_time_s().filter(|_| e.error.is_none());
            out.push(Item::new(format!("{} {t}", q.file), SECONDS, value));
        }
    }
    out
}

impl KindReport for PerfrunKind {
    fn kind(&self) -> ResultKind {
        ResultKind::Perfrun
    }

    fn title(&self) -> &'static str {
        "perfrun"
    }

    fn items(&self, result: &TrialResult) -> Vec<Item> {
        match result {
            TrialResult::Perfrun(p) => perfrun_items(p),
            _ => Vec::new(),
        }
    }

    fn single_text(
        &self,
        store: &Store,
        cell: &CellRow,
        _trial: &TrialRow,
        _connects: &str,
    ) -> Result<Option<String>, ReportError> {
        self.whole_run(store, cell.run_id, None, SingleFormat::Text)
            .transpose()
    }

    fn whole_run(
        &self,
        store: &Store,
        run: RunId,
        filter: Option<&str>,
        format: SingleFormat,
    ) -> Option<Result<String, ReportError>> {
        Some((|| {
            let p = PerfRun::load(store, run)?;
            let f = p.filter(filter)?;
            match format {
                SingleFormat::Text => perfrun_text(&p, f.as_ref()),
                SingleFormat::Json => Ok(crate::figures::json_text(&perfrun_json(&p, f.as_ref())?)),
            }
        })())
    }

    fn whole_run_json(
        &self,
        store: &Store,
        run: RunId,
    ) -> Option<Result<serde_json::Value, ReportError>> {
        Some((|| {
            let p = PerfRun::load(store, run)?;
            perfrun_json(&p, p.filter(None)?.as_ref())
        })())
    }

    fn section(
        &self,
        data: &ReportData,
        _workloads: &[String],
    ) -> Result<Vec<SectionBlock>, ReportError> {
        let mut out = Vec::new();
        for run in PerfRun::all(data) {
            let filter = run.filter(data.perfrun_filter.as_deref())?;
            out.push((
                Some(run.workload.clone()),
                Block::Text {
                    title: format!(
                        "{}: {} vs {} (baseline)",
                        run.workload, run.b.configuration, run.a.configuration
                    ),
                    body: perfrun_text(&run, filter.as_ref())?,
                },
            ));
        }
        Ok(out)
    }

    fn os_chart(&self) -> bool {
        false
    }

    /// The perfrun comparisons with their filter.
    fn json(&self, data: &ReportData, out: &mut serde_json::Value) -> Result<(), ReportError> {
        let perfruns = PerfRun::all(data)
            .iter()
            .map(|r| perfrun_json(r, r.filter(data.perfrun_filter.as_deref())?.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        if !perfruns.is_empty() {
            out["perfrun"] = serde_json::Value::Array(perfruns);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sides() -> Sides {
        Sides {
            a: SideInfo {
                target: "mysql://root@h:3306/a".into(),
                version: "10.11.6-MariaDB".into(),
                dialect: "mysql".into(),
                counters: vec![
                    "Handler_read_rnd".into(),
                    "Handler_read_next".into(),
                    "Innodb_rows_read".into(),
                ],
            },
            b: SideInfo {
                target: "mysql://root@h:3306/b".into(),
                version: "10.6.1-MariaDB".into(),
                dialect: "mysql".into(),
                counters: vec![
                    "Handler_read_rnd".into(),
                    "Handler_read_next".into(),
                    "Innodb_rows_read".into(),
                ],
            },
        }
    }

    fn rec(us: u64, counters: &[(&str, f64)]) -> Execution {
        Execution {
            time_us: Some(us),
            rows: Some(3),
            checksum: Some("1".into()),
            checksum_unordered: Some("u1".into()),
            counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Execution::default()
        }
    }

    fn pair<'a>(t: Temperature, a: &'a Execution, b: &'a Execution) -> Pair<'a> {
        Pair {
            file: "q1.sql",
            sql: "SELECT  l_linenumber\nFROM lineitem",
            temperature: t,
            a: Some(a),
            b: Some(b),
        }
    }

    #[test]
    fn words_are_translated_and_names_respelled() {
        let names = Names::new(&sides());
        let f = Filter::parse(
            r#"(execution_time_a > 0.1 or $Execution_time_b > 0.1) and temperature == 'warm' and not handler_read_rnd_a eq 0"#,
            Some(&names),
        )
        .unwrap();
        assert_eq!(
            f.translated(),
            r#"( execution_time_a > 0.1 || execution_time_b > 0.1 ) && temperature == "warm" && ! Handler_read_rnd_a == 0.0"#
        );
    }

    #[test]
    fn filter_evaluates_over_a_pair() {
        let names = Names::new(&sides());
        let a = rec(11_400, &[("Handler_read_rnd", 583.0)]);
        let b = rec(4_900, &[]);
        let p = pair(Temperature::Warm, &a, &b);
        let yes = |s: &str| {
            Filter::parse(s, Some(&names))
                .unwrap()
                .matches(&p, &names)
                .unwrap()
        };
        assert!(yes(
            r#"(execution_time_a > 0.01 or execution_time_b > 0.01) and temperature == "warm""#
        ));
        assert!(!yes(r#"temperature == "cold""#));
        assert!(yes(
            "Handler_read_rnd_b == 0 and Handler_read_rnd_delta == -583"
        ));
        assert!(yes(
            "execution_time_a == 0.011 and execution_time_ratio < 0.4"
        ));
        assert!(yes("Handler_read_next_ratio == 1"));
        assert!(yes(r#"query != "x" and file == "q1.sql""#));
    }

    #[test]
    fn syntax_errors_point_at_the_token() {
        let names = Names::new(&sides());
        let e = Filter::parse(
            "(execution_time_a > 0.1 or ) and temperature == 1",
            Some(&names),
        )
        .unwrap_err();
        match &e {
            ReportError::FilterSyntax { column, .. } => assert_eq!(*column, 28, "{e}"),
            other => panic!("{other:?}"),
        }
        let text = e.to_string();
        assert!(text.contains("column 28"), "{text}");
        assert!(
            text.ends_with("\n  (execution_time_a > 0.1 or ) and temperature == 1\n                             ^"),
            "{text}"
        );
        for (bad, col) in [
            ("execution_time_a > > 1", 20),
            ("execution_time_a = 1", 18),
            ("(execution_time_a > 1", 1),
            ("execution_time_a > 1)", 21),
            ("temperature == \"warm", 16),
            ("execution_time_a 1", 18),
            ("execution_time_a >", 19),
        ] {
            match Filter::parse(bad, Some(&names)) {
                Err(ReportError::FilterSyntax { column, .. }) => assert_eq!(column, col, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        // Syntax alone needs no names.
        assert!(Filter::parse("whatever_a > 1 and temperature == 'warm'", None).is_ok());
        assert!(Filter::parse("whatever_a > > 1", None).is_err());
    }

    #[test]
    fn unknown_names_are_named_with_suggestions() {
        let names = Names::new(&sides());
        let e = Filter::parse("Handler_reed_rnd_a > 0", Some(&names)).unwrap_err();
        let ReportError::FilterUnknownName {
            name,
            suggestions,
            column,
            ..
        } = &e
        else {
            panic!("{e:?}")
        };
        assert_eq!(name, "Handler_reed_rnd_a");
        assert_eq!(*column, 1);
        assert_eq!(suggestions[0], "Handler_read_rnd_a");
        assert!(
            e.to_string().contains("did you mean Handler_read_rnd_a"),
            "{e}"
        );
        let e = Filter::parse("Handler_read_rnd > 0", Some(&names)).unwrap_err();
        assert!(e.to_string().contains("Handler_read_rnd_delta"), "{e}");
    }

    #[test]
    fn type_errors_show_before_running() {
        let names = Names::new(&sides());
        let f = Filter::parse("temperature > 1", Some(&names)).unwrap();
        assert!(f.check(&names).is_err());
        let f = Filter::parse("execution_time_a + 1", Some(&names)).unwrap();
        assert!(
            f.check(&names)
                .unwrap_err()
                .to_string()
                .contains("true or false")
        );
    }

    #[test]
    fn only_differing_counters_are_reported() {
        let names = Names::new(&sides());
        let a = rec(
            11_400,
            &[
                ("Handler_read_rnd", 583.0),
                ("Handler_read_next", 583.0),
                ("Innodb_rows_read", 1166.0),
            ],
        );
        let b = rec(
            4_200,
            &[("Handler_read_next", 602.0), ("Innodb_rows_read", 1166.0)],
        );
        let p = pair(Temperature::Warm, &a, &b);
        let rows = diff_rows(&p, &names);
        let names_shown: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names_shown,
            ["Execution time", "Handler_read_next", "Handler_read_rnd"]
        );
        assert_eq!(rows[2].b, Some(0.0));
        let text = pair_text(&p, &sides(), &names);
        let expected = "\
Query: SELECT l_linenumber FROM lineitem (q1.sql)
Cache: warm
                                 10.11.6-MariaDB   10.6.1-MariaDB      Delta    Ratio
-------------------------------------------------------------------------------------
Execution time                            0.011s           0.004s    -0.007s     0.36
Handler_read_next                            583              602         19     1.03
Handler_read_rnd                             583                0       -583
";
        assert_eq!(text, expected, "\n{text}");
    }

    /// The seed's own filter names and Perl match operators: `Execution_time1` is side a,
    /// `Innodb_rows_read2` side b; `$Query =~ m{…}` / `!~` match the query's text.
    #[test]
    fn seed_names_and_regular_expression_matches() {
        let names = Names::new(&sides());
        let a = rec(300_000, &[("Handler_read_rnd", 5.0)]);
        let b = rec(50_000, &[("Handler_read_rnd", 9.0)]);
        let p = pair(Temperature::Warm, &a, &b);
        let yes = |f: &str| {
            Filter::parse(f, Some(&names))
                .unwrap_or_else(|e| panic!("{f}: {e}"))
                .matches(&p, &names)
                .unwrap()
        };
        assert!(yes("Execution_time1 > 0.1 and Execution_time2 < 0.1"));
        assert!(yes("$Handler_read_rnd2 == 9 and Handler_read_rnd1 == 5"));
        assert!(yes("$Query =~ m{l_linenumber}"));
        assert!(!yes("$Query !~ m{l_linenumber}"));
        assert!(yes("$Query !~ m{l_receiptDATE}"));
        assert!(yes(
            "$Query =~ m{FROM\\s+LINEITEM}i && $Temperature eq 'warm'"
        ));
        assert!(yes(
            "(query =~ /lineitem/ or file =~ m(q9)) and not temperature =~ 'cold'"
        ));
        // A number cannot be matched; a bad pattern is said where it is.
        let e = Filter::parse("Execution_time1 =~ m{1}", Some(&names)).unwrap_err();
        assert!(e.to_string().contains("match text"), "{e}");
        let e = Filter::parse("$Query =~ m{(}", Some(&names)).unwrap_err();
        assert!(e.to_string().contains("bad regular expression"), "{e}");
        let e = Filter::parse("$Query =~ 3", Some(&names)).unwrap_err();
        assert!(e.to_string().contains("needs a pattern"), "{e}");
        // Syntax only (before the servers are reached).
        assert!(Filter::parse("$Query !~ m{x} and Execution_time1 > 1", None).is_ok());
    }

    /// What `evalexpr` parses but a filter may not hold is a variant each, said as before.
    #[test]
    fn unfit_filter_trees_are_typed() {
        assert!(matches!(build("x x"), Err(Unfit::MissingOperator)));
        let e = build("x = 1").unwrap_err();
        assert!(
            matches!(e, Unfit::NotAllowed(evalexpr::Operator::Assign)),
            "{e:?}"
        );
        // evalexpr's own spelling of the operator, as the message always had it.
        assert_eq!(e.to_string(), " =  is not allowed in a filter");
        let e = build("x +").unwrap_err();
        assert!(matches!(e, Unfit::Operands { want: 2, .. }), "{e:?}");
        let e = build("x )").unwrap_err();
        assert!(matches!(e, Unfit::Parse(_)), "{e:?}");
        assert!(build("x > 1 && !(x < 3)").is_ok());
    }

    /// A filter that does not split into tokens: a variant per fault at the byte it starts
    /// at, said as before (with its column) by `Filter::parse`.
    #[test]
    fn lexing_faults_are_typed() {
        let fault = |f: &str| lex(f).map(|_| ()).unwrap_err();
        assert_eq!(fault("a == 'x"), (5, LexError::UnclosedString));
        assert_eq!(fault("a == 1..2"), (5, LexError::NotANumber("1..2".into())));
        assert_eq!(fault("$ > 1"), (0, LexError::NoName));
        assert_eq!(fault("a > 1)"), (5, LexError::UnmatchedClose));
        assert_eq!(fault("(a > 1"), (0, LexError::UnclosedOpen));
        assert_eq!(fault("=~ /x/"), (0, LexError::MatchWithoutName("=~")));
        assert_eq!(fault("q !~ 3"), (2, LexError::MatchWithoutPattern("!~")));
        assert_eq!(fault("a = 1"), (2, LexError::SingleEquals));
        assert_eq!(fault("a > 1 ; b"), (6, LexError::Unexpected(';')));
        let e = Filter::parse("q !~ 3", None).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "filter does not parse at column 3: !~ needs a pattern after it: m{…} or /…/\n"
            ),
            "{e}"
        );
    }

    #[test]
    fn differing_results_and_errors_are_not_compared() {
        let names = Names::new(&sides());
        let a = rec(1000, &[]);
        let mut b = rec(1000, &[]);
        b.rows = Some(2);
        b.checksum_unordered = Some("u2".into());
        let text = pair_text(&pair(Temperature::Cold, &a, &b), &sides(), &names);
        assert!(
            text.contains("results differ: not compared (a: 3 rows, b: 2 rows)"),
            "{text}"
        );
        // With the results kept, they are compared by value, and a difference is said.
        let mut a2 = a.clone();
        let mut b2 = b.clone();
        a2.answer = Some(dbrig_core::answers::normalize(&[
            vec![dbrig_core::Value::Text("0.0500".into())],
            vec![dbrig_core::Value::Int(7)],
        ]));
        b2.rows = Some(2);
        b2.answer = Some(dbrig_core::answers::normalize(&[
            vec![dbrig_core::Value::Int(7)],
            vec![dbrig_core::Value::Float(0.05)],
        ]));
        a2.rows = Some(2);
        assert_eq!(
            pair(Temperature::Cold, &a2, &b2).outcome(),
            PairOutcome::Compared
        );
        b2.answer = Some(dbrig_core::answers::normalize(&[
            vec![dbrig_core::Value::Int(7)],
            vec![dbrig_core::Value::Float(0.07)],
        ]));
        let text = pair_text(&pair(Temperature::Cold, &a2, &b2), &sides(), &names);
        assert!(
            text.contains(
                "results differ: not compared (a: 2 rows, b: 2 rows): row 1: 0.05 against 0.07 (rows compared sorted)"
            ),
            "{text}"
        );
        let mut b = rec(1000, &[]);
        b.error = Some("Table 'b.t' doesn't exist".into());
        let p = pair(Temperature::Warm, &a, &b);
        assert!(p.has_error());
        let text = pair_text(&p, &sides(), &names);
        assert!(
            text.contains("error on b: Table 'b.t' doesn't exist"),
            "{text}"
        );
        // A failed side's values are NaN: comparisons are false, not errors.
        let f = Filter::parse("execution_time_b >= 0", Some(&names)).unwrap();
        assert!(!f.matches(&p, &names).unwrap());
    }

    #[test]
    fn same_versions_get_marked_heads() {
        let mut s = sides();
        s.b.version = s.a.version.clone();
        assert_eq!(
            column_heads(&s),
            (
                "10.11.6-MariaDB (a)".to_owned(),
                "10.11.6-MariaDB (b)".to_owned()
            )
        );
    }

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
