//! The dialogs: the run, shrink and restore confirmations, and the result of a landing
//! or a restore. Each says what will be written (or was), and which key does what.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::popup::popup;
use super::widgets::{shown_path, text};
use crate::console::app::{App, Dialog, Finished, PartitionRow};
use crate::land::RunStatus;
use crate::plan::landed::short_time;
use crate::plan::{Action, Plan, Refusal};

/// Draws `dialog` over `area`.
pub fn draw(app: &App, frame: &mut Frame, area: Rect, dialog: &Dialog) {
    let (title, lines) = match dialog {
        Dialog::ConfirmRun { plan, .. } => confirm_run(app, plan),
        Dialog::ConfirmShrink { plan, typed, .. } => confirm_shrink(app, plan, typed),
        Dialog::ConfirmReland { plan, typed, .. } => confirm_reland(app, plan, typed),
        Dialog::ConfirmRestore { partition } => confirm_restore(app, partition),
        Dialog::Result(finished) => result(app, finished),
    };
    popup(
        app,
        frame,
        area,
        Line::from(text(&title, app.theme.title)),
        lines,
        72,
    );
}

fn confirm_restore(app: &App, partition: &PartitionRow) -> (String, Vec<Line<'static>>) {
    let t = &app.theme;
    let previous = partition.previous.as_ref();
    let owner = previous
        .and_then(|p| p.owner.as_ref())
        .map_or("unknown", |o| o.input_name.as_str());
    let lines = vec![
        Line::from(vec![
            Span::raw("Bring back the generation replaced at "),
            text(previous.map_or("", |p| p.replaced_at.as_str()), t.text),
        ]),
        Line::from(vec![
            Span::raw("  "),
            Span::styled(format!("{} rows", previous.map_or(0, |p| p.rows)), t.text),
            Span::raw(" from "),
            text(owner, t.text),
        ]),
        Line::from(vec![
            Span::raw("The live partition ("),
            Span::raw(format!("{} rows from ", partition.rows)),
            text(partition.owner.as_deref().unwrap_or("unknown"), t.text),
            Span::raw(") moves to the trash; restoring again undoes this."),
        ]),
        Line::default(),
        answer(app, "y", "restore", "n / Esc", "cancel"),
    ];
    (format!(" Restore event_date={}? ", partition.date), lines)
}

fn answer(app: &App, yes: &str, what: &str, no: &str, cancel: &str) -> Line<'static> {
    let t = &app.theme;
    Line::from(vec![
        Span::styled(yes.to_owned(), t.key),
        Span::styled(format!(" {what}    "), t.text),
        Span::styled(no.to_owned(), t.key),
        Span::styled(format!(" {cancel}"), t.text),
    ])
}

fn dates(app: &App, plan: &Plan, arrow: &str) -> Vec<Line<'static>> {
    let t = &app.theme;
    plan.dates
        .iter()
        .map(|d| {
            let before = d.rows_before.map_or("new".to_owned(), |n| n.to_string());
            let mut spans = vec![Span::styled(
                format!(
                    "  event_date={}  {before} {arrow} {} rows",
                    d.event_date, d.rows
                ),
                t.text,
            )];
            if let Some(owner) = &d.owner_before {
                spans.push(Span::styled("  now from ", t.muted));
                spans.push(text(owner, t.muted));
            }
            Line::from(spans)
        })
        .collect()
}

fn quarantine_path(app: &App, plan: &Plan) -> String {
    let folder = app.config.quarantine_root.join(&plan.input_sha256);
    let shown = shown_path(app, &folder);
    let cut = shown
        .len()
        .saturating_sub(plan.input_sha256.len().saturating_sub(12));
    format!("{}…/", shown.get(..cut).unwrap_or(&shown))
}

