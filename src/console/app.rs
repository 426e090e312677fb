//! [`App`]: the console's one model. Everything a frame shows is here; only
//! [`super::update::update`] changes it, and [`super::view::view`] only reads it.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use super::changes::{Changes, Shown};
use super::products::ProductsState;
use super::ranked::{Ranked, RankedRow, Rows};
use super::raw::{LineIndex, RawLine};
use super::theme::Theme;
use crate::config::Config;
use crate::engine::Progress;
use crate::inbox::InboxEntry;
use crate::land::RunStatus;
use crate::land::lake::Generation;
use crate::land::quarantine::{QuarantineSummary, RejectRecord};
use crate::land::restore::Restored;
use crate::land::runlog::RunRecord;
use crate::plan::Plan;

/// The three top-level views of a product (`1` `2` `3`), and the Products screen above
/// them when the console was opened with several configs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    #[default]
    Inbox,
    Quarantine,
    History,
    Products,
}

/// The focused pane of the Inbox view; `Tab` cycles them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pane {
    #[default]
    List,
    Plan,
    Raw,
    Ranked,
    Changes,
}

/// An inbox entry's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Badge {
    New,
    Landed,
    /// Landed under this name before, with other bytes.
    Changed,
    Refused,
    Ignored(&'static str),
    /// Its hash is being computed to tell landed from changed.
    Hashing,
    /// It could not be opened or read to its end: the row shows why.
    Unreadable,
}

/// A file's size and modification time: when they change, its hash is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub modified: SystemTime,
}

/// One row of the inbox list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboxRow {
    pub entry: InboxEntry,
    pub badge: Badge,
}

/// What is known of one input's plan.
#[derive(Clone, Debug, Default)]
pub enum PlanState {
    #[default]
    None,
    Running {
        id: u64,
        bytes: u64,
        total: u64,
    },
    Ready(Arc<Plan>),
    Failed(String),
}

/// The Inbox view.
#[derive(Debug, Default)]
pub struct InboxState {
    pub rows: Vec<InboxRow>,
    pub cursor: usize,
    /// The cursor follows "the oldest input not yet landed" until the operator moves it.
    pub auto_cursor: bool,
    /// The input whose plan (and raw / ranked data) the right side shows.
    pub selected: Option<PathBuf>,
    pub plan: PlanState,
    /// The plan's dates as published now, by hour: the other half of the day's picture.
    pub published_hours: Loading<PublishedHours>,
    /// Lines the Plan tab is scrolled down by.
    pub plan_scroll: u16,
    /// Known hashes by path, with the stamp they were computed at.
    pub hashes: HashMap<PathBuf, (Stamp, String)>,
    /// Why a file could not be hashed, by path, with the stamp it was read at.
    pub unreadable: HashMap<PathBuf, (Stamp, String)>,
    /// Checkpoint hash by input name, and quarantine action by hash, from the last reload.
    pub checkpoints: HashMap<String, String>,
    /// What became of each landed input's dates (§5.4), by name, from the last reload.
    pub standing: HashMap<String, crate::plan::Landed>,
    /// Every row; `rows` are those whose name passes `filter`.
    pub all: Vec<InboxRow>,
    /// The `/` filter on input names (case-insensitive).
    pub filter: String,
    /// The selected input is planned as a rerun of its landed bytes (`R`).
    pub reland: bool,
    pub quarantined: HashMap<String, String>,
    /// Input names that have a quarantine entry.
    pub quarantined_names: HashSet<String>,
    /// The hashing batch in progress.
    pub hashing: Option<u64>,
    /// The selected input's size and time when its plan was asked for.
    pub planned: Option<Stamp>,
}

impl InboxState {
    /// `rows` again from `all` and the filter, the cursor on the same input if it
    /// passes, else on the first row.
    pub fn refilter(&mut self) {
        let under = self.rows.get(self.cursor).map(|r| r.entry.path.clone());
        let needle = self.filter.to_lowercase();
        self.rows = self
            .all
            .iter()
            .filter(|r| needle.is_empty() || r.entry.name.to_lowercase().contains(&needle))
            .cloned()
            .collect();
        self.cursor = under
            .and_then(|p| self.rows.iter().position(|r| r.entry.path == p))
            .unwrap_or(0);
    }
}

