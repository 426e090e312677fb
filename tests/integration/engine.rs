//! The engine's config (`[engine]`) and flags (`--engine`, `--remote`): a wrong one is a
//! usage error naming the file or flag and the fix, before anything is read or written;
//! the run log names the engine that landed.

use std::fs;

use crate::kit::{Product, event};

fn one_event(product: &Product) -> std::path::PathBuf {
    product.input(
        "a.jsonl",
        &[&event("e1", 1, "PAID", "2024-03-01T10:00:00Z")],
    )
}

/// Nothing of the product's state, publish or quarantine folders exists.
fn untouched(product: &Product) {
    for folder in [&product.state, &product.publish, &product.quarantine] {
        assert!(!folder.exists(), "{} was written", folder.display());
    }
}

#[test]
fn a_spark_engine_in_a_build_without_spark_is_a_config_error_naming_the_file() {
    let product = Product::with_settings("[engine]\nkind = \"spark\"\nremote = \"sc://h:15002\"");
    let input = one_event(&product);
    let ran = product.wharf(&["run", input.to_str().unwrap()]);
    if cfg!(feature = "spark") {
        return; // the Spark suite lands with it
    }
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(ran.stderr.contains("wharf.toml"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("cargo build --features spark"),
        "{}",
        ran.stderr
    );
    untouched(&product);
}

#[test]
fn wrong_engine_settings_are_refused_before_anything_is_written() {
    let product = Product::with_settings("[engine]\nremote = \"http://h:15002\"");
    let input = one_event(&product);
    let ran = product.wharf(&["run", input.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("wharf.toml") && ran.stderr.contains("sc://host:15002"),
        "{}",
        ran.stderr
    );
    untouched(&product);

    let product = Product::with_settings("[engine]\nkind = \"duckdb\"");
    let ran = product.wharf(&["plan", one_event(&product).to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("\"local\" or \"spark\""),
        "{}",
        ran.stderr
    );
    untouched(&product);
}

#[test]
fn engine_flags_override_the_config_and_are_checked_as_it_is() {
    let product = Product::with_settings("");
    let input = one_event(&product);
    let input = input.to_str().unwrap();
    for args in [
        vec!["run", input, "--remote", "localhost:15002"],
        vec!["plan", input, "--engine", "local", "--remote", "sc://"],
        vec!["run", input, "--engine", "flink"],
    ] {
        let ran = product.wharf(&args);
        assert_eq!(ran.code, 2, "{args:?}: {}", ran.stderr);
        assert!(
            ran.stderr.contains("--engine") || ran.stderr.contains("--remote"),
            "{args:?}: {}",
            ran.stderr
        );
        untouched(&product);
    }
    if !cfg!(feature = "spark") {
        let ran = product.wharf(&["run", input, "--engine", "spark", "--remote", "sc://h:1"]);
        assert_eq!(ran.code, 2, "{}", ran.stderr);
        assert!(
            ran.stderr.contains("cargo build --features spark"),
            "{}",
            ran.stderr
        );
        untouched(&product);
    }
    // A remote in the config waits for `--engine spark`; a local run lands without it.
    let product = Product::with_settings("[engine]\nkind = \"local\"\nremote = \"sc://h:1\"");
    let input = one_event(&product);
    let ran = product.wharf(&["run", input.to_str().unwrap(), "--engine", "local"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(product.dates(), ["2024-03-01"]);
}

#[test]
fn the_run_log_names_the_engine_that_landed() {
    let product = Product::with_settings("");
    let input = one_event(&product);
    let ran = product.wharf(&["run", input.to_str().unwrap()]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let log = fs::read_to_string(product.state.join("runs.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(log.trim()).unwrap();
    assert_eq!(record["engine"], "local", "{log}");
    // The local engine has no session settings: the field is left out.
    assert!(record.get("engine_settings").is_none(), "{log}");
}
