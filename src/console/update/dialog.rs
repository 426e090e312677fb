//! Intents while a dialog is open: nothing else reacts. `y`, the typed word `shrink` (or
//! `grow`, §5.10) or a rerun's typed input name start the landing or the restore, `n` /
//! `Esc` cancel, any of them closes a result.

use crate::console::app::{App, Dialog, Task};
use crate::console::msg::{Effect, Intent};

use super::inbox;
use crate::console::app::guard_word;
use crate::plan::DecideOptions;

/// An intent in the open dialog.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    let Some(mut open) = app.dialog.take() else {
        return Vec::new();
    };
    if let (Some(typed), Intent::Input(_) | Intent::Backspace) = (typed_word(&mut open), intent) {
        match intent {
            Intent::Input(c) if typed.chars().count() < 255 => typed.push(c),
            Intent::Backspace => {
                typed.pop();
            }
            _ => {}
        }
        app.dialog = Some(open);
        return Vec::new();
    }
    match (open, intent) {
        (Dialog::ConfirmRun { path, stamp, plan }, Intent::Confirm) => {
            inbox::land(app, path, stamp, &plan, DecideOptions::default())
        }
        (
            Dialog::ConfirmShrink {
                path,
                stamp,
                plan,
                typed,
            },
            Intent::Submit,
        ) => {
            let word = guard_word(&plan);
            let allow = plan.refusal.as_ref().and_then(DecideOptions::confirming);
            if let Some(allow) = allow.filter(|_| typed.trim() == word) {
                inbox::land(app, path, stamp, &plan, allow)
            } else {
                app.warn(format!(
                    "type the word {word}, then Enter, to allow it (Esc cancels)"
                ));
                app.dialog = Some(Dialog::ConfirmShrink {
                    path,
                    stamp,
                    plan,
                    typed: String::new(),
                });
                Vec::new()
            }
        }
        (
            Dialog::ConfirmReland {
                path,
                stamp,
                plan,
                typed,
            },
            Intent::Submit,
        ) => {
            if typed == plan.input_name {
                inbox::land(app, path, stamp, &plan, DecideOptions::default())
            } else {
                app.warn("type the input's name exactly, then Enter, to rerun it (Esc cancels)");
                app.dialog = Some(Dialog::ConfirmReland {
                    path,
                    stamp,
                    plan,
                    typed: String::new(),
                });
                Vec::new()
            }
        }
        (Dialog::ConfirmRestore { partition }, Intent::Confirm) => {
            let Some(date) = crate::contract::Date::parse(&partition.date) else {
                return Vec::new();
            };
            let id = app.id();
            app.task = Some(Task {
                id,
                title: format!("restoring event_date={}", partition.date),
                progress: None,
            });
            vec![Effect::Restore { id, date }]
        }
        (Dialog::Result(_), Intent::Back | Intent::Open | Intent::Confirm | Intent::Decline) => {
            Vec::new()
        }
        (
            Dialog::ConfirmRun { .. } | Dialog::ConfirmShrink { .. },
            Intent::Back | Intent::Decline,
        )
        | (Dialog::ConfirmReland { .. }, Intent::Back) => {
            app.info("cancelled; nothing was written");
            Vec::new()
        }
        (Dialog::ConfirmRestore { .. }, Intent::Back | Intent::Decline) => {
            app.info("restore cancelled; nothing was changed");
            Vec::new()
        }
        (open, _) => {
            app.dialog = Some(open);
            Vec::new()
        }
    }
}

/// The word being typed into a confirmation that asks for one.
fn typed_word(dialog: &mut Dialog) -> Option<&mut String> {
    match dialog {
        Dialog::ConfirmShrink { typed, .. } | Dialog::ConfirmReland { typed, .. } => Some(typed),
        _ => None,
    }
}
