"""The requests a server may send to the client: sampling, elicitation, roots (and ping).

The client serves them with functions given to :class:`~mcpfast.client.Client` (or
``connect``); each is advertised in the client's capabilities only when given:

``sampling=fn``
    ``sampling/createMessage``: ``fn(params)`` gets the request's params (messages,
    maxTokens, systemPrompt, ...) and returns a CreateMessageResult as a dict
    (``{"role": "assistant", "content": {...}, "model": ..., "stopReason": ...}``).
``elicitation=fn``
    ``elicitation/create``: ``fn(params)`` gets message and requestedSchema (form mode)
    or url and elicitationId (URL mode, advertised only with
    ``capabilities={"elicitation": {"url": {}}}``) and returns an ElicitResult dict
    (``{"action": "accept" | "decline" | "cancel", "content": {...}}``). On accept, the
    fields of the requested schema the function left out of ``content`` get the schema's
    ``default`` values, as the specification asks (SEP-1034), so that a form that shows
    defaults can return only what the user changed.
``roots=[...]`` or ``roots=fn``
    ``roots/list``: a list of roots (file:// URI strings, ``{"uri", "name"}`` dicts,
    objects with ``uri``/``name`` attributes or absolute paths), or a function returning
    one, called for each request. ``Client.set_roots`` replaces them and sends
    ``notifications/roots/list_changed``.

A function given as ``with_request(fn)`` is also told which request it serves:
``fn(params, request)`` (roots: ``fn(request)``), ``request`` a :class:`ServerRequest`
whose ``related_request_id`` is the id of this client's own request the server's belongs
to where the transport knows it (Streamable HTTP: the request on whose POST stream it
came), else None (stdio, the GET stream, a 2026-07-28 input round). A gateway uses it to
put the question to the client whose call caused it.

Handler functions may be sync or async. Raising a JSONRPCError answers the server with
that error (for example a user refusing to sample: ``JSONRPCError(-1, "User rejected
sampling request")``); any other exception, or a result of the wrong shape, is logged and
answered with -32603 Internal error.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from mcpfast.jsonrpc.contract import related_request_id
from mcpfast.jsonrpc.router import is_async_handler

__all__ = [
    "ELICIT_ACTIONS",
    "Roots",
    "ServerRequest",
    "WithRequest",
    "elicitation_handler",
    "normalize_roots",
    "sampling_handler",
    "with_request",
]

ELICIT_ACTIONS = frozenset({"accept", "decline", "cancel"})
_SAMPLING_REQUIRED = ("role", "content", "model")


def _check_sampling_result(params: Any, result: Any) -> dict:
    if not isinstance(result, Mapping):
        raise TypeError(
            f"the sampling handler must return a CreateMessageResult dict, not "
            f"{type(result).__name__}"
        )
    missing = [key for key in _SAMPLING_REQUIRED if key not in result]
    if missing:
        raise TypeError(f"the sampling handler's result lacks {', '.join(missing)}: {result!r}")
    return dict(result)


def _check_elicitation_result(params: Any, result: Any) -> dict:
    if not isinstance(result, Mapping):
        raise TypeError(
            f"the elicitation handler must return an ElicitResult dict, not {type(result).__name__}"
        )
    action = result.get("action")
    if action not in ELICIT_ACTIONS:
        raise TypeError(
            f"the elicitation handler's result needs action 'accept', 'decline' or 'cancel', "
            f"got {action!r}"
        )
    answer = dict(result)
    if action == "accept":
        defaults = _schema_defaults(params)
        if defaults:
            content = answer.get("content")
            if content is None or isinstance(content, Mapping):
                answer["content"] = {**defaults, **(content or {})}
    return answer


def _schema_defaults(params: Any) -> dict[str, Any]:
    """The ``default`` of each property of a form elicitation's requestedSchema."""
    schema = params.get("requestedSchema") if isinstance(params, Mapping) else None
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {name: spec["default"] for name, spec in properties.items()
            if isinstance(spec, Mapping) and "default" in spec}


class ServerRequest:
    """A request from the server as a :func:`with_request` handler sees it: ``id``,
    ``method`` and ``related_request_id`` (module docstring)."""

    __slots__ = ("id", "method", "related_request_id")

    def __init__(self, request_id: Any, method: str, related: Any = None) -> None:
        self.id = request_id
        self.method = method
        self.related_request_id = related

    @classmethod
    def of(cls, ctx: Any, method: str) -> ServerRequest:
        """The request of a router handler's ``ctx`` (None: a 2026-07-28 input round,
        answered with no request of its own)."""
        if ctx is None:
            return cls(None, method)
        return cls(ctx.request_id, method, related_request_id(ctx.channel))

    def __repr__(self) -> str:
        return f"<ServerRequest {self.method} id={self.id!r} related={self.related_request_id!r}>"


