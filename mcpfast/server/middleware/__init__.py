"""Middleware: code around every request a Server answers (:mod:`.pipeline` says how).

    from mcpfast import Server
    from mcpfast.server.middleware import Middleware, RateLimit, RequestLogging

    class Audit(Middleware):
        async def on_call_tool(self, ctx, call_next):
            result = await call_next(ctx)
            audit_log.append((ctx.params["name"], result.get("isError", False)))
            return result

    app = Server("demo", middleware=[RequestLogging(), RateLimit(rate=5, burst=10), Audit()])

Built in: :class:`RequestLogging` (timing and a structured record per request),
:class:`ErrorHandling` (exceptions as clear JSON-RPC errors, mapped codes), :class:`RateLimit`
(a token bucket per caller and tool, in this process), :class:`ScopeCheck` (the scopes of
each tool, resource and prompt; installed by ``scopes=``).
"""

from mcpfast.server.middleware.errors import ErrorHandling
from mcpfast.server.middleware.pipeline import METHOD_HOOKS, CallNext, Middleware, PipelineRouter
from mcpfast.server.middleware.rate_limit import RateLimit, TokenBucket
from mcpfast.server.middleware.request_log import RequestLogging
from mcpfast.server.middleware.scopes import ScopeCheck

__all__ = ["CallNext", "ErrorHandling", "METHOD_HOOKS", "Middleware", "PipelineRouter", "RateLimit",
           "RequestLogging", "ScopeCheck", "TokenBucket"]
