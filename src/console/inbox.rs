//! The Inbox view's part of [`super::update`]: the cursor, which input is selected, the
//! work that follows a selection (its plan, and the Raw / Ranked data when those tabs
//! show), cancelling it, and starting a landing.

use std::path::PathBuf;
use std::sync::Arc;

use super::action::{Action, Effect};
use super::app::{App, Badge, Loading, Pane, PlanState, RankedState, RawState, Stamp, Task};
use super::panes::move_cursor;
use super::raw::WINDOW;
use super::update::run_dialog;
use crate::plan::Plan;

const PANES: [Pane; 4] = [Pane::List, Pane::Plan, Pane::Raw, Pane::Ranked];

/// An action in the Inbox view.
pub fn on_action(app: &mut App, action: Action) -> Vec<Effect> {
    // Once the operator acts in this view, the cursor is theirs.
    app.inbox.auto_cursor = false;
    let page = app.page();
    match app.pane {
        Pane::List => {
            if move_cursor(&mut app.inbox.cursor, app.inbox.rows.len(), &action, page) {
                return select(app);
            }
        }
        Pane::Raw => {
            let total = match &app.raw.index {
                Loading::Ready(index) => index.lines() as usize,
                _ => 0,
            };
            let mut cursor = app.raw.cursor.saturating_sub(1) as usize;
            if move_cursor(&mut cursor, total, &action, page) {
                app.raw.cursor = cursor as u64 + 1;
                return window(app).into_iter().collect();
            }
        }
        Pane::Ranked => {
            if move_cursor(&mut app.ranked.cursor, app.ranked.rows.len(), &action, page) {
                return Vec::new();
            }
        }
        Pane::Plan => {
            // About as many lines as the plan shows: its dates and a dozen more.
            let lines = app.plan().map_or(1, |p| p.dates.len() + 12);
            let mut scroll = usize::from(app.inbox.plan_scroll);
            if move_cursor(&mut scroll, lines, &action, page) {
                app.inbox.plan_scroll = scroll as u16;
                return Vec::new();
            }
        }
    }
    match action {
        Action::NextPane | Action::PrevPane => {
            let at = PANES.iter().position(|p| *p == app.pane).unwrap_or(0);
            let step = if matches!(action, Action::NextPane) {
                1
            } else {
                PANES.len() - 1
            };
            return show_pane(app, PANES[(at + step) % PANES.len()]);
        }
        Action::Open => match app.pane {
            Pane::List => {
                let detail = app.detail;
                let mut effects = show_pane(app, detail);
                if matches!(app.inbox.plan, PlanState::Failed(_) | PlanState::None) {
                    effects.extend(replan(app));
                }
                return effects;
            }
            Pane::Plan => return replan(app),
            Pane::Raw | Pane::Ranked => return show_pane(app, app.pane),
        },
        Action::Run => run_dialog(app),
        Action::Cancel => return cancel_work(app, true),
        Action::Back => {
            let effects = cancel_work(app, false);
            if effects.is_empty() {
                app.pane = Pane::List;
            }
            return effects;
        }
        Action::NextMark | Action::PrevMark => {
            return mark(app, matches!(action, Action::NextMark));
        }
        _ => {}
    }
    Vec::new()
}

/// Focuses `pane`, loading what it shows.
fn show_pane(app: &mut App, pane: Pane) -> Vec<Effect> {
    app.pane = pane;
    if pane != Pane::List {
        app.detail = pane;
    }
    ensure_detail(app)
}

