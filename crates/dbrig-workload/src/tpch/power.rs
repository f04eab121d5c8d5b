//! The power test: RF1, the queries in stream-0 order, RF2, on one connection, each timed in
//! microseconds; Power@Size from the timings.
//!
//! Refresh data (dbgen `-U` is not in tpchgen, so dbrig makes its own, deterministically):
//! the refresh *set* k (1..=1000) is 0.1 % of ORDERS, SF·1500 orders. RF1 of set k inserts the
//! orders and lineitems of part k of 1000 of tpchgen's ORDERS/LINEITEM generators with every
//! order key moved by +8: dbgen only uses the first 8 keys of every 32, so keys +8 fall in the
//! gaps (keys mod 32 in 8..16) and never collide with loaded data, and the new orders carry realistic lineitems
//! (1–7 each). RF2 of set k deletes the orders (and their lineitems) of part k of the loaded
//! data, i.e. a fixed 0.1 % of the original order keys. The set a run uses is the first k
//! whose RF1 keys are not in ORDERS yet, so repeated power runs use sets 1, 2, 3, …

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use dbrig_core::results::HookOutput;
use dbrig_core::{Value, limits};
use dbrig_driver::{BulkLoad, ConnectOptions, Connection, Target};
use tpchgen::generators::{LineItemGenerator, OrderGenerator};

use super::check::check_sf1_answer;
use super::data::{Table, lineitem_row, order_row};
use super::error::{ControlsError, TpchError};
use super::load::check_loaded;
use super::params::{ParamMode, QueryParams, substitute};
use super::queries::{QuerySet, returns_rows, split_statements};
use super::schema_sql;
use crate::error::WorkloadError;
use crate::os_meter::OsMeterRef;
use dbrig_core::answers::{Normalized, compare_answers, normalize, orders_rows};
use dbrig_core::results::OsSpan;
pub use dbrig_core::results::tpch::{
    PowerReport, QueryDetail, QueryOutcome, QueryStatus, Reduction, RunRecord,
};

/// Refresh sets per database (each is 0.1 % of ORDERS).
pub const REFRESH_SETS: u32 = 1000;
/// Order-key shift of RF1's new orders (into dbgen's unused key slots).
pub const RF1_KEY_SHIFT: i64 = 8;

/// What the power test does.
#[derive(Debug, Clone)]
pub struct PowerOptions {
    pub params: ParamMode,
    /// `None`: the built-in queries of the target's dialect.
    pub queries: Option<QuerySet>,
    /// Run RF1/RF2 around the queries.
    pub refresh: bool,
    /// Another target with the same data, and its dialect's queries: each query's answer is
    /// compared with the answer there.
    pub check_against: Option<(Target, QuerySet)>,
    /// The trial's OS clock: each run's OS figures are recorded with it (the launcher sampled
    /// the OS per query run).
    pub os_meter: Option<OsMeterRef>,
}

/// Power@Size = 3600·SF / (Π QI · Π RI)^(1/N), N the number of timings (24 for the standard
/// test); timings below max/1000 are raised to max/1000.
pub fn power_at_size(sf: f64, seconds: &[f64]) -> Option<f64> {
    if seconds.is_empty() {
        return None;
    }
    let max = seconds.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return None;
    }
    let floor = max / 1000.0;
    let mean_ln = seconds.iter().map(|&s| s.max(floor).ln()).sum::<f64>() / seconds.len() as f64;
    Some(3600.0 * sf / mean_ln.exp())
}

/// The scale factor of loaded data, from SUPPLIER's row count (10 000·SF).
pub async fn detect_scale_factor(conn: &mut Connection) -> Result<f64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    let rows = conn
        .query(&sql.render("count_rows", &[("table", "supplier")]), &[])
        .await?;
    let n = rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .unwrap_or(0);
    Ok(n as f64 / 10_000.0)
}

/// The order keys RF2 of set `k` deletes (part k of the loaded ORDERS).
pub fn rf2_keys(sf: f64, set: u32) -> Vec<i64> {
    OrderGenerator::new(sf, set as i32, REFRESH_SETS as i32)
        .iter()
        .map(|o| o.o_orderkey)
        .collect()
}

/// RF1's rows of set `k`: (orders, lineitems).
pub fn rf1_rows(sf: f64, set: u32) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
    let (p, n) = (set as i32, REFRESH_SETS as i32);
    let orders = OrderGenerator::new(sf, p, n)
        .iter()
        .map(|o| order_row(&o, RF1_KEY_SHIFT))
        .collect();
    let lines = LineItemGenerator::new(sf, p, n)
        .iter()
        .map(|l| lineitem_row(&l, RF1_KEY_SHIFT))
        .collect();
    (orders, lines)
}

/// The first refresh set whose RF1 orders are not in the database yet.
pub(crate) async fn next_refresh_set(conn: &mut Connection, sf: f64) -> Result<u32, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    for k in 1..=REFRESH_SETS {
        let Some(first) = rf2_keys(sf, k).first().copied() else {
            break;
        };
        let present = conn
            .query(
                &sql.render("order_exists", &[]),
                &[Value::Int(first + RF1_KEY_SHIFT)],
            )
            .await?;
        if present.is_empty() {
            return Ok(k);
        }
    }
    Err(WorkloadError::InvalidOptions(format!(
        "all {REFRESH_SETS} refresh sets have been used on {}: reload the data (`dbrig tpch cleanup` then `dbrig tpch load`)",
        conn.target()
    )))
}

pub(crate) async fn rf1(conn: &mut Connection, sf: f64, set: u32) -> Result<u64, WorkloadError> {
    let (orders, lines) = rf1_rows(sf, set);
    let mut n = 0;
    for (table, rows) in [(Table::Orders, orders), (Table::LineItem, lines)] {
        n += conn
            .bulk_load(BulkLoad {
                table: table.name().into(),
                columns: table.columns().iter().map(|s| (*s).to_owned()).collect(),
                rows: Box::new(rows.into_iter()),
            })
            .await?;
    }
    Ok(n)
}

pub(crate) async fn rf2(conn: &mut Connection, sf: f64, set: u32) -> Result<u64, WorkloadError> {
    let sql = schema_sql(conn.dialect());
    let keys = rf2_keys(sf, set);
    let mut n = 0;
    conn.execute_text(sql.template("begin")).await?;
    for chunk in keys.chunks(500) {
        let marks = vec!["?"; chunk.len()].join(", ");
        let params: Vec<Value> = chunk.iter().map(|&k| Value::Int(k)).collect();
        for section in ["rf2_delete_lineitem", "rf2_delete_orders"] {
            let stmt = conn
                .prepare(&sql.render(section, &[("keys", &marks)]))
                .await?;
            n += conn.execute(stmt, &params).await?.rows;
        }
    }
    conn.execute_text(sql.template("commit")).await?;
    Ok(n)
}

pub(crate) async fn timed_refresh(
    name: &str,
    f: impl std::future::Future<Output = Result<u64, WorkloadError>>,
) -> QueryOutcome {
    let started = Instant::now();
    let r = f.await;
    let time_us = started.elapsed().as_micros() as u64;
    match r {
        Ok(rows) => QueryOutcome {
            name: name.into(),
            time_us,
            rows,
            status: QueryStatus::Ok,
            error: None,
            result: Vec::new(),
            detail: None,
            answer_checked: None,
            os: None,
        },
        Err(e) => QueryOutcome {
            name: name.into(),
            time_us,
            rows: 0,
            status: QueryStatus::Error,
            error: Some(e.to_string()),
            result: Vec::new(),
            detail: None,
            answer_checked: None,
            os: None,
        },
    }
}

