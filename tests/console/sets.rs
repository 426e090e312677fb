//! A set of parts and compressed inputs in the Raw and Ranked tabs (CONTRACT.md §11): the
//! part of the line under the cursor, `n` / `N` across parts, `part:line` in the Ranked
//! tab and in the lines retries and conflicts repeat, `Enter` from a Ranked row or a
//! repeat to its line, `.gz` / `.zst` inputs browsed through their decoders, and a
//! landed set's reject shown from its own part.

use std::io::Write;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::console::app::{Loading, Pane};
use wharf::console::lines::LineIndex;
use wharf::console::{Console, Intent};

use crate::fixture;
use crate::harness::Product;

/// The courier burst's lines (samples/inbox/02-courier-burst.jsonl).
fn courier() -> Vec<String> {
    let text = std::fs::read_to_string(fixture::samples_dir().join("inbox/02-courier-burst.jsonl"))
        .expect("the sample");
    text.lines().map(str::to_owned).collect()
}

/// Writes the set `name` into the inbox: `parts` (name, stored bytes), then its marker.
fn write_set(p: &Product, name: &str, parts: &[(&str, Vec<u8>)]) {
    let dir = p.path("inbox").join(name);
    std::fs::create_dir(&dir).expect("the set's folder");
    for (part, bytes) in parts {
        std::fs::write(dir.join(part), bytes).expect("a part");
    }
    fixture::write_input(p.folder.path(), &format!("{name}/_SUCCESS"), b"", 10);
}

