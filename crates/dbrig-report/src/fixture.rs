//! Results databases filled with made-up, fully deterministic measurements: the input of the
//! snapshot tests and of `bench/report-scale`. Public (but hidden from the docs) so the
//! integration tests and the `fill_store` example share one generator with the unit tests.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dbrig_core::{IntervalSample, KeyDistribution, LatencyHistogram, Measurements, QueryCounters};
use dbrig_store::{
    NewCell, NewRun, NewTrial, RunId, RunKind, RunStatus, Store, StoreError, TrialStatus,
};

/// A fixed point in time (2023-11-14T22:13:20Z), so stored timestamps never change.
fn at(offset_s: u64) -> SystemTime {
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
    let host = serde_json::json!({
        "hostname": "bench-1",
        "os": "Linux 6.1.0 x86_64",
        "cpu": {"model": "Test CPU @ 2.00GHz", "cores": 4, "threads": 8},
        "memory_mib": 16384,
        "governor": null,
    });
    store.begin_run(&NewRun {
        kind: RunKind::Plan,
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
        plan_text: Some(plan_text),
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
    let mut clock = 10;
    for (wi, workload) in ["oltp_read_only", "update_index"].into_iter().enumerate() {
        for clients in [1u32, 4, 16] {
            for (conf, version) in [
                ("off", "10.11.6-MariaDB"),
                ("8", "10.11.6-MariaDB-wl86"),
                ("32", "10.11.6-MariaDB-wl86"),
            ] {
                let key = format!("{conf}/{workload}/{clients}");
                let cell = store.ensure_cell(
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
                    store.record_trial(
                        cell,
                        &NewTrial {
                            trial: t as u32,
                            status,
                            reason,
                            server_version: Some(version),
                            started_at: at(clock),
                            finished_at: at(clock + 10),
                            measurements: m,
                            extra: None,
                        },
                    )?;
                    clock += 12;
                    // The failed attempt was repeated and succeeded (as --resume would).
                    if status == TrialStatus::Failed {
                        let m = measurements(clients, qps, lat, 10, 0.04);
                        store.record_trial(
                            cell,
                            &NewTrial {
                                trial: t as u32,
                                status: TrialStatus::Done,
                                reason: None,
                                server_version: Some(version),
                                started_at: at(clock),
                                finished_at: at(clock + 10),
                                measurements: Some(&m),
                                extra: None,
                            },
                        )?;
                        clock += 12;
                    }
                }
            }
        }
    }
    store.finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}

/// A single-configuration run of one workload (for `compare` tests): `scale` multiplies the
/// throughput.
pub fn single_run(store: &mut Store, name: &str, scale: f64) -> Result<RunId, StoreError> {
    let run = begin(store, name, "")?;
    let mut clock = 10;
    for clients in [1u32, 8] {
        let key = format!("default/oltp_point_select/{clients}");
        let cell = store.ensure_cell(
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
            store.record_trial(
                cell,
                &NewTrial {
                    trial: t as u32 + 1,
                    status: TrialStatus::Done,
                    reason: None,
                    server_version: Some("3.46.0"),
                    started_at: at(clock),
                    finished_at: at(clock + 10),
                    measurements: Some(&m),
                    extra: None,
                },
            )?;
            clock += 12;
        }
    }
    store.finish_run_at(run, RunStatus::Done, None, at(clock))?;
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
    let mut clock = 10;
    let mut n = 0u64;
    for w in 0..workloads {
        let workload = format!("workload_{w:02}");
        for c in 0..clients {
            let count = (c as u32 + 1).pow(2);
            for k in 0..configurations {
                let conf = format!("conf{k}");
                let key = format!("{conf}/{workload}/{count}");
                let cell = store.ensure_cell(
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
                    store.record_trial(
                        cell,
                        &NewTrial {
                            trial: t as u32 + 1,
                            status: TrialStatus::Done,
                            reason: None,
                            server_version: Some("11.4.2-MariaDB"),
                            started_at: at(clock),
                            finished_at: at(clock + 10),
                            measurements: Some(&m),
                            extra: None,
                        },
                    )?;
                    clock += 12;
                }
            }
        }
    }
    store.finish_run_at(run, RunStatus::Done, None, at(clock))?;
    Ok(run)
}
