//! The replaced generation is never lost to `restore`: EIO injected into each write,
//! fsync and rename of a run that replaces two published dates (those of the trash step
//! among them, before and after each swap), on both swap paths. After each failed run,
//! `wharf restore DATE --yes` of every date the run swapped brings back its exact previous
//! bytes and leaves the other date as it was; a date not swapped is still the old one.

use crate::common;
use crate::swap_path::{self, BOTH};

#[test]
fn a_failure_at_any_step_leaves_each_replaced_generation_restorable() {
    let inputs = super::injected::inputs();
    let old = &inputs.old_data;
    let mut restored = 0;
    for (path, op) in BOTH
        .into_iter()
        .flat_map(|path| ["write", "fsync", "rename"].map(|op| (path, op)))
    {
        for nth in 1.. {
            assert!(nth <= 100, "{op}: more than 100 calls in one run?");
            let spec = format!("{op}:EIO:{nth}");
            let (product, out, faulted) = super::injected::run_faulted(path, &spec);
            if !faulted {
                break; // fewer than nth calls
            }
            assert_eq!(out.status.code(), Some(1), "{spec}: {}", common::text(&out));
            let dates = common::check_invariants(&product, old, &inputs.new_data);
            let mut now = product.snapshot();
            for (date, swapped) in old.rows.keys().zip(dates) {
                let others = swap_path::without(&now, date);
                if !swapped {
                    assert!(
                        swap_path::files_of(&now.files, date)
                            == swap_path::files_of(&old.files, date),
                        "{path:?} {spec}: {date} was not swapped and changed"
                    );
                    continue;
                }
                path.restore(&product, date);
                restored += 1;
                now = product.snapshot();
                assert!(
                    swap_path::files_of(&now.files, date) == swap_path::files_of(&old.files, date),
                    "{path:?} {spec}: restore did not bring back {date}'s previous bytes"
                );
                assert!(
                    swap_path::without(&now, date) == others,
                    "{path:?} {spec}: restoring {date} touched another date"
                );
            }
            assert!(
                now == *old,
                "{path:?} {spec}: not every date is the old one"
            );
            let owners = product.owners();
            assert!(
                owners.values().all(|o| o == "old.jsonl"),
                "{path:?} {spec}: owners {owners:?}"
            );
        }
    }
    assert!(restored > 0, "no fault ever left a date swapped");
}
