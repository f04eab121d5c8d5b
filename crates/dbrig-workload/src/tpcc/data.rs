//! The initial population of clause 4.3.3.1, written row by row through a
//! [`dbrig_driver::FieldWriter`] (PostgreSQL's binary `COPY`, MariaDB's bulk command, or values
//! for SQLite and `LOAD DATA`). Each table's rows of one warehouse come from streams of their
//! own ([`super::random::stream`]): a warehouse loads the same on any loader, in any order, in
//! parallel with the others. Orders and order lines draw O_OL_CNT from one shared per-district
//! stream, so the lines always match their orders.

use dbrig_core::Value;
use dbrig_driver::{FieldType, FieldWriter};
use rand::Rng;
use rand::rngs::SmallRng;

use super::random::{
    Constants, a_string, data_with_original, last_name, n_string, nurand, stream, unscaled, zip,
};

/// Districts per warehouse (clause 4.3.3.1), fixed by the transactions' rules.
pub const DISTRICTS: u32 = 10;

/// Bytes a chunk of rows is filled to before it is handed to the loader.
const CHUNK: usize = 1 << 20;

/// The per-warehouse sizes: the specification's by default; smaller only for tests (the
/// proportions stay: 30 % of orders are new, the first 1 000 customers of a district, or all
/// of them if fewer, get the sequential last names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Scale {
    /// ITEM rows, and STOCK rows per warehouse (100 000).
    pub items: u32,
    /// CUSTOMER rows per district, and ORDER rows (3 000).
    pub customers: u32,
}

impl Scale {
    pub const SPEC: Scale = Scale {
        items: 100_000,
        customers: 3_000,
    };

    /// The first undelivered order of a district (2 101 of 3 000): the last 30 % are new.
    pub fn first_new_order(self) -> u32 {
        self.customers - self.customers * 3 / 10 + 1
    }

    /// NEW-ORDER rows per district (900).
    pub fn new_orders(self) -> u32 {
        self.customers * 3 / 10
    }

    /// D_YTD after the load, in cents: the customers' first payments of 10.00 each (30 000.00
    /// at the specification's size), so the YTD conditions 3.3.2.8 and 9 hold at any size.
    pub fn district_ytd_cents(self) -> i64 {
        i64::from(self.customers) * 1_000
    }
}

impl Default for Scale {
    fn default() -> Self {
        Scale::SPEC
    }
}

/// What a population is made of: the seed every stream derives from, the sizes, and the load's
/// date and time (every C_SINCE, H_DATE and O_ENTRY_D of the load).
#[derive(Debug, Clone, Copy)]
pub struct Population {
    pub seed: u64,
    pub scale: Scale,
    /// Seconds since 1970-01-01, written as a wall-clock time.
    pub load_time: i64,
}

/// Stream tags: one per piece of the population.
mod tag {
    pub const CONSTANTS: u64 = 1;
    pub const ITEM: u64 = 2;
    pub const WAREHOUSE: u64 = 3;
    pub const STOCK: u64 = 4;
    pub const DISTRICT: u64 = 5;
    pub const CUSTOMER: u64 = 6;
    pub const HISTORY: u64 = 7;
    pub const ORDERS: u64 = 8;
    pub const OL_CNT: u64 = 9;
    pub const ORDER_LINE: u64 = 10;
    pub const RUN: u64 = 11;
}

impl Population {
    /// The load's NURand constants (clause 2.1.6), derived from the seed alone so a run can
    /// find them again from the seed the registry keeps.
    pub fn constants(&self) -> Constants {
        Constants::load(&mut stream(self.seed, tag::CONSTANTS, 0, 0))
    }

    /// A run's constants (C_LAST's at its required distance from the load's), from `run_seed`.
    pub fn run_constants(&self, run_seed: u64) -> Constants {
        Constants::run(&self.constants(), &mut stream(run_seed, tag::RUN, 0, 0))
    }
}

/// The nine tables, with HammerDB's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    Warehouse,
    District,
    Customer,
    History,
    NewOrder,
    Orders,
    OrderLine,
    Item,
    Stock,
}

