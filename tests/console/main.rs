//! Flows through the operator console, driven by actions (and keys) against a copy of the
//! samples, asserting on the files the core wrote, not only on the screen: select, plan,
//! confirm with `y`, cancel with `n` / `Esc`, a refusal, the typed `shrink`, a restore,
//! cancelling a plan, and the inbox watcher picking up a renamed file.

mod fixture;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use wharf::config::Config;
use wharf::console::app::{Badge, Dialog, Finished, PlanState, View};
use wharf::console::{Action, Console, Event, theme};
use wharf::land::RunStatus;
use wharf::plan::Action as PlanAction;

struct Product {
    dir: tempfile::TempDir,
    console: Console,
}

impl Product {
    fn samples() -> Product {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config::load(&fixture::copy_samples(dir.path())).expect("config");
        let mut console = Console::new(config, theme::embedded("dark"), Vec::new());
        settle(&mut console);
        Product { dir, console }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Applies `action`, waits for the work it started, draws; returns the screen.
    fn step_and_draw(&mut self, action: Action) -> String {
        self.console.step(action);
        settle(&mut self.console);
        let mut terminal = Terminal::new(TestBackend::new(120, 36)).expect("terminal");
        self.console.draw(&mut terminal).expect("draw");
        terminal.backend().to_string()
    }

    fn steps(&mut self, actions: impl IntoIterator<Item = Action>) -> String {
        actions
            .into_iter()
            .map(|a| self.step_and_draw(a))
            .last()
            .unwrap_or_default()
    }

    /// A key through the keymap, as the terminal would send it.
    fn key(&mut self, code: KeyCode) -> String {
        let event = TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE));
        self.console.handle(Event::Terminal(event));
        self.step_and_draw(Action::Tick)
    }

    fn select(&mut self, name: &str) {
        self.console.step(Action::Top);
        while self.current() != name {
            let before = self.console.app.inbox.cursor;
            self.console.step(Action::Down);
            assert_ne!(
                before, self.console.app.inbox.cursor,
                "{name} is not in the inbox"
            );
        }
        settle(&mut self.console);
    }

    fn current(&self) -> String {
        self.console
            .app
            .current()
            .map(|r| r.entry.name.clone())
            .unwrap_or_default()
    }

    fn badge(&self, name: &str) -> Badge {
        let row = self
            .console
            .app
            .inbox
            .rows
            .iter()
            .find(|r| r.entry.name == name);
        row.map(|r| r.badge).expect("in the inbox")
    }

    fn lake(&self) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        fixture::tree(&self.path("lake/orders"))
    }

    fn checkpoint(&self, input: &str) -> PathBuf {
        self.path(&format!("state/orders/checkpoints/{input}.json"))
    }

    /// Lands the selected input through `r`, `y`.
    fn land_selected(&mut self) -> RunStatus {
        self.steps([Action::Run, Action::Confirm]);
        let Some(Dialog::Result(Finished::Landed { status, .. })) = &self.console.app.dialog else {
            panic!("no landing result: {:?}", self.console.app.dialog);
        };
        let status = *status;
        self.step_and_draw(Action::Back);
        status
    }
}

fn settle(console: &mut Console) {
    assert!(
        console.settle(Duration::from_secs(30)),
        "workers did not finish"
    );
}

const FIRST: &str = "01-orders-2024-03-01.jsonl";
const LEAKY: &str = "03-leaky-export.jsonl";

#[test]
fn select_plan_confirm_lands_the_partition() {
    let mut p = Product::samples();
    assert_eq!(
        p.current(),
        FIRST,
        "the cursor starts on the oldest input not landed"
    );
    let PlanState::Ready(plan) = &p.console.app.inbox.plan else {
        panic!("no plan")
    };
    assert_eq!(plan.action, PlanAction::Publish);
    let screen = p.key(KeyCode::Char('r'));
    assert!(
        screen.contains("Land 01-orders-2024-03-01.jsonl?"),
        "{screen}"
    );
    assert!(p.lake().is_empty(), "nothing written before y");
    let screen = p.key(KeyCode::Char('y'));
    assert!(screen.contains("Published 3 rows"), "{screen}");
    let part = p.path("lake/orders/event_date=2024-03-01/part-00000.parquet");
    assert!(part.is_file(), "the partition is published");
    assert!(p.checkpoint(FIRST).is_file(), "the checkpoint is written");
    assert_eq!(p.badge(FIRST), Badge::Landed);
    p.key(KeyCode::Esc);
    assert!(p.console.app.dialog.is_none());
    assert_eq!(
        p.console.app.plan().map(|plan| plan.action),
        Some(PlanAction::Skip),
        "planned again: a rerun skips"
    );
}

