//! The Quarantine view (entries → one input's rejects) and the History view (the run
//! log and the partitions with their owners and trash; a landing's diff, drawn by
//! [`draw_diff`] as the Changes tab is).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::changes::draw_diff;
use super::widgets::{block, cell, clock, short, table, text};
use crate::console::app::{App, HistoryPane, LandingDiff};
use crate::console::sanitize::clean;
use crate::plan::NOT_RANKED;

pub fn quarantine(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    if let Some(rejects) = &app.quarantine.rejects {
        let s = &rejects.summary;
        let title = Line::from(vec![
            Span::styled(format!(" {} rejects of ", rejects.records.len()), t.title),
            text(&s.input_name, t.title),
            text(
                &format!(
                    " {} · {} {} ",
                    short(&s.input_sha256, 12),
                    s.action,
                    s.reason.as_deref().unwrap_or("")
                ),
                t.muted,
            ),
        ]);
        let outer = block(app, title, true);
        let inner = outer.inner(area);
        frame.render_widget(outer, area);
        let rows = rejects
            .records
            .iter()
            .map(|r| {
                let style = if matches!(
                    r.reason.as_str(),
                    "prohibited_field" | "unknown_field" | "conflict"
                ) {
                    t.breach
                } else {
                    t.rejected
                };
                // A set's rejects sit on (part, line) (§11.4).
                let at = r
                    .file
                    .as_ref()
                    .map_or(r.line.to_string(), |f| format!("{f}:{}", r.line));
                let mut spans = vec![text(&format!("{at:>8}  "), t.text)];
                spans.extend(cell(&r.reason, 26, style));
                spans.extend(cell(r.field.as_deref().unwrap_or("–"), 18, t.text));
                spans.push(text(r.event_id.as_deref().unwrap_or("–"), t.muted));
                Line::from(spans)
            })
            .collect();
        let header = format!("{:>8}  {:<26} {:<18} event_id", "line", "reason", "field");
        table(app, frame, inner, header, rows, Some(rejects.cursor));
        return;
    }
    let visible = app.quarantine.visible();
    let filter = if app.quarantine.filter.is_empty() {
        String::new()
    } else {
        format!(
            "· filter {:?} ",
            crate::console::sanitize::clean(&app.quarantine.filter)
        )
    };
    let title = Line::from(vec![
        Span::styled(" Quarantine ", t.title),
        Span::styled(format!("{} entries {filter}", visible.len()), t.muted),
    ]);
    let outer = block(app, title, true);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    let name_width = (usize::from(inner.width) / 4).clamp(12, 40);
    let rows = visible
        .iter()
        .map(|i| {
            let e = &app.quarantine.entries[*i];
            let style = if e.action == "refused" {
                t.refused
            } else {
                t.landed
            };
            let mut spans = vec![Span::styled(
                format!("{}  ", short(&e.input_sha256, 12)),
                t.muted,
            )];
            spans.extend(cell(&e.action, 9, style));
            spans.extend(cell(e.reason.as_deref().unwrap_or("–"), 16, style));
            spans.extend(cell(&e.input_name, name_width, t.text));
            let reasons: Vec<String> = e
                .by_reason
                .iter()
                .map(|(r, n)| format!("{r} {n}"))
                .collect();
            spans.push(text(
                &if reasons.is_empty() {
                    "no rejects".to_owned()
                } else {
                    reasons.join(" · ")
                },
                t.rejected,
            ));
            Line::from(spans)
        })
        .collect();
    let header = format!(
        "{:<12}  {:<9} {:<16} {:<name_width$} counts by reason",
        "hash", "action", "reason", "input"
    );
    table(app, frame, inner, header, rows, Some(app.quarantine.cursor));
}