impl Table {
    pub const ALL: [Table; 9] = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::History,
        Table::NewOrder,
        Table::Orders,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Warehouse => "warehouse",
            Table::District => "district",
            Table::Customer => "customer",
            Table::History => "history",
            Table::NewOrder => "new_order",
            Table::Orders => "orders",
            Table::OrderLine => "order_line",
            Table::Item => "item",
            Table::Stock => "stock",
        }
    }

    /// The columns in the order the rows write them (the CREATE TABLE's).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Warehouse => &[
                "w_id",
                "w_name",
                "w_street_1",
                "w_street_2",
                "w_city",
                "w_state",
                "w_zip",
                "w_tax",
                "w_ytd",
            ],
            Table::District => &[
                "d_id",
                "d_w_id",
                "d_name",
                "d_street_1",
                "d_street_2",
                "d_city",
                "d_state",
                "d_zip",
                "d_tax",
                "d_ytd",
                "d_next_o_id",
            ],
            Table::Customer => &[
                "c_id",
                "c_d_id",
                "c_w_id",
                "c_first",
                "c_middle",
                "c_last",
                "c_street_1",
                "c_street_2",
                "c_city",
                "c_state",
                "c_zip",
                "c_phone",
                "c_since",
                "c_credit",
                "c_credit_lim",
                "c_discount",
                "c_balance",
                "c_ytd_payment",
                "c_payment_cnt",
                "c_delivery_cnt",
                "c_data",
            ],
            Table::History => &[
                "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount",
                "h_data",
            ],
            Table::NewOrder => &["no_o_id", "no_d_id", "no_w_id"],
            Table::Orders => &[
                "o_id",
                "o_d_id",
                "o_w_id",
                "o_c_id",
                "o_entry_d",
                "o_carrier_id",
                "o_ol_cnt",
                "o_all_local",
            ],
            Table::OrderLine => &[
                "ol_o_id",
                "ol_d_id",
                "ol_w_id",
                "ol_number",
                "ol_i_id",
                "ol_supply_w_id",
                "ol_delivery_d",
                "ol_quantity",
                "ol_amount",
                "ol_dist_info",
            ],
            Table::Item => &["i_id", "i_im_id", "i_name", "i_price", "i_data"],
            Table::Stock => &[
                "s_i_id",
                "s_w_id",
                "s_quantity",
                "s_dist_01",
                "s_dist_02",
                "s_dist_03",
                "s_dist_04",
                "s_dist_05",
                "s_dist_06",
                "s_dist_07",
                "s_dist_08",
                "s_dist_09",
                "s_dist_10",
                "s_ytd",
                "s_order_cnt",
                "s_remote_cnt",
                "s_data",
            ],
        }
    }

    /// The primary key's columns (HammerDB's), `None` for HISTORY, which has none.
    pub fn primary_key(self) -> Option<&'static str> {
        Some(match self {
            Table::Warehouse => "w_id",
            Table::District => "d_w_id, d_id",
            Table::Customer => "c_w_id, c_d_id, c_id",
            Table::History => return None,
            Table::NewOrder => "no_w_id, no_d_id, no_o_id",
            Table::Orders => "o_w_id, o_d_id, o_id",
            Table::OrderLine => "ol_w_id, ol_d_id, ol_o_id, ol_number",
            Table::Item => "i_id",
            Table::Stock => "s_w_id, s_i_id",
        })
    }

    /// Whether the table has rows per warehouse (all but ITEM).
    pub fn per_warehouse(self) -> bool {
        self != Table::Item
    }

    /// Rows the table holds after a load of `warehouses` at `scale`; ORDER-LINE's is the
    /// expectation (O_OL_CNT is uniform in 5..=15: 10 per order).
    pub fn rows(self, warehouses: u32, scale: Scale) -> u64 {
        let w = u64::from(warehouses);
        let d = w * u64::from(DISTRICTS);
        let c = u64::from(scale.customers);
        match self {
            Table::Warehouse => w,
            Table::District => d,
            Table::Customer | Table::History | Table::Orders => d * c,
            Table::NewOrder => d * u64::from(scale.new_orders()),
            Table::OrderLine => d * c * 10,
            Table::Item => u64::from(scale.items),
            Table::Stock => w * u64::from(scale.items),
        }
    }

    /// Warehouse `w`'s rows of this table (ITEM's whole, whatever `w`), as chunks of `W`.
    pub fn chunks<W: FieldWriter>(
        self,
        pop: &Population,
        w: u32,
    ) -> Box<dyn Iterator<Item = W> + Send> {
        let p = *pop;
        match self {
            Table::Item => chunked(Items::new(&p)),
            Table::Warehouse => chunked(Warehouses::new(&p, w)),
            Table::Stock => chunked(Stock::new(&p, w)),
            Table::District => chunked(Districts::new(&p, w)),
            Table::Customer => chunked(Customers::new(&p, w)),
            Table::History => chunked(History::new(&p, w)),
            Table::Orders => chunked(Orders::new(&p, w)),
            Table::NewOrder => chunked(NewOrders::new(&p, w)),
            Table::OrderLine => chunked(OrderLines::new(&p, w)),
        }
    }
}

