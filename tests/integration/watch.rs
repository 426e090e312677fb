//! `wharf watch` against the real binary: inputs renamed into the inbox land in order,
//! a refusal or an error does not stop the next, temporary names and symbolic links
//! never land, busy is retried, SIGTERM finishes the current landing and exits 0, and a
//! SIGKILL mid-landing followed by a restart converges. Every test reads back Parquet
//! rows, checkpoints, quarantine and the run log, not only the printed lines.

use std::fs;
use std::os::unix::process::ExitStatusExt;

use crate::kit::{Product, read_rows, statuses};
use crate::watching::{
    Watching, events, events_from, lock_holder, poll, product_lock, rename_in, run_log,
};

/// Events per "large" input: enough that its landing in a debug build lasts long enough
/// to be caught holding the lock (and reading, then staging) by a poll every few ms.
const LARGE: usize = 60_000;

fn logged(product: &Product) -> Vec<(String, String)> {
    run_log(product)
        .iter()
        .map(|r| {
            let name = r["input_name"].as_str().unwrap().to_owned();
            (name, r["action"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, a)| ((*n).to_owned(), (*a).to_owned()))
        .collect()
}

#[test]
fn files_renamed_in_one_after_another_land_in_order() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    for (name, status) in [("a.jsonl", "A"), ("b.jsonl", "B"), ("c.jsonl", "C")] {
        rename_in(&product, name, &events(name, 3, "2024-03-01", status));
    }
    watch.wait_for("c.jsonl", "published");
    let landed = pairs(&[
        ("a.jsonl", "published"),
        ("b.jsonl", "published"),
        ("c.jsonl", "published"),
    ]);
    assert_eq!(watch.outcomes(), landed);
    assert_eq!(logged(&product), landed);
    let rows = statuses(&product.rows("2024-03-01"));
    assert_eq!(
        rows,
        vec![(1, "C".into()), (2, "C".into()), (3, "C".into())]
    );
    for name in ["a.jsonl", "b.jsonl", "c.jsonl"] {
        assert!(product.checkpoint(name).is_some(), "{name}");
    }
    assert!(watch.stop().success());
}

#[test]
fn a_refusal_does_not_stop_the_next() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    let mut bad = events("bad", 3, "2024-03-01", "A");
    bad[1] = bad[1].replace("}", r#","email":"a@example.com"}"#);
    rename_in(&product, "bad.jsonl", &bad);
    rename_in(
        &product,
        "good.jsonl",
        &events("good", 2, "2024-03-02", "G"),
    );
    let refused = watch.wait_for("bad.jsonl", "refused");
    watch.wait_for("good.jsonl", "published");
    assert_eq!(refused["reason"], "prohibited_field");
    let sha = refused["input_sha256"].as_str().unwrap();
    let summary: serde_json::Value = serde_json::from_slice(
        &fs::read(product.quarantine.join(sha).join("summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(summary["action"], "refused");
    assert_eq!(product.rejects(sha)[0]["reason"], "prohibited_field");
    assert!(product.checkpoint("bad.jsonl").is_none());
    assert_eq!(product.dates(), vec!["2024-03-02"]);
    assert_eq!(statuses(&product.rows("2024-03-02")).len(), 2);
    assert!(watch.stop().success());
}

#[test]
fn temporary_names_and_symlinks_are_never_landed() {
    let product = Product::with_settings("");
    let lines = events("t", 2, "2024-03-01", "T");
    let text = lines.join("\n") + "\n";
    for name in [".x.jsonl", "x.jsonl.tmp", "x.jsonl.part", "x.jsonl.partial"] {
        fs::write(product.path().join("inbox").join(name), &text).unwrap();
    }
    let outside = product.path().join("outside.jsonl");
    fs::write(&outside, &text).unwrap();
    std::os::unix::fs::symlink(&outside, product.path().join("inbox/link.jsonl")).unwrap();
    let mut watch = Watching::start(&product);
    rename_in(&product, "first.jsonl", &events("f", 2, "2024-03-02", "F"));
    watch.wait_for("first.jsonl", "published");
    // More inbox events on temporaries, then a second input: every scan in between saw
    // the temporaries and the link, and left them.
    fs::write(product.path().join("inbox/.y.jsonl"), &text).unwrap();
    fs::write(product.path().join("inbox/y.jsonl.part"), &text).unwrap();
    rename_in(&product, "second.jsonl", &events("s", 2, "2024-03-03", "S"));
    watch.wait_for("second.jsonl", "published");
    let landed = pairs(&[("first.jsonl", "published"), ("second.jsonl", "published")]);
    assert_eq!(watch.outcomes(), landed);
    assert_eq!(logged(&product), landed);
    assert_eq!(product.dates(), vec!["2024-03-02", "2024-03-03"]);
    let checkpoints: Vec<_> = fs::read_dir(product.state.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(checkpoints.len(), 2, "{checkpoints:?}");
    assert!(watch.stop().success());
}

#[test]
fn a_file_renamed_in_while_another_lands_still_lands() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    rename_in(
        &product,
        "large.jsonl",
        &events("l", LARGE, "2024-03-01", "L"),
    );
    let lock = product_lock(&product);
    poll("the large input's landing to hold the lock", || {
        assert!(
            !watch.outcomes().iter().any(|(n, _)| n == "large.jsonl"),
            "the large input landed before its lock was seen; make it larger"
        );
        lock_holder(&lock) == Some(watch.pid())
    });
    rename_in(&product, "small.jsonl", &events("s", 2, "2024-03-02", "S"));
    watch.wait_for("small.jsonl", "published");
    let landed = pairs(&[("large.jsonl", "published"), ("small.jsonl", "published")]);
    assert_eq!(watch.outcomes(), landed);
    assert_eq!(product.rows("2024-03-01").len(), LARGE);
    assert_eq!(
        statuses(&product.rows("2024-03-02")),
        vec![(1, "S".into()), (2, "S".into())]
    );
    assert!(watch.stop().success());
}

#[test]
fn sigterm_mid_landing_finishes_it_and_exits_0() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    rename_in(
        &product,
        "large.jsonl",
        &events("l", LARGE, "2024-03-01", "L"),
    );
    let (lock, staging) = (product_lock(&product), product.staging());
    // Still reading (lock held, nothing staged): the landing has a while to go.
    poll("the large input's landing to be reading", || {
        lock_holder(&lock) == Some(watch.pid()) && !staging.exists()
    });
    rename_in(&product, "next.jsonl", &events("n", 2, "2024-03-02", "N"));
    watch.signal("TERM");
    let status = watch.wait_exit();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(
        watch.outcomes(),
        pairs(&[("large.jsonl", "published")]),
        "the current landing finishes, the next does not start"
    );
    assert_eq!(product.rows("2024-03-01").len(), LARGE);
    assert_eq!(
        product.checkpoint("large.jsonl").unwrap()["accepted_rows"],
        LARGE
    );
    assert!(product.checkpoint("next.jsonl").is_none());
    assert_eq!(product.dates(), vec!["2024-03-01"]);
    assert!(!staging.exists(), "staging left behind");
    assert_eq!(logged(&product), pairs(&[("large.jsonl", "published")]));
}

#[test]
fn sigkill_mid_landing_then_restart_converges() {
    let lines = [
        events("l", LARGE / 2, "2024-03-01", "L"),
        events_from("m", LARGE / 2 + 1, LARGE / 2, "2024-03-02", "M"),
    ]
    .concat();
    let reference = Product::with_settings("");
    let input = rename_in(&reference, "large.jsonl", &lines);
    assert_eq!(reference.wharf(&["run", input.to_str().unwrap()]).code, 0);
    let published = reference.snapshot();

    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    rename_in(&product, "large.jsonl", &lines);
    let staging = product.staging();
    poll("the landing to stage its partitions", || {
        assert!(
            product.checkpoint("large.jsonl").is_none(),
            "the landing finished before staging was seen; make the input larger"
        );
        staging.exists()
    });
    watch.child.kill().unwrap(); // SIGKILL
    let status = watch.wait_exit();
    assert_eq!(status.signal(), Some(9));
    assert!(product.checkpoint("large.jsonl").is_none());

    let mut again = Watching::start(&product);
    again.wait_for("large.jsonl", "published");
    assert_eq!(
        product.snapshot(),
        published,
        "rows or Parquet bytes differ"
    );
    assert_eq!(
        read_rows(&product.publish.join("event_date=2024-03-02")),
        reference.rows("2024-03-02")
    );
    assert!(!staging.exists(), "staging left behind");
    assert_eq!(
        product.checkpoint("large.jsonl").unwrap()["accepted_rows"],
        LARGE
    );
    assert!(again.stop().success());
}

#[test]
fn busy_while_a_wharf_run_holds_the_lock_is_retried_and_lands_later() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    // The run's input lives outside the inbox, so the watch does not land it itself.
    let large = product.path().join("large.jsonl");
    fs::write(
        &large,
        events("l", LARGE, "2024-03-01", "L").join("\n") + "\n",
    )
    .unwrap();
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
        .args(["run", large.to_str().unwrap(), "--config"])
        .arg(&product.config)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = product_lock(&product);
    poll("wharf run to hold the lock", || {
        assert!(
            run.try_wait().unwrap().is_none(),
            "wharf run ended before its lock was seen"
        );
        lock_holder(&lock) == Some(run.id())
    });
    rename_in(&product, "small.jsonl", &events("s", 2, "2024-03-02", "S"));
    let busy = watch.wait_for("small.jsonl", "busy");
    assert!(busy["detail"].as_str().unwrap().contains("busy"), "{busy}");
    assert!(product.checkpoint("small.jsonl").is_none());
    assert!(run.wait().unwrap().success());
    watch.wait_for("small.jsonl", "published");
    assert_eq!(
        watch.outcomes(),
        pairs(&[("small.jsonl", "busy"), ("small.jsonl", "published")]),
        "one busy line per spell, then the landing"
    );
    assert_eq!(product.dates(), vec!["2024-03-01", "2024-03-02"]);
    assert_eq!(statuses(&product.rows("2024-03-02")).len(), 2);
    assert!(watch.stop().success());
}

#[test]
fn an_unchanged_landed_file_is_not_read_again_and_a_changed_one_lands() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    rename_in(&product, "a.jsonl", &events("a", 3, "2024-03-01", "A"));
    watch.wait_for("a.jsonl", "published");
    assert!(watch.stop().success());

    // A restart lists a.jsonl and leaves it: no landing, so no skipped record either.
    let mut watch = Watching::start(&product);
    rename_in(&product, "b.jsonl", &events("b", 2, "2024-03-02", "B"));
    watch.wait_for("b.jsonl", "published");
    assert_eq!(watch.outcomes(), pairs(&[("b.jsonl", "published")]));
    assert_eq!(
        logged(&product),
        pairs(&[("a.jsonl", "published"), ("b.jsonl", "published")])
    );

    // The same name, new bytes of the same size: it lands again.
    rename_in(&product, "a.jsonl", &events("a", 3, "2024-03-01", "Z"));
    watch.wait_for("a.jsonl", "published");
    let rows = statuses(&product.rows("2024-03-01"));
    assert_eq!(
        rows,
        vec![(1, "Z".into()), (2, "Z".into()), (3, "Z".into())]
    );
    assert_eq!(logged(&product).len(), 3);
    assert!(watch.stop().success());
}

#[test]
fn an_error_on_one_file_is_reported_and_watching_goes_on() {
    let product = Product::with_settings("");
    let checkpoints = product.state.join("checkpoints");
    fs::create_dir_all(&checkpoints).unwrap();
    let corrupt = checkpoints.join("bad.jsonl.json");
    fs::write(&corrupt, b"{ not json").unwrap();
    let mut watch = Watching::start(&product);
    rename_in(&product, "bad.jsonl", &events("x", 2, "2024-03-01", "X"));
    rename_in(&product, "good.jsonl", &events("g", 2, "2024-03-02", "G"));
    let error = watch.wait_for("bad.jsonl", "error");
    watch.wait_for("good.jsonl", "published");
    assert_eq!(error["exit_code"], 1);
    assert!(
        error["detail"].as_str().unwrap().contains("corrupt"),
        "{error}"
    );
    assert_eq!(
        fs::read(&corrupt).unwrap(),
        b"{ not json",
        "the checkpoint is left as it was"
    );
    assert_eq!(product.dates(), vec!["2024-03-02"]);
    assert!(watch.stop().success());
}

#[test]
fn a_second_watch_of_the_product_is_busy_and_touches_nothing() {
    let product = Product::with_settings("");
    let mut first = Watching::start(&product);
    rename_in(&product, "a.jsonl", &events("a", 2, "2024-03-01", "A"));
    first.wait_for("a.jsonl", "published");
    let before = product.tree("state");
    let second = product.wharf(&["watch", "--json"]);
    assert_eq!(second.code, 4, "{}", second.stderr);
    assert!(second.stderr.contains(".watch.lock"), "{}", second.stderr);
    assert_eq!(product.tree("state"), before);
    assert!(first.stop().success());
}

#[test]
fn a_set_lands_when_its_marker_appears_not_before() {
    let product = Product::with_settings("");
    let mut watch = Watching::start(&product);
    let set = product.path().join("inbox").join("2024-03-01");
    fs::create_dir(&set).unwrap();
    for (i, status) in ["A", "B"].iter().enumerate() {
        let mut text = events_from(status, i * 3 + 1, 3, "2024-03-01", status).join("\n");
        text.push('\n');
        fs::write(set.join(format!("part-{i:05}.jsonl")), text).unwrap();
    }
    // Two rescans with the parts in place and no marker: nothing lands.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(watch.outcomes().is_empty(), "{:?}", watch.outcomes());
    assert!(product.checkpoint("2024-03-01").is_none());
    fs::write(set.join("_SUCCESS"), b"").unwrap();
    let landed = watch.wait_for("2024-03-01", "published");
    assert_eq!(landed["parts"].as_array().unwrap().len(), 2);
    assert_eq!(product.rows("2024-03-01").len(), 6);
    assert_eq!(logged(&product), pairs(&[("2024-03-01", "published")]));
    assert!(watch.stop().success());
}

/// Listing the inbox and reading an input open them, and inotify reports opens: a
/// watcher woken by its own reads would rescan forever (the console's settle waited out
/// 30 s on that). Only a change wakes it.
#[test]
fn reading_the_inbox_does_not_wake_its_watcher_and_a_rename_does() {
    let product = Product::with_settings("");
    let inbox = product.path().join("inbox");
    let present = rename_in(
        &product,
        "01-present.jsonl",
        &events("p", 3, "2024-03-01", "A"),
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let _watcher = wharf::inbox::watch(&inbox, tx).unwrap();
    wharf::inbox::list(&inbox, "_SUCCESS").unwrap();
    fs::read(&present).unwrap();
    fs::metadata(&present).unwrap();
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(500))
            .is_err(),
        "a listing or a read woke the watcher"
    );
    rename_in(
        &product,
        "02-arrived.jsonl",
        &events("q", 3, "2024-03-02", "A"),
    );
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("a rename into the inbox wakes the watcher");
}

#[test]
fn poll_on_a_local_inbox_is_a_usage_error_naming_the_flag() {
    // A local inbox has no poll: the flag would be ignored, so it is refused instead.
    let product = Product::with_settings("");
    rename_in(&product, "a.jsonl", &events("a", 3, "2024-03-01", "A"));
    let mut child = product
        .cmd(&["watch", "--poll", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A watch that took the flag would run until stopped: give up on it, not hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("wharf watch --poll on a local inbox ran instead of refusing the flag");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ran = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--poll applies to an S3 inbox"), "{stderr}");
    assert!(product.checkpoint("a.jsonl").is_none(), "nothing landed");
}