/// Run one query's statements (rendered), timing all of them; the result is the last result
/// set. After a failure, the remaining statements that return no rows (Q15's DROP VIEW) still
/// run, untimed, so the next query is not disturbed.
pub async fn run_query(conn: &mut Connection, name: &str, sql: &str) -> QueryOutcome {
    run_query_timeout(conn, name, sql, None).await
}

/// [`run_query`] with a timeout over the whole query: a statement still running when it
/// passes is cancelled on the server and the outcome is [`QueryStatus::Timeout`] with the
/// timeout as its time.
pub async fn run_query_timeout(
    conn: &mut Connection,
    name: &str,
    sql: &str,
    timeout: Option<Duration>,
) -> QueryOutcome {
    let statements = split_statements(sql);
    let started = Instant::now();
    let mut result = Vec::new();
    let mut error = None;
    let mut timed_out = false;
    let mut failed_at = statements.len();
    for (i, s) in statements.iter().enumerate() {
        // What is left of the query's time for this statement.
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        let r = match (returns_rows(s), left) {
            (true, None) => conn.query(s, &[]).await.map(|rows| result = rows),
            (true, Some(t)) => conn
                .query_with_timeout(s, &[], t)
                .await
                .map(|rows| result = rows),
            (false, None) => conn.execute_text(s).await.map(|_| ()),
            (false, Some(t)) => conn.execute_text_with_timeout(s, t).await.map(|_| ()),
        };
        if let Err(e) = r {
            timed_out = e.is_timeout();
            error = Some(e.to_string());
            failed_at = i;
            break;
        }
    }
    let mut time_us = started.elapsed().as_micros() as u64;
    if timed_out && let Some(t) = timeout {
        time_us = t.as_micros() as u64;
    }
    for s in statements.iter().skip(failed_at + 1) {
        if !returns_rows(s) {
            let _ = conn.execute_text(s).await;
        }
    }
    QueryOutcome {
        name: name.into(),
        time_us,
        rows: result.len() as u64,
        status: match (&error, timed_out) {
            (_, true) => QueryStatus::Timeout,
            (Some(_), false) => QueryStatus::Error,
            (None, false) => QueryStatus::Ok,
        },
        error,
        result,
        detail: None,
        answer_checked: None,
        os: None,
    }
}

/// Launcher controls of one query, or of all queries (`[controls.all]`); an unset field falls
/// back to the next level (query → all → built-in default). On the command line (`dbrig tpch
/// power`, under "DBT-3 launcher controls") they are the controls of every query; the launcher's
/// setting each one stands for is named in a comment. `display_order`: the place each has in
/// `dbrig tpch power --help` and its man page (after the command's seven own options), as it
/// always had.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct QueryControls {
    // NUM_TESTS.
    /// Measured runs per query (default 1; with analyze-explain the most runs, 0 = until
    /// the fastest plan has --cluster-size runs).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::QueryRuns, _>"
    )]
    #[arg(long, value_name = "N", value_parser = limits::parse::<limits::QueryRuns>, display_order = 8)]
    pub runs: Option<u32>,
    // WARMUPS_COUNT.
    /// Unmeasured warm-up runs before each query's measured runs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::Repeats, _>"
    )]
    #[arg(long, value_name = "N", value_parser = limits::parse::<limits::Repeats>, display_order = 9)]
    pub warmups: Option<u32>,
    /// Seconds a run may take before it is cancelled on the server and recorded as a timeout.
    /// (On the command line `--timeout`, the test's own option.)
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    #[arg(skip)]
    pub timeout: Option<f64>,
    /// Startup parameters (`KEY=VALUE`) the managed server is restarted with for this query
    /// (`STARTUP_PARAMS`); the next query without them gets the configuration's own back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(skip)]
    pub params: Option<Vec<String>>,
    // PRE_RUN_SQL / POST_RUN_SQL: session settings made here apply to the query.
    /// SQL run on the test's session before each run (PRE_RUN_SQL), e.g. "flush status".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_name = "SQL", display_order = 16)]
    pub pre_sql: Option<String>,
    /// SQL run on the test's session after each run (POST_RUN_SQL), e.g. "show status".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_name = "SQL", display_order = 17)]
    pub post_sql: Option<String>,
    /// Shell command before each run (PRE_RUN_OS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_name = "COMMAND", display_order = 18)]
    pub pre_shell: Option<String>,
    /// Shell command after each run (POST_RUN_OS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_name = "COMMAND", display_order = 19)]
    pub post_shell: Option<String>,
    // Default: on with analyze-explain. A flag on the command line: there `false` means
    // "not given" (see `PowerControls::over`).
    /// Capture the plan (EXPLAIN) of every measured run and store it with its fingerprint
    /// (always on with analyze-explain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, action = clap::ArgAction::SetTrue, display_order = 10)]
    pub explain: Option<bool>,
    // CLUSTER_SIZE.
    /// analyze-explain: runs the fastest plan needs (default 3).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::ClusterSize, _>"
    )]
    #[arg(long, value_name = "N", value_parser = limits::parse::<limits::ClusterSize>, display_order = 11)]
    pub cluster_size: Option<u32>,
    // MAX_SKIPPED_TESTS.
    /// analyze-explain: restarts that skip a slower plan before the best so far is taken
    /// (default 5).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::Repeats, _>"
    )]
    #[arg(long, value_name = "N", value_parser = limits::parse::<limits::Repeats>, display_order = 12)]
    pub max_skipped: Option<u32>,
    // MAX_QUERY_TIME.
    /// analyze-explain: seconds spent on one query before the best cluster so far is taken.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    #[arg(long, value_name = "SECONDS", value_parser = limits::parse::<limits::TimeoutSeconds>, display_order = 13)]
    pub max_query_time: Option<f64>,
}

/// How a query's own startup parameters meet its configuration's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamsMode {
    /// The query's parameters instead of the configuration's (the launcher's
    /// `STARTUP_PARAMS` of a query replaced the configuration's).
    #[default]
    Replace,
    /// The query's parameters over the configuration's.
    Merge,
}

impl ParamsMode {
    pub fn is_replace(&self) -> bool {
        *self == ParamsMode::Replace
    }
}

/// The launcher's controls of a power test (`[controls]` of a tpch_power workload, or the
/// `dbrig tpch power` options, where `--controls FILE.toml` gives them as a file under the
/// command line's: [`PowerControls::over`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PowerControls {
    /// How the measured runs of a query become one number: simple-average (the mean; a
    /// timeout makes a timeout), min-max (fastest and slowest; the fastest counts),
    /// analyze-explain (runs grouped by plan fingerprint; the fastest plan's mean).
    // Unset: simple-average (stored as such, see [`PowerControls::reduction`]).
    #[serde(default, serialize_with = "reduction_or_default")]
    #[arg(long, display_order = 7)]
    pub reduction: Option<Reduction>,
    /// Restart the managed server before every query (the launcher's QUERIES_AT_ONCE=0;
    /// needs --server).
    #[serde(default)]
    #[arg(long, display_order = 14)]
    pub restart_between_queries: bool,
    /// Drop the OS page cache before every measured run (CLEAR_CACHES=1; needs --server and
    /// root).
    #[serde(default)]
    #[arg(long, display_order = 15)]
    pub drop_caches: bool,
    /// How a query's startup `params` meet the configuration's: `replace` them (the DBT-3
    /// launcher's way, the default) or `merge` over them.
    #[serde(default, skip_serializing_if = "ParamsMode::is_replace")]
    #[arg(skip)]
    pub params_mode: ParamsMode,
    /// Defaults for every query.
    #[serde(default, skip_serializing_if = "QueryControls::is_default")]
    #[command(flatten)]
    pub all: QueryControls,
    /// Per-query overrides, keyed by query name (`"3"`, `"20-opt1"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[arg(skip)]
    pub query: BTreeMap<String, QueryControls>,
}

