//! Modes are Wharf's, not the umask's (issue 48): under `umask 000`, every file of the
//! state root and the quarantine is 0600 and every folder 0700 (the lock and the run
//! log too; the trash's Parquet files are the lake's own, linked); the lake's Parquet files are 0644 and its folders 0755 at most, readable by
//! the lake's readers and writable by nobody else.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::valid;
use crate::common::Product;

/// Every entry under `root` (itself included) with its permission bits.
fn modes(root: &Path) -> Vec<(String, bool, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        out.push((
            path.display().to_string(),
            meta.is_dir(),
            meta.permissions().mode() & 0o777,
        ));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
        }
    }
    out
}

/// `wharf <args> <input>` under `umask 000`.
fn under_umask_000(product: &Product, args: &str, input: &Path) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 000; exec \"$0\" --config \"$1\" {args} \"$2\""
        ))
        .arg(env!("CARGO_BIN_EXE_wharf"))
        .arg(&product.config)
        .arg(input)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn state_quarantine_and_lake_modes_do_not_follow_a_umask_of_000() {
    let product = Product::new();
    let good = product.input_bytes("good.jsonl", &[valid(1), b"\n".to_vec()].concat());
    under_umask_000(&product, "run", &good);
    // A second landing of the date: the first generation goes to the trash.
    let again = product.input_bytes("again.jsonl", &[valid(2), b"\n".to_vec()].concat());
    under_umask_000(&product, "run", &again);
    // A refused file: its rejects and summary go to the quarantine.
    let bad = product.input_bytes("bad.jsonl", &b"{}\n".repeat(200));
    under_umask_000(&product, "run", &bad);
    assert!(product.quarantine.exists(), "nothing was quarantined");
    assert!(product.state.join("runs.jsonl").exists());
    for root in [&product.state, &product.quarantine] {
        for (path, dir, mode) in modes(root) {
            // The trash keeps replaced generations as links to the lake's own files.
            let lake_file = path.contains("/trash/") && path.ends_with(".parquet");
            let want = if dir {
                0o700
            } else if lake_file {
                0o644
            } else {
                0o600
            };
            assert_eq!(mode, want, "{path}: {mode:o}");
        }
    }
    let lake = modes(&product.publish);
    assert!(lake.iter().any(|(p, ..)| p.ends_with(".parquet")));
    for (path, dir, mode) in lake {
        if dir {
            assert_eq!(mode & 0o022, 0, "{path}: {mode:o} is writable by others");
            assert_eq!(mode & 0o555, 0o555, "{path}: {mode:o} is not readable");
        } else {
            assert_eq!(mode, 0o644, "{path}: {mode:o}");
        }
    }
}
