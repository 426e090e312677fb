//! A fresh read of the state on disk ([`Report::Loaded`](crate::console::msg::Report)):
//! the inbox rows and their badges, the cursor that follows the selected input, the
//! hashing of what is stale, and the other views' lists.

use super::inbox::{replan, select};
use crate::console::app::{App, Badge, InboxRow, InboxState, Stamp};
use crate::console::msg::{Effect, Snapshot};
use crate::inbox::InboxEntry;

/// Applies a fresh read of the state on disk.
pub fn loaded(app: &mut App, snapshot: Snapshot) -> Vec<Effect> {
    let inbox = &mut app.inbox;
    inbox.checkpoints = snapshot.checkpoints.into_iter().collect();
    inbox.standing = snapshot.standing.into_iter().collect();
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
    inbox.all = rows;
    inbox.refilter();
    let rows = &inbox.rows;
    inbox.cursor = match &inbox.selected {
        Some(path) => rows
            .iter()
            .position(|r| &r.entry.path == path)
            .unwrap_or(inbox.cursor),
        None => inbox.cursor,
    }
    .min(rows.len().saturating_sub(1));
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
    h.all_runs = snapshot.runs.into_iter().rev().collect();
    h.refilter();
    h.partitions = snapshot.partitions;
    h.table = snapshot.table;
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
/// While something is open over the views nothing moves: the cursor stays on the
/// selected input, and [`super::update`] places it once that closes.
pub fn place_cursor(app: &mut App) -> Vec<Effect> {
    if app.overlay_open() {
        return Vec::new();
    }
    if app.inbox.auto_cursor {
        let rows = &app.inbox.rows;
        let open = |r: &&InboxRow| {
            matches!(
                r.badge,
                Badge::New | Badge::Changed | Badge::Refused | Badge::Unreadable
            )
        };
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
    if inbox
        .unreadable
        .get(&entry.path)
        .is_some_and(|(s, _)| *s == stamp(entry))
    {
        return Badge::Unreadable;
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
