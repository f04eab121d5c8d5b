//! Results on a server, and `dbrig results` (copy, export, import).
//!
//! `--results` names a SQLite file or a results server: a `postgres://` / `postgresql://` or
//! `mysql://` / `mariadb://` URL, parsed as a target is (dbrig-exec's `target::resolve`), so its
//! password comes from where targets' do — `~/.pgpass`, `PGPASSWORD`, MariaDB's option files,
//! `MYSQL_PWD`, or the URL itself (with the same warning) — and is handed to the store's client
//! only: the store's address is the redacted one.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use dbrig_driver::{Endpoint, Target};
use dbrig_exec::TargetSpec;
use dbrig_store::{
    Imported, Importer, Provenance, RunDocument, ServerAddress, ServerEndpoint, ServerEngine,
    ServerPassword, Store,
};

use crate::args::StoreArgs;
use crate::out::outln;

/// Whether a `--results` value names a results server rather than a file.
pub fn is_server_url(value: &OsStr) -> bool {
    let v = value.to_string_lossy();
    ["postgres://", "postgresql://", "mysql://", "mariadb://"]
        .iter()
        .any(|s| v.starts_with(s))
}

/// Open the results server `url` names.
pub fn open_server(url: &str) -> Result<Store> {
    let address = server_address(url)?;
    let shown = address.shown.clone();
    Store::open_server(&address).with_context(|| format!("opening results database {shown}"))
}

/// `url` resolved as a target, its password found where the engine's clients look for it.
pub fn server_address(url: &str) -> Result<ServerAddress> {
    let spec = TargetSpec {
        url: url.to_owned(),
        ..TargetSpec::default()
    };
    let warn = |w: &str| eprintln!("dbrig: warning: --results: {w}");
    let target = dbrig_exec::target::resolve(&spec, &warn)?;
    let shown = target.to_string();
    let (engine, user, endpoint, database, password) = match target {
        Target::Postgres {
            user,
            password,
            endpoint,
            database,
            ..
        } => (ServerEngine::Postgres, user, endpoint, database, password),
        Target::Mysql {
            user,
            password,
            endpoint,
            database,
            ..
        } => (ServerEngine::Mysql, user, endpoint, database, password),
        _ => anyhow::bail!("--results {shown}: not a PostgreSQL or MariaDB/MySQL URL"),
    };
    if database.is_empty() {
        anyhow::bail!("--results {shown}: name the database that holds the results (…/DB)");
    }
    let endpoint = match endpoint {
        Endpoint::Tcp { host, port } => ServerEndpoint::Tcp { host, port },
        Endpoint::Socket(path) => {
            let (dir, port) = dbrig_driver::pg_socket_dir_and_port(&path);
            match engine {
                ServerEngine::Postgres => ServerEndpoint::Socket {
                    path: dir.to_owned(),
                    port: port.unwrap_or(5432),
                },
                ServerEngine::Mysql => ServerEndpoint::Socket { path, port: 0 },
            }
        }
    };
    Ok(ServerAddress {
        engine,
        endpoint,
        user,
        database,
        password: password.map(|p| ServerPassword::new(p.expose())),
        shown,
    })
}

/// Where a measured run's code came from: stored with the run, listed by `dbrig runs`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProvenanceArgs {
    /// A tag stored with the run, KEY=VALUE (repeatable: `--tag branch=main --tag pr=123`).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
    pub tags: Vec<(String, String)>,
    /// The revision of the code under test (a commit id, a tag), stored with the run.
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
}

fn parse_tag(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(format!("'{s}' is not KEY=VALUE")),
    }
}

impl ProvenanceArgs {
    /// As stored (a key given twice keeps its last value).
    pub fn provenance(&self) -> Provenance {
        Provenance {
            tags: self.tags.iter().cloned().collect(),
            commit: self.commit.clone(),
        }
    }

    /// `--tag` and `--commit` belong to a run being measured: a command that only reads
    /// results refuses them rather than ignore them.
    pub fn refuse_unless_measuring(&self) -> Result<()> {
        if !self.tags.is_empty() || self.commit.is_some() {
            anyhow::bail!(
                "--tag and --commit are stored with a run as it is measured: give them to the command that measures"
            );
        }
        Ok(())
    }
}

