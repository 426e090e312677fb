//! A run log of years (2M lines, ~850 MB, as `watch` writes every 5 minutes): the console
//! reads none of it on the UI thread, and only its end on a reader thread, so the inbox
//! and the newest runs show at once.

use std::io::Write;
use std::time::Instant;

use wharf::config::Config;
use wharf::console::load::RUNS_SHOWN;
use wharf::console::{Console, Intent, theme};
use wharf::land::runlog::RunRecord;

use crate::harness::settle;
use crate::kit;

const LINES: usize = 2_000_000;

fn record(name: &str) -> RunRecord {
    RunRecord {
        time: "2024-03-01T10:05:00.000000Z".into(),
        product: "orders".into(),
        input_name: name.into(),
        input_sha256: "ab".repeat(32),
        action: "published".into(),
        reason: None,
        dates: vec!["2024-03-01".into()],
        counts: Default::default(),
        unranked: false,
        duration_ms: 12,
        tool_version: "0.1.0".into(),
        swaps: vec!["rename".into()],
        engine: "local".into(),
        engine_settings: Default::default(),
        table_version: None,
        parts: Vec::new(),
        run_id: String::new(),
        memory: None,
    }
}

/// Writes `LINES` runs, the last one named `newest-N`: the same bytes a block at a time,
/// so the 850 MB take seconds, not minutes.
fn write_log(folder: &kit::Product) -> std::path::PathBuf {
    let path = folder.state.join("runs.jsonl");
    std::fs::create_dir_all(&folder.state).expect("the test run log");
    let mut line = serde_json::to_vec(&record("old-batch.jsonl")).expect("the test run log");
    line.push(b'\n');
    let block: Vec<u8> = line.repeat(10_000);
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).expect("the test run log"));
    let newest = 5;
    for _ in 0..(LINES - newest) / 10_000 {
        file.write_all(&block).expect("the test run log");
    }
    file.write_all(&line.repeat((LINES - newest) % 10_000))
        .expect("the test run log");
    for i in 0..newest {
        let mut line =
            serde_json::to_vec(&record(&format!("newest-{i}.jsonl"))).expect("the test run log");
        line.push(b'\n');
        file.write_all(&line).expect("the test run log");
    }
    file.flush().expect("the test run log");
    path
}

#[test]
fn a_run_log_of_two_million_lines_is_read_from_its_end_off_the_ui_thread() {
    let folder = kit::Product::samples();
    let log = write_log(&folder);
    let size = std::fs::metadata(&log).expect("the test run log").len();
    assert!(size > 600 << 20, "the log is {size} bytes");
    let config = Config::load(&folder.config).expect("the test run log");

    let started = Instant::now();
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    let returned = started.elapsed();
    // Nothing was read on this thread: the reload is a reader thread's, still running
    // or just reported, and a key is answered meanwhile.
    assert!(console.app.history.runs.is_empty());
    assert!(console.busy() > 0);
    console.step(Intent::Help);
    assert!(console.app.help);
    console.step(Intent::Help);
    settle(&mut console);
    let loaded = started.elapsed();
    eprintln!(
        "2M-line run log ({size} bytes): Console::new returned in {returned:?}, inbox and history in {loaded:?}"
    );

    let runs = &console.app.history.runs;
    assert_eq!(runs.len(), RUNS_SHOWN);
    let names: Vec<_> = runs.iter().take(6).map(|r| r.input_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "newest-4.jsonl",
            "newest-3.jsonl",
            "newest-2.jsonl",
            "newest-1.jsonl",
            "newest-0.jsonl",
            "old-batch.jsonl"
        ]
    );
    assert!(!console.app.inbox.rows.is_empty(), "the inbox shows");

    // `history --limit` reads the end too: the same newest runs, oldest first.
    let newest =
        wharf::land::runlog::newest(&Config::load(&folder.config).expect("the test run log"), 3)
            .expect("the test run log");
    let names: Vec<_> = newest.iter().map(|r| r.input_name.as_str()).collect();
    assert_eq!(
        names,
        ["newest-4.jsonl", "newest-3.jsonl", "newest-2.jsonl"]
    );
}
