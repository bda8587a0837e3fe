"""open_stdio against the child script: wiring, env/cwd, stderr, exit, close escalation."""

import asyncio
import json
import logging
import os
import signal
import subprocess

import pytest

from mcpfast.jsonrpc import ConnectionClosed, Session
from mcpfast.transports import StreamConnection, TransportClosed, default_environment, open_stdio
from mcpfast.transports.stdio import INHERITED_ENV_VARS, _StderrLines


def loop_arg(loop_kind):
    return "uv" if loop_kind == "uvloop" else "aio"


async def wait_for_replies(conn, n):
    await conn.wait_frames(n)
    return conn.frames[:n]


def test_echo_roundtrip_and_clean_close(run, loop_kind, python, child_script, child_env, recorder):
    lines = []

    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "echo", loop_arg(loop_kind)], recorder,
            env=child_env, stderr=lines.append,
        )
        assert isinstance(handle, StreamConnection)
        conn = handle.conn
        conn.echo = False  # record what the child sends, do not bounce it back
        assert conn is recorder.conns[0]
        for i in range(100):
            conn.send(b'{"i":%d}' % i)
        replies = await wait_for_replies(conn, 100)
        assert not handle.closed.done()
        await handle.close()
        return handle, replies

    handle, replies = run(go())
    assert replies == [b'{"i":%d}' % i for i in range(100)]
    assert handle.process.returncode == 0
    assert handle.closed.result() is None
    # Our own close: conn.close() without an error.
    assert recorder.conns[0].closes == [None]
    assert lines == ["conn.close(None)", "serve returned"]


def test_env_and_cwd_reach_the_child(run, loop_kind, python, child_script, child_env, recorder,
                                     tmp_path, monkeypatch):
    monkeypatch.setenv("MCPFAST_TEST_SECRET", "not for children")

    async def go():
        async with await open_stdio(
            python, [child_script("stdio_child.py"), "echo", loop_arg(loop_kind)], recorder,
            env={**child_env, "MCPFAST_EXTRA": "given"}, cwd=tmp_path,
        ) as handle:
            handle.conn.echo = False
            handle.conn.send(b"env")
            (reply,) = await wait_for_replies(handle.conn, 1)
        return json.loads(reply)

    reply = run(go())
    env = reply["env"]
    assert env["MCPFAST_EXTRA"] == "given"
    assert "MCPFAST_TEST_SECRET" not in env
    assert env["PATH"] == os.environ["PATH"]
    assert os.path.realpath(reply["cwd"]) == os.path.realpath(tmp_path)


def test_default_environment_keeps_only_safe_names(monkeypatch):
    monkeypatch.setenv("PATH", "/bin:/usr/bin")
    monkeypatch.setenv("HOME", "() { :; }; echo pwned")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    env = default_environment()
    assert env["PATH"] == "/bin:/usr/bin"
    assert "HOME" not in env  # an exported shell function
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert set(env) <= set(INHERITED_ENV_VARS)


def test_process_exit_closes_the_conn_with_a_connection_error(
    run, loop_kind, python, child_script, child_env, recorder
):
    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "echo", loop_arg(loop_kind)], recorder,
            env=child_env,
        )
        handle.conn.send(b"exit 3")
        await handle.closed
        await handle.close()  # reaps and is a no-op for the conn
        return handle

    handle = run(go())
    (exc,) = recorder.conns[0].closes
    assert isinstance(exc, ConnectionError)
    assert "exited with code 3" in str(exc)
    assert handle.closed.result() is exc
    assert handle.process.returncode == 3


def test_output_before_exit_is_delivered_then_the_conn_closes(
    run, loop_kind, python, child_script, child_env, recorder
):
    """A last line without newline still reaches feed before close."""

    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "partial", loop_arg(loop_kind)], recorder,
            env=child_env,
        )
        await handle.closed
        await handle.close()
        return handle

    run(go())
    conn = recorder.conns[0]
    assert conn.frames == [b'{"first":1}', b'{"last":1}']
    (exc,) = conn.closes
    assert "exited with code 0" in str(exc)


def test_waiting_requests_fail_at_once_when_the_process_dies(
    run, loop_kind, python, child_script, child_env
):
    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "deaf", loop_arg(loop_kind)],
            lambda send: Session(send), env=child_env, stderr=subprocess.DEVNULL,
        )
        session = handle.conn
        waiting = [asyncio.ensure_future(session.request("echo", [i])) for i in range(5)]
        await asyncio.sleep(0)
        handle.process.kill()
        results = await asyncio.gather(*waiting, return_exceptions=True)
        await handle.close()
        return results

    results = run(go())
    for result in results:
        assert isinstance(result, ConnectionClosed)
        assert isinstance(result.__cause__, ConnectionError)
        assert "SIGKILL" in str(result.__cause__)


@pytest.mark.parametrize("mode, signal_seen", [("deaf", signal.SIGTERM), ("stubborn", signal.SIGKILL)])
def test_close_escalates_to_terminate_then_kill(
    run, loop_kind, python, child_script, child_env, recorder, mode, signal_seen
):
    async def go():
        started = asyncio.Event()
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), mode, loop_arg(loop_kind)], recorder,
            env=child_env, stderr=lambda line: started.set(), close_grace=0.2,
            terminate_grace=0.2,
        )
        await started.wait()  # the SIGTERM handler is installed
        # Unread writes pile up in the pipe; close() must not wait for them forever.
        handle.conn.send(b'"' + b"w" * 200_000 + b'"')
        await handle.close()
        return handle

    handle = run(go())
    assert handle.process.returncode == -signal_seen
    assert recorder.conns[0].closes == [None]
    assert handle.closed.done()


