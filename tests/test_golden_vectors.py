"""Golden vectors: checksums, every vector re-certified to 1e-12 by the oracle, dank_ref and
dank_fast, each corner really is the corner it claims, loading needs no CVXPY, and the
regeneration's comparison detects changed instances, solutions and manifests."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from verification.formats import load_instance, load_solution, sniff
from verification.golden import (
    GOLDEN_DIR,
    GOLDEN_TOL,
    certify_both,
    load_manifest,
    sha256,
    specs,
    vector_problems,
)
from verification.oracle import certify

MAN = load_manifest()
NAMES = sorted(MAN["vectors"])
# vectors a package may fail to certify to 1e-12 (none: re-projecting the point with an
# absolute resolution would fail p1_C_tiny, p2_C_tiny and p2_eps_huge)
REF_SHORTFALL: set[str] = set()


def _load(name):
    e = MAN["vectors"][name]
    inst = load_instance(os.path.join(GOLDEN_DIR, e["instance"]))
    return e, inst, load_solution(os.path.join(GOLDEN_DIR, e["solution"]), inst["n"])


def test_manifest_lists_every_file_with_its_checksum():
    assert MAN["golden_tol"] == GOLDEN_TOL == 1e-12
    tasks = [e["params"]["task"] for e in MAN["vectors"].values()]
    assert len(tasks) >= 30
    assert min(tasks.count(t) for t in ("svm", "svr", "decomposed")) >= 10
    listed = {"MANIFEST.json"}
    for e in MAN["vectors"].values():
        for f, h in ((e["instance"], e["sha256_instance"]), (e["solution"], e["sha256_solution"])):
            assert sha256(os.path.join(GOLDEN_DIR, f)) == h, f
            listed.add(f)
    assert set(os.listdir(GOLDEN_DIR)) == listed
    assert [n for n, _, _ in specs()] == list(MAN["vectors"])


@pytest.mark.parametrize("name", NAMES)
def test_vector_certified_by_oracle_and_dank_fast(name):
    e, inst, sol = _load(name)
    rep = certify(inst, sol, tol=GOLDEN_TOL, reference=False)
    assert rep["certified"], rep["reasons"]
    submitted = {"F", "bias"} if inst["task"] != "decomposed" else {"F"}
    assert {k for k in submitted if rep["checks"][k]["status"] == "pass"} == submitted
    cb = certify_both(inst, sol)  # per-sample boxes (a vector C) included: no exception
    assert cb["fast"] is not None and e["rel_gap_fast"] is not None
    assert e["meets_golden_tol"]["dank_fast"] is True
    assert cb["fast"][2] <= GOLDEN_TOL
    assert cb["fast"][0] <= cb["fast"][1] + GOLDEN_TOL * max(1.0, abs(cb["fast"][0]))
    # the oracle's bracket, dank_fast's and the manifest's agree
    slack = 1e-11 * max(1.0, abs(e["lower"]))
    for lo, hi in ((rep["lower"], rep["upper"]), cb["fast"][:2]):
        assert lo <= e["upper"] + slack and e["lower"] <= hi + slack


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=False, reason="dank_ref re-projects the point "
                                            "with an absolute resolution (ref-hardening)"))
    if n in REF_SHORTFALL else n for n in NAMES])
def test_vector_certified_by_dank_ref(name):
    e, inst, sol = _load(name)
    lower, upper, rel_gap = certify_both(inst, sol)["ref"]
    assert rel_gap <= GOLDEN_TOL
    assert abs(lower - e["lower"]) <= 1e-11 * max(1.0, abs(e["lower"]))


def _vec(name):
    return _load(name)[1:]


def test_the_corners_are_what_they_claim():
    inst, sol = _vec("p1_tau0")
    assert inst["tau"] == 0.0
    for name in ("p1_F_zero", "p2_F_zero"):
        inst, sol = _vec(name)
        assert np.max(np.abs(sol["F"])) == 0.0
    inst, sol = _vec("p1_rank_one_F")
    lam = np.linalg.eigvalsh(sol["F"])
    assert lam[-1] > 0 and np.sum(lam > 1e-9 * lam[-1]) == 1
    inst, sol = _vec("p1_all_at_C")
    assert np.all(sol["alpha"] == inst["C"])
    for name, C in (("p1_C_tiny", 1e-8), ("p2_C_tiny", 1e-8), ("p3_C_tiny", 1e-8),
                    ("p2_C_huge", 1e6)):
        assert _vec(name)[0]["C"] == C
    for name in ("p1_C_huge", "p3_C_huge"):  # hard margin: no point at the bound
        inst, sol = _vec(name)
        assert inst["C"] >= 1e3 and np.max(sol["alpha"]) < 0.01 * inst["C"]
    for name in ("p1_eta_1e-3", "p2_eta_1e-3", "p3_eta_1e-3"):
        assert _vec(name)[0]["eta"] == 1e-3
    for name in ("p1_eta_1e6", "p2_eta_1e6", "p3_eta_1e6"):
        assert _vec(name)[0]["eta"] == 1e6
    for name in ("p1_n2", "p2_n2", "p3_n2"):
        assert _vec(name)[0]["n"] == 2
    for name in ("p1_rank_one_K", "p2_rank_one_K"):
        lam = np.linalg.eigvalsh(_vec(name)[0]["K"])
        assert np.sum(lam > 1e-12 * lam[-1]) == 1
    for name in ("p1_near_singular_K", "p3_near_singular_K"):
        lam = np.linalg.eigvalsh(_vec(name)[0]["K"])
        assert abs(lam[0]) < 1e-12 * lam[-1]
    inst, sol = _vec("p2_eps_zero")
    assert inst["epsilon"] == 0.0
    for name in ("p2_inside_tube", "p2_eps_huge"):  # a* = 0
        inst, sol = _vec(name)
        assert not np.any(sol["alpha_hat"]) and not np.any(sol["alpha_check"])
        assert np.ptp(inst["y"]) < 2 * inst["epsilon"]
    inst, sol = _vec("p3_one_class_per_cluster")
    for c in np.unique(inst["labels"]):
        assert np.unique(inst["y"][inst["labels"] == c]).size == 1
    inst, sol = _vec("p3_singletons")
    assert np.unique(inst["labels"]).size == inst["n"]
    assert np.unique(_vec("p3_single_cluster")[0]["labels"]).size == 1
    for name, kernel in (("p1_linear", "linear"), ("p1_polynomial", "polynomial"),
                         ("p1_gaussian_gamma", "gaussian"), ("p2_linear", "linear"),
                         ("p2_polynomial", "polynomial"), ("p3_linear", "linear")):
        assert _vec(name)[0]["kernel"]["kernel"] == kernel
    assert MAN["vectors"]["p1_integer_K"]["params"]["K_dtype"] == "int64"
    inst, _ = _vec("p1_one_positive")
    assert np.sum(inst["y"] > 0) == 1
    # per-sample boxes: the solution uses several distinct boxes, free and at the bound
    for name in ("p1_weighted", "p1_class_weights", "p2_weighted", "p3_weighted"):
        inst, sol = _vec(name)
        C = inst["C"]
        assert isinstance(C, np.ndarray) and np.unique(C).size >= 2, name
        a = sol["alpha"] if inst["task"] != "svr" else sol["alpha_hat"] + sol["alpha_check"]
        free, top = (a > 0) & (a < C), a == C
        assert free.any() and top.any() and np.unique(C[free | top]).size >= 2, name
        assert np.all(a <= C) and not np.all(a <= np.min(C)), name
    assert MAN["format_version"] == 2
    cw = _vec("p1_class_weights")[0]
    assert np.sum(cw["y"] > 0) == 1 and cw["C"][cw["y"] > 0][0] == cw["n"] / 2
    jsons = [n for n, e in MAN["vectors"].items() if e["instance"].endswith(".json")]
    assert len(jsons) >= 4
    for n in jsons:
        e = MAN["vectors"][n]
        assert sniff(os.path.join(GOLDEN_DIR, e["instance"])) == "json"
        assert sniff(os.path.join(GOLDEN_DIR, e["solution"])) == "json"


def test_vectors_load_and_certify_without_cvxpy():
    """A conformance user needs numpy (reader) and dank_fast (a certificate), not CVXPY."""
    code = """
