//! What a load trial shows (`dbrig prepare`, `dbrig tpch load`, a plan's `load` workload):
//! what was loaded, each timed step, and the rows and MB per second per table and in total, in
//! the one line form of [`dbrig_core::results::TableLoad::line`].

use std::fmt::Write;

use dbrig_core::results::LoadResult;

/// The console report of one load on `target`.
pub fn load_text(r: &LoadResult, target: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Load of {} on {target} ({})\n{}, {} loader(s)",
        r.of, r.server_version, r.data, r.loaders
    );
    for s in &r.steps {
        let _ = writeln!(out, "  {:<28}{:>10.3} s", s.name, s.seconds);
    }
    let _ = writeln!(out, "  {:<28}{:>10.3} s", "total", r.total_seconds);
    for line in r.figures.lines() {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(b) = r.size_bytes {
        let _ = writeln!(out, "  size on disk {:.1} MiB", b as f64 / 1048576.0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::results::{LoadFigures, LoadStep, TableLoad};

    #[test]
    fn a_load_shows_its_steps_and_rates() {
        let r = LoadResult {
            of: "tpch".into(),
            data: "TPC-H SF 0.01, keys after the rows".into(),
            server_version: "11.4".into(),
            steps: vec![LoadStep {
                name: "load".into(),
                seconds: 2.0,
            }],
            total_seconds: 2.5,
            loaders: 2,
            figures: LoadFigures {
                tables: vec![TableLoad {
                    table: "nation".into(),
                    rows: 25,
                    bytes: 2_000_000,
                    seconds: 0.5,
                }],
                rows: 25,
                bytes: 2_000_000,
                seconds: 2.0,
            },
            size_bytes: Some(1048576),
        };
        let t = load_text(&r, "mysql://h/test");
        assert!(t.starts_with("Load of tpch on mysql://h/test (11.4)\nTPC-H SF 0.01, keys after the rows, 2 loader(s)\n"), "{t}");
        // 25 rows are too few for a rate: their seconds run from the load's start.
        assert!(
            t.contains("  nation: 25 rows, 2.0 MB in 0.50 s (too few rows for a rate)\n"),
            "{t}"
        );
        assert!(
            t.contains("  total: 25 rows, 2.0 MB in 2.00 s (too few rows for a rate)\n"),
            "{t}"
        );
        assert!(
            t.contains("  total                            2.500 s\n"),
            "{t}"
        );
        assert!(t.ends_with("  size on disk 1.0 MiB\n"), "{t}");
    }
}
