"""Resource subscriptions: async iteration, callbacks, unsubscribing, disconnection."""

import asyncio

import pytest

from mcpfast.client.subscriptions import MAX_QUEUED
from mcpfast.jsonrpc import ConnectionClosed, JSONRPCError


def _subscribable(server, refused=()):
    calls = []

    def subscribe(params, ctx):
        if params["uri"] in refused:
            raise JSONRPCError(-32002, "Resource not found")
        calls.append(("subscribe", params["uri"]))
        return {}

    def unsubscribe(params, ctx):
        calls.append(("unsubscribe", params["uri"]))
        return {}

    server.router.add_request_handler("resources/subscribe", subscribe)
    server.router.add_request_handler("resources/unsubscribe", unsubscribe)
    return calls


def _update(server, uri, **extra):
    server.session.notify("notifications/resources/updated", {"uri": uri, **extra})


def test_iterator_gets_the_updates_of_its_uri(fake, arun, mcp_schema):
    server = fake()
    calls = _subscribable(server)

    async def main():
        client = await server.connect()
        sub = await client.subscribe("file:///a")
        assert sub.uri == "file:///a" and sub.active
        assert calls == [("subscribe", "file:///a")]
        _update(server, "file:///a")
        _update(server, "file:///other")
        _update(server, "file:///a", title="A")
        await server.settle()
        assert sub.pending() == 2
        first = await sub.__anext__()
        second = await sub.__anext__()
        assert first == {"uri": "file:///a"} and second == {"uri": "file:///a", "title": "A"}
        server.check_schema(mcp_schema)

    arun(main())


def test_iterating_waits_for_updates(fake, arun):
    server = fake()
    _subscribable(server)

    async def main():
        client = await server.connect()
        sub = await client.subscribe("file:///a")
        got = []

        async def consume():
            async for params in sub:
                got.append(params["uri"])
                if len(got) == 3:
                    return

        task = asyncio.ensure_future(consume())
        await server.settle()
        assert not task.done()
        for _ in range(3):
            _update(server, "file:///a")
            await server.settle()
        await asyncio.wait_for(task, 5)
        assert got == ["file:///a"] * 3

    arun(main())


def test_callback_subscriptions(fake, arun):
    server = fake()
    _subscribable(server)

    async def main():
        client = await server.connect()
        sync_seen, async_seen = [], []

        async def on_update(params):
            await asyncio.sleep(0)
            async_seen.append(params)

        sub = await client.subscribe("file:///a", sync_seen.append)
        await client.subscribe("file:///a", on_update)
        _update(server, "file:///a")
        await server.settle()
        assert sync_seen == [{"uri": "file:///a"}] and async_seen == [{"uri": "file:///a"}]
        with pytest.raises(TypeError, match="callback"):
            await sub.__anext__()
        with pytest.raises(TypeError):
            await client.subscribe("file:///a", "not callable")

    arun(main())


def test_unsubscribe_is_sent_when_the_last_subscription_ends(fake, arun, mcp_schema):
    server = fake()
    calls = _subscribable(server)

    async def main():
        client = await server.connect()
        first = await client.subscribe("file:///a")
        second = await client.subscribe("file:///a")
        await first.unsubscribe()
        assert not first.active and second.active
        assert ("unsubscribe", "file:///a") not in calls
        _update(server, "file:///a")
        await server.settle()
        assert first.pending() == 0 and second.pending() == 1
        async with second:
            pass
        assert calls == [("subscribe", "file:///a"), ("subscribe", "file:///a"),
                         ("unsubscribe", "file:///a")]
        # Updates after unsubscribing are not delivered; the iterator drains and stops.
        _update(server, "file:///a")
        await server.settle()
        assert [p async for p in second] == [{"uri": "file:///a"}]
        assert [p async for p in first] == []
        # Unsubscribing twice does nothing more.
        await second.unsubscribe()
        assert calls.count(("unsubscribe", "file:///a")) == 1
        server.check_schema(mcp_schema)

    arun(main())


def test_client_unsubscribe_ends_every_subscription_of_the_uri(fake, arun):
    server = fake()
    calls = _subscribable(server)

    async def main():
        client = await server.connect()
        subs = [await client.subscribe("file:///a") for _ in range(2)]
        other = await client.subscribe("file:///b")
        await client.unsubscribe("file:///a")
        assert not any(s.active for s in subs) and other.active
        assert calls[-1] == ("unsubscribe", "file:///a")
        with pytest.raises(StopAsyncIteration):
            await subs[0].__anext__()

    arun(main())


def test_a_refused_subscription_is_not_kept(fake, arun):
    server = fake()
    _subscribable(server, refused={"file:///nope"})

    async def main():
        client = await server.connect()
        with pytest.raises(JSONRPCError):
            await client.subscribe("file:///nope")
        assert client._subscriptions == {}
        with pytest.raises(TypeError):
            await client.subscribe(42)

    arun(main())


def test_disconnection_ends_iterators_with_connection_closed(fake, arun):
    server = fake()
    _subscribable(server)

    async def main():
        client = await server.connect()
        sub = await client.subscribe("file:///a")
        waiting = await client.subscribe("file:///b")
        waiter = asyncio.ensure_future(waiting.__anext__())
        _update(server, "file:///a")
        await server.settle()
        server.drop(ConnectionError("server crashed"))
        assert not sub.active
        # Queued updates are still delivered, then the error.
        assert await sub.__anext__() == {"uri": "file:///a"}
        with pytest.raises(ConnectionClosed) as info:
            await sub.__anext__()
        assert isinstance(info.value.__cause__, ConnectionError)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(waiter, 5)
        # Leaving a subscription's block after the drop sends nothing and raises nothing.
        async with sub:
            pass

    arun(main())


def test_closing_the_client_ends_iterators_cleanly(fake, arun):
    server = fake()
    _subscribable(server)

    async def main():
        client = await server.connect()
        sub = await client.subscribe("file:///a")
        await client.aclose()
        assert [p async for p in sub] == []

    arun(main())


def test_the_queue_keeps_the_newest_updates(fake, arun):
    server = fake()
    _subscribable(server)

    async def main():
        client = await server.connect()
        sub = await client.subscribe("file:///a")
        for i in range(MAX_QUEUED + 10):
            _update(server, "file:///a", n=i)
        await server.settle(rounds=5)
        assert sub.pending() == MAX_QUEUED
        first = await sub.__anext__()
        assert first["n"] == 10
        assert "queued" in repr(sub)

    arun(main())
