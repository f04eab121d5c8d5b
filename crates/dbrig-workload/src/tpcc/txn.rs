//! The five TPC-C transactions as client-side prepared statements (clause 2), on the shared
//! runner loop: each client draws its transactions from a shuffled deck (clause 5.2.4.2; by
//! default 10 New-Order, 10 Payment, 1 each of the others in 23 cards), works on its home
//! warehouse (or a random one per transaction), and names each event's kind so the runner
//! counts committed / rolled back / retried / failed per transaction type.
//!
//! The inputs follow the specification: New-Order 5–15 lines, 1 % with an unused item on its
//! last line (rolled back), 1 % of lines from a remote warehouse; Payment 60 % by last name,
//! 15 % for a customer of a remote warehouse; Order-Status 60 % by last name; Delivery all ten
//! districts with a random carrier; Stock-Level a threshold of 10–20 over the last 20 orders.

use std::sync::Arc;
use std::time::Instant;

use dbrig_core::{EventTally, Value};
use dbrig_driver::{Connection, DriverError, Statement};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::data::{DISTRICTS, Scale};
use super::random::{Constants, last_name, nurand};
use super::schema_sql;
use super::terminal::{Deck, Terminals, terminals_of};

/// The five transaction types, in the order the mix lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxType {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxType {
    pub const ALL: [TxType; 5] = [
        TxType::NewOrder,
        TxType::Payment,
        TxType::OrderStatus,
        TxType::Delivery,
        TxType::StockLevel,
    ];

    /// The kind name the runner counts it under (and reports print).
    pub fn name(self) -> &'static str {
        match self {
            TxType::NewOrder => "new_order",
            TxType::Payment => "payment",
            TxType::OrderStatus => "order_status",
            TxType::Delivery => "delivery",
            TxType::StockLevel => "stock_level",
        }
    }

    pub fn from_name(name: &str) -> Option<TxType> {
        TxType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The 90th percentile response time limit of clause 5.2.5.4, seconds (Delivery's is its
    /// deferred part's, which dbrig runs inline: its whole transaction is held to it).
    pub fn p90_limit_s(self) -> f64 {
        match self {
            TxType::StockLevel => 20.0,
            TxType::Delivery => 80.0,
            _ => 5.0,
        }
    }

    /// The statement kind a stored-procedure call is timed under.
    pub fn call_name(self) -> &'static str {
        match self {
            TxType::NewOrder => "call_new_order",
            TxType::Payment => "call_payment",
            TxType::OrderStatus => "call_order_status",
            TxType::Delivery => "call_delivery",
            TxType::StockLevel => "call_stock_level",
        }
    }

    /// Whether it writes (SQLite's writers take their turn at the write lock).
    fn writes(self) -> bool {
        !matches!(self, TxType::OrderStatus | TxType::StockLevel)
    }
}

/// The prepared statements, by the names of `sql/common.sql`.
const STATEMENTS: [&str; 35] = [
    "begin",
    "begin_write",
    "commit",
    "no_get_wh_cust",
    "no_get_dist",
    "no_upd_dist",
    "no_ins_order",
    "no_ins_new_order",
    "no_get_item",
    "no_get_stock",
    "no_upd_stock",
    "no_ins_order_line",
    "pay_upd_wh",
    "pay_get_wh",
    "pay_upd_dist",
    "pay_get_dist",
    "cust_by_name",
    "pay_get_cust",
    "pay_get_cust_data",
    "pay_upd_cust_bc",
    "pay_upd_cust",
    "pay_ins_hist",
    "os_get_cust",
    "os_get_last_order",
    "os_get_lines",
    "dl_get_new_order",
    "dl_del_new_order",
    "dl_get_order_cust",
    "dl_upd_order",
    "dl_upd_lines",
    "dl_sum_lines",
    "dl_upd_cust",
    "sl_get_dist",
    "sl_count",
    "rollback",
];

