//! Server definitions: what to run, from where, with which settings. One struct serves the CLI
//! and plans (`[[server]]` tables).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dbrig_core::limits;
use serde::{Deserialize, Serialize};

use super::{ManagedError, Result};

/// The server engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Mariadb,
    Mysql,
    Postgres,
}

impl Engine {
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Mariadb => "mariadb",
            Engine::Mysql => "mysql",
            Engine::Postgres => "postgres",
        }
    }

    /// The account a server runs as when dbrig runs as root.
    pub fn default_user(&self) -> &'static str {
        match self {
            Engine::Mariadb | Engine::Mysql => "mysql",
            Engine::Postgres => "postgres",
        }
    }

    /// Startup parameters that make the server refuse writes, for read-only workloads:
    /// MariaDB/MySQL `read_only` (ordinary users) plus `innodb_read_only` (everyone,
    /// including root, whom `read_only` does not stop); PostgreSQL
    /// `default_transaction_read_only`. Tables must be prepared before such a start.
    pub fn read_only_params(&self) -> Params {
        match self {
            Engine::Mariadb | Engine::Mysql => Params::new()
                .set("read_only", "ON")
                .set("innodb_read_only", "ON"),
            Engine::Postgres => Params::new().set("default_transaction_read_only", "on"),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Startup parameters, in order: `key=value` pairs. Deserialises from a table
/// (`params = { max_connections = 77 }`) or a list (`params = ["max_connections=77"]`);
/// serialises as the list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `key=value` strings (a bare `key` means `key=on`, a MariaDB-style switch).
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self> {
        let mut out = Vec::new();
        for it in items {
            let it = it.as_ref().trim();
            let it = it.strip_prefix("--").unwrap_or(it);
            let (k, v) = match it.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (it, "on"),
            };
            if k.is_empty() {
                return Err(ManagedError::BadDefinition(format!(
                    "startup parameter {it:?} has no name (expected key=value)"
                )));
            }
            out.push((k.to_owned(), v.to_owned()));
        }
        Ok(Params(out))
    }

    /// Adds or replaces one parameter.
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| norm(k) == norm(&key)) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
        self
    }

    /// `self` overridden by `other` (same key, `-` and `_` alike, is replaced).
    pub fn merged(&self, other: &Params) -> Params {
        other
            .0
            .iter()
            .fold(self.clone(), |acc, (k, v)| acc.set(k.clone(), v.clone()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(String, String)> {
        self.0.iter()
    }

    /// The `key=value` strings.
    pub fn to_strings(&self) -> Vec<String> {
        self.0.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

fn norm(k: &str) -> String {
    k.replace('-', "_").to_ascii_lowercase()
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ParamValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl ParamValue {
    fn render(self) -> String {
        match self {
            ParamValue::Str(s) => s,
            ParamValue::Int(i) => i.to_string(),
            ParamValue::Float(f) => f.to_string(),
            ParamValue::Bool(b) => if b { "on" } else { "off" }.to_owned(),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ParamsRepr {
    List(Vec<String>),
    Map(BTreeMap<String, ParamValue>),
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match ParamsRepr::deserialize(d)? {
            ParamsRepr::List(l) => Params::parse(&l).map_err(serde::de::Error::custom),
            ParamsRepr::Map(m) => Ok(Params(
                m.into_iter().map(|(k, v)| (k, v.render())).collect(),
            )),
        }
    }
}

impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_strings().serialize(s)
    }
}

/// A server dbrig manages. In a plan, relative paths are relative to the plan file's folder
/// ([`ServerDef::resolve_paths`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ServerDef {
    /// Name of the server (letters, digits, `-`, `_`, `.`): its state folder is
    /// `<state>/servers/<name>`.
    pub name: String,
    /// `mariadb`, `mysql` or `postgres`.
    pub engine: Engine,
    /// Install prefix of the build to run (binaries under `bin/`, `sbin/`, `scripts/`).
    /// Default: what is installed (`PATH`, `/usr/sbin`, `/usr/lib/postgresql/*/bin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<PathBuf>,
    /// Explicit server binary (`mariadbd`, `mysqld`, `postgres`); overrides `prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_bin: Option<PathBuf>,
    /// MariaDB's share files (`mysql_system_tables.sql`, `english/errmsg.sys`) for a bare
    /// server binary or a layout the initialiser does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_dir: Option<PathBuf>,
    /// A source tree (a folder, git or not, or a tarball) to build the server from; the
    /// build's install prefix becomes `prefix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PathBuf>,
    /// How to build `source`: `cmake` (the built-in recipe: the seeds' compile-amd64-max,
    /// RelWithDebInfo with `build-flags`, RPM layout) or a shell command run in the source
    /// tree that installs into `$DBRIG_PREFIX` (with `$DBRIG_SOURCE`, `$DBRIG_BUILD_DIR`,
    /// `$CFLAGS`, `$CXXFLAGS`). Built once per (revision, recipe, flags), cached under the
    /// output folder's `builds/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// An already-built MariaDB build tree run in place, with no install step: cmake's build
    /// folder (for an in-source build, the source tree itself). The server is its
    /// `sql/mariadbd`, the initialiser its `scripts/mariadb-install-db` (run with `--srcdir`
    /// and `--builddir`), the messages its `sql/share/`. Its source tree is `source` when
    /// given, else the one its `CMakeCache.txt` names, else the build tree itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_tree: Option<PathBuf>,
    /// CFLAGS of the build. Default: the seeds' `-O3 -g -fno-omit-frame-pointer
    /// -fno-strict-aliasing -DNDEBUG -DDBUG_OFF`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_flags: Option<String>,
    /// Explicit initialiser (`mariadb-install-db`, `initdb`); default: next to the server
    /// binary, else in the prefix, else installed. MySQL initialises with `mysqld` itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_bin: Option<PathBuf>,
    /// Data directory. Default: `<state>/servers/<name>/data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Server configuration file (MariaDB/MySQL `--defaults-file`, PostgreSQL `config_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<PathBuf>,
    /// Startup parameters (`--key=value` for MariaDB/MySQL, `-c key=value` for PostgreSQL).
    #[serde(default, skip_serializing_if = "Params::is_empty")]
    pub params: Params,
    /// The account to run the server as when dbrig runs as root (default `mysql` for
    /// MariaDB/MySQL, `postgres` for PostgreSQL; PostgreSQL refuses to run as root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as: Option<String>,
    /// A fixed loopback port. Default: a free one, picked at each start.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::Port, _>"
    )]
    pub port: Option<u16>,
    /// Seconds to wait for the server to accept connections (default 60).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub start_timeout: Option<f64>,
    /// Seconds to wait for a clean shutdown before SIGKILL (default 60).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "limits::de_opt::<limits::TimeoutSeconds, _>"
    )]
    pub stop_timeout: Option<f64>,
    /// Run the server under `numactl --interleave=all` (memory spread over NUMA nodes).
    /// Without `numactl` or on a single-node host this is said once and recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numa_interleave: bool,
    /// Leave the server as its initialiser makes it (MariaDB's passwordless root, PostgreSQL
    /// `trust`) for a throwaway box. Default: locked down — no anonymous account, root (the
    /// PostgreSQL superuser) with a random password kept in `secret` (mode 0600) in the
    /// server's state folder, PostgreSQL `scram-sha-256`, the socket folder 0700; dbrig
    /// connects with that secret.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open_access: bool,
}

