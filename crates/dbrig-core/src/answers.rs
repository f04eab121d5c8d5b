//! Result comparison as the TPC-H answer checker does it, shared by the TPC-H checks and
//! perfrun: values typed and normalised (numbers rounded to 2 decimals, strings trimmed),
//! numbers equal within a cent, rows in order where the query's ORDER BY fixes it and as a
//! multiset otherwise; a difference is said (which row, which values).

use serde::{Deserialize, Serialize};

use crate::Value;

/// A normalised value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Normalized {
    Null,
    /// Rounded to 2 decimals.
    Num(f64),
    Text(String),
}

impl Normalized {
    /// A value read as text: a number when it parses as one (rounded), else trimmed text.
    pub fn from_text(s: &str) -> Normalized {
        let t = s.trim();
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() && !t.is_empty() => Normalized::Num(round2(x)),
            _ => Normalized::Text(t.to_owned()),
        }
    }
}

impl std::fmt::Display for Normalized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Normalized::Null => f.write_str("NULL"),
            Normalized::Num(x) => write!(f, "{x:.2}"),
            Normalized::Text(s) => f.write_str(s),
        }
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Normalise a result: every value rounded/trimmed, row order kept.
pub fn normalize(rows: &[Vec<Value>]) -> Vec<Vec<Normalized>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Null => Normalized::Null,
                    Value::Int(i) => Normalized::Num(*i as f64),
                    Value::Float(x) => Normalized::Num(round2(*x)),
                    Value::Text(s) => Normalized::from_text(s),
                })
                .collect()
        })
        .collect()
}

/// Two normalised values are the same if equal, or numbers within a cent (floating-point sums
/// on one engine against exact decimals on another may round the last digit differently).
fn same_value(a: &Normalized, b: &Normalized) -> bool {
    match (a, b) {
        (Normalized::Num(x), Normalized::Num(y)) => {
            (x - y).abs() <= 0.010_000_1 + 1e-12 * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

/// Compare two normalised results row by row in order; `None` when the same, else the first
/// difference.
pub fn compare_results(a: &[Vec<Normalized>], b: &[Vec<Normalized>]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} rows against {}", a.len(), b.len()));
    }
    for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
        if ra.len() != rb.len() || !ra.iter().zip(rb).all(|(x, y)| same_value(x, y)) {
            let show = |r: &[Normalized]| {
                r.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("|")
            };
            return Some(format!("row {}: {} against {}", i + 1, show(ra), show(rb)));
        }
    }
    None
}

/// Compare two results of one query: in order when `ordered` (the query's ORDER BY fixes the
/// order), else as multisets of rows (each side sorted first). `None` when the same, else the
/// first difference.
pub fn compare_answers(
    a: &[Vec<Normalized>],
    b: &[Vec<Normalized>],
    ordered: bool,
) -> Option<String> {
    if ordered {
        return compare_results(a, b);
    }
    let sorted = |rows: &[Vec<Normalized>]| {
        let mut rows = rows.to_vec();
        rows.sort_by(|x, y| cmp_rows(x, y));
        rows
    };
    compare_results(&sorted(a), &sorted(b)).map(|d| format!("{d} (rows compared sorted)"))
}

fn cmp_rows(a: &[Normalized], b: &[Normalized]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |v: &Normalized| match v {
        Normalized::Null => 0,
        Normalized::Num(_) => 1,
        Normalized::Text(_) => 2,
    };
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Normalized::Num(p), Normalized::Num(q)) => p.total_cmp(q),
            (Normalized::Text(p), Normalized::Text(q)) => p.cmp(q),
            _ => rank(x).cmp(&rank(y)),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Whether a query's outermost ORDER BY fixes its rows' order (a text search: ORDER BY
/// outside parentheses, after the last top-level statement separator).
pub fn orders_rows(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    let mut depth = 0i32;
    let mut quote = false;
    let bytes = upper.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'\'' => quote = !quote,
            b'(' if !quote => depth += 1,
            b')' if !quote => depth -= 1,
            b'O' if !quote && depth == 0 && upper[i..].starts_with("ORDER") => {
                let rest = upper[i + 5..].trim_start();
                if rest.starts_with("BY") {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_comparison_with_a_cent_of_tolerance_and_order_only_where_fixed() {
        // MariaDB's DECIMAL text against PostgreSQL's NUMERIC with more digits, CHAR padding.
        let a = normalize(&[
            vec![Value::Text("A ".into()), Value::Text("0.0500".into())],
            vec![Value::Text("B".into()), Value::Int(3)],
        ]);
        let b = normalize(&[
            vec![Value::Text("B".into()), Value::Text("3.000000".into())],
            vec![Value::Text("A".into()), Value::Float(0.049_999_9)],
        ]);
        assert_eq!(compare_answers(&a, &b, false), None);
        let d = compare_answers(&a, &b, true).unwrap();
        assert_eq!(d, "row 1: A|0.05 against B|3.00");
        let c = normalize(&[vec![Value::Text("A".into()), Value::Text("0.08".into())]]);
        assert_eq!(
            compare_answers(&a[..1], &c, false).unwrap(),
            "row 1: A|0.05 against A|0.08 (rows compared sorted)"
        );
    }

    #[test]
    fn order_by_is_found_outside_subqueries_only() {
        assert!(orders_rows("select a from t order by a"));
        assert!(orders_rows("SELECT a FROM t ORDER\n  BY a LIMIT 3"));
        assert!(!orders_rows("select * from (select a from t order by a) x"));
        assert!(!orders_rows("select 'order by' from t"));
        assert!(!orders_rows("select a from t"));
    }
}
