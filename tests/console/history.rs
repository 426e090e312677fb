//! The History view's diff of a landing: `Enter` on a run shows, per date, what it changed
//! between the generation it replaced (in the trash) and the one it published, exactly
//! as the two generations read back from disk differ; a new date is every key inserted,
//! and a generation the trash let go is said to be gone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wharf::console::app::{Dialog, Finished, Loading, PlanState, View};
use wharf::console::changes::{Changes, Outcome};
use wharf::console::landed::{NEW_DATE, NOT_KEPT, PUBLISHED_GONE};
use wharf::console::{Intent, Msg};
use wharf::contract::Value;
use wharf::land::RunStatus;
use wharf::plan::Action;

use crate::harness::{self, FIRST, Product};
use crate::kit;

/// (date, key, change, {field: [before, after]}) per changed key, a null as `None`.
type Listed = harness::Listed<Option<String>>;

/// The one date of the samples' first input and of the late fix.
const DATE: &str = "2024-03-01";

/// The first input landed, then the late fix that replaces its date (a shrink, typed).
fn two_landings() -> Product {
    two_landings_with("")
}

/// [`two_landings`], `settings` added to the config.
fn two_landings_with(settings: &str) -> Product {
    let mut p = Product::late_fix_selected_with(settings);
    p.step_and_draw(Intent::Run);
    p.confirm_shrink();
    p.step_and_draw(Intent::Show(View::History));
    let actions: Vec<&str> = p
        .console
        .app
        .history
        .runs
        .iter()
        .map(|r| r.action.as_str())
        .collect();
    assert_eq!(actions, ["published", "published"], "newest first");
    p
}

/// Opens the diff of the `n`th run, newest first; the screen.
fn open_run(p: &mut Product, n: usize) -> String {
    p.steps([Intent::Top]);
    p.steps((0..n).map(|_| Intent::Down));
    p.step_and_draw(Intent::Open)
}

fn ready(p: &Product) -> Arc<Changes> {
    match p.console.app.history.diff.as_ref().map(|d| &d.state.data) {
        Some(Loading::Ready(changes)) => changes.clone(),
        other => panic!("the landing's diff is not ready: {other:?}"),
    }
}

/// A value as the kit's Parquet reader writes it (a timestamp in microseconds).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Int(n) => Some(n.to_string()),
        Value::Str(s) => Some(s.to_string()),
        Value::Ts(instant) => Some(instant.micros().to_string()),
        Value::Float(_) | Value::Bool(_) => Some(value.display()),
    }
}

fn listed(changes: &Changes) -> Listed {
    harness::listed_by(changes, text)
}

/// What changed from the rows of `before` to those of `after` (folders of Parquet read
/// by the kit's own reader), by `order_id`: every field of an inserted or removed row,
/// the differing fields of an updated one.
fn expected(before: Option<&Path>, after: &Path) -> Listed {
    let by_key = |folder: Option<&Path>| -> BTreeMap<String, BTreeMap<String, String>> {
        let rows = folder.map(kit::read_rows).unwrap_or_default();
        rows.into_iter()
            .map(|r| (r["order_id"].clone(), r))
            .collect()
    };
    let (before, after) = (by_key(before), by_key(Some(after)));
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Listed::new();
    for key in keys {
        let (b, a) = (before.get(key), after.get(key));
        let kind = match (b, a) {
            (None, Some(_)) => "inserted",
            (Some(_), None) => "removed",
            (Some(b), Some(a)) if b == a => continue,
            _ => "updated",
        };
        let empty = BTreeMap::new();
        let (b, a) = (b.unwrap_or(&empty), a.unwrap_or(&empty));
        let names: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
        let fields = names
            .into_iter()
            .filter(|n| b.get(*n) != a.get(*n))
            .map(|n| (n.clone(), [b.get(n).cloned(), a.get(n).cloned()]))
            .collect();
        out.push((DATE.to_owned(), key.clone(), kind.to_owned(), fields));
    }
    out
}

fn sorted(mut listed: Listed) -> Listed {
    listed.sort();
    listed
}

