//! DBT-3 / TPC-H: data generation (tpchgen, byte-identical to dbgen), the load test, qgen-style
//! query parameters, the power test with refresh functions RF1/RF2, the throughput test
//! (concurrent streams in the spec's permutations), and answer checking.
//!
//! SQL is data: the schema per dialect in `sql/{common,mysql,postgres,sqlite}.sql`, the 22
//! query templates of `tpchgen::q_and_a` in `sql/queries.sql` with per-dialect variants in
//! `sql/queries_{mysql,sqlite}.sql` (sections there override the template).
//!
//! The power test carries the old DBT-3 launcher's per-query controls (warm-ups, runs,
//! timeouts, restarts, hooks, the three reductions; `power.rs`), plan fingerprints
//! (`explain.rs`), and `launcher.rs` reads the launcher's ini files into a dbrig plan.

pub mod check;
pub mod data;
pub mod error;
pub mod explain;
pub mod launcher;
pub mod load;
pub mod params;
pub mod power;
pub mod queries;
pub mod throughput;

use std::fmt;
use std::str::FromStr;

use dbrig_driver::Dialect;

use crate::sql::{DialectSql, SqlSet};

pub use check::{
    AnswerCheck, AnswerReport, Normalized, QueryComparison, Verdict, check_sf1_answer,
    check_targets, compare_answers, compare_results, normalize,
};
pub use data::{Table, write_tbl};
pub use error::{ControlsError, ExplainError, TpchError};
pub use explain::{CapturedPlan, PlanClusters};
pub use load::{
    KeysWhen, LoadOptions, LoadReport, TpchCleanupReport, check_loaded, cleanup, load,
    refuse_existing, size_on_disk,
};
pub use params::{ParamMode, QueryParams, substitute};
pub use power::{
    EnvError, ParamsMode, PowerControls, PowerEnv, PowerOptions, PowerReport, QueryControls,
    QueryDetail, QueryOutcome, QueryStatus, Reduction, RunRecord, detect_scale_factor,
    power_at_size, power_test, power_test_controlled, reduce, run_query, run_query_timeout,
};
pub use queries::{Query, QuerySet, STREAM0_ORDER, split_statements};
pub use throughput::{
    STREAM_PERMUTATIONS, StreamReport, ThroughputOptions, ThroughputReport, min_streams,
    permutation, qphh_at_size, throughput_at_size, throughput_test,
};

/// Registry kind of the tables `dbrig tpch load` creates.
pub const REGISTRY_KIND: &str = "tpch_table";

/// A TPC-H scale factor: a positive decimal number (`0.01`, `1`, `10`, …).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, serde::Serialize)]
pub struct ScaleFactor(f64);

impl ScaleFactor {
    pub fn new(sf: f64) -> Result<Self, TpchError> {
        if !sf.is_finite() || sf <= 0.0 {
            return Err(TpchError::ScaleFactorNotPositive(sf));
        }
        if sf > 100_000.0 {
            return Err(TpchError::ScaleFactorTooLarge(sf));
        }
        Ok(Self(sf))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// What a load at this scale factor takes on disk, generously: SF 1 is 1.07 GB of rows,
    /// and with keys, indexes and the engines' page overhead about 1.6 GB (measured on
    /// MariaDB/InnoDB, the largest of the three engines).
    pub fn estimated_bytes(self) -> u64 {
        (self.0 * 1.6e9) as u64
    }
}

/// The largest load started without `--force` where the target's free space cannot be
/// known (a remote server): 1 TB.
pub const UNCHECKED_LOAD_BOUND: u64 = crate::loading::UNCHECKED_LOAD_BOUND;

/// Whether a TPC-H load at `sf` may start ([`crate::loading::check_fits`]): the one rule for
/// `dbrig tpch load` and a plan's TPC-H prepare step.
pub fn check_load_fits(
    sf: ScaleFactor,
    space: Option<(&std::path::Path, u64)>,
    force: bool,
) -> Result<(), crate::WorkloadError> {
    crate::loading::check_fits(
        &format!("TPC-H SF {sf}"),
        sf.estimated_bytes(),
        space,
        force,
        "choose a smaller scale factor, free space, or force the load (`--force`; in a plan `force-load = true`)",
    )
}

impl fmt::Display for ScaleFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for ScaleFactor {
    type Err = TpchError;

    /// Accept plain decimal numbers only (digits with at most one '.'), so `1e3`, `inf`,
    /// `0x10` or `1,5` are refused with a message rather than read as something unexpected.
    fn from_str(s: &str) -> Result<Self, TpchError> {
        let t = s.trim();
        let well_formed = !t.is_empty()
            && t.chars().all(|c| c.is_ascii_digit() || c == '.')
            && t.chars().filter(|&c| c == '.').count() <= 1
            && t.chars().any(|c| c.is_ascii_digit());
        if !well_formed {
            return Err(TpchError::ScaleFactorMalformed(s.to_owned()));
        }
        let v: f64 = t
            .parse()
            .map_err(|_| TpchError::ScaleFactorNotANumber(s.to_owned()))?;
        Self::new(v)
    }
}

/// The schema and housekeeping SQL of a dialect.
pub(crate) fn schema_sql(dialect: Dialect) -> &'static SqlSet {
    static SQL: DialectSql = DialectSql::new(
        include_str!("sql/common.sql"),
        include_str!("sql/mysql.sql"),
        include_str!("sql/postgres.sql"),
        include_str!("sql/sqlite.sql"),
    );
    SQL.get(dialect)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_load_that_does_not_fit_is_refused_unless_forced() {
        use std::path::Path;
        let sf = |v: &str| v.parse::<super::ScaleFactor>().unwrap();
        let dir = Path::new("/data");
        // SF 1 ≈ 1.6 GB: fits 2 GB, not 1 GB.
        assert!(super::check_load_fits(sf("1"), Some((dir, 2_000_000_000)), false).is_ok());
        let e = super::check_load_fits(sf("1"), Some((dir, 1_000_000_000)), false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("needs about 1.6 GB but /data has 1.0 GB free"),
            "{e}"
        );
        assert!(super::check_load_fits(sf("1"), Some((dir, 1_000_000_000)), true).is_ok());
        // Unknown free space: up to 1 TB (SF 625) starts, SF 1000 does not.
        assert!(super::check_load_fits(sf("100"), None, false).is_ok());
        assert!(super::check_load_fits(sf("1000"), None, false).is_err());
        assert!(super::check_load_fits(sf("1000"), None, true).is_ok());
    }

    use super::*;

    #[test]
    fn scale_factors_parse_or_explain() {
        for ok in ["0.01", "1", "10", "100", "0.1", "1.", "30"] {
            assert!(ok.parse::<ScaleFactor>().is_ok(), "{ok}");
        }
        assert_eq!("0.01".parse::<ScaleFactor>().unwrap().get(), 0.01);
        for bad in [
            "", "abc", "0", "-1", "1e3", "inf", "NaN", "1.2.3", "1,5", ".", "0.0",
        ] {
            let e = bad.parse::<ScaleFactor>().unwrap_err();
            assert!(e.to_string().contains("scale factor"), "{bad}: {e}");
        }
    }
}
