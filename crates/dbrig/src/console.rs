//! What the user sees while a measurement runs and when it ends: the observer that prints the
//! executor's progress (a bar on a terminal, one line per trial otherwise; sysbench's interval
//! lines for a single OLTP run; the power test's live chart; the plan's HTML page after every
//! trial, and its live section after every query of a power trial), the dry-run listing, and the exit code of a finished run. Every measuring command
//! goes through [`measure`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use dbrig_core::IntervalSample;
use dbrig_core::results::PowerReport;
use dbrig_exec::{ExecOptions, Observer, Outcome, Plan, TrialRef};
use dbrig_store::{RunId, RunStatus, Store};
use dbrig_workload::progress::{Progress, ProgressEvent, TableRows};
use dbrig_workload::runner::Stopper;

use crate::args::StoreArgs;
use crate::out::outln;
use crate::results_cmd::{is_server_url, open_server};

/// Exit code of a run stopped by Ctrl-C / SIGTERM (what shells use for SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long a second Ctrl-C leaves the run to save what it measured before the process
/// exits whatever it is doing.
const LEAVE_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Ctrl-C and SIGTERM raise the stopper: the run stops its clients (in-flight statements get
/// half a second), saves what was measured, reports and exits 130. A second one raises its
/// `stop_now` level — nothing more is waited for, what was measured is saved — and the
/// process exits 130 within [`LEAVE_WITHIN`] whatever it is doing (a managed server this run
/// started stops with it: its parent-death signal). The signals are awaited on a thread of
/// their own with its own small runtime: the run's workers may all be busy (clients, a load's
/// loaders), and a signal must not wait for one of them to be free.
pub fn install_signal_handlers(stopper: Arc<Stopper>) {
    let spawned = std::thread::Builder::new()
        .name("dbrig-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use tokio::signal::unix::{SignalKind, signal};
                // Registered once, for both signals: one that comes while the first is being
                // handled is not lost.
                let (Ok(mut int), Ok(mut term)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) else {
                    eprintln!("dbrig: warning: Ctrl-C will not stop this run: no signal handler");
                    return;
                };
                let mut next = async || {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    }
                };
                next().await;
                eprintln!(
                    "dbrig: interrupted: stopping the clients and saving what was measured (Ctrl-C again to leave at once)"
                );
                stopper.stop();
                next().await;
                eprintln!("dbrig: interrupted again: leaving now, saving what was measured");
                stopper.stop_now();
            });
            std::thread::sleep(LEAVE_WITHIN);
            std::process::exit(EXIT_INTERRUPTED.into());
        });
    if let Err(e) = spawned {
        eprintln!("dbrig: warning: Ctrl-C will not stop this run: {e}");
    }
}

/// A results database path that names a directory, said as such (SQLite would only say it is
/// "unable to open database file").
fn refuse_directory(path: &Path) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!(
            "the results database {} is a directory: name a file, e.g. --results {}",
            path.display(),
            path.join("results.db").display()
        );
    }
    Ok(())
}

