"""A one-tool MCP server: ``echo(text) -> text``. The benchmark's mcpfast peer.

    python examples/echo_server.py              # serves stdio
    python examples/echo_server.py tcp 8765     # newline-framed TCP on 127.0.0.1:8765

The tool is a plain (sync) function, so each tools/call is answered inline, without a task.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("mcpfast") is None:  # run from a source checkout, not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcpfast.server import Server  # noqa: E402

app = Server("echo", version="1.0.0")


@app.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def main(argv: list[str]) -> None:
    if not argv or argv == ["stdio"]:
        app.run("stdio")
    elif len(argv) == 2 and argv[0] == "tcp":
        app.run("tcp", host="127.0.0.1", port=int(argv[1]))
    else:
        sys.exit("usage: echo_server.py [stdio | tcp PORT]")


if __name__ == "__main__":
    main(sys.argv[1:])
