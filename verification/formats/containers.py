"""Raw fields of one file: content sniffing, ``.npz`` members (header first), JSON objects.

Nothing is decoded before its size is known; nothing is unpickled.  A :class:`Fields` object
knows its field names up front and decodes a value on demand (typed checks:
:mod:`verification.formats.fields`).
"""

from __future__ import annotations

import json
import math
import os
import re
import zipfile
import zlib

import numpy as np

from . import spec
from .spec import FormatError, gib, one_line

__all__ = ["sniff", "Fields", "open_fields"]


def sniff(path) -> str:
    """Return the container of a file, ``"npz"`` or ``"json"``, from its first bytes.

    The extension is not consulted.  Reads 8 bytes.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    {"npz", "json"}
        ``"npz"`` for a zip archive; ``"json"`` for anything else that is not refused (the
        JSON reader then checks the text).

    Raises
    ------
    FormatError
        A missing, unreadable or empty file, a directory, a bare ``.npy`` array, a pickle or
        a damaged zip archive.
    """
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


class Fields:
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


class _NpzFields(Fields):
    def __init__(self, path, max_array_bytes: int):
        self._max = max_array_bytes
        try:
            self._zf = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise FormatError(f"{path}: not a readable zip (.npz) archive, truncated or corrupt "
                              f"({exc})") from exc
        except (OSError, EOFError, ValueError) as exc:
            raise FormatError(f"{path}: cannot open as an .npz archive ({exc})") from exc
        infos = self._zf.infolist()
        if len(infos) > spec.MAX_MEMBERS:
            self._zf.close()
            raise FormatError(f"{path}: archive has {len(infos)} members (at most "
                              f"{spec.MAX_MEMBERS} fields are defined)")
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
            if info.file_size > self._max + 65536:
                self._zf.close()
                raise FormatError(f"{path}: field {key!r} is {gib(info.file_size)} "
                                  f"uncompressed, more than the {gib(self._max)} limit")
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
                                      f".npy header ({one_line(exc)})") from exc
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
                if nbytes > self._max:
                    raise FormatError(f"{path}: field {key!r} declares shape {tuple(shape)} of "
                                      f"{dtype} = {gib(nbytes)}, more than the "
                                      f"{gib(self._max)} limit; refused before reading")
                avail = spec.available_memory()
                if avail is not None and nbytes > avail:
                    raise FormatError(f"{path}: field {key!r} declares shape {tuple(shape)} of "
                                      f"{dtype} = {gib(nbytes)}, more than the {gib(avail)} of "
                                      "memory this machine has available; refused before "
                                      "reading")
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
                              f"({one_line(exc)})") from exc
        return buf.view(dtype).reshape(shape, order="F" if fortran else "C")


# What other languages write for a non-finite number (Octave/MATLAB ``Inf``, ``NaN``, ``NA``;
# C's ``inf``, ``nan``; JavaScript's and Python's ``Infinity``), optionally signed.
_NONFINITE = re.compile(r"[-+]?(?:Infinity|infinity|INFINITY|Inf|inf|INF|NaN|nan|NAN|NA)"
                        r"(?![A-Za-z0-9_])")
# A JSON string (skipped) or a non-finite token outside strings.
_STRING_OR_NONFINITE = re.compile(r'"(?:[^"\\]|\\.)*"|(' + _NONFINITE.pattern + ")")


class _Constant(Exception):
    """Python's decoder accepted ``NaN``/``Infinity``/``-Infinity`` (``parse_constant``)."""


def _no_constants(name):
    raise _Constant(name)


def _nonfinite_error(text: str, pos: int, token: str) -> FormatError:
    """The one-line message for a non-finite token at character ``pos`` of ``text``."""
    line = text.count("\n", 0, pos) + 1
    col = pos - text.rfind("\n", 0, pos)
    return FormatError(f"non-standard JSON constant {token} at line {line}, column {col}: JSON "
                       "has no such number (it has no infinity and no NaN; every number in "
                       "these files must be finite)")


def _constant_error(text: str) -> FormatError:
    """Locate the first non-finite token outside strings (the one the decoder refused)."""
    for m in _STRING_OR_NONFINITE.finditer(text):
        if m.group(1):
            return _nonfinite_error(text, m.start(1), m.group(1))
    return FormatError("non-standard JSON constant (JSON has no infinity and no NaN)")


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise FormatError(f"duplicate JSON key {k!r}")
        out[k] = v
    return out


class _JsonFields(Fields):
    def __init__(self, path, max_json_bytes: int):
        size = os.path.getsize(path)
        if size > max_json_bytes:
            raise FormatError(f"{path}: JSON file of {size} bytes exceeds the "
                              f"{max_json_bytes / 2**20:.3g} MiB limit (use .npz for large "
                              "arrays)")
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
        except _Constant:
            raise FormatError(f"{path}: {_constant_error(text)}") from None
        except json.JSONDecodeError as exc:
            m = _NONFINITE.match(text, exc.pos)
            if m:
                raise FormatError(f"{path}: {_nonfinite_error(text, exc.pos, m.group())}") \
                    from None
            raise FormatError(f"{path}: not valid JSON ({exc})") from exc
        except RecursionError as exc:
            raise FormatError(f"{path}: JSON nested too deeply") from exc
        if not isinstance(raw, dict):
            raise FormatError(f"{path}: top level must be a JSON object")
        super().__init__(path, "json", frozenset(raw), raw.__getitem__)


def open_fields(path, max_array_bytes: int | None = None,
                max_json_bytes: int | None = None) -> Fields:
    """Open an ``.npz`` archive or a JSON object of fields, refusing whatever exceeds the limits
    (``None``: :data:`~verification.formats.MAX_ARRAY_BYTES`, ``MAX_JSON_BYTES`)."""
    path = os.fspath(path)
    kind = sniff(path)
    if kind == "npz":
        return _NpzFields(path, spec.MAX_ARRAY_BYTES if max_array_bytes is None
                          else max_array_bytes)
    return _JsonFields(path, spec.MAX_JSON_BYTES if max_json_bytes is None else max_json_bytes)
