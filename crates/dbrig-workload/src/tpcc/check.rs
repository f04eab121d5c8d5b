//! The consistency conditions of clause 3.3.2 that are cheap on any engine (1–5, 8 and 9), run
//! after a load and after a run. A failure names its condition and the first offending row
//! (the SQL, `check_N` in `sql/common.sql`, returns only rows that break it).

use dbrig_core::Value;
use dbrig_driver::Connection;

use super::schema_sql;
use crate::error::WorkloadError;

/// The conditions checked, with what each says (clause 3.3.2.N).
pub const CONDITIONS: [(u8, &str); 7] = [
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
    (8, "W_YTD = sum(H_AMOUNT) per warehouse"),
    (9, "D_YTD = sum(H_AMOUNT) per district"),
];

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
    let sql = schema_sql(conn.dialect());
    let mut failures = Vec::new();
    for (n, what) in CONDITIONS {
        let rows = conn
            .query(&sql.render(&format!("check_{n}"), &[]), &[])
            .await?;
        if let Some(row) = rows.first() {
            failures.push(CheckFailure {
                condition: n,
                what: what.to_owned(),
                row: row.iter().map(text).collect(),
            });
        }
    }
    Ok(CheckReport {
        checked: CONDITIONS.iter().map(|(n, _)| *n).collect(),
        failures,
    })
}
