//! pgbench scripts (issue 16): the statements and calls a PostgreSQL server sees (its
//! pg_stat_statements) are pgbench's own for the three built-ins and a script using `\set`,
//! `\if`, `\gset` and `\sleep`, in each protocol; the built-ins on SQLite and MariaDB with
//! exact counts; pgbench-init's tables; plans of kind `script`; and the error cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::pgss::PgssServer;
use crate::{dbrig, error_line, ok, text};

/// pgbench's view of the shared pg_stat_statements server: its database `postgres`.
struct PgbenchServer(PgssServer);

impl std::ops::Deref for PgbenchServer {
    type Target = PgssServer;
    fn deref(&self) -> &PgssServer {
        &self.0
    }
}

impl PgbenchServer {
    fn start(out: &Path, name: &str) -> Self {
        PgbenchServer(PgssServer::start(out, name))
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pgbench(&self, args: &[&str]) {
        let o = Command::new(pgbench_binary())
            .args(["-h", "127.0.0.1", "-p", &self.port, "-U", "postgres"])
            .args(args)
            .arg("postgres")
            .output()
            .expect("pgbench runs");
        assert!(
            o.status.success(),
            "pgbench {args:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The workload's statements the server counted since the last reset (normalized text →
    /// calls): those on pgbench's tables or marked `p16`, without either tool's catalog and
    /// scale queries.
    fn seen(&self) -> BTreeMap<String, u64> {
        self.sql(
            "postgres",
            "SELECT calls || '|' || query FROM pg_stat_statements \
             WHERE query ~ '(pgbench_|p16|^BEGIN|^END)' AND query !~ '(count\\(\\*\\)|pg_catalog)'",
        )
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(c, q)| (q.to_owned(), c.parse().unwrap()))
        .collect()
    }
}

/// The installed pgbench (`/usr/lib/postgresql/*/bin/pgbench`, else the one on PATH).
fn pgbench_binary() -> PathBuf {
    std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|d| d.path().join("bin/pgbench"))
        .filter(|p| p.exists())
        .max()
        .unwrap_or_else(|| PathBuf::from("pgbench"))
}

/// Exercises `\set`, `\gset`, `\aset`, `\if` / `\elif` / `\else` and `\sleep`, with branches
/// that do not depend on random draws (so both tools take the same ones).
const CUSTOM: &str = r#"-- dbrig's pgbench comparison script
\set n 5
\set aid random(1, 100000 * :scale)
SELECT :n * 2 AS p16_doubled, :aid AS p16_aid \gset
\if :p16_doubled = 10
SELECT abalance AS p16_then FROM pgbench_accounts WHERE aid = :p16_aid;
\elif :p16_doubled = 11
SELECT 'p16_elif';
\else
SELECT 'p16_else';
\endif
\if :n > 100
SELECT 'p16_never';
\elif :n % 5 = 0
UPDATE pgbench_tellers SET tbalance = tbalance + 0 WHERE tid = 1 + :client_id % 10;
\endif
\sleep 100 us
SELECT p16_x FROM (VALUES (1), (2)) AS t(p16_x) \aset
\set total :p16_x + :n
SELECT :total AS p16_total;
"#;

#[test]
fn statements_and_calls_match_pgbench_in_every_protocol() {
    let out = tempfile::tempdir().unwrap();
    let pg = PgbenchServer::start(out.path(), "pgb16pgss");
    pg.pgbench(&["-i", "-s", "1", "-q"]);
    let custom = out.path().join("custom.sql");
    std::fs::write(&custom, CUSTOM).unwrap();
    let custom = custom.display().to_string();
    // pgbench's tables are not dbrig's: pgbench-init leaves them alone.
    let e = error_line(&dbrig(
        out.path(),
        &["prepare", "pgbench-init", "--target", &pg.url()],
    ));
    assert!(e.contains("was not created by dbrig"), "{e}");
    let workloads: [(&[&str], &[&str]); 4] = [
        (&["-b", "tpcb-like"], &["--builtin", "tpcb-like"]),
        (&["-b", "simple-update"], &["--builtin", "simple-update"]),
        (&["-b", "select-only"], &["--builtin", "select-only"]),
        (&["-f", &custom], &["--script", &custom]),
    ];
    for protocol in ["simple", "extended", "prepared"] {
        for (pgbench_args, dbrig_args) in &workloads {
            pg.reset();
            let mut args = vec!["-n", "-t", "200", "-M", protocol];
            args.extend_from_slice(pgbench_args);
            pg.pgbench(&args);
            let theirs = pg.seen();
            pg.reset();
            let url = pg.url();
            let mut args = vec![
                "run",
                "--target",
                &url,
                "--events",
                "200",
                "--time",
                "0",
                "--protocol",
                protocol,
            ];
            args.extend_from_slice(dbrig_args);
            let o = ok(dbrig(out.path(), &args));
            let ours = pg.seen();
            assert_eq!(ours, theirs, "{protocol} {dbrig_args:?}:\n{}", text(&o));
            // Every statement of the transaction ran once per transaction.
            assert!(
                theirs.values().any(|&c| c == 200),
                "{protocol} {dbrig_args:?}: {theirs:?}"
            );
            let t = text(&o);
            assert!(
                t.contains("number of transactions actually processed: 200\n")
                    && t.contains(&format!("query mode: {protocol}\n")),
                "{t}"
            );
        }
    }
    pipelines_match_pgbench(&pg, out.path());
    compound_commands_match_pgbench(&pg, out.path());
}

/// pgbench's compound command (`\;`): several statements sent as one simple query, `\gset`
/// storing the last one's row and `\aset` every one's.
const COMPOUND: &str = r#"-- p16 compound
SELECT 1 AS p16_a \; SELECT 2 AS p16_b, 3 AS p16_c \gset
SELECT 4 AS p16_d \; UPDATE pgbench_tellers SET tbalance = tbalance WHERE tid = 0 \; SELECT 5 AS p16_e \aset
SELECT 1 / (CASE WHEN :p16_b = 2 AND :p16_c = 3 AND :p16_d = 4 AND :p16_e = 5 THEN 1 ELSE 0 END) AS p16_sum;
"#;

/// The compound command in every protocol and pgbench's pipeline rules: the same statements
/// and calls as pgbench in the simple protocol (every statement of the compound counted by
/// the server, the variables set from the right results); in the extended and prepared
/// protocols the server's refusal, as pgbench gets it; `\gset` inside a pipeline refused with
/// pgbench's message; `\syncpipeline` (pgbench 17, newer than the installed one) runs.
fn compound_commands_match_pgbench(pg: &PgbenchServer, out: &Path) {
    let write = |name: &str, body: &str| {
        let p = out.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    let script = write("compound.sql", COMPOUND);
    let url = pg.url();
    let run = |protocol: &str, script: &str| {
        dbrig(
            out,
            &[
                "run",
                "--target",
                &url,
                "--events",
                "50",
                "--time",
                "0",
                "--protocol",
                protocol,
                "--script",
                script,
            ],
        )
    };
    pg.reset();
    pg.pgbench(&["-n", "-t", "50", "-M", "simple", "-f", &script]);
    let theirs = pg.seen();
    pg.reset();
    let o = ok(run("simple", &script));
    let ours = pg.seen();
    assert_eq!(ours, theirs, "compound:\n{}", text(&o));
    // The last statement divides by zero unless every variable holds the right result's value;
    // all 6 statements ran every transaction (pg_stat_statements merges the `SELECT n AS x`
    // ones: its query id ignores column aliases).
    assert!(
        theirs.keys().any(|q| q.contains("p16_sum")) && theirs.values().sum::<u64>() == 6 * 50,
        "{theirs:?}"
    );
    // `\gset` after a compound stores only its last result: the first one's column is no
    // variable.
    let sum = write(
        "sum.sql",
        "SELECT 1 AS a \\; SELECT 2 AS b, 3 AS c \\gset\nSELECT 4 AS d \\; SELECT 5 AS e \\aset\nSELECT :b + :c + :d + :e + :a AS p16_never;\n",
    );
    let t = text(&run("simple", &sum));
    assert!(
        t.contains("undefined variable \"a\""),
        "\\gset keeps only the last result: {t}"
    );
    for protocol in ["extended", "prepared"] {
        let t = text(&run(protocol, &script));
        assert!(
            t.contains("cannot insert multiple commands into a prepared statement")
                && t.contains("compound.sql:2"),
            "{protocol}: {t}"
        );
    }
    // \gset inside a pipeline: pgbench's message, from both tools.
    let gset = write(
        "pipe_gset.sql",
        "\\startpipeline\nSELECT 1 AS p16_one \\gset\n\\endpipeline\n",
    );
    let theirs = Command::new(pgbench_binary())
        .args(["-h", "127.0.0.1", "-p", &pg.port, "-U", "postgres"])
        .args(["-n", "-t", "1", "-M", "extended", "-f", &gset, "postgres"])
        .output()
        .unwrap();
    let want = "\\gset is not allowed in pipeline mode";
    assert!(text_of(&theirs).contains(want), "{}", text_of(&theirs));
    let t = text(&run("extended", &gset));
    assert!(t.contains(&format!("pipe_gset.sql:2: {want}")), "{t}");
    // \syncpipeline: a sync point inside the pipeline; outside one it stops the client.
    let sync = write(
        "pipe_sync.sql",
        "\\startpipeline\nSELECT 1 AS p16_s1;\n\\syncpipeline\nSELECT 2 AS p16_s2;\n\\endpipeline\n",
    );
    pg.reset();
    let o = ok(run("prepared", &sync));
    let seen = pg.seen();
    // Both statements, every transaction (one pg_stat_statements entry: aliases aside they
    // are the same query).
    assert_eq!(seen.values().sum::<u64>(), 100, "{seen:?}\n{}", text(&o));
    let lone = write("lone_sync.sql", "SELECT 1;\n\\syncpipeline\n");
    let t = text(&run("extended", &lone));
    assert!(t.contains("lone_sync.sql:2: not in pipeline mode"), "{t}");
}

fn text_of(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// pgbench's pipeline example: a transaction's statements sent without waiting for each
/// result.
const PIPELINE: &str = r#"-- p16 pipeline
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);
END;
\endpipeline
"#;

/// A pipelined script in the extended and prepared protocols: the server sees pgbench's
/// statements and calls, and every transaction's INSERT lands.
fn pipelines_match_pgbench(pg: &PgbenchServer, out: &Path) {
    let script = out.join("pipeline.sql");
    std::fs::write(&script, PIPELINE).unwrap();
    let script = script.display().to_string();
    let history = || -> u64 {
        pg.sql("postgres", "SELECT count(*) FROM pgbench_history")
            .trim()
            .parse()
            .unwrap()
    };
    for protocol in ["extended", "prepared"] {
        pg.reset();
        pg.pgbench(&["-n", "-t", "200", "-M", protocol, "-f", &script]);
        let theirs = pg.seen();
        pg.reset();
        let before = history();
        let url = pg.url();
        let o = ok(dbrig(
            out,
            &[
                "run",
                "--target",
                &url,
                "--events",
                "200",
                "--time",
                "0",
                "--protocol",
                protocol,
                "--script",
                &script,
            ],
        ));
        assert_eq!(history() - before, 200, "{protocol}: {}", text(&o));
        let ours = pg.seen();
        assert_eq!(ours, theirs, "{protocol} pipeline:\n{}", text(&o));
        assert!(
            theirs.values().filter(|&&c| c == 200).count() >= 3,
            "{protocol}: {theirs:?}"
        );
        assert!(
            text(&o).contains("number of transactions actually processed: 200\n"),
            "{}",
            text(&o)
        );
    }
}

fn sqlite3(db: &Path, sql: &str) -> String {
    let o = Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .expect("sqlite3 is installed");
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

fn mariadb(db: &str, sql: &str) -> String {
    let o = Command::new("mariadb")
        .args(["-uroot", "-h127.0.0.1", "-P3306", "-N", "-B"])
        .args(if db.is_empty() { vec![] } else { vec![db] })
        .args(["-e", sql])
        .output()
        .expect("the mariadb client");
    assert!(
        o.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// pgbench-init's rows, then each built-in's exact effect: tpcb-like and simple-update add one
/// history row per transaction and move the balances by its delta; select-only changes nothing.
fn builtins_with_exact_counts(out: &Path, target: &str, sql: &dyn Fn(&str) -> String) {
    ok(dbrig(
        out,
        &[
            "prepare",
            "pgbench-init",
            "--scale",
            "2",
            "--target",
            target,
        ],
    ));
    let counts = "SELECT (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers), \
                  (SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_history), \
                  (SELECT max(bid) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_tellers WHERE bid = 2)";
    let norm = |s: String| s.replace(['\t', '|'], " ");
    assert_eq!(norm(sql(counts)), "2 20 200000 0 2 10");
    // Comparisons as CASE: 1/0 on every engine (PostgreSQL prints a boolean as t/f).
    let balances = "SELECT (SELECT count(*) FROM pgbench_history), CASE WHEN (SELECT sum(delta) FROM pgbench_history) = (SELECT sum(abalance) FROM pgbench_accounts) THEN 1 ELSE 0 END";
    let run = |builtin: &str, events: &str| {
        let o = ok(dbrig(
            out,
            &[
                "run",
                "--builtin",
                builtin,
                "--target",
                target,
                "--events",
                events,
                "--time",
                "0",
                "--threads",
                "2",
            ],
        ));
        let t = text(&o);
        assert!(
            t.contains(&format!(
                "number of transactions actually processed: {events}\n"
            )) && t.contains("scaling factor: 2\n"),
            "{t}"
        );
    };
    run("tpcb-like", "200");
    assert_eq!(norm(sql(balances)), "200 1");
    let tellers_branches = "SELECT CASE WHEN (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(delta) FROM pgbench_history) THEN 1 ELSE 0 END, CASE WHEN (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(delta) FROM pgbench_history) THEN 1 ELSE 0 END";
    assert_eq!(norm(sql(tellers_branches)), "1 1");
    run("simple-update", "100");
    assert_eq!(norm(sql(balances)), "300 1");
    run("select-only", "50");
    assert_eq!(norm(sql(balances)), "300 1");
    let o = ok(dbrig(out, &["cleanup", "pgbench-init", "--target", target]));
    assert!(text(&o).contains("pgbench_accounts"), "{}", text(&o));
}

#[test]
fn builtins_on_sqlite_with_exact_counts() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("p.sqlite");
    let target = format!("sqlite:{}", db.display());
    builtins_with_exact_counts(out.path(), &target, &|q| sqlite3(&db, q));
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'pgbench%'"
        ),
        "0"
    );
}

#[test]
fn builtins_on_mariadb_with_exact_counts() {
    let db = format!("pgb16_{}", std::process::id());
    mariadb(
        "",
        &format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"),
    );
    let out = tempfile::tempdir().unwrap();
    let target = format!("mysql://root@127.0.0.1:3306/{db}");
    let result = std::panic::catch_unwind(|| {
        builtins_with_exact_counts(out.path(), &target, &|q| mariadb(&db, q));
    });
    mariadb("", &format!("DROP DATABASE IF EXISTS {db}"));
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// On PostgreSQL pgbench-init loads as `pgbench -i` does (one transaction, COPY FREEZE,
/// pgbench_accounts in binary): the same rows as pgbench -i's own, byte for byte (the
/// filler padded), written frozen, and the built-ins' exact effects after.
#[test]
fn builtins_on_postgres_with_exact_counts_and_pgbench_rows() {
    let db = format!("pgb20_{}", std::process::id());
    let theirs = format!("{db}_pgbench");
    for d in [&db, &theirs] {
        psql_on("postgres", &format!("DROP DATABASE IF EXISTS {d}"));
        psql_on("postgres", &format!("CREATE DATABASE {d}"));
    }
    let out = tempfile::tempdir().unwrap();
    let target = format!("postgres://postgres@127.0.0.1:5432/{db}");
    let result = std::panic::catch_unwind(|| {
        ok(dbrig(
            out.path(),
            &[
                "prepare",
                "pgbench-init",
                "--scale",
                "2",
                "--target",
                &target,
            ],
        ));
        let o = Command::new(pgbench_binary())
            .args([
                "-i",
                "-q",
                "-s",
                "2",
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                &theirs,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let digest = "SELECT (SELECT md5(string_agg(aid || ',' || bid || ',' || abalance || ',' || octet_length(filler) || filler, ';' ORDER BY aid)) FROM pgbench_accounts), \
                      (SELECT md5(string_agg(tid || ',' || bid || ',' || tbalance || ',' || coalesce(filler, 'NULL'), ';' ORDER BY tid)) FROM pgbench_tellers), \
                      (SELECT md5(string_agg(bid || ',' || bbalance || ',' || coalesce(filler, 'NULL'), ';' ORDER BY bid)) FROM pgbench_branches)";
        assert_eq!(psql_on(&db, digest), psql_on(&theirs, digest));
        // Copied frozen (pgbench -i's COPY FREEZE): every page of pgbench_accounts is
        // all-frozen in the visibility map, which a plain COPY and the VACUUM after leave at
        // 0 (frozen tuples keep their raw xmin, so the map is what tells).
        psql_on(&db, "CREATE EXTENSION IF NOT EXISTS pg_visibility");
        assert_eq!(
            psql_on(
                &db,
                "SELECT all_frozen = (SELECT relpages FROM pg_class WHERE relname = 'pgbench_accounts') AND all_frozen > 0 \
                 FROM pg_visibility_map_summary('pgbench_accounts')"
            ),
            "t"
        );
        builtins_with_exact_counts(out.path(), &target, &|q| psql_on(&db, q));
    });
    for d in [&db, &theirs] {
        psql_on(
            "postgres",
            &format!("DROP DATABASE IF EXISTS {d} WITH (FORCE)"),
        );
    }
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_plan_runs_weighted_scripts_and_prepares_pgbench_tables() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("plan.sqlite").display());
    let script = out.path().join("mine.sql");
    std::fs::write(&script, "\\set x random(1, 10)\nSELECT :x AS picked;\n").unwrap();
    let plan = out.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"
name = "pgbench-plan"
trials = 1
clients = [1, 2]
duration = 0
warmup = 0
[run]
events = 120
[[configuration]]
name = "lite"
target = "{target}"
[[workload]]
name = "script"
[workload.options]
builtins = ["select-only@3"]
scripts = ["{}@1"]
scale = 1
[workload.run]
protocol = "prepared"
"#,
            script.display()
        ),
    )
    .unwrap();
    let o = ok(dbrig(out.path(), &["run", plan.to_str().unwrap()]));
    let t = text(&o);
    assert!(
        t.contains("pgbench-init"),
        "the prepare step made pgbench's tables:\n{t}"
    );
    let store = dbrig_store::Store::open(&out.path().join("results.db")).unwrap();
    let run = store.runs().unwrap().pop().unwrap().id;
    let cells = store.cells(run).unwrap();
    assert_eq!(cells.len(), 2);
    // The prepare step's load is stored with the one trial measured first on its data.
    let loads: Vec<_> = cells
        .iter()
        .flat_map(|c| store.trials(c.id).unwrap())
        .filter_map(|t| t.environment.and_then(|e| e.load))
        .collect();
    assert_eq!(loads.len(), 1, "{loads:?}");
    let accounts = loads[0]
        .tables
        .iter()
        .find(|t| t.table == "pgbench_accounts")
        .expect("pgbench_accounts' figures");
    assert_eq!(accounts.rows, 100_000);
    assert!(
        accounts.bytes > 1_000_000 && accounts.rows_per_s() > 0.0,
        "{accounts:?}"
    );
    assert_eq!(loads[0].rows, 100_011);
    let report = ok(dbrig(
        out.path(),
        &["report", &run.0.to_string(), "--with", "loads"],
    ));
    assert!(
        text(&report).contains("pgbench_accounts: 100000 rows"),
        "{}",
        text(&report)
    );
    for c in &cells {
        assert_eq!(c.workload, "script");
        let trial = store.trials(c.id).unwrap().pop().unwrap();
        let m = store.measurements(trial.id).unwrap().unwrap();
        assert_eq!(m.transactions, 120);
        let Some(dbrig_core::results::TrialResult::Oltp(r)) = &trial.result else {
            panic!("an OLTP result")
        };
        let txn = |prefix: &str| {
            r.statements
                .iter()
                .find(|s| s.statement.starts_with(prefix))
                .map_or(0, |s| s.count)
        };
        let (builtin, mine) = (txn("0.txn <builtin: select only> @3"), txn("1.txn"));
        assert_eq!(builtin + mine, 120, "{:?}", r.statements);
        // Weighted 3:1: the built-in is chosen far more often.
        assert!(builtin > mine && mine > 0, "{builtin} vs {mine}");
        // The run's protocol is the trial's, stored with it.
        let env = trial.environment.as_ref().unwrap();
        assert_eq!(
            env.connection.as_ref().map(|c| c.protocol),
            Some(dbrig_core::results::Protocol::Prepared)
        );
    }
}

#[test]
fn script_errors_say_where_and_what() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("e.sqlite");
    let target = format!("sqlite:{}", db.display());
    let write = |name: &str, body: &str| {
        let p = out.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--target", &target, "--events", "5", "--time", "0"];
        all.extend_from_slice(args);
        dbrig(out.path(), &all)
    };
    // A syntax error: file, line, column, and the line with a caret.
    let f = write("syntax.sql", "SELECT 1;\n\\set x 1 + * 2\n");
    let o = run(&["--script", &f]);
    let e = error_line(&o);
    assert!(
        e.ends_with("syntax.sql:2:12: syntax error in command \"set\""),
        "{e}"
    );
    assert!(
        text(&o).contains("\\set x 1 + * 2\n           ^ error found here"),
        "{}",
        text(&o)
    );
    let f = write("shell.sql", "\\shell rm -rf /\n");
    let e = error_line(&run(&["--script", &f]));
    assert!(
        e.contains("shell.sql:1:1: \\shell runs a shell command"),
        "{e}"
    );
    // Pipelines: not in the simple protocol (pgbench's rule), PostgreSQL only.
    let f = write("pipe.sql", "\\startpipeline\nSELECT 1;\n\\endpipeline\n");
    let e = error_line(&run(&["--script", &f]));
    assert!(
        e.contains("cannot use pipeline mode with the simple query protocol"),
        "{e}"
    );
    let e = error_line(&run(&["--script", &f, "--protocol", "prepared"]));
    assert!(e.contains("needs PostgreSQL's pipeline mode"), "{e}");
    let e = error_line(&run(&["--builtin", "nosuch"]));
    assert!(e.contains("no built-in script named \"nosuch\""), "{e}");
    let e = error_line(&run(&["--builtin", "tpcb-like"]));
    assert!(e.contains("pgbench-init"), "{e}");
    let e = error_line(&dbrig(out.path(), &["run", "--target", &target]));
    assert!(e.contains("--script"), "{e}");
    // Runtime errors stop the client with the script's line.
    for (body, want) in [
        ("SELECT 1;\n\\set x 1 / 0\n", "rt.sql:2: division by zero"),
        ("SELECT :nope;\n", "rt.sql:1: undefined variable \"nope\""),
        (
            "\\set r random(5, 1)\n",
            "rt.sql:1: empty range given to random",
        ),
        ("SELECT nosuchcolumn FROM nosuchtable;\n", "rt.sql:1: "),
        (
            "SELECT 1 AS a UNION ALL SELECT 2 \\gset\n",
            "rt.sql:1: expected one row, got 2",
        ),
    ] {
        let f = write("rt.sql", body);
        let o = run(&["--script", &f]);
        let t = text(&o);
        assert!(!o.status.success(), "{body}: {t}");
        assert!(t.contains(want), "{body}: want {want:?} in\n{t}");
    }
}

/// A script's random draws and `:random_seed` come from the run's seed (`--rand-seed`,
/// pgbench's `--random-seed`): the same seed draws the same values, another seed others.
#[test]
fn random_draws_repeat_with_the_seed() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("seed.sqlite").display());
    let script = out.path().join("draw.sql");
    std::fs::write(
        &script,
        "\\set r debug(random(1, 1000000000))\n\\set g debug(random_gaussian(1, 1000, 2.5))\n\\set s debug(:random_seed)\nSELECT :r;\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let draws = |seed: &str| {
        let o = ok(dbrig(
            out.path(),
            &[
                "run",
                "--script",
                &script,
                "--target",
                &target,
                "--events",
                "20",
                "--time",
                "0",
                "--threads",
                "1",
                "--random-seed",
                seed,
            ],
        ));
        let mut lines: Vec<String> = String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.starts_with("debug("))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    let a = draws("42");
    assert_eq!(a.len(), 60, "{a:?}");
    assert!(a.iter().any(|l| l.ends_with("int 42")), "{a:?}");
    assert_eq!(a, draws("42"));
    assert_ne!(a, draws("43"));
}

