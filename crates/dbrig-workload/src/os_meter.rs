//! The OS figures of one run inside a trial (a TPC-H query, a refresh function), read on the
//! clock of the trial's OS samples: the executor's sampler implements [`OsMeter`] (this crate
//! reads no `/proc`), and the steps that record per-run OS figures take an [`OsMeterRef`].

use std::sync::Arc;

use dbrig_core::results::OsSpan;

/// Measures the OS over one run inside a trial, on the clock of the trial's OS samples (the
/// executor's sampler; this crate reads no `/proc`). `begin` reads the counters at the run's
/// start; the closure it returns, called when the run ends, gives the run's figures.
pub trait OsMeter: Send + Sync {
    fn begin(&self) -> Box<dyn FnOnce() -> OsSpan + Send>;
}

/// A shared [`OsMeter`].
#[derive(Clone)]
pub struct OsMeterRef(pub Arc<dyn OsMeter>);

impl std::fmt::Debug for OsMeterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OsMeter")
    }
}

impl OsMeterRef {
    /// Runs `f`, with the OS figures over it when there is a meter. The counters are read
    /// outside `f`, so a run's own timer does not include them.
    pub async fn measure<T>(
        meter: Option<&OsMeterRef>,
        f: impl Future<Output = T>,
    ) -> (T, Option<OsSpan>) {
        let end = meter.map(|m| m.0.begin());
        let out = f.await;
        (out, end.map(|e| e()))
    }
}
