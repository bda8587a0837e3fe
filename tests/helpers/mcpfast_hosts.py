"""Independent ``mcpfast run`` processes serving tests/transports/workers_app.py over HTTP, as
several hosts of one deployment would run them (the same MCPFAST_SECRET, the same Redis)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "transports" / "workers_app.py"


def start_host(port: int, redis_url: str, secret: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCPFAST_SECRET": secret}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", f"{APP}:app", "--transport", "http", "--port", str(port),
         "--redis", redis_url], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    deadline = time.monotonic() + 60
    while not any(re.search(r"serving 'workers' over http", line) for line in lines):
        assert process.poll() is None and time.monotonic() < deadline, "".join(lines)
        time.sleep(0.05)
    return process
