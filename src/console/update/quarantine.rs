//! The Quarantine view: the entries, then one input's rejects, then one raw line (asked
//! for only while its input is still in the inbox with the same bytes).

use super::cursor::move_cursor;
use crate::console::app::{App, Badge, Loading};
use crate::console::msg::{Effect, Intent};

/// An intent in the Quarantine view.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    let page = app.page();
    if let Some(rejects) = &mut app.quarantine.rejects {
        if rejects.raw.is_some() {
            if matches!(intent, Intent::Back | Intent::Open) {
                rejects.raw = None;
            }
            return Vec::new();
        }
        if move_cursor(&mut rejects.cursor, rejects.records.len(), intent, page) {
            return Vec::new();
        }
        match intent {
            Intent::Back => app.quarantine.rejects = None,
            Intent::Open => return raw_line(app),
            _ => {}
        }
        return Vec::new();
    }
    let visible = app.quarantine.visible();
    if move_cursor(&mut app.quarantine.cursor, visible.len(), intent, page) {
        return Vec::new();
    }
    match intent {
        Intent::Open => {
            if let Some(entry) = visible
                .get(app.quarantine.cursor)
                .map(|i| &app.quarantine.entries[*i])
            {
                return vec![Effect::Rejects {
                    sha256: entry.input_sha256.clone(),
                }];
            }
        }
        Intent::Back if !app.quarantine.filter.is_empty() => {
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
    let (path, file, line, sha256) = (
        row.entry.path.clone(),
        record.file.clone(),
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
        file,
        line,
        sha256,
    }]
}
