//! Bulk loads on the lean client: MariaDB's `COM_STMT_BULK_EXECUTE` (MariaDB 10.2+).
//!
//! Why: `LOAD DATA LOCAL` makes the server parse every value from text (and convert its
//! character set); the bulk command binds a prepared `INSERT` to many rows in one packet, with
//! integers already binary. Rows go out as one command per ~1 MiB of payload, and the next
//! command is encoded while the server still works on the previous one.
//!
//! Packet (MariaDB's client/server protocol): `0xFA`, statement id (4), flags (2,
//! `SEND_TYPES_TO_SERVER`), one (type, flag) pair per parameter, then per row and parameter an
//! indicator byte (`NONE` followed by the binary value, or `NULL`). The reply is one OK packet
//! with the rows inserted, or an error.
//!
//! Fallbacks: a server that does not offer `MARIADB_CLIENT_STMT_BULK_OPERATIONS` (MySQL) gets
//! the full client's `LOAD DATA` (the connection switches, see `Connection::bulk_load`); one
//! that offers it but refuses the command (`ER_UNKNOWN_COM_ERROR`) gets prepared multi-row
//! `INSERT`s on this same connection, starting with the rows it refused.
//!
//! A child module of `mysql_wire` so that it uses the connection's framing directly.

use dbrig_core::Value;

use super::{
    COM_STMT_CLOSE, Prepared, TYPE_DOUBLE, TYPE_LONGLONG, TYPE_VAR_STRING, WireConnection,
    parse_err, parse_ok, put_lenenc,
};
use crate::bulk::{
    BulkLoad, BulkText, CHUNK, FieldWriter, MariaDbBulkChunk, MariaDbBulkRows, count_rows,
};
use crate::error::{DriverError, ErrorKind};

const COM_STMT_BULK_EXECUTE: u8 = 0xFA;
const SEND_TYPES_TO_SERVER: u16 = 128;
const INDICATOR_NONE: u8 = 0;
const INDICATOR_NULL: u8 = 1;
/// What a server answers to a command it does not know.
const ER_UNKNOWN_COM_ERROR: u16 = 1047;
/// Bulk commands (~1 MiB each) per transaction. A commit per command flushed the redo log
/// (an fsync under `innodb_flush_log_at_trx_commit = 1`) every MiB: 250 000 rows sent as 50
/// statements took 1.55-1.71 s with autocommit against 1.26-1.52 s in one transaction, and
/// `INSERT … SELECT`, the server's floor, commits once. 64 bounds a transaction's undo log
/// (and an interrupted load's rollback) to a few hundred thousand rows.
const COMMIT_EVERY: u64 = 64;
/// MySQL's limit on placeholders per prepared statement (the fallback's batches).
const MAX_PARAMS: usize = 65_535;

type RowIter = Box<dyn Iterator<Item = Vec<Value>> + Send>;

/// Where the rows of a bulk load come from.
enum Source {
    Values(std::iter::Peekable<RowIter>),
    /// Bulk text (see `crate::bulk::encode_bulk_row`), one command per chunk.
    Text(Box<dyn Iterator<Item = Vec<u8>> + Send>),
    /// Rows the caller wrote in the command's own form, one command per chunk.
    Typed(Box<dyn Iterator<Item = MariaDbBulkChunk> + Send>),
}

/// What one command carried, kept for the first command only: a server that refuses the bulk
/// command refuses the first, and its rows then go through the fallback.
enum Sent {
    Values(Vec<Vec<Value>>),
    Text(Vec<u8>),
    Typed(MariaDbBulkChunk),
}

impl WireConnection {
    /// Whether the server takes `COM_STMT_BULK_EXECUTE` (MariaDB offers it in its extended
    /// capabilities; MySQL does not).
    pub(crate) fn bulk_operations(&self) -> bool {
        self.bulk_operations
    }

    pub(crate) async fn bulk_load(&mut self, load: BulkLoad) -> Result<u64, DriverError> {
        let source = Source::Values((load.rows as RowIter).peekable());
        self.bulk(&load.table, &load.columns, source).await
    }

