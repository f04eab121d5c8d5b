//! The accepted range of every duration, count, rate and size an option takes, and the one
//! check of a value against it — for the command line (clap's `value_parser`) and for plan
//! files and option files (serde's `deserialize_with`) alike, since one options struct serves
//! both. A value out of range is refused with one line giving the range, before anything
//! runs: a duration too large for the clock (`--time 1e23`), a timeout of 0, a rate so low
//! the first event never comes, a count of 0 where one is needed.
//!
//! Each range is a marker type implementing [`Bounded`]:
//!
//! ```ignore
//! #[arg(long, value_parser = limits::parse::<limits::RunSeconds>)]
//! #[serde(deserialize_with = "limits::de::<limits::RunSeconds, _>")]
//! pub time: f64,
//! ```

use std::fmt;

use crate::{LimitProblem, ValueError};
use serde::de::{self, Deserializer, Visitor};

/// The range of one kind of value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// Smallest accepted value (besides 0 when `zero` says what 0 means).
    pub min: f64,
    /// `min` itself is refused (a percentile above 0).
    pub min_exclusive: bool,
    /// Largest accepted value.
    pub max: f64,
    /// `max` itself is refused (pareto's h below 1).
    pub max_exclusive: bool,
    /// 0 is accepted and means this (`"no limit"`, `"off"`, `"automatic"`).
    pub zero: Option<&'static str>,
    /// The unit the message names (`"seconds"`, `"per second"`, …; empty for a plain count).
    pub unit: &'static str,
}

const DAY: f64 = 86_400.0;

/// The longest a run (or its warm-up) may last: 365 days.
pub const MAX_RUN_SECONDS: f64 = 365.0 * DAY;
/// The longest a timeout may be: 7 days.
pub const MAX_TIMEOUT_SECONDS: f64 = 7.0 * DAY;

impl Limit {
    const fn new(min: f64, max: f64, unit: &'static str) -> Self {
        Limit {
            min,
            min_exclusive: false,
            max,
            max_exclusive: false,
            zero: None,
            unit,
        }
    }

    const fn or_zero(mut self, meaning: &'static str) -> Self {
        self.zero = Some(meaning);
        self
    }

    const fn exclusive(mut self, min: bool, max: bool) -> Self {
        self.min_exclusive = min;
        self.max_exclusive = max;
        self
    }

    /// The accepted range in words: `0 (no limit) or 0.001 to 31536000 seconds (365 days)`.
    pub fn describe(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        let days = if self.unit == "seconds" && self.max >= DAY {
            let n = self.max / DAY;
            format!(" ({} day{})", number(n), if n == 1.0 { "" } else { "s" })
        } else {
            String::new()
        };
        let range = match (self.min_exclusive, self.max_exclusive) {
            (false, false) => format!("{} to {}{unit}{days}", number(self.min), number(self.max)),
            (true, false) => format!(
                "more than {} and at most {}{unit}{days}",
                number(self.min),
                number(self.max)
            ),
            (false, true) => format!(
                "at least {} and less than {}{unit}",
                number(self.min),
                number(self.max)
            ),
            (true, true) => format!(
                "between {} and {}{unit}, both excluded",
                number(self.min),
                number(self.max)
            ),
        };
        match self.zero {
            Some(meaning) => format!("0 ({meaning}) or {range}"),
            None => range,
        }
    }

    /// `v` when it is in range, else why not (the range included).
    pub fn check(&self, v: f64, whole: bool) -> Result<f64, ValueError> {
        let refuse = |problem| ValueError::Limit {
            shown: number(v),
            problem,
            range: self.describe(),
        };
        if !v.is_finite() {
            return Err(refuse(LimitProblem::NotFinite));
        }
        if whole && v.fract() != 0.0 {
            return Err(refuse(LimitProblem::NotWhole));
        }
        if v == 0.0 && self.zero.is_some() {
            return Ok(0.0);
        }
        let low = if self.min_exclusive {
            v <= self.min
        } else {
            v < self.min
        };
        let high = if self.max_exclusive {
            v >= self.max
        } else {
            v > self.max
        };
        if low || high {
            return Err(refuse(LimitProblem::OutOfRange));
        }
        Ok(v)
    }
}

