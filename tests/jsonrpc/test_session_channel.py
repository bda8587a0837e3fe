"""Session: per-frame reply channels (what Streamable HTTP passes to feed)."""

import asyncio
import json

from jsonrpc_frames import frame
from loop import settle
from mcpfast.jsonrpc import JSONRPCError, Router, Session


def req(id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def make_session(wire, **kwargs):
    router = Router()
    router.add_request_handler("echo", lambda p, ctx: p)
    gate = {}

    @router.request("slow")
    async def slow(params, ctx):
        ctx.report_progress(1)
        ctx.notify("notifications/message", {"level": "info", "data": "working"})
        await gate["e"].wait()
        return "slow done"

    @router.request("ask")
    async def ask(params, ctx):
        answer = await ctx.request("elicitation/create", {"message": "?"})
        return answer

    router.add_notification_handler("note", lambda p, ctx: None)
    return Session(wire, router=router, **kwargs), gate


def test_sync_reply_goes_to_the_channel_only(wire, make_channel):
    session, _ = make_session(wire)
    channel = make_channel()
    assert session.feed(frame(req(1, "echo", [1])), channel) is True
    assert channel.response_messages() == [{"jsonrpc": "2.0", "id": 1, "result": [1]}]
    assert channel.related == []
    assert wire.frames == []


def test_notifications_and_responses_owe_no_reply(wire, make_channel):
    session, _ = make_session(wire)
    channel = make_channel()
    assert session.feed(frame({"jsonrpc": "2.0", "method": "note"}), channel) is False
    assert session.feed(frame({"jsonrpc": "2.0", "id": 77, "result": {}}), channel) is False
    assert channel.responses == [] and channel.related == []


def test_errors_go_to_the_channel(wire, make_channel):
    session, _ = make_session(wire)
    bad_json, unknown, too_large = make_channel(), make_channel(), make_channel()
    assert session.feed(b"{oops", bad_json) is True
    assert session.feed(frame(req(2, "nope")), unknown) is True
    assert session.feed_error(JSONRPCError(-32012, "Message too large"), too_large) is True
    assert bad_json.response_messages()[0]["error"]["code"] == -32700
    assert unknown.response_messages()[0]["error"]["code"] == -32601
    assert too_large.response_messages()[0]["error"]["code"] == -32012
    assert wire.frames == []


def test_async_request_related_messages_then_reply(wire, make_channel):
    session, gate = make_session(wire)
    channel = make_channel()

    async def main():
        gate["e"] = asyncio.Event()
        params = {"_meta": {"progressToken": "p"}}
        assert session.feed(frame(req(1, "slow", params)), channel) is True
        await settle()
        assert channel.responses == []
        gate["e"].set()
        await settle()

    asyncio.run(main())
    assert channel.related_messages() == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}},
    ]
    assert channel.response_messages() == [{"jsonrpc": "2.0", "id": 1, "result": "slow done"}]
    assert wire.frames == []


def test_cancelled_request_responds_none(wire, make_channel):
    session, gate = make_session(wire)
    channel = make_channel()

    async def main():
        gate["e"] = asyncio.Event()
        session.feed(frame(req(1, "slow")), channel)
        await settle()
        cancel = frame({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        assert session.feed(cancel, make_channel()) is False
        await settle()

    asyncio.run(main())
    assert channel.responses == [None]


def test_request_made_by_a_handler_goes_out_on_its_channel(wire, make_channel):
    session, _ = make_session(wire)
    channel = make_channel()

    async def main():
        session.feed(frame(req("r1", "ask")), channel)
        await settle()
        (elicit,) = channel.related_messages()
        assert elicit["method"] == "elicitation/create"
        # The client answers on another POST: a response owes no reply.
        answer = make_channel()
        reply = frame({"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "accept"}})
        assert session.feed(reply, answer) is False
        await settle()
        assert answer.responses == []

    asyncio.run(main())
    assert channel.response_messages() == [{"jsonrpc": "2.0", "id": "r1", "result": {"action": "accept"}}]
    assert wire.frames == []


def test_after_the_reply_the_channel_is_not_used(wire, make_channel):
    kept = []
    router = Router()
    router.add_request_handler("m", lambda p, ctx: kept.append(ctx) or "ok")
    session = Session(wire, router=router)
    channel = make_channel()
    session.feed(frame(req(1, "m")), channel)
    # A late notification about a finished request goes through send instead.
    kept[0].notify("notifications/message", {"level": "info", "data": "late"})
    assert channel.response_messages() == [{"jsonrpc": "2.0", "id": 1, "result": "ok"}]
    assert wire.messages() == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "late"}}
    ]


def test_batch_reply_is_one_respond(wire, make_channel):
    session, gate = make_session(wire, batches_allowed=True)
    channel = make_channel()
    only_notes = make_channel()

    async def main():
        gate["e"] = asyncio.Event()
        raw = json.dumps([req(1, "echo", [1]), req(2, "slow"), {"jsonrpc": "2.0", "method": "note"}]).encode()
        assert session.feed(raw, channel) is True
        await settle()
        assert channel.responses == []
        gate["e"].set()
        await settle()
        raw = json.dumps([{"jsonrpc": "2.0", "method": "note"}]).encode()
        assert session.feed(raw, only_notes) is False

    asyncio.run(main())
    (array,) = channel.response_messages()
    assert sorted(m["id"] for m in array) == [1, 2]
    assert only_notes.responses == []
    assert wire.frames == []


def test_batch_all_cancelled_responds_none(wire, make_channel):
    session, gate = make_session(wire, batches_allowed=True)
    channel = make_channel()

    async def main():
        gate["e"] = asyncio.Event()
        session.feed(json.dumps([req(1, "slow"), req(2, "slow")]).encode(), channel)
        await settle()
        for rid in (1, 2):
            session.feed(frame({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}))
        await settle()

    asyncio.run(main())
    assert channel.responses == [None]


def test_refused_batch_on_channel(wire, make_channel):
    session, _ = make_session(wire)
    channel = make_channel()
    assert session.feed(json.dumps([req(1, "echo")]).encode(), channel) is True
    (msg,) = channel.response_messages()
    assert msg["error"]["code"] == -32600 and msg["id"] is None


def test_close_responds_none_to_open_channels(wire, make_channel):
    session, gate = make_session(wire, batches_allowed=True)
    single, batched = make_channel(), make_channel()

    async def main():
        gate["e"] = asyncio.Event()
        session.feed(frame(req(1, "slow")), single)
        session.feed(json.dumps([req(2, "echo", [2]), req(3, "slow")]).encode(), batched)
        await settle()
        session.close()
        await settle()

    asyncio.run(main())
    assert single.responses == [None]
    # The batch's finished element is not sent either: the session is closed.
    assert batched.responses == [None]
    assert wire.frames == []
