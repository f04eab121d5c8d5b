//! The throughput test (TPC-H clause 5.3.4): S query streams at once, stream s running the 22
//! queries in the spec's permutation s (Appendix A) with its own qgen parameters, beside one
//! refresh stream running an RF1/RF2 pair per query stream; `Ts` is the wall time from the
//! first start to the last end, Throughput@Size = S·22·3600/Ts·SF, and with a power test
//! result QphH@Size = sqrt(Power@Size · Throughput@Size).
//!
//! Every stream has its own connection and they run concurrently on the caller's runtime (the
//! work is the server's; SQLite connections each have their own thread). A query that fails is
//! recorded with the server's message and the stream goes on; a stream whose server has gone
//! (a failed query, then neither the connection nor a new one answers) stops, and the report
//! says so while keeping everything measured until then.

use std::time::{Duration, Instant};

use dbrig_driver::{ConnectOptions, Connection, Target};

use super::load::check_loaded;
use super::params::{ParamMode, QueryParams, substitute};
use super::power::{
    QueryStatus, detect_scale_factor, next_refresh_set, rf1, rf2, run_query_timeout, timed_refresh,
};
use super::queries::{Query, QuerySet};
use crate::error::WorkloadError;
use crate::os_meter::OsMeterRef;
pub use dbrig_core::results::tpch::{
    RefreshPair, RefreshStreamReport, StreamReport, ThroughputReport, qphh_at_size,
};

/// TPC-H Appendix A: the query order of stream 0 (the power test) and of throughput streams
/// 1..=40 (stream s > 40 reuses s mod 41). The same table as qgen's.
pub const STREAM_PERMUTATIONS: [[u32; 22]; 41] = [
    [
        14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12,
    ],
    [
        21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4,
    ],
    [
        6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21,
    ],
    [
        8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3,
    ],
    [
        5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20,
    ],
    [
        21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9,
    ],
    [
        10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21,
    ],
    [
        18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12,
    ],
    [
        19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11,
    ],
    [
        8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16,
    ],
    [
        6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5,
    ],
    [
        15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7,
    ],
    [
        1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15,
    ],
    [
        21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19,
    ],
    [
        2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6,
    ],
    [
        16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18,
    ],
    [
        1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21,
    ],
    [
        3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12,
    ],
    [
        14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16,
    ],
    [
        4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1,
    ],
    [
        16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8,
    ],
    [
        20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2,
    ],
    [
        16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17,
    ],
    [
        18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7,
    ],
    [
        7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16,
    ],
    [
        18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9,
    ],
    [
        13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16,
    ],
    [
        14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19,
    ],
    [
        10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11,
    ],
    [
        10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4,
    ],
    [
        7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2,
    ],
    [
        2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22,
    ],
    [
        15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2,
    ],
    [
        15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1,
    ],
    [
        1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2,
    ],
    [
        14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11,
    ],
    [
        9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19,
    ],
    [
        13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20,
    ],
    [
        20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9,
    ],
    [
        3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2,
    ],
    [
        13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19,
    ],
];

/// The query order of stream `stream` (Appendix A; streams past 40 wrap around).
pub fn permutation(stream: u32) -> &'static [u32; 22] {
    &STREAM_PERMUTATIONS[(stream % 41) as usize]
}

/// The minimum number of query streams for a scale factor (clause 5.3.4, Table 12); below
/// SF 1 (not a TPC-H scale factor) the SF 1 minimum.
pub fn min_streams(sf: f64) -> u32 {
    const TABLE: [(f64, u32); 10] = [
        (1.0, 2),
        (10.0, 3),
        (30.0, 4),
        (100.0, 5),
        (300.0, 6),
        (1_000.0, 7),
        (3_000.0, 8),
        (10_000.0, 9),
        (30_000.0, 10),
        (100_000.0, 11),
    ];
    // Between two listed scale factors, the minimum of the larger one below it.
    TABLE
        .iter()
        .rev()
        .find(|(at, _)| sf >= at * (1.0 - 1e-9))
        .map(|&(_, n)| n)
        .unwrap_or(2)
}

