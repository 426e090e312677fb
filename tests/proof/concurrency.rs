//! One run per product (CONTRACT.md §5.2): a second run while the lock is held exits 4
//! `busy` and touches nothing; a lock left by a killed run does not block the next; the
//! console's landings and `wharf run` exclude each other the same way ([`console`]).
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
    common::generate(&path, events, 2, seed);
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

/// The operator console lands through `land::run` too, so it shares the product lock.
mod console {
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use wharf::config::Config;
    use wharf::console::app::{Dialog, Finished};
    use wharf::console::msg::Report;
    use wharf::console::{Console, Intent, theme, workers};
    use wharf::land::RunStatus;

    use super::{busy_json, wait_for_lock};
    use crate::common::{self, Product};

    type Trees = [std::collections::BTreeMap<PathBuf, Vec<u8>>; 3];

    fn trees(product: &Product) -> Trees {
        [
            common::tree(&product.publish),
            common::tree(&product.state),
            common::tree(&product.quarantine),
        ]
    }

    /// `old.jsonl` published; `console.jsonl` and `cli.jsonl` (same two dates) waiting
    /// in the inbox.
    fn product(cli_events: u64) -> (Product, PathBuf, PathBuf) {
        let product = Product::new();
        let inbox = product.path().join("inbox");
        let old = product.path().join("old.jsonl");
        common::generate(&old, 2000, 2, 61);
        product.land(&old);
        let by_console = inbox.join("console.jsonl");
        let by_cli = inbox.join("cli.jsonl");
        common::generate(&by_console, 2000, 2, 62);
        common::generate(&by_cli, cli_events, 2, 63);
        (product, by_console, by_cli)
    }

    #[test]
    fn a_run_while_the_console_lands_is_busy_and_touches_nothing() {
        let (product, by_console, by_cli) = product(2000);
        let config = Config::load(&product.config).unwrap();
        let stamp = workers::stamp_of(&by_console, wharf::input::SET_MARKER).unwrap();
        let (holding_tx, holding) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        // The console's landing worker, paused inside `land::run` at its first progress
        // report (it holds the product lock from before reading to after the run log).
        let landing = std::thread::spawn(move || {
            let cancel = AtomicBool::new(false);
            let paused = AtomicBool::new(false);
            let report = |_: Report| {
                if !paused.swap(true, Ordering::Relaxed) {
                    holding_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                }
                true
            };
            workers::land(
                &config,
                1,
                (&by_console, stamp),
                (false, false),
                &cancel,
                &report,
            )
        });
        holding.recv().unwrap();
        let lock = product.state.join(".lock");
        assert_eq!(
            common::lock_holder(&lock),
            Some(std::process::id()),
            "the console's landing holds the product lock"
        );

        let before = trees(&product);
        let out = product
            .cmd(&["--json", "run"])
            .arg(&by_cli)
            .output()
            .unwrap();
        busy_json(&out);
        assert!(trees(&product) == before, "a busy run changed a file");

        release.send(()).unwrap();
        let Report::Landed { result, .. } = landing.join().unwrap() else {
            panic!("the landing worker ends with Landed");
        };
        assert_eq!(result.unwrap().status, RunStatus::Published);
        assert!(product.owners().values().all(|o| o == "console.jsonl"));
        assert!(
            product.checkpoint("cli.jsonl").is_none(),
            "the busy input landed"
        );
        // Once the console is done, the same command lands.
        product.land(&by_cli);
        assert!(product.owners().values().all(|o| o == "cli.jsonl"));
    }

    #[test]
    fn a_console_landing_while_a_run_holds_the_lock_reports_busy_and_changes_nothing() {
        let (product, by_console, by_cli) = product(50_000);
        let config = Config::load(&product.config).unwrap();
        let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
        settle(&mut console);
        select(&mut console, "console.jsonl");
        assert_eq!(
            console.app.inbox.selected.as_deref(),
            Some(by_console.as_path())
        );

        // A real `wharf run`, frozen (SIGSTOP) once it holds the lock: it holds it for as
        // long as the test needs, whatever the machine's speed.
        let lock = product.state.join(".lock");
        let mut run = None;
        for _ in 0..5 {
            let mut child = product
                .cmd(&["--json", "run"])
                .arg(&by_cli)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            if wait_for_lock(&product, &mut child)
                && signal(child.id(), "STOP")
                && common::lock_holder(&lock) == Some(child.id())
            {
                run = Some(child);
                break;
            }
            // It finished first: put the old version back and try again.
            signal(child.id(), "CONT");
            child.wait().unwrap();
            product.land(&product.path().join("old.jsonl"));
        }
        let run = run.expect("could not catch `wharf run` holding the lock in 5 attempts");

        let before = trees(&product);
        console.step(Intent::Run);
        settle(&mut console);
        assert!(
            matches!(console.app.dialog, Some(Dialog::ConfirmRun { .. })),
            "{:?}",
            console.app.dialog
        );
        console.step(Intent::Confirm);
        settle(&mut console);
        let Some(Dialog::Result(Finished::Failed { error, .. })) = &console.app.dialog else {
            panic!("expected a failed landing: {:?}", console.app.dialog);
        };
        assert!(error.starts_with("busy:"), "{error}");
        assert!(error.contains("nothing was touched"), "{error}");
        let screen = draw(&console);
        assert!(screen.contains("busy"), "the operator sees busy:\n{screen}");
        if std::env::var_os("WHARF_SHOW_SCREEN").is_some() {
            eprintln!("{screen}");
        }
        assert!(
            trees(&product) == before,
            "the busy console landing changed a file"
        );

        assert!(signal(run.id(), "CONT"));
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
        assert!(product.owners().values().all(|o| o == "cli.jsonl"));
        assert!(product.checkpoint("console.jsonl").is_none());

        // The run done, the same confirmation is no longer busy: the console lands, and
        // here refuses (a `shrink`: 2,000 events about to replace the run's 50,000).
        for intent in [Intent::Back, Intent::Run, Intent::Confirm] {
            console.step(intent);
            settle(&mut console);
        }
        let Some(Dialog::Result(Finished::Landed { status, plan, .. })) = &console.app.dialog
        else {
            panic!("expected a landing: {:?}", console.app.dialog);
        };
        assert_eq!(
            (*status, plan.reason()),
            (RunStatus::Refused, Some("shrink"))
        );
    }

    /// `kill -<sig> <pid>` (no libc dependency for one call).
    fn signal(pid: u32, sig: &str) -> bool {
        Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(pid.to_string())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn settle(console: &mut Console) {
        assert!(
            console.settle(Duration::from_secs(120)),
            "workers did not finish"
        );
    }

    fn select(console: &mut Console, name: &str) {
        console.step(Intent::Top);
        while console.app.current().map(|r| r.entry.name.as_str()) != Some(name) {
            let before = console.app.inbox.cursor;
            console.step(Intent::Down);
            assert_ne!(
                before, console.app.inbox.cursor,
                "{name} is not in the inbox"
            );
        }
        settle(console);
    }

    fn draw(console: &Console) -> String {
        let mut terminal = Terminal::new(TestBackend::new(120, 36)).unwrap();
        console.draw(&mut terminal).unwrap();
        terminal.backend().to_string()
    }
}
