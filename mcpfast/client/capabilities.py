"""Capabilities on both sides of the handshake.

Server side (what the client may call): :class:`ServerCapabilities` turns the ``capabilities``
of the InitializeResult into plain bool attributes, read once per call instead of looking
into dicts. The rule for each request:

  tools/list, tools/call                          "tools"
  resources/list, resources/templates/list,
  resources/read                                  "resources"
  resources/subscribe, resources/unsubscribe      "resources.subscribe"
  prompts/list, prompts/get                       "prompts"
  completion/complete                             "completions" (2025-03-26 and later;
                                                  2024-11-05 defines no such capability,
                                                  so there the request is always allowed)
  logging/setLevel                                "logging"
  ping                                            always allowed

Client side (what the client offers): :func:`client_capabilities` builds the
ClientCapabilities sent in ``initialize`` from the handlers that were given -- a capability
is advertised only when its handler exists (sampling, elicitation, roots with
``listChanged``) -- plus the caller's extra entries (``experimental``, sub-capabilities such
as ``sampling.tools`` or ``elicitation.url``).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional

__all__ = ["METHOD_CAPABILITIES", "ServerCapabilities", "client_capabilities"]

# Request method -> the server capability it needs (dotted for a sub-capability).
METHOD_CAPABILITIES: dict[str, str] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources.subscribe",
    "resources/unsubscribe": "resources.subscribe",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}

# Client capabilities that need a handler, by the constructor argument that provides it.
_HANDLED = {"sampling": "sampling", "elicitation": "elicitation", "roots": "roots"}


class ServerCapabilities:
    """What the server advertised, as bools (see the module docstring).

    ``tools``, ``resources``, ``subscribe``, ``prompts``, ``completions``, ``logging``,
    ``tools_list_changed``, ``resources_list_changed``, ``prompts_list_changed``.
    With ``check=False`` every request is allowed (the list_changed flags still tell
    what was advertised).
    """

    __slots__ = (
        "tools",
        "resources",
        "subscribe",
        "prompts",
        "completions",
        "logging",
        "tools_list_changed",
        "resources_list_changed",
        "prompts_list_changed",
    )

    def __init__(self, capabilities: Mapping[str, Any], version: str, check: bool = True) -> None:
        def present(name: str) -> bool:
            return isinstance(capabilities.get(name), dict)

        def flag(name: str, sub: str) -> bool:
            value = capabilities.get(name)
            return isinstance(value, dict) and value.get(sub) is True

        self.tools_list_changed = flag("tools", "listChanged")
        self.resources_list_changed = flag("resources", "listChanged")
        self.prompts_list_changed = flag("prompts", "listChanged")
        if not check:
            self.tools = self.resources = self.subscribe = True
            self.prompts = self.completions = self.logging = True
            return
        self.tools = present("tools")
        self.resources = present("resources")
        self.subscribe = flag("resources", "subscribe")
        self.prompts = present("prompts")
        # 2024-11-05 has completion/complete but no capability announcing it.
        self.completions = present("completions") or version == "2024-11-05"
        self.logging = present("logging")

    def allows(self, capability: str) -> bool:
        """True when a request needing ``capability`` (a METHOD_CAPABILITIES value) may be sent."""
        attribute = "subscribe" if capability == "resources.subscribe" else capability
        return bool(getattr(self, attribute))

    def __repr__(self) -> str:
        names = [name for name in ("tools", "resources", "subscribe", "prompts",
                                   "completions", "logging") if getattr(self, name)]
        return f"<ServerCapabilities {' '.join(names) or 'none'}>"


def client_capabilities(
    *,
    sampling: bool,
    elicitation: bool,
    roots: bool,
    extra: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    """The ClientCapabilities to send: one entry per handler given, merged with ``extra``.

    sampling: ``{}``; elicitation: ``{"form": {}}`` (form mode; add ``url`` through
    extra); roots: ``{"listChanged": true}``. ``extra`` maps capability names to objects
    merged one level deep over those (``{"sampling": {"tools": {}}}`` adds sampling.tools).
    A handled capability in ``extra`` without its handler is a ValueError: a capability
    must only be advertised when the client can serve it.
    """
    caps: dict[str, Any] = {}
    if sampling:
        caps["sampling"] = {}
    if elicitation:
        caps["elicitation"] = {"form": {}}
    if roots:
        caps["roots"] = {"listChanged": True}
    if extra is None:
        return caps
    if not isinstance(extra, Mapping):
        raise TypeError(f"capabilities must be a mapping, not {type(extra).__name__}")
    for name, value in extra.items():
        if type(name) is not str:
            raise TypeError(f"capability names must be str, not {type(name).__name__}")
        if not isinstance(value, Mapping):
            raise TypeError(f"capabilities[{name!r}] must be a mapping, not {type(value).__name__}")
        if name in _HANDLED and name not in caps:
            raise ValueError(
                f"capabilities[{name!r}] was given without a {_HANDLED[name]} handler: pass "
                f"{_HANDLED[name]}=... to advertise it"
            )
        merged = dict(caps.get(name, {}))
        merged.update(copy.deepcopy(dict(value)))
        caps[name] = merged
    return caps
