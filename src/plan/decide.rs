//! CONTRACT.md §5 steps 4–10 as pure functions: [`skip`] is step 4 from the checkpoint
//! alone (no census, no row of the lake); [`decide`] takes an engine's [`Census`] of the
//! input and the [`Published`] state to a [`Plan`]. Steps 1–3 (config, lock, corrupt
//! checkpoint) are errors raised before a decision exists.

use super::census::Census;
use super::counts::Counts;
use super::landed::landed;
use super::state::{Checkpoint, Owner, Published};
use super::{Action, DatePlan, Plan, Refusal};
use crate::config::{Config, WriteMode};

/// The part of the config a decision reads: §5's caps and guards and the write mode, so
/// the decision depends on these and nothing else of the loaded file.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub product: String,
    pub max_rejected_lines: u64,
    pub max_dates: usize,
    pub max_shrink: f64,
    /// §5.10: 0 is off.
    pub max_growth: f64,
    /// §1.2: `mostly` by field name.
    pub mostly: Vec<(String, f64)>,
    pub publish_empty: bool,
    pub write_mode: WriteMode,
}

impl Policy {
    pub fn of(config: &Config) -> Policy {
        Policy {
            product: config.product.clone(),
            max_rejected_lines: config.max_rejected_lines,
            max_dates: config.max_dates,
            max_shrink: config.max_shrink,
            max_growth: config.max_growth,
            mostly: config.mostly.clone(),
            publish_empty: config.publish_empty,
            write_mode: config.write_mode,
        }
    }
}

/// What the operator allows for this run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecideOptions {
    /// Publish even where a date would lose more than `max_shrink` of its rows.
    pub allow_shrink: bool,
    /// Publish even where a date would grow past `max_growth` times its rows.
    pub allow_growth: bool,
    /// Plan landed bytes again as a new input (`--reland`), instead of skipping them.
    pub reland: bool,
}

impl DecideOptions {
    /// What an operator's confirmation of `refusal` allows, when it is a guard one may
    /// override for a run (§5.9 shrink, §5.10 growth); `None` for any other refusal.
    pub fn confirming(refusal: &Refusal) -> Option<DecideOptions> {
        match refusal {
            Refusal::Shrink { .. } => Some(DecideOptions {
                allow_shrink: true,
                ..DecideOptions::default()
            }),
            Refusal::Growth { .. } => Some(DecideOptions {
                allow_growth: true,
                ..DecideOptions::default()
            }),
            _ => None,
        }
    }
}

/// §5.4: whether the input whose identity is `sha256` is a skip: its checkpoint holds
/// that identity and the operator did not ask to land it again.
pub fn is_skip(checkpoint: Option<&Checkpoint>, sha256: &str, options: DecideOptions) -> bool {
    !options.reland && checkpoint.is_some_and(|c| c.input_sha256 == sha256)
}

/// The plan of a skip (§5.4), from `checkpoint` and `published` alone: its counts are
/// those the checkpoint recorded, its dates as they stand now, and its standing says
/// what became of them.
pub fn skip(policy: &Policy, checkpoint: &Checkpoint, published: &Published) -> Plan {
    let standing = landed(checkpoint, published);
    let dates = standing
        .dates
        .iter()
        .map(|d| {
            let now = published.dates.get(&d.event_date);
            DatePlan {
                event_date: d.event_date,
                rows: now.map_or(0, |n| n.rows),
                rows_before: now.map(|n| n.rows),
                owner_before: now
                    .and_then(|n| n.owner.as_ref())
                    .map(|o| o.input_name.clone()),
                owner_published_at: now.and_then(|n| n.published_at.clone()),
                merge: None,
                by_hour: None,
            }
        })
        .collect();
    let owner = Owner {
        input_name: checkpoint.input_name.clone(),
        input_sha256: checkpoint.input_sha256.clone(),
    };
    Plan {
        counts: Counts {
            accepted: checkpoint.accepted_rows,
            rejected: checkpoint.rejected_rows,
            retries: checkpoint.retries,
            keys: checkpoint.keys,
            ..Counts::default()
        },
        dates,
        unranked: false,
        parts: checkpoint.parts.clone(),
        landed: Some(standing),
        ..Plan::without_rows(&policy.product, owner, Action::Skip)
    }
}

