//! sysbench's OLTP workloads as a kind: clients run events for a duration (`clients.rs`) on
//! tables the prepare step makes when they are missing (or were left half-made).

use std::path::Path;
use std::sync::Arc;

use dbrig_driver::{ConnectOptions, Connection, Target};

use super::clients::{self, client_driven};
use crate::error::WorkloadError;
use crate::kind::{Kind, KindFuture, Prepared, Registration, TrialOutput};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;
use crate::{Oltp, OltpKind, OltpOptions, Workload};

pub const REGISTRATION: Registration = Registration {
    result: dbrig_core::results::ResultKind::Oltp,
    parse: |name, options| {
        (!crate::lua::is_script_name(name.trim()) && OltpKind::from_name(name).is_some()).then(
            || {
                let oltp: OltpOptions = serde_json::from_value(options.clone())
                    .map_err(|e| WorkloadError::InvalidOptions(format!("{name} options: {e}")))?;
                Ok(Workload::from_name(name, oltp)?.into_kind().into_box())
            },
        )
    },
    path_options: |_| &[],
    // Listed with the workloads (`dbrig_workload::catalog`).
    listed: &[],
};

/// An OLTP workload (`Workload::Oltp`; `Workload::from_name` of an OLTP name makes one).
#[derive(Debug, Clone)]
pub struct SysbenchOltp(Workload);

impl SysbenchOltp {
    /// The kind of `workload`, a `Workload::Oltp` ([`Workload::into_kind`] decides).
    pub(crate) fn new(workload: Workload) -> Self {
        SysbenchOltp(workload)
    }

    fn oltp(&self) -> Option<&Oltp> {
        match &self.0 {
            Workload::Oltp(o) => Some(o),
            _ => None,
        }
    }
}

/// What an OLTP workload's tables depend on: their count, size and definition.
pub(crate) fn oltp_identity(x: &OltpOptions) -> serde_json::Value {
    serde_json::json!({
        "oltp": {
            "tables": x.tables,
            "table_size": x.table_size,
            "auto_inc": x.auto_inc,
            "create_secondary": x.create_secondary,
            "mysql_storage_engine": x.mysql_storage_engine,
        }
    })
}

impl Kind for SysbenchOltp {
    client_driven!();

    fn writes(&self) -> bool {
        self.oltp().is_some_and(|o| o.kind.writes())
    }

    fn data_identity(&self) -> Option<serde_json::Value> {
        self.oltp().map(|o| oltp_identity(&o.options))
    }

    fn prepare_if_missing<'a>(
        &'a self,
        target: &'a Target,
        connect: &'a ConnectOptions,
        threads: u32,
        seed: u64,
        _space: Option<(&'a Path, u64)>,
        progress: &'a dyn Progress,
    ) -> KindFuture<'a, Option<Prepared>> {
        Box::pin(async move {
            let Some(oltp) = self.oltp() else {
                return Ok(None);
            };
            let mut conn = Connection::connect(target, connect).await?;
            let mut missing = false;
            let mut half = false;
            for t in oltp.tables_used(threads) {
                if conn.table_exists(&t).await? {
                    half |= crate::registry::lookup(&mut conn, &t)
                        .await?
                        .is_some_and(|e| e.state == "loading");
                } else {
                    missing = true;
                }
            }
            conn.close().await;
            if half {
                // dbrig's own tables (cleanup proves it by their markers), left by an
                // interrupted prepare: never measured, made again.
                progress.note(&format!(
                    "tables on {target} were left half-prepared by an interrupted prepare: dropping them and preparing {} again",
                    self.name()
                ));
                oltp.cleanup(target, connect, threads).await?;
                missing = true;
            }
            if !missing {
                return Ok(None);
            }
            progress.note(&format!(
                "tables missing on {target}: preparing {} first",
                self.name()
            ));
            let report = oltp
                .prepare(target, connect, threads, seed, progress)
                .await?;
            Ok(Some(Prepared {
                line: format!("prepared {} rows in {:.2} s", report.rows, report.load_s),
                figures: Some(report.figures),
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
