//! Parity on the contract's fixtures: classification (§1), retries and conflicts (§2),
//! ranking across offsets, nanoseconds and ties (§3), dates (§4) and the refusals the
//! driver decides alone.

use wharf::engine::spark::SparkEngine;
use wharf::engine::spark::winners::{Ranking, TopKeys};
use wharf::plan::Action;

use crate::engines::{self, assert_census_matches};
use crate::kit::{CONFIG, Product, event, event_seq};

/// Lands `lines` with both engines and compares census and rows.
fn both_engines_agree(settings: &str, lines: &[&str]) {
    let mut text = lines.join("\n");
    text.push('\n');
    both_engines_agree_on(settings, text.as_bytes());
}

fn both_engines_agree_on(settings: &str, bytes: &[u8]) {
    both_engines_agree_in(Product::with_settings(settings), bytes);
}

fn both_engines_agree_in(product: Product, bytes: &[u8]) {
    both_engines_agree_remembering(product, bytes, None);
}

/// Every way of ranking, each as its own label.
const RANKINGS: [(Ranking, &str); 3] = [
    (Ranking::Top(TopKeys::Sorted), "sorted"),
    (Ranking::Top(TopKeys::Limited), "limited"),
    (Ranking::Exact, "exact"),
];

/// [`both_engines_agree_in`], the Spark engine's driver remembering only the last
/// `remembered` events where given.
fn both_engines_agree_remembering(product: Product, bytes: &[u8], remembered: Option<usize>) {
    let _server = engines::server();
    let input = product.input_bytes("orders.jsonl", bytes);
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, &input);
    let local = product.path().join("local");
    if plan.action == Action::Publish {
        engines::staged_rows(&mut local_engine, &config, &plan, &local);
    }
    // Every way of ranking the file allows, whichever its events a key would choose.
    for (ranking, how) in RANKINGS {
        let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
        engine.rank(ranking);
        if let Some(events) = remembered {
            engine.remember_events(events);
        }
        let census = engines::spark_census(&mut engine, &config, &input);
        let refused_by_driver = plan
            .findings
            .iter()
            .any(|f| f.breach && f.issue.reason != wharf::contract::LineReason::Conflict)
            || plan.counts.rejected > config.max_rejected_lines;
        if refused_by_driver {
            // No Spark job ran: what only Spark counts is unknown, and said to be.
            assert!(
                census.unranked,
                "a census that ran no Spark job says it is unranked"
            );
            assert_eq!(census.counts.lines, plan.counts.lines);
            assert_eq!(census.counts.blank, plan.counts.blank);
            assert_eq!(census.counts.rejected, plan.counts.rejected);
            assert_eq!(census.counts.by_reason, plan.counts.by_reason);
            assert_eq!(census.findings, plan.findings);
            assert_eq!(census.sha256, plan.input_sha256);
            assert!(census.dates.is_empty());
            return;
        }
        assert!(!census.unranked);
        assert_census_matches(&census, &plan, &format!("census ({how})"));
        if plan.action == Action::Publish {
            let staging = product.path().join(format!("lake/.staging-{how}"));
            let spark = engines::staged_rows(&mut engine, &config, &plan, &staging);
            let local = engines::read_staged(&config, &plan, &local);
            assert_eq!(spark, local, "staged rows, file by file ({how})");
            // Writers may still fall back to plain on values that do not repeat enough.
            let allowed = dictionary_policy(&config.schema);
            for columns in engines::dictionary_columns(&staging) {
                assert!(
                    columns.iter().all(|c| allowed.contains(c)),
                    "Spark dictionary-encodes {columns:?}, the rule allows only {allowed:?}"
                );
            }
            let mut left: Vec<String> = std::fs::read_dir(&staging)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            let mut want: Vec<String> = plan
                .dates
                .iter()
                .map(|d| format!("event_date={}", d.event_date))
                .collect();
            left.sort();
            want.sort();
            assert_eq!(left, want, "only the dates' folders stay in staging");
        }
    }
}

#[test]
fn the_reference_example() {
    both_engines_agree(
        "",
        &[
            &event("e1", 101, "PENDING", "2024-03-01T10:00:00Z"),
            &event("e2", 102, "PAID", "2024-03-01T10:05:00Z"),
            &event("e3", 101, "PAID", "2024-03-01T10:15:00Z"),
            &event("e4", 103, "PENDING", "2024-03-01T10:20:00Z"),
            &event("e5", 102, "SHIPPED", "2024-03-01T11:00:00Z"),
        ],
    );
}

