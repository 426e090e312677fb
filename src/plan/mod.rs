//! PURE. What a landing decides, with no rows and no I/O: an engine's [`Census`] of the
//! input and the [`Published`] state in, a [`Plan`] out.
//!
//! - [`batch::Batch`] is §1 applied to a chunk of lines (the classifier every engine's
//!   driver-side read runs); [`counts`] the line counts and findings it yields.
//! - [`rank`] is §3's order; [`merge`] §10's rules over events.
//! - [`decide()`] applies CONTRACT.md §5 steps 4–10 to a census and the published state,
//!   giving the [`Plan`] that `land` executes and the console shows.
//! - [`state`] the checkpoint and manifest as data; [`census`] what an engine reports.
//!
//! The row work itself (tally, event log, winners, Parquet) is an engine's:
//! `crate::engine::local` does it on this machine.

pub mod batch;
pub mod census;
pub mod counts;
pub mod decide;
pub mod feature;
pub mod keyed;
pub mod landed;
pub mod merge;
pub mod rank;
pub mod split;
pub mod state;

pub use batch::{Batch, EventFacts};
pub use census::{Census, DateCensus, rows_by_hour};
pub use counts::{Counts, LineFinding, SpilledFindings};
pub use decide::{DecideOptions, Policy, decide, skip};
pub use feature::TableFeatureRefusal;
pub use landed::{Landed, LandedDate, LandedState, landed};
pub use merge::{FileOut, Merged, Outcome, PublishedFile, PublishedFiles, PublishedRows};
pub use rank::Event;
pub use state::{Checkpoint, Manifest, Owner, PartitionEntry, Published, PublishedDate};

use serde::Serialize;

use crate::contract::{Date, LineReason};

/// What reports say of the counts and dates an engine never made, having refused on §1
/// alone ([`Plan::unranked`]).
pub const NOT_RANKED: &str = "not ranked: refused before the row work";

/// What a run of this plan would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Publish,
    Skip,
    Refuse,
}

impl Action {
    pub fn code(self) -> &'static str {
        match self {
            Action::Publish => "publish",
            Action::Skip => "skip",
            Action::Refuse => "refuse",
        }
    }
}

/// The dates a `too_many_dates` refusal names, and the plan lists, at most.
pub const DATES_NAMED: usize = 20;

/// Why a file is refused (§5 steps 5–9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A prohibited field, an unknown field or a conflicting retry, on its earliest line.
    Breach {
        reason: LineReason,
        line: u64,
        field: Option<String>,
    },
    /// More than `1 − mostly` of the non-blank lines broke one value rule (§1.2).
    RuleShare {
        /// `field.one_of` or `field.range`.
        rule: String,
        broken: u64,
        lines: u64,
        /// The field's `mostly`, as the config wrote it.
        mostly: String,
    },
    /// More rejects than `max_rejected_lines`.
    RejectCap { rejected: u64, max: u64 },
    /// More distinct dates than `max_dates`: `count` of them, the first
    /// [`DATES_NAMED`] in `dates` (a file of 200,000 dates refuses in one line).
    TooManyDates {
        dates: Vec<Date>,
        count: usize,
        max: usize,
    },
    /// No accepted rows and `publish_empty = false`.
    EmptyInput,
    /// Dates that would lose more than `max_shrink` of their rows.
    Shrink { dates: Vec<Date> },
    /// Dates that would grow past `max_growth` times their rows (§5.10).
    Growth { dates: Vec<Date> },
    /// A feature of the Delta table's protocol or metadata Wharf cannot keep (§12.8).
    TableFeature(TableFeatureRefusal),
}

