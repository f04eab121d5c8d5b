//! The measured items of a typed trial result, each in its own unit: what the plan tables,
//! the comparisons and the CSV exports rank. An OLTP trial has none (it is ranked by its
//! throughput); a micro-benchmark has one per table type or query and per figure it derived
//! (rows/s, MB/s, cycles/row); a power test one per timed step plus Power@Size; a throughput
//! test one per query over the streams, Ts and Throughput@Size; a perfrun one per query and
//! cache temperature; a sql-bench run one per test, its TOTALS and one per operation; a load
//! each table's and the total's rows/s (MB/s beside it) and each step's seconds.
//!
//! A step that failed, timed out or answered wrong has no value: it is never counted as fast.

use dbrig_core::results::perfrun::Temperature;
use dbrig_core::results::{
    LoadResult, MicroResult, PerfrunResult, PowerReport, QueryStatus, ThroughputReport, TrialResult,
};

/// The unit of rows per second, the seeds' figure for loads and scans.
pub const ROWS_PER_SECOND: &str = "rows/s";
/// Seconds: TPC-H steps, perfrun executions, GROUP BY queries.
pub const SECONDS: &str = "s";

/// One measured item of one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// `INT`, `Q14`, `RF1`, `Power@Size`, `q1.sql cold`.
    pub name: String,
    pub unit: String,
    /// A figure derived from the item's own measurement (a micro item's MB/s beside its
    /// rows/s): it gets its own row, named with its unit.
    pub derived: bool,
    pub value: Option<f64>,
    /// Why the item has no value (`timeout (>7.000 s)`, `error`, `wrong answer`), where the
    /// result says: exports give it beside the empty value.
    pub missing: Option<String>,
}

impl Item {
    /// An item measured directly (not derived), for the kinds' own modules.
    pub(crate) fn of(name: impl Into<String>, unit: &str, value: Option<f64>) -> Self {
        Item::new(name, unit, value)
    }

    fn new(name: impl Into<String>, unit: &str, value: Option<f64>) -> Self {
        Item {
            name: name.into(),
            unit: unit.to_owned(),
            derived: false,
            value,
            missing: None,
        }
    }

    /// A TPC-H step's item: its seconds when it answered right, else why not.
    fn step(name: String, status: QueryStatus, time_us: u64) -> Self {
        Item {
            missing: step_missing(status, time_us),
            ..Item::new(name, SECONDS, ok_seconds(status, time_us))
        }
    }

    fn derived(name: &str, unit: &str, value: f64) -> Self {
        Item {
            derived: true,
            ..Item::new(name, unit, Some(value))
        }
    }

    /// The item's key within its workload: unique per (name, unit).
    pub fn key(&self) -> String {
        if self.derived {
            format!("{} ({})", self.name, self.unit)
        } else {
            self.name.clone()
        }
    }
}

/// The items of one trial's result (empty for OLTP).
pub fn items(result: &TrialResult) -> Vec<Item> {
    match result {
        TrialResult::Oltp(_) => Vec::new(),
        TrialResult::Micro(m) => micro_items(m),
        TrialResult::TpchPower(p) => power_items(p),
        TrialResult::TpchThroughput(t) => throughput_items(t),
        TrialResult::Perfrun(p) => perfrun_items(p),
        TrialResult::SqlBench(r) => crate::sqlbench::items(r)
            .into_iter()
            .map(|(name, v)| Item::new(name, SECONDS, v))
            .collect(),
        TrialResult::Load(r) => load_items(r),
        TrialResult::Tpcc(r) => crate::tpcc::tpcc_items(r),
    }
}

/// Each table's rows/s and MB/s, the total's, then each step's seconds and the whole load's.
fn load_items(r: &LoadResult) -> Vec<Item> {
    let f = &r.figures;
    // A table of a few rows has no rate (`TableLoad::has_rate`): no item to compare.
    let tables = f
        .tables
        .iter()
        .filter(|t| t.has_rate())
        .map(|t| (t.table.as_str(), t.rows_per_s(), t.mb_per_s()));
    let mut out = Vec::new();
    let total = (f.rows >= dbrig_core::results::load::MIN_ROWS_FOR_A_RATE)
        .then(|| ("total", f.rows_per_s(), f.mb_per_s()));
    for (name, rows, mb) in tables.chain(total) {
        out.push(Item::new(name, ROWS_PER_SECOND, Some(rows)));
        out.push(Item::derived(name, "MB/s", mb));
    }
    for s in &r.steps {
        out.push(Item::new(
            format!("{} step", s.name),
            SECONDS,
            Some(s.seconds),
        ));
    }
    out.push(Item::new("load test", SECONDS, Some(r.total_seconds)));
    out
}

/// Each item's mean in its own unit, then what the seeds derive from it: rows/s (when the
/// item is timed in another unit), MB/s of the table's data, cycles per row.
fn micro_items(m: &MicroResult) -> Vec<Item> {
    let mut out = Vec::new();
    for i in &m.items {
        out.push(Item::new(i.name.clone(), &i.unit, Some(rate_rule(i))));
        if i.unit != ROWS_PER_SECOND
            && let Some(r) = i.rows_per_s
        {
            out.push(Item::derived(&i.name, ROWS_PER_SECOND, r));
        }
        if let Some(mb) = i.mb_per_s {
            out.push(Item::derived(&i.name, "MB/s", mb));
        }
        if let Some(c) = i.cycles_per_row {
            out.push(Item::derived(&i.name, "cycles/row", c));
        }
    }
    out
}

