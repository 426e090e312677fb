//! Keys → [`Intent`]s, in one place (k9s / lazygit conventions). The App never sees a
//! key: tests drive it with intents. [`intent_for`] looks each key up in
//! [`super::bindings::KEYS`], the table the help screen lists.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Dialog};
use super::bindings::{KEYS, Scope};
use super::msg::Intent;

/// The intent for `key` in the App's current state, if the table binds it.
pub fn intent_for(app: &App, key: KeyEvent) -> Option<Intent> {
    let typing = app.editing.is_some()
        || (!app.help
            && matches!(
                app.dialog,
                Some(Dialog::ConfirmShrink { .. } | Dialog::ConfirmReland { .. })
            ));
    let scopes: &[Scope] = if typing {
        &[Scope::Typing]
    } else if app.dialog.is_some() {
        &[Scope::Dialog, Scope::Browsing]
    } else {
        &[Scope::Browsing]
    };
    let found = scopes.iter().find_map(|scope| bound(*scope, &key));
    let chord = key.modifiers.contains(KeyModifiers::CONTROL);
    match found {
        None if typing && chord => bound(Scope::Browsing, &key),
        found => found,
    }
}

/// The intent the table binds `key` to in `scope`.
fn bound(scope: Scope, key: &KeyEvent) -> Option<Intent> {
    let rows = KEYS
        .iter()
        .flat_map(|g| g.rows)
        .filter(|r| r.scope == scope);
    let mut bindings = rows.flat_map(|r| r.parts.iter().copied().flatten());
    let (_, intent) = bindings.find(|(k, _)| k.matches(key))?;
    Some(match (intent, key.code) {
        (Intent::Input(_), KeyCode::Char(c)) => Intent::Input(c),
        (intent, _) => *intent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console::app::PartitionRow;
    use crate::console::theme;

    fn app() -> App {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/wharf.toml");
        let config = crate::config::Config::load(&root).unwrap();
        App::new(std::sync::Arc::new(config), theme::embedded("dark"))
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    /// The App browsing, with a dialog open, and typing a filter.
    fn modes() -> Vec<(&'static str, App)> {
        let mut dialog = app();
        dialog.dialog = Some(Dialog::ConfirmRestore {
            partition: PartitionRow {
                date: "2024-03-01".into(),
                rows: 3,
                owner: None,
                owner_sha256: None,
                owner_parts: Vec::new(),
                published_at: None,
                previous: None,
                generations: 0,
            },
        });
        let mut typing = app();
        typing.editing = Some(String::new());
        vec![("browsing", app()), ("dialog", dialog), ("typing", typing)]
    }

    /// Every key a terminal might send, with and without modifiers.
    fn every_key() -> Vec<KeyEvent> {
        let mut codes: Vec<KeyCode> = (' '..='~').chain(['é', 'ß']).map(KeyCode::Char).collect();
        codes.extend([
            KeyCode::Esc,
            KeyCode::Enter,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Insert,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::F(1),
            KeyCode::F(5),
            KeyCode::Null,
        ]);
        let modifiers = [
            KeyModifiers::NONE,
            KeyModifiers::SHIFT,
            KeyModifiers::CONTROL,
            KeyModifiers::ALT,
        ];
        codes
            .iter()
            .flat_map(|code| modifiers.map(|m| KeyEvent::new(*code, m)))
            .collect()
    }

    #[test]
    fn keys_follow_the_conventions() {
        let mut app = app();
        for (code, want) in [
            (KeyCode::Char('q'), Intent::Quit),
            (KeyCode::Char('n'), Intent::NextMark),
            (KeyCode::BackTab, Intent::PrevPane),
            (KeyCode::Char('h'), Intent::PrevPane),
            (KeyCode::Char('l'), Intent::NextPane),
            (KeyCode::End, Intent::Bottom),
        ] {
            assert_eq!(intent_for(&app, key(code)), Some(want), "{code:?}");
        }
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(intent_for(&app, ctrl('c')), Some(Intent::Quit));
        assert_eq!(
            intent_for(&app, ctrl('r')),
            Some(Intent::Reload),
            "Ctrl-R is not r"
        );
        assert_eq!(
            intent_for(&app, key(KeyCode::Char('R'))),
            Some(Intent::Rerun)
        );
        app.editing = Some(String::new());
        assert_eq!(
            intent_for(&app, key(KeyCode::Char('q'))),
            Some(Intent::Input('q'))
        );
        assert_eq!(intent_for(&app, key(KeyCode::Esc)), Some(Intent::Back));
        assert_eq!(intent_for(&app, key(KeyCode::Down)), None);
        assert_eq!(
            intent_for(&app, ctrl('c')),
            Some(Intent::Quit),
            "while typing"
        );
    }

    #[test]
    fn every_key_the_keymap_answers_is_listed_for_that_mode() {
        for (mode, app) in modes() {
            for event in every_key() {
                let Some(intent) = intent_for(&app, event) else {
                    continue;
                };
                let listed = KEYS.iter().flat_map(|g| g.rows).any(|row| {
                    let mut bindings = row.parts.iter().copied().flatten();
                    bindings.any(|(k, i)| {
                        let same = i == &intent
                            || matches!((i, intent), (Intent::Input(_), Intent::Input(_)));
                        k.matches(&event) && same && row.label().contains(&k.label())
                    })
                });
                assert!(listed, "{mode}: {event:?} gives {intent:?}, unlisted");
            }
        }
    }

    #[test]
    fn a_key_means_one_thing_in_a_scope() {
        for scope in [Scope::Browsing, Scope::Dialog, Scope::Typing] {
            let rows = KEYS
                .iter()
                .flat_map(|g| g.rows)
                .filter(|r| r.scope == scope);
            let bindings: Vec<_> = rows
                .flat_map(|r| r.parts.iter().copied().flatten())
                .collect();
            for (a, x) in &bindings {
                for (b, y) in &bindings {
                    assert!(a != b || x == y, "{scope:?}: {a:?} is {x:?} and {y:?}");
                }
            }
        }
    }

    #[test]
    fn the_footer_names_the_first_browsing_key_of_an_intent() {
        use crate::console::bindings::{Key, key_of};
        assert_eq!(key_of(Intent::Down), Some(Key::Char('j')));
        assert_eq!(key_of(Intent::NextPane), Some(Key::Tab));
        assert_eq!(key_of(Intent::Cancel), Some(Key::Char('c')));
        assert_eq!(
            key_of(Intent::Confirm),
            None,
            "a dialog's key is no browsing hint"
        );
    }
}