impl ServerDef {
    /// A definition with everything defaulted.
    pub fn new(name: impl Into<String>, engine: Engine) -> Self {
        ServerDef {
            name: name.into(),
            engine,
            prefix: None,
            server_bin: None,
            share_dir: None,
            source: None,
            build: None,
            build_tree: None,
            build_flags: None,
            init_bin: None,
            data_dir: None,
            config_file: None,
            params: Params::default(),
            run_as: None,
            port: None,
            start_timeout: None,
            stop_timeout: None,
            numa_interleave: false,
            open_access: false,
        }
    }

    pub fn start_timeout(&self) -> Duration {
        dbrig_core::limits::duration(self.start_timeout.unwrap_or(60.0))
    }

    pub fn stop_timeout(&self) -> Duration {
        dbrig_core::limits::duration(self.stop_timeout.unwrap_or(60.0))
    }

    /// Make the definition's relative paths relative to `base` (a plan file's folder), and
    /// absolute: a plan's paths mean the same files wherever dbrig runs from.
    pub fn resolve_paths(&mut self, base: &Path) {
        for p in [
            &mut self.prefix,
            &mut self.server_bin,
            &mut self.share_dir,
            &mut self.source,
            &mut self.build_tree,
            &mut self.init_bin,
            &mut self.data_dir,
            &mut self.config_file,
        ]
        .into_iter()
        .flatten()
        {
            let joined = if p.is_absolute() {
                p.clone()
            } else {
                base.join(&*p)
            };
            *p = std::path::absolute(&joined).unwrap_or(joined);
        }
    }

