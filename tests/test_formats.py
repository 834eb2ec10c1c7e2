"""The oracle's file formats (verification/formats/): the strict reader (a table of malformed
files, each refused with a message naming the problem; valid variants accepted; headers checked
before allocation), the writer, kernels given by X and every field's round trip; the contracts
that mutation testing found unchecked (a one-point kernel, float32 data, the float32 symmetry
tolerance, overflow refused as a ValueError, JSON without NaN; benchmarks/MUTATION.md)."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

from verification import formats
from verification.formats import (
    FormatError,
    kernel_from_X,
    load_instance,
    load_solution,
    save_instance,
    save_solution,
    validate_kernel,
)

K2 = [[2.0, 1.0], [1.0, 2.0]]
BASE = {"format": "dank-instance", "version": 1, "task": "svm", "K": K2, "y": [1, -1],
        "C": 1.0, "eta": 2.0, "tau": 0.01}
XBASE = {"format": "dank-instance", "version": 1, "task": "svm", "X": [[0.0, 1.0], [1.0, 0.5]],
         "kernel": "gaussian", "sigma": 0.5, "y": [1.0, -1.0], "C": 1.0, "eta": 2.0,
         "tau": 0.01}
SOL = {"format": "dank-solution", "version": 1, "task": "svm", "alpha": [0.5, 0.5]}


def _json(tmp_path, obj, name="f.json"):
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return p


def _with(base, **kw):
    d = dict(base)
    for k, v in kw.items():
        if v is _DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return d


_DROP = object()
_BIG = 10**400

BAD_INSTANCES = {
    # field types
    "C_string": (_with(BASE, C="1.0"), "field 'C' must be a number, got the string '1.0'"),
    "C_true": (_with(BASE, C=True), "field 'C' must be a number, got the boolean true"),
    "C_null": (_with(BASE, C=None), "field 'C' is null"),
    "C_list": (_with(BASE, C=[1.0]), "field 'C' must be a number, got a list"),
    "C_negative": (_with(BASE, C=-1.0), "field 'C' must be a finite number > 0"),
    "C_zero": (_with(BASE, C=0), "field 'C' must be a finite number > 0"),
    "C_overflow_literal": ('{"format": "dank-instance", "version": 1, "task": "svm", '
                           '"K": [[2, 1], [1, 2]], "y": [1, -1], "C": 1e400, "eta": 2, '
                           '"tau": 0}', "field 'C' must be a finite number > 0"),
    "C_huge_int": (_with(BASE, C=_BIG), "field 'C' = 1000"),
    "C_nan_constant": ('{"format": "dank-instance", "version": 1, "task": "svm", '
                       '"K": [[2, 1], [1, 2]], "y": [1, -1], "C": NaN, "eta": 2, "tau": 0}',
                       "non-standard JSON constant NaN"),
    "eta_missing": (_with(BASE, eta=_DROP), "missing field 'eta'"),
    "tau_missing": (_with(BASE, tau=_DROP), "missing field 'tau'"),
    "tau_negative": (_with(BASE, tau=-0.1), "field 'tau' must be a finite number >= 0"),
    "version_string": (_with(BASE, version="1"), "'version' must be an integer, got the string"),
    "version_float": (_with(BASE, version=1.0), "'version' must be an integer, got 1.0"),
    "version_1_7": (_with(BASE, version=1.7), "'version' must be an integer, got 1.7"),
    "version_bool": (_with(BASE, version=True), "'version' must be an integer, got the boolean"),
    "version_3": (_with(BASE, version=3), "unsupported version 3"),
    "format_solution": (_with(BASE, format="dank-solution"), "this is a solution file"),
    "format_missing": (_with(BASE, format=_DROP), "missing field 'format'"),
    "task_unknown": (_with(BASE, task="svc"), "field 'task' must be one of"),
    "unknown_field": (_with(BASE, foo=1), "unknown field(s) 'foo'"),
    "epsilon_for_svm": (_with(BASE, epsilon=0.1), "'epsilon' not used by task 'svm'"),
    "labels_for_svm": (_with(BASE, labels=[0, 1]), "'labels' not used by task 'svm'"),
    "epsilon_missing_svr": (_with(BASE, task="svr"), "missing field 'epsilon'"),
    "labels_missing_p3": (_with(BASE, task="decomposed", tau=_DROP), "missing field 'labels'"),
    "tau_nonzero_p3": (_with(BASE, task="decomposed", labels=[0, 0], tau=0.5),
                       "'tau' must be 0 for task 'decomposed'"),
    "labels_float": (_with(BASE, task="decomposed", tau=_DROP, labels=[0.0, 1.0]),
                     "'labels'[0] must be one of the integers, got 0.0"),
    "labels_length": (_with(BASE, task="decomposed", tau=_DROP, labels=[0, 1, 1]),
                      "'labels' has 3 entries"),
    "labels_huge": (_with(BASE, task="decomposed", tau=_DROP, labels=[0, 2**70]),
                    "outside int64"),
    # labels y
    "y_strings": (_with(BASE, y=["1", "-1"]), "'y'[0] must be one of the numbers, got the string"),
    "y_bools": (_with(BASE, y=[True, False]), "'y'[0] must be one of the numbers, got the boolean"),
    "y_zero_one": (_with(BASE, y=[1, 0]), "labels y must take values in {-1, +1} (got y[1] = 0.0)"),
    "y_one_class": (_with(BASE, y=[1, 1]), "both classes"),
    "y_length": (_with(BASE, y=[1, -1, 1]), "'y' has 3 entries but the kernel is 2 x 2"),
    "y_nested": (_with(BASE, y=[[1], [-1]]), "field 'y' must be a 1-D array of n "
                 "numbers, got a list of lists (a 2-D array of shape (2, 1))"),
    "y_svr_nan": ('{"format": "dank-instance", "version": 1, "task": "svr", "K": [[2, 1], '
                  '[1, 2]], "y": [Infinity, 1], "C": 1, "eta": 2, "tau": 0, "epsilon": 0}',
                  "non-standard JSON constant Infinity"),
    "y_svr_overflow": ('{"format": "dank-instance", "version": 1, "task": "svr", "K": [[2, 1], '
                       '[1, 2]], "y": [1e999, 1], "C": 1, "eta": 2, "tau": 0, "epsilon": 0}',
                       "field 'y' contains NaN or infinity (at index (0,))"),
    # kernel
    "K_and_X": (_with(BASE, X=[[0.0], [1.0]], kernel="linear"), "exactly one of field 'K' or "
                "fields 'X' and 'kernel' (got both)"),
    "neither_K_nor_X": (_with(BASE, K=_DROP), "(got neither)"),
    "K_with_sigma": (_with(BASE, sigma=1.0), "'sigma' need 'X'"),
    "K_ragged": (_with(BASE, K=[[2.0, 1.0], [1.0]]), "ragged"),
    "K_not_square": (_with(BASE, K=[[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]), "must be square"),
    "K_empty": (_with(BASE, K=[], y=[]), "K is empty (n = 0)"),
    "K_vector": (_with(BASE, K=[2.0, 1.0]), "list of lists"),
    "K_asymmetric": (_with(BASE, K=[[2.0, 1.0], [0.0, 2.0]]), "not symmetric"),
    "K_indefinite": (_with(BASE, K=[[1.0, 2.0], [2.0, 1.0]]), "not positive semidefinite"),
    "K_indefinite_scaled": (_with(BASE, K=[[1e-12, 2e-12], [2e-12, 1e-12]]),
                            "not positive semidefinite"),
    "K_asymmetric_scaled": (_with(BASE, K=[[2e-12, 1e-12], [0.0, 2e-12]]), "not symmetric"),
    "K_string_entry": (_with(BASE, K=[[2.0, "1"], [1.0, 2.0]]), "'K'[0][1] must be one of"),
    "representable_C": (_with(BASE, C=1e-120), "representable range"),
    "representable_svm_scale": (_with(BASE, C=1e-120, eta=1e-240), "(C = 1.000e-120, eta = "
                                "1.000e-240, max|K| = 2.000e+00, n = 2): C * max|K| * n = "
                                "10^-119.4 not in [1e-100, 1e100]"),
    "representable_eta": (_with(BASE, eta=1e150), "eta / (C^2 * max|K|) = 10^149.7 not in"),
    "kernel_unknown": (_with(XBASE, kernel="rbf"), "'kernel' must be one of"),
    "gaussian_no_width": (_with(XBASE, sigma=_DROP), "exactly one of 'sigma' or 'gamma'"),
    "gaussian_both_widths": (_with(XBASE, gamma=2.0), "exactly one of 'sigma' or 'gamma'"),
    "sigma_underflow": (_with(XBASE, sigma=1e-170), "sigma = 1e-170 is too small"),
    "sigma_zero": (_with(XBASE, sigma=0.0), "field 'sigma' must be a finite number > 0"),
    "linear_with_sigma": (_with(XBASE, kernel="linear"), "'sigma' not used by the linear kernel"),
    "linear_overflow": (_with(XBASE, kernel="linear", sigma=_DROP, X=[[1e200], [1.0]]),
                        "linear kernel of X with {} overflows"),
    "gaussian_distance_overflow": (_with(XBASE, X=[[1e200], [-1e200]]),
                                   "squared distances between rows of X overflow"),
    "poly_no_coef0": (_with(XBASE, kernel="polynomial", sigma=_DROP, degree=2, gamma=1.0),
                      "missing field 'coef0'"),
    "poly_negative_coef0": (_with(XBASE, kernel="polynomial", sigma=_DROP, degree=2, gamma=1.0,
                                  coef0=-1.0), "'coef0' must be a finite number >= 0"),
    "poly_float_degree": (_with(XBASE, kernel="polynomial", sigma=_DROP, degree=2.0, gamma=1.0,
                                coef0=1.0), "'degree' must be an integer, got 2.0"),
    "poly_degree_zero": (_with(XBASE, kernel="polynomial", sigma=_DROP, degree=0, gamma=1.0,
                               coef0=1.0), "'degree' must be >= 1"),
    "X_no_rows": (_with(XBASE, X=[], y=[]), "field 'X' has no rows"),
    "X_no_columns": (_with(XBASE, X=[[], []]), "field 'X' has no columns"),
    # containers
    "duplicate_key": ('{"format": "dank-instance", "format": "dank-instance"}',
                      "duplicate JSON key 'format'"),
    "json_array": ("[1, 2]", "found a JSON array"),
    "not_json": ("{not json", "not valid JSON"),
    "deeply_nested": ('{"K": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
    "text": ("hello", "found text starting with 'hello'"),
}


@pytest.mark.parametrize("case", sorted(BAD_INSTANCES))
def test_bad_instance_json(tmp_path, case):
    obj, msg = BAD_INSTANCES[case]
    p = _json(tmp_path, obj)
    with pytest.raises(FormatError) as e:
        load_instance(p)
    assert msg in str(e.value)
    assert str(p) in str(e.value)


BAD_SOLUTIONS = {
    "alpha_length": (_with(SOL, alpha=[0.5, 0.5, 0.5]), "'alpha' has 3 entries but the instance "
                     "has n = 2"),
    "alpha_strings": (_with(SOL, alpha=["0.5", "0.5"]), "'alpha'[0] must be one of the numbers"),
    "alpha_hat_for_svm": (_with(SOL, alpha_hat=[0.0, 0.0]), "'alpha_hat' not used by task "
                          "'svm'"),
    "bias_string": (_with(SOL, bias="0.1"), "field 'bias' must be a number"),
    "bias_null": (_with(SOL, bias=None), "field 'bias' is null"),
    "bias_p3": (_with(SOL, task="decomposed", bias=0.0), "'bias' not used by task 'decomposed'"),
    "F_shape": (_with(SOL, F=[[1.0]]), "field 'F' has shape (1, 1), expected (2, 2)"),
    "svr_missing_check": (_with(SOL, task="svr", alpha=_DROP, alpha_hat=[0.0, 0.0]),
                          "missing field 'alpha_check'"),
    "svr_alpha": (_with(SOL, task="svr"), "'alpha' not used by task 'svr'"),
    "format_instance": (_with(SOL, format="dank-instance"), "this is an instance file"),
}


@pytest.mark.parametrize("case", sorted(BAD_SOLUTIONS))
def test_bad_solution_json(tmp_path, case):
    obj, msg = BAD_SOLUTIONS[case]
    with pytest.raises(FormatError) as e:
        load_solution(_json(tmp_path, obj), n=2)
    assert msg in str(e.value)


def test_solution_lengths_must_agree_without_n(tmp_path):
    p = _json(tmp_path, _with(SOL, task="svr", alpha=_DROP, alpha_hat=[0.0, 0.0],
                              alpha_check=[0.0]))
    with pytest.raises(FormatError, match="'alpha_check' has 1 entries, 'alpha_hat' has 2"):
        load_solution(p)


def test_valid_json_instance_variants(tmp_path):
    inst = load_instance(_json(tmp_path, BASE))
    assert inst["task"] == "svm" and inst["n"] == 2 and inst["K"].dtype == np.float64
    assert inst["C"] == 1.0 and inst["tau"] == 0.01
    # integers are numbers; labels ints; X-kernels computed
    inst = load_instance(_json(tmp_path, _with(BASE, C=1, y=[-1, 1]), "b.json"))
    assert inst["C"] == 1.0 and list(inst["y"]) == [-1.0, 1.0]
    inst = load_instance(_json(tmp_path, XBASE, "x.json"))
    X = np.array(XBASE["X"])
    assert np.allclose(inst["K"], kernel_from_X(X, "gaussian", sigma=0.5))
    assert inst["K"][0, 1] == pytest.approx(np.exp(-1.25 / 0.5))
    p3 = _with(BASE, task="decomposed", tau=_DROP, labels=[3, 3], y=[1, 1])
    inst = load_instance(_json(tmp_path, p3, "p3.json"))
    assert inst["tau"] == 0.0 and inst["labels"].dtype.kind == "i"
    # K = 0 is a valid kernel (docs/validity.md), n = 1 for P3
    inst = load_instance(_json(tmp_path, _with(p3, K=[[0.0]], y=[1], labels=[0]), "z.json"))
    assert inst["n"] == 1 and inst["K"][0, 0] == 0.0


def test_polynomial_kernel_formula(tmp_path):
    d = _with(XBASE, kernel="polynomial", sigma=_DROP, degree=3, gamma=0.5, coef0=1.0)
    inst = load_instance(_json(tmp_path, d))
    X = np.array(XBASE["X"])
    assert np.allclose(inst["K"], (0.5 * X @ X.T + 1.0) ** 3, rtol=1e-15)
    d = _with(XBASE, gamma=2.0, sigma=_DROP)
    inst = load_instance(_json(tmp_path, d, "g.json"))
    assert inst["K"][0, 1] == pytest.approx(np.exp(-2.0 * 1.25))


def test_gaussian_kernel_is_exact_on_the_diagonal_for_huge_gamma(tmp_path):
    """exp(-gamma * 0) = 1 even when gamma * (rounding of ||x||^2 - 2x'x + ||x||^2) is huge."""
    K = kernel_from_X(np.array([[0.1, 0.7], [0.3, 0.2], [0.1, 0.7]]), "gaussian", gamma=1e300)
    assert np.array_equal(K, np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]))


