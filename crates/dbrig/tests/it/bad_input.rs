//! Bad input: one line naming the thing and what to do, a non-zero exit.

use crate::{dbrig, error_line, ok, text};

#[test]
fn unknown_workload() {
    let out = tempfile::tempdir().unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &["run", "oltp_nonsense", "--target", "mock:"],
    ));
    assert!(
        e.contains("unknown workload 'oltp_nonsense'") && e.contains("dbrig list"),
        "{e}"
    );
}

#[test]
fn unknown_option_names_the_option() {
    let out = tempfile::tempdir().unwrap();
    let o = dbrig(out.path(), &["run", "oltp_read_only", "--tabels", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--tabels"), "{}", text(&o));
}

#[test]
fn sysbench_underscore_options_are_accepted() {
    let out = tempfile::tempdir().unwrap();
    let v = crate::json(&ok(dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:",
            "--table_size=500",
            "--range_selects=off",
            "--events=5",
            "--time=0",
            "--format=json",
        ],
    )));
    // Taken, not just accepted: 5 events; without range selects an event is 10 point
    // selects between BEGIN and COMMIT (with them, 14 reads).
    assert_eq!(v["transactions"], 5, "{v}");
    assert_eq!(
        (
            v["queries"]["read"].as_u64(),
            v["queries"]["write"].as_u64(),
            v["queries"]["other"].as_u64()
        ),
        (Some(50), Some(0), Some(10)),
        "{v}"
    );
}

#[test]
fn malformed_urls() {
    let out = tempfile::tempdir().unwrap();
    for (url, needle) in [
        ("mysql://root@127.0.0.1:99999/test", "port"),
        ("oracle://x/y", "unknown scheme"),
        ("127.0.0.1", "expected"),
    ] {
        let e = error_line(&dbrig(
            out.path(),
            &["run", "oltp_read_only", "--target", url],
        ));
        assert!(
            e.contains("invalid target URL") && e.contains(needle),
            "{url}: {e}"
        );
    }
}

#[test]
fn unreachable_servers() {
    let out = tempfile::tempdir().unwrap();
    for url in [
        "mysql://root@127.0.0.1:1/test",
        "postgres://postgres@127.0.0.1:1/test",
    ] {
        let e = error_line(&dbrig(
            out.path(),
            &[
                "run",
                "oltp_read_only",
                "--target",
                url,
                "--connect-timeout",
                "3",
            ],
        ));
        assert!(e.contains("127.0.0.1:1"), "{url}: {e}");
    }
    let e = error_line(&dbrig(
        out.path(),
        &["run", "oltp_read_only", "--target", "mock:?refuse=1"],
    ));
    assert!(e.contains("connection refused"), "{e}");
}

#[test]
fn unknown_database() {
    let out = tempfile::tempdir().unwrap();
    for url in [
        "mysql://root@127.0.0.1:3306/dbrig_no_such_db",
        "postgres://postgres@127.0.0.1:5432/dbrig_no_such_db",
    ] {
        let e = error_line(&dbrig(
            out.path(),
            &["run", "oltp_read_only", "--target", url],
        ));
        assert!(e.contains("dbrig_no_such_db"), "{url}: {e}");
    }
}

#[test]
fn option_combinations() {
    let out = tempfile::tempdir().unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &["run", "oltp_read_only", "--target", "mock:", "--time", "0"],
    ));
    assert!(e.contains("--time 0 and --events 0"), "{e}");
    let e = error_line(&dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:",
            "--mysql-password",
            "x",
        ],
    ));
    assert!(e.contains("--password-env"), "{e}");
    let e = error_line(&dbrig(
        out.path(),
        &[
            "run",
            "oltp_read_only",
            "--target",
            "mock:",
            "--password-env",
            "DBRIG_SURELY_UNSET",
        ],
    ));
    assert!(e.contains("DBRIG_SURELY_UNSET"), "{e}");
}

#[test]
fn missing_tables_on_mock() {
    let out = tempfile::tempdir().unwrap();
    let e = error_line(&dbrig(
        out.path(),
        &["run", "oltp_read_only", "--target", "mock:?tables=none"],
    ));
    assert!(
        e.contains("does not exist") && e.contains("dbrig prepare oltp_read_only"),
        "{e}"
    );
}

#[test]
fn list_shows_workloads_and_options_with_defaults() {
    let o = ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .arg("list")
        .output()
        .unwrap());
    let s = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "oltp_read_write",
        "select_batch",
        "oltp_complex_rw",
        "--table-size",
        "(default: 10000)",
        "--rand-type",
        "--rate",
    ] {
        assert!(s.contains(needle), "{needle} missing:\n{s}");
    }
}

/// `NO_COLOR` wins: the argument errors (the only coloured output dbrig has; progress bars
/// and reports are plain) carry no escape sequence even when colour is forced.
#[test]
fn no_color_turns_colour_off() {
    let run = |no_color: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"));
        c.args(["run", "oltp_read_only", "--tabels", "2"])
            .env("CLICOLOR_FORCE", "1")
            .env_remove("NO_COLOR");
        if no_color {
            c.env("NO_COLOR", "1");
        }
        text(&c.output().unwrap())
    };
    assert!(
        run(false).contains('\x1b'),
        "colour is forced: {}",
        run(false)
    );
    let plain = run(true);
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.contains("--tabels"), "{plain}");
}
