//! Integration tests against the real servers on this machine (MariaDB on 127.0.0.1:3306,
//! PostgreSQL on 127.0.0.1:5432) and SQLite. Tests run in parallel, so every test works on
//! its own uniquely named tables and drops them at the end.

mod mysql;
/// PostgreSQL through the full client (tokio-postgres) and through the lean one (`pg_wire`,
/// benchmark clients' and loaders'): the same cases, each client held to them.
mod postgres {
    const LEAN: bool = false;
    include!("postgres.rs");
}
mod postgres_lean {
    const LEAN: bool = true;
    include!("postgres.rs");
}
mod silence;
mod sqlite;
mod timeout;

use std::sync::atomic::{AtomicU32, Ordering};

use dbrig_core::{StatementClass, Value};
use dbrig_driver::{Connection, DriverError, ErrorKind, Outcome};

/// A table name no other test (or concurrent test run) uses.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn read(rows: u64) -> Outcome {
    Outcome {
        result_set: true,
        rows,
    }
}

pub fn changed(rows: u64) -> Outcome {
    Outcome {
        result_set: false,
        rows,
    }
}

/// The rows a bulk load test sends: ids 1..=n, and one value that needs every TSV escape.
pub fn bulk_rows(n: i64) -> Box<dyn Iterator<Item = Vec<Value>> + Send> {
    Box::new((1..=n).map(|i| {
        let c = if i == 7 {
            tricky_text().to_owned()
        } else {
            format!("row-{i}")
        };
        vec![Value::Int(i), Value::Int(i % 100), Value::Text(c)]
    }))
}

pub fn tricky_text() -> &'static str {
    "tab\there back\\slash new\nline cr\r end \\N"
}

#[track_caller]
pub fn assert_kind<T: std::fmt::Debug>(r: Result<T, DriverError>, kind: ErrorKind) -> DriverError {
    match r {
        Ok(v) => panic!("expected {kind:?}, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind, kind, "{e}");
            assert!(!e.message.contains('\n'), "one-line message: {e}");
            e
        }
    }
}

/// The shape every engine must agree on: SELECT → read, UPDATE of one row → write, UPDATE of
/// none → other, BEGIN/COMMIT → other.
pub async fn check_classification(c: &mut Connection, table: &str, ph: fn(usize) -> String) {
    let sel = c
        .prepare(&format!(
            "SELECT c FROM {table} WHERE id BETWEEN {} AND {}",
            ph(1),
            ph(2)
        ))
        .await
        .unwrap();
    let upd = c
        .prepare(&format!(
            "UPDATE {table} SET k = k + 1 WHERE id = {}",
            ph(1)
        ))
        .await
        .unwrap();
    let by_text = c
        .prepare(&format!("SELECT id FROM {table} WHERE c = {}", ph(1)))
        .await
        .unwrap();

    assert_eq!(
        c.execute_text("BEGIN").await.unwrap().class(),
        StatementClass::Other
    );
    let o = c
        .execute(sel, &[Value::Int(2), Value::Int(6)])
        .await
        .unwrap();
    assert_eq!(o, read(5));
    assert_eq!(o.class(), StatementClass::Read);
    let o = c
        .execute(sel, &[Value::Int(100), Value::Int(200)])
        .await
        .unwrap();
    assert_eq!(o, read(0));
    assert_eq!(o.class(), StatementClass::Read);
    let o = c.execute(upd, &[Value::Int(3)]).await.unwrap();
    assert_eq!(o, changed(1));
    assert_eq!(o.class(), StatementClass::Write);
    let o = c.execute(upd, &[Value::Int(-1)]).await.unwrap();
    assert_eq!(o, changed(0));
    assert_eq!(o.class(), StatementClass::Other);
    assert_eq!(
        c.execute_text("COMMIT").await.unwrap().class(),
        StatementClass::Other
    );
    let o = c
        .execute(by_text, &[Value::Text("it's row 4".into())])
        .await
        .unwrap();
    assert_eq!(o, read(1));
    let rows = c
        .query(&format!("SELECT k FROM {table} WHERE id = 3"), &[])
        .await
        .unwrap();
    assert_eq!(rows, vec![vec![Value::Int(31)]]);
}

