"""``mcpfast gateway config.json``: a gateway served from a config file.

Serves on stdio (the default) or Streamable HTTP (``--transport http --host H --port P``,
the HTTP flags of ``mcpfast run``), with ``GET /healthz`` over HTTP
(:mod:`mcpfast.gateway.health`) and, when the config lists ``auth.bearerTokens``, those
bearer tokens required at the gateway's edge -- or, with ``mcpfast run``'s verifier flags
(``--jwks-url URL --issuer ISS --audience AUD``, ``--introspection-url``, ``--api-keys``),
the tokens that verifier accepts (never passed to an upstream: each upstream has its own
``headers``). SIGHUP reads the file again and applies it without dropping the
downstream sessions (:func:`mcpfast.gateway.from_config.reload`): upstreams added are started, removed ones stopped,
changed ones restarted, and ones whose only change is how they are shown (namespace,
filters, renames, timeouts) keep their session. Warnings (an upstream that does not
start, one that died) go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from typing import Any

from mcpfast.gateway.config import ConfigError, GatewayConfig, load_config
from mcpfast.gateway.from_config import build_gateway, reload
from mcpfast.gateway.gateway import Gateway, gateway_of
from mcpfast.gateway.serving import serve_gateway_http

__all__ = ["run_gateway"]

_LOGGER = logging.getLogger("mcpfast.gateway")


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
    app = build_gateway(config)
    _watch_sighup(gateway_of(app), args.config, {"config": config})
    if args.transport == "stdio":
        await app.serve_stdio()
        return
    path = options.get("path", "/mcp")

    def announce(bound_host: str, bound_port: int) -> None:
        print(f"mcpfast: gateway {config.name!r} serving {len(config.upstreams)} upstreams on "
              f"http://{bound_host}:{bound_port}{path} (health: /healthz)", file=sys.stderr, flush=True)

    await serve_gateway_http(app, args.host or "127.0.0.1", 8000 if args.port is None else args.port,
                             ready=announce, bearer_tokens=config.bearer_tokens, **options)


def run_gateway(args: argparse.Namespace) -> int:
    """The ``gateway`` subcommand (mcpfast.cli parses the flags); returns the exit status."""
    from mcpfast.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError, http_options
    from mcpfast.cli_auth import auth_options
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
        # The verifier flags of ``mcpfast run`` (JWT/JWKS, introspection, API keys): the
        # gateway's edge checks the downstream's token; upstreams never see it.
        options.update(auth_options(args))
    except (UsageError, ValueError) as exc:
        print(f"mcpfast: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if "auth" in options and config.bearer_tokens:
        print("mcpfast: give the config's auth.bearerTokens or the verifier flags "
              "(--jwks-url, --introspection-url, --api-keys), not both", file=sys.stderr)
        return EXIT_USAGE
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("mcpfast gateway: %(message)s"))
    _LOGGER.addHandler(handler)
    _LOGGER.setLevel(logging.INFO)
    # As Server.run does: what exists now lives as long as the process, out of the
    # collector's sight (fewer full passes re-scanning it while requests churn).
    gc.collect()
    gc.freeze()
    try:
        main = _serve(args, config, options)
        run_main(main if args.transport == "stdio" else until_signalled(main))
    except OSError as exc:
        print(f"mcpfast: cannot serve: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
