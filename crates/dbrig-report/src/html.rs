//! The HTML page of a run: one self-contained file (inline CSS and SVG, no scripts, fonts or
//! external URLs), so it can be mailed, archived or opened from a results folder offline.
//! One section per kind in plan order, each with its tables and the charts that have data.

use std::collections::HashSet;
use std::path::Path;

use dbrig_core::host::{HostFacts, facts_lines};
use dbrig_core::results::{PowerReport, ResultKind};
use dbrig_store::{RunId, Store};
use minijinja::Environment;
use serde::Serialize;

use crate::data::{ReportData, RunInfo, ServerVersions};
use crate::error::ReportError;
pub use crate::files::write_atomic;
use crate::kinds::workload_charts;
use crate::tables::{Align, Block, Table, sections};

const REPORT_TEMPLATE: &str = include_str!("../templates/report.html");
const TABLE_TEMPLATE: &str = include_str!("../templates/table.html");

#[derive(Serialize)]
struct HtmlRow {
    cells: Vec<String>,
    class: Option<String>,
}

#[derive(Serialize)]
struct HtmlTable {
    title: String,
    header: Vec<String>,
    /// Per column: right-aligned numbers (the same alignment as the console table).
    numeric: Vec<bool>,
    rows: Vec<HtmlRow>,
    notes: Vec<String>,
}

impl HtmlTable {
    fn new(t: Table, class: impl Fn(&[String]) -> Option<String>) -> Self {
        HtmlTable {
            rows: t
                .rows
                .into_iter()
                .map(|cells| HtmlRow {
                    class: class(&cells),
                    cells,
                })
                .collect(),
            numeric: (0..t.header.len())
                .map(|i| t.align.get(i) != Some(&Align::Left))
                .collect(),
            title: t.title,
            header: t.header,
            notes: t.notes,
        }
    }
}

/// One block of a section: a table, preformatted text or a line, and the charts of its
/// workload (only charts that have data).
#[derive(Serialize, Default)]
struct HtmlBlock {
    table: Option<HtmlTable>,
    pre_title: Option<String>,
    pre: Option<String>,
    note: Option<String>,
    charts: Vec<String>,
    flames_title: Option<String>,
    /// Interactive inferno flame graphs, each its own document (in an iframe: each carries
    /// its own script and element ids).
    flames: Vec<HtmlFlame>,
}

#[derive(Serialize)]
struct HtmlFlame {
    caption: String,
    svg: String,
}

/// One kind's section.
#[derive(Serialize)]
struct HtmlSection {
    title: String,
    blocks: Vec<HtmlBlock>,
}

/// The template's context.
#[derive(Serialize)]
struct Page<'a> {
    title: &'a str,
    dbrig_version: Option<&'a str>,
    runs: &'a [RunInfo],
    running: bool,
    /// The OLTP metric, only when the report has OLTP cells.
    metric: Option<&'a str>,
    baseline: &'a str,
    excluded: Option<String>,
    server_versions: &'a [ServerVersions],
    /// Relaxed durability, durability differences and trials that could reach no verdict,
    /// shown at the top.
    durability_flags: Vec<String>,
    /// Key settings and the settings that differ between configurations.
    settings: Vec<HtmlTable>,
    hosts: Vec<HtmlHost>,
    plan_text: Option<&'a str>,
    sections: Vec<HtmlSection>,
    /// Hook outputs, EXPLAIN plans, OS statistics per query run and the prepare steps' loads,
    /// collapsed at the end.
    hooks: Vec<crate::records::Record>,
    plans: Vec<crate::records::Record>,
    os: Vec<crate::records::Record>,
    loads: Vec<crate::records::Record>,
}

#[derive(Serialize)]
struct HtmlHost {
    run: RunId,
    facts: Vec<(String, String)>,
}

/// Host facts as the lines `dbrig doctor` prints (human units); a host value that is not
/// dbrig's host facts (hand-made or foreign) as key/value lines flattened to dotted keys.
pub fn host_lines(host: &serde_json::Value) -> Vec<(String, String)> {
    let typed = host.as_object().is_some_and(|o| {
        o.contains_key("kernel")
            || o.contains_key("mem_total_bytes")
            || o.contains_key("logical_cpus")
    });
    if typed && let Ok(facts) = serde_json::from_value::<HostFacts>(host.clone()) {
        return facts_lines(&facts)
            .into_iter()
            .map(|(k, v)| (k.replace('_', " "), v))
            .collect();
    }
    let mut out = Vec::new();
    flatten("", host, &mut out);
    out
}

/// Nested objects flattened to dotted keys.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        serde_json::Value::String(s) => out.push((prefix.to_owned(), s.clone())),
        serde_json::Value::Null => {}
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}

/// Verdict rows coloured by their verdict.
fn verdict_class(cells: &[String]) -> Option<String> {
    match cells.last()?.as_str() {
        "improvement" => Some("verdict-improvement".into()),
        "regression" => Some("verdict-regression".into()),
        // Trials too few for any verdict: not "no change", a reader must not miss it.
        "unreachable" => Some("verdict-unreachable".into()),
        _ => None,
    }
}

