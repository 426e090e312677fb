//! EFFECTS, reads only. The table features Wharf writes through (CONTRACT.md §12.8): one
//! list, [`FEATURES`], says for every reader and writer feature of the Delta protocol
//! whether Wharf honours it, honours it with care (a condition checked before anything is
//! written) or refuses it. A refusal is [`Error::TableFeature`] (exit 3, reason
//! `table_feature`), raised while the plan is made, so nothing is uploaded or committed.
//!
//! [`check`] reads the version's protocol and metadata; [`vectors`] refuses a version
//! whose files carry a deletion vector (Wharf reads, counts and re-adds whole files);
//! [`append_only`] refuses a plan that would remove files from an append-only table.

use delta_kernel::SnapshotRef;
use delta_kernel::table_features::{ColumnMappingMode, Operation, TableFeature};

use super::TableFile;
use crate::contract::Date;
use crate::error::{Error, Result};
use crate::plan::TableFeatureRefusal;

/// What Wharf does with a feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stance {
    /// Wharf's commits keep the feature's rules as they are.
    Honoured,
    /// Honoured while a condition holds, checked at plan time; refused otherwise.
    Care,
    /// Wharf cannot keep the feature's rules: any plan on the table is refused.
    Refused,
}

/// One feature: its protocol name, Wharf's stance, what Wharf does with it, and what an
/// operator can do when it is refused.
pub struct Rule {
    pub name: &'static str,
    pub stance: Stance,
    pub what: &'static str,
    pub fix: &'static str,
}

const fn rule(name: &'static str, stance: Stance, what: &'static str, fix: &'static str) -> Rule {
    Rule {
        name,
        stance,
        what,
        fix,
    }
}

use Stance::{Care, Honoured, Refused};

/// Another table: what an operator can do about most refused features.
const ANOTHER: &str = "publish to a table without it (a new publish_root path, where the \
                       first landing creates one)";
const SCHEMA: &str = "the schema check decides: a config declares no such column";

/// Every feature Wharf knows; a feature not here is refused.
pub const FEATURES: &[Rule] = &[
    rule(
        "appendOnly",
        Care,
        "new dates land; a landing or restore that would remove a published date's files is refused",
        "unset delta.appendOnly, or land only new dates, or publish restatements to another table",
    ),
    rule(
        "invariants",
        Care,
        "honoured while no column declares an invariant; one that does is refused (Wharf cannot evaluate it)",
        "drop the column's invariant, or publish to another table",
    ),
    rule(
        "checkConstraints",
        Refused,
        "refused: Wharf cannot evaluate a SQL CHECK constraint on the rows it writes, and the Delta kernel writes no table that lists the feature",
        "drop the constraints (ALTER TABLE … DROP CONSTRAINT) and the feature, or publish to another table",
    ),
    rule(
        "changeDataFeed",
        Honoured,
        "honoured: Wharf's commits add and remove whole files, from which a change-data reader derives every change",
        "",
    ),
    rule(
        "generatedColumns",
        Refused,
        "refused: Wharf cannot compute a generated column's values",
        ANOTHER,
    ),
    rule(
        "identityColumns",
        Refused,
        "refused: Wharf cannot assign identity values",
        ANOTHER,
    ),
    rule(
        "inCommitTimestamp",
        Honoured,
        "honoured: the kernel writes each commit's timestamp",
        "",
    ),
    rule(
        "rowTracking",
        Honoured,
        "honoured: the kernel assigns row ids to the files Wharf adds",
        "",
    ),
    rule(
        "domainMetadata",
        Honoured,
        "honoured: the kernel keeps other writers' domains",
        "",
    ),
    rule(
        "icebergCompatV1",
        Refused,
        "refused: Wharf does not write the Iceberg metadata it requires",
        ANOTHER,
    ),
    rule(
        "icebergCompatV2",
        Refused,
        "refused: Wharf does not write the Iceberg metadata it requires",
        ANOTHER,
    ),
    rule(
        "icebergCompatV3",
        Refused,
        "refused: Wharf does not write the Iceberg metadata it requires",
        ANOTHER,
    ),
    rule(
        "clustering",
        Refused,
        "refused: Wharf partitions by event_date, and a clustered table has no partitions",
        ANOTHER,
    ),
    rule(
        "materializePartitionColumns",
        Refused,
        "refused: Wharf's files do not carry event_date as a column",
        ANOTHER,
    ),
    rule(
        "allowColumnDefaults",
        Honoured,
        "honoured: Wharf writes every column (the schema check refuses a table with others)",
        "",
    ),
    rule(
        "catalogManaged",
        Refused,
        "refused: its commits go through a catalog, not the log",
        "publish to a path-based table",
    ),
    rule(
        "catalogOwned-preview",
        Refused,
        "refused: its commits go through a catalog, not the log",
        "publish to a path-based table",
    ),
    rule(
        "columnMapping",
        Care,
        "honoured with delta.columnMapping.mode = none; with name or id the files name columns otherwise than Wharf writes them, refused",
        "publish to a table without column mapping",
    ),
    rule(
        "deletionVectors",
        Care,
        "honoured while no file of the version carries a deletion vector; counts subtract each vector's rows (what readers see); a file that carries one refuses every plan, landing, diff and restore, so no deleted row is counted, merged or brought back",
        "purge the vectors first (Spark: REORG TABLE … APPLY (PURGE), which rewrites those files without the deleted rows), then land again",
    ),
    rule("timestampNtz", Honoured, SCHEMA, ""),
    rule(
        "typeWidening",
        Refused,
        "refused: older files may hold narrower types than the schema, and Wharf reads files as the schema's types",
        ANOTHER,
    ),
    rule(
        "typeWidening-preview",
        Refused,
        "refused: older files may hold narrower types than the schema, and Wharf reads files as the schema's types",
        ANOTHER,
    ),
    rule(
        "v2Checkpoint",
        Honoured,
        "honoured: the kernel reads and writes V2 checkpoints",
        "",
    ),
    rule(
        "vacuumProtocolCheck",
        Honoured,
        "honoured: Wharf deletes only its own trash's files, which no kept version references",
        "",
    ),
    rule("variantType", Honoured, SCHEMA, ""),
    rule("variantType-preview", Honoured, SCHEMA, ""),
    rule("variantShredding", Honoured, SCHEMA, ""),
    rule("variantShredding-preview", Honoured, SCHEMA, ""),
    rule("geospatial", Honoured, SCHEMA, ""),
];

