"""Oracle file formats (version 1) for DANK instances and solutions: a strict reader and writer.

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
  :data:`MAX_ARRAY_BYTES` (2 GiB); the member's stored size must match the header exactly
  (a shorter member is reported as *truncated*);
* a JSON file is at most :data:`MAX_JSON_BYTES` (64 MiB; use ``.npz`` for larger arrays);
* a kernel computed from ``X`` needs ``8 n^2 <= MAX_ARRAY_BYTES`` (``n <= 16384``).

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

Instance (``format = "dank-instance"``, ``version = 1``)
--------------------------------------------------------
=============  ===========  ===============================================================
field          type         meaning
=============  ===========  ===============================================================
format         string       ``"dank-instance"``
version        integer      ``1``
task           string       ``"svm"`` (P1, eq. mainrank), ``"svr"`` (P2, eq. mainsvr with the
                            bias constraint ``1'(ah - ac) = 0``) or ``"decomposed"`` (P3,
                            eq. mainls on ``Kbar = K o [labels_i = labels_j]``: box only, no
                            bias, tau = 0)
K              array n x n  the kernel matrix -- **exactly one** of ``K`` or ``X``
X              array n x d  data (``d >= 1``); the kernel is then computed from ``kernel``:
kernel         string       ``"gaussian"``: ``exp(-gamma ||x - x'||^2)`` with exactly one of
                            ``sigma`` (``gamma = 1 / (2 sigma^2)``) or ``gamma``;
                            ``"linear"``: ``x'x'`` (no parameters);
                            ``"polynomial"``: ``(gamma x'x' + coef0)^degree`` with all three
sigma, gamma   number > 0   kernel parameters (only those the kernel uses are allowed)
degree         integer >= 1
coef0          number >= 0  (``coef0 < 0`` is not a PSD kernel, docs/validity.md)
y              array n      labels, exactly ``-1`` or ``+1`` (svm: both classes; decomposed:
                            one class allowed), or real targets (svr)
C, eta         number > 0
tau            number >= 0  required for svm and svr; optional for decomposed, where it must
                            be 0
epsilon        number >= 0  svr only (required)
labels         int array n  cluster of each point, decomposed only (required)
=============  ===========  ===============================================================

``K`` is validated by the rule of ``docs/validity.md``: ``n >= 1``, finite, symmetric to
``max(1e-10, 10 u) max|K|`` and PSD to ``-max(1e-8, u) n max|K|`` (``u`` the machine epsilon of
its dtype; ``K = 0`` is valid), then symmetrised.  A kernel computed from ``X`` by the formulas
above is PSD by construction and is not tested (it must be finite: an overflowing kernel or
``sigma`` is refused).  Instances outside the representable range
``1e-100 <= C max|K| n <= 1e100``, ``1e-100 <= eta / (C^2 max|K|) <= 1e100`` are refused.

Solution (``format = "dank-solution"``, ``version = 1``)
--------------------------------------------------------
=============  ===========  ===============================================================
format         string       ``"dank-solution"``
version        integer      ``1``
task           string       as in the instance (a mismatch is bad input)
alpha          array n      the dual vector (svm, decomposed)
alpha_hat,     array n      each (svr); the certified point is ``(alpha_hat, alpha_check)``
alpha_check                 exactly as given (``b = alpha_hat - alpha_check``)
bias           number       optional (svm, svr; not decomposed): the decision function is
                            ``f = (F o K)(alpha * y) + bias`` (svr: ``(F o K) b + bias``)
F              array n x n  optional: the claimed inner minimiser
                            ``F(alpha) = J_{tau/2}(11' + Gamma)`` (decomposed: on ``Kbar``)
=============  ===========  ===============================================================

Writing: :func:`save_instance` / :func:`save_solution` write JSON when the path ends in
``.json`` and a deterministic ``.npz`` otherwise (fixed zip timestamps, stored members), so
that regenerating a file gives identical bytes.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
import zlib

import numpy as np

__all__ = [
    "FORMAT_VERSION",
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

FORMAT_VERSION = 1
TASKS = ("svm", "svr", "decomposed")
KERNELS = ("gaussian", "linear", "polynomial")
MAX_ARRAY_BYTES = 2 * 1024**3
MAX_JSON_BYTES = 64 * 1024**2
_MAX_MEMBERS = 64
_F64_EPS = float(np.finfo(np.float64).eps)

_KERNEL_PARAMS = {"gaussian": ("sigma", "gamma"), "linear": (),
                  "polynomial": ("degree", "gamma", "coef0")}
_KERNEL_FIELDS = frozenset({"K", "X", "kernel", "sigma", "gamma", "degree", "coef0"})
_INSTANCE_FIELDS = {
    "svm": frozenset({"format", "version", "task", "y", "C", "eta", "tau"}),
    "svr": frozenset({"format", "version", "task", "y", "C", "eta", "tau", "epsilon"}),
    "decomposed": frozenset({"format", "version", "task", "y", "C", "eta", "tau", "labels"}),
}
_SOLUTION_FIELDS = {
    "svm": frozenset({"format", "version", "task", "alpha", "bias", "F"}),
    "svr": frozenset({"format", "version", "task", "alpha_hat", "alpha_check", "bias", "F"}),
    "decomposed": frozenset({"format", "version", "task", "alpha", "F"}),
}
_ALL_INSTANCE = frozenset().union(*_INSTANCE_FIELDS.values()) | _KERNEL_FIELDS | {"epsilon"}
_ALL_SOLUTION = frozenset().union(*_SOLUTION_FIELDS.values())


class FormatError(ValueError):
    """Malformed instance or solution file (the message names the file, field and problem)."""


# ---------------------------------------------------------------------------------------------
# reading raw fields: content sniffing, npz members (header first), JSON
# ---------------------------------------------------------------------------------------------
def sniff(path) -> str:
    """Return ``"npz"`` or ``"json"`` from the file's first bytes; raise for anything else."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FormatError(f"{path}: no such file")
    if os.path.isdir(path):
        raise FormatError(f"{path}: is a directory, not a file")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise FormatError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not head:
        raise FormatError(f"{path}: is empty")
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "npz"
    if head.startswith(b"\x93NUMPY"):
        raise FormatError(f"{path}: is a bare .npy array (a single array); expected an .npz "
                          "archive of named fields or a JSON object")
    if head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        raise FormatError(f"{path}: is a Python pickle; refused (files are never unpickled)")
    if head.startswith(b"PK"):
        raise FormatError(f"{path}: is a damaged zip archive (unexpected record {head[:4]!r})")
    return "json"


