//! The Changes tab: what a landing would change, key by key. It lists exactly what
//! `wharf diff --json` lists, writes nothing while it diffs, and what it said is what the
//! landing then did to the published rows; `f` and `/` narrow it.

use std::collections::BTreeMap;

use wharf::console::app::{Loading, Pane};
use wharf::console::changes::{Changes, Outcome};
use wharf::console::{Intent, Msg};
use wharf::diff::json;

use crate::harness::{self, LEAKY, Product};
use crate::kit;

/// The first input landed, then a late fix for its date selected, its Changes tab shown.
fn late_fix_changes() -> Product {
    let mut p = Product::late_fix_selected();
    // From the list, the previous pane is the last tab: Changes.
    p.step_and_draw(Intent::PrevPane);
    assert_eq!(p.console.app.pane, Pane::Changes);
    p
}

fn ready(p: &Product) -> std::sync::Arc<Changes> {
    match &p.console.app.changes.data {
        Loading::Ready(changes) => changes.clone(),
        other => panic!("the Changes tab is not ready: {other:?}"),
    }
}

/// (date, key, change, {field: [before, after]}) per changed field, values as JSON.
type Listed = harness::Listed<String>;

fn listed(changes: &Changes) -> Listed {
    harness::listed_by(changes, |v| json::value(v).to_string())
}

/// The same from `wharf diff --json`'s lines: an updated key's differing fields, every
/// field of the row an insert or a removal has.
fn diffed(stdout: &str) -> Listed {
    let lines = stdout.lines().map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let side = |name: &str| v[name].as_object().cloned().unwrap_or_default();
        let (before, after) = (side("before"), side("after"));
        let names = before.keys().chain(after.keys()).cloned();
        let mut fields = BTreeMap::new();
        for name in names {
            let [b, a] = [&before, &after].map(|s| s.get(&name).cloned().unwrap_or_default());
            if b != a {
                fields.insert(name, [b.to_string(), a.to_string()]);
            }
        }
        let key = v["key"].to_string().trim_matches('"').to_owned();
        let change = v["change"].as_str().expect("change").to_owned();
        (
            v["event_date"].as_str().expect("event_date").to_owned(),
            key,
            change,
            fields,
        )
    });
    lines.collect()
}

#[test]
fn changes_list_what_wharf_diff_lists_and_the_landing_then_does_exactly_that() {
    let mut p = late_fix_changes();
    let lake = p.lake();
    let changes = ready(&p);
    assert_eq!(changes.outcome, Outcome::IfShrinkConfirmed);
    let input = p.path("inbox/04-late-fix.jsonl");
    let ran = p.folder.wharf(&[
        "diff",
        input.to_str().expect("a UTF-8 path"),
        "--json",
        "--allow-shrink",
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(listed(&changes), diffed(&ran.stdout));
    let kinds: Vec<(String, String)> = listed(&changes)
        .into_iter()
        .map(|(_, key, kind, _)| (key, kind))
        .collect();
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(k, c)| (k.to_string(), c.to_string()))
            .collect()
    };
    assert_eq!(
        kinds,
        pairs(&[("101", "updated"), ("102", "removed"), ("103", "removed")])
    );
    let day = &changes.dates[0];
    assert_eq!((day.inserted, day.updated, day.removed), (0, 1, 2));
    let screen = p.step_and_draw(Msg::Tick);
    assert!(screen.contains("status PAID → REFUNDED"), "{screen}");
    assert!(
        screen.contains("Refused (shrink) unless you confirm"),
        "{screen}"
    );
    assert_eq!(p.lake(), lake, "diffing writes nothing to the lake");

    // The landing does what the tab said: 101 refunded, 102 and 103 gone.
    p.step_and_draw(Intent::Run);
    p.confirm_shrink();
    let rows = kit::read_rows(&p.folder.publish.join("event_date=2024-03-01"));
    let statuses: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["order_id"].as_str(), r["status"].as_str()))
        .collect();
    assert_eq!(statuses, [("101", "REFUNDED")]);
    // Planned again after the landing, the input is published: nothing would change.
    let screen = p.step_and_draw(Msg::Tick);
    assert_eq!(ready(&p).outcome, Outcome::Skipped);
    assert!(screen.contains("Nothing would change"), "{screen}");
}

/// On a Delta table the published side is the table version's files: the same changes,
/// nothing written to the table while diffing.
#[test]
fn changes_of_a_delta_table_are_its_versions_rows_against_the_landing() {
    let mut p = Product::late_fix_selected_with("table_format = \"delta\"");
    let table = kit::tree(&p.folder.publish);
    assert!(
        table.keys().any(|k| k.starts_with("_delta_log/")),
        "a Delta table: {:?}",
        table.keys()
    );
    p.step_and_draw(Intent::PrevPane);
    let changes = ready(&p);
    assert_eq!(changes.outcome, Outcome::IfShrinkConfirmed);
    let kinds: Vec<(String, String)> = listed(&changes)
        .into_iter()
        .map(|(_, key, kind, _)| (key, kind))
        .collect();
    let want = [("101", "updated"), ("102", "removed"), ("103", "removed")];
    assert_eq!(kinds, want.map(|(k, c)| (k.to_owned(), c.to_owned())));
    let screen = p.step_and_draw(Msg::Tick);
    assert!(screen.contains("status PAID → REFUNDED"), "{screen}");
    assert_eq!(
        kit::tree(&p.folder.publish),
        table,
        "diffing writes nothing"
    );
}

