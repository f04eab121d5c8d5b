//! The colours of configurations in every chart, in plan order.

use plotters::style::RGBColor;

/// Line colours, one per configuration in plan order (Tableau 10's first six: distinct for
/// the colour-blind in the first pairs). Tests look for these exact colours in screenshots.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The colour of the `i`-th configuration.
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}
