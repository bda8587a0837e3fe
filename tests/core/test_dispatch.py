"""mcpfast._core.dispatch: the context filler and the fields Python reads and writes. The
request path itself (SessionCore.feed_request) is tested through Session, in tests/jsonrpc."""

import pytest

from mcpfast._core.codec import decode
from mcpfast._core.dispatch import ContextCore, RouteCore, SessionCore, fill_context, new_context


class Ctx(ContextCore):
    __slots__ = ("extra",)


def test_new_context_fills_the_fields_without_the_constructor():
    params = {"_meta": {"progressToken": 1}, "x": 1}
    ctx = new_context(Ctx, "session", 7, "m", params, "channel")
    assert type(ctx) is Ctx
    assert (ctx.session, ctx.request_id, ctx.method, ctx.params) == ("session", 7, "m", params)
    assert ctx.meta is params["_meta"]
    assert ctx.cancelled is False and ctx.cancel_reason is None
    # The progress reporter is the caller's to make; no shaper yet.
    assert ctx.progress is None and ctx.shape_result is None
    assert ctx._channel == "channel"
    assert not hasattr(ctx, "extra")


@pytest.mark.parametrize("params", [None, [1, 2], {}, {"_meta": None}, {"_meta": [1]}, {"_meta": "x"}])
def test_meta_is_a_new_empty_dict_unless_params_carry_an_object(params):
    first = new_context(Ctx, None, 1, "m", params)
    second = new_context(Ctx, None, 2, "m", params)
    assert first.meta == {} and second.meta == {}
    # Each context its own: a handler adding to it changes no other request's.
    assert first.meta is not second.meta


def test_fill_context_refills_an_existing_context():
    ctx = new_context(Ctx, None, 1, "a", None)
    ctx.cancelled, ctx.cancel_reason, ctx.shape_result = True, "why", len
    assert fill_context(ctx, "s", 2, "b", {"_meta": {}}) is ctx
    assert (ctx.request_id, ctx.method, ctx.cancelled, ctx.cancel_reason, ctx.shape_result) == (
        2, "b", False, None, None)


def test_new_context_refuses_a_class_that_is_not_a_context():
    with pytest.raises(TypeError, match="ContextCore"):
        new_context(dict, None, 1, "m", None)
    with pytest.raises(TypeError):
        fill_context(object(), None, 1, "m", None)


def test_fields_are_plain_attributes_for_python():
    route = RouteCore()
    assert route.handler is None and route.is_async is None
    route.handler, route.is_async = print, False
    assert (route.handler, route.is_async) == (print, False)
    core = SessionCore()
    core.before_dispatch = len
    assert core.before_dispatch is len
    # A bare core refuses requests with a Python error, never a crash.
    with pytest.raises(AttributeError):
        core.feed_request(decode(b'{"jsonrpc":"2.0","id":1,"method":"m"}'))


def test_a_compiled_reply_channel_is_answered_in_c_and_the_base_says_what_is_missing():
    from mcpfast._core.dispatch import ReplyChannelCore
    from mcpfast.transports.http.post_reply import PostReply

    with pytest.raises(NotImplementedError, match="respond_frame"):
        ReplyChannelCore().respond(b"{}")
    reply = PostReply(True, None, None)
    assert isinstance(reply, ReplyChannelCore)
    reply.respond(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert reply.outcome == ("json", b'{"jsonrpc":"2.0","id":1,"result":{}}')


def test_a_session_is_idle_with_any_book_of_outgoing_requests():
    """SessionCore.idle reads the book's table through its slot when the book's class has
    one, else as an attribute (a book of another class still works)."""
    from mcpfast.jsonrpc.session import Session

    session = Session(lambda frame: None)
    assert session.is_idle()

    class Table:
        def __len__(self):
            return 1

    class Book:
        _table = Table()

    real = session._outgoing
    session._outgoing = Book()
    try:
        assert not session.is_idle()
    finally:
        session._outgoing = real
    assert session.is_idle()
