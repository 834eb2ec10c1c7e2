"""
Regression with DANKRegressor
=============================

DANK in support vector regression (P2, the paper's eq. (22)): :func:`dank_fast.solve_svr`
solves it to a certified gap, :class:`dank_fast.DANKRegressor` wraps it as an estimator whose
``eta="svr"`` default is ``||a_SVR||^2`` of a plain SVR fit.
"""

# %%
import numpy as np

from dank_fast import DANKRegressor, compute_kernel, solve_svr

X = np.linspace(-3, 3, 80)[:, None]
y = np.sinc(X[:, 0])
res = solve_svr(compute_kernel(X, sigma=0.5), y, C=10.0, epsilon=0.01, eta=20.0, method="newton")
print(res.status, f"{res.rel_gap:.1e}", res.alpha.shape)        # alpha = ah - ac
reg = DANKRegressor(C=10.0, gamma=2.0, epsilon=0.01).fit(X, y)  # eta="svr": ||a_SVR||^2
print("R^2", round(reg.score(X, y), 4))

# %%
# The fit and its epsilon-tube
# ----------------------------
import matplotlib.pyplot as plt

grid = np.linspace(-3, 3, 300)[:, None]
fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
ax.plot(X[:, 0], y, "k.", label="data")
ax.plot(grid[:, 0], reg.predict(grid), label="DANKRegressor")
ax.fill_between(grid[:, 0], reg.predict(grid) - 0.01, reg.predict(grid) + 0.01, alpha=0.3)
ax.legend()