    /// Checks the name (it becomes a folder name).
    pub fn validate(&self) -> Result<()> {
        let ok = !self.name.is_empty()
            && self.name.len() <= 64
            && !self.name.starts_with('.')
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok {
            return Err(ManagedError::BadDefinition(format!(
                "server name {:?}: use letters, digits, '-', '_', '.'",
                self.name
            )));
        }
        if self.build_tree.is_some() {
            let clash = [
                ("prefix", self.prefix.is_some()),
                ("server-bin", self.server_bin.is_some()),
                ("share-dir", self.share_dir.is_some()),
                ("build", self.build.is_some()),
            ];
            if let Some((key, _)) = clash.iter().find(|c| c.1) {
                return Err(ManagedError::BadDefinition(format!(
                    "server {}: build-tree runs a built tree in place and takes its server and share files from it; {key} says otherwise: set one of them",
                    self.name
                )));
            }
            if self.engine != Engine::Mariadb {
                return Err(ManagedError::BadDefinition(format!(
                    "server {}: build-tree is for MariaDB build trees (engine = \"mariadb\")",
                    self.name
                )));
            }
        }
        Ok(())
    }

    /// The server binary. For `mysql`, a `mysqld` that is really MariaDB (Debian's
    /// `mysqld -> mariadbd` link) is refused: Oracle MySQL initialises and starts differently.
    pub fn resolve_server_bin(&self) -> Result<PathBuf> {
        if let Some(tree) = &self.build_tree {
            return self.in_build_tree("server binary", tree, &["sql/mariadbd", "sql/mysqld"]);
        }
        let names: &[&str] = match self.engine {
            Engine::Mariadb => &["mariadbd", "mysqld"],
            Engine::Mysql => &["mysqld"],
            Engine::Postgres => &["postgres"],
        };
        let bin = self.resolve("server binary", self.server_bin.as_deref(), names, None)?;
        if self.engine == Engine::Mysql && is_mariadb_server(&bin) {
            return Err(ManagedError::BadDefinition(format!(
                "server {}: {} is MariaDB's server, not Oracle MySQL's; point prefix or server-bin at a MySQL build, or use engine = \"mariadb\"",
                self.name,
                bin.display()
            )));
        }
        Ok(bin)
    }

    /// The data-directory initialiser (for MySQL: the server binary itself).
    pub fn resolve_init_bin(&self, server_bin: &Path) -> Result<PathBuf> {
        if let (Some(tree), None) = (&self.build_tree, &self.init_bin) {
            return self.in_build_tree(
                "data directory initialiser",
                tree,
                &["scripts/mariadb-install-db", "scripts/mysql_install_db"],
            );
        }
        let names: &[&str] = match self.engine {
            Engine::Mariadb => &["mariadb-install-db", "mysql_install_db"],
            Engine::Mysql => return Ok(server_bin.to_owned()),
            Engine::Postgres => &["initdb"],
        };
        self.resolve(
            "data directory initialiser",
            self.init_bin.as_deref(),
            names,
            server_bin.parent(),
        )
    }

    /// The source tree of `build-tree`: `source`, else `CMakeCache.txt`'s
    /// `CMAKE_HOME_DIRECTORY`, else the build tree (an in-source build).
    pub fn build_tree_source(&self) -> Option<PathBuf> {
        let tree = self.build_tree.as_ref()?;
        if let Some(s) = &self.source {
            return Some(s.clone());
        }
        Some(
            super::build::cmake_cache_value(tree, "CMAKE_HOME_DIRECTORY")
                .map(PathBuf::from)
                .unwrap_or_else(|| tree.clone()),
        )
    }

