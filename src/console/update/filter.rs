//! A `/` filter being typed: the Ranked tab's by key, the Quarantine list's by input
//! name. It applies as it is typed; Enter keeps it, Esc clears it.

use super::detail::ranked_rows;
use crate::console::app::{App, Loading, Pane, View};
use crate::console::msg::{Effect, Intent};

/// An intent while a `/` filter is being typed: it applies as it is typed.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    let Some(mut text) = app.editing.take() else {
        return Vec::new();
    };
    match intent {
        Intent::Input(c) if text.chars().count() < 64 => text.push(c),
        Intent::Backspace => {
            text.pop();
        }
        Intent::Submit => {
            apply_filter(app, text);
            return Vec::new();
        }
        Intent::Back => {
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
