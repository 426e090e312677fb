//! Every screen of the console as an insta snapshot, from a `TestBackend`, at 80×24 and
//! 160×48. The screens come from driving the real [`Console`] with intents over a copy of
//! the samples (fixed modification times); the only edits are to what is inherently
//! time-dependent (a landing's duration, the progress of a landing caught mid-way, the
//! spinner's frame), and the filters blank the run log's clock times.

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::app::{Dialog, Finished, Task, View};
use super::msg::{Intent, Msg};
use super::runtime::Console;
use super::theme;
use crate::config::Config;
use crate::engine::Progress;

use super::fixture;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];
/// The sizes the screens added since are drawn at.
const NEWER_SIZES: [(u16, u16); 2] = [(80, 24), (140, 45)];

/// The screen as text.
pub fn screen(console: &Console, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    console.draw(&mut terminal).expect("draw");
    terminal.backend().to_string()
}

/// Snapshots the current screen at both sizes as `name_80x24` and `name_160x48` (and
/// draws it at tiny sizes, which must not panic).
fn snap(console: &mut Console, name: &str) {
    snap_at(console, name, SIZES);
}

/// Snapshots the current screen as `name_WxH` at each of `sizes`.
fn snap_at(console: &mut Console, name: &str, sizes: [(u16, u16); 2]) {
    for (width, height) in [(1, 1), (24, 6), (40, 12)] {
        console.step(Msg::Resize(width, height));
        screen(console, width, height);
    }
    for (width, height) in sizes {
        console.step(Msg::Resize(width, height));
        let text = screen(console, width, height);
        // The run log's clock times, trash generation ids and durations; on these screens
        // no input timestamp has the run log's `YYYY-MM-DD hh:mm:ss` form.
        let clock = name.starts_with("history") || name.contains("restore");
        // (A duration's width varies, so the padding after it goes too.)
        let mut filters = vec![(r"\d+ ms +", "n ms "), (r"\d+ ms", "n ms")];
        if clock {
            filters.push((r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "YYYY-MM-DD hh:mm:ss"));
            filters.push((r"\d{8}T\d{6}\.\d{6}Z", "YYYYMMDDThhmmss.ffffffZ"));
            // A landing's run id is random; a narrow screen may cut it short.
            filters.push((r"run [0-9a-f]{1,8}(-[0-9a-f-]*)?…?", "run RUN-ID"));
        }
        // When an input landed, to the minute (a plan of landed bytes, §5.4).
        filters.push((
            r"\d{4}-\d\d-\d\d \d\d:\d\d([^:\d]|:[^\d]|$)",
            "YYYY-MM-DD hh:mm$1",
        ));
        insta::with_settings!({
            filters => filters,
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!(format!("{name}_{width}x{height}"), text);
        });
    }
}

fn open(dir: &Path) -> Console {
    let config = Config::load(&fixture::copy_samples(dir)).expect("sample config");
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    settle(&mut console);
    console
}

fn settle(console: &mut Console) {
    assert!(
        console.settle(std::time::Duration::from_secs(20)),
        "workers did not finish"
    );
}

fn steps(console: &mut Console, intents: impl IntoIterator<Item = Intent>) {
    for intent in intents {
        console.step(intent);
        settle(console);
    }
}