/// The rule of the feature named `name`, if Wharf knows it.
pub fn rule_of(name: &str) -> Option<&'static Rule> {
    FEATURES.iter().find(|r| r.name == name)
}

/// Refuses `snapshot`'s table when its protocol or metadata uses a feature Wharf cannot
/// keep: each feature the protocol lists, by [`FEATURES`], then the kernel's own check
/// that it can read and write this protocol.
pub fn check(url: &str, snapshot: &SnapshotRef) -> Result<()> {
    let refuse = |feature: &str, detail: String, fix: &str| Error::TableFeature {
        url: url.to_owned(),
        refusal: TableFeatureRefusal {
            feature: feature.to_owned(),
            detail: crate::store::objects::scrub(&detail),
            fix: fix.to_owned(),
        },
    };
    let config = snapshot.table_configuration();
    let protocol = config.protocol();
    for feature in listed(snapshot) {
        let name = feature.to_string();
        let Some(rule) = rule_of(&name) else {
            return Err(refuse(
                &name,
                "a feature Wharf does not know".into(),
                ANOTHER,
            ));
        };
        let used = match rule.stance {
            Honoured => None,
            Refused => Some(refused_detail(snapshot, &feature)),
            Care => in_use(snapshot, &feature),
        };
        if let Some(detail) = used {
            return Err(refuse(&name, detail, rule.fix));
        }
    }
    for operation in [Operation::Scan, Operation::Write] {
        if let Err(e) = config.ensure_operation_supported(operation) {
            return Err(refuse(
                "protocol",
                format!(
                    "readers {}, writers {}: {e}",
                    protocol.min_reader_version(),
                    protocol.min_writer_version()
                ),
                "the Delta kernel Wharf commits with cannot write this protocol; publish to \
                 another table",
            ));
        }
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

/// What a refusal of `feature` says of the table: its CHECK constraints by name and SQL,
/// or how the protocol lists the feature (by name, or implied by a legacy writer version).
fn refused_detail(snapshot: &SnapshotRef, feature: &TableFeature) -> String {
    let config = snapshot.table_configuration();
    let constraints: Vec<String> = config
        .table_properties()
        .check_constraints
        .iter()
        .map(|c| format!("CHECK {} ({})", c.name(), c.raw_sql()))
        .collect();
    if *feature == TableFeature::CheckConstraints && !constraints.is_empty() {
        return constraints.join(", ");
    }
    match config.protocol().min_writer_version() {
        v if v < 7 => format!("implied by the protocol's writer version {v}"),
        _ => "listed in the table's protocol".to_owned(),
    }
}

/// What of a [`Stance::Care`] feature the version uses that Wharf cannot keep, if any.
fn in_use(snapshot: &SnapshotRef, feature: &TableFeature) -> Option<String> {
    let config = snapshot.table_configuration();
    match feature {
        TableFeature::ColumnMapping => match config.column_mapping_mode() {
            ColumnMappingMode::None => None,
            mode => Some(format!(
                "delta.columnMapping.mode = {}",
                format!("{mode:?}").to_lowercase()
            )),
        },
        TableFeature::Invariants => snapshot
            .schema()
            .fields()
            .find(|f| f.metadata().contains_key("delta.invariants"))
            .map(|f| format!("column `{}` declares an invariant", f.name())),
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

/// A kernel error met reading or committing: a protocol or feature refusal the kernel
/// raised is [`Error::TableFeature`], never a store error with advice about endpoints and
/// credentials; any other is `otherwise`'s.
pub fn kernel_error(
    url: &str,
    e: delta_kernel::KernelError,
    otherwise: impl FnOnce(delta_kernel::KernelError) -> Error,
) -> Error {
    if !is_protocol(&e) {
        return otherwise(e);
    }
    Error::TableFeature {
        url: url.to_owned(),
        refusal: TableFeatureRefusal {
            feature: "protocol".into(),
            detail: crate::store::objects::scrub(&e.to_string()),
            fix: "the Delta kernel Wharf commits with refused the table's protocol; publish \
                  to another table"
                .into(),
        },
    }
}

/// Whether the kernel refused the table's protocol or features (not its storage).
fn is_protocol(e: &delta_kernel::KernelError) -> bool {
    use delta_kernel::KernelError as K;
    match e {
        K::Unsupported(_) | K::InvalidProtocol(_) | K::InvalidColumnMappingMode(_) => true,
        K::InvalidTransactionState(m) => m.starts_with("Append-only"),
        K::Backtraced { source, .. } => is_protocol(source),
        _ => false,
    }
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
