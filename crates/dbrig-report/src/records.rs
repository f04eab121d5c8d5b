//! What trials recorded besides their figures, shown on request: the hooks' outputs (every
//! trial's `before-trial` / `after-trial` / … and a power test's per-query hooks), the
//! EXPLAIN plans a power test captured per query, and the OS statistics of every TPC-H query
//! run, and the load figures of every prepare step (rows/s and MB/s per table). The HTML page
//! always has them, collapsed; text reports add them with
//! `dbrig report --with hooks,plans,os,loads`.

use std::fmt::Write;

use dbrig_core::results::{HookOutput, OsSpan, QueryOutcome, TrialResult};
use serde::Serialize;

use crate::data::ReportData;
use crate::error::ReportError;
use crate::items::step_label;
use crate::table::{Align, Table, TextStyle};

/// Which records a text report adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct With {
    pub hooks: bool,
    pub plans: bool,
    pub os: bool,
    pub loads: bool,
}

impl std::str::FromStr for With {
    type Err = ReportError;

    /// `hooks`, `plans`, `os`, `loads`, or several separated by commas.
    fn from_str(s: &str) -> Result<Self, ReportError> {
        let mut w = With::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "hooks" => w.hooks = true,
                "plans" => w.plans = true,
                "os" => w.os = true,
                "loads" => w.loads = true,
                other => return Err(ReportError::UnknownRecord(other.to_owned())),
            }
        }
        Ok(w)
    }
}

/// One titled record: a hook's run or a query's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    pub title: String,
    pub body: String,
}

fn hook_record(at: &str, h: &HookOutput) -> Record {
    let status = if h.timed_out {
        "timed out".to_owned()
    } else {
        match h.exit_code {
            Some(0) => "ok".to_owned(),
            Some(c) => format!("failed, exit {c}"),
            None => "failed".to_owned(),
        }
    };
    Record {
        title: format!("{at}: {} ({} hook, {status})", h.hook, h.scope),
        body: format!("$ {}\n{}", h.command, h.output.trim_end()),
    }
}

/// Every hook run, in plan order: per trial, then a power test's per-query hooks.
pub fn hook_records(data: &ReportData) -> Vec<Record> {
    let mut out = Vec::new();
    for cell in &data.stored {
        for t in &cell.trials {
            let at = format!(
                "{} / {} / {} clients / trial {}",
                cell.configuration, cell.workload, cell.clients, t.trial
            );
            for h in t.environment.iter().flat_map(|e| &e.hooks) {
                out.push(hook_record(&at, h));
            }
            if let Some(TrialResult::TpchPower(p)) = t.result.as_deref() {
                for q in p.steps() {
                    for h in q.detail.iter().flat_map(|d| &d.hooks) {
                        out.push(hook_record(&format!("{at} / {}", step_label(&q.name)), h));
                    }
                }
            }
        }
    }
    out
}

/// Every captured plan of every power test, per configuration, trial and query (each distinct
/// plan once; the one `analyze-explain` chose is marked).
pub fn plan_records(data: &ReportData) -> Vec<Record> {
    let mut out = Vec::new();
    for cell in &data.stored {
        for t in &cell.trials {
            let Some(TrialResult::TpchPower(p)) = t.result.as_deref() else {
                continue;
            };
            for q in p.steps() {
                let Some(d) = &q.detail else { continue };
                for (fingerprint, plan) in &d.plans {
                    let chosen = if d.chosen_plan.as_ref() == Some(fingerprint) {
                        ", chosen"
                    } else {
                        ""
                    };
                    out.push(Record {
                        title: format!(
                            "{} / {} / trial {} / {}: plan {fingerprint}{chosen}",
                            cell.configuration,
                            cell.workload,
                            t.trial,
                            step_label(&q.name)
                        ),
                        body: plan.trim_end().to_owned(),
                    });
                }
            }
        }
    }
    out
}

/// The OS statistics of every query run of every TPC-H trial (power and throughput), one
/// table per trial (see [`os_table`]).
pub fn os_records(data: &ReportData) -> Vec<Record> {
    let mut out = Vec::new();
    for cell in &data.stored {
        for t in &cell.trials {
            let at = format!(
                "{} / {} / {} clients / trial {}",
                cell.configuration, cell.workload, cell.clients, t.trial
            );
            let table = match t.result.as_deref() {
                Some(TrialResult::TpchPower(p)) => {
                    os_table(at, p.steps().map(|q| (step_label(&q.name), q)))
                }
                Some(TrialResult::TpchThroughput(r)) => os_table(
                    format!("{at} (system-wide figures include the other streams')"),
                    r.query_streams.iter().flat_map(|s| {
                        s.queries
                            .iter()
                            .map(move |q| (format!("s{} Q{}", s.stream, q.name), q))
                    }),
                ),
                _ => None,
            };
            if let Some(table) = table {
                let style = TextStyle {
                    title: false,
                    ..TextStyle::default()
                };
                out.push(Record {
                    title: table.title.clone(),
                    body: table.to_text_styled(&style),
                });
            }
        }
    }
    out
}

