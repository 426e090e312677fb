//! The Inbox view: the list of inputs with their badges (left) and the selected input's
//! Plan, Raw, Ranked or Changes tab (right).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::widgets::{bar, block, cut, mark, scroll, short, size, spinner, text};
use crate::console::app::{App, Badge, Pane, PlanState};
use crate::console::sanitize::clean_cut;
use crate::console::theme::Theme;
use crate::plan::landed::short_time;
use crate::plan::{Action, DatePlan, LandedState, NOT_RANKED, Plan, Refusal};

pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let left = (area.width * 3 / 10).max(32).min(area.width / 2);
    let [list, detail] =
        Layout::horizontal([Constraint::Length(left), Constraint::Fill(1)]).areas(area);
    draw_list(app, frame, list);
    let tab = app.detail_tab();
    let t = &app.theme;
    let mut title = vec![Span::raw(" ")];
    for (name, pane) in [
        ("Plan", Pane::Plan),
        ("Raw", Pane::Raw),
        ("Ranked", Pane::Ranked),
        ("Changes", Pane::Changes),
    ] {
        title.push(Span::styled(
            format!(" {name} "),
            if tab == pane { t.tab_active } else { t.muted },
        ));
    }
    title.push(Span::raw(" "));
    let outer = block(app, Line::from(title), app.pane != Pane::List);
    let inner = outer.inner(detail);
    frame.render_widget(outer, detail);
    match tab {
        Pane::Raw => super::raw::raw(app, frame, inner),
        Pane::Ranked => super::detail::ranked(app, frame, inner),
        Pane::Changes => super::changes::draw(app, frame, inner),
        _ => frame.render_widget(
            Paragraph::new(plan_lines(app, usize::from(inner.width)))
                .wrap(Wrap { trim: false })
                .scroll((app.inbox.plan_scroll, 0)),
            inner,
        ),
    }
}

