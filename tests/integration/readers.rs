//! The dataset read back by polars' hive scan (a reader that is not ours) equals the
//! plan's winners, types included, and ignores the staging folder.

use polars::prelude::*;

use crate::kit::{Product, event, event_seq};

fn scan(root: &std::path::Path) -> DataFrame {
    let args = ScanArgsParquet {
        hive_options: HiveOptions::new_enabled(),
        ..Default::default()
    };
    let path = PlRefPath::new(root.to_str().unwrap());
    LazyFrame::scan_parquet(path, args)
        .unwrap()
        .sort(["order_id"], Default::default())
        .collect()
        .unwrap()
}

#[test]
fn polars_hive_scan_reads_exactly_the_winners_with_their_types() {
    let product = Product::with_settings("");
    let input = product.input(
        "in.jsonl",
        &[
            &event_seq("e1", 2, "PENDING", "2024-03-01T10:00:00Z", 1),
            &event_seq("e2", 2, "PAID", "2024-03-01T15:30:00.123456789+05:30", 2),
            &event("e3", 1, "SHIPPED", "2024-03-02T09:00:00Z"),
            r#"{"event_id":"e4","order_id":3,"status":"PAID","updated_at":"2024-03-02T09:00:00Z","courier_id":"c1","city":"Porto"}"#,
        ],
    );
    assert_eq!(product.run_json(&input).code, 0);
    // Staging lives beside the publish root, never inside it: polars' Rust hive scan
    // reads hidden folders inside the root too (proved here with a stray one).
    let stray = product.publish.join(".hidden/event_date=2024-03-09");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::copy(
        product
            .publish
            .join("event_date=2024-03-01/part-00000.parquet"),
        stray.join("part-00000.parquet"),
    )
    .unwrap();
    assert_eq!(
        scan(&product.publish).height(),
        4,
        "polars reads hidden folders inside the root"
    );
    std::fs::remove_dir_all(product.publish.join(".hidden")).unwrap();
    let config = wharf::config::Config::load(&product.config).unwrap();
    let staging = wharf::land::hive::swap::staging_root(&config);
    assert!(
        !staging.starts_with(&product.publish),
        "{}",
        staging.display()
    );
    assert_eq!(staging.parent(), product.publish.parent());

    let frame = scan(&product.publish);
    assert_eq!(frame.height(), 3);
    let schema = frame.schema();
    assert_eq!(schema.get("order_id"), Some(&DataType::Int64));
    assert_eq!(schema.get("seq"), Some(&DataType::Int64));
    assert_eq!(schema.get("status"), Some(&DataType::String));
    assert_eq!(
        schema.get("updated_at"),
        Some(&DataType::Datetime(
            TimeUnit::Microseconds,
            Some(TimeZone::UTC)
        ))
    );
    let ids: Vec<Option<i64>> = frame
        .column("order_id")
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(ids, [Some(1), Some(2), Some(3)]);
    let statuses: Vec<Option<&str>> = frame
        .column("status")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(statuses, [Some("SHIPPED"), Some("PAID"), Some("PAID")]);
    let at = frame
        .column("updated_at")
        .unwrap()
        .cast(&DataType::Int64)
        .unwrap();
    let at: Vec<Option<i64>> = at.i64().unwrap().iter().collect();
    assert_eq!(
        at[1],
        Some(1_709_287_200_123_456),
        "nanoseconds truncated to micros, offset applied"
    );
    let dates = frame
        .column("event_date")
        .unwrap()
        .cast(&DataType::String)
        .unwrap();
    let dates: Vec<Option<&str>> = dates.str().unwrap().iter().collect();
    assert_eq!(
        dates,
        [Some("2024-03-02"), Some("2024-03-01"), Some("2024-03-02")]
    );
    let cities: Vec<Option<&str>> = frame
        .column("city")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(cities, [None, None, Some("Porto")]);
}