#[test]
fn every_screen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = open(dir.path());
    snap(&mut c, "inbox_plan_new");
    // Every key of a new date is inserted.
    steps(&mut c, [Intent::PrevPane]);
    snap_at(&mut c, "changes_new", NEWER_SIZES);
    let back_to_the_list = [
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::Back,
    ];
    steps(&mut c, back_to_the_list);
    steps(&mut c, [Intent::Down]);
    snap(&mut c, "inbox_plan_rejects");
    steps(
        &mut c,
        [Intent::NextPane, Intent::NextPane, Intent::NextMark],
    );
    snap(&mut c, "raw");
    steps(&mut c, [Intent::NextPane, Intent::Down]);
    snap(&mut c, "ranked");
    steps(
        &mut c,
        [
            Intent::Filter,
            Intent::Input('2'),
            Intent::Input('0'),
            Intent::Input('2'),
        ],
    );
    snap(&mut c, "ranked_filter");
    let back_to_plan = [
        Intent::Back,
        Intent::PrevPane,
        Intent::PrevPane,
        Intent::Back,
    ];
    steps(
        &mut c,
        back_to_plan.into_iter().chain([Intent::Top, Intent::Run]),
    );
    snap(&mut c, "confirm_run");

    // A landing caught reading, then its result (its duration pinned).
    let task = Task {
        id: 0,
        title: "landing 01-orders-2024-03-01.jsonl".into(),
        progress: None,
    };
    let reading = Progress::Reading {
        bytes: 200,
        total: 434,
    };
    c.app.task = Some(Task {
        progress: Some(reading),
        ..task.clone()
    });
    let dialog = c.app.dialog.take();
    snap(&mut c, "landing_progress");
    let date = crate::contract::Date::parse("2024-03-01").expect("date");
    c.app.task = Some(Task {
        progress: Some(Progress::Swapping { date }),
        ..task
    });
    // The spinner's frame counts the ticks so far, which depend on how long work took.
    c.app.ticks = 0;
    snap(&mut c, "landing_swap");
    c.app.task = None;
    c.app.dialog = dialog;
    steps(&mut c, [Intent::Confirm]);
    if let Some(Dialog::Result(Finished::Landed { duration_ms, .. })) = &mut c.app.dialog {
        *duration_ms = 7;
    }
    snap(&mut c, "landing_result");

    steps(&mut c, [Intent::Back, Intent::Bottom, Intent::Run]);
    snap(&mut c, "refusal");
    steps(&mut c, [Intent::Confirm]);
    snap(&mut c, "refusal_result");

    fixture::write_input(
        dir.path(),
        "04-late-fix.jsonl",
        fixture::LATE_FIX.as_bytes(),
        9,
    );
    steps(&mut c, [Intent::Back, Intent::Reload, Intent::Bottom]);
    // The late fix's two hours beside the whole published day.
    snap_at(&mut c, "day_shrink", NEWER_SIZES);
    // The late fix against the landed day: one order refunded, the others gone.
    steps(&mut c, [Intent::PrevPane]);
    snap_at(&mut c, "changes_shrink", NEWER_SIZES);
    steps(
        &mut c,
        [Intent::NextShown, Intent::NextShown, Intent::NextShown],
    );
    snap_at(&mut c, "changes_removed_only", NEWER_SIZES);
    steps(&mut c, [Intent::NextShown]);
    steps(&mut c, back_to_the_list.into_iter().chain([Intent::Run]));
    steps(&mut c, "shr".chars().map(Intent::Input));
    snap(&mut c, "confirm_shrink");
    steps(
        &mut c,
        "ink"
            .chars()
            .map(Intent::Input)
            .chain([Intent::Submit, Intent::Back]),
    );

    steps(&mut c, [Intent::Show(View::Quarantine)]);
    snap(&mut c, "quarantine");
    steps(&mut c, [Intent::Down, Intent::Open]);
    snap(&mut c, "quarantine_rejects");
    steps(&mut c, [Intent::Open]);
    snap(&mut c, "quarantine_raw_line");

    steps(
        &mut c,
        [Intent::Back, Intent::Back, Intent::Show(View::History)],
    );
    snap(&mut c, "history");
    // The late fix's landing: what it changed against the generation it replaced; then
    // the first landing's, a new date.
    steps(&mut c, [Intent::Open]);
    snap_at(&mut c, "history_diff", NEWER_SIZES);
    steps(&mut c, [Intent::Back, Intent::Bottom, Intent::Open]);
    snap_at(&mut c, "history_diff_new", NEWER_SIZES);
    steps(&mut c, [Intent::Back, Intent::Top]);
    steps(&mut c, [Intent::NextPane, Intent::Run]);
    snap(&mut c, "confirm_restore");
    steps(&mut c, [Intent::Confirm]);
    snap(&mut c, "restore_result");

    steps(
        &mut c,
        [Intent::Back, Intent::Show(View::Inbox), Intent::Help],
    );
    snap(&mut c, "help");
    steps(&mut c, [Intent::Help]);
    rerun_scene(&mut c, dir.path());
}

