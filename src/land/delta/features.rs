//! The one list of Delta table features (CONTRACT.md §12.8): for each, whether Wharf
//! honours it, honours it with care (a condition [`super::protocol`] checks at plan time)
//! or refuses it, what that means and what an operator can do. docs/delta.md's table
//! "What Wharf does with each table feature" is this list (a unit test keeps them equal).

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
pub const ANOTHER: &str = "publish to a table without it (a new publish_root path, where the \
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
        Care,
        "honoured while the table declares no constraint (delta.constraints.*) and the feature is implied by a legacy writer version, not listed; a declared constraint is refused (Wharf cannot evaluate SQL), and so is the feature listed by name (the Delta kernel writes no such table)",
        "drop the constraints (ALTER TABLE … DROP CONSTRAINT) and the feature, or publish to another table",
    ),
    rule(
        "changeDataFeed",
        Care,
        "honoured while delta.enableChangeDataFeed is not true; with the feed on it is refused: Wharf writes no change data files, so a landing that removes files would leave the feed without its deletes",
        "turn the feed off (delta.enableChangeDataFeed = false) if no reader needs it, or publish to a table without the feed",
    ),
    rule(
        "generatedColumns",
        Care,
        "honoured while no column is generated (delta.generationExpression) and the feature is implied by a legacy writer version, not listed; a generated column is refused (Wharf cannot compute its values), and so is the feature listed by name",
        ANOTHER,
    ),
    rule(
        "identityColumns",
        Care,
        "honoured while no column is an identity column (delta.identity.*) and the feature is implied by a legacy writer version, not listed; an identity column is refused (Wharf cannot assign its values), and so is the feature listed by name",
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
        "honoured with delta.columnMapping.mode unset or none; column mapping by name or id is refused: the files name columns by physical names, which Wharf does not write",
        "publish to a table without column mapping (a new publish_root path, where the first landing creates one)",
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