/// What every client of a run shares: the database's shape and the run's NURand constants.
#[derive(Debug, Clone, Copy)]
pub struct RunShape {
    pub warehouses: u32,
    pub scale: Scale,
    pub constants: Constants,
    /// Cards per type in the deck (New-Order, Payment, Order-Status, Delivery, Stock-Level).
    pub mix: [u32; 5],
    /// Each client keeps one warehouse (`(client % warehouses) + 1`); else a random one per
    /// transaction.
    pub home_warehouse: bool,
    /// Each transaction one call of its stored routine (`super::procedures`).
    pub procedures: bool,
}

/// One client's state.
pub struct TpccClient {
    stmts: Vec<Statement>,
    rng: SmallRng,
    shape: RunShape,
    home: u32,
    deck: Deck,
    /// With keying and thinking, the terminals this client serves (else none).
    terminals: Terminals,
    /// SQLite: the database file's FIFO of writers, and this client's turn at it.
    writer_queue: Option<Arc<tokio::sync::Mutex<()>>>,
    turn: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// The statement that rolls back (text, for `abort`).
    rollback: String,
    /// The stored routines' calls, in the stored-procedure mode (no statements then).
    calls: Option<super::procedures::Calls>,
}

impl std::fmt::Debug for TpccClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TpccClient")
            .field("home", &self.home)
            .finish()
    }
}

/// A money amount of `cents` as the decimal text every engine takes for a DECIMAL.
fn money(cents: i64) -> Value {
    let sign = if cents < 0 { "-" } else { "" };
    let a = cents.unsigned_abs();
    Value::Text(format!("{sign}{}.{:02}", a / 100, a % 100))
}

fn int(v: impl Into<i64>) -> Value {
    Value::Int(v.into())
}

/// A number as the engines return it (integers, floats, or DECIMAL as text).
fn num(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Text(s) => s.trim().parse().unwrap_or(0.0),
        Value::Null => 0.0,
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Null => String::new(),
        other => num(other).to_string(),
    }
}

/// An inconsistency the transactions cannot go on from (a row the population guarantees is
/// missing): the client stops with it, as with any error that is not retried.
fn missing(what: &str) -> DriverError {
    DriverError::fatal(
        dbrig_driver::ErrorKind::Statement,
        format!(
            "tpcc: {what} is missing: the TPC-C tables are not as dbrig built them (run `dbrig tpcc check`, or cleanup and prepare again)"
        ),
    )
}

impl TpccClient {
    pub async fn new(
        conn: &mut Connection,
        index: u32,
        shape: RunShape,
        seed: u64,
    ) -> Result<TpccClient, DriverError> {
        let sql = schema_sql(conn.dialect());
        let mut stmts = Vec::with_capacity(STATEMENTS.len());
        let calls =
            match shape.procedures {
                true => Some(super::procedures::Calls::prepare(conn).await.map_err(
                    |e| match e {
                        crate::WorkloadError::Driver(d) => d,
                        other => DriverError::fatal(
                            dbrig_driver::ErrorKind::Unsupported,
                            other.to_string(),
                        ),
                    },
                )?),
                false => {
                    for name in STATEMENTS {
                        stmts.push(conn.prepare(&sql.render(name, &[])).await?);
                    }
                    None
                }
            };
        let mut rng = SmallRng::seed_from_u64(seed ^ (u64::from(index) << 32) ^ 0x7C_C0);
        let writer_queue = crate::oltp::uses_writer_queue(conn.target())
            .then(|| crate::oltp::sqlite_writer_queue(conn.target()));
        let deck = Deck::new(shape.mix, &mut rng);
        Ok(TpccClient {
            stmts,
            rng,
            home: index % shape.warehouses + 1,
            shape,
            deck,
            terminals: Terminals::default(),
            writer_queue,
            turn: None,
            rollback: sql.render("rollback", &[]),
            calls,
        })
    }

    fn stmt(&self, name: &str) -> Statement {
        let at = STATEMENTS
            .iter()
            .position(|s| *s == name)
            .expect("a statement of STATEMENTS");
        self.stmts[at]
    }

