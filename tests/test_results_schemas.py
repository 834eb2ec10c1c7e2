"""The results files of ``dank-verify`` and ``dank-reproduce`` against their JSON Schemas:
the committed reports validate, a broken copy is refused with a message
naming the field, and the schemas' enums are the code's own lists.

Freshly written files are validated inside the runs the suite already makes
(``tests/test_cli.py::test_runner_small`` and
``tests/test_reproduce_cli.py::test_smoke_pipeline_and_resume``), so no run is added here.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from dank_fast._result import STATUSES as SOLVER_STATUSES
from verification.schemas import SCHEMA_DIR, SCHEMAS, SchemaError, load_schema, validate
from verification.study.claims._common import RESULTS_VERSION, STATUSES
from verification.study.experiments.protocol import _CELLS
from verification.study.experiments.readings import CELLS as READING_CELLS

ROOT = Path(__file__).resolve().parents[1] / "reproduction"
COMMITTED = [("verify-quick", "verify-results"), ("quick", "reproduce-results"),
             ("full", "reproduce-results"), ("full-6x6", "reproduce-results")]


def _load(folder: str) -> dict:
    return json.loads((ROOT / folder / "results.json").read_text())


@pytest.fixture(scope="module")
def verify_doc() -> dict:
    return _load("verify-quick")


@pytest.fixture(scope="module")
def reproduce_doc() -> dict:
    return _load("quick")


@pytest.mark.parametrize("folder, kind", COMMITTED, ids=[f for f, _ in COMMITTED])
def test_committed_results_validate(folder, kind):
    validate(_load(folder), kind)


def test_each_results_schema_refuses_the_other_file(verify_doc, reproduce_doc):
    # dank-reproduce files name their format: the verify schema refuses them for
    # their missing verify keys (and for the foreign format const)
    with pytest.raises(SchemaError, match=r"\$: Additional properties are not allowed \("
                       r"'cells', 'command'"):
        validate(reproduce_doc, "verify-results")
    with pytest.raises(SchemaError, match=r"\$: Additional properties are not allowed \("
                       r"'budget'"):
        validate(verify_doc, "reproduce-results")


def _first(mapping: dict) -> str:
    return next(iter(mapping))


def _verify_breaks() -> list[tuple[str, object, str]]:
    """(what is broken, how, the message expected) on a dank-verify results.json."""
    return [
        ("del", ("verdicts", 0, "status"), "$.verdicts[0]: 'status' is a required property"),
        ("set", ("seed", "0"), "$.seed: '0' is not of type 'integer'"),
        ("set", ("version", 1), "$.version: 2 was expected"),
        ("set", ("verdicts", 1, "status", "MAYBE"), "$.verdicts[1].status: 'MAYBE' is not one"),
        ("set", ("verdicts", 0, "worst_ratio", "inf"),
         "$.verdicts[0].worst_ratio: 'inf' is not of type 'number', 'null'"),
        ("set", ("solvers", 2, "status", "finished"), "$.solvers[2].status: 'finished' is not"),
        ("set", ("summary", "counts", "HOLDS", -1),
         "$.summary.counts.HOLDS: -1 is less than the minimum of 0"),
        ("set", ("verdicts", 0, "score", 1.0),
         "$.verdicts[0]: Additional properties are not allowed ('score' was"),
    ]


def _reproduce_breaks(d: dict) -> list[tuple[str, object, str]]:
    """(what is broken, how, the message expected) on a dank-reproduce results.json."""
    cell = _first(d["cells"])
    dank = next(k for k, c in d["cells"].items() if c.get("solves"))
    return [
        ("del", ("protocol",), "$: 'protocol' is a required property"),
        ("del", ("versions", "numpy"), "$.versions: 'numpy' is a required property"),
        ("set", ("cells", cell, "split", "0"),
         f"$.cells.{cell}.split: '0' is not of type 'integer'"),
        ("set", ("cells", cell, "status", "error"),
         f"$.cells.{cell}.status: 'ok' was expected"),
        ("set", ("cells", dank, "solves", 0, "rel_gap", "small"),
         f"$.cells.{dank}.solves[0].rel_gap: 'small' is not valid under any of the given "
         "schemas"),
        ("set", ("verdicts", 0, "verdict", "YES"), "$.verdicts[0].verdict: 'YES' is not one of"),
        ("set", ("protocol", "n_folds", 1), "$.protocol.n_folds: 1 is less than the minimum of 2"),
        ("set", ("tables", "errors", [{"cell": cell}]),
         "$.tables.errors[0]: 'error' is a required property"),
        ("set", ("seconds", True), "$.seconds: True is not of type 'number'"),
    ]


def _broken(doc: dict, op: str, where: tuple) -> dict:
    d = copy.deepcopy(doc)
    keys = where[:-1] if op == "del" else where[:-2]
    node = d
    for k in keys:
        node = node[k]
    if op == "del":
        del node[where[-1]]
    else:
        node[where[-2]] = where[-1]
    return d


@pytest.mark.parametrize("kind", ["verify-results", "reproduce-results"])
def test_a_broken_copy_is_refused_naming_the_field(kind, verify_doc, reproduce_doc):
    doc, breaks = ((verify_doc, _verify_breaks()) if kind == "verify-results"
                   else (reproduce_doc, _reproduce_breaks(reproduce_doc)))
    validate(doc, kind)  # the intact copy passes, so each refusal below is the break's
    for op, where, words in breaks:
        with pytest.raises(SchemaError) as e:
            validate(_broken(doc, op, where), kind)
        assert words in str(e.value), (where, str(e.value))


def _enum(schema: dict, *path: str) -> list:
    node = schema
    for k in path:
        node = node[k]
    return node["enum"]


def test_schema_enums_are_the_codes_own_lists():
    v, r = load_schema("verify-results"), load_schema("reproduce-results")
    assert v["properties"]["version"]["const"] == RESULTS_VERSION
    assert _enum(v, "$defs", "verdict", "properties", "status") == list(STATUSES)
    assert list(v["properties"]["summary"]["properties"]["counts"]["required"]) == list(STATUSES)
    for schema, where in ((v, ("$defs", "solver_row", "properties", "status")),
                          (r, ("$defs", "solve", "properties", "status"))):
        assert sorted(_enum(schema, *where)) == sorted(SOLVER_STATUSES)
    methods = sorted([*_CELLS, *READING_CELLS])
    assert sorted(_enum(r, "$defs", "cell", "properties", "method")) == methods


def test_formats_md_lists_every_schema_shipped():
    shipped = sorted(p.name.removesuffix(".schema.json")
                     for p in Path(SCHEMA_DIR).glob("*.schema.json"))
    assert shipped == sorted(SCHEMAS)
    text = (ROOT.parent / "docs" / "FORMATS.md").read_text()
    section = text[text.index("## JSON Schemas"):]
    listed = re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.M)
    assert sorted(listed) == shipped
