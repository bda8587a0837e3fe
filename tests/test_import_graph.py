"""The package's import graph: layers import only downwards, and no module cycles.

Layers, lowest first (DESIGN.md): mcpfast._core, mcpfast.protocol, mcpfast.jsonrpc,
mcpfast.server and mcpfast.client (side by side, neither imports the other),
mcpfast.transports, mcpfast.gateway (above server and client). Imports made when a module loads count; imports under
``if TYPE_CHECKING:`` (types only) and inside functions (the convenience entry points
``Server.run`` and ``connect()`` pick a transport when called) do not.
"""

from __future__ import annotations

import ast
import pathlib

import mcpfast

PACKAGE = pathlib.Path(mcpfast.__file__).parent
RANK = {"_core": 0, "protocol": 1, "auth": 1, "jsonrpc": 2, "server": 3, "client": 3, "transports": 4, "gateway": 5}


def _module(path: pathlib.Path) -> str:
    """The dotted module name of a file of the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module(path) for path in PACKAGE.rglob("*.py")}


def _load_time_imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] == "mcpfast":
                    # ``from package import submodule`` imports the submodule.
                    found.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES
                                 else node.module for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "mcpfast")
            elif isinstance(node, ast.If):
                test = node.test
                if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                    visit(node.orelse)
                    continue
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.Try, ast.With)):
                visit(node.body)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)

    visit(tree.body)
    return found


def _graph() -> dict[str, set[str]]:
    return {
        _module(path): _load_time_imports(ast.parse(path.read_text(encoding="utf-8")))
        for path in PACKAGE.rglob("*.py")
    }


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def test_layers_import_only_downwards():
    upward = []
    for module, imports in _graph().items():
        mine = _layer(module)
        if mine is None:
            continue
        for imported in imports:
            theirs = _layer(imported)
            if theirs is None:
                continue
            if RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_no_import_cycles():
    graph = _graph()
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
    assert cycles == []
