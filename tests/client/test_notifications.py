"""Notification callbacks: log messages, list changes, resource updates, any method."""

import asyncio
import logging

import pytest


def test_log_messages_reach_on_log(fake, arun):
    server = fake()
    seen = []

    async def main():
        await server.connect(on_log=seen.append)
        params = {"level": "warning", "logger": "db", "data": {"rows": 3}}
        server.session.notify("notifications/message", params)
        await server.settle()
        assert seen == [params]

    arun(main())


def test_list_changed_callbacks_get_the_kind(fake, arun):
    server = fake()
    kinds = []

    async def main():
        await server.connect(on_list_changed=kinds.append)
        for kind in ("tools", "prompts", "resources"):
            server.session.notify(f"notifications/{kind}/list_changed")
        await server.settle()
        assert kinds == ["tools", "prompts", "resources"]

    arun(main())


def test_resource_updated_callback_gets_every_update(fake, arun):
    server = fake()
    seen = []

    async def main():
        await server.connect(on_resource_updated=seen.append)
        server.session.notify("notifications/resources/updated", {"uri": "file:///a"})
        server.session.notify("notifications/resources/updated", {"uri": "file:///b"})
        await server.settle()
        assert seen == [{"uri": "file:///a"}, {"uri": "file:///b"}]

    arun(main())


def test_decorators_and_any_method(fake, arun):
    server = fake()
    got = {"log": [], "custom": [], "changed": [], "updated": []}

    async def main():
        client = await server.connect()

        @client.on_log
        def log(params):
            got["log"].append(params["data"])

        @client.on_notification("notifications/custom")
        def custom(params):
            got["custom"].append(params)

        @client.on_list_changed
        def changed(kind):
            got["changed"].append(kind)

        @client.on_resource_updated
        def updated(params):
            got["updated"].append(params["uri"])

        assert callable(log) and callable(custom) and callable(changed) and callable(updated)
        server.session.notify("notifications/message", {"level": "info", "data": "hi"})
        server.session.notify("notifications/custom")
        server.session.notify("notifications/tools/list_changed")
        server.session.notify("notifications/resources/updated", {"uri": "file:///u"})
        await server.settle()
        # A notification without params reaches callbacks as {}.
        assert got == {"log": ["hi"], "custom": [{}], "changed": ["tools"],
                       "updated": ["file:///u"]}

    arun(main())


def test_async_callbacks_run(fake, arun):
    server = fake()
    done = asyncio.Event()
    seen = []

    async def on_log(params):
        await asyncio.sleep(0)
        seen.append(params["data"])
        done.set()

    async def main():
        await server.connect(on_log=on_log)
        server.session.notify("notifications/message", {"level": "info", "data": 1})
        await asyncio.wait_for(done.wait(), 5)
        assert seen == [1]

    arun(main())


def test_a_failing_callback_is_logged_and_the_others_still_run(fake, arun, caplog):
    server = fake()
    seen = []

    def broken(params):
        raise RuntimeError("callback bug")

    async def broken_async(params):
        raise RuntimeError("async callback bug")

    async def main():
        client = await server.connect()
        client.on_log(broken)
        client.on_log(broken_async)
        client.on_log(seen.append)
        with caplog.at_level(logging.ERROR, logger="mcpfast.client"):
            server.session.notify("notifications/message", {"level": "info", "data": 1})
            await server.settle()
        assert seen == [{"level": "info", "data": 1}]
        messages = " ".join(r.getMessage() for r in caplog.records)
        assert "notifications/message" in messages
        assert any("callback bug" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
        assert any("async callback bug" in str(r.exc_info[1])
                   for r in caplog.records if r.exc_info)
        # The connection goes on.
        await client.ping()

    arun(main())


def test_remove_notification_handler(fake, arun):
    server = fake()
    seen = []

    async def main():
        client = await server.connect()
        client.on_notification("notifications/custom", seen.append)
        server.session.notify("notifications/custom", {"n": 1})
        await server.settle()
        client.remove_notification_handler("notifications/custom", seen.append)
        server.session.notify("notifications/custom", {"n": 2})
        await server.settle()
        assert seen == [{"n": 1}]
        with pytest.raises(ValueError):
            client.remove_notification_handler("notifications/custom", seen.append)

    arun(main())


def test_callback_registration_checks_its_arguments(fake, arun):
    from mcpfast.client import Client

    client = Client()
    with pytest.raises(TypeError):
        client.on_log("not callable")
    with pytest.raises(TypeError):
        client.on_list_changed(None)
    with pytest.raises(TypeError):
        client.on_notification("", print)
    with pytest.raises(TypeError):
        client.on_notification(5, print)


def test_unknown_notifications_are_ignored(fake, arun):
    server = fake()

    async def main():
        client = await server.connect()
        server.session.notify("notifications/who_knows", {"x": 1})
        await server.settle()
        await client.ping()

    arun(main())
