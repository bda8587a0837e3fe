"""MCP logging: levels, per-connection filtering, and a bridge from Python's logging.

MCP log levels are the eight syslog severities (RFC 5424), lowest first: debug, info,
notice, warning, error, critical, alert, emergency. A client sets the minimum level it
wants with ``logging/setLevel``; the server then sends ``notifications/message`` only for
messages at that level or above. Until a client sets a level, the server's default
(``Server(log_level=...)``, "info" unless given) applies.

`MCPLogHandler` (made by ``Server.logging_handler()``) is a ``logging.Handler`` that
forwards Python log records to every initialized connection as notifications/message:
``level`` from the record's level (DEBUG -> debug, INFO -> info, WARNING -> warning,
ERROR -> error, CRITICAL -> critical; numbers in between round down), ``logger`` the
record's logger name, ``data`` the formatted message. Records emitted from another thread
are handed to the event loop the server runs on. A record logged while a record is being
forwarded on the same thread (for example by the transport) is not forwarded again, so the
bridge cannot loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING, Optional

from mcpfast.protocol.log_levels import LEVEL_INDEX, LEVELS, level_index

if TYPE_CHECKING:
    from mcpfast.server.server import Server

__all__ = [
    "LEVELS",
    "LEVEL_INDEX",
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


class MCPLogHandler(logging.Handler):
    """Forwards Python log records to a server's connected clients (module docstring)."""

    def __init__(self, server: Server, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.server = server
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            level = mcp_level_for(record.levelno)
            data = self.format(record)
            loop = self.server.loop
            if loop is not None and not loop.is_closed() and not _runs_on(loop):
                loop.call_soon_threadsafe(self.server.broadcast_log, level, data, record.name)
            else:
                self.server.broadcast_log(level, data, record.name)
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
