//! What the App does with a worker's or the runtime's [`Report`]. A result whose id is
//! no longer the one the App waits for (the operator moved on, or cancelled) is dropped.

use std::sync::Arc;

use super::detail::{ensure_detail, ranked_window, window, window_again};
use super::inbox::replan;
use super::reload;
use crate::console::app::{
    App, ChangesState, Dialog, Finished, Loading, PlanState, RankedState, Rejects,
};
use crate::console::msg::{Effect, Report};

/// The plan `id` brings no Ranked data after all: the tab, if it waits for it, reads the
/// input itself once shown.
fn rank_later(app: &mut App, id: u64) -> Vec<Effect> {
    if !matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
        return Vec::new();
    }
    app.ranked = RankedState {
        filter: std::mem::take(&mut app.ranked.filter),
        ..RankedState::default()
    };
    ensure_detail(app)
}

/// Asks for the published hours of the dates `plan` would replace, when it counted its
/// own (an engine may not) and any of them is published now.
fn read_published_hours(app: &mut App, plan: &crate::plan::Plan) -> Option<Effect> {
    let counted = plan.dates.iter().any(|d| d.by_hour.is_some());
    let dates: Vec<_> = plan
        .dates
        .iter()
        .filter(|d| d.rows_before.is_some())
        .map(|d| d.event_date)
        .collect();
    if !counted || dates.is_empty() {
        return None;
    }
    let id = app.id();
    app.inbox.published_hours = Loading::Running {
        id,
        bytes: 0,
        total: 0,
    };
    Some(Effect::PublishedHours { id, dates })
}

/// The diff (the Changes tab's or the History view's) waiting for the worker `id`.
fn diff_waiting(app: &mut App, id: u64) -> Option<&mut ChangesState> {
    let waits = |state: &ChangesState| matches!(state.data, Loading::Running { id: want, .. } if want == id);
    if waits(&app.changes) {
        return Some(&mut app.changes);
    }
    let landing = app.history.diff.as_mut().map(|d| &mut d.state);
    landing.filter(|state| waits(state))
}