/// With pgbench's `--random-seed`, each client draws what pgbench's client of the same number
/// draws, and `:default_seed` is pgbench's: the same `debug()` values from the machine's
/// pgbench (3 clients on one thread, so each transaction's lines stay together) and from dbrig,
/// for every random function.
#[test]
fn random_draws_per_client_are_pgbenchs() {
    let out = tempfile::tempdir().unwrap();
    let script = out.path().join("draw.sql");
    std::fs::write(
        &script,
        "\\set c debug(:client_id)\n\\set d debug(:default_seed)\n\\set r debug(random(1, 1000000000))\n\\set g debug(random_gaussian(1, 1000, 2.5))\n\\set e debug(random_exponential(1, 1000, 3.0))\n\\set z debug(random_zipfian(1, 1000, 1.5))\nSELECT 1;\n",
    )
    .unwrap();
    let script = script.display().to_string();
    // Each client's draws in order, keyed by its client id (the first debug line of each
    // transaction), as "command value" pairs.
    let per_client = |stderr: &[u8]| {
        let mut clients: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut current = Vec::new();
        for l in String::from_utf8_lossy(stderr).lines() {
            let Some(v) = l.strip_prefix("debug(").and_then(|l| l.split_once("): ")) else {
                continue;
            };
            current.push(v.1.to_owned());
            if current.len() == 6 {
                let id = current.remove(0);
                clients.entry(id).or_default().append(&mut current);
            }
        }
        clients
    };
    let pg = Command::new(pgbench_binary())
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-n",
            "-c",
            "3",
            "-j",
            "1",
            "-t",
            "100",
        ])
        .args(["--random-seed", "42", "-f", &script, "test"])
        .output()
        .unwrap();
    assert!(
        pg.status.success(),
        "{}",
        String::from_utf8_lossy(&pg.stderr)
    );
    let pgbench = per_client(&pg.stderr);
    let o = ok(dbrig(
        out.path(),
        &[
            "run",
            "--script",
            &script,
            "--target",
            &format!("sqlite:{}", out.path().join("d.sqlite").display()),
            "--threads",
            "3",
            // 90 in all: enough that, however a loaded machine schedules them, more than one
            // client runs (one ran all of 30 once), and no client runs past pgbench's 100.
            "--events",
            "90",
            "--time",
            "0",
            "--random-seed",
            "42",
            // One worker thread, as pgbench's -j 1: a transaction's lines stay together.
            "--workers",
            "1",
        ],
    ));
    // dbrig's --events counts all clients' transactions (pgbench's -t each client's): each
    // client's draws are the start of pgbench's client's.
    let ours = per_client(&o.stderr);
    assert_eq!(pgbench.len(), 3, "{pgbench:?}");
    assert_eq!(
        ours.values().map(Vec::len).sum::<usize>(),
        90 * 5,
        "{ours:?}"
    );
    assert!(
        ours.len() >= 2,
        "one client ran every transaction: {ours:?}"
    );
    for (client, draws) in &ours {
        assert_eq!(draws[..], pgbench[client][..draws.len()], "client {client}");
    }
}

