//! CONTRACT.md §11 on Spark: the engine does not read sets or compressed inputs yet, so
//! it refuses them before any read, naming itself and the local engine; nothing is
//! written. The local suite (`tests/integration/sets.rs`) lands them.

use std::io::Write;

use wharf::engine::Engine;
use wharf::engine::spark::SparkEngine;
use wharf::plan::Manifest;

use crate::engines;
use crate::kit::{Product, event};

#[test]
fn a_set_or_a_compressed_file_is_refused_naming_the_local_engine() {
    let _server = engines::server();
    let product = Product::with_settings("");
    let line = event("e1", 1, "A", "2024-03-01T10:00:00Z") + "\n";
    let set = product.path().join("inbox/set");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(set.join("part-0.jsonl"), &line).unwrap();
    std::fs::write(set.join("_SUCCESS"), b"").unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(line.as_bytes()).unwrap();
    let file = product.input_bytes("day.jsonl.gz", &gz.finish().unwrap());
    let config = engines::config(product.path());
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    for path in [set, file] {
        let input = wharf::input::open(&path, wharf::input::SET_MARKER).unwrap();
        let error = engine
            .census(
                &config,
                &input,
                &Manifest::default(),
                &wharf::store::dataset::HiveFolders(&config.publish_root),
                &mut |_| true,
            )
            .expect_err("Spark refuses");
        let message = error.to_string();
        assert_eq!(error.exit_code(), 2, "{message}");
        assert!(
            message.contains("Spark engine") && message.contains("local engine"),
            "{message}"
        );
    }
    assert!(!product.publish.exists());
}
