//! The load test as a workload of its own: a workload's data load (the OLTP tables, the TPC-H
//! tables at a scale factor, pgbench's tables) measured as a trial, so `dbrig prepare`,
//! `dbrig tpch load` and a plan's `load` workload go through the one executor and recorder and
//! are stored and reported like every other kind ([`LoadResult`]: the timed steps and the rows
//! and MB per second per table and in total).
//!
//! A plan's `[[workload]] name = "load"` names what it loads with `of` (an OLTP workload's name,
//! `tpch` or `pgbench-init`) beside that workload's own data options. Each trial starts from
//! nothing: the tables dbrig made before are dropped first (proven by their markers, as
//! `dbrig cleanup` does), so trials repeat. `dbrig prepare` keeps sysbench's rule instead and
//! refuses tables that exist.

use std::time::Instant;

use dbrig_core::results::{LoadResult, LoadStep};
use dbrig_driver::{ConnectOptions, Connection, Target};

use crate::error::WorkloadError;
use crate::kinds::tpch::TpchPowerOptions;
use crate::progress::Progress;
use crate::{Oltp, OltpKind, OltpOptions, ScriptOptions, Workload, tpch};

/// The name plans and stored cells use.
pub const NAME: &str = "load";

/// Whose data a load test loads.
#[derive(Debug, Clone)]
pub enum LoadOf {
    /// An OLTP workload's tables.
    Oltp(Oltp),
    /// The TPC-H tables (scale factor, keys, loaders and `force-load` apply).
    Tpch(Box<TpchPowerOptions>),
    /// pgbench's tables (pgbench -i): scale, fillfactor, foreign keys.
    PgbenchInit(ScriptOptions),
    /// The TPC-C tables (warehouses, loaders, the check after the load).
    Tpcc(crate::tpcc::TpccOptions),
}

/// A load measured as a trial.
#[derive(Debug, Clone)]
pub struct LoadTest {
    pub of: LoadOf,
    /// Drop the tables dbrig made before loading (a plan's trials); `false`: refuse tables
    /// that exist, as sysbench's prepare does (`dbrig prepare`).
    pub replace: bool,
}

/// `of`'s spelling of TPC-H and pgbench-init (an OLTP workload goes by its own name).
const OF_TPCH: &str = "tpch";
const OF_PGBENCH: &str = "pgbench-init";
const OF_TPCC: &str = crate::tpcc::NAME;

