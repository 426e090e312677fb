//! The Products screen (`wharf console --config a --config b`, `--configs DIR`): two real
//! products on temporary folders (the samples, the second named `payments`), driven
//! through the real console; the rows are checked against what the core wrote.

use std::path::{Path, PathBuf};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::config::Config;
use wharf::console::app::View;
use wharf::console::open;
use wharf::console::products::Summary;
use wharf::console::{Console, Intent, Msg, theme};

use crate::harness::{FIRST, LEAKY, settle};
use crate::kit;

/// Two sample products and a console over both.
struct Two {
    a: kit::Product,
    b: kit::Product,
    console: Console,
}

/// The samples in a folder of their own, named `name`.
fn product(name: &str) -> kit::Product {
    let p = kit::Product::samples();
    let text = std::fs::read_to_string(&p.config).expect("the test's setup");
    let renamed = text.replace("product = \"orders\"", &format!("product = \"{name}\""));
    std::fs::write(&p.config, renamed).expect("the test's setup");
    p
}

/// The names in the open product's inbox, in its order.
fn inbox_names(console: &Console) -> Vec<&str> {
    let rows = console.app.inbox.rows.iter();
    rows.map(|r| r.entry.name.as_str()).collect()
}

fn console_over(files: &[PathBuf]) -> Console {
    let entries = open::entries(files, &Ok);
    let mut console = Console::products(entries, theme::embedded("dark"), Vec::new());
    settle(&mut console);
    console
}

impl Two {
    fn new() -> Two {
        let (a, b) = (product("orders"), product("payments"));
        let console = console_over(&[a.config.clone(), b.config.clone()]);
        Two { a, b, console }
    }

    fn step_and_draw(&mut self, msg: impl Into<Msg>) -> String {
        self.console.step(msg);
        settle(&mut self.console);
        screen(&self.console)
    }

    fn steps(&mut self, intents: impl IntoIterator<Item = Intent>) -> String {
        intents
            .into_iter()
            .map(|i| self.step_and_draw(i))
            .last()
            .unwrap_or_default()
    }

    fn summary(&self, row: usize) -> Summary {
        let products = self.console.app.products.as_ref().expect("products");
        products.rows[row].summary.clone().expect("summarized")
    }

    /// Opens row `row` and lands `input` there (`r`, `y`), back on the Products screen.
    fn land(&mut self, row: usize, input: &str) {
        self.steps([Intent::Top]);
        self.steps((0..row).map(|_| Intent::Down));
        self.steps([Intent::Open]);
        assert_eq!(self.console.app.view, View::Inbox);
        self.console.step(Intent::Top);
        while self.console.app.current().map(|r| r.entry.name.as_str()) != Some(input) {
            let before = self.console.app.inbox.cursor;
            self.console.step(Intent::Down);
            assert_ne!(before, self.console.app.inbox.cursor, "{input} not listed");
        }
        settle(&mut self.console);
        // The result dialog, then Esc from the list: back to Products.
        self.steps([Intent::Run, Intent::Confirm, Intent::Back, Intent::Back]);
        assert_eq!(self.console.app.view, View::Products, "Esc went back");
    }
}

fn screen(console: &Console) -> String {
    let mut terminal = Terminal::new(TestBackend::new(140, 45)).expect("the test's setup");
    console.draw(&mut terminal).expect("the test's setup");
    terminal.backend().to_string()
}

/// The top line of the screen, and whether its `⚠` is drawn in the theme's error style.
fn header(console: &Console) -> (String, bool) {
    let mut terminal = Terminal::new(TestBackend::new(140, 45)).expect("the test's setup");
    console.draw(&mut terminal).expect("the test's setup");
    let buffer = terminal.backend().buffer();
    let cells: Vec<_> = (0..140).map(|x| &buffer[(x, 0)]).collect();
    let line: String = cells.iter().map(|c| c.symbol()).collect();
    let error = console.app.theme.error.fg;
    let styled = cells
        .iter()
        .find(|c| c.symbol() == "⚠")
        .is_some_and(|c| Some(c.fg) == error);
    (line, styled)
}

fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}:\n{screen}"))
}

