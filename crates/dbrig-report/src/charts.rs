//! SVG charts drawn with plotters' SVG backend (text becomes `<text>` elements, so no font
//! files are needed and the page renders them with the browser's sans-serif).
//!
//! Client counts are placed at equal distances, not on a linear axis: plans use doubling
//! counts (1, 4, 16, 64 …), which a linear axis would crush into its left edge.

use dbrig_core::IntervalSample;
use dbrig_core::results::{OsSample, ResultKind};
use dbrig_core::stats::Summary;
use dbrig_store::{Store, TrialId, TrialStatus};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::data::{Metric, ReportData};
use crate::error::ReportError;

pub use crate::palette::{PALETTE, colour};

const WIDTH: u32 = 640;
const HEIGHT: u32 = 380;

fn chart_error(chart: &str, e: impl std::fmt::Display) -> ReportError {
    ReportError::Chart {
        chart: chart.to_owned(),
        detail: e.to_string(),
    }
}

/// Up to `n` x labels at the integer positions 0..n, each showing its client count.
fn client_label(clients: &[u32], x: f64) -> String {
    if x.fract().abs() > 1e-9 || x < 0.0 {
        return String::new();
    }
    clients
        .get(x.round() as usize)
        .map(|c| c.to_string())
        .unwrap_or_default()
}

/// Horizontal offset of configuration `i` of `k` so error bars do not hide each other.
fn dodge(i: usize, k: usize) -> f64 {
    if k <= 1 {
        0.0
    } else {
        (i as f64 - (k as f64 - 1.0) / 2.0) * 0.06
    }
}

fn whisker(x: f64, lo: f64, hi: f64, style: ShapeStyle, cap: f64) -> Vec<PathElement<(f64, f64)>> {
    vec![
        PathElement::new(vec![(x, lo), (x, hi)], style),
        PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
        PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
    ]
}

/// Axis numbers without plotters' default trailing `.0` on whole values, and without the
/// floating-point noise of tick arithmetic (`0.6000000000000001`, `1.9999999999999998`).
fn axis_number(v: &f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

fn nice_max(v: f64) -> f64 {
    if v > 0.0 && v.is_finite() {
        v * 1.1
    } else {
        1.0
    }
}

/// (a) Throughput against client count for one workload: one line per configuration through
/// the medians, with the median's 95 % confidence interval as error bars (min–max where a
/// cell has fewer than 6 trials and no finite interval).
/// `None` when no cell of the workload has a counted trial: a chart of nothing is left out.
pub fn throughput_chart(data: &ReportData, workload: &str) -> Result<Option<String>, ReportError> {
    let name = format!("throughput {workload}");
    let err = |e: DrawingAreaErrorKind<_>| chart_error(&name, e);
    let clients = &data.clients_of(workload);
    let k = data.configurations.len();
    let per_conf: Vec<Vec<(f64, Summary)>> = data
        .configurations
        .iter()
        .enumerate()
        .map(|(i, conf)| {
            clients
                .iter()
                .enumerate()
                .filter_map(|(x, &n)| {
                    let s = data.cell(conf, workload, n)?.summary.clone()?;
                    Some((x as f64 + dodge(i, k), s))
                })
                .collect()
        })
        .collect();
    if per_conf.iter().all(Vec::is_empty) {
        return Ok(None);
    }
    let top = per_conf
        .iter()
        .flatten()
        .map(|(_, s)| s.median_ci.map_or(s.max, |c| c.1))
        .fold(0.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{workload}: {} vs clients", data.metric.label()),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(clients.len() as f64 - 0.5), 0.0..nice_max(top))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(clients.len().max(1))
            .x_label_formatter(&|x| client_label(clients, *x))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .y_label_formatter(&axis_number)
            .x_desc("clients")
            .y_desc(format!(
                "{} (median; bars: 95 % CI, else min-max)",
                data.metric.label()
            ))
            .draw()
            .map_err(err)?;
        for (i, (conf, points)) in data.configurations.iter().zip(&per_conf).enumerate() {
            let c = colour(i);
            let line = ShapeStyle::from(c).stroke_width(3);
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|(x, s)| (*x, s.median)),
                    line,
                ))
                .map_err(err)?
                .label(conf.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], line));
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|(x, s)| Circle::new((*x, s.median), 4, c.filled())),
                )
                .map_err(err)?;
            let bar = ShapeStyle::from(c).stroke_width(2);
            chart
                .draw_series(points.iter().flat_map(|(x, s)| {
                    let (lo, hi) = s.median_ci.unwrap_or((s.min, s.max));
                    whisker(*x, lo, hi, bar, 0.05)
                }))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// (b) Latency percentiles against client count for one workload: per configuration the