fn draw_list(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let rows = &app.inbox.rows;
    let closed = rows
        .iter()
        .filter(|r| !matches!(r.badge, Badge::Ignored(_)))
        .count();
    let mut title = vec![
        Span::styled(" Inbox ", t.title),
        Span::styled(format!("{closed} inputs"), t.muted),
        Span::raw(" "),
    ];
    if !app.inbox.filter.is_empty() {
        title.push(Span::styled("matching /", t.muted));
        title.push(text(&app.inbox.filter, t.key));
        title.push(Span::raw(" "));
    }
    let title = Line::from(title);
    let outer = block(app, title, app.pane == Pane::List);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    if rows.is_empty() {
        let empty = match app.inbox.all.is_empty() {
            true => format!(
                "empty: nothing in {}",
                super::widgets::shown_path(app, &app.config.inbox)
            ),
            false => format!("no input's name holds {:?}", app.inbox.filter),
        };
        frame.render_widget(
            Paragraph::new(Line::from(text(&empty, t.muted))).wrap(Wrap { trim: false }),
            inner,
        );
        return;
    }
    let height = usize::from(inner.height);
    let width = usize::from(inner.width);
    let top = scroll(app.inbox.cursor, rows.len(), height);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(i, row)| {
            let (label, style) = match &row.entry.set {
                Some(set) if set.open => ("◌ open", t.pending),
                _ => badge(t, row.badge),
            };
            // An unreadable file's row says why where its size would be, in the room its
            // name leaves (the detail pane has the whole error).
            let (size, size_style) = match app.inbox.unreadable.get(&row.entry.path) {
                Some((_, why)) if row.badge == Badge::Unreadable => {
                    let room = width.saturating_sub(1 + 10 + row.entry.name.chars().count() + 1);
                    (clean_cut(why, room.max(8)), t.refused)
                }
                // A landed input that no longer owns its dates says so where its size is.
                _ => match app.inbox.standing.get(&row.entry.name) {
                    Some(landed)
                        if row.badge == Badge::Landed && landed.state != LandedState::Owns =>
                    {
                        let said = match landed.state {
                            LandedState::Superseded => "superseded",
                            _ => "dates gone",
                        };
                        (said.to_owned(), t.warning)
                    }
                    _ => (entry_size(&row.entry), t.muted),
                },
            };
            let name_width = width.saturating_sub(1 + 10 + size.chars().count() + 1);
            let name_style = if matches!(row.badge, Badge::Ignored(_)) {
                t.ignored
            } else {
                t.text
            };
            let name = cut(&row.entry.name, name_width, name_style);
            let pad = name_width.saturating_sub(name.content.chars().count());
            let line = Line::from(vec![
                Span::styled(format!("{label:<9}"), style),
                Span::raw(" "),
                name,
                Span::raw(" ".repeat(pad + 1)),
                Span::styled(size, size_style),
            ]);
            mark(line, i == app.inbox.cursor, t.selected)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// How a landed input's standing is drawn: owning is plain, the rest calls for a look.
fn standing_style(t: &Theme, state: LandedState) -> Style {
    match state {
        LandedState::Owns => t.landed,
        LandedState::Superseded | LandedState::DatesGone => t.warning,
    }
}

/// A badge's label and style.
pub fn badge(t: &Theme, badge: Badge) -> (&'static str, Style) {
    match badge {
        Badge::New => ("● new", t.new),
        Badge::Landed => ("✓ landed", t.landed),
        Badge::Changed => ("± changed", t.changed),
        Badge::Refused => ("✗ refused", t.refused),
        Badge::Ignored(_) => ("· ignored", t.ignored),
        Badge::Hashing => ("… hashing", t.pending),
        Badge::Unreadable => ("✗ error", t.refused),
    }
}

fn plan_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(row) = app.current() else {
        return vec![Line::styled("No input selected.", t.muted)];
    };
    let mut lines = vec![Line::from(vec![
        text(&row.entry.name, t.title),
        Span::styled(format!("  {}", entry_size(&row.entry)), t.muted),
    ])];
    if let Some(set) = &row.entry.set {
        let marker = &app.config.set_marker;
        if set.open {
            lines.push(Line::styled(
                format!("Open set: no {marker} yet, so its producer may still be writing it."),
                t.pending,
            ));
            lines.push(Line::styled(
                format!("Wharf lands it once {marker} exists."),
                t.muted,
            ));
            return lines;
        }
        if let Some(invalid) = &set.invalid {
            lines.push(Line::styled(format!("Invalid set: {invalid}"), t.refused));
            return lines;
        }
    }
    if let Badge::Ignored(why) = row.badge {
        lines.push(Line::styled(format!("Ignored: {why}."), t.ignored));
        lines.push(Line::styled(
            "Wharf never lands it; a producer renames its file into place when it is closed.",
            t.muted,
        ));
        return lines;
    }
    match &app.inbox.plan {
        PlanState::None => lines.push(Line::styled("Enter plans it.", t.muted)),
        PlanState::Running { bytes, total, .. } => {
            lines.push(Line::from(vec![
                Span::styled(format!("{} planning ", spinner(app)), t.title),
                Span::styled("c cancels", t.muted),
            ]));
            lines.push(Line::from(vec![
                Span::styled(bar(*bytes, *total, 24), t.gauge),
                Span::styled(format!("  {} of {}", size(*bytes), size(*total)), t.muted),
            ]));
        }
        PlanState::Failed(error) => {
            lines.push(Line::from(text(error, t.error)));
            lines.push(Line::styled("Enter plans it again.", t.muted));
        }
        PlanState::Ready(plan) => lines.extend(plan_body(app, plan, width)),
    }
    lines
}

/// The plan: action and reason, dates and the picture of each, counts.
fn plan_body(app: &App, plan: &Plan, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut lines = vec![Line::from(vec![
        Span::styled("sha256 ", t.muted),
        Span::styled(short(&plan.input_sha256, 16), t.muted),
    ])];
    let (verb, style) = match plan.action {
        Action::Publish => ("PUBLISH", t.ok),
        Action::Skip => ("SKIP", t.landed),
        Action::Refuse => ("REFUSE", t.refused),
    };
    let mut head = vec![Span::styled(verb, style)];
    match &plan.refusal {
        Some(refusal) => {
            head.push(Span::styled(format!("  {}", refusal.code()), t.refused));
            lines.push(Line::from(head));
            lines.push(Line::from(text(&refusal.explain(plan), t.text)));
        }
        None if plan.action == Action::Skip => {
            head.push(Span::styled(
                "  already landed: a run skips it (R plans a rerun)",
                t.muted,
            ));
            lines.push(Line::from(head));
        }
        None if plan.reland => {
            head[0] = Span::styled("RERUN", t.warning);
            head.push(Span::styled(
                format!(
                    "  lands these bytes again: {} date(s), {} rows; r, then type its name",
                    plan.dates.len(),
                    plan.counts.keys
                ),
                t.muted,
            ));
            lines.push(Line::from(head));
            for replaced in plan.replaces() {
                lines.push(Line::from(vec![
                    Span::styled("  replaces ", t.warning),
                    text(&replaced, t.warning),
                ]));
            }
        }
        None => {
            head.push(Span::styled(
                format!(
                    "  replaces {} date(s), {} rows",
                    plan.dates.len(),
                    plan.counts.keys
                ),
                t.muted,
            ));
            lines.push(Line::from(head));
        }
    }
    if let Some(landed) = &plan.landed {
        lines.push(Line::from(vec![
            Span::styled("Landed ", t.muted),
            Span::styled(short_time(&landed.published_at), t.muted),
            Span::styled(": ", t.muted),
            text(&landed.describe(), standing_style(t, landed.state)),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::styled("Dates", t.title));
    for date in &plan.dates {
        lines.push(date_line(app, plan, date));
    }
    if plan.unranked {
        lines.push(Line::styled(format!("  {NOT_RANKED}"), t.muted));
    } else if plan.dates.is_empty() {
        lines.push(Line::styled("  none (no accepted rows)", t.muted));
    }
    lines.extend(super::day::lines(app, plan, width));
    lines.push(Line::default());
    lines.push(Line::styled("Counts", t.title));
    let c = &plan.counts;
    if plan.action == Action::Skip && plan.landed.is_some() {
        // A skip reads no line (§5.4): the counts its checkpoint recorded.
        lines.push(Line::styled(
            format!(
                "  accepted {} · rejected {} · retries {} · keys {}  (its checkpoint)",
                c.accepted, c.rejected, c.retries, c.keys
            ),
            t.text,
        ));
        return lines;
    }
    lines.push(Line::styled(
        format!(
            "  lines {} · blank {} · accepted {} · rejected {}",
            c.lines, c.blank, c.accepted, c.rejected
        ),
        t.text,
    ));
    let ranked = if plan.unranked {
        NOT_RANKED.to_owned()
    } else {
        format!(
            "retries {} · keys {} · ties by arrival {}",
            c.retries, c.keys, c.ties_by_arrival
        )
    };
    lines.push(Line::styled(format!("  {ranked}"), t.text));
    if c.stale > 0 {
        lines.push(Line::styled(
            format!(
                "  stale {} (older than the published row, dropped)",
                c.stale
            ),
            t.muted,
        ));
    }
    if !c.by_reason.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("  by reason: ", t.muted),
            Span::styled(c.reasons_text(), t.rejected),
        ]));
    }
    if !c.by_rule.is_empty() {
        // Field, rule and count only (§1.2): never a value.
        lines.push(Line::from(vec![
            Span::styled("  by rule: ", t.muted),
            text(&c.rules_text(), t.rejected),
        ]));
    }
    if let Some(added) = plan.added_text() {
        lines.push(Line::from(vec![Span::raw("  "), text(&added, t.text)]));
    }
    lines
}

