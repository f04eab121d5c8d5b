//! sql-bench and builds through the one executor: a real sql-bench test (`test-connect` with
//! `--small-test`, a few loops) against the machine's MariaDB, a managed MariaDB built by a
//! recipe (the machine's binaries installed in the RPM layout, standing in for a compile), a
//! bare server binary with its share folder given, and the machine's PostgreSQL; a failing
//! build fails its configuration's trials and the plan goes on; the second run reuses the
//! build; stored, reported, compared, exported in sql-bench's own layout.

use std::path::{Path, PathBuf};
use std::process::Command;

use dbrig_store::{Store, TrialStatus};

use crate::{dbrig, ok, text};

/// The suite, fetched (or found cached) by scripts/sql-bench.
fn suite() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = Command::new(root.join("scripts/sql-bench"))
        .output()
        .expect("scripts/sql-bench runs");
    assert!(
        o.status.success(),
        "scripts/sql-bench failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

type Trial = (String, TrialStatus, Option<String>, serde_json::Value);

fn trials_of(db: &Path, run: i64) -> Vec<Trial> {
    let store = Store::open(db).unwrap();
    let run = store
        .runs()
        .unwrap()
        .into_iter()
        .find(|r| r.id.to_string() == run.to_string())
        .unwrap();
    let mut out = Vec::new();
    for c in store.cells(run.id).unwrap() {
        for t in store.trials(c.id).unwrap() {
            out.push((
                c.configuration.clone(),
                t.status,
                t.reason.clone(),
                crate::trial_json(&t),
            ));
        }
    }
    out
}

#[test]
fn sql_bench_on_mariadb_a_built_server_a_bare_binary_and_postgres() {
    let suite = suite();
    // Databases of this test's own; sql-bench runs in `<db>_sqlbench` beside each.
    let my = crate::mysql::TestDb::new("sqlbench");
    let pg = crate::postgres::TestDb::new("sqlbench");
    let _dbs = SuiteDbs {
        mysql: vec![format!("{}_sqlbench", my.0)],
        pg: vec![format!("{}_sqlbench", pg.0)],
    };
    let out = tempfile::tempdir().unwrap();
    let src = out.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("VERSION"), "standing in for a source tree\n").unwrap();
    let bare = out.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    std::fs::copy("/usr/sbin/mariadbd", bare.join("mariadbd")).unwrap();
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plans/install-machine-mariadb.sh")
        .canonicalize()
        .unwrap();
    let plan = format!(
        r#"
name = "sqlbench"
trials = 1
clients = [1]
baseline = "machine"

[[server]]
name = "built"
engine = "mariadb"
source = "{src}"
build = "sh {recipe}"

[[server]]
name = "bare"
engine = "mariadb"
server-bin = "{bare}/mariadbd"
share-dir = "/usr/share/mysql"

[[server]]
name = "broken"
engine = "mariadb"
source = "{src}"
build = "echo compiling sql/mysqld.cc; echo 'mysqld.cc:1: fatal error: boom.h: No such file' >&2; exit 2"

[[configuration]]
name = "machine"
target = "{my}"

[[configuration]]
name = "built"
server = "built"

[[configuration]]
name = "bare"
server = "bare"

[[configuration]]
name = "broken"
server = "broken"

[[configuration]]
name = "pg"
target = "{pg}"

[[workload]]
name = "sql-bench"
[workload.options]
suite = "{suite}"
tests = ["connect"]
small-test = true
options = ["--loop-count=20000"]
timeout = 120
"#,
        src = src.display(),
        recipe = recipe.display(),
        bare = bare.display(),
        suite = suite.display(),
        my = my.url(),
        pg = pg.url(),
    );
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let first = dbrig(out.path(), &["run", path.to_str().unwrap()]);
    let all = text(&first);
    // The failed build fails its configuration; the plan goes on.
    assert!(!first.status.success(), "{all}");
    assert!(all.contains("1 of 5 trial(s) failed"), "{all}");
    let db = out.path().join("results.db");
    let trials = trials_of(&db, 1);
    let by = |c: &str| trials.iter().find(|t| t.0 == c).unwrap();
    for c in ["machine", "built", "bare", "pg"] {
        let t = by(c);
        assert_eq!(t.1, TrialStatus::Done, "{c}: {:?}\n{all}", t.2);
        let r = &t.3["sql_bench"];
        let test = &r["tests"][0];
        assert_eq!(
            (test["name"].as_str(), test["status"].as_str()),
            (Some("connect"), Some("ok")),
            "{c}: {test}"
        );
        assert_eq!(test["operations"].as_array().unwrap().len(), 10, "{c}");
        assert!(test["total"]["wall_s"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert_eq!(by("pg").3["sql_bench"]["server"], "Pg");
    let broken = by("broken");
    assert_eq!(broken.1, TrialStatus::Failed);
    let reason = broken.2.as_deref().unwrap();
    assert!(
        reason.contains("the build failed") && reason.contains("boom.h"),
        "{reason}"
    );
    // The build is recorded with the trial: revision, recipe, flags, compiler, prefix.
    let build = &by("built").3["server"]["build"];
    assert!(
        build["revision"].as_str().unwrap().starts_with("tree "),
        "{build}"
    );
    assert_eq!(
        build["recipe"].as_str().unwrap(),
        format!("sh {}", recipe.display())
    );
    assert!(
        build["flags"]
            .as_str()
            .unwrap()
            .contains("-fno-omit-frame-pointer")
    );
    assert!(!build["compiler"].as_str().unwrap().is_empty());
    assert_eq!(build["cached"], false);
    let prefix = PathBuf::from(build["prefix"].as_str().unwrap());
    assert!(
        prefix.join("libexec/mariadbd").is_file(),
        "RPM layout: {prefix:?}"
    );
    assert!(prefix.starts_with(out.path().join("builds")));
    // A managed server is locked down: sql-bench connected with its password, which went
    // through the environment and is in nothing stored.
    let secret = std::fs::read_to_string(out.path().join("servers/built/secret")).unwrap();
    let stored = std::fs::read(&db).unwrap();
    assert!(
        !stored
            .windows(secret.trim().len())
            .any(|w| w == secret.trim().as_bytes()),
        "the managed server's password is stored"
    );

    // Reported and compared: the build line, each test's total, the operations.
    let report = text(&ok(dbrig(out.path(), &["report", "1"])));
    for needle in [
        "build of built: tree ",
        "test-connect",
        "TOTALS",
        "connect+select_1_row",
    ] {
        assert!(report.contains(needle), "{needle} missing:\n{report}");
    }
    // sql-bench's own layout: RESULTS-DIR/HOST/YYYY-MM-DD/.
    let export = out.path().join("sb");
    ok(dbrig(
        out.path(),
        &[
            "report",
            "1",
            "--format",
            "sql-bench",
            "--output",
            export.to_str().unwrap(),
        ],
    ));
    let host_dirs: Vec<PathBuf> = std::fs::read_dir(&export)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(host_dirs.len(), 1);
    let day: Vec<PathBuf> = std::fs::read_dir(&host_dirs[0])
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(day.len(), 1);
    assert_eq!(day[0].file_name().unwrap().len(), "YYYY-MM-DD".len());
    let files: Vec<String> = std::fs::read_dir(&day[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("RUN-mysql-") && f.contains("_built_")),
        "{files:?}"
    );
    assert!(
        files.iter().any(|f| f.starts_with("connect-Pg-")),
        "{files:?}"
    );

    // A second run of the built server reuses the build (same source, recipe, flags).
    let plan2 = std::fs::read_to_string(&path).unwrap().replace(
        "name = \"broken\"\nserver = \"broken\"",
        "name = \"broken\"\nserver = \"bare\"",
    );
    let path2 = out.path().join("plan2.toml");
    std::fs::write(&path2, plan2).unwrap();
    let again = dbrig(out.path(), &["run", path2.to_str().unwrap()]);
    let t2 = trials_of(&db, 2);
    let built2 = t2.iter().find(|t| t.0 == "built").unwrap();
    assert_eq!(built2.1, TrialStatus::Done, "{}", text(&again));
    let b2 = &built2.3["server"]["build"];
    assert_eq!(b2["cached"], true, "{b2}");
    assert_eq!(b2["prefix"], build["prefix"]);
}

/// A bare server binary whose share files are nowhere near it: the error says which path to
/// set.
#[test]
fn a_bare_binary_without_share_files_says_to_set_share_dir() {
    let out = tempfile::tempdir().unwrap();
    let bare = out.path().join("x/bin");
    std::fs::create_dir_all(&bare).unwrap();
    std::os::unix::fs::symlink("/usr/sbin/mariadbd", bare.join("mariadbd")).unwrap();
    let plan = out.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"p\"\ntrials = 1\nclients = [1]\n[[server]]\nname = \"lonely\"\nengine = \"mariadb\"\nserver-bin = \"{}\"\n",
            bare.join("mariadbd").display()
        ),
    )
    .unwrap();
    let o = dbrig(
        out.path(),
        &[
            "server",
            "start",
            "lonely",
            "--plan",
            plan.to_str().unwrap(),
        ],
    );
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(all.contains("set share-dir"), "{all}");
}

/// Drops the databases sql-bench got on the shared servers, whatever the test's outcome.
struct SuiteDbs {
    mysql: Vec<String>,
    pg: Vec<String>,
}

impl Drop for SuiteDbs {
    fn drop(&mut self) {
        for d in &self.mysql {
            crate::mysql::sql(&format!("DROP DATABASE IF EXISTS {d}"));
        }
        for d in &self.pg {
            crate::postgres::psql(&format!("DROP DATABASE IF EXISTS {d} WITH (FORCE)"));
        }
    }
}

fn mysql_databases(like: &str) -> String {
    crate::mysql::sql(&format!(
        "SELECT schema_name FROM information_schema.schemata WHERE schema_name = '{like}'"
    ))
}

/// A MariaDB build tree run in place (a stand-in out-of-source tree laid out from the
/// machine's binaries: `sql/mariadbd`, `scripts/mariadb-install-db` with `--srcdir` and
/// `--builddir`, `sql/share/english/errmsg.sys`, a `CMakeCache.txt`), and sql-bench owning
/// what it makes: it runs in a database dbrig creates for it beside the target's (a user's
/// `bench1` in the target's database survives the suite, which drops and makes `bench1`), and
/// `dbrig cleanup sql-bench` drops that database — refusing while it holds a table dbrig did
/// not make, and refusing a database of that name dbrig did not create.
#[test]
fn a_build_tree_runs_in_place_and_sql_bench_keeps_to_its_own_database() {
    let suite = suite();
    let my = crate::mysql::TestDb::new("sbtree");
    let pg = crate::postgres::TestDb::new("sbtree");
    let my_suite_db = format!("{}_sqlbench", my.0);
    let pg_suite_db = format!("{}_sqlbench", pg.0);
    let _dbs = SuiteDbs {
        mysql: vec![my_suite_db.clone()],
        pg: vec![pg_suite_db.clone()],
    };
    // A user's table of the name sql-bench uses, in the target's database.
    crate::mysql::sql(&format!(
        "CREATE TABLE {}.bench1 (mine INT); INSERT INTO {}.bench1 VALUES (42)",
        my.0, my.0
    ));
    let out = tempfile::tempdir().unwrap();
    let src = out.path().join("maria-src");
    let tree = out.path().join("maria-build");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plans/machine-mariadb-build-tree.sh");
    let o = Command::new("sh")
        .arg(&script)
        .arg(&src)
        .arg(&tree)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Nothing of an install layout: no sbin/, bin/ or share/ anywhere in the tree.
    for d in ["sbin", "bin", "share", "libexec"] {
        assert!(!tree.join(d).exists() && !src.join(d).exists(), "{d}");
    }
    let plan = format!(
        r#"
name = "sbtree"
trials = 1
clients = [1]
baseline = "machine"

[[server]]
name = "tree"
engine = "mariadb"
build-tree = "{tree}"

[[configuration]]
name = "machine"
target = "{my}"

[[configuration]]
name = "tree"
server = "tree"

[[configuration]]
name = "pg"
target = "{pg}"

[[workload]]
name = "sql-bench"
[workload.options]
suite = "{suite}"
tests = ["connect"]
small-test = true
options = ["--loop-count=2000"]
timeout = 120
"#,
        tree = tree.display(),
        suite = suite.display(),
        my = my.url(),
        pg = pg.url(),
    );
    let path = out.path().join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let run = dbrig(out.path(), &["run", path.to_str().unwrap()]);
    let all = text(&run);
    assert!(run.status.success(), "{all}");
    let trials = trials_of(&out.path().join("results.db"), 1);
    for t in &trials {
        assert_eq!(t.1, TrialStatus::Done, "{}: {:?}\n{all}", t.0, t.2);
        let test = &t.3["sql_bench"]["tests"][0];
        assert_eq!(test["status"], "ok", "{}: {test}", t.0);
    }
    // The server ran from the tree itself, initialised by the tree's own initialiser.
    let marker =
        std::fs::read_to_string(out.path().join("servers/tree/data/.dbrig-managed")).unwrap();
    let bin = tree.join("sql/mariadbd");
    assert!(marker.contains(&bin.display().to_string()), "{marker}");
    assert!(!out.path().join("servers/tree/basedir").exists());
    let tree_trial = trials.iter().find(|t| t.0 == "tree").unwrap();
    let build = &tree_trial.3["server"]["build"];
    assert_eq!(build["prefix"], tree.display().to_string(), "{build}");
    assert_eq!(build["source"], src.display().to_string(), "{build}");
    assert!(
        build["revision"].as_str().unwrap().starts_with("tree "),
        "{build}"
    );
    assert!(
        build["recipe"]
            .as_str()
            .unwrap()
            .starts_with("build tree run in place (RelWithDebInfo)"),
        "{build}"
    );
    assert!(
        build["flags"]
            .as_str()
            .unwrap()
            .contains("-fno-omit-frame-pointer"),
        "{build}"
    );
    let report = text(&ok(dbrig(out.path(), &["report", "1"])));
    assert!(report.contains("build of tree: tree "), "{report}");

    // The suite ran in databases of its own; the user's bench1 is untouched.
    assert_eq!(
        crate::mysql::sql(&format!("SELECT mine FROM {}.bench1", my.0)).trim(),
        "42"
    );
    assert_eq!(mysql_databases(&my_suite_db).trim(), my_suite_db);
    let pg_exists = |d: &str| {
        crate::postgres::psql(&format!(
            "SELECT COUNT(*) FROM pg_database WHERE datname = '{d}'"
        ))
        .trim()
        .to_owned()
    };
    assert_eq!(pg_exists(&pg_suite_db), "1");

    // A table of someone else's in sql-bench's database: cleanup drops nothing.
    crate::mysql::sql(&format!("CREATE TABLE {my_suite_db}.notes (x INT)"));
    let refused = dbrig(out.path(), &["cleanup", "sql-bench", "--target", &my.url()]);
    let said = text(&refused);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("notes") && said.contains("not created by dbrig"),
        "{said}"
    );
    assert_eq!(mysql_databases(&my_suite_db).trim(), my_suite_db);
    crate::mysql::sql(&format!("DROP TABLE {my_suite_db}.notes"));
    // Now everything in it is dbrig's: the database goes, and nothing else.
    let done = text(&ok(dbrig(
        out.path(),
        &["cleanup", "sql-bench", "--target", &my.url()],
    )));
    assert!(
        done.contains(&format!("Dropped database {my_suite_db}")),
        "{done}"
    );
    assert_eq!(mysql_databases(&my_suite_db).trim(), "");
    assert_eq!(
        crate::mysql::sql(&format!("SELECT mine FROM {}.bench1", my.0)).trim(),
        "42"
    );
    let done = text(&ok(dbrig(
        out.path(),
        &["cleanup", "sql-bench", "--target", &pg.url()],
    )));
    assert!(
        done.contains(&format!("Dropped database {pg_suite_db}")),
        "{done}"
    );
    assert_eq!(pg_exists(&pg_suite_db), "0");
    let again = text(&ok(dbrig(
        out.path(),
        &["cleanup", "sql-bench", "--target", &my.url()],
    )));
    assert!(again.contains("Nothing to drop"), "{again}");

    // A plan of the machine's MariaDB alone, running `tests` with `timeout` (`--small-test`
    // when `small`).
    let machine_plan = |file: &str, tests: &str, timeout: u32, small: bool| {
        let p = out.path().join(file);
        std::fs::write(
            &p,
            format!(
                "name = \"m\"\ntrials = 1\nclients = [1]\n[[configuration]]\nname = \"machine\"\ntarget = \"{}\"\n[[workload]]\nname = \"sql-bench\"\n[workload.options]\nsuite = \"{}\"\ntests = [{tests}]\nsmall-test = {small}\ntimeout = {timeout}\n",
                my.url(),
                suite.display()
            ),
        )
        .unwrap();
        p
    };
    // A test stopped by its timeout leaves its tables: registered after the test, so
    // cleanup takes them with the database. The whole test-insert (not --small-test: that one
    // finished in 2.9 s on a quiet machine) runs for minutes; its tables exist within a second.
    let cut = machine_plan("cut.toml", "\"insert\"", 5, false);
    let run2 = dbrig(out.path(), &["run", cut.to_str().unwrap()]);
    let t2 = trials_of(&out.path().join("results.db"), 2);
    let test = &t2[0].3["sql_bench"]["tests"][0];
    assert_eq!(test["status"], "timed-out", "{test}\n{}", text(&run2));
    let left = crate::mysql::sql(&format!(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{my_suite_db}' AND table_name LIKE 'bench%'"
    ));
    assert_ne!(left.trim(), "0", "the cut test left no table");
    let done = text(&ok(dbrig(
        out.path(),
        &["cleanup", "sql-bench", "--target", &my.url()],
    )));
    assert!(
        done.contains(&format!("Dropped database {my_suite_db}")) && done.contains("bench"),
        "{done}"
    );
    assert_eq!(mysql_databases(&my_suite_db).trim(), "");

    // A database of that name dbrig did not create: neither run in nor dropped.
    crate::mysql::sql(&format!(
        "CREATE DATABASE {my_suite_db}; CREATE TABLE {my_suite_db}.bench1 (x INT)"
    ));
    let refused = dbrig(out.path(), &["cleanup", "sql-bench", "--target", &my.url()]);
    let said = text(&refused);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("was not created by dbrig for sql-bench"),
        "{said}"
    );
    let path3 = machine_plan("foreign.toml", "\"connect\"", 120, true);
    let run3 = dbrig(out.path(), &["run", path3.to_str().unwrap()]);
    let t3 = trials_of(&out.path().join("results.db"), 3);
    assert_eq!(t3.len(), 1, "{}", text(&run3));
    assert_eq!(t3[0].1, TrialStatus::Failed, "{}", text(&run3));
    assert!(
        t3[0]
            .2
            .as_deref()
            .unwrap()
            .contains("was not created by dbrig for sql-bench"),
        "{:?}",
        t3[0].2
    );
    assert_eq!(
        crate::mysql::sql(&format!("SELECT COUNT(*) FROM {my_suite_db}.bench1")).trim(),
        "0"
    );
}