/// Decides what a run does with the input `owner` (its name and hash), from what an
/// engine's census found in it (in merge mode, with what the batch does to the published
/// rows, §10).
pub fn decide(
    census: Census,
    owner: Owner,
    policy: &Policy,
    published: &Published,
    options: DecideOptions,
) -> Plan {
    // A plan over `max_dates` refuses (too_many_dates, or an earlier refusal): it lists
    // the first dates only, so a file of a million dates costs no million date plans.
    let dates_total = census.dates.len();
    let listed = if dates_total > policy.max_dates {
        super::DATES_NAMED
    } else {
        dates_total
    };
    let dates = census
        .dates
        .iter()
        .take(listed)
        .map(|(&event_date, date)| {
            let before = published.dates.get(&event_date);
            DatePlan {
                event_date,
                rows: date.rows,
                rows_before: before.map(|b| b.rows),
                owner_before: before
                    .and_then(|b| b.owner.as_ref())
                    .map(|o| o.input_name.clone()),
                owner_published_at: before.and_then(|b| b.published_at.clone()),
                merge: date.merge,
                by_hour: date.by_hour,
            }
        })
        .collect();
    let checkpoint = published.checkpoint.as_ref();
    if is_skip(checkpoint, &owner.input_sha256, options)
        && let Some(checkpoint) = checkpoint
    {
        return skip(policy, checkpoint, published);
    }
    // The same bytes landed before: a rerun the operator asked for says what it replaces.
    let standing = checkpoint
        .filter(|c| c.input_sha256 == owner.input_sha256)
        .map(|c| landed(c, published));
    // The run's schema (`added_columns`) is the caller's, land::columns; the input's
    // object stamp is set by land.
    let mut plan = Plan {
        counts: census.counts.clone(),
        dates,
        unranked: census.unranked,
        parts: census.parts.clone(),
        reland: standing.is_some(),
        landed: standing,
        ..Plan::without_rows(&policy.product, owner, Action::Publish)
    };
    let shrinking: Vec<_> = plan
        .dates
        .iter()
        .filter(|d| loses_too_much(d, policy.max_shrink))
        .map(|d| d.event_date)
        .collect();
    let growing: Vec<_> = plan
        .dates
        .iter()
        .filter(|d| grows_too_much(d, policy.max_growth))
        .map(|d| d.event_date)
        .collect();
    let refusal = if let Some(breach) = census.first_breach() {
        Some(Refusal::Breach {
            reason: breach.issue.reason,
            line: breach.line,
            field: breach.issue.field.clone(),
        })
    } else if let Some(share) = rule_share(&census.counts, &policy.mostly) {
        Some(share)
    } else if census.counts.rejected > policy.max_rejected_lines {
        Some(Refusal::RejectCap {
            rejected: census.counts.rejected,
            max: policy.max_rejected_lines,
        })
    } else if dates_total > policy.max_dates {
        // Replace: the winners' dates. Merge: the dates that gain, change or lose a row.
        // Summarised: the refusal repeats on every scheduled run, in its log and output.
        Some(Refusal::TooManyDates {
            dates: plan.dates.iter().map(|d| d.event_date).collect(),
            count: dates_total,
            max: policy.max_dates,
        })
    } else if census.counts.keys == 0 && !policy.publish_empty {
        Some(Refusal::EmptyInput)
    } else if policy.write_mode == WriteMode::Replace && !shrinking.is_empty() {
        if options.allow_shrink {
            plan.allowed_shrink = shrinking;
            None
        } else {
            Some(Refusal::Shrink { dates: shrinking })
        }
    } else {
        None
    };
    // §5.10 runs after §5.9: a shrink allowed for this run still meets the growth guard.
    let refusal = match refusal {
        None if policy.write_mode == WriteMode::Replace && !growing.is_empty() => {
            if options.allow_growth {
                plan.allowed_growth = growing;
                None
            } else {
                Some(Refusal::Growth { dates: growing })
            }
        }
        other => other,
    };
    plan.action = if refusal.is_some() {
        Action::Refuse
    } else {
        Action::Publish
    };
    plan.refusal = refusal;
    plan.findings = census.findings;
    plan.spilled = census.spilled;
    plan
}

/// §5.9: the date exists and would lose more than `max_shrink` of its rows.
fn loses_too_much(date: &DatePlan, max_shrink: f64) -> bool {
    match date.rows_before {
        Some(before) if before > date.rows => {
            (before - date.rows) as f64 / before as f64 > max_shrink
        }
        _ => false,
    }
}

/// §1.2 `mostly`: the first rule (by name) broken by more than `1 − mostly` of the
/// input's non-blank lines.
fn rule_share(counts: &super::Counts, mostly: &[(String, f64)]) -> Option<Refusal> {
    let lines = counts.lines - counts.blank;
    counts.by_rule.iter().find_map(|(rule, &broken)| {
        let field = rule.rsplit_once('.').map(|(field, _)| field);
        let (_, share) = mostly.iter().find(|(f, _)| Some(f.as_str()) == field)?;
        // A decimal share is not exact in binary (1 − 0.9 is 0.0999…): exactly
        // `1 − mostly` of the lines must not read as more.
        let allowed = (1.0 - share) * lines as f64 + 1e-9 * lines.max(1) as f64;
        (broken as f64 > allowed).then(|| Refusal::RuleShare {
            rule: rule.clone(),
            broken,
            lines,
            mostly: share.to_string(),
        })
    })
}

