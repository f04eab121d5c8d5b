//! A script run's report in pgbench's console layout (`transaction type:`, `scaling factor:`,
//! `latency average = …`, `tps = … (without initial connection time)`, per-script sections and
//! `-r`'s statement latencies), printed after dbrig's own report. Everything comes from the
//! stored trial: the script workload records each command's time as a statement `S.NNN text`
//! and each transaction's as `S.txn DESCRIPTION @WEIGHT` (script S, command NNN).

use std::fmt::Write;

use dbrig_core::results::OltpResult;
use dbrig_core::{Measurements, StatementLatency};

/// One script of the run, rebuilt from its statements.
struct ScriptStats<'a> {
    description: String,
    weight: u64,
    txn: Option<&'a StatementLatency>,
    commands: Vec<(&'a StatementLatency, &'a str)>,
}

fn scripts(statements: &[StatementLatency]) -> Vec<ScriptStats<'_>> {
    let mut out: Vec<(usize, ScriptStats<'_>)> = Vec::new();
    for s in statements {
        let Some((index, rest)) = s.statement.split_once('.') else {
            continue;
        };
        let Ok(index) = index.parse::<usize>() else {
            continue;
        };
        let pos = match out.iter().position(|(i, _)| *i == index) {
            Some(p) => p,
            None => {
                out.push((
                    index,
                    ScriptStats {
                        description: String::new(),
                        weight: 1,
                        txn: None,
                        commands: Vec::new(),
                    },
                ));
                out.len() - 1
            }
        };
        let entry = &mut out[pos].1;
        if let Some(what) = rest.strip_prefix("txn") {
            let what = what.trim();
            let (description, weight) = match what.rsplit_once(" @") {
                Some((d, w)) => (d.to_owned(), w.parse().unwrap_or(1)),
                None => (what.to_owned(), 1),
            };
            entry.description = description;
            entry.weight = weight;
            entry.txn = Some(s);
        } else if let Some((_, text)) = rest.split_once(' ') {
            entry.commands.push((s, text));
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, s)| s).collect()
}

fn statement_lines(out: &mut String, indent: &str, commands: &[(&StatementLatency, &str)]) {
    let _ = writeln!(
        out,
        "{indent}statement latencies in milliseconds and failures:"
    );
    for (s, text) in commands {
        let _ = writeln!(out, "  {:>11.3}  {:>10}  {text}", s.latency_ms.avg, 0);
    }
}

