//! One managed server: init, start, wait, stop, restart, status, snapshots.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::launch::{self, LaunchInfo, LaunchTools};
use super::process::{self, RunAs};
use super::{Engine, LifeMark, ManagedError, Params, Result, ServerDef, probe};

const MARKER: &str = ".dbrig-managed";
/// The locked-down server's password, in its state folder (mode 0600).
const SECRET_FILE: &str = "secret";
/// SQL the first start of a locked-down MariaDB/MySQL runs (`--init-file`), then removed.
const LOCKDOWN_FILE: &str = "lockdown.sql";
const STATE_FILE: &str = "state.json";
/// Unix socket paths are limited to 108 bytes (`sun_path`), including the terminating NUL.
const MAX_SOCKET_PATH: usize = 100;

/// What a caller needs to build a connection target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectionInfo {
    pub engine: Engine,
    /// Always `127.0.0.1`.
    pub host: String,
    pub port: u16,
    /// The Unix socket file.
    pub socket: PathBuf,
    /// `root` (MariaDB/MySQL) or `postgres`; locked down (the default) they need the
    /// password in the server's `secret` file, open access (`open-access = true`) none.
    pub user: String,
    /// `test` for MariaDB/MySQL, `postgres` for PostgreSQL (a `test` database exists too).
    pub database: String,
}

impl ConnectionInfo {
    /// A dbrig target URL over TCP (`mysql://root@127.0.0.1:PORT/test`, …).
    pub fn url(&self) -> String {
        let scheme = match self.engine {
            Engine::Mariadb | Engine::Mysql => "mysql",
            Engine::Postgres => "postgres",
        };
        format!(
            "{scheme}://{}@{}:{}/{}",
            self.user, self.host, self.port, self.database
        )
    }
}

/// What `state.json` records about a running server (read by `dbrig server stop|status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerState {
    pub name: String,
    pub engine: Engine,
    /// The server's pid; it also leads its own process group.
    pub pid: u32,
    pub port: u16,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
    pub log: PathBuf,
    pub started_unix: f64,
    /// The effective startup parameters (definition merged with the start's extras).
    pub params: Vec<String>,
    /// Wrappers, parent-death signal and NUMA placement of this start.
    #[serde(default)]
    pub launch: LaunchInfo,
    /// False while the server has been spawned but has not answered yet (a dbrig killed in
    /// that window leaves this state for the next one to clean up).
    #[serde(default = "yes")]
    pub ready: bool,
}

fn yes() -> bool {
    true
}

/// A server's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub name: String,
    pub engine: Engine,
    pub running: bool,
    /// The running server's pid, or the last one if it died.
    pub pid: Option<u32>,
    pub port: Option<u16>,
    pub socket: Option<PathBuf>,
    /// Seconds since the server started (`uptime_secs` in the JSON of older versions).
    #[serde(alias = "uptime_secs")]
    pub uptime_s: Option<f64>,
    pub data_dir: PathBuf,
    pub initialised: bool,
    pub log: PathBuf,
    /// How the last server process ended, if this process saw it end unexpectedly or stop.
    pub last_exit: Option<String>,
    /// How many times this `ManagedServer` started the server.
    pub generation: u64,
}

/// How the last server process ended, as this process saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LastExit {
    /// What is shown (`ServerStatus::last_exit`), e.g. `signal: 9 (SIGKILL)`.
    how: String,
    /// The start that ended this way failed because its port was taken (the server's log said
    /// so): [`ManagedServer::start`] then retries on another free port.
    port_conflict: bool,
}

impl LastExit {
    fn new(how: impl Into<String>) -> Self {
        LastExit {
            how: how.into(),
            port_conflict: false,
        }
    }
}

impl std::fmt::Display for LastExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.how)?;
        if self.port_conflict {
            f.write_str(" (port-conflict)")?;
        }
        Ok(())
    }
}

struct Running {
    /// `None` when adopted from `state.json` (started by another dbrig process).
    child: Option<Child>,
    pid: u32,
    port: u16,
    socket: PathBuf,
    started: SystemTime,
    params: Params,
    launch: LaunchInfo,
}

/// A database server that dbrig runs. Dropping it stops a server it started (unless detached).
pub struct ManagedServer {
    def: ServerDef,
    dir: PathBuf,
    data_dir: PathBuf,
    server_bin: PathBuf,
    /// Set when running as root: the account the server runs as.
    run_as: Option<RunAs>,
    running: Option<Running>,
    generation: u64,
    last_pid: Option<u32>,
    last_exit: Option<LastExit>,
    /// Whether servers it starts die with this process (parent-death signal); false for
    /// `dbrig server start`, whose server outlives dbrig.
    tied: bool,
    tools: LaunchTools,
}

impl std::fmt::Debug for ManagedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagedServer")
            .field("name", &self.def.name)
            .field("engine", &self.def.engine)
            .field("data_dir", &self.data_dir)
            .field("pid", &self.running.as_ref().map(|r| r.pid))
            .finish()
    }
}

