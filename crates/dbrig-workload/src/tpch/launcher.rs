//! The old DBT-3 launcher's configuration (`launcher.pl`, mariadb-tools/dbt3_benchmark) read
//! into a dbrig plan, so people who ran those benchmarks can re-run them.
//!
//! The launcher takes a top-level ini file: `[common]` names the test configuration
//! (`TEST_CONFIG`) and the results database configuration (`RESULTS_DB_CONFIG`); every other
//! section is one configuration with a DBMS file (`DB_CONFIG`, section `[db_settings]`) and a
//! queries file (`QUERIES_CONFIG`: `[queries_settings]` plus one section per query). Values may
//! use the keywords `$PROJECT_HOME`, `$DATADIR_HOME`, `$QUERIES_HOME`, `$SCALE_FACTOR` (given
//! on the launcher's command line), and the upper-case startup parameters (`--TIMEOUT=600`,
//! `--NUM_TESTS=3` …) override the test configuration.
//!
//! What maps: DBMS files become `[[server]]` definitions (or an external `target` when no
//! `DBMS_HOME` is given) and `[[configuration]]` tables with their startup parameters and
//! test-level SQL hooks; the test and queries files become the `controls` of a `tpch_power`
//! workload (reduction, runs, warm-ups, timeouts, restarts, cache drops, per-query startup
//! parameters and hooks, `EXPLAIN_QUERY` as `explain` after the timed run); `GRAPH_HEADING`
//! becomes the workload's label, which heads its table and chart. Everything without a dbrig
//! equivalent (the results database, `RUN = 0`) is written as a comment that names the setting
//! and says what to do instead — nothing is dropped silently.
//!
//! The ini files are parsed here rather than with an ini crate: values must reach the plan
//! verbatim (`PRE_RUN_SQL = flush status; set global userstat=on;`, `STARTUP_PARAMS =
//! --optimizer_switch='mrr=on'`), which the common crates would cut at `;` or unquote, and the
//! launcher's format is only sections, `KEY = VALUE` lines and `#`/`;` comment lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a launcher configuration could not be read into a plan; each names the file (and line
/// or key) to fix.
#[derive(Debug, thiserror::Error)]
pub enum LauncherError {
    #[error("cannot read {}: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: section header '{text}' has no closing ']'", file.display())]
    UnclosedSection {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{}:{line}: '{text}' is neither a [section] nor KEY = VALUE", file.display())]
    NotKeyValue {
        file: PathBuf,
        line: usize,
        text: String,
    },
    #[error("{}: {key} uses {word}: give its value with {option}", file.display())]
    KeywordNotGiven {
        file: PathBuf,
        key: String,
        word: &'static str,
        option: &'static str,
    },
    #[error("{}: {why}", file.display())]
    StartupParams {
        file: PathBuf,
        why: StartupParamsError,
    },
    #[error("{}: {key} = '{value}' is not a number of the kind the launcher takes", file.display())]
    NotANumber {
        file: PathBuf,
        key: String,
        value: String,
    },
    #[error("{}: DBMS = '{dbms}': the launcher knows MySQL, MariaDB and PostgreSQL", file.display())]
    UnknownDbms { file: PathBuf, dbms: String },
    #[error("{}: DBMS is not set (MySQL, MariaDB or PostgreSQL)", file.display())]
    NoDbms { file: PathBuf },
    #[error("--{key} is not one of the launcher's overrides ({})", OVERRIDABLE.join(", "))]
    NotOverridable { key: String },
    #[error("--override {given}: write it as KEY=VALUE, e.g. --override TIMEOUT=600")]
    OverrideNotKeyValue { given: String },
    #[error("{}: [{section}] has no {key}: the launcher needs it", file.display())]
    MissingKey {
        file: PathBuf,
        section: String,
        key: &'static str,
    },
    #[error("{}: no [{section}] section (the launcher requires it)", file.display())]
    MissingSection {
        file: PathBuf,
        section: &'static str,
    },
    #[error("{}: no configuration section besides [common]: nothing to run", file.display())]
    NothingToRun { file: PathBuf },
    #[error("give --scale-factor: the plan's tpch_power workload loads data of that scale factor")]
    NoScaleFactor,
    #[error("{}: {} are all set: the launcher takes one result extraction mechanism", file.display(), settings.join(", "))]
    SeveralReductions {
        file: PathBuf,
        settings: Vec<&'static str>,
    },
}

/// Why a `STARTUP_PARAMS` value does not split into parameters.
#[derive(Debug, thiserror::Error)]
pub enum StartupParamsError {
    #[error("STARTUP_PARAMS '{0}' has an unclosed quote")]
    UnclosedQuote(String),
    #[error("STARTUP_PARAMS '{0}': -c without a setting")]
    DashCWithoutSetting(String),
}

/// One ini file: sections in file order, keys in file order (a repeated key keeps the last).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ini {
    pub path: PathBuf,
    pub sections: Vec<(String, Vec<(String, String)>)>,
}

impl Ini {
    /// Parse the launcher's ini syntax. Keys before any section go to a section named "".
    pub fn parse(path: &Path, text: &str) -> Result<Ini, LauncherError> {
        let mut ini = Ini {
            path: path.to_owned(),
            sections: Vec::new(),
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let name =
                    rest.strip_suffix(']')
                        .ok_or_else(|| LauncherError::UnclosedSection {
                            file: path.to_owned(),
                            line: n + 1,
                            text: line.to_owned(),
                        })?;
                ini.sections.push((name.trim().to_owned(), Vec::new()));
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(LauncherError::NotKeyValue {
                    file: path.to_owned(),
                    line: n + 1,
                    text: line.to_owned(),
                });
            };
            if ini.sections.is_empty() {
                ini.sections.push((String::new(), Vec::new()));
            }
            let entries = &mut ini.sections.last_mut().expect("pushed above").1;
            let (k, v) = (k.trim().to_owned(), v.trim().to_owned());
            entries.retain(|(key, _)| *key != k);
            entries.push((k, v));
        }
        Ok(ini)
    }

    pub fn section(&self, name: &str) -> Option<&[(String, String)]> {
        self.sections
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, e)| e.as_slice())
    }

    /// Every key of every section, later sections winning (test files have one section whose
    /// name the launcher does not fix).
    pub fn all(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (_, entries) in &self.sections {
            for (k, v) in entries {
                out.retain(|(key, _)| key != k);
                out.push((k.clone(), v.clone()));
            }
        }
        out
    }
}

