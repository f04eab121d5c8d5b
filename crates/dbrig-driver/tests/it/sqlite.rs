use std::time::Instant;

use dbrig_core::{ErrorClass, Value};
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Dialect, ErrorKind, Target};

use crate::*;

async fn open(target: &Target, prepared: bool) -> Connection {
    let options = ConnectOptions {
        protocol: if prepared {
            dbrig_driver::Protocol::Prepared
        } else {
            dbrig_driver::Protocol::Simple
        },
        ..Default::default()
    };
    Connection::connect(target, &options).await.unwrap()
}

fn file_target(dir: &tempfile::TempDir) -> Target {
    Target::parse(&format!("sqlite:{}", dir.path().join("bench.db").display())).unwrap()
}

async fn create_table(c: &mut Connection, t: &str) {
    c.execute_text(&format!(
        "CREATE TABLE {t} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c TEXT NOT NULL)"
    ))
    .await
    .unwrap();
}

async fn classification(target: &Target, prepared: bool) {
    let mut c = open(target, prepared).await;
    let t = unique("lite_cls");
    create_table(&mut c, &t).await;
    fill_classification_table(&mut c, &t, q).await;
    check_classification(&mut c, &t, q).await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn connects_and_reports_version() {
    let dir = tempfile::tempdir().unwrap();
    let c = open(&file_target(&dir), true).await;
    assert!(
        c.server_version().starts_with("SQLite 3."),
        "{}",
        c.server_version()
    );
    assert_eq!(c.dialect(), Dialect::Sqlite);
    c.close().await;
}

#[tokio::test]
async fn uses_wal_on_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let mode = c.query("PRAGMA journal_mode", &[]).await.unwrap();
    assert_eq!(mode, vec![vec![Value::Text("wal".into())]]);
    let sync = c.query("PRAGMA synchronous", &[]).await.unwrap();
    assert_eq!(sync, vec![vec![Value::Int(1)]], "NORMAL");
    c.close().await;
}

#[tokio::test]
async fn classifies_prepared_statements() {
    let dir = tempfile::tempdir().unwrap();
    classification(&file_target(&dir), true).await;
}

#[tokio::test]
async fn classifies_text_statements() {
    let dir = tempfile::tempdir().unwrap();
    classification(&file_target(&dir), false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn classifies_in_memory_on_a_current_thread_runtime() {
    classification(&Target::parse("sqlite::memory:").unwrap(), true).await;
}

#[tokio::test]
async fn memory_is_shared_by_the_process() {
    let target = Target::parse("sqlite::memory:").unwrap();
    let t = unique("lite_shared");
    let mut a = open(&target, true).await;
    create_table(&mut a, &t).await;
    a.execute_text(&format!("INSERT INTO {t} VALUES (1, 2, 'x')"))
        .await
        .unwrap();
    // Closed before the next connection opens, as the prepare step is before a run.
    a.close().await;
    let mut b = open(&target, true).await;
    assert!(b.table_exists(&t).await.unwrap());
    let mut c = open(&target, true).await;
    let rows = c.query(&format!("SELECT c FROM {t}"), &[]).await.unwrap();
    assert_eq!(rows, vec![vec![Value::Text("x".into())]]);
    b.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    assert!(!c.table_exists(&t).await.unwrap());
    b.close().await;
    c.close().await;
}

#[tokio::test]
async fn converts_query_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let rows = c
        .query(
            "SELECT 1, -5, 2.5, 'abc', NULL, x'00ff', ?, ?, ?, ?",
            &[
                Value::Int(42),
                Value::Float(0.25),
                Value::Text("t\tx".into()),
                Value::Null,
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Int(1),
            Value::Int(-5),
            Value::Float(2.5),
            Value::Text("abc".into()),
            Value::Null,
            Value::Text("\\x00ff".into()),
            Value::Int(42),
            Value::Float(0.25),
            Value::Text("t\tx".into()),
            Value::Null,
        ]]
    );
    let e = assert_kind(c.query("SELECT ?", &[]).await, ErrorKind::Statement);
    assert_eq!(e.class, ErrorClass::Fatal);
    c.close().await;
}

