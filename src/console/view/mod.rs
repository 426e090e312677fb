//! [`view`]: draws the [`App`] into a frame. It takes `&App`, so drawing cannot change
//! state. Every string that comes from a file goes through [`widgets::text`] (sanitized)
//! before it becomes a span; static labels are plain.
//!
//! This module draws the bars and picks the view: [`inbox`] (with [`day`], the Plan tab's
//! picture of each day), [`lists`] (Quarantine and History), [`products`] (the Products
//! screen, and the header's warning of any product's refusals), with [`detail`] for the
//! Raw and Ranked tabs and [`changes`] for the Changes tab and a landing's diff in
//! History; then [`overlays`] draws what
//! is open over it ([`dialogs`], [`help`], each in a [`popup`]). The pieces they share
//! are in [`widgets`]; none of them calls back into this module.

mod changes;
mod day;
mod detail;
mod dialogs;
mod help;
mod inbox;
mod lists;
mod overlays;
mod popup;
mod products;
mod raw;
mod widgets;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::app::{App, Level, View};
use super::bindings;
use super::msg::Intent;
use widgets::text;

/// Draws the whole screen.
pub fn view(app: &App, frame: &mut Frame) {
    let area = frame.area();
    frame.render_widget(Block::new().style(app.theme.text), area);
    let [top, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    top_bar(app, frame, top);
    match app.view {
        View::Inbox => inbox::draw(app, frame, body),
        View::Quarantine => lists::quarantine(app, frame, body),
        View::History => lists::history(app, frame, body),
        View::Products => products::draw(app, frame, body),
    }
    footer_bar(app, frame, footer);
    overlays::draw(app, frame, area);
}

fn top_bar(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut spans = vec![Span::styled(" wharf ", t.title)];
    if app.view == View::Products {
        spans.push(Span::styled(" Products ", t.tab_active));
        spans.push(Span::raw(" "));
    } else {
        spans.push(text(&app.config.product, t.text));
        spans.push(Span::raw("  "));
        for (key, name, view) in [
            ("1", "Inbox", View::Inbox),
            ("2", "Quarantine", View::Quarantine),
            ("3", "History", View::History),
        ] {
            let style = if app.view == view {
                t.tab_active
            } else {
                t.muted
            };
            spans.push(Span::styled(format!(" {key} {name} "), style));
            spans.push(Span::raw(" "));
        }
    }
    // Any product's refusals or errors, on every screen (several products only).
    if let Some(warning) = products::warning(app) {
        spans.push(text(&warning, t.error));
        spans.push(Span::raw(" "));
    }
    // This product's silence past its max_silence, from the run log the console holds.
    let stale = app.config.paging.max_silence.and_then(|max| {
        crate::page::freshness::stale_for(&app.history.runs, max, chrono::Utc::now())
    });
    if let (Some(age), true) = (stale, app.view != View::Products) {
        let age = crate::page::freshness::span(age);
        spans.push(Span::styled(format!("⚠ stale {age} "), t.error));
    }
    let left = Line::from(spans);
    let room = usize::from(area.width).saturating_sub(left.width());
    frame.render_widget(Paragraph::new(left), area);
    let right = Line::from(right_of_top_bar(app, room));
    frame.render_widget(Paragraph::new(right).right_aligned(), area);
}

/// The engine that runs (`engine local`, `engine spark sc://host:15002`) and the help
/// and quit keys, as many of them as fit in `room` columns, the engine first.
fn right_of_top_bar(app: &App, room: usize) -> Vec<Span<'static>> {
    let t = &app.theme;
    // Each product names its own engine; the Products screen spans them.
    let engine = match app.view {
        View::Products => String::new(),
        _ => format!("engine {} ", app.config.engine.describe()),
    };
    let help = [Span::styled("?", t.key), Span::styled(" help  ", t.muted)];
    let quit = [Span::styled("q", t.key), Span::styled(" quit ", t.muted)];
    let width = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    let mut right = vec![text(&engine, t.muted)];
    if width(&right) + 1 + width(&help) + width(&quit) <= room {
        right.push(Span::raw(" "));
        right.extend(help);
        right.extend(quit);
    } else if width(&right) + 1 + width(&quit) <= room {
        right.push(Span::raw(" "));
        right.extend(quit);
    }
    right
}

