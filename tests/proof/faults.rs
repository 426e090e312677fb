//! Faults: a read-only publish root, a partition that cannot be renamed, roots that do
//! not exist or sit under a regular file, the input vanishing mid-run, and a full disk
//! (ENOSPC) under the publish root, the state root and the quarantine root; EIO and
//! ENOSPC injected into every write, fsync and rename of a run in [`injected`]. Each: a
//! clear error naming the path, the contract's exit code, nothing published damaged,
//! staging cleaned; then the fault is lifted and a rerun converges. Every test that
//! replaces a published date runs on both swap paths ([`BOTH`]); [`trash`]: a failure at
//! any point of a run leaves each replaced generation published or restorable.
//!
//! Mounts (tmpfs, read-only bind) and `chattr +i` need root; where the machine refuses
//! them the test says so on stderr and skips that part.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::{self, Dataset, Product, TwoVersions};
use crate::swap_path::{BOTH, SwapPath};

mod injected;
mod trash;

/// Two small inputs over the same two dates and what each publishes.
fn inputs() -> &'static TwoVersions {
    static INPUTS: OnceLock<TwoVersions> = OnceLock::new();
    INPUTS.get_or_init(|| TwoVersions::generate(3000, (41, 42)))
}

/// A mount (or an immutable flag) undone when dropped.
struct Undo(Vec<String>);

impl Drop for Undo {
    fn drop(&mut self) {
        let _ = Command::new(&self.0[0]).args(&self.0[1..]).status();
    }
}

fn sh(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn mount_tmpfs(dir: &Path, size: &str) -> Option<Undo> {
    fs::create_dir_all(dir).unwrap();
    let target = dir.to_str().unwrap();
    let ok = sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size}"),
            "tmpfs",
            target,
        ],
    );
    ok.then(|| Undo(vec!["umount".into(), "-l".into(), target.into()]))
}

fn mount_read_only(dir: &Path) -> Option<Undo> {
    let target = dir.to_str().unwrap();
    if !sh("mount", &["--bind", target, target]) {
        return None;
    }
    let undo = Undo(vec!["umount".into(), "-l".into(), target.into()]);
    sh("mount", &["-o", "remount,bind,ro", target]).then_some(undo)
}

fn immutable(path: &Path) -> Option<Undo> {
    let target = path.to_str().unwrap();
    sh("chattr", &["+i", target]).then(|| Undo(vec!["chattr".into(), "-i".into(), target.into()]))
}

/// Fills the file system holding `dir` until it is full; returns the filler's path.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).and_then(|_| file.sync_all()).is_ok() {}
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The failed run: exit 1, stderr naming `path`, nothing of the new input's state.
fn assert_error_naming(out: &Output, path: &Path, product: &Product) {
    assert_eq!(out.status.code(), Some(1), "{}", common::text(out));
    let message = stderr(out);
    assert!(
        message.contains(&path.display().to_string()),
        "the error must name {}: {message}",
        path.display()
    );
    assert!(
        product.checkpoint("new.jsonl").is_none(),
        "checkpoint written"
    );
    assert!(!product.staging().exists(), "staging left");
}

fn seeded(path: SwapPath, config: &str) -> Product {
    let product = Product::with_config(config);
    path.land(&product, &inputs().old);
    product
}

fn converge(path: SwapPath, product: &Product) {
    let out = path.land(product, &inputs().new);
    assert!(String::from_utf8_lossy(&out.stdout).contains("published"));
    common::assert_converged(product, &inputs().new_data, "new.jsonl");
}

#[test]
fn read_only_publish_root() {
    BOTH.into_iter().for_each(read_only_publish_root_on);
}

fn read_only_publish_root_on(path: SwapPath) {
    let product = seeded(path, common::CONFIG);
    let before = common::tree(&product.publish);
    let manifest = product.manifest();
    // The folder holding the publish root (and, beside it, the staging area) goes
    // read-only, as a volume remounted read-only would.
    let lake = product.path().join("lake");
    let Some(undo) = mount_read_only(&lake).or_else(|| immutable(&lake)) else {
        eprintln!("SKIPPED read_only_publish_root: neither a read-only bind mount nor chattr +i");
        return;
    };
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &lake, &product);
    assert!(stderr(&out).contains("Read-only") || stderr(&out).contains("not permitted"));
    eprintln!("read-only publish root: {}", stderr(&out).trim());
    drop(undo);
    assert!(
        common::tree(&product.publish) == before,
        "published files changed"
    );
    assert_eq!(product.manifest(), manifest);
    converge(path, &product);
}

#[test]
fn a_partition_that_cannot_be_swapped_stops_the_run_between_dates() {
    BOTH.into_iter()
        .for_each(a_partition_that_cannot_be_swapped_on);
}

