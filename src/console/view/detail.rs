//! The Ranked tab of the Inbox view, drawing only the rows on screen, and how a tab's
//! data still loading is drawn.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::widgets::{bar, cut, mark, scroll, size, spinner, text};
use crate::console::app::{App, Badge, Loading};
use crate::console::ranked::{Fate, Note};
use crate::console::sanitize::{clean, clean_cut, clean_cut_left};

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
    // A set's lines as `part:line` (§11.4), each as wide as the widest up to a cap.
    let index = ranked.index();
    let lw = if index.is_set() {
        let widest = index
            .parts()
            .iter()
            .map(|p| clean(&p.name).chars().count() + 1 + p.lines.max(1).to_string().len());
        widest
            .max()
            .unwrap_or(6)
            .clamp(6, if wide { 28 } else { 18 })
    } else {
        6
    };
    let line_ref = |line: u64| clean_cut_left(&index.line_ref(line), lw);
    // In the words of a retry or conflict: a set's line is named by its part.
    let at = |line: u64| match index.is_set() {
        true => clean(&index.line_ref(line)).into_owned(),
        false => format!("line {line}"),
    };
    let mut columns = format!(
        "{:<10} {:>4} {:<iw$} {:>6} {:>lw$}",
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
    let plan = app.plan().filter(|_| app.ranked.path == app.inbox.selected);
    let fate = if plan.is_some_and(|p| p.refusal.is_some()) || badge == Some(Badge::Refused) {
        Fate::Refused
    } else if badge == Some(Badge::Landed) {
        Fate::Published
    } else {
        Fate::WouldPublish
    };
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
                    "{rank:>4} {:<iw$} {seq:>6} {:>lw$}",
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
        let mut why = row.note.describe(fate, &at);
        if r == 1 && ranked.tie(k) {
            why.push_str(" ⚖");
        }
        spans.push(Span::styled(format!(" {why}"), style));
        lines.push(mark(Line::from(spans), i == app.ranked.cursor, t.selected));
    }
    frame.render_widget(Paragraph::new(lines), body);
}
