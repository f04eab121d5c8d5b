//! What the TPC-H power and throughput tests share: their options in a plan, the data they
//! run on (its identity, the prepare step that loads it, the preflight that finds it loaded),
//! each test being a kind of its own (`tpch_power.rs`, `tpch_throughput.rs`).

use std::path::{Path, PathBuf};

use dbrig_core::limits;
use dbrig_driver::{ConnectOptions, Connection, Target};
use serde::{Deserialize, Serialize};

use crate::error::WorkloadError;
use crate::kind::Prepared;
use crate::progress::Progress;
use crate::tpch::{self, KeysWhen, ParamMode, QuerySet, ScaleFactor};

/// Options of a TPC-H power or throughput test in a plan (`streams` and `timeout` are the
/// throughput test's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TpchPowerOptions {
    /// Scale factor of the data the prepare step loads (0.01, 0.1, 1, …). A single command
    /// (`dbrig tpch power`) runs on the data that is loaded and records its scale factor.
    pub sf: f64,
    /// Run only these queries (TPC-H numbers or file stems), in stream-0 order; all when empty.
    #[serde(default)]
    pub queries: Vec<String>,
    /// A folder of `.sql` files to run instead of the built-in queries.
    #[serde(default)]
    pub query_dir: Option<PathBuf>,
    /// Random qgen parameters from this seed; the validation parameters when absent.
    #[serde(default, deserialize_with = "limits::de_opt::<limits::Seed, _>")]
    pub seed: Option<u64>,
    /// Run the refresh functions RF1/RF2 around the queries (they change the data).
    #[serde(default)]
    pub refresh: bool,
    /// Primary keys created before or after the load (`auto`: the engine's fast path, see
    /// [`KeysWhen::resolved`]).
    #[serde(default = "keys_auto")]
    pub keys: KeysWhen,
    /// Loader connections (0: one per CPU, at least 2; SQLite always 1).
    #[serde(default, deserialize_with = "limits::de::<limits::Loaders, _>")]
    pub parallel: u32,
    /// Throughput test: concurrent query streams (0: the spec's minimum for the scale factor).
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "limits::de::<limits::Streams, _>"
    )]
    pub streams: u32,
    /// Throughput test: seconds a query may run before it is cancelled on the server.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub timeout: Option<f64>,
    /// Power test: the DBT-3 launcher's per-query controls (`[workload.options.controls]`:
    /// reduction, restarts, cache drops; `[….controls.all]` and `[….controls.query."N"]` with
    /// runs, warm-ups, timeouts, startup params, hooks); see `dbrig tpch power --help`.
    #[serde(default, skip_serializing_if = "tpch::PowerControls::is_default")]
    pub controls: tpch::PowerControls,
    /// Throughput test: a stored power test on the same data, for QphH@Size (set by
    /// `dbrig tpch throughput --power-run RUN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_run: Option<PowerRef>,
    /// Power test: a target holding the same data (another engine): every query's answer is
    /// compared with its answer there (run untimed, before the test), so a completed query
    /// reads `ok` only when compared; without it (and off SF 1's reference answers) it reads
    /// `unchecked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_against: Option<String>,
    /// Load even when the data's estimated size exceeds the free space dbrig can see (or 1 TB
    /// where it cannot): the plan's `--force` of `dbrig tpch load`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_load: bool,
}

pub use dbrig_core::results::tpch::PowerRef;

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn keys_auto() -> KeysWhen {
    KeysWhen::Auto
}

impl TpchPowerOptions {
    pub(crate) fn validate(&self) -> Result<ScaleFactor, WorkloadError> {
        self.refuse_refresh_beside_check()?;
        if let Some(dir) = &self.query_dir {
            QuerySet::from_dir(dir)?;
        }
        if !self.controls.is_default() {
            // Query names are the same in every dialect's built-in set.
            let set = self.query_set(dbrig_driver::Dialect::Postgres)?;
            self.controls
                .validate(&set)
                .map_err(tpch::TpchError::PowerControls)?;
        }
        Ok(ScaleFactor::new(self.sf)?)
    }

    /// `check-against` with the refresh functions on: the other target's answers are those of
    /// the loaded data, but RF1 adds rows here before the queries, so every query over them
    /// would read `wrong`.
    pub(crate) fn refuse_refresh_beside_check(&self) -> Result<(), WorkloadError> {
        match self.check_against.is_some() && self.refresh {
            true => Err(WorkloadError::InvalidOptions(
                "tpch_power: check-against compares answers on the same data, but the refresh functions change this target's before the queries: add --no-refresh (in a plan: refresh = false)".into(),
            )),
            false => Ok(()),
        }
    }