/// Rows by UTC hour of some dates.
pub type PublishedHours = std::collections::BTreeMap<crate::contract::Date, [u64; 24]>;

/// Background work that fills a tab.
#[derive(Clone, Debug, Default)]
pub enum Loading<T> {
    #[default]
    None,
    Running {
        id: u64,
        bytes: u64,
        total: u64,
    },
    Ready(T),
    Failed(String),
}

/// The Raw tab.
#[derive(Debug, Default)]
pub struct RawState {
    pub path: Option<PathBuf>,
    pub index: Loading<Arc<LineIndex>>,
    /// 1-based line under the cursor.
    pub cursor: u64,
    /// 1-based number of `window[0]`.
    pub window_start: u64,
    pub window: Vec<RawLine>,
}

/// The Ranked tab.
#[derive(Debug, Default)]
pub struct RankedState {
    pub path: Option<PathBuf>,
    pub data: Loading<Arc<Ranked>>,
    /// The rows that pass the filter.
    pub rows: Arc<Rows>,
    pub cursor: usize,
    pub filter: String,
    /// Rows `window_start..` of `rows`, read back from the input around the cursor.
    pub window_start: usize,
    pub window: Vec<RankedRow>,
}

/// The Changes tab: what a landing of the selected input would change, key by key.
#[derive(Debug, Default)]
pub struct ChangesState {
    pub path: Option<PathBuf>,
    pub data: Loading<Arc<Changes>>,
    /// The items that pass the kind and key filters (indexes into `items`).
    pub rows: Vec<u32>,
    pub cursor: usize,
    pub shown: Shown,
    pub filter: String,
    /// The kind and key filter `rows` were selected with.
    pub rows_for: Option<(Shown, String)>,
}

impl ChangesState {
    /// A state for `path` with `data`, keeping the operator's filters.
    pub fn reset(&mut self, path: Option<PathBuf>, data: Loading<Arc<Changes>>) {
        *self = ChangesState {
            path,
            data,
            shown: self.shown,
            filter: std::mem::take(&mut self.filter),
            ..ChangesState::default()
        };
    }

    /// Filters the ready data again, the cursor on the first row. A key filter typed on
    /// from the last one only looks at the rows that one let through.
    pub fn refilter(&mut self) {
        if let Loading::Ready(changes) = &self.data {
            let narrower = self.rows_for.as_ref().is_some_and(|(shown, filter)| {
                *shown == self.shown && self.filter.starts_with(filter.as_str())
            });
            self.rows = if narrower {
                let rows = std::mem::take(&mut self.rows);
                changes.narrow(rows.into_iter(), self.shown, &self.filter)
            } else {
                changes.select(self.shown, &self.filter)
            };
            self.rows_for = Some((self.shown, self.filter.clone()));
        }
        self.cursor = 0;
    }

    /// The row where the next (or, backwards, this or the previous) date of the rows
    /// starts, from the cursor's (`n` / `N`).
    pub fn next_date(&self, forward: bool) -> Option<usize> {
        let Loading::Ready(changes) = &self.data else {
            return None;
        };
        let rows = &self.rows;
        let date = |i: usize| changes.items[rows[i] as usize].event_date;
        let cursor = self.cursor;
        if cursor >= rows.len() {
            return None;
        }
        let here = date(cursor);
        if forward {
            (cursor + 1..rows.len()).find(|&i| date(i) != here)
        } else {
            // The start of the date before this one's.
            let before = (0..cursor).rev().find(|&i| date(i) != here)?;
            let previous = date(before);
            Some(
                (0..=before)
                    .rev()
                    .take_while(|&i| date(i) == previous)
                    .last()?,
            )
        }
    }
}

/// The Quarantine view: entries, then one entry's rejects, then one raw line.
#[derive(Debug, Default)]
pub struct QuarantineState {
    pub entries: Vec<QuarantineSummary>,
    pub cursor: usize,
    pub filter: String,
    pub rejects: Option<Rejects>,
}

impl QuarantineState {
    /// The entries that pass the filter (indexes into `entries`).
    pub fn visible(&self) -> Vec<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| self.filter.is_empty() || e.input_name.contains(&self.filter))
            .map(|(i, _)| i)
            .collect()
    }
}

