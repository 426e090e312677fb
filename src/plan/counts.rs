//! The state types an input's reading yields and every report shows: the line
//! [`Counts`] of CONTRACT.md §8 and the [`LineFinding`] of a rejected or breaching line.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contract::{LineIssue, LineReason};

/// The line counts of CONTRACT.md §8. A count missing from a stored record is 0: run-log
/// lines written before a count existed (`stale` came with merge mode) still read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Lines in the file (blank included).
    pub lines: u64,
    pub blank: u64,
    /// Accepted lines, identical retries included, conflicting lines not.
    pub accepted: u64,
    /// Reject outcomes only (breaching lines are counted in `by_reason`).
    pub rejected: u64,
    /// Accepted lines that collapsed onto an earlier identical event.
    pub retries: u64,
    /// Distinct keys among the accepted events: the rows a publish writes.
    pub keys: u64,
    /// Keys whose rank-1 and rank-2 events tie on instant and tiebreak (in merge mode,
    /// also winners that tie the published row).
    pub ties_by_arrival: u64,
    /// Merge mode: winners older than their key's published row, dropped (§10.3).
    pub stale: u64,
    /// Every rejected or breaching line by its reason code.
    pub by_reason: BTreeMap<LineReason, u64>,
    /// Lines that broke a value rule (§1.2), by rule (`field.one_of`, `field.range`); a
    /// line is counted under the first rule it breaks, the one its reason names.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_rule: BTreeMap<String, u64>,
}

/// The rule a finding broke, as [`Counts::by_rule`] names it, when it broke one.
pub fn rule_of(issue: &LineIssue) -> Option<String> {
    let rule = crate::contract::rules::Rule::of_reason(issue.reason)?;
    Some(crate::contract::rules::rule_name(
        issue.field.as_deref().unwrap_or_default(),
        rule,
    ))
}

impl Counts {
    /// Counts a rejected or breaching line by its reason and, for a broken value rule,
    /// by its rule.
    pub fn count_finding(&mut self, issue: &LineIssue) {
        count_finding(&mut self.by_reason, &mut self.by_rule, issue);
    }

    /// `code n · code n …` for every reason with lines, for reports.
    pub fn reasons_text(&self) -> String {
        let parts: Vec<String> = self
            .by_reason
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        parts.join(" · ")
    }

    /// `field.rule n · …` for every value rule broken, for reports.
    pub fn rules_text(&self) -> String {
        let parts: Vec<String> = self
            .by_rule
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        parts.join(" · ")
    }
}

/// [`Counts::count_finding`] into the two maps, for an engine that keeps them apart.
pub fn count_finding(
    by_reason: &mut BTreeMap<LineReason, u64>,
    by_rule: &mut BTreeMap<String, u64>,
    issue: &LineIssue,
) {
    *by_reason.entry(issue.reason).or_default() += 1;
    if let Some(rule) = rule_of(issue) {
        *by_rule.entry(rule).or_default() += 1;
    }
}

/// Findings an engine wrote out past the ones it holds ([`crate::store::findings`]), in
/// line order after them: the file, gone when the last holder drops it, their number,
/// and the earliest breach among them (which names a refusal when none is held).
#[derive(Clone, Debug)]
pub struct SpilledFindings {
    pub path: std::sync::Arc<tempfile::TempPath>,
    pub count: u64,
    pub first_breach: Option<LineFinding>,
}

impl PartialEq for SpilledFindings {
    fn eq(&self, other: &Self) -> bool {
        let (a, b): (&std::path::Path, &std::path::Path) = (&self.path, &other.path);
        a == b && self.count == other.count
    }
}

impl Eq for SpilledFindings {}

/// A rejected or breaching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFinding {
    pub line: u64,
    /// Whether it refuses the whole file.
    pub breach: bool,
    pub issue: LineIssue,
}
