"""DrivenCall: the rest of a request handler's coroutine, driven by the done-callbacks of
the futures it awaits instead of by an asyncio task of its own.

Compiled (:mod:`mcpfast._core.driven`, whose docstring says how and why): the session
starts and finishes a driven request in C (:class:`mcpfast._core.dispatch.SessionCore`).
``driven_future(future, settle, argument)``: such a call with no coroutine, its end what
``settle(future, argument)`` makes of the future once done; given an :class:`Answer` (a
future for that call alone) instead of an asyncio future, the call ends in the call that
settles it, not on the loop's next turn. Only for code that needs no
current task; the chain opts in per request (see
mcpfast.server.middleware.pipeline.without_task).
"""

from __future__ import annotations

from mcpfast._core.driven import Answer, DrivenCall, driven_future

__all__ = ["Answer", "DrivenCall", "driven_future"]
