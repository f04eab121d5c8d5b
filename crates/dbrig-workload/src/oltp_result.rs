//! The OLTP result: sysbench's and pgbench's figures (transactions and queries per second,
//! latency, intervals, fairness, `--latency-limit`, `--max-tries`, schedule lag, connect
//! latency) made from what a run's clients measured. The client-driven kinds that report
//! these figures (OLTP, pgbench scripts, sysbench Lua scripts, connect) make their result
//! here; a kind with figures of its own makes its result from the same [`RunOutcome`].

use dbrig_core::measure::RateReport;
use dbrig_core::results::{
    ConnectLatency, LatencyLimitReport, OltpResult, ScheduleLag, TrialResult, TriesReport,
};
use dbrig_core::{ArrivalSchedule, LatencySummary, Measurements};

use crate::kind::TrialOutput;
use crate::runner::{RunOutcome, RunSpec};

/// `run` as an OLTP trial's result, with the workload's `notes`.
pub(crate) fn trial_output(run: RunOutcome, spec: &RunSpec, notes: Vec<String>) -> TrialOutput {
    let o = &spec.options;
    let schedule = o.schedule();
    let m = run.measured;
    let t = &m.total;
    let rate = schedule.rate().map(|target_rate| RateReport {
        target_rate,
        achieved_rate: m.per_second(t.events),
        final_backlog: m.final_backlog,
        max_backlog: m.max_backlog(),
        service_time_ms: LatencySummary::from_histogram(&t.service),
        latency_incl_unserved_ms: Some(LatencySummary::from_histogram(&{
            let mut all = t.latency.clone();
            all.add(&m.unserved);
            all
        })),
    });
    let result = OltpResult {
        statements: m.statements.summaries(),
        schedule: o.schedule_text(),
        warmup_s: o.warmup,
        notes,
        clients: m.clients.iter().map(|&(_, w)| w).collect(),
        workers: run.workers,
        connect_ms: Some(run.connect_ms),
        latency_limit: o.latency_limit().map(|_| LatencyLimitReport {
            limit_ms: o.latency_limit,
            late: t.late,
            skipped: t.skipped,
        }),
        tries: (o.max_tries > 0).then_some(TriesReport {
            max_tries: o.max_tries,
            failures_detailed: o.failures_detailed,
            retried: t.retried,
            failed_serialization: t.failed.serialization,
            failed_deadlock: t.failed.deadlock,
            failed_other: t.failed.other,
        }),
        schedule_lag: (schedule != ArrivalSchedule::Closed).then(|| ScheduleLag {
            avg_ms: if t.events > 0 {
                t.lag_sum_us as f64 / t.events as f64 / 1000.0
            } else {
                0.0
            },
            max_ms: t.lag_max_us as f64 / 1000.0,
        }),
        connect_latency: Some(ConnectLatency {
            connections: m.connects.latency.count(),
            failed: m.connects.failed,
            resumed: m.connects.resumed,
            latency_ms: LatencySummary::from_histogram(&m.connects.latency),
        }),
    };
    let measurements = Measurements {
        threads: o.threads,
        key_distribution: o.key_distribution(),
        duration_s: m.duration_s,
        transactions: t.events,
        queries: t.queries,
        ignored_errors: t.ignored_errors,
        reconnects: t.reconnects,
        intervals: m.intervals.iter().map(|i| i.sample(o.percentile)).collect(),
        rate,
        percentile: o.percentile,
        interrupted: m.interrupted,
        fatal_errors: m.fatal_errors,
        latency: m.total.latency,
    };
    TrialOutput {
        result: TrialResult::Oltp(result),
        measurements: Some(measurements),
        server_version: run.server_version,
    }
}