#[test]
fn rows_count_a_landing_and_a_refusal_and_the_header_warns_on_every_screen() {
    let mut two = Two::new();
    for row in [0, 1] {
        let s = two.summary(row);
        assert_eq!((s.waiting, s.open_sets, s.refusals), (3, 0, 0), "row {row}");
        assert_eq!((s.last, s.newest_date), (None, None), "row {row}");
    }
    two.land(0, FIRST);
    two.land(1, LEAKY);
    // What the core wrote: A's checkpoint, B's refusal in its run log.
    assert!(
        two.a
            .state
            .join(format!("checkpoints/{FIRST}.json"))
            .exists()
    );
    assert!(
        !two.b
            .state
            .join(format!("checkpoints/{LEAKY}.json"))
            .exists()
    );
    let b_log = std::fs::read_to_string(two.b.state.join("runs.jsonl")).unwrap();
    assert!(
        b_log
            .lines()
            .last()
            .unwrap()
            .contains("\"action\":\"refused\"")
    );

    let a = two.summary(0);
    assert_eq!((a.waiting, a.refusals), (2, 0));
    assert_eq!(
        a.last.as_ref().map(|l| l.action.as_str()),
        Some("published")
    );
    assert_eq!(a.newest_date.as_deref(), Some("2024-03-01"));
    let b = two.summary(1);
    assert_eq!((b.waiting, b.refusals), (3, 1), "a refusal lands nothing");
    assert_eq!(b.last.as_ref().map(|l| l.action.as_str()), Some("refused"));
    assert_eq!(b.newest_date, None);

    let screen = two.step_and_draw(Msg::Tick);
    let row_a = line_with(&screen, "orders ");
    assert!(
        row_a.contains("published") && row_a.contains("2024-03-01"),
        "{row_a}"
    );
    let row_b = line_with(&screen, "payments ");
    assert!(row_b.contains("refused prohibited_field"), "{row_b}");
    let (top, styled) = header(&two.console);
    assert!(top.contains("⚠ payments: refused 1"), "{top}");
    assert!(styled, "the warning is drawn in the error style");

    // Inside product A, the header still warns of B.
    two.steps([Intent::Top, Intent::Open]);
    assert_eq!(two.console.app.config.product, "orders");
    let (top, styled) = header(&two.console);
    assert!(
        top.contains(" 1 Inbox ") && top.contains("⚠ payments: refused 1"),
        "{top}"
    );
    assert!(styled);
}

#[test]
fn enter_shows_product_b_and_esc_returns_from_its_top_level_only() {
    let mut two = Two::new();
    let screen = two.steps([Intent::Down, Intent::Open]);
    assert_eq!(two.console.app.view, View::Inbox);
    assert_eq!(two.console.app.config.product, "payments");
    assert_eq!(two.console.app.config.inbox, two.b.path().join("inbox"));
    assert_eq!(
        inbox_names(&two.console),
        [FIRST, "02-courier-burst.jsonl", LEAKY]
    );
    assert!(
        screen.contains(FIRST) && screen.contains("payments"),
        "{screen}"
    );
    let footer = screen.lines().last().expect("a footer");
    assert!(footer.contains("Esc products"), "{footer}");

    // Esc from a nested pane only leaves the pane.
    two.steps([Intent::Show(View::History), Intent::NextPane, Intent::Back]);
    assert_eq!(two.console.app.view, View::History);
    let screen = two.steps([Intent::Back]);
    assert_eq!(two.console.app.view, View::Products);
    assert!(
        line_with(&screen, "payments ").contains("   3 "),
        "{screen}"
    );
    assert!(screen.contains(" Products "), "{screen}");
}

/// A config in `dir` for the product in `folder`, its roots absolute.
fn config_at(dir: &Path, file: &str, folder: &kit::Product) -> PathBuf {
    let config = Config::load(&folder.config).expect("the test's setup");
    let text = std::fs::read_to_string(&folder.config).expect("the test's setup");
    let mut text = text;
    for (key, path) in [
        ("inbox", &config.inbox),
        ("publish_root", &config.lake.publish_root().to_owned()),
        ("quarantine_root", &config.quarantine_root),
        ("state_root", &config.state_root),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{key} =")))
            .expect("the test's setup")
            .to_owned();
        text = text.replace(&line, &format!("{key} = {:?}", path.display().to_string()));
    }
    let path = dir.join(file);
    std::fs::write(&path, text).expect("the test's setup");
    path
}

#[test]
fn configs_dir_loads_every_toml_by_name_and_a_broken_one_is_an_error_row() {
    let (a, b) = (product("orders"), product("payments"));
    let dir = tempfile::tempdir().unwrap();
    config_at(dir.path(), "b-payments.toml", &b);
    config_at(dir.path(), "a-orders.toml", &a);
    std::fs::write(dir.path().join("c-broken.toml"), "product = \n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a config").unwrap();
    let missing = open::configs_in(&dir.path().join("nope")).unwrap_err();
    assert_eq!(missing.exit_code(), wharf::exit::USAGE, "{missing}");
    let files = open::configs_in(dir.path()).unwrap();
    let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap()).collect();
    assert_eq!(names, ["a-orders.toml", "b-payments.toml", "c-broken.toml"]);

    let mut console = console_over(&files);
    let products = console.app.products.as_ref().unwrap();
    let rows: Vec<String> = products.rows.iter().map(|r| r.name()).collect();
    assert_eq!(rows, ["orders", "payments", "c-broken.toml"]);
    assert_eq!(products.rows[1].summary.as_ref().unwrap().waiting, 3);
    let error = products.rows[2].entry.config.clone().unwrap_err();
    assert!(error.contains("c-broken.toml"), "{error}");
    let screen = screen(&console);
    let row = line_with(&screen, "c-broken.toml ");
    assert!(
        row.contains(&error[..30]),
        "the row gives the reason: {row}"
    );
    assert!(
        screen
            .lines()
            .next()
            .unwrap()
            .contains("c-broken.toml: config error"),
        "{screen}"
    );

    // Enter on it says why it cannot open, and stays.
    console.step(Intent::Bottom);
    console.step(Intent::Open);
    settle(&mut console);
    assert_eq!(console.app.view, View::Products);
    let message = console.app.message.as_ref().map(|m| m.text.clone());
    assert!(message.is_some_and(|m| m.starts_with("c-broken.toml did not load")));
}

