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

/// Rows already encoded in the bulk text format of [`encode_bulk_row`], in chunks that each end
/// on a row boundary. For a producer that can write the text directly (TPC-H's generators), this
/// skips building a [`Value`] per field, which is most of a loader's client CPU.
pub struct BulkText {
    pub table: String,
    pub columns: Vec<String>,
    pub chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>,
    /// The table was created or emptied in the transaction the connection has open, so
    /// PostgreSQL may write the rows already frozen (`COPY … WITH (FREEZE)`, as `pgbench -i`
    /// does): the pages are all-visible at once, and the VACUUM after the load has nothing to
    /// rewrite. Other engines ignore it.
    pub frozen: bool,
}

impl std::fmt::Debug for BulkText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkText")
            .field("table", &self.table)
            .field("columns", &self.columns)
            .finish()
    }
}

/// Rows already encoded as the tuples of PostgreSQL's binary `COPY` format (each tuple: a
/// big-endian 16-bit field count, then per field a 32-bit length, -1 for NULL, and the
/// type's binary form), in chunks that each end on a tuple boundary; the driver sends the
/// format's header and trailer. PostgreSQL only
/// ([`crate::Connection::bulk_load_pg_binary`]): for a producer whose fields are cheaper to
/// write in binary than as text (integers), which the server also reads with less work.
pub struct PgBinaryRows {
    pub table: String,
    pub columns: Vec<String>,
    pub chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>,
    /// As [`BulkText::frozen`].
    pub frozen: bool,
}

impl std::fmt::Debug for PgBinaryRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBinaryRows")
            .field("table", &self.table)
            .field("columns", &self.columns)
            .finish()
    }
}

/// The binary COPY header: signature, flags (no OIDs), no extension area.
pub(crate) const PG_BINARY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The binary COPY trailer: a field count of -1.
pub(crate) const PG_BINARY_TRAILER: &[u8] = &[0xff, 0xff];

/// Size of the pieces rows are encoded into: large enough that per-chunk overhead vanishes,
/// small enough that a load of any size streams through a bounded buffer.
pub(crate) const CHUNK: usize = 1 << 20;

impl BulkLoad {
    /// The same load as bulk text, encoded lazily chunk by chunk.
    pub(crate) fn into_text(self) -> BulkText {
        let mut rows = self.rows;
        BulkText {
            table: self.table,
            columns: self.columns,
            frozen: false,
            chunks: Box::new(std::iter::from_fn(move || {
                let mut buf = Vec::with_capacity(CHUNK + 4096);
                while buf.len() < CHUNK {
                    match rows.next() {
                        Some(row) => encode_bulk_row(&row, &mut buf),
                        None => break,
                    }
                }
                (!buf.is_empty()).then_some(buf)
            })),
        }
    }
}

impl BulkText {
    /// The rows back as values (every field text, `\N` as NULL), for the engines without a
    /// text bulk path (SQLite, the mock, MySQL without LOCAL INFILE).
    pub(crate) fn into_rows(self) -> Box<dyn Iterator<Item = Vec<Value>> + Send> {
        Box::new(self.chunks.flat_map(|chunk| {
            let body = chunk.strip_suffix(b"\n").unwrap_or(&chunk);
            if body.is_empty() && chunk.is_empty() {
                return Vec::new();
            }
            body.split(|&b| b == b'\n')
                .map(decode_bulk_row)
                .collect::<Vec<_>>()
        }))
    }
}

/// Rows in a chunk of bulk text (every row ends with a newline; escaped newlines are `\n`).
pub(crate) fn count_rows(chunk: &[u8]) -> u64 {
    chunk.iter().filter(|&&b| b == b'\n').count() as u64
}

/// One line of bulk text (without its newline) back as values.
fn decode_bulk_row(line: &[u8]) -> Vec<Value> {
    line.split(|&b| b == b'\t')
        .map(|field| {
            if field == b"\\N" {
                return Value::Null;
            }
            let mut out = Vec::with_capacity(field.len());
            let mut bytes = field.iter();
            while let Some(&b) = bytes.next() {
                if b != b'\\' {
                    out.push(b);
                    continue;
                }
                match bytes.next() {
                    Some(b't') => out.push(b'\t'),
                    Some(b'n') => out.push(b'\n'),
                    Some(b'r') => out.push(b'\r'),
                    Some(&other) => out.push(other),
                    None => out.push(b'\\'),
                }
            }
            Value::Text(String::from_utf8_lossy(&out).into_owned())
        })
        .collect()
}

/// Encode one row in the tab-separated text format that both MySQL's `LOAD DATA` (default
/// FIELDS/LINES settings) and PostgreSQL's `COPY … FROM STDIN` (text format) read: tab between
/// fields, newline after the row, `\N` for NULL, backslash escapes for tab, newline, CR and
/// backslash.
pub fn encode_bulk_row(row: &[Value], out: &mut Vec<u8>) {
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
        let row = [
            Value::Int(-3),
            Value::Null,
            Value::Text("a\tb\\c\nd".into()),
        ];
        encode_bulk_row(&row, &mut out);
        assert_eq!(out, b"-3\t\\N\ta\\tb\\\\c\\nd\n");
        assert_eq!(count_rows(&out), 1);
        // And back (the SQLite and fallback paths): every field as text, NULL kept.
        let back: Vec<Vec<Value>> = BulkText {
            table: "t".into(),
            columns: Vec::new(),
            chunks: Box::new(vec![out.clone(), out].into_iter()),
            frozen: false,
        }
        .into_rows()
        .collect();
        let expected = vec![Value::Text("-3".into()), Value::Null, row[2].clone()];
        assert_eq!(back, vec![expected.clone(), expected]);
    }
}
