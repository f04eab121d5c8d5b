//! sysbench's bulk insert (`db_bulk_insert_init` / `_next` / `_done` of its `db_driver.c`):
//! rows appended to one text INSERT, sent when the next row would pass sysbench's 512 KB
//! buffer (`BULK_PACKET_SIZE`, a byte kept for the terminating NUL and one for the comma), and
//! what is left sent at the end. Both `bulk_insert` (dbrig's own) and a Lua script's
//! `con:bulk_insert_*` build their statements here, so both send what sysbench sends.

/// sysbench's bulk insert buffer, bytes (`BULK_PACKET_SIZE`).
pub const BULK_BYTES: usize = 512 * 1024;

/// One bulk insert under way: the statement's head (`INSERT INTO t VALUES`) and the rows
/// since the last one sent.
#[derive(Debug)]
pub struct BulkInsert {
    head: usize,
    buf: String,
    rows: usize,
}

impl BulkInsert {
    pub fn new(head: String) -> Self {
        Self {
            head: head.len(),
            buf: head,
            rows: 0,
        }
    }

    /// Add a row (written right after the head or a comma, as sysbench writes it). When it
    /// would not fit, the statement holding the rows before it is returned, to be sent first.
    pub fn push(&mut self, row: &str) -> Option<String> {
        let full = self.rows > 0 && self.buf.len() + row.len() + 2 > BULK_BYTES;
        let ready = if full { self.take() } else { None };
        if self.rows > 0 {
            self.buf.push(',');
        }
        self.buf.push_str(row);
        self.rows += 1;
        ready
    }

    /// The statement holding the rows not sent yet (none without rows); the buffer is left
    /// with its head.
    pub fn take(&mut self) -> Option<String> {
        (self.rows > 0).then(|| {
            let sql = self.buf.clone();
            self.buf.truncate(self.head);
            self.rows = 0;
            sql
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sysbench's bound: a row goes in while head + rows + commas + the NUL fit in 512 KB.
    #[test]
    fn rows_fill_the_buffer_to_sysbench_bound() {
        let head = "INSERT INTO sbtest1 VALUES";
        let mut b = BulkInsert::new(head.to_owned());
        let mut sent = Vec::new();
        for n in 1..=200_000u64 {
            if let Some(sql) = b.push(&format!("({n},{n})")) {
                sent.push(sql);
            }
        }
        sent.extend(b.take());
        assert!(b.take().is_none());
        let rows: usize = sent.iter().map(|s| s.matches('(').count()).sum();
        assert_eq!(rows, 200_000);
        for s in &sent {
            assert!(s.starts_with("INSERT INTO sbtest1 VALUES(") && s.ends_with(')'));
            // The NUL sysbench keeps is the one byte left at most.
            assert!(s.len() < BULK_BYTES, "{}", s.len());
        }
        // Full ones: the next row (with its comma and the NUL) would not have fitted.
        for (s, next) in sent.iter().zip(sent.iter().skip(1)) {
            let first = &next[head.len()..next.find(')').unwrap() + 1];
            assert!(s.len() + first.len() + 2 > BULK_BYTES, "{}", s.len());
        }
        assert_eq!(
            sent.len(),
            6,
            "200 000 rows of sysbench's bulk_insert.lua: 6 INSERTs"
        );
    }
}