#[test]
fn a_held_lock_and_an_open_set_show_in_the_row() {
    let mut two = Two::new();
    let config = Config::load(&two.a.config).unwrap();
    let set = two.a.path().join("inbox/04-set");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(set.join("part-0001.jsonl"), "{}\n").unwrap();
    let held = wharf::land::lock::acquire(&config).unwrap();
    two.step_and_draw(Intent::Reload);
    let s = two.summary(0);
    assert!(s.locks.run && !s.locks.watch, "{s:?}");
    assert_eq!(
        (s.open_sets, s.waiting),
        (1, 3),
        "an open set is not waiting"
    );
    assert!(!two.summary(1).locks.run);
    let screen = two.step_and_draw(Msg::Tick);
    assert!(line_with(&screen, "orders ").contains(" run "), "{screen}");
    drop(held);
    let watching = wharf::land::lock::acquire_named(&config, wharf::land::lock::WATCH).unwrap();
    two.step_and_draw(Intent::Reload);
    let s = two.summary(0);
    assert!(
        !s.locks.run && s.locks.watch,
        "the probe does not keep the lock: {s:?}"
    );
    drop(watching);
    // Nor does it stop a run from taking it.
    drop(wharf::land::lock::acquire(&config).unwrap());
}

#[test]
fn other_commands_given_two_configs_are_a_usage_error() {
    let (a, b) = (product("orders"), product("payments"));
    let input = a.path().join("inbox").join(FIRST);
    let ran: kit::Ran = std::process::Command::new(env!("CARGO_BIN_EXE_wharf"))
        .arg("--config")
        .arg(&a.config)
        .arg("--config")
        .arg(&b.config)
        .arg("plan")
        .arg(&input)
        .output()
        .unwrap()
        .into();
    assert_eq!(ran.code, i32::from(wharf::exit::USAGE), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("--config is given 2 times"),
        "{}",
        ran.stderr
    );
    // One config still plans, whichever side of the subcommand it is on.
    let one = a.wharf(&["plan", input.to_str().unwrap()]);
    assert_eq!(one.code, 0, "{}", one.stderr);
}

/// What product A's reads report after it was left is dropped: B's console shows B's
/// inbox, however the reads of the two interleave.
#[test]
fn reports_of_a_product_left_behind_never_reach_the_next() {
    let mut two = Two::new();
    std::fs::remove_file(two.b.path().join("inbox").join(LEAKY)).unwrap();
    for _ in 0..5 {
        // A's reads are still in flight when B is shown.
        two.console.step(Intent::Top);
        two.console.step(Intent::Open);
        two.console.step(Intent::Back);
        assert_eq!(two.console.app.view, View::Products);
        two.console.step(Intent::Down);
        two.console.step(Intent::Open);
        settle(&mut two.console);
        assert_eq!(two.console.app.config.product, "payments");
        assert_eq!(inbox_names(&two.console), [FIRST, "02-courier-burst.jsonl"]);
        let inbox = two.b.path().join("inbox");
        assert!(
            two.console
                .app
                .inbox
                .selected
                .iter()
                .all(|p| p.starts_with(&inbox))
        );
        two.steps([Intent::Back]);
    }
}

/// A landing by another process shows in the rows within the timer's period, with no key
/// pressed.
#[test]
fn the_rows_follow_a_run_of_another_process_on_the_timer() {
    let mut two = Two::new();
    assert_eq!(two.summary(0).waiting, 3);
    let out = two.a.run(&two.a.path().join("inbox").join(FIRST));
    assert!(out.status.success(), "{out:?}");
    let deadline = std::time::Instant::now() + wharf::console::runtime::SUMMARY_EVERY * 2;
    while two.summary(0).waiting != 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no refresh: {:?}",
            two.summary(0)
        );
        two.console.pump(std::time::Duration::from_millis(100));
    }
    assert_eq!(two.summary(0).newest_date.as_deref(), Some("2024-03-01"));
    assert_eq!(two.summary(1).waiting, 3, "the other product is unchanged");
}
