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
use plotters::element::DashedPathElement;
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

/// Chart text size as plotters takes it: its SVG backend writes `font-size` = size / 1.24, so
/// 16 is 12.9 px at the chart's own size (the page shows charts at their own size): no text
/// below 12 px, so tick labels, legends and axis titles read at a normal distance.
pub(crate) const TEXT_PX: u32 = 16;
/// Chart captions (16 px).
pub(crate) const CAPTION_PX: u32 = 20;
/// Most y ticks an axis gets: few enough for 13 px labels on a 250 px panel.
const Y_TICKS: usize = 6;
/// Most x ticks of a time axis.
const X_TICKS: usize = 8;

pub(crate) fn font(px: u32) -> (&'static str, u32) {
    ("sans-serif", px)
}

/// The step between ticks plotters puts on `lo..hi` with at most `n` ticks: the smallest
/// 1, 2 or 5 × 10^k that needs no more than `n` ticks (plotters' own rule, so the labels'
/// precision below matches the ticks drawn).
fn tick_step(lo: f64, hi: f64, n: usize) -> f64 {
    let span = (hi - lo).abs();
    if !(span > 0.0 && span.is_finite()) || n == 0 {
        return 1.0;
    }
    let mut k = span.log10().floor() as i32 - 3;
    loop {
        for m in [1.0, 2.0, 5.0] {
            let step = m * 10f64.powi(k);
            // Ticks at 0, step, 2·step …: floor(span / step) + 1 of them.
            if ((span / step).floor() as usize) < n {
                return step;
            }
        }
        k += 1;
    }
}

/// Decimals a tick step needs: none for 1, 2, 5, 10 …; one for 0.1, 0.2, 0.5; two for 0.05 …
fn step_decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    }
}

/// Tick labels formatted from the tick step, never from the tick's floating-point value:
/// `0.12000000000000001` prints `0.12` on an axis stepping by 0.02, and every label of an axis
/// has the same decimals.
pub(crate) fn tick_formatter(lo: f64, hi: f64, n: usize) -> impl Fn(&f64) -> String {
    let d = step_decimals(tick_step(lo, hi, n));
    move |v: &f64| {
        let s = format!("{v:.d$}");
        // `-0` from rounding a tiny negative tick.
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            s.trim_start_matches('-').to_owned()
        } else {
            s
        }
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
    clients_chart(
        data,
        workload,
        &format!("{workload}: {} vs clients", data.metric.label()),
        &format!("{} (median; bars: 95 % CI or min-max)", data.metric.label()),
    )
}

/// A cell's value against client count (a workload's throughput, or an item cell's figure:
/// TPC-C's NOPM, keyed `"{label} NOPM"`), drawn as [`throughput_chart`] draws throughput.
pub(crate) fn clients_chart(
    data: &ReportData,
    workload: &str,
    caption: &str,
    y_desc: &str,
) -> Result<Option<String>, ReportError> {
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
            .caption(caption, font(CAPTION_PX))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(84)
            .build_cartesian_2d(-0.5..(clients.len() as f64 - 0.5), 0.0..nice_max(top))
            .map_err(err)?;
        chart
            .configure_mesh()
            .label_style(font(TEXT_PX))
            .axis_desc_style(font(TEXT_PX))
            .x_labels(clients.len().max(1))
            .x_label_formatter(&|x| client_label(clients, *x))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .y_labels(Y_TICKS)
            .y_label_formatter(&tick_formatter(0.0, nice_max(top), Y_TICKS))
            .x_desc("clients")
            .y_desc(y_desc)
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
            .label_font(font(TEXT_PX))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(Some(svg))
}

/// How one percentile is drawn in [`latency_chart`]: told apart by line (dotted, solid,
/// long dashes) and by marker (hollow circle, filled circle, triangle), so the legend's
/// glyphs differ even in grey.
#[derive(Clone, Copy)]
struct PercentileStyle {
    name: &'static str,
    /// Dash length and gap in px; `None`: a solid line.
    dash: Option<(u32, u32)>,
    width: u32,
    marker: Marker,
}

#[derive(Clone, Copy, PartialEq)]
enum Marker {
    HollowCircle,
    FilledCircle,
    Triangle,
}

const PERCENTILE_STYLES: [PercentileStyle; 3] = [
    PercentileStyle {
        name: "p50",
        dash: Some((2, 4)),
        width: 2,
        marker: Marker::HollowCircle,
    },
    PercentileStyle {
        name: "p95",
        dash: None,
        width: 3,
        marker: Marker::FilledCircle,
    },
    PercentileStyle {
        name: "p99",
        dash: Some((12, 5)),
        width: 2,
        marker: Marker::Triangle,
    },
];

