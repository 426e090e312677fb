//! What draws over the views, in order: the quarantine view's raw line, a landing's or
//! restore's progress, the open dialog, and the help screen on top.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::popup::popup;
use super::widgets::{bar, size, spinner, text};
use super::{dialogs, help};
use crate::console::app::{App, Loading, Rejects, Task, View};
use crate::engine::Progress;

/// Draws every overlay that is open.
pub fn draw(app: &App, frame: &mut Frame, area: Rect) {
    if app.view == View::Quarantine
        && let Some(raw) = app
            .quarantine
            .rejects
            .as_ref()
            .and_then(|r| r.raw.as_ref().map(|raw| (r, raw)))
    {
        raw_line(app, frame, area, raw);
    }
    if let Some(task) = &app.task {
        progress(app, frame, area, task);
    }
    if let Some(dialog) = &app.dialog {
        dialogs::draw(app, frame, area, dialog);
    }
    if app.help {
        help::draw(app, frame, area);
    }
}

/// A landing or restore in progress.
fn progress(app: &App, frame: &mut Frame, area: Rect, task: &Task) {
    let mut lines = vec![Line::default()];
    match &task.progress {
        None => lines.push(Line::styled(
            format!("{} starting…", spinner(app)),
            app.theme.muted,
        )),
        Some(Progress::Reading { bytes, total }) => {
            lines.push(Line::styled(
                format!("reading and checking {} of {}", size(*bytes), size(*total)),
                app.theme.text,
            ));
            lines.push(Line::styled(bar(*bytes, *total, 30), app.theme.gauge));
            lines.push(Line::styled(
                "c stops it now, before anything is written",
                app.theme.muted,
            ));
        }
        Some(Progress::Staging { date }) => lines.push(Line::styled(
            format!("{} writing event_date={date} in staging", spinner(app)),
            app.theme.text,
        )),
        Some(Progress::Swapping { date }) => lines.push(Line::styled(
            format!("{} swapping event_date={date} in", spinner(app)),
            app.theme.text,
        )),
    }
    popup(
        app,
        frame,
        area,
        Line::from(text(&format!(" {} ", task.title), app.theme.title)),
        lines,
        60,
    );
}

/// One rejected line of a quarantined input, shown on screen only, masked.
fn raw_line(
    app: &App,
    frame: &mut Frame,
    area: Rect,
    (rejects, raw): (&Rejects, &Loading<String>),
) {
    let t = &app.theme;
    // A set's reject names its part (§11.4).
    let line = rejects
        .records
        .get(rejects.cursor)
        .map_or("0".into(), |r| match &r.file {
            Some(file) => format!("{file}:{}", r.line),
            None => r.line.to_string(),
        });
    let body = match raw {
        Loading::Ready(shown) => Line::from(text(shown, t.text)),
        Loading::Failed(error) => Line::from(text(error, t.error)),
        _ => Line::styled(
            format!("{} reading the input and checking its hash…", spinner(app)),
            t.muted,
        ),
    };
    let lines = vec![
        body,
        Line::default(),
        Line::styled(
            "Shown on screen only, never written anywhere; values of prohibited fields are hidden.",
            t.muted,
        ),
        Line::from(vec![
            Span::styled("Esc", t.key),
            Span::styled(" close", t.text),
        ]),
    ];
    let title = Line::from(vec![
        text(&format!(" line {line} of "), t.title),
        text(&rejects.summary.input_name, t.title),
        Span::raw(" "),
    ]);
    popup(app, frame, area, title, lines, 80);
}
