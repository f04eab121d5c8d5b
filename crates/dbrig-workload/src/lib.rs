//! dbrig-workload: the workloads and the one runner loop that drives them.
//!
//! A [`Workload`] knows its tables (prepare / cleanup), opens per-client state and runs one
//! *event* at a time on a connection, counting statements the way sysbench does. The
//! [`runner`] drives N clients over a few async workers, closed loop or open loop, and returns
//! what they measured ([`dbrig_core::RunMeasurements`], mergeable); each client-driven kind
//! makes its own result of it ([`Workload::trial_output`]). SQL lives in `.sql` files per
//! dialect (see [`sql`]).
//!
//! Contract: no dependency on the results store or on reports; servers are reached only
//! through `dbrig-driver`.

pub mod connect;
pub mod error;
pub mod kind;
pub mod kinds;
pub mod load_test;
mod loading;
pub mod lua;
pub mod micro;
pub mod oltp;
mod oltp_result;
pub mod options;
pub mod os_meter;
pub mod perfrun;
pub mod progress;
pub mod registry;
pub mod runner;
pub mod script;
pub mod sql;
pub mod sqlbench;
pub mod sysbench_bulk;
mod tasks;
pub mod tpcc;
pub mod tpch;

use dbrig_core::{EventTally, KeyGenerator};
use dbrig_driver::{Connection, DriverError};

pub use error::WorkloadError;
pub use kind::{Kind, Prepared, TrialOutput, WorkloadKind};
pub use kinds::{PowerRef, TpchPowerOptions};
pub use load_test::{LoadOf, LoadTest};
pub use lua::{LuaOptions, LuaWorkload};
pub use oltp::{Oltp, OltpKind, OltpOptions};
pub use options::RunOptions;
pub use progress::{Progress, ProgressEvent, Quiet};
pub use script::{Protocol, ScriptOptions, ScriptWorkload};

/// Every built-in workload; matched here and nowhere else.
#[derive(Debug, Clone)]
pub enum Workload {
    Oltp(Oltp),
    /// pgbench scripts (files and built-ins).
    Script(ScriptWorkload),
    /// sysbench Lua scripts, run unchanged.
    Lua(LuaWorkload),
    /// Connection set-up itself: each event a new connection.
    Connect,
    /// TPC-C's five transactions (client-side statements).
    Tpcc(tpcc::Tpcc),
}

/// A client's per-connection state for its workload.
#[derive(Debug)]
pub enum Client {
    Oltp(oltp::OltpClient),
    Script(script::ScriptClient),
    Lua(Box<lua::LuaClient>),
    Connect(connect::ConnectClient),
    Tpcc(Box<tpcc::txn::TpccClient>),
}

/// A workload's name, aliases and one-line description, for `dbrig list`.
#[derive(Debug, Clone)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
}

/// All built-in workloads.
pub fn catalog() -> Vec<WorkloadInfo> {
    OltpKind::ALL
        .iter()
        .map(|k| WorkloadInfo {
            name: k.name(),
            aliases: k.aliases(),
            description: k.description(),
        })
        .collect()
}

impl Workload {
    /// Resolve a workload name (or alias) with its options.
    pub fn from_name(name: &str, oltp: OltpOptions) -> Result<Workload, WorkloadError> {
        if name.trim().eq_ignore_ascii_case(connect::NAME) {
            return Ok(Workload::Connect);
        }
        let kind = OltpKind::from_name(name)
            .ok_or_else(|| WorkloadError::UnknownWorkload(name.to_owned()))?;
        Ok(Workload::Oltp(Oltp::new(kind, oltp)))
    }

    /// The kind this client-driven workload is, for a plan's cell.
    pub fn into_kind(self) -> WorkloadKind {
        match self {
            Workload::Oltp(_) => WorkloadKind::new(kinds::SysbenchOltp::new(self)),
            Workload::Script(_) => WorkloadKind::new(kinds::PgbenchScripts::new(self)),
            Workload::Lua(_) => WorkloadKind::new(kinds::LuaScript::new(self)),
            Workload::Connect => WorkloadKind::new(kinds::Connect::new()),
            Workload::Tpcc(_) => WorkloadKind::new(kinds::Tpcc::new(self)),
        }
    }

