"""Fuzz tests of the reference solvers ``dank_ref.solve_svm``, ``solve_svr``,
``solve_decomposed`` (CVXPY + SCS: tiny n, few examples, they are slow).

Every call ends in a ``ValueError``/``TypeError`` naming a parameter that violates
docs/validity.md, or in a :class:`dank_ref.RefResult` with ``lower <= upper`` at a feasible
point, whose bracket overlaps dank_fast's certificate of the same point (the other package).
``dank_ref.SolverError`` on a valid instance is a failure (the reference must solve what the
rule admits); instances outside the representable range must be refused by name.
"""

from __future__ import annotations

import numpy as np
from _fuzz_known import present
from _fuzz_strategies import (
    Verdict,
    assert_bracket,
    assert_feasible,
    assert_overlap,
    bad_params,
    call,
    cluster_labels,
    cluster_labels_rule,
    fuzz,
    huge_int,
    kernel_rule,
    kernels,
    labels_rule,
    nonneg_scalars,
    pm1_labels,
    positive_scalars,
    range_rule,
    real_targets,
    record,
    ref_bracket,
    scalar_rule,
    targets_rule,
)
from hypothesis import given
from hypothesis import strategies as st

import dank_ref
from dank_fast import svm_certificate, svr_certificate


def _mixed_labels(labels) -> bool:
    """Valid cluster labels dank_ref mishandles (known bug 'ref-cluster-labels'): tuples,
    values of mixed types, infinities."""
    if isinstance(labels, np.ndarray):
        items = labels.tolist()
    else:
        try:
            items = list(labels)
        except TypeError:
            return False
    kinds = {type(x) for x in items}
    return (any(isinstance(x, tuple) for x in items) or len(kinds) > 1
            or any(isinstance(x, float) and np.isinf(x) for x in items))


@fuzz(12)
@given(data=st.data())
def test_fuzz_ref_solvers(data):
    task = data.draw(st.sampled_from(["svm", "svr", "decomposed"]), label="task")
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "labels", max_bad=1))
    K = data.draw(kernels(max_n=4, good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(2, 4))
    if task == "svr":
        y = data.draw(real_targets(n, good="y" not in bad), label="y")
        vy = targets_rule(y, n if Ks is not None else None)
    else:
        y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
        vy = labels_rule(y, n if Ks is not None else None, require_both=task == "svm")
    C = data.draw(positive_scalars(lo=-2, hi=2, good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(lo=-2, hi=2, good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    eps = data.draw(st.sampled_from([0.0, 0.1]), label="epsilon")
    labels = data.draw(cluster_labels(n, good="labels" not in bad), label="labels")
    v = Verdict().merge(vK).merge(vy)
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(eta, "eta", "pos"))
    if task != "decomposed":
        v.merge(scalar_rule(tau, "tau", "nonneg"))
    else:
        v.merge(cluster_labels_rule(labels, n) if Ks is not None else Verdict())
    if (Ks is not None and scalar_rule(C, "C", "pos").valid
            and scalar_rule(eta, "eta", "pos").valid):
        v.merge(range_rule(float(C), float(eta), float(np.max(np.abs(Ks))), n))

    if huge_int(C, eta, tau) and present("ref-huge-int"):
        record(f"dank_ref.solve_{task}", "known-bug")
        return
    if task == "decomposed" and _mixed_labels(labels) and present("ref-cluster-labels"):
        record("dank_ref.solve_decomposed", "known-bug")
        return

    def run():
        if task == "svm":
            return dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau)
        if task == "svr":
            return dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau)
        return dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta)

    res, _ = call(f"dank_ref.solve_{task}", v, run)
    if res is None:
        return
    C, eta, tau = float(C), float(eta), float(tau)
    yv = np.asarray(y, dtype=float)
    assert_bracket(res.lower, res.upper, f"dank_ref.solve_{task}")
    assert res.status in ("optimal", "inaccurate")
    if task == "svm":
        assert_feasible(res.alpha, C, n, yv)
        fc = svm_certificate(K, yv, res.alpha, C=C, eta=eta, tau=tau)
        point = res.alpha
    elif task == "svr":
        z = np.concatenate([res.alpha_hat, res.alpha_check])
        assert_feasible(z, C, n, np.concatenate([np.ones(n), -np.ones(n)]), "[ah; ac]")
        fc = svr_certificate(K, yv, res.alpha_hat, res.alpha_check, C=C, epsilon=eps,
                             eta=eta, tau=tau)
        point = z
    else:
        assert_feasible(res.alpha, C, n)
        return  # P3's certificate on Kbar: cross-checked in test_fuzz_certificates
    _, scale = ref_bracket(task, Ks, yv, point, C=C, eta=eta, tau=tau, epsilon=eps)
    assert_overlap((fc.lower, fc.upper), (res.lower, res.upper), scale,
                   f"dank_ref.solve_{task} vs dank_fast")

