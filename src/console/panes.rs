//! Shared pieces of [`super::update`]: moving a cursor through a list, typing a `/`
//! filter, and the Quarantine view (entries → one input's rejects → one raw line).

use super::action::{Action, Effect};
use super::app::{App, Badge, Loading, Pane, QuarantineState, View};
use super::ranked::Ranked;

/// Moves `cursor` in a list of `len` for a movement action; `false` if `action` is not one.
pub fn move_cursor(cursor: &mut usize, len: usize, action: &Action, page: usize) -> bool {
    let last = len.saturating_sub(1);
    *cursor = match action {
        Action::Up => cursor.saturating_sub(1),
        Action::Down => (*cursor + 1).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        Action::PageUp => cursor.saturating_sub(page),
        Action::PageDown => (*cursor + page).min(last),
        _ => return false,
    };
    true
}

/// Keys while a `/` filter is being typed: it applies as it is typed.
pub fn edit_filter(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(mut text) = app.editing.take() else {
        return Vec::new();
    };
    match action {
        Action::Input(c) if text.chars().count() < 64 => text.push(c),
        Action::Backspace => {
            text.pop();
        }
        Action::Submit => {
            apply_filter(app, text);
            return Vec::new();
        }
        Action::Back => {
            apply_filter(app, String::new());
            return Vec::new();
        }
        _ => {}
    }
    apply_filter(app, text.clone());
    app.editing = Some(text);
    Vec::new()
}

fn apply_filter(app: &mut App, text: String) {
    if app.view == View::Quarantine {
        app.quarantine.filter = text;
        app.quarantine.cursor = 0;
    } else if app.detail_tab() == Pane::Ranked {
        app.ranked.filter = text;
        app.ranked.cursor = 0;
        app.ranked.rows = match &app.ranked.data {
            Loading::Ready(ranked) => ranked_rows(ranked, &app.ranked.filter),
            _ => Vec::new(),
        };
    }
}

/// Every `(group, row)` of `ranked` whose key contains `filter`.
pub fn ranked_rows(ranked: &Ranked, filter: &str) -> Vec<(u32, u32)> {
    ranked
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| filter.is_empty() || g.key.contains(filter))
        .flat_map(|(g, group)| (0..group.rows.len()).map(move |r| (g as u32, r as u32)))
        .collect()
}

/// The quarantine entries that pass the filter (indexes into `entries`).
pub fn visible_entries(q: &QuarantineState) -> Vec<usize> {
    q.entries
        .iter()
        .enumerate()
        .filter(|(_, e)| q.filter.is_empty() || e.input_name.contains(&q.filter))
        .map(|(i, _)| i)
        .collect()
}

/// An action in the Quarantine view.
pub fn quarantine(app: &mut App, action: Action) -> Vec<Effect> {
    let page = app.page();
    if let Some(rejects) = &mut app.quarantine.rejects {
        if rejects.raw.is_some() {
            if matches!(action, Action::Back | Action::Open) {
                rejects.raw = None;
            }
            return Vec::new();
        }
        if move_cursor(&mut rejects.cursor, rejects.records.len(), &action, page) {
            return Vec::new();
        }
        match action {
            Action::Back => app.quarantine.rejects = None,
            Action::Open => return raw_line(app),
            _ => {}
        }
        return Vec::new();
    }
    let visible = visible_entries(&app.quarantine);
    if move_cursor(&mut app.quarantine.cursor, visible.len(), &action, page) {
        return Vec::new();
    }
    match action {
        Action::Open => {
            if let Some(entry) = visible
                .get(app.quarantine.cursor)
                .map(|i| &app.quarantine.entries[*i])
            {
                return vec![Effect::Rejects {
                    sha256: entry.input_sha256.clone(),
                }];
            }
        }
        Action::Back if !app.quarantine.filter.is_empty() => {
            app.quarantine.filter.clear();
            app.quarantine.cursor = 0;
        }
        _ => {}
    }
    Vec::new()
}

/// Asks for the raw line under the rejects cursor, if its input is still in the inbox.
fn raw_line(app: &mut App) -> Vec<Effect> {
    let Some(rejects) = &app.quarantine.rejects else {
        return Vec::new();
    };
    let Some(record) = rejects.records.get(rejects.cursor) else {
        return Vec::new();
    };
    let name = &rejects.summary.input_name;
    let Some(row) = app
        .inbox
        .rows
        .iter()
        .find(|r| &r.entry.name == name && !matches!(r.badge, Badge::Ignored(_)))
    else {
        let text = format!("{name} is no longer in the inbox; its raw lines cannot be shown");
        app.warn(text);
        return Vec::new();
    };
    let (path, line, sha256) = (
        row.entry.path.clone(),
        record.line,
        rejects.summary.input_sha256.clone(),
    );
    let id = app.id();
    if let Some(rejects) = &mut app.quarantine.rejects {
        rejects.raw = Some(Loading::Running {
            id,
            bytes: 0,
            total: 0,
        });
    }
    vec![Effect::RawLine {
        id,
        path,
        line,
        sha256,
    }]
}
