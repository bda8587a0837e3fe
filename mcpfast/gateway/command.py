"""``mcpfast gateway config.json``: a gateway served from a config file.

Serves on stdio (the default) or Streamable HTTP (``--transport http --host H --port P``,
the HTTP flags of ``mcpfast run``), with ``GET /healthz`` over HTTP
(:mod:`mcpfast.gateway.health`) and, when the config lists ``auth.bearerTokens``, those
bearer tokens required at the gateway's edge (never passed to an upstream: each upstream
has its own ``headers``). SIGHUP reads the file again and applies it without dropping the
downstream sessions (:func:`reload`): upstreams added are started, removed ones stopped,
changed ones restarted, and ones whose only change is how they are shown (namespace,
filters, renames, timeouts) keep their session. Warnings (an upstream that does not
start, one that died) go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import logging
import signal
import sys
from typing import Any, Optional

from mcpfast.auth import AccessToken
from mcpfast.gateway.config import ConfigError, GatewayConfig, UpstreamConfig, load_config
from mcpfast.gateway.gateway import Gateway, gateway_of
from mcpfast.gateway.health import HealthEndpoint
from mcpfast.gateway.options import MountOptions
from mcpfast.server.server import Server

__all__ = ["build_gateway", "reload", "run_gateway", "static_bearer_auth"]

_LOGGER = logging.getLogger("mcpfast.gateway")
_SHOWN_KEYS = {"namespace", "separator", "allow", "deny", "allow_tags", "deny_tags", "rename",
               "timeout", "start_timeout"}


def build_gateway(config: GatewayConfig) -> Server:
    """A Server with every upstream of ``config`` mounted (started when it serves)."""
    app = Server(config.name, advertise=("tools", "resources", "prompts", "completions"))
    gateway = gateway_of(app)
    for upstream in config.upstreams:
        gateway.mount(upstream.target, **upstream.mount)
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
        gateway.mount(upstream.target, **upstream.mount)
    _LOGGER.warning("config reloaded: %d upstreams", len(after))


def static_bearer_auth(tokens: tuple[str, ...], resource: str) -> Any:
    """A BearerAuth accepting exactly ``tokens`` (compared in constant time), for the
    endpoint at ``resource``."""
    from mcpfast.transports.http.auth import BearerAuth

    encoded = [token.encode() for token in tokens]

    def verify(token: str) -> Optional[AccessToken]:
        given = token.encode()
        for index, known in enumerate(encoded):
            if hmac.compare_digest(given, known):
                return AccessToken(subject=f"gateway-token-{index}", token="")
        return None

    origin = resource.split("/", 3)
    return BearerAuth(verify, resource=resource, authorization_servers=["/".join(origin[:3])])


def _watch_sighup(gateway: Gateway, path: str, state: dict[str, GatewayConfig]) -> None:
    loop = asyncio.get_running_loop()

    async def apply() -> None:
        try:
            new = load_config(path)
        except ConfigError as exc:
            _LOGGER.warning("config not reloaded: %s", exc)
            return
        await reload(gateway, state["config"], new)
        state["config"] = new

    try:
        loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(apply()))
    except (NotImplementedError, RuntimeError, AttributeError):
        pass  # no signals here (not the main thread, Windows): no reload


async def _serve(args: argparse.Namespace, config: GatewayConfig, options: dict[str, Any]) -> None:
    from mcpfast.transports.http import serve_http

    app = build_gateway(config)
    gateway = gateway_of(app)
    _watch_sighup(gateway, args.config, {"config": config})
    if args.transport == "stdio":
        await app.serve_stdio()
        return
    host = args.host or "127.0.0.1"
    port = 8000 if args.port is None else args.port
    limits = {key: options.pop(key) for key in ("keepalive_timeout", "max_connections") if key in options}
    if config.bearer_tokens:
        where = f"[{host}]" if ":" in host else host
        options["auth"] = static_bearer_auth(config.bearer_tokens,
                                             f"http://{where}:{port}{options.get('path', '/mcp')}")
    app.loop = asyncio.get_running_loop()
    endpoint = HealthEndpoint(app.http_endpoint(host=host, **options), gateway.health)

    def announce(bound_host: str, bound_port: int) -> None:
        print(f"mcpfast: gateway {config.name!r} serving {len(config.upstreams)} upstreams on "
              f"http://{bound_host}:{bound_port}{options.get('path', '/mcp')} (health: /healthz)",
              file=sys.stderr, flush=True)

    async with app.running():
        await endpoint.start()
        await serve_http(endpoint, host, port, ready=announce, **limits)


def run_gateway(args: argparse.Namespace) -> int:
    """The ``gateway`` subcommand (mcpfast.cli parses the flags); returns the exit status."""
    from mcpfast.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError, http_options
    from mcpfast.transports import run as run_main
    from mcpfast.transports.loop import until_signalled

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"mcpfast: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.transport == "stdio" and (args.host is not None or args.port is not None):
        print("mcpfast: --host and --port apply to --transport http, not to stdio", file=sys.stderr)
        return EXIT_USAGE
    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"mcpfast: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return EXIT_USAGE
    try:
        options = http_options(args)
    except UsageError as exc:
        print(f"mcpfast: {exc}", file=sys.stderr)
        return EXIT_USAGE
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mcpfast gateway: %(message)s"))
    _LOGGER.addHandler(handler)
    _LOGGER.setLevel(logging.INFO)
    try:
        main = _serve(args, config, options)
        run_main(main if args.transport == "stdio" else until_signalled(main))
    except OSError as exc:
        print(f"mcpfast: cannot serve: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
