use std::time::Instant;

use dbrig_core::{ErrorClass, Value};
use dbrig_driver::{
    BulkLoad, BulkText, ConnectOptions, Connection, ErrorKind, ErrorPolicy, MariaDbBulkChunk,
    MariaDbBulkRows, Target, TypedBulkFormat,
};

use crate::*;

const URL: &str = "mysql://root@127.0.0.1:3306/test";

async fn connect_with(prepared: bool) -> Connection {
    let options = ConnectOptions {
        protocol: if prepared {
            dbrig_driver::Protocol::Prepared
        } else {
            dbrig_driver::Protocol::Simple
        },
        ..Default::default()
    };
    Connection::connect(&Target::parse(URL).unwrap(), &options)
        .await
        .unwrap()
}

async fn connect() -> Connection {
    connect_with(true).await
}

/// The lean client, as benchmark clients and loaders use it.
async fn connect_lean() -> Connection {
    let options = ConnectOptions {
        lean: true,
        ..Default::default()
    };
    Connection::connect(&Target::parse(URL).unwrap(), &options)
        .await
        .unwrap()
}

async fn classification(prepared: bool) {
    let mut c = connect_with(prepared).await;
    let t = unique("my_cls");
    c.execute_text(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120) NOT NULL)"
    ))
    .await
    .unwrap();
    fill_classification_table(&mut c, &t, q).await;
    check_classification(&mut c, &t, q).await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn connects_and_reports_version() {
    let c = connect().await;
    assert!(
        c.server_version().contains("MariaDB"),
        "{}",
        c.server_version()
    );
    assert!(
        c.server_version().starts_with("10."),
        "{}",
        c.server_version()
    );
    c.close().await;
}

#[tokio::test]
async fn classifies_prepared_statements() {
    classification(true).await;
}

#[tokio::test]
async fn classifies_text_statements() {
    classification(false).await;
}

#[tokio::test(flavor = "current_thread")]
async fn works_on_a_current_thread_runtime() {
    classification(true).await;
}

