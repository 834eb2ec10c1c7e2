"""The formats as documents: JSON Schemas validate every golden JSON
and every JSON file the package writes; the solution's ``meta`` field; the generated families
are seeded, versioned and match their checksums."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator

from verification.conformance.families import (
    FAMILIES_VERSION,
    MANIFEST,
    family_problems,
    specs,
    write_families,
)
from verification.formats import FormatError, load_solution, save_instance, save_solution
from verification.golden import GOLDEN_DIR
from verification.schemas import SCHEMAS, SchemaError, load_schema, validate


def _json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(GOLDEN_DIR, "*.json"))),
                         ids=os.path.basename)
def test_every_golden_json_validates(path):
    name = os.path.basename(path)
    kind = ("golden-manifest" if name == "MANIFEST.json" else
            "instance" if name.endswith("_instance.json") else "solution")
    validate(_json(path), kind)


def test_families_manifest_validates():
    validate(_json(MANIFEST), "families-manifest")


@pytest.mark.parametrize("task, extra", [
    ("svm", dict(tau=0.01)), ("svr", dict(tau=0.0, epsilon=0.1)),
    ("decomposed", dict(labels=[0, 1, 1]))])
def test_written_instances_and_solutions_validate(tmp_path, task, extra):
    y = [1.0, -1.0, 1.0]
    save_instance(tmp_path / "k.json", task=task, K=np.eye(3), y=y, C=1.0, eta=2.0, **extra)
    save_instance(tmp_path / "x.json", task=task, X=np.ones((3, 2)), kernel="gaussian",
                  sigma=0.5, y=y, C=1.0, eta=2.0, **extra)
    pts = dict(alpha_hat=np.zeros(3), alpha_check=np.zeros(3), bias=0.5) if task == "svr" \
        else dict(alpha=np.zeros(3)) if task == "decomposed" else dict(alpha=np.zeros(3), bias=1)
    save_solution(tmp_path / "s.json", task=task, F=np.ones((3, 3)), meta={"a": [1, 2]}, **pts)
    for name, kind in (("k", "instance"), ("x", "instance"), ("s", "solution")):
        validate(_json(tmp_path / f"{name}.json"), kind)


@pytest.mark.parametrize("doc, kind, words", [
    ({"format": "dank-solution", "version": 1, "task": "svm", "alpha_hat": [0.0]}, "solution",
     "is not valid under any of the given schemas"),
    ({"format": "dank-solution", "version": 1, "task": "svm", "alpha": [0], "meta": 3},
     "solution", "$.meta: 3 is not valid under any of the given schemas"),
    ({"format": "dank-instance", "version": 1, "task": "svm", "K": [[1.0]], "X": [[1.0]],
      "kernel": "linear", "y": [1.0], "C": 1, "eta": 1, "tau": 0}, "instance",
     "$: the value is valid under each of"),
    ({"format": "dank-instance", "version": 3, "task": "svm", "K": [[1.0]], "y": [1.0],
      "C": 1, "eta": 1, "tau": 0}, "instance", "$.version: 3 is not one of [1, 2]"),
    ({"format": "dank-instance", "version": 1, "task": "svm", "K": [[1.0]], "y": [1.0],
      "C": [1.0], "eta": 1, "tau": 0}, "instance", "$.C: [1.0] is not of type 'number'"),
    ({"format": "dank-instance", "version": 2, "task": "svm", "K": [[1.0, 0.0], [0.0, 1.0]],
      "y": [1.0, -1.0], "C": [1.0, 0], "eta": 1, "tau": 0}, "instance",
     "$.C[1]: 0 is less than or equal to the minimum of 0"),
    ({"format": "dank-instance", "version": 1, "task": "svm", "K": [[1.0]], "y": [1.0],
      "C": 0, "eta": 1, "tau": 0}, "instance", "$.C: 0 is less than or equal to the minimum of 0"),
    ({"format": "dank-instance", "version": 1, "task": "svm", "K": [[1.0]], "y": [True],
      "C": 1, "eta": 1, "tau": 0}, "instance", "$.y[0]: True is not of type 'number'"),
])
def test_schema_rejects_with_a_path(doc, kind, words):
    with pytest.raises(SchemaError) as e:
        validate(doc, kind)
    assert words in str(e.value)


def test_every_shipped_schema_is_a_valid_draft_2020_12_schema():
    for name in SCHEMAS:
        Draft202012Validator.check_schema(load_schema(name))
    with pytest.raises(ValueError, match="not a valid draft 2020-12 schema"):
        validate(1, {"type": "integer", "minimum": "zero"})


def test_numbers_are_finite_and_integers_are_json_integers():
    validate(1, {"type": "integer"})
    for bad, t in ((1.0, "integer"), (True, "integer"), (float("inf"), "number"),
                   (float("nan"), "number")):
        with pytest.raises(SchemaError, match="is not of type"):
            validate(bad, {"type": t})


@pytest.mark.parametrize("ext", ["npz", "json"])
@pytest.mark.parametrize("meta", ["solver X 1.2", {"solver": "X", "tol": 1e-8, "ok": True}])
def test_meta_round_trips(tmp_path, ext, meta):
    p = tmp_path / f"s.{ext}"
    save_solution(p, task="svm", alpha=[0.5, 0.5], meta=meta)
    assert load_solution(p)["meta"] == meta


def test_meta_refused_when_not_text_or_object(tmp_path):
    with pytest.raises(TypeError, match="meta must be a string or a JSON object"):
        save_solution(tmp_path / "s.json", task="svm", alpha=[0.5], meta=[1, 2])
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"format": "dank-solution", "version": 1, "task": "svm",
                             "alpha": [0.5], "meta": 12}))
    with pytest.raises(FormatError, match="field 'meta' must be a string or a JSON object"):
        load_solution(p)
    p.write_text(json.dumps({"format": "dank-solution", "version": 1, "task": "svm",
                             "alpha": [0.5], "meta": "x" * 70000}))
    with pytest.raises(FormatError, match="more than the 65536 limit"):
        load_solution(p)


def test_families_regenerate_to_their_checksums(tmp_path):
    entries = write_families(str(tmp_path))
    assert family_problems(entries) == []
    assert all(i.startswith(f"fam{FAMILIES_VERSION}_") for i in entries)
    ns = [e["n"] for e in entries.values()]
    assert min(ns) == 10 and max(ns) == 1000
    assert {e["task"] for e in entries.values()} == {"svm", "svr", "decomposed"}
    fams = {e["family"] for e in entries.values()}
    assert fams == {"size", "kscale", "cscale", "eta", "tau", "corner", "weights"}
    # the weights family: one vector C per task (format version 2)
    weighted = [f for _, fam, _, f in specs() if fam == "weights"]
    assert {f["task"] for f in weighted} == {"svm", "svr", "decomposed"}
    assert all(np.ndim(f["C"]) == 1 and np.size(f["C"]) == np.size(f["y"]) for f in weighted)


def test_a_changed_family_is_detected(tmp_path):
    entries = write_families(str(tmp_path))
    ident = next(iter(entries))
    changed = dict(entries, **{ident: dict(entries[ident], sha256="0" * 64)})
    assert family_problems(changed) == [f"{ident}: sha256 differs from the manifest (the "
                                        "generator or numpy's random stream changed)"]
    assert len(specs()) == len(entries)


def test_formats_md_examples_are_certified(tmp_path, monkeypatch):
    import re

    from verification.formats import load_instance
    from verification.oracle import certify

    text = (Path(__file__).resolve().parents[1] / "docs" / "FORMATS.md").read_text()
    inst_json, sol_json = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    (tmp_path / "i.json").write_text(inst_json)
    (tmp_path / "s.json").write_text(sol_json)
    monkeypatch.chdir(tmp_path)
    exec(re.findall(r"```python\n(.*?)```", text, flags=re.S)[0], {})
    for i, s in (("i.json", "s.json"), ("inst.npz", "sol.npz")):
        inst = load_instance(i)
        sol = load_solution(s, inst["n"])
        if i.endswith(".json"):
            validate(_json(i), "instance")
            validate(_json(s), "solution")
        rep = certify(inst, sol, reference=False)
        assert rep["certified"] and rep["meta"] == sol["meta"] is not None


def test_shifted_geometric_means_and_the_timeout_penalty():
    from verification.conformance.report import GAP_SHIFT, TIME_SHIFT, shifted_geomean, summarize

    assert shifted_geomean([1.0, 4.0], 0.0) == pytest.approx(2.0, rel=1e-15)
    assert shifted_geomean([0.0, 0.0], 1.0) == 0.0 and shifted_geomean([], 1.0) is None

    def row(status, time, gap):
        return dict(task="svm", status=status, time=time, rel_gap=gap)

    rows = [row("certified", 0.5, 1e-9), row("not certified", 2.0, 1e-3),
            row("timeout", 30.0, None), row("error", 0.1, None)]
    s = summarize(rows, timeout=30.0)["svm"]
    assert (s["instances"], s["certified"], s["not_certified"], s["timeout"], s["error"]) == \
        (4, 1, 1, 1, 1)
    assert s["success_rate"] == 0.25 and s["gaps_evaluated"] == 2
    # error and timeout rows count at the timeout (30 s), the others at their own time
    assert s["sgm_time"] == pytest.approx(shifted_geomean([0.5, 2.0, 30.0, 30.0], TIME_SHIFT))
    assert s["sgm_rel_gap"] == pytest.approx(shifted_geomean([1e-9, 1e-3], GAP_SHIFT))


def test_conformance_md_documents_every_family_instance_and_the_defaults(capsys):
    """docs/conformance.md, the reference for readers of any language: every family variant,
    the size of each set, the default time limits and tolerance, pointed to by --help and
    FORMATS.md (no Python docstring is where a reader is sent)."""
    from collections import Counter

    from verification.cli import main
    from verification.conformance.runners import TIMEOUT, TIMEOUT_PER_1000, time_limit
    from verification.golden import load_manifest

    docs = Path(__file__).resolve().parents[1] / "docs"
    text = (docs / "conformance.md").read_text()
    fams = specs()
    for ident, fam, _, fields in fams:
        variant = ident.removeprefix(f"fam{FAMILIES_VERSION}_{fields['task']}_")
        assert f"`{variant}`" in text and f"| `{fam}` |" in text, ident
    tasks = Counter(f["task"] for *_, f in fams)
    assert (f"| {len(fams)} (svm {tasks['svm']}, svr {tasks['svr']}, decomposed "
            f"{tasks['decomposed']}) |") in text
    golden = Counter(e["params"]["task"] for e in load_manifest(GOLDEN_DIR)["vectors"].values())
    assert (f"| {sum(golden.values())} (svm {golden['svm']}, svr {golden['svr']}, decomposed "
            f"{golden['decomposed']}) |") in text
    assert f"`S = --timeout` (default {TIMEOUT:g})" in text
    assert f"`T = --timeout-per-1000` (default {TIMEOUT_PER_1000:g})" in text
    assert (f"{time_limit(10):.0f} s at `n = 10`, {time_limit(100):.3g} s at `n = 100`, "
            f"{time_limit(1000):g} s at\n`n = 1,000`") in text
    assert "`1e-9 C sqrt(n)`" in text and "(`--tol`, default `1e-6`)" in text
    formats = (docs / "FORMATS.md").read_text()
    assert "[conformance.md](conformance.md)" in formats and "docstring of" not in formats
    with pytest.raises(SystemExit):
        main(["conformance", "--help"])
    helptext = capsys.readouterr().out
    assert "/conformance.html" in helptext and "docstring" not in helptext
