"""Shared machinery of the claim checks: verdicts, instances, closed forms, counterexamples.

The projections onto the feasible sets and the Gaussian kernel are dank_ref's
(:mod:`dank_ref.projection`, :mod:`dank_ref.kernels`).  The closed forms here are written
independently of ``dank_fast`` (dense ``numpy.linalg.eigh``, no input validation, so that the
searches stay cheap) and are tested value for value against :mod:`dank_ref.certificate`
(``inner_F``, ``h_svm``, ``grad_h_svm``; tests/test_claims.py):

* ``F(d) = J_{tau/2}(11' + diag(d) K diag(d) / (4 eta))`` (Lemma 1), for any vector ``d``
  (``d = a * y`` for P1/P3, ``d = ah - ac`` for P2);
* ``h = lin + eta (n^2 - ||F||_F^2)`` (inner minimum in closed form, ``docs/MATH.md`` section 3);
* ``grad_a h = 1 - Y (F o K) Y a`` (P1, eq. (26)), P2 partial gradients
  ``y - eps - (F o K) b`` and ``-y - eps + (F o K) b`` (derived; finite-difference tested).

Verdicts
--------
Every claim is an inequality ``lhs <= rhs`` (possibly under a premise).  One evaluation is
classified by :func:`classify`:

* ``"holds"``: ``lhs <= rhs`` up to the relative tolerance :data:`RTOL`;
* ``"violated"`` (substantive): ``rhs > 0`` and ``lhs > rhs`` beyond the tolerance; its
  ratio ``lhs / rhs > 1`` measures by how much the bound fails;
* ``"degenerate"``: ``rhs <= 0`` and ``lhs > rhs``: the printed bound is not positive (e.g.
  ``tau / 2`` larger than every other term), so it fails trivially; reported apart;
* evaluations whose premise is not met do not count either way.

A claim's :class:`Verdict` is then VIOLATED (some substantive violation), VIOLATED-DEGENERATE
(only degenerate ones), VACUOUS (the premise was never met), HOLDS, or INCONCLUSIVE (no
trustworthy evaluation).  Ratios are only ever formed with ``rhs > 0``; nothing prints ``inf``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

# the feasible sets' projections and the Gaussian kernel are dank_ref's (one of each in the
# oracle side and here); re-exported for the claim modules
from dank_ref.kernels import gaussian_kernel
from dank_ref.projection import project_A, project_svr  # noqa: F401 - used by the claims

#: The values of ``Verdict.status``.
STATUSES = ("HOLDS", "VIOLATED", "VIOLATED-DEGENERATE", "VACUOUS", "INCONCLUSIVE")
RTOL = 1e-8  # relative tolerance of every inequality check (relative to the magnitudes involved)
RESULTS_VERSION = 2  # results.json layout (version 1 had no version field, see runner.py)


@dataclass
class Verdict:
    """Outcome of one claim check.

    Attributes
    ----------
    claim : str
        Claim id (``"L1"``, ``"PG"``, ..., see :mod:`verification.study.claims.paper`).
    status : str
        One of :data:`STATUSES`.
    worst_ratio : float or None
        Largest ``lhs / rhs`` over the evaluations with ``rhs > 0`` whose premise was met
        (``> 1`` means a substantive violation); ``None`` when there was none.
    where : dict
        The instance attaining ``worst_ratio`` (parameters, ``lhs``, ``rhs``).
    n_instances : int
        Number of evaluations (instance, point) made, including those whose premise failed.
    tolerance : float
        Relative tolerance of the comparison.
    counterexample_path : str or None
        File of the smallest substantive counterexample (``dank-verify reproduce FILE``).
    message : str
        What the check found, in a few sentences (the reasons for the status).
    statement : str
        The claim as the paper states it.
    details : dict
        Claim-specific measurements (JSON types).
    seconds : float
        Wall-clock time of the check.
    n_violations, n_degenerate : int
        Number of substantive and of degenerate violations.
    n_rounding : int
        Evaluations where both sides are at the rounding level of the comparison
        (``max(|lhs|, |rhs|) <= rtol * magnitude``): their ratio means nothing, so they are
        counted apart and never give ``worst_ratio``.
    n_premise_met : int or None
        Evaluations whose premise held (``None``: the claim has no premise).
    degenerate_where, degenerate_counterexample_path
        The smallest degenerate violation and its file.
    headline : str
        One interpretable line for the summary table.
    vacuity : str
        For a VACUOUS verdict: whether the premise can be met at all, and why.
    """

    claim: str
    status: str
    worst_ratio: float | None
    where: dict
    n_instances: int
    tolerance: float
    counterexample_path: str | None = None
    message: str = ""
    statement: str = ""
    details: dict = field(default_factory=dict)
    seconds: float = 0.0
    n_violations: int = 0
    n_degenerate: int = 0
    n_premise_met: int | None = None
    degenerate_where: dict | None = None
    degenerate_counterexample_path: str | None = None
    headline: str = ""
    vacuity: str = ""
    n_rounding: int = 0

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.worst_ratio is not None:
            self.worst_ratio = float(self.worst_ratio)
            if not math.isfinite(self.worst_ratio):
                raise ValueError(f"worst_ratio must be finite or None, got {self.worst_ratio!r}")

    def to_dict(self) -> dict:
        """Return the verdict as plain JSON types (non-finite floats become ``None``).

        Returns
        -------
        dict
            Every field, as written to the claims' JSON report.
        """
        return _jsonable(dataclasses.asdict(self))


def _jsonable(x):
    """Plain JSON types; non-finite floats become ``None`` (JSON has no inf/nan)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if math.isfinite(v) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