/// One quarantined input's rejects.
#[derive(Debug)]
pub struct Rejects {
    pub summary: QuarantineSummary,
    pub records: Vec<RejectRecord>,
    pub cursor: usize,
    /// The raw line asked for, masked; `None` until asked.
    pub raw: Option<Loading<String>>,
}

/// One published date with its owner and trash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRow {
    pub date: String,
    pub rows: u64,
    pub owner: Option<String>,
    pub owner_sha256: Option<String>,
    /// The owner's parts by name when it is a set (§11.3), from its checkpoint while that
    /// records this landing; empty for a single file.
    pub owner_parts: Vec<String>,
    pub published_at: Option<String>,
    /// The newest generation in the trash (what a restore brings back) and how many.
    pub previous: Option<Generation>,
    pub generations: usize,
}

/// Which list of the History view has the cursor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HistoryPane {
    #[default]
    Runs,
    Partitions,
}

/// A Delta publish root: its URL and current version (`None`: no commit yet).
pub type TableAt = (String, Option<u64>);

/// The History view.
#[derive(Debug, Default)]
pub struct HistoryState {
    /// The runs whose input name passes `filter`, newest first.
    pub runs: Vec<RunRecord>,
    /// The run log's newest runs, newest first.
    pub all_runs: Vec<RunRecord>,
    /// The `/` filter on the runs' input names (case-insensitive).
    pub filter: String,
    pub partitions: Vec<PartitionRow>,
    pub table: Option<TableAt>,
    pub pane: HistoryPane,
    pub run_cursor: usize,
    pub partition_cursor: usize,
    /// `Enter` on a run: what that landing changed, until `Esc`.
    pub diff: Option<LandingDiff>,
}

impl HistoryState {
    /// `runs` again from `all_runs` and the filter, the cursor on the first run.
    pub fn refilter(&mut self) {
        let needle = self.filter.to_lowercase();
        self.runs = self
            .all_runs
            .iter()
            .filter(|r| needle.is_empty() || r.input_name.to_lowercase().contains(&needle))
            .cloned()
            .collect();
        self.run_cursor = self.run_cursor.min(self.runs.len().saturating_sub(1));
    }
}

/// The History view's diff of one landing.
#[derive(Debug)]
pub struct LandingDiff {
    /// The landing (a reload may move the run cursor; this stays what is shown).
    pub run: RunRecord,
    /// The Changes tab's state, so it filters and moves alike.
    pub state: ChangesState,
}

/// The word an operator types to override the plan's guard: `shrink` (§5.9) or `grow`
/// (§5.10).
pub fn guard_word(plan: &Plan) -> &'static str {
    match plan.refusal {
        Some(crate::plan::Refusal::Growth { .. }) => "grow",
        _ => "shrink",
    }
}

/// A modal question or answer.
#[derive(Clone, Debug)]
pub enum Dialog {
    /// `r`: what a run would do; `y` lands, `n`/`Esc` cancels.
    ConfirmRun {
        path: PathBuf,
        stamp: Stamp,
        plan: Arc<Plan>,
    },
    /// A `shrink` (or `growth`) refusal: lands only when the operator types `shrink`
    /// (or `grow`).
    ConfirmShrink {
        path: PathBuf,
        stamp: Stamp,
        plan: Arc<Plan>,
        typed: String,
    },
    /// `R` then `r`: land landed bytes again (§5.4); only once the operator has typed
    /// the input's name and Enter.
    ConfirmReland {
        path: PathBuf,
        stamp: Stamp,
        plan: Arc<Plan>,
        typed: String,
    },
    /// A restore of a date's previous generation.
    ConfirmRestore { partition: PartitionRow },
    /// How a landing or a restore ended.
    Result(Finished),
}

/// The end of a landing or restore, for the result dialog.
#[derive(Clone, Debug)]
pub enum Finished {
    Landed {
        status: RunStatus,
        plan: Arc<Plan>,
        duration_ms: u64,
        allowed_shrink: bool,
    },
    Restored(Restored),
    Failed {
        what: String,
        error: String,
    },
}