fn footer_bar(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let line = if let Some(filter) = &app.editing {
        Line::from(vec![
            Span::styled(" / ", t.key),
            text(filter, t.text),
            Span::styled("█", t.key),
            Span::styled("  Enter keep · Esc clear", t.muted),
        ])
    } else if let Some(message) = &app.message {
        let style = match message.level {
            Level::Info => t.text,
            Level::Warning => t.warning,
            Level::Error => t.error,
        };
        Line::from(vec![Span::raw(" "), text(&message.text, style)])
    } else {
        hints(app)
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn hints(app: &App) -> Line<'static> {
    let mut spans = vec![Span::raw(" ")];
    let products: &[(&[Intent], &str)] = &[(&[Intent::Back], "products")];
    let back = if app.back_to_products() {
        products
    } else {
        &[]
    };
    for (intents, what) in hint_table(app).iter().chain(back) {
        spans.push(Span::styled(hint_keys(intents), app.theme.key));
        spans.push(Span::styled(format!(" {what}  "), app.theme.muted));
    }
    Line::from(spans)
}

/// The keys of `intents` as the footer writes them (`j/k`), from the one table of
/// bindings, so a key rebound there is rebound here.
fn hint_keys(intents: &[Intent]) -> String {
    let keys: Vec<String> = intents
        .iter()
        .filter_map(|intent| bindings::key_of(*intent))
        .map(|key| key.label())
        .collect();
    keys.join("/")
}

/// What the footer offers where the cursor is: intents and the word for them.
fn hint_table(app: &App) -> &'static [(&'static [Intent], &'static str)] {
    use super::app::{HistoryPane, Pane};
    use Intent::*;
    match app.view {
        View::Inbox => match app.detail_tab() {
            Pane::Raw => &[
                (&[Down, Up], "line"),
                (&[NextMark, PrevMark], "next reject"),
                (&[Run], "run"),
                (&[NextPane], "pane"),
                (&[Back], "back"),
            ],
            Pane::Ranked => &[
                (&[Down, Up], "row"),
                (&[Filter], "key"),
                (&[NextMark, PrevMark], "next tie"),
                (&[Run], "run"),
                (&[NextPane], "pane"),
            ],
            Pane::Changes => &[
                (&[Down, Up], "change"),
                (&[NextShown], "kind"),
                (&[Filter], "key"),
                (&[NextMark, PrevMark], "date"),
                (&[Run], "run"),
            ],
            _ => &[
                (&[Down, Up], "select"),
                (&[Open], "plan"),
                (&[Run], "run"),
                (&[NextPane], "plan/raw/ranked/changes"),
                (&[Cancel], "cancel"),
            ],
        },
        View::Quarantine if app.quarantine.rejects.is_some() => &[
            (&[Open], "raw line"),
            (&[Back], "back"),
            (&[Down, Up], "move"),
        ],
        View::Quarantine => &[
            (&[Open], "rejects"),
            (&[Filter], "filter"),
            (&[Down, Up], "move"),
        ],
        View::History if app.history.diff.is_some() => &[
            (&[Down, Up], "change"),
            (&[NextShown], "kind"),
            (&[Filter], "key"),
            (&[NextMark, PrevMark], "date"),
            (&[Back], "runs"),
        ],
        View::History if app.history.pane == HistoryPane::Partitions => &[
            (&[Run], "restore date"),
            (&[NextPane], "runs"),
            (&[Down, Up], "move"),
        ],
        View::History => &[
            (&[Open], "what it changed"),
            (&[NextPane], "partitions"),
            (&[Down, Up], "move"),
        ],
        View::Products => &[
            (&[Down, Up], "select"),
            (&[Open], "show product"),
            (&[Reload], "read again"),
        ],
    }
}
