//! The Raw and Ranked tabs of the Inbox view: starting the indexing or ranking the
//! visible tab needs, the windows of raw lines and of Ranked rows around the cursors, and
//! `n` / `N` between rejects and ties.

use crate::console::app::{App, Loading, Pane, RankedState, RawState};
use crate::console::msg::Effect;
use crate::console::raw::WINDOW;

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
            vec![Effect::Index { id, path }]
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
    let margin = (WINDOW / 4) as u64;
    let near_top = cursor < start + margin && start > 1;
    let near_end = cursor + margin >= start + len && start + len <= index.lines();
    (len == 0 || near_top || near_end).then(|| Effect::Window {
        path: path.clone(),
        index: index.clone(),
        start: cursor.saturating_sub(WINDOW as u64 / 2).max(1),
    })
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
    let margin = WINDOW / 4;
    let near_top = cursor < start + margin && start > 0;
    let near_end = cursor + margin >= start + len && start + len < app.ranked.rows.len();
    let empty = len == 0 && !app.ranked.rows.is_empty();
    (empty || near_top || near_end).then(|| Effect::RankedWindow {
        path: path.clone(),
        ranked: ranked.clone(),
        rows: app.ranked.rows.clone(),
        start: cursor.saturating_sub(WINDOW / 2),
    })
}

/// `n` / `N`: the next or previous reject (Raw) or tie / conflict (Ranked).
pub fn mark(app: &mut App, forward: bool) -> Vec<Effect> {
    match app.detail_tab() {
        Pane::Raw => {
            let Some(plan) = app.plan().filter(|_| app.raw.path == app.inbox.selected) else {
                app.info("n / N jump between rejects once the plan is ready");
                return Vec::new();
            };
            let cursor = app.raw.cursor;
            let found = if forward {
                plan.findings.iter().map(|f| f.line).find(|l| *l > cursor)
            } else {
                plan.findings
                    .iter()
                    .rev()
                    .map(|f| f.line)
                    .find(|l| *l < cursor)
            };
            match found {
                Some(line) => {
                    app.raw.cursor = line;
                    app.pane = Pane::Raw;
                    return window(app).into_iter().collect();
                }
                None => app.info("no further rejected or breaching line"),
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
        _ => app.info("n / N jump between rejects (Raw) and ties (Ranked)"),
    }
    Vec::new()
}