/// Sets every landing time the manifest and the checkpoints record to one fixed instant:
/// a rerun plan names them, and a line wrapped inside one would escape the filters.
fn pin_landing_times(state: &Path) {
    let mut documents = vec![state.join("partitions.json")];
    for entry in std::fs::read_dir(state.join("checkpoints")).expect("checkpoints") {
        documents.push(entry.expect("an entry").path());
    }
    for path in documents {
        let text = std::fs::read_to_string(&path).expect("a state document");
        let mut value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        pin(&mut value);
        let pinned = serde_json::to_vec_pretty(&value).expect("encode");
        std::fs::write(&path, pinned).expect("write it back");
    }
}

/// Every `published_at` in `value` set to `2026-12-01T10:02:00.000000Z`.
fn pin(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                match key.as_str() {
                    "published_at" => *inner = "2026-12-01T10:02:00.000000Z".into(),
                    _ => pin(inner),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(pin),
        _ => {}
    }
}

/// A restatement of the first input's day lands (the first is superseded), then `R` on
/// the first input: its rerun plan, and the confirmation that asks for its name.
fn rerun_scene(c: &mut Console, dir: &Path) {
    let first = dir.join("inbox/01-orders-2024-03-01.jsonl");
    let mut again = std::fs::read(&first).expect("the first input");
    again.push(b'\n'); // other bytes, the same rows
    fixture::write_input(dir, "05-restated.jsonl", &again, 10);
    steps(
        c,
        [Intent::Reload, Intent::Bottom, Intent::Run, Intent::Confirm],
    );
    pin_landing_times(&dir.join("state/orders"));
    steps(
        c,
        [Intent::Back, Intent::Reload, Intent::Top, Intent::Rerun],
    );
    let Some(plan) = c.app.plan() else {
        panic!("no rerun plan: {:?}", c.app.inbox.plan);
    };
    assert!(plan.reland, "{plan:?}");
    snap_at(c, "rerun_plan", NEWER_SIZES);
    steps(c, [Intent::Run]);
    steps(c, "01-orders".chars().map(Intent::Input));
    snap_at(c, "confirm_reland", NEWER_SIZES);
}

/// The Products screen over two copies of the samples (the second named `payments`) and
/// a config that is not there: the first input landed in `orders`, the leaky export
/// refused in `payments`. The last landing's age is pinned (it is the clock's).
#[test]
fn the_products_screen() {
    let (a, b) = (
        tempfile::tempdir().expect("a"),
        tempfile::tempdir().expect("b"),
    );
    let a = fixture::copy_samples(a.path());
    let b_config = fixture::copy_samples(b.path());
    let text = std::fs::read_to_string(&b_config).expect("read");
    let text = text.replace("product = \"orders\"", "product = \"payments\"");
    std::fs::write(&b_config, text).expect("write");
    let missing = std::path::PathBuf::from("missing.toml");
    let entries = super::open::entries(&[a, b_config, missing], &Ok);
    let mut c = Console::products(entries, theme::embedded("dark"), Vec::new());
    settle(&mut c);
    let land_and_back = [Intent::Run, Intent::Confirm, Intent::Back, Intent::Back];
    steps(&mut c, [Intent::Open].into_iter().chain(land_and_back));
    let to_b = [Intent::Down, Intent::Open, Intent::Bottom];
    steps(&mut c, to_b.into_iter().chain(land_and_back));
    assert_eq!(c.app.view, View::Products);
    let rows = c.app.products.iter_mut().flat_map(|p| p.rows.iter_mut());
    for last in rows.filter_map(|r| r.summary.as_mut()?.last.as_mut()) {
        last.age_secs = Some(300);
    }
    snap_at(&mut c, "products", NEWER_SIZES);
}

