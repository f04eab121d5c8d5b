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

/// Typed fields written one by one into an engine's binary bulk format, a chunk of rows at a
/// time: PostgreSQL's binary `COPY` ([`PgBinaryChunk`]) or MariaDB's bulk command
/// ([`MariaDbBulkChunk`]). A producer that knows its column types (TPC-H's generators,
/// pgbench's accounts) writes each row once, through this, for whichever engine loads it: the
/// integers, money and dates go out in the engine's binary form, which the client writes
/// without formatting and the server reads without parsing. Each chunk also counts its rows and
/// the size the same rows have as bulk text ([`encode_bulk_row`]: each field's text, a tab or
/// newline after it), so a load's MB/s means the same whichever format carried it.
pub trait FieldWriter: Send + 'static {
    /// An empty chunk with room for about `bytes`.
    fn with_capacity(bytes: usize) -> Self
    where
        Self: Sized;
    /// Start a row of `fields` fields.
    fn row(&mut self, fields: i16);
    /// An INTEGER column's value.
    fn int4(&mut self, v: i32);
    /// A BIGINT column's value.
    fn int8(&mut self, v: i64);
    /// CHAR, VARCHAR or TEXT: the UTF-8 bytes as they are (CHAR(n) pads them, as from text).
    fn text(&mut self, s: &str);
    /// A text field written by `Display`, without an intermediate `String`.
    fn display(&mut self, v: impl std::fmt::Display)
    where
        Self: Sized;
    /// A DECIMAL of `unscaled / 10^scale` (`scale` 0..=4; money as cents is scale 2); the
    /// column rounds it to its own scale, as it would the text.
    fn numeric(&mut self, unscaled: i64, scale: u16);
    /// A DATE, as days since 1970-01-01.
    fn date(&mut self, unix_days: i32);
    /// A TIMESTAMP (PostgreSQL, without time zone) or DATETIME (MariaDB), as whole seconds
    /// since 1970-01-01 00:00:00, read as a wall-clock time (no zone is applied).
    fn timestamp(&mut self, unix_seconds: i64);
    /// A NULL in a column of type `of` (MariaDB's bulk command declares each parameter's type
    /// from a chunk's first row, NULL or not).
    fn null(&mut self, of: FieldType);
    /// Bytes written so far.
    fn len(&self) -> usize;
    /// Rows written so far.
    fn rows(&self) -> u64;
    /// The size of those rows as bulk text.
    fn text_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.rows() == 0
    }
}

/// A column's type as a [`FieldWriter`] writes it: what a NULL stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Int4,
    Int8,
    Text,
    Numeric,
    Date,
    Timestamp,
}

/// `TIMESTAMP`'s text, `YYYY-MM-DD HH:MM:SS`.
const TIMESTAMP_TEXT_LEN: u64 = 19;

/// Seconds between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_UNIX_SECONDS: i64 = 946_684_800;

/// The calendar date and time of day of `unix_seconds`: (year, month, day, hour, minute,
/// second).
pub fn civil_from_seconds(unix_seconds: i64) -> (i32, u8, u8, u8, u8, u8) {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days as i32);
    (
        y,
        m,
        d,
        (secs / 3600) as u8,
        (secs / 60 % 60) as u8,
        (secs % 60) as u8,
    )
}

/// Digits of `n` in decimal (1 for 0).
fn decimal_digits(n: u64) -> u64 {
    u64::from(n.checked_ilog10().unwrap_or(0)) + 1
}

/// The text size of an integer.
fn int_text_len(v: i64) -> u64 {
    decimal_digits(v.unsigned_abs()) + u64::from(v < 0)
}

/// The text size of `unscaled / 10^scale` written with `scale` decimals.
fn numeric_text_len(unscaled: i64, scale: u16) -> u64 {
    let whole = unscaled.unsigned_abs() / 10u64.pow(scale.into());
    let frac = if scale > 0 { 1 + u64::from(scale) } else { 0 };
    u64::from(unscaled < 0) + decimal_digits(whole) + frac
}

