"""Many requests on one connection: correlation, and everything failing at once on a drop."""

import asyncio
import random

import pytest

from mcpfast.jsonrpc import ConnectionClosed


def test_many_requests_in_flight_get_their_own_answers(fake, arun):
    server = fake()
    waiting = []

    async def call(params, ctx):
        future = asyncio.get_running_loop().create_future()
        waiting.append(future)
        await future
        return {"content": [{"type": "text", "text": params["arguments"]["n"]}]}

    server.router.add_request_handler("tools/call", call)

    async def main():
        client = await server.connect()
        tasks = [asyncio.ensure_future(client.call_tool("echo", {"n": str(i)})) for i in range(200)]
        while len(waiting) < 200:
            await asyncio.sleep(0)
        assert client.session.pending == 200
        # The server answers in a random order.
        order = list(waiting)
        random.Random(7).shuffle(order)
        for future in order:
            future.set_result(None)
        results = await asyncio.gather(*tasks)
        assert [r["content"][0]["text"] for r in results] == [str(i) for i in range(200)]
        assert client.session.pending == 0
        # Ids are unique.
        ids = [m["id"] for m in server.sent("tools/call")]
        assert len(set(ids)) == 200

    arun(main())


def test_a_drop_fails_every_waiter_at_once(fake, arun):
    server = fake()

    async def never(params, ctx):
        await asyncio.sleep(60)

    server.router.add_request_handler("tools/call", never)
    server.router.add_request_handler("resources/read", never)

    async def main():
        client = await server.connect()
        calls = [asyncio.ensure_future(client.call_tool("t", {"i": i})) for i in range(50)]
        reads = [asyncio.ensure_future(client.read_resource(f"file:///{i}")) for i in range(10)]
        pings = [asyncio.ensure_future(client.ping()) for _ in range(5)]
        await server.settle()
        assert client.session.pending == 50 + 10
        cause = ConnectionError("the server process exited with code 3")
        server.drop(cause)
        results = await asyncio.gather(*calls, *reads, *pings, return_exceptions=True)
        # The pings were answered before the drop; every other waiter failed.
        failures = results[:60]
        assert results[60:] == [None] * 5
        assert all(isinstance(r, ConnectionClosed) for r in failures)
        assert all(r.__cause__ is cause for r in failures)
        assert "exited with code 3" in str(failures[0])
        assert client.closed and not client.initialized
        assert client.close_error is cause
        await asyncio.wait_for(client.wait_closed(), 1)
        with pytest.raises(ConnectionClosed):
            await client.call_tool("t")

    arun(main())


def test_waiters_fail_in_the_same_loop_iteration(fake, arun):
    server = fake()

    async def never(params, ctx):
        await asyncio.sleep(60)

    server.router.add_request_handler("tools/call", never)

    async def main():
        client = await server.connect()
        outs = [client.session.send_request("tools/call", {"name": "t"}) for _ in range(20)]
        server.drop(ConnectionError("gone"))
        # No await in between: the futures are already failed.
        assert all(out.future.done() for out in outs)
        assert all(isinstance(out.future.exception(), ConnectionClosed) for out in outs)

    arun(main())


def test_a_local_close_fails_waiters_without_cause(fake, arun):
    server = fake()

    async def never(params, ctx):
        await asyncio.sleep(60)

    server.router.add_request_handler("tools/call", never)

    async def main():
        client = await server.connect()
        task = asyncio.ensure_future(client.call_tool("t"))
        await server.settle()
        await client.aclose()
        with pytest.raises(ConnectionClosed) as info:
            await task
        assert info.value.__cause__ is None
        assert client.close_error is None and client.closed
        # Idempotent.
        await client.aclose()
        async with client:
            pass

    arun(main())


def test_server_requests_in_progress_stop_on_a_drop(fake, arun):
    server = fake()
    started = asyncio.Event()
    stopped = []

    async def sample(params):
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.append(True)
            raise

    async def main():
        client = await server.connect(sampling=sample)
        request = asyncio.ensure_future(server.session.request("sampling/createMessage", {}))
        await started.wait()
        server.drop(ConnectionError("gone"))
        await server.settle()
        assert stopped == [True]
        with pytest.raises(ConnectionClosed):
            await request
        assert client.closed

    arun(main())
