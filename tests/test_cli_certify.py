"""``dank-verify certify INSTANCE SOLUTION``: reference solutions accepted, perturbed ones rejected,
exit code 2 with one line on bad input; and fuzz tests (in-process, ``verification.cli.main``).

Files are written here by hand (JSON text or ``.npz`` zips of ``.npy`` members, format in
``verification/formats/``), from a valid instance and solution, then corrupted: a field
dropped, added, retyped (strings, booleans, null, lists, objects, complex/bool/string/object
arrays, NaN), given an invalid value (C = 0, y not +-1, an indefinite K, a wrong version, both
K and X, a huge declared ``.npy`` header), or the file's bytes truncated or flipped.

Property: a valid pair exits 0 or 1 with nothing on stderr; a field-level corruption exits 2
with exactly one stderr line that names the field; a byte-level corruption exits 0, 1 or 2
and, for 2, prints exactly one line and no traceback. Nothing else may escape.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import warnings
import zipfile

import numpy as np
import pytest
from _fuzz_strategies import fuzz, hard_timeout, names, record
from hypothesis import given
from hypothesis import strategies as st

from dank_ref import certificate as refcert
from dank_ref.certificate import inner_F
from dank_ref.kernels import gaussian_kernel
from verification.cli import main
from verification.formats import save_instance, save_solution
from verification.golden import GOLDEN_DIR


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
        F = inner_F(p1["K"], a * p1["y"], eta=p1["eta"], tau=2 * p1["tau"])
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


REQUIRED = {
    "svm": ["format", "version", "task", "y", "C", "eta", "tau"],
    "svr": ["format", "version", "task", "y", "C", "eta", "tau", "epsilon"],
    "decomposed": ["format", "version", "task", "y", "C", "eta", "labels"],
}


# --------------------------------------------------------------------------- writing files
def _npy_bytes(v) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(v), allow_pickle=True)
    return buf.getvalue()


def write_npz(path, fields: dict, raw: dict | None = None) -> None:
    """An ``.npz`` of one ``<name>.npy`` member per field (``raw``: members given as bytes)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for k, v in fields.items():
            if isinstance(v, str):
                v = np.array(v)
            elif isinstance(v, bool):
                v = np.array(v)
            elif isinstance(v, int):
                v = np.array(v, dtype=np.int64)
            elif isinstance(v, float):
                v = np.array(v)
            elif v is None:
                v = np.array(None, dtype=object)
            zf.writestr(f"{k}.npy", _npy_bytes(v))
        for k, b in (raw or {}).items():
            zf.writestr(f"{k}.npy", b)


def _jsonable(v):
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "c":
            return [[float(x.real), float(x.imag)] for x in v.ravel()]
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def write_json(path, fields: dict) -> None:
    with open(path, "w") as fh:
        json.dump({k: _jsonable(v) for k, v in fields.items()}, fh, allow_nan=True)


def write(path, fields, kind, raw=None):
    (write_npz if kind == "npz" else write_json)(path, fields, *([raw] if kind == "npz" else []))