/// A table's rows of one warehouse, written one at a time.
trait Rows: Send + 'static {
    /// Write the next row into `out`; `false` when there are no more.
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool;
}

/// `rows` in chunks of about [`CHUNK`] bytes.
fn chunked<W: FieldWriter, R: Rows>(mut rows: R) -> Box<dyn Iterator<Item = W> + Send> {
    let mut done = false;
    Box::new(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut chunk = W::with_capacity(CHUNK + 4096);
        while chunk.len() < CHUNK {
            if !rows.next_row(&mut chunk) {
                done = true;
                break;
            }
        }
        (!chunk.is_empty()).then_some(chunk)
    }))
}

/// Name, two streets, city, state and zip: every address of clause 4.3.3.1.
fn address<W: FieldWriter>(rng: &mut SmallRng, out: &mut W) {
    out.text(&a_string(rng, 10, 20));
    out.text(&a_string(rng, 10, 20));
    out.text(&a_string(rng, 10, 20));
    out.text(&letters(rng, 2));
    out.text(&zip(rng));
}

/// `n` random upper-case letters (a state).
fn letters(rng: &mut SmallRng, n: usize) -> String {
    (0..n)
        .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
        .collect()
}

struct Items {
    rng: SmallRng,
    next: u32,
    last: u32,
}

impl Items {
    fn new(p: &Population) -> Self {
        Items {
            rng: stream(p.seed, tag::ITEM, 0, 0),
            next: 1,
            last: p.scale.items,
        }
    }
}

impl Rows for Items {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        if self.next > self.last {
            return false;
        }
        let r = &mut self.rng;
        out.row(5);
        out.int4(self.next as i32);
        out.int4(r.random_range(1..=10_000));
        out.text(&a_string(r, 14, 24));
        out.numeric(unscaled(r, 100, 10_000), 2);
        out.text(&data_with_original(r));
        self.next += 1;
        true
    }
}

struct Warehouses {
    rng: SmallRng,
    w: u32,
    ytd: i64,
    done: bool,
}

impl Warehouses {
    fn new(p: &Population, w: u32) -> Self {
        Warehouses {
            rng: stream(p.seed, tag::WAREHOUSE, w, 0),
            w,
            ytd: i64::from(DISTRICTS) * p.scale.district_ytd_cents(),
            done: false,
        }
    }
}

impl Rows for Warehouses {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        if std::mem::replace(&mut self.done, true) {
            return false;
        }
        let r = &mut self.rng;
        out.row(9);
        out.int4(self.w as i32);
        out.text(&a_string(r, 6, 10));
        address(r, out);
        out.numeric(unscaled(r, 0, 2_000), 4);
        out.numeric(self.ytd, 2);
        true
    }
}

struct Stock {
    rng: SmallRng,
    w: u32,
    next: u32,
    last: u32,
}

impl Stock {
    fn new(p: &Population, w: u32) -> Self {
        Stock {
            rng: stream(p.seed, tag::STOCK, w, 0),
            w,
            next: 1,
            last: p.scale.items,
        }
    }
}

impl Rows for Stock {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        if self.next > self.last {
            return false;
        }
        let r = &mut self.rng;
        out.row(17);
        out.int4(self.next as i32);
        out.int4(self.w as i32);
        out.int4(r.random_range(10..=100));
        for _ in 0..10 {
            out.text(&a_string(r, 24, 24));
        }
        out.int4(0);
        out.int4(0);
        out.int4(0);
        out.text(&data_with_original(r));
        self.next += 1;
        true
    }
}

struct Districts {
    rng: SmallRng,
    w: u32,
    d: u32,
    next_o_id: u32,
    ytd: i64,
}

impl Districts {
    fn new(p: &Population, w: u32) -> Self {
        Districts {
            rng: stream(p.seed, tag::DISTRICT, w, 0),
            w,
            d: 1,
            next_o_id: p.scale.customers + 1,
            ytd: p.scale.district_ytd_cents(),
        }
    }
}