impl Refusal {
    /// The contract's reason code.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Breach { reason, .. } => reason.code(),
            Refusal::RuleShare { .. } => "rule_share",
            Refusal::RejectCap { .. } => "reject_cap",
            Refusal::TooManyDates { .. } => "too_many_dates",
            Refusal::EmptyInput => "empty_input",
            Refusal::Shrink { .. } => "shrink",
            Refusal::Growth { .. } => "growth",
            Refusal::TableFeature(_) => "table_feature",
        }
    }

    /// One sentence for an operator: what happened and what to do.
    pub fn explain(&self, plan: &Plan) -> String {
        let list = |dates: &[Date]| {
            dates
                .iter()
                .map(Date::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Refusal::Breach {
                reason,
                line,
                field,
            } => {
                let field = field
                    .as_deref()
                    .map(|f| format!(" `{f}`"))
                    .unwrap_or_default();
                let fix = match reason {
                    LineReason::Conflict => {
                        "the producer sent two different events under one event id"
                    }
                    LineReason::ProhibitedField => {
                        "the file carries a prohibited field; ask the producer to drop it"
                    }
                    LineReason::ValueNotAllowed | LineReason::OutOfRange => {
                        "a value breaks the field's rule (on_violation = \"breach\"); see the quarantine for every such line, fix the producer or the rule"
                    }
                    _ => {
                        "the file carries a field the schema does not declare; declare it or ask the producer to drop it"
                    }
                };
                format!("{reason}{field} on line {}: {fix}", plan.line_ref(*line))
            }
            Refusal::RuleShare {
                rule,
                broken,
                lines,
                mostly,
            } => format!(
                "{broken} of {lines} lines ({:.2}%) break `{rule}`, more than mostly = {mostly} allows; see the quarantine for the lines, fix the producer or the rule",
                *broken as f64 * 100.0 / (*lines).max(1) as f64
            ),
            Refusal::RejectCap { rejected, max } => format!(
                "{rejected} rejected lines > max_rejected_lines {max}; see the quarantine for the reasons"
            ),
            Refusal::TooManyDates { dates, count, max } => {
                let named = if dates.len() < *count {
                    format!("the first {}", dates.len())
                } else {
                    "they are".to_owned()
                };
                format!(
                    "{count} dates > max_dates {max} ({named}: {}); split the file per date or raise max_dates",
                    list(dates)
                )
            }
            Refusal::EmptyInput => {
                "no accepted rows and publish_empty = false; nothing to publish".into()
            }
            Refusal::Shrink { dates } => format!(
                "would shrink {} beyond max_shrink; rerun with --allow-shrink if this file really restates those dates",
                plan.before_after(dates)
            ),
            Refusal::Growth { dates } => format!(
                "would grow {} beyond max_growth; a doubled or concatenated delivery? rerun with --allow-growth if this file really restates those dates",
                plan.before_after(dates)
            ),
            Refusal::TableFeature(refusal) => refusal.to_string(),
        }
    }
}

/// One date the input writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DatePlan {
    pub event_date: Date,
    /// Rows the date holds after the run.
    pub rows: u64,
    /// Rows published now, `None` when the date is new.
    pub rows_before: Option<u64>,
    /// The input that published it, `None` when new or unknown.
    pub owner_before: Option<String>,
    /// When `owner_before` published it, from the manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_published_at: Option<String>,
    /// Merge mode only (§10.6): how the date's keys change.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeCounts>,
    /// `rows` by UTC hour of their `partition_by_date_of` instant, where the engine
    /// counted them: the console's picture of the day, not part of `plan --json`.
    #[serde(skip)]
    pub by_hour: Option<[u64; 24]>,
}

/// How a merge changes one date's keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MergeCounts {
    pub inserted: u64,
    pub updated: u64,
    pub moved_in: u64,
    pub moved_out: u64,
    /// Published files of the date the batch read (their footers and filters named
    /// them), of those rewritten, and the rows written (CONTRACT.md §10.4).
    pub files_read: u64,
    pub files_rewritten: u64,
    pub rows_rewritten: u64,
}

impl MergeCounts {
    /// One line for people, the same in the CLI's report and the console's inbox.
    pub fn describe(&self) -> String {
        format!(
            "inserted {} · updated {} · moved in {} · moved out {} · files {} read, {} \
             rewritten ({} rows)",
            self.inserted,
            self.updated,
            self.moved_in,
            self.moved_out,
            self.files_read,
            self.files_rewritten,
            self.rows_rewritten
        )
    }
}

