"""Run mutmut on one core module with that module's fast test subset (benchmarks/MUTATION.md).

mutmut 3 reads its configuration from ``pyproject.toml`` in the current directory and keeps its
results in ``mutants/`` there. To give every module its own test subset without editing the
repository's ``pyproject.toml``, each module runs in its own directory ``WORKDIR/MODULE``: a copy
of the three packages, ``tests/`` and ``pyproject.toml`` whose ``[tool.mutmut]`` section is
rewritten to mutate only that module's file and to select only its tests (both taken from
``[tool.mutmut.dank_modules.MODULE]``). The sources are copied afresh on every call; ``mutants/``
(mutmut's cache) is kept, so an interrupted run resumes.

Usage::

    python benchmarks/mutation_run.py list                       # modules and mutant counts
    python benchmarks/mutation_run.py run projection --baseline  # every mutant, existing tests
    python benchmarks/mutation_run.py run projection             # the same with the new tests
    python benchmarks/mutation_run.py run inner --sample 400     # a seeded uniform sample
    python benchmarks/mutation_run.py run inner --names NAME ... # re-test named mutants
    python benchmarks/mutation_run.py summary inner [--json F]   # counts and survivors
    python benchmarks/mutation_run.py show inner NAME            # the diff of one mutant
    python benchmarks/mutation_run.py table                      # MUTATION.md's table

``table`` reads ``benchmarks/results/mutation/``: ``MODULE_baseline.json`` (the summary
without the tests written for mutation testing), ``MODULE_after.json`` (the same mutants
after them: a summary of the same work directory, or, for a re-run in another directory
whose mutant names may differ, ``{"rerun": summary, "renamed": {old: new}, "base": summary}``:
the survivors and timeouts of ``base`` take their status in ``rerun``)
and ``equivalent.json`` (``{module: {mutant: reason}}``); the score is
``killed / (total - equivalent)``.

``run`` calls ``nice -n 10 mutmut run --max-children 1`` with single-threaded BLAS. With
``--sample N`` the sample is ``random.Random(seed).sample(sorted(all mutant names), N)``;
mutants that already have a result are not re-run unless named with ``--names``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dank_fast", "dank_ref", "verification")
# top-level files some tests read (tests/test_cli.py checks .gitignore); mutmut
# copies them into mutants/ through ``also_copy``
ALSO_COPY = (".gitignore",)
DEFAULT_WORKDIR = Path(os.environ.get("DANK_MUTATION_WORKDIR", "/tmp/dank-mutation"))
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests",
          34: "skipped", 35: "suspicious", 36: "timeout", 24: "timeout", -24: "timeout",
          152: "timeout", 255: "timeout", -11: "segfault", -9: "segfault", None: "not checked"}


def _config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["mutmut"]


def _toml_list(values) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def prepare(module: str, workdir: Path, baseline: bool = False) -> Path:
    """Copy sources and tests to ``workdir/module`` and write its ``pyproject.toml``.

    The test selection is always the full list of the module's table, so that it does not
    change between runs (mutmut discards every result when it does): a listed file that does
    not exist yet, and with ``baseline`` every ``tests/test_mutation_*.py``, is replaced by an
    empty placeholder (the score *before* the tests added for mutation testing).
    """
    cfg = _config()
    spec = cfg["dank_modules"][module]
    run = workdir / module
    run.mkdir(parents=True, exist_ok=True)
    for name in (*PACKAGES, "tests"):
        dst = run / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(ROOT / name, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ALSO_COPY:
        shutil.copy2(ROOT / name, run / name)
    text = (ROOT / "pyproject.toml").read_text()
    # drop the repository's [tool.mutmut] tables (they are the last tables of the file)
    text = text[: text.index("[tool.mutmut]")]
    tests = list(spec["tests"])
    timeout = float(spec.get("timeout_multiplier", cfg.get("timeout_multiplier", 15.0)))
    for t in tests:
        if not (ROOT / t).exists() or (baseline and Path(t).name.startswith("test_mutation_")):
            (run / t).write_text('"""Placeholder (benchmarks/mutation_run.py)."""\n')
    text += "\n".join([
        "[tool.mutmut]",
        f"source_paths = {_toml_list(cfg['source_paths'])}",
        f"only_mutate = {_toml_list([spec['file']])}",
        f"also_copy = {_toml_list(ALSO_COPY)}",
        f"do_not_mutate_patterns = {_toml_list(cfg.get('do_not_mutate_patterns', []))}",
        f"pytest_add_cli_args = {_toml_list(cfg.get('pytest_add_cli_args', []))}",
        f"timeout_multiplier = {timeout!r}",
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}",
        "",
    ])
    (run / "pyproject.toml").write_text(text)
    return run


def mutant_names(run: Path, module: str) -> list[str]:
    """All mutant names of the module, as ``mutmut run`` would generate them."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from mutmut.configuration import config\n"
        "from mutmut.mutation.file_mutation import mutate_file_contents\n"
        "from mutmut.utils.format_utils import get_mutant_name\n"
        "p = config().only_mutate[0]\n"
        "mf = mutate_file_contents(p, Path(p).read_text(), None, None)\n"
        "print(json.dumps(sorted(get_mutant_name(Path(p), m) for m in mf.mutant_names)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=run, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def results(run: Path, module: str) -> dict[str, int | None]:
    spec = _config()["dank_modules"][module]
    meta = run / "mutants" / (spec["file"] + ".meta")
    if not meta.exists():
        return {}
    with open(meta) as fh:
        return json.load(fh)["exit_code_by_key"]


