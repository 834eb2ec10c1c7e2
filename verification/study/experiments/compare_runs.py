"""The verdicts of two ``dank-reproduce`` runs side by side: which claims changed, and how.

    python -m verification.study.experiments.compare_runs OLD/results.json NEW/results.json [--all]

Prints a Markdown section: the protocols' differences (grid, splits, sets), the totals of each
run, then one row per claim whose verdict changed (``--all``: every claim), with both runs'
numbers (the ``ours`` text of each verdict). Claims are matched by their ``id``; a claim found
in one run only is listed as such. Exit status 0, or 2 for an unreadable or foreign file.

It reads nothing but the two ``results.json`` files (never the cell caches), so it works on any
two committed runs, e.g. ``reproduction/full-6x6`` against ``reproduction/full``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

__all__ = ["compare", "load_run", "main", "render"]

FORMAT = "dank-reproduce-results"
VERDICTS = ("REPRODUCED", "PARTLY", "NOT REPRODUCED", "NOT RUN")


def load_run(path: str) -> dict:
    """A ``dank-reproduce`` results.json (``ValueError`` naming the file if it is not one)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read a JSON document ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("verdicts"), list) \
            or not isinstance(doc.get("protocol"), dict):
        raise ValueError(f"{path}: not a dank-reproduce results.json (no 'verdicts' list or "
                         "'protocol' object)")
    # files written before 2026-11-25 have neither field (docs/FORMATS.md)
    if doc.get("format", FORMAT) != FORMAT or doc.get("version", 1) != 1:
        raise ValueError(f"{path}: unsupported format {doc.get('format')!r} version "
                         f"{doc.get('version')!r} (this reader reads {FORMAT!r} version 1)")
    return doc


def _grid(proto: dict) -> str:
    s, c = proto.get("sigma_grid", []), proto.get("C_grid", [])
    return f"{len(s)} x {len(c)}"


def compare(old: dict, new: dict) -> dict:
    """Claims matched by id.

    Returns
    -------
    dict
        ``changed`` and ``same`` (lists of ``(id, old verdict dict, new verdict dict)``),
        ``only_old`` and ``only_new`` (verdict dicts), ``totals`` (``{"old": Counter,
        "new": Counter}``) and ``transitions`` (``Counter`` of ``(old verdict, new verdict)``
        over the changed claims).
    """
    vo = {v["id"]: v for v in old["verdicts"]}
    vn = {v["id"]: v for v in new["verdicts"]}
    changed, same = [], []
    for k in vo:
        if k in vn:
            (changed if vo[k]["verdict"] != vn[k]["verdict"] else same).append((k, vo[k], vn[k]))
    return dict(
        changed=changed, same=same,
        only_old=[vo[k] for k in vo if k not in vn], only_new=[vn[k] for k in vn if k not in vo],
        totals={"old": Counter(v["verdict"] for v in vo.values()),
                "new": Counter(v["verdict"] for v in vn.values())},
        transitions=Counter((a["verdict"], b["verdict"]) for _, a, b in changed))


def _totals(c: Counter) -> str:
    return ", ".join(f"{k} {c[k]}" for k in VERDICTS if c[k]) or "no verdicts"


def _cell(text: str) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def render(old: dict, new: dict, *, names: tuple[str, str] = ("old", "new"),
           show_all: bool = False) -> str:
    """The comparison as Markdown (see the module docstring)."""
    cmp = compare(old, new)
    a, b = names
    po, pn = old["protocol"], new["protocol"]
    L = [f"## Verdicts: {a} against {b}", "",
         f"- {a}: `{old.get('command', '?')}` ({_grid(po)} grid, {po.get('n_splits')} splits)",
         f"- {b}: `{new.get('command', '?')}` ({_grid(pn)} grid, {pn.get('n_splits')} splits)",
         f"- totals {a}: {_totals(cmp['totals']['old'])}",
         f"- totals {b}: {_totals(cmp['totals']['new'])}",
         f"- {len(cmp['changed'])} of {len(cmp['changed']) + len(cmp['same'])} common claims "
         "changed verdict" + (": " + ", ".join(
             f"{x} -> {y} {k}" for (x, y), k in sorted(cmp["transitions"].items()))
             if cmp["changed"] else ""), ""]
    rows = cmp["changed"] + (cmp["same"] if show_all else [])
    if rows:
        L += [f"| claim | paper | {a} | {b} |", "|---|---|---|---|"]
        for _, vo, vn in rows:
            L.append(f"| {_cell(vo['claim'])} | {_cell(vo['paper'])} | {_cell(vo['ours'])} "
                     f"**{vo['verdict']}** | {_cell(vn['ours'])} **{vn['verdict']}** |")
        L.append("")
    for label, vs in ((a, cmp["only_old"]), (b, cmp["only_new"])):
        if vs:
            L += [f"Only in {label}: " + "; ".join(f"{v['id']} ({v['verdict']})" for v in vs), ""]
    return "\n".join(L)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m verification.study.experiments.compare_runs",
        description="Compare the verdicts of two dank-reproduce runs (results.json files); "
                    "prints Markdown. Exit 0, or 2 for an unreadable file.")
    p.add_argument("old", help="results.json of the first run")
    p.add_argument("new", help="results.json of the second run")
    p.add_argument("--all", action="store_true", help="list unchanged claims too")
    p.add_argument("--names", default="old,new",
                   help="labels of the two runs, comma-separated (default 'old,new')")
    a = p.parse_args(argv)
    names = tuple(a.names.split(",", 1)) if "," in a.names else ("old", "new")
    try:
        old, new = load_run(a.old), load_run(a.new)
    except ValueError as exc:
        print(f"compare_runs: {exc}", file=sys.stderr)
        return 2
    print(render(old, new, names=names, show_all=a.all))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