def test_content_decides_the_type_not_the_extension(tmp_path):
    for name in ("inst.txt", "inst.JSON", "inst", "inst.npz"):
        assert load_instance(_json(tmp_path, BASE, name))["n"] == 2
    p = tmp_path / "npz_named.json.npz"
    save_instance(p, task="svm", K=np.array(K2), y=[1.0, -1.0], C=1.0, eta=2.0, tau=0.01)
    q = tmp_path / "npz_named.json"
    os.rename(p, q)
    assert load_instance(q)["n"] == 2


# ---------------------------------------------------------------------------------------------
# npz containers: headers first, truncation, pickles, dtypes
# ---------------------------------------------------------------------------------------------
def _npz(path, members: dict):
    """Write an npz from raw member bytes (name -> bytes) or arrays."""
    with zipfile.ZipFile(path, "w") as zf:
        for k, v in members.items():
            if isinstance(v, bytes):
                zf.writestr(k, v)
            else:
                buf = io.BytesIO()
                np.lib.format.write_array(buf, np.asarray(v), allow_pickle=True)
                zf.writestr(k + ".npy", buf.getvalue())
    return path


def _base_arrays(**kw):
    d = {"format": np.array("dank-instance"), "version": np.array(1), "task": np.array("svm"),
         "K": np.array(K2), "y": np.array([1.0, -1.0]), "C": np.array(1.0),
         "eta": np.array(2.0), "tau": np.array(0.01)}
    for k, v in kw.items():
        if v is _DROP:
            d.pop(k)
        else:
            d[k] = v
    return d


