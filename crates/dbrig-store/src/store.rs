//! [`Store`]: the handle on a results database, whichever backend holds it. It reads (it
//! dereferences to [`ResultsReader`]) and hands out nothing that writes; writing goes through
//! [`crate::StoreWriter`].

use std::ops::Deref;
use std::path::Path;

use crate::error::StoreError;
use crate::mysql::MysqlBackend;
use crate::postgres::PostgresBackend;
use crate::reader::ResultsReader;
use crate::server::{ServerAddress, ServerEngine};
use crate::sqlite::SqliteBackend;
use crate::writer::ResultsWriter;

/// An open results database. SQLite is the embedded default ([`Store::open`]); a server's
/// is opened by [`Store::open_server`]; another backend plugs in with [`Store::with_backend`], and reports, observers, the executor and the
/// recorder work with it unchanged.
pub struct Store {
    backend: Box<dyn ResultsWriter>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.backend.path())
            .finish()
    }
}

impl Store {
    /// Open (or create) the SQLite results database at `path` and bring its schema up to
    /// date.
    ///
    /// The parent folder must exist: a typo in `--results` should fail, not create folders.
    /// The file is put in WAL mode with foreign keys on and a busy timeout, so two dbrig
    /// processes can share it. A file with a newer schema is refused, never downgraded.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Ok(Store::with_backend(Box::new(SqliteBackend::open(path)?)))
    }

    /// A private in-memory SQLite database (tests, dry runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Ok(Store::with_backend(Box::new(
            SqliteBackend::open_in_memory()?,
        )))
    }

    /// Open the results database on a server (PostgreSQL, or MariaDB/MySQL) and bring its
    /// schema up to date, applying each missing step once however many dbrig processes open
    /// it at once. The database must exist; it holds dbrig's tables only. The password in
    /// `address` is handed to the client and nothing else: the store's `path()` is
    /// `address.shown`, the redacted address.
    pub fn open_server(address: &ServerAddress) -> Result<Store, StoreError> {
        Ok(Store::with_backend(match address.engine {
            ServerEngine::Postgres => Box::new(PostgresBackend::open(address)?),
            ServerEngine::Mysql => Box::new(MysqlBackend::open(address)?),
        }))
    }

    /// A store over another backend, already open and migrated.
    pub fn with_backend(backend: Box<dyn ResultsWriter>) -> Store {
        Store { backend }
    }

    /// The backend, to write: only [`crate::StoreWriter`] calls it.
    pub(crate) fn backend_mut(&mut self) -> &mut dyn ResultsWriter {
        &mut *self.backend
    }
}

impl Deref for Store {
    type Target = dyn ResultsReader;

    fn deref(&self) -> &Self::Target {
        &*self.backend
    }
}