#[tokio::test]
async fn converts_query_values() {
    let mut c = connect().await;
    let expected = vec![vec![
        Value::Int(1),
        Value::Int(-5),
        Value::Float(2.5),
        Value::Text("1.25".into()),
        Value::Text("abc".into()),
        Value::Null,
        Value::Text("2024-01-02".into()),
        Value::Text("2024-01-02 03:04:05".into()),
    ]];
    let sql = "SELECT 1, CAST(-5 AS SIGNED), CAST(2.5 AS DOUBLE), CAST(1.25 AS DECIMAL(5,2)), \
               'abc', NULL, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05'";
    // Text protocol (no parameters).
    assert_eq!(c.query(sql, &[]).await.unwrap(), expected);
    // Binary protocol (with parameters).
    let rows = c
        .query(
            &format!("{sql}, ?, ?, ?"),
            &[
                Value::Int(42),
                Value::Text("x\ty".into()),
                Value::Float(0.5),
            ],
        )
        .await
        .unwrap();
    let mut with_params = expected[0].clone();
    with_params.extend([
        Value::Int(42),
        Value::Text("x\ty".into()),
        Value::Float(0.5),
    ]);
    assert_eq!(rows, vec![with_params]);
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
    let t = unique("my_bulk");
    c.execute_text(&format!(
        "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(120) NOT NULL)"
    ))
    .await
    .unwrap();
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
        .query(&format!("SELECT c FROM {t} WHERE id = ?"), &[Value::Int(7)])
        .await
        .unwrap();
    assert_eq!(tricky, vec![vec![Value::Text(tricky_text().into())]]);
    // LOCAL turns duplicate keys into warnings; the driver must not let rows vanish silently.
    let e = assert_kind(
        c.bulk_load(BulkLoad {
            table: t.clone(),
            columns: vec!["id".into(), "k".into(), "c".into()],
            rows: Box::new(
                (19_999..=20_002)
                    .map(|i| vec![Value::Int(i), Value::Int(0), Value::Text("d".into())]),
            ),
        })
        .await,
        ErrorKind::Statement,
    );
    assert!(e.message.contains("stored 2 of 4 rows"), "{e}");
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// Rows written as `MariaDbBulkChunk`s (integers and dates binary) load the same rows as their
/// bulk text through the bulk command's text path, for every column type TPC-H and the OLTP
/// tables use, compared row by row on the server (see `typed_sample`).
#[tokio::test]
async fn typed_bulk_chunks_load_what_their_text_loads() {
    let mut c = connect_lean().await;
    assert_eq!(c.typed_bulk_format(), Some(TypedBulkFormat::MariaDbBulk));
    let (text_t, typed_t) = (unique("my_bulk_text"), unique("my_bulk_typed"));
    for t in [&text_t, &typed_t] {
        c.execute_text(&typed_table_sql(t, " CHARACTER SET utf8mb4"))
            .await
            .unwrap();
    }
    let (text, chunk, n) = typed_sample::<MariaDbBulkChunk>();
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
        .bulk_load_mariadb(MariaDbBulkRows {
            table: typed_t.clone(),
            columns: typed_columns(),
            chunks: Box::new(std::iter::once(chunk)),
        })
        .await
        .unwrap();
    assert_eq!(loaded, n);
    assert_same_rows(&mut c, &text_t, &typed_t).await;
    let shown = c
        .query(
            &format!(
                "SELECT CAST(m AS CHAR), CAST(q AS CHAR), CAST(d AS CHAR), ch, LENGTH(ch) FROM {typed_t} WHERE i = -7"
            ),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(shown, vec![typed_sample_shown()]);
    let utf8 = c
        .query(&format!("SELECT v FROM {typed_t} WHERE i = -7"), &[])
        .await
        .unwrap();
    assert_eq!(utf8, vec![vec![Value::Text("ünïcødé ✓".into())]]);
    for t in [&text_t, &typed_t] {
        c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    }
    c.close().await;
}

/// A bulk load runs in transactions of 64 commands, not one per command (each commit flushes
/// the redo log): 130 one-row commands commit twice on the way (`COMMIT AND CHAIN`) and once
/// at the end, as the server's own session counter says; and every row is there.
#[tokio::test]
async fn a_bulk_load_commits_every_64_commands() {
    use dbrig_driver::FieldWriter;
    let mut c = connect_lean().await;
    let t = unique("my_bulk_txn");
    c.execute_text(&format!("CREATE TABLE {t} (i INT PRIMARY KEY)"))
        .await
        .unwrap();
    let commits = async |c: &mut Connection| -> i64 {
        let v = c
            .query("SHOW SESSION STATUS LIKE 'Com_commit'", &[])
            .await
            .unwrap();
        match &v[0][1] {
            Value::Text(n) => n.parse().unwrap(),
            other => panic!("{other:?}"),
        }
    };
    let before = commits(&mut c).await;
    let chunks = (0..130).map(|i| {
        let mut chunk = MariaDbBulkChunk::default();
        chunk.row(1);
        chunk.int4(i);
        chunk
    });
    let loaded = c
        .bulk_load_mariadb(MariaDbBulkRows {
            table: t.clone(),
            columns: vec!["i".into()],
            chunks: Box::new(chunks),
        })
        .await
        .unwrap();
    assert_eq!(loaded, 130);
    assert_eq!(commits(&mut c).await - before, 3);
    let n = c
        .query(&format!("SELECT COUNT(*), SUM(i) FROM {t}"), &[])
        .await
        .unwrap();
    assert_eq!(n, vec![vec![Value::Int(130), Value::Text("8385".into())]]);
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// Timing only: `cargo test --release -p dbrig-driver -- --ignored --nocapture bulk_rate`.
/// Rounds alternate the paths: LOAD DATA (full client) and the bulk command (lean client),
/// into sysbench's table shape.
#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn bulk_rate() {
    let mut c = connect().await;
    let t = unique("my_rate");
    let rows = 300_000;
    for round in 0..3 {
        for lean in [false, true] {
            c.execute_text(&format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, \
                 pad CHAR(60) NOT NULL)"
            ))
            .await
            .unwrap();
            let options = ConnectOptions {
                lean,
                ..Default::default()
            };
            let mut loader = Connection::connect(&Target::parse(URL).unwrap(), &options)
                .await
                .unwrap();
            let start = Instant::now();
            let n = loader
                .bulk_load(BulkLoad {
                    table: t.clone(),
                    columns: vec!["id".into(), "k".into(), "c".into(), "pad".into()],
                    rows: Box::new((1..=rows).map(|i| {
                        vec![
                            Value::Int(i),
                            Value::Int(i % 1000),
                            Value::Text(format!("{i:0>119}-")),
                            Value::Text(format!("{:0>59}-", i * 7)),
                        ]
                    })),
                })
                .await
                .unwrap();
            let secs = start.elapsed().as_secs_f64();
            println!(
                "round {round} {:<22}: {n} rows in {secs:.2}s = {:.0} rows/s",
                loader.mysql_bulk_path().unwrap_or("?"),
                n as f64 / secs
            );
            loader.close().await;
            c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
        }
    }
}

