//! OpenLineage run events (spec 2-0-2): a START and a COMPLETE (published, skipped) or
//! FAIL (refused, error) per landing, sharing the landing's run id. Job = the product in
//! the configured job namespace, input dataset = the delivery, output dataset = the
//! lake, each named as OpenLineage's Naming conventions say. Wharf's counts ride as a
//! custom run facet (`wharf_landing`, its JSON Schema shipped as [`FACET_SCHEMA_FILE`]);
//! a FAIL's `errorMessage` facet carries the refusal's or the error's own sentence.
//! Both events are sent once the landing ends, stamped from the one [`Started`] instant
//! the landing took at its start: the START with it, the end with it plus the landing's
//! span on the monotonic clock, so the end is always later.

use std::path::Path;

use serde_json::{Value as Json, json};

use crate::cli::report::inert;
use crate::config::Config;
use crate::error::Error;
use crate::land::{RunOutcome, RunStatus, Started};
use crate::plan::{Plan, Refusal};

const SCHEMA: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent";
const PRODUCER: &str = concat!(
    "https://github.com/wharf/wharf/tree/",
    env!("CARGO_PKG_VERSION")
);
/// The `wharf_landing` facet's schema in the repository: version 1 of the facet. A
/// released file is never edited; a change of the facet's fields is a `-2` file.
pub const FACET_SCHEMA_FILE: &str = "docs/lineage/WharfLandingRunFacet-1.json";
/// [`FACET_SCHEMA_FILE`] at the tag of the release that emits the event: an immutable
/// pointer, as the spec asks of a facet's `_schemaURL`.
const FACET_SCHEMA: &str = concat!(
    "https://raw.githubusercontent.com/wharf/wharf/",
    env!("CARGO_PKG_VERSION"),
    "/docs/lineage/WharfLandingRunFacet-1.json#/$defs/WharfLandingRunFacet"
);
const ERROR_SCHEMA: &str = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet";

/// The START and the ending event of a finished landing.
pub fn of_outcome(config: &Config, outcome: &RunOutcome) -> [Json; 2] {
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
            // The sentence the run's output prints: a reason code, line numbers and
            // field names, never a row value.
            let message = match &plan.refusal {
                Some(refusal) => refusal_sentence(refusal, plan),
                None => plan.reason().unwrap_or("refused").to_owned(),
            };
            facets["errorMessage"] = error_facet(&message);
            "FAIL"
        }
        RunStatus::Published | RunStatus::Skipped => "COMPLETE",
    };
    let started = &outcome.started;
    let end_time = started.end_timestamp(outcome.took);
    [
        event(
            config,
            "START",
            &started.timestamp(),
            &plan.run_id,
            &input,
            json!({}),
        ),
        event(config, end, &end_time, &plan.run_id, &input, facets),
    ]
}

/// The START and FAIL of a landing begun at `started` that ended now in `error`.
pub fn of_error(
    config: &Config,
    path: &Path,
    error: &Error,
    run_id: &str,
    started: Started,
) -> [Json; 2] {
    let name = super::alert::input_name(path);
    let input = input_dataset(config, &name);
    let end_time = started.end_timestamp(started.elapsed());
    // An error's message names paths, actions and causes, never a row value (the
    // engine's errors carry Spark's error condition, not its message).
    let facets = json!({ "errorMessage": error_facet(&error.to_string()) });
    [
        event(
            config,
            "START",
            &started.timestamp(),
            run_id,
            &input,
            json!({}),
        ),
        event(config, "FAIL", &end_time, run_id, &input, facets),
    ]
}

/// The refusal's sentence, led by its reason code (a breach's sentence leads with it).
fn refusal_sentence(refusal: &Refusal, plan: &Plan) -> String {
    let sentence = refusal.explain(plan);
    match sentence.starts_with(refusal.code()) {
        true => sentence,
        false => format!("{}: {sentence}", refusal.code()),
    }
}

/// An errorMessage facet: `message` is what a lineage tool shows on the failed run.
fn error_facet(message: &str) -> Json {
    json!({
        "_producer": PRODUCER,
        "_schemaURL": ERROR_SCHEMA,
        "message": inert(message),
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
        "job": { "namespace": config.paging.job_namespace(), "name": config.product },
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

/// OpenLineage's Naming: namespace `s3://bucket` and the object key without a leading
/// or trailing slash, or namespace `file` and the absolute path without a trailing
/// slash; a local table's `file://` URL is its path.
fn dataset(location: &str) -> Json {
    let location = location.strip_prefix("file://").unwrap_or(location);
    let (namespace, name) = match location.strip_prefix("s3://") {
        Some(rest) => {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            let key = segments(key);
            let key = if key.is_empty() { "/".to_owned() } else { key };
            (format!("s3://{bucket}"), key)
        }
        None => {
            let path = segments(location);
            let rooted = if location.starts_with('/') { "/" } else { "" };
            ("file".to_owned(), format!("{rooted}{path}"))
        }
    };
    json!({ "namespace": namespace, "name": name, "facets": {} })
}

/// A path's segments joined by single slashes: no empty or `.` segment, so no leading,
/// trailing or doubled slash.
fn segments(path: &str) -> String {
    path.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(location: &str) -> (String, String) {
        let d = dataset(location);
        (
            d["namespace"].as_str().unwrap().into(),
            d["name"].as_str().unwrap().into(),
        )
    }

    #[test]
    fn datasets_are_named_as_the_naming_spec_says() {
        let n = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(named("s3://b/tables/orders/"), n("s3://b", "tables/orders"));
        assert_eq!(named("s3://b/tables/orders"), n("s3://b", "tables/orders"));
        assert_eq!(named("s3://b/inbox//a.jsonl"), n("s3://b", "inbox/a.jsonl"));
        assert_eq!(named("s3://b/"), n("s3://b", "/"));
        assert_eq!(
            named("file:///srv/lake/orders/"),
            n("file", "/srv/lake/orders")
        );
        assert_eq!(named("/srv/lake/orders"), n("file", "/srv/lake/orders"));
        assert_eq!(named("/srv/inbox/./set/"), n("file", "/srv/inbox/set"));
        assert_eq!(named("/"), n("file", "/"));
    }

    #[test]
    fn the_facet_schema_url_names_the_shipped_file_at_this_version() {
        let version = env!("CARGO_PKG_VERSION");
        let (file, pointer) = FACET_SCHEMA.split_once('#').unwrap();
        assert!(
            file.ends_with(&format!("/{version}/{FACET_SCHEMA_FILE}")),
            "{file}"
        );
        assert_eq!(pointer, "/$defs/WharfLandingRunFacet");
        let shipped: Json = serde_json::from_str(include_str!(
            "../../docs/lineage/WharfLandingRunFacet-1.json"
        ))
        .unwrap();
        assert!(shipped["$defs"]["WharfLandingRunFacet"].is_object());
    }
}
