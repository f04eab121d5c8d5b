//! TPC-C's stored routines against the machine's MariaDB (127.0.0.1:3306) and PostgreSQL
//! (127.0.0.1:5432): databases of the test's own per engine (named by test and process, dropped
//! at the end), each with the TPC-C schema (`tpcc/sql/common.sql`) and the same small seeded
//! population. One database gets a seeded sequence of transactions through the stored
//! routines, the other the same inputs as client-side statements written here from the
//! specification's clauses (2.4.2.2, 2.5.2.2, 2.6.2.2, 2.7.4.2, 2.8.2.2) and the client-side
//! mode's SQL; every table must then hold the same rows. Hand-computed checks cover what the
//! sequence could hide: the unused item's rollback leaves nothing behind, the last-name rule
//! picks the namesake at n/2 rounded up, Delivery takes each district's oldest new order,
//! Stock-Level counts what a direct query counts. Last, the kind's two modes end to end: the
//! tpcc branch's loader builds two identical databases, and a client of each mode (the
//! client-side statements of `tpcc::txn`, `--procedures`) runs the same seeded events: every
//! table must agree, so the procedure mode draws the inputs the client-side mode draws.

use dbrig_core::EventTally;
use dbrig_core::Value;
use dbrig_driver::{ConnectOptions, Connection, Dialect, Target};
use dbrig_workload::sql::SqlSet;
use dbrig_workload::tpcc::procedures::{self, Calls, CustomerRef, OrderLine, TxInput};
use dbrig_workload::tpcc::{self, Scale, Tpcc, TpccLoadOptions, TpccOptions};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The small population: items, warehouses, customers (and orders) per district, of which
/// the last NEW_ORDERS are undelivered; last names repeat every NAMES customers, so a name
/// has several namesakes.
const ITEMS: u32 = 300;
const WAREHOUSES: u32 = 2;
const CUSTOMERS: u32 = 30;
const NEW_ORDERS: u32 = 9;
const NAMES: u32 = 7;

/// Each table's rows as compared: every column but the dates (the load's clock and the
/// server's CURRENT_TIMESTAMP differ between two loads and two runs), of which only whether
/// ORDER_LINE's delivery date is set counts; ordered by key (history by all it keeps).
const TABLES: [(&str, &str); 9] = [
    ("warehouse", "SELECT * FROM warehouse ORDER BY w_id"),
    ("district", "SELECT * FROM district ORDER BY d_w_id, d_id"),
    (
        "customer",
        "SELECT c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data FROM customer ORDER BY c_w_id, c_d_id, c_id",
    ),
    (
        "history",
        "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data FROM history ORDER BY h_c_w_id, h_c_d_id, h_c_id, h_w_id, h_d_id, h_amount, h_data",
    ),
    (
        "new_order",
        "SELECT * FROM new_order ORDER BY no_w_id, no_d_id, no_o_id",
    ),
    (
        "orders",
        "SELECT o_id, o_d_id, o_w_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local FROM orders ORDER BY o_w_id, o_d_id, o_id",
    ),
    (
        "order_line",
        "SELECT ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d IS NULL, ol_quantity, ol_amount, ol_dist_info FROM order_line ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number",
    ),
    ("item", "SELECT * FROM item ORDER BY i_id"),
    ("stock", "SELECT * FROM stock ORDER BY s_w_id, s_i_id"),
];

/// A database of the test's own, dropped by `done`.
struct Scratch {
    admin: String,
    drop: String,
    url: String,
}

impl Scratch {
    async fn new(dialect: Dialect, name: &str) -> Scratch {
        let s = Scratch::empty(dialect, name).await;
        let mut c = connect(&s.url).await;
        populate(&mut c).await;
        c.close().await;
        s
    }

