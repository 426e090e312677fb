//! CONTRACT.md §2–4 landed for real: the rows read back from Parquet are the rank-1
//! events, whatever the offsets, retries and ties.

use crate::kit::{Product, event, event_seq, micros, statuses};

#[test]
fn the_reference_example_publishes_exactly_three_rows() {
    let product = Product::with_settings("");
    let input = product.input(
        "orders.jsonl",
        &[
            r#"{"event_id":"e1","order_id":101,"status":"PENDING","updated_at":"2024-03-01T10:00:00Z"}"#,
            r#"{"event_id":"e2","order_id":102,"status":"PAID","updated_at":"2024-03-01T10:05:00Z"}"#,
            r#"{"event_id":"e3","order_id":101,"status":"PAID","updated_at":"2024-03-01T10:15:00Z"}"#,
            r#"{"event_id":"e4","order_id":103,"status":"PENDING","updated_at":"2024-03-01T10:20:00Z"}"#,
            r#"{"event_id":"e5","order_id":102,"status":"SHIPPED","updated_at":"2024-03-01T11:00:00Z"}"#,
        ],
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(product.dates(), ["2024-03-01"]);
    let rows = product.rows("2024-03-01");
    assert_eq!(
        statuses(&rows),
        [
            (101, "PAID".into()),
            (102, "SHIPPED".into()),
            (103, "PENDING".into())
        ]
    );
    let at: Vec<&str> = rows.iter().map(|r| r["updated_at"].as_str()).collect();
    assert_eq!(
        at,
        [
            micros("2024-03-01T10:15:00Z"),
            micros("2024-03-01T11:00:00Z"),
            micros("2024-03-01T10:20:00Z")
        ]
    );
}

#[test]
fn the_reference_example_with_an_email_refuses_and_keeps_the_day() {
    let product = Product::with_settings("");
    let good = product.input(
        "a.jsonl",
        &[&event("e1", 101, "PAID", "2024-03-01T10:15:00Z")],
    );
    assert_eq!(product.run_json(&good).code, 0);
    let before = product.tree("lake");
    let leaky = product.input(
        "b.jsonl",
        &[r#"{"event_id":"e9","order_id":101,"status":"PENDING","updated_at":"2024-03-01T12:00:00Z","email":"a@example.com"}"#],
    );
    assert_eq!(product.run_json(&leaky).code, 3);
    assert_eq!(product.tree("lake"), before);
}

#[test]
fn instants_not_strings_decide_across_offsets() {
    let product = Product::with_settings("");
    // As strings "10:15:00+05:30" > "05:00:00Z", but it is 04:45Z: the earlier instant.
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "LATER", "2024-03-01T05:00:00Z"),
            &event("e2", 1, "EARLIER", "2024-03-01T10:15:00+05:30"),
        ],
    );
    assert_eq!(product.run_json(&input).code, 0);
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "LATER".into())]);
}

#[test]
fn one_nanosecond_decides_the_winner() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "NEWER", "2024-03-01T10:00:00.000000001Z"),
            &event("e2", 1, "OLDER", "2024-03-01T10:00:00.000000000Z"),
        ],
    );
    let out = product.run_json(&input).json();
    assert_eq!(out["counts"]["ties_by_arrival"], 0);
    assert_eq!(statuses(&product.rows("2024-03-01")), [(1, "NEWER".into())]);
}

#[test]
fn a_retry_written_with_two_offsets_is_identical() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "PAID", "2024-03-01T15:30:00+05:30"),
            &event("e1", 1, "PAID", "2024-03-01T06:00:00.000-04:00"),
        ],
    );
    let out = product.run_json(&input).json();
    assert_eq!(out["action"], "published");
    assert_eq!(out["counts"]["retries"], 2);
    assert_eq!(out["counts"]["keys"], 1);
    assert_eq!(product.rows("2024-03-01").len(), 1);
}

#[test]
fn a_contradicting_retry_refuses_on_its_own_line() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "PAID", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "PENDING", "2024-03-01T10:00:00Z"),
        ],
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 3);
    let out = ran.json();
    assert_eq!(out["reason"], "conflict");
    let rejects = product.rejects(out["input_sha256"].as_str().unwrap());
    assert_eq!(
        (rejects[0]["line"].as_u64(), rejects[0]["field"].as_str()),
        (Some(3), Some("status"))
    );
    assert!(product.dates().is_empty());
}

