//! A PostgreSQL of the test's own with pg_stat_statements preloaded: what the server itself
//! counted (statements by normalised text, with their calls) is the reference the fidelity and
//! pgbench tests hold dbrig's statements against.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{dbrig, ok, text};

/// Started by `dbrig server start`, open to the peer tools (sysbench and pgbench take no
/// password file), stopped when dropped.
pub struct PgssServer {
    out: PathBuf,
    name: String,
    pub port: String,
}

impl PgssServer {
    pub fn start(out: &Path, name: &str) -> Self {
        let plan = out.join(format!("{name}-server.toml"));
        std::fs::write(
            &plan,
            format!("[[server]]\nname = \"{name}\"\nengine = \"postgres\"\nopen-access = true\n"),
        )
        .unwrap();
        let plan = plan.display().to_string();
        let o = ok(dbrig(
            out,
            &[
                "server",
                "start",
                name,
                "--plan",
                &plan,
                "--param",
                "shared_preload_libraries=pg_stat_statements",
                "--param",
                "pg_stat_statements.track=all",
            ],
        ));
        let target = text(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix("target: ").map(str::to_owned))
            .expect("the target line");
        let port = target
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .expect("a port in the target")
            .to_owned();
        let s = PgssServer {
            out: out.to_owned(),
            name: name.to_owned(),
            port,
        };
        s.sql("postgres", "CREATE EXTENSION pg_stat_statements");
        s
    }

    /// `statement`'s rows in database `db`, one line each, columns separated by tabs.
    pub fn sql(&self, db: &str, statement: &str) -> String {
        let o = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port,
                "-U",
                "postgres",
                "-d",
                db,
            ])
            .args(["-X", "-A", "-t", "-q", "-F", "\t", "-c", statement])
            .output()
            .expect("the psql client");
        assert!(
            o.status.success(),
            "{statement}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Forget what was counted so far.
    pub fn reset(&self) {
        self.sql("postgres", "SELECT pg_stat_statements_reset()");
    }
}

impl Drop for PgssServer {
    fn drop(&mut self) {
        let _ = dbrig(&self.out, &["server", "stop", &self.name]);
    }
}
