//! The console over an S3 inbox (CONTRACT.md §13): it lists objects and sets (an open one
//! as open), shows one put while it is open, and its Raw, Ranked and Changes tabs read an
//! object, the Raw tab's far lines by range requests (counted by the fault proxy, which
//! injects no fault here).
//!
//! The console takes the store's settings from its process's environment, so the test
//! runs its body in a child process of this test binary, given that environment.

use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use wharf::config::Config;
use wharf::console::app::{Loading, Pane};
use wharf::console::{Console, Intent, theme};

use super::fault_proxy::{FaultProxy, Faults};
use super::kit::product::Product;
use super::s3_env;
use super::s3_inbox::{fresh_prefix, lines, s3_product};
use super::{Root, port};

const CHILD: &str = "WHARF_TEST_CONSOLE_CONFIG";
const NAME: &str = "s3_console::the_console_lists_an_s3_inbox_and_reads_objects_by_range";

/// 3000 events over 40 keys on 2024-03-10: enough lines that the Raw tab's last ones are
/// read from a kept start, not from the first byte.
fn many() -> Vec<u8> {
    let events: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                r#"{{"event_id":"m{i}","order_id":{},"status":"PAID","updated_at":"2024-03-10T{:02}:{:02}:00Z"}}"#,
                i % 40,
                i / 60 % 24,
                i % 60
            )
        })
        .collect();
    lines(&events.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn the_console_lists_an_s3_inbox_and_reads_objects_by_range() {
    if let Some(config) = std::env::var_os(CHILD) {
        return console_over(Config::load(std::path::Path::new(&config)).unwrap());
    }
    let prefix = fresh_prefix("console");
    let bucket = Root::s3(&prefix);
    bucket.put("01-many.jsonl", &many());
    bucket.put("02-set/part-0.jsonl", &many()[..200]);
    bucket.put("02-set/_SUCCESS", b"");
    bucket.put("03-open/part-0.jsonl", b"{}\n");
    let product: Product = s3_product(&prefix, "");
    let proxy = FaultProxy::start(port(), Faults::default());
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([NAME, "--exact", "--nocapture"])
        .env(CHILD, &product.config);
    s3_env(&mut cmd).env("AWS_ENDPOINT_URL", proxy.endpoint());
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "the child ran the body: {text}");
    let ranged = proxy.faults.ranged.load(Ordering::SeqCst);
    assert!(
        ranged >= 1,
        "the Raw tab's far lines came by range requests"
    );
}

/// The body, in the child: the console over the S3 inbox.
fn console_over(config: Config) {
    let prefix = config
        .inbox
        .to_string_lossy()
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    settle(&mut console);
    let names: Vec<String> = console
        .app
        .inbox
        .all
        .iter()
        .map(|r| r.entry.name.clone())
        .collect();
    for name in ["01-many.jsonl", "02-set", "03-open"] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    let open = console
        .app
        .inbox
        .all
        .iter()
        .find(|r| r.entry.name == "03-open")
        .unwrap();
    assert!(
        open.entry.set.as_ref().is_some_and(|s| s.open),
        "03-open is an open set"
    );
    let set = console
        .app
        .inbox
        .all
        .iter()
        .find(|r| r.entry.name == "02-set")
        .unwrap();
    assert_eq!(
        set.entry.set.as_ref().map(|s| (s.open, s.parts)),
        Some((false, 1))
    );

    // A new object while it is open: the listing after the last key seen shows it.
    console.watch().unwrap();
    Root::s3(&prefix).put("04-new.jsonl", &many()[..300]);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !console
        .app
        .inbox
        .all
        .iter()
        .any(|r| r.entry.name == "04-new.jsonl")
    {
        assert!(Instant::now() < deadline, "the new object never showed");
        console.pump(Duration::from_millis(50));
    }

    // Raw: the object's lines, the last ones read from a kept start by a range request.
    console.step(Intent::Top);
    while console.app.current().map(|r| r.entry.name.as_str()) != Some("01-many.jsonl") {
        console.step(Intent::Down);
    }
    settle(&mut console);
    console.step(Intent::NextPane);
    console.step(Intent::NextPane);
    settle(&mut console);
    assert_eq!(console.app.pane, Pane::Raw);
    let Loading::Ready(index) = &console.app.raw.index else {
        panic!("Raw not indexed: {:?}", console.app.raw.index);
    };
    assert_eq!(index.lines(), 3000);
    console.step(Intent::Bottom);
    settle(&mut console);
    let raw = &console.app.raw;
    let at = (raw.cursor - raw.window_start) as usize;
    assert_eq!(raw.cursor, 3000);
    assert!(
        raw.window[at].text.contains("\"event_id\":\"m2999\""),
        "{:?}",
        raw.window[at]
    );

    // Ranked and Changes: the object read through the same pipeline.
    console.step(Intent::NextPane);
    settle(&mut console);
    assert_eq!(console.app.pane, Pane::Ranked);
    assert!(
        matches!(console.app.ranked.data, Loading::Ready(_)),
        "{:?}",
        console.app.ranked.data
    );
    console.step(Intent::NextPane);
    settle(&mut console);
    assert_eq!(console.app.pane, Pane::Changes);
    let Loading::Ready(changes) = &console.app.changes.data else {
        panic!("Changes: {:?}", console.app.changes.data);
    };
    assert_eq!(changes.items.len(), 40, "40 keys, all new");
}

fn settle(console: &mut Console) {
    assert!(
        console.settle(Duration::from_secs(30)),
        "workers did not finish"
    );
}
