"""MCP method names, one constant each, so that server and client spell them once."""

from __future__ import annotations

from typing import Final

# Lifecycle (handshake era) and utilities.
INITIALIZE: Final = "initialize"
INITIALIZED: Final = "notifications/initialized"
PING: Final = "ping"
CANCELLED: Final = "notifications/cancelled"
PROGRESS: Final = "notifications/progress"
SET_LOG_LEVEL: Final = "logging/setLevel"
LOG_MESSAGE: Final = "notifications/message"
# 2026-07-28: what the server speaks and offers (replaces what initialize told), and the
# long-lived request whose stream carries list changes and resource updates.
DISCOVER: Final = "server/discover"
SUBSCRIPTIONS_LISTEN: Final = "subscriptions/listen"
SUBSCRIPTIONS_ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

# Server features.
TOOLS_LIST: Final = "tools/list"
TOOLS_CALL: Final = "tools/call"
RESOURCES_LIST: Final = "resources/list"
RESOURCE_TEMPLATES_LIST: Final = "resources/templates/list"
RESOURCES_READ: Final = "resources/read"
RESOURCES_SUBSCRIBE: Final = "resources/subscribe"
RESOURCES_UNSUBSCRIBE: Final = "resources/unsubscribe"
PROMPTS_LIST: Final = "prompts/list"
PROMPTS_GET: Final = "prompts/get"
COMPLETE: Final = "completion/complete"

# Server notifications.
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
RESOURCES_LIST_CHANGED: Final = "notifications/resources/list_changed"
PROMPTS_LIST_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCE_UPDATED: Final = "notifications/resources/updated"

# The list_changed notification of each listable kind.
LIST_CHANGED: Final[dict[str, str]] = {
    "tools": TOOLS_LIST_CHANGED,
    "resources": RESOURCES_LIST_CHANGED,
    "prompts": PROMPTS_LIST_CHANGED,
}

# Requests a server sends to its client, and the client's notification about roots.
SAMPLING_CREATE_MESSAGE: Final = "sampling/createMessage"
ELICITATION_CREATE: Final = "elicitation/create"
ROOTS_LIST: Final = "roots/list"
ROOTS_LIST_CHANGED: Final = "notifications/roots/list_changed"

# Tasks: tasks/get and tasks/cancel in both the 2025-11-25 experimental form and the
# 2026-07-28 extension (io.modelcontextprotocol/tasks); tasks/result, tasks/list and
# notifications/tasks/status only in the former, tasks/update and notifications/tasks
# only in the latter.
TASKS_GET: Final = "tasks/get"
TASKS_CANCEL: Final = "tasks/cancel"
TASKS_RESULT: Final = "tasks/result"
TASKS_LIST: Final = "tasks/list"
TASKS_UPDATE: Final = "tasks/update"
TASKS_STATUS: Final = "notifications/tasks/status"
TASKS_NOTIFICATION: Final = "notifications/tasks"

# Requests allowed before the handshake completes (the specification: only pings and the
# initialize request itself; server/discover belongs to the stateless era, where it is
# answered without a handshake, and is refused by its handler without 2026 _meta).
BEFORE_INITIALIZED: Final = frozenset({INITIALIZE, PING, DISCOVER})
# Requests that may never be cancelled (the specification forbids cancelling initialize).
UNCANCELLABLE: Final = frozenset({INITIALIZE})