/// medians over trials of p50 (dotted), p95 (solid) and p99 (dashed), in ms, each point
/// marked. `None` when no
/// cell of the workload has a latency.
pub fn latency_chart(data: &ReportData, workload: &str) -> Result<Option<String>, ReportError> {
    let name = format!("latency {workload}");
    let err = |e: DrawingAreaErrorKind<_>| chart_error(&name, e);
    let clients = &data.clients_of(workload);
    type Pick = fn(&crate::data::CellData) -> Option<&Summary>;
    let percentiles: [(&str, Pick); 3] = [
        ("p50", |c| c.p50_ms.as_ref()),
        ("p95", |c| c.p95_ms.as_ref()),
        ("p99", |c| c.p99_ms.as_ref()),
    ];
    let series = |conf: &str, pick: Pick| -> Vec<(f64, f64)> {
        clients
            .iter()
            .enumerate()
            .filter_map(|(x, &n)| Some((x as f64, pick(data.cell(conf, workload, n)?)?.median)))
            .collect()
    };
    if data
        .configurations
        .iter()
        .all(|c| percentiles.iter().all(|(_, p)| series(c, *p).is_empty()))
    {
        return Ok(None);
    }
    let top = data
        .configurations
        .iter()
        .flat_map(|c| series(c, percentiles[2].1))
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{workload}: latency percentiles vs clients"),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(clients.len() as f64 - 0.5), 0.0..nice_max(top))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(clients.len().max(1))
            .x_label_formatter(&|x| client_label(clients, *x))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .y_label_formatter(&axis_number)
            .x_desc("clients")
            .y_desc("latency, ms (median over trials)")
            .draw()
            .map_err(err)?;
        for (i, conf) in data.configurations.iter().enumerate() {
            let style = ShapeStyle::from(colour(i)).stroke_width(2);
            for (pname, pick) in percentiles {
                let points = series(conf, pick);
                // The points themselves too: at a single client count a line joins nothing.
                let radius = if pname == "p95" { 3 } else { 2 };
                chart
                    .draw_series(
                        points
                            .iter()
                            .map(|p| Circle::new(*p, radius, colour(i).filled())),
                    )
                    .map_err(err)?;
                let label = format!("{conf} {pname}");
                let anno = match pname {
                    "p50" => chart.draw_series(DashedLineSeries::new(points, 2, 6, style)),
                    "p99" => chart.draw_series(DashedLineSeries::new(points, 10, 6, style)),
                    _ => chart.draw_series(LineSeries::new(points, style)),
                }
                .map_err(err)?;
                let dash = match pname {
                    "p50" => Some((2, 6)),
                    "p99" => Some((10, 6)),
                    _ => None,
                };
                anno.label(label).legend(move |(x, y)| match dash {
                    // Legend marks are short: a dashed mark shows as two strokes.
                    Some(_) => PathElement::new(vec![(x, y), (x + 6, y)], style),
                    None => PathElement::new(vec![(x, y), (x + 18, y)], style),
                });
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// One trial's interval samples for [`timeline_chart`].
#[derive(Debug, Clone)]
pub struct TimelineSeries {
    pub label: String,
    /// Index into [`PALETTE`] (the configuration's position in plan order).
    pub colour: usize,
    pub samples: Vec<IntervalSample>,
}

/// One line of a time panel: (seconds, value) points in a configuration's colour.
struct Line<'a> {
    label: &'a str,
    colour: usize,
    points: Vec<(f64, f64)>,
}

/// The lines of `series` for one value of their samples (`None`: no point at that time).
fn lines<'a, T>(
    series: impl IntoIterator<Item = (&'a str, usize, &'a [T])>,
    value: impl Fn(&T) -> Option<(f64, f64)>,
) -> Vec<Line<'a>>
where
    T: 'a,
{
    series
        .into_iter()
        .map(|(label, colour, samples)| Line {
            label,
            colour,
            points: samples.iter().filter_map(&value).collect(),
        })
        .collect()
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: String,
    y_desc: &str,
    series: &[Line<'_>],
    legend: bool,
) -> Result<(), String> {
    let t_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..t_max.max(1.0), 0.0..nice_max(top))
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&axis_number)
        .y_label_formatter(&axis_number)
        .x_desc("seconds")
        .y_desc(y_desc)
        .draw()
        .map_err(|e| e.to_string())?;
    for s in series {
        let style = ShapeStyle::from(colour(s.colour)).stroke_width(2);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| e.to_string())?
            .label(s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// (c) Throughput (top) and interval latency (bottom) over time within trials, one line per
/// series. The latency is the one the trial sampled per interval (its `--percentile`,
/// 95 by default).
pub fn timeline_chart(
    title: &str,
    metric: Metric,
    series: &[TimelineSeries],
) -> Result<String, ReportError> {
    let err = |e: String| chart_error(&format!("timeline {title}"), e);
    let value: fn(&IntervalSample) -> f64 = match metric {
        Metric::Qps => |p| p.qps,
        Metric::Tps => |p| p.tps,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT * 3 / 2)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let (upper, lower) = root.split_vertically(HEIGHT * 3 / 4);
        let of = |v: fn(&IntervalSample) -> f64| {
            lines(
                series
                    .iter()
                    .map(|s| (s.label.as_str(), s.colour, s.samples.as_slice())),
                move |p: &IntervalSample| Some((p.t_s, v(p))),
            )
        };
        panel(
            &upper,
            format!("{title}: {} per interval", metric.label()),
            metric.label(),
            &of(value),
            true,
        )
        .map_err(err)?;
        panel(
            &lower,
            format!("{title}: latency per interval"),
            "latency percentile, ms",
            &of(|p| p.latency_pct_ms),
            false,
        )
        .map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// For each configuration of `workload`, its typical trial (nearest the median) at the
/// largest client count it ran: (colour index, label, trial). The timeline and OS charts
/// show the same trials, so their lines can be read together.
fn typical_trials(data: &ReportData, workload: &str) -> Vec<(usize, String, TrialId)> {
    let mut out = Vec::new();
    let clients = data.clients_of(workload);
    for (i, conf) in data.configurations.iter().enumerate() {
        let Some(cell) = clients
            .iter()
            .rev()
            .find_map(|&n| data.cell(conf, workload, n).filter(|c| c.summary.is_some()))
        else {
            continue;
        };
        let Some(trial) = cell.typical_trial(data.metric) else {
            continue;
        };
        out.push((
            i,
            format!("{conf} ({} clients, trial {})", cell.clients, trial.trial),
            trial.trial_id,
        ));
    }
    out
}

/// The timeline of one workload: for each configuration, its typical trial (nearest the
/// median) at the largest client count it ran. `None` when no such trial has samples.
pub fn workload_timeline(
    store: &Store,
    data: &ReportData,
    workload: &str,
) -> Result<Option<String>, ReportError> {
    let mut series = Vec::new();
    for (colour, label, trial) in typical_trials(data, workload) {
        let samples = store.intervals(trial)?;
        if samples.is_empty() {
            continue;
        }
        series.push(TimelineSeries {
            label,
            colour,
            samples,
        });
    }
    if series.is_empty() {
        return Ok(None);
    }
    timeline_chart(workload, data.metric, &series).map(Some)
}

/// One trial's OS samples for [`os_chart`].
#[derive(Debug, Clone)]
pub struct OsSeries {
    pub label: String,
    /// Index into [`PALETTE`] (the configuration's position in plan order).
    pub colour: usize,
    pub samples: Vec<OsSample>,
}

/// What one OS panel shows: caption, axis, and the value of a sample (`None`: not sampled).
type OsPanel = (&'static str, &'static str, fn(&OsSample) -> Option<f64>);

const MIB: f64 = 1024.0 * 1024.0;

/// The OS panels, in page order: host CPU by kind, disk, memory, then the server process.
const OS_PANELS: [OsPanel; 8] = [
    ("CPU user", "% of all CPUs", |p| Some(p.cpu_user_pct)),
    ("CPU system", "% of all CPUs", |p| Some(p.cpu_system_pct)),
    ("CPU iowait", "% of all CPUs", |p| Some(p.cpu_iowait_pct)),
    ("memory used", "MiB", |p| {
        Some(p.mem_used_bytes as f64 / MIB)
    }),
    ("disk reads", "MiB/s", |p| Some(p.disk_read_bytes_ps / MIB)),
    ("disk writes", "MiB/s", |p| {
        Some(p.disk_write_bytes_ps / MIB)
    }),
    ("server CPU", "% of one CPU", |p| p.process_cpu_pct),
    ("server RSS", "MiB", |p| {
        p.process_rss_bytes.map(|b| b as f64 / MIB)
    }),
];

/// (d) The OS statistics sampled during trials, one line per series, in panels two by two:
/// CPU user / system / iowait, memory used, disk reads / writes, and the server process's
/// CPU and RSS. Panels with no sample at all (no server process for an external target) are
/// left out.
pub fn os_chart(title: &str, series: &[OsSeries]) -> Result<String, ReportError> {
    let err = |e: String| chart_error(&format!("OS statistics {title}"), e);
    let panels: Vec<&OsPanel> = OS_PANELS
        .iter()
        .filter(|(_, _, v)| {
            series
                .iter()
                .any(|s| s.samples.iter().any(|p| v(p).is_some()))
        })
        .collect();
    let rows = panels.len().div_ceil(2).max(1) as u32;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, rows * HEIGHT / 2)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let areas = root.split_evenly((rows as usize, 2));
        for (i, ((caption, unit, value), area)) in panels.iter().zip(&areas).enumerate() {
            let lines = lines(
                series
                    .iter()
                    .map(|s| (s.label.as_str(), s.colour, s.samples.as_slice())),
                |p: &OsSample| value(p).map(|v| (p.t_s, v)),
            );
            panel(area, format!("{title}: {caption}"), unit, &lines, i == 0).map_err(err)?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// For each configuration of a workload measured in items (no typical trial by throughput):
/// the first finished trial of its stored cell.
fn first_trials(data: &ReportData, workload: &str) -> Vec<(usize, String, TrialId)> {
    let mut out = Vec::new();
    for cell in data.stored_cells(workload) {
        let Some(i) = data
            .configurations
            .iter()
            .position(|c| *c == cell.configuration)
        else {
            continue;
        };
        if out.iter().any(|(j, _, _)| *j == i) {
            continue;
        }
        if let Some(t) = cell.trials.iter().find(|t| t.status == TrialStatus::Done) {
            out.push((
                i,
                format!("{} (trial {})", cell.configuration, t.trial),
                t.trial_id,
            ));
        }
    }
    out
}

/// The OS statistics of one workload's trials: an OLTP workload's typical trials (the same
/// as [`workload_timeline`]), any other kind's first finished trial per configuration.
/// `None` when none of them sampled any.
pub fn workload_os_chart(
    store: &Store,
    data: &ReportData,
    kind: ResultKind,
    workload: &str,
) -> Result<Option<String>, ReportError> {
    let trials = match kind {
        ResultKind::Oltp => typical_trials(data, workload),
        _ => first_trials(data, workload),
    };
    let mut series = Vec::new();
    for (colour, label, trial) in trials {
        let samples = store.os_samples(trial)?;
        if samples.is_empty() {
            continue;
        }
        series.push(OsSeries {
            label,
            colour,
            samples,
        });
    }
    if series.is_empty() {
        return Ok(None);
    }
    os_chart(workload, &series).map(Some)
}

/// Every chart of one workload that has data, named for file names: an OLTP workload's
/// throughput and latency against clients, its timeline and OS statistics; a power test's
/// bar chart; the OS statistics of any other kind. Throughput, latency and timeline charts
/// are drawn for OLTP only: other kinds are not measured in throughput or latency.
pub fn workload_charts(
    store: &Store,
    data: &ReportData,
    kind: ResultKind,
    workload: &str,
) -> Result<Vec<(&'static str, String)>, ReportError> {
    let mut out = Vec::new();
    match kind {
        ResultKind::Oltp => {
            out.extend(throughput_chart(data, workload)?.map(|s| ("throughput", s)));
            out.extend(latency_chart(data, workload)?.map(|s| ("latency", s)));
            out.extend(workload_timeline(store, data, workload)?.map(|s| ("timeline", s)));
        }
        ResultKind::TpchPower => {
            if let Some(r) = crate::tpch::TpchReport::from_data(data, workload)
                && r.has_queries()
            {
                out.push(("tpch-power", crate::tpch::tpch_chart(&r)?));
            }
        }
        ResultKind::Micro | ResultKind::TpchThroughput | ResultKind::Perfrun => {}
    }
    if kind != ResultKind::Perfrun {
        out.extend(workload_os_chart(store, data, kind, workload)?.map(|s| ("os", s)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_numbers_hide_tick_noise() {
        assert_eq!(axis_number(&0.6000000000000001), "0.6");
        assert_eq!(axis_number(&1.9999999999999998), "2");
        assert_eq!(axis_number(&0.25), "0.25");
        assert_eq!(axis_number(&1500.0), "1500");
        assert_eq!(axis_number(&12.5), "12.5");
    }

    fn sample(t_s: f64, server: bool) -> OsSample {
        OsSample {
            t_s,
            cpu_user_pct: 40.0 + t_s,
            cpu_system_pct: 10.0,
            cpu_iowait_pct: 2.0,
            cpu_idle_pct: 48.0,
            mem_available_bytes: 0,
            disk_read_bytes_ps: 0.0,
            disk_write_bytes_ps: 3.0 * MIB,
            mem_used_bytes: 2048 * MIB as u64,
            process_cpu_pct: server.then_some(120.0),
            process_rss_bytes: server.then_some(300 * MIB as u64),
        }
    }

    #[test]
    fn os_chart_draws_every_sampled_quantity() {
        let series = [
            OsSeries {
                label: "A (4 clients, trial 1)".into(),
                colour: 0,
                samples: (1..=5).map(|t| sample(t as f64, true)).collect(),
            },
            OsSeries {
                label: "B (4 clients, trial 2)".into(),
                colour: 1,
                samples: (1..=5).map(|t| sample(t as f64, false)).collect(),
            },
        ];
        let svg = os_chart("oltp_read_only", &series).unwrap();
        for caption in [
            "CPU user",
            "CPU system",
            "CPU iowait",
            "memory used",
            "disk reads",
            "disk writes",
            "server CPU",
            "server RSS",
        ] {
            assert!(
                svg.contains(&format!("oltp_read_only: {caption}")),
                "{caption}"
            );
        }
        assert!(svg.contains("A (4 clients, trial 1)"));
        // Each configuration's colour is used for its lines.
        for c in [colour(0), colour(1)] {
            let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
            assert!(svg.to_uppercase().contains(&hex), "{hex}");
        }
    }

    #[test]
    fn os_chart_leaves_out_what_was_not_sampled() {
        // An external target: no server process, so no server panels.
        let series = [OsSeries {
            label: "ext".into(),
            colour: 0,
            samples: (1..=3).map(|t| sample(t as f64, false)).collect(),
        }];
        let svg = os_chart("w", &series).unwrap();
        assert!(svg.contains("w: CPU iowait"));
        assert!(!svg.contains("w: server CPU"));
        assert!(!svg.contains("w: server RSS"));
    }
}
