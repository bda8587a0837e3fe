"""A 2026-07-28 downstream request forwarded to a 2026-07-28 upstream as it is.

In the stateless era every request carries its client's facts in ``_meta``, so the
gateway need not stand in for the client: the upstream is sent the downstream's own
protocol ``_meta`` (its client capabilities, info and log level; the protocol version the
upstream session speaks), and one attempt only. An InputRequiredResult the upstream
answers goes back to the downstream client with its ``inputRequests`` keys unchanged
(the upstream handler's own names, e.g. ``user_name``); the client's retry carries its
``inputResponses`` under those keys, forwarded unchanged.

The upstream's ``requestState`` is the one thing that cannot pass as it is: the gateway's
own server checks every requestState a 2026-07-28 request brings against its own key. So
the upstream's state is sealed inside one the gateway signs (bound to the downstream
request's params, method and principal, as any other), and unsealed on the retry.

The tasks extension's ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` go the same way
(:func:`forward_task`): the upstream checks the extension in the client capabilities of
each request, which are the downstream's (the task id mapped by
:mod:`mcpfast.gateway.tasks`).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

from mcpfast.protocol import meta_keys
from mcpfast.server.request.input_required import InputRequiredBackChannel

__all__ = ["EXTENSION_TASK_METHODS", "UPSTREAM_STATE", "forward_once", "forward_task", "listen_for_task"]

_PROTOCOL_META = "io.modelcontextprotocol/"
#: The key, in the gateway's own requestState, of the upstream's requestState.
UPSTREAM_STATE = "io.mcpfast.gateway/upstreamRequestState"
#: The requests of the 2026-07-28 tasks extension about a task.
EXTENSION_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def _protocol_meta(origin: Any, version: str) -> dict[str, Any]:
    params = origin.params
    meta = params.get("_meta") if type(params) is dict else None
    out = {key: value for key, value in meta.items() if key.startswith(_PROTOCOL_META)} \
        if type(meta) is dict else {}
    out.pop("io.modelcontextprotocol/progressToken", None)
    out[meta_keys.PROTOCOL_VERSION] = version
    return out


async def forward_once(session: Any, version: str, method: str, params: dict[str, Any],
                       origin: Any, channel: InputRequiredBackChannel, *, timeout: float = math.inf,
                       progress: Optional[Callable[..., Any]] = None) -> Any:
    """Send ``params`` (the downstream's, mapped for the upstream) on the upstream's
    ``session`` with the downstream's protocol ``_meta``; return the upstream's result,
    an InputRequiredResult with its requestState sealed (module docstring)."""
    attempt = dict(params)
    own = attempt.get("_meta")
    attempt["_meta"] = {**own, **_protocol_meta(origin, version)} if type(own) is dict \
        else _protocol_meta(origin, version)
    attempt.pop("requestState", None)
    sealed = channel.answers.get(UPSTREAM_STATE)
    if sealed is not None:
        attempt["requestState"] = sealed
    result = await session.request(method, attempt, timeout=timeout, progress=progress)
    if type(result) is dict and result.get("resultType") == "input_required":
        state = result.get("requestState")
        if state is not None:
            result = {**result, "requestState": channel.codec.encode(
                channel.method, channel.digest, channel.principal, {UPSTREAM_STATE: state})}
    return result


async def forward_task(session: Any, version: str, method: str, params: dict[str, Any],
                       origin: Any, *, timeout: float = math.inf) -> Any:
    """Send a tasks extension request (``params`` with the upstream's task id) on the
    upstream's ``session`` with the downstream's protocol ``_meta``."""
    attempt = dict(params)
    own = attempt.get("_meta")
    attempt["_meta"] = {**own, **_protocol_meta(origin, version)} if type(own) is dict \
        else _protocol_meta(origin, version)
    return await session.request(method, attempt, timeout=timeout)


def listen_for_task(session: Any, version: str, task_id: str, origin: Any) -> Any:
    """Open a ``subscriptions/listen`` for the upstream's task ``task_id`` on ``session``
    with the downstream's protocol ``_meta`` (the tasks extension is the client's to
    declare); the request's handle (cancel it to stop)."""
    params = {"notifications": {"taskIds": [task_id]}, "_meta": _protocol_meta(origin, version)}
    handle = session.send_request("subscriptions/listen", params, timeout=math.inf)
    # Its end (cancelled, or the session gone) is nobody's error.
    handle.future.add_done_callback(lambda future: future.cancelled() or future.exception())
    return handle
