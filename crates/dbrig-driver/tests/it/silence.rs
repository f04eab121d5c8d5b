//! A server that stops answering (stopped with SIGSTOP, hung, starved), as a client sees it:
//! a door in front of the machine's servers forwards both ways until it is frozen, then holds
//! every byte. A connection with a reply limit (`ConnectOptions::reply_timeout`, what dbrig's
//! own questions use) gives up within it, and says where and how long it waited; one without
//! waits as long as the statement takes; an opening that gets no handshake fails within the
//! connect timeout. Every client, full and lean, on both engines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dbrig_driver::{ConnectOptions, Connection, ErrorKind, Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LIMIT: Duration = Duration::from_millis(500);

/// A port in front of `upstream` that forwards both ways while open and holds everything
/// while frozen.
struct Door {
    port: u16,
    frozen: Arc<AtomicBool>,
}

impl Door {
    async fn open(upstream: u16) -> Door {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(AtomicBool::new(false));
        let held = Arc::clone(&frozen);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                else {
                    continue;
                };
                let (from_client, to_client) = client.into_split();
                let (from_server, to_server) = server.into_split();
                tokio::spawn(pipe(from_client, to_server, Arc::clone(&held)));
                tokio::spawn(pipe(from_server, to_client, Arc::clone(&held)));
            }
        });
        Door { port, frozen }
    }

    fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    fn url(&self, engine: &str) -> String {
        match engine {
            "mysql" => format!("mysql://root@127.0.0.1:{}/test", self.port),
            _ => format!("postgres://postgres@127.0.0.1:{}/test", self.port),
        }
    }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while frozen.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

const UPSTREAMS: [(&str, u16); 2] = [("mysql", 3306), ("postgres", 5432)];

fn options(lean: bool, reply_timeout: Option<Duration>) -> ConnectOptions {
    ConnectOptions {
        lean,
        reply_timeout,
        connect_timeout: Duration::from_secs(5),
        ..ConnectOptions::default()
    }
}

#[tokio::test]
async fn a_statement_on_a_server_that_stopped_answering_gives_up_within_the_reply_limit() {
    for (engine, upstream) in UPSTREAMS {
        for lean in [false, true] {
            let case = format!("{engine}, lean {lean}");
            let door = Door::open(upstream).await;
            let target = Target::parse(&door.url(engine)).unwrap();
            let mut c = Connection::connect(&target, &options(lean, Some(LIMIT)))
                .await
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(c.query("SELECT 1", &[]).await.unwrap().len(), 1, "{case}");
            door.freeze();
            let began = Instant::now();
            // Bounded here too: before the reply limit existed, this waited for ever.
            let e = tokio::time::timeout(Duration::from_secs(10), c.query("SELECT 2", &[]))
                .await
                .unwrap_or_else(|_| panic!("{case}: still waiting after 10 s"))
                .unwrap_err();
            let waited = began.elapsed();
            assert_eq!(e.kind, ErrorKind::NoReply, "{case}: {e}");
            assert!(
                waited >= LIMIT && waited < Duration::from_secs(3),
                "{case}: {waited:?}"
            );
            let place = format!("no reply from 127.0.0.1:{} within 0.5 s", door.port);
            assert!(e.message.starts_with(&place), "{case}: {e}");
            assert!(!e.message.contains('\n'), "{case}: {e}");
            // Given up: the next call says so at once, and closing does not wait either.
            let again = Instant::now();
            let e = c.query("SELECT 3", &[]).await.unwrap_err();
            assert_eq!(e.kind, ErrorKind::NoReply, "{case}: {e}");
            assert!(again.elapsed() < Duration::from_millis(200), "{case}");
            let closing = Instant::now();
            c.close().await;
            assert!(closing.elapsed() < Duration::from_secs(2), "{case}");
        }
    }
}

/// The workload's statements take as long as they take (the runner bounds them at the end of
/// a run): no limit unless one is asked for.
#[tokio::test]
async fn without_a_reply_limit_a_statement_waits_for_its_server() {
    for (engine, upstream) in UPSTREAMS {
        let door = Door::open(upstream).await;
        let target = Target::parse(&door.url(engine)).unwrap();
        let mut c = Connection::connect(&target, &options(true, None))
            .await
            .unwrap();
        door.freeze();
        let waiting = tokio::time::timeout(Duration::from_millis(1500), c.query("SELECT 2", &[]));
        assert!(waiting.await.is_err(), "{engine}: gave up without a limit");
    }
}

/// A server that takes the connection (the kernel does, for a stopped one) and says nothing:
/// the opening fails within the connect timeout, the lean clients (which open the socket apart
/// from the handshake) saying it did not answer rather than that nothing is there.
#[tokio::test]
async fn a_server_that_takes_the_connection_and_says_nothing_fails_within_the_connect_timeout() {
    for (engine, upstream) in UPSTREAMS {
        for lean in [false, true] {
            let case = format!("{engine}, lean {lean}");
            let door = Door::open(upstream).await;
            door.freeze();
            let target = Target::parse(&door.url(engine)).unwrap();
            let opts = ConnectOptions {
                connect_timeout: LIMIT,
                ..options(lean, None)
            };
            let began = Instant::now();
            let e =
                tokio::time::timeout(Duration::from_secs(10), Connection::connect(&target, &opts))
                    .await
                    .unwrap_or_else(|_| panic!("{case}: still connecting after 10 s"))
                    .unwrap_err();
            let waited = began.elapsed();
            assert!(
                waited >= LIMIT && waited < Duration::from_secs(3),
                "{case}: {waited:?}"
            );
            if lean {
                assert_eq!(e.kind, ErrorKind::NoReply, "{case}: {e}");
                assert!(e.message.contains("handshake"), "{case}: {e}");
            } else {
                assert!(
                    matches!(e.kind, ErrorKind::NoReply | ErrorKind::Unreachable),
                    "{case}: {e}"
                );
            }
        }
    }
}
