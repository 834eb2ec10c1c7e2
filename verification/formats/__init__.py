"""Oracle file formats (version 2; version 1 files remain readable) for DANK instances and
solutions: a strict reader and writer.

A file is either an ``.npz`` archive (a zip of ``.npy`` members, one per field) or a JSON
object.  The type is decided by the file's content (zip magic ``PK\\x03\\x04`` / ``.npy`` magic
``\\x93NUMPY`` / JSON text), never by its extension.  Nothing is ever unpickled: object arrays
and pickles are refused.  Every violation raises :class:`FormatError` (a ``ValueError``) whose
message names the file, the field and what is wrong; ``dank-verify certify`` turns it into exit
code 2.

Limits (checked *before* anything is allocated)
-----------------------------------------------
* an ``.npz`` member's ``.npy`` header is read first; its dtype must be plain numeric (or a
  unicode string for the string fields) and its declared size at most
  :data:`MAX_ARRAY_BYTES` (2 GiB) and at most the memory the machine has available (Linux:
  ``MemAvailable``, capped by a cgroup's ``memory.max``); the member's stored size must match
  the header exactly (a shorter member is reported as *truncated*);
* a JSON file is at most :data:`MAX_JSON_BYTES` (64 MiB; use ``.npz`` for larger arrays);
* a kernel computed from ``X`` is formed densely only when ``8 n^2 <= MAX_ARRAY_BYTES``
  (``n <= 16384``); above that the instance is read without it (``K`` is ``None``) and the
  oracle certifies from ``X`` in row blocks, so the limit is on what is allocated: ``X``,
  the vectors and the blocks.

Types (exact)
-------------
* *string*: a JSON string, or a 0-d unicode ``.npy`` array.
* *integer*: a JSON integer (``1``, not ``1.0``, not ``true``), or a 0-d integer array.
* *number*: a JSON number (integer or float; not a boolean, not a string, not ``NaN``,
  ``Infinity`` nor a literal that overflows double precision), or a 0-d integer/float array.
  Numbers must be finite.
* *array*: nested JSON lists of numbers (rectangular), or an ``.npy`` array of dtype kind
  ``f``, ``i`` or ``u`` (booleans, complex numbers, strings and objects are refused).  Entries
  must be finite.  ``labels`` is an *integer array* (JSON integers, or integer dtype).

Missing required fields, fields that the task does not use and unknown fields are all errors;
JSON ``null`` is not a value (omit an optional field instead); duplicate JSON keys are errors.

Instance (``format = "dank-instance"``, ``version = 1`` or ``2``)
-----------------------------------------------------------------
=============  ===========  ===============================================================
field          type         meaning
=============  ===========  ===============================================================
format         string       ``"dank-instance"``
version        integer      ``1`` or ``2`` (2: ``C`` may be a vector; written only then)
task           string       ``"svm"`` (P1, eq. (4)), ``"svr"`` (P2, eq. (22) with the
                            bias constraint ``1'(ah - ac) = 0``) or ``"decomposed"`` (P3,
                            eq. (18) on ``Kbar = K o [labels_i = labels_j]``: box only, no
                            bias, tau = 0)
K              array n x n  the kernel matrix -- **exactly one** of ``K`` or ``X``
X              array n x d  data (``d >= 1``); the kernel is then computed from ``kernel``:
kernel         string       ``"gaussian"``: ``exp(-gamma ||x - x'||^2)`` with exactly one of
                            ``sigma`` (``gamma = 1 / (2 sigma^2)``) or ``gamma``;
                            ``"linear"``: ``x'x'`` (no parameters);
                            ``"polynomial"``: ``(gamma x'x' + coef0)^degree`` with all three
sigma, gamma   number > 0   kernel parameters (only those the kernel uses are allowed)
degree         int >= 1
coef0          number >= 0  (``coef0 < 0`` is not a PSD kernel, :doc:`docs/validity.md </validity>`)
y              array n      labels, exactly ``-1`` or ``+1`` (svm: both classes; decomposed:
                            one class allowed), or real targets (svr)
C              number > 0   the box; version 2 also: array n of per-sample boxes ``> 0``
                            (``0 <= a_i <= C_i``; svr: ``0 <= ah_i, ac_i <= C_i``)
eta            number > 0
tau            number >= 0  required for svm and svr; optional for decomposed, where it must
                            be 0
epsilon        number >= 0  svr only (required)
labels         int array n  cluster of each point, decomposed only (required)
=============  ===========  ===============================================================

``K`` is validated by the rule of :doc:`docs/validity.md </validity>`: ``n >= 1``, finite, symmetric
to ``max(1e-10, 10 u) max|K|`` and PSD to ``-max(1e-8, u) n max|K|`` (``u`` the machine epsilon of
its dtype; ``K = 0`` is valid), then symmetrised. A kernel computed from ``X`` by the formulas above
is PSD by construction and is not tested (it must be finite: an overflowing kernel or ``sigma`` is
refused). Instances outside the representable range ``1e-100 <= C max|K| n <= 1e100``,
``1e-100 <= eta / (C^2 max|K|) <= 1e100`` are refused (a vector ``C``: for its smallest and its
largest entry).

Solution (``format = "dank-solution"``, ``version = 1`` or ``2``)
-----------------------------------------------------------------
=============  ===========  ===============================================================
format         string       ``"dank-solution"``
version        integer      ``1`` or ``2`` (the same fields; written as ``1``)
task           string       as in the instance (a mismatch is bad input)
alpha          array n      the dual vector (svm, decomposed)
alpha_hat,     array n      each (svr); the certified point is ``(alpha_hat, alpha_check)``
alpha_check                 exactly as given (``b = alpha_hat - alpha_check``)
bias           number       optional (svm, svr; not decomposed): the decision function is
                            ``f = (F o K)(alpha * y) + bias`` (svr: ``(F o K) b + bias``)
F              array n x n  optional: the claimed inner minimiser
                            ``F(alpha) = J_{tau/2}(11' + Gamma)`` (decomposed: on ``Kbar``)
meta           string or    optional, free-form (which solver, its settings, ...): a JSON
               object       string or object; ``.npz``: a 0-d string (an object is stored as
                            its JSON text); at most 65,536 characters; echoed in reports
=============  ===========  ===============================================================

The same formats, field by field with examples and the versioning rule, are in
:doc:`docs/FORMATS.md </FORMATS>`; JSON Schemas ship in ``verification/schemas/``.

Modules: :mod:`~verification.formats.spec` (constants, field sets),
:mod:`~verification.formats.containers` (raw ``.npz`` / JSON fields),
:mod:`~verification.formats.fields` (typed field access), :mod:`~verification.formats.values`
(label and ``meta`` rules), :mod:`~verification.formats.kernels` (kernel validity and
computation), :mod:`~verification.formats.reading` and :mod:`~verification.formats.writing`.

Writing: :func:`save_instance` / :func:`save_solution` write JSON when the path ends in
``.json`` and a deterministic ``.npz`` otherwise (fixed zip timestamps, stored members), so
that regenerating a file gives identical bytes.
"""

from __future__ import annotations

from .containers import sniff
from .kernels import check_representable, kernel_from_X, validate_kernel
from .reading import load_instance, load_solution
from .spec import (
    FORMAT_VERSION,
    KERNELS,
    MAX_ARRAY_BYTES,
    MAX_JSON_BYTES,
    READ_VERSIONS,
    TASKS,
    FormatError,
)
from .writing import save_instance, save_solution

__all__ = [
    "FORMAT_VERSION",
    "READ_VERSIONS",
    "TASKS",
    "KERNELS",
    "MAX_ARRAY_BYTES",
    "MAX_JSON_BYTES",
    "FormatError",
    "load_instance",
    "load_solution",
    "save_instance",
    "save_solution",
    "kernel_from_X",
    "validate_kernel",
    "check_representable",
    "sniff",
]
