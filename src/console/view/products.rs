//! The Products screen: one row per product (inputs waiting, open sets, the last
//! landing and its age, refusals since the last publish, the newest published date, who
//! holds its locks), and [`warning`], the header bar's note of any product's refusals
//! or errors. Names, reasons and errors come from files: all drawn through
//! [`super::widgets::text`].

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::widgets::{block, cell, table};
use crate::console::app::App;
use crate::console::products::{LastRun, Locks, ProductRow, warnings};
use crate::land::RunStatus;

/// The header bar's warning (`⚠ payments: refused 2`), when any product has one.
pub fn warning(app: &App) -> Option<String> {
    let found = warnings(app.products.as_ref()?);
    (!found.is_empty()).then(|| format!("⚠ {}", found.join(" · ")))
}

/// Column widths: product, last landing; the others are fixed.
fn widths(width: u16) -> (usize, usize) {
    if width >= 120 { (24, 34) } else { (12, 20) }
}

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let Some(products) = &app.products else {
        return;
    };
    let title = Line::from(vec![
        Span::styled(" Products ", t.title),
        Span::styled(format!("{} ", products.rows.len()), t.muted),
    ]);
    let outer = block(app, title, true);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    let (name, last) = widths(inner.width);
    let header = format!(
        "{:<name$} {:>7} {:>4}  {:<last$} {:>7} {:<10} lock",
        "product", "waiting", "open", "last landing", "refused", "newest"
    );
    let rows = products
        .rows
        .iter()
        .map(|row| line(app, row, inner.width))
        .collect();
    table(app, frame, inner, header, rows, Some(products.cursor));
}

fn line(app: &App, row: &ProductRow, width: u16) -> Line<'static> {
    let t = &app.theme;
    let (name, last) = widths(width);
    let mut spans = cell(&row.name(), name, t.text);
    if let Err(error) = &row.entry.config {
        let room = usize::from(width).saturating_sub(name + 2);
        spans.extend(cell(error, room, t.error));
        return Line::from(spans);
    }
    let Some(s) = &row.summary else {
        spans.push(Span::styled("reading…", t.muted));
        return Line::from(spans);
    };
    let waiting = if s.waiting > 0 { t.text } else { t.muted };
    spans.push(Span::styled(format!("{:>7} ", s.waiting), waiting));
    spans.push(Span::styled(format!("{:>4}  ", s.open_sets), t.muted));
    let (outcome, style) = match &s.last {
        Some(run) if run.action == RunStatus::Refused.code() => (outcome(run), t.refused),
        Some(run) => (outcome(run), t.landed),
        None => ("no runs yet".to_owned(), t.muted),
    };
    spans.extend(cell(&outcome, last, style));
    let refused = if s.refusals > 0 { t.error } else { t.muted };
    spans.push(Span::styled(format!("{:>7} ", s.refusals), refused));
    spans.extend(cell(s.newest_date.as_deref().unwrap_or("–"), 10, t.text));
    spans.push(Span::styled(locks(s.locks), t.text));
    if let Some(secs) = s.stale_secs {
        spans.push(Span::styled(format!("  stale {}", age_text(secs)), t.error));
    }
    if !s.problems.is_empty() {
        spans.push(Span::raw("  "));
        spans.push(super::widgets::text(&s.problems.join("; "), t.error));
    }
    Line::from(spans)
}

/// `refused shrink · 5m ago`.
fn outcome(run: &LastRun) -> String {
    let mut text = run.action.clone();
    if let Some(reason) = &run.reason {
        text.push(' ');
        text.push_str(reason);
    }
    if let Some(age) = run.age_secs {
        text.push_str(&format!(" · {} ago", age_text(age)));
    }
    text
}

/// `42s`, `5m`, `3h`, `2d`.
pub fn age_text(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86400),
    }
}

fn locks(locks: Locks) -> &'static str {
    match (locks.run, locks.watch) {
        (true, true) => "run+watch",
        (true, false) => "run",
        (false, true) => "watch",
        (false, false) => "–",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_their_largest_unit() {
        let shown: Vec<String> = [0, 59, 60, 3599, 3600, 86399, 86400, 900_000]
            .into_iter()
            .map(age_text)
            .collect();
        assert_eq!(shown, ["0s", "59s", "1m", "59m", "1h", "23h", "1d", "10d"]);
    }
}