def cmd_run(args) -> int:
    run = prepare(args.module, args.workdir, baseline=args.baseline)
    names: list[str] = []
    if args.names:
        names = list(args.names)
    elif args.sample:
        every = mutant_names(run, args.module)
        chosen = random.Random(args.seed).sample(every, min(args.sample, len(every)))
        done = {k for k, v in results(run, args.module).items() if v is not None}
        names = sorted(set(chosen) - done)
        (run / "sample.json").write_text(json.dumps(sorted(chosen)))
        print(f"sample of {len(chosen)} of {len(every)} mutants (seed {args.seed}); "
              f"{len(names)} still to run", flush=True)
        if not names:
            return 0
    # single-threaded BLAS; joblib without processes: mutmut reaps its workers with os.wait()
    # and stops on any other child process (loky workers started by tests/test_decomposed.py
    # in mutmut's own process exit after an idle timeout: KeyError in wait_for_result)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               JOBLIB_MULTIPROCESSING="0")
    cmd = ["nice", "-n", "10", shutil.which("mutmut") or "mutmut", "run",
           "--max-children", str(args.max_children), *names]
    return subprocess.call(cmd, cwd=run, env=env)


def summarise(module: str, workdir: Path) -> dict:
    run = workdir / module
    res = results(run, module)
    sample_file = run / "sample.json"
    if sample_file.exists():
        sample = set(json.loads(sample_file.read_text()))
        res = {k: v for k, v in res.items() if k in sample}
    counts = Counter(STATUS.get(v, "suspicious") for v in res.values())
    survivors = sorted(k for k, v in res.items() if STATUS.get(v) in ("survived", "no tests"))
    timeouts = sorted(k for k, v in res.items() if STATUS.get(v) == "timeout")
    by_function = Counter(re.sub(r"__mutmut_\d+$", "", k) for k in survivors)
    return dict(module=module, total=len(res), counts=dict(counts), survivors=survivors,
                survivors_by_function=dict(by_function.most_common()), timeouts=timeouts,
                statuses={k: STATUS.get(v, "suspicious") for k, v in res.items()},
                sampled=sample_file.exists())