/// A number of seconds as a `Duration`, never a panic: what is not a positive finite number
/// is zero, what is beyond `Duration` is its largest. Values reach here checked; this is the
/// conversion every checked duration goes through.
pub fn duration(seconds: f64) -> std::time::Duration {
    match std::time::Duration::try_from_secs_f64(seconds) {
        Ok(d) => d,
        Err(_) if seconds > 0.0 => std::time::Duration::MAX,
        Err(_) => std::time::Duration::ZERO,
    }
}

/// A number as a person writes it: `0.001`, `31536000`, `1e23`.
fn number(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() || a == 0.0 || (1e-4..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A number as given: an integer stays exact (a 64-bit seed), anything else is a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Given {
    Int(i128),
    Float(f64),
}

impl Given {
    fn as_f64(self) -> f64 {
        match self {
            Given::Int(i) => i as f64,
            Given::Float(f) => f,
        }
    }

    fn shown(self) -> String {
        match self {
            Given::Int(i) => i.to_string(),
            Given::Float(f) => number(f),
        }
    }
}

/// A value type a range applies to.
pub trait LimitValue: Copy + Sized {
    /// Whole numbers only.
    const WHOLE: bool;
    /// The value, once checked to be in range (and whole when [`Self::WHOLE`]); `None` when
    /// the type cannot hold it.
    fn from_given(v: Given) -> Option<Self>;
}

impl LimitValue for f64 {
    const WHOLE: bool = false;
    fn from_given(v: Given) -> Option<Self> {
        Some(v.as_f64())
    }
}

macro_rules! whole {
    ($($t:ty),*) => {$(
        impl LimitValue for $t {
            const WHOLE: bool = true;
            fn from_given(v: Given) -> Option<Self> {
                match v {
                    Given::Int(i) => <$t>::try_from(i).ok(),
                    // Whole (checked) and in range: below 2^53 the conversion is exact.
                    Given::Float(f) => <$t>::try_from(f as i128).ok(),
                }
            }
        }
    )*};
}
whole!(u16, u32, u64, i64);

/// A kind of value with its range: a marker type for `value_parser` and `deserialize_with`.
pub trait Bounded {
    type Value: LimitValue;
    const LIMIT: Limit;

    /// `v` in range, or the message that says the range.
    fn check(v: Given) -> Result<Self::Value, ValueError> {
        let out_of_range = || ValueError::Limit {
            shown: v.shown(),
            problem: LimitProblem::OutOfRange,
            range: Self::LIMIT.describe(),
        };
        match v {
            Given::Int(_) => {
                Self::LIMIT
                    .check(v.as_f64(), false)
                    .map_err(|_| out_of_range())?;
            }
            Given::Float(f) => {
                Self::LIMIT.check(f, Self::Value::WHOLE)?;
            }
        }
        Self::Value::from_given(v).ok_or_else(out_of_range)
    }
}

/// Parse a command-line value and check its range (clap's `value_parser`).
pub fn parse<B: Bounded>(s: &str) -> Result<B::Value, ValueError> {
    let t = s.trim();
    if let Ok(i) = t.parse::<i128>() {
        return B::check(Given::Int(i));
    }
    match t.parse::<f64>() {
        Ok(v) => B::check(Given::Float(v)),
        Err(_) => Err(ValueError::Limit {
            shown: format!("'{s}'"),
            problem: LimitProblem::NotANumber,
            range: B::LIMIT.describe(),
        }),
    }
}

/// Deserialize a number and check its range (serde's `deserialize_with`).
pub fn de<'de, B: Bounded, D: Deserializer<'de>>(d: D) -> Result<B::Value, D::Error> {
    let v = d.deserialize_any(NumberVisitor(B::LIMIT))?;
    B::check(v).map_err(de::Error::custom)
}

/// [`de`] for an optional value (with `#[serde(default)]`).
pub fn de_opt<'de, B: Bounded, D: Deserializer<'de>>(d: D) -> Result<Option<B::Value>, D::Error> {
    de::<B, D>(d).map(Some)
}

/// [`de`] for each value of a list.
pub fn de_vec<'de, B: Bounded, D: Deserializer<'de>>(d: D) -> Result<Vec<B::Value>, D::Error> {
    struct Each<B>(std::marker::PhantomData<B>);
    impl<'de, B: Bounded> Visitor<'de> for Each<B> {
        type Value = Vec<B::Value>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a list of numbers, each {}", B::LIMIT.describe())
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Seed::<B>(std::marker::PhantomData))? {
                out.push(v);
            }
            Ok(out)
        }
    }
    struct Seed<B>(std::marker::PhantomData<B>);
    impl<'de, B: Bounded> de::DeserializeSeed<'de> for Seed<B> {
        type Value = B::Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<B::Value, D::Error> {
            de::<B, D>(d)
        }
    }
    d.deserialize_seq(Each::<B>(std::marker::PhantomData))
}