/// What a run would do with one input, and everything it needs to do it.
#[derive(Debug)]
pub struct Plan {
    pub product: String,
    pub input_name: String,
    pub input_sha256: String,
    pub action: Action,
    pub refusal: Option<Refusal>,
    /// Shrinking dates the operator allowed for this run.
    pub allowed_shrink: Vec<Date>,
    /// Growing dates the operator allowed for this run (§5.10).
    pub allowed_growth: Vec<Date>,
    pub counts: Counts,
    pub dates: Vec<DatePlan>,
    /// The census stopped before the row work: retries, keys, ties, stale and dates are
    /// unknown.
    pub unranked: bool,
    /// Rejects and breaches in line order (written to quarantine): the first ones of a
    /// file with more than an engine holds.
    pub findings: Vec<LineFinding>,
    /// The findings after `findings`, written out (quarantine reads them).
    pub spilled: Option<SpilledFindings>,
    /// A set's parts (§11.3), in order; empty for a single file.
    pub parts: Vec<crate::input::PartDigest>,
    /// The landing's run id, set when a run executes the plan (empty for a plan alone):
    /// what it writes carries it.
    pub run_id: String,
    /// The input's checkpoint holds these bytes: when they landed and what became of
    /// their dates since (§5.4). `None` for bytes never landed under this name.
    pub landed: Option<Landed>,
    /// The operator asked to land these landed bytes again (`--reland`, the console's
    /// rerun): the plan is a new input's, under every guard.
    pub reland: bool,
    /// The new columns the input adds (`unknown_fields = "add"`, §1.1), in order.
    pub added_columns: Vec<(String, crate::contract::FieldType)>,
    /// An input read from an S3 inbox: its ETag and size (§13.3), for the checkpoint.
    pub object: Option<crate::input::ObjectStamp>,
}

impl Plan {
    /// A plan of input `owner` decided without reading its rows (a skip, a refusal for the
    /// table): no counts, dates, findings or parts until the caller gives them.
    pub fn without_rows(product: &str, owner: Owner, action: Action) -> Plan {
        Plan {
            product: product.to_owned(),
            input_name: owner.input_name,
            input_sha256: owner.input_sha256,
            action,
            refusal: None,
            allowed_shrink: Vec::new(),
            allowed_growth: Vec::new(),
            counts: Counts::default(),
            dates: Vec::new(),
            unranked: true,
            findings: Vec::new(),
            spilled: None,
            parts: Vec::new(),
            run_id: String::new(),
            landed: None,
            reland: false,
            added_columns: Vec::new(),
            object: None,
        }
    }

    /// "adds column `eta_minutes` (int), column `x` (bool)", when the input adds any.
    pub fn added_text(&self) -> Option<String> {
        let each: Vec<String> = self
            .added_columns
            .iter()
            .map(|(name, ty)| format!("column `{name}` ({ty})"))
            .collect();
        (!each.is_empty()).then(|| format!("adds {}", each.join(", ")))
    }

    /// Where the input's line `line` is, as an operator reads it: `part:line` in a set,
    /// the line alone in a file (§11.4).
    pub fn line_ref(&self, line: u64) -> String {
        match crate::input::locate(&self.parts, line) {
            (Some(part), line) => format!("{part}:{line}"),
            (None, line) => line.to_string(),
        }
    }

    /// `dates` as an operator reads a guard: `DATE rows_before → rows`, comma-separated.
    pub fn before_after(&self, dates: &[Date]) -> String {
        let each: Vec<String> = self
            .dates
            .iter()
            .filter(|d| dates.contains(&d.event_date))
            .map(|d| {
                format!(
                    "{} {} → {}",
                    d.event_date,
                    d.rows_before.unwrap_or(0),
                    d.rows
                )
            })
            .collect();
        each.join(", ")
    }

    /// Every finding, held and spilled.
    pub fn findings_total(&self) -> u64 {
        self.findings.len() as u64 + self.spilled.as_ref().map_or(0, |s| s.count)
    }

    /// The dates the stage writes and the run leaves published: those with rows (a merge
    /// that empties a date retires it instead).
    pub fn dates_with_rows(&self) -> impl Iterator<Item = &DatePlan> {
        self.dates.iter().filter(|d| d.rows > 0)
    }

    /// Whose rows a publish replaces, one per date another input owns now:
    /// `2024-03-01 from b.jsonl, landed 2026-12-01 10:02`.
    pub fn replaces(&self) -> Vec<String> {
        self.dates
            .iter()
            .filter(|d| {
                d.owner_before
                    .as_ref()
                    .is_some_and(|o| *o != self.input_name)
            })
            .map(|d| {
                let when = d
                    .owner_published_at
                    .as_deref()
                    .map(|t| format!(", landed {}", landed::short_time(t)))
                    .unwrap_or_default();
                let owner = d.owner_before.as_deref().unwrap_or_default();
                format!("{} from {owner}{when}", d.event_date)
            })
            .collect()
    }

    /// The reason code, or `None` for a publish or skip.
    pub fn reason(&self) -> Option<&'static str> {
        self.refusal.as_ref().map(Refusal::code)
    }
}
