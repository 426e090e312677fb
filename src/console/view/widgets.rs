//! The small pieces every screen draws with: sanitized text spans, a list row's cursor
//! mark, a bordered block, scrolling, sizes, a progress bar, a spinner, and the lists'
//! table of rows with its cells.

use std::path::Path;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use crate::console::app::App;
use crate::console::sanitize::{clean, clean_cut};

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

/// A run log time (`2024-03-01T10:00:00.123456Z`) as the screens write it, to the
/// second: `2024-03-01 10:00:00`.
pub fn clock(time: &str) -> String {
    time.chars().take(19).collect::<String>().replace('T', " ")
}

/// A spinner frame for work in progress.
pub fn spinner(app: &App) -> &'static str {
    ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"][(app.ticks % 10) as usize]
}

/// A table of rows already cut to width, the cursor row highlighted.
pub fn table(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    header: String,
    rows: Vec<Line<'static>>,
    cursor: Option<usize>,
) {
    let t = &app.theme;
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(Line::styled(format!(" {header}"), t.muted)),
        head,
    );
    let height = usize::from(body.height);
    let top = cursor.map_or(0, |c| scroll(c, rows.len(), height));
    let lines: Vec<Line> = rows
        .into_iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(i, line)| mark(line, Some(i) == cursor, t.selected))
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// A cell of `width` characters: sanitized, cut and padded.
pub fn cell(s: &str, width: usize, style: ratatui::style::Style) -> Vec<Span<'static>> {
    let span = cut(s, width, style);
    let pad = width.saturating_sub(span.content.chars().count());
    vec![span, Span::raw(" ".repeat(pad + 1))]
}
