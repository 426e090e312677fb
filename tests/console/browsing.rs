//! Browsing while work runs: cancelling a plan, the watcher, badges, the quarantine's raw
//! line, the plan's date listing and the Ranked tab.

use std::time::{Duration, Instant};

use wharf::console::app::{Badge, Loading, PlanState, View};
use wharf::console::{Console, Intent, Msg};
use wharf::land::RunStatus;

use crate::fixture;
use crate::harness::{FIRST, LEAKY, Product, settle};

#[test]
fn planning_can_be_cancelled_and_keys_still_answer() {
    let mut p = Product::samples();
    let line = "{\"event_id\":\"e\",\"order_id\":1,\"status\":\"PAID\",\"updated_at\":\"2024-03-01T10:00:00Z\"}\n";
    let big: String = (0..400_000)
        .map(|i| line.replacen("\"e\"", &format!("\"e{i}\""), 1))
        .collect();
    fixture::write_input(p.folder.path(), "05-big.jsonl", big.as_bytes(), 10);
    p.step_and_draw(Intent::Reload);
    p.console.step(Intent::Bottom);
    assert!(
        matches!(p.console.app.inbox.plan, PlanState::Running { .. }),
        "planning started"
    );
    p.console.step(Intent::Help);
    assert!(p.console.app.help, "keys answer while the worker plans");
    p.console.step(Intent::Help);
    p.console.step(Intent::Cancel);
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
    p.steps([Intent::Run, Intent::Confirm, Intent::Back]);
    let path = p.path(&format!("inbox/{LEAKY}"));
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(fixture::LATE_FIX.as_bytes());
    std::fs::write(&path, bytes).expect("write");
    fixture::set_time(&path, 20);
    p.step_and_draw(Intent::Reload);
    assert_eq!(
        p.badge(LEAKY),
        Badge::New,
        "other bytes: no longer the refused ones"
    );
    let screen = p.steps([Intent::Show(View::Quarantine), Intent::Open, Intent::Open]);
    assert!(
        screen.contains("no longer holds the quarantined bytes"),
        "{screen}"
    );
    assert!(!screen.contains("a@example.com"));
    p.steps([Intent::Back, Intent::Back, Intent::Show(View::Inbox)]);
    p.select(FIRST);
    p.land_selected();
    let first = p.path(&format!("inbox/{FIRST}"));
    std::fs::write(&first, fixture::LATE_FIX).expect("write");
    fixture::set_time(&first, 21);
    p.step_and_draw(Intent::Reload);
    assert_eq!(p.badge(FIRST), Badge::Changed, "same name, new bytes");
}

#[test]
fn the_plan_lists_every_date_of_a_too_many_dates_refusal() {
    let mut p = Product::samples();
    let days: String = ["01", "02", "03"]
        .iter()
        .map(|d| format!("{{\"event_id\":\"d{d}\",\"order_id\":1{d},\"status\":\"PAID\",\"updated_at\":\"2024-04-{d}T10:00:00Z\"}}\n"))
        .collect();
    fixture::write_input(p.folder.path(), "05-three-days.jsonl", days.as_bytes(), 9);
    p.step_and_draw(Intent::Reload);
    p.select("05-three-days.jsonl");
    let screen = p.step_and_draw(Msg::Tick);
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
    fixture::write_input(p.folder.path(), "06-tie.jsonl", tie.as_bytes(), 9);
    p.step_and_draw(Intent::Reload);
    p.select("06-tie.jsonl");
    p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert_eq!(p.console.app.ranked.cursor, 0);
    let screen = p.step_and_draw(Intent::NextMark);
    assert_eq!(
        p.console.app.ranked.cursor, 1,
        "the first row of key 7, after key 3"
    );
    assert!(screen.contains("earlier arrival"), "{screen}");
    let screen = p.steps([Intent::Filter, Intent::Input('3'), Intent::Submit]);
    assert_eq!(p.console.app.ranked.rows.len(), 1, "{screen}");
}

#[test]
fn the_cursor_starts_on_the_oldest_input_not_landed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_path = fixture::copy_samples(dir.path());
    let config = wharf::config::Config::load(&config_path).expect("config");
    let first = dir.path().join(format!("inbox/{FIRST}"));
    let options = wharf::plan::DecideOptions::default();
    let mut engine = wharf::engine::open(&config).expect("engine");
    wharf::land::run(&config, engine.as_mut(), &first, options, &mut |_| true)
        .expect("land the first");
    let theme = wharf::console::theme::embedded("dark");
    let mut console = Console::new(config, theme, Vec::new());
    settle(&mut console);
    let rows = &console.app.inbox.rows;
    assert_eq!(
        rows[0].badge,
        Badge::Landed,
        "its hash matches its checkpoint"
    );
    let current = console.app.current().map(|r| r.entry.name.clone());
    assert_eq!(current.as_deref(), Some("02-courier-burst.jsonl"));
}

