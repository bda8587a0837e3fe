"""FastMCP 4's proxy (``create_proxy``) in front of an MCP server, for the gateway benchmark.

    python bench/servers/fastmcp_proxy.py stdio -- COMMAND [ARG ...]   (served on stdio,
        the upstream started as COMMAND over stdio)
    python bench/servers/fastmcp_proxy.py http PORT URL   (served over Streamable HTTP at
        http://127.0.0.1:PORT/mcp, the upstream at URL over Streamable HTTP)

Run with the Python of bench/.peers/fastmcp (bench/peer_venvs.py installs it, pinned).
The proxy is made as FastMCP's documentation shows a user making one: ``create_proxy`` of an
``mcpServers`` config (a command) or of a URL, with its default settings; only the banner and
the per-request log lines are off, as for every server the benchmarks time.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    from fastmcp.server import create_proxy

    if len(argv) >= 3 and argv[0] == "stdio" and argv[1] == "--":
        target = {"mcpServers": {"echo": {"command": argv[2], "args": argv[3:]}}}
        create_proxy(target, name="fastmcp-proxy").run("stdio", show_banner=False, log_level="WARNING")
    elif len(argv) == 3 and argv[0] == "http":
        proxy = create_proxy(argv[2], name="fastmcp-proxy")
        proxy.run("http", show_banner=False, host="127.0.0.1", port=int(argv[1]), log_level="WARNING")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