import sys
sys.modules["cvxpy"] = None  # any import of cvxpy now fails
import os
from verification.formats import load_instance, load_solution
from verification.golden import GOLDEN_DIR, load_manifest
import dank_fast
man = load_manifest()
worst = 0.0
for name, e in man["vectors"].items():
    inst = load_instance(os.path.join(GOLDEN_DIR, e["instance"]))
    sol = load_solution(os.path.join(GOLDEN_DIR, e["solution"]), inst["n"])
    K, y, C, eta, tau = (inst[k] for k in ("K", "y", "C", "eta", "tau"))
    if inst["task"] == "svm":  # a scalar C or per-sample boxes alike
        c = dank_fast.svm_certificate(K, y, sol["alpha"], C=C, eta=eta, tau=tau)
        worst = max(worst, c.rel_gap)
    elif inst["task"] == "svr":
        c = dank_fast.svr_certificate(K, y, sol["alpha_hat"], sol["alpha_check"], C=C,
                                      epsilon=inst["epsilon"], eta=eta, tau=tau)
        worst = max(worst, c.rel_gap)
assert "cvxpy" not in [m for m in sys.modules if sys.modules[m] is not None]
print(len(man["vectors"]), worst)
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    count, worst = r.stdout.split()
    assert int(count) == len(NAMES) and float(worst) <= GOLDEN_TOL