#[test]
fn every_reject_reason_blank_lines_bom_and_carriage_returns() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(event("e1", 1, "A", "2024-03-01T10:00:00Z").as_bytes());
    bytes.extend_from_slice(b"\r\n\n   \n\t\r\n");
    for line in [
        r#"{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z""#,
        r#"[1,2]"#,
        r#"{"event_id":"e3","event_id":"e3","order_id":3,"status":"A","updated_at":"2024-03-01T10:00:00Z"}"#,
        r#"{"event_id":"e4","order_id":4,"updated_at":"2024-03-01T10:00:00Z"}"#,
        r#"{"event_id":"e5","order_id":"5","status":"A","updated_at":"2024-03-01T10:00:00Z"}"#,
        r#"{"event_id":"e6","order_id":6,"status":"A","updated_at":"2024-03-01 10:00:00"}"#,
        r#"{"event_id":"e7","order_id":7,"status":"A","updated_at":"2024-02-30T10:00:00Z"}"#,
        r#"{"event_id":"e8","order_id":8,"status":"A","updated_at":"2024-03-01T10:00:60Z"}"#,
        r#"{"event_id":"e9","order_id":9,"status":"A","updated_at":"2024-03-01T10:00:00Z","seq":1.0}"#,
    ] {
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"{\"event_id\":\"e10\",\"status\":\"\xFF\"}\n");
    bytes.extend_from_slice(event("e11", 11, "B", "2024-03-01T11:00:00Z").as_bytes());
    bytes.extend_from_slice(b"\r");
    both_engines_agree_on("", &bytes);
}

#[test]
fn too_long_lines_and_unknown_fields_rejected() {
    let long = format!(
        r#"{{"event_id":"e2","order_id":2,"status":"{}","updated_at":"2024-03-01T10:00:00Z"}}"#,
        "x".repeat(300)
    );
    let config = CONFIG
        .replace("max_line_bytes = 1048576", "max_line_bytes = 200")
        .replace("unknown_fields = \"breach\"", "unknown_fields = \"reject\"");
    assert_ne!(config, CONFIG);
    let lines = [
        event("e1", 1, "A", "2024-03-01T10:00:00Z"),
        long,
        r#"{"event_id":"e3","order_id":3,"status":"A","updated_at":"2024-03-01T10:00:00Z","color":"red"}"#.into(),
        event("e4", 4, "B", "2024-03-01T10:30:00Z"),
    ];
    both_engines_agree_in(
        Product::with_config(&config),
        (lines.join("\n") + "\n").as_bytes(),
    );
}

#[test]
fn instants_across_offsets_nanoseconds_leap_days_and_leap_seconds() {
    both_engines_agree(
        "max_dates = 10",
        &[
            // 10:15+05:30 is 04:45Z: older than 05:00Z.
            &event("a1", 1, "LATE_TEXT", "2024-03-01T10:15:00+05:30"),
            &event("a2", 1, "NEWER", "2024-03-01T05:00:00Z"),
            // Nanoseconds decide; digits past the ninth are truncated, so b2 ties b3.
            &event("b1", 2, "OLD", "2024-02-29T12:00:00.123456788Z"),
            &event("b2", 2, "TIED_EARLY", "2024-02-29T12:00:00.1234567891Z"),
            &event("b3", 2, "TIED_LATE", "2024-02-29T12:00:00.123456789z"),
            // A leap second counts as 23:59:59.999999999 of its UTC day.
            &event("c1", 3, "LEAP", "2016-12-31T23:59:60Z"),
            &event("c2", 3, "BEFORE", "2016-12-31T23:59:59.999999998Z"),
            &event("c3", 4, "LEAP_OFFSET", "2017-01-01T01:29:60+01:30"),
            // Before the epoch, and a local date that is the next UTC day.
            &event("d1", 5, "PRE_EPOCH", "1969-12-31T23:59:59.5Z"),
            &event("d2", 6, "NEXT_UTC_DAY", "2024-02-29T23:30:00-02:00"),
            &event("d3", 7, "SPACE", "2024-02-29 08:00:00.5+00:00"),
        ],
    );
}

