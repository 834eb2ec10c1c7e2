"""JSON Schemas (draft 2020-12 subset) of the JSON files the package reads and writes, and a
small validator for exactly the subset they use.

Schemas (``verification/schemas/<name>.schema.json``): ``instance`` and ``solution`` (the oracle
formats, version 1, docs/FORMATS.md), ``conformance-results`` (``dank-verify conformance``'s
``results.json``), ``conformance-export`` (the ``index.json`` of its ``--export``),
``verify-results`` (``dank-verify``'s ``results.json``, layout version 2),
``reproduce-results`` (``dank-reproduce``'s ``results.json``), ``golden-manifest``
(``verification/golden/MANIFEST.json``) and ``families-manifest``
(``verification/conformance/families.json``).

The validator supports ``type``, ``const``, ``enum``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``minItems``, ``minimum``, ``exclusiveMinimum``,
``maxLength``, ``anyOf``, ``oneOf``, ``not`` and local ``$ref`` (``#/$defs/NAME``); any other
keyword in a schema is an error, so a schema cannot silently ask for more than is checked.
(``jsonschema`` is not a dependency of this project; this keeps it so.)  The schemas describe
the structure and types; the reader (:mod:`verification.formats`) also checks what a schema
cannot say (shapes agree with ``n``, ``K`` is PSD, labels are -1 / +1, ...).
"""

from __future__ import annotations

import json
import math
import os

__all__ = ["SCHEMAS", "SchemaError", "load_schema", "validate"]

SCHEMA_DIR = os.path.dirname(__file__)
SCHEMAS = ("instance", "solution", "conformance-results", "conformance-export",
           "verify-results", "reproduce-results", "golden-manifest", "families-manifest")
_KNOWN = frozenset({"$schema", "$id", "$defs", "title", "description", "type", "const", "enum",
                    "properties", "required", "additionalProperties", "items", "minItems",
                    "minimum", "exclusiveMinimum", "maxLength", "anyOf", "oneOf", "not",
                    "$ref"})
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


class SchemaError(ValueError):
    """A JSON value does not match its schema (the message gives the path in the value)."""


def load_schema(name: str) -> dict:
    """The schema ``name`` (one of :data:`SCHEMAS`)."""
    if name not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS}, got {name!r}")
    with open(os.path.join(SCHEMA_DIR, f"{name}.schema.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _is_type(v, t: str) -> bool:
    if t in ("number", "integer"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        return isinstance(v, int) if t == "integer" else math.isfinite(v)
    if t == "null":
        return v is None
    return isinstance(v, _TYPES[t])


def _ok(v, schema, root, path="$") -> bool:
    try:
        _check(v, schema, root, path)
    except SchemaError:
        return False
    return True


def _check_combinators(v, s, root, path) -> None:
    if "anyOf" in s and not any(_ok(v, sub, root, path) for sub in s["anyOf"]):
        raise SchemaError(f"{path}: matches none of anyOf ({s.get('title', 'alternatives')})")
    if "oneOf" in s:
        hits = sum(_ok(v, sub, root, path) for sub in s["oneOf"])
        if hits != 1:
            detail = "; ".join(_why(v, sub, root, path) for sub in s["oneOf"])
            raise SchemaError(f"{path}: matches {hits} of oneOf, expected exactly 1 ({detail})")
    if "not" in s and _ok(v, s["not"], root, path):
        raise SchemaError(f"{path}: matches a schema it must not ({s['not']})")


def _why(v, schema, root, path) -> str:
    """Why ``v`` fails ``schema``, its paths given from the document's root (``path`` is
    where ``v`` sits)."""
    try:
        _check(v, schema, root, path)
    except SchemaError as exc:
        return str(exc)
    return "matches"


def _check_object(v, s, root, path) -> None:
    missing = [k for k in s.get("required", ()) if k not in v]
    if missing:
        raise SchemaError(f"{path}: missing required {missing}")
    props = s.get("properties", {})
    extra = s.get("additionalProperties", True)
    for k, x in v.items():
        if k in props:
            _check(x, props[k], root, f"{path}.{k}")
        elif extra is False:
            raise SchemaError(f"{path}: unexpected property {k!r}")
        elif isinstance(extra, dict):
            _check(x, extra, root, f"{path}.{k}")


def _check(v, s: dict, root: dict, path: str) -> None:
    unknown = set(s) - _KNOWN
    if unknown:
        raise ValueError(f"schema keyword(s) {sorted(unknown)} not supported by this validator")
    if "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"only local $ref '#/$defs/NAME' is supported, got {ref!r}")
        _check(v, root["$defs"][ref[len("#/$defs/"):]], root, path)
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_is_type(v, t) for t in types):
            raise SchemaError(f"{path}: expected {' or '.join(types)}, got {type(v).__name__}")
    if "const" in s and not (v == s["const"] and type(v) is type(s["const"])):
        raise SchemaError(f"{path}: expected {s['const']!r}, got {v!r}")
    if "enum" in s and v not in s["enum"]:
        raise SchemaError(f"{path}: {v!r} is not one of {s['enum']}")
    if _is_type(v, "number"):
        if "minimum" in s and v < s["minimum"]:
            raise SchemaError(f"{path}: {v!r} < minimum {s['minimum']}")
        if "exclusiveMinimum" in s and v <= s["exclusiveMinimum"]:
            raise SchemaError(f"{path}: {v!r} <= exclusiveMinimum {s['exclusiveMinimum']}")
    if isinstance(v, str) and "maxLength" in s and len(v) > s["maxLength"]:
        raise SchemaError(f"{path}: string longer than {s['maxLength']}")
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0):
            raise SchemaError(f"{path}: fewer than {s['minItems']} items")
        if "items" in s:
            for i, x in enumerate(v):
                _check(x, s["items"], root, f"{path}[{i}]")
    if isinstance(v, dict):
        _check_object(v, s, root, path)
    _check_combinators(v, s, root, path)


def validate(value, schema: dict | str) -> None:
    """Raise :class:`SchemaError` (naming the path, e.g. ``$.results[3].status``) unless
    ``value`` (parsed JSON) matches ``schema`` (a schema dict or a name in :data:`SCHEMAS`)."""
    if isinstance(schema, str):
        schema = load_schema(schema)
    _check(value, schema, schema, "$")