/// An unset reduction is written as the one in force, as it always was.
fn reduction_or_default<S: serde::Serializer>(
    r: &Option<Reduction>,
    s: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&r.unwrap_or_default(), s)
}

impl QueryControls {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// These controls over `under`: each one set here wins, the others are `under`'s.
    pub fn or(self, under: &QueryControls) -> QueryControls {
        let u = under.clone();
        QueryControls {
            runs: self.runs.or(u.runs),
            warmups: self.warmups.or(u.warmups),
            timeout: self.timeout.or(u.timeout),
            params: self.params.or(u.params),
            pre_sql: self.pre_sql.or(u.pre_sql),
            post_sql: self.post_sql.or(u.post_sql),
            pre_shell: self.pre_shell.or(u.pre_shell),
            post_shell: self.post_shell.or(u.post_shell),
            explain: self.explain.or(u.explain),
            cluster_size: self.cluster_size.or(u.cluster_size),
            max_skipped: self.max_skipped.or(u.max_skipped),
            max_query_time: self.max_query_time.or(u.max_query_time),
        }
    }
}

/// The controls in force for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub runs: u32,
    pub warmups: u32,
    pub timeout: Option<Duration>,
    pub params: Vec<String>,
    pub pre_sql: Option<String>,
    pub post_sql: Option<String>,
    pub pre_shell: Option<String>,
    pub post_shell: Option<String>,
    pub explain: bool,
    pub cluster_size: u32,
    pub max_skipped: u32,
    pub max_query_time: Option<Duration>,
}

/// The most measured runs of one query under `analyze-explain` with `runs = 0`, so that a
/// server choosing a new plan every time cannot keep the test going forever.
pub const MAX_CLUSTER_RUNS: u32 = 100;

impl PowerControls {
    /// No control set: a plain power test (an explicit simple-average is no control).
    pub fn is_default(&self) -> bool {
        self.reduction() == Reduction::default()
            && PowerControls {
                reduction: None,
                ..self.clone()
            } == Self::default()
    }

    /// The reduction in force (unset: simple-average).
    pub fn reduction(&self) -> Reduction {
        self.reduction.unwrap_or_default()
    }

    /// These controls (the command line's) over `under` (a `--controls` file's): each one
    /// given here wins. A flag can only turn its control on, so an unset flag (`false`) is
    /// not given.
    pub fn over(self, under: PowerControls) -> PowerControls {
        let mut all = self.all;
        all.explain = all.explain.filter(|&on| on);
        PowerControls {
            reduction: self.reduction.or(under.reduction),
            restart_between_queries: self.restart_between_queries || under.restart_between_queries,
            drop_caches: self.drop_caches || under.drop_caches,
            // Neither is on the command line.
            params_mode: under.params_mode,
            all: all.or(&under.all),
            query: under.query,
        }
    }

    /// A `--controls` file (the `[controls]` table of a plan, as its own TOML file).
    pub fn from_file(path: &Path) -> Result<PowerControls, TpchError> {
        let text = std::fs::read_to_string(path).map_err(|cause| TpchError::ReadControls {
            path: path.to_owned(),
            cause,
        })?;
        toml::from_str(&text).map_err(|e| TpchError::ControlsFile {
            path: path.to_owned(),
            line: e
                .span()
                .map(|r| text[..r.start.min(text.len())].matches('\n').count() + 1)
                .map_or(String::new(), |l| format!(":{l}")),
            message: e.message().trim().to_owned(),
        })
    }

    /// The controls for query `name`: its own, then `all`, then the defaults.
    pub fn resolve(&self, name: &str) -> Resolved {
        let q = self
            .query
            .get(name)
            .cloned()
            .unwrap_or_default()
            .or(&self.all);
        let secs = |v: Option<f64>| v.map(dbrig_core::limits::duration);
        let analyze = self.reduction() == Reduction::AnalyzeExplain;
        Resolved {
            runs: q.runs.unwrap_or(if analyze { 0 } else { 1 }),
            warmups: q.warmups.unwrap_or(0),
            timeout: secs(q.timeout),
            params: q.params.unwrap_or_default(),
            pre_sql: q.pre_sql,
            post_sql: q.post_sql,
            pre_shell: q.pre_shell,
            post_shell: q.post_shell,
            explain: analyze || q.explain.unwrap_or(false),
            cluster_size: q.cluster_size.unwrap_or(3),
            max_skipped: q.max_skipped.unwrap_or(5),
            max_query_time: secs(q.max_query_time),
        }
    }

    /// Whether any control needs the server restarted (only a managed server can be).
    pub fn needs_restart(&self) -> Option<&'static str> {
        if self.restart_between_queries {
            return Some("restart-between-queries");
        }
        if self.drop_caches {
            return Some("drop-caches");
        }
        let has_params = |q: &QueryControls| q.params.as_ref().is_some_and(|p| !p.is_empty());
        if has_params(&self.all) || self.query.values().any(has_params) {
            return Some("per-query startup params");
        }
        None
    }

    fn has_shell_hooks(&self) -> bool {
        let has = |q: &QueryControls| q.pre_shell.is_some() || q.post_shell.is_some();
        has(&self.all) || self.query.values().any(has)
    }

    /// Check the values and the per-query names against the query set.
    pub fn validate(&self, queries: &QuerySet) -> Result<(), ControlsError> {
        for (name, q) in std::iter::once(("all", &self.all))
            .chain(self.query.iter().map(|(k, v)| (k.as_str(), v)))
        {
            if name != "all" && queries.get(name).is_none() {
                let known: Vec<&str> = queries.queries.iter().map(|q| q.name.as_str()).collect();
                return Err(ControlsError::UnknownQuery {
                    name: name.to_owned(),
                    known: known.join(", "),
                });
            }
            if q.runs == Some(0) && self.reduction() != Reduction::AnalyzeExplain {
                return Err(ControlsError::ZeroRuns {
                    name: name.to_owned(),
                });
            }
            if let Some(p) = &q.params
                && let Some(bad) = p.iter().find(|s| !s.contains('='))
            {
                return Err(ControlsError::Param {
                    name: name.to_owned(),
                    param: bad.clone(),
                });
            }
        }
        Ok(())
    }
}

/// What the power test may ask of the environment it runs in. The `dbrig` binary implements
/// it over its managed servers (`environment.rs`); an external target can run shell hooks but
/// not restart anything.
/// Why the environment could not do what the power test asked (its own error, one line): the
/// environment lives in a crate above this one.
pub type EnvError = Box<dyn std::error::Error + Send + Sync>;

pub trait PowerEnv: Send {
    /// Whether the server can be restarted (a managed server).
    fn can_restart(&self) -> bool;
    /// Restart the server with these startup parameters (`KEY=VALUE`): instead of the
    /// configuration's own when `replace` and there are any, else over them; the target to
    /// reconnect to.
    fn restart(&mut self, params: &[String], replace: bool) -> Result<Target, EnvError>;
    /// Drop the OS page cache.
    fn drop_caches(&mut self) -> Result<(), EnvError>;
    /// Run a shell hook, returning its record (command, exit code, output).
    fn shell_hook(&mut self, name: &str, command: &str) -> HookOutput;
    /// Whether restart controls on a server that cannot be restarted are an error (the
    /// command line: the user asked for them there) or are left out with a warning (a plan
    /// whose workload runs on managed and external configurations alike).
    fn strict(&self) -> bool {
        true
    }
}

