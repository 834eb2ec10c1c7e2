"""The binary problems of a multi-class fit of :class:`dank_fast.DANKClassifier` and their
recombination, as functions of arrays: which problems (one-vs-one pairs or one-vs-rest),
SVC's layout of their support and coefficients, and the decision values and predicted classes
from the problems' decision values.

Classes are indices ``0 .. n_classes - 1`` into ``classes_``. Two classes make one problem,
``(0, 1)``, positive for class 1. ``multi_class="ovo"`` makes one problem per pair ``(i, j)``,
``i < j``, in scikit-learn's order ``(0, 1), (0, 2), ..., (1, 2), ...``, positive for ``j``;
``"ovr"`` one problem ``(-1, k)`` per class ``k`` against the rest, positive for ``k``. The
decision values of the problems, one column each in that order, are combined as
:class:`sklearn.svm.SVC` combines them (one-vs-one votes with the summed pairwise values as
confidences, as :class:`sklearn.multiclass.OneVsOneClassifier`), or by the argmax for
one-vs-rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from ._sklearn_compat import ovo_decision_function

__all__ = ["SVCLayout", "binary_problems", "combined_decisions", "predicted_indices",
           "svc_layout"]


def binary_problems(y_enc: np.ndarray, n_classes: int, multi_class: str,
                    box: np.ndarray | None = None,
                    ) -> Iterator[tuple[tuple[int, int], np.ndarray, np.ndarray]]:
    """The binary problems of a fit: ``(class pair, sample indices, labels in {-1, +1})``.

    Parameters
    ----------
    y_enc : ndarray of shape (n_samples,)
        Class index of every training sample.
    n_classes : int
        Number of classes (at least 2).
    multi_class : {"ovo", "ovr"}
        The reduction for more than two classes.
    box : ndarray of shape (n_samples,) or None, default=None
        Every sample's box; the samples of box 0 (weight 0) take part in no problem, as in
        libsvm. None: every sample takes part.

    Yields
    ------
    pair : tuple of int
        ``(neg, pos)`` for a pair of classes, ``(-1, k)`` for one-vs-rest.
    idx : ndarray of int
        Training-sample indices of the problem, ascending.
    y : ndarray of float
        Labels of those samples: ``+1`` for the class ``pair[1]``, ``-1`` otherwise.

    Raises
    ------
    ValueError
        When a problem has samples of one class only once the samples of weight zero are
        removed.
    """
    live = np.ones(y_enc.size, dtype=bool) if box is None else box > 0
    if n_classes == 2:
        pairs = [((0, 1), live)]
    elif multi_class == "ovo":
        pairs = [((i, j), live & ((y_enc == i) | (y_enc == j)))
                 for i in range(n_classes) for j in range(i + 1, n_classes)]
    else:
        pairs = [((-1, k), live) for k in range(n_classes)]
    for pair, mask in pairs:
        idx = np.flatnonzero(mask)
        yb = np.where(y_enc[idx] == pair[1], 1.0, -1.0)
        if np.all(yb == yb[:1]):
            raise ValueError(
                f"the binary problem {pair} has samples of one class only once the samples "
                "of weight zero are removed (sample_weight or class_weight); every problem "
                "needs both of its classes")
        yield pair, idx, yb


class SVCLayout(NamedTuple):
    """The support and coefficients of all problems in :class:`sklearn.svm.SVC`'s layout
    (the attributes of the same names of :class:`dank_fast.DANKClassifier`)."""

    support: np.ndarray
    n_support: np.ndarray
    dual_coef: np.ndarray
    intercept: np.ndarray


def svc_layout(y_enc: np.ndarray, n_classes: int, multi_class: str,
               problem_classes: list[tuple[int, int]], problem_support: list[np.ndarray],
               problem_dual_coef: list[np.ndarray],
               problem_intercept: np.ndarray) -> SVCLayout:
    """``support_``, ``n_support_``, ``dual_coef_`` and ``intercept_`` in SVC's layout from
    every problem's support (training indices), ``a_i y_i`` and bias.

    The support vectors of all problems are grouped by class in the order of the classes,
    ascending within a class. Two classes or one-vs-rest: row ``p`` of ``dual_coef`` is
    problem ``p``'s ``a_i y_i``. One-vs-one (libsvm's layout): for the pair ``(i, j)`` the
    coefficients of class ``i``'s support vectors go to row ``j - 1`` and those of class
    ``j``'s to row ``i``, with SVC's sign (positive for class ``i``), as does the intercept.

    Parameters
    ----------
    y_enc : ndarray of shape (n_samples,)
        Class index of every training sample.
    n_classes : int
        Number of classes.
    multi_class : {"ovo", "ovr"}
        The reduction for more than two classes.
    problem_classes : list of tuple of int
        Every problem's pair (:func:`binary_problems`).
    problem_support : list of ndarray
        Every problem's support, as indices into the training set.
    problem_dual_coef : list of ndarray
        ``a_i y_i`` on every problem's support.
    problem_intercept : ndarray of shape (n_problems,)
        Every problem's bias (positive for its positive class).

    Returns
    -------
    SVCLayout
        ``support`` (int32, shape ``(n_SV,)``), ``n_support`` (int32, per class),
        ``dual_coef`` (``(n_classes - 1, n_SV)``, ``(n_classes, n_SV)`` for one-vs-rest)
        and ``intercept`` (``(n_problems,)``).
    """
    sv = np.unique(np.concatenate(problem_support)).astype(np.int32)
    sv = sv[np.lexsort((sv, y_enc[sv]))]  # grouped by class, ascending within one
    where = np.full(y_enc.size, -1, dtype=np.intp)
    where[sv] = np.arange(sv.size)
    ovr = n_classes > 2 and multi_class == "ovr"
    rows = n_classes if ovr else n_classes - 1
    dual = np.zeros((rows, sv.size))
    sign = 1.0 if n_classes == 2 or ovr else -1.0  # SVC's pairs: positive for class i
    for p, (pair, S, coef) in enumerate(zip(problem_classes, problem_support,
                                            problem_dual_coef, strict=True)):
        if n_classes == 2 or ovr:
            dual[p, where[S]] = coef
            continue
        i, j = pair
        first = y_enc[S] == i
        dual[j - 1, where[S[first]]] = -coef[first]
        dual[i, where[S[~first]]] = -coef[~first]
    return SVCLayout(support=sv,
                     n_support=np.bincount(y_enc[sv], minlength=n_classes).astype(np.int32),
                     dual_coef=dual, intercept=sign * problem_intercept)


def combined_decisions(dec: np.ndarray, n_classes: int, multi_class: str,
                       decision_function_shape: str) -> np.ndarray:
    """The decision function's values from the problems' decision values ``dec``.

    Parameters
    ----------
    dec : ndarray of shape (n_samples, n_problems)
        Every problem's decision values (positive for its positive class).
    n_classes : int
        Number of classes.
    multi_class : {"ovo", "ovr"}
        The reduction for more than two classes.
    decision_function_shape : {"ovr", "ovo"}
        SVC's shape of the one-vs-one values.

    Returns
    -------
    ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_problems)
        One problem: its column. One-vs-rest: ``dec``. One-vs-one with ``"ovo"``: ``-dec``
        (SVC's sign, positive for the first class of the pair); with ``"ovr"``: the votes plus
        the summed pairwise values scaled into (-1/3, 1/3), as SVC's.
    """
    if dec.shape[1] == 1:
        return dec[:, 0]
    if multi_class == "ovr":
        return dec
    if decision_function_shape == "ovo":
        return -dec  # SVC's sign: positive for the first class of the pair
    return ovo_decision_function((dec > 0).astype(np.intp), dec, n_classes)


def predicted_indices(dec: np.ndarray, n_classes: int, multi_class: str,
                      break_ties: bool) -> np.ndarray:
    """The predicted class indices (into ``classes_``) from the problems' decision values.

    Parameters
    ----------
    dec : ndarray of shape (n_samples, n_problems)
        Every problem's decision values (positive for its positive class).
    n_classes : int
        Number of classes.
    multi_class : {"ovo", "ovr"}
        The reduction for more than two classes.
    break_ties : bool
        One-vs-one: break a tie of votes by the summed pairwise decision values (SVC's
        ``break_ties=True``); otherwise the first of the tied classes.

    Returns
    -------
    ndarray of shape (n_samples,), dtype intp
        One problem: 1 where its value is > 0, else 0. One-vs-rest: the argmax of ``dec``.
        One-vs-one: the majority vote of the pairs.
    """
    if dec.shape[1] == 1:
        return (dec[:, 0] > 0).astype(np.intp)
    if multi_class == "ovr":
        return np.argmax(dec, axis=1)
    if break_ties:
        return np.argmax(ovo_decision_function((dec > 0).astype(np.intp), dec, n_classes),
                         axis=1)
    votes = ovo_decision_function((dec > 0).astype(np.intp), np.zeros_like(dec), n_classes)
    return np.argmax(votes, axis=1)  # votes only: the first of a tie
