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
}

/// Dropped even when the test fails (a panic unwinds through it): with the engine's own
/// command-line client, since a drop cannot wait for a connection.
impl Drop for Scratch {
    fn drop(&mut self) {
        let (client, args): (&str, Vec<&str>) = match self.admin.starts_with("mysql:") {
            true => ("mariadb", vec!["-h127.0.0.1", "-uroot", "-e", &self.drop]),
            false => (
                "psql",
                vec![
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                    "-qc",
                    &self.drop,
                ],
            ),
        };
        let _ = std::process::Command::new(client).args(args).output();
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

    let before = tpcc::check_conditions(&mut c, Some(SMALL)).await.unwrap();
    assert!(before.passed(), "{before:?}");
    assert_eq!(before.checked, (1..=12).collect::<Vec<u8>>());
    let failed = |r: tpcc::CheckReport| r.failures.iter().map(|f| f.condition).collect::<Vec<u8>>();
    c.execute_text("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 2")
        .await
        .unwrap();
    let after = tpcc::check_consistency(&mut c).await.unwrap();
    assert_eq!(failed(after.clone()), [1, 8], "{after:?}");
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
    assert_eq!(
        failed(tpcc::check_consistency(&mut c).await.unwrap()),
        [1, 2, 5, 8]
    );
    // As loaded, the district also has one order too many beside its NEW-ORDER rows (11).
    assert_eq!(
        failed(tpcc::check_conditions(&mut c, Some(SMALL)).await.unwrap()),
        [1, 2, 5, 8, 11]
    );
    // A delivered order's line without its delivery date (7).
    c.execute_text(
        "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 1 AND ol_number = 1",
    )
    .await
    .unwrap();
    assert_eq!(
        failed(tpcc::check_consistency(&mut c).await.unwrap()),
        [1, 2, 5, 7, 8]
    );
    // An order's line gone: its district's line count (4) and the order's (6).
    c.execute_text(
        "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 1",
    )
    .await
    .unwrap();
    assert_eq!(
        failed(tpcc::check_consistency(&mut c).await.unwrap()),
        [1, 2, 4, 5, 6, 7, 8]
    );
    // A customer's balance off by a cent: against the payments (10) and the YTD payment (12).
    c.execute_text(
        "UPDATE customer SET c_balance = c_balance + 0.01 WHERE c_w_id = 2 AND c_d_id = 4 AND c_id = 7",
    )
    .await
    .unwrap();
    let r = tpcc::check_consistency(&mut c).await.unwrap();
    assert_eq!(failed(r.clone()), [1, 2, 4, 5, 6, 7, 8, 10, 12]);
    let ten = r.failures.iter().find(|f| f.condition == 10).unwrap();
    assert_eq!(ten.row[..3], ["2", "4", "7"], "{ten}");
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_builds_and_checks() {
    let db = Scratch::postgres("build").await;
    build_check_corrupt(&db.url).await;
}

// ---- The transactions' effects, on a small database ----

use dbrig_core::EventTally;
use dbrig_workload::tpcc::Population;
use dbrig_workload::tpcc::txn::{RunShape, TpccClient, TxType};

async fn fig(c: &mut Connection, sql: &str) -> f64 {
    let rows = c.query(sql, &[]).await.unwrap();
    match &rows[0][0] {
        Value::Text(s) => s.parse().unwrap(),
        Value::Float(f) => *f,
        Value::Null => 0.0,
        v => v.as_i64().unwrap() as f64,
    }
}

/// The figures the transactions move, read at once.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Figures {
    next_o_id: f64,
    orders: f64,
    new_orders: f64,
    lines: f64,
    undelivered: f64,
    order_cnt: f64,
    s_ytd: f64,
    w_ytd: f64,
    d_ytd: f64,
    balance: f64,
    ytd_payment: f64,
    payment_cnt: f64,
    delivery_cnt: f64,
    history: f64,
    h_amount: f64,
    delivered_amount: f64,
    run_quantity: f64,
}

async fn figures(c: &mut Connection) -> Figures {
    Figures {
        next_o_id: fig(c, "SELECT SUM(d_next_o_id) FROM district").await,
        orders: fig(c, "SELECT COUNT(*) FROM orders").await,
        new_orders: fig(c, "SELECT COUNT(*) FROM new_order").await,
        lines: fig(c, "SELECT COUNT(*) FROM order_line").await,
        undelivered: fig(c, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL").await,
        order_cnt: fig(c, "SELECT SUM(s_order_cnt) FROM stock").await,
        s_ytd: fig(c, "SELECT SUM(s_ytd) FROM stock").await,
        w_ytd: fig(c, "SELECT SUM(w_ytd) FROM warehouse").await,
        d_ytd: fig(c, "SELECT SUM(d_ytd) FROM district").await,
        balance: fig(c, "SELECT SUM(c_balance) FROM customer").await,
        ytd_payment: fig(c, "SELECT SUM(c_ytd_payment) FROM customer").await,
        payment_cnt: fig(c, "SELECT SUM(c_payment_cnt) FROM customer").await,
        delivery_cnt: fig(c, "SELECT SUM(c_delivery_cnt) FROM customer").await,
        history: fig(c, "SELECT COUNT(*) FROM history").await,
        h_amount: fig(c, "SELECT SUM(h_amount) FROM history").await,
        delivered_amount: fig(
            c,
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_delivery_d IS NOT NULL",
        )
        .await,
        run_quantity: fig(
            c,
            "SELECT SUM(ol_quantity) FROM order_line WHERE ol_o_id > 1200",
        )
        .await,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.005
}

/// Each transaction type's effects against what the specification says it does, the mix a
/// deck deals, New-Order's rollbacks, and the consistency conditions after all of it.
async fn transactions_do_what_the_spec_says(url: &str) {
    let target = Target::parse(url).unwrap();
    let quiet = |_: &str| {};
    tpcc::load(&target, &ConnectOptions::default(), &options(2), &quiet)
        .await
        .unwrap();
    let mut c = connect(url).await;
    let data = tpcc::loaded_data(&mut c, &target).await.unwrap();
    let pop = Population {
        seed: data.seed,
        scale: data.scale,
        load_time: 0,
    };
    let shape = RunShape {
        warehouses: 2,
        scale: SMALL,
        constants: pop.run_constants(11),
        mix: [10, 10, 1, 1, 1],
        home_warehouse: true,
        procedures: false,
    };
    let mut client = TpccClient::new(&mut c, 0, shape, 11).await.unwrap();
    let run = async |c: &mut Connection, client: &mut TpccClient, t: TxType| {
        let mut q = EventTally::default();
        client.run(c, t, &mut q).await.unwrap();
        q.rolled_back
    };

    // New-Order: one order of 5..=15 lines, its NEW-ORDER row, the district's next number;
    // each line's stock ordered once more and its quantity added to S_YTD.
    let mut committed = 0;
    for _ in 0..20 {
        let before = figures(&mut c).await;
        let rolled_back = run(&mut c, &mut client, TxType::NewOrder).await;
        let after = figures(&mut c).await;
        if rolled_back {
            assert_eq!(after, before, "a rolled-back New-Order changes nothing");
            continue;
        }
        committed += 1;
        let lines = after.lines - before.lines;
        assert!((5.0..=15.0).contains(&lines), "{lines} lines");
        assert_eq!(after.next_o_id - before.next_o_id, 1.0);
        assert_eq!(after.orders - before.orders, 1.0);
        assert_eq!(after.new_orders - before.new_orders, 1.0);
        assert_eq!(after.undelivered - before.undelivered, 1.0);
        assert_eq!(after.order_cnt - before.order_cnt, lines);
        // S_YTD grew by exactly the new order's quantities (orders above the loaded 1 200
        // are this test's), each 1..=10.
        let qty = after.run_quantity - before.run_quantity;
        assert!((lines..=10.0 * lines).contains(&qty), "{qty}");
        assert_eq!(after.s_ytd - before.s_ytd, qty);
    }
    assert!(committed >= 15, "{committed} of 20 committed");

    // Payment: the amount added to W_YTD, D_YTD and the customer's YTD payment, taken from
    // the balance, and written to HISTORY.
    for _ in 0..20 {
        let before = figures(&mut c).await;
        assert!(!run(&mut c, &mut client, TxType::Payment).await);
        let after = figures(&mut c).await;
        let amount = after.h_amount - before.h_amount;
        assert!((1.0..=5000.0).contains(&amount), "{amount}");
        assert_eq!(after.history - before.history, 1.0);
        assert!(close(after.w_ytd - before.w_ytd, amount));
        assert!(close(after.d_ytd - before.d_ytd, amount));
        assert!(close(after.ytd_payment - before.ytd_payment, amount));
        assert!(close(before.balance - after.balance, amount));
        assert_eq!(after.payment_cnt - before.payment_cnt, 1.0);
    }

    // Delivery: the oldest new order of each of the home warehouse's ten districts delivered
    // (a carrier, the lines dated) and its lines' amounts added to its customer's balance.
    let before = figures(&mut c).await;
    assert!(!run(&mut c, &mut client, TxType::Delivery).await);
    let after = figures(&mut c).await;
    assert_eq!(before.new_orders - after.new_orders, 10.0);
    assert_eq!(before.undelivered - after.undelivered, 10.0);
    assert_eq!(after.delivery_cnt - before.delivery_cnt, 10.0);
    let delivered = after.delivered_amount - before.delivered_amount;
    assert!(delivered > 0.0);
    assert!(close(after.balance - before.balance, delivered));

    // Order-Status and Stock-Level read and change nothing.
    for t in [TxType::OrderStatus, TxType::StockLevel] {
        let before = figures(&mut c).await;
        for _ in 0..10 {
            assert!(!run(&mut c, &mut client, t).await);
        }
        assert_eq!(figures(&mut c).await, before, "{}", t.name());
    }

    // The deck: 230 events deal 100/100/10/10/10; New-Order's rollbacks are about 1 %.
    let mut kinds = std::collections::BTreeMap::<&str, u32>::new();
    let mut rollbacks = 0;
    for _ in 0..230 {
        let mut q = EventTally::default();
        client.event(&mut c, &mut q).await.unwrap();
        *kinds.entry(q.kind.unwrap()).or_default() += 1;
        rollbacks += u32::from(q.rolled_back);
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            ("delivery", 10),
            ("new_order", 100),
            ("order_status", 10),
            ("payment", 100),
            ("stock_level", 10)
        ]
    );
    assert!(rollbacks <= 6, "{rollbacks} rollbacks of 100 New-Orders");

    // After all of it the database is consistent; but no longer as loaded: the Deliveries
    // took NEW-ORDER rows (condition 11 holds only for the load).
    let check = tpcc::check_consistency(&mut c).await.unwrap();
    assert!(check.passed(), "{check:?}");
    let loaded = tpcc::loaded_data(&mut c, &target).await.unwrap();
    let as_loaded = tpcc::check_conditions(&mut c, Some(loaded.scale))
        .await
        .unwrap();
    assert_eq!(
        as_loaded
            .failures
            .iter()
            .map(|f| f.condition)
            .collect::<Vec<_>>(),
        [11],
        "{as_loaded:?}"
    );
    c.close().await;
    tpcc::cleanup(&target, &ConnectOptions::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("tpcc.db").display());
    transactions_do_what_the_spec_says(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_transactions() {
    let db = Scratch::mariadb("txn").await;
    transactions_do_what_the_spec_says(&db.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_transactions() {
    let db = Scratch::postgres("txn").await;
    transactions_do_what_the_spec_says(&db.url).await;
}