#[test]
fn f_lists_one_kind_and_slash_one_key_and_n_moves_by_date() {
    let mut p = late_fix_changes();
    let keys = |p: &Product| -> Vec<String> {
        let changes = ready(p);
        let rows = &p.console.app.changes.rows;
        rows.iter()
            .map(|&i| changes.key_text(i as usize).to_owned())
            .collect()
    };
    assert_eq!(keys(&p), ["101", "102", "103"]);
    p.steps([Intent::NextShown, Intent::NextShown]);
    assert_eq!(keys(&p), ["101"], "updated only");
    let screen = p.step_and_draw(Intent::NextShown);
    assert_eq!(keys(&p), ["102", "103"], "removed only");
    assert!(screen.contains("removed only"), "{screen}");
    p.step_and_draw(Intent::NextShown);
    p.steps([Intent::Filter, Intent::Input('0'), Intent::Input('3')]);
    assert_eq!(keys(&p), ["103"], "by key as typed");
    p.steps([Intent::Back]);
    assert_eq!(keys(&p), ["101", "102", "103"], "Esc clears the filter");
    // One date only: n stays and says so.
    p.step_and_draw(Intent::NextMark);
    assert_eq!(p.console.app.changes.cursor, 0);
}

#[test]
fn a_refused_input_changes_nothing_and_says_why() {
    let mut p = Product::samples();
    p.select(LEAKY);
    let screen = p.step_and_draw(Intent::PrevPane);
    let changes = ready(&p);
    assert!(
        matches!(
            changes.outcome,
            Outcome::Refused {
                code: "prohibited_field",
                ..
            }
        ),
        "{:?}",
        changes.outcome
    );
    assert!(changes.items.is_empty());
    assert!(screen.contains("Nothing would change"), "{screen}");
    assert!(!p.folder.publish.exists(), "nothing published");
    assert_eq!(p.current(), LEAKY);
}

/// Commits, as another writer, the local table's next version with a CHECK constraint
/// (as `ALTER TABLE … ADD CONSTRAINT` writes it).
fn another_writer_adds_a_constraint(table: &std::path::Path) {
    let protocol = serde_json::json!({"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": [], "writerFeatures": ["checkConstraints"]});
    let constraint = ("delta.constraints.positive_order", "order_id > 0");
    another_writer_commits(table, protocol, constraint);
}

/// Commits, as another writer, `protocol` and the table's metadata with `property` set.
fn another_writer_commits(
    table: &std::path::Path,
    protocol: serde_json::Value,
    property: (&str, &str),
) {
    let log = table.join("_delta_log");
    let mut commits: Vec<_> = std::fs::read_dir(&log)
        .expect("the table's log")
        .map(|e| e.expect("a log entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    commits.sort();
    let mut metadata = commits
        .iter()
        .flat_map(|c| {
            std::fs::read_to_string(c)
                .expect("a commit")
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter_map(|action| action.get("metaData").cloned())
        .next_back()
        .expect("the table's metadata");
    metadata["configuration"][property.0] = property.1.into();
    let actions = [
        serde_json::json!({"commitInfo": {"timestamp": 1, "operation": "SET TBLPROPERTIES"}}),
        serde_json::json!({ "protocol": protocol }),
        serde_json::json!({"metaData": metadata}),
    ];
    let text: Vec<String> = actions.iter().map(ToString::to_string).collect();
    std::fs::write(
        log.join(format!("{:020}.json", commits.len())),
        text.join("\n"),
    )
    .expect("the other writer's commit");
}

/// §12.8: a table feature Wharf refuses is the console's refusal too, in the CLI's words,
/// and landing the input from the console writes nothing to the table.
#[test]
fn a_refused_table_feature_is_the_consoles_refusal_in_the_clis_words() {
    let mut p = Product::late_fix_selected_with("table_format = \"delta\"");
    another_writer_adds_a_constraint(&p.folder.publish);
    console_refuses_as_the_cli(&mut p, "`checkConstraints`");
}

/// §12.8: a legacy writer version 4 with the change data feed on is refused naming the
/// feed, not the `checkConstraints` it implies, in the console as on the command line.
#[test]
fn a_legacy_table_with_the_change_data_feed_on_is_refused_naming_the_feed() {
    let mut p = Product::late_fix_selected_with("table_format = \"delta\"");
    let legacy = serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 4});
    let feed = ("delta.enableChangeDataFeed", "true");
    another_writer_commits(&p.folder.publish, legacy, feed);
    console_refuses_as_the_cli(&mut p, "`changeDataFeed`");
}

/// The console's preview of the late fix is a `table_feature` refusal saying `feature`,
/// one line, the CLI's own; landing it from the console writes nothing to the table.
fn console_refuses_as_the_cli(p: &mut Product, feature: &str) {
    let table = kit::tree(&p.folder.publish);
    p.step_and_draw(Intent::Reload);
    p.select("04-late-fix.jsonl");
    p.step_and_draw(Intent::PrevPane);
    let changes = ready(p);
    let Outcome::Refused { code, why } = &changes.outcome else {
        panic!("not refused: {:?}", changes.outcome);
    };
    assert_eq!(*code, "table_feature");
    let input = p.path("inbox/04-late-fix.jsonl");
    let cli = p
        .folder
        .wharf(&["plan", input.to_str().expect("a UTF-8 path")]);
    assert_eq!(cli.code, 3, "{}{}", cli.stdout, cli.stderr);
    assert!(why.contains(feature), "{why}");
    assert!(!why.contains('\n'), "one line: {why}");
    let cli_text = format!("{}{}", cli.stdout, cli.stderr);
    assert!(
        cli_text.contains(why.as_str()),
        "the CLI's words: {why} in {cli_text}"
    );
    let status = p.land_selected();
    assert_eq!(status, wharf::land::RunStatus::Refused);
    assert_eq!(
        kit::tree(&p.folder.publish),
        table,
        "nothing written to the table"
    );
}
