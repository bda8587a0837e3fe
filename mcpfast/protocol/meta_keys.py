"""Keys of ``params._meta`` and ``result._meta`` that MCP gives a meaning.

``progressToken`` exists in every version. The ``io.modelcontextprotocol/`` keys belong to
the stateless era (2026-07-28), where each request carries what a handshake used to
negotiate.
"""

from __future__ import annotations

from sys import intern
from typing import Final

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROGRESS_TOKEN",
    "PROTOCOL_VERSION",
    "RELATED_TASK",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "TASKS_EXTENSION",
]

# Interned: decoded keys are, so that a lookup by one of these finds its key by identity
# (Python interns only identifier-like literals by itself).

# Every version: the token a requester gives to receive notifications/progress.
PROGRESS_TOKEN: Final = intern("progressToken")
# 2026-07-28, on every request: the version and the client's capabilities (required) and
# its Implementation info (optional), and the minimum log level it wants for this request.
PROTOCOL_VERSION: Final = intern("io.modelcontextprotocol/protocolVersion")
CLIENT_CAPABILITIES: Final = intern("io.modelcontextprotocol/clientCapabilities")
CLIENT_INFO: Final = intern("io.modelcontextprotocol/clientInfo")
LOG_LEVEL: Final = intern("io.modelcontextprotocol/logLevel")
# 2026-07-28, on results and notifications: the server's Implementation info, and the id
# of the subscriptions/listen request a notification belongs to.
SERVER_INFO: Final = intern("io.modelcontextprotocol/serverInfo")
SUBSCRIPTION_ID: Final = intern("io.modelcontextprotocol/subscriptionId")
# 2025-11-25 tasks: what a message about a task carries ({"taskId": ...}).
RELATED_TASK: Final = intern("io.modelcontextprotocol/related-task")
# The tasks extension's identifier (2026-07-28: a key of capabilities.extensions).
TASKS_EXTENSION: Final = intern("io.modelcontextprotocol/tasks")