fn confirm_run(app: &App, plan: &Plan) -> (String, Vec<Line<'static>>) {
    let t = &app.theme;
    let name = &plan.input_name;
    match (plan.action, &plan.refusal) {
        (Action::Publish, _) => {
            let mut lines = vec![Line::styled(
                format!(
                    "A run publishes {} rows. Each date below is replaced whole:",
                    plan.counts.keys
                ),
                t.text,
            )];
            lines.extend(dates(app, plan, "→"));
            if let Some(added) = plan.added_text() {
                // §1.1: the lake's schema grows, and keeps the column from now on.
                lines.push(Line::from(vec![
                    text(&added, t.warning),
                    Span::styled(" to the lake's schema, for good.", t.warning),
                ]));
            }
            lines.push(Line::styled(format!("Quarantine ({}), the partitions, the manifest and the checkpoint are written; the replaced generations go to the trash for restore.", quarantine_path(app, plan)), t.muted));
            lines.push(Line::default());
            lines.push(answer(app, "y", "land it", "n / Esc", "cancel"));
            (format!(" Land {name}? "), lines)
        }
        (Action::Skip, _) => {
            let lines = vec![
                Line::styled(
                    "Already landed: the checkpoint holds these bytes, whatever became of its dates.",
                    t.text,
                ),
                Line::styled(
                    "A run skips: it writes only a line in the run log. R plans a rerun instead.",
                    t.muted,
                ),
                Line::default(),
                answer(app, "y", "run (skip)", "n / Esc", "cancel"),
            ];
            (format!(" {name}: nothing to land "), lines)
        }
        (Action::Refuse, refusal) => {
            let mut lines = vec![Line::from(vec![
                Span::styled(
                    format!("REFUSED  {}  ", refusal.as_ref().map_or("", Refusal::code)),
                    t.refused,
                ),
                text(
                    &refusal
                        .as_ref()
                        .map(|r| r.explain(plan))
                        .unwrap_or_default(),
                    t.text,
                ),
            ])];
            lines.push(Line::default());
            lines.push(Line::styled(format!("A run writes the quarantine only ({}: rejects.jsonl, summary.json) and one run-log line.", quarantine_path(app, plan)), t.text));
            lines.push(Line::styled(
                "Every published partition and the checkpoint stay byte-for-byte as they are.",
                t.text,
            ));
            lines.push(Line::default());
            lines.push(answer(app, "y", "record the refusal", "n / Esc", "cancel"));
            (format!(" {name} will be refused "), lines)
        }
    }
}

fn confirm_shrink(app: &App, plan: &Plan, typed: &str) -> (String, Vec<Line<'static>>) {
    let t = &app.theme;
    let word = crate::console::app::guard_word(plan);
    let (guarded, head, caution, title) = match &plan.refusal {
        Some(Refusal::Growth { dates }) => (
            dates.clone(),
            format!(
                "Refused by default: these dates would grow past max_growth {}× their rows:",
                app.config.max_growth
            ),
            "A doubled or concatenated delivery is not a restatement. Land it only if this file really restates those dates.",
            "would grow published dates",
        ),
        Some(Refusal::Shrink { dates }) => (
            dates.clone(),
            format!(
                "Refused by default: these dates would lose more than max_shrink {:.0}% of their rows:",
                app.config.max_shrink * 100.0
            ),
            "A fragment is not a restatement. Land it only if this file really restates those dates.",
            "would shrink published dates",
        ),
        _ => (Vec::new(), String::new(), "", ""),
    };
    let shrinking = guarded;
    let mut lines = vec![Line::styled(head, t.refused)];
    let only: Vec<Line> = dates(app, plan, "→")
        .into_iter()
        .zip(&plan.dates)
        .filter(|(_, d)| shrinking.contains(&d.event_date))
        .map(|(l, _)| l)
        .collect();
    lines.extend(only);
    lines.push(Line::styled(caution, t.text));
    lines.push(Line::default());
    lines.extend(ask_word(
        app,
        ("Type ", word, " and Enter to land it anyway:  "),
        typed,
    ));
    (format!(" {} {title} ", plan.input_name), lines)
}

