"""`dank-verify reproduce`: the report's ratio convention, and every failure path gives
exit code 2 with one line (never a traceback, never unpickling, no huge allocation)."""

import io
import json
import math
import re
import zipfile

import numpy as np
import pytest

from verification.cli import main
from verification.study.claims import load_counterexample, reproduce, reproduce_report
from verification.study.claims._common import save_counterexample

PG_ARR = dict(K=np.full((2, 2), 10.0), y=np.array([-1.0, 1.0]), a1=np.zeros(2),
              a2=np.array([0.5, 0.5]))
PG_PAR = dict(C=1.0, eta=1.0, tau=0.0, scale=1.0)


@pytest.fixture
def pg_file(tmp_path):
    return save_counterexample(str(tmp_path), "PG", PG_ARR, PG_PAR)


@pytest.fixture
def l1_degenerate_file(tmp_path):
    arr = dict(K=np.eye(2), y=np.array([1.0, -1.0]), a=np.array([0.5, 0.5]))
    return save_counterexample(str(tmp_path), "L1", arr, dict(C=1.0, eta=1.0, tau=10.0),
                               kind="degenerate")


def _run(capsys, *args):
    code = main(["reproduce", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_substantive_violation_reproduced(pg_file, capsys):
    code, out, err = _run(capsys, pg_file)
    assert code == 0 and err == ""
    assert "lhs/rhs = 1.04167" in out and "VIOLATED (substantive" in out   # 25/24
    r = reproduce_report(pg_file)
    assert r["kind"] == "violated" and r["ratio"] == pytest.approx(25 / 24, rel=1e-12)
    assert r["lhs"] == pytest.approx(6.25 * math.sqrt(2))


def test_degenerate_violation_has_no_ratio(l1_degenerate_file, capsys):
    """A degenerate violation prints "no ratio" (neither `ratio = -0` nor `inf`), as the report
    has none."""
    code, out, _ = _run(capsys, l1_degenerate_file)
    assert code == 0
    assert "rhs <= 0: no ratio" in out and "DEGENERATE" in out
    assert "-0" not in out.replace("-0.", "") and "inf" not in out and "ratio =" not in out
    assert reproduce_report(l1_degenerate_file)["ratio"] is None
    c, lhs, rhs, still = reproduce(l1_degenerate_file)
    assert c == "L1" and still and lhs == 0.0 and rhs < 0


def test_claim_that_holds_exits_1(tmp_path, capsys):
    arr = dict(PG_ARR, K=np.full((2, 2), 0.1))  # kappa = 0.1: the bound holds here
    path = save_counterexample(str(tmp_path), "PG", arr, PG_PAR)
    code, out, _ = _run(capsys, path)
    assert code == 1 and "-> holds" in out


def _bad(capsys, path):
    code, out, err = _run(capsys, str(path))
    assert code == 2, (out, err)
    assert out == "" and err.count("\n") == 1
    assert err.startswith("dank-verify reproduce: bad input: ")
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("frac", [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_file(pg_file, tmp_path, capsys, frac):
    data = open(pg_file, "rb").read()
    p = tmp_path / "cut.npz"
    p.write_bytes(data[: int(frac * len(data))])
    _bad(capsys, p)


def test_corrupted_member(pg_file, tmp_path, capsys):
    data = bytearray(open(pg_file, "rb").read())
    i = data.find(b"\x93NUMPY") + 128  # the first array's data (after its 128-byte header)
    data[i:i + 8] = b"\x01" * 8
    p = tmp_path / "crc.npz"
    p.write_bytes(bytes(data))
    _bad(capsys, p)


def test_garbage_missing_and_directory(tmp_path, capsys):
    p = tmp_path / "x.npz"
    p.write_bytes(b"garbage")
    _bad(capsys, p)
    assert "no such file" in _bad(capsys, tmp_path / "absent.npz")
    _bad(capsys, tmp_path)


def _write_npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def _members(**over):
    base = dict(PG_ARR, claim=np.array("PG"), format_version=np.array(1),
                params_json=np.array(json.dumps(PG_PAR)))
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize("over,needle", [
    (dict(claim=None), "not a counterexample file"),
    (dict(claim=np.array("Q7")), "unknown claim"),
    (dict(format_version=np.array(2)), "format_version"),
    (dict(format_version=np.array(1.0)), "format_version"),
    (dict(params_json=np.array("{not json")), "not valid JSON"),
    (dict(params_json=np.array("[1, 2]")), "JSON object"),
    (dict(params_json=np.array(json.dumps(dict(PG_PAR, C="1.0")))), "real number"),
    (dict(params_json=np.array(json.dumps(dict(PG_PAR, C=True)))), "real number"),
    (dict(params_json=np.array(json.dumps(dict(PG_PAR, eta=-1.0)))), "> 0"),
    (dict(params_json=np.array(json.dumps({"C": 1.0, "eta": 1.0}))), "'tau' is missing"),
    (dict(params_json=np.array(json.dumps(dict(PG_PAR, C=1e-200)))), "representable"),
    (dict(a2=None), "missing ['a2']"),
    (dict(extra=np.zeros(2)), "unexpected ['extra']"),
    (dict(K=np.array([[1.0, 2.0], [0.0, 1.0]])), "not symmetric"),
    (dict(K=np.array([[1.0, 2.0], [2.0, 1.0]])), "not positive semidefinite"),
    (dict(K=np.full((2, 2), np.nan)), "NaN or inf"),
    (dict(K=np.ones((2, 3))), "square"),
    (dict(K=np.ones((2, 2), dtype=complex)), "real numeric"),
    (dict(y=np.array([1.0, 2.0])), "{-1, +1}"),
    (dict(y=np.array([1.0, 1.0])), "both classes"),
    (dict(y=np.array([1.0, -1.0, 1.0])), "length"),
    (dict(a2=np.array([0.5, 0.7])), "not feasible"),
    (dict(a2=np.array([1.5, 1.5])), "not feasible"),
])
def test_malformed_content(tmp_path, capsys, over, needle):
    p = _write_npz(tmp_path / "m.npz", **_members(**over))
    err = _bad(capsys, p)
    assert needle in err, err
    with pytest.raises((ValueError, TypeError), match=re.escape(needle)):
        load_counterexample(str(p))


def test_object_array_is_refused_without_unpickling(tmp_path, capsys):
    p = tmp_path / "obj.npz"
    np.savez(p, **_members(K=np.array([object(), object()], dtype=object)))
    assert "unpickled" in _bad(capsys, p)


def test_forged_huge_header_is_refused_before_allocating(tmp_path, capsys):
    """A member announcing a 200,000 x 200,000 array (298 GiB) with no data behind it."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, dict(descr="<f8", fortran_order=False, shape=(200000, 200000)))
    good = _members()
    p = tmp_path / "huge.npz"
    with zipfile.ZipFile(p, "w") as zf:
        for k, v in good.items():
            b = io.BytesIO()
            np.save(b, v)
            zf.writestr(f"{k}.npy", buf.getvalue() if k == "K" else b.getvalue())
    assert "shape (200000, 200000)" in _bad(capsys, p)


def test_nr_parameters_are_checked(tmp_path, capsys):
    arr = dict(K=np.eye(2), y=np.array([1.0, -1.0]))
    for bad_par, needle in [(dict(C=1.0, eta=1.0, tau=0.0, t=-1, sign=1.0), "'t'"),
                            (dict(C=1.0, eta=1.0, tau=0.0, t=3, sign=0.5), "'sign'"),
                            (dict(C=1.0, eta=1.0, tau=0.0, sign=1.0), "'t' is missing")]:
        path = save_counterexample(str(tmp_path), "NR", arr, bad_par)
        assert needle in _bad(capsys, path)
