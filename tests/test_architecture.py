"""The shape of the code, checked statically: no import cycle, no function-local
import that does not say why, no long function in ``dank_fast``, and docs/ARCHITECTURE.md names
every module.

Everything is read with :mod:`ast` from the source files of the three packages (nothing is
imported), so a cycle held open by a function-local import is found as well as one at module
level: every ``import`` statement anywhere in a module is an edge of the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dank_fast", "dank_ref", "verification")

# function-local imports are allowed only for start-up time (matplotlib, the CLI's commands,
# optional dependencies), and then the import line (or the comment line right above it) says so
START_UP_WORDS = ("start-up", "startup", "optional")

# modules whose function-local imports are tolerated until they are moved to the top of the
# module; shrink this list, never grow it
LOCAL_IMPORT_ALLOWED: dict[str, set[str]] = {}  # empty: shrink-only, never grow it

# functions of dank_fast over MAX_LINES lines (docstring excluded) that are tolerated until
# they are split; shrink this list, never grow it
MAX_LINES = 60
LONG_FUNCTIONS_ALLOWED: set[str] = set()  # empty: every dank_fast function is short


def _module_files() -> dict[str, Path]:
    """``{dotted module name: path}`` for every module of the three packages."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _module_files()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The modules of the three packages that one import statement in ``module`` loads."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            pkg = module.split(".") if _is_package(module) else module.split(".")[:-1]
            pkg = pkg[: len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([base] if base else []))
        # `from pkg import sub` loads pkg.sub when sub is a module, else only pkg
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    out = []
    for name in names:
        while name and name not in MODULES:  # `import a.b.c as x` of a function: its module
            name = name.rpartition(".")[0]
        if name and name != module:
            out.append(name)
    return out


def _trees() -> dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(), filename=str(path)) for name, path in MODULES.items()}


TREES = _trees()


def import_graph() -> dict[str, set[str]]:
    """Every import statement of every module (module level and function-local) as an edge."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name].update(_resolve(name, node))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state and (found := visit(v)):
                return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state and (found := visit(u)):
            return found
    return None


def _local_imports(tree: ast.Module):
    """``(function node, import node)`` for every import inside a function body."""
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    yield fn, node


def _import_text(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.Import):
        return node.names[0].name
    return "." * node.level + (node.module or "")


def _explained(node, lines: list[str], import_lines: set[int]) -> bool:
    """Whether the import ``node``, or the block of imports and comments right above it, has a
    comment with one of START_UP_WORDS (one comment may explain a block of imports)."""
    k = node.lineno - 1  # 0-based index of the first line of the statement
    text = [lines[i] for i in range(k, node.end_lineno)]
    while k > 0 and (k in import_lines or lines[k - 1].strip().startswith("#")
                     or not lines[k - 1].strip()):
        k -= 1
        text.append(lines[k])
    comments = [t[t.index("#"):] for t in text if "#" in t]
    return any(word in c.lower() for c in comments for word in START_UP_WORDS)


def unexplained_local_imports() -> list[str]:
    """``path:line: import`` for each function-local import without a start-up comment."""
    bad = []
    for name, tree in TREES.items():
        path = MODULES[name]
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text().splitlines()
        local = list(_local_imports(tree))
        # 1-based line numbers of the local import statements, as 0-based "line above" indices
        import_lines = {i for _fn, node in local for i in range(node.lineno, node.end_lineno + 1)}
        for _fn, node in local:
            if _explained(node, lines, import_lines):
                continue
            if _import_text(node) in LOCAL_IMPORT_ALLOWED.get(rel, set()):
                continue
            bad.append(f"{rel}:{node.lineno}: {_import_text(node)}")
    return bad


def _body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of ``fn`` from its ``def`` to its end, without its docstring."""
    n = fn.end_lineno - fn.lineno + 1
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        n -= body[0].end_lineno - body[0].lineno + 1
    return n


