//! What the server backends (`postgres/`, `mysql/`) share: where the server is
//! ([`ServerAddress`], whose password never prints) and the thread each one's client lives on
//! ([`Worker`]).
//!
//! The store's traits are synchronous and are called from inside tokio runtimes (the
//! executor's); the servers' clients are asynchronous, and blocking on a runtime from inside
//! another panics. So a server backend owns a thread with a current-thread runtime of its own
//! and its connection; each trait method sends that thread one job and waits for its answer
//! on a channel. A job is the whole of one read or one transaction, so a method costs one
//! hand-over between threads beside its round trips to the server.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::error::StoreError;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Which server holds the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerEngine {
    Postgres,
    /// MariaDB or MySQL.
    Mysql,
}

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEndpoint {
    Tcp {
        host: String,
        port: u16,
    },
    /// A Unix socket: PostgreSQL's folder (the port names the file in it), or MariaDB's file.
    Socket {
        path: PathBuf,
        port: u16,
    },
}

/// A password for a results server. It never prints (`Debug` shows `***`) and is handed to
/// the client library only.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerPassword(String);

impl ServerPassword {
    pub fn new(value: impl Into<String>) -> Self {
        ServerPassword(value.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ServerPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A results database on a server, resolved by the caller (the binary parses `--results URL`
/// as a target and finds its password where the engine's own clients look: `~/.pgpass`,
/// option files, the environment). `shown` is the redacted address: the only form of it the
/// store prints, stores or returns as its `path()`.
#[derive(Debug, Clone)]
pub struct ServerAddress {
    pub engine: ServerEngine,
    pub endpoint: ServerEndpoint,
    pub user: String,
    pub database: String,
    pub password: Option<ServerPassword>,
    /// The address as messages show it, without a password (`postgres://u@h:5432/db`).
    pub shown: String,
}

/// A job for the worker's thread: it gets the connection and the runtime to block on.
type Job<C> = Box<dyn FnOnce(&mut C, &tokio::runtime::Runtime) + Send>;

/// A connection `C` on a thread of its own with a current-thread runtime (see the module's
/// documentation). Dropping it ends the thread once its last job is done.
pub(crate) struct Worker<C> {
    jobs: Option<mpsc::Sender<Job<C>>>,
    thread: Option<JoinHandle<()>>,
    /// For the message when the thread is gone.
    shown: PathBuf,
}

impl<C: 'static> Worker<C> {
    /// Start the thread and make its connection with `connect` (on the thread, in its
    /// runtime); its error is returned here.
    pub(crate) fn start(
        shown: &Path,
        connect: impl FnOnce(&tokio::runtime::Runtime) -> Result<C> + Send + 'static,
    ) -> Result<Worker<C>> {
        let (jobs, rx) = mpsc::channel::<Job<C>>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<()>>(1);
        let gone = || StoreError::ServerWorkerGone {
            path: shown.to_owned(),
        };
        let thread = std::thread::Builder::new()
            .name("dbrig-results".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(StoreError::ServerRuntime { source: e }));
                        return;
                    }
                };
                let mut conn = match connect(&rt) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                while let Ok(job) = rx.recv() {
                    job(&mut conn, &rt);
                }
            })
            .map_err(|e| StoreError::ServerRuntime { source: e })?;
        ready_rx.recv().map_err(|_| gone())??;
        Ok(Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            shown: shown.to_owned(),
        })
    }

    /// Run `job` on the connection's thread and wait for its answer.
    pub(crate) fn call<R: Send + 'static>(
        &self,
        job: impl FnOnce(&mut C, &tokio::runtime::Runtime) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let gone = || StoreError::ServerWorkerGone {
            path: self.shown.clone(),
        };
        let (tx, rx) = mpsc::sync_channel(1);
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(
                move |conn: &mut C, rt: &tokio::runtime::Runtime| {
                    let _ = tx.send(job(conn, rt));
                },
            ))
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }
}

impl<C> Drop for Worker<C> {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop; its connection closes as it ends.
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
