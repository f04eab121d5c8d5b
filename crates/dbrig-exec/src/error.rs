//! The one error type of dbrig-exec.

use std::path::PathBuf;

use dbrig_driver::{DriverError, TargetError};
use dbrig_server::ManagedError;
use dbrig_store::StoreError;
use dbrig_workload::WorkloadError;

/// What stops a plan from being resolved or executed. Failures of single trials are not
/// errors: they are recorded with their reason and the plan goes on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A plan (file or command) that cannot run as given; the message names the file, line
    /// and key where there is one.
    #[error("{0}")]
    Plan(String),
    /// A password that cannot be read (`--password-env`, `--password-file`).
    #[error("{0}")]
    Password(String),
    /// A MariaDB/MySQL option file its client would refuse too (named with its line).
    #[error("{0}")]
    OptionFile(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Managed(#[from] ManagedError),
    /// The plan's clients need more open files than this process may have (even the hard
    /// `RLIMIT_NOFILE`): said before anything runs.
    #[error(
        "{clients} clients need about {needed} open files, more than this process may open (RLIMIT_NOFILE soft {soft}, hard {hard}): raise the limit in the shell that starts dbrig (`ulimit -n {needed}`; above the hard limit as root or in /etc/security/limits.conf), or run fewer clients"
    )]
    OpenFiles {
        clients: u32,
        needed: u64,
        soft: u64,
        hard: u64,
    },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// What was being done when `source` happened (`starting server A`, …).
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<ExecError>,
    },
}

impl ExecError {
    /// `self` as the cause of `context`.
    pub fn context(self, context: impl Into<String>) -> ExecError {
        ExecError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Whether the cause stays until someone changes something: doing it again the same way
    /// fails the same way (typed: a database error that may pass by itself does not last).
    pub fn lasts(&self) -> bool {
        match self {
            ExecError::Workload(e) => e.lasts(),
            ExecError::Driver(e) => e.lasts(),
            ExecError::Store(_) => false,
            ExecError::Context { source, .. } => source.lasts(),
            ExecError::Plan(_)
            | ExecError::Password(_)
            | ExecError::OptionFile(_)
            | ExecError::OpenFiles { .. }
            | ExecError::Target(_)
            | ExecError::Managed(_)
            | ExecError::Io { .. } => true,
        }
    }

    /// The error and its causes on one line, most general first (how trials store reasons).
    pub fn one_line(&self) -> String {
        let mut parts = vec![self.to_string()];
        let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(self);
        while let Some(e) = cur {
            parts.push(e.to_string());
            cur = e.source();
        }
        parts.retain(|p| !p.is_empty());
        parts.dedup();
        parts.join(": ")
    }
}

/// A plan error from anything that displays.
pub(crate) fn plan(msg: impl std::fmt::Display) -> ExecError {
    ExecError::Plan(msg.to_string())
}

pub type Result<T, E = ExecError> = std::result::Result<T, E>;
