//! The `connect` workload as a kind: the runner's clients, each event a new connection
//! (connection set-up itself: TCP, TLS, authentication), stored as OLTP figures.

use std::sync::Arc;

use super::clients::{self, client_driven};
use crate::Workload;
use crate::error::WorkloadError;
use crate::kind::{Kind, KindFuture, Registration, TrialOutput};
use crate::progress::Progress;
use crate::runner::{RunSpec, Stopper};
use crate::tpch::PowerEnv;

pub const REGISTRATION: Registration = Registration {
    result: dbrig_core::results::ResultKind::Oltp,
    parse: |name, options| {
        name.trim().eq_ignore_ascii_case(crate::connect::NAME).then(|| {
            if options.as_object().is_some_and(|o| !o.is_empty()) {
                return Err(WorkloadError::InvalidOptions(
                    "connect takes no workload options (the run's options apply: --reconnect, --connect-rate, --protocol, …)".into(),
                ));
            }
            Ok(Box::new(Connect::new()) as Box<dyn Kind>)
        })
    },
    path_options: |_| &[],
    listed: &[(
        "connect",
        "connection set-up itself (TCP, TLS, authentication): each event a new connection, latency per connection",
    )],
};

/// The connect workload (`Workload::Connect`).
#[derive(Debug, Clone)]
pub struct Connect(Workload);

impl Connect {
    pub(crate) fn new() -> Self {
        Connect(Workload::Connect)
    }
}

impl Kind for Connect {
    client_driven!();

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
