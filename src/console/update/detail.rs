//! The Raw, Ranked and Changes tabs of the Inbox view: starting the indexing, ranking or
//! diffing the visible tab needs, the windows of raw lines and of Ranked rows around the
//! cursors, `n` / `N` between rejects, ties and the dates of the changes, and `f`.

use crate::console::app::{App, Loading, Pane, RankedState, RawState};
use crate::console::msg::Effect;
use crate::console::raw::{Repeat, WINDOW, window_lines};

/// Starts the Raw or Ranked work the visible tab needs, if not already there.
pub fn ensure_detail(app: &mut App) -> Vec<Effect> {
    let Some(path) = app.selected_closed() else {
        return Vec::new();
    };
    match app.detail_tab() {
        Pane::Raw
            if app.raw.path.as_ref() != Some(&path)
                || matches!(app.raw.index, Loading::Failed(_)) =>
        {
            let id = app.id();
            app.raw = RawState {
                path: Some(path.clone()),
                index: Loading::Running {
                    id,
                    bytes: 0,
                    total: 0,
                },
                cursor: 1,
                window_start: 1,
                window: Vec::new(),
            };
            let ranked = match &app.ranked.data {
                Loading::Ready(ranked) if app.ranked.path.as_ref() == Some(&path) => {
                    Some(ranked.clone())
                }
                _ => None,
            };
            vec![Effect::Index { id, path, ranked }]
        }
        Pane::Ranked
            if app.ranked.path.as_ref() != Some(&path)
                || matches!(app.ranked.data, Loading::Failed(_)) =>
        {
            let id = app.id();
            let filter = std::mem::take(&mut app.ranked.filter);
            app.ranked = RankedState {
                path: Some(path.clone()),
                data: Loading::Running {
                    id,
                    bytes: 0,
                    total: 0,
                },
                filter,
                ..RankedState::default()
            };
            vec![Effect::Rank { id, path }]
        }
        Pane::Changes
            if app.changes.path.as_ref() != Some(&path)
                || matches!(app.changes.data, Loading::Failed(_) | Loading::None) =>
        {
            let id = app.id();
            let running = Loading::Running {
                id,
                bytes: 0,
                total: 0,
            };
            app.changes.reset(Some(path.clone()), running);
            let reland = app.inbox.reland;
            vec![Effect::Changes { id, path, reland }]
        }
        _ => Vec::new(),
    }
}

/// The window read the Raw cursor needs, if it left the lines in memory.
pub fn window(app: &App) -> Option<Effect> {
    let (Loading::Ready(index), Some(path)) = (&app.raw.index, &app.raw.path) else {
        return None;
    };
    let (cursor, start, len) = (
        app.raw.cursor,
        app.raw.window_start,
        app.raw.window.len() as u64,
    );
    // Lines are 1-based: the file's run from 1 to `index.lines()`.
    let leaves = near_edge(cursor, start, len, 1, index.lines() + 1);
    let half = window_lines(index) as u64 / 2;
    (len == 0 || leaves).then(|| Effect::Window {
        path: path.clone(),
        index: index.clone(),
        start: cursor.saturating_sub(half).max(1),
        spilled: raw_plan(app).and_then(|plan| plan.spilled.clone()),
    })
}

/// The Raw lines in memory read again, for a plan that came after them with findings
/// spilled (lines past the held ones take theirs from the spill).
pub fn window_again(app: &App) -> Option<Effect> {
    let (Loading::Ready(index), Some(path)) = (&app.raw.index, &app.raw.path) else {
        return None;
    };
    let spilled = raw_plan(app).and_then(|plan| plan.spilled.clone())?;
    (!app.raw.window.is_empty()).then(|| Effect::Window {
        path: path.clone(),
        index: index.clone(),
        start: app.raw.window_start,
        spilled: Some(spilled),
    })
}

/// The plan of the input the Raw tab shows, once there is one.
fn raw_plan(app: &App) -> Option<&std::sync::Arc<crate::plan::Plan>> {
    app.plan().filter(|_| app.raw.path == app.inbox.selected)
}

