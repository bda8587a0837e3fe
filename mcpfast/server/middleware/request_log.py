"""RequestLogging: timing and one structured log record per request and notification.

Each record goes to the logger ``mcpfast.requests`` (INFO; DEBUG for notifications) with
the message ``"<method> <target> <outcome> <ms>ms"`` and these fields on the record (for a
JSON formatter): ``mcp_method``, ``mcp_target`` (the tool or prompt name, the resource URI;
None for other methods), ``mcp_outcome`` ("ok", "tool error" for a CallToolResult with
isError, "error <code>" for a JSON-RPC error, "internal error" for any other exception,
"cancelled"), ``mcp_duration_ms``, ``mcp_request_id``, ``mcp_subject`` (the authenticated
subject, else None), ``mcp_session_id`` (Streamable HTTP's session id, else None),
``mcp_peer`` (the client's address when the transport knows it, else None) and
``mcp_client`` (the client's name, when it gave one). Nothing of
the params or results is logged (they may hold secrets).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Optional

from mcpfast.jsonrpc.errors import JSONRPCError
from mcpfast.server.middleware.pipeline import CallNext, Middleware

__all__ = ["RequestLogging", "request_target"]


def request_target(ctx: Any) -> Optional[str]:
    """What a request names: a tool's or prompt's name, a resource's URI (else None)."""
    params = ctx.params
    if type(params) is not dict:
        return None
    target = params.get("name", params.get("uri"))
    return target if type(target) is str else None


class RequestLogging(Middleware):
    """Times every message and logs it (module docstring). ``logger``: where (the
    ``mcpfast.requests`` logger unless given); ``clock``: seconds, for the duration
    (``time.perf_counter`` unless given)."""

    eager = True

    def __init__(self, logger: Optional[logging.Logger] = None, *,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.logger = logger if logger is not None else logging.getLogger("mcpfast.requests")
        self.clock = clock

    async def on_message(self, ctx: Any, call_next: CallNext) -> Any:
        started = self.clock()
        outcome = "internal error"
        try:
            result = await call_next(ctx)
            outcome = "tool error" if type(result) is dict and result.get("isError") is True else "ok"
            return result
        except JSONRPCError as exc:
            outcome = f"error {exc.code}"
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            self._record(ctx, outcome, (self.clock() - started) * 1000.0)

    def _record(self, ctx: Any, outcome: str, duration_ms: float) -> None:
        level = logging.INFO if ctx.request_id is not None else logging.DEBUG
        logger = self.logger
        if not logger.isEnabledFor(level):
            return
        target = request_target(ctx)
        auth = ctx.auth
        client = ctx.state.client_info.get("name") if type(ctx.state.client_info) is dict else None
        logger.log(level, "%s %s %s %.3fms", ctx.method, target if target is not None else "-",
                   outcome, duration_ms, extra={
                       "mcp_method": ctx.method, "mcp_target": target, "mcp_outcome": outcome,
                       "mcp_duration_ms": duration_ms, "mcp_request_id": ctx.request_id,
                       "mcp_subject": auth.subject if auth is not None else None,
                       "mcp_session_id": ctx.session_id, "mcp_peer": ctx.peer_address,
                       "mcp_client": client})
