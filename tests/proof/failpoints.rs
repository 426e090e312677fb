//! Deterministic crash stops: the process aborts at every step boundary of a publish
//! (`WHARF_FAILPOINT`), over a published version of the same two dates. After each stop
//! the published dataset is the old one, the new one, or old/new per date; state parses;
//! a rerun converges to exactly (rows and Parquet bytes) an uninterrupted run. Each runs
//! on both swap paths ([`BOTH`]); on the two-rename one, a stop between its renames too.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;

use crate::common::{self, Dataset, Product};
use crate::swap_path::{self, BOTH, SwapPath, TwoRenames};

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
    for path in BOTH {
        every_failpoint_on(path);
    }
}

fn every_failpoint_on(path: SwapPath) {
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
        path.land(&product, &inputs.old);
        let out = path
            .cmd(&product, &["run"])
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

        let rerun = path.land(&product, &inputs.new);
        let stdout = String::from_utf8_lossy(&rerun.stdout);
        let verb = if *checkpoint { "skipped" } else { "published" };
        assert!(
            stdout.contains(verb),
            "{name}: rerun should be {verb}: {stdout}"
        );
        if !*checkpoint {
            let old_dates = expect_new.iter().filter(|new| !**new).count();
            path.assert_taken(&product, old_dates);
        }
        common::assert_converged(&product, &new, "new.jsonl");
    }
}

#[test]
fn restore_after_a_crash_and_rerun_brings_back_the_old_rows() {
    // The crash swapped date 1 in (its old generation went to the trash) but not the
    // manifest; the rerun must not trash a copy of the new rows as the old owner's
    // generation, or `restore` brings back the new rows under the old name.
    let inputs = inputs();
    for (path, stop) in BOTH
        .into_iter()
        .flat_map(|path| ["after_swap_1", "after_swaps"].map(|stop| (path, stop)))
    {
        let product = Product::new();
        path.land(&product, &inputs.old);
        let old = product.snapshot();
        let out = path
            .cmd(&product, &["run"])
            .arg(&inputs.new)
            .env("WHARF_FAILPOINT", stop)
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(6), "{}", common::text(&out));
        path.land(&product, &inputs.new);
        for date in old.rows.keys() {
            path.restore(&product, date);
        }
        let restored = product.snapshot();
        assert_eq!(
            restored.rows, old.rows,
            "{path:?} {stop}: restore brought back other rows"
        );
        assert!(
            restored.files == old.files,
            "{path:?} {stop}: restored bytes differ"
        );
        assert!(
            product.owners().values().all(|o| o == "old.jsonl"),
            "{path:?} {stop}"
        );
    }
}

#[test]
fn a_crash_between_the_two_renames_leaves_the_old_generation_in_the_trash() {
    // The fallback takes the old folder out, then puts the new one in: a crash between
    // the two leaves the date absent (the contract's one-rename gap, held open by the
    // crash). The old generation is already whole in the trash; the rerun puts the new
    // one in, and `restore` brings back the old bytes.
    let inputs = inputs();
    let product = Product::new();
    TwoRenames.land(&product, &inputs.old);
    let old = product.snapshot();
    let out = TwoRenames
        .cmd(&product, &["run"])
        .arg(&inputs.new)
        .env("WHARF_FAILPOINT", "between_renames")
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), Some(6), "{}", common::text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("between_renames"));

    let first = old.rows.keys().next().unwrap().clone();
    let now = product.snapshot();
    assert!(!now.rows.contains_key(&first), "{first} should be absent");
    assert!(
        now == swap_path::without(&old, &first),
        "the other date must be untouched"
    );
    assert!(
        swap_path::newest_in_trash(&product, &first) == swap_path::files_of(&old.files, &first),
        "the trash must hold {first}'s old generation, whole"
    );
    assert!(
        product.owners().values().all(|o| o == "old.jsonl"),
        "the manifest is written only after every swap"
    );

    TwoRenames.land(&product, &inputs.new);
    TwoRenames.assert_taken(&product, 1);
    let reference = Product::new();
    reference.land(&inputs.old);
    reference.land(&inputs.new);
    common::assert_converged(&product, &reference.snapshot(), "new.jsonl");

    TwoRenames.restore(&product, &first);
    let restored = product.snapshot();
    assert!(
        swap_path::files_of(&restored.files, &first) == swap_path::files_of(&old.files, &first),
        "restore must bring back {first}'s old bytes"
    );
    assert!(
        swap_path::without(&restored, &first) == swap_path::without(&reference.snapshot(), &first),
        "restoring {first} touched the other date"
    );
}
