//! How the model's ids and closed sets are stored in SQLite columns: ids as INTEGER, kinds and
//! statuses as their TEXT form (`as_str`), read back through `FromStr` so a value this dbrig
//! does not know is a conversion error (reported as a corrupt row), never a guess.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::model::{CellId, RunId, RunKind, RunStatus, TrialId, TrialStatus, UnknownValue};

macro_rules! id_column {
    ($($name:ident),+) => {$(
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
        }
    )+};
}

macro_rules! text_column {
    ($($name:ident),+) => {$(
        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                value
                    .as_str()?
                    .parse()
                    .map_err(|e: UnknownValue| FromSqlError::Other(Box::new(e)))
            }
        }
    )+};
}

id_column!(RunId, CellId, TrialId);
text_column!(RunStatus, TrialStatus, RunKind);
