//! The one progress channel: what a trial or a load tells as it goes is a [`ProgressEvent`]
//! (a line, the measured interval beginning, an OLTP interval sample, a power test's query, a
//! load's rows per table) told to one [`Progress`]. The library never prints; the binary renders
//! what it hears (a bar per table on a terminal, plain lines on a pipe, sysbench's interval
//! lines, a live chart), the executor passes it to its observer with the trial it belongs to,
//! tests collect it.
//!
//! Loader tasks are spawned (`'static`) and may run on a driver's own thread (SQLite), so they
//! cannot hold the caller's reporter: they count into a [`RowMeter`]'s shared counters, and the
//! load's own task reads the counters a few times a second while it waits for the loaders
//! ([`RowMeter::watch`]) and hands them to the reporter.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dbrig_core::IntervalSample;
use dbrig_core::results::{LoadFigures, PowerReport, TableLoad};

/// One table's rows so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRows {
    pub table: String,
    /// Rows loaded so far.
    pub loaded: u64,
    /// Rows the load will write (an estimate where a generator decides, as TPC-H's lineitem).
    pub planned: u64,
}

/// One thing a trial or a load tells as it goes.
#[derive(Debug, Clone, Copy)]
pub enum ProgressEvent<'a> {
    /// A line for the user: a step (`created table sbtest1`), or a warning (`warning: …`).
    Note(&'a str),
    /// Every client has connected and they are about to go (a client-driven run): server
    /// processes the connections brought up (PostgreSQL's backends) exist now.
    Connected,
    /// The measured interval begins: a client-driven run's warm-up is over. Without a warm-up
    /// (and for other kinds) the trial is measured from its start and this is not told.
    Measuring,
    /// A client-driven run's interval sample (`--report-interval`).
    Interval(&'a IntervalSample),
    /// A power test's report so far, after each query (for a live chart).
    Query(&'a PowerReport),
    /// Every table's rows so far, a few times a second while rows load, and a last time with
    /// `finished` when the loaders are done (the counts are then exact).
    LoadRows {
        tables: &'a [TableRows],
        finished: bool,
    },
}

/// Where a trial or a load reports: one method, one event at a time. A plain `Fn(&str)` is a
/// reporter that only hears lines.
pub trait Progress: Sync {
    fn event(&self, event: ProgressEvent<'_>);

    /// A line: `self.event(ProgressEvent::Note(line))`.
    fn note(&self, line: &str) {
        self.event(ProgressEvent::Note(line));
    }
}

impl<F: Fn(&str) + Sync> Progress for F {
    fn event(&self, event: ProgressEvent<'_>) {
        if let ProgressEvent::Note(line) = event {
            self(line)
        }
    }
}

/// Progress that goes nowhere.
pub struct Quiet;

impl Progress for Quiet {
    fn event(&self, _event: ProgressEvent<'_>) {}
}

/// How often a watched load reports its rows.
const REPORT_EVERY: Duration = Duration::from_millis(250);

/// Rows a loader counts before it adds them to its table's shared counter: loaders of one
/// table would otherwise contend on the counter for every row.
const FLUSH_ROWS: u64 = 4096;

/// The rows of a load's tables, counted by its loaders.
#[derive(Debug)]
pub struct RowMeter {
    tables: Vec<(String, u64, Arc<Tally>)>,
}

/// One table's counts: rows, bytes (as bulk text) and when its last rows arrived.
#[derive(Debug)]
pub struct Tally {
    rows: AtomicU64,
    bytes: AtomicU64,
    /// Nanoseconds from the meter's start to the last count.
    last_ns: AtomicU64,
    started: Instant,
}

impl Tally {
    fn new(started: Instant) -> Self {
        Tally {
            rows: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
            started,
        }
    }
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new(Instant::now())
    }
}

impl RowMeter {
    /// A meter for `tables`, each with the rows planned for it.
    pub fn new(tables: impl IntoIterator<Item = (String, u64)>) -> RowMeter {
        let started = Instant::now();
        RowMeter {
            tables: tables
                .into_iter()
                .map(|(t, planned)| (t, planned, Arc::new(Tally::new(started))))
                .collect(),
        }
    }

    /// The counter a loader of `table` adds to (a detached one for a table the meter does not
    /// know: counting is never an error).
    pub fn counter(&self, table: &str) -> RowCounter {
        RowCounter(
            self.tables
                .iter()
                .find(|(t, _, _)| t == table)
                .map(|(_, _, c)| Arc::clone(c))
                .unwrap_or_default(),
        )
    }

    pub fn snapshot(&self) -> Vec<TableRows> {
        self.tables
            .iter()
            .map(|(t, planned, c)| TableRows {
                table: t.clone(),
                loaded: c.rows.load(Ordering::Relaxed),
                planned: *planned,
            })
            .collect()
    }

    /// Rows, bytes and seconds per table and in total, from the meter's start to each table's
    /// last row and to the last row of all (call it when the loaders are done: work they do
    /// after their rows, such as an index, is not the load's). Tables without a row are left
    /// out.
    pub fn figures(&self) -> LoadFigures {
        let tables: Vec<TableLoad> = self
            .tables
            .iter()
            .filter(|(_, _, c)| c.rows.load(Ordering::Relaxed) > 0)
            .map(|(t, _, c)| TableLoad {
                table: t.clone(),
                rows: c.rows.load(Ordering::Relaxed),
                bytes: c.bytes.load(Ordering::Relaxed),
                seconds: c.last_ns.load(Ordering::Relaxed) as f64 / 1e9,
            })
            .collect();
        LoadFigures {
            rows: tables.iter().map(|t| t.rows).sum(),
            bytes: tables.iter().map(|t| t.bytes).sum(),
            seconds: tables.iter().map(|t| t.seconds).fold(0.0, f64::max),
            tables,
        }
    }

    /// Await `work` (the loaders), reporting the rows to `progress` every [`REPORT_EVERY`]
    /// meanwhile and once more, finished, when it is done.
    pub async fn watch<T>(&self, progress: &dyn Progress, work: impl Future<Output = T>) -> T {
        tokio::pin!(work);
        let mut tick = tokio::time::interval(REPORT_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let out = loop {
            tokio::select! {
                out = &mut work => break out,
                _ = tick.tick() => progress.event(ProgressEvent::LoadRows {
                    tables: &self.snapshot(),
                    finished: false,
                }),
            }
        };
        progress.event(ProgressEvent::LoadRows {
            tables: &self.snapshot(),
            finished: true,
        });
        out
    }
}

/// A loader's handle on its table's row counter.
#[derive(Debug, Clone, Default)]
pub struct RowCounter(Arc<Tally>);

impl RowCounter {
    pub fn add(&self, rows: u64) {
        self.0.rows.fetch_add(rows, Ordering::Relaxed);
        let ns = self.0.started.elapsed().as_nanos() as u64;
        self.0.last_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Bytes of bulk text loaded (counted apart from rows: a text chunk knows its length).
    pub fn add_bytes(&self, bytes: u64) {
        self.0.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// `rows`, counted as they are taken (in batches of [`FLUSH_ROWS`], the rest when the
    /// iterator is dropped).
    pub fn count<I: Iterator>(self, rows: I) -> Counted<I> {
        Counted {
            rows,
            counter: self,
            pending: 0,
            bytes: 0,
        }
    }
}

/// An iterator that counts the items taken from it into a [`RowCounter`].
pub struct Counted<I> {
    rows: I,
    counter: RowCounter,
    pending: u64,
    bytes: u64,
}

impl<I: Iterator<Item: BulkBytes>> Iterator for Counted<I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        let item = self.rows.next();
        if let Some(row) = &item {
            self.bytes += row.bulk_bytes();
            self.pending += 1;
            if self.pending >= FLUSH_ROWS {
                self.counter.add_bytes(std::mem::take(&mut self.bytes));
                self.counter.add(std::mem::take(&mut self.pending));
            }
        }
        item
    }
}

impl<I> Drop for Counted<I> {
    fn drop(&mut self) {
        self.counter.add_bytes(self.bytes);
        self.counter.add(self.pending);
    }
}

/// The length of an item as bulk text, for MB/s: rows of values count as
/// `dbrig_driver::encode_bulk_row` would write them (escapes aside); anything else counts 0.
pub trait BulkBytes {
    fn bulk_bytes(&self) -> u64;
}

impl BulkBytes for Vec<dbrig_core::Value> {
    fn bulk_bytes(&self) -> u64 {
        use dbrig_core::Value;
        let fields: usize = self
            .iter()
            .map(|v| match v {
                Value::Null => 2,
                Value::Int(i) => {
                    (i.unsigned_abs().checked_ilog10().unwrap_or(0) + 1) as usize
                        + usize::from(*i < 0)
                }
                Value::Float(_) => 8,
                Value::Text(s) => s.len(),
            })
            .sum();
        (fields + self.len().max(1)) as u64
    }
}

macro_rules! no_bulk_bytes {
    ($($t:ty),*) => {$(impl BulkBytes for $t { fn bulk_bytes(&self) -> u64 { 0 } })*};
}
no_bulk_bytes!(i32, u32, i64, u64, usize);

/// What a load reported, for tests: its lines and its row reports.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct Heard {
    pub lines: std::sync::Mutex<Vec<String>>,
    pub rows: std::sync::Mutex<Vec<(Vec<TableRows>, bool)>>,
}

#[cfg(test)]
impl Progress for Heard {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Note(line) => self.lines.lock().unwrap().push(line.to_owned()),
            ProgressEvent::LoadRows { tables, finished } => {
                self.rows.lock().unwrap().push((tables.to_vec(), finished))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_rows_reach_their_table() {
        let meter = RowMeter::new([("a".to_owned(), 10_000), ("b".to_owned(), 5)]);
        let taken = meter.counter("a").count(0..10_000).count();
        assert_eq!(taken, 10_000);
        meter.counter("b").count(0..3).for_each(drop);
        meter.counter("unknown").add(7);
        assert_eq!(
            meter.snapshot(),
            vec![
                TableRows {
                    table: "a".into(),
                    loaded: 10_000,
                    planned: 10_000
                },
                TableRows {
                    table: "b".into(),
                    loaded: 3,
                    planned: 5
                },
            ]
        );
    }

    /// The last report is the finished one, with the final counts.
    #[tokio::test]
    async fn a_watched_load_ends_with_its_final_counts() {
        let meter = RowMeter::new([("t".to_owned(), 2)]);
        let counter = meter.counter("t");
        let seen = Heard::default();
        let out = meter
            .watch(&seen, async move {
                counter.add(2);
                42
            })
            .await;
        assert_eq!(out, 42);
        let seen = seen.rows.into_inner().unwrap();
        let (last, finished) = seen.last().unwrap();
        assert!(finished);
        assert_eq!(last[0].loaded, 2);
        assert_eq!(seen.iter().filter(|(_, f)| *f).count(), 1);
    }
}
