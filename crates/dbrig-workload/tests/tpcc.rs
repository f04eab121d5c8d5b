//! TPC-C's build and consistency check against real engines: SQLite (a file of its own), and
//! the machine's MariaDB (127.0.0.1:3306) and PostgreSQL (127.0.0.1:5432), each test in a
//! database of its own (created and dropped here, named by test and process) so tests running
//! at once never touch each other's tables. Small per-warehouse sizes keep them short; the
//! population's rules are the same at any size.

use dbrig_core::Value;
use dbrig_driver::{ConnectOptions, Connection, Target};
use dbrig_workload::tpcc::{self, Scale, Table, TpccLoadOptions};

const SMALL: Scale = Scale {
    items: 2_000,
    customers: 1_200,
};

fn options(warehouses: u32) -> TpccLoadOptions {
    TpccLoadOptions {
        warehouses,
        parallel: 2,
        seed: 7,
        scale: SMALL,
        check: true,
    }
}

/// A database of the test's own on a server, dropped at the end.
struct Scratch {
    admin: String,
    drop: String,
    url: String,
}

impl Scratch {
    async fn mariadb(name: &str) -> Scratch {
        let db = format!("dbrig_tpcc_{name}_{}", std::process::id());
        Scratch::on(
            "mysql://root@127.0.0.1:3306/test",
            &format!("DROP DATABASE IF EXISTS {db}"),
            &format!("CREATE DATABASE {db}"),
            format!("mysql://root@127.0.0.1:3306/{db}"),
        )
        .await
    }

    async fn postgres(name: &str) -> Scratch {
        let db = format!("dbrig_tpcc_{name}_{}", std::process::id());
        Scratch::on(
            "postgres://postgres@127.0.0.1:5432/postgres",
            &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
            &format!("CREATE DATABASE {db}"),
            format!("postgres://postgres@127.0.0.1:5432/{db}"),
        )
        .await
    }

    async fn on(admin: &str, drop: &str, create: &str, url: String) -> Scratch {
        let mut c = connect(admin).await;
        c.execute_text(drop).await.unwrap();
        c.execute_text(create).await.unwrap();
        c.close().await;
        Scratch {
            admin: admin.to_owned(),
            drop: drop.to_owned(),
            url,
        }
    }

    async fn done(self) {
        let mut c = connect(&self.admin).await;
        c.execute_text(&self.drop).await.unwrap();
        c.close().await;
    }
}

async fn connect(url: &str) -> Connection {
    Connection::connect(&Target::parse(url).unwrap(), &ConnectOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

async fn count(c: &mut Connection, sql: &str) -> i64 {
    let rows = c.query(sql, &[]).await.unwrap();
    match &rows[0][0] {
        Value::Text(s) => s.parse().unwrap(),
        v => v.as_i64().unwrap(),
    }
}

/// Build two warehouses on `url`; every table has its rows, the check passes, and a corrupted
/// W_YTD makes condition 1 fail at that warehouse; cleanup drops all nine tables.
async fn build_check_corrupt(url: &str) {
    let target = Target::parse(url).unwrap();
    let connect = ConnectOptions::default();
    let quiet = |_: &str| {};
    let report = tpcc::load(&target, &connect, &options(2), &quiet)
        .await
        .unwrap();
    assert!(
        report.check.as_ref().is_some_and(|c| c.passed()),
        "{report:?}"
    );
    let mut c = connect_to(url).await;
    for t in Table::ALL {
        let n = count(&mut c, &format!("SELECT COUNT(*) FROM {}", t.name())).await as u64;
        let loaded = report.rows.iter().find(|(n, _)| n == t.name()).unwrap().1;
        assert_eq!(n, loaded, "{}", t.name());
        if t != Table::OrderLine {
            assert_eq!(n, t.rows(2, SMALL), "{}", t.name());
        }
    }
    // 30 % of each district's orders are new; every order has 5..=15 lines.
    assert_eq!(
        count(&mut c, "SELECT MIN(no_o_id) FROM new_order").await,
        841
    );
    assert_eq!(
        count(
            &mut c,
            "SELECT COUNT(*) FROM orders WHERE o_ol_cnt < 5 OR o_ol_cnt > 15"
        )
        .await,
        0
    );
    // The first 1 000 customers of a district have the sequential last names.
    assert_eq!(
        count(
            &mut c,
            "SELECT COUNT(*) FROM customer WHERE c_id = 372 AND c_last = 'PRICALLYOUGHT'"
        )
        .await,
        20
    );
    // The registry knows the load.
    let data = tpcc::loaded_data(&mut c, &target).await.unwrap();
    assert_eq!((data.warehouses, data.seed, data.scale), (2, 7, SMALL));

    let before = tpcc::check_consistency(&mut c).await.unwrap();
    assert!(before.passed(), "{before:?}");
    c.execute_text("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2")
        .await
        .unwrap();
    let after = tpcc::check_consistency(&mut c).await.unwrap();
    let failed: Vec<u8> = after.failures.iter().map(|f| f.condition).collect();
    assert_eq!(failed, [1, 8], "{after:?}");
    assert_eq!(after.failures[0].row[0], "2");
    assert!(
        after.failures[0].to_string().starts_with(
            "consistency condition 1 (W_YTD = sum(D_YTD) per warehouse) fails, first at (2, "
        ),
        "{}",
        after.failures[0]
    );
    // The newest NEW-ORDER row of a district gone: max(NO_O_ID) falls behind D_NEXT_O_ID
    // (condition 2), and its order has no carrier and no NEW-ORDER row (condition 5).
    c.execute_text("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 3 AND no_o_id = 1200")
        .await
        .unwrap();
    let failed: Vec<u8> = tpcc::check_consistency(&mut c)
        .await
        .unwrap()
        .failures
        .iter()
        .map(|f| f.condition)
        .collect();
    assert_eq!(failed, [1, 2, 5, 8]);
    c.close().await;

    // A second load onto the tables is refused; cleanup drops the nine.
    let again = tpcc::load(&target, &connect, &options(2), &quiet).await;
    assert!(again.unwrap_err().to_string().contains("already exists"));
    let dropped = tpcc::cleanup(&target, &connect).await.unwrap();
    assert_eq!(dropped.dropped.len(), 9);
}

async fn connect_to(url: &str) -> Connection {
    connect(url).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_builds_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("tpcc.db").display());
    build_check_corrupt(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_builds_and_checks() {
    let db = Scratch::mariadb("build").await;
    build_check_corrupt(&db.url).await;
    db.done().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_builds_and_checks() {
    let db = Scratch::postgres("build").await;
    build_check_corrupt(&db.url).await;
    db.done().await;
}