#[tokio::test]
async fn bulk_loads_rows_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let t = unique("lite_bulk");
    create_table(&mut c, &t).await;
    let n = c
        .bulk_load(BulkLoad {
            table: t.clone(),
            columns: vec!["id".into(), "k".into(), "c".into()],
            rows: bulk_rows(20_000),
        })
        .await
        .unwrap();
    assert_eq!(n, 20_000);
    let count = c
        .query(&format!("SELECT COUNT(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(count, vec![vec![Value::Int(20_000)]]);
    let tricky = c
        .query(&format!("SELECT c FROM {t} WHERE id = ?"), &[Value::Int(7)])
        .await
        .unwrap();
    assert_eq!(tricky, vec![vec![Value::Text(tricky_text().into())]]);
    // A failing load (duplicate keys) rolls back entirely.
    let e = assert_kind(
        c.bulk_load(BulkLoad {
            table: t.clone(),
            columns: vec!["id".into(), "k".into(), "c".into()],
            rows: Box::new(
                (20_001..=20_600)
                    .chain([1])
                    .map(|i| vec![Value::Int(i), Value::Int(0), Value::Text("d".into())]),
            ),
        })
        .await,
        ErrorKind::Statement,
    );
    assert_eq!(e.code.as_deref(), Some("1555"), "{e}");
    let count = c
        .query(&format!("SELECT COUNT(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(count, vec![vec![Value::Int(20_000)]]);
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// The rows a load says it loaded are the rows in the table, also when the last batch is
/// short or the whole load is shorter than one batch (SQLite's loads go 500 rows a statement).
#[tokio::test]
async fn bulk_load_counts_rows_that_fill_no_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    for rows in [1i64, 499, 501, 1_234] {
        let t = unique(&format!("lite_bulk_{rows}"));
        create_table(&mut c, &t).await;
        let n = c
            .bulk_load(BulkLoad {
                table: t.clone(),
                columns: vec!["id".into(), "k".into(), "c".into()],
                rows: bulk_rows(rows),
            })
            .await
            .unwrap();
        let count = c
            .query(&format!("SELECT COUNT(*) FROM {t}"), &[])
            .await
            .unwrap();
        assert_eq!(count, vec![vec![Value::Int(rows)]]);
        assert_eq!(n, rows as u64, "rows said loaded");
    }
    c.close().await;
}

/// Timing only: `cargo test -p dbrig-driver -- --ignored --nocapture bulk_rate`.
#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn bulk_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let t = unique("lite_rate");
    create_table(&mut c, &t).await;
    let start = Instant::now();
    let n = c
        .bulk_load(BulkLoad {
            table: t.clone(),
            columns: vec!["id".into(), "k".into(), "c".into()],
            rows: bulk_rows(200_000),
        })
        .await
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "sqlite bulk load: {n} rows in {secs:.2}s = {:.0} rows/s",
        n as f64 / secs
    );
    c.close().await;
}

#[tokio::test]
async fn classifies_errors() {
    let dir = tempfile::tempdir().unwrap();
    let target = file_target(&dir);
    let mut c = open(&target, true).await;
    let t = unique("lite_err");
    // SQLite has no distinct code for these; callers ask table_exists first.
    assert!(!c.table_exists("no_such_table_at_all").await.unwrap());
    let e = assert_kind(
        c.prepare("SELECT * FROM no_such_table_at_all WHERE id = ?")
            .await,
        ErrorKind::Statement,
    );
    assert_eq!((e.code.as_deref(), e.class), (Some("1"), ErrorClass::Fatal));
    assert!(e.to_string().contains("statement: SELECT"), "{e}");
    create_table(&mut c, &t).await;
    assert_kind(
        c.execute_text(&format!("CREATE TABLE {t} (id INTEGER)"))
            .await,
        ErrorKind::Statement,
    );
    // A second writer waits busy_timeout for the lock, then gets a retryable BUSY.
    let mut other = open(&target, true).await;
    c.execute_text("BEGIN IMMEDIATE").await.unwrap();
    let e = assert_kind(
        other.execute_text("BEGIN IMMEDIATE").await,
        ErrorKind::Statement,
    );
    assert_eq!(
        (e.code.as_deref(), e.class),
        (Some("5"), ErrorClass::Retryable)
    );
    c.execute_text("COMMIT").await.unwrap();
    other.close().await;
    c.close().await;

    let missing = Target::parse(&format!(
        "sqlite:{}",
        dir.path().join("no/such/dir/x.db").display()
    ))
    .unwrap();
    assert_kind(
        Connection::connect(&missing, &ConnectOptions::default()).await,
        ErrorKind::Unreachable,
    );
}

#[tokio::test]
async fn reconnect_keeps_statement_handles() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let t = unique("lite_re");
    create_table(&mut c, &t).await;
    let ins = c
        .prepare(&format!("INSERT INTO {t} (id, k, c) VALUES (?, ?, ?)"))
        .await
        .unwrap();
    c.reconnect().await.unwrap();
    let o = c
        .execute(
            ins,
            &[Value::Int(1), Value::Int(2), Value::Text("x".into())],
        )
        .await
        .unwrap();
    assert_eq!(o, changed(1));
    c.close().await;
}

#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn point_select_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = open(&file_target(&dir), true).await;
    let t = unique("lite_pt");
    create_table(&mut c, &t).await;
    c.bulk_load(BulkLoad {
        table: t.clone(),
        columns: vec!["id".into(), "k".into(), "c".into()],
        rows: bulk_rows(10_000),
    })
    .await
    .unwrap();
    crate::point_select_rate(&mut c, &t, q).await;
    c.close().await;
}
