//! The inbox watcher under whatever is open: a file a producer renames into the inbox
//! while a dialog, the help or a filter is open reaches the list before it closes, and
//! the operator's selection stays on the same input, by name, through it all. The real
//! runtime with the real notify watcher; keys through the keymap.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::KeyCode;
use wharf::console::app::{Badge, Dialog, Finished};
use wharf::console::{Console, Intent};

use crate::fixture;
use crate::harness::{FIRST, Product};

/// The file that arrives: older than every sample, so it lists first and every row
/// below it moves down one.
const ARRIVED: &str = "00-arrived.jsonl";

/// One thing that can be open, how to open it, and the key that closes it.
struct Case {
    what: &'static str,
    open: fn(&mut Product),
    is_open: fn(&Console) -> bool,
    close: KeyCode,
}

const CASES: &[Case] = &[
    Case {
        what: "run confirmation",
        open: |p| {
            p.key(KeyCode::Char('r'));
        },
        is_open: |c| matches!(c.app.dialog, Some(Dialog::ConfirmRun { .. })),
        close: KeyCode::Esc,
    },
    Case {
        what: "shrink confirmation",
        open: |p| {
            late_fix_selected(p);
            p.key(KeyCode::Char('r'));
            for c in "shr".chars() {
                p.key(KeyCode::Char(c));
            }
        },
        is_open: |c| matches!(&c.app.dialog, Some(Dialog::ConfirmShrink { typed, .. }) if typed == "shr"),
        close: KeyCode::Esc,
    },
    Case {
        what: "landing result",
        open: |p| {
            p.key(KeyCode::Char('r'));
            p.key(KeyCode::Char('y'));
        },
        is_open: |c| matches!(c.app.dialog, Some(Dialog::Result(Finished::Landed { .. }))),
        close: KeyCode::Esc,
    },
    Case {
        what: "restore confirmation",
        open: |p| {
            shrink_landed(p);
            for code in [KeyCode::Char('3'), KeyCode::Tab, KeyCode::Char('r')] {
                p.key(code);
            }
        },
        is_open: |c| matches!(c.app.dialog, Some(Dialog::ConfirmRestore { .. })),
        close: KeyCode::Char('n'),
    },
    Case {
        what: "restore result",
        open: |p| {
            shrink_landed(p);
            for code in [KeyCode::Char('3'), KeyCode::Tab, KeyCode::Char('r')] {
                p.key(code);
            }
            p.key(KeyCode::Char('y'));
        },
        is_open: |c| matches!(c.app.dialog, Some(Dialog::Result(Finished::Restored(_)))),
        close: KeyCode::Enter,
    },
    Case {
        what: "help",
        open: |p| {
            p.key(KeyCode::Char('?'));
        },
        is_open: |c| c.app.help,
        close: KeyCode::Char('?'),
    },
    Case {
        what: "Ranked filter",
        open: |p| {
            for code in [KeyCode::Tab, KeyCode::Tab, KeyCode::Tab] {
                p.key(code);
            }
            p.key(KeyCode::Char('/'));
            p.key(KeyCode::Char('1'));
        },
        is_open: |c| c.app.editing.as_deref() == Some("1"),
        close: KeyCode::Enter,
    },
    Case {
        what: "Quarantine filter",
        open: |p| {
            for code in [KeyCode::Char('2'), KeyCode::Char('/'), KeyCode::Char('x')] {
                p.key(code);
            }
        },
        is_open: |c| c.app.editing.as_deref() == Some("x"),
        close: KeyCode::Esc,
    },
];

#[test]
fn a_file_renamed_in_under_any_overlay_shows_and_the_selection_stays() {
    for case in CASES {
        let mut p = Product::samples();
        p.console.watch().expect("watch");
        (case.open)(&mut p);
        assert!((case.is_open)(&p.console), "{}: did not open", case.what);
        let selected = selected_name(&p.console);
        assert!(selected.is_some(), "{}: an input is selected", case.what);

        arrive(p.folder.path(), ARRIVED);
        wait_for(&mut p.console, case.what, |c| {
            row(c, ARRIVED) == Some(Badge::New)
                && !c
                    .app
                    .inbox
                    .rows
                    .iter()
                    .any(|r| r.entry.name.ends_with(".tmp"))
        });
        assert!(
            (case.is_open)(&p.console),
            "{}: closed by the watcher",
            case.what
        );
        assert_eq!(
            selected_name(&p.console),
            selected,
            "{}: moved while open",
            case.what
        );

        p.key(case.close);
        assert!(!(case.is_open)(&p.console), "{}: did not close", case.what);
        assert_eq!(
            row(&p.console, ARRIVED),
            Some(Badge::New),
            "{}: listed",
            case.what
        );
        assert_eq!(
            selected_name(&p.console),
            selected,
            "{}: moved on close",
            case.what
        );
        assert_eq!(
            p.console.app.current().map(|r| r.entry.name.clone()),
            selected,
            "{}: the cursor is on the selected input",
            case.what
        );
    }
}

/// The selected input's name.
fn selected_name(console: &Console) -> Option<String> {
    let path = console.app.inbox.selected.as_ref()?;
    Some(path.file_name()?.to_string_lossy().into_owned())
}

/// What a producer does: write under a hidden temporary name, then rename into place.
fn arrive(dir: &Path, name: &str) {
    let inbox = dir.join("inbox");
    let tmp = inbox.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, fixture::LATE_FIX).expect("write");
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .and_then(|f| f.set_modified(old))
        .expect("set the time");
    std::fs::rename(&tmp, inbox.join(name)).expect("rename");
}

fn row(console: &Console, name: &str) -> Option<Badge> {
    let rows = &console.app.inbox.rows;
    rows.iter().find(|r| r.entry.name == name).map(|r| r.badge)
}

/// Pumps the console's events (the watcher's among them) until `done`, for at most ten
/// seconds.
fn wait_for(console: &mut Console, what: &str, done: impl Fn(&Console) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(console) {
        assert!(
            Instant::now() < deadline,
            "{what}: not in the inbox list within 10 s"
        );
        console.pump(Duration::from_millis(20));
    }
}

/// The first sample landed, then a late fix for its date in the inbox, selected.
fn late_fix_selected(p: &mut Product) {
    p.land_selected();
    let late = "04-late-fix.jsonl";
    fixture::write_input(p.folder.path(), late, fixture::LATE_FIX.as_bytes(), 9);
    p.step_and_draw(Intent::Reload);
    p.select(late);
}

/// The late fix landed over the first sample's date, so that date has a generation in
/// the trash to restore; the first sample selected again.
fn shrink_landed(p: &mut Product) {
    late_fix_selected(p);
    p.step_and_draw(Intent::Run);
    p.confirm_shrink();
    p.select(FIRST);
}
