use std::time::{Duration, Instant};

use dbrig_core::{ErrorClass, Value};
use dbrig_driver::{
    BulkLoad, BulkText, ConnectOptions, Connection, ErrorKind, PgBinaryChunk, PgBinaryRows,
    PipelineItem, Protocol, Target,
};

use crate::*;

const URL: &str = "postgres://postgres@127.0.0.1:5432/test";

async fn connect_with(protocol: Protocol) -> Connection {
    let options = ConnectOptions {
        protocol,
        lean: LEAN,
        ..Default::default()
    };
    Connection::connect(&Target::parse(URL).unwrap(), &options)
        .await
        .unwrap()
}

async fn connect() -> Connection {
    connect_with(Protocol::Prepared).await
}

async fn classification(protocol: Protocol) {
    let mut c = connect_with(protocol).await;
    let t = unique("pg_cls");
    c.execute_text(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120) NOT NULL)"
    ))
    .await
    .unwrap();
    fill_classification_table(&mut c, &t, dollar).await;
    check_classification(&mut c, &t, dollar).await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn connects_and_reports_version() {
    let c = connect().await;
    assert!(
        c.server_version().starts_with("15."),
        "{}",
        c.server_version()
    );
    c.close().await;
}

#[tokio::test]
async fn classifies_prepared_statements() {
    classification(Protocol::Prepared).await;
}

#[tokio::test]
async fn classifies_text_statements() {
    classification(Protocol::Simple).await;
}

/// `--protocol extended`: unnamed statements with text parameters the server types.
#[tokio::test]
async fn classifies_unnamed_statements() {
    classification(Protocol::Extended).await;
}

