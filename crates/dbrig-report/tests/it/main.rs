//! Integration tests of the plan reports: snapshots of every format from a store filled with
//! fixed measurements, comparisons of two runs, and the HTML page rendered by Chromium.

mod compare;
mod fixture_db;
mod html_browser;
mod kinds;
mod live;
mod snapshots;
mod tpch;
mod why;

use std::path::PathBuf;

use dbrig_report::ReportData;
use dbrig_report::charts::PALETTE;
use dbrig_report::fixture;
use dbrig_store::Store;

/// A fresh in-memory store holding the demo run.
pub fn demo() -> (Store, ReportData) {
    let mut store = Store::open_in_memory().expect("in-memory store");
    let run = fixture::demo_run(&mut store).expect("fill the demo run");
    let data = ReportData::load(&store, run).expect("load the demo run");
    (store, data)
}

/// Compare `actual` with the committed snapshot `name`; `DBRIG_UPDATE_SNAPSHOTS=1` rewrites it.
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("DBRIG_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "snapshot {} cannot be read ({e}); review the output and create it with \
             DBRIG_UPDATE_SNAPSHOTS=1 cargo test -p dbrig-report",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let (exp, act): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let first = exp
        .iter()
        .zip(&act)
        .position(|(e, a)| e != a)
        .unwrap_or(exp.len().min(act.len()));
    let actual_path = path.with_extension("actual");
    let _ = std::fs::write(&actual_path, actual);
    panic!(
        "snapshot {name} differs at line {} ({} vs {} lines)\n  expected: {:?}\n  actual:   {:?}\n\
         full output written to {}; see `diff {} {}`; if the change is intended, rerun with \
         DBRIG_UPDATE_SNAPSHOTS=1",
        first + 1,
        exp.len(),
        act.len(),
        exp.get(first).copied().unwrap_or("<end>"),
        act.get(first).copied().unwrap_or("<end>"),
        actual_path.display(),
        path.display(),
        actual_path.display(),
    );
}

/// The `<svg>…</svg>` charts of a page (or the one chart of an SVG file).
pub fn svgs(html: &str) -> Vec<&str> {
    html.match_indices("<svg")
        .map(|(i, _)| {
            let end = html[i..].find("</svg>").map_or(html.len(), |e| i + e + 6);
            &html[i..end]
        })
        .collect()
}

/// Marks drawn in the configurations' colours that show data. Legends draw only horizontal
/// strokes 6 or 18 px long and 14 × 10 swatches; an empty series draws a line without points.
/// Everything else in a palette colour is data: circles, bars, lines and whiskers.
fn data_marks(svg: &str) -> usize {
    let hexes: Vec<String> = PALETTE
        .iter()
        .map(|c| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2))
        .collect();
    let attr = |e: &str, name: &str| -> Option<String> {
        Some(
            e.split(&format!(" {name}=\""))
                .nth(1)?
                .split('"')
                .next()?
                .to_owned(),
        )
    };
    svg.split('<')
        .filter(|e| hexes.iter().any(|h| e.contains(h.as_str())))
        .filter(|e| {
            if e.starts_with("circle") {
                true
            } else if e.starts_with("rect") {
                (attr(e, "width").as_deref(), attr(e, "height").as_deref())
                    != (Some("14"), Some("10"))
            } else if e.starts_with("polyline") {
                let points: Vec<(i64, i64)> = attr(e, "points")
                    .unwrap_or_default()
                    .split_whitespace()
                    .filter_map(|p| {
                        let (x, y) = p.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect();
                match points.as_slice() {
                    [] | [_] => false,
                    [a, b] => !(a.1 == b.1 && [6, 18].contains(&(b.0 - a.0))),
                    _ => true,
                }
            } else {
                false
            }
        })
        .count()
}

/// Every chart of a page (or an SVG file) draws data, not only its axes and legend.
pub fn assert_no_empty_chart(html: &str) {
    for svg in svgs(html) {
        let title = svg
            .split("<text")
            .nth(1)
            .and_then(|t| t.split_once('>'))
            .map_or("", |t| t.1.split('<').next().unwrap_or(""));
        assert!(data_marks(svg) > 0, "chart {:?} has no data", title.trim());
    }
}

/// An empty series or a legend is not data; a bar, a point or a line is.
#[test]
fn data_marks_tell_a_legend_from_data() {
    let legend = r##"<svg><polyline stroke="#1F77B4" points="448,191 466,191 "/><rect width="14" height="10" fill="#D62728"/><polyline stroke="#1F77B4" points=""/></svg>"##;
    assert_eq!(data_marks(legend), 0);
    let bar = r##"<svg><rect x="81" y="342" width="33" height="5" fill="#1F77B4"/></svg>"##;
    assert_eq!(data_marks(bar), 1);
    let line = r##"<svg><polyline stroke="#1F77B4" points="134,68 189,62 "/></svg>"##;
    assert_eq!(data_marks(line), 1);
}