def cmd_summary(args) -> int:
    s = summarise(args.module, args.workdir)
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1))
    print(f"{s['module']}: {s['total']} mutants{' (sample)' if s['sampled'] else ''}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())))
    for f, c in s["survivors_by_function"].items():
        print(f"  {c:4d}  {f}")
    return 0


def cmd_show(args) -> int:
    run = args.workdir / args.module
    return subprocess.call([shutil.which("mutmut") or "mutmut", "show", args.name], cwd=run)


RESULTS = ROOT / "benchmarks" / "results" / "mutation"


def _status_of(summary: dict) -> dict[str, str]:
    """Status of every survivor/timeout of a summary (the rest of its mutants were killed)."""
    out = {k: "survived" for k in summary["survivors"]}
    out.update({k: "timeout" for k in summary.get("timeouts", [])})
    return out


def after_counts(module: str) -> tuple[dict, dict, set]:
    """``(before counts, after counts, names still alive after)`` from the stored JSONs."""
    base = json.loads((RESULTS / f"{module}_baseline.json").read_text())
    path = RESULTS / f"{module}_after.json"
    if not path.exists():
        return base["counts"], base["counts"], set(base["survivors"])
    after = json.loads(path.read_text())
    if "rerun" not in after:
        return base["counts"], after["counts"], set(after["survivors"])
    prev, rerun, renamed = after["base"], after["rerun"], after["renamed"]
    checked = rerun["statuses"]
    counts = Counter(prev["counts"])
    alive = set()
    for was, names in (("survived", prev["survivors"]), ("timeout", prev.get("timeouts", []))):
        for old in names:
            new = renamed.get(old, old)
            st = checked.get(new, "not checked")
            if st in ("not checked", was) or (was == "survived" and st == "no tests"):
                if was == "survived":
                    alive.add(new)
                continue
            counts[was] -= 1
            counts[st if st in ("killed", "timeout") else "survived"] += 1
            if st in ("survived", "no tests"):
                alive.add(new)
    return base["counts"], dict(counts), alive


def cmd_table(args) -> int:
    equivalent = json.loads((RESULTS / "equivalent.json").read_text())
    print("| module | mutants | before: killed / survived / timeout | after: killed / survived"
          " / timeout | equivalent | score before | score after | after, timeouts as detected |")
    print("|---|---|---|---|---|---|---|---|")
    for module in _config()["dank_modules"]:
        if not (RESULTS / f"{module}_baseline.json").exists():
            continue
        before, after, alive = after_counts(module)
        total = sum(before.values())
        eq = len(set(equivalent.get(module, {})) & alive)

        def kst(c):
            return f"{c.get('killed', 0)} / {c.get('survived', 0) + c.get('no tests', 0)}" \
                   f" / {c.get('timeout', 0)}"

        print(f"| {module} | {total} | {kst(before)} | {kst(after)} | {eq} | "
              f"{before.get('killed', 0) / (total - eq):.1%} | "
              f"{after.get('killed', 0) / (total - eq):.1%} | "
              f"{(after.get('killed', 0) + after.get('timeout', 0)) / (total - eq):.1%} |")
    return 0


def cmd_list(args) -> int:
    for module in _config()["dank_modules"]:
        run = prepare(module, args.workdir)
        print(f"{module:12s} {len(mutant_names(run, module)):5d} mutants")
    return 0


def main(argv=None) -> int:
    ap = OneLineParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    sub.add_parser("table")
    r = sub.add_parser("run")
    r.add_argument("module")
    r.add_argument("--sample", type=int, default=0)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--names", nargs="+")
    r.add_argument("--max-children", type=int, default=1)
    r.add_argument("--baseline", action="store_true",
                   help="without the tests/test_mutation_*.py files (the score before)")
    s = sub.add_parser("summary")
    s.add_argument("module")
    s.add_argument("--json")
    sh = sub.add_parser("show")
    sh.add_argument("module")
    sh.add_argument("name")
    args = ap.parse_args(argv)
    return {"list": cmd_list, "run": cmd_run, "summary": cmd_summary, "show": cmd_show,
            "table": cmd_table}[
        args.cmd](args)


if __name__ == "__main__":
    raise SystemExit(main())