/// A Perl library folder holding `MODULE.pm` files that fail to load the way a missing module
/// does (Perl's own message), put first on @INC through PERL5LIB.
fn perl_without(dir: &Path, modules: &[&str]) -> String {
    for m in modules {
        let file = dir.join(format!("{}.pm", m.replace("::", "/")));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let path = format!("{}.pm", m.replace("::", "/"));
        std::fs::write(
            &file,
            format!(
                "die \"Can't locate {path} in \\@INC (you may need to install the {m} module) (\\@INC contains: /nowhere).\\n\";\n"
            ),
        )
        .unwrap();
    }
    dir.display().to_string()
}

/// sql-bench that cannot start — Perl's DBI missing, or the server's DBD driver so that every
/// test fails — is a failed trial: exit 1, the cause in one line (it exited 0 and the run
/// read `done`, the cause only in the JSON).
#[test]
fn a_suite_that_cannot_start_fails_its_trial_mariadb() {
    let suite = suite();
    let my = crate::mysql::TestDb::new("sqlbench_nodbi");
    let _dbs = SuiteDbs {
        mysql: vec![format!("{}_sqlbench", my.0)],
        pg: Vec::new(),
    };
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"nodbi\"\ntrials = 1\nclients = [1]\n\
             [[configuration]]\nname = \"A\"\ntarget = \"{}\"\n\
             [[workload]]\nname = \"sql-bench\"\n[workload.options]\nsuite = \"{}\"\ntests = [\"connect\"]\nsmall-test = true\n",
            my.url(),
            suite.display()
        ),
    )
    .unwrap();
    let run = |hidden: &[&str]| {
        let lib = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
            .args(["run", plan.to_str().unwrap()])
            .arg(format!("--out={}", out.path().display()))
            .env("PERL5LIB", perl_without(lib.path(), hidden))
            .output()
            .unwrap();
        (o.status.code(), crate::error_line(&o))
    };
    let (code, e) = run(&["DBI"]);
    assert_eq!(code, Some(1), "{e}");
    assert!(
        e.contains(
            "sql-bench cannot start: Perl cannot load DBI (Can't locate DBI.pm in @INC (you may need to install the DBI module)): install it (Debian: libdbi-perl"
        ),
        "{e}"
    );
    assert_eq!(
        mysql_databases(&format!("{}_sqlbench", my.0)).trim(),
        "",
        "nothing was made for a suite that cannot start"
    );
    let (code, e) = run(&["DBD::MariaDB"]);
    assert_eq!(code, Some(1), "{e}");
    assert!(
        e.contains("sql-bench could not run: its one test failed, first test-connect:")
            && e.contains("Can't locate DBD/MariaDB.pm in @INC")
            && !e.contains("/nowhere"),
        "{e}"
    );
    let db = out.path().join("results.db");
    let store = Store::open(&db).unwrap();
    let statuses: Vec<String> = store
        .runs()
        .unwrap()
        .iter()
        .map(|r| r.status.as_str().to_owned())
        .collect();
    assert_eq!(statuses, ["failed", "failed"]);
    drop(store);
    ok(dbrig(
        out.path(),
        &["cleanup", "sql-bench", "--target", &my.url()],
    ));
}
