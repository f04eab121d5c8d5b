//! Bulk loads: rows streamed into a table through the engine's fastest path.

use dbrig_core::Value;

/// Rows to append to an existing table. The rows are produced lazily, so a load of any size
/// streams through a fixed amount of memory.
pub struct BulkLoad {
    pub table: String,
    pub columns: Vec<String>,
    pub rows: Box<dyn Iterator<Item = Vec<Value>> + Send>,
}

impl std::fmt::Debug for BulkLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkLoad")
            .field("table", &self.table)
            .field("columns", &self.columns)
            .finish()
    }
}

/// Encode one row in the tab-separated text format that both MySQL's `LOAD DATA` (default
/// FIELDS/LINES settings) and PostgreSQL's `COPY … FROM STDIN` (text format) read: tab between
/// fields, newline after the row, `\N` for NULL, backslash escapes for tab, newline, CR and
/// backslash.
pub(crate) fn encode_tsv_row(row: &[Value], out: &mut Vec<u8>) {
    use std::io::Write;
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        match v {
            Value::Null => out.extend_from_slice(b"\\N"),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) => {
                let _ = write!(out, "{x}");
            }
            Value::Text(s) => {
                for &b in s.as_bytes() {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        _ => out.push(b),
                    }
                }
            }
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_escapes_what_both_loaders_need() {
        let mut out = Vec::new();
        encode_tsv_row(
            &[
                Value::Int(-3),
                Value::Null,
                Value::Text("a\tb\\c\nd".into()),
            ],
            &mut out,
        );
        assert_eq!(out, b"-3\t\\N\ta\\tb\\\\c\\nd\n");
    }
}
