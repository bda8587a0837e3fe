"""The package's import graph: layers import only downwards, and no module cycles.

Layers, lowest first (DESIGN.md): mcpfast._core, mcpfast.protocol and mcpfast.auth,
mcpfast.jsonrpc, mcpfast.server and mcpfast.client (side by side, neither imports the
other), mcpfast.transports (which never imports the server either: it is given a
connection factory) and mcpfast.telemetry (side by side: the transports never import the
telemetry, which builds on the server's pipeline and the client's observer hook), then
mcpfast.gateway (built on the server, the client and the transports) and mcpfast.scaleout
(every Redis-backed implementation: it may import the server and the transports, and
nothing below imports it), side by side.

Every import a module makes when it loads counts, and so does every import under
``if TYPE_CHECKING:`` (a type-only import still ties the importer to the imported
module's shape: a cycle through one is a cycle). The compiled modules count too: the
``import`` and ``cimport`` lines of each ``.pyx`` and ``.pxd`` are the edges of the
module they build. Imports inside functions do not count (the convenience entry points
``Server.run``, ``Server.mount``, ``connect()`` and the CLI pick a transport, and wire
the gateway, the scale-out package and the telemetry, when called).
"""

from __future__ import annotations

import ast
import pathlib
import re

import mcpfast

PACKAGE = pathlib.Path(mcpfast.__file__).parent
RANK = {"_core": 0, "protocol": 1, "auth": 1, "jsonrpc": 2, "server": 3, "client": 3,
        "transports": 4, "telemetry": 4, "gateway": 5, "scaleout": 5}
# Pairs of layers where the upper one must not import the lower one all the same.
FORBIDDEN = {("transports", "server")}
# Compiled modules: their import lines, from the files Cython reads.
COMPILED_SUFFIXES = (".pyx", ".pxd")


def _module(path: pathlib.Path) -> str:
    """The dotted module name of a file of the package (.py, .pyx or .pxd)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(*suffixes: str) -> list[pathlib.Path]:
    return sorted(path for suffix in suffixes for path in PACKAGE.rglob(f"*{suffix}"))


MODULES = {_module(path) for path in _sources(".py", *COMPILED_SUFFIXES)}


def _named(module: str, names: list[str]) -> set[str]:
    """``from module import a, b``: the submodules among a, b, else the module itself."""
    return {f"{module}.{name}" if f"{module}.{name}" in MODULES else module for name in names}


def _python_imports(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(imports made at load time, imports under ``if TYPE_CHECKING:``) of one module."""
    load: set[str] = set()
    typing_only: set[str] = set()

    def visit(nodes: list[ast.stmt], found: set[str]) -> None:
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] == "mcpfast":
                    found.update(_named(node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "mcpfast")
            elif isinstance(node, ast.If):
                test = node.test
                if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                    visit(node.body, typing_only)
                    visit(node.orelse, found)
                    continue
                visit(node.body, found)
                visit(node.orelse, found)
            elif isinstance(node, (ast.Try, ast.With)):
                visit(node.body, found)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, found)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, found)

    visit(tree.body, load)
    return load, typing_only


# A module-level (unindented) import line of a .pyx/.pxd: "from X cimport ..." /
# "from X import ..." / "cimport X" / "import X"; continuation lines carry no module.
_COMPILED_FROM = re.compile(r"^from\s+(mcpfast(?:\.\w+)*)\s+c?import\s+\(?([\w\s,]*)")
_COMPILED_IMPORT = re.compile(r"^c?import\s+(mcpfast(?:\.\w+)*)")


def _compiled_imports(text: str) -> set[str]:
    found: set[str] = set()
    for line in text.splitlines():
        match = _COMPILED_FROM.match(line)
        if match:
            names = [part.split()[0] for part in match.group(2).split(",") if part.split()]
            found.update(_named(match.group(1), names) if names else {match.group(1)})
            continue
        match = _COMPILED_IMPORT.match(line)
        if match:
            found.add(match.group(1))
    return found


def _edges() -> dict[str, dict[str, str]]:
    """Every module's imports: ``{module: {imported: kind}}``, kind "load", "type" or
    "compiled" (a load-time import wins over a type-only one of the same module)."""
    graph: dict[str, dict[str, str]] = {}
    for path in _sources(".py"):
        load, typing_only = _python_imports(ast.parse(path.read_text(encoding="utf-8")))
        edges = graph.setdefault(_module(path), {})
        edges.update({imported: "type" for imported in typing_only})
        edges.update({imported: "load" for imported in load})
    for path in _sources(*COMPILED_SUFFIXES):
        edges = graph.setdefault(_module(path), {})
        for imported in _compiled_imports(path.read_text(encoding="utf-8")):
            edges.setdefault(imported, "compiled")
    for module, edges in graph.items():
        edges.pop(module, None)  # a .pyx cimporting its own .pxd
    return graph


def _graph() -> dict[str, set[str]]:
    return {module: set(edges) for module, edges in _edges().items()}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[list[str]] = []

    def walk(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in graph:
                continue
            if state.get(imported) == 1:
                cycles.append(path[path.index(imported):] + [imported])
            elif imported not in state:
                walk(imported)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module)
    return cycles


def test_the_graph_sees_type_only_and_compiled_imports():
    edges = _edges()
    # Sanity of the scanner itself: a known compiled edge and the kinds it reports.
    assert edges["mcpfast.server.context_factories"]["mcpfast._core.dispatch"] == "compiled"
    assert "mcpfast.transports.http.post_reply" in edges["mcpfast.transports.http.post_front"]
    kinds = {kind for module_edges in edges.values() for kind in module_edges.values()}
    assert kinds >= {"load", "compiled"}


def test_layers_import_only_downwards():
    upward = []
    for module, imports in _edges().items():
        mine = _layer(module)
        if mine is None:
            continue
        for imported, kind in imports.items():
            theirs = _layer(imported)
            if theirs is None:
                continue
            if (RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine)
                    or (mine, theirs) in FORBIDDEN):
                upward.append(f"{module} -> {imported} ({kind})")
    assert upward == []


def test_nothing_below_imports_the_scale_out_package():
    below = [f"{module} -> {imported}" for module, imports in _graph().items()
             if _layer(module) not in ("scaleout", None)
             for imported in imports if _layer(imported) == "scaleout"]
    assert below == []


def test_every_redis_module_is_in_the_scale_out_package():
    elsewhere = [str(path.relative_to(PACKAGE)) for path in _sources(".py")
                 if "redis" in path.name and _layer(_module(path)) != "scaleout"]
    assert elsewhere == []


def test_no_import_cycles():
    # Type-only and compiled imports count: no cycle is closed through TYPE_CHECKING.
    assert _cycles(_graph()) == []
