//! 5. with `raw` after the input (a `.jsonl`, `.gz` or `.zst` file, or a closed set's
//!    folder): the Raw tab alone in the console: the time to index its lines once the
//!    plan is ready, then the time each jump takes until the window it needs is read and
//!    drawn (`G` to the last line, `g` back, `n` / `N`, PageDown), with the memory around
//!    them.
//!
//! 6. with `lines` after the input: the line index and a read of the last line's window
//!    alone in the process, so the peak memory is theirs.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::config::Config;
use wharf::console::app::{Loading, PlanState};
use wharf::console::lines::LineIndex;
use wharf::console::{Console, Intent, Msg, theme};

use super::{memory, ms, product};

/// The input at `from` linked (or copied) into the inbox of the product at `dir`, with
/// its own name: a set as a folder of its parts and marker.
pub fn into_inbox(dir: &Path, from: &Path) -> String {
    let name = from
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let to = dir.join("inbox").join(&name);
    let link = |from: &Path, to: &Path| {
        if std::fs::hard_link(from, to).is_err() {
            std::fs::copy(from, to).expect("copy the input");
        }
    };
    if from.is_dir() {
        std::fs::create_dir(&to).expect("the set's folder");
        let mut entries: Vec<_> = std::fs::read_dir(from)
            .expect("the set")
            .flatten()
            .collect();
        // The marker last, as a producer writes it.
        entries.sort_by_key(|e| e.file_name() == "_SUCCESS");
        for entry in entries {
            link(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        link(from, &to);
    }
    name
}

pub fn raw(dir: &Path, big: &Path) {
    let config_path = product(dir);
    into_inbox(dir, big);
    let config = Config::load(&config_path).expect("config");
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    console.step(Msg::Resize(160, 48));
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    let started = Instant::now();
    while matches!(
        console.app.inbox.plan,
        PlanState::None | PlanState::Running { .. }
    ) {
        assert!(started.elapsed() < Duration::from_secs(900), "no plan");
        console.pump(Duration::from_millis(5));
    }
    let PlanState::Ready(plan) = &console.app.inbox.plan else {
        panic!("no plan: {:?}", console.app.inbox.plan);
    };
    println!(
        "plan of {} lines: {:.2} s; memory {}",
        plan.counts.lines,
        started.elapsed().as_secs_f64(),
        memory()
    );
    let opened = Instant::now();
    for intent in [Intent::NextPane, Intent::NextPane] {
        console.step(Msg::Intent(intent));
    }
    assert!(console.settle(Duration::from_secs(900)), "no index");
    console.draw(&mut terminal).expect("draw");
    let Loading::Ready(index) = &console.app.raw.index else {
        panic!("the lines were not indexed: {:?}", console.app.raw.index);
    };
    println!(
        "Raw tab: {} lines in {} part(s){} indexed, first screen {:.2} s; memory {}",
        index.lines(),
        index.parts().len(),
        if index.compressed() {
            ", compressed,"
        } else {
            ""
        },
        opened.elapsed().as_secs_f64(),
        memory()
    );
    let mut answer = |console: &mut Console, intent: Intent| {
        let sent = Instant::now();
        console.step(Msg::Intent(intent));
        assert!(console.settle(Duration::from_secs(900)), "no window");
        console.draw(&mut terminal).expect("draw");
        (sent.elapsed(), console.app.raw.cursor)
    };
    let keys = [
        ("G", Intent::Bottom),
        ("g", Intent::Top),
        ("G", Intent::Bottom),
        ("N", Intent::PrevMark),
        ("g", Intent::Top),
        ("n", Intent::NextMark),
        ("PageDown", Intent::PageDown),
        ("PageDown", Intent::PageDown),
    ];
    for (key, intent) in keys {
        let (took, cursor) = answer(&mut console, intent);
        println!(
            "  {key:<8} to line {cursor}: {:.1} ms; memory {}",
            ms(took),
            memory()
        );
    }
}

pub fn lines(dir: &Path, big: &Path) {
    let started = Instant::now();
    let index = LineIndex::build(big, "_SUCCESS", &mut |_, _| true).expect("index");
    println!(
        "index of {} lines: {:.2} s; memory {}",
        index.lines(),
        started.elapsed().as_secs_f64(),
        memory()
    );
    let config = Config::load(&product(dir)).expect("config");
    for _ in 0..3 {
        let started = Instant::now();
        let last = index.lines().saturating_sub(2047).max(1);
        let window = wharf::console::raw::read_window(
            &index,
            last,
            2048,
            &config.schema,
            config.max_line_bytes,
        )
        .expect("the last window");
        println!(
            "window of {} lines ending at line {}: {:.1} ms; memory {}",
            window.len(),
            window.last().map_or(0, |l| l.number),
            ms(started.elapsed()),
            memory()
        );
    }
}