class _Fields:
    """Field access for one file: ``names`` known up front, values decoded on demand."""

    def __init__(self, path, kind, names, getter):
        self.path, self.kind, self.names, self._get = path, kind, names, getter
        self._cache = {}

    def __contains__(self, name):
        return name in self.names

    def __getitem__(self, name):
        if name not in self._cache:
            self._cache[name] = self._get(name)
        return self._cache[name]

    def close(self):
        pass


class _NpzFields(_Fields):
    def __init__(self, path):
        try:
            self._zf = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise FormatError(f"{path}: not a readable zip (.npz) archive, truncated or corrupt "
                              f"({exc})") from exc
        except (OSError, EOFError, ValueError) as exc:
            raise FormatError(f"{path}: cannot open as an .npz archive ({exc})") from exc
        infos = self._zf.infolist()
        if len(infos) > _MAX_MEMBERS:
            self._zf.close()
            raise FormatError(f"{path}: archive has {len(infos)} members (at most "
                              f"{_MAX_MEMBERS} fields are defined)")
        members = {}
        for info in infos:
            name = info.filename
            if info.is_dir() or not name.endswith(".npy") or "/" in name:
                self._zf.close()
                raise FormatError(f"{path}: archive member {name!r} is not a field (expected "
                                  "'<field>.npy' members written by numpy.savez)")
            key = name[:-4]
            if key in members:
                self._zf.close()
                raise FormatError(f"{path}: archive has two members named {name!r}")
            if info.file_size > MAX_ARRAY_BYTES + 65536:
                self._zf.close()
                raise FormatError(f"{path}: field {key!r} is {_gib(info.file_size)} "
                                  f"uncompressed, more than the {_gib(MAX_ARRAY_BYTES)} limit")
            members[key] = info
        super().__init__(path, "npz", frozenset(members), lambda k: self._read(members[k]))

    def close(self):
        self._zf.close()

    def _read(self, info):
        path, key = self.path, info.filename[:-4]
        try:
            with self._zf.open(info) as fh:
                try:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
                    elif version == (2, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
                    else:
                        raise FormatError(f"{path}: field {key!r} uses .npy format version "
                                          f"{version[0]}.{version[1]} (supported: 1.0, 2.0)")
                except FormatError:
                    raise
                except (ValueError, SyntaxError, EOFError) as exc:
                    raise FormatError(f"{path}: field {key!r} has a malformed or truncated "
                                      f".npy header ({_one_line(exc)})") from exc
                header_len = fh.tell()
                if dtype.hasobject:
                    raise FormatError(f"{path}: field {key!r} is an object array (it would "
                                      "have to be unpickled); refused")
                if dtype.fields is not None or dtype.subdtype is not None:
                    raise FormatError(f"{path}: field {key!r} has a structured dtype "
                                      f"{dtype}; expected a plain numeric array")
                if dtype.kind not in "biufcUS":
                    raise FormatError(f"{path}: field {key!r} has unsupported dtype {dtype}")
                count = math.prod(int(s) for s in shape)
                nbytes = count * dtype.itemsize
                if nbytes > MAX_ARRAY_BYTES:
                    raise FormatError(f"{path}: field {key!r} declares shape {tuple(shape)} of "
                                      f"{dtype} = {_gib(nbytes)}, more than the "
                                      f"{_gib(MAX_ARRAY_BYTES)} limit; refused before reading")
                stored = info.file_size - header_len
                if stored < nbytes:
                    raise FormatError(f"{path}: field {key!r} is truncated: its header "
                                      f"announces shape {tuple(shape)} of {dtype} "
                                      f"({nbytes} bytes) but the member holds {stored}")
                if stored > nbytes:
                    raise FormatError(f"{path}: field {key!r} has {stored - nbytes} bytes "
                                      f"after the {nbytes} its header announces")
                buf = np.empty(nbytes, dtype=np.uint8)
                view, got = memoryview(buf), 0
                while got < nbytes:
                    k = fh.readinto(view[got:])
                    if not k:
                        raise FormatError(f"{path}: field {key!r} is truncated ({got} of "
                                          f"{nbytes} bytes)")
                    got += k
                fh.read(1)  # reach the member's end: zipfile checks its CRC there
        except FormatError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
            raise FormatError(f"{path}: field {key!r} is a corrupt or truncated zip member "
                              f"({_one_line(exc)})") from exc
        return buf.view(dtype).reshape(shape, order="F" if fortran else "C")


def _no_constants(name):
    raise FormatError(f"non-standard JSON constant {name} (numbers must be finite)")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise FormatError(f"duplicate JSON key {k!r}")
        out[k] = v
    return out


class _JsonFields(_Fields):
    def __init__(self, path):
        size = os.path.getsize(path)
        if size > MAX_JSON_BYTES:
            raise FormatError(f"{path}: JSON file of {size} bytes exceeds the "
                              f"{MAX_JSON_BYTES // 2**20} MiB limit (use .npz for large arrays)")
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"{path}: neither an .npz archive nor JSON text (not UTF-8 at "
                              f"byte {exc.start})") from exc
        text = text.removeprefix("\ufeff")
        start = text.lstrip()[:1]
        if start != "{":
            what = ("a JSON array" if start == "[" else "empty" if not start else
                    f"text starting with {text.lstrip()[:12]!r}")
            raise FormatError(f"{path}: expected an .npz archive or a JSON object, found {what}")
        try:
            raw = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_duplicates)
        except FormatError as exc:
            raise FormatError(f"{path}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path}: not valid JSON ({exc})") from exc
        except RecursionError as exc:
            raise FormatError(f"{path}: JSON nested too deeply") from exc
        if not isinstance(raw, dict):
            raise FormatError(f"{path}: top level must be a JSON object")
        super().__init__(path, "json", frozenset(raw), raw.__getitem__)


