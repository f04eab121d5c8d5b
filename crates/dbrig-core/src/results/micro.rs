//! What a micro-benchmark (the seeds' MEMORY-table load, scan/filter speed, temporary-table
//! GROUP BY) measured: one item per table type or query, in its own unit.

use serde::{Deserialize, Serialize};

/// What a micro-benchmark measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MicroResult {
    /// `memory_load`, `scan_filter` or `tmp_groupby`.
    pub benchmark: String,
    /// `mysql`, `postgres` or `sqlite`.
    pub dialect: String,
    pub server_version: String,
    /// The storage engine of the tables (MariaDB/MySQL only).
    pub engine: Option<String>,
    /// Rows of the main table (per load for memory_load).
    pub rows: u64,
    pub runs: u32,
    pub seed: u64,
    /// The CPU frequency cycles per row were computed with.
    pub cpu_mhz: Option<f64>,
    /// Session settings dbrig changed, as `name = value`.
    pub settings: Vec<String>,
    /// What was measured, in the seeds' order.
    pub items: Vec<MicroItem>,
    /// Items that do not apply to this target, with the reason.
    pub skipped: Vec<String>,
}

/// One measured item (a table type, a query).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MicroItem {
    /// `INT`, `CHAR(20)`, `count(*) WHERE i>0`, `Q1`, …
    pub name: String,
    /// The SQL that was timed (the load's target table for memory_load).
    pub sql: String,
    /// Unit of `values`, `mean`, `min`, `max`: `rows/s`, `s` or `ms/query`.
    pub unit: String,
    /// One value per timed run.
    pub values: Vec<f64>,
    /// The item's figure over all its runs. For a rate (`rows/s`) the total over the total
    /// time — rows / mean seconds, the rule MB/s and cycles/row follow ([`MicroItem::rate`]);
    /// a mean of per-run rates would weigh a fast run more (up to 2× apart from MB/s). For
    /// seconds and ms/query the mean of the runs.
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Wall-clock seconds of each timed run.
    #[serde(alias = "seconds")]
    pub wall_s: Vec<f64>,
    /// Rows processed by one run.
    pub rows: u64,
    /// Rows per second (rows over the mean run time).
    #[serde(alias = "rows_per_second")]
    pub rows_per_s: Option<f64>,
    /// MB (10^6 bytes) per second of the table's data length over the mean run time.
    #[serde(alias = "mb_per_second")]
    pub mb_per_s: Option<f64>,
    /// CPU cycles per row at `cpu_mhz` (the whole run on one core).
    pub cycles_per_row: Option<f64>,
    /// The bytes a run reads: rows × the engine's average row length (MariaDB
    /// avg_row_length, PostgreSQL's stored row size, SQLite's record payload), as the seeds'
    /// "data length" meant it.
    pub data_bytes: Option<u64>,
    /// What the query answered (first row), as a sanity check across engines.
    pub answer: Option<String>,
    /// Statements the server itself counted per run (MariaDB/MySQL session `Com_select`),
    /// where dbrig can ask: the in-cache loop's queries, whether sent one by one or looped
    /// inside the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_statements: Option<u64>,
}

impl MicroItem {
    /// An item from per-run values and each run's wall seconds; `rows`/`seconds` give the
    /// derived rates.
    pub fn new(
        name: &str,
        sql: &str,
        unit: &str,
        values: Vec<f64>,
        seconds: Vec<f64>,
        rows: u64,
    ) -> Self {
        let (mean, min, max) = summary(&values);
        let mean_s = summary(&seconds).0;
        let rows_per_s = (mean_s > 0.0 && rows > 0).then(|| rows as f64 / mean_s);
        // A rate over all runs is the total over the total, as every derived rate.
        let mean = match rows_per_s {
            Some(r) if unit == "rows/s" => r,
            _ => mean,
        };
        Self {
            name: name.to_owned(),
            sql: sql.to_owned(),
            unit: unit.to_owned(),
            values,
            mean,
            min,
            max,
            wall_s: seconds,
            rows,
            rows_per_s,
            mb_per_s: None,
            cycles_per_row: None,
            data_bytes: None,
            answer: None,
            server_statements: None,
        }
    }

    /// Fill MB/s from the data length and cycles/row from the CPU frequency.
    pub fn with_rates(mut self, data_bytes: Option<u64>, cpu_mhz: Option<f64>) -> Self {
        let mean_s = summary(&self.wall_s).0;
        self.data_bytes = data_bytes;
        if mean_s > 0.0 {
            self.mb_per_s = data_bytes.map(|b| b as f64 / mean_s / 1e6);
            if self.rows > 0 {
                self.cycles_per_row = cpu_mhz.map(|m| m * 1e6 * mean_s / self.rows as f64);
            }
        }
        self
    }
}

/// Mean, min and max (zeros for no values).
pub fn summary(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known inputs, figures worked out by hand: runs of 1 s and 3 s (mean 2 s) over 4 million
    /// rows of a 100 MB table on a 2000 MHz core.
    #[test]
    fn rates_from_known_inputs() {
        let item = MicroItem::new(
            "scan",
            "SELECT 1",
            "rows/s",
            vec![4e6, 4e6 / 3.0],
            vec![1.0, 3.0],
            4_000_000,
        )
        .with_rates(Some(100_000_000), Some(2000.0));
        // The rate over both runs is the total over the total, 8e6 rows / 4 s (not the mean
        // of the runs' rates, 2.67e6: the fast run would weigh more), as MB/s below.
        assert_eq!(item.mean, 2e6);
        assert_eq!((item.min, item.max), (4e6 / 3.0, 4e6));
        // 4e6 rows / 2 s.
        assert_eq!(item.rows_per_s, Some(2e6));
        // 100e6 bytes / 2 s = 50 MB/s.
        assert_eq!(item.mb_per_s, Some(50.0));
        // 2000e6 cycles/s × 2 s / 4e6 rows = 1000 cycles per row.
        assert_eq!(item.cycles_per_row, Some(1000.0));
        assert_eq!(item.data_bytes, Some(100_000_000));

        // Unknown size and frequency: no derived figure is made up.
        let bare =
            MicroItem::new("scan", "", "rows/s", vec![1.0], vec![0.5], 10).with_rates(None, None);
        assert_eq!(bare.rows_per_s, Some(20.0));
        assert_eq!((bare.mb_per_s, bare.cycles_per_row), (None, None));
        // No rows: no per-row figures.
        let empty = MicroItem::new("scan", "", "rows/s", vec![], vec![1.0], 0)
            .with_rates(Some(1_000_000), Some(1000.0));
        assert_eq!((empty.rows_per_s, empty.cycles_per_row), (None, None));
        assert_eq!(empty.mb_per_s, Some(1.0));
        assert_eq!(summary(&[]), (0.0, 0.0, 0.0));
        // Runs too short to time (0 s): no rate is divided by zero.
        let instant = MicroItem::new("scan", "", "rows/s", vec![], vec![0.0], 10)
            .with_rates(Some(1_000_000), Some(1000.0));
        assert_eq!(
            (instant.rows_per_s, instant.mb_per_s, instant.cycles_per_row),
            (None, None, None)
        );
    }
}
