"""The certification table: how many final and CV DANK solves reached a certified gap.

Not a table of the paper: it shows, per (data set, DANK cell), that every reported number comes
from a certified solve (or says which did not), and lists the CV fits that raised.
"""

from __future__ import annotations

__all__ = ["certification", "render"]


def certification(records: dict) -> list[dict]:
    """Per (data set, method): final DANK solves certified, and the CV solves' tally."""
    rows: dict[tuple, dict] = {}
    for r in records.values():
        if r.get("status") != "ok" or not r["method"].startswith("dank"):
            continue
        row = rows.setdefault((r["dataset"], r["method"]), dict(
            dataset=r["dataset"], method=r["method"], final_solves=0, final_converged=0,
            final_max_rel_gap=0.0, final_statuses={}, cv_solves=0, cv_converged=0,
            cv_max_rel_gap=0.0, cv_failed_fits=0, cv_failures=[]))
        fits = list(r["taus"].values()) if "taus" in r else ([r] if "solves" in r else [])
        for f in fits:
            for s in f["solves"]:
                row["final_solves"] += 1
                row["final_converged"] += s["status"] == "converged"
                row["final_statuses"][s["status"]] = row["final_statuses"].get(s["status"], 0) + 1
                row["final_max_rel_gap"] = max(row["final_max_rel_gap"], s["rel_gap"])
        cvc = r.get("cv_certificates")
        if cvc:
            row["cv_solves"] += cvc["n_solves"]
            row["cv_converged"] += cvc["n_converged"]
            row["cv_max_rel_gap"] = max(row["cv_max_rel_gap"], cvc["max_rel_gap"])
            row["cv_failed_fits"] += cvc.get("n_failed_fits", 0)
            row["cv_failures"] += [dict(f, split=r["split"]) for f in cvc.get("failures", [])]
    return [rows[k] for k in sorted(rows)]


def render(res: dict) -> list[str]:
    """The report's certification section, with the CV fits that raised."""
    L = ["## Certification of the DANK solves", "",
         "Final fits: the solves whose accuracy is reported (every tau, every one-vs-one "
         "problem); CV fits: the solves inside the 5-fold CV.", "",
         "| set | cell | final solves converged | max final rel. gap | CV solves converged | "
         "max CV rel. gap | CV fits that raised |", "|---|---|---|---|---|---|---|"]
    failed = []
    for r in res["tables"]["certification"]:
        if not r["final_solves"] and not r["cv_solves"]:
            continue  # a skipped cell (DANK-SVR's own CV on a large set)
        cv = (f"{r['cv_converged']}/{r['cv_solves']}" if r["cv_solves"] else "-")
        cvg = f"{r['cv_max_rel_gap']:.1e}" if r["cv_solves"] else "-"
        L.append(f"| {r['dataset']} | {r['method']} | {r['final_converged']}/{r['final_solves']}"
                 f" | {r['final_max_rel_gap']:.1e} | {cv} | {cvg} | "
                 f"{r.get('cv_failed_fits', 0)} |")
        failed += [(r["dataset"], r["method"], f) for f in r.get("cv_failures", [])]
    L.append("")
    if failed:
        L += ["CV fits that raised (their (C, sigma) candidate was excluded from that split's "
              "selection; the error is dank_fast's, see the notes):", ""]
        L += [f"- {d} {m} split {f['split']}, fold {f['fold']}, C = {f['C']:g}, sigma = "
              f"{f['sigma']:g}: {f['error'][:160]}" for d, m, f in failed]
        L.append("")
    return L
