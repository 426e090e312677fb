//! PURE over a loaded version. A legacy writer version (3 to 6) implies every feature of
//! the versions below it, whether or not the table uses them (CONTRACT.md §12.8): version
//! 3 implies `checkConstraints`, 4 `changeDataFeed` and `generatedColumns`, 5
//! `columnMapping`, 6 `identityColumns`. The Delta kernel writes no table that supports
//! `checkConstraints`, `generatedColumns` or `identityColumns`, used or not, so it refuses
//! every legacy table from writer version 3 up.
//!
//! [`super::protocol::check`] refuses such a table when it uses any of them (a declared
//! constraint, a generated or identity column). When it uses none, [`writable`] is the
//! version as the kernel is to write it: the same log, metadata and reader protocol, its
//! writer protocol stated as the features the kernel keeps (`appendOnly`, `invariants`,
//! `changeDataFeed`, `columnMapping`, each checked by the kernel and by Wharf as for a
//! table that lists them). That protocol is never written: a commit writes a protocol
//! only when it changes one, and no checkpoint is written of such a view
//! ([`is_legacy_writer`]).

use std::sync::Arc;

use delta_kernel::actions::Protocol;
use delta_kernel::table_configuration::TableConfiguration;
use delta_kernel::table_features::TableFeature;
use delta_kernel::{KernelResult, Snapshot, SnapshotRef};

/// The implied features the kernel writes, each by its own rule.
const KEPT: [TableFeature; 4] = [
    TableFeature::AppendOnly,
    TableFeature::Invariants,
    TableFeature::ChangeDataFeed,
    TableFeature::ColumnMapping,
];

/// Whether `snapshot`'s protocol is a legacy writer version the kernel refuses as it is
/// (3 to 6), so that Wharf commits through [`writable`].
pub fn is_legacy_writer(snapshot: &SnapshotRef) -> bool {
    let version = snapshot
        .table_configuration()
        .protocol()
        .min_writer_version();
    (3..=6).contains(&version)
}

/// `snapshot` as the kernel is to write it: itself, or for a legacy writer version 3 to
/// 6 (which [`super::protocol::check`] has found uses no feature the kernel cannot keep)
/// the same version with its implied features stated as [`KEPT`] lists them.
pub fn writable(snapshot: &SnapshotRef) -> KernelResult<SnapshotRef> {
    if !is_legacy_writer(snapshot) {
        return Ok(snapshot.clone());
    }
    let config = snapshot.table_configuration();
    let protocol = config.protocol();
    let kept: Vec<TableFeature> = KEPT
        .into_iter()
        .filter(|f| config.is_feature_supported(f))
        .collect();
    let stated = Protocol::try_new(
        protocol.min_reader_version(),
        7,
        protocol.reader_features().map(<[TableFeature]>::to_vec),
        Some(kept),
    )?;
    let view = TableConfiguration::try_new(
        config.metadata().clone(),
        stated,
        config.table_root().clone(),
        config.version(),
    )?;
    Ok(Arc::new(Snapshot::new(
        snapshot.log_segment().clone(),
        view,
    )?))
}
