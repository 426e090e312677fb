//! Wharf's OpenLineage events checked against the specification's own JSON Schemas with
//! a JSON Schema validator (the `jsonschema` crate, formats asserted): each event
//! against the RunEvent its `schemaURL` names (OpenLineage 2-0-2), each run facet against
//! the schema its `_schemaURL` names (ErrorMessageRunFacet 1-0-1, and Wharf's own
//! `wharf_landing` facet shipped in docs/lineage/, resolved from its URL's path in this
//! repository). OpenLineage's own schemas are not in this repository (no registry package
//! ships them, and copies of other projects' files are not committed here): they are read
//! from `$WHARF_OPENLINEAGE_SPEC` or `../shared/openlineage/` beside the checkout
//! (`OpenLineage.json`, `ErrorMessageRunFacet.json`); where neither has them, events are
//! checked against Wharf's facet schema and the rules below only, and
//! tests/proof/lineage.sh checks them against the Python client's model of the spec. Then per run: one
//! START and one COMPLETE or FAIL, the START strictly earlier; and every dataset named as
//! OpenLineage's Naming conventions say.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use jsonschema::{Registry, Validator};
use serde_json::{Value, json};

const CORE: &str = "https://openlineage.io/spec/2-0-2/OpenLineage.json";
const ERROR_FACET: &str = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json";
/// Where Wharf's facet schemas live in the repository, under the release's tag.
const FACETS_AT: &str = concat!(
    "https://raw.githubusercontent.com/wharf/wharf/",
    env!("CARGO_PKG_VERSION"),
    "/"
);

/// One landing as its two events tell it.
#[derive(Clone, Debug)]
pub struct LineageRun {
    pub run_id: String,
    /// `COMPLETE` or `FAIL`.
    pub end: String,
    /// The `wharf_landing` facet's action (`published`, `skipped`, `refused`), `None`
    /// for an error.
    pub action: Option<String>,
    /// The FAIL's `errorMessage.message`.
    pub message: Option<String>,
    /// The end event, whole.
    pub event: Value,
}

fn repo_json(relative: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{relative}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Reads the NDJSON lineage file at `path`.
pub fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// OpenLineage's schemas' folder, where this machine has one (see the module's doc).
fn spec_folder() -> Option<PathBuf> {
    let folder = match std::env::var_os("WHARF_OPENLINEAGE_SPEC") {
        Some(folder) => PathBuf::from(folder),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/openlineage"),
    };
    folder.join("OpenLineage.json").is_file().then_some(folder)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// What Wharf's facet schema takes from OpenLineage's where their file is absent: a run
/// facet's two required fields, as the spec's BaseFacet states them.
fn base_run_facet() -> Value {
    let uri = json!({ "type": "string", "format": "uri" });
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": { "RunFacet": {
            "type": "object",
            "properties": { "_producer": uri, "_schemaURL": uri },
            "required": ["_producer", "_schemaURL"]
        }}
    })
}

/// The schemas by the URL an event or facet names them by, each built once.
struct Schemas {
    registry: Registry<'static>,
    built: HashMap<String, Validator>,
    /// Whether OpenLineage's own schemas were found (else their URLs are not checked).
    spec: bool,
}

impl Schemas {
    fn new() -> Schemas {
        let facet = "docs/lineage/WharfLandingRunFacet-1.json";
        let mut registry = Registry::new()
            .add(format!("{FACETS_AT}{facet}"), repo_json(facet))
            .unwrap();
        let spec = spec_folder();
        match &spec {
            Some(folder) => {
                registry = registry
                    .add(CORE, read_json(&folder.join("OpenLineage.json")))
                    .unwrap()
                    .add(
                        ERROR_FACET,
                        read_json(&folder.join("ErrorMessageRunFacet.json")),
                    )
                    .unwrap();
            }
            None => {
                eprintln!(
                    "lineage: OpenLineage's JSON Schemas are not on this machine \
                     ($WHARF_OPENLINEAGE_SPEC or ../shared/openlineage/): events are checked \
                     against the wharf_landing facet's schema and the run rules only"
                );
                registry = registry.add(CORE, base_run_facet()).unwrap();
            }
        }
        Schemas {
            registry: registry.prepare().unwrap(),
            built: HashMap::new(),
            spec: spec.is_some(),
        }
    }

