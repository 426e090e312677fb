//! The messages of the console. [`Msg`] is everything [`super::update::update`] applies:
//! an [`Intent`] (what the operator's key means, from [`super::keymap`]), a [`Report`]
//! (what a worker or the runtime found), the ticker and the terminal's size. [`Effect`]
//! is the work `update` asks the runtime to do: read state, spawn a worker, cancel one.
//! `update` itself never touches the disk.

use std::path::PathBuf;
use std::sync::Arc;

use super::app::{PartitionRow, PublishedHours, Stamp, TableAt, View};
use super::changes::Changes;
use super::products::Summary;
use super::ranked::{Ranked, RankedRow, Rows};
use super::raw::{LineIndex, RawLine};
use crate::contract::Date;
use crate::engine::Progress;
use crate::inbox::InboxEntry;
use crate::land::RunStatus;
use crate::land::quarantine::{QuarantineSummary, RejectRecord};
use crate::land::restore::Restored;
use crate::land::runlog::RunRecord;
use crate::plan::Plan;

/// Everything that can change the [`super::app::App`].
#[derive(Debug)]
pub enum Msg {
    /// The operator's key, as the keymap read it.
    Intent(Intent),
    /// A worker or the runtime reports.
    Report(Report),
    /// The ticker.
    Tick,
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
    /// The watcher saw the inbox change (debounced): read it again, whatever is open.
    InboxChanged,
    /// The Products timer: read every product's summary again.
    Summarize,
}

impl From<Intent> for Msg {
    fn from(intent: Intent) -> Msg {
        Msg::Intent(intent)
    }
}

impl From<Report> for Msg {
    fn from(report: Report) -> Msg {
        Msg::Report(report)
    }
}

/// What the operator means by a key: the keymap's answer, and what tests drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    Quit,
    Help,
    /// `Esc`: close, cancel or go back, whichever is nearest.
    Back,
    Show(View),
    NextPane,
    PrevPane,
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    /// `Enter`.
    Open,
    /// `r`: run (Inbox) or restore (History), behind a confirmation.
    Run,
    /// `y` in a confirmation.
    Confirm,
    /// `n` in a confirmation.
    Decline,
    /// `c`: cancel the planning, indexing or ranking in progress.
    Cancel,
    /// `/`: start typing a filter.
    Filter,
    /// A character typed into a filter or the `shrink` confirmation.
    Input(char),
    Backspace,
    /// `Enter` while typing.
    Submit,
    /// `n` / `N`: next / previous tie or reject.
    NextMark,
    PrevMark,
    /// `f`: the Changes tab lists the next kind (all, inserted, updated, removed).
    NextShown,
    /// `Ctrl-R`: reload everything from disk.
    Reload,
    /// `R`: plan the landed input under the cursor again as a rerun (Inbox), or the
    /// input of the landing under the cursor (History).
    Rerun,
}

/// What workers and the runtime report.
#[derive(Debug)]
pub enum Report {
    /// The state on disk: inbox, checkpoints, quarantine, run log, partitions.
    Loaded(Box<Snapshot>),
    LoadFailed(String),
    /// One file's hash, or why it could not be read (shown in its inbox row).
    Hashed {
        path: PathBuf,
        stamp: Stamp,
        sha256: Result<String, String>,
    },
    HashingDone {
        id: u64,
    },
    PlanProgress {
        id: u64,
        bytes: u64,
        total: u64,
    },
    Planned {
        id: u64,
        path: PathBuf,
        result: Result<Arc<Plan>, String>,
        /// The same worker's `Ranked` or `RankLater` follows (its last message).
        ranks_next: bool,
    },
    LandProgress {
        id: u64,
        progress: Progress,
    },
    Landed {
        id: u64,
        result: Result<Landed, String>,
    },
    Restored {
        id: u64,
        result: Result<Restored, String>,
    },
    IndexProgress {
        id: u64,
        bytes: u64,
        total: u64,
    },
    Indexed {
        id: u64,
        result: Result<Arc<LineIndex>, String>,
    },
    Window {
        path: PathBuf,
        start: u64,
        result: Result<Vec<RawLine>, String>,
    },
    RankProgress {
        id: u64,
        bytes: u64,
        total: u64,
    },
    Ranked {
        id: u64,
        result: Result<Arc<Ranked>, String>,
    },
    /// The plan `id` kept no events by key: the Ranked tab reads the input itself.
    RankLater {
        id: u64,
    },
    /// Rows `start..` of `rows`, read back for the Ranked tab.
    RankedWindow {
        path: PathBuf,
        rows: Arc<Rows>,
        start: usize,
        result: Result<Vec<RankedRow>, String>,
    },
    ChangesProgress {
        id: u64,
        bytes: u64,
        total: u64,
    },
    /// The plan `id`'s dates as published now, by hour (the Plan tab's picture).
    PublishedHours {
        id: u64,
        result: Result<PublishedHours, String>,
    },
    /// What a landing of the input would change (the Changes tab), or what a past one
    /// changed (the History view's diff).
    Changed {
        id: u64,
        result: Result<Arc<Changes>, String>,
    },
    Rejects {
        result: Result<Box<(QuarantineSummary, Vec<RejectRecord>)>, String>,
    },
    RawLine {
        id: u64,
        result: Result<String, String>,
    },
    /// Each loaded product's summary, by its row on the Products screen.
    Summaries(Result<Vec<(usize, Summary)>, String>),
}

