//! Helpers of the `wharf watch` and progress tests: a running `wharf watch --json` whose
//! outcome lines are collected as they come, inputs of N events renamed into the inbox
//! as a producer does, waits bounded by a deadline, and who holds the product's lock.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::kit::{Product, event};

/// How long any wait of these tests may take before it fails: generous, since the
/// machine is shared and the binary is a debug build.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// `n` events on `date`, keys `1..=n`, every status `status`, ids prefixed by `tag`.
pub fn events(tag: &str, n: usize, date: &str, status: &str) -> Vec<String> {
    events_from(tag, 1, n, date, status)
}

/// [`events`] with keys `first..first + n`.
pub fn events_from(tag: &str, first: usize, n: usize, date: &str, status: &str) -> Vec<String> {
    (first..first + n)
        .map(|i| {
            let at = format!(
                "{date}T{:02}:{:02}:{:02}Z",
                i / 3600 % 24,
                i / 60 % 60,
                i % 60
            );
            event(&format!("{tag}-{i}"), i as i64, status, &at)
        })
        .collect()
}

/// Writes `lines` under a hidden temporary name in the inbox, then renames it to
/// `name`, as producers do; returns the final path.
pub fn rename_in(product: &Product, name: &str, lines: &[String]) -> PathBuf {
    let temporary = product.path().join("inbox").join(format!(".{name}.tmp"));
    let mut text = lines.join("\n");
    text.push('\n');
    fs::write(&temporary, text).unwrap();
    let path = product.path().join("inbox").join(name);
    fs::rename(&temporary, &path).unwrap();
    path
}

/// Polls `done` every few milliseconds until it holds; panics naming `what` after
/// [`PATIENCE`].
pub fn poll(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// The pid holding an OS lock (flock) on `path`, read from /proc/locks without taking
/// the lock.
pub fn lock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let inode = fs::metadata(path).ok()?.ino();
    let locks = fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:56789 0 EOF"; blocked waiters carry "->".
        let parts: Vec<&str> = line.split_whitespace().filter(|p| *p != "->").collect();
        let ino = parts.get(5)?.rsplit(':').next()?.parse::<u64>().ok()?;
        (parts.get(1) == Some(&"FLOCK") && ino == inode)
            .then(|| parts.get(4)?.parse().ok())
            .flatten()
    })
}

/// The product's landing lock file.
pub fn product_lock(product: &Product) -> PathBuf {
    product.state.join(".lock")
}

/// The run log's records, oldest first.
pub fn run_log(product: &Product) -> Vec<Value> {
    fs::read_to_string(product.state.join("runs.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A running `wharf watch --json --rescan 1`.
pub struct Watching {
    pub child: Child,
    lines: Receiver<Value>,
    /// Every outcome line read so far, in order.
    pub seen: Vec<Value>,
}

impl Watching {
    /// Starts `wharf watch --json --rescan 1` on `product`.
    pub fn start(product: &Product) -> Watching {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wharf"))
            .args(["watch", "--json", "--rescan", "1", "--config"])
            .arg(&product.config)
            .env_remove("WHARF_FAILPOINT")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Watching {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Collects the lines printed so far, without waiting.
    pub fn collect(&mut self) -> &[Value] {
        self.seen.extend(self.lines.try_iter());
        &self.seen
    }

    /// Waits for an outcome line about `name` whose action is `action`, and returns it.
    pub fn wait_for(&mut self, name: &str, action: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(found) = self
                .seen
                .iter()
                .find(|v| v["input_name"] == name && v["action"] == action)
            {
                return found.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(value) => self.seen.push(value),
                Err(_) => panic!(
                    "no {action} line for {name} from wharf watch; lines so far: {:?}",
                    self.seen
                ),
            }
        }
    }

    /// The (input_name, action) of every line read so far.
    pub fn outcomes(&mut self) -> Vec<(String, String)> {
        self.collect()
            .iter()
            .map(|v| {
                (
                    v["input_name"].as_str().unwrap_or_default().to_owned(),
                    v["action"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// Sends `signal` (a `kill` name such as `TERM`) to the process.
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
    }

    /// Waits for the process to end, within [`PATIENCE`].
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "wharf watch did not exit");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> ExitStatus {
        self.signal("TERM");
        self.wait_exit()
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
