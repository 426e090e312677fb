//! The Inbox view: the cursor, which input is selected, the work that follows a
//! selection (its plan, and the Raw / Ranked / Changes data when those tabs show),
//! cancelling it,
//! and `r`: the confirmation, then the landing.

use std::path::PathBuf;
use std::sync::Arc;

use super::cursor::move_cursor;
use super::detail::{ensure_detail, go_to_line, mark, next_shown, window};
use crate::console::app::{
    App, Badge, Dialog, Loading, Pane, PlanState, RankedState, RawState, Stamp, Task,
};
use crate::console::msg::{Effect, Intent};
use crate::plan::{Action, DecideOptions, Plan, Refusal};

const PANES: [Pane; 5] = [
    Pane::List,
    Pane::Plan,
    Pane::Raw,
    Pane::Ranked,
    Pane::Changes,
];

/// An intent in the Inbox view.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    // Once the operator acts in this view, the cursor is theirs.
    app.inbox.auto_cursor = false;
    let page = app.page();
    match app.pane {
        Pane::List => {
            if move_cursor(&mut app.inbox.cursor, app.inbox.rows.len(), intent, page) {
                return select(app);
            }
        }
        Pane::Raw => {
            let total = match &app.raw.index {
                Loading::Ready(index) => index.lines() as usize,
                _ => 0,
            };
            let mut cursor = app.raw.cursor.saturating_sub(1) as usize;
            if move_cursor(&mut cursor, total, intent, page) {
                app.raw.cursor = cursor as u64 + 1;
                return window(app).into_iter().collect();
            }
        }
        Pane::Ranked => {
            if move_cursor(&mut app.ranked.cursor, app.ranked.rows.len(), intent, page) {
                return super::detail::ranked_window(app).into_iter().collect();
            }
        }
        Pane::Changes => {
            let len = app.changes.rows.len();
            if move_cursor(&mut app.changes.cursor, len, intent, page) {
                return Vec::new();
            }
        }
        Pane::Plan => {
            // About as many lines as the plan shows: its dates and a dozen more.
            let lines = app.plan().map_or(1, |p| p.dates.len() + 12);
            let mut scroll = usize::from(app.inbox.plan_scroll);
            if move_cursor(&mut scroll, lines, intent, page) {
                app.inbox.plan_scroll = scroll as u16;
                return Vec::new();
            }
        }
    }
    match intent {
        Intent::NextPane | Intent::PrevPane => {
            let at = PANES.iter().position(|p| *p == app.pane).unwrap_or(0);
            let step = if matches!(intent, Intent::NextPane) {
                1
            } else {
                PANES.len() - 1
            };
            return show_pane(app, PANES[(at + step) % PANES.len()]);
        }
        Intent::Open => match app.pane {
            Pane::List => {
                let detail = app.detail;
                let mut effects = show_pane(app, detail);
                if matches!(app.inbox.plan, PlanState::Failed(_) | PlanState::None) {
                    effects.extend(replan(app));
                }
                return effects;
            }
            Pane::Plan => return replan(app),
            Pane::Raw | Pane::Ranked => match go_to_line(app) {
                Some(effects) => return effects,
                None => return show_pane(app, app.pane),
            },
            // The published partitions may have changed since (another process landed).
            Pane::Changes => return rediff(app),
        },
        Intent::Run => run_dialog(app),
        Intent::Rerun => return rerun(app),
        Intent::Cancel => return cancel_work(app, true),
        Intent::Back => {
            let effects = cancel_work(app, false);
            if effects.is_empty() {
                app.pane = Pane::List;
            }
            return effects;
        }
        Intent::NextMark | Intent::PrevMark => {
            return mark(app, matches!(intent, Intent::NextMark));
        }
        Intent::NextShown => next_shown(app),
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
    app.inbox.reland = false;
    app.raw = RawState::default();
    app.ranked = RankedState {
        filter: std::mem::take(&mut app.ranked.filter),
        ..RankedState::default()
    };
    app.changes.reset(None, Loading::None);
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
    let Some(path) = app.selected_closed() else {
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
    // The Ranked tab's data comes with the plan's read, unless it is already there.
    let ranked = app.ranked.path.as_ref() == Some(&path);
    let rank = !(ranked && matches!(app.ranked.data, Loading::Ready(_)));
    if rank {
        if let Loading::Running { id, .. } = app.ranked.data {
            effects.push(Effect::Cancel { id });
        }
        app.ranked = RankedState {
            path: Some(path.clone()),
            data: Loading::Running {
                id,
                bytes: 0,
                total,
            },
            filter: std::mem::take(&mut app.ranked.filter),
            ..RankedState::default()
        };
    }
    let reland = app.inbox.reland;
    effects.push(Effect::Plan {
        id,
        path,
        rank,
        reland,
    });
    // A new plan (after a landing, a restore, new bytes) may change what it would change.
    effects.extend(rediff(app));
    effects
}

/// Drops the Changes tab's data (cancelling a diff in progress) and diffs again if the
/// tab shows.
fn rediff(app: &mut App) -> Vec<Effect> {
    let mut effects = Vec::new();
    if let Loading::Running { id, .. } = app.changes.data {
        effects.push(Effect::Cancel { id });
    }
    app.changes.reset(None, Loading::None);
    effects.extend(ensure_detail(app));
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
    if let Loading::Running { id, .. } = app.changes.data {
        effects.push(Effect::Cancel { id });
        app.changes.data = Loading::Failed(format!("diffing {cancelled}"));
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

/// The dialog `r` opens for a ready plan.
fn run_dialog(app: &mut App) {
    if let Some(task) = &app.task {
        let text = format!("{} is in progress; wait for it to finish", task.title);
        app.warn(text);
        return;
    }
    let Some(row) = app.current() else {
        return;
    };
    if let Badge::Ignored(why) = row.badge {
        let text = format!("{} is ignored ({why}); nothing to run", row.entry.name);
        app.warn(text);
        return;
    }
    let path = row.entry.path.clone();
    let stamp = Stamp {
        size: row.entry.size,
        modified: row.entry.modified,
    };
    let plan = match &app.inbox.plan {
        PlanState::Ready(plan) if app.inbox.selected.as_ref() == Some(&path) => plan.clone(),
        PlanState::Running { .. } => {
            app.info("the plan is still being computed; press r again when it is ready");
            return;
        }
        _ => {
            app.info("no plan for this input yet; press Enter to plan it");
            return;
        }
    };
    app.dialog = Some(match (&plan.action, &plan.refusal) {
        // A rerun lands only once its name is typed, whatever its plan says (§5.4).
        _ if plan.reland => Dialog::ConfirmReland {
            path,
            stamp,
            plan,
            typed: String::new(),
        },
        (Action::Refuse, Some(Refusal::Shrink { .. } | Refusal::Growth { .. })) => {
            Dialog::ConfirmShrink {
                path,
                stamp,
                plan,
                typed: String::new(),
            }
        }
        _ => Dialog::ConfirmRun { path, stamp, plan },
    });
}

/// Starts landing `path` as confirmed.
pub fn land(
    app: &mut App,
    path: PathBuf,
    stamp: Stamp,
    plan: &Arc<Plan>,
    allow: DecideOptions,
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
        allow: DecideOptions {
            reland: plan.reland,
            ..allow
        },
    }]
}

/// `R`: the landed input under the cursor planned again as a rerun (Plan, Changes and
/// the day by hour against what is published now); `r` then asks for its name.
pub fn rerun(app: &mut App) -> Vec<Effect> {
    if let Some(task) = &app.task {
        let text = format!("{} is in progress; wait for it to finish", task.title);
        app.warn(text);
        return Vec::new();
    }
    let Some(row) = app.current() else {
        return Vec::new();
    };
    if row.badge != Badge::Landed {
        let text = format!(
            "{} has not landed as it is now: r runs it (R reruns a landed input)",
            row.entry.name
        );
        app.info(text);
        return Vec::new();
    }
    let mut effects = select(app);
    app.inbox.reland = true;
    app.raw = RawState::default();
    app.ranked.path = None;
    effects.extend(replan(app));
    effects.extend(show_pane(app, Pane::Plan));
    app.info("rerun plan: read Plan and Changes; r then the input's name lands it again");
    effects
}
