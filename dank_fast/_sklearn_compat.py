"""scikit-learn's private helpers the estimators use, each with a fallback of dank_fast's own.

scikit-learn offers no public API for these; each is imported where it lives today and, when a
release moves it, replaced by the fallback below, which ``tests/test_estimator_sklearn.py``
checks against the primary on the same inputs:

* ``sklearn.base._fit_context`` and ``sklearn.utils._param_validation``'s ``Interval`` and
  ``StrOptions`` (the estimators' ``_parameter_constraints``): :func:`fit_context` validates the
  hyper-parameters when ``fit`` starts, by :func:`check_params` in the fallback;
* ``sklearn.utils.multiclass._ovr_decision_function`` (the one-vs-one decision function):
  :func:`ovo_votes`;
* ``sklearn.calibration._sigmoid_calibration`` (Platt's sigmoid of ``probability=True``):
  :func:`platt_sigmoid`.

``sklearn.svm._libsvm`` (the plain SVM's dual) is guarded in :mod:`dank_fast._libsvm`.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

__all__ = ["Interval", "StrOptions", "check_params", "fit_context", "ovo_decision_function",
           "ovo_votes", "platt_sigmoid", "sigmoid_calibration"]


class InvalidParameterError(ValueError, TypeError):
    """A hyper-parameter of the wrong type or value (as scikit-learn's, of the same bases)."""


class FallbackInterval:
    """``Interval(type, left, right, closed=...)``: numbers of ``type`` between the bounds
    (``None``: unbounded; ``closed`` in ``"left"``, ``"right"``, ``"both"``, ``"neither"``)."""

    def __init__(self, type, left, right, *, closed):
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def __str__(self) -> str:
        lo = "[" if self.closed in ("left", "both") else "("
        hi = "]" if self.closed in ("right", "both") else ")"
        kind = "an int" if self.type is numbers.Integral else "a float"
        left = "-inf" if self.left is None else self.left
        right = "inf" if self.right is None else self.right
        return f"{kind} in the range {lo}{left}, {right}{hi}"


class FallbackStrOptions:
    """``StrOptions(options)``: one of a set of strings."""

    def __init__(self, options):
        self.options = set(options)

    def __str__(self) -> str:
        return f"a str among {sorted(self.options)}"


try:  # private in every scikit-learn release so far (sklearn/utils/_param_validation.py)
    from sklearn.base import _fit_context as _sk_fit_context
    from sklearn.utils._param_validation import Interval, StrOptions
except ImportError:  # pragma: no cover - a scikit-learn that moved them: the fallbacks
    _sk_fit_context = None
    Interval, StrOptions = FallbackInterval, FallbackStrOptions

try:  # private (sklearn/utils/multiclass.py); SVC's one-vs-one decision function uses it
    from sklearn.utils.multiclass import _ovr_decision_function as _sk_ovr_decision_function
except ImportError:  # pragma: no cover - a scikit-learn that moved it: the fallback
    _sk_ovr_decision_function = None


def _in_interval(c, value) -> bool:
    """``value`` satisfies an interval (scikit-learn's or :class:`FallbackInterval`): of its
    type, not NaN, within its bounds (infinities are outside an open unbounded side)."""
    if not isinstance(value, c.type):
        return False
    if not isinstance(value, numbers.Integral) and math.isnan(value):
        return False
    left = -math.inf if c.left is None else c.left
    right = math.inf if c.right is None else c.right
    below = value < left if c.closed in ("left", "both") else value <= left
    above = value > right if c.closed in ("right", "both") else value >= right
    return not (below or above)


def _satisfies(c, value) -> bool:
    """``value`` satisfies one constraint of a ``_parameter_constraints`` list (the kinds the
    DANK estimators use)."""
    if c is None:
        return value is None
    if isinstance(c, type):
        return isinstance(value, c)
    if c == "boolean":
        return isinstance(value, bool | np.bool_)
    if c == "verbose":
        return isinstance(value, bool | np.bool_) or (
            isinstance(value, numbers.Integral) and value >= 0)
    if c == "random_state":
        return value is None or isinstance(value, np.random.RandomState) or (
            isinstance(value, numbers.Integral) and 0 <= value <= 2**32 - 1)
    if hasattr(c, "options"):
        return isinstance(value, str) and value in c.options
    if hasattr(c, "closed"):
        return _in_interval(c, value)
    raise ValueError(f"unknown parameter constraint {c!r}")


def check_params(constraints: dict, params: dict, caller: str) -> None:
    """Raise :class:`InvalidParameterError` naming the first parameter of ``params`` that
    satisfies none of its ``constraints`` (the fallback of scikit-learn's validation)."""
    for name, value in params.items():
        allowed = constraints.get(name)
        if allowed is None or any(_satisfies(c, value) for c in allowed):
            continue
        described = " or ".join(str(c) if c is not None else "None" for c in allowed)
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be {described}. Got {value!r} instead.")


def _validating_fit(fit):
    """``fit`` preceded by :func:`check_params` on the estimator's hyper-parameters."""
    @functools.wraps(fit)
    def wrapper(estimator, *args, **kwargs):
        check_params(estimator._parameter_constraints, estimator.get_params(deep=False),
                     type(estimator).__name__)
        return fit(estimator, *args, **kwargs)
    return wrapper


def fit_context(fit):
    """Decorate an estimator's ``fit``: its ``_parameter_constraints`` are checked first
    (scikit-learn's ``_fit_context(prefer_skip_nested_validation=True)``, else
    :func:`check_params`)."""
    if _sk_fit_context is None:  # pragma: no cover - exercised through _validating_fit
        return _validating_fit(fit)
    return _sk_fit_context(prefer_skip_nested_validation=True)(fit)


def ovo_votes(predictions: np.ndarray, confidences: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-one votes, ties broken by the summed confidences (scikit-learn's rule).

    Column ``k`` of ``predictions`` (``0``: the first class of the ``k``-th pair ``i < j`` in
    lexicographic order, ``1``: the second) gives a vote; ``confidences[:, k]`` counts for
    ``j`` and against ``i``. The summed confidence ``s`` of each class enters as
    ``s / (3 (|s| + 1))``, in ``(-1/3, 1/3)``: it breaks ties without overturning a vote.
    ``O(n_samples n_classes^2)`` time, ``O(n_samples n_classes)`` memory.
    """
    n = predictions.shape[0]
    votes = np.zeros((n, n_classes))
    conf = np.zeros((n, n_classes))
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            conf[:, i] -= confidences[:, k]
            conf[:, j] += confidences[:, k]
            votes[predictions[:, k] == 0, i] += 1
            votes[predictions[:, k] == 1, j] += 1
            k += 1
    return votes + conf / (3 * (np.abs(conf) + 1))


def ovo_decision_function(predictions: np.ndarray, confidences: np.ndarray,
                          n_classes: int) -> np.ndarray:
    """The one-vs-one decision function of scikit-learn's SVC (:func:`ovo_votes`)."""
    if _sk_ovr_decision_function is None:  # pragma: no cover - exercised through ovo_votes
        return ovo_votes(predictions, confidences, n_classes)
    return _sk_ovr_decision_function(predictions, confidences, n_classes)


try:  # private (sklearn/calibration.py): Platt's sigmoid, as CalibratedClassifierCV fits it
    from sklearn.calibration import _sigmoid_calibration as _sk_sigmoid_calibration
except ImportError:  # pragma: no cover - a scikit-learn that moved it: the fallback
    _sk_sigmoid_calibration = None


def platt_sigmoid(f: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """Platt's ``(A, B)`` of ``P(1 | f) = 1 / (1 + exp(A f + B))`` (Platt 1999, with his
    smoothed targets ``(n+ + 1) / (n+ + 2)`` and ``1 / (n- + 2)``; Lin, Lin and Weng 2007's
    stable log-loss), by SciPy's L-BFGS from ``(0, log((n- + 1) / (n+ + 1)))``: the fallback of
    scikit-learn's ``_sigmoid_calibration``."""
    # start-up: scipy.optimize is needed only by this fallback
    from scipy.optimize import minimize

    f = np.asarray(f, dtype=np.float64)
    pos = target > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def loss(ab):
        z = ab[0] * f + ab[1]
        p = np.exp(-np.logaddexp(0.0, z))  # 1 / (1 + e^z)
        value = float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))
        g = t - p  # d loss / d z
        return value, np.array([float(g @ f), float(g.sum())])

    x0 = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    ab = minimize(loss, x0, jac=True, method="L-BFGS-B").x
    return float(ab[0]), float(ab[1])


def sigmoid_calibration(f: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """Platt's sigmoid ``(A, B)``: scikit-learn's ``_sigmoid_calibration`` (the one of
    ``CalibratedClassifierCV(method="sigmoid")``), else :func:`platt_sigmoid`."""
    if _sk_sigmoid_calibration is None:  # pragma: no cover - exercised through platt_sigmoid
        return platt_sigmoid(f, target)
    a, b = _sk_sigmoid_calibration(np.asarray(f, dtype=np.float64), target)
    return float(a), float(b)
