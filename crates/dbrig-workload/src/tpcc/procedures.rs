//! TPC-C's stored-procedure mode: the five transactions as server-side routines (MariaDB/MySQL
//! procedures, PostgreSQL functions), HammerDB's way of driving TPROC-C, where each transaction
//! is one call and one round trip. The routines live in `sql/procedures.{mysql,postgres}.sql`;
//! this module installs them ([`install`], [`uninstall`]), prepares their calls
//! ([`Calls::prepare`]) and calls them with the same inputs the client-side mode draws
//! ([`TxInput`]), so that one seeded sequence leaves the same database state in both modes
//! (up to the dates, the server's clock in both).
//!
//! SQLite has no stored procedures: the mode is refused there ([`routine_sql`]).

use std::fmt::Write as _;

use dbrig_core::Value;
use dbrig_driver::{Connection, Dialect, DriverError, Rows, Statement};
use rand::Rng;
use rand::rngs::SmallRng;

use super::data::DISTRICTS;
use super::random::{last_name, nurand};
use super::txn::{RunShape, TxType};
use crate::WorkloadError;
use crate::sql::SqlSet;

/// SQLSTATE the PostgreSQL New-Order function raises for the unused item (clause 2.4.2.3): a
/// function cannot end its transaction, so it aborts the calling statement, which rolls the
/// whole transaction back on the server. The call counts it as the specification's rollback.
pub const PG_ROLLBACK_SQLSTATE: &str = "TPC01";

/// A transaction type's place in [`TxType::ALL`]; its routine is `tpcc_NAME` with sections
/// `drop_NAME`, `create_NAME` and `call_NAME` in the dialect's file (NAME: [`TxType::name`]).
fn index(t: TxType) -> usize {
    TxType::ALL
        .iter()
        .position(|&x| x == t)
        .expect("a transaction type")
}

/// The routine's name on the server.
pub fn routine(t: TxType) -> String {
    format!("tpcc_{}", t.name())
}

/// One New-Order line as drawn (clause 2.4.1.5): item, supplying warehouse, quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderLine {
    pub i_id: u32,
    pub supply_w_id: u32,
    pub quantity: u32,
}

/// How Payment and Order-Status name their customer (clauses 2.5.1.2, 2.6.1.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerRef {
    Id(u32),
    /// By last name: the row at position ⌈n/2⌉ of the district's customers of that name,
    /// sorted by first name.
    LastName(String),
}

/// One transaction's inputs, everything the terminal draws; money in cents. Dates are not
/// inputs: the routines write the server's CURRENT_TIMESTAMP, as the client-side statements do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxInput {
    NewOrder {
        w_id: u32,
        d_id: u32,
        c_id: u32,
        /// 5 to 15 lines (clause 2.4.1.3); the last may name an unused item (rollback).
        lines: Vec<OrderLine>,
    },
    Payment {
        w_id: u32,
        d_id: u32,
        c_w_id: u32,
        c_d_id: u32,
        customer: CustomerRef,
        amount_cents: u32,
    },
    OrderStatus {
        w_id: u32,
        d_id: u32,
        customer: CustomerRef,
    },
    Delivery {
        w_id: u32,
        carrier_id: u32,
    },
    StockLevel {
        w_id: u32,
        d_id: u32,
        threshold: u32,
    },
}

impl TxInput {
    pub fn transaction(&self) -> TxType {
        match self {
            TxInput::NewOrder { .. } => TxType::NewOrder,
            TxInput::Payment { .. } => TxType::Payment,
            TxInput::OrderStatus { .. } => TxType::OrderStatus,
            TxInput::Delivery { .. } => TxType::Delivery,
            TxInput::StockLevel { .. } => TxType::StockLevel,
        }
    }
}

/// What a call did: committed, or rolled back as the specification asks (New-Order's unused
/// item), with the routine's answer rows (none for a rolled-back PostgreSQL New-Order).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    pub committed: bool,
    pub rows: Rows,
}