impl Report {
    /// The worker id when this is a worker's last message (the runtime counts workers in
    /// flight and forgets their cancel flags).
    pub fn final_id(&self) -> Option<u64> {
        match self {
            Report::Planned {
                id,
                ranks_next: false,
                ..
            } => Some(*id),
            Report::HashingDone { id }
            | Report::RankLater { id }
            | Report::Landed { id, .. }
            | Report::Restored { id, .. }
            | Report::Indexed { id, .. }
            | Report::Ranked { id, .. }
            | Report::Changed { id, .. }
            | Report::PublishedHours { id, .. }
            | Report::RawLine { id, .. } => Some(*id),
            _ => None,
        }
    }
}

/// A finished landing.
#[derive(Debug)]
pub struct Landed {
    pub status: RunStatus,
    pub plan: Arc<Plan>,
    pub duration_ms: u64,
    pub allowed_shrink: bool,
}

/// What a reload read.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub inbox: Vec<InboxEntry>,
    /// Checkpoint hash by input name.
    pub checkpoints: Vec<(String, String)>,
    /// What became of each checkpoint's landing since (§5.4), by input name.
    pub standing: Vec<(String, crate::plan::Landed)>,
    pub quarantine: Vec<QuarantineSummary>,
    /// Oldest first, as in the file.
    pub runs: Vec<RunRecord>,
    pub partitions: Vec<PartitionRow>,
    pub table: Option<TableAt>,
    /// Problems reading parts of the state (shown, not fatal).
    pub problems: Vec<String>,
}

/// Work for the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Read the state on disk (on a reader thread) and report [`Report::Loaded`].
    Reload,
    /// Hash these files on a worker.
    Hash {
        id: u64,
        files: Vec<(PathBuf, Stamp)>,
    },
    /// Plan `path`; with `rank`, keep the Ranked tab's data from the same read; with
    /// `reland`, as a rerun of landed bytes (§5.4).
    Plan {
        id: u64,
        path: PathBuf,
        rank: bool,
        reland: bool,
    },
    /// Land `path` if it still has `stamp` (the bytes the operator confirmed).
    Land {
        id: u64,
        path: PathBuf,
        stamp: Stamp,
        allow: crate::plan::DecideOptions,
    },
    Restore {
        id: u64,
        date: Date,
    },
    /// Index `path`'s lines; §2's repeats come from `ranked` when it holds them (the
    /// plan's read kept them), else from a read of the input.
    Index {
        id: u64,
        path: PathBuf,
        ranked: Option<Arc<Ranked>>,
    },
    /// Read the lines `start..start + WINDOW` (on a reader thread), with the plan's
    /// spilled findings among them.
    Window {
        path: PathBuf,
        index: Arc<LineIndex>,
        start: u64,
        spilled: Option<crate::plan::SpilledFindings>,
    },
    Rank {
        id: u64,
        path: PathBuf,
    },
    /// Read rows `start..start + WINDOW` of `rows` back (on a reader thread).
    RankedWindow {
        path: PathBuf,
        ranked: Arc<Ranked>,
        rows: Arc<Rows>,
        start: usize,
    },
    /// Read how `dates` are published now, by hour (on a worker).
    PublishedHours {
        id: u64,
        dates: Vec<Date>,
    },
    /// Diff a landing of `path` (a rerun, with `reland`) against the published
    /// partitions (on a worker).
    Changes {
        id: u64,
        path: PathBuf,
        reland: bool,
    },
    /// Diff what the landing `run` changed, its replaced generations against those it
    /// published (on a worker; reports as [`Report::Changed`]).
    HistoryDiff {
        id: u64,
        run: Box<RunRecord>,
    },
    /// Read one quarantine entry's rejects (on a reader thread).
    Rejects {
        sha256: String,
    },
    /// Read line `line` of `path` (of its part `file`, in a set), only if its bytes still
    /// hash to `sha256`.
    RawLine {
        id: u64,
        path: PathBuf,
        file: Option<String>,
        line: u64,
        sha256: String,
    },
    /// Stop the worker `id` (it reports `Cancelled`).
    Cancel {
        id: u64,
    },
    /// Read every loaded product's summary (on a reader thread).
    Summarize,
    /// Show the product of Products row `product`: its config for every effect after,
    /// its inbox watched; what the previous one had running is cancelled and forgotten.
    Enter {
        product: usize,
    },
    /// Back to the Products screen: the product's work is cancelled and forgotten.
    Leave,
}
