"""A Streamable HTTP server of the official MCP Python SDK 1.x (FastMCP, run by uvicorn),
the kind most deployed servers still are: ``python server.py PORT`` in a venv holding
``mcp`` 1.x (tests/interop/conftest.py makes one)."""

import sys

from mcp.server.fastmcp import FastMCP

app = FastMCP("sdk1-server", host="127.0.0.1", port=int(sys.argv[1]), log_level="WARNING")


@app.tool()
def echo(text: str) -> str:
    """Say it back."""
    return text


if __name__ == "__main__":
    app.run("streamable-http")