/// The inputs of transaction `t` drawn from a client's stream exactly as the client-side
/// statements draw them (`super::txn`: the same calls in the same order), so one seed gives
/// the same transactions in both modes.
pub fn draw(rng: &mut SmallRng, shape: &RunShape, home: u32, t: TxType) -> TxInput {
    let warehouse = |rng: &mut SmallRng| match shape.home_warehouse {
        true => home,
        false => rng.random_range(1..=shape.warehouses),
    };
    let other_warehouse = |rng: &mut SmallRng, w: u32| {
        let o = rng.random_range(1..shape.warehouses);
        if o >= w { o + 1 } else { o }
    };
    let customer_id =
        |rng: &mut SmallRng| nurand(rng, 1023, 1, shape.scale.customers, shape.constants.c_id);
    let last = |rng: &mut SmallRng| last_name(nurand(rng, 255, 0, 999, shape.constants.c_last));
    match t {
        TxType::NewOrder => {
            let w_id = warehouse(rng);
            let d_id = rng.random_range(1..=DISTRICTS);
            let c_id = customer_id(rng);
            let ol_cnt = rng.random_range(5..=15u32);
            let rollback = rng.random_range(1..=100) == 1;
            let lines = (1..=ol_cnt)
                .map(|n| {
                    let i_id = match rollback && n == ol_cnt {
                        true => shape.scale.items + 1,
                        false => nurand(rng, 8191, 1, shape.scale.items, shape.constants.ol_i_id),
                    };
                    let supply_w_id = match shape.warehouses > 1 && rng.random_range(1..=100) == 1 {
                        true => other_warehouse(rng, w_id),
                        false => w_id,
                    };
                    OrderLine {
                        i_id,
                        supply_w_id,
                        quantity: rng.random_range(1..=10u32),
                    }
                })
                .collect();
            TxInput::NewOrder {
                w_id,
                d_id,
                c_id,
                lines,
            }
        }
        TxType::Payment => {
            let w_id = warehouse(rng);
            let d_id = rng.random_range(1..=DISTRICTS);
            let (c_w_id, c_d_id) = match shape.warehouses > 1 && rng.random_range(1..=100) > 85 {
                true => (other_warehouse(rng, w_id), rng.random_range(1..=DISTRICTS)),
                false => (w_id, d_id),
            };
            let by_name = rng.random_range(1..=100) <= 60;
            let amount_cents = rng.random_range(100..=500_000i64) as u32;
            let customer = match by_name {
                true => CustomerRef::LastName(last(rng)),
                false => CustomerRef::Id(customer_id(rng)),
            };
            TxInput::Payment {
                w_id,
                d_id,
                c_w_id,
                c_d_id,
                customer,
                amount_cents,
            }
        }
        TxType::OrderStatus => {
            let w_id = warehouse(rng);
            let d_id = rng.random_range(1..=DISTRICTS);
            let customer = match rng.random_range(1..=100) <= 60 {
                true => CustomerRef::LastName(last(rng)),
                false => CustomerRef::Id(customer_id(rng)),
            };
            TxInput::OrderStatus {
                w_id,
                d_id,
                customer,
            }
        }
        TxType::Delivery => {
            let w_id = warehouse(rng);
            TxInput::Delivery {
                w_id,
                carrier_id: rng.random_range(1..=10i32) as u32,
            }
        }
        TxType::StockLevel => {
            let w_id = warehouse(rng);
            let d_id = rng.random_range(1..=DISTRICTS);
            TxInput::StockLevel {
                w_id,
                d_id,
                threshold: rng.random_range(10..=20i32) as u32,
            }
        }
    }
}

/// The routines' SQL for a dialect; SQLite has none.
pub fn routine_sql(dialect: Dialect) -> Result<&'static SqlSet, WorkloadError> {
    static MYSQL: std::sync::OnceLock<SqlSet> = std::sync::OnceLock::new();
    static POSTGRES: std::sync::OnceLock<SqlSet> = std::sync::OnceLock::new();
    match dialect {
        Dialect::Mysql => Ok(MYSQL.get_or_init(|| {
            SqlSet::new(dialect, "", include_str!("sql/procedures.mysql.sql"))
        })),
        Dialect::Postgres => Ok(POSTGRES.get_or_init(|| {
            SqlSet::new(dialect, "", include_str!("sql/procedures.postgres.sql"))
        })),
        Dialect::Sqlite => Err(WorkloadError::InvalidOptions(
            "TPC-C's stored-procedure mode needs MariaDB/MySQL or PostgreSQL: SQLite has no stored procedures (use the client-side mode)".into(),
        )),
    }
}

/// Install (or replace) the five routines in the connection's database: each dropped if it
/// exists, then created, so a changed signature never leaves an old routine beside the new.
pub async fn install(conn: &mut Connection) -> Result<(), WorkloadError> {
    let sql = routine_sql(conn.dialect())?;
    for t in TxType::ALL {
        conn.execute_text(sql.template(&format!("drop_{}", t.name())))
            .await?;
        conn.execute_text(sql.template(&format!("create_{}", t.name())))
            .await?;
    }
    Ok(())
}

/// Drop the five routines where they exist (cleanup).
pub async fn uninstall(conn: &mut Connection) -> Result<(), WorkloadError> {
    let sql = routine_sql(conn.dialect())?;
    for t in TxType::ALL {
        conn.execute_text(sql.template(&format!("drop_{}", t.name())))
            .await?;
    }
    Ok(())
}

