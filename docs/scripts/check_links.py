"""Check the links of a built HTML site: every relative ``href``/``src`` names a file that
exists, every ``#fragment`` names an ``id`` (or ``<a name>``) in its target page, no page
loads a script, stylesheet or image from another host (the site must work offline), and no
page shows markup docutils could not resolve.

Usage: ``python docs/scripts/check_links.py docs/_build/html``; exits 1 listing what is broken.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: attributes that load a resource when the page is shown (``<a href>`` only navigates)
_LOADS = {("script", "src"), ("img", "src"), ("link", "href"), ("iframe", "src"),
          ("source", "src"), ("video", "src"), ("audio", "src"), ("embed", "src")}


#: a stylesheet's ``url(...)`` or ``@import`` of another host
_REMOTE_CSS = re.compile(r"""(url\(\s*|@import\s+)['"]?(https?:)?//[^'")\s;]*""")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[int, str, str, str]] = []  # (line, tag, attribute, url)
        self.problems: list[int] = []  # lines of markup docutils could not resolve

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if "problematic" in (d.get("class") or "").split():  # docutils' unresolved markup
            self.problems.append(self.getpos()[0])
        for key in ("id", "name") if tag == "a" else ("id",):
            if d.get(key):
                self.ids.add(d[key])
        for key in ("href", "src"):
            if d.get(key) is not None:
                if tag == "link" and key == "href" and not _loads(d):
                    continue
                self.links.append((self.getpos()[0], tag, key, d[key]))

    handle_startendtag = handle_starttag


def _loads(attrs: dict) -> bool:
    """A ``<link>`` that fetches something (a stylesheet, an icon, a preload) rather than
    naming a related page (``rel="canonical"``, ``"next"``...)."""
    rel = set((attrs.get("rel") or "").lower().split())
    return bool(rel & {"stylesheet", "icon", "preload", "modulepreload", "shortcut",
                       "apple-touch-icon", "manifest"})


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    page.close()
    return page


def check(site: Path) -> list[str]:
    """Every broken link of the site at ``site``, one line each (``page:line: what``)."""
    site = site.resolve()
    # the theme's templates copied into _static/ are not pages
    pages = {p.resolve(): _parse(p) for p in sorted(site.rglob("*.html"))
             if "_static" not in p.relative_to(site).parts}
    broken: list[str] = []
    for path, page in pages.items():
        rel = path.relative_to(site)
        broken += [f"{rel}:{line}: markup that did not resolve (class=\"problematic\", e.g. an "
                   "unescaped |...| read as a substitution)" for line in page.problems]
        for line, tag, key, url in page.links:
            where = f"{rel}:{line}: <{tag} {key}={url!r}>"
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//"):
                if (tag, key) in _LOADS and parts.scheme in ("http", "https", ""):
                    broken.append(f"{where} loads from another host (the site must work "
                                  "offline)")
                continue  # an outside link, or mailto:, javascript:, data:
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                shown = target.relative_to(site) if target.is_relative_to(site) else target
                broken.append(f"{where}: no file {shown}")
                continue
            fragment = unquote(parts.fragment)
            if not fragment or target.suffix != ".html":
                continue
            ids = pages[target].ids if target in pages else _parse(target).ids
            if fragment not in ids:
                broken.append(f"{where}: no id {fragment!r} in {target.relative_to(site)}")
    for css in sorted(site.rglob("*.css")):  # fonts and images a stylesheet fetches
        text = css.read_text(encoding="utf-8", errors="replace")
        for m in _REMOTE_CSS.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            broken.append(f"{css.relative_to(site)}:{line}: {m.group(0)!r} loads from another "
                          "host (the site must work offline)")
    return broken


def main(argv: list[str]) -> int:
    site = Path(argv[0] if argv else "docs/_build/html")
    if not site.is_dir():
        print(f"no built site at {site}", file=sys.stderr)
        return 2
    broken = check(site)
    for line in broken:
        print(line)
    print(f"{len(broken)} broken link(s)", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
