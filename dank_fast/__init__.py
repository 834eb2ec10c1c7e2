"""dank_fast: fast numpy/scipy solvers for DANK (Liu et al., JMLR 2020).

Public API
----------
solve_svm         P1 (eq. (4)), certified (dense K, or FeatureKernel: working sets)
FeatureKernel     a PSD kernel given by features, evaluated in blocks (no n x n array)
solve_svr         P2 (eq. (22), DANK in SVR), certified
solve_decomposed  P3 (eqs. (18), (19)), k-means decomposition, joblib
DANKRegressor     scikit-learn estimator for P2
svm_certificate   certify any candidate solution of P1
compute_kernel    initial kernels via scikit-learn's pairwise kernels
project_A         exact projection onto the dual feasible set
inner_minimiser   F(a) of Lemma 1; apply_FK applies F o K to a vector
"""

from ._result import ConvergenceWarning, DANKResult
from .certificate import Certificate, best_bias, svm_certificate, svr_certificate
from .decomposed import DecomposedResult, solve_decomposed
from .estimators import DANKClassifier
from .feature_kernel import FeatureKernel
from .inner import KernelData, apply_FK, inner_minimiser
from .kernels import compute_kernel
from .projection import project_A, project_box, project_paper, project_sum_box
from .regressor import DANKRegressor
from .svm import solve_svm
from .svr import solve_svr

try:  # the version is written once, in pyproject.toml
    __version__ = __import__("importlib.metadata").metadata.version("dank-kernels")
except ImportError:  # a checkout that was never installed (PackageNotFoundError)
    __version__ = "0+unknown"

__all__ = [
    "Certificate",
    "ConvergenceWarning",
    "DANKClassifier",
    "DANKRegressor",
    "DANKResult",
    "DecomposedResult",
    "FeatureKernel",
    "KernelData",
    "apply_FK",
    "best_bias",
    "compute_kernel",
    "inner_minimiser",
    "project_A",
    "project_box",
    "project_paper",
    "project_sum_box",
    "solve_decomposed",
    "solve_svm",
    "solve_svr",
    "svm_certificate",
    "svr_certificate",
]