    /// How the data is loaded: at `sf`, with the keys and loaders asked for.
    pub(crate) fn load_options(&self, sf: ScaleFactor) -> tpch::LoadOptions {
        tpch::LoadOptions {
            scale_factor: sf,
            keys: self.keys,
            parallel: self.parallel,
        }
    }

    pub(crate) fn params(&self) -> ParamMode {
        match self.seed {
            Some(seed) => ParamMode::Random { seed },
            None => ParamMode::Validation,
        }
    }

    /// The queries to run: `None` for the built-in set of the target's dialect.
    pub(crate) fn chosen_queries(
        &self,
        dialect: dbrig_driver::Dialect,
    ) -> Result<Option<QuerySet>, WorkloadError> {
        (self.query_dir.is_some() || !self.queries.is_empty())
            .then(|| self.query_set(dialect))
            .transpose()
    }

    /// The query set of a dialect, narrowed to `queries` when given.
    pub(crate) fn query_set(
        &self,
        dialect: dbrig_driver::Dialect,
    ) -> Result<QuerySet, WorkloadError> {
        let all = match &self.query_dir {
            Some(dir) => QuerySet::from_dir(dir)?,
            None => QuerySet::builtin(dialect),
        };
        if self.queries.is_empty() {
            return Ok(all);
        }
        if let Some(q) = self.queries.iter().find(|q| all.get(q).is_none()) {
            return Err(WorkloadError::InvalidOptions(format!(
                "tpch_power: query '{q}' is not in the query set (queries: {})",
                all.queries
                    .iter()
                    .map(|q| q.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(QuerySet {
            queries: all
                .queries
                .into_iter()
                .filter(|q| self.queries.contains(&q.name))
                .collect(),
        })
    }
}

/// What the TPC-H data depends on: scale factor and keys.
pub(crate) fn tpch_identity(o: &TpchPowerOptions) -> serde_json::Value {
    serde_json::json!({ "tpch": { "sf": o.sf, "keys": o.keys } })
}

/// The options of `tpch_power` or `tpch_throughput` (`kind`), validated.
pub(crate) fn parse(
    kind: &str,
    options: &serde_json::Value,
) -> Result<TpchPowerOptions, WorkloadError> {
    let o: TpchPowerOptions = crate::kind::options_of(kind, options)?;
    o.validate()?;
    Ok(o)
}

/// The data both tests run on, loaded when it is missing (at the plan's scale factor),
/// loaded again when an interrupted load left it half-made.
pub(crate) async fn prepare_if_missing(
    o: &TpchPowerOptions,
    target: &Target,
    connect: &ConnectOptions,
    space: Option<(&Path, u64)>,
    progress: &dyn Progress,
) -> Result<Option<Prepared>, WorkloadError> {
    let sf = o.validate()?;
    let mut conn = Connection::connect(target, connect).await?;
    let mut present = 0;
    let mut half = false;
    for t in tpch::Table::ALL {
        if conn.table_exists(t.name()).await? {
            present += 1;
            half |= crate::registry::lookup(&mut conn, t.name())
                .await?
                .is_some_and(|e| e.state == "loading");
        }
    }
    if half {
        // dbrig's own tables (cleanup proves each by its marker), left by an
        // interrupted load: never measured, loaded again.
        conn.close().await;
        progress.note(&format!(
                "TPC-H tables on {target} were left half-loaded by an interrupted load: dropping them and loading SF {sf} again"
            ));
        tpch::cleanup(target, connect).await?;
        conn = Connection::connect(target, connect).await?;
        present = 0;
    }
    let loaded = if present == tpch::Table::ALL.len() {
        if let Err(e) = tpch::check_loaded(&mut conn).await {
            conn.close().await;
            return Err(e);
        }
        Some(tpch::detect_scale_factor(&mut conn).await?)
    } else if present == 0 {
        None
    } else {
        conn.close().await;
        return Err(WorkloadError::InvalidOptions(format!(
            "only {present} of the 8 TPC-H tables exist on {target} (an interrupted load?): drop them with `dbrig tpch cleanup`, then run the plan again"
        )));
    };
    conn.close().await;
    match loaded {
        Some(have) if (have - sf.get()).abs() < 1e-9 => Ok(None),
        Some(have) => Err(WorkloadError::InvalidOptions(format!(
            "the TPC-H tables on {target} hold SF {have}, the plan wants SF {sf}: drop them with `dbrig tpch cleanup` (or use another database)"
        ))),
        None => {
            tpch::check_load_fits(sf, space, o.force_load)?;
            progress.note(&format!("loading TPC-H SF {sf} into {target}"));
            let r = tpch::load(target, connect, &o.load_options(sf), progress).await?;
            Ok(Some(Prepared {
                line: format!("loaded TPC-H SF {sf} in {:.2} s", r.total_seconds),
                figures: Some(r.figures),
            }))
        }
    }
}

/// A single command's check that the data is loaded, and what only the target knows: its
/// scale factor, the controls' queries in its set, the throughput test's stream count.
pub(crate) async fn preflight(
    o: &mut TpchPowerOptions,
    target: &Target,
    connect: &ConnectOptions,
) -> Result<(), WorkloadError> {
    o.refuse_refresh_beside_check()?;
    let mut conn = Connection::connect(target, connect).await?;
    let checked = async {
        tpch::check_loaded(&mut conn).await?;
        let sf = tpch::detect_scale_factor(&mut conn).await?;
        // A single command runs on the data that is there.
        o.sf = sf;
        let set = o.query_set(conn.dialect())?;
        o.controls
            .validate(&set)
            .map_err(tpch::TpchError::PowerControls)?;
        if o.streams == 0 {
            // Decided here so that the stored cell says how many streams ran.
            o.streams = tpch::min_streams(sf);
        }
        if let Some(p) = &o.power_run
            && (p.scale_factor - sf).abs() > 1e-9
        {
            return Err(WorkloadError::InvalidOptions(format!(
                "power run {} was at SF {} but {target} holds SF {sf}: QphH@Size needs both tests on the same data",
                p.run, p.scale_factor
            )));
        }
        Ok(())
    }
    .await;
    conn.close().await;
    checked
}

/// The methods both TPC-H tests implement the same way, for their `impl Kind` (the kind holds
/// its [`TpchPowerOptions`] as `.0`): options, the data they share (its identity, prepare step
/// and preflight), whether they write (the refresh functions).
macro_rules! tpch_data_methods {
    () => {
        fn options_json(&self) -> serde_json::Value {
            serde_json::to_value(&self.0).unwrap_or_default()
        }

        fn clone_kind(&self) -> Box<dyn crate::kind::Kind> {
            Box::new(self.clone())
        }

        fn writes(&self) -> bool {
            self.0.refresh
        }

        fn cleanup_command(&self) -> String {
            "dbrig tpch cleanup".into()
        }

        fn loads_large_data(&self) -> bool {
            true
        }

        fn data_identity(&self) -> Option<serde_json::Value> {
            Some(super::tpch::tpch_identity(&self.0))
        }

        fn has_preflight(&self) -> bool {
            true
        }

        fn preflight<'a>(
            &'a mut self,
            target: &'a dbrig_driver::Target,
            connect: &'a dbrig_driver::ConnectOptions,
            _threads: u32,
            _space: Option<(&'a std::path::Path, u64)>,
        ) -> crate::kind::KindFuture<'a, ()> {
            Box::pin(super::tpch::preflight(&mut self.0, target, connect))
        }

        fn prepare_if_missing<'a>(
            &'a self,
            target: &'a dbrig_driver::Target,
            connect: &'a dbrig_driver::ConnectOptions,
            _threads: u32,
            _seed: u64,
            space: Option<(&'a std::path::Path, u64)>,
            progress: &'a dyn crate::progress::Progress,
        ) -> crate::kind::KindFuture<'a, Option<crate::kind::Prepared>> {
            Box::pin(super::tpch::prepare_if_missing(
                &self.0, target, connect, space, progress,
            ))
        }
    };
}
pub(crate) use tpch_data_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpch_query_subset_keeps_stream_order_and_refuses_unknown_names() {
        let o = TpchPowerOptions {
            sf: 0.01,
            queries: vec!["1".into(), "14".into(), "6".into()],
            query_dir: None,
            seed: None,
            refresh: false,
            keys: KeysWhen::After,
            parallel: 0,
            streams: 0,
            timeout: None,
            controls: tpch::PowerControls::default(),
            power_run: None,
            check_against: None,
            force_load: false,
        };
        let set = o.query_set(dbrig_driver::Dialect::Sqlite).unwrap();
        let names: Vec<&str> = set.queries.iter().map(|q| q.name.as_str()).collect();
        // Stream 0 runs 14 before 6 before 1.
        assert_eq!(names, ["14", "6", "1"]);
        let bad = TpchPowerOptions {
            queries: vec!["23".into()],
            ..o
        };
        let e = bad.query_set(dbrig_driver::Dialect::Sqlite).unwrap_err();
        assert!(e.to_string().contains("query '23'"), "{e}");
        // Answers checked against another target need this target's data unrefreshed.
        let checked = TpchPowerOptions {
            check_against: Some("sqlite:other.db".into()),
            ..bad.clone()
        };
        assert!(checked.validate().is_ok());
        let refreshed = TpchPowerOptions {
            refresh: true,
            ..checked
        };
        let e = refreshed.validate().unwrap_err();
        assert!(e.to_string().contains("refresh = false"), "{e}");
    }
}
