//! The shipped binary in a real terminal, as an on-call engineer drives it: `wharf console`
//! over two products in tmux, keys sent with `send-keys`, the screen read with
//! `capture-pane`, and the files read back. Needs tmux (`.ci/run` installs it).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::kit;

/// A tmux session running one command, killed when dropped.
struct Session {
    name: String,
}

impl Session {
    fn start(command: &str, dir: &Path) -> Session {
        // One session per test: the tests of this binary run in parallel.
        static SESSIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("wharf-test-{}-{n}", std::process::id());
        let started = Command::new("tmux")
            .args(["new-session", "-d", "-s", &name, "-x", "120", "-y", "32"])
            .arg("-c")
            .arg(dir)
            .arg(command)
            .status()
            .expect("tmux runs (apt-get install tmux)");
        assert!(started.success(), "tmux new-session failed");
        Session { name }
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            let sent = Command::new("tmux")
                .args(["send-keys", "-t", &self.name, key])
                .status()
                .expect("tmux send-keys");
            assert!(sent.success());
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// Sends `text` in one write, as fast typing (or a paste) arrives.
    fn burst(&self, text: &str) {
        let sent = Command::new("tmux")
            .args(["send-keys", "-l", "-t", &self.name, text])
            .status()
            .expect("tmux send-keys");
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(300));
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once `ready` holds for it, within 20 s.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no {what} on screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["has-session", "-t", &self.name])
            .output()
            .is_ok_and(|o| o.status.success())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .output();
    }
}

/// Products → Enter on `payments` → refuse its leaky export with `r`, `y` → Esc back to
/// Products, whose header and row now name the refusal; `q` quits. The refusal wrote
/// payments' quarantine and nothing else; the other product is untouched.
#[test]
fn an_on_call_engineer_refuses_a_leaky_export_from_the_products_screen() {
    let orders = kit::Product::samples();
    let payments = kit::Product::samples();
    let text = std::fs::read_to_string(&payments.config).expect("the samples' config");
    let renamed = text.replace("product = \"orders\"", "product = \"payments\"");
    std::fs::write(&payments.config, renamed).expect("rename the product");
    let untouched = kit::tree(orders.path());
    let command = format!(
        "{} console --config {} --config {}",
        env!("CARGO_BIN_EXE_wharf"),
        orders.config.display(),
        payments.config.display()
    );
    let tmux = Session::start(&command, payments.path());
    tmux.wait_for("Products screen", |s| {
        s.contains("Products") && s.contains("payments")
    });

    tmux.keys(&["j", "Enter"]);
    tmux.wait_for("payments' inbox", |s| {
        s.contains("wharf payments") && s.contains("03-leaky-export")
    });
    tmux.keys(&["G"]);
    tmux.wait_for("the leaky export's plan", |s| {
        s.contains("prohibited_field")
    });
    tmux.keys(&["r"]);
    tmux.wait_for("the refusal's confirmation", |s| {
        s.contains("will be refused")
    });
    tmux.keys(&["y"]);
    tmux.wait_for("the refusal recorded", |s| !s.contains("will be refused"));
    tmux.keys(&["Escape", "Escape"]);
    let screen = tmux.wait_for("the header's warning", |s| {
        s.contains("⚠ payments: refused 1")
    });
    let row = screen
        .lines()
        .find(|l| l.contains("payments") && l.contains("refused prohibited"))
        .unwrap_or_else(|| panic!("payments' row names the refusal:\n{screen}"));
    assert!(!row.contains("orders"), "{row}");

    tmux.keys(&["q"]);
    let started = Instant::now();
    while tmux.alive() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!tmux.alive(), "q quits the console");

    let quarantined: Vec<_> = std::fs::read_dir(&payments.quarantine)
        .expect("payments' quarantine")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(quarantined.len(), 1, "{quarantined:?}");
    assert!(quarantined[0].join("summary.json").is_file());
    assert!(
        !payments.publish.exists() || kit::tree(&payments.publish).is_empty(),
        "a refusal publishes nothing"
    );
    assert_eq!(
        kit::tree(orders.path()),
        untouched,
        "the other product is untouched"
    );
}