/// The top bar names the configured engine; for Spark its remote without the connection
/// string's parameters, which may hold a token.
#[test]
fn the_top_bar_names_the_engine_and_never_the_remotes_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config::load(&fixture::copy_samples(dir.path())).expect("sample config");
    config.engine = crate::config::EngineConfig {
        kind: crate::config::EngineKind::Spark,
        remote: Some("sc://spark.example:15002/;token=s3cret;use_ssl=true".to_owned()),
        s3_scheme: None,
    };
    let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
    console.step(Msg::Resize(160, 48));
    let top = screen(&console, 160, 48);
    let top = top.lines().next().unwrap_or_default();
    assert!(
        top.contains("engine spark sc://spark.example:15002 "),
        "{top}"
    );
    assert!(top.contains("q quit"), "{top}");
    assert!(!top.contains("s3cret") && !top.contains("token"), "{top}");
}

/// Writes the courier burst as set `04-courier-set` of two parts, split after its fourth
/// line, a retry of its third line opening the second part; the burst's text.
fn courier_set(dir: &Path) -> String {
    let burst =
        std::fs::read_to_string(dir.join("inbox/02-courier-burst.jsonl")).expect("the burst");
    let lines: Vec<&str> = burst.lines().collect();
    let set = dir.join("inbox/04-courier-set");
    std::fs::create_dir(&set).expect("the set");
    let parts = [
        lines[..4].join("\n") + "\n",
        format!("{}\n{}\n", lines[2], lines[4..].join("\n")),
    ];
    for (i, part) in parts.iter().enumerate() {
        std::fs::write(set.join(format!("part-0000{i}.jsonl")), part).expect("a part");
    }
    fixture::write_input(dir, "04-courier-set/_SUCCESS", b"", 10);
    burst
}

/// A set of two parts (the courier burst split after its fourth line, a retry of its
/// third line opening the second part) and the same burst gzipped: the Raw tab in the
/// second part, the Ranked tab's `part:line`, and the Raw tab at the gzip file's end.
#[test]
fn a_set_and_a_compressed_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config::load(&fixture::copy_samples(dir.path())).expect("sample config");
    let burst = courier_set(dir.path());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(burst.as_bytes()).expect("gzip");
    let gz = gz.finish().expect("gzip");
    fixture::write_input(dir.path(), "05-courier.jsonl.gz", &gz, 11);
    let mut c = Console::new(config, theme::embedded("dark"), Vec::new());
    settle(&mut c);
    steps(
        &mut c,
        [Intent::Top, Intent::Down, Intent::Down, Intent::Down],
    );
    steps(&mut c, [Intent::NextPane, Intent::NextPane]);
    steps(&mut c, [Intent::Down; 6]);
    assert_eq!(c.app.raw.cursor, 7, "part-00001.jsonl's second line");
    snap_at(&mut c, "raw_set", NEWER_SIZES);
    steps(&mut c, [Intent::NextPane]);
    snap_at(&mut c, "ranked_set", NEWER_SIZES);
    while c.app.pane != super::app::Pane::List {
        steps(&mut c, [Intent::Back]);
    }
    steps(
        &mut c,
        [
            Intent::Down,
            Intent::NextPane,
            Intent::NextPane,
            Intent::Bottom,
        ],
    );
    assert_eq!(c.app.raw.cursor, 11, "the gzip file's last line");
    snap_at(&mut c, "raw_gzip", NEWER_SIZES);
}

