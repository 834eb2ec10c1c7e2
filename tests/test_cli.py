"""Smoke runs of `dank-verify`."""

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from verification._argtypes import DOCS_URL
from verification.cli import main
from verification.schemas import validate
from verification.study.claims._common import STATUSES


def test_runner_small(tmp_path):
    """Cheap default-run smoke: two claim groups, report + results written."""
    from verification.study.runner import run_all

    res = run_all(out=str(tmp_path), seed=1, budget=1, groups=("L1", "HW"), make_figures=False,
                  crosscheck=False)
    assert [v["claim"] for v in res["verdicts"]] == ["L1", "HW"]
    assert "| L1 |" in (tmp_path / "report.md").read_text()
    validate(json.loads((tmp_path / "results.json").read_text()), "verify-results")


def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "dank-verify" in capsys.readouterr().out


@pytest.mark.slow
def test_budget1_smoke(tmp_path):
    """Full `--budget 1` run (~25 s on idle 2 cores, slower under load): marked slow."""
    out = tmp_path / "out"
    assert main(["--budget", "1", "--out", str(out), "--seed", "3"]) == 0
    res = json.loads((out / "results.json").read_text())
    validate(res, "verify-results")
    claims = {v["claim"] for v in res["verdicts"]}
    assert {"L1", "L2", "T1", "PG", "L3", "T2", "T3", "T4", "NR", "SD", "HW", "EMP"} <= claims
    assert all(v["status"] in STATUSES and v["status"] != "INCONCLUSIVE"
               for v in res["verdicts"])
    assert (out / "report.md").exists()
    for p in res["figures"].values():
        assert os.path.getsize(p) > 1000
    for v in res["verdicts"]:
        if v["status"] == "VIOLATED" and v["counterexample_path"] and v["claim"] != "EMP":
            assert main(["reproduce", v["counterexample_path"]]) == 0


def test_reproduce_bad_file(tmp_path):
    p = tmp_path / "x.npz"
    p.write_bytes(b"garbage")
    assert main(["reproduce", str(p)]) == 2


@pytest.mark.slow
def test_quick(tmp_path):
    assert main(["--quick", "--out", str(tmp_path / "q")]) == 0


# ---------------------------------------------------------------------------------------------
# certify / vectors: the exit-code contract (0 certified, 1 not, 2 bad input or failure)
# ---------------------------------------------------------------------------------------------
import json as _json  # noqa: E402
import shutil  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from verification.formats import kernel_from_X, save_instance, save_solution  # noqa: E402
from verification.golden import GOLDEN_DIR, load_manifest  # noqa: E402

P1_INST = os.path.join(GOLDEN_DIR, "p1_basic_instance.npz")
P1_SOL = os.path.join(GOLDEN_DIR, "p1_basic_solution.npz")
P2_SOL = os.path.join(GOLDEN_DIR, "p2_basic_solution.npz")
DOCS = Path(__file__).resolve().parent.parent / "docs"


def _exit2(capsys, argv, *needles):
    """Exit code 2, exactly one line on stderr naming the problem, nothing on stdout."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for s in needles:
        assert s in err, (s, err)
    return err


def test_certify_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["certify", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for s in ("INSTANCE", "SOLUTION", "--tol", "--reference", "--debug", "exit codes",
              "0  certified", "1  not certified", "2  bad input", "/FORMATS.html",
              "examples:", "dank-verify vectors --write vectors",
              "dank-verify certify vectors/p1_basic_instance.npz"):
        assert s in out, s


def _help(capsys, *argv):
    with pytest.raises(SystemExit) as e:
        main([*argv, "--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def _commands(text):
    """The ``dank-verify ...`` command lines of a help text's examples, as argument lists."""
    return [line.split("  ")[0].split()[1:] for line in
            (raw.strip() for raw in text.splitlines()) if line.startswith("dank-verify ")]


def test_certify_help_examples_run_for_an_installed_user(capsys, tmp_path, monkeypatch):
    """The examples use files the user makes with a command, not the repository's paths."""
    commands = _commands(_help(capsys, "certify"))
    assert [c[0] for c in commands] == ["vectors", "certify", "conformance"]
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert not any(a.startswith(("verification/", "docs/")) for a in argv), argv
        assert main(argv) == 0, argv
        capsys.readouterr()
    assert (tmp_path / "repro" / "p1_basic.json").exists()