def run_cli(inst, sol, *extra) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), hard_timeout():
        code = main(["certify", inst, sol, *extra])
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- valid pairs
@st.composite
def valid_pairs(draw):
    """A valid instance and a feasible candidate solution (fields as Python/NumPy values)."""
    task = draw(st.sampled_from(["svm", "svr", "decomposed"]))
    n = draw(st.integers(2 if task == "svm" else 1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inst = {"format": "dank-instance", "version": 1, "task": task}
    X = rng.normal(size=(n, draw(st.integers(1, 3))))
    source = draw(st.sampled_from(["K", "K", "gaussian", "linear", "polynomial"]))
    if source == "K":
        K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
        inst["K"] = (K * float(10.0 ** draw(st.integers(-3, 3)))).astype(
            draw(st.sampled_from([np.float64, np.float64, np.float32])))
    else:
        inst.update(X=X, kernel=source)
        if source == "gaussian":
            inst[draw(st.sampled_from(["sigma", "gamma"]))] = float(draw(st.floats(0.3, 3)))
        elif source == "polynomial":
            inst.update(degree=draw(st.integers(1, 3)), gamma=0.5, coef0=1.0)
    if task == "svr":
        y = rng.normal(size=n)
    else:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if task == "svm":
            y[0], y[1] = 1.0, -1.0
    C = float(10.0 ** draw(st.integers(-2, 2)))
    inst.update(y=y, C=C, eta=float(10.0 ** draw(st.integers(-1, 2))))
    if task != "decomposed" or draw(st.booleans()):
        inst["tau"] = 0.0 if task == "decomposed" else draw(st.sampled_from([0.0, 0.01]))
    if task == "svr":
        inst["epsilon"] = draw(st.sampled_from([0.0, 0.1]))
    sol = {"format": "dank-solution", "version": 1, "task": task}
    if task == "svm":
        a, _ = refcert.project_box_hyperplane(rng.random(n) * C, y, C)
        sol["alpha"] = a
    elif task == "svr":
        z, _ = refcert.project_box_hyperplane(
            rng.random(2 * n) * C, np.concatenate([np.ones(n), -np.ones(n)]), C)
        sol.update(alpha_hat=z[:n], alpha_check=z[n:])
    else:
        inst["labels"] = rng.integers(0, 2, size=n)
        sol["alpha"] = rng.random(n) * C
    if task != "decomposed" and draw(st.booleans()):
        sol["bias"] = float(rng.normal())
    return inst, sol


@fuzz(30)
@given(pair=valid_pairs(), kind=st.sampled_from(["json", "npz"]),
       kind_sol=st.sampled_from(["json", "npz"]), reference=st.integers(0, 9))
def test_fuzz_cli_valid_pairs(pair, kind, kind_sol, reference):
    """A valid pair: exit 0 (certified) or 1 (not), a report on stdout, nothing on stderr."""
    inst, sol = pair
    with tempfile.TemporaryDirectory() as d:
        pi, ps = os.path.join(d, "i." + kind), os.path.join(d, "s." + kind_sol)
        write(pi, inst, kind)
        write(ps, sol, kind_sol)
        extra = ["--reference"] if reference == 0 else []  # the optional cross-check
        code, out, err = run_cli(pi, ps, *extra)
    assert code in (0, 1) and err == "", (code, err)
    assert out.startswith("verdict: ")
    record("dank-verify certify", "ok")


# --------------------------------------------------------------------------- field corruptions
BAD_VALUES = {
    "string": "1", "bool": True, "null": None, "list": [1.0], "object": {"a": 1},
    "nan": float("nan"), "inf": float("inf"), "float-for-int": 1.5,
}


@st.composite
def corruptions(draw, inst, sol):
    """``(target, field, mutate)``: which file, which field the error must name, and how."""
    task = inst["task"]
    which = draw(st.sampled_from(["instance", "instance", "solution"]))
    fields = inst if which == "instance" else sol
    kind = draw(st.sampled_from(["drop", "extra", "unused", "retype", "value", "both-K-X",
                                 "array-dtype", "version", "format", "shape"]))
    names_ = sorted(fields)
    if kind == "drop":
        req = [f for f in names_ if f in REQUIRED[task] or f in ("K", "X", "alpha",
                                                                 "alpha_hat", "alpha_check")]
        f = draw(st.sampled_from(req))
        if f in ("K", "X"):  # dropping the kernel: "needs exactly one of 'K' or 'X'"
            return which, "K", lambda fl: fl.pop(f)
        return which, f, lambda fl: fl.pop(f)
    if kind == "extra":
        f = draw(st.sampled_from(["foo", "alpha0", "Kernel", "C "]))
        return which, f, lambda fl: fl.__setitem__(f, 1.0)
    if kind == "unused":
        if which == "instance":
            f = {"svm": "epsilon", "svr": "labels", "decomposed": "epsilon"}[task]
            val = 0.1 if f == "epsilon" else np.zeros(len(inst["y"]), dtype=np.int64)
        else:
            f = {"svm": "alpha_hat", "svr": "alpha", "decomposed": "bias"}[task]
            val = 0.0 if f == "bias" else np.zeros(len(inst["y"]))
        return which, f, lambda fl: fl.__setitem__(f, val)
    if kind == "retype":
        scalars = [f for f in names_ if f in ("C", "eta", "tau", "epsilon", "bias", "sigma",
                                              "gamma", "coef0", "degree", "task", "format")]
        f = draw(st.sampled_from(scalars))
        bad = draw(st.sampled_from(sorted(BAD_VALUES)))
        val = BAD_VALUES[bad]
        if bad == "float-for-int" and f != "degree":
            val = "x"
        if f in ("task", "format") and bad in ("string",):
            val = 3
        return which, f, lambda fl: fl.__setitem__(f, val)
    if kind == "value":
        opts = [("C", 0.0), ("C", -1.0), ("eta", 0.0), ("eta", -2.0), ("C", 1e-250)]
        if "tau" in fields:
            opts.append(("tau", -0.5 if task != "decomposed" else 0.5))
        if task == "svr":
            opts.append(("epsilon", -1.0))
        if task != "svr":
            opts.append(("y", "twos"))
            if task == "svm":
                opts.append(("y", "one-class"))
        if "K" in inst:
            opts += [("K", "asym"), ("K", "indefinite")]
        if "degree" in inst:
            opts += [("degree", 0), ("coef0", -1.0)]
        if "sigma" in inst:
            opts.append(("sigma", 0.0))
        if task == "decomposed":
            opts.append(("labels", "float"))
        if which == "solution":
            opts = [("alpha" if "alpha" in sol else "alpha_hat", "short")]
            if "bias" in sol:
                opts.append(("bias", float("nan")))
        f, val = draw(st.sampled_from(opts))

        def mutate(fl, f=f, val=val):
            v = fl[f]
            if isinstance(val, str) and val == "twos":
                fl[f] = 2.0 * np.asarray(v)
            elif val == "one-class":
                fl[f] = np.ones_like(np.asarray(v))
            elif val == "asym":
                K = np.array(v, dtype=np.float64)
                K[0, -1] += 0.5 * np.abs(K).max() + 1.0
                fl[f] = K if K.shape[0] > 1 else -np.ones((1, 1))
            elif val == "indefinite":
                K = np.array(v, dtype=np.float64)
                fl[f] = K - (np.abs(K).max() * K.shape[0] + 1.0) * np.eye(K.shape[0])
            elif val == "float":
                fl[f] = np.asarray(v, dtype=float) + 0.5
            elif val == "short":
                fl[f] = np.asarray(v)[:-1] if np.size(v) > 1 else np.zeros(3)
            else:
                fl[f] = val
        target = f if not (f == "C" and val == 1e-250) else "C"
        return which, target, mutate
    if kind == "both-K-X":
        which = "instance"
        X = np.ones((len(inst["y"]), 1))
        K = np.eye(len(inst["y"]))
        f = "X" if "K" in inst else "K"
        return which, f, lambda fl: fl.__setitem__(f, X if f == "X" else K)
    if kind == "array-dtype":
        arrays = [f for f in names_ if f in ("K", "X", "y", "labels", "alpha", "alpha_hat",
                                             "alpha_check")]
        f = draw(st.sampled_from(arrays))
        how = draw(st.sampled_from(["complex", "bool", "str", "object", "nan", "3d", "scalar"]))

        def mutate(fl, f=f, how=how):
            v = np.asarray(fl[f])
            fl[f] = {"complex": lambda: v + 1j, "bool": lambda: v > 0,
                     "str": lambda: v.astype(str), "object": lambda: v.astype(object),
                     "nan": lambda: np.where(np.arange(v.size).reshape(v.shape) == 0,
                                             np.nan, v.astype(float)),
                     "3d": lambda: v[..., None, None], "scalar": lambda: 1.0}[how]()
        return which, f, mutate
    if kind == "version":
        val = draw(st.sampled_from([0, 2, "1", 1.0, -1, True, None]))
        return which, "version", lambda fl: fl.__setitem__("version", val)
    if kind == "format":
        val = "dank-solution" if which == "instance" else "dank-instance"
        val = draw(st.sampled_from([val, "DANK-instance", ""]))
        return which, "format", lambda fl: fl.__setitem__("format", val)
    # shape: a solution for another n, or y of the wrong length
    if which == "instance":
        return which, "y", lambda fl: fl.__setitem__("y", np.append(np.asarray(fl["y"]), 1.0))
    f = "alpha" if "alpha" in sol else "alpha_hat"
    return which, f, lambda fl: fl.__setitem__(f, np.append(np.asarray(fl[f]), 0.0))


@fuzz(80)
@given(data=st.data())
def test_fuzz_cli_field_corruptions(data):
    """One corrupted field: exit 2, one stderr line naming the field, no traceback."""
    inst, sol = data.draw(valid_pairs(), label="pair")
    which, field_name, mutate = data.draw(corruptions(inst, sol), label="corruption")
    kind = data.draw(st.sampled_from(["json", "npz"]), label="container")
    inst, sol = dict(inst), dict(sol)
    mutate(inst if which == "instance" else sol)
    with tempfile.TemporaryDirectory() as d:
        pi, ps = os.path.join(d, "inst." + kind), os.path.join(d, "sol." + kind)
        try:
            write(pi, inst, kind)
            write(ps, sol, kind)
        except (TypeError, ValueError):  # not writable in this container (e.g. JSON complex)
            return
        code, out, err = run_cli(pi, ps)
    assert code == 2, (code, out[:500], err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    assert out == ""
    ok = names(err, field_name) or (field_name in ("K", "X") and ("'K'" in err or "'X'" in err))
    if kind == "json" and "non-standard JSON constant" in err:
        ok = True  # NaN/Infinity literals are refused while parsing, before any field is known
    if field_name in ("y", "labels", "alpha", "alpha_hat", "alpha_check") and "entries" in err:
        ok = True  # a size mismatch names both sides ("'alpha' has 3 entries but ... n = 4")
    assert ok, f"exit 2 without naming {field_name!r}: {err}"
    record("dank-verify certify", "rejected")


# --------------------------------------------------------------------------- byte corruptions
@fuzz(60)
@given(data=st.data())
def test_fuzz_cli_byte_corruptions(data):
    """Truncated, bit-flipped or padded files: exit 0/1/2; for 2 one line, no traceback."""
    inst, sol = data.draw(valid_pairs(), label="pair")
    kind = data.draw(st.sampled_from(["json", "npz"]), label="container")
    which = data.draw(st.sampled_from(["instance", "solution"]))
    how = data.draw(st.sampled_from(["truncate", "flip", "append", "empty", "prefix"]))
    with tempfile.TemporaryDirectory() as d:
        pi, ps = os.path.join(d, "inst." + kind), os.path.join(d, "sol." + kind)
        write(pi, inst, kind)
        write(ps, sol, kind)
        target = pi if which == "instance" else ps
        raw = bytearray(open(target, "rb").read())
        if how == "truncate":
            raw = raw[: data.draw(st.integers(0, max(0, len(raw) - 1)))]
        elif how == "flip":
            for _ in range(data.draw(st.integers(1, 4))):
                i = data.draw(st.integers(0, len(raw) - 1))
                raw[i] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "append":
            raw += data.draw(st.binary(min_size=1, max_size=64))
        elif how == "empty":
            raw = bytearray()
        else:
            raw = bytearray(data.draw(st.binary(min_size=1, max_size=16))) + raw
        with open(target, "wb") as fh:
            fh.write(bytes(raw))
        code, out, err = run_cli(pi, ps)
    assert code in (0, 1, 2), code
    if code == 2:
        assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
        assert os.path.basename(target) in err or "dank_ref" in err or "task" in err, err
    else:
        assert err == "" and out.startswith("verdict: ")
    record("dank-verify certify (bytes)", {0: "ok", 1: "ok", 2: "rejected"}[code])


# --------------------------------------------------------------------------- hostile npz members
def _header_only(shape, version=(1, 0)) -> bytes:
    """An ``.npy`` magic and header declaring ``shape`` of float64, with no data after it."""
    buf = io.BytesIO()
    d = {"descr": "<f8", "fortran_order": False, "shape": tuple(shape)}
    if version == (1, 0):
        np.lib.format.write_array_header_1_0(buf, d)
    else:
        np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


@fuzz(40)
@given(data=st.data())
def test_fuzz_cli_hostile_npz(data):
    """Huge declared shapes, pickles, structured dtypes, odd members: refused before reading."""
    inst, sol = data.draw(valid_pairs(), label="pair")
    field = data.draw(st.sampled_from(["y", "C"] + (["K"] if "K" in inst else ["X"])))
    how = data.draw(st.sampled_from(["huge", "huge-v2", "truncated", "pickle", "structured",
                                     "extra-bytes", "not-npy", "dir-member"]))
    n = len(inst["y"])
    inst = dict(inst)
    raw = {}
    if how in ("huge", "huge-v2"):
        big = data.draw(st.sampled_from([(10**6, 10**6), (2**62,), (10**5, 10**5, 10**5)]))
        raw[field] = _header_only(big, version=(2, 0) if how == "huge-v2" else (1, 0))
    elif how == "truncated":
        raw[field] = _npy_bytes(np.ones((n, n)) if field in ("K", "X") else np.ones(n))[:-3]
    elif how == "pickle":
        raw[field] = _npy_bytes(np.array([{"a": 1}] * n, dtype=object))
    elif how == "structured":
        raw[field] = _npy_bytes(np.zeros(n, dtype=[("a", "<f8"), ("b", "<i4")]))
    elif how == "extra-bytes":
        raw[field] = _npy_bytes(np.asarray(inst[field])) + b"\x00" * 8
    inst.pop(field)
    with tempfile.TemporaryDirectory() as d:
        pi, ps = os.path.join(d, "inst.npz"), os.path.join(d, "sol.json")
        if how == "not-npy":
            write_npz(pi, inst)
            with zipfile.ZipFile(pi, "a") as zf:
                zf.writestr(f"{field}.txt", b"1.0")
        elif how == "dir-member":
            write_npz(pi, inst)
            with zipfile.ZipFile(pi, "a") as zf:
                zf.writestr(f"sub/{field}.npy", _npy_bytes(np.ones(n)))
        else:
            write_npz(pi, inst, raw)
        write_json(ps, sol)
        code, out, err = run_cli(pi, ps)
    assert code == 2, (code, out[:300], err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    assert field in err, err
    record("dank-verify certify (npz)", "rejected")


# --------------------------------------------------------------------------- odd files
@fuzz(20)
@given(what=st.sampled_from(["missing", "directory", "bare-npy", "pickle", "json-array",
                             "json-dup", "json-nan", "json-deep", "bom", "latin1", "tol"]),
       pair=valid_pairs())
def test_fuzz_cli_odd_files(what, pair):
    inst, sol = pair
    with tempfile.TemporaryDirectory() as d:
        pi, ps = os.path.join(d, "inst.json"), os.path.join(d, "sol.json")
        write_json(pi, inst)
        write_json(ps, sol)
        extra = []
        text = open(pi).read()
        if what == "missing":
            pi = os.path.join(d, "nope.json")
        elif what == "directory":
            pi = d
        elif what == "bare-npy":
            open(pi, "wb").write(_npy_bytes(np.ones(3)))
        elif what == "pickle":
            import pickle

            open(pi, "wb").write(pickle.dumps(inst, protocol=4))
        elif what == "json-array":
            open(pi, "w").write("[" + text + "]")
        elif what == "json-dup":
            open(pi, "w").write(text[:-1] + ', "C": 1.0}')
        elif what == "json-nan":
            open(pi, "w").write(text.replace('"eta": ', '"eta": NaN, "x": '))
        elif what == "json-deep":
            open(pi, "w").write('{"format": ' + "[" * 100000 + "]" * 100000 + "}")
        elif what == "bom":
            open(pi, "wb").write(b"\xef\xbb\xbf" + text.encode())
        elif what == "latin1":
            open(pi, "wb").write(text.replace("dank-instance", "dank-\xe9").encode("latin-1"))
        else:
            extra = ["--tol", "nan"]
        code, out, err = run_cli(pi, ps, *extra)
    if what == "bom":  # a UTF-8 byte-order mark is accepted
        assert code in (0, 1), (code, err)
        return
    assert code == 2, (what, code, out[:300], err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    record("dank-verify certify (odd files)", "rejected")


def test_dank_fast_cross_check_is_optional_and_informative(capsys):
    """Without ``--reference`` the report has no dank_fast number; with it, the cross-check's
    numbers are listed as informative only, and the verdict is the same.  ``--no-reference``
    (the default) is accepted too."""
    p1_inst = os.path.join(GOLDEN_DIR, "p1_basic_instance.npz")
    p1_sol = os.path.join(GOLDEN_DIR, "p1_basic_solution.npz")
    assert main(["certify", p1_inst, p1_sol, "--no-reference"]) == 0
    plain = capsys.readouterr().out
    assert "dank_fast" not in plain and "informative only, not part of the verdict:" in plain
    assert main(["certify", p1_inst, p1_sol, "--reference"]) == 0
    out = capsys.readouterr().out
    assert "the optional cross-check by dank_fast" in out
    assert "    distance_to_reference: " in out and "    dank_fast_rel_gap: " in out
    assert out.splitlines()[0] == plain.splitlines()[0]


@pytest.mark.parametrize("task", ["svm", "decomposed"])
def test_an_instance_above_the_dense_limit_is_certified_from_features(p1, tmp_path, task):
    """With ``X`` beyond ``MAX_ARRAY_BYTES`` for ``n x n``, the verdict and the bracket are the
    dense route's (dank_ref.scale_certificate, row blocks); a wrong bias is still rejected."""
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
        big = load_instance(inst, max_array_bytes=8 * 14 * 13)
        assert big["K"] is None
        reps[name] = certify(big, load_solution(tmp_path / f"{name}.npz", 14), reference=False)
        # the same bracket at the point; the dense route's upper bound may be tighter (a
        # Newton step of the fixed-F problem): it certifies what the blockwise one does
        assert dense["certified"] or not reps[name]["certified"]
        assert set(dense["failed"]) <= set(reps[name]["failed"])
        assert reps[name]["lower"] == pytest.approx(dense["lower"], rel=1e-9, abs=1e-12)
        assert reps[name]["upper"] == pytest.approx(dense["upper_at_point"], rel=1e-9,
                                                    abs=1e-12)
    assert reps["good"]["certified"] is (task == "svm")
    if task == "svm":
        assert reps["bad_bias"]["failed"] == ["bias"]


# ---------------------------------------------------------------------------------------------
# large input: progress on stderr, bad input refused before the heavy work
# ---------------------------------------------------------------------------------------------
def test_progress_goes_to_stderr_and_quiet_silences_it(capsys):
    inst = os.path.join(GOLDEN_DIR, "p1_basic_instance.npz")
    sol = os.path.join(GOLDEN_DIR, "p1_basic_solution.npz")
    assert main(["certify", inst, sol, "--progress-after", "0"]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines and all(x.startswith("dank-verify certify: [") for x in lines)
    assert any("reading the instance" in x for x in lines)
    assert any("dense certificate (eigh of 12 x 12): 1/1" in x for x in lines)
    assert lines[-1].endswith("finished")
    assert main(["certify", inst, sol, "--progress-after", "0", "--quiet"]) == 0
    quiet_out, quiet_err = capsys.readouterr()
    assert quiet_err == "" and quiet_out == out
    assert main(["certify", inst, sol, "--progress-after", "-1"]) == 2
    assert "--progress-after: must be a finite number >= 0" in capsys.readouterr().err


def _one_line_exit_2(argv, capsys, *words):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err


def test_a_short_alpha_is_refused_before_the_kernel_is_tested(tmp_path, capsys):
    """The solution's length is checked against the instance's shape first: with an
    indefinite ``K`` (whose test would come later) the one line names ``alpha``."""
    save_instance(tmp_path / "i.npz", task="svm", K=-np.eye(12), y=np.r_[np.ones(6),
                  -np.ones(6)], C=1.0, eta=1.0, tau=0.01)
    save_solution(tmp_path / "s.npz", task="svm", alpha=np.zeros(11))
    _one_line_exit_2(["certify", str(tmp_path / "i.npz"), str(tmp_path / "s.npz")], capsys,
                     "bad input:", "field 'alpha' has 11 entries but the instance has n = 12")


N_BIG = 16500  # 8 n^2 > 2 GiB: the blockwise route


def test_large_bad_input_is_one_line(tmp_path, capsys):
    """At a size beyond the dense limit: a NaN in one row of X, an alpha one entry short."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_BIG, 2))
    y = np.where(rng.random(N_BIG) < 0.5, 1.0, -1.0)
    kw = dict(task="decomposed", kernel="gaussian", sigma=1.0, y=y, C=1.0, eta=1.0,
              labels=np.arange(N_BIG) % 7)
    save_instance(tmp_path / "ok.npz", X=X, **kw)
    with np.load(tmp_path / "ok.npz") as ok:  # save_instance refuses a NaN: the file by hand
        fields = dict(ok)
    fields["X"][12345, 1] = np.nan
    np.savez(tmp_path / "nan.npz", **fields)
    save_solution(tmp_path / "s.npz", task="decomposed", alpha=np.zeros(N_BIG))
    save_solution(tmp_path / "short.npz", task="decomposed", alpha=np.zeros(N_BIG - 1))
    _one_line_exit_2(["certify", str(tmp_path / "nan.npz"), str(tmp_path / "s.npz")], capsys,
                     "field 'X' contains NaN or infinity (at index (12345, 1))")
    _one_line_exit_2(["certify", str(tmp_path / "ok.npz"), str(tmp_path / "short.npz")], capsys,
                     f"field 'alpha' has {N_BIG - 1} entries but the instance has n = {N_BIG}")


def test_clusters_of_one_point_at_large_n_are_certified(tmp_path, capsys):
    """Every point its own cluster (a valid P3 instance): each cluster's problem is
    ``max_a a - a^2 K_ii / 2 - a^4 K_ii^2 / (16 eta)`` on ``[0, C]``; at its root the oracle
    certifies, with the bracket the closed form gives; a point off it is not certified."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N_BIG, 2))
    y = np.where(rng.random(N_BIG) < 0.5, 1.0, -1.0)
    eta = 0.5
    save_instance(tmp_path / "i.npz", task="decomposed", X=X, kernel="gaussian", sigma=1.0,
                  y=y, C=1.0, eta=eta, labels=np.arange(N_BIG))
    a = 0.8  # Newton on 1 - a - a^3 / (4 eta) = 0 (K_ii = 1)
    for _ in range(50):
        a -= (1 - a - a**3 / (4 * eta)) / (-1 - 3 * a**2 / (4 * eta))
    v = N_BIG * (a - a**2 / 2 - a**4 / (16 * eta))
    save_solution(tmp_path / "s.npz", task="decomposed", alpha=np.full(N_BIG, a))
    save_solution(tmp_path / "off.npz", task="decomposed", alpha=np.full(N_BIG, 0.9 * a))
    assert main(["certify", str(tmp_path / "i.npz"), str(tmp_path / "s.npz"), "--tol",
                 "1e-12"]) == 0
    out = capsys.readouterr().out
    lower = float(out.split("  lower: ")[1].split()[0])
    upper = float(out.split("  upper: ")[1].split()[0])
    assert lower == pytest.approx(v, rel=1e-12) and upper == pytest.approx(v, rel=1e-12)
    assert "route: clusters" in out
    assert main(["certify", str(tmp_path / "i.npz"), str(tmp_path / "off.npz")]) == 1
    assert "reason: gap: certified relative gap" in capsys.readouterr().out
