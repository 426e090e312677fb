//! Two overlays: the help screen (every key, from [`crate::console::keymap::KEYS`]) and
//! the quarantine view's raw line, shown on screen only, masked.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::dialogs::popup;
use super::{spinner, text};
use crate::console::app::{App, Loading, Rejects};
use crate::console::keymap::KEYS;

pub fn raw_line(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    (rejects, raw): (&Rejects, &Loading<String>),
) {
    let t = &app.theme;
    let line = rejects.records.get(rejects.cursor).map_or(0, |r| r.line);
    let body = match raw {
        Loading::Ready(shown) => Line::from(text(shown, t.text)),
        Loading::Failed(error) => Line::from(text(error, t.error)),
        _ => Line::styled(
            format!("{} reading the input and checking its hash…", spinner(app)),
            t.muted,
        ),
    };
    let lines = vec![
        body,
        Line::default(),
        Line::styled(
            "Shown on screen only, never written anywhere; values of prohibited fields are hidden.",
            t.muted,
        ),
        Line::from(vec![
            Span::styled("Esc", t.key),
            Span::styled(" close", t.text),
        ]),
    ];
    let title = Line::from(vec![
        Span::styled(format!(" line {line} of "), t.title),
        text(&rejects.summary.input_name, t.title),
        Span::raw(" "),
    ]);
    popup(app, frame, area, title, lines, 80);
}

pub fn help(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut lines = Vec::new();
    for (group, keys) in KEYS {
        lines.push(Line::styled(*group, t.title));
        for (key, what) in *keys {
            lines.push(Line::from(vec![
                Span::styled(format!("  {key:<22}"), t.key),
                Span::styled(*what, t.text),
            ]));
        }
    }
    lines.push(Line::styled(
        format!(
            "theme {} · badges: ● new  ✓ landed  ± changed  ✗ refused  · ignored",
            app.theme.name
        ),
        t.muted,
    ));
    let height = (lines.len() as u16 + 2).min(area.height);
    let width = 78.min(area.width);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(t.border_focus)
        .style(t.dialog)
        .title(Line::styled(" Keys ", t.title));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
