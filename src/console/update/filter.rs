//! A `/` filter being typed: the Inbox and Quarantine lists' by input name, the Ranked and
//! Changes tabs' and a landing's diff's (History) by key. It applies as it is typed;
//! Enter keeps it, Esc clears it. While it is open every key is text, never a command.

use std::sync::Arc;

use super::detail::ranked_window;
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
        Intent::Submit => return apply_filter(app, text).into_iter().collect(),
        Intent::Back => return apply_filter(app, String::new()).into_iter().collect(),
        _ => {}
    }
    let effect = apply_filter(app, text.clone());
    app.editing = Some(text);
    effect.into_iter().collect()
}

/// Applies a filter as typed so far, with the Ranked rows it lets through read back.
fn apply_filter(app: &mut App, text: String) -> Option<Effect> {
    if app.view == View::Inbox && app.pane == Pane::List {
        app.inbox.filter = text;
        app.inbox.refilter();
    } else if app.view == View::Quarantine {
        app.quarantine.filter = text;
        app.quarantine.cursor = 0;
    } else if app.view == View::History {
        match app.history.diff.as_mut() {
            Some(diff) => {
                diff.state.filter = text;
                diff.state.refilter();
            }
            None => {
                app.history.filter = text;
                app.history.refilter();
            }
        }
    } else if app.detail_tab() == Pane::Ranked {
        if app.ranked.filter == text && !app.ranked.window.is_empty() {
            return None;
        }
        app.ranked.filter = text;
        app.ranked.cursor = 0;
        app.ranked.window.clear();
        app.ranked.rows = match &app.ranked.data {
            Loading::Ready(ranked) => Arc::new(ranked.filter(&app.ranked.filter)),
            _ => Arc::default(),
        };
        return ranked_window(app);
    } else if app.detail_tab() == Pane::Changes {
        app.changes.filter = text;
        app.changes.refilter();
    }
    None
}