/// Make sure `dir` exists (made when `create`) and takes new files, before anything is
/// measured: `what` (the HTML page, a chart) is written there while or after the run, and a
/// run measured for hours must not end on "cannot write".
pub fn check_writable_folder(dir: &Path, what: &str, option: &str, create: bool) -> Result<()> {
    let refused = |e: &dyn std::fmt::Display| {
        anyhow::anyhow!(
            "cannot write {what} in {} ({e}): choose another {option}; checked before anything was measured",
            dir.display()
        )
    };
    if create {
        std::fs::create_dir_all(dir).map_err(|e| refused(&e))?;
    } else if !dir.is_dir() {
        return Err(refused(&"no such folder"));
    }
    let probe = dir.join(format!(".dbrig-write-check-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| refused(&e))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Open (or create) the results database the store arguments name.
pub fn open_store(store: &StoreArgs) -> Result<Store> {
    if let Some(url) = store
        .results
        .as_ref()
        .filter(|r| is_server_url(r.as_os_str()))
    {
        return open_server(&url.to_string_lossy());
    }
    let path = store.results_path();
    refuse_directory(&path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Ok(Store::open(&path)?)
}

/// Open an existing results database (for reading: a missing file is an error).
pub fn open_existing_store(store: &StoreArgs) -> Result<Store> {
    store.provenance.refuse_unless_measuring()?;
    if let Some(url) = store
        .results
        .as_ref()
        .filter(|r| is_server_url(r.as_os_str()))
    {
        return open_server(&url.to_string_lossy());
    }
    let path = store.results_path();
    refuse_directory(&path)?;
    if !path.exists() {
        anyhow::bail!(
            "no results database at {}: run a benchmark first, or pass --results PATH",
            path.display()
        );
    }
    Store::open(&path).with_context(|| format!("opening {}", path.display()))
}

/// Where a plan run's self-contained HTML page goes.
pub fn html_path(out: &Path, run: RunId) -> PathBuf {
    out.join(format!("run-{}.html", run.0))
}

/// Run `plan` through the one executor, recording into the results database, with `observer`
/// printing as it goes.
pub async fn measure(
    plan: Plan,
    store_args: &StoreArgs,
    argv: &[String],
    resume: bool,
    observer: &ConsoleObserver,
) -> Result<Outcome> {
    let store = open_store(store_args)?;
    let interrupt = Stopper::new();
    install_signal_handlers(Arc::clone(&interrupt));
    let outcome = dbrig_exec::execute(
        plan,
        store,
        ExecOptions {
            state_dir: store_args.out.clone(),
            command_line: dbrig_exec::redacted_command_line(argv),
            resume,
            interrupt,
            observer,
            provenance: store_args.provenance.provenance(),
        },
    )
    .await?;
    Ok(outcome)
}

/// The exit code of a finished run: 0 done, 130 interrupted, 1 failed (said on stderr).
pub fn exit_code(outcome: &Outcome) -> ExitCode {
    if let Some(moved) = &outcome.results_moved {
        eprintln!("dbrig: error: {moved}");
        return ExitCode::FAILURE;
    }
    match outcome.status {
        RunStatus::Done => ExitCode::SUCCESS,
        RunStatus::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        _ => {
            eprintln!(
                "dbrig: error: {}",
                outcome.error.as_deref().unwrap_or("the run failed")
            );
            ExitCode::FAILURE
        }
    }
}

/// The plan bar's clock: the bar counts seconds of the plan's known durations (each timed
/// trial's warm-up plus run time), so it moves inside a trial and its ETA is the plan's own.
/// A ticker thread advances it every [`TICK`] within the running trial's expected length.
struct PlanClock {
    /// Expected seconds of each trial of the schedule (0 for a benchmark run of unknown
    /// length: it moves the bar when it ends).
    expected: Vec<f64>,
    /// Seconds of the trials before the running one, and when the running one started.
    state: std::sync::Mutex<(f64, usize, Instant)>,
    done: std::sync::atomic::AtomicBool,
}

/// How often the plan bar moves.
const TICK: std::time::Duration = std::time::Duration::from_millis(250);

impl PlanClock {
    fn position(&self) -> f64 {
        let (base, index, started) = *self.state.lock().unwrap_or_else(|e| e.into_inner());
        let expected = self.expected.get(index).copied().unwrap_or(0.0);
        base + started.elapsed().as_secs_f64().min(expected)
    }

    /// The running trial is `index`: the bar stands at the sum of the trials before it.
    fn start(&self, index: usize) {
        let base: f64 = self.expected.iter().take(index).sum();
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = (base, index, Instant::now());
    }
}

/// How often a load's rows get a plain line on a pipe.
const LOAD_LINE_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// A load's rows in one line: rows so far of those planned, percent, rate and time left.
pub fn load_line(tables: &[TableRows], elapsed: std::time::Duration) -> String {
    let loaded: u64 = tables.iter().map(|t| t.loaded).sum();
    let planned: u64 = tables.iter().map(|t| t.planned).sum::<u64>().max(loaded);
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        loaded as f64 / secs
    } else {
        0.0
    };
    let pct = if planned > 0 {
        loaded as f64 * 100.0 / planned as f64
    } else {
        100.0
    };
    let left = if rate > 0.0 {
        format!(", ~{:.0} s left", (planned - loaded) as f64 / rate)
    } else {
        String::new()
    };
    format!("loading rows: {loaded} of {planned} ({pct:.0} %), {rate:.0} rows/s{left}")
}

/// The steps of a long setup (`prepare`, `tpch load`) as they happen: on a terminal a spinner
/// with the elapsed time and the last step, each step's line printed through it (no dead bar
/// lines left in the scrollback), and while rows load a bar per table (rows, percent, rate,
/// time left), cleared when the loaders are done; on a pipe, plain lines (the rows every
/// [`LOAD_LINE_EVERY`]).
pub struct Steps {
    bar: Option<indicatif::ProgressBar>,
    /// Holds the spinner and the tables' bars (terminal only).
    multi: Option<indicatif::MultiProgress>,
    /// Each table's bar and when its first rows showed up (its rate counts from then: with one
    /// loader a table waits for the one before it).
    tables: std::sync::Mutex<Vec<(String, indicatif::ProgressBar, Option<Instant>)>>,
    /// When rows started loading and when the last plain line about them was printed.
    rows_clock: std::sync::Mutex<Option<(Instant, Instant)>>,
}

impl Steps {
    pub fn new(what: &str) -> Steps {
        let multi = std::io::stderr()
            .is_terminal()
            .then(indicatif::MultiProgress::new);
        let bar = multi.as_ref().map(|m| {
            let b = m.add(indicatif::ProgressBar::new_spinner());
            b.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{spinner}} {what} [{{elapsed_precise}}] {{msg}}"
                ))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        Steps {
            bar,
            multi,
            tables: Default::default(),
            rows_clock: Default::default(),
        }
    }

    /// Move a table's bar (made when the table is first heard of) to `t`'s rows, with the
    /// table's own rate and time left.
    fn show_table(&self, multi: &indicatif::MultiProgress, t: &TableRows, now: Instant) {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        let i = match tables.iter().position(|(name, _, _)| *name == t.table) {
            Some(i) => i,
            None => {
                let b = multi.add(indicatif::ProgressBar::new(t.planned.max(1)));
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "  {prefix:<10} {bar:30} {human_pos}/{human_len} rows {percent:>3}% {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b.set_prefix(t.table.clone());
                tables.push((t.table.clone(), b, None));
                tables.len() - 1
            }
        };
        let (_, b, first) = &mut tables[i];
        if t.loaded > 0 {
            first.get_or_insert(now);
        }
        // An estimate (TPC-H's lineitem) may be passed: the bar grows.
        if t.loaded > t.planned {
            b.set_length(t.loaded);
        }
        // A table loaded in full keeps the rate it finished at.
        let done = t.loaded >= t.planned && b.position() >= t.planned;
        b.set_position(t.loaded);
        let secs = first.map_or(0.0, |f| now.duration_since(f).as_secs_f64());
        if secs > 0.0 && !done {
            let rate = t.loaded as f64 / secs;
            let left = t.planned.saturating_sub(t.loaded) as f64 / rate;
            b.set_message(format!("{rate:.0} rows/s ~{left:.0} s left"));
        }
    }
}

impl Progress for Steps {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Note(line) => self.say(line),
            ProgressEvent::LoadRows { tables, finished } => self.rows(tables, finished),
            _ => {}
        }
    }
}

