//! EFFECTS, reads only. The table features Wharf writes through (CONTRACT.md §12.8): one
//! list, [`FEATURES`](super::features::FEATURES), says for every reader and writer feature of the Delta protocol
//! whether Wharf honours it, honours it with care (a condition checked before anything is
//! written) or refuses it. A refusal is [`Error::TableFeature`] (exit 3, reason
//! `table_feature`), raised while the plan is made, so nothing is uploaded or committed.
//!
//! The list is [`super::features`]. [`check`] reads the version's protocol and metadata; [`vectors`] refuses a version
//! whose files carry a deletion vector (Wharf reads, counts and re-adds whole files);
//! [`append_only`] refuses a plan that would remove files from an append-only table. What
//! the kernel itself refuses is said in Wharf's words by [`super::kernel_refusal`].

use delta_kernel::SnapshotRef;
use delta_kernel::table_features::{ColumnMappingMode, Operation, TableFeature};

use super::kernel_refusal::{in_wharfs_words, unknown};
use super::{TableFile, legacy};
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::plan::TableFeatureRefusal;
use crate::store::objects::scrub;

use super::features::{FEATURES, Stance, rule_of};
use Stance::{Care, Honoured, Refused};

/// Refuses `snapshot`'s table when its protocol or metadata uses a feature Wharf cannot
/// keep: each feature the protocol lists or implies, by [`FEATURES`], then the kernel's
/// own check that it can read and write this protocol (a legacy one as
/// [`legacy::writable`] states it).
pub fn check(url: &str, snapshot: &SnapshotRef) -> Result<()> {
    let refuse = |refusal: TableFeatureRefusal| Error::TableFeature {
        url: url.to_owned(),
        refusal,
    };
    for feature in listed(snapshot) {
        let name = feature.to_string();
        let Some(rule) = rule_of(&name) else {
            return Err(refuse(unknown(&name)));
        };
        let used = match rule.stance {
            Honoured => None,
            Refused => Some("listed in the table's protocol".to_owned()),
            Care => in_use(snapshot, &feature),
        };
        if let Some(detail) = used {
            return Err(refuse(TableFeatureRefusal {
                feature: name,
                detail: scrub(&detail),
                fix: rule.fix.to_owned(),
            }));
        }
    }
    let writable = legacy::writable(snapshot).map_err(|e| refuse(in_wharfs_words(&e)))?;
    for operation in [Operation::Scan, Operation::Write] {
        let supported = writable
            .table_configuration()
            .ensure_operation_supported(operation);
        supported.map_err(|e| refuse(in_wharfs_words(&e)))?;
    }
    Ok(())
}

/// The features `snapshot`'s protocol lists or, for a legacy protocol, implies.
fn listed(snapshot: &SnapshotRef) -> Vec<TableFeature> {
    let config = snapshot.table_configuration();
    let protocol = config.protocol();
    let mut features: Vec<TableFeature> = FEATURES
        .iter()
        .filter_map(|rule| rule.name.parse::<TableFeature>().ok())
        .filter(|f| config.is_feature_supported(f))
        .collect();
    let explicit = protocol.reader_features().into_iter().flatten();
    for feature in explicit.chain(protocol.writer_features().into_iter().flatten()) {
        if !features.contains(feature) {
            features.push(feature.clone());
        }
    }
    features
}

/// How the protocol has a feature it lists by name (writer version 7); `None` when a
/// legacy writer version implies it.
fn listed_by_name(snapshot: &SnapshotRef) -> Option<String> {
    let protocol = snapshot.table_configuration().protocol();
    (protocol.min_writer_version() >= 7).then(|| {
        "listed in the table's protocol by name, and the Delta kernel Wharf commits with \
         writes no table that lists it"
            .to_owned()
    })
}

/// What of a [`Stance::Care`] feature the version uses that Wharf cannot keep, if any. A
/// feature a legacy writer version implies counts only where the table uses it.
fn in_use(snapshot: &SnapshotRef, feature: &TableFeature) -> Option<String> {
    let config = snapshot.table_configuration();
    let column = |key: &dyn Fn(&str) -> bool| {
        snapshot
            .schema()
            .fields()
            .find(|f| f.metadata().keys().any(|k| key(k)))
            .map(|f| f.name().to_owned())
    };
    match feature {
        TableFeature::ColumnMapping => match config.column_mapping_mode() {
            ColumnMappingMode::None => None,
            mode => Some(format!(
                "column mapping by {0}: delta.columnMapping.mode = {0}",
                format!("{mode:?}").to_lowercase()
            )),
        },
        TableFeature::Invariants => column(&|k| k == "delta.invariants")
            .map(|name| format!("column `{name}` declares an invariant")),
        TableFeature::CheckConstraints => {
            let constraints: Vec<String> = config
                .table_properties()
                .check_constraints
                .iter()
                .map(|c| format!("CHECK {} ({})", c.name(), c.raw_sql()))
                .collect();
            match constraints.is_empty() {
                false => Some(format!("the table declares {}", constraints.join(", "))),
                true => listed_by_name(snapshot),
            }
        }
        TableFeature::ChangeDataFeed => config
            .table_properties()
            .enable_change_data_feed
            .filter(|on| *on)
            .map(|_| {
                "the change data feed is on (delta.enableChangeDataFeed = true): Wharf \
                 writes no change data files, and a landing that removes files would leave \
                 the feed without its deletes"
                    .to_owned()
            }),
        TableFeature::GeneratedColumns => column(&|k| k == "delta.generationExpression")
            .map(|name| format!("column `{name}` is generated"))
            .or_else(|| listed_by_name(snapshot)),
        TableFeature::IdentityColumns => column(&|k| k.starts_with("delta.identity."))
            .map(|name| format!("column `{name}` is an identity column"))
            .or_else(|| listed_by_name(snapshot)),
        // Plan-dependent ([`append_only`]) or file-dependent ([`vectors`]).
        _ => None,
    }
}

