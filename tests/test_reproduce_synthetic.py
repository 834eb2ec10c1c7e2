"""The paper's synthetic regression cases (:mod:`verification.study.synthetic`)."""

from __future__ import annotations

import numpy as np
import pytest

from verification.study.synthetic import make_cherkassky, make_step, step_function


def test_step_function_parameters():
    with pytest.raises(ValueError, match="a must be a finite number > 0"):
        step_function(np.zeros(3), a=0.0)  # tanh(a/2) = 0 in a denominator
    with pytest.raises(ValueError, match="w must be"):
        step_function(np.zeros(3), w=-1.0)
    with pytest.raises(ValueError, match="x contains NaN"):
        step_function(np.array([np.nan]))
    # g is continuous at the step edges x = k w and rises by s per period
    x = np.array([2.0 - 1e-12, 2.0, 4.0])
    g = step_function(x, s=3.0, w=2.0, a=1.0)
    assert abs(g[0] - g[1]) < 1e-9 and g[2] - g[1] == pytest.approx(3.0)


@pytest.mark.parametrize("maker", [make_step, make_cherkassky])
@pytest.mark.parametrize("kw, exc", [({"n_train": 1}, ValueError), ({"n_train": 2.5}, TypeError),
                                     ({"n_test": 0}, ValueError)])
def test_case_sizes(maker, kw, exc):
    with pytest.raises(exc, match="n_t"):
        maker(**kw)
