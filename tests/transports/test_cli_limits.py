"""``mcpfast run`` flags for the stdio/TCP limits, against a real server process."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpfast import cli

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = "from mcpfast.server import Server\napp = Server('limits')\n"
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _connect(port, deadline):
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=20)
        except OSError:
            assert time.monotonic() < deadline, "the TCP server did not start"
            time.sleep(0.05)


def _line(sock):
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_run_tcp_enforces_the_limit_flags(tmp_path):
    server_file = tmp_path / "limits_server.py"
    server_file.write_text(SERVER_FILE)
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", str(server_file), "--transport", "tcp",
         "--port", str(port), "--max-connections", "1", "--idle-timeout", "2",
         "--max-frame-size", "2000"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        first = _connect(port, time.monotonic() + 30)
        first.sendall(PING)
        assert json.loads(_line(first)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        # --max-frame-size: a longer line is answered -32012, the connection goes on.
        first.sendall(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"'
                      + b"x" * 3000 + b'"}}\n')
        assert json.loads(_line(first))["error"]["code"] == -32012
        first.sendall(PING)
        assert json.loads(_line(first))["id"] == 1
        # --max-connections 1: a second connection is closed at once.
        second = socket.create_connection(("127.0.0.1", port), timeout=20)
        assert second.recv(100) == b""
        second.close()
        # --idle-timeout: the first connection, silent now, is closed by the server.
        assert first.recv(100) == b""
        first.close()
    finally:
        process.terminate()
        process.wait(10)
        stderr = process.stderr.read().decode()
        process.stderr.close()
    assert "refused 1 connection(s)" in stderr


@pytest.mark.parametrize("argv, message", [
    (["--max-connections", "3"], "--max-connections applies to the tcp and http transport(s)"),
    (["--keepalive-timeout", "3"], "--keepalive-timeout applies to the http transport"),
    (["--transport", "http", "--max-sessions", "0"], "--max-sessions must be positive"),
    (["--transport", "http", "--session-idle-timeout", "-1"], "--session-idle-timeout must be positive"),
    (["--transport", "http", "--max-stream-buffer", "0"], "--max-stream-buffer must be positive"),
    (["--max-buffered", "3"], "--max-buffered applies to the tcp transport"),
    (["--transport", "tcp", "--max-frame-size", "0"], "--max-frame-size must be positive"),
    (["--transport", "tcp", "--idle-timeout", "-1"], "--idle-timeout must be positive"),
    (["--transport", "tcp", "--write-timeout", "-1"], "--write-timeout must be positive"),
])
def test_run_rejects_bad_limit_flags(tmp_path, capsys, argv, message):
    server_file = tmp_path / "limits_server.py"
    server_file.write_text(SERVER_FILE)
    assert cli.main(["run", str(server_file), *argv]) == 2
    assert message in capsys.readouterr().err


def test_limit_flags_become_serve_keywords():
    parser = cli._parser()
    args = parser.parse_args(["run", "x.py", "--transport", "tcp", "--max-frame-size", "10",
                              "--max-connections", "5", "--idle-timeout", "0",
                              "--max-buffered", "99", "--write-timeout", "0"])
    assert cli.stream_limit_options(args) == {
        "max_frame_size": 10, "max_connections": 5, "idle_timeout": None, "max_buffered": 99,
        "write_timeout": None,
    }
    args = parser.parse_args(["run", "x.py", "--write-timeout", "7"])
    assert cli.stream_limit_options(args) == {"write_timeout": 7.0}
    args = parser.parse_args(["run", "x.py", "--idle-timeout", "2.5"])
    assert cli.stream_limit_options(args) == {"idle_timeout": 2.5}
    assert cli.stream_limit_options(parser.parse_args(["run", "x.py"])) == {}


def _rss(pid):
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads RSS from /proc")
def test_stalled_incomplete_lines_are_bounded_and_their_memory_goes_with_them(tmp_path):
    """Issue 34.4: twelve peers each send 12 MB of one unterminated line and stall. The
    budget keeps what the server holds near --max-buffered (a dropped connection's buffer
    used to stay until the garbage collector found it: 20 x 15 MB took a server to 356 MB
    against 64 MiB), and once they all left the memory is back."""
    import threading

    server_file = tmp_path / "limits_server.py"
    server_file.write_text(SERVER_FILE)
    port = _free_port()
    budget = 32 * 1024 * 1024
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", str(server_file), "--transport", "tcp",
         "--port", str(port), "--max-buffered", str(budget)],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.DEVNULL)
    peers = []
    try:
        _connect(port, time.monotonic() + 60).close()
        baseline = _rss(server.pid)
        chunk = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * 65536

        def stall_on_a_long_line():
            sock = socket.create_connection(("127.0.0.1", port))
            peers.append(sock)
            try:
                for _ in range(12 * 16):
                    sock.sendall(chunk)
            except OSError:
                pass  # dropped by the budget

        senders = [threading.Thread(target=stall_on_a_long_line) for _ in range(12)]
        for sender in senders:
            sender.start()
        peak = 0
        while any(sender.is_alive() for sender in senders):
            peak = max(peak, _rss(server.pid) - baseline)
            time.sleep(0.02)
        peak = max(peak, _rss(server.pid) - baseline)
        # The budget's lines, each in a block at most twice its size, and the reads.
        assert peak < 2 * budget + 24 * 1024 * 1024, peak
        for sock in peers:
            sock.close()
        deadline = time.monotonic() + 30
        while _rss(server.pid) - baseline > 16 * 1024 * 1024 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _rss(server.pid) - baseline <= 16 * 1024 * 1024
    finally:
        for sock in peers:
            sock.close()
        server.terminate()
        server.wait(timeout=30)
