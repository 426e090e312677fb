//! [`update`]: the only place the [`App`] changes. It takes an [`Action`] and returns the
//! [`Effect`]s the runtime must carry out; it never touches the disk or the clock, so the
//! tests drive it (through the runtime) without a terminal.

use super::action::{Action, Effect};
use super::app::{App, Dialog, HistoryPane, Pane, PlanState, View};
use super::{inbox, msg, panes};
use crate::plan::{Action as PlanAction, Refusal};

/// Applies `action` to `app`.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    match action {
        Action::Done(message) => return msg::on_msg(app, message),
        Action::Tick => {
            app.ticks += 1;
            return Vec::new();
        }
        Action::Quit => {
            quit(app);
            return Vec::new();
        }
        Action::Resize(width, height) => {
            app.size = (width, height);
            return Vec::new();
        }
        _ => {}
    }
    if app.help {
        if matches!(action, Action::Help | Action::Back | Action::Open) {
            app.help = false;
        }
        return Vec::new();
    }
    if app.editing.is_some() {
        return panes::edit_filter(app, action);
    }
    if app.dialog.is_some() {
        return dialog(app, action);
    }
    match action {
        Action::Help => app.help = true,
        Action::Show(view) => {
            app.view = view;
            app.message = None;
        }
        Action::Reload => return vec![Effect::Reload],
        Action::Filter => match (app.view, app.detail_tab()) {
            (View::Quarantine, _) if app.quarantine.rejects.is_none() => {
                app.editing = Some(app.quarantine.filter.clone());
            }
            (View::Inbox, Pane::Ranked) => {
                app.pane = Pane::Ranked;
                app.editing = Some(app.ranked.filter.clone());
            }
            _ => app.info("/ filters the Ranked tab by key and the Quarantine list by name"),
        },
        action => {
            return match app.view {
                View::Inbox => inbox::on_action(app, action),
                View::Quarantine => panes::quarantine(app, action),
                View::History => history(app, action),
            };
        }
    }
    Vec::new()
}

fn quit(app: &mut App) {
    if let Some(task) = &app.task {
        let text = format!("{} is in progress; quit when it has finished", task.title);
        app.warn(text);
    } else {
        app.quit = true;
    }
}

/// Keys while a dialog is open: nothing else reacts.
fn dialog(app: &mut App, action: Action) -> Vec<Effect> {
    let Some(open) = app.dialog.take() else {
        return Vec::new();
    };
    match (open, action) {
        (Dialog::ConfirmRun { path, stamp, plan }, Action::Confirm) => {
            inbox::land(app, path, stamp, &plan, false)
        }
        (
            Dialog::ConfirmShrink {
                path,
                stamp,
                plan,
                typed,
            },
            Action::Submit,
        ) => {
            if typed.trim() == "shrink" {
                inbox::land(app, path, stamp, &plan, true)
            } else {
                app.warn("type the word shrink, then Enter, to allow it (Esc cancels)");
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
            Dialog::ConfirmShrink {
                path,
                stamp,
                plan,
                mut typed,
            },
            action @ (Action::Input(_) | Action::Backspace),
        ) => {
            match action {
                Action::Input(c) if typed.chars().count() < 32 => typed.push(c),
                Action::Backspace => {
                    typed.pop();
                }
                _ => {}
            }
            app.dialog = Some(Dialog::ConfirmShrink {
                path,
                stamp,
                plan,
                typed,
            });
            Vec::new()
        }
        (Dialog::ConfirmRestore { partition }, Action::Confirm) => {
            let Some(date) = crate::contract::Date::parse(&partition.date) else {
                return Vec::new();
            };
            let id = app.id();
            app.task = Some(super::app::Task {
                id,
                title: format!("restoring event_date={}", partition.date),
                progress: None,
            });
            vec![Effect::Restore { id, date }]
        }
        (Dialog::Result(_), Action::Back | Action::Open | Action::Confirm | Action::Decline) => {
            Vec::new()
        }
        (
            Dialog::ConfirmRun { .. } | Dialog::ConfirmShrink { .. },
            Action::Back | Action::Decline,
        ) => {
            app.info("cancelled; nothing was written");
            Vec::new()
        }
        (Dialog::ConfirmRestore { .. }, Action::Back | Action::Decline) => {
            app.info("restore cancelled; nothing was changed");
            Vec::new()
        }
        (open, _) => {
            app.dialog = Some(open);
            Vec::new()
        }
    }
}

/// The dialog `r` opens for a ready plan.
pub fn run_dialog(app: &mut App) {
    if let Some(task) = &app.task {
        let text = format!("{} is in progress; wait for it to finish", task.title);
        app.warn(text);
        return;
    }
    let Some(row) = app.current() else {
        return;
    };
    if let super::app::Badge::Ignored(why) = row.badge {
        let text = format!("{} is ignored ({why}); nothing to run", row.entry.name);
        app.warn(text);
        return;
    }
    let path = row.entry.path.clone();
    let stamp = super::app::Stamp {
        size: row.entry.size,
        modified: row.entry.modified,
    };
    let plan = match &app.inbox.plan {
        PlanState::Ready(plan) if app.inbox.selected.as_ref() == Some(&path) => plan.clone(),
        PlanState::Running { .. } => {
            app.info("the plan is still being computed; press r again when it is ready");
            return;
        }
        _ => {
            app.info("no plan for this input yet; press Enter to plan it");
            return;
        }
    };
    app.dialog = Some(match (&plan.action, &plan.refusal) {
        (PlanAction::Refuse, Some(Refusal::Shrink { .. })) => Dialog::ConfirmShrink {
            path,
            stamp,
            plan,
            typed: String::new(),
        },
        _ => Dialog::ConfirmRun { path, stamp, plan },
    });
}

fn history(app: &mut App, action: Action) -> Vec<Effect> {
    let h = &mut app.history;
    let (cursor, len) = match h.pane {
        HistoryPane::Runs => (&mut h.run_cursor, h.runs.len()),
        HistoryPane::Partitions => (&mut h.partition_cursor, h.partitions.len()),
    };
    if panes::move_cursor(cursor, len, &action, 10) {
        return Vec::new();
    }
    match action {
        Action::NextPane | Action::PrevPane => {
            h.pane = match h.pane {
                HistoryPane::Runs => HistoryPane::Partitions,
                HistoryPane::Partitions => HistoryPane::Runs,
            };
        }
        Action::Run | Action::Open if h.pane == HistoryPane::Partitions => {
            let Some(partition) = h.partitions.get(h.partition_cursor).cloned() else {
                return Vec::new();
            };
            if let Some(task) = &app.task {
                let text = format!("{} is in progress; wait for it to finish", task.title);
                app.warn(text);
            } else if partition.previous.is_some() {
                app.dialog = Some(Dialog::ConfirmRestore { partition });
            } else {
                let text = format!(
                    "event_date={} has no earlier generation in the trash; nothing to restore",
                    partition.date
                );
                app.warn(text);
            }
        }
        Action::Run => {
            app.info("Tab to the partitions, then r restores a date's previous generation")
        }
        Action::Back => {
            h.pane = HistoryPane::Runs;
        }
        _ => {}
    }
    Vec::new()
}
