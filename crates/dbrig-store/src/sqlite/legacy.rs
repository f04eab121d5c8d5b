//! Schema 1 → 2: the rows written before results were typed.
//!
//! Schema 1 kept a trial's results in one `extra` JSON whose keys depended on the command that
//! wrote it (`micro` in a plan but the whole result at the top for `dbrig micro`, `tpch_power`,
//! `tpch_throughput` with the QphH figures beside it, `statements`, the environment keys of a
//! plan trial), and stored a perfrun as one cell per query with one trial per execution. This
//! step reads each of those shapes into the typed [`TrialResult`] and [`TrialEnvironment`],
//! regroups perfrun runs into one cell and trial per side, and drops `extra`. A value that does
//! not read as its type is left out (and said in the trial's reason) rather than refusing the
//! whole database: the rest of the run still reports.

use std::collections::BTreeMap;

use dbrig_core::results::perfrun::{Execution, PerfQuery, PerfrunResult, SideInfo, Temperature};
use dbrig_core::results::{OltpResult, TrialEnvironment, TrialResult};
use rusqlite::{Transaction, params};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Convert every schema-1 row; runs inside the migration's transaction.
pub(crate) fn convert_v1(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    regroup_perfruns(tx)?;
    let rows: Vec<(i64, Option<String>, bool, String, String)> = {
        let mut stmt = tx.prepare(
            "SELECT t.id, t.extra, t.measured, r.kind, c.options
               FROM trial t JOIN cell c ON c.id = t.cell_id JOIN run r ON r.id = c.run_id
              WHERE r.kind <> 'perfrun'",
        )?;
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    for (id, extra, measured, _kind, cell_options) in rows {
        let extra: Value = extra
            .and_then(|e| serde_json::from_str(&e).ok())
            .unwrap_or(Value::Null);
        let cell_options: Value = serde_json::from_str(&cell_options).unwrap_or(Value::Null);
        let environment = environment_of(&extra);
        let (result, unread) = result_of(&extra, measured, &cell_options);
        tx.execute(
            "UPDATE trial SET result = ?2, environment = ?3,
                    reason = CASE WHEN ?4 IS NULL THEN reason
                                  ELSE coalesce(reason || '; ', '') || ?4 END
              WHERE id = ?1",
            params![
                id,
                result.map(|r| json_text(&r)),
                environment.map(|e| json_text(&e)),
                unread,
            ],
        )?;
    }
    tx.execute_batch("ALTER TABLE trial DROP COLUMN extra")
}

fn json_text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("plain data serializes to JSON")
}

fn read<T: DeserializeOwned>(v: &Value) -> Option<T> {
    serde_json::from_value(v.clone()).ok()
}

/// The environment keys a schema-1 plan trial (or a single run's `server_settings`) stored,
/// each read on its own so one odd key does not lose the others.
fn environment_of(extra: &Value) -> Option<TrialEnvironment> {
    let keys = [
        "seed",
        "os_samples",
        "hooks",
        "page_cache",
        "client_cpus",
        "server_cpus",
        "server",
        "server_settings",
        "placement",
        "server_life",
    ];
    if !keys
        .iter()
        .any(|k| extra.get(k).is_some_and(|v| !v.is_null()))
    {
        return None;
    }
    let mut env = TrialEnvironment::default();
    let get = |k: &str| extra.get(k).filter(|v| !v.is_null());
    if let Some(v) = get("seed").and_then(Value::as_u64) {
        env.seed = v;
    }
    env.os_samples = get("os_samples").and_then(read).unwrap_or_default();
    env.hooks = get("hooks").and_then(read).unwrap_or_default();
    env.page_cache = get("page_cache").and_then(read);
    env.client_cpus = get("client_cpus").and_then(read);
    env.server_cpus = get("server_cpus").and_then(read);
    env.server = get("server").and_then(read);
    if let Some(s) = get("server_settings") {
        match s.get("error").and_then(Value::as_str) {
            Some(e) => env.server_settings_error = Some(e.to_owned()),
            None => env.server_settings = read(s),
        }
    }
    env.placement = get("placement").and_then(read);
    env.server_life = get("server_life").and_then(read);
    Some(env)
}

/// The typed result of a schema-1 trial, and a note when a stored result did not read.
fn result_of(
    extra: &Value,
    measured: bool,
    cell_options: &Value,
) -> (Option<TrialResult>, Option<String>) {
    let unread = |what: &str| Some(format!("the stored {what} result could not be read"));
    let typed =
        |v: &Value, what: &str, wrap: fn(Value) -> Option<TrialResult>| match wrap(v.clone()) {
            Some(r) => (Some(r), None),
            None => (None, unread(what)),
        };
    if let Some(m) = extra.get("micro") {
        return typed(m, "micro-benchmark", |v| read(&v).map(TrialResult::Micro));
    }
    if extra.get("benchmark").is_some() && extra.get("items").is_some() {
        // `dbrig micro` stored the result itself as `extra`.
        return typed(extra, "micro-benchmark", |v| {
            read(&v).map(TrialResult::Micro)
        });
    }
    if let Some(p) = extra.get("tpch_power") {
        return typed(p, "power test", |v| read(&v).map(TrialResult::TpchPower));
    }
    if let Some(t) = extra.get("tpch_throughput") {
        let mut t = t.clone();
        // `dbrig tpch throughput --power-run` kept the QphH figures beside the report.
        for k in ["power_run", "power_at_size", "qphh_at_size"] {
            if let (Some(v), Some(o)) = (extra.get(k), t.as_object_mut()) {
                o.insert(k.to_owned(), v.clone());
            }
        }
        return typed(&t, "throughput test", |v| {
            read(&v).map(TrialResult::TpchThroughput)
        });
    }
    if measured {
        let run = &cell_options["run"];
        let rate = run["rate"].as_f64().unwrap_or(0.0);
        let schedule = if rate > 0.0 {
            format!(
                "open loop, {} arrivals at {rate}/s",
                run["rate_schedule"].as_str().unwrap_or("poisson")
            )
        } else {
            "closed loop".to_owned()
        };
        let result = OltpResult {
            statements: extra.get("statements").and_then(read).unwrap_or_default(),
            schedule,
            warmup_s: run["warmup"].as_f64().unwrap_or(0.0),
            notes: Vec::new(),
            clients: Vec::new(),
            ..Default::default()
        };
        return (Some(TrialResult::Oltp(result)), None);
    }
    (None, None)
}

