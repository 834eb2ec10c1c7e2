"""What a file written by another language gets from the reader: a 2-D array where a vector
belongs is named as such (not as a bad first entry), and a non-finite token (Octave's ``Inf``,
``NaN``, ``NA``; C's ``inf``; ``Infinity``) is named with its line and column."""

from __future__ import annotations

import json

import numpy as np
import pytest

from verification.cli import main
from verification.formats import FormatError, load_instance, load_solution, save_instance

HEAD = '{"format": "dank-solution", "version": 1, "task": "svm",\n'


@pytest.mark.parametrize("alpha, got", [
    ([[0.5, 0.5]], "got a list of lists (a 2-D array of shape (1, 2))"),
    ([[0.5], [0.5]], "got a list of lists (a 2-D array of shape (2, 1))"),
    ([[0.5], [0.5, 1.0]], "got a list of lists"),
    ([0.5, [0.5]], "got a nested list (entry [1] is a list)"),
])
def test_a_json_matrix_for_alpha_is_named_a_2d_array(tmp_path, alpha, got):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"format": "dank-solution", "version": 1, "task": "svm",
                             "alpha": alpha}))
    with pytest.raises(FormatError) as e:
        load_solution(p, n=2)
    assert str(e.value) == f"{p}: field 'alpha' must be a 1-D array of n numbers, {got}"


@pytest.mark.parametrize("alpha, got", [
    (np.ones((1, 2)), "got a float64 array of shape (1, 2)"),
    (np.float64(0.5), "got a 0-d float64"),
])
def test_an_npz_matrix_for_alpha_is_named_a_2d_array(tmp_path, alpha, got):
    p = tmp_path / "s.npz"
    np.savez(p, format=np.array("dank-solution"), version=np.array(1), task=np.array("svm"),
             alpha=alpha)
    with pytest.raises(FormatError) as e:
        load_solution(p)
    assert str(e.value).startswith(f"{p}: field 'alpha' must be a 1-D array of n numbers, {got}")


def test_2d_labels_are_named_a_2d_integer_array(tmp_path):
    p = tmp_path / "i.npz"
    np.savez(p, format=np.array("dank-instance"), version=np.array(1),
             task=np.array("decomposed"), K=np.eye(2), y=np.array([1.0, -1.0]),
             C=np.array(1.0), eta=np.array(1.0), labels=np.zeros((2, 1), dtype=np.int64))
    with pytest.raises(FormatError, match="field 'labels' must be a 1-D array of n integers, "
                       r"got a int64 array of shape \(2, 1\)"):
        load_instance(p)


NONFINITE = ["Inf", "-Inf", "+Inf", "inf", "Infinity", "-Infinity", "NaN", "-NaN", "nan", "NA"]


@pytest.mark.parametrize("token", NONFINITE)
def test_a_nonfinite_token_is_named_with_its_line_and_column(tmp_path, token):
    p = tmp_path / "s.json"
    # the same token inside a string earlier in the file is not the culprit
    p.write_text(HEAD + f' "meta": "solver said {token}",\n "alpha": [0.5, {token}]}}')
    with pytest.raises(FormatError) as e:
        load_solution(p)
    assert str(e.value) == (f"{p}: non-standard JSON constant {token} at line 3, column 17: "
                            "JSON has no such number (it has no infinity and no NaN; every "
                            "number in these files must be finite)")


def test_other_bad_json_still_says_where_the_decoder_stopped(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(HEAD + ' "alpha": [0.5, Inferno]}')
    with pytest.raises(FormatError, match=r"not valid JSON \(Expecting value: line 2 column 17"):
        load_solution(p)


def test_certify_cli_names_octaves_inf_in_one_line(tmp_path, capsys):
    inst = tmp_path / "i.json"
    save_instance(inst, task="svm", K=np.eye(2), y=[1.0, -1.0], C=1.0, eta=1.0, tau=0.0)
    sol = tmp_path / "s.json"
    sol.write_text(HEAD + ' "alpha": [Inf, 0.5]}')
    code = main(["certify", str(inst), str(sol), "--no-reference"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "non-standard JSON constant Inf at line 2, column 12: JSON has no such number" in err
