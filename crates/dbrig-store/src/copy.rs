//! Runs moved whole between results databases: [`RunDocument`], everything one run holds as
//! one plain value (the JSON document of `dbrig results export`), read from any backend by
//! [`RunDocument::read`] and written into any backend by [`Importer`], keyed by the run's
//! globally unique id so a copy made twice stores the run once.
//!
//! A copy is not a measurement, so it does not go through the recorder; it goes through
//! [`Importer`], which makes the checks every write makes (no unredacted password anywhere in
//! the document) before the backend sees it.

use std::path::Path;

use dbrig_core::results::{TrialEnvironment, TrialResult};
use dbrig_core::{IntervalSample, KeyDistribution, LatencyHistogram, Measurements, QueryCounters};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::model::{NewCell, NewTrial, RunId, RunKind, RunStatus, TrialStatus};
use crate::reader::ResultsReader;
use crate::secret::json_contains_unredacted_password;
use crate::store::Store;
use crate::time::parse_rfc3339;
use crate::writer::ResultsWriter;

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What [`RunDocument::format`] says: the document's shape and version.
pub const RUN_DOCUMENT_FORMAT: &str = "dbrig-run/1";

/// One run, whole: the run's row, its cells and their trials with every measurement
/// (histogram bytes in hex, interval samples), as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// [`RUN_DOCUMENT_FORMAT`].
    pub format: String,
    pub uid: String,
    pub kind: RunKind,
    pub name: String,
    /// The run's status as its database tells it (`abandoned` is stored `interrupted` by an
    /// import: its dbrig died before it closed the run).
    pub status: RunStatus,
    pub error: Option<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub dbrig_version: String,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    pub host: serde_json::Value,
    pub plan_text: Option<String>,
    pub pid: Option<u32>,
    pub machine: Option<String>,
    /// Tags and code revision (absent in documents of runs without them).
    #[serde(default)]
    pub provenance: crate::model::Provenance,
    pub cells: Vec<CellDocument>,
}

/// A cell of a [`RunDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellDocument {
    pub cell_key: String,
    pub configuration: String,
    pub workload: String,
    pub clients: u32,
    pub options: serde_json::Value,
    pub target: String,
    pub trials: Vec<TrialDocument>,
}

/// A trial of a [`CellDocument`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialDocument {
    pub trial: u32,
    pub status: TrialStatus,
    pub reason: Option<String>,
    pub server_version: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub result: Option<TrialResult>,
    pub environment: Option<TrialEnvironment>,
    pub measurements: Option<MeasurementsDocument>,
}

/// A trial's [`Measurements`], with its histogram as the hex of its stored bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasurementsDocument {
    pub threads: u32,
    pub key_distribution: KeyDistribution,
    #[serde(with = "float")]
    pub duration_s: f64,
    pub transactions: u64,
    pub queries: QueryCounters,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub fatal_errors: Vec<String>,
    pub latency_hist: String,
    pub intervals: Vec<IntervalDocument>,
    pub rate: Option<dbrig_core::measure::RateReport>,
    #[serde(with = "float")]
    pub percentile: f64,
    pub interrupted: bool,
}

/// An interval sample of a [`MeasurementsDocument`]: the sample's fields, each float exact
/// (see `float`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalDocument {
    #[serde(with = "float")]
    pub t_s: f64,
    pub threads: u32,
    #[serde(with = "float")]
    pub tps: f64,
    #[serde(with = "float")]
    pub qps: f64,
    #[serde(with = "float")]
    pub reads_ps: f64,
    #[serde(with = "float")]
    pub writes_ps: f64,
    #[serde(with = "float")]
    pub other_ps: f64,
    #[serde(with = "float")]
    pub latency_pct_ms: f64,
    #[serde(with = "float")]
    pub errors_ps: f64,
    #[serde(with = "float")]
    pub reconnects_ps: f64,
    pub backlog: Option<u64>,
}

impl IntervalDocument {
    fn of(s: &IntervalSample) -> Self {
        IntervalDocument {
            t_s: s.t_s,
            threads: s.threads,
            tps: s.tps,
            qps: s.qps,
            reads_ps: s.reads_ps,
            writes_ps: s.writes_ps,
            other_ps: s.other_ps,
            latency_pct_ms: s.latency_pct_ms,
            errors_ps: s.errors_ps,
            reconnects_ps: s.reconnects_ps,
            backlog: s.backlog,
        }
    }

    fn sample(&self) -> IntervalSample {
        IntervalSample {
            t_s: self.t_s,
            threads: self.threads,
            tps: self.tps,
            qps: self.qps,
            reads_ps: self.reads_ps,
            writes_ps: self.writes_ps,
            other_ps: self.other_ps,
            latency_pct_ms: self.latency_pct_ms,
            errors_ps: self.errors_ps,
            reconnects_ps: self.reconnects_ps,
            backlog: self.backlog,
        }
    }
}