impl LoadTest {
    /// The plan's form: `of` and `replace` (default true), the rest the loaded workload's
    /// own data options.
    pub fn from_json(options: &serde_json::Value) -> Result<Self, WorkloadError> {
        let mut rest = options.as_object().cloned().unwrap_or_default();
        let of = match rest.remove("of") {
            Some(serde_json::Value::String(s)) => s,
            _ => {
                return Err(WorkloadError::InvalidOptions(format!(
                    "load options: `of` names what to load: an OLTP workload (oltp_read_write, …), \"{OF_TPCH}\" or \"{OF_PGBENCH}\""
                )));
            }
        };
        let replace = match rest.remove("replace") {
            None => true,
            Some(serde_json::Value::Bool(b)) => b,
            Some(v) => {
                return Err(WorkloadError::InvalidOptions(format!(
                    "load options: replace must be true or false, not {v}"
                )));
            }
        };
        let rest = serde_json::Value::Object(rest);
        let bad =
            |e: serde_json::Error| WorkloadError::InvalidOptions(format!("load of {of}: {e}"));
        let of = match of.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            OF_TPCH | "tpch-power" | "tpch-throughput" => {
                let o: TpchPowerOptions = serde_json::from_value(rest).map_err(bad)?;
                tpch::ScaleFactor::new(o.sf)?;
                LoadOf::Tpch(Box::new(o))
            }
            OF_PGBENCH => LoadOf::PgbenchInit(serde_json::from_value(rest).map_err(bad)?),
            OF_TPCC => LoadOf::Tpcc(serde_json::from_value(rest).map_err(bad)?),
            _ => {
                let oltp: OltpOptions = serde_json::from_value(rest).map_err(bad)?;
                match Workload::from_name(&of, oltp)? {
                    Workload::Oltp(o) => LoadOf::Oltp(o),
                    _ => {
                        return Err(WorkloadError::InvalidOptions(format!(
                            "load: {of} has no data load of its own"
                        )));
                    }
                }
            }
        };
        Ok(LoadTest { of, replace })
    }

    /// The options as stored with the cell: `of`, `replace` and the loaded workload's options.
    pub fn options_json(&self) -> serde_json::Value {
        let (of, options) = match &self.of {
            LoadOf::Oltp(o) => (
                o.kind.name(),
                serde_json::to_value(&*o.options).unwrap_or_default(),
            ),
            LoadOf::Tpch(o) => (OF_TPCH, serde_json::to_value(o).unwrap_or_default()),
            LoadOf::PgbenchInit(o) => (OF_PGBENCH, serde_json::to_value(o).unwrap_or_default()),
            LoadOf::Tpcc(o) => (OF_TPCC, serde_json::to_value(o).unwrap_or_default()),
        };
        let mut v = serde_json::json!({ "of": of, "replace": self.replace });
        if let (Some(map), Some(o)) = (v.as_object_mut(), options.as_object()) {
            map.extend(o.clone());
        }
        v
    }

    /// What the loaded data is: the same identity as the workload that will run on it, so a
    /// plan's load and its OLTP or TPC-H cells share one database.
    pub fn data_identity(&self) -> serde_json::Value {
        match &self.of {
            LoadOf::Oltp(o) => crate::kinds::oltp::oltp_identity(&o.options),
            LoadOf::Tpch(o) => crate::kinds::tpch::tpch_identity(o),
            LoadOf::PgbenchInit(o) => crate::kinds::script::pgbench_identity(o),
            LoadOf::Tpcc(o) => o.data_identity(),
        }
    }

    /// Whether the data fits in `space` (the free space dbrig can see): TPC-H's scale factor,
    /// pgbench-init's scale (an OLTP prepare's size is bounded by its options' ranges).
    pub fn check_fits(&self, space: Option<(&std::path::Path, u64)>) -> Result<(), WorkloadError> {
        match &self.of {
            LoadOf::Tpch(o) => {
                let sf = tpch::ScaleFactor::new(o.sf)?;
                tpch::check_load_fits(sf, space, o.force_load)
            }
            LoadOf::PgbenchInit(o) => crate::script::init::check_fits(o, space),
            LoadOf::Oltp(_) | LoadOf::Tpcc(_) => Ok(()),
        }
    }

    /// The TPC-H load's scale factor, checked against the free space before the trial.
    pub fn tpch(&self) -> Option<&TpchPowerOptions> {
        match &self.of {
            LoadOf::Tpch(o) => Some(&**o),
            _ => None,
        }
    }

    /// What a single command is refused for before anything is recorded: TPC-H data larger
    /// than `space` (checked before connecting: an SQLite target is not created), a server
    /// that does not answer, and (without `replace`) tables that exist. `threads`: as for the
    /// trial.
    pub async fn preflight(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        space: Option<(&std::path::Path, u64)>,
    ) -> Result<(), WorkloadError> {
        self.check_fits(space)?;
        let mut conn = Connection::connect(target, connect).await?;
        let refused = match (&self.of, self.replace) {
            (_, true) | (LoadOf::PgbenchInit(_), _) => Ok(()),
            (LoadOf::Oltp(o), false) => o.refuse_existing(&mut conn, target, threads).await,
            (LoadOf::Tpch(_), false) => tpch::refuse_existing(&mut conn, target).await,
            (LoadOf::Tpcc(_), false) => crate::tpcc::refuse_existing(&mut conn, target).await,
        };
        conn.close().await;
        refused
    }

    /// Load the data once, timed. `threads`: the clients a bulk-insert workload makes tables
    /// for; `seed`: the OLTP data's.
    pub async fn trial(
        &self,
        target: &Target,
        connect: &ConnectOptions,
        threads: u32,
        seed: u64,
        progress: &dyn Progress,
    ) -> Result<LoadResult, WorkloadError> {
        let conn = Connection::connect(target, connect).await?;
        let server_version = conn.server_version().to_owned();
        conn.close().await;
        let started = Instant::now();
        let mut r = match &self.of {
            LoadOf::Oltp(o) => {
                if self.replace {
                    let c = o.cleanup(target, connect, threads).await?;
                    if !c.dropped.is_empty() {
                        progress.note(&format!("dropped {} first", c.dropped.join(", ")));
                    }
                }
                let p = o.prepare(target, connect, threads, seed, progress).await?;
                let x = &o.options;
                LoadResult {
                    of: o.kind.name().to_owned(),
                    data: if o.kind == OltpKind::BulkInsert {
                        format!("{} empty table(s)", p.tables.len())
                    } else {
                        format!("{} table(s) of {} rows", x.tables, x.table_size)
                    },
                    steps: vec![step("load", p.load_s), step("indexes", p.index_s)],
                    loaders: p.parallel,
                    figures: p.figures,
                    ..LoadResult::default()
                }
            }
            LoadOf::Tpch(o) => {
                let sf = tpch::ScaleFactor::new(o.sf)?;
                if self.replace {
                    let c = tpch::cleanup(target, connect).await?;
                    if !c.dropped.is_empty() {
                        progress.note(&format!("dropped {} TPC-H table(s) first", c.dropped.len()));
                    }
                }
                let l = tpch::load(target, connect, &o.load_options(sf), progress).await?;
                LoadResult {
                    of: OF_TPCH.to_owned(),
                    data: format!("TPC-H SF {sf}, keys {} the rows", l.keys.as_str()),
                    steps: l.steps.iter().map(|s| step(&s.name, s.seconds)).collect(),
                    loaders: l.parallel,
                    figures: l.figures,
                    size_bytes: Some(l.size_bytes),
                    ..LoadResult::default()
                }
            }
            LoadOf::PgbenchInit(o) => {
                // pgbench -i drops pgbench's tables itself before it makes them.
                let i = crate::script::init::init(target, connect, o, progress).await?;
                LoadResult {
                    of: OF_PGBENCH.to_owned(),
                    data: format!("pgbench scale {}", i.scale),
                    steps: vec![step("init", i.seconds)],
                    loaders: 1,
                    figures: i.figures,
                    ..LoadResult::default()
                }
            }
            LoadOf::Tpcc(o) => {
                if self.replace {
                    let c = crate::tpcc::cleanup(target, connect).await?;
                    if !c.dropped.is_empty() {
                        progress.note(&format!("dropped {} TPC-C table(s) first", c.dropped.len()));
                    }
                }
                let l = crate::tpcc::load(target, connect, &o.load_options(seed), progress).await?;
                LoadResult {
                    of: OF_TPCC.to_owned(),
                    data: format!(
                        "TPC-C, {} warehouse(s){}",
                        l.warehouses,
                        match &l.check {
                            Some(c) if c.passed() => ", consistency checked",
                            _ => "",
                        }
                    ),
                    steps: l.steps.iter().map(|s| step(&s.name, s.seconds)).collect(),
                    loaders: l.parallel,
                    figures: l.figures,
                    size_bytes: Some(l.size_bytes),
                    ..LoadResult::default()
                }
            }
        };
        r.server_version = server_version;
        r.total_seconds = started.elapsed().as_secs_f64();
        Ok(r)
    }
}

