//! How a trial's clients reached the server, stored with every trial of every kind (kept apart
//! from the TLS and authentication facts, which have their own fields): the address family,
//! the protocol mode statements were sent in, and what connecting itself cost.

use serde::{Deserialize, Serialize};

use crate::measure::LatencySummary;

/// How statements reach the server (pgbench's `-M`; MariaDB/MySQL's `--ps-mode` is the same
/// choice: `auto` is `prepared`, `disable` is `simple`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Text statements with the values written in as literals (PostgreSQL's simple query
    /// protocol; MariaDB/MySQL's text protocol). Works through PgBouncer's transaction mode.
    Simple,
    /// PostgreSQL only: parse, bind and execute an unnamed statement per statement, in one
    /// round trip, the values as bind parameters.
    Extended,
    /// Each statement prepared once per connection (named), then executed with bind values.
    #[default]
    Prepared,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Simple, Protocol::Extended, Protocol::Prepared];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = crate::ValueError;
    fn from_str(s: &str) -> Result<Self, crate::ValueError> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| crate::ValueError::Unknown {
                what: "protocol",
                given: s.to_owned(),
                expected: "simple, extended or prepared".to_owned(),
            })
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the server was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressFamily {
    Tcp,
    UnixSocket,
    /// No network at all: an SQLite file or the mock engine, in dbrig's own process.
    InProcess,
}

impl AddressFamily {
    pub fn name(self) -> &'static str {
        match self {
            AddressFamily::Tcp => "TCP",
            AddressFamily::UnixSocket => "Unix socket",
            AddressFamily::InProcess => "in process",
        }
    }
}

/// How one trial's clients connected, whatever its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionFacts {
    pub address_family: AddressFamily,
    /// The protocol mode statements were sent in.
    pub protocol: Protocol,
    /// `--reconnect N`: each client opened a new connection every N events (0: never).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub reconnect_every: u64,
    /// `--connect-rate R`: at most R new connections per second at the start (0: no limit).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub connect_rate: f64,
    /// `--idle-clients N`: extra connections held open and idle through the run.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub idle_clients: u32,
    /// Set-up time of every connection the trial's workload opened, for kinds that do not
    /// time their own (micro, TPC-H, perfrun); an OLTP trial's is its result's
    /// `connect_latency` (with failed attempts and idle clients), so `None` here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_latency: Option<ConnectLatency>,
}

impl ConnectionFacts {
    /// One line for reports: `TCP, prepared protocol`, with the connection behaviours set.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{}, {} protocol",
            self.address_family.name(),
            self.protocol.name()
        );
        if self.reconnect_every > 0 {
            s += &format!(", reconnect every {} events", self.reconnect_every);
        }
        if self.connect_rate > 0.0 {
            s += &format!(", at most {} connections/s at start", self.connect_rate);
        }
        if self.idle_clients > 0 {
            s += &format!(", {} idle connections held", self.idle_clients);
        }
        s
    }
}

/// The time each connection of a run took to set up (TCP, TLS, authentication and the
/// session's first round trip), apart from statement latency: the clients' first
/// connections, reconnects after a lost connection, `--reconnect`'s and the idle clients'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectLatency {
    /// Connections opened and timed.
    pub connections: u64,
    /// Attempts that failed (not in the latencies).
    #[serde(default)]
    pub failed: u64,
    /// Connections whose TLS handshake resumed an earlier session of the run's process
    /// (rustls's session cache, shared by every client): 0 without TLS, or when the server
    /// issues no tickets (PostgreSQL disables them).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub resumed: u64,
    /// Milliseconds.
    pub latency_ms: LatencySummary,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_round_trip_and_describe_themselves() {
        let f = ConnectionFacts {
            address_family: AddressFamily::UnixSocket,
            protocol: Protocol::Simple,
            reconnect_every: 10,
            connect_rate: 0.0,
            idle_clients: 3,
            connect_latency: None,
        };
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["protocol"], "simple");
        assert_eq!(v["address_family"], "unix_socket");
        assert!(v.get("connect_rate").is_none());
        assert_eq!(serde_json::from_value::<ConnectionFacts>(v).unwrap(), f);
        assert_eq!(
            f.describe(),
            "Unix socket, simple protocol, reconnect every 10 events, 3 idle connections held"
        );
    }
}
