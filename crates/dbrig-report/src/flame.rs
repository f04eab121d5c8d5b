//! Flame graphs of the server's profile (`--profile`), drawn by inferno: per workload × client
//! count, one of each configuration (the folded stacks of all its counted trials added up)
//! and one differential graph of each configuration against the baseline (inferno's
//! differential, the baseline normalised to the configuration's sample count: red frames grew
//! in B, blue ones shrank; widths are B's). Only the HTML report draws them.

use dbrig_core::results::Profile;

use crate::data::ReportData;
use crate::why::{cells_of, evidence_of, workloads};

/// The flame graphs of one workload × client count.
#[derive(Debug, Clone, PartialEq)]
pub struct FlameGraphs {
    pub workload: String,
    pub clients: u32,
    /// (caption, SVG document), each configuration's then each differential.
    pub graphs: Vec<(String, String)>,
}

impl FlameGraphs {
    /// The title of the block that shows them.
    pub fn title(&self) -> String {
        format!(
            "Server flame graphs: {}, {} clients",
            self.workload, self.clients
        )
    }
}

/// The profile of one configuration in one workload × client count: its counted trials'
/// stacks added up (`None`: none of them was profiled).
fn merged_profile(data: &ReportData, workload: &str, clients: u32, conf: &str) -> Option<Profile> {
    let cells = cells_of(data, workload, clients, conf);
    let profiles: Vec<&Profile> = evidence_of(&cells)
        .into_iter()
        .filter_map(|e| e.profile.as_ref())
        .filter(|p| p.samples > 0)
        .collect();
    let first = profiles.first()?;
    Some(Profile::from_folded(
        &first.event,
        first.frequency_hz,
        profiles
            .iter()
            .flat_map(|p| p.stacks.iter().map(|s| (s.stack.clone(), s.count))),
    ))
}

fn options(title: String, subtitle: String) -> inferno::flamegraph::Options<'static> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title;
    opt.subtitle = Some(subtitle);
    opt.count_name = "samples".to_owned();
    // The same stacks draw the same picture: colours by name, not at random.
    opt.hash = true;
    opt.deterministic = true;
    opt
}

/// One profile's flame graph (an SVG document).
pub fn flame_svg(profile: &Profile, title: &str) -> Option<String> {
    let lines = profile.folded_lines();
    let mut svg = Vec::new();
    let subtitle = format!(
        "{} samples of {} at {} Hz{}",
        profile.samples,
        profile.event,
        profile.frequency_hz,
        dropped(profile)
    );
    inferno::flamegraph::from_lines(
        &mut options(title.to_owned(), subtitle),
        lines.iter().map(String::as_str),
        &mut svg,
    )
    .ok()?;
    String::from_utf8(svg).ok()
}

/// The differential flame graph of `b` against `a` (an SVG document).
pub fn differential_svg(a: &Profile, b: &Profile, title: &str) -> Option<String> {
    let (before, after) = (a.folded_lines().join("\n"), b.folded_lines().join("\n"));
    let mut folded = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options {
            normalize: true,
            strip_hex: true,
        },
        before.as_bytes(),
        after.as_bytes(),
        &mut folded,
    )
    .ok()?;
    let folded = String::from_utf8(folded).ok()?;
    let subtitle = format!(
        "red: more of the samples than in the baseline, blue: fewer; widths are this configuration's ({} samples; the baseline's {} scaled to match)",
        b.samples, a.samples
    );
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(
        &mut options(title.to_owned(), subtitle),
        folded.lines(),
        &mut svg,
    )
    .ok()?;
    String::from_utf8(svg).ok()
}

fn dropped(p: &Profile) -> String {
    match p.dropped_stacks {
        0 => String::new(),
        n => format!(
            "; {n} rare stacks shown as {} (each trial keeps its {} most frequent)",
            Profile::OTHER,
            Profile::MAX_STACKS
        ),
    }
}

/// The flame graphs of these workloads, per workload × client count that was profiled.
pub fn flame_graphs(data: &ReportData, of: &[String]) -> Vec<FlameGraphs> {
    let mut out = Vec::new();
    for w in workloads(data).into_iter().filter(|w| of.contains(w)) {
        for &n in &data.clients {
            let base = merged_profile(data, w, n, &data.baseline);
            let mut graphs = Vec::new();
            if let Some(svg) = base
                .as_ref()
                .and_then(|p| flame_svg(p, &format!("{} — {w}, {n} clients", data.baseline)))
            {
                graphs.push((format!("{} (baseline)", data.baseline), svg));
            }
            let mut diffs = Vec::new();
            for conf in data.others() {
                let Some(p) = merged_profile(data, w, n, conf) else {
                    continue;
                };
                if let Some(svg) = flame_svg(&p, &format!("{conf} — {w}, {n} clients")) {
                    graphs.push((conf.to_owned(), svg));
                }
                if let Some(svg) = base.as_ref().and_then(|a| {
                    differential_svg(
                        a,
                        &p,
                        &format!("{conf} against {} — {w}, {n} clients", data.baseline),
                    )
                }) {
                    diffs.push((
                        format!("{conf} against {} (differential)", data.baseline),
                        svg,
                    ));
                }
            }
            graphs.extend(diffs);
            if !graphs.is_empty() {
                out.push(FlameGraphs {
                    workload: w.clone(),
                    clients: n,
                    graphs,
                });
            }
        }
    }
    out
}
