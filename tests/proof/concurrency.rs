//! One run per product (CONTRACT.md §5.2): a second run while the lock is held exits 4
//! `busy` and touches nothing; a lock left by a killed run does not block the next.
//! Who holds the lock is read from /proc/locks, so observing never takes the lock.

use std::fs::OpenOptions;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::{self, Product};

/// Waits until `child` holds the product lock; `false` if it ended first.
fn wait_for_lock(product: &Product, child: &mut Child) -> bool {
    let lock = product.state.join(".lock");
    loop {
        if common::lock_holder(&lock) == Some(child.id()) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn busy_json(out: &std::process::Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(4),
        "busy exits 4: {}",
        common::text(out)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["action"], "busy");
    json
}

fn published_file(product: &Product, name: &str, seed: u64, events: u64) -> std::path::PathBuf {
    let path = product.path().join(name);
    common::generate(&path, events, 2, seed, &[]);
    path
}

#[test]
fn a_run_while_another_holds_the_lock_is_busy_and_touches_nothing() {
    let product = Product::new();
    let old = published_file(&product, "old.jsonl", 31, 2000);
    let new = published_file(&product, "new.jsonl", 32, 2000);
    product.land(&old);
    let before = (
        common::tree(&product.publish),
        common::tree(&product.state),
        common::tree(&product.quarantine),
    );

    // The test process holds the product's OS lock, as a running `wharf run` would.
    let lock = OpenOptions::new()
        .write(true)
        .open(product.state.join(".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = product.cmd(&["--json", "run"]).arg(&new).output().unwrap();
    busy_json(&out);
    let after = (
        common::tree(&product.publish),
        common::tree(&product.state),
        common::tree(&product.quarantine),
    );
    assert!(before == after, "a busy run changed a file");
    drop(lock);

    let out = product.land(&new);
    assert!(String::from_utf8_lossy(&out.stdout).contains("published"));
}

#[test]
fn two_runs_at_once_one_lands_the_other_is_busy() {
    let product = Product::new();
    let first = published_file(&product, "first.jsonl", 33, 50_000);
    let second = published_file(&product, "second.jsonl", 34, 2000);
    for attempt in 0..5 {
        let mut a = product
            .cmd(&["--json", "run"])
            .arg(&first)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        if !wait_for_lock(&product, &mut a) {
            a.wait().unwrap();
            continue;
        }
        let b = product
            .cmd(&["--json", "run"])
            .arg(&second)
            .output()
            .unwrap();
        // Still held by A after B ended: the two runs overlapped for all of B's life.
        let overlapped = common::lock_holder(&product.state.join(".lock")) == Some(a.id());
        let a = a.wait_with_output().unwrap();
        if !overlapped {
            eprintln!("attempt {attempt}: the first run ended before the second; again");
            continue;
        }
        assert_eq!(a.status.code(), Some(0), "{}", common::text(&a));
        let a_json: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
        assert!(["published", "skipped"].contains(&a_json["action"].as_str().unwrap()));
        busy_json(&b);
        assert!(
            product.checkpoint("second.jsonl").is_none(),
            "the busy input landed"
        );
        assert!(product.owners().values().all(|o| o == "first.jsonl"));
        return;
    }
    panic!("could not overlap two runs in 5 attempts; use a bigger input");
}

#[test]
fn a_lock_left_by_a_killed_run_does_not_block_the_next() {
    let product = Product::new();
    let input = published_file(&product, "big.jsonl", 35, 50_000);
    let mut killed = false;
    for _ in 0..5 {
        let mut child = product
            .cmd(&["run"])
            .arg(&input)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        if !wait_for_lock(&product, &mut child) {
            child.wait().unwrap();
            let _ = std::fs::remove_dir_all(product.path().join("state"));
            continue;
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        killed = status.signal() == Some(9);
        if killed {
            break;
        }
    }
    assert!(killed, "no run could be killed while holding the lock");
    assert!(
        Path::new(&product.state.join(".lock")).exists(),
        "the lock file stays"
    );
    let out = product.land(&input);
    assert!(String::from_utf8_lossy(&out.stdout).contains("published"));
}
