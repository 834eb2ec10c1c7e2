"""Golden vectors: small P1 / P2 / P3 instances with solutions certified to rel. gap <= 1e-12.

A conformance suite for other implementations of DANK.  Each vector is
``golden/<name>_instance.<ext>`` + ``golden/<name>_solution.<ext>`` in the oracle format
(:mod:`verification.formats`, ``.npz`` or JSON; loadable with numpy alone, no CVXPY) and an entry
of ``golden/MANIFEST.json``: the corner it covers, the instance parameters, the certified value
bracket ``[lower, upper]`` from dank_ref and from dank_fast, both relative gaps, and the sha256
of both files.  Every stored solution is certified to ``rel_gap <= GOLDEN_TOL = 1e-12`` by
*both* ``dank_ref.certificate`` and dank_fast's certificate functions (the solution stores the
exact certified point, the best bias and ``F(alpha)``).

The corners (:func:`specs`): tau = 0; tau so large that F = 0; rank-one F; C tiny (1e-8) and
huge (1e6); n = 2; one class per cluster, a single cluster and singleton clusters (P3);
epsilon = 0 and epsilon so large that a* = 0 (P2); a rank-one and a nearly singular K; eta at
1e-3 and 1e6; linear, polynomial and Gaussian (sigma or gamma) kernels given by ``X``; an
integer-valued ``K``; duplicate points; one point of one class; JSON files; per-sample boxes
(a vector ``C``, format version 2: ``p1_weighted``, ``p1_class_weights``, ``p2_weighted``,
``p3_weighted``), solved by dank_ref's conic solver and certified by the oracle, dank_ref's
certificates and dank_fast's, like every other vector.

Regeneration: ``dank-verify vectors --write DIR`` solves every spec afresh (dank_fast ``newton``
to 1e-12, then dank_ref's active-set Newton polish whenever either certificate is above 1e-12)
and writes the files and the manifest; ``dank-verify vectors`` checks the stored vectors
(checksums, both re-certifications) and compares them with a fresh regeneration: the instance
files must be byte-identical (the writer is deterministic; on another platform, where a
computed Gaussian kernel may differ in its last bits, equal fields and ``K`` to 1e-14 relative
are accepted) and the fresh certified bracket must overlap the stored one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings

import numpy as np

from dank_ref.projection import project_A, project_svr

from ._golden_specs import specs
from .formats import (
    FormatError,
    load_instance,
    load_solution,
    save_instance,
    save_solution,
)
from .oracle import certify

#: The directory of the stored golden vectors and their ``MANIFEST.json`` (shipped with the
#: package).
GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")
#: The relative gap to which every stored solution is certified, by dank_ref and by dank_fast.
GOLDEN_TOL = 1e-12
MANIFEST_VERSION = 2

__all__ = ["GOLDEN_DIR", "GOLDEN_TOL", "specs", "generate", "load_manifest", "check_vectors",
           "vector_problems", "certify_both", "sha256"]


# ---------------------------------------------------------------------------------------------
# certificates by both packages
# ---------------------------------------------------------------------------------------------
def _block(K, labels):
    return K * (labels[:, None] == labels[None, :])


def _oracle_rel_gap(inst: dict, sol: dict) -> float:

    return float(certify(inst, dict(sol, task=inst["task"]), tol=GOLDEN_TOL,
                         reference=False)["rel_gap"])


def certify_both(inst: dict, sol: dict) -> dict:
    """Certify the exact stored point by dank_ref and by dank_fast.

    P3 is certified on ``Kbar`` (dank_fast: its box certificate with the dense inner
    minimiser).  Each certificate costs a dense eigendecomposition, O(n^3) time and O(n^2)
    memory; the golden vectors are small (n <= 12).

    Parameters
    ----------
    inst, sol : dict
        An instance and its solution as :func:`~verification.formats.load_instance` and
        :func:`~verification.formats.load_solution` return them.

    Returns
    -------
    dict
        ``{"ref": (lower, upper, rel_gap), "fast": (lower, upper, rel_gap)}`` (a vector ``C``
        of per-sample boxes included).

    Raises
    ------
    ValueError
        The solution is infeasible for the instance, or the instance is invalid.
    """
    # start-up: dank_fast imports scikit-learn (seconds); only this function needs it
    import dank_fast
    import dank_ref.certificate as rc
    from dank_fast.certificate import certify_box
    from dank_fast.inner import KernelData, inner_minimiser

    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "svm":
            a = sol["alpha"]
            r = rc.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
            f = dank_fast.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
        elif task == "svr":
            ah, ac, eps = sol["alpha_hat"], sol["alpha_check"], inst["epsilon"]
            r = rc.svr_certificate(K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau)
            f = dank_fast.svr_certificate(K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau)
        else:
            a = sol["alpha"]
            r = rc.decomposed_certificate(K, y, a, C=C, eta=eta, labels=inst["labels"])
            # dank_fast's P3 box certificate (a scalar C or per-sample bounds) on Kbar
            kd = KernelData(_block(K, inst["labels"]))
            f = certify_box(kd, y, a, C, eta, inner_minimiser(kd, a * y, eta, 0.0, route="dense"))
    return {"ref": (float(r.lower), float(r.upper), float(r.rel_gap)),
            "fast": (float(f.lower), float(f.upper), float(f.rel_gap))}


# ---------------------------------------------------------------------------------------------
# solving
# ---------------------------------------------------------------------------------------------
def _start(inst: dict, dank_fast) -> tuple[np.ndarray, str]:
    """The solver's point (P2: ``b = ah - ac``) on the exactly rescaled instance
    ``(Cm K, C / Cm, eta / Cm)``, ``Cm = max C`` (:doc:`docs/validity.md </validity>`:
    ``a*(K, C, eta) = Cm a*(Cm K, C / Cm, eta / Cm)``), so that the solvers' internal thresholds
    see a largest box of 1. dank_fast's Newton
    method for a scalar ``C`` (``dank_fast``: the module, imported by :func:`_solve`, the oracle
    side's one optional path to it); dank_ref's conic solve (staged, polished, certified) for
    per-sample boxes, as they were first generated (an independent solve; dank_fast certifies
    them too, :func:`certify_both`)."""
    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    if isinstance(C, np.ndarray):
        # start-up: dank_ref's solvers import cvxpy (seconds); only this path needs them
        import dank_ref
        Cm = float(np.max(C))
        Ks, Cs, etas = Cm * K, C / Cm, eta / Cm
        if task == "svm":
            x = Cm * dank_ref.solve_svm(Ks, y, C=Cs, eta=etas, tau=tau, tol=GOLDEN_TOL).alpha
        elif task == "svr":
            r = dank_ref.solve_svr(Ks, y, C=Cs, epsilon=inst["epsilon"], eta=etas, tau=tau,
                                   tol=GOLDEN_TOL)
            x = Cm * (r.alpha_hat - r.alpha_check)
        else:
            x = Cm * dank_ref.solve_decomposed(Ks, y, inst["labels"], C=Cs, eta=etas,
                                               tol=GOLDEN_TOL).alpha
        return x, f"dank_ref {task} tol {GOLDEN_TOL:g} on (max C K, C / max C, eta / max C)"
    Ks, etas = C * K, eta / C
    if task == "svm":
        x = C * dank_fast.solve_svm(Ks, y, C=1.0, eta=etas, tau=tau, method="newton",
                                    tol=GOLDEN_TOL).alpha
    elif task == "svr":
        r = dank_fast.solve_svr(Ks, y, C=1.0, epsilon=inst["epsilon"], eta=etas, tau=tau,
                                method="newton", tol=GOLDEN_TOL)
        x = C * (r.extra["alpha_hat"] - r.extra["alpha_check"])
    else:
        x = C * dank_fast.solve_decomposed(Ks, y, C=1.0, eta=etas, labels=inst["labels"],
                                           method="newton", tol=GOLDEN_TOL).alpha
    return x, f"dank_fast {task} newton tol {GOLDEN_TOL:g} on (C K, 1, eta / C)"


def _point_and_snap(inst: dict):
    """``(point, snap)``: the feasible solution dict of a solver's point (its exact
    projection) and the snapping of entries within ``1e-9 C_i`` of a bound onto it."""
    task, y, C = inst["task"], inst["y"], inst["C"]
    n = y.size
    if task == "svr":
        def point(b):
            z = project_svr(np.concatenate([np.maximum(b, 0.0), np.maximum(-b, 0.0)]), C)
            ah, ac = z[:n], z[n:]
            common = np.minimum(ah, ac)  # never optimal for eps > 0; harmless for eps = 0
            return dict(alpha_hat=ah - common, alpha_check=ac - common)

        def snap(b):
            m = np.abs(b)
            return np.where(m < 1e-9 * C, 0.0, np.where(m > C * (1 - 1e-9), C * np.sign(b), b))
        return point, snap
    if task == "svm":
        def point(x):
            return dict(alpha=project_A(x, y, C))
    else:
        def point(x):
            return dict(alpha=np.clip(x, 0.0, C))

    def snap(x):
        return np.where(x < 1e-9 * C, 0.0, np.where(x > C * (1 - 1e-9), C, x))
    return point, snap


def _solve(inst: dict) -> tuple[dict, str]:
    """A solution certified as tightly as the solvers get; returns ``(solution, how)``.

    The solve runs on the exactly rescaled instance (:func:`_start`); candidates are then
    snapped (entries within ``1e-9 C`` of a bound put on it) and polished by dank_ref's
    active-set Newton method, and the candidate with the smallest of the oracle's and
    dank_fast's certified gaps on the original instance is kept.
    """
    # start-up: dank_ref imports cvxpy and dank_fast scikit-learn (seconds); only this
    # function needs them
    import dank_fast
    import dank_ref.certificate as rc
    from dank_ref.polish import polish_svm, polish_svr

    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, how = _start(inst, dank_fast)
        point, snap = _point_and_snap(inst)

        def worst(x):
            try:
                cb = certify_both(inst, point(x))
                return max(_oracle_rel_gap(inst, point(x)), cb["fast"][2])
            except ValueError:
                return np.inf

        best = worst(x)
        xs = snap(x)
        if worst(xs) < best:
            x, best, how = xs, worst(xs), how + " + snap"
        if best > GOLDEN_TOL:
            if task == "svr":
                xp = polish_svr(K, y, x, C=C, epsilon=inst["epsilon"], eta=eta, tau=tau,
                                score=worst, max_iter=60)[0]
            elif task == "svm":
                xp = polish_svm(K, y, x, C=C, eta=eta, tau=tau, score=worst, max_iter=60)[0]
            else:
                xp = polish_svm(_block(K, inst["labels"]), y, x, C=C, eta=eta, tau=0.0,
                                equality=False, score=worst, max_iter=60)[0]
            if worst(xp) < best:
                x, how = xp, how + " + dank_ref Newton polish"
    sol = point(x)
    if task == "svm":
        c = rc.svm_certificate(K, y, sol["alpha"], C=C, eta=eta, tau=tau)
        sol.update(bias=c.bias, F=c.F)
    elif task == "svr":
        c = rc.svr_certificate(K, y, sol["alpha_hat"], sol["alpha_check"], C=C,
                               epsilon=inst["epsilon"], eta=eta, tau=tau)
        sol.update(bias=c.bias, F=c.F)
    else:
        c = rc.decomposed_certificate(K, y, sol["alpha"], C=C, eta=eta, labels=inst["labels"])
        sol.update(F=c.F)
    return sol, how


def sha256(path) -> str:
    """Return the SHA-256 digest of a file, as the manifest records it.

    Parameters
    ----------
    path : str or path-like
        The file, read in 1 MiB chunks (``OSError`` if it cannot be read).

    Returns
    -------
    str
        The hexadecimal digest.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _params(inst: dict, fields: dict) -> dict:
    C = inst["C"]
    p = dict(task=inst["task"], n=inst["n"], C=C.tolist() if isinstance(C, np.ndarray) else C,
             eta=inst["eta"], tau=inst["tau"],
             max_abs_K=float(np.max(np.abs(inst["K"]))),
             kernel=({k: (v if not isinstance(v, float) else float(v))
                      for k, v in inst["kernel"].items()}),
             K_dtype=str(np.asarray(fields["K"]).dtype) if fields.get("K") is not None else None)
    if inst["task"] == "svr":
        p["epsilon"] = inst["epsilon"]
    if inst["task"] == "decomposed":
        p["n_clusters"] = int(np.unique(inst["labels"]).size)
    return p


