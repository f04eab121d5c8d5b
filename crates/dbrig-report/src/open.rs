//! A run's report data opened from the store: every kind's items through the registry
//! (`kinds/`), and a single command's run as its command printed it (shown first in its
//! report). `data.rs` assembles the data and knows no kind; this is where the two meet.

use dbrig_store::{RunId, RunKind, Store};

use crate::data::ReportData;
use crate::error::ReportError;
use crate::kind::SingleFormat;
use crate::single::{is_single_run, single_run_report};

impl ReportData {
    /// The report of one run, with the first configuration as baseline and QPS as metric.
    pub fn load(store: &Store, run: RunId) -> Result<ReportData, ReportError> {
        let mut data = Self::load_with(store, run, crate::kinds::FACTS)?;
        if store.run(run)?.kind != RunKind::Perfrun && is_single_run(store, run)? {
            data.single_run = Some(single_run_report(store, run, SingleFormat::Text)?);
        }
        Ok(data)
    }

    /// Two runs compared, run A's configuration as baseline (see
    /// [`ReportData::load_compare_with`]).
    pub fn load_compare(store: &Store, a: RunId, b: RunId) -> Result<ReportData, ReportError> {
        Self::load_compare_with(store, a, b, crate::kinds::FACTS)
    }
}
