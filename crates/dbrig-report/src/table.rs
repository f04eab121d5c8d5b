//! A table of text cells with a title and notes, laid out for the console (aligned columns)
//! or as Markdown: what every report's tables are made of.

use std::fmt::Write;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table as text cells, with a title and footnotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// How [`Table::to_text`] lays a table out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextStyle {
    /// Print the title line.
    pub title: bool,
    /// Spaces between columns.
    pub gap: usize,
    /// Columns are at least this wide (by position; missing: no minimum).
    pub min_widths: Vec<usize>,
    /// One rule as wide as the table, instead of one per column.
    pub full_rule: bool,
}

impl Default for TextStyle {
    fn default() -> Self {
        TextStyle {
            title: true,
            gap: 2,
            min_widths: Vec::new(),
            full_rule: false,
        }
    }
}

impl Table {
    fn widths(&self, min: &[usize]) -> Vec<usize> {
        let mut w: Vec<usize> = self
            .header
            .iter()
            .enumerate()
            .map(|(i, h)| h.chars().count().max(min.get(i).copied().unwrap_or(0)))
            .collect();
        for row in &self.rows {
            for (i, c) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
        }
        w
    }

    fn pad(&self, i: usize, s: &str, width: usize) -> String {
        let fill = " ".repeat(width.saturating_sub(s.chars().count()));
        match self.align.get(i).copied().unwrap_or(Align::Right) {
            Align::Left => format!("{s}{fill}"),
            Align::Right => format!("{fill}{s}"),
        }
    }

    /// Plain aligned text: two spaces between columns, a dashed rule under the header.
    pub fn to_text(&self) -> String {
        self.to_text_styled(&TextStyle::default())
    }

    /// Aligned text in another layout (the perfrun seed's, for one).
    pub fn to_text_styled(&self, style: &TextStyle) -> String {
        let w = self.widths(&style.min_widths);
        let gap = " ".repeat(style.gap);
        let mut out = String::new();
        if style.title {
            let _ = writeln!(out, "{}", self.title);
        }
        let line = |cells: &[String]| {
            let parts: Vec<String> = w
                .iter()
                .enumerate()
                .map(|(i, &width)| self.pad(i, cells.get(i).map_or("", |s| s), width))
                .collect();
            parts.join(&gap).trim_end().to_owned()
        };
        let _ = writeln!(out, "{}", line(&self.header));
        if style.full_rule {
            let total = w.iter().sum::<usize>() + style.gap * w.len().saturating_sub(1);
            let _ = writeln!(out, "{}", "-".repeat(total));
        } else {
            let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
            let _ = writeln!(out, "{}", rule.join(&gap));
        }
        for row in &self.rows {
            let _ = writeln!(out, "{}", line(row));
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        out
    }

    /// A GitHub-flavoured Markdown table under a `###` heading; notes as a list.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('*', "\\*");
        let mut out = String::new();
        let _ = writeln!(out, "### {}\n", esc(&self.title));
        let head: Vec<String> = self.header.iter().map(|h| esc(h)).collect();
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let rule: Vec<&str> = (0..self.header.len())
            .map(|i| match self.align.get(i) {
                Some(Align::Left) => ":---",
                _ => "---:",
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out);
            for n in &self.notes {
                let _ = writeln!(out, "- {}", esc(n));
            }
        }
        out
    }
}

/// Seconds as every report prints them (one rule, TPC-H tables and item tables alike):
/// milliseconds (`1.234`), one decimal from 100 s (`612.3`), and two significant digits
/// below 0.01 s (`0.0012`) so a short query is not printed as `0.000`.
pub fn seconds_text(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.1}")
    } else if s > 0.0 && s < 0.01 {
        let d = (1 - s.log10().floor() as i32).clamp(3, 9) as usize;
        format!("{s:.d$}")
    } else {
        format!("{s:.3}")
    }
}

#[cfg(test)]
mod seconds_tests {
    use super::seconds_text;

    #[test]
    fn seconds_have_one_rule() {
        assert_eq!(seconds_text(1.23456), "1.235");
        assert_eq!(seconds_text(0.05), "0.050");
        assert_eq!(seconds_text(0.0012), "0.0012");
        assert_eq!(seconds_text(612.34), "612.3");
        assert_eq!(seconds_text(0.0), "0.000");
    }
}
