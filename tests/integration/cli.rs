//! Bad invocations get a message naming the path and the fix, and the §8 exit code.

use crate::kit::{Product, event, wharf};

#[test]
fn missing_directory_and_empty_inputs_are_usage_errors() {
    let product = Product::with_settings("");
    let missing = product.path().join("inbox/nope.jsonl");
    for (path, words) in [
        (missing.to_str().unwrap(), "no such file"),
        (
            product.path().join("inbox").to_str().unwrap(),
            "is a directory",
        ),
        ("", "INPUT"),
    ] {
        let ran = product.wharf(&["plan", path]);
        assert_eq!(ran.code, 2, "{path}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(words) && ran.stderr.contains(path),
            "{}",
            ran.stderr
        );
        assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    }
}

#[test]
fn a_missing_config_is_exit_2_naming_it() {
    let ran = wharf(&["plan", "x.jsonl", "--config", "/nonexistent/wharf.toml"]);
    assert_eq!(ran.code, 2);
    assert!(
        ran.stderr.contains("/nonexistent/wharf.toml"),
        "{}",
        ran.stderr
    );
}

#[test]
fn unknown_flags_are_usage_errors() {
    assert_eq!(wharf(&["plan", "--frobnicate"]).code, 2);
    assert_eq!(wharf(&["--help"]).code, 0);
}

#[test]
fn errors_in_json_mode_are_json_too() {
    let product = Product::with_settings("");
    let ran = product.wharf(&["plan", "nope.jsonl", "--json"]);
    assert_eq!(ran.code, 2);
    assert_eq!(ran.json()["exit_code"], 2);
}

#[test]
fn the_human_report_is_inert_to_escape_sequences() {
    let product = Product::with_settings("");
    let input = product.input(
        "evil\u{1b}]52;c;aGk=\u{7}.jsonl",
        &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")],
    );
    let ran = product.wharf(&["plan", input.to_str().unwrap()]);
    assert_eq!(ran.code, 0);
    assert!(
        !ran.stdout.contains('\u{1b}') && !ran.stdout.contains('\u{7}'),
        "{:?}",
        ran.stdout
    );
}

#[test]
fn plan_json_has_the_contract_fields() {
    let product = Product::with_settings("");
    let input = product.input("in.jsonl", &[&event("e1", 1, "A", "2024-03-01T10:00:00Z")]);
    let plan = product.plan_json(&input).json();
    for field in [
        "action",
        "reason",
        "input_name",
        "input_sha256",
        "counts",
        "dates",
    ] {
        assert!(plan.get(field).is_some(), "{field}");
    }
    for count in [
        "lines",
        "blank",
        "accepted",
        "rejected",
        "retries",
        "keys",
        "ties_by_arrival",
        "by_reason",
    ] {
        assert!(plan["counts"].get(count).is_some(), "{count}");
    }
    assert_eq!(plan["dates"][0]["rows_before"], serde_json::Value::Null);
    assert_eq!(plan["input_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn run_refuses_temporary_names_and_symlinks_but_plan_reads_them() {
    let product = Product::with_settings("");
    let line = event("e1", 1, "A", "2024-03-01T10:00:00Z");
    let partial = product.input("x.jsonl.part", &[&line]);
    let real = product.input("real.jsonl", &[&line]);
    let link = product.path().join("inbox/link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for path in [&partial, &link] {
        let ran = product.wharf(&["run", path.to_str().unwrap()]);
        assert_eq!(ran.code, 2, "{}", ran.stderr);
        assert!(
            ran.stderr.contains("temporary name") || ran.stderr.contains("symbolic link"),
            "{}",
            ran.stderr
        );
    }
    assert!(!product.path().join("lake").exists() && !product.path().join("state").exists());
    assert_eq!(
        product.plan_json(&partial).code,
        0,
        "planning a file still being written is harmless"
    );
}