/// A measured float in a document: a JSON number when finite, else `"NaN"`, `"inf"` or
/// `"-inf"` (JSON has no such numbers; a NaN the database keeps must come back a NaN).
mod float {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Float {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Float::deserialize(d)? {
            Float::Number(v) => Ok(v),
            Float::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!(
                    "{other:?} is not a number"
                ))),
            },
        }
    }
}

impl MeasurementsDocument {
    fn of(m: &Measurements) -> Self {
        MeasurementsDocument {
            threads: m.threads,
            key_distribution: m.key_distribution,
            duration_s: m.duration_s,
            transactions: m.transactions,
            queries: m.queries,
            ignored_errors: m.ignored_errors,
            reconnects: m.reconnects,
            fatal_errors: m.fatal_errors.clone(),
            latency_hist: m
                .latency
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            intervals: m.intervals.iter().map(IntervalDocument::of).collect(),
            rate: m.rate,
            percentile: m.percentile,
            interrupted: m.interrupted,
        }
    }

    fn measurements(&self, uid: &str) -> Result<Measurements> {
        let corrupt = |detail: String| StoreError::BadDocument {
            uid: uid.to_owned(),
            detail,
        };
        let hex = self.latency_hist.as_bytes();
        if !hex.len().is_multiple_of(2) {
            return Err(corrupt(
                "latency histogram: odd number of hex digits".into(),
            ));
        }
        let bytes = hex
            .chunks(2)
            .map(|p| {
                std::str::from_utf8(p)
                    .ok()
                    .and_then(|s| u8::from_str_radix(s, 16).ok())
                    .ok_or_else(|| corrupt("latency histogram: not hex".into()))
            })
            .collect::<Result<Vec<u8>>>()?;
        let latency = LatencyHistogram::from_bytes(&bytes)
            .map_err(|e| corrupt(format!("latency histogram: {e}")))?;
        Ok(Measurements {
            threads: self.threads,
            key_distribution: self.key_distribution,
            duration_s: self.duration_s,
            transactions: self.transactions,
            queries: self.queries,
            ignored_errors: self.ignored_errors,
            reconnects: self.reconnects,
            fatal_errors: self.fatal_errors.clone(),
            latency,
            intervals: self
                .intervals
                .iter()
                .map(IntervalDocument::sample)
                .collect(),
            rate: self.rate,
            percentile: self.percentile,
            interrupted: self.interrupted,
        })
    }
}

impl RunDocument {
    /// Run `id` of `from`, whole.
    pub fn read(from: &dyn ResultsReader, id: RunId) -> Result<RunDocument> {
        let run = from.run(id)?;
        let mut cells = Vec::new();
        for cell in from.cells(id)? {
            let mut trials = Vec::new();
            for t in from.trials(cell.id)? {
                let measurements = from.measurements(t.id)?;
                trials.push(TrialDocument {
                    trial: t.trial,
                    status: t.status,
                    reason: t.reason,
                    server_version: t.server_version,
                    started_at: t.started_at,
                    finished_at: t.finished_at,
                    result: t.result,
                    environment: t.environment,
                    measurements: measurements.as_ref().map(MeasurementsDocument::of),
                });
            }
            cells.push(CellDocument {
                cell_key: cell.cell_key,
                configuration: cell.configuration,
                workload: cell.workload,
                clients: cell.clients,
                options: cell.options,
                target: cell.target,
                trials,
            });
        }
        Ok(RunDocument {
            format: RUN_DOCUMENT_FORMAT.to_owned(),
            uid: run.uid,
            kind: run.kind,
            name: run.name,
            status: run.status,
            error: run.error,
            started_at: run.started_at,
            finished_at: run.finished_at,
            dbrig_version: run.dbrig_version,
            command_line: run.command_line,
            options: run.options,
            host: run.host,
            plan_text: run.plan_text,
            pid: run.pid,
            machine: run.machine,
            provenance: run.provenance,
            cells,
        })
    }
}

/// What an import did with one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// Stored under this id.
    Stored(RunId),
    /// A run with the same uid was already there: nothing written.
    AlreadyThere(RunId),
    /// The run is still being written by a live dbrig: not copied (copy it once it ends).
    StillRunning,
}

/// Writes whole runs into a store (`results copy`, `results import`): the one writer besides
/// the recorder, for runs measured before.
pub struct Importer<'a> {
    store: &'a mut Store,
}