fn now_unix(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl ManagedServer {
    /// Resolves binaries and paths and adopts a server that another dbrig process left
    /// running (`state.json`), without touching the data directory.
    pub fn open(def: ServerDef, state_dir: &Path) -> Result<Self> {
        def.validate()?;
        let name = def.name.clone();
        let io = |context: &str| {
            let server = name.clone();
            let context = context.to_owned();
            move |source| ManagedError::Io {
                server,
                context,
                source,
            }
        };
        let state_dir = std::path::absolute(state_dir).map_err(io("state folder"))?;
        let dir = state_dir.join("servers").join(&def.name);
        let data_dir = match &def.data_dir {
            Some(d) => std::path::absolute(d).map_err(io("data directory"))?,
            None => dir.join("data"),
        };
        let server_bin = def.resolve_server_bin()?;
        let run_as = if process::is_root() {
            let user = def
                .run_as
                .clone()
                .unwrap_or_else(|| def.engine.default_user().to_owned());
            if user == "root" && def.engine == Engine::Postgres {
                return Err(ManagedError::BadDefinition(format!(
                    "server {}: PostgreSQL refuses to run as root; set run-as to an unprivileged user",
                    def.name
                )));
            }
            Some(
                process::lookup_user(&user).ok_or_else(|| ManagedError::UnknownUser {
                    server: def.name.clone(),
                    user: user.clone(),
                })?,
            )
        } else {
            None
        };
        let mut s = ManagedServer {
            def,
            dir,
            data_dir,
            server_bin,
            run_as,
            running: None,
            generation: 0,
            last_pid: None,
            last_exit: None,
            tied: true,
            tools: LaunchTools::detect(),
        };
        s.recover_interrupted_restore()?;
        s.adopt_state()?;
        Ok(s)
    }

    /// [`open`](Self::open), then initialises the data directory unless it already is a
    /// dbrig-initialised one of this engine. A non-empty directory without dbrig's marker is
    /// refused.
    pub fn init(def: ServerDef, state_dir: &Path) -> Result<Self> {
        let mut s = Self::open(def, state_dir)?;
        s.initialise()?;
        Ok(s)
    }

    pub fn def(&self) -> &ServerDef {
        &self.def
    }

    /// Whether the servers this value starts get a signal when dbrig dies (default true).
    /// `dbrig server start` turns it off: its server is meant to outlive dbrig.
    pub fn set_dies_with_dbrig(&mut self, tied: bool) {
        self.tied = tied;
    }

    /// How the running server was launched (wrappers, parent-death signal, NUMA placement).
    pub fn launch_info(&self) -> Option<&LaunchInfo> {
        self.running.as_ref().map(|r| &r.launch)
    }

    pub fn name(&self) -> &str {
        &self.def.name
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The server's state folder (`<state>/servers/<name>`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    pub fn server_bin(&self) -> &Path {
        &self.server_bin
    }

    fn io_err(&self, context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ManagedError {
        let server = self.def.name.clone();
        let context = context.into();
        move |source| ManagedError::Io {
            server,
            context,
            source,
        }
    }

    /// Whether the data directory carries dbrig's marker for this engine.
    pub fn is_initialised(&self) -> bool {
        self.marker_engine().as_deref() == Some(self.def.engine.name())
    }

    fn marker_engine(&self) -> Option<String> {
        let text = fs::read_to_string(self.data_dir.join(MARKER)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("engine")?.as_str().map(str::to_owned)
    }

    // -----------------------------------------------------------------------------------------
    // Directories and init
    // -----------------------------------------------------------------------------------------

    fn prepare_dirs(&self) -> Result<()> {
        for d in [&self.dir, &self.dir.join("snapshots")] {
            fs::create_dir_all(d).map_err(self.io_err(format!("creating {}", d.display())))?;
        }
        let _ = fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o755));
        self.make_owned_dir(&self.run_dir())?;
        self.make_owned_dir(&self.tmp_dir())?;
        if let Some(u) = &self.run_as {
            for start in [&self.dir, &self.data_dir] {
                for a in start.ancestors().skip(1) {
                    let Ok(m) = fs::metadata(a) else { continue };
                    use std::os::unix::fs::MetadataExt;
                    let mode = m.mode();
                    let bit = if m.uid() == u.uid {
                        0o100
                    } else if m.gid() == u.gid {
                        0o010
                    } else {
                        0o001
                    };
                    if u.uid != 0 && mode & bit == 0 {
                        return Err(ManagedError::NotTraversable {
                            server: self.def.name.clone(),
                            user: u.name.clone(),
                            dir: a.to_owned(),
                            mode: mode & 0o7777,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Creates `d` (if needed) owned by the server's user, mode 0755 — 0700 for a
    /// locked-down server (its socket is then for its own user and root only).
    fn make_owned_dir(&self, d: &Path) -> Result<()> {
        fs::create_dir_all(d).map_err(self.io_err(format!("creating {}", d.display())))?;
        if let Some(u) = &self.run_as {
            chown(d, Some(u.uid), Some(u.gid))
                .map_err(self.io_err(format!("chown {}", d.display())))?;
        }
        let mode = if self.def.open_access { 0o755 } else { 0o700 };
        fs::set_permissions(d, fs::Permissions::from_mode(mode))
            .map_err(self.io_err(format!("chmod {}", d.display())))
    }

    /// Where a locked-down server's password is kept.
    pub fn secret_path(&self) -> PathBuf {
        self.dir.join(SECRET_FILE)
    }

    /// The password dbrig connects with: `None` for an open-access server (or one
    /// initialised by an older dbrig, which made none).
    pub fn secret(&self) -> Option<String> {
        let s = fs::read_to_string(self.secret_path()).ok()?;
        let s = s.trim().to_owned();
        (!s.is_empty()).then_some(s)
    }

    /// Write `contents` to `path`, mode 0600 from its creation, owned by the server's user
    /// (which must read it: `initdb --pwfile`, `--init-file`).
    fn write_private(&self, path: &Path, contents: &str) -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = fs::remove_file(path);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(self.io_err(format!("creating {}", path.display())))?;
        f.write_all(contents.as_bytes())
            .map_err(self.io_err(format!("writing {}", path.display())))?;
        if let Some(u) = &self.run_as {
            chown(path, Some(u.uid), Some(u.gid))
                .map_err(self.io_err(format!("chown {}", path.display())))?;
        }
        Ok(())
    }

    /// A new random password (128 bits from the kernel, as hex) kept in the state folder,
    /// and for MariaDB/MySQL the SQL its first start runs to lock the accounts down.
    fn make_secret(&self) -> Result<String> {
        let mut bytes = [0u8; 16];
        File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(self.io_err("reading /dev/urandom"))?;
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.write_private(&self.secret_path(), &format!("{secret}\n"))?;
        let sql = match self.def.engine {
            Engine::Mariadb => Some(include_str!("sql/lockdown_mariadb.sql")),
            Engine::Mysql => Some(include_str!("sql/lockdown_mysql.sql")),
            Engine::Postgres => None,
        };
        if let Some(sql) = sql {
            let body: String = sql
                .lines()
                .filter(|l| !l.trim_start().starts_with("--"))
                .map(|l| format!("{l}\n"))
                .collect();
            self.write_private(
                &self.dir.join(LOCKDOWN_FILE),
                &body.replace("{password}", &secret),
            )?;
        }
        Ok(secret)
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }

    /// The server's own temporary folder. MariaDB/MySQL default to `/tmp`, and a server
    /// starting there deletes every `#sql*` file it finds — the temporary tables of another
    /// server's bootstrap among them (`mariadb-install-db` then fails with "Unknown table
    /// 'mysql.tmp_user_sys'" when two managed servers start at once).
    fn tmp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// `--tmpdir` for MariaDB/MySQL unless the user's config file decides.
    fn tmpdir_arg(&self) -> Option<String> {
        self.def
            .config_file
            .is_none()
            .then(|| format!("--tmpdir={}", self.tmp_dir().display()))
    }

    /// Initialises the data directory (see [`init`](Self::init)).
    pub fn initialise(&mut self) -> Result<()> {
        self.prepare_dirs()?;
        if let Some(found) = self.marker_engine() {
            if found == self.def.engine.name() {
                return Ok(());
            }
            return Err(ManagedError::EngineMismatch {
                server: self.def.name.clone(),
                dir: self.data_dir.clone(),
                found,
                expected: self.def.engine.name().to_owned(),
            });
        }
        let existed = self.data_dir.exists();
        if existed {
            let non_empty = fs::read_dir(&self.data_dir)
                .map_err(self.io_err(format!("reading {}", self.data_dir.display())))?
                .next()
                .is_some();
            if non_empty {
                return Err(ManagedError::ForeignDataDir {
                    server: self.def.name.clone(),
                    dir: self.data_dir.clone(),
                });
            }
        }
        fs::create_dir_all(&self.data_dir).map_err(self.io_err("creating the data directory"))?;
        if let Some(u) = &self.run_as {
            chown(&self.data_dir, Some(u.uid), Some(u.gid))
                .map_err(self.io_err("chown of the data directory"))?;
        }
        fs::set_permissions(&self.data_dir, fs::Permissions::from_mode(0o700))
            .map_err(self.io_err("chmod of the data directory"))?;
        if !self.def.open_access {
            self.make_secret()?;
        } else {
            let _ = fs::remove_file(self.secret_path());
        }
        let result = self.run_initialiser();
        if result.is_err() {
            // Leave the directory as we found it (it was empty or absent).
            let _ = fs::remove_dir_all(&self.data_dir);
            if existed {
                let _ = fs::create_dir(&self.data_dir);
            }
            return result;
        }
        let marker = serde_json::json!({
            "engine": self.def.engine.name(),
            "server": self.def.name,
            "created_unix": now_unix(SystemTime::now()),
            "server_bin": self.server_bin,
        });
        fs::write(self.data_dir.join(MARKER), format!("{marker}\n"))
            .map_err(self.io_err("writing the data directory marker"))
    }

    fn basedir(&self) -> Option<PathBuf> {
        if self.needs_layout() {
            return Some(self.layout_dir());
        }
        self.given_basedir()
    }

    /// The base folder the definition implies: the prefix, a build tree run in place, or
    /// above a given server binary.
    fn given_basedir(&self) -> Option<PathBuf> {
        if let Some(t) = &self.def.build_tree {
            return Some(std::path::absolute(t).unwrap_or_else(|_| t.clone()));
        }
        if let Some(p) = &self.def.prefix {
            return Some(p.clone());
        }
        if self.def.server_bin.is_some() {
            return self.server_bin.parent()?.parent().map(Path::to_owned);
        }
        None
    }

    /// Whether MariaDB's initialiser cannot find its way in this install: share files given
    /// apart (`share-dir`), or no `sbin/mariadbd` under the base folder (a bare binary, the
    /// seeds' RPM layout with the server in `libexec/`). Then dbrig lays out a folder of links
    /// as `mariadb-install-db --basedir` expects it ([`Self::make_layout`]).
    /// A definition that names its own initialiser (`init-bin`) and no `share-dir` is taken as
    /// it is: that initialiser knows its own files.
    fn needs_layout(&self) -> bool {
        self.def.engine == Engine::Mariadb
            && self.def.build_tree.is_none()
            && (self.def.share_dir.is_some()
                || self.def.init_bin.is_none()
                    && self.given_basedir().is_some_and(|b| {
                        !b.join("sbin/mariadbd").exists() && !b.join("sbin/mysqld").exists()
                    }))
    }

    /// A build tree run in place: its source tree and the build tree, absolute.
    fn build_tree_dirs(&self) -> Option<(PathBuf, PathBuf)> {
        let tree = self.def.build_tree.as_ref()?;
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        let src = self.def.build_tree_source()?;
        Some((abs(&src), abs(tree)))
    }

    fn layout_dir(&self) -> PathBuf {
        self.dir.join("basedir")
    }

    /// Links `sbin/mariadbd`, `bin/my_print_defaults`, `bin/resolveip`, `share/mysql` and
    /// `lib/mysql/plugin` into [`Self::layout_dir`], each found beside the server binary, in
    /// the base folder's usual places or (the tools) installed; says which path to set when
    /// the share files are nowhere.
    fn make_layout(&self) -> Result<()> {
        if !self.needs_layout() {
            return Ok(());
        }
        let base = self.given_basedir();
        let bin_dir = self.server_bin.parent().map(Path::to_owned);
        let mut places: Vec<PathBuf> = Vec::new();
        places.extend(bin_dir.clone());
        if let Some(b) = &base {
            for sub in ["bin", "extra", "client", "scripts", "libexec", "sbin"] {
                places.push(b.join(sub));
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            places.extend(std::env::split_paths(&path));
        }
        places.extend(["/usr/bin", "/usr/local/bin"].map(PathBuf::from));
        let tool = |name: &str| places.iter().map(|d| d.join(name)).find(|p| p.is_file());
        let mut share_places: Vec<PathBuf> = self.def.share_dir.iter().cloned().collect();
        if self.def.share_dir.is_none() {
            for b in base.iter().chain(
                bin_dir
                    .as_ref()
                    .and_then(|d| d.parent())
                    .map(Path::new)
                    .map(Path::to_owned)
                    .iter(),
            ) {
                share_places.push(b.join("share/mysql"));
                share_places.push(b.join("share/mariadb"));
                share_places.push(b.join("share"));
            }
        }
        let share = share_places
            .iter()
            .find(|d| d.join("mysql_system_tables.sql").is_file())
            .cloned();
        let Some(share) = share else {
            return Err(ManagedError::BinaryNotFound {
                server: self.def.name.clone(),
                what: "MariaDB's share files (mysql_system_tables.sql, english/errmsg.sys): set share-dir = DIR",
                looked: share_places
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let Some(print_defaults) = tool("my_print_defaults") else {
            return Err(ManagedError::BinaryNotFound {
                server: self.def.name.clone(),
                what: "my_print_defaults (put it beside the server binary, or set prefix = DIR)",
                looked: places
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let plugins = base
            .iter()
            .flat_map(|b| {
                [
                    "lib/mysql/plugin",
                    "lib64/mysql/plugin",
                    "lib/plugin",
                    "lib64/plugin",
                ]
                .map(|s| b.join(s))
            })
            .find(|d| d.is_dir());
        let dir = self.layout_dir();
        let _ = fs::remove_dir_all(&dir);
        // The server and the share files where any layout's initialiser looks: `sbin/`,
        // `libexec/` or `bin/`; `share/mysql/` or `share/` (the standard layout's).
        let mut links: Vec<(PathBuf, String)> = vec![
            (self.server_bin.clone(), "sbin/mariadbd".into()),
            (self.server_bin.clone(), "libexec/mariadbd".into()),
            (self.server_bin.clone(), "bin/mariadbd".into()),
            (print_defaults, "bin/my_print_defaults".into()),
            (share.clone(), "share/mysql".into()),
        ];
        for e in fs::read_dir(&share)
            .map_err(self.io_err(format!("reading {}", share.display())))?
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name != "mysql" {
                links.push((e.path(), format!("share/{name}")));
            }
        }
        links.extend(tool("resolveip").map(|p| (p, "bin/resolveip".into())));
        links.extend(plugins.map(|p| (p, "lib/mysql/plugin".into())));
        for (target, link) in links {
            let at = dir.join(link);
            if let Some(parent) = at.parent() {
                fs::create_dir_all(parent).map_err(self.io_err("laying out the base folder"))?;
            }
            let target = std::path::absolute(&target).unwrap_or(target);
            std::os::unix::fs::symlink(&target, &at)
                .map_err(self.io_err(format!("linking {}", at.display())))?;
        }
        Ok(())
    }

    /// The initialiser's arguments. MariaDB's `mariadb-install-db` and Oracle MySQL's
    /// `mysqld --initialize-insecure` (which creates no `test` database: `init.sql` does)
    /// take the data directory and the user; PostgreSQL's `initdb` runs as the user.
    fn init_args(&self) -> Vec<String> {
        let data = self.data_dir.display().to_string();
        let mut args: Vec<String> = Vec::new();
        match self.def.engine {
            Engine::Mariadb | Engine::Mysql => {
                args.push("--no-defaults".into());
                if let Some((src, tree)) = self.build_tree_dirs() {
                    // The initialiser's own way of running from a tree: the server in
                    // `sql/`, SQL scripts from both trees, messages from `sql/share/`.
                    args.push(format!("--srcdir={}", src.display()));
                    args.push(format!("--builddir={}", tree.display()));
                    if !tree.join("extra/resolveip").is_file() {
                        args.push("--force".into());
                    }
                } else if let Some(b) = self.basedir() {
                    args.push(format!("--basedir={}", b.display()));
                }
                if self.needs_layout() {
                    // The layout has no resolveip of its own kind: no host name lookups.
                    args.push("--force".into());
                }
                if self.def.engine == Engine::Mysql {
                    args.push("--initialize-insecure".into());
                }
                args.push(format!("--datadir={data}"));
                args.extend(self.tmpdir_arg());
                if self.def.engine == Engine::Mariadb {
                    args.push("--auth-root-authentication-method=normal".into());
                } else {
                    args.push(format!("--init-file={}", self.init_sql_path().display()));
                }
                if let Some(u) = &self.run_as {
                    args.push(format!("--user={}", u.name));
                }
            }
            Engine::Postgres if !self.def.open_access => {
                args.extend(["-D", &data, "-U", "postgres"].map(String::from));
                args.push("--auth=scram-sha-256".into());
                args.push(format!("--pwfile={}", self.secret_path().display()));
                args.extend(["-E", "UTF8", "--locale=C", "--no-sync"].map(String::from));
            }
            Engine::Postgres => {
                args.extend(["-D", &data, "-U", "postgres", "--auth=trust"].map(String::from));
                args.extend(["-E", "UTF8", "--locale=C", "--no-sync"].map(String::from));
            }
        }
        args
    }

    fn init_sql_path(&self) -> PathBuf {
        self.dir.join("init.sql")
    }

    fn run_initialiser(&self) -> Result<()> {
        self.make_layout()?;
        let init_bin = self.def.resolve_init_bin(&self.server_bin)?;
        let data = self.data_dir.display().to_string();
        if self.def.engine == Engine::Mysql {
            fs::write(
                self.init_sql_path(),
                "CREATE DATABASE IF NOT EXISTS test;\n",
            )
            .map_err(self.io_err("writing init.sql"))?;
        }
        let mut cmd = Command::new(&init_bin);
        cmd.args(self.init_args());
        if self.def.engine == Engine::Postgres {
            self.drop_privileges(&mut cmd);
        }
        self.run_logged(&init_bin, cmd, None)?;
        if self.def.engine == Engine::Postgres {
            // The `test` database, created in single-user mode (no server, no client needed).
            let mut single = Command::new(&self.server_bin);
            single.args(["--single", "-D", &data, "-j", "postgres"]);
            self.drop_privileges(&mut single);
            self.run_logged(&self.server_bin, single, Some("CREATE DATABASE test;\n"))?;
        }
        Ok(())
    }

    /// Runs an initialisation step, appending its output to the server log; a failure carries
    /// the step's most relevant error line.
    fn run_logged(&self, bin: &Path, mut cmd: Command, stdin: Option<&str>) -> Result<()> {
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .current_dir(&self.dir);
        let mut child = cmd
            .spawn()
            .map_err(self.io_err(format!("running {}", bin.display())))?;
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let _ = pipe.write_all(text.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(self.io_err(format!("running {}", bin.display())))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Ok(mut log) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
        {
            let _ = writeln!(log, "--- dbrig: {} ---\n{text}", bin.display());
        }
        if out.status.success() {
            return Ok(());
        }
        Err(ManagedError::InitFailed {
            server: self.def.name.clone(),
            status: format!("{} {}", bin.display(), out.status),
            detail: probe::error_line(self.def.engine, &text)
                .unwrap_or_else(|| "no output".to_owned()),
        })
    }

    fn drop_privileges(&self, cmd: &mut Command) {
        if let Some(u) = &self.run_as {
            cmd.uid(u.uid).gid(u.gid);
        }
    }

    // -----------------------------------------------------------------------------------------
    // State file
    // -----------------------------------------------------------------------------------------

    fn state_path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    /// Reads `state.json` (if any).
    pub fn read_state(&self) -> Result<Option<ServerState>> {
        let path = self.state_path();
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| ManagedError::State {
                    server: self.def.name.clone(),
                    path,
                    detail: e.to_string(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io_err("reading state.json")(e)),
        }
    }

    fn write_state(&self, ready: bool) -> Result<()> {
        let Some(r) = &self.running else {
            return Ok(());
        };
        let st = ServerState {
            name: self.def.name.clone(),
            engine: self.def.engine,
            pid: r.pid,
            port: r.port,
            socket: r.socket.clone(),
            data_dir: self.data_dir.clone(),
            log: self.log_path(),
            started_unix: now_unix(r.started),
            params: r.params.to_strings(),
            launch: r.launch.clone(),
            ready,
        };
        let tmp = self.dir.join("state.json.tmp");
        let text = serde_json::to_string_pretty(&st).unwrap_or_default();
        fs::write(&tmp, text + "\n").map_err(self.io_err("writing state.json"))?;
        fs::rename(&tmp, self.state_path()).map_err(self.io_err("writing state.json"))
    }

    fn adopt_state(&mut self) -> Result<()> {
        let Some(st) = self.read_state()? else {
            return Ok(());
        };
        if process::server_pid_alive(st.pid, &st.data_dir) {
            self.running = Some(Running {
                child: None,
                pid: st.pid,
                port: st.port,
                socket: st.socket,
                started: UNIX_EPOCH + dbrig_core::limits::duration(st.started_unix),
                params: Params::parse(&st.params).unwrap_or_default(),
                launch: st.launch,
            });
        } else {
            self.last_pid = Some(st.pid);
            // The dbrig that started it died (or it crashed): clean up after both.
            self.last_exit = Some(LastExit::new(format!(
                "not running (found a stale state.json{})",
                if st.ready {
                    ""
                } else {
                    " of a start that never finished"
                }
            )));
            self.kill_leftovers(st.pid);
            let _ = fs::remove_file(self.state_path());
        }
        Ok(())
    }

    /// Kills what remains of a dead server's process group (e.g. PostgreSQL backends after
    /// the postmaster was killed), if the group's members look like this engine's processes.
    fn kill_leftovers(&self, pgid: u32) {
        let members = process::group_members(pgid);
        if members.is_empty() {
            return;
        }
        let bin = self
            .server_bin
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ours = members.iter().all(|p| {
            process::cmdline_of(*p).is_some_and(|c| {
                c.contains(&bin) || c.starts_with("postgres:") || c.starts_with("postgres ")
            })
        });
        if ours {
            process::kill_group_leftovers(pgid);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Start
    // -----------------------------------------------------------------------------------------

    /// Whether the server is running; notices (and records) a server that died.
    pub fn is_running(&mut self) -> bool {
        let Some(r) = &mut self.running else {
            return false;
        };
        let exited = match &mut r.child {
            Some(child) => match child.try_wait() {
                Ok(Some(status)) => Some(status.to_string()),
                Ok(None) => None,
                Err(e) => Some(format!("unknown ({e})")),
            },
            None => {
                (!process::server_pid_alive(r.pid, &self.data_dir)).then(|| "exited".to_owned())
            }
        };
        match exited {
            None => true,
            Some(how) => {
                let pid = r.pid;
                self.running = None;
                self.last_pid = Some(pid);
                self.last_exit = Some(LastExit::new(how));
                process::deregister(pid);
                self.kill_leftovers(pid);
                let _ = fs::remove_file(self.state_path());
                false
            }
        }
    }

    /// Starts the server with the definition's parameters overridden by `extra`, and waits
    /// until it accepts connections (or fails with the server's own error line).
    pub fn start(&mut self, extra: &Params) -> Result<()> {
        if self.is_running() {
            let r = self
                .running
                .as_ref()
                .map(|r| (r.pid, r.port))
                .unwrap_or_default();
            return Err(ManagedError::AlreadyRunning {
                server: self.def.name.clone(),
                pid: r.0,
                port: r.1,
            });
        }
        self.prepare_dirs()?;
        self.make_layout()?;
        if !self.is_initialised() {
            return Err(ManagedError::NotInitialised {
                server: self.def.name.clone(),
                dir: self.data_dir.clone(),
            });
        }
        let dd = self.data_dir.display().to_string();
        if let Some(pid) = process::processes_mentioning(&dd).first() {
            return Err(ManagedError::AlreadyRunning {
                server: self.def.name.clone(),
                pid: *pid,
                port: 0,
            });
        }
        let params = self.def.params.merged(extra);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.start_once(&params) {
                Err(ManagedError::StartFailed { .. })
                    if self.def.port.is_none()
                        && attempt < 3
                        && self.last_start_port_conflict() =>
                {
                    continue;
                }
                other => return other,
            }
        }
    }

    fn last_start_port_conflict(&self) -> bool {
        self.last_exit.as_ref().is_some_and(|e| e.port_conflict)
    }

    fn pick_port(&self) -> Result<u16> {
        let port = self.def.port.unwrap_or(0);
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => Ok(l
                .local_addr()
                .map_err(self.io_err("finding a free port"))?
                .port()),
            Err(_) if port != 0 => Err(ManagedError::PortInUse {
                server: self.def.name.clone(),
                port,
            }),
            Err(e) => Err(self.io_err("finding a free port")(e)),
        }
    }

    /// The socket folder: `run/` in the state folder, or a short folder under the temporary
    /// directory when that path would be too long for a Unix socket.
    fn socket_dir(&self) -> Result<PathBuf> {
        let run = self.run_dir();
        if run.as_os_str().len() + 20 <= MAX_SOCKET_PATH {
            return Ok(run);
        }
        let short =
            std::env::temp_dir().join(format!("dbrig-{}-{}", self.def.name, std::process::id()));
        self.make_owned_dir(&short)?;
        Ok(short)
    }

    /// The server's arguments for one start on `port` with `params`.
    fn server_args(
        &self,
        port: u16,
        socket: &Path,
        sock_dir: &Path,
        params: &Params,
    ) -> Vec<String> {
        let data = self.data_dir.display().to_string();
        let mut args: Vec<String> = Vec::new();
        match self.def.engine {
            Engine::Mariadb | Engine::Mysql => {
                args.push(match &self.def.config_file {
                    Some(f) => format!("--defaults-file={}", f.display()),
                    None => "--no-defaults".into(),
                });
                if let Some(b) = self.basedir() {
                    args.push(format!("--basedir={}", b.display()));
                }
                if let Some((src, tree)) = self.build_tree_dirs() {
                    args.push(format!(
                        "--lc-messages-dir={}",
                        tree.join("sql/share").display()
                    ));
                    let charsets = src.join("sql/share/charsets");
                    if charsets.is_dir() {
                        args.push(format!("--character-sets-dir={}", charsets.display()));
                    }
                }
                if self.needs_layout() {
                    let b = self.layout_dir();
                    args.push(format!(
                        "--lc-messages-dir={}",
                        b.join("share/mysql").display()
                    ));
                    if b.join("lib/mysql/plugin").exists() {
                        args.push(format!(
                            "--plugin-dir={}",
                            b.join("lib/mysql/plugin").display()
                        ));
                    }
                }
                args.push(format!("--datadir={data}"));
                args.extend(self.tmpdir_arg());
                args.push(format!("--port={port}"));
                args.push(format!("--socket={}", socket.display()));
                args.push("--bind-address=127.0.0.1".into());
                args.push(format!(
                    "--pid-file={}",
                    self.run_dir().join("server.pid").display()
                ));
                if self.def.engine == Engine::Mysql {
                    // MySQL 8's X plugin would listen on 33060, shared by every server.
                    args.push("--loose-mysqlx=OFF".into());
                }
                let lockdown = self.dir.join(LOCKDOWN_FILE);
                if lockdown.exists() {
                    // Runs before the server takes its first connection.
                    args.push(format!("--init-file={}", lockdown.display()));
                }
                if self.run_as.as_ref().is_some_and(|u| u.uid == 0) {
                    // mysqld refuses to run as root unless told so.
                    args.push("--user=root".into());
                }
                args.extend(params.iter().map(|(k, v)| format!("--{k}={v}")));
            }
            Engine::Postgres => {
                args.extend(["-D".into(), data, "-p".into(), port.to_string()]);
                args.extend(["-k".into(), sock_dir.display().to_string()]);
                args.extend(["-c", "listen_addresses=127.0.0.1"].map(String::from));
                args.extend(["-c", "logging_collector=off"].map(String::from));
                if let Some(f) = &self.def.config_file {
                    args.extend(["-c".into(), format!("config_file={}", f.display())]);
                }
                for (k, v) in params.iter() {
                    args.extend(["-c".into(), format!("{k}={v}")]);
                }
            }
        }
        args
    }

    fn start_once(&mut self, params: &Params) -> Result<()> {
        let port = self.pick_port()?;
        let sock_dir = self.socket_dir()?;
        let engine = self.def.engine;
        let socket = match engine {
            Engine::Mariadb | Engine::Mysql => sock_dir.join("mysqld.sock"),
            Engine::Postgres => sock_dir.join(format!(".s.PGSQL.{port}")),
        };
        let _ = fs::remove_file(&socket);
        let (wrappers, launch) =
            launch::plan_launch(engine, &self.tools, self.tied, self.def.numa_interleave);
        let mut cmd = launch::wrapped_command(&wrappers, &self.server_bin);
        cmd.args(self.server_args(port, &socket, &sock_dir, params));
        // dbrig drops to the server's user before exec (never the server with `--user`): the
        // kernel clears the parent-death signal when a process changes its own credentials.
        self.drop_privileges(&mut cmd);
        let log_path = self.log_path();
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(self.io_err(format!("opening {}", log_path.display())))?;
        let _ = writeln!(
            log,
            "--- dbrig: starting {} on port {port} ---",
            self.server_bin.display()
        );
        let offset = log.seek(SeekFrom::End(0)).unwrap_or(0);
        let err_log = log.try_clone().map_err(self.io_err("opening the log"))?;
        cmd.stdin(Stdio::null())
            .stdout(log)
            .stderr(err_log)
            .current_dir(&self.dir)
            // Its own process group: a Ctrl-C at the terminal does not reach the server.
            .process_group(0);
        let child = launch::spawn_kept(cmd)
            .map_err(self.io_err(format!("starting {}", self.server_bin.display())))?;
        let pid = child.id();
        process::register(pid, engine, &self.data_dir);
        self.generation += 1;
        let started = SystemTime::now();
        self.running = Some(Running {
            child: Some(child),
            pid,
            port,
            socket,
            started,
            params: params.clone(),
            launch,
        });
        // Written before the wait, so a dbrig killed while the server starts leaves a trace
        // that the next one uses to stop (or clean up after) this server.
        self.write_state(false)?;
        let deadline = Instant::now() + self.def.start_timeout();
        loop {
            if !self.is_running() {
                let text = read_from(&log_path, offset);
                let line = probe::error_line(engine, &text)
                    .unwrap_or_else(|| "no error in its log".to_owned());
                let how = self
                    .last_exit
                    .as_ref()
                    .map(|e| e.how.clone())
                    .unwrap_or_default();
                self.last_exit = Some(LastExit {
                    how: how.clone(),
                    port_conflict: probe::port_conflict(&text),
                });
                return Err(ManagedError::StartFailed {
                    server: self.def.name.clone(),
                    detail: format!("it exited ({how}): {line}"),
                    log: log_path,
                });
            }
            if probe::probe(engine, port) == probe::Probe::Ready {
                break;
            }
            if Instant::now() >= deadline {
                let _ = self.stop_with(Duration::from_secs(5));
                let text = read_from(&log_path, offset);
                let line = probe::error_line(engine, &text)
                    .unwrap_or_else(|| "no error in its log".to_owned());
                return Err(ManagedError::StartFailed {
                    server: self.def.name.clone(),
                    detail: format!(
                        "no connection within {:.0}s (killed it); last log line: {line}",
                        self.def.start_timeout().as_secs_f64()
                    ),
                    log: log_path,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Applied (the server ran it before answering): the file holds the password.
        let _ = fs::remove_file(self.dir.join(LOCKDOWN_FILE));
        self.last_exit = None;
        self.write_state(true)
    }

    // -----------------------------------------------------------------------------------------
    // Stop, restart, status
    // -----------------------------------------------------------------------------------------

    /// Stops the server: a clean shutdown signal (SIGTERM; SIGINT, "fast", for PostgreSQL),
    /// up to `stop-timeout` to exit, then SIGKILL to its process group. Not running: no-op.
    pub fn stop(&mut self) -> Result<()> {
        self.stop_with(self.def.stop_timeout())
    }

    fn stop_with(&mut self, timeout: Duration) -> Result<()> {
        if !self.is_running() {
            return Ok(());
        }
        let Some(mut r) = self.running.take() else {
            return Ok(());
        };
        let engine = self.def.engine;
        process::send_signal(r.pid, process::graceful_signal(engine), false);
        let data_dir = self.data_dir.clone();
        let mut exited: Option<String> = None;
        let clean = process::wait_until(timeout, || match &mut r.child {
            Some(c) => match c.try_wait() {
                Ok(Some(st)) => {
                    exited = Some(st.to_string());
                    true
                }
                Ok(None) => false,
                Err(_) => true,
            },
            None => !process::server_pid_alive(r.pid, &data_dir),
        });
        if !clean {
            process::send_signal(r.pid, process::Signal::Kill, true);
            if let Some(c) = &mut r.child {
                let _ = c.kill();
                exited = c.wait().ok().map(|s| format!("{s} after SIGKILL"));
            } else {
                process::wait_until(Duration::from_secs(5), || {
                    !process::server_pid_alive(r.pid, &data_dir)
                });
                exited = Some("killed".to_owned());
            }
        }
        process::kill_group_leftovers(r.pid);
        process::deregister(r.pid);
        let _ = fs::remove_file(self.state_path());
        self.last_pid = Some(r.pid);
        self.last_exit = Some(LastExit::new(format!(
            "stopped: {}",
            exited.as_deref().unwrap_or("exited")
        )));
        Ok(())
    }

    /// Stops and starts again with the definition's parameters overridden by `extra`.
    pub fn restart(&mut self, extra: &Params) -> Result<()> {
        self.stop()?;
        self.start(extra)
    }

    /// Pid, port, socket, uptime, and whether it runs.
    pub fn status(&mut self) -> ServerStatus {
        let running = self.is_running();
        let r = self.running.as_ref();
        ServerStatus {
            name: self.def.name.clone(),
            engine: self.def.engine,
            running,
            pid: r.map(|r| r.pid).or(self.last_pid),
            port: r.map(|r| r.port),
            socket: r.map(|r| r.socket.clone()),
            uptime_s: r.map(|r| {
                SystemTime::now()
                    .duration_since(r.started)
                    .unwrap_or_default()
                    .as_secs_f64()
            }),
            data_dir: self.data_dir.clone(),
            initialised: self.is_initialised(),
            log: self.log_path(),
            last_exit: self.last_exit.as_ref().map(LastExit::to_string),
            generation: self.generation,
        }
    }

    /// How to connect to the running server.
    pub fn connection_info(&self) -> Result<ConnectionInfo> {
        let r = self
            .running
            .as_ref()
            .ok_or_else(|| ManagedError::NotRunning {
                server: self.def.name.clone(),
            })?;
        let (user, database) = match self.def.engine {
            Engine::Mariadb | Engine::Mysql => ("root", "test"),
            Engine::Postgres => ("postgres", "postgres"),
        };
        Ok(ConnectionInfo {
            engine: self.def.engine,
            host: "127.0.0.1".to_owned(),
            port: r.port,
            socket: r.socket.clone(),
            user: user.to_owned(),
            database: database.to_owned(),
        })
    }

    /// The process side of restart detection: pid and start generation, `died` when the
    /// server is not running. Combine with the SQL side ([`LifeMark::from_uptime`], …).
    pub fn life_mark(&mut self) -> LifeMark {
        let running = self.is_running();
        LifeMark {
            died: !running,
            ..LifeMark::default()
        }
        .with_process(
            self.running.as_ref().map(|r| r.pid).or(self.last_pid),
            Some(self.generation),
        )
    }

    /// The startup parameters of the running server (definition merged with extras).
    pub fn current_params(&self) -> Option<&Params> {
        self.running.as_ref().map(|r| &r.params)
    }

    /// Leaves the server running after this value is dropped (for `dbrig server start`):
    /// it is removed from the shutdown registry; `state.json` tells a later dbrig how to reach
    /// and stop it.
    pub fn detach(mut self) -> Option<ServerState> {
        let st = self.read_state().ok().flatten();
        if let Some(r) = self.running.take() {
            process::deregister(r.pid);
            // Dropping a `Child` neither kills nor waits for it.
            drop(r.child);
        }
        st
    }

    // -----------------------------------------------------------------------------------------
    // Snapshots
    // -----------------------------------------------------------------------------------------

    fn snapshot_path(&self, name: &str) -> Result<PathBuf> {
        let ok = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok {
            return Err(ManagedError::BadDefinition(format!(
                "snapshot name {name:?}: use letters, digits, '-', '_', '.'"
            )));
        }
        Ok(self.dir.join("snapshots").join(name))
    }

    /// Whether a snapshot exists.
    pub fn has_snapshot(&self, name: &str) -> bool {
        self.snapshot_path(name).is_ok_and(|p| p.is_dir())
    }

    /// Stops the server (cleanly), copies the data directory to snapshot `name` (replacing an
    /// older one), and starts it again with the same parameters if it was running.
    pub fn snapshot_data(&mut self, name: &str) -> Result<()> {
        let dest = self.snapshot_path(name)?;
        if !self.is_initialised() {
            return Err(ManagedError::NotInitialised {
                server: self.def.name.clone(),
                dir: self.data_dir.clone(),
            });
        }
        let params = self.paused()?;
        let tmp = dest.with_extension("tmp");
        let _ = fs::remove_dir_all(&tmp);
        let copied = self.copy_tree(&self.data_dir, &tmp).and_then(|()| {
            let _ = fs::remove_dir_all(&dest);
            fs::rename(&tmp, &dest).map_err(self.io_err("renaming the snapshot"))
        });
        let resumed = self.resume(params);
        copied.and(resumed)
    }

    /// Stops the server, replaces the data directory by a copy of snapshot `name`, and starts
    /// it again with the same parameters if it was running.
    pub fn restore_data(&mut self, name: &str) -> Result<()> {
        let src = self.snapshot_path(name)?;
        if !src.is_dir() {
            return Err(ManagedError::NoSnapshot {
                server: self.def.name.clone(),
                snapshot: name.to_owned(),
            });
        }
        if self.data_dir.exists() && !self.is_initialised() {
            return Err(ManagedError::ForeignDataDir {
                server: self.def.name.clone(),
                dir: self.data_dir.clone(),
            });
        }
        let params = self.paused()?;
        // Copy beside the data directory, then swap by renames: a dbrig killed during the
        // copy leaves the old data directory whole, and one killed between the renames is
        // put right by the next `open` (see `recover_interrupted_restore`).
        let (incoming, outgoing) = self.restore_paths();
        let _ = fs::remove_dir_all(&incoming);
        self.copy_tree(&src, &incoming)?;
        if self.data_dir.exists() {
            let _ = fs::remove_dir_all(&outgoing);
            fs::rename(&self.data_dir, &outgoing)
                .map_err(self.io_err("moving the old data directory aside"))?;
        }
        fs::rename(&incoming, &self.data_dir)
            .map_err(self.io_err("moving the restored data directory in place"))?;
        let _ = fs::remove_dir_all(&outgoing);
        self.resume(params)
    }

    /// `<data>.dbrig-restore` (the copy being made) and `<data>.dbrig-old` (the directory
    /// being replaced), siblings of the data directory so the renames stay on one file system.
    fn restore_paths(&self) -> (PathBuf, PathBuf) {
        let with = |suffix: &str| {
            let mut name = self.data_dir.file_name().unwrap_or_default().to_owned();
            name.push(suffix);
            self.data_dir.with_file_name(name)
        };
        (with(".dbrig-restore"), with(".dbrig-old"))
    }

    /// Finishes or undoes a restore that a killed dbrig left half done: the old directory is
    /// put back when the data directory is missing; a partial copy is removed.
    fn recover_interrupted_restore(&self) -> Result<()> {
        let (incoming, outgoing) = self.restore_paths();
        if outgoing.exists() {
            if self.data_dir.exists() {
                let _ = fs::remove_dir_all(&outgoing);
            } else {
                fs::rename(&outgoing, &self.data_dir)
                    .map_err(self.io_err("putting back the data directory of a killed restore"))?;
            }
        }
        if incoming.exists() {
            let _ = fs::remove_dir_all(&incoming);
        }
        Ok(())
    }

    /// Stops a running server; returns its parameters to resume with.
    fn paused(&mut self) -> Result<Option<Params>> {
        if !self.is_running() {
            return Ok(None);
        }
        let params = self.running.as_ref().map(|r| r.params.clone());
        self.stop()?;
        Ok(params)
    }

    fn resume(&mut self, params: Option<Params>) -> Result<()> {
        match params {
            // The running parameters already include the definition's: start with exactly them.
            Some(p) => {
                let saved = std::mem::take(&mut self.def.params);
                let r = self.start(&p);
                self.def.params = saved;
                r
            }
            None => Ok(()),
        }
    }

    /// `cp -a --reflink=auto SRC DEST` (a copy-on-write clone where the file system allows).
    fn copy_tree(&self, src: &Path, dest: &Path) -> Result<()> {
        let out = Command::new("cp")
            .args(["-a", "--reflink=auto", "--"])
            .arg(src)
            .arg(dest)
            .stdin(Stdio::null())
            .output()
            .map_err(self.io_err("running cp"))?;
        if out.status.success() {
            return Ok(());
        }
        Err(self.io_err(format!(
            "copying {} to {}",
            src.display(),
            dest.display()
        ))(std::io::Error::other(
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        )))
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        if self.running.as_ref().is_some_and(|r| r.child.is_some()) {
            let _ = self.stop();
        }
    }
}

fn read_from(path: &Path, offset: u64) -> String {
    let mut s = String::new();
    if let Ok(mut f) = File::open(path)
        && f.seek(SeekFrom::Start(offset)).is_ok()
    {
        let mut buf = Vec::new();
        let _ = f.read_to_end(&mut buf);
        s = String::from_utf8_lossy(&buf).into_owned();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake Oracle MySQL install under `dir` (`bin/mysqld` answering `--version`).
    fn fake_mysql(dir: &Path) -> ServerDef {
        let bin = dir.join("mysql-8.4").join("bin");
        fs::create_dir_all(&bin).unwrap();
        let mysqld = bin.join("mysqld");
        fs::write(
            &mysqld,
            "#!/bin/sh\necho 'mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)'\n",
        )
        .unwrap();
        fs::set_permissions(&mysqld, fs::Permissions::from_mode(0o755)).unwrap();
        let mut def = ServerDef::new("my", Engine::Mysql);
        def.prefix = Some(dir.join("mysql-8.4"));
        def
    }

    /// A `make install` prefix in the standard layout (server in `bin/`, share files in
    /// `share/`) and one without share files: the linked base folder, or which path to set.
    #[test]
    fn any_install_layout_gets_the_base_folder_the_initialiser_expects() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("maria");
        for d in ["bin", "share/english"] {
            fs::create_dir_all(prefix.join(d)).unwrap();
        }
        for tool in ["bin/mariadbd", "bin/my_print_defaults"] {
            fs::write(prefix.join(tool), "#!/bin/sh\n").unwrap();
            fs::set_permissions(prefix.join(tool), fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(prefix.join("share/mysql_system_tables.sql"), "").unwrap();
        fs::write(prefix.join("share/english/errmsg.sys"), "").unwrap();
        let mut def = ServerDef::new("std", Engine::Mariadb);
        def.prefix = Some(prefix.clone());
        let mut s = ManagedServer::open(def.clone(), &dir.path().join("state")).unwrap();
        s.run_as = None;
        assert!(s.needs_layout());
        s.make_layout().unwrap();
        let base = s.layout_dir();
        for p in [
            "sbin/mariadbd",
            "libexec/mariadbd",
            "bin/my_print_defaults",
            "share/mysql/mysql_system_tables.sql",
            "share/mysql_system_tables.sql",
            "share/mysql/english/errmsg.sys",
            "share/english/errmsg.sys",
        ] {
            assert!(base.join(p).exists(), "{p}");
        }
        let args = s.init_args();
        assert!(
            args.contains(&format!("--basedir={}", base.display())),
            "{args:?}"
        );
        assert!(args.contains(&"--force".to_owned()), "{args:?}");

        fs::remove_file(prefix.join("share/mysql_system_tables.sql")).unwrap();
        let s = ManagedServer::open(def, &dir.path().join("state2")).unwrap();
        let e = s.make_layout().unwrap_err().to_string();
        assert!(
            e.contains("set share-dir") && e.contains("share/mysql"),
            "{e}"
        );
    }

    /// A build tree run in place: the tree's own server and initialiser, `--srcdir` from its
    /// `CMakeCache.txt` and `--builddir`, messages from `sql/share`, no linked base folder; a
    /// tree without a server says where it looked and never falls back to what is installed.
    #[test]
    fn a_build_tree_runs_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        let tree = dir.path().join("build");
        fs::create_dir_all(src.join("sql/share/charsets")).unwrap();
        for d in ["sql", "scripts"] {
            fs::create_dir_all(tree.join(d)).unwrap();
        }
        for tool in ["sql/mariadbd", "scripts/mariadb-install-db"] {
            fs::write(tree.join(tool), "#!/bin/sh\n").unwrap();
            fs::set_permissions(tree.join(tool), fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::write(
            tree.join("CMakeCache.txt"),
            format!(
                "# cache\nCMAKE_HOME_DIRECTORY:INTERNAL={}\nCMAKE_BUILD_TYPE:STRING=Debug\n",
                src.display()
            ),
        )
        .unwrap();
        let mut def = ServerDef::new("tree", Engine::Mariadb);
        def.build_tree = Some(tree.clone());
        let mut s = ManagedServer::open(def.clone(), &dir.path().join("state")).unwrap();
        s.run_as = None;
        assert_eq!(s.server_bin(), tree.join("sql/mariadbd"));
        assert_eq!(
            s.def.resolve_init_bin(&s.server_bin).unwrap(),
            tree.join("scripts/mariadb-install-db")
        );
        assert!(!s.needs_layout());
        let args = s.init_args();
        for want in [
            format!("--srcdir={}", src.display()),
            format!("--builddir={}", tree.display()),
            "--force".to_owned(), // no extra/resolveip in this tree
        ] {
            assert!(args.contains(&want), "{want}: {args:?}");
        }
        assert!(!args.iter().any(|a| a.starts_with("--basedir")), "{args:?}");
        let started = s.server_args(3306, Path::new("/s"), Path::new("/"), &Params::new());
        for want in [
            format!("--basedir={}", tree.display()),
            format!("--lc-messages-dir={}", tree.join("sql/share").display()),
            format!(
                "--character-sets-dir={}",
                src.join("sql/share/charsets").display()
            ),
        ] {
            assert!(started.contains(&want), "{want}: {started:?}");
        }
        // `source` names the source tree over the cache's.
        let mut other = def.clone();
        other.source = Some(dir.path().join("elsewhere"));
        assert_eq!(
            other.build_tree_source(),
            Some(dir.path().join("elsewhere"))
        );
        // Without a server in the tree: where it looked, nothing installed instead.
        fs::remove_file(tree.join("sql/mariadbd")).unwrap();
        let e = ManagedServer::open(def.clone(), &dir.path().join("state2"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&tree.join("sql/mariadbd").display().to_string()),
            "{e}"
        );
        assert!(!e.contains("/usr/sbin"), "{e}");
        // A build tree with an install prefix as well is refused.
        let mut both = def;
        both.prefix = Some("/opt/x".into());
        let e = both.validate().unwrap_err().to_string();
        assert!(e.contains("build-tree") && e.contains("prefix"), "{e}");
    }

    #[test]
    fn last_exit_shows_a_port_conflict() {
        let mut e = LastExit::new("exit status: 1");
        assert_eq!(e.to_string(), "exit status: 1");
        e.port_conflict = true;
        assert_eq!(e.to_string(), "exit status: 1 (port-conflict)");
    }

    #[test]
    fn mysql_initialises_with_mysqld_and_disables_the_x_plugin() {
        let dir = tempfile::tempdir().unwrap();
        let def = fake_mysql(dir.path());
        let prefix = def.prefix.clone().unwrap();
        let mut s = ManagedServer::open(def, &dir.path().join("state")).unwrap();
        s.run_as = None; // as an unprivileged user
        assert_eq!(s.def.resolve_init_bin(&s.server_bin).unwrap(), s.server_bin);
        let data = s.data_dir.display().to_string();
        assert_eq!(
            s.init_args(),
            [
                "--no-defaults".to_owned(),
                format!("--basedir={}", prefix.display()),
                "--initialize-insecure".to_owned(),
                format!("--datadir={data}"),
                format!("--tmpdir={}", s.dir.join("tmp").display()),
                format!("--init-file={}", s.dir.join("init.sql").display()),
            ]
        );
        let params = Params::parse(&["max_connections=77"]).unwrap();
        let socket = s.run_dir().join("mysqld.sock");
        let args = s.server_args(4000, &socket, &s.run_dir(), &params);
        assert!(args.contains(&"--loose-mysqlx=OFF".to_owned()), "{args:?}");
        assert!(args.contains(&"--port=4000".to_owned()), "{args:?}");
        assert!(
            args.contains(&"--bind-address=127.0.0.1".to_owned()),
            "{args:?}"
        );
        assert_eq!(args.last().unwrap(), "--max_connections=77");
        // Run by root: the user is taken before exec (so `--user` is not passed), except
        // root itself, which mysqld accepts only when told.
        s.run_as = Some(RunAs {
            name: "mysql".into(),
            uid: 999,
            gid: 999,
        });
        let args = s.server_args(4000, &socket, &s.run_dir(), &params);
        assert!(!args.iter().any(|a| a.starts_with("--user")), "{args:?}");
        assert!(s.init_args().contains(&"--user=mysql".to_owned()));
        s.run_as = Some(RunAs {
            name: "root".into(),
            uid: 0,
            gid: 0,
        });
        let args = s.server_args(4000, &socket, &s.run_dir(), &params);
        assert!(args.contains(&"--user=root".to_owned()), "{args:?}");
        // MariaDB initialises with its own tool and has no X plugin to disable.
        s.def.engine = Engine::Mariadb;
        let args = s.server_args(4000, &socket, &s.run_dir(), &params);
        assert!(!args.contains(&"--loose-mysqlx=OFF".to_owned()), "{args:?}");
        assert!(!s.init_args().contains(&"--initialize-insecure".to_owned()));
    }
}
