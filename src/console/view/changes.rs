//! The Changes tab, and the History view's diff of a past landing ([`draw_diff`]): what
//! a landing would change (or changed), per date its counts, then every changed key (`+`
//! inserted, `~` updated, `−` removed) with its fields `before → after`, and the key
//! under the cursor field by field. Only the rows on
//! screen are drawn; every value comes from a file, so each goes through `cut`/`text`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::detail::loading_in;
use super::widgets::{cut, mark, scroll, size, text};
use crate::console::app::{App, ChangesState, Loading};
use crate::console::changes::{Changes, Item, Outcome, Shown};
use crate::console::sanitize::clean_cut;
use crate::console::theme::Theme;
use crate::contract::Date;
use crate::diff::{Kind, json};

/// Dates listed with their counts before the changes; the rest are summed in one line.
const DATES_SHOWN: usize = 3;

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let what = "diffing against the published partitions";
    draw_diff(app, frame, area, &app.changes, (what, size));
}

/// Draws the diff `state` holds (the Changes tab's, or a past landing's in the History
/// view), `progress` naming the work while it runs and the unit it counts in.
pub fn draw_diff(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    state: &ChangesState,
    progress: (&str, fn(u64) -> String),
) {
    let t = &app.theme;
    if loading_in(app, frame, area, &state.data, progress) {
        return;
    }
    let Loading::Ready(changes) = &state.data else {
        return;
    };
    let mut head = outcome_lines(t, changes);
    if matches!(
        changes.outcome,
        Outcome::Refused { .. } | Outcome::Skipped | Outcome::Unavailable { .. }
    ) {
        frame.render_widget(Paragraph::new(head).wrap(Wrap { trim: false }), area);
        return;
    }
    head.extend(date_lines(t, changes, area.width));
    let filter = match (state.shown, state.filter.as_str()) {
        (Shown::All, "") => String::new(),
        (shown, "") => format!(" · {} only", shown.label()),
        (shown, key) => format!(" · {} · key {:?}", shown.label(), key),
    };
    head.push(Line::from(vec![
        Span::styled(
            format!(" {:<10} {:<1} {:<12} fields", "date", "", "key"),
            t.muted,
        ),
        text(&filter, t.muted),
    ]));
    // The key under the cursor, field by field, where the tab has the height for it.
    let fields = changes.fields.len() as u16;
    let detail = if area.height >= 16 + fields {
        fields + 1
    } else {
        0
    };
    let [top, list, bottom] = Layout::vertical([
        Constraint::Length(head.len() as u16),
        Constraint::Fill(1),
        Constraint::Length(detail),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(head), top);
    let rows = &state.rows;
    if rows.is_empty() {
        let why = if changes.items.is_empty() && changes.dates.is_empty() {
            "no date of it could be diffed"
        } else if changes.items.is_empty() && changes.outcome == Outcome::Landed {
            "nothing changed: every row it wrote was published as it was"
        } else if changes.items.is_empty() {
            "nothing would change: every row it writes is published as it is"
        } else {
            "no change matches: f shows another kind, / another key"
        };
        frame.render_widget(Paragraph::new(Line::styled(why, t.muted)), list);
        return;
    }
    let height = usize::from(list.height);
    let width = usize::from(list.width);
    let top_row = scroll(state.cursor, rows.len(), height);
    let lines: Vec<Line> = (top_row..(top_row + height).min(rows.len()))
        .map(|i| {
            mark(
                row(t, changes, rows[i] as usize, width),
                i == state.cursor,
                t.selected,
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    if detail > 0
        && let Some(item) = rows.get(state.cursor).map(|&i| &changes.items[i as usize])
    {
        frame.render_widget(
            Paragraph::new(field_lines(t, changes, item))
                .block(Block::new().borders(Borders::TOP).border_style(t.border)),
            bottom,
        );
    }
}

/// What a run would do, and for a refusal or a skip why nothing changes.
fn outcome_lines(t: &Theme, changes: &Changes) -> Vec<Line<'static>> {
    match &changes.outcome {
        Outcome::Publishes => vec![Line::styled("A run changes these keys:", t.text)],
        // The Plan tab carries the refusal's sentence; the dates below carry its numbers.
        Outcome::IfShrinkConfirmed => vec![
            Line::styled("Refused (shrink) unless you confirm it (r).", t.warning),
            Line::styled("Confirmed, a run changes these keys:", t.text),
        ],
        Outcome::IfGrowthConfirmed => vec![
            Line::styled("Refused (growth) unless you confirm it (r).", t.warning),
            Line::styled("Confirmed, a run changes these keys:", t.text),
        ],
        Outcome::Refused { code, why } => vec![
            Line::from(vec![
                Span::styled("Nothing would change: ", t.text),
                text(&changes.input_name, t.title),
                Span::styled(format!(" would be refused ({code})."), t.refused),
            ]),
            Line::from(text(why, t.muted)),
        ],
        Outcome::Skipped => vec![Line::from(vec![
            Span::styled("Nothing would change: ", t.text),
            text(&changes.input_name, t.title),
            Span::styled(" is already published, every date still its own.", t.muted),
        ])],
        Outcome::Landed => vec![Line::styled(
            "What it changed, from the generation it replaced to the one it published:",
            t.text,
        )],
        Outcome::Unavailable { why } => vec![Line::from(text(why, t.warning))],
    }
}

/// Per date: inserted, updated, removed and unchanged keys, in words where `width`
/// has room for them, and what a date's note says (a date only noted has no counts).
fn date_lines(t: &Theme, changes: &Changes, width: u16) -> Vec<Line<'static>> {
    // In words where the line has room for them and its note.
    let count = |n: u64, sign: &str, what: &str, style: Style, words: bool| {
        let what = if words { what } else { &what[..3] };
        Span::styled(
            format!("  {sign}{n} {what}"),
            if n > 0 { style } else { t.muted },
        )
    };
    let counted = changes.dates.iter().map(|d| d.event_date);
    let mut dates: Vec<Date> = counted.chain(changes.notes.iter().map(|n| n.0)).collect();
    dates.sort_unstable();
    dates.dedup();
    let mut lines: Vec<Line> = dates
        .iter()
        .take(DATES_SHOWN)
        .map(|&date| {
            let mut spans = vec![Span::styled(format!(" {date}"), t.title)];
            let note = changes.notes.iter().find(|n| n.0 == date).map(|n| n.1);
            let words = usize::from(width) >= 64 + note.map_or(0, |n| n.chars().count() + 2);
            if let Some(d) = changes.dates.iter().find(|d| d.event_date == date) {
                spans.extend([
                    count(d.inserted, "+", "inserted", t.accepted, words),
                    count(d.updated, "~", "updated", t.changed, words),
                    count(d.removed, "−", "removed", t.rejected, words),
                    count(d.unchanged, "=", "unchanged", t.muted, words),
                ]);
            }
            if let Some(note) = note {
                let style = if spans.len() == 1 { t.warning } else { t.muted };
                spans.push(Span::styled(format!("  {note}"), style));
            }
            Line::from(spans)
        })
        .collect();
    let more = dates.len().saturating_sub(DATES_SHOWN);
    if more > 0 {
        lines.push(Line::styled(
            format!(" … {more} more dates: n / N jump between them"),
            t.muted,
        ));
    }
    lines
}

fn kind_style(t: &Theme, kind: Kind) -> (&'static str, Style) {
    match kind {
        Kind::Inserted => ("+", t.accepted),
        Kind::Updated => ("~", t.changed),
        Kind::Removed => ("−", t.rejected),
    }
}

/// One changed key: its date, kind, key and fields (the key's own field aside), cut to
/// `width` with the cursor's mark.
fn row(t: &Theme, changes: &Changes, index: usize, width: usize) -> Line<'static> {
    let item = &changes.items[index];
    let (sign, style) = kind_style(t, item.kind);
    let key = clean_cut(changes.key_text(index), 12);
    let mut shown: Vec<_> = changes
        .fields_of(item)
        .into_iter()
        .filter(|(f, _, _)| usize::from(*f) != changes.key_field)
        .collect();
    shown.sort_by_key(|(f, _, _)| changes.bookkeeping.contains(&usize::from(*f)));
    let fields: Vec<String> = shown
        .into_iter()
        .map(|(f, before, after)| {
            let name = changes.field_name(f);
            match item.kind {
                Kind::Inserted => format!("{name}={}", json::text(&after)),
                Kind::Removed => format!("{name}={}", json::text(&before)),
                Kind::Updated => {
                    format!("{name} {} → {}", json::text(&before), json::text(&after))
                }
            }
        })
        .collect();
    // The mark, the date, the sign and the key's column come first.
    let room = width.saturating_sub(1 + 11 + 2 + 13);
    Line::from(vec![
        Span::styled(format!("{} ", item.event_date), t.muted),
        Span::styled(format!("{sign} "), style),
        Span::styled(format!("{key:<12} "), t.title),
        cut(&fields.join("  "), room, style),
    ])
}

/// The key under the cursor: every field the change shows, `before → after`.
fn field_lines(t: &Theme, changes: &Changes, item: &Item) -> Vec<Line<'static>> {
    let (_, style) = kind_style(t, item.kind);
    let widest = changes
        .fields
        .iter()
        .map(|f| f.chars().count())
        .max()
        .unwrap_or(0);
    changes
        .fields_of(item)
        .into_iter()
        .map(|(f, before, after)| {
            let name = changes.field_name(f);
            let (before, after) = match item.kind {
                Kind::Inserted => ("–".to_owned(), json::text(&after)),
                Kind::Removed => (json::text(&before), "–".to_owned()),
                Kind::Updated => (json::text(&before), json::text(&after)),
            };
            Line::from(vec![
                Span::styled(format!(" {:<widest$}  ", clean_cut(name, 40)), t.muted),
                text(&before, t.text),
                Span::styled(" → ", t.muted),
                text(&after, style),
            ])
        })
        .collect()
}