#[test]
fn tiebreaks_ties_by_arrival_and_retries() {
    both_engines_agree(
        "",
        &[
            &event_seq("e1", 1, "SEQ1", "2024-03-01T10:00:00Z", 1),
            &event_seq("e2", 1, "SEQ2", "2024-03-01T10:00:00Z", 2),
            &event("e3", 1, "NO_SEQ", "2024-03-01T10:00:00Z"),
            &event("e4", 2, "FIRST", "2024-03-01T10:00:00Z"),
            &event("e5", 2, "SECOND", "2024-03-01T10:00:00Z"),
            // A retry: same values, the instant written another way, seq null = absent.
            &event("e6", 3, "R", "2024-03-01T12:00:00Z"),
            r#"{"event_id":"e6","order_id":3,"status":"R","updated_at":"2024-03-01T17:30:00+05:30","seq":null}"#,
            &event("e6", 3, "R", "2024-03-01T12:00:00Z"),
            &event_seq("e7", 4, "TIE_SEQ_A", "2024-03-01T09:00:00Z", 5),
            &event_seq("e8", 4, "TIE_SEQ_B", "2024-03-01T09:00:00Z", 5),
        ],
    );
}

/// Spark ranks a clean file over its first occurrences, each retry marked by the
/// driver: an event's place among ties is its first line, never a later retry's.
#[test]
fn a_retry_never_moves_its_event_among_ties_by_arrival() {
    both_engines_agree(
        "",
        &[
            // Key 5: e10 first, then e11 at the same instant; e10's retry comes last,
            // yet e11 (the later first line) wins, tied by arrival.
            &event("e10", 5, "EARLY", "2024-03-01T10:00:00Z"),
            &event("e11", 5, "LATE", "2024-03-01T10:00:00Z"),
            &event("e10", 5, "EARLY", "2024-03-01T10:00:00Z"),
            // Key 6: one event and two retries: not tied, and its line is the first.
            &event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"),
            &event("e13", 6, "OLDER", "2024-03-01T09:00:00Z"),
            &event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"),
            &event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"),
            // Key 7: three events tie, each retried in reverse order.
            &event("e14", 7, "A", "2024-03-02T08:00:00Z"),
            &event("e15", 7, "B", "2024-03-02T08:00:00Z"),
            &event("e16", 7, "C", "2024-03-02T08:00:00Z"),
            &event("e16", 7, "C", "2024-03-02T08:00:00Z"),
            &event("e15", 7, "B", "2024-03-02T08:00:00Z"),
            &event("e14", 7, "A", "2024-03-02T08:00:00Z"),
        ],
    );
}

