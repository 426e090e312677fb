//! OpenLineage run events (spec 2-0-2): a START and a COMPLETE (published, skipped) or
//! FAIL (refused, error) per landing, sharing the landing's run id. Job = the product,
//! input dataset = the delivery, output dataset = the lake; Wharf's counts ride as a
//! custom run facet (`wharf_landing`), the refusal's reason code as an `errorMessage`
//! facet. Both are sent once the landing ends, the START stamped with its start time:
//! the run id is made inside the landing.

use std::path::Path;

use serde_json::{Value as Json, json};

use crate::config::Config;
use crate::land::{RunOutcome, RunStatus};

const SCHEMA: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
const PRODUCER: &str = concat!(
    "https://github.com/wharf/wharf/tree/",
    env!("CARGO_PKG_VERSION")
);
const FACET_SCHEMA: &str = "https://github.com/wharf/wharf/blob/main/docs/operations.md#lineage";
const ERROR_SCHEMA: &str = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet";

/// The START and the ending event of a finished landing.
pub fn of_outcome(config: &Config, outcome: &RunOutcome, started: &str, ended: &str) -> [Json; 2] {
    let plan = &outcome.plan;
    let input = input_dataset(config, &plan.input_name);
    let mut facets = json!({
        "wharf_landing": {
            "_producer": PRODUCER,
            "_schemaURL": FACET_SCHEMA,
            "action": outcome.status.code(),
            "reason": plan.reason(),
            "input_sha256": plan.input_sha256,
            "counts": plan.counts,
            "dates": plan.dates.iter().map(|d| d.event_date.to_string()).collect::<Vec<_>>(),
        }
    });
    let end = match outcome.status {
        RunStatus::Refused => {
            facets["errorMessage"] = error_facet(plan.reason().unwrap_or("refused"));
            "FAIL"
        }
        RunStatus::Published | RunStatus::Skipped => "COMPLETE",
    };
    [
        event(config, "START", started, &plan.run_id, &input, json!({})),
        event(config, end, ended, &plan.run_id, &input, facets),
    ]
}

/// The START and FAIL of a landing that ended in an error.
pub fn of_error(config: &Config, path: &Path, run_id: &str, now: &str) -> [Json; 2] {
    let name = super::alert::input_name(path);
    let input = input_dataset(config, &name);
    let facets = json!({ "errorMessage": error_facet("error") });
    [
        event(config, "START", now, run_id, &input, json!({})),
        event(config, "FAIL", now, run_id, &input, facets),
    ]
}

/// An errorMessage facet carrying a reason code only: the message is what a lineage
/// tool shows, and a code never holds a row value.
fn error_facet(code: &str) -> Json {
    json!({
        "_producer": PRODUCER,
        "_schemaURL": ERROR_SCHEMA,
        "message": code,
        "programmingLanguage": "rust",
    })
}

fn event(
    config: &Config,
    kind: &str,
    time: &str,
    run_id: &str,
    input: &Json,
    facets: Json,
) -> Json {
    json!({
        "eventType": kind,
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": SCHEMA,
        "run": { "runId": run_id, "facets": facets },
        "job": { "namespace": "wharf", "name": config.product },
        "inputs": [input],
        "outputs": [output_dataset(config)],
    })
}

/// The delivery: a file (or set folder) of the inbox.
fn input_dataset(config: &Config, name: &str) -> Json {
    dataset(&config.inbox.join(name).display().to_string())
}

/// The lake: the publish root's table URL, or its folder.
fn output_dataset(config: &Config) -> Json {
    dataset(&config.lake.location())
}

/// OpenLineage's naming: `file` + the absolute path locally, `s3://bucket` + the key.
fn dataset(location: &str) -> Json {
    let location = location.strip_prefix("file://").unwrap_or(location);
    let (namespace, name) = match location.strip_prefix("s3://") {
        Some(rest) => {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            (format!("s3://{bucket}"), key.to_owned())
        }
        None => ("file".to_owned(), location.to_owned()),
    };
    json!({ "namespace": namespace, "name": name, "facets": {} })
}