def _functions(node: ast.AST, prefix: str = ""):
    """``(qualified name, def node)`` of every function in ``node``, methods and nested ones
    included."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")


def long_functions(package: str = "dank_fast") -> dict[str, int]:
    """``{module:qualified name: lines}`` of the functions of ``package`` over MAX_LINES."""
    return {f"{name}:{qual}": n
            for name, tree in TREES.items() if name.split(".")[0] == package
            for qual, fn in _functions(tree) if (n := _body_lines(fn)) > MAX_LINES}


# --------------------------------------------------------------------------- the checks
def test_the_graph_sees_known_edges():
    """The builder resolves relative, absolute and ``from . import`` forms (else it proves
    nothing): edges that exist today and must stay."""
    graph = import_graph()
    assert "dank_fast.inner" in graph["dank_fast.certificate"]
    assert "dank_fast.svm" in graph["dank_fast"]
    assert "dank_ref.certificate" in graph["verification.oracle"]
    assert "dank_fast" not in graph["dank_ref.svm"]


def test_find_cycle_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_dank_ref_never_imports_dank_fast():
    graph = import_graph()
    bad = {m: sorted(d for d in deps if d.split(".")[0] == "dank_fast")
           for m, deps in graph.items() if m.split(".")[0] == "dank_ref"}
    assert not {m: d for m, d in bad.items() if d}


# --------------------------------------------------------------------------- verification's layers
# The oracle side (what other implementations use: formats, schemas, oracle, golden vectors,
# in-memory API, conformance kit) never imports the study of the paper (verification.study);
# `verification.cli` (`dank-verify`) sits on top of both and loads the study lazily.
STUDY = "verification.study"
ENTRY_POINT = "verification.cli"
# the comparison of this project's own solvers through the kit (reproduction/conformance/): the
# adapters are implementations under test, not part of the oracle; no other oracle module
# imports them
COMPARISON = {"verification.conformance.adapters", "verification.conformance.compare"}
# the only functions of the oracle side that may import dank_fast (function-locally): the
# optional cross-check of `certify(reference=True)`, and the golden vectors' generation and
# their re-certification by both packages
DANK_FAST_ALLOWED = {"verification.oracle": {"_dank_fast_cross_check"},
                     "verification.golden": {"certify_both", "_solve"}}


def _oracle_side() -> list[str]:
    return [m for m in MODULES if m.split(".")[0] == "verification"
            and not (m == STUDY or m.startswith(STUDY + ".")) and m != ENTRY_POINT
            and m not in COMPARISON]


def _is_study(name: str) -> bool:
    return name == STUDY or name.startswith(STUDY + ".")


def _imports_by_function(tree: ast.Module):
    """``(enclosing function name or None, import node)`` for every import statement."""
    local = {id(node): fn.name for fn, node in _local_imports(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield local.get(id(node)), node


def test_the_layers_are_not_empty():
    side = _oracle_side()
    assert {"verification.oracle", "verification.golden", "verification.inmemory",
            "verification.formats.reading", "verification.conformance.kit",
            "verification.schemas"} <= set(side)
    assert "verification.study.claims" in MODULES and "verification.study.runner" in MODULES


def test_oracle_side_never_imports_the_study():
    graph = import_graph()
    bad = {m: sorted(d for d in graph[m] if _is_study(d)) for m in _oracle_side()}
    assert not {m: d for m, d in bad.items() if d}, bad


def test_entry_point_loads_the_study_only_lazily():
    bad = [node.lineno for fn, node in _imports_by_function(TREES[ENTRY_POINT])
           if fn is None and any(_is_study(d) for d in _resolve(ENTRY_POINT, node))]
    assert not bad, f"verification/cli.py imports the study at module level (lines {bad})"


def test_only_the_comparison_imports_the_adapters():
    graph = import_graph()
    users = {m for m, deps in graph.items() if "verification.conformance.adapters" in deps}
    assert users <= {"verification.conformance.compare"}, users


def test_oracle_side_imports_dank_fast_only_in_its_optional_paths():
    bad = []
    for m in _oracle_side():
        for fn, node in _imports_by_function(TREES[m]):
            if any(d.split(".")[0] == "dank_fast" for d in _resolve(m, node)) and \
                    fn not in DANK_FAST_ALLOWED.get(m, set()):
                bad.append(f"{m}:{node.lineno} ({'module level' if fn is None else fn})")
    assert not bad, "dank_fast imported by the oracle side outside its optional paths: " + \
        ", ".join(bad)


def test_function_local_imports_say_why():
    bad = unexplained_local_imports()
    assert not bad, ("function-local imports without a start-up comment (move them to the top "
                     "of the module, or say '# start-up: ...'):\n" + "\n".join(bad))


def test_local_import_allow_list_is_current():
    """Each entry of LOCAL_IMPORT_ALLOWED still exists (a fixed one must leave the list)."""
    present = {(MODULES[n].relative_to(ROOT).as_posix(), _import_text(node))
               for n, tree in TREES.items() for _fn, node in _local_imports(tree)}
    stale = [(f, i) for f, imps in LOCAL_IMPORT_ALLOWED.items() for i in imps
             if (f, i) not in present]
    assert not stale, f"fixed: remove from LOCAL_IMPORT_ALLOWED: {stale}"


def test_no_long_function_in_dank_fast():
    long = long_functions()
    new = {k: v for k, v in long.items() if k not in LONG_FUNCTIONS_ALLOWED}
    assert not new, (f"functions over {MAX_LINES} lines (docstring excluded); split them: "
                     + ", ".join(f"{k} ({v})" for k, v in sorted(new.items())))
    stale = LONG_FUNCTIONS_ALLOWED - set(long)
    assert not stale, f"now short enough: remove from LONG_FUNCTIONS_ALLOWED: {sorted(stale)}"


def test_body_lines_excludes_the_docstring():
    fn = ast.parse('def f():\n    """a\n    b\n    """\n    return 1\n').body[0]
    assert _body_lines(fn) == 2


@pytest.mark.parametrize("module", sorted(MODULES))
def test_architecture_names_every_module(module):
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    path = MODULES[module].relative_to(ROOT).as_posix()
    assert f"`{path}`" in text, (
        f"docs/ARCHITECTURE.md does not name the module {module}: add a line `{path}` (what it "
        "owns) in its layer")


def test_a_start_up_comment_explains_its_block_of_imports_only():
    src = ("def f():\n    # start-up: heavy\n    import a\n    import b\n\n    import c\n"
           "    x = 1\n    import d\n    import e  # optional dependency\n")
    tree = ast.parse(src)
    local = [node for _fn, node in _local_imports(tree)]
    import_lines = {i for node in local for i in range(node.lineno, node.end_lineno + 1)}
    explained = [_explained(node, src.splitlines(), import_lines) for node in local]
    assert explained == [True, True, True, False, True]
