//! sysbench Lua scripts as a kind: the script's clients run by the runner, its `init()` and
//! `done()` around them and its report hooks between the runner and the executor, as in
//! sysbench; its own `prepare` is the prepare step, registered as `lua:FILE.lua`.

use std::path::Path;
use std::sync::Arc;

use dbrig_driver::{ConnectOptions, Target};

use super::clients::{self, client_driven};
use crate::kind::{Kind, KindFuture, Prepared, Registration, TrialOutput};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;
use crate::{LuaOptions, LuaWorkload, Workload};

pub const REGISTRATION: Registration = Registration {
    result: dbrig_core::results::ResultKind::Oltp,
    parse: |name, options| {
        crate::lua::is_script_name(name.trim()).then(|| {
            let mut o = LuaOptions {
                script: name.trim().to_owned(),
                script_options: Vec::new(),
            };
            if let Some(map) = options.as_object() {
                for (k, v) in map {
                    let v = match v {
                        serde_json::Value::Bool(b) => (if *b { "on" } else { "off" }).to_owned(),
                        serde_json::Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    o.script_options.push(format!("{k}={v}"));
                }
            }
            Ok(Workload::Lua(LuaWorkload::new(o)?).into_kind().into_box())
        })
    },
    path_options: |_| &[],
    listed: &[],
};

/// A sysbench Lua script (`Workload::Lua`).
#[derive(Debug, Clone)]
pub struct LuaScript(Workload);

impl LuaScript {
    /// The kind of `workload`, a `Workload::Lua` ([`Workload::into_kind`] decides).
    pub(crate) fn new(workload: Workload) -> Self {
        LuaScript(workload)
    }

    fn lua(&self) -> Option<&LuaWorkload> {
        match &self.0 {
            Workload::Lua(l) => Some(l),
            _ => None,
        }
    }
}

impl Kind for LuaScript {
    client_driven!();

    fn writes(&self) -> bool {
        true
    }

    fn cleanup_command(&self) -> String {
        format!("dbrig cleanup {}", self.name())
    }

    fn data_identity(&self) -> Option<serde_json::Value> {
        Some(self.0.options_json())
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
            match self.lua() {
                Some(w) => {
                    w.prepare_if_missing(target, connect, threads, seed, progress)
                        .await
                }
                None => Ok(None),
            }
        })
    }

    fn trial<'a>(
        &'a self,
        spec: &'a RunSpec,
        interrupt: Arc<Stopper>,
        progress: &'a dyn Progress,
        _env: Option<&'a mut dyn PowerEnv>,
    ) -> KindFuture<'a, Option<TrialOutput>> {
        Box::pin(async move {
            let Some(l) = self.lua() else {
                return clients::trial(&self.0, spec, interrupt, progress).await;
            };
            // A Lua script's init() and done() run around its clients, as in sysbench.
            l.set_run(&spec.options);
            l.global_hook("init", &spec.target).await?;
            let reporter = crate::lua::Reporter::new(l, &spec.target, progress)?;
            let Some((output, warnings)) =
                clients::measure(&self.0, spec, interrupt, &reporter).await?
            else {
                // Ctrl-C while the clients were set up: nothing was measured.
                return Ok(None);
            };
            if let Some(m) = output.measurements.as_ref() {
                reporter.cumulative(m)?;
                l.global_hook("done", &spec.target).await?;
            }
            drop(reporter);
            clients::tell(progress, &warnings);
            Ok(Some(output))
        })
    }
}
