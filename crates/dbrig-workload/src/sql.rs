//! SQL kept as data: `.sql` files with `-- name: NAME` sections, loaded at compile time and
//! rendered in one place (identifier slots filled, placeholders numbered per dialect).

use std::collections::HashMap;
use std::sync::OnceLock;

use dbrig_driver::Dialect;

/// Named SQL sections of one dialect (dialect file over the shared file).
#[derive(Debug)]
pub struct SqlSet {
    dialect: Dialect,
    sections: HashMap<String, String>,
}

impl SqlSet {
    /// Build from the shared file and the dialect's own file; the dialect's sections win.
    pub fn new(dialect: Dialect, common: &str, specific: &str) -> Self {
        let mut sections = parse_sections(common);
        sections.extend(parse_sections(specific));
        Self { dialect, sections }
    }

    /// The raw template of a section; a missing section is a bug in the shipped SQL files.
    pub fn template(&self, name: &str) -> &str {
        self.sections
            .get(name)
            .unwrap_or_else(|| panic!("SQL section '{name}' missing for {}", self.dialect.name()))
    }

    pub fn has(&self, name: &str) -> bool {
        self.sections.contains_key(name)
    }

    /// Render a section: `{var}` slots replaced (values must be validated identifiers or SQL
    /// fragments dbrig built itself, never user data), then `?` numbered for PostgreSQL.
    pub fn render(&self, name: &str, vars: &[(&str, &str)]) -> String {
        let mut sql = self.template(name).to_owned();
        for (k, v) in vars {
            sql = sql.replace(&format!("{{{k}}}"), v);
        }
        number_placeholders(self.dialect, &sql)
    }
}

/// The SQL files of one workload family (a shared file and one per dialect), each dialect's
/// set parsed on first use. A module keeps one in a `static`.
#[derive(Debug)]
pub struct DialectSql {
    common: &'static str,
    files: [&'static str; 3],
    sets: [OnceLock<SqlSet>; 3],
}

impl DialectSql {
    pub const fn new(
        common: &'static str,
        mysql: &'static str,
        postgres: &'static str,
        sqlite: &'static str,
    ) -> Self {
        Self {
            common,
            files: [mysql, postgres, sqlite],
            sets: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        }
    }

    pub fn get(&self, dialect: Dialect) -> &SqlSet {
        let i = match dialect {
            Dialect::Mysql => 0,
            Dialect::Postgres => 1,
            Dialect::Sqlite => 2,
        };
        self.sets[i].get_or_init(|| SqlSet::new(dialect, self.common, self.files[i]))
    }
}

fn parse_sections(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("-- name:") {
            if let Some((n, body)) = current.take() {
                out.insert(n, body.trim().to_owned());
            }
            current = Some((name.trim().to_owned(), String::new()));
        } else if let Some((_, body)) = current.as_mut()
            && !line.trim_start().starts_with("--")
        {
            body.push_str(line);
            body.push('\n');
        }
    }
    if let Some((n, body)) = current {
        out.insert(n, body.trim().to_owned());
    }
    out
}

/// `?` → `$1, $2…` for PostgreSQL (outside quoted strings); unchanged for the others.
fn number_placeholders(dialect: Dialect, sql: &str) -> String {
    if dialect != Dialect::Postgres {
        return sql.to_owned();
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            (None, c) => out.push(c),
        }
    }
    out
}

/// A table or index name built by dbrig from a fixed prefix and a number: the only kind of
/// identifier that reaches SQL text.
pub fn is_valid_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_render_and_number() {
        let set = SqlSet::new(
            Dialect::Postgres,
            "-- name: a\n-- a comment\nSELECT c FROM {table}\nWHERE id=? AND c='?'\n-- name: b\nX",
            "-- name: b\nY {points}",
        );
        assert_eq!(
            set.render("a", &[("table", "sbtest1")]),
            "SELECT c FROM sbtest1\nWHERE id=$1 AND c='?'"
        );
        assert_eq!(set.render("b", &[("points", "?, ?")]), "Y $1, $2");
        assert!(is_valid_identifier("sbtest12"));
        assert!(!is_valid_identifier("x; DROP"));
    }
}
