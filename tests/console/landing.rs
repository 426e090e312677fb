//! Landing through the console: confirm, cancel, refuse, the typed shrink, restore.

use crossterm::event::KeyCode;
use wharf::console::Intent;
use wharf::console::app::{Badge, Dialog, Finished, PlanState, View};
use wharf::land::RunStatus;
use wharf::plan::Action as PlanAction;

use crate::harness::{FIRST, LEAKY, Product};
use crate::{fixture, kit};

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
    let screen = p.step_and_draw(Intent::Run);
    assert!(
        screen.contains("will be refused") && screen.contains("prohibited_field"),
        "{screen}"
    );
    assert!(screen.contains("quarantine only"), "{screen}");
    p.step_and_draw(Intent::Confirm);
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
    let mut p = Product::late_fix_selected();
    let lake = p.lake();
    let screen = p.step_and_draw(Intent::Run);
    assert!(
        screen.contains("would shrink published dates") && screen.contains("3 → 1 rows"),
        "{screen}"
    );
    p.steps([Intent::Input('y'), Intent::Submit]);
    assert!(
        matches!(p.console.app.dialog, Some(Dialog::ConfirmShrink { .. })),
        "y is not enough"
    );
    p.step_and_draw(Intent::Back);
    assert!(p.console.app.dialog.is_none(), "Esc cancels");
    assert_eq!(p.lake(), lake, "nothing landed yet");
    p.step_and_draw(Intent::Run);
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
fn a_growth_lands_only_after_typing_grow() {
    let mut p = Product::samples_with("max_growth = 2.0");
    p.land_selected();
    let doubled: String = (0..7)
        .map(|i| kit::event(&format!("g{i}"), 300 + i, "PAID", "2024-03-01T12:00:00Z") + "\n")
        .collect();
    fixture::write_input(p.folder.path(), "05-doubled.jsonl", doubled.as_bytes(), 9);
    p.step_and_draw(Intent::Reload);
    p.select("05-doubled.jsonl");
    let lake = p.lake();
    let screen = p.step_and_draw(Intent::Run);
    assert!(
        screen.contains("would grow published dates") && screen.contains("3 → 7 rows"),
        "{screen}"
    );
    p.steps("shrink".chars().map(Intent::Input).chain([Intent::Submit]));
    assert!(
        matches!(p.console.app.dialog, Some(Dialog::ConfirmShrink { .. })),
        "the shrink word does not allow a growth"
    );
    assert_eq!(p.lake(), lake, "nothing landed yet");
    for c in "grow".chars() {
        p.key(KeyCode::Char(c));
    }
    let screen = p.key(KeyCode::Enter);
    assert!(screen.contains("allowed the growth"), "{screen}");
    assert_ne!(p.lake(), lake, "the date was replaced");
    assert!(p.checkpoint("05-doubled.jsonl").is_file());
}

/// §1.2 on the Plan tab: the rule and its count, never the value.
#[test]
fn the_plan_tab_counts_broken_rules_without_their_values() {
    let case = &kit::rules::CASES[0];
    let ruled = format!("{}}}", case.ruled);
    let mut p = Product::samples_edited("", (case.declared, &ruled));
    let mut lines: Vec<String> = kit::rules::REFERENCE
        .iter()
        .map(|l| l.to_string())
        .collect();
    lines.push(case.bad.to_owned());
    fixture::write_input(
        p.folder.path(),
        "05-payed.jsonl",
        (lines.join("\n") + "\n").as_bytes(),
        9,
    );
    p.step_and_draw(Intent::Reload);
    p.select("05-payed.jsonl");
    let screen = p.step_and_draw(Intent::Open);
    assert!(screen.contains("by rule: status.one_of 1"), "{screen}");
    assert!(screen.contains("value_not_allowed 1"), "{screen}");
    assert!(!screen.contains(case.secret), "{screen}");
}

/// §1.1 on the Plan tab and in the run's confirmation: the column an input adds.
#[test]
fn the_plan_tab_and_the_confirmation_name_an_added_column() {
    let mut p = Product::samples_edited(
        "",
        ("unknown_fields = \"breach\"", "unknown_fields = \"add\""),
    );
    let line = r#"{"event_id":"e9","order_id":109,"status":"PAID","updated_at":"2024-03-05T10:00:00Z","eta_minutes":12}"#;
    fixture::write_input(
        p.folder.path(),
        "05-eta.jsonl",
        format!("{line}\n").as_bytes(),
        9,
    );
    p.step_and_draw(Intent::Reload);
    p.select("05-eta.jsonl");
    let screen = p.step_and_draw(Intent::Open);
    assert!(
        screen.contains("adds column `eta_minutes` (int)"),
        "{screen}"
    );
    let screen = p.step_and_draw(Intent::Run);
    assert!(
        screen.contains("adds column `eta_minutes` (int)"),
        "{screen}"
    );
}