def _open_fields(path) -> _Fields:
    path = os.fspath(path)
    kind = sniff(path)
    return _NpzFields(path) if kind == "npz" else _JsonFields(path)


# ---------------------------------------------------------------------------------------------
# typed accessors (one rule for both containers)
# ---------------------------------------------------------------------------------------------
def _gib(nbytes) -> str:
    return f"{nbytes / 2**30:.3g} GiB"


def _one_line(exc) -> str:
    msg = " ".join(str(exc).split())
    return msg or type(exc).__name__


def _describe_json(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return repr(v)


def _describe_npy(v: np.ndarray) -> str:
    kinds = {"b": "boolean", "c": "complex", "U": "string", "S": "bytes"}
    what = kinds.get(v.dtype.kind, str(v.dtype))
    return f"a {what} array of shape {v.shape}" if v.ndim else f"a 0-d {what} ({v[()]!r})"


def _require(f: _Fields, name: str):
    if name not in f:
        raise FormatError(f"{f.path}: missing field {name!r}")
    v = f[name]
    if v is None:
        raise FormatError(f"{f.path}: field {name!r} is null (omit an optional field instead)")
    return v


def _string(f: _Fields, name: str) -> str:
    v = _require(f, name)
    if f.kind == "json":
        if not isinstance(v, str):
            raise FormatError(f"{f.path}: field {name!r} must be a string, got "
                              f"{_describe_json(v)}")
        return v
    if v.ndim != 0 or v.dtype.kind != "U":
        raise FormatError(f"{f.path}: field {name!r} must be a 0-d unicode string, got "
                          f"{_describe_npy(v)}")
    return str(v[()])


def _integer(f: _Fields, name: str) -> int:
    v = _require(f, name)
    if f.kind == "json":
        if type(v) is not int:
            raise FormatError(f"{f.path}: field {name!r} must be an integer, got "
                              f"{_describe_json(v)}")
        return v
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise FormatError(f"{f.path}: field {name!r} must be a 0-d integer, got "
                          f"{_describe_npy(v)}")
    return int(v[()])


def _number(f: _Fields, name: str, *, positive=False, nonneg=False) -> float:
    v = _require(f, name)
    if f.kind == "json":
        if type(v) not in (int, float):
            raise FormatError(f"{f.path}: field {name!r} must be a number, got "
                              f"{_describe_json(v)}")
        try:
            x = float(v)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} = {v} overflows double precision") \
                from exc
    else:
        if v.ndim != 0 or v.dtype.kind not in "iuf":
            raise FormatError(f"{f.path}: field {name!r} must be a 0-d real number, got "
                              f"{_describe_npy(v)}")
        with np.errstate(over="ignore"):
            x = float(v[()])
    if not math.isfinite(x):
        raise FormatError(f"{f.path}: field {name!r} must be finite, got {x}")
    if positive and not x > 0:
        raise FormatError(f"{f.path}: field {name!r} must be > 0, got {x!r}")
    if nonneg and not x >= 0:
        raise FormatError(f"{f.path}: field {name!r} must be >= 0, got {x!r}")
    return x


