"""The verdict table of docs/user_guide/claims.md is generated from the committed dank-verify
run."""

from __future__ import annotations

import json

import pytest
from _scripts import ROOT, load_script

# docs/scripts/readme_table.py is repository tooling, not an installed module
readme_table = load_script("docs/scripts/readme_table.py")


def test_readme_table_is_the_committed_runs():
    results = ROOT / readme_table.DEFAULT_RESULTS
    text = (ROOT / "docs" / "user_guide" / "claims.md").read_text()
    block = text[text.index(readme_table.START): text.index(readme_table.END)
                 + len(readme_table.END)]
    expected = readme_table.render(json.loads(results.read_text()),
                                   readme_table.DEFAULT_RESULTS.as_posix())
    assert block == expected, \
        "regenerate: python docs/scripts/readme_table.py --readme docs/user_guide/claims.md"


def test_render_and_update_round_trip(tmp_path):
    res = {"seed": 3, "budget": 1, "summary": {"counts": {"HOLDS": 1, "VIOLATED": 0}},
           "verdicts": [{"claim": "HW", "name": "Section 2.2.2 [ana]: a | b", "status": "HOLDS",
                         "headline": "worst lhs/rhs = 0.5"}]}
    (tmp_path / "r.json").write_text(json.dumps(res))
    readme = tmp_path / "README.md"
    readme.write_text(f"top\n{readme_table.START}\nold\n{readme_table.END}\nbottom\n")
    assert readme_table.update(readme, tmp_path / "r.json")
    out = readme.read_text()
    assert out.startswith("top\n") and out.endswith("\nbottom\n") and "old" not in out
    assert "| HW | Section 2.2.2 [ana]: a \\| b | HOLDS | worst lhs/rhs = 0.5 |" in out
    assert "1 HOLDS)" in out and "0 VIOLATED" not in out
    assert not readme_table.update(readme, tmp_path / "r.json")  # idempotent
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="no <!-- dank-verify:start -->"):
        readme_table.update(readme, tmp_path / "r.json")


def test_cli_names_a_bad_results_file(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text("{")
    assert readme_table.main([str(bad), "--readme", str(tmp_path / "README.md")]) == 2
    assert "r.json: not a JSON results file" in capsys.readouterr().err
    bad.write_text('{"seed": 1}')
    (tmp_path / "README.md").write_text(f"{readme_table.START}\n{readme_table.END}\n")
    assert readme_table.main([str(bad), "--readme", str(tmp_path / "README.md")]) == 2
    assert "not a dank-verify results file" in capsys.readouterr().err


def test_cli_refuses_an_unknown_argument_in_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        readme_table.main(["--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --bogus" in err
