//! What `--dry-run` shows of a resolved plan: its configurations, cells, trial count and
//! the order of trials.

use std::fmt::Write;

use crate::plan::Plan;

impl Plan {
    /// The resolved matrix and the order of trials, as `--dry-run` prints them (nothing is
    /// connected to or written).
    pub fn dry_run_text(&self) -> String {
        let plan = self;
        let mut out = String::new();
        let _ = match &plan.path {
            Some(p) => writeln!(out, "Plan '{}' from {}", plan.name, p.display()),
            None => writeln!(out, "Plan '{}' (one cell: {})", plan.name, plan.kind),
        };
        let _ = writeln!(out, "Configurations (baseline {}):", plan.baseline);
        for c in &plan.configurations {
            let _ = writeln!(out, "  {:<16} {}", c.name, c.describe());
        }
        let _ = writeln!(out, "Cells ({}):", plan.cells.len());
        for c in &plan.cells {
            let how = if c.workload.is_timed() {
                format!(
                    "time {}s warm-up {}s  key {}",
                    c.run.time,
                    c.run.warmup,
                    c.run.key_distribution().describe()
                )
            } else {
                format!("one benchmark run per trial  {}", c.workload.options_json())
            };
            let _ = writeln!(
                out,
                "  [{}] {:<12} {:<24} {:>5} clients  {how}",
                c.key,
                plan.configurations[c.configuration].name,
                c.workload_name(),
                c.clients,
            );
        }
        // `+ 0.0`: the sum of no f64 is -0.0, which prints "-0".
        let seconds: f64 = plan
            .schedule
            .iter()
            .filter(|(c, _)| plan.cells[*c].workload.is_timed())
            .map(|(c, _)| plan.cells[*c].run.time + plan.cells[*c].run.warmup)
            .sum::<f64>()
            + 0.0;
        let benchmark_trials = plan
            .schedule
            .iter()
            .filter(|(c, _)| !plan.cells[*c].workload.is_timed())
            .count();
        let _ = writeln!(
            out,
            "Trials: {} ({} per cell), at least {:.0} s of measurement and warm-up{}",
            plan.schedule.len(),
            plan.trials,
            seconds,
            if benchmark_trials > 0 {
                format!(", plus {benchmark_trials} benchmark run(s) that take as long as they take")
            } else {
                String::new()
            }
        );
        if let Some(w) = plan.verdict_warning() {
            let _ = writeln!(out, "Note: {w}");
        }
        let _ = writeln!(out, "Order:");
        for (i, (c, t)) in plan.schedule.iter().enumerate() {
            let cell = &plan.cells[*c];
            let _ = writeln!(
                out,
                "  {:>4}. {} {} {} clients, trial {t}",
                i + 1,
                plan.configurations[cell.configuration].name,
                cell.workload_name(),
                cell.clients
            );
        }
        let _ = writeln!(out, "(dry run: nothing was connected to or written)");
        out
    }
}