def violated(lhs: float, rhs: float, magnitude: float = 0.0, rtol: float = RTOL) -> bool:
    """Tell whether ``lhs > rhs`` beyond round-off.

    That is ``lhs - rhs > rtol * max(|lhs|, |rhs|, magnitude)``.

    Parameters
    ----------
    lhs, rhs : float
        The two sides of the claimed inequality ``lhs <= rhs``.
    magnitude : float, default 0.0
        The size of the terms that make up the two sides (the round-off of the comparison is
        relative to it as well as to ``|lhs|`` and ``|rhs|``).
    rtol : float, default 1e-8
        The relative tolerance.

    Returns
    -------
    bool
        True when the inequality ``lhs <= rhs`` fails beyond round-off.

    Examples
    --------
    >>> from verification.study.claims import violated
    >>> violated(1.0 + 1e-12, 1.0), violated(2.0, 1.0)
    (False, True)
    """
    return (lhs - rhs) > rtol * max(abs(lhs), abs(rhs), abs(magnitude), np.finfo(float).tiny)


def classify(lhs: float, rhs: float, magnitude: float = 0.0, rtol: float = RTOL) -> str:
    """Classify one evaluation of ``lhs <= rhs``: ``"holds"``, ``"violated"`` or ``"degenerate"``.

    ``"violated"`` needs ``rhs > 0`` (a positive bound that fails, with a finite ratio
    ``lhs / rhs``); a failing bound with ``rhs <= 0`` is ``"degenerate"``.

    Parameters
    ----------
    lhs, rhs : float
        The two sides of the claimed inequality ``lhs <= rhs``.
    magnitude : float, default 0.0
        The size of the terms that make up the two sides (the round-off of the comparison is
        relative to it as well as to ``|lhs|`` and ``|rhs|``).
    rtol : float, default 1e-8
        The relative tolerance.

    Returns
    -------
    {"holds", "violated", "degenerate"}
        The classification.

    Raises
    ------
    ValueError
        If ``lhs`` or ``rhs`` is not a finite number.
    """
    lhs, rhs = float(lhs), float(rhs)
    if not (math.isfinite(lhs) and math.isfinite(rhs)):
        raise ValueError(f"lhs and rhs must be finite, got lhs={lhs!r}, rhs={rhs!r}")
    if not violated(lhs, rhs, magnitude, rtol):
        return "holds"
    return "violated" if rhs > 0 else "degenerate"


