"""``mcpfast gateway config.json`` in a child process, for the tests that drive it from
outside: its command line, started over Streamable HTTP (its URL read from its log), and
stopped."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Iterator


def gateway_command(config: str, *flags: str) -> list[str]:
    """The command line serving ``config`` (stdio unless ``flags`` say otherwise)."""
    return [sys.executable, "-m", "mcpfast", "gateway", str(config), *flags]


def start_http_gateway(config: str, *flags: str) -> tuple[subprocess.Popen, str]:
    """The gateway over HTTP on a free loopback port: the process and its MCP endpoint's URL."""
    process = subprocess.Popen(gateway_command(config, "--transport", "http", "--port", "0", *flags),
                               stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        found = re.search(r"on (http://\S+/mcp)", line)
        if found:
            # The rest of its stderr is drained, so that its log never fills the pipe.
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, found.group(1)
    raise AssertionError(f"the gateway did not start (exit {process.wait()})")


def stop(process: subprocess.Popen) -> None:
    """Terminate a child process (killed when it does not end within 10 s)."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def http_gateway(config: str, *flags: str) -> Iterator[str]:
    """The gateway over HTTP while the block runs; yields its URL."""
    process, url = start_http_gateway(config, *flags)
    try:
        yield url
    finally:
        stop(process)