/// Applies one report.
pub fn on_report(app: &mut App, report: Report) -> Vec<Effect> {
    match report {
        Report::Loaded(snapshot) => return reload::loaded(app, *snapshot),
        Report::LoadFailed(error) => app.error(error),
        Report::Hashed {
            path,
            stamp,
            sha256,
        } => {
            match sha256 {
                Ok(sha256) => {
                    app.inbox.unreadable.remove(&path);
                    app.inbox.hashes.insert(path.clone(), (stamp, sha256));
                }
                Err(why) => {
                    app.inbox.unreadable.insert(path.clone(), (stamp, why));
                }
            }
            if let Some(i) = app.inbox.all.iter().position(|r| r.entry.path == path) {
                app.inbox.all[i].badge = reload::badge(&app.inbox, &app.inbox.all[i].entry);
            }
            if let Some(i) = app.inbox.rows.iter().position(|r| r.entry.path == path) {
                app.inbox.rows[i].badge = reload::badge(&app.inbox, &app.inbox.rows[i].entry);
            }
            return reload::place_cursor(app);
        }
        Report::HashingDone { id } if app.inbox.hashing == Some(id) => app.inbox.hashing = None,
        Report::PlanProgress { id, bytes, total } => {
            if let PlanState::Running { id: want, .. } = app.inbox.plan
                && want == id
            {
                app.inbox.plan = PlanState::Running { id, bytes, total };
            }
            if matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
                app.ranked.data = Loading::Running { id, bytes, total };
            }
        }
        Report::Planned {
            id,
            result,
            ranks_next,
            ..
        } => {
            let failed = result.is_err();
            let mut effects = Vec::new();
            if matches!(app.inbox.plan, PlanState::Running { id: want, .. } if want == id) {
                app.inbox.published_hours = Loading::None;
                app.inbox.plan = match result {
                    Ok(plan) => {
                        effects.extend(read_published_hours(app, &plan));
                        PlanState::Ready(plan)
                    }
                    Err(error) => PlanState::Failed(error),
                };
                effects.extend(window_again(app));
            }
            if failed || !ranks_next {
                effects.extend(rank_later(app, id));
            }
            return effects;
        }
        Report::PublishedHours { id, result } => {
            if matches!(app.inbox.published_hours, Loading::Running { id: want, .. } if want == id)
            {
                app.inbox.published_hours = match result {
                    Ok(hours) => Loading::Ready(hours),
                    Err(error) => Loading::Failed(error),
                };
            }
        }
        Report::RankLater { id } => return rank_later(app, id),
        Report::LandProgress { id, progress } => {
            if let Some(task) = app.task.as_mut().filter(|t| t.id == id) {
                task.progress = Some(progress);
            }
        }
        Report::Landed { id, result } if app.task.as_ref().is_some_and(|t| t.id == id) => {
            app.task = None;
            app.dialog = Some(Dialog::Result(match result {
                Ok(landed) => Finished::Landed {
                    status: landed.status,
                    plan: landed.plan,
                    duration_ms: landed.duration_ms,
                    allowed_shrink: landed.allowed_shrink,
                },
                Err(error) => Finished::Failed {
                    what: "the landing".into(),
                    error,
                },
            }));
            // A rerun is one act: the input is planned as discovery sees it again.
            app.inbox.reland = false;
            let mut effects = vec![Effect::Reload];
            effects.extend(replan(app));
            return effects;
        }
        Report::Restored { id, result } if app.task.as_ref().is_some_and(|t| t.id == id) => {
            app.task = None;
            app.dialog = Some(Dialog::Result(match result {
                Ok(restored) => Finished::Restored(restored),
                Err(error) => Finished::Failed {
                    what: "the restore".into(),
                    error,
                },
            }));
            let mut effects = vec![Effect::Reload];
            effects.extend(replan(app));
            return effects;
        }
        Report::IndexProgress { id, bytes, total } => {
            if matches!(app.raw.index, Loading::Running { id: want, .. } if want == id) {
                app.raw.index = Loading::Running { id, bytes, total };
            }
        }
        Report::Indexed { id, result } => {
            if matches!(app.raw.index, Loading::Running { id: want, .. } if want == id) {
                app.raw.index = match result {
                    Ok(index) => Loading::Ready(index),
                    Err(error) => Loading::Failed(error),
                };
                app.raw.window.clear();
                return window(app).into_iter().collect();
            }
        }
        Report::Window {
            path,
            start,
            result,
        } if app.raw.path.as_ref() == Some(&path) => match result {
            Ok(lines) => {
                app.raw.window_start = start;
                app.raw.window = lines;
            }
            Err(error) => app.raw.index = Loading::Failed(error),
        },
        Report::RankProgress { id, bytes, total } => {
            if matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
                app.ranked.data = Loading::Running { id, bytes, total };
            }
        }
        Report::Ranked { id, result } => {
            if matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
                match result {
                    Ok(ranked) => {
                        app.ranked.rows = Arc::new(ranked.filter(&app.ranked.filter));
                        app.ranked.cursor = 0;
                        app.ranked.window.clear();
                        app.ranked.data = Loading::Ready(ranked);
                        return ranked_window(app).into_iter().collect();
                    }
                    Err(error) => app.ranked.data = Loading::Failed(error),
                }
            }
        }
        Report::RankedWindow {
            path,
            rows,
            start,
            result,
        } if app.ranked.path.as_ref() == Some(&path) && Arc::ptr_eq(&rows, &app.ranked.rows) => {
            match result {
                Ok(window) => {
                    app.ranked.window_start = start;
                    app.ranked.window = window;
                }
                Err(error) => app.ranked.data = Loading::Failed(error),
            }
        }
        // The Changes tab's diff, or the History view's: whichever waits for this id.
        Report::ChangesProgress { id, bytes, total } => {
            if let Some(state) = diff_waiting(app, id) {
                state.data = Loading::Running { id, bytes, total };
            }
        }
        Report::Changed { id, result } => {
            if let Some(state) = diff_waiting(app, id) {
                state.data = match result {
                    Ok(changes) => Loading::Ready(changes),
                    Err(error) => Loading::Failed(error),
                };
                state.refilter();
            }
        }
        Report::Rejects { result } => match result.map(|boxed| *boxed) {
            Ok((summary, records)) => {
                app.quarantine.rejects = Some(Rejects {
                    summary,
                    records,
                    cursor: 0,
                    raw: None,
                });
            }
            Err(error) => app.error(error),
        },
        Report::RawLine { id, result } => {
            if let Some(rejects) = app.quarantine.rejects.as_mut()
                && matches!(rejects.raw, Some(Loading::Running { id: want, .. }) if want == id)
            {
                rejects.raw = Some(match result {
                    Ok(text) => Loading::Ready(text),
                    Err(error) => Loading::Failed(error),
                });
            }
        }
        _ => {}
    }
    Vec::new()
}
