"""ScopeCheck: the scopes each tool, resource and prompt needs, checked on every request.

``@app.tool(scopes=["files:write"])`` (and ``@app.resource(..., scopes=...)``,
``@app.prompt(scopes=...)``) registers what the component needs here; the server installs
this middleware, outermost, the first time a component names scopes. Then:

- a call (``tools/call``, ``resources/read``, ``prompts/get``) whose caller's token
  (``ctx.auth``) lacks one of them is refused before its handler runs with
  :class:`~mcpfast.jsonrpc.errors.InsufficientScope` (-32003, ``data.requiredScopes``:
  every scope the component needs). Over Streamable HTTP a POST refused so is answered
  403 with ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`` (the
  step-up challenge of the 2025-11-25 authorization specification); elsewhere the
  JSON-RPC error is the answer. A caller without a token (stdio, TCP, HTTP without
  ``auth=``) has no scopes: such components are for authenticated callers only;
- the lists (``tools/list``, ``resources/list``, ``resources/templates/list``,
  ``prompts/list``) leave out what the caller may not use.

A resource template's scopes cover every URI it matches. Names from the peer never grow the
tables (they are keyed by what the server registered).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from mcpfast.jsonrpc.errors import InsufficientScope
from mcpfast.server.middleware.pipeline import CallNext, Middleware
from mcpfast.server.uri_template import UriTemplate

__all__ = ["KINDS", "ScopeCheck"]

#: The kinds of component that may need scopes.
KINDS = ("tool", "resource", "template", "prompt")

_EMPTY: frozenset[str] = frozenset()


def _scope_set(scopes: Iterable[str]) -> frozenset[str]:
    if isinstance(scopes, str):
        raise TypeError("scopes must be a list of scope strings, not one str")
    chosen = frozenset(scopes)
    for scope in chosen:
        # RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
        if not isinstance(scope, str) or not scope or any(c in ' "\\' or not "!" <= c <= "~" for c in scope):
            raise ValueError(f"a scope is a non-empty string of visible characters other than "
                             f"'\"' and '\\\\', got {scope!r}")
    return chosen


class ScopeCheck(Middleware):
    """The scopes of each component, checked on calls and applied to lists (module docstring)."""

    eager = True

    def __init__(self) -> None:
        self.tools: dict[str, frozenset[str]] = {}
        self.resources: dict[str, frozenset[str]] = {}
        self.prompts: dict[str, frozenset[str]] = {}
        # template string -> (its parsed template, scopes)
        self.templates: dict[str, tuple[UriTemplate, frozenset[str]]] = {}

    def require(self, kind: str, key: str, scopes: Iterable[str]) -> None:
        """Make ``key`` (a tool or prompt name, a resource URI, a template string) of ``kind``
        need ``scopes`` (none: it needs nothing any more)."""
        needed = _scope_set(scopes)
        if kind == "template":
            if needed:
                self.templates[key] = (UriTemplate(key), needed)
            else:
                self.templates.pop(key, None)
            return
        table = {"tool": self.tools, "resource": self.resources, "prompt": self.prompts}.get(kind)
        if table is None:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if needed:
            table[key] = needed
        else:
            table.pop(key, None)

    # -- the rule ----------------------------------------------------------------------

    @staticmethod
    def allowed(ctx: Any, needed: frozenset[str]) -> bool:
        """Whether the caller's token grants every scope of ``needed``."""
        if not needed:
            return True
        auth = ctx.auth
        return auth is not None and auth.scopes.issuperset(needed)

    def resource_scopes(self, uri: Any) -> frozenset[str]:
        """What reading ``uri`` needs: its own scopes, else those of the templates matching it."""
        if type(uri) is not str:
            return _EMPTY
        found = self.resources.get(uri)
        if found is not None:
            return found
        needed: frozenset[str] = _EMPTY
        for template, scopes in self.templates.values():
            if template.match(uri) is not None:
                needed = needed | scopes
        return needed

    def _check(self, ctx: Any, needed: Optional[frozenset[str]]) -> None:
        if needed and not self.allowed(ctx, needed):
            raise InsufficientScope(needed)

    # -- calls -------------------------------------------------------------------------

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        params = ctx.params
        name = params.get("name") if type(params) is dict else None
        if type(name) is str:
            self._check(ctx, self.tools.get(name))
        return await call_next(ctx)

    async def on_read_resource(self, ctx: Any, call_next: CallNext) -> Any:
        params = ctx.params
        if self.resources or self.templates:
            self._check(ctx, self.resource_scopes(params.get("uri") if type(params) is dict else None))
        return await call_next(ctx)

    async def on_get_prompt(self, ctx: Any, call_next: CallNext) -> Any:
        params = ctx.params
        name = params.get("name") if type(params) is dict else None
        if type(name) is str:
            self._check(ctx, self.prompts.get(name))
        return await call_next(ctx)

    # -- lists -------------------------------------------------------------------------

    def _filtered(self, ctx: Any, result: Any, list_key: str, id_key: str,
                  needed_of: Any) -> Any:
        if type(result) is not dict or type(result.get(list_key)) is not list:
            return result
        items = result[list_key]
        kept = [item for item in items
                if type(item) is not dict or self.allowed(ctx, needed_of(item.get(id_key)) or _EMPTY)]
        if len(kept) == len(items):
            return result
        # A copy: the catalogue caches its results and shares them between callers.
        return {**result, list_key: kept}

    async def on_list_tools(self, ctx: Any, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        return self._filtered(ctx, result, "tools", "name", self.tools.get) if self.tools else result

    async def on_list_prompts(self, ctx: Any, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        return self._filtered(ctx, result, "prompts", "name", self.prompts.get) if self.prompts else result

    async def on_list_resources(self, ctx: Any, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if not self.resources:
            return result
        return self._filtered(ctx, result, "resources", "uri", self.resources.get)

    async def on_list_resource_templates(self, ctx: Any, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if not self.templates:
            return result

        def needed_of(key: Any) -> frozenset[str]:
            found = self.templates.get(key) if type(key) is str else None
            return found[1] if found is not None else _EMPTY

        return self._filtered(ctx, result, "resourceTemplates", "uriTemplate", needed_of)

    def __repr__(self) -> str:
        counts = (len(self.tools), len(self.resources) + len(self.templates), len(self.prompts))
        return "<ScopeCheck %d tools, %d resources, %d prompts>" % counts
