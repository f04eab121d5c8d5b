//! What a load (OLTP prepare, `tpch load`, pgbench-init) moved and how fast: rows and bytes per
//! table and in total, each with the seconds it took. Bytes are those of the rows as bulk text
//! (tab-separated, the form every engine's bulk path reads or is given), so MB/s compares across
//! engines. A load measured as a trial of its own (`dbrig prepare`, `dbrig tpch load`, a plan's
//! `load` workload) is stored as a [`LoadResult`]: the figures with its timed steps.

use serde::{Deserialize, Serialize};

/// One table of a load. `seconds`: from the load's start to the table's last row (tables load
/// side by side, so each has its own span).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableLoad {
    pub table: String,
    pub rows: u64,
    pub bytes: u64,
    #[serde(rename = "seconds_s")]
    pub seconds: f64,
}

/// A whole load: its tables and the totals over the load's wall-clock time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadFigures {
    pub tables: Vec<TableLoad>,
    pub rows: u64,
    pub bytes: u64,
    #[serde(rename = "seconds_s")]
    pub seconds: f64,
}

/// A load measured as a trial: what was loaded, its timed steps and its figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadResult {
    /// The workload whose data was loaded (`oltp_read_write`, `tpch_power`, `script`).
    pub of: String,
    /// What the data is, in a few words (`4 tables of 100000 rows`, `TPC-H SF 1`,
    /// `pgbench scale 10`).
    pub data: String,
    pub server_version: String,
    /// Each timed step in order (`create`, `load`, `indexes`, `analyze`, …) with its seconds.
    pub steps: Vec<LoadStep>,
    /// Seconds from the first step's start to the last one's end.
    #[serde(rename = "total_s")]
    pub total_seconds: f64,
    /// Loader connections that sent rows side by side.
    pub loaders: u32,
    /// Rows and bytes per table and in total, with their seconds.
    pub figures: LoadFigures,
    /// The loaded tables' size on disk, where the engine tells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
}

/// One timed step of a load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStep {
    pub name: String,
    /// `duration_s`, as `dbrig tpch load --format json` always named it.
    #[serde(rename = "duration_s")]
    pub seconds: f64,
}

/// Fewer rows than this are no rate: a table's seconds run from the load's start to its last
/// row, so a tiny table's rows/s measure when it happened to be written, not how fast (a
/// 1-row table "loaded at 1 rows/s"). Its rows, MB and seconds are shown, its rates not.
pub const MIN_ROWS_FOR_A_RATE: u64 = 1000;

fn per_second(n: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { n / seconds } else { 0.0 }
}

impl TableLoad {
    /// Whether the table has rows enough for its rows/s and MB/s to mean a speed
    /// ([`MIN_ROWS_FOR_A_RATE`]).
    pub fn has_rate(&self) -> bool {
        self.rows >= MIN_ROWS_FOR_A_RATE
    }

    pub fn rows_per_s(&self) -> f64 {
        per_second(self.rows as f64, self.seconds)
    }
    /// Megabytes (10^6 bytes) per second.
    pub fn mb_per_s(&self) -> f64 {
        per_second(self.bytes as f64 / 1e6, self.seconds)
    }
    /// The one human form: `lineitem: 6001215 rows, 759.9 MB in 20.1 s = 298567 rows/s, 37.8 MB/s`.
    pub fn line(&self) -> String {
        figure_line(&self.table, self.rows, self.bytes, self.seconds)
    }
}

impl LoadFigures {
    pub fn rows_per_s(&self) -> f64 {
        per_second(self.rows as f64, self.seconds)
    }
    pub fn mb_per_s(&self) -> f64 {
        per_second(self.bytes as f64 / 1e6, self.seconds)
    }
    /// Every table's line, then the total's.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.tables.iter().map(TableLoad::line).collect();
        out.push(figure_line("total", self.rows, self.bytes, self.seconds));
        out
    }
}

fn figure_line(name: &str, rows: u64, bytes: u64, seconds: f64) -> String {
    let what = format!(
        "{name}: {rows} {}, {:.1} MB in {seconds:.2} s",
        if rows == 1 { "row" } else { "rows" },
        bytes as f64 / 1e6
    );
    if rows < MIN_ROWS_FOR_A_RATE {
        return format!("{what} (too few rows for a rate)");
    }
    format!(
        "{what} = {:.0} rows/s, {:.1} MB/s",
        per_second(rows as f64, seconds),
        per_second(bytes as f64 / 1e6, seconds)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_lines() {
        let t = TableLoad {
            table: "t".into(),
            rows: 1000,
            bytes: 2_000_000,
            seconds: 2.0,
        };
        assert_eq!(t.rows_per_s(), 500.0);
        assert_eq!(t.mb_per_s(), 1.0);
        let f = LoadFigures {
            tables: vec![t],
            rows: 1000,
            bytes: 2_000_000,
            seconds: 4.0,
        };
        assert_eq!(
            f.lines(),
            [
                "t: 1000 rows, 2.0 MB in 2.00 s = 500 rows/s, 1.0 MB/s",
                "total: 1000 rows, 2.0 MB in 4.00 s = 250 rows/s, 0.5 MB/s"
            ]
        );
        // A table of a few rows: its rows, MB and seconds, no rate (its seconds run from the
        // load's start, so 1 row would read "1 rows/s").
        let tiny = TableLoad {
            table: "pgbench_branches".into(),
            rows: 1,
            bytes: 80,
            seconds: 0.91,
        };
        assert!(!tiny.has_rate() && f.tables[0].has_rate());
        assert_eq!(
            tiny.line(),
            "pgbench_branches: 1 row, 0.0 MB in 0.91 s (too few rows for a rate)"
        );
        // A load that took no time has no rate rather than an infinite one.
        assert_eq!(LoadFigures::default().rows_per_s(), 0.0);
        let back: LoadFigures = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
}
