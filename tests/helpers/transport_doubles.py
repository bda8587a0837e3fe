"""Test doubles and helpers for the stream transports (shared by tests/transports).

FakeTransport stands in for an asyncio transport (records writes, closes on demand);
``connected`` wires a FrameProtocol to one; ``wait_until`` polls a predicate; ``Server``
runs serve_tcp on a loopback port as a task.
"""

import asyncio

import pytest

from mcpfast.transports import FrameProtocol, serve_tcp


class FakeTransport:
    """Records writes; its close() completes only when complete_close() is called."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.writes = []
        self.closing = False
        self.aborted = False
        self.reading = True
        self.limits = None

    def write(self, data):
        assert type(data) is bytes
        self.writes.append(data)

    def get_write_buffer_size(self):
        return 0

    def set_write_buffer_limits(self, high=None, low=None):
        self.limits = (high, low)

    def is_closing(self):
        return self.closing

    def close(self):
        self.closing = True

    def complete_close(self):
        self.protocol.connection_lost(None)

    def abort(self):
        self.closing = True
        if not self.aborted:
            self.aborted = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def pause_reading(self):
        self.reading = False

    def resume_reading(self):
        self.reading = True

    def get_extra_info(self, name, default=None):
        return default


async def connected(factory, **options):
    protocol = FrameProtocol(factory, **options)
    transport = FakeTransport(protocol)
    protocol.connection_made(transport)
    return protocol, transport


async def wait_until(predicate):
    while not predicate():
        await asyncio.sleep(0.005)


class Server:
    """serve_tcp running as a task; ``port`` once ready."""

    def __init__(self, factory, **options):
        self.factory = factory
        self.options = options
        self.task = None
        self.address = None

    async def __aenter__(self):
        bound = asyncio.get_running_loop().create_future()
        self.task = asyncio.ensure_future(serve_tcp(
            self.factory, "127.0.0.1", 0, ready=lambda h, p: bound.set_result((h, p)),
            **self.options,
        ))
        self.address = await asyncio.wait_for(bound, 10)
        return self

    async def __aexit__(self, *exc):
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task
