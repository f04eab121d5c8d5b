//! The HTML page as a browser shows it: rendered by headless Chromium, the screenshot must
//! show the chart lines in the configurations' colours. CI installs Chromium from Debian's
//! `chromium` package; without it this test fails (it must not pass silently).

use std::path::Path;
use std::process::Command;

use dbrig_report::charts::PALETTE;
use dbrig_report::{fixture, write_html_report};
use dbrig_store::Store;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Pixels within `tolerance` (per channel) of `rgb`.
fn count_colour(pixels: &[[u8; 3]], rgb: (u8, u8, u8), tolerance: u8) -> usize {
    pixels
        .iter()
        .filter(|p| {
            p[0].abs_diff(rgb.0) <= tolerance
                && p[1].abs_diff(rgb.1) <= tolerance
                && p[2].abs_diff(rgb.2) <= tolerance
        })
        .count()
}

fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let file = std::fs::File::open(path).expect("open screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .map(|c| match channels {
            1 | 2 => [c[0], c[0], c[0]],
            _ => [c[0], c[1], c[2]],
        })
        .collect();
    (info.width, info.height, pixels)
}

/// Screenshot `html` in headless Chromium at `size`; the decoded pixels.
/// `DBRIG_KEEP_SCREENSHOT=PATH` keeps the PNG for a person to look at.
fn screenshot(html: &Path, dir: &Path, size: (u32, u32)) -> Vec<[u8; 3]> {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} not found: this test renders the HTML report in headless Chromium; \
         install it with `apt-get install chromium` (CI installs it)"
    );
    let png = dir.join("shot.png");
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium");
    assert!(
        png.exists(),
        "chromium wrote no screenshot (status {}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    if let Ok(keep) = std::env::var("DBRIG_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
    let (w, h, pixels) = decode_png(&png);
    assert_eq!((w, h), size);
    pixels
}

/// The page is rendered (most pixels are background, not an error page) and each of the
/// first `configurations` colours covers at least `min` pixels: the charts drew.
fn assert_drawn(pixels: &[[u8; 3]], configurations: usize, min: usize) {
    // Each chart draws each configuration with lines 2–3 px wide or bars over hundreds of px;
    // anti-aliased edges are blended, so count only pixels close to the exact colour and ask
    // for a clear margin over stray matches.
    for (i, c) in PALETTE.iter().take(configurations).enumerate() {
        let n = count_colour(pixels, (c.0, c.1, c.2), 12);
        assert!(
            n >= min,
            "colour {i} ({c:?}) found in only {n} pixels: the charts did not render"
        );
    }
    let white = count_colour(pixels, (255, 255, 255), 0);
    assert!(white > pixels.len() / 2, "{white} white pixels");
}

/// What the page's charts print: every chart text at least 12 px, and no tick label longer
/// than 8 characters (ticks are formatted from their step, never `0.12000000000000001`).
fn assert_chart_text(page: &str) {
    let mut texts = 0;
    for t in page.split("<text").skip(1) {
        let Some((attrs, rest)) = t.split_once('>') else {
            continue;
        };
        let px: f64 = attrs
            .split_once("font-size=\"")
            .and_then(|(_, v)| v.split('"').next())
            .and_then(|v| v.trim_end_matches("px").parse().ok())
            .expect("every chart text has a size");
        assert!(px >= 12.0, "chart text of {px} px: {attrs}");
        let body = rest.split("</text>").next().unwrap_or("").trim();
        let numeric = !body.is_empty()
            && body
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-');
        assert!(!numeric || body.len() <= 8, "tick label {body:?}");
        texts += 1;
    }
    assert!(texts > 20, "only {texts} chart texts");
}

#[test]
fn html_page_shows_the_charts_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let run = fixture::demo_run(&mut store).unwrap();
    let html = dir.path().join("report.html");
    write_html_report(&store, run, &html).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no scripts, no external resources (the SVG namespace is not fetched).
    assert!(!page.contains("<script"), "a script slipped in");
    for external in ["src=\"http", "href=\"http", "url(", "@import"] {
        assert!(!page.contains(external), "external resource: {external}");
    }
    // The plan text is user input: its markup must stay text.
    assert!(
        page.contains("# &lt;script&gt; &amp; friends"),
        "plan text not escaped"
    );
    assert_eq!(page.matches("<svg").count(), 6, "2 workloads × 3 charts");
    // Verdict rows are coloured by their verdict.
    assert!(page.contains(r#"<tr class="verdict-regression">"#));
    assert!(page.contains(r#"<tr class="verdict-improvement">"#));
    assert_chart_text(&page);
    let pixels = screenshot(&html, dir.path(), (1400, 2400));
    assert_drawn(&pixels, 3, 1500);
}

/// A plan of OLTP, micro-benchmarks, TPC-H and a perfrun: the OLTP charts and the power
/// test's bars show in both configurations' colours, and nothing else is drawn.
#[test]
fn a_page_of_every_kind_shows_its_charts_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let run = fixture::mixed_plan(&mut store).unwrap();
    let html = dir.path().join("report.html");
    write_html_report(&store, run, &html).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("<svg").count(),
        6,
        "OLTP 4 charts, power test 2"
    );
    assert!(
        page.contains("<pre>perfrun run 1"),
        "the perfrun pairs as text"
    );
    assert_chart_text(&page);
    let pixels = screenshot(&html, dir.path(), (1400, 7200));
    // Two configurations; the power test's bars alone cover thousands of pixels.
    assert_drawn(&pixels, 2, 4000);
}

/// A single run at one client count (what `dbrig run … --report html` users see first): the
/// latency chart's points are marked in the configuration's colour (a line through one point
/// draws nothing), the host table is in human units, and the page text is at least 12 px.
#[test]
fn a_single_run_page_marks_its_points_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let runs = fixture::single_runs(&mut store).unwrap();
    let html = dir.path().join("report.html");
    write_html_report(&store, runs.oltp, &html).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<td>memory</td><td>17.7 GiB (12.0 GiB available)</td>"));
    assert!(page.contains("<td>busy processes</td><td>backup (pid 812) 24 % of a CPU</td>"));
    assert!(!page.contains("19043745792"), "raw bytes in the page");
    assert!(page.contains("median trial 1 of 1"));
    // The run as the command printed it comes first: TPS, latencies, statements, the seed.
    assert!(page.contains("The run as the command printed it"));
    assert!(page.contains("transactions:") && page.contains("random seed:"));
    assert_chart_text(&page);
    let pixels = screenshot(&html, dir.path(), (1400, 2800));
    // One configuration, one client count: only the markers (and the timeline's lines) are
    // in its colour; without markers the latency chart would add nothing.
    assert_drawn(&pixels, 1, 1500);
}
