//! Results databases filled with made-up, fully deterministic measurements: the input of the
//! snapshot tests and of `bench/report-scale`. Test support: compiled for this crate's tests
//! and with its `test-support` feature (which only dev-dependencies turn on), so the
//! integration tests and the `fill_store` example share one generator with the unit tests.
//! It writes through `dbrig_store::testing`, which a shipped build does not have: only the
//! recorder writes there.
//!
//! Runs are stored the way the executor stores them: every trial with its typed result, a
//! single command as a one-cell run of its kind (a perfrun as two cells, `a` and `b`).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbrig_core::results::perfrun::{Execution, PerfQuery, PerfrunResult, SideInfo};
use dbrig_core::results::tpch::{
    ParamMode, QueryDetail, Reduction, RefreshPair, RefreshStreamReport, RunRecord, StreamReport,
};
use dbrig_core::results::{
    HookOutput, MicroItem, MicroResult, OltpResult, OsSample, PowerReport, QueryOutcome,
    QueryStatus, ServerSettings, ThroughputReport, TrialEnvironment, TrialResult,
};
use dbrig_core::{
    ClientWork, IntervalSample, KeyDistribution, LatencyHistogram, LatencySummary, Measurements,
    QueryCounters, StatementLatency,
};
use dbrig_store::testing::writer;
use dbrig_store::{
    CellId, NewCell, NewRun, NewTrial, RunId, RunKind, RunStatus, Store, StoreError, TrialStatus,
};

/// A fixed point in time (2023-11-14T22:13:20Z), so stored timestamps never change.
pub fn at(offset_s: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000 + offset_s)
}

/// Measurements of a trial with throughput `qps` and latencies around `lat_ms`, with
/// `intervals` one-second samples that wobble by `wobble` (relative).
pub fn measurements(
    clients: u32,
    qps: f64,
    lat_ms: f64,
    intervals: usize,
    wobble: f64,
) -> Measurements {
    let duration_s = 10.0;
    let total = (qps * duration_s).round() as u64;
    let read = total * 7 / 10;
    let write = total * 2 / 10;
    let mut latency = LatencyHistogram::new();
    // A right-skewed shape: 90 values near lat_ms, a tail up to 4×.
    for i in 0..100u64 {
        let f = if i < 90 {
            0.6 + 0.8 * i as f64 / 90.0
        } else {
            1.4 + 0.26 * (i - 90) as f64
        };
        latency.record_us((lat_ms * f * 1000.0).round().max(1.0) as u64);
    }
    let samples = (0..intervals)
        .map(|i| {
            // A deterministic wobble: a slow wave plus a dip in the middle.
            let w = 1.0
                + wobble * ((i as f64 * 0.9).sin() - if i == intervals / 2 { 1.5 } else { 0.0 });
            IntervalSample {
                t_s: (i + 1) as f64,
                threads: clients,
                tps: qps / 20.0 * w,
                qps: qps * w,
                reads_ps: qps * 0.7 * w,
                writes_ps: qps * 0.2 * w,
                other_ps: qps * 0.1 * w,
                latency_pct_ms: lat_ms * 1.3 / w,
                errors_ps: 0.0,
                reconnects_ps: 0.0,
                backlog: None,
            }
        })
        .collect();
    Measurements {
        threads: clients,
        key_distribution: KeyDistribution::Uniform,
        duration_s,
        transactions: total / 20,
        queries: QueryCounters {
            read,
            write,
            other: total - read - write,
        },
        ignored_errors: 0,
        reconnects: 0,
        fatal_errors: vec![],
        latency,
        intervals: samples,
        rate: None,
        percentile: 95.0,
        interrupted: false,
    }
}

fn begin(store: &mut Store, name: &str, plan_text: &str) -> Result<RunId, StoreError> {
    begin_kind(store, RunKind::Plan, name, Some(plan_text))
}

fn begin_kind(
    store: &mut Store,
    kind: RunKind,
    name: &str,
    plan_text: Option<&str>,
) -> Result<RunId, StoreError> {
    // Host facts as dbrig stores them (`dbrig_core::host::HostFacts`).
    let host = serde_json::json!({
        "hostname": "bench-1",
        "cpu_model": "Test CPU @ 2.00GHz",
        "logical_cpus": 8,
        "physical_cores": 4,
        "mem_total_bytes": 19_043_745_792u64,
        "mem_available_bytes": 12_884_901_888u64,
        "kernel": {"sysname": "Linux", "release": "6.1.0", "machine": "x86_64"},
        "os": "Debian GNU/Linux 12 (bookworm)",
        "cpu_governors": [],
        "busy_processes": [{"pid": 812, "name": "backup", "cpu_pct": 23.5}],
    });
    writer(store).begin_run(&NewRun {
        kind,
        name,
        started_at: at(0),
        options: &serde_json::json!({"trials": 6}),
        host: &host,
        dbrig_version: "0.1.0-test",
        command_line: &[
            "dbrig".to_owned(),
            "plan".to_owned(),
            format!("{name}.toml"),
        ],
        plan_text,
    })
}

/// Relative trial-to-trial noise of the demo, per trial number (1-based): small, except in
/// the unstable cell.
const JITTER: [f64; 6] = [0.990, 1.010, 1.000, 0.995, 1.005, 1.002];
const WILD: [f64; 6] = [0.80, 1.25, 1.00, 0.90, 1.15, 0.95];