    /// Run a statement that changes rows; their count.
    async fn exec(
        &self,
        conn: &mut Connection,
        name: &'static str,
        params: &[Value],
        q: &mut EventTally,
    ) -> Result<u64, DriverError> {
        let began = Instant::now();
        let outcome = conn.execute(self.stmt(name), params).await;
        q.time(name, began.elapsed().as_micros() as u64);
        let outcome = outcome?;
        q.queries.count(outcome.class());
        Ok(outcome.rows)
    }

    /// Run a query; its rows.
    async fn rows(
        &self,
        conn: &mut Connection,
        name: &'static str,
        params: &[Value],
        q: &mut EventTally,
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        let began = Instant::now();
        let rows = conn.execute_rows(self.stmt(name), params).await;
        q.time(name, began.elapsed().as_micros() as u64);
        q.queries.read += 1;
        Ok(rows?.rows)
    }

    /// With keying and thinking: serve terminal `k` of the run's `10 × warehouses` when
    /// `k mod clients` is this client's index (`super::terminal`).
    pub fn with_terminals(mut self, index: u32, clients: u32) -> TpccClient {
        let all = terminals_of(
            index,
            clients,
            self.shape.warehouses,
            self.shape.mix,
            &mut self.rng,
        );
        self.terminals = Terminals::new(all);
        self
    }

    /// With keying and thinking, when the next transaction is due: its terminal's input is
    /// keyed then (the runner waits until it, and counts the response time from it).
    pub fn due(&mut self) -> Option<Instant> {
        if self.terminals.is_empty() {
            return None;
        }
        let (at, t) = self.terminals.next_due(Instant::now(), &mut self.rng)?;
        self.home = t.warehouse;
        Some(at)
    }

    /// The next transaction type: the terminal's, else the deck's next card.
    fn draw(&mut self) -> TxType {
        match self.terminals.current() {
            Some(t) => t.next,
            None => self.deck.draw(&mut self.rng),
        }
    }

    fn warehouse(&mut self) -> u32 {
        match self.shape.home_warehouse {
            true => self.home,
            false => self.rng.random_range(1..=self.shape.warehouses),
        }
    }

    /// A warehouse other than `w` (there must be more than one).
    fn other_warehouse(&mut self, w: u32) -> u32 {
        let o = self.rng.random_range(1..self.shape.warehouses);
        if o >= w { o + 1 } else { o }
    }

