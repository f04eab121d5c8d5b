//! Statement timeouts that stop the statement on the server: a query made slow on purpose is
//! cancelled after 0.5 s on every engine (30 s sleeps: a cancel that did not work would hit the
//! 10 s grace and reopen the connection, which the tests detect), the outcome is a timeout (not an error of the
//! query), the server no longer runs it, and the same connection answers the next query.

use std::time::Duration;

use dbrig_core::Value;
use dbrig_driver::{ConnectOptions, Connection, ErrorKind, Target};

const HALF: Duration = Duration::from_millis(500);

async fn connect(url: &str) -> Connection {
    connect_lean(url, false).await
}

/// `lean`: the benchmark clients' lean client (on PostgreSQL its own cancel request).
async fn connect_lean(url: &str, lean: bool) -> Connection {
    let options = ConnectOptions {
        lean,
        ..Default::default()
    };
    Connection::connect(&Target::parse(url).unwrap(), &options)
        .await
        .unwrap()
}

fn single_int(rows: &[Vec<Value>]) -> i64 {
    rows[0][0].as_i64().expect("an integer")
}

#[track_caller]
fn assert_timeout<T: std::fmt::Debug>(r: Result<T, dbrig_driver::DriverError>) {
    let e = crate::assert_kind(r, ErrorKind::Timeout);
    assert!(e.is_timeout());
    assert!(e.message.contains("cancelled on the server"), "{e}");
    // Not the fallback for a server that ignored the cancel.
    assert!(!e.message.contains("reopened"), "{e}");
}

/// How long a stopped statement may still show in the server's list of sessions: the server
/// answers a killed statement before it clears its text from that list (MariaDB's
/// `dispatch_command` sends the reply, then logs it, then resets the query), so the list is
/// read until the statement is gone. A statement that was not stopped stays far longer (a 30 s
/// sleep).
const LIST_SETTLES: Duration = Duration::from_secs(5);

