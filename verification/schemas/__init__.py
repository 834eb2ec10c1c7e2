"""JSON Schemas (draft 2020-12) of the JSON files the package reads and writes, validated by
``jsonschema``'s :class:`~jsonschema.Draft202012Validator`.

Schemas (``verification/schemas/<name>.schema.json``): ``instance`` and ``solution`` (the oracle
formats, version 1, docs/FORMATS.md), ``conformance-results`` (``dank-verify conformance``'s
``results.json``), ``conformance-export`` (the ``index.json`` of its ``--export``),
``verify-results`` (``dank-verify``'s ``results.json``, layout version 2),
``reproduce-results`` (``dank-reproduce``'s ``results.json``), ``golden-manifest``
(``verification/golden/MANIFEST.json``), ``families-manifest``
(``verification/conformance/families.json``) and ``large-manifest``
(``verification/conformance/large.json``).

Two type conventions of these files are stricter than JSON Schema's defaults: a ``number`` is
finite (the writers never emit ``Infinity`` or ``NaN``: non-finite values are ``null`` or
strings) and an ``integer`` is a JSON integer (not ``1.0``).  The schemas describe the
structure and types; the reader (:mod:`verification.formats`) also checks what a schema cannot
say (shapes agree with ``n``, ``K`` is PSD, labels are -1 / +1, ...).
"""

from __future__ import annotations

import functools
import json
import math
import os

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

__all__ = ["SCHEMAS", "SchemaError", "load_schema", "validate"]

SCHEMA_DIR = os.path.dirname(__file__)
SCHEMAS = ("instance", "solution", "conformance-results", "conformance-export",
           "verify-results",
           "reproduce-results", "golden-manifest", "families-manifest", "large-manifest")


class SchemaError(ValueError):
    """A JSON value does not match its schema (the message gives the path in the value)."""


def _is_number(checker, v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_integer(checker, v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_Validator = jsonschema.validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"number": _is_number, "integer": _is_integer}))


@functools.cache
def _named(name: str) -> str:
    with open(os.path.join(SCHEMA_DIR, f"{name}.schema.json"), encoding="utf-8") as fh:
        return fh.read()


def load_schema(name: str) -> dict:
    """The schema ``name`` (one of :data:`SCHEMAS`)."""
    if name not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS}, got {name!r}")
    return json.loads(_named(name))


def _path(err) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)


def validate(value, schema: dict | str) -> None:
    """Raise :class:`SchemaError` (naming the path, e.g. ``$.results[3].status``) unless
    ``value`` (parsed JSON) matches ``schema`` (a schema dict or a name in :data:`SCHEMAS`).

    A schema that is not itself a valid draft 2020-12 schema is a ``ValueError``.
    """
    if isinstance(schema, str):
        schema = load_schema(schema)
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"not a valid draft 2020-12 schema: {exc.message}") from None
    err = best_match(_Validator(schema).iter_errors(value))
    if err is not None:
        msg, shown = err.message, repr(err.instance)
        if len(shown) > 80:  # a whole document would swamp the message: the path names it
            msg = msg.replace(shown, "the value")
        raise SchemaError(f"{_path(err)}: {msg}")