/// Starts the Raw or Ranked work the visible tab needs, if not already there.
fn ensure_detail(app: &mut App) -> Vec<Effect> {
    let Some(path) = selected_closed(app) else {
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

/// The selected input's path, when it is a closed input.
fn selected_closed(app: &App) -> Option<PathBuf> {
    let row = app.current()?;
    (!matches!(row.badge, Badge::Ignored(_))
        && app.inbox.selected.as_ref() == Some(&row.entry.path))
    .then(|| row.entry.path.clone())
}

/// Makes the row under the cursor the selected input, planning it.
pub fn select(app: &mut App) -> Vec<Effect> {
    let Some(row) = app.current() else {
        app.inbox.selected = None;
        return Vec::new();
    };
    let path = row.entry.path.clone();
    let ignored = matches!(row.badge, Badge::Ignored(_));
    if app.inbox.selected.as_ref() == Some(&path) {
        return Vec::new();
    }
    let mut effects = cancel_work(app, false);
    app.inbox.selected = Some(path);
    app.raw = RawState::default();
    app.ranked = RankedState {
        filter: std::mem::take(&mut app.ranked.filter),
        ..RankedState::default()
    };
    app.inbox.plan = PlanState::None;
    app.inbox.plan_scroll = 0;
    if ignored {
        return effects;
    }
    effects.extend(replan(app));
    effects.extend(ensure_detail(app));
    effects
}

/// Plans the selected input again (after a landing, or on request).
pub fn replan(app: &mut App) -> Vec<Effect> {
    let Some(path) = selected_closed(app) else {
        return Vec::new();
    };
    let mut effects = Vec::new();
    if let PlanState::Running { id, .. } = app.inbox.plan {
        effects.push(Effect::Cancel { id });
    }
    let id = app.id();
    let total = app.current().map_or(0, |r| r.entry.size);
    app.inbox.planned = app.current().map(|r| Stamp {
        size: r.entry.size,
        modified: r.entry.modified,
    });
    app.inbox.plan = PlanState::Running {
        id,
        bytes: 0,
        total,
    };
    effects.push(Effect::Plan { id, path });
    effects
}

/// Cancels the planning, indexing and ranking in progress; `say` reports it.
fn cancel_work(app: &mut App, say: bool) -> Vec<Effect> {
    let mut effects = Vec::new();
    let cancelled = "cancelled; Enter starts it again";
    if let PlanState::Running { id, .. } = app.inbox.plan {
        effects.push(Effect::Cancel { id });
        app.inbox.plan = PlanState::Failed(format!("planning {cancelled}"));
    }
    if let Loading::Running { id, .. } = app.raw.index {
        effects.push(Effect::Cancel { id });
        app.raw.index = Loading::Failed(format!("indexing {cancelled}"));
    }
    if let Loading::Running { id, .. } = app.ranked.data {
        effects.push(Effect::Cancel { id });
        app.ranked.data = Loading::Failed(format!("ranking {cancelled}"));
    }
    if let Some(task) = app.task.as_ref().filter(|_| say) {
        // The core honours this only while it reads the input, before anything is written.
        effects.push(Effect::Cancel { id: task.id });
        app.info(format!(
            "asked {} to stop: it stops only while it still reads the input",
            task.title
        ));
        return effects;
    }
    if say && effects.is_empty() {
        app.info("nothing to cancel");
    } else if say || !effects.is_empty() {
        app.info(cancelled);
    }
    effects
}

/// Starts landing `path` as confirmed.
pub fn land(
    app: &mut App,
    path: PathBuf,
    stamp: Stamp,
    plan: &Arc<Plan>,
    allow_shrink: bool,
) -> Vec<Effect> {
    let id = app.id();
    app.task = Some(Task {
        id,
        title: format!("landing {}", plan.input_name),
        progress: None,
    });
    app.message = None;
    vec![Effect::Land {
        id,
        path,
        stamp,
        allow_shrink,
    }]
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

/// `n` / `N`: the next or previous reject (Raw) or tie / conflict (Ranked).
fn mark(app: &mut App, forward: bool) -> Vec<Effect> {
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
            let rows = &app.ranked.rows;
            let notable = |i: &usize| {
                let (g, r) = rows[*i];
                let group = &ranked.groups[g as usize];
                r == 0 && (group.tie || group.conflict)
            };
            let at = app.ranked.cursor;
            let found = if forward {
                (at + 1..rows.len()).find(notable)
            } else {
                (0..at).rev().find(notable)
            };
            match found {
                Some(i) => app.ranked.cursor = i,
                None => app.info("no further tie by arrival or conflict"),
            }
        }
        _ => app.info("n / N jump between rejects (Raw) and ties (Ranked)"),
    }
    Vec::new()
}
