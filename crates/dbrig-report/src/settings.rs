//! Server settings in every report: each configuration's key settings and the durability of
//! its commits, the settings that differ between configurations, and flags a reader must not
//! miss — relaxed durability, and configurations that differ in durability without the plan
//! comparing it (then the comparison is not the seeds' "equal-opportunity" one: one side may
//! be faster only because it may lose commits).
//!
//! Every trial stores every server variable (`TrialEnvironment::server_settings`); a
//! configuration is shown with the settings of its last finished trial.

use std::collections::BTreeSet;

use dbrig_core::results::{
    Durability, KEY_SETTINGS, ServerEngine, ServerSettings, is_instance_setting, is_instance_value,
};
use serde::Serialize;

use crate::data::ReportData;
use crate::table::{Align, Table};

/// One configuration's settings, as the JSON export carries them.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigurationSettings<'a> {
    pub configuration: &'a str,
    pub version: &'a str,
    /// `full (…)` or `RELAXED by … (all: …)`; absent when no deciding setting is known.
    pub durability: Option<String>,
    pub durability_relaxed: bool,
    /// Every variable, as the server printed it.
    pub variables: &'a std::collections::BTreeMap<String, String>,
}

/// Every configuration's settings, for `--format json` (BenchBase's params.json keeps them
/// all too).
pub fn settings_json(data: &ReportData) -> Vec<ConfigurationSettings<'_>> {
    data.settings_by_configuration()
        .into_iter()
        .map(|(configuration, s)| {
            let d = s.durability();
            ConfigurationSettings {
                configuration,
                version: &s.version,
                durability_relaxed: d.as_ref().is_some_and(|d| d.is_relaxed()),
                durability: d.map(|d| d.describe()),
                variables: &s.variables,
            }
        })
        .collect()
}

/// Variables whose values differ between the configurations (instance names such as ports
/// and files left out, by name or by a path as value), in name order.
fn differing(settings: &[(&str, &ServerSettings)]) -> Vec<String> {
    let names: BTreeSet<&String> = settings
        .iter()
        .flat_map(|(_, s)| s.variables.keys())
        .filter(|n| !is_instance_setting(n))
        .collect();
    names
        .into_iter()
        .filter(|n| {
            let values: Vec<Option<&String>> =
                settings.iter().map(|(_, s)| s.variables.get(*n)).collect();
            !values.iter().flatten().any(|v| is_instance_value(v))
                && values[1..].iter().any(|v| *v != values[0])
        })
        .cloned()
        .collect()
}

/// For a value that is a comma-separated list of `flag=value` (MariaDB's `optimizer_switch`,
/// hundreds of characters), each configuration's flags that are not the same in all: what a
/// reader needs, without the list scrolling the page sideways. `None` for any other value.
fn differing_flags(values: &[Option<&String>]) -> Option<Vec<String>> {
    let parsed: Vec<Option<Vec<(&str, &str)>>> = values
        .iter()
        .map(|v| {
            let v = (*v)?;
            v.split(',')
                .map(|kv| kv.trim().split_once('='))
                .collect::<Option<Vec<_>>>()
                .filter(|flags| flags.len() > 1)
        })
        .collect();
    if parsed.iter().any(Option::is_none) {
        return None;
    }
    let lists: Vec<Vec<(&str, &str)>> = parsed.into_iter().flatten().collect();
    let same = |k: &str, v: &str| lists.iter().all(|l| l.contains(&(k, v)));
    Some(
        lists
            .iter()
            .map(|l| {
                let diff: Vec<String> = l
                    .iter()
                    .filter(|(k, v)| !same(k, v))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                if diff.is_empty() {
                    "(the same)".to_owned()
                } else {
                    diff.join(", ")
                }
            })
            .collect(),
    )
}

/// A size in bytes as a person reads it (`134217728` → `128 MiB`); other values as they are.
fn size_text(name: &str, value: &str) -> String {
    match value.parse::<u64>() {
        Ok(b) if name.contains("size") && b >= 1024 => {
            let units = ["KiB", "MiB", "GiB", "TiB"];
            let mut v = b as f64 / 1024.0;
            let mut u = 0;
            while v >= 1024.0 && u + 1 < units.len() {
                v /= 1024.0;
                u += 1;
            }
            if v.fract() == 0.0 {
                format!("{v:.0} {}", units[u])
            } else {
                format!("{v:.1} {}", units[u])
            }
        }
        _ => value.to_owned(),
    }
}

