//! The help screen: every binding of [`crate::console::bindings::KEYS`], the table the
//! keymap looks keys up in.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use crate::console::app::App;
use crate::console::bindings::KEYS;

/// Draws the help screen over `area`.
pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let keys_width = KEYS
        .iter()
        .flat_map(|g| g.rows)
        .map(|r| r.label().chars().count())
        .max()
        .unwrap_or(0);
    let mut lines = Vec::new();
    for group in KEYS {
        lines.push(Line::styled(group.title, t.title));
        for row in group.rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<keys_width$}  ", row.label()), t.key),
                Span::styled(row.what, t.text),
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

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::console::theme;

    fn app() -> App {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/wharf.toml");
        let config = crate::config::Config::load(&root).unwrap();
        App::new(std::sync::Arc::new(config), theme::embedded("dark"))
    }

    #[test]
    fn the_help_shows_every_row_whole_at_80x24() {
        let mut app = app();
        app.help = true;
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal
            .draw(|frame| draw(&app, frame, frame.area()))
            .unwrap();
        let screen = terminal.backend().to_string();
        for group in KEYS {
            assert!(screen.contains(group.title), "{}", group.title);
            for row in group.rows {
                let label = format!("  {} ", row.label());
                let whole = |l: &&str| l.contains(&label) && l.contains(row.what);
                assert!(
                    screen.lines().any(|l| whole(&l)),
                    "{label}{}:\n{screen}",
                    row.what
                );
            }
        }
    }
}
