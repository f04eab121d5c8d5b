//! The report of one OLTP run: sysbench's console layout, then dbrig's additions; and the same
//! as one JSON document.

use std::fmt::Write;

use dbrig_core::results::{ConnectLatency, ConnectionFacts, OltpResult, TrialEnvironment};
use dbrig_core::{
    ClientWork, Fairness, IntervalSample, LatencySummary, Measurements, StatementLatency,
};
use dbrig_store::{CellRow, TrialRow};
use serde::{Deserialize, Serialize};

/// What the run was, beside what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunHeader {
    pub workload: String,
    /// Redacted target URL.
    pub target: String,
    pub server_version: String,
    pub seed: u64,
    /// `closed` or e.g. `poisson 1000/s`.
    pub schedule: String,
    pub warmup_s: f64,
    /// Where the run differs from sysbench's or what the engine does to the figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The CPU the server process and dbrig spent over the measured interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<dbrig_core::results::WorkCpu>,
    /// Evidence was switched off for the trial (`--no-evidence`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub evidence_off: bool,
    /// Address family, protocol mode and connection behaviours (trials stored before they
    /// were kept have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<ConnectionFacts>,
    /// Every connection's set-up time, apart from the statements'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_latency: Option<ConnectLatency>,
    /// TLS and authentication of the benchmark connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<dbrig_core::results::ConnectionSecurity>,
}

impl RunHeader {
    /// The header of a stored OLTP trial: the cell's workload and target, the server version
    /// the trial saw, the seed its environment recorded, how its result says it was driven.
    pub fn from_stored(cell: &CellRow, trial: &TrialRow, oltp: &OltpResult) -> RunHeader {
        RunHeader {
            workload: cell.workload.clone(),
            target: cell.target.clone(),
            server_version: trial.server_version.clone().unwrap_or_default(),
            seed: trial
                .environment
                .as_ref()
                .map_or(0, |e: &TrialEnvironment| e.seed),
            schedule: oltp.schedule.clone(),
            warmup_s: oltp.warmup_s,
            notes: oltp.notes.clone(),
            cpu: trial
                .environment
                .as_ref()
                .and_then(|e| e.evidence.as_ref()?.cpu.clone()),
            evidence_off: trial
                .environment
                .as_ref()
                .and_then(|e| e.evidence.as_ref())
                .is_some_and(|e| e.switched_off),
            connection: trial
                .environment
                .as_ref()
                .and_then(|e| e.connection.clone()),
            connect_latency: oltp.connect_latency.clone(),
            security: trial.environment.as_ref().and_then(|e| e.security.clone()),
        }
    }
}

/// Left column width of sysbench's SQL/General statistics blocks.
const LEFT: usize = 41;
/// Total width of sysbench's latency lines (values right-aligned to it).
const LATENCY_WIDTH: usize = 53;

fn latency_line(out: &mut String, name: &str, ms: f64) {
    let label = format!("         {name}:");
    let _ = writeln!(
        out,
        "{label}{:>w$.2}",
        ms,
        w = LATENCY_WIDTH.saturating_sub(label.len())
    );
}

fn percentile_name(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}th percentile")
    } else {
        format!("{p}th percentile")
    }
}

