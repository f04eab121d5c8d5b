//! Integration tests of the results database against real files.

mod legacy;
mod lifecycle;
mod refusals;
mod resume;
mod trials;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbrig_core::measure::RateReport;
use dbrig_core::{
    IntervalSample, KeyDistribution, LatencyHistogram, LatencySummary, Measurements, QueryCounters,
};
use dbrig_store::testing::writer;
use dbrig_store::{CellId, NewCell, NewRun, NewTrial, RunId, RunKind, Store, TrialStatus};
use serde_json::json;

/// A fixed instant plus `secs`, so stored timestamps are predictable.
pub fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_714_566_896 + secs) + Duration::from_millis(250)
}

pub fn begin(store: &mut Store, kind: RunKind, name: &str) -> RunId {
    let options = json!({"time": 10, "tables": 4, "target": "mysql://bench:***@127.0.0.1/db"});
    let host = json!({"cpus": 8, "os": "linux"});
    let argv = vec![
        "dbrig".to_owned(),
        "run".to_owned(),
        name.to_owned(),
        "--target=mysql://bench:***@127.0.0.1/db".to_owned(),
    ];
    writer(store)
        .begin_run(&NewRun {
            kind,
            name,
            started_at: at(0),
            options: &options,
            host: &host,
            dbrig_version: "0.1.0",
            command_line: &argv,
            plan_text: Some("[[cell]]\nworkload = \"oltp_read_only\"\n"),
        })
        .unwrap()
}

pub fn cell(store: &mut Store, run: RunId, key: &str, clients: u32) -> CellId {
    let options = json!({"tables": 4, "table_size": 10000});
    writer(store)
        .ensure_cell(
            run,
            &NewCell {
                cell_key: key,
                configuration: "default",
                workload: "oltp_read_only",
                clients,
                options: &options,
                target: "mysql://bench:***@127.0.0.1:3306/db",
            },
        )
        .unwrap()
}

/// Measurements with every field set to something distinctive.
pub fn measurements() -> Measurements {
    let mut latency = LatencyHistogram::new();
    for us in [850, 900, 1_200, 1_250, 3_400, 15_000, 250_000] {
        latency.record_us(us);
    }
    Measurements {
        threads: 8,
        key_distribution: KeyDistribution::Special {
            iter: 12,
            pct: 1.0,
            res: 75.0,
        },
        duration_s: 10.000_123_456_789,
        transactions: 12_345,
        queries: QueryCounters {
            read: 172_830,
            write: 3,
            other: 24_690,
        },
        ignored_errors: 7,
        reconnects: 2,
        fatal_errors: vec!["client 3: lost connection during SELECT c FROM sbtest1".to_owned()],
        latency,
        intervals: vec![
            IntervalSample {
                t_s: 1.0,
                threads: 8,
                tps: 1_234.5,
                qps: 19_752.1,
                reads_ps: 17_283.0,
                writes_ps: 0.1,
                other_ps: 2_469.0,
                latency_pct_ms: 1.234_567,
                errors_ps: 0.7,
                reconnects_ps: 0.0,
                backlog: None,
            },
            IntervalSample {
                t_s: 2.0,
                threads: 8,
                tps: 1_240.25,
                qps: 19_844.0,
                reads_ps: 17_360.0,
                writes_ps: 0.0,
                other_ps: 2_480.5,
                latency_pct_ms: 1.5,
                errors_ps: 0.0,
                reconnects_ps: 0.2,
                backlog: Some(42),
            },
        ],
        rate: Some(RateReport {
            target_rate: 1_250.0,
            achieved_rate: 1_234.5,
            final_backlog: 3,
            max_backlog: 42,
            service_time_ms: LatencySummary {
                min: 0.8,
                avg: 1.1,
                max: 240.0,
                p50: 1.0,
                p90: 1.3,
                p95: 3.1,
                p99: 14.9,
                p999: 240.0,
                sum: 13_579.1,
            },
            latency_incl_unserved_ms: None,
        }),
        percentile: 95.0,
        interrupted: true,
    }
}

pub fn trial<'a>(n: u32, status: TrialStatus, m: Option<&'a Measurements>) -> NewTrial<'a> {
    NewTrial {
        trial: n,
        status,
        reason: None,
        server_version: Some("11.4.2-MariaDB"),
        started_at: at(10 + u64::from(n) * 20),
        finished_at: at(20 + u64::from(n) * 20),
        measurements: m,
        result: None,
        environment: None,
    }
}