/// The launcher's keywords and upper-case overrides, as given to `import-launcher`.
#[derive(Debug, Clone, Default)]
pub struct LauncherInputs {
    pub project_home: Option<String>,
    pub datadir_home: Option<String>,
    pub queries_home: Option<String>,
    pub scale_factor: Option<String>,
    /// `KEY=VALUE` overrides of the test configuration (`--TIMEOUT=600` → `TIMEOUT=600`).
    pub overrides: Vec<(String, String)>,
}

/// One override as `dbrig tpch import-launcher --override` takes it: `KEY=VALUE` (or the
/// launcher's own `--KEY=VALUE`).
pub fn parse_override(given: &str) -> Result<(String, String), LauncherError> {
    let (k, v) = given
        .trim_start_matches('-')
        .split_once('=')
        .ok_or_else(|| LauncherError::OverrideNotKeyValue {
            given: given.to_owned(),
        })?;
    Ok((k.trim().to_owned(), v.trim().to_owned()))
}

/// Settings the launcher's startup parameters may override (its documented list).
pub const OVERRIDABLE: &[&str] = &[
    "CLEAR_CACHES",
    "QUERIES_AT_ONCE",
    "RUN",
    "EXPLAIN",
    "TIMEOUT",
    "NUM_TESTS",
    "MAX_SKIPPED_TESTS",
    "WARMUP",
    "WARMUPS_COUNT",
    "MAX_QUERY_TIME",
    "CLUSTER_SIZE",
    "PRE_RUN_OS",
    "POST_RUN_OS",
    "OS_STATS_INTERVAL",
];

impl LauncherInputs {
    /// Replace the keywords in a value; a keyword without its value is an error naming the
    /// file, the key and the option to give.
    pub fn expand(&self, file: &Path, key: &str, value: &str) -> Result<String, LauncherError> {
        let mut v = value.to_owned();
        for (word, given, option) in [
            ("$PROJECT_HOME", &self.project_home, "--project-home"),
            ("$DATADIR_HOME", &self.datadir_home, "--datadir-home"),
            ("$QUERIES_HOME", &self.queries_home, "--queries-home"),
            ("$SCALE_FACTOR", &self.scale_factor, "--scale-factor"),
        ] {
            if v.contains(word) {
                let Some(g) = given else {
                    return Err(LauncherError::KeywordNotGiven {
                        file: file.to_owned(),
                        key: key.to_owned(),
                        word,
                        option,
                    });
                };
                v = v.replace(word, g.trim_end_matches('/'));
            }
        }
        Ok(v)
    }
}

/// `sql` without its `use DB` statements (any case, `DB` optionally backquoted), the other
/// statements as they were.
fn without_use(sql: &str, db: &str) -> String {
    let is_use = |stmt: &str| {
        let mut words = stmt.split_whitespace();
        words.next().is_some_and(|w| w.eq_ignore_ascii_case("use"))
            && words.next().is_some_and(|w| w.trim_matches('`') == db)
            && words.next().is_none()
    };
    let kept: Vec<&str> = sql
        .split(';')
        .filter(|s| !s.trim().is_empty() && !is_use(s))
        .collect();
    if kept.len() == sql.split(';').filter(|s| !s.trim().is_empty()).count() {
        return sql.to_owned();
    }
    kept.iter()
        .map(|s| format!("{};", s.trim()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Split a launcher `STARTUP_PARAMS` value into `key=value` parameters: `--key=value`,
/// `--key value`-less flags (`--skip-name-resolve` → `skip-name-resolve=ON`), PostgreSQL's
/// `-c key=value`; shell quotes are removed (`--optimizer_switch='mrr=on'`).
pub fn startup_params(value: &str) -> Result<Vec<String>, StartupParamsError> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in value.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(StartupParamsError::UnclosedQuote(value.to_owned()));
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    let mut out = Vec::new();
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        let w = if w == "-c" {
            it.next()
                .ok_or_else(|| StartupParamsError::DashCWithoutSetting(value.to_owned()))?
        } else {
            w
        };
        let body = w.trim_start_matches('-');
        if body.is_empty() {
            continue;
        }
        out.push(if body.contains('=') {
            body.to_owned()
        } else {
            format!("{body}=ON")
        });
    }
    Ok(out)
}

/// The result of an import: the plan text and the settings that had no equivalent.
#[derive(Debug, Clone)]
pub struct Imported {
    pub plan: String,
    /// `FILE: KEY = VALUE (why)` for every setting written as a comment only.
    pub unmapped: Vec<String>,
}

/// A TOML basic string (JSON's escapes are TOML's).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

fn q_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
    )
}

fn truthy(v: &str) -> bool {
    !matches!(v.trim(), "" | "0" | "no" | "NO" | "false" | "off" | "OFF")
}

fn number(file: &Path, key: &str, v: &str) -> Result<f64, LauncherError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| LauncherError::NotANumber {
            file: file.to_owned(),
            key: key.to_owned(),
            value: v.to_owned(),
        })
}

/// The controls one set of launcher settings (test file, overrides, or a query section)
/// stands for, as TOML `key = value` lines; what does not map is returned as comments.
struct Mapped {
    lines: Vec<String>,
    comments: Vec<String>,
}

/// Map query-level settings (the test file's or a query section's) to `QueryControls` keys.
fn map_query_settings(
    file: &Path,
    settings: &[(String, String)],
    analyze: bool,
) -> Result<Mapped, LauncherError> {
    let mut m = Mapped {
        lines: Vec::new(),
        comments: Vec::new(),
    };
    let get = |k: &str| settings.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let warmup_on = get("WARMUP").map(|v| truthy(v));
    for (k, v) in settings {
        let line = match k.as_str() {
            "NUM_TESTS" => {
                let n = number(file, k, v)? as u64;
                if n == 0 && !analyze {
                    m.comments.push(
                        "NUM_TESTS = 0 means \"until the cluster is full\" only with ANALYZE_EXPLAIN: one run here"
                            .to_owned(),
                    );
                    Some("runs = 1".to_owned())
                } else {
                    Some(format!("runs = {n}"))
                }
            }
            "WARMUPS_COUNT" => match warmup_on {
                Some(false) => None,
                _ => Some(format!("warmups = {}", number(file, k, v)? as u64)),
            },
            "WARMUP" => match (truthy(v), get("WARMUPS_COUNT")) {
                (true, None) => Some("warmups = 1".to_owned()),
                (false, _) => Some("warmups = 0".to_owned()),
                _ => None,
            },
            "TIMEOUT" => {
                let t = number(file, k, v)?;
                (t > 0.0).then(|| format!("timeout = {t}"))
            }
            "MAX_QUERY_TIME" => {
                let t = number(file, k, v)?;
                (t > 0.0).then(|| format!("max-query-time = {t}"))
            }
            "CLUSTER_SIZE" => Some(format!(
                "cluster-size = {}",
                (number(file, k, v)? as u64).max(1)
            )),
            "MAX_SKIPPED_TESTS" => Some(format!("max-skipped = {}", number(file, k, v)? as u64)),
            "EXPLAIN" => Some(format!("explain = {}", truthy(v))),
            "PRE_RUN_SQL" if !v.is_empty() => Some(format!("pre-sql = {}", q(v))),
            "POST_RUN_SQL" if !v.is_empty() => Some(format!("post-sql = {}", q(v))),
            "PRE_RUN_OS" if !v.is_empty() => Some(format!("pre-shell = {}", q(v))),
            "POST_RUN_OS" if !v.is_empty() => Some(format!("post-shell = {}", q(v))),
            "STARTUP_PARAMS" if !v.is_empty() => Some(format!(
                "params = {}",
                q_list(
                    &startup_params(v).map_err(|why| LauncherError::StartupParams {
                        file: file.to_owned(),
                        why
                    })?
                )
            )),
            "PRE_RUN_SQL" | "POST_RUN_SQL" | "PRE_RUN_OS" | "POST_RUN_OS" | "STARTUP_PARAMS" => {
                None
            }
            _ => {
                m.comments.push(format!("{k} = {v}"));
                None
            }
        };
        m.lines.extend(line);
    }
    Ok(m)
}

