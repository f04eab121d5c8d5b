//! Inlining bind values as SQL literals, for `--ps-mode=disable` (plain text queries, as
//! sysbench sends them without prepared statements). Only values the driver renders itself
//! reach the SQL text: ints and floats via Rust formatting, text quoted and escaped.

use dbrig_core::Value;

use crate::Dialect;

/// Replace the placeholders of `sql` (`?` for MySQL/SQLite, `$n` for PostgreSQL) with
/// literals. Placeholders inside quoted strings are left alone.
pub(crate) fn inline_params(dialect: Dialect, sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut chars = sql.char_indices().peekable();
    let mut next_positional = 0usize;
    let mut quote: Option<char> = None;
    while let Some((_, c)) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                out.push(c);
            }
            '?' if dialect != Dialect::Postgres => {
                push_literal(dialect, params.get(next_positional), &mut out);
                next_positional += 1;
            }
            '$' if dialect == Dialect::Postgres => {
                let mut digits = String::new();
                while let Some((_, d)) = chars.peek().copied().filter(|(_, d)| d.is_ascii_digit()) {
                    digits.push(d);
                    chars.next();
                }
                match digits.parse::<usize>() {
                    Ok(n) if n >= 1 => push_literal(dialect, params.get(n - 1), &mut out),
                    _ => {
                        out.push('$');
                        out.push_str(&digits);
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn push_literal(dialect: Dialect, v: Option<&Value>, out: &mut String) {
    use std::fmt::Write;
    match v {
        None | Some(Value::Null) => out.push_str("NULL"),
        Some(Value::Int(n)) => {
            let _ = write!(out, "{n}");
        }
        Some(Value::Float(x)) => {
            let _ = write!(out, "{x:?}");
        }
        Some(Value::Text(s)) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("''"),
                    // MySQL treats backslash as an escape in string literals (unless
                    // NO_BACKSLASH_ESCAPES); doubling it is right in that mode and harmless
                    // to reject nothing else.
                    '\\' if dialect == Dialect::Mysql => out.push_str("\\\\"),
                    '\0' => {}
                    _ => out.push(c),
                }
            }
            out.push('\'');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlines_positional_and_numbered() {
        let p = [Value::Int(7), Value::Text("it's".into())];
        assert_eq!(
            inline_params(
                Dialect::Mysql,
                "SELECT c FROM t WHERE id=? AND c=? AND x='?'",
                &p
            ),
            "SELECT c FROM t WHERE id=7 AND c='it''s' AND x='?'"
        );
        assert_eq!(
            inline_params(Dialect::Postgres, "UPDATE t SET c=$2 WHERE id=$1", &p),
            "UPDATE t SET c='it''s' WHERE id=7"
        );
        assert_eq!(
            inline_params(Dialect::Mysql, "SELECT ?", &[Value::Text("a\\b".into())]),
            "SELECT 'a\\\\b'"
        );
    }
}
