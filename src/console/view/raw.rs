//! The Raw tab of the Inbox view: the lines on screen with their numbers (a set's by
//! part), outcomes and masked text, and the line under the cursor in full.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::detail::loading;
use super::widgets::{cut, mark, scroll};
use crate::console::app::{App, Loading};
use crate::console::raw::{LineIndex, LineOutcome, RawLine, Repeat};
use crate::console::sanitize::{clean, clean_cut_left};
use crate::console::theme::Theme;

/// The Raw tab: line numbers, outcomes and the (masked) text of the lines on screen. A
/// set's lines are numbered in their part, whose name the header and the line under the
/// cursor give (and each line, where the tab is wide enough).
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
            raw_head(index, cursor as u64 + 1, (top + 1, shown_to)),
            t.muted,
        )),
        head,
    );
    let gutter = Gutter::new(index, body.width);
    let outcome_width = (usize::from(body.width) / 3).clamp(10, 30);
    let text_width = usize::from(body.width).saturating_sub(gutter.width + outcome_width + 4);
    let plan = app.plan().filter(|_| app.raw.path == app.inbox.selected);
    let judged = |line: &RawLine| outcome(plan, index, line);
    let mut lines = Vec::with_capacity(height);
    for number in top + 1..=shown_to {
        let line = (number as u64)
            .checked_sub(app.raw.window_start)
            .and_then(|i| app.raw.window.get(i as usize));
        let number_shown = gutter.label(index, number as u64);
        let Some(line) = line else {
            lines.push(Line::styled(format!("{number_shown} │ …"), t.muted));
            continue;
        };
        let (label, style) = outcome_label(t, index, &judged(line));
        let label = cut(&label, outcome_width, style);
        let pad = outcome_width.saturating_sub(label.content.chars().count());
        let mut spans = vec![
            Span::styled(format!("{number_shown} │ "), t.muted),
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
        let (label, style) = outcome_label(t, index, &judged(line));
        let at = match index.locate(line.number) {
            (Some(_), _) => clean(&index.line_ref(line.number)).into_owned(),
            (None, number) => format!("line {number}"),
        };
        let title = Line::from(vec![
            Span::styled(format!(" {at} · {} bytes · ", line.bytes), t.muted),
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

/// The Raw tab's header: the lines shown, and in a set the part under the cursor.
fn raw_head(index: &LineIndex, cursor: u64, (from, to): (usize, usize)) -> String {
    let total = index.lines();
    let hidden = "values of prohibited fields are hidden";
    match (index.is_set(), index.part_of(cursor)) {
        (true, Some(p)) => {
            let part = &index.parts()[p];
            format!(
                "{} (part {} of {}) · line {} of {} · {total} lines in all · {hidden}",
                clean(&part.name),
                p + 1,
                index.parts().len(),
                cursor - part.first_line,
                part.lines,
            )
        }
        _ => format!("lines {from}-{to} of {total} · {hidden}"),
    }
}

/// How the Raw tab numbers its lines: the input's numbers for a file; a set's lines by
/// their part's numbers, as `part:line` where the tab is wide enough.
struct Gutter {
    width: usize,
    /// Whether each line names its part.
    parts: bool,
}

impl Gutter {
    /// Where a set's lines name their part: a part's name beside its line under ~90
    /// columns leaves too little of the line itself.
    const WIDE: u16 = 90;
    /// The most a `part:line` takes; a longer one keeps its end, where parts differ.
    const MOST: usize = 32;

    fn new(index: &LineIndex, width: u16) -> Gutter {
        let digits = |n: u64| n.max(1).to_string().len();
        if !index.is_set() {
            return Gutter {
                width: digits(index.lines()),
                parts: false,
            };
        }
        let parts = width >= Self::WIDE;
        let widest = index
            .parts()
            .iter()
            .map(|p| match parts {
                true => clean(&p.name).chars().count() + 1 + digits(p.lines),
                false => digits(p.lines),
            })
            .max()
            .unwrap_or(1);
        Gutter {
            width: widest.min(Self::MOST),
            parts,
        }
    }

    /// Line `number`, right-aligned.
    fn label(&self, index: &LineIndex, number: u64) -> String {
        let width = self.width;
        let shown = match (self.parts, index.locate(number)) {
            (true, (Some(_), _)) => clean_cut_left(&index.line_ref(number), width),
            (_, (_, at)) => at.to_string(),
        };
        format!("{shown:>width$}")
    }
}

/// A line's outcome: the line it repeats where §2 found it a retry or a conflict, else
/// the plan's held finding where there is one, else what the window's read said (the
/// plan's spilled finding, or classifying the line).
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
        Some(f) => crate::console::raw::finding_outcome(f),
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

/// An outcome's label and style; the line a retry or conflict repeats as `part:line` in
/// a set.
fn outcome_label(t: &Theme, index: &LineIndex, outcome: &LineOutcome) -> (String, Style) {
    let at = |line: u64| match index.is_set() {
        true => index.line_ref(line),
        false => format!("line {line}"),
    };
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
        // A set's line is named by its part, which says it is a line.
        LineOutcome::Retry { of } => (format!("↺ retry of {}", at(*of)), t.accepted),
        LineOutcome::Conflict { of } => (format!("⚠ conflict with {}", at(*of)), t.breach),
    }
}
