//! The growth guard (CONTRACT.md §5.10) on a Delta table: a refused input leaves every
//! object of the table as it was (no version, no upload); `--allow-growth` publishes it
//! in one commit.

use super::{Root, kit, run, wharf};
use kit::product::{Product, schema};

/// `n` orders on 2024-03-01, ids from `first`.
fn day(product: &Product, name: &str, first: u64, n: u64) -> std::path::PathBuf {
    let lines: Vec<String> = (first..first + n)
        .map(|i| kit::event(&format!("e{i}"), i as i64, "PAID", "2024-03-01T10:00:00Z"))
        .collect();
    product.input(name, &lines.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_doubled_delivery_to_a_delta_table_is_refused_with_the_table_unchanged() {
    let product = Product::with_config(&format!(
        "product = \"orders\"\npublish_root = \"lake/orders\"\ntable_format = \"delta\"\nmax_growth = 2.0\n{}",
        schema()
    ));
    let root = Root::local(&product.publish);
    assert_eq!(
        run(&product, &day(&product, "a.jsonl", 0, 2), false).code,
        0
    );
    let objects = root.objects();
    let bytes: Vec<_> = objects.iter().map(|o| root.get(o)).collect();

    let doubled = day(&product, "b.jsonl", 100, 5);
    let ran = run(&product, &doubled, false);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json()["reason"], "growth");
    assert!(ran.json()["detail"].as_str().unwrap().contains("2 → 5"));
    assert_eq!(root.objects(), objects, "no version, no upload");
    let after: Vec<_> = objects.iter().map(|o| root.get(o)).collect();
    assert_eq!(after, bytes);

    let allowed = wharf(
        &product,
        &["run", doubled.to_str().unwrap(), "--allow-growth", "--json"],
        false,
    );
    assert_eq!(allowed.code, 0, "{}{}", allowed.stdout, allowed.stderr);
    assert_eq!(root.commits().len(), 2);
    assert_eq!(root.rows()["2024-03-01"].len(), 5);
}