/// One configuration of the top-level file.
struct ConfigurationIn {
    section: String,
    db: Ini,
    queries: Ini,
    queries_path: PathBuf,
}

fn engine_of(file: &Path, dbms: &str) -> Result<&'static str, LauncherError> {
    match dbms.trim().to_ascii_lowercase().as_str() {
        "mariadb" => Ok("mariadb"),
        "mysql" => Ok("mysql"),
        "postgresql" | "postgres" | "pgsql" => Ok("postgres"),
        other => Err(LauncherError::UnknownDbms {
            file: file.to_owned(),
            dbms: other.to_owned(),
        }),
    }
}

/// A plan name from a file stem (letters, digits, `-`, `_`).
fn plan_name(top: &Path) -> String {
    let stem = top
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dbt3".into());
    safe_name(&stem)
}

/// A name with only letters, digits, `-` and `_` (what plans and server names accept).
fn safe_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Read the launcher's files starting at `top` (through `read`, so tests and the command share
/// one path) and write the equivalent dbrig plan.
pub fn import(
    top: &Path,
    inputs: &LauncherInputs,
    read: &mut dyn FnMut(&Path) -> std::io::Result<String>,
) -> Result<Imported, LauncherError> {
    for (k, _) in &inputs.overrides {
        if !OVERRIDABLE.contains(&k.as_str()) {
            return Err(LauncherError::NotOverridable { key: k.clone() });
        }
    }
    let mut load = |path: &Path| -> Result<Ini, LauncherError> {
        let text = read(path).map_err(|source| LauncherError::Read {
            file: path.to_owned(),
            source,
        })?;
        let mut ini = Ini::parse(path, &text)?;
        for (_, entries) in &mut ini.sections {
            for (k, v) in entries.iter_mut() {
                *v = inputs.expand(path, k, v)?;
            }
        }
        Ok(ini)
    };
    let file_of = |ini: &Ini, section: &str, key: &'static str| -> Result<PathBuf, LauncherError> {
        let v = ini
            .section(section)
            .and_then(|e| e.iter().find(|(k, _)| k == key))
            .map(|(_, v)| v.clone())
            .ok_or_else(|| LauncherError::MissingKey {
                file: ini.path.clone(),
                section: section.to_owned(),
                key,
            })?;
        let p = PathBuf::from(&v);
        Ok(if p.is_relative() {
            ini.path.parent().unwrap_or(Path::new(".")).join(p)
        } else {
            p
        })
    };
    let top_ini = load(top)?;
    let test_path = file_of(&top_ini, "common", "TEST_CONFIG")?;
    let test = load(&test_path)?;
    let results_path = file_of(&top_ini, "common", "RESULTS_DB_CONFIG").ok();
    let results = match &results_path {
        Some(p) => Some(load(p)?),
        None => None,
    };
    let mut confs = Vec::new();
    for (section, _) in &top_ini.sections {
        if section.eq_ignore_ascii_case("common") || section.is_empty() {
            continue;
        }
        let db_path = file_of(&top_ini, section, "DB_CONFIG")?;
        let queries_path = file_of(&top_ini, section, "QUERIES_CONFIG")?;
        let db = load(&db_path)?;
        if db.section("db_settings").is_none() {
            return Err(LauncherError::MissingSection {
                file: db_path,
                section: "db_settings",
            });
        }
        let queries = load(&queries_path)?;
        if queries.section("queries_settings").is_none() {
            return Err(LauncherError::MissingSection {
                file: queries_path,
                section: "queries_settings",
            });
        }
        confs.push(ConfigurationIn {
            section: section.clone(),
            db,
            queries,
            queries_path,
        });
    }
    if confs.is_empty() {
        return Err(LauncherError::NothingToRun {
            file: top.to_owned(),
        });
    }
    let sf = inputs
        .scale_factor
        .clone()
        .ok_or(LauncherError::NoScaleFactor)?;
    let sf_num = number(Path::new("--scale-factor"), "scale factor", &sf)?;

    let mut unmapped: Vec<String> = Vec::new();
    let mut out = String::new();
    let push = |out: &mut String, s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    let comment = |out: &mut String, unmapped: &mut Vec<String>, file: &Path, what: &str| {
        push(out, &format!("# not mapped ({}): {what}", file.display()));
        unmapped.push(format!("{}: {what}", file.display()));
    };
    push(
        &mut out,
        &format!(
            "# Imported by `dbrig tpch import-launcher` from the DBT-3 launcher configuration\n# {}",
            top.display()
        ),
    );
    push(&mut out, &format!("name = {}", q(&plan_name(top))));
    push(&mut out, "trials = 1");
    push(&mut out, "clients = [1]");

    // The test file (with the command-line overrides over it).
    let mut test_settings = test.all();
    for (k, v) in &inputs.overrides {
        test_settings.retain(|(key, _)| key != k);
        test_settings.push((k.clone(), v.clone()));
    }
    let tget = |k: &str| {
        test_settings
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let reductions: Vec<&str> = ["ANALYZE_EXPLAIN", "MIN_MAX_OUT_OF_N", "SIMPLE_AVERAGE"]
        .into_iter()
        .filter(|k| tget(k).is_some_and(|v| truthy(&v)))
        .collect();
    if reductions.len() > 1 {
        return Err(LauncherError::SeveralReductions {
            file: test_path.clone(),
            settings: reductions,
        });
    }
    let reduction = match reductions.first() {
        Some(&"ANALYZE_EXPLAIN") => "analyze-explain",
        Some(&"MIN_MAX_OUT_OF_N") => "min-max",
        _ => "simple-average",
    };
    let analyze = reduction == "analyze-explain";
    let names: Vec<String> = confs
        .iter()
        .map(|c| {
            c.db.section("db_settings")
                .and_then(|e| e.iter().find(|(k, _)| k == "KEYWORD"))
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| c.section.clone())
        })
        .collect();
    push(&mut out, &format!("baseline = {}", q(&names[0])));
    push(&mut out, "");

    // [environment]: OS statistics and the per-configuration shell hooks.
    push(&mut out, "[environment]");
    if let Some(v) = tget("OS_STATS_INTERVAL") {
        push(
            &mut out,
            &format!(
                "os-stats-interval = {}",
                number(&test_path, "OS_STATS_INTERVAL", &v)?
            ),
        );
    }
    let pre_test_os = tget("PRE_TEST_OS").filter(|v| !v.is_empty());
    let post_test_os = tget("POST_TEST_OS").filter(|v| !v.is_empty());
    if pre_test_os.is_some() || post_test_os.is_some() {
        push(&mut out, "[environment.hooks]");
        if let Some(v) = &pre_test_os {
            push(&mut out, &format!("before-configuration = {}", q(v)));
        }
        if let Some(v) = &post_test_os {
            push(&mut out, &format!("after-configuration = {}", q(v)));
        }
    }
    push(&mut out, "");
    if let Some(r) = &results {
        // The launcher logged results into a MariaDB server of its own; dbrig's results
        // store is one SQLite file, chosen on the command line, not in a plan.
        let settings: Vec<String> = r.all().iter().map(|(k, v)| format!("{k} = {v}")).collect();
        comment(
            &mut out,
            &mut unmapped,
            &r.path,
            &format!(
                "the launcher's results database ({}): dbrig has no results server; every run is stored in one SQLite file, OUT/results.db (`dbrig run PLAN --out DIR`, or `--results FILE` / $DBRIG_RESULTS), which `dbrig runs`, `dbrig report` and its exports read",
                settings.join(", ")
            ),
        );
        push(&mut out, "");
    }

    // Servers and configurations.
    let mut managed_flags = Vec::new();
    let headings: Vec<Option<String>> = confs
        .iter()
        .map(|c| {
            c.db.section("db_settings")
                .and_then(|e| e.iter().find(|(k, _)| k == "GRAPH_HEADING"))
                .map(|(_, v)| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        })
        .collect();
    for (c, name) in confs.iter().zip(&names) {
        let s = c.db.section("db_settings").expect("checked above");
        let get = |k: &str| {
            s.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        let file = &c.db.path;
        let dbms = get("DBMS").ok_or_else(|| LauncherError::NoDbms {
            file: file.to_owned(),
        })?;
        let engine = engine_of(file, &dbms)?;
        let qs = c
            .queries
            .section("queries_settings")
            .expect("checked above");
        let config_file = qs
            .iter()
            .find(|(k, _)| k == "CONFIG_FILE")
            .map(|(_, v)| v.clone())
            .or_else(|| get("CONFIG_FILE"));
        let mut params = match get("STARTUP_PARAMS") {
            Some(v) => startup_params(&v).map_err(|why| LauncherError::StartupParams {
                file: file.to_owned(),
                why,
            })?,
            None => Vec::new(),
        };
        if let Some(dir) = get("TMPDIR") {
            params.push(format!("tmpdir={dir}"));
        }
        if get("READ_ONLY").is_some_and(|v| truthy(&v)) {
            params.push("read-only=ON".into());
        }
        if engine != "postgres"
            && let Some(se) = get("STORAGE_ENGINE")
        {
            params.push(format!("default-storage-engine={se}"));
        }
        let managed = get("DBMS_HOME").is_some();
        managed_flags.push(managed);
        if managed {
            push(&mut out, "[[server]]");
            push(&mut out, &format!("name = {}", q(&safe_name(name))));
            push(&mut out, &format!("engine = {}", q(engine)));
            if let Some(h) = get("DBMS_HOME") {
                push(&mut out, &format!("prefix = {}", q(&h)));
            }
            if let Some(d) = get("DATADIR") {
                push(&mut out, &format!("data-dir = {}", q(&d)));
            }
            if let Some(f) = &config_file {
                push(&mut out, &format!("config-file = {}", q(f)));
            }
            if let Some(p) = get("PORT") {
                push(
                    &mut out,
                    &format!("port = {}", number(file, "PORT", &p)? as u16),
                );
            }
            push(&mut out, "");
        }
        push(&mut out, "[[configuration]]");
        push(&mut out, &format!("name = {}", q(name)));
        if managed {
            push(&mut out, &format!("server = {}", q(&safe_name(name))));
        } else {
            let scheme = if engine == "postgres" {
                "postgres"
            } else {
                "mysql"
            };
            let port = get("PORT")
                .unwrap_or_else(|| if engine == "postgres" { "5432" } else { "3306" }.into());
            let url = format!(
                "{scheme}://{}@{}:{port}/{}",
                get("DBMS_USER").unwrap_or_else(|| "root".into()),
                get("HOST").unwrap_or_else(|| "127.0.0.1".into()),
                get("DBNAME").unwrap_or_else(|| "test".into())
            );
            push(&mut out, &format!("target = {}", q(&url)));
        }
        if !params.is_empty() {
            if managed {
                push(&mut out, &format!("params = {}", q_list(&params)));
            } else {
                comment(
                    &mut out,
                    &mut unmapped,
                    file,
                    &format!(
                        "STARTUP_PARAMS/TMPDIR/READ_ONLY/STORAGE_ENGINE as {} (an external server is not started by dbrig: set DBMS_HOME for a managed one)",
                        params.join(" ")
                    ),
                );
            }
        }
        for (k, v) in s {
            let why = match k.as_str() {
                "DBMS" | "DBMS_HOME" | "DATADIR" | "CONFIG_FILE" | "PORT" | "KEYWORD"
                | "STARTUP_PARAMS" | "TMPDIR" | "READ_ONLY" | "PRE_TEST_SQL" | "POST_TEST_SQL"
                | "PRE_RUN_SQL" | "POST_RUN_SQL" => None,
                "STORAGE_ENGINE" if engine != "postgres" => None,
                "HOST" | "DBNAME" | "DBMS_USER" if !managed => None,
                "SOCKET" | "HOST" => Some("dbrig picks the managed server's socket and port"),
                "DBMS_USER" | "DBNAME" => {
                    Some("dbrig connects to its managed server as its administrator")
                }
                "MYSQL_SYSTEM_DIR" => Some("dbrig keeps one data directory per server"),
                // The heading of the workload's table and chart (its label), below.
                "GRAPH_HEADING" => None,
                _ => Some("no dbrig equivalent"),
            };
            if let Some(why) = why
                && !v.is_empty()
            {
                comment(&mut out, &mut unmapped, file, &format!("{k} = {v} ({why})"));
            }
        }
        // The launcher's hooks switch to DBNAME (`use dbt3`); dbrig's hooks and queries already
        // run in the database the data was loaded into, which on a managed server is dbrig's
        // own (the launcher's name does not exist there: error 1049).
        let dbname = get("DBNAME").filter(|_| managed);
        let unuse = |sql: Option<String>,
                     key: &str,
                     out: &mut String,
                     unmapped: &mut Vec<String>| {
            let sql = sql?;
            let Some(db) = &dbname else {
                return Some(sql);
            };
            let kept = without_use(&sql, db);
            if kept != sql {
                comment(
                    out,
                    unmapped,
                    file,
                    &format!(
                        "{key}: `use {db}` left out (DBNAME = {db}: dbrig's hooks run in the database holding the managed server's data)"
                    ),
                );
            }
            (!kept.trim().is_empty()).then_some(kept)
        };
        let pre = unuse(get("PRE_TEST_SQL"), "PRE_TEST_SQL", &mut out, &mut unmapped);
        let post = unuse(
            get("POST_TEST_SQL"),
            "POST_TEST_SQL",
            &mut out,
            &mut unmapped,
        );
        if pre.is_some() || post.is_some() {
            push(&mut out, "[configuration.hooks]");
            if let Some(v) = pre {
                push(&mut out, &format!("before-configuration-sql = {}", q(&v)));
            }
            if let Some(v) = post {
                push(&mut out, &format!("after-configuration-sql = {}", q(&v)));
            }
        }
        push(&mut out, "");
    }

    // Workloads: one per distinct queries file (with the DBMS files' per-run SQL).
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, c) in confs.iter().enumerate() {
        let s = c.db.section("db_settings").expect("checked above");
        let run_sql: Vec<&(String, String)> = s
            .iter()
            .filter(|(k, v)| (k == "PRE_RUN_SQL" || k == "POST_RUN_SQL") && !v.is_empty())
            .collect();
        groups
            .entry(format!("{}|{run_sql:?}", c.queries_path.display()))
            .or_default()
            .push(i);
    }
    if groups.len() > 1 {
        push(
            &mut out,
            "# The configurations use different query settings: as the launcher did, each query set\n# runs on the configurations whose files name it (`configurations`); reports show `-`\n# for a query a configuration did not run.",
        );
    }
    let test_query_settings: Vec<(String, String)> = test_settings
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "QUERIES_AT_ONCE"
                    | "CLEAR_CACHES"
                    | "ANALYZE_EXPLAIN"
                    | "MIN_MAX_OUT_OF_N"
                    | "SIMPLE_AVERAGE"
                    | "OS_STATS_INTERVAL"
                    | "PRE_TEST_OS"
                    | "POST_TEST_OS"
                    | "RUN"
            )
        })
        .cloned()
        .collect();
    let all = map_query_settings(&test_path, &test_query_settings, analyze)?;
    if let Some(v) = tget("RUN")
        && !truthy(&v)
    {
        comment(
            &mut out,
            &mut unmapped,
            &test_path,
            "RUN = 0: the launcher then started each server and ran the test's hooks without timing any query (with EXPLAIN = 1 it only EXPLAINed them). A dbrig plan always measures: this plan times the queries. To prepare only, load the data with `dbrig tpch load --sf N --target URL` (or `dbrig server start`); to see the servers, configurations and order without running anything, `dbrig run PLAN --dry-run`",
        );
    }
    for c in &all.comments {
        comment(&mut out, &mut unmapped, &test_path, c);
    }
    let mut labels: Vec<String> = Vec::new();
    for members in groups.values() {
        let c = &confs[members[0]];
        let qs = c
            .queries
            .section("queries_settings")
            .expect("checked above");
        let qfile = &c.queries_path;
        let home = qs
            .iter()
            .find(|(k, _)| k == "QUERIES_HOME")
            .map(|(_, v)| v.clone())
            .ok_or_else(|| LauncherError::MissingKey {
                file: qfile.to_owned(),
                section: "queries_settings".to_owned(),
                key: "QUERIES_HOME",
            })?;
        for (k, v) in qs {
            if !matches!(k.as_str(), "QUERIES_HOME" | "CONFIG_FILE") {
                comment(&mut out, &mut unmapped, qfile, &format!("{k} = {v}"));
            }
        }
        let mut queries = Vec::new();
        let mut per_query: Vec<(String, Mapped)> = Vec::new();
        for (section, entries) in &c.queries.sections {
            if section.eq_ignore_ascii_case("queries_settings") || section.is_empty() {
                continue;
            }
            let file = entries
                .iter()
                .find(|(k, _)| k == "QUERY")
                .map(|(_, v)| v.clone())
                .ok_or_else(|| LauncherError::MissingKey {
                    file: qfile.to_owned(),
                    section: section.clone(),
                    key: "QUERY",
                })?;
            let stem = Path::new(&file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or(file.clone());
            let run = entries
                .iter()
                .find(|(k, _)| k == "RUN")
                .map(|(_, v)| truthy(v))
                .unwrap_or(true);
            if !run {
                push(
                    &mut out,
                    &format!("# [{section}] {file}: RUN = 0, left out of `queries`"),
                );
                continue;
            }
            queries.push(stem.clone());
            let rest: Vec<(String, String)> = entries
                .iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "QUERY" | "RUN" | "EXPLAIN_QUERY" | "TMPDIR" | "OS_STATS_INTERVAL"
                    )
                })
                .cloned()
                .collect();
            // EXPLAIN_QUERY names the file the launcher ran after the timed run when EXPLAIN
            // is on: dbrig's `explain` is that step (the engine's structured EXPLAIN of the
            // query, after the timed run), unless this query or the test turns EXPLAIN off.
            let explain_off = entries
                .iter()
                .find(|(k, _)| k == "EXPLAIN")
                .map(|(_, v)| !truthy(v))
                .or_else(|| tget("EXPLAIN").map(|v| !truthy(&v)))
                .unwrap_or(false);
            let mut explain_line = None;
            for (k, v) in entries {
                match k.as_str() {
                    "EXPLAIN_QUERY" if explain_off => push(
                        &mut out,
                        &format!(
                            "# [{section}] EXPLAIN_QUERY = {v}: EXPLAIN = 0, so not run (as the launcher did)"
                        ),
                    ),
                    "EXPLAIN_QUERY" => {
                        push(
                            &mut out,
                            &format!(
                                "# [{section}] EXPLAIN_QUERY = {v}: `explain = true` for {stem} (dbrig runs the engine's own EXPLAIN of {file} after the timed run, as the launcher ran this file; the file is not read)"
                            ),
                        );
                        if !entries.iter().any(|(k, _)| k == "EXPLAIN") {
                            explain_line = Some("explain = true".to_owned());
                        }
                    }
                    "TMPDIR" | "OS_STATS_INTERVAL" => comment(
                        &mut out,
                        &mut unmapped,
                        qfile,
                        &format!("[{section}] {k} = {v} (no per-query equivalent)"),
                    ),
                    _ => {}
                }
            }
            let mut m = map_query_settings(qfile, &rest, analyze)?;
            m.lines.extend(explain_line);
            for cm in &m.comments {
                comment(&mut out, &mut unmapped, qfile, &format!("[{section}] {cm}"));
            }
            per_query.push((stem, m));
        }
        // The DBMS files' per-run SQL (the same for every configuration of this group).
        let db = confs[members[0]]
            .db
            .section("db_settings")
            .expect("checked above");
        let dbname = db
            .iter()
            .find(|(k, _)| k == "DBNAME")
            .map(|(_, v)| v.clone())
            .filter(|_| managed_flags[members[0]]);
        let db_run: Vec<(String, String)> = db
            .iter()
            .filter(|(k, v)| (k == "PRE_RUN_SQL" || k == "POST_RUN_SQL") && !v.is_empty())
            .map(|(k, v)| {
                (
                    k.clone(),
                    dbname
                        .as_ref()
                        .map_or_else(|| v.clone(), |d| without_use(v, d)),
                )
            })
            .filter(|(_, v)| !v.trim().is_empty())
            .collect();
        let db_mapped = map_query_settings(&confs[members[0]].db.path, &db_run, analyze)?;

        push(&mut out, "[[workload]]");
        push(
            &mut out,
            &format!(
                "# for configuration(s) {}",
                members
                    .iter()
                    .map(|&i| names[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        push(&mut out, "name = \"tpch_power\"");
        // GRAPH_HEADING headed the launcher's graph of one DBMS file: the workload's label
        // heads its table and chart in every report when its configurations share one. Two
        // configurations' different headings are no one label (joined they read as one
        // system): each is a comment beside its configuration's name, and the table and
        // chart name the configurations.
        let mut distinct: Vec<&str> = Vec::new();
        for h in members.iter().filter_map(|&i| headings[i].as_deref()) {
            if !distinct.contains(&h) {
                distinct.push(h);
            }
        }
        let heading = match distinct.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
        };
        if distinct.len() > 1 {
            for &i in members.iter() {
                if let Some(h) = &headings[i] {
                    push(
                        &mut out,
                        &format!("# GRAPH_HEADING of configuration {}: {h}", q(&names[i])),
                    );
                }
            }
        }
        if heading.is_some() || groups.len() > 1 {
            // Several query sets: each workload's cells are named apart in reports (a plan
            // refuses two unlabelled tpch_power workloads whose options differ) by their
            // heading, else by the queries file they come from.
            let stem = qfile
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "queries".into());
            let headed = heading.is_some();
            let label = match heading {
                Some(h) if labels.contains(&h) => format!("{h} ({stem})"),
                Some(h) => h,
                None => stem,
            };
            let label = if labels.contains(&label) {
                format!("{label}-{}", labels.len() + 1)
            } else {
                label
            };
            if headed {
                push(
                    &mut out,
                    "# GRAPH_HEADING (the DBMS files): the label heads this workload's table and chart",
                );
            }
            push(&mut out, &format!("label = {}", q(&label)));
            labels.push(label);
        }
        if groups.len() > 1 {
            let only: Vec<String> = members.iter().map(|&i| names[i].clone()).collect();
            push(&mut out, &format!("configurations = {}", q_list(&only)));
        }
        push(&mut out, "[workload.options]");
        push(&mut out, &format!("sf = {sf_num}"));
        push(&mut out, &format!("query-dir = {}", q(&home)));
        push(&mut out, &format!("queries = {}", q_list(&queries)));
        push(
            &mut out,
            "refresh = false  # the launcher ran the queries only, without RF1/RF2",
        );
        push(&mut out, "[workload.options.controls]");
        push(&mut out, &format!("reduction = {}", q(reduction)));
        let at_once = tget("QUERIES_AT_ONCE").map(|v| truthy(&v)).unwrap_or(true);
        let clear = tget("CLEAR_CACHES").map(|v| truthy(&v)).unwrap_or(false);
        // Restarts and cache drops need a server dbrig manages; the launcher started every
        // server itself, dbrig cannot restart an external one.
        let restartable = members.iter().any(|&i| managed_flags[i]);
        if members.iter().any(|&i| !managed_flags[i]) && (!at_once || clear) {
            comment(
                &mut out,
                &mut unmapped,
                &test_path,
                &format!(
                    "QUERIES_AT_ONCE = {} / CLEAR_CACHES = {} for {} (an external server, without DBMS_HOME: it runs without restarts or cache drops)",
                    u8::from(at_once),
                    u8::from(clear),
                    members
                        .iter()
                        .filter(|&&i| !managed_flags[i])
                        .map(|&i| names[i].as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        push(
            &mut out,
            &format!("restart-between-queries = {}", !at_once && restartable),
        );
        push(&mut out, &format!("drop-caches = {}", clear && restartable));
        push(&mut out, "[workload.options.controls.all]");
        // Test-file settings, then the DBMS file's per-run SQL over them.
        let mut lines: Vec<String> = Vec::new();
        for l in all.lines.iter().chain(&db_mapped.lines) {
            let key = l.split(" = ").next().unwrap_or("");
            lines.retain(|x| x.split(" = ").next() != Some(key));
            lines.push(l.clone());
        }
        for l in &lines {
            push(&mut out, l);
        }
        for (stem, m) in &per_query {
            if m.lines.is_empty() {
                continue;
            }
            push(
                &mut out,
                &format!("[workload.options.controls.query.{}]", q(stem)),
            );
            for l in &m.lines {
                push(&mut out, l);
            }
        }
        push(&mut out, "");
    }
    Ok(Imported {
        plan: out,
        unmapped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_keeps_values_verbatim() {
        let ini = Ini::parse(
            Path::new("x.conf"),
            "# comment\n[db_settings]\nPRE_RUN_SQL = flush status; set global userstat=on;\n\
             STARTUP_PARAMS=--optimizer_switch='mrr=on' --mrr_buffer_size=8M\n; another\n",
        )
        .unwrap();
        let s = ini.section("db_settings").unwrap();
        assert_eq!(s[0].1, "flush status; set global userstat=on;");
        assert_eq!(s[1].1, "--optimizer_switch='mrr=on' --mrr_buffer_size=8M");
        let e = Ini::parse(Path::new("x.conf"), "[a\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.conf:1"), "{e}");
        let e = Ini::parse(Path::new("x.conf"), "[a]\njunk\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.conf:2") && e.contains("KEY = VALUE"), "{e}");
    }

    #[test]
    fn startup_params_become_key_values() {
        assert_eq!(
            startup_params("--optimizer_switch='mrr=on' --mrr_buffer_size=8M --skip-name-resolve")
                .unwrap(),
            [
                "optimizer_switch=mrr=on",
                "mrr_buffer_size=8M",
                "skip-name-resolve=ON"
            ]
        );
        assert_eq!(
            startup_params("-c shared_buffers=1GB -c work_mem=64MB").unwrap(),
            ["shared_buffers=1GB", "work_mem=64MB"]
        );
        assert!(startup_params("--a='b").is_err());
    }

    /// The seed's layout in memory: a MariaDB configuration with per-query settings and an
    /// external PostgreSQL one.
    fn files() -> BTreeMap<PathBuf, String> {
        let f = |p: &str, t: &str| (PathBuf::from(p), t.to_owned());
        BTreeMap::from([
            f(
                "/t/top.conf",
                "[common]\nRESULTS_DB_CONFIG = $PROJECT_HOME/results.conf\n\
                 TEST_CONFIG = $PROJECT_HOME/test.conf\n\
                 [mariadb_5_3]\nQUERIES_CONFIG = $PROJECT_HOME/queries-mariadb.conf\n\
                 DB_CONFIG = $PROJECT_HOME/db_mariadb.conf\n\
                 [pg]\nQUERIES_CONFIG = $PROJECT_HOME/queries.conf\nDB_CONFIG = db_pg.conf\n",
            ),
            f(
                "/t/results.conf",
                "[results_db]\nDBMS_HOME = /opt/mariadb\nPORT = 12340\n",
            ),
            f(
                "/t/test.conf",
                "[test]\nQUERIES_AT_ONCE = 0\nCLEAR_CACHES = 1\nWARMUP = 1\nWARMUPS_COUNT = 2\n\
                 ANALYZE_EXPLAIN = 1\nMIN_MAX_OUT_OF_N = 0\nSIMPLE_AVERAGE = 0\nNUM_TESTS = 0\n\
                 CLUSTER_SIZE = 3\nMAX_SKIPPED_TESTS = 4\nTIMEOUT = 600\nFANCY = 1\n",
            ),
            f(
                "/t/db_mariadb.conf",
                "[db_settings]\nDBMS_HOME = /usr\nDBMS = MariaDB\nKEYWORD = maria 5.3\n\
                 DATADIR = $DATADIR_HOME/innodb-s$SCALE_FACTOR\nSTORAGE_ENGINE = InnoDB\n\
                 STARTUP_PARAMS = --innodb_buffer_pool_size=1G\nMYSQL_SYSTEM_DIR = /x\n\
                 DBNAME = dbt3\nPRE_RUN_SQL = use dbt3; flush status;\n\
                 GRAPH_HEADING = MariaDB 5.3, InnoDB, SF 30\n\
                 PRE_TEST_SQL = use `dbt3`; select version();\n",
            ),
            f(
                "/t/db_pg.conf",
                "[db_settings]\nDBMS = PostgreSQL\nHOST = 127.0.0.1\nDBNAME = dbt3\n\
                 DBMS_USER = postgres\n",
            ),
            f(
                "/t/queries-mariadb.conf",
                "[queries_settings]\nQUERIES_HOME = $QUERIES_HOME/s$SCALE_FACTOR-m\n\
                 [query1]\nQUERY=1.sql\nEXPLAIN_QUERY=1_explain.sql\n\
                 [query17]\nQUERY=17-opt1.sql\nSTARTUP_PARAMS=--optimizer_switch='mrr=on'\n\
                 NUM_TESTS=5\n[query9]\nQUERY=9.sql\nRUN=0\n",
            ),
            f(
                "/t/queries.conf",
                "[queries_settings]\nQUERIES_HOME = /q\n[query1]\nQUERY=1.sql\n",
            ),
        ])
    }

    fn run(inputs: &LauncherInputs) -> Result<Imported, LauncherError> {
        let files = files();
        import(Path::new("/t/top.conf"), inputs, &mut |p| {
            files
                .get(p)
                .cloned()
                .ok_or_else(|| std::io::ErrorKind::NotFound.into())
        })
    }

    fn inputs() -> LauncherInputs {
        LauncherInputs {
            project_home: Some("/t".into()),
            datadir_home: Some("/data".into()),
            queries_home: Some("/queries".into()),
            scale_factor: Some("30".into()),
            overrides: vec![("TIMEOUT".into(), "7200".into())],
        }
    }

    /// Two configurations running one query set with their own GRAPH_HEADINGs: the label is
    /// not the two joined ("MariaDB / PostgreSQL" read as one system); each heading is said
    /// beside its configuration, and the workload keeps its name.
    #[test]
    fn two_configurations_headings_are_not_joined_into_one_label() {
        // Two MariaDB builds, the same settings and queries, each with its own heading.
        let mut files = files();
        let top = PathBuf::from("/t/top.conf");
        files.insert(
            top.clone(),
            files[&top]
                .replace("queries-mariadb.conf", "queries.conf")
                .replace("DB_CONFIG = db_pg.conf", "DB_CONFIG = db_maria2.conf"),
        );
        let maria = files[&PathBuf::from("/t/db_mariadb.conf")].clone();
        files.insert(
            PathBuf::from("/t/db_maria2.conf"),
            maria
                .replace("KEYWORD = maria 5.3", "KEYWORD = maria 5.5")
                .replace(
                    "GRAPH_HEADING = MariaDB 5.3, InnoDB, SF 30",
                    "GRAPH_HEADING = MariaDB 5.5",
                ),
        );
        let i = import(&top, &inputs(), &mut |p| {
            files
                .get(p)
                .cloned()
                .ok_or_else(|| std::io::ErrorKind::NotFound.into())
        })
        .unwrap();
        let p = &i.plan;
        assert_eq!(p.matches("[[workload]]").count(), 1, "{p}");
        assert!(
            !p.contains("SF 30 / MariaDB 5.5") && !p.contains("\nlabel = "),
            "joined: {p}"
        );
        assert!(
            p.contains(
                "# GRAPH_HEADING of configuration \"maria 5.3\": MariaDB 5.3, InnoDB, SF 30"
            ) && p.contains("# GRAPH_HEADING of configuration \"maria 5.5\": MariaDB 5.5"),
            "{p}"
        );
    }

    #[test]
    fn the_seed_layout_becomes_a_plan() {
        let i = run(&inputs()).unwrap();
        let p = &i.plan;
        for expected in [
            "name = \"top\"",
            "baseline = \"maria 5.3\"",
            "[[server]]\nname = \"maria-5-3\"\nengine = \"mariadb\"\nprefix = \"/usr\"\ndata-dir = \"/data/innodb-s30\"",
            "server = \"maria-5-3\"",
            "params = [\"innodb_buffer_pool_size=1G\", \"default-storage-engine=InnoDB\"]",
            // The seed's `use dbt3` (its DBNAME) is left out on the managed server.
            "before-configuration-sql = \"select version();\"",
            "PRE_TEST_SQL: `use dbt3` left out",
            "target = \"postgres://postgres@127.0.0.1:5432/dbt3\"",
            "sf = 30",
            "query-dir = \"/queries/s30-m\"",
            "queries = [\"1\", \"17-opt1\"]",
            "reduction = \"analyze-explain\"",
            "restart-between-queries = true",
            "drop-caches = true",
            "warmups = 2",
            "runs = 0",
            "cluster-size = 3",
            "max-skipped = 4",
            "timeout = 7200",
            "pre-sql = \"flush status;\"",
            "[workload.options.controls.query.\"17-opt1\"]\nparams = [\"optimizer_switch=mrr=on\"]\nruns = 5",
        ] {
            assert!(p.contains(expected), "{expected:?} missing from\n{p}");
        }
        // The external PostgreSQL cannot be restarted: its workload says so.
        let pg = &p[p.rfind("[[workload]]").unwrap()..];
        assert!(pg.contains("restart-between-queries = false"), "{pg}");
        // Each query set runs where the launcher ran it: 17-opt1 only on MariaDB.
        assert!(pg.contains("configurations = [\"pg\"]"), "{pg}");
        let maria = &p[p.find("[[workload]]").unwrap()..p.rfind("[[workload]]").unwrap()];
        assert!(
            maria.contains("configurations = [\"maria 5.3\"]") && maria.contains("17-opt1"),
            "{maria}"
        );
        // GRAPH_HEADING heads the workload's table and chart: its label.
        assert!(
            maria.contains("label = \"MariaDB 5.3, InnoDB, SF 30\""),
            "{maria}"
        );
        assert!(pg.contains("label = \"queries\""), "{pg}");
        assert!(
            !p.contains("GRAPH_HEADING = "),
            "mapped, not a comment: {p}"
        );
        // EXPLAIN_QUERY: that query is EXPLAINed after its timed run.
        assert!(
            maria.contains("[workload.options.controls.query.\"1\"]\nexplain = true"),
            "{maria}"
        );
        assert!(
            !pg.contains("explain = true"),
            "no EXPLAIN_QUERY there: {pg}"
        );
        // The results database: one line saying where dbrig's results go instead.
        let results = i
            .unmapped
            .iter()
            .find(|u| u.contains("results database"))
            .unwrap();
        assert!(
            results.contains("DBMS_HOME = /opt/mariadb, PORT = 12340")
                && results.contains("--results FILE"),
            "{results}"
        );
        // Nothing dropped silently: each unmapped setting is a comment naming it.
        for name in [
            "MYSQL_SYSTEM_DIR = /x",
            "FANCY = 1",
            "EXPLAIN_QUERY = 1_explain.sql",
            "[query9] 9.sql: RUN = 0",
        ] {
            assert!(p.contains(name), "{name} missing from\n{p}");
        }
        assert!(i.unmapped.iter().any(|u| u.contains("FANCY")));
        assert!(!i.unmapped.iter().any(|u| u.contains("RUN = 0:")));
    }

    /// The launcher's RUN = 0 (given on its command line or in the test file) timed nothing;
    /// EXPLAIN = 0 turns the EXPLAIN_QUERY files off.
    #[test]
    fn run_0_is_said_once_and_explain_0_keeps_explain_query_off() {
        let mut i = inputs();
        i.overrides
            .extend([("RUN".into(), "0".into()), ("EXPLAIN".into(), "0".into())]);
        let imported = run(&i).unwrap();
        let p = &imported.plan;
        let line = imported
            .unmapped
            .iter()
            .find(|u| u.contains("RUN = 0:"))
            .unwrap();
        assert!(
            line.contains("without timing any query")
                && line.contains("dbrig tpch load")
                && line.contains("--dry-run"),
            "{line}"
        );
        assert!(!p.contains("explain = true"), "{p}");
        assert!(p.contains("explain = false"), "{p}");
        assert!(
            p.contains("EXPLAIN_QUERY = 1_explain.sql: EXPLAIN = 0"),
            "{p}"
        );
    }

    #[test]
    fn missing_keywords_files_and_bad_overrides_are_named() {
        let mut no_sf = inputs();
        no_sf.scale_factor = None;
        let e = run(&no_sf).unwrap_err().to_string();
        assert!(
            e.contains("$SCALE_FACTOR") && e.contains("--scale-factor"),
            "{e}"
        );
        let mut bad = inputs();
        bad.overrides.push(("NUM_TESTZ".into(), "3".into()));
        let e = run(&bad).unwrap_err().to_string();
        assert!(e.contains("NUM_TESTZ") && e.contains("NUM_TESTS"), "{e}");
        let e = import(Path::new("/nope.conf"), &inputs(), &mut |_| {
            Err(std::io::ErrorKind::NotFound.into())
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("/nope.conf"), "{e}");
    }

    #[test]
    fn keywords_need_their_values() {
        let i = LauncherInputs {
            project_home: Some("/p/".into()),
            scale_factor: Some("30".into()),
            ..Default::default()
        };
        assert_eq!(
            i.expand(Path::new("f"), "K", "$PROJECT_HOME/q/s$SCALE_FACTOR-m")
                .unwrap(),
            "/p/q/s30-m"
        );
        let e = i
            .expand(Path::new("db.conf"), "DATADIR", "$DATADIR_HOME/x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("db.conf") && e.contains("--datadir-home"), "{e}");
    }
}