/// A prepared statement's result rows are counted whether the server's command tag counts them
/// (`SELECT n`, `INSERT 0 n`: rows skipped unread) or not (`SHOW`: rows read and counted).
#[tokio::test]
async fn prepared_result_rows_are_counted_by_tag_or_by_reading() {
    let mut c = connect().await;
    let t = unique("pg_tag");
    c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
        .await
        .unwrap();
    let series = c
        .prepare("SELECT g FROM generate_series(1, $1::int) g")
        .await
        .unwrap();
    let values = c.prepare("VALUES (1), (2), ($1::int)").await.unwrap();
    let show = c.prepare("SHOW server_version").await.unwrap();
    let insert = c
        .prepare(&format!(
            "INSERT INTO {t} SELECT g FROM generate_series(1, $1::int) g RETURNING id"
        ))
        .await
        .unwrap();
    let cte = c
        .prepare(&format!(
            "WITH d AS (DELETE FROM {t} WHERE id <= $1 RETURNING id) SELECT id FROM d"
        ))
        .await
        .unwrap();
    for (stmt, param, expected) in [
        (series, 1000, read(1000)),
        (series, 0, read(0)),
        (values, 3, read(3)),
        (insert, 7, read(7)),
        (cte, 5, read(5)),
    ] {
        assert_eq!(
            c.execute(stmt, &[Value::Int(param)]).await.unwrap(),
            expected
        );
    }
    assert_eq!(c.execute(show, &[]).await.unwrap(), read(1));
    let left = c
        .query(&format!("SELECT count(*) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(left, vec![vec![Value::Int(2)]]);
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn works_on_a_current_thread_runtime() {
    classification(Protocol::Prepared).await;
}

#[tokio::test]
async fn converts_query_values() {
    converts_query_values_in(Protocol::Prepared).await;
}

/// Metadata queries outside the prepared protocol go through unnamed statements: the same
/// values come back.
#[tokio::test]
async fn converts_query_values_unnamed() {
    converts_query_values_in(Protocol::Simple).await;
}

async fn converts_query_values_in(protocol: Protocol) {
    let mut c = connect_with(protocol).await;
    let rows = c
        .query(
            "SELECT 1, -5::int8, 7::int2, 2.5::float8, 1.25::numeric(5,2), 'abc'::text, \
             'x'::varchar, 'y'::char(2), NULL::text, true, DATE '2024-01-02', \
             TIMESTAMP '2024-01-02 03:04:05', '1 day'::interval",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0][..12],
        [
            Value::Int(1),
            Value::Int(-5),
            Value::Int(7),
            Value::Float(2.5),
            Value::Text("1.25".into()),
            Value::Text("abc".into()),
            Value::Text("x".into()),
            Value::Text("y ".into()),
            Value::Null,
            Value::Int(1),
            Value::Text("2024-01-02".into()),
            Value::Text("2024-01-02 03:04:05".into()),
        ]
    );
    assert!(matches!(rows[0][12], Value::Text(_)), "{:?}", rows[0][12]);
    // Bind values converted to the types the server inferred.
    let rows = c
        .query(
            "SELECT $1::int2 + 1, $2::int4 + 1, $3::int8 + 1, $4::float4, $5::numeric * 2, \
             $6::text, $7::date + 1, $8::bool, $9::numeric, $10::varchar",
            &[
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Float(0.5),
                Value::Text("1.05".into()),
                Value::Text("t\\ab".into()),
                Value::Text("1998-12-01".into()),
                Value::Int(0),
                Value::Float(-12.5),
                Value::Int(99),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Int(2),
            Value::Int(3),
            Value::Int(4),
            Value::Float(0.5),
            Value::Text("2.10".into()),
            Value::Text("t\\ab".into()),
            Value::Text("1998-12-02".into()),
            Value::Int(0),
            Value::Text("-12.5".into()),
            Value::Text("99".into()),
        ]]
    );
    let e = assert_kind(
        c.query("SELECT $1::int2", &[Value::Int(1 << 20)]).await,
        ErrorKind::Statement,
    );
    assert_eq!(e.class, ErrorClass::Fatal);
    assert!(!c.table_exists("no_such_table_here").await.unwrap());
    c.close().await;
}

async fn create_bulk_table(c: &mut Connection, t: &str) {
    c.execute_text(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120) NOT NULL)"
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn bulk_loads_rows_and_escapes() {
    let mut c = connect().await;
    let t = unique("pg_bulk");
    create_bulk_table(&mut c, &t).await;
    assert!(c.table_exists(&t).await.unwrap());
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
        .query(
            &format!("SELECT c FROM {t} WHERE id = $1"),
            &[Value::Int(7)],
        )
        .await
        .unwrap();
    assert_eq!(tricky, vec![vec![Value::Text(tricky_text().into())]]);
    // A failed COPY (duplicate keys) reports the server's code and leaves the connection usable.
    let e = assert_kind(
        c.bulk_load(BulkLoad {
            table: t.clone(),
            columns: vec!["id".into(), "k".into(), "c".into()],
            rows: bulk_rows(3),
        })
        .await,
        ErrorKind::Statement,
    );
    assert_eq!(e.code.as_deref(), Some("23505"));
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// Binary COPY tuples written by `PgBinaryChunk` load the same rows as their bulk text through
/// text COPY, for every column type TPC-H and the OLTP tables use, compared row by row on the
/// server (see `typed_sample`).
#[tokio::test]
async fn binary_copy_chunks_load_what_their_text_loads() {
    let mut c = connect().await;
    let (text_t, bin_t) = (unique("pg_copy_text"), unique("pg_copy_bin"));
    for t in [&text_t, &bin_t] {
        c.execute_text(&typed_table_sql(t, "")).await.unwrap();
    }
    let (text, chunk, n) = typed_sample::<PgBinaryChunk>();
    let loaded = c
        .bulk_load_text(BulkText {
            table: text_t.clone(),
            columns: typed_columns(),
            chunks: Box::new(std::iter::once(text)),
            frozen: false,
        })
        .await
        .unwrap();
    assert_eq!(loaded, n);
    let loaded = c
        .bulk_load_pg_binary(PgBinaryRows {
            table: bin_t.clone(),
            columns: typed_columns(),
            chunks: Box::new(std::iter::once(chunk.buf)),
            frozen: false,
        })
        .await
        .unwrap();
    assert_eq!(loaded, n);
    assert_same_rows(&mut c, &text_t, &bin_t).await;
    // The server's own text of a few values, as the text path would have them.
    let shown = c
        .query(
            &format!(
                "SELECT m::text, q::text, d::text, ch::text, length(ch) FROM {bin_t} WHERE i = -7"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(shown, vec![typed_sample_shown()]);
    for t in [&text_t, &bin_t] {
        c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    }
    c.close().await;
}

/// Timing only: `cargo test -p dbrig-driver -- --ignored --nocapture bulk_rate`.
#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn bulk_rate() {
    let mut c = connect().await;
    let t = unique("pg_rate");
    create_bulk_table(&mut c, &t).await;
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
        "postgres bulk load: {n} rows in {secs:.2}s = {:.0} rows/s",
        n as f64 / secs
    );
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
}

/// A pipeline's replies, one per statement, and its Sync points: the lean client sends a Sync
/// only where the items have one and at the end (pgbench's pipeline: the statements between
/// share an implicit transaction, an error skips the rest); tokio-postgres syncs every
/// statement (each commits alone, an error skips nothing).
#[tokio::test]
async fn pipelines_reply_per_statement_and_keep_their_sync_points() {
    let mut c = connect().await;
    let t = unique("pg_pipe");
    c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
        .await
        .unwrap();
    let ins = c
        .prepare(&format!("INSERT INTO {t} VALUES ($1)"))
        .await
        .unwrap();
    let count = format!("SELECT count(*) FROM {t}");
    let insert = |id: i64| PipelineItem::Prepared(ins, vec![Value::Int(id)]);
    let outcomes = c
        .pipeline(&[
            insert(1),
            PipelineItem::Sql("SELECT g FROM generate_series(1, $1::int) g".into(), vec![Value::Int(5)]),
            PipelineItem::Sync,
            PipelineItem::Sql(format!("UPDATE {t} SET id = id + $1"), vec![Value::Int(10)]),
            PipelineItem::Sync,
        ])
        .await
        .unwrap();
    assert_eq!(outcomes, vec![changed(1), read(5), changed(1)]);
    assert_eq!(c.query(&count, &[]).await.unwrap(), vec![vec![Value::Int(1)]]);
    // A duplicate key in the middle of a section: the error comes back either way.
    let e = c
        .pipeline(&[insert(20), insert(11), insert(21)])
        .await
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("23505"), "{e}");
    let rows = c.query(&count, &[]).await.unwrap();
    // Lean: one implicit transaction, rolled back, 21 skipped. Full: 20 and 21 committed.
    let want = if LEAN { 1 } else { 3 };
    assert_eq!(rows, vec![vec![Value::Int(want)]]);
    // With a Sync after the first insert it is committed whatever follows.
    let e = c
        .pipeline(&[insert(30), PipelineItem::Sync, insert(11), insert(31)])
        .await
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("23505"), "{e}");
    let rows = c.query(&count, &[]).await.unwrap();
    let want = if LEAN { 2 } else { 5 };
    assert_eq!(rows, vec![vec![Value::Int(want)]]);
    // The connection is in step afterwards.
    assert_eq!(c.execute(ins, &[Value::Int(40)]).await.unwrap(), changed(1));
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// `COPY` as a statement (a script's, not a load): `TO STDOUT` runs with its data skipped and
/// its rows counted by its tag; `FROM STDIN` is refused by the lean client with CopyFail, an
/// error the server words, and the connection stays in step. (The lean client's own handling:
/// tokio-postgres has no such path.)
#[tokio::test]
async fn copy_statements_outside_loads() {
    if !LEAN {
        return;
    }
    let mut c = connect().await;
    let t = unique("pg_copy");
    c.execute_text(&format!(
        "CREATE TABLE {t} AS SELECT g AS id FROM generate_series(1, 1000) g"
    ))
    .await
    .unwrap();
    assert_eq!(
        c.execute_text(&format!("COPY {t} TO STDOUT")).await.unwrap(),
        changed(1000)
    );
    let e = c
        .execute_text(&format!("COPY {t} FROM STDIN"))
        .await
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("57014"), "{e}");
    assert!(e.message.contains("only in its own loads"), "{e}");
    let rows = c.query(&format!("SELECT count(*) FROM {t}"), &[]).await.unwrap();
    assert_eq!(rows, vec![vec![Value::Int(1000)]]);
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn classifies_errors() {
    let mut c = connect().await;
    let t = unique("pg_err");
    assert_kind(
        c.execute_text("SELECT * FROM no_such_table_at_all").await,
        ErrorKind::MissingTable,
    );
    let e = assert_kind(
        c.prepare("SELECT * FROM no_such_table_at_all WHERE id = $1")
            .await,
        ErrorKind::MissingTable,
    );
    assert_eq!(e.code.as_deref(), Some("42P01"));
    assert_eq!(e.class, ErrorClass::Fatal);
    c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
        .await
        .unwrap();
    assert_kind(
        c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
            .await,
        ErrorKind::TableExists,
    );
    // A duplicate key is retryable by default on PostgreSQL (sysbench's list has 23505).
    let ins = c
        .prepare(&format!("INSERT INTO {t} VALUES ($1)"))
        .await
        .unwrap();
    c.execute(ins, &[Value::Int(1)]).await.unwrap();
    let e = assert_kind(c.execute(ins, &[Value::Int(1)]).await, ErrorKind::Statement);
    assert_eq!(
        (e.code.as_deref(), e.class),
        (Some("23505"), ErrorClass::Retryable)
    );
    assert!(e.to_string().contains("statement: INSERT"), "{e}");
    let e = assert_kind(c.execute_text("SELEC 1").await, ErrorKind::Statement);
    assert_eq!(
        (e.code.as_deref(), e.class),
        (Some("42601"), ErrorClass::Fatal)
    );
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn classifies_connect_errors() {
    let o = ConnectOptions {
        lean: LEAN,
        ..Default::default()
    };
    let connect = |url: &str| {
        let t = Target::parse(url).unwrap();
        let o = o.clone();
        async move { Connection::connect(&t, &o).await }
    };
    assert_kind(
        connect("postgres://postgres@127.0.0.1:5432/no_such_db_dbrig").await,
        ErrorKind::UnknownDatabase,
    );
    assert_kind(
        connect("postgres://no_such_role_dbrig@127.0.0.1:5432/test").await,
        ErrorKind::Auth,
    );
    let e = assert_kind(
        connect("postgres://postgres@127.0.0.1:1/test").await,
        ErrorKind::Unreachable,
    );
    assert!(e.message.contains("127.0.0.1:1"), "{e}");
}

#[tokio::test]
async fn reconnects_after_terminate() {
    let mut c = connect().await;
    let mut killer = connect().await;
    let stmt = c.prepare("SELECT pg_backend_pid()").await.unwrap();
    let pid = c.query("SELECT pg_backend_pid()", &[]).await.unwrap()[0][0].clone();
    let done = killer
        .query(
            "SELECT pg_terminate_backend($1)",
            std::slice::from_ref(&pid),
        )
        .await
        .unwrap();
    assert_eq!(done, vec![vec![Value::Int(1)]]);
    // Termination is a signal: wait until the backend has acted on it (its pid has left
    // pg_stat_activity), however busy the machine, rather than for a fixed time.
    let mut polls = 0;
    while killer
        .query(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = $1",
            std::slice::from_ref(&pid),
        )
        .await
        .unwrap()
        != vec![vec![Value::Int(0)]]
    {
        polls += 1;
        assert!(
            polls < 3000,
            "backend {pid:?} still there after {polls} polls"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let e = assert_kind(c.execute(stmt, &[]).await, ErrorKind::ConnectionLost);
    assert_eq!(e.class, ErrorClass::Reconnect);
    c.reconnect().await.unwrap();
    assert_eq!(c.execute(stmt, &[]).await.unwrap(), read(1));
    let new_pid = c.query("SELECT pg_backend_pid()", &[]).await.unwrap()[0][0].clone();
    assert_ne!(pid, new_pid);
    killer.close().await;
    c.close().await;
}

#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn point_select_rate() {
    let mut c = connect().await;
    let t = unique("pg_pt");
    create_bulk_table(&mut c, &t).await;
    c.bulk_load(BulkLoad {
        table: t.clone(),
        columns: vec!["id".into(), "k".into(), "c".into()],
        rows: bulk_rows(10_000),
    })
    .await
    .unwrap();
    crate::point_select_rate(&mut c, &t, dollar).await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}
