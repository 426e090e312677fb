"""Checks Wharf's OpenLineage events (NDJSON, argv[1]) against the OpenLineage spec as
the official Python client (PyPI openlineage-python) models it: each event is rebuilt
from the client's classes, which are generated from the spec's JSON schema and enforce
its required fields, the eventType enum, a UUID runId, an ISO date-time with a time, and
URI producers and schema URLs; the client's serialisation of the rebuilt event must equal
Wharf's event. Also: a START then a COMPLETE or FAIL per run id, never two of either.
The JSON Schema validation itself runs in cargo test (tests/kit/lineage.rs, against
OpenLineage's schemas where the machine has them: no PyPI package ships them)."""

import json
import sys
from collections import defaultdict

import attr
from openlineage.client.event_v2 import (
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
)
from openlineage.client.facet_v2 import RunFacet, error_message_run
from openlineage.client.serde import Serde


@attr.define
class WharfLandingRunFacet(RunFacet):
    """Wharf's own run facet, as a custom facet extends the spec's RunFacet."""

    action: str
    reason: str | None
    input_sha256: str
    counts: dict
    dates: list


def run_facets(facets: dict) -> dict:
    out = {}
    for name, facet in facets.items():
        fields = {k: v for k, v in facet.items() if not k.startswith("_")}
        if name == "errorMessage":
            built = error_message_run.ErrorMessageRunFacet(**fields)
        elif name == "wharf_landing":
            built = WharfLandingRunFacet(**fields)
        else:
            raise ValueError(f"unexpected run facet {name}")
        built._producer = facet["_producer"]
        built._schemaURL = facet["_schemaURL"]
        out[name] = built
    return out


def dataset(cls, d: dict):
    assert d["facets"] == {}, d
    return cls(namespace=d["namespace"], name=d["name"])


def rebuild(event: dict) -> RunEvent:
    return RunEvent(
        eventType=RunState(event["eventType"]),
        eventTime=event["eventTime"],
        producer=event["producer"],
        run=Run(runId=event["run"]["runId"], facets=run_facets(event["run"]["facets"])),
        job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]),
        inputs=[dataset(InputDataset, d) for d in event["inputs"]],
        outputs=[dataset(OutputDataset, d) for d in event["outputs"]],
    )


def prune(value):
    """`value` without empty objects and nulls: the client writes the one and drops the
    other, Wharf the reverse."""
    if isinstance(value, dict):
        return {k: prune(v) for k, v in value.items() if v != {} and v is not None}
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def main() -> None:
    by_run = defaultdict(list)
    count = 0
    with open(sys.argv[1], encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            rebuilt = prune(Serde.to_dict(rebuild(event)))
            want = prune(event)
            assert rebuilt == want, f"\nclient: {rebuilt}\nwharf:  {want}"
            by_run[event["run"]["runId"]].append(event["eventType"])
            count += 1
    for run_id, kinds in by_run.items():
        assert kinds[0] == "START" and kinds[1:] in (["COMPLETE"], ["FAIL"]), (run_id, kinds)
    print(f"lineage.py: {count} events of {len(by_run)} runs match the OpenLineage client's model")


if __name__ == "__main__":
    main()