/// Throughput@Size = S·22·3600 / Ts · SF (Ts in seconds).
pub fn throughput_at_size(sf: f64, streams: u32, ts_s: f64) -> Option<f64> {
    (ts_s > 0.0).then(|| f64::from(streams) * 22.0 * 3600.0 / ts_s * sf)
}

/// What the throughput test does.
#[derive(Debug, Clone)]
pub struct ThroughputOptions {
    /// Query streams; 0: the spec's minimum for the scale factor.
    pub streams: u32,
    /// Random qgen parameters (seeded, per stream) or the validation values for all streams.
    pub params: ParamMode,
    /// `None`: the built-in queries of the target's dialect.
    pub queries: Option<QuerySet>,
    /// Run the refresh stream (an RF1/RF2 pair per query stream).
    pub refresh: bool,
    /// Per-query timeout: a query still running is cancelled on the server.
    pub timeout: Option<Duration>,
    /// The trial's OS clock: each query's and refresh function's OS figures are recorded
    /// with it.
    pub os_meter: Option<OsMeterRef>,
}

/// A stream's queries in its permutation's order: numbered queries by their place in the
/// permutation, the others (a user's unnumbered files) after them by name.
pub fn stream_order(queries: &QuerySet, stream: u32) -> Vec<&Query> {
    let order = permutation(stream);
    let mut out: Vec<&Query> = queries.queries.iter().collect();
    out.sort_by_key(|q| {
        let pos = q
            .number
            .and_then(|n| order.iter().position(|&x| x == n))
            .unwrap_or(order.len());
        (pos, q.name.clone())
    });
    out
}

/// After a failed step: is the server still there? A probe on the connection, then one
/// reconnect; the error when neither answers.
async fn server_gone(conn: &mut Connection) -> Option<String> {
    let ping = super::schema_sql(conn.dialect()).template("ping");
    if conn.query(ping, &[]).await.is_ok() {
        return None;
    }
    match conn.reconnect().await {
        Ok(()) => None,
        Err(e) => Some(format!("the server went away: {e}")),
    }
}