/// The one number of a query from its measured runs (warm-ups ignored): status, time in µs,
/// error, and the runs used.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    pub status: QueryStatus,
    pub time_us: u64,
    pub error: Option<String>,
    pub used: Vec<usize>,
    pub chosen_plan: Option<String>,
}

/// Reduce measured runs. An error or a wrong answer in any used run makes the query an error
/// or wrong (never fast); timeouts: see [`Reduction`].
pub fn reduce(reduction: Reduction, runs: &[RunRecord]) -> Reduced {
    let measured: Vec<usize> = (0..runs.len())
        .filter(|&i| !runs[i].warmup && !runs[i].skipped)
        .collect();
    let failed = |idx: &[usize], status: QueryStatus| {
        idx.iter()
            .find(|&&i| runs[i].status == status)
            .map(|&i| Reduced {
                status,
                time_us: runs[i].time_us,
                error: runs[i].error.clone(),
                used: idx.to_vec(),
                chosen_plan: None,
            })
    };
    let mean = |idx: &[usize]| idx.iter().map(|&i| runs[i].time_us).sum::<u64>() / idx.len() as u64;
    let (used, chosen_plan) = match reduction {
        Reduction::AnalyzeExplain => {
            let mut clusters = super::explain::PlanClusters::default();
            for &i in &measured {
                // Errors and wrong answers are not plans to choose among: reported below.
                if matches!(runs[i].status, QueryStatus::Ok | QueryStatus::Timeout) {
                    let secs = (runs[i].status == QueryStatus::Ok).then(|| runs[i].time_us as f64);
                    clusters.add(runs[i].plan.as_deref().unwrap_or("unknown"), i, secs);
                }
            }
            match clusters.fastest() {
                Some(c) => (c.runs, Some(c.fingerprint)),
                None => (measured.clone(), None),
            }
        }
        _ => (measured.clone(), None),
    };
    if used.is_empty() {
        return Reduced {
            status: QueryStatus::Error,
            time_us: 0,
            error: Some("no measured run".into()),
            used,
            chosen_plan,
        };
    }
    let bad = [QueryStatus::Error, QueryStatus::Wrong];
    for status in bad {
        if let Some(r) = failed(&measured, status) {
            return r;
        }
    }
    let completed: Vec<usize> = used
        .iter()
        .copied()
        .filter(|&i| runs[i].status == QueryStatus::Ok)
        .collect();
    let timed_out = failed(&used, QueryStatus::Timeout);
    match (reduction, timed_out) {
        (Reduction::MinMax, _) if !completed.is_empty() => Reduced {
            status: QueryStatus::Ok,
            time_us: completed
                .iter()
                .map(|&i| runs[i].time_us)
                .min()
                .unwrap_or(0),
            error: None,
            used,
            chosen_plan,
        },
        (_, Some(mut t)) => {
            t.chosen_plan = chosen_plan;
            t
        }
        (_, None) => Reduced {
            status: QueryStatus::Ok,
            time_us: mean(&used),
            error: None,
            used,
            chosen_plan,
        },
    }
}

/// Run SQL hook statements on the test's own session (so `SET SESSION …` applies to the
/// query), capturing result rows as text.
async fn session_sql_hook(conn: &mut Connection, name: &str, sql: &str) -> HookOutput {
    let mut out = String::new();
    let mut ok = true;
    for stmt in split_statements(sql) {
        // Hooks read status and settings too (`SHOW STATUS`, `PRAGMA …`), not only SELECTs.
        let lower = stmt.trim_start().to_ascii_lowercase();
        let rows = returns_rows(&stmt)
            || ["show", "pragma", "describe", "explain"]
                .iter()
                .any(|k| lower.starts_with(k));
        let r = if rows {
            conn.query(&stmt, &[]).await.map(|rows| {
                for row in rows {
                    let cells: Vec<String> = row
                        .iter()
                        .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
                        .collect();
                    out.push_str(&cells.join("\t"));
                    out.push('\n');
                }
            })
        } else {
            conn.execute_text(&stmt).await.map(|_| ())
        };
        if let Err(e) = r {
            out.push_str(&e.to_string());
            ok = false;
            break;
        }
    }
    HookOutput {
        hook: name.to_owned(),
        scope: "query".to_owned(),
        command: sql.to_owned(),
        exit_code: Some(if ok { 0 } else { 1 }),
        output: out,
        timed_out: false,
    }
}

/// Run the power test. A query that fails is recorded as an error and the test goes on.
pub async fn power_test(
    target: &Target,
    connect: &ConnectOptions,
    options: &PowerOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<PowerReport, WorkloadError> {
    power_test_controlled(
        target,
        connect,
        options,
        &PowerControls::default(),
        None,
        progress,
        &mut |_| {},
    )
    .await
}

/// The state of a controlled power test between queries: the connection (replaced after a
/// restart) and the startup parameters the server runs with.
struct Session<'e> {
    conn: Connection,
    connect: ConnectOptions,
    env: Option<&'e mut dyn PowerEnv>,
    params: Vec<String>,
    /// Query parameters replace the configuration's (`params-mode`).
    replace: bool,
    os: Option<OsMeterRef>,
}

impl Session<'_> {
    async fn restart(&mut self, params: &[String]) -> Result<(), WorkloadError> {
        let env = self
            .env
            .as_deref_mut()
            .ok_or_else(|| WorkloadError::InvalidOptions("no managed server to restart".into()))?;
        let target = env.restart(params, self.replace).map_err(|e| {
            WorkloadError::InvalidOptions(format!("restarting the server failed: {e}"))
        })?;
        let old = std::mem::replace(
            &mut self.conn,
            Connection::connect(&target, &self.connect).await?,
        );
        old.close().await;
        self.params = params.to_vec();
        Ok(())
    }
}

