//! TPC-C's options, one struct for the command line and for a plan's `[[workload]]
//! name = "tpcc"` (the doc comments are the help text).

use clap::Args;
use serde::{Deserialize, Serialize};

use dbrig_core::limits;

use super::data::Scale;
use crate::WorkloadError;

#[derive(Debug, Clone, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TpccOptions {
    /// tpcc: warehouses (each 10 districts, 30 000 customers, 100 000 stock rows: about
    /// 100 MB; ITEM's 100 000 rows are shared).
    #[arg(long, default_value_t = 1, value_parser = limits::parse::<limits::Warehouses>)]
    #[serde(
        default = "one",
        deserialize_with = "limits::de::<limits::Warehouses, _>"
    )]
    pub warehouses: u32,
    /// tpcc: check the consistency conditions of clause 3.3.2 (all twelve; 11 only after the load) after the load and
    /// after each run; a failure fails it (`--consistency-check=off` skips it).
    #[arg(long, num_args = 0..=1, default_value = "on", default_missing_value = "on",
          value_parser = clap::builder::BoolishValueParser::new())]
    #[serde(default = "yes")]
    pub consistency_check: bool,
    /// tpcc run: cards per transaction type in each client's shuffled deck, as
    /// New-Order,Payment,Order-Status,Delivery,Stock-Level (clause 5.2.4.2's deck of 23).
    #[arg(long = "tpcc-mix", default_value = "10,10,1,1,1")]
    #[serde(default)]
    pub mix: Mix,
    /// tpcc run: each transaction on a random warehouse, instead of each client keeping a
    /// home warehouse (HammerDB's "use all warehouses").
    #[arg(long)]
    #[serde(default)]
    pub all_warehouses: bool,
    /// tpcc run: each transaction as one call of a stored routine (MariaDB/MySQL procedures,
    /// PostgreSQL functions: HammerDB's way), installed in the database before the clients
    /// start, instead of client-side statements. Same inputs, same effects. Not on SQLite.
    #[arg(long)]
    #[serde(default)]
    pub procedures: bool,
    /// tpcc run: keying and think times (clause 5.2.5: keying 18/3/2/2/2 s, think times
    /// negative-exponential with means 12/12/10/5/5 s, truncated at 10x), off by default as in
    /// HammerDB; ten terminals per warehouse shared out among the clients (--threads up to
    /// 10 x warehouses). Only such a run reports tpmC, with its efficiency against the
    /// specification's ceiling of 12.86 per warehouse.
    #[arg(long)]
    #[serde(default)]
    pub key_and_think: bool,
    /// Loader connections (on the command line: `--load-parallel`; 0: one per CPU, at least
    /// 2; SQLite always 1).
    #[arg(skip)]
    #[serde(default, deserialize_with = "limits::de::<limits::Loaders, _>")]
    pub load_parallel: u32,
    /// Per-warehouse sizes: the specification's; smaller only in tests (never from a plan or
    /// the command line: a smaller database is not TPC-C).
    #[arg(skip)]
    #[serde(skip)]
    pub scale: Scale,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

impl Default for TpccOptions {
    fn default() -> Self {
        TpccOptions {
            warehouses: 1,
            consistency_check: true,
            mix: Mix::SPEC,
            all_warehouses: false,
            procedures: false,
            key_and_think: false,
            load_parallel: 0,
            scale: Scale::SPEC,
        }
    }
}

impl TpccOptions {
    /// What the data is: a load and a run on the same warehouses share one database.
    pub fn data_identity(&self) -> serde_json::Value {
        serde_json::json!({ "tpcc": { "warehouses": self.warehouses } })
    }

    /// The load these options ask for, its streams derived from `seed`.
    pub fn load_options(&self, seed: u64) -> super::TpccLoadOptions {
        super::TpccLoadOptions {
            warehouses: self.warehouses,
            parallel: self.load_parallel,
            seed,
            scale: self.scale,
            check: self.consistency_check,
        }
    }
}

/// The transaction mix: cards per type in a deck (New-Order, Payment, Order-Status,
/// Delivery, Stock-Level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Mix(pub [u32; 5]);

impl Mix {
    /// The specification's deck of 23 (clause 5.2.4.2).
    pub const SPEC: Mix = Mix([10, 10, 1, 1, 1]);

    /// Whether the mix keeps clause 5.2.3's minimums: Payment at least 43 %, Order-Status,
    /// Delivery and Stock-Level at least 4 % each.
    pub fn meets_minimums(&self) -> bool {
        let total: u32 = self.0.iter().sum();
        let share = |n: u32| f64::from(n) / f64::from(total.max(1));
        share(self.0[1]) >= 0.43 && self.0[2..].iter().all(|&n| share(n) >= 0.04)
    }
}

impl Default for Mix {
    fn default() -> Self {
        Mix::SPEC
    }
}

impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c, d, e] = self.0;
        write!(f, "{a},{b},{c},{d},{e}")
    }
}

impl std::str::FromStr for Mix {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Mix, WorkloadError> {
        let bad = || WorkloadError::InvalidMix(s.to_owned());
        let parts: Vec<u32> = s
            .split(',')
            .map(|p| p.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let mix: [u32; 5] = parts.try_into().map_err(|_| bad())?;
        if mix.iter().all(|&n| n == 0) || mix.iter().any(|&n| n > 1000) {
            return Err(bad());
        }
        Ok(Mix(mix))
    }
}

impl TryFrom<String> for Mix {
    type Error = WorkloadError;
    fn try_from(s: String) -> Result<Mix, WorkloadError> {
        s.parse()
    }
}

impl From<Mix> for String {
    fn from(m: Mix) -> String {
        m.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_know_the_minimums() {
        assert_eq!("10,10,1,1,1".parse::<Mix>().unwrap(), Mix::SPEC);
        assert!(Mix::SPEC.meets_minimums());
        // 45 % Payment and 4 % of the others is the spec's minimum mix.
        assert!("43,45,4,4,4".parse::<Mix>().unwrap().meets_minimums());
        assert!(!"1,0,0,0,0".parse::<Mix>().unwrap().meets_minimums());
        for bad in [
            "",
            "1,2,3,4",
            "1,2,3,4,5,6",
            "a,1,1,1,1",
            "0,0,0,0,0",
            "-1,1,1,1,1",
            "1001,1,1,1,1",
        ] {
            let e = bad.parse::<Mix>().unwrap_err();
            assert!(
                matches!(&e, WorkloadError::InvalidMix(s) if s == bad),
                "{bad}"
            );
            assert!(e.to_string().contains("transaction mix"), "{bad}");
        }
        let o: TpccOptions =
            serde_json::from_value(serde_json::json!({"warehouses": 2, "mix": "1,1,1,1,1"}))
                .unwrap();
        assert_eq!((o.warehouses, o.mix), (2, Mix([1, 1, 1, 1, 1])));
        assert!(
            serde_json::from_value::<TpccOptions>(serde_json::json!({"warehouses": 0})).is_err()
        );
    }
}
