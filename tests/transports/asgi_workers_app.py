"""The --workers test server as an ASGI app for uvicorn's workers (``--factory``): Redis
for what the workers share -- events, tasks, 2025-era sessions and their streams -- when
MCPFAST_TEST_REDIS names one."""

import os

from workers_app import app

from mcpfast.server import RedisPublisher, RedisTaskStore
from mcpfast.transports.http.redis_event_store import RedisEventStore
from mcpfast.transports.http.redis_session_directory import RedisSessionDirectory


def make_app():
    url = os.environ.get("MCPFAST_TEST_REDIS")
    if not url:
        return app.asgi_app(stateless=True)
    app.publisher = RedisPublisher(url)
    app.tasks.store = RedisTaskStore(url)
    return app.asgi_app(session_directory=RedisSessionDirectory(url), event_store=RedisEventStore(url))