/// The power test with the launcher's per-query controls. `env` gives restarts, cache drops
/// and shell hooks (see [`PowerEnv`]); `on_query` sees the report so far after every query
/// (charts regenerated while the run goes).
pub async fn power_test_controlled(
    target: &Target,
    connect: &ConnectOptions,
    options: &PowerOptions,
    controls: &PowerControls,
    env: Option<&mut dyn PowerEnv>,
    progress: &(dyn Fn(&str) + Sync),
    on_query: &mut (dyn FnMut(&PowerReport) + Send),
) -> Result<PowerReport, WorkloadError> {
    let can_restart = env.as_ref().is_some_and(|e| e.can_restart());
    let relaxed;
    let controls = match controls.needs_restart() {
        Some(what) if !can_restart => {
            if env.as_ref().is_none_or(|e| e.strict()) {
                return Err(WorkloadError::InvalidOptions(format!(
                    "{what} needs a managed server that dbrig can restart, and {target} is an external target: run the power test on a managed server (`--server NAME`, or a plan's [[server]])"
                )));
            }
            progress(&format!(
                "warning: {target} is an external server: no restarts, cache drops or per-query startup parameters ({what} left out)"
            ));
            let mut c = controls.clone();
            c.restart_between_queries = false;
            c.drop_caches = false;
            for q in std::iter::once(&mut c.all).chain(c.query.values_mut()) {
                q.params = None;
            }
            relaxed = c;
            &relaxed
        }
        _ => controls,
    };
    if controls.has_shell_hooks() && env.is_none() {
        return Err(WorkloadError::InvalidOptions(
            "shell hooks need the dbrig command line or a plan to run them".into(),
        ));
    }
    let mut conn = Connection::connect(target, connect).await?;
    check_loaded(&mut conn).await?;
    let sf = detect_scale_factor(&mut conn).await?;
    if sf <= 0.0 {
        return Err(WorkloadError::InvalidOptions(format!(
            "the TPC-H tables on {target} are empty: run `dbrig tpch load` first"
        )));
    }
    let queries = options
        .queries
        .clone()
        .unwrap_or_else(|| QuerySet::builtin(conn.dialect()));
    controls.validate(&queries).map_err(TpchError::Controls)?;
    let set = if options.refresh {
        Some(next_refresh_set(&mut conn, sf).await?)
    } else {
        None
    };
    let mut report = PowerReport {
        scale_factor: sf,
        refresh_set: set,
        server_version: conn.server_version().to_owned(),
        rf1: None,
        queries: Vec::new(),
        rf2: None,
        power_at_size: None,
    };
    let mut s = Session {
        conn,
        connect: connect.clone(),
        env,
        params: Vec::new(),
        replace: controls.params_mode == ParamsMode::Replace,
        os: options.os_meter.clone(),
    };

    if let Some(k) = set {
        let (mut o, os) =
            OsMeterRef::measure(s.os.as_ref(), timed_refresh("RF1", rf1(&mut s.conn, sf, k))).await;
        o.os = os.map(Box::new);
        progress(&format!(
            "RF1 (set {k}): {:.3} s {}",
            o.seconds(),
            o.status.as_str()
        ));
        report.rf1 = Some(o);
    }
    let validation_sf1 = options.params == ParamMode::Validation
        && (sf - 1.0).abs() < 1e-9
        && options.queries.is_none();
    // The reference engine's answers, untimed, before the test.
    let mut reference: BTreeMap<String, Result<Vec<Vec<Normalized>>, String>> = BTreeMap::new();
    if let Some((other, set)) = &options.check_against {
        let mut c = Connection::connect(other, connect).await?;
        for q in &queries.queries {
            let Some(r) = set.get(&q.name) else { continue };
            let text = match r.number {
                Some(n) => substitute(&r.template, &QueryParams::new(n, 0, sf, options.params)),
                None => r.template.clone(),
            };
            let o = run_query(&mut c, &q.name, &text).await;
            let answer = match o.status {
                QueryStatus::Ok => Ok(normalize(&o.result)),
                _ => Err(o.error.unwrap_or_else(|| o.status.as_str().to_owned())),
            };
            reference.insert(q.name.clone(), answer);
        }
        c.close().await;
        progress(&format!(
            "answers to compare with: {} queries on {other}",
            reference.len()
        ));
    }
    let reference_name = options
        .check_against
        .as_ref()
        .map(|(t, _)| t.to_string())
        .unwrap_or_default();
    for q in &queries.queries {
        let text = match q.number {
            Some(n) => substitute(&q.template, &QueryParams::new(n, 0, sf, options.params)),
            None => q.template.clone(),
        };
        let c = controls.resolve(&q.name);
        let check = |o: &mut QueryOutcome| {
            if o.status != QueryStatus::Ok {
                return;
            }
            // With validation parameters on SF1 data the reference answers apply; anywhere
            // else nothing was compared, and the status says so.
            o.answer_checked = Some(false);
            if validation_sf1 && let Some(n) = q.number {
                let c = check_sf1_answer(n, &o.result);
                o.answer_checked = Some(true);
                if !c.ok {
                    o.status = QueryStatus::Wrong;
                    o.error = c.detail;
                    return;
                }
            }
            // The other engine's answer: compared as the TPC-H checker compares.
            if let Some(Ok(theirs)) = reference.get(&q.name) {
                o.answer_checked = Some(true);
                let ours = normalize(&o.result);
                if let Some(d) = compare_answers(&ours, theirs, orders_rows(&text)) {
                    o.status = QueryStatus::Wrong;
                    o.error = Some(format!("against {reference_name}: {d}"));
                }
            }
        };
        let o = run_controlled(&mut s, controls, &c, &q.name, &text, &check, progress).await?;
        progress(&format!(
            "Q{}: {:.3} s{}, {} rows, {}{}",
            q.name,
            o.seconds(),
            o.detail
                .as_ref()
                .filter(|d| d.runs.len() > 1)
                .map(|d| format!(" ({} of {})", d.reduction.as_str(), runs_text(&d.runs)))
                .unwrap_or_default(),
            o.rows,
            o.status_text(),
            o.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
        report.queries.push(o);
        on_query(&report);
    }
    // RF2 and the end of the test run with the configuration's own parameters.
    if !s.params.is_empty() && (set.is_some() || controls.restart_between_queries) {
        s.restart(&[]).await?;
    }
    if let Some(k) = set {
        let (mut o, os) =
            OsMeterRef::measure(s.os.as_ref(), timed_refresh("RF2", rf2(&mut s.conn, sf, k))).await;
        o.os = os.map(Box::new);
        progress(&format!(
            "RF2 (set {k}): {:.3} s {}",
            o.seconds(),
            o.status.as_str()
        ));
        report.rf2 = Some(o);
    }
    let all: Vec<&QueryOutcome> = report
        .rf1
        .iter()
        .chain(&report.queries)
        .chain(report.rf2.iter())
        .collect();
    // A timed-out or wrong query has no true time: no Power@Size either.
    report.power_at_size = if all.iter().all(|o| o.status == QueryStatus::Ok) {
        power_at_size(sf, &all.iter().map(|o| o.seconds()).collect::<Vec<_>>())
    } else {
        None
    };
    s.conn.close().await;
    Ok(report)
}

/// How many runs made a query's figure: `3 runs (+1 warm-up)` — warm-ups and runs skipped for
/// a slower plan are said apart, never counted as measured.
pub fn runs_text(runs: &[RunRecord]) -> String {
    let warmups = runs.iter().filter(|r| r.warmup).count();
    let skipped = runs.iter().filter(|r| r.skipped).count();
    let measured = runs.len() - warmups - skipped;
    let mut s = format!("{measured} run{}", if measured == 1 { "" } else { "s" });
    if warmups > 0 {
        s.push_str(&format!(
            " (+{warmups} warm-up{})",
            if warmups == 1 { "" } else { "s" }
        ));
    }
    if skipped > 0 {
        s.push_str(&format!(" (+{skipped} skipped for a slower plan)"));
    }
    s
}

/// One query under its controls: restart / cache drop, hooks, warm-ups, measured runs (with
/// plan capture), and the reduction to one outcome.
async fn run_controlled(
    s: &mut Session<'_>,
    controls: &PowerControls,
    c: &Resolved,
    name: &str,
    text: &str,
    check: &(dyn Fn(&mut QueryOutcome) + Sync),
    progress: &(dyn Fn(&str) + Sync),
) -> Result<QueryOutcome, WorkloadError> {
    let mut detail = QueryDetail {
        reduction: controls.reduction(),
        runs: Vec::new(),
        min_us: None,
        max_us: None,
        mean_us: None,
        max_timed_out: false,
        timeout_s: c.timeout.map(|t| t.as_secs_f64()),
        params: c.params.clone(),
        plans: BTreeMap::new(),
        chosen_plan: None,
        skipped: 0,
        restarts: 0,
        hooks: Vec::new(),
        notes: Vec::new(),
    };
    let can_restart = s.env.as_ref().is_some_and(|e| e.can_restart());
    if controls.restart_between_queries || c.params != s.params {
        s.restart(&c.params).await?;
        detail.restarts += 1;
    }
    let started = Instant::now();
    let mut last: Option<QueryOutcome> = None;
    let mut restarted = detail.restarts > 0;
    let mut clusters = super::explain::PlanClusters::default();
    let mut measured = 0u32;
    for w in 0..c.warmups {
        let (o, os) = OsMeterRef::measure(
            s.os.as_ref(),
            run_query_timeout(&mut s.conn, name, text, c.timeout),
        )
        .await;
        detail.runs.push(RunRecord {
            run: 0,
            warmup: true,
            time_us: o.time_us,
            rows: o.rows,
            status: o.status,
            error: o.error.clone(),
            plan: None,
            restarted: restarted && w == 0,
            caches_dropped: false,
            skipped: false,
            os: os.map(Box::new),
        });
        restarted = false;
    }
    loop {
        let analyze = controls.reduction() == Reduction::AnalyzeExplain;
        let limit = if analyze && c.runs == 0 {
            MAX_CLUSTER_RUNS
        } else {
            c.runs
        };
        if measured >= limit {
            break;
        }
        let mut caches_dropped = false;
        if controls.drop_caches
            && let Some(env) = s.env.as_deref_mut()
        {
            match env.drop_caches() {
                Ok(()) => caches_dropped = true,
                Err(e) => {
                    let e = e.to_string();
                    if !detail.notes.contains(&e) {
                        progress(&format!("warning: {e}"));
                        detail.notes.push(e);
                    }
                }
            }
        }
        if let Some(h) = &c.pre_shell
            && let Some(env) = s.env.as_deref_mut()
        {
            detail.hooks.push(env.shell_hook("pre-run-shell", h));
        }
        if let Some(sql) = &c.pre_sql {
            detail
                .hooks
                .push(session_sql_hook(&mut s.conn, "pre-run-sql", sql).await);
        }
        let (mut o, os) = OsMeterRef::measure(
            s.os.as_ref(),
            run_query_timeout(&mut s.conn, name, text, c.timeout),
        )
        .await;
        check(&mut o);
        if let Some(sql) = &c.post_sql {
            detail
                .hooks
                .push(session_sql_hook(&mut s.conn, "post-run-sql", sql).await);
        }
        if let Some(h) = &c.post_shell
            && let Some(env) = s.env.as_deref_mut()
        {
            detail.hooks.push(env.shell_hook("post-run-shell", h));
        }
        // EXPLAIN after the timed run, as the DBT-3 launcher ran it: before, it would read
        // the tables' pages into the cache the drop just emptied, and the cold run would not
        // be cold.
        let plan = if c.explain {
            match super::explain::capture(&mut s.conn, text).await {
                Ok(p) => {
                    let fp = p.fingerprint.clone();
                    detail.plans.entry(fp.clone()).or_insert(p.plan);
                    Some(fp)
                }
                Err(e) => {
                    let note = format!("EXPLAIN failed: {e}");
                    if !detail.notes.contains(&note) {
                        detail.notes.push(note);
                    }
                    None
                }
            }
        } else {
            None
        };
        // A plan already seen to be slower does not count: restart for another one.
        let skip = analyze
            && can_restart
            && o.status != QueryStatus::Timeout
            && plan
                .as_deref()
                .is_some_and(|fp| !clusters.worth_running(fp));
        if !skip {
            measured += 1;
        }
        detail.runs.push(RunRecord {
            run: if skip { 0 } else { measured },
            warmup: false,
            time_us: o.time_us,
            rows: o.rows,
            status: o.status,
            error: o.error.clone(),
            plan: plan.clone(),
            restarted,
            caches_dropped,
            skipped: skip,
            os: os.map(Box::new),
        });
        restarted = false;
        let index = detail.runs.len() - 1;
        if skip {
            detail.skipped += 1;
            if detail.skipped > c.max_skipped {
                break;
            }
            s.restart(&c.params).await?;
            detail.restarts += 1;
            restarted = true;
            continue;
        }
        last = Some(o);
        if analyze {
            let r = &detail.runs[index];
            if matches!(r.status, QueryStatus::Error | QueryStatus::Wrong) {
                break; // the query is an error whatever the plan
            }
            // A timeout counts toward the skipped runs (the launcher's MAX_SKIPPED_TESTS):
            // a query that always times out stops there instead of running 100 times.
            if r.status == QueryStatus::Timeout {
                detail.skipped += 1;
                if detail.skipped > c.max_skipped {
                    break;
                }
            }
            let secs = (r.status == QueryStatus::Ok).then_some(r.time_us as f64);
            clusters.add(plan.as_deref().unwrap_or("unknown"), index, secs);
            let full = clusters
                .fastest()
                .is_some_and(|f| f.mean.is_some() && f.runs.len() as u32 >= c.cluster_size);
            let out_of_time = c.max_query_time.is_some_and(|t| started.elapsed() >= t);
            if full || out_of_time {
                break;
            }
            // A restart may give the optimizer other statistics, hence another plan.
            if can_restart && measured < limit {
                s.restart(&c.params).await?;
                detail.restarts += 1;
                restarted = true;
            }
        }
    }
    let r = reduce(controls.reduction(), &detail.runs);
    let used: Vec<&RunRecord> = r.used.iter().map(|&i| &detail.runs[i]).collect();
    let done: Vec<u64> = used
        .iter()
        .filter(|x| x.status == QueryStatus::Ok)
        .map(|x| x.time_us)
        .collect();
    detail.min_us = done.iter().min().copied();
    detail.max_us = done.iter().max().copied();
    detail.mean_us = (!done.is_empty()).then(|| done.iter().sum::<u64>() / done.len() as u64);
    detail.max_timed_out = used.iter().any(|x| x.status == QueryStatus::Timeout);
    detail.chosen_plan = r.chosen_plan.clone();
    let os = OsSpan::combine(used.iter().filter_map(|x| x.os.as_deref())).map(Box::new);
    let last = last.unwrap_or_else(|| QueryOutcome {
        name: name.into(),
        time_us: 0,
        rows: 0,
        status: QueryStatus::Error,
        error: None,
        result: Vec::new(),
        detail: None,
        answer_checked: None,
        os: None,
    });
    Ok(QueryOutcome {
        name: name.into(),
        time_us: r.time_us,
        rows: last.rows,
        status: r.status,
        error: r.error,
        result: last.result,
        answer_checked: last.answer_checked,
        os,
        detail: Some(Box::new(detail)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_formula() {
        // 24 timings of 1 s at SF 1: 3600.
        let p = power_at_size(1.0, &[1.0; 24]).unwrap();
        assert!((p - 3600.0).abs() < 1e-6);
        // A tiny timing is raised to max/1000.
        let mut t = vec![1.0; 23];
        t.push(1e-9);
        let p = power_at_size(1.0, &t).unwrap();
        let expected = 3600.0 / (0.001f64.ln() / 24.0).exp();
        assert!((p - expected).abs() < 1e-6);
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    /// Hand-computed values: the geometric mean of the timings is what divides 3600·SF, over
    /// as many timings as there are (22 without refresh functions, 24 with).
    #[test]
    fn power_at_size_by_hand_at_several_scale_factors() {
        // 22 queries (no RF): 11 of 2 s and 11 of 8 s, geometric mean 4 s; SF 10 → 9000.
        let mut q22 = vec![2.0; 11];
        q22.extend([8.0; 11]);
        assert!(close(power_at_size(10.0, &q22).unwrap(), 9000.0));
        // The same timings at SF 0.1 → 90; at SF 1 → 900.
        assert!(close(power_at_size(0.1, &q22).unwrap(), 90.0));
        assert!(close(power_at_size(1.0, &q22).unwrap(), 900.0));
        // With RF1 and RF2: 12 of 1 s and 12 of 4 s, geometric mean 2 s; SF 0.01 → 18.
        let mut q24 = vec![1.0; 12];
        q24.extend([4.0; 12]);
        assert!(close(power_at_size(0.01, &q24).unwrap(), 18.0));
        // The floor: 23 timings of 10 s and one of 1 ms, raised to 10/1000 = 0.01 s: the
        // product is 10^21, the mean 10^(21/24); SF 100 → 360000 / 10^0.875 = 48006.7716…
        let mut floored = vec![10.0; 23];
        floored.push(0.001);
        let p = power_at_size(100.0, &floored).unwrap();
        assert!((p - 48_006.771_557_879_66).abs() < 1e-6, "{p}");
        // A timing above the floor stays as it is: 0.02 s → 360000 / (10^23 · 0.02)^(1/24).
        floored[23] = 0.02;
        let p = power_at_size(100.0, &floored).unwrap();
        assert!((p - 46_640.111_960_144_54).abs() < 1e-6, "{p}");
        assert_eq!(power_at_size(1.0, &[]), None);
        assert_eq!(power_at_size(1.0, &[0.0, 0.0]), None);
    }

    fn run(time_us: u64, status: QueryStatus, plan: &str) -> RunRecord {
        RunRecord {
            run: 1,
            warmup: false,
            time_us,
            rows: 1,
            status,
            error: (status != QueryStatus::Ok).then(|| status.as_str().to_owned()),
            plan: Some(plan.into()),
            restarted: false,
            caches_dropped: false,
            skipped: false,
            os: None,
        }
    }

    /// The DBT-3 launcher's "min-max of 4 runs" counted its warm-up: 3 measured runs and a
    /// warm-up read so, and a run skipped for a slower plan is not a measured one either.
    #[test]
    fn runs_are_counted_apart_from_warmups_and_skipped_runs() {
        use QueryStatus::*;
        let mut warm = run(5, Ok, "a");
        warm.warmup = true;
        let mut runs = vec![warm, run(1, Ok, "a"), run(2, Ok, "a"), run(3, Ok, "a")];
        assert_eq!(runs_text(&runs), "3 runs (+1 warm-up)");
        let mut skipped = run(9, Ok, "b");
        skipped.skipped = true;
        runs.push(skipped);
        assert_eq!(
            runs_text(&runs),
            "3 runs (+1 warm-up) (+1 skipped for a slower plan)"
        );
        // The skipped run's time is not used.
        let r = reduce(Reduction::MinMax, &runs);
        assert_eq!((r.time_us, r.used.len()), (1, 3));
        assert_eq!(runs_text(&runs[1..2]), "1 run");
    }

    /// A managed server's stand-in: counts restarts and cache drops; restarts lead back to
    /// the same mock target.
    struct FakeEnv {
        target: Target,
        restarts: u32,
        drops: u32,
    }

    impl PowerEnv for FakeEnv {
        fn can_restart(&self) -> bool {
            true
        }
        fn restart(&mut self, _params: &[String], _replace: bool) -> Result<Target, EnvError> {
            self.restarts += 1;
            Ok(self.target.clone())
        }
        fn drop_caches(&mut self) -> Result<(), EnvError> {
            self.drops += 1;
            Ok(())
        }
        fn shell_hook(&mut self, name: &str, command: &str) -> HookOutput {
            HookOutput {
                hook: name.into(),
                scope: "query".into(),
                command: command.into(),
                exit_code: Some(0),
                output: String::new(),
                timed_out: false,
            }
        }
    }

    async fn controlled_on_mock(url: &str, controls: &PowerControls) -> (QueryOutcome, FakeEnv) {
        controlled_on_mock_metered(url, controls, None).await
    }

    async fn controlled_on_mock_metered(
        url: &str,
        controls: &PowerControls,
        os: Option<OsMeterRef>,
    ) -> (QueryOutcome, FakeEnv) {
        let target = Target::parse(url).unwrap();
        let connect = ConnectOptions::default();
        let conn = Connection::connect(&target, &connect).await.unwrap();
        let mut env = FakeEnv {
            target,
            restarts: 0,
            drops: 0,
        };
        let mut s = Session {
            conn,
            connect,
            env: Some(&mut env),
            params: Vec::new(),
            replace: true,
            os,
        };
        let c = controls.resolve("1");
        let o = run_controlled(&mut s, controls, &c, "1", "SELECT 1", &|_| {}, &|_| {})
            .await
            .unwrap();
        s.conn.close().await;
        (o, env)
    }

    /// Stands in for the executor's OS clock: span k runs from 10·k to 10·k + k seconds with
    /// k·10 % user CPU, so each run's figures say which span they came from.
    struct CountingMeter(std::sync::atomic::AtomicU32);

    impl crate::os_meter::OsMeter for CountingMeter {
        fn begin(&self) -> Box<dyn FnOnce() -> OsSpan + Send> {
            let k = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            Box::new(move || OsSpan {
                start_s: 10.0 * k as f64,
                os: dbrig_core::results::OsSample {
                    t_s: 11.0 * k as f64,
                    cpu_user_pct: 10.0 * k as f64,
                    ..Default::default()
                },
            })
        }
    }

    /// The launcher sampled the OS per query run: every run (warm-ups too) carries its own
    /// span, and the query's figures combine the runs its time came from.
    #[tokio::test]
    async fn every_run_records_its_own_os_figures() {
        let meter = OsMeterRef(std::sync::Arc::new(CountingMeter(Default::default())));
        let controls = PowerControls {
            reduction: Some(Reduction::MinMax),
            all: QueryControls {
                runs: Some(2),
                warmups: Some(1),
                ..Default::default()
            },
            ..Default::default()
        };
        let (o, _) = controlled_on_mock_metered("mock:", &controls, Some(meter)).await;
        let d = o.detail.as_ref().unwrap();
        let user: Vec<f64> = d
            .runs
            .iter()
            .map(|r| r.os.as_ref().expect("every run measured").os.cpu_user_pct)
            .collect();
        assert_eq!(user, [10.0, 20.0, 30.0]);
        // Spans 2 (2 s long) and 3 (3 s long): 20 % and 30 % weighted, the warm-up left out.
        let q = o.os.unwrap();
        assert_eq!((q.start_s, q.os.t_s), (20.0, 33.0));
        assert!((q.os.cpu_user_pct - (2.0 * 20.0 + 3.0 * 30.0) / 5.0).abs() < 1e-9);
        // No meter (OS sampling off): nothing recorded.
        let (o, _) = controlled_on_mock("mock:", &controls).await;
        assert!(o.os.is_none() && o.detail.unwrap().runs.iter().all(|r| r.os.is_none()));
    }

    /// The DBT-3 launcher ran EXPLAIN after the timed run (before it, EXPLAIN would read the
    /// pages the cache drop just emptied) and every cache drop is on the run's record. The
    /// mock's 2nd execution and every later one fail: the timed run must be the 1st.
    #[tokio::test]
    async fn explain_follows_the_timed_run_and_every_drop_is_recorded() {
        let controls = PowerControls {
            drop_caches: true,
            all: QueryControls {
                explain: Some(true),
                ..Default::default()
            },
            ..Default::default()
        };
        let (o, env) = controlled_on_mock("mock:?fatal_after=2", &controls).await;
        assert_eq!(o.status, QueryStatus::Ok, "{o:?}");
        let d = o.detail.unwrap();
        assert!(
            d.notes.iter().any(|n| n.starts_with("EXPLAIN failed")),
            "{:?}",
            d.notes
        );
        assert_eq!(env.drops, 1);
        assert_eq!(d.runs.len(), 1);
        assert!(d.runs[0].caches_dropped, "{:?}", d.runs);
    }

    /// analyze-explain on a query that always times out: each timeout counts toward
    /// max-skipped (the launcher's MAX_SKIPPED_TESTS), so it stops after max-skipped + 1
    /// runs instead of 100 runs and 100 restarts.
    #[tokio::test]
    async fn analyze_explain_stops_on_timeouts_at_max_skipped() {
        let controls = PowerControls {
            reduction: Some(Reduction::AnalyzeExplain),
            all: QueryControls {
                timeout: Some(0.01),
                max_skipped: Some(2),
                ..Default::default()
            },
            ..Default::default()
        };
        let (o, env) = controlled_on_mock("mock:?latency_us=200000", &controls).await;
        assert_eq!(o.status, QueryStatus::Timeout, "{o:?}");
        let d = o.detail.unwrap();
        assert_eq!(d.runs.len(), 3, "{:?}", d.runs);
        assert!(d.runs.iter().all(|r| r.status == QueryStatus::Timeout));
        assert_eq!(d.skipped, 3);
        assert_eq!(
            env.restarts, 2,
            "a restart between runs, none after the last"
        );
    }

    #[test]
    fn simple_average_is_the_mean_and_a_timeout_makes_a_timeout() {
        use QueryStatus::*;
        let mut warm = run(1, Ok, "a");
        warm.warmup = true;
        let runs = vec![warm, run(100, Ok, "a"), run(300, Ok, "a")];
        let r = reduce(Reduction::SimpleAverage, &runs);
        assert_eq!((r.status, r.time_us), (Ok, 200));
        assert_eq!(r.used, vec![1, 2], "warm-ups are not measured");
        let runs = vec![run(100, Ok, "a"), run(5_000, Timeout, "a")];
        let r = reduce(Reduction::SimpleAverage, &runs);
        assert_eq!((r.status, r.time_us), (Timeout, 5_000));
    }

    #[test]
    fn min_max_takes_the_fastest_and_errors_are_never_fast() {
        use QueryStatus::*;
        let runs = vec![
            run(300, Ok, "a"),
            run(100, Ok, "b"),
            run(5_000, Timeout, "a"),
        ];
        let r = reduce(Reduction::MinMax, &runs);
        assert_eq!((r.status, r.time_us), (Ok, 100));
        let all_out = vec![run(5_000, Timeout, "a"), run(5_000, Timeout, "a")];
        assert_eq!(reduce(Reduction::MinMax, &all_out).status, Timeout);
        for red in [
            Reduction::SimpleAverage,
            Reduction::MinMax,
            Reduction::AnalyzeExplain,
        ] {
            let runs = vec![run(1, Wrong, "a"), run(2, Ok, "a")];
            assert_eq!(reduce(red, &runs).status, Wrong, "{red:?}");
            let runs = vec![run(2, Ok, "a"), run(1, Error, "a")];
            assert_eq!(reduce(red, &runs).status, Error, "{red:?}");
        }
    }

    #[test]
    fn analyze_explain_reports_the_fastest_plans_mean() {
        use QueryStatus::*;
        let runs = vec![
            run(900, Ok, "slow"),
            run(100, Ok, "fast"),
            run(5_000, Timeout, "awful"),
            run(300, Ok, "fast"),
        ];
        let r = reduce(Reduction::AnalyzeExplain, &runs);
        assert_eq!((r.status, r.time_us), (Ok, 200));
        assert_eq!(r.used, vec![1, 3]);
        assert_eq!(r.chosen_plan.as_deref(), Some("fast"));
    }

    #[test]
    fn controls_resolve_query_then_all_then_defaults() {
        let mut c = PowerControls {
            all: QueryControls {
                runs: Some(3),
                timeout: Some(60.0),
                ..Default::default()
            },
            ..Default::default()
        };
        c.query.insert(
            "3".into(),
            QueryControls {
                timeout: Some(5.0),
                params: Some(vec!["optimizer_switch=mrr=on".into()]),
                ..Default::default()
            },
        );
        let q3 = c.resolve("3");
        assert_eq!(q3.runs, 3);
        assert_eq!(q3.timeout, Some(Duration::from_secs(5)));
        assert_eq!(q3.params, vec!["optimizer_switch=mrr=on".to_owned()]);
        let q1 = c.resolve("1");
        assert_eq!((q1.runs, q1.warmups), (3, 0));
        assert!(q1.params.is_empty() && !q1.explain);
        assert_eq!(c.needs_restart(), Some("per-query startup params"));
        let set = QuerySet::builtin(dbrig_driver::Dialect::Sqlite);
        assert!(c.validate(&set).is_ok());
        c.query.insert("99".into(), QueryControls::default());
        let e = c.validate(&set).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("'99'") && e.contains("14, 2, 9"), "{e}");
        c.query.remove("99");
        c.all.runs = Some(0);
        assert!(
            c.validate(&set)
                .unwrap_err()
                .to_string()
                .contains("analyze-explain")
        );
        c.reduction = Some(Reduction::AnalyzeExplain);
        assert!(c.validate(&set).is_ok());
        assert!(c.resolve("1").explain, "analyze-explain captures plans");
    }

    #[test]
    fn refresh_sets_are_deterministic_and_disjoint() {
        let sf = 0.01;
        assert_eq!(rf2_keys(sf, 1), rf2_keys(sf, 1));
        assert_eq!(rf2_keys(sf, 1).len(), 15);
        assert_ne!(rf2_keys(sf, 1), rf2_keys(sf, 2));
        let (orders, lines) = rf1_rows(sf, 1);
        assert_eq!(orders, rf1_rows(sf, 1).0);
        assert_eq!(orders.len(), 15);
        assert!(!lines.is_empty() && lines.len() <= 15 * 7);
        // RF1 keys fall in dbgen's unused key slots: never a loaded order key.
        let loaded: std::collections::HashSet<i64> = Table::Orders
            .rows(sf, 1, 1)
            .map(|r| r[0].as_i64().unwrap())
            .collect();
        for o in &orders {
            let k = o[0].as_i64().unwrap();
            assert!(!loaded.contains(&k), "{k}");
            assert!((8..16).contains(&(k % 32)), "{k}");
        }
        for k in rf2_keys(sf, 3) {
            assert!(loaded.contains(&k));
        }
    }

    /// `dbrig tpch power`'s controls: the options parse into the same `PowerControls` a plan
    /// holds, and those given win over a `--controls` file's; flags not given leave the
    /// file's on.
    #[test]
    fn command_line_controls_override_the_files() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            controls: PowerControls,
        }
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("power").chain(args.iter().copied()))
                .unwrap()
                .controls
        };
        let file: PowerControls = toml::from_str(
            "reduction = \"min-max\"\ndrop-caches = true\n[all]\nruns = 3\nexplain = true\npre-sql = \"flush status\"\n[query.\"6\"]\nruns = 9\n",
        )
        .unwrap();
        // Nothing given: the file's controls as they are.
        assert_eq!(parse(&[]).over(file.clone()), file);
        let c = parse(&[
            "--reduction",
            "simple-average",
            "--runs",
            "5",
            "--warmups",
            "1",
        ])
        .over(file.clone());
        assert_eq!(c.reduction(), Reduction::SimpleAverage);
        assert_eq!((c.all.runs, c.all.warmups), (Some(5), Some(1)));
        assert!(c.drop_caches, "the file's flag stays on");
        assert_eq!(c.all.explain, Some(true));
        assert_eq!(c.all.pre_sql.as_deref(), Some("flush status"));
        assert_eq!(c.resolve("6").runs, 9, "per-query controls are the file's");
        // Without a file: the defaults, with --explain a plain `true`.
        let c = parse(&["--explain", "--restart-between-queries"]).over(PowerControls::default());
        assert_eq!(c.all.explain, Some(true));
        assert!(c.restart_between_queries && !c.drop_caches);
        assert_eq!(c.reduction, None);
        // An explicit simple-average is still no control at all (a plain power test).
        assert!(
            parse(&["--reduction", "simple-average"])
                .over(PowerControls::default())
                .is_default()
        );
        assert!(!c.is_default());
    }
}