def _header_bytes(shape, dtype="<f8"):
    buf = io.BytesIO()  # magic + header, as numpy writes it
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                              "shape": shape})
    return buf.getvalue()


BAD_NPZ = {
    "object_member": (dict(K=np.array([{"a": 1}], dtype=object)),
                      "field 'K' is an object array (it would have to be unpickled)"),
    "bool_K": (dict(K=np.array([[True, False], [False, True]])), "must be a real numeric array, "
               "got a boolean array"),
    "complex_K": (dict(K=np.array(K2) + 0j), "got a complex array"),
    "string_C": (dict(C=np.array("1.0")), "'C' must be a 0-d real number, got a 0-d string"),
    "vector_C": (dict(C=np.array([1.0])), "'C' must be a 0-d real number, got a float64 array "
                 "of shape (1,)"),
    "bool_C": (dict(C=np.array(True)), "got a 0-d boolean"),
    "float_version": (dict(version=np.array(1.0)), "'version' must be a 0-d integer"),
    "bytes_format": (dict(format=np.array(b"dank-instance")), "must be a 0-d unicode string"),
    "structured": (dict(K=np.zeros(2, dtype=[("a", "f8"), ("b", "f8")])), "structured dtype"),
    "K_1d": (dict(K=np.array([1.0, 2.0])), "field 'K' must be 2-D, got shape (2,)"),
    "bool_y": (dict(y=np.array([True, False])), "'y' must be a real numeric array, got a boolean"),
}