    /// One transaction. A retried event (the runner calls again after a retryable error,
    /// with the tally's kind still set) runs the same type again with fresh inputs.
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        let t = match q.kind.and_then(TxType::from_name) {
            Some(retried) => retried,
            None => self.draw(),
        };
        q.kind = Some(t.name());
        q.rolled_back = false;
        self.run(conn, t, q).await
    }

    /// Run transaction `t` (also what tests call to run one of a chosen type).
    pub async fn run(
        &mut self,
        conn: &mut Connection,
        t: TxType,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        if let Some(calls) = &self.calls {
            // One call; the routine owns its transaction. The inputs are drawn as the
            // statements below draw them.
            let input = super::procedures::draw(&mut self.rng, &self.shape, self.home, t);
            let began = Instant::now();
            let out = calls.call(conn, &input).await;
            q.time(t.call_name(), began.elapsed().as_micros() as u64);
            q.queries.other += 1;
            q.rolled_back = !out?.committed;
            return Ok(());
        }
        // A turn left by an attempt that failed without a rollback ends.
        self.turn = None;
        if t.writes()
            && let Some(queue) = &self.writer_queue
        {
            let began = Instant::now();
            self.turn = Some(Arc::clone(queue).lock_owned().await);
            q.time("write_queue", began.elapsed().as_micros() as u64);
        }
        let begin = if t.writes() { "begin_write" } else { "begin" };
        self.exec(conn, begin, &[], q).await?;
        let committed = match t {
            TxType::NewOrder => self.new_order(conn, q).await?,
            TxType::Payment => self.payment(conn, q).await?,
            TxType::OrderStatus => self.order_status(conn, q).await?,
            TxType::Delivery => self.delivery(conn, q).await?,
            TxType::StockLevel => self.stock_level(conn, q).await?,
        };
        match committed {
            true => {
                self.exec(conn, "commit", &[], q).await?;
            }
            false => {
                self.exec(conn, "rollback", &[], q).await?;
                q.rolled_back = true;
            }
        }
        self.turn = None;
        Ok(())
    }

    /// Roll back what an attempt left open (before a retry or after a failure).
    pub async fn abort(&mut self, conn: &mut Connection) {
        let _ = conn.execute_text(&self.rollback).await;
        self.turn = None;
    }

    fn customer_id(&mut self) -> u32 {
        nurand(
            &mut self.rng,
            1023,
            1,
            self.shape.scale.customers,
            self.shape.constants.c_id,
        )
    }

    fn item_id(&mut self) -> u32 {
        nurand(
            &mut self.rng,
            8191,
            1,
            self.shape.scale.items,
            self.shape.constants.ol_i_id,
        )
    }

    fn random_last_name(&mut self) -> String {
        last_name(nurand(
            &mut self.rng,
            255,
            0,
            999,
            self.shape.constants.c_last,
        ))
    }

    /// Clause 2.4: `false` when the order had an unused item and was rolled back.
    async fn new_order(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<bool, DriverError> {
        let w = self.warehouse();
        let d = self.rng.random_range(1..=DISTRICTS);
        let c = self.customer_id();
        let ol_cnt = self.rng.random_range(5..=15u32);
        let rollback = self.rng.random_range(1..=100) == 1;
        let mut lines = Vec::with_capacity(ol_cnt as usize);
        for n in 1..=ol_cnt {
            let item = match rollback && n == ol_cnt {
                true => self.shape.scale.items + 1,
                false => self.item_id(),
            };
            let supply = match self.shape.warehouses > 1 && self.rng.random_range(1..=100) == 1 {
                true => self.other_warehouse(w),
                false => w,
            };
            lines.push((item, supply, self.rng.random_range(1..=10u32)));
        }
        let all_local = lines.iter().all(|&(_, s, _)| s == w);
        let wc = self
            .rows(conn, "no_get_wh_cust", &[int(w), int(d), int(c)], q)
            .await?;
        if wc.is_empty() {
            return Err(missing(&format!("customer ({w}, {d}, {c})")));
        }
        let dist = self.rows(conn, "no_get_dist", &[int(w), int(d)], q).await?;
        let Some(dist) = dist.first() else {
            return Err(missing(&format!("district ({w}, {d})")));
        };
        let o_id = num(&dist[0]) as i64;
        self.exec(conn, "no_upd_dist", &[int(w), int(d)], q).await?;
        self.exec(
            conn,
            "no_ins_order",
            &[
                int(o_id),
                int(d),
                int(w),
                int(c),
                int(ol_cnt),
                int(i64::from(all_local)),
            ],
            q,
        )
        .await?;
        self.exec(conn, "no_ins_new_order", &[int(o_id), int(d), int(w)], q)
            .await?;
        for (n, &(item, supply, qty)) in lines.iter().enumerate() {
            let found = self.rows(conn, "no_get_item", &[int(item)], q).await?;
            let Some(i) = found.first() else {
                // The unused item: the specification's rollback.
                return Ok(false);
            };
            let price_cents = (num(&i[0]) * 100.0).round() as i64;
            let stock = self
                .rows(conn, "no_get_stock", &[int(item), int(supply)], q)
                .await?;
            let Some(s) = stock.first() else {
                return Err(missing(&format!("stock ({supply}, {item})")));
            };
            let s_qty = num(&s[0]) as i64;
            let qty = i64::from(qty);
            let new_qty = if s_qty >= qty + 10 {
                s_qty - qty
            } else {
                s_qty - qty + 91
            };
            let dist_info = text(&s[1 + d as usize]);
            self.exec(
                conn,
                "no_upd_stock",
                &[
                    int(new_qty),
                    int(qty),
                    int(i64::from(supply != w)),
                    int(item),
                    int(supply),
                ],
                q,
            )
            .await?;
            self.exec(
                conn,
                "no_ins_order_line",
                &[
                    int(o_id),
                    int(d),
                    int(w),
                    int(n as i64 + 1),
                    int(item),
                    int(supply),
                    int(qty),
                    money(qty * price_cents),
                    Value::Text(dist_info),
                ],
                q,
            )
            .await?;
        }
        Ok(true)
    }

    /// The customer of `(w, d)` by last name: the one at position n/2 rounded up of those
    /// sorted by first name (clause 2.5.2.2).
    async fn customer_by_name(
        &mut self,
        conn: &mut Connection,
        w: u32,
        d: u32,
        q: &mut EventTally,
    ) -> Result<i64, DriverError> {
        let last = self.random_last_name();
        let ids = self
            .rows(
                conn,
                "cust_by_name",
                &[int(w), int(d), Value::Text(last.clone())],
                q,
            )
            .await?;
        match ids.len() {
            0 => Err(missing(&format!("a customer named {last} in ({w}, {d})"))),
            n => Ok(num(&ids[(n - 1) / 2][0]) as i64),
        }
    }

    /// Clause 2.5.
    async fn payment(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<bool, DriverError> {
        let w = self.warehouse();
        let d = self.rng.random_range(1..=DISTRICTS);
        let (c_w, c_d) = match self.shape.warehouses > 1 && self.rng.random_range(1..=100) > 85 {
            true => (
                self.other_warehouse(w),
                self.rng.random_range(1..=DISTRICTS),
            ),
            false => (w, d),
        };
        let by_name = self.rng.random_range(1..=100) <= 60;
        let amount = self.rng.random_range(100..=500_000i64);
        self.exec(conn, "pay_upd_wh", &[money(amount), int(w)], q)
            .await?;
        let wh = self.rows(conn, "pay_get_wh", &[int(w)], q).await?;
        let w_name = wh.first().map(|r| text(&r[0])).unwrap_or_default();
        self.exec(conn, "pay_upd_dist", &[money(amount), int(w), int(d)], q)
            .await?;
        let di = self
            .rows(conn, "pay_get_dist", &[int(w), int(d)], q)
            .await?;
        let d_name = di.first().map(|r| text(&r[0])).unwrap_or_default();
        let c = match by_name {
            true => self.customer_by_name(conn, c_w, c_d, q).await?,
            false => i64::from(self.customer_id()),
        };
        let cust = self
            .rows(conn, "pay_get_cust", &[int(c_w), int(c_d), int(c)], q)
            .await?;
        let Some(cust) = cust.first() else {
            return Err(missing(&format!("customer ({c_w}, {c_d}, {c})")));
        };
        let key = [int(c_w), int(c_d), int(c)];
        if text(&cust[10]) == "BC" {
            let data = self.rows(conn, "pay_get_cust_data", &key, q).await?;
            let old = data.first().map(|r| text(&r[0])).unwrap_or_default();
            let mut new = format!("{c} {c_d} {c_w} {d} {w} {}|{old}", text(&money(amount)));
            new.truncate(500);
            let mut params = vec![money(amount), money(amount), Value::Text(new)];
            params.extend(key.iter().cloned());
            self.exec(conn, "pay_upd_cust_bc", &params, q).await?;
        } else {
            let mut params = vec![money(amount), money(amount)];
            params.extend(key.iter().cloned());
            self.exec(conn, "pay_upd_cust", &params, q).await?;
        }
        let h_data = format!("{w_name}    {d_name}");
        self.exec(
            conn,
            "pay_ins_hist",
            &[
                int(c_d),
                int(c_w),
                int(c),
                int(d),
                int(w),
                money(amount),
                Value::Text(h_data),
            ],
            q,
        )
        .await?;
        Ok(true)
    }

    /// Clause 2.6.
    async fn order_status(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<bool, DriverError> {
        let w = self.warehouse();
        let d = self.rng.random_range(1..=DISTRICTS);
        let c = match self.rng.random_range(1..=100) <= 60 {
            true => self.customer_by_name(conn, w, d, q).await?,
            false => i64::from(self.customer_id()),
        };
        self.rows(conn, "os_get_cust", &[int(w), int(d), int(c)], q)
            .await?;
        let last = self
            .rows(conn, "os_get_last_order", &[int(w), int(d), int(c)], q)
            .await?;
        if let Some(o) = last.first() {
            self.rows(conn, "os_get_lines", &[int(w), int(d), o[0].clone()], q)
                .await?;
        }
        Ok(true)
    }

    /// Clause 2.7, the deferred part run at once (as HammerDB does): the oldest new order of
    /// each district delivered; a district without one is skipped.
    async fn delivery(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<bool, DriverError> {
        let w = self.warehouse();
        let carrier = self.rng.random_range(1..=10);
        for d in 1..=DISTRICTS {
            let no = self
                .rows(conn, "dl_get_new_order", &[int(w), int(d)], q)
                .await?;
            let Some(no) = no.first() else { continue };
            let o = no[0].clone();
            let key = [int(w), int(d), o.clone()];
            // Another client's Delivery took it first (engines without FOR UPDATE's wait).
            if self.exec(conn, "dl_del_new_order", &key, q).await? == 0 {
                continue;
            }
            let cust = self.rows(conn, "dl_get_order_cust", &key, q).await?;
            let Some(cust) = cust.first() else {
                return Err(missing(&format!("order ({w}, {d}, {})", text(&o))));
            };
            let c = cust[0].clone();
            self.exec(
                conn,
                "dl_upd_order",
                &[int(carrier), int(w), int(d), o.clone()],
                q,
            )
            .await?;
            self.exec(conn, "dl_upd_lines", &key, q).await?;
            let sum = self.rows(conn, "dl_sum_lines", &key, q).await?;
            let cents = sum
                .first()
                .map(|r| (num(&r[0]) * 100.0).round() as i64)
                .unwrap_or(0);
            self.exec(conn, "dl_upd_cust", &[money(cents), int(w), int(d), c], q)
                .await?;
        }
        Ok(true)
    }

    /// Clause 2.8.
    async fn stock_level(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<bool, DriverError> {
        let w = self.warehouse();
        let d = self.rng.random_range(1..=DISTRICTS);
        let threshold = self.rng.random_range(10..=20);
        let next = self.rows(conn, "sl_get_dist", &[int(w), int(d)], q).await?;
        let Some(next) = next.first() else {
            return Err(missing(&format!("district ({w}, {d})")));
        };
        let next = num(&next[0]) as i64;
        self.rows(
            conn,
            "sl_count",
            &[
                int(w),
                int(d),
                int(next),
                int(next - 20),
                int(w),
                int(threshold),
            ],
            q,
        )
        .await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_deck_holds_the_spec_mix() {
        let mut rng = SmallRng::seed_from_u64(1);
        let d = Deck::new([10, 10, 1, 1, 1], &mut rng).cards().to_vec();
        assert_eq!(d.len(), 23);
        let count = |t| d.iter().filter(|&&x| x == t).count();
        assert_eq!(
            TxType::ALL.map(count),
            [10, 10, 1, 1, 1],
            "New-Order, Payment, Order-Status, Delivery, Stock-Level"
        );
        // Shuffled: two decks differ in order (23!/(10!10!) orders of the same cards).
        let other = Deck::new([10, 10, 1, 1, 1], &mut rng).cards().to_vec();
        assert_ne!(d, other);
    }

    #[test]
    fn money_is_written_to_the_cent() {
        assert_eq!(money(0), Value::Text("0.00".into()));
        assert_eq!(money(5), Value::Text("0.05".into()));
        assert_eq!(money(123_456), Value::Text("1234.56".into()));
        assert_eq!(money(-1_000), Value::Text("-10.00".into()));
    }

    #[test]
    fn names_round_trip_and_limits_are_the_specs() {
        for t in TxType::ALL {
            assert_eq!(TxType::from_name(t.name()), Some(t));
        }
        assert_eq!(TxType::NewOrder.p90_limit_s(), 5.0);
        assert_eq!(TxType::StockLevel.p90_limit_s(), 20.0);
    }
}
