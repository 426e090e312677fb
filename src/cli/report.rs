//! How plans and run outcomes print: the §8 JSON object, and a short human report.

use std::path::Path;

use serde_json::{Value as Json, json};

use crate::land::RunOutcome;
use crate::land::quarantine::RejectRecord;
use crate::plan::{Action, NOT_RANKED, Plan};

/// Findings a JSON plan lists; `findings_total` counts them all.
const FINDINGS_SHOWN: usize = 1000;

/// The counts only the row work (§2–4) makes: `stale` too, which only ranking against the
/// published rows finds (merge mode; replace mode's is 0 when ranked, unknown when not).
const UNRANKED_COUNTS: [&str; 4] = ["retries", "keys", "ties_by_arrival", "stale"];

/// The counts a skip does not know: its checkpoint records accepted, rejected, retries and
/// keys; a skip reads no line (§5.4).
const SKIP_UNREAD: [&str; 5] = ["lines", "blank", "ties_by_arrival", "stale", "by_reason"];

/// The line `status` and `history` head a Delta publish root with: the product, the
/// table's URL, its format and `version` (what is known of it). The URL carries no
/// credential: the config refuses one in it, they come from the environment (§12.7).
pub fn table_line(product: &str, url: &str, version: &str) -> String {
    format!(
        "{}  publish root {}  format delta  {version}",
        inert(product),
        inert(url)
    )
}

/// The §8 object of a plan (`action` publish/skip/refuse).
pub fn plan_json(plan: &Plan) -> Json {
    let mut object = json!({
        "product": plan.product,
        "action": plan.action.code(),
        "reason": plan.reason(),
        "detail": plan.refusal.as_ref().map(|r| r.explain(plan)),
        "input_name": plan.input_name,
        "input_sha256": plan.input_sha256,
        "counts": plan.counts,
        "dates": plan.dates,
    });
    if plan.unranked {
        // Unknown is not zero: an engine that refused before the row work never counted.
        for unknown in UNRANKED_COUNTS {
            object["counts"][unknown] = Json::Null;
        }
        object["dates"] = Json::Null;
    }
    if let Some(crate::plan::Refusal::TooManyDates { count, .. }) = &plan.refusal {
        // `dates` lists the first ones only (the refusal's summary).
        object["dates_total"] = json!(count);
    }
    if !plan.allowed_shrink.is_empty() {
        object["allowed_shrink"] = json!(plan.allowed_shrink);
    }
    if !plan.allowed_growth.is_empty() {
        object["allowed_growth"] = json!(plan.allowed_growth);
    }
    if plan.action == Action::Skip && plan.landed.is_some() {
        // Decided from the checkpoint (§5.4): the input was not read line by line.
        for unknown in SKIP_UNREAD {
            object["counts"][unknown] = Json::Null;
        }
    }
    // The input's standing since its landing (§5.4), and whether this relands it.
    object["landed"] = json!(plan.landed);
    object["reland"] = json!(plan.reland);
    if !plan.added_columns.is_empty() {
        let added: Vec<Json> = plan
            .added_columns
            .iter()
            .map(|(name, ty)| json!({"name": name, "type": ty.name()}))
            .collect();
        object["added_columns"] = json!(added);
    }
    // The quarantine holds every finding; the plan shows the first, as rejects.jsonl
    // words them (`file` and `line` within it for a set, §11.4).
    let findings: Vec<RejectRecord> = plan
        .findings
        .iter()
        .take(FINDINGS_SHOWN)
        .map(|f| RejectRecord::of(plan, f))
        .collect();
    object["findings"] = json!(findings);
    object["findings_total"] = json!(plan.findings_total());
    if !plan.parts.is_empty() {
        object["parts"] = json!(plan.parts);
    }
    object
}

