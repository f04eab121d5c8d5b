//! A table of text cells with a title and notes, laid out for the console (aligned columns)
//! or as Markdown: what every report's tables are made of. A console table is at most
//! [`MAX_TEXT_WIDTH`] columns wide: a wider one narrows its widest columns and wraps their
//! cells, and notes wrap, at spaces and after commas (a flag list between its flags;
//! textwrap does the wrapping), as a terminal would otherwise break every line of it.
//! comfy-table's dynamic arrangement was tried for this: it breaks `flag=on,flag=on` lists
//! inside a flag and right-aligns the wrapped lines of a right-aligned column.

use std::fmt::Write;

use textwrap::WordSeparator;
use textwrap::core::Word;

/// The widest a console table and its notes may be (a wide terminal; a narrower one still
/// reads the lines whole, as wrapped lines stay aligned).
pub const MAX_TEXT_WIDTH: usize = 160;

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
        let total = w.iter().sum::<usize>() + style.gap * w.len().saturating_sub(1);
        if total > MAX_TEXT_WIDTH {
            out.push_str(&self.wrapped_text(style, w));
            self.push_notes(&mut out);
            return out;
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
        self.push_notes(&mut out);
        out
    }

    /// The notes, each wrapped to [`MAX_TEXT_WIDTH`], its further lines indented.
    fn push_notes(&self, out: &mut String) {
        let options = wrap_options(MAX_TEXT_WIDTH).subsequent_indent("  ");
        for n in &self.notes {
            for l in textwrap::wrap(n, &options) {
                let _ = writeln!(out, "{}", l.trim_end());
            }
        }
    }

    /// Header, rule and rows of a table too wide for [`MAX_TEXT_WIDTH`] (natural widths `w`):
    /// the widest column narrowed a column at a time until the table fits (none below 12
    /// columns or its header's word), the cells of narrowed columns wrapped onto more lines;
    /// a wrapped cell reads left to right whatever its column's alignment.
    fn wrapped_text(&self, style: &TextStyle, mut w: Vec<usize>) -> String {
        const MIN: usize = 12;
        let gaps = style.gap * w.len().saturating_sub(1);
        let floor: Vec<usize> = w
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let header = self.header.get(i).map_or(0, |h| h.chars().count());
                n.min(MIN.max(header))
            })
            .collect();
        while w.iter().sum::<usize>() + gaps > MAX_TEXT_WIDTH {
            let Some(i) = (0..w.len())
                .filter(|&i| w[i] > floor[i])
                .max_by_key(|&i| w[i])
            else {
                break;
            };
            w[i] -= 1;
        }
        let gap = " ".repeat(style.gap);
        let lines = |cells: &[String]| -> Vec<String> {
            let wrapped: Vec<Vec<String>> = w
                .iter()
                .enumerate()
                .map(|(i, &width)| {
                    textwrap::wrap(cells.get(i).map_or("", |s| s), wrap_options(width))
                        .into_iter()
                        .map(|l| l.trim_end().to_owned())
                        .collect()
                })
                .collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
            (0..height)
                .map(|line| {
                    let parts: Vec<String> = w
                        .iter()
                        .enumerate()
                        .map(|(i, &width)| {
                            let text = wrapped[i].get(line).map_or("", |s| s);
                            if wrapped[i].len() > 1 {
                                let fill = width.saturating_sub(text.chars().count());
                                format!("{text}{}", " ".repeat(fill))
                            } else {
                                self.pad(i, text, width)
                            }
                        })
                        .collect();
                    parts.join(&gap).trim_end().to_owned()
                })
                .collect()
        };
        let mut out = String::new();
        for l in lines(&self.header) {
            let _ = writeln!(out, "{l}");
        }
        let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
        let _ = writeln!(out, "{}", rule.join(&gap));
        for row in &self.rows {
            for l in lines(row) {
                let _ = writeln!(out, "{l}");
            }
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

/// Wrapping at `width` columns, at spaces and after commas; a word longer than the width is
/// broken.
fn wrap_options(width: usize) -> textwrap::Options<'static> {
    textwrap::Options::new(width.max(1))
        .word_separator(WordSeparator::Custom(spaces_and_commas))
        .break_words(true)
}

/// Words end after spaces and after commas: `a=on,b=on` wraps between its flags.
fn spaces_and_commas(line: &str) -> Box<dyn Iterator<Item = Word<'_>> + '_> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = i + c.len_utf8();
        let next_starts_a_word = chars.peek().is_some_and(|(_, n)| *n != ' ');
        if (c == ',' || c == ' ') && next_starts_a_word {
            words.push(Word::from(&line[start..end]));
            start = end;
        }
    }
    if start < line.len() {
        words.push(Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
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
mod width_tests {
    use super::*;

    /// A table wider than 160 columns (a flag list, a long item name) wraps its widest cells
    /// and its notes; every line fits, nothing is lost, the numbers stay right-aligned. A
    /// table that fits keeps its layout.
    #[test]
    fn a_wide_table_wraps_to_160_columns() {
        let switch = (0..30)
            .map(|i| format!("flag_{i:02}=on"))
            .collect::<Vec<_>>()
            .join(",");
        let t = Table {
            title: "Settings".into(),
            header: vec!["setting".into(), "A".into(), "B".into()],
            align: vec![Align::Left, Align::Right, Align::Right],
            rows: vec![
                vec!["optimizer_switch".into(), switch.clone(), "mrr=on".into()],
                vec!["max_connections".into(), "151".into(), "4096".into()],
            ],
            notes: vec!["word ".repeat(60).trim_end().to_owned()],
        };
        let text = t.to_text();
        for l in text.lines() {
            assert!(
                l.chars().count() <= MAX_TEXT_WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(text.lines().count() > 6, "{text}");
        // Wrapped between flags, never inside one.
        for flag in switch.split(',') {
            assert!(text.contains(flag), "{flag} broken: {text}");
        }
        let max = text
            .lines()
            .find(|l| l.starts_with("max_connections"))
            .unwrap();
        assert!(max.ends_with("4096"), "{max}");
        assert!(
            text.lines().any(|l| l.starts_with("  word")),
            "a note goes on indented: {text}"
        );
        // A table that fits is laid out as before, to the character.
        let narrow = Table {
            rows: vec![vec!["max_connections".into(), "151".into(), "4096".into()]],
            notes: vec!["a note".into()],
            ..t
        };
        assert_eq!(
            narrow.to_text(),
            "Settings\nsetting            A     B\n---------------  ---  ----\nmax_connections  151  4096\na note\n"
        );
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