    async fn empty(dialect: Dialect, name: &str) -> Scratch {
        let db = format!("dbrig_tpccsp_{name}_{}", std::process::id());
        let (admin, drop, url) = match dialect {
            Dialect::Mysql => (
                "mysql://root@127.0.0.1:3306/test".to_owned(),
                format!("DROP DATABASE IF EXISTS {db}"),
                format!("mysql://root@127.0.0.1:3306/{db}"),
            ),
            _ => (
                "postgres://postgres@127.0.0.1:5432/postgres".to_owned(),
                format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
                format!("postgres://postgres@127.0.0.1:5432/{db}"),
            ),
        };
        let mut c = connect(&admin).await;
        c.execute_text(&drop).await.unwrap();
        c.execute_text(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        c.close().await;
        Scratch { admin, drop, url }
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

/// The specification's last name of number `n` (clause 4.3.2.3): three syllables.
fn last_name(n: u32) -> String {
    const S: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    format!(
        "{}{}{}",
        S[(n / 100) as usize],
        S[(n / 10 % 10) as usize],
        S[(n % 10) as usize]
    )
}

/// Rows in INSERTs of up to 100 rows, values bound.
async fn insert(c: &mut Connection, table: &str, rows: Vec<Vec<Value>>) {
    for chunk in rows.chunks(100) {
        let one = format!("({})", vec!["?"; chunk[0].len()].join(", "));
        let text = format!(
            "INSERT INTO {table} VALUES {}",
            vec![one.as_str(); chunk.len()].join(", ")
        );
        let params: Vec<Value> = chunk.iter().flatten().cloned().collect();
        x(c, &text, &params).await;
    }
}

fn txt(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

fn a_string(r: &mut SmallRng, min: usize, max: usize) -> Value {
    let n = r.random_range(min..=max);
    txt((0..n)
        .map(|_| char::from(b'a' + r.random_range(0..26u8)))
        .collect::<String>())
}

fn rand_money(r: &mut SmallRng, lo: i64, hi: i64) -> Value {
    txt(money(r.random_range(lo..=hi)))
}

fn rate(r: &mut SmallRng) -> Value {
    txt(format!("0.{:04}", r.random_range(0..=2000)))
}

fn address(r: &mut SmallRng) -> Vec<Value> {
    vec![
        a_string(r, 10, 20),
        a_string(r, 10, 20),
        a_string(r, 10, 20),
        txt("ST"),
        txt("123411111"),
    ]
}

/// The TPC-C tables of `tpcc/sql/common.sql` with their primary keys and indexes, and a
/// small population drawn from a fixed seed (the same in every database).
async fn populate(c: &mut Connection) {
    let dialect = c.dialect();
    let specific = match dialect {
        Dialect::Mysql => include_str!("../src/tpcc/sql/mysql.sql"),
        _ => include_str!("../src/tpcc/sql/postgres.sql"),
    };
    let schema = SqlSet::new(
        dialect,
        include_str!("../src/tpcc/sql/common.sql"),
        specific,
    );
    let keys = [
        ("warehouse", "w_id"),
        ("district", "d_w_id, d_id"),
        ("customer", "c_w_id, c_d_id, c_id"),
        ("history", ""),
        ("new_order", "no_w_id, no_d_id, no_o_id"),
        ("orders", "o_w_id, o_d_id, o_id"),
        ("order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number"),
        ("item", "i_id"),
        ("stock", "s_w_id, s_i_id"),
    ];
    let timestamp = schema.template("type_timestamp").to_owned();
    let suffix = schema.template("type_suffix").to_owned();
    for (t, k) in keys {
        let key = match k {
            "" => String::new(),
            k => format!(",\n  PRIMARY KEY ({k})"),
        };
        let create = schema.render(
            &format!("create_{t}"),
            &[
                ("timestamp", &timestamp),
                ("key", &key),
                ("suffix", &suffix),
            ],
        );
        c.execute_text(&create).await.unwrap();
    }
    for stmt in schema.template("indexes").split(';') {
        c.execute_text(stmt.trim()).await.unwrap();
    }

    let mut r = SmallRng::seed_from_u64(42);
    let since = txt("2026-11-28 12:00:00");
    let item = (1..=ITEMS)
        .map(|i| {
            vec![
                int(i),
                int(r.random_range(1..=10_000)),
                a_string(&mut r, 14, 24),
                rand_money(&mut r, 100, 10_000),
                a_string(&mut r, 26, 50),
            ]
        })
        .collect();
    insert(c, "item", item).await;
    let mut tables: [(&str, Vec<Vec<Value>>); 8] = [
        ("warehouse", vec![]),
        ("district", vec![]),
        ("customer", vec![]),
        ("history", vec![]),
        ("orders", vec![]),
        ("new_order", vec![]),
        ("order_line", vec![]),
        ("stock", vec![]),
    ];
    for w in 1..=WAREHOUSES {
        let mut row = vec![int(w), a_string(&mut r, 6, 10)];
        row.extend(address(&mut r));
        row.extend([rate(&mut r), txt("300000.00")]);
        tables[0].1.push(row);
        for i in 1..=ITEMS {
            let mut row = vec![int(i), int(w), int(r.random_range(10..=100))];
            row.extend((0..10).map(|_| a_string(&mut r, 24, 24)));
            row.extend([int(0), int(0), int(0), a_string(&mut r, 26, 50)]);
            tables[7].1.push(row);
        }
        for d in 1..=10 {
            let mut row = vec![int(d), int(w), a_string(&mut r, 6, 10)];
            row.extend(address(&mut r));
            row.extend([rate(&mut r), txt("30000.00"), int(CUSTOMERS + 1)]);
            tables[1].1.push(row);
            for cu in 1..=CUSTOMERS {
                let mut row = vec![
                    int(cu),
                    int(d),
                    int(w),
                    a_string(&mut r, 8, 16),
                    txt("OE"),
                    txt(last_name((cu - 1) % NAMES)),
                ];
                row.extend(address(&mut r));
                let credit = if r.random_bool(0.3) { "BC" } else { "GC" };
                row.extend([
                    txt("1111222233334444"),
                    since.clone(),
                    txt(credit),
                    txt("50000.00"),
                    rate(&mut r),
                    txt("-10.00"),
                    txt("10.00"),
                    int(1),
                    int(0),
                    a_string(&mut r, 300, 500),
                ]);
                tables[2].1.push(row);
                tables[3].1.push(vec![
                    int(cu),
                    int(d),
                    int(w),
                    int(d),
                    int(w),
                    since.clone(),
                    txt("10.00"),
                    a_string(&mut r, 12, 24),
                ]);
            }
            // One order per customer in a shuffled order; the last NEW_ORDERS undelivered.
            let mut who: Vec<u32> = (1..=CUSTOMERS).collect();
            for i in (1..who.len()).rev() {
                who.swap(i, r.random_range(0..=i));
            }
            for o in 1..=CUSTOMERS {
                let new = o > CUSTOMERS - NEW_ORDERS;
                let lines = r.random_range(5..=15u32);
                let carrier = match new {
                    true => Value::Null,
                    false => int(r.random_range(1..=10)),
                };
                tables[4].1.push(vec![
                    int(o),
                    int(d),
                    int(w),
                    int(who[o as usize - 1]),
                    since.clone(),
                    carrier,
                    int(lines),
                    int(1),
                ]);
                if new {
                    tables[5].1.push(vec![int(o), int(d), int(w)]);
                }
                for n in 1..=lines {
                    let (delivered, amount) = match new {
                        true => (Value::Null, txt("0.00")),
                        false => (since.clone(), rand_money(&mut r, 1, 999_999)),
                    };
                    tables[6].1.push(vec![
                        int(o),
                        int(d),
                        int(w),
                        int(n),
                        int(r.random_range(1..=ITEMS)),
                        int(w),
                        delivered,
                        int(5),
                        amount,
                        a_string(&mut r, 24, 24),
                    ]);
                }
            }
        }
    }
    for (t, rows) in tables {
        insert(c, t, rows).await;
    }
}

/// `?` numbered `$1…` on PostgreSQL.
fn sql(dialect: Dialect, text: &str) -> String {
    if dialect != Dialect::Postgres {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut n = 0;
    for ch in text.chars() {
        if ch == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(ch);
        }
    }
    out
}

async fn q(c: &mut Connection, text: &str, params: &[Value]) -> Vec<Vec<Value>> {
    let s = sql(c.dialect(), text);
    c.query(&s, params)
        .await
        .unwrap_or_else(|e| panic!("{s}: {e}"))
}

async fn x(c: &mut Connection, text: &str, params: &[Value]) {
    let s = sql(c.dialect(), text);
    c.execute_params(&s, params)
        .await
        .unwrap_or_else(|e| panic!("{s}: {e}"));
}

fn int(v: u32) -> Value {
    Value::Int(i64::from(v))
}

fn as_int(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("not an integer: {v:?}"))
}

fn text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        other => panic!("not text: {other:?}"),
    }
}

/// A DECIMAL(_, 2) value in cents.
fn cents(v: &Value) -> i64 {
    let s = text(v);
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let frac = format!("{frac:0<2}");
    let neg = int.starts_with('-');
    let whole: i64 = int.trim_start_matches('-').parse().unwrap();
    let c = whole * 100 + frac[..2].parse::<i64>().unwrap();
    if neg { -c } else { c }
}

fn money(c: i64) -> String {
    let sign = if c < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
}

/// The customer a Payment or Order-Status names: by id, or the row at ⌈n/2⌉ of the district's
/// customers of that last name sorted by first name (clause 2.5.2.2).
async fn customer_id(c: &mut Connection, w: u32, d: u32, who: &CustomerRef) -> u32 {
    match who {
        CustomerRef::Id(id) => *id,
        CustomerRef::LastName(name) => {
            let rows = q(
                c,
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
                &[int(w), int(d), Value::Text(name.clone())],
            )
            .await;
            assert!(!rows.is_empty(), "no customer named {name}");
            as_int(&rows[rows.len().div_ceil(2) - 1][0]) as u32
        }
    }
}

/// The transaction as client-side statements, one by one, as the specification describes it.
/// Returns whether it committed.
async fn client_side(c: &mut Connection, input: &TxInput) -> bool {
    c.execute_text("BEGIN").await.unwrap();
    match input {
        TxInput::NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
        } => {
            let (w, d) = (int(*w_id), int(*d_id));
            q(
                c,
                "SELECT w_tax FROM warehouse WHERE w_id = ?",
                std::slice::from_ref(&w),
            )
            .await;
            let r = q(
                c,
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
                &[w.clone(), d.clone()],
            )
            .await;
            let o_id = as_int(&r[0][1]);
            x(
                c,
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
                &[w.clone(), d.clone()],
            )
            .await;
            q(
                c,
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[w.clone(), d.clone(), int(*c_id)],
            )
            .await;
            let all_local = lines.iter().all(|l| l.supply_w_id == *w_id);
            x(
                c,
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
                &[
                    Value::Int(o_id),
                    d.clone(),
                    w.clone(),
                    int(*c_id),
                    Value::Int(lines.len() as i64),
                    Value::Int(i64::from(all_local)),
                ],
            )
            .await;
            x(
                c,
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
                &[Value::Int(o_id), d.clone(), w.clone()],
            )
            .await;
            for (n, l) in lines.iter().enumerate() {
                let item = q(
                    c,
                    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
                    &[int(l.i_id)],
                )
                .await;
                if item.is_empty() {
                    c.execute_text("ROLLBACK").await.unwrap();
                    return false;
                }
                let price = cents(&item[0][0]);
                let s = q(
                    c,
                    &format!(
                        "SELECT s_quantity, s_dist_{d_id:02} FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"
                    ),
                    &[int(l.i_id), int(l.supply_w_id)],
                )
                .await;
                let s_qty = as_int(&s[0][0]);
                let qty = i64::from(l.quantity);
                let new_qty = if s_qty >= qty + 10 {
                    s_qty - qty
                } else {
                    s_qty - qty + 91
                };
                x(
                    c,
                    "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
                    &[
                        Value::Int(new_qty),
                        Value::Int(qty),
                        Value::Int(i64::from(l.supply_w_id != *w_id)),
                        int(l.i_id),
                        int(l.supply_w_id),
                    ],
                )
                .await;
                x(
                    c,
                    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                    &[
                        Value::Int(o_id),
                        d.clone(),
                        w.clone(),
                        Value::Int(n as i64 + 1),
                        int(l.i_id),
                        int(l.supply_w_id),
                        Value::Int(qty),
                        Value::Text(money(qty * price)),
                        s[0][1].clone(),
                    ],
                )
                .await;
            }
        }
        TxInput::Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer,
            amount_cents,
        } => {
            let amount = Value::Text(money(i64::from(*amount_cents)));
            x(
                c,
                "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
                &[amount.clone(), int(*w_id)],
            )
            .await;
            let w_name = text(
                &q(
                    c,
                    "SELECT w_name FROM warehouse WHERE w_id = ?",
                    &[int(*w_id)],
                )
                .await[0][0],
            );
            x(
                c,
                "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
                &[amount.clone(), int(*w_id), int(*d_id)],
            )
            .await;
            let d_name = text(
                &q(
                    c,
                    "SELECT d_name FROM district WHERE d_w_id = ? AND d_id = ?",
                    &[int(*w_id), int(*d_id)],
                )
                .await[0][0],
            );
            let id = customer_id(c, *c_w_id, *c_d_id, customer).await;
            let key = [int(*c_w_id), int(*c_d_id), int(id)];
            let r = q(
                c,
                "SELECT c_credit, c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
                &key,
            )
            .await;
            let mut params = vec![amount.clone(), amount.clone()];
            let set_data = if text(&r[0][0]) == "BC" {
                let data: String = format!(
                    "{id} {c_d_id} {c_w_id} {d_id} {w_id} {}|{}",
                    money(i64::from(*amount_cents)),
                    text(&r[0][1])
                )
                .chars()
                .take(500)
                .collect();
                params.push(Value::Text(data));
                ", c_data = ?"
            } else {
                ""
            };
            params.extend(key);
            x(
                c,
                &format!(
                    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1{set_data} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
                ),
                &params,
            )
            .await;
            x(
                c,
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
                &[
                    int(id),
                    int(*c_d_id),
                    int(*c_w_id),
                    int(*d_id),
                    int(*w_id),
                    amount,
                    Value::Text(format!("{w_name}    {d_name}")),
                ],
            )
            .await;
        }
        TxInput::OrderStatus {
            w_id,
            d_id,
            customer,
        } => {
            let id = customer_id(c, *w_id, *d_id, customer).await;
            q(
                c,
                "SELECT o_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
                &[int(*w_id), int(*d_id), int(id)],
            )
            .await;
        }
        TxInput::Delivery { w_id, carrier_id } => {
            let w = int(*w_id);
            for d in 1..=10u32 {
                let r = q(
                    c,
                    "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?",
                    &[w.clone(), int(d)],
                )
                .await;
                if r[0][0] == Value::Null {
                    continue;
                }
                let key = [w.clone(), int(d), r[0][0].clone()];
                x(
                    c,
                    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
                    &key,
                )
                .await;
                let cust = q(
                    c,
                    "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                    &key,
                )
                .await[0][0]
                    .clone();
                let mut p = vec![int(*carrier_id)];
                p.extend(key.clone());
                x(
                    c,
                    "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                    &p,
                )
                .await;
                x(
                    c,
                    "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                    &key,
                )
                .await;
                let total = q(
                    c,
                    "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                    &key,
                )
                .await[0][0]
                    .clone();
                x(
                    c,
                    "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                    &[Value::Text(money(cents(&total))), w.clone(), int(d), cust],
                )
                .await;
            }
        }
        TxInput::StockLevel { .. } => {}
    }
    c.execute_text("COMMIT").await.unwrap();
    true
}