/// The load of every prepare step a plan ran, kept with the first trial measured on its data:
/// one line per table and the total (rows, MB, seconds, rows/s, MB/s).
pub fn load_records(data: &ReportData) -> Vec<Record> {
    let mut out = Vec::new();
    for cell in &data.stored {
        for t in &cell.trials {
            let Some(load) = t.environment.as_ref().and_then(|e| e.load.as_ref()) else {
                continue;
            };
            out.push(Record {
                title: format!(
                    "{} / {}: prepare step before trial {} ({} clients)",
                    cell.configuration, cell.workload, t.trial, cell.clients
                ),
                body: load.lines().join("\n"),
            });
        }
    }
    out
}

/// The records `with` asks for as text, after a report: `None` when it asks for nothing.
pub fn records_text(data: &ReportData, with: With) -> Option<String> {
    if with == With::default() {
        return None;
    }
    let mut out = String::new();
    for (asked, name, records) in [
        (with.hooks, "Hook outputs", hook_records(data)),
        (with.plans, "EXPLAIN plans", plan_records(data)),
        (with.os, "OS statistics per query run", os_records(data)),
        (with.loads, "Loads of the prepare steps", load_records(data)),
    ] {
        if !asked {
            continue;
        }
        let _ = writeln!(out, "\n{name}\n{}", "=".repeat(name.len()));
        if records.is_empty() {
            let _ = writeln!(out, "none recorded");
        }
        for r in records {
            let _ = writeln!(out, "\n{}", r.title);
            for l in r.body.lines() {
                let _ = writeln!(out, "  {l}");
            }
        }
    }
    Some(out)
}
/// The OS statistics of every timed run of `steps` (label, step), as the DBT-3 launcher
/// sampled them per query run: each run's span on the trial's OS sampling clock, its length,
/// CPU shares of all CPUs, disk rates, and the server process's CPU (100 = one CPU) and RSS.
/// A step run under launcher controls has a row per run (warm-ups and skipped runs marked);
/// any other step one row. `None` when no step recorded any (OS sampling off).
pub fn os_table<'a>(
    title: String,
    steps: impl IntoIterator<Item = (String, &'a QueryOutcome)>,
) -> Option<Table> {
    let mut rows = Vec::new();
    let mb = |b: f64| format!("{:.1}", b / 1e6);
    let mut row = |label: &str, run: String, span: &OsSpan| {
        let o = &span.os;
        rows.push(vec![
            label.to_owned(),
            run,
            format!("{:.3}", span.start_s),
            format!("{:.3}", span.seconds()),
            format!("{:.1}", o.cpu_user_pct),
            format!("{:.1}", o.cpu_system_pct),
            format!("{:.1}", o.cpu_iowait_pct),
            mb(o.disk_read_bytes_per_s),
            mb(o.disk_write_bytes_per_s),
            o.process_cpu_pct.map_or("-".into(), |p| format!("{p:.1}")),
            o.process_rss_bytes.map_or("-".into(), |b| {
                format!("{:.1}", b as f64 / (1024.0 * 1024.0))
            }),
        ]);
    };
    for (label, q) in steps {
        match q.detail.as_deref() {
            Some(d) if d.runs.iter().any(|r| r.os.is_some()) => {
                for r in &d.runs {
                    let Some(span) = &r.os else { continue };
                    let run = if r.warmup {
                        "warm-up".to_owned()
                    } else if r.skipped {
                        "skipped".to_owned()
                    } else {
                        r.run.to_string()
                    };
                    row(&label, run, span);
                }
            }
            _ => {
                if let Some(span) = q.os.as_deref() {
                    row(&label, "1".into(), span);
                }
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut align = vec![Align::Left, Align::Left];
    align.extend([Align::Right; 9]);
    Some(Table {
        title,
        header: [
            "step",
            "run",
            "from s",
            "seconds",
            "user %",
            "sys %",
            "iowait %",
            "read MB/s",
            "write MB/s",
            "server CPU %",
            "server RSS MiB",
        ]
        .map(str::to_owned)
        .to_vec(),
        align,
        rows,
        notes: vec![
            "OS counters read at each run's start and end; \"from s\": seconds since the trial's OS sampling started (its samples' clock); CPU shares are of all CPUs, server CPU 100 = one CPU".to_owned(),
        ],
    })
}
