//! The History view: the run log and the partitions, `r` on a partition asking to
//! restore its previous generation, and `Enter` on a landing opening what it changed
//! (the Changes tab's keys move and filter it; `Esc` goes back to the runs).

use super::cursor::move_cursor;
use crate::console::app::{
    App, ChangesState, Dialog, HistoryPane, LandingDiff, Loading, Pane, View,
};
use crate::console::msg::{Effect, Intent};
use crate::land::runlog::RunRecord;

/// An intent in the History view.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    if app.history.diff.is_some() {
        return on_diff(app, intent);
    }
    let h = &mut app.history;
    let (cursor, len) = match h.pane {
        HistoryPane::Runs => (&mut h.run_cursor, h.runs.len()),
        HistoryPane::Partitions => (&mut h.partition_cursor, h.partitions.len()),
    };
    if move_cursor(cursor, len, intent, 10) {
        return Vec::new();
    }
    match intent {
        Intent::NextPane | Intent::PrevPane => {
            h.pane = match h.pane {
                HistoryPane::Runs => HistoryPane::Partitions,
                HistoryPane::Partitions => HistoryPane::Runs,
            };
        }
        Intent::Run | Intent::Open if h.pane == HistoryPane::Partitions => {
            let Some(partition) = h.partitions.get(h.partition_cursor).cloned() else {
                return Vec::new();
            };
            if let Some(task) = &app.task {
                let text = format!("{} is in progress; wait for it to finish", task.title);
                app.warn(text);
            } else if partition.previous.is_some() {
                app.dialog = Some(Dialog::ConfirmRestore { partition });
            } else {
                let text = format!(
                    "event_date={} has no earlier generation in the trash; nothing to restore",
                    partition.date
                );
                app.warn(text);
            }
        }
        Intent::Rerun if h.pane == HistoryPane::Runs => {
            let Some(name) = h.runs.get(h.run_cursor).map(|r| r.input_name.clone()) else {
                return Vec::new();
            };
            return rerun_of(app, &name);
        }
        Intent::Open => {
            let Some(run) = h.runs.get(h.run_cursor).cloned() else {
                return Vec::new();
            };
            return open_diff(app, run, ChangesState::default());
        }
        Intent::Run => {
            app.info("Tab to the partitions, then r restores a date's previous generation")
        }
        Intent::Back => {
            h.pane = HistoryPane::Runs;
        }
        _ => {}
    }
    Vec::new()
}

/// Diffs the landing `run`, into `state` (its filters kept).
/// `R` on a landing: its input's rerun plan in the Inbox view, while that input is still
/// in the inbox (with the bytes it landed, the Inbox's `R` says otherwise).
fn rerun_of(app: &mut App, name: &str) -> Vec<Effect> {
    if !app.inbox.all.iter().any(|r| r.entry.name == name) {
        app.info(format!(
            "{name} is no longer in the inbox; a rerun lands an input that is there"
        ));
        return Vec::new();
    }
    if !app.inbox.rows.iter().any(|r| r.entry.name == name) {
        app.inbox.filter.clear(); // the filter hid it
        app.inbox.refilter();
    }
    app.view = View::Inbox;
    app.pane = Pane::List;
    app.inbox.auto_cursor = false;
    if let Some(cursor) = app.inbox.rows.iter().position(|r| r.entry.name == name) {
        app.inbox.cursor = cursor;
    }
    super::inbox::rerun(app)
}

fn open_diff(app: &mut App, run: RunRecord, mut state: ChangesState) -> Vec<Effect> {
    if run.action != crate::land::RunStatus::Published.code() {
        app.info(format!(
            "only a landing that published has a diff; this run was {}",
            run.action
        ));
        return Vec::new();
    }
    let id = app.id();
    let total = run.dates.len() as u64;
    state.reset(
        None,
        Loading::Running {
            id,
            bytes: 0,
            total,
        },
    );
    app.history.diff = Some(LandingDiff {
        run: run.clone(),
        state,
    });
    vec![Effect::HistoryDiff {
        id,
        run: Box::new(run),
    }]
}

/// An intent while a landing's diff is open.
fn on_diff(app: &mut App, intent: Intent) -> Vec<Effect> {
    let page = app.page();
    let Some(LandingDiff { run, state: diff }) = app.history.diff.as_mut() else {
        return Vec::new();
    };
    if move_cursor(&mut diff.cursor, diff.rows.len(), intent, page) {
        return Vec::new();
    }
    let running = match diff.data {
        Loading::Running { id, .. } => Some(id),
        _ => None,
    };
    match intent {
        Intent::Back => {
            app.history.diff = None;
            return running
                .map(|id| Effect::Cancel { id })
                .into_iter()
                .collect();
        }
        Intent::Cancel => match running {
            Some(id) => {
                diff.data = Loading::Failed("diffing cancelled; Enter starts it again".into());
                return vec![Effect::Cancel { id }];
            }
            None => app.info("nothing to cancel"),
        },
        // Again (another process may have landed or trashed since).
        Intent::Open => {
            let (run, state) = (run.clone(), std::mem::take(diff));
            let mut effects: Vec<Effect> = running
                .map(|id| Effect::Cancel { id })
                .into_iter()
                .collect();
            effects.extend(open_diff(app, run, state));
            return effects;
        }
        Intent::NextShown => {
            diff.shown = diff.shown.next();
            diff.refilter();
        }
        Intent::NextMark | Intent::PrevMark => {
            if let Some(i) = diff.next_date(intent == Intent::NextMark) {
                diff.cursor = i;
            } else if matches!(diff.data, Loading::Ready(_)) {
                app.info("no further date with changes");
            }
        }
        _ => {}
    }
    Vec::new()
}
