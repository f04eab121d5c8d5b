//! Query sets: the 22 built-in TPC-H queries (per dialect) or a user's folder of `.sql` files.

use std::path::Path;

use dbrig_driver::Dialect;

use super::error::TpchError;
use crate::sql::SqlSet;

/// TPC-H stream 0 (the power test) runs the queries in this order.
pub const STREAM0_ORDER: [u32; 22] = [
    14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12,
];

/// One query: a name, the TPC-H query number whose parameters it takes (if any), and its
/// template (one or more statements separated by `;`).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub name: String,
    pub number: Option<u32>,
    pub template: String,
}

/// An ordered set of queries.
#[derive(Debug, Clone)]
pub struct QuerySet {
    pub queries: Vec<Query>,
}

const TEMPLATES: &str = include_str!("sql/queries.sql");

fn builtin_sql(dialect: Dialect) -> SqlSet {
    let specific = match dialect {
        Dialect::Mysql => include_str!("sql/queries_mysql.sql"),
        Dialect::Postgres => "",
        Dialect::Sqlite => include_str!("sql/queries_sqlite.sql"),
    };
    SqlSet::new(dialect, TEMPLATES, specific)
}

/// The leading number of a query file name (`2-opt` → 2), if it is a TPC-H query number.
fn leading_number(stem: &str) -> Option<u32> {
    let digits: String = stem.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| (1..=22).contains(n))
}

/// Where a query comes in a power run: its place in stream 0, then unnumbered by name.
fn stream0_rank(q: &Query) -> (usize, String) {
    let pos = q
        .number
        .and_then(|n| STREAM0_ORDER.iter().position(|&x| x == n))
        .unwrap_or(STREAM0_ORDER.len());
    (pos, q.name.clone())
}

impl QuerySet {
    /// The 22 TPC-H queries for a dialect, in stream-0 order.
    pub fn builtin(dialect: Dialect) -> Self {
        let sql = builtin_sql(dialect);
        let queries = STREAM0_ORDER
            .iter()
            .map(|&n| Query {
                name: n.to_string(),
                number: Some(n),
                template: sql.template(&format!("q{n}")).to_owned(),
            })
            .collect();
        Self { queries }
    }

    /// A folder of `.sql` files, one query per file, named by the file stem. Files whose name
    /// starts with a TPC-H query number (`2.sql`, `17-opt1.sql`) get that query's parameters
    /// and its place in stream-0 order; the others follow by name.
    pub fn from_dir(dir: &Path) -> Result<Self, TpchError> {
        let folder = |cause| TpchError::ReadQueryFolder {
            dir: dir.to_owned(),
            cause,
        };
        let entries = std::fs::read_dir(dir).map_err(folder)?;
        let mut queries = Vec::new();
        for entry in entries {
            let path = entry.map_err(folder)?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("sql") || !path.is_file() {
                continue;
            }
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            let template =
                std::fs::read_to_string(&path).map_err(|cause| TpchError::ReadQueryFile {
                    path: path.clone(),
                    cause,
                })?;
            queries.push(Query {
                number: leading_number(&name),
                name,
                template,
            });
        }
        if queries.is_empty() {
            return Err(TpchError::EmptyQueryFolder(dir.to_owned()));
        }
        queries.sort_by_key(stream0_rank);
        Ok(Self { queries })
    }

    pub fn get(&self, name: &str) -> Option<&Query> {
        self.queries.iter().find(|q| q.name == name)
    }
}

/// Split SQL text into statements at `;` outside quotes and comments; empty statements and
/// comment-only statements are dropped.
pub fn split_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '-' if chars.peek() == Some(&'-') => {
                    // A line comment: skip to the end of the line.
                    for c in chars.by_ref() {
                        if c == '\n' {
                            cur.push('\n');
                            break;
                        }
                    }
                }
                ';' => out.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            },
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether a statement returns rows (SELECT / WITH / VALUES / TABLE).
pub fn returns_rows(statement: &str) -> bool {
    let first = statement
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    matches!(first.as_str(), "select" | "with" | "values" | "table")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalize_ws(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// queries.sql is tpchgen's templates, changed only as its header says.
    #[test]
    fn templates_are_tpchgens() {
        let sql = builtin_sql(Dialect::Postgres);
        for n in 1..=22 {
            let ours = normalize_ws(sql.template(&format!("q{n}")));
            let theirs = tpchgen::q_and_a::queries::query(n).unwrap();
            let mut theirs = normalize_ws(theirs.trim().trim_end_matches(';'));
            if n == 1 {
                theirs = theirs.replace("day (3)", "day");
            }
            let limit = match n {
                2 | 18 | 21 => " limit 100",
                3 => " limit 10",
                10 => " limit 20",
                _ => "",
            };
            assert_eq!(ours, format!("{theirs}{limit}"), "Q{n}");
        }
    }

    #[test]
    fn every_dialect_has_22_queries_in_stream0_order() {
        for d in [Dialect::Mysql, Dialect::Postgres, Dialect::Sqlite] {
            let set = QuerySet::builtin(d);
            assert_eq!(set.queries.len(), 22);
            assert_eq!(set.queries[0].name, "14");
            assert_eq!(
                set.get("15").map(|q| split_statements(&q.template).len()),
                Some(3)
            );
        }
        let sqlite = QuerySet::builtin(Dialect::Sqlite);
        assert!(
            sqlite
                .get("1")
                .unwrap()
                .template
                .contains("date('1998-12-01'")
        );
    }

    #[test]
    fn statements_split_outside_quotes() {
        assert_eq!(
            split_statements("select ';' from t; -- a; comment\ndrop view v;\n"),
            vec!["select ';' from t", "drop view v"]
        );
        assert!(returns_rows(" (select 1)"));
        assert!(!returns_rows("create view v as select 1"));
        assert_eq!(leading_number("17-opt1"), Some(17));
        assert_eq!(leading_number("x"), None);
    }
}
