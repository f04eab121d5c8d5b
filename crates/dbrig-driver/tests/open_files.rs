//! A connection that fails because this process has as many files open as it may says so,
//! with the limit and how to raise it, whatever the engine said (SQLite: "unable to open
//! database file"; a socket: "Too many open files"). A test binary of its own: it lowers its
//! own process's open-files limit.

use dbrig_driver::{ConnectOptions, Connection, ErrorKind, Target};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

#[tokio::test]
async fn running_out_of_open_files_is_named_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Target::parse(&format!("sqlite:{}", dir.path().join("t.db").display())).unwrap();
    let mariadb = Target::parse("mysql://root@127.0.0.1:3306/test").unwrap();
    let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    let was = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(open + 12),
            maximum: was.maximum,
        },
    )
    .unwrap();
    for target in [&sqlite, &mariadb] {
        let mut held = Vec::new();
        let e = loop {
            match Connection::connect(target, &ConnectOptions::default()).await {
                Ok(c) => held.push(c),
                Err(e) => break e,
            }
            assert!(held.len() < 64, "{target}: the limit was never reached");
        };
        let text = e.to_string();
        assert_eq!(e.kind, ErrorKind::OpenFiles, "{target}: {text}");
        assert!(
            text.contains(&format!("RLIMIT_NOFILE soft {}", open + 12))
                && text.contains("ulimit -n"),
            "{text}"
        );
        for c in held {
            c.close().await;
        }
    }
}