/// `event_date=D  3 → 1 rows  now from X`, and why a refusal names the date.
fn date_line(app: &App, plan: &Plan, date: &DatePlan) -> Line<'static> {
    let t = &app.theme;
    let before = date.rows_before.map_or("new".to_owned(), |n| n.to_string());
    let arrow = if plan.action == Action::Refuse {
        "would be"
    } else {
        "→"
    };
    let mut spans = vec![
        Span::styled(format!("  event_date={}  ", date.event_date), t.text),
        Span::styled(format!("{before} {arrow} {} rows", date.rows), t.text),
    ];
    match (&date.owner_before, date.rows_before) {
        (Some(owner), _) => {
            spans.push(Span::styled("  now from ", t.muted));
            spans.push(text(owner, t.muted));
        }
        (None, Some(_)) => spans.push(Span::styled("  owner unknown", t.muted)),
        (None, None) => {}
    }
    if let Some(m) = date.merge {
        // Merge mode (§10.6): how the date's keys change.
        spans.push(Span::styled(format!("  {}", m.describe()), t.muted));
    }
    let why = match &plan.refusal {
        Some(Refusal::TooManyDates { count, max, .. }) => {
            Some(format!("✗ one of {count} dates > max_dates {max}"))
        }
        Some(Refusal::Shrink { dates }) if dates.contains(&date.event_date) => {
            let before = date.rows_before.unwrap_or(0).max(1) as f64;
            let lost = (before - date.rows as f64) / before * 100.0;
            Some(format!(
                "✗ loses {lost:.0}% > max_shrink {:.0}%",
                app.config.max_shrink * 100.0
            ))
        }
        Some(Refusal::Growth { dates }) if dates.contains(&date.event_date) => {
            let before = date.rows_before.unwrap_or(0).max(1) as f64;
            Some(format!(
                "✗ grows {:.1}× > max_growth {}×",
                date.rows as f64 / before,
                app.config.max_growth
            ))
        }
        _ if plan.allowed_shrink.contains(&date.event_date) => {
            Some("shrink allowed for this run".to_owned())
        }
        _ if plan.allowed_growth.contains(&date.event_date) => {
            Some("growth allowed for this run".to_owned())
        }
        _ => None,
    };
    if let Some(why) = why {
        spans.push(Span::styled(format!("  {why}"), t.refused));
    }
    Line::from(spans)
}

/// A file's size; a set's parts and total bytes (an open set's parts are not counted).
fn entry_size(entry: &crate::inbox::InboxEntry) -> String {
    match &entry.set {
        Some(set) if set.open => "set".to_owned(),
        Some(set) => format!("{} parts {}", set.parts, size(entry.size)),
        None => size(entry.size),
    }
}
