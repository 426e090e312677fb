//! Deterministic crash stops: the process aborts at every step boundary of a publish
//! (`WHARF_FAILPOINT`), over a published version of the same two dates. After each stop
//! the published dataset is the old one, the new one, or old/new per date; state parses;
//! a rerun converges to exactly (rows and Parquet bytes) an uninterrupted run.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

use crate::common::{self, Dataset, Product};

/// Every failpoint of a two-date publish, with what each date holds after the stop:
/// `[date 1 is new, date 2 is new]`, and whether the manifest already names the new
/// input, and whether its checkpoint exists.
const STOPS: &[(&str, [bool; 2], bool, bool)] = &[
    ("after_lock", [false, false], false, false),
    ("after_quarantine", [false, false], false, false),
    ("after_stage", [false, false], false, false),
    ("after_swap_1", [true, false], false, false),
    ("after_swap_2", [true, true], false, false),
    ("after_swaps", [true, true], false, false),
    ("after_manifest", [true, true], true, false),
    ("after_checkpoint", [true, true], true, true),
];

struct Inputs {
    _dir: tempfile::TempDir,
    old: PathBuf,
    new: PathBuf,
}

fn inputs() -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.jsonl");
    let new = dir.path().join("new.jsonl");
    common::generate(&old, 3000, 2, 11);
    common::generate(&new, 3000, 2, 12);
    Inputs {
        _dir: dir,
        old,
        new,
    }
}

#[test]
fn every_failpoint_leaves_a_state_a_rerun_converges_from() {
    let inputs = inputs();
    let reference = Product::new();
    reference.land(&inputs.old);
    let old: Dataset = reference.snapshot();
    reference.land(&inputs.new);
    let new: Dataset = reference.snapshot();
    assert_eq!(old.rows.len(), 2, "the old version covers two dates");
    assert_eq!(
        new.rows.keys().collect::<Vec<_>>(),
        old.rows.keys().collect::<Vec<_>>()
    );
    for date in old.rows.keys() {
        assert_ne!(old.rows[date], new.rows[date], "{date}: inputs must differ");
    }

    for (name, expect_new, manifest_new, checkpoint) in STOPS {
        let product = Product::new();
        product.land(&inputs.old);
        let out = product
            .cmd(&["run"])
            .arg(&inputs.new)
            .env("WHARF_FAILPOINT", name)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(6),
            "{name}: the process must abort (SIGABRT): {}",
            common::text(&out)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains(name));

        let state = common::check_invariants(&product, &old, &new);
        assert_eq!(&state, expect_new, "{name}: which dates hold the new rows");
        let owners = product.owners();
        let want = if *manifest_new {
            "new.jsonl"
        } else {
            "old.jsonl"
        };
        assert!(
            owners.values().all(|o| o == want),
            "{name}: owners {owners:?}"
        );
        assert_eq!(
            product.checkpoint("new.jsonl").is_some(),
            *checkpoint,
            "{name}"
        );
        assert!(product.checkpoint("old.jsonl").is_some(), "{name}");

        let rerun = product.land(&inputs.new);
        let stdout = String::from_utf8_lossy(&rerun.stdout);
        let verb = if *checkpoint { "skipped" } else { "published" };
        assert!(
            stdout.contains(verb),
            "{name}: rerun should be {verb}: {stdout}"
        );
        common::assert_converged(&product, &new, "new.jsonl");
    }
}

#[test]
fn restore_after_a_crash_and_rerun_brings_back_the_old_rows() {
    // The crash swapped date 1 in (its old generation went to the trash) but not the
    // manifest; the rerun must not trash a copy of the new rows as the old owner's
    // generation, or `restore` brings back the new rows under the old name.
    let inputs = inputs();
    for stop in ["after_swap_1", "after_swaps"] {
        let product = Product::new();
        product.land(&inputs.old);
        let old = product.snapshot();
        let out = product
            .cmd(&["run"])
            .arg(&inputs.new)
            .env("WHARF_FAILPOINT", stop)
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(6), "{}", common::text(&out));
        product.land(&inputs.new);
        for date in old.rows.keys() {
            let out = product.cmd(&["restore", date, "--yes"]).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
        }
        let restored = product.snapshot();
        assert_eq!(
            restored.rows, old.rows,
            "{stop}: restore brought back other rows"
        );
        assert!(restored.files == old.files, "{stop}: restored bytes differ");
        assert!(
            product.owners().values().all(|o| o == "old.jsonl"),
            "{stop}"
        );
    }
}