impl Rows for Districts {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        if self.d > DISTRICTS {
            return false;
        }
        let r = &mut self.rng;
        out.row(11);
        out.int4(self.d as i32);
        out.int4(self.w as i32);
        out.text(&a_string(r, 6, 10));
        address(r, out);
        out.numeric(unscaled(r, 0, 2_000), 4);
        out.numeric(self.ytd, 2);
        out.int4(self.next_o_id as i32);
        self.d += 1;
        true
    }
}

/// Walks the districts of a warehouse and the numbers 1..=`per` within each, re-seeding a
/// stream of tag `tag` at each district.
struct PerDistrict {
    seed: u64,
    tag: u64,
    w: u32,
    d: u32,
    n: u32,
    per: u32,
    rng: SmallRng,
}

impl PerDistrict {
    fn new(p: &Population, tag: u64, w: u32, per: u32) -> Self {
        PerDistrict {
            seed: p.seed,
            tag,
            w,
            d: 1,
            n: 0,
            per,
            rng: stream(p.seed, tag, w, 1),
        }
    }

    /// The next (district, number), or `None` at the end; `true` when a district begins.
    fn advance(&mut self) -> Option<(u32, u32, bool)> {
        self.n += 1;
        let mut began = self.n == 1 && self.d == 1;
        if self.n > self.per {
            self.n = 1;
            self.d += 1;
            began = true;
            if self.d <= DISTRICTS {
                self.rng = stream(self.seed, self.tag, self.w, self.d);
            }
        }
        (self.d <= DISTRICTS && self.per > 0).then_some((self.d, self.n, began))
    }
}

struct Customers {
    at: PerDistrict,
    c_last: u32,
    load_time: i64,
}

impl Customers {
    fn new(p: &Population, w: u32) -> Self {
        Customers {
            at: PerDistrict::new(p, tag::CUSTOMER, w, p.scale.customers),
            c_last: p.constants().c_last,
            load_time: p.load_time,
        }
    }
}

/// C_LAST of customer `c` (clause 4.3.3.1): the first 1 000 of a district in sequence, the
/// rest from `NURand(255, 0, 999)`.
pub fn customer_last_name(rng: &mut SmallRng, c: u32, c_last: u32) -> String {
    match c <= 1000 {
        true => last_name(c - 1),
        false => last_name(nurand(rng, 255, 0, 999, c_last)),
    }
}

impl Rows for Customers {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        let Some((d, c, _)) = self.at.advance() else {
            return false;
        };
        let w = self.at.w;
        let r = &mut self.at.rng;
        out.row(21);
        out.int4(c as i32);
        out.int4(d as i32);
        out.int4(w as i32);
        out.text(&a_string(r, 8, 16));
        out.text("OE");
        let last = customer_last_name(r, c, self.c_last);
        out.text(&last);
        address(r, out);
        out.text(&n_string(r, 16, 16));
        out.timestamp(self.load_time);
        out.text(if r.random_range(0..10) == 0 {
            "BC"
        } else {
            "GC"
        });
        out.numeric(5_000_000, 2);
        out.numeric(unscaled(r, 0, 5_000), 4);
        out.numeric(-1_000, 2);
        out.numeric(1_000, 2);
        out.int4(1);
        out.int4(0);
        out.text(&a_string(r, 300, 500));
        true
    }
}

struct History {
    at: PerDistrict,
    load_time: i64,
}

impl History {
    fn new(p: &Population, w: u32) -> Self {
        History {
            at: PerDistrict::new(p, tag::HISTORY, w, p.scale.customers),
            load_time: p.load_time,
        }
    }
}

impl Rows for History {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        let Some((d, c, _)) = self.at.advance() else {
            return false;
        };
        let w = self.at.w as i32;
        out.row(8);
        out.int4(c as i32);
        out.int4(d as i32);
        out.int4(w);
        out.int4(d as i32);
        out.int4(w);
        out.timestamp(self.load_time);
        out.numeric(1_000, 2);
        out.text(&a_string(&mut self.at.rng, 12, 24));
        true
    }
}

/// O_OL_CNT of every order of district `d`, in order: one stream shared by ORDER and
/// ORDER-LINE.
fn ol_counts(p: &Population, w: u32, d: u32) -> SmallRng {
    stream(p.seed, tag::OL_CNT, w, d)
}

