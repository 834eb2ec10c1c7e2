"""Oracle file formats (verification/formats/): contracts that mutation testing found unchecked.

A kernel of one point, a kernel of float32 data (computed in double precision), the symmetry
tolerance of a float32 kernel (``max(1e-10, 10 u)``), overflow refused as a ``ValueError``
and not a ``RuntimeWarning``, the writer's file type chosen by the extension, JSON without
NaN, instances given by ``X`` and every kernel parameter surviving a round trip
(benchmarks/MUTATION.md).
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

from verification.formats import (
    kernel_from_X,
    load_instance,
    load_solution,
    save_instance,
    save_solution,
    validate_kernel,
)


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
    epsilon for a float32 kernel: 0.95x the limit passes, 1.05x fails."""
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