/// A micro item's figure by one rule: a rate is the total over the total time (rows / mean
/// seconds, as MB/s and cycles/row are), also for results stored while `mean` was the mean
/// of the runs' rates; any other unit its mean.
pub fn rate_rule(i: &dbrig_core::results::MicroItem) -> f64 {
    match i.rows_per_s {
        Some(r) if i.unit == ROWS_PER_SECOND => r,
        _ => i.mean,
    }
}

/// `Q14` for a query, `RF1` as is.
pub fn step_label(name: &str) -> String {
    if name.starts_with("RF") {
        name.to_owned()
    } else {
        format!("Q{name}")
    }
}

fn ok_seconds(status: QueryStatus, time_us: u64) -> Option<f64> {
    (status == QueryStatus::Ok).then(|| time_us as f64 / 1e6)
}

/// Why a step has no value: a timeout says after how long (its time is a lower bound).
fn step_missing(status: QueryStatus, time_us: u64) -> Option<String> {
    match status {
        QueryStatus::Ok => None,
        QueryStatus::Timeout => Some(format!(
            "timeout (>{} s)",
            crate::table::seconds_text(time_us as f64 / 1e6)
        )),
        QueryStatus::Error => Some("error".into()),
        QueryStatus::Wrong => Some("wrong answer".into()),
    }
}

fn power_items(p: &PowerReport) -> Vec<Item> {
    let mut out: Vec<Item> = p
        .steps()
        .map(|q| Item::step(step_label(&q.name), q.status, q.time_us))
        .collect();
    out.push(Item::new("Power@Size", "Power@Size", p.power_at_size));
    out
}

/// TPC-H number order (streams run the queries in different orders), RF1/RF2 after.
pub fn query_order(name: &str) -> (u32, String) {
    (
        name.strip_prefix('Q')
            .unwrap_or(name)
            .parse::<u32>()
            .unwrap_or(u32::MAX),
        name.to_owned(),
    )
}

/// Each query's mean seconds over the streams (none when a stream's run of it failed), the
/// refresh functions likewise, the measurement interval Ts and Throughput@Size.
fn throughput_items(t: &ThroughputReport) -> Vec<Item> {
    let mut runs: Vec<(String, Vec<Item>)> = Vec::new();
    let mut add = |i: Item| match runs.iter_mut().find(|(n, _)| *n == i.name) {
        Some((_, v)) => v.push(i),
        None => runs.push((i.name.clone(), vec![i])),
    };
    for q in t.query_streams.iter().flat_map(|s| &s.queries) {
        add(Item::step(step_label(&q.name), q.status, q.time_us));
    }
    for p in t.refresh_stream.iter().flat_map(|r| &r.pairs) {
        for q in std::iter::once(&p.rf1).chain(p.rf2.iter()) {
            add(Item::step(q.name.to_uppercase(), q.status, q.time_us));
        }
    }
    runs.sort_by_key(|(n, _)| query_order(n));
    let mut out: Vec<Item> = runs
        .into_iter()
        .map(|(name, v)| {
            let mean = v
                .iter()
                .map(|i| i.value)
                .collect::<Option<Vec<f64>>>()
                .filter(|v| !v.is_empty())
                .map(|v| v.iter().sum::<f64>() / v.len() as f64);
            // A stream's run without a value leaves the mean without one, and says why.
            Item {
                missing: v.iter().find_map(|i| i.missing.clone()),
                ..Item::new(name, SECONDS, mean)
            }
        })
        .collect();
    let failed = t.failure.is_some();
    out.push(Item::new("Ts", SECONDS, Some(t.ts_s).filter(|_| !failed)));
    out.push(Item::new(
        "Throughput@Size",
        "Throughput@Size",
        t.throughput_at_size,
    ));
    out
}

/// Execution time per query and temperature (truncated to milliseconds, as the seed).
fn perfrun_items(p: &PerfrunResult) -> Vec<Item> {
    let mut out = Vec::new();
    for q in &p.queries {
        for t in Temperature::ALL {
            let e = q.execution(t);
            let value = e.execution_time_s().filter(|_| e.error.is_none());
            out.push(Item::new(format!("{} {t}", q.file), SECONDS, value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::MicroItem;

    #[test]
    fn a_micro_item_gets_a_row_per_figure_in_its_own_unit() {
        let loop_item = MicroItem::new(
            "loop",
            "SELECT 1",
            "ms/query",
            vec![0.5, 0.5],
            vec![0.5, 0.5],
            1000,
        )
        .with_rates(Some(2_000_000), Some(2000.0));
        let m = MicroResult {
            benchmark: "scan_filter".into(),
            dialect: "sqlite".into(),
            server_version: "3".into(),
            engine: None,
            rows: 1000,
            runs: 2,
            seed: 1,
            cpu_mhz: Some(2000.0),
            settings: vec![],
            items: vec![loop_item],
            skipped: vec![],
        };
        let items = micro_items(&m);
        let units: Vec<(&str, &str, bool)> = items
            .iter()
            .map(|i| (i.name.as_str(), i.unit.as_str(), i.derived))
            .collect();
        assert_eq!(
            units,
            [
                ("loop", "ms/query", false),
                ("loop", "rows/s", true),
                ("loop", "MB/s", true),
                ("loop", "cycles/row", true)
            ]
        );
        assert_eq!(items[2].key(), "loop (MB/s)");
        assert!((items[1].value.unwrap() - 2000.0).abs() < 1e-9);
    }
}
