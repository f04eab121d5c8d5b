//! What a load (OLTP prepare, `tpch load`) moved and how fast: rows and bytes per table and in
//! total, each with the seconds it took. Bytes are those of the rows as bulk text (tab-separated,
//! the form every engine's bulk path reads or is given), so MB/s compares across engines.

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

fn per_second(n: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { n / seconds } else { 0.0 }
}

impl TableLoad {
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
    format!(
        "{name}: {rows} rows, {:.1} MB in {seconds:.2} s = {:.0} rows/s, {:.1} MB/s",
        bytes as f64 / 1e6,
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
        // A load that took no time has no rate rather than an infinite one.
        assert_eq!(LoadFigures::default().rows_per_s(), 0.0);
        let back: LoadFigures = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
}