/// The courier burst as two parts: its lines 1-4 and a malformed line without its `\n`,
/// then a retry of its line 3 and its lines 5-11. Global lines 1-5 are part 0's, 6-13
/// part 1's; the plan's findings are lines 5, 10, 11 and 13.
fn courier_parts() -> [Vec<u8>; 2] {
    let c = courier();
    let first = format!("{}\n{{\"event_id\":\"x1\"", c[..4].join("\n"));
    let second = format!("{}\n{}\n", c[2], c[4..].join("\n"));
    [first.into_bytes(), second.into_bytes()]
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

fn draw(console: &Console, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    console.draw(&mut terminal).expect("draw");
    terminal.backend().to_string()
}

fn indexed(p: &Product) -> std::sync::Arc<LineIndex> {
    match &p.console.app.raw.index {
        Loading::Ready(index) => index.clone(),
        other => panic!("the Raw tab's lines are not indexed: {other:?}"),
    }
}

/// The screen's row holding the cursor (`›` in the Raw tab's body).
fn cursor_row(screen: &str) -> &str {
    screen
        .lines()
        .filter(|l| l.contains('›'))
        .nth(1)
        .unwrap_or_else(|| panic!("no cursor in the detail pane: {screen}"))
}

/// The Raw tab's line under the cursor, as read from the input.
fn current_text(p: &Product) -> String {
    let raw = &p.console.app.raw;
    let i = (raw.cursor - raw.window_start) as usize;
    raw.window[i].text.clone()
}

#[test]
fn the_raw_tab_browses_a_set_part_by_part_and_n_crosses_parts() {
    let mut p = Product::samples();
    let [first, second] = courier_parts();
    write_set(
        &p,
        "04-courier-set",
        &[("part-00000.jsonl", first), ("part-00001.jsonl", second)],
    );
    p.step_and_draw(Intent::Reload);
    p.select("04-courier-set");
    let screen = p.steps([Intent::NextPane, Intent::NextPane]);
    assert_eq!(p.console.app.pane, Pane::Raw);
    let index = indexed(&p);
    assert!(index.is_set());
    assert_eq!(index.lines(), 13, "{screen}");
    assert_eq!(index.locate(5), (Some("part-00000.jsonl"), 5));
    assert_eq!(index.locate(6), (Some("part-00001.jsonl"), 1));
    assert!(
        screen.contains("part-00000.jsonl (part 1 of 2) · line 1 of 5"),
        "{screen}"
    );
    assert!(screen.contains(" part-00000.jsonl:1 · "), "{screen}");
    assert!(current_text(&p).contains("\"event_id\":\"b1\""));

    // Down into the second part: its name and its own line numbers.
    let screen = p.steps([Intent::Down; 6]);
    assert_eq!(p.console.app.raw.cursor, 7);
    assert!(
        screen.contains("part-00001.jsonl (part 2 of 2) · line 2 of 8"),
        "{screen}"
    );
    assert!(screen.contains(" part-00001.jsonl:2 · "), "{screen}");
    assert!(current_text(&p).contains("\"event_id\":\"b4\""));
    assert!(
        cursor_row(&screen).contains("\"event_id\":\"b4\""),
        "{screen}"
    );

    // n / N: the plan's findings, across the parts' boundary both ways.
    let findings: Vec<u64> = p
        .console
        .app
        .plan()
        .expect("a plan")
        .findings
        .iter()
        .map(|f| f.line)
        .collect();
    assert_eq!(findings, [5, 10, 11, 13]);
    p.steps([Intent::Top]);
    let screen = p.step_and_draw(Intent::NextMark);
    assert_eq!(p.console.app.raw.cursor, 5);
    assert!(screen.contains(" part-00000.jsonl:5 · "), "{screen}");
    assert!(cursor_row(&screen).contains("malformed_json"), "{screen}");
    assert_eq!(
        current_text(&p),
        "{\"event_id\":\"x1\"",
        "the part's last line, no `\\n`"
    );
    let screen = p.step_and_draw(Intent::NextMark);
    assert_eq!(p.console.app.raw.cursor, 10);
    assert!(screen.contains(" part-00001.jsonl:5 · "), "{screen}");
    assert!(current_text(&p).contains("\"event_id\":\"b6\""));
    let screen = p.step_and_draw(Intent::PrevMark);
    assert_eq!(p.console.app.raw.cursor, 5);
    assert!(
        screen.contains("part-00000.jsonl (part 1 of 2) · line 5 of 5"),
        "{screen}"
    );

    // Wide enough, every line names its part.
    let wide = draw(&p.console, 200, 40);
    assert!(
        wide.contains("part-00000.jsonl:5 │ ✗ malformed_json"),
        "{wide}"
    );
    assert!(
        wide.contains("part-00001.jsonl:1 │ ↺ retry of part-00000.jsonl:3"),
        "{wide}"
    );

    // Part 1's first line is an identical retry of part 0's third; Enter goes there.
    let screen = p.step_and_draw(Intent::Down);
    assert_eq!(p.console.app.raw.cursor, 6);
    assert!(
        screen.contains(" part-00001.jsonl:1 · 132 bytes · ↺ retry of part-00000.jsonl:3 "),
        "{screen}"
    );
    let screen = p.step_and_draw(Intent::Open);
    assert_eq!(p.console.app.raw.cursor, 3);
    assert!(screen.contains(" part-00000.jsonl:3 · "), "{screen}");
    assert!(current_text(&p).contains("\"event_id\":\"b2\""));
}

#[test]
fn the_ranked_tab_shows_a_sets_lines_as_part_and_line() {
    let mut p = Product::samples();
    let [first, second] = courier_parts();
    write_set(
        &p,
        "04-courier-set",
        &[("part-00000.jsonl", first), ("part-00001.jsonl", second)],
    );
    p.step_and_draw(Intent::Reload);
    p.select("04-courier-set");
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert_eq!(p.console.app.pane, Pane::Ranked);
    let window = &p.console.app.ranked.window;
    let lines: Vec<u64> = window.iter().map(|r| r.line).collect();
    // Key 201: b3 (line 2) kept over b2 (3) and b1 (1), then the retries of 2 and 3.
    assert_eq!(lines[..5], [2, 3, 1, 4, 6], "{screen}");
    assert_eq!(window[4].event_id, "b2");
    assert!(
        screen.contains("part-00000.jsonl:2 rank 1 (would publ"),
        "{screen}"
    );
    let wide = draw(&p.console, 240, 40);
    assert!(
        wide.contains("part-00000.jsonl:2 b3         status=DELIVERED"),
        "{wide}"
    );
    assert!(
        wide.contains("part-00001.jsonl:1 b2         status=IN_TRANSIT"),
        "{wide}"
    );
    assert!(
        wide.contains("identical retry of part-00000.jsonl:3"),
        "{wide}"
    );
    // Key 205's only event is part 1's seventh line.
    assert!(
        wide.contains("part-00001.jsonl:7 b8         status=PENDING"),
        "{wide}"
    );

    // Enter on the retry in part 1: the Raw tab on that line of that part.
    p.steps([Intent::Down; 4]);
    assert_eq!(p.console.app.ranked.cursor, 4);
    let screen = p.step_and_draw(Intent::Open);
    assert_eq!(p.console.app.pane, Pane::Raw);
    assert_eq!(p.console.app.raw.cursor, 6);
    assert!(
        screen.contains("part-00001.jsonl (part 2 of 2) · line 1 of 8"),
        "{screen}"
    );
    assert!(current_text(&p).contains("\"event_id\":\"b2\""));
}

/// A single `.gz` file browses as its plain text; a set of a `.gz` and a `.zst` part
/// names a conflict across them by part and line.
#[test]
fn compressed_inputs_are_browsable() {
    let mut p = Product::samples();
    let plain =
        std::fs::read(fixture::samples_dir().join("inbox/02-courier-burst.jsonl")).expect("sample");
    fixture::write_input(p.folder.path(), "05-courier.jsonl.gz", &gzip(&plain), 11);
    p.step_and_draw(Intent::Reload);
    p.select("05-courier.jsonl.gz");
    let screen = p.steps([Intent::NextPane, Intent::NextPane]);
    let index = indexed(&p);
    assert!(index.compressed() && !index.is_set());
    assert_eq!(index.lines(), 11, "{screen}");
    assert!(screen.contains("lines 1-11 of 11"), "{screen}");
    assert!(screen.contains("retry of line 2"), "{screen}");
    let screen = p.step_and_draw(Intent::Bottom);
    assert_eq!(current_text(&p), "not json at all");
    assert!(cursor_row(&screen).contains("malformed_json"), "{screen}");
    assert!(screen.contains(" line 11 · "), "{screen}");

    let c = courier();
    let conflict = c[0].replace("PICKED_UP", "LOST");
    let parts = [
        (
            "a.jsonl.gz",
            gzip(format!("{}\n", c[..3].join("\n")).as_bytes()),
        ),
        (
            "b.zst",
            zstd::encode_all(format!("{conflict}\n").as_bytes(), 3).expect("zstd"),
        ),
    ];
    write_set(&p, "06-packed-set", &parts);
    p.step_and_draw(Intent::Reload);
    while p.console.app.pane != Pane::List {
        p.step_and_draw(Intent::Back);
    }
    p.select("06-packed-set");
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::Bottom]);
    assert_eq!(indexed(&p).lines(), 4, "{screen}");
    assert!(
        screen.contains("b.zst (part 2 of 2) · line 1 of 1"),
        "{screen}"
    );
    assert!(screen.contains("conflict with a.jsonl.gz:1"), "{screen}");
    assert!(current_text(&p).contains("LOST"));
    let screen = p.steps([Intent::NextPane]);
    assert!(
        screen.contains("   b.zst:1 conflict with a.jsonl.gz"),
        "{screen}"
    );
    let wide = draw(&p.console, 200, 40);
    assert!(wide.contains("b.zst:1 b1         status=LOST"), "{wide}");
    assert!(
        wide.contains("conflict with a.jsonl.gz:1 (breach)"),
        "{wide}"
    );
    let conflict = p
        .console
        .app
        .ranked
        .window
        .iter()
        .find(|r| r.event_id == "b1" && r.rank.is_none());
    assert_eq!(
        conflict.map(|r| r.line),
        Some(4),
        "the zstd part's line, through the set"
    );
}

