"""Property: the session answers every request exactly once -- or not at all when the
peer cancelled it while it ran or the session closed under it -- whatever the
interleaving of frames, cancellations, completions and close (issue 11).

Driven on a FakeRuntime: no event loop, no clock, every interleaving reproducible."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fake_runtime import FakeRuntime
from jsonrpc_frames import cancelled, notification, request
from mcpfast.jsonrpc import ConnectionClosed, JSONRPCError, Router, Session

METHODS = ["sync", "async", "fail", "async_fail", "unknown", "init"]
IDS = [0, 1, 2, "a", "b"]

ops = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.sampled_from(IDS), st.sampled_from(METHODS)),
        st.tuples(st.just("cancel"), st.sampled_from(IDS)),
        st.tuples(st.just("release"), st.sampled_from(IDS)),
        st.tuples(st.just("run")),
        st.tuples(st.just("garbage")),
        st.tuples(st.just("note")),
        st.tuples(st.just("close")),
    ),
    max_size=40,
)


class Channel:
    """A reply channel recording every respond() call."""

    def __init__(self):
        self.responses = []

    def respond(self, frame):
        self.responses.append(None if frame is None else json.loads(frame))

    def send(self, frame):
        assert not self.responses, "channel.send after respond"


def build(wire_frames, max_in_flight, batches_allowed=False):
    runtime = FakeRuntime()
    router = Router()
    gates = {}

    router.add_request_handler("sync", lambda p, ctx: {"sync": ctx.request_id})
    router.add_request_handler("init", lambda p, ctx: gate(ctx))

    def fail(params, ctx):
        raise JSONRPCError(-32000, "refused")

    async def gate(ctx):
        future = gates[ctx.request_id] = runtime.create_future()
        return await future

    async def async_handler(params, ctx):
        return await gate(ctx)

    async def async_fail(params, ctx):
        await gate(ctx)
        raise JSONRPCError(-32001, "failed late")

    router.add_request_handler("fail", fail)
    router.add_request_handler("async", async_handler)
    router.add_request_handler("async_fail", async_fail)
    router.add_notification_handler("note", lambda p, ctx: None)
    session = Session(wire_frames.append, router=router, runtime=runtime,
                      max_in_flight=max_in_flight, uncancellable={"init"},
                      batches_allowed=batches_allowed)
    return session, runtime, gates


class Instance:
    """One request frame fed, and what happened to it while it was waiting."""

    def __init__(self, rid, method, channel):
        self.id = rid
        self.method = method
        self.channel = channel
        self.cancelled_while_live = False
        self.closed_while_live = False

    @property
    def live(self):
        return not self.channel.responses


def release(gates, rid):
    future = gates.pop(rid, None)
    if future is not None and not future.done():
        future.set_result({"released": rid})


def finish_all(runtime, gates):
    """Run every task until no handler waits on a gate any more."""
    runtime.run_ready()
    while gates:
        for rid in list(gates):
            release(gates, rid)
        runtime.run_ready()


@settings(max_examples=300, deadline=None)
@given(ops, st.sampled_from([None, 2]))
def test_every_request_is_answered_exactly_once_per_channel(script, max_in_flight):
    wire = []
    session, runtime, gates = build(wire, max_in_flight)
    fed = []
    closed = False
    for op in script:
        kind = op[0]
        if kind == "run":
            runtime.run_ready()
        elif kind == "release":
            release(gates, op[1])
        elif kind == "close":
            for inst in fed:
                if inst.live:
                    inst.closed_while_live = True
            session.close()
            closed = True
        elif closed:
            # Nothing can be fed into a closed session.
            try:
                session.feed(notification("note"))
            except ConnectionClosed:
                pass
            else:
                raise AssertionError("feed after close did not raise")
        elif kind == "request":
            channel = Channel()
            inst = Instance(op[1], op[2], channel)
            assert session.feed(request(op[1], op[2]), channel) is True
            fed.append(inst)
        elif kind == "cancel":
            for inst in fed:
                if inst.id == op[1] and inst.live:
                    inst.cancelled_while_live = True
            assert session.feed(cancelled(op[1], "changed my mind"), Channel()) is False
        elif kind == "garbage":
            channel = Channel()
            assert session.feed(b"{not json", channel) is True
            assert len(channel.responses) == 1 and channel.responses[0]["id"] is None
        elif kind == "note":
            assert session.feed(notification("note"), Channel()) is False
    # Let everything still waiting finish, then end the session.
    finish_all(runtime, gates)
    session.close()
    runtime.run_ready()

    assert wire == []  # with channels, nothing goes to send
    assert session.in_flight == 0
    for inst in fed:
        assert len(inst.channel.responses) == 1, (inst.id, inst.method, inst.channel.responses)
        (reply,) = inst.channel.responses
        suppressed = inst.closed_while_live or (
            inst.cancelled_while_live and inst.method != "init"
        )
        if reply is None:
            assert suppressed, (inst.id, inst.method)
        else:
            assert reply["id"] == inst.id
            # A request the peer cancelled while it ran is never answered.
            assert not (inst.cancelled_while_live and inst.method != "init"), (inst.id,)
            if inst.closed_while_live:
                raise AssertionError(f"request {inst.id!r} answered after close")


@settings(max_examples=200, deadline=None)
@given(ops)
def test_every_request_is_answered_at_most_once_on_the_wire(script):
    # No channels: replies go to send. Ids are made unique so each can be counted.
    wire = []
    session, runtime, gates = build(wire, None)
    live_ids = {}
    expected_silent = set()
    fed = []
    closed = False
    counter = 0
    for op in script:
        kind = op[0]
        if kind == "run":
            runtime.run_ready()
        elif kind == "release":
            if fed:
                release(gates, fed[IDS.index(op[1]) % len(fed)][0])
        elif kind == "close":
            answered = {json.loads(f).get("id") for f in wire}
            expected_silent |= {rid for rid, _ in fed if rid not in answered}
            session.close()
            closed = True
            break
        elif kind == "request":
            counter += 1
            rid = f"r{counter}"
            session.feed(request(rid, op[2]))
            fed.append((rid, op[2]))
            live_ids[rid] = op[2]
        elif kind == "cancel" and fed:
            rid, method = fed[IDS.index(op[1]) % len(fed)]
            answered = {json.loads(f).get("id") for f in wire}
            if rid not in answered and method != "init":
                expected_silent.add(rid)
            session.feed(cancelled(rid))
    finish_all(runtime, gates)
    if not closed:
        session.close()
    replies = [json.loads(f) for f in wire]
    ids = [m.get("id") for m in replies if "method" not in m]
    assert len(ids) == len(set(ids)), "a request was answered twice"
    for rid, _method in fed:
        if rid in expected_silent:
            assert rid not in ids, f"{rid} answered although cancelled or closed"
        else:
            assert rid in ids, f"{rid} never answered"


batch_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("batch"),
            st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(METHODS)),
                     min_size=1, max_size=4, unique_by=lambda element: element[0]),
        ),
        st.tuples(st.just("cancel"), st.sampled_from(IDS)),
        st.tuples(st.just("release"), st.sampled_from(IDS)),
        st.tuples(st.just("run")),
        st.tuples(st.just("close")),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(batch_ops, st.sampled_from([None, 3]))
def test_every_batch_gets_one_reply_holding_each_request_once(script, max_in_flight):
    wire = []
    session, runtime, gates = build(wire, max_in_flight, batches_allowed=True)
    batches = []  # (elements, channel, cancelled ids while live, closed while live)
    closed = False
    for op in script:
        kind = op[0]
        if kind == "run":
            runtime.run_ready()
        elif kind == "release":
            release(gates, op[1])
        elif kind == "close":
            for entry in batches:
                if not entry[1].responses:
                    entry[3].append(True)
            session.close()
            closed = True
            break
        elif kind == "batch":
            channel = Channel()
            body = b"[" + b",".join(request(rid, method) for rid, method in op[1]) + b"]"
            assert session.feed(body, channel) is True
            batches.append((op[1], channel, set(), []))
        elif kind == "cancel":
            for _, channel, cancelled_ids, _ in batches:
                if not channel.responses:
                    cancelled_ids.add(op[1])
            session.feed(cancelled(op[1]))
    finish_all(runtime, gates)
    if not closed:
        session.close()
    runtime.run_ready()

    assert wire == [] and session.in_flight == 0
    for elements, channel, cancelled_ids, closed_while_live in batches:
        assert len(channel.responses) == 1, (elements, channel.responses)
        (reply,) = channel.responses
        if closed_while_live:
            assert reply is None
            continue
        ids = [] if reply is None else [m["id"] for m in reply]
        for rid, method in elements:
            if rid in cancelled_ids and method != "init":
                # Cancelled while its batch was open: answered or not, never twice.
                assert ids.count(rid) <= 1, (rid, reply)
            else:
                assert ids.count(rid) == 1, (rid, method, reply)
        assert sorted(map(str, ids)) == sorted(map(str, set(ids)))