/// An input with a conflict keeps no events by key in its plan (it is read again without
/// the conflicting line): the Ranked tab reads the input itself and shows the conflict.
#[test]
fn ranked_reads_an_input_with_a_conflict_itself() {
    let mut p = Product::samples();
    let conflict = "{\"event_id\":\"c1\",\"order_id\":7,\"status\":\"A\",\"updated_at\":\"2024-03-01T10:00:00Z\"}\n\
                    {\"event_id\":\"o1\",\"order_id\":3,\"status\":\"C\",\"updated_at\":\"2024-03-01T09:00:00Z\"}\n\
                    {\"event_id\":\"c1\",\"order_id\":7,\"status\":\"B\",\"updated_at\":\"2024-03-01T10:00:00Z\"}\n";
    fixture::write_input(p.folder.path(), "06-conflict.jsonl", conflict.as_bytes(), 9);
    p.step_and_draw(Intent::Reload);
    p.select("06-conflict.jsonl");
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert!(
        matches!(p.console.app.ranked.data, Loading::Ready(_)),
        "{screen}"
    );
    assert_eq!(p.console.app.ranked.rows.len(), 3, "{screen}");
    assert!(screen.contains("conflict with line 1"), "{screen}");
    let screen = p.step_and_draw(Intent::NextMark);
    assert_eq!(
        p.console.app.ranked.cursor, 1,
        "the conflict's key 7: {screen}"
    );
}

/// A landed set that a stray subfolder spoils cannot be hashed: its row says why instead
/// of "hashing" forever, and it lands as landed again once the folder is gone.
#[test]
fn an_input_that_cannot_be_hashed_shows_why_in_its_row() {
    let mut p = Product::samples();
    let set = p.path("inbox/05-fix-parts");
    std::fs::create_dir(&set).expect("a set folder");
    std::fs::write(set.join("part-0001.jsonl"), fixture::LATE_FIX).expect("a part");
    std::fs::write(set.join("_SUCCESS"), "").expect("the marker");
    p.step_and_draw(Intent::Reload);
    p.select("05-fix-parts");
    assert_eq!(p.land_selected(), RunStatus::Published);
    assert_eq!(p.badge("05-fix-parts"), Badge::Landed);
    let lake = p.lake();

    std::fs::create_dir(set.join("part-0002.jsonl")).expect("a stray subfolder");
    let screen = p.step_and_draw(Intent::Reload);
    assert_eq!(p.badge("05-fix-parts"), Badge::Unreadable);
    let row = screen
        .lines()
        .find(|l| l.contains("05-fix-parts") && l.contains("✗ error"))
        .unwrap_or_else(|| panic!("the set's row says error: {screen}"));
    assert!(row.contains("part-"), "the row starts the error: {row}");
    assert!(screen.contains("part-0002.jsonl: is a"), "{screen}");
    assert!(!screen.contains("hashing"), "{screen}");
    assert_eq!(p.lake(), lake, "an unreadable input changes nothing");

    std::fs::remove_dir(set.join("part-0002.jsonl")).expect("remove the subfolder");
    p.step_and_draw(Intent::Reload);
    assert_eq!(p.badge("05-fix-parts"), Badge::Landed);
}

/// `/` on the Inbox list and on History's runs filters them by input name as typed
/// (case-insensitive); while it is open `r` and `y` are text; Esc clears it.
#[test]
fn slash_filters_the_inbox_and_the_run_log_by_name_and_no_key_is_a_command() {
    let mut p = Product::samples();
    p.step_and_draw(Intent::Top);
    let names = |p: &Product| -> Vec<String> {
        let rows = &p.console.app.inbox.rows;
        rows.iter().map(|r| r.entry.name.clone()).collect()
    };
    let all = names(&p);
    let screen = p.steps(
        [Intent::Filter]
            .into_iter()
            .chain("LEAKRY".chars().map(Intent::Input)),
    );
    assert!(names(&p).is_empty(), "{screen}");
    assert!(screen.contains("matching /LEAKRY"), "{screen}");
    p.steps([Intent::Backspace, Intent::Backspace, Intent::Submit]);
    assert_eq!(names(&p), ["03-leaky-export.jsonl"]);
    assert!(
        p.console.app.dialog.is_none(),
        "r typed into the filter opened a dialog"
    );
    assert!(fixture::tree(&p.path("lake")).is_empty());
    p.steps([Intent::Filter, Intent::Back]);
    assert_eq!(names(&p), all, "Esc clears the filter");
    assert_eq!(
        p.current(),
        "03-leaky-export.jsonl",
        "the cursor stays on its input"
    );

    assert_eq!(p.land_selected(), RunStatus::Refused);
    p.steps([Intent::Show(View::History), Intent::Filter]);
    let screen = p.steps("xyz".chars().map(Intent::Input));
    assert!(p.console.app.history.runs.is_empty(), "{screen}");
    let screen = p.steps([Intent::Back]);
    assert_eq!(p.console.app.history.runs.len(), 1, "{screen}");
}
