"""serve_stdio in a real child process, driven through raw pipes (and files).

The child (children/stdio_child.py) serves an echo conn on its stdin/stdout; these tests
write bytes to its stdin exactly as they choose and read its stdout and stderr whole.
"""

import asyncio
import json
import os
import random
import subprocess

import pytest


def loop_arg(loop_kind):
    return "uv" if loop_kind == "uvloop" else "aio"


async def exchange(python, script, args, env, chunks, *, pause=False):
    """Start the child, write chunks to its stdin one by one, close it; (rc, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        python, script, *args,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )

    async def writer():
        for chunk in chunks:
            proc.stdin.write(chunk)
            await proc.stdin.drain()
            if pause:
                # Give the child a chance to read each piece on its own.
                await asyncio.sleep(0)
        proc.stdin.close()

    _, out, err = await asyncio.gather(writer(), proc.stdout.read(), proc.stderr.read())
    rc = await proc.wait()
    return rc, out, err.decode()


def split_at(data, cuts):
    cuts = sorted(set(c for c in cuts if 0 < c < len(data)))
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(data[start:cut])
        start = cut
    pieces.append(data[start:])
    return pieces


FRAMES = [b'{"a":1}', b'{"b":"' + b"x" * 5000 + b'"}', b"[1,2,3]", b'"\xc3\xa9t\xc3\xa9"', b"{}"]


@pytest.mark.parametrize("how", ["whole", "bytewise", "random", "crlf"])
def test_frames_arrive_whole_in_any_chunking(run, loop_kind, python, child_script, child_env, how):
    stream = b"".join(f + b"\n" for f in FRAMES)
    if how == "whole":
        chunks = [stream]
    elif how == "bytewise":
        chunks = [stream[i:i + 1] for i in range(len(stream))]
    elif how == "random":
        rng = random.Random(7)
        chunks = split_at(stream, [rng.randrange(len(stream)) for _ in range(40)])
    else:
        chunks = [b"".join(f + b"\r\n" for f in FRAMES) + b"\n  \n"]
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env,
        chunks, pause=True,
    ))
    assert rc == 0, err
    assert out == b"".join(f + b"\n" for f in FRAMES)
    assert "conn.close(None)" in err and err.rstrip().endswith("serve returned")


def test_last_line_without_newline_is_delivered_at_eof(run, loop_kind, python, child_script, child_env):
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env,
        [b'{"x":1}\n{"y":2}'],
    ))
    assert rc == 0, err
    assert out == b'{"x":1}\n{"y":2}\n'


def test_oversize_frame_reaches_feed_error_and_connection_goes_on(
    run, loop_kind, python, child_script, child_env
):
    big = b'"' + b"z" * 300 + b'"'
    chunks = [b'{"before":1}\n', big[:100], big[100:] + b"\n", b'{"after":2}\n']
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind), "100"],
        child_env, chunks, pause=True,
    ))
    assert rc == 0, err
    lines = out.split(b"\n")
    assert lines[0] == b'{"before":1}'
    report = json.loads(lines[1])
    assert report["too_large"] == 100 and report["size"] > 100
    assert lines[2:] == [b'{"after":2}', b""]


def test_a_raising_feed_is_logged_and_the_next_frame_served(
    run, loop_kind, python, child_script, child_env
):
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env,
        [b'{"n":1}\nraise\n{"n":2}\n'],
    ))
    assert rc == 0, err
    assert out == b'{"n":1}\n{"n":2}\n'
    assert "conn.feed raised" in err and "a bug in the conn" in err


def test_prints_while_serving_go_to_stderr_not_the_protocol(
    run, loop_kind, python, child_script, child_env
):
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env,
        [b'{"n":1}\nprint\n{"n":2}\n'],
    ))
    assert rc == 0, err
    assert out == b'{"n":1}\n"printed"\n{"n":2}\n'
    for noise in ("noise from print()", "noise from sys.stdout.write", "noise from fd 1",
                  "noise from a shell child"):
        assert noise in err


def test_eof_with_nothing_sent(run, loop_kind, python, child_script, child_env):
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env, [],
    ))
    assert (rc, out) == (0, b"")
    assert err.splitlines() == ["conn.close(None)", "serve returned"]


def test_many_frames_in_one_write(run, loop_kind, python, child_script, child_env):
    frames = [b'{"i":%d,"pad":"%s"}' % (i, b"p" * (i % 50)) for i in range(20000)]
    stream = b"".join(f + b"\n" for f in frames)
    rc, out, err = run(exchange(
        python, child_script("stdio_child.py"), ["echo", loop_arg(loop_kind)], child_env,
        [stream[i:i + 65536] for i in range(0, len(stream), 65536)],
    ))
    assert rc == 0, err
    assert out == stream


@pytest.mark.parametrize("stdin_kind", ["file", "devnull"])
def test_stdin_and_stdout_as_regular_files(loop_kind, python, child_script, child_env,
                                           tmp_path, stdin_kind):
    """epoll cannot watch files or /dev/null: serve_stdio must still serve them."""
    frames = b'{"a":1}\n{"b":2}\n[3]'
    source = tmp_path / "in.jsonl"
    source.write_bytes(frames)
    target = tmp_path / "out.jsonl"
    stdin_path = source if stdin_kind == "file" else os.devnull
    with open(stdin_path, "rb") as stdin, open(target, "wb") as stdout:
        done = subprocess.run(
            [python, child_script("stdio_child.py"), "echo", loop_arg(loop_kind)],
            stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
            env={**os.environ, **child_env}, timeout=30,
        )
    assert done.returncode == 0, done.stderr.decode()
    expected = frames + b"\n" if stdin_kind == "file" else b""
    assert target.read_bytes() == expected
    assert done.stderr.decode().splitlines() == ["conn.close(None)", "serve returned"]


def test_stdin_and_stdout_one_socket(run, loop_kind, python, child_script, child_env):
    """inetd style: fd 0 and fd 1 are the same socket."""
    import socket

    async def go():
        ours, theirs = socket.socketpair()
        proc = await asyncio.create_subprocess_exec(
            python, child_script("stdio_child.py"), "echo", loop_arg(loop_kind),
            stdin=theirs, stdout=theirs, stderr=subprocess.PIPE,
            env={**os.environ, **child_env},
        )
        theirs.close()
        reader, writer = await asyncio.open_connection(sock=ours)
        writer.write(b'{"a":1}\n{"b":2}\n')
        await writer.drain()
        got = [await reader.readline(), await reader.readline()]
        writer.write_eof()
        rest = await reader.read()
        err = await proc.stderr.read()
        writer.close()
        return got, rest, await proc.wait(), err.decode()

    got, rest, rc, err = run(go())
    assert got == [b'{"a":1}\n', b'{"b":2}\n']
    assert rest == b""
    assert rc == 0, err
    assert "serve returned" in err


def test_stdout_restored_after_serving(loop_kind, python, child_env):
    """After serve_stdio returns, print() and fd 1 reach the real stdout again."""
    code = (
        "import sys, os\n"
        "from mcpfast.transports import run, serve_stdio\n"
        "class C:\n"
        "    def __init__(self, send): self.send = send\n"
        "    def feed(self, f): self.send(bytes(f)); return False\n"
        "    def feed_error(self, e): return True\n"
        "    def close(self, exc=None): print('during close')\n"
        f"run(serve_stdio(C), use_uvloop={loop_kind == 'uvloop'})\n"
        "print('after'); sys.stdout.flush(); os.write(1, b'fd after\\n')\n"
        "assert os.get_blocking(0) and os.get_blocking(1)\n"
    )
    done = subprocess.run(
        [python, "-c", code], input=b'{"x":1}\n', capture_output=True,
        env={**os.environ, **child_env}, timeout=30,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b'{"x":1}\nafter\nfd after\n'
    assert done.stderr == b"during close\n"


def test_a_failing_factory_is_raised_by_serve_stdio(loop_kind, python, child_env):
    code = (
        "from mcpfast.transports import run, serve_stdio\n"
        "def factory(send):\n"
        "    raise LookupError('no conn')\n"
        "try:\n"
        f"    run(serve_stdio(factory), use_uvloop={loop_kind == 'uvloop'})\n"
        "except LookupError as exc:\n"
        "    print('raised', exc)\n"
    )
    done = subprocess.run(
        [python, "-c", code], input=b'{"x":1}\n', capture_output=True,
        env={**os.environ, **child_env}, timeout=30,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"raised no conn\n"


def test_cancelling_serve_stdio_closes_the_conn_and_restores_stdout(loop_kind, python, child_env):
    code = (
        "import asyncio, os\n"
        "from mcpfast.transports import run, serve_stdio\n"
        "class C:\n"
        "    def __init__(self, send): self.send = send\n"
        "    def feed(self, f): self.send(bytes(f)); return False\n"
        "    def feed_error(self, e): return True\n"
        "    def close(self, exc=None): print('closed', exc)\n"
        "async def main():\n"
        "    task = asyncio.ensure_future(serve_stdio(C))\n"
        "    await asyncio.sleep(0.2)\n"
        "    task.cancel()\n"
        "    try:\n"
        "        await task\n"
        "    except asyncio.CancelledError:\n"
        "        print('cancelled')\n"
        f"run(main(), use_uvloop={loop_kind == 'uvloop'})\n"
        "os.write(1, b'fd after\\n')\n"
    )
    with subprocess.Popen(
        [python, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, **child_env},
    ) as proc:
        # stdin stays open: only the cancellation ends serve_stdio.
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0, err.decode()
    assert err == b"closed None\n"
    assert out == b"cancelled\nfd after\n"