/// A landing or restore in progress (nothing else may start meanwhile).
#[derive(Clone, Debug)]
pub struct Task {
    pub id: u64,
    pub title: String,
    pub progress: Option<Progress>,
}

/// A line for the status bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub level: Level,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// The console's state.
#[derive(Debug)]
pub struct App {
    /// The product shown; on the Products screen, the last one opened (or a stand-in).
    pub config: Arc<Config>,
    /// Every product, when the console was opened with several configs.
    pub products: Option<ProductsState>,
    pub theme: Theme,
    pub view: View,
    pub pane: Pane,
    /// The tab the right side shows while the list has focus.
    pub detail: Pane,
    pub inbox: InboxState,
    pub raw: RawState,
    pub ranked: RankedState,
    pub changes: ChangesState,
    pub quarantine: QuarantineState,
    pub history: HistoryState,
    pub dialog: Option<Dialog>,
    pub task: Option<Task>,
    pub help: bool,
    /// The `/` filter being typed, if any.
    pub editing: Option<String>,
    pub message: Option<Message>,
    pub quit: bool,
    /// Worker ids; a result whose id is no longer wanted is dropped.
    pub next_id: u64,
    pub ticks: u64,
    /// The terminal's size (columns, rows), for paging.
    pub size: (u16, u16),
}

impl App {
    /// A fresh console over `config`, nothing loaded yet.
    pub fn new(config: Arc<Config>, theme: Theme) -> App {
        App {
            config,
            products: None,
            theme,
            view: View::Inbox,
            pane: Pane::List,
            detail: Pane::Plan,
            inbox: InboxState {
                auto_cursor: true,
                ..InboxState::default()
            },
            raw: RawState::default(),
            ranked: RankedState::default(),
            changes: ChangesState::default(),
            quarantine: QuarantineState::default(),
            history: HistoryState::default(),
            dialog: None,
            task: None,
            help: false,
            editing: None,
            message: None,
            quit: false,
            next_id: 1,
            ticks: 0,
            size: (80, 24),
        }
    }

    /// A new worker id.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Rows a PgUp / PgDn moves.
    pub fn page(&self) -> usize {
        usize::from(self.size.1.saturating_sub(8)).max(1)
    }

    /// The inbox row under the cursor.
    pub fn current(&self) -> Option<&InboxRow> {
        self.inbox.rows.get(self.inbox.cursor)
    }

    /// The selected input's path, when it is the closed input under the cursor.
    pub fn selected_closed(&self) -> Option<PathBuf> {
        let row = self.current()?;
        (!matches!(row.badge, Badge::Ignored(_))
            && self.inbox.selected.as_ref() == Some(&row.entry.path))
        .then(|| row.entry.path.clone())
    }

    /// Whether something open over the views takes the keys: a dialog, the help or a
    /// filter being typed. Nothing moves the inbox selection meanwhile.
    pub fn overlay_open(&self) -> bool {
        self.dialog.is_some() || self.help || self.editing.is_some()
    }

    /// Whether `Esc` now goes back to the Products screen: the console has several
    /// products and this one is at its top level (the Inbox list, the Quarantine list
    /// unfiltered, the run log), so `Esc` has nothing nearer to close.
    pub fn back_to_products(&self) -> bool {
        self.products.is_some()
            && match self.view {
                View::Inbox => self.pane == Pane::List,
                View::Quarantine => {
                    self.quarantine.rejects.is_none() && self.quarantine.filter.is_empty()
                }
                View::History => self.history.pane == HistoryPane::Runs,
                View::Products => false,
            }
    }

    /// The ready plan of the selected input.
    pub fn plan(&self) -> Option<&Arc<Plan>> {
        match &self.inbox.plan {
            PlanState::Ready(plan) => Some(plan),
            _ => None,
        }
    }

    /// The tab the right side of the Inbox view shows.
    pub fn detail_tab(&self) -> Pane {
        if self.pane == Pane::List {
            self.detail
        } else {
            self.pane
        }
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            level: Level::Info,
            text: text.into(),
        });
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            level: Level::Warning,
            text: text.into(),
        });
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.message = Some(Message {
            level: Level::Error,
            text: text.into(),
        });
    }
}
