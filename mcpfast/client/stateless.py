"""The client side of 2026-07-28: discovery, self-contained requests, input round trips.

A client that asks for 2026-07-28 (``protocol_version="2026-07-28"``, or ``"auto"`` to
take it when the server offers it and fall back to the handshake otherwise) starts with
``server/discover`` instead of ``initialize``; every request then carries the version,
the client's capabilities and info (and a log level, when one was set) in
``params._meta``, built once by :func:`request_meta`.

A ``tools/call``, ``prompts/get`` or ``resources/read`` may be answered with an
InputRequiredResult: :class:`InputRounds` answers its ``inputRequests`` with the client's
own sampling / elicitation / roots handlers and sends the request again with the
``inputResponses`` and the ``requestState`` echoed, until the result is complete (at most
:data:`MAX_INPUT_ROUNDS` rounds, so that a server asking forever cannot hold the caller).
"""

from __future__ import annotations

import inspect
import json
import time
from typing import Any, Awaitable, Callable, Mapping, Optional

from mcpfast.client.errors import InvalidResult
from mcpfast.jsonrpc.errors import InvalidParams
from mcpfast.protocol import meta_keys, methods

__all__ = ["InputRounds", "MAX_INPUT_ROUNDS", "ResultCache", "discover_facts", "request_meta",
           "with_meta"]

MAX_INPUT_ROUNDS = 16
# The requests a server may answer with an InputRequiredResult.
INPUT_METHODS = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})


def request_meta(version: str, capabilities: Mapping[str, Any], client_info: Mapping[str, Any],
                 log_level: Optional[str] = None) -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries."""
    meta: dict[str, Any] = {
        meta_keys.PROTOCOL_VERSION: version,
        meta_keys.CLIENT_CAPABILITIES: dict(capabilities),
        meta_keys.CLIENT_INFO: dict(client_info),
    }
    if log_level is not None:
        meta[meta_keys.LOG_LEVEL] = log_level
    return meta


def with_meta(params: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` (None or an object) with the request ``_meta`` merged into its own."""
    if params is None:
        return {"_meta": dict(meta)}
    if type(params) is not dict:
        raise TypeError("2026-07-28 requests carry their params as an object")
    own = params.get("_meta")
    merged = {**own, **meta} if type(own) is dict else dict(meta)
    return {**params, "_meta": merged}


def discover_facts(result: Any, version: str) -> tuple[dict, dict, Optional[str]]:
    """capabilities, serverInfo and instructions of a DiscoverResult that offers
    ``version`` (InvalidResult when it is malformed or does not)."""
    if type(result) is not dict:
        raise InvalidResult(methods.DISCOVER, f"expected an object, got {result!r}")
    versions = result.get("supportedVersions")
    if type(versions) is not list or version not in versions:
        raise InvalidResult(methods.DISCOVER, f"the server does not offer {version} "
                                              f"(supportedVersions: {versions!r})")
    capabilities = result.get("capabilities", {})
    if type(capabilities) is not dict:
        raise InvalidResult(methods.DISCOVER, f"capabilities must be an object, got {capabilities!r}")
    meta = result.get("_meta")
    info = meta.get(meta_keys.SERVER_INFO) if type(meta) is dict else None
    instructions = result.get("instructions")
    if instructions is not None and type(instructions) is not str:
        raise InvalidResult(methods.DISCOVER, f"instructions must be a string, got {instructions!r}")
    return capabilities, info if type(info) is dict else {}, instructions


# handler(params) -> result (or an awaitable of it): the client's own request handlers.
InputHandler = Callable[[str, Any], Any]


class InputRounds:
    """Answers InputRequiredResults with the client's handlers (module docstring).

    ``send(method, params)`` sends one attempt and returns its result; ``answer(method,
    params)`` produces the client's answer to one input request (or raises).
    """

    __slots__ = ("send", "answer")

    def __init__(self, send: Callable[[str, Any], Awaitable[Any]], answer: InputHandler) -> None:
        self.send = send
        self.answer = answer

    async def run(self, method: str, params: Any) -> Any:
        """The complete result of ``method``, after as many rounds as the server needs."""
        result = await self.send(method, params)
        rounds = 0
        while _input_required(result):
            if method not in INPUT_METHODS:
                raise InvalidResult(method, "an InputRequiredResult answers only tools/call, "
                                            "prompts/get and resources/read")
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise InvalidResult(method, f"the server still asked for input after "
                                            f"{MAX_INPUT_ROUNDS} rounds")
            retry = dict(params) if type(params) is dict else {}
            retry.pop("inputResponses", None)
            retry.pop("requestState", None)
            requests = result.get("inputRequests")
            if requests is not None:
                retry["inputResponses"] = await self._answers(method, requests)
            state = result.get("requestState")
            if state is not None:
                retry["requestState"] = state
            result = await self.send(method, retry)
        return result

    async def _answers(self, method: str, requests: Any) -> dict[str, Any]:
        if type(requests) is not dict:
            raise InvalidResult(method, f"inputRequests must be an object, got {requests!r}")
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            if type(request) is not dict or type(request.get("method")) is not str:
                raise InvalidResult(method, f"inputRequests[{key!r}] is not a request")
            outcome = self.answer(request["method"], request.get("params"))
            if inspect.isawaitable(outcome):
                outcome = await outcome
            answers[key] = outcome
        return answers


def _input_required(result: Any) -> bool:
    return type(result) is dict and result.get("resultType") == "input_required"


def no_handler(method: str) -> InvalidParams:
    """The error for an input request this client has no handler for."""
    return InvalidParams(f"the server asked for {method}, which this client does not serve")


# Results a server may mark cacheable (ttlMs, cacheScope), and what list change makes
# each stale.
CACHEABLE = {methods.TOOLS_LIST: "tools", methods.PROMPTS_LIST: "prompts",
             methods.RESOURCES_LIST: "resources", methods.RESOURCE_TEMPLATES_LIST: "resources",
             methods.RESOURCES_READ: "resources"}


class ResultCache:
    """The caching hints of 2026-07-28 results, honoured: a complete result with
    ``ttlMs`` > 0 is reused for the same request until it expires or a list change of its
    kind arrives (one client is one authorization context, so "private" and "public"
    results are kept alike)."""

    __slots__ = ("_entries", "_clock")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: dict[tuple[str, str], tuple[float, Any]] = {}
        self._clock = clock

    @staticmethod
    def _key(method: str, params: Any) -> Optional[tuple[str, str]]:
        if method not in CACHEABLE:
            return None
        bound = {k: v for k, v in params.items() if k != "_meta"} if type(params) is dict else params
        return method, json.dumps(bound, sort_keys=True, separators=(",", ":"))

    def get(self, method: str, params: Any) -> Any:
        """A fresh cached result of the request, else None."""
        key = self._key(method, params)
        entry = self._entries.get(key) if key is not None else None
        if entry is None:
            return None
        if self._clock() >= entry[0]:
            del self._entries[key]  # type: ignore[arg-type]
            return None
        return entry[1]

    def put(self, method: str, params: Any, result: Any) -> None:
        """Keep a result its server marked cacheable."""
        key = self._key(method, params)
        if key is None or type(result) is not dict or result.get("resultType", "complete") != "complete":
            return
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0:
            return
        self._entries[key] = (self._clock() + ttl / 1000, result)

    def changed(self, kind: str) -> None:
        """A list of ``kind`` changed: its cached results are stale."""
        for key in [k for k in self._entries if CACHEABLE[k[0]] == kind]:
            del self._entries[key]