#[test]
fn n_and_esc_cancel_and_write_nothing() {
    let mut p = Product::samples();
    for cancel in [KeyCode::Char('n'), KeyCode::Esc] {
        p.key(KeyCode::Char('r'));
        assert!(matches!(
            p.console.app.dialog,
            Some(Dialog::ConfirmRun { .. })
        ));
        let screen = p.key(cancel);
        assert!(
            p.console.app.dialog.is_none(),
            "{cancel:?} closes the dialog"
        );
        assert!(
            screen.contains("cancelled; nothing was written"),
            "{screen}"
        );
    }
    for root in ["lake", "state", "quarantine"] {
        assert!(fixture::tree(&p.path(root)).is_empty(), "{root} untouched");
    }
    assert_eq!(p.badge(FIRST), Badge::New);
}

#[test]
fn a_refusal_writes_quarantine_only() {
    let mut p = Product::samples();
    assert_eq!(p.land_selected(), RunStatus::Published);
    let lake = p.lake();
    let checkpoint = std::fs::read(p.checkpoint(FIRST)).expect("checkpoint");
    p.select(LEAKY);
    let screen = p.step_and_draw(Action::Run);
    assert!(
        screen.contains("will be refused") && screen.contains("prohibited_field"),
        "{screen}"
    );
    assert!(screen.contains("quarantine only"), "{screen}");
    p.step_and_draw(Action::Confirm);
    let Some(Dialog::Result(Finished::Landed { status, plan, .. })) = &p.console.app.dialog else {
        panic!("no result");
    };
    assert_eq!(*status, RunStatus::Refused);
    let sha = plan.input_sha256.clone();
    assert_eq!(
        p.lake(),
        lake,
        "every published partition byte-for-byte unchanged"
    );
    assert_eq!(
        std::fs::read(p.checkpoint(FIRST)).expect("checkpoint"),
        checkpoint
    );
    assert!(!p.checkpoint(LEAKY).exists(), "no checkpoint for a refusal");
    let summary = std::fs::read_to_string(p.path(&format!("quarantine/orders/{sha}/summary.json")))
        .expect("summary");
    assert!(summary.contains("\"refused\""), "{summary}");
    assert!(
        !summary.contains("a@example.com"),
        "never a value in quarantine"
    );
    assert_eq!(p.badge(LEAKY), Badge::Refused);
}

#[test]
fn a_shrink_lands_only_after_typing_shrink() {
    let mut p = Product::samples();
    p.land_selected();
    fixture::write_input(
        p.dir.path(),
        "04-late-fix.jsonl",
        fixture::LATE_FIX.as_bytes(),
        9,
    );
    p.step_and_draw(Action::Reload);
    p.select("04-late-fix.jsonl");
    let lake = p.lake();
    let screen = p.step_and_draw(Action::Run);
    assert!(
        screen.contains("would shrink published dates") && screen.contains("3 → 1 rows"),
        "{screen}"
    );
    p.steps([Action::Input('y'), Action::Submit]);
    assert!(
        matches!(p.console.app.dialog, Some(Dialog::ConfirmShrink { .. })),
        "y is not enough"
    );
    p.step_and_draw(Action::Back);
    assert!(p.console.app.dialog.is_none(), "Esc cancels");
    assert_eq!(p.lake(), lake, "nothing landed yet");
    p.step_and_draw(Action::Run);
    for c in "shrink".chars() {
        p.key(KeyCode::Char(c));
    }
    let screen = p.key(KeyCode::Enter);
    assert!(screen.contains("allowed the shrink"), "{screen}");
    assert_ne!(p.lake(), lake, "the date was replaced");
    assert!(p.checkpoint("04-late-fix.jsonl").is_file());
    let manifest =
        std::fs::read_to_string(p.path("state/orders/partitions.json")).expect("manifest");
    assert!(manifest.contains("04-late-fix.jsonl"), "{manifest}");
}