/// A retry later than the driver remembers goes unmarked, so the first occurrences are
/// not known: every way ranks the exact way, and an unmarked retry is still a retry
/// (ranked by its first line, never a second event at its standing).
#[test]
fn a_retry_later_than_the_driver_remembers_is_ranked_the_exact_way() {
    let mut lines = vec![
        // Key 5: e11 wins, tied by arrival with e10, whose retry comes much later.
        event("e10", 5, "EARLY", "2024-03-01T10:00:00Z"),
        event("e11", 5, "LATE", "2024-03-01T10:00:00Z"),
        // Key 6: one event, not tied, retried much later.
        event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"),
    ];
    // Eight other events: two generations of two, so e10 and e12 are forgotten.
    lines.extend((20..28).map(|i| event(&format!("e{i}"), i, "OTHER", "2024-03-01T09:00:00Z")));
    lines.push(event("e10", 5, "EARLY", "2024-03-01T10:00:00Z"));
    lines.push(event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"));
    // A retry that comes at once is still marked.
    lines.push(event("e12", 6, "ONLY", "2024-03-01T11:00:00Z"));
    let text = lines.join("\n") + "\n";
    both_engines_agree_remembering(Product::with_settings(""), text.as_bytes(), Some(2));
}

#[test]
fn a_conflict_is_found_on_the_contradicting_line() {
    both_engines_agree(
        "",
        &[
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "A", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "B", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            &event("e3", 3, "A", "2024-03-01T10:00:00Z"),
        ],
    );
}

/// A conflict under another key: key 9's only lines contradict events first seen under
/// keys 1 and 2, so key 9 has no winner, yet its lines count as conflicts and are listed.
/// The local engine names a conflict's field only while the earlier event is its key's
/// best at hand, so across keys it names none; the Spark engine names the key. Every count,
/// line, event id and date agrees.
#[test]
fn a_key_whose_every_line_conflicts_counts_its_lines_as_conflicts() {
    let _server = engines::server();
    let product = Product::with_settings("");
    let lines = [
        event("e1", 1, "A", "2024-03-01T10:00:00Z"),
        event("e2", 2, "A", "2024-03-01T10:00:00Z"),
        event("e1", 9, "A", "2024-03-01T10:00:00Z"),
        event("e2", 9, "B", "2024-03-01T11:00:00Z"),
        event("e2", 2, "A", "2024-03-01T10:00:00Z"),
    ];
    let input = product.input_bytes("orders.jsonl", (lines.join("\n") + "\n").as_bytes());
    let config = engines::config(product.path());
    let (mut plan, _local) = engines::local_plan(&config, &input);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    let census = engines::spark_census(&mut engine, &config, &input);
    let named: Vec<Option<&str>> = census
        .findings
        .iter()
        .map(|f| f.issue.field.as_deref())
        .collect();
    assert_eq!(named, [Some("order_id"), Some("order_id")]);
    assert_eq!(
        plan.counts
            .by_reason
            .get(&wharf::contract::LineReason::Conflict),
        Some(&2)
    );
    for (local, spark) in plan.findings.iter_mut().zip(&census.findings) {
        local.issue.field.clone_from(&spark.issue.field);
    }
    assert_census_matches(&census, &plan, "census");
}

#[test]
fn a_prohibited_field_refuses_before_spark() {
    both_engines_agree(
        "",
        &[
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            r#"{"event_id":"e2","order_id":2,"status":"A","updated_at":"2024-03-01T10:00:00Z","email":"x"}"#,
        ],
    );
}

#[test]
fn the_reject_cap_refuses_before_spark() {
    both_engines_agree(
        "max_rejected_lines = 1",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z"), "{", "["],
    );
}

/// The columns [`Schema::dictionary_encoded`] names, in name order.
fn dictionary_policy(schema: &wharf::contract::Schema) -> Vec<String> {
    let mut names: Vec<String> = (0..schema.fields.len())
        .filter(|&i| schema.dictionary_encoded(i))
        .map(|i| schema.fields[i].name.clone())
        .collect();
    names.sort();
    names
}

#[test]
fn both_engines_dictionary_encode_the_repeating_strings_only() {
    // Enough rows that every writer keeps a dictionary where values repeat: `seq` and
    // the statuses, cities and couriers repeat, the keys and event ids never do.
    let lines: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                r#"{{"event_id":"e{i}","order_id":{},"status":"{}","updated_at":"2024-03-01T10:{:02}:00Z","seq":{},"courier_id":"c{}","city":"{}"}}"#,
                100_000 + i,
                ["NEW", "PAID", "SHIPPED"][i % 3],
                i % 60,
                i % 4,
                i % 7,
                ["Lisbon", "Porto", "Faro"][i % 3],
            )
        })
        .collect();
    let _server = engines::server();
    let product = Product::new();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let input = product.input("orders.jsonl", &refs);
    let config = engines::config(product.path());
    let (plan, mut local_engine) = engines::local_plan(&config, &input);
    assert_eq!(plan.action, Action::Publish);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    engines::spark_census(&mut engine, &config, &input);
    let local = product.path().join("local");
    engines::staged_rows(&mut local_engine, &config, &plan, &local);
    let staging = product.path().join("lake/.staging");
    engines::staged_rows(&mut engine, &config, &plan, &staging);
    let want = vec![dictionary_policy(&config.schema)];
    assert_eq!(want, vec![vec!["city", "courier_id", "status"]]);
    assert_eq!(engines::dictionary_columns(&local), want, "local engine");
    assert_eq!(engines::dictionary_columns(&staging), want, "Spark engine");
}

#[test]
fn many_files_per_date_split_by_key_order() {
    let lines: Vec<String> = (0..23)
        .map(|i| {
            let day = if i % 3 == 0 { "02" } else { "01" };
            event(
                &format!("e{i}"),
                1000 - i * 7,
                "S",
                &format!("2024-03-{day}T10:{:02}:00Z", i),
            )
        })
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    both_engines_agree("files_per_date = 4", &refs);
}

#[test]
fn string_keys_sort_as_the_local_engine_sorts_them() {
    let config = CONFIG.replace(
        r#"order_id   = { type = "int","#,
        r#"order_id   = { type = "string","#,
    );
    assert_ne!(config, CONFIG);
    let lines: Vec<String> = ["b", "a", "é", "B", "a b", "10", "9", "", "z\\u00e9"]
        .iter()
        .enumerate()
        .map(|(i, key)| {
            format!(
                r#"{{"event_id":"e{i}","order_id":"{key}","status":"S","updated_at":"2024-03-01T10:00:00Z"}}"#
            )
        })
        .collect();
    both_engines_agree_in(
        Product::with_config(&config),
        (lines.join("\n") + "\n").as_bytes(),
    );
}
