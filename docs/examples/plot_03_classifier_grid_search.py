"""
DANKClassifier in a Pipeline with GridSearchCV
==============================================

:class:`dank_fast.DANKClassifier` follows the scikit-learn estimator API, so it composes with
pipelines and model selection.  ``eta="svm"`` is the paper's rule ``eta = ||a_SVM||^2`` from a
plain SVM fit (whose solution also starts DANK's solver).
"""

# %%
# A pipeline, fitted and scored
# -----------------------------
from sklearn.datasets import make_moons
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from dank_fast import DANKClassifier

X, y = make_moons(120, noise=0.25, random_state=1)
clf = make_pipeline(MinMaxScaler(), DANKClassifier(C=1.0, gamma=1 / (2 * 0.3**2), tau=0.01,
                                                   eta="svm"))
clf.fit(X[:80], y[:80])
print("test accuracy", clf.score(X[80:], y[80:]))
print("certified rel. gap", clf[-1].results_[0].rel_gap)

# %%
# Cross-validated choice of ``C`` and ``gamma``
# ---------------------------------------------
# Every fit inside the search is certified; ``results_`` keeps the solver's result of each
# binary problem of the refitted estimator.
import numpy as np
from sklearn.model_selection import GridSearchCV

grid = GridSearchCV(
    make_pipeline(MinMaxScaler(), DANKClassifier(tau=0.01, eta="svm")),
    {"dankclassifier__C": [0.5, 4.0], "dankclassifier__gamma": [12.5, 2.0]},
    cv=3,
)
grid.fit(X[:80], y[:80])
print("best parameters", grid.best_params_)
print("test accuracy of the refitted pipeline", grid.score(X[80:], y[80:]))
assert all(r.status == "converged" for r in grid.best_estimator_[-1].results_)

# %%
# The decision function on the plane
# ----------------------------------
import matplotlib.pyplot as plt

xx, yy = np.meshgrid(np.linspace(-1.5, 2.5, 120), np.linspace(-1.0, 1.5, 100))
zz = grid.decision_function(np.c_[xx.ravel(), yy.ravel()]).reshape(xx.shape)
fig, ax = plt.subplots(figsize=(6, 3.8), layout="constrained")
ax.contourf(xx, yy, zz, levels=20, cmap="RdBu", alpha=0.6)
ax.contour(xx, yy, zz, levels=[0.0], colors="k")
ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu", edgecolors="k", s=18)
ax.set_title("DANKClassifier: decision function and boundary")
