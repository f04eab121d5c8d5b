//! Every kind of workload a plan's `[[workload]]` can name, behind one trait: a [`Kind`] is
//! its name, its options (stored with the cell and hashed into its key), the identity of the
//! data it prepares, its preflight, its prepare step and its trial, which returns the kind's
//! typed [`dbrig_core::results::TrialResult`] in a [`TrialOutput`], everything it tells on the
//! way going through one [`Progress`]. Each kind is a module of [`crate::kinds`]; this file
//! holds the trait and the registry ([`REGISTRY`]) that resolves a plan's name to a kind, and
//! matches no kind.
//!
//! The executor runs each kind the same way (target up, prepare once, trial, record), whichever
//! command or plan took it; the results database stores the typed result and every report
//! reads it.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use dbrig_core::Measurements;
use dbrig_core::results::{LoadFigures, Protocol, ResultKind, TrialResult};
use dbrig_driver::{ConnectOptions, Target};

use crate::Workload;
use crate::error::WorkloadError;
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;

/// What a kind's step returns: a boxed future, so that kinds are objects of one registry.
pub type KindFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, WorkloadError>> + Send + 'a>>;

/// One kind of workload: a module of [`crate::kinds`] implements it and adds one line to
/// [`REGISTRY`]. Every method but the identity and the trial has the default of a kind that
/// prepares nothing, checks nothing first and does not write.
pub trait Kind: std::fmt::Debug + Send + Sync {
    /// The name results are stored under.
    fn name(&self) -> &'static str;
    /// The kind of result its trials produce.
    fn result_kind(&self) -> ResultKind;
    /// The options as stored with the cell (and hashed into its key).
    fn options_json(&self) -> serde_json::Value;
    /// A copy of this kind with its options (a plan clones a workload into each of its cells).
    fn clone_kind(&self) -> Box<dyn Kind>;

    /// The runner's workload of a client-driven kind (OLTP and its relatives): its trial runs
    /// clients for a duration, the plan's client counts, duration and warm-up apply.
    fn client_workload(&self) -> Option<&Workload> {
        None
    }
    /// Whether the plan's client counts apply (otherwise one cell per configuration).
    fn uses_clients(&self) -> bool {
        self.client_workload().is_some()
    }
    /// Whether the duration and warm-up apply.
    fn is_timed(&self) -> bool {
        self.client_workload().is_some()
    }
    /// Whether trials change the prepared data (a fresh-data lifecycle restores it before
    /// each trial).
    fn writes(&self) -> bool {
        false
    }
    /// Fill in what only the host knows (the CPU frequency, for cycles per row).
    fn set_host_cpu_mhz(&mut self, _cpu_mhz: Option<f64>) {}
    /// The command that drops what this kind's prepare step makes (proven dbrig's by the
    /// registry's markers).
    fn cleanup_command(&self) -> String {
        format!("dbrig cleanup {}", self.name())
    }
    /// Whether preparing this kind may load data large enough to check the disk for first.
    fn loads_large_data(&self) -> bool {
        false
    }
    /// What the data this workload prepares depends on; `None` for kinds that prepare
    /// nothing. Two workloads with the same identity share prepared data; different
    /// identities never do.
    fn data_identity(&self) -> Option<serde_json::Value> {
        None
    }
    /// How statements are sent unless the run says (`--protocol`, `--ps-mode`).
    fn default_protocol(&self) -> Protocol {
        self.client_workload()
            .map_or(Protocol::Prepared, Workload::default_protocol)
    }
    /// Whether [`Kind::preflight`] has anything to check on the target.
    fn has_preflight(&self) -> bool {
        false
    }
    /// Checks what a single command is refused for before anything is recorded, and fills in
    /// what only the target knows. `threads`: the run's clients; `space`: the free space dbrig
    /// can see, for kinds that [`Kind::loads_large_data`].
    fn preflight<'a>(
        &'a mut self,
        _target: &'a Target,
        _connect: &'a ConnectOptions,
        _threads: u32,
        _space: Option<(&'a Path, u64)>,
    ) -> KindFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }
    /// Create what the trials need when it is missing (for `threads` clients). Returns what
    /// was done, if anything: a line and the load's figures.
    fn prepare_if_missing<'a>(
        &'a self,
        _target: &'a Target,
        _connect: &'a ConnectOptions,
        _threads: u32,
        _seed: u64,
        _space: Option<(&'a Path, u64)>,
        _progress: &'a dyn Progress,
    ) -> KindFuture<'a, Option<Prepared>> {
        Box::pin(async { Ok(None) })
    }
    /// Run one trial. Ctrl-C (`interrupt`) ends a client-driven trial after its in-flight
    /// events; another kind is abandoned where it is (`Ok(None)`: see [`abandonable`]). `env`
    /// is what a power test's launcher controls use (server restarts, cache drops, hooks).
    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>>;
    /// The units of work a trial did, and what one unit is: what CPU and counters are
    /// divided by.
    fn work_units(&self, output: &TrialOutput) -> (u64, &'static str);
    /// One line for progress output.
    fn summary(&self, output: &TrialOutput) -> String;
}

