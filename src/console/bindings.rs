//! [`KEYS`]: every key binding of the console, grouped as the help screen lists them.
//! It is the one table: [`super::keymap`] looks every key up in it and the help screen
//! draws it, so no key is bound without being listed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::View;
use super::msg::Intent;

/// A key as the table binds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    /// Ctrl and a letter.
    Ctrl(char),
    /// Any character, while text is typed; bound to [`Intent::Input`] of that character.
    Text,
    Esc,
    Enter,
    Tab,
    /// Shift-Tab.
    BackTab,
    Backspace,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    PageUp,
    PageDown,
}

impl Key {
    /// How the help screen writes it.
    pub fn label(self) -> String {
        let name = match self {
            Key::Char(c) => return c.to_string(),
            Key::Ctrl(c) => return format!("Ctrl-{}", c.to_ascii_uppercase()),
            Key::Text => "text",
            Key::Esc => "Esc",
            Key::Enter => "Enter",
            Key::Tab => "Tab",
            Key::BackTab => "Shift-Tab",
            Key::Backspace => "Backspace",
            Key::Left => "←",
            Key::Right => "→",
            Key::Up => "↑",
            Key::Down => "↓",
            Key::Home => "Home",
            Key::End => "End",
            Key::PageUp => "PgUp",
            Key::PageDown => "PgDn",
        };
        name.to_owned()
    }

    /// Whether `event` is this key. Other modifiers than Ctrl do not matter (a terminal
    /// sends `G` with Shift, some send Alt with what they mean as a plain key).
    pub fn matches(self, event: &KeyEvent) -> bool {
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        match (self, event.code) {
            (Key::Char(want), KeyCode::Char(c)) => !ctrl && c == want,
            (Key::Ctrl(want), KeyCode::Char(c)) => ctrl && c == want,
            (Key::Text, KeyCode::Char(_)) => !ctrl,
            (key, code) => {
                code == match key {
                    Key::Esc => KeyCode::Esc,
                    Key::Enter => KeyCode::Enter,
                    Key::Tab => KeyCode::Tab,
                    Key::BackTab => KeyCode::BackTab,
                    Key::Backspace => KeyCode::Backspace,
                    Key::Left => KeyCode::Left,
                    Key::Right => KeyCode::Right,
                    Key::Up => KeyCode::Up,
                    Key::Down => KeyCode::Down,
                    Key::Home => KeyCode::Home,
                    Key::End => KeyCode::End,
                    Key::PageUp => KeyCode::PageUp,
                    Key::PageDown => KeyCode::PageDown,
                    Key::Char(_) | Key::Ctrl(_) | Key::Text => return false,
                }
            }
        }
    }
}

/// When a row's keys apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Whenever no text is typed, dialogs included.
    Browsing,
    /// While a dialog is open; these come before the browsing keys.
    Dialog,
    /// While a `/` filter or the word `shrink` is typed: only these, and Ctrl chords
    /// (which cannot be typed) keep their browsing meaning.
    Typing,
}

/// One line of the help screen: its keys, what they do, and when.
pub struct Row {
    pub scope: Scope,
    /// Keys and the intent each gives, in parts the help joins with ` · `, as `what`
    /// joins what the parts do.
    pub parts: &'static [&'static [(Key, Intent)]],
    pub what: &'static str,
}

impl Row {
    /// The keys as the help writes them: `j ↓ · k ↑`.
    pub fn label(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|part| {
                let keys: Vec<String> = part.iter().map(|(key, _)| key.label()).collect();
                keys.join(" ")
            })
            .collect();
        parts.join(" · ")
    }
}

/// A heading of the help screen and its rows.
pub struct Group {
    pub title: &'static str,
    pub rows: &'static [Row],
}

/// Stands for the character typed in `(Key::Text, Intent::Input(TYPED))`.
const TYPED: char = ' ';

