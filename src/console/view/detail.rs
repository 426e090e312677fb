//! The Raw and Ranked tabs of the Inbox view. Both draw only the rows on screen.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::widgets::{bar, cut, mark, scroll, size, spinner, text};
use crate::console::app::{App, Badge, Loading};
use crate::console::ranked::{Fate, Note};
use crate::console::raw::{LineIndex, LineOutcome, RawLine, Repeat};
use crate::console::sanitize::clean_cut;
use crate::console::theme::Theme;

/// A tab's data still loading or failed, drawn; `true` when it was.
pub(super) fn loading<T>(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    state: &Loading<T>,
    what: &str,
) -> bool {
    loading_in(app, frame, area, state, (what, size))
}

/// [`loading`], its progress counted in `unit` (bytes by [`size`], dates, …).
pub(super) fn loading_in<T>(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    state: &Loading<T>,
    (what, unit): (&str, fn(u64) -> String),
) -> bool {
    let t = &app.theme;
    let lines = match state {
        Loading::Ready(_) => return false,
        Loading::None => vec![Line::styled("Enter loads it.", t.muted)],
        Loading::Running { bytes, total, .. } => vec![
            Line::from(vec![
                Span::styled(format!("{} {what} ", spinner(app)), t.title),
                Span::styled("c cancels", t.muted),
            ]),
            Line::from(vec![
                Span::styled(bar(*bytes, *total, 24), t.gauge),
                Span::styled(format!("  {} of {}", unit(*bytes), unit(*total)), t.muted),
            ]),
        ],
        Loading::Failed(error) => vec![
            Line::from(text(error, t.error)),
            Line::styled("Enter tries again.", t.muted),
        ],
    };
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
    true
}

/// The Raw tab: line numbers, outcomes and the (masked) text of the lines on screen.
pub fn raw(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    if loading(app, frame, area, &app.raw.index, "indexing lines") {
        return;
    }
    let Loading::Ready(index) = &app.raw.index else {
        return;
    };
    let total = index.lines() as usize;
    let detail_height = if area.height >= 14 { 5 } else { 0 };
    let [head, body, detail] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(detail_height),
    ])
    .areas(area);
    let height = usize::from(body.height);
    let cursor = app.raw.cursor.saturating_sub(1) as usize;
    let top = scroll(cursor, total, height);
    let shown_to = (top + height).min(total);
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(
                "lines {}-{} of {total} · values of prohibited fields are hidden",
                top + 1,
                shown_to
            ),
            t.muted,
        )),
        head,
    );
    let digits = total.max(1).to_string().len();
    let outcome_width = (usize::from(body.width) / 3).clamp(10, 30);
    let text_width = usize::from(body.width).saturating_sub(digits + outcome_width + 4);
    let plan = app.plan().filter(|_| app.raw.path == app.inbox.selected);
    let judged = |line: &RawLine| outcome(plan, index, line);
    let mut lines = Vec::with_capacity(height);
    for number in top + 1..=shown_to {
        let line = (number as u64)
            .checked_sub(app.raw.window_start)
            .and_then(|i| app.raw.window.get(i as usize));
        let Some(line) = line else {
            lines.push(Line::styled(format!("{number:>digits$} │ …"), t.muted));
            continue;
        };
        let (label, style) = outcome_label(t, &judged(line));
        let label = cut(&label, outcome_width, style);
        let pad = outcome_width.saturating_sub(label.content.chars().count());
        let mut spans = vec![
            Span::styled(format!("{number:>digits$} │ "), t.muted),
            label,
            Span::raw(" ".repeat(pad)),
            Span::styled(" │ ", t.muted),
        ];
        spans.extend(masked_spans(t, &line.text, text_width));
        lines.push(mark(Line::from(spans), number - 1 == cursor, t.selected));
    }
    frame.render_widget(Paragraph::new(lines), body);
    let current = (cursor as u64 + 1)
        .checked_sub(app.raw.window_start)
        .and_then(|i| app.raw.window.get(i as usize));
    if let (Some(line), true) = (current, detail_height > 0) {
        let (label, style) = outcome_label(t, &judged(line));
        let title = Line::from(vec![
            Span::styled(
                format!(" line {} · {} bytes · ", line.number, line.bytes),
                t.muted,
            ),
            cut(&label, 60, style),
            Span::raw(" "),
        ]);
        let block = Block::new()
            .borders(Borders::TOP)
            .border_style(t.border)
            .title(title);
        let width = usize::from(detail.width) * usize::from(detail_height.saturating_sub(1));
        let text = Line::from(masked_spans(t, &line.text, width));
        frame.render_widget(
            Paragraph::new(text).wrap(Wrap { trim: false }).block(block),
            detail,
        );
    }
}