/// A registration's reading of a plan's name and options: `None` when the name is not its
/// kind's.
pub type Parse = fn(&str, &serde_json::Value) -> Option<Result<Box<dyn Kind>, WorkloadError>>;

/// A kind's entry in the registry: how a plan's name reaches it.
pub struct Registration {
    /// The kind of result the kind's trials produce (the registry test walks every one).
    pub result: ResultKind,
    /// The kind named `name` with its options (a JSON object; keys kebab-case), or `None`
    /// when the name is not this kind's.
    pub parse: Parse,
    /// The options that are paths (keys kebab-case) of the kind named `name` (normalized:
    /// lower case, `_` for `-`), empty when none are or the name is not this kind's.
    pub path_options: fn(&str) -> &'static [&'static str],
    /// Names and what a trial does, for `dbrig list` (the OLTP workloads list themselves).
    pub listed: &'static [(&'static str, &'static str)],
}

/// Every kind, in the order a name is tried: the one list a new kind joins.
pub const REGISTRY: &[Registration] = &[
    crate::kinds::lua::REGISTRATION,
    crate::kinds::oltp::REGISTRATION,
    crate::kinds::connect::REGISTRATION,
    crate::kinds::script::REGISTRATION,
    crate::kinds::micro::REGISTRATION,
    crate::kinds::tpch_power::REGISTRATION,
    crate::kinds::tpch_throughput::REGISTRATION,
    crate::kinds::perfrun::REGISTRATION,
    crate::kinds::load::REGISTRATION,
    crate::kinds::sql_bench::REGISTRATION,
];

/// The kinds a plan runs besides the OLTP workloads, for `dbrig list`: name and what a
/// trial does (the options are those of `dbrig micro NAME` and the kinds' option structs).
pub fn plan_only_kinds() -> Vec<(&'static str, &'static str)> {
    REGISTRY
        .iter()
        .flat_map(|r| r.listed.iter().copied())
        .collect()
}

/// A plan's workload: one registered [`Kind`].
#[derive(Debug)]
pub struct WorkloadKind(Box<dyn Kind>);

impl Clone for WorkloadKind {
    fn clone(&self) -> Self {
        WorkloadKind(self.0.clone_kind())
    }
}

impl std::ops::Deref for WorkloadKind {
    type Target = dyn Kind;

    fn deref(&self) -> &(dyn Kind + 'static) {
        &*self.0
    }
}

impl std::ops::DerefMut for WorkloadKind {
    fn deref_mut(&mut self) -> &mut (dyn Kind + 'static) {
        &mut *self.0
    }
}

impl WorkloadKind {
    /// A kind built by a command (`dbrig run`, `dbrig tpch power`, …) rather than named.
    pub fn new(kind: impl Kind + 'static) -> Self {
        WorkloadKind(Box::new(kind))
    }

