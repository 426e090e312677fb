//! PURE. [`Landed`]: what became of a landed input's dates since its landing (CONTRACT.md
//! §5.4), from its checkpoint and the published state as the manifest names it, never
//! from the lake's rows. A skip, a rerun plan, `status` and the console show it.

use serde::Serialize;

use super::state::{Checkpoint, Owner, Published};
use crate::contract::Date;

/// One landed date's fate, or (as [`Landed::state`]) the input's as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LandedState {
    /// Every date the landing left published is still this input's.
    Owns,
    /// Another input (or another writer) has published a date since.
    Superseded,
    /// A date is no longer published (a restore, a deletion, a compaction).
    DatesGone,
}

impl LandedState {
    pub fn code(self) -> &'static str {
        match self {
            LandedState::Owns => "owns",
            LandedState::Superseded => "superseded",
            LandedState::DatesGone => "dates_gone",
        }
    }
}

/// One date the landing left published, as it stands now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LandedDate {
    pub event_date: Date,
    pub state: LandedState,
    /// Superseded: the input that owns the date now (`None`: a writer the manifest does
    /// not know).
    pub by: Option<String>,
    /// Superseded: when `by` published it.
    pub by_published_at: Option<String>,
}

/// A landed input's standing: when it landed and what became of its dates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Landed {
    pub published_at: String,
    pub state: LandedState,
    pub dates: Vec<LandedDate>,
}

/// The standing of the input `checkpoint` records, against `published`.
pub fn landed(checkpoint: &Checkpoint, published: &Published) -> Landed {
    let me = Owner {
        input_name: checkpoint.input_name.clone(),
        input_sha256: checkpoint.input_sha256.clone(),
    };
    let dates: Vec<LandedDate> = checkpoint
        .event_dates
        .iter()
        .filter_map(|text| Date::parse(text))
        .map(|event_date| match published.dates.get(&event_date) {
            None => LandedDate {
                event_date,
                state: LandedState::DatesGone,
                by: None,
                by_published_at: None,
            },
            Some(now) if now.owner.as_ref() == Some(&me) => LandedDate {
                event_date,
                state: LandedState::Owns,
                by: None,
                by_published_at: None,
            },
            Some(now) => LandedDate {
                event_date,
                state: LandedState::Superseded,
                by: now.owner.as_ref().map(|o| o.input_name.clone()),
                by_published_at: now.published_at.clone(),
            },
        })
        .collect();
    let any = |state| dates.iter().any(|d| d.state == state);
    let state = if any(LandedState::Superseded) {
        LandedState::Superseded
    } else if any(LandedState::DatesGone) {
        LandedState::DatesGone
    } else {
        LandedState::Owns
    };
    Landed {
        published_at: checkpoint.published_at.clone(),
        state,
        dates,
    }
}

impl Landed {
    /// One line for an operator: `owns its dates`, `superseded: 2024-03-01 by b.jsonl
    /// (landed 2026-12-01 10:02)`, `dates gone: 2024-03-01`.
    pub fn describe(&self) -> String {
        let each = |state: LandedState| -> Vec<String> {
            self.dates
                .iter()
                .filter(|d| d.state == state)
                .map(|d| match (state, &d.by) {
                    (LandedState::Superseded, Some(by)) => format!(
                        "{} by {by}{}",
                        d.event_date,
                        d.by_published_at
                            .as_deref()
                            .map(|t| format!(" (landed {})", short_time(t)))
                            .unwrap_or_default()
                    ),
                    (LandedState::Superseded, None) => {
                        format!("{} by another writer", d.event_date)
                    }
                    _ => d.event_date.to_string(),
                })
                .collect()
        };
        let mut parts = Vec::new();
        let superseded = each(LandedState::Superseded);
        if !superseded.is_empty() {
            parts.push(format!("superseded: {}", superseded.join(", ")));
        }
        let gone = each(LandedState::DatesGone);
        if !gone.is_empty() {
            parts.push(format!("dates gone: {}", gone.join(", ")));
        }
        if parts.is_empty() {
            return "owns its dates".to_owned();
        }
        parts.join("; ")
    }
}

/// `2026-12-01T10:02:33.123456Z` as an operator reads it: `2026-12-01 10:02`.
pub fn short_time(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time}"),
        _ => rfc3339.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plan::PublishedDate;

    fn checkpoint(dates: &[&str]) -> Checkpoint {
        Checkpoint {
            product: "orders".into(),
            input_name: "a.jsonl".into(),
            input_sha256: "aa".repeat(32),
            accepted_rows: 1,
            rejected_rows: 0,
            retries: 0,
            keys: 1,
            event_dates: dates.iter().map(|d| d.to_string()).collect(),
            publish_root: "lake".into(),
            published_at: "2026-12-01T09:00:00.000000Z".into(),
            tool_version: "0".into(),
            table_version: None,
            parts: Vec::new(),
            object: None,
        }
    }

    fn owned_by(name: &str, sha: &str, at: &str) -> PublishedDate {
        PublishedDate {
            rows: 3,
            owner: Some(Owner {
                input_name: name.into(),
                input_sha256: sha.into(),
            }),
            published_at: Some(at.into()),
        }
    }

    #[test]
    fn each_date_is_owned_superseded_or_gone() {
        let day = |t| Date::parse(t).expect("a date");
        let published = Published {
            checkpoint: None,
            dates: BTreeMap::from([
                (
                    day("2024-03-01"),
                    owned_by("a.jsonl", &"aa".repeat(32), "2026-12-01T09:00:00Z"),
                ),
                (
                    day("2024-03-02"),
                    owned_by("b.jsonl", &"bb".repeat(32), "2026-12-01T10:02:59.5Z"),
                ),
            ]),
        };
        let all = landed(&checkpoint(&["2024-03-01"]), &published);
        assert_eq!(
            (all.state, all.describe().as_str()),
            (LandedState::Owns, "owns its dates")
        );
        let taken = landed(&checkpoint(&["2024-03-01", "2024-03-02"]), &published);
        assert_eq!(taken.state, LandedState::Superseded);
        assert_eq!(
            taken.describe(),
            "superseded: 2024-03-02 by b.jsonl (landed 2026-12-01 10:02)"
        );
        let gone = landed(&checkpoint(&["2024-03-01", "2024-03-03"]), &published);
        assert_eq!(gone.state, LandedState::DatesGone);
        assert_eq!(gone.describe(), "dates gone: 2024-03-03");
        // The same name with other bytes owns nothing of this landing's.
        let mut other = checkpoint(&["2024-03-01"]);
        other.input_sha256 = "cc".repeat(32);
        assert_eq!(landed(&other, &published).state, LandedState::Superseded);
    }
}
