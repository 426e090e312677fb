//! The History view: the run log and the partitions, and `r` on a partition asking to
//! restore its previous generation.

use super::cursor::move_cursor;
use crate::console::app::{App, Dialog, HistoryPane};
use crate::console::msg::{Effect, Intent};

/// An intent in the History view.
pub fn on_intent(app: &mut App, intent: Intent) -> Vec<Effect> {
    let h = &mut app.history;
    let (cursor, len) = match h.pane {
        HistoryPane::Runs => (&mut h.run_cursor, h.runs.len()),
        HistoryPane::Partitions => (&mut h.partition_cursor, h.partitions.len()),
    };
    if move_cursor(cursor, len, intent, 10) {
        return Vec::new();
    }
    match intent {
        Intent::NextPane | Intent::PrevPane => {
            h.pane = match h.pane {
                HistoryPane::Runs => HistoryPane::Partitions,
                HistoryPane::Partitions => HistoryPane::Runs,
            };
        }
        Intent::Run | Intent::Open if h.pane == HistoryPane::Partitions => {
            let Some(partition) = h.partitions.get(h.partition_cursor).cloned() else {
                return Vec::new();
            };
            if let Some(task) = &app.task {
                let text = format!("{} is in progress; wait for it to finish", task.title);
                app.warn(text);
            } else if partition.previous.is_some() {
                app.dialog = Some(Dialog::ConfirmRestore { partition });
            } else {
                let text = format!(
                    "event_date={} has no earlier generation in the trash; nothing to restore",
                    partition.date
                );
                app.warn(text);
            }
        }
        Intent::Run => {
            app.info("Tab to the partitions, then r restores a date's previous generation")
        }
        Intent::Back => {
            h.pane = HistoryPane::Runs;
        }
        _ => {}
    }
    Vec::new()
}