/// A landed set's quarantine rows carry their part: the raw line behind a reject in the
/// second part is that part's line, read back from the inbox.
#[test]
fn a_sets_reject_shows_its_own_parts_line() {
    let mut p = Product::samples();
    let [first, second] = courier_parts();
    write_set(
        &p,
        "04-courier-set",
        &[("part-00000.jsonl", first), ("part-00001.jsonl", second)],
    );
    p.step_and_draw(Intent::Reload);
    p.select("04-courier-set");
    p.land_selected();
    p.steps([
        Intent::Show(wharf::console::app::View::Quarantine),
        Intent::Open,
    ]);
    let rejects = p
        .console
        .app
        .quarantine
        .rejects
        .as_ref()
        .expect("the set's rejects");
    let at: Vec<(Option<&str>, u64)> = rejects
        .records
        .iter()
        .map(|r| (r.file.as_deref(), r.line))
        .collect();
    let (a, b) = (Some("part-00000.jsonl"), Some("part-00001.jsonl"));
    assert_eq!(at, [(a, 5), (b, 5), (b, 6), (b, 8)]);
    let screen = p.steps([Intent::Down, Intent::Open]);
    let rejects = p
        .console
        .app
        .quarantine
        .rejects
        .as_ref()
        .expect("the set's rejects");
    let Some(Loading::Ready(shown)) = &rejects.raw else {
        panic!("no raw line: {screen}");
    };
    assert!(shown.contains("\"event_id\":\"b6\""), "{shown}");
    assert!(
        screen.contains("line part-00001.jsonl:5 of 04-courier-set"),
        "{screen}"
    );
}