/// §2 is resolved once the whole file is read, so a conflict is found after it was
/// ranked; the refused plan must still count the file as the contract does, without it.
#[test]
fn a_conflict_under_another_key_and_date_is_left_out_of_the_counts() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "PAID", "2024-03-01T10:00:00Z"),
            &event("e1", 1, "PAID", "2024-03-01T10:00:00Z"),
            &event("e1", 3, "PAID", "2024-03-02T10:00:00Z"),
        ],
    );
    let planned = product.plan_json(&input).json();
    assert_eq!(planned["reason"], "conflict");
    let counts = &planned["counts"];
    assert_eq!(
        (
            counts["accepted"].as_u64(),
            counts["retries"].as_u64(),
            counts["keys"].as_u64()
        ),
        (Some(3), Some(1), Some(2))
    );
    let dates: Vec<&str> = planned["dates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["event_date"].as_str().unwrap())
        .collect();
    assert_eq!(
        dates,
        ["2024-03-01"],
        "the conflicting line's date is not the file's"
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 3);
    let rejects = product.rejects(planned["input_sha256"].as_str().unwrap());
    assert_eq!(rejects.len(), 1);
    assert_eq!(
        (rejects[0]["line"].as_u64(), rejects[0]["event_id"].as_str()),
        (Some(4), Some("e1"))
    );
    assert!(product.dates().is_empty(), "a refusal publishes nothing");
}

#[test]
fn seq_breaks_a_timestamp_tie_and_missing_seq_ranks_below() {
    let product = Product::with_settings("");
    let at = "2024-03-01T10:00:00Z";
    let input = product.input(
        "in.jsonl",
        &[
            &event_seq("a1", 1, "HIGH_SEQ", at, 5),
            &event_seq("a2", 1, "LOW_SEQ", at, 4),
            &event("b1", 2, "NO_SEQ_LATER_LINE", at),
            &event_seq("b2", 2, "WITH_SEQ", at, 0),
        ],
    );
    let out = product.run_json(&input).json();
    assert_eq!(out["counts"]["ties_by_arrival"], 0);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "HIGH_SEQ".into()), (2, "WITH_SEQ".into())]
    );
}

#[test]
fn a_full_tie_goes_to_the_later_line_and_is_counted() {
    let product = Product::with_settings("");
    let at = "2024-03-01T10:00:00Z";
    let input = product.input(
        "in.jsonl",
        &[
            &event_seq("a1", 1, "FIRST", at, 3),
            &event_seq("a2", 1, "SECOND", at, 3),
            &event("b1", 2, "FIRST", at),
            &event("b2", 2, "SECOND", at),
        ],
    );
    let out = product.run_json(&input).json();
    assert_eq!(out["counts"]["ties_by_arrival"], 2);
    assert_eq!(
        statuses(&product.rows("2024-03-01")),
        [(1, "SECOND".into()), (2, "SECOND".into())]
    );
}

#[test]
fn dates_come_from_rank_one_rows_in_utc() {
    let product = Product::with_settings("max_dates = 1");
    let input = product.input(
        "in.jsonl",
        &[
            // A stale event on another date does not count toward max_dates.
            &event("e1", 1, "STALE", "2024-02-28T23:00:00Z"),
            &event("e2", 1, "NOW", "2024-03-01T01:00:00+05:30"), // 2024-02-29T19:30Z
            &event("e3", 2, "NOW", "2024-02-29T23:59:60Z"),      // leap second: still the 29th
        ],
    );
    let ran = product.run_json(&input);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(product.dates(), ["2024-02-29"]);
    assert_eq!(
        statuses(&product.rows("2024-02-29")),
        [(1, "NOW".into()), (2, "NOW".into())]
    );
}

#[test]
fn the_same_input_always_produces_the_same_bytes() {
    let lines: Vec<String> = (0..300)
        .map(|i| {
            event(
                &format!("e{i}"),
                (i * 7919) % 101,
                "S",
                &format!("2024-03-01T10:{:02}:00Z", i % 60),
            )
        })
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (a, b) = (Product::with_settings(""), Product::with_settings(""));
    for product in [&a, &b] {
        let input = product.input("in.jsonl", &refs);
        assert_eq!(product.run_json(&input).code, 0);
    }
    let rows = a.rows("2024-03-01");
    let keys: Vec<i64> = rows
        .iter()
        .map(|r| r["order_id"].parse().unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "rows sorted by key");
    // The publish root (its owner marker beside it names each product's state root).
    assert_eq!(a.tree("lake/orders"), b.tree("lake/orders"));
}