def rounding_level(lhs: float, rhs: float, magnitude: float, rtol: float = RTOL) -> bool:
    """Both sides below the comparison's resolution ``rtol * magnitude``: ``lhs <= rhs`` holds
    by :func:`violated`'s rule, but ``lhs / rhs`` is a ratio of rounding errors (e.g.
    ``2e-29 / 1.5e-30 = 13.8``), never a worst case."""
    return max(abs(lhs), abs(rhs)) <= rtol * abs(magnitude)


def ratio(lhs: float, rhs: float) -> float | None:
    """``lhs / rhs`` when ``rhs > 0``, else ``None`` (a ratio to a non-positive bound means
    nothing: see :func:`classify`)."""
    return float(lhs / rhs) if rhs > 0 else None


def fmt(x: float, digits: int = 6) -> str:
    """``%g`` formatting without ``-0`` (negative zero prints as ``0``)."""
    x = float(x)
    if x == 0.0:
        x = 0.0
    return f"{x:.{digits}g}"


def fmt_ratio(r: float | None, digits: int = 4) -> str:
    """A ratio with enough digits not to round to exactly 1 when it is not 1 (0.99999 must
    not print as ``1``); ``"none"`` for ``None``."""
    if r is None:
        return "none"
    s = fmt(r, digits)
    while float(s) == 1.0 and r != 1.0 and digits < 17:
        digits += 1
        s = fmt(r, digits)
    return s


def describe(lhs: float, rhs: float, magnitude: float = 0.0, rtol: float = RTOL) -> str:
    """One line: ``lhs``, ``rhs``, the ratio (only when ``rhs > 0``) and the classification.

    This is the convention of the report and of ``dank-verify reproduce``.

    Parameters
    ----------
    lhs, rhs : float
        The two sides of the claimed inequality ``lhs <= rhs``.
    magnitude : float, default 0.0
        The size of the terms that make up the two sides (the round-off of the comparison is
        relative to it as well as to ``|lhs|`` and ``|rhs|``).
    rtol : float, default 1e-8
        The relative tolerance.

    Returns
    -------
    str
        The line.

    Raises
    ------
    ValueError
        If ``lhs`` or ``rhs`` is not a finite number.

    Examples
    --------
    >>> from verification.study.claims import describe
    >>> describe(2.0, 1.0)
    'lhs = 2, rhs = 1, lhs/rhs = 2 -> VIOLATED (substantive: rhs > 0)'
    """
    kind = classify(lhs, rhs, magnitude, rtol)
    s = f"lhs = {fmt(lhs, 10)}, rhs = {fmt(rhs, 10)}"
    if rhs > 0:
        s += f", lhs/rhs = {fmt_ratio(lhs / rhs, 6)}"
    else:
        s += " (rhs <= 0: no ratio)"
    word = {"holds": "holds", "violated": "VIOLATED (substantive: rhs > 0)",
            "degenerate": "VIOLATED-DEGENERATE (the bound is <= 0)"}[kind]
    return f"{s} -> {word}"


# closed forms (independent of dank_fast)
def gamma(K, d, eta):
    return np.outer(d, d) * K / (4.0 * eta)


def F_of(K, d, eta, tau):
    """``J_{tau/2}(11' + Gamma(d))`` by a dense eigendecomposition."""
    M = 1.0 + gamma(K, d, eta)
    if tau == 0.0:
        return M
    lam, U = np.linalg.eigh(M)
    keep = np.maximum(lam - tau / 2.0, 0.0)
    F = (U * keep) @ U.T
    return 0.5 * (F + F.T)


def h_svm(K, y, a, eta, tau):
    n = len(y)
    F = F_of(K, a * y, eta, tau)
    return float(a.sum() + eta * (n * n - np.sum(F * F)))


def grad_svm(K, y, a, eta, tau):
    d = a * y
    F = F_of(K, d, eta, tau)
    return 1.0 - y * ((F * K) @ d)


def h_svr(K, y, ah, ac, eps, eta, tau):
    n = len(y)
    b = ah - ac
    F = F_of(K, b, eta, tau)
    return float(b @ y - eps * np.sum(ah + ac) + eta * (n * n - np.sum(F * F)))