    pub(crate) async fn bulk_load_text(&mut self, load: BulkText) -> Result<u64, DriverError> {
        self.bulk(&load.table, &load.columns, Source::Text(load.chunks))
            .await
    }

    pub(crate) async fn bulk_load_typed(
        &mut self,
        load: MariaDbBulkRows,
    ) -> Result<u64, DriverError> {
        self.bulk(&load.table, &load.columns, Source::Typed(load.chunks))
            .await
    }

    async fn bulk(
        &mut self,
        table: &str,
        columns: &[String],
        mut source: Source,
    ) -> Result<u64, DriverError> {
        if !self.bulk_operations {
            return self.insert_batches(table, columns, source, None).await;
        }
        let sql = insert_sql(table, columns, 1);
        let (stmt, _) = self
            .prepare_statement(&sql, false)
            .await
            .map_err(|e| e.with_statement(&sql))?;
        let id = stmt.id;
        let width = usize::from(stmt.params);
        // The load runs in transactions of COMMIT_EVERY commands, not one per command.
        if let Err(e) = self.execute_text("BEGIN").await {
            let _ = self.command(COM_STMT_CLOSE, &id.to_le_bytes()).await;
            return Err(e);
        }
        let result = self.bulk_rows(id, width, &mut source).await;
        // Closing has no reply; the server caps open statements (max_prepared_stmt_count).
        let closed = self.command(COM_STMT_CLOSE, &id.to_le_bytes()).await;
        let loaded = match result {
            Ok(n) => n,
            Err(Refused(first)) => {
                closed?;
                let loaded = self.insert_batches(table, columns, source, first).await;
                return self.end_transaction(loaded).await;
            }
        };
        closed?;
        let loaded = self.end_transaction(loaded).await;
        loaded.map_err(|e| e.with_statement(&sql))
    }

    /// Commit what a load sent, or roll it back when the load failed (the error stays the
    /// load's; a connection that is gone has rolled back already).
    async fn end_transaction(
        &mut self,
        loaded: Result<u64, DriverError>,
    ) -> Result<u64, DriverError> {
        match loaded {
            Ok(n) => self.execute_text("COMMIT").await.map(|_| n),
            Err(e) => {
                let _ = self.execute_text("ROLLBACK").await;
                Err(e)
            }
        }
    }