/// Width of a legend glyph, px: long enough to show two dashes of the p99 line.
const LEGEND_GLYPH: i32 = 36;

/// (b) Latency percentiles against client count for one workload: per configuration the
/// medians over trials of p50, p95 and p99, in ms, every point marked (a workload run at one
/// client count is a chart of single points). `None` when no cell of the workload has a
/// latency.
pub fn latency_chart(data: &ReportData, workload: &str) -> Result<Option<String>, ReportError> {
    let name = format!("latency {workload}");
    let err = |e: DrawingAreaErrorKind<_>| chart_error(&name, e);
    let clients = &data.clients_of(workload);
    type Pick = fn(&crate::data::CellData) -> Option<&Summary>;
    let picks: [Pick; 3] = [
        |c| c.p50_ms.as_ref(),
        |c| c.p95_ms.as_ref(),
        |c| c.p99_ms.as_ref(),
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
        .all(|c| picks.iter().all(|p| series(c, *p).is_empty()))
    {
        return Ok(None);
    }
    let top = data
        .configurations
        .iter()
        .flat_map(|c| series(c, picks[2]))
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("{workload}: latency percentiles vs clients"),
                font(CAPTION_PX),
            )
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(84)
            .build_cartesian_2d(-0.5..(clients.len() as f64 - 0.5), 0.0..nice_max(top))
            .map_err(err)?;
        chart
            .configure_mesh()
            .label_style(font(TEXT_PX))
            .axis_desc_style(font(TEXT_PX))
            .x_labels(clients.len().max(1))
            .x_label_formatter(&|x| client_label(clients, *x))
            .disable_x_mesh()
            .light_line_style(TRANSPARENT)
            .y_labels(Y_TICKS)
            .y_label_formatter(&tick_formatter(0.0, nice_max(top), Y_TICKS))
            .x_desc("clients")
            .y_desc("p50 / p95 / p99 latency, ms (median over trials)")
            .draw()
            .map_err(err)?;
        for (i, conf) in data.configurations.iter().enumerate() {
            let c = colour(i);
            for (ps, pick) in PERCENTILE_STYLES.into_iter().zip(picks) {
                let points = series(conf, pick);
                let style = ShapeStyle::from(c).stroke_width(ps.width);
                match ps.marker {
                    Marker::HollowCircle => chart
                        .draw_series(points.iter().map(|p| Circle::new(*p, 5, c.stroke_width(2)))),
                    Marker::FilledCircle => {
                        chart.draw_series(points.iter().map(|p| Circle::new(*p, 5, c.filled())))
                    }
                    Marker::Triangle => chart.draw_series(
                        points
                            .iter()
                            .map(|p| TriangleMarker::new(*p, 7, c.filled())),
                    ),
                }
                .map_err(err)?;
                let anno = match ps.dash {
                    Some((on, off)) => {
                        chart.draw_series(DashedLineSeries::new(points, on, off, style))
                    }
                    None => chart.draw_series(LineSeries::new(points, style)),
                }
                .map_err(err)?;
                let anno = anno.label(format!("{conf} {}", ps.name));
                // The legend glyph is the line's own pattern with its marker in the middle.
                let mid = LEGEND_GLYPH / 2;
                let line = move |(x, y): (i32, i32)| {
                    let (on, off) = ps.dash.unwrap_or((LEGEND_GLYPH as u32, 0));
                    DashedPathElement::new(vec![(x, y), (x + LEGEND_GLYPH, y)], on, off, style)
                };
                match ps.marker {
                    Marker::HollowCircle => anno.legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + line((0, 0))
                            + Circle::new((mid, 0), 5, c.stroke_width(2))
                    }),
                    Marker::FilledCircle => anno.legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + line((0, 0))
                            + Circle::new((mid, 0), 5, c.filled())
                    }),
                    Marker::Triangle => anno.legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + line((0, 0))
                            + TriangleMarker::new((mid, 0), 7, c.filled())
                    }),
                };
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .legend_area_size(LEGEND_GLYPH + 4)
            .label_font(font(TEXT_PX))
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
    /// The latency percentile of the samples (the trial's `--percentile`).
    pub percentile: f64,
    pub samples: Vec<IntervalSample>,
}

/// One line of a time panel: (seconds, value) points in a configuration's colour.
pub(crate) struct Line<'a> {
    pub label: &'a str,
    pub colour: usize,
    pub points: Vec<(f64, f64)>,
}

