//! The help screen: every key, from [`crate::console::keymap::KEYS`].

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use crate::console::app::App;
use crate::console::keymap::KEYS;

/// Draws the help screen over `area`.
pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
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