    /// Send every row as bulk commands: the first alone (a refusal hands its rows back), then
    /// each next command encoded while the server runs the one before.
    async fn bulk_rows(
        &mut self,
        id: u32,
        width: usize,
        source: &mut Source,
    ) -> Result<Result<u64, DriverError>, Refused> {
        let mut bufs = [Vec::with_capacity(CHUNK + 64 * 1024), Vec::new()];
        let mut kept = None;
        let Some(rows) = encode_next(id, width, source, &mut bufs[0], Some(&mut kept)) else {
            return Ok(Ok(0));
        };
        let rows = match rows {
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        if let Err(e) = self.send_bulk(&mut bufs[0]).await {
            return Ok(Err(e));
        }
        match self.read_bulk_reply(rows).await {
            Ok(n) => n,
            Err(BulkReply::Refused) => return Err(Refused(kept)),
            Err(BulkReply::Failed(e)) => return Ok(Err(e)),
        };
        let mut loaded = rows;
        let mut in_flight: Option<u64> = None;
        let mut turn = 1;
        let mut commands = 1u64;
        loop {
            // Encode the next command while the server inserts the one in flight.
            let next = encode_next(id, width, source, &mut bufs[turn], None);
            if let Some(sent) = in_flight.take() {
                match self.read_bulk_reply(sent).await {
                    Ok(n) => loaded += n,
                    Err(BulkReply::Refused) => {
                        return Ok(Err(DriverError::fatal(
                            ErrorKind::Statement,
                            "the server refused COM_STMT_BULK_EXECUTE after taking it",
                        )));
                    }
                    Err(BulkReply::Failed(e)) => return Ok(Err(e)),
                }
            }
            let rows = match next {
                None => break,
                Some(Err(e)) => return Ok(Err(e)),
                Some(Ok(n)) => n,
            };
            if commands.is_multiple_of(COMMIT_EVERY)
                && let Err(e) = self.execute_text("COMMIT AND CHAIN").await
            {
                return Ok(Err(e));
            }
            commands += 1;
            if let Err(e) = self.send_bulk(&mut bufs[turn]).await {
                return Ok(Err(e));
            }
            in_flight = Some(rows);
            turn = 1 - turn;
        }
        Ok(Ok(loaded))
    }

    async fn send_bulk(&mut self, body: &mut [u8]) -> Result<(), DriverError> {
        self.seq = 0;
        self.write_framed(body).await
    }

    /// The reply to one bulk command of `sent` rows: the rows inserted.
    async fn read_bulk_reply(&mut self, sent: u64) -> Result<u64, BulkReply> {
        let reply = self.read_packet().await.map_err(BulkReply::Failed)?;
        match reply.first() {
            Some(0x00) => {
                let (affected, _) = parse_ok(&reply).map_err(BulkReply::Failed)?;
                if affected != sent {
                    return Err(BulkReply::Failed(DriverError::fatal(
                        ErrorKind::Statement,
                        format!("a bulk insert of {sent} rows stored {affected}"),
                    )));
                }
                Ok(affected)
            }
            Some(0xFF)
                if reply.len() >= 3
                    && u16::from_le_bytes([reply[1], reply[2]]) == ER_UNKNOWN_COM_ERROR =>
            {
                Err(BulkReply::Refused)
            }
            Some(0xFF) => Err(BulkReply::Failed(parse_err(&reply, &self.policy))),
            _ => Err(BulkReply::Failed(super::lost(
                "unexpected reply to COM_STMT_BULK_EXECUTE",
            ))),
        }
    }

    /// The fallback: prepared multi-row INSERTs (up to 1000 rows each) on this connection,
    /// starting with the rows a refused bulk command carried.
    async fn insert_batches(
        &mut self,
        table: &str,
        columns: &[String],
        source: Source,
        first: Option<Sent>,
    ) -> Result<u64, DriverError> {
        let first: RowIter = match first {
            None => Box::new(std::iter::empty()),
            Some(Sent::Values(rows)) => Box::new(rows.into_iter()),
            Some(Sent::Text(chunk)) => text_rows(Box::new(std::iter::once(chunk))),
            Some(Sent::Typed(chunk)) => Box::new(typed_rows(&chunk).into_iter()),
        };
        let rest: RowIter = match source {
            Source::Values(rows) => Box::new(rows),
            Source::Text(chunks) => text_rows(chunks),
            Source::Typed(chunks) => Box::new(chunks.flat_map(|c| typed_rows(&c))),
        };
        let mut rows = first.chain(rest);
        let base = self.statements.len();
        let width = columns.len().max(1);
        let batch = (MAX_PARAMS / width).clamp(1, 1000);
        let mut loaded = 0u64;
        let mut full: Option<usize> = None;
        let mut params = Vec::with_capacity(batch * width);
        let result = async {
            loop {
                params.clear();
                let mut n = 0;
                for row in rows.by_ref().take(batch) {
                    params.extend(row);
                    n += 1;
                }
                if n == 0 {
                    return Ok(());
                }
                let idx = if n == batch {
                    match full {
                        Some(i) => i,
                        None => {
                            self.prepare(&insert_sql(table, columns, n)).await?;
                            full = Some(self.statements.len() - 1);
                            self.statements.len() - 1
                        }
                    }
                } else {
                    self.prepare(&insert_sql(table, columns, n)).await?;
                    self.statements.len() - 1
                };
                loaded += self.execute(idx, &params).await?.rows;
                if n < batch {
                    return Ok(());
                }
            }
        }
        .await;
        // The statements were this load's alone: close them and forget them.
        let mut closed = Ok(());
        while self.statements.len() > base {
            let stmt: Prepared = self.statements.pop().expect("statement");
            let c = self.command(COM_STMT_CLOSE, &stmt.id.to_le_bytes()).await;
            closed = closed.and(c);
        }
        result?;
        closed?;
        Ok(loaded)
    }
}

/// The first command was refused: its rows, for the fallback.
struct Refused(Option<Sent>);

enum BulkReply {
    Refused,
    Failed(DriverError),
}

/// `INSERT INTO t (c…) VALUES (?…)` repeated for `rows` rows.
fn insert_sql(table: &str, columns: &[String], rows: usize) -> String {
    let one = format!("({})", vec!["?"; columns.len()].join(","));
    format!(
        "INSERT INTO {} ({}) VALUES {}",
        quote(table),
        columns
            .iter()
            .map(|c| quote(c))
            .collect::<Vec<_>>()
            .join(", "),
        vec![one; rows].join(",")
    )
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn text_rows(chunks: Box<dyn Iterator<Item = Vec<u8>> + Send>) -> RowIter {
    BulkText {
        table: String::new(),
        columns: Vec::new(),
        chunks,
        frozen: false,
    }
    .into_rows()
}

/// Encode the next bulk command into `out` (4 header bytes reserved first); `None` when the
/// source is exhausted, else the rows it holds. `keep`: where to keep a copy of its rows.
fn encode_next(
    id: u32,
    width: usize,
    source: &mut Source,
    out: &mut Vec<u8>,
    keep: Option<&mut Option<Sent>>,
) -> Option<Result<u64, DriverError>> {
    out.clear();
    out.extend_from_slice(&[0; 4]);
    out.push(COM_STMT_BULK_EXECUTE);
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&SEND_TYPES_TO_SERVER.to_le_bytes());
    match source {
        Source::Typed(chunks) => {
            let chunk = chunks.next()?;
            if chunk.types.len() != width {
                return Some(Err(width_error(chunk.types.len(), width)));
            }
            for &t in &chunk.types {
                out.extend_from_slice(&[t, 0]);
            }
            out.extend_from_slice(&chunk.buf);
            let rows = chunk.rows();
            if let Some(keep) = keep {
                *keep = Some(Sent::Typed(chunk));
            }
            Some(Ok(rows))
        }
        Source::Text(chunks) => {
            let chunk = chunks.next()?;
            for _ in 0..width {
                out.extend_from_slice(&[TYPE_VAR_STRING, 0]);
            }
            let encoded = encode_text(&chunk, width, out);
            if let Some(keep) = keep {
                *keep = Some(Sent::Text(chunk));
            }
            Some(encoded)
        }
        Source::Values(rows) => {
            let first = rows.peek()?;
            if first.len() != width {
                return Some(Err(width_error(first.len(), width)));
            }
            // Each column's type comes from the command's first row; a row whose non-NULL
            // values disagree starts the next command.
            let types: Vec<u8> = first.iter().map(type_of).collect();
            for &t in &types {
                out.extend_from_slice(&[t, 0]);
            }
            let mut kept = keep.as_ref().map(|_| Vec::new());
            let mut n = 0u64;
            while out.len() < CHUNK {
                let Some(row) = rows.next_if(|row| fits(row, &types)) else {
                    break;
                };
                for v in &row {
                    encode_value(v, out);
                }
                n += 1;
                if let Some(k) = kept.as_mut() {
                    k.push(row);
                }
            }
            if n == 0 {
                // Only a row of the wrong width fails to fit a command made from itself.
                let got = rows.peek().map_or(0, Vec::len);
                return Some(Err(width_error(got, width)));
            }
            if let (Some(keep), Some(k)) = (keep, kept) {
                *keep = Some(Sent::Values(k));
            }
            Some(Ok(n))
        }
    }
}

fn width_error(got: usize, width: usize) -> DriverError {
    DriverError::fatal(
        ErrorKind::Statement,
        format!("a bulk row has {got} value(s) for {width} column(s)"),
    )
}

/// The wire type a value is bound as (NULL as text: it carries no value, only its indicator).
fn type_of(v: &Value) -> u8 {
    match v {
        Value::Int(_) => TYPE_LONGLONG,
        Value::Float(_) => TYPE_DOUBLE,
        Value::Text(_) | Value::Null => TYPE_VAR_STRING,
    }
}

/// Whether every non-NULL value of `row` has its column's type.
fn fits(row: &[Value], types: &[u8]) -> bool {
    row.len() == types.len()
        && row
            .iter()
            .zip(types)
            .all(|(v, &t)| matches!(v, Value::Null) || type_of(v) == t)
}

fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(INDICATOR_NULL),
        Value::Int(i) => {
            out.push(INDICATOR_NONE);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float(f) => {
            out.push(INDICATOR_NONE);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Text(s) => {
            out.push(INDICATOR_NONE);
            put_lenenc(out, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// The rows of a typed chunk back as values (integers as `Int`, everything else as its text),
/// for the fallback of a server that refuses the bulk command.
fn typed_rows(chunk: &MariaDbBulkChunk) -> Vec<Vec<Value>> {
    use super::{TYPE_DATE, TYPE_DATETIME, TYPE_LONG, TYPE_LONGLONG};
    let mut rows = Vec::with_capacity(chunk.rows() as usize);
    let b = &chunk.buf;
    let mut at = 0;
    while at < b.len() {
        let mut row = Vec::with_capacity(chunk.types.len());
        for &t in &chunk.types {
            let indicator = b[at];
            at += 1;
            if indicator == INDICATOR_NULL {
                row.push(Value::Null);
                continue;
            }
            let v = match t {
                TYPE_LONG => {
                    let v = i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
                    at += 4;
                    Value::Int(v.into())
                }
                TYPE_LONGLONG => {
                    let v = i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
                    at += 8;
                    Value::Int(v)
                }
                TYPE_DATE => {
                    // The length byte (4), then year, month, day.
                    let y = u16::from_le_bytes([b[at + 1], b[at + 2]]);
                    let v = format!("{y:04}-{:02}-{:02}", b[at + 3], b[at + 4]);
                    at += 5;
                    Value::Text(v)
                }
                TYPE_DATETIME => {
                    // The length byte (7), then year, month, day, hour, minute, second.
                    let y = u16::from_le_bytes([b[at + 1], b[at + 2]]);
                    let v = format!(
                        "{y:04}-{:02}-{:02} {:02}:{:02}:{:02}",
                        b[at + 3],
                        b[at + 4],
                        b[at + 5],
                        b[at + 6],
                        b[at + 7]
                    );
                    at += 8;
                    Value::Text(v)
                }
                _ => {
                    // Our own chunk: its lengths are well formed.
                    let mut rest = &b[at..];
                    let len = super::lenenc(&mut rest).expect("a chunk's own length") as usize;
                    at = b.len() - rest.len();
                    let v = String::from_utf8_lossy(&b[at..at + len]).into_owned();
                    at += len;
                    Value::Text(v)
                }
            };
            row.push(v);
        }
        rows.push(row);
    }
    rows
}

/// Encode a chunk of bulk text (tab-separated, backslash escapes, `\N` NULL) as rows of
/// string parameters, unescaping as it goes; the server converts each to its column's type
/// as it would the same text in `LOAD DATA`.
fn encode_text(chunk: &[u8], width: usize, out: &mut Vec<u8>) -> Result<u64, DriverError> {
    let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
    if body.is_empty() {
        return Ok(0);
    }
    let mut scratch = Vec::new();
    let mut rows = 0u64;
    for line in body.split(|&b| b == b'\n') {
        let mut fields = 0;
        for field in line.split(|&b| b == b'\t') {
            fields += 1;
            if field == b"\\N" {
                out.push(INDICATOR_NULL);
                continue;
            }
            out.push(INDICATOR_NONE);
            if !field.contains(&b'\\') {
                put_lenenc(out, field.len() as u64);
                out.extend_from_slice(field);
                continue;
            }
            scratch.clear();
            let mut bytes = field.iter();
            while let Some(&b) = bytes.next() {
                if b != b'\\' {
                    scratch.push(b);
                    continue;
                }
                match bytes.next() {
                    Some(b't') => scratch.push(b'\t'),
                    Some(b'n') => scratch.push(b'\n'),
                    Some(b'r') => scratch.push(b'\r'),
                    Some(&other) => scratch.push(other),
                    None => scratch.push(b'\\'),
                }
            }
            put_lenenc(out, scratch.len() as u64);
            out.extend_from_slice(&scratch);
        }
        if fields != width {
            return Err(width_error(fields, width));
        }
        rows += 1;
    }
    debug_assert_eq!(rows, count_rows(chunk));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::encode_bulk_row;
    use crate::mysql_wire::tests::{packet, piped};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn text_and_values_encode_alike() {
        let row = vec![
            Value::Text("7".into()),
            Value::Null,
            Value::Text("tab\there, ünï\\".into()),
        ];
        let mut chunk = Vec::new();
        encode_bulk_row(&row, &mut chunk);
        encode_bulk_row(&row, &mut chunk);
        let mut from_text = Vec::new();
        assert_eq!(encode_text(&chunk, 3, &mut from_text).unwrap(), 2);
        let mut from_values = Vec::new();
        for _ in 0..2 {
            for v in &row {
                encode_value(v, &mut from_values);
            }
        }
        assert_eq!(from_text, from_values);
        assert!(encode_text(b"1\t2\n", 3, &mut Vec::new()).is_err());
    }

    #[test]
    fn a_row_of_other_types_starts_the_next_command() {
        let rows: RowIter = Box::new(
            vec![
                vec![Value::Int(1), Value::Null],
                vec![Value::Null, Value::Text("a".into())],
                vec![Value::Text("x".into()), Value::Null],
            ]
            .into_iter(),
        );
        let mut source = Source::Values(rows.peekable());
        let mut out = Vec::new();
        let mut kept = None;
        let n = encode_next(9, 2, &mut source, &mut out, Some(&mut kept));
        assert_eq!(n.unwrap().unwrap(), 2);
        // Header, id, flags, then the types of the first row: LONGLONG and (NULL) string.
        assert_eq!(&out[4..11], &[0xFA, 9, 0, 0, 0, 128, 0]);
        assert_eq!(&out[11..15], &[TYPE_LONGLONG, 0, TYPE_VAR_STRING, 0]);
        assert!(matches!(kept, Some(Sent::Values(ref k)) if k.len() == 2));
        let n = encode_next(9, 2, &mut source, &mut out, None);
        assert_eq!(n.unwrap().unwrap(), 1);
        assert!(encode_next(9, 2, &mut source, &mut out, None).is_none());
    }

    async fn read(server: &mut tokio::io::DuplexStream) -> Vec<u8> {
        let mut h = [0u8; 4];
        server.read_exact(&mut h).await.unwrap();
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let mut p = vec![0; len];
        server.read_exact(&mut p).await.unwrap();
        p
    }

    /// A server that offers the bulk capability but refuses the command (a proxy, say): the
    /// refused rows and the rest arrive as prepared multi-row INSERTs on the same connection.
    /// A refused bulk command hands its typed rows to the INSERT fallback as values: what
    /// the chunk holds, read back.
    #[test]
    fn typed_rows_read_back_as_values() {
        let mut chunk = MariaDbBulkChunk::with_capacity(256);
        for (i, name) in [(1, "short"), (-2, &"x".repeat(300)[..])] {
            chunk.row(6);
            chunk.int4(i);
            chunk.int8(i64::from(i) * 10_000_000_000);
            chunk.text(name);
            chunk.display(format_args!("Clerk#{i:09}"));
            chunk.numeric(-105 * i64::from(i), 2);
            chunk.date(13_514 + i);
        }
        assert_eq!(chunk.types.len(), 6);
        let rows = typed_rows(&chunk);
        let row = |i: i64, name: &str, money: &str, date: &str| {
            vec![
                Value::Int(i),
                Value::Int(i * 10_000_000_000),
                Value::Text(name.into()),
                Value::Text(format!("Clerk#{i:09}")),
                Value::Text(money.into()),
                Value::Text(date.into()),
            ]
        };
        assert_eq!(
            rows,
            vec![
                row(1, "short", "-1.05", "2007-01-02"),
                row(-2, &"x".repeat(300), "2.10", "2006-12-30"),
            ]
        );
    }

    #[test]
    fn day_numbers_are_calendar_dates() {
        // Walk the calendar a day at a time from 1900-01-01 (day -25 567) to 2100.
        let mut ymd = (1900, 1u8, 1u8);
        for day in -25_567..47_482 {
            assert_eq!(crate::bulk::civil_from_days(day), ymd, "day {day}");
            let (y, m, d) = ymd;
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
            let len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            ymd = if d < len {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[tokio::test]
    async fn a_refused_bulk_command_falls_back_to_insert_batches() {
        let (mut conn, mut server) = piped();
        conn.bulk_operations = true;
        let script = tokio::spawn(async move {
            let mut seen = Vec::new();
            let prepare_ok = |id: u8, params: u8| {
                // OK, id, 0 columns, `params` parameters; parameter definitions are skipped by
                // count, each a packet, and with DEPRECATE_EOF no EOF follows.
                let mut v = packet(1, &[0, id, 0, 0, 0, 0, 0, params, 0, 0, 0, 0]);
                for i in 0..params {
                    v.extend(packet(2 + i, b"def"));
                }
                v
            };
            // 1. The single-row INSERT is prepared.
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x16);
            seen.push(String::from_utf8_lossy(&p[1..]).into_owned());
            server.write_all(&prepare_ok(1, 2)).await.unwrap();
            // The load's transaction begins.
            let ok = packet(1, &[0, 0, 0, 2, 0, 0, 0]);
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x03);
            seen.push(String::from_utf8_lossy(&p[1..]).into_owned());
            server.write_all(&ok).await.unwrap();
            // 2. The bulk command: refused as unknown.
            let p = read(&mut server).await;
            assert_eq!(p[0], 0xFA);
            let mut err = vec![0xFF];
            err.extend_from_slice(&1047u16.to_le_bytes());
            err.extend_from_slice(b"#08S01Unknown command");
            server.write_all(&packet(1, &err)).await.unwrap();
            // 3. The statement is closed (no reply).
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x19);
            // 4. The three rows as one 3-row INSERT, prepared and executed, then closed.
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x16);
            seen.push(String::from_utf8_lossy(&p[1..]).into_owned());
            server.write_all(&prepare_ok(2, 6)).await.unwrap();
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x17);
            server
                .write_all(&packet(1, &[0, 3, 0, 2, 0, 0, 0]))
                .await
                .unwrap();
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x19);
            // 5. The rows are committed.
            let p = read(&mut server).await;
            assert_eq!(p[0], 0x03);
            seen.push(String::from_utf8_lossy(&p[1..]).into_owned());
            server.write_all(&ok).await.unwrap();
            seen
        });
        let rows: RowIter = Box::new(
            (1..=3)
                .map(|i| vec![Value::Int(i), Value::Text(format!("r{i}"))])
                .collect::<Vec<_>>()
                .into_iter(),
        );
        let loaded = conn
            .bulk_load(BulkLoad {
                table: "t".into(),
                columns: vec!["a".into(), "b".into()],
                rows,
            })
            .await
            .unwrap();
        assert_eq!(loaded, 3);
        let seen = script.await.unwrap();
        assert_eq!(
            seen,
            [
                "INSERT INTO `t` (`a`, `b`) VALUES (?,?)",
                "BEGIN",
                "INSERT INTO `t` (`a`, `b`) VALUES (?,?),(?,?),(?,?)",
                "COMMIT"
            ]
        );
    }
}

/// Against the machine's MariaDB: every column type the workloads load, through the bulk
/// command (values and text) and through `LOAD DATA` (the text path), read back alike.
#[cfg(test)]
mod server_tests {
    use dbrig_core::Value;

    use crate::{BulkLoad, BulkText, ConnectOptions, Connection, Target, encode_bulk_row};

    const MARIADB: &str = "mysql://root@127.0.0.1:3306/test";

    fn rows() -> Vec<Vec<Value>> {
        (0..2500i64)
            .map(|i| {
                let text = |s: String| Value::Text(s);
                vec![
                    Value::Int(i),
                    Value::Int(i * 3_000_000_007 - 1),
                    text(format!("{}.{:02}", i * 7 - 900, i % 100)),
                    text(format!("199{}-0{}-1{}", i % 10, 1 + i % 9, i % 10)),
                    text(format!("c{}", i % 13)),
                    if i % 5 == 0 {
                        Value::Null
                    } else {
                        text(format!("ünïcødé ✓ {i}\ttab\\"))
                    },
                ]
            })
            .collect()
    }

    async fn load(table: &str, lean: bool, text: bool) -> Vec<Vec<Value>> {
        let target = Target::parse(MARIADB).unwrap();
        let options = ConnectOptions {
            lean,
            ..ConnectOptions::default()
        };
        let mut c = Connection::connect(&target, &options).await.unwrap();
        c.execute_text(&format!("DROP TABLE IF EXISTS {table}"))
            .await
            .unwrap();
        c.execute_text(&format!(
            "CREATE TABLE {table} (a INT, b BIGINT, d DECIMAL(15,2), dt DATE, ch CHAR(10), \
             v VARCHAR(40) CHARACTER SET utf8mb4) CHARACTER SET latin1"
        ))
        .await
        .unwrap();
        let columns: Vec<String> = ["a", "b", "d", "dt", "ch", "v"].map(String::from).into();
        let expected_path = if lean {
            "COM_STMT_BULK_EXECUTE"
        } else {
            "LOAD DATA LOCAL"
        };
        assert_eq!(c.mysql_bulk_path(), Some(expected_path));
        let n = if text {
            let mut chunk = Vec::new();
            let mut chunks = Vec::new();
            for r in rows() {
                encode_bulk_row(&r, &mut chunk);
                if chunk.len() > 20_000 {
                    chunks.push(std::mem::take(&mut chunk));
                }
            }
            chunks.push(chunk);
            c.bulk_load_text(BulkText {
                table: table.into(),
                columns,
                chunks: Box::new(chunks.into_iter()),
                frozen: false,
            })
            .await
            .unwrap()
        } else {
            c.bulk_load(BulkLoad {
                table: table.into(),
                columns,
                rows: Box::new(rows().into_iter()),
            })
            .await
            .unwrap()
        };
        assert_eq!(n, 2500);
        let back = c
            .query(&format!("SELECT * FROM {table} ORDER BY a"), &[])
            .await
            .unwrap();
        c.execute_text(&format!("DROP TABLE {table}"))
            .await
            .unwrap();
        back
    }

    #[tokio::test]
    async fn bulk_command_and_load_data_store_the_same_rows() {
        let reference = load("dbrig_bulk_rt_text", false, true).await;
        assert_eq!(reference.len(), 2500);
        assert_eq!(reference[1][5], Value::Text("ünïcødé ✓ 1\ttab\\".into()));
        assert_eq!(reference[0][5], Value::Null);
        for (name, text) in [("dbrig_bulk_rt_bv", false), ("dbrig_bulk_rt_bt", true)] {
            let got = load(name, true, text).await;
            for (i, (g, r)) in got.iter().zip(&reference).enumerate() {
                assert_eq!(g, r, "row {i} ({name})");
            }
            assert_eq!(got.len(), reference.len());
        }
    }
}