def _copy(tmp_path, names):
    d = tmp_path / "golden"
    d.mkdir()
    man = json.loads(json.dumps(MAN))
    man["vectors"] = {k: v for k, v in man["vectors"].items() if k in names}
    for e in man["vectors"].values():
        for f in (e["instance"], e["solution"]):
            shutil.copy(os.path.join(GOLDEN_DIR, f), d / f)
    (d / "MANIFEST.json").write_text(json.dumps(man))
    return d, man


REGEN = ["p1_basic", "p1_polynomial", "p1_weighted", "p2_json", "p2_weighted",
         "p3_two_clusters"]


def test_regeneration_reproduces_the_stored_vectors():
    """Fresh solves of a few specs (one per task, JSON and X-kernels): byte-identical
    instances and certified brackets overlapping the stored ones."""
    probs = vector_problems(regenerate=True, names=REGEN)
    assert sorted(probs) == REGEN and all(p == [] for p in probs.values()), probs


def test_regeneration_comparison_detects_changes(tmp_path, monkeypatch):
    import verification.golden as golden

    d, man = _copy(tmp_path, ["p1_n2", "p2_n2", "p3_n2"])
    # a changed spec: the regenerated instance differs and so does its value
    full = golden.specs

    def changed():
        out = []
        for name, what, f in full():
            if name == "p2_n2":
                f = dict(f, C=0.01)
            out.append((name, what, f))
        return out

    monkeypatch.setattr(golden, "specs", changed)
    probs = vector_problems(str(d), regenerate=True, names=["p1_n2", "p2_n2", "p3_n2"])
    assert probs["p1_n2"] == [] and probs["p3_n2"] == []
    assert [c for c, _ in probs["p2_n2"]] == ["regen_instance", "regen_bracket"]
    monkeypatch.setattr(golden, "specs", full)
    # a manifest whose bracket is wrong, a missing spec, a changed instance file
    man["vectors"]["p1_n2"]["lower"] += 1e-6
    man["vectors"]["p1_n2"]["upper"] += 1e-6
    man["vectors"]["no_such_vector"] = dict(man["vectors"]["p3_n2"])
    (d / "MANIFEST.json").write_text(json.dumps(man))
    inst = d / "p3_n2_instance.npz"
    inst.write_bytes(inst.read_bytes()[:-10])
    probs = vector_problems(str(d), regenerate=False)
    assert [c for c, _ in probs["p1_n2"]] == ["bracket"]
    assert [c for c, _ in probs["p3_n2"]][:2] == ["checksum", "unreadable"]
    assert probs["p2_n2"] == []


@pytest.mark.slow
def test_full_regeneration():
    """Every spec solved afresh (~15 s): only dank_ref's known shortfalls may be reported."""
    probs = vector_problems(regenerate=True)
    assert sorted(probs) == NAMES
    for name, p in probs.items():
        allowed = {"dank_ref"} if name in REF_SHORTFALL else set()
        assert {c for c, _ in p} <= allowed, (name, p)


def test_same_instance_tolerates_only_last_bit_kernel_differences(tmp_path):
    from verification.formats import save_instance
    from verification.golden import _same_instance

    e, inst, _ = _load("p1_basic")
    a = tmp_path / "a.npz"
    save_instance(a, task="svm", K=inst["K"], y=inst["y"], C=inst["C"], eta=inst["eta"],
                  tau=inst["tau"])
    for rel, same in ((2e-16, True), (1e-12, False)):
        K = inst["K"] * (1 + rel * np.eye(inst["n"]))
        b = tmp_path / "b.npz"
        save_instance(b, task="svm", K=K, y=inst["y"], C=inst["C"], eta=inst["eta"],
                      tau=inst["tau"])
        assert _same_instance(a, b) is same
    save_instance(b, task="svm", K=inst["K"], y=inst["y"], C=inst["C"], eta=inst["eta"],
                  tau=2 * inst["tau"])
    assert not _same_instance(a, b)