/// A rerun of landed bytes: when they landed, what it would do and whose rows it
/// replaces, and the input's name to type.
fn confirm_reland(app: &App, plan: &Plan, typed: &str) -> (String, Vec<Line<'static>>) {
    let t = &app.theme;
    let mut lines = Vec::new();
    if let Some(landed) = &plan.landed {
        lines.push(Line::from(vec![
            Span::styled("Landed ", t.text),
            Span::styled(short_time(&landed.published_at), t.text),
            Span::styled("; now: ", t.muted),
            text(&landed.describe(), t.muted),
        ]));
    }
    match (plan.action, &plan.refusal) {
        (Action::Refuse, Some(refusal)) => {
            lines.push(Line::from(vec![
                Span::styled(format!("REFUSED  {}  ", refusal.code()), t.refused),
                text(&refusal.explain(plan), t.text),
            ]));
            lines.push(Line::styled(
                "A rerun records the refusal only: quarantine and a run-log line; the partitions stay.",
                t.text,
            ));
        }
        _ => {
            lines.push(Line::styled(
                format!("A rerun publishes {} rows again:", plan.counts.keys),
                t.text,
            ));
            lines.extend(dates(app, plan, "→"));
            for replaced in plan.replaces() {
                lines.push(Line::from(vec![
                    Span::styled("  replaces ", t.warning),
                    text(&replaced, t.warning),
                ]));
            }
        }
    }
    lines.push(Line::default());
    lines.extend(ask_word(
        app,
        ("Type the input's name ", &plan.input_name, " and Enter:  "),
        typed,
    ));
    (format!(" Rerun {}? ", plan.input_name), lines)
}

/// The word a confirmation asks for (`before`, the word, `after`), what is typed so far,
/// and the keys that answer.
fn ask_word(
    app: &App,
    (before, word, after): (&str, &str, &str),
    typed: &str,
) -> [Line<'static>; 2] {
    let t = &app.theme;
    let ask = Line::from(vec![
        Span::styled(before.to_owned(), t.text),
        text(word, t.key),
        Span::styled(after.to_owned(), t.text),
        text(typed, t.warning),
        Span::styled("█", t.key),
    ]);
    let keys = answer(app, "Enter", "confirm", "Esc", "cancel, nothing is written");
    [ask, keys]
}

fn result(app: &App, finished: &Finished) -> (String, Vec<Line<'static>>) {
    let t = &app.theme;
    let close = Line::from(vec![
        Span::styled("Enter / Esc", t.key),
        Span::styled(" close", t.text),
    ]);
    match finished {
        Finished::Landed {
            status,
            plan,
            duration_ms,
            allowed_shrink,
        } => {
            let mut lines = Vec::new();
            match status {
                RunStatus::Published => {
                    lines.push(Line::styled(
                        format!("Published {} rows in {duration_ms} ms:", plan.counts.keys),
                        t.ok,
                    ));
                    lines.extend(dates(app, plan, "→"));
                    if *allowed_shrink {
                        lines.push(Line::styled(
                            "The operator allowed the shrink for this run.",
                            t.warning,
                        ));
                    }
                    if !plan.allowed_growth.is_empty() {
                        lines.push(Line::styled(
                            "The operator allowed the growth for this run.",
                            t.warning,
                        ));
                    }
                }
                RunStatus::Skipped => lines.push(Line::styled(
                    "Skipped: already landed. Only the run log was written.",
                    t.landed,
                )),
                RunStatus::Refused => {
                    lines.push(Line::from(vec![
                        Span::styled(
                            format!("Refused ({}): ", plan.reason().unwrap_or("")),
                            t.refused,
                        ),
                        text(
                            &plan
                                .refusal
                                .as_ref()
                                .map(|r| r.explain(plan))
                                .unwrap_or_default(),
                            t.text,
                        ),
                    ]));
                    lines.push(Line::styled(format!("Quarantine written to {}; the published partitions and the checkpoint are unchanged.", quarantine_path(app, plan)), t.text));
                }
            }
            lines.push(Line::default());
            lines.push(close);
            (format!(" {} {} ", status.code(), plan.input_name), lines)
        }
        Finished::Restored(restored) => {
            let owner = restored.owner.as_deref().unwrap_or("an unknown input");
            let lines = vec![
                Line::from(vec![
                    Span::styled(
                        format!(
                            "event_date={} holds {} rows from ",
                            restored.date, restored.rows
                        ),
                        t.ok,
                    ),
                    text(owner, t.ok),
                    Span::styled(" again.", t.ok),
                ]),
                Line::styled(
                    "The generation it replaced is in the trash; restoring again undoes this.",
                    t.muted,
                ),
                Line::default(),
                close,
            ];
            (format!(" restored event_date={} ", restored.date), lines)
        }
        Finished::Failed { what, error } => {
            let lines = vec![
                Line::styled(format!("{what} stopped:"), t.error),
                Line::from(text(error, t.text)),
                Line::default(),
                close,
            ];
            (format!(" {what} failed "), lines)
        }
    }
}
