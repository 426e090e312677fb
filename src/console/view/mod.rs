//! [`view`]: draws the [`App`] into a frame. It takes `&App`, so drawing cannot change
//! state. Every string that comes from a file goes through [`text`] (sanitized) before it
//! becomes a span; static labels are plain.

mod detail;
mod dialogs;
mod help;
mod inbox;
mod lists;

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use super::app::{App, Level, View};
use super::sanitize::{clean, clean_cut};

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
    }
    footer_bar(app, frame, footer);
    dialogs::overlays(app, frame, area);
}

fn top_bar(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let mut spans = vec![
        Span::styled(" wharf ", t.title),
        text(&app.config.product, t.text),
        Span::raw("  "),
    ];
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
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
    let right = Line::from(vec![
        Span::styled("?", t.key),
        Span::styled(" help  ", t.muted),
        Span::styled("q", t.key),
        Span::styled(" quit ", t.muted),
    ]);
    frame.render_widget(Paragraph::new(right).right_aligned(), area);
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
    use super::app::{HistoryPane, Pane};
    let pairs: &[(&str, &str)] = match app.view {
        View::Inbox => match app.detail_tab() {
            Pane::Raw => &[
                ("j/k", "line"),
                ("n/N", "next reject"),
                ("r", "run"),
                ("Tab", "pane"),
                ("Esc", "back"),
            ],
            Pane::Ranked => &[
                ("j/k", "row"),
                ("/", "key"),
                ("n/N", "next tie"),
                ("r", "run"),
                ("Tab", "pane"),
            ],
            _ => &[
                ("j/k", "select"),
                ("Enter", "plan"),
                ("r", "run"),
                ("Tab", "plan/raw/ranked"),
                ("c", "cancel"),
            ],
        },
        View::Quarantine if app.quarantine.rejects.is_some() => {
            &[("Enter", "raw line"), ("Esc", "back"), ("j/k", "move")]
        }
        View::Quarantine => &[("Enter", "rejects"), ("/", "filter"), ("j/k", "move")],
        View::History if app.history.pane == HistoryPane::Partitions => {
            &[("r", "restore date"), ("Tab", "runs"), ("j/k", "move")]
        }
        View::History => &[("Tab", "partitions"), ("j/k", "move")],
    };
    let mut spans = vec![Span::raw(" ")];
    for (key, what) in pairs {
        spans.push(Span::styled(*key, app.theme.key));
        spans.push(Span::styled(format!(" {what}  "), app.theme.muted));
    }
    Line::from(spans)
}

/// A list row with the cursor mark (`›`, visible without colour) and style when
/// `selected`.
pub fn mark(line: Line<'static>, selected: bool, style: Style) -> Line<'static> {
    let mut spans = vec![Span::raw(if selected { "›" } else { " " })];
    spans.extend(line.spans);
    let line = Line::from(spans);
    if selected {
        line.patch_style(style)
    } else {
        line
    }
}

/// A span of text that came from a file: sanitized.
pub fn text(s: &str, style: Style) -> Span<'static> {
    Span::styled(clean(s).into_owned(), style)
}

/// `text`, cut to `max` characters.
pub fn cut(s: &str, max: usize, style: Style) -> Span<'static> {
    Span::styled(clean_cut(s, max), style)
}

/// A bordered block, its border brighter when focused.
pub fn block<'a>(app: &App, title: Line<'a>, focused: bool) -> Block<'a> {
    let t = &app.theme;
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused { t.border_focus } else { t.border })
        .title(title)
}

/// The first row to draw so that `cursor` is visible in `height` rows of `len`.
pub fn scroll(cursor: usize, len: usize, height: usize) -> usize {
    if len <= height {
        return 0;
    }
    cursor.saturating_sub(height / 2).min(len - height)
}

/// `401 B`, `12.5 KiB`, `286.1 MiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A text progress bar `width` cells wide.
pub fn bar(done: u64, total: u64, width: usize) -> String {
    let ratio = if total == 0 {
        0.0
    } else {
        (done as f64 / total as f64).clamp(0.0, 1.0)
    };
    let full = (ratio * width as f64).round() as usize;
    format!(
        "{}{} {:>3.0}%",
        "█".repeat(full),
        "░".repeat(width - full),
        ratio * 100.0
    )
}

/// `path` relative to the config file's folder when inside it.
pub fn shown_path(app: &App, path: &Path) -> String {
    let folder = app.config.path.parent().unwrap_or(Path::new("/"));
    path.strip_prefix(folder)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The first `n` characters of a hash, sanitized (a hash read back from a state file is
/// text from a file like any other).
pub fn short(sha: &str, n: usize) -> String {
    clean(&sha.chars().take(n).collect::<String>()).into_owned()
}

/// A spinner frame for work in progress.
pub fn spinner(app: &App) -> &'static str {
    ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"][(app.ticks % 10) as usize]
}
