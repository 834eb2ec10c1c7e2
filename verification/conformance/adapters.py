"""This project's solvers as ``--impl`` targets of the conformance kit.

``verification.conformance.adapters:NAME`` with NAME one of :data:`ADAPTERS`:

* ``fast_<method>``: ``dank_fast.solve_svm`` / ``solve_svr`` / ``solve_decomposed`` with
  ``method=<method>`` (``fast_paper`` is Algorithm 1 exactly as printed), ``tol = 1e-8``
  (the oracle's tol is 1e-6), the rest at its defaults (``fast_auto``: each solver's default
  method, ``"auto"``; ``meta`` says which ran).  The answer carries
  ``F`` (svm, svr: the dense inner minimiser; not for P3, whose ``F`` dank_fast keeps per
  cluster) and the bias.  An instance without ``K`` (the large set: ``X`` and a kernel) is
  solved from a :class:`dank_fast.FeatureKernel` (svm by working sets, P3 cluster by
  cluster; no ``n x n`` array, no ``F`` in the answer; ``fast_auto`` and ``fast_newton``
  only), except svr, whose solver needs the dense kernel: it is computed from ``X``
  (``8 n^2`` bytes, 3.2 GB at ``n = 20,000``) and the solve starts from the plain SVR's dual
  (:class:`sklearn.svm.SVR` on ``X``, same kernel, ``C`` and ``epsilon``), as
  :class:`dank_fast.DANKRegressor` does (from zero it took over ten minutes at n = 20,000,
  from the plain SVR 50 s: ``benchmarks/bench_scale.py``).
* ``ref_scs``, ``ref_clarabel``: ``dank_ref.solve_*`` with that conic solver, defaults
  otherwise (Clarabel refuses ``n > ~135`` before solving: an ``error`` row).

Both packages are imported with this module (when the kit's worker starts), so an instance's
time is the solve alone.  Each adapter's ``meta`` names the solver, the method, its own status
and iteration count; the kit's verdict never uses them.
"""

from __future__ import annotations

import warnings

import numpy as np

import dank_fast
import dank_ref

__all__ = ["ADAPTERS", "fast_auto", "fast_accelerated", "fast_newton", "fast_paper",
           "fast_paper_monotone", "fast_pgm", "ref_scs", "ref_clarabel"]

FAST_TOL = 1e-8


def _kernel(inst: dict):
    """``K``, or for an instance given only by ``X`` (the large set) a FeatureKernel (svm,
    decomposed) or the dense kernel computed from ``X`` (svr)."""
    if inst.get("K") is not None:
        return inst["K"]
    kind = {"gaussian": "rbf", "polynomial": "poly"}.get(inst["kernel"], inst["kernel"])
    params = {k: inst[k] for k in ("sigma", "gamma", "degree", "coef0") if k in inst}
    if inst["task"] == "svr":
        return dank_fast.compute_kernel(inst["X"], kernel=kind, **params)
    return dank_fast.FeatureKernel(inst["X"], kind, **params)


def plain_svr_dual(inst: dict) -> np.ndarray:
    """``ah - ac`` of the plain epsilon-SVR (scikit-learn, libsvm, ``tol = 1e-4``) on an
    instance's features with its Gaussian kernel, ``C`` and ``epsilon``: P2's warm start when
    the instance has no ``K`` (time ``O(n^2 d)`` at worst, memory libsvm's kernel cache)."""
    # start-up: only P2 instances without K need scikit-learn's SVR
    from sklearn.svm import SVR

    if inst["kernel"] != "gaussian":
        return np.zeros(inst["y"].size)
    gamma = inst["gamma"] if "gamma" in inst else 0.5 / inst["sigma"] ** 2
    svr = SVR(C=inst["C"], epsilon=inst["epsilon"], gamma=gamma, tol=1e-4).fit(inst["X"],
                                                                               inst["y"])
    d = np.zeros(inst["y"].size)
    d[svr.support_] = svr.dual_coef_.ravel()
    return d


def _fast_solve(inst: dict, method: str):
    y, C, eta, task = inst["y"], inst["C"], inst["eta"], inst["task"]
    K = _kernel(inst)
    dense = isinstance(K, np.ndarray)
    if task == "svm":
        return dank_fast.solve_svm(K, y, C=C, eta=eta, tau=inst["tau"], method=method,
                                   tol=FAST_TOL), method
    if task == "svr":
        kw = {} if method == "auto" else dict(method=method)
        if inst.get("K") is None:  # computed here from X: PSD by construction
            kw.update(check_psd=False, alpha0=plain_svr_dual(inst))
        res = dank_fast.solve_svr(K, y, C=C, epsilon=inst["epsilon"], eta=eta, tau=inst["tau"],
                                  tol=FAST_TOL, **kw)
        return res, res.method
    kw = {} if dense else dict(certify_full=False)
    return dank_fast.solve_decomposed(K, y, C=C, eta=eta, labels=inst["labels"],
                                      method=method, tol=FAST_TOL, **kw), method


def _fast(method: str):
    def solve(inst: dict) -> dict:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the status goes into meta
            res, used = _fast_solve(inst, method)
        meta = dict(solver=f"dank_fast.solve_{inst['task']}", method=used, status=res.status,
                    n_iter=int(np.max(getattr(res, "n_iter", -1))), tol=FAST_TOL)
        F = res.F if inst.get("K") is not None else None  # no n x n F beyond the dense limit
        if inst["task"] == "svr":
            return dict(alpha_hat=res.extra["alpha_hat"], alpha_check=res.extra["alpha_check"],
                        bias=res.bias, F=F, meta=meta)
        if inst["task"] == "svm":
            return dict(alpha=res.alpha, bias=res.bias, F=F, meta=meta)
        return dict(alpha=res.alpha, meta=meta)

    solve.__name__ = solve.__qualname__ = f"fast_{method.replace('-', '_')}"
    solve.__doc__ = f"dank_fast with method={method!r} (see the module docstring)."
    return solve


def _ref(solver: str):
    def solve(inst: dict) -> dict:
        K, y, C, eta, task = inst["K"], inst["y"], inst["C"], inst["eta"], inst["task"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if task == "svm":
                r = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=inst["tau"], solver=solver)
            elif task == "svr":
                r = dank_ref.solve_svr(K, y, C=C, epsilon=inst["epsilon"], eta=eta,
                                       tau=inst["tau"], solver=solver)
            else:
                r = dank_ref.solve_decomposed(K, y, inst["labels"], C=C, eta=eta,
                                              solver=solver)
        meta = dict(solver=f"dank_ref.solve_{task}", method=solver, status=r.status)
        out = dict(F=np.asarray(r.F), meta=meta)
        if task == "svr":
            out.update(alpha_hat=r.alpha_hat, alpha_check=r.alpha_check)
        else:
            out["alpha"] = r.alpha
        if task != "decomposed":
            out["bias"] = r.bias
        return out

    solve.__name__ = solve.__qualname__ = f"ref_{solver.lower()}"
    solve.__doc__ = f"dank_ref with solver={solver!r} (see the module docstring)."
    return solve


fast_auto = _fast("auto")
fast_accelerated = _fast("accelerated")
fast_newton = _fast("newton")
fast_paper = _fast("paper")
fast_paper_monotone = _fast("paper-monotone")
fast_pgm = _fast("pgm")
ref_scs = _ref("SCS")
ref_clarabel = _ref("CLARABEL")

ADAPTERS = ("fast_auto", "fast_accelerated", "fast_newton", "fast_paper", "fast_paper_monotone",
            "fast_pgm", "ref_scs", "ref_clarabel")
