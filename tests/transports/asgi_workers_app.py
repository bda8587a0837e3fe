"""The --workers test server as an ASGI app for uvicorn's workers (``--factory``): Redis
for what the workers share -- events, tasks, 2025-era sessions and their streams -- when
MCPFAST_TEST_REDIS names one."""

import os
import time

from workers_app import app

from mcpfast.scaleout.redis_event_store import RedisEventStore
from mcpfast.scaleout.redis_session_directory import RedisSessionDirectory
from mcpfast.server import RedisPublisher, RedisTaskStore


@app.tool()
def hold(seconds: float = 0.6) -> int:
    """Blocks this worker's event loop for ``seconds`` (a synchronous tool runs on the loop),
    so that a connection made meanwhile is accepted by the other worker; returns the pid of
    the held one. Only uvicorn's workers serve it: the other tests count workers_app's tools."""
    time.sleep(seconds)
    return os.getpid()


def make_app():
    url = os.environ.get("MCPFAST_TEST_REDIS")
    if not url:
        return app.asgi_app(stateless=True)
    app.publisher = RedisPublisher(url)
    app.tasks.store = RedisTaskStore(url)
    return app.asgi_app(session_directory=RedisSessionDirectory(url), event_store=RedisEventStore(url))
