//! Crashes on a Delta table (CONTRACT.md §12.4), each on a local table and on S3: a crash
//! between the upload and the commit leaves the version and its rows as they were; after
//! a crash anywhere, the next landing leaves no object that neither the log's current
//! version nor the kept trash names ([`assert_no_orphans`], also the SIGKILL loop's
//! last check), and deletes none that they do.

use std::collections::BTreeSet;

use super::{Root, Table, adds_and_removes, kit, two_dates};
use kit::product::Product;

both!(
    a_crash_after_the_upload_leaves_only_files_the_rerun_deletes,
    a_crash_after_the_commit_then_a_restore_loses_no_kept_file,
    a_crash_in_the_vacuum_leaves_files_the_next_landing_deletes,
);

/// The data files the state root's Delta trash keeps for restore.
fn kept_in_trash(product: &Product) -> BTreeSet<String> {
    let Some(trash) = kit::read_json(&product.state.join("delta-trash.json")) else {
        return BTreeSet::new();
    };
    trash["dates"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|generations| generations.as_array().unwrap())
        .flat_map(|generation| generation["files"].as_array().unwrap())
        .map(|file| file["path"].as_str().unwrap().to_owned())
        .collect()
}

/// §12.4 after a landing: every data object under the table is one a commit added and
/// that the current version or a kept trash generation holds; every file those hold is
/// stored; nothing is left in `_wharf-staging/`; the state root holds no pending record
/// and no local staging.
pub(crate) fn assert_no_orphans(product: &Product, root: &Root) {
    let objects = root.objects();
    let data: BTreeSet<String> = objects
        .iter()
        .filter(|p| !p.starts_with("_delta_log/"))
        .cloned()
        .collect();
    for path in &data {
        let name = path.split('/').next_back().unwrap();
        assert!(
            path.starts_with("event_date=") && name.starts_with("part-"),
            "{path}: not a data file of the table"
        );
    }
    let ever_added: BTreeSet<String> = root
        .commits()
        .iter()
        .flat_map(|c| adds_and_removes(c).0)
        .collect();
    let kept: BTreeSet<String> = root
        .live_files()
        .into_iter()
        .chain(kept_in_trash(product))
        .collect();
    let unreferenced: Vec<&String> = data.difference(&kept).collect();
    assert!(
        unreferenced.is_empty(),
        "unreferenced objects: {unreferenced:?}"
    );
    let never: Vec<&String> = data.difference(&ever_added).collect();
    assert!(never.is_empty(), "objects no commit added: {never:?}");
    let missing: Vec<&String> = kept.difference(&data).collect();
    assert!(missing.is_empty(), "kept files not stored: {missing:?}");
    assert!(
        !objects.iter().any(|p| p.starts_with("_wharf-staging/")),
        "{objects:?}"
    );
    assert!(!product.state.join(".delta-staging").exists());
    assert!(!product.state.join("delta-pending.json").exists());
}

/// A crash after the data files are uploaded and before the commit (the failpoint
/// `after_upload`): the version and what readers see are as before, the uploads are
/// unreferenced; the rerun lands and deletes them. With `keep_generations = 1`, the
/// vacuum's deletions are checked by the same rule.
fn a_crash_after_the_upload_leaves_only_files_the_rerun_deletes(s3: bool) {
    let table = Table::new(s3, "crash", "keep_generations = 1");
    table.land("01-a.jsonl", &two_dates(4, "A"));
    table.land("02-b.jsonl", &two_dates(4, "B"));
    let rows = table.root.rows();
    let live = table.root.live_files();
    let input = table.input("03-c.jsonl", &two_dates(4, "C"));
    table.crash_at(&input, "after_upload");
    assert_eq!(table.root.commits().len(), 2, "no commit");
    assert_eq!(table.root.live_files(), live);
    assert_eq!(table.root.rows(), rows, "readers see the old data");
    assert!(table.product.checkpoint("03-c.jsonl").is_none());
    let data: BTreeSet<String> = table
        .root
        .objects()
        .into_iter()
        .filter(|p| p.starts_with("event_date="))
        .collect();
    let orphans: BTreeSet<String> = data
        .difference(&live)
        .filter(|p| !kept_in_trash(&table.product).contains(*p))
        .cloned()
        .collect();
    assert_eq!(
        orphans.len(),
        2,
        "one upload per date, unreferenced: {data:?}"
    );

    let rerun = table.run_with(&input, &[], &[]);
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    assert_eq!(rerun.json()["action"], "published");
    assert_eq!(table.root.commits().len(), 3);
    assert!(
        table.root.objects().is_disjoint(&orphans),
        "the crash's uploads deleted"
    );
    assert_no_orphans(&table.product, &table.root);
    // The first landing's generation is beyond keep_generations = 1: deleted; the second
    // is kept, and restorable.
    let restored = crate::wharf(&table.product, &["restore", "2024-03-01", "--yes"], s3);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    assert_eq!(table.root.rows()["2024-03-01"], rows["2024-03-01"]);
    assert_no_orphans(&table.product, &table.root);
}

/// A crash after the commit, before the pending record is cleared (`after_commit`), then
/// a restore moving that landing's files to the trash: the next landing must not delete
/// them as a crash's leftovers. Its version still reads whole, and its files are the
/// trash's to delete (when `keep_generations` lets them go).
fn a_crash_after_the_commit_then_a_restore_loses_no_kept_file(s3: bool) {
    let table = Table::new(s3, "committed", "");
    table.land("01-a.jsonl", &two_dates(3, "A"));
    let input = table.input("02-b.jsonl", &two_dates(3, "B"));
    table.crash_at(&input, "after_commit");
    assert_eq!(table.root.commits().len(), 2, "the commit stands");
    let rows_b = table.root.rows();
    let restored = crate::wharf(&table.product, &["restore", "2024-03-01", "--yes"], s3);
    assert_eq!(restored.code, 0, "{}", restored.stderr);
    let b_files = adds_and_removes(&table.root.commits()[1]).0;
    assert!(
        kept_in_trash(&table.product).is_superset(
            &b_files
                .iter()
                .filter(|p| p.starts_with("event_date=2024-03-01/"))
                .cloned()
                .collect()
        )
    );
    table.land("03-c.jsonl", &two_dates(3, "C"));
    assert_no_orphans(&table.product, &table.root);
    assert_eq!(table.root.rows_at(1), rows_b, "B's version reads whole");
}

/// A crash in the vacuum (`before_vacuum`: the trash record pruned, the pruned files not
/// yet deleted) leaves files nothing names but the pending record: the next landing
/// deletes them.
fn a_crash_in_the_vacuum_leaves_files_the_next_landing_deletes(s3: bool) {
    let table = Table::new(s3, "vacuum", "keep_generations = 1");
    table.land("01-a.jsonl", &two_dates(3, "A"));
    let first = table.root.live_files();
    table.land("02-b.jsonl", &two_dates(3, "B"));
    let input = table.input("03-c.jsonl", &two_dates(3, "C"));
    table.crash_at(&input, "before_vacuum");
    assert_eq!(table.root.commits().len(), 3, "the commit stands");
    let stored = table.root.objects();
    assert!(stored.is_superset(&first), "A's files not yet deleted");
    assert!(
        kept_in_trash(&table.product).is_disjoint(&first),
        "and out of the trash"
    );
    table.land("04-d.jsonl", &two_dates(3, "D"));
    assert!(
        table.root.objects().is_disjoint(&first),
        "A's files deleted"
    );
    assert_no_orphans(&table.product, &table.root);
}