/// The §8 object of a run (`action` published/skipped/refused).
pub fn outcome_json(outcome: &RunOutcome) -> Json {
    let mut object = plan_json(&outcome.plan);
    object["action"] = json!(outcome.status.code());
    object["duration_ms"] = json!(outcome.duration_ms);
    object["run_id"] = json!(outcome.plan.run_id);
    object
}

/// The §8 object of a run that was busy (`action` busy): the product's lock was held,
/// or another writer committed the Delta table's next version first.
pub fn busy_json(path: &Path, error: &crate::Error) -> Json {
    let name = path.file_name().map(crate::input::name_of);
    json!({
        "action": "busy", "reason": null, "input_name": name,
        "input_sha256": null, "detail": error.to_string(),
    })
}

/// One readable line about a run's outcome, for a log: what happened, the input, and its
/// dates and counts, or why it was refused.
pub fn outcome_line(outcome: &RunOutcome) -> String {
    let plan = &outcome.plan;
    let c = &plan.counts;
    let what = match &plan.refusal {
        Some(refusal) => format!(
            "{}: {} (rejects: wharf quarantine {})",
            refusal.code(),
            inert(&refusal.explain(plan)),
            &plan.input_sha256[..plan.input_sha256.len().min(12)]
        ),
        None => {
            let dates: Vec<String> = plan
                .dates
                .iter()
                .map(|d| format!("{} ({} rows)", d.event_date, d.rows))
                .collect();
            format!(
                "dates {}  accepted {} · rejected {} · keys {}",
                dates.join(", "),
                c.accepted,
                c.rejected,
                c.keys
            )
        }
    };
    format!(
        "{:<9}  {}  {what}  {} ms",
        outcome.status.code(),
        inert(&plan.input_name),
        outcome.duration_ms
    )
}

/// A set's parts in one line: how many, their bytes, and the first names.
fn parts_text(plan: &Plan) -> String {
    const NAMED: usize = 8;
    let bytes: u64 = plan.parts.iter().map(|p| p.size).sum();
    let mut names: Vec<String> = plan
        .parts
        .iter()
        .take(NAMED)
        .map(|p| inert(&p.name))
        .collect();
    if plan.parts.len() > NAMED {
        names.push(format!("… {} more", plan.parts.len() - NAMED));
    }
    format!(
        "set of {} parts, {bytes} bytes: {}",
        plan.parts.len(),
        names.join(", ")
    )
}

/// A few readable lines about `plan`; `verb` is what happened or would happen.
pub fn plan_text(plan: &Plan, verb: &str) -> String {
    let c = &plan.counts;
    let mut out = format!(
        "{}  (sha256 {})\n{verb}",
        inert(&plan.input_name),
        &plan.input_sha256[..plan.input_sha256.len().min(16)]
    );
    if let Some(refusal) = &plan.refusal {
        out.push_str(&format!(
            " ({}): {}",
            refusal.code(),
            inert(&refusal.explain(plan))
        ));
    }
    if let Some(landed) = &plan.landed {
        out.push_str(&landed_text(plan, landed));
        if plan.action == Action::Skip {
            return out;
        }
    }
    if !plan.parts.is_empty() {
        out.push_str(&format!("\n{}", parts_text(plan)));
    }
    out.push_str(&format!(
        "\nlines {} · blank {} · accepted {} · rejected {} · ",
        c.lines, c.blank, c.accepted, c.rejected
    ));
    if plan.unranked {
        out.push_str(&format!("{NOT_RANKED}\n"));
    } else {
        out.push_str(&format!(
            "retries {} · keys {} · ties by arrival {}\n",
            c.retries, c.keys, c.ties_by_arrival
        ));
    }
    if c.stale > 0 {
        out.push_str(&format!(
            "stale (older than the published row, dropped): {}\n",
            c.stale
        ));
    }
    if !c.by_reason.is_empty() {
        out.push_str(&format!("by reason: {}\n", c.reasons_text()));
    }
    if !c.by_rule.is_empty() {
        out.push_str(&format!("by rule: {}\n", inert(&c.rules_text())));
    }
    if let Some(added) = plan.added_text() {
        out.push_str(&format!("{}\n", inert(&added)));
    }
    for date in &plan.dates {
        let before = match (&date.rows_before, &date.owner_before) {
            (None, _) => "new date".to_owned(),
            (Some(rows), Some(owner)) => {
                let when = date
                    .owner_published_at
                    .as_deref()
                    .map_or(String::new(), |t| {
                        format!(", landed {}", crate::plan::landed::short_time(t))
                    });
                format!("now {rows} rows from {}{when}", inert(owner))
            }
            (Some(rows), None) => format!("now {rows} rows, owner unknown"),
        };
        let arrow = if plan.action == Action::Refuse {
            "would be"
        } else {
            "→"
        };
        let change = date
            .merge
            .map_or(String::new(), |m| format!("  {}", m.describe()));
        out.push_str(&format!(
            "  event_date={}  {arrow} {} rows  ({before}){change}\n",
            date.event_date, date.rows
        ));
    }
    out.trim_end().to_owned()
}