#[tokio::test]
async fn classifies_errors() {
    let mut c = connect().await;
    let t = unique("my_err");
    assert_kind(
        c.execute_text("SELECT * FROM no_such_table_at_all").await,
        ErrorKind::MissingTable,
    );
    let e = assert_kind(
        c.prepare("SELECT * FROM no_such_table_at_all WHERE id = ?")
            .await,
        ErrorKind::MissingTable,
    );
    assert_eq!(e.code.as_deref(), Some("1146"));
    assert_eq!(e.class, ErrorClass::Fatal);
    assert!(e.to_string().contains("statement: SELECT"), "{e}");
    c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
        .await
        .unwrap();
    assert_kind(
        c.execute_text(&format!("CREATE TABLE {t} (id INT PRIMARY KEY)"))
            .await,
        ErrorKind::TableExists,
    );
    // A duplicate key is a plain statement error: fatal by default, retryable when listed.
    c.execute_text(&format!("INSERT INTO {t} VALUES (1)"))
        .await
        .unwrap();
    let e = assert_kind(
        c.execute_text(&format!("INSERT INTO {t} VALUES (1)")).await,
        ErrorKind::Statement,
    );
    assert_eq!(
        (e.code.as_deref(), e.class),
        (Some("1062"), ErrorClass::Fatal)
    );
    let options = ConnectOptions {
        policy: ErrorPolicy::from_list("1062"),
        ..Default::default()
    };
    let mut lenient = Connection::connect(&Target::parse(URL).unwrap(), &options)
        .await
        .unwrap();
    let e = assert_kind(
        lenient
            .execute_text(&format!("INSERT INTO {t} VALUES (1)"))
            .await,
        ErrorKind::Statement,
    );
    assert_eq!(e.class, ErrorClass::Retryable);
    lenient.close().await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

#[tokio::test]
async fn classifies_connect_errors() {
    let o = ConnectOptions::default();
    let connect = |url: &str| {
        let t = Target::parse(url).unwrap();
        let o = o.clone();
        async move { Connection::connect(&t, &o).await }
    };
    assert_kind(
        connect("mysql://root@127.0.0.1:3306/no_such_db_dbrig").await,
        ErrorKind::UnknownDatabase,
    );
    assert_kind(
        connect("mysql://no_such_user_dbrig@127.0.0.1:3306/test").await,
        ErrorKind::Auth,
    );
    let e = assert_kind(
        connect("mysql://root@127.0.0.1:1/test").await,
        ErrorKind::Unreachable,
    );
    assert!(e.message.contains("127.0.0.1:1"), "{e}");
}

#[tokio::test]
async fn reconnects_after_kill() {
    let mut c = connect().await;
    let mut killer = connect().await;
    let stmt = c.prepare("SELECT CONNECTION_ID()").await.unwrap();
    let id = c.query("SELECT CONNECTION_ID()", &[]).await.unwrap()[0][0]
        .as_i64()
        .unwrap();
    killer.execute_text(&format!("KILL {id}")).await.unwrap();
    let e = assert_kind(c.execute(stmt, &[]).await, ErrorKind::ConnectionLost);
    assert_eq!(e.class, ErrorClass::Reconnect);
    c.reconnect().await.unwrap();
    assert_eq!(c.execute(stmt, &[]).await.unwrap(), read(1));
    let new_id = c.query("SELECT CONNECTION_ID()", &[]).await.unwrap()[0][0]
        .as_i64()
        .unwrap();
    assert_ne!(id, new_id);
    killer.close().await;
    c.close().await;
}

#[tokio::test]
#[ignore = "timing only, by hand (--ignored --nocapture)"]
async fn point_select_rate() {
    let mut c = connect().await;
    let t = unique("my_pt");
    create_bulk_table(&mut c, &t).await;
    c.bulk_load(BulkLoad {
        table: t.clone(),
        columns: vec!["id".into(), "k".into(), "c".into()],
        rows: bulk_rows(10_000),
    })
    .await
    .unwrap();
    crate::point_select_rate(&mut c, &t, q).await;
    c.execute_text(&format!("DROP TABLE {t}")).await.unwrap();
    c.close().await;
}

/// `query_text`: the lean client hands a text query's cells over as the server sent them
/// (DECIMAL's digits, NULL as none, several rows and columns, a later result set dropped), the
/// same as the full client's values written as text.
#[tokio::test]
async fn query_text_is_the_servers_text() {
    let sql = "SELECT 1 AS a, CAST(0.20 AS DECIMAL(4,2)) AS b, NULL AS c, 'x\u{e9}y' AS d \
               UNION ALL SELECT -7, 12.50, 'n', ''";
    let mut lean = connect_lean().await;
    let t = lean.query_text(sql).await.unwrap();
    assert_eq!(t.nfields, 4);
    assert_eq!(t.nrows(), 2);
    let rows: Vec<Vec<Option<String>>> = (0..t.nrows())
        .map(|r| {
            t.row(r)
                .map(|c| c.map(|b| String::from_utf8(b.to_vec()).unwrap()))
                .collect()
        })
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        rows,
        vec![
            vec![s("1"), s("0.20"), None, s("x\u{e9}y")],
            vec![s("-7"), s("12.50"), s("n"), s("")],
        ]
    );
    let mut full = connect().await;
    assert_eq!(full.query_text(sql).await.unwrap(), t);
    // No rows: no cells; an error: the server's.
    let none = lean
        .query_text("SELECT 1 FROM DUAL WHERE 1 = 0")
        .await
        .unwrap();
    assert_eq!((none.nfields, none.nrows()), (1, 0));
    assert!(
        lean.query_text("SELECT * FROM no_such_table_qt")
            .await
            .is_err()
    );
    lean.close().await;
    full.close().await;
}