def _json_leaves(v, ndim, path, name, integer):
    """Check a rectangular nested list of JSON numbers; return (shape, flat list)."""
    ok_types = (int,) if integer else (int, float)
    kind = "integers" if integer else "numbers"
    if ndim == 1:
        if not isinstance(v, list):
            raise FormatError(f"{path}: field {name!r} must be a list of {kind}, got "
                              f"{_describe_json(v)}")
        for i, x in enumerate(v):
            if type(x) not in ok_types:
                raise FormatError(f"{path}: field {name!r}[{i}] must be one of the {kind}, got "
                                  f"{_describe_json(x)}")
        return (len(v),), v
    if not isinstance(v, list) or not all(isinstance(r, list) for r in v):
        raise FormatError(f"{path}: field {name!r} must be a list of lists of {kind} "
                          f"({ndim}-D array)")
    m = len(v[0]) if v else 0
    flat = []
    for i, row in enumerate(v):
        if len(row) != m:
            raise FormatError(f"{path}: field {name!r} is ragged: row {i} has {len(row)} "
                              f"entries, row 0 has {m}")
        for j, x in enumerate(row):
            if type(x) not in ok_types:
                raise FormatError(f"{path}: field {name!r}[{i}][{j}] must be one of the "
                                  f"{kind}, got {_describe_json(x)}")
        flat.extend(row)
    return (len(v), m), flat


