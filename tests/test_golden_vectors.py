"""Golden vectors: checksums verified, every vector re-certified (no CVXPY needed to load)."""

import os

import numpy as np
import pytest

from verification.formats import load_instance, load_solution
from verification.golden import GOLDEN_DIR, check_vectors, load_manifest, sha256
from verification.oracle import certify


def test_manifest_checksums():
    man = load_manifest()
    assert len(man["vectors"]) >= 5
    for e in man["vectors"].values():
        assert sha256(os.path.join(GOLDEN_DIR, e["instance"])) == e["sha256_instance"]
        assert sha256(os.path.join(GOLDEN_DIR, e["solution"])) == e["sha256_solution"]


@pytest.mark.parametrize("name", sorted(load_manifest()["vectors"]))
def test_vector_recertified(name):
    e = load_manifest()["vectors"][name]
    with np.load(os.path.join(GOLDEN_DIR, e["instance"]), allow_pickle=False) as z:
        assert "y" in z.files
    inst = load_instance(os.path.join(GOLDEN_DIR, e["instance"]))
    sol = load_solution(os.path.join(GOLDEN_DIR, e["solution"]), inst["y"].size)
    rep = certify(inst, sol, reference=False)
    assert rep["certified"], rep
    assert abs(rep["lower"] - e["lower"]) <= 1e-9 * max(1, abs(e["lower"]))


def test_rank_one_vector_is_rank_one():
    sol = load_solution(os.path.join(GOLDEN_DIR, "p1_rank_one_F_solution.npz"))
    lam = np.linalg.eigvalsh(sol["F"])
    assert np.sum(lam > 1e-9 * max(lam[-1], 1e-300)) <= 1


def test_vectors_regenerate():
    ok, lines = check_vectors()
    assert ok, lines
