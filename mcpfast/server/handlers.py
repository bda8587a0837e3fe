"""The MCP methods a Server answers, registered on its Router.

``install_handlers(server)`` has each feature register its methods from its own module
(:mod:`mcpfast.server.features`, :mod:`mcpfast.server.listen`,
:mod:`mcpfast.server.tasks.methods`), on the router of the declared core
(:class:`~mcpfast.server.core.ServerCore`). Handlers are sync functions closing over the
server's catalogs (no attribute chains per call); those whose work is async (async tools,
resources, prompts, completions) return a coroutine, which the session runs as a task.
Each reads the negotiated protocol facts from ``ctx.state``.

Methods and their errors:

- ``initialize``: version negotiation (:mod:`mcpfast.protocol.versions`), capabilities from
  what is registered, server info, instructions. A second initialize on the same
  connection: -32600. Params without a string protocolVersion: -32602.
- ``notifications/initialized``: completes initialization.
- ``server/discover`` (2026-07-28): the versions spoken, capabilities, instructions
  (:func:`mcpfast.server.eras.stateless.discover_result`); without the revision's ``_meta``:
  -32602.
- ``subscriptions/listen`` (2026-07-28): a stream of list changes and resource updates
  (:mod:`mcpfast.server.listen`); under the handshake versions: -32601.
- ``ping``: ``{}``, also before initialization.
- ``logging/setLevel``: the connection's minimum level; an unknown level: -32602.
- ``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``:
  cached per version, paginated when the server has a page size (bad cursor: -32602).
- ``tools/call``: unknown tool -32602; everything else is a CallToolResult (tools.py), or
  for a tool with task support a task (:mod:`mcpfast.server.tasks.manager`); a 2025-11-25
  ``params.task`` for a tool without: -32601.
- ``tasks/*``: :mod:`mcpfast.server.tasks.methods`.
- ``resources/read``: unknown URI -32002 (resources.py).
- ``resources/subscribe`` / ``unsubscribe``: subscribing to a URI that is neither a
  resource nor matches a template is -32002; unsubscribing from a URI not subscribed is
  accepted (nothing to do).
- ``prompts/get``: unknown prompt or bad arguments -32602 (prompts.py).
- ``completion/complete``: -32601 when the server has no completion handler (the
  specification's "capability not supported") unless it advertises completions anyway
  (then no suggestions); unknown prompt or template -32602.
- ``notifications/roots/list_changed``: calls the server's roots-changed callbacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpfast.server import listen
from mcpfast.server.features import (
    completion_methods,
    lifecycle_methods,
    logging_methods,
    prompt_methods,
    resource_methods,
    roots_methods,
    tool_methods,
)
from mcpfast.server.tasks.methods import install_task_handlers

if TYPE_CHECKING:
    from mcpfast.server.core import ServerCore

__all__ = ["install_handlers"]


def install_handlers(server: ServerCore) -> None:
    """Register every MCP method of ``server`` on ``server.router``, feature by feature."""
    for feature in (lifecycle_methods, logging_methods, tool_methods, resource_methods,
                    prompt_methods, completion_methods, roots_methods, listen):
        feature.register(server)
    install_task_handlers(server)