/// Every binding, grouped for the help screen.
pub const KEYS: &[Group] = &[
    Group {
        title: "Everywhere",
        rows: &[
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[(Key::Char('?'), Intent::Help)],
                    &[
                        (Key::Char('q'), Intent::Quit),
                        (Key::Ctrl('c'), Intent::Quit),
                    ],
                ],
                what: "help · quit (not while landing or restoring)",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Esc, Intent::Back)]],
                what: "back: close, cancel work, leave a pane",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[
                    (Key::Char('1'), Intent::Show(View::Inbox)),
                    (Key::Char('2'), Intent::Show(View::Quarantine)),
                    (Key::Char('3'), Intent::Show(View::History)),
                ]],
                what: "Inbox · Quarantine · History",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[
                        (Key::Tab, Intent::NextPane),
                        (Key::Right, Intent::NextPane),
                        (Key::Char('l'), Intent::NextPane),
                    ],
                    &[
                        (Key::BackTab, Intent::PrevPane),
                        (Key::Left, Intent::PrevPane),
                        (Key::Char('h'), Intent::PrevPane),
                    ],
                ],
                what: "next · previous pane",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[(Key::Char('j'), Intent::Down), (Key::Down, Intent::Down)],
                    &[(Key::Char('k'), Intent::Up), (Key::Up, Intent::Up)],
                    &[(Key::PageDown, Intent::PageDown)],
                    &[(Key::PageUp, Intent::PageUp)],
                ],
                what: "down · up · a page down · up",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[(Key::Char('g'), Intent::Top), (Key::Home, Intent::Top)],
                    &[(Key::Char('G'), Intent::Bottom), (Key::End, Intent::Bottom)],
                ],
                what: "first · last",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Char('/'), Intent::Filter)]],
                what: "filter: names (lists) · keys (Ranked, Changes)",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Ctrl('r'), Intent::Reload)]],
                what: "read the inbox and the state again",
            },
        ],
    },
    Group {
        title: "Inbox",
        rows: &[
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Enter, Intent::Open)]],
                what: "plan · go to a Ranked row's or a repeat's line",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[(Key::Char('r'), Intent::Run)],
                    &[(Key::Char('R'), Intent::Rerun)],
                ],
                what: "run · rerun a landed input: plan, r, its name",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Char('c'), Intent::Cancel)]],
                what: "cancel planning / indexing / ranking / diffing",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[
                    &[(Key::Char('n'), Intent::NextMark)],
                    &[(Key::Char('N'), Intent::PrevMark)],
                    &[(Key::Char('f'), Intent::NextShown)],
                ],
                what: "next · previous reject/tie/date · Changes' kind",
            },
        ],
    },
    Group {
        title: "Confirmations · typing a filter or shrink",
        rows: &[
            Row {
                scope: Scope::Dialog,
                parts: &[
                    &[(Key::Char('y'), Intent::Confirm)],
                    &[(Key::Char('n'), Intent::Decline), (Key::Esc, Intent::Back)],
                ],
                what: "yes, do it · no, cancel: nothing is written",
            },
            Row {
                scope: Scope::Typing,
                parts: &[
                    &[(Key::Text, Intent::Input(TYPED))],
                    &[(Key::Backspace, Intent::Backspace)],
                ],
                what: "type · erase",
            },
            Row {
                scope: Scope::Typing,
                parts: &[&[(Key::Enter, Intent::Submit)], &[(Key::Esc, Intent::Back)]],
                what: "keep filter, confirm typed word · clear, cancel",
            },
        ],
    },
    Group {
        title: "Quarantine · History",
        rows: &[
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Enter, Intent::Open)]],
                what: "rejects → a raw line · what a landing changed",
            },
            Row {
                scope: Scope::Browsing,
                parts: &[&[(Key::Char('r'), Intent::Run)]],
                what: "restore a partition's previous generation",
            },
        ],
    },
];

/// The first key [`KEYS`] binds to `intent` while browsing: the one the footer names.
pub fn key_of(intent: Intent) -> Option<Key> {
    KEYS.iter()
        .flat_map(|group| group.rows)
        .filter(|row| row.scope == Scope::Browsing)
        .flat_map(|row| row.parts.iter().copied().flatten())
        .find(|(_, bound)| *bound == intent)
        .map(|(key, _)| *key)
}
