"""libsvm fits with an iteration limit whose ConvergenceWarning becomes dank_fast's own."""

from __future__ import annotations

import warnings
from collections.abc import Callable


def fit_limited(model, X, y, message: Callable[[], str]):
    """``model.fit(X, y)`` for a scikit-learn libsvm model built with ``max_iter``.

    A scikit-learn ``ConvergenceWarning`` (libsvm stopped at its iteration limit) is re-issued
    as :class:`dank_fast.ConvergenceWarning` with ``message()`` (computed only then, e.g. a
    ``max|K|`` that costs a pass over ``K``); every other warning passes through unchanged.
    Used for the plain SVM/SVR warm starts (:func:`dank_fast.svm.svc_dual`, ``eta="svr"``).
    """
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    from ._accelerated import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SklearnConvergenceWarning)
        model.fit(X, y)
    for w in caught:
        if issubclass(w.category, SklearnConvergenceWarning):
            warnings.warn(message(), ConvergenceWarning, stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model


def max_abs(K) -> float:
    """``max |K_ij|`` without an ``n x n`` temporary (``np.abs(K)`` doubles the memory)."""
    return max(float(K.max()), -float(K.min()))