def _array(f: _Fields, name: str, ndim: int):
    """Real array as float64 plus the machine epsilon of its stored dtype (validity.md)."""
    v = _require(f, name)
    if f.kind == "json":
        shape, flat = _json_leaves(v, ndim, f.path, name, integer=False)
        try:
            a = np.array(flat, dtype=np.float64).reshape(shape)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} has an integer that overflows double "
                              "precision") from exc
        eps = _F64_EPS
    else:
        if v.dtype.kind not in "iuf":
            raise FormatError(f"{f.path}: field {name!r} must be a real numeric array, got "
                              f"{_describe_npy(v)}")
        if v.ndim != ndim:
            raise FormatError(f"{f.path}: field {name!r} must be {ndim}-D, got shape {v.shape}")
        eps = float(np.finfo(v.dtype).eps) if v.dtype.kind == "f" and v.itemsize < 8 \
            else _F64_EPS
        with np.errstate(over="ignore"):
            a = np.asarray(v, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise FormatError(f"{f.path}: field {name!r} contains NaN or infinity (at index "
                          f"{tuple(int(i) for i in bad)})")
    return a, eps


def _int_array(f: _Fields, name: str) -> np.ndarray:
    v = _require(f, name)
    if f.kind == "json":
        _, flat = _json_leaves(v, 1, f.path, name, integer=True)
        try:
            return np.array(flat, dtype=np.int64).reshape(-1)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} has an integer outside int64") from exc
    if v.dtype.kind not in "iu":
        raise FormatError(f"{f.path}: field {name!r} must be an integer array, got "
                          f"{_describe_npy(v)}")
    if v.ndim != 1:
        raise FormatError(f"{f.path}: field {name!r} must be 1-D, got shape {v.shape}")
    return np.asarray(v)


def _header(f: _Fields, kind: str, allowed: dict, every: frozenset) -> str:
    fmt = _string(f, "format")
    if fmt != kind:
        other = {"dank-instance": "an instance", "dank-solution": "a solution"}.get(fmt)
        hint = f" (this is {other} file)" if other else ""
        raise FormatError(f"{f.path}: field 'format' is {fmt!r}, expected {kind!r}{hint}")
    ver = _integer(f, "version")
    if ver != FORMAT_VERSION:
        raise FormatError(f"{f.path}: unsupported version {ver} (this reader reads version "
                          f"{FORMAT_VERSION})")
    task = _string(f, "task")
    if task not in TASKS:
        raise FormatError(f"{f.path}: field 'task' must be one of {TASKS}, got {task!r}")
    unknown = sorted(set(f.names) - every)
    if unknown:
        raise FormatError(f"{f.path}: unknown field(s) {', '.join(map(repr, unknown))}")
    unused = sorted(set(f.names) - allowed[task] - (_KERNEL_FIELDS if kind == "dank-instance"
                                                    else frozenset()))
    if unused:
        raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, unused))} not used by "
                          f"task {task!r}")
    return task