/// The console report: sysbench 1.0.20's blocks verbatim in layout (scripts that grep them keep
/// working; "Threads fairness" from each client's counts, left out for a trial stored without
/// them), then percentiles, the key distribution, the target and the server version.
pub fn run_text(h: &RunHeader, m: &Measurements, clients: &[ClientWork]) -> String {
    let mut out = String::new();
    let lat = m.latency_summary();
    let q = &m.queries;
    let _ = writeln!(out, "SQL statistics:");
    let _ = writeln!(out, "    queries performed:");
    for (name, v) in [
        ("read", q.read),
        ("write", q.write),
        ("other", q.other),
        ("total", q.total()),
    ] {
        let _ = writeln!(out, "{:<LEFT$}{v}", format!("        {name}:"));
    }
    let rate_line = |out: &mut String, name: &str, n: u64, ps: f64| {
        let _ = writeln!(
            out,
            "{:<LEFT$}{n:<6} ({ps:.2} per sec.)",
            format!("    {name}:")
        );
    };
    rate_line(&mut out, "transactions", m.transactions, m.tps());
    rate_line(&mut out, "queries", q.total(), m.qps());
    rate_line(
        &mut out,
        "ignored errors",
        m.ignored_errors,
        m.ignored_errors_ps(),
    );
    rate_line(&mut out, "reconnects", m.reconnects, m.reconnects_ps());
    let _ = writeln!(out);
    let _ = writeln!(out, "General statistics:");
    let _ = writeln!(out, "{:<LEFT$}{:.4}s", "    total time:", m.duration_s);
    let _ = writeln!(
        out,
        "{:<LEFT$}{}",
        "    total number of events:", m.transactions
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "Latency (ms):");
    latency_line(&mut out, "min", lat.min);
    latency_line(&mut out, "avg", lat.avg);
    latency_line(&mut out, "max", lat.max);
    let pct = m.latency.percentile_us(m.percentile) as f64 / 1000.0;
    latency_line(&mut out, &percentile_name(m.percentile), pct);
    latency_line(&mut out, "sum", lat.sum);
    let _ = writeln!(out);
    if let Some(f) = Fairness::of(clients) {
        // sysbench's own formats: `%.4f/%3.2f`.
        let _ = writeln!(out, "Threads fairness:");
        let _ = writeln!(
            out,
            "    events (avg/stddev):           {:.4}/{:3.2}",
            f.events_avg, f.events_stddev
        );
        let _ = writeln!(
            out,
            "    execution time (avg/stddev):   {:.4}/{:3.2}",
            f.busy_avg_s, f.busy_stddev_s
        );
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "Latency percentiles (ms, HDR histogram):");
    for (name, v) in [
        ("p50", lat.p50),
        ("p90", lat.p90),
        ("p99", lat.p99),
        ("p99.9", lat.p999),
        ("max", lat.max),
    ] {
        latency_line(&mut out, name, v);
    }
    if let Some(r) = &m.rate {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Open loop (latency measured from each event's intended start):"
        );
        let _ = writeln!(
            out,
            "{:<LEFT$}{:.2} per sec.",
            "    target rate:", r.target_rate
        );
        let _ = writeln!(
            out,
            "{:<LEFT$}{:.2} per sec.",
            "    achieved rate:", r.achieved_rate
        );
        let _ = writeln!(
            out,
            "{:<LEFT$}{} (max {})",
            "    backlog at end:", r.final_backlog, r.max_backlog
        );
        let s = &r.service_time_ms;
        let _ = writeln!(
            out,
            "{:<LEFT$}p50 {:.2} / p99 {:.2} / max {:.2} ms",
            "    service time:", s.p50, s.p99, s.max
        );
        if let Some(u) = &r.latency_incl_unserved_ms {
            // The queued events count at their waiting time so far: a lower bound.
            let _ = writeln!(
                out,
                "{:<LEFT$}p50 {:.2} / p99 {:.2} / max {:.2} ms ({} unserved at their wait so far)",
                "    latency incl. unserved:", u.p50, u.p99, u.max, r.final_backlog
            );
        }
    }
    if let Some(c) = &h.connect_latency {
        out += &connect_latency_text(c, "");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Run:");
    let _ = writeln!(out, "{:<LEFT$}{}", "    workload:", h.workload);
    let _ = writeln!(out, "{:<LEFT$}{}", "    threads:", m.threads);
    let _ = writeln!(
        out,
        "{:<LEFT$}{}",
        "    key distribution:",
        m.key_distribution.describe()
    );
    let _ = writeln!(out, "{:<LEFT$}{}", "    schedule:", h.schedule);
    if h.warmup_s > 0.0 {
        let _ = writeln!(
            out,
            "{:<LEFT$}{}s (not counted)",
            "    warm-up:", h.warmup_s
        );
    }
    let _ = writeln!(out, "{:<LEFT$}{}", "    random seed:", h.seed);
    let _ = writeln!(out, "{:<LEFT$}{}", "    target:", h.target);
    if let Some(c) = &h.connection {
        let _ = writeln!(out, "{:<LEFT$}{}", "    connection:", c.describe());
    }
    let _ = writeln!(out, "{:<LEFT$}{}", "    server version:", h.server_version);
    if let Some(sec) = &h.security {
        let _ = writeln!(out, "{:<LEFT$}{}", "    connection:", sec.summary());
    }
    if let Some(c) = &h.cpu {
        let us = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} µs"));
        let _ = writeln!(
            out,
            "{:<LEFT$}server {}, client {}",
            format!("    CPU per {}:", c.unit),
            us(c.server_us_per_unit()),
            us(c.client_us_per_unit())
        );
        if let Some(bytes) = c.client_peak_rss_bytes {
            let _ = writeln!(
                out,
                "{:<LEFT$}{:.1} MB (dbrig's own, over the trial)",
                "    client peak memory:",
                bytes as f64 / (1024.0 * 1024.0)
            );
        }
    }
    if h.evidence_off {
        let _ = writeln!(
            out,
            "{:<LEFT$}not collected (switched off: --no-evidence / evidence = false)",
            "    evidence:"
        );
    }
    for note in &h.notes {
        let _ = writeln!(out, "{:<LEFT$}{note}", "    note:");
    }
    if m.interrupted {
        let _ = writeln!(
            out,
            "{:<LEFT$}interrupted: these are the figures measured until then",
            "    status:"
        );
    }
    if !m.fatal_errors.is_empty() {
        let _ = writeln!(out);
        // Each line says which client it is, or how many (abandoned clients are one line).
        let _ = writeln!(out, "Fatal errors:");
        for e in m.fatal_errors.iter().take(10) {
            let _ = writeln!(out, "    {e}");
        }
        if m.fatal_errors.len() > 10 {
            let _ = writeln!(out, "    … and {} more", m.fatal_errors.len() - 10);
        }
    }
    out
}

