//! A name in the inbox flipped, while runs land it, between a regular file, a symbolic
//! link to a file outside the inbox and a FIFO (issue 48): the entry checked is the
//! entry read (`O_NOFOLLOW | O_NONBLOCK`, then device and inode compared), so no run
//! publishes the outside file's rows and no run waits on the FIFO holding the lock.
//! Bounded in runs and in time; nothing here is timed but the hang guard.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::Product;

/// A run that takes this long is waiting on something: the bug, not a slow machine.
const HANG: Duration = Duration::from_secs(60);

fn event(id: u32, date: &str) -> Vec<u8> {
    format!(
        "{{\"event_id\":\"s{id}\",\"order_id\":{id},\"status\":\"PAID\",\"updated_at\":\"{date}T10:00:00Z\"}}\n"
    )
    .into_bytes()
}

/// Runs `cmd` to its end, failing the test if it outlives [`HANG`].
fn run_bounded(mut cmd: Command) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let started = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(HANG) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!(
                "a run hung for {:?} on a swapped inbox name",
                started.elapsed()
            );
        }
    }
}

struct Stopping<'a>(&'a AtomicBool);

impl Drop for Stopping<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

#[test]
fn a_name_swapped_for_a_link_or_a_fifo_never_lands_the_outside_file_nor_hangs() {
    let product = Product::with_settings("max_dates = 5");
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.jsonl");
    fs::write(&secret, event(999, "2024-05-05")).unwrap();
    let inbox = product.path().join("inbox");
    let name = inbox.join("x.jsonl");
    let stop = AtomicBool::new(false);
    let runs = std::thread::scope(|scope| {
        // Stops the flipping however the runs end (a hung run panics out of the scope).
        let _stopping = Stopping(&stop);
        scope.spawn(|| {
            // Hidden names: the inbox ignores them; each rename swaps the entry at once.
            let mut turn = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let staged = inbox.join(format!(".next-{turn}"));
                match turn % 3 {
                    0 => fs::write(&staged, event(turn % 7 + 1, "2024-03-01")).unwrap(),
                    1 => std::os::unix::fs::symlink(&secret, &staged).unwrap(),
                    _ => mkfifo(&staged),
                }
                fs::rename(&staged, &name).unwrap();
                turn += 1;
                std::thread::sleep(Duration::from_micros(u64::from(turn % 5) * 300));
            }
        });
        let mut runs = Vec::new();
        for i in 0..60 {
            let args: &[&str] = if i % 2 == 0 {
                &["--json", "run"]
            } else {
                &["run"]
            };
            let mut cmd = product.cmd(args);
            if i % 3 != 0 {
                cmd.arg(&name);
            }
            runs.push(run_bounded(cmd));
        }
        runs
    });
    let codes: Vec<i32> = runs.iter().map(|o| o.status.code().unwrap_or(-1)).collect();
    eprintln!("exit codes: {codes:?}");
    // 2: the input named is refused; 1: the inbox's run met an input error (and went on).
    assert!(codes.iter().all(|c| [0, 1, 2].contains(c)), "{codes:?}");
    for out in runs.iter().filter(|o| !o.status.success()) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let named = [
            "symbolic link",
            "not a regular file",
            "replaced",
            "no such file",
        ]
        .iter()
        .any(|why| stderr.contains(why));
        assert!(named && stderr.contains("x.jsonl"), "{stderr}");
    }
    assert!(codes.contains(&0), "no run landed anything: {codes:?}");
    for out in &runs {
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("busy"), "a run found the lock held: {text}");
    }
    let published = product.snapshot();
    assert!(
        !published.rows.contains_key("2024-05-05"),
        "the outside file was published: {:?}",
        published.rows
    );
    assert!(
        published
            .rows
            .values()
            .flatten()
            .all(|r| !r.contains("999")),
        "{:?}",
        published.rows
    );
}
