"""The gateway: upstream MCP servers mounted under namespaces on one Server
(:mod:`mcpfast.gateway.gateway`; ``Server.mount`` delegates here), served over HTTP with
``/healthz`` (:func:`serve_gateway_http`) and from a config file by ``mcpfast gateway``
(:mod:`mcpfast.gateway.config`, :mod:`mcpfast.gateway.command`)."""

from mcpfast.gateway.gateway import Gateway, GatewayHost, gateway_of
from mcpfast.gateway.options import MountOptions, Rename
from mcpfast.gateway.serving import serve_gateway_http
from mcpfast.gateway.upstream import Upstream, UpstreamUnavailable

__all__ = ["Gateway", "GatewayHost", "MountOptions", "Rename", "Upstream", "UpstreamUnavailable",
           "gateway_of", "serve_gateway_http"]
