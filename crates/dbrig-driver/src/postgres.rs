//! The postgres backend (being written).

use dbrig_core::Value;

use crate::bulk::BulkLoad;
use crate::conn::{ConnectOptions, Outcome};
use crate::error::{DriverError, ErrorKind};
use crate::target::Target;

pub(crate) struct PostgresConnection {
    version: String,
}

fn unsupported() -> DriverError {
    DriverError::fatal(
        ErrorKind::Unsupported,
        "the postgres backend is not built yet",
    )
}

impl PostgresConnection {
    pub(crate) async fn connect(
        _target: &Target,
        _options: &ConnectOptions,
    ) -> Result<Self, DriverError> {
        Err(unsupported())
    }

    pub(crate) fn server_version(&self) -> &str {
        &self.version
    }

    pub(crate) async fn prepare(&mut self, _sql: &str) -> Result<(), DriverError> {
        Err(unsupported())
    }

    pub(crate) async fn execute(
        &mut self,
        _idx: usize,
        _params: &[Value],
    ) -> Result<Outcome, DriverError> {
        Err(unsupported())
    }

    pub(crate) async fn execute_text(&mut self, _sql: &str) -> Result<Outcome, DriverError> {
        Err(unsupported())
    }

    pub(crate) async fn query(
        &mut self,
        _sql: &str,
        _params: &[Value],
    ) -> Result<Vec<Vec<Value>>, DriverError> {
        Err(unsupported())
    }

    pub(crate) async fn bulk_load(&mut self, _load: BulkLoad) -> Result<u64, DriverError> {
        Err(unsupported())
    }

    pub(crate) async fn close(self) {}
}
