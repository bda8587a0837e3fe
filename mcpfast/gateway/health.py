"""HealthEndpoint: ``GET /healthz`` beside an HTTP endpoint, answering each upstream's
state as JSON (200 when every upstream is ready, 503 when one is not), every other
request passed to the endpoint it wraps. It reveals names and states, no credentials;
it answers without authentication, so that load balancers and supervisors can ask."""

from __future__ import annotations

import json
from typing import Any, Callable

from mcpfast._core.http_messages import HTTPResponse

__all__ = ["HEALTH_PATH", "HealthEndpoint"]

HEALTH_PATH = "/healthz"


class HealthEndpoint:
    """An HTTP endpoint (the contract of mcpfast's HTTP server) adding ``/healthz``."""

    def __init__(self, inner: Any, report: Callable[[], dict[str, Any]], path: str = HEALTH_PATH) -> None:
        self.inner = inner
        self.report = report
        self.path = path

    @property
    def max_body_size(self) -> int:
        """The wrapped endpoint's largest POST body."""
        return int(self.inner.max_body_size)

    @max_body_size.setter
    def max_body_size(self, size: int) -> None:
        self.inner.max_body_size = size

    def handle(self, request: Any) -> Any:
        if request.path != self.path:
            return self.inner.handle(request)
        if request.method not in ("GET", "HEAD"):
            return HTTPResponse(405, [("allow", "GET, HEAD"), ("content-type", "text/plain")],
                                b"Method Not Allowed: /healthz answers GET")
        report = self.report()
        status = 200 if report.get("status") == "ok" else 503
        body = json.dumps(report, separators=(",", ":"), default=str).encode()
        return HTTPResponse(status, [("content-type", "application/json"), ("cache-control", "no-store")],
                            b"" if request.method == "HEAD" else body)

    async def start(self) -> None:
        await self.inner.start()

    def begin_shutdown(self) -> None:
        self.inner.begin_shutdown()

    def close(self) -> None:
        self.inner.close()