fn draw_ol_cnt(rng: &mut SmallRng) -> u32 {
    rng.random_range(5..=15)
}

struct Orders {
    at: PerDistrict,
    pop: Population,
    /// O_C_ID: a random permutation of the district's customers.
    customers: Vec<u32>,
    counts: SmallRng,
}

impl Orders {
    fn new(p: &Population, w: u32) -> Self {
        Orders {
            at: PerDistrict::new(p, tag::ORDERS, w, p.scale.customers),
            pop: *p,
            customers: Vec::new(),
            counts: ol_counts(p, w, 1),
        }
    }
}

impl Rows for Orders {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        let Some((d, o, began)) = self.at.advance() else {
            return false;
        };
        let w = self.at.w;
        let r = &mut self.at.rng;
        if began {
            self.customers = (1..=self.pop.scale.customers).collect();
            rand::seq::SliceRandom::shuffle(self.customers.as_mut_slice(), r);
            self.counts = ol_counts(&self.pop, w, d);
        }
        out.row(8);
        out.int4(o as i32);
        out.int4(d as i32);
        out.int4(w as i32);
        out.int4(self.customers[(o - 1) as usize] as i32);
        out.timestamp(self.pop.load_time);
        match o < self.pop.scale.first_new_order() {
            true => out.int4(r.random_range(1..=10)),
            false => out.null(FieldType::Int4),
        }
        out.int4(draw_ol_cnt(&mut self.counts) as i32);
        out.int4(1);
        true
    }
}

struct NewOrders {
    w: u32,
    d: u32,
    o: u32,
    first: u32,
    last: u32,
}

impl NewOrders {
    fn new(p: &Population, w: u32) -> Self {
        let first = p.scale.first_new_order();
        NewOrders {
            w,
            d: 1,
            o: first,
            first,
            last: p.scale.customers,
        }
    }
}

impl Rows for NewOrders {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        if self.o > self.last {
            self.o = self.first;
            self.d += 1;
        }
        if self.d > DISTRICTS || self.first > self.last {
            return false;
        }
        out.row(3);
        out.int4(self.o as i32);
        out.int4(self.d as i32);
        out.int4(self.w as i32);
        self.o += 1;
        true
    }
}

struct OrderLines {
    pop: Population,
    w: u32,
    d: u32,
    o: u32,
    line: u32,
    cnt: u32,
    counts: SmallRng,
    rng: SmallRng,
}

impl OrderLines {
    fn new(p: &Population, w: u32) -> Self {
        let mut counts = ol_counts(p, w, 1);
        let cnt = draw_ol_cnt(&mut counts);
        OrderLines {
            pop: *p,
            w,
            d: 1,
            o: 1,
            line: 1,
            cnt,
            counts,
            rng: stream(p.seed, tag::ORDER_LINE, w, 1),
        }
    }
}

impl Rows for OrderLines {
    fn next_row<W: FieldWriter>(&mut self, out: &mut W) -> bool {
        let customers = self.pop.scale.customers;
        if self.line > self.cnt {
            self.line = 1;
            self.o += 1;
            if self.o > customers {
                self.o = 1;
                self.d += 1;
                if self.d > DISTRICTS {
                    return false;
                }
                self.counts = ol_counts(&self.pop, self.w, self.d);
                self.rng = stream(self.pop.seed, tag::ORDER_LINE, self.w, self.d);
            }
            self.cnt = draw_ol_cnt(&mut self.counts);
        }
        if self.d > DISTRICTS || customers == 0 {
            return false;
        }
        let r = &mut self.rng;
        let delivered = self.o < self.pop.scale.first_new_order();
        out.row(10);
        out.int4(self.o as i32);
        out.int4(self.d as i32);
        out.int4(self.w as i32);
        out.int4(self.line as i32);
        out.int4(r.random_range(1..=self.pop.scale.items) as i32);
        out.int4(self.w as i32);
        match delivered {
            true => out.timestamp(self.pop.load_time),
            false => out.null(FieldType::Timestamp),
        }
        out.int4(5);
        out.numeric(
            if delivered {
                0
            } else {
                unscaled(r, 1, 999_999)
            },
            2,
        );
        out.text(&a_string(r, 24, 24));
        self.line += 1;
        true
    }
}