def test_close_is_idempotent_and_survives_cancellation(
    run, loop_kind, python, child_script, child_env, recorder
):
    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "deaf", loop_arg(loop_kind)], recorder,
            env=child_env, stderr=subprocess.DEVNULL, close_grace=0.2, terminate_grace=0.2,
        )
        closing = asyncio.ensure_future(handle.close())
        await asyncio.sleep(0)
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        await handle.close()  # the shutdown went on; this waits for its end
        await handle.close()
        return handle

    handle = run(go())
    assert handle.process.returncode == -signal.SIGTERM
    assert recorder.conns[0].closes == [None]


def test_send_after_close_raises(run, loop_kind, python, child_script, child_env, recorder):
    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "echo", loop_arg(loop_kind)], recorder,
            env=child_env, stderr=subprocess.DEVNULL,
        )
        await handle.close()
        with pytest.raises(TransportClosed):
            handle.conn.send(b"{}")

    run(go())


def test_stderr_to_a_logger(run, loop_kind, python, child_script, child_env, recorder, caplog):
    logger = logging.getLogger("test.child.stderr")

    async def go():
        handle = await open_stdio(
            python, [child_script("stdio_child.py"), "echo", loop_arg(loop_kind)], recorder,
            env=child_env, stderr=logger,
        )
        handle.conn.echo = False
        handle.conn.send(b"print")
        await wait_for_replies(handle.conn, 1)
        await handle.close()

    with caplog.at_level(logging.INFO, logger="test.child.stderr"):
        run(go())
    messages = [r.getMessage() for r in caplog.records if r.name == "test.child.stderr"]
    assert "noise from print()" in messages
    assert "serve returned" in messages
    assert recorder.conns[0].frames == [b'"printed"']


def test_stderr_lines_splitting():
    got = []
    lines = _StderrLines(got.append)
    lines.feed(b"one\r\ntw")
    lines.feed(b"o\n\nthr")
    lines.feed(b"\xffee")
    assert got == ["one", "two", ""]
    lines.close()
    assert got[-1] == "thr\ufffdee"
    lines.feed(b"x" * (70 * 1024))
    assert got[-1] == "x" * (64 * 1024)
    lines.close()
    assert got[-1] == "x" * (6 * 1024)


def test_stderr_callback_failure_is_logged(caplog):
    def broken(line):
        raise RuntimeError("callback bug")

    lines = _StderrLines(broken)
    with caplog.at_level(logging.ERROR, logger="mcpfast.transports"):
        lines.feed(b"a\nb\n")
    assert sum("stderr callback raised" in r.getMessage() for r in caplog.records) == 2


def test_stderr_refuses_stdout_and_junk(run, python, recorder):
    async def go(stderr):
        await open_stdio(python, ["-c", "pass"], recorder, stderr=stderr)

    with pytest.raises(ValueError):
        run(go(subprocess.STDOUT))
    with pytest.raises(TypeError):
        run(go(3.5))


def test_factory_failure_is_raised_and_the_process_killed(run, loop_kind, python, recorder):
    protocols = []

    def factory(send):
        protocols.append(send.__self__)  # the transport's protocol: it knows the process
        raise LookupError("no conn for you")

    async def go():
        with pytest.raises(LookupError, match="no conn for you"):
            await open_stdio(python, ["-c", "import time; time.sleep(60)"], factory)
        return protocols[0].exited.result(), protocols[0]._process.get_pid()

    returncode, pid = run(go())
    # Killed (it would sleep for a minute otherwise) and reaped.
    assert returncode == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_bad_arguments(run, python, recorder):
    async def go():
        with pytest.raises(TypeError):
            await open_stdio(python, "-c pass", recorder)
        with pytest.raises(TypeError):
            await open_stdio(python, ["-c", "pass"], None)
        with pytest.raises(FileNotFoundError):
            await open_stdio("/nonexistent/mcp-server", [], recorder)

    run(go())


def test_a_session_over_stdio_with_many_requests_in_flight(
    run, loop_kind, python, child_script, child_env
):
    async def go():
        async with await open_stdio(
            python, [child_script("stdio_child.py"), "session", loop_arg(loop_kind)],
            lambda send: Session(send), env=child_env,
        ) as handle:
            session = handle.conn
            first = await session.request("echo", {"hello": "world"})
            results = await asyncio.gather(
                *(session.request("echo" if i % 2 else "aecho", {"i": i}) for i in range(3000))
            )
            return first, results

    first, results = run(go(), timeout=90)
    assert first == {"hello": "world"}
    assert results == [{"i": i} for i in range(3000)]


def test_the_child_sees_eof_when_we_close(run, loop_kind, python, child_env, recorder, tmp_path):
    marker = tmp_path / "eof-seen"
    code = (
        "import sys, pathlib\n"
        "sys.stdin.buffer.read()\n"
        f"pathlib.Path({str(marker)!r}).write_text('yes')\n"
    )

    async def go():
        handle = await open_stdio(python, ["-c", code], recorder)
        await handle.close()
        return handle

    handle = run(go())
    assert marker.read_text() == "yes"
    assert handle.process.returncode == 0
