//! Data safety against copies (issue 30 item 4): cleanup drops a table only when it proves the
//! table itself is the one dbrig made, not a copy of it — a copy made with `CREATE TABLE …
//! LIKE` in the same second carries dbrig's comment token and creation time, `… AS SELECT` its
//! rows, a copy of the database or file its registry — and says why it refuses. On the real
//! servers, each copy made in the second dbrig's table was marked in.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbrig_workload::registry;

use crate::mysql::{TestDb as MyDb, sql as mysql};
use crate::postgres::TestDb as PgDb;
use crate::{dbrig, error_line, ok, text};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Sleep into the start of the next wall-clock second, so what follows shares one second.
fn start_of_a_second() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    std::thread::sleep(Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()) + 5_000_000,
    ));
}

/// dbrig's `sbtest1` (engine `engine`), made and registered as `dbrig prepare` makes it, with
/// 10 rows; ready. Returns when its marker is recorded.
fn dbrigs_table(url: &str, engine: &str) {
    runtime().block_on(async {
        let target = dbrig_driver::Target::parse(url).unwrap();
        let mut c = dbrig_driver::Connection::connect(&target, &Default::default())
            .await
            .unwrap();
        registry::ensure(&mut c).await.unwrap();
        let token = registry::new_token();
        let create = format!(
            "CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''){}",
            if engine.is_empty() { String::new() } else { format!(" ENGINE={engine}") }
        );
        c.execute_text(&registry::marked_create(c.dialect(), &create, &token))
            .await
            .unwrap();
        c.execute_text(
            "INSERT INTO sbtest1 (id, k) VALUES (1,1),(2,2),(3,3),(4,4),(5,5),(6,6),(7,7),(8,8),(9,9),(10,10)",
        )
        .await
        .unwrap();
        registry::record(&mut c, "sbtest1", "oltp_table", &token, "{}")
            .await
            .unwrap();
        registry::mark_ready(&mut c, "sbtest1").await.unwrap();
        c.close().await;
    });
}

/// The creation time MariaDB shows for `db.table`.
fn created(db: &str, table: &str) -> String {
    mysql(&format!(
        "SELECT CAST(create_time AS CHAR) FROM information_schema.tables WHERE table_schema = '{db}' AND table_name = '{table}'"
    ))
    .trim()
    .to_owned()
}

fn cleanup(out: &Path, url: &str) -> std::process::Output {
    dbrig(out, &["cleanup", "oltp_point_select", "--target", url])
}

/// Make dbrig's table and, in the same second, the user's copy through `copy` (SQL run with
/// the database named `{d}`); retried (at most 5 times) until the copy did share the second,
/// which is the case dbrig must tell apart. Returns the error line of the cleanup, which must
/// refuse.
fn copy_in_the_same_second(
    db: &MyDb,
    engine: &str,
    copy: &str,
    copy_table: (&str, &str),
) -> String {
    let out = tempfile::tempdir().unwrap();
    let d = &db.0;
    for _ in 0..5 {
        mysql(&format!(
            "DROP TABLE IF EXISTS {d}.sbtest1, {d}.dbrigs, {d}.mine, {d}.dbrig_objects"
        ));
        start_of_a_second();
        dbrigs_table(&db.url(), engine);
        mysql(&copy.replace("{d}", d));
        let ours = created(d, "dbrigs").max(created(d, "sbtest1"));
        let theirs = created(copy_table.0, copy_table.1);
        let marker = mysql(&format!(
            "SELECT marker FROM {}.dbrig_objects WHERE name = 'sbtest1'",
            copy_table.0
        ));
        if !marker.contains(&theirs) && engine.is_empty() {
            // Not the same second after all (a loaded machine): again.
            eprintln!("copy at {theirs}, dbrig's at {ours}: again");
            continue;
        }
        let r = cleanup(
            out.path(),
            &format!("mysql://root@127.0.0.1:3306/{}", copy_table.0),
        );
        return error_line(&r);
    }
    panic!("never made the copy in the second dbrig's table was marked in");
}