    /// The first executable of `paths` (relative to the build tree `tree`); nothing else is
    /// looked at: a build tree run in place never falls back to what is installed.
    fn in_build_tree(&self, what: &'static str, tree: &Path, paths: &[&str]) -> Result<PathBuf> {
        let tree = std::path::absolute(tree).unwrap_or_else(|_| tree.to_owned());
        let candidates: Vec<PathBuf> = paths.iter().map(|p| tree.join(p)).collect();
        candidates
            .iter()
            .find(|p| is_executable(p))
            .cloned()
            .ok_or_else(|| ManagedError::BinaryNotFound {
                server: self.name.clone(),
                what,
                looked: candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    fn resolve(
        &self,
        what: &'static str,
        explicit: Option<&Path>,
        names: &[&str],
        sibling_dir: Option<&Path>,
    ) -> Result<PathBuf> {
        let not_found = |looked: Vec<PathBuf>| ManagedError::BinaryNotFound {
            server: self.name.clone(),
            what,
            looked: looked
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        if let Some(p) = explicit {
            return if is_executable(p) {
                Ok(p.to_owned())
            } else {
                Err(not_found(vec![p.to_owned()]))
            };
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(d) = sibling_dir {
            dirs.push(d.to_owned());
        }
        if let Some(prefix) = &self.prefix {
            for sub in ["bin", "sbin", "libexec", "scripts"] {
                dirs.push(prefix.join(sub));
            }
        } else {
            if let Some(path) = std::env::var_os("PATH") {
                dirs.extend(std::env::split_paths(&path));
            }
            dirs.extend(
                ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"].map(PathBuf::from),
            );
            if self.engine == Engine::Postgres {
                dirs.extend(installed_postgres_bins());
            }
        }
        let mut looked = Vec::new();
        for name in names {
            for d in &dirs {
                let p = d.join(name);
                if is_executable(&p) {
                    return Ok(p);
                }
                looked.push(p);
            }
        }
        looked.dedup();
        if looked.len() > 6 {
            let n = looked.len();
            looked.truncate(6);
            looked.push(PathBuf::from(format!("… {} more", n - 6)));
        }
        Err(not_found(looked))
    }
}

/// `/usr/lib/postgresql/<version>/bin`, newest version first.
fn installed_postgres_bins() -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir("/usr/lib/postgresql") else {
        return Vec::new();
    };
    let mut v: Vec<(u32, PathBuf)> = rd
        .filter_map(|e| {
            let e = e.ok()?;
            let ver = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            Some((ver, e.path().join("bin")))
        })
        .collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.0));
    v.into_iter().map(|(_, p)| p).collect()
}

/// Whether `bin` is MariaDB's server: its real name is `mariadbd`, or `--version` says so.
fn is_mariadb_server(bin: &Path) -> bool {
    let real = std::fs::canonicalize(bin).unwrap_or_else(|_| bin.to_owned());
    if real
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains("mariadb"))
    {
        return true;
    }
    std::process::Command::new(bin)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("MariaDB"))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Doc {
        server: Vec<ServerDef>,
    }

    #[test]
    fn parses_toml_tables() {
        let doc: Doc = toml::from_str(
            r#"
            [[server]]
            name = "maria"
            engine = "mariadb"
            prefix = "/opt/mariadb-11.4"
            params = { max_connections = 77, skip_name_resolve = true, innodb_buffer_pool_size = "1G" }
            start-timeout = 30

            [[server]]
            name = "pg"
            engine = "postgres"
            params = ["shared_buffers=256MB", "--fsync=off"]
            run-as = "postgres"
            "#,
        )
        .unwrap();
        assert_eq!(doc.server.len(), 2);
        let m = &doc.server[0];
        assert_eq!(m.engine, Engine::Mariadb);
        assert_eq!(
            m.params.to_strings(),
            [
                "innodb_buffer_pool_size=1G",
                "max_connections=77",
                "skip_name_resolve=on"
            ]
        );
        assert_eq!(m.start_timeout(), Duration::from_secs(30));
        let p = &doc.server[1];
        assert_eq!(p.params.to_strings(), ["shared_buffers=256MB", "fsync=off"]);
        assert_eq!(p.run_as.as_deref(), Some("postgres"));
        // Round trip through JSON.
        let j = serde_json::to_string(p).unwrap();
        let back: ServerDef = serde_json::from_str(&j).unwrap();
        assert_eq!(&back, p);
    }

