"""A real Prometheus for the metrics tests: Debian's ``prometheus`` package (installed here
with apt-get when missing and this runs as root), started on a loopback port with a
config scraping the given targets every second; queried through its HTTP API. When it
cannot be had the test is skipped, saying why."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from redis_server import free_port

CONFIG = """
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mcpfast
    metrics_path: {metrics_path}
    static_configs:
      - targets: [{targets}]
"""


def prometheus_binary() -> str:
    """The prometheus binary, installed from Debian's package when missing (pytest.skip
    when that cannot be done)."""
    found = shutil.which("prometheus")
    if found is not None:
        return found
    if shutil.which("apt-get") is None or not hasattr(__import__("os"), "geteuid") or \
            __import__("os").geteuid() != 0:
        pytest.skip("prometheus is not installed and cannot be here (needs apt-get as root)")
    for command in (["apt-get", "install", "-y", "-qq", "--no-install-recommends", "prometheus"],
                    ["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "prometheus"]):
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        found = shutil.which("prometheus")
        if found is not None:
            return found
    pytest.skip("Debian's prometheus package could not be installed (no network?)")


class Prometheus:
    """A running Prometheus: ``query(promql)`` -> the API's result list."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    def query(self, promql: str) -> list[Any]:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=5) as response:
            answer = json.loads(response.read())
        assert answer["status"] == "success", answer
        return answer["data"]["result"]

    def targets_up(self) -> bool:
        with urllib.request.urlopen(f"{self.url}/api/v1/targets", timeout=5) as response:
            answer = json.loads(response.read())
        active = answer["data"]["activeTargets"]
        return bool(active) and all(target["health"] == "up" for target in active)


@contextlib.contextmanager
def prometheus_scraping(target_port: int, metrics_path: str = "/metrics") -> Iterator[Prometheus]:
    """Prometheus on a free loopback port scraping 127.0.0.1:<target_port><metrics_path>."""
    binary = prometheus_binary()
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        config = Path(directory) / "prometheus.yml"
        config.write_text(CONFIG.format(metrics_path=metrics_path, targets=f"'127.0.0.1:{target_port}'"))
        log = open(Path(directory) / "prometheus.log", "wb")
        process = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={directory}/data",
                                    f"--web.listen-address=127.0.0.1:{port}"],
                                   stdout=log, stderr=subprocess.STDOUT)
        prometheus = Prometheus(port)
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    raise AssertionError("prometheus exited: " + (Path(directory) / "prometheus.log").read_text())
                try:
                    with urllib.request.urlopen(f"{prometheus.url}/-/ready", timeout=1) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError("prometheus did not become ready")
                time.sleep(0.1)
            yield prometheus
        finally:
            process.terminate()
            process.wait(timeout=20)
            log.close()


def wait_for(predicate: Any, timeout: float = 30.0) -> Optional[Any]:
    """predicate()'s first truthy value, asked every 0.2 s for ``timeout`` seconds
    (AssertionError then: a bound on a hung test, not a speed assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.2)