/// The five call statements prepared on one connection.
#[derive(Debug, Clone)]
pub struct Calls {
    dialect: Dialect,
    statements: [Statement; 5],
}

impl Calls {
    /// Prepare the five calls (the routines must be installed).
    pub async fn prepare(conn: &mut Connection) -> Result<Self, WorkloadError> {
        let dialect = conn.dialect();
        let sql = routine_sql(dialect)?;
        let mut statements = Vec::with_capacity(TxType::ALL.len());
        for t in TxType::ALL {
            statements.push(conn.prepare(&call_sql(sql, t)).await?);
        }
        let statements = statements
            .try_into()
            .map_err(|_| WorkloadError::Internal("five call statements".into()))?;
        Ok(Self {
            dialect,
            statements,
        })
    }

    /// Run one transaction as one call. A New-Order that named an unused item comes back
    /// rolled back (`committed: false`); any other failure is the call's error (the routine
    /// rolled its transaction back first).
    pub async fn call(
        &self,
        conn: &mut Connection,
        input: &TxInput,
    ) -> Result<CallOutcome, DriverError> {
        let stmt = self.statements[index(input.transaction())];
        let params = call_params(self.dialect, input);
        match conn.execute_rows(stmt, &params).await {
            Ok(rows) => Ok(CallOutcome {
                committed: committed(self.dialect, input, &rows),
                rows,
            }),
            Err(e) if is_spec_rollback(self.dialect, input, &e) => Ok(CallOutcome {
                committed: false,
                rows: Rows::default(),
            }),
            Err(e) => Err(e),
        }
    }
}

/// The call statement of a transaction, placeholders numbered for the dialect.
fn call_sql(sql: &SqlSet, t: TxType) -> String {
    sql.render(&format!("call_{}", t.name()), &[])
}

/// Whether a call that answered committed: only MariaDB/MySQL's New-Order can answer a
/// rollback, as its first column (`is_committed` = 0).
fn committed(dialect: Dialect, input: &TxInput, rows: &Rows) -> bool {
    if dialect != Dialect::Mysql || input.transaction() != TxType::NewOrder {
        return true;
    }
    rows.rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        != Some(0)
}

/// Whether a failed call is PostgreSQL New-Order's rollback on the unused item (by SQLSTATE).
fn is_spec_rollback(dialect: Dialect, input: &TxInput, e: &DriverError) -> bool {
    dialect == Dialect::Postgres
        && input.transaction() == TxType::NewOrder
        && e.code.as_deref() == Some(PG_ROLLBACK_SQLSTATE)
}

/// A list of integers as the routine takes it: comma-separated on MariaDB/MySQL (procedures
/// take no arrays), an array literal on PostgreSQL.
fn int_list(dialect: Dialect, values: impl Iterator<Item = u32>) -> Value {
    let mut s = String::new();
    if dialect == Dialect::Postgres {
        s.push('{');
    }
    for (i, v) in values.enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
    }
    if dialect == Dialect::Postgres {
        s.push('}');
    }
    Value::Text(s)
}

/// Cents as a DECIMAL(6,2) literal ("12.05").
pub fn money(cents: u32) -> Value {
    Value::Text(format!("{}.{:02}", cents / 100, cents % 100))
}

fn customer_params(c: &CustomerRef) -> [Value; 2] {
    match c {
        CustomerRef::Id(id) => [Value::Int(i64::from(*id)), Value::Null],
        CustomerRef::LastName(name) => [Value::Null, Value::Text(name.clone())],
    }
}