/// What decides durability and what sizes memory, per engine: a role, MariaDB/MySQL's
/// variables for it, PostgreSQL's. Servers of different engines have different settings for
/// the same job; side by side, a reader sees what each ran with.
const ROLES: &[(&str, &[&str], &[&str])] = &[
    (
        "commit flush",
        &["innodb_flush_log_at_trx_commit"],
        &["synchronous_commit"],
    ),
    (
        "data file sync",
        &["innodb_flush_method"],
        &["fsync", "wal_sync_method"],
    ),
    (
        "torn-page protection",
        &["innodb_doublewrite"],
        &["full_page_writes"],
    ),
    (
        "log for replication",
        &["log_bin", "sync_binlog"],
        &["wal_level"],
    ),
    (
        "redo log / WAL size",
        &["innodb_log_file_size"],
        &["max_wal_size"],
    ),
    (
        "data cache",
        &["innodb_buffer_pool_size", "key_buffer_size"],
        &["shared_buffers", "effective_cache_size"],
    ),
    ("log buffer", &["innodb_log_buffer_size"], &["wal_buffers"]),
    (
        "sort and join memory",
        &["sort_buffer_size", "join_buffer_size"],
        &["work_mem", "hash_mem_multiplier"],
    ),
    (
        "temporary tables",
        &["tmp_table_size", "max_heap_table_size"],
        &["temp_buffers"],
    ),
    (
        "maintenance memory",
        &["innodb_sort_buffer_size"],
        &["maintenance_work_mem"],
    ),
    (
        "connections",
        &["max_connections", "thread_handling"],
        &["max_connections"],
    ),
];

/// Servers of different engines side by side: per role, each configuration's own settings
/// for it (`innodb_buffer_pool_size=128 MiB` beside `shared_buffers=128MB`).
fn engines_side_by_side(settings: &[(&str, &ServerSettings)], header: Vec<String>) -> Table {
    let mut rows = vec![
        std::iter::once("version".to_owned())
            .chain(settings.iter().map(|(_, s)| s.version.clone()))
            .collect::<Vec<_>>(),
    ];
    for (role, mysql, postgres) in ROLES {
        let cells: Vec<String> = settings
            .iter()
            .map(|(_, s)| {
                let names = match s.engine() {
                    Some(ServerEngine::PostgreSql) => *postgres,
                    _ => *mysql,
                };
                let set: Vec<String> = names
                    .iter()
                    .filter_map(|n| Some(format!("{n}={}", size_text(n, s.variables.get(*n)?))))
                    .collect();
                if set.is_empty() {
                    "-".to_owned()
                } else {
                    set.join(", ")
                }
            })
            .collect();
        if cells.iter().any(|c| c != "-") {
            rows.push(std::iter::once((*role).to_owned()).chain(cells).collect());
        }
    }
    let align = vec![Align::Left; header.len()];
    let mut header = header;
    header[0] = "role".to_owned();
    Table {
        title: "Server settings: durability and memory of each engine, side by side".to_owned(),
        header,
        align,
        rows,
        notes: Vec::new(),
    }
}

/// What a reader must not miss about durability, said at the top of every report: which
/// configurations run with relaxed durability, and whether the configurations differ in it
/// without the plan comparing it.
pub fn durability_flags(data: &ReportData) -> Vec<String> {
    let durability: Vec<(&str, Durability)> = data
        .settings_by_configuration()
        .into_iter()
        .filter_map(|(c, s)| Some((c, s.durability()?)))
        .collect();
    let mut notes = Vec::new();
    let relaxed: Vec<&str> = durability
        .iter()
        .filter(|(_, d)| d.is_relaxed())
        .map(|(c, _)| *c)
        .collect();
    if !relaxed.is_empty() {
        notes.push(format!(
            "RELAXED DURABILITY in {}: commits can be lost in a crash; not the figures of a durable server",
            relaxed.join(", ")
        ));
    }
    let kinds: BTreeSet<&Vec<String>> = durability.iter().map(|(_, d)| &d.relaxed).collect();
    if kinds.len() > 1 {
        // The settings that make the difference; a plan that names one of them compares
        // durability on purpose.
        let deciding: BTreeSet<&str> = durability
            .iter()
            .flat_map(|(_, d)| d.relaxed.iter())
            .filter_map(|kv| kv.split_once('=').map(|(k, _)| k))
            .collect();
        let list = deciding.iter().copied().collect::<Vec<_>>().join(", ");
        let on_purpose = data
            .plan_text()
            .is_some_and(|p| deciding.iter().any(|k| p.contains(k)));
        notes.push(if on_purpose {
            format!("the configurations differ in durability ({list}), as the plan compares it")
        } else {
            format!(
                "WARNING: the configurations differ in durability ({list}) and the plan does not \
                 compare it: not the seeds' equal-opportunity comparison"
            )
        });
    }
    notes
}