/// The History view after the courier set landed and a run the Spark engine refused on
/// the reject cap before any row work (its run-log line, as that engine writes it): the
/// refusal's row says `keys –`, never `keys 0`, and its detail line that it was not
/// ranked; the set's run and the date it owns name its parts.
#[test]
fn history_of_a_set_and_of_a_refusal_before_the_row_work() {
    use crate::land::runlog::{self, RunRecord};
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config::load(&fixture::copy_samples(dir.path())).expect("sample config");
    courier_set(dir.path());
    let mut c = Console::new(config.clone(), theme::embedded("dark"), Vec::new());
    settle(&mut c);
    steps(
        &mut c,
        [Intent::Top, Intent::Down, Intent::Down, Intent::Down],
    );
    steps(&mut c, [Intent::Run, Intent::Confirm, Intent::Back]);
    let refused = RunRecord {
        time: "2024-03-03T09:00:00.000000Z".into(),
        product: config.product.clone(),
        input_name: "05-partner-export.jsonl".into(),
        input_sha256: "5e".repeat(32),
        action: "refused".into(),
        reason: Some("reject_cap".into()),
        dates: Vec::new(),
        counts: crate::plan::Counts {
            lines: 40,
            accepted: 28,
            rejected: 12,
            ..Default::default()
        },
        unranked: true,
        duration_ms: 300,
        tool_version: "0.1.0".into(),
        swaps: Vec::new(),
        engine: "spark sc://localhost:15002".into(),
        engine_settings: Default::default(),
        table_version: None,
        parts: Vec::new(),
        run_id: String::new(),
        memory: None,
    };
    runlog::append(&config, &refused).expect("the run log");
    steps(
        &mut c,
        [Intent::Show(View::History), Intent::Reload, Intent::Top],
    );
    let actions: Vec<&str> = c
        .app
        .history
        .runs
        .iter()
        .map(|r| r.action.as_str())
        .collect();
    assert_eq!(actions, ["refused", "published"], "newest first");

    c.step(Msg::Resize(140, 45));
    let text = screen(&c, 140, 45);
    let row = text
        .lines()
        .find(|l| l.contains("05-partner-export"))
        .expect("the row");
    assert!(row.contains("keys – · rejected 12"), "{row}");
    assert!(text.contains(crate::plan::NOT_RANKED), "{text}");
    assert!(!text.contains("keys 0"), "{text}");
    snap_at(&mut c, "history_unranked", NEWER_SIZES);

    steps(&mut c, [Intent::Down]);
    let text = screen(&c, 140, 45);
    let parts = "set of 2 parts: part-00000.jsonl, part-00001.jsonl";
    assert!(text.contains(parts), "{text}");
    assert!(!text.contains(crate::plan::NOT_RANKED), "{text}");
    snap_at(&mut c, "history_set", NEWER_SIZES);

    steps(&mut c, [Intent::NextPane]);
    let text = screen(&c, 140, 45);
    assert!(text.contains(&format!("04-courier-set: {parts}")), "{text}");
    snap_at(&mut c, "history_set_partitions", NEWER_SIZES);
}

/// A plan the Spark engine refused on the reject cap before any row work, in the Inbox:
/// the courier burst (3 rejects) under `max_rejected_lines = 1`, its plan as that engine
/// makes it (no dates, nothing ranked). Dates and counts say "not ranked", never `keys 0`.
#[test]
fn a_plan_refused_before_the_row_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config::load(&fixture::copy_samples(dir.path())).expect("sample config");
    config.max_rejected_lines = 1;
    let mut c = Console::new(config, theme::embedded("dark"), Vec::new());
    settle(&mut c);
    steps(&mut c, [Intent::Top, Intent::Down]);
    let super::app::PlanState::Ready(ranked) = &c.app.inbox.plan else {
        panic!("the courier burst's plan: {:?}", c.app.inbox.plan);
    };
    assert_eq!(ranked.reason(), Some("reject_cap"));
    let counts = crate::plan::Counts {
        retries: 0,
        keys: 0,
        ties_by_arrival: 0,
        ..ranked.counts.clone()
    };
    let owner = crate::plan::Owner {
        input_name: ranked.input_name.clone(),
        input_sha256: ranked.input_sha256.clone(),
    };
    let unranked = crate::plan::Plan {
        refusal: ranked.refusal.clone(),
        counts,
        findings: ranked.findings.clone(),
        ..crate::plan::Plan::without_rows(&ranked.product, owner, ranked.action)
    };
    c.app.inbox.plan = super::app::PlanState::Ready(std::sync::Arc::new(unranked));
    c.step(Msg::Resize(140, 45));
    let text = screen(&c, 140, 45);
    assert_eq!(text.matches(crate::plan::NOT_RANKED).count(), 2, "{text}");
    assert!(text.contains("REFUSE  reject_cap"), "{text}");
    assert!(!text.contains("keys"), "{text}");
    snap_at(&mut c, "inbox_plan_unranked", NEWER_SIZES);
}