/// A seeded sequence of inputs: the specification's shapes (5–15 lines, last-name lookups,
/// remote warehouses), with more unused items and remote lines than its 1 % so that a short
/// sequence meets every branch.
fn inputs(seed: u64, n: usize) -> Vec<TxInput> {
    let mut r = SmallRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let w_id = r.random_range(1..=WAREHOUSES);
        let d_id = r.random_range(1..=10);
        let customer = |r: &mut SmallRng| {
            if r.random_bool(0.6) {
                CustomerRef::LastName(last_name(r.random_range(0..NAMES)))
            } else {
                CustomerRef::Id(r.random_range(1..=CUSTOMERS))
            }
        };
        let input = match r.random_range(0..10) {
            0..=3 => {
                let count = r.random_range(5..=15);
                let mut lines: Vec<OrderLine> = (0..count)
                    .map(|_| OrderLine {
                        i_id: r.random_range(1..=ITEMS),
                        supply_w_id: if r.random_bool(0.1) {
                            r.random_range(1..=WAREHOUSES)
                        } else {
                            w_id
                        },
                        quantity: r.random_range(1..=10),
                    })
                    .collect();
                if r.random_bool(0.1) {
                    lines.last_mut().unwrap().i_id = ITEMS + 1;
                }
                TxInput::NewOrder {
                    w_id,
                    d_id,
                    c_id: r.random_range(1..=CUSTOMERS),
                    lines,
                }
            }
            4..=6 => {
                let remote = r.random_bool(0.15);
                TxInput::Payment {
                    w_id,
                    d_id,
                    c_w_id: if remote {
                        r.random_range(1..=WAREHOUSES)
                    } else {
                        w_id
                    },
                    c_d_id: if remote { r.random_range(1..=10) } else { d_id },
                    customer: customer(&mut r),
                    amount_cents: r.random_range(100..=500_000),
                }
            }
            7 => TxInput::OrderStatus {
                w_id,
                d_id,
                customer: customer(&mut r),
            },
            8 => TxInput::Delivery {
                w_id,
                carrier_id: r.random_range(1..=10),
            },
            _ => TxInput::StockLevel {
                w_id,
                d_id,
                threshold: r.random_range(10..=20),
            },
        };
        out.push(input);
    }
    out
}

