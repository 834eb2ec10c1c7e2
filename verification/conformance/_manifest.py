"""The manifest of a generated instance set (the families, the large set): a JSON file
``{"<set>_version": V, "instances": {id: entry}}`` committed beside the generator, read,
compared with freshly generated entries, and rewritten.
"""

from __future__ import annotations

import json

__all__ = ["read_manifest", "manifest_problems", "write_manifest"]


def read_manifest(path: str) -> dict:
    """The manifest at ``path`` as a dict."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def manifest_problems(entries: dict[str, dict], path: str, version_key: str, version: int, *,
                      field: str | None = None, complete: bool = True) -> list[str]:
    """How freshly generated ``entries`` differ from the manifest at ``path`` (empty: none).

    A manifest of another version is one problem. Otherwise: an entry not in the manifest;
    with ``complete``, an instance of the manifest not generated; an entry other than the
    stored one (only its ``field`` where given). ``O(size of the manifest)``.
    """
    man = read_manifest(path)
    if man.get(version_key) != version:
        return [f"{path}: {version_key} {man.get(version_key)!r}, this code generates version "
                f"{version}"]
    stored = man.get("instances", {})
    out = [f"{i}: not in the manifest" for i in entries if i not in stored]
    if complete:
        out += [f"{i}: in the manifest, not generated" for i in stored if i not in entries]
    out += [f"{i}: sha256 differs from the manifest (the generator or numpy's random stream "
            "changed)" for i, e in entries.items() if i in stored
            and (stored[i] != e if field is None else stored[i][field] != e[field])]
    return out


def write_manifest(path: str, version_key: str, version: int, entries: dict[str, dict]) -> None:
    """Write the manifest of ``entries`` to ``path`` (one-space indented JSON, a final newline)
    and say so on stdout."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({version_key: version, "instances": entries}, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(entries)} instances to {path}")