/// The one trash generation of the date.
fn trash_generation(p: &Product) -> PathBuf {
    let trash = p.path("state/orders/trash/event_date=2024-03-01");
    let found: Vec<PathBuf> = std::fs::read_dir(&trash)
        .expect("the trash of the date")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn a_landings_diff_is_its_replaced_generation_against_its_published_one() {
    let mut p = two_landings();
    let screen = open_run(&mut p, 0);
    let changes = ready(&p);
    assert!(changes.outcome == Outcome::Landed, "{:?}", changes.outcome);
    let live = p.folder.publish.join("event_date=2024-03-01");
    let want = expected(Some(&trash_generation(&p)), &live);
    assert_eq!(sorted(listed(&changes)), sorted(want.clone()));
    let kinds: Vec<(&str, &str)> = want
        .iter()
        .map(|(_, k, c, _)| (k.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [("101", "updated"), ("102", "removed"), ("103", "removed")]
    );
    let day = &changes.dates[0];
    assert_eq!((day.inserted, day.updated, day.removed), (0, 1, 2));
    assert!(changes.notes.is_empty(), "{:?}", changes.notes);
    assert!(screen.contains("status PAID → REFUNDED"), "{screen}");
    assert!(
        screen.contains("Landing of 04-late-fix.jsonl at "),
        "{screen}"
    );

    // f and / narrow it as in the Changes tab; Esc goes back to the runs.
    let keys = |p: &Product| -> Vec<String> {
        let changes = ready(p);
        let rows = &p
            .console
            .app
            .history
            .diff
            .as_ref()
            .expect("open")
            .state
            .rows;
        rows.iter()
            .map(|&i| changes.key_text(i as usize).to_owned())
            .collect()
    };
    p.steps([Intent::NextShown, Intent::NextShown]);
    assert_eq!(keys(&p), ["101"], "updated only");
    p.steps([Intent::NextShown, Intent::NextShown]);
    p.steps([Intent::Filter, Intent::Input('0'), Intent::Input('3')]);
    assert_eq!(keys(&p), ["103"], "by key as typed");
    p.steps([Intent::Submit]);
    let screen = p.step_and_draw(Intent::Back);
    assert!(p.console.app.history.diff.is_none());
    assert!(screen.contains("Run log"), "{screen}");
}

#[test]
fn the_first_landing_created_its_date_so_every_key_is_inserted() {
    let mut p = two_landings();
    let screen = open_run(&mut p, 1);
    let changes = ready(&p);
    // What it published was replaced by the late fix: the trash holds it now.
    let published = trash_generation(&p);
    assert_eq!(listed(&changes), expected(None, &published));
    let rows = kit::read_rows(&published).len() as u64;
    assert!(rows > 0);
    let day = &changes.dates[0];
    assert_eq!(
        (day.inserted, day.updated, day.removed, day.unchanged),
        (rows, 0, 0, 0)
    );
    assert!(changes.items.iter().all(|i| i.kind.code() == "inserted"));
    assert_eq!(changes.notes.len(), 1);
    assert_eq!(changes.notes[0].1, NEW_DATE);
    assert!(screen.contains(NEW_DATE), "{screen}");
}

#[test]
fn with_the_trash_emptied_the_view_says_no_earlier_generation_is_kept() {
    let mut p = two_landings();
    std::fs::remove_dir_all(p.path("state/orders/trash")).expect("empty the trash");
    p.step_and_draw(Intent::Reload);
    let screen = open_run(&mut p, 0);
    let changes = ready(&p);
    assert!(changes.items.is_empty() && changes.dates.is_empty());
    assert_eq!(changes.notes.len(), 1);
    assert_eq!(changes.notes[0].1, NOT_KEPT);
    assert!(screen.contains(NOT_KEPT), "{screen}");
    // The first landing's generation was replaced and then trashed away too.
    p.step_and_draw(Intent::Back);
    let screen = open_run(&mut p, 1);
    let changes = ready(&p);
    assert_eq!(changes.notes.len(), 1);
    assert_eq!(changes.notes[0].1, PUBLISHED_GONE);
    assert!(screen.contains("no longer kept"), "{screen}");
    let screen = p.step_and_draw(Msg::Tick);
    assert!(!screen.contains("inserted"), "nothing counted: {screen}");
}

#[test]
fn a_run_that_published_nothing_has_no_diff() {
    let mut p = Product::samples();
    p.select(crate::harness::LEAKY);
    p.steps([Intent::Run, Intent::Confirm, Intent::Back]);
    p.step_and_draw(Intent::Show(View::History));
    assert_eq!(p.console.app.history.runs[0].action, "refused");
    let screen = open_run(&mut p, 0);
    assert!(p.console.app.history.diff.is_none());
    assert!(
        screen.contains("only a landing that published has a diff"),
        "{screen}"
    );
}

/// `c` while the generations are read stops the diff; the worker's answer, when it comes,
/// is dropped; `Esc` then goes back to the runs.
#[test]
fn c_cancels_the_diff_and_its_late_answer_is_dropped() {
    let mut p = two_landings();
    p.console.step(Intent::Top);
    p.console.step(Intent::Open);
    p.console.step(Intent::Cancel);
    let screen = p.step_and_draw(Msg::Tick);
    match p.console.app.history.diff.as_ref().map(|d| &d.state.data) {
        Some(Loading::Failed(why)) => assert!(why.contains("cancelled"), "{why}"),
        other => panic!("not cancelled: {other:?}"),
    }
    assert!(screen.contains("diffing cancelled"), "{screen}");
    // Enter reads them again.
    p.step_and_draw(Intent::Open);
    assert_eq!(ready(&p).items.len(), 3);
    p.step_and_draw(Intent::Back);
    assert!(p.console.app.history.diff.is_none());
}

/// The files the Delta table's commit `version` adds, copied into a folder of their own
/// for the kit's reader.
fn added_by(p: &Product, version: u64, into: &Path) -> PathBuf {
    let log = p
        .folder
        .publish
        .join(format!("_delta_log/{version:020}.json"));
    let text = std::fs::read_to_string(&log).expect("the commit");
    let folder = into.join(version.to_string());
    std::fs::create_dir_all(&folder).expect("a folder");
    for line in text.lines() {
        let action: serde_json::Value = serde_json::from_str(line).expect("an action");
        if let Some(path) = action["add"]["path"].as_str() {
            let name = path.rsplit('/').next().expect("a name");
            std::fs::copy(p.folder.publish.join(path), folder.join(name)).expect("copy");
        }
    }
    folder
}

/// On a Delta table the sides are the date's files at the version before the landing's
/// commit and at its commit: the same changes as the two versions read back.
#[test]
fn a_delta_landings_diff_is_the_version_before_against_its_commit() {
    let mut p = two_landings_with("table_format = \"delta\"");
    let copies = tempfile::tempdir().expect("a temp folder");
    let (first, second) = (
        added_by(&p, 0, copies.path()),
        added_by(&p, 1, copies.path()),
    );
    let screen = open_run(&mut p, 0);
    let changes = ready(&p);
    assert!(changes.outcome == Outcome::Landed, "{:?}", changes.outcome);
    assert_eq!(
        sorted(listed(&changes)),
        sorted(expected(Some(&first), &second))
    );
    let day = &changes.dates[0];
    assert_eq!((day.inserted, day.updated, day.removed), (0, 1, 2));
    assert!(screen.contains("status PAID → REFUNDED"), "{screen}");

    p.step_and_draw(Intent::Back);
    open_run(&mut p, 1);
    let changes = ready(&p);
    assert_eq!(listed(&changes), expected(None, &first));
    assert_eq!(changes.notes[0].1, NEW_DATE);

    // The files the late fix removed, once a vacuum lets them go: nothing to compare.
    for entry in std::fs::read_dir(&first).expect("the first commit's files") {
        let name = entry.expect("entry").file_name();
        let stored = p.folder.publish.join("event_date=2024-03-01").join(&name);
        std::fs::remove_file(&stored).expect("vacuum the replaced file");
    }
    p.step_and_draw(Intent::Back);
    open_run(&mut p, 0);
    let changes = ready(&p);
    assert_eq!(changes.notes, [(changes.notes[0].0, NOT_KEPT)]);
    assert!(changes.items.is_empty() && changes.dates.is_empty());
}

/// `R` on a landing in History opens its input's rerun plan in the Inbox view; the typed
/// name lands it again, a wrong one does not.
#[test]
fn r_on_a_landing_opens_its_inputs_rerun_plan_and_only_its_name_lands_it() {
    let mut p = Product::samples();
    p.select(FIRST);
    assert_eq!(p.land_selected(), RunStatus::Published);
    let lake = p.lake();
    p.steps([Intent::Show(View::History), Intent::Top, Intent::Rerun]);
    assert_eq!(p.console.app.view, View::Inbox);
    assert_eq!(p.current(), FIRST);
    let PlanState::Ready(plan) = &p.console.app.inbox.plan else {
        panic!("no rerun plan: {:?}", p.console.app.inbox.plan);
    };
    assert!(plan.reland && plan.action == Action::Publish, "{plan:?}");
    p.steps([Intent::Run]);
    p.steps("yes".chars().map(Intent::Input).chain([Intent::Submit]));
    assert!(
        p.console.app.task.is_none(),
        "a wrong word started a landing"
    );
    assert_eq!(p.lake(), lake);
    let name = FIRST.chars().map(Intent::Input);
    p.steps(name.chain([Intent::Submit]));
    let Some(Dialog::Result(Finished::Landed { status, plan, .. })) = &p.console.app.dialog else {
        panic!("no rerun result: {:?}", p.console.app.dialog);
    };
    assert_eq!((*status, plan.reland), (RunStatus::Published, true));
    let runs = std::fs::read_to_string(p.path("state/orders/runs.jsonl")).unwrap();
    assert_eq!(
        runs.lines().filter(|l| l.contains("\"published\"")).count(),
        2
    );
}