/// `--latency-limit` as pgbench's -L in its layout: closed loop, a 1 µs limit makes every
/// transaction late (none skipped); open loop at a million per second with that limit skips
/// what is already late when a client could start it, and skipped + processed = --events.
/// Threads, initial connection time and the deviation are printed as pgbench 15 prints them.
#[test]
fn latency_limit_counts_late_and_skipped_transactions() {
    let out = tempfile::tempdir().unwrap();
    let target = format!("sqlite:{}", out.path().join("ll.sqlite").display());
    let script = out.path().join("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    let script = script.display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--script",
            &script,
            "--target",
            &target,
            "--events",
            "200",
            "--time",
            "0",
            "--latency-limit",
            "0.001",
        ];
        args.extend_from_slice(extra);
        text(&ok(dbrig(out.path(), &args)))
    };
    let closed = run(&[]);
    for want in [
        "number of clients: 1\nnumber of threads: 1\n",
        "number of transactions actually processed: 200\n",
        "number of transactions above the 0.0 ms latency limit: 200/200 (100.000%)\n",
        "latency stddev = ",
        "initial connection time = ",
    ] {
        assert!(closed.contains(want), "missing {want:?} in\n{closed}");
    }
    assert!(!closed.contains("skipped"), "{closed}");

    let open = run(&["--rate", "1000000"]);
    let number = |prefix: &str| -> u64 {
        let line = open
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in\n{open}"));
        line.split([' ', '/']).next().unwrap().parse().unwrap()
    };
    // pgbench's schedule lag, between the deviation and the connection time; none in
    // closed loop. At a million per second without a limit every transaction starts late.
    assert!(!closed.contains("schedule lag"), "{closed}");
    let lagging = text(&ok(dbrig(
        out.path(),
        &[
            "run", "--script", &script, "--target", &target, "--events", "200", "--time", "0",
            "--rate", "1000000",
        ],
    )));
    let lag = lagging
        .lines()
        .find_map(|l| l.strip_prefix("rate limit schedule lag: avg "))
        .unwrap_or_else(|| panic!("no schedule lag in\n{lagging}"));
    let (avg, max) = lag
        .strip_suffix(") ms")
        .and_then(|l| l.split_once(" (max "))
        .unwrap_or_else(|| panic!("{lag}"));
    let (avg, max): (f64, f64) = (avg.parse().unwrap(), max.parse().unwrap());
    assert!(avg > 0.0 && max >= avg, "{lagging}");
    assert!(
        lagging.find("latency stddev") < lagging.find("rate limit schedule lag")
            && lagging.find("rate limit schedule lag") < lagging.find("initial connection time"),
        "{lagging}"
    );
    let processed = number("number of transactions actually processed: ");
    let skipped = number("number of transactions skipped: ");
    assert_eq!(processed + skipped, 200, "{open}");
    assert!(skipped > 0, "{open}");
}