/// A line's outcome: the line it repeats where §2 found it a retry or a conflict, else
/// the plan's finding where there is one, else what classifying the line said.
fn outcome(
    plan: Option<&std::sync::Arc<crate::plan::Plan>>,
    index: &LineIndex,
    line: &RawLine,
) -> LineOutcome {
    match index.repeat(line.number) {
        Some(Repeat::Retry { of }) => return LineOutcome::Retry { of },
        Some(Repeat::Conflict { of }) => return LineOutcome::Conflict { of },
        None => {}
    }
    let finding = plan.and_then(|p| {
        let i = p
            .findings
            .binary_search_by_key(&line.number, |f| f.line)
            .ok()?;
        Some(&p.findings[i])
    });
    match finding {
        Some(f) if f.breach => LineOutcome::Breach {
            reason: f.issue.reason,
            field: f.issue.field.clone(),
        },
        Some(f) => LineOutcome::Rejected {
            reason: f.issue.reason,
            field: f.issue.field.clone(),
        },
        None => line.outcome.clone(),
    }
}

/// The line's text with the `‹hidden›` marks styled apart.
fn masked_spans(t: &Theme, line: &str, width: usize) -> Vec<Span<'static>> {
    let shown = crate::console::sanitize::clean_cut(line, width);
    let mut spans = Vec::new();
    for (i, piece) in shown.split(crate::console::mask::HIDDEN).enumerate() {
        if i > 0 {
            spans.push(Span::styled(crate::console::mask::HIDDEN, t.masked));
        }
        spans.push(Span::styled(piece.to_owned(), t.text));
    }
    spans
}

/// An outcome's label and style.
fn outcome_label(t: &Theme, outcome: &LineOutcome) -> (String, Style) {
    let with = |reason: &dyn std::fmt::Display, field: &Option<String>| match field {
        Some(field) => format!("{reason} {field}"),
        None => reason.to_string(),
    };
    match outcome {
        LineOutcome::Accepted => ("✓ accepted".into(), t.accepted),
        LineOutcome::Blank => ("· blank".into(), t.blank),
        LineOutcome::Rejected { reason, field } => {
            (format!("✗ {}", with(reason, field)), t.rejected)
        }
        LineOutcome::Breach { reason, field } => (format!("⚠ {}", with(reason, field)), t.breach),
        LineOutcome::Unknown => ("… long line".into(), t.pending),
        LineOutcome::Retry { of } => (format!("↺ retry of line {of}"), t.accepted),
        LineOutcome::Conflict { of } => (format!("⚠ conflict with line {of}"), t.breach),
    }
}

