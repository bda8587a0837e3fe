"""Router: registration, async detection (once, at registration), reserved names."""

import functools

import pytest

from mcpfast.jsonrpc import Route, Router, is_async_handler


def sync_handler(params, ctx):
    return params


async def async_handler(params, ctx):
    return params


class Handlers:
    def sync_method(self, params, ctx):
        return 1

    async def async_method(self, params, ctx):
        return 2


class AsyncCallable:
    async def __call__(self, params, ctx):
        return 3


class SyncCallable:
    def __call__(self, params, ctx):
        return 4


@pytest.mark.parametrize(
    "handler, expected",
    [
        (sync_handler, False),
        (async_handler, True),
        (Handlers().sync_method, False),
        (Handlers().async_method, True),
        (AsyncCallable(), True),
        (SyncCallable(), False),
        (functools.partial(async_handler), True),
        (functools.partial(functools.partial(async_handler)), True),
        (functools.partial(sync_handler), False),
        (lambda params, ctx: None, False),
        (print, False),
    ],
)
def test_is_async_handler(handler, expected):
    assert is_async_handler(handler) is expected
    assert Route("m", handler).is_async is expected


def test_explicit_is_async_overrides_detection():
    assert Route("m", sync_handler, is_async=True).is_async is True
    assert Route("m", async_handler, is_async=False).is_async is False


def test_add_and_route():
    router = Router()
    route = router.add_request_handler("tools/list", sync_handler)
    assert router.route_request("tools/list") is route
    assert router.requests == {"tools/list": route}
    assert router.route_request("tools/call") is None
    assert router.route_notification("tools/list") is None
    n = router.add_notification_handler("notifications/initialized", async_handler)
    assert router.route_notification("notifications/initialized") is n and n.is_async


def test_registering_again_replaces():
    router = Router()
    router.add_request_handler("a", sync_handler)
    second = router.add_request_handler("a", async_handler)
    assert router.route_request("a") is second


def test_decorators_return_the_function():
    router = Router()

    @router.request("ping")
    def ping(params, ctx):
        return {}

    @router.notification("notifications/initialized")
    async def initialized(params, ctx):
        return None

    assert ping(None, None) == {}
    assert router.route_request("ping").handler is ping
    assert router.route_notification("notifications/initialized").is_async


def test_remove():
    router = Router()
    router.add_request_handler("a", sync_handler)
    router.add_notification_handler("b", sync_handler)
    assert router.remove_request_handler("a").method == "a"
    assert router.remove_notification_handler("b").method == "b"
    with pytest.raises(KeyError):
        router.remove_request_handler("a")


@pytest.mark.parametrize("method", ["rpc.discover", "rpc."])
def test_rpc_prefix_is_reserved(method):
    with pytest.raises(ValueError, match="reserved"):
        Router().add_request_handler(method, sync_handler)


def test_bad_registrations():
    router = Router()
    with pytest.raises(TypeError):
        router.add_request_handler("a", "not callable")
    with pytest.raises(TypeError):
        router.add_request_handler(b"a", sync_handler)
    with pytest.raises(TypeError):
        router.add_notification_handler(None, sync_handler)
    assert router.requests == {} and router.notifications == {}
