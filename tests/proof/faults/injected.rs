//! EIO and ENOSPC injected (`WHARF_FAULT=<op>:<errno>:<nth>`, see `store::failpoint`)
//! into the nth write, fsync or rename of a run that replaces two published dates, for
//! every nth the run makes. After each: exit 1; stderr names a path and says what to do;
//! each date byte-for-byte old or new, and the manifest and checkpoint never claim more
//! than is published; no staging, no temporary file, no half generation in the trash; a
//! date swapped has its old generation whole in the trash, a date not swapped none; then
//! a rerun without the fault converges to the uninterrupted result. On both swap paths.

use std::collections::BTreeMap;
use std::process::Output;
use std::sync::OnceLock;

use crate::common::{self, Dataset, Product, TwoVersions};
use crate::swap_path::{self, BOTH, SwapPath};

const ERRNOS: [(&str, &str); 2] = [
    ("EIO", "Input/output error"),
    ("ENOSPC", "No space left on device"),
];

/// Two small inputs over the same two dates (small: every run here is one of hundreds).
pub(super) fn inputs() -> &'static TwoVersions {
    static INPUTS: OnceLock<TwoVersions> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let inputs = TwoVersions::generate(400, (51, 52));
        assert_eq!(inputs.old_data.rows.len(), 2);
        assert!(
            inputs
                .old_data
                .rows
                .keys()
                .all(|d| inputs.old_data.rows[d] != inputs.new_data.rows[d])
        );
        inputs
    })
}

#[test]
fn write_faults() {
    inject("write");
}

#[test]
fn fsync_faults() {
    inject("fsync");
}

#[test]
fn rename_faults() {
    inject("rename");
}

/// Injects each errno at nth = 1, 2, … `op` calls until a run makes fewer than nth, on
/// both swap paths.
fn inject(op: &str) {
    let inputs = inputs();
    let mut report = Vec::new();
    for (path, (errno, text)) in BOTH
        .into_iter()
        .flat_map(|path| ERRNOS.map(|errno| (path, errno)))
    {
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        let mut injected = 0;
        for nth in 1.. {
            assert!(nth <= 100, "{op}: more than 100 calls in one run?");
            let spec = format!("{op}:{errno}:{nth}");
            let (product, out, faulted) = run_faulted(path, &spec);
            if !faulted {
                // Fewer than nth calls: the run is uninterrupted.
                assert_eq!(out.status.code(), Some(0), "{spec}: {}", common::text(&out));
                path.assert_taken(&product, 2);
                common::assert_converged(&product, &inputs.new_data, "new.jsonl");
                break;
            }
            injected += 1;
            let spec = format!("{path:?} {spec}");
            *seen
                .entry(check_failed(&product, &out, &spec, text))
                .or_default() += 1;
            let rerun = path.land(&product, &inputs.new);
            assert!(rerun.stderr.is_empty(), "{spec}: {}", common::text(&rerun));
            common::assert_converged(&product, &inputs.new_data, "new.jsonl");
            super::assert_trash_whole(&product);
        }
        assert!(injected > 0, "{op}:{errno}: no call was ever faulted");
        report.push(format!(
            "{path:?} {op}:{errno}: {injected} faults injected; after them {seen:?}"
        ));
    }
    for line in report {
        eprintln!("{line}");
    }
}

/// Lands the old input, then the new one with `WHARF_FAULT=spec`, on `path`: the product,
/// the run's output, and whether the fault was injected (a run that makes fewer calls
/// than the spec's nth is not faulted).
pub(super) fn run_faulted(path: SwapPath, spec: &str) -> (Product, Output, bool) {
    let inputs = inputs();
    let product = Product::new();
    path.land(&product, &inputs.old);
    let out = path
        .cmd(&product, &["run"])
        .arg(&inputs.new)
        .env("WHARF_FAULT", spec)
        .output()
        .unwrap();
    let faulted = String::from_utf8_lossy(&out.stderr).contains("WHARF_FAULT injected");
    (product, out, faulted)
}

/// The checks after a run stopped by an injected fault; returns what it left, as a label.
fn check_failed(product: &Product, out: &Output, spec: &str, errno_text: &str) -> String {
    let inputs = inputs();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{spec}: {}", common::text(out));
    assert!(stderr.contains(errno_text), "{spec}: {stderr}");
    assert!(
        stderr.contains(&product.path().display().to_string()),
        "{spec}: the error must name the path: {stderr}"
    );
    assert!(
        stderr.contains("check"),
        "{spec}: the error must say what to do: {stderr}"
    );
    assert!(!product.staging().exists(), "{spec}: staging left");

    // Each date exactly old or new, rows and bytes.
    let dates = common::check_invariants(product, &inputs.old_data, &inputs.new_data);
    let now = product.snapshot();
    for (date, is_new) in now.rows.keys().zip(&dates) {
        let want = if *is_new {
            &inputs.new_data
        } else {
            &inputs.old_data
        };
        assert!(
            files_of(&now, date) == files_of(want, date),
            "{spec}: {date} holds its rows in other bytes"
        );
    }
    // The manifest names the new input only once every date is new; the checkpoint
    // only once the manifest does.
    let owners = product.owners();
    let manifest_new = owners.values().all(|o| o == "new.jsonl");
    assert!(
        manifest_new || owners.values().all(|o| o == "old.jsonl"),
        "{spec}: owners {owners:?}"
    );
    assert!(
        !manifest_new || dates.iter().all(|d| *d),
        "{spec}: the manifest claims dates {dates:?} that are not new"
    );
    let checkpoint = product.checkpoint("new.jsonl").is_some();
    assert!(
        !checkpoint || manifest_new,
        "{spec}: checkpoint before manifest"
    );

    // No temporary file anywhere (a failed atomic write removes its own), nothing half
    // copied in the trash.
    for root in [&product.state, &product.quarantine, &product.publish] {
        for path in common::tree(root).keys() {
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                !name.ends_with(".tmp"),
                "{spec}: temporary file left: {}",
                path.display()
            );
        }
    }
    super::assert_trash_whole(product);
    // Each replaced generation reachable: in the trash once its date is swapped, still
    // published (and not also in the trash) while it is not.
    for (date, is_new) in now.rows.keys().zip(&dates) {
        let kept = swap_path::newest_in_trash(product, date);
        if *is_new {
            assert!(
                kept == swap_path::files_of(&inputs.old_data.files, date),
                "{spec}: {date} was swapped and its old generation is not whole in the trash"
            );
        } else {
            assert!(
                kept.is_empty(),
                "{spec}: {date} was not swapped, yet is in the trash"
            );
        }
    }
    format!("dates new {dates:?} manifest new {manifest_new} checkpoint {checkpoint}")
}

/// The Parquet files of `date` (name → bytes).
fn files_of<'d>(data: &'d Dataset, date: &str) -> BTreeMap<&'d str, &'d [u8]> {
    let prefix = format!("event_date={date}/");
    data.files
        .iter()
        .filter(|(name, _)| name.starts_with(&prefix))
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect()
}
