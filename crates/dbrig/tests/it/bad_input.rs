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

/// What a refused value must look like: a non-zero exit (never a panic's 101), stdout empty,
/// exactly one line on stderr naming the range, and no run stored (not even an abandoned one).
#[track_caller]
fn refused_in_one_line(out: &std::path::Path, o: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !o.status.success() && o.status.code() != Some(101),
        "{:?}: {err}",
        o.status
    );
    assert!(o.stdout.is_empty(), "{}", text(o));
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(
        lines[0].starts_with("dbrig: error: ") && lines[0].contains(needle),
        "{needle}: {err}"
    );
    let db = out.join("results.db");
    if db.exists() {
        let runs = crate::json(&ok(dbrig(out, &["runs", "--format", "json"])));
        assert_eq!(runs, serde_json::json!([]), "a run was stored");
    }
}

/// Issue 30, item 12: durations, counts, rates and sizes out of range — huge, negative, zero
/// where it means nothing, NaN, infinite — on every command, are one line giving the range,
/// before anything runs: no panic (`--time 1e23` was exit 101 with "cannot convert float
/// seconds to Duration", leaving a run `abandoned`), no endless run (`--rate 1e-300`), no
/// silent clamp (`--connect-timeout 0` was 100 ms, `pgbench-init --scale 0` was 1).
#[test]
fn out_of_range_numbers_are_one_line_with_the_range() {
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "oltp_point_select", "--target", "mock:"];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let s = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            run(&["--time", "1e23"]),
            "give 0 (no limit) or 0.001 to 31536000 seconds",
        ),
        (run(&["--time", "inf"]), "not a finite number"),
        (
            run(&["--warmup", "1e300"]),
            "give 0 (none) or 0.001 to 31536000 seconds",
        ),
        (
            run(&["--report-interval", "1e300"]),
            "give 0 (off) or 0.01 to 86400 seconds",
        ),
        (
            run(&["--report-interval", "-1"]),
            "give 0 (off) or 0.01 to 86400 seconds",
        ),
        (
            run(&["--os-stats-interval", "1e300"]),
            "give 0 (off) or 0.01 to 86400 seconds",
        ),
        (
            run(&["--connect-timeout", "1e300"]),
            "give 0.001 to 604800 seconds",
        ),
        (
            run(&["--connect-timeout", "-1"]),
            "give 0.001 to 604800 seconds",
        ),
        (
            run(&["--connect-timeout", "0"]),
            "give 0.001 to 604800 seconds",
        ),
        (
            run(&["--hook-timeout", "0"]),
            "give 0.001 to 604800 seconds",
        ),
        (
            run(&["--rate", "1e-300"]),
            "give 0 (closed loop) or 0.001 to 1000000000 per second",
        ),
        (run(&["--range-size", "0"]), "give 1 to 2147483647 rows"),
        (run(&["--threads", "0"]), "give 1 to 1000000 clients"),
        (run(&["--threads", "-4"]), "give 1 to 1000000 clients"),
        (run(&["--percentile", "NaN"]), "not a finite number"),
        (run(&["--tables", "2.5"]), "not a whole number"),
        (run(&["--rand-spec-iter", "0"]), "give 1 to 1000"),
        (
            s(&[
                "prepare",
                "pgbench-init",
                "--scale",
                "0",
                "--target",
                "mock:",
            ]),
            "give 1 to 1000000",
        ),
        (
            s(&[
                "prepare",
                "pgbench-init",
                "--scale",
                "99999999",
                "--target",
                "mock:",
            ]),
            "give 0 (automatic) or 1 to 1000000",
        ),
        // Within the range, but larger than any disk dbrig can see: the rule of `tpch load`.
        (
            s(&[
                "prepare",
                "pgbench-init",
                "--scale",
                "900000",
                "--target",
                "mock:",
            ]),
            "--force-load",
        ),
        (
            s(&["micro", "memory_load", "--rows", "0", "--target", "mock:"]),
            "give 1 to 10000000000 rows",
        ),
        (
            s(&["micro", "scan_filter", "--runs", "-1", "--target", "mock:"]),
            "give 1 to 1000000 runs",
        ),
        (
            s(&["tpch", "gen", "--sf", "1", "--parallel", "1e300"]),
            "give 0 (automatic) or 1 to 1024",
        ),
        (
            s(&["tpch", "power", "--timeout", "0", "--target", "mock:"]),
            "give 0.001 to 604800 seconds",
        ),
        (
            s(&["tpch", "throughput", "--streams", "-1", "--target", "mock:"]),
            "give 0 (the spec's minimum) or 1 to 1000 streams",
        ),
        (
            s(&["perfrun", "--connect-timeout", "NaN"]),
            "not a finite number",
        ),
        (
            s(&[
                "tpch",
                "load",
                "--sf",
                "1",
                "--parallel",
                "5000",
                "--target",
                "mock:",
            ]),
            "give 0 (automatic) or 1 to 1024",
        ),
    ];
    for (args, needle) in cases {
        let out = tempfile::tempdir().unwrap();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = dbrig(out.path(), &argv);
        refused_in_one_line(out.path(), &o, needle);
    }
}

