"""The extra GET routes of the Streamable HTTP endpoint (``extra_routes``: path -> route),
served on the same port, e.g. a Prometheus ``/metrics``.

``route(request)`` returns ``(status, headers, body)``, or an awaitable of it (a route that
gathers what it answers from elsewhere: the metrics of every worker). GET and HEAD only
(405 otherwise), after the endpoint's Host/Origin check, without bearer auth (a scrape
endpoint is protected by where it listens, as Prometheus expects); a route that fails
answers 500.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Awaitable, Callable, Mapping, Optional, Union

from mcpfast.jsonrpc.errors import INVALID_REQUEST
from mcpfast.transports.http import headers as h
from mcpfast.transports.http.messages import HTTPRequest, HTTPResponse, json_error_response
from mcpfast.transports.http.security import HostPolicy

__all__ = ["ExtraRoute", "checked_routes", "extra_answer"]

_LOGGER = logging.getLogger("mcpfast.transports.http")

# route(request) -> (status, headers, body), or an awaitable of it.
ExtraRoute = Callable[[HTTPRequest], Any]


def checked_routes(routes: Optional[Mapping[str, ExtraRoute]], endpoint_path: str) -> dict[str, ExtraRoute]:
    """The routes, checked: paths start with '/' and are not the endpoint's; callables."""
    found: dict[str, ExtraRoute] = {}
    for path, route in (routes or {}).items():
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"an extra route's path must start with '/', got {path!r}")
        if path == endpoint_path:
            raise ValueError(f"the extra route {path!r} is the MCP endpoint's path")
        if not callable(route):
            raise TypeError(f"the extra route {path!r} must be callable as route(request), "
                            f"not {type(route).__name__}")
        found[path] = route
    return found


def extra_answer(route: ExtraRoute, request: HTTPRequest,
                 host_policy: HostPolicy) -> Union[HTTPResponse, Awaitable[HTTPResponse]]:
    """The answer of an extra route to ``request`` (module docstring)."""
    if request.method not in ("GET", "HEAD"):
        return HTTPResponse(405, [("allow", "GET, HEAD")], b"")
    headers = request.headers
    refused = host_policy.check(headers.get(h.HOST), headers.get(h.ORIGIN))
    if refused is not None:
        return json_error_response(refused[0], INVALID_REQUEST, refused[1])
    try:
        found = route(request)
    except Exception:
        return _failed(request)
    if inspect.isawaitable(found):
        return _awaited(found, request)
    return _response(found, request)


async def _awaited(found: Awaitable[Any], request: HTTPRequest) -> HTTPResponse:
    try:
        answer = await found
    except Exception:
        return _failed(request)
    return _response(answer, request)


def _response(answer: Any, request: HTTPRequest) -> HTTPResponse:
    try:
        status, response_headers, body = answer
        return HTTPResponse(status, list(response_headers), b"" if request.method == "HEAD" else body)
    except Exception:
        return _failed(request)


def _failed(request: HTTPRequest) -> HTTPResponse:
    _LOGGER.exception("the GET route %s failed", request.path)
    return HTTPResponse(500, [("content-type", "text/plain")], b"Internal Server Error\n")