    /// A script workload (`--script` / `--builtin`).
    pub fn script(options: ScriptOptions) -> Result<Workload, WorkloadError> {
        Ok(Workload::Script(ScriptWorkload::new(options)?))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Oltp(o) => o.kind.name(),
            Workload::Script(_) => script::NAME,
            Workload::Lua(l) => l.name(),
            Workload::Connect => connect::NAME,
            Workload::Tpcc(_) => tpcc::NAME,
        }
    }

    /// The workload's own options as JSON (stored with results).
    pub fn options_json(&self) -> serde_json::Value {
        match self {
            Workload::Oltp(o) => serde_json::to_value(&*o.options).unwrap_or_default(),
            Workload::Script(s) => serde_json::to_value(&*s.options).unwrap_or_default(),
            Workload::Lua(l) => l.options_json(),
            Workload::Connect => serde_json::json!({}),
            Workload::Tpcc(t) => serde_json::to_value(&*t.options).unwrap_or_default(),
        }
    }

    /// Where this run does not do exactly what sysbench does, or what the engine does to the
    /// figures, a line each for the report.
    pub fn notes(&self, target: &dbrig_driver::Target, protocol: Protocol) -> Vec<String> {
        match self {
            Workload::Oltp(o) => o.notes(target),
            Workload::Script(s) => s.notes(protocol),
            Workload::Lua(l) => l.notes(),
            Workload::Connect => Vec::new(),
            Workload::Tpcc(t) => t.notes(target),
        }
    }

    /// This kind's trial result from what its clients measured: the runner decides no result
    /// type. Every kind here reports the OLTP figures (sysbench's, pgbench's), each with its
    /// own notes; a kind with figures of its own (TPC-C) makes them here from the same run.
    pub fn trial_output(&self, run: runner::RunOutcome, spec: &runner::RunSpec) -> TrialOutput {
        let notes = self.notes(
            &spec.target,
            spec.options.protocol_or(self.default_protocol()),
        );
        match self {
            Workload::Oltp(_) => oltp_result::trial_output(run, spec, notes),
            Workload::Script(_) => oltp_result::trial_output(run, spec, notes),
            // sysbench's figures, as sysbench reports a script's run.
            Workload::Lua(_) => oltp_result::trial_output(run, spec, notes),
            // Each event a connection: its figures are the OLTP ones, transactions the
            // connections made.
            Workload::Connect => oltp_result::trial_output(run, spec, notes),
            // Its own figures need the server's counters around the run: made by the kind's
            // trial (`Tpcc::trial_output`); here only what the clients measured.
            Workload::Tpcc(_) => oltp_result::trial_output(run, spec, notes),
        }
    }

    /// How statements are sent unless the run says (`--protocol`, `--ps-mode`): prepared, as
    /// sysbench's `--db-ps-mode=auto`; pgbench scripts simple, pgbench's default.
    pub fn default_protocol(&self) -> Protocol {
        match self {
            Workload::Oltp(_) | Workload::Connect | Workload::Lua(_) | Workload::Tpcc(_) => {
                Protocol::Prepared
            }
            Workload::Script(_) => script::DEFAULT_PROTOCOL,
        }
    }

    /// Whether each client gains its own thread wherever its connection can block in the socket
    /// ([`dbrig_driver::Target::blocks_on_own_thread`]), whatever the engine's rule for
    /// sharing workers. A sysbench Lua script's statement runs to its end within the script's
    /// call only on a blocking connection; on a shared worker every statement waits through a
    /// coroutine yield and resume.
    pub fn wants_own_thread(&self) -> bool {
        matches!(self, Workload::Lua(_))
    }

    /// Error codes this workload retries beyond `--retry-codes` on this dialect.
    pub fn extra_retry_codes(&self, dialect: dbrig_driver::Dialect) -> Vec<&'static str> {
        match self {
            Workload::Oltp(o) if o.retries_duplicate_keys(dialect) => vec![oltp::DUPLICATE_KEY],
            Workload::Oltp(_)
            | Workload::Script(_)
            | Workload::Lua(_)
            | Workload::Connect
            | Workload::Tpcc(_) => Vec::new(),
        }
    }

    pub async fn check_ready(
        &self,
        conn: &mut Connection,
        threads: u32,
        allow_mismatch: bool,
    ) -> Result<Vec<String>, WorkloadError> {
        match self {
            Workload::Oltp(o) => o.check_ready(conn, threads, allow_mismatch).await,
            Workload::Script(s) => s.check_ready(conn).await,
            Workload::Tpcc(t) => t.check_ready(conn, threads, allow_mismatch).await,
            Workload::Lua(_) | Workload::Connect => Ok(Vec::new()),
        }
    }

    pub async fn new_client(
        &self,
        conn: &mut Connection,
        index: u32,
        threads: u32,
        keys: KeyGenerator,
        seed: u64,
    ) -> Result<Client, DriverError> {
        match self {
            Workload::Oltp(o) => Ok(Client::Oltp(
                o.new_client(conn, index, threads, keys).await?,
            )),
            Workload::Script(s) => Ok(Client::Script(
                s.new_client(conn, index, threads, seed).await?,
            )),
            Workload::Lua(l) => Ok(Client::Lua(Box::new(
                l.new_client(conn, index, threads, keys, seed).await?,
            ))),
            Workload::Connect => Ok(Client::Connect(connect::ConnectClient)),
            Workload::Tpcc(t) => Ok(Client::Tpcc(Box::new(
                t.new_client(conn, index, threads, seed).await?,
            ))),
        }
    }
}