/// Rows for `check_classification`: id 1..=10, k = id*10, c = "it's row {id}".
pub async fn fill_classification_table(c: &mut Connection, table: &str, ph: fn(usize) -> String) {
    let ins = c
        .prepare(&format!(
            "INSERT INTO {table} (id, k, c) VALUES ({}, {}, {})",
            ph(1),
            ph(2),
            ph(3)
        ))
        .await
        .unwrap();
    for i in 1..=10 {
        let o = c
            .execute(
                ins,
                &[
                    Value::Int(i),
                    Value::Int(i * 10),
                    Value::Text(format!("it's row {i}")),
                ],
            )
            .await
            .unwrap();
        assert_eq!(o, changed(1));
    }
}

pub fn q(_: usize) -> String {
    "?".into()
}

pub fn dollar(n: usize) -> String {
    format!("${n}")
}

/// Callers spawn clients as tokio tasks, so every connection future must be `Send`.
#[allow(dead_code)]
fn connection_futures_are_send(c: &mut Connection, s: dbrig_driver::Statement) {
    fn send<T: Send>(_: T) {}
    send(c.execute(s, &[]));
    send(c.execute_text(""));
    send(c.query("", &[]));
    send(c.reconnect());
    send(c.table_exists(""));
    send(c.query_with_timeout("", &[], std::time::Duration::ZERO));
    send(c.execute_text_with_timeout("", std::time::Duration::ZERO));
    send(c.cancel_handle().cancel());
    send(c.bulk_load(dbrig_driver::BulkLoad {
        table: String::new(),
        columns: Vec::new(),
        rows: Box::new(std::iter::empty()),
    }));
}

