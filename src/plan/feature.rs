//! PURE. A table feature Wharf refuses (CONTRACT.md §12.8): what it is, why Wharf cannot
//! keep its rules, and what the operator can do. The same sentence is the plan's refusal
//! (`table_feature`), the console's and a restore's error.

use super::{Action, Owner, Plan, Refusal};

/// One refused feature of a Delta table's protocol or metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFeatureRefusal {
    /// The feature as the protocol names it (`columnMapping`, `deletionVectors`, …), or
    /// `readerVersion` / `writerVersion` for a version Wharf's kernel does not support.
    pub feature: String,
    /// What of it the table uses: a constraint's name, a file with a deletion vector.
    pub detail: String,
    /// What the operator can do.
    pub fix: String,
}

impl std::fmt::Display for TableFeatureRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the table's Delta protocol has `{}` ({}), which Wharf refuses; nothing was \
             written. To land here: {}",
            self.feature, self.detail, self.fix
        )
    }
}

/// The plan of an input refused for its table's features before any row work: its
/// identity, no counts, no dates (§12.8).
pub fn refuse_for_table(product: &str, owner: Owner, refusal: TableFeatureRefusal) -> Plan {
    Plan {
        refusal: Some(Refusal::TableFeature(refusal)),
        ..Plan::without_rows(product, owner, Action::Refuse)
    }
}

/// `plan` refused for its table's features after the decision (a guard that depends on
/// the dates it writes, as append-only's): its counts and dates stay as decided.
pub fn refuse_decided(plan: &mut Plan, refusal: TableFeatureRefusal) {
    plan.action = Action::Refuse;
    plan.refusal = Some(Refusal::TableFeature(refusal));
    plan.allowed_shrink.clear();
    plan.allowed_growth.clear();
}