/// The window read the Ranked cursor needs, if it left the rows in memory.
pub fn ranked_window(app: &App) -> Option<Effect> {
    let (Loading::Ready(ranked), Some(path)) = (&app.ranked.data, &app.ranked.path) else {
        return None;
    };
    let (cursor, start, len) = (
        app.ranked.cursor,
        app.ranked.window_start,
        app.ranked.window.len(),
    );
    let total = app.ranked.rows.len();
    let leaves = near_edge(cursor as u64, start as u64, len as u64, 0, total as u64);
    let empty = len == 0 && total > 0;
    (empty || leaves).then(|| Effect::RankedWindow {
        path: path.clone(),
        ranked: ranked.clone(),
        rows: app.ranked.rows.clone(),
        start: cursor.saturating_sub(WINDOW / 2),
    })
}

/// Whether `cursor` came within a quarter window of an edge of the window
/// `start..start + len` that has more rows beyond it, in a run `first..end`.
fn near_edge(cursor: u64, start: u64, len: u64, first: u64, end: u64) -> bool {
    let margin = WINDOW as u64 / 4;
    let near_top = cursor < start + margin && start > first;
    let near_end = cursor + margin >= start + len && start + len < end;
    near_top || near_end
}

/// `n` / `N`: the next or previous reject (Raw) or tie / conflict (Ranked).
pub fn mark(app: &mut App, forward: bool) -> Vec<Effect> {
    match app.detail_tab() {
        Pane::Raw => {
            let Some(plan) = raw_plan(app) else {
                app.info("n / N jump between rejects once the plan is ready");
                return Vec::new();
            };
            match crate::console::raw::next_finding(plan, app.raw.cursor, forward) {
                Ok(Some(line)) => {
                    app.raw.cursor = line;
                    app.pane = Pane::Raw;
                    return window(app).into_iter().collect();
                }
                Ok(None) => app.info("no further rejected or breaching line"),
                Err(error) => app.info(error.to_string()),
            }
        }
        Pane::Ranked => {
            let Loading::Ready(ranked) = &app.ranked.data else {
                return Vec::new();
            };
            let found = app
                .ranked
                .rows
                .next_key(app.ranked.cursor, forward, |k| ranked.notable(k));
            match found {
                Some(i) => {
                    app.ranked.cursor = i;
                    return ranked_window(app).into_iter().collect();
                }
                None => app.info("no further tie by arrival or conflict"),
            }
        }
        Pane::Changes => {
            if !matches!(app.changes.data, Loading::Ready(_)) {
                return Vec::new();
            }
            match app.changes.next_date(forward) {
                Some(i) => app.changes.cursor = i,
                None => app.info("no further date with changes"),
            }
        }
        _ => app.info("n / N jump between rejects (Raw), ties (Ranked) and dates (Changes)"),
    }
    Vec::new()
}

/// `Enter` on a Ranked row: the Raw tab on its line (its part's, in a set); on a Raw line
/// that repeats an earlier event: that event's line. `None`: nothing to go to.
pub fn go_to_line(app: &mut App) -> Option<Vec<Effect>> {
    match app.pane {
        Pane::Ranked => {
            let row = app
                .ranked
                .cursor
                .checked_sub(app.ranked.window_start)
                .and_then(|i| app.ranked.window.get(i))?;
            let line = row.line;
            app.pane = Pane::Raw;
            app.detail = Pane::Raw;
            let mut effects = ensure_detail(app);
            // Kept while the lines are indexed: the window read once they are follows it.
            app.raw.cursor = line;
            effects.extend(window(app));
            Some(effects)
        }
        Pane::Raw => {
            let Loading::Ready(index) = &app.raw.index else {
                return None;
            };
            let (Repeat::Retry { of } | Repeat::Conflict { of }) = index.repeat(app.raw.cursor)?;
            app.raw.cursor = of;
            Some(window(app).into_iter().collect())
        }
        _ => None,
    }
}

/// `f`: the Changes tab lists the next kind of change.
pub fn next_shown(app: &mut App) {
    if app.detail_tab() != Pane::Changes {
        app.info("f picks the kind of change the Changes tab lists");
        return;
    }
    app.changes.shown = app.changes.shown.next();
    app.changes.refilter();
}
