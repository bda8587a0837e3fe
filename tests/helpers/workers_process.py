"""``mcpfast run <app> --transport http --workers N`` as a child process of a test: the
supervisor, the port its workers listen on and their pids (the --workers tests)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

from mcp_http import post_2026

ROOT = Path(__file__).resolve().parents[2]


class Workers:
    """The supervisor process and the port its workers listen on."""

    def __init__(self, app: Path, count: int, *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        env.pop("MCPFAST_SECRET", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpfast", "run", f"{app}:app", "--transport", "http",
             "--port", "0", "--workers", str(count), *extra],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        listening = self.wait_line(r"listening on 127\.0\.0\.1:(\d+)")
        self.port = int(listening.group(1))
        self.pids = [int(p) for p in re.search(r"pids ([\d, ]+)", listening.string).group(1).split(", ")]

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def wait_line(self, pattern: str, timeout: float = 60.0, start: int = 0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[start:]:
                found = re.search(pattern, line)
                if found:
                    return found
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r}: {''.join(self.lines)}")

    def call(self, method: str, params: Optional[dict] = None, name: Optional[str] = None) -> dict:
        """One 2026-07-28 request on a fresh connection (so the kernel picks a worker)."""
        return post_2026(self.port, method, params, name)

    def worker_pid(self) -> int:
        return int(self.call("tools/call", {"name": "pid", "arguments": {}}, "pid")["content"][0]["text"])

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
