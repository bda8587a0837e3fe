"""MCP logging: levels, per-connection filtering, and a bridge from Python's logging.

MCP log levels are the eight syslog severities (RFC 5424), lowest first: debug, info,
notice, warning, error, critical, alert, emergency. A client sets the minimum level it
wants with ``logging/setLevel``; the server then sends ``notifications/message`` only for
messages at that level or above. Until a client sets a level, the server's default
(``Server(log_level=...)``, "info" unless given) applies.

`MCPLogHandler` (made by ``Server.logging_handler()``) is a ``logging.Handler`` that
forwards Python log records to clients as notifications/message: ``level`` from the
record's level (DEBUG -> debug, INFO -> info, WARNING -> warning, ERROR -> error,
CRITICAL -> critical; numbers in between round down), ``logger`` the record's logger
name, ``data`` the formatted message. Where a record goes:

- logged while a tool, resource, prompt or completion runs for a request (see
  :data:`mcpfast.server.request.invocation.current_context`): to that request's client only, as
  ``ctx.log`` would -- another client must not learn about someone else's calls;
- otherwise: broadcast to every initialized connection whose level lets it through.

Tracebacks and stack traces (``exc_info``, ``stack_info``) are left out of ``data``, since
they show file paths and code to the client, unless the handler was made with
``include_tracebacks=True``. Records emitted from another thread are handed to the event
loop the server runs on. A record logged while a record is being
forwarded on the same thread (for example by the transport) is not forwarded again, so the
bridge cannot loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Optional, Protocol

from mcpfast.protocol.log_levels import LEVEL_INDEX, LEVELS, level_index
from mcpfast.server.request.invocation import current_context, track_current_context

__all__ = [
    "LEVELS",
    "LEVEL_INDEX",
    "LogTarget",
    "MCPLogHandler",
    "level_index",
    "mcp_level_for",
]


def mcp_level_for(python_level: int) -> str:
    """The MCP level for a Python logging level number."""
    if python_level >= logging.CRITICAL:
        return "critical"
    if python_level >= logging.ERROR:
        return "error"
    if python_level >= logging.WARNING:
        return "warning"
    if python_level >= logging.INFO:
        return "info"
    return "debug"


class LogTarget(Protocol):
    """What the handler needs of a server: whether logging is on, where a log message
    goes outside a request, and the loop it must be handed to (a Server is one)."""

    logging_enabled: bool
    loop: Optional[asyncio.AbstractEventLoop]

    def broadcast_log(self, level: str, data: Any, logger: Optional[str] = None) -> int:
        """A log message to every connection that wants its level."""


class MCPLogHandler(logging.Handler):
    """Forwards Python log records to a server's connected clients (module docstring)."""

    def __init__(self, server: LogTarget, level: int = logging.NOTSET, *,
                 include_tracebacks: bool = False) -> None:
        super().__init__(level)
        self.server = server
        self.include_tracebacks = bool(include_tracebacks)
        self._local = threading.local()
        track_current_context()

    def _data(self, record: logging.LogRecord) -> str:
        """The formatted record, without traceback or stack unless those are wanted."""
        if self.include_tracebacks or (record.exc_info is None and record.stack_info is None):
            return self.format(record)
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            return self.format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            server = self.server
            if not server.logging_enabled:
                return
            level = mcp_level_for(record.levelno)
            data = self._data(record)
            ctx = current_context.get()
            send = server.broadcast_log if ctx is None else ctx.log
            loop = server.loop
            # Hand over to the server's loop only when it runs, in another thread.
            if loop is not None and loop.is_running() and not _runs_on(loop):
                loop.call_soon_threadsafe(send, level, data, record.name)
            else:
                send(level, data, record.name)
        except Exception:
            self.handleError(record)
        finally:
            self._local.busy = False


def _runs_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        running: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    return running is loop