fn step(name: &str, seconds: f64) -> LoadStep {
    LoadStep {
        name: name.to_owned(),
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plans_load_names_what_it_loads() {
        let l = LoadTest::from_json(&json!({"of": "oltp_read_only", "table-size": 10})).unwrap();
        assert!(l.replace);
        let v = l.options_json();
        assert_eq!(
            (v["of"].as_str(), v["table-size"].as_u64()),
            (Some("oltp_read_only"), Some(10))
        );
        // The same data as the workload that runs on it.
        let ro =
            crate::WorkloadKind::from_json("oltp_read_only", &json!({"table-size": 10})).unwrap();
        assert_eq!(Some(l.data_identity()), ro.data_identity());
        let t = LoadTest::from_json(&json!({"of": "tpch", "sf": 0.01, "replace": false})).unwrap();
        assert!(!t.replace && t.tpch().is_some());
        let power = crate::WorkloadKind::from_json("tpch-power", &json!({"sf": 0.01})).unwrap();
        assert_eq!(Some(t.data_identity()), power.data_identity());
        let p = LoadTest::from_json(&json!({"of": "pgbench-init", "scale": 2})).unwrap();
        assert_eq!(p.options_json()["scale"], 2);
        // Round trip through the stored options.
        let back = LoadTest::from_json(&l.options_json()).unwrap();
        assert_eq!(back.options_json(), l.options_json());
    }

    #[test]
    fn a_load_of_nothing_loadable_is_refused() {
        for (options, says) in [
            (json!({}), "`of` names what to load"),
            (json!({"of": "connect"}), "no data load"),
            (json!({"of": "nope"}), "nope"),
            (json!({"of": "tpch", "sf": 0}), "scale factor"),
            (json!({"of": "oltp_read_write", "rowz": 1}), "rowz"),
            (
                json!({"of": "tpch", "sf": 1, "replace": "yes"}),
                "true or false",
            ),
        ] {
            let e = LoadTest::from_json(&options).unwrap_err().to_string();
            assert!(e.contains(says), "{options}: {e}");
        }
    }
}
