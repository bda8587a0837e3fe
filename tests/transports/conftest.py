"""Fixtures for the transport tests: both event loops, a recording conn, child scripts."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from mcpfast.transports.loop import loop_factory

REPO_ROOT = Path(__file__).resolve().parents[2]
CHILDREN = Path(__file__).resolve().parent / "children"
# Upper bound for one test's coroutine: a hang fails the test instead of stalling the run.
TEST_TIMEOUT = 30.0


@pytest.fixture(params=["asyncio", "uvloop"])
def loop_kind(request):
    return request.param


@pytest.fixture
def run(loop_kind):
    """run(coroutine) on a fresh loop of the parametrized kind, bounded by TEST_TIMEOUT."""

    def runner(coro, timeout=TEST_TIMEOUT):
        factory = loop_factory(use_uvloop=loop_kind == "uvloop")

        async def bounded():
            return await asyncio.wait_for(coro, timeout)

        return run_on(factory, bounded(), expect_uvloop=loop_kind == "uvloop")

    return runner


def run_on(factory, coro, *, expect_uvloop=False):
    """Run coro on a new loop from factory, then close it (as asyncio.Runner does; 3.10 too)."""
    loop = factory()
    if expect_uvloop:
        assert type(loop).__module__.startswith("uvloop")
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coro)
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


class RecordingConn:
    """A conn that records what the transport gives it and echoes every frame back.

    ``frames`` holds copies of the fed frames (bytes), ``errors`` the feed_error
    exceptions, ``closes`` the close() arguments. ``fail_on`` names frames for which feed
    raises (to show a failing conn does not end the connection).
    """

    def __init__(self, send, *, echo=True, fail_on=()):
        self.send = send
        self.echo = echo
        self.fail_on = set(fail_on)
        self.frames = []
        self.errors = []
        self.closes = []
        self.frame_event = asyncio.Event()
        self.closed_event = asyncio.Event()

    def feed(self, frame):
        assert type(frame) is memoryview
        data = bytes(frame)
        self.frames.append(data)
        self.frame_event.set()
        if data in self.fail_on:
            raise RuntimeError(f"conn failure on {data!r}")
        if self.echo:
            self.send(data)
        return False

    def feed_error(self, exc):
        self.errors.append(exc)
        self.send(json.dumps({"too_large": exc.limit, "size": exc.size}).encode())
        return True

    def close(self, exc=None):
        self.closes.append(exc)
        self.closed_event.set()

    async def wait_frames(self, n):
        while len(self.frames) < n:
            self.frame_event.clear()
            await self.frame_event.wait()


class ConnRecorder:
    """A connection factory keeping every RecordingConn it made."""

    def __init__(self, **options):
        self.options = options
        self.conns = []

    def __call__(self, send):
        conn = RecordingConn(send, **self.options)
        self.conns.append(conn)
        return conn


@pytest.fixture
def recorder():
    return ConnRecorder()


@pytest.fixture
def make_recorder():
    """ConnRecorder itself: make_recorder(echo=False, fail_on={...})."""
    return ConnRecorder


@pytest.fixture
def child_env():
    """env for open_stdio so a child script can import mcpfast from this checkout."""
    return {"PYTHONPATH": str(REPO_ROOT)}


@pytest.fixture
def child_script():
    """Path (str) of a child script in tests/transports/children."""

    def path(name):
        return str(CHILDREN / name)

    return path


@pytest.fixture
def python():
    return sys.executable