#[test]
fn restore_brings_back_the_trash_generation() {
    let mut p = Product::samples();
    p.land_selected();
    let original = p.lake();
    fixture::write_input(
        p.dir.path(),
        "04-late-fix.jsonl",
        fixture::LATE_FIX.as_bytes(),
        9,
    );
    p.step_and_draw(Action::Reload);
    p.select("04-late-fix.jsonl");
    p.step_and_draw(Action::Run);
    p.steps(
        "shrink"
            .chars()
            .map(Action::Input)
            .chain([Action::Submit, Action::Back]),
    );
    let replaced = p.lake();
    assert_ne!(replaced, original);
    let screen = p.steps([Action::Show(View::History), Action::NextPane, Action::Run]);
    assert!(
        screen.contains("Restore event_date=2024-03-01?"),
        "{screen}"
    );
    p.step_and_draw(Action::Decline);
    assert_eq!(p.lake(), replaced, "n restores nothing");
    p.steps([Action::Run, Action::Confirm]);
    assert!(
        matches!(
            p.console.app.dialog,
            Some(Dialog::Result(Finished::Restored(_)))
        ),
        "{:?}",
        p.console.app.dialog
    );
    assert_eq!(p.lake(), original, "the first generation's bytes are back");
    let manifest =
        std::fs::read_to_string(p.path("state/orders/partitions.json")).expect("manifest");
    assert!(
        manifest.contains(FIRST) && !manifest.contains("04-late-fix"),
        "{manifest}"
    );
    let trash = fixture::tree(&p.path("state/orders/trash/event_date=2024-03-01"));
    assert!(
        trash.keys().any(|k| k.ends_with("generation.json")),
        "the replaced one is in the trash"
    );
}

#[test]
fn planning_can_be_cancelled_and_keys_still_answer() {
    let mut p = Product::samples();
    let line = "{\"event_id\":\"e\",\"order_id\":1,\"status\":\"PAID\",\"updated_at\":\"2024-03-01T10:00:00Z\"}\n";
    let big: String = (0..400_000)
        .map(|i| line.replacen("\"e\"", &format!("\"e{i}\""), 1))
        .collect();
    fixture::write_input(p.dir.path(), "05-big.jsonl", big.as_bytes(), 10);
    p.step_and_draw(Action::Reload);
    p.console.step(Action::Bottom);
    assert!(
        matches!(p.console.app.inbox.plan, PlanState::Running { .. }),
        "planning started"
    );
    p.console.step(Action::Help);
    assert!(p.console.app.help, "keys answer while the worker plans");
    p.console.step(Action::Help);
    p.console.step(Action::Cancel);
    let PlanState::Failed(why) = &p.console.app.inbox.plan else {
        panic!("not cancelled")
    };
    assert!(why.contains("cancelled"), "{why}");
    settle(&mut p.console);
    assert!(
        matches!(p.console.app.inbox.plan, PlanState::Failed(_)),
        "a late result is dropped"
    );
    assert!(fixture::tree(&p.path("lake")).is_empty());
}

#[test]
fn the_watcher_shows_a_file_renamed_into_the_inbox() {
    let mut p = Product::samples();
    p.console.watch().expect("watch");
    let inbox = p.path("inbox");
    let tmp = inbox.join("x.jsonl.tmp");
    std::fs::write(&tmp, fixture::LATE_FIX).expect("write");
    wait_for(&mut p.console, |c| {
        row(c, "x.jsonl.tmp").is_some_and(|b| matches!(b, Badge::Ignored(_)))
    });
    std::fs::rename(&tmp, inbox.join("x.jsonl")).expect("rename");
    wait_for(&mut p.console, |c| {
        row(c, "x.jsonl") == Some(Badge::New) && row(c, "x.jsonl.tmp").is_none()
    });
}