@pytest.mark.parametrize("case", sorted(BAD_NPZ))
def test_bad_instance_npz(tmp_path, case):
    kw, msg = BAD_NPZ[case]
    p = _npz(tmp_path / "i.npz", _base_arrays(**kw))
    with pytest.raises(FormatError) as e:
        load_instance(p)
    assert msg in str(e.value)


def test_valid_npz_dtypes(tmp_path):
    """int K, float32 K (own epsilon), big-endian and Fortran-ordered arrays are read exactly."""
    Kf = np.asfortranarray(np.array([[2.0, 1.0], [1.0, 3.0]], dtype=">f8"))
    inst = load_instance(_npz(tmp_path / "a.npz", _base_arrays(K=Kf)))
    assert np.array_equal(inst["K"], [[2.0, 1.0], [1.0, 3.0]])
    inst = load_instance(_npz(tmp_path / "b.npz", _base_arrays(K=np.array([[2, 1], [1, 2]]),
                                                                C=np.array(1, np.int32))))
    assert inst["C"] == 1.0 and inst["K"].dtype == np.float64
    # float32 symmetric to 1e-7 relative: valid for float32 (eps_sym = 10 u = 1.2e-6) ...
    K32 = np.array([[1.0, 0.5], [0.5000001, 1.0]], dtype=np.float32)
    assert load_instance(_npz(tmp_path / "c.npz", _base_arrays(K=K32)))["n"] == 2
    # ... not for float64 (eps_sym = 1e-10)
    with pytest.raises(FormatError, match="not symmetric"):
        load_instance(_npz(tmp_path / "d.npz", _base_arrays(K=K32.astype(np.float64))))