/// InnoDB: the table id tells dbrig's table from a copy made in the same second — renamed
/// into its name, made with `… AS SELECT` carrying its comment, or in another database with the
/// registry copied along. The user's rows stay; dbrig's own table (renamed) is still proven.
#[test]
fn cleanup_never_drops_a_copy_made_in_the_same_second_mariadb() {
    let db = MyDb::new("copy_like");
    let d = db.0.clone();
    let rows = |db: &str, t: &str| {
        mysql(&format!("SELECT COUNT(*) FROM {db}.{t}"))
            .trim()
            .to_owned()
    };

    // CREATE TABLE … LIKE, then the swap: dbrig's renamed away, the copy into its name.
    let e = copy_in_the_same_second(
        &db,
        "",
        "CREATE TABLE {d}.mine LIKE {d}.sbtest1; INSERT INTO {d}.mine (id, k) VALUES (1, 100), (2, 200); \
         RENAME TABLE {d}.sbtest1 TO {d}.dbrigs, {d}.mine TO {d}.sbtest1",
        (&d, "sbtest1"),
    );
    assert!(
        e.contains("table sbtest1")
            && e.contains("is not the table dbrig created")
            && e.contains("InnoDB table id")
            && e.contains("copy"),
        "{e}"
    );
    assert_eq!(rows(&d, "sbtest1"), "2", "the user's copy is kept");
    assert_eq!(rows(&d, "dbrigs"), "10");

    // CREATE TABLE … AS SELECT with dbrig's comment: its rows and marker, not its id.
    let e = copy_in_the_same_second(
        &db,
        "",
        "CREATE TABLE {d}.mine AS SELECT * FROM {d}.sbtest1; \
         SET @c = (SELECT table_comment FROM information_schema.tables WHERE table_schema = '{d}' AND table_name = 'sbtest1'); \
         SET @s = CONCAT('ALTER TABLE {d}.mine COMMENT = ''', @c, ''''); PREPARE s FROM @s; EXECUTE s; \
         RENAME TABLE {d}.sbtest1 TO {d}.dbrigs, {d}.mine TO {d}.sbtest1",
        (&d, "sbtest1"),
    );
    assert!(e.contains("InnoDB table id"), "{e}");
    assert_eq!(rows(&d, "sbtest1"), "10", "the user's copy is kept");

    // Into another database, the registry copied along.
    let other = MyDb::new("copy_other");
    let o = other.0.clone();
    let e = copy_in_the_same_second(
        &db,
        "",
        &format!(
            "DROP TABLE IF EXISTS {o}.sbtest1, {o}.dbrig_objects; CREATE TABLE {o}.sbtest1 LIKE {{d}}.sbtest1; INSERT INTO {o}.sbtest1 SELECT * FROM {{d}}.sbtest1; \
             CREATE TABLE {o}.dbrig_objects LIKE {{d}}.dbrig_objects; INSERT INTO {o}.dbrig_objects SELECT * FROM {{d}}.dbrig_objects"
        ),
        (&o, "sbtest1"),
    );
    assert!(e.contains("InnoDB table id"), "{e}");
    assert_eq!(
        rows(&o, "sbtest1"),
        "10",
        "the copy in the other database is kept"
    );

    // dbrig's own table, untouched, goes (the copies are not in its database's registry).
    mysql(&format!("DROP TABLE {d}.sbtest1"));
    let out = tempfile::tempdir().unwrap();
    dbrigs_table(&db.url(), "");
    ok(cleanup(out.path(), &db.url()));
    assert_eq!(
        mysql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}' AND table_name IN ('sbtest1', 'dbrig_objects')"
        ))
        .trim(),
        "0"
    );
}

/// Engines without table ids (MyISAM, Aria, MEMORY): dbrig seals its marker once the table's
/// creation second is over, under a write lock, so a copy never shares both token and time;
/// cleanup refuses the copy and drops dbrig's own.
#[test]
fn cleanup_never_drops_a_copy_of_an_engine_without_ids_mariadb() {
    for engine in ["MyISAM", "Aria", "MEMORY"] {
        let db = MyDb::new(&format!("copy_{}", engine.to_lowercase()));
        let d = db.0.clone();
        let e = copy_in_the_same_second(
            &db,
            engine,
            "CREATE TABLE {d}.mine LIKE {d}.sbtest1; INSERT INTO {d}.mine (id, k) VALUES (1, 100); \
             RENAME TABLE {d}.sbtest1 TO {d}.dbrigs, {d}.mine TO {d}.sbtest1",
            (&d, "sbtest1"),
        );
        assert!(
            e.contains("is not the table dbrig created") && e.contains("it is a copy"),
            "{engine}: {e}"
        );
        assert_eq!(
            mysql(&format!("SELECT COUNT(*) FROM {d}.sbtest1")).trim(),
            "1",
            "{engine}: the user's copy is kept"
        );
        // dbrig's own (sealed) table goes.
        mysql(&format!(
            "DROP TABLE {d}.sbtest1; RENAME TABLE {d}.dbrigs TO {d}.sbtest1"
        ));
        let out = tempfile::tempdir().unwrap();
        let o = ok(cleanup(out.path(), &db.url()));
        assert!(text(&o).contains("sbtest1"), "{engine}: {}", text(&o));
        assert_eq!(
            mysql(&format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{d}'"
            ))
            .trim(),
            "0",
            "{engine}"
        );
    }
}

