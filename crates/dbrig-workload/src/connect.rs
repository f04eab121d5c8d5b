//! The `connect` workload: each event opens a new connection (TCP or socket, TLS when the
//! target asks, authentication, the session's first round trip) and closes the one before,
//! so the run measures connection set-up itself. It runs in the one runner like any OLTP
//! workload: its events' latency histogram is the set-up (with the close of the previous
//! connection), its statement `connect` is the set-up alone, and the run's connect latency
//! counts every connection. No tables, no statements.

use dbrig_core::EventTally;
use dbrig_driver::{Connection, DriverError};

/// The workload name results are stored under.
pub const NAME: &str = "connect";

/// The statement kind each event's set-up time is recorded under.
const KIND: &str = "connect";

/// One client: nothing of its own but the connection it replaces every event.
#[derive(Debug, Default)]
pub struct ConnectClient;

impl ConnectClient {
    pub async fn event(
        &mut self,
        conn: &mut Connection,
        q: &mut EventTally,
    ) -> Result<(), DriverError> {
        conn.reconnect().await?;
        q.time(KIND, conn.connect_time().as_micros() as u64);
        Ok(())
    }
}