def grad_svr(K, y, ah, ac, eps, eta, tau):
    b = ah - ac
    g = (F_of(K, b, eta, tau) * K) @ b
    return np.concatenate([y - eps - g, -y - eps + g])


def kappa(K):
    return float(np.max(np.abs(K)))


# feasible sets
def random_feasible(rng, y, C, kind=None):
    """A random point of ``A`` of a random flavour (interior, vertex-like, sparse, full)."""
    n = y.size
    kind = kind or rng.choice(["uniform", "vertex", "sparse", "full"])
    if kind == "uniform":
        z = rng.uniform(0, C, n)
    elif kind == "vertex":
        z = C * (rng.random(n) < 0.5) + rng.normal(0, 0.05 * C, n)
    elif kind == "sparse":
        z = np.where(rng.random(n) < 0.2, rng.uniform(0, C, n), 0.0)
    else:
        z = np.full(n, C) + rng.normal(0, 0.01 * C, n)
    return project_A(z, y, C)


# instances
def draw_instance(rng, n_range=(4, 24), task="svm", tau_large=True):
    """A random instance: data, kernel (Gaussian / scaled Gaussian / linear), C, eta, tau.

    C, eta, kernel width and scale are log-uniform over wide ranges; tau is 0, 0.01, or
    log-uniform up to ``3 n`` (so that the ``tau/2 > n`` regime of Lemma 1 is visited).
    """
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    d = int(rng.integers(1, 6))
    X = rng.uniform(0, 1, (n, d))
    kind = rng.choice(["gaussian", "gaussian", "scaled", "linear"])
    sigma = float(2.0 ** rng.uniform(-3, 3))
    if kind == "linear":
        K = X @ X.T
        scale = 1.0
    else:
        K = gaussian_kernel(X, sigma)
        scale = float(10.0 ** rng.uniform(-1, 1)) if kind == "scaled" else 1.0
        K = scale * K
    K = 0.5 * (K + K.T)
    if task == "svr":
        y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    else:
        if rng.random() < 0.5:  # labels aligned with the data (clusters = classes)
            y = np.where(X[:, 0] > np.median(X[:, 0]), 1.0, -1.0)
        else:
            y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if np.all(y == y[0]):
            y[0] = -y[0]
    C = float(2.0 ** rng.uniform(-4, 5))
    eta = float(10.0 ** rng.uniform(-2, 3))
    u = rng.random()
    if u < 0.25:
        tau = 0.0
    elif u < 0.5 or not tau_large:
        tau = 0.01
    else:
        tau = float(np.exp(rng.uniform(np.log(1e-3), np.log(3.0 * n))))
    eps = float(10.0 ** rng.uniform(-3, -0.5))
    return dict(X=X, K=K, y=y, C=C, eta=eta, tau=tau, epsilon=eps, kernel=str(kind),
                sigma=sigma, kernel_scale=scale)