pub fn history(app: &App, frame: &mut Frame, area: Rect) {
    let t = &app.theme;
    let h = &app.history;
    if let Some(diff) = &h.diff {
        landing_diff(app, frame, area, diff);
        return;
    }
    let [runs_area, parts_area] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Fill(1)]).areas(area);
    let mut title = vec![
        Span::styled(" Run log ", t.title),
        Span::styled(format!("{} runs, newest first ", h.runs.len()), t.muted),
    ];
    if !h.filter.is_empty() {
        title.push(Span::styled("matching /", t.muted));
        title.push(text(&h.filter, t.key));
        title.push(Span::raw(" "));
    }
    let title = Line::from(title);
    let outer = block(app, title, h.pane == HistoryPane::Runs);
    let inner = outer.inner(runs_area);
    frame.render_widget(outer, runs_area);
    let wide = inner.width >= 120;
    let name_width = if wide { 30 } else { 18 };
    let rows = h
        .runs
        .iter()
        .map(|r| {
            let style = match r.action.as_str() {
                "refused" => t.refused,
                "published" | "restored" => t.ok,
                _ => t.landed,
            };
            let mut spans = cell(&clock(&r.time), 19, t.muted);
            spans.extend(cell(&r.action, 9, style));
            spans.extend(cell(r.reason.as_deref().unwrap_or("–"), 16, style));
            spans.extend(cell(&r.input_name, name_width, t.text));
            spans.push(text(&r.dates.join(","), t.text));
            if wide {
                // An engine that refused before the row work never counted keys (§8).
                let keys = if r.unranked {
                    "–".to_owned()
                } else {
                    r.counts.keys.to_string()
                };
                spans.push(Span::styled(
                    format!(
                        "  keys {keys} · rejected {} · {} ms",
                        r.counts.rejected, r.duration_ms
                    ),
                    t.muted,
                ));
            }
            Line::from(spans)
        })
        .collect();
    let header = format!(
        "{:<19} {:<9} {:<16} {:<name_width$} dates",
        "time (UTC)", "action", "reason", "input"
    );
    let cursor = (h.pane == HistoryPane::Runs).then_some(h.run_cursor);
    // The run under the cursor: that it was never ranked, and a set's parts.
    let run = h.runs.get(h.run_cursor).filter(|_| cursor.is_some());
    let width = usize::from(inner.width).saturating_sub(1);
    let detail = run.and_then(|r| {
        // The run id first: what an alert or a lineage event names the landing by.
        let id = match r.run_id.as_str() {
            "" => String::new(),
            id => format!("run {id} · "),
        };
        match (r.unranked, r.parts.is_empty()) {
            (false, true) => (!id.is_empty()).then(|| id.trim_end_matches(" · ").to_owned()),
            (true, true) => Some(format!("{id}{NOT_RANKED}")),
            (unranked, false) => {
                let lead = if unranked {
                    format!("{id}{NOT_RANKED} · ")
                } else {
                    id
                };
                Some(parts_line(&lead, &r.parts, width))
            }
        }
    });
    let inner = with_detail(app, frame, inner, detail);
    table(app, frame, inner, header, rows, cursor);

    // A Delta root says which table and version the dates are of.
    let delta = h.table.as_ref().map_or(String::new(), |(url, version)| {
        let version = version.map_or("no commit yet".to_owned(), |v| format!("version {v}"));
        format!(
            "Delta {} {version} · ",
            crate::console::sanitize::clean(url)
        )
    });
    let title = Line::from(vec![
        Span::styled(" Partitions ", t.title),
        Span::styled(
            format!(
                "{delta}{} dates · r restores the previous generation ",
                h.partitions.len()
            ),
            t.muted,
        ),
    ]);
    let outer = block(app, title, h.pane == HistoryPane::Partitions);
    let inner = outer.inner(parts_area);
    frame.render_widget(outer, parts_area);
    if h.partitions.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("nothing published yet", t.muted))
                .wrap(Wrap { trim: false }),
            inner,
        );
        return;
    }
    let rows = h
        .partitions
        .iter()
        .map(|p| {
            let mut spans = vec![Span::styled(
                format!("event_date={}{:>9} rows  ", p.date, p.rows),
                t.text,
            )];
            let owner = p.owner.as_deref().unwrap_or("owner unknown");
            spans.extend(cell(owner, name_width, t.text));
            if wide {
                let sha = short(p.owner_sha256.as_deref().unwrap_or("–"), 12);
                spans.push(Span::styled(format!("{sha:<12}  "), t.muted));
            }
            let trash = match &p.previous {
                Some(previous) => {
                    let owner = previous.owner.as_ref();
                    let owner = owner.map_or("unknown", |o| o.input_name.as_str());
                    let owner = crate::console::sanitize::clean(owner);
                    let n = p.generations;
                    format!(
                        "{n} older · r brings back {} rows from {owner}",
                        previous.rows
                    )
                }
                None => "no earlier generation".to_owned(),
            };
            spans.push(Span::styled(trash, t.muted));
            Line::from(spans)
        })
        .collect();
    let hash = if wide {
        format!("{:<14}", "hash")
    } else {
        String::new()
    };
    let header = format!(
        "{:<21}{:>14}  {:<name_width$} {hash}trash",
        "date", "rows", "owner"
    );
    let cursor = (h.pane == HistoryPane::Partitions).then_some(h.partition_cursor);
    // The date under the cursor: its owner's parts when a set owns it.
    let partition = h.partitions.get(h.partition_cursor);
    let width = usize::from(inner.width).saturating_sub(1);
    let detail = partition
        .filter(|p| cursor.is_some() && !p.owner_parts.is_empty())
        .map(|p| {
            let owner = clean(p.owner.as_deref().unwrap_or("owner unknown"));
            parts_line(&format!("{owner}: "), &p.owner_parts, width)
        });
    let inner = with_detail(app, frame, inner, detail);
    table(app, frame, inner, header, rows, cursor);
}