/// An account that cannot read InnoDB's table ids (no PROCESS privilege): cleanup of a table
/// recorded with one refuses and says what to grant; a table that account made itself is sealed
/// instead and cleaned up.
#[test]
fn without_process_privilege_cleanup_says_what_to_grant_mariadb() {
    let db = MyDb::new("copy_priv");
    let d = db.0.clone();
    let user = format!("dbrig_it_np_{}", std::process::id());
    mysql(&format!(
        "DROP USER IF EXISTS '{user}'@'%'; CREATE USER '{user}'@'%'; GRANT ALL ON {d}.* TO '{user}'@'%'"
    ));
    let url = format!("mysql://{user}@127.0.0.1:3306/{d}");
    let out = tempfile::tempdir().unwrap();
    dbrigs_table(&db.url(), "");
    let e = error_line(&cleanup(out.path(), &url));
    assert!(
        e.contains("may not be the table dbrig created")
            && e.contains("PROCESS")
            && e.contains("DROP TABLE sbtest1"),
        "{e}"
    );
    assert_eq!(
        mysql(&format!("SELECT COUNT(*) FROM {d}.sbtest1")).trim(),
        "10"
    );
    mysql(&format!("DROP TABLE {d}.sbtest1, {d}.dbrig_objects"));
    dbrigs_table(&url, "");
    assert!(
        mysql(&format!("SELECT marker FROM {d}.dbrig_objects")).contains("#sealed"),
        "sealed without an id"
    );
    ok(cleanup(out.path(), &url));
    mysql(&format!("DROP USER '{user}'@'%'"));
}

fn psql_in(db: &str, statements: &str) -> String {
    let o = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            db,
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            statements,
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{statements}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

/// PostgreSQL: a database made from dbrig's as its TEMPLATE holds its tables with their OIDs
/// and its registry; cleanup there refuses (the database's OID differs) and drops dbrig's own.
#[test]
fn cleanup_never_drops_a_template_copy_postgres() {
    let db = PgDb::new("copy_tpl");
    let out = tempfile::tempdir().unwrap();
    ok(dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &db.url(),
            "--table-size",
            "10",
        ],
    ));
    let copy = format!("{}_copy", db.0);
    psql_in("postgres", &format!("DROP DATABASE IF EXISTS {copy}"));
    psql_in(
        "postgres",
        &format!("CREATE DATABASE {copy} TEMPLATE {}", db.0),
    );
    let copy_url = db.url().replace(&db.0, &copy);
    let r = cleanup(out.path(), &copy_url);
    let kept = psql_in(&copy, "SELECT COUNT(*) FROM sbtest1");
    psql_in("postgres", &format!("DROP DATABASE {copy}"));
    let e = error_line(&r);
    assert!(
        e.contains("is not the table dbrig created") && e.contains("TEMPLATE"),
        "{e}"
    );
    assert_eq!(kept, "10");
    ok(cleanup(out.path(), &db.url()));
}

/// SQLite: a copy of dbrig's database file holds its tables, tokens and registry; cleanup of the
/// copy refuses (another file), cleanup of dbrig's own file drops them.
#[test]
fn cleanup_never_drops_tables_of_a_copied_file_sqlite() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("made.sqlite");
    let copy = out.path().join("copy.sqlite");
    let url = |f: &Path| format!("sqlite:{}", f.display());
    ok(dbrig(
        out.path(),
        &[
            "prepare",
            "oltp_point_select",
            "--target",
            &url(&file),
            "--table-size",
            "10",
        ],
    ));
    std::fs::copy(&file, &copy).unwrap();
    let e = error_line(&cleanup(out.path(), &url(&copy)));
    assert!(
        e.contains("is not the table dbrig created") && e.contains("the file is a copy"),
        "{e}"
    );
    ok(cleanup(out.path(), &url(&file)));
}