def structured_instances(rng, task="svm"):
    """Adversarial data: two far-apart clusters, labels alternating inside each cluster, so
    that ``Y K Y`` has a large eigenvalue orthogonal to ``y`` (the direction the constraint
    y'a = 0 leaves free); kernel scales 1 (Gaussian) and 3, 10 (non-normalised)."""
    out = []
    for s in (1.0, 3.0, 10.0):
        n = int(rng.integers(3, 7)) * 2
        X = np.concatenate([rng.normal(0, 0.01, (n // 2, 2)), 5 + rng.normal(0, 0.01, (n // 2, 2))])
        K = s * gaussian_kernel(X, 0.5)
        if task == "svr":
            y = rng.normal(size=n)
        else:
            y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        for eta in (0.1, 1e4):
            out.append(dict(X=X, K=0.5 * (K + K.T), y=y, C=1.0, eta=eta, tau=0.01, epsilon=0.01,
                            kernel="scaled" if s != 1.0 else "gaussian", sigma=0.5,
                            kernel_scale=s))
    return out


def where_of(inst, **extra):
    w = {k: inst[k] for k in ("C", "eta", "tau", "kernel", "sigma", "kernel_scale") if k in inst}
    w["n"] = int(len(inst["y"]))
    w.update(extra)
    return _jsonable(w)


# counterexamples
COUNTEREXAMPLE_VERSION = 1


def counterexample_name(claim: str, kind: str = "violated") -> str:
    """File name of a claim's counterexample (``kind="degenerate"`` gets its own file)."""
    base = claim.replace("[", "_").replace("]", "")
    return f"counterexample_{base}{'_degenerate' if kind == 'degenerate' else ''}.npz"


def save_counterexample(out_dir, claim, arrays: dict, params: dict, kind: str = "violated"
                        ) -> str | None:
    """Write ``<out_dir>/counterexample_<claim>[_degenerate].npz`` (plain float arrays, a
    string claim id, an integer format version and the parameters as JSON: loadable with
    ``allow_pickle=False``)."""
    if out_dir is None:
        return None
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, counterexample_name(claim, kind))
    payload = {k: np.asarray(v, dtype=float) for k, v in arrays.items()}
    payload["claim"] = np.array(claim)
    payload["format_version"] = np.array(COUNTEREXAMPLE_VERSION)
    payload["params_json"] = np.array(json.dumps(_jsonable(params)))
    np.savez(path, **payload)
    return path


@dataclass
class _Cex:
    key: tuple
    size: int
    arrays: dict
    params: dict
    where: dict
    lhs: float
    rhs: float


class Tracker:
    """Accumulates the evaluations of one claim and turns them into a :class:`Verdict`.

    Keeps the counts of each kind (:func:`classify`), the worst ratio with ``rhs > 0``, and
    the smallest counterexample of each kind (fewest points; a ``preferred`` one, e.g. shrunk
    by Hypothesis or reduced point by point, wins ties; then the larger violation).

    Parameters
    ----------
    claim : str
        Claim id.
    rtol : float
        Relative tolerance of the comparisons.
    premise : bool
        Whether the claim has a premise (then :meth:`record` takes ``premise_met`` and a
        claim whose premise is never met is VACUOUS).
    """

    def __init__(self, claim, rtol=RTOL, premise=False):
        self.claim = claim
        self.rtol = rtol
        self.has_premise = bool(premise)
        self.n = 0
        self.n_premise = 0
        self.n_viol = 0
        self.n_deg = 0
        self.n_round = 0
        self.worst: float | None = None
        self.where: dict = {}
        self.cex: dict[str, _Cex | None] = {"violated": None, "degenerate": None}
        self.t0 = time.perf_counter()

    def record(self, lhs, rhs, magnitude, where, arrays=None, params=None, size=None,
               premise_met=True, preferred=False) -> str:
        """Record one evaluation; returns its kind (``"premise not met"`` when not met)."""
        self.n += 1
        if not premise_met:
            return "premise not met"
        self.n_premise += 1
        kind = classify(lhs, rhs, magnitude, self.rtol)
        lhs, rhs = float(lhs), float(rhs)
        r = ratio(lhs, rhs)
        if kind == "holds" and rounding_level(lhs, rhs, magnitude, self.rtol):
            self.n_round += 1  # e.g. lhs = 2e-29, rhs = 1.5e-30 at scale 1: no meaningful ratio
            r = None
        if r is not None and (self.worst is None or r > self.worst):
            self.worst, self.where = r, dict(where, lhs=lhs, rhs=rhs)
        if kind == "violated":
            self.n_viol += 1
        elif kind == "degenerate":
            self.n_deg += 1
        if kind != "holds" and arrays is not None:
            self.offer_counterexample(kind, lhs, rhs, where, arrays, params, size, preferred)
        return kind

    def offer_counterexample(self, kind, lhs, rhs, where, arrays, params, size=None,
                             preferred=False):
        """Keep ``arrays`` as the counterexample of ``kind`` if it is smaller (fewer points;
        then ``preferred``, i.e. minimised; then the larger violation) than the current one.
        Does not count an evaluation."""
        lhs, rhs = float(lhs), float(rhs)
        r = ratio(lhs, rhs)
        size = int(size if size is not None else where.get("n", 0))
        strength = -(r if r is not None else (lhs - rhs) / max(abs(lhs), abs(rhs), 1e-300))
        key = (size, 0 if preferred else 1, strength)
        old = self.cex[kind]
        if old is None or key < old.key:
            self.cex[kind] = _Cex(key, size, arrays, params, dict(where), lhs, rhs)

    def verdict(self, statement, out_dir=None, message="", inconclusive=None, details=None,
                vacuity="", degenerate_note="", headline_suffix="") -> Verdict:
        """Build the verdict (and write the counterexample files into ``out_dir``).

        ``vacuity`` (kept for a VACUOUS verdict) says whether the premise can be met at all;
        ``degenerate_note`` explains when the bound is <= 0; ``headline_suffix`` is appended
        to the one-line summary."""
        details = dict(details or {})
        notes = []
        paths = {}
        for kind in ("violated", "degenerate"):
            c = self.cex[kind]
            if c is None:
                continue
            paths[kind] = save_counterexample(out_dir, self.claim, c.arrays, c.params, kind)
            label = "substantive" if kind == "violated" else "degenerate"
            notes.append(f"Smallest {label} counterexample (n={c.size}): "
                         f"{describe(c.lhs, c.rhs, 0.0, self.rtol)}.")
            details[f"{label}_counterexample_where"] = c.where
        deg = self.cex["degenerate"]
        if inconclusive or self.n == 0:
            status = "INCONCLUSIVE"
            head = inconclusive or "no evaluation"
        elif self.n_viol:
            status = "VIOLATED"
            head = (f"lhs/rhs = {fmt_ratio(self.worst, 3)} at worst; {self.n_viol} of "
                    f"{self.n_premise} evaluations violate")
            if self.n_deg:
                head += f" (+{self.n_deg} degenerate, rhs <= 0)"
        elif self.n_deg:
            status = "VIOLATED-DEGENERATE"
            head = (f"only where the bound is <= 0 ({self.n_deg} of {self.n_premise}, e.g. "
                    f"rhs = {fmt(deg.rhs, 3)} < lhs = {fmt(deg.lhs, 3)}); ")
            head += (f"worst lhs/rhs with rhs > 0: {fmt_ratio(self.worst)}"
                     if self.worst is not None else "no evaluation with rhs > 0")
        elif self.has_premise and self.n_premise == 0:
            status = "VACUOUS"
            head = f"premise met in 0 of {self.n} evaluations"
        else:
            status = "HOLDS"
            head = (f"worst lhs/rhs = {fmt_ratio(self.worst)}" if self.worst is not None
                    else "no evaluation with rhs > 0")
            if self.worst is not None and self.worst > 1:
                head += (f" (above 1 only within the comparison's relative tolerance "
                         f"{self.rtol:g})")
        if self.n_round:
            head += (f"; {self.n_round} rounding-level evaluations (|lhs|, |rhs| <= "
                     f"{self.rtol:g} x scale) counted apart")
        if self.has_premise and status not in ("VACUOUS", "INCONCLUSIVE"):
            head += f"; premise met in {self.n_premise} of {self.n}"
        if headline_suffix:
            head += f"; {headline_suffix}"
        if status == "VIOLATED-DEGENERATE" and degenerate_note:
            notes.append(degenerate_note)
        if status == "INCONCLUSIVE" and inconclusive:
            notes.insert(0, inconclusive)
        msg = " ".join(notes + ([message] if message else [])).strip()
        return Verdict(claim=self.claim, status=status, worst_ratio=self.worst,
                       where=_jsonable(self.where), n_instances=self.n, tolerance=self.rtol,
                       counterexample_path=paths.get("violated"), message=msg,
                       statement=statement, details=_jsonable(details),
                       seconds=time.perf_counter() - self.t0, n_violations=self.n_viol,
                       n_degenerate=self.n_deg, n_rounding=self.n_round,
                       n_premise_met=self.n_premise if self.has_premise else None,
                       degenerate_where=_jsonable(deg.where | {"lhs": deg.lhs, "rhs": deg.rhs})
                       if deg else None,
                       degenerate_counterexample_path=paths.get("degenerate"),
                       headline=head, vacuity=vacuity if status == "VACUOUS" else "")