/// One panel of lines over the seconds of a trial (TPC-C's NOPM per interval).
pub(crate) fn time_chart(
    name: &str,
    caption: String,
    y_desc: &str,
    series: &[Line<'_>],
) -> Result<String, ReportError> {
    let err = |e: String| chart_error(name, e);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        panel(name, &root, caption, y_desc, series, true)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
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

/// Series with fewer points than this get a marker on each point (a short series' points
/// would otherwise be lost in the line, a single point drawn not at all).
const MARKED_BELOW: usize = 8;

/// One panel of `chart` (the name its errors are told under).
fn panel(
    chart_name: &str,
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: String,
    y_desc: &str,
    series: &[Line<'_>],
    legend: bool,
) -> Result<(), ReportError> {
    let err = |e: &dyn std::fmt::Display| chart_error(chart_name, e);
    let t_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, font(TEXT_PX + 2))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(76)
        .build_cartesian_2d(0.0..t_max.max(1.0), 0.0..nice_max(top))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .label_style(font(TEXT_PX))
        .axis_desc_style(font(TEXT_PX))
        .light_line_style(TRANSPARENT)
        .x_labels(X_TICKS)
        .y_labels(Y_TICKS)
        .x_label_formatter(&tick_formatter(0.0, t_max.max(1.0), X_TICKS))
        .y_label_formatter(&tick_formatter(0.0, nice_max(top), Y_TICKS))
        .x_desc("seconds into the trial")
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(&e))?;
    for s in series {
        let c = colour(s.colour);
        let style = ShapeStyle::from(c).stroke_width(2);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style))
            .map_err(|e| err(&e))?
            .label(s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        // A line through fewer than two points draws nothing: mark the points themselves.
        if s.points.len() < MARKED_BELOW {
            chart
                .draw_series(s.points.iter().map(|p| Circle::new(*p, 4, c.filled())))
                .map_err(|e| err(&e))?;
        }
    }
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(font(TEXT_PX))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()
            .map_err(|e| err(&e))?;
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
    let chart_name = format!("timeline {title}");
    let err = |e: String| chart_error(&chart_name, e);
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
            &chart_name,
            &upper,
            format!("{title}: {} per interval", metric.label()),
            metric.label(),
            &of(value),
            true,
        )?;
        // The axis names the percentile when every series sampled the same one.
        let pct = series
            .first()
            .map(|s| s.percentile)
            .filter(|p| series.iter().all(|s| (s.percentile - p).abs() < 1e-9));
        let y_desc = match pct {
            Some(p) => format!("p{p} latency, ms"),
            None => "latency at each trial's percentile, ms".to_owned(),
        };
        panel(
            &chart_name,
            &lower,
            format!("{title}: latency per interval"),
            &y_desc,
            &of(|p| p.latency_pct_ms),
            false,
        )?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// The trial a time chart shows for one configuration.
struct ChartTrial {
    /// Index into [`PALETTE`] (the configuration's position in plan order).
    colour: usize,
    /// Says which trial it is and why: `A (16 clients, median trial 3 of 4)`.
    label: String,
    trial: TrialId,
    percentile: f64,
}

/// For each configuration of `workload`, its median trial (the counted trial nearest the
/// cell's median, by the report's metric) at the largest client count it ran. The timeline
/// and OS charts show the same trials, so their lines can be read together.
fn median_trials(data: &ReportData, workload: &str) -> Vec<ChartTrial> {
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
        let counted = cell.trials.iter().filter(|t| t.is_counted()).count();
        out.push(ChartTrial {
            colour: i,
            label: format!(
                "{conf} ({} clients, median trial {} of {counted})",
                cell.clients, trial.trial
            ),
            trial: trial.trial_id,
            percentile: trial.percentile.unwrap_or(95.0),
        });
    }
    out
}

