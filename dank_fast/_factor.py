"""The quadratic model of ``h`` on the free coordinates, and its maximisers under held bounds.

One factor of the curvature ``H`` on the free set (its Cholesky factor, or the Woodbury form of
:mod:`dank_fast._lowrank` where that takes fewer flops) gives every point a Newton step tries:
the maximiser of ``t g'p - p'H p / 2`` subject to ``y_F'p = 0`` and ``p_j = s_j`` for the
coordinates ``J`` held at the bound the step would push them across, by bordering the factor
(docs/MATH.md section 5.3). ``J`` grows until no free coordinate leaves the box. Costs: the
factor ``f^3 / 3`` flops, each held coordinate ``2 f^2``; where holding them costs more than a
new factor (:func:`dank_fast._cost.border_pays`) the model is cut to the others
(:meth:`Model.cut`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.linalg.blas import dtrmv

from ._cost import border_pays
from ._curvature import curvature, exact_applies
from ._lowrank import lowrank_solve

__all__ = ["Model"]


def _cholesky_solve(H: np.ndarray, in_place: bool):
    """``(B -> H^-1 B, v -> v'Hv)`` by a Cholesky factor ``LL'`` of ``H`` (of a copy unless
    ``in_place``; ``v'Hv = ||L'v||^2``), or None where ``H`` is not positive definite. A
    relative shift of 1e-12 (about 5e3 unit round-offs) lets a semidefinite curvature
    (duplicate points) factor; the model moves by nothing a step sees."""
    f = H.shape[0]
    A = H if in_place else H.copy()
    A[np.diag_indices(f)] += 1e-12 * max(1.0, float(np.max(np.diag(A), initial=0.0)))
    try:
        fac = cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except LinAlgError:
        return None

    def solve(B: np.ndarray) -> np.ndarray:
        return cho_solve(fac, B, check_finite=False)

    def quad(v: np.ndarray) -> float:
        u = dtrmv(fac[0], v, lower=1, trans=1)
        return float(u @ u)

    return solve, quad


class Model:
    """The curvature on ``free`` (sorted coordinates), its factor and the bordered solves.

    The exact curvature ``H`` is kept beside its factor (``16 f^2`` bytes in all) so that a
    smaller free set is cut from it (forming it again costs up to a dense decomposition); the
    model is factored in place (``8 f^2`` bytes) and formed again for a smaller set, in
    ``2 f^2 (r + 1)`` flops against its factor's ``f^3 / 3``. :attr:`ok` is False where the
    curvature is not positive definite.
    """

    def __init__(self, problem, ev, z: np.ndarray, free: np.ndarray,
                 H: np.ndarray | None = None):
        self.free = free
        self.zF = z[free]
        self.CF = np.broadcast_to(problem.C, z.shape)[free]
        y = problem.eq_vector
        self.y = None if y is None else y[free]
        f = free.size
        self.H, factor = None, None
        exact = H is not None or exact_applies(problem, ev, f)  # only an exact H is cut
        if not exact:
            factor = lowrank_solve(problem, ev, free)  # None: the Cholesky factor pays
        if factor is None:
            H = curvature(problem, ev, free) if H is None else H
            self.H = H if exact else None
            factor = _cholesky_solve(H, in_place=not exact)
        self.ok = factor is not None
        self._solve, self._quad = factor if self.ok else (None, None)
        g = ev.grad[free]
        self._cols: dict[int, np.ndarray] = {}  # H^-1 e_j of the held coordinates
        if self.ok:
            R = g[:, None] if self.y is None else np.column_stack([g, self.y])
            X = self.solve(R)
            self.g, self.Hg = g, X[:, 0]
            self.Hy = None if self.y is None else X[:, 1]

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``H^-1 B`` (the Cholesky factor, or Woodbury on a kernel of low rank)."""
        return self._solve(B)

    def gain(self, p: np.ndarray) -> float:
        """The model's increase ``g'p - p'Hp / 2`` for the step ``p`` (``O(f^2)``)."""
        return float(self.g @ p) - 0.5 * self._quad(p)

    def cut(self, problem, ev, z: np.ndarray, keep: np.ndarray) -> Model:
        """The model on ``free[keep]``: the exact curvature cut from this one's; the model
        curvature (and a low-rank model) formed again on the rows it keeps."""
        if self.H is None:
            return Model(problem, ev, z, self.free[keep])
        pos = np.flatnonzero(keep)
        return Model(problem, ev, z, self.free[keep],
                     np.take(np.take(self.H, pos, axis=0), pos, axis=1))

    def point(self, t: float, hold_inside: bool, held: dict | None = None,
              affordable: bool = True):
        """``(p, held)``: the maximiser of the module docstring for the multiple ``t`` with the
        coordinates ``held`` (position -> displacement) and those the solution pushes across a
        bound; ``hold_inside`` False holds only coordinates already at their bound (the
        direction), True also those inside the box (a trial point). ``(None, held)`` when the
        holds would cost more than a new factor (:func:`dank_fast._cost.border_pays`; not
        asked with ``affordable`` False) or leave nothing free."""
        f = self.free.size
        held = dict(held or {})
        margin = 1e-12 * self.CF
        at0, atC = self.zF <= margin, self.zF >= self.CF - margin
        while True:
            J = np.fromiter(held, dtype=np.intp, count=len(held))
            p = self._kkt(t, J, np.array([held[j] for j in J]))
            if p is None:
                return None, held
            p[J] = [held[j] for j in J]
            w = self.zF + p
            out = (w < 0.0) | (w > self.CF)
            if not hold_inside:
                out = (at0 & (p < 0)) | (atC & (p > 0))
            out[J] = False
            new = np.flatnonzero(out)
            if new.size == 0:
                return p, held
            if affordable and not border_pays(f, len(held) + new.size):
                held.update(dict.fromkeys(new.tolist(), 0.0))
                return None, held
            step = np.clip(w[new], 0.0, self.CF[new]) - self.zF[new]
            held.update(zip(new.tolist(), step.tolist(), strict=True))

    def _kkt(self, t: float, J: np.ndarray, sJ: np.ndarray) -> np.ndarray | None:
        """``p`` of the bordered system (module docstring) for the held ``J`` with values
        ``sJ``; None when the border is singular (every coordinate held under ``y'p = 0``)."""
        f = self.free.size
        if J.size >= f:
            return None
        missing = [j for j in J.tolist() if j not in self._cols]
        if missing:
            E = np.zeros((f, len(missing)))
            E[missing, np.arange(len(missing))] = 1.0
            self._cols.update(zip(missing, self.solve(E).T, strict=True))
        # the border A = [y, e_J]: A'X is y'X over the rows J of X (no f x k matrix A)
        cols = ([] if self.y is None else [self.Hy]) + [self._cols[j] for j in J.tolist()]
        if not cols:
            return t * self.Hg
        HA = np.column_stack(cols)

        def border(X: np.ndarray) -> np.ndarray:
            return X[J] if self.y is None else np.vstack([self.y @ X, X[J]])

        Sm = border(HA)
        rhs = t * border(self.Hg[:, None])[:, 0] - (
            sJ if self.y is None else np.concatenate([[0.0], sJ]))
        try:
            nu = np.linalg.solve(Sm, rhs)
        except np.linalg.LinAlgError:
            nu = np.linalg.lstsq(Sm, rhs, rcond=None)[0]
        return t * self.Hg - HA @ nu