impl Steps {
    /// One step's line.
    fn say(&self, msg: &str) {
        match &self.bar {
            Some(b) => {
                b.println(format!("dbrig: {msg}"));
                b.set_message(msg.to_owned());
            }
            None => eprintln!("dbrig: {msg}"),
        }
    }

    fn rows(&self, tables: &[TableRows], finished: bool) {
        let now = Instant::now();
        let (started, last_line) = {
            let mut clock = self.rows_clock.lock().unwrap_or_else(|e| e.into_inner());
            let c = clock.get_or_insert((now, now));
            let was = *c;
            if !finished && now.duration_since(c.1) >= LOAD_LINE_EVERY {
                c.1 = now;
            }
            was
        };
        match &self.multi {
            Some(multi) => {
                for t in tables {
                    self.show_table(multi, t, now);
                }
                if finished {
                    for (_, b, _) in self
                        .tables
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .drain(..)
                    {
                        b.finish_and_clear();
                    }
                }
            }
            // The library says the finished count itself.
            None if !finished && now.duration_since(last_line) >= LOAD_LINE_EVERY => {
                eprintln!("dbrig: {}", load_line(tables, now.duration_since(started)));
            }
            None => {}
        }
    }
}

impl Drop for Steps {
    fn drop(&mut self) {
        for (_, b, _) in self
            .tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            b.finish_and_clear();
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Prints what the executor reports.
pub struct ConsoleObserver {
    bar: Option<indicatif::ProgressBar>,
    clock: Option<Arc<PlanClock>>,
    started: Instant,
    /// A single OLTP run: sysbench's interval lines, at this percentile.
    interval_percentile: Option<f64>,
    /// The interval lines go to stderr (stdout is JSON).
    intervals_to_stderr: bool,
    /// Redraw the power test's bar chart here after every query.
    power_chart: Option<PathBuf>,
    /// An interval line was printed (the final report then starts after a blank line, as
    /// sysbench's does).
    printed_intervals: std::sync::atomic::AtomicBool,
    /// A plan: its HTML page, rewritten after every trial, lives in this folder; and each
    /// trial gets a line.
    plan_out: Option<PathBuf>,
    /// The plan's run, once recorded (names the live TPC-H chart).
    run: std::sync::Mutex<Option<RunId>>,
    /// The plan's HTML page of the trials stored so far, rendered once per trial: after each
    /// query of a power trial only the live section is rendered and put into it.
    page: std::sync::Mutex<Option<String>>,
    /// A prepare step's rows: when they started loading, when the last line about them was
    /// printed.
    rows_clock: std::sync::Mutex<Option<(Instant, Instant)>>,
    /// A load command (`prepare`, `tpch load`): its steps and a bar per table while rows
    /// load, instead of plain lines.
    steps: Option<Steps>,
}

/// A plan's live chart of the TPC-H power trial running now, redrawn after every query as the
/// DBT-3 launcher redrew its chart (the HTML page's live section too).
pub fn live_tpch_chart_path(out: &Path, run: RunId) -> PathBuf {
    out.join(format!("run-{}-tpch-live.svg", run.0))
}

impl ConsoleObserver {
    /// For a plan file: a progress bar on a terminal (one line per trial otherwise) and the
    /// HTML page kept up to date in `out`. The bar counts the plan's known seconds and ticks
    /// steadily, so it moves inside a trial and its ETA is based on the plan's durations.
    pub fn plan(plan: &Plan, out: &Path) -> Self {
        let expected: Vec<f64> = plan
            .schedule
            .iter()
            .map(|(c, _)| {
                let cell = &plan.cells[*c];
                if cell.workload.is_timed() {
                    cell.run.time + cell.run.warmup
                } else {
                    0.0
                }
            })
            .collect();
        let total: f64 = expected.iter().sum();
        let mut clock = None;
        let bar = std::io::stderr().is_terminal().then(|| {
            // Tenths of a second: a smooth bar on short trials.
            let b = indicatif::ProgressBar::new((total * 10.0).ceil().max(1.0) as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} trial {prefix} [{elapsed_precise}, ~{eta} left] {bar:30} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.set_prefix(format!("0/{}", expected.len()));
            let c = Arc::new(PlanClock {
                expected: expected.clone(),
                state: std::sync::Mutex::new((0.0, 0, Instant::now())),
                done: Default::default(),
            });
            let (tick_bar, tick_clock) = (b.clone(), Arc::clone(&c));
            std::thread::spawn(move || {
                while !tick_clock.done.load(std::sync::atomic::Ordering::Relaxed) {
                    tick_bar.set_position((tick_clock.position() * 10.0) as u64);
                    std::thread::sleep(TICK);
                }
            });
            clock = Some(c);
            b
        });
        ConsoleObserver {
            bar,
            clock,
            started: Instant::now(),
            interval_percentile: None,
            intervals_to_stderr: false,
            power_chart: None,
            printed_intervals: Default::default(),
            plan_out: Some(out.to_owned()),
            run: Default::default(),
            page: Default::default(),
            rows_clock: Default::default(),
            steps: None,
        }
    }

    /// A load command's observer: the load's steps as they happen and a bar per table while
    /// rows load (see [`Steps`]), dropped when the load is over.
    pub fn loading(what: &str) -> Self {
        ConsoleObserver {
            steps: Some(Steps::new(what)),
            ..ConsoleObserver::single()
        }
    }

    /// Clear the load's bars before the report is printed.
    pub fn finish_steps(&mut self) {
        self.steps = None;
    }

    /// For a single command: progress lines on stderr.
    pub fn single() -> Self {
        ConsoleObserver {
            bar: None,
            clock: None,
            started: Instant::now(),
            interval_percentile: None,
            intervals_to_stderr: false,
            power_chart: None,
            printed_intervals: Default::default(),
            plan_out: None,
            run: Default::default(),
            page: Default::default(),
            rows_clock: Default::default(),
            steps: None,
        }
    }

    /// Print OLTP interval samples as sysbench's lines: on stdout, or on stderr when stdout
    /// carries a machine-readable document (`--format json`).
    pub fn with_intervals(mut self, percentile: f64, to_stderr: bool) -> Self {
        self.interval_percentile = Some(percentile);
        self.intervals_to_stderr = to_stderr;
        self
    }

    /// Whether interval lines were printed.
    pub fn printed_intervals(&self) -> bool {
        self.printed_intervals
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A plan's HTML page of the trials stored so far, kept for the live section. A long plan
    /// can be watched in a browser; a page that cannot be written is said and the plan goes
    /// on (the results are in the store).
    fn write_page(&self, store: &Store, run: RunId) {
        let Some(out) = &self.plan_out else {
            return;
        };
        let page = dbrig_report::html_page(store, run).and_then(|page| {
            dbrig_report::write_atomic(&html_path(out, run), page.as_bytes())?;
            Ok(page)
        });
        match page {
            Ok(page) => *self.page.lock().unwrap_or_else(|p| p.into_inner()) = Some(page),
            Err(e) => self.note(&format!("warning: could not update the HTML report: {e}")),
        }
    }

    /// Redraw this SVG bar chart after every query of a power test.
    pub fn with_power_chart(mut self, path: Option<PathBuf>) -> Self {
        self.power_chart = path;
        self
    }
}

/// What the console does with each kind of progress event.
impl ConsoleObserver {
    fn note(&self, line: &str) {
        if let Some(s) = &self.steps {
            return s.say(line);
        }
        match &self.bar {
            Some(b) => b.set_message(line.to_owned()),
            None => eprintln!("dbrig: {line}"),
        }
    }

    /// A plan's prepare step: the rows in the bar's message on a terminal, a plain line every
    /// [`LOAD_LINE_EVERY`] on a pipe (a load command: its bars).
    fn load_rows(&self, tables: &[TableRows], finished: bool) {
        if let Some(s) = &self.steps {
            return s.rows(tables, finished);
        }
        let now = Instant::now();
        let (started, last_line) = {
            let mut clock = self.rows_clock.lock().unwrap_or_else(|e| e.into_inner());
            let c = clock.get_or_insert((now, now));
            let was = *c;
            if finished {
                *clock = None;
            } else if now.duration_since(c.1) >= LOAD_LINE_EVERY {
                c.1 = now;
            }
            was
        };
        let line = load_line(tables, now.duration_since(started));
        match &self.bar {
            Some(b) if !finished => b.set_message(line),
            None if !finished && now.duration_since(last_line) >= LOAD_LINE_EVERY => {
                eprintln!("dbrig: {line}")
            }
            _ => {}
        }
    }

    fn interval(&self, sample: &IntervalSample) {
        if let Some(p) = self.interval_percentile {
            let line = dbrig_report::interval_line(sample, p);
            if self.intervals_to_stderr {
                eprintln!("{line}");
                return;
            }
            // A closed stdout ends the command when it prints its report; a live line has
            // nowhere to go meanwhile.
            let _ = outln!("{line}");
            self.printed_intervals
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn power_query(&self, trial: &TrialRef<'_>, report: &PowerReport) {
        let run = *self.run.lock().unwrap_or_else(|p| p.into_inner());
        let plan_chart = self
            .plan_out
            .as_deref()
            .zip(run)
            .map(|(out, run)| live_tpch_chart_path(out, run));
        for path in self.power_chart.iter().chain(plan_chart.as_ref()) {
            if let Err(e) = dbrig_report::tpch::live_power_chart(report)
                .and_then(|svg| dbrig_report::write_atomic(path, svg.as_bytes()))
            {
                self.note(&format!("warning: chart {}: {e}", path.display()));
            }
        }
        // The plan's page: the stored trials' page with this trial's queries so far in its
        // live section (only the section is rendered here, not the whole page).
        let page = self.page.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(out), Some(run), Some(page)) = (&self.plan_out, run, page.as_deref())
            && let Err(e) =
                dbrig_report::html::live_power_html(&trial.describe(), report).and_then(|live| {
                    let page = dbrig_report::html::with_live(page, &live);
                    dbrig_report::write_atomic(&html_path(out, run), page.as_bytes())
                })
        {
            self.note(&format!("warning: could not update the HTML report: {e}"));
        }
    }
}

impl Observer for ConsoleObserver {
    fn run_started(&self, run: RunId, resumed: bool, store: &Store) {
        *self.run.lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
        if resumed {
            eprintln!("dbrig: resuming run {}", run.0);
        }
        // The page is there from the start (and has a place for a power trial's queries).
        self.write_page(store, run);
    }

    fn trial_started(&self, trial: &TrialRef<'_>) {
        if let Some(c) = &self.clock {
            c.start(trial.index);
        }
        if let Some(b) = &self.bar {
            b.set_prefix(format!("{}/{}", trial.index + 1, trial.total));
            b.set_message(trial.describe());
        }
    }

    fn progress(&self, trial: Option<&TrialRef<'_>>, event: ProgressEvent<'_>) {
        match (event, trial) {
            (ProgressEvent::Note(line), _) => self.note(line),
            (ProgressEvent::LoadRows { tables, finished }, _) => self.load_rows(tables, finished),
            (ProgressEvent::Interval(sample), _) => self.interval(sample),
            (ProgressEvent::Query(report), Some(trial)) => self.power_query(trial, report),
            (ProgressEvent::Query(_), None)
            | (ProgressEvent::Measuring | ProgressEvent::Connected, _) => {}
        }
    }

    fn trial_recorded(&self, trial: &TrialRef<'_>, store: &Store, run: RunId, summary: &str) {
        if self.plan_out.is_none() {
            return;
        }
        match &self.bar {
            Some(b) => {
                if let Some(c) = &self.clock {
                    c.start(trial.index + 1);
                }
                b.println(format!("{}: {summary}", trial.describe()));
            }
            None => eprintln!(
                "dbrig: [{}/{} {:.0}s] {}: {summary}",
                trial.index + 1,
                trial.total,
                self.started.elapsed().as_secs_f64(),
                trial.describe()
            ),
        }
        self.write_page(store, run);
    }

    fn trial_not_run(&self, _trial: &TrialRef<'_>, store: &Store, run: RunId) {
        self.write_page(store, run);
    }

    fn schedule_done(&self) {
        if let Some(c) = &self.clock {
            c.done.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The resolved matrix and the order of trials (`--dry-run`): nothing is connected to or
/// written.
pub fn print_dry_run(plan: &Plan) -> Result<()> {
    crate::out::text(&plan.dry_run_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows, percent, rate and time left over all tables; an estimate passed counts as done.
    #[test]
    fn load_line_says_rows_percent_rate_and_time_left() {
        let t = |table: &str, loaded, planned| TableRows {
            table: table.into(),
            loaded,
            planned,
        };
        let two_s = std::time::Duration::from_secs(2);
        assert_eq!(
            load_line(&[t("sbtest1", 300, 1000), t("sbtest2", 100, 1000)], two_s),
            "loading rows: 400 of 2000 (20 %), 200 rows/s, ~8 s left"
        );
        assert_eq!(
            load_line(&[t("lineitem", 120, 100)], two_s),
            "loading rows: 120 of 120 (100 %), 60 rows/s, ~0 s left"
        );
        assert_eq!(
            load_line(&[t("a", 0, 10)], std::time::Duration::ZERO),
            "loading rows: 0 of 10 (0 %), 0 rows/s"
        );
    }
}
