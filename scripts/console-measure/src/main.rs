//! Two figures for the console, in a release build:
//!
//! 1. time to first frame with 1,000 inputs in the inbox: from loading the config to the
//!    first frame drawn (reading the inbox, the checkpoints, the quarantine, the run log
//!    and the partitions, then one draw), median of 7 runs, with none and with all of the
//!    inputs landed before (their checkpoints read, their hashes then computed in the
//!    background);
//! 2. key latency while a large input is planned: the real `event_loop` runs with a test
//!    backend while the worker plans; another thread injects a key every 25-60 ms and
//!    notes the time; the latency is from the injection to the end of the first frame
//!    drawn after that key was handled.
//!
//! 3. with `ranked` after the file: the Ranked tab on a large input, alone in the process:
//!    the peak RSS once the plan is ready and once the tab is open, the time from the
//!    plan ready (the tab opened then) to the tab's first screen drawn, and the time each
//!    scrolling key and each key typed into the `/` filter takes to answer (handled and
//!    drawn).
//!
//! 4. with `changes PUBLISHED.jsonl` after the file: PUBLISHED is landed first (a day
//!    published), then the Changes tab of BIG against it: the plan's time, the time from
//!    the plan ready (the tab opened then) to the tab's first screen, the peak RSS, and
//!    the time each scrolling key, `f` and each key typed into `/` takes to answer.
//!
//! 5 and 6, `raw` and `lines`: the Raw tab on a set or a compressed input (`raw.rs`).
//!
//! `console-measure BIG.jsonl [ranked | changes PUBLISHED.jsonl | raw | lines]` (generate
//! them with `bench/gen_events.py`).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::config::Config;
use wharf::console::app::{Loading, PlanState};
use wharf::console::{Console, Incoming, Intent, Msg, event_loop, theme};

mod raw;

/// The sample product's config (inbox, roots and schema as the samples have them).
const CONFIG: &str = include_str!("../../../samples/wharf.toml");

fn product(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("inbox")).expect("inbox");
    std::fs::write(dir.join("wharf.toml"), CONFIG).expect("config");
    dir.join("wharf.toml")
}