# ---------------------------------------------------------------------------------------------
# kernels: validation (docs/validity.md), computation from X, representable range
# ---------------------------------------------------------------------------------------------
def validate_kernel(K: np.ndarray, eps: float = _F64_EPS, *, what: str = "K") -> np.ndarray:
    """Check ``K`` by the rule of docs/validity.md and return ``(K + K') / 2``.

    ``K`` is a finite float64 ``n x n`` array (``n >= 1``); ``eps`` the machine epsilon of the
    dtype it was stored in.  With ``s = max|K_ij|``: symmetric iff
    ``max|K - K'| <= max(1e-10, 10 eps) s``; PSD iff
    ``lambda_min((K + K')/2) >= -max(1e-8, eps) n s`` (dense ``eigvalsh``, O(n^3)).
    ``K = 0`` is valid.  Raises ``ValueError`` naming the violated rule.
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{what} must be square, got shape {K.shape}")
    n = K.shape[0]
    if n == 0:
        raise ValueError(f"{what} is empty (n = 0); an instance needs n >= 1 points")
    s = float(np.max(np.abs(K)))
    if s == 0.0:
        return K.copy()
    asym = float(np.max(np.abs(K - K.T)))
    eps_sym = max(1e-10, 10.0 * eps)
    if asym > eps_sym * s:
        raise ValueError(f"{what} is not symmetric: max|K - K'| = {asym:.3g} > "
                         f"{eps_sym:g} * max|K| = {eps_sym * s:.3g}")
    Ks = 0.5 * (K + K.T)
    lmin = float(np.linalg.eigvalsh(Ks)[0])
    eps_psd = max(1e-8, eps)
    if lmin < -eps_psd * n * s:
        raise ValueError(f"{what} is not positive semi-definite: lambda_min = {lmin:.3g} < "
                         f"-{eps_psd:g} * n * max|K| = {-eps_psd * n * s:.3g}")
    return Ks


def kernel_from_X(X, kernel, sigma=None, gamma=None, degree=None, coef0=None) -> np.ndarray:
    """Kernel matrix of the rows of ``X`` (formulas in the module docstring).

    Raises ``ValueError`` when a parameter or the result is not representable (e.g.
    ``sigma = 1e-170``: ``1 / (2 sigma^2)`` overflows) instead of returning inf/NaN.
    """
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(all="ignore"):
        if kernel == "gaussian":
            if gamma is None:
                gamma = float(np.float64(0.5) / np.float64(sigma) / np.float64(sigma))
                if not math.isfinite(gamma):
                    raise ValueError(f"sigma = {sigma!r} is too small: gamma = 1 / (2 sigma^2) "
                                     "overflows double precision")
            from scipy.spatial.distance import pdist, squareform

            D = squareform(pdist(X, "sqeuclidean")) if X.shape[0] > 1 \
                else np.zeros((X.shape[0], X.shape[0]))
            if not np.all(np.isfinite(D)):
                raise ValueError("the squared distances between rows of X overflow double "
                                 "precision")
            K = np.exp(-gamma * D)
        elif kernel == "linear":
            K = X @ X.T
        elif kernel == "polynomial":
            K = (gamma * (X @ X.T) + coef0) ** int(degree)
        else:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if not np.all(np.isfinite(K)):
        params = {k: v for k, v in dict(sigma=sigma, gamma=gamma, degree=degree,
                                        coef0=coef0).items() if v is not None}
        raise ValueError(f"the {kernel} kernel of X with {params} overflows double precision "
                         "(X itself is finite)")
    return 0.5 * (K + K.T)


def check_representable(C: float, eta: float, s: float, n: int) -> None:
    """Refuse instances outside the representable range of docs/validity.md (``s = max|K|``).

    ``1e-100 <= C s n <= 1e100`` and ``1e-100 <= eta / (C^2 s) <= 1e100`` (``s = 0`` is
    always representable).  Evaluated in logarithms, so it cannot overflow itself.
    """
    if s == 0.0:
        return
    lc, le, ls, ln = (math.log10(C), math.log10(eta), math.log10(s), math.log10(n))
    svm_scale = lc + ls + ln
    inv_scale = le - 2.0 * lc - ls
    what = f"C = {C:.6g}, eta = {eta:.6g}, max|K| = {s:.6g}, n = {n}"
    if not -100.0 <= svm_scale <= 100.0:
        raise ValueError(f"outside the representable range (docs/validity.md): "
                         f"C * max|K| * n = 1e{svm_scale:.1f} is not in [1e-100, 1e100] "
                         f"({what})")
    if not -100.0 <= inv_scale <= 100.0:
        raise ValueError(f"outside the representable range (docs/validity.md): "
                         f"eta / (C^2 max|K|) = 1e{inv_scale:.1f} is not in [1e-100, 1e100] "
                         f"({what})")


# ---------------------------------------------------------------------------------------------
# instance and solution
# ---------------------------------------------------------------------------------------------
def _kernel_of(f: _Fields):
    has_K, has_X = "K" in f, "X" in f
    if has_K == has_X:
        raise FormatError(f"{f.path}: needs exactly one of field 'K' or fields 'X' and 'kernel' "
                          f"(got {'both' if has_K else 'neither'})")
    if has_K:
        extra = sorted(set(f.names) & (_KERNEL_FIELDS - {"K"}))
        if extra:
            raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, extra))} need 'X'; "
                              "this instance gives 'K'")
        K, eps = _array(f, "K", 2)
        try:
            return validate_kernel(K, eps), dict(source="K")
        except ValueError as exc:
            raise FormatError(f"{f.path}: field 'K': {exc}") from exc
    kernel = _string(f, "kernel")
    if kernel not in KERNELS:
        raise FormatError(f"{f.path}: field 'kernel' must be one of {KERNELS}, got {kernel!r}")
    wanted = _KERNEL_PARAMS[kernel]
    extra = sorted(set(f.names) & {"sigma", "gamma", "degree", "coef0"} - set(wanted))
    if extra:
        raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, extra))} not used by the "
                          f"{kernel} kernel")
    params = {}
    if kernel == "gaussian":
        if ("sigma" in f) == ("gamma" in f):
            raise FormatError(f"{f.path}: the gaussian kernel needs exactly one of 'sigma' or "
                              "'gamma'")
        name = "sigma" if "sigma" in f else "gamma"
        params[name] = _number(f, name, positive=True)
    elif kernel == "polynomial":
        params["degree"] = _integer(f, "degree")
        if params["degree"] < 1:
            raise FormatError(f"{f.path}: field 'degree' must be >= 1, got {params['degree']}")
        params["gamma"] = _number(f, "gamma", positive=True)
        params["coef0"] = _number(f, "coef0", nonneg=True)
    X, _ = _array(f, "X", 2)
    n, d = X.shape
    if n == 0:
        raise FormatError(f"{f.path}: field 'X' has no rows (n = 0)")
    if d == 0:
        raise FormatError(f"{f.path}: field 'X' has no columns (d = 0)")
    if 8 * n * n > MAX_ARRAY_BYTES:
        raise FormatError(f"{f.path}: field 'X' has n = {n} rows: the {n} x {n} kernel would "
                          f"take {_gib(8 * n * n)}, more than the {_gib(MAX_ARRAY_BYTES)} limit")
    try:
        K = kernel_from_X(X, kernel, **params)
    except ValueError as exc:
        raise FormatError(f"{f.path}: {exc}") from exc
    return K, dict(source="X", kernel=kernel, **params)


def load_instance(path) -> dict:
    """Read and validate an instance file (format in the module docstring).

    Returns
    -------
    dict
        ``task``, ``n``, ``K`` (float64, symmetrised), ``y``, ``C``, ``eta``, ``tau``,
        ``epsilon`` (svr, else None), ``labels`` (decomposed, else None), ``kernel`` (how K
        was given).
    """
    f = _open_fields(path)
    try:
        task = _header(f, "dank-instance", _INSTANCE_FIELDS, _ALL_INSTANCE)
        K, kinfo = _kernel_of(f)
        n = K.shape[0]
        y, _ = _array(f, "y", 1)
        if y.shape != (n,):
            raise FormatError(f"{f.path}: field 'y' has {y.size} entries but the kernel is "
                              f"{n} x {n}")
        if task in ("svm", "decomposed"):
            bad = ~((y == 1.0) | (y == -1.0))
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                raise FormatError(f"{f.path}: field 'y' must contain only -1 and +1 for task "
                                  f"{task!r}, got y[{i}] = {float(y[i])!r}")
            if task == "svm" and (np.all(y == 1.0) or np.all(y == -1.0)):
                raise FormatError(f"{f.path}: field 'y' must contain both classes for task "
                                  "'svm' (the bias constraint y'a = 0 needs them)")
        C = _number(f, "C", positive=True)
        eta = _number(f, "eta", positive=True)
        if task == "decomposed":
            tau = _number(f, "tau", nonneg=True) if "tau" in f else 0.0
            if tau != 0.0:
                raise FormatError(f"{f.path}: field 'tau' must be 0 for task 'decomposed' "
                                  f"(P3 has no nuclear norm), got {tau!r}")
        else:
            tau = _number(f, "tau", nonneg=True)
        inst = dict(task=task, n=n, K=K, y=y, C=C, eta=eta, tau=tau, epsilon=None,
                    labels=None, kernel=kinfo)
        if task == "svr":
            inst["epsilon"] = _number(f, "epsilon", nonneg=True)
        if task == "decomposed":
            labels = _int_array(f, "labels")
            if labels.shape != (n,):
                raise FormatError(f"{f.path}: field 'labels' has {labels.size} entries but the "
                                  f"kernel is {n} x {n}")
            inst["labels"] = labels
        try:
            check_representable(C, eta, float(np.max(np.abs(K))), n)
        except ValueError as exc:
            raise FormatError(f"{f.path}: {exc}") from exc
        return inst
    finally:
        f.close()


def load_solution(path, n: int | None = None) -> dict:
    """Read and validate a solution file; ``n`` (the instance's size) fixes every shape.

    Returns a dict with ``task``, ``alpha`` (svm, decomposed) or ``alpha_hat`` and
    ``alpha_check`` (svr), ``bias`` and ``F`` (None when absent).
    """
    f = _open_fields(path)
    try:
        task = _header(f, "dank-solution", _SOLUTION_FIELDS, _ALL_SOLUTION)
        sol = dict(task=task, bias=None, F=None)
        names = ("alpha_hat", "alpha_check") if task == "svr" else ("alpha",)
        given = n is not None
        for name in names:
            v, _ = _array(f, name, 1)
            if given and v.shape != (n,):
                raise FormatError(f"{f.path}: field {name!r} has {v.size} entries but the "
                                  f"instance has n = {n}")
            if n is None:
                n = v.size
            elif v.size != n:
                raise FormatError(f"{f.path}: field {name!r} has {v.size} entries, "
                                  f"{names[0]!r} has {n}")
            sol[name] = v
        if "bias" in f:
            sol["bias"] = _number(f, "bias")
        if "F" in f:
            F, _ = _array(f, "F", 2)
            if F.shape != (n, n):
                raise FormatError(f"{f.path}: field 'F' has shape {F.shape}, expected "
                                  f"({n}, {n})")
            sol["F"] = F
        return sol
    finally:
        f.close()


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
def _npz_value(v):
    if isinstance(v, str):
        return np.array(v)
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("booleans are not part of the format")
    if isinstance(v, (int, np.integer)):
        return np.array(int(v), dtype=np.int64)
    return np.asarray(v)


def _json_value(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def _write(path, fields: dict) -> None:
    fields = {k: v for k, v in fields.items() if v is not None}
    path = os.fspath(path)
    if path.endswith(".json"):
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({k: _json_value(v) for k, v in fields.items()}, fh, allow_nan=False)
        return
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for k, v in fields.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, _npz_value(v), allow_pickle=False)
            info = zipfile.ZipInfo(f"{k}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def save_instance(path, *, task, y, C, eta, tau=None, K=None, X=None, kernel=None, sigma=None,
                  gamma=None, degree=None, coef0=None, epsilon=None, labels=None) -> None:
    """Write an instance (JSON if ``path`` ends in ``.json``, else a deterministic ``.npz``).

    Give exactly one of ``K`` or ``X`` (with ``kernel`` and its parameters).  ``labels`` is
    stored as an integer array.  No validation beyond that: read it back with
    :func:`load_instance` to check it.
    """
    if (K is None) == (X is None):
        raise ValueError("give exactly one of K or X")
    fields = dict(format="dank-instance", version=FORMAT_VERSION, task=task)
    if K is not None:
        fields["K"] = np.asarray(K)
    else:
        fields.update(X=np.asarray(X, dtype=np.float64), kernel=kernel,
                      sigma=None if sigma is None else float(sigma),
                      gamma=None if gamma is None else float(gamma),
                      degree=None if degree is None else int(degree),
                      coef0=None if coef0 is None else float(coef0))
    fields.update(y=np.asarray(y, dtype=np.float64), C=float(C), eta=float(eta),
                  tau=None if tau is None else float(tau),
                  epsilon=None if epsilon is None else float(epsilon),
                  labels=None if labels is None else np.asarray(labels).astype(np.int64))
    _write(path, fields)


def save_solution(path, *, task, alpha=None, alpha_hat=None, alpha_check=None, bias=None,
                  F=None) -> None:
    """Write a solution (JSON if ``path`` ends in ``.json``, else a deterministic ``.npz``)."""
    def arr(v):
        return None if v is None else np.asarray(v, dtype=np.float64)

    _write(path, dict(format="dank-solution", version=FORMAT_VERSION, task=task,
                      alpha=arr(alpha), alpha_hat=arr(alpha_hat), alpha_check=arr(alpha_check),
                      bias=None if bias is None else float(bias), F=arr(F)))