def _fast_entry(fast) -> dict:
    """The manifest's ``lower_fast``, ``upper_fast``, ``rel_gap_fast`` (JSON null for ``None``;
    every vector has them)."""
    keys = ("lower_fast", "upper_fast", "rel_gap_fast")
    return dict(zip(keys, (None,) * 3 if fast is None else fast, strict=True))


def _format_version(names) -> int:
    """The newest instance format version among the vectors of the manifest."""
    versions = [2 if isinstance(f.get("C"), (list, np.ndarray)) else 1
                for name, _, f in specs() if names is None or name in names]
    return max(versions, default=1)


def generate(directory=GOLDEN_DIR, names=None) -> dict:
    """Solve every spec (or those in ``names``) and write the files and ``MANIFEST.json``.

    Each manifest entry records the certified bracket and relative gap of the stored point by
    dank_ref (``lower``, ``upper``, ``rel_gap``: its certificate functions called directly on
    the instance), by dank_fast (``*_fast``) and by the oracle (``rel_gap_oracle``), and
    ``meets_golden_tol`` for each package: a vector that a package cannot certify to
    ``GOLDEN_TOL`` is written anyway and :func:`check_vectors` reports it.  The whole set
    (51 vectors, n <= 12) takes a few seconds.

    Parameters
    ----------
    directory : str or path-like, default :data:`GOLDEN_DIR`
        Where to write (created if needed; files of the same names are overwritten).
    names : collection of str, optional
        Only these vectors (names of :func:`specs`); the manifest then lists only them.

    Returns
    -------
    dict
        The manifest as written: ``manifest_version``, ``format_version``, ``golden_tol``,
        ``regenerate`` and ``vectors`` (one entry per vector).

    Raises
    ------
    OSError
        ``directory`` cannot be created or written.
    """
    os.makedirs(directory, exist_ok=True)
    manifest = {"manifest_version": MANIFEST_VERSION,
                "format_version": _format_version(names),
                "golden_tol": GOLDEN_TOL,
                "regenerate": "dank-verify vectors --write DIR (check: dank-verify vectors)",
                "vectors": {}}
    for name, what, fields in specs():
        if names is not None and name not in names:
            continue
        fields = dict(fields)
        ext = fields.pop("ext")
        ip = os.path.join(directory, f"{name}_instance.{ext}")
        sp = os.path.join(directory, f"{name}_solution.{ext}")
        save_instance(ip, **fields)
        inst = load_instance(ip)  # solve exactly what a reader of the file sees
        sol, how = _solve(inst)
        save_solution(sp, task=inst["task"], **sol)
        stored = load_solution(sp, inst["n"])
        cb = certify_both(inst, stored)
        manifest["vectors"][name] = dict(
            corner=what, instance=os.path.basename(ip), solution=os.path.basename(sp),
            sha256_instance=sha256(ip), sha256_solution=sha256(sp), params=_params(inst, fields),
            lower=cb["ref"][0], upper=cb["ref"][1], rel_gap=cb["ref"][2],
            **_fast_entry(cb["fast"]), rel_gap_oracle=_oracle_rel_gap(inst, stored),
            meets_golden_tol={"dank_ref": cb["ref"][2] <= GOLDEN_TOL,
                              "dank_fast": None if cb["fast"] is None
                              else cb["fast"][2] <= GOLDEN_TOL},
            reference=how)
    with open(os.path.join(directory, "MANIFEST.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    return manifest


def load_manifest(directory=GOLDEN_DIR) -> dict:
    """Read and check the ``MANIFEST.json`` of a golden-vector directory.

    Parameters
    ----------
    directory : str or path-like, default :data:`GOLDEN_DIR`
        The directory holding ``MANIFEST.json``.

    Returns
    -------
    dict
        The manifest; ``vectors`` maps each name to its entry (files, checksums, bracket).

    Raises
    ------
    FormatError
        The manifest is missing, unreadable, of another version, or an entry lacks a field.

    Examples
    --------
    >>> from verification.golden import load_manifest
    >>> man = load_manifest()
    >>> man["golden_tol"], "p1_basic" in man["vectors"]
    (1e-12, True)
    """
    path = os.path.join(directory, "MANIFEST.json")
    try:
        with open(path, encoding="utf-8") as fh:
            man = json.load(fh)
    except FileNotFoundError as exc:
        raise FormatError(f"{path}: no such file (not a golden-vector directory?)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"{path}: unreadable manifest ({exc})") from exc
    if not isinstance(man, dict) or not isinstance(man.get("vectors"), dict) or \
            man.get("manifest_version") != MANIFEST_VERSION:
        raise FormatError(f"{path}: not a version-{MANIFEST_VERSION} manifest with a 'vectors' "
                          "object")
    need = ("instance", "solution", "sha256_instance", "sha256_solution", "lower", "upper")
    for name, e in man["vectors"].items():
        if not isinstance(e, dict) or any(k not in e for k in need):
            raise FormatError(f"{path}: entry {name!r} lacks one of {need}")
    return man


def _overlap(a_lo, a_hi, b_lo, b_hi) -> bool:
    slack = GOLDEN_TOL * max(1.0, abs(a_lo), abs(b_lo))
    return a_lo <= b_hi + slack and b_lo <= a_hi + slack


def vector_problems(directory=None, regenerate=True,
                    names=None) -> dict[str, list[tuple[str, str]]]:
    """List every problem of every stored vector.

    Codes: ``checksum`` (a file differs from its sha256), ``unreadable``, ``oracle`` (the
    oracle does not certify it at ``GOLDEN_TOL``), ``dank_ref`` / ``dank_fast`` (that package's
    certificate function gives a relative gap above ``GOLDEN_TOL``), ``bracket`` (the
    re-certified dank_ref bracket differs from the manifest's); with ``regenerate``:
    ``regen_instance`` (the regenerated instance differs: not byte-identical and not equal up
    to the last bits of a computed kernel), ``regen_bracket``
    (the fresh certified bracket does not overlap the stored one), ``regen_missing`` (no spec
    of that name) and ``spec_missing`` (a spec without a stored vector).  Cost: about 3 s
    for the stored set, a few more seconds with ``regenerate``.

    Parameters
    ----------
    directory : str or path-like, optional
        The golden-vector directory (default :data:`GOLDEN_DIR`).
    regenerate : bool, default True
        Also regenerate the vectors in a temporary directory and compare.
    names : collection of str, optional
        Restrict the check (and the regeneration) to these vectors.

    Returns
    -------
    dict of str to list of (str, str)
        ``{name: [(code, message), ...]}``; an empty list for a vector without problems.

    Raises
    ------
    FormatError
        ``directory`` does not exist or its manifest is missing or malformed.
    """
    directory = directory or GOLDEN_DIR
    if not os.path.isdir(directory):
        raise FormatError(f"{directory}: no such directory")
    man = load_manifest(directory)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(tmp, names=names)["vectors"] if regenerate else {}
        out = {}
        for name, e in man["vectors"].items():
            if names is not None and name not in names:
                continue
            out[name] = probs = _stored_problems(directory, e)
            if not regenerate:
                continue
            f = fresh.get(name)
            if f is None:
                probs.append(("regen_missing", "no spec of this name to regenerate"))
                continue
            if f["sha256_instance"] != e["sha256_instance"] and not _same_instance(
                    os.path.join(tmp, f["instance"]), os.path.join(directory, e["instance"])):
                probs.append(("regen_instance", "regenerated instance DIFFERS"))
            if not _overlap(f["lower"], f["upper"], e["lower"], e["upper"]):
                probs.append(("regen_bracket", f"regenerated bracket [{f['lower']!r}, "
                              f"{f['upper']!r}] does not overlap the stored one"))
        for name in sorted(set(fresh) - set(man["vectors"])):
            out[name] = [("spec_missing", "spec has no stored vector")]
    return out


def _stored_problems(directory, e) -> list:

    probs = []
    ip, sp = os.path.join(directory, e["instance"]), os.path.join(directory, e["solution"])
    try:
        if sha256(ip) != e["sha256_instance"] or sha256(sp) != e["sha256_solution"]:
            probs.append(("checksum", "checksum MISMATCH"))
        inst = load_instance(ip)
        sol = load_solution(sp, inst["n"])
    except (OSError, ValueError) as exc:
        probs.append(("unreadable", f"unreadable: {exc}"))
        return probs
    rep = certify(inst, sol, tol=GOLDEN_TOL, reference=False)
    if not rep["certified"]:
        probs.append(("oracle", "oracle: " + "; ".join(rep["reasons"])))
    cb = certify_both(inst, sol)
    for pkg, key in (("dank_ref", "ref"), ("dank_fast", "fast")):
        if cb[key] is not None and not cb[key][2] <= GOLDEN_TOL:
            probs.append((pkg, f"{pkg} rel_gap {cb[key][2]:.3g} > {GOLDEN_TOL:g}"))
    if not _overlap(cb["ref"][0], cb["ref"][1], e["lower"], e["upper"]):
        probs.append(("bracket", "re-certified bracket differs from the manifest"))
    return probs


def _same_instance(path_a, path_b) -> bool:
    """Same instance up to the rounding of a computed kernel (another libm / SIMD exp may
    change the last bits of a Gaussian K): every field equal, ``K`` to 1e-14 relative."""
    try:
        a, b = load_instance(path_a), load_instance(path_b)
    except ValueError:
        return False
    for k in ("task", "n", "eta", "tau", "epsilon", "kernel"):
        if a[k] != b[k]:
            return False
    if not np.array_equal(a["C"], b["C"]) or np.ndim(a["C"]) != np.ndim(b["C"]):
        return False
    if not np.array_equal(a["y"], b["y"]):
        return False
    if (a["labels"] is None) != (b["labels"] is None) or (
            a["labels"] is not None and not np.array_equal(a["labels"], b["labels"])):
        return False
    scale = max(float(np.max(np.abs(a["K"]))), np.finfo(float).tiny)
    return bool(np.max(np.abs(a["K"] - b["K"])) <= 1e-14 * scale)


def check_vectors(directory=None, regenerate=True, names=None):
    """Check the golden vectors and report one line per vector.

    This is :func:`vector_problems` summarised for a terminal (``dank-verify vectors``).

    Parameters
    ----------
    directory, regenerate, names
        As in :func:`vector_problems`.

    Returns
    -------
    ok : bool
        True when no vector has a problem.
    lines : list of str
        ``"<name> ok"`` or the vector's problems, one line per vector.

    Raises
    ------
    FormatError
        As :func:`vector_problems`.

    Examples
    --------
    >>> from verification.golden import check_vectors
    >>> ok, lines = check_vectors(regenerate=False, names=["p1_basic"])  # doctest: +SKIP
    >>> ok, lines[0].split()  # doctest: +SKIP
    (True, ['p1_basic', 'ok'])
    """
    probs = vector_problems(directory, regenerate, names)
    lines = [f"{name:26s} " + ("ok" if not p else "; ".join(m for _, m in p))
             for name, p in probs.items()]
    return not any(probs.values()), lines