/// Draws `detail` (sanitized already) on the last line of `area`, when there is one, and
/// gives back the rest of `area` for the table above it.
fn with_detail(app: &App, frame: &mut Frame, area: Rect, detail: Option<String>) -> Rect {
    let Some(detail) = detail else {
        return area;
    };
    let [rest, line] = Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    let detail = Line::styled(format!(" {detail}"), app.theme.muted);
    frame.render_widget(Paragraph::new(detail), line);
    rest
}

/// `lead` then `set of N parts: a, b, … and K more`, naming as many parts as fit in `width`
/// characters; each name sanitized (a part's name is text from the inbox).
fn parts_line(lead: &str, parts: &[String], width: usize) -> String {
    let mut out = format!("{lead}set of {} parts: ", parts.len());
    for (i, name) in parts.iter().enumerate() {
        let name = clean(name);
        let separator = if i == 0 { "" } else { ", " };
        let left = parts.len() - i - 1;
        let more = if left == 0 {
            0
        } else {
            format!(", … and {left} more").chars().count()
        };
        let needed = separator.len() + name.chars().count() + more;
        if out.chars().count() + needed > width {
            out.push_str(&format!("{separator}… and {} more", parts.len() - i));
            break;
        }
        out.push_str(separator);
        out.push_str(&name);
    }
    out
}

/// What a landing changed, in a block naming it.
fn landing_diff(app: &App, frame: &mut Frame, area: Rect, diff: &LandingDiff) {
    let t = &app.theme;
    let title = Line::from(vec![
        Span::styled(" Landing of ", t.title),
        text(&diff.run.input_name, t.title),
        // The run log is a file too: its time is sanitized like the name.
        text(&format!(" at {} ", clock(&diff.run.time)), t.muted),
    ]);
    let outer = block(app, title, true);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    let what = "reading the generations it replaced and published";
    draw_diff(app, frame, inner, &diff.state, (what, dates));
}

/// A count of dates, as the diff's progress counts.
fn dates(n: u64) -> String {
    format!("{n} date{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::parts_line;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("part-{i:05}.jsonl")).collect()
    }

    #[test]
    fn parts_line_names_what_fits_and_counts_the_rest() {
        let all = parts_line("", &names(2), 80);
        assert_eq!(all, "set of 2 parts: part-00000.jsonl, part-00001.jsonl");
        let cut = parts_line("day: ", &names(8), 60);
        assert_eq!(cut, "day: set of 8 parts: part-00000.jsonl, … and 7 more");
        assert!(cut.chars().count() <= 60);
        let none = parts_line("", &names(8), 20);
        assert_eq!(none, "set of 8 parts: … and 8 more");
        let hostile = parts_line("", &["a\u{1b}[2J".to_owned()], 80);
        assert_eq!(
            hostile, "set of 1 parts: a␛[2J",
            "the escape shown, not sent"
        );
    }
}