/// `part` of `whole` in percent, 0 when there is no whole.
fn percent(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// The pgbench-layout block (pgbench 15's lines, in its order), or nothing when the
/// statements are not a script run's.
pub fn pgbench_text(options: &serde_json::Value, m: &Measurements, oltp: &OltpResult) -> String {
    let notes = &oltp.notes;
    let scripts = scripts(&oltp.statements);
    // A script run that finished no transaction (every one skipped, say) has no statements
    // but still its options: the layout then says what was asked and the zero counts.
    let asked: Vec<&str> = ["scripts", "builtins"]
        .iter()
        .filter_map(|k| options[k].as_array())
        .flatten()
        .filter_map(|v| v.as_str())
        .collect();
    if scripts.is_empty() && options["scripts"].is_null() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(out, "\npgbench's layout:");
    let transaction_type = match (scripts.as_slice(), asked.as_slice()) {
        ([one], _) => one.description.clone(),
        ([], [one]) => (*one).to_owned(),
        _ => "multiple scripts".to_owned(),
    };
    let _ = writeln!(out, "transaction type: {transaction_type}");
    let scale = notes
        .iter()
        .find_map(|n| n.strip_prefix("scaling factor "))
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.trim().parse::<i64>().ok())
        .or_else(|| options["scale"].as_i64().map(|s| s.max(1)))
        .unwrap_or(1);
    let _ = writeln!(out, "scaling factor: {scale}");
    let _ = writeln!(
        out,
        "query mode: {}",
        options["protocol"].as_str().unwrap_or("simple")
    );
    let _ = writeln!(out, "number of clients: {}", m.threads);
    if oltp.workers > 0 {
        let _ = writeln!(out, "number of threads: {}", oltp.workers);
    }
    if let Some(t) = &oltp.tries {
        let _ = writeln!(out, "maximum number of tries: {}", t.max_tries);
    }
    let _ = writeln!(out, "duration: {:.3} s", m.duration_s);
    let _ = writeln!(
        out,
        "number of transactions actually processed: {}",
        m.transactions
    );
    // Failed: transactions out of --max-tries, and clients stopped by an error.
    let failed = m.fatal_errors.len() as u64 + oltp.tries.map_or(0, |t| t.failed());
    let total = m.transactions + failed;
    let _ = writeln!(
        out,
        "number of failed transactions: {failed} ({:.3}%)",
        percent(failed, total)
    );
    if let Some(t) = &oltp.tries {
        if t.failures_detailed {
            let mut kinds = vec![
                ("serialization", t.failed_serialization),
                ("deadlock", t.failed_deadlock),
            ];
            // Not a pgbench kind: only said when there are some.
            if t.failed_other > 0 {
                kinds.push(("other", t.failed_other));
            }
            for (kind, n) in kinds {
                let _ = writeln!(
                    out,
                    "number of {kind} failures: {n} ({:.3}%)",
                    percent(n, total)
                );
            }
        }
        if t.max_tries != 1 {
            let _ = writeln!(
                out,
                "number of transactions retried: {} ({:.3}%)",
                t.retried,
                percent(t.retried, total)
            );
            let _ = writeln!(out, "total number of retries: {}", m.ignored_errors);
        }
    }
    if let Some(l) = &oltp.latency_limit {
        if m.rate.is_some() {
            let _ = writeln!(
                out,
                "number of transactions skipped: {} ({:.3}%)",
                l.skipped,
                percent(l.skipped, total + l.skipped)
            );
        }
        let _ = writeln!(
            out,
            "number of transactions above the {:.1} ms latency limit: {}/{} ({:.3}%)",
            l.limit_ms,
            l.late,
            m.transactions,
            percent(l.late, m.transactions)
        );
    }
    let _ = writeln!(
        out,
        "latency average = {:.3} ms",
        m.latency.mean_us() / 1000.0
    );
    // pgbench prints the deviation only when it throttles or limits latency.
    if m.rate.is_some() || oltp.latency_limit.is_some() {
        let _ = writeln!(
            out,
            "latency stddev = {:.3} ms",
            m.latency.stdev_us() / 1000.0
        );
    }
    if let Some(lag) = &oltp.schedule_lag {
        let _ = writeln!(
            out,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            lag.avg_ms, lag.max_ms
        );
    }
    if let Some(c) = oltp.connect_ms {
        let _ = writeln!(out, "initial connection time = {c:.3} ms");
    }
    let _ = writeln!(
        out,
        "tps = {:.6} (without initial connection time)",
        m.tps()
    );
    let total_weight: u64 = scripts.iter().map(|s| s.weight).sum::<u64>().max(1);
    if let [one] = scripts.as_slice() {
        statement_lines(&mut out, "", &one.commands);
        return out;
    }
    for (i, s) in scripts.iter().enumerate() {
        let n = s.txn.map_or(0, |t| t.count);
        let _ = writeln!(out, "SQL script {}: {}", i + 1, s.description);
        let _ = writeln!(
            out,
            " - weight: {} (targets {:.1}% of total)",
            s.weight,
            100.0 * s.weight as f64 / total_weight as f64
        );
        let _ = writeln!(
            out,
            " - {n} transactions ({:.1}% of total, tps = {:.6})",
            if m.transactions > 0 {
                100.0 * n as f64 / m.transactions as f64
            } else {
                0.0
            },
            if m.duration_s > 0.0 {
                n as f64 / m.duration_s
            } else {
                0.0
            }
        );
        if let Some(t) = s.txn {
            let _ = writeln!(out, " - latency average = {:.3} ms", t.latency_ms.avg);
        }
        statement_lines(&mut out, " - ", &s.commands);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::{LatencyHistogram, LatencySummary};

    fn stmt(name: &str, count: u64, avg: f64) -> StatementLatency {
        StatementLatency {
            statement: name.into(),
            count,
            latency_ms: LatencySummary {
                avg,
                ..LatencySummary::from_histogram(&LatencyHistogram::new())
            },
        }
    }

    #[test]
    fn two_scripts_get_pgbench_sections() {
        let mut latency = LatencyHistogram::new();
        for _ in 0..30 {
            latency.record_us(2000);
        }
        let m = Measurements {
            threads: 2,
            duration_s: 3.0,
            transactions: 30,
            latency,
            key_distribution: dbrig_core::KeyDistribution::Uniform,
            queries: Default::default(),
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: Vec::new(),
            intervals: Vec::new(),
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let statements = [
            stmt("0.000 \\set aid random(1, 100000 * :scale)", 10, 0.002),
            stmt(
                "0.001 SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
                10,
                0.25,
            ),
            stmt("0.txn <builtin: select only> @1", 10, 0.3),
            stmt("1.000 SELECT 1;", 20, 0.1),
            stmt("1.txn my.sql @2", 20, 0.12),
        ];
        let oltp = OltpResult {
            statements: statements.to_vec(),
            notes: vec!["scaling factor 5: the row count of pgbench_branches".into()],
            workers: 2,
            connect_ms: Some(12.5),
            ..Default::default()
        };
        let t = pgbench_text(
            &serde_json::json!({"protocol": "prepared", "scale": 0}),
            &m,
            &oltp,
        );
        for want in [
            "transaction type: multiple scripts\n",
            "scaling factor: 5\n",
            "query mode: prepared\n",
            "number of clients: 2\nnumber of threads: 2\n",
            "number of transactions actually processed: 30\n",
            "latency average = 2.000 ms\ninitial connection time = 12.500 ms\ntps = 10.000000 (without initial connection time)\n",
            "SQL script 1: <builtin: select only>\n - weight: 1 (targets 33.3% of total)\n - 10 transactions (33.3% of total, tps = 3.333333)\n",
            "SQL script 2: my.sql\n - weight: 2 (targets 66.7% of total)\n - 20 transactions (66.7% of total, tps = 6.666667)\n",
            "        0.002           0  \\set aid random(1, 100000 * :scale)\n",
            "        0.100           0  SELECT 1;\n",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
        // Closed loop without a limit: no deviation, no skipped or late lines (as pgbench).
        for absent in ["stddev", "skipped", "latency limit"] {
            assert!(!t.contains(absent), "{absent} in\n{t}");
        }
        // Not a script run: nothing.
        let other = OltpResult {
            statements: vec![stmt("commit", 1, 1.0)],
            ..Default::default()
        };
        assert!(pgbench_text(&serde_json::json!({}), &m, &other).is_empty());
    }

    /// `--max-tries 3 --failures-detailed`: pgbench 15's lines and percentages (of processed +
    /// failed), figures from a pgbench run on this machine (137 processed, 63 serialization
    /// failures, 112 retried, 197 retries).
    #[test]
    fn max_tries_lines_as_pgbench() {
        let mut latency = LatencyHistogram::new();
        for _ in 0..137 {
            latency.record_us(1000);
        }
        let m = Measurements {
            threads: 4,
            duration_s: 1.0,
            transactions: 137,
            latency,
            key_distribution: dbrig_core::KeyDistribution::Uniform,
            queries: Default::default(),
            ignored_errors: 197,
            reconnects: 0,
            fatal_errors: Vec::new(),
            intervals: Vec::new(),
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let mut oltp = OltpResult {
            statements: vec![stmt("0.txn ser.sql @1", 137, 1.0)],
            workers: 1,
            tries: Some(dbrig_core::results::TriesReport {
                max_tries: 3,
                failures_detailed: true,
                retried: 112,
                failed_serialization: 63,
                failed_deadlock: 0,
                failed_other: 0,
            }),
            ..Default::default()
        };
        let t = pgbench_text(&serde_json::json!({"protocol": "simple"}), &m, &oltp);
        let want = "number of failed transactions: 63 (31.500%)\n\
                    number of serialization failures: 63 (31.500%)\n\
                    number of deadlock failures: 0 (0.000%)\n\
                    number of transactions retried: 112 (56.000%)\n\
                    total number of retries: 197\n\
                    latency average = ";
        assert!(t.contains(want), "want\n{want}in\n{t}");
        assert!(
            t.contains("number of threads: 1\nmaximum number of tries: 3\n"),
            "{t}"
        );
        // --max-tries 1 without --failures-detailed: failed only, as pgbench.
        oltp.tries = oltp.tries.map(|t| dbrig_core::results::TriesReport {
            max_tries: 1,
            failures_detailed: false,
            ..t
        });
        let t = pgbench_text(&serde_json::json!({"protocol": "simple"}), &m, &oltp);
        assert!(
            t.contains("number of failed transactions: 63 (31.500%)\nlatency average"),
            "{t}"
        );
        assert!(!t.contains("retries"), "{t}");
    }

    /// `--rate` with `--latency-limit`: pgbench 15's lines, percentages and order (skipped
    /// over all scheduled, late over those processed).
    #[test]
    fn rate_and_latency_limit_lines_as_pgbench() {
        let mut latency = LatencyHistogram::new();
        for us in [1000, 3000, 5000, 7000] {
            latency.record_us(us);
        }
        let m = Measurements {
            threads: 2,
            duration_s: 2.0,
            transactions: 4,
            latency,
            key_distribution: dbrig_core::KeyDistribution::Uniform,
            queries: Default::default(),
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: Vec::new(),
            intervals: Vec::new(),
            rate: Some(Default::default()),
            percentile: 95.0,
            interrupted: false,
        };
        let oltp = OltpResult {
            statements: vec![stmt("0.txn <builtin: TPC-B (sort of)> @1", 4, 4.0)],
            workers: 1,
            connect_ms: Some(17.371),
            latency_limit: Some(dbrig_core::results::LatencyLimitReport {
                limit_ms: 5.0,
                late: 1,
                skipped: 1,
            }),
            ..Default::default()
        };
        let t = pgbench_text(&serde_json::json!({"protocol": "simple"}), &m, &oltp);
        // sqrt(5) ms = 2.236 exactly; the histogram keeps 3 significant digits per bucket.
        let want = "number of transactions actually processed: 4\n\
                    number of failed transactions: 0 (0.000%)\n\
                    number of transactions skipped: 1 (20.000%)\n\
                    number of transactions above the 5.0 ms latency limit: 1/4 (25.000%)\n\
                    latency average = 4.000 ms\n\
                    latency stddev = 2.237 ms\n\
                    initial connection time = 17.371 ms\n\
                    tps = 2.000000 (without initial connection time)\n";
        assert!(t.contains(want), "want\n{want}in\n{t}");
    }
}
