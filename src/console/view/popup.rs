//! [`popup`]: the centred, double-bordered box every dialog and overlay is drawn in.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Wrap};

use crate::console::app::App;

/// A centred box `percent` of the width wide (at least 60 columns), tall enough for
/// `lines` once wrapped.
pub fn popup(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    title: Line<'static>,
    lines: Vec<Line<'static>>,
    percent: u16,
) {
    let width = (area.width * percent / 100).clamp(60, 100).min(area.width);
    let inner_width = usize::from(width.saturating_sub(4)).max(1);
    let wrapped: usize = lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(inner_width))
        .sum();
    let height = (wrapped as u16 + 2).min(area.height);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(app.theme.border_focus)
        .style(app.theme.dialog)
        .padding(ratatui::widgets::Padding::horizontal(1))
        .title(title);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}