    /// The options of the kind named `name` that are paths (keys kebab-case), which a plan
    /// resolves against its own folder: pgbench scripts (`FILE@WEIGHT`), query folders, the
    /// sql-bench suite, memory_load's server-side file folder.
    pub fn path_options(name: &str) -> &'static [&'static str] {
        let name = name.trim().to_ascii_lowercase().replace('-', "_");
        REGISTRY
            .iter()
            .map(|r| (r.path_options)(&name))
            .find(|p| !p.is_empty())
            .unwrap_or(&[])
    }

    /// The kind named `name` with its options (a JSON object; keys kebab-case). OLTP names
    /// keep their aliases; micro-benchmarks and `tpch_power` accept `-` for `_`. A name ending
    /// in `.lua` is always a sysbench Lua script (a file), never dbrig's workload of that name.
    pub fn from_json(name: &str, options: &serde_json::Value) -> Result<Self, WorkloadError> {
        let empty = serde_json::Value::Object(serde_json::Map::new());
        let options = if options.is_null() { &empty } else { options };
        REGISTRY
            .iter()
            .find_map(|r| (r.parse)(name, options))
            .unwrap_or_else(|| Err(WorkloadError::UnknownWorkload(name.to_owned())))
            .map(WorkloadKind)
    }

    /// The registered kind itself (a registration's `parse` returns it).
    pub(crate) fn into_box(self) -> Box<dyn Kind> {
        self.0
    }

    /// Fill in what only the host knows (the CPU frequency for cycles per row).
    pub fn with_host(mut self, cpu_mhz: Option<f64>) -> Self {
        self.0.set_host_cpu_mhz(cpu_mhz);
        self
    }
}

/// A prepare step that ran: its line for the console and its load's figures (rows/s and MB/s
/// per table), which the executor stores with the first trial measured on the data.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub line: String,
    /// `None` for a sysbench Lua script's own `prepare`: the script inserts what it likes, so
    /// dbrig has no rows or bytes per table to report, only the step's line.
    pub figures: Option<LoadFigures>,
}

/// What one trial produced: the typed result every report reads, a client-driven run's
/// measurements (kept beside it: histogram, interval samples), and the server's version.
#[derive(Debug, Clone)]
pub struct TrialOutput {
    pub result: TrialResult,
    pub measurements: Option<Measurements>,
    pub server_version: String,
}

impl TrialOutput {
    /// A result without client measurements.
    pub fn of(result: TrialResult) -> Self {
        TrialOutput {
            server_version: result.server_version().unwrap_or_default().to_owned(),
            result,
            measurements: None,
        }
    }
}

/// A trial that is not client-driven, abandoned where it is on Ctrl-C (`Ok(None)`): its
/// tables are registered and dropped by the next run, an unfinished refresh set is skipped
/// next time.
pub async fn abandonable(
    interrupt: &Stopper,
    trial: impl Future<Output = Result<TrialResult, WorkloadError>>,
) -> Result<Option<TrialOutput>, WorkloadError> {
    tokio::select! {
        r = trial => r.map(|r| Some(TrialOutput::of(r))),
        () = interrupt.stopped() => Ok(None),
    }
}

/// The registry's options of a kind read by serde, refused with the kind's name.
pub(crate) fn options_of<T: serde::de::DeserializeOwned>(
    what: &str,
    options: &serde_json::Value,
) -> Result<T, WorkloadError> {
    serde_json::from_value(options.clone())
        .map_err(|e| WorkloadError::InvalidOptions(format!("{what} options: {e}")))
}

