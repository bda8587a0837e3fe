"""ErrorHandling: exceptions of handlers and inner middleware as clear JSON-RPC errors.

A :class:`~mcpfast.jsonrpc.errors.JSONRPCError` passes unchanged (it is meant for the
client). Another exception is logged with its traceback on the server (logger
``mcpfast.server`` unless given) and answered with -32603 "Internal error" -- or, for an
exception type in ``codes`` (``{TimeoutError: -32009, PermissionError: -32003}``; the
first entry the exception is an instance of), that code with the error catalogue's message
and data ``{"type": <the exception's class name>}``. Neither its text nor its traceback
reaches the client (they may hold paths, queries, secrets).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping, Optional

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, JSONRPCError
from mcpfast.protocol.error_codes import as_code, default_message
from mcpfast.server.middleware.pipeline import CallNext, Middleware

__all__ = ["ErrorHandling"]


class ErrorHandling(Middleware):
    """Exceptions as JSON-RPC errors (module docstring)."""

    eager = True

    def __init__(self, codes: Optional[Mapping[type, int]] = None, *,
                 logger: Optional[logging.Logger] = None) -> None:
        self.codes: dict[type, int] = {}
        for exc_type, code in (codes or {}).items():
            if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
                raise TypeError(f"codes maps Exception subclasses to codes, not {exc_type!r}")
            self.codes[exc_type] = as_code(code)
        self.logger = logger if logger is not None else logging.getLogger("mcpfast.server")

    async def on_request(self, ctx: Any, call_next: CallNext) -> Any:
        try:
            return await call_next(ctx)
        except JSONRPCError:
            raise
        except Exception as exc:
            code = next((code for exc_type, code in self.codes.items() if isinstance(exc, exc_type)),
                        INTERNAL_ERROR)
            self.logger.error("handling %r (request id %r) failed: answered %d", ctx.method,
                              ctx.request_id, code, exc_info=exc)
            if code == INTERNAL_ERROR:
                raise JSONRPCError(INTERNAL_ERROR, "Internal error") from None
            raise JSONRPCError(code, default_message(code), {"type": type(exc).__name__}) from None