/// Process CPU time (user + system) in seconds, from /proc (Linux; 0 elsewhere).
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Timing only: point SELECTs by primary key on one connection, printing queries/s and client
/// CPU per query (`cargo test -p dbrig-driver -- --ignored --nocapture point_select_rate`).
pub async fn point_select_rate(c: &mut Connection, table: &str, ph: fn(usize) -> String) {
    let sel = c
        .prepare(&format!("SELECT c FROM {table} WHERE id = {}", ph(1)))
        .await
        .unwrap();
    let n = 20_000;
    let (start, cpu) = (std::time::Instant::now(), cpu_seconds());
    for i in 0..n {
        let o = c.execute(sel, &[Value::Int(i % 10_000 + 1)]).await.unwrap();
        assert_eq!(o, read(1));
    }
    let (secs, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    println!(
        "{}: {n} point selects in {secs:.2}s = {:.0}/s, client CPU {:.1} µs/query",
        c.dialect().name(),
        n as f64 / secs,
        cpu * 1e6 / n as f64
    );
}

/// The columns of the typed bulk tests' table: every column type TPC-H and the OLTP tables use.
pub fn typed_columns() -> Vec<String> {
    ["i", "b", "m", "q", "d", "ch", "v"]
        .map(str::to_owned)
        .to_vec()
}

/// `CREATE TABLE` of the typed bulk tests' table (`suffix`: table options, e.g. a charset).
pub fn typed_table_sql(t: &str, suffix: &str) -> String {
    format!(
        "CREATE TABLE {t} (i INTEGER NOT NULL, b BIGINT NOT NULL, m DECIMAL(15,2) NOT NULL, \
         q DECIMAL(15,2) NOT NULL, d DATE NOT NULL, ch CHAR(10) NOT NULL, v VARCHAR(44) NOT NULL){suffix}"
    )
}

/// The typed bulk tests' rows, as bulk text and as a typed chunk `W` (and how many): INTEGER
/// and BIGINT at their limits, DECIMAL(15,2) from cents and from whole numbers (negative,
/// zero, below one, the column's largest), DATE before and after 2000 and on leap days, CHAR
/// padded, VARCHAR with UTF-8. The chunk's text size must be the text's.
pub fn typed_sample<W: dbrig_driver::FieldWriter>() -> (Vec<u8>, W, u64) {
    // (i, b, cents, whole, days since 1970-01-01, date text, char, varchar)
    #[allow(clippy::type_complexity)]
    let rows: Vec<(i32, i64, i64, i64, i32, &str, &str, &str)> = vec![
        (0, 0, 0, 0, 10_957, "2000-01-01", "", ""),
        (1, 1, 5, 1, 8_035, "1992-01-01", "A", "plain"),
        (
            -7,
            -9_000_000_000,
            -105,
            -17,
            13_514,
            "2007-01-01",
            "MAIL",
            "ünïcødé ✓",
        ),
        (
            i32::MAX,
            i64::MAX,
            1_000_050,
            50,
            10_956,
            "1999-12-31",
            "DELIVER IN",
            "x",
        ),
        (
            i32::MIN,
            i64::MIN + 1,
            9_999_999_999_999,
            10_000,
            11_016,
            "2000-02-29",
            "1-URGENT",
            "y",
        ),
        (
            42,
            6_000_000,
            2_000_000,
            20_000,
            21_550,
            "2029-01-01",
            "AIR",
            "comment",
        ),
        (3, 4, -1, 0, 0, "1970-01-01", "Z", "z"),
        (
            5,
            6,
            99,
            -1,
            10_379,
            "1998-06-02",
            "TRUCK",
            "a longer comment, with punctuation.",
        ),
    ];
    let mut text = Vec::new();
    let mut chunk = W::with_capacity(4096);
    for &(i, b, cents, whole, days, date, ch, v) in &rows {
        let money = format!(
            "{}{}.{:02}",
            if cents < 0 { "-" } else { "" },
            cents.unsigned_abs() / 100,
            cents.unsigned_abs() % 100
        );
        text.extend_from_slice(
            format!("{i}\t{b}\t{money}\t{whole}\t{date}\t{ch}\t{v}\n").as_bytes(),
        );
        chunk.row(7);
        chunk.int4(i);
        chunk.int8(b);
        chunk.numeric(cents, 2);
        chunk.numeric(whole, 0);
        chunk.date(days);
        chunk.display(ch);
        chunk.text(v);
    }
    assert_eq!(chunk.rows(), rows.len() as u64);
    assert_eq!(
        chunk.text_bytes(),
        text.len() as u64,
        "text size of the typed rows"
    );
    (text, chunk, rows.len() as u64)
}

/// The row `i = -7` of `typed_sample` as the server shows m, q, d, ch and ch's length.
pub fn typed_sample_shown() -> Vec<Value> {
    vec![
        Value::Text("-1.05".into()),
        Value::Text("-17.00".into()),
        Value::Text("2007-01-01".into()),
        Value::Text("MAIL".into()),
        Value::Int(4),
    ]
}

/// Two tables hold the same rows (each `EXCEPT ALL` the other is empty).
pub async fn assert_same_rows(c: &mut Connection, a: &str, b: &str) {
    for (x, y) in [(a, b), (b, a)] {
        let differ = c
            .query(
                &format!("SELECT COUNT(*) FROM (SELECT * FROM {x} EXCEPT ALL SELECT * FROM {y}) z"),
                &[],
            )
            .await
            .unwrap();
        assert_eq!(differ, vec![vec![Value::Int(0)]], "rows of {x} not in {y}");
        let count = c
            .query(&format!("SELECT COUNT(*) FROM {x}"), &[])
            .await
            .unwrap();
        assert_eq!(count, vec![vec![Value::Int(8)]], "rows in {x}");
    }
}