/// A name as the registry compares it: trimmed, lower case, `_` for `-`.
pub(crate) fn normalized(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_resolve_to_their_kind() {
        let o = WorkloadKind::from_json("oltp_read_write", &json!({"table-size": 10})).unwrap();
        assert!(o.uses_clients() && o.is_timed() && o.writes());
        assert_eq!(o.options_json()["table-size"], 10);
        let ro = WorkloadKind::from_json("oltp_read_only", &serde_json::Value::Null).unwrap();
        assert!(!ro.writes());
        let m =
            WorkloadKind::from_json("scan-filter", &json!({"rows": 7, "wide_rows": 0})).unwrap();
        assert_eq!(m.name(), "scan_filter");
        assert!(!m.uses_clients() && !m.is_timed() && !m.writes());
        assert_eq!(m.options_json()["rows"], 7);
        assert_eq!(m.options_json()["wide_rows"], 0);
        let t =
            WorkloadKind::from_json("tpch-power", &json!({"sf": 0.01, "queries": ["1"]})).unwrap();
        assert_eq!(t.name(), "tpch_power");
        assert!(!t.writes());
        let r =
            WorkloadKind::from_json("tpch_power", &json!({"sf": 0.01, "refresh": true})).unwrap();
        assert!(r.writes(), "RF1/RF2 change the data");
    }

    #[test]
    fn every_listed_plan_kind_resolves() {
        for (name, _) in plan_only_kinds() {
            let options = match name {
                n if n.starts_with("tpch") => json!({"sf": 0.01}),
                "perfrun" => json!({"tpch": true}),
                "script" => json!({"builtins": ["select-only@2", "tpcb"]}),
                "sql-bench" => json!({"tests": ["connect"], "small-test": true}),
                "load" => json!({"of": "oltp_read_only"}),
                _ => json!({}),
            };
            let k = WorkloadKind::from_json(name, &options).unwrap();
            assert_eq!(k.name(), name.replace('-', "_"));
        }
    }

    /// Every kind of stored result has a registered kind that produces it: a new
    /// `TrialResult` variant without its `Kind` fails here (the match has no wildcard).
    #[test]
    fn every_result_kind_has_a_registered_kind() {
        for kind in ResultKind::ALL {
            // Exhaustive on purpose: a new variant must be added here and registered.
            let _: () = match kind {
                ResultKind::Oltp
                | ResultKind::Micro
                | ResultKind::TpchPower
                | ResultKind::TpchThroughput
                | ResultKind::Perfrun
                | ResultKind::SqlBench
                | ResultKind::Load => (),
            };
            assert!(
                REGISTRY.iter().any(|r| r.result == kind),
                "no registered Kind produces {kind:?}"
            );
        }
        // And what a registration says it produces is what its kinds produce.
        for (name, options) in [
            ("oltp_read_write", json!({})),
            ("connect", json!({})),
            ("script", json!({"builtins": ["tpcb"]})),
            ("tmp_groupby", json!({})),
            ("tpch-power", json!({"sf": 0.01})),
            ("tpch-throughput", json!({"sf": 0.01})),
            ("perfrun", json!({"tpch": true})),
            ("load", json!({"of": "oltp_read_only"})),
            ("sql-bench", json!({"tests": ["connect"]})),
        ] {
            let k = WorkloadKind::from_json(name, &options).unwrap();
            let r = REGISTRY
                .iter()
                .find(|r| (r.parse)(name, &options).is_some())
                .unwrap();
            assert_eq!(k.result_kind(), r.result, "{name}");
        }
    }

    #[test]
    fn perfrun_needs_one_query_source() {
        let e = WorkloadKind::from_json("perfrun", &json!({})).unwrap_err();
        assert!(e.to_string().contains("queries = DIR"), "{e}");
        let e = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "queries": "/tmp"}))
            .unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let e =
            WorkloadKind::from_json("perfrun", &json!({"queries": "/nonexistent/q"})).unwrap_err();
        assert!(e.to_string().contains("cannot read the folder"), "{e}");
        let p = WorkloadKind::from_json("perfrun", &json!({"tpch": true, "filter": "rows_a > 1"}))
            .unwrap();
        assert!(p.has_preflight() && !p.writes() && p.data_identity().is_none());
        assert_eq!(p.options_json()["filter"], "rows_a > 1");
    }

    #[test]
    fn bad_options_name_the_option() {
        let e = WorkloadKind::from_json("memory_load", &json!({"rowz": 1})).unwrap_err();
        assert!(
            e.to_string().contains("unknown option 'rowz'") && e.to_string().contains("rows"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tmp_groupby", &json!({"runs": 0})).unwrap_err();
        assert!(
            e.to_string()
                .contains("0 is out of range: give 1 to 1000000 runs"),
            "{e}"
        );
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 0})).unwrap_err();
        assert!(e.to_string().contains("scale factor"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "qeries": []})).unwrap_err();
        assert!(e.to_string().contains("qeries"), "{e}");
        let e = WorkloadKind::from_json("tpch-power", &json!({"sf": 1, "streams": 2})).unwrap_err();
        assert!(e.to_string().contains("tpch-throughput"), "{e}");
        let t =
            WorkloadKind::from_json("tpch-throughput", &json!({"sf": 0.01, "streams": 2})).unwrap();
        assert_eq!(
            (t.name(), t.options_json()["streams"].as_u64()),
            ("tpch_throughput", Some(2))
        );
        let e = WorkloadKind::from_json("nope", &json!({})).unwrap_err();
        assert!(matches!(e, WorkloadError::UnknownWorkload(_)), "{e}");
    }
}
