//! dbrig-driver: one connection type over MariaDB/MySQL, PostgreSQL, SQLite and a mock engine.
//!
//! A [`Target`] is a URL (`mysql://`, `mariadb://`, `postgres://`, `sqlite:PATH`,
//! `sqlite::memory:`, `mock:`). [`Connection::connect`] opens one connection to it; statements
//! are prepared once and executed with bind values; bulk loads go through each engine's fast
//! path (LOAD DATA LOCAL INFILE fed from memory, COPY FROM STDIN, one SQLite transaction).
//! Every error is classified ([`dbrig_core::ErrorClass`]) from the engine's error *code*, never
//! from its message text.
//!
//! Contract: this crate knows nothing of servers being started, of workloads or of the results
//! store. SQLite's blocking calls run on a thread owned by the connection, never on an async
//! worker.

mod bulk;
mod cancel;
mod conn;
mod error;
mod literal;
mod mock;
mod mysql;
mod mysql_auth;
mod mysql_wire;
mod pg_auth;
mod pg_wire;
mod postgres;
mod sessions;
mod sqlite;
mod target;
mod tls;
mod wire_socket;

pub use bulk::{
    BulkLoad, BulkText, FieldType, FieldWriter, MariaDbBulkChunk, MariaDbBulkRows, PgBinaryChunk,
    PgBinaryRows, civil_from_seconds, encode_bulk_row,
};
pub use cancel::CancelHandle;
pub use conn::{
    ConnectOptions, ConnectTimes, Connection, Outcome, OwnThread, PipelineItem, Rows, Statement,
    TextRows, TypedBulkFormat,
};
pub use dbrig_core::results::{AddressFamily, Protocol};
pub use error::{DriverError, ErrorKind, ErrorPolicy, FailureKind};
pub use mock::served as mock_statements_served;
pub use mock::{SentStatement as MockSentStatement, statements_sent as mock_statements_sent};
pub use pg_auth::postgres_auth_method;
pub use sessions::own_sessions;
pub use sqlite::SQLITE_LOAD_PRAGMAS;
pub use target::{
    Dialect, Endpoint, Secret, Target, TargetError, UrlNames, pg_socket_dir_and_port,
};
pub use tls::{TlsMode, TlsOptions, TlsVersion};