/// The per-statement latency block (dbrig's addition to sysbench's report): where inside an
/// event the time goes. Empty when the workload timed no statements.
pub fn statements_text(statements: &[StatementLatency]) -> String {
    let mut out = String::new();
    if statements.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\nStatement latency (ms):");
    // Script commands are named by their text: the column is as wide as the longest.
    let w = statements
        .iter()
        .map(|s| s.statement.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(20);
    let _ = writeln!(
        out,
        "    {:<w$}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "statement", "count", "avg", "p50", "p95", "p99", "max"
    );
    for s in statements {
        let l = &s.latency_ms;
        let _ = writeln!(
            out,
            "    {:<w$}{:>10}{:>10.3}{:>10.3}{:>10.3}{:>10.3}{:>10.3}",
            s.statement, s.count, l.avg, l.p50, l.p95, l.p99, l.max
        );
    }
    out
}

/// One `--report-interval` line in sysbench's layout (plus the backlog in open loop).
pub fn interval_line(s: &IntervalSample, percentile: f64) -> String {
    let mut line = format!(
        "[ {:.0}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{}%): {:.2} err/s: {:.2} reconn/s: {:.2}",
        s.t_s,
        s.threads,
        s.tps,
        s.qps,
        s.reads_ps,
        s.writes_ps,
        s.other_ps,
        if percentile.fract() == 0.0 {
            format!("{percentile:.0}")
        } else {
            percentile.to_string()
        },
        s.latency_pct_ms,
        s.errors_ps,
        s.reconnects_ps
    );
    if let Some(b) = s.backlog {
        let _ = write!(line, " backlog: {b}");
    }
    line
}

fn latency_json(l: &LatencySummary) -> serde_json::Value {
    serde_json::json!({
        "min": l.min, "avg": l.avg, "max": l.max,
        "p50": l.p50, "p90": l.p90, "p95": l.p95,
        "p99": l.p99, "p999": l.p999, "sum": l.sum,
    })
}

/// The machine-readable report: one JSON object (with `fairness` and each client's work when
/// the trial kept them). Figures are rounded where the document is printed
/// ([`crate::figures::json_text`]).
pub fn run_json(h: &RunHeader, m: &Measurements, clients: &[ClientWork]) -> serde_json::Value {
    let lat = m.latency_summary();
    let mut v = serde_json::json!({
        "workload": h.workload,
        "target": h.target,
        "server_version": h.server_version,
        "threads": m.threads,
        "transactions": m.transactions,
        "queries": {
            "read": m.queries.read,
            "write": m.queries.write,
            "other": m.queries.other,
            "total": m.queries.total(),
        },
        "tps": m.tps(),
        "qps": m.qps(),
        "ignored_errors": m.ignored_errors,
        "reconnects": m.reconnects,
        "latency_ms": latency_json(&lat),
        "percentile": m.percentile,
        "latency_at_percentile_ms": m.latency.percentile_us(m.percentile) as f64 / 1000.0,
        "duration_s": m.duration_s,
        "key_distribution": m.key_distribution,
        "schedule": h.schedule,
        "warmup_s": h.warmup_s,
        "seed": h.seed,
        "interrupted": m.interrupted,
        "fatal_errors": m.fatal_errors,
        "intervals": m.intervals,
        "notes": h.notes,
    });
    if let Some(c) = &h.connection {
        v["connection"] = serde_json::to_value(c).unwrap_or_default();
    }
    if let Some(c) = &h.connect_latency {
        v["connect_latency"] = serde_json::json!({
            "connections": c.connections,
            "failed": c.failed,
            "resumed": c.resumed,
            "latency_ms": latency_json(&c.latency_ms),
        });
    }
    if let Some(sec) = &h.security {
        // TLS and authentication belong to the same "connection" object as the address
        // family and protocol: one place in the JSON says how the clients reached the server.
        let sec = serde_json::to_value(sec).unwrap_or_default();
        match (v.get_mut("connection").and_then(|c| c.as_object_mut()), sec) {
            (Some(obj), serde_json::Value::Object(s)) => obj.extend(s),
            (_, sec) => v["connection"] = sec,
        }
    }
    if let Some(c) = &h.cpu {
        v["cpu"] = serde_json::json!({
            "unit": c.unit,
            "server_us_per_unit": c.server_us_per_unit(),
            "client_us_per_unit": c.client_us_per_unit(),
            "server_cpu_s": c.server_cpu_s,
            "client_cpu_s": c.client_cpu_s,
            "client_peak_rss_bytes": c.client_peak_rss_bytes,
            "interval_s": c.interval_s,
        });
    }
    if h.evidence_off {
        v["evidence"] = "not collected (switched off)".into();
    }
    if let Some(f) = Fairness::of(clients) {
        v["fairness"] = serde_json::json!({
            "events_avg": f.events_avg,
            "events_stddev": f.events_stddev,
            "busy_avg_s": f.busy_avg_s,
            "busy_stddev_s": f.busy_stddev_s,
        });
        v["clients"] = clients
            .iter()
            .map(|c| serde_json::json!({"events": c.events, "busy_s": c.busy_s}))
            .collect();
    }
    if let Some(r) = &m.rate {
        v["rate"] = serde_json::json!({
            "target_per_s": r.target_rate,
            "achieved_per_s": r.achieved_rate,
            "final_backlog": r.final_backlog,
            "max_backlog": r.max_backlog,
            "service_time_ms": latency_json(&r.service_time_ms),
            "latency_incl_unserved_ms": r.latency_incl_unserved_ms.as_ref().map(latency_json),
        });
    }
    v
}

/// sysbench's `--histogram` block, printed before "SQL statistics": latency buckets in ms
/// (each 10 % wider than the last), a bar of `*` scaled to the fullest bucket, the count.
pub fn histogram_text(h: &dbrig_core::LatencyHistogram) -> String {
    let buckets = h.log_buckets(1.1);
    let top = buckets.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let mut out = String::from(
        "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n",
    );
    for (us, count) in buckets {
        let stars = ((count as f64 / top as f64) * 40.0).ceil() as usize;
        let _ = writeln!(
            out,
            "{:>12.3} |{:<40} {count}",
            us as f64 / 1000.0,
            "*".repeat(stars.clamp(1, 40))
        );
    }
    out.push('\n');
    out
}

/// The connect-latency section every kind's report prints (OLTP from its result, the other
/// kinds from the trial's connection facts): empty when no connection was timed.
pub(crate) fn connect_latency_text(c: &ConnectLatency, of: &str) -> String {
    let mut out = String::new();
    if c.connections == 0 {
        return out;
    }
    let l = &c.latency_ms;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Connect latency{of} (ms; set-up, apart from the statements):"
    );
    let mut extra = Vec::new();
    if c.failed > 0 {
        extra.push(format!("{} failed", c.failed));
    }
    if c.resumed > 0 {
        extra.push(format!("{} resumed a TLS session", c.resumed));
    }
    let _ = writeln!(
        out,
        "{:<LEFT$}{}{}",
        "    connections:",
        c.connections,
        if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join(", "))
        }
    );
    for (name, v) in [
        ("min", l.min),
        ("avg", l.avg),
        ("p50", l.p50),
        ("p99", l.p99),
        ("max", l.max),
    ] {
        latency_line(&mut out, name, v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dbrig_core::{KeyDistribution, LatencyHistogram, QueryCounters};

    fn sample() -> (RunHeader, Measurements) {
        let mut latency = LatencyHistogram::new();
        for us in [1970, 2400, 2410, 3020, 6370] {
            latency.record_us(us);
        }
        let m = Measurements {
            threads: 1,
            key_distribution: KeyDistribution::Uniform,
            duration_s: 0.242,
            transactions: 100,
            queries: QueryCounters {
                read: 1400,
                write: 400,
                other: 200,
            },
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: vec![],
            latency,
            intervals: vec![],
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let h = RunHeader {
            workload: "oltp_read_write".into(),
            target: "mock:".into(),
            server_version: "mock-1.0".into(),
            seed: 7,
            schedule: "closed".into(),
            warmup_s: 0.0,
            notes: Vec::new(),
            cpu: None,
            evidence_off: false,
            connection: None,
            connect_latency: None,
            security: None,
        };
        (h, m)
    }

    #[test]
    fn text_keeps_sysbench_layout() {
        let (h, m) = sample();
        let text = run_text(&h, &m, &[]);
        assert!(!text.contains("Threads fairness"), "{text}");
        assert!(
            text.contains("        read:                            1400\n"),
            "{text}"
        );
        assert!(
            text.contains("    transactions:                        100    (413.22 per sec.)\n"),
            "{text}"
        );
        assert!(
            text.contains("    total time:                          0.2420s\n"),
            "{text}"
        );
        assert!(
            text.contains("         min:                                    1.97\n"),
            "{text}"
        );
        assert!(
            text.contains("         95th percentile:                        6.37\n"),
            "{text}"
        );
        assert!(text.contains("uniform"));
    }

    /// sysbench's block, in its place (after "Latency (ms)") and formats (`%.4f/%3.2f`).
    #[test]
    fn text_has_sysbench_threads_fairness() {
        let (h, m) = sample();
        let clients = [
            ClientWork {
                events: 40,
                busy_s: 0.1,
            },
            ClientWork {
                events: 60,
                busy_s: 0.14,
            },
        ];
        let text = run_text(&h, &m, &clients);
        assert!(
            text.contains(
                "         sum:                                   16.17\n\nThreads fairness:\n    events (avg/stddev):           50.0000/10.00\n    execution time (avg/stddev):   0.1200/0.02\n\nLatency percentiles"
            ),
            "{text}"
        );
        let mut v = run_json(&h, &m, &clients);
        crate::figures::round_json(&mut v);
        assert_eq!(v["fairness"]["events_avg"], 50.0);
        assert_eq!(v["fairness"]["events_stddev"], 10.0);
        assert_eq!(v["fairness"]["busy_avg_s"], 0.12);
        assert_eq!(v["clients"][1]["events"], 60);
        assert!(run_json(&h, &m, &[]).get("fairness").is_none());
    }

    #[test]
    fn json_has_the_documented_fields() {
        let (h, m) = sample();
        let v = run_json(&h, &m, &[]);
        for key in [
            "workload",
            "target",
            "server_version",
            "threads",
            "transactions",
            "tps",
            "qps",
            "ignored_errors",
            "reconnects",
            "duration_s",
        ] {
            assert!(v.get(key).is_some(), "{key}");
        }
        assert_eq!(v["queries"]["total"], 2000);
        for key in ["min", "avg", "max", "p50", "p95", "p99", "p999"] {
            assert!(v["latency_ms"].get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn interval_line_matches_sysbench() {
        let s = IntervalSample {
            t_s: 1.0,
            threads: 16,
            tps: 1234.56,
            qps: 24691.2,
            reads_ps: 17283.84,
            writes_ps: 4938.24,
            other_ps: 2469.12,
            latency_pct_ms: 18.28,
            errors_ps: 0.0,
            reconnects_ps: 0.0,
            backlog: None,
        };
        assert_eq!(
            interval_line(&s, 95.0),
            "[ 1s ] thds: 16 tps: 1234.56 qps: 24691.20 (r/w/o: 17283.84/4938.24/2469.12) lat (ms,95%): 18.28 err/s: 0.00 reconn/s: 0.00"
        );
    }

    #[test]
    fn statement_latency_block_lists_each_kind() {
        assert_eq!(statements_text(&[]), "");
        let l = LatencySummary {
            avg: 0.25,
            p50: 0.2,
            p95: 0.5,
            p99: 0.75,
            max: 1.5,
            ..LatencySummary::default()
        };
        let text = statements_text(&[
            StatementLatency {
                statement: "commit".into(),
                count: 400,
                latency_ms: l,
            },
            StatementLatency {
                statement: "point_select".into(),
                count: 4000,
                latency_ms: l,
            },
        ]);
        assert_eq!(
            text,
            "\nStatement latency (ms):\n    statement                count       avg       p50       p95       p99       max\n    commit                     400     0.250     0.200     0.500     0.750     1.500\n    point_select              4000     0.250     0.200     0.500     0.750     1.500\n"
        );
    }
}