/// `DATE`'s text, `YYYY-MM-DD`.
const DATE_TEXT_LEN: u64 = 10;

/// Days between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_UNIX_DAYS: i32 = 10_957;

/// The calendar date of a day number (days since 1970-01-01), proleptic Gregorian (Howard
/// Hinnant's `civil_from_days`).
pub(crate) fn civil_from_days(unix_days: i32) -> (i32, u8, u8) {
    let z = i64::from(unix_days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

/// A chunk of PostgreSQL binary `COPY` tuples (for [`PgBinaryRows::chunks`]): per field its
/// 32-bit length, then the type's binary form. A tuple's fields must match the table's column
/// types exactly (`int4` for INTEGER, `int8` for BIGINT): the server reads them by width.
#[derive(Debug, Default)]
pub struct PgBinaryChunk {
    pub buf: Vec<u8>,
    rows: u64,
    text_bytes: u64,
}

impl FieldWriter for PgBinaryChunk {
    fn with_capacity(bytes: usize) -> Self {
        PgBinaryChunk {
            buf: Vec::with_capacity(bytes),
            ..PgBinaryChunk::default()
        }
    }

    fn row(&mut self, fields: i16) {
        self.buf.extend_from_slice(&fields.to_be_bytes());
        self.rows += 1;
        // A tab after each field but the last, a newline after it.
        self.text_bytes += fields as u64;
    }

    fn int4(&mut self, v: i32) {
        self.buf.extend_from_slice(&4i32.to_be_bytes());
        self.buf.extend_from_slice(&v.to_be_bytes());
        self.text_bytes += int_text_len(v.into());
    }

    fn int8(&mut self, v: i64) {
        self.buf.extend_from_slice(&8i32.to_be_bytes());
        self.buf.extend_from_slice(&v.to_be_bytes());
        self.text_bytes += int_text_len(v);
    }

    fn text(&mut self, s: &str) {
        self.buf.extend_from_slice(&(s.len() as i32).to_be_bytes());
        self.buf.extend_from_slice(s.as_bytes());
        self.text_bytes += s.len() as u64;
    }

    fn display(&mut self, v: impl std::fmt::Display) {
        use std::io::Write;
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        let _ = write!(self.buf, "{v}");
        let len = self.buf.len() - at - 4;
        self.buf[at..at + 4].copy_from_slice(&(len as i32).to_be_bytes());
        self.text_bytes += len as u64;
    }

    /// NUMERIC's binary form: base-10000 digits (leading and trailing zero digits left out,
    /// as the server's own normal form), the weight of the first, the sign, the display scale.
    fn numeric(&mut self, unscaled: i64, scale: u16) {
        assert!(
            scale <= 4,
            "NUMERIC scale {scale} over 4 is not written here"
        );
        let pow = 10u64.pow(scale.into());
        let a = unscaled.unsigned_abs();
        let (mut int, frac) = (a / pow, a % pow);
        // Integer digits, least significant first.
        let mut digits = [0u16; 6];
        let mut n = 0;
        while int > 0 {
            digits[n] = (int % 10_000) as u16;
            int /= 10_000;
            n += 1;
        }
        let weight = n as i16 - 1;
        digits[..n].reverse();
        if frac > 0 {
            digits[n] = (frac * 10u64.pow(4 - u32::from(scale))) as u16;
            n += 1;
        }
        let lead = digits[..n].iter().take_while(|&&d| d == 0).count();
        let trail = digits[lead..n]
            .iter()
            .rev()
            .take_while(|&&d| d == 0)
            .count();
        let kept = &digits[lead..n - trail];
        let weight = if kept.is_empty() {
            0
        } else {
            weight - lead as i16
        };
        let sign: u16 = if unscaled < 0 { 0x4000 } else { 0 };
        self.buf
            .extend_from_slice(&(8 + 2 * kept.len() as i32).to_be_bytes());
        self.buf
            .extend_from_slice(&(kept.len() as i16).to_be_bytes());
        self.buf.extend_from_slice(&weight.to_be_bytes());
        self.buf.extend_from_slice(&sign.to_be_bytes());
        self.buf.extend_from_slice(&scale.to_be_bytes());
        for d in kept {
            self.buf.extend_from_slice(&d.to_be_bytes());
        }
        self.text_bytes += numeric_text_len(unscaled, scale);
    }

    /// Days since 2000-01-01, PostgreSQL's epoch.
    fn date(&mut self, unix_days: i32) {
        self.buf.extend_from_slice(&4i32.to_be_bytes());
        self.buf
            .extend_from_slice(&(unix_days - PG_EPOCH_UNIX_DAYS).to_be_bytes());
        self.text_bytes += DATE_TEXT_LEN;
    }

    /// Microseconds since 2000-01-01 00:00:00 (PostgreSQL's integer timestamps).
    fn timestamp(&mut self, unix_seconds: i64) {
        self.buf.extend_from_slice(&8i32.to_be_bytes());
        let micros = (unix_seconds - PG_EPOCH_UNIX_SECONDS) * 1_000_000;
        self.buf.extend_from_slice(&micros.to_be_bytes());
        self.text_bytes += TIMESTAMP_TEXT_LEN;
    }

    /// A field length of -1; `\N` in bulk text.
    fn null(&mut self, _of: FieldType) {
        self.buf.extend_from_slice(&(-1i32).to_be_bytes());
        self.text_bytes += 2;
    }

    fn len(&self) -> usize {
        self.buf.len()
    }
    fn rows(&self) -> u64 {
        self.rows
    }
    fn text_bytes(&self) -> u64 {
        self.text_bytes
    }
}

/// A chunk of rows in the form MariaDB's `COM_STMT_BULK_EXECUTE` carries them (for
/// [`MariaDbBulkRows::chunks`]): per field an indicator byte and the binary protocol's value.
/// Integers go as `LONG` / `LONGLONG`, dates as `DATE` (year, month, day), text as strings,
/// and decimals as their exact text (the server has no cheaper exact form to read). The
/// parameter types are taken from the chunk's first row; every row must have the same.
#[derive(Debug, Default)]
pub struct MariaDbBulkChunk {
    pub buf: Vec<u8>,
    /// Each parameter's type, in order (set by the first row).
    pub types: Vec<u8>,
    rows: u64,
    text_bytes: u64,
}

/// The binary protocol's "a value follows" indicator.
const MARIADB_INDICATOR_NONE: u8 = 0;
/// The binary protocol's "this value is NULL" indicator (no value follows).
const MARIADB_INDICATOR_NULL: u8 = 1;

impl MariaDbBulkChunk {
    fn field(&mut self, ty: u8) {
        if self.rows == 1 {
            self.types.push(ty);
        }
        self.buf.push(MARIADB_INDICATOR_NONE);
    }
}

impl FieldWriter for MariaDbBulkChunk {
    fn with_capacity(bytes: usize) -> Self {
        MariaDbBulkChunk {
            buf: Vec::with_capacity(bytes),
            ..MariaDbBulkChunk::default()
        }
    }

    fn row(&mut self, fields: i16) {
        self.rows += 1;
        self.text_bytes += fields as u64;
    }

    fn int4(&mut self, v: i32) {
        self.field(crate::mysql_wire::TYPE_LONG);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self.text_bytes += int_text_len(v.into());
    }

    fn int8(&mut self, v: i64) {
        self.field(crate::mysql_wire::TYPE_LONGLONG);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self.text_bytes += int_text_len(v);
    }

    fn text(&mut self, s: &str) {
        self.field(crate::mysql_wire::TYPE_VAR_STRING);
        crate::mysql_wire::put_lenenc(&mut self.buf, s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
        self.text_bytes += s.len() as u64;
    }

    fn display(&mut self, v: impl std::fmt::Display) {
        use std::io::Write;
        self.field(crate::mysql_wire::TYPE_VAR_STRING);
        // A one-byte length for the usual short text, widened in the rare long case.
        let at = self.buf.len();
        self.buf.push(0);
        let _ = write!(self.buf, "{v}");
        let len = self.buf.len() - at - 1;
        if len <= 0xFA {
            self.buf[at] = len as u8;
        } else {
            let mut prefix = Vec::with_capacity(9);
            crate::mysql_wire::put_lenenc(&mut prefix, len as u64);
            self.buf.splice(at..at + 1, prefix);
        }
        self.text_bytes += len as u64;
    }

    fn numeric(&mut self, unscaled: i64, scale: u16) {
        assert!(
            scale <= 4,
            "decimal scale {scale} over 4 is not written here"
        );
        self.field(crate::mysql_wire::TYPE_VAR_STRING);
        let len = numeric_text_len(unscaled, scale);
        crate::mysql_wire::put_lenenc(&mut self.buf, len);
        // Digits written from the right into their place: no formatter.
        let at = self.buf.len();
        self.buf.resize(at + len as usize, b'0');
        let text = &mut self.buf[at..];
        let mut a = unscaled.unsigned_abs();
        let mut i = text.len();
        for _ in 0..scale {
            i -= 1;
            text[i] = b'0' + (a % 10) as u8;
            a /= 10;
        }
        if scale > 0 {
            i -= 1;
            text[i] = b'.';
        }
        loop {
            i -= 1;
            text[i] = b'0' + (a % 10) as u8;
            a /= 10;
            if a == 0 {
                break;
            }
        }
        if unscaled < 0 {
            text[0] = b'-';
        }
        self.text_bytes += len;
    }

    fn date(&mut self, unix_days: i32) {
        self.field(crate::mysql_wire::TYPE_DATE);
        let (y, m, d) = civil_from_days(unix_days);
        self.buf.push(4);
        self.buf.extend_from_slice(&(y as u16).to_le_bytes());
        self.buf.push(m);
        self.buf.push(d);
        self.text_bytes += DATE_TEXT_LEN;
    }

    fn timestamp(&mut self, unix_seconds: i64) {
        self.field(crate::mysql_wire::TYPE_DATETIME);
        let (y, mo, d, h, mi, s) = civil_from_seconds(unix_seconds);
        self.buf.push(7);
        self.buf.extend_from_slice(&(y as u16).to_le_bytes());
        self.buf.extend_from_slice(&[mo, d, h, mi, s]);
        self.text_bytes += TIMESTAMP_TEXT_LEN;
    }

    fn null(&mut self, of: FieldType) {
        use crate::mysql_wire::{TYPE_DATE, TYPE_DATETIME, TYPE_LONG, TYPE_LONGLONG};
        let ty = match of {
            FieldType::Int4 => TYPE_LONG,
            FieldType::Int8 => TYPE_LONGLONG,
            FieldType::Date => TYPE_DATE,
            FieldType::Timestamp => TYPE_DATETIME,
            FieldType::Text | FieldType::Numeric => crate::mysql_wire::TYPE_VAR_STRING,
        };
        if self.rows == 1 {
            self.types.push(ty);
        }
        self.buf.push(MARIADB_INDICATOR_NULL);
        self.text_bytes += 2;
    }

    fn len(&self) -> usize {
        self.buf.len()
    }
    fn rows(&self) -> u64 {
        self.rows
    }
    fn text_bytes(&self) -> u64 {
        self.text_bytes
    }
}

/// Rows already written as [`MariaDbBulkChunk`]s, for [`crate::Connection::bulk_load_mariadb`]:
/// each chunk becomes one `COM_STMT_BULK_EXECUTE`.
pub struct MariaDbBulkRows {
    pub table: String,
    pub columns: Vec<String>,
    pub chunks: Box<dyn Iterator<Item = MariaDbBulkChunk> + Send>,
}

impl std::fmt::Debug for MariaDbBulkRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MariaDbBulkRows")
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
