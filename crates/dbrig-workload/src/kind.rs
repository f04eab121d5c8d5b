//! Every kind of workload a plan's `[[workload]]` can name, behind one trait: a [`Kind`] is
//! its name, its options (stored with the cell and hashed into its key), the identity of the
//! data it prepares, its preflight, its prepare step and its trial, which returns the kind's
//! typed [`dbrig_core::results::TrialResult`] in a [`TrialOutput`], everything it tells on the
//! way going through one [`Progress`]. Each kind is a module of `kinds/`; this file
//! holds the trait and what every kind shares; the registry that resolves a plan's name to a
//! kind is `kinds/mod.rs`'s (`REGISTRY`). Nothing here matches a kind.
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

/// One kind of workload: a module of `kinds/` implements it and adds one line to
/// `kinds/mod.rs`'s `REGISTRY`. Every method but the identity and the trial has the default of a kind that
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

/// A plan's workload: one registered [`Kind`].
#[derive(Debug)]
pub struct WorkloadKind(pub(crate) Box<dyn Kind>);

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
