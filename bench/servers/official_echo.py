"""An official `mcp` SDK server with one `echo` tool, for the end-to-end benchmark.

    python bench/servers/official_echo.py stdio
    python bench/servers/official_echo.py http PORT     (Streamable HTTP at http://127.0.0.1:PORT/mcp)
    python bench/servers/official_echo.py http-stateless PORT   (its fastest HTTP settings:
        stateless, JSON answers, uvicorn with uvloop and httptools)
    python bench/servers/official_echo.py http-stateless-workers N PORT   (the same, N uvicorn workers)
    python bench/servers/official_echo.py stdio-otel[-off] | http-stateless-otel[-off] PORT
        (the OpenTelemetry SDK configured, bench/servers/otel_setup.py; the SDK's own span
        middleware, on by default, removed with -off)

Written with ``mcp.server.MCPServer`` (the FastMCP API of mcp 2.x).  The tool is ``async`` because
MCPServer runs plain functions in a worker thread, and logging is at WARNING so that neither the
SDK nor uvicorn writes a log line per request: the SDK is measured at its fastest settings.
"""

import sys

from mcp.server import MCPServer

server = MCPServer("bench-echo", log_level="WARNING")


@server.tool()
async def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def stateless_app():
    """The SDK's fastest HTTP app (stateless, JSON answers), for uvicorn's workers."""
    return server.streamable_http_app(stateless_http=True, json_response=True)


def main(argv: list[str]) -> None:
    if argv[:1] and (argv[0].endswith("-otel") or argv[0].endswith("-otel-off")):
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from otel_setup import configure_sdk

        configure_sdk()
        if argv[0].endswith("-off"):
            # The SDK's documented opt-out: drop its OpenTelemetryMiddleware.
            server._lowlevel_server.middleware = [
                mw for mw in server._lowlevel_server.middleware
                if type(mw).__name__ != "OpenTelemetryMiddleware"]
        argv = [argv[0].split("-otel")[0], *argv[1:]]
    if argv[:1] == ["stdio"]:
        server.run("stdio")
    elif argv[:1] == ["http"] and len(argv) == 2:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    elif argv[:1] == ["http-stateless-workers"] and len(argv) == 3:
        import os

        import uvicorn

        # uvicorn's workers import the app by name: this module's stateless_app factory.
        uvicorn.run("official_echo:stateless_app", factory=True, workers=int(argv[1]),
                    app_dir=os.path.dirname(os.path.abspath(__file__)), host="127.0.0.1",
                    port=int(argv[2]), loop="uvloop", http="httptools", log_level="warning",
                    access_log=False)
    elif argv[:1] == ["http-stateless"] and len(argv) == 2:
        import uvicorn

        app = server.streamable_http_app(stateless_http=True, json_response=True)
        uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), loop="uvloop", http="httptools",
                    log_level="warning", access_log=False)
    else:
        sys.exit("usage: official_echo.py stdio[-otel[-off]] | http PORT | http-stateless[-otel[-off]] PORT "
                 "| http-stateless-workers N PORT")


if __name__ == "__main__":
    main(sys.argv[1:])
