//! The consistency conditions of clause 3.3.2, run after a load, after a run and by
//! `dbrig tpcc check`. A failure names its condition and the first offending row (the SQL,
//! `check_N` in `sql/common.sql`, returns only rows that break it). All twelve are checked:
//! eleven hold at any time; condition 11 (ORDER rows - NEW-ORDER rows = 2 100 per district)
//! only for the database as loaded, since every Delivery removes a NEW-ORDER row, so it is
//! checked after a load and when asked for ([`AS_LOADED`]). Each is one pass over the tables
//! it names, grouped once: the costliest (6, 7, 10, 12) read ORDER-LINE once each.

use dbrig_core::Value;
use dbrig_driver::Connection;

use super::data::Scale;
use super::schema_sql;
use crate::error::WorkloadError;

/// The conditions that hold at any time, with what each says (clause 3.3.2.N).
pub const CONDITIONS: [(u8, &str); 11] = [
    (1, "W_YTD = sum(D_YTD) per warehouse"),
    (2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district"),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows per district",
    ),
    (4, "sum(O_OL_CNT) = ORDER-LINE rows per district"),
    (
        5,
        "O_CARRIER_ID is null exactly for orders with a NEW-ORDER row",
    ),
    (6, "O_OL_CNT = ORDER-LINE rows per order"),
    (
        7,
        "OL_DELIVERY_D is null exactly for lines of orders without O_CARRIER_ID",
    ),
    (8, "W_YTD = sum(H_AMOUNT) per warehouse"),
    (9, "D_YTD = sum(H_AMOUNT) per district"),
    (
        10,
        "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
    ),
    (
        12,
        "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
    ),
];

/// The condition that holds only for the database as loaded.
pub const AS_LOADED: (u8, &str) = (
    11,
    "ORDER rows - NEW-ORDER rows = the delivered orders (2 100) per district, as loaded",
);

/// A condition that does not hold, and the first row that breaks it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckFailure {
    /// The condition's number in clause 3.3.2.
    pub condition: u8,
    pub what: String,
    /// The offending row as the check query returns it (keys, then the figures compared).
    pub row: Vec<String>,
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "consistency condition {} ({}) fails, first at ({})",
            self.condition,
            self.what,
            self.row.join(", ")
        )
    }
}

/// What a check found: the conditions checked, and those that failed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CheckReport {
    pub checked: Vec<u8>,
    pub failures: Vec<CheckFailure>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Text(s) => s.clone(),
    }
}

/// Run every condition of [`CONDITIONS`] on `conn`'s TPC-C tables.
pub async fn check_consistency(conn: &mut Connection) -> Result<CheckReport, WorkloadError> {
    check_conditions(conn, None).await
}

/// Run every condition of [`CONDITIONS`], and with `as_loaded` (the sizes the tables were
/// loaded with) [`AS_LOADED`] too, in the order of their numbers.
pub async fn check_conditions(
    conn: &mut Connection,
    as_loaded: Option<Scale>,
) -> Result<CheckReport, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    let mut conditions: Vec<(u8, &str, Vec<Value>)> =
        CONDITIONS.iter().map(|&(n, w)| (n, w, vec![])).collect();
    if let Some(scale) = as_loaded {
        let delivered = i64::from(scale.first_new_order()) - 1;
        conditions.push((AS_LOADED.0, AS_LOADED.1, vec![Value::Int(delivered)]));
        conditions.sort_by_key(|c| c.0);
    }
    let mut failures = Vec::new();
    for (n, what, params) in &conditions {
        let rows = conn
            .query(&sql.render(&format!("check_{n}"), &[]), params)
            .await?;
        if let Some(row) = rows.first() {
            failures.push(CheckFailure {
                condition: *n,
                what: (*what).to_owned(),
                row: row.iter().map(text).collect(),
            });
        }
    }
    Ok(CheckReport {
        checked: conditions.iter().map(|c| c.0).collect(),
        failures,
    })
}
