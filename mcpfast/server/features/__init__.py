"""mcpfast.server.features: what a server offers, and the MCP methods of each feature.

The registered things: tools.py (Tool, ToolResult, ToolAnnotations), resources.py
(Resource, ResourceTemplate), prompts.py (Prompt), completion.py (Completer), and
catalog.py (the cached, paginated list results of each kind).

The methods, each registered on the core's router by the feature's own module
(``register(core)``; :func:`mcpfast.server.handlers.install_handlers` calls them all):

  lifecycle_methods.py   initialize, notifications/initialized, ping, server/discover
  logging_methods.py     logging/setLevel
  tool_methods.py        tools/list, tools/call (its common case compiled: tools_call)
  resource_methods.py    resources/list, resources/templates/list, resources/read,
                         resources/subscribe, resources/unsubscribe
  prompt_methods.py      prompts/list, prompts/get
  completion_methods.py  completion/complete
  roots_methods.py       notifications/roots/list_changed
  params.py              what every method's params are checked with

``subscriptions/listen`` is registered by :mod:`mcpfast.server.listen` and the ``tasks/*``
methods by :mod:`mcpfast.server.tasks.methods`.
"""