fn row(console: &Console, name: &str) -> Option<Badge> {
    console
        .app
        .inbox
        .rows
        .iter()
        .find(|r| r.entry.name == name)
        .map(|r| r.badge)
}

/// Pumps the console's events until `done`, for at most five seconds.
fn wait_for(console: &mut Console, done: impl Fn(&Console) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done(console) {
        assert!(Instant::now() < deadline, "not seen within 5 s");
        console.pump(Duration::from_millis(20));
    }
}

#[test]
fn a_changed_input_gets_its_badge_and_a_quarantine_line_only_for_the_same_bytes() {
    let mut p = Product::samples();
    p.select(LEAKY);
    p.steps([Action::Run, Action::Confirm, Action::Back]);
    let path = p.path(&format!("inbox/{LEAKY}"));
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(fixture::LATE_FIX.as_bytes());
    std::fs::write(&path, bytes).expect("write");
    fixture::set_time(&path, 20);
    p.step_and_draw(Action::Reload);
    assert_eq!(
        p.badge(LEAKY),
        Badge::New,
        "other bytes: no longer the refused ones"
    );
    let screen = p.steps([Action::Show(View::Quarantine), Action::Open, Action::Open]);
    assert!(
        screen.contains("no longer holds the quarantined bytes"),
        "{screen}"
    );
    assert!(!screen.contains("a@example.com"));
    p.steps([Action::Back, Action::Back, Action::Show(View::Inbox)]);
    p.select(FIRST);
    p.land_selected();
    let first = p.path(&format!("inbox/{FIRST}"));
    std::fs::write(&first, fixture::LATE_FIX).expect("write");
    fixture::set_time(&first, 21);
    p.step_and_draw(Action::Reload);
    assert_eq!(p.badge(FIRST), Badge::Changed, "same name, new bytes");
}

#[test]
fn the_plan_lists_every_date_of_a_too_many_dates_refusal() {
    let mut p = Product::samples();
    let days: String = ["01", "02", "03"]
        .iter()
        .map(|d| format!("{{\"event_id\":\"d{d}\",\"order_id\":1{d},\"status\":\"PAID\",\"updated_at\":\"2024-04-{d}T10:00:00Z\"}}\n"))
        .collect();
    fixture::write_input(p.dir.path(), "05-three-days.jsonl", days.as_bytes(), 9);
    p.step_and_draw(Action::Reload);
    p.select("05-three-days.jsonl");
    let screen = p.step_and_draw(Action::Tick);
    assert!(screen.contains("too_many_dates"), "{screen}");
    for d in ["01", "02", "03"] {
        let line = screen
            .lines()
            .find(|l| l.contains(&format!("event_date=2024-04-{d}")))
            .expect("listed");
        assert!(line.contains("one of 3 dates > max_dates 2"), "{line}");
    }
}

#[test]
fn ranked_jumps_to_the_next_tie_and_filters_by_key() {
    let mut p = Product::samples();
    let tie = "{\"event_id\":\"t1\",\"order_id\":7,\"status\":\"A\",\"updated_at\":\"2024-03-01T10:00:00Z\"}\n\
               {\"event_id\":\"t2\",\"order_id\":7,\"status\":\"B\",\"updated_at\":\"2024-03-01T11:00:00+01:00\"}\n\
               {\"event_id\":\"o1\",\"order_id\":3,\"status\":\"C\",\"updated_at\":\"2024-03-01T09:00:00Z\"}\n";
    fixture::write_input(p.dir.path(), "06-tie.jsonl", tie.as_bytes(), 9);
    p.step_and_draw(Action::Reload);
    p.select("06-tie.jsonl");
    p.steps([Action::NextPane, Action::NextPane, Action::NextPane]);
    assert_eq!(p.console.app.ranked.cursor, 0);
    let screen = p.step_and_draw(Action::NextMark);
    assert_eq!(
        p.console.app.ranked.cursor, 1,
        "the first row of key 7, after key 3"
    );
    assert!(screen.contains("earlier arrival"), "{screen}");
    let screen = p.steps([Action::Filter, Action::Input('3'), Action::Submit]);
    assert_eq!(p.console.app.ranked.rows.len(), 1, "{screen}");
}