/// `dbrig results`: move runs between results databases, or to and from a file.
#[derive(Debug, clap::Args)]
pub struct ResultsArgs {
    #[command(subcommand)]
    pub command: ResultsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ResultsCommand {
    /// Copy every run of FROM into TO (a file or a results server each: a laptop's
    /// results.db into the team's PostgreSQL, say). A run TO holds already (the same run id,
    /// its `uid`) is left as it is, so copying again copies only what is new.
    Copy {
        /// Results to copy: a SQLite file, or postgres://… / mysql://….
        from: String,
        /// Where to copy them: a SQLite file (created if new), or postgres://… / mysql://….
        to: String,
    },
    /// Write every run of the results database (`--results`) to FILE, one JSON document per
    /// run, gzip-compressed (`.jsonl.gz`): results that travel without a database.
    Export {
        /// The file to write (refused if it exists).
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Store every run of an exported FILE in the results database (`--results`); runs it
    /// holds already are left as they are.
    Import {
        /// A file `dbrig results export` wrote.
        file: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// `dbrig results …`.
pub fn results(args: ResultsArgs) -> Result<ExitCode> {
    match args.command {
        ResultsCommand::Copy { from, to } => {
            let from = open_location(&from, false)?;
            let mut to = open_location(&to, true)?;
            let mut tally = Tally::default();
            for run in from.runs()? {
                let doc = RunDocument::read(&*from, run.id)?;
                tally.add(Importer::new(&mut to).import(&doc)?);
            }
            outln!(
                "{} from {} to {}",
                tally.said(),
                from.path().display(),
                to.path().display()
            )?;
        }
        ResultsCommand::Export { to, store } => {
            let from = crate::console::open_existing_store(&store)?;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&to)
                .with_context(|| format!("cannot create {}", to.display()))?;
            let mut gz = flate2::write::GzEncoder::new(
                std::io::BufWriter::new(file),
                flate2::Compression::default(),
            );
            let runs = from.runs()?;
            for run in &runs {
                let doc = RunDocument::read(&*from, run.id)?;
                serde_json::to_writer(&mut gz, &doc)?;
                gz.write_all(b"\n")?;
            }
            gz.finish()?.flush()?;
            outln!(
                "{} run(s) from {} exported to {}",
                runs.len(),
                from.path().display(),
                to.display()
            )?;
        }
        ResultsCommand::Import { file, store } => {
            let f = std::fs::File::open(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let mut to = crate::console::open_store(&store)?;
            let mut tally = Tally::default();
            let lines = BufReader::new(flate2::read::GzDecoder::new(f)).lines();
            for (n, line) in lines.enumerate() {
                let line = line.with_context(|| format!("reading {}", file.display()))?;
                if line.trim().is_empty() {
                    continue;
                }
                let doc: RunDocument = serde_json::from_str(&line).with_context(|| {
                    format!(
                        "{} line {}: not a dbrig run document",
                        file.display(),
                        n + 1
                    )
                })?;
                tally.add(Importer::new(&mut to).import(&doc)?);
            }
            outln!(
                "{} from {} into {}",
                tally.said(),
                file.display(),
                to.path().display()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A `results copy` place: a results server's URL, or a SQLite file (which must exist when it
/// is read from).
fn open_location(place: &str, create: bool) -> Result<Store> {
    if is_server_url(OsStr::new(place)) {
        return open_server(place);
    }
    let path = Path::new(place);
    if !create && !path.is_file() {
        anyhow::bail!("no results database at {place}");
    }
    Store::open(path).with_context(|| format!("opening {place}"))
}

/// What a copy or an import did, run by run.
#[derive(Default)]
struct Tally {
    stored: usize,
    there: usize,
    running: usize,
}

impl Tally {
    fn add(&mut self, imported: Imported) {
        match imported {
            Imported::Stored(_) => self.stored += 1,
            Imported::AlreadyThere(_) => self.there += 1,
            Imported::StillRunning => self.running += 1,
        }
    }

    fn said(&self) -> String {
        let mut s = format!(
            "{} run(s) copied, {} already there",
            self.stored, self.there
        );
        if self.running > 0 {
            s.push_str(&format!(
                ", {} still being written (not copied: copy again once they end)",
                self.running
            ));
        }
        s
    }
}