/// `psql -At -c SQL` on database `db` of the shared PostgreSQL.
fn psql_on(db: &str, sql: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            db,
            "-At",
            "-c",
            sql,
        ])
        .output()
        .expect("psql is installed with the server");
    assert!(
        o.status.success(),
        "psql -c {sql}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// The number after `prefix` on its line of `text`.
fn count_after(text: &str, prefix: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in\n{text}"))
        .split([' ', '/'])
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// `--max-tries 3 --failures-detailed` as pgbench's: four clients updating one row in
/// REPEATABLE READ hit serialization failures (40001); each is rolled back and retried from
/// the script's start, at most 3 tries, then counted failed and the client goes on. The row
/// was incremented exactly once per processed transaction (no failed or retried attempt left
/// a trace), processed + failed = --events, and every failure is a serialization failure.
#[test]
fn max_tries_retries_serialization_failures_as_pgbench() {
    let db = crate::postgres::TestDb::new("pgb2_tries");
    psql_on(
        &db.0,
        "CREATE TABLE pgb2_one (id int PRIMARY KEY, v int NOT NULL); INSERT INTO pgb2_one VALUES (1, 0)",
    );
    let out = tempfile::tempdir().unwrap();
    let script = out.path().join("ser.sql");
    std::fs::write(
        &script,
        "BEGIN ISOLATION LEVEL REPEATABLE READ;\nUPDATE pgb2_one SET v = v + 1 WHERE id = 1;\nEND;\n",
    )
    .unwrap();
    let t = text(&ok(dbrig(
        out.path(),
        &[
            "run",
            "--script",
            script.to_str().unwrap(),
            "--target",
            &db.url(),
            "--threads",
            "4",
            "--events",
            "200",
            "--time",
            "0",
            "--max-tries",
            "3",
            "--failures-detailed",
        ],
    )));
    assert!(t.contains("maximum number of tries: 3\n"), "{t}");
    let processed = count_after(&t, "number of transactions actually processed: ");
    let failed = count_after(&t, "number of failed transactions: ");
    assert_eq!(processed + failed, 200, "{t}");
    assert_eq!(
        count_after(&t, "number of serialization failures: "),
        failed,
        "{t}"
    );
    assert_eq!(count_after(&t, "number of deadlock failures: "), 0, "{t}");
    let retried = count_after(&t, "number of transactions retried: ");
    let retries = count_after(&t, "total number of retries: ");
    // Four clients on one row: conflicts are what the script is made of.
    assert!(retries >= retried && retried > 0, "{t}");
    // A failed transaction used all 3 tries: 2 retries each at least.
    assert!(retries >= 2 * failed, "{t}");
    assert_eq!(
        psql_on(&db.0, "SELECT v FROM pgb2_one"),
        processed.to_string(),
        "{t}"
    );
}

/// `--allow-shell`: `\setshell` sets a variable from a command's output (`:x` replaced by
/// its value, `::` kept as a colon), `\shell` runs a command; both through /bin/sh with a
/// cleaned environment: a variable dbrig was started with (a secret, say) is not passed on.
#[test]
fn shell_commands_run_only_when_allowed_without_dbrig_secrets() {
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("sh.sqlite");
    sqlite3(&db, "CREATE TABLE pgb2_shell (n INTEGER, word TEXT)");
    let target = format!("sqlite:{}", db.display());
    let env_dump = out.path().join("env.txt");
    let script = out.path().join("sh.sql");
    std::fs::write(
        &script,
        format!(
            "\\set x 41\n\\setshell n expr :x + 1\n\\shell env >> {}\nINSERT INTO pgb2_shell VALUES (:n, 'a');\n",
            env_dump.display()
        ),
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let args = [
        "run", "--script", script, "--target", &target, "--events", "3", "--time", "0",
    ];
    let refused = error_line(&dbrig(out.path(), &args));
    assert!(refused.contains("only with --allow-shell"), "{refused}");
    let o = Command::new(env!("CARGO_BIN_EXE_dbrig"))
        .args(args)
        .args(["--allow-shell", &format!("--out={}", out.path().display())])
        .env("DBRIG_IT_SECRET", "hunter2")
        .output()
        .unwrap();
    ok(o);
    assert_eq!(
        sqlite3(&db, "SELECT count(*), min(n), max(n) FROM pgb2_shell"),
        "3|42|42"
    );
    let env = std::fs::read_to_string(&env_dump).unwrap();
    assert!(env.contains("PATH="), "{env}");
    assert!(!env.contains("hunter2") && !env.contains("DBRIG"), "{env}");
    // A \setshell whose output is not an integer stops the client with the line.
    std::fs::write(
        out.path().join("bad.sql"),
        "\\setshell n echo ::x\nSELECT 1;\n",
    )
    .unwrap();
    let bad = out.path().join("bad.sql");
    let e = text(&dbrig(
        out.path(),
        &[
            "run",
            "--script",
            bad.to_str().unwrap(),
            "--target",
            &target,
            "--events",
            "1",
            "--time",
            "0",
            "--allow-shell",
        ],
    ));
    assert!(
        e.contains("bad.sql:1: shell command must return an integer (not \":x\")"),
        "{e}"
    );
}
