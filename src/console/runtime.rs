//! [`Console`]: the runtime around the [`App`]. It owns the one event channel that merges
//! terminal input, worker reports and the inbox watcher, carries out the [`Effect`]s that
//! [`update`] returns (reads on reader threads, long work on worker threads: nothing on
//! the UI thread touches a file), debounces the
//! watcher, and draws. [`event_loop`] is the loop the real terminal runs; tests call
//! [`Console::step`] and [`Console::settle`] directly.
//!
//! With several products ([`Console::products`]) it also reads their summaries every
//! [`SUMMARY_EVERY`], and switching product cancels the shown one's work and bumps an
//! epoch: a report of an earlier product's work ([`Incoming::Product`]) is dropped.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyEventKind};
use ratatui::Terminal;
use ratatui::backend::Backend;

use super::app::{App, Dialog, View};
use super::msg::{Effect, Intent, Msg, Report};
use super::products::{self, ProductEntry, ProductsState};
use super::theme::Theme;
use super::{keymap, load, summary, update::update, view, workers};
use crate::config::Config;
use crate::error::{Error, Result};

/// Whether a confirmation that lands, relands or restores is open and shown.
fn guarded(app: &App) -> bool {
    !app.help
        && matches!(
            app.dialog,
            Some(
                Dialog::ConfirmRun { .. }
                    | Dialog::ConfirmShrink { .. }
                    | Dialog::ConfirmReland { .. }
                    | Dialog::ConfirmRestore { .. }
            )
        )
}

/// How often the loop wakes with nothing to do while work is running (spinners).
pub const TICK: Duration = Duration::from_millis(250);
/// How long the watcher's events are gathered before the inbox is read again.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// How often the Products screen's summaries are read again (on every screen: the
/// header bar warns of any product's refusals).
pub const SUMMARY_EVERY: Duration = Duration::from_secs(5);

/// One thing that arrived on the console's channel.
#[derive(Debug)]
pub enum Incoming {
    Terminal(TermEvent),
    /// A terminal event and when it was read (the real terminal's): a key read before a
    /// confirmation was drawn never answers it.
    Read(TermEvent, Instant),
    Worker(Report),
    /// A report of work for the product shown at `epoch`; dropped once another is shown.
    Product {
        epoch: u64,
        report: Report,
    },
    InboxChanged,
}

/// The App and everything that runs around it.
pub struct Console {
    pub app: App,
    config: Arc<Config>,
    tx: Sender<Incoming>,
    rx: Receiver<Incoming>,
    cancels: HashMap<u64, Arc<AtomicBool>>,
    /// Reads in flight, by lane, with the newest one asked for meanwhile.
    lanes: HashMap<Lane, Option<Effect>>,
    refresh_due: Option<Instant>,
    watcher: Option<crate::inbox::Watcher>,
    /// Whether the shown product's inbox is to be watched (the terminal console's is).
    watching: bool,
    /// Counts the products shown: a report of an earlier one is no longer wanted.
    epoch: u64,
    /// When the Products summaries are read again (only with several products).
    summary_due: Option<Instant>,
    /// When the open confirmation (one that lands, relands or restores) was first drawn;
    /// keys read before it are type-ahead and dropped.
    armed: Cell<Option<Instant>>,
}

impl Console {
    /// A console over `config` with `theme`, the state on disk already read.
    pub fn new(config: Config, theme: Theme, warnings: Vec<String>) -> Console {
        let mut console = Console::bare(Arc::new(config), theme);
        console.step(Intent::Reload);
        if !warnings.is_empty() {
            console.app.warn(warnings.join("; "));
        }
        console
    }

    /// A console over several products, on the Products screen, their summaries asked
    /// for. `Enter` on a row shows that product's console as [`Console::new`] would.
    pub fn products(entries: Vec<ProductEntry>, theme: Theme, warnings: Vec<String>) -> Console {
        let first = entries.iter().find_map(|e| e.config.as_ref().ok().cloned());
        let mut console = Console::bare(first.unwrap_or_else(products::stand_in), theme);
        console.app.products = Some(ProductsState::new(entries));
        console.app.view = View::Products;
        console.summary_due = Some(Instant::now() + SUMMARY_EVERY);
        console.step(Intent::Reload);
        if !warnings.is_empty() {
            console.app.warn(warnings.join("; "));
        }
        console
    }