impl Client {
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        match self {
            Client::Oltp(c) => c.event(conn, q).await,
            Client::Script(c) => c.event(conn, q).await,
            Client::Lua(c) => c.event(conn, q).await,
            Client::Connect(c) => c.event(conn, q).await,
            Client::Tpcc(c) => c.event(conn, q).await,
        }
    }

    /// When the client's next event is due, where the workload paces its own events (TPC-C's
    /// keying and think times); `None`: at once. The wait is not the event's: its latency
    /// counts from the instant returned.
    pub fn due(&mut self) -> Option<std::time::Instant> {
        match self {
            Client::Tpcc(c) => c.due(),
            _ => None,
        }
    }

    /// Why an error that stopped this client happened, when the workload knows.
    pub fn fatal_hint(&self, e: &DriverError) -> Option<String> {
        match self {
            Client::Oltp(c) => c.fatal_hint(e),
            Client::Script(_) | Client::Lua(_) | Client::Connect(_) | Client::Tpcc(_) => None,
        }
    }

    /// Whether the workload ended this client itself (a Lua script's `event()` returned true).
    pub fn stopped(&self) -> bool {
        matches!(self, Client::Lua(c) if c.stopped())
    }

    /// The client's last act before its connection closes (a Lua script's `thread_done`,
    /// bulk_insert's last rows), its statements counted in `q`; an error it reports.
    pub async fn finish(&mut self, conn: &mut Connection, q: &mut EventTally) -> Option<String> {
        match self {
            Client::Oltp(c) => c.finish(conn, q).await,
            Client::Script(_) | Client::Connect(_) | Client::Tpcc(_) => None,
            Client::Lua(c) => c.finish(conn, q).await,
        }
    }

    pub async fn abort(&mut self, conn: &mut Connection) {
        match self {
            Client::Oltp(c) => c.abort(conn).await,
            Client::Script(c) => c.abort(conn).await,
            Client::Lua(c) => c.abort(conn).await,
            Client::Connect(_) => {}
            Client::Tpcc(c) => c.abort(conn).await,
        }
    }
}
