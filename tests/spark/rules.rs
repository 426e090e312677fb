//! Value rules (CONTRACT.md §1.2) on the Spark engine: the classification is the
//! driver's, the same contract code as the local engine's, so `kit::rules`' matrix holds
//! cell for cell on a hive lake and a Delta table; and both engines agree on a file with
//! every rule broken somewhere.

use crate::engines;
use crate::kit::rules::{self, CASES};
use crate::kit::{Product, Ran};
use crate::landing::{agreed, spark_run_json};

fn spark(product: &Product, input: &std::path::Path) -> Ran {
    spark_run_json(product, input)
}

#[test]
fn each_rule_and_violation_on_a_hive_lake_on_spark() {
    let _server = engines::server();
    assert_eq!(rules::matrix("hive", &spark).len(), 9);
}

#[test]
fn each_rule_and_violation_on_a_delta_table_on_spark() {
    let _server = engines::server();
    assert_eq!(rules::matrix("delta", &spark).len(), 9);
}

/// Each rule's cell lands the same on both engines (action, reason, every count).
#[test]
fn both_engines_agree_on_every_rule() {
    let _server = engines::server();
    for case in &CASES {
        for extra in [", on_violation = \"breach\"", ""] {
            let local = rules::cell(case, "hive", extra, &|p, i| p.run_json(i));
            let spark = rules::cell(case, "hive", extra, &spark);
            assert_eq!(
                agreed(&local.ran.json()),
                agreed(&spark.ran.json()),
                "{} {extra}",
                case.rule
            );
        }
    }
}
