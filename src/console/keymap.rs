//! Keys → [`Intent`]s, in one place (k9s / lazygit conventions). The App never sees a
//! key: tests drive it with intents. [`KEYS`] is what the help screen lists.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Dialog, View};
use super::msg::Intent;

/// Every key, grouped for the help screen: (keys, what they do).
pub const KEYS: &[(&str, &[(&str, &str)])] = &[
    (
        "Everywhere",
        &[
            (
                "? · q  Ctrl-C",
                "help · quit (not while a landing or restore runs)",
            ),
            ("Esc", "back: close, cancel work in progress, leave a pane"),
            ("1 2 3", "Inbox · Quarantine · History"),
            ("Tab Shift-Tab → ←", "next / previous pane"),
            ("j k ↓ ↑ g G PgUp PgDn", "move · first / last · a page"),
            ("/", "filter (Ranked: by key; Quarantine: by input name)"),
            ("R", "read the inbox and the state again"),
        ],
    ),
    (
        "Inbox",
        &[
            ("Enter", "plan the input (right pane: Plan, Raw, Ranked)"),
            ("r", "run: confirm, then land the selected input"),
            ("c", "cancel planning / indexing / ranking"),
            ("n N", "next / previous reject (Raw) or tie (Ranked)"),
        ],
    ),
    (
        "Confirmations",
        &[
            ("y · n  Esc", "yes, do it · no, cancel: nothing is written"),
            ("shrink Enter", "type the word to allow a shrinking date"),
        ],
    ),
    (
        "Quarantine · History",
        &[
            ("Enter", "an input's rejects → one raw line (masked)"),
            ("r", "restore a partition's previous generation"),
        ],
    ),
];

/// The intent for `key` in the App's current state, if any.
pub fn intent_for(app: &App, key: KeyEvent) -> Option<Intent> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return matches!(key.code, KeyCode::Char('c')).then_some(Intent::Quit);
    }
    let typing = app.editing.is_some()
        || (!app.help && matches!(app.dialog, Some(Dialog::ConfirmShrink { .. })));
    if typing {
        return match key.code {
            KeyCode::Char(c) => Some(Intent::Input(c)),
            KeyCode::Backspace => Some(Intent::Backspace),
            KeyCode::Enter => Some(Intent::Submit),
            KeyCode::Esc => Some(Intent::Back),
            _ => None,
        };
    }
    let in_dialog = app.dialog.is_some();
    Some(match key.code {
        KeyCode::Char('q') => Intent::Quit,
        KeyCode::Char('?') => Intent::Help,
        KeyCode::Esc => Intent::Back,
        KeyCode::Char('1') => Intent::Show(View::Inbox),
        KeyCode::Char('2') => Intent::Show(View::Quarantine),
        KeyCode::Char('3') => Intent::Show(View::History),
        KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => Intent::NextPane,
        KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => Intent::PrevPane,
        KeyCode::Char('j') | KeyCode::Down => Intent::Down,
        KeyCode::Char('k') | KeyCode::Up => Intent::Up,
        KeyCode::Char('g') | KeyCode::Home => Intent::Top,
        KeyCode::Char('G') | KeyCode::End => Intent::Bottom,
        KeyCode::PageUp => Intent::PageUp,
        KeyCode::PageDown => Intent::PageDown,
        KeyCode::Enter => Intent::Open,
        KeyCode::Char('r') => Intent::Run,
        KeyCode::Char('y') => Intent::Confirm,
        KeyCode::Char('n') if in_dialog => Intent::Decline,
        KeyCode::Char('n') => Intent::NextMark,
        KeyCode::Char('N') => Intent::PrevMark,
        KeyCode::Char('c') => Intent::Cancel,
        KeyCode::Char('/') => Intent::Filter,
        KeyCode::Char('R') => Intent::Reload,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::theme;

    fn app() -> App {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/wharf.toml");
        let config = crate::config::Config::load(&root).unwrap();
        App::new(std::sync::Arc::new(config), theme::embedded("dark"))
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_follow_the_conventions() {
        let mut app = app();
        assert!(matches!(
            intent_for(&app, key(KeyCode::Char('q'))),
            Some(Intent::Quit)
        ));
        assert!(matches!(
            intent_for(&app, key(KeyCode::Char('n'))),
            Some(Intent::NextMark)
        ));
        assert!(matches!(
            intent_for(&app, key(KeyCode::BackTab)),
            Some(Intent::PrevPane)
        ));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(matches!(intent_for(&app, ctrl_c), Some(Intent::Quit)));
        app.editing = Some(String::new());
        assert!(matches!(
            intent_for(&app, key(KeyCode::Char('q'))),
            Some(Intent::Input('q'))
        ));
        assert!(matches!(
            intent_for(&app, key(KeyCode::Esc)),
            Some(Intent::Back)
        ));
    }
}