    /// Validates `instance` against the schema at `url` (a JSON pointer URL); no schema
    /// outside the registry is fetched, so an unknown URL fails.
    fn validate(&mut self, url: &str, instance: &Value, what: &str) {
        if !self.spec && url.starts_with("https://openlineage.io/") {
            return;
        }
        let registry = &self.registry;
        let validator = self.built.entry(url.to_owned()).or_insert_with(|| {
            jsonschema::options()
                .with_registry(registry)
                .should_validate_formats(true)
                .build(&json!({ "$ref": url }))
                .unwrap_or_else(|e| panic!("{what}: no schema at {url}: {e}"))
        });
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{what} breaks {url}:\n{}\n{instance:#}",
            errors.join("\n")
        );
    }
}

/// Checks every event of `events` (see the module's doc) and returns the runs they tell.
pub fn check_events(events: &[Value]) -> Vec<LineageRun> {
    let mut schemas = Schemas::new();
    let mut by_run: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for (n, event) in events.iter().enumerate() {
        let what = format!("event {n} ({})", event["eventType"]);
        let schema = event["schemaURL"].as_str().unwrap();
        assert_eq!(schema, format!("{CORE}#/$defs/RunEvent"), "{what}");
        schemas.validate(schema, event, &what);
        let facets = event["run"]["facets"].as_object().unwrap();
        for (name, facet) in facets {
            assert!(
                ["wharf_landing", "errorMessage"].contains(&name.as_str()),
                "{what}: facet {name}"
            );
            let url = facet["_schemaURL"].as_str().unwrap();
            schemas.validate(url, facet, &format!("{what} facet {name}"));
        }
        for dataset in event["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .chain(event["outputs"].as_array().unwrap())
        {
            check_naming(dataset, &what);
        }
        let run_id = event["run"]["runId"].as_str().unwrap().to_owned();
        by_run.entry(run_id).or_default().push(event);
    }
    by_run
        .into_iter()
        .map(|(id, run)| one_run(&id, &run))
        .collect()
}

/// A START then a COMPLETE or FAIL, the START strictly earlier.
fn one_run(run_id: &str, events: &[&Value]) -> LineageRun {
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["eventType"].as_str().unwrap())
        .collect();
    assert!(
        kinds.len() == 2 && kinds[0] == "START" && ["COMPLETE", "FAIL"].contains(&kinds[1]),
        "run {run_id}: {kinds:?}"
    );
    let time =
        |e: &Value| chrono::DateTime::parse_from_rfc3339(e["eventTime"].as_str().unwrap()).unwrap();
    let (start, end) = (time(events[0]), time(events[1]));
    assert!(
        start < end,
        "run {run_id}: START {start} is not before its {} {end}",
        kinds[1]
    );
    assert_eq!(events[0]["job"], events[1]["job"], "run {run_id}");
    let facets = &events[1]["run"]["facets"];
    LineageRun {
        run_id: run_id.to_owned(),
        end: kinds[1].to_owned(),
        action: facets["wharf_landing"]["action"]
            .as_str()
            .map(str::to_owned),
        message: facets["errorMessage"]["message"]
            .as_str()
            .map(str::to_owned),
        event: events[1].clone(),
    }
}

/// OpenLineage's Naming: `file` and an absolute path, or `s3://bucket` and a key; no
/// trailing (or, for a key, leading) slash, no empty segment.
fn check_naming(dataset: &Value, what: &str) {
    let namespace = dataset["namespace"].as_str().unwrap();
    let name = dataset["name"].as_str().unwrap();
    let segments_ok = name == "/"
        || name
            .trim_start_matches('/')
            .split('/')
            .all(|s| !s.is_empty());
    assert!(segments_ok, "{what}: dataset name {name:?}");
    match namespace.strip_prefix("s3://") {
        Some(bucket) => {
            assert!(
                !bucket.is_empty() && !bucket.contains('/'),
                "{what}: {namespace}"
            );
            assert!(!name.starts_with('/') || name == "/", "{what}: {name}");
        }
        None => {
            assert_eq!(namespace, "file", "{what}: {dataset}");
            assert!(name.starts_with('/'), "{what}: {name}");
        }
    }
}
