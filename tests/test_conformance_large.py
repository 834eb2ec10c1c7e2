"""The conformance kit's large set: generated on demand, checked against its
sha256 manifest before any file is written, exported and run like the other sets; its
instances are given by features, so the oracle certifies them in row blocks.

The default run exercises the generator at a small size (``shrink``, a documented parameter of
:func:`verification.conformance.large.specs`) and the real P2 instance (n = 20,000 by six
features: generated in milliseconds); the slow tests (``-m slow``) run the whole set through
the kit with dank_fast and reject broken solutions at full size.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from verification.cli import main
from verification.conformance.adapters import fast_auto, plain_svr_dual
from verification.conformance.cases import impl_instance, load_cases
from verification.conformance.kit import judge, run_cases
from verification.conformance.large import (
    LARGE_VERSION,
    MANIFEST,
    TIME_LIMITS,
    LargeSetError,
    content_sha256,
    large_problems,
    load_manifest,
    specs,
    write_large,
)
from verification.conformance.runners import ImplRunner, Outcome
from verification.formats import load_instance
from verification.oracle import certify
from verification.schemas import validate

SMALL = "large1_svr_n20000"  # the smallest file of the set (20,000 x 6), generated in ms
FAST = "verification.conformance.adapters:fast_auto"


def test_manifest_lists_every_instance_with_its_checksum_and_limit():
    man = load_manifest()
    validate(man, "large-manifest")
    assert man["large_version"] == LARGE_VERSION
    table = specs()
    assert list(man["instances"]) == [s.id for s in table]
    assert [(s.task, s.n) for s in table] == [("svm", 20000), ("svm", 50000), ("svr", 20000),
                                              ("decomposed", 200000), ("decomposed", 464810)]
    got = {i: (e["d"], e["clusters"], e["time_limit"]) for i, e in man["instances"].items()}
    assert got == {"large1_svm_n20000": (22, None, 600.0), "large1_svm_n50000": (22, None, 1800.0),
                   "large1_svr_n20000": (6, None, 1800.0),
                   "large1_decomposed_n200000": (54, 100, 1800.0),
                   "large1_decomposed_n464810": (54, 200, 3600.0)}
    assert sorted(TIME_LIMITS.values()) == sorted(e["time_limit"]
                                                  for e in man["instances"].values())


def test_shrunk_set_keeps_the_recipe_at_a_small_size(tmp_path):
    entries = write_large(str(tmp_path), shrink=100)
    assert [(e["task"], e["n"], e["d"], e["clusters"]) for e in entries.values()] == [
        ("svm", 200, 22, None), ("svm", 500, 22, None), ("svr", 200, 6, None),
        ("decomposed", 2000, 54, 100), ("decomposed", 4648, 54, 200)]
    p1 = load_instance(str(tmp_path / "large1_svm_n500.npz"), max_array_bytes=1 << 22)
    assert int(np.sum(p1["y"] > 0)) == 50  # class ratio 1:9 exactly
    assert np.allclose(p1["X"].mean(0), 0.0) and np.allclose(p1["X"].std(0), 1.0)
    p3 = load_instance(str(tmp_path / "large1_decomposed_n4648.npz"), max_array_bytes=1 << 22)
    assert np.bincount(p3["labels"]).min() >= 2
    assert {-1.0, 1.0} == set(np.unique(p3["y"]))
    (tmp_path / "again").mkdir()
    again = write_large(str(tmp_path / "again"), shrink=100, ids=["large1_decomposed_n4648"])
    assert again["large1_decomposed_n4648"]["sha256"] == entries[
        "large1_decomposed_n4648"]["sha256"]  # seeded: the same bytes again
    with pytest.raises(ValueError, match="shrink must be an integer"):
        specs(shrink=0)
    with pytest.raises(ValueError, match="no large instance 'large1_svm_n20000'"):
        write_large(str(tmp_path), shrink=100, ids=["large1_svm_n20000"])


def test_checksum_covers_every_field_and_value():
    fields = specs(shrink=100)[2].make()
    base = content_sha256(fields)
    X = fields["X"].copy()
    X[7, 3] = np.nextafter(X[7, 3], 2.0)
    assert content_sha256(dict(fields, X=X)) != base
    assert content_sha256(dict(fields, C=fields["C"] * (1 + 2**-52))) != base
    assert content_sha256(dict(fields, X=X[:-1])) != base
    assert content_sha256(dict(fields)) == base


def test_generation_is_checked_against_the_manifest_before_writing(tmp_path):
    entry = write_large(str(tmp_path), ids=[SMALL])[SMALL]
    assert entry["sha256"] == load_manifest()["instances"][SMALL]["sha256"]
    assert entry["bytes"] == os.path.getsize(tmp_path / f"{SMALL}.npz")
    man = load_manifest()
    man["instances"][SMALL]["sha256"] = "0" * 64
    doctored = tmp_path / "large.json"
    doctored.write_text(json.dumps(man))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(LargeSetError, match=f"{SMALL}: sha256 differs from the manifest"):
        write_large(str(out), ids=[SMALL], manifest=str(doctored))
    assert list(out.iterdir()) == []  # nothing half-written
    assert large_problems({"large1_other": entry}, MANIFEST) == [
        "large1_other: not in the manifest"]


def test_export_of_one_large_instance_is_the_blockwise_file(tmp_path, capsys):
    out = tmp_path / "repro"
    code = main(["conformance", "--export", str(out), "--set", "large", "--case", SMALL])
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("conformance: wrote 1 instance file (npz)")
    index = json.loads((out / "index.json").read_text())
    validate(index, "conformance-export")
    assert (index["set"], index["large_version"]) == ("large", LARGE_VERSION)
    (row,) = index["instances"]
    assert (row["id"], row["task"], row["n"], row["time_limit"]) == (SMALL, "svr", 20000, 1800.0)
    inst = load_instance(str(out / row["file"]))
    assert inst["K"] is None and inst["X"].shape == (20000, 6)  # certified from X in blocks
    assert main(["conformance", "--export", str(out), "--set", "large", "--case", SMALL,
                 "--timeout", "7"]) == 0
    assert json.loads((out / "index.json").read_text())["instances"][0]["time_limit"] == 7.0


def test_unknown_large_id_and_large_id_in_another_set_are_named(tmp_path, capsys):
    assert main(["conformance", "--export", str(tmp_path), "--set", "large", "--case",
                 "large1_svm_n2000"]) == 2
    err = capsys.readouterr().err
    assert "no instance 'large1_svm_n2000'" in err and "large1_svm_n20000" in err
    assert main(["conformance", "--export", str(tmp_path), "--case", "large1_svm_n20000"]) == 2
    assert "large ids are in --set large (not part of --set all)" in capsys.readouterr().err


def test_kit_runs_a_large_instance_under_its_own_limit(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["conformance", "--impl", "_conformance_impls:stops_at_start", "--set", "large",
                 "--case", SMALL, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "time limit each instance's own, 1800 s" in captured.err
    doc = json.loads((out / "results.json").read_text())
    validate(doc, "conformance-results")
    (row,) = doc["results"]
    assert (doc["set"], doc["large_version"]) == ("large", LARGE_VERSION)
    assert (row["set"], row["n"], row["time_limit"]) == ("large", 20000, 1800.0)
    assert row["status"] == "not certified" and row["failed"][0] == "gap", row
    assert f"set `large` (only {SMALL}) (large version {LARGE_VERSION})" in (
        out / "report.md").read_text()


def test_help_documents_the_large_set_and_its_limits(capsys):
    with pytest.raises(SystemExit):
        main(["conformance", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--set large (not part of all)" in text
    assert "600, 1800, 1800, 1800, 3600 s in that order" in text
    assert "--timeout S replaces them all by S" in text


def test_impl_gets_features_and_no_kernel(tmp_path):
    (case,) = load_cases("large", workdir=str(tmp_path), ids=[SMALL])
    inst = impl_instance(case)
    assert inst["K"] is None and inst["X"].shape == (20000, 6)
    assert (inst["kernel"], inst["sigma"], inst["epsilon"]) == ("gaussian", 1.0, 0.1)
    assert "blockwise" not in inst and "source" not in inst
    assert case.time_limit == 1800.0


def _blockwise_case(tmp_path, ident: str, limit: int):
    """A shrunk large instance read with a small array limit, so that (as at full size) the
    reader keeps ``X`` and no kernel, and the oracle certifies in row blocks."""
    (case,) = load_cases("large", workdir=str(tmp_path), ids=[ident], shrink=100)
    case.inst = load_instance(case.path, max_array_bytes=limit)
    assert case.inst["K"] is None
    return case


def test_dank_fast_is_certified_blockwise_on_the_shrunk_set(tmp_path):
    cases = [_blockwise_case(tmp_path, "large1_svm_n500", 1 << 20),
             _blockwise_case(tmp_path, "large1_decomposed_n2000", 2 << 20)]
    with ImplRunner(FAST, timeout=300.0) as runner:
        rows = run_cases(cases, runner)
    assert [r["status"] for r in rows] == ["certified", "certified"], rows
    assert all(r["rel_gap"] <= 1e-6 for r in rows)


def test_broken_answers_are_rejected_blockwise_with_their_reasons(tmp_path):
    case = _blockwise_case(tmp_path, "large1_svm_n500", 1 << 20)
    good = fast_auto(impl_instance(case))
    assert good["F"] is None  # no n x n F beyond the dense limit
    good = {k: v for k, v in good.items() if k != "F"}
    ok = judge(case, Outcome("ok", good, "", 1.0))
    assert ok["status"] == "certified", ok
    a, C = good["alpha"], case.inst["C"]
    box = a.copy()
    box[int(np.argmax(a))] = C * (1 + 1e-6)
    rep = certify(case.inst, dict(good, alpha=box))
    assert rep["failed"][0] == "alpha_high" and "alpha <= C violated" in rep["reasons"][0]
    off = a.copy()
    off[int(np.flatnonzero((a > 0) & (a < C))[0])] += 1e-6 * C
    rep = certify(case.inst, dict(good, alpha=off))
    assert rep["failed"] == ["equality"] and "y'alpha = 0 violated" in rep["reasons"][0]
    rep = certify(case.inst, dict(good, bias=good["bias"] + 0.1))
    assert rep["failed"] == ["bias"] and "with the submitted bias" in rep["reasons"][0]


# ---------------------------------------------------------------------------------------------
# full size (python -m pytest -m slow tests/test_conformance_large.py): minutes to an hour
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_dank_fast_is_certified_on_the_whole_large_set(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["conformance", "--impl", FAST, "--set", "large", "--out", str(out)])
    doc = json.loads((out / "results.json").read_text())
    validate(doc, "conformance-results")
    assert code == 0, [(r["id"], r["status"], r["diagnosis"]) for r in doc["results"]]
    assert doc["large_version"] == LARGE_VERSION and doc["summary"]["all"]["certified"] == 5


@pytest.mark.slow
@pytest.mark.parametrize("ident", ["large1_svm_n50000", "large1_svr_n20000",
                                   "large1_decomposed_n464810"])
def test_broken_solutions_are_rejected_at_full_size(tmp_path, ident):
    import dank_fast

    (case,) = load_cases("large", workdir=str(tmp_path), ids=[ident])
    inst, task = case.inst, case.task
    good = {k: v for k, v in fast_auto(impl_instance(case)).items() if k not in ("F", "meta")}
    assert certify(inst, good)["certified"]
    key = "alpha_hat" if task == "svr" else "alpha"
    C = inst["C"]
    box = dict(good, **{key: good[key].copy()})
    box[key][int(np.argmax(box[key]))] = C * (1 + 1e-6)
    assert certify(inst, box)["failed"][0] in ("alpha_high", "alpha_hat_high")
    if task != "decomposed":
        off = dict(good, **{key: good[key].copy()})
        free = np.flatnonzero((off[key] > 0) & (off[key] < C))
        off[key][free[0]] += 1e-6 * C
        assert certify(inst, off)["failed"] == ["equality"]
        assert certify(inst, dict(good, bias=good["bias"] + 0.1))["failed"] == ["bias"]
    fk = dank_fast.FeatureKernel(inst["X"], **{k: v for k, v in inst["kernel"].items()
                                               if k in ("sigma", "gamma")})
    if task == "svm":
        r = dank_fast.solve_svm(fk, inst["y"], C=C, eta=inst["eta"], tau=inst["tau"], tol=1e-3)
        early = dict(alpha=r.alpha)
    elif task == "decomposed":
        r = dank_fast.solve_decomposed(fk, inst["y"], C=C, eta=inst["eta"],
                                       labels=inst["labels"], tol=1e-3, certify_full=False)
        early = dict(alpha=r.alpha)
    else:
        r = dank_fast.solve_svr(dank_fast.compute_kernel(inst["X"], sigma=1.0), inst["y"], C=C,
                                epsilon=inst["epsilon"], eta=inst["eta"], tau=inst["tau"],
                                tol=1e-3, check_psd=False, method="accelerated", max_iter=20,
                                alpha0=plain_svr_dual(impl_instance(case)))
        early = dict(alpha_hat=r.extra["alpha_hat"], alpha_check=r.extra["alpha_check"])
    rep = certify(inst, early)
    assert rep["failed"] == ["gap"] and rep["rel_gap"] > 1e-6, rep["reasons"]


@pytest.mark.slow
def test_json_is_refused_for_an_instance_above_the_reader_limit(tmp_path, capsys):
    assert main(["conformance", "--export", str(tmp_path / "x"), "--set", "large", "--case",
                 "large1_decomposed_n200000", "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "instance large1_decomposed_n200000 would take up to" in err
    assert "more than the 64 MiB a reader accepts; use --format npz" in err
    assert not (tmp_path / "x").exists()  # refused before writing anything