#[test]
fn restore_brings_back_the_trash_generation() {
    let mut p = Product::late_fix_selected();
    let original = p.lake();
    p.step_and_draw(Intent::Run);
    p.confirm_shrink();
    let replaced = p.lake();
    assert_ne!(replaced, original);
    let screen = p.steps([Intent::Show(View::History), Intent::NextPane, Intent::Run]);
    assert!(
        screen.contains("Restore event_date=2024-03-01?"),
        "{screen}"
    );
    p.step_and_draw(Intent::Decline);
    assert_eq!(p.lake(), replaced, "n restores nothing");
    p.steps([Intent::Run, Intent::Confirm]);
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
fn ranked_rank_one_reads_would_publish_until_the_input_lands() {
    let mut p = Product::samples();
    assert_eq!(p.current(), FIRST);
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert!(screen.contains("rank 1 (would publish)"), "{screen}");
    assert!(!screen.contains("kept (published)"), "{screen}");
    p.steps([Intent::Back]);
    p.key(KeyCode::Char('r'));
    let screen = p.key(KeyCode::Char('y'));
    assert!(screen.contains("Published 3 rows"), "{screen}");
    p.key(KeyCode::Esc);
    assert_eq!(p.badge(FIRST), Badge::Landed);
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert!(screen.contains("kept (published)"), "{screen}");
    assert!(!screen.contains("would publish"), "{screen}");
}

/// A refused input publishes none of its rows, so its rank 1 never says "would publish".
#[test]
fn ranked_rank_one_of_a_refused_input_says_nothing_publishes() {
    let mut p = Product::samples();
    p.select(LEAKY);
    let screen = p.steps([Intent::NextPane, Intent::NextPane, Intent::NextPane]);
    assert!(screen.contains("Ranked"), "{screen}");
    // The why column is cut at this width; the words are whole in ranked's unit test.
    assert_eq!(
        screen.matches("rank 1 (refused: nothing").count(),
        2,
        "{screen}"
    );
    assert!(!screen.contains("would publish"), "{screen}");
    assert!(!screen.contains("kept (published)"), "{screen}");
}

/// The Plan tab's picture of the day: the late fix's one row in its hour, beside the
/// published day's rows in theirs, each counted from the bytes on disk.
#[test]
fn the_day_picture_shows_the_input_and_the_published_rows_by_hour() {
    let mut p = Product::late_fix_selected();
    let hour = |micros: &str| {
        let us: i64 = micros.parse().expect("micros");
        us.div_euclid(3_600_000_000).rem_euclid(24) as usize
    };
    let mut published = [0u64; 24];
    for row in kit::dataset::read_rows(&p.path("lake/orders/event_date=2024-03-01")) {
        published[hour(&row["updated_at"])] += 1;
    }
    let mut input = [0u64; 24];
    for line in fixture::LATE_FIX.lines() {
        let event: serde_json::Value = serde_json::from_str(line).expect("an event");
        let at = event["updated_at"].as_str().expect("updated_at");
        input[hour(&kit::dataset::micros(at))] += 1;
    }
    assert_eq!(published.iter().sum::<u64>(), 3);
    assert_ne!(input, published);

    let screen = p.step_and_draw(Intent::Open);
    let PlanState::Ready(plan) = &p.console.app.inbox.plan else {
        panic!("planned: {screen}");
    };
    assert_eq!(plan.dates[0].by_hour, Some(input), "the plan's own hours");
    let read = match &p.console.app.inbox.published_hours {
        wharf::console::app::Loading::Ready(hours) => hours.clone(),
        other => panic!("published hours: {other:?}"),
    };
    assert_eq!(read.get(&plan.dates[0].event_date), Some(&published));
    // Each row of bars marks exactly the hours that hold rows.
    let bars_of = |label: &str| -> Vec<bool> {
        let line = screen
            .lines()
            .find(|l| l.contains(&format!("    {label} ")))
            .unwrap_or_else(|| panic!("a {label} row: {screen}"));
        let after = &line[line.find(label).unwrap() + label.len()..];
        let bars: Vec<char> = after
            .trim_start()
            .chars()
            .take_while(|c| *c == '·' || ('▁'..='█').contains(c))
            .collect();
        assert_eq!(bars.len() % 24, 0, "{line}");
        let per_hour = bars.len() / 24;
        (0..24).map(|h| bars[h * per_hour] != '·').collect()
    };
    assert_eq!(bars_of("input"), input.map(|n| n > 0).to_vec(), "{screen}");
    assert_eq!(
        bars_of("published"),
        published.map(|n| n > 0).to_vec(),
        "{screen}"
    );
}
