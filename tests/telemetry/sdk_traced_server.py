"""An official-SDK (``mcp``) server with its telemetry on, for tests/telemetry: run over
stdio with the OpenTelemetry SDK configured in this process, each finished span written
as a JSON line to the file ``TRACED_SPANS`` names (traced_app's exporter). The SDK's
server span middleware is on by default; ``SDK_TELEMETRY=off`` removes it."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from mcp.server.mcpserver import MCPServer  # noqa: E402
from traced_app import _configure_sdk  # noqa: E402

warnings.simplefilter("ignore")

mcp = MCPServer("official-traced", version="2.3.0-test")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    _configure_sdk(os.environ["TRACED_SPANS"])
    mcp.run()
