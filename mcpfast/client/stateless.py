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

import asyncio
import inspect
import json
import time
from typing import Any, Awaitable, Callable, Mapping, Optional

from mcpfast.client.errors import InvalidResult
from mcpfast.jsonrpc.errors import InvalidParams, JSONRPCError, RequestCancelled
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


# The polling interval used when the server suggests none, and the bounds put on a
# suggestion (a server cannot make the client spin, nor wait for minutes between polls).
DEFAULT_POLL_MS = 500
POLL_BOUNDS_MS = (10, 5_000)


def is_task(result: Any) -> bool:
    """Whether a result is a CreateTaskResult (2026-07-28 tasks extension)."""
    return type(result) is dict and result.get("resultType") == "task"


async def follow_task(rounds: InputRounds, method: str, created: dict[str, Any]) -> Any:
    """The final result of a request the server turned into a task (the extension
    ``io.modelcontextprotocol/tasks``, which the client declared): ``tasks/get`` every
    ``pollIntervalMs``, the task's ``inputRequests`` answered with the client's handlers
    through ``tasks/update``, then the inlined result -- or the task's JSON-RPC error raised,
    RequestCancelled when the server cancelled it. Cancelling the caller sends
    ``tasks/cancel``."""
    task_id = created.get("taskId")
    if type(task_id) is not str or not task_id:
        raise InvalidResult(method, f"a CreateTaskResult without a taskId: {created!r}")
    send = rounds.send
    interval = created.get("pollIntervalMs")
    answered: set[str] = set()
    try:
        task: Any = created
        while True:
            suggested = task.get("pollIntervalMs", interval) if type(task) is dict else interval
            interval = suggested if isinstance(suggested, int) and not isinstance(suggested, bool) \
                else DEFAULT_POLL_MS
            task = await send(methods.TASKS_GET, {"taskId": task_id})
            if type(task) is not dict:
                raise InvalidResult(methods.TASKS_GET, f"expected a task, got {task!r}")
            status = task.get("status")
            if status == "completed":
                result = task.get("result")
                if type(result) is not dict:
                    raise InvalidResult(methods.TASKS_GET, "a completed task without its result")
                return result
            if status == "failed":
                error = task.get("error")
                if type(error) is not dict or not isinstance(error.get("code"), int):
                    raise InvalidResult(methods.TASKS_GET, "a failed task without its error")
                raise JSONRPCError(error["code"], str(error.get("message", "")),
                                   *((error["data"],) if "data" in error else ()))
            if status == "cancelled":
                raise RequestCancelled(f"the server cancelled task {task_id!r}")
            if status == "input_required":
                requests = task.get("inputRequests")
                pending = {k: v for k, v in requests.items() if k not in answered} \
                    if type(requests) is dict else {}
                if pending:
                    responses = await rounds._answers(method, pending)
                    answered.update(responses)
                    await send(methods.TASKS_UPDATE, {"taskId": task_id, "inputResponses": responses})
                    continue
            low, high = POLL_BOUNDS_MS
            await asyncio.sleep(min(max(interval, low), high) / 1000.0)
    except asyncio.CancelledError:
        # The caller gave up: tell the server (best effort, not awaited; referenced until
        # done, asyncio keeping only weak references to tasks).
        cancelling = asyncio.get_running_loop().create_task(_cancel_quietly(send, task_id))
        _CANCELLING.add(cancelling)
        cancelling.add_done_callback(_CANCELLING.discard)
        raise


_CANCELLING: set[asyncio.Task[None]] = set()


async def _cancel_quietly(send: Callable[[str, Any], Awaitable[Any]], task_id: str) -> None:
    try:
        await send(methods.TASKS_CANCEL, {"taskId": task_id})
    except Exception:  # noqa: BLE001 -- best effort: the task may be gone, the connection too
        pass


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