/// Every table's rows, in key order, as the server writes them.
async fn dump(c: &mut Connection) -> Vec<(String, Vec<Vec<Option<String>>>)> {
    let mut out = Vec::new();
    for (t, select) in TABLES {
        let rows = c.query_text(select).await.unwrap();
        let rows = (0..rows.nrows())
            .map(|i| {
                rows.row(i)
                    .map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect()
            })
            .collect();
        out.push((t.to_owned(), rows));
    }
    out
}

#[track_caller]
fn assert_same(a: &[(String, Vec<Vec<Option<String>>>)], b: &[(String, Vec<Vec<Option<String>>>)]) {
    for ((t, ra), (_, rb)) in a.iter().zip(b) {
        assert_eq!(ra.len(), rb.len(), "{t}: row counts differ");
        if let Some(i) = (0..ra.len()).find(|&i| ra[i] != rb[i]) {
            panic!("{t}: row {i} differs:\n  {:?}\n  {:?}", ra[i], rb[i]);
        }
    }
}

/// The same seeded sequence through the routines on one database and as client-side
/// statements on the other leaves the same rows in every table.
async fn same_state(dialect: Dialect) {
    let a = Scratch::new(dialect, "proc").await;
    let b = Scratch::new(dialect, "client").await;
    let mut ca = connect(&a.url).await;
    let mut cb = connect(&b.url).await;
    assert_same(&dump(&mut ca).await, &dump(&mut cb).await);
    procedures::install(&mut ca).await.unwrap();
    // Installing twice replaces the routines (CREATE after DROP IF EXISTS).
    procedures::install(&mut ca).await.unwrap();
    let calls = Calls::prepare(&mut ca).await.unwrap();
    let (mut rolled_back, mut committed) = (0, 0);
    for input in inputs(5, 400) {
        let proc = calls.call(&mut ca, &input).await.unwrap();
        let client = client_side(&mut cb, &input).await;
        assert_eq!(proc.committed, client, "{input:?}");
        if proc.committed {
            committed += 1;
        } else {
            rolled_back += 1;
        }
    }
    assert!(
        rolled_back > 0 && committed > 300,
        "{rolled_back} {committed}"
    );
    assert_same(&dump(&mut ca).await, &dump(&mut cb).await);
    ca.close().await;
    cb.close().await;
    a.done().await;
    b.done().await;
}