/// Refuses a version one of whose files carries a deletion vector: its rows are counted,
/// read and restored by whole files, and a deleted row must never come back (§12.8).
pub fn vectors(url: &str, files: &[TableFile]) -> Result<()> {
    let carrying: Vec<&TableFile> = files.iter().filter(|f| f.deleted.is_some()).collect();
    let Some(first) = carrying.first() else {
        return Ok(());
    };
    let deleted: u64 = carrying.iter().filter_map(|f| f.deleted).sum();
    Err(Error::TableFeature {
        url: url.to_owned(),
        refusal: TableFeatureRefusal {
            feature: "deletionVectors".into(),
            detail: format!(
                "{} file(s) carry deletion vectors removing {deleted} row(s), the first {} of {}",
                carrying.len(),
                first.path,
                first.date
            ),
            fix: rule_of("deletionVectors").map_or("", |r| r.fix).to_owned(),
        },
    })
}

/// Whether `snapshot`'s table is append-only (`delta.appendOnly = true`).
pub fn is_append_only(snapshot: &SnapshotRef) -> bool {
    snapshot
        .table_configuration()
        .is_feature_enabled(&TableFeature::AppendOnly)
}

/// On an append-only table, the refusal of a commit that would remove the files of
/// `dates` (those of them the version holds).
pub fn append_only(
    snapshot: &SnapshotRef,
    files: &[TableFile],
    dates: impl IntoIterator<Item = Date>,
) -> Option<TableFeatureRefusal> {
    if !is_append_only(snapshot) {
        return None;
    }
    let held: Vec<Date> = dates
        .into_iter()
        .filter(|d| files.iter().any(|f| f.date == *d))
        .collect();
    let first = held.first()?;
    Some(TableFeatureRefusal {
        feature: "appendOnly".into(),
        detail: format!(
            "delta.appendOnly = true, and {} published date(s) would lose their files, the \
             first {first}",
            held.len()
        ),
        fix: rule_of("appendOnly").map_or("", |r| r.fix).to_owned(),
    })
}

impl crate::land::root::PublishRoot {
    /// §12.8 before the row work: the refusal of a table one of whose files carries a
    /// deletion vector; `None` for hive folders and a table Wharf can write.
    pub fn feature_refusal(&self) -> Option<TableFeatureRefusal> {
        let found = self.found()?;
        match vectors(found.table.url(), &found.files) {
            Err(Error::TableFeature { refusal, .. }) => Some(refusal),
            _ => None,
        }
    }

    /// §12.8 after the decision: the refusal of a plan that would remove files from an
    /// append-only table.
    pub fn plan_refusal(&self, plan: &crate::plan::Plan) -> Option<TableFeatureRefusal> {
        let found = self.found()?;
        let snapshot = found.snapshot.as_ref()?;
        append_only(
            snapshot,
            &found.files,
            plan.dates.iter().map(|d| d.event_date),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_feature_is_the_kernels_by_its_protocol_name() {
        for rule in FEATURES {
            let feature: TableFeature = rule.name.parse().unwrap();
            assert!(
                !matches!(feature, TableFeature::Unknown(_)),
                "{}",
                rule.name
            );
            assert_eq!(feature.to_string(), rule.name);
            assert_eq!(
                rule.fix.is_empty(),
                rule.stance == Honoured,
                "{}",
                rule.name
            );
        }
    }

    #[test]
    fn docs_delta_md_lists_every_feature_with_its_stance() {
        let docs = include_str!("../../../docs/delta.md");
        for rule in FEATURES {
            let stance = match rule.stance {
                Honoured => "honoured",
                Care => "with care",
                Refused => "refused",
            };
            let row = format!("| `{}` | {stance} |", rule.name);
            assert!(docs.contains(&row), "docs/delta.md lacks {row}");
        }
    }

    #[test]
    fn a_file_with_a_deletion_vector_refuses_the_version() {
        let file = |deleted| TableFile {
            path: "event_date=2024-03-01/a.parquet".into(),
            date: Date::parse("2024-03-01").unwrap(),
            rows: 10,
            size: 1,
            deleted,
        };
        assert!(vectors("file:///t/", &[file(None)]).is_ok());
        let Err(Error::TableFeature { refusal, .. }) = vectors("file:///t/", &[file(Some(3))])
        else {
            panic!("not refused")
        };
        assert_eq!(refusal.feature, "deletionVectors");
        assert!(
            refusal.detail.contains("removing 3 row(s)"),
            "{}",
            refusal.detail
        );
        assert_eq!(file(Some(3)).visible_rows(), 7);
    }
}