async fn query_stream(
    target: &Target,
    connect: &ConnectOptions,
    queries: &QuerySet,
    stream: u32,
    sf: f64,
    options: &ThroughputOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> StreamReport {
    let started = Instant::now();
    let mut report = StreamReport {
        stream,
        duration_s: 0.0,
        queries: Vec::new(),
        aborted: None,
    };
    let mut conn = match Connection::connect(target, connect).await {
        Ok(c) => c,
        Err(e) => {
            report.aborted = Some(format!("cannot connect: {e}"));
            return report;
        }
    };
    for q in stream_order(queries, stream) {
        let text = match q.number {
            Some(n) => substitute(
                &q.template,
                &QueryParams::new(n, stream, sf, options.params),
            ),
            None => q.template.clone(),
        };
        // The OS figures over the query's run: system-wide ones include the other streams'.
        let (mut o, os) = OsMeterRef::measure(
            options.os_meter.as_ref(),
            run_query_timeout(&mut conn, &q.name, &text, options.timeout),
        )
        .await;
        o.os = os.map(Box::new);
        progress(&format!(
            "stream {stream} Q{}: {:.3} s, {} rows, {}{}",
            q.name,
            o.seconds(),
            o.rows,
            o.status.as_str(),
            o.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
        let failed = o.status == QueryStatus::Error;
        report.queries.push(o);
        if failed && let Some(why) = server_gone(&mut conn).await {
            report.aborted = Some(why);
            break;
        }
    }
    report.duration_s = started.elapsed().as_secs_f64();
    conn.close().await;
    report
}

async fn refresh_stream(
    target: &Target,
    connect: &ConnectOptions,
    sf: f64,
    first_set: u32,
    pairs: u32,
    os_meter: Option<&OsMeterRef>,
    progress: &(dyn Fn(&str) + Sync),
) -> RefreshStreamReport {
    let started = Instant::now();
    let mut report = RefreshStreamReport {
        duration_s: 0.0,
        pairs: Vec::new(),
        aborted: None,
    };
    let mut conn = match Connection::connect(target, connect).await {
        Ok(c) => c,
        Err(e) => {
            report.aborted = Some(format!("cannot connect: {e}"));
            return report;
        }
    };
    for set in first_set..first_set + pairs {
        let (mut rf1_outcome, os) =
            OsMeterRef::measure(os_meter, timed_refresh("RF1", rf1(&mut conn, sf, set))).await;
        rf1_outcome.os = os.map(Box::new);
        progress(&format!(
            "refresh RF1 (set {set}): {:.3} s {}",
            rf1_outcome.seconds(),
            rf1_outcome.status.as_str()
        ));
        let mut pair = RefreshPair {
            refresh_set: set,
            rf1: rf1_outcome,
            rf2: None,
        };
        if pair.rf1.status == QueryStatus::Error
            && let Some(why) = server_gone(&mut conn).await
        {
            report.pairs.push(pair);
            report.aborted = Some(why);
            break;
        }
        let (mut rf2_outcome, os) =
            OsMeterRef::measure(os_meter, timed_refresh("RF2", rf2(&mut conn, sf, set))).await;
        rf2_outcome.os = os.map(Box::new);
        progress(&format!(
            "refresh RF2 (set {set}): {:.3} s {}",
            rf2_outcome.seconds(),
            rf2_outcome.status.as_str()
        ));
        let failed = rf2_outcome.status == QueryStatus::Error;
        pair.rf2 = Some(rf2_outcome);
        report.pairs.push(pair);
        if failed && let Some(why) = server_gone(&mut conn).await {
            report.aborted = Some(why);
            break;
        }
    }
    report.duration_s = started.elapsed().as_secs_f64();
    conn.close().await;
    report
}

/// Run the throughput test. Queries that fail are recorded and their stream goes on; a
/// stream that lost its server stops, and the report's `failure` says so (with everything
/// measured kept). An error is returned only when the test cannot start.
pub async fn throughput_test(
    target: &Target,
    connect: &ConnectOptions,
    options: &ThroughputOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<ThroughputReport, WorkloadError> {
    let mut conn = Connection::connect(target, connect).await?;
    check_loaded(&mut conn).await?;
    let sf = detect_scale_factor(&mut conn).await?;
    if sf <= 0.0 {
        return Err(WorkloadError::InvalidOptions(format!(
            "the TPC-H tables on {target} are empty: run `dbrig tpch load` first"
        )));
    }
    let streams = match options.streams {
        0 => min_streams(sf),
        n => n,
    };
    let first_set = if options.refresh {
        let k = next_refresh_set(&mut conn, sf).await?;
        let last = k + streams - 1;
        if last > super::power::REFRESH_SETS {
            return Err(WorkloadError::InvalidOptions(format!(
                "{streams} refresh pairs need sets {k}..={last}, past the last ({}) on {target}: reload the data (`dbrig tpch cleanup` then `dbrig tpch load`)",
                super::power::REFRESH_SETS
            )));
        }
        Some(k)
    } else {
        None
    };
    let server_version = conn.server_version().to_owned();
    conn.close().await;
    let queries = options
        .queries
        .clone()
        .unwrap_or_else(|| QuerySet::builtin(target.dialect()));

    let started = Instant::now();
    let query_streams = futures_util::future::join_all(
        (1..=streams).map(|s| query_stream(target, connect, &queries, s, sf, options, progress)),
    );
    let refresh = async {
        match first_set {
            Some(k) => Some(
                refresh_stream(
                    target,
                    connect,
                    sf,
                    k,
                    streams,
                    options.os_meter.as_ref(),
                    progress,
                )
                .await,
            ),
            None => None,
        }
    };
    let (query_streams, refresh_stream) = tokio::join!(query_streams, refresh);
    let ts_seconds = started.elapsed().as_secs_f64();

    let failure = query_streams
        .iter()
        .filter_map(|s| {
            s.aborted
                .as_ref()
                .map(|a| format!("stream {}: {a}", s.stream))
        })
        .chain(
            refresh_stream
                .iter()
                .filter_map(|r| r.aborted.as_ref().map(|a| format!("refresh stream: {a}"))),
        )
        .next();
    let mut report = ThroughputReport {
        scale_factor: sf,
        streams,
        server_version,
        params: options.params,
        timeout_s: options.timeout.map(|t| t.as_secs_f64()),
        ts_s: ts_seconds,
        query_streams,
        refresh_stream,
        throughput_at_size: None,
        failure,
        power_run: None,
        power_at_size: None,
        qphh_at_size: None,
    };
    let complete = report.failure.is_none()
        && report.outcomes().all(|o| o.status == QueryStatus::Ok)
        && report
            .refresh_stream
            .as_ref()
            .is_none_or(|r| r.pairs.iter().all(|p| p.rf2.is_some()));
    if complete {
        report.throughput_at_size = throughput_at_size(sf, streams, ts_seconds);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_match_the_spec_and_are_permutations() {
        // Rows quoted from TPC-H Appendix A / qgen.
        assert_eq!(
            permutation(0),
            &[
                14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12
            ]
        );
        assert_eq!(permutation(0), &super::super::queries::STREAM0_ORDER);
        assert_eq!(
            permutation(1),
            &[
                21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4
            ]
        );
        assert_eq!(
            permutation(2),
            &[
                6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21
            ]
        );
        assert_eq!(
            permutation(40),
            &[
                13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19
            ]
        );
        assert_eq!(permutation(41), permutation(0));
        let mut distinct = std::collections::HashSet::new();
        for row in &STREAM_PERMUTATIONS {
            let mut sorted = *row;
            sorted.sort_unstable();
            assert_eq!(sorted.to_vec(), (1..=22).collect::<Vec<u32>>(), "{row:?}");
            assert!(distinct.insert(*row), "duplicate row {row:?}");
        }
    }

    #[test]
    fn minimum_streams_follow_the_spec_table() {
        for (sf, n) in [
            (0.01, 2),
            (0.5, 2),
            (1.0, 2),
            (3.0, 2),
            (10.0, 3),
            (30.0, 4),
            (100.0, 5),
            (300.0, 6),
            (1000.0, 7),
            (3000.0, 8),
            (10000.0, 9),
            (100000.0, 11),
        ] {
            assert_eq!(min_streams(sf), n, "SF {sf}");
        }
    }

    #[test]
    fn throughput_and_qphh_formulas() {
        // 2 streams × 22 queries in 3600 s at SF 1: 44 queries per hour.
        assert_eq!(throughput_at_size(1.0, 2, 3600.0), Some(44.0));
        assert_eq!(
            throughput_at_size(10.0, 3, 1800.0),
            Some(3.0 * 22.0 * 2.0 * 10.0)
        );
        assert_eq!(throughput_at_size(1.0, 2, 0.0), None);
        assert!((qphh_at_size(100.0, 400.0) - 200.0).abs() < 1e-9);
    }

    #[test]
    fn streams_follow_their_permutation_with_user_files_last() {
        let set = QuerySet::builtin(dbrig_driver::Dialect::Postgres);
        let order: Vec<u32> = stream_order(&set, 1)
            .iter()
            .map(|q| q.number.unwrap())
            .collect();
        assert_eq!(order, permutation(1).to_vec());
        let mut custom = QuerySet {
            queries: vec![
                Query {
                    name: "zz".into(),
                    number: None,
                    template: "SELECT 1".into(),
                },
                Query {
                    name: "4".into(),
                    number: Some(4),
                    template: "SELECT 4".into(),
                },
                Query {
                    name: "21".into(),
                    number: Some(21),
                    template: "SELECT 21".into(),
                },
            ],
        };
        let names: Vec<&str> = stream_order(&custom, 1)
            .iter()
            .map(|q| q.name.as_str())
            .collect();
        assert_eq!(names, ["21", "4", "zz"]);
        custom.queries.reverse();
        let names: Vec<&str> = stream_order(&custom, 1)
            .iter()
            .map(|q| q.name.as_str())
            .collect();
        assert_eq!(names, ["21", "4", "zz"]);
    }
}