    #[test]
    fn rejects_unknown_fields_and_bad_names() {
        let r: std::result::Result<Doc, _> =
            toml::from_str("[[server]]\nname='a'\nengine='mariadb'\ndatadir='x'\n");
        assert!(r.unwrap_err().to_string().contains("datadir"));
        assert!(ServerDef::new("../x", Engine::Mariadb).validate().is_err());
        assert!(ServerDef::new("ok-1.2", Engine::Mariadb).validate().is_ok());
    }

    #[test]
    fn params_merge_and_parse() {
        let a = Params::parse(&["max_connections=10", "port=1"]).unwrap();
        let b = Params::parse(&["max-connections=77"]).unwrap();
        assert_eq!(a.merged(&b).to_strings(), ["max_connections=77", "port=1"]);
        assert!(Params::parse(&["=3"]).is_err());
    }

    /// A fake server binary printing `version` for `--version`.
    fn fake_server(dir: &Path, name: &str, version: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn mysql_engine_differs() {
        let dir = tempfile::tempdir().unwrap();
        // Oracle MySQL: initialised by mysqld itself (`--initialize-insecure`).
        let mysqld = fake_server(
            dir.path(),
            "mysqld",
            "/usr/sbin/mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)",
        );
        let mut d = ServerDef::new("my", Engine::Mysql);
        d.server_bin = Some(mysqld.clone());
        assert_eq!(d.resolve_server_bin().unwrap(), mysqld);
        assert_eq!(d.resolve_init_bin(&mysqld).unwrap(), mysqld);
        // A mysqld that is MariaDB (Debian links mysqld -> mariadbd) is refused by name...
        let maria = fake_server(dir.path(), "mariadbd", "mariadbd  Ver 10.11.9-MariaDB");
        let link = dir.path().join("linked").join("mysqld");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&maria, &link).unwrap();
        d.server_bin = Some(link);
        let e = d.resolve_server_bin().unwrap_err().to_string();
        assert!(
            e.contains("MariaDB's server") && e.contains("server-bin"),
            "{e}"
        );
        // ... or by what it says it is.
        let renamed = fake_server(dir.path(), "mysqld-custom", "mysqld  Ver 10.6.1-MariaDB");
        d.server_bin = Some(renamed);
        assert!(d.resolve_server_bin().is_err());
        // No MySQL build in a prefix: the places looked at are named.
        let mut d = ServerDef::new("my", Engine::Mysql);
        d.prefix = Some("/nonexistent-mysql".into());
        let e = d.resolve_server_bin().unwrap_err().to_string();
        assert!(e.contains("/nonexistent-mysql/bin/mysqld"), "{e}");
        // Read-only starts: both switches on MariaDB/MySQL, one on PostgreSQL.
        assert_eq!(
            Engine::Mysql.read_only_params().to_strings(),
            ["read_only=ON", "innodb_read_only=ON"]
        );
        assert_eq!(
            Engine::Postgres.read_only_params().to_strings(),
            ["default_transaction_read_only=on"]
        );
    }

    #[test]
    fn missing_explicit_binary() {
        let mut d = ServerDef::new("x", Engine::Postgres);
        d.server_bin = Some("/nonexistent/postgres".into());
        let e = d.resolve_server_bin().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/postgres"), "{e}");
        let mut d = ServerDef::new("x", Engine::Mariadb);
        d.prefix = Some("/nonexistent-prefix".into());
        let e = d.resolve_server_bin().unwrap_err().to_string();
        assert!(e.contains("/nonexistent-prefix/bin/mariadbd"), "{e}");
    }
}
