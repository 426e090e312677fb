//! A Spark-side failure during the stage is an engine error naming the remote, and the
//! staging folder keeps nothing the stage wrote.

use wharf::Error;
use wharf::engine::Engine;
use wharf::engine::spark::{SparkEngine, winners};

use crate::engines;
use crate::kit::{Product, event};

#[test]
fn a_spark_error_while_staging_leaves_staging_empty() {
    let _server = engines::server();
    let product = Product::with_settings("");
    let input = product.input(
        "orders.jsonl",
        &[
            &event("e1", 1, "A", "2024-03-01T10:00:00Z"),
            &event("e2", 2, "B", "2024-03-02T10:00:00Z"),
        ],
    );
    let config = engines::config(product.path());
    let (plan, _local) = engines::local_plan(&config, &input);
    let mut engine = SparkEngine::connect_to(&engines::remote()).unwrap();
    engines::spark_census(&mut engine, &config, &input);
    // The winners vanish from the session: the write's query fails in Spark.
    engine
        .session()
        .rows(
            &format!("DROP VIEW {}", winners::WINNERS),
            "drop the winners",
        )
        .unwrap();
    let staging = product.path().join("lake/.staging");
    std::fs::create_dir_all(&staging).unwrap();
    let error = engine
        .stage(&config, &plan, &staging, &mut |_| true)
        .expect_err("the winners are gone");
    assert!(matches!(error, Error::Engine { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains(&engines::remote()), "{message}");
    assert_eq!(error.exit_code(), 1);
    let left: Vec<_> = std::fs::read_dir(&staging).unwrap().collect();
    assert!(left.is_empty(), "staging keeps {left:?}");
}
