//! Keys → [`Action`]s, in one place (k9s / lazygit conventions). The App never sees a
//! key: tests drive it with actions. [`KEYS`] is what the help screen lists.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::app::{App, Dialog, View};

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

/// The action for `key` in the App's current state, if any.
pub fn action_for(app: &App, key: KeyEvent) -> Option<Action> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return matches!(key.code, KeyCode::Char('c')).then_some(Action::Quit);
    }
    let typing = app.editing.is_some()
        || (!app.help && matches!(app.dialog, Some(Dialog::ConfirmShrink { .. })));
    if typing {
        return match key.code {
            KeyCode::Char(c) => Some(Action::Input(c)),
            KeyCode::Backspace => Some(Action::Backspace),
            KeyCode::Enter => Some(Action::Submit),
            KeyCode::Esc => Some(Action::Back),
            _ => None,
        };
    }
    let in_dialog = app.dialog.is_some();
    Some(match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Char('?') => Action::Help,
        KeyCode::Esc => Action::Back,
        KeyCode::Char('1') => Action::Show(View::Inbox),
        KeyCode::Char('2') => Action::Show(View::Quarantine),
        KeyCode::Char('3') => Action::Show(View::History),
        KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => Action::NextPane,
        KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => Action::PrevPane,
        KeyCode::Char('j') | KeyCode::Down => Action::Down,
        KeyCode::Char('k') | KeyCode::Up => Action::Up,
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Enter => Action::Open,
        KeyCode::Char('r') => Action::Run,
        KeyCode::Char('y') => Action::Confirm,
        KeyCode::Char('n') if in_dialog => Action::Decline,
        KeyCode::Char('n') => Action::NextMark,
        KeyCode::Char('N') => Action::PrevMark,
        KeyCode::Char('c') => Action::Cancel,
        KeyCode::Char('/') => Action::Filter,
        KeyCode::Char('R') => Action::Reload,
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
            action_for(&app, key(KeyCode::Char('q'))),
            Some(Action::Quit)
        ));
        assert!(matches!(
            action_for(&app, key(KeyCode::Char('n'))),
            Some(Action::NextMark)
        ));
        assert!(matches!(
            action_for(&app, key(KeyCode::BackTab)),
            Some(Action::PrevPane)
        ));
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(matches!(action_for(&app, ctrl_c), Some(Action::Quit)));
        app.editing = Some(String::new());
        assert!(matches!(
            action_for(&app, key(KeyCode::Char('q'))),
            Some(Action::Input('q'))
        ));
        assert!(matches!(
            action_for(&app, key(KeyCode::Esc)),
            Some(Action::Back)
        ));
    }
}
