//! [`update`]: the only place the [`App`] changes. It takes a [`Msg`] and returns the
//! [`Effect`]s the runtime must carry out; it never touches the disk or the clock, so the
//! tests drive it (through the runtime) without a terminal.
//!
//! Whatever is open, a change the watcher saw reaches the inbox list; while a dialog,
//! the help or a filter is open, nothing moves the selected input from under it.
//!
//! This module routes; each part of the App has its own module: [`inbox`] (the list,
//! the selection, a landing's start), [`detail`] (the Raw, Ranked and Changes tabs),
//! [`quarantine`], [`history`], [`dialog`] (the confirmations and the result), [`filter`]
//! (a `/` filter being typed), [`products`] (the Products screen, showing a product
//! and leaving it), and [`worker`] / [`reload`] (what reports bring in).
//! Shared by several: [`cursor`]. None of them calls back into this module.

mod cursor;
mod detail;
mod dialog;
mod filter;
mod history;
mod inbox;
mod products;
mod quarantine;
mod reload;
mod worker;

use super::app::{App, HistoryPane, Pane, View};
use super::msg::{Effect, Intent, Msg, Report};

/// Applies `msg` to `app`.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let was_open = app.overlay_open();
    let mut effects = apply(app, msg);
    match (was_open, app.overlay_open()) {
        // The operator has the screen in front of them: the cursor is theirs from now on.
        (false, true) => app.inbox.auto_cursor = false,
        // What changed on disk meanwhile may have taken the selected input away.
        (true, false) => effects.extend(reload::place_cursor(app)),
        _ => {}
    }
    effects
}

fn apply(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Report(Report::Summaries(read)) => {
            products::summaries(app, read);
            Vec::new()
        }
        Msg::Report(report) => {
            // What a landing or restore wrote shows in the header's warnings soon.
            let wrote = matches!(report, Report::Landed { .. } | Report::Restored { .. });
            let mut effects = worker::on_report(app, report);
            if wrote && app.products.is_some() {
                effects.push(Effect::Summarize);
            }
            effects
        }
        Msg::InboxChanged if app.view == View::Products => Vec::new(),
        // Not an intent: a dialog, the help or a filter does not hold it back.
        Msg::InboxChanged => vec![Effect::Reload],
        Msg::Summarize if app.products.is_some() => vec![Effect::Summarize],
        Msg::Summarize => Vec::new(),
        Msg::Tick => {
            app.ticks += 1;
            Vec::new()
        }
        Msg::Resize(width, height) => {
            app.size = (width, height);
            Vec::new()
        }
        Msg::Intent(intent) => on_intent(app, intent),
    }
}

/// The operator's intent: what is open takes it first (help, a filter being typed, a
/// dialog), then the intents of every view, then the current view's.
fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    if intent == Intent::Quit {
        quit(app);
        return Vec::new();
    }
    if app.help {
        if matches!(intent, Intent::Help | Intent::Back | Intent::Open) {
            app.help = false;
        }
        return Vec::new();
    }
    if app.editing.is_some() {
        return filter::on_intent(app, intent);
    }
    if app.dialog.is_some() {
        return dialog::on_intent(app, intent);
    }
    match intent {
        Intent::Help => app.help = true,
        _ if app.view == View::Products => return products::on_intent(app, intent),
        Intent::Show(view) => {
            app.view = view;
            app.message = None;
        }
        Intent::Reload if app.products.is_some() => return vec![Effect::Reload, Effect::Summarize],
        Intent::Reload => return vec![Effect::Reload],
        Intent::Filter => match (app.view, app.detail_tab()) {
            (View::Inbox, _) if app.pane == Pane::List => {
                app.editing = Some(app.inbox.filter.clone());
            }
            (View::Quarantine, _) if app.quarantine.rejects.is_none() => {
                app.editing = Some(app.quarantine.filter.clone());
            }
            (View::Inbox, Pane::Ranked) => {
                app.pane = Pane::Ranked;
                app.editing = Some(app.ranked.filter.clone());
            }
            (View::Inbox, Pane::Changes) => {
                app.pane = Pane::Changes;
                app.editing = Some(app.changes.filter.clone());
            }
            (View::History, _) if app.history.diff.is_some() => {
                app.editing = app.history.diff.as_ref().map(|d| d.state.filter.clone());
            }
            (View::History, _) if app.history.pane == HistoryPane::Runs => {
                app.editing = Some(app.history.filter.clone());
            }
            _ => app.info(
                "/ filters the Inbox and Quarantine lists by name, the Ranked and Changes tabs and a landing's diff by key",
            ),
        },
        intent => {
            let leaves = intent == Intent::Back && app.back_to_products();
            let effects = match app.view {
                View::Inbox => inbox::on_intent(app, intent),
                View::Quarantine => quarantine::on_intent(app, intent),
                View::History => history::on_intent(app, intent),
                View::Products => Vec::new(),
            };
            // Esc with nothing nearer to close or cancel goes back to the Products screen.
            if leaves && effects.is_empty() {
                return products::leave(app);
            }
            return effects;
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