/// Any number (integer or float) as f64; anything else is refused with the range.
struct NumberVisitor(Limit);

impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Given;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a number, {}", self.0.describe())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Given, E> {
        Ok(Given::Int(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Given, E> {
        Ok(Given::Int(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Given, E> {
        Ok(Given::Int(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Given, E> {
        Ok(Given::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Given, E> {
        Err(E::custom(format!(
            "\"{v}\" is text, not a number: give {}",
            self.0.describe()
        )))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Given, E> {
        Err(E::custom(format!(
            "{v} is not a number: give {}",
            self.0.describe()
        )))
    }
}

macro_rules! ranges {
    ($( $(#[$m:meta])* $name:ident: $t:ty = $limit:expr; )*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl Bounded for $name {
            type Value = $t;
            const LIMIT: Limit = $limit;
        }
    )*
        /// Every range, by name, for tests and documentation.
        pub fn all() -> Vec<(&'static str, Limit, bool)> {
            vec![$((stringify!($name), <$name as Bounded>::LIMIT, <$t as LimitValue>::WHOLE)),*]
        }
    };
}

ranges! {
    // ---- durations ----
    /// How long a run measures (`--time`, a plan's `duration`): 0 is no limit (then
    /// `--events` ends it).
    RunSeconds: f64 = Limit::new(0.001, MAX_RUN_SECONDS, "seconds").or_zero("no limit");
    /// A warm-up before measurement (`--warmup`).
    WarmupSeconds: f64 = Limit::new(0.001, MAX_RUN_SECONDS, "seconds").or_zero("none");
    /// How often something is printed or sampled (`--report-interval`, `--os-stats-interval`).
    IntervalSeconds: f64 = Limit::new(0.01, DAY, "seconds").or_zero("off");
    /// How long to wait for something before giving up (`--connect-timeout`, hooks, queries,
    /// a server's start and stop).
    TimeoutSeconds: f64 = Limit::new(0.001, MAX_TIMEOUT_SECONDS, "seconds");
    /// A latency above which an event counts as late (`--latency-limit`, milliseconds).
    LatencyLimitMs: f64 = Limit::new(0.001, 3_600_000.0, "milliseconds").or_zero("none");
    /// How often the benchmark's sessions' waits are sampled (`--wait-sample-ms`).
    WaitSampleMs: u64 = Limit::new(1.0, 60_000.0, "milliseconds").or_zero("off");
    // ---- rates ----
    /// Open-loop arrivals (`--rate`): 0 is the closed loop.
    EventRate: f64 = Limit::new(0.001, 1e9, "per second").or_zero("closed loop");
    /// New connections per second (`--connect-rate`).
    ConnectRate: f64 = Limit::new(0.001, 1e9, "per second").or_zero("no limit");
    // ---- fractions ----
    /// A latency percentile (`--percentile`).
    Percentile: f64 = Limit::new(0.0, 100.0, "").exclusive(true, false);
    /// A percentage (`--rand-spec-pct`, `--rand-spec-res`).
    Percent: f64 = Limit::new(0.0, 100.0, "percent");
    /// The pareto distribution's shape h.
    ParetoH: f64 = Limit::new(0.0, 1.0, "").exclusive(true, true);
    /// The zipfian distribution's exponent.
    ZipfianExp: f64 = Limit::new(0.0, 100.0, "");
    /// A CPU frequency (`--cpu-mhz`).
    CpuMhz: f64 = Limit::new(1.0, 100_000.0, "MHz");
    // ---- counts ----
    /// Clients of a run (`--threads`, a plan's `clients`, `doctor --clients`).
    Clients: u32 = Limit::new(1.0, 1_000_000.0, "clients");
    /// Extra idle connections (`--idle-clients`).
    IdleClients: u32 = Limit::new(0.0, 1_000_000.0, "connections");
    /// Worker threads (`--workers`).
    Workers: u32 = Limit::new(1.0, 65_536.0, "threads").or_zero("automatic");
    /// Parallel loaders or generators (`--load-parallel`, `tpch load|gen --parallel`).
    Loaders: u32 = Limit::new(1.0, 1024.0, "").or_zero("automatic");
    /// Events of a run (`--events`).
    Events: u64 = Limit::new(1.0, 1e15, "events").or_zero("no limit");
    /// Events between reconnects (`--reconnect`).
    Reconnect: u64 = Limit::new(1.0, 1e15, "events").or_zero("never");
    /// Tries of an event (`--max-tries`).
    MaxTries: u32 = Limit::new(1.0, 1_000_000.0, "").or_zero("dbrig's own retry");
    /// Draws of the gaussian and special distributions (`--rand-spec-iter`).
    RandSpecIter: u32 = Limit::new(1.0, 1000.0, "");
    /// A seed (any 64-bit number).
    Seed: u64 = Limit::new(0.0, 18_446_744_073_709_551_615.0, "");
    /// OLTP tables (`--tables`).
    Tables: u32 = Limit::new(1.0, 1_000_000.0, "tables");
    /// Rows of a table or of a scan by key (`--table-size`, `--range-size`, `--batch-size`):
    /// ids are 32-bit.
    Rows: u64 = Limit::new(1.0, 2_147_483_647.0, "rows");
    /// A key range's width (`--delta`).
    KeyDelta: u64 = Limit::new(0.0, 2_147_483_647.0, "");
    /// Statements of one kind per transaction (`--point-selects`, `--index-updates`, …).
    PerTransaction: u32 = Limit::new(0.0, 1_000_000.0, "per transaction");
    /// Items of one statement (`--random-points`, `--number-of-ranges`, `--bulk-rows`).
    PerStatement: u32 = Limit::new(1.0, 100_000.0, "");
    /// TPC-C warehouses (`--warehouses`; about 100 MB each).
    Warehouses: u32 = Limit::new(1.0, 100_000.0, "warehouses");
    /// pgbench's scale (`--scale`): 100 000 accounts per unit.
    PgbenchScale: u32 = Limit::new(1.0, 1_000_000.0, "").or_zero("automatic");
    /// pgbench-init's fill factor (PostgreSQL's range).
    FillFactor: u32 = Limit::new(10.0, 100.0, "percent");
    /// Timed runs of a benchmark (`micro --runs`).
    Runs: u32 = Limit::new(1.0, 1_000_000.0, "runs");
    /// Measured runs of a TPC-H query (`tpch power --runs`): 0 with analyze-explain is
    /// "until the fastest plan's cluster is full".
    QueryRuns: u32 = Limit::new(0.0, 10_000.0, "runs");
    /// Warm-up runs, skips (`--warmups`, `--max-skipped`).
    Repeats: u32 = Limit::new(0.0, 10_000.0, "");
    /// analyze-explain's cluster size (at most the runs it may take).
    ClusterSize: u32 = Limit::new(1.0, 100.0, "runs");
    /// TPC-H throughput streams (`--streams`).
    Streams: u32 = Limit::new(1.0, 1000.0, "streams").or_zero("the spec's minimum");
    /// Rows of a micro-benchmark table (`--rows`).
    MicroRows: u64 = Limit::new(1.0, 1e10, "rows");
    /// Rows of an optional micro-benchmark table (`--wide-rows`, `--loop-rows`).
    OptionalRows: u64 = Limit::new(1.0, 1e10, "rows").or_zero("skipped");
    /// Queries of a loop (`--loop-queries`).
    LoopQueries: u32 = Limit::new(1.0, 1e9, "queries");
    /// tmp_groupby's table of 2^N rows (`--rows-log2`).
    RowsLog2: u32 = Limit::new(1.0, 32.0, "");
    /// A MariaDB memory size (`--max-heap-table-size`): the server's smallest is 16 KiB.
    HeapBytes: u64 = Limit::new(16_384.0, 1e15, "bytes");
    /// Trials of each cell (a plan's `trials`).
    Trials: u32 = Limit::new(1.0, 10_000.0, "trials");
    /// A run's id in the results database (`--power-run`, `tpch report RUN`).
    RunId: i64 = Limit::new(1.0, 9_223_372_036_854_775_807.0, "");
    /// A TCP port (0 is no port).
    Port: u16 = Limit::new(1.0, 65_535.0, "");
    /// A significance level (`history --max-p`): above 0, at most 1.
    PValue: f64 = Limit::new(0.0, 1.0, "").exclusive(true, false);
    /// Points of a result history (`history --min-points`, `gate --points`).
    HistoryPoints: u32 = Limit::new(1.0, 1_000_000.0, "points");
    /// The change-point search's window (`history --window`).
    HistoryWindow: u32 = Limit::new(2.0, 100_000.0, "points");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        let e = parse::<RunSeconds>("1e23").unwrap_err().to_string();
        assert_eq!(
            e,
            "1e23 is out of range: give 0 (no limit) or 0.001 to 31536000 seconds (365 days)"
        );
        assert!(
            parse::<RunSeconds>("1e-300")
                .unwrap_err()
                .to_string()
                .starts_with("1e-300 is out")
        );
        assert!(
            parse::<IntervalSeconds>("-1")
                .unwrap_err()
                .to_string()
                .ends_with("86400 seconds (1 day)")
        );
        assert_eq!(parse::<RunSeconds>("0"), Ok(0.0));
        assert_eq!(parse::<RunSeconds>("2.5"), Ok(2.5));
        for bad in ["-1", "NaN", "inf", "-inf", "1e300", "abc", ""] {
            assert!(parse::<RunSeconds>(bad).is_err(), "{bad}");
        }
        assert!(
            parse::<TimeoutSeconds>("0")
                .unwrap_err()
                .to_string()
                .contains("0.001 to 604800")
        );
        assert!(parse::<Percentile>("0").is_err());
        assert_eq!(parse::<Percentile>("100"), Ok(100.0));
        assert!(parse::<ParetoH>("1").is_err());
        assert!(parse::<ParetoH>("0").is_err());
        assert_eq!(parse::<ParetoH>("0.2"), Ok(0.2));
    }

    #[test]
    fn counts_are_whole_and_in_range() {
        assert_eq!(parse::<Clients>("4"), Ok(4));
        assert!(
            parse::<Clients>("0")
                .unwrap_err()
                .to_string()
                .contains("1 to 1000000 clients")
        );
        assert!(
            parse::<Clients>("-1")
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
        assert!(
            parse::<Clients>("2.5")
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        assert!(parse::<Clients>("4294967296").is_err());
        assert_eq!(parse::<Seed>("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse::<Port>("65535"), Ok(65535));
        assert!(parse::<Port>("65536").is_err());
        assert!(parse::<Port>("0").is_err());
        // Integers stay exact: a seed above 2^53 is the seed given.
        assert_eq!(
            parse::<Seed>("12345678901234567891"),
            Ok(12_345_678_901_234_567_891)
        );
        assert!(parse::<Seed>("18446744073709551616").is_err());
        assert_eq!(parse::<Clients>("1e3"), Ok(1000));
    }

    #[test]
    fn serde_takes_integers_and_floats_and_refuses_text() {
        #[derive(serde::Deserialize, Debug)]
        struct O {
            #[serde(deserialize_with = "de::<RunSeconds, _>")]
            time: f64,
            #[serde(default, deserialize_with = "de_opt::<Clients, _>")]
            threads: Option<u32>,
            #[serde(default, deserialize_with = "de_vec::<Clients, _>")]
            clients: Vec<u32>,
        }
        let o: O =
            serde_json::from_str(r#"{"time": 10, "threads": 4, "clients": [1, 2]}"#).unwrap();
        assert_eq!((o.time, o.threads, o.clients), (10.0, Some(4), vec![1, 2]));
        let e = serde_json::from_str::<O>(r#"{"time": 1e23}"#).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = serde_json::from_str::<O>(r#"{"time": "10"}"#).unwrap_err();
        assert!(e.to_string().contains("is text, not a number"), "{e}");
        let e = serde_json::from_str::<O>(r#"{"time": 1, "clients": [1, 0]}"#).unwrap_err();
        assert!(e.to_string().contains("0 is out of range"), "{e}");
    }

    /// Every range holds together: its ends are in order, and a whole type can hold them.
    #[test]
    fn every_range_is_sound() {
        for (name, l, whole) in all() {
            assert!(
                l.min.is_finite() && l.max.is_finite() && l.min <= l.max,
                "{name}"
            );
            assert!(
                l.min >= 0.0,
                "{name}: negative values are never an option's"
            );
            assert!(
                !whole || l.min.fract() == 0.0 && l.max.fract() == 0.0,
                "{name}"
            );
            assert!(!l.describe().is_empty());
        }
    }
}