/// The count `sql` gives for session `id`, read until it is 0 or [`LIST_SETTLES`] has passed.
async fn still_running(observer: &mut Connection, sql: &str, id: i64) -> i64 {
    let deadline = std::time::Instant::now() + LIST_SETTLES;
    loop {
        let n = single_int(&observer.query(sql, &[Value::Int(id)]).await.unwrap());
        if n == 0 || std::time::Instant::now() >= deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn mysql_timeout_kills_the_query_on_the_server() {
    let url = "mysql://root@127.0.0.1:3306/test";
    let mut c = connect(url).await;
    let id = single_int(&c.query("SELECT CONNECTION_ID()", &[]).await.unwrap());
    // SLEEP interrupted by KILL QUERY returns 1 without an error: still a timeout.
    assert_timeout(c.query_with_timeout("SELECT SLEEP(30)", &[], HALF).await);
    let mut observer = connect(url).await;
    let running = still_running(
        &mut observer,
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'",
        id,
    )
    .await;
    assert_eq!(running, 0, "the SLEEP still runs on the server");
    // Same connection, next statement unaffected (no stale kill).
    let rows = c.query("SELECT 41 + 1", &[]).await.unwrap();
    assert_eq!(single_int(&rows), 42);
    assert_eq!(
        single_int(&c.query("SELECT CONNECTION_ID()", &[]).await.unwrap()),
        id,
        "the connection was kept, not reopened"
    );
    // A statement sent as text is cancelled the same way.
    assert_timeout(c.execute_text_with_timeout("DO SLEEP(30)", HALF).await);
    // Fast statements are untouched by the timeout.
    let rows = c
        .query_with_timeout("SELECT 7", &[], Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(single_int(&rows), 7);
    c.close().await;
    observer.close().await;
}

#[tokio::test]
async fn postgres_timeout_cancels_the_query_on_the_server() {
    postgres_timeout_cancels(false).await;
}

#[tokio::test]
async fn postgres_lean_timeout_cancels_the_query_on_the_server() {
    postgres_timeout_cancels(true).await;
}

/// Over TLS, through a door that lets in only TLS (as a TLS-only proxy or load balancer in
/// front of a managed PostgreSQL does): the cancel request must go over TLS too, as libpq 17
/// sends it; one sent in the clear is dropped at the door and the statement runs on.
#[tokio::test]
async fn postgres_timeout_cancels_over_tls_through_a_tls_only_door() {
    postgres_timeout_cancels_through_a_tls_only_door(false).await;
}

#[tokio::test]
async fn postgres_lean_timeout_cancels_over_tls_through_a_tls_only_door() {
    postgres_timeout_cancels_through_a_tls_only_door(true).await;
}

async fn postgres_timeout_cancels_through_a_tls_only_door(lean: bool) {
    let door = tls_only_door().await;
    let url = format!("postgres://postgres@127.0.0.1:{door}/test?sslmode=require");
    postgres_timeout_cancels_at(lean, &url).await;
}

/// A port in front of the machine's PostgreSQL that forwards only connections that begin
/// with the SSLRequest; any other first message (a startup or cancel request in the clear)
/// is dropped with the socket.
async fn tls_only_door() -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut first = [0u8; 8];
                if client.read_exact(&mut first).await.is_err() || first != SSL_REQUEST {
                    return;
                }
                let Ok(mut server) = tokio::net::TcpStream::connect("127.0.0.1:5432").await else {
                    return;
                };
                if server.write_all(&first).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    port
}

async fn postgres_timeout_cancels(lean: bool) {
    postgres_timeout_cancels_at(lean, "postgres://postgres@127.0.0.1:5432/test").await;
}

async fn postgres_timeout_cancels_at(lean: bool, url: &str) {
    let mut c = connect_lean(url, lean).await;
    let pid = single_int(
        &c.query("SELECT pg_backend_pid()::bigint", &[])
            .await
            .unwrap(),
    );
    assert_timeout(c.query_with_timeout("SELECT pg_sleep(30)", &[], HALF).await);
    let mut observer = connect(url).await;
    let running = still_running(
        &mut observer,
        "SELECT COUNT(*)::bigint FROM pg_stat_activity \
         WHERE pid = $1 AND state = 'active' AND query LIKE '%pg_sleep%'",
        pid,
    )
    .await;
    assert_eq!(running, 0, "pg_sleep still runs on the server");
    let rows = c.query("SELECT 41 + 1", &[]).await.unwrap();
    assert_eq!(single_int(&rows), 42);
    assert_eq!(
        single_int(
            &c.query("SELECT pg_backend_pid()::bigint", &[])
                .await
                .unwrap()
        ),
        pid,
        "the connection was kept, not reopened"
    );
    assert_timeout(
        c.execute_text_with_timeout("SELECT pg_sleep(30)", HALF)
            .await,
    );
    let rows = c
        .query_with_timeout("SELECT 7::bigint", &[], Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(single_int(&rows), 7);
    c.close().await;
    observer.close().await;
}

#[tokio::test]
async fn sqlite_timeout_interrupts_the_statement() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("t.sqlite").display());
    let mut c = connect(&url).await;
    // Counts to 10^12: minutes of work unless interrupted.
    let slow = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000000000) \
                SELECT COUNT(*) FROM n";
    assert_timeout(c.query_with_timeout(slow, &[], HALF).await);
    // The connection's single thread answers again: the statement is no longer running.
    let rows = c.query("SELECT 41 + 1", &[]).await.unwrap();
    assert_eq!(single_int(&rows), 42);
    assert_timeout(c.execute_text_with_timeout(slow, HALF).await);
    let rows = c
        .query_with_timeout("SELECT 7", &[], Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(single_int(&rows), 7);
    c.close().await;
}

#[tokio::test]
async fn mock_timeout_and_cancel_handle() {
    let mut c = connect("mock:?latency_us=30000000").await;
    assert_timeout(
        c.query_with_timeout("SELECT slow", &[], Duration::from_millis(50))
            .await,
    );
    // The handle also works on its own, from another task.
    let handle = c.cancel_handle();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        handle.cancel().await
    });
    let e = c.query("SELECT slow", &[]).await.unwrap_err();
    assert_eq!(e.code.as_deref(), Some("1317"), "{e}");
    assert!(
        !e.is_timeout(),
        "a bare cancel is the engine's error, not a timeout"
    );
    canceller.await.unwrap().unwrap();
}