fn a_partition_that_cannot_be_swapped_on(path: SwapPath) {
    let product = seeded(path, common::CONFIG);
    let second = product.publish.join("event_date=2024-03-02");
    let Some(undo) = immutable(&second) else {
        eprintln!("SKIPPED: chattr +i is not available here");
        return;
    };
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &second, &product);
    drop(undo);
    let dates = common::check_invariants(&product, &inputs().old_data, &inputs().new_data);
    assert_eq!(
        dates,
        [true, false],
        "the first date swapped, the second did not"
    );
    converge(path, &product);
}

#[test]
fn roots_that_do_not_exist_are_created() {
    let config = common::CONFIG
        .replace("\"lake/orders\"", "\"deep/a/b/lake/orders\"")
        .replace("\"state/orders\"", "\"deep/c/state/orders\"")
        .replace("\"quarantine/orders\"", "\"deep/d/quarantine/orders\"");
    let product = Product::with_config(&config);
    product.land(&inputs().new);
    let publish = product.path().join("deep/a/b/lake/orders");
    assert_eq!(Dataset::read(&publish).rows, inputs().new_data.rows);
    assert!(
        product
            .path()
            .join("deep/c/state/orders/partitions.json")
            .exists()
    );
    assert!(product.path().join("deep/d/quarantine/orders").is_dir());
}

#[test]
fn a_root_under_a_regular_file_is_an_error_naming_it() {
    for root in ["lake/orders", "state/orders", "quarantine/orders"] {
        let config = common::CONFIG.replace(&format!("\"{root}\""), &format!("\"file/{root}\""));
        let product = Product::with_config(&config);
        fs::write(product.path().join("file"), b"not a folder").unwrap();
        let out = product.run(&inputs().new);
        assert_eq!(out.status.code(), Some(1), "{root}: {}", common::text(&out));
        let named = product.path().join("file").display().to_string();
        assert!(stderr(&out).contains(&named), "{root}: {}", stderr(&out));
        assert!(product.checkpoint("new.jsonl").is_none());
        assert!(
            product.owners().is_empty(),
            "{root}: a manifest was written"
        );
        assert!(!product.staging().exists());
        assert_eq!(
            fs::read(product.path().join("file")).unwrap(),
            b"not a folder"
        );
    }
}

#[test]
fn the_input_vanishing() {
    // Before the run: a usage error naming the path, nothing written.
    let product = seeded(SwapPath::Exchange, common::CONFIG);
    let before = common::tree(&product.publish);
    let gone = product.path().join("gone.jsonl");
    let out = product.run(&gone);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(stderr(&out).contains(&gone.display().to_string()));
    assert!(common::tree(&product.publish) == before);

    // Mid-run (unlinked once the run holds the lock): the run lands exactly the bytes it
    // opened, or, when it had not opened them yet, refuses to start as above.
    let big = tempfile::tempdir().unwrap();
    let source = big.path().join("source.jsonl");
    common::generate(&source, 50_000, 2, 43);
    let reference = Product::new();
    reference.land(&source);
    let want = reference.snapshot();
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        let product = Product::new();
        let input = product.path().join("inbox/vanishing.jsonl");
        fs::copy(&source, &input).unwrap();
        let mut child = product
            .cmd(&["run"])
            .arg(&input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lock = product.state.join(".lock");
        while common::lock_holder(&lock) != Some(child.id()) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        fs::remove_file(&input).unwrap();
        let out = child.wait_with_output().unwrap();
        match out.status.code() {
            Some(0) => {
                assert_eq!(product.snapshot().rows, want.rows);
                let checkpoint = product.checkpoint("vanishing.jsonl").unwrap();
                let reference_checkpoint = reference.checkpoint("source.jsonl").unwrap();
                assert_eq!(
                    checkpoint["input_sha256"],
                    reference_checkpoint["input_sha256"]
                );
            }
            Some(2) => {
                assert!(stderr(&out).contains(&input.display().to_string()));
                assert!(product.snapshot().rows.is_empty());
            }
            _ => panic!("unexpected outcome {}", common::text(&out)),
        }
        outcomes.push(out.status.code());
    }
    eprintln!("input vanishing mid-run: exit codes {outcomes:?}");
}

#[test]
fn a_full_publish_root() {
    BOTH.into_iter().for_each(a_full_publish_root_on);
}

fn a_full_publish_root_on(path: SwapPath) {
    // tmpfs at lake/: the publish root lake/orders lives on it, the filler beside it.
    let product = Product::new();
    let Some(_mount) = mount_tmpfs(&product.path().join("lake"), "2m") else {
        eprintln!("SKIPPED a_full_publish_root: mounting a tmpfs is not permitted here");
        return;
    };
    path.land(&product, &inputs().old);
    let before = common::tree(&product.publish);
    let manifest = product.manifest();
    let filler = fill(&product.path().join("lake"));
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &product.staging(), &product);
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
    assert!(
        common::tree(&product.publish) == before,
        "published files changed"
    );
    assert_eq!(product.manifest(), manifest);
    fs::remove_file(filler).unwrap();
    converge(path, &product);
}