/// The bind values of a transaction's call, in the order of its `call_NAME` section.
pub fn call_params(dialect: Dialect, input: &TxInput) -> Vec<Value> {
    let int = |v: u32| Value::Int(i64::from(v));
    match input {
        TxInput::NewOrder {
            w_id,
            d_id,
            c_id,
            lines,
        } => vec![
            int(*w_id),
            int(*d_id),
            int(*c_id),
            int_list(dialect, lines.iter().map(|l| l.i_id)),
            int_list(dialect, lines.iter().map(|l| l.supply_w_id)),
            int_list(dialect, lines.iter().map(|l| l.quantity)),
        ],
        TxInput::Payment {
            w_id,
            d_id,
            c_w_id,
            c_d_id,
            customer,
            amount_cents,
        } => {
            let [id, last] = customer_params(customer);
            vec![
                int(*w_id),
                int(*d_id),
                int(*c_w_id),
                int(*c_d_id),
                id,
                last,
                money(*amount_cents),
            ]
        }
        TxInput::OrderStatus {
            w_id,
            d_id,
            customer,
        } => {
            let [id, last] = customer_params(customer);
            vec![int(*w_id), int(*d_id), id, last]
        }
        TxInput::Delivery { w_id, carrier_id } => vec![int(*w_id), int(*carrier_id)],
        TxInput::StockLevel {
            w_id,
            d_id,
            threshold,
        } => vec![int(*w_id), int(*d_id), int(*threshold)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_order() -> TxInput {
        TxInput::NewOrder {
            w_id: 1,
            d_id: 2,
            c_id: 3,
            lines: vec![
                OrderLine {
                    i_id: 10,
                    supply_w_id: 1,
                    quantity: 5,
                },
                OrderLine {
                    i_id: 11,
                    supply_w_id: 2,
                    quantity: 7,
                },
            ],
        }
    }

    #[test]
    fn every_routine_has_its_sections_and_calls_take_the_params_given() {
        let inputs = [
            new_order(),
            TxInput::Payment {
                w_id: 1,
                d_id: 2,
                c_w_id: 1,
                c_d_id: 2,
                customer: CustomerRef::LastName("BARBARBAR".into()),
                amount_cents: 1205,
            },
            TxInput::OrderStatus {
                w_id: 1,
                d_id: 2,
                customer: CustomerRef::Id(7),
            },
            TxInput::Delivery {
                w_id: 1,
                carrier_id: 3,
            },
            TxInput::StockLevel {
                w_id: 1,
                d_id: 2,
                threshold: 15,
            },
        ];
        for dialect in [Dialect::Mysql, Dialect::Postgres] {
            let sql = routine_sql(dialect).unwrap();
            for t in TxType::ALL {
                for part in ["drop", "create"] {
                    let body = sql.template(&format!("{part}_{}", t.name()));
                    assert!(body.contains(&routine(t)), "{part} {t:?}");
                }
            }
            for (t, input) in TxType::ALL.into_iter().zip(&inputs) {
                assert_eq!(input.transaction(), t);
                let call = call_sql(sql, t);
                assert!(call.contains(&routine(t)), "{call}");
                let params = call_params(dialect, input);
                let slots = match dialect {
                    Dialect::Postgres => (1..=params.len() + 1)
                        .filter(|i| call.contains(&format!("${i}")))
                        .count(),
                    _ => call.matches('?').count(),
                };
                assert_eq!(slots, params.len(), "{dialect:?} {t:?}: {call}");
            }
        }
        assert!(routine_sql(Dialect::Sqlite).is_err());
    }

    #[test]
    fn lists_money_and_customers_are_written_for_each_engine() {
        let my = call_params(Dialect::Mysql, &new_order());
        assert_eq!(my[3], Value::Text("10,11".into()));
        assert_eq!(my[4], Value::Text("1,2".into()));
        assert_eq!(my[5], Value::Text("5,7".into()));
        let pg = call_params(Dialect::Postgres, &new_order());
        assert_eq!(pg[3], Value::Text("{10,11}".into()));
        assert_eq!(money(1205), Value::Text("12.05".into()));
        assert_eq!(money(500_000), Value::Text("5000.00".into()));
        assert_eq!(
            customer_params(&CustomerRef::Id(9)),
            [Value::Int(9), Value::Null]
        );
        assert_eq!(
            customer_params(&CustomerRef::LastName("ABLE".into())),
            [Value::Null, Value::Text("ABLE".into())]
        );
    }

    #[test]
    fn only_the_spec_rollback_counts_as_one() {
        let mut rows = Rows {
            columns: vec!["is_committed".into()],
            rows: vec![vec![Value::Int(0)]],
        };
        let no = new_order();
        assert!(!committed(Dialect::Mysql, &no, &rows));
        rows.rows[0][0] = Value::Int(1);
        assert!(committed(Dialect::Mysql, &no, &rows));
        let sl = TxInput::StockLevel {
            w_id: 1,
            d_id: 1,
            threshold: 10,
        };
        rows.rows[0][0] = Value::Int(0);
        assert!(
            committed(Dialect::Mysql, &sl, &rows),
            "a count of 0 is no rollback"
        );
        let e = |code: &str| {
            DriverError::new(
                dbrig_driver::ErrorKind::Statement,
                dbrig_core::ErrorClass::Fatal,
                Some(code.into()),
                "x",
            )
        };
        assert!(is_spec_rollback(Dialect::Postgres, &no, &e("TPC01")));
        assert!(!is_spec_rollback(Dialect::Postgres, &no, &e("40P01")));
        assert!(!is_spec_rollback(Dialect::Postgres, &sl, &e("TPC01")));
        assert!(!is_spec_rollback(Dialect::Mysql, &no, &e("TPC01")));
    }
}