/// A schema-1 perfrun run: one cell per query (configuration `a/b`) with four trials (A cold,
/// B cold, A warm, B warm) whose `extra` is an execution with its side and temperature.
/// Becomes one cell and one trial per side, as a plan of two configurations stores it.
fn regroup_perfruns(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    let runs: Vec<(i64, String)> = {
        let mut stmt = tx.prepare("SELECT id, options FROM run WHERE kind = 'perfrun'")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    for (run, options) in runs {
        let options: Value = serde_json::from_str(&options).unwrap_or(Value::Null);
        let p = &options["perfrun"];
        let source = p["queries"].as_str().unwrap_or_default().to_owned();
        let filter = p["filter"].clone();
        let mut sides: BTreeMap<String, Side> = BTreeMap::new();
        for name in ["a", "b"] {
            sides.insert(
                name.to_owned(),
                Side {
                    info: read(&p["sides"][name]).unwrap_or_default(),
                    ..Side::default()
                },
            );
        }
        let cells: Vec<(i64, String)> = {
            let mut stmt =
                tx.prepare("SELECT id, options FROM cell WHERE run_id = ?1 ORDER BY id")?;
            stmt.query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (cell, cell_options) in &cells {
            let co: Value = serde_json::from_str(cell_options).unwrap_or(Value::Null);
            let file = co["file"].as_str().unwrap_or_default().to_owned();
            let sql = co["sql"].as_str().unwrap_or_default().to_owned();
            for s in sides.values_mut() {
                s.queries.push(PerfQuery {
                    file: file.clone(),
                    sql: sql.clone(),
                    cold: Execution::default(),
                    warm: Execution::default(),
                });
            }
            let mut stmt = tx.prepare(
                "SELECT extra, started_at, finished_at FROM trial WHERE cell_id = ?1 ORDER BY id",
            )?;
            let trials: Vec<(Option<String>, String, String)> = stmt
                .query_map([cell], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (extra, started, finished) in trials {
                let Some(extra) = extra.and_then(|e| serde_json::from_str::<Value>(&e).ok()) else {
                    continue;
                };
                let Some(side) = extra["side"].as_str().and_then(|s| sides.get_mut(s)) else {
                    continue;
                };
                let Some(temperature) = read::<Temperature>(&extra["temperature"]) else {
                    continue;
                };
                let execution: Execution = read(&extra).unwrap_or_default();
                let q = side.queries.last_mut().expect("pushed above");
                match temperature {
                    Temperature::Cold => q.cold = execution,
                    Temperature::Warm => q.warm = execution,
                }
                if side.started.as_ref().is_none_or(|s| started < *s) {
                    side.started = Some(started);
                }
                if side.finished.as_ref().is_none_or(|f| finished > *f) {
                    side.finished = Some(finished);
                }
            }
        }
        let old: Vec<i64> = cells.iter().map(|(id, _)| *id).collect();
        for (name, side) in sides {
            let cell_options = serde_json::json!({ "queries": source, "filter": filter });
            tx.execute(
                "INSERT INTO cell (run_id, cell_key, configuration, workload, clients, options,
                                   target)
                 VALUES (?1, ?2, ?3, 'perfrun', 1, ?4, ?5)",
                params![
                    run,
                    format!("perfrun-{name}"),
                    name,
                    json_text(&cell_options),
                    side.info.target
                ],
            )?;
            let cell = tx.last_insert_rowid();
            let Some(started) = side.started.clone() else {
                continue;
            };
            let result = TrialResult::Perfrun(PerfrunResult {
                server: side.info.clone(),
                source: source.clone(),
                note: None,
                queries: side.queries,
            });
            tx.execute(
                "INSERT INTO trial (cell_id, trial_no, status, server_version, started_at,
                                    finished_at, result, measured)
                 VALUES (?1, 1, 'done', ?2, ?3, ?4, ?5, 0)",
                params![
                    cell,
                    side.info.version,
                    started,
                    side.finished.clone().unwrap_or(started.clone()),
                    json_text(&result)
                ],
            )?;
        }
        for id in old {
            tx.execute("DELETE FROM cell WHERE id = ?1", [id])?;
        }
    }
    Ok(())
}

/// One side of a schema-1 perfrun being regrouped.
#[derive(Default)]
struct Side {
    info: SideInfo,
    queries: Vec<PerfQuery>,
    started: Option<String>,
    finished: Option<String>,
}