/// Typed words land nothing: `/delivery` and `/rrrryyyy` on the Inbox only filter the
/// list (every key is text while the filter is open), and `ry` typed ahead of the run
/// confirmation's drawing never answers it. Then a guided rerun: `R` on a landed input
/// shows its rerun plan, `r` asks for its name, and only the typed name lands it.
#[test]
fn typed_words_land_nothing_and_a_rerun_lands_only_on_its_typed_name() {
    let product = kit::Product::samples();
    let day = |tag: &str, date: &str| {
        let line = kit::event(&format!("{tag}-1"), 1, "PAID", &format!("{date}T10:00:00Z"));
        format!("{line}\n")
    };
    std::fs::write(
        product.path().join("inbox/delivery-1.jsonl"),
        day("d1", "2024-04-01"),
    )
    .unwrap();
    std::fs::write(
        product.path().join("inbox/delivery-2.jsonl"),
        day("d2", "2024-04-02"),
    )
    .unwrap();
    let command = format!(
        "{} console --config {}",
        env!("CARGO_BIN_EXE_wharf"),
        product.config.display()
    );
    let tmux = Session::start(&command, product.path());
    tmux.wait_for("the first input's plan", |s| {
        s.contains("01-orders") && s.contains("PUBLISH")
    });
    let nothing_landed = || {
        assert!(
            !product.state.join("runs.jsonl").exists(),
            "the run log was written"
        );
        assert!(!product.publish.exists() || kit::tree(&product.publish).is_empty());
    };

    tmux.burst("/delivery");
    let screen = tmux.wait_for("the filtered list", |s| s.contains("matching /delivery"));
    assert!(
        screen.contains("delivery-1") && screen.contains("delivery-2"),
        "{screen}"
    );
    assert!(!screen.contains("01-orders-2024"), "{screen}");
    tmux.keys(&["Enter"]);
    nothing_landed();
    tmux.keys(&["/", "Escape"]);
    tmux.wait_for("the filter cleared", |s| !s.contains("matching /"));
    tmux.burst("/rrrryyyy");
    let screen = tmux.wait_for("the filter typed", |s| s.contains("matching /rrrryyyy"));
    assert!(!screen.contains("delivery-1"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the filter cleared", |s| {
        !s.contains("matching /") && s.contains("01-orders")
    });
    nothing_landed();

    // `r` opens the confirmation; the `y` typed with it arrived before it was drawn.
    tmux.keys(&["g"]);
    tmux.wait_for("the first input's plan", |s| s.contains("PUBLISH"));
    tmux.burst("ry");
    tmux.wait_for("the run confirmation", |s| s.contains("Land 01-orders"));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        tmux.screen().contains("Land 01-orders"),
        "{}",
        tmux.screen()
    );
    nothing_landed();
    tmux.keys(&["y"]);
    tmux.wait_for("the landing's result", |s| {
        s.contains("published 01-orders")
    });
    tmux.keys(&["Escape"]);
    let lake = kit::tree(&product.publish);

    tmux.keys(&["R"]);
    tmux.wait_for("the rerun plan", |s| s.contains("RERUN"));
    tmux.keys(&["r"]);
    tmux.wait_for("the rerun confirmation", |s| s.contains("Rerun 01-orders"));
    tmux.burst("yyyy");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the wrong word refused", |s| {
        s.contains("type the input's name")
    });
    assert_eq!(kit::tree(&product.publish), lake, "a wrong word relanded");
    tmux.burst("01-orders-2024-03-01.jsonl");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the rerun's result", |s| s.contains("published 01-orders"));
    let log = std::fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let landed: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"published\""))
        .collect();
    assert_eq!(landed.len(), 2, "{log}");
    assert!(landed.iter().all(|l| l.contains("01-orders")), "{log}");
}
