"""The gateway: upstream MCP servers mounted under namespaces on one Server
(:mod:`mcpfast.gateway.gateway`), served from a config file by ``mcpfast gateway``
(:mod:`mcpfast.gateway.config`)."""

from mcpfast.gateway.gateway import Gateway, GatewayHost, gateway_of
from mcpfast.gateway.options import MountOptions, Rename
from mcpfast.gateway.upstream import Upstream, UpstreamUnavailable

__all__ = ["Gateway", "GatewayHost", "MountOptions", "Rename", "Upstream", "UpstreamUnavailable",
           "gateway_of"]