/// The same ranges in a plan file (one options struct serves both), at the key's line, with
/// nothing stored.
#[test]
fn out_of_range_numbers_in_a_plan_name_their_line() {
    let base = "name = \"p\"\nclients = [1]\nduration = 1\n[[configuration]]\nname = \"A\"\ntarget = \"mock:\"\n[[workload]]\nname = \"oltp_point_select\"\n";
    for (extra, line, needle) in [
        (
            "[workload.run]\ntime = 1e23\n",
            10,
            "give 0 (no limit) or 0.001 to 31536000 seconds",
        ),
        (
            "[workload.run]\nrate = 1e-300\n",
            10,
            "give 0 (closed loop)",
        ),
        (
            "[workload.options]\nrange-size = 0\n",
            10,
            "give 1 to 2147483647 rows",
        ),
        (
            "[environment.hooks]\ntimeout = 0\n",
            10,
            "give 0.001 to 604800 seconds",
        ),
        (
            "[environment]\nos-stats-interval = -1\n",
            10,
            "give 0 (off) or 0.01",
        ),
        (
            "[[server]]\nname = \"s\"\nengine = \"mariadb\"\nstart-timeout = 1e300\n",
            12,
            "give 0.001 to 604800",
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let plan = out.path().join("plan.toml");
        std::fs::write(&plan, format!("{base}{extra}")).unwrap();
        let o = dbrig(out.path(), &["run", plan.to_str().unwrap()]);
        refused_in_one_line(out.path(), &o, needle);
        assert!(
            text(&o).contains(&format!("plan.toml:{line}: ")),
            "{extra}: {}",
            text(&o)
        );
    }
}

/// Issue 30, item 13: more clients than the open-files limit allows. Below the hard limit the
/// soft one is raised for the run (said once); above it the run is refused before anything
/// starts, naming both limits and `ulimit -n` — not "unable to open database file" from the
/// 1 021st client.
#[test]
fn more_clients_than_open_files_is_said_before_anything_runs() {
    let out = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_dbrig");
    let shell = |limits: &str, threads: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit {limits} && exec \"$0\" run oltp_point_select --prepare --table-size 100 --threads {threads} --time 0.5 --out \"$1\""
            ))
            .arg(bin)
            .arg(out.path())
            .output()
            .unwrap()
    };
    // The hard limit itself is too low: refused, with both limits.
    let o = shell("-n 200", "1000");
    refused_in_one_line(out.path(), &o, "1000 clients need about");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("RLIMIT_NOFILE soft 200, hard 200") && e.contains("`ulimit -n "),
        "{e}"
    );
    // Only the soft one: raised, and the run goes on (SQLite: three files a client).
    let o = shell("-Sn 200", "100");
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("raised this process's open-files limit from 200 to")
            && t.contains("100 clients"),
        "{t}"
    );
}

/// Issue 30, item 27: a single command whose target refuses the connection (a failed login,
/// nothing listening) measured nothing: one line, and no run stored — not a `failed` run in
/// `dbrig runs`. (A plan records such a configuration's trials as failed: its other
/// configurations still run.)
#[test]
fn a_connection_refused_stores_no_run() {
    for args in [
        &[
            "run",
            "oltp_point_select",
            "--target",
            "mock:?refuse=1",
            "--time",
            "1",
        ][..],
        &[
            "micro",
            "scan_filter",
            "--target",
            "mock:?refuse=1",
            "--rows",
            "10",
        ][..],
    ] {
        let out = tempfile::tempdir().unwrap();
        let o = dbrig(out.path(), args);
        let e = error_line(&o);
        assert!(e.contains("connection refused"), "{e}");
        let runs = crate::json(&ok(dbrig(out.path(), &["runs", "--format", "json"])));
        assert_eq!(runs, serde_json::json!([]), "{args:?}: a run was stored");
    }
}