/// The first column of the first row.
async fn one(c: &mut Connection, text: &str, params: &[Value]) -> Value {
    q(c, text, params).await.remove(0).remove(0)
}

/// A stock row's quantity, year-to-date, order count and remote count.
async fn stock(c: &mut Connection, i: u32, w: u32) -> Vec<i64> {
    q(
        c,
        "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_i_id = ? AND s_w_id = ?",
        &[int(i), int(w)],
    )
    .await[0]
        .iter()
        .map(as_int)
        .collect()
}

/// Hand-computed effects of each routine on a fresh load.
async fn hand_computed(dialect: Dialect) {
    let s = Scratch::new(dialect, "hand").await;
    let mut c = connect(&s.url).await;
    procedures::install(&mut c).await.unwrap();
    let calls = Calls::prepare(&mut c).await.unwrap();
    // New-Order with the unused item last: rolled back, nothing changed anywhere.
    let before = dump(&mut c).await;
    let bad = TxInput::NewOrder {
        w_id: 1,
        d_id: 4,
        c_id: 7,
        lines: vec![
            OrderLine {
                i_id: 1,
                supply_w_id: 1,
                quantity: 3,
            },
            OrderLine {
                i_id: ITEMS + 1,
                supply_w_id: 1,
                quantity: 3,
            },
        ],
    };
    let out = calls.call(&mut c, &bad).await.unwrap();
    assert!(!out.committed);
    assert_same(&before, &dump(&mut c).await);

    // New-Order: the district's next id taken, stock by the 10/91 rule, the lines' amounts,
    // a remote line counted, and the total of clause 2.4.2.2.
    let next = as_int(
        &one(
            &mut c,
            "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
            &[int(1), int(4)],
        )
        .await,
    );
    let s5 = stock(&mut c, 5, 1).await;
    let s6 = stock(&mut c, 6, 2).await;
    let good = TxInput::NewOrder {
        w_id: 1,
        d_id: 4,
        c_id: 7,
        lines: vec![
            OrderLine {
                i_id: 5,
                supply_w_id: 1,
                quantity: 4,
            },
            OrderLine {
                i_id: 6,
                supply_w_id: 2,
                quantity: 9,
            },
        ],
    };
    let out = calls.call(&mut c, &good).await.unwrap();
    assert!(out.committed);
    assert_eq!(
        as_int(&out.rows.rows[0][if dialect == Dialect::Mysql { 1 } else { 0 }]),
        next
    );
    let rule = |q: i64, n: i64| if q >= n + 10 { q - n } else { q - n + 91 };
    assert_eq!(
        stock(&mut c, 5, 1).await,
        [rule(s5[0], 4), s5[1] + 4, s5[2] + 1, s5[3]]
    );
    assert_eq!(
        stock(&mut c, 6, 2).await,
        [rule(s6[0], 9), s6[1] + 9, s6[2] + 1, s6[3] + 1]
    );
    let r = q(
        &mut c,
        "SELECT o_ol_cnt, o_all_local, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = ?",
        &[Value::Int(next)],
    )
    .await;
    assert_eq!(
        (as_int(&r[0][0]), as_int(&r[0][1]), &r[0][2]),
        (2, 0, &Value::Null)
    );
    let p5 = cents(&one(&mut c, "SELECT i_price FROM item WHERE i_id = 5", &[]).await);
    let p6 = cents(&one(&mut c, "SELECT i_price FROM item WHERE i_id = 6", &[]).await);
    let amounts: Vec<i64> = q(
        &mut c,
        "SELECT ol_amount FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id = ? ORDER BY ol_number",
        &[Value::Int(next)],
    )
    .await
    .iter()
    .map(|r| cents(&r[0]))
    .collect();
    assert_eq!(amounts, [4 * p5, 9 * p6]);

    // Payment by last name: the ⌈n/2⌉-th of the namesakes by first name, whose balance,
    // year-to-date payment and count move; the warehouse and district totals move too.
    let name = last_name(3);
    let namesakes = q(
        &mut c,
        "SELECT c_id, c_balance, c_payment_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 3 AND c_last = ? ORDER BY c_first",
        &[Value::Text(name.clone())],
    )
    .await;
    assert!(!namesakes.is_empty());
    let chosen = &namesakes[namesakes.len().div_ceil(2) - 1];
    let w_ytd = cents(&one(&mut c, "SELECT w_ytd FROM warehouse WHERE w_id = 1", &[]).await);
    let pay = TxInput::Payment {
        w_id: 1,
        d_id: 2,
        c_w_id: 2,
        c_d_id: 3,
        customer: CustomerRef::LastName(name.clone()),
        amount_cents: 123_456,
    };
    let out = calls.call(&mut c, &pay).await.unwrap();
    assert!(out.committed);
    assert_eq!(as_int(&out.rows.rows[0][0]), as_int(&chosen[0]));
    let after = q(
        &mut c,
        "SELECT c_balance, c_payment_cnt FROM customer WHERE c_w_id = 2 AND c_d_id = 3 AND c_id = ?",
        &[chosen[0].clone()],
    )
    .await;
    assert_eq!(cents(&after[0][0]), cents(&chosen[1]) - 123_456);
    assert_eq!(as_int(&after[0][1]), as_int(&chosen[2]) + 1);
    assert_eq!(
        cents(&one(&mut c, "SELECT w_ytd FROM warehouse WHERE w_id = 1", &[]).await),
        w_ytd + 123_456
    );

    // Delivery: each district's oldest new order goes, with its customer's count.
    let oldest: Vec<i64> = q(
        &mut c,
        "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = 2 GROUP BY no_d_id ORDER BY no_d_id",
        &[],
    )
    .await
    .iter()
    .map(|r| as_int(&r[0]))
    .collect();
    assert_eq!(oldest.len(), 10);
    let out = calls
        .call(
            &mut c,
            &TxInput::Delivery {
                w_id: 2,
                carrier_id: 6,
            },
        )
        .await
        .unwrap();
    assert_eq!(as_int(&out.rows.rows[0][0]), 10);
    let carriers = q(
        &mut c,
        "SELECT o_carrier_id FROM orders WHERE o_w_id = 2 AND o_id = ? ORDER BY o_d_id",
        &[Value::Int(oldest[0])],
    )
    .await;
    assert_eq!(as_int(&carriers[0][0]), 6);
    let gone = q(
        &mut c,
        "SELECT COUNT(*) FROM new_order WHERE no_w_id = 2 AND no_d_id = 1 AND no_o_id = ?",
        &[Value::Int(oldest[0])],
    )
    .await;
    assert_eq!(as_int(&gone[0][0]), 0);

    // Stock-Level: the count a direct query gives.
    let direct = as_int(
        &q(
            &mut c,
            "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock, district WHERE d_w_id = 1 AND d_id = 4 AND ol_w_id = 1 AND ol_d_id = 4 AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 95",
            &[],
        )
        .await[0][0],
    );
    assert!(direct > 0);
    let out = calls
        .call(
            &mut c,
            &TxInput::StockLevel {
                w_id: 1,
                d_id: 4,
                threshold: 95,
            },
        )
        .await
        .unwrap();
    assert_eq!(as_int(&out.rows.rows[0][0]), direct);

    // Order-Status by id: the customer's last order (the one just entered) and its two lines.
    let out = calls
        .call(
            &mut c,
            &TxInput::OrderStatus {
                w_id: 1,
                d_id: 4,
                customer: CustomerRef::Id(7),
            },
        )
        .await
        .unwrap();
    assert_eq!(out.rows.rows.len(), 2);
    assert_eq!(as_int(&out.rows.rows[0][5]), next);

    procedures::uninstall(&mut c).await.unwrap();
    c.close().await;
    s.done().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_procedures_leave_the_client_side_state() {
    same_state(Dialect::Mysql).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_functions_leave_the_client_side_state() {
    same_state(Dialect::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_procedures_hand_computed() {
    hand_computed(Dialect::Mysql).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_functions_hand_computed() {
    hand_computed(Dialect::Postgres).await;
}

/// The kind's two modes on two databases the tpcc loader built from one seed: one client each,
/// the same run seed, the same events; every table agrees afterwards.
async fn modes_agree(dialect: Dialect) {
    const SMALL: Scale = Scale {
        items: 2_000,
        customers: 1_200,
    };
    let mut dbs = Vec::new();
    for name in ["mode_client", "mode_proc"] {
        let s = Scratch::empty(dialect, name).await;
        let load = TpccLoadOptions {
            warehouses: 2,
            parallel: 2,
            seed: 7,
            scale: SMALL,
            check: true,
        };
        tpcc::load(
            &Target::parse(&s.url).unwrap(),
            &ConnectOptions::default(),
            &load,
            &|_: &str| {},
        )
        .await
        .unwrap();
        dbs.push(s);
    }
    let mut rolled_back = [0, 0];
    for (i, procedures) in [false, true].into_iter().enumerate() {
        let mut c = connect(&dbs[i].url).await;
        let kind = Tpcc::new(TpccOptions {
            warehouses: 2,
            procedures,
            ..TpccOptions::default()
        });
        kind.check_ready(&mut c, 1, false).await.unwrap();
        let mut client = kind.new_client(&mut c, 0, 1, 99).await.unwrap();
        let mut q = EventTally::default();
        for _ in 0..600 {
            q.clear();
            client.event(&mut c, &mut q).await.unwrap();
            rolled_back[i] += u32::from(q.rolled_back);
        }
        c.close().await;
    }
    assert_eq!(rolled_back[0], rolled_back[1]);
    let mut a = connect(&dbs[0].url).await;
    let mut b = connect(&dbs[1].url).await;
    assert_same(&dump(&mut a).await, &dump(&mut b).await);
    assert!(tpcc::check_consistency(&mut b).await.unwrap().passed());
    a.close().await;
    b.close().await;
    for s in dbs {
        s.done().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_modes_draw_and_do_the_same() {
    modes_agree(Dialect::Mysql).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_modes_draw_and_do_the_same() {
    modes_agree(Dialect::Postgres).await;
}