/// The timeline of one workload: for each configuration, its median trial at the largest
/// client count it ran. `None` when no such trial has samples.
pub fn workload_timeline(
    store: &Store,
    data: &ReportData,
    workload: &str,
) -> Result<Option<String>, ReportError> {
    let mut series = Vec::new();
    for t in median_trials(data, workload) {
        let samples = store.intervals(t.trial)?;
        if samples.is_empty() {
            continue;
        }
        series.push(TimelineSeries {
            label: t.label,
            colour: t.colour,
            percentile: t.percentile,
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
/// Height of one OS panel, px.
const OS_PANEL_HEIGHT: u32 = 250;

/// The OS panels, in page order: host CPU by kind, disk, memory, then the server process.
const OS_PANELS: [OsPanel; 8] = [
    ("CPU user", "% of all CPUs", |p| Some(p.cpu_user_pct)),
    ("CPU system", "% of all CPUs", |p| Some(p.cpu_system_pct)),
    ("CPU iowait", "% of all CPUs", |p| Some(p.cpu_iowait_pct)),
    ("memory used", "MiB", |p| {
        Some(p.mem_used_bytes as f64 / MIB)
    }),
    ("disk reads", "MiB/s", |p| {
        Some(p.disk_read_bytes_per_s / MIB)
    }),
    ("disk writes", "MiB/s", |p| {
        Some(p.disk_write_bytes_per_s / MIB)
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
    let chart_name = format!("OS statistics {title}");
    let err = |e: String| chart_error(&chart_name, e);
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
        // Two panels per row, each as wide as a chart: 14 px text fits a panel of that size.
        let root = SVGBackend::with_string(&mut svg, (2 * WIDTH, rows * OS_PANEL_HEIGHT))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let areas = root.split_evenly((rows as usize, 2));
        for (i, ((caption, unit, value), area)) in panels.iter().zip(&areas).enumerate() {
            let lines = lines(
                series
                    .iter()
                    .map(|s| (s.label.as_str(), s.colour, s.samples.as_slice())),
                |p: &OsSample| value(p).map(|v| (p.t_s, v)),
            );
            panel(
                &chart_name,
                area,
                format!("{title}: {caption}"),
                unit,
                &lines,
                i == 0,
            )?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(svg)
}

/// For each configuration of a workload measured in items (no median by throughput): its
/// median trial by duration (the last OS sample's time), with that trial's samples.
fn median_trials_by_duration(
    store: &Store,
    data: &ReportData,
    workload: &str,
) -> Result<Vec<OsSeries>, ReportError> {
    let mut out: Vec<OsSeries> = Vec::new();
    for cell in data.stored_cells(workload) {
        let Some(i) = data
            .configurations
            .iter()
            .position(|c| *c == cell.configuration)
        else {
            continue;
        };
        if out.iter().any(|s| s.colour == i) {
            continue;
        }
        let mut sampled = Vec::new();
        for t in cell.trials.iter().filter(|t| t.status == TrialStatus::Done) {
            let samples = store.os_samples(t.trial_id)?;
            if let Some(last) = samples.last() {
                sampled.push((last.t_s, t.trial, samples));
            }
        }
        let n = sampled.len();
        if n == 0 {
            continue;
        }
        // The lower median, so an even count shows a trial that ran, not an average.
        sampled.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (_, trial, samples) = sampled.swap_remove((n - 1) / 2);
        out.push(OsSeries {
            label: format!(
                "{} (median trial {trial} of {n} by duration)",
                cell.configuration
            ),
            colour: i,
            samples,
        });
    }
    Ok(out)
}

/// The OS statistics of one workload: each configuration's median trial (an OLTP workload's
/// by the metric, the same as [`workload_timeline`]; any other kind's by duration). `None`
/// when none of them sampled any.
pub fn workload_os_chart(
    store: &Store,
    data: &ReportData,
    kind: ResultKind,
    workload: &str,
) -> Result<Option<String>, ReportError> {
    let series: Vec<OsSeries> = match kind {
        ResultKind::Oltp => {
            let mut series = Vec::new();
            for t in median_trials(data, workload) {
                let samples = store.os_samples(t.trial)?;
                if !samples.is_empty() {
                    series.push(OsSeries {
                        label: t.label,
                        colour: t.colour,
                        samples,
                    });
                }
            }
            series
        }
        _ => median_trials_by_duration(store, data, workload)?,
    };
    if series.is_empty() {
        return Ok(None);
    }
    os_chart(workload, &series).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_take_their_decimals_from_the_step() {
        // plotters' own ticks on 0..0.66 step by 0.1: one decimal, no float noise.
        assert_eq!(tick_step(0.0, 0.66, 6), 0.2);
        let f = tick_formatter(0.0, 0.66, 6);
        assert_eq!(f(&0.6000000000000001), "0.6");
        assert_eq!(f(&0.0), "0.0");
        // A step of 0.02: two decimals on every label.
        assert_eq!(tick_step(0.0, 0.11, 6), 0.02);
        let f = tick_formatter(0.0, 0.11, 6);
        assert_eq!(f(&0.12000000000000001), "0.12");
        assert_eq!(f(&0.1), "0.10");
        // Whole steps: no decimals, `0.9999999999999999` is 1.
        let f = tick_formatter(0.0, 16_500.0, 6);
        assert_eq!(tick_step(0.0, 16_500.0, 6), 5000.0);
        assert_eq!(f(&15000.0), "15000");
        assert_eq!(tick_formatter(0.0, 6.0, 8)(&0.9999999999999999), "1");
        assert_eq!(f(&-0.0000001), "0");
        assert_eq!(step_decimals(0.005), 3);
    }

    /// Every tick plotters draws on a range, formatted: no label longer than `max` chars.
    #[test]
    fn no_tick_label_is_long() {
        for top in [
            0.013, 0.11, 0.66, 1.0, 7.7, 13.2, 990.0, 16_500.0, 123_456.0,
        ] {
            let svg = {
                let mut svg = String::new();
                {
                    let root =
                        SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
                    let mut chart = ChartBuilder::on(&root)
                        .y_label_area_size(84)
                        .x_label_area_size(40)
                        .build_cartesian_2d(0.0..1.0, 0.0..top)
                        .unwrap();
                    chart
                        .configure_mesh()
                        .y_labels(Y_TICKS)
                        .x_labels(0)
                        .y_label_formatter(&tick_formatter(0.0, top, Y_TICKS))
                        .draw()
                        .unwrap();
                    root.present().unwrap();
                }
                svg
            };
            let labels = text_elements(&svg);
            assert!(labels.len() >= 3, "{top}: {labels:?}");
            for l in &labels {
                assert!(l.len() <= 6, "{top}: tick label {l:?}");
            }
            // Distinct labels: the precision is enough for the step.
            let mut distinct = labels.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), labels.len(), "{top}: {labels:?}");
        }
    }

    /// The text of every `<text>` element of an SVG.
    pub(crate) fn text_elements(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = t.split_once('>')?.1;
                Some(body.split_once("</text>")?.0.trim().to_owned())
            })
            .collect()
    }

    /// The `font-size` of every `<text>` element.
    pub(crate) fn font_sizes(svg: &str) -> Vec<f64> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let attrs = t.split_once('>')?.0;
                let v = attrs.split_once("font-size=\"")?.1.split_once('"')?.0;
                v.trim_end_matches("px").parse().ok()
            })
            .collect()
    }

    /// A single run at one client count: each percentile's point is marked (a line through
    /// one point draws nothing), each with its own marker, and no text is below 12 px.
    #[test]
    fn one_client_count_draws_marked_points_in_readable_text() {
        let mut store = Store::open_in_memory().unwrap();
        let runs = crate::fixture::single_runs(&mut store).unwrap();
        let data = ReportData::load(&store, runs.oltp).unwrap();
        assert_eq!(data.clients_of("oltp_read_only"), vec![4]);
        let svg = latency_chart(&data, "oltp_read_only").unwrap().unwrap();
        // p50 hollow and p95 filled circles, p99 a triangle: each on the point and in the
        // legend.
        assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
        assert_eq!(svg.matches("<polygon").count(), 2, "{svg}");
        let hollow = svg
            .split("<circle")
            .skip(1)
            .filter(|c| {
                c.split_once("/>")
                    .is_some_and(|(a, _)| a.contains("fill=\"none\""))
            })
            .count();
        assert_eq!(hollow, 2, "p50's hollow circles");
        let sizes = font_sizes(&svg);
        assert!(!sizes.is_empty());
        assert!(sizes.iter().all(|&s| s >= 12.0), "{sizes:?}");
        for svg in [
            throughput_chart(&data, "oltp_read_only").unwrap().unwrap(),
            workload_timeline(&store, &data, "oltp_read_only")
                .unwrap()
                .unwrap(),
            workload_os_chart(&store, &data, ResultKind::Oltp, "oltp_read_only")
                .unwrap()
                .unwrap(),
        ] {
            let sizes = font_sizes(&svg);
            assert!(sizes.iter().all(|&s| s >= 12.0), "{sizes:?}");
            for t in text_elements(&svg) {
                let numeric = t.chars().all(|c| c.is_ascii_digit() || c == '.');
                assert!(!numeric || t.len() <= 7, "tick label {t:?}");
            }
        }
        // The time charts say which trial they show.
        let timeline = workload_timeline(&store, &data, "oltp_read_only")
            .unwrap()
            .unwrap();
        assert!(timeline.contains("median trial 1 of 1"), "{timeline}");
        assert!(timeline.contains("p95 latency, ms"));
    }

    fn sample(t_s: f64, server: bool) -> OsSample {
        OsSample {
            t_s,
            cpu_user_pct: 40.0 + t_s,
            cpu_system_pct: 10.0,
            cpu_iowait_pct: 2.0,
            cpu_idle_pct: 48.0,
            mem_available_bytes: 0,
            disk_read_bytes_per_s: 0.0,
            disk_write_bytes_per_s: 3.0 * MIB,
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
