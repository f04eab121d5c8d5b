//! `dbrig doctor` (host facts, a server's settings, what would distort a benchmark) and
//! `dbrig runs` (what the results database holds).

use std::process::ExitCode;

use anyhow::Result;
use dbrig_exec::probes;

use crate::args::{DoctorArgs, Format, RunsArgs, StoreArgs};
use crate::out::outln;

pub async fn doctor(args: DoctorArgs) -> Result<ExitCode> {
    let facts = dbrig_server::host::collect(args.data_dir.as_deref());
    let mut warnings: Vec<String> = dbrig_server::doctor_warnings(&facts, args.clients)
        .iter()
        .map(|w| w.to_string())
        .collect();
    // The server section, with `--target` (or the sysbench-style connection options).
    let server = match (&args.connection.target, &args.connection.db_driver) {
        (None, None) => None,
        _ => {
            let target =
                crate::connection::resolve_target(&args.connection, &StoreArgs::default())?;
            let settings =
                probes::server_settings(&target, &dbrig_driver::ConnectOptions::default())
                    .await
                    .map_err(|e| anyhow::anyhow!("doctor: cannot ask the server {target}: {e}"))?;
            if let Some(s) = &settings {
                warnings.extend(probes::server_warnings(s, args.clients));
            }
            Some((target, settings))
        }
    };
    if args.format == Format::Json {
        let v = serde_json::json!({
            "host": facts,
            "server": server.as_ref().map(|(t, s)| serde_json::json!({"target": t.to_string(), "facts": s})),
            "warnings": warnings,
        });
        crate::out::text(&dbrig_report::json_text(&v))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!("Host:")?;
    for (k, v) in dbrig_server::host::facts_lines(&facts) {
        outln!("  {k:<22}{v}")?;
    }
    outln!()?;
    if let Some((target, settings)) = &server {
        outln!("Server ({target}):")?;
        for (k, v) in probes::server_summary(settings.as_ref()) {
            outln!("  {k:<31} {v}")?;
        }
        outln!()?;
    }
    if warnings.is_empty() {
        outln!("Nothing found that would distort a benchmark.")?;
    } else {
        for w in &warnings {
            outln!("{w}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every run with its kind, status (`abandoned`: still marked running, its dbrig gone) and
/// trial count.
pub fn runs(args: RunsArgs) -> Result<ExitCode> {
    let store = crate::console::open_existing_store(&args.store)?;
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header([
        "run", "kind", "name", "status", "started", "trials", "commit", "tags", "host",
    ]);
    let mut json = Vec::new();
    for r in store.runs()? {
        let mut trials = 0;
        for c in &store.cells(r.id)? {
            trials += store.trials(c.id)?.len();
        }
        // The facts history compares like with like by; a run of an older dbrig may lack some.
        let facts: dbrig_core::host::HostFacts =
            serde_json::from_value(r.host.clone()).unwrap_or_default();
        let fingerprint = facts.fingerprint();
        let tags = r
            .provenance
            .tags
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        json.push(serde_json::json!({
            "run": r.id.0,
            "uid": r.uid,
            "commit": r.provenance.commit,
            "tags": r.provenance.tags,
            "host": {
                "fingerprint": fingerprint,
                "cpu_model": facts.cpu_model,
                "logical_cpus": facts.logical_cpus,
                "mem_total_bytes": facts.mem_total_bytes,
                "kernel": facts.kernel.release,
            },
            "kind": r.kind.to_string(),
            "name": r.name,
            "status": r.status.as_str(),
            "error": r.error,
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "dbrig_version": r.dbrig_version,
            "trials": trials,
        }));
        table.add_row([
            r.id.0.to_string(),
            r.kind.to_string(),
            r.name.clone(),
            r.status.as_str().to_owned(),
            r.started_at.clone(),
            trials.to_string(),
            r.provenance.commit.clone().unwrap_or_default(),
            tags,
            fingerprint,
        ]);
    }
    if args.format == Format::Json {
        crate::out::text(&dbrig_report::json_text(&serde_json::Value::Array(json)))?;
    } else {
        outln!("{table}")?;
    }
    Ok(ExitCode::SUCCESS)
}