/// Rows as values, for the loaders without a typed bulk format (SQLite binds them; MySQL's
/// `LOAD DATA` takes their text). Money is a float (SQLite stores it as REAL), a timestamp
/// its `YYYY-MM-DD HH:MM:SS` text.
#[derive(Debug, Default)]
pub struct ValueChunk {
    pub rows: Vec<Vec<Value>>,
    bytes: usize,
}

impl FieldWriter for ValueChunk {
    fn with_capacity(_bytes: usize) -> Self {
        ValueChunk::default()
    }

    fn row(&mut self, fields: i16) {
        self.rows.push(Vec::with_capacity(fields as usize));
    }

    fn int4(&mut self, v: i32) {
        self.push(Value::Int(v.into()), 4);
    }

    fn int8(&mut self, v: i64) {
        self.push(Value::Int(v), 8);
    }

    fn text(&mut self, s: &str) {
        self.push(Value::Text(s.to_owned()), s.len());
    }

    fn display(&mut self, v: impl std::fmt::Display) {
        self.text(&v.to_string());
    }

    fn numeric(&mut self, unscaled: i64, scale: u16) {
        self.push(Value::Float(unscaled as f64 / 10f64.powi(scale.into())), 8);
    }

    fn date(&mut self, unix_days: i32) {
        let t = timestamp_text(i64::from(unix_days) * 86_400);
        self.text(&t[..10]);
    }

    fn timestamp(&mut self, unix_seconds: i64) {
        self.text(&timestamp_text(unix_seconds));
    }

    fn null(&mut self, _of: FieldType) {
        self.push(Value::Null, 2);
    }

    fn len(&self) -> usize {
        self.bytes
    }

    fn rows(&self) -> u64 {
        self.rows.len() as u64
    }

    fn text_bytes(&self) -> u64 {
        self.bytes as u64
    }
}

impl ValueChunk {
    fn push(&mut self, v: Value, bytes: usize) {
        self.bytes += bytes + 1;
        self.rows.last_mut().expect("row() first").push(v);
    }
}