/// The Ranked tab: each key's events, rank 1 kept, the others with why they lost. Only
/// the rows on screen are drawn, from the window read back around the cursor.
pub fn ranked(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    if loading(app, frame, area, &app.ranked.data, "ranking keys") {
        return;
    }
    let Loading::Ready(ranked) = &app.ranked.data else {
        return;
    };
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let rows = &app.ranked.rows;
    let filter = if app.ranked.filter.is_empty() {
        String::new()
    } else {
        format!(
            " · filter {:?}",
            crate::console::sanitize::clean(&app.ranked.filter)
        )
    };
    // Columns by width: the other fields (the status) from 90, the event id from 125.
    let wide = area.width >= 90;
    let widest = area.width >= 125;
    let iw = if wide { 24 } else { 20 };
    let tiebreak = ranked.tiebreak.as_deref().unwrap_or("tiebreak");
    let mut columns = format!(
        "{:<10} {:>4} {:<iw$} {:>6} {:>6}",
        "key",
        "rank",
        clean_cut(&ranked.order_by, iw),
        cut(tiebreak, 6, t.text).content,
        "line"
    );
    if widest {
        columns.push_str(&format!(" {:<10}", "event_id"));
    }
    if wide {
        columns.push_str(&format!(" {:<20}", "fields"));
    }
    columns.push_str(" why");
    frame.render_widget(
        Paragraph::new(Line::styled(format!(" {columns}{filter}"), t.muted)),
        head,
    );
    if rows.is_empty() {
        let what = if ranked.keys() == 0 {
            "no accepted events"
        } else {
            "no key matches the filter"
        };
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!("{what} · {} keys", ranked.keys()),
                t.muted,
            )),
            body,
        );
        return;
    }
    let badge = app
        .inbox
        .rows
        .iter()
        .find(|r| app.ranked.path.as_ref() == Some(&r.entry.path))
        .map(|r| r.badge);
    // A set's lines as (part, line) (§11.4), from the plan of the same input.
    let plan = app.plan().filter(|_| app.ranked.path == app.inbox.selected);
    let fate = if plan.is_some_and(|p| p.refusal.is_some()) || badge == Some(Badge::Refused) {
        Fate::Refused
    } else if badge == Some(Badge::Landed) {
        Fate::Published
    } else {
        Fate::WouldPublish
    };
    let line_ref = |line: u64| plan.map_or(line.to_string(), |p| p.line_ref(line));
    let height = usize::from(body.height);
    let top = scroll(app.ranked.cursor, rows.len(), height);
    let mut lines = Vec::with_capacity(height);
    for i in top..(top + height).min(rows.len()) {
        let Some((k, r)) = rows.at(i) else { break };
        let key = if r == 0 {
            cut(ranked.key(k), 10, t.title).content.into_owned()
        } else {
            String::new()
        };
        let Some(row) = i
            .checked_sub(app.ranked.window_start)
            .and_then(|w| app.ranked.window.get(w))
        else {
            let line = Line::from(vec![
                Span::styled(format!("{key:<10} "), t.title),
                Span::styled("…", t.muted),
            ]);
            lines.push(mark(line, i == app.ranked.cursor, t.selected));
            continue;
        };
        let style = match row.note {
            Note::Kept => t.kept,
            Note::Conflict { .. } => t.breach,
            _ => t.lost,
        };
        let rank = row.rank.map_or("–".to_owned(), |r| r.to_string());
        let seq = row.tiebreak.map_or("–".to_owned(), |s| s.to_string());
        let mut spans = vec![
            Span::styled(format!("{key:<10} "), t.title),
            Span::styled(
                format!(
                    "{rank:>4} {:<iw$} {seq:>6} {:>6}",
                    clean_cut(&row.instant, iw),
                    line_ref(row.line)
                ),
                style,
            ),
        ];
        let mut cell = |value: &str, width: usize, style| {
            let shown = cut(value, width, style);
            let pad = width.saturating_sub(shown.content.chars().count());
            spans.extend([Span::raw(" "), shown, Span::raw(" ".repeat(pad))]);
        };
        if widest {
            cell(&row.event_id, 10, style);
        }
        if wide {
            cell(&row.fields, 20, t.muted);
        }
        let mut why = row.note.describe(fate);
        if r == 1 && ranked.tie(k) {
            why.push_str(" ⚖");
        }
        spans.push(Span::styled(format!(" {why}"), style));
        lines.push(mark(Line::from(spans), i == app.ranked.cursor, t.selected));
    }
    frame.render_widget(Paragraph::new(lines), body);
}