/// What a plan of landed bytes adds: when they landed and what became of their dates;
/// for a skip, its recorded counts and how to land them again; for a rerun, whose rows
/// it replaces.
fn landed_text(plan: &Plan, landed: &crate::plan::Landed) -> String {
    let when = crate::plan::landed::short_time(&landed.published_at);
    let mut out = format!(" (landed {when}; {})", inert(&landed.describe()));
    if plan.action == Action::Skip {
        let c = &plan.counts;
        out.push_str(&format!(
            "\naccepted {} · rejected {} · retries {} · keys {} (its checkpoint)",
            c.accepted, c.rejected, c.retries, c.keys
        ));
        out.push_str(&format!(
            "\nto land these bytes again: wharf run {} --reland (plan, diff take --reland too)",
            inert(&plan.input_name)
        ));
        return out;
    }
    let replaces = plan.replaces();
    if plan.reland && !replaces.is_empty() {
        out.push_str(&format!(
            "\nreland: replaces {}",
            inert(&replaces.join("; "))
        ));
    }
    out
}

/// Text from a file (a name, a path, a message quoting one) made unable to steer the
/// terminal: the console's one sanitiser ([`crate::console::sanitize::clean`]).
pub fn inert(text: &str) -> String {
    crate::console::sanitize::clean(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Counts, Owner, Refusal};

    /// A plan the Spark engine refused on the reject cap before any Spark job: what its
    /// driver counted stays a number, what only the row work counts is null.
    fn refused_before_the_row_work() -> Plan {
        let owner = Owner {
            input_name: "day.jsonl".into(),
            input_sha256: "ab".repeat(32),
        };
        Plan {
            refusal: Some(Refusal::RejectCap {
                rejected: 3,
                max: 1,
            }),
            counts: Counts {
                lines: 10,
                accepted: 7,
                rejected: 3,
                ..Counts::default()
            },
            ..Plan::without_rows("orders", owner, Action::Refuse)
        }
    }

    #[test]
    fn an_unranked_plan_has_null_for_every_count_the_row_work_makes() {
        let json = plan_json(&refused_before_the_row_work());
        for unknown in ["retries", "keys", "ties_by_arrival", "stale"] {
            assert!(json["counts"][unknown].is_null(), "{unknown}: {json}");
        }
        assert!(json["dates"].is_null(), "{json}");
        for (counted, n) in [("lines", 10), ("accepted", 7), ("rejected", 3)] {
            assert_eq!(json["counts"][counted], n, "{counted}: {json}");
        }
        assert_eq!(json["reason"], "reject_cap");
    }

    #[test]
    fn an_unranked_plans_text_says_not_ranked_and_no_zero_keys() {
        let text = plan_text(&refused_before_the_row_work(), "would refuse");
        assert!(text.contains(NOT_RANKED), "{text}");
        assert!(!text.contains("keys"), "{text}");
        assert!(!text.contains("stale"), "{text}");
    }
}