#[test]
fn a_publish_root_that_is_a_mount_point_is_refused_before_anything_is_written() {
    // A dedicated volume mounted at the publish root: there is nowhere on its file system
    // outside it to stage (CONTRACT.md §6.2); staging beside it made every swap fail with
    // EXDEV after quarantine, staging inside it would be read by DuckDB and polars after
    // a crash. Refused as a config error naming the root, nothing written there.
    let product = Product::new();
    let Some(_mount) = mount_tmpfs(&product.publish, "64m") else {
        eprintln!("SKIPPED a_publish_root_that_is_a_mount_point: tmpfs not permitted here");
        return;
    };
    let out = product.run(&inputs().old);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    let message = stderr(&out);
    assert!(message.contains("mount point"), "{message}");
    assert!(
        message.contains(&product.publish.display().to_string()),
        "{message}"
    );
    assert_eq!(
        fs::read_dir(&product.publish).unwrap().count(),
        0,
        "wrote in the root"
    );
    assert!(!product.staging().exists());
    assert!(product.checkpoint("old.jsonl").is_none());
}

#[test]
fn a_full_state_root() {
    BOTH.into_iter().for_each(a_full_state_root_on);
}

fn a_full_state_root_on(path: SwapPath) {
    // tmpfs at state/: the trash (reached by copying across file systems), manifest and
    // checkpoint cannot be written. The first date may already be swapped: each date is
    // old or new, never damaged, and the rerun converges.
    let product = Product::new();
    let Some(_mount) = mount_tmpfs(&product.path().join("state"), "2m") else {
        eprintln!("SKIPPED a_full_state_root: mounting a tmpfs is not permitted here");
        return;
    };
    path.land(&product, &inputs().old);
    let filler = fill(&product.path().join("state"));
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &product.state, &product);
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
    common::check_invariants(&product, &inputs().old_data, &inputs().new_data);
    assert_trash_whole(&product);
    fs::remove_file(filler).unwrap();
    converge(path, &product);
    assert_trash_whole(&product);
}

#[test]
fn a_full_trash_on_another_file_system_leaves_no_half_copied_generation() {
    BOTH.into_iter().for_each(a_full_trash_on);
}

fn a_full_trash_on(path: SwapPath) {
    // The state root on its own (full) file system: the replaced generation is copied
    // into the trash, and the copy fails. No generation folder may be left without its
    // generation.json: restore would pick it as the newest and fail (or bring back part
    // of a day).
    let product = Product::new();
    let Some(_mount) = mount_tmpfs(&product.path().join("state"), "2m") else {
        eprintln!("SKIPPED a_full_trash_on_another_file_system: tmpfs not permitted here");
        return;
    };
    path.land(&product, &inputs().old);
    let filler = fill(&product.path().join("state"));
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &product.state.join("trash"), &product);
    assert!(stderr(&out).contains("No space left on device"));
    assert_trash_whole(&product);
    fs::remove_file(filler).unwrap();
    converge(path, &product);
    assert_trash_whole(&product);
    // The date the rerun swapped has its old generation in the trash, whole: restorable.
    let last = inputs().old_data.rows.keys().last().unwrap().clone();
    path.restore(&product, &last);
    assert_eq!(
        product.snapshot().rows[&last],
        inputs().old_data.rows[&last]
    );
}

/// Every generation in the trash is whole: a folder holding `generation.json` and its
/// Parquet files, nothing hidden (a copy in progress) left beside it.
fn assert_trash_whole(product: &Product) {
    let Ok(dates) = fs::read_dir(product.state.join("trash")) else {
        return;
    };
    for date in dates {
        for generation in fs::read_dir(date.unwrap().path()).unwrap() {
            let path = generation.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                !name.starts_with('.'),
                "left in the trash: {}",
                path.display()
            );
            assert!(
                path.join("generation.json").is_file(),
                "a generation without its record: {}",
                path.display()
            );
            let record = common::read_json(&path.join("generation.json")).unwrap();
            let rows: usize = fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
                .map(|p| common::parquet_rows(&p).len())
                .sum();
            assert_eq!(
                Some(rows as u64),
                record["rows"].as_u64(),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn a_full_quarantine_root() {
    BOTH.into_iter().for_each(a_full_quarantine_root_on);
}

fn a_full_quarantine_root_on(path: SwapPath) {
    let product = Product::new();
    let Some(_mount) = mount_tmpfs(&product.path().join("quarantine"), "1m") else {
        eprintln!("SKIPPED a_full_quarantine_root: mounting a tmpfs is not permitted here");
        return;
    };
    path.land(&product, &inputs().old);
    let before = common::tree(&product.publish);
    let filler = fill(&product.path().join("quarantine"));
    let out = path.run(&product, &inputs().new);
    assert_error_naming(&out, &product.quarantine, &product);
    assert!(
        common::tree(&product.publish) == before,
        "published files changed"
    );
    fs::remove_file(filler).unwrap();
    converge(path, &product);
}
