//! Results on a server: a run stored with `--results postgres://…` (or `mysql://…`) reports
//! exactly as the same run does from a SQLite file.

use std::path::Path;

use dbrig_store::{Imported, Importer, RunDocument, Store};

use crate::{dbrig, ok, text};

/// A small SQLite workload measured into a results server; the run is then copied, whole, into
/// a SQLite results file, and `dbrig report` of it from either place prints the same text and
/// the same JSON.
fn reports_alike(url: &str) {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("bench.sqlite").display());
    let common = [
        "oltp_read_only",
        "--target",
        &target,
        "--table-size",
        "500",
        "--tables",
        "1",
        "--threads",
        "2",
    ];
    let mut prepare = vec!["prepare"];
    prepare.extend(common);
    ok(dbrig(out.path(), &prepare));
    let mut run = vec!["run"];
    run.extend(common);
    run.extend([
        "--events",
        "200",
        "--time",
        "0",
        "--report-interval",
        "1",
        "--results",
        url,
    ]);
    let measured = text(&ok(dbrig(out.path(), &run)));
    assert!(!measured.contains("Sekr3t"), "{measured}");

    // Copy the run into a file through the store, as `dbrig results copy` does.
    let server = dbrig_store::Store::open_server(&address(url)).unwrap();
    let id = server.latest_run_id().unwrap().expect("the run is stored");
    let file_path = out.path().join("copy.db");
    let mut file = Store::open(&file_path).unwrap();
    let doc = RunDocument::read(&*server, id).unwrap();
    assert!(matches!(
        Importer::new(&mut file).import(&doc).unwrap(),
        Imported::Stored(_)
    ));
    let file_id = file.latest_run_id().unwrap().unwrap();
    assert_eq!(file.run(file_id).unwrap().uid, doc.uid);
    drop(file);

    let file_arg = file_path.display().to_string();
    for format in ["text", "json", "markdown", "csv"] {
        let report = |results: &str, run: &str| {
            let o = ok(dbrig(
                out.path(),
                &["report", run, "--results", results, "--format", format],
            ));
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let from_server = report(url, &id.to_string());
        let from_file = report(&file_arg, &file_id.to_string());
        assert_eq!(from_server, from_file, "{format}");
        assert!(!from_server.is_empty());
    }
}

/// The address the test's URL names (the machine's servers: no password needed).
fn address(url: &str) -> dbrig_store::ServerAddress {
    let (engine, rest, user, port) = if let Some(rest) = url.strip_prefix("postgres://") {
        (dbrig_store::ServerEngine::Postgres, rest, "postgres", 5432)
    } else {
        let rest = url.strip_prefix("mysql://").unwrap();
        (dbrig_store::ServerEngine::Mysql, rest, "root", 3306)
    };
    let database = Path::new(rest).file_name().unwrap().to_string_lossy();
    dbrig_store::ServerAddress {
        engine,
        endpoint: dbrig_store::ServerEndpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        user: user.into(),
        database: database.into_owned(),
        password: None,
        shown: url.into(),
    }
}

#[test]
fn a_run_on_a_postgres_results_server_reports_as_from_a_file() {
    let db = crate::postgres::TestDb::new("results_server");
    reports_alike(&db.url());
}

#[test]
fn a_run_on_a_mariadb_results_server_reports_as_from_a_file() {
    let db = crate::mysql::TestDb::new("results_server");
    reports_alike(&db.url());
}

/// `dbrig results export` / `import` and `results copy`: two runs travel from a SQLite file
/// through a compressed export into another file, and by copy into a PostgreSQL results
/// server, twice (the second copy and import store nothing); each place reports each run the
/// same (JSON).
#[test]
fn results_move_by_export_import_and_copy_once() {
    let db = crate::postgres::TestDb::new("results_copy");
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("bench.sqlite").display());
    let a = out.path().join("a.db").display().to_string();
    let b = out.path().join("b.db").display().to_string();
    let export = out.path().join("runs.jsonl.gz").display().to_string();
    let common = [
        "oltp_point_select",
        "--target",
        &target,
        "--table-size",
        "300",
    ];
    let mut prepare = vec!["prepare"];
    prepare.extend(common);
    ok(dbrig(out.path(), &prepare));
    for _ in 0..2 {
        let mut run = vec!["run"];
        run.extend(common);
        run.extend(["--events", "100", "--time", "0", "--results", &a]);
        ok(dbrig(out.path(), &run));
    }
    let said = |args: &[&str]| text(&ok(dbrig(out.path(), args)));
    assert!(said(&["results", "export", "--to", &export, "--results", &a]).contains("2 run(s)"));
    // The export is gzip: its first bytes are gzip's magic number.
    assert_eq!(std::fs::read(&export).unwrap()[..2], [0x1f, 0x8b]);
    assert!(
        said(&["results", "import", &export, "--results", &b])
            .contains("2 run(s) copied, 0 already there")
    );
    assert!(
        said(&["results", "import", &export, "--results", &b])
            .contains("0 run(s) copied, 2 already there")
    );
    let url = db.url();
    // `results copy` names both places itself: no `--out`.
    let copy = || {
        text(&ok(std::process::Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .args(["results", "copy", &a, &url])
            .output()
            .unwrap()))
    };
    assert!(copy().contains("2 run(s) copied, 0 already there"));
    assert!(copy().contains("0 run(s) copied, 2 already there"));
    // Every place holds both runs, numbered 1 and 2 as in the file they came from.
    for run in ["1", "2"] {
        let report = |results: &str| {
            let o = ok(dbrig(
                out.path(),
                &["report", run, "--results", results, "--format", "json"],
            ));
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let original = report(&a);
        assert_eq!(report(&b), original, "run {run}: imported");
        assert_eq!(report(&url), original, "run {run}: copied");
    }
}