    fn bare(config: Arc<Config>, theme: Theme) -> Console {
        let (tx, rx) = mpsc::channel();
        Console {
            app: App::new(config.clone(), theme),
            config,
            tx,
            rx,
            cancels: HashMap::new(),
            lanes: HashMap::new(),
            refresh_due: None,
            watcher: None,
            watching: false,
            epoch: 0,
            summary_due: None,
            armed: Cell::new(None),
        }
    }

    /// Watches the shown product's inbox (with several products, each one's while it is
    /// shown): a file renamed into it shows within a debounce.
    pub fn watch(&mut self) -> Result<()> {
        self.watching = true;
        if self.app.view == View::Products {
            return Ok(());
        }
        self.watch_inbox()
    }

    fn watch_inbox(&mut self) -> Result<()> {
        let (unit_tx, unit_rx) = mpsc::channel();
        self.watcher = Some(crate::inbox::watch(&self.config.inbox, unit_tx)?);
        let tx = self.tx.clone();
        std::thread::Builder::new()
            .name("wharf-watch".into())
            .spawn(move || {
                for () in unit_rx {
                    if tx.send(Incoming::InboxChanged).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| {
                Error::io(
                    &self.config.inbox,
                    "watch the inbox",
                    "check thread limits",
                    e,
                )
            })?;
        Ok(())
    }

    /// Where other threads send events.
    pub fn sender(&self) -> Sender<Incoming> {
        self.tx.clone()
    }

    /// Workers and reads still running.
    pub fn busy(&self) -> usize {
        self.cancels.len() + self.lanes.len()
    }

    /// Applies `msg` and everything it leads to, spawning workers for long work.
    pub fn step(&mut self, msg: impl Into<Msg>) {
        let mut queue = VecDeque::from([msg.into()]);
        while let Some(msg) = queue.pop_front() {
            if let Msg::Report(report) = &msg
                && let Some(id) = report.final_id()
            {
                self.cancels.remove(&id);
            }
            if let Msg::Report(report) = &msg
                && let Some(lane) = Lane::of(report)
                && let Some(Some(next)) = self.lanes.remove(&lane)
                && let Some(report) = self.read(next)
            {
                queue.push_back(Msg::Report(report));
            }
            for effect in update(&mut self.app, msg) {
                if let Some(report) = self.execute(effect) {
                    queue.push_back(Msg::Report(report));
                }
            }
        }
    }

    /// Handles one event; returns whether it was terminal input.
    pub fn handle(&mut self, event: Incoming) -> bool {
        match event {
            Incoming::Terminal(TermEvent::Key(key)) => self.key(key, Instant::now()),
            Incoming::Read(TermEvent::Key(key), at) => self.key(key, at),
            Incoming::Read(event, _) => self.handle(Incoming::Terminal(event)),
            Incoming::Terminal(TermEvent::Resize(width, height)) => {
                self.step(Msg::Resize(width, height));
                true
            }
            Incoming::Terminal(_) => false,
            Incoming::Worker(report) => {
                self.step(report);
                false
            }
            Incoming::Product { epoch, report } => {
                if epoch == self.epoch {
                    self.step(report);
                }
                false
            }
            Incoming::InboxChanged => {
                self.refresh_due
                    .get_or_insert_with(|| Instant::now() + DEBOUNCE);
                false
            }
        }
    }

    /// A key read at `at`. While a confirmation that writes is open, a key read before it
    /// was drawn is dropped: no word typed ahead (`/rrrryyyy`) can land anything.
    fn key(&mut self, key: crossterm::event::KeyEvent, at: Instant) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if guarded(&self.app) && self.armed.get().is_none_or(|drawn| at < drawn) {
            return true;
        }
        if let Some(intent) = keymap::intent_for(&self.app, key) {
            self.step(intent);
        }
        if !guarded(&self.app) {
            self.armed.set(None);
        }
        true
    }

    /// Waits up to `timeout` for events, handles every one that is waiting, and reloads
    /// the inbox once its debounce is due. Returns (something changed, input was handled).
    pub fn pump(&mut self, timeout: Duration) -> (bool, bool) {
        let wait = match self.refresh_due {
            Some(due) => timeout.min(due.saturating_duration_since(Instant::now())),
            None => timeout,
        };
        let (mut changed, mut input) = (false, false);
        match self.rx.recv_timeout(wait) {
            Ok(event) => {
                input |= self.handle(event);
                changed = true;
                let started = Instant::now();
                while started.elapsed() < Duration::from_millis(10) {
                    let Ok(event) = self.rx.try_recv() else { break };
                    input |= self.handle(event);
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if self.busy() > 0 || self.app.task.is_some() {
                    self.step(Msg::Tick);
                    changed = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {}
        }
        if self.refresh_due.is_some_and(|due| due <= Instant::now()) {
            self.refresh_due = None;
            self.step(Msg::InboxChanged);
            changed = true;
        }
        if self.summary_due.is_some_and(|due| due <= Instant::now()) {
            self.summary_due = Some(Instant::now() + SUMMARY_EVERY);
            self.step(Msg::Summarize);
            changed = true;
        }
        (changed, input)
    }

    /// Handles events until no worker runs and no reload is due, or `limit` passes.
    /// Returns whether it settled.
    pub fn settle(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while self.busy() > 0 || self.refresh_due.is_some() {
            if Instant::now() >= deadline {
                return false;
            }
            self.pump(Duration::from_millis(20));
        }
        true
    }

    /// Draws the App.
    pub fn draw<B: Backend>(&self, terminal: &mut Terminal<B>) -> Result<()> {
        terminal
            .draw(|frame| view::view(&self.app, frame))
            .map(|_| match guarded(&self.app) {
                true if self.armed.get().is_none() => self.armed.set(Some(Instant::now())),
                true => {}
                false => self.armed.set(None),
            })
            .map_err(|e| {
                Error::io(
                    std::path::Path::new("<terminal>"),
                    "draw",
                    "check the terminal",
                    std::io::Error::other(e.to_string()),
                )
            })
    }

    /// Carries out one effect: quick reads return their report, long work is spawned.
    fn execute(&mut self, effect: Effect) -> Option<Report> {
        let config = self.config.clone();
        match effect {
            effect @ (Effect::Reload
            | Effect::Summarize
            | Effect::Rejects { .. }
            | Effect::Window { .. }
            | Effect::RankedWindow { .. }) => self.read(effect),
            Effect::Cancel { id } => {
                if let Some(flag) = self.cancels.get(&id) {
                    flag.store(true, Ordering::Relaxed);
                }
                None
            }
            Effect::Enter { product } => self.enter(product),
            Effect::Leave => {
                self.forget_product();
                None
            }
            Effect::Hash { id, files } => self.spawn(
                id,
                move |cancel, report| workers::hash(id, &config.set_marker, files, cancel, report),
                move |_| Report::HashingDone { id },
            ),
            Effect::Plan {
                id,
                path,
                rank,
                reland,
            } => {
                let failed = path.clone();
                self.spawn(
                    id,
                    move |cancel, report| {
                        workers::plan(&config, (id, rank, reland), &path, cancel, report)
                    },
                    move |e| Report::Planned {
                        id,
                        path: failed,
                        result: Err(e),
                        ranks_next: false,
                    },
                )
            }
            Effect::Land {
                id,
                path,
                stamp,
                allow,
            } => self.spawn(
                id,
                move |cancel, report| {
                    workers::land(&config, id, (&path, stamp), allow, cancel, report)
                },
                move |e| Report::Landed { id, result: Err(e) },
            ),
            Effect::Restore { id, date } => self.spawn(
                id,
                move |_, _| workers::restore(&config, id, date),
                move |e| Report::Restored { id, result: Err(e) },
            ),
            Effect::Index { id, path, ranked } => self.spawn(
                id,
                move |cancel, report| workers::index(&config, id, (&path, ranked), cancel, report),
                move |e| Report::Indexed { id, result: Err(e) },
            ),
            Effect::Rank { id, path } => self.spawn(
                id,
                move |cancel, report| workers::rank(&config, id, &path, cancel, report),
                move |e| Report::Ranked { id, result: Err(e) },
            ),
            Effect::PublishedHours { id, dates } => self.spawn(
                id,
                move |cancel, _| workers::published_hours(&config, id, &dates, cancel),
                move |e| Report::PublishedHours { id, result: Err(e) },
            ),
            Effect::Changes { id, path, reland } => self.spawn(
                id,
                move |cancel, report| {
                    workers::changes(&config, (id, reland), &path, cancel, report)
                },
                move |e| Report::Changed { id, result: Err(e) },
            ),
            Effect::HistoryDiff { id, run } => self.spawn(
                id,
                move |cancel, report| workers::history_diff(&config, id, &run, cancel, report),
                move |e| Report::Changed { id, result: Err(e) },
            ),
            Effect::RawLine {
                id,
                path,
                file,
                line,
                sha256,
            } => self.spawn(
                id,
                move |cancel, _| {
                    let at = (file.as_deref(), line);
                    workers::raw_line(&config, id, &path, at, &sha256, cancel)
                },
                move |e| Report::RawLine { id, result: Err(e) },
            ),
        }
    }

    /// Starts a read on a reader thread, or queues it behind the one of its lane in flight
    /// (replacing any queued before: only the newest ask is still wanted).
    fn read(&mut self, effect: Effect) -> Option<Report> {
        let lane = Lane::for_effect(&effect)?;
        if let Some(queued) = self.lanes.get_mut(&lane) {
            *queued = Some(effect);
            return None;
        }
        self.lanes.insert(lane, None);
        let (config, tx, epoch) = (self.config.clone(), self.tx.clone(), self.epoch);
        let failed = failed_read(&effect);
        let products = matches!(effect, Effect::Summarize).then(|| self.product_configs());
        let spawned = std::thread::Builder::new()
            .name("wharf-read".into())
            .spawn(move || {
                let read = || match products {
                    Some(configs) => summaries(configs),
                    None => read_now(&config, effect),
                };
                let report = catch_unwind(AssertUnwindSafe(read)).unwrap_or_else(|_| {
                    failed("the read stopped unexpectedly (a bug); press R to read again")
                });
                // Every product's summaries are no one product's work.
                let _ = tx.send(match lane {
                    Lane::Products => Incoming::Worker(report),
                    _ => Incoming::Product { epoch, report },
                });
            });
        match spawned {
            Ok(_) => None,
            Err(e) => {
                self.lanes.remove(&lane);
                Some(Report::LoadFailed(format!(
                    "could not start a reader thread: {e}"
                )))
            }
        }
    }

    /// Runs `job` on a thread; its return value is its final message. A panic becomes
    /// `failed`'s message, so the App never waits for a worker that is gone.
    fn spawn<J, F>(&mut self, id: u64, job: J, failed: F) -> Option<Report>
    where
        J: FnOnce(&AtomicBool, workers::Sink) -> Report + Send + 'static,
        F: FnOnce(String) -> Report + Send + 'static,
    {
        let cancel = Arc::new(AtomicBool::new(false));
        self.cancels.insert(id, cancel.clone());
        let (tx, epoch) = (self.tx.clone(), self.epoch);
        let spawned = std::thread::Builder::new()
            .name(format!("wharf-worker-{id}"))
            .spawn(move || {
                let report = |report| tx.send(Incoming::Product { epoch, report }).is_ok();
                let last =
                    catch_unwind(AssertUnwindSafe(|| job(&cancel, &report))).unwrap_or_else(|_| {
                        failed(
                            "the worker stopped unexpectedly (a bug); nothing more was done".into(),
                        )
                    });
                report(last);
            });
        match spawned {
            Ok(_) => None,
            Err(e) => {
                self.cancels.remove(&id);
                Some(Report::LoadFailed(format!(
                    "could not start a worker thread: {e}"
                )))
            }
        }
    }
}

impl Console {
    /// Shows Products row `product`: its config from now on, its inbox watched.
    fn enter(&mut self, product: usize) -> Option<Report> {
        let rows = self.app.products.as_ref().map(|p| p.rows.as_slice());
        let row = rows.and_then(|rows| rows.get(product))?;
        let config = row.entry.config.as_ref().ok()?.clone();
        self.forget_product();
        self.config = config;
        if self.watching
            && let Err(e) = self.watch_inbox()
        {
            self.app
                .warn(format!("the inbox is not watched ({e}); R reads it again"));
        }
        None
    }

    /// Cancels and forgets the shown product's work: its workers, its reads, its watcher.
    fn forget_product(&mut self) {
        self.epoch += 1;
        for flag in self.cancels.values() {
            flag.store(true, Ordering::Relaxed);
        }
        self.cancels.clear();
        self.lanes.retain(|lane, _| *lane == Lane::Products);
        self.refresh_due = None;
        self.watcher = None;
    }

    /// The loaded products' configs, by their Products row.
    fn product_configs(&self) -> Vec<(usize, Arc<Config>)> {
        let rows = self.app.products.iter().flat_map(|p| p.rows.iter());
        rows.enumerate()
            .filter_map(|(i, row)| Some((i, row.entry.config.as_ref().ok()?.clone())))
            .collect()
    }
}

/// Every product's summary, read now (on a reader thread).
fn summaries(configs: Vec<(usize, Arc<Config>)>) -> Report {
    let read = configs
        .into_iter()
        .map(|(i, config)| (i, summary::summarize(&config)))
        .collect();
    Report::Summaries(Ok(read))
}

/// The reads that fill the views, one lane each: a lane runs one read at a time, so its
/// reports arrive in the order asked, and a key held down queues one read, not one per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Lane {
    Reload,
    Products,
    Rejects,
    Window,
    RankedWindow,
}

impl Lane {
    fn for_effect(effect: &Effect) -> Option<Lane> {
        match effect {
            Effect::Reload => Some(Lane::Reload),
            Effect::Summarize => Some(Lane::Products),
            Effect::Rejects { .. } => Some(Lane::Rejects),
            Effect::Window { .. } => Some(Lane::Window),
            Effect::RankedWindow { .. } => Some(Lane::RankedWindow),
            _ => None,
        }
    }

    /// The lane whose read `report` ends.
    fn of(report: &Report) -> Option<Lane> {
        match report {
            Report::Loaded(_) | Report::LoadFailed(_) => Some(Lane::Reload),
            Report::Summaries(_) => Some(Lane::Products),
            Report::Rejects { .. } => Some(Lane::Rejects),
            Report::Window { .. } => Some(Lane::Window),
            Report::RankedWindow { .. } => Some(Lane::RankedWindow),
            _ => None,
        }
    }
}

/// Carries out a read (on a reader thread): the state on disk, a quarantine entry's
/// rejects, a window of raw lines or of Ranked rows.
fn read_now(config: &Config, effect: Effect) -> Report {
    match effect {
        Effect::Rejects { sha256 } => Report::Rejects {
            result: load::rejects(config, &sha256).map(Box::new),
        },
        Effect::Window {
            path,
            index,
            start,
            spilled,
        } => {
            let result = super::raw::read_window(
                &index,
                start,
                super::raw::window_lines(&index),
                // §1.2's `now`: the rules as a run starting now would read them.
                &config.at_start(std::time::SystemTime::now()).schema,
                config.max_line_bytes,
            )
            .and_then(|mut lines| {
                if let Some(spilled) = &spilled {
                    super::raw::spilled_outcomes(&mut lines, spilled)?;
                }
                Ok(lines)
            })
            .map_err(|e| e.to_string());
            Report::Window {
                path,
                start,
                result,
            }
        }
        Effect::RankedWindow {
            path,
            ranked,
            rows,
            start,
        } => {
            let range = start..start + super::raw::WINDOW;
            let result = ranked
                .read_rows(config, &rows, range)
                .map_err(|e| e.to_string());
            Report::RankedWindow {
                path,
                rows,
                start,
                result,
            }
        }
        _ => Report::Loaded(Box::new(load::snapshot(config))),
    }
}

/// The report a read ends with when it panicked, so its lane is freed and the view says so.
fn failed_read(effect: &Effect) -> impl FnOnce(&str) -> Report + Send + 'static {
    let effect = effect.clone();
    move |error: &str| match effect {
        Effect::Rejects { .. } => Report::Rejects {
            result: Err(error.to_owned()),
        },
        Effect::Window { path, start, .. } => Report::Window {
            path,
            start,
            result: Err(error.to_owned()),
        },
        Effect::RankedWindow {
            path, rows, start, ..
        } => Report::RankedWindow {
            path,
            rows,
            start,
            result: Err(error.to_owned()),
        },
        Effect::Summarize => Report::Summaries(Err(error.to_owned())),
        _ => Report::LoadFailed(error.to_owned()),
    }
}

/// Draws, waits for events, handles them, draws again, until the operator quits.
/// `after_draw(app, input)` runs after each frame, `input` telling whether terminal input
/// was handled since the previous one (the latency measurement uses it).
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    console: &mut Console,
    after_draw: &mut dyn FnMut(&App, bool),
) -> Result<()> {
    let mut input = false;
    let mut dirty = true;
    loop {
        if dirty {
            console.draw(terminal)?;
            after_draw(&console.app, input);
        }
        if console.app.quit {
            return Ok(());
        }
        (dirty, input) = console.pump(TICK);
    }
}
