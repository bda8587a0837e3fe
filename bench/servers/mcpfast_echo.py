"""An mcpfast server with one `echo` tool, for the end-to-end benchmark.

    python bench/servers/mcpfast_echo.py stdio
    python bench/servers/mcpfast_echo.py tcp PORT    (newline-framed JSON-RPC on 127.0.0.1:PORT)
    python bench/servers/mcpfast_echo.py http PORT   (Streamable HTTP at http://127.0.0.1:PORT/mcp)
    python bench/servers/mcpfast_echo.py http-stateless PORT   (no sessions, JSON answers)
    python bench/servers/mcpfast_echo.py http-stateless-mw PORT   (the same, one trivial middleware)
    python bench/servers/mcpfast_echo.py http-stateless-eager PORT   (one trivial eager middleware)
    python bench/servers/mcpfast_echo.py stdio-otel | http-stateless-otel PORT   (telemetry on:
        the OpenTelemetry SDK configured, bench/servers/otel_setup.py; -otel-spans,
        -otel-metrics, -otel-sampled: spans only, metrics only, 10% of the traces sampled)
    python bench/servers/mcpfast_echo.py http-stateless-jwt PORT PEM CACHE_TTL   (bearer JWTs verified)

The same tool as bench/servers/official_echo.py, written with mcpfast's server API
(``mcpfast.Server``, the ``tool`` decorator and ``Server.run(transport, host=..., port=...)``).
"""

import os
import sys

# Started as a script from any working directory: make the repository's mcpfast importable.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from mcpfast import Server  # noqa: E402
from mcpfast.server.middleware import Middleware  # noqa: E402

server = Server("bench-echo")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


async def passing(ctx, call_next):
    """The trivial middleware: the cost of the request pipeline itself."""
    return await call_next(ctx)


class Passing(Middleware):
    """The trivial eager middleware: run inline until it suspends (no task when nothing does)."""

    eager = True

    async def on_message(self, ctx, call_next):
        return await call_next(ctx)


def main(argv: list[str]) -> None:
    from otel_setup import VARIANTS, configure_sdk

    suffix = next((end for end in VARIANTS if argv[:1] and argv[0].endswith(end)), None)
    if suffix is not None:
        # Spans and metrics on: the Server adds its telemetry when it finds the providers.
        configure_sdk(**VARIANTS[suffix])
        argv = [argv[0][: -len(suffix)], *argv[1:]]
    if argv[:1] == ["stdio"]:
        server.run("stdio")
    elif argv[:1] in (["tcp"], ["http"]) and len(argv) == 2:
        server.run(argv[0], host="127.0.0.1", port=int(argv[1]))
    elif argv[:1] == ["http-stateless"] and len(argv) == 2:
        server.run("http", host="127.0.0.1", port=int(argv[1]), stateless=True, json_response=True)
    elif argv[:1] in (["http-stateless-mw"], ["http-stateless-eager"]) and len(argv) == 2:
        server.add_middleware(passing if argv[0] == "http-stateless-mw" else Passing())
        server.run("http", host="127.0.0.1", port=int(argv[1]), stateless=True, json_response=True)
    elif argv[:1] == ["http-stateless-jwt"] and len(argv) == 4:
        from mcpfast.auth.jwt import JWTVerifier
        from mcpfast.transports.http import BearerAuth

        with open(argv[2], "rb") as f:
            public_key = f.read()
        # The issuer and audience of bench/bench_http.py's token.
        verifier = JWTVerifier(key=public_key, issuer="https://auth.bench.invalid",
                               audience="http://127.0.0.1/mcp", cache_ttl=float(argv[3]))
        auth = BearerAuth(verifier, resource="http://127.0.0.1/mcp",
                          authorization_servers=["https://auth.bench.invalid"])
        server.run("http", host="127.0.0.1", port=int(argv[1]), stateless=True, json_response=True, auth=auth)
    else:
        sys.exit("usage: mcpfast_echo.py stdio[-otel] | tcp PORT | http PORT "
                 "| http-stateless[-mw|-eager|-otel] PORT | http-stateless-jwt PORT PEM CACHE_TTL")


if __name__ == "__main__":
    main(sys.argv[1:])
