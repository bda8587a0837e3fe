"""The --workers test server as an ASGI app for uvicorn's workers (``--factory``): Redis
for what the workers share when MCPFAST_TEST_REDIS names one."""

import os

from workers_app import app

from mcpfast.server import RedisPublisher, RedisTaskStore


def make_app():
    url = os.environ.get("MCPFAST_TEST_REDIS")
    if url:
        app.publisher = RedisPublisher(url)
        app.tasks.store = RedisTaskStore(url)
    return app.asgi_app(stateless=True)
