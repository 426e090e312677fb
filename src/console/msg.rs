//! The reports half of [`super::update`]: what the App does with a worker's or the
//! runtime's [`Msg`]. A result whose id is no longer the one the App waits for (the
//! operator moved on, or cancelled) is dropped.

use super::action::{Effect, Msg, Snapshot};
use super::app::{
    App, Badge, Dialog, Finished, InboxRow, InboxState, Loading, PlanState, Rejects, Stamp,
};
use super::inbox::{replan, select, window};
use super::panes::ranked_rows;
use crate::inbox::InboxEntry;

/// Applies one report.
pub fn on_msg(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Loaded(snapshot) => return loaded(app, *snapshot),
        Msg::LoadFailed(error) => app.error(error),
        Msg::Hashed {
            path,
            stamp,
            sha256,
        } => {
            app.inbox.hashes.insert(path.clone(), (stamp, sha256));
            if let Some(i) = app.inbox.rows.iter().position(|r| r.entry.path == path) {
                app.inbox.rows[i].badge = badge(&app.inbox, &app.inbox.rows[i].entry);
            }
            return place_cursor(app);
        }
        Msg::HashingDone { id } if app.inbox.hashing == Some(id) => app.inbox.hashing = None,
        Msg::PlanProgress { id, bytes, total } => {
            if let PlanState::Running { id: want, .. } = app.inbox.plan
                && want == id
            {
                app.inbox.plan = PlanState::Running { id, bytes, total };
            }
        }
        Msg::Planned { id, result, .. } => {
            if matches!(app.inbox.plan, PlanState::Running { id: want, .. } if want == id) {
                app.inbox.plan = match result {
                    Ok(plan) => PlanState::Ready(plan),
                    Err(error) => PlanState::Failed(error),
                };
            }
        }
        Msg::LandProgress { id, progress } => {
            if let Some(task) = app.task.as_mut().filter(|t| t.id == id) {
                task.progress = Some(progress);
            }
        }
        Msg::Landed { id, result } if app.task.as_ref().is_some_and(|t| t.id == id) => {
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
            let mut effects = vec![Effect::Reload];
            effects.extend(replan(app));
            return effects;
        }
        Msg::Restored { id, result } if app.task.as_ref().is_some_and(|t| t.id == id) => {
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
        Msg::IndexProgress { id, bytes, total } => {
            if matches!(app.raw.index, Loading::Running { id: want, .. } if want == id) {
                app.raw.index = Loading::Running { id, bytes, total };
            }
        }
        Msg::Indexed { id, result } => {
            if matches!(app.raw.index, Loading::Running { id: want, .. } if want == id) {
                app.raw.index = match result {
                    Ok(index) => Loading::Ready(index),
                    Err(error) => Loading::Failed(error),
                };
                app.raw.window.clear();
                return window(app).into_iter().collect();
            }
        }
        Msg::Window {
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
        Msg::RankProgress { id, bytes, total } => {
            if matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
                app.ranked.data = Loading::Running { id, bytes, total };
            }
        }
        Msg::Ranked { id, result } => {
            if matches!(app.ranked.data, Loading::Running { id: want, .. } if want == id) {
                match result {
                    Ok(ranked) => {
                        app.ranked.rows = ranked_rows(&ranked, &app.ranked.filter);
                        app.ranked.cursor = 0;
                        app.ranked.data = Loading::Ready(ranked);
                    }
                    Err(error) => app.ranked.data = Loading::Failed(error),
                }
            }
        }
        Msg::Rejects { result } => match result.map(|boxed| *boxed) {
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
        Msg::RawLine { id, result } => {
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

/// A fresh read of the state on disk.
fn loaded(app: &mut App, snapshot: Snapshot) -> Vec<Effect> {
    let inbox = &mut app.inbox;
    inbox.checkpoints = snapshot.checkpoints.into_iter().collect();
    inbox.quarantined = snapshot
        .quarantine
        .iter()
        .map(|q| (q.input_sha256.clone(), q.action.clone()))
        .collect();
    inbox.quarantined_names = snapshot
        .quarantine
        .iter()
        .map(|q| q.input_name.clone())
        .collect();
    let rows: Vec<InboxRow> = snapshot
        .inbox
        .into_iter()
        .map(|entry| InboxRow {
            badge: badge(inbox, &entry),
            entry,
        })
        .collect();
    inbox.cursor = match &inbox.selected {
        Some(path) => rows
            .iter()
            .position(|r| &r.entry.path == path)
            .unwrap_or(inbox.cursor),
        None => inbox.cursor,
    }
    .min(rows.len().saturating_sub(1));
    inbox.rows = rows;
    let mut effects = Vec::new();
    let stale: Vec<_> = inbox
        .rows
        .iter()
        .filter(|r| r.badge == Badge::Hashing)
        .map(|r| (r.entry.path.clone(), stamp(&r.entry)))
        .collect();
    if let Some(id) = inbox.hashing.take() {
        effects.push(Effect::Cancel { id });
    }
    if !stale.is_empty() {
        let id = app.id();
        app.inbox.hashing = Some(id);
        effects.push(Effect::Hash { id, files: stale });
    }

    let q = &mut app.quarantine;
    q.entries = snapshot.quarantine;
    q.cursor = q.cursor.min(q.entries.len().saturating_sub(1));
    let h = &mut app.history;
    h.runs = snapshot.runs.into_iter().rev().collect();
    h.partitions = snapshot.partitions;
    h.run_cursor = h.run_cursor.min(h.runs.len().saturating_sub(1));
    h.partition_cursor = h.partition_cursor.min(h.partitions.len().saturating_sub(1));
    if !snapshot.problems.is_empty() {
        app.error(snapshot.problems.join("; "));
    }

    // The selected input changed on disk: plan it again.
    let changed = match (app.current(), app.inbox.planned) {
        (Some(row), Some(planned)) => {
            app.inbox.selected.as_ref() == Some(&row.entry.path) && stamp(&row.entry) != planned
        }
        _ => false,
    };
    if changed {
        app.raw = Default::default();
        app.ranked.path = None;
        effects.extend(replan(app));
    }
    effects.extend(place_cursor(app));
    effects
}

/// While the operator has not moved it, the cursor sits on the oldest input not yet
/// landed (an input still being hashed counts as landed until its hash says otherwise).
fn place_cursor(app: &mut App) -> Vec<Effect> {
    if app.inbox.auto_cursor {
        let rows = &app.inbox.rows;
        let open = |r: &&InboxRow| matches!(r.badge, Badge::New | Badge::Changed | Badge::Refused);
        let closed = |r: &&InboxRow| !matches!(r.badge, Badge::Ignored(_));
        let target = rows
            .iter()
            .position(|r| open(&r))
            .or_else(|| rows.iter().position(|r| closed(&r)));
        if let Some(target) = target {
            app.inbox.cursor = target;
        }
    }
    select(app)
}

fn stamp(entry: &InboxEntry) -> Stamp {
    Stamp {
        size: entry.size,
        modified: entry.modified,
    }
}

/// An entry's badge from what is known: checkpoints, quarantine and hashes.
pub fn badge(inbox: &InboxState, entry: &InboxEntry) -> Badge {
    if let Some(why) = entry.ignored {
        return Badge::Ignored(why);
    }
    let checkpoint = inbox.checkpoints.get(&entry.name);
    let known = inbox
        .hashes
        .get(&entry.path)
        .filter(|(s, _)| *s == stamp(entry))
        .map(|(_, sha)| sha);
    match known {
        None if checkpoint.is_none() && !inbox.quarantined_names.contains(&entry.name) => {
            Badge::New
        }
        None => Badge::Hashing,
        Some(sha) if checkpoint == Some(sha) => Badge::Landed,
        Some(sha) if inbox.quarantined.get(sha).is_some_and(|a| a == "refused") => Badge::Refused,
        Some(_) if checkpoint.is_some() => Badge::Changed,
        Some(_) => Badge::New,
    }
}