/// The page for `data`; `store` supplies the interval and OS samples of the charts.
pub fn render_html(store: &Store, data: &ReportData) -> Result<String, ReportError> {
    let mut html_sections = Vec::new();
    for (s, section) in sections(data)?.into_iter().zip(&data.sections) {
        // A perfrun names its workload once per compared configuration: a workload's charts
        // go under its first block only.
        let mut charted = HashSet::new();
        let mut blocks = Vec::new();
        for (workload, b) in s.blocks {
            let mut block = HtmlBlock::default();
            match b {
                Block::Table(t) => block.table = Some(HtmlTable::new(t, |_| None)),
                Block::Verdicts(t) => block.table = Some(HtmlTable::new(t, verdict_class)),
                Block::Text { title, body } => {
                    block.pre_title = Some(title);
                    block.pre = Some(body);
                }
                Block::Note(n) => block.note = Some(n),
            }
            if let Some(w) = workload
                && charted.insert(w.clone())
            {
                block.charts = workload_charts(store, data, s.kind, &w)?
                    .into_iter()
                    .map(|(_, svg)| svg)
                    .collect();
            }
            blocks.push(block);
        }
        for f in crate::flame::flame_graphs(data, &section.workloads) {
            blocks.push(HtmlBlock {
                flames_title: Some(f.title()),
                flames: f
                    .graphs
                    .into_iter()
                    .map(|(caption, svg)| HtmlFlame { caption, svg })
                    .collect(),
                ..HtmlBlock::default()
            });
        }
        html_sections.push(HtmlSection {
            title: s.title,
            blocks,
        });
    }
    let hosts: Vec<HtmlHost> = data
        .runs
        .iter()
        .map(|r| {
            let facts = host_lines(&r.host);
            HtmlHost { run: r.id, facts }
        })
        .collect();
    let ex = data.excluded();
    let mut env = Environment::new();
    // The `.html` names turn on HTML auto-escaping: names and plan text are user input.
    env.add_template("report.html", REPORT_TEMPLATE)?;
    env.add_template("table.html", TABLE_TEMPLATE)?;
    let page = Page {
        title: &data.title,
        dbrig_version: data.runs.first().map(|r| r.dbrig_version.as_str()),
        runs: &data.runs,
        running: data.runs.iter().any(|r| r.status == "running"),
        metric: data.has_kind(ResultKind::Oltp).then(|| data.metric.label()),
        baseline: &data.baseline,
        excluded: (ex.total() > 0).then(|| format!("{} trial(s) ({})", ex.total(), ex.describe())),
        server_versions: &data.server_versions,
        durability_flags: crate::settings::durability_flags(data)
            .into_iter()
            .chain(crate::tables::verdict_flags(data))
            .collect(),
        settings: crate::settings::settings_tables(data)
            .into_iter()
            .map(|t| HtmlTable::new(t, |_| None))
            .collect(),
        hosts,
        plan_text: data.plan_text(),
        sections: html_sections,
        hooks: crate::records::hook_records(data),
        plans: crate::records::plan_records(data),
        os: crate::records::os_records(data),
        loads: crate::records::load_records(data),
    };
    let page = env
        .get_template("report.html")?
        .render(minijinja::value::Serde(&page))?;
    Ok(page)
}

/// Where a page written while its run goes takes the trial running now (a TPC-H power
/// trial's queries so far): the page of the stored trials is rendered once per trial, and
/// after every query only this fragment is rendered and put in ([`with_live`]).
pub const LIVE_MARKER: &str = "<!-- dbrig:live -->";

#[derive(Serialize)]
struct LiveSection<'a> {
    label: &'a str,
    table: HtmlTable,
    chart: String,
}

const LIVE_TEMPLATE: &str = r#"<h2>Running now: {{ label }}</h2>
<p class="notes">Redrawn after every query; stored and reported with the others when the trial ends.</p>
{% with t = table %}{% include "table.html" %}{% endwith %}
<div class="charts">{{ chart | safe }}</div>
"#;

/// The running power trial `label` as the page's live section: its table and bar chart so far.
pub fn live_power_html(label: &str, report: &PowerReport) -> Result<String, ReportError> {
    let mut env = Environment::new();
    env.add_template("live.html", LIVE_TEMPLATE)?;
    env.add_template("table.html", TABLE_TEMPLATE)?;
    let live = LiveSection {
        label,
        table: HtmlTable::new(crate::kinds::live_power_table(report), |_| None),
        chart: crate::kinds::live_power_chart(report)?,
    };
    Ok(env
        .get_template("live.html")?
        .render(minijinja::value::Serde(&live))?)
}

/// `page` with `fragment` where its [`LIVE_MARKER`] is (the marker kept, for the next query).
pub fn with_live(page: &str, fragment: &str) -> String {
    page.replacen(LIVE_MARKER, &format!("{LIVE_MARKER}\n{fragment}"), 1)
}

/// Load run `run` with the default choices (QPS, first configuration as baseline, the stored
/// perfrun filters), render its page and write it atomically to `path`. The plan executor
/// calls this after every trial, so a long run can be watched in a browser.
pub fn write_html_report(store: &Store, run: RunId, path: &Path) -> Result<(), ReportError> {
    write_atomic(path, html_page(store, run)?.as_bytes())
}

/// Run `run`'s page with the default choices, as [`write_html_report`] writes it.
pub fn html_page(store: &Store, run: RunId) -> Result<String, ReportError> {
    let data = ReportData::load(store, run)?;
    render_html(store, &data)
}