def test_help_texts_agree_with_what_certify_accepts(capsys):
    """Every option of a ``dank-verify certify`` line in another help text or in the docs is
    one that ``certify --help`` lists."""
    listed = set(re.findall(r"--[a-z][a-z0-9-]*", _help(capsys, "certify")))
    texts = {"conformance --help": _help(capsys, "conformance"),
             "--help": _help(capsys), "vectors --help": _help(capsys, "vectors")}
    for path in sorted(DOCS.rglob("*.md")) + [DOCS.parent / "README.md"]:
        texts[str(path.relative_to(DOCS.parent))] = path.read_text()
    seen = 0
    for where, text in texts.items():
        for line in re.findall(r"dank-verify certify [^\n`]*", text):
            seen += 1
            unknown = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line)) - listed
            assert not unknown, (where, line, unknown)
    assert seen >= 3


@pytest.mark.parametrize("argv", [[], ["certify"], ["vectors"], ["conformance"],
                                  ["reproduce"]], ids=lambda a: " ".join(a) or "main")
def test_help_links_the_site_not_uninstalled_files(capsys, argv):
    """docs/*.md are not installed with the package: a help text links the site's pages."""
    text = _help(capsys, *argv)
    assert not re.search(r"docs/\S*\.md|\.md\b(?<!report\.md)", text), text
    for url in re.findall(r"https://\S+", text):
        assert url.startswith(DOCS_URL + "/"), url
        page = url.removeprefix(DOCS_URL + "/").rstrip(").,").removesuffix(".html")
        assert (DOCS / f"{page}.md").exists(), url


def test_docs_url_is_the_projects_documentation_url():
    meta = tomllib.loads((DOCS.parent / "pyproject.toml").read_text())
    assert DOCS_URL.startswith(meta["project"]["urls"]["Documentation"].rstrip("/") + "/")