/// `YYYY-MM-DD HH:MM:SS` of `unix_seconds` (a wall-clock time; no zone applied).
pub fn timestamp_text(unix_seconds: i64) -> String {
    let (y, mo, d, h, mi, s) = dbrig_driver::civil_from_seconds(unix_seconds);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Scale = Scale {
        items: 1_000,
        customers: 1_200,
    };

    fn pop(scale: Scale) -> Population {
        Population {
            seed: 42,
            scale,
            load_time: 1_700_000_000,
        }
    }

    fn rows(t: Table, p: &Population, w: u32) -> Vec<Vec<Value>> {
        t.chunks::<ValueChunk>(p, w).flat_map(|c| c.rows).collect()
    }

    fn int(v: &Value) -> i64 {
        v.as_i64().expect("an integer")
    }

    #[test]
    fn the_spec_sizes_are_the_default() {
        assert_eq!(Scale::default(), Scale::SPEC);
        assert_eq!(Scale::SPEC.first_new_order(), 2_101);
        assert_eq!(Scale::SPEC.new_orders(), 900);
        // The specification's D_YTD 30 000.00 and W_YTD 300 000.00.
        assert_eq!(Scale::SPEC.district_ytd_cents(), 3_000_000);
        assert_eq!(Table::Stock.rows(2, Scale::SPEC), 200_000);
        assert_eq!(Table::Customer.rows(2, Scale::SPEC), 60_000);
        assert_eq!(Table::NewOrder.rows(1, Scale::SPEC), 9_000);
        assert_eq!(Table::Item.rows(5, Scale::SPEC), 100_000);
    }

    #[test]
    fn every_table_has_its_row_counts_and_widths() {
        let p = pop(SMALL);
        for t in Table::ALL {
            let got = rows(t, &p, 2);
            if t != Table::OrderLine {
                assert_eq!(got.len() as u64, t.rows(1, SMALL), "{}", t.name());
            }
            assert!(
                got.iter().all(|r| r.len() == t.columns().len()),
                "{}",
                t.name()
            );
        }
    }

    #[test]
    fn the_population_repeats_from_its_seed() {
        let p = pop(SMALL);
        for t in Table::ALL {
            assert_eq!(rows(t, &p, 1), rows(t, &p, 1), "{}", t.name());
        }
        let other = Population { seed: 43, ..p };
        assert_ne!(
            rows(Table::Customer, &p, 1),
            rows(Table::Customer, &other, 1)
        );
        assert_ne!(rows(Table::Stock, &p, 1), rows(Table::Stock, &p, 2));
    }

    #[test]
    fn customers_follow_the_last_name_rule() {
        let p = pop(SMALL);
        let c = p.constants().c_last;
        let got = rows(Table::Customer, &p, 1);
        let col = |n: &str| {
            Table::Customer
                .columns()
                .iter()
                .position(|c| *c == n)
                .unwrap()
        };
        let (id, last, credit) = (col("c_id"), col("c_last"), col("c_credit"));
        let names: Vec<String> = (0..1000).map(last_name).collect();
        let mut bad_credit = 0;
        for r in &got {
            let n = int(&r[id]) as u32;
            let Value::Text(l) = &r[last] else { panic!() };
            if n <= 1000 {
                assert_eq!(*l, last_name(n - 1), "customer {n}");
            } else {
                assert!(names.contains(l), "{l}");
            }
            bad_credit += usize::from(r[credit] == Value::Text("BC".into()));
        }
        // 10 % "BC" of 12 000.
        assert!((900..=1500).contains(&bad_credit), "{bad_credit}");
        // The NURand part is NURand with the load's C: replaying the stream gives the same.
        let mut rng = stream(p.seed, tag::CUSTOMER, 1, 1);
        let mut first = None;
        for n in 1..=1001 {
            // Replay what a customer row draws before C_LAST, then the name itself.
            let _ = a_string(&mut rng, 8, 16);
            let l = customer_last_name(&mut rng, n, c);
            address(&mut rng, &mut ValueChunk::default_row());
            let _ = n_string(&mut rng, 16, 16);
            let _ = rng.random_range(0..10);
            let _ = unscaled(&mut rng, 0, 5_000);
            let _ = a_string(&mut rng, 300, 500);
            first = Some(l);
        }
        let Value::Text(l1001) = &got[1000][last] else {
            panic!()
        };
        assert_eq!(first.as_deref(), Some(l1001.as_str()));
    }

    #[test]
    fn orders_and_lines_agree_and_new_orders_are_the_last_30_percent() {
        let p = pop(SMALL);
        let orders = rows(Table::Orders, &p, 1);
        let lines = rows(Table::OrderLine, &p, 1);
        let new_orders = rows(Table::NewOrder, &p, 1);
        let ol_total: i64 = orders.iter().map(|r| int(&r[6])).sum();
        assert_eq!(ol_total as usize, lines.len());
        assert!(orders.iter().all(|r| (5..=15).contains(&int(&r[6]))));
        // Per order: lines numbered 1..=O_OL_CNT, delivered (date, amount 0) before 2101.
        let first_new = i64::from(SMALL.first_new_order());
        let mut at = 0;
        for o in &orders {
            let cnt = int(&o[6]);
            for n in 1..=cnt {
                let l = &lines[at];
                assert_eq!(
                    (int(&l[0]), int(&l[1]), int(&l[3])),
                    (int(&o[0]), int(&o[1]), n)
                );
                let delivered = int(&o[0]) < first_new;
                assert_eq!(l[6] != Value::Null, delivered);
                assert_eq!(l[8] == Value::Float(0.0), delivered);
                at += 1;
            }
            assert_eq!(o[5] == Value::Null, int(&o[0]) >= first_new);
        }
        assert_eq!(new_orders.len() as u32, 10 * SMALL.new_orders());
        assert!(new_orders.iter().all(|r| int(&r[0]) >= first_new));
        // O_C_ID: a permutation of the customers in each district.
        for d in 1..=10 {
            let mut c: Vec<i64> = orders
                .iter()
                .filter(|r| int(&r[1]) == d)
                .map(|r| int(&r[3]))
                .collect();
            c.sort();
            assert_eq!(c, (1..=i64::from(SMALL.customers)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn timestamps_are_wall_clock_text() {
        assert_eq!(timestamp_text(0), "1970-01-01 00:00:00");
        assert_eq!(timestamp_text(1_700_000_000), "2023-11-14 22:13:20");
    }

    impl ValueChunk {
        /// A chunk with one row begun, for replaying draws that write into a row.
        fn default_row() -> ValueChunk {
            let mut c = ValueChunk::default();
            c.row(0);
            c
        }
    }
}
