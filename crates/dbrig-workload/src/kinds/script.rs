//! pgbench scripts as a kind: files and built-ins run by the runner's clients, their commands
//! timed as statements; built-ins run on pgbench's tables, which `pgbench-init` makes when
//! they are missing.

use std::path::Path;
use std::sync::Arc;

use dbrig_driver::{ConnectOptions, Connection, Target};

use super::clients::{self, client_driven};
use crate::Workload;
use crate::error::WorkloadError;
use crate::kind::{Kind, KindFuture, Prepared, Registration, TrialOutput};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::script::{NAME, ScriptOptions, ScriptWorkload};
use crate::tpch::PowerEnv;

pub const REGISTRATION: Registration = Registration {
    result: dbrig_core::results::ResultKind::Oltp,
    parse: |name, options| {
        name.trim().eq_ignore_ascii_case(NAME).then(|| {
            if options.get("protocol").is_some() {
                return Err(WorkloadError::InvalidOptions(
                    "script options: `protocol` is a run option of every workload now: write it under [workload.run] (or give --protocol)".into(),
                ));
            }
            let o: ScriptOptions = crate::kind::options_of("script", options)?;
            Ok(Workload::script(o)?.into_kind().into_box())
        })
    },
    path_options: |name| match name {
        NAME => &["scripts"],
        _ => &[],
    },
    listed: &[(
        "script",
        "pgbench scripts (`scripts = [\"FILE@W\"]`, `builtins = [\"tpcb-like\"]`) through the OLTP runner",
    )],
};

/// pgbench scripts (`Workload::Script`).
#[derive(Debug, Clone)]
pub struct PgbenchScripts(Workload);

impl PgbenchScripts {
    /// The kind of `workload`, a `Workload::Script` ([`Workload::into_kind`] decides).
    pub(crate) fn new(workload: Workload) -> Self {
        PgbenchScripts(workload)
    }

    fn script(&self) -> Option<&ScriptWorkload> {
        match &self.0 {
            Workload::Script(w) => Some(w),
            _ => None,
        }
    }

    fn uses_builtins(&self) -> bool {
        self.script().is_some_and(ScriptWorkload::uses_builtins)
    }
}

/// What pgbench's tables depend on.
pub(crate) fn pgbench_identity(o: &ScriptOptions) -> serde_json::Value {
    serde_json::json!({
        "pgbench": {
            "scale": o.scale.max(1),
            "fillfactor": o.fillfactor,
            "foreign_keys": o.foreign_keys,
        }
    })
}

impl Kind for PgbenchScripts {
    client_driven!();

    // A script may write; pgbench's built-ins but select-only do.
    fn writes(&self) -> bool {
        true
    }

    fn cleanup_command(&self) -> String {
        "dbrig cleanup pgbench-init".into()
    }

    fn loads_large_data(&self) -> bool {
        self.uses_builtins()
    }

    fn data_identity(&self) -> Option<serde_json::Value> {
        self.script()
            .filter(|w| w.uses_builtins())
            .map(|w| pgbench_identity(&w.options))
    }

    fn prepare_if_missing<'a>(
        &'a self,
        target: &'a Target,
        connect: &'a ConnectOptions,
        _threads: u32,
        _seed: u64,
        space: Option<(&'a Path, u64)>,
        progress: &'a dyn Progress,
    ) -> KindFuture<'a, Option<Prepared>> {
        Box::pin(async move {
            let Some(w) = self.script().filter(|w| w.uses_builtins()) else {
                return Ok(None);
            };
            let mut conn = Connection::connect(target, connect).await?;
            let mut missing = false;
            let mut half = false;
            for t in crate::script::init::TABLES {
                if conn.table_exists(t).await? {
                    half |= crate::registry::lookup(&mut conn, t)
                        .await?
                        .is_some_and(|e| e.state == "loading");
                } else {
                    missing = true;
                }
            }
            conn.close().await;
            if !missing && !half {
                return Ok(None);
            }
            crate::script::init::check_fits(&w.options, space)?;
            // pgbench-init drops dbrig's own tables first (each proven by its marker): an
            // interrupted init's are never measured, made again.
            progress.note(&format!(
                "pgbench's tables {} on {target}: running pgbench-init first",
                if half {
                    "were left half-made by an interrupted pgbench-init"
                } else {
                    "missing"
                }
            ));
            let r = crate::script::init::init(target, connect, &w.options, progress).await?;
            Ok(Some(Prepared {
                line: format!(
                    "pgbench-init: scale {}, {} rows in {:.2} s",
                    r.scale, r.rows, r.seconds
                ),
                figures: Some(r.figures),
            }))
        })
    }

    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        _env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        Box::pin(clients::trial(&self.0, spec, interrupt, progress))
    }
}