class WithRequest:
    """A handler function called with the :class:`ServerRequest` too (:func:`with_request`)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"with_request() needs a callable, not {type(fn).__name__}")
        self.fn = fn


def with_request(fn: Callable[..., Any]) -> WithRequest:
    """``fn`` to be called as ``fn(params, request)`` (roots: ``fn(request)``)."""
    return WithRequest(fn)


def _adapt(fn: Any, check: Callable[[Any, Any], dict], what: str) -> Callable[..., Any]:
    """A router handler ``(params, ctx)`` calling ``fn(params)`` (a WithRequest's
    ``fn(params, request)``) and checking its result.

    A sync fn is answered inline (no task); an async one (or a sync one returning an
    awaitable) runs as the session's task.
    """
    if isinstance(fn, WithRequest):
        return _adapt_with_request(fn.fn, check, what)
    if not callable(fn):
        raise TypeError(f"the {what} handler must be callable, not {type(fn).__name__}")

    if is_async_handler(fn):
        async def handle_async(params: Any, ctx: Any) -> dict:
            return check(params, await fn(params))

        return handle_async

    def handle(params: Any, ctx: Any) -> Any:
        result = fn(params)
        if inspect.isawaitable(result):
            return _finish(check, params, result)
        return check(params, result)

    return handle


def _adapt_with_request(fn: Callable[..., Any], check: Callable[[Any, Any], dict],
                        what: str) -> Callable[..., Any]:
    method = "sampling/createMessage" if what == "sampling" else "elicitation/create"

    def handle(params: Any, ctx: Any) -> Any:
        # The request is read now: ctx.channel is gone once the request is answered.
        result = fn(params, ServerRequest.of(ctx, method))
        if inspect.isawaitable(result):
            return _finish(check, params, result)
        return check(params, result)

    return handle


async def _finish(check: Callable[[Any, Any], dict], params: Any, awaitable: Any) -> dict:
    return check(params, await awaitable)


def sampling_handler(fn: Union[Callable[[Any], Any], WithRequest]) -> Callable[..., Any]:
    """The ``sampling/createMessage`` route for a user's sampling function."""
    return _adapt(fn, _check_sampling_result, "sampling")


def elicitation_handler(fn: Union[Callable[[Any], Any], WithRequest]) -> Callable[..., Any]:
    """The ``elicitation/create`` route for a user's elicitation function."""
    return _adapt(fn, _check_elicitation_result, "elicitation")


def _root(item: Any) -> dict:
    """One Root object from a URI string, a mapping, a path or an object with ``uri``."""
    if isinstance(item, str):
        root: dict[str, Any] = {"uri": item}
    elif isinstance(item, os.PathLike):
        path = Path(item)
        if not path.is_absolute():
            raise ValueError(f"a root path must be absolute, got {item!r}")
        root = {"uri": path.as_uri()}
    elif isinstance(item, Mapping):
        if "uri" not in item:
            raise ValueError(f"a root needs a 'uri', got {dict(item)!r}")
        root = dict(item)
    elif hasattr(item, "uri"):
        root = {"uri": item.uri}
        name = getattr(item, "name", None)
        if name is not None:
            root["name"] = name
    else:
        raise TypeError(
            f"a root is a file:// URI string, a path, a mapping with 'uri' or an object with a "
            f"'uri' attribute, not {type(item).__name__}"
        )
    uri = root["uri"]
    if type(uri) is not str or not uri.startswith("file://"):
        raise ValueError(f"a root URI must be a str starting with file://, got {uri!r}")
    name = root.get("name")
    if name is not None and type(name) is not str:
        raise TypeError(f"a root name must be a str, not {type(name).__name__}")
    return root


def normalize_roots(roots: Iterable[Any]) -> list[dict]:
    """Root objects (``{"uri": "file://...", "name"?: ...}``) from what a user gives."""
    if isinstance(roots, (str, bytes, Mapping)):
        raise TypeError("roots must be a list of roots, not a single root")
    return [_root(item) for item in roots]


class Roots:
    """The roots a client offers: a fixed list or a function producing one per request
    (a :func:`with_request` one gets the request)."""

    __slots__ = ("_static", "_source", "_with_request")

    def __init__(self, roots: Any) -> None:
        self._static: Optional[list[dict]] = None
        self._source: Optional[Callable[..., Any]] = None
        self._with_request = False
        self.set(roots)

    def set(self, roots: Any) -> None:
        """Replace the roots (a list, or a sync/async function returning one)."""
        self._with_request = isinstance(roots, WithRequest)
        if self._with_request:
            self._source, self._static = roots.fn, None
        elif callable(roots) and not isinstance(roots, (list, tuple)):
            self._source, self._static = roots, None
        else:
            self._static, self._source = normalize_roots(roots), None

    def current(self, request: Optional[ServerRequest] = None) -> Any:
        """The ListRootsResult, or an awaitable of it when the source is async
        (``request``: what a with_request source is given)."""
        if self._static is not None:
            return {"roots": list(self._static)}
        if self._with_request:
            result = self._source(request or ServerRequest(None, "roots/list"))  # type: ignore[misc]
        else:
            result = self._source()  # type: ignore[misc]
        if inspect.isawaitable(result):
            return self._finish(result)
        return {"roots": normalize_roots(result)}

    @staticmethod
    async def _finish(awaitable: Any) -> dict:
        return {"roots": normalize_roots(await awaitable)}

    def handle(self, params: Any, ctx: Any) -> Any:
        """The ``roots/list`` route."""
        if self._with_request:
            return self.current(ServerRequest.of(ctx, "roots/list"))
        return self.current()