/// `--tag` and `--commit` are stored with a measured run, and `dbrig runs` lists them with
/// the host's fingerprint; a command that only reads results refuses them.
#[test]
fn a_run_carries_its_tags_commit_and_host() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("bench.sqlite").display());
    let common = [
        "oltp_point_select",
        "--target",
        &target,
        "--table-size",
        "100",
    ];
    let mut prepare = vec!["prepare"];
    prepare.extend(common);
    ok(dbrig(out.path(), &prepare));
    let mut run = vec!["run"];
    run.extend(common);
    run.extend([
        "--events",
        "50",
        "--time",
        "0",
        "--tag",
        "branch=main",
        "--tag",
        "pr=123",
        "--commit",
        "0123abcd",
    ]);
    ok(dbrig(out.path(), &run));
    let runs = crate::json(&ok(dbrig(out.path(), &["runs", "--format", "json"])));
    // The prepare is a run of its own (a load), untagged; the measured run is the last.
    assert_eq!(runs[0]["commit"], serde_json::Value::Null);
    let r = runs.as_array().unwrap().last().unwrap();
    assert_eq!(r["commit"], "0123abcd", "{r}");
    assert_eq!(r["tags"]["branch"], "main");
    assert_eq!(r["tags"]["pr"], "123");
    assert_eq!(r["uid"].as_str().unwrap().len(), 36);
    let fingerprint = r["host"]["fingerprint"].as_str().unwrap();
    assert_eq!(fingerprint.len(), 12);
    assert!(r["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    let listed = text(&ok(dbrig(out.path(), &["runs"])));
    assert!(listed.contains("branch=main pr=123"), "{listed}");
    assert!(
        listed.contains("0123abcd") && listed.contains(fingerprint),
        "{listed}"
    );
    let refused = crate::error_line(&dbrig(out.path(), &["runs", "--tag", "a=b"]));
    assert!(refused.contains("--tag and --commit"), "{refused}");
}

/// A password in the `--results` URL reaches the server's client only: not the output, not
/// the stored command line, not anything `runs` or `report` print. (The machine's
/// PostgreSQL trusts local connections, so any password does.)
#[test]
fn a_results_password_is_never_shown_or_stored() {
    let db = crate::postgres::TestDb::new("results_secret");
    let url = format!("postgres://postgres:Sekr3t-pw@127.0.0.1:5432/{}", db.0);
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("bench.sqlite").display());
    let common = [
        "oltp_point_select",
        "--target",
        &target,
        "--table-size",
        "100",
    ];
    let mut prepare = vec!["prepare"];
    prepare.extend(common);
    ok(dbrig(out.path(), &prepare));
    let mut run = vec!["run"];
    run.extend(common);
    run.extend(["--events", "20", "--time", "0", "--results", &url]);
    let said = text(&ok(dbrig(out.path(), &run)));
    let runs = text(&ok(dbrig(
        out.path(),
        &["runs", "--results", &url, "--format", "json"],
    )));
    let report = text(&ok(dbrig(
        out.path(),
        &["report", "--results", &url, "--format", "json"],
    )));
    let stored = std::process::Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-At",
            "-d",
            &db.0,
            "-c",
        ])
        .arg("SELECT string_agg(row_to_json(r)::text, ' ') FROM run r")
        .output()
        .unwrap();
    assert!(stored.status.success());
    let stored = String::from_utf8_lossy(&stored.stdout).into_owned();
    for (what, s) in [
        ("output", &said),
        ("runs", &runs),
        ("report", &report),
        ("stored", &stored),
    ] {
        assert!(!s.contains("Sekr3t"), "{what}: {s}");
    }
    assert!(stored.contains("postgres:***@127.0.0.1"), "{stored}");
}
