//! Server settings in every report: each configuration's key settings and the durability of
//! its commits, the settings that differ between configurations, and flags a reader must not
//! miss — relaxed durability, and configurations that differ in durability without the plan
//! comparing it (then the comparison is not the seeds' "equal-opportunity" one: one side may
//! be faster only because it may lose commits).
//!
//! Every trial stores every server variable (`TrialEnvironment::server_settings`); a
//! configuration is shown with the settings of its last finished trial.

use std::collections::BTreeSet;

use dbrig_core::results::{Durability, KEY_SETTINGS, ServerSettings, is_instance_setting};
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
/// and files left out), in name order.
fn differing(settings: &[(&str, &ServerSettings)]) -> Vec<String> {
    let names: BTreeSet<&String> = settings
        .iter()
        .flat_map(|(_, s)| s.variables.keys())
        .filter(|n| !is_instance_setting(n))
        .collect();
    names
        .into_iter()
        .filter(|n| {
            let first = settings[0].1.variables.get(*n);
            settings[1..]
                .iter()
                .any(|(_, s)| s.variables.get(*n) != first)
        })
        .cloned()
        .collect()
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
/// lines and flags in the notes) and, with two or more configurations, the settings that
/// differ. Empty when no trial read the server's settings (SQLite, older runs).
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
    let value = |s: &ServerSettings, k: &str| s.variables.get(k).cloned().unwrap_or("-".into());
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
    let mut notes: Vec<String> = settings
        .iter()
        .filter_map(|(c, s)| Some(format!("durability of {c}: {}", s.durability()?.describe())))
        .collect();
    notes.extend(durability_flags(data));
    let mut out = vec![Table {
        title: "Server settings (key settings of each configuration's last trial)".to_owned(),
        header: header.clone(),
        align: align.clone(),
        rows,
        notes,
    }];
    if settings.len() > 1 {
        let diff = differing(&settings);
        let total = settings
            .iter()
            .map(|(_, s)| s.variables.len())
            .max()
            .unwrap_or(0);
        out.push(Table {
            title: "Settings that differ between configurations".to_owned(),
            header,
            align,
            rows: diff
                .iter()
                .map(|k| {
                    std::iter::once(k.clone())
                        .chain(settings.iter().map(|(_, s)| value(s, k)))
                        .collect()
                })
                .collect(),
            notes: vec![if diff.is_empty() {
                format!("none of {total} variables differ (ports, files and ids left out)")
            } else {
                format!(
                    "{} of {total} variables differ (ports, files and ids left out); every variable is in --format json",
                    diff.len()
                )
            }],
        });
    }
    out
}