/// The settings tables of a report: key settings per configuration (with the durability
/// lines and flags in the notes) — servers of different engines side by side by role, as their
/// settings are not the same settings — and, for each engine with two or more configurations,
/// the settings that differ between them. Empty when no trial read the server's settings
/// (SQLite, older runs).
pub fn settings_tables(data: &ReportData) -> Vec<Table> {
    let settings = data.settings_by_configuration();
    if settings.is_empty() {
        return Vec::new();
    }
    let header: Vec<String> = std::iter::once("setting".to_owned())
        .chain(settings.iter().map(|(c, _)| (*c).to_owned()))
        .collect();
    let mut align = vec![Align::Left];
    align.resize(header.len(), Align::Right);
    let value =
        |s: &ServerSettings, k: &str| s.variables.get(k).map_or("-".into(), |v| size_text(k, v));
    let engines: BTreeSet<Option<ServerEngine>> =
        settings.iter().map(|(_, s)| s.engine()).collect();
    let mut notes: Vec<String> = settings
        .iter()
        .filter_map(|(c, s)| Some(format!("durability of {c}: {}", s.durability()?.describe())))
        .collect();
    notes.extend(durability_flags(data));
    let first = if engines.len() > 1 {
        let mut t = engines_side_by_side(&settings, header.clone());
        notes.push(format!(
            "{} servers: each engine's own settings per role; settings are compared only \
             between configurations of one engine; every variable is in --format json",
            engines
                .iter()
                .map(|e| e.map_or("unknown", ServerEngine::name))
                .collect::<Vec<_>>()
                .join(" and "),
        ));
        t.notes = notes;
        t
    } else {
        let mut rows = vec![
            std::iter::once("version".to_owned())
                .chain(settings.iter().map(|(_, s)| s.version.clone()))
                .collect::<Vec<_>>(),
        ];
        for k in KEY_SETTINGS {
            if settings.iter().any(|(_, s)| s.variables.contains_key(*k)) {
                rows.push(
                    std::iter::once((*k).to_owned())
                        .chain(settings.iter().map(|(_, s)| value(s, k)))
                        .collect(),
                );
            }
        }
        Table {
            title: "Server settings (key settings of each configuration's last trial)".to_owned(),
            header: header.clone(),
            align: align.clone(),
            rows,
            notes,
        }
    };
    let mut out = vec![first];
    for engine in &engines {
        let same: Vec<(&str, &ServerSettings)> = settings
            .iter()
            .filter(|(_, s)| s.engine() == *engine)
            .copied()
            .collect();
        if same.len() < 2 {
            continue;
        }
        let diff = differing(&same);
        let total = same
            .iter()
            .map(|(_, s)| s.variables.len())
            .max()
            .unwrap_or(0);
        let header: Vec<String> = std::iter::once("setting".to_owned())
            .chain(same.iter().map(|(c, _)| (*c).to_owned()))
            .collect();
        let mut align = vec![Align::Left];
        align.resize(header.len(), Align::Right);
        let rows = diff
            .iter()
            .map(|k| {
                let values: Vec<Option<&String>> =
                    same.iter().map(|(_, s)| s.variables.get(k)).collect();
                let cells = differing_flags(&values).unwrap_or_else(|| {
                    values
                        .iter()
                        .map(|v| v.map_or("-".to_owned(), |v| size_text(k, v)))
                        .collect()
                });
                std::iter::once(k.clone()).chain(cells).collect()
            })
            .collect();
        let between = match (engine, engines.len()) {
            (Some(e), n) if n > 1 => format!("the {} configurations", e.name()),
            _ => "configurations".to_owned(),
        };
        out.push(Table {
            title: format!("Settings that differ between {between}"),
            header,
            align,
            rows,
            notes: vec![if diff.is_empty() {
                format!(
                    "none of {total} variables differ (ports, paths and ids left out)"
                )
            } else {
                format!(
                    "{} of {total} variables differ (ports, paths and ids left out; of a flag list only the flags that differ); every variable is in --format json",
                    diff.len()
                )
            }],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn tables(configurations: &[(&str, ServerSettings)]) -> Vec<Table> {
        let mut store = dbrig_store::Store::open_in_memory().unwrap();
        let run = fixture::settings_run(&mut store, configurations).unwrap();
        settings_tables(&ReportData::load(&store, run).unwrap())
    }

    /// A MariaDB against a PostgreSQL: no table of the hundreds of variables that "differ"
    /// (no name is shared), but each side's durability and memory settings by role.
    #[test]
    fn servers_of_two_engines_are_shown_side_by_side_not_diffed() {
        let t = tables(&[
            ("mariadb", fixture::engine_settings(false)),
            ("postgres", fixture::engine_settings(true)),
        ]);
        assert_eq!(
            t.len(),
            1,
            "{:?}",
            t.iter().map(|t| &t.title).collect::<Vec<_>>()
        );
        let side = &t[0];
        assert_eq!(side.header, ["role", "mariadb", "postgres"]);
        let row = |role: &str| {
            side.rows
                .iter()
                .find(|r| r[0] == role)
                .unwrap_or_else(|| panic!("{role}: {:?}", side.rows))
                .clone()
        };
        assert_eq!(
            row("commit flush"),
            [
                "commit flush",
                "innodb_flush_log_at_trx_commit=1",
                "synchronous_commit=on"
            ]
        );
        assert_eq!(
            row("data cache"),
            [
                "data cache",
                "innodb_buffer_pool_size=128 MiB, key_buffer_size=128 MiB",
                "shared_buffers=128MB, effective_cache_size=4GB"
            ]
        );
        assert!(side.rows.len() <= 12, "{}", side.rows.len());
        assert!(
            side.notes
                .iter()
                .any(|n| n.starts_with("MariaDB and PostgreSQL servers")),
            "{:?}",
            side.notes
        );
        // No path, port or id anywhere.
        let text = side.to_text();
        assert!(
            !text.contains("/var/lib") && !text.contains("3306"),
            "{text}"
        );
    }

    /// Two MariaDBs: the variables that differ, without their paths (by name or as a path
    /// value) and with only the flags of a flag list that differ.
    #[test]
    fn servers_of_one_engine_show_what_differs_without_paths_and_long_flag_lists() {
        let a = fixture::engine_settings(false);
        let mut b = a.clone();
        let mut set = |k: &str, v: &str| {
            b.variables.insert(k.to_owned(), v.to_owned());
        };
        set("datadir", "/srv/b/data/");
        set("plugin_dir", "/opt/b/lib/plugin/");
        set("some_future_path_setting", "/opt/b/x");
        set("port", "3307");
        set("innodb_buffer_pool_size", "268435456");
        let switch = a.variables["optimizer_switch"].replace("mrr=off", "mrr=on");
        set("optimizer_switch", &switch);
        let t = tables(&[("A", a), ("B", b)]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].title,
            "Server settings (key settings of each configuration's last trial)"
        );
        let diff = &t[1];
        assert_eq!(diff.title, "Settings that differ between configurations");
        assert_eq!(
            diff.rows,
            [
                vec!["innodb_buffer_pool_size", "128 MiB", "256 MiB"],
                vec!["optimizer_switch", "mrr=off", "mrr=on"],
            ]
        );
        assert!(diff.notes[0].starts_with("2 of "), "{:?}", diff.notes);
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size_text("innodb_buffer_pool_size", "134217728"), "128 MiB");
        assert_eq!(size_text("tmp_table_size", "16777216"), "16 MiB");
        assert_eq!(size_text("innodb_log_file_size", "100663296"), "96 MiB");
        assert_eq!(size_text("sort_buffer_size", "2097152"), "2 MiB");
        assert_eq!(size_text("join_buffer_size", "262144"), "256 KiB");
        assert_eq!(size_text("key_buffer_size", "1500000"), "1.4 MiB");
        assert_eq!(size_text("max_connections", "151"), "151");
        assert_eq!(size_text("shared_buffers", "128MB"), "128MB");
    }
}
