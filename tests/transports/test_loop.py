"""run(): asyncio.run on uvloop when installed."""

import asyncio

import pytest

from mcpfast.transports import loop_factory, new_event_loop, run, uvloop_available


async def loop_module():
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_is_installed_here():
    # A dependency on Linux: the transports are measured on it.
    assert uvloop_available()


def test_run_uses_uvloop_by_default():
    assert run(loop_module()).startswith("uvloop")


def test_run_can_use_the_standard_loop():
    assert run(loop_module(), use_uvloop=False).startswith("asyncio")


def test_run_returns_the_result_and_propagates_errors():
    async def answer():
        await asyncio.sleep(0)
        return 42

    async def fail():
        raise LookupError("inside")

    assert run(answer()) == 42
    with pytest.raises(LookupError, match="inside"):
        run(fail())


def test_run_refuses_non_coroutines():
    with pytest.raises(TypeError):
        run(lambda: None)


def test_run_debug_flag():
    async def debug():
        return asyncio.get_running_loop().get_debug()

    assert run(debug(), debug=True) is True
    assert run(debug(), use_uvloop=False, debug=True) is True


def test_loop_factories():
    loop = new_event_loop()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()
    assert loop_factory(use_uvloop=False) is asyncio.new_event_loop
