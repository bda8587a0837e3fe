"""A gateway made from a config file, and a new config applied to a running one.

:func:`build_gateway` mounts every upstream of a :class:`~mcpfast.gateway.config.GatewayConfig`
on a new Server; :func:`reload` applies another config without dropping the downstream
sessions: upstreams added are started, removed ones stopped, changed ones restarted, and
ones whose only change is how they are shown (namespace, filters, renames, timeouts) keep
their session.
"""

from __future__ import annotations

import logging
from typing import Any

from mcpfast.gateway.config import ClientCredentialsConfig, GatewayConfig, UpstreamConfig
from mcpfast.gateway.gateway import Gateway, gateway_of
from mcpfast.gateway.options import MountOptions
from mcpfast.server.server import Server

__all__ = ["build_gateway", "reload"]

_LOGGER = logging.getLogger("mcpfast.gateway")
_SHOWN_KEYS = {"namespace", "separator", "allow", "deny", "allow_tags", "deny_tags", "rename",
               "timeout", "start_timeout"}


def _mount(gateway: Gateway, upstream: UpstreamConfig) -> None:
    keywords = dict(upstream.mount)
    auth = keywords.get("auth")
    if isinstance(auth, ClientCredentialsConfig):
        # Each mount gets its own OAuth client: its tokens are never another upstream's.
        keywords["auth"] = auth.client()
    gateway.mount(upstream.target, **keywords)


def build_gateway(config: GatewayConfig) -> Server:
    """A Server with every upstream of ``config`` mounted (started when it serves)."""
    app = Server(config.name, advertise=("tools", "resources", "prompts", "completions"))
    gateway = gateway_of(app)
    for upstream in config.upstreams:
        _mount(gateway, upstream)
    return app


def _connection_of(upstream: UpstreamConfig) -> tuple[Any, dict[str, Any]]:
    return upstream.target, {k: v for k, v in upstream.mount.items() if k not in _SHOWN_KEYS}


async def reload(gateway: Gateway, old: GatewayConfig, new: GatewayConfig) -> None:
    """Apply ``new`` where ``old`` was applied (module docstring); downstream sessions stay."""
    before = {upstream.key: upstream for upstream in old.upstreams}
    after = {upstream.key: upstream for upstream in new.upstreams}
    for key in before.keys() - after.keys():
        await gateway.unmount(key)
    for key, upstream in after.items():
        previous = before.get(key)
        if previous is not None and _connection_of(previous) == _connection_of(upstream):
            if previous.mount != upstream.mount:
                shown = {k: v for k, v in upstream.mount.items() if k in _SHOWN_KEYS}
                gateway.remount(key, MountOptions.make(**shown))
            continue
        if previous is not None:
            await gateway.unmount(key)
        _mount(gateway, upstream)
    _LOGGER.warning("config reloaded: %d upstreams", len(after))