impl<'a> Importer<'a> {
    pub fn new(store: &'a mut Store) -> Importer<'a> {
        Importer { store }
    }

    /// Store `doc` unless a run with its uid is there already.
    pub fn import(&mut self, doc: &RunDocument) -> Result<Imported> {
        import_into(self.store.backend_mut(), doc)
    }
}

fn import_into(to: &mut dyn ResultsWriter, doc: &RunDocument) -> Result<Imported> {
    if doc.format != RUN_DOCUMENT_FORMAT {
        return Err(StoreError::BadDocument {
            uid: doc.uid.clone(),
            detail: format!(
                "format {:?}, this dbrig reads {RUN_DOCUMENT_FORMAT:?}",
                doc.format
            ),
        });
    }
    let whole = serde_json::to_value(doc).map_err(|e| StoreError::BadDocument {
        uid: doc.uid.clone(),
        detail: e.to_string(),
    })?;
    if json_contains_unredacted_password(&whole) {
        return Err(StoreError::UnredactedSecret {
            path: to.path().to_owned(),
            what: format!("run {}", doc.uid),
        });
    }
    if doc.status == RunStatus::Running {
        return Ok(Imported::StillRunning);
    }
    let bad_time = |what: &str| StoreError::BadDocument {
        uid: doc.uid.clone(),
        detail: format!("{what} is not an RFC 3339 UTC time"),
    };
    let started_at = parse_rfc3339(&doc.started_at).ok_or_else(|| bad_time("started_at"))?;
    let id = match to.insert_copied_run(doc, started_at)? {
        Err(existing) => return Ok(Imported::AlreadyThere(existing)),
        Ok(id) => id,
    };
    if !doc.provenance.is_empty() {
        to.set_run_provenance(id, &doc.provenance)?;
    }
    for cell in &doc.cells {
        let cell_id = to.ensure_cell(
            id,
            &NewCell {
                cell_key: &cell.cell_key,
                configuration: &cell.configuration,
                workload: &cell.workload,
                clients: cell.clients,
                options: &cell.options,
                target: &cell.target,
            },
        )?;
        for t in &cell.trials {
            let measurements = t
                .measurements
                .as_ref()
                .map(|m| m.measurements(&doc.uid))
                .transpose()?;
            let trial = NewTrial {
                trial: t.trial,
                status: t.status,
                reason: t.reason.as_deref(),
                server_version: t.server_version.as_deref(),
                started_at: parse_rfc3339(&t.started_at)
                    .ok_or_else(|| bad_time("a trial's started_at"))?,
                finished_at: parse_rfc3339(&t.finished_at)
                    .ok_or_else(|| bad_time("a trial's finished_at"))?,
                measurements: measurements.as_ref(),
                result: t.result.as_ref(),
                environment: t.environment.as_ref(),
            };
            let json = crate::model::TrialJson {
                result: t.result.as_ref().map(crate::writer::to_json_value),
                environment: t.environment.as_ref().map(crate::writer::to_json_value),
            };
            to.record_trial(cell_id, &trial, &json)?;
        }
    }
    // Closed last: a copy cut short reads back as abandoned, never as a finished run.
    let (status, error) = match doc.status {
        RunStatus::Abandoned => (
            RunStatus::Interrupted,
            Some(
                doc.error
                    .clone()
                    .unwrap_or_else(|| "abandoned: its dbrig ended before closing it".into()),
            ),
        ),
        s => (s, doc.error.clone()),
    };
    let finished_at = match &doc.finished_at {
        Some(t) => parse_rfc3339(t).ok_or_else(|| bad_time("finished_at"))?,
        None => started_at,
    };
    to.finish_run(id, status, error.as_deref(), finished_at)?;
    Ok(Imported::Stored(id))
}

/// Write every run of `from` into a new SQLite file `to` (a server backend's
/// [`ResultsReader::save_copy`]).
pub(crate) fn save_copy(from: &dyn ResultsReader, to: &Path) -> Result<()> {
    if to.exists() {
        return Err(StoreError::CopyTargetExists { path: to.into() });
    }
    let mut copy = crate::sqlite::SqliteBackend::open(to)?;
    for run in from.runs()? {
        import_into(&mut copy, &RunDocument::read(from, run.id)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document's measurements travel through JSON exactly, NaN and infinities included
    /// (serde_json would write them as null and refuse to read them back).
    #[test]
    fn measurements_survive_json_to_the_bit() {
        let mut latency = LatencyHistogram::new();
        latency.record_us(1500);
        let m = Measurements {
            threads: 2,
            key_distribution: KeyDistribution::Uniform,
            duration_s: f64::NAN,
            transactions: 1,
            queries: QueryCounters::default(),
            ignored_errors: 0,
            reconnects: 0,
            fatal_errors: vec![],
            latency,
            intervals: vec![IntervalSample {
                t_s: 1.0 / 3.0,
                tps: f64::INFINITY,
                qps: f64::NEG_INFINITY,
                latency_pct_ms: f64::NAN,
                ..IntervalSample::default()
            }],
            rate: None,
            percentile: 95.0,
            interrupted: false,
        };
        let doc = MeasurementsDocument::of(&m);
        let back: MeasurementsDocument =
            serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        let back = back.measurements("u").unwrap();
        assert!(back.duration_s.is_nan());
        let i = &back.intervals[0];
        assert_eq!(i.t_s.to_bits(), (1.0f64 / 3.0).to_bits());
        assert_eq!(i.tps, f64::INFINITY);
        assert_eq!(i.qps, f64::NEG_INFINITY);
        assert!(i.latency_pct_ms.is_nan());
        assert_eq!(back.latency.to_bytes(), m.latency.to_bytes());
    }
}