/// The snapshot tests' run: the seeds' key-cache experiment in miniature. Configurations
/// `off` (baseline), `8`, `32`; workloads `oltp_read_only` and `update_index`; 1, 4 and 16
/// clients; 6 trials a cell. `8` is 5 % faster everywhere, `32` 3 % slower, and 12 % slower on
/// `update_index` at 16 clients. Exceptions, one each: a failed trial, an invalid trial
/// (server restart), an unstable cell (`8`, update_index, 4 clients), a cell with only 3
/// trials (`32`, oltp_read_only, 1 client: too few for a verdict).
pub fn demo_run(store: &mut Store) -> Result<RunId, StoreError> {
    let plan = "[plan]\nname = \"keycache\"\ntrials = 6\n\n\
                [[configuration]]\nname = \"off\"\n\n\
                [[configuration]]\nname = \"8\"\nserver_args = [\"--key_cache_partitions=8\"]\n\n\
                [[configuration]]\nname = \"32\"\nserver_args = [\"--key_cache_partitions=32\"]\n\n\
                # <script> & friends stay text in the HTML page\n";
    let run = begin(store, "keycache", plan)?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for (wi, workload) in ["oltp_read_only", "update_index"].into_iter().enumerate() {
        for clients in [1u32, 4, 16] {
            for (conf, version) in [
                ("off", "10.11.6-MariaDB"),
                ("8", "10.11.6-MariaDB-wl86"),
                ("32", "10.11.6-MariaDB-wl86"),
            ] {
                let key = format!("{conf}/{workload}/{clients}");
                let cell = writer(store).ensure_cell(
                    run,
                    &NewCell {
                        cell_key: &key,
                        configuration: conf,
                        workload,
                        clients,
                        options: &serde_json::json!({"table_size": 10000}),
                        target: "mysql://bench@127.0.0.1:3306/sbtest",
                    },
                )?;
                let base = if wi == 0 { 2000.0 } else { 900.0 } * (clients as f64).sqrt();
                let factor = match conf {
                    "8" => 1.05,
                    "32" if wi == 1 && clients == 16 => 0.88,
                    "32" => 0.97,
                    _ => 1.0,
                };
                let wild = conf == "8" && wi == 1 && clients == 4;
                let trials = if conf == "32" && wi == 0 && clients == 1 {
                    3
                } else {
                    6
                };
                for t in 1..=trials {
                    let jitter = if wild { WILD[t - 1] } else { JITTER[t - 1] };
                    let qps = (base * factor * jitter * 100.0).round() / 100.0;
                    let lat = 1.5 * clients as f64 / factor.powi(2) / jitter;
                    let m = measurements(clients, qps, lat, 10, 0.04);
                    let (status, reason, m) = match (conf, wi, clients, t) {
                        ("8", 1, 16, 2) => (
                            TrialStatus::Failed,
                            Some("client 3: lost connection to server"),
                            None,
                        ),
                        ("32", 0, 16, 5) => (
                            TrialStatus::Invalid,
                            Some("server restarted during the trial"),
                            Some(&m),
                        ),
                        _ => (TrialStatus::Done, None, Some(&m)),
                    };
                    writer(store).record_trial(
                        cell,
                        &NewTrial {
                            trial: t as u32,
                            status,
                            reason,
                            server_version: Some(version),
                            started_at: at(clock),
                            finished_at: at(clock + 10),
                            measurements: m,
                            result: m.map(|_| &oltp),
                            environment: None,
                        },
                    )?;
                    clock += 12;
                    // The failed attempt was repeated and succeeded (as --resume would).
                    if status == TrialStatus::Failed {
                        let m = measurements(clients, qps, lat, 10, 0.04);
                        writer(store).record_trial(
                            cell,
                            &NewTrial {
                                trial: t as u32,
                                status: TrialStatus::Done,
                                reason: None,
                                server_version: Some(version),
                                started_at: at(clock),
                                finished_at: at(clock + 10),
                                measurements: Some(&m),
                                result: Some(&oltp),
                                environment: None,
                            },
                        )?;
                        clock += 12;
                    }
                }
            }
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// `plans/sqlite-quick.toml` as stored: configurations `prepared` (baseline) and `text`,
/// `oltp_point_select` and `oltp_read_write` at 1 and 4 clients, `trials` trials a cell, text
/// `speedup` times prepared's QPS with a little noise; the resolved plan's `[report]` table is
/// `report` (`{"correction": "holm"}`, say).
pub fn quick_run(
    store: &mut Store,
    trials: usize,
    speedup: f64,
    report: serde_json::Value,
) -> Result<RunId, StoreError> {
    let run = writer(store).begin_run(&NewRun {
        kind: RunKind::Plan,
        name: "sqlite-quick",
        started_at: at(0),
        options: &serde_json::json!({"trials": trials, "report": report}),
        host: &serde_json::json!({}),
        dbrig_version: "0.1.0-test",
        command_line: &[],
        plan_text: Some("name = \"sqlite-quick\"\n"),
    })?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for workload in ["oltp_point_select", "oltp_read_write"] {
        for clients in [1u32, 4] {
            for (conf, factor) in [("prepared", 1.0), ("text", speedup)] {
                let cell = writer(store).ensure_cell(
                    run,
                    &NewCell {
                        cell_key: &format!("{conf}/{workload}/{clients}"),
                        configuration: conf,
                        workload,
                        clients,
                        options: &serde_json::json!({}),
                        target: "sqlite:dbrig-out/quick.sqlite",
                    },
                )?;
                for t in 0..trials {
                    let qps = 10_000.0 * f64::from(clients) * factor * JITTER[t % JITTER.len()];
                    let m = measurements(clients, qps, 0.1, 3, 0.01);
                    writer(store).record_trial(
                        cell,
                        &NewTrial {
                            trial: t as u32 + 1,
                            status: TrialStatus::Done,
                            reason: None,
                            server_version: Some("SQLite 3.46.0"),
                            started_at: at(clock),
                            finished_at: at(clock + 3),
                            measurements: Some(&m),
                            result: Some(&oltp),
                            environment: None,
                        },
                    )?;
                    clock += 4;
                }
            }
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// A single-configuration run of one workload (for `compare` tests): `scale` multiplies the
/// throughput.
pub fn single_run(store: &mut Store, name: &str, scale: f64) -> Result<RunId, StoreError> {
    let run = begin(store, name, "")?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for clients in [1u32, 8] {
        let key = format!("default/oltp_point_select/{clients}");
        let cell = writer(store).ensure_cell(
            run,
            &NewCell {
                cell_key: &key,
                configuration: "default",
                workload: "oltp_point_select",
                clients,
                options: &serde_json::json!({}),
                target: "sqlite:bench.db",
            },
        )?;
        for (t, j) in JITTER.iter().enumerate() {
            let m = measurements(clients, 5000.0 * clients as f64 * scale * j, 0.2, 5, 0.02);
            writer(store).record_trial(
                cell,
                &NewTrial {
                    trial: t as u32 + 1,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some("3.46.0"),
                    started_at: at(clock),
                    finished_at: at(clock + 10),
                    measurements: Some(&m),
                    result: Some(&oltp),
                    environment: None,
                },
            )?;
            clock += 12;
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// A large plan run for timing: `configurations` × `workloads` × `clients` cells with
/// `trials` trials each and `intervals` samples per trial.
pub fn scale_run(
    store: &mut Store,
    configurations: usize,
    workloads: usize,
    clients: usize,
    trials: usize,
    intervals: usize,
) -> Result<RunId, StoreError> {
    let run = begin(store, "scale", "[plan]\nname = \"scale\"\n")?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    let mut n = 0u64;
    for w in 0..workloads {
        let workload = format!("workload_{w:02}");
        for c in 0..clients {
            let count = (c as u32 + 1).pow(2);
            for k in 0..configurations {
                let conf = format!("conf{k}");
                let key = format!("{conf}/{workload}/{count}");
                let cell = writer(store).ensure_cell(
                    run,
                    &NewCell {
                        cell_key: &key,
                        configuration: &conf,
                        workload: &workload,
                        clients: count,
                        options: &serde_json::json!({}),
                        target: "sqlite:bench.db",
                    },
                )?;
                for t in 0..trials {
                    n += 1;
                    // Cheap deterministic noise (a Weyl sequence), ±2 %.
                    let noise = ((n as f64 * 0.618_033_988_75).fract() - 0.5) * 0.04;
                    let qps =
                        1000.0 * (1.0 + c as f64).sqrt() * (1.0 + 0.03 * k as f64) * (1.0 + noise);
                    let m = measurements(count, qps, 1.0 + c as f64 * 0.3, intervals, 0.03);
                    writer(store).record_trial(
                        cell,
                        &NewTrial {
                            trial: t as u32 + 1,
                            status: TrialStatus::Done,
                            reason: None,
                            server_version: Some("11.4.2-MariaDB"),
                            started_at: at(clock),
                            finished_at: at(clock + 10),
                            measurements: Some(&m),
                            result: Some(&oltp),
                            environment: None,
                        },
                    )?;
                    clock += 12;
                }
            }
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

// ---- typed results of every kind ----------------------------------------------------------------

/// What an OLTP trial stores beside its measurements: per-statement latency, the schedule.
pub fn oltp_result(warmup_s: f64) -> TrialResult {
    let l = |avg: f64| LatencySummary {
        min: avg * 0.5,
        avg,
        max: avg * 4.0,
        p50: avg * 0.9,
        p90: avg * 1.4,
        p95: avg * 1.6,
        p99: avg * 2.5,
        p999: avg * 3.5,
        sum: avg * 1000.0,
    };
    TrialResult::Oltp(OltpResult {
        statements: vec![
            StatementLatency {
                statement: "point_select".into(),
                count: 10_000,
                latency_ms: l(0.125),
            },
            StatementLatency {
                statement: "commit".into(),
                count: 1_000,
                latency_ms: l(0.5),
            },
        ],
        schedule: "closed loop".into(),
        warmup_s,
        notes: Vec::new(),
        clients: vec![
            ClientWork {
                events: 5_200,
                busy_s: 9.5,
            },
            ClientWork {
                events: 4_800,
                busy_s: 9.25,
            },
        ],
        ..Default::default()
    })
}

/// One timed TPC-H step; a failed one says why.
pub fn step(name: &str, time_us: u64, status: QueryStatus) -> QueryOutcome {
    QueryOutcome {
        name: name.to_owned(),
        time_us,
        rows: 4,
        status,
        error: match status {
            QueryStatus::Ok => None,
            QueryStatus::Error => Some("Table 'test.partsupp' doesn't exist".into()),
            QueryStatus::Wrong => Some("row 1 column 2: 17.5 vs 18.25".into()),
            QueryStatus::Timeout => {
                Some("timed out after 2.000 s: the statement was cancelled on the server".into())
            }
        },
        result: Vec::new(),
        detail: None,
        answer_checked: None,
        os: None,
    }
}

/// A step with the launcher controls' record: measured runs of `runs` µs (and a warm-up),
/// reduced to their mean.
pub fn with_detail(mut q: QueryOutcome, runs: &[u64], timeout: Option<f64>) -> QueryOutcome {
    let ok = q.status == QueryStatus::Ok;
    let records = runs
        .iter()
        .enumerate()
        .map(|(i, &m)| RunRecord {
            run: i as u32 + 1,
            warmup: false,
            time_us: m,
            rows: 4,
            status: q.status,
            error: None,
            plan: Some("p1".into()),
            restarted: false,
            caches_dropped: false,
            skipped: false,
            os: None,
        })
        .chain(std::iter::once(RunRecord {
            run: 0,
            warmup: true,
            time_us: 1,
            rows: 4,
            status: QueryStatus::Ok,
            error: None,
            plan: None,
            restarted: false,
            caches_dropped: false,
            skipped: false,
            os: None,
        }))
        .collect();
    q.detail = Some(Box::new(QueryDetail {
        reduction: Reduction::SimpleAverage,
        runs: records,
        min_us: ok.then(|| runs.iter().min().copied()).flatten(),
        max_us: ok.then(|| runs.iter().max().copied()).flatten(),
        mean_us: ok.then(|| runs.iter().sum::<u64>() / runs.len().max(1) as u64),
        max_timed_out: q.status == QueryStatus::Timeout,
        timeout_s: timeout,
        params: vec![],
        plans: BTreeMap::from([("p1".to_owned(), "SCAN lineitem".to_owned())]),
        chosen_plan: None,
        skipped: 0,
        restarts: 0,
        hooks: vec![],
        notes: vec![],
    }));
    q
}

/// A power report at SF 0.01 of `queries` (no refresh functions).
pub fn power_report(
    version: &str,
    queries: Vec<QueryOutcome>,
    power_at_size: Option<f64>,
) -> PowerReport {
    PowerReport {
        scale_factor: 0.01,
        refresh_set: None,
        server_version: version.to_owned(),
        rf1: None,
        queries,
        rf2: None,
        power_at_size,
    }
}

/// Six queries of stream 0's order at SF 0.01 (seconds `speed` times the baseline's), the
/// refresh functions, and Power@Size computed as TPC-H defines it.
pub fn tpch_power(version: &str, speed: f64) -> PowerReport {
    let times = [
        ("14", 0.05),
        ("2", 0.2),
        ("9", 0.9),
        ("20", 0.3),
        ("6", 0.04),
        ("1", 1.2),
    ];
    let us = |s: f64| (s / speed * 1e6).round() as u64;
    let queries: Vec<QueryOutcome> = times
        .iter()
        .map(|&(n, s)| {
            let m = us(s);
            with_detail(step(n, m, QueryStatus::Ok), &[m, m + 500, m - 500], None)
        })
        .collect();
    let mut r = power_report(version, queries, None);
    r.refresh_set = Some(1);
    r.rf1 = Some(step("RF1", us(0.02), QueryStatus::Ok));
    r.rf2 = Some(step("RF2", us(0.01), QueryStatus::Ok));
    let logs: Vec<f64> = r.steps().map(|q| q.seconds().ln()).collect();
    let geo = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    r.power_at_size = Some(3600.0 * r.scale_factor / geo);
    r
}

/// Two query streams of the same six queries and one refresh pair per stream.
pub fn tpch_throughput(version: &str, speed: f64) -> ThroughputReport {
    let times = [
        ("1", 1.3),
        ("14", 0.06),
        ("2", 0.25),
        ("6", 0.05),
        ("9", 1.0),
        ("20", 0.35),
    ];
    let us = |s: f64| (s / speed * 1e6).round() as u64;
    let streams: Vec<StreamReport> = (1..=2u32)
        .map(|s| {
            let queries: Vec<QueryOutcome> = times
                .iter()
                .map(|&(n, t)| step(n, us(t * (1.0 + 0.1 * f64::from(s))), QueryStatus::Ok))
                .collect();
            StreamReport {
                stream: s,
                duration_s: queries.iter().map(QueryOutcome::seconds).sum(),
                queries,
                aborted: None,
            }
        })
        .collect();
    let ts = streams.iter().map(|s| s.duration_s).fold(0.0, f64::max);
    let sf = 0.01;
    ThroughputReport {
        scale_factor: sf,
        streams: 2,
        server_version: version.to_owned(),
        params: ParamMode::Random { seed: 1 },
        timeout_s: None,
        ts_s: ts,
        refresh_stream: Some(RefreshStreamReport {
            duration_s: 0.1 / speed,
            pairs: (1..=2)
                .map(|set| RefreshPair {
                    refresh_set: set,
                    rf1: step("RF1", us(0.03), QueryStatus::Ok),
                    rf2: Some(step("RF2", us(0.02), QueryStatus::Ok)),
                })
                .collect(),
            aborted: None,
        }),
        query_streams: streams,
        throughput_at_size: Some(2.0 * 22.0 * 3600.0 / ts * sf),
        failure: None,
        power_run: None,
        power_at_size: None,
        qphh_at_size: None,
    }
}

fn micro(benchmark: &str, version: &str, rows: u64, items: Vec<MicroItem>) -> MicroResult {
    MicroResult {
        benchmark: benchmark.to_owned(),
        dialect: "mysql".into(),
        server_version: version.to_owned(),
        engine: Some("MEMORY".into()),
        rows,
        runs: 3,
        seed: 1,
        cpu_mhz: Some(2000.0),
        settings: vec!["max_heap_table_size = 1073741824".into()],
        items,
        skipped: vec![],
    }
}

/// Seed 000: loads of INT and CHAR(20) keys in rows/s, with MB/s and cycles per row.
pub fn memory_load(version: &str, speed: f64) -> MicroResult {
    let rows = 100_000;
    let item = |name: &str, rps: f64, bytes: u64| {
        let secs: Vec<f64> = [1.0, 1.02, 0.98]
            .iter()
            .map(|j| rows as f64 / (rps * speed) * j)
            .collect();
        let values = secs.iter().map(|s| rows as f64 / s).collect();
        MicroItem::new(name, "t1", "rows/s", values, secs, rows)
            .with_rates(Some(bytes), Some(2000.0))
    };
    micro(
        "memory_load",
        version,
        rows,
        vec![
            item("INT", 500_000.0, 3_200_000),
            item("CHAR(20)", 400_000.0, 6_400_000),
        ],
    )
}

/// Seed 004: a scan in rows/s and an in-cache loop in ms per query.
pub fn scan_filter(version: &str, speed: f64) -> MicroResult {
    let rows = 1_000_000;
    let scan_s: Vec<f64> = [0.1, 0.102, 0.098].iter().map(|s| s / speed).collect();
    let scan = MicroItem::new(
        "count(*) WHERE i>0",
        "SELECT count(*) FROM m WHERE i>0",
        "rows/s",
        scan_s.iter().map(|s| rows as f64 / s).collect(),
        scan_s,
        rows,
    )
    .with_rates(Some(13_000_000), Some(2000.0));
    let loop_s: Vec<f64> = [0.35, 0.36, 0.34].iter().map(|s| s / speed).collect();
    let mut cached = MicroItem::new(
        "in-cache loop x1000",
        "SELECT count(*) FROM m1 WHERE i>0",
        "ms/query",
        loop_s.clone(),
        // 1000 queries of `ms` each take `ms` seconds.
        loop_s,
        10_000_000,
    )
    .with_rates(Some(130_000), Some(2000.0));
    cached.answer = Some("6667".into());
    micro("scan_filter", version, rows, vec![scan, cached])
}

/// Seed 003: GROUP BY queries through temporary tables, seconds per query.
pub fn tmp_groupby(version: &str, speed: f64) -> MicroResult {
    let rows = 2_097_152;
    let item = |name: &str, s: f64| {
        let secs: Vec<f64> = [1.0, 1.01, 0.99].iter().map(|j| s / speed * j).collect();
        MicroItem::new(
            name,
            "SELECT id, tea FROM t1 GROUP BY left(id,1)",
            "s",
            secs.clone(),
            secs,
            rows,
        )
    };
    micro(
        "tmp_groupby",
        version,
        rows,
        vec![item("Q1", 6.24), item("Q2", 5.21), item("Q3", 12.89)],
    )
}

/// One perfrun side: `q1.sql` (slower by `slow`, reading `rnd` rows by position) and `q2.sql`
/// (fast, under a millisecond: a filter on execution time leaves it out).
pub fn perfrun_side(version: &str, target: &str, slow: f64, rnd: f64) -> PerfrunResult {
    let exec = |us: u64, counters: &[(&str, f64)]| Execution {
        time_us: Some(us),
        rows: Some(3),
        checksum: Some("c1".into()),
        checksum_unordered: Some("u1".into()),
        counters: counters
            .iter()
            .filter(|(_, v)| *v != 0.0)
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        error: None,
        counter_error: None,
        answer: None,
    };
    let q1 = |us: f64| {
        exec(
            (us * slow) as u64,
            &[
                ("Handler_read_rnd", rnd),
                ("Handler_read_next", 583.0),
                ("Innodb_rows_read", 1166.0),
            ],
        )
    };
    PerfrunResult {
        server: SideInfo {
            target: target.to_owned(),
            version: version.to_owned(),
            dialect: "mysql".into(),
            counters: vec![
                "Handler_read_rnd".into(),
                "Handler_read_next".into(),
                "Innodb_rows_read".into(),
            ],
        },
        source: "queries".into(),
        note: None,
        queries: vec![
            PerfQuery {
                file: "q1.sql".into(),
                sql: "SELECT l_linenumber\nFROM lineitem WHERE l_orderkey < 100".into(),
                cold: q1(40_000.0),
                warm: q1(11_400.0),
            },
            PerfQuery {
                file: "q2.sql".into(),
                sql: "SELECT 40 + 2 AS answer".into(),
                cold: exec(400, &[]),
                warm: exec(300, &[]),
            },
        ],
    }
}

/// OS samples every second for `n` seconds, with the server process.
pub fn os_samples(n: usize, load: f64) -> Vec<OsSample> {
    const MIB: f64 = 1024.0 * 1024.0;
    (1..=n)
        .map(|t| OsSample {
            t_s: t as f64,
            cpu_user_pct: 30.0 * load + t as f64,
            cpu_system_pct: 8.0 * load,
            cpu_iowait_pct: 1.0,
            cpu_idle_pct: 60.0,
            disk_read_bytes_per_s: 0.5 * MIB,
            disk_write_bytes_per_s: 3.0 * MIB * load,
            mem_used_bytes: (2048.0 * MIB) as u64,
            mem_available_bytes: (6144.0 * MIB) as u64,
            process_cpu_pct: Some(120.0 * load),
            process_rss_bytes: Some((300.0 * MIB) as u64),
        })
        .collect()
}

/// The environment a trial records: its seed and OS samples.
/// A MariaDB's variables as a trial stores them: `B` flushes the log once a second
/// (`innodb_flush_log_at_trx_commit=2`: relaxed durability) and has a larger buffer pool; each
/// listens on its own port (an instance setting, never "a difference").
pub fn server_settings(configuration: &str, version: &str) -> ServerSettings {
    let b = configuration == "B";
    let vars = [
        (
            "innodb_buffer_pool_size",
            if b { "268435456" } else { "134217728" },
        ),
        ("innodb_flush_log_at_trx_commit", if b { "2" } else { "1" }),
        ("innodb_doublewrite", "ON"),
        ("log_bin", "OFF"),
        ("sync_binlog", "0"),
        ("max_connections", "151"),
        ("port", if b { "3307" } else { "3306" }),
        ("thread_handling", "one-thread-per-connection"),
    ];
    ServerSettings {
        version: version.to_owned(),
        binary: Some("/usr/sbin/mariadbd".to_owned()),
        variable_count: vars.len(),
        variables: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

pub fn environment(seed: u64, samples: usize, load: f64) -> TrialEnvironment {
    TrialEnvironment {
        seed,
        os_samples: os_samples(samples, load),
        ..TrialEnvironment::default()
    }
}

/// Cell options as the executor stores them.
pub fn cell_options(
    configuration: &str,
    target: &str,
    workload: &str,
    label: Option<&str>,
    filter: Option<&str>,
) -> serde_json::Value {
    let mut v = serde_json::json!({
        "configuration": configuration,
        "target": target,
        "workload": workload,
        "label": label,
        "workload_options": {"table_size": 10000, "tables": 1},
        "run": {"threads": 4, "time": 10.0, "warmup": 1.0, "rate": 0.0},
    });
    if workload == "perfrun" {
        v["filter"] = serde_json::json!(filter);
    }
    v
}

/// A cell of `run` as the executor stores it.
fn new_cell(
    store: &mut Store,
    run: RunId,
    configuration: &str,
    workload: &str,
    label: Option<&str>,
    clients: u32,
    filter: Option<&str>,
) -> Result<CellId, StoreError> {
    let target = format!(
        "mysql://bench@127.0.0.1:3306/{}",
        configuration.to_lowercase()
    );
    let name = label.unwrap_or(workload);
    writer(store).ensure_cell(
        run,
        &NewCell {
            cell_key: &format!("{configuration}/{name}/{clients}"),
            configuration,
            workload: name,
            clients,
            options: &cell_options(configuration, &target, workload, label, filter),
            target: &target,
        },
    )
}

/// What one finished trial stores.
struct Measured<'a> {
    version: &'a str,
    measurements: Option<&'a Measurements>,
    result: &'a TrialResult,
    environment: Option<&'a TrialEnvironment>,
}

impl<'a> Measured<'a> {
    fn result(version: &'a str, result: &'a TrialResult) -> Self {
        Measured {
            version,
            measurements: None,
            result,
            environment: None,
        }
    }
}

/// Record trial number `trial` of `cell`, ten seconds long, done.
fn done(
    store: &mut Store,
    cell: CellId,
    trial: u32,
    clock: &mut u64,
    m: &Measured<'_>,
) -> Result<(), StoreError> {
    writer(store).record_trial(
        cell,
        &NewTrial {
            trial,
            status: TrialStatus::Done,
            reason: None,
            server_version: Some(m.version),
            started_at: at(*clock),
            finished_at: at(*clock + 10),
            measurements: m.measurements,
            result: Some(m.result),
            environment: m.environment,
        },
    )?;
    *clock += 12;
    Ok(())
}

/// A plan mixing every kind, in plan order: `oltp_read_only` at 1 and 4 clients,
/// `memory_load`, `tmp_groupby` labelled `groupby`, `tpch_power`, `tpch_throughput` and
/// `perfrun`, on configurations `A` (baseline) and `B` (10 % faster everywhere, and reading
/// no rows by position in the perfrun). OLTP and micro cells have 4 trials (enough for
/// verdicts), TPC-H and perfrun one. OLTP and power trials sampled OS statistics.
pub fn mixed_plan(store: &mut Store) -> Result<RunId, StoreError> {
    let run = begin(store, "mixed", "[plan]\nname = \"mixed\"\n")?;
    let versions = [("A", "10.11.6-MariaDB", 1.0), ("B", "11.4.2-MariaDB", 1.1)];
    let mut clock = 10;
    let oltp = oltp_result(1.0);
    for clients in [1u32, 4] {
        for (conf, version, speed) in versions {
            let cell = new_cell(store, run, conf, "oltp_read_only", None, clients, None)?;
            for t in 1..=4u32 {
                let qps = 2000.0 * f64::from(clients).sqrt() * speed * JITTER[t as usize - 1];
                let m = measurements(clients, qps, 1.5 / speed, 5, 0.03);
                let env = TrialEnvironment {
                    server_settings: Some(server_settings(conf, version)),
                    // The first trial of each cell ran a plan hook.
                    hooks: if t == 1 {
                        vec![HookOutput {
                            hook: "before-trial".into(),
                            scope: "plan".into(),
                            command: "echo 3 > /proc/sys/vm/drop_caches && free -m".into(),
                            exit_code: Some(0),
                            output: format!("Mem: 16384 {} used\n", 900 + clients),
                            timed_out: false,
                        }]
                    } else {
                        Vec::new()
                    },
                    ..environment(42, 5, speed)
                };
                let trial = Measured {
                    measurements: Some(&m),
                    environment: Some(&env),
                    ..Measured::result(version, &oltp)
                };
                done(store, cell, t, &mut clock, &trial)?;
            }
        }
    }
    type Micro = fn(&str, f64) -> MicroResult;
    let micros: [(&str, Option<&str>, Micro); 2] = [
        ("memory_load", None, memory_load),
        ("tmp_groupby", Some("groupby"), tmp_groupby),
    ];
    for (workload, label, make) in micros {
        for (conf, version, speed) in versions {
            let cell = new_cell(store, run, conf, workload, label, 1, None)?;
            for t in 1..=4u32 {
                let r = TrialResult::Micro(make(version, speed * JITTER[t as usize - 1]));
                done(store, cell, t, &mut clock, &Measured::result(version, &r))?;
            }
        }
    }
    for (conf, version, speed) in versions {
        let cell = new_cell(store, run, conf, "tpch_power", None, 1, None)?;
        let r = TrialResult::TpchPower(tpch_power(version, speed));
        let env = environment(0, 4, speed);
        let trial = Measured {
            environment: Some(&env),
            ..Measured::result(version, &r)
        };
        done(store, cell, 1, &mut clock, &trial)?;
    }
    for (conf, version, speed) in versions {
        let cell = new_cell(store, run, conf, "tpch_throughput", None, 2, None)?;
        let r = TrialResult::TpchThroughput(tpch_throughput(version, speed));
        done(store, cell, 1, &mut clock, &Measured::result(version, &r))?;
    }
    for (conf, version, speed) in versions {
        let cell = new_cell(store, run, conf, "perfrun", None, 1, None)?;
        let target = format!("mysql://bench@127.0.0.1:3306/{}", conf.to_lowercase());
        let rnd = if conf == "A" { 583.0 } else { 0.0 };
        let r = TrialResult::Perfrun(perfrun_side(version, &target, 1.0 / speed, rnd));
        done(store, cell, 1, &mut clock, &Measured::result(version, &r))?;
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// The runs single commands store, one of each kind.
#[derive(Debug, Clone, Copy)]
pub struct SingleRuns {
    /// `dbrig run oltp_read_only` at 4 clients, with interval samples and statements.
    pub oltp: RunId,
    /// `dbrig micro scan_filter`: rows/s, MB/s, cycles/row and ms per query.
    pub micro: RunId,
    /// `dbrig tpch power` with the launcher's runs per query.
    pub power: RunId,
    /// `dbrig tpch throughput --power-run` (carrying Power@Size and QphH@Size).
    pub throughput: RunId,
    /// `dbrig perfrun --a --b --filter`: two cells, the filter keeps `q1.sql` only.
    pub perfrun: RunId,
}

/// The filter the single perfrun run was collected with.
pub const PERFRUN_FILTER: &str = "execution_time_a > 0.001 or execution_time_b > 0.001";

fn single(
    store: &mut Store,
    kind: RunKind,
    workload: &str,
    clients: u32,
    clock: &mut u64,
    trial: &Measured<'_>,
) -> Result<RunId, StoreError> {
    let run = begin_kind(store, kind, workload, None)?;
    let cell = new_cell(store, run, "default", workload, None, clients, None)?;
    done(store, cell, 1, clock, trial)?;
    writer(store).finish_run_at(run, RunStatus::Done, None, at(*clock))?;
    Ok(run)
}

/// One run of every single command, as each stores it.
pub fn single_runs(store: &mut Store) -> Result<SingleRuns, StoreError> {
    const VERSION: &str = "10.11.6-MariaDB";
    let mut clock = 10;
    let m = measurements(4, 4000.0, 2.0, 5, 0.03);
    let env = environment(42, 5, 1.0);
    let oltp_r = oltp_result(1.0);
    let oltp = single(
        store,
        RunKind::Oltp,
        "oltp_read_only",
        4,
        &mut clock,
        &Measured {
            measurements: Some(&m),
            environment: Some(&env),
            ..Measured::result(VERSION, &oltp_r)
        },
    )?;
    let r = TrialResult::Micro(scan_filter(VERSION, 1.0));
    let micro = single(
        store,
        RunKind::Micro,
        "scan_filter",
        1,
        &mut clock,
        &Measured::result(VERSION, &r),
    )?;
    let p = tpch_power(VERSION, 1.0);
    let power_at_size = p.power_at_size;
    let r = TrialResult::TpchPower(p);
    let power = single(
        store,
        RunKind::TpchPower,
        "tpch_power",
        1,
        &mut clock,
        &Measured::result(VERSION, &r),
    )?;
    let mut t = tpch_throughput(VERSION, 1.0);
    t.power_run = Some(power.0);
    t.power_at_size = power_at_size;
    t.qphh_at_size = power_at_size
        .zip(t.throughput_at_size)
        .map(|(p, t)| dbrig_core::results::tpch::qphh_at_size(p, t));
    let r = TrialResult::TpchThroughput(t);
    let throughput = single(
        store,
        RunKind::TpchThroughput,
        "tpch_throughput",
        2,
        &mut clock,
        &Measured::result(VERSION, &r),
    )?;
    let perfrun = begin_kind(store, RunKind::Perfrun, "queries", None)?;
    for (side, version, slow, rnd) in [
        ("a", "10.11.6-MariaDB", 1.0, 583.0),
        ("b", "10.6.1-MariaDB", 0.4, 0.0),
    ] {
        let cell = new_cell(
            store,
            perfrun,
            side,
            "perfrun",
            None,
            1,
            Some(PERFRUN_FILTER),
        )?;
        let target = format!("mysql://bench@127.0.0.1:3306/{side}");
        let r = TrialResult::Perfrun(perfrun_side(version, &target, slow, rnd));
        done(store, cell, 1, &mut clock, &Measured::result(version, &r))?;
    }
    writer(store).finish_run_at(perfrun, RunStatus::Done, None, at(clock))?;
    Ok(SingleRuns {
        oltp,
        micro,
        power,
        throughput,
        perfrun,
    })
}

/// A plan run whose trials carry evidence (`TrialEnvironment::evidence`): baseline `small`
/// and `large` (a buffer pool too small for the data in `small`), 6 trials each of
/// `oltp_read_only` at 4 clients. `small` reads pages from disk and waits on data-file I/O;
/// `large` serves them from memory at a third of the server CPU per transaction.
pub fn explain_run(store: &mut Store) -> Result<RunId, StoreError> {
    use dbrig_core::results::{
        CounterInterval, CounterSeries, TrialEvidence, WaitSamples, WorkCpu,
    };
    let run = begin(store, "explain", "")?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for (conf, speed) in [("small", 1.0), ("large", 3.0)] {
        let cell = writer(store).ensure_cell(
            run,
            &NewCell {
                cell_key: conf,
                configuration: conf,
                workload: "oltp_read_only",
                clients: 4,
                options: &serde_json::json!({}),
                target: "mysql://bench@127.0.0.1:3306/sbtest",
            },
        )?;
        for t in 1..=6usize {
            let jitter = JITTER[t - 1];
            let m = measurements(4, 3000.0 * speed * jitter, 4.0 / speed, 10, 0.02);
            let units = m.transactions;
            let per = |x: f64| (x * units as f64 * jitter).round();
            let mut total = BTreeMap::new();
            total.insert("Innodb_buffer_pool_read_requests".to_owned(), per(70.0));
            total.insert("Innodb_buffer_pool_reads".to_owned(), per(12.0 / speed));
            total.insert("Innodb_data_read".to_owned(), per(196_608.0 / speed));
            total.insert("Handler_read_key".to_owned(), per(10.0));
            let half: BTreeMap<String, f64> =
                total.iter().map(|(k, v)| (k.clone(), v / 2.0)).collect();
            let counts = if conf == "small" {
                [("wait/io/file/innodb/innodb_data_file", 300), ("CPU", 90)]
            } else {
                [("wait/io/file/innodb/innodb_data_file", 12), ("CPU", 370)]
            };
            let evidence = TrialEvidence {
                cpu: Some(WorkCpu {
                    unit: "transaction".into(),
                    units,
                    interval_s: m.duration_s,
                    server_cpu_s: Some(units as f64 * 450e-6 / speed * jitter),
                    server_pid: Some(4242),
                    client_cpu_s: Some(units as f64 * 60e-6 * jitter),
                    client_peak_rss_bytes: None,
                }),
                counters: Some(CounterSeries {
                    sources: vec!["SHOW GLOBAL STATUS".into()],
                    intervals: vec![
                        CounterInterval {
                            t_s: 5.0,
                            deltas: half.clone(),
                        },
                        CounterInterval {
                            t_s: 10.0,
                            deltas: half,
                        },
                    ],
                    total,
                }),
                waits: Some(WaitSamples {
                    source: "performance_schema.events_waits_current".into(),
                    interval_ms: 50,
                    samples: 100,
                    counts: counts
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v as f64 * jitter).round() as u64))
                        .collect(),
                }),
                profile: None,
                notes: Vec::new(),
                switched_off: false,
            };
            writer(store).record_trial(
                cell,
                &NewTrial {
                    trial: t as u32,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some("10.11.6-MariaDB"),
                    started_at: at(clock),
                    finished_at: at(clock + 10),
                    measurements: Some(&m),
                    result: Some(&oltp),
                    environment: Some(&TrialEnvironment {
                        evidence: Some(evidence),
                        ..TrialEnvironment::default()
                    }),
                },
            )?;
            clock += 12;
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// A MariaDB and a PostgreSQL compared (`mariadb` the baseline, `postgres`), 6 trials each of
/// `oltp_read_only` at 1 and 16 clients, with every server variable as trials store them
/// (hundreds, paths, ports, ids and a long `optimizer_switch` among them) and each engine's
/// own counters. PostgreSQL's server CPU per transaction is 16.9 % above MariaDB's at 1 client
/// and 23 % below it at 16.
pub fn engines_run(store: &mut Store) -> Result<RunId, StoreError> {
    use dbrig_core::results::{CounterSeries, TrialEvidence, WorkCpu};
    let run = begin(store, "engines", "")?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for clients in [1u32, 16] {
        for conf in ["mariadb", "postgres"] {
            let pg = conf == "postgres";
            let target = if pg {
                "postgres://bench@127.0.0.1:5432/sbtest"
            } else {
                "mysql://bench@127.0.0.1:3306/sbtest"
            };
            let cell = writer(store).ensure_cell(
                run,
                &NewCell {
                    cell_key: &format!("{conf}/{clients}"),
                    configuration: conf,
                    workload: "oltp_read_only",
                    clients,
                    options: &serde_json::json!({}),
                    target,
                },
            )?;
            let cpu_factor = match (pg, clients) {
                (false, _) => 1.0,
                (true, 1) => 1.169,
                (true, _) => 0.77,
            };
            let settings = engine_settings(pg);
            for t in 1..=6usize {
                let jitter = JITTER[t - 1];
                let m = measurements(clients, 2000.0 * f64::from(clients), 1.0, 10, 0.02);
                let units = m.transactions;
                let per = |x: f64| (x * units as f64 * jitter).round();
                let total: BTreeMap<String, f64> = if pg {
                    [
                        ("blks_hit", 70.0),
                        ("xact_commit", 1.0),
                        ("tup_returned", 140.0),
                    ]
                } else {
                    [
                        ("Innodb_buffer_pool_read_requests", 70.0),
                        ("Com_commit", 1.0),
                        ("Innodb_rows_read", 140.0),
                    ]
                }
                .iter()
                .map(|(k, v)| ((*k).to_owned(), per(*v)))
                .collect();
                let evidence = TrialEvidence {
                    cpu: Some(WorkCpu {
                        unit: "transaction".into(),
                        units,
                        interval_s: m.duration_s,
                        server_cpu_s: Some(units as f64 * 300e-6 * cpu_factor * jitter),
                        server_pid: Some(4242),
                        client_cpu_s: Some(units as f64 * 60e-6 * jitter),
                        client_peak_rss_bytes: None,
                    }),
                    counters: Some(CounterSeries {
                        sources: vec![
                            if pg {
                                "pg_stat_database"
                            } else {
                                "SHOW GLOBAL STATUS"
                            }
                            .into(),
                        ],
                        intervals: Vec::new(),
                        total,
                    }),
                    ..TrialEvidence::default()
                };
                writer(store).record_trial(
                    cell,
                    &NewTrial {
                        trial: t as u32,
                        status: TrialStatus::Done,
                        reason: None,
                        server_version: Some(&settings.version),
                        started_at: at(clock),
                        finished_at: at(clock + 10),
                        measurements: Some(&m),
                        result: Some(&oltp),
                        environment: Some(&TrialEnvironment {
                            evidence: Some(evidence),
                            server_settings: Some(settings.clone()),
                            ..TrialEnvironment::default()
                        }),
                    },
                )?;
                clock += 12;
            }
        }
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// A server's variables as a trial stores them: a MariaDB's (`pg` false) or a PostgreSQL's,
/// several hundred each as real servers have, with the instance's paths, port and ids.
pub fn engine_settings(pg: bool) -> ServerSettings {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut set = |k: &str, v: &str| {
        vars.insert(k.to_owned(), v.to_owned());
    };
    if pg {
        for (k, v) in [
            ("shared_buffers", "128MB"),
            ("effective_cache_size", "4GB"),
            ("work_mem", "4MB"),
            ("maintenance_work_mem", "64MB"),
            ("wal_buffers", "4MB"),
            ("fsync", "on"),
            ("synchronous_commit", "on"),
            ("full_page_writes", "on"),
            ("wal_level", "replica"),
            ("max_wal_size", "1GB"),
            ("max_connections", "100"),
            ("port", "5432"),
            ("data_directory", "/var/lib/postgresql/16/main"),
            ("hba_file", "/etc/postgresql/16/main/pg_hba.conf"),
            ("unix_socket_directories", "/var/run/postgresql"),
        ] {
            set(k, v);
        }
        for i in 0..340 {
            set(&format!("pg_setting_{i:03}"), &format!("value {i}"));
        }
    } else {
        for (k, v) in [
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_log_buffer_size", "16777216"),
            ("key_buffer_size", "134217728"),
            ("tmp_table_size", "16777216"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("log_bin", "OFF"),
            ("sync_binlog", "0"),
            ("max_connections", "151"),
            ("port", "3306"),
            ("datadir", "/var/lib/mysql/"),
            ("socket", "/run/mysqld/mysqld.sock"),
            ("server_uuid", "1c2b3a4d-0000-11ee-8c99-0242ac120002"),
            ("plugin_dir", "/usr/lib/mysql/plugin/"),
            ("lc_messages_dir", "/usr/share/mysql"),
            ("basedir", "/usr"),
            ("pid_file", "/run/mysqld/mysqld.pid"),
            (
                "optimizer_switch",
                "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,index_merge_sort_intersection=off,engine_condition_pushdown=off,index_condition_pushdown=on,derived_merge=on,derived_with_keys=on,firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,partial_match_rowid_merge=on,partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,mrr_sort_keys=off,outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,join_cache_bka=on,optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,orderby_uses_equalities=on,condition_pushdown_for_derived=on,split_materialized=on,condition_pushdown_for_subquery=on,rowid_filter=on,condition_pushdown_from_having=on,not_null_range_scan=off,hash_join_cardinality=off,cset_narrowing=off",
            ),
        ] {
            set(k, v);
        }
        for i in 0..620 {
            set(&format!("maria_variable_{i:03}"), &format!("value {i}"));
        }
    }
    ServerSettings {
        version: if pg {
            "PostgreSQL 16.4 (Debian 16.4-1.pgdg120+1) on x86_64-pc-linux-gnu".to_owned()
        } else {
            "10.11.6-MariaDB-0+deb12u1 Debian 12".to_owned()
        },
        binary: None,
        variable_count: vars.len(),
        variables: vars,
    }
}

/// A run of one `oltp_point_select` trial per configuration, each with the server settings
/// given: what the settings tables are built from.
pub fn settings_run(
    store: &mut Store,
    configurations: &[(&str, ServerSettings)],
) -> Result<RunId, StoreError> {
    let run = begin(store, "settings", "")?;
    let oltp = oltp_result(0.0);
    let mut clock = 10;
    for (conf, settings) in configurations {
        let cell = new_cell(store, run, conf, "oltp_point_select", None, 1, None)?;
        let m = measurements(1, 1000.0, 1.0, 3, 0.01);
        let env = TrialEnvironment {
            server_settings: Some(settings.clone()),
            ..TrialEnvironment::default()
        };
        done(
            store,
            cell,
            1,
            &mut clock,
            &Measured {
                measurements: Some(&m),
                environment: Some(&env),
                ..Measured::result(&settings.version, &oltp)
            },
        )?;
    }
    writer(store).finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// [`one_trial_run`] with the trial's measurements stored too (throughput, latency,
/// intervals: what exports in other tools' layouts read).
pub fn one_measured_run(
    store: &mut Store,
    kind: RunKind,
    workload: &str,
    result: &TrialResult,
    measurements: &Measurements,
) -> Result<RunId, StoreError> {
    let mut clock = 10;
    single(
        store,
        kind,
        workload,
        1,
        &mut clock,
        &Measured {
            measurements: Some(measurements),
            ..Measured::result(result.server_version().unwrap_or("?"), result)
        },
    )
}

/// A single command's run of one trial of `workload` with `result` and `environment`, as the
/// executor stores it: what a test of one kind's report is built from.
pub fn one_trial_run(
    store: &mut Store,
    kind: RunKind,
    workload: &str,
    result: &TrialResult,
    environment: &TrialEnvironment,
) -> Result<RunId, StoreError> {
    let mut clock = 10;
    single(
        store,
        kind,
        workload,
        1,
        &mut clock,
        &Measured {
            environment: Some(environment),
            ..Measured::result(result.server_version().unwrap_or("?"), result)
        },
    )
}