def test_npz_header_too_large_is_refused_before_allocation(tmp_path):
    """A header announcing 200,000 x 200,000 float64 (298 GiB) is refused from the header."""
    members = {f"{k}.npy": _npy_bytes(v) for k, v in _base_arrays(K=_DROP).items()}
    members["K.npy"] = _header_bytes((200000, 200000)) + b"\0" * 64
    p = _npz(tmp_path / "big.npz", members)
    tracemalloc.start()
    with pytest.raises(FormatError) as e:
        load_instance(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "declares shape (200000, 200000) of float64 = 298 GiB, more than the 2 GiB" in \
        str(e.value)
    assert peak < 50 * 2**20


def test_npz_member_larger_than_the_machine_is_refused_from_its_header(tmp_path):
    """Within a raised limit, a member declaring more than the memory the machine has is
    refused from its header, with both sizes, before anything is read."""
    members = {f"{k}.npy": _npy_bytes(v) for k, v in _base_arrays(K=_DROP).items()}
    members["K.npy"] = _header_bytes((2**22, 2**22)) + b"\0" * 64  # 128 TiB
    p = _npz(tmp_path / "huge.npz", members)
    tracemalloc.start()
    with pytest.raises(FormatError) as e:
        load_instance(p, max_array_bytes=2**50)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    msg = str(e.value)
    assert "field 'K' declares shape (4194304, 4194304) of float64 = 1.31e+05 GiB" in msg
    assert "of memory this machine has available; refused before reading" in msg
    assert peak < 50 * 2**20


def test_a_bad_field_is_refused_before_the_kernel_is_validated(tmp_path):
    """Every field is checked before the PSD test: an indefinite K with a bad y names y."""
    arrays = _base_arrays(K=-np.eye(2), y=np.array([1.0, 2.0]))
    with pytest.raises(FormatError, match="field 'y'"):
        load_instance(_npz(tmp_path / "y.npz", arrays))
    seen = []
    with pytest.raises(FormatError, match="not positive semidefinite"):
        load_instance(_npz(tmp_path / "k.npz", _base_arrays(K=-np.eye(2))), check_n=seen.append)
    assert seen == [2]
    with pytest.raises(ValueError, match="wrong size"):
        load_instance(_npz(tmp_path / "k.npz", _base_arrays(K=-np.eye(2))),
                      check_n=lambda n: (_ for _ in ()).throw(ValueError("wrong size")))


def test_writers_leave_no_partial_file(tmp_path):
    """A failed write leaves neither the target nor a temporary file behind."""
    with pytest.raises(ValueError):
        save_instance(tmp_path / "bad.json", task="svm", K=[[float("nan")]], y=[1.0], C=1.0,
                      eta=1.0, tau=0.0)
    assert os.listdir(tmp_path) == []
    save_instance(tmp_path / "ok.npz", task="svm", K=[[1.0]], y=[1.0], C=1.0, eta=1.0, tau=0.0)
    before = (tmp_path / "ok.npz").read_bytes()
    with pytest.raises(TypeError, match="booleans"):  # after X: a half-written archive
        save_instance(tmp_path / "ok.npz", task="svm", X=[[1.0]], kernel=True, y=[1.0], C=1.0,
                      eta=1.0, tau=0.0)
    assert (tmp_path / "ok.npz").read_bytes() == before and os.listdir(tmp_path) == ["ok.npz"]


@pytest.mark.parametrize("name", ["x.npz", "x.json"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_save_instance_refuses_non_finite_features(tmp_path, name, bad):
    """X with NaN or infinity is refused before anything is written, with the reader's message
    (the field and the first bad index, row first); an existing file is left as it was."""
    X = np.ones((5, 2))
    X[3, 1] = X[4, 0] = bad
    kw = dict(task="svm", kernel="gaussian", sigma=1.0, y=[1.0, -1.0, 1.0, -1.0, 1.0], C=1.0,
              eta=1.0, tau=0.01)
    with pytest.raises(ValueError, match=r"^field 'X' contains NaN or infinity \(at index "
                                         r"\(3, 1\)\)$"):
        save_instance(tmp_path / name, X=X, **kw)
    assert os.listdir(tmp_path) == []
    save_instance(tmp_path / name, X=np.ones((5, 2)), **kw)
    before = (tmp_path / name).read_bytes()
    with pytest.raises(ValueError, match="field 'X'"):
        save_instance(tmp_path / name, X=X.tolist(), **kw)
    assert (tmp_path / name).read_bytes() == before and os.listdir(tmp_path) == [name]


def test_limits_are_the_documented_ones(tmp_path):
    assert formats.MAX_ARRAY_BYTES == 2 * 1024**3 and formats.MAX_JSON_BYTES == 64 * 1024**2
    p = _npz(tmp_path / "i.npz", _base_arrays(K=np.eye(3), y=np.array([1.0, -1.0, 1.0])))
    # 'dank-instance' is 52 bytes
    with pytest.raises(FormatError, match=r"field 'K' declares shape \(3, 3\).*limit"):
        load_instance(p, max_array_bytes=64)
    assert load_instance(p)["n"] == 3
    with pytest.raises(FormatError, match="exceeds the 9.54e-06 MiB limit"):
        load_instance(_json(tmp_path, BASE), max_json_bytes=10)


def test_X_too_many_rows_for_a_dense_kernel_is_read_without_it(tmp_path):
    """Above the limit the ``n x n`` kernel is not formed: the oracle works from ``X``."""
    X = np.zeros((4, 1))
    p = _npz(tmp_path / "x.npz", _base_arrays(K=_DROP, X=X, kernel=np.array("linear"),
                                              y=np.array([1.0, -1, 1, -1])))
    inst = load_instance(p, max_array_bytes=8 * 9)
    assert inst["K"] is None and inst["X"].shape == (4, 1) and inst["kernel"]["blockwise"]


def _npy_bytes(a):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(a), allow_pickle=False)
    return buf.getvalue()


def test_truncated_member_is_named(tmp_path):
    members = {f"{k}.npy": _npy_bytes(v) for k, v in _base_arrays().items()}
    members["K.npy"] = members["K.npy"][:-5]
    with pytest.raises(FormatError, match=r"field 'K' is truncated: its header announces shape "
                                          r"\(2, 2\) of float64 \(32 bytes\) but the member "
                                          r"holds 27"):
        load_instance(_npz(tmp_path / "t.npz", members))
    members["K.npy"] = _npy_bytes(np.array(K2)) + b"xx"
    with pytest.raises(FormatError, match="field 'K' has 2 bytes after the 32 its header"):
        load_instance(_npz(tmp_path / "u.npz", members))
    members["K.npy"] = b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f8', "
    with pytest.raises(FormatError, match="field 'K' has a malformed or truncated .npy header"):
        load_instance(_npz(tmp_path / "v.npz", members))
    members["K.npy"] = b"not an npy member at all"
    with pytest.raises(FormatError, match="field 'K' has a malformed or truncated .npy header"):
        load_instance(_npz(tmp_path / "w.npz", members))


def test_truncated_or_corrupt_archive(tmp_path):
    p = tmp_path / "i.npz"
    save_instance(p, task="svm", K=np.array(K2), y=[1.0, -1.0], C=1.0, eta=2.0, tau=0.01)
    data = p.read_bytes()
    q = tmp_path / "cut.npz"
    q.write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError, match="not a readable zip .* truncated or corrupt"):
        load_instance(q)
    # flip one byte inside K's data: the member's CRC then fails to match
    i = data.index(b"K.npy")
    j = data.index(np.array(K2).tobytes(), i)
    r = tmp_path / "crc.npz"
    r.write_bytes(data[:j] + bytes([data[j] ^ 1]) + data[j + 1:])
    with pytest.raises(FormatError, match="field 'K' is a corrupt or truncated zip member"):
        load_instance(r)


def test_archive_members_must_be_fields(tmp_path):
    members = {f"{k}.npy": _npy_bytes(v) for k, v in _base_arrays().items()}
    members["notes.txt"] = b"hello"
    with pytest.raises(FormatError, match="member 'notes.txt' is not a field"):
        load_instance(_npz(tmp_path / "m.npz", members))
    members.pop("notes.txt")
    members["extra.npy"] = _npy_bytes(np.array(1.0))
    with pytest.raises(FormatError, match="unknown field\\(s\\) 'extra'"):
        load_instance(_npz(tmp_path / "n.npz", members))


@pytest.mark.parametrize("content,msg", [
    (b"", "is empty"),
    (b"\x80\x04\x95\x00", "is a Python pickle; refused"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"PK\x07\x08xxxx", "damaged zip archive"),
    (b"   ", "found empty"),
])
def test_other_content(tmp_path, content, msg):
    p = tmp_path / "f.npz"
    p.write_bytes(content)
    with pytest.raises(FormatError, match=msg):
        load_instance(p)


def test_bare_npy_and_pickled_npy(tmp_path):
    p = tmp_path / "a.npy"
    np.save(p, np.array(K2))
    with pytest.raises(FormatError, match="bare .npy array"):
        load_instance(p)
    q = tmp_path / "obj.npy"
    np.save(q, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(FormatError, match="bare .npy array"):
        load_solution(q)


def test_paths(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        load_instance(tmp_path / "missing.npz")
    with pytest.raises(FormatError, match="is a directory"):
        load_instance(tmp_path)


# ---------------------------------------------------------------------------------------------
# writer
# ---------------------------------------------------------------------------------------------
def test_writer_round_trip_and_determinism(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 2))
    K = kernel_from_X(X, "gaussian", sigma=0.7)
    y = np.array([1.0, -1, 1, -1, 1])
    for ext in ("npz", "json"):
        a, b = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        for p in (a, b):
            save_instance(p, task="svm", K=K, y=y, C=0.3, eta=1e-3, tau=0.01)
        assert a.read_bytes() == b.read_bytes()  # fixed timestamps: regeneration is byte-exact
        inst = load_instance(a)
        assert np.array_equal(inst["K"], 0.5 * (K + K.T)) and np.array_equal(inst["y"], y)
        assert (inst["C"], inst["eta"], inst["tau"]) == (0.3, 1e-3, 0.01)
        s = tmp_path / f"s.{ext}"
        alpha = rng.uniform(size=5)
        save_solution(s, task="svm", alpha=alpha, bias=-0.1 / 3, F=np.eye(5) / 3)
        sol = load_solution(s, 5)
        assert np.array_equal(sol["alpha"], alpha) and sol["bias"] == -0.1 / 3
        assert np.array_equal(sol["F"], np.eye(5) / 3)
    with pytest.raises(ValueError, match="exactly one of K or X"):
        save_instance(tmp_path / "x.npz", task="svm", K=K, X=X, y=y, C=1.0, eta=1.0, tau=0.0)


@pytest.mark.parametrize("kernel, params, value", [
    ("gaussian", dict(sigma=0.7), 1.0),
    ("linear", {}, 1.0 + 4.0 + 9.0),
    ("polynomial", dict(gamma=0.5, degree=2, coef0=1.0), (0.5 * 14.0 + 1.0) ** 2),
])
def test_kernel_of_a_single_point_is_one_by_one(kernel, params, value):
    """n = 1 (no pairwise distances): ``K = [[k(x, x)]]``, whatever the number of features."""
    K = kernel_from_X(np.array([[1.0, 2.0, 3.0]]), kernel, **params)
    assert K.shape == (1, 1)
    assert K[0, 0] == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("kernel, params", [
    ("linear", {}), ("polynomial", dict(gamma=0.3, degree=3, coef0=0.5)),
    ("gaussian", dict(sigma=0.9)),
])
def test_kernel_of_float32_data_is_computed_in_double_precision(kernel, params):
    """``X`` stored as float32 gives the float64 kernel of the same (exactly widened) values."""
    rng = np.random.default_rng(3)
    X32 = rng.normal(size=(9, 4)).astype(np.float32)
    K32 = kernel_from_X(X32, kernel, **params)
    K64 = kernel_from_X(X32.astype(np.float64), kernel, **params)
    assert K32.dtype == np.float64
    np.testing.assert_array_equal(K32, K64)


def test_symmetry_tolerance_of_a_float32_kernel_is_ten_epsilons():
    """validity.md rule 4: ``max|K - K'| <= max(1e-10, 10 u) max|K|`` with ``u`` the float32
    epsilon for a float32 kernel: 0.95 times the limit passes, 1.05 times fails."""
    u = float(np.finfo(np.float32).eps)
    limit = 10.0 * u
    for factor, ok in ((0.95, True), (1.05, False)):
        K = np.eye(3)
        K[0, 1] = factor * limit
        if ok:
            out = validate_kernel(K, u)
            assert out[0, 1] == out[1, 0] == pytest.approx(0.5 * factor * limit)
        else:
            with pytest.raises(ValueError, match="not symmetric"):
                validate_kernel(K, u)


def test_overflowing_polynomial_kernel_is_a_value_error_not_a_warning():
    """The overflow is refused by its own check (a ValueError), silently computed: with warnings
    turned into errors the call must still raise the ValueError, not a RuntimeWarning."""
    X = np.array([[1e100, 0.0], [0.0, 1e100]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="overflows double precision"):
            kernel_from_X(X, "polynomial", gamma=1.0, degree=4, coef0=1.0)


def test_writer_chooses_json_or_npz_by_the_extension(tmp_path):
    """save_* writes JSON text for ``.json`` and a (deterministic) zip otherwise."""
    alpha = np.array([0.25, 0.5])
    js, npz = tmp_path / "s.json", tmp_path / "s.npz"
    save_solution(js, task="svm", alpha=alpha, bias=0.5)
    save_solution(npz, task="svm", alpha=alpha, bias=0.5)
    assert json.loads(js.read_text(encoding="utf-8"))["alpha"] == [0.25, 0.5]
    assert zipfile.is_zipfile(npz) and not zipfile.is_zipfile(js)
    for path in (js, npz):
        sol = load_solution(path, n=2)
        np.testing.assert_array_equal(sol["alpha"], alpha)
        assert sol["bias"] == 0.5


def test_writer_refuses_nan_in_json(tmp_path):
    """JSON has no NaN: writing one is a ValueError (the reader would refuse the file)."""
    with pytest.raises(ValueError):
        save_solution(tmp_path / "nan.json", task="svm", alpha=np.array([0.5, np.nan]))


@pytest.mark.parametrize("suffix", [".json", ".npz"])
@pytest.mark.parametrize("kernel, params", [
    ("gaussian", dict(sigma=0.4)),
    ("gaussian", dict(gamma=2.5)),
    ("linear", {}),
    ("polynomial", dict(gamma=0.5, degree=3, coef0=1.0)),
])
def test_instance_from_X_round_trip(tmp_path, suffix, kernel, params):
    """An instance given by ``X``, a kernel and exactly its parameters loads back with the
    kernel computed from them (each parameter written, none invented)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (6, 2))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    path = tmp_path / f"inst{suffix}"
    save_instance(path, task="svm", X=X, kernel=kernel, y=y, C=1.0, eta=2.0, tau=0.1, **params)
    inst = load_instance(path)
    np.testing.assert_allclose(inst["K"], kernel_from_X(X, kernel, **params), rtol=1e-15,
                               atol=0)
    if suffix == ".json":
        stored = json.loads(path.read_text())
        assert {k for k in ("sigma", "gamma", "degree", "coef0") if k in stored} == set(params)


def _json_instance(tmp_path, name, **fields):
    base = {"format": "dank-instance", "version": 1, "task": "svm", "y": [1, -1], "C": 1,
            "eta": 1, "tau": 0}
    base.update(fields)
    path = tmp_path / name
    path.write_text(json.dumps(base))
    return path


def test_integer_kernel_of_any_width_is_accepted(tmp_path):
    """An int32 (or int16) ``K`` is a valid array (dtype kind ``i``): integers use the float64
    epsilon (validity.md), there is no float epsilon of an integer dtype to look up."""
    for dt in (np.int16, np.int32, np.int64):
        path = tmp_path / f"k_{np.dtype(dt).name}.npz"
        save_instance(path, task="svm", K=np.array([[2, 1], [1, 2]], dtype=dt), y=[1, -1],
                      C=1.0, eta=1.0, tau=0.0)
        np.testing.assert_array_equal(load_instance(path)["K"], [[2.0, 1.0], [1.0, 2.0]])


def test_polynomial_degree_one_is_valid_and_gamma_must_be_positive(tmp_path):
    """degree is an integer >= 1 (1 included); gamma a number > 0 (0 refused, naming it)."""
    X = [[0.0, 1.0], [1.0, 0.5]]
    ok = _json_instance(tmp_path, "d1.json", X=X, kernel="polynomial", gamma=0.5, degree=1,
                        coef0=1.0)
    inst = load_instance(ok)
    np.testing.assert_allclose(inst["K"], kernel_from_X(X, "polynomial", gamma=0.5, degree=1,
                                                        coef0=1.0), rtol=1e-15)
    assert inst["kernel"] == dict(source="X", kernel="polynomial", gamma=0.5, degree=1,
                                  coef0=1.0)
    bad = _json_instance(tmp_path, "g0.json", X=X, kernel="polynomial", gamma=0.0, degree=2,
                         coef0=1.0)
    with pytest.raises(ValueError, match="field 'gamma' must be a finite number > 0"):
        load_instance(bad)


def test_kernel_parameter_the_kernel_does_not_use_is_refused(tmp_path):
    X = [[0.0, 1.0], [1.0, 0.5]]
    with pytest.raises(ValueError, match="'gamma'.* not used by the"):
        load_instance(_json_instance(tmp_path, "lin.json", X=X, kernel="linear", gamma=1.0))


def test_kernel_fields_in_a_solution_are_refused(tmp_path):
    """``sigma`` (a kernel field) is allowed in an instance only: a solution carrying it is an
    unknown field."""
    path = tmp_path / "sol.json"
    path.write_text(json.dumps({"format": "dank-solution", "version": 1, "task": "svm",
                                "alpha": [0.5, 0.5], "sigma": 1.0}))
    with pytest.raises(ValueError, match="sigma"):
        load_solution(path, n=2)


def test_eta_zero_is_refused_as_a_field(tmp_path):
    with pytest.raises(ValueError, match="field 'eta' must be a finite number > 0"):
        load_instance(_json_instance(tmp_path, "eta0.json", K=[[1, 0], [0, 1]], eta=0))


def test_representable_range_of_the_inverse_scale_is_1e100():
    """``eta / (C^2 max|K|)`` must lie in [1e-100, 1e100]: 10^100.5 is outside."""
    from verification.formats import check_representable

    check_representable(1.0, 1e100, 1.0, 1)
    with pytest.raises(ValueError):
        check_representable(1.0, 10.0 ** 100.5, 1.0, 1)


def test_npz_member_in_a_subdirectory_is_refused(tmp_path):
    path = tmp_path / "sub.npz"
    save_solution(path, task="svm", alpha=np.array([0.5, 0.5]))
    with zipfile.ZipFile(path, "a") as zf:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.array([1.0, 2.0]))
        zf.writestr("extra/bias.npy", buf.getvalue())
    with pytest.raises(ValueError, match="extra/bias.npy"):
        load_solution(path, n=2)


def test_npy_version_2_members_are_read(tmp_path):
    """``.npy`` format 2.0 (4-byte header length) is as valid as 1.0."""

    path = tmp_path / "v2.npz"
    with zipfile.ZipFile(path, "w") as zf:
        for name, value in (("format", np.array("dank-solution")), ("version", np.array(1)),
                            ("task", np.array("svm")), ("alpha", np.array([0.25, 0.75]))):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, value, version=(2, 0))
            zf.writestr(f"{name}.npy", buf.getvalue())
    np.testing.assert_array_equal(load_solution(path, n=2)["alpha"], [0.25, 0.75])