/// §5.10: the date exists and would grow past `max_growth` times its rows (0: off).
fn grows_too_much(date: &DatePlan, max_growth: f64) -> bool {
    match date.rows_before {
        Some(before) if max_growth > 0.0 && before > 0 => {
            date.rows as f64 > before as f64 * max_growth
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::contract::Date;
    use crate::plan::{Counts, DateCensus, MergeCounts, PublishedDate};

    fn date(text: &str) -> Date {
        Date::parse(text).expect("a date")
    }

    /// A census of `keys` winners on 2024-03-01, which holds 10 published rows.
    fn shrinking(keys: u64) -> (Census, Owner, Published) {
        let census = Census {
            sha256: "ab".repeat(32),
            parts: Vec::new(),
            counts: Counts {
                lines: keys,
                accepted: keys,
                keys,
                ..Counts::default()
            },
            findings: Vec::new(),
            spilled: None,
            dates: BTreeMap::from([(
                date("2024-03-01"),
                DateCensus {
                    rows: keys,
                    merge: None,
                    by_hour: None,
                },
            )]),
            unranked: false,
        };
        let owner = Owner {
            input_name: "b.jsonl".into(),
            input_sha256: census.sha256.clone(),
        };
        let before = Owner {
            input_name: "a.jsonl".into(),
            input_sha256: "cd".repeat(32),
        };
        let published = Published {
            checkpoint: None,
            dates: BTreeMap::from([(
                date("2024-03-01"),
                PublishedDate {
                    rows: 10,
                    owner: Some(before),
                    published_at: Some("2026-12-01T10:02:00Z".into()),
                },
            )]),
        };
        (census, owner, published)
    }

    #[test]
    fn a_census_alone_decides_a_shrink_and_its_allowance() {
        let config = crate::config::fixtures::orders();
        let (census, owner, published) = shrinking(2);
        let plan = decide(
            census.clone(),
            owner.clone(),
            &Policy::of(&config),
            &published,
            DecideOptions::default(),
        );
        assert_eq!(plan.action, Action::Refuse);
        assert_eq!(plan.reason(), Some("shrink"));
        let day = &plan.dates[0];
        assert_eq!((day.rows, day.rows_before), (2, Some(10)));
        assert_eq!(day.owner_before.as_deref(), Some("a.jsonl"));
        let allowed = DecideOptions {
            allow_shrink: true,
            ..DecideOptions::default()
        };
        let plan = decide(
            census,
            owner.clone(),
            &Policy::of(&config),
            &published,
            allowed,
        );
        assert_eq!(plan.action, Action::Publish);
        assert_eq!(plan.allowed_shrink, [date("2024-03-01")]);

        let (census, _, _) = shrinking(6); // loses 4 of 10: within max_shrink 0.5
        let plan = decide(
            census,
            owner,
            &Policy::of(&config),
            &published,
            DecideOptions::default(),
        );
        assert_eq!((plan.action, plan.counts.keys), (Action::Publish, 6));
    }

    /// [`shrinking`]'s census of `keys` winners decided under `config`.
    fn decided(config: &Config, keys: u64, options: DecideOptions) -> Plan {
        let (census, owner, published) = shrinking(keys);
        decide(census, owner, &Policy::of(config), &published, options)
    }

    #[test]
    fn a_date_growing_past_max_growth_is_refused_unless_allowed() {
        let mut config = crate::config::fixtures::orders();
        config.max_growth = 3.0;
        let none = DecideOptions::default();
        // 10 rows published: 30 is exactly 3×, 31 is past it.
        assert_eq!(decided(&config, 30, none).action, Action::Publish);
        let plan = decided(&config, 31, none);
        assert_eq!(plan.reason(), Some("growth"));
        let why = plan.refusal.as_ref().map(|r| r.explain(&plan));
        assert!(why.is_some_and(|w| w.contains("2024-03-01 10 → 31")));
        let allowed = DecideOptions {
            allow_growth: true,
            ..none
        };
        let plan = decided(&config, 31, allowed);
        assert_eq!(plan.action, Action::Publish);
        assert_eq!(plan.allowed_growth, [date("2024-03-01")]);
        // Allowing a shrink does not allow a growth.
        let shrink = DecideOptions::confirming(&Refusal::Shrink { dates: vec![] });
        let plan = decided(&config, 31, shrink.unwrap_or_default());
        assert_eq!(plan.reason(), Some("growth"));
        config.write_mode = WriteMode::Merge; // a merge adds keys: never a growth refusal
        assert_eq!(decided(&config, 31, none).action, Action::Publish);
        config.max_growth = 0.0; // off
        config.write_mode = WriteMode::Replace;
        assert_eq!(decided(&config, 1000, none).action, Action::Publish);
    }

    #[test]
    fn a_rule_broken_by_more_than_one_minus_mostly_refuses_the_file() {
        let mut config = crate::config::fixtures::orders();
        config.mostly = vec![("status".into(), 0.9)];
        let policy = Policy::of(&config);
        let decided = |broken: u64, blank: u64| {
            let (mut census, owner, published) = shrinking(10);
            census.counts.lines = 100 + blank;
            census.counts.blank = blank;
            census.counts.rejected = broken;
            census.counts.by_rule = BTreeMap::from([
                ("status.one_of".to_owned(), broken),
                ("city.one_of".to_owned(), 50), // no mostly: the reject cap's
            ]);
            decide(census, owner, &policy, &published, DecideOptions::default())
        };
        // Exactly 1 − mostly of the non-blank lines (blank ones do not count) is allowed.
        assert_eq!(decided(10, 40).reason(), None);
        let plan = decided(11, 40);
        assert_eq!(plan.reason(), Some("rule_share"));
        let why = plan
            .refusal
            .as_ref()
            .map(|r| r.explain(&plan))
            .unwrap_or_default();
        assert!(
            why.contains("11 of 100 lines (11.00%) break `status.one_of`"),
            "{why}"
        );
        assert!(why.contains("mostly = 0.9"), "{why}");
    }

    /// b.jsonl's checkpoint, landed with these bytes on 2024-03-01.
    fn landed_checkpoint(owner: &Owner) -> Checkpoint {
        Checkpoint {
            product: "orders".into(),
            input_name: owner.input_name.clone(),
            input_sha256: owner.input_sha256.clone(),
            accepted_rows: 2,
            rejected_rows: 0,
            retries: 0,
            keys: 2,
            event_dates: vec!["2024-03-01".into()],
            publish_root: "lake".into(),
            published_at: "2026-12-01T09:00:00Z".into(),
            tool_version: "0".into(),
            table_version: None,
            parts: Vec::new(),
            object: None,
        }
    }

    #[test]
    fn landed_bytes_skip_whoever_owns_their_date_until_the_operator_relands() {
        let config = crate::config::fixtures::orders();
        let policy = Policy::of(&config);
        // a.jsonl published the date after b.jsonl: b is superseded, and still a skip.
        let (census, owner, mut published) = shrinking(10);
        published.checkpoint = Some(landed_checkpoint(&owner));
        let plan = decide(
            census.clone(),
            owner.clone(),
            &policy,
            &published,
            DecideOptions::default(),
        );
        assert_eq!(plan.action, Action::Skip);
        let standing = plan.landed.as_ref().expect("a skip says what became of it");
        assert_eq!(standing.state, crate::plan::LandedState::Superseded);
        assert_eq!(standing.dates[0].by.as_deref(), Some("a.jsonl"));
        // The date gone altogether: still a skip.
        let mut gone = published.clone();
        gone.dates.clear();
        let plan = decide(
            census.clone(),
            owner.clone(),
            &policy,
            &gone,
            DecideOptions::default(),
        );
        assert_eq!(plan.action, Action::Skip);
        // --reland: a new input's plan, naming whose rows it replaces.
        let reland = DecideOptions {
            reland: true,
            ..DecideOptions::default()
        };
        let plan = decide(census, owner, &policy, &published, reland);
        assert_eq!((plan.action, plan.reland), (Action::Publish, true));
        assert_eq!(
            plan.replaces(),
            ["2024-03-01 from a.jsonl, landed 2026-12-01 10:02"]
        );
    }

    #[test]
    fn a_merge_census_passes_its_changes_and_its_counts_into_the_plan() {
        let mut config = crate::config::fixtures::orders();
        config.write_mode = WriteMode::Merge;
        let (mut census, owner, published) = shrinking(2);
        let change = MergeCounts {
            inserted: 1,
            updated: 1,
            moved_in: 0,
            moved_out: 3,
            ..MergeCounts::default()
        };
        census.counts.stale = 4;
        if let Some(day) = census.dates.get_mut(&date("2024-03-01")) {
            day.merge = Some(change);
        }
        // Merge mode never refuses a shrink: keys move between dates.
        let plan = decide(
            census,
            owner,
            &Policy::of(&config),
            &published,
            DecideOptions::default(),
        );
        assert_eq!(plan.action, Action::Publish);
        assert_eq!(plan.dates[0].merge, Some(change));
        assert_eq!(plan.counts.stale, 4);
    }
}