fn main() {
    let big = std::env::args()
        .nth(1)
        .expect("usage: console-measure BIG.jsonl");
    let root = std::env::temp_dir().join(format!("wharf-measure-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mode = std::env::args().nth(2);
    if let Some(mode @ ("raw" | "lines")) = mode.as_deref() {
        match mode {
            "raw" => raw::raw(&root.join("raw"), Path::new(&big)),
            _ => raw::lines(&root.join("lines"), Path::new(&big)),
        }
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    if std::env::args().nth(2).as_deref() == Some("ranked") {
        ranked(&root.join("ranked"), Path::new(&big));
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    if std::env::args().nth(2).as_deref() == Some("changes") {
        let published = std::env::args()
            .nth(3)
            .expect("usage: console-measure BIG.jsonl changes PUBLISHED.jsonl");
        changes(
            &root.join("changes"),
            Path::new(&big),
            Path::new(&published),
        );
        let _ = std::fs::remove_dir_all(&root);
        return;
    }
    first_frame(&root.join("first-frame"));
    key_latency(&root.join("latency"), Path::new(&big));
    let _ = std::fs::remove_dir_all(&root);
}

fn first_frame(dir: &Path) {
    let config_path = product(dir);
    for i in 0..1000u64 {
        let path = dir.join(format!("inbox/batch-{i:04}.jsonl"));
        let line = format!(
            "{{\"event_id\":\"e{i}\",\"order_id\":{i},\"status\":\"PAID\",\"updated_at\":\"2024-03-01T10:00:00Z\"}}\n"
        );
        std::fs::write(&path, line.repeat(20)).expect("write");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i))
            .expect("mtime");
    }
    let measure = |label: &str| {
        let mut times: Vec<Duration> = (0..7)
            .map(|_| {
                let started = Instant::now();
                let config = Config::load(&config_path).expect("config");
                let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
                console.step(Msg::Resize(160, 48));
                let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
                console.draw(&mut terminal).expect("draw");
                let elapsed = started.elapsed();
                console.settle(Duration::from_secs(60));
                elapsed
            })
            .collect();
        times.sort();
        println!(
            "first frame, 1000 inputs, {label}: median {:.1} ms (min {:.1}, max {:.1}; 7 runs, 160x48)",
            ms(times[3]),
            ms(times[0]),
            ms(times[6])
        );
    };
    measure("none landed");
    let config = Config::load(&config_path).expect("config");
    for i in 0..1000u64 {
        let name = format!("batch-{i:04}.jsonl");
        let checkpoint = wharf::plan::Checkpoint {
            product: "orders".into(),
            input_name: name,
            input_sha256: "0".repeat(64),
            accepted_rows: 20,
            rejected_rows: 0,
            retries: 19,
            keys: 1,
            event_dates: vec!["2024-03-01".into()],
            publish_root: config.lake.publish_root().display().to_string(),
            published_at: "2024-03-01T00:00:00Z".into(),
            tool_version: "0.1.0".into(),
            table_version: None,
            parts: Vec::new(),
            object: None,
        };
        wharf::store::state::write_checkpoint(&config, &checkpoint).expect("checkpoint");
    }
    measure("all with a checkpoint");
}

fn key_latency(dir: &Path, big: &Path) {
    let config_path = product(dir);
    let input = dir.join("inbox/big.jsonl");
    if std::fs::hard_link(big, &input).is_err() {
        std::fs::copy(big, &input).expect("copy the big input");
    }
    let size = std::fs::metadata(&input).expect("size").len();
    let config = Config::load(&config_path).expect("config");
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    console.step(Msg::Resize(160, 48));
    let planning_started = Instant::now();
    let tx = console.sender();
    let (frame_tx, frame_rx) = mpsc::channel::<(Instant, bool)>();
    let injector = std::thread::spawn(move || {
        let key =
            |code| Incoming::Terminal(TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        let mut latencies = Vec::new();
        let mut pause = 25u64;
        loop {
            std::thread::sleep(Duration::from_millis(pause));
            pause = 25 + (pause * 7 + 13) % 36;
            let sent = Instant::now();
            tx.send(key(KeyCode::Char('?'))).expect("send");
            let (drawn, still_planning) = frame_rx.recv().expect("a frame");
            if !still_planning {
                break;
            }
            latencies.push(drawn - sent);
        }
        tx.send(key(KeyCode::Char('q'))).expect("quit");
        latencies
    });
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let mut frames = 0u64;
    let mut planned_at = None;
    event_loop(&mut terminal, &mut console, &mut |app, input| {
        frames += 1;
        let planning = matches!(app.inbox.plan, PlanState::Running { .. });
        if !planning && planned_at.is_none() {
            planned_at = Some(planning_started.elapsed());
        }
        if input {
            let _ = frame_tx.send((Instant::now(), planning));
        }
    })
    .expect("event loop");
    let mut latencies = injector.join().expect("injector");
    latencies.sort();
    let n = latencies.len();
    assert!(n > 0, "the plan finished before any key was injected");
    let plan = match &console.app.inbox.plan {
        PlanState::Ready(plan) => format!(
            "{} lines, {} keys, action {}",
            plan.counts.lines,
            plan.counts.keys,
            plan.action.code()
        ),
        other => format!("{other:?}"),
    };
    println!(
        "key latency while planning {:.0} MB ({plan}; planned in {:.1} s, {frames} frames): {n} keys, median {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        size as f64 / 1e6,
        planned_at.unwrap_or_default().as_secs_f64(),
        ms(latencies[n / 2]),
        ms(latencies[n * 95 / 100]),
        ms(latencies[n - 1])
    );
}

/// The process's peak and current resident memory, from `/proc/self/status`.
fn memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or("?".to_owned(), |kb| format!("{:.0} MiB", kb / 1024.0))
    };
    format!("peak {}, now {}", field("VmHWM:"), field("VmRSS:"))
}

fn ranked(dir: &Path, big: &Path) {
    let config_path = product(dir);
    // Under its own name: a `.gz` is read as one, a folder as a set.
    raw::into_inbox(dir, big);
    let config = Config::load(&config_path).expect("config");
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    console.step(Msg::Resize(160, 48));
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let started = Instant::now();
    // Until the plan is ready: the Ranked tab's data may still be on its way after it.
    let deadline = started + Duration::from_secs(900);
    while matches!(
        console.app.inbox.plan,
        PlanState::None | PlanState::Running { .. }
    ) {
        assert!(Instant::now() < deadline, "the plan did not finish");
        console.pump(Duration::from_millis(5));
    }
    let planned = started.elapsed();
    let PlanState::Ready(plan) = &console.app.inbox.plan else {
        panic!("no plan: {:?}", console.app.inbox.plan);
    };
    println!(
        "plan of {} lines, {} keys: {:.2} s; memory {}",
        plan.counts.lines,
        plan.counts.keys,
        planned.as_secs_f64(),
        memory()
    );
    // From the inbox list, the previous pane is the Ranked tab (no Raw tab on the way).
    let opened = started + planned;
    console.step(Msg::Intent(Intent::PrevPane));
    assert!(
        console.settle(Duration::from_secs(900)),
        "the ranking did not finish"
    );
    console.draw(&mut terminal).expect("draw");
    let first = opened.elapsed();
    assert!(
        matches!(console.app.ranked.data, Loading::Ready(_))
            && !console.app.ranked.window.is_empty(),
        "the Ranked tab shows no rows"
    );
    println!(
        "Ranked tab: first screen {:.2} s after the plan was ready, {} rows; memory {}",
        first.as_secs_f64(),
        console.app.ranked.rows.len(),
        memory()
    );
    let mut answer = |console: &mut Console, intent: Intent| {
        let sent = Instant::now();
        console.step(Msg::Intent(intent));
        console.draw(&mut terminal).expect("draw");
        sent.elapsed()
    };
    let scrolling = scroll(&mut console, &mut answer);
    summary("Ranked scrolling (j, PageDown, G, g)", scrolling);
    let mut filtering = vec![answer(&mut console, Intent::Filter)];
    for c in "1234".chars().chain(['x']) {
        filtering.push(answer(&mut console, Intent::Input(c)));
    }
    for _ in 0..5 {
        filtering.push(answer(&mut console, Intent::Backspace));
    }
    for c in "99".chars() {
        filtering.push(answer(&mut console, Intent::Input(c)));
    }
    filtering.push(answer(&mut console, Intent::Submit));
    let each: Vec<String> = filtering.iter().map(|d| format!("{:.1}", ms(*d))).collect();
    println!(
        "Ranked `/` filter, each key in turn (ms): {}",
        each.join(" ")
    );
    summary("Ranked `/` filter (each key typed)", filtering);
    println!("at the end: memory {}", memory());
}

/// Links (or copies) `from` into the product's inbox as `name`.
fn into_inbox(dir: &Path, from: &Path, name: &str) -> PathBuf {
    let input = dir.join("inbox").join(name);
    if std::fs::hard_link(from, &input).is_err() {
        std::fs::copy(from, &input).expect("copy an input");
    }
    input
}

fn changes(dir: &Path, big: &Path, published: &Path) {
    let config_path = product(dir);
    let config = Config::load(&config_path).expect("config");
    // The day as published: landed by the core before the console opens.
    let first = into_inbox(dir, published, "a-published.jsonl");
    let mut engine = wharf::engine::open(&config).expect("engine");
    let options = wharf::plan::DecideOptions {
        allow_shrink: true,
        ..Default::default()
    };
    wharf::land::run(&config, engine.as_mut(), &first, options, &mut |_| true)
        .expect("land the published day");
    drop(engine);
    into_inbox(dir, big, "b-correction.jsonl");
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    console.step(Msg::Resize(160, 48));
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    assert!(console.settle(Duration::from_secs(900)), "the first plan");
    console.step(Msg::Intent(Intent::Down));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(900);
    while matches!(
        console.app.inbox.plan,
        PlanState::None | PlanState::Running { .. }
    ) {
        assert!(Instant::now() < deadline, "the plan did not finish");
        console.pump(Duration::from_millis(5));
    }
    let planned = started.elapsed();
    println!(
        "plan of the correction: {:.2} s; memory {}",
        planned.as_secs_f64(),
        memory()
    );
    let opened = Instant::now();
    console.step(Msg::Intent(Intent::PrevPane));
    assert!(
        console.settle(Duration::from_secs(900)),
        "the diff did not finish"
    );
    console.draw(&mut terminal).expect("draw");
    let first = opened.elapsed();
    let Loading::Ready(changes) = &console.app.changes.data else {
        panic!(
            "the Changes tab is not ready: {:?}",
            console.app.changes.data
        );
    };
    let counts: Vec<String> = changes
        .dates
        .iter()
        .map(|d| {
            format!(
                "{} +{} ~{} -{} ={}",
                d.event_date, d.inserted, d.updated, d.removed, d.unchanged
            )
        })
        .collect();
    println!(
        "Changes tab: first screen {:.2} s after the plan was ready, {} changes ({}); memory {}",
        first.as_secs_f64(),
        changes.items.len(),
        counts.join(", "),
        memory()
    );
    let mut answer = |console: &mut Console, intent: Intent| {
        let sent = Instant::now();
        console.step(Msg::Intent(intent));
        console.draw(&mut terminal).expect("draw");
        sent.elapsed()
    };
    let scrolling = scroll(&mut console, &mut answer);
    summary("Changes scrolling (j, PageDown, G, g)", scrolling);
    let kinds: Vec<Duration> = (0..8)
        .map(|_| answer(&mut console, Intent::NextShown))
        .collect();
    summary("Changes `f` (each kind in turn, twice)", kinds);
    let mut filtering = vec![answer(&mut console, Intent::Filter)];
    for c in "1234".chars().chain(['x']) {
        filtering.push(answer(&mut console, Intent::Input(c)));
    }
    for _ in 0..5 {
        filtering.push(answer(&mut console, Intent::Backspace));
    }
    filtering.push(answer(&mut console, Intent::Submit));
    let each: Vec<String> = filtering.iter().map(|d| format!("{:.1}", ms(*d))).collect();
    println!(
        "Changes `/` filter, each key in turn (ms): {}",
        each.join(" ")
    );
    summary("Changes `/` filter (each key typed)", filtering);
    println!("at the end: memory {}", memory());
}

/// 300 scrolling keys (j, PageDown, G, g), each answered by `answer`.
fn scroll(
    console: &mut Console,
    answer: &mut dyn FnMut(&mut Console, Intent) -> Duration,
) -> Vec<Duration> {
    (0..300)
        .map(|i| {
            let intent = match i % 30 {
                0..=19 => Intent::Down,
                20..=27 => Intent::PageDown,
                28 => Intent::Bottom,
                _ => Intent::Top,
            };
            answer(console, intent)
        })
        .collect()
}

/// The median, p95 and max of `times`.
fn summary(label: &str, mut times: Vec<Duration>) {
    times.sort();
    let n = times.len();
    println!(
        "{label}: {n} keys, median {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        ms(times[n / 2]),
        ms(times[n * 95 / 100]),
        ms(times[n - 1])
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
