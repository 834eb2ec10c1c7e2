"""`dank-verify certify`: accepts reference solutions, rejects perturbed ones, 2 on bad input."""

import json
import warnings

import numpy as np
import pytest

from verification.claims._common import F_of, gaussian_kernel
from verification.cli import main
from verification.formats import save_instance, save_solution


@pytest.fixture(scope="module")
def p1(tmp_path_factory):
    from dank_fast import solve_svm

    d = tmp_path_factory.mktemp("p1")
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (14, 2))
    y = np.where(X[:, 0] > X[:, 1], 1.0, -1.0)
    K = gaussian_kernel(X, 0.4)
    C, eta, tau = 1.0, 2.0, 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-12)
    inst = d / "inst.npz"
    save_instance(inst, task="svm", K=K, y=y, C=C, eta=eta, tau=tau)
    import dank_ref.certificate as rc

    c = rc.svm_certificate(K, y, r.alpha, C=C, eta=eta, tau=tau)
    return dict(dir=d, inst=str(inst), K=K, y=y, C=C, eta=eta, tau=tau, alpha=c.alpha,
                bias=c.bias, F=c.F, X=X)


def _sol(p1, name, **kw):
    path = str(p1["dir"] / name)
    args = dict(task="svm", alpha=p1["alpha"], bias=p1["bias"], F=p1["F"])
    args.update(kw)
    save_solution(path, **args)
    return path


def test_accepts_reference(p1):
    assert main(["certify", p1["inst"], _sol(p1, "ok.npz")]) == 0
    assert main(["certify", p1["inst"], _sol(p1, "ok.json")]) == 0


def test_accepts_json_instance_from_X(p1, tmp_path):
    path = tmp_path / "inst.json"
    save_instance(str(path), task="svm", X=p1["X"], kernel="gaussian", sigma=0.4, y=p1["y"],
                  C=p1["C"], eta=p1["eta"], tau=p1["tau"])
    assert main(["certify", str(path), _sol(p1, "ok2.npz")]) == 0


@pytest.mark.parametrize("kind", ["sign", "bias", "infeasible", "tau_threshold"])
def test_rejects_perturbed(p1, kind):
    a, b, F = p1["alpha"], p1["bias"], p1["F"]
    if kind == "sign":
        a = -a
    elif kind == "bias":
        b = b + 0.5
    elif kind == "infeasible":
        a = a.copy()
        a[0] += 0.3
    else:  # J_tau instead of J_{tau/2}
        F = F_of(p1["K"], a * p1["y"], p1["eta"], 2 * p1["tau"])
    assert main(["certify", p1["inst"], _sol(p1, f"bad_{kind}.npz", alpha=a, bias=b,
                                               F=F)]) == 1


def test_bad_input(p1, tmp_path):
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert main(["certify", p1["inst"], str(obj)]) == 2
    pk = tmp_path / "pk.npz"
    np.savez(pk, format="dank-solution", version=1, task="svm",
             alpha=np.array([{"x": 1}], dtype=object))
    assert main(["certify", p1["inst"], str(pk)]) == 2
    js = tmp_path / "bad.json"
    js.write_text(json.dumps({"format": "dank-solution", "version": 1, "task": "svm",
                              "alpha": [1.0, 2.0]}))
    assert main(["certify", p1["inst"], str(js)]) == 2  # wrong length
    js.write_text("{not json")
    assert main(["certify", p1["inst"], str(js)]) == 2
    inst = tmp_path / "inst.json"
    inst.write_text(json.dumps({"format": "dank-instance", "version": 1, "task": "svm",
                                "K": [[1, 0], [0, 1]], "y": [1, -1], "C": -1, "eta": 1}))
    assert main(["certify", str(inst), _sol(p1, "ok3.npz")]) == 2
    assert main(["certify", str(tmp_path / "missing.npz"), _sol(p1, "ok4.npz")]) == 2


@pytest.mark.parametrize("task", ["svm", "decomposed"])
def test_an_instance_above_the_dense_limit_is_certified_from_features(p1, tmp_path, monkeypatch,
                                                                      task, capsys):
    """With ``X`` beyond ``MAX_ARRAY_BYTES`` for ``n x n``, the verdict and the bracket are the
    dense route's (dank_ref.scale_certificate, row blocks); a wrong bias is still rejected."""
    from verification import formats
    from verification.formats import load_instance, load_solution
    from verification.oracle import certify

    labels = np.arange(14) % 3
    extra = dict(labels=labels) if task == "decomposed" else dict(tau=p1["tau"])
    inst = tmp_path / "x.npz"
    save_instance(inst, task=task, X=p1["X"], kernel="gaussian", sigma=0.4, y=p1["y"],
                  C=p1["C"], eta=p1["eta"], **extra)
    alpha = np.clip(p1["alpha"], 0.0, p1["C"])
    sols = {"good": dict(alpha=alpha)}
    if task == "svm":
        sols["good"]["bias"] = p1["bias"]
        sols["bad_bias"] = dict(alpha=alpha, bias=p1["bias"] + 0.5)
    reps = {}
    for name, kw in sols.items():
        save_solution(tmp_path / f"{name}.npz", task=task, **kw)
        dense = certify(load_instance(inst), load_solution(tmp_path / f"{name}.npz", 14),
                        reference=False)
        monkeypatch.setattr(formats.spec, "MAX_ARRAY_BYTES", 8 * 14 * 13)
        big = load_instance(inst)
        assert big["K"] is None
        reps[name] = certify(big, load_solution(tmp_path / f"{name}.npz", 14), reference=False)
        monkeypatch.undo()
        assert reps[name]["certified"] == dense["certified"]
        assert reps[name]["failed"] == dense["failed"]
        for key in ("lower", "upper", "rel_gap"):
            assert reps[name][key] == pytest.approx(dense[key], rel=1e-9, abs=1e-12)
    assert reps["good"]["certified"] is (task == "svm")
    if task == "svm":
        assert reps["bad_bias"]["failed"] == ["bias"]