def test_vectors_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["vectors", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for s in ("--dir", "--write", "--no-regenerate", "exit codes", "MANIFEST.json"):
        assert s in out, s


def test_certify_0_and_1(capsys, tmp_path):
    assert main(["certify", P1_INST, P1_SOL]) == 0
    out = capsys.readouterr().out
    assert out.startswith("verdict: CERTIFIED") and "check gap" in out
    # the help's example, with its tolerance
    assert main(["certify", P1_INST, P1_SOL, "--tol", "1e-9"]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    from verification.formats import load_solution

    sol = load_solution(P1_SOL)
    save_solution(bad, task="svm", alpha=sol["alpha"], bias=-sol["bias"])
    assert main(["certify", P1_INST, str(bad)]) == 1
    out, err = capsys.readouterr()
    assert "verdict: NOT CERTIFIED" in out and "reason: bias:" in out and err == ""


def _json_file(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else _json.dumps(obj))
    return str(p)


def test_certify_bad_files_exit_2(capsys, tmp_path):
    # at C = 0.5 both points sit at the bound (grad h = 0.34 > 0 there): a = (C, C) is optimal
    good = {"format": "dank-instance", "version": 1, "task": "svm", "K": [[2, 1], [1, 2]],
            "y": [1, -1], "C": 0.5, "eta": 1.0, "tau": 0.0}
    sol = {"format": "dank-solution", "version": 1, "task": "svm", "alpha": [0.5, 0.5]}
    S = _json_file(tmp_path, "s.json", sol)
    cases = {
        "C_string": (dict(good, C="1.0"), "field 'C' must be a number, got the string"),
        "C_bool": (dict(good, C=True), "got the boolean true"),
        "y_strings": (dict(good, y=["1", "-1"]), "must be one of the numbers"),
        "version_str": (dict(good, version="1"), "'version' must be an integer"),
        "version_1_7": (dict(good, version=1.7), "'version' must be an integer, got 1.7"),
        "K_and_X": (dict(good, X=[[0.0], [1.0]], kernel="linear"), "exactly one of field 'K'"),
        "empty_K": (dict(good, K=[], y=[]), "K is empty"),
        "sigma_tiny": ({k: v for k, v in good.items() if k != "K"} | {
            "X": [[0.0], [1.0]], "kernel": "gaussian", "sigma": 1e-170}, "sigma = 1e-170"),
        "unknown": (dict(good, extra=1), "unknown field(s) 'extra'"),
    }
    for name, (obj, msg) in cases.items():
        _exit2(capsys, ["certify", _json_file(tmp_path, f"{name}.json", obj), S], "bad input",
               msg)
    I = _json_file(tmp_path, "i.json", good)  # noqa: E741
    assert main(["certify", I, S]) == 0  # the control is certified
    capsys.readouterr()
    _exit2(capsys, ["certify", str(tmp_path / "missing.npz"), S], "no such file")
    # both missing: both named in the one line, the instance first
    _exit2(capsys, ["certify", str(tmp_path / "no_i.npz"), str(tmp_path / "no_s.npz")],
           f"bad input: {tmp_path / 'no_i.npz'}: no such file; {tmp_path / 'no_s.npz'}: "
           "no such file")
    _exit2(capsys, ["certify", I, _json_file(tmp_path, "w.json", dict(sol, alpha=[0.5]))],
           "'alpha' has 1 entries but the instance has n = 2")
    _exit2(capsys, ["certify", I, _json_file(tmp_path, "t.json", dict(sol, task="svr"))],
           "'alpha' not used by task 'svr'")
    svr_sol = {"format": "dank-solution", "version": 1, "task": "svr", "alpha_hat": [0, 0],
               "alpha_check": [0, 0]}
    _exit2(capsys, ["certify", I, _json_file(tmp_path, "r.json", svr_sol)],
           "solution for task 'svr' but the instance", "is task 'svm'")
    _exit2(capsys, ["certify", I, P2_SOL], "'alpha_hat' has 12 entries but the instance has n = 2")
    pk = tmp_path / "obj.npz"
    np.savez(pk, format="dank-solution", version=1, task="svm",
             alpha=np.array([{"x": 1}], dtype=object))
    _exit2(capsys, ["certify", I, str(pk)], "field 'alpha' is an object array")
    # a truncated member is reported as truncated, not as pickled data
    tr = tmp_path / "trunc.npz"
    import io
    import zipfile

    with zipfile.ZipFile(tr, "w") as zf:
        for k, v in dict(format=np.array("dank-solution"), version=np.array(1),
                         task=np.array("svm"), alpha=np.array([1.0, 1.0])).items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, v)
            zf.writestr(f"{k}.npy", buf.getvalue()[:-3] if k == "alpha" else buf.getvalue())
    _exit2(capsys, ["certify", I, str(tr)], "field 'alpha' is truncated")
    # valid JSON under other extensions is read as JSON
    for ext in ("txt", "JSON"):
        p = _json_file(tmp_path, f"s.{ext}", sol)
        assert main(["certify", I, p]) == 0
        assert "pickled" not in capsys.readouterr().err


@pytest.mark.parametrize("tol,ok", [("-1", False), ("nan", False), ("inf", False), ("0", False),
                                    ("abc", False), ("1e-300", True), ("0.5", True)])
def test_certify_tol_values(capsys, tol, ok):
    if ok:
        assert main(["certify", P1_INST, P1_SOL, "--tol", tol]) in (0, 1)
        capsys.readouterr()
    else:
        _exit2(capsys, ["certify", P1_INST, P1_SOL, "--tol", tol], "bad arguments",
               "argument --tol")


def test_certify_bad_arguments(capsys):
    _exit2(capsys, ["certify", P1_INST], "bad arguments", "required")
    _exit2(capsys, ["certify", P1_INST, P1_SOL, "--frobnicate"], "unrecognized arguments")


@pytest.mark.parametrize("exc", [MemoryError(), ZeroDivisionError("float division by zero"),
                                 np.linalg.LinAlgError("Eigenvalues did not converge")])
def test_certify_crash_is_exit_2(capsys, monkeypatch, exc):
    import verification.oracle as oracle

    def boom(*a, **k):
        raise exc

    monkeypatch.setattr(oracle, "certify", boom)
    _exit2(capsys, ["certify", P1_INST, P1_SOL], "cannot evaluate", type(exc).__name__)
    with pytest.raises(type(exc)):
        main(["certify", P1_INST, P1_SOL, "--debug"])


def test_reader_crash_is_exit_2(capsys, monkeypatch):
    import verification.formats as formats

    def boom(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(formats, "load_instance", boom)
    _exit2(capsys, ["certify", P1_INST, P1_SOL], "cannot read input: MemoryError")


def test_dank_ref_refusal_is_exit_2(capsys, monkeypatch):
    import dank_ref.certificate as rc

    def refuse(*a, **k):
        raise ValueError("K is not positive semidefinite")

    monkeypatch.setattr(rc, "svm_certificate", refuse)
    _exit2(capsys, ["certify", P1_INST, P1_SOL], "cannot evaluate: EvaluationError: dank_ref "
           "cannot certify this instance: K is not positive semidefinite")


def test_zero_kernel_is_certified(capsys, tmp_path):
    """K = 0: F o K = 0, so a = C on both classes (balanced) is optimal with gap exactly 0."""
    inst, sol = tmp_path / "i.npz", tmp_path / "s.npz"
    save_instance(inst, task="svm", K=np.zeros((4, 4)), y=[1.0, -1, 1, -1], C=2.0, eta=1.0,
                  tau=0.01)
    save_solution(sol, task="svm", alpha=np.full(4, 2.0), bias=0.0)
    assert main(["certify", str(inst), str(sol)]) == 0
    save_solution(sol, task="svm", alpha=np.full(4, 1.0), bias=0.0)
    assert main(["certify", str(inst), str(sol)]) == 1


def test_float32_kernel_is_certified(capsys, tmp_path):
    import dank_fast

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (40, 2))
    K = kernel_from_X(X, "gaussian", sigma=2.0).astype(np.float32)
    assert np.linalg.eigvalsh(K.astype(float))[0] < -1e-7
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = dank_fast.solve_svm(K.astype(float), y, C=1.0, eta=1.0, tau=0.01, method="newton",
                                tol=1e-10).alpha
    inst, sol = tmp_path / "i.npz", tmp_path / "s.npz"
    save_instance(inst, task="svm", K=K, y=y, C=1.0, eta=1.0, tau=0.01)
    save_solution(sol, task="svm", alpha=a)
    assert main(["certify", str(inst), str(sol)]) == 0


def test_main_reports_other_subcommand_crashes_in_one_line(capsys, monkeypatch):
    import verification.cli as cli

    def boom(argv):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(cli, "_reproduce", boom)
    _exit2(capsys, ["reproduce", "x.npz"], "dank-verify reproduce: error: ZeroDivisionError")
    with pytest.raises(ZeroDivisionError):
        main(["reproduce", "x.npz", "--debug"])


def test_reproduce_truncated_counterexample(capsys, tmp_path):
    from verification.study.claims._common import save_counterexample

    p = save_counterexample(str(tmp_path), "L1", {"K": np.eye(3), "a": np.ones(3)}, {"n": 3})
    data = open(p, "rb").read()
    q = tmp_path / "cut.npz"
    q.write_bytes(data[: len(data) // 2])
    assert main(["reproduce", str(q)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def _subset(tmp_path, names):
    """A golden directory holding only ``names`` (files copied, manifest filtered)."""
    d = tmp_path / "golden"
    d.mkdir()
    man = load_manifest()
    man["vectors"] = {k: v for k, v in man["vectors"].items() if k in names}
    for e in man["vectors"].values():
        for f in (e["instance"], e["solution"]):
            shutil.copy(os.path.join(GOLDEN_DIR, f), d / f)
    (d / "MANIFEST.json").write_text(_json.dumps(man))
    return d


def test_vectors_exit_codes(capsys, tmp_path):
    d = _subset(tmp_path, ["p1_basic", "p2_json", "p3_two_clusters"])
    assert main(["vectors", "--dir", str(d), "--no-regenerate"]) == 0
    out = capsys.readouterr().out
    assert out.count(" ok") == 3
    # a tampered solution: checksum mismatch and (bias) not certified -> 1, one line per vector
    from verification.formats import load_solution

    sol = load_solution(d / "p1_basic_solution.npz")
    save_solution(d / "p1_basic_solution.npz", task="svm", alpha=sol["alpha"], F=sol["F"],
                  bias=sol["bias"] + 0.5)
    assert main(["vectors", "--dir", str(d), "--no-regenerate"]) == 1
    out = capsys.readouterr().out
    line = [x for x in out.splitlines() if x.startswith("p1_basic")][0]
    assert "checksum MISMATCH" in line and "bias:" in line
    _exit2(capsys, ["vectors", "--dir", str(tmp_path / "nowhere")], "bad input",
           "no such directory")
    (d / "MANIFEST.json").write_text("{")
    _exit2(capsys, ["vectors", "--dir", str(d)], "bad input", "unreadable manifest")
    _exit2(capsys, ["vectors", "--dir", str(d), "--write", str(d)], "bad arguments")


def test_vectors_write_then_check(capsys, tmp_path, monkeypatch):
    """--write regenerates (here a subset of the specs) and the result checks clean."""
    import verification.golden as golden

    full = golden.specs
    monkeypatch.setattr(golden, "specs", lambda: [s for s in full() if s[0] in
                                                   ("p1_n2", "p2_n2", "p3_n2")])
    d = tmp_path / "new"
    assert main(["vectors", "--write", str(d)]) == 0
    assert "wrote 3 vectors" in capsys.readouterr().out
    assert main(["vectors", "--dir", str(d)]) == 0
    assert capsys.readouterr().out.count(" ok") == 3


def test_default_out_dir_is_ignored_by_git():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lines = open(os.path.join(root, ".gitignore")).read().split()
    assert "/dank-verify-out/" in lines


@pytest.mark.parametrize("args, msg", [(["--seed", "abc"], "invalid int value"),
                                       (["--quick", "--full"], "not allowed with")])
def test_top_level_refusal_is_one_line(capsys, args, msg):
    """The main job's own options: exit 2, one line naming the argument, no usage block."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    assert err.startswith("dank-verify: error:") and err.count("\n") == 1 and msg in err
